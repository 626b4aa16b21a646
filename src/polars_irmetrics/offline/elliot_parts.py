"""Elliot's metrics over a run split into parts: the hook the Spark and Dask engines call
(:mod:`polars_irmetrics.engines._recsys`).

``pop_rsp@k``, ``pop_reo@k``, ``aclt@k``, ``epc@k`` and ``efd@k``
(:mod:`polars_irmetrics.offline.elliot`) are made of per-user counts and sums: every row
of a user, in the run and in the test interactions, goes to one part, and each part
reads the whole training history (the items' popularity, the short head, each user's
training pairs). A part gives one row per user with the counts and sums each formula
reads (:func:`elliot_part`); :func:`elliot_merge` turns every part's rows into the
metrics, by the same whole counts and exact sums as one machine: the same bits,
whatever the split. Beside them, a part runs the ranking plan's checks of its run and
judgments (a duplicate document, a null id: raised as one machine raises them) and
hands that plan's coverage to the engine, which warns once for the whole run.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL, with_common_key_frames
from polars_irmetrics.metrics.registry import MetricRequest, get_metric
from polars_irmetrics.offline.coverage import CoverageSink
from polars_irmetrics.offline.elliot import build_elliot_plan, elliot_means
from polars_irmetrics.offline.plan import build_plan

__all__ = ["elliot_merge", "elliot_part"]

Requests = list[tuple[str, MetricRequest]]

#: The helper metric whose plan checks a part's run and judgments (and gives its coverage).
_CHECKED = f"{INTERNAL}checked"
_NUM_REL = get_metric("num_rel")
#: Flags of a part's rows: a user of the run (Elliot's rows), a query the ranking plan
#: evaluated (counted in ``num_q``, as one machine counts it beside Elliot's metrics).
_USER, _JUDGED = f"{INTERNAL}elliot_user", f"{INTERNAL}judged"


def elliot_part(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    interactions: pl.LazyFrame,
    requests: Requests,
    options: EvalOptions,
    *,
    warn: bool | CoverageSink = False,
) -> pl.LazyFrame:
    """One part's rows: one per user of the part with the counts and sums of Elliot's
    formulas (the whole ``interactions`` read), and one per query the ranking plan
    evaluates (its ``num_q``), flagged, on the same keys. Collected, the ranking plan
    raises the part's run's and judgments' data errors and hands its coverage to
    ``warn``.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["u", "u", "w"], "doc_id": ["a", "b", "b"],
    ...                     "rank": [1, 2, 1]})
    >>> test = pl.LazyFrame({"query_id": ["u", "w"], "doc_id": ["b", "b"],
    ...                      "relevance": [1, 1]})
    >>> train = pl.LazyFrame({"query_id": ["u", "v", "v"], "doc_id": ["a", "a", "b"]})
    >>> wanted = parse_metric_list(["aclt(pop_ratio=0.5)@2"])
    >>> parts = [elliot_part(run.filter(pl.col("query_id") == user),
    ...                      test.filter(pl.col("query_id") == user), train, wanted,
    ...                      EvalOptions()) for user in "uw"]
    >>> elliot_merge(pl.concat(parts), wanted, EvalOptions()).collect().row(0)  # b: tail
    (2, 1.0)
    """
    helper = replace(requests[0][1], metric=_NUM_REL, k=None, options=(), aggregate=None)
    # a by= key of one kind in two dtypes lined up, as the door lines it up
    run, qrels, interactions = with_common_key_frames(options.by_keys, run, qrels, interactions)
    judged = build_plan(
        run, [(_CHECKED, helper)], qrels, options.replace(per_query=True), warn=warn
    )
    keys = [c for c in judged.collect_schema().names() if c != _CHECKED]
    flagged = judged.select(*keys, pl.lit(True).alias(_JUDGED))
    rows = build_elliot_plan(run, requests, qrels, interactions, options, per_user=True)
    users = rows.with_columns(pl.lit(True).alias(_USER))
    return users.join(flagged, on=keys, how="full", coalesce=True, nulls_equal=True)


def elliot_merge(parts: pl.LazyFrame, requests: Requests, options: EvalOptions) -> pl.LazyFrame:
    """One machine's result from every part's rows of :func:`elliot_part`: per ``by``
    group (of the run or of the judged queries), ``num_q`` (the queries the ranking plan
    evaluated) and Elliot's metrics over the users of the run."""
    names = parts.collect_schema().names()
    by = [k for k in options.by_keys if k in names]
    values = elliot_means(parts.filter(pl.col(_USER).fill_null(False)), requests, options)
    num_q = pl.col(_JUDGED).fill_null(False).sum().cast(pl.Int64).alias("num_q")
    labels = [label for label, _ in requests]
    if not by:
        return pl.concat([parts.select(num_q), values], how="horizontal")
    # every group of the parts: a group of the run with no judged query too (num_q 0,
    # Elliot's values of its users), as one machine's full join of the two plans
    counted = parts.group_by(by).agg(num_q)
    merged = counted.join(values, on=by, how="left", nulls_equal=True)
    return merged.select(*by, "num_q", *labels).sort(by)
