"""Peak memory of a global AUC over a Parquet click log: ranked rows vs score histogram.

A click log of ``--rows`` impressions (``user``, ``clicked``, ``p_click`` rounded to
``--decimals``; ``-1`` keeps every digit) is written to Parquet once. Each measurement
then runs in a fresh Python process (so that its peak resident memory, ``ru_maxrss``,
is its own): ``irm.evaluate(pl.scan_parquet(path), ["auc", "logloss"], ...)`` with

* ``buckets=None``: the default in-memory path, each group's rows ranked (one sort);
* ``buckets=4``: ``auc`` from the score histogram (a ``group_by`` over the distinct
  scores, whose memory grows with them, not with the rows).

Both values are printed and must be equal (to 1e-12: the ranked and the histogram
formulas add in another order).

    python benchmarks/prediction_memory.py --rows 10000000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

import polars_irmetrics as irm

_CHILD = "--child"


def child(path: str, buckets: str) -> None:
    """One measurement, in this process: time, values and peak RSS as JSON."""
    start = time.perf_counter()
    out = irm.evaluate(
        pl.scan_parquet(path),
        ["auc", "logloss"],
        label="clicked",
        prediction="p_click",
        buckets=None if buckets == "none" else int(buckets),
    ).collect()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": seconds, "peak_mib": peak, **out.row(0, named=True)}))


def measure(path: str, buckets: str) -> dict[str, float]:
    """:func:`child` in a fresh process."""
    text = subprocess.check_output([sys.executable, __file__, _CHILD, path, buckets], text=True)
    found: dict[str, float] = json.loads(text.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--decimals", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    p = 1.0 / (1.0 + np.exp(-rng.normal(-2.0, 1.5, args.rows)))
    if args.decimals >= 0:
        p = np.round(p, args.decimals)
    y = (rng.random(args.rows) < p).astype(np.int8)
    user = rng.integers(0, max(1, args.rows // 100), args.rows)
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "log.parquet")
        log = pl.DataFrame({"user": user, "clicked": y, "p_click": p})
        log.write_parquet(path)
        small = str(Path(folder) / "small.parquet")  # the process's own overhead
        log.head(1000).write_parquet(small)
        size = Path(path).stat().st_size / 2**20
        del p, y, user, log
        overhead = measure(small, "none")["peak_mib"]
        print(
            f"rows={args.rows:,} decimals={args.decimals} parquet={size:.0f} MiB "
            f"in-memory columns={args.rows * 17 / 2**20:.0f} MiB "
            f"(user i64, clicked i8, p_click f64); the same process on 1,000 rows: "
            f"peak {overhead:.0f} MiB"
        )
        for buckets in ("none", "4"):
            found = measure(path, buckets)
            label = "ranked (buckets=None)" if buckets == "none" else "ranges (buckets=4)   "
            print(
                f"{label}  {found['seconds']:7.2f} s  peak {found['peak_mib']:7.0f} MiB  "
                f"auc={found['auc']!r} logloss={found['logloss']!r}"
            )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == _CHILD:
        child(sys.argv[2], sys.argv[3])
    else:
        main()
