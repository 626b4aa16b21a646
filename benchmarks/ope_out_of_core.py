"""Off-policy estimators out of core: peak memory of ``buckets=`` from Parquet.

Writes a log of ``--rounds`` rounds x ``--actions`` actions to Parquet in chunks of
``--chunk`` rounds (the log, the evaluation policy and the reward model as long tables:
``R``, ``R x A`` and ``R x A`` rows; generating holds one chunk), then, in a fresh
process, evaluates the ten single-action estimators with ``buckets=`` from
``pl.scan_parquet`` and reports the wall time and the process's peak resident memory
(``ru_maxrss``). With ``--check`` (small logs only) the same numbers in one plan are
compared, to the last bit.

    python benchmarks/ope_out_of_core.py --rounds 10000000 --actions 10 --buckets auto

Target (issue 40): 10M rounds x 10 actions under 1 GiB.
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

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from ope import TEN  # noqa: E402 (the ten estimators of benchmarks/ope.py)


def generate(folder: Path, rounds: int, actions: int, chunk: int, seed: int = 0) -> None:
    """The three tables under ``folder/{log,policy,reward_model}/part-*.parquet``."""
    rng = np.random.default_rng(seed)
    for name in ("log", "policy", "reward_model"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    for i, start in enumerate(range(0, rounds, chunk)):
        n = min(chunk, rounds - start)
        ids = np.arange(start, start + n, dtype=np.int64)
        logits = rng.normal(size=(n, actions))
        behaviour = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        target = np.exp(2 * logits) / np.exp(2 * logits).sum(axis=1, keepdims=True)
        chosen = (behaviour.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
        q = 1 / (1 + np.exp(-logits))
        reward = (rng.random(n) < q[np.arange(n), chosen]).astype(np.float64)
        pl.DataFrame(
            {
                "round_id": ids,
                "action": chosen.astype(np.int64),
                "reward": reward,
                "pscore": behaviour[np.arange(n), chosen],
            }
        ).write_parquet(folder / "log" / f"part-{i:04d}.parquet")
        long_ids = np.repeat(ids, actions)
        long_actions = np.tile(np.arange(actions, dtype=np.int64), n)
        pl.DataFrame(
            {"round_id": long_ids, "action": long_actions, "prob": target.ravel()}
        ).write_parquet(folder / "policy" / f"part-{i:04d}.parquet")
        pl.DataFrame(
            {"round_id": long_ids, "action": long_actions, "q_hat": q.ravel()}
        ).write_parquet(folder / "reward_model" / f"part-{i:04d}.parquet")


def evaluate(folder: Path, buckets: str, check: bool) -> dict[str, object]:
    """The ten estimators with ``buckets=`` from Parquet; time and peak memory."""
    import polars_irmetrics as irm

    scans = {
        n: pl.scan_parquet(folder / n / "*.parquet") for n in ("log", "policy", "reward_model")
    }
    chosen: int | str = int(buckets) if buckets.isdigit() else buckets

    def run(buckets: int | str | None) -> pl.DataFrame:
        out = irm.evaluate(
            scans["log"],
            TEN,
            policy=scans["policy"],
            reward_model=scans["reward_model"],
            buckets=buckets,
        )
        assert isinstance(out, pl.LazyFrame)
        return out.collect()

    start = time.perf_counter()
    result = run(chosen)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KiB -> GiB
    report: dict[str, object] = {
        "seconds": round(seconds, 1),
        "peak_rss_gib": round(peak, 3),
        "values": {m: result[m].item() for m in TEN},
    }
    if check:
        report["same_bits_as_one_plan"] = run(None).equals(result)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--actions", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=1_000_000)
    parser.add_argument("--buckets", default="auto")
    parser.add_argument("--folder", type=Path, default=None, help="reuse or keep the data")
    parser.add_argument("--check", action="store_true", help="compare with one plan")
    parser.add_argument("--evaluate-only", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.evaluate_only is not None:
        print(json.dumps(evaluate(args.evaluate_only, args.buckets, args.check)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or Path(tmp)
        if not (folder / "log").exists():
            generate(folder, args.rounds, args.actions, args.chunk)
        command = [sys.executable, __file__, "--evaluate-only", str(folder)]
        command += ["--buckets", args.buckets] + (["--check"] if args.check else [])
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        print(done.stdout.strip())


if __name__ == "__main__":
    main()
