"""Judgment groups: a metric averaged over several users' judgments of each query.

trec_eval's ``-R qrels_jg`` reads qrels whose second field names a judgment group
(one user's judgments of the query); its ``*_avgjg`` measures compute a measure
against each group's judgments alone and average over the query's groups:

* ``map_avgjg`` = (1/G) * sum over the query's G groups of AP against that group;
* ``P_avgjg_k`` = (1/G) * sum over groups of P@k (a document the group did not judge
  is not relevant to it);
* ``Rprec_mult_avgjg_x`` = (1/G) * sum over groups of rprec_mult(multiple=x), with
  R the group's number of relevant documents.

:func:`evaluate_jg` does this for any metric of the registry: the run is paired with
each judgment group of its query, every metric is evaluated per (query, group) in one
plan, and the per-group values are averaged per query. trec_eval's names are accepted
(``map_avgjg``, ``P_avgjg_10``, ``Rprec_mult_avgjg_0.20``) and mean the metric without
``_avgjg``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, overload

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, MetricParameterError
from polars_irmetrics.ground.buckets import collect_guarded
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.options import EvalKwargs, EvalOptions
from polars_irmetrics.metrics.registry import MetricRequest, means, parse_metric
from polars_irmetrics.offline.plan import build_plan

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AVGJG_MEASURES", "base_metric", "build_jg_plan", "evaluate_jg"]

#: trec_eval's judgment-group measures and the metric each averages over groups.
AVGJG_MEASURES: dict[str, str] = {
    "map_avgjg": "map",
    "P_avgjg": "P",
    "Rprec_mult_avgjg": "Rprec_mult",
}

_AVGJG = re.compile(r"^(.+?)_avgjg(_.+|@.+|\(.*\))?$")
_SEP = "\x1f"  # joins a query id and a group into one key (not in whitespace ids)


def base_metric(name: str) -> str:
    """The metric a judgment-group name averages: ``P_avgjg_10`` -> ``P_10``.

    Examples
    --------
    >>> base_metric("map_avgjg"), base_metric("Rprec_mult_avgjg_0.20"), base_metric("ndcg@10")
    ('map', 'Rprec_mult_0.20', 'ndcg@10')
    """
    match = _AVGJG.match(name)
    if match is None:
        return name
    return match.group(1) + (match.group(2) or "")


def build_jg_plan(
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    qrels_jg: pl.LazyFrame | None,
    options: EvalOptions,
    *,
    jg: str = "jg",
) -> pl.LazyFrame:
    """Per-query values of the judgment-group ``requests``: each metric against each
    group's judgments alone (one offline plan over (query, group) keys), averaged over
    the query's groups; ``query_id`` and one Float64 column per request."""
    if qrels_jg is None:  # guarded by the door's input check
        raise MetricParameterError("judgment-group measures need qrels_jg=...")
    query_id = options.query_id
    if jg not in qrels_jg.collect_schema().names():
        raise ColumnNotFoundError(
            f"qrels_jg has no column {jg!r} (the judgment group); pass jg='your_column' "
            "or read trec_eval's file with irm.read_trec_qrels_jg"
        )
    qid = pl.col(query_id).cast(pl.String)
    key = pl.concat_str(qid, pl.lit(_SEP), pl.col(jg).cast(pl.String)).alias(query_id)
    groups = qrels_jg.select(qid.alias("_qid"), key).unique()
    paired = run.with_columns(qid.alias("_qid")).drop(query_id)
    paired = paired.join(groups, on="_qid", how="inner").drop("_qid")
    bases = {label: parse_metric(base_metric(label)) for label, _ in requests}
    distinct = {req.name: req for req in bases.values()}
    per_group = build_plan(
        paired,
        list(distinct.items()),
        qrels_jg.with_columns(key).drop(jg),
        options.replace(per_query=True, buckets=None),
    )
    return (
        per_group.with_columns(pl.col(query_id).str.split(_SEP).list.first())
        .group_by(query_id)
        .agg(pl.col(req.name).cast(pl.Float64).mean().alias(label) for label, req in bases.items())
        .sort(query_id)
    )


@overload
def evaluate_jg(
    run: pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    qrels_jg: FrameInput,
    jg: str = ...,
    **options: Unpack[EvalKwargs],
) -> pl.LazyFrame: ...


@overload
def evaluate_jg(
    run: pl.DataFrame,
    metrics: str | Iterable[str],
    *,
    qrels_jg: FrameInput,
    jg: str = ...,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame: ...


def evaluate_jg(
    run: pl.DataFrame | pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    qrels_jg: FrameInput,
    jg: str = "jg",
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame | pl.LazyFrame:
    """Per-query values of ``metrics``, each averaged over the query's judgment groups.

    Parameters
    ----------
    run
        ``query_id``, ``doc_id`` and ``score`` and/or ``rank``, as for
        :func:`polars_irmetrics.evaluate`.
    metrics
        Metric names of the registry (``map``, ``P_10``, ``rprec_mult@0.2``) or
        trec_eval's judgment-group names (``map_avgjg``, ``P_avgjg_10``); the output
        columns keep the names given.
    qrels_jg
        Keyword only: ``query_id``, ``jg`` (the judgment group), ``doc_id`` and ``relevance``
        (:func:`polars_irmetrics.io.prefs.read_trec_qrels_jg` reads trec_eval's file).
    jg
        The judgment-group column of ``qrels_jg``.
    **options
        :func:`polars_irmetrics.evaluate`'s options (``per_query``: default ``True``
        here, one row per query; ``relevance_level``, ``depth``,
        ``order``, ``unretrieved``: ``'zero'`` scores a judged query with no results 0
        in each group, trec_eval's ``-c``; default here ``'drop'``, as trec_eval).

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        As the run came: ``query_id`` and one Float64 column per metric, sorted by
        ``query_id``; with ``per_query=False``, ``num_q`` (Int64) and the Float64 means
        of the per-query values, summed in query order as
        :func:`polars_irmetrics.evaluate` sums them.

    Raises
    ------
    ColumnNotFoundError
        ``qrels_jg`` has no ``jg`` column.

    Examples
    --------
    Two users judged q1: for alice d1 is relevant (AP 1), for bob d2 (AP 1/2). The
    query's map_avgjg is their mean, 0.75:

    >>> import polars as pl
    >>> run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"],
    ...                     "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["q1"] * 4, "jg": ["alice", "alice", "bob", "bob"],
    ...                       "doc_id": ["d1", "d2", "d1", "d2"], "relevance": [1, 0, 0, 1]})
    >>> evaluate_jg(run, ["map_avgjg", "P_avgjg_1"], qrels_jg=qrels).rows()
    [('q1', 0.75, 0.5)]

    A LazyFrame in gives a LazyFrame out, nothing computed:

    >>> evaluate_jg(run.lazy(), "map", qrels_jg=qrels, per_query=False).collect().rows()
    [(1, 0.75)]
    """
    frame = as_polars(run, "run")
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    requests = [(name, parse_metric(base_metric(name))) for name in names]
    built = EvalOptions.build(**{"unretrieved": "drop", "per_query": True, **options})
    judgments = as_polars(qrels_jg, "qrels_jg").lazy()
    plan = build_jg_plan(frame.lazy(), requests, judgments, built, jg=jg)
    if not built.per_query:
        plan = plan.select(means(requests))
    return collect_guarded(plan) if isinstance(frame, pl.DataFrame) else plan
