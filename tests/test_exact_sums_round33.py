"""Round 33: the fixed-point sums count each term's rest in units of 2**-128, so small
terms keep their digits (in units of 2**-64 alone, a term below 2**-11 lost its bits
below 2**-64: rbp(p=0.9) of one relevant document at rank 300 read
2.0821018520411627e-15 for 2.082141893205342e-15)."""

from __future__ import annotations

import math
import random

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.metrics.scope import (
    exact_sum,
    exact_sum_horizontal,
    fixed_sum,
    fixed_weighted_mean,
)

#: rbp(p=0.9)'s term at rank 300 as the library computes it (power(): exp(n ln p)).
RBP_300 = (1.0 - 0.9) * math.exp(299 * math.log(0.9))


def _rank_300() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": ["q"] * 300,
            "doc_id": [f"d{i}" for i in range(300)],
            "rank": list(range(1, 301)),
            "relevance": [0] * 299 + [1],
        }
    )


@pytest.mark.parametrize("route", ["group_by", "evaluate", "evaluate-lazy", "per-query"])
def test_rbp_of_one_relevant_document_at_rank_300_is_its_term(route: str) -> None:
    frame = _rank_300()
    if route == "group_by":
        value = frame.group_by("query_id").agg(irm.rbp(p=0.9))["rbp(p=0.9)"].item()
    else:
        run, qrels = frame.select("query_id", "doc_id", "rank"), frame.drop("rank")
        lazy = route == "evaluate-lazy"
        out = irm.evaluate(
            run.lazy() if lazy else run,
            ["rbp(p=0.9)"],
            qrels=qrels.lazy() if lazy else qrels,
            order="rank",
            per_query=route == "per-query",
        )
        value = (out.collect() if isinstance(out, pl.LazyFrame) else out)["rbp(p=0.9)"].item()
    assert value == RBP_300


#: (seed, terms, binary exponents of the terms, signs): random terms of 2**-76 or more
#: (every bit held) whose sums, 3 times over too, stay below 2**-11 (where the sum is
#: the double nearest to the exact one).
RANDOM = [
    (0, 5, -70, -16, False),
    (1, 40, -64, -20, False),
    (2, 300, -75, -40, False),
    (3, 17, -60, -18, True),
    (4, 1, -75, -66, False),
]


def _terms(seed: int, count: int, low: int, high: int, signed: bool) -> list[float]:
    rng = random.Random(seed)
    terms = [math.ldexp(rng.random() + 0.5, rng.randint(low, high)) for _ in range(count)]
    if signed:  # negative terms of 2**-64 or more in magnitude: held exactly too
        terms = [t if rng.random() < 0.6 else -t for t in terms]
    return terms


@pytest.mark.parametrize(("seed", "count", "low", "high", "signed"), RANDOM)
def test_small_terms_sum_to_math_fsum(
    seed: int, count: int, low: int, high: int, signed: bool
) -> None:
    terms = _terms(seed, count, low, high, signed)
    expected = math.fsum(terms)
    frame = pl.DataFrame({"x": terms, "g": [0] * count})
    assert frame.select(fixed_sum(pl.col("x"))).item() == expected
    # a group-by of the reversed rows, and the streaming engine: the same bits
    reverse = frame.reverse().lazy().group_by("g").agg(exact_sum(pl.col("x")))
    assert reverse.collect(engine="streaming")["x"].item() == expected
    wide = pl.DataFrame({f"c{i}": [t] for i, t in enumerate(terms)})
    assert wide.select(exact_sum_horizontal([pl.col(c) for c in wide.columns])).item() == expected
    # each value standing for 3 rows: the mean over the 3 * count rows
    counted = pl.DataFrame({"x": terms, "n": [3] * count})
    mean = counted.select(fixed_weighted_mean(pl.col("x"), pl.col("n"))).item()
    assert mean == math.fsum(terms * 3) / (3 * count)


def test_a_large_total_is_within_a_unit_of_math_fsum() -> None:
    """Where the total is 2**-11 or more its units of 2**-64 are rounded first: within
    one unit in the last place of the exact sum (the bits in any order)."""
    for seed in range(5):
        terms = [0.75, *_terms(seed, 50, -90, -60, False)]
        expected = math.fsum(terms)
        got = pl.DataFrame({"x": terms}).select(fixed_sum(pl.col("x"))).item()
        assert abs(got - expected) <= math.ulp(expected)
        back = pl.DataFrame({"x": terms[::-1]}).select(fixed_sum(pl.col("x"))).item()
        assert back == got


def test_a_sum_divided_by_a_count_beside_per_row_columns() -> None:
    """A sum read once: polars computes a subexpression written twice in a ``select``
    once, as a column broadcast to every row, and a column divided by a scalar is a
    product by its reciprocal (round 32's form, whose low sum was read twice, gave
    5.156304491858325 here: the propensity-scored metrics' per_query=True mean ideal,
    one plan against buckets)."""
    values = [206.25217967433298] + [0.0] * 39
    frame = pl.LazyFrame({"q": list(range(40)), "x": values})
    mean = fixed_sum(pl.col("x")) / pl.len().cast(pl.Float64)
    beside = frame.select("q", mean.alias("m")).collect()["m"]
    assert beside.to_list() == [206.25217967433298 / 40] * 40
