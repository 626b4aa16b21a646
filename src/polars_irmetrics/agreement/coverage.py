"""How the run's queries line up with the reference's: the warning the rank-similarity
metrics give when the reference lacks most of the run's queries (their values then
have no meaning, or are left out). One plan counts them over the whole run
(:func:`queries_tally`); the Spark and Dask engines count them on the driver and warn
with the same words (:func:`warn_on_queries`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    held_tally,
    systems_named,
    warn_from_plan,
    warn_on_joint,
)

__all__ = ["HELD", "RUN_QUERIES", "queries_tally", "warn_on_queries"]

#: The tally's columns: the run's queries, and how many of them the reference holds;
#: the run's documents, and how many of them the reference lists.
RUN_QUERIES, HELD = f"{INTERNAL}run_queries", f"{INTERNAL}held"
RUN_DOCS, HELD_DOCS = f"{INTERNAL}run_docs", f"{INTERNAL}held_docs"


def queries_tally(
    run: pl.LazyFrame, reference: pl.LazyFrame, keys: list[str], systems: Sequence[str] = ()
) -> pl.LazyFrame:
    """One row: the run's queries (its distinct ``keys``), and how many of them the
    reference holds (:func:`~polars_irmetrics.ground.validate.held_tally`; with
    ``systems``, each system the reference mostly lacks the queries of too).

    >>> run = pl.LazyFrame({"query_id": ["a", "b", "b"]})
    >>> ref = pl.LazyFrame({"query_id": ["b", "c"]})
    >>> queries_tally(run, ref, ["query_id"]).collect().row(0)
    (2, 1)
    """
    return held_tally(run, reference, keys, RUN_QUERIES, HELD, systems=systems)


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


def warn_on_queries(row: Mapping[str, Any], query_id: str, options: EvalOptions) -> None:
    """A run whose queries the reference mostly lacks (``row``: :func:`queries_tally`'s):
    warned about, with what the query-set policies then do (values of no meaning, or
    left out)."""
    total, held = row[RUN_QUERIES], row[HELD]
    if not total:  # no query of the run: every value is an empty ranking's, or none
        fate = (
            "no query is left to score (unretrieved='drop' leaves out the reference's "
            "queries the run lacks): every mean is over 0 queries (num_q 0)"
            if options.unretrieved == "drop"
            else "each query of the reference scores as an empty ranking (unretrieved="
            "'zero': 0, but RBO's upper bound and residual 1 and the correlations null)"
        )
        warn_from_plan(f"the run has no rows: {fate}; check the run's file or frame")
        return
    fate = "are left out" if options.unjudged == "drop" else "each score 0"

    def effect(matched: int, total: int) -> str:
        return (
            f"the {total - matched} the reference lacks {fate} (unjudged="
            f"{options.unjudged!r}), and each query of the reference the run lacks "
            + ("is left out" if options.unretrieved == "drop" else "scores 0 (unretrieved='zero')")
        )

    systems = options.system_keys
    warn_on_joint(
        table="reference",
        column=query_id,
        matched=held,
        total=total,
        things="queries",
        owner="run",
        effect=effect,
        by_system=systems_named(row, HELD, systems),
    )
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
