"""``irm.compare`` of runs of different shapes (dtypes, columns, order columns): every
run's per-query values are those ``irm.evaluate`` gives it alone, to the bit, or the run
is refused with ``irm.evaluate``'s own error, naming the system."""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm

T = 1_700_000_000_000_000_000  # a nanosecond timestamp: 100 ns apart is no tie
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
IDS = {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "b"]}
BM25 = pl.DataFrame({**IDS, "score": [1.0, 2.0, 1.0, 2.0]})
METRICS = ["mrr", "P@1", "ndcg@10", "map", "recall@1"]


def _scores(values: list[Any], dtype: pl.DataType) -> pl.DataFrame:
    return pl.DataFrame({**IDS, "score": pl.Series(values, dtype=dtype)})


def _judged(query_ids: pl.Series, doc_ids: pl.Series) -> pl.DataFrame:
    """A judged table (relevance in the run): qrels=None."""
    return pl.DataFrame(
        {"query_id": query_ids, "doc_id": doc_ids, "rank": [1, 2, 1, 2], "relevance": [1, 0, 0, 1]}
    )


@dataclass(frozen=True)
class Same:
    """Runs that compare evaluates as evaluate evaluates each alone."""

    id: str
    runs: dict[str, pl.DataFrame]
    qrels: pl.DataFrame | None = field(default_factory=lambda: QRELS)
    metrics: list[str] = field(default_factory=lambda: list(METRICS))
    options: dict[str, Any] = field(default_factory=dict)


SAME = [
    Same(  # the tester's case: ns timestamps as Float64 tie
        "int64 beside float64 scores",
        {"recency": _scores([T + 100, T, T + 100, T], pl.Int64()), "bm25": BM25},
    ),
    Same(
        "decimal(38,20) beside float64 scores",
        {
            "exact": _scores(
                [Decimal("1.00000000000000000001"), Decimal(1)] * 2, pl.Decimal(38, 20)
            ),
            "bm25": BM25,
        },
    ),
    Same(
        "int128 beside float64 scores",
        {"big": _scores([2**100 + 1, 2**100] * 2, pl.Int128()), "bm25": BM25},
    ),
    Same(
        "uint64 beside int64 scores",
        {
            "u": _scores([2**64 - 1, 2**64 - 2] * 2, pl.UInt64()),
            "i": _scores([1, 2] * 2, pl.Int64()),
        },
    ),
    Same(  # each valid alone: each ranked by its own order
        "a rank-only run beside a score-only run",
        {"scored": BM25, "ranked": pl.DataFrame({**IDS, "rank": [1, 2, 1, 2]})},
    ),
    Same(  # evaluate ranks a run with a rank column by its rank (order='auto'), which
        # its scores must not contradict (refused: tests/test_orders_round25.py)
        "a run with rank and score beside a score-only run",
        {"scored": BM25, "both": BM25.with_columns(rank=pl.Series([2, 1, 2, 1]))},
    ),
    Same(
        "categorical and enum doc ids beside string doc ids",
        {
            "str": BM25,
            "cat": BM25.with_columns(pl.col("doc_id").cast(pl.Categorical)),
            "enum": BM25.with_columns(pl.col("doc_id").cast(pl.Enum(["b", "a"]))),
        },
    ),
    Same(
        "int32 beside uint64 ids, int64 judgments",
        {
            "i32": BM25.with_columns(
                pl.Series("query_id", [1, 1, 2, 2], pl.Int32),
                pl.Series("doc_id", [7, 8, 7, 8], pl.Int32),
            ),
            "u64": BM25.with_columns(
                pl.Series("query_id", [1, 1, 2, 2], pl.UInt64),
                pl.Series("doc_id", [8, 7, 8, 7], pl.UInt64),
            ),
        },
        qrels=pl.DataFrame({"query_id": [1, 2], "doc_id": [7, 7], "relevance": [1, 1]}),
    ),
    Same(
        "extra columns of different dtypes",
        {"a": BM25.with_columns(tag=pl.lit("x")), "b": BM25.with_columns(tag=pl.lit(3))},
    ),
    Same(  # documents never meet across runs: each run's doc ids are its own
        "judged tables with integer beside categorical doc ids",
        {
            "ints": _judged(pl.Series([1, 1, 2, 2]), pl.Series([5, 6, 5, 6])),
            "cats": _judged(
                pl.Series([1, 1, 2, 2]), pl.Series(["5", "6", "6", "5"], dtype=pl.Categorical)
            ),
        },
        qrels=None,
        metrics=["P@1", "mrr"],
    ),
    Same(  # the exposure measures beside a ranking metric, and alone
        "exposure measures of int64 beside float64 scores",
        {"recency": _scores([T + 100, T, T + 100, T], pl.Int64()), "bm25": BM25},
        metrics=["ee_loss", "awrf", "ndcg@10"],
        options={"groups": pl.DataFrame({"doc_id": ["a", "b"], "group": ["x", "y"]})},
    ),
    Same(
        "exposure measures alone of a rank-only beside a score-only run",
        {"ranked": pl.DataFrame({**IDS, "rank": [2, 1, 1, 2]}), "bm25": BM25},
        metrics=["ee_loss", "awrf"],
        options={"groups": pl.DataFrame({"doc_id": ["a", "b"], "group": ["x", "y"]})},
    ),
    Same(
        "predictions with enum beside string users",
        {
            "str": pl.DataFrame({"user": ["u1", "u1", "u2", "u2"], "y": [1, 0, 0, 1],
                                 "p": [0.6, 0.4, 0.3, 0.7]}),
            "enum": pl.DataFrame({"user": pl.Series(["u1", "u1", "u2", "u2"],
                                                    dtype=pl.Enum(["u2", "u1"])),
                                  "y": [1, 0, 0, 1], "p": [0.4, 0.6, 0.3, 0.7]}),
        },
        qrels=None,
        metrics=["auc", "logloss"],
        options={"label": "y", "prediction": "p", "query_id": "user"},
    ),
]  # fmt: skip


def _bits(values: pl.Series) -> list[int]:
    return values.cast(pl.Float64).to_numpy().view(np.int64).tolist()


def _alone(run: pl.DataFrame | pl.LazyFrame, case: Same) -> pl.DataFrame:
    out = irm.evaluate(run, case.metrics, qrels=case.qrels, per_query=True, **case.options)
    frame = out.collect() if isinstance(out, pl.LazyFrame) else out
    query_id = case.options.get("query_id", "query_id")
    return frame.sort(pl.col(query_id).cast(pl.String))


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("case", SAME, ids=[c.id for c in SAME])
def test_every_run_is_valued_as_evaluate_values_it_alone(case: Same, lazy: bool) -> None:
    runs: dict[str, pl.DataFrame | pl.LazyFrame] = {
        name: run.lazy() if lazy else run for name, run in case.runs.items()
    }
    names = list(runs)
    query_id = case.options.get("query_id", "query_id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irm.errors.CoverageWarning)
        out = irm.compare(
            runs, case.metrics, qrels=case.qrels, baseline=names[0], per_query=True,
            **case.options,
        )  # fmt: skip
        expected = {name: _alone(run, case) for name, run in runs.items()}
    out = out.sort("metric", "system", pl.col(query_id).cast(pl.String))
    for metric in case.metrics:
        for name in names[1:]:
            rows = out.filter(metric=metric, system=name)
            queries = rows.get_column(query_id).cast(pl.String).to_list()
            assert queries == expected[name].get_column(query_id).cast(pl.String).to_list()
            assert _bits(rows["value"]) == _bits(expected[name][metric]), (metric, name)
            base = _bits(rows["baseline_value"])
            assert base == _bits(expected[names[0]][metric]), (metric, names[0])


def test_int64_scores_are_not_ranked_as_floats() -> None:
    recency = _scores([T + 100, T, T + 100, T], pl.Int64())
    assert irm.evaluate(recency, ["mrr"], qrels=QRELS)["mrr"].item() == 1.0
    runs = {"recency": recency, "bm25": BM25}
    out = irm.compare(runs, ["mrr"], qrels=QRELS, baseline="recency")
    assert out.select("baseline_mean", "mean", "delta").row(0) == (1.0, 0.5, -0.5)
    tukey = irm.tukey_hsd(runs, ["mrr"], qrels=QRELS)  # the same per-query values
    assert tukey.select("system", "baseline", "mean", "baseline_mean").row(0) == (
        "bm25", "recency", 0.5, 1.0,
    )  # fmt: skip


def _said(call: Callable[[], object]) -> list[str]:
    """The library's coverage warnings of ``call`` (an error after them, 0 paired
    queries, left)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.suppress(irm.QuerySetError):
            call()
    return [str(w.message) for w in caught if issubclass(w.category, irm.errors.CoverageWarning)]


def test_coverage_is_warned_once_whatever_the_shapes() -> None:
    # B of its own dtype misses every judged document; E (empty, its own dtype) is no
    # "empty judgments": one plan's warnings, however many plans the shapes take
    missed = _scores([1, 2, 1, 2], pl.Int64()).with_columns(pl.col("doc_id") + "x")
    empty = _scores([1] * 4, pl.Int32()).clear()
    said = _said(lambda: irm.compare({"A": BM25, "B": missed, "E": empty}, ["mrr"], qrels=QRELS))
    one_plan = _said(
        lambda: irm.compare(
            {"A": BM25, "B": missed.with_columns(pl.col("score").cast(pl.Float64))},
            ["mrr"],
            qrels=QRELS,
        )
    )
    assert said == one_plan
    assert len(said) == 1
    assert said[0].startswith("system 'B' retrieves no judged document (0 of 2 judged")
    # empty judgments are said once, as one plan says them
    shapes = {"A": BM25, "B": missed}
    said = _said(lambda: irm.compare(shapes, ["mrr"], qrels=QRELS.clear(), query_set="common"))
    assert len(said) == 1
    assert said[0].startswith("no judged query to evaluate: the judgments are empty")


@dataclass(frozen=True)
class Refused:
    """A run evaluate refuses alone, beside a run it takes: compare refuses it alike."""

    id: str
    bad: Callable[[pl.DataFrame], pl.DataFrame]
    error: type[Exception]
    message: str  # evaluate's own text for the bad run alone
    options: dict[str, Any] = field(default_factory=dict)
    good: pl.DataFrame = field(default_factory=lambda: BM25)


REFUSED = [
    Refused(
        "integer query ids beside string judgments",
        lambda r: r.with_columns(pl.Series("query_id", [1, 1, 2, 2])),
        irm.ColumnTypeError,
        "column 'query_id' holds integers in the run (Int64) but strings in the judgments "
        "(String); cast one side, e.g. pl.col('query_id').cast(pl.String) on both",
    ),
    Refused(
        "datetime scores",
        lambda r: r.with_columns(pl.col("score").cast(pl.Datetime)),
        irm.ColumnTypeError,
        "column 'score' in the run has dtype Datetime(time_unit='us', time_zone=None); it "
        "must be numeric: cast it to its integer count, e.g. pl.col('score').cast(pl.Int64) "
        "(exact; a cast to pl.Float64 holds integers to 2**53 only: timestamps in "
        "nanoseconds a few apart would tie)",
    ),
    Refused(
        "duration scores",
        lambda r: r.with_columns(pl.col("score").cast(pl.Int64).cast(pl.Duration)),
        irm.ColumnTypeError,
        "column 'score' in the run has dtype Duration(time_unit='us'); it must be numeric: "
        "cast it to its integer count, e.g. pl.col('score').cast(pl.Int64) (exact; a cast "
        "to pl.Float64 holds integers to 2**53 only: timestamps in nanoseconds a few apart "
        "would tie)",
    ),
    Refused(
        "float doc ids",
        lambda r: r.with_columns(pl.Series("doc_id", [1.0, 2.0, 1.0, 2.0])),
        irm.ColumnTypeError,
        "column 'doc_id' in the run has dtype Float64; ids must be strings or integers: "
        "cast it, e.g. pl.col('doc_id').cast(pl.Int64)",
    ),
    Refused(
        "no doc_id column",
        lambda r: r.drop("doc_id"),
        irm.ColumnNotFoundError,
        "column 'doc_id' not found in the run (its columns: 'query_id', 'score'); pass the "
        "column names, e.g. query_id='qid', doc_id='docno'",
    ),
    Refused(
        "no order column",
        lambda r: r.drop("score").with_columns(pl.col("doc_id").alias("page")),
        irm.ColumnNotFoundError,
        "the run has neither a 'rank' nor a 'score' column to order its documents (its "
        "columns: 'query_id', 'doc_id', 'page'); name yours with rank=... or score=...",
    ),
    Refused(
        "no rank column under order='rank'",
        lambda r: r.drop("rank"),
        irm.ColumnNotFoundError,
        "column 'rank' not found in the run (its columns: 'query_id', 'doc_id', 'score'); "
        "pass rank=... or score=... to name it, or choose order= (now 'rank')",
        options={"order": "rank"},
        good=BM25.with_columns(rank=pl.Series([2, 1, 2, 1])),
    ),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c.id for c in REFUSED])
def test_a_run_evaluate_refuses_is_refused_by_name(case: Refused) -> None:
    good = case.good
    bad = case.bad(good)
    with pytest.raises(case.error, match=f"^{re.escape(case.message)}$"):
        irm.evaluate(bad, ["mrr"], qrels=QRELS, **case.options)
    expected = f"system 'B': {case.message}"
    with pytest.raises(case.error, match=f"^{re.escape(expected)}$"):
        irm.compare({"A": good, "B": bad}, ["mrr"], qrels=QRELS, **case.options)
    # named wherever it stands among the runs, the valid ones beside it in any order
    with pytest.raises(case.error, match=f"^{re.escape(expected)}$"):
        irm.compare(
            {"B": bad.lazy(), "A": good.lazy(), "C": good}, ["mrr"], qrels=QRELS, **case.options
        )


def test_runs_refused_alike_are_named_together() -> None:
    bad = BM25.drop("doc_id")
    expected = (
        "systems 'B', 'C': column 'doc_id' not found in the run (its columns: 'query_id', "
        "'score'); pass the column names, e.g. query_id='qid', doc_id='docno'"
    )
    with pytest.raises(irm.ColumnNotFoundError, match=f"^{re.escape(expected)}$"):
        irm.compare({"A": BM25, "B": bad, "C": bad}, ["mrr"], qrels=QRELS)


def test_every_run_refused_alike_is_evaluate_s_error() -> None:
    # every run fails the same way: evaluate's text, as for each of them alone
    bad = BM25.with_columns(pl.Series("query_id", [1, 1, 2, 2]))
    expected = (
        "column 'query_id' holds integers in the run (Int64) but strings in the judgments "
        "(String); cast one side, e.g. pl.col('query_id').cast(pl.String) on both"
    )
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(expected)}$"):
        irm.compare({"A": bad, "B": bad.with_columns(tag=pl.lit(1))}, ["mrr"], qrels=QRELS)


def test_the_data_checks_still_name_the_system() -> None:
    nulls = _scores([T, None, T, T + 1], pl.Int64())
    expected = (
        "column 'score' of the run has 1 null value(s) in query 'q1' (system='B'); every "
        "document needs a score to be ranked: fill or drop them, e.g. .drop_nulls('score')"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(expected)}$"):
        irm.compare({"A": BM25, "B": nulls}, ["mrr"], qrels=QRELS)


QUERY_KINDS = [
    (
        "judged tables",
        {
            "A": _judged(pl.Series([1, 1, 2, 2]), pl.Series([5, 6, 5, 6])),
            "B": _judged(pl.Series(["1", "1", "2", "2"], dtype=pl.Categorical),
                         pl.Series([5, 6, 5, 6])),
        },
        ["P@1"],
        {},
        "column 'query_id' holds strings in some runs and integers in others ('A': Int64, "
        "'B': Categorical); the systems are paired by query id: cast it to one type in every "
        "run, e.g. pl.col('query_id').cast(pl.String)",
    ),
    (
        "predictions",
        {
            "A": pl.DataFrame({"user": [1, 1, 2, 2], "y": [1, 0, 0, 1],
                               "p": [0.6, 0.4, 0.3, 0.7]}),
            "B": pl.DataFrame({"user": pl.Series(["1", "1", "2", "2"], dtype=pl.Enum(["1", "2"])),
                               "y": [1, 0, 0, 1], "p": [0.6, 0.4, 0.3, 0.7]}),
            "C": pl.DataFrame({"user": ["1", "1", "2", "2"], "y": [1, 0, 0, 1],
                               "p": [0.6, 0.4, 0.3, 0.7]}),
        },
        ["auc"],
        {"label": "y", "prediction": "p", "query_id": "user"},
        "column 'user' holds strings in some runs and integers in others ('A': Int64, 'B': "
        "Enum(categories=['1', '2']), 'C': String); the systems are paired by query id: cast "
        "it to one type in every run, e.g. pl.col('user').cast(pl.String)",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("runs", "metrics", "options", "message"),
    [case[1:] for case in QUERY_KINDS],
    ids=[case[0] for case in QUERY_KINDS],
)
def test_query_ids_of_two_kinds_are_refused(
    runs: dict[str, pl.DataFrame], metrics: list[str], options: dict[str, Any], message: str
) -> None:
    for run in runs.values():  # each valid alone, per query as compare pairs them
        irm.evaluate(run, metrics, per_query=True, **options)
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.compare(runs, metrics, qrels=None, **options)


def test_a_baseline_that_is_a_system_as_text_is_suggested() -> None:
    long = pl.concat([BM25.with_columns(system=pl.lit(n)) for n in (1, 2)])
    expected = (
        "baseline=1 is not among the systems ('1', '2'); system names are text (a long "
        "frame's system column is cast to String): pass baseline='1'"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(expected)}$"):
        irm.compare(long, ["mrr"], qrels=QRELS, baseline=1)  # type: ignore[arg-type]
    out = irm.compare(long, ["mrr"], qrels=QRELS, baseline="1")
    assert out.select("system", "baseline").row(0) == ("2", "1")
    expected = "baseline='x' is not among the systems ('1', '2'); pass one of them"
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(expected)}$"):
        irm.compare(long, ["mrr"], qrels=QRELS, baseline="x")


def test_an_empty_run_of_its_own_shape_scores_zero() -> None:
    empty = _scores([T] * 4, pl.Int64()).clear()
    with pytest.warns(UserWarning, match="^system 'E' has an empty run"):
        out = irm.compare(
            {"A": BM25, "E": empty}, ["mrr"], qrels=QRELS, baseline="A", per_query=True
        )
    assert out["value"].to_list() == [0.0, 0.0]
    assert out["baseline_value"].to_list() == [0.5, 0.5]  # a at rank 2


def test_the_report_curves_rank_each_run_as_evaluate_does() -> None:
    # the command's HTML report draws metric@1..k per system: stacked with a cast
    # (diagonal_relaxed) before, the nanosecond scores tied as floats
    from polars_irmetrics.cli.compare import _curves

    t = 1_700_000_000_000_000_000
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
    recency = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "b"],
         "score": [t + 100, t, t + 100, t]}
    )  # fmt: skip
    bm25 = recency.with_columns(pl.Series("score", [1.0, 2.0, 1.0, 2.0]))
    runs = {"recency": recency.lazy(), "bm25": bm25.lazy()}
    curves = _curves(runs, ["P@2"], qrels.lazy())
    assert curves is not None
    alone = irm.evaluate(recency, ["P@1..2"], qrels=qrels)
    assert curves.filter(pl.col("system") == "recency").select("P@1", "P@2").row(0) == (
        alone.select("P@1", "P@2").row(0)
    )
    assert curves.get_column("system").to_list() == ["recency", "bm25"]


def test_reproducibility_evaluates_each_run_as_evaluate_does() -> None:
    # baseline and advanced stacked with a cast before: Int64 scores of nanosecond
    # timestamps ranked as floats (ties), so that an exact reproduction looked like
    # none (ER NaN) and a lossy one like an exact one (RMSE 0)
    t = 1_700_000_000_000_000_000
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
    recency = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "b"],
         "score": [t + 100, t, t + 100, t]}
    )  # fmt: skip
    bm25 = recency.with_columns(pl.Series("score", [1.0, 2.0, 1.0, 2.0]))
    original = {"baseline": bm25, "advanced": recency}

    def measures(reproduced_advanced: pl.DataFrame) -> dict[tuple[str, str | None], float]:
        reproduced = {"baseline": bm25, "advanced": reproduced_advanced}
        out = irm.reproducibility(original, reproduced, ["mrr"], qrels=qrels, cutoff=10)
        rows = out.filter(pl.col("measure").is_in(["er", "rmse"])).rows()
        return {(m, run): value for m, _, run, value in rows}

    # mrr: bm25 0.5 (b first), recency 1.0 (a first, by 100 ns): the delta is 0.5
    exact = measures(recency)
    assert exact[("er", None)] == 1.0
    assert exact[("rmse", "advanced")] == 0.0
    # the same run as Float64 scores ties a and b: mrr 0.5, a reproduction that fails
    lossy = measures(recency.with_columns(pl.col("score").cast(pl.Float64)))
    assert lossy[("rmse", "advanced")] == 0.5
    assert lossy[("er", None)] == 0.0
