"""Pairwise similarity of each user's list: the sum identity against a self-join.

    python benchmarks/recsys.py                          # the committed sizes
    python benchmarks/recsys.py --users 200000 --k 10 20 50 --dim 64 --out results.md

Intra-list diversity needs ``sum_{i != j} cos(v_i, v_j)`` over each user's list of
``k`` items. Two polars plans compute it, side by side in one process on the same
random lists (``numpy.random.default_rng(SEED)``):

* ``sums`` (what ``irm.beyond_accuracy`` runs): ``|sum_i u_i|^2 - sum_i |u_i|^2`` for
  unit vectors ``u``. With an ``Array`` feature column (the length ``d`` is in the
  schema) one group-by sums entry ``j`` of the vectors for each ``j`` ("sums, array");
  with a ``List`` column the entries are exploded into ``k x d`` rows per user and
  summed by position ("sums, list");
* ``self-join``: every ordered pair of the list joined on the user (``k^2`` rows per
  user), the dot product of each pair as list arithmetic, summed.

Both give the same sums (checked to 1e-9 relative); the script prints the best of
``--repeat`` timings and the ratio, and writes a Markdown table (``--out``).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import polars as pl

from polars_irmetrics.recsys.vectors import pair_similarity_by_self_join, pair_similarity_by_sums

SEED = 20261125
DEFAULT_OUT = Path(__file__).with_name("results_recsys.md")


def lists(users: int, k: int, dim: int) -> pl.DataFrame:
    rng = np.random.default_rng(SEED)
    vectors = rng.normal(size=(users * k, dim))
    units = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return pl.DataFrame(
        {
            "user": np.repeat(np.arange(users), k),
            "item": np.tile(np.arange(k), users),
            "unit": units.tolist(),
        }
    )


def best(plan: pl.LazyFrame, repeat: int) -> tuple[float, pl.DataFrame]:
    times, out = [], pl.DataFrame()
    for _ in range(repeat):
        start = time.perf_counter()
        out = plan.collect()
        times.append(time.perf_counter() - start)
    return min(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--k", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    rows = []
    for k in args.k:
        frame = lists(args.users, k, args.dim).lazy()
        t_list, sums = best(pair_similarity_by_sums(frame, ["user"], "unit"), args.repeat)
        t_sums, fixed = best(
            pair_similarity_by_sums(frame, ["user"], "unit", args.dim), args.repeat
        )
        joined = pair_similarity_by_self_join(frame, ["user"], "item", "unit")
        t_join, pairs = best(joined, args.repeat)
        both = sums.join(pairs, on="user", suffix="_pairs")
        a, b = both["pair_similarity_sum"], both["pair_similarity_sum_pairs"]
        worst = float(((a - b).abs() / (b.abs() + 1.0)).max() or 0.0)
        if len(both) != args.users or worst > 1e-9:
            raise SystemExit(f"the two plans disagree at k={k}: {worst}")
        check = fixed.join(sums, on="user", suffix="_list")
        a, b = check["pair_similarity_sum"], check["pair_similarity_sum_list"]
        worst = max(worst, float(((a - b).abs() / (b.abs() + 1.0)).max() or 0.0))
        if worst > 1e-9:
            raise SystemExit(f"the array and list sums disagree at k={k}: {worst}")
        ratio, ratio_list = t_join / t_sums, t_join / t_list
        print(
            f"k={k:>3}: sums (array) {t_sums:.3f} s, sums (list) {t_list:.3f} s, "
            f"self-join {t_join:.3f} s; self-join / sums: {ratio:.2f}x (array), "
            f"{ratio_list:.2f}x (list)"
        )
        rows.append(
            f"| {args.users:,} | {k} | {args.dim} | {t_sums:.3f} | {t_list:.3f} | "
            f"{t_join:.3f} | {ratio:.2f}x | {ratio_list:.2f}x | {worst:.1e} |"
        )
    header = [
        "# Pairwise similarity per user list: sum identity vs self-join",
        "",
        f"`python benchmarks/recsys.py --users {args.users} --k {' '.join(map(str, args.k))} "
        f"--dim {args.dim} --repeat {args.repeat}`; polars {pl.__version__}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs. The machine "
        "was shared with other busy processes while this ran: compare the ratios, not the "
        "absolute times. Best of the repeats, seconds. A larger measurement: "
        "`python benchmarks/recsys.py --users 200000 --k 10 20 50 --dim 64` (minutes, "
        "most of them in the self-join at k = 50).",
        "",
        "| users | k | dim | sums, array (s) | sums, list (s) | self-join (s) "
        "| self-join / sums, array | self-join / sums, list | max rel. diff |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    args.out.write_text("\n".join([*header, *rows]) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
