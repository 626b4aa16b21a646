"""Off-policy estimators at scale: ten estimators in one plan vs ``ips`` alone vs obp.

A log of ``--rounds`` rounds x ``--actions`` actions is generated once (not timed) and
written to Parquet (the log, the evaluation policy and the reward model as long tables)
and to ``.npy`` (the same arrays in obp's dense shapes). Timed, best of ``--repeats``:

* ``irm.evaluate(pl.scan_parquet(log), ["ips"], policy=..., ...)`` from Parquet;
* the ten single-action estimators (``ips``, ``ips(clip=10)``, ``snips``, ``dm``, ``dr``,
  ``sndr``, ``switch_dr(tau=10)``, ``dr_os(lambda=10)``, ``sg_ips(lambda=0.1)``,
  ``sg_dr(lambda=0.1)``) in one plan;
* ``ips`` with ``ci=0.95`` (``--resamples`` bootstrap resamples, one vectorised step);
* with ``--obp-python`` (a side environment with obp 0.5.7, which does not install beside
  this project's pins): obp's ``estimate_policy_value`` of the same ten estimators on
  the numpy arrays (loaded beforehand, not timed), and ``InverseProbabilityWeighting``'s
  ``estimate_interval`` with the same number of resamples (its Python loop).

    python benchmarks/ope.py --rounds 1000000 --actions 10 \\
        --obp-python .side/obp/bin/python

Targets (issue 40, at 10M rounds x 10 actions): the ten within 3x ``ips`` alone and
faster than obp; the bootstrap 20x faster than obp's ``estimate_interval``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

import polars_irmetrics as irm

TEN = [
    "ips",
    "ips(clip=10)",
    "snips",
    "dm",
    "dr",
    "sndr",
    "switch_dr(tau=10)",
    "dr_os(lambda=10)",
    "sg_ips(lambda=0.1)",
    "sg_dr(lambda=0.1)",
]

OBP_SCRIPT = """
import json, sys, time
import numpy as np
from obp.ope import (InverseProbabilityWeighting as IPW,
    SelfNormalizedInverseProbabilityWeighting as SNIPW, DirectMethod as DM,
    DoublyRobust as DR, SelfNormalizedDoublyRobust as SNDR, SwitchDoublyRobust as SDR,
    DoublyRobustWithShrinkage as DROS, SubGaussianInverseProbabilityWeighting as SGIPW,
    SubGaussianDoublyRobust as SGDR)
folder, repeats, resamples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = ("reward", "action", "pscore", "action_dist", "q_hat")
a = {k: np.load(f"{folder}/{k}.npy") for k in names}
inputs = dict(reward=a["reward"], action=a["action"], pscore=a["pscore"],
    action_dist=a["action_dist"], estimated_rewards_by_reg_model=a["q_hat"])
ten = [IPW(), IPW(lambda_=10.0), SNIPW(), DM(), DR(), SNDR(), SDR(lambda_=10.0),
    DROS(lambda_=10.0), SGIPW(lambda_=0.1), SGDR(lambda_=0.1)]
def best(fn):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out
t_ten, values = best(lambda: [e.estimate_policy_value(**inputs) for e in ten])
t_ips, _ = best(lambda: IPW().estimate_policy_value(**inputs))
t_ci, ci = best(
    lambda: IPW().estimate_interval(**inputs, n_bootstrap_samples=resamples, random_state=0)
)
print(json.dumps({"ten": t_ten, "ips": t_ips, "ci": t_ci, "values": [float(v) for v in values],
    "ci_values": {k: float(v) for k, v in ci.items()}}))
"""


def best(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def generate(folder: Path, rounds: int, actions: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(rounds, actions))
    logger = np.exp(logits)
    logger /= logger.sum(1, keepdims=True)
    action = (logger.cumsum(1) > rng.random((rounds, 1))).argmax(1)
    true_q = 1 / (1 + np.exp(-rng.normal(-1.0, 1.0, (rounds, actions))))
    reward = (rng.random(rounds) < true_q[np.arange(rounds), action]).astype(float)
    q_hat = np.clip(true_q + rng.normal(0, 0.05, (rounds, actions)), 0, 1)
    policy = np.exp(3 * q_hat)
    policy /= policy.sum(1, keepdims=True)
    pscore = logger[np.arange(rounds), action]
    for name, array in (
        ("reward", reward),
        ("action", action),
        ("pscore", pscore),
        ("action_dist", policy[:, :, None]),
        ("q_hat", q_hat[:, :, None]),
    ):
        np.save(folder / f"{name}.npy", array)
    ids = np.repeat(np.arange(rounds), actions)
    acts = np.tile(np.arange(actions), rounds)
    pl.DataFrame(
        {"round_id": np.arange(rounds), "action": action, "reward": reward, "pscore": pscore}
    ).write_parquet(folder / "log.parquet")
    pl.DataFrame({"round_id": ids, "action": acts, "prob": policy.ravel()}).write_parquet(
        folder / "policy.parquet"
    )
    pl.DataFrame({"round_id": ids, "action": acts, "q_hat": q_hat.ravel()}).write_parquet(
        folder / "reward_model.parquet"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--actions", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--obp-python", default=None, help="a Python with obp 0.5.7")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        generate(folder, args.rounds, args.actions, args.seed)

        def run(metrics: list[str], **kwargs: object) -> pl.DataFrame:
            return irm.evaluate(
                pl.scan_parquet(folder / "log.parquet"),
                metrics,
                policy=pl.scan_parquet(folder / "policy.parquet"),
                reward_model=pl.scan_parquet(folder / "reward_model.parquet")
                if any(m not in ("ips", "snips") for m in metrics)
                else None,
                **kwargs,  # type: ignore[arg-type]
            ).collect()

        t_ips, _ = best(lambda: run(["ips"]), args.repeats)
        t_ten, ten = best(lambda: run(TEN), args.repeats)
        t_ci, ci = best(lambda: run(["ips"], ci=0.95, n_bootstrap=args.resamples), args.repeats)
        result: dict[str, object] = {
            "rounds": args.rounds,
            "actions": args.actions,
            "resamples": args.resamples,
            "irm_ips_s": round(t_ips, 3),
            "irm_ten_s": round(t_ten, 3),
            "irm_ten_over_ips": round(t_ten / t_ips, 2),
            "irm_ips_ci_s": round(t_ci, 3),
            "irm_values": {m: ten[m].item() for m in TEN},  # type: ignore[index]
            "irm_ci": [ci["ips_lower"].item(), ci["ips_upper"].item()],  # type: ignore[index]
        }
        if args.obp_python:
            proc = subprocess.run(
                [args.obp_python, "-c", OBP_SCRIPT, tmp, str(args.repeats), str(args.resamples)],
                capture_output=True,
                text=True,
                check=True,
            )
            obp = json.loads(proc.stdout.strip().splitlines()[-1])
            result |= {
                "obp_ips_s": round(obp["ips"], 3),
                "obp_ten_s": round(obp["ten"], 3),
                "obp_ci_s": round(obp["ci"], 3),
                "ten_speedup_vs_obp": round(obp["ten"] / t_ten, 2),
                "ci_speedup_vs_obp": round(obp["ci"] / t_ci, 2),
                "max_abs_difference_vs_obp": max(
                    abs(v - ten[m].item())  # type: ignore[index]
                    for m, v in zip(TEN, obp["values"], strict=True)
                ),
                "obp_ci": [
                    obp["ci_values"]["95.0% CI (lower)"],
                    obp["ci_values"]["95.0% CI (upper)"],
                ],
            }
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
