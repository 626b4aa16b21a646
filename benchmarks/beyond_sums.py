"""The beyond-accuracy metrics of a recommendation table (the recsys route), four calls
on one synthetic table, best of ``--repeats``, each collected: the popularity ones, the
feature-vector ones (intra-list diversity, serendipity), the co-occurrence similarity
and RePlay's categorical diversity. ``--src`` times another checkout's ``src`` folder
(before and after a change, side by side in one run: pass it once per checkout); the
table of seconds and ratios (each checkout's against the first) is printed and written
to ``--out``.

    python benchmarks/beyond_sums.py --src ../old/src --src src --out /tmp/beyond.md

``--users`` users with lists of ``--length`` items drawn with a power-law popularity
from ``--items`` (repeats dropped), a history of ``10 x users`` interactions plus one
per item and one per user (every item has a popularity, every user a history),
16-dimensional feature vectors (an ``Array`` column) and 40 categories;
``numpy.random.default_rng(0)``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

CALLS: dict[str, list[str]] = {
    "popularity (8 metrics)": [
        "catalog_coverage@10",
        "distributional_coverage@10",
        "gini_index@10",
        "novelty@10",
        "average_popularity@10",
        "long_tail_share@10",
        "surprisal@10",
        "novelty(kind='replay')@10",
    ],
    "feature vectors (3 metrics)": [
        "intra_list_diversity@10",
        "serendipity@10",
        "intra_list_diversity",
    ],
    "co-occurrence similarity": [
        "intra_list_diversity(item_sim_measure='item_cooccurrence_count')@10"
    ],
    "categories": ["categorical_diversity@10"],
}


def measure(users: int, items: int, length: int, repeats: int) -> dict[str, float]:
    """Seconds, best of ``repeats``, of each call (in this process's polars_irmetrics)."""
    import polars as pl

    import polars_irmetrics as irm

    warnings.simplefilter("ignore")  # the history lacks most of the listed items' users
    rng = np.random.default_rng(0)
    user = np.repeat(np.arange(users), length)
    run = pl.DataFrame(
        {
            "query_id": user,
            "doc_id": rng.zipf(1.2, users * length) % items,
            "rank": np.tile(np.arange(1, length + 1), users),
        }
    ).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    n = 10 * users
    history = pl.concat(
        [
            pl.DataFrame(
                {"query_id": rng.integers(0, users, n), "doc_id": rng.zipf(1.2, n) % items}
            ),
            pl.DataFrame({"query_id": rng.integers(0, users, items), "doc_id": np.arange(items)}),
            pl.DataFrame({"query_id": np.arange(users), "doc_id": rng.integers(0, items, users)}),
        ]
    )
    vectors = pl.DataFrame(
        {"doc_id": np.arange(items), "features": rng.normal(size=(items, 16))}
    ).with_columns(pl.col("features").cast(pl.Array(pl.Float64, 16)))
    categories = pl.DataFrame(
        {"doc_id": np.arange(items), "category_id": rng.integers(0, 40, items)}
    )
    tables = {
        "popularity (8 metrics)": {"interactions": history},
        "feature vectors (3 metrics)": {"interactions": history, "item_features": vectors},
        "co-occurrence similarity": {"interactions": history},
        "categories": {"item_features": categories},
    }
    times = {"rows": float(run.height)}
    for name, metrics in CALLS.items():
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            irm.evaluate(run, metrics, **tables[name])
            best = min(best, time.perf_counter() - start)
        times[name] = round(best, 3)
    return times


def table(results: dict[str, dict[str, float]]) -> str:
    """The markdown table: a row per call, a column per checkout, the ratios to the
    first checkout."""
    srcs = list(results)
    head = "| call | " + " | ".join(f"`{s}` (s)" for s in srcs)
    head += "".join(f" | `{s}` / `{srcs[0]}`" for s in srcs[1:]) + " |"
    rule = "|---|" + "---:|" * (2 * len(srcs) - 1)
    lines = [head, rule]
    for name in CALLS:
        row = [f"{results[s][name]:.3f}" for s in srcs]
        row += [f"{results[s][name] / results[srcs[0]][name]:.2f}x" for s in srcs[1:]]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--length", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--src", action="append", default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = ["--users", str(args.users), "--items", str(args.items), "--length", str(args.length)]
    if args.inner:  # a child, its checkout first on the path (PYTHONPATH)
        print(json.dumps(measure(args.users, args.items, args.length, args.repeats)))
        return
    results = {}
    for src in args.src or ["src"]:
        done = subprocess.run(
            [sys.executable, __file__, "--inner", *sizes, "--repeats", str(args.repeats)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": src},
        )
        results[src] = json.loads(done.stdout.strip().splitlines()[-1])
    rows = int(next(iter(results.values()))["rows"])
    text = (
        f"{rows:,} recommendation rows ({args.users:,} users, {args.items:,} items); "
        f"best of {args.repeats}; {platform.machine()}, {os.cpu_count()} CPUs\n\n" + table(results)
    )
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
