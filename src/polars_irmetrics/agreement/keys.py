"""The keys of a rank-similarity call: a ``by`` (or ``systems``) key may not be
named like a column of the result, which the plan would write twice; the keys the
reference holds too (a reference per group of them). Read by the one plan, the buckets
and the Spark and Dask engines alike."""

from __future__ import annotations

from collections.abc import Iterable

from polars_irmetrics.ground.options import EvalOptions, refuse_result_keys
from polars_irmetrics.metrics.registry import MetricRequest

__all__ = ["check_result_keys", "reference_group_keys"]


def check_result_keys(requests: list[tuple[str, MetricRequest]], options: EvalOptions) -> None:
    """Refuse a ``by`` (or ``systems``) key named like a column of the result (``num_q``,
    a metric's label), as the ranking metrics refuse it: the plan would write the name
    twice. Called where the caller's options are read (one plan, buckets, the engines),
    so that the message lists the result the caller asked for.

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> check_result_keys(parse_metric_list(["rbo"]), EvalOptions(by=("rbo",)))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['rbo'] names 'rbo', which is also a ...
    """
    taken = ([] if options.per_query else ["num_q"]) + [label for label, _ in requests]
    also = " (and the reference's, where it has it)"
    refuse_result_keys("by", options.by_keys, taken, "run", most=None, also=also)


def reference_group_keys(options: EvalOptions, reference: Iterable[str]) -> list[str]:
    """The ``by``/``systems`` keys of ``options`` that the reference (its column names)
    holds too: a reference per group of them.

    >>> reference_group_keys(EvalOptions(systems="s", by=["g"]), ["query_id", "s"])
    ['s']
    """
    names = set(reference)
    return [key for key in options.by_keys if key in names]
