"""Round 36: the fixed cost of a small call. The run's rows of in-memory frames are
counted by the in-memory engine, an eager call of small DataFrames collects in the
calling thread (a SIGTERM during its out-of-core passes still removes the spill
folder at once), a checked call binds its arguments only on an error, and the
machine's memory is read once; the same values, refusals and messages."""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ArgumentError
from polars_irmetrics.ground import auto
from polars_irmetrics.ground.auto import choose, machine_memory
from polars_irmetrics.ground.calls import checked_call

ROOT = Path(__file__).resolve().parents[1]
RUN = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]})
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "a"], "relevance": [1, 2]})


def _record_collects(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each LazyFrame.collect from now on: (its engine, the thread it ran in)."""
    seen: list[tuple[str, str]] = []
    real = pl.LazyFrame.collect

    def collect(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
        seen.append((str(kwargs.get("engine", "auto")), threading.current_thread().name))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", collect)
    return seen


def test_an_in_memory_run_is_counted_by_the_in_memory_engine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = _record_collects(monkeypatch)
    assert choose(RUN.lazy(), "1GiB").describe() == (
        "one plan: 3 run rows (in memory) need about 480 B, within memory_limit 1.0 GiB"
    )
    assert seen == [("in-memory", "MainThread")]
    RUN.write_parquet(tmp_path / "run.parquet")
    seen.clear()
    scanned = choose(pl.scan_parquet(tmp_path / "run.parquet"), "1GiB")
    assert (scanned.rows, scanned.source) == (3, "Parquet metadata")
    assert seen == [("auto", "MainThread")]  # a scan keeps polars' own engine


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_a_small_call_counts_and_collects_in_memory_in_the_calling_thread(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    expected = irm.evaluate(RUN, ["map", "P@1"], qrels=QRELS, buckets=None)
    seen = _record_collects(monkeypatch)
    if kind == "DataFrame":
        got = irm.evaluate(RUN, ["map", "P@1"], qrels=QRELS)
        assert isinstance(got, pl.DataFrame)
        assert seen == [("in-memory", "MainThread"), ("in-memory", "MainThread")]
    else:
        lazy = irm.evaluate(RUN.lazy(), ["map", "P@1"], qrels=QRELS.lazy())
        assert isinstance(lazy, pl.LazyFrame)
        assert seen == [("in-memory", "MainThread")]  # the count; the caller collects
        got = lazy.collect()
    assert got.equals(expected)
    # a lazy table may be a scan of any size: collected beside the main thread
    seen.clear()
    assert irm.evaluate(RUN, ["map", "P@1"], qrels=QRELS.lazy()).equals(expected)
    assert seen[-1] == ("auto", "polars_irmetrics work")


_SIGTERM_SCRIPT = """
import sys, threading, time
import polars as pl
import polars_irmetrics as irm
from polars_irmetrics.ground import buckets

real = buckets._split_and_evaluate

def slow(*args, **kwargs):  # the out-of-core passes, slowed down: the folder exists
    print(threading.current_thread().name, flush=True)
    time.sleep(60)
    return real(*args, **kwargs)

buckets._split_and_evaluate = slow
run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1, 2]})
qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
irm.evaluate(run, ["map"], qrels=qrels, buckets=2, spill_dir=sys.argv[1])
"""


def test_sigterm_during_a_small_eager_out_of_core_call_removes_its_folder(
    tmp_path: Path,
) -> None:
    # small DataFrames alone: collected by the in-memory engine in the main thread,
    # whose Python steps (the passes) run the SIGTERM handler at once
    spill = tmp_path / "spill"
    spill.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(
        [sys.executable, "-c", _SIGTERM_SCRIPT, str(spill)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "MainThread"  # the passes have begun
        assert [p.name[:12] for p in spill.iterdir()] == ["irm-buckets-"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == -signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert list(spill.iterdir()) == []


def test_a_checked_call_binds_its_arguments_only_on_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[int] = []

    def top(k: int | None = None, *, gain: str = "linear") -> str:
        ran.append(1)
        return gain.upper()

    checked = checked_call(top, "irm.top")
    binds: list[int] = []
    real: Callable[..., inspect.BoundArguments] = inspect.Signature.bind

    def bind(self: inspect.Signature, *args: Any, **kwargs: Any) -> inspect.BoundArguments:
        binds.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(inspect.Signature, "bind", bind)
    assert checked(3, gain="exponential") == "EXPONENTIAL"
    assert (binds, ran) == ([], [1])
    with pytest.raises(ArgumentError) as refused:
        checked(cutof=10)
    assert str(refused.value) == (
        "irm.top takes no option cutof= (got 10); its options are k, gain"
    )
    assert refused.value.__cause__ is None
    assert refused.value.__suppress_context__
    assert ran == [1]  # refused before the function ran
    with pytest.raises(ArgumentError) as misfit:
        checked(gain=["linear"])
    assert str(misfit.value) == (
        "irm.top: gain must be a str, got ['linear']; pass one, e.g. gain='linear'"
    )
    assert isinstance(misfit.value.__cause__, AttributeError)
    assert len(binds) == 2


def test_the_machines_memory_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    first = machine_memory()
    read: list[str] = []
    real = Path.read_text

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        read.append(str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    assert machine_memory() == first
    assert auto.parse_memory(None) == int(first * auto.MEMORY_FRACTION)
    assert read == []
