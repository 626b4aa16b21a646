"""The command line, round 13: a SIGTERM during an output's write left its temporary
file (the handler removed the spill folders only, and the write runs beside the main
thread, so write_atomic's own cleanup never ran); a Ctrl-C said "interrupted" (exit 130)
and still renamed the new output over the existing one; --query-id, --doc-id and
--relevance were taken in silence where every input is a TREC file (fixed columns)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from polars_irmetrics.ground import buckets

from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]

RUN_A = "".join(f"q{q} Q0 d{d} {d} {10 - d} a\n" for q in (1, 2) for d in range(1, 6))
RUN_B = "".join(f"q{q} Q0 d{d} {6 - d} {d} b\n" for q in (1, 2) for d in range(1, 6))
QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 d2 1\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text(RUN_A)
    (tmp_path / "b.txt").write_text(RUN_B)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "out.txt").write_text("OLD\n")
    return tmp_path


# The real command in a process of its own, held at a known point by a patched writer
# (no sleep racing the computation): "write" sends the signal once the temporary file is
# written (SIGTERM: then waits to be ended; SIGINT: goes on at once, to the rename), and
# "before" sends it before the output is written at all (after the computation). SIGINT
# is sent to the worker thread itself: Python's main thread learns of it only when it
# next wakes, so the worker must ask it before renaming.
_HELD = """
import os, signal, sys, threading, time
from polars_irmetrics.cli import trec_eval
from polars_irmetrics.cli.main import main
from polars_irmetrics.io import output

how, point, *argv = sys.argv[1:]
sig = getattr(signal, "SIG" + how)

def send():
    if sig == signal.SIGINT:
        signal.pthread_kill(threading.get_ident(), sig)
    else:
        os.kill(os.getpid(), sig)
        for _ in range(3000):  # ended by the handler, which runs in the main thread
            time.sleep(0.01)

if point == "write":
    compressing = output._compressing
    def held(write, kind):
        def hold(handle):
            write(handle)
            handle.flush()
            send()
        return compressing(hold, kind)
    output._compressing = held
else:
    write_text = trec_eval.write_text
    def held_text(path, text):
        send()
        write_text(path, text)
    trec_eval.write_text = held_text
sys.exit(main(argv))
"""

_TREC_EVAL = ["trec-eval", "-q", "-m", "all_trec", "qrels.txt", "a.txt", "-o", "out.txt"]
_FUSE = ["fuse", "a.txt", "b.txt", "-o", "out.txt"]


@pytest.mark.parametrize(
    ("how", "point", "args", "status", "stderr"),
    [
        ("TERM", "write", _TREC_EVAL, -signal.SIGTERM, ""),
        ("TERM", "write", _FUSE, -signal.SIGTERM, ""),
        ("INT", "write", _TREC_EVAL, 130, "irm: interrupted\n"),
        ("INT", "write", _FUSE, 130, "irm: interrupted\n"),
        ("INT", "before", _TREC_EVAL, 130, "irm: interrupted\n"),
    ],
)
def test_a_stopped_run_leaves_no_temporary_file_and_the_old_output(
    files: Path, how: str, point: str, args: list[str], status: int, stderr: str
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _HELD, how, point, *args],
        cwd=files,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (status, stderr)
    assert (files / "out.txt").read_text() == "OLD\n"
    assert sorted(p.name for p in files.iterdir()) == ["a.txt", "b.txt", "out.txt", "qrels.txt"]


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_the_sigterm_cleanup_removes_registered_files_and_folders(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / ".out.txt.x.tmp"
    if kind == "file":
        path.write_text("half")
    else:
        path.mkdir()
        (path / "bucket-0.parquet").write_text("half")
    called: list[int] = []
    handler = buckets._cleanup_then(lambda signum, frame: called.append(signum))
    previous = signal.getsignal(signal.SIGTERM)
    try:
        with buckets.removed_on_stop(path):
            handler(signal.SIGTERM, None)
            assert not path.exists()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert called == [signal.SIGTERM]
    with buckets._LIVE_LOCK:
        assert str(path) not in buckets._LIVE  # released on leaving


_RUN_COLUMNS = "query id, Q0, doc id, rank, score, run id"
_QRELS_COLUMNS = "query id, iteration, doc id, relevance"


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (
            ["evaluate", "a.txt", "--qrels", "qrels.txt", "--doc-id", "x", "-m", "map"],
            f"a.txt: --doc-id x names no column of a TREC file (its columns are fixed: "
            f"{_RUN_COLUMNS}); drop --doc-id",
        ),
        (
            ["evaluate", "a.txt", "--qrels", "qrels.txt", "--query-id", "x", "-m", "map"],
            f"a.txt: --query-id x names no column of a TREC file (its columns are fixed: "
            f"{_RUN_COLUMNS}); drop --query-id",
        ),
        (
            ["evaluate", "a.txt", "--qrels", "qrels.txt", "--relevance", "x", "-m", "map"],
            f"qrels.txt: --relevance x names no column of a TREC file (its columns are fixed: "
            f"{_QRELS_COLUMNS}); drop --relevance",
        ),
        (
            ["compare", "a.txt", "b.txt", "--qrels", "qrels.txt", "--query-id", "x"],
            f"a.txt: --query-id x names no column of a TREC file (its columns are fixed: "
            f"{_RUN_COLUMNS}); drop --query-id",
        ),
        (
            ["compare", "a.txt", "b.txt", "--qrels", "qrels.txt", "--relevance", "my rel"],
            f"qrels.txt: --relevance 'my rel' names no column of a TREC file (its columns are "
            f"fixed: {_QRELS_COLUMNS}); drop --relevance",
        ),
        (
            ["fuse", "a.txt", "b.txt", "--doc-id", "x"],
            f"a.txt: --doc-id x names no column of a TREC file (its columns are fixed: "
            f"{_RUN_COLUMNS}); drop --doc-id",
        ),
        (
            ["fuse", "a.txt", "b.txt", "--optimize", "--qrels", "qrels.txt", "--relevance", "x"],
            f"qrels.txt: --relevance x names no column of a TREC file (its columns are fixed: "
            f"{_QRELS_COLUMNS}); drop --relevance",
        ),
    ],
)
def test_a_column_flag_no_trec_file_has_is_refused(
    files: Path, args: list[str], stderr: str
) -> None:
    done = irm_in_process(*args, cwd=files)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {stderr}\n")


def test_a_column_flag_a_table_among_the_inputs_reads_is_taken(files: Path) -> None:
    rows = (line.split() for line in RUN_A.splitlines())
    (files / "a.csv").write_text(
        "qid,doc_id,score\n" + "".join(f"{q},{d},{s}\n" for q, _, d, _, s, _ in rows)
    )
    args = ["--qrels", "qrels.txt", "-m", "map"]
    table = irm_in_process("evaluate", "a.csv", *args, "--query-id", "qid", cwd=files)
    trec = irm_in_process("evaluate", "a.txt", *args, cwd=files)
    assert (table.returncode, table.stderr, table.stdout) == (0, "", trec.stdout)


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (
            ["fuse", "a.txt", "b.txt", "--method", "rbc", "-o", "f.run"],
            "rbc needs the parameter phi: pass it, e.g. irm fuse RUN RUN --method rbc "
            "--param phi=...",
        ),
        (
            ["trec-eval", "-Z", "z.txt", "-o", "z.txt", "qrels.txt", "a.txt"],
            "-o z.txt names an input too (--Zscore z.txt), which writing it would replace: "
            "name another output file",
        ),
    ],
)
def test_a_hint_on_the_command_line_is_written_as_the_command(
    files: Path, args: list[str], stderr: str
) -> None:
    (files / "z.txt").write_text("q1 map 0.5 0.1\n")
    done = irm_in_process(*args, cwd=files)
    assert (done.returncode, done.stderr) == (2, f"irm: error: {stderr}\n")
    assert not (files / "f.run").exists()


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (
            ["evaluate", "a.txt", "--qrels", "qrels.txt", "-m", "map", "-o", "name.csv/"],
            "name.csv",
        ),
        (["compare", "a.txt", "b.txt", "--qrels", "qrels.txt", "-o", "r.html/"], "r.html"),
        (["fuse", "a.txt", "b.txt", "-o", "f.run/"], "f.run"),
        (["trec-eval", "qrels.txt", "a.txt", "-o", "t.txt/"], "t.txt"),
    ],
)
def test_an_output_ending_with_a_slash_names_a_folder_and_is_refused(
    files: Path, args: list[str], name: str
) -> None:
    done = irm_in_process(*args, cwd=files)
    stderr = (
        f"irm: error: {name}/: ends with a slash, which names a folder, and there is none; "
        f"name a file (e.g. {name})\n"
    )
    assert (done.returncode, done.stderr) == (2, stderr)
    assert not (files / name).exists()
