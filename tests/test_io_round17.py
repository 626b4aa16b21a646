"""Round 17 readers and command line: the file of a folder or glob that is not Parquet is
refused as such (a folder and a pattern read one Parquet dataset), not with the list of
text formats that a file named alone may have; a JSON lines value that is not a number
in a number column is named with its file and line (it failed at the collect with
polars' text when it came after line 100, or was a Boolean)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_irmetrics.errors import FileFormatError
from polars_irmetrics.io.files import scan_log, scan_qrels, scan_run

from .helpers import irm_in_process

_RUN = "a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or JSON lines"
_TREC_RUN = "q1 Q0 d1 1 3.0 bm25\nq1 Q0 d2 2 2.0 bm25\n"
_TREC_QRELS = "q1 0 d1 1\n"


def _not_parquet(path: str, holder: str, what: str) -> str:
    return (
        f"{path}: not a Parquet file (it does not start with PAR1), and {holder} is read "
        f"as one Parquet dataset ({what}): move the other files out, or name the files one "
        "by one"
    )


def _layout(root: Path) -> None:
    """runs/: two TREC runs (a folder of text files); mixed/: a Parquet run beside a
    note; single.parquet: text under a Parquet name."""
    (root / "runs").mkdir()
    (root / "runs" / "bm25.txt").write_text(_TREC_RUN)
    (root / "runs" / "dense.txt").write_text(_TREC_RUN)
    (root / "mixed").mkdir()
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}).write_parquet(
        root / "mixed" / "a.parquet"
    )
    (root / "mixed" / "notes.txt").write_text("how the runs were made\n")
    (root / "single.parquet").write_text("query_id,doc_id,score\nq1,d1,1\n")
    (root / "qrels.txt").write_text(_TREC_QRELS)


_SCANS = [
    # a folder of TREC runs: the folder is read as Parquet, its first file is text
    (
        "folder of TREC runs",
        lambda: scan_run("runs"),
        _not_parquet("runs/bm25.txt", "the folder runs holds it: a folder", "a run"),
    ),
    (
        "folder of TREC qrels",
        lambda: scan_qrels("runs"),
        _not_parquet("runs/bm25.txt", "the folder runs holds it: a folder", "judgments"),
    ),
    # a pattern whose first match is Parquet, then a note
    (
        "pattern with a note",
        lambda: scan_run("mixed/*"),
        _not_parquet(
            "mixed/notes.txt",
            "the pattern mixed/* matches it: a pattern of Parquet files",
            "a run",
        ),
    ),
    # a file named alone keeps its message: the text formats are open to it
    (
        "file named alone",
        lambda: scan_run("single.parquet"),
        f"single.parquet: not a Parquet file (it does not start with PAR1); expected {_RUN}",
    ),
]


@pytest.mark.parametrize(
    ("scan", "message"), [(s, m) for _, s, m in _SCANS], ids=[n for n, _, _ in _SCANS]
)
def test_scan_names_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scan: object, message: str
) -> None:
    _layout(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileFormatError) as caught:
        scan()  # type: ignore[operator]
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["evaluate", "runs", "--qrels", "qrels.txt"],
            _not_parquet("runs/bm25.txt", "the folder runs holds it: a folder", "a run"),
        ),
        (
            ["trec-eval", "qrels.txt", "runs"],
            _not_parquet("runs/bm25.txt", "the folder runs holds it: a folder", "a run"),
        ),
    ],
    ids=["evaluate", "trec-eval"],
)
def test_cli_folder_of_trec_runs(tmp_path: Path, argv: list[str], message: str) -> None:
    _layout(tmp_path)
    src = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run(
        [sys.executable, "-m", "polars_irmetrics", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"irm: error: {message}\n"


def _json_lines(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


# 300 good lines (polars typed a column from its first 100 lines), then a bad value
_GOOD = [
    {"query_id": f"q{i // 10}", "doc_id": f"d{i}", "score": float(300 - i)} for i in range(300)
]
_JSON_FAULTS = [
    # 'abc' on line 301: polars' default typing read 'score' as Float64, then failed at
    # the collect with "cannot parse 'abc' (string) as Float64", naming no file
    (
        "text after line 100",
        "run.jsonl",
        [*_GOOD, {**_GOOD[0], "score": "abc"}],
        None,
        301,
        "'abc'",
    ),
    # a Boolean among integers: "cannot parse 'true' (bool) as Int64" at the collect
    (
        "boolean",
        "run.jsonl",
        [
            {"query_id": "q1", "doc_id": "d1", "score": 3},
            {"query_id": "q1", "doc_id": "d2", "score": True},
        ],
        None,
        2,
        "'true'",
    ),
    # compressed: the line is found in the decompressed text; a blank line is counted
    ("gzip", "run.jsonl.gz", [*_GOOD[:5], None, {**_GOOD[5], "score": "n/a"}], None, 7, "'n/a'"),
    (
        "judgments",
        "qrels.jsonl",
        [{"query_id": "q1", "doc_id": "d1", "relevance": 1}] * 150
        + [{"query_id": "q1", "doc_id": "d2", "relevance": "high"}],
        "qrels",
        151,
        "'high'",
    ),
]


@pytest.mark.parametrize(
    ("name", "rows", "reader", "line", "shown"),
    [case[1:] for case in _JSON_FAULTS],
    ids=[case[0] for case in _JSON_FAULTS],
)
def test_json_lines_bad_number_names_the_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    rows: list[dict[str, object] | None],
    reader: str | None,
    line: int,
    shown: str,
) -> None:
    text = "".join("\n" if row is None else json.dumps(row) + "\n" for row in rows).encode()
    (tmp_path / name).write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    monkeypatch.chdir(tmp_path)
    column = "relevance" if reader == "qrels" else "score"
    with pytest.raises(FileFormatError) as caught:
        (scan_qrels if reader == "qrels" else scan_run)(name)
    assert str(caught.value) == (
        f"{name}, line {line}: column {column!r} holds {shown}, not a number; fix or drop the line"
    )


def test_json_lines_clean_runs_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean file, and a list-shaped run (lists of scores), read as before."""
    monkeypatch.chdir(tmp_path)
    Path("run.jsonl").write_text(_json_lines(_GOOD))
    assert scan_run("run.jsonl").collect().equals(pl.DataFrame(_GOOD))
    listed = [{"query_id": "q1", "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}]
    Path("listed.jsonl").write_text(_json_lines(listed))
    assert scan_run("listed.jsonl").collect().to_dicts() == listed


def test_cli_json_lines_bad_score(tmp_path: Path) -> None:
    (tmp_path / "run.jsonl").write_text(_json_lines([*_GOOD, {**_GOOD[0], "score": "abc"}]))
    (tmp_path / "qrels.txt").write_text(_TREC_QRELS)
    done = irm_in_process("evaluate", "run.jsonl", "--qrels", "qrels.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: run.jsonl, line 301: column 'score' holds 'abc', not a number; fix or "
        "drop the line\n"
    )


# a header naming a column twice: polars read the first 'score' and renamed the second
# 'score_duplicated_0', whichever the file meant (run.csv scored by 3, 2: the first)
_TWICE = [
    ("run.csv", "query_id,doc_id,score,score\nq1,d1,3,1\nq1,d2,2,5\n", scan_run, "'score'", 3, 4),
    ("run.tsv", "query_id\tdoc_id\tscore\tscore\nq1\td1\t3\t1\n", scan_run, "'score'", 3, 4),
    ("run.csv.gz", "query_id,query_id,doc_id,score\nq1,q2,d1,3\n", scan_run, "'query_id'", 1, 2),
    (
        "qrels.csv",
        "query_id,doc_id,relevance,relevance\nq1,d1,1,0\n",
        scan_qrels,
        "'relevance'",
        3,
        4,
    ),
    ("log.csv", "\ufeffarm,user_id,arm\nA,u1,B\n", scan_log, "'arm'", 1, 3),
]


@pytest.mark.parametrize(
    ("name", "text", "scan", "column", "first", "second"),
    _TWICE,
    ids=[case[0] for case in _TWICE],
)
def test_header_naming_a_column_twice(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    text: str,
    scan: Any,
    column: str,
    first: int,
    second: int,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path(name).write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(FileFormatError) as caught:
        scan(name)
    assert str(caught.value) == (
        f"{name}, line 1: the header names column {column} twice (fields {first} and "
        f"{second}), and only one would be read: rename or drop one"
    )


def test_header_with_distinct_names_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("run.csv").write_text("\ufeffquery_id,doc_id,score,score_2\nq1,d1,3,1\n")
    assert scan_run("run.csv").collect().columns == ["query_id", "doc_id", "score", "score_2"]
