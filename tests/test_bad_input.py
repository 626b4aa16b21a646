"""Every bad input gets a library error naming the column, the value and the fix."""

from __future__ import annotations

import importlib
import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    IrmError,
    MetricParameterError,
    QuerySetError,
    UnknownMetricError,
)

from .conftest import Evaluate


def _run(**overrides: Any) -> pl.DataFrame:
    data: dict[str, Any] = {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["a", "b", "a"],
        "score": [2.0, 1.0, 1.0],
    }
    data.update(overrides)
    return pl.DataFrame(data)


def _qrels(**overrides: Any) -> pl.DataFrame:
    data: dict[str, Any] = {
        "query_id": ["q1", "q2"],
        "doc_id": ["a", "a"],
        "relevance": [1, 0],
    }
    data.update(overrides)
    return pl.DataFrame(data)


CASES = [
    (
        "missing doc column",
        lambda: (_run().drop("doc_id"), {"qrels": _qrels()}),
        ColumnNotFoundError,
        "column 'doc_id' not found in the run (its columns: 'query_id', 'score'); pass the "
        "column names, e.g. query_id='qid', doc_id='docno'",
    ),
    (
        "no rank and no score",
        lambda: (_run().drop("score"), {"qrels": _qrels()}),
        ColumnNotFoundError,
        "the run has neither a 'rank' nor a 'score' column to order its documents (its "
        "columns: 'query_id', 'doc_id'); name yours with rank=... or score=...",
    ),
    (
        "order='rank' without a rank column",
        lambda: (_run(), {"qrels": _qrels(), "order": "rank"}),
        ColumnNotFoundError,
        "column 'rank' not found in the run (its columns: 'query_id', 'doc_id', 'score'); "
        "pass rank=... or score=... to name it, or choose order= (now 'rank')",
    ),
    (
        "missing relevance in the judgments",
        lambda: (_run(), {"qrels": _qrels().rename({"relevance": "label"})}),
        ColumnNotFoundError,
        "column 'relevance' not found in the judgments (its columns: 'query_id', 'doc_id', "
        "'label'); pass the column names, e.g. relevance='label'",
    ),
    (
        "judged table without relevance",
        lambda: (_run(), {}),
        ColumnNotFoundError,
        "column 'relevance' not found in the judged table (its columns: 'query_id', "
        "'doc_id', 'score'); pass qrels=... with the judgments, or add the relevance column",
    ),
    (
        "missing by key",
        lambda: (_run(), {"qrels": _qrels(), "by": "system"}),
        ColumnNotFoundError,
        "column 'system' not found in the run",
    ),
    (
        "float doc ids",
        lambda: (_run(doc_id=[1.0, 2.0, 1.0]), {"qrels": _qrels()}),
        ColumnTypeError,
        "column 'doc_id' in the run has dtype Float64; ids must be strings or integers: "
        "cast it, e.g. pl.col('doc_id').cast(pl.Int64)",
    ),
    (
        "float ranks",
        lambda: (_run(rank=[1.0, 2.0, 1.0]), {"qrels": _qrels()}),
        ColumnTypeError,
        "column 'rank' in the run has dtype Float64; it must be an integer: where every "
        "value is a whole number, cast it, e.g. pl.col('rank').cast(pl.Int64) (a cast drops a "
        "fraction: 1.5 becomes 1; check (pl.col('rank') % 1 == 0).all() first)",
    ),
    (
        "string scores",
        lambda: (_run(score=["2", "1", "1"]), {"qrels": _qrels()}),
        ColumnTypeError,
        "column 'score' in the run has dtype String; it must be numeric: cast it, e.g. "
        "pl.col('score').cast(pl.Float64)",
    ),
    (
        "string relevance",
        lambda: (_run(), {"qrels": _qrels(relevance=["1", "0"])}),
        ColumnTypeError,
        "column 'relevance' in the judgments has dtype String; it must be numeric: cast it, "
        "e.g. pl.col('relevance').cast(pl.Float64)",
    ),
    (
        "string ids in the run, integer ids in the judgments",
        lambda: (_run(), {"qrels": _qrels(query_id=[1, 2])}),
        ColumnTypeError,
        "column 'query_id' holds strings in the run (String) but integers in the judgments "
        "(Int64); cast one side, e.g. pl.col('query_id').cast(pl.String) on both",
    ),
    (
        "unknown metric",
        lambda: (_run(), {"qrels": _qrels(), "metrics": ["ndcg@10", "mapp"]}),
        UnknownMetricError,
        "unknown metric 'mapp'. Did you mean: map",
    ),
    (
        "metric listed twice",
        lambda: (_run(), {"qrels": _qrels(), "metrics": ["map", "map"]}),
        MetricParameterError,
        "metric 'map' is listed twice; list it once",
    ),
    (
        "no metric",
        lambda: (_run(), {"qrels": _qrels(), "metrics": []}),
        MetricParameterError,
        "no metrics given: pass names such as ['ndcg@10', 'map']",
    ),
    (
        "bad policy",
        lambda: (_run(), {"qrels": _qrels(), "unjudged": "skip"}),
        InvalidValueError,
        "unjudged='skip' is not a policy; choose one of 'zero', 'drop', 'error'",
    ),
    (
        "bad order",
        lambda: (_run(), {"qrels": _qrels(), "order": "input"}),
        InvalidValueError,
        "order='input' is not an order; choose 'auto', 'rank' or 'score'",
    ),
    (
        "bad unmatched",  # once accepted, and read as 'error'
        lambda: (_run(), {"qrels": _qrels(), "unmatched": "Drop"}),
        InvalidValueError,
        "unmatched='Drop' is not a policy; choose 'error' (a prediction without a label, or "
        "a label without a prediction, is refused) or 'drop' (such rows are left out)",
    ),
    (
        "bad depth",
        lambda: (_run(), {"qrels": _qrels(), "depth": 0}),
        InvalidValueError,
        "depth must be a positive integer or None, got 0",
    ),
    (
        "by names the query id",
        lambda: (_run(), {"qrels": _qrels(), "by": ["query_id"]}),
        InvalidValueError,
        "by=['query_id'] names 'query_id', which is already the query or document id; "
        "list only extra keys such as 'system'",
    ),
    # data checks, found when the plan runs
    (
        "null query id in the run",
        lambda: (_run(query_id=["q1", None, "q2"]), {"qrels": _qrels()}),
        InvalidValueError,
        "column 'query_id' of the run has null values; every row needs a query_id: drop "
        "them, e.g. .drop_nulls('query_id')",
    ),
    (
        "null doc id in the run",
        lambda: (_run(doc_id=["a", None, "a"]), {"qrels": _qrels()}),
        InvalidValueError,
        "column 'doc_id' of the run has 1 null value(s) in query 'q1'; every row needs a "
        "document id: drop them, e.g. .drop_nulls('doc_id')",
    ),
    (
        "document twice in one query",
        lambda: (_run(doc_id=["a", "a", "a"]), {"qrels": _qrels()}),
        DuplicateError,
        "column 'doc_id' of the run: query 'q1' has 1 repeated listing(s) "
        "(each of a document listed before in the query); each "
        "(query, document) pair may appear once (trec_eval refuses such runs too): keep one "
        "row per document, e.g. .unique(['query_id', 'doc_id'])",
    ),
    (
        "document twice in a query no judgment names",
        lambda: (
            pl.concat([_run(), _run(query_id=["q3"] * 3, doc_id=["c", "c", "d"])]),
            {"qrels": _qrels()},
        ),
        DuplicateError,
        "column 'doc_id' of the run: query 'q3' has 1 repeated listing(s)",
    ),
    (
        "document twice in a query no judgment names, num_ret asked for",
        lambda: (
            pl.concat([_run(), _run(query_id=["q3"] * 3, doc_id=["c", "c", "d"])]),
            {"qrels": _qrels(), "metrics": ["num_ret", "map"]},
        ),
        DuplicateError,
        "column 'doc_id' of the run: query 'q3' has 1 repeated listing(s)",
    ),
    (
        "NaN score in a query no judgment names",
        lambda: (
            pl.concat(
                [
                    _run(),
                    _run(
                        query_id=["q3"] * 3, doc_id=["c", "d", "e"], score=[1.0, float("nan"), 0.5]
                    ),
                ]
            ),
            {"qrels": _qrels()},
        ),
        InvalidValueError,
        "column 'score' of the run has 1 NaN value(s) in query 'q3'",
    ),
    (
        "duplicate ranks",
        lambda: (_run(rank=[1, 1, 1]), {"qrels": _qrels()}),
        DuplicateError,
        "column 'rank' of the run: query 'q1' has 1 duplicate rank(s); each rank may hold "
        "one document: break the ties, or rank by score with order='score'",
    ),
    (
        "rank zero",
        lambda: (_run(rank=[0, 1, 1]), {"qrels": _qrels()}),
        InvalidValueError,
        "column 'rank' of the run has 1 rank(s) below 1 in query 'q1'; ranks start at 1 for "
        "the top document: add 1 to 0-based ranks, e.g. pl.col('rank') + 1",
    ),
    (
        "null rank in a run",
        lambda: (_run(rank=[1, None, 1]), {"qrels": _qrels()}),
        InvalidValueError,
        "column 'rank' of the run has 1 null value(s) in query 'q1'; every retrieved "
        "document needs a rank",
    ),
    (
        "NaN score",
        lambda: (_run(score=[1.0, float("nan"), 1.0]), {"qrels": _qrels()}),
        InvalidValueError,
        "column 'score' of the run has 1 NaN value(s) in query 'q1'; NaN cannot be ranked: "
        "replace them, e.g. pl.col('score').fill_nan(float('-inf'))",
    ),
    (
        "null score",
        lambda: (_run(score=[1.0, None, 1.0]), {"qrels": _qrels()}),
        InvalidValueError,
        "column 'score' of the run has 1 null value(s) in query 'q1'; every document needs "
        "a score to be ranked: fill or drop them, e.g. .drop_nulls('score')",
    ),
    (
        "null relevance",
        lambda: (_run(), {"qrels": _qrels(relevance=[1, None])}),
        InvalidValueError,
        "column 'relevance' of the judgments has 1 null value(s) in query 'q2'; every judged "
        "document needs a relevance label: fill them (e.g. .fill_null(0)) or drop them",
    ),
    (
        "null query id in the judgments",
        lambda: (_run(), {"qrels": _qrels(query_id=["q1", None])}),
        InvalidValueError,
        "column 'query_id' of the judgments has null values; every row needs a query_id",
    ),
    (
        "document judged twice",
        lambda: (_run(), {"qrels": _qrels(query_id=["q1", "q1"])}),
        DuplicateError,
        "column 'doc_id' of the judgments: query 'q1' has 1 repeated judgment(s) (each of a "
        "document judged before in the query); keep one judgment per document, e.g. "
        ".unique(['query_id', 'doc_id'])",
    ),
    (
        "unjudged query under the error policy",
        lambda: (_run(), {"qrels": _qrels().head(1), "unjudged": "error"}),
        QuerySetError,
        "1 query is in the run but not in the judgments: 'q2'; pass unjudged='zero' to "
        "score them 0 or unjudged='drop' to leave them out",
    ),
    (
        "unretrieved query under the error policy",
        lambda: (_run().head(2), {"qrels": _qrels(), "unretrieved": "error"}),
        QuerySetError,
        "1 query is in the judgments but not in the run: 'q2'; pass unretrieved='zero' to "
        "score them 0 or unretrieved='drop' to leave them out",
    ),
    (
        "a label too large for the exact sums",
        lambda: (_run(), {"qrels": _qrels(relevance=[2**33, 0])}),
        InvalidValueError,
        "column 'relevance' of the judgments has 1 label(s) that are NaN, infinite, of "
        "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in "
        "query 'q1'; a relevance label must be 0 or a finite number of magnitude in "
        "[2**-30, 2**32) (what evaluate's exact sums hold), and not between -1 and 0 "
        "(unjudged here, judged non-relevant by trec_eval, which truncates it to 0): "
        "replace or drop them, or rescale the labels",
    ),
    (
        "a label too small for the exact sums (its gains would count 0)",
        lambda: (_run(), {"qrels": _qrels(relevance=[1e-30, 0.0]), "metrics": ["ndcg"]}),
        InvalidValueError,
        "column 'relevance' of the judgments has 1 label(s) that are NaN, infinite, of "
        "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in "
        "query 'q1'",
    ),
    (
        "a label between -1 and 0 (trec_eval truncates it to 0, judged non-relevant)",
        lambda: (_run(), {"qrels": _qrels(relevance=[-0.5, 1.0]), "metrics": ["bpref"]}),
        InvalidValueError,
        "column 'relevance' of the judgments has 1 label(s) that are NaN, infinite, of "
        "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in "
        "query 'q1'",
    ),
    (
        "a NaN label, refused whatever the metrics",
        lambda: (_run(), {"qrels": _qrels(relevance=[float("nan"), 0.0]), "metrics": ["map"]}),
        InvalidValueError,
        "column 'relevance' of the judgments has 1 label(s) that are NaN, infinite, of "
        "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in "
        "query 'q1'",
    ),
    (
        "an exponential gain too large for the exact sums",
        lambda: (
            _run(),
            {"qrels": _qrels(relevance=[40, 0]), "metrics": ["ndcg(gain='exponential')@10"]},
        ),
        InvalidValueError,
        "column 'relevance' of the judgments: in query 'q1', 1 judged document(s) give a "
        "metric term of 2**32 or more, or not finite (a label above 32 with "
        "gain='exponential'), more than evaluate's exact sums hold: rescale the labels, or "
        "use the linear gain",
    ),
]


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [pytest.param(b, e, m, id=i) for i, b, e, m in CASES],
)
def test_bad_input(evaluate: Evaluate, build: Any, error: type[Exception], message: str) -> None:
    run, kwargs = build()
    metrics = kwargs.pop("metrics", ["ndcg@10", "map"])
    with pytest.raises(error, match=re.escape(message)) as info:
        evaluate(run, metrics, **kwargs)
    assert isinstance(info.value, IrmError)
    assert isinstance(info.value, ValueError | TypeError)


def test_not_a_frame() -> None:
    with pytest.raises(
        ColumnTypeError,
        match=re.escape(
            "run must be a polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow Table "
            "or RecordBatch, or a table with the Arrow PyCapsule interface (__arrow_c_stream__), "
            "got dict; convert it to a table, e.g. pl.DataFrame(...) or pl.from_pandas(...)"
        ),
    ):
        irm.evaluate({"query_id": [1]}, ["map"])  # type: ignore[call-overload]


def test_the_run_is_named_by_its_query_and_by_keys(evaluate: Evaluate) -> None:
    run = _run(system=["x", "x", "y"], doc_id=["a", "a", "a"])
    with pytest.raises(
        DuplicateError, match=re.escape("query 'q1' (system='x') has 1 repeated listing(s)")
    ):
        evaluate(run, ["map"], qrels=_qrels(), systems="system")


def test_no_error_is_raised_before_collect_on_lazy_input() -> None:
    lazy = irm.evaluate(_run(doc_id=["a", "a", "a"]).lazy(), ["map"], qrels=_qrels())
    assert isinstance(lazy, pl.LazyFrame)
    with pytest.raises(DuplicateError):
        lazy.collect()


def test_many_unjudged_queries_are_listed_briefly(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {"query_id": [f"q{i}" for i in range(8)], "doc_id": ["a"] * 8, "rank": [1] * 8}
    )
    qrels = pl.DataFrame({"query_id": ["zz"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(
        QuerySetError,
        match=re.escape(
            "8 queries are in the run but not in the judgments: 'q0', 'q1', 'q2', 'q3', "
            "'q4' and 3 more;"
        ),
    ):
        evaluate(run, ["map"], qrels=qrels, unjudged="error")


def test_large_labels_within_the_exact_sums_are_accepted(evaluate: Evaluate) -> None:
    # 40 is fine with the linear gain (the term is 40 / log2(2) = 40), and a label of
    # 31 with the exponential gain (2**31 - 1) is still below 2**32.
    out = evaluate(_run(), ["dcg@1", "ndcg@1"], qrels=_qrels(relevance=[40, 0]), per_query=True)
    assert out.rows() == [("q1", 40.0, 1.0), ("q2", 0.0, 0.0)]
    out = evaluate(
        _run(), ["dcg(gain='exponential')@1"], qrels=_qrels(relevance=[31, 0]), per_query=True
    )
    assert out["dcg(gain='exponential')@1"].to_list() == [2.0**31 - 1.0, 0.0]


def _fingerprint_by_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the duplicate check's hash collide for every two ids of one length."""
    module = importlib.import_module("polars_irmetrics.offline.checks")
    monkeypatch.setattr(module, "doc_fingerprint", lambda doc, setup: doc.str.len_bytes())


def test_a_hash_collision_alone_is_not_a_duplicate(
    evaluate: Evaluate, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check counts distinct hashes of the ids; a query it flags is recounted
    # exactly before anything is raised. Here "a" and "b" share a "hash" (their length),
    # so the hashed count flags q1, and the exact count clears it.
    expected = evaluate(_run(), ["map", "P@2"], qrels=_qrels(), per_query=True)
    _fingerprint_by_length(monkeypatch)
    got = evaluate(_run(), ["map", "P@2"], qrels=_qrels(), per_query=True)
    assert got.equals(expected)


def test_the_duplicate_count_reported_is_exact_despite_collisions(
    evaluate: Evaluate, monkeypatch: pytest.MonkeyPatch
) -> None:
    # q1 lists a, b, a: the colliding "hash" counts 2 extra rows, the message the exact 1.
    _fingerprint_by_length(monkeypatch)
    run = pl.DataFrame(
        {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]}
    )
    with pytest.raises(DuplicateError, match=re.escape("query 'q1' has 1 repeated listing(s)")):
        evaluate(run, ["map"], qrels=_qrels())
