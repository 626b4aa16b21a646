"""Round 16, shapes and unread options: every shape of input gives the exact value or a
refusal by name (never a polars error), and an option no requested metric reads is refused."""

from __future__ import annotations

import importlib
import math
import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError, MetricParameterError
from polars_irmetrics.fusion import methods, optimize

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2", "q3"],
        "doc_id": ["a", "b", "d", "a", "c", "b"],
        "score": [2.0, 1.0, 0.5, 3.0, 1.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q3"],
        "doc_id": ["a", "b", "c", "b"],
        "relevance": [1, 2, 1, 0],
    }
)
REFERENCE = RUN.with_columns(score=-pl.col("score"))

# A by=/systems= key or an id column named like one of the plans' working columns met
# it inside the plan: rbo's '__s' raised polars' DuplicateError, '__tied' and the ranking
# metrics' '__irm_listed' a ColumnNotFoundError, '__D' an InvalidOperationError.
WORKING = [
    pytest.param("by", "__s", ["rbo"], {"reference": REFERENCE}, id="by-rbo-__s"),
    pytest.param("systems", "__tied", ["kendall_tau@3"], {"reference": REFERENCE}, id="sys-tau"),
    pytest.param("by", "__D", ["rbo"], {"reference": REFERENCE}, id="by-rbo-__D"),
    pytest.param("by", "__irm_listed", ["ndcg@2"], {"qrels": QRELS}, id="by-ndcg-listed"),
    pytest.param("systems", "__irm_judged", ["P@1"], {"qrels": QRELS}, id="sys-P-judged"),
    pytest.param("query_id", "__i", ["rbo"], {"reference": REFERENCE}, id="qid-rbo-__i"),
    pytest.param("query_id", "__irm_listed", ["map"], {"qrels": QRELS}, id="qid-map"),
    pytest.param("doc_id", "__x", ["ndcg@2"], {"qrels": QRELS}, id="did-ndcg"),
]


@pytest.mark.parametrize(("option", "name", "metrics", "tables"), WORKING)
def test_a_name_of_the_working_prefix_is_refused(
    frame_kind: str, option: str, name: str, metrics: list[str], tables: dict[str, pl.DataFrame]
) -> None:
    if option in ("query_id", "doc_id"):
        table = RUN.rename({option: name})
        tables = {k: t.rename({option: name}) for k, t in tables.items()}
        shown = repr(name)
    else:
        table = RUN.with_columns(pl.lit("x").alias(name))
        shown = repr([name])
    fixed = name.lstrip("_")
    message = (
        f"{option}={shown} names {name!r}, and a name that begins with '__' is kept for the "
        "library's working columns (a plan could hold one of that name beside it); rename the "
        f"column first, e.g. run.rename({{{name!r}: {fixed!r}}}), and pass {option}={fixed!r}"
    )
    frame = table.lazy() if frame_kind == "LazyFrame" else table
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(frame, metrics, **{option: name}, **tables)  # type: ignore[arg-type]


def test_the_renamed_key_gives_the_values() -> None:
    # the fix the message names works: 'x' is every query's key, so the one group's
    # values are the call's without by= (q1..q3 evaluated against the reference)
    plain = irm.evaluate(RUN, ["rbo"], reference=REFERENCE)
    keyed = irm.evaluate(RUN.with_columns(s=pl.lit("x")), ["rbo"], reference=REFERENCE, by="s")
    assert keyed.drop("s").equals(plain)


def test_the_library_keys_are_its_own_doors_keys() -> None:
    # the doors that evaluate under a key of the prefix: never refused (the package
    # exports the function reproducibility under the module's name)
    from polars_irmetrics.ground.options import LIBRARY_KEYS

    repro = importlib.import_module("polars_irmetrics.comparison.reproducibility")
    assert {repro._RUN, methods.RUN, optimize.GRID} == LIBRARY_KEYS


def test_queries_without_by_is_refused_by_name(frame_kind: str) -> None:
    # queries= holds the by= keys of each query; without by= it read nothing, and the
    # message said "queries= has none of the by= keys []"
    queries = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "day": ["mon", "mon", "tue"]})
    table = RUN.lazy() if frame_kind == "LazyFrame" else RUN
    message = (
        "queries= holds the by= keys of each query (day, market, segment...), and no by= was "
        "given, so it would change nothing: pass by= with its key columns (its columns: "
        "'query_id', 'day'), or drop queries="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, ["ndcg@2"], qrels=QRELS, queries=queries)


# A value that reads the cutoff @k, in a request without one, computed what the default
# does and was accepted: recall(denominator='capped') divided by min(k, R) with no k,
# i.e. by R, and P(adaptive_k=True) by min(k, n) with no k, i.e. by n (set_P).
NEEDS_CUTOFF = [
    ("recall(denominator='capped')", "denominator='capped'", "denominator='relevant'", "recall"),
    ("map(denominator='capped')", "denominator='capped'", "denominator='relevant'", "map"),
    (
        "rprec(denominator='capped')",
        "denominator='capped'",
        "denominator='relevant'",
        "r_precision",
    ),
    ("P(adaptive_k=True)", "adaptive_k=True", "adaptive_k=False", "precision"),
    ("setp(adaptive_k=True)@5", "adaptive_k=True", "adaptive_k=False", "precision"),
]


@pytest.mark.parametrize(("name", "given", "default", "metric"), NEEDS_CUTOFF)
def test_a_parameter_that_reads_the_cutoff_is_refused_without_one(
    name: str, given: str, default: str, metric: str
) -> None:
    param, value = given.split("=")
    message = (
        f"metric {name!r}: {given} reads the cutoff @k, and the request has none, so it "
        f"computes what {default} does: add a cutoff, e.g. "
        f'"{metric}({param}={value})@10", or drop {param}'
    )
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        irm.evaluate(RUN, [name], qrels=QRELS)


def test_with_a_cutoff_the_parameters_are_read() -> None:
    # q1: a(1) b(2) d, R=2; q2: a c(1), R=1; q3: b(0), R=0
    # recall(capped)@1: q1 1/min(1,2)=1, q2 0/1=0, q3 0 -> 1/3 (recall@1: 1/2, 0, 0 -> 1/6)
    # P(adaptive_k=True)@5: q1 2/min(5,3), q2 1/min(5,2), q3 0/1 -> (2/3 + 1/2) / 3
    got = irm.evaluate(
        RUN, ["recall(denominator='capped')@1", "recall@1", "P(adaptive_k=True)@5"], qrels=QRELS
    )
    assert got.row(0) == (3, 1 / 3, (1 / 2) / 3, (2 / 3 + 1 / 2) / 3)
    # the expression functions refuse it too
    message = (
        "metric 'irm.precision(...)': adaptive_k=True reads the cutoff @k, and the request has "
        "none, so it computes what adaptive_k=False does: add a cutoff, e.g. "
        "irm.precision(k=10, adaptive_k=True), or drop adaptive_k"
    )
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        irm.precision(adaptive_k=True)
    # and the namespace's methods
    judged = RUN.join(QRELS, on=["query_id", "doc_id"], how="left")
    message = (
        "metric 'irm.recall(...)': denominator='capped' reads the cutoff @k, and the request "
        "has none, so it computes what denominator='relevant' does: add a cutoff, e.g. "
        "irm.recall(k=10, denominator='capped'), or drop denominator"
    )
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        judged.irm.recall(denominator="capped")


def test_compare_and_ab_test_refuse_a_name_of_the_working_prefix() -> None:
    # compare's system= of a long frame met the ranking metrics' '__irm_judged' (polars'
    # DuplicateError); ab_test's by='__irm_x' likewise
    stacked = pl.concat(
        [
            RUN.with_columns(__irm_judged=pl.lit("A")),
            REFERENCE.with_columns(__irm_judged=pl.lit("B")),
        ]
    )
    message = (
        "system='__irm_judged' names '__irm_judged', and a name that begins with '__' is kept "
        "for the library's working columns (a plan could hold one of that name beside it); "
        "rename the column first, e.g. runs.rename({'__irm_judged': 'irm_judged'}), and pass "
        "system='irm_judged'"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.compare(stacked, ["ndcg@2"], qrels=QRELS, system="__irm_judged")
    log = pl.DataFrame(
        {
            "user_id": ["u1", "u2", "u3", "u4"],
            "session_id": ["s1", "s2", "s3", "s4"],
            "position": [1, 1, 1, 1],
            "clicked": [1, 0, 1, 1],
            "arm": ["A", "A", "B", "B"],
            "__irm_x": ["d", "d", "d", "d"],
        }
    )
    message = (
        "by=['__irm_x'] names '__irm_x', and a name that begins with '__' is kept for the "
        "library's working columns (a plan could hold one of that name beside it); rename the "
        "column first, e.g. log.rename({'__irm_x': 'irm_x'}), and pass by='irm_x'"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.ab_test(log, ["ctr"], by="__irm_x")


@pytest.mark.parametrize("metrics", [["ndcg@2"], ["ee_loss"], ["ndcg@2", "ee_loss"]])
def test_a_key_of_queries_of_another_dtype_than_the_runs_is_named_so(
    frame_kind: str, metrics: list[str]
) -> None:
    # queries=' 'day' (Int64) is joined onto the judgments, and the refusal of the run's
    # String 'day' named "Int64 in the judgments", which have no such column
    run = RUN.with_columns(
        day=pl.when(pl.col("query_id") == "q1").then(pl.lit("1")).otherwise(pl.lit("2"))
    )
    queries = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "day": [1, 2, 2]})
    table = run.lazy() if frame_kind == "LazyFrame" else run
    message = (
        "column 'day' has dtype String in the run but Int64 in queries=; cast one side to match"
    )
    with pytest.raises(ColumnTypeError, match=re.escape(message)):
        irm.evaluate(table, metrics, qrels=QRELS, queries=queries, by="day")


def test_queries_key_of_a_judged_table_that_holds_it_is_refused(frame_kind: str) -> None:
    # the judged table's own 'day' was read and queries=' 'day' ignored in silence: the
    # groups were the table's m and t, not queries=' x and y
    judged = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2"],
            "doc_id": ["a", "b", "c"],
            "rank": [1, 2, 1],
            "relevance": [1, 0, 1],
            "day": ["m", "m", "t"],
        }
    )
    queries = pl.DataFrame({"query_id": ["q1", "q2"], "day": ["x", "y"]})
    table = judged.lazy() if frame_kind == "LazyFrame" else judged
    message = (
        "by key 'day' is both in queries= and in the judged table; give each judged query "
        "its value once: drop the column from one of them"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, ["ndcg"], queries=queries, by="day")


@pytest.mark.parametrize(
    ("column", "value", "what"), [("rank", 1, "rank"), ("score", 0.5, "score")]
)
def test_a_scalar_rank_or_score_beside_list_shaped_ids_is_refused(
    frame_kind: str, column: str, value: float, what: str
) -> None:
    # the list positions replaced the row's rank in silence (P@1 was 0.0: c first); a
    # row's one score became every document's score (all tied under order='score')
    run = pl.DataFrame({"query_id": ["q1"], "doc_id": [["c", "a", "b"]], column: [value]})
    qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    table = run.lazy() if frame_kind == "LazyFrame" else run
    message = (
        f"column {column!r} of the run holds one value per row beside the lists of 'doc_id': "
        "a list-shaped run's ranks are the list positions (1 = first), or a parallel list of "
        f"one {what} per document in {column!r}; drop the column, e.g. .drop({column!r}), or "
        "make it such a list"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, ["P@1"], qrels=qrels)


def test_a_parallel_list_of_ranks_is_read() -> None:
    # a is at rank 1, so P@1 = 1/1
    run = pl.DataFrame({"query_id": ["q1"], "doc_id": [["c", "a", "b"]], "rank": [[3, 1, 2]]})
    qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    assert irm.evaluate(run, ["P@1"], qrels=qrels).row(0) == (1, 1.0)


# judged_only= removes the run's unjudged documents; without a cutoff @k these metrics
# read only which judged documents were retrieved, or their order, so it changed nothing
# and was accepted. Run q1: u1 (unjudged), a (rel 1), n (rel 0), b (rel 1).
CLOSED_RUN = pl.DataFrame(
    {"query_id": ["q1"] * 4, "doc_id": ["u1", "a", "n", "b"], "rank": [1, 2, 3, 4]}
)
CLOSED_QRELS = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["a", "n", "b"], "relevance": [1, 0, 1]}
)
CLOSED = ["bpref", "recall", "set_recall", "num_rel_ret", "success", "cg", "fcp", "gm_bpref"]


@pytest.mark.parametrize("metric", CLOSED)
def test_judged_only_beside_a_metric_of_the_judged_documents_alone_is_refused(
    metric: str,
) -> None:
    message = (
        f"judged_only=True is not read by metric {metric!r}: without a cutoff @k a metric of "
        "the judged documents retrieved (recall, num_rel_ret, hit_rate, cg) or of their order "
        "(bpref, fcp) is the same with the unjudged documents removed, and a count of the "
        "judgments or of the queries (num_rel, num_q) reads no ranking; only the metrics of a "
        "ranking's places (P, ndcg, map, num_ret, recall@k...) read the ranking closed up on "
        "its judged documents; drop judged_only= (it would change nothing), or evaluate such "
        "a metric"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(CLOSED_RUN, [metric], qrels=CLOSED_QRELS, judged_only=True)
    # the metric's own judged_only= too
    with pytest.raises(MetricParameterError, match=re.escape("it would change nothing")):
        irm.evaluate(CLOSED_RUN, [f"{metric}(judged_only=True)"], qrels=CLOSED_QRELS)


def test_judged_only_is_read_at_a_cutoff_and_beside_a_metric_of_places() -> None:
    # recall@1: u1 at the top, 0/2; closed up, a at the top, 1/2
    # ndcg@2 closed up: a, n -> 1 / (1 + 1/log2(3)) beside bpref (1 - 0/2 ... = 0.5)
    got = irm.evaluate(
        CLOSED_RUN, ["recall@1", "bpref", "ndcg@2"], qrels=CLOSED_QRELS, judged_only=True
    )
    ideal = 1.0 + 1.0 / math.log2(3.0)
    assert got.row(0) == pytest.approx((1, 0.5, 0.5, 1.0 / ideal), rel=1e-12)
    assert irm.evaluate(CLOSED_RUN, ["recall@1"], qrels=CLOSED_QRELS).item(0, 1) == 0.0
    # a metric of no ranking is refused by its own words
    with pytest.raises(MetricParameterError, match=re.escape("num_rel reads no ranking")):
        irm.evaluate(CLOSED_RUN, ["num_rel(judged_only=True)"], qrels=CLOSED_QRELS)


@pytest.mark.parametrize("keys", [["query_id"], ["query_id", "doc_id"]])
def test_a_pandas_tables_named_index_is_read_as_pa_table_from_pandas_reads_it(
    keys: list[str],
) -> None:
    # df.set_index('query_id') lost its query ids (column 'query_id' not found), where
    # pa.Table.from_pandas of the same frame keeps them: the same values on both paths
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    frame = RUN.to_pandas().set_index(keys)
    qrels = QRELS.to_pandas().set_index("query_id")
    expected = irm.evaluate(RUN, ["ndcg@2", "map"], qrels=QRELS)
    assert isinstance(frame, pd.DataFrame)
    assert irm.evaluate(frame, ["ndcg@2", "map"], qrels=qrels).equals(expected)
    through_arrow = irm.evaluate(
        pa.Table.from_pandas(frame), ["ndcg@2", "map"], qrels=pa.Table.from_pandas(qrels)
    )
    assert through_arrow.equals(expected)


FUSE_A = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [0.9, 0.5, 0.1, 0.8, 0.3],
    }
)
FUSE_B = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["b", "c", "d", "e"],
        "score": [3.0, 2.0, 5.0, 1.0],
    }
)


def _as_lists(run: pl.DataFrame) -> pl.DataFrame:
    ordered = run.sort("query_id", "score", descending=[False, True])
    return ordered.group_by("query_id", maintain_order=True).agg("doc_id", "score")


@pytest.mark.parametrize(
    ("kind", "convert"),
    [
        ("lists", _as_lists),
        ("lists without scores", lambda run: _as_lists(run).drop("score")),
        ("pandas", lambda run: run.to_pandas()),
        ("arrow", lambda run: run.to_arrow()),
    ],
)
@pytest.mark.parametrize("method", ["rrf", "bordafuse"])
def test_fuse_reads_every_shape_evaluate_reads(kind: str, convert: Any, method: str) -> None:
    # fuse refused list-shaped runs ("dtype List(String); ids must be strings or
    # integers") and pandas or Arrow tables ("run 'a' is a DataFrame"), which evaluate
    # and compare read; rrf and bordafuse read the positions, the same in every shape
    expected = irm.fuse({"a": FUSE_A, "b": FUSE_B}, method)
    got = irm.fuse({"a": convert(FUSE_A), "b": convert(FUSE_B)}, method)
    assert isinstance(got, pl.DataFrame)
    assert got.equals(expected)


def test_judged_only_beside_bpref_and_an_exposure_measure_is_read_by_neither() -> None:
    # the mixed-routes refusal said "judged_only=True is read by metric 'bpref' and not by
    # metric 'ee_loss'": bpref does not read it either
    message = "judged_only=True is not read by metrics 'bpref', 'ee_loss': without a cutoff @k"
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(CLOSED_RUN, ["bpref", "ee_loss"], qrels=CLOSED_QRELS, judged_only=True)
