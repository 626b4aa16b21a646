"""Issue 28's values, arguments and faults: evaluated exactly or refused with the
library's own error naming the argument and the fix; spill folders checked first,
cleaned on SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MissingFileError
from tests.conftest import Evaluate

ROOT = Path(__file__).resolve().parents[1]

BIG = 2**63 + 5


def _u64(*values: int) -> pl.Series:
    return pl.Series(values, dtype=pl.UInt64)


@pytest.mark.parametrize("qrels_dtype", [pl.UInt64, pl.Int64, pl.UInt32])
def test_uint64_ids_at_or_above_2_63_are_evaluated_exactly(
    evaluate: Evaluate, qrels_dtype: pl.DataType
) -> None:
    # query BIG: the judged document 2 at rank 2 -> AP 1/2; query 7: d 9 at rank 1 -> 1
    run = pl.DataFrame({"query_id": _u64(BIG, BIG, 7), "doc_id": _u64(1, 2, 9), "rank": [1, 2, 1]})
    qrels = pl.DataFrame({"query_id": [7, 7], "doc_id": [9, 3], "relevance": [1, 0]})
    qrels = qrels.with_columns(pl.col("query_id", "doc_id").cast(qrels_dtype))
    if qrels_dtype == pl.UInt64:
        qrels = pl.concat([qrels, pl.DataFrame({"query_id": _u64(BIG), "doc_id": _u64(2),
                                                "relevance": [1]})])  # fmt: skip
    out = evaluate(run, ["map"], qrels=qrels, per_query=True).sort("query_id")
    expected = {7: 1.0, BIG: 0.5} if qrels_dtype == pl.UInt64 else {7: 1.0}
    assert dict(zip(out["query_id"].to_list(), out["map"].to_list(), strict=True)) == expected


def test_uint64_rank_at_or_above_2_63_is_refused(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": _u64(1, BIG)})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    with pytest.raises(InvalidValueError, match=re.escape(
        "column 'rank' of the run has 1 rank(s) of 2**63 or more in query 'q'; a rank "
        "counts positions in one list: renumber them 1, 2, 3, ..., e.g. "
        "pl.col('rank').rank('ordinal').over(query_id)"
    )):  # fmt: skip
        evaluate(run, ["map"], qrels=qrels)


RUN = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1, 2]})
QRELS = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})


@pytest.mark.parametrize(
    ("run_extra", "kwargs", "message"),
    [
        ({}, {"relevance_level": float("nan")},
         "relevance_level=nan is not a finite number: no label would count as relevant (or "
         "every one would); pass the lowest relevant label, e.g. relevance_level=1"),
        ({}, {"relevance_level": float("inf")},
         "relevance_level=inf is not a finite number"),
        ({"num_q": "x"}, {"by": "num_q"},
         "by=['num_q'] names 'num_q', which is also a column of the result ('num_q', 'map'); "
         "rename the key first, e.g. run.rename({'num_q': 'num_q_key'}), and pass "
         "by='num_q_key'"),
        ({"map": "x"}, {"by": "map", "per_query": True},
         "by=['map'] names 'map', which is also a column of the result ('map')"),
        ({}, {"query_id": "doc_id"},
         "query_id='doc_id' and doc_id='doc_id' name the same column; each needs its own "
         "column: pass doc_id= with the name of the doc_id column"),
        ({}, {"rank": "query_id"},
         "query_id='query_id' and rank='query_id' name the same column"),
        ({"s": "x"}, {"by": "rank"},
         "by=['rank'] names 'rank', which is the rank column; group by another column, or "
         "pass the rank column's name as rank="),
    ],
)  # fmt: skip
def test_arguments_refused_naming_the_argument(
    evaluate: Evaluate, run_extra: dict[str, str], kwargs: dict[str, object], message: str
) -> None:
    run = RUN.with_columns(pl.lit(v).alias(k) for k, v in run_extra.items())
    qrels = (
        QRELS.with_columns(pl.col("query_id").alias("doc_id")) if "query_id" in kwargs else QRELS
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        evaluate(run, ["map"], qrels=qrels, **kwargs)


# ------------------------------------------------------------------ faults: spill folder
@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_missing_or_unwritable_spill_dir_is_refused_before_any_work(
    kind: str, tmp_path: Path
) -> None:
    run = RUN.lazy() if kind == "LazyFrame" else RUN
    missing = tmp_path / "nope"
    with pytest.raises(MissingFileError, match=re.escape(
        f"spill_dir={str(missing)!r} does not exist; create the folder first, or pass "
        "spill_dir=None for the system's temporary folder"
    )):  # fmt: skip
        irm.evaluate(run, ["map"], qrels=QRELS, buckets=2, spill_dir=missing)
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(InvalidValueError, match=re.escape(
        f"spill_dir={str(a_file)!r} is a file, not a folder; name a folder"
    )):  # fmt: skip
        irm.evaluate(run, ["map"], qrels=QRELS, buckets=2, spill_dir=a_file)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.access(locked, os.W_OK):  # root writes anywhere: the check cannot be exercised
        locked.chmod(0o700)
        return
    with pytest.raises(InvalidValueError, match=re.escape("is not writable by this process")):
        irm.evaluate(run, ["map"], qrels=QRELS, buckets=2, spill_dir=locked)


_SIGTERM_SCRIPT = """
import os, select, signal, sys, time
import polars as pl
import polars_irmetrics as irm

run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1, 2]})
qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
if sys.argv[2] == "lazy":  # the caller collects the plan, outside the library
    # the judgments arrive slowly: the spill folder exists while they are awaited (3 s
    # at most; they arrive as soon as a signal is received: a handler runs once the
    # caller's collect hands back to Python, in the main thread)
    woken, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
    slow = pl.defer(lambda: (select.select([woken], [], [], 3), qrels)[1], schema=qrels.schema)
    irm.evaluate(run.lazy(), ["map"], qrels=slow, buckets=2, spill_dir=sys.argv[1]).collect()
else:  # the library collects beside the main thread: the handler runs at once
    slow = pl.defer(lambda: (time.sleep(60), qrels)[1], schema=qrels.schema)
    irm.evaluate(run, ["map"], qrels=slow, buckets=2, spill_dir=sys.argv[1])
"""


_OTHER_THREAD_SCRIPT = """
import signal, threading, time
from polars_irmetrics.ground.buckets import beside_main

ran = threading.Event()
signal.signal(signal.SIGUSR1, lambda signum, frame: ran.set())

def work():
    time.sleep(0.5)  # the main thread waits for this one by now
    # the kernel may hand a process's signal to any of its threads: here, this one
    signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
    start = time.monotonic()
    ran.wait(20)
    return time.monotonic() - start

print(beside_main(work))
"""


def test_a_signal_taken_by_another_thread_is_handled_at_once() -> None:
    # Python runs handlers in the main thread only; a signal the kernel hands to another
    # thread (a polars thread, the worker) only marks it pending. beside_main's main
    # thread used to wait for the worker without waking, so such a SIGTERM waited for
    # the whole collect (20 s here; the eager SIGTERM test below timed out so once)
    assert float(_python_output(_OTHER_THREAD_SCRIPT)) < 5.0


def _python_output(script: str) -> str:
    """What ``script`` prints, run by this Python in a process of its own (the signal
    handlers are the process's), with this checkout's sources; it must succeed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


_CTRL_C_SCRIPT = """
import os, signal, threading, time
from polars_irmetrics.ground.buckets import beside_main

finished = []

def work():
    time.sleep(0.6)  # Ctrl-C arrives while the main thread waits for this one
    finished.append(True)
    return 42

threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    beside_main(work)
except KeyboardInterrupt:
    print("interrupted, the work finished:", bool(finished))
"""


def test_ctrl_c_is_raised_once_the_work_returns() -> None:
    # Python 3.11 (bpo-45274): a KeyboardInterrupt inside Thread.join marks the thread
    # stopped, so a wait on is_alive() left at once: the interrupt reached the caller
    # while the work (an out-of-core run, its spill folder) went on, and the
    # interpreter aborted at exit ("FATAL: exception not rethrown"); the worker now
    # says itself when it is done
    assert _python_output(_CTRL_C_SCRIPT).strip() == "interrupted, the work finished: True"


@pytest.mark.parametrize("kind", ["eager", "lazy"])
def test_sigterm_removes_the_spill_folder(tmp_path: Path, kind: str) -> None:
    # eager: the judgments take a minute to arrive, and the process ends at once, its
    # folder removed by the SIGTERM handler (it waited the minute out, the folder then
    # removed by the run's own cleanup, when the collect ran in the main thread); lazy:
    # the caller's collect holds the handler off until it returns (documented)
    spill = tmp_path / "spill"
    spill.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(
        [sys.executable, "-c", _SIGTERM_SCRIPT, str(spill), kind], env=env, stderr=subprocess.PIPE
    )
    try:
        for _ in range(600):  # the spill folder appears once the split starts
            if any(spill.iterdir()) or process.poll() is not None:
                break
            time.sleep(0.05)
        assert [p.name[:12] for p in spill.iterdir()] == ["irm-buckets-"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == -signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert list(spill.iterdir()) == []


def test_the_spill_folder_is_registered_before_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI once saw the eager SIGTERM case above leave its folder: the signal came between
    # the folder's making and its registration, which the handler's removal reads
    from polars_irmetrics.ground import buckets

    made: list[tuple[str, bool]] = []
    real_mkdir = os.mkdir

    def mkdir(path: str, mode: int = 0o777, **kw: object) -> None:
        with buckets._LIVE_LOCK:
            made.append((os.path.basename(path), os.fspath(path) in buckets._LIVE))
        real_mkdir(path, mode, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1, 2]})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    out = irm.evaluate(run, ["map"], qrels=qrels, buckets=2, spill_dir=tmp_path)
    assert out["map"].item() == 0.5
    spills = [(name[:12], registered) for name, registered in made if "irm-buckets-" in name]
    assert spills == [("irm-buckets-", True)]
    assert list(tmp_path.iterdir()) == []
