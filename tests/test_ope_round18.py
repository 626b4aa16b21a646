"""Off-policy intervals of many resamples: bounded memory, and a bound on n_bootstrap.

The bootstrap drew each block of 256 buckets in all ``n_bootstrap`` resamples at once:
``256 x n_bootstrap`` counts, several arrays of them (1.35 GB at n_bootstrap=1e5 on a
log of 1000 rows; 1e6 some 13 GB, 1e7 an out-of-memory kill). The resamples are now
drawn in chunks of :data:`~polars_irmetrics.ope.intervals.DRAWN` counts (the same bits:
each resample's sums do not depend on the chunk), a batch's groups resampled
:data:`~polars_irmetrics.ope.intervals.HELD` sums at a time, and ``n_bootstrap`` above
:data:`~polars_irmetrics.ground.options.MAX_N_BOOTSTRAP` is refused with the memory it
would hold.
"""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ope import intervals, ratio_intervals


def _bandit(n: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(0)
    log = pl.DataFrame(
        {
            "round_id": np.arange(n),
            "action": rng.integers(0, 2, n),
            "reward": rng.integers(0, 2, n).astype(float),
            "pscore": np.full(n, 0.5),
            "day": np.arange(n) % 3,
        }
    )
    policy = pl.DataFrame(
        {
            "round_id": np.repeat(np.arange(n), 2),
            "action": np.tile([0, 1], n),
            "prob": np.tile([0.3, 0.7], n),
        }
    )
    return log, policy


def _slates(n: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(1)
    log = pl.DataFrame(
        {
            "round_id": np.repeat(np.arange(n), 2),
            "position": np.tile([1, 2], n),
            "reward": rng.integers(0, 2, 2 * n).astype(float),
            "pscore": np.full(2 * n, 0.25),
            "pscore_cascade": np.tile([0.5, 0.25], n),
            "day": np.repeat(np.arange(n) % 3, 2),
        }
    )
    policy = log.select(
        "round_id",
        "position",
        pl.lit(0.5).alias("pscore"),
        pl.Series("pscore_cascade", np.tile([0.5, 0.5], n)),
    )
    return log, policy


@pytest.mark.parametrize(
    ("value", "gib"),
    [
        (10_000_001, "0.2"),  # 24 * 10_000_001 / 2**30 = 0.2235 GiB
        (10**9, "22.4"),  # 24e9 / 2**30 = 22.35 GiB
    ],
)
def test_n_bootstrap_above_the_bound_is_refused_with_its_memory(value: int, gib: str) -> None:
    log, policy = _bandit(4)
    message = (
        f"n_bootstrap={value} is above 10_000_000, the most resamples an off-policy "
        "interval draws: it holds each by group's resamples in memory, at least 24 bytes "
        f"each (about {gib} GiB per group and estimator here). Pass n_bootstrap=10_000_000 "
        "or fewer: the default 1000, or 10_000, is plenty for a 95% interval"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(log, ["ips"], policy=policy, ci=0.9, n_bootstrap=value)


def test_many_resamples_are_drawn_in_bounded_memory() -> None:
    # 300 rows: a block of 256 buckets; 40_000 resamples drew 256 x 40_000 counts at
    # once (82 MB an array, several arrays: some 400 MB); in chunks of 2**20 counts,
    # 8 MB an array
    log, policy = _bandit(300)
    tracemalloc.start()
    try:
        irm.evaluate(log, ["ips"], policy=policy, ci=0.9, n_bootstrap=40_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 120 * 2**20


@pytest.mark.parametrize(
    ("data", "metrics"),
    [(_bandit(300), ["ips", "snips"]), (_slates(300), ["slate_ips", "slate_snips"])],
)
def test_chunks_of_resamples_and_groups_give_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
    data: tuple[pl.DataFrame, pl.DataFrame],
    metrics: list[str],
) -> None:
    log, policy = data
    options = {"policy": policy, "ci": 0.9, "n_bootstrap": 500, "by": "day"}
    whole = irm.evaluate(log, metrics, **options)
    # 7 counts a chunk, one group a step (the sums of 3 groups x 500 resamples)
    monkeypatch.setattr(intervals, "DRAWN", 7)
    monkeypatch.setattr(ratio_intervals, "DRAWN", 7)
    monkeypatch.setattr(intervals, "HELD", 1)
    # 3 resamples of the slate ratio's sums (3 tables x 2 positions each) at a time
    monkeypatch.setattr(ratio_intervals, "HELD", 18)
    chunked = irm.evaluate(log, metrics, **options)
    assert_frame_equal(chunked, whole, check_exact=True)
