"""The fixed-point sums behind every float sum of a formula, and the off-policy plans'
exact sums: exact, in any row order."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.metrics.scope import FIXED_LIMIT, fixed_sum
from polars_irmetrics.ope.sums import (
    _exact_aggs,
    bounded_columns,
    bounded_list_columns,
    exact_columns,
    exact_list_columns,
    exact_list_sum,
)
from polars_irmetrics.ope.sums import exact_sum as ope_exact_sum


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


def test_a_users_group_by_gives_null_for_huge_terms() -> None:
    # evaluate() refuses such labels (tests/test_bad_input.py); a user's own group-by
    # has no checks to raise from, so the expression has no value (its float sum would
    # not be the same bits in every row order; 2**60000 was NaN, not a number)
    judged = pl.DataFrame({"query_id": ["q", "q"], "rank": [1, 2], "relevance": [40, 0]})
    for frame in (judged, judged.lazy()):
        out = frame.group_by("query_id").agg(irm.dcg(k=1, gain="exponential"))
        out = out.collect() if isinstance(out, pl.LazyFrame) else out
        assert out.item(0, 1) is None
    assert FIXED_LIMIT <= 2.0**40  # so the term is beyond the exact sums


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


# --- the off-policy plans' exact sums (polars_irmetrics.ope.sums): any magnitude to 2**96


def _ope_integers(values: list[float | None]) -> tuple[int, float, float]:
    """The exact sum's integer total in units of 2**-64, its float (exact_sum) and the
    same float from the lists' path (exact_list_sum), over ``values``."""
    frame = pl.DataFrame({"v": values}, schema={"v": pl.Float64})
    whole, units, _ = frame.select(exact_columns("x", pl.col("v"))).row(0)
    # a select over all the rows adds only the large terms' whole numbers: the same
    hi, lo, _ = _exact_aggs(pl.col("v"), grouped=False)
    assert frame.select(hi.alias("hi"), lo.alias("lo")).row(0) == (whole, units)
    total = float(frame.select(ope_exact_sum(pl.col("v"))).item())
    listed = pl.DataFrame({"v": [values]}, schema={"v": pl.List(pl.Float64)})
    from_list = float(listed.select(exact_list_sum(pl.col("v"))).item())
    return int(whole) * 2**64 + int(units), total, from_list


def _floor_units(values: list[float | None]) -> int:
    """Each term rounded down to a whole number of 2**-64, added as Python integers."""
    return sum(math.floor(Fraction(v) * 2**64) for v in values if v is not None)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.1, -0.1], 0.0),  # a negative term above -0.5 was rounded: 2.8e-17
        ([-0.3, 0.1, 0.2], 2.0**-55),  # the doubles' own sum: 0.1 + 0.2 - 0.3 is not 0
        ([2.0**63, -(2.0**63), 0.25], 0.25),  # whole numbers beyond Int64
        ([2.0**95, -(2.0**95), -0.125], -0.125),
        ([2.0**62, 2.0**9, 2.0**-3], 2.0**62 + 2.0**10),  # a tie but for the fraction
        ([2.0**62, 2.0**9], 2.0**62),  # a tie: to the even one
        ([1e-30, -1e-30], -(2.0**-64)),  # below 2**-64: each rounded down to a unit
        ([None, 1.5, None], 1.5),
        ([], 0.0),
    ],
)
def test_ope_exact_sum_of_worked_terms(values: list[float | None], expected: float) -> None:
    integers, total, from_list = _ope_integers(values)
    assert integers == _floor_units(values)
    assert total == from_list
    assert total == expected


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(-1.0, 1.0, allow_nan=False),
            st.floats(-(2.0**40), 2.0**40, allow_nan=False),
            st.floats(-(2.0**95), 2.0**95, allow_nan=False),
            st.integers(-(2**40), 2**40).map(lambda k: k * 2.0**9 + 2.0**62),  # near ties
            st.none(),
        ),
        max_size=12,
    )
)
def test_ope_exact_sum_is_the_sum_of_the_terms_in_units(values: list[float | None]) -> None:
    integers, total, from_list = _ope_integers(values)
    assert integers == _floor_units(values)  # the integers are exact
    assert total == from_list  # the rows and the lists give the same bits
    assert total == float(Fraction(integers, 2**64))  # rounded once, to the nearest
    shuffled = list(reversed(values))
    assert _ope_integers(shuffled)[1] == total  # in any order


@pytest.mark.parametrize(
    ("values", "flag"),
    [
        ([float("nan")], 1),  # NaN (an estimator's own 0 / 0): the sum is NaN
        ([1.0, float("nan")], 1),
        ([1.0, float("inf")], 2),  # too large: refused by the merge
        ([2.0**96, 1.0], 2),
        ([float("nan"), float("-inf")], 2),
        ([2.0**95, 1.0], 0),
    ],
)
def test_ope_exact_sum_flags_nan_and_too_large_terms(values: list[float], flag: int) -> None:
    frame = pl.DataFrame({"v": values})
    assert frame.select(exact_columns("x", pl.col("v"))).row(0)[2] == flag
    listed = pl.DataFrame({"v": [values]}).select(exact_list_columns("x", pl.col("v")))
    assert listed.row(0)[2] == flag
    assert math.isnan(_ope_integers(values)[1]) == (flag > 0)


def _expected_flag(values: list[float | None]) -> int:
    """A sum's flag from its terms, one by one: 2 where one is infinite or 2**96 or more
    in magnitude, else 1 where one is NaN, else 0."""
    terms = [v for v in values if v is not None]
    if any(not math.isnan(v) and abs(v) >= 2.0**96 for v in terms):
        return 2
    return 1 if any(math.isnan(v) for v in terms) else 0


_SPECIAL = st.sampled_from([float("nan"), float("inf"), float("-inf"), 2.0**96, -(2.0**100)])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(st.floats(-(2.0**95), 2.0**95, allow_nan=False), _SPECIAL, st.none()),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_ope_exact_sum_flag_is_the_terms_largest_flag(groups: list[list[float | None]]) -> None:
    """The flag read from two reductions (the largest magnitude, the float sum) is the
    largest of the terms' flags, in a group_by and over all the rows, and the list
    shape's (a flag per item) agrees."""
    every = [v for group in groups for v in group]
    frame = pl.DataFrame(
        {"g": [k for k, group in enumerate(groups) for _ in group], "v": every},
        schema={"g": pl.Int64, "v": pl.Float64},
    )
    flag = exact_columns("x", pl.col("v"))[2].alias("flag")
    grouped = frame.group_by("g").agg(flag).sort("g")["flag"].to_list()
    assert grouped == [_expected_flag(group) for group in groups]
    assert frame.select(flag).item() == _expected_flag(every)
    listed = pl.DataFrame({"v": groups}, schema={"v": pl.List(pl.Float64)})
    assert listed.select(exact_list_columns("x", pl.col("v"))[2])[:, 0].to_list() == grouped


@pytest.mark.parametrize(
    ("values", "flag"),
    [
        ([0.5, 2.0**61], 0),
        ([0.5, float("nan")], 1),
        ([float("nan"), float("nan")], 1),
        ([None, None], 0),
    ],
)
def test_bounded_sum_flags_nan_terms(values: list[float | None], flag: int) -> None:
    """A bounded sum (terms below 2**62) is NaN where a term is: its flag from the
    float sum, in the row and the list shapes."""
    frame = pl.DataFrame({"v": values}, schema={"v": pl.Float64})
    assert frame.select(bounded_columns("x", pl.col("v"))[2]).item() == flag
    listed = pl.DataFrame({"v": [values]}, schema={"v": pl.List(pl.Float64)})
    assert listed.select(bounded_list_columns("x", pl.col("v"))[2]).item() == flag
