"""The bootstrap interval of the single-action off-policy estimators over a split log:
``buckets=`` (1, 3, ``"auto"``), Spark and Dask give the one plan's bits.

Each unit (a log row) falls in the bucket of its own 64-bit hash when its ``by`` group
has at most ``BUCKETS`` units, else in ``hash % BUCKETS``; each part sums its units'
contributions per bucket exactly (fixed point), the parts' sums are added exactly, and
the resamples' Poisson counts are drawn per (seed, group, bucket, resample): no step
depends on how the log was split (:mod:`polars_irmetrics.ope.intervals`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ope.intervals import BUCKETS

from .test_ope_engines import _bandit, _evaluate
from .test_ope_parts import covering, engines_give_the_one_plans_bits

#: every single-action estimator, the self-normalised ones (ratios resampled as ratios:
#: each resample's weighted sums divided) included
ESTIMATORS = ["ips", "ips(clip=2)", "snips", "dm", "dr", "sndr", "switch_dr(tau=2)"]
BOOT = {"ci": 0.9, "n_bootstrap": 60, "seed": 11}


@pytest.mark.parametrize("by", [None, "segment"])
def test_bootstrap_in_buckets_is_the_same_bits(frame_kind: str, by: Any) -> None:
    tables = _bandit("bandit_positions_s3")
    whole = _evaluate(frame_kind, tables, ESTIMATORS, by=by, **BOOT)
    for buckets in (3, "auto"):  # "auto" is buckets=1 at this size
        split = _evaluate(frame_kind, tables, ESTIMATORS, by=by, buckets=buckets, **BOOT)
        assert split.columns == whole.columns
        assert split.equals(whole), buckets
    at = whole.columns.index("snips")  # the interval after its estimate, as in one plan
    assert whole.columns[at : at + 3] == ["snips", "snips_lower", "snips_upper"]


def test_a_group_beyond_the_bucket_count_folds_alike_in_every_split() -> None:
    """More than BUCKETS units: each part folds its hashes into BUCKETS buckets after
    the counts of every part are known, as the one plan does."""
    n = BUCKETS + 900
    rng = np.random.default_rng(5)
    log = pl.DataFrame(
        {
            "round_id": np.arange(n),
            "action": rng.integers(0, 3, n),
            "reward": rng.integers(0, 2, n).astype(float),
            "pscore": np.full(n, 1 / 3),
        }
    )
    policy = pl.DataFrame(
        {
            "round_id": np.repeat(np.arange(n), 3),
            "action": np.tile(np.arange(3), n),
            "prob": np.tile([0.6, 0.3, 0.1], n),
        }
    )
    whole = irm.evaluate(log, ["ips", "snips"], policy=policy, **BOOT)
    for buckets in (2, 5):
        split = irm.evaluate(log, ["ips", "snips"], policy=policy, buckets=buckets, **BOOT)
        assert split.equals(whole), buckets
    lower, upper = whole.row(0, named=True)["ips_lower"], whole.row(0, named=True)["ips_upper"]
    assert lower < whole["ips"].item() < upper


def test_the_seed_draws_another_interval_and_the_same_seed_the_same() -> None:
    tables = _bandit("bandit_binary_s0")
    first = _evaluate("DataFrame", tables, ["ips", "dr"], **BOOT)
    again = _evaluate("DataFrame", tables, ["ips", "dr"], buckets=3, **BOOT)
    other = _evaluate("DataFrame", tables, ["ips", "dr"], **{**BOOT, "seed": 12})
    assert first.equals(again)
    assert first["ips"].item() == other["ips"].item()
    assert first["ips_lower"].item() != other["ips_lower"].item()


# by segment on Spark, unsegmented on Dask; the normal interval the other way round
# (test_ope_parts.py): each engine reads each split once
@pytest.mark.parametrize(("engine", "by", "partitions"), covering(1))
def test_engines_bootstrap_is_the_same_bits(
    engine: str, by: str | None, partitions: int, request: pytest.FixtureRequest
) -> None:
    engines_give_the_one_plans_bits(engine, request, ESTIMATORS, by, partitions, **BOOT)
