"""Out-of-core benchmark: polars_irmetrics end-to-end on hive-partitioned runs.

    python benchmarks/out_of_core.py                      # 50M, 100M, 200M rows
    python benchmarks/out_of_core.py --rows 1M,2M         # a quick check

For each size (rows = queries x --docs) it generates, if absent, a hive-partitioned
run ``benchmarks/data/q{Q}_d{D}_str_s0/run/bucket=NN/part.parquet`` plus its
``qrels.parquet`` (streamed chunk by chunk, never all in memory), then times, in a
fresh subprocess per library,

    irm.evaluate(pl.scan_parquet("run/**/*.parquet", hive_partitioning=True)
                   .select("query_id", "doc_id", "rank", "score"),
                 metrics, qrels=pl.scan_parquet("qrels.parquet"), order="rank")
       .collect(engine="streaming")

and reports time and peak RSS (``ru_maxrss`` of the child), next to the floor plan
(one join + one group-by, see run.py). Results go to
``benchmarks/results_out_of_core.md`` (``--append`` adds a section instead).
Disk: about 12 bytes per run row with string ids (200M rows: ~2.4 GB).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import run as harness  # noqa: E402
from generate import DATA_DIR, Spec  # noqa: E402

DEFAULT_ROWS = "50M,100M,200M"


def parse_count(text: str) -> int:
    text = text.strip().replace("_", "").upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9}.get(text[-1:], 1)
    return int(float(text.rstrip("KMGB")) * mult)


def _buckets(text: str) -> int | str | None:
    text = text.strip()
    return text if text == "auto" else (int(text) or None)


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.parquet"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", default=DEFAULT_ROWS, help="run sizes, e.g. 50M,100M,200M")
    p.add_argument("--docs", type=int, default=100, help="retrieved docs per query")
    p.add_argument("--libs", default="irm-rank,floor", help="irm-rank, irm-score, floor")
    p.add_argument("--repeats", type=int, default=1, help="best of N")
    p.add_argument("--engine", default="streaming", help="polars engine for collect()")
    p.add_argument("--chunk-queries", type=int, default=50_000, help="queries per bucket")
    p.add_argument("--data-dir", type=Path, default=DATA_DIR)
    p.add_argument("--out", type=Path, default=BENCH_DIR / "results_out_of_core.md")
    p.add_argument("--append", action="store_true", help="add a section to --out")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per child")
    p.add_argument(
        "--irm-buckets",
        default="0",
        help="evaluate(buckets=...) values to try for the irm libraries: 0 = none (one "
        "plan), N, or auto (one bucket per 4M rows), e.g. 0,auto",
    )
    args = p.parse_args(argv)
    libs = harness.parse_libs(args.libs)
    bad = [lib for lib in libs if lib not in ("irm-rank", "irm-score", "irm-full", "floor")]
    if bad:
        raise SystemExit(f"out_of_core: polars plans only, not {', '.join(bad)}")

    rows_list = [parse_count(r) for r in args.rows.split(",") if r.strip()]
    table = [
        "| rows | queries | hive parts | run on disk | library | e2e s | s per 10M rows "
        "| peak RSS MiB | RSS / disk | status |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rows in rows_list:
        spec = Spec(max(1, rows // args.docs), args.docs, chunk_queries=args.chunk_queries)
        print(f"data for {spec.queries * spec.docs:,} rows ...", file=sys.stderr)
        folder = harness.generate_data(spec, args.data_dir / spec.name, flat=False, hive=True)
        disk = _dir_bytes(folder / "run")
        runs = [
            (lib, _buckets(b))
            for lib in libs
            for b in (args.irm_buckets.split(",") if lib.startswith("irm") else ["0"])
        ]
        for lib, buckets in runs:
            label = lib if buckets is None else f"{lib} (buckets={buckets})"
            job: dict[str, Any] = {
                "lib": lib,
                "buckets": buckets,
                "mode": "e2e",
                "run": str(folder / "run"),
                "qrels": str(folder / "qrels.parquet"),
                "repeats": args.repeats,
                "engine": args.engine,
                "docs": args.docs,
                "int_ids": False,
            }
            res = harness.run_child(job, args.timeout)
            t = harness._time(res)
            rss = res.get("rss_peak_mib") if t is not None else None
            status = "ok" if t is not None else f"{res['status']}: {res.get('error', '')}"
            print(
                f"[{spec.queries * spec.docs:>12,} rows] {label:<22} "
                + (f"{t:.2f}s, {rss:,.0f} MiB" if t is not None else status),
                file=sys.stderr,
            )
            table.append(
                f"| {spec.queries * spec.docs:,} | {spec.queries:,} | {spec.n_chunks} "
                f"| {disk / 2**20:,.0f} MiB | {label} | {harness._fmt_s(t)} "
                f"| {'–' if t is None else f'{t * 1e7 / (spec.queries * spec.docs):.2f}'} "
                f"| {harness._fmt_mib(rss)} "
                f"| {'–' if rss is None else f'{rss * 2**20 / disk:.2f}'} "
                f"| {status.replace('|', '/')} |"
            )

    m, v = harness.machine_info(), harness.versions()
    section = [
        f"## {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}: "
        f"{m['cpu']}, {m['cores']} cores, {m['ram']} RAM",
        "",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- load average (1 min) at the end: {harness._load():.2f}",
        f"- command: `python benchmarks/out_of_core.py --rows {args.rows} --docs {args.docs} "
        f"--libs {','.join(libs)} --engine {args.engine} --repeats {args.repeats} "
        f"--irm-buckets {args.irm_buckets}`",
        f"- metrics: {', '.join(harness.CORE_METRICS)}; string ids; hive-partitioned run "
        f"({args.chunk_queries:,} queries per bucket), one qrels.parquet",
        "",
        *table,
        "",
    ]
    print("\n".join(table))
    header = [
        "# polars_irmetrics out-of-core benchmark",
        "",
        "End-to-end time (Parquet on disk -> mean metrics) and peak RSS of the child",
        "process (`ru_maxrss`) on hive-partitioned runs; `RSS / disk` is peak memory over",
        "the compressed size of the run. See `benchmarks/out_of_core.py`.",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.append and args.out.exists():
        with args.out.open("a") as f:
            f.write("\n" + "\n".join(section))
    else:
        args.out.write_text("\n".join(header + section))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
