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

import polars as pl

from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.errors import ColumnNotFoundError
from polars_irmetrics.ground.options import Order
from polars_irmetrics.ground.validate import Policy

__all__ = ["AVGJG_MEASURES", "base_metric", "evaluate_jg"]

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


def evaluate_jg(
    run: pl.DataFrame | pl.LazyFrame,
    metrics: str | Iterable[str],
    qrels_jg: pl.DataFrame | pl.LazyFrame,
    *,
    jg: str = "jg",
    relevance_level: float = 1,
    depth: int | None = None,
    unretrieved: Policy = "drop",
    order: Order = "auto",
) -> pl.DataFrame:
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
        ``query_id``, ``jg`` (the judgment group), ``doc_id`` and ``relevance``
        (:func:`polars_irmetrics.io.prefs.read_trec_qrels_jg` reads trec_eval's file).
    jg
        The judgment-group column of ``qrels_jg``.
    relevance_level, depth, unretrieved, order
        As for :func:`polars_irmetrics.evaluate` (``unretrieved='zero'``: a judged
        query with no results scores 0 in each group, trec_eval's ``-c``).

    Returns
    -------
    polars.DataFrame
        ``query_id`` and one Float64 column per metric, sorted by ``query_id``.

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
    >>> evaluate_jg(run, ["map_avgjg", "P_avgjg_1"], qrels).rows()
    [('q1', 0.75, 0.5)]
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    judgments = qrels_jg.lazy()
    if jg not in judgments.collect_schema().names():
        raise ColumnNotFoundError(
            f"qrels_jg has no column {jg!r} (the judgment group); pass jg='your_column' "
            "or read trec_eval's file with polars_irmetrics.io.prefs.read_trec_qrels_jg"
        )
    qid = pl.col("query_id").cast(pl.String)
    key = pl.concat_str(qid, pl.lit(_SEP), pl.col(jg).cast(pl.String)).alias("query_id")
    groups = judgments.select(qid.alias("_qid"), key).unique()
    run_lazy = run.lazy().with_columns(qid.alias("_qid")).drop("query_id")
    paired = run_lazy.join(groups, on="_qid", how="inner").drop("_qid")
    pairs = [(n, base_metric(n)) for n in names]
    per_group = evaluate(
        paired,
        list(dict.fromkeys(base for _, base in pairs)),
        qrels=judgments.with_columns(key).drop(jg),
        per_query=True,
        order=order,
        relevance_level=relevance_level,
        depth=depth,
        unretrieved=unretrieved,
    )
    return (
        per_group.lazy()
        .with_columns(pl.col("query_id").str.split(_SEP).list.first())
        .group_by("query_id")
        .agg(pl.col(base).cast(pl.Float64).mean().alias(name) for name, base in pairs)
        .sort("query_id")
        .collect()
    )
