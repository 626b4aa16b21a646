"""Judgment groups: a metric averaged over several users' judgments of each query.

The plan behind :func:`~polars_irmetrics.evaluate_jg` and ``irm.evaluate(...,
qrels_jg=...)``.

trec_eval's ``-R qrels_jg`` reads qrels whose second field names a judgment group
(one user's judgments of the query); its ``*_avgjg`` measures compute a measure
against each group's judgments alone and average over the query's groups:

* ``map_avgjg`` = (1/G) * sum over the query's G groups of AP against that group;
* ``P_avgjg_k`` = (1/G) * sum over groups of P@k (a document the group did not judge
  is not relevant to it);
* ``Rprec_mult_avgjg_x`` = (1/G) * sum over groups of rprec_mult(multiple=x), with
  R the group's number of relevant documents.

:func:`build_jg_plan` does this for any metric of the registry: the run is paired with
each judgment group of its query, every metric is evaluated per (query, group) in one
plan, and the per-group values are averaged per query. trec_eval's names are accepted
(``map_avgjg``, ``P_avgjg_10``, ``Rprec_mult_avgjg_0.20``) and mean the metric without
``_avgjg``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MetricParameterError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    check_id_kinds,
    common_id_dtype,
    judged_tally,
    warn_on_judged,
    with_tally,
)
from polars_irmetrics.metrics.registry import MetricRequest, parse_metric
from polars_irmetrics.metrics.scope import exact_mean
from polars_irmetrics.offline.coverage import judged_docs, judged_hints, judged_partly
from polars_irmetrics.offline.plan import build_plan, depth_cut
from polars_irmetrics.offline.setup import resolve

if TYPE_CHECKING:
    pass

__all__ = ["AVGJG_MEASURES", "base_metric", "build_jg_plan"]

#: trec_eval's judgment-group measures and the metric each averages over groups.
AVGJG_MEASURES: dict[str, str] = {
    "map_avgjg": "map",
    "P_avgjg": "P",
    "Rprec_mult_avgjg": "Rprec_mult",
}

_AVGJG = re.compile(r"^(.+?)_avgjg(_.+|@.+|\(.*\))?$")
#: joins a query id and a group into one key, as the checks' messages show it ("query
#: 'q1 (judgment group 2)'"); the query id comes back by a join, never by a split
_GROUP_OPEN, _GROUP_CLOSE = " (judgment group ", ")"


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


def _base(request: MetricRequest) -> MetricRequest:
    """The metric a request averages over groups: ``map_avgjg`` is ``map``; any other
    metric is itself (:func:`evaluate_jg`)."""
    return parse_metric(base_metric(request.name)) if request.route == "jg" else request


def _refuse_null_groups(qrels_jg: pl.LazyFrame, query_id: str, jg: str) -> pl.LazyFrame:
    """``qrels_jg`` unchanged, and a judgment of a query with no group (a null ``jg``)
    refused when the plan runs: it would key its query's run rows by none, which the
    checks would read as a run row of no query id. A row of no query id either is left
    to the judgments' own check."""
    schema = qrels_jg.collect_schema()

    def check(frame: pl.DataFrame) -> pl.DataFrame:
        bad = frame.filter(pl.col(jg).is_null() & pl.col(query_id).is_not_null())
        if bad.height:
            first = bad.get_column(query_id).min()
            n = bad.filter(pl.col(query_id) == first).height
            raise InvalidValueError(
                f"column {jg!r} of the judgments (qrels_jg=) has {n} null value(s) in query "
                f"{first!r}; every judgment needs a judgment group: drop them, e.g. "
                f".drop_nulls({jg!r})"
            )
        return frame

    return qrels_jg.map_batches(check, schema=schema)


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
    the query's groups; ``query_id`` (in the ids' dtype, sorted) and one Float64 column
    per request."""
    if qrels_jg is None:  # guarded by the door's input check
        raise MetricParameterError("judgment-group measures need qrels_jg=...")
    query_id = options.query_id
    if jg not in qrels_jg.collect_schema().names():
        raise ColumnNotFoundError(
            f"qrels_jg has no column {jg!r} (the judgment group); pass jg='your_column' "
            "or read trec_eval's file with irm.read_trec_qrels_jg"
        )
    qrels_jg = _refuse_null_groups(qrels_jg, query_id, jg)
    ran, held = run.collect_schema(), qrels_jg.collect_schema()
    # as the ranking metrics refuse them (the ids are compared as text below)
    check_id_kinds(ran, "run", held, "qrels_jg", [query_id, options.doc_id])
    qid = pl.col(query_id).cast(pl.String)
    group = pl.col(jg).cast(pl.String)
    key = pl.concat_str(qid, pl.lit(_GROUP_OPEN), group, pl.lit(_GROUP_CLOSE)).alias(query_id)
    groups = qrels_jg.select(qid.alias("_qid"), key).unique()
    paired = run.with_columns(qid.alias("_qid")).drop(query_id)
    paired = paired.join(groups, on="_qid", how="inner").drop("_qid")
    # a run row of no query id stays, keyed by none, for the plan's checks to refuse
    # as they refuse it for every metric (the join above would drop it in silence)
    unkeyed = run.filter(pl.col(query_id).is_null()).with_columns(qid)
    paired = pl.concat([paired, unkeyed], how="diagonal")
    bases = {label: _base(request) for label, request in requests}
    distinct = {req.name: req for req in bases.values()}
    # the plan's keys are (query, group) pairs: its coverage warning would count them as
    # queries; the run's coverage of the judged queries and documents is warned below
    per_group = build_plan(
        paired,
        list(distinct.items()),
        qrels_jg.with_columns(key).drop(jg),
        options.replace(per_query=True, buckets=None),
        warn=False,
    )
    # the query ids back in their dtype (the run's and the judgments' common one, as
    # the ranking metrics give them: integers stay integers, in their order); an id's
    # text casts back to it exactly
    dtype = common_id_dtype([ran[query_id], held[query_id]])
    values = (
        per_group.join(groups, on=query_id, how="left")
        .with_columns(pl.col("_qid").cast(dtype).alias(query_id))
        .drop("_qid")
        .group_by(query_id)
        # the groups' mean in fixed point: the groups arrive in no fixed order (a float
        # mean of 0.1, 0.1 and 0.4 is 0.20000000000000004 or 0.19999999999999998)
        .agg(exact_mean(pl.col(req.name)).alias(label) for label, req in bases.items())
        .sort(query_id)
    )
    # a run that retrieves no judged document, or lists few judged queries: warned as
    # the ranking metrics warn, over the queries and documents (not the groups)
    doc_id = options.doc_id
    judged = qrels_jg.select(query_id, doc_id).unique()
    # with depth=, the run's documents within it, as the measures read them: the found
    # ones counted, and the hints read, there alone
    cut = depth_cut(resolve(run, qrels_jg.drop(jg), options))
    shown = run if cut is None else cut(run)
    counts = judged_tally(shown, judged, query_id, doc_id, listed=True)
    hints = judged_hints(shown, judged, query_id, doc_id)
    # and the judged queries where it retrieves no judged document, its documents there
    # spelt apart from the judged ones: read only where such a query is
    docs = judged_docs(shown, judged, query_id, doc_id)
    # and those where it retrieves some judged documents but not all, its other
    # documents there spelt apart from the judged ones
    partly = judged_partly(shown, judged, query_id, doc_id)
    unretrieved = options.unretrieved

    def say(row: Mapping[str, Any]) -> None:
        warn_on_judged(row, unretrieved, hints, docs=docs, partly=partly)

    return with_tally(values, counts, say)
