"""Rank similarity between a run and a reference run (``irm.evaluate(..., reference=)``).

Exactness: every row of Corsi & Urbano's expected-values file (``rbo/test.csv`` of
``julian-urbano/sigir2024-rbo``, in ``tests/data/agreement/``: 10,000 pairs of rankings
with ties, each with its ``p`` and the 12 values ext/min/max/res × w/a/b) through the
plan, and a sample of rows through the door; scipy's ``kendalltau`` directly;
repro_eval's and trectools' values from ``tests/data/agreement/peers.json`` (made by
``tests/data/agreement/make_peers.py`` in a side environment). Properties (Hypothesis):
the RBO of a ranking with itself is 1, ``min <= ext <= max``, ``res = max - min`` and
symmetry.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

import polars_irmetrics as irm
from polars_irmetrics.agreement.rbo import BA, BB, NA, NB, TA, TB, RboSpec, rbo_values
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)

DATA = Path(__file__).parent / "data" / "agreement"
KINDS = ("ext", "min", "max", "res")
TIES = ("w", "a", "b")


def _groups(text: str) -> list[list[str]]:
    """The reference's ``from_string``: ``"a (b c) d"`` -> ``[[a], [b, c], [d]]``."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for token in text.split(" "):
        if token.startswith("("):
            current = [token[1:]]
        elif token.endswith(")"):
            assert current is not None
            current.append(token[:-1])
            groups.append(current)
            current = None
        elif current is not None:
            current.append(token)
        else:
            groups.append([token])
    return groups


def _scored(query: int | str, text: str) -> list[tuple[Any, str, float]]:
    """A ranking as run rows: one score per tie group, descending."""
    return [(query, doc, float(-i)) for i, group in enumerate(_groups(text)) for doc in group]


def _positions(query: int, text: str) -> list[tuple[int, str, int, int]]:
    rows, position = [], 0
    for group in _groups(text):
        rows += [(query, doc, position, position + len(group) - 1) for doc in group]
        position += len(group)
    return rows


@pytest.fixture(scope="module")
def expected() -> pl.DataFrame:
    return pl.read_csv(DATA / "sigir2024_rbo_test.csv.gz")


def test_every_row_of_the_reference_file(expected: pl.DataFrame) -> None:
    a, b, queries = [], [], []
    for i, row in enumerate(expected.iter_rows(named=True)):
        x, y = _positions(i, row["x"]), _positions(i, row["y"])  # each parsed once
        a += x
        b += y
        queries.append((i, len(x), len(y), row["p"]))
    run = pl.LazyFrame(a, schema=["q", "doc", TA, BA], orient="row")
    ref = pl.LazyFrame(b, schema=["q", "doc", TB, BB], orient="row")
    items = run.join(ref, on=["q", "doc"], how="full", coalesce=True).drop("doc")
    per_query = pl.LazyFrame(queries, schema=["q", NA, NB, "p"], orient="row")
    specs = [RboSpec(f"{t}.{k}", pl.col("p"), k, t) for t in TIES for k in KINDS]
    got = rbo_values(items, per_query, ["q"], specs, carry=["p"]).collect().sort("q")
    assert got.height == expected.height == 10_000
    for spec in specs:
        diff = (got[spec.label] - expected[spec.label]).abs().max()
        assert isinstance(diff, float)
        assert diff < 1e-9, spec.label


@pytest.mark.parametrize("row", [0, 1, 2, 4, 6, 16, 18, 9999])
def test_reference_rows_through_the_door(expected: pl.DataFrame, evaluate: Any, row: int) -> None:
    case = expected.row(row, named=True)
    schema = ["query_id", "doc_id", "score"]
    run = pl.DataFrame(_scored("q", case["x"]), schema=schema, orient="row")
    ref = pl.DataFrame(_scored("q", case["y"]), schema=schema, orient="row")
    names = {
        f"rbo(p={case['p']!r}, kind='{k}', ties='{t}')": f"{t}.{k}" for t in TIES for k in KINDS
    }
    got = evaluate(run, list(names), reference=ref, per_query=True)
    for name, column in names.items():
        assert got[name][0] == pytest.approx(case[column], abs=1e-9), name


def test_default_rbo_is_ext_with_ties_a(expected: pl.DataFrame) -> None:
    case = expected.row(3, named=True)
    schema = ["query_id", "doc_id", "score"]
    run = pl.DataFrame(_scored("q", case["x"]), schema=schema, orient="row")
    ref = pl.DataFrame(_scored("q", case["y"]), schema=schema, orient="row")
    got = irm.evaluate(run, [f"rbo(p={case['p']!r})"], reference=ref, per_query=True)
    assert got.item(0, 1) == pytest.approx(case["a.ext"], abs=1e-9)


# worked examples ----------------------------------------------------------------------

REF = pl.DataFrame(
    {"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]}
)
RUN = pl.DataFrame(
    {"query_id": ["q"] * 4, "doc_id": ["b", "a", "x", "c"], "score": [4.0, 3.0, 2.0, 1.0]}
)


@pytest.mark.parametrize(
    ("metric", "value"),
    [
        # top 3: {b, a, x} and {a, b, c}: 2 shared of 4 in either
        ("jaccard@3", 2 / 4),
        ("overlap@3", 2 / 3),
        # whole rankings: {a, b, c} shared of {a, b, c, d, x}
        ("jaccard", 3 / 5),
        ("overlap@10", 3 / 10),
        # shared a, b, c: run order b a c, reference a b c: one discordant pair of three
        ("kendall_tau", (2 - 1) / 3),
        # run order b, a, c against truth a, b, c: C(2) = 0 (b above a, wrong),
        # C(3) = 2 (b and a above c, right): 2/2 (0/1 + 2/2) - 1 = 0
        ("tau_ap", 2 / 2 * (0 / 1 + 2 / 2) - 1),
        # depths 1..3 with p = 0.5: overlaps 0/1, 2/2, 2/3; weights 1, 0.5, 0.25
        ("rbo_repro_eval(p=0.5)@3", (0 + 0.5 * 1 + 0.25 * 2 / 3) / 1.75),
        # no ties: min = (1-p)/p (sum_d A_d p^d + X_l (ln 1/(1-p) - sum_d p^d / d))
        (
            "rbo(p=0.5, kind='min')",
            (0.5 / 0.5)
            * (
                0 * 0.5
                + 1 * 0.25
                + (2 / 3) * 0.125
                + (3 / 4) * 0.0625
                + 3 * (math.log(2) - (0.5 + 0.25 / 2 + 0.125 / 3 + 0.0625 / 4))
            ),
        ),
    ],
)
def test_worked_examples(evaluate: Any, metric: str, value: float) -> None:
    got = evaluate(RUN, [metric], reference=REF, per_query=True)
    assert got[metric][0] == pytest.approx(value, abs=1e-12)


def test_ktu_is_repro_evals_union_positions() -> None:
    # union sorted: a b c d x -> run b a x c = 1 0 4 2, reference a b c d = 0 1 2 3
    got = irm.evaluate(RUN, ["ktu"], reference=REF, per_query=True)
    want = kendalltau([1, 0, 4, 2], [0, 1, 2, 3]).statistic
    assert got["ktu"][0] == pytest.approx(want, abs=1e-12)


def test_ties_rbo_of_a_tied_ranking_with_itself() -> None:
    run = pl.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "score": [2.0, 1.0, 1.0, 0.0]}
    )
    names = [f"rbo(kind='ext', ties='{t}')" for t in TIES]
    got = irm.evaluate(run, names, reference=run, per_query=True).row(0)[1:]
    # w and b give 1 (equal ranks; corrected), a is the expected RBO over tie breaks (< 1)
    assert got[0] == pytest.approx(1.0, abs=1e-12)
    assert got[2] == pytest.approx(1.0, abs=1e-12)
    assert got[1] < 1.0


def test_kendall_tau_counts_equal_scores_as_ties() -> None:
    ref = pl.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": list("abcd"), "score": [4.0, 3.0, 2.0, 1.0]}
    )
    run = pl.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": list("abcd"), "score": [2.0, 2.0, 1.0, 0.0]}
    )
    got = irm.evaluate(run, ["kendall_tau"], reference=ref, per_query=True)
    assert got["kendall_tau"][0] == pytest.approx(
        kendalltau([2, 2, 1, 0], [4, 3, 2, 1]).statistic, abs=1e-12
    )


def test_undefined_tau_is_null_and_left_out_of_the_mean() -> None:
    ref = pl.DataFrame(
        {"query_id": ["q", "r", "r"], "doc_id": ["a", "a", "b"], "score": [1.0, 2.0, 1.0]}
    )
    run = pl.DataFrame(
        {"query_id": ["q", "r", "r"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 1.0]}
    )
    per_query = irm.evaluate(run, ["kendall_tau", "tau_ap"], reference=ref, per_query=True)
    assert per_query["kendall_tau"].to_list() == [None, -1.0]
    assert per_query["tau_ap"].to_list() == [None, -1.0]
    means = irm.evaluate(run, ["kendall_tau"], reference=ref)
    assert means.row(0) == (2, -1.0)


def test_systems_and_by_against_one_reference(evaluate: Any) -> None:
    ref = pl.DataFrame(
        {"query_id": ["q", "q", "r"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
    )
    run = pl.DataFrame(
        {
            "system": ["s1", "s1", "s1", "s2", "s2"],
            "query_id": ["q", "q", "r", "q", "q"],
            "doc_id": ["a", "b", "a", "b", "c"],
            "score": [2.0, 1.0, 1.0, 2.0, 1.0],
        }
    )
    got = evaluate(run, ["jaccard"], reference=ref, systems="system", per_query=True)
    # s2 did not retrieve r: unretrieved='zero' scores it 0
    assert got.rows() == [("s1", "q", 1.0), ("s1", "r", 1.0), ("s2", "q", 1 / 3), ("s2", "r", 0.0)]
    means = evaluate(run, ["jaccard"], reference=ref, systems="system")
    assert means.rows() == [("s1", 2, 1.0), ("s2", 2, (1 / 3) / 2)]
    dropped = evaluate(run, ["jaccard"], reference=ref, systems="system", unretrieved="drop")
    assert dropped.rows() == [("s1", 2, 1.0), ("s2", 1, 1 / 3)]


def test_query_sets_follow_the_policies() -> None:
    ref = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    run = pl.DataFrame({"query_id": ["q", "z"], "doc_id": ["a", "a"], "score": [1.0, 1.0]})
    assert irm.evaluate(run, ["jaccard"], reference=ref).row(0) == (1, 1.0)
    assert irm.evaluate(run, ["jaccard"], reference=ref, unjudged="zero").row(0) == (2, 0.5)
    with pytest.raises(
        QuerySetError,
        match=re.escape("query 'z' is in the run but not the reference and unjudged='error'"),
    ):
        irm.evaluate(run, ["jaccard"], reference=ref, unjudged="error")
    with pytest.raises(
        QuerySetError,
        match=re.escape("query 'z' is in the reference but not the run and unretrieved='error'"),
    ):
        irm.evaluate(ref, ["jaccard"], reference=run, unretrieved="error")


# refusals ------------------------------------------------------------------------------


def _frame(**columns: Any) -> pl.DataFrame:
    return pl.DataFrame(columns)


@pytest.mark.parametrize(
    ("run", "ref", "error", "message"),
    [
        (
            _frame(query_id=["q", "q"], doc_id=["a", "a"], score=[2.0, 1.0]),
            _frame(query_id=["q"], doc_id=["a"], score=[1.0]),
            DuplicateError,
            "column 'doc_id' of the run: query 'q' has 1 repeated listing(s)",
        ),
        (
            _frame(query_id=["q"], doc_id=["a"], score=[1.0]),
            _frame(query_id=["q", "q"], doc_id=["a", None], score=[2.0, 1.0]),
            InvalidValueError,
            "column 'doc_id' of the reference (reference=) has 1 null value(s) in query 'q'",
        ),
        (
            _frame(query_id=["q", None], doc_id=["a", "b"], score=[1.0, 1.0]),
            _frame(query_id=["q"], doc_id=["a"], score=[1.0]),
            InvalidValueError,
            "column 'query_id' of the run has null values",
        ),
        (
            _frame(query_id=["q"], doc_id=["a"], score=[float("nan")]),
            _frame(query_id=["q"], doc_id=["a"], score=[1.0]),
            InvalidValueError,
            "column 'score' of the run has 1 NaN value(s) in query 'q'",
        ),
        (
            _frame(query_id=["q", "q"], doc_id=["a", "b"], rank=[1, 1]),
            _frame(query_id=["q"], doc_id=["a"], score=[1.0]),
            DuplicateError,
            "column 'rank' of the run: query 'q' has 1 duplicate rank(s)",
        ),
        (
            _frame(query_id=["q"], doc_id=[1], score=[1.0]),
            _frame(query_id=["q"], doc_id=["1"], score=[1.0]),
            ColumnTypeError,
            "column 'doc_id' holds integers in the run (Int64) but strings in the reference",
        ),
    ],
)
def test_bad_inputs_are_refused(
    run: pl.DataFrame, ref: pl.DataFrame, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        irm.evaluate(run, ["rbo", "jaccard@5"], reference=ref)
    with pytest.raises(error, match=re.escape(message)):  # the same check for every metric
        irm.evaluate(run.lazy(), ["kendall_tau"], reference=ref).collect()


def test_an_order_chosen_names_the_column_it_reads() -> None:
    # order='score' with a reference ranked by rank alone: the message named no order=
    run = _frame(query_id=["q", "q"], doc_id=["a", "b"], rank=[1, 2], score=[2.0, 1.0])
    ref = run.drop("score")
    message = (
        "column 'score' not found in the reference (its columns: 'query_id', 'doc_id', "
        "'rank'); name the columns with query_id=, doc_id=, rank=, score= and by= or "
        "systems=; order='score' reads column 'score' of the run and the reference: name it "
        "with score=, or choose order="
    )
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["rbo"], reference=ref, order="score")
    assert irm.evaluate(run, ["rbo"], reference=ref).row(0) == (1, 1.0)


def test_reference_without_a_metric_and_a_metric_without_reference() -> None:
    with pytest.raises(
        MetricParameterError, match=re.escape("metric 'rbo' reads a reference run")
    ):
        irm.evaluate(RUN, ["rbo"])
    with pytest.raises(
        MetricParameterError, match=re.escape("no metric asked for reads it: drop reference=")
    ):
        irm.evaluate(RUN, ["ndcg"], qrels=REF.rename({"score": "relevance"}), reference=REF)
    with pytest.raises(
        MetricParameterError, match=re.escape("p must be a number strictly between 0 and 1")
    ):
        irm.evaluate(RUN, ["rbo(p=1)"], reference=REF)
    with pytest.raises(
        InvalidValueError,
        match=re.escape("depth=3 is not read by metric 'rbo': only the judgment-group"),
    ):
        irm.evaluate(RUN, ["rbo"], reference=REF, depth=3)
    with pytest.raises(
        InvalidValueError, match=re.escape("qrels= is not read by the rank-similarity metrics")
    ):
        irm.evaluate(RUN, ["rbo"], reference=REF, qrels=REF.rename({"score": "relevance"}))


# peers: scipy, repro_eval, trectools ---------------------------------------------------

rankings = st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=8, unique=True)
scores = st.lists(st.integers(0, 3), min_size=8, max_size=8)


def _run(docs: list[str], values: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": ["q"] * len(docs),
            "doc_id": docs,
            "score": [float(v) for v in values[: len(docs)]],
        }
    )


@settings(max_examples=20, deadline=None)
@given(rankings, scores, rankings, scores)
def test_kendall_tau_is_scipys_over_shared_documents(
    a: list[str], sa: list[int], b: list[str], sb: list[int]
) -> None:
    run, ref = _run(a, sa), _run(b, sb)
    got = irm.evaluate(run, ["kendall_tau"], reference=ref, per_query=True)["kendall_tau"][0]
    shared = [d for d in a if d in b]
    x = [sa[a.index(d)] for d in shared]
    y = [sb[b.index(d)] for d in shared]
    want = kendalltau(x, y).statistic if len(shared) > 1 else math.nan
    if math.isnan(want):
        assert got is None
    else:
        assert got == pytest.approx(want, abs=1e-12)


@settings(max_examples=5, deadline=None)  # about 0.6 s an example
@given(rankings, scores, rankings, scores, st.sampled_from([0.5, 0.8, 0.9, 0.95]))
def test_rbo_properties(
    a: list[str], sa: list[int], b: list[str], sb: list[int], p: float
) -> None:
    run, ref = _run(a, sa), _run(b, sb)
    names = [f"rbo(p={p}, kind='{k}', ties='{t}')" for t in TIES for k in KINDS]
    got = irm.evaluate(run, names, reference=ref, per_query=True).row(0, named=True)
    swapped = irm.evaluate(ref, names, reference=run, per_query=True).row(0, named=True)
    itself = irm.evaluate(run, names, reference=run, per_query=True).row(0, named=True)
    for t in TIES:
        ext, low, high, res = (got[f"rbo(p={p}, kind='{k}', ties='{t}')"] for k in KINDS)
        assert low - 1e-12 <= ext <= high + 1e-12
        assert res == pytest.approx(high - low, abs=1e-12)
        for k in KINDS:
            name = f"rbo(p={p}, kind='{k}', ties='{t}')"
            assert swapped[name] == pytest.approx(got[name], abs=1e-12)  # symmetric
        if t != "a":  # rbo_a of a tied ranking with itself is its expectation over tie breaks
            for k in ("ext", "max"):
                assert itself[f"rbo(p={p}, kind='{k}', ties='{t}')"] == pytest.approx(1.0)
    # without ties every treatment gives 1 for ext and max; min (no overlap assumed past
    # the end) is below 1 and res = 1 - min
    untied = _run(a, list(range(len(a))))
    same = irm.evaluate(untied, names, reference=untied, per_query=True).row(0, named=True)
    for t in TIES:
        ext, low, high, res = (same[f"rbo(p={p}, kind='{k}', ties='{t}')"] for k in KINDS)
        assert ext == pytest.approx(1.0, abs=1e-12)
        assert high == pytest.approx(1.0, abs=1e-12)
        assert res == pytest.approx(1.0 - low, abs=1e-12)


@pytest.fixture(scope="module")
def peers() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / "peers.json").read_text())
    return loaded


def _rows(rows: list[list[Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")


def test_rbo_repro_eval_is_repro_evals(peers: dict[str, Any], evaluate: Any) -> None:
    run, ref = _rows(peers["run"]), _rows(peers["reference"])
    names = list(peers["rbo_repro_eval"])
    got = evaluate(run, names, reference=ref, per_query=True)
    for name in names:
        want = peers["rbo_repro_eval"][name]
        values = dict(zip(got["query_id"], got[name], strict=True))
        assert values.keys() == want.keys()
        for query, value in want.items():
            assert values[query] == pytest.approx(value, abs=1e-12), (name, query)


def test_ktu_is_repro_evals(peers: dict[str, Any], evaluate: Any) -> None:
    run, ref = _rows(peers["equal_run"]), _rows(peers["equal_reference"])
    names = list(peers["ktu"])
    got = evaluate(run, names, reference=ref, per_query=True)
    for name in names:
        values = dict(zip(got["query_id"], got[name], strict=True))
        for query, value in peers["ktu"][name].items():
            assert values[query] == pytest.approx(value, abs=1e-12), (name, query)


def test_tau_ap_is_trectools(peers: dict[str, Any]) -> None:
    rows_run, rows_ref, want = [], [], {}
    for query, case in peers["tau_ap"].items():
        n = len(case["run"])
        rows_run += [[query, doc, float(n - i)] for i, doc in enumerate(case["run"])]
        rows_ref += [[query, doc, float(n - i)] for i, doc in enumerate(case["reference"])]
        want[query] = case["tau_ap"]
    got = irm.evaluate(_rows(rows_run), ["tau_ap"], reference=_rows(rows_ref), per_query=True)
    values = dict(zip(got["query_id"], got["tau_ap"], strict=True))
    for query, value in want.items():
        assert values[query] == pytest.approx(value, abs=1e-12), query


#: One random ranking of the untied-path test: 1 to 10 distinct documents.
_UNTIED = st.lists(st.sampled_from("abcdefghijkl"), min_size=1, max_size=10, unique=True)


# 4 examples of 5 queries each: the 20 random (run, reference) pairs the test drew as 20
# one-query examples, in a quarter of the plans (each plan collects in about 0.1 s); a
# query's values are its own (test_a_querys_rbo_does_not_depend_on_the_other_queries)
@settings(max_examples=4, deadline=None)
@given(
    st.lists(st.tuples(_UNTIED, _UNTIED), min_size=5, max_size=5),
    st.sampled_from([0.5, 0.9, 0.98]),
)
def test_untied_path_equals_the_per_depth_plan(
    pairs: list[tuple[list[str], list[str]]], p: float
) -> None:
    # queries without ties skip the per-depth grid when p is a number: the same values
    # (each pair (a, b) of rankings one query q)
    ids = [q for q, (a, _) in enumerate(pairs) for _ in a]
    run = pl.LazyFrame(
        {
            "q": ids,
            "doc": [doc for a, _ in pairs for doc in a],
            TA: [i for a, _ in pairs for i in range(len(a))],
            BA: [i for a, _ in pairs for i in range(len(a))],
        }
    )
    ref = pl.LazyFrame(
        {
            "q": [q for q, (_, b) in enumerate(pairs) for _ in b],
            "doc": [doc for _, b in pairs for doc in b],
            TB: [i for _, b in pairs for i in range(len(b))],
            BB: [i for _, b in pairs for i in range(len(b))],
        }
    )
    items = run.join(ref, on=["q", "doc"], how="full", coalesce=True).drop("doc")
    queries = pl.LazyFrame(
        {
            "q": range(len(pairs)),
            NA: [len(a) for a, _ in pairs],
            NB: [len(b) for _, b in pairs],
        }
    )
    fast = [RboSpec(f"{k}.{t}", pl.lit(p), k, t, p) for t in TIES for k in KINDS]
    grid = [RboSpec(f"{k}.{t}", pl.lit(p), k, t) for t in TIES for k in KINDS]
    got = rbo_values(items, queries, ["q"], fast).sort("q").collect()
    want = rbo_values(items, queries, ["q"], grid).sort("q").collect()
    assert got["q"].to_list() == want["q"].to_list() == list(range(len(pairs)))
    for spec in fast:
        for q, (value, expected) in enumerate(zip(got[spec.label], want[spec.label], strict=True)):
            assert value == pytest.approx(expected, abs=1e-12), (spec.label, pairs[q])


def test_a_querys_rbo_does_not_depend_on_the_other_queries() -> None:
    # each query's value, the same bits whether the plan holds it alone, with some or
    # with every other query (before: polars' scalar paths of pow and of a division by a
    # constant, taken or not by the number of groups, moved the last bit; a part of a
    # Spark or Dask run holds some of the queries)
    run, reference = runs_with_ties(3)
    metrics = [
        "rbo",
        "rbo(p=0.8)@10",
        "rbo(ties='a')",
        "rbo(ties='b', kind='ext')",
        "rbo(kind='min')",
        "rbo(kind='max', ties='a')",
        "rbo(kind='res')",
    ]
    whole = irm.evaluate(run, metrics, reference=reference, per_query=True)
    queries = whole["query_id"].to_list()
    for chosen in ([queries[21]], queries[::3], queries[1::2]):
        mine = pl.col("query_id").is_in(chosen)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CoverageWarning)
            part = irm.evaluate(
                run.filter(mine), metrics, reference=reference.filter(mine), per_query=True
            )
        assert part.equals(whole.filter(mine)), chosen


def runs_with_ties(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run and a reference over 40 queries (two segments): rankings of up to 12 of 30
    documents, tied scores in the run, 4 queries only in the run, 3 only in the
    reference."""
    rng = np.random.default_rng(seed)

    def ranking(queries: range, tied: bool) -> pl.DataFrame:
        rows = []
        for q in queries:
            docs = rng.choice(30, size=int(rng.integers(1, 13)), replace=False)
            for i, d in enumerate(docs):
                score = float(len(docs) - i) // (2 if tied else 1)
                rows.append((f"q{q:02d}", f"d{d}", score, f"s{q % 2}"))
        return pl.DataFrame(rows, schema=["query_id", "doc_id", "score", "segment"], orient="row")

    return ranking(range(0, 40), True), ranking(range(4, 43), False)
