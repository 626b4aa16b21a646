"""The fixed-point sums behind every float sum of a formula: exact, in any row order."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.metrics.scope import FIXED_LIMIT, fixed_sum


def _sum(values: list[float]) -> float:
    return float(
        pl.DataFrame({"v": values}, schema={"v": pl.Float64}).select(fixed_sum(pl.col("v"))).item()
    )


@pytest.mark.parametrize("seed", range(5))
def test_the_same_bits_in_any_order_and_the_exact_sum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # terms of a metric: gains over log discounts, from about 1e-3 to 1e3
    values = (rng.integers(1, 1000, 200) / np.log2(rng.integers(2, 1000, 200))).tolist()
    total = _sum(values)
    for _ in range(5):
        assert _sum(rng.permutation(values).tolist()) == total
    # above 2**-11 every term is a whole number of 2**-64: the sum is the exact one
    assert total == math.fsum(values)


def test_one_by_one_addition_can_differ_in_the_last_place() -> None:
    # 0.1 + 0.2 + 0.3 added left to right is 0.6000000000000001; the exact sum of the
    # three doubles rounds to 0.6
    assert 0.1 + 0.2 + 0.3 == 0.6000000000000001
    assert _sum([0.1, 0.2, 0.3]) == math.fsum([0.1, 0.2, 0.3]) == 0.6
    assert _sum([0.3, 0.2, 0.1]) == 0.6


def test_nulls_count_as_zero_and_tiny_terms_are_kept() -> None:
    assert _sum([None, 1.5, None]) == 1.5  # type: ignore[list-item]
    assert _sum([2.0**-40, 2.0**-40]) == 2.0**-39
    assert _sum([]) == 0.0


def test_a_users_group_by_falls_back_to_a_float_sum_for_huge_terms() -> None:
    # evaluate() refuses such labels (tests/test_bad_input.py); a user's own group-by
    # has no checks to raise from, so it adds them as plain floats instead
    judged = pl.DataFrame({"query_id": ["q", "q"], "rank": [1, 2], "relevance": [40, 0]})
    for frame in (judged, judged.lazy()):
        out = frame.group_by("query_id").agg(irm.dcg(k=1, gain="exponential"))
        out = out.collect() if isinstance(out, pl.LazyFrame) else out
        assert out.item(0, 1) == 2.0**40 - 1.0
    assert FIXED_LIMIT <= 2.0**40  # so the fallback was taken


def test_a_users_group_by_gives_null_for_a_nan_label() -> None:
    # a NaN label is above every number in polars, so its gain would be NaN, and the
    # fixed-point sum would drop it (its integer cast is null): a number either way.
    # evaluate refuses such a label; an expression gives null, its "no value"
    judged = pl.DataFrame(
        {"query_id": ["q", "q"], "rank": [1, 2], "relevance": [float("nan"), 1.0]}
    )
    for frame in (judged, judged.lazy()):
        out = frame.group_by("query_id").agg(irm.dcg(k=2))
        out = out.collect() if isinstance(out, pl.LazyFrame) else out
        assert out.item(0, 1) is None
