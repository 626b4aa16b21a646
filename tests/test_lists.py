"""List-shaped runs and judgments (one row per query): the same values as the long form."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.errors import DuplicateError, InvalidValueError
from polars_irmetrics.ground.lists import long_judgments, long_run
from polars_irmetrics.io.files import detect_format, scan_run

# The seed tutorials' example: retrieved ids and relevant ids, one list per query.
RESULTS = [
    [11, 1, 17, 7, 21, 5, 3, 2, 8, 9],
    [4, 9, 2, 13, 6, 1, 12, 10, 15, 3],
    [22, 40, 31, 7, 30, 12, 3, 5, 41, 18],
]
GROUND_TRUTH = [[11, 1, 7, 17, 21], [2, 10, 15], [31, 18, 50]]
QUERIES = ["q1", "q2", "q3"]


def _lists() -> tuple[pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame({"query_id": QUERIES, "doc_id": RESULTS})
    qrels = pl.DataFrame({"query_id": QUERIES, "doc_id": GROUND_TRUTH})
    return run, qrels


def _lg(x: int) -> float:
    return math.log2(x)


# Hand arithmetic, query by query (hits: q1 ranks 1-5 of 5 relevant; q2 ranks 3, 8, 9
# of 3; q3 ranks 3, 10 of 3, document 50 never retrieved).
WORKED = {
    "recall@1": [1 / 5, 0, 0],
    "recall@5": [1, 1 / 3, 1 / 3],
    "recall@10": [1, 1, 2 / 3],
    "P@1": [1, 0, 0],
    "P@5": [1, 1 / 5, 1 / 5],
    "P@10": [1 / 2, 3 / 10, 2 / 10],
    "mrr@1": [1, 0, 0],
    "mrr@5": [1, 1 / 3, 1 / 3],
    "mrr@10": [1, 1 / 3, 1 / 3],
    "map@1": [1 / 5, 0, 0],
    "map@5": [1, (1 / 3) / 3, (1 / 3) / 3],
    "map@10": [1, (1 / 3 + 2 / 8 + 3 / 9) / 3, (1 / 3 + 2 / 10) / 3],
    "ndcg@1": [1, 0, 0],
    "ndcg@5": [
        1,
        (1 / _lg(4)) / (1 + 1 / _lg(3) + 1 / _lg(4)),
        (1 / _lg(4)) / (1 + 1 / _lg(3) + 1 / _lg(4)),
    ],
    "ndcg@10": [
        1,
        (1 / _lg(4) + 1 / _lg(9) + 1 / _lg(10)) / (1 + 1 / _lg(3) + 1 / _lg(4)),
        (1 / _lg(4) + 1 / _lg(11)) / (1 + 1 / _lg(3) + 1 / _lg(4)),
    ],
}


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_worked_example_from_lists(kind: str) -> None:
    run, qrels = _lists()
    if kind == "LazyFrame":
        out = irm.evaluate(run.lazy(), list(WORKED), qrels=qrels.lazy(), per_query=True)
        assert isinstance(out, pl.LazyFrame)
        got = out.collect()
    else:
        got = irm.evaluate(run, list(WORKED), qrels=qrels, per_query=True)
    assert got["query_id"].to_list() == QUERIES
    for name, values in WORKED.items():
        assert got[name].to_list() == pytest.approx(values, abs=1e-12), name
    means = irm.evaluate(run, list(WORKED), qrels=qrels)
    for name, values in WORKED.items():
        assert means[name].item() == pytest.approx(sum(values) / 3, abs=1e-12), name


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (
            {"query_id": ["a", "b"], "doc_id": [["x", "y"], ["z"]]},
            {"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "z"], "rank": [1, 2, 1]},
        ),
        (
            {"query_id": ["a"], "doc_id": [[3, 1]], "score": [[0.5, 0.25]]},
            {"query_id": ["a", "a"], "doc_id": [3, 1], "score": [0.5, 0.25], "rank": [1, 2]},
        ),
        (  # an empty list: a query with no result
            {"query_id": ["a", "b"], "doc_id": [[], [7]]},
            {"query_id": ["b"], "doc_id": [7], "rank": [1]},
        ),
        (  # a parallel rank list is kept; a scalar column is repeated
            {"query_id": ["a"], "doc_id": [[1, 2]], "rank": [[5, 9]], "day": [3]},
            {"query_id": ["a", "a"], "doc_id": [1, 2], "rank": [5, 9], "day": [3, 3]},
        ),
        (  # long runs pass unchanged
            {"query_id": ["a"], "doc_id": [1], "rank": [4]},
            {"query_id": ["a"], "doc_id": [1], "rank": [4]},
        ),
    ],
)
@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_long_run(run: dict[str, object], expected: dict[str, object], kind: str) -> None:
    frame = pl.DataFrame(
        run, schema_overrides={"doc_id": pl.List(pl.Int64)} if run["doc_id"] == [[], [7]] else None
    )
    got = long_run(frame.lazy()).collect() if kind == "LazyFrame" else long_run(frame)
    assert_frame_equal(got, pl.DataFrame(expected), check_column_order=False)


def test_long_run_reads_array_columns() -> None:
    run = pl.DataFrame({"query_id": ["a"], "doc_id": [[4, 2]], "score": [[2.0, 1.0]]}).cast(
        {"doc_id": pl.Array(pl.Int64, 2), "score": pl.Array(pl.Float64, 2)}
    )
    expected = {"query_id": ["a", "a"], "doc_id": [4, 2], "score": [2.0, 1.0], "rank": [1, 2]}
    assert_frame_equal(long_run(run), pl.DataFrame(expected))


@pytest.mark.parametrize(
    ("qrels", "expected"),
    [
        (
            {"query_id": ["a"], "doc_id": [["x", "y"]]},
            {"query_id": ["a", "a"], "doc_id": ["x", "y"], "relevance": [1, 1]},
        ),
        (
            {"query_id": ["a"], "doc_id": [["x", "y"]], "relevance": [[2, 0]]},
            {"query_id": ["a", "a"], "doc_id": ["x", "y"], "relevance": [2, 0]},
        ),
        (
            {"query_id": ["a"], "doc_id": [["x", "y"]], "relevance": [3]},
            {"query_id": ["a", "a"], "doc_id": ["x", "y"], "relevance": [3, 3]},
        ),
    ],
)
@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_long_judgments(qrels: dict[str, object], expected: dict[str, object], kind: str) -> None:
    frame = pl.DataFrame(qrels)
    got = long_judgments(frame.lazy()).collect() if kind == "LazyFrame" else long_judgments(frame)
    assert_frame_equal(got, pl.DataFrame(expected), check_column_order=False)


MISMATCH = (
    "column 'score' of the run holds a list of 1 value(s) in query 'q2', where column "
    "'doc_id' holds 2; parallel lists must have the same length, one value per document"
)
NULL_LIST = (
    "column 'doc_id' of the judgments has a null list in query 'q2'; a query with no "
    "document is an empty list: fill them, e.g. pl.col('doc_id').fill_null([]), or drop "
    "those rows"
)
REL_MISMATCH = (
    "column 'relevance' of the judgments holds a list of 3 value(s) in query 'q1', where "
    "column 'doc_id' holds 1; parallel lists must have the same length, one value per document"
)


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "qrels", "error", "message"),
    [
        (
            {"query_id": ["q1", "q2"], "doc_id": [[1], [1, 2]], "score": [[1.0], [1.0]]},
            {"query_id": ["q1"], "doc_id": [[1]]},
            InvalidValueError,
            MISMATCH,
        ),
        (
            {"query_id": ["q1", "q2"], "doc_id": [[1], [1, 2]]},
            {"query_id": ["q1", "q2"], "doc_id": [[1], None]},
            InvalidValueError,
            NULL_LIST,
        ),
        (
            {"query_id": ["q1"], "doc_id": [[1]]},
            {"query_id": ["q1"], "doc_id": [[1]], "relevance": [[1, 2, 3]]},
            InvalidValueError,
            REL_MISMATCH,
        ),
        (  # a null inside a list: the evaluation's own check
            {"query_id": ["q1"], "doc_id": [[1, None]]},
            {"query_id": ["q1"], "doc_id": [[1]]},
            InvalidValueError,
            "column 'doc_id' of the run has 1 null value(s) in query 'q1'; every row needs a "
            "document id: drop them, e.g. .drop_nulls('doc_id')",
        ),
        (  # the same query twice: its positions repeat
            {"query_id": ["q1", "q1"], "doc_id": [[1], [2]]},
            {"query_id": ["q1"], "doc_id": [[1]]},
            DuplicateError,
            "query 'q1' is in 2 rows of the run, whose 'doc_id' holds one list per query",
        ),
    ],
)
def test_bad_lists(
    run: dict[str, object],
    qrels: dict[str, object],
    error: type[Exception],
    message: str,
    kind: str,
) -> None:
    run_frame, qrels_frame = pl.DataFrame(run), pl.DataFrame(qrels)
    if kind == "LazyFrame":
        plan = irm.evaluate(run_frame.lazy(), ["mrr"], qrels=qrels_frame.lazy())
        with pytest.raises(error, match=re.escape(message)):  # building the plan did not
            plan.collect()
    else:
        with pytest.raises(error, match=re.escape(message)):
            irm.evaluate(run_frame, ["mrr"], qrels=qrels_frame)


def test_lazy_plan_is_not_collected() -> None:
    run = pl.LazyFrame({"query_id": ["q1"], "doc_id": [[1, 2]], "score": [[1.0]]})
    qrels = pl.LazyFrame({"query_id": ["q1"], "doc_id": [[1]]})
    plan = irm.evaluate(run, ["mrr"], qrels=qrels)  # no error before collect
    assert isinstance(plan, pl.LazyFrame)


METRICS = ["ndcg@5", "map", "mrr", "P@3", "recall@10", "bpref", "ndcg", "R-prec"]


@st.composite
def _long_run_and_qrels(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    n_q = draw(st.integers(1, 4))
    rows: list[tuple[str, int, int, float]] = []
    judged: list[tuple[str, int, int]] = []
    for q in range(n_q):
        docs = draw(st.lists(st.integers(0, 12), max_size=8, unique=True))
        scores = draw(
            st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(docs), max_size=len(docs))
        )
        rows += [(f"q{q}", d, i + 1, s) for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
        labels = draw(st.dictionaries(st.integers(0, 12), st.integers(0, 3), max_size=6))
        judged += [(f"q{q}", d, g) for d, g in labels.items()]
    run_schema = {"query_id": pl.String, "doc_id": pl.Int64, "rank": pl.Int64, "score": pl.Float64}
    run = pl.DataFrame(rows, schema=run_schema, orient="row")
    qrels_schema = {"query_id": pl.String, "doc_id": pl.Int64, "relevance": pl.Int64}
    qrels = pl.DataFrame(judged, schema=qrels_schema, orient="row")
    return run, qrels


def _as_lists(run: pl.DataFrame, qrels: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    listed = (
        run.sort("query_id", "rank")
        .group_by("query_id", maintain_order=True)
        .agg(pl.col("doc_id", "score").drop_nulls())
    )
    graded = qrels.group_by("query_id", maintain_order=True).agg("doc_id", "relevance")
    return listed, graded


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_long_run_and_qrels(), st.sampled_from(["rank", "score"]), st.booleans())
def test_lists_equal_the_long_form_bit_for_bit(
    tables: tuple[pl.DataFrame, pl.DataFrame], order: str, per_query: bool
) -> None:
    run, qrels = tables
    listed, graded = _as_lists(run, qrels)
    options = {"order": order, "per_query": per_query, "unjudged": "zero"}
    long = irm.evaluate(run, METRICS, qrels=qrels, **options)
    from_lists = irm.evaluate(listed.lazy(), METRICS, qrels=graded.lazy(), **options).collect()
    keys = ["query_id"] if per_query else []
    assert_frame_equal(
        from_lists.sort(keys) if keys else from_lists,
        long.sort(keys) if keys else long,
        check_exact=True,
    )


def test_compare_and_namespace_take_lists() -> None:
    run, qrels = _lists()
    other = run.with_columns(pl.col("doc_id").list.reverse())
    long_a = long_run(run)
    long_b = long_run(other)
    long_q = long_judgments(qrels)
    got = irm.compare({"a": run, "b": other.lazy()}, ["ndcg@10", "mrr"], qrels=qrels)
    want = irm.compare({"a": long_a, "b": long_b}, ["ndcg@10", "mrr"], qrels=long_q)
    assert_frame_equal(got, want)
    assert_frame_equal(
        run.irm.evaluate(["ndcg@10"], qrels=qrels),
        irm.evaluate(long_a, ["ndcg@10"], qrels=long_q),
    )


def test_cli_reads_list_columns_from_parquet_and_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, qrels = _lists()
    # scores falling along each list, as its positions rank it (scores that contradict
    # them are refused: tests/test_orders_round25.py)
    run = run.with_columns(
        score=pl.col("doc_id").list.eval(-pl.int_range(pl.len()).cast(pl.Float64))
    )
    run.write_parquet(tmp_path / "run.parquet")
    lines = "".join(json.dumps(row) + "\n" for row in run.iter_rows(named=True))
    (tmp_path / "run.jsonl").write_text(lines)
    (tmp_path / "run.txt").write_text(lines)  # told apart by content
    qrels.write_parquet(tmp_path / "qrels.parquet")
    assert detect_format(tmp_path / "run.txt") == "jsonl"
    assert_frame_equal(scan_run(tmp_path / "run.jsonl").collect(), run)
    outputs = []
    for name in ("run.parquet", "run.jsonl", "run.txt"):
        args = ["evaluate", str(tmp_path / name), "--qrels", str(tmp_path / "qrels.parquet")]
        assert main([*args, "-m", "ndcg@10", "-m", "P@5", "--format", "json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0][0]["P@5"] == pytest.approx(sum(WORKED["P@5"]) / 3)
