"""File readers and writers, round 5: line endings, exact labels, byte-order marks,
the shared input checks of the small trec_eval formats, unreadable files and the run
tag written back."""

from __future__ import annotations

import builtins
import bz2
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    FileFormatError,
    InvalidValueError,
    MissingFileError,
    TrecFormatError,
)
from polars_irmetrics.io.files import scan_qrels, scan_run
from polars_irmetrics.io.prefs import read_trec_qrels_prefs
from polars_irmetrics.io.zscores import read_trec_zscores

#: The fix a file that is not UTF-8 is refused with.
_REENCODE = (
    " (text files are read as UTF-8: re-encode it, e.g. iconv -f latin1 -t utf-8, and the "
    "files whose ids it must match alike)"
)


_PREFS_WHAT = (
    "a text file of 5 whitespace-separated fields per line (query_id jg jsg doc_id rel_level)"
)
_JG_WHAT = "a text file of 4 whitespace-separated fields per line (query_id jg doc_id relevance)"
_TREC_WHAT = (
    "a TREC run (query_id Q0 doc_id rank score run_id) or qrels (query_id iteration doc_id "
    "relevance) text file"
)


def _write(path: Path, data: str | bytes) -> str:
    if isinstance(data, str):
        path.write_bytes(data.encode())
    else:
        path.write_bytes(data)
    return str(path)


# ---------------------------------------------------------------- 1. lone CR endings


def test_carriage_return_line_endings_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.txt", "q1 Q0 d1 1 2.0 r\rq1 Q0 d2 2 1.0 r\rq1 Q0 d3 3 0.5 r\r")
    with pytest.raises(TrecFormatError) as info:
        irm.read_trec_run(path)
    assert str(info.value) == (
        f"{path}, line 1: lines end in carriage returns (\\r) without line feeds (\\n), so "
        "the whole file would read as one line, starting 'q1 Q0 d1 1 2.0 r'; expected "
        f"{_TREC_WHAT}: convert the line endings to \\n (e.g. tr '\\r' '\\n' < old > new)"
    )

    # CRLF endings, and one line ending in CR, still read
    crlf = _write(tmp_path / "crlf.txt", "q1 Q0 d1 1 2.0 r\r\nq1 Q0 d2 2 1.0 r\r\n")
    assert irm.read_trec_run(crlf)["doc_id"].to_list() == ["d1", "d2"]
    one = _write(tmp_path / "one.txt", "q1 Q0 d1 1 2.0 r\r")
    assert irm.read_trec_run(one)["doc_id"].to_list() == ["d1"]


def test_carriage_return_line_endings_are_refused_by_the_qrels_and_prefs_readers(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path / "q.txt", "q1 0 d1 1\rq1 0 d2 0\r")
    with pytest.raises(TrecFormatError, match=r"line 1: lines end in carriage returns"):
        irm.read_trec_qrels(path)
    with pytest.raises(TrecFormatError, match=r"line 1: lines end in carriage returns"):
        irm.read_trec_qrels_jg(path)


# ---------------------------------------------------------------- 2. exact labels


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("inf", "is not a finite number: 'q1 a d1 inf'; write a whole-number label"),
        ("-inf", "is not a finite number: 'q1 a d1 -inf'; write a whole-number label"),
        ("nan", "is not a finite number: 'q1 a d1 nan'; write a whole-number label"),
        (  # read as atol reads it (get_qrels_jg.c): 1e30 is 1, these digits overflow
            "99999999999999999999",
            "is out of the range of a 64-bit integer: 'q1 a d1 99999999999999999999'; "
            "write a whole-number label",
        ),
    ],
)
def test_qrels_jg_refuses_labels_that_are_no_integer(
    tmp_path: Path, token: str, problem: str
) -> None:
    path = _write(tmp_path / "jg.txt", f"q0 a d0 1\nq1 a d1 {token}\n")
    with pytest.raises(TrecFormatError) as info:
        irm.read_trec_qrels_jg(path)
    assert str(info.value) == f"{path}, line 2: relevance {token!r} {problem}"


def test_qrels_jg_reads_integers_exactly(tmp_path: Path) -> None:
    path = _write(tmp_path / "jg.txt", "q1 a d1 9007199254740993\nq1 b d1 2.7\nq1 c d1 -2.7\n")
    assert irm.read_trec_qrels_jg(path)["relevance"].to_list() == [9007199254740993, 2, -2]


@pytest.mark.parametrize("token", ["inf", "-inf", "nan"])
def test_prefs_refuse_a_level_that_is_not_finite(tmp_path: Path, token: str) -> None:
    path = _write(tmp_path / "prefs.txt", f"q1 u s d1 {token}\n")
    with pytest.raises(TrecFormatError) as info:
        irm.read_trec_prefs(path)
    assert str(info.value) == (
        f"{path}, line 1: rel_level {token!r} is not a finite number: "
        f"'q1 u s d1 {token}'; write a finite number"
    )
    qrels = _write(tmp_path / "qrels.txt", f"q1 0 d1 {token}\n")
    with pytest.raises(TrecFormatError) as info:
        read_trec_qrels_prefs(qrels)
    assert str(info.value) == (
        f"{qrels}, line 1: relevance {token!r} is not a finite number: "
        f"'q1 0 d1 {token}'; write a finite number"
    )


# ---------------------------------------------------------------- 3. byte-order mark


def test_the_small_formats_strip_a_byte_order_mark(tmp_path: Path) -> None:
    prefs = _write(tmp_path / "prefs.txt", "\ufeffq1 u s d1 2\nq1 u s d2 1\n")
    assert irm.read_trec_prefs(prefs)["query_id"].to_list() == ["q1", "q1"]
    jg = _write(tmp_path / "jg.txt", "\ufeffq1 a d1 1\n")
    assert irm.read_trec_qrels_jg(jg)["query_id"].to_list() == ["q1"]
    assert read_trec_qrels_prefs(jg)["query_id"].to_list() == ["q1"]
    z = _write(tmp_path / "z.txt", "\ufeff301 P_10 0.3 0.2\n")
    with pytest.raises(TrecFormatError) as info:  # the listed-twice check sees the same id
        read_trec_zscores(_write(tmp_path / "z2.txt", "\ufeff301 P_10 0.3 0.2\n301 P_10 1 1\n"))
    assert str(info.value).endswith("query 301, measure P_10 is listed twice (first on line 1)")
    assert read_trec_zscores(z) is not None


# ---------------------------------------------------------------- 4. shared checks


def test_the_small_formats_name_a_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.txt")
    with pytest.raises(MissingFileError) as info:
        irm.read_trec_prefs(path)
    assert str(info.value) == f"{path}: no such file; expected {_PREFS_WHAT}"
    with pytest.raises(MissingFileError) as info:
        irm.read_trec_qrels_jg(path)
    assert str(info.value) == f"{path}: no such file; expected {_JG_WHAT}"
    with pytest.raises(MissingFileError, match="no such file"):
        read_trec_zscores(path)


def test_the_small_formats_refuse_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "prefs"
    folder.mkdir()
    _write(folder / "a.txt", "q1 u s d1 2\n")
    with pytest.raises(FileFormatError) as info:
        irm.read_trec_prefs(folder)
    assert str(info.value) == f"{folder}: not a file; expected {_PREFS_WHAT}"
    with pytest.raises(FileFormatError) as info:
        read_trec_qrels_prefs(folder)
    assert str(info.value).startswith(f"{folder}: not a file; expected")


def test_the_small_formats_read_bzip2(tmp_path: Path) -> None:
    path = _write(tmp_path / "prefs.bz2", bz2.compress(b"q1 u s d1 2\nq1 u s d2 1\n"))
    assert irm.read_trec_prefs(path)["doc_id"].to_list() == ["d1", "d2"]


def test_the_small_formats_name_a_line_that_is_not_utf8(tmp_path: Path) -> None:
    path = _write(tmp_path / "jg.txt", b"q1 a d1 1\nq1 a d\xe9 1\n")
    with pytest.raises(TrecFormatError) as info:
        irm.read_trec_qrels_jg(path)
    assert str(info.value) == (
        f"{path}, line 2: not valid UTF-8: b'q1 a d\\xe9 1'{_REENCODE}; expected {_JG_WHAT}"
    )


# ---------------------------------------------------------------- 5. permission denied


def _deny(monkeypatch: pytest.MonkeyPatch, denied: str) -> None:
    real_open = builtins.open

    def fake_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == denied:
            raise PermissionError(13, "Permission denied", denied)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)


def _unreadable(path: str, what: str) -> str:
    return (
        f"{path}: permission denied, the file cannot be read; expected {what}: make it "
        "readable by this user (e.g. chmod u+r) or read a copy that is"
    )


@pytest.mark.parametrize(
    ("read", "what"),
    [
        pytest.param(irm.read_trec_run, _TREC_WHAT, id="read_trec_run"),
        pytest.param(lambda p: irm.scan_trec_run(p).collect(), _TREC_WHAT, id="scan_trec_run"),
        pytest.param(irm.read_trec_qrels, _TREC_WHAT, id="read_trec_qrels"),
        pytest.param(irm.read_trec_prefs, _PREFS_WHAT, id="read_trec_prefs"),
    ],
)
def test_an_unreadable_file_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: Any, what: str
) -> None:
    path = _write(tmp_path / "f.txt", "q1 Q0 d1 1 2.0 r\n")
    _deny(monkeypatch, path)
    with pytest.raises(FileFormatError) as info:
        read(path)
    assert str(info.value) == _unreadable(path, what)


def test_an_unreadable_file_is_named_by_the_format_detecting_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _write(tmp_path / "run.txt", "q1 Q0 d1 1 2.0 r\n")
    qrels = _write(tmp_path / "qrels.txt", "q1 0 d1 1\n")
    real_open = Path.open

    def fake_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        if str(self) in (run, qrels):
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", fake_open)
    _deny(monkeypatch, qrels)
    _deny(monkeypatch, run)
    with pytest.raises(FileFormatError) as info:
        scan_run(run).collect()
    assert "permission denied, the file cannot be read" in str(info.value)
    assert str(info.value).startswith(f"{run}: ")
    with pytest.raises(FileFormatError) as info:
        scan_qrels(qrels).collect()
    assert str(info.value).startswith(f"{qrels}: permission denied, the file cannot be read;")


# ---------------------------------------------------------------- 6. the run tag


def test_write_keeps_the_run_tag_of_the_frame(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.txt", "q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\n")
    out = tmp_path / "out.txt"
    irm.write_trec_run(irm.read_trec_run(source), out)
    assert out.read_text() == "q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\n"
    irm.write_trec_run(irm.read_trec_run(source), out, run_id="mine")
    assert out.read_text() == "q1 Q0 d1 1 2.0 mine\nq1 Q0 d2 2 1.0 mine\n"
    irm.write_trec_run(irm.read_trec_run(source).drop("run_id"), out)
    assert out.read_text() == "q1 Q0 d1 1 2.0 irm\nq1 Q0 d2 2 1.0 irm\n"


def test_write_refuses_a_frame_of_several_runs(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "query_id": ["q1", "q1"],
            "doc_id": ["d1", "d1"],
            "score": [1.0, 2.0],
            "run_id": ["dense", "bm25"],
        }
    )
    with pytest.raises(InvalidValueError) as info:
        irm.write_trec_run(frame, tmp_path / "out.txt")
    assert str(info.value) == (
        "column 'run_id' holds several run tags ('bm25', 'dense'); a run file has one: "
        "write each run to its own file (e.g. frame.filter(pl.col('run_id') == 'bm25')), "
        "or pass run_id= to write them all under one tag"
    )
    irm.write_trec_run(frame, tmp_path / "out.txt", run_id="both")
    assert (tmp_path / "out.txt").read_text().count(" both\n") == 2


# ---------------------------------------------------------------- 7. exact scores


def test_write_refuses_integer_scores_beyond_2_53(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2**53 + 1, 2**53]}
    )
    with pytest.raises(InvalidValueError) as info:
        irm.write_trec_run(frame, tmp_path / "out.txt")
    assert str(info.value) == (
        "column 'score' holds 1 integer score(s) beyond 2**53, e.g. 9007199254740993; the "
        "file's scores are read back as Float64, where such integers round and may tie: "
        "rescale the scores, or write ranks (drop the score column and pass rank=: the "
        "score written is then -rank)"
    )
    assert not (tmp_path / "out.txt").exists()


def test_write_refuses_decimal_scores_that_would_tie(tmp_path: Path) -> None:
    scores = [Decimal("12345678901234567.01"), Decimal("12345678901234567.02")]
    frame = pl.DataFrame(
        {
            "query_id": ["q1", "q1"],
            "doc_id": ["a", "b"],
            "score": pl.Series(scores, dtype=pl.Decimal(38, 2)),
        }
    )
    with pytest.raises(InvalidValueError) as info:
        irm.write_trec_run(frame, tmp_path / "out.txt")
    assert str(info.value) == (
        "column 'score' holds Decimal scores with more significant digits than a Float64 "
        "keeps (about 17): distinct scores of one query would be written, and read back, as "
        "the same number; round or rescale them, or write ranks instead (rank=, or a score "
        "of -rank)"
    )
    short = frame.with_columns(pl.Series("score", [Decimal("0.3"), Decimal("0.2")]))
    irm.write_trec_run(short, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_text() == "q1 Q0 a 1 0.3 irm\nq1 Q0 b 2 0.2 irm\n"
