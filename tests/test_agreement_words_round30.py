"""Round 30: the rank-similarity metrics' (``reference=``) words that did not hold.

* The warning of a reference that lacks most of the run's queries said each query of
  the reference the run lacks "scores 0 (unretrieved='zero')": ``rbo(kind='max')`` and
  ``rbo(kind='res')`` give 1 there and the correlations null. Both coverage warnings now
  say what the metrics asked give (one clause, ``agreement.coverage.empty_fate``), and
  so does ``unjudged='zero'``'s.
* A UInt64 rank of 2**63 or more was read on this route (rbo 1.0), where every other
  route refuses it (the ranking metrics' ``big_rank``): refused in the run and in
  ``reference=`` alike.
* A group of the run the reference lacks (``systems=`` beside a reference of that key)
  was refused without the spelling hint ``system_agreement`` gives: systems 'x', 'y'
  beside 'X', 'Y' now hear that they match once case is ignored, and the fix (one
  machine, Spark and Dask).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, InvalidValueError

from .helpers import engine_io


def _evaluate(
    run: pl.DataFrame, metrics: list[str], reference: pl.DataFrame, lazy: bool, **kw: Any
) -> pl.DataFrame:
    given = (run.lazy(), reference.lazy()) if lazy else (run, reference)
    out = irm.evaluate(given[0], metrics, reference=given[1], **kw)
    assert isinstance(out, pl.LazyFrame if lazy else pl.DataFrame)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _ranking(queries: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": queries, "doc_id": ["a"] * len(queries), "rank": [1] * len(queries)}
    )


#: Ten queries of the run; the reference holds q0 and q10 (which the run lacks).
RUN = _ranking([f"q{i}" for i in range(10)])
FEW = _ranking(["q0", "q10"])
ASKED = ["rbo(kind='max')", "kendall_tau@5", "rbo"]
FIX = (
    "Ids that do not line up are the likely cause: give reference= and the run the same "
    "'query_id' values (same spelling, same collection)."
)
MISSED_FIX = (
    "Ids that do not line up are the likely cause: give the run and reference= the same "
    "'query_id' values (same spelling, same collection)."
)

# (case, run, reference, metrics, options, the coverage warnings, per query: q10's row)
WORDS: list[tuple[str, pl.DataFrame, pl.DataFrame, list[str], dict[str, Any], str, Any]] = [
    (
        "reference lacks most, kinds of three values",
        RUN,
        FEW,
        ASKED,
        {},
        "reference= holds only 1 of the 10 queries of the run (column 'query_id'): the 9 the "
        "reference lacks are left out (unjudged='drop'), and each query of the reference the "
        "run lacks scores as an empty ranking does (unretrieved='zero': 0, but 1 in "
        f"rbo(kind='max') and null in kendall_tau@5). {FIX}",
        ("q10", 1.0, None, 0.0),
    ),
    (
        "reference lacks most, unjudged='zero', the residual alone",
        RUN,
        FEW,
        ["rbo(kind='res')"],
        {"unjudged": "zero"},
        "reference= holds only 1 of the 10 queries of the run (column 'query_id'): the 9 the "
        "reference lacks each score as an empty ranking does (unjudged='zero': 1), and each "
        "query of the reference the run lacks scores as an empty ranking does "
        f"(unretrieved='zero': 1). {FIX}",
        ("q10", 1.0),
    ),
    (
        "run misses most, the correlations alone",
        _ranking(["q0"]),
        RUN,
        ["kendall_tau@5", "tau_ap@5"],
        {},
        "the run misses most queries of reference= (it lists only 1 of the 10; column "
        "'query_id'): the 9 it misses each score as an empty ranking does "
        f"(unretrieved='zero': null). {MISSED_FIX}",
        None,
    ),
]


@pytest.mark.parametrize(
    ("case", "run", "reference", "metrics", "options", "text", "row"),
    WORDS,
    ids=[w[0] for w in WORDS],
)
def test_the_coverage_words_say_what_the_metrics_asked_give(
    case: str,
    run: pl.DataFrame,
    reference: pl.DataFrame,
    metrics: list[str],
    options: dict[str, Any],
    text: str,
    row: Any,
    frame_kind: str,
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _evaluate(
            run, metrics, reference, frame_kind == "LazyFrame", per_query=True, **options
        )
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert said == [text], case
    if row is not None:  # the words are the values
        assert got.filter(pl.col("query_id") == "q10").row(0) == row, case


def _big(rank: int) -> pl.DataFrame:
    ranks = pl.Series("rank", [1, rank], dtype=pl.UInt64)
    return pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"]}).with_columns(ranks)


BIG = (
    "column 'rank' of the {frame} has 1 rank(s) of 2**63 or more in query 'q'; a rank "
    "counts positions in one list: renumber them 1, 2, 3, ..., e.g. "
    "pl.col('rank').rank('ordinal').over(query_id)"
)


@pytest.mark.parametrize(
    ("run", "reference", "frame"),
    [(_big(2**63 + 5), _big(2), "run"), (_big(2), _big(2**64 - 1), "reference (reference=)")],
    ids=["run", "reference"],
)
def test_a_rank_of_2_to_the_63_or_more_is_refused_as_every_route_refuses_it(
    run: pl.DataFrame, reference: pl.DataFrame, frame: str, frame_kind: str
) -> None:
    message = BIG.format(frame=frame)
    lazy = frame_kind == "LazyFrame"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _evaluate(run, ["rbo", "kendall_tau@5"], reference, lazy)
    if frame == "run":  # the ranking metrics' words, which this route now shares
        qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.evaluate(run, ["ndcg"], qrels=qrels)


#: System x ranks queries q and r, y ranks r; the reference spells them X and Y. The
#: hint is of the refused group's id, so a part of a split run gives one machine's.
SYSTEMS = pl.DataFrame(
    {
        "system": ["x"] * 4 + ["y"] * 2,
        "query_id": ["q", "q", "r", "r", "r", "r"],
        "doc_id": ["a", "b"] * 3,
        "rank": [1, 2] * 3,
    }
)
SPELT = (
    "the group system='x' of the run has no rows in reference=, which holds the by= key "
    "column 'system' (a reference per group): give the reference that group's rankings, or "
    "drop those columns from the reference to compare every group with one reference. 1 "
    "system id(s) of column 'system' of the run match an id of reference= only when case is "
    "ignored ('x' against 'X'): ids are compared exactly; give the run and reference= the "
    "same spelling, e.g. pl.col('system').str.to_lowercase() on each."
)


@pytest.mark.parametrize("split", [None, 3])
def test_a_group_the_reference_spells_apart_is_refused_with_the_hint(
    frame_kind: str, split: int | None
) -> None:
    upper = SYSTEMS.with_columns(pl.col("system").str.to_uppercase())
    lazy = frame_kind == "LazyFrame"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(SPELT)}$"):
        _evaluate(SYSTEMS, ["rbo"], upper, lazy, systems="system", buckets=split)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_give_one_machines_words(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, frame, back = engine_io(engine, request)
    upper = SYSTEMS.with_columns(pl.col("system").str.to_uppercase())
    with pytest.raises(InvalidValueError, match=f"^{re.escape(SPELT)}$"):
        back(
            evaluate(
                frame(SYSTEMS), ["rbo"], reference=frame(upper), systems="system", partitions=3
            )
        )
    case, run, reference, metrics, _, text, _ = WORDS[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        back(evaluate(frame(run), metrics, reference=frame(reference)))
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert said == [text], case
