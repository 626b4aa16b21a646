"""Round 36: the fixed cost of a small call. The run's rows of in-memory frames are
counted by the in-memory engine, an eager call of small DataFrames collects in the
calling thread (a SIGTERM during its out-of-core passes still removes the spill
folder at once), a checked call binds its arguments only on an error, and the
machine's memory is read once; the same values, refusals and messages."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_irmetrics.ground.auto import choose

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
