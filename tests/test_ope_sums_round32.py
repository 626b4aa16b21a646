"""Round 32: the off-policy sums count each term's rest in units of 2**-128, so small
terms keep their digits (in units of 2**-64 alone, 20,000 rewards near 1e-7 beside one
1.0 lost a few ulps of the estimate), on one machine, out of core and on the engines."""

from __future__ import annotations

import math
import random
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ope.sums import exact_list_sum, exact_sum

N = 20_000
_RANDOM = random.Random(32)
#: One reward of 1.0 and N rewards near 1e-7 (each has digits below 2**-64).
REWARDS = [1.0] + [_RANDOM.uniform(0.9e-7, 1.1e-7) for _ in range(N)]
#: The exact sum of the rewards, rounded once (math.fsum), over the rounds.
MEAN = math.fsum(REWARDS) / (N + 1)
MEANS = ["ips", "snips", "dm", "dr"]


def _tables(order: int | None = None) -> dict[str, pl.DataFrame]:
    """A log of N + 1 rounds, one action each, logged and taken with probability 1 (every
    weight 1): ips, snips, dm and dr are the rewards' mean; ``order``: rows shuffled."""
    rounds = pl.int_range(N + 1, eager=True).alias("round_id")
    log = pl.DataFrame({"round_id": rounds, "action": 0, "reward": REWARDS, "pscore": 1.0})
    tables = {
        "log": log,
        "policy": log.select("round_id", "action", prob=pl.lit(1.0)),
        "reward_model": log.select("round_id", "action", q_hat="reward"),
    }
    if order is not None:
        tables = {k: v.sample(fraction=1.0, shuffle=True, seed=order) for k, v in tables.items()}
    return tables


def _values(out: pl.DataFrame) -> list[float]:
    return [out[m].item() for m in MEANS]


def test_exact_sum_keeps_small_terms_digits() -> None:
    # in units of 2**-64 alone: 1.0019994744106135, 2 ulps below math.fsum's 1.001999474410614
    frame = pl.DataFrame({"v": REWARDS})
    total = math.fsum(REWARDS)
    assert frame.select(exact_sum(pl.col("v"))).item() == total
    lists = pl.DataFrame({"v": [REWARDS[::-1]]})  # the list shape: the same integers
    assert lists.select(exact_list_sum(pl.col("v"))).item() == total


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_estimates_are_the_exact_mean(kind: str) -> None:
    tables = _tables()
    if kind == "LazyFrame":
        lazy = {k: v.lazy() for k, v in tables.items()}
        out = irm.evaluate(lazy.pop("log"), MEANS, **lazy).collect()
    else:
        out = irm.evaluate(tables.pop("log"), MEANS, **tables)
    assert _values(out) == [MEAN] * len(MEANS)


@pytest.mark.parametrize("buckets", [None, 3])
def test_shuffled_and_bucketed_give_the_same_bits(buckets: int | None) -> None:
    tables = {k: v.lazy() for k, v in _tables(order=7).items()}
    out = irm.evaluate(tables.pop("log"), MEANS, buckets=buckets, **tables).collect()
    assert _values(out) == [MEAN] * len(MEANS)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_give_the_exact_mean(engine: str, request: pytest.FixtureRequest) -> None:
    tables = _tables()
    if engine == "spark":
        import polars_irmetrics.spark as irm_spark

        session = request.getfixturevalue("spark")
        frames: dict[str, Any] = {
            k: session.createDataFrame(v.to_pandas()) for k, v in tables.items()
        }
        out = irm_spark.evaluate(frames.pop("log"), MEANS, partitions=3, **frames).toPandas()
    else:
        request.getfixturevalue("client")
        import dask.dataframe as dd

        import polars_irmetrics.dask as irm_dask

        frames = {k: dd.from_pandas(v.to_pandas(), npartitions=3) for k, v in tables.items()}
        out = irm_dask.evaluate(frames.pop("log"), MEANS, partitions=3, **frames).compute()
    assert [float(out[m].iloc[0]) for m in MEANS] == [MEAN] * len(MEANS)
