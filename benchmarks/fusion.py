"""Fusion benchmark: irm.fuse / irm.optimize_fusion against ranx, side by side.

    PYTHONPATH=src python benchmarks/fusion.py          # committed sizes (~3 min)
    PYTHONPATH=src python benchmarks/fusion.py --queries 20000 --opt-queries 10000
    PYTHONPATH=src python benchmarks/fusion.py --queries 100000 --skip-ranx  # 50M rows

Writes benchmarks/results_fusion.md. Runs are seeded random Parquet files (partial
overlap between runs, different score scales); ranx's numba functions are warmed on a
small input first, and ranx's load (frame -> ranx.Run) is timed apart from its fuse.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

import polars_irmetrics as irm

warnings.filterwarnings("ignore")


def make_runs(folder: Path, n_runs: int, n_queries: int, depth: int, seed: int) -> list[Path]:
    rng = np.random.default_rng(seed)
    paths = []
    q = np.repeat(np.arange(n_queries), depth)
    for r in range(n_runs):
        docs = rng.integers(0, depth * 3, size=(n_queries, depth))
        # distinct documents per query: a random offset walk over a pool of 3 * depth
        docs = (np.cumsum(rng.integers(1, 4, size=(n_queries, depth)), axis=1) + docs[:, :1]) % (
            depth * 6
        )
        scores = np.sort(rng.uniform(0, 10 ** (r % 3), size=(n_queries, depth)), axis=1)[:, ::-1]
        frame = pl.DataFrame(
            {
                "query_id": pl.Series(q).cast(pl.String),
                "doc_id": pl.Series(docs.ravel()).cast(pl.String),
                "score": scores.ravel(),
            }
        ).unique(["query_id", "doc_id"], keep="first")
        path = folder / f"run{r}.parquet"
        frame.write_parquet(path)
        paths.append(path)
    return paths


def make_qrels(folder: Path, n_queries: int, depth: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    per = 10
    frame = pl.DataFrame(
        {
            "query_id": pl.Series(np.repeat(np.arange(n_queries), per)).cast(pl.String),
            "doc_id": pl.Series(rng.integers(0, depth * 6, size=n_queries * per)).cast(pl.String),
            "relevance": rng.integers(0, 3, size=n_queries * per),
        }
    ).unique(["query_id", "doc_id"])
    path = folder / "qrels.parquet"
    frame.write_parquet(path)
    return path


def _sub(folder: Path, name: str) -> Path:
    path = folder / name
    path.mkdir(exist_ok=True)
    return path


def timed(fn, repeat: int = 1):  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def to_ranx(path: Path):  # type: ignore[no-untyped-def]
    from ranx import Run

    frame = pl.read_parquet(path)
    out: dict[str, dict[str, float]] = {}
    for q, d, s in frame.iter_rows():
        out.setdefault(q, {})[d] = s
    return Run.from_dict(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--opt-queries", type=int, default=1000)
    parser.add_argument("--skip-ranx", action="store_true")
    parser.add_argument("--out", default="benchmarks/results_fusion.md")
    args = parser.parse_args()
    lines = [
        "# Fusion benchmark",
        "",
        f"{os.cpu_count()} CPU cores, shared with other processes: ratios matter more than "
        "seconds. Load average (1 min) at start: "
        f"{os.getloadavg()[0]:.1f}. Best of 3 runs for polars; one run for ranx (after "
        "warming its numba functions).",
        "",
        f"Command: `PYTHONPATH=src python benchmarks/fusion.py --runs {args.runs} --queries "
        f"{args.queries} --depth {args.depth} --opt-queries {args.opt_queries}`",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = make_runs(folder, args.runs, args.queries, args.depth, 0)
        rows = sum(pl.scan_parquet(p).select(pl.len()).collect().item() for p in paths)
        lines += [
            f"## fuse: {args.runs} runs x {args.queries} queries x {args.depth} docs "
            f"({rows:,} rows, Parquet)",
            "",
        ]
        lines += ["| what | seconds | ratio |", "|---|---:|---:|"]

        def scans() -> dict[str, pl.LazyFrame]:
            return {p.stem: pl.scan_parquet(p) for p in paths}

        floor, _ = timed(
            lambda: (
                pl.concat([pl.scan_parquet(p) for p in paths])
                .group_by("query_id", "doc_id")
                .agg(pl.col("score").sum())
                .collect()
            ),
            3,
        )
        # the reference: a plain polars plan of rrf (each run's positions by an
        # ordinal rank, ties in no particular order, summed per (query, doc)): no checks,
        # no tie-break by document id, no ranks of the fused run
        plain, _ = timed(
            lambda: (
                pl.concat(
                    [
                        pl.scan_parquet(p).select(
                            "query_id",
                            "doc_id",
                            (
                                1.0
                                / (
                                    60
                                    + pl.col("score")
                                    .rank("ordinal", descending=True)
                                    .over("query_id")
                                )
                            ).alias("c"),
                        )
                        for p in paths
                    ]
                )
                .group_by("query_id", "doc_id")
                .agg(pl.col("c").sum())
                .collect()
            ),
            3,
        )
        ours = {}
        ours["rrf"], _ = timed(lambda: irm.fuse(scans(), "rrf").collect(), 3)
        ours["rrf unsorted"], _ = timed(lambda: irm.fuse(scans(), "rrf", sort=False).collect(), 3)
        ours["wsum"], _ = timed(
            lambda: irm.fuse(
                scans(), "wsum", norm="min-max", weights=[1 / args.runs] * args.runs
            ).collect(),
            3,
        )
        ours["wsum unsorted"], _ = timed(
            lambda: irm.fuse(
                scans(), "wsum", norm="min-max", weights=[1 / args.runs] * args.runs, sort=False
            ).collect(),
            3,
        )
        lines.append(f"| floor: scan + group_by(query, doc) sum | {floor:.2f} | 1.00 |")
        lines.append(
            f"| plain polars rrf: ordinal rank + group_by sum, no checks or fused ranks "
            f"| {plain:.2f} | {plain / floor:.2f}x floor |"
        )
        for name, t in ours.items():
            lines.append(
                f"| irm.fuse {name} (from Parquet, end to end) | {t:.2f} "
                f"| {t / floor:.2f}x floor |"
            )
        if not args.skip_ranx:
            from ranx import fuse as ranx_fuse

            small = [to_ranx(p) for p in make_runs(_sub(folder, "warm"), 2, 5, 10, 1)[:2]]
            ranx_fuse(small, norm=None, method="rrf")
            ranx_fuse(small, norm="min-max", method="wsum", params={"weights": [0.5, 0.5]})
            load, runs = timed(lambda: [to_ranx(p) for p in paths])
            for name, norm, params in (
                ("rrf", None, {}),
                ("wsum", "min-max", {"weights": [1 / args.runs] * args.runs}),
            ):
                t, _ = timed(
                    lambda n=name, m=norm, p=params: ranx_fuse(runs, norm=m, method=n, params=p)
                )
                lines.append(
                    f"| ranx.fuse {name} (fuse alone) | {t:.2f} "
                    f"| irm {t / ours[name]:.1f}x faster "
                    f"({t / ours[name + ' unsorted']:.1f}x unsorted) |"
                )
                if name == "rrf":
                    lines.append(
                        f"| (ranx.fuse rrf against the plain polars rrf plan) | | "
                        f"plain plan {t / plain:.1f}x faster |"
                    )
                lines.append(
                    f"| ranx load + fuse {name} | {load + t:.2f} "
                    f"| irm {(load + t) / ours[name]:.1f}x faster |"
                )
            lines.append(f"| ranx load (Parquet -> ranx.Run, {args.runs} runs) | {load:.2f} | |")
        lines += [
            "",
            f"## optimize_fusion: 3 runs x {args.opt_queries} queries x {args.depth} docs, "
            "wsum + min-max, step 0.1 (ranx's grid: 62 points), ndcg@10",
            "",
        ]
        lines += ["| what | seconds | ratio |", "|---|---:|---:|"]
        opt_paths = make_runs(_sub(folder, "opt"), 3, args.opt_queries, args.depth, 2)
        qrels_path = make_qrels(_sub(folder, "opt"), args.opt_queries, args.depth, 3)
        qrels = pl.read_parquet(qrels_path)
        frames = {p.stem: pl.read_parquet(p) for p in opt_paths}
        one, _ = timed(
            lambda: irm.evaluate(
                irm.fuse(frames, "wsum", norm="min-max", weights=[0.4, 0.3, 0.3]),
                "ndcg@10",
                qrels=qrels,
            ),
            3,
        )
        opt, best = timed(lambda: irm.optimize_fusion(frames, "ndcg@10", qrels=qrels), 1)
        lines.append(f"| one fuse + evaluate | {one:.2f} | 1.00 |")
        lines.append(
            f"| irm.optimize_fusion (62 points, one plan) | {opt:.2f} "
            f"| {opt / one:.1f}x one fuse+evaluate |"
        )
        if not args.skip_ranx:
            from ranx import Qrels
            from ranx import optimize_fusion as ranx_opt

            judged: dict[str, dict[str, int]] = {}
            for q, d, r in qrels.iter_rows():
                judged.setdefault(q, {})[d] = int(r)
            rq = Qrels.from_dict(judged)
            rruns = [to_ranx(p) for p in opt_paths]
            for r in rruns:
                r.make_comparable(rq)  # ranx requires the same queries in runs and qrels
            t, theirs = timed(
                lambda: ranx_opt(
                    rq, rruns, norm="min-max", method="wsum", metric="ndcg@10", show_progress=False
                )
            )
            lines.append(f"| ranx.optimize_fusion | {t:.2f} | irm {t / opt:.1f}x faster |")
            lines.append("")
            lines.append(
                f"Best weights: irm {best['weights']}, "
                f"ranx {[float(x) for x in theirs['weights']]}."
            )
    lines.append("")
    lines.append(f"Load average (1 min) at end: {os.getloadavg()[0]:.1f}.")
    lines.append("")
    lines.append(
        "Issue's full sizes (5 runs x 20k queries x 100 docs; 3 runs x 10k queries for "
        "optimize_fusion): `PYTHONPATH=src python benchmarks/fusion.py --queries 20000 "
        "--opt-queries 10000`; the floor at 50M rows: `--queries 100000 --skip-ranx`."
    )
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
