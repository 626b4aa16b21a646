"""Metrics beyond trec_eval: ERR, RBP and its residual, ARHR, MAR, FCP, Judged.

* hand-computed examples, written out as arithmetic, through ``evaluate`` on a
  DataFrame and a LazyFrame and through the expression API;
* the edge cases each formula text promises (empty list, no relevant document, k past
  the end of the list);
* generated runs against a plain-Python reading of each formula, in both the evaluator
  and the expression API;
* ir_measures where it has the metric: ``ERR@k`` (gdeval, needs perl), ``Judged@k``,
  and ``RBP(rel=1)`` (through cwl-eval, a test dependency).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import ir_measures
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import MetricParameterError, parse_metric

from .conftest import Evaluate
from .helpers import by_query, judged_list, property_settings
from .oracle_cases import Case, QrelsDict, RunDict, to_frames, trec_order

SETTINGS = property_settings(60)
TOL = 1e-12


def _row(frame: pl.DataFrame, query: str) -> dict[str, Any]:
    return frame.filter(pl.col("query_id") == query).row(0, named=True)


def _judged_table(rows: list[tuple[str, str, int | None, float | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={
            "query_id": pl.String,
            "doc_id": pl.String,
            "rank": pl.Int64,
            "relevance": pl.Float64,
        },
        orient="row",
    )


# ------------------------------------------------------------------------ ERR
ERR_TABLE = _judged_table(
    [
        # grades 0, 4, 2, -1, 1 at ranks 1..5; a grade-3 document was not retrieved
        ("q", "d1", 1, 0),
        ("q", "d2", 2, 4),
        ("q", "d3", 3, 2),
        ("q", "d4", 4, -1),
        ("q", "d5", 5, 1),
        ("q", "x", None, 3),
        # nothing relevant
        ("none", "d1", 1, 0),
        ("none", "d2", 2, -1),
    ]
)


def test_err_worked_example(evaluate: Evaluate) -> None:
    names = ["err", "err@2", "err@10", "ERR@5", "err(max_grade=2)", "err(max_grade=8)@3"]
    out = evaluate(ERR_TABLE, names, per_query=True)
    row = _row(out, "q")
    r2, r3, r5 = 15 / 16, 3 / 16, 1 / 16  # (2^g - 1) / 2^4 for grades 4, 2, 1
    full = r2 / 2 + (1 - r2) * r3 / 3 + (1 - r2) * (1 - r3) * r5 / 5
    assert row["err"] == pytest.approx(full, abs=TOL)
    assert row["err@2"] == pytest.approx(r2 / 2, abs=TOL)
    assert row["err@10"] == row["err"]  # k past the end of the list changes nothing
    assert row["ERR@5"] == row["err"]
    # max_grade=2: grade 4 counts as 2, so R = 3/4, 3/4, 1/4
    s2, s3, s5 = 3 / 4, 3 / 4, 1 / 4
    assert row["err(max_grade=2)"] == pytest.approx(
        s2 / 2 + (1 - s2) * s3 / 3 + (1 - s2) * (1 - s3) * s5 / 5, abs=TOL
    )
    t2, t3 = 15 / 256, 3 / 256  # (2^g - 1) / 2^8
    assert row["err(max_grade=8)@3"] == pytest.approx(t2 / 2 + (1 - t2) * t3 / 3, abs=TOL)
    assert _row(out, "none") == {"query_id": "none", **dict.fromkeys(names, 0.0)}


def test_err_fractional_grades(evaluate: Evaluate) -> None:
    table = judged_list("q", [0.5, 0.0, 2.5])
    row = evaluate(table, ["err"], per_query=True).row(0, named=True)
    r1, r3 = (2**0.5 - 1) / 16, (2**2.5 - 1) / 16
    assert row["err"] == pytest.approx(r1 / 1 + (1 - r1) * r3 / 3, abs=TOL)


# ------------------------------------------------------------------------ RBP
# Ranks 1..6 of query q: d1 (1), d2 (0), d3 (2), d4 (unjudged), d5 (0), d6 (unjudged);
# x (1) was not retrieved. Query "empty" is judged but retrieves nothing judged.
RBP_RUN = pl.DataFrame(
    {
        "query_id": ["q"] * 6 + ["empty"],
        "doc_id": ["d1", "d2", "d3", "d4", "d5", "d6", "u"],
        "rank": [1, 2, 3, 4, 5, 6, 1],
    }
)
RBP_QRELS = pl.DataFrame(
    {
        "query_id": ["q"] * 5 + ["empty"],
        "doc_id": ["d1", "d2", "d3", "d5", "x", "y"],
        "relevance": [1, 0, 2, 0, 1, 1],
    }
)


def test_rbp_worked_example(evaluate: Evaluate) -> None:
    names = [
        "rbp",
        "rbp@2",
        "rbp@100",
        "rbp(p=0.5)",
        "rbp(gain='linear')",
        "rbp(rel=2)",
        "RBP(p=0.95)",
    ]
    out = evaluate(RBP_RUN, names, qrels=RBP_QRELS, per_query=True)
    row = _row(out, "q")
    assert row["rbp"] == pytest.approx(0.2 * (0.8**0 + 0.8**2), abs=TOL)
    assert row["rbp@2"] == pytest.approx(0.2 * 0.8**0, abs=TOL)
    assert row["rbp@100"] == row["rbp"]
    assert row["rbp(p=0.5)"] == pytest.approx(0.5 * (0.5**0 + 0.5**2), abs=TOL)
    assert row["rbp(gain='linear')"] == pytest.approx(0.2 * (1 * 0.8**0 + 2 * 0.8**2), abs=TOL)
    assert row["rbp(rel=2)"] == pytest.approx(0.2 * 0.8**2, abs=TOL)
    assert row["RBP(p=0.95)"] == pytest.approx(0.05 * (1 + 0.95**2), abs=TOL)
    assert _row(out, "empty") == {"query_id": "empty", **dict.fromkeys(names, 0.0)}


def test_rbp_residual_worked_example(evaluate: Evaluate) -> None:
    names = ["rbp_residual", "rbp_residual@2", "rbp_residual@10", "rbp_residual(p=0.5)"]
    out = evaluate(RBP_RUN, names, qrels=RBP_QRELS, per_query=True)
    row = _row(out, "q")
    # Judged at ranks 1, 2, 3, 5: unknown are ranks 4 and 6 and everything past 6.
    known = 0.2 * (0.8**0 + 0.8**1 + 0.8**2 + 0.8**4)
    assert row["rbp_residual"] == pytest.approx(1 - known, abs=TOL)
    assert row["rbp_residual"] == pytest.approx(0.2 * (0.8**3 + 0.8**5) + 0.8**6, abs=TOL)
    assert row["rbp_residual@2"] == pytest.approx(0.8**2, abs=TOL)  # only the tail past k
    # k = 10 past the end: positions 7..10 are empty, so unknown like the tail
    assert row["rbp_residual@10"] == pytest.approx(row["rbp_residual"], abs=TOL)
    assert row["rbp_residual(p=0.5)"] == pytest.approx(0.5 * (0.5**3 + 0.5**5) + 0.5**6, abs=TOL)
    # nothing judged was retrieved: every position is unknown
    assert _row(out, "empty") == {"query_id": "empty", **dict.fromkeys(names, 1.0)}
    # the bound: binary RBP lies in [rbp, rbp + residual]
    bounds = evaluate(RBP_RUN, ["rbp", "rbp_residual"], qrels=RBP_QRELS, per_query=True)
    low = _row(bounds, "q")["rbp"]
    high = low + _row(bounds, "q")["rbp_residual"]
    every_unjudged_relevant = 0.2 * (0.8**0 + 0.8**2 + 0.8**3 + 0.8**5) + 0.8**6
    assert low <= every_unjudged_relevant <= high + TOL


# ------------------------------------------------------------------------ ARHR, MAR
def test_arhr_and_mar_worked_example(evaluate: Evaluate) -> None:
    # Relevant at ranks 2, 4, 5 and 7 of 8 (R = 4); a second query has no relevant one.
    table = pl.concat(
        [
            judged_list("q", [0, 1, 0, 1, 1, 0, 1, 0]),
            judged_list("none", [0, 0, -1]),
        ]
    )
    names = ["arhr", "arhr@4", "arhr@100", "mar@1", "mar@3", "mar@8", "mar@10"]
    out = evaluate(table, names, per_query=True)
    row = _row(out, "q")
    assert row["arhr"] == pytest.approx(1 / 2 + 1 / 4 + 1 / 5 + 1 / 7, abs=TOL)
    assert row["arhr@4"] == pytest.approx(1 / 2 + 1 / 4, abs=TOL)
    assert row["arhr@100"] == row["arhr"]
    recall = [0, 1 / 4, 1 / 4, 2 / 4, 3 / 4, 3 / 4, 4 / 4, 4 / 4]  # recall@1..8
    assert row["mar@1"] == 0.0
    assert row["mar@3"] == pytest.approx((0 + 1 / 4 + 1 / 4) / 3, abs=TOL)
    assert row["mar@8"] == pytest.approx(sum(recall) / 8, abs=TOL)
    assert row["mar@8"] == pytest.approx((7 + 5 + 4 + 2) / (8 * 4), abs=TOL)  # (k - r + 1)
    # past the end, recall@9 = recall@10 = 1 and the mean still divides by k
    assert row["mar@10"] == pytest.approx((sum(recall) + 1 + 1) / 10, abs=TOL)
    assert _row(out, "none") == {"query_id": "none", **dict.fromkeys(names, 0.0)}


def test_arhr_sums_every_hit_unlike_mrr(evaluate: Evaluate) -> None:
    table = judged_list("q", [1, 1, 1])
    row = evaluate(table, ["arhr", "mrr"], per_query=True).row(0, named=True)
    assert row["arhr"] == pytest.approx(1 + 1 / 2 + 1 / 3, abs=TOL)
    assert row["mrr"] == 1.0


# ------------------------------------------------------------------------ FCP
FCP_TABLE = _judged_table(
    [
        # A=1@1, B=0@2, C=2@3, D=0@4, a negative label @5 (left out), E=1 and F=2 unretrieved
        ("q", "A", 1, 1),
        ("q", "B", 2, 0),
        ("q", "C", 3, 2),
        ("q", "D", 4, 0),
        ("q", "N", 5, -1),
        ("q", "E", None, 1),
        ("q", "F", None, 2),
        # one label only: no pair
        ("same", "a", 1, 1),
        ("same", "b", None, 1),
        # nothing retrieved: every pair tied
        ("empty", "a", None, 0),
        ("empty", "b", None, 1),
        ("empty", "c", None, 2),
    ]
)


def test_fcp_worked_example(evaluate: Evaluate) -> None:
    out = evaluate(FCP_TABLE, ["fcp", "fcp@2", "fcp@100"], per_query=True)
    row = _row(out, "q")
    # 6 labelled documents, two of each label: 15 - 3 = 12 pairs with different labels.
    # Concordant: (A,B) (A,D) (C,D) (C,E); tied: (F,E), both unretrieved; 7 discordant.
    assert row["fcp"] == pytest.approx((4 + 1 / 2) / 12, abs=TOL)
    # Top 2 = A, B. Concordant: (A,B) (A,D); tied among C, D, E, F: (E,D) (C,D) (F,D)
    # (C,E) (F,E); discordant: (E,B) (C,B) (F,B) (C,A) (F,A).
    assert row["fcp@2"] == pytest.approx((2 + 5 / 2) / 12, abs=TOL)
    assert row["fcp@100"] == row["fcp"]
    assert _row(out, "same")["fcp"] == 0.0
    assert _row(out, "empty")["fcp"] == pytest.approx((0 + 3 / 2) / 3, abs=TOL)


def test_fcp_perfect_and_reversed_rankings(evaluate: Evaluate) -> None:
    table = pl.concat([judged_list("up", [3, 2, 1, 0]), judged_list("down", [0, 1, 2, 3])])
    out = evaluate(table, ["fcp"], per_query=True)
    assert _row(out, "up")["fcp"] == 1.0
    assert _row(out, "down")["fcp"] == 0.0


# ------------------------------------------------------------------------ Judged
JUDGED_RUN = pl.DataFrame(
    {
        "query_id": ["q"] * 5 + ["q2"] * 2,
        "doc_id": ["d1", "d2", "d3", "d4", "d5", "d7", "d8"],
        "rank": [1, 2, 3, 4, 5, 1, 2],
    }
)
JUDGED_QRELS = pl.DataFrame(
    {
        "query_id": ["q"] * 4 + ["q2", "unretrieved"],
        "doc_id": ["d1", "d3", "d4", "x", "z", "w"],
        "relevance": [0, 2, -1, 1, 1, 1],  # d4's -1: in the pool, not judged
    }
)


def test_judged_worked_example(evaluate: Evaluate) -> None:
    names = ["judged", "judged@1", "judged@2", "judged@3", "judged@5", "Judged@10"]
    out = evaluate(JUDGED_RUN, names, qrels=JUDGED_QRELS, per_query=True)
    assert out.row(0, named=True) == {
        "query_id": "q",
        "judged": 2 / 5,
        "judged@1": 1 / 1,
        "judged@2": 1 / 2,
        "judged@3": 2 / 3,
        "judged@5": 2 / 5,
        "Judged@10": 2 / 5,  # fewer than 10 retrieved: divided by the 5 retrieved
    }
    assert _row(out, "q2") == {"query_id": "q2", **dict.fromkeys(names, 0.0)}
    assert _row(out, "unretrieved") == {"query_id": "unretrieved", **dict.fromkeys(names, 0.0)}


# ------------------------------------------------------------------------ expression API
def test_expression_api_matches_evaluate(frame_kind: str) -> None:
    table = pl.concat(
        [
            ERR_TABLE.filter(pl.col("query_id") == "q"),
            FCP_TABLE.filter(pl.col("query_id") == "q").with_columns(query_id=pl.lit("f")),
            ERR_TABLE.filter(pl.col("query_id") == "none"),
        ]
    )
    exprs = [
        irm.err(),
        irm.err(k=2, max_grade=3),
        irm.rbp(p=0.5),
        irm.rbp(k=3, gain="linear"),
        irm.rbp_residual(),
        irm.rbp_residual(k=2, p=0.9),
        irm.arhr(),
        irm.arhr(k=3, relevance_level=2),
        irm.mar(k=4),
        irm.fcp(),
        irm.fcp(k=2),
        irm.judged(k=3),
    ]
    names = [
        "err",
        "err(max_grade=3)@2",
        "rbp(p=0.5)",
        "rbp(gain='linear')@3",
        "rbp_residual",
        "rbp_residual(p=0.9)@2",
        "arhr",
        "arhr(rel=2)@3",
        "mar@4",
        "fcp",
        "fcp@2",
        "judged@3",
    ]
    frame = table.lazy() if frame_kind == "LazyFrame" else table
    grouped = frame.group_by("query_id").agg(exprs).sort("query_id")
    got = grouped.collect() if isinstance(grouped, pl.LazyFrame) else grouped
    # an expression's relevance_level is part of its name, as evaluate names it
    assert got.columns == ["query_id", *names]
    want = irm.evaluate(table, names, per_query=True)
    assert got["query_id"].to_list() == want["query_id"].to_list()
    for column, name in zip(got.columns[1:], names, strict=True):
        assert got[column].to_list() == pytest.approx(want[name].to_list(), abs=TOL), name


def test_null_relevance_is_a_retrieved_unjudged_document() -> None:
    # In a judged table, a retrieved row without a label counts in num_ret only.
    table = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, None, 0]})
    row = table.select(
        irm.judged(), irm.rbp_residual(p=0.5), irm.rbp(p=0.5), irm.fcp(), irm.err()
    ).row(0, named=True)
    assert row["judged"] == 2 / 3
    assert row["rbp_residual(p=0.5)"] == pytest.approx(0.5 * 0.5**1 + 0.5**3, abs=TOL)
    assert row["rbp(p=0.5)"] == 0.5
    assert row["fcp"] == 1.0  # the labelled pair (1 at rank 1, 0 at rank 3) is in order
    assert row["err"] == 1 / 16


# ------------------------------------------------------------------------ names
@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ERR@10", "err@10"),
        ("err(max_grade=4)@10", "err@10"),
        ("err(max_grade=3)", "err(max_grade=3)"),
        ("RBP", "rbp"),
        ("RBP(p=0.8)", "rbp"),
        ("rbp(p=0.9)@20", "rbp(p=0.9)@20"),
        ("RBP(rel=2, p=0.5)", "rbp(p=0.5, rel=2)"),
        ("rbp(gain='linear')", "rbp(gain='linear')"),
        ("rbp_residual(p=0.95)", "rbp_residual(p=0.95)"),
        ("ARHR@10", "arhr@10"),
        ("average_reciprocal_hit_rank", "arhr"),
        ("MAR@10", "mar@10"),
        ("mean_average_recall@5", "mar@5"),
        ("FCP", "fcp"),
        ("fcp@10", "fcp@10"),
        ("Judged@10", "judged@10"),
        ("judged", "judged"),
    ],
)
def test_names_parse(text: str, canonical: str) -> None:
    request = parse_metric(text)
    assert request.name == canonical
    assert parse_metric(canonical) == request


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["mar"], "metric 'mar': mar needs a cutoff, e.g. 'mar@10'"),
        (
            ["rbp(p=1)"],
            "metric 'rbp(p=1)': p must be a number between 0 and 1 (exclusive), got 1",
        ),
        (
            ["rbp(p=0)"],
            "metric 'rbp(p=0)': p must be a number between 0 and 1 (exclusive), got 0",
        ),
        (
            ["rbp_residual(p='x')"],
            "metric \"rbp_residual(p='x')\": p must be a number between 0 and 1 (exclusive), "
            "got 'x'",
        ),
        (["err(max_grade=0)"], "metric 'err(max_grade=0)': max_grade must be a number > 0, got 0"),
        (["err(rel=2)"], "err uses graded relevance and takes no relevance level 'rel'"),
        (["fcp(rel=2)"], "fcp uses graded relevance and takes no relevance level 'rel'"),
        (["rbp(gain='exponential')"], "gain='exponential' is not allowed"),
    ],
)
def test_bad_parameters(names: list[str], message: str) -> None:
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        irm.evaluate(RBP_RUN.lazy(), names, qrels=RBP_QRELS)


def test_bad_parameters_in_expressions() -> None:
    with pytest.raises(MetricParameterError, match="p must be a number between 0 and 1"):
        irm.rbp(p=1.5)
    with pytest.raises(MetricParameterError, match="max_grade must be a number > 0"):
        irm.err(max_grade=-1)


def test_declarations() -> None:
    assert not irm.get_metric("rbp_residual").higher_is_better
    assert irm.get_metric("mar").cutoff == "required"
    assert irm.get_metric("rbp").binary
    assert not irm.get_metric("err").binary
    for name in ("err", "rbp", "rbp_residual", "arhr", "mar", "fcp", "judged"):
        metric = irm.get_metric(name)
        assert metric.formula, name
        assert callable(getattr(irm, name)), name


# ------------------------------------------------------------------------ generated cases
DOC_POOL = [f"d{i}" for i in range(1, 16)]
LABELS = [-1, 0, 0, 0, 1, 1, 2, 3, 4]


@st.composite
def runs(draw: st.DrawFn, *, ties: bool, negative: bool = True) -> tuple[RunDict, QrelsDict]:
    """Numeric query ids (gdeval needs them); each query in the run, qrels or both."""
    queries = draw(st.lists(st.sampled_from(["1", "2", "3", "10"]), min_size=1, unique=True))
    labels = LABELS if negative else [x for x in LABELS if x >= 0]
    run: RunDict = {}
    qrels: QrelsDict = {}
    for q in queries:
        side = draw(st.sampled_from(["both", "both", "both", "run", "qrels"]))
        if side != "qrels":
            docs = draw(st.lists(st.sampled_from(DOC_POOL), min_size=1, max_size=12, unique=True))
            if ties:
                scores = [
                    draw(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0])) for _ in range(len(docs))
                ]
            else:
                scores = [0.25 * i for i in draw(st.permutations(range(len(docs))))]
            run[q] = dict(zip(docs, scores, strict=True))
        if side != "run":
            docs = draw(st.lists(st.sampled_from(DOC_POOL), min_size=1, max_size=10, unique=True))
            qrels[q] = {d: draw(st.sampled_from(labels)) for d in docs}
    return run, qrels


#: A batch's case ``c`` has the query ids ``c * CASE_STEP + q`` (numeric, for gdeval).
CASE_STEP = 1000


@st.composite
def run_batches(
    draw: st.DrawFn, *, ties: bool, negative: bool = True
) -> tuple[RunDict, QrelsDict]:
    """A batch of 1 or 4 independent :func:`runs` (as ``oracle_cases.case_batches``, 3.25
    cases on average), case ``c``'s query ids offset by ``c * CASE_STEP`` ("1" -> "2001")
    so that they stay numeric: one evaluation checks them all, each query's values
    depending on its own rows only, and costs about what one case costs (building the
    plan), so the tests draw a third of the examples for as many cases."""
    size = draw(st.sampled_from([1, 4, 4, 4]))
    run: RunDict = {}
    qrels: QrelsDict = {}
    for c in range(size):
        one_run, one_qrels = draw(runs(ties=ties, negative=negative))
        run.update({str(c * CASE_STEP + int(q)): docs for q, docs in one_run.items()})
        qrels.update({str(c * CASE_STEP + int(q)): docs for q, docs in one_qrels.items()})
    return run, qrels


def _case_of(run: RunDict, qrels: QrelsDict, query: str) -> str:
    """The case of a batch (:func:`run_batches`) that holds ``query``, alone with its own
    query ids, for a failure's message."""
    c = int(query) // CASE_STEP

    def own(side: dict[str, Any]) -> dict[str, Any]:
        return {
            str(int(q) - c * CASE_STEP): v for q, v in side.items() if int(q) // CASE_STEP == c
        }

    return f"case {c}: " + repr(Case(*to_frames(own(run), own(qrels))))


def _err_ref(ranking: list[str], labels: dict[str, int], k: int | None, g_max: float) -> float:
    total, reach = 0.0, 1.0
    for r, d in enumerate(ranking[:k], start=1):
        g = min(labels.get(d, 0), g_max)
        stop = (2.0**g - 1) / 2.0**g_max if g > 0 else 0.0
        total += stop * reach / r
        reach *= 1 - stop
    return total


def _rbp_ref(ranking: list[str], labels: dict[str, int], k: int | None, p: float) -> float:
    return sum(
        (1 - p) * p ** (r - 1)
        for r, d in enumerate(ranking[:k], start=1)
        if labels.get(d, -1) >= 1
    )


def _residual_ref(ranking: list[str], labels: dict[str, int], k: int | None, p: float) -> float:
    """1 minus the weight of the judged positions (labels >= 0) in the top k."""
    known = sum(
        (1 - p) * p ** (r - 1)
        for r, d in enumerate(ranking[:k], start=1)
        if labels.get(d, -1) >= 0
    )
    return 1 - known


def _arhr_ref(ranking: list[str], labels: dict[str, int], k: int | None) -> float:
    return sum(1 / r for r, d in enumerate(ranking[:k], start=1) if labels.get(d, -1) >= 1)


def _mar_ref(ranking: list[str], labels: dict[str, int], k: int) -> float:
    relevant = {d for d, g in labels.items() if g >= 1}
    if not relevant:
        return 0.0
    return sum(len(relevant & set(ranking[:j])) / len(relevant) for j in range(1, k + 1)) / k


def _fcp_ref(ranking: list[str], labels: dict[str, int], k: int | None) -> float:
    top = ranking if k is None else ranking[:k]
    position = {d: r for r, d in enumerate(top, start=1)}
    graded = [(d, g) for d, g in labels.items() if g >= 0]
    concordant = tied = pairs = 0.0
    for x, gx in graded:
        for y, gy in graded:
            if gx <= gy:
                continue
            pairs += 1
            px, py = position.get(x, math.inf), position.get(y, math.inf)
            if px < py:
                concordant += 1
            elif px == py:
                tied += 1
    return (concordant + tied / 2) / pairs if pairs else 0.0


def _judged_ref(ranking: list[str], labels: dict[str, int], k: int | None) -> float:
    top = ranking[:k]
    return sum(labels.get(d, -1) >= 0 for d in top) / len(top) if top else 0.0


K_VALUES = [1, 3, 5, 20]


def _reference(ranking: list[str], labels: dict[str, int]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in [None, *K_VALUES]:
        at = "" if k is None else f"@{k}"
        out[f"err{at}"] = _err_ref(ranking, labels, k, 4)
        out[f"err(max_grade=2.5){at}"] = _err_ref(ranking, labels, k, 2.5)
        out[f"rbp{at}"] = _rbp_ref(ranking, labels, k, 0.8)
        out[f"rbp(p=0.5){at}"] = _rbp_ref(ranking, labels, k, 0.5)
        out[f"rbp_residual{at}"] = _residual_ref(ranking, labels, k, 0.8)
        out[f"arhr{at}"] = _arhr_ref(ranking, labels, k)
        out[f"fcp{at}"] = _fcp_ref(ranking, labels, k)
        out[f"judged{at}"] = _judged_ref(ranking, labels, k)
        if k is not None:
            out[f"mar{at}"] = _mar_ref(ranking, labels, k)
    return out


REFERENCE_NAMES = list(_reference([], {}))


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(SETTINGS, max_examples=20)  # 20 batches: 71 cases (60 single before)
@given(case=run_batches(ties=True))
def test_generated_runs_match_the_formulas(case: tuple[RunDict, QrelsDict]) -> None:
    run, qrels = case
    run_frame, qrels_frame = to_frames(run, qrels)
    out = irm.evaluate(run_frame, REFERENCE_NAMES, qrels=qrels_frame, per_query=True)
    got = by_query(out)
    assert set(got) == set(qrels)
    for q, labels in qrels.items():
        want = _reference(trec_order(run.get(q, {})), labels)
        for name in REFERENCE_NAMES:
            assert got[q][name] == pytest.approx(want[name], abs=1e-9), (
                q,
                name,
                _case_of(run, qrels, q),
            )


@settings(SETTINGS, max_examples=20)  # 20 batches: 77 cases (60 single before)
@given(case=run_batches(ties=True))
def test_generated_runs_expression_api(case: tuple[RunDict, QrelsDict]) -> None:
    """The same values from a judged table and ``group_by(...).agg(...)`` (TableScope)."""
    run, qrels = case
    run_frame, qrels_frame = to_frames(run, qrels)
    ranked = run_frame.with_columns(irm.rank_by_score().over("query_id").alias("rank")).select(
        "query_id", "doc_id", "rank"
    )
    # retrieved rows carry their label (null: unjudged); judged unretrieved rows a null rank
    table = ranked.join(qrels_frame, on=["query_id", "doc_id"], how="full", coalesce=True)
    table = table.filter(pl.col("query_id").is_in(list(qrels)))
    exprs: list[pl.Expr] = []
    for k in [None, 3]:
        exprs += [
            irm.err(k),
            irm.rbp(k, p=0.5),
            irm.rbp_residual(k),
            irm.arhr(k),
            irm.fcp(k),
            irm.judged(k),
        ]
    exprs.append(irm.mar(3))
    out = table.group_by("query_id").agg(exprs)
    for row in out.iter_rows(named=True):
        q = row.pop("query_id")
        want = _reference(trec_order(run.get(q, {})), qrels[q])
        for name, value in row.items():
            assert value == pytest.approx(want[name], abs=1e-9), (
                q,
                name,
                _case_of(run, qrels, q),
            )


# ------------------------------------------------------------------------ ir_measures


def _ir_measures_values(
    measures: list[Any], qrels: QrelsDict, run: RunDict
) -> dict[tuple[str, str], float]:
    return {
        (m.query_id, str(m.measure)): float(m.value)
        for m in ir_measures.iter_calc(measures, qrels, run)
    }


def _compare(
    run: RunDict,
    qrels: QrelsDict,
    pairs: list[tuple[str, Any]],
    tol: float,
    keep: Callable[[str], bool] = lambda q: True,
) -> int:
    """Compare our per-query values with ir_measures'; returns how many were compared."""
    run_frame, qrels_frame = to_frames(run, qrels)
    ours_frame = irm.evaluate(run_frame, [n for n, _ in pairs], qrels=qrels_frame, per_query=True)
    ours = by_query(ours_frame)
    theirs = _ir_measures_values([m for _, m in pairs], qrels, run)
    compared = 0
    for (q, measure), value in theirs.items():
        if not keep(q):
            continue
        name = next(n for n, m in pairs if str(m) == measure)
        assert ours[q][name] == pytest.approx(value, abs=tol), (
            q,
            name,
            _case_of(run, qrels, q),
        )
        compared += 1
    return compared


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(SETTINGS, max_examples=9)  # 9 batches: 27 cases (25 single before)
@given(case=run_batches(ties=True))
def test_err_matches_ir_measures(case: tuple[RunDict, QrelsDict]) -> None:
    run, qrels = case
    measures = ir_measures.measures
    pairs = [(f"ERR@{k}", measures.ERR @ k) for k in (1, 3, 5, 20)]
    # gdeval prints 5 decimals and evaluates queries with a positive label only
    _compare(run, qrels, pairs, tol=5e-6 + 1e-12)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(SETTINGS, max_examples=17)  # 17 batches: 44 cases (40 single before)
@given(case=run_batches(ties=False, negative=False))
def test_judged_matches_ir_measures(case: tuple[RunDict, QrelsDict]) -> None:
    run, qrels = case
    measures = ir_measures.measures
    pairs = [(f"Judged@{k}", measures.Judged @ k) for k in (1, 3, 5, 20)]
    pairs.append(("judged", measures.Judged))
    _compare(run, qrels, pairs, tol=1e-12)


def test_judged_differs_from_ir_measures_on_negative_labels() -> None:
    run = {"1": {"a": 2.0, "b": 1.0}}
    qrels = {"1": {"a": -1, "b": 1}}
    theirs = _ir_measures_values([ir_measures.measures.Judged @ 2], qrels, run)
    assert theirs[("1", "Judged@2")] == 1.0  # ir_measures: any qrels entry is judged
    run_frame, qrels_frame = to_frames(run, qrels)
    ours = irm.evaluate(run_frame, ["judged@2"], qrels=qrels_frame)
    assert ours["judged@2"].item() == 1 / 2  # here: a negative label is not a judgment


def test_rbp_matches_ir_measures_cwl() -> None:
    measures = ir_measures.measures
    checked = 0
    for seed in range(20):
        run, qrels = _seeded_case(seed)
        pairs = [
            ("rbp", measures.RBP(rel=1)),
            ("rbp(p=0.5)", measures.RBP(rel=1, p=0.5)),
            ("rbp(p=0.95, rel=2)", measures.RBP(rel=2, p=0.95)),
        ]
        checked += _compare(run, qrels, pairs, tol=1e-9, keep=lambda q, r=run: q in r)
    assert checked > 0


def _seeded_case(seed: int) -> tuple[RunDict, QrelsDict]:
    """A small deterministic tie-free case for the slow cwl comparison."""
    import random

    rng = random.Random(seed)
    run: RunDict = {}
    qrels: QrelsDict = {}
    for q in ("1", "2", "3"):
        docs = rng.sample(DOC_POOL, rng.randint(1, 12))
        run[q] = {d: float(len(docs) - i) for i, d in enumerate(docs)}
        judged = rng.sample(DOC_POOL, rng.randint(1, 10))
        qrels[q] = {d: rng.choice([0, 0, 1, 1, 2, 3]) for d in judged}
    return run, qrels
