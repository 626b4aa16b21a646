"""Round 30: the reference's queries a run does not list (rank similarity) are warned of,
as the ranking metrics warn of the judged queries a run misses: where the run misses
most of them, and where one of them matches a query id of the run once its spelling is
ignored; per system with ``systems=``; on one machine, in buckets, on Spark and Dask."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.errors import ColumnTypeError, CoverageWarning

from .helpers import engine_io

#: Ten queries of two documents each.
REFERENCE = pl.DataFrame(
    {
        "query_id": [f"q{i}" for i in range(10) for _ in range(2)],
        "doc_id": ["a", "b"] * 10,
        "score": [2.0, 1.0] * 10,
    }
)
#: What rbo (its default kind, ext) scores against an empty ranking.
EMPTY = "each score as an empty ranking does (unretrieved='zero': 0)"
ADVICE = (
    "Ids that do not line up are the likely cause: give the run and reference= the same "
    "'query_id' values (same spelling, same collection)."
)
SPELT = (
    "1 query id(s) of the run match an id of reference= only when case is ignored ('Q9' "
    "against 'q9'): ids are compared exactly; give the run and reference= the same "
    "spelling, e.g. pl.col('query_id').str.to_lowercase() on each."
)
#: The run of q0 alone: rbo 0.1 (nine queries against an empty ranking).
ONE = REFERENCE.filter(pl.col("query_id") == "q0")
MOST = (
    f"the run misses most queries of reference= (it lists only 1 of the 10; column "
    f"'query_id'): the 9 it misses {EMPTY}. {ADVICE}"
)
#: Every query, q9 spelt 'Q9': rbo 0.9.
CASED = REFERENCE.with_columns(pl.col("query_id").str.replace("q9", "Q9"))
CASED_TEXT = (
    f"the run misses 1 of the 10 queries of reference= (it lists 9 of the 10; column "
    f"'query_id'): the 1 it misses {EMPTY}. {SPELT}"
)
#: Systems x and z in the reference, the run of x alone: z scores 0 on every query.
SYSTEMS_REFERENCE = pl.concat([REFERENCE.with_columns(system=pl.lit(s)) for s in "xz"])
SYSTEM_TEXT = (
    f"system 'z' misses most queries of reference= (it lists none of the 10; column "
    f"'query_id'): the 10 it misses {EMPTY}. {ADVICE}"
)

# (case, run, reference, options, the warnings, the result's rows)
CASES: list[tuple[str, pl.DataFrame, pl.DataFrame, dict[str, Any], list[str], list[Any]]] = [
    ("most", ONE, REFERENCE, {}, [MOST], [(10, 0.1)]),
    (
        "most-drop",
        ONE,
        REFERENCE,
        {"unretrieved": "drop"},
        [MOST.replace(EMPTY, "are left out (unretrieved='drop')")],
        [(1, 1.0)],
    ),
    ("spelt", CASED, REFERENCE, {}, [CASED_TEXT], [(10, 0.9)]),
    # a run of some of the reference's queries, no id spelt apart: no fault
    ("some", REFERENCE.filter(pl.col("query_id") != "q9"), REFERENCE, {}, [], [(10, 0.9)]),
    (
        "system",
        SYSTEMS_REFERENCE.filter(pl.col("system") == "x"),
        SYSTEMS_REFERENCE,
        {"systems": "system"},
        [SYSTEM_TEXT],
        [("x", 10, 1.0), ("z", 10, 0.0)],
    ),
    (
        "systems-spelt",  # one reference for every system, each with q9 spelt 'Q9'
        pl.concat([CASED.with_columns(system=pl.lit(s)) for s in "xy"]),
        REFERENCE,
        {"systems": "system"},
        [CASED_TEXT.replace("the run", f"system '{s}'", 1) for s in "xy"],
        [("x", 10, 0.9), ("y", 10, 0.9)],
    ),
]


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]


@pytest.mark.parametrize(("case", "run", "reference", "options", "texts", "rows"), CASES)
@pytest.mark.parametrize("split", [None, 3])
def test_the_references_queries_a_run_misses_are_warned_of(
    case: str,
    run: pl.DataFrame,
    reference: pl.DataFrame,
    options: dict[str, Any],
    texts: list[str],
    rows: list[Any],
    split: int | None,
    frame_kind: str,
) -> None:
    lazy = frame_kind == "LazyFrame"
    given = (run.lazy(), reference.lazy()) if lazy else (run, reference)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(given[0], ["rbo"], reference=given[1], buckets=split, **options)
        got = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert _said(caught) == texts, case
    assert got.rows() == rows, case


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_warn_of_the_references_queries_a_run_misses(
    engine: str, parts: int, request: pytest.FixtureRequest
) -> None:
    # one machine's words, from the whole run's counts (a part holds some queries)
    evaluate, frame, back = engine_io(engine, request)
    for case, run, reference, options, texts, rows in (CASES[0], CASES[2], CASES[4]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = back(
                evaluate(
                    frame(run), ["rbo"], reference=frame(reference), partitions=parts, **options
                )
            )
        assert _said(caught) == texts, case
        assert got.sort(got.columns[0]).rows() == rows, case


# --- system_agreement: integer systems beside their text ---------------------------------

RESULT = pl.DataFrame(
    {
        "system": [1, 1, 2, 2, 3, 3],
        "query_id": ["q1", "q2"] * 3,
        "ndcg@10": [0.9, 0.8, 0.5, 0.4, 0.1, 0.2],
    }
)


@pytest.mark.parametrize(
    ("b_system", "kinds"),
    [
        (pl.col("system").cast(pl.String), "integers in a= (Int64) but strings in b= (String)"),
        (
            pl.col("system").cast(pl.String) + " ",
            "integers in a= (Int64) but strings in b= (String)",
        ),
    ],
)
@pytest.mark.parametrize("swap", [False, True])
def test_system_agreement_refuses_systems_of_two_kinds(
    b_system: pl.Expr, kinds: str, swap: bool, frame_kind: str
) -> None:
    # Int64 systems 1, 2, 3 beside the strings "1", "2", "3" were matched by their text
    other = RESULT.with_columns(b_system.alias("system"))
    a, b = (other, RESULT) if swap else (RESULT, other)
    if swap:
        kinds = "strings in a= (String) but integers in b= (Int64)"
    if frame_kind == "LazyFrame":
        a, b = a.lazy(), b.lazy()  # type: ignore[assignment]
    fix = "cast one side, e.g. pl.col('system').cast(pl.String) on both"
    message = f"column 'system' holds {kinds}; {fix}"
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(a, b)
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        plot.plot_swaps(a, b)
