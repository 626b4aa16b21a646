"""Warnings of the comparison's statistics that point at the user's line.

A warning given deep in the statistics (:func:`~.paired.paired_stats`, reached from
:func:`~polars_irmetrics.compare`, ``df.irm.compare``, a LazyFrame's
``lf.irm.compare(...).collect()``, :func:`~polars_irmetrics.system_agreement`) is
as many frames below the user's call as the entry point has layers (and a LazyFrame's
comparison runs inside polars' ``collect``): a fixed ``stacklevel`` is right for one
entry point only. :func:`warn_at_caller` names the first frame outside this package
and polars instead, whichever entry point led there.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterable

import polars as pl

from polars_irmetrics.ground.calls import named_as
from polars_irmetrics.ground.options import option_names
from polars_irmetrics.metrics.registry import MetricRequest, parse_metric_list

__all__ = ["SET_BY_COMPARISON", "comparison_keywords", "parsed_as_called", "warn_at_caller"]

#: The evaluation options a comparison sets itself (the systems are its groups,
#: ``query_set=`` chooses the queries): refused when given, never a fix it names.
SET_BY_COMPARISON = ("by", "systems", "per_query", "unretrieved")


def comparison_keywords() -> frozenset[str]:
    """The keywords of :func:`~polars_irmetrics.evaluate` that
    :func:`~polars_irmetrics.compare` and :func:`~polars_irmetrics.tukey_hsd` take too:
    its options, less those a comparison sets itself, and the tables ``qrels``,
    ``groups`` and ``target``. A refusal's fix "pass groups=... to irm.evaluate" names
    the comparison instead (:func:`~polars_irmetrics.ground.calls.named_as`).

    >>> sorted({"groups", "judged_only", "per_query", "prefs"} & comparison_keywords())
    ['groups', 'judged_only']
    """
    return frozenset(option_names()) - set(SET_BY_COMPARISON) | {"qrels", "groups", "target"}


def parsed_as_called(
    metrics: str | Iterable[str],
    calls: str,
    usable: Callable[[list[tuple[str, MetricRequest]]], None] | None = None,
) -> list[tuple[str, MetricRequest]]:
    """``metrics`` parsed (:func:`~polars_irmetrics.metrics.registry.parse_metric_list`)
    for the comparison ``calls`` (``"irm.compare"``, ``"irm.tukey_hsd"``,
    ``"irm.reproducibility"``): a metric's refusal whose fix is "pass relevance_level=
    to irm.evaluate" names ``calls``, which takes it too (:func:`comparison_keywords`),
    not a function the user did not call. ``usable``: the comparison's refusal of a
    metric it cannot use at all, run before a missing cutoff is refused.

    >>> from polars_irmetrics.comparison.caller import parsed_as_called
    >>> parsed_as_called("serendipity(rel=1)@2", "irm.compare")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'serendipity(rel=1)@2': ... pass relevance_level= to irm.compare instead
    """  # noqa: E501
    with named_as(calls, comparison_keywords()):
        return parse_metric_list(metrics, usable=usable)


#: The folders of this package and of polars: a frame whose file is under one of them
#: is library code, not the user's.
_LIBRARIES = tuple(
    os.path.dirname(os.path.abspath(init)) + os.sep
    for init in (os.path.join(os.path.dirname(__file__), os.pardir, "__init__.py"), pl.__file__)
)


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """Warn ``message`` as ``category``, shown at the first line on the stack outside
    polars_irmetrics and polars (the user's call).

    Examples
    --------
    >>> import warnings
    >>> from polars_irmetrics.comparison.caller import warn_at_caller
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_at_caller("said here", UserWarning)
    >>> caught[0].filename.startswith("<doctest")
    True
    """
    frame = sys._getframe(1)
    level = 2  # 1 would name this function, 2 its caller
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        _LIBRARIES
    ):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
