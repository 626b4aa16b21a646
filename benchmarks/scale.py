"""Scale out: one machine (auto), Spark local[2] or standalone, Dask LocalCluster or a
scheduler with command-line workers.

For each size, the same hive-partitioned Parquet run and qrels (benchmarks/generate.py)
are evaluated to means by each engine, in a child process of its own; the parent
samples the resident memory (RSS) of the child's whole process tree (the driver, the
JVM, Spark's Python workers, Dask's scheduler and workers) every 0.1 s, and reports
the evaluation's time (the engine already started, the Parquet files read by the
engine), time per 10M rows, the peak RSS of the tree and of its largest process. The
means of every engine are checked equal to the single-machine ones.

    python benchmarks/scale.py --rows 1M,2M --engines single,spark,dask
    python benchmarks/scale.py --rows 5M --engines single,spark-map,spark-part,dask-part

Engines: ``spark`` / ``spark-map`` (shuffled by query hash: cogroup, mapInArrow),
``spark-part`` (``partitioned_by="bucket"``, the judgments in the run's buckets),
``spark-part-bcast`` (the same, the judgments one flat file, broadcast),
``spark-standalone`` (``spark-part`` on a standalone master and 2 workers x 1 core
started from ``spark-class``), ``dask`` (shuffled), ``dask-part`` (``partitioned_by``,
LocalCluster), ``dask-sched`` (``dask-part`` on ``dask scheduler`` + 2 ``dask worker``).
    python benchmarks/scale.py --rows 50M,100M,200M   # the issue's sizes (hours here)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
METRICS = ["ndcg@10", "map", "mrr@10", "recall@100", "P@10"]
ENGINES = (
    "single",
    "spark",
    "spark-map",
    "spark-part",
    "spark-part-bcast",
    "spark-standalone",
    "dask",
    "dask-part",
    "dask-sched",
)
#: run rows per part (a Spark/Dask task, a hive bucket): a task holds its part in memory
ROWS_PER_PART = 2_000_000


def _rows(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 10**3, "M": 10**6}.get(text[-1:], 1)
    return int(float(text.rstrip("KM")) * scale)


def child(engine: str, folder: Path, out: Path, parts: int) -> None:
    """Evaluate in this process (and its engine's processes); write time and means."""
    import polars as pl

    import polars_irmetrics as irm
    from polars_irmetrics.io.files import sample_paths

    run_dir, qrels_path = folder / "run", folder / "qrels.parquet"
    sample_run, sample_qrels = str(sample_paths()[0][0]), str(sample_paths()[1])
    warm = time.perf_counter()
    if engine == "single":
        irm.evaluate(pl.read_parquet(sample_run), METRICS, qrels=pl.read_parquet(sample_qrels))
        warm = time.perf_counter() - warm
        start = time.perf_counter()
        run = pl.scan_parquet(run_dir / "**" / "*.parquet", hive_partitioning=True)
        means = irm.evaluate(run.drop("bucket"), METRICS, qrels=pl.scan_parquet(qrels_path))
        means = means.collect()
        elapsed = time.perf_counter() - start
    elif engine.startswith("spark"):
        from pyspark.sql import SparkSession

        import polars_irmetrics.spark as irm_spark
        from polars_irmetrics.engines import spark as engine_module

        # "spark": groupBy(part).cogroup(...).applyInArrow; "spark-map": mapInArrow
        engine_module.STRATEGY = "cogroup" if engine == "spark" else "map"

        os.environ["PYSPARK_PYTHON"] = sys.executable
        with contextlib.ExitStack() as stack:
            builder = SparkSession.builder.master("local[2]")
            if engine == "spark-standalone":
                sys.path.insert(0, str(ROOT / "tests"))
                from clusters import LOOPBACK, spark_standalone

                os.environ["SPARK_LOCAL_IP"] = LOOPBACK
                cluster = stack.enter_context(
                    spark_standalone(folder / "standalone", workers=2, cores=1, memory="2g")
                )
                builder = (
                    SparkSession.builder.master(cluster.address)
                    .config("spark.executor.cores", "1")
                    .config("spark.executor.memory", "1g")
                    .config("spark.executorEnv.PYTHONPATH", str(ROOT / "src"))
                    .config("spark.pyspark.python", sys.executable)
                )
            spark = (
                builder.config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.memory", "2g")
                .config("spark.sql.shuffle.partitions", str(parts))
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            # the first job starts the Python workers and warms the JVM: timed apart
            warm = time.perf_counter()
            irm_spark.evaluate(
                spark.read.parquet(sample_run),
                METRICS,
                qrels=spark.read.parquet(sample_qrels),
                progress=False,
            ).collect()
            warm = time.perf_counter() - warm
            start = time.perf_counter()
            if engine in ("spark-part", "spark-standalone", "spark-part-bcast"):
                qrels_dir = folder / "qrels"
                bucketed = engine != "spark-part-bcast" and (qrels_dir / "_SUCCESS").exists()
                result = irm_spark.evaluate(
                    spark.read.parquet(str(run_dir)),
                    METRICS,
                    qrels=spark.read.parquet(str(qrels_dir if bucketed else qrels_path)),
                    partitioned_by="bucket",
                    progress=False,
                )
            else:
                result = irm_spark.evaluate(
                    spark.read.parquet(str(run_dir)).drop("bucket"),
                    METRICS,
                    qrels=spark.read.parquet(str(qrels_path)),
                    progress=False,
                )
            means = pl.from_arrow(result.toArrow())
            elapsed = time.perf_counter() - start
            spark.stop()
    else:
        import dask.dataframe as dd
        from distributed import Client, LocalCluster

        import polars_irmetrics.dask as irm_dask

        with contextlib.ExitStack() as stack:
            if engine == "dask-sched":
                sys.path.insert(0, str(ROOT / "tests"))
                from clusters import dask_cli

                cluster = stack.enter_context(
                    dask_cli(folder / "dask-cli", workers=2, memory="4GiB")
                )
                stack.enter_context(Client(cluster.address))
            else:
                local = stack.enter_context(
                    LocalCluster(
                        n_workers=2,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        memory_limit="4GiB",
                    )
                )
                stack.enter_context(Client(local))
            warm = time.perf_counter()
            irm_dask.evaluate(
                dd.read_parquet(sample_run), METRICS, qrels=dd.read_parquet(sample_qrels)
            ).compute()
            warm = time.perf_counter() - warm
            start = time.perf_counter()
            run = dd.read_parquet(str(run_dir))
            # one file: without split_row_groups it is one partition, 20M rows at 200M
            # run rows, more than a worker's 4 GiB once shuffled
            qrels = dd.read_parquet(str(qrels_path), split_row_groups=True)
            if engine in ("dask-part", "dask-sched"):  # buckets keep queries whole
                if (folder / "qrels" / "_SUCCESS").exists():  # judgments in the same buckets
                    qrels = dd.read_parquet(str(folder / "qrels"))
                result = irm_dask.evaluate(run, METRICS, qrels=qrels, partitioned_by="bucket")
            else:
                result = irm_dask.evaluate(
                    run.drop(columns="bucket"), METRICS, qrels=qrels, partitions=parts
                )
            result = result.compute()
            import pyarrow as pa

            means = pl.from_arrow(pa.Table.from_pandas(result, preserve_index=False))
            elapsed = time.perf_counter() - start
    assert isinstance(means, pl.DataFrame)
    out.write_text(json.dumps({"seconds": elapsed, "warm": warm, "means": means.to_dicts()}))


def _mib(value: object) -> str:
    return f"{float(value):,.0f}" if value else "-"  # type: ignore[arg-type]


def _every(every: dict[int, tuple[str, int]]) -> str:
    """Each process's peak, by role, largest first: ``jvm 817, 402; py 1,001, 990``
    (processes under 50 MiB, such as shell wrappers, left out)."""
    roles: dict[str, list[int]] = {}
    for role, peak in every.values():
        if peak >= 50 * 2**20:
            roles.setdefault(role, []).append(peak)
    return "; ".join(
        f"{role} " + ", ".join(f"{p / 2**20:,.0f}" for p in sorted(peaks, reverse=True))
        for role, peaks in sorted(roles.items())
    )


def measure(engine: str, folder: Path, parts: int) -> dict[str, object]:
    """Run ``child`` in a subprocess, sampling the RSS of its process tree."""
    import psutil

    out = folder / f"result_{engine}.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    wall = time.perf_counter()
    command = [sys.executable, __file__, "--child", engine, "--folder", str(folder)]
    errors = (folder / f"stderr_{engine}.txt").open("w")  # Spark's and Dask's chatter
    proc = subprocess.Popen([*command, "--parts", str(parts)], env=env, stderr=errors)
    top = psutil.Process(proc.pid)
    peak_tree = 0
    # peaks by role: the driver (this child: the client, Spark's driver program), the
    # JVM (Spark's driver and executor in local mode), the largest worker (Spark's
    # Python workers, Dask's worker processes and nannies, the Dask scheduler)
    peaks = {"driver": 0, "jvm": 0, "worker": 0}
    every: dict[int, tuple[str, int]] = {}  # each process's role and peak
    while proc.poll() is None:
        try:
            tree = [top, *top.children(recursive=True)]
            total = 0
            for p in tree:
                with contextlib.suppress(psutil.Error):
                    rss = p.memory_info().rss
                    total += rss
                    role = "driver" if p.pid == top.pid else "worker"
                    if "java" in p.name():
                        role = "jvm"
                    peaks[role] = max(peaks[role], rss)
                    name = "py" if role == "worker" else role
                    every[p.pid] = (name, max(rss, every.get(p.pid, (name, 0))[1]))
            peak_tree = max(peak_tree, total)
        except psutil.Error:
            pass
        time.sleep(0.1)
    wall = time.perf_counter() - wall
    errors.close()
    if proc.returncode != 0 or not out.exists():
        return {"status": f"failed (exit {proc.returncode})", "wall": wall}
    found = json.loads(out.read_text())
    return {
        "status": "ok",
        "seconds": found["seconds"],
        "warm": found["warm"],
        "means": found["means"],
        "wall": wall,
        "tree_mib": peak_tree / 2**20,
        "every": _every(every),
        **{f"{role}_mib": peak / 2**20 for role, peak in peaks.items()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", default="1M,2M", help="run rows, e.g. 1M,2M or 50M,100M,200M")
    p.add_argument("--docs", type=int, default=100)
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument(
        "--task-rows",
        type=int,
        default=ROWS_PER_PART,
        help="run rows per Spark/Dask shuffle partition (the hive buckets hold 2M rows)",
    )
    p.add_argument("--results", type=Path, default=BENCH_DIR / "results_scale.md")
    p.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    p.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--parts", type=int, default=16, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args.folder, args.folder / f"result_{args.child}.json", args.parts)
        return 0
    sys.path.insert(0, str(BENCH_DIR))
    from generate import Spec, generate

    engines = [e.strip() for e in args.engines.split(",")]
    lines = []
    for text in args.rows.split(","):
        rows = _rows(text)
        queries = rows // args.docs
        buckets = max(8, -(-rows // ROWS_PER_PART))
        chunk = max(1, -(-queries // buckets))
        spec = Spec(queries=queries, docs=args.docs, chunk_queries=chunk)
        folder = generate(spec, flat=False, hive=True)  # with the qrels in the same buckets
        parts = max(8, -(-rows // args.task_rows))  # Spark's and Dask's shuffle partitions
        results = {engine: measure(engine, folder, parts) for engine in engines}
        base = results.get("single", {}).get("means")
        for engine, r in results.items():
            same = (
                ""
                if base is None or r["status"] != "ok"
                else ("yes" if r["means"] == base else "NO")
            )
            if r["status"] != "ok":
                lines.append(f"| {rows:,} | {engine} | {r['status']} | | | | | | | | | |")
                continue
            seconds = float(r["seconds"])  # type: ignore[arg-type]
            ratio = seconds / float(results["single"]["seconds"]) if "single" in results else 0
            lines.append(
                f"| {rows:,} | {engine} | {seconds:.1f} | {seconds * 1e7 / rows:.1f} | "
                f"{ratio:.2f}x | {r['tree_mib']:,.0f} | {r['driver_mib']:,.0f} | "
                f"{_mib(r['jvm_mib'])} | {_mib(r['worker_mib'])} | {same} | "
                f"{float(r['warm']):.1f} | {r['every']} |"  # type: ignore[arg-type]
            )
            print(lines[-1], flush=True)
    load = os.getloadavg()[0]
    header = [
        f"## {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "",
        f"- command: `python benchmarks/scale.py --rows {args.rows} --docs {args.docs} "
        f"--engines {args.engines} --task-rows {args.task_rows}`",
        f"- load average (1 min) at the end: {load:.2f} (the machine was shared with other "
        "busy jobs: times are pessimistic and noisy)",
        f"- metrics: {', '.join(METRICS)}; string ids; {args.docs} documents per query; "
        f"hive-partitioned run (one bucket per {ROWS_PER_PART:,} rows, at least 8) and "
        "judgments (qrels.parquet for single, spark, spark-map, spark-part-bcast and dask; "
        "the same buckets for spark-part, spark-standalone, dask-part and dask-sched); means",
        "- Spark local[2] (spark: cogroup + applyInArrow, spark-map: repartition + "
        "mapInArrow, both shuffled into one partition per `--task-rows` run rows; "
        "spark-part(-bcast): `partitioned_by='bucket'`, one task per bucket reading its files "
        "with polars, no shuffle); spark-standalone: spark-part on a standalone master + 2 "
        "workers x 1 core (executors 1g); Dask LocalCluster(2 workers x 1 thread, dask: "
        "shuffled by query hash; dask-part: `partitioned_by='bucket'`, no shuffle of the "
        "run); dask-sched: dask-part on `dask scheduler` + 2 `dask worker` (1 thread, 4GiB); "
        "single: `buckets='auto-memory'` (the default)",
        "- seconds: the evaluation (engine started and warmed by a first call on the bundled "
        "sample, timed apart; Parquet read by the engine); RSS: peak "
        "of the whole process tree, and of each role's largest process: the driver (the "
        "process that calls evaluate), Spark's JVM (driver and executor in local mode, "
        "`spark.driver.memory` 2g; the largest JVM with standalone: master, workers, "
        "executors, driver), the largest worker (a Spark Python worker, a Dask "
        "worker, nanny or scheduler); and every process over 50 MiB by role",
        "",
        "| run rows | engine | seconds | s per 10M rows | vs single | peak RSS tree MiB "
        "| driver MiB | JVM MiB | largest worker MiB | means equal | first call s (sample) "
        "| every process's peak MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    text = "\n".join([*header, *lines]) + "\n"
    previous = (
        args.results.read_text()
        if args.results.exists()
        else ("# Scale out: one machine, Spark, Dask\n\nSee `benchmarks/scale.py`.\n")
    )
    args.results.write_text(previous.rstrip() + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
