"""The propensity-scored metrics (``ps_precision@k``, ``ps_ndcg@k``) out of core.

``buckets=N`` or ``"auto"`` (one bucket per
:data:`~polars_irmetrics.ground.buckets.ROWS_PER_BUCKET` run rows): when the result is
collected, one streaming pass writes the run and the judgments to Parquet in buckets by a
hash of ``query_id``, as the ranking metrics' out-of-core plan does
(:func:`~polars_irmetrics.ground.buckets.evaluate_in_buckets`); each bucket, with the
whole ``propensities=`` table (a document's or a position's propensity is read by queries
of every bucket), gives one row per judged query of the numerator and ideal sums of each
metric and the first failing row of its checks (:meth:`PsPlan.part
<polars_irmetrics.offline.propensity.PsPlan.part>`). The rows of every bucket are then
finished as the one plan finishes its own (:meth:`PsPlan.finish
<polars_irmetrics.offline.propensity.PsPlan.finish>`): the sums over the queries are
fixed-point, exact in any order, so the values are the one plan's to the last bit
whatever the number of buckets, ``per_query=True`` included; a data error names the
row the one plan names. Peak memory is one bucket's rows and the propensities table.
``buckets="auto-memory"`` (the default) and ``None`` evaluate in one plan.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.buckets import evaluate_in_buckets
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.offline.propensity import build_propensity_plan, prepare_propensity

__all__ = ["propensity_plan"]


def propensity_plan(
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    qrels: pl.LazyFrame | None,
    propensities: pl.LazyFrame,
    options: EvalOptions,
) -> pl.LazyFrame:
    """:func:`polars_irmetrics.evaluate`'s plan of the propensity-scored metrics: in one
    plan, or out of core when ``buckets=`` is a number or ``"auto"`` (module doc).

    Examples
    --------
    The same bits in three buckets as in one plan (the second query's ``y`` weighs
    1 / 0.25 = 4, the first's ``x`` 1 / 0.5 = 2; ``y`` is retrieved at rank 2 only):

    >>> import polars as pl
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "z", "z", "y"],
    ...                     "rank": [1, 2, 1, 2]})
    >>> qrels = pl.LazyFrame({"query_id": ["a", "b"], "doc_id": ["x", "y"],
    ...                       "relevance": [1, 1]})
    >>> props = pl.LazyFrame({"doc_id": ["x", "y", "z"], "propensity": [0.5, 0.25, 1.0]})
    >>> metrics = parse_metric_list(["ps_precision@1"])
    >>> def value(buckets):
    ...     options = EvalOptions(buckets=buckets)
    ...     plan = propensity_plan(run, metrics, qrels, props, options)
    ...     return plan.collect()["ps_precision@1"].item()
    >>> value(None), value(3), (2 + 0) / (2 + 4)
    (0.3333333333333333, 0.3333333333333333, 0.3333333333333333)
    """
    buckets = options.buckets
    if buckets is None or buckets == "auto-memory":
        if options.spill_dir is not None:
            raise InvalidValueError(
                f"spill_dir={str(options.spill_dir)!r} is the folder of the out-of-core "
                "buckets, and the propensity-scored metrics evaluate in one plan unless "
                "buckets= is a number or 'auto': pass buckets=, or drop spill_dir="
            )
        return build_propensity_plan(run, requests, qrels, propensities, options)
    count: int | Literal["auto"] = buckets
    plan = prepare_propensity(run, requests, qrels, propensities, options)
    parts = evaluate_in_buckets(
        run.select(plan.run_schema.names()),
        plan.qrels,
        None,
        query_id=options.query_id,
        buckets=count,
        spill_dir=options.spill_dir,
        evaluate_part=lambda part, judged, _: plan.part(
            part, plan.qrels.clear() if judged is None else judged
        ),
        schema=plan.part_schema,
        progress=options.progress,
    )
    return plan.finish(parts, run)
