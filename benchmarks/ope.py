"""Off-policy estimators at scale: ten estimators in one plan vs ``ips`` alone vs obp.

A log of ``--rounds`` rounds x ``--actions`` actions is generated once (not timed, in
blocks of a million rounds, so that memory stays flat) and written to Parquet (the log,
the evaluation policy and the reward model as long tables) and to ``.npy`` (the same
arrays in obp's dense shapes). Timed, best of ``--repeats``, each from Parquet
(``pl.scan_parquet``) and from memory (the three tables read into DataFrames beforehand,
not timed, as obp's arrays are):

* ``irm.evaluate(log, ["ips"], policy=...)``;
* the ten single-action estimators (``ips``, ``ips(clip=10)``, ``snips``, ``dm``, ``dr``,
  ``sndr``, ``switch_dr(tau=10)``, ``dr_os(lambda=10)``, ``sg_ips(lambda=0.1)``,
  ``sg_dr(lambda=0.1)``) in one plan;
* ``ips`` with ``ci=0.95`` (``--resamples`` bootstrap resamples, one vectorised step);
* with ``--obp-python`` (a side environment with obp 0.5.7, which does not install beside
  this project's pins): obp's ``estimate_policy_value`` of the same ten estimators on
  the numpy arrays (loaded beforehand, not timed), and ``InverseProbabilityWeighting``'s
  ``estimate_interval`` with the same number of resamples (its Python loop; best of
  ``--obp-ci-repeats``, it takes minutes at 10M rounds).

The JSON printed holds every time, the ratios side by side (the ten over ``ips`` alone,
obp's time over irm's), the largest difference from obp's estimates, the machine's load
average before and after the run and the peak memory (``VmHWM``) of this process and of
obp's. obp runs first (a subprocess, while this one is small). ``--obp-resamples``
measures obp's interval with fewer resamples and scales its time to ``--resamples`` (its
loop draws and estimates every resample alike), for a loaded machine at 10M rounds.

    python benchmarks/ope.py --rounds 1000000 --actions 10 \\
        --obp-python .side/obp/bin/python

obp's own time moves by a third from run to run on a shared 2-core machine, so
``--alternate N`` (with ``--obp-python``) times only the ten, obp on its arrays and irm
from Parquet (the long form), in turn, each in a fresh process (best of
``--repeats``), for ``N`` rounds, and prints each round and the medians.

Targets (issue 40, at 10M rounds x 10 actions): the ten within 3x ``ips`` alone and
faster than obp; the bootstrap 20x faster than obp's ``estimate_interval``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

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
ci_repeats = int(sys.argv[4])
names = ("reward", "action", "pscore", "action_dist", "q_hat")
a = {k: np.load(f"{folder}/{k}.npy") for k in names}
inputs = dict(reward=a["reward"], action=a["action"], pscore=a["pscore"],
    action_dist=a["action_dist"], estimated_rewards_by_reg_model=a["q_hat"])
ten = [IPW(), IPW(lambda_=10.0), SNIPW(), DM(), DR(), SNDR(), SDR(lambda_=10.0),
    DROS(lambda_=10.0), SGIPW(lambda_=0.1), SGDR(lambda_=0.1)]
def best(fn, repeats=repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out
t_ten, values = best(lambda: [e.estimate_policy_value(**inputs) for e in ten])
t_ips, _ = best(lambda: IPW().estimate_policy_value(**inputs))
t_ci, ci = best(
    lambda: IPW().estimate_interval(**inputs, n_bootstrap_samples=resamples, random_state=0),
    ci_repeats,
)
status = open("/proc/self/status").read().split("VmHWM:")[1]
peak = int(status.split()[0]) / 1024
print(json.dumps({"ten": t_ten, "ips": t_ips, "ci": t_ci, "values": [float(v) for v in values],
    "ci_values": {k: float(v) for k, v in ci.items()}, "peak_mib": peak}))
"""


def best(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


#: The tables written: the log, and the policy and reward model in both shapes.
TABLES = ("log", "policy", "reward_model", "policy_list", "reward_model_list")

#: Rounds generated (and written) per block.
BLOCK = 1_000_000


def generate(folder: Path, rounds: int, actions: int, seed: int) -> None:
    """The log, policy and reward model as Parquet and obp's arrays as ``.npy``, written
    block by block (``BLOCK`` rounds at a time)."""
    rng = np.random.default_rng(seed)
    shapes = {
        "reward": (rounds,),
        "action": (rounds,),
        "pscore": (rounds,),
        "action_dist": (rounds, actions, 1),
        "q_hat": (rounds, actions, 1),
    }
    arrays = {
        name: np.lib.format.open_memmap(
            folder / f"{name}.npy",
            mode="w+",
            dtype=np.int64 if name == "action" else np.float64,
            shape=shape,
        )
        for name, shape in shapes.items()
    }
    parts = folder / "parts"
    parts.mkdir()
    for block, start in enumerate(range(0, rounds, BLOCK)):
        n = min(BLOCK, rounds - start)
        logits = rng.normal(size=(n, actions))
        logger = np.exp(logits)
        logger /= logger.sum(1, keepdims=True)
        action = (logger.cumsum(1) > rng.random((n, 1))).argmax(1)
        true_q = 1 / (1 + np.exp(-rng.normal(-1.0, 1.0, (n, actions))))
        reward = (rng.random(n) < true_q[np.arange(n), action]).astype(float)
        q_hat = np.clip(true_q + rng.normal(0, 0.05, (n, actions)), 0, 1)
        policy = np.exp(3 * q_hat)
        policy /= policy.sum(1, keepdims=True)
        pscore = logger[np.arange(n), action]
        stop = start + n
        arrays["reward"][start:stop] = reward
        arrays["action"][start:stop] = action
        arrays["pscore"][start:stop] = pscore
        arrays["action_dist"][start:stop, :, 0] = policy
        arrays["q_hat"][start:stop, :, 0] = q_hat
        round_id = np.arange(start, stop)
        ids = np.repeat(round_id, actions)
        acts = np.tile(np.arange(actions), n)
        tables = {
            "log": {"round_id": round_id, "action": action, "reward": reward, "pscore": pscore},
            "policy": {"round_id": ids, "action": acts, "prob": policy.ravel()},
            "reward_model": {"round_id": ids, "action": acts, "q_hat": q_hat.ravel()},
            # obp's shape: one row per round, a list indexed by action
            "policy_list": {"round_id": round_id, "prob": policy},
            "reward_model_list": {"round_id": round_id, "q_hat": q_hat},
        }
        for name, columns in tables.items():
            pl.DataFrame(columns).write_parquet(parts / f"{name}-{block:05d}.parquet")
    for array in arrays.values():
        array.flush()
    del arrays
    for name in TABLES:
        pl.scan_parquet(parts / f"{name}-*.parquet").sink_parquet(folder / f"{name}.parquet")
    for part in parts.iterdir():
        part.unlink()
    parts.rmdir()


def run(
    frames: dict[str, pl.LazyFrame | pl.DataFrame], metrics: list[str], **kwargs: object
) -> pl.DataFrame:
    """``irm.evaluate`` of ``metrics`` on the log, policy and (where read) reward model."""
    out = irm.evaluate(
        frames["log"],  # type: ignore[arg-type]
        metrics,
        policy=frames["policy"],
        reward_model=frames["reward_model"]
        if any(m not in ("ips", "snips") for m in metrics)
        else None,
        **kwargs,  # type: ignore[arg-type]
    )
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def peak_mib() -> int:
    """This process's peak resident memory (``VmHWM``; ``ru_maxrss`` would count the
    parent's at the fork of a subprocess)."""
    status = Path("/proc/self/status").read_text().split("VmHWM:")[1]
    return round(int(status.split()[0]) / 1024)


def load() -> str:
    """The load average (1, 5, 15 minutes), as ``uptime`` prints it."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


#: irm's ten from Parquet (the long form) in a fresh process: the best of argv[2] runs.
IRM_SCRIPT = """
import sys, time, warnings
import polars as pl
import polars_irmetrics as irm
warnings.simplefilter("ignore")
folder, repeats, metrics = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(";")
tables = {n: pl.scan_parquet(f"{folder}/{n}.parquet") for n in ("log", "policy", "reward_model")}
times = []
for _ in range(repeats):
    start = time.perf_counter()
    irm.evaluate(tables["log"], metrics, policy=tables["policy"],
                 reward_model=tables["reward_model"]).collect()
    times.append(time.perf_counter() - start)
print(min(times))
"""


def alternate(folder: Path, obp_python: str, rounds: int, repeats: int) -> None:
    """obp's ten and irm's (long form, Parquet) timed in turn, each in a fresh process."""
    obp_times, irm_times = [], []
    for k in range(rounds):
        obp = subprocess.run(
            [obp_python, "-c", OBP_SCRIPT, str(folder), str(repeats), "1", "1"],
            capture_output=True,
            text=True,
            check=True,
        )
        obp_times.append(json.loads(obp.stdout.strip().splitlines()[-1])["ten"])
        mine = subprocess.run(
            [sys.executable, "-c", IRM_SCRIPT, str(folder), str(repeats), ";".join(TEN)],
            capture_output=True,
            text=True,
            check=True,
        )
        irm_times.append(float(mine.stdout.strip().splitlines()[-1]))
        print(
            f"round {k + 1}: obp {obp_times[-1]:.2f} s, irm {irm_times[-1]:.2f} s, "
            f"obp over irm {obp_times[-1] / irm_times[-1]:.2f}x (load {load()})",
            flush=True,
        )
    obp_median, irm_median = statistics.median(obp_times), statistics.median(irm_times)
    print(
        f"median: obp {obp_median:.2f} s, irm {irm_median:.2f} s, obp over irm "
        f"{obp_median / irm_median:.2f}x; irm faster in "
        f"{sum(o > i for o, i in zip(obp_times, irm_times, strict=True))} of {rounds}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--actions", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--obp-ci-repeats", type=int, default=1)
    parser.add_argument(
        "--obp-resamples",
        type=int,
        default=0,
        help="resamples of obp's interval (0: --resamples); its time is scaled to --resamples",
    )
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sources", default="parquet,memory", help="where irm reads the tables from"
    )
    parser.add_argument("--obp-python", default=None, help="a Python with obp 0.5.7")
    parser.add_argument(
        "--shapes",
        default="long,list",
        help="the policy's and reward model's shapes: long (a row per action), list "
        "(a row per round, obp's)",
    )
    parser.add_argument(
        "--alternate",
        type=int,
        default=0,
        help="time only the ten, obp and irm (long, Parquet) in turn, in fresh processes, "
        "this many rounds",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        generate(folder, args.rounds, args.actions, args.seed)
        if args.alternate:
            if not args.obp_python:
                parser.error("--alternate times obp against irm: give --obp-python")
            alternate(folder, args.obp_python, args.alternate, args.repeats)
            return
        result: dict[str, object] = {
            "rounds": args.rounds,
            "actions": args.actions,
            "resamples": args.resamples,
            "load_average_before": load(),
        }
        obp: dict[str, Any] = {}
        if args.obp_python:  # first, while this process is small
            obp_resamples = args.obp_resamples or args.resamples
            proc = subprocess.run(
                [
                    args.obp_python,
                    "-c",
                    OBP_SCRIPT,
                    tmp,
                    str(args.repeats),
                    str(obp_resamples),
                    str(args.obp_ci_repeats),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            obp = json.loads(proc.stdout.strip().splitlines()[-1])
            result |= {
                "obp_ips_s": round(obp["ips"], 3),
                "obp_ten_s": round(obp["ten"], 3),
                "obp_ci_resamples": obp_resamples,
                "obp_ci_measured_s": round(obp["ci"], 3),
                # obp's loop draws and estimates each resample alike: time per resample
                "obp_ci_s": round(obp["ci"] * args.resamples / obp_resamples, 3),
                "obp_peak_mib": round(obp["peak_mib"]),
            }
        sources = args.sources.split(",")
        runs = [(shape, source) for shape in args.shapes.split(",") for source in sources]
        for shape, source in runs:
            suffix = "_list" if shape == "list" else ""
            paths = {
                name: folder / f"{name}{'' if name == 'log' else suffix}.parquet"
                for name in ("log", "policy", "reward_model")
            }
            frames: dict[str, pl.LazyFrame | pl.DataFrame] = (
                {name: pl.scan_parquet(path) for name, path in paths.items()}
                if source == "parquet"
                else {name: pl.read_parquet(path) for name, path in paths.items()}
            )

            t_ips, _ = best(partial(run, frames, ["ips"]), args.repeats)
            t_ten, ten = best(partial(run, frames, TEN), args.repeats)
            interval = partial(run, frames, ["ips"], ci=0.95, n_bootstrap=args.resamples)
            t_ci, ci = best(interval, args.repeats)
            prefix = ("irm" if source == "parquet" else "irm_memory") + suffix
            result |= {
                f"{prefix}_ips_s": round(t_ips, 3),
                f"{prefix}_ten_s": round(t_ten, 3),
                f"{prefix}_ten_over_ips": round(t_ten / t_ips, 2),
                f"{prefix}_ips_ci_s": round(t_ci, 3),
                f"{prefix}_values": {m: ten[m].item() for m in TEN},  # type: ignore[index]
                f"{prefix}_ci": [ci["ips_lower"].item(), ci["ips_upper"].item()],  # type: ignore[index]
                # the high-water mark so far: after "memory", of the whole run
                f"{prefix}_peak_mib": peak_mib(),
            }
            del frames
        if obp:
            for shape, source in runs:
                suffix = "_list" if shape == "list" else ""
                prefix = ("irm" if source == "parquet" else "irm_memory") + suffix
                name = source + suffix
                values = result[f"{prefix}_values"]
                result |= {
                    f"ips_speedup_vs_obp_{name}": round(
                        obp["ips"] / result[f"{prefix}_ips_s"],  # type: ignore[operator]
                        2,
                    ),
                    f"ten_speedup_vs_obp_{name}": round(
                        obp["ten"] / result[f"{prefix}_ten_s"],  # type: ignore[operator]
                        2,
                    ),
                    f"ci_speedup_vs_obp_{name}": round(
                        result["obp_ci_s"] / result[f"{prefix}_ips_ci_s"],  # type: ignore[operator]
                        2,
                    ),
                    f"max_abs_difference_vs_obp_{name}": max(
                        abs(v - values[m])  # type: ignore[index]
                        for m, v in zip(TEN, obp["values"], strict=True)
                    ),
                }
            result["obp_ci"] = [
                obp["ci_values"]["95.0% CI (lower)"],
                obp["ci_values"]["95.0% CI (upper)"],
            ]
        result["load_average_after"] = load()
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
