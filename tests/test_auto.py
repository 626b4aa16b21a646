"""One machine without flags: ``buckets="auto-memory"`` picks one plan or buckets from
the run's size and ``memory_limit``, says which, and gives the same results."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ground.auto import BYTES_PER_ROW, choose, machine_memory, parse_memory

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
        "it (not a plain Parquet scan or frame); pass buckets='auto' or buckets=N to "
        "evaluate out of core"
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


def _hive(frame: pl.DataFrame, folder: Path) -> pl.LazyFrame:
    """``frame`` written hive-partitioned by a hash of its query ids, and scanned."""
    part = (pl.col("query_id").hash(seed=3) % 3).alias("qhash")
    frame.with_columns(part).write_parquet(folder, partition_by="qhash")
    return pl.scan_parquet(folder / "**" / "*.parquet", hive_partitioning=True)


@pytest.mark.parametrize("qrels_partitioned", [True, False], ids=["qrels-too", "flat-qrels"])
@pytest.mark.parametrize("per_query", [True, False])
def test_hive_partitions_by_query_hash_are_evaluated_one_by_one(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    qrels_partitioned: bool,
    per_query: bool,
) -> None:
    from polars_irmetrics.io.files import sample_paths

    runs, qrels_path = sample_paths()
    run = pl.concat([pl.read_parquet(p).with_columns(system=pl.lit(p.stem)) for p in runs])
    qrels = pl.read_parquet(qrels_path)
    names = [*irm.DEFAULT_METRICS, "rbp_residual", "fcp"]
    options = {"systems": "system", "per_query": per_query, "unjudged": "zero"}
    expected = irm.evaluate(run, names, qrels=qrels, buckets=None, **options)
    scanned_qrels = _hive(qrels, tmp_path / "qrels") if qrels_partitioned else qrels.lazy()
    spill = tmp_path / "spill"
    spill.mkdir()
    got = irm.evaluate(
        _hive(run, tmp_path / "run"),
        names,
        qrels=scanned_qrels,
        memory_limit="100KB",
        partitioned_by="qhash",
        explain=True,
        spill_dir=spill,
        **options,
    ).collect()
    assert got.equals(expected)
    assert list(spill.iterdir()) == []  # nothing re-written
    assert capsys.readouterr().out == (
        "polars_irmetrics.evaluate: out of core, partition by partition of 'qhash' (each "
        f"read alone): {run.height:,} run rows (Parquet metadata) need about "
        "1.4 MiB, over memory_limit 97.7 KiB\n"  # 9,000 rows x 160 B; 100,000 B
    )


@pytest.mark.parametrize("qrels_partitioned", [True, False], ids=["qrels-too", "flat-qrels"])
def test_hive_partitions_evaluate_an_unretrieved_query_once(
    tmp_path: Path, qrels_partitioned: bool
) -> None:
    # the dense run misses judged query q017, whose hash bucket the run holds: it is
    # evaluated once (by its partition, or last against an empty run), not twice
    from polars_irmetrics.io.files import sample_paths

    runs, qrels_path = sample_paths()
    run = pl.read_parquet(next(p for p in runs if p.stem == "run_dense"))
    qrels = pl.read_parquet(qrels_path)
    assert "q017" not in run["query_id"].to_list()
    expected = irm.evaluate(run, ["map"], qrels=qrels, per_query=True, buckets=None)
    got = irm.evaluate(
        _hive(run, tmp_path / "run"),
        ["map"],
        qrels=_hive(qrels, tmp_path / "qrels") if qrels_partitioned else qrels.lazy(),
        per_query=True,
        partitioned_by="qhash",
        buckets=2,
    ).collect()
    assert got.equals(expected)


def test_partitioned_by_must_name_a_column_of_the_run() -> None:
    with pytest.raises(irm.ColumnNotFoundError) as raised:
        irm.evaluate(RUN, ["map"], qrels=QRELS, partitioned_by="qhash")
    assert str(raised.value) == (
        "partitioned_by='qhash' is not a column of the run; name its hive partition column "
        "(e.g. partitioned_by='qhash' for run/qhash=07/...), or pass partitioned_by=None"
    )
