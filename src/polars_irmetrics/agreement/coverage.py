"""How the run's queries line up with the reference's: the warning the rank-similarity
metrics give when the reference lacks most of the run's queries (their values then
have no meaning, or are left out), and the reverse, a run (each system) that misses
most of the reference's queries, or any spelt apart from one of its own (they score
against an empty ranking, or are left out), as the ranking metrics warn of judged
queries. One plan counts them over the whole run
(:func:`queries_tally`); the Spark and Dask engines count them on the driver and warn
with the same words (:func:`warn_on_queries`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import (
    INTERNAL,
    Hint,
    held_tally,
    is_text,
    lacks_most,
    systems_named,
    systems_row,
    warn_from_plan,
    warn_on_joint,
)
from polars_irmetrics.metrics.registry import MetricRequest

__all__ = [
    "CORRELATIONS",
    "HELD",
    "LISTED",
    "REF_QUERIES",
    "RUN_QUERIES",
    "empty_fate",
    "empty_value",
    "queries_hint",
    "queries_tally",
    "warn_on_queries",
]

#: The tally's columns: the run's queries, and how many of them the reference holds;
#: the run's documents, and how many of them the reference lists.
RUN_QUERIES, HELD = f"{INTERNAL}run_queries", f"{INTERNAL}held"
RUN_DOCS, HELD_DOCS = f"{INTERNAL}run_docs", f"{INTERNAL}held_docs"
#: The reference's queries (each group it serves apart), and, per system, how many of
#: them the run lists (:func:`~polars_irmetrics.ground.validate.systems_column`'s).
REF_QUERIES, LISTED = f"{INTERNAL}ref_queries", f"{INTERNAL}listed"
_RAN, _HELD = f"{INTERNAL}ran", f"{INTERNAL}in_reference"
#: The metrics asked: ``(label, request)`` each.
Requests = Sequence[tuple[str, MetricRequest]]


def queries_tally(
    run: pl.LazyFrame, reference: pl.LazyFrame, keys: list[str], systems: Sequence[str] = ()
) -> pl.LazyFrame:
    """One row: the run's queries (its distinct ``keys``), how many of them the reference
    holds, and the reference's queries (its distinct ``keys``: those it serves each group
    with), of which the run lists as many as the reference holds of its own; one full
    join of the two tables' distinct keys. With ``systems``, each system the reference
    mostly lacks the queries of (:func:`~polars_irmetrics.ground.validate.held_tally`'s
    column), and each system that misses any query of the reference (a system of the
    reference the run has no row of among them), with its counts.

    >>> run = pl.LazyFrame({"query_id": ["a", "b", "b"]})
    >>> ref = pl.LazyFrame({"query_id": ["b", "c", "d"]})
    >>> queries_tally(run, ref, ["query_id"]).collect().row(0)
    (2, 1, 3)
    """
    ran = run.select(keys).unique().with_columns(pl.lit(True).alias(_RAN))
    held = reference.select(keys).unique().with_columns(pl.lit(True).alias(_HELD))
    rows = ran.join(held, on=keys, how="full", coalesce=True, nulls_equal=True)
    both = pl.col(_RAN).is_not_null() & pl.col(_HELD).is_not_null()
    counts = [
        pl.col(_RAN).count().cast(pl.Int64).alias(RUN_QUERIES),
        both.sum().cast(pl.Int64).alias(HELD),
        pl.col(_HELD).count().cast(pl.Int64).alias(REF_QUERIES),
    ]
    if not systems:
        return rows.select(counts)
    per_system = rows.group_by(list(systems)).agg(counts)
    whole = per_system.select(pl.col(RUN_QUERIES, HELD, REF_QUERIES).sum())
    lacked = systems_row(per_system, systems, RUN_QUERIES, HELD)
    missed = systems_row(
        per_system.rename({HELD: LISTED}), systems, REF_QUERIES, LISTED, below_all=True
    )
    return pl.concat([whole, lacked, missed], how="horizontal")


def documents_tally(
    run: pl.LazyFrame, reference: pl.LazyFrame, doc_id: str, systems: Sequence[str] = ()
) -> pl.LazyFrame:
    """One row: the run's distinct documents, and how many of them the reference lists
    (for any query); with ``systems`` (columns of ``run``), each system none or few of
    whose documents the reference lists too: one system's ids of another spelling,
    beside systems that line up, score 0 in every query.

    >>> run = pl.LazyFrame({"doc_id": ["a", "b"]})
    >>> documents_tally(run, pl.LazyFrame({"doc_id": ["x"]}), "doc_id").collect().row(0)
    (2, 0)
    """
    return held_tally(
        run, reference.select(doc_id), [doc_id], RUN_DOCS, HELD_DOCS, systems=systems
    )


def warn_on_queries(
    row: Mapping[str, Any],
    query_id: str,
    options: EvalOptions,
    requests: Requests,
    hint: Hint | None = None,
) -> None:
    """A run whose queries the reference mostly lacks (``row``: :func:`queries_tally`'s):
    warned about, with what the query-set policies then do (values of no meaning, or
    left out); then the reverse, a run (each system of ``systems=``) that misses most of
    the reference's queries, or any whose id ``hint`` (:func:`queries_hint`) finds
    matching a query id of the run once its spelling is ignored, as the ranking metrics
    warn of the judged queries a run misses
    (:func:`~polars_irmetrics.ground.validate.warn_on_counts`). What a query one side
    lacks scores is said of the metrics asked (``requests``: :func:`empty_fate`)."""
    total, held = row[RUN_QUERIES], row[HELD]
    if not total:  # no query of the run: every value is an empty ranking's, or none
        fate = (
            "no query is left to score (unretrieved='drop' leaves out the reference's "
            "queries the run lacks): every mean is over 0 queries (num_q 0)"
            if options.unretrieved == "drop"
            else "each query of the reference scores "
            + empty_fate(requests, "unretrieved", options.unretrieved)
        )
        warn_from_plan(f"the run has no rows: {fate}; check the run's file or frame")
        return
    fate = (
        "are left out (unjudged='drop')"
        if options.unjudged == "drop"
        else "each score " + empty_fate(requests, "unjudged", options.unjudged)
    )
    missed = (
        "is left out (unretrieved='drop')"
        if options.unretrieved == "drop"
        else "scores " + empty_fate(requests, "unretrieved", options.unretrieved)
    )

    def effect(matched: int, total: int) -> str:
        return (
            f"the {total - matched} the reference lacks {fate}, and each query of the "
            f"reference the run lacks {missed}"
        )

    systems = options.system_keys
    lacked = systems_named(row, HELD, systems)
    warn_on_joint(
        table="reference",
        column=query_id,
        matched=held,
        total=total,
        things="queries",
        owner="run",
        effect=effect,
        by_system=lacked,
    )
    # the warning above says what the reference's queries the run lacks score: a run (a
    # system) it was given for is not warned of again
    said = (
        {None}
        if lacks_most(held, total)
        else {s["name"] for s in lacked if lacks_most(s["matched"], s["total"])}
    )
    _warn_on_missed(row, query_id, options, said, hint, requests)
    # the queries line up but no document does: every list shares nothing (a low
    # overlap is a finding; none at all, most likely ids of two spellings); a system
    # none of whose documents the reference lists, beside systems that line up, alike
    docs, held_docs = row.get(RUN_DOCS), row.get(HELD_DOCS)
    if not (held and docs):
        return
    none = [{"name": None, "total": docs, "matched": 0}] if held_docs == 0 else []
    alone = [s for s in systems_named(row, HELD_DOCS, systems) if s["matched"] == 0]
    for side in none or alone:
        warn_on_joint(
            table="reference",
            column=options.doc_id,
            matched=0,
            total=side["total"],
            things="documents",
            owner="run" if side["name"] is None else f"run of {side['name']}",
            effect="no list shares a document with the reference's: every overlap "
            "is 0 (rbo, jaccard, intersection...; unexpectedness 1), the orders of the "
            "shared documents are null (kendall_tau, tau_ap) and repro_eval's ktu, which "
            "pairs where each list's ids fall in the sorted union of both, reads the ids' "
            "spelling alone",
        )


#: The correlations: null below two shared documents (repro_eval's ``ktu``: two paired
#: positions), so null against an empty ranking too (:func:`empty_value`).
CORRELATIONS = ("kendall_tau", "tau_ap", "ktu")


def empty_value(request: MetricRequest) -> float | None:
    """A metric's value for a query one side has no ranking of (``unretrieved='zero'``,
    ``unjudged='zero'``): the similarity to an empty ranking, 0, but for RBO's upper
    bound and residual, and the correlations. Nothing of an empty ranking is seen (``s =
    0``), so every depth's agreement is unknown: ``min = 0`` (no overlap assumed), ``max
    = (1 - p) sum_{d >= 1} p^(d-1) = 1`` (the unseen ranking could be the other one),
    ``res = max - min = 1`` (the whole weight uncertain, its largest, as trec_eval's
    ``rbp_residual`` of an unretrieved query), and ``ext`` extrapolates
    the agreement at depth ``s = 0``, of which there is none: 0. ``kendall_tau`` and
    ``tau_ap`` are null, as for any ranking sharing fewer than two documents, and
    repro_eval's ``ktu``, as for a ranking of one document (one pair of positions): a 0
    there would read as "uncorrelated", above the -1 of a ranking that retrieved the
    shared documents in reverse, so retrieving nothing would raise the mean.

    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> [empty_value(parse_metric(f"rbo(kind='{k}')")) for k in ("ext", "min", "max", "res")]
    [0.0, 0.0, 1.0, 1.0]
    >>> empty_value(parse_metric("jaccard@10")), empty_value(parse_metric("kendall_tau@10"))
    (0.0, None)
    >>> print(empty_value(parse_metric("ktu@10")))
    None
    """
    if request.metric.name == "rbo" and request.params(1.0).choice("kind") in ("max", "res"):
        return 1.0
    if request.metric.name in CORRELATIONS:
        return None
    return 0.0


def empty_fate(requests: Requests, policy: str, value: str) -> str:
    """What a query one side lacks scores under ``policy`` (``"unretrieved"`` or
    ``"unjudged"``, set to ``value``), as the warnings say it: each metric asked gives
    its value against an empty ranking (:func:`empty_value`), the metrics of a value
    other than 0 named (beside those of 0, or alone), so that the text holds for
    ``rbo(kind='max')`` (1) and ``kendall_tau`` (null) as for ``jaccard`` (0).

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> print(empty_fate(parse_metric_list(["rbo", "jaccard@5"]), "unretrieved", "zero"))
    as an empty ranking does (unretrieved='zero': 0)
    >>> asked = parse_metric_list(["rbo", "rbo(kind='max')", "kendall_tau@5"])
    >>> print(empty_fate(asked, "unretrieved", "zero"))
    as an empty ranking does (unretrieved='zero': 0, but 1 in rbo(kind='max') and null in
    kendall_tau@5)
    >>> print(empty_fate(parse_metric_list(["rbo(kind='res')"]), "unjudged", "zero"))
    as an empty ranking does (unjudged='zero': 1)
    """
    shown: dict[str, list[str]] = {}
    for label, request in requests:
        value_of = empty_value(request)
        text = "null" if value_of is None else f"{value_of:g}"
        shown.setdefault(text, []).append(label)
    if len(shown) <= 1:
        values = next(iter(shown), "0")
    else:
        others = " and ".join(
            f"{text} in {', '.join(labels)}" for text, labels in shown.items() if text != "0"
        )
        values = f"0, but {others}" if "0" in shown else others
    return f"as an empty ranking does ({policy}={value!r}: {values})"


def _warn_on_missed(
    row: Mapping[str, Any],
    query_id: str,
    options: EvalOptions,
    said: set[str | None],
    hint: Hint | None,
    requests: Requests,
) -> None:
    """The reference's queries the run (each system of ``systems=``, by name) does not
    list (``row``: :func:`queries_tally`'s): warned of where it misses most of them, or
    where ``hint`` finds a query id of the run that matches one of them once its spelling
    is ignored (a run of some of the reference's queries is said nothing of otherwise),
    as :func:`~polars_irmetrics.ground.validate.warn_on_counts` warns of judged queries;
    not for a run (a system) in ``said`` (``None``: the whole run), already warned of."""
    refs = row.get(REF_QUERIES)
    if not refs or None in said:
        return
    systems = options.system_keys
    if systems:
        missing = systems_named(row, LISTED, systems)
    else:
        listed = row[HELD]  # the reference's queries the run lists: those it holds
        missing = [{"name": None, "total": refs, "matched": listed}] if listed < refs else []
    missing = [m for m in missing if m["name"] not in said]
    if not missing:
        return
    spelt = hint() if hint is not None else None
    fate = (
        "are left out (unretrieved='drop')"
        if options.unretrieved == "drop"
        else "each score " + empty_fate(requests, "unretrieved", options.unretrieved)
    )
    advice = spelt or (
        "Ids that do not line up are the likely cause: give the run and reference= the "
        f"same {query_id!r} values (same spelling, same collection)."
    )
    for side in missing:
        listed, refs = side["matched"], side["total"]
        name = "the run" if side["name"] is None else side["name"]
        if lacks_most(listed, refs):
            shown = "none" if listed == 0 else f"only {listed}"
            text = f"{name} misses most queries of reference="
        elif spelt:
            text = f"{name} misses {refs - listed} of the {refs} queries of reference="
            shown = str(listed)
        else:
            continue
        warn_from_plan(
            f"{text} (it lists {shown} of the {refs}; column {query_id!r}): the "
            f"{refs - listed} it misses {fate}. {advice}"
        )


def queries_hint(run: pl.LazyFrame, reference: pl.LazyFrame, query_id: str) -> Hint | None:
    """The hint of :func:`warn_on_queries` (``None`` where the query ids are not text):
    the run's query ids the reference lacks that match one of the reference's the run
    lacks once their spelling is ignored
    (:func:`~polars_irmetrics.ground.spelling.spelling_hint`), read on the warning's
    path only (the run's and the reference's distinct query ids, joined again)."""
    if not is_text(run.collect_schema()[query_id]):
        return None

    def read() -> str | None:
        text = pl.col(query_id).cast(pl.String)  # one dtype (Categorical beside String)
        ran, held = (side.select(text).unique() for side in (run, reference))
        return missed_hint(
            ran.join(held, on=query_id, how="anti", nulls_equal=True),
            held.join(ran, on=query_id, how="anti", nulls_equal=True),
            query_id,
        )

    return read


def missed_hint(ran: pl.LazyFrame, missed: pl.LazyFrame, query_id: str) -> str | None:
    """The sentence of :func:`queries_hint`, from the run's query ids the reference lacks
    (``ran``) and the reference's the run lacks (``missed``); an engine gathers both."""
    sides = Sides("the run", "reference=", "the run and reference=")
    return spelling_hint(ran, missed, query_id, within=None, noun="query", sides=sides)
