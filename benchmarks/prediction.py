"""Prediction quality at scale: AUC, GAUC and log loss in one plan vs scikit-learn.

A click log of ``--rows`` impressions of ``--users`` users (predicted probabilities
rounded to 4 decimals, so there are ties; labels drawn from them) is built once in
memory, as a polars DataFrame and as numpy arrays (not timed). Timed, best of
``--repeats``:

* ``sklearn.metrics.roc_auc_score(y, p)`` on the numpy arrays;
* ``irm.evaluate(log.lazy(), ["auc"], ...).collect()``;
* ``irm.evaluate(log.lazy(), ["gauc"], query_id="user", ...).collect()``;
* ``irm.evaluate(log.lazy(), ["auc", "gauc", "logloss"], ...).collect()`` (one plan);
* per user: ``irm.evaluate(log.lazy(), ["auc", "logloss"], per_query=True, ...)`` and
  the same two as expressions in ``log.lazy().group_by("user").agg(...)``;
* GAUC as a per-user loop of ``roc_auc_score``: the log is split by user beforehand (not
  timed), the loop runs over a random sample of ``--sample-users`` users and its time is
  extrapolated to all users (time x users / sample).

    python benchmarks/prediction.py --rows 10000000 --users 100000

Targets (issue 31): auc within 2x roc_auc_score; gauc at least 20x faster than the loop;
the three together under 3x one auc.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
import polars as pl
from sklearn.metrics import roc_auc_score

import polars_irmetrics as irm


def best(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--sample-users", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--decimals", type=int, default=4, help="round the probabilities (-1: keep all)"
    )
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    user = rng.integers(0, args.users, args.rows)
    p = 1.0 / (1.0 + np.exp(-rng.normal(-2.0, 1.5, args.rows)))
    if args.decimals >= 0:
        p = np.round(p, args.decimals)
    y = (rng.random(args.rows) < p).astype(np.int8)
    log = pl.DataFrame({"user": user, "clicked": y, "p_click": p})
    kw: dict[str, str] = {"label": "clicked", "prediction": "p_click", "query_id": "user"}

    def ours(metrics: list[str]) -> Callable[[], object]:
        return lambda: irm.evaluate(log.lazy(), metrics, **kw).collect()

    values = irm.evaluate(log, ["auc", "gauc", "logloss"], **kw)
    sk_auc = roc_auc_score(y, p)
    assert abs(values["auc"].item() - sk_auc) < 1e-9, (values["auc"].item(), sk_auc)

    t_sk = best(lambda: roc_auc_score(y, p), args.repeats)
    t_auc = best(ours(["auc"]), args.repeats)
    t_gauc = best(ours(["gauc"]), args.repeats)
    t_all = best(ours(["auc", "gauc", "logloss"]), args.repeats)
    t_per_user = best(
        lambda: irm.evaluate(log.lazy(), ["auc", "logloss"], per_query=True, **kw).collect(),
        args.repeats,
    )
    exprs = [irm.auc("clicked", "p_click"), irm.logloss("clicked", "p_click")]
    t_exprs = best(lambda: log.lazy().group_by("user").agg(exprs).collect(), args.repeats)

    # the per-user loop: split once (untimed), time the loop on a sample, extrapolate
    order = np.argsort(user, kind="stable")
    bounds = np.flatnonzero(np.diff(user[order])) + 1
    parts = np.split(order, bounds)
    sample = rng.choice(len(parts), size=min(args.sample_users, len(parts)), replace=False)

    def loop() -> None:
        for i in sample:
            rows = parts[i]
            labels = y[rows]
            if labels.min() != labels.max():
                roc_auc_score(labels, p[rows])

    t_loop = best(loop, 1) * len(parts) / len(sample)

    threads = pl.thread_pool_size()
    print(
        f"rows={args.rows:,} users={args.users:,} cpus={os.cpu_count()} "
        f"polars_threads={threads} repeats={args.repeats} (best of) "
        f"distinct predictions={len(np.unique(p)):,}"
    )
    print(f"values: {values.row(0, named=True)}")
    print(f"sklearn roc_auc_score         {t_sk:8.3f} s")
    print(f"irm auc                       {t_auc:8.3f} s   ratio to sklearn {t_auc / t_sk:.2f}x")
    print(f"irm gauc                      {t_gauc:8.3f} s")
    print(
        f"sklearn per-user loop (extrap.) {t_loop:6.1f} s   "
        f"({len(sample):,} of {len(parts):,} users timed)   irm gauc faster by "
        f"{t_loop / t_gauc:.0f}x"
    )
    print(f"irm auc+gauc+logloss          {t_all:8.3f} s   ratio to irm auc {t_all / t_auc:.2f}x")
    print(f"irm per-user auc+logloss      {t_per_user:8.3f} s   (per_query=True)")
    print(f"group_by(user) irm.auc+logloss {t_exprs:7.3f} s   (expressions)")


if __name__ == "__main__":
    main()
