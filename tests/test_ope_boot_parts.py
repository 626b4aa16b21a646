"""The bootstrap interval on a split log: the same bits as one plan (buckets 1, 3, auto)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm


def _tables(n: int = 300) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(0)
    log = pl.DataFrame(
        {
            "round_id": np.arange(n),
            "action": rng.integers(0, 3, n),
            "reward": rng.random(n),
            "pscore": np.full(n, 1 / 3),
            "g": rng.integers(0, 2, n),
        }
    )
    policy = pl.DataFrame(
        {
            "round_id": np.repeat(np.arange(n), 3),
            "action": np.tile(np.arange(3), n),
            "prob": np.tile([0.5, 0.3, 0.2], n),
        }
    )
    return log, policy


def _run(lazy: bool, **kwargs: Any) -> pl.DataFrame:
    log, policy = _tables()
    if lazy:
        out = irm.evaluate(log.lazy(), ["ips", "snips"], policy=policy.lazy(), ci=0.95, **kwargs)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    out = irm.evaluate(log, ["ips", "snips"], policy=policy, ci=0.95, **kwargs)
    assert isinstance(out, pl.DataFrame)
    return out


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("buckets", [1, 3, "auto"])
def test_bootstrap_split_same_bits(lazy: bool, buckets: Any) -> None:
    one = _run(lazy)
    split = _run(lazy, buckets=buckets)
    assert_frame_equal(split, one, check_exact=True)
    # the interval holds the estimate and is not degenerate
    _, est, low, high = one.row(0)[:4]
    assert low < est < high
