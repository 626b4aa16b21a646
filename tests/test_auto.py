"""One machine without flags: ``buckets="auto-memory"`` picks one plan or buckets from
the run's size and ``memory_limit``, says which, and gives the same results."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.plan.auto import BYTES_PER_ROW, choose, machine_memory, parse_memory

from .conftest import Evaluate
from .test_conventions import QRELS, RUN


def _size(need: int) -> str:
    return f"{need} B" if need < 1024 else f"{need / 1024:.1f} KiB"


def test_a_small_run_is_one_plan(evaluate: Evaluate, capsys: pytest.CaptureFixture[str]) -> None:
    got = evaluate(RUN, ["map", "P@5"], qrels=QRELS, explain=True, memory_limit="1GiB")
    assert got.equals(irm.evaluate(RUN, ["map", "P@5"], qrels=QRELS, buckets=None))
    need = _size(RUN.height * BYTES_PER_ROW)
    assert capsys.readouterr().out == (
        f"polars_irmetrics.evaluate: one plan: {RUN.height} run rows (in memory) need "
        f"about {need}, within memory_limit 1.0 GiB\n"
    )


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (
            "1GiB",
            "one plan: {rows} run rows (Parquet metadata) need about {need}, "
            "within memory_limit 1.0 GiB",
        ),
        (
            100,
            "out of core in {buckets} buckets: {rows} run rows (Parquet metadata) need "
            "about {need}, over memory_limit 100 B",
        ),
    ],
    ids=["fits", "out-of-core"],
)
def test_parquet_size_decides_and_results_are_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: int | str, expected: str
) -> None:
    path = tmp_path / "run.parquet"
    RUN.write_parquet(path)
    run = pl.scan_parquet(path)
    names = ["map", "ndcg@10", "recall@5"]
    got = irm.evaluate(run, names, qrels=QRELS, memory_limit=limit, explain=True).collect()
    assert got.equals(irm.evaluate(RUN, names, qrels=QRELS, buckets=None))
    rows = RUN.height
    need = rows * BYTES_PER_ROW
    line = expected.format(rows=rows, need=_size(need), buckets=-(-need // 100))
    assert capsys.readouterr().out == f"polars_irmetrics.evaluate: {line}\n"


def test_a_csv_scan_runs_in_one_plan(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "run.csv"
    RUN.write_csv(path)
    with caplog.at_level(logging.INFO, logger="polars_irmetrics"):
        got = irm.evaluate(pl.scan_csv(path), ["map"], qrels=QRELS, memory_limit=10).collect()
    assert got.equals(irm.evaluate(RUN, ["map"], qrels=QRELS, buckets=None))
    assert caplog.messages == [
        "polars_irmetrics.evaluate: one plan: the run's size is not known without reading "
        "it (not Parquet); pass buckets='auto' or buckets=N to evaluate out of core"
    ]


def test_the_default_budget_is_half_the_machine() -> None:
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < machine_memory() <= physical
    assert parse_memory(None) == machine_memory() // 2
    assert choose(RUN.lazy()).limit == machine_memory() // 2


@pytest.mark.parametrize("limit", ["lots", "4 parsecs", -1, 0, "0GB", True])
def test_memory_limit_must_be_a_size(limit: object) -> None:
    message = (
        f"memory_limit={limit!r} is not a size: pass bytes (an integer) or a string such as "
        "'4GiB' or '512MB'"
    )
    with pytest.raises(irm.InvalidValueError) as raised:
        irm.evaluate(RUN, ["map"], qrels=QRELS, memory_limit=limit)  # type: ignore[arg-type]
    assert str(raised.value) == message
