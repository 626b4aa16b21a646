"""Tests of TREC run and qrels reading and writing (polars_irmetrics.io.trec)."""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    MissingFileError,
    TrecFormatError,
)
from polars_irmetrics.io.trec import (
    read_trec_qrels,
    read_trec_run,
    scan_trec_qrels,
    scan_trec_run,
    write_trec_run,
)

#: The fix a file that is not UTF-8 is refused with.
_REENCODE = (
    " (text files are read as UTF-8: re-encode it, e.g. iconv -f latin1 -t utf-8, and the "
    "files whose ids it must match alike)"
)


RUN_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64, "run_id": pl.String}
RUN_SCHEMA_RANK = {
    "query_id": pl.String,
    "doc_id": pl.String,
    "rank": pl.Int64,
    "score": pl.Float64,
    "run_id": pl.String,
}
RUN_FIELDS = "expected 6 whitespace-separated fields (query_id Q0 doc_id rank score run_id)"
QRELS_FIELDS = "expected 4 whitespace-separated fields (query_id iteration doc_id relevance)"


def _write(path: Path, text: str, *, compress: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _run(rows: list[tuple[str, str, float, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row")


def _qrels(rows: list[tuple[str, str, Any]], dtype: type[pl.DataType]) -> pl.DataFrame:
    schema: dict[str, type[pl.DataType]] = {
        "query_id": pl.String,
        "doc_id": pl.String,
        "relevance": dtype,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


# ----------------------------------------------------------------------- reading runs

RUN_PARSE_CASES = [
    pytest.param(
        "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n",
        [("q1", "d1", 2.5, "bm25"), ("q1", "d2", 1.5, "bm25")],
        id="single-spaces",
    ),
    pytest.param(
        "q1\tQ0\td1\t1\t2.5\tbm25\n",
        [("q1", "d1", 2.5, "bm25")],
        id="tabs",
    ),
    pytest.param(
        "  q1 \t Q0\t\td1   1 \t2.5 bm25 \t \n\tq2 Q0 d9 1 -3 bm25",
        [("q1", "d1", 2.5, "bm25"), ("q2", "d9", -3.0, "bm25")],
        id="tabs-and-spaces-mixed-leading-trailing-no-final-newline",
    ),
    pytest.param(
        "q1 Q0 d1 1 2.5 bm25\r\nq1 Q0 d2 2 1.5 bm25\r\n",
        [("q1", "d1", 2.5, "bm25"), ("q1", "d2", 1.5, "bm25")],
        id="crlf",
    ),
    pytest.param(
        "# header comment\n\nq1 Q0 d1 1 2.5 bm25\n   \n  # indented comment\n\t\n"
        "q1 Q0 d2 2 1.5 bm25\n#\n",
        [("q1", "d1", 2.5, "bm25"), ("q1", "d2", 1.5, "bm25")],
        id="comments-and-blank-lines",
    ),
    pytest.param(
        "007 Q0 0042 1 1 run\n1 Q0 00 2 0 run\n",
        [("007", "0042", 1.0, "run"), ("1", "00", 0.0, "run")],
        id="ids-with-leading-zeros-stay-strings",
    ),
    pytest.param(
        "q1 Q0 d1 1 1e3 r\nq1 Q0 d2 2 -0.5 r\nq1 Q0 d3 3 inf r\nq1 Q0 d4 4 -inf r\n"
        "q1 Q0 d5 5 .25 r\n",
        [
            ("q1", "d1", 1000.0, "r"),
            ("q1", "d2", -0.5, "r"),
            ("q1", "d3", float("inf"), "r"),
            ("q1", "d4", float("-inf"), "r"),
            ("q1", "d5", 0.25, "r"),
        ],
        id="score-notations",
    ),
    pytest.param(
        "q1 Q0 d\u00a01 1 1 r\n",
        [("q1", "d\u00a01", 1.0, "r")],
        id="only-ascii-whitespace-separates",
    ),
    pytest.param(
        "q1 Q0 d1 one 1 r\nq1 Q0 d2 2.5 0.5 r\n",
        [("q1", "d1", 1.0, "r"), ("q1", "d2", 0.5, "r")],
        id="rank-field-not-checked-without-keep-rank",
    ),
    pytest.param(
        "q1 XX d1 1 1 r\n",
        [("q1", "d1", 1.0, "r")],
        id="q0-field-ignored",
    ),
]


@pytest.mark.parametrize(("text", "rows"), RUN_PARSE_CASES)
def test_read_trec_run_parses(
    tmp_path: Path,
    text: str,
    rows: list[tuple[str, str, float, str]],
) -> None:
    path = _write(tmp_path / "run.txt", text)
    expected = _run(rows)
    assert_frame_equal(read_trec_run(path), expected)
    assert_frame_equal(scan_trec_run(path).collect(), expected)
    assert_frame_equal(read_trec_run(str(path)), expected)


def test_read_trec_run_keep_rank(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.txt", "q1 Q0 d1 3 2.5 r\nq1 Q0 d2 1 1.5 r\nq1 Q0 d3 2.0 1 r\n")
    expected = pl.DataFrame(
        [("q1", "d1", 3, 2.5, "r"), ("q1", "d2", 1, 1.5, "r"), ("q1", "d3", 2, 1.0, "r")],
        schema=RUN_SCHEMA_RANK,
        orient="row",
    )
    assert_frame_equal(read_trec_run(path, keep_rank=True), expected)
    assert_frame_equal(scan_trec_run(path, keep_rank=True).collect(), expected)


@pytest.mark.parametrize("keep_rank", [False, True])
@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n  \n"], ids=repr)
def test_read_trec_run_empty(tmp_path: Path, keep_rank: bool, text: str) -> None:
    path = _write(tmp_path / "run.txt", text)
    schema = RUN_SCHEMA_RANK if keep_rank else RUN_SCHEMA
    for frame in (
        read_trec_run(path, keep_rank=keep_rank),
        scan_trec_run(path, keep_rank=keep_rank).collect(),
    ):
        assert frame.height == 0
        assert frame.schema == pl.Schema(schema)
    assert scan_trec_run(path, keep_rank=keep_rank).collect_schema() == pl.Schema(schema)


RUN_ERROR_CASES = [
    pytest.param(
        "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.5\n",
        False,
        f"runs/bm25.txt, line 3: {RUN_FIELDS}, got 5: 'q1 Q0 d3 3 1.5'",
        id="five-fields",
    ),
    pytest.param(
        "# comment\n\nq1\tQ0 d1 1\n",
        False,
        f"runs/bm25.txt, line 3: {RUN_FIELDS}, got 4: 'q1\\tQ0 d1 1'",
        id="line-number-counts-comments-and-blanks-and-tab-shown",
    ),
    pytest.param(
        "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 abc r\n",
        False,
        "runs/bm25.txt, line 2: score 'abc' is not a number: 'q1 Q0 d2 2 abc r'",
        id="score-not-numeric",
    ),
    pytest.param(
        "q1 Q0 d2 2 nan r\n",
        False,
        "runs/bm25.txt, line 1: score 'nan' is not a number: 'q1 Q0 d2 2 nan r'",
        id="score-nan",
    ),
    pytest.param(
        "q1 Q0 d2 2 1,5 r\n",
        False,
        "runs/bm25.txt, line 1: score '1,5' is not a number: 'q1 Q0 d2 2 1,5 r'",
        id="score-decimal-comma",
    ),
    pytest.param(
        "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 two 1.5 r\n",
        True,
        "runs/bm25.txt, line 2: rank 'two' is not an integer: 'q1 Q0 d2 two 1.5 r'",
        id="rank-not-integer-with-keep-rank",
    ),
    pytest.param(
        "q1 Q0 d2 2.5 1.5 r\n",
        True,
        "runs/bm25.txt, line 1: rank '2.5' is not an integer: 'q1 Q0 d2 2.5 1.5 r'",
        id="rank-fractional-with-keep-rank",
    ),
    pytest.param(
        "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 x r\nq1 Q0 d3\n",
        False,
        "runs/bm25.txt, line 2: score 'x' is not a number: 'q1 Q0 d2 2 x r'",
        id="first-bad-line-reported",
    ),
    pytest.param(
        "  q1 Q0 d3 3 1.5  \r\n",
        False,
        f"runs/bm25.txt, line 1: {RUN_FIELDS}, got 5: '  q1 Q0 d3 3 1.5  '",
        id="line-shown-as-is-without-line-ending",
    ),
]


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda p, k: read_trec_run(p, keep_rank=k), id="read"),
        pytest.param(lambda p, k: scan_trec_run(p, keep_rank=k).collect(), id="scan"),
        pytest.param(
            lambda p, k: scan_trec_run(p, keep_rank=k).collect(engine="streaming"),
            id="scan-streaming",
        ),
    ],
)
@pytest.mark.parametrize(("text", "keep_rank", "message"), RUN_ERROR_CASES)
def test_read_trec_run_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    read: Callable[[str, bool], pl.DataFrame],
    text: str,
    keep_rank: bool,
    message: str,
) -> None:
    _write(tmp_path / "runs" / "bm25.txt", text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TrecFormatError, match=f"^{re.escape(message)}$"):
        read("runs/bm25.txt", keep_rank)


def test_trec_format_error_is_a_value_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.txt", "q1 Q0 d1\n")
    with pytest.raises(ValueError, match="line 1"):
        read_trec_run(path)


@pytest.mark.parametrize("name", ["run.txt.gz", "run.txt"])
def test_read_trec_run_gzip(tmp_path: Path, name: str) -> None:
    text = "# gz\nq1\tQ0 007 1 2.5 r\nq1 Q0 d2 2 1.5 r\n"
    path = _write(tmp_path / name, text, compress=True)
    expected = _run([("q1", "007", 2.5, "r"), ("q1", "d2", 1.5, "r")])
    assert_frame_equal(read_trec_run(path), expected)
    assert_frame_equal(scan_trec_run(path).collect(), expected)


def test_read_trec_run_gzip_error_names_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.gz", "q1 Q0 d1 1 2.5 r\n\nq1 Q0 d2 2 x r\n", compress=True)
    message = f"{path}, line 3: score 'x' is not a number: 'q1 Q0 d2 2 x r'"
    with pytest.raises(TrecFormatError, match=f"^{re.escape(message)}$"):
        read_trec_run(path)


def test_read_trec_run_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 2.5 r\nq1 Q0 d\xff 2 1.5 r\n")
    message = (
        f"{path}, line 2: not valid UTF-8: b'q1 Q0 d\\xff 2 1.5 r'{_REENCODE}; expected a "
        "TREC run "
        "(query_id Q0 doc_id rank score run_id) or qrels (query_id iteration doc_id "
        "relevance) text file"
    )
    with pytest.raises(TrecFormatError, match=f"^{re.escape(message)}$"):
        read_trec_run(path)


def test_read_trec_run_path_with_glob_characters(tmp_path: Path) -> None:
    path = _write(tmp_path / "run[1]*.txt", "q1 Q0 d1 1 2.5 r\n")
    assert read_trec_run(path)["doc_id"].to_list() == ["d1"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_trec_run(tmp_path / "missing.txt")
    with pytest.raises(FileNotFoundError):
        read_trec_qrels(tmp_path / "missing.txt")
    # a scan reads the file's first bytes (compression, binary data) when it is built
    with pytest.raises(MissingFileError, match=re.escape("no such file; expected a TREC")):
        scan_trec_run(tmp_path / "missing.txt")


def test_bytes_path_rejected() -> None:
    with pytest.raises(
        ColumnTypeError,
        match=re.escape(
            "source must be a file path (str or os.PathLike[str]), got b'run.txt'; "
            "pass it as text, e.g. os.fsdecode(path)"
        ),
    ) as info:
        read_trec_run(b"run.txt")  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("source", [5, None])
def test_a_source_that_is_no_path_is_refused(source: object) -> None:
    # os.fspath's built-in TypeError reached the user
    message = (
        f"source must be a file path (str or os.PathLike[str]), got {source!r}; pass the "
        "file's path, e.g. 'run.txt' or pathlib.Path('run.txt')"
    )
    for read in (read_trec_run, read_trec_qrels, scan_trec_run):
        with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
            read(source)  # type: ignore[operator]


def test_keep_rank_is_true_or_false(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.5 r\n")
    with pytest.raises(InvalidValueError, match=r"^keep_rank must be True or False, got 'yes'$"):
        read_trec_run(path, keep_rank="yes")  # type: ignore[arg-type]


def test_scan_trec_run_is_lazy_and_composes(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.5 r\nq2 Q0 d2 1 1.5 r\nq2 Q0 d3 2 0.5 r\n")
    lazy = scan_trec_run(path)
    assert isinstance(lazy, pl.LazyFrame)
    counts = lazy.group_by("query_id").len().sort("query_id").collect()
    assert counts.rows() == [("q1", 1), ("q2", 2)]


def test_scan_checks_whole_file_even_when_sliced(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 x r\n")
    with pytest.raises(TrecFormatError, match="line 2"):
        scan_trec_run(path).head(1).collect()


# ---------------------------------------------------------------------- reading qrels

QRELS_PARSE_CASES = [
    pytest.param(
        "q1 0 d1 2\nq1 0 d2 0\n",
        [("q1", "d1", 2), ("q1", "d2", 0)],
        pl.Int64,
        id="integers",
    ),
    pytest.param(
        "q1 0 d1 -1\nq1 0 d2 -2\nq1 0 d3 1\n",
        [("q1", "d1", -1), ("q1", "d2", -2), ("q1", "d3", 1)],
        pl.Int64,
        id="negative-kept",
    ),
    pytest.param(
        "q1 0 d1 1\nq1 0 d2 0.5\n",
        [("q1", "d1", 1.0), ("q1", "d2", 0.5)],
        pl.Float64,
        id="fractional-makes-float",
    ),
    pytest.param(
        "q1 0 d1 -0.25\n",
        [("q1", "d1", -0.25)],
        pl.Float64,
        id="negative-fractional",
    ),
    pytest.param(
        "q1 0 d1 1.0\nq1 0 d2 2\nq1 0 d3 1e1\n",
        [("q1", "d1", 1), ("q1", "d2", 2), ("q1", "d3", 10)],
        pl.Int64,
        id="whole-floats-are-integers",
    ),
    pytest.param(
        "  q1\t0  007 \t1 \r\n# comment\n\n0001 Q0 00 0\n",
        [("q1", "007", 1), ("0001", "00", 0)],
        pl.Int64,
        id="whitespace-comments-leading-zeros",
    ),
    pytest.param(
        "q1 0 d1 9007199254740993\n",
        [("q1", "d1", 9007199254740993)],
        pl.Int64,
        id="large-integer-exact",
    ),
    pytest.param("", [], pl.Int64, id="empty-is-int64"),
]


@pytest.mark.parametrize(("text", "rows", "dtype"), QRELS_PARSE_CASES)
def test_read_trec_qrels_parses(
    tmp_path: Path,
    text: str,
    rows: list[tuple[str, str, Any]],
    dtype: type[pl.DataType],
) -> None:
    path = _write(tmp_path / "qrels.txt", text)
    assert_frame_equal(read_trec_qrels(path), _qrels(rows, dtype))
    floats = _qrels(rows, dtype).with_columns(pl.col("relevance").cast(pl.Float64))
    assert_frame_equal(scan_trec_qrels(path).collect(), floats)
    assert_frame_equal(read_trec_qrels(path, relevance_dtype=pl.Float64), floats)


@pytest.mark.parametrize("dtype", [pl.Int64, pl.Int64()])
def test_qrels_int64_requested(tmp_path: Path, dtype: pl.DataType | type[pl.DataType]) -> None:
    path = _write(tmp_path / "qrels.txt", "q1 0 d1 2\nq1 0 d2 -1\nq1 0 d3 3.0\n")
    expected = _qrels([("q1", "d1", 2), ("q1", "d2", -1), ("q1", "d3", 3)], pl.Int64)
    assert_frame_equal(read_trec_qrels(path, relevance_dtype=dtype), expected)
    assert_frame_equal(scan_trec_qrels(path, relevance_dtype=dtype).collect(), expected)


def test_scan_trec_qrels_schema(tmp_path: Path) -> None:
    path = _write(tmp_path / "qrels.txt", "q1 0 d1 2\n")
    assert scan_trec_qrels(path).collect_schema() == pl.Schema(
        {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Float64}
    )
    assert scan_trec_qrels(path, relevance_dtype=pl.Int64).collect_schema() == pl.Schema(
        {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}
    )


@pytest.mark.parametrize("dtype", [pl.String, pl.Int32, pl.Float32()])
def test_qrels_bad_relevance_dtype(tmp_path: Path, dtype: pl.DataType | type[pl.DataType]) -> None:
    path = _write(tmp_path / "qrels.txt", "q1 0 d1 2\n")
    message = f"relevance_dtype must be pl.Int64 or pl.Float64, got {dtype!r}"
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        scan_trec_qrels(path, relevance_dtype=dtype)
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        read_trec_qrels(path, relevance_dtype=dtype)


QRELS_ERROR_CASES = [
    pytest.param(
        "q1 0 d1 1\nq1 0 d2\n",
        None,
        f"qrels.txt, line 2: {QRELS_FIELDS}, got 3: 'q1 0 d2'",
        id="three-fields",
    ),
    pytest.param(
        "# c\nq1 0 d1 1 extra\n",
        None,
        f"qrels.txt, line 2: {QRELS_FIELDS}, got 5: 'q1 0 d1 1 extra'",
        id="five-fields",
    ),
    pytest.param(
        "q1 0 d1 rel\n",
        None,
        "qrels.txt, line 1: relevance 'rel' is not a number: 'q1 0 d1 rel'",
        id="not-numeric",
    ),
    pytest.param(
        "q1 0 d1 1\nq1 0 d1 inf\n",
        None,
        "qrels.txt, line 2: relevance 'inf' is not a finite number: 'q1 0 d1 inf'",
        id="infinite",
    ),
    pytest.param(
        "q1 0 d1 nan\n",
        pl.Float64,
        "qrels.txt, line 1: relevance 'nan' is not a finite number: 'q1 0 d1 nan'",
        id="nan",
    ),
    pytest.param(
        "q1 0 d1 1\n\nq1\t0\td2\t0.5\n",
        pl.Int64,
        "qrels.txt, line 3: relevance '0.5' is not an integer (relevance_dtype=Int64): "
        "'q1\\t0\\td2\\t0.5'",
        id="fraction-with-int64",
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["read", "scan"])
@pytest.mark.parametrize(("text", "dtype", "message"), QRELS_ERROR_CASES)
def test_read_trec_qrels_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lazy: bool,
    text: str,
    dtype: type[pl.DataType] | None,
    message: str,
) -> None:
    _write(tmp_path / "qrels.txt", text)
    monkeypatch.chdir(tmp_path)
    if lazy:
        frame = scan_trec_qrels("qrels.txt", relevance_dtype=dtype or pl.Float64)
        with pytest.raises(TrecFormatError, match=f"^{re.escape(message)}$"):
            frame.collect()
    else:
        with pytest.raises(TrecFormatError, match=f"^{re.escape(message)}$"):
            read_trec_qrels("qrels.txt", relevance_dtype=dtype)


def test_read_trec_qrels_gzip(tmp_path: Path) -> None:
    path = _write(tmp_path / "qrels.gz", "q1 0 d1 1\nq1 0 d2 0.5\n", compress=True)
    expected = _qrels([("q1", "d1", 1.0), ("q1", "d2", 0.5)], pl.Float64)
    assert_frame_equal(read_trec_qrels(path), expected)
    assert_frame_equal(scan_trec_qrels(path).collect(), expected)


# ----------------------------------------------------------------------------- writing

WRITE_CASES = [
    pytest.param(
        {"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "b", "c"], "score": [1.0, 3.0, 2.0]},
        {},
        "q1 Q0 b 1 3.0 irm\nq1 Q0 c 2 2.0 irm\nq1 Q0 a 3 1.0 irm\n",
        id="by-score-descending",
    ),
    pytest.param(
        {"query_id": ["q1"] * 3, "doc_id": ["d10", "d9", "d2"], "score": [1.0, 1.0, 1.0]},
        {},
        "q1 Q0 d9 1 1.0 irm\nq1 Q0 d2 2 1.0 irm\nq1 Q0 d10 3 1.0 irm\n",
        id="score-ties-by-doc-id-descending-as-text",
    ),
    pytest.param(
        {"query_id": ["q2", "q10", "q1"], "doc_id": ["a", "b", "c"], "score": [1, 2, 3]},
        {"run_id": "x"},
        "q1 Q0 c 1 3 x\nq10 Q0 b 1 2 x\nq2 Q0 a 1 1 x\n",
        id="queries-sorted-as-text-integer-score",
    ),
    pytest.param(
        {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "rank": [3, 1, 2]},
        {},
        "q1 Q0 b 1 -1 irm\nq1 Q0 c 2 -2 irm\nq1 Q0 a 3 -3 irm\n",
        id="rank-column-found-score-is-minus-rank",
    ),
    pytest.param(
        {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "rank": [10, 20, 20]},
        {},
        "q1 Q0 a 1 -1 irm\nq1 Q0 c 2 -2 irm\nq1 Q0 b 3 -3 irm\n",
        id="rank-ties-by-doc-id-descending-and-renumbered",
    ),
    pytest.param(
        {
            "query_id": ["q1"] * 3,
            "doc_id": ["a", "b", "c"],
            "rank": [1, 2, 2],
            "score": [9.0, 1.0, 5.0],
        },
        {},
        "q1 Q0 a 1 9.0 irm\nq1 Q0 c 2 5.0 irm\nq1 Q0 b 3 1.0 irm\n",
        id="rank-and-score-orders-by-rank-writes-score",
    ),
    pytest.param(
        {"query_id": ["q1"] * 2, "doc_id": ["a", "b"], "rank": [1, 2], "score": [1.0, 2.0]},
        {"score": "score"},
        "q1 Q0 b 1 2.0 irm\nq1 Q0 a 2 1.0 irm\n",
        id="explicit-score-wins-over-rank-column",
    ),
    pytest.param(
        {"qid": ["q1"] * 2, "docno": ["a", "b"], "pos": [2, 1], "rank": [1, 2]},
        {"query_id": "qid", "doc_id": "docno", "rank": "pos", "run_id": "mine"},
        "q1 Q0 b 1 -1 mine\nq1 Q0 a 2 -2 mine\n",
        id="custom-column-names",
    ),
    pytest.param(
        {"query_id": [2, 1], "doc_id": [7, 8], "s": [0.1, 1 / 3]},
        {"score": "s"},
        "1 Q0 8 1 0.3333333333333333 irm\n2 Q0 7 1 0.1 irm\n",
        id="integer-ids-full-precision-scores",
    ),
    pytest.param(
        {
            "query_id": pl.Series([], dtype=pl.String),
            "doc_id": pl.Series([], dtype=pl.String),
            "score": pl.Series([], dtype=pl.Float64),
        },
        {},
        "",
        id="empty",
    ),
]


@pytest.mark.parametrize(
    "as_input",
    [pytest.param(lambda f: f, id="DataFrame"), pytest.param(pl.DataFrame.lazy, id="LazyFrame")],
)
@pytest.mark.parametrize(("data", "kwargs", "expected"), WRITE_CASES)
def test_write_trec_run(
    tmp_path: Path,
    as_input: Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame],
    data: dict[str, Any],
    kwargs: dict[str, Any],
    expected: str,
) -> None:
    frame = pl.DataFrame(data)
    path = tmp_path / "out.run"
    write_trec_run(as_input(frame), path, **kwargs)
    assert path.read_text() == expected


def test_write_trec_run_categorical_ids(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {"query_id": ["q2", "q1"], "doc_id": ["b", "a"], "score": [1.0, 2.0]},
        schema_overrides={"query_id": pl.Categorical, "doc_id": pl.Enum(["a", "b"])},
    )
    path = tmp_path / "out.run"
    write_trec_run(frame, path)
    assert path.read_text() == "q1 Q0 a 1 2.0 irm\nq2 Q0 b 1 1.0 irm\n"


def test_write_trec_run_gzip(tmp_path: Path) -> None:
    frame = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [0.5]})
    path = tmp_path / "out.run.gz"
    write_trec_run(frame, str(path))
    assert gzip.decompress(path.read_bytes()) == b"q1 Q0 d1 1 0.5 irm\n"
    assert_frame_equal(read_trec_run(path), _run([("q1", "d1", 0.5, "irm")]))


def test_round_trip(tmp_path: Path) -> None:
    run = _run(
        [
            ("q1", "007", 2.5, "bm25"),
            ("q1", "d2", 1e-300, "bm25"),
            ("q10", "x", -3.25, "bm25"),
            ("q2", "d9", 0.1, "bm25"),
        ]
    )
    path = tmp_path / "out.run"
    write_trec_run(run, path, run_id="bm25")
    assert_frame_equal(read_trec_run(path), run)
    with_rank = read_trec_run(path, keep_rank=True)
    assert with_rank["rank"].to_list() == [1, 2, 1, 1]


def test_rank_only_write_keeps_order_under_trec_eval_rule(tmp_path: Path) -> None:
    """trec_eval re-sorts by score; the derived score must reproduce the rank order."""
    frame = pl.DataFrame(
        {"query_id": ["q"] * 5, "doc_id": ["e", "a", "d", "b", "c"], "rank": [5, 1, 4, 2, 3]}
    )
    path = tmp_path / "out.run"
    write_trec_run(frame, path)
    back = read_trec_run(path)
    resorted = back.sort(["score", "doc_id"], descending=[True, True])
    assert resorted["doc_id"].to_list() == ["a", "b", "c", "d", "e"]


ids = st.text(alphabet="abcxyz0123456789_-.", min_size=1, max_size=6).filter(
    lambda s: not s.startswith("#")
)
scores = st.floats(allow_nan=False, allow_infinity=True, width=64)


@settings(max_examples=50, deadline=None)
@given(rows=st.lists(st.tuples(ids, ids, scores), max_size=30, unique_by=lambda r: (r[0], r[1])))
def test_round_trip_property(tmp_path_factory: pytest.TempPathFactory, rows: list[Any]) -> None:
    frame = pl.DataFrame(
        rows,
        schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64},
        orient="row",
    )
    path = tmp_path_factory.mktemp("rt") / "run.txt"
    write_trec_run(frame, path, run_id="r")
    back = read_trec_run(path)
    expected = frame.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
    assert_frame_equal(back.drop("run_id"), expected)
    assert back["run_id"].to_list() == ["r"] * len(rows)


BASE = {"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}
COLUMNS = "['query_id', 'doc_id', 'score']"

WRITE_ERROR_CASES = [
    pytest.param(
        BASE,
        {"query_id": "qid"},
        ColumnNotFoundError,
        f"query_id column 'qid' is not in the frame; the frame has columns {COLUMNS}",
        id="missing-query-id",
    ),
    pytest.param(
        BASE,
        {"doc_id": "docno"},
        ColumnNotFoundError,
        f"doc_id column 'docno' is not in the frame; the frame has columns {COLUMNS}",
        id="missing-doc-id",
    ),
    pytest.param(
        BASE,
        {"score": "sim"},
        ColumnNotFoundError,
        f"score column 'sim' is not in the frame; the frame has columns {COLUMNS}",
        id="missing-score",
    ),
    pytest.param(
        BASE,
        {"rank": "pos"},
        ColumnNotFoundError,
        f"rank column 'pos' is not in the frame; the frame has columns {COLUMNS}",
        id="missing-rank",
    ),
    pytest.param(
        {"query_id": ["q1"], "doc_id": ["d1"], "sim": [1.0]},
        {},
        ColumnNotFoundError,
        "write_trec_run needs a score or a rank column to order the documents: pass score= "
        "or rank=, or name a column 'score' or 'rank'; the frame has columns "
        "['query_id', 'doc_id', 'sim']",
        id="no-score-or-rank",
    ),
    pytest.param(
        {"query_id": [1.5], "doc_id": ["d1"], "score": [1.0]},
        {},
        ColumnTypeError,
        "id column 'query_id' has dtype Float64; a TREC id must be text (String, Categorical, "
        "Enum) or an integer",
        id="float-query-id",
    ),
    pytest.param(
        {"query_id": ["q1"], "doc_id": ["d1"], "score": ["1.0"]},
        {},
        ColumnTypeError,
        "column 'score' has dtype String; it must be numeric",
        id="string-score",
    ),
    pytest.param(
        {"query_id": ["q1"], "doc_id": ["d1"], "rank": [True]},
        {},
        ColumnTypeError,
        "column 'rank' has dtype Boolean; it must be numeric",
        id="boolean-rank",
    ),
    pytest.param(
        {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, None]},
        {},
        InvalidValueError,
        "column 'score' has 1 null value(s); every line of a run file needs a value",
        id="null-score",
    ),
    pytest.param(
        {"query_id": ["q1", None], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]},
        {},
        InvalidValueError,
        "column 'query_id' has 1 null value(s); every line of a run file needs a value",
        id="null-query-id",
    ),
    pytest.param(
        {"query_id": ["q1"], "doc_id": ["d1"], "score": [float("nan")]},
        {},
        InvalidValueError,
        "column 'score' has 1 NaN value(s)",
        id="nan-score",
    ),
    pytest.param(
        {"query_id": ["q1"], "doc_id": ["d1"], "pos": [float("nan")]},
        {"rank": "pos"},
        InvalidValueError,
        "column 'pos' has 1 NaN value(s)",
        id="nan-rank",
    ),
    pytest.param(
        {"query_id": ["q1"], "doc_id": ["d 1"], "score": [1.0]},
        {},
        InvalidValueError,
        "id column 'doc_id' has 1 empty id(s) or id(s) containing whitespace, e.g. 'd 1'; "
        "TREC files are whitespace-separated",
        id="doc-id-with-space",
    ),
    pytest.param(
        {"query_id": ["", "q\t2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]},
        {},
        InvalidValueError,
        "id column 'query_id' has 2 empty id(s) or id(s) containing whitespace, e.g. ''; "
        "TREC files are whitespace-separated",
        id="empty-query-id",
    ),
    pytest.param(
        {"query_id": ["#1"], "doc_id": ["d1"], "score": [1.0]},
        {},
        InvalidValueError,
        "query id '#1' (column 'query_id') starts with '#'; the line would read back as a comment",
        id="comment-query-id",
    ),
    pytest.param(
        BASE,
        {"run_id": "my run"},
        InvalidValueError,
        "run_id must be a non-empty string without whitespace, got 'my run'",
        id="run-id-with-space",
    ),
    pytest.param(
        BASE,
        {"run_id": ""},
        InvalidValueError,
        "run_id must be a non-empty string without whitespace, got ''",
        id="empty-run-id",
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("data", "kwargs", "error", "message"), WRITE_ERROR_CASES)
def test_write_trec_run_errors(
    tmp_path: Path,
    lazy: bool,
    data: dict[str, list[Any]],
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    frame = pl.DataFrame(data)
    path = tmp_path / "out.run"
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        write_trec_run(frame.lazy() if lazy else frame, path, **kwargs)
    assert not path.exists()
