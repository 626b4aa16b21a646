"""Compressed files, standard input, byte-order marks, missing and binary files."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from polars_irmetrics import FileFormatError, MissingFileError, TrecFormatError
from polars_irmetrics.cli.main import main
from polars_irmetrics.io import sources
from polars_irmetrics.io.files import scan_qrels, scan_run
from polars_irmetrics.io.trec import read_trec_qrels, read_trec_run, scan_trec_run

from .helpers import zstd_compress

#: The fix a file that is not UTF-8 is refused with.
_REENCODE = (
    " (text files are read as UTF-8: re-encode it, e.g. iconv -f latin1 -t utf-8, and the "
    "files whose ids it must match alike)"
)


RUN = b"301 Q0 d1 1 2.0 bm25\n301 Q0 d2 2 1.0 bm25\n302 Q0 d1 1 3.0 bm25\n"
QRELS = b"301 0 d2 1\n302 0 d1 2\n302 0 d9 1\n"
CSV_RUN = b"query_id,doc_id,score\n301,d1,2.0\n301,d2,1.0\n302,d1,3.0\n"
BOM = b"\xef\xbb\xbf"


COMPRESSIONS: dict[str, Callable[[bytes], bytes]] = {
    "plain": lambda data: data,
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": zstd_compress,
}


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_compressed_files_read_as_plain_ones(tmp_path: Path, compression: str) -> None:
    pack = COMPRESSIONS[compression]
    # the name says nothing: the content tells
    run = _write(tmp_path / "run", pack(RUN))
    qrels = _write(tmp_path / "qrels", pack(QRELS))
    table = _write(tmp_path / "run.csv", pack(CSV_RUN))
    expected_run = read_trec_run(_write(tmp_path / "plain_run", RUN))
    assert read_trec_run(run).equals(expected_run)
    assert scan_run(run).collect().equals(expected_run)
    assert read_trec_qrels(qrels).equals(read_trec_qrels(_write(tmp_path / "plain_q", QRELS)))
    assert scan_qrels(qrels).collect()["relevance"].to_list() == [1, 2, 1]
    assert scan_run(table).collect().rows() == [
        ("301", "d1", 2.0),
        ("301", "d2", 1.0),
        ("302", "d1", 3.0),
    ]


@pytest.mark.parametrize("compression", ["plain", "gzip", "bzip2"])
def test_a_leading_byte_order_mark_is_stripped(tmp_path: Path, compression: str) -> None:
    pack = COMPRESSIONS[compression]
    run = read_trec_run(_write(tmp_path / "run.txt", pack(BOM + RUN)))
    qrels = read_trec_qrels(_write(tmp_path / "qrels.txt", pack(BOM + QRELS)))
    assert run["query_id"].to_list() == ["301", "301", "302"]
    assert qrels["query_id"].to_list() == ["301", "302", "302"]
    table = scan_run(_write(tmp_path / "run.csv", pack(BOM + CSV_RUN))).collect()
    assert table.columns == ["query_id", "doc_id", "score"]


def test_only_the_first_line_loses_a_byte_order_mark(tmp_path: Path) -> None:
    text = BOM + b"301 Q0 d1 1 2.0 r\n" + BOM + b"302 Q0 d1 1 2.0 r\n"
    run = read_trec_run(_write(tmp_path / "run.txt", text))
    assert run["query_id"].to_list() == ["301", "\ufeff302"]  # an id, as trec_eval reads it


def test_a_byte_order_mark_no_longer_loses_a_query(tmp_path: Path) -> None:
    run = _write(tmp_path / "run.txt", BOM + RUN)
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    assert main(["evaluate", run, "--qrels", qrels, "-m", "map", "--format", "csv"]) == 0


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.txt")
    run_message = (
        f"{missing}: no such file; expected a run: Parquet, a TREC run (query_id Q0 doc_id "
        "rank score run_id), CSV, TSV or JSON lines"
    )
    with pytest.raises(MissingFileError, match=f"^{re.escape(run_message)}$") as info:
        scan_run(missing)
    assert isinstance(info.value, FileNotFoundError)
    qrels_message = (
        f"{missing}: no such file; expected judgments: Parquet, TREC qrels (query_id "
        "iteration doc_id relevance), CSV, TSV or JSON lines"
    )
    with pytest.raises(MissingFileError, match=f"^{re.escape(qrels_message)}$"):
        scan_qrels(missing)
    with pytest.raises(MissingFileError, match=re.escape(f"{missing}.parquet: no such file")):
        scan_run(f"{missing}.parquet")


def test_a_binary_file_is_named(tmp_path: Path) -> None:
    binary = _write(tmp_path / "run.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    message = (
        f"{binary}: binary data, not text (a NUL byte at byte 9); expected a run: Parquet, a "
        "TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or JSON lines, as plain "
        "UTF-8 text or "
        "compressed with gzip, bzip2, xz or zstd"
    )
    with pytest.raises(FileFormatError, match=f"^{re.escape(message)}$"):
        scan_run(binary)


def test_a_corrupt_compressed_file_is_named(tmp_path: Path) -> None:
    broken = _write(tmp_path / "run.bz2", bz2.compress(RUN)[:-10])
    with pytest.raises(FileFormatError, match=re.escape(f"{broken}: not a readable compressed")):
        scan_run(broken)


def test_text_that_is_not_utf8_is_named_with_its_line(tmp_path: Path) -> None:
    latin = _write(tmp_path / "run.txt", RUN + "303 Q0 caf\xe9 1 1.0 r\n".encode("latin-1"))
    with pytest.raises(TrecFormatError, match=re.escape(f"{latin}, line 4: not valid UTF-8")):
        scan_trec_run(latin)


def test_the_cli_names_a_file_not_utf8_past_the_first_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # past the 64 KiB looked at when the scan is built: polars finds it, the CLI names it
    lines = b"".join(b"301 Q0 d%d 1 1.0 r\n" % i for i in range(5000))
    run = _write(tmp_path / "run.txt", lines + b"301 Q0 caf\xe9 1 1.0 r\n")
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    assert main(["evaluate", run, "--qrels", qrels, "-m", "map"]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"irm: error: {run}, line 5001: not valid UTF-8: b'301 Q0 caf\\xe9 1 1.0 r'"
        f"{_REENCODE}\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evaluate", "{binary}", "--qrels", "{qrels}"], "irm: error: {binary}: binary data"),
        (["trec-eval", "{qrels}", "{binary}"], "irm: error: {binary}: binary data"),
        (["trec-eval", "{qrels}", "{missing}"], "irm: error: {missing}: no such file"),
        (["trec-eval", "{missing}", "{run}"], "irm: error: {missing}: no such file"),
        (["evaluate", "-", "--qrels", "-"], "irm: error: standard input ('-') can only be"),
        (["trec-eval", "-", "-"], "irm: error: standard input ('-') can only be"),
    ],
)
def test_the_cli_prints_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    names = {
        "binary": _write(tmp_path / "run.bin", b"\x00\x01\x02"),
        "qrels": _write(tmp_path / "qrels.txt", QRELS),
        "run": _write(tmp_path / "run.txt", RUN),
        "missing": str(tmp_path / "missing.txt"),
    }
    assert main([a.format(**names) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message.format(**names))
    assert err.count("\n") == 1


@pytest.mark.parametrize("compression", ["plain", "bzip2", "zstd"])
def test_standard_input_runs_in_trec_eval(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    stdin: Callable[[bytes], None],
    compression: str,
) -> None:
    qrels = _write(tmp_path / "qrels.txt", QRELS)
    run = _write(tmp_path / "run.txt", RUN)
    assert main(["trec-eval", "-q", "-m", "map", qrels, run]) == 0
    expected = capsys.readouterr().out
    stdin(COMPRESSIONS[compression](RUN))
    assert main(["trec-eval", "-q", "-m", "map", qrels, "-"]) == 0
    assert capsys.readouterr().out == expected
    assert [line.split() for line in expected.splitlines()] == [
        ["map", "301", "0.5000"],
        ["map", "302", "0.5000"],
        ["map", "all", "0.5000"],
    ]


@pytest.mark.parametrize("side", ["run", "qrels"])
def test_standard_input_in_evaluate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    stdin: Callable[[bytes], None],
    side: str,
) -> None:
    files = {"run": _write(tmp_path / "run.txt", RUN), "qrels": _write(tmp_path / "q.txt", QRELS)}
    args = ["-m", "map", "--per-query", "--format", "csv"]
    assert main(["evaluate", files["run"], "--qrels", files["qrels"], *args]) == 0
    expected = capsys.readouterr().out
    stdin(RUN if side == "run" else QRELS)
    files[side] = "-"
    assert main(["evaluate", files["run"], "--qrels", files["qrels"], *args]) == 0
    assert capsys.readouterr().out == expected
    # 301: the relevant d2 at rank 2 of 2; 302: d1 at rank 1, d9 not retrieved (R = 2)
    assert pl.read_csv(io.StringIO(expected))["map"].to_list() == [0.5, 0.5]


def test_parquet_from_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stdin: Callable[[bytes], None]
) -> None:
    run = read_trec_run(_write(tmp_path / "run.txt", RUN))
    sink = io.BytesIO()
    run.write_parquet(sink)
    stdin(sink.getvalue())
    assert scan_run("-").collect().equals(run)


def test_a_pipe_named_by_its_path(tmp_path: Path) -> None:
    # a shell's <(zcat run.gz): read whole once, like standard input
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_bytes, args=(bz2.compress(RUN),))
    writer.start()
    try:
        got = scan_run(str(pipe)).collect()
    finally:
        writer.join()
    assert got.equals(read_trec_run(_write(tmp_path / "run.txt", RUN)))


def test_globs_and_urls_are_left_to_polars(tmp_path: Path) -> None:
    for name in ("a.csv", "b.csv"):
        _write(tmp_path / name, CSV_RUN)
    assert scan_run(str(tmp_path / "*.csv"), "csv").collect().height == 6
    url = "s3://bucket/run.txt"
    assert sources.open_text(url, "a run") == sources.Text(name=url, data=url, head=b"")
