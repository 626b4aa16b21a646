"""Round 13 readers: a glob over a folder with a subfolder that cannot be listed, and
damaged Parquet files named when the scan is built."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_irmetrics.errors import FileFormatError
from polars_irmetrics.io.files import scan_qrels, scan_run
from tests.test_messages_round11 import _unprivileged

_RUN = "a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or JSON lines"
_QRELS = (
    "judgments: Parquet, TREC qrels (query_id iteration doc_id relevance), CSV, TSV or JSON lines"
)


def _folder(name: str, what: str | None) -> str:
    expected = "" if what is None else f"; expected {what}"
    return (
        f"{name}: permission denied, the folder cannot be read{expected}: make it "
        "readable by this user (e.g. chmod u+rx) or read a copy that is"
    )


def _path(name: str, what: str) -> str:
    return (
        f"{name}: permission denied, it cannot be read (a folder on its path may not be "
        f"searched); expected {what}: make that folder searchable by this user (e.g. "
        "chmod u+x) or read a copy that is"
    )


def _tree(root: Path) -> None:
    """runs/a and runs/b each hold a run (CSV, Parquet); ok/ a run and a hidden
    subfolder, which a glob's ``**`` passes over; qrels.csv the judgments."""
    frame = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    for folder in ("runs/a", "runs/b", "ro/x", "ok/.hidden"):
        (root / folder).mkdir(parents=True)
        frame.write_csv(root / folder / "p.csv")
        frame.write_parquet(root / folder / "p.parquet")
    frame.write_csv(root / "ok" / "p.csv")
    (root / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\n")


def _deny_listing(monkeypatch: pytest.MonkeyPatch, root: Path, *folders: str) -> None:
    """``folders`` (under ``root``) can neither be listed nor searched, as a folder
    without permissions (chmod 000), whoever runs the tests (root reads any folder)."""
    real_scandir, real_stat, real_lstat = os.scandir, os.stat, os.lstat
    denied = {os.path.normpath(root / folder) for folder in folders}

    def where(path: Any) -> str:
        return os.path.normpath(os.path.join(root, os.fsdecode(path)))

    def fake_scandir(path: Any = ".") -> Any:
        if where(path) in denied:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    def deny_inside(real: Callable[..., Any]) -> Callable[..., Any]:
        def fake(path: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(path, int) and os.path.dirname(where(path)) in denied:
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        return fake

    monkeypatch.setattr(os, "scandir", fake_scandir)
    monkeypatch.setattr(os, "stat", deny_inside(real_stat))
    monkeypatch.setattr(os, "lstat", deny_inside(real_lstat))


_GLOBS: list[tuple[Callable[[], Any], str]] = [
    (lambda: scan_run("runs/*/p.csv"), _folder("runs/b", _RUN)),
    (lambda: scan_run("runs/*/p.csv", "csv"), _folder("runs/b", _RUN)),
    (lambda: scan_run("runs/**/*.parquet"), _folder("runs/b", _RUN)),
    (lambda: scan_run("runs/*/*.parquet", "parquet"), _folder("runs/b", _RUN)),
    (lambda: scan_run("runs/*/*.jsonl"), _folder("runs/b", _RUN)),
    (lambda: scan_run("runs/*/*.jsonl", "jsonl"), _folder("runs/b", _RUN)),
    (lambda: scan_run("runs/*/deep/*.csv"), _folder("runs/b", _RUN)),
    (lambda: scan_qrels("runs/**/p.csv"), _folder("runs/b", _QRELS)),
    (lambda: scan_run("runs"), _folder("runs/b", _RUN)),
    (lambda: scan_run("ok/**/*.csv"), _folder("ok/.hidden", _RUN)),  # polars reads it
    (lambda: scan_run("ok/*/*.csv"), _folder("ok/.hidden", _RUN)),
]


@pytest.mark.parametrize(("read", "message"), _GLOBS)
def test_a_glob_names_the_folder_it_cannot_list(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    read: Callable[[], Any],
    message: str,
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    _deny_listing(monkeypatch, tmp_path, "runs/b", "ok/.hidden")
    with pytest.raises(FileFormatError, match=f"^{re.escape(message)}$"):
        read().collect()


def test_a_glob_over_folders_that_can_be_listed_reads_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    _deny_listing(monkeypatch, tmp_path, "ok/.hidden")
    assert scan_run("runs/*/p.csv").collect().height == 4
    assert scan_run("runs/**/*.parquet").collect().height == 4
    assert scan_run("ok/*.csv").collect().height == 2


_COMMANDS = [
    (["evaluate", "runs/*/p.csv", "--qrels", "qrels.csv"], _folder("runs/b", _RUN)),
    (
        ["evaluate", "runs/*/p.csv", "--qrels", "qrels.csv", "-o", "out.csv"],
        _folder("runs/b", _RUN),
    ),
    (["evaluate", "runs", "--qrels", "qrels.csv", "-o", "out.csv"], _folder("runs/b", _RUN)),
    (["evaluate", "ok/p.csv", "--qrels", "runs/**/p.csv"], _folder("runs/b", _QRELS)),
    (["evaluate", "ro/*/p.csv", "--qrels", "qrels.csv"], _folder("ro/x", _RUN)),
    (["evaluate", "runs/*/deep/p.csv", "--qrels", "qrels.csv"], _folder("runs/b", _RUN)),
    (["evaluate", "ok/**/p.csv", "--qrels", "qrels.csv"], _folder("ok/.hidden", _RUN)),
    (
        ["evaluate", "runs/b/p.csv", "--qrels", "qrels.csv", "-o", "out.csv"],
        _path("runs/b/p.csv", _RUN),
    ),
]


@pytest.mark.parametrize(("argv", "message"), _COMMANDS)
def test_the_command_names_the_folder_a_glob_cannot_list(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    prefix = _unprivileged(tmp_path)
    _tree(tmp_path)
    (tmp_path / "runs" / "b").chmod(0)
    (tmp_path / "ro" / "x").chmod(0o444)  # its names listed, none of its files reached
    (tmp_path / "ok" / ".hidden").chmod(0)
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "polars_irmetrics", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# ------------------------------------------- 2. damaged Parquet files, at scan time


def _parquet_faults(root: Path) -> None:
    frame = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    frame.write_parquet(root / "ok.parquet")
    data = (root / "ok.parquet").read_bytes()
    (root / "text.parquet").write_text("query_id,doc_id,score\nq1,d1,1\n")
    (root / "cut.parquet").write_bytes(data[: len(data) // 2])
    (root / "footer.parquet").write_bytes(data[:4] + b"x" * (len(data) - 8) + data[-4:])


_SCANS: list[tuple[Callable[[], Any], str]] = [
    (
        lambda: scan_run("text.parquet"),
        f"text.parquet: not a Parquet file (it does not start with PAR1); expected {_RUN}",
    ),
    (
        lambda: scan_qrels("cut.parquet"),
        "cut.parquet: a truncated Parquet file (it does not end with Parquet's footer, "
        "{size} bytes); write it again, or copy it whole; expected " + _QRELS,
    ),
    (
        lambda: scan_run("footer.parquet", "parquet"),
        "footer.parquet: a damaged Parquet file (its footer cannot be read); write it "
        f"again; expected {_RUN}",
    ),
]


@pytest.mark.parametrize(("scan", "message"), _SCANS)
def test_a_damaged_parquet_file_is_named_when_the_scan_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scan: Callable[[], Any], message: str
) -> None:
    _parquet_faults(tmp_path)
    monkeypatch.chdir(tmp_path)
    size = (tmp_path / "cut.parquet").stat().st_size
    with pytest.raises(FileFormatError, match=f"^{re.escape(message.format(size=size))}$"):
        scan()  # no collect: the scan itself refuses the file
