"""The preference measures (``prefs=``) with the ids renamed (``query_id=``,
``doc_id=``): every message names the user's columns, and the result's query column
keeps the ids' dtype and order, as the ranking metrics' does.

The route read the ids as text under its own names: a null document id of the
preferences was named ``'doc_id'``, a document twice in the run (``check_duplicates=
False``) ``(query_id, doc_id)``, and the query column came back String (sorted as text,
``'10'`` before ``'9'``) for integer ids, where ``ndcg`` gives them back as they came.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    InvalidValueError,
)

NAMES = {"query_id": "qid", "doc_id": "docno"}

#: one user's preferences of three queries (9, 10 and 11: integers sort otherwise as
#: text), each ranking a over b over c
PREFS = pl.DataFrame(
    {
        "qid": [9, 9, 9, 10, 10, 10, 11, 11],
        "jg": ["u"] * 8,
        "jsg": ["s"] * 8,
        "docno": [1, 2, 3, 1, 2, 3, 1, 2],
        "rel_level": [2.0, 1.0, 0.0, 2.0, 1.0, 0.0, 1.0, 0.0],
    }
)
#: a run of queries 9 and 10 (not 11)
RUN = pl.DataFrame(
    {
        "qid": [9, 9, 9, 10, 10, 10],
        "docno": [2, 1, 3, 1, 2, 3],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)
#: the preferences as judgments, for the ranking metrics
QRELS = PREFS.select("qid", "docno", relevance=pl.col("rel_level"))


def _text(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col("qid", "docno").cast(pl.String))


def _raised(call: Callable[[], object]) -> tuple[type[Exception], str]:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - the class is asserted
        call()
    return caught.type, str(caught.value)


# --- the messages ----------------------------------------------------------------------

MESSAGES: list[Any] = [
    pytest.param(
        RUN,
        PREFS.with_columns(docno=pl.Series([1, None, 3, 1, 2, 3, 1, 2])),
        {},
        InvalidValueError,
        "column 'docno' of the preferences (prefs=) has 1 null value(s); every preference "
        "row needs its docno: fill or drop them, e.g. .drop_nulls('docno')",
        id="a null document id of the preferences",
    ),
    pytest.param(
        RUN,
        PREFS.with_columns(qid=pl.Series([9, None, 9, 10, 10, 10, 11, 11])),
        {},
        InvalidValueError,
        "column 'qid' of the preferences has null values; every row needs a qid: drop "
        "them, e.g. .drop_nulls('qid')",
        id="a null query id of the preferences",
    ),
    pytest.param(
        pl.concat([RUN, RUN.head(1).with_columns(score=pl.lit(0.5))]),
        PREFS,
        {"check_duplicates": False},
        DuplicateError,
        "run: document '2' is retrieved twice for query 9; keep one row per (qid, docno), "
        "e.g. .unique(['qid', 'docno'])",
        id="a document twice in the run, its checks off",
    ),
    pytest.param(
        _text(RUN),
        PREFS,
        {},
        ColumnTypeError,
        "column 'qid' holds strings in the run (String) but integers in the preferences "
        "(Int64); cast one side, e.g. pl.col('qid').cast(pl.String) on both",
        id="ids of two kinds",
    ),
]


@pytest.mark.parametrize(("run", "prefs", "options", "error", "message"), MESSAGES)
def test_a_message_names_the_renamed_columns(
    run: pl.DataFrame,
    prefs: pl.DataFrame,
    options: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    got = _raised(lambda: irm.evaluate(run, ["prefs_simp"], prefs=prefs, **NAMES, **options))
    assert got == (error, message)
    # and through the preference measures' own door
    door = _raised(lambda: irm.evaluate_prefs(run, prefs=prefs, **NAMES, **options))
    assert door == (error, message)


@pytest.mark.parametrize(
    ("run", "prefs", "expected"),
    [
        pytest.param(
            _text(RUN).with_columns(docno="d" + pl.col("docno")),
            _text(PREFS).with_columns(docno="D" + pl.col("docno")),
            "e.g. pl.col('docno').str.to_lowercase() on the run and the preferences (prefs=)",
            id="documents that match when case is ignored",
        ),
        pytest.param(
            _text(RUN).with_columns(qid="q" + pl.col("qid")),
            _text(PREFS),
            "e.g. pl.col('qid').str.strip_prefix('q') on the run and the preferences (prefs=)",
            id="queries that match once a prefix is stripped",
        ),
    ],
)
def test_a_coverage_warning_names_the_renamed_columns(
    run: pl.DataFrame, prefs: pl.DataFrame, expected: str
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(run, ["prefs_simp"], prefs=prefs, **NAMES)
    texts = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert len(texts) == 1
    assert expected in texts[0], texts[0]
    assert "query_id" not in texts[0]
    assert "doc_id" not in texts[0]


# --- the query column ------------------------------------------------------------------

#: the ids' dtypes in the run and in the preferences
DTYPES = [
    pytest.param(pl.Int64(), pl.Int64(), id="Int64"),
    pytest.param(pl.Int32(), pl.Int32(), id="Int32"),
    pytest.param(pl.UInt32(), pl.UInt32(), id="UInt32"),
    pytest.param(pl.Int32(), pl.Int64(), id="Int32 beside Int64"),
    pytest.param(pl.UInt64(), pl.UInt64(), id="UInt64"),
    pytest.param(pl.String(), pl.String(), id="String"),
    pytest.param(pl.Categorical(), pl.String(), id="Categorical beside String"),
]


def _cast(frame: pl.DataFrame, dtype: pl.DataType) -> pl.DataFrame:
    if dtype == pl.Categorical:  # an integer does not cast to a category
        return frame.with_columns(pl.col("qid").cast(pl.String).cast(dtype))
    return frame.with_columns(pl.col("qid").cast(dtype))


@pytest.mark.parametrize("unretrieved", ["drop", "zero"])
@pytest.mark.parametrize(("run_dtype", "prefs_dtype"), DTYPES)
def test_the_query_column_is_the_ranking_metrics(
    run_dtype: pl.DataType, prefs_dtype: pl.DataType, unretrieved: str, frame_kind: str
) -> None:
    run, prefs = _cast(RUN, run_dtype), _cast(PREFS, prefs_dtype)
    qrels = _cast(QRELS, prefs_dtype)
    lazy = frame_kind == "LazyFrame"
    options: dict[str, Any] = {"per_query": True, "unretrieved": unretrieved, **NAMES}
    given = run.lazy() if lazy else run
    ranking = irm.evaluate(given, ["ndcg"], qrels=qrels, **options)
    got = irm.evaluate(given, ["prefs_simp"], prefs=prefs, **options)
    door = irm.evaluate_prefs(given, ["prefs_simp"], prefs=prefs, **options)
    if lazy:
        assert isinstance(ranking, pl.LazyFrame)
        assert isinstance(got, pl.LazyFrame)
        assert isinstance(door, pl.LazyFrame)
        ranking, got, door = ranking.collect(), got.collect(), door.collect()
    assert isinstance(ranking, pl.DataFrame)
    assert isinstance(got, pl.DataFrame)
    assert isinstance(door, pl.DataFrame)
    # the same dtype and the same order as ndcg's, so that the two tables join
    assert got.schema["qid"] == ranking.schema["qid"]
    assert got["qid"].to_list() == ranking["qid"].to_list()
    assert door.equals(got)
    # query 9: a over b over c, which the run ranks b, a, c: 2 of 3; query 10: 3 of 3
    values = dict(zip(got["qid"].cast(pl.String), got["prefs_simp"], strict=True))
    expected = {"9": 2 / 3, "10": 1.0} | ({"11": 0.0} if unretrieved == "zero" else {})
    assert values == pytest.approx(expected)


def test_integer_ids_come_back_integers_in_their_order() -> None:
    # before: String, '10' before '9' (query 11, which the run lacks, scores 0 as
    # irm.evaluate's unretrieved='zero' has it)
    out = irm.evaluate(RUN, ["prefs_simp"], prefs=PREFS, per_query=True, **NAMES)
    assert out.schema["qid"] == pl.Int64
    assert out["qid"].to_list() == [9, 10, 11]
    joined = out.join(irm.evaluate(RUN, ["ndcg"], qrels=QRELS, per_query=True, **NAMES), on="qid")
    assert joined.height == 3
