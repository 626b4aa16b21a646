"""Off-policy evaluation, round 17: the bootstrap ``seed=`` of the intervals.

A seed above about 2.9e10 (``2**64 / 0x2545F491``; ``time.time_ns()`` is one) raised
numpy's raw ``OverflowError: Python int too large to convert to C long`` from the draws'
mixing step, and one of 2**64 or more polars' ``OverflowError: int too big to convert``
from the rounds' hash. The mixing now wraps at 2**64 as its other terms do (the same
bits for every seed that never wrapped), and a seed beyond the hash's 64 bits is refused
by the options' check, naming the argument, the value and the fix.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ope.intervals import _poisson_counts

LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4, 5, 6],
        "action": [0, 1, 0, 1, 0, 1],
        "reward": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.4, 0.6, 0.5, 0.5],
    }
)
POLICY = pl.DataFrame(
    {
        "round_id": [r for r in range(1, 7) for _ in range(2)],
        "action": [0, 1] * 6,
        "prob": [0.7, 0.3] * 6,
    }
)
# ips's row contributions prob / pscore * reward: 0.7/0.5, 0, 0.7/0.4, 0.3/0.6, 0, 0.3/0.5
CONTRIBUTIONS = [1.4, 0.0, 1.75, 0.5, 0.0, 0.6]

# a slate log of two rounds of two slots; the policy gives every logged slate the same
# propensities, so each slot's weights are 0.5 / 0.25 = 2 (slate), 0.5 / 0.5 = 1 (item)
SLATES = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": [0, 1, 1, 0],
        "reward": [1.0, 0.0, 0.0, 1.0],
        "pscore": [0.25] * 4,
        "pscore_item_position": [0.5] * 4,
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25],
    }
)
SLATE_POLICY = SLATES.select(
    "round_id",
    "position",
    pscore=pl.lit(0.5),
    pscore_item_position=pl.lit(0.5),
    pscore_cascade=pl.Series([0.5, 0.5, 0.5, 0.5]),
)

BIG_SEEDS = [10**11, 1_796_315_653_900_233_254, 2**64 - 1]


def _ips(seed: int, **options: Any) -> tuple[float, float]:
    out = irm.evaluate(LOG, ["ips"], policy=POLICY, ci=0.9, seed=seed, **options)
    return out["ips_lower"][0], out["ips_upper"][0]


@pytest.mark.parametrize("seed", BIG_SEEDS, ids=["1e11", "time_ns", "2**64-1"])
def test_a_large_seed_draws_an_interval(seed: int) -> None:
    lower, upper = _ips(seed)
    # every resample's ips is a weighted mean of the six contributions
    assert min(CONTRIBUTIONS) <= lower <= upper <= max(CONTRIBUTIONS)
    assert lower < upper  # 1,000 Poisson resamples of six rows do not all agree
    # the same bits again, and out of core
    assert _ips(seed) == (lower, upper)
    assert _ips(seed, buckets=2) == (lower, upper)


@pytest.mark.parametrize("seed", BIG_SEEDS, ids=["1e11", "time_ns", "2**64-1"])
def test_a_large_seed_draws_a_self_normalised_slate_interval(seed: int) -> None:
    # the ratio resampler (slate_snips) draws by the same mixing step
    out = irm.evaluate(SLATES, ["slate_snips"], policy=SLATE_POLICY, ci=0.9, seed=seed)
    lower, upper = out["slate_snips_lower"][0], out["slate_snips_upper"][0]
    # slate_snips: each round's slot-sum of r w over the mean weight; both rounds hold
    # one rewarded slot of weight 2 over a mean weight of 2: 1 in every resample
    assert (lower, upper) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("seed", "bounds"),
    [
        (7, (0.19999999999999998, 1.2067708333333327)),
        (29_000_000_000, (0.24285714285714285, 1.194047619047618)),
    ],
    ids=["7", "2.9e10"],
)
def test_a_seed_that_never_wrapped_keeps_its_draws(seed: int, bounds: tuple[float, float]) -> None:
    # 0x2545F491 * seed + 1 < 2**64 for both: the wrapped term is the product itself,
    # so the bounds are the bits the code before the wrap gave (at 191b8ff)
    assert _ips(seed) == bounds
    # the counts of the draws are the same function of the seed whichever resampler
    group, bucket = np.zeros(8, np.uint64), np.arange(8, dtype=np.uint64)
    draws = np.arange(4, dtype=np.uint64)[None, :]
    counts = _poisson_counts(group, bucket, draws, seed)
    assert np.array_equal(counts, _poisson_counts(group, bucket, draws, seed))
    assert not np.array_equal(counts, _poisson_counts(group, bucket, draws, seed + 1))


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (
            2**64,
            "seed must be an integer from 0 to 2**64 - 1 (18446744073709551615), the "
            "bootstrap interval's 64-bit seed, got 18446744073709551616: pass seed % 2**64",
        ),
        (
            10**30,
            "seed must be an integer from 0 to 2**64 - 1 (18446744073709551615), the "
            "bootstrap interval's 64-bit seed, got 1000000000000000000000000000000: pass "
            "seed % 2**64",
        ),
        (-1, "seed must be an integer >= 0, got -1"),
    ],
    ids=["2**64", "1e30", "negative"],
)
def test_a_seed_beyond_64_bits_is_refused(seed: int, message: str) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(LOG, ["ips"], policy=POLICY, ci=0.9, seed=seed)


# --- the effective sample size where every weight is 0 -------------------------------
# (sum w)^2 / sum w^2 is 0 / 0 there: it was NaN, which polars orders above every
# number, so pl.col("ips_ess") > 100 kept the group; it is 0 now (no row carries weight)

#: segment "x": the policy takes action 0 with 0.7; segment "y": never the logged action
SEGMENTS = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4],
        "action": [0, 0, 1, 1],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.5, 0.5, 0.5, 0.5],
        "segment": ["x", "x", "y", "y"],
    }
)
SEGMENT_POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3, 4, 4],
        "action": [0, 1] * 4,
        "prob": [0.7, 0.3, 0.7, 0.3, 1.0, 0.0, 1.0, 0.0],
    }
)


@pytest.mark.parametrize("options", [{}, {"buckets": 2}], ids=["one_plan", "buckets"])
def test_the_ess_of_weights_all_zero_is_zero(options: dict[str, Any]) -> None:
    out = irm.evaluate(SEGMENTS, ["ips", "snips"], policy=SEGMENT_POLICY, by="segment", **options)
    rows = {r["segment"]: r for r in out.iter_rows(named=True)}
    # x: weights 1.4 and 1.4: (2.8)^2 / (1.96 + 1.96) = 2
    assert rows["x"]["ips_ess"] == pytest.approx(2.0, abs=1e-15)
    # y: weights 0 and 0; ips 0, snips 0 / 0 (NaN, obp's), the ess 0, not NaN
    assert (rows["y"]["ips"], rows["y"]["ips_ess"], rows["y"]["ips_max_weight"]) == (0.0, 0.0, 0.0)
    assert rows["y"]["snips_ess"] == 0.0
    kept = out.filter(pl.col("ips_ess") > 1)["segment"].to_list()
    assert kept == ["x"]  # y was kept too, as NaN


@pytest.mark.parametrize(
    "metric", ["ips(clip=0)", "dr(clip=0)", "switch_dr(tau=0)", "dr_os(lambda=0)"]
)
def test_the_ess_of_weights_clipped_to_zero_is_zero(metric: str) -> None:
    model = POLICY.select("round_id", "action", q_hat=pl.lit(0.5))
    tables = {"reward_model": model} if not metric.startswith("ips") else {}
    out = irm.evaluate(LOG, [metric], policy=POLICY, **tables)
    assert out[f"{metric}_ess"].item() == 0.0
    assert out[f"{metric}_max_weight"].item() == 0.0


def test_the_ess_of_a_slate_policy_of_propensity_zero_is_zero() -> None:
    zero = SLATE_POLICY.with_columns(pscore=pl.lit(0.0))
    out = irm.evaluate(SLATES, ["slate_ips", "slate_iips"], policy=zero)
    assert out["slate_ips"].item() == 0.0
    assert out["slate_ips_ess"].item() == 0.0
    # slate_iips reads the item propensities (0.5 / 0.5 = 1 at each of the 4 slots)
    assert out["slate_iips_ess"].item() == pytest.approx(4.0, abs=1e-15)
