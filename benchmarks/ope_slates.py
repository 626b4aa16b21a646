"""The six slate estimators in one plan: the means, the 1,000-resample bootstrap
intervals and ``per_query=True``, on a synthetic slate log (``--rounds`` rounds x
``--slots`` slots, four ``by`` groups), best of ``--repeats``, each a lazy plan
collected. ``--src`` times another checkout's ``src`` folder (before and after a change,
side by side in one run: pass it twice).

    python benchmarks/ope_slates.py --rounds 1000000 --src ../old/src --src src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import polars as pl

METRICS = ["slate_ips", "slate_iips", "slate_rips", "slate_snips", "slate_sniips", "slate_snrips"]
COLUMNS = ("pscore", "pscore_item_position", "pscore_cascade")


def _probabilities(frame: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """``frame`` (slate rows: ``round_id``, ``position``) with the three propensity
    columns as the checks require them: each slot's conditional probability drawn,
    ``pscore_cascade`` their running product down the slate (non-increasing), ``pscore``
    the whole slate's (its last: one value per round), ``pscore_item_position`` drawn on
    its own."""
    size = frame.height
    step = frame.with_columns(__step=rng.uniform(0.3, 1.0, size))
    cascade = pl.col("__step").cum_prod().over("round_id", order_by="position")
    return step.with_columns(
        cascade.alias("pscore_cascade"),
        cascade.last().over("round_id").alias("pscore"),
        pl.Series("pscore_item_position", rng.uniform(0.05, 1.0, size)),
    ).drop("__step")


def measure(rounds: int, slots: int, repeats: int) -> dict[str, float]:
    """Seconds, best of ``repeats``, of each call (in this process's polars_irmetrics)."""
    import polars_irmetrics as irm

    rng = np.random.default_rng(0)
    size = rounds * slots
    round_id = np.repeat(np.arange(rounds), slots)
    log = pl.DataFrame(
        {
            "round_id": round_id,
            "position": np.tile(np.arange(1, slots + 1), rounds),
            "reward": rng.random(size),
            "day": round_id % 4,
        }
    )
    log = _probabilities(log, rng)
    policy = _probabilities(log.select("round_id", "position"), rng)
    times = {}
    for name, options in (
        ("means", {}),
        ("bootstrap interval, 1,000 resamples", {"ci": 0.95, "n_bootstrap": 1000}),
        ("per_query", {"per_query": True}),
    ):
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            irm.evaluate(log.lazy(), METRICS, policy=policy.lazy(), by="day", **options).collect()
            best = min(best, time.perf_counter() - start)
        times[name] = round(best, 2)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--src", action="append", default=None)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:  # a child, its checkout first on the path (PYTHONPATH)
        print(json.dumps(measure(args.rounds, args.slots, args.repeats)))
        return
    results = {}
    for src in args.src or ["src"]:
        inner = ["--inner", "--rounds", str(args.rounds), "--slots", str(args.slots)]
        done = subprocess.run(
            [sys.executable, __file__, *inner, "--repeats", str(args.repeats)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": src},
        )
        results[src] = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
