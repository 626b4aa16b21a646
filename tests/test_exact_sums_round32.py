"""The fixed-point sums keep the digits of small terms (round 32).

Each term was a whole number of 2**-64 (its bits below dropped), so a term below 2**-11
lost digits and every term of a long sum up to 2**-64: rbp(p=0.9) with one relevant
document at rank 300 read 2.0821018520411627e-15 (the term is 2.082141893205342e-15), a
mean of 1e-7 values 9.99999999994822e-08. Each term is now also counted in units of
2**-128. The references are math.fsum of the same doubles (correctly rounded)."""

from __future__ import annotations

import math
import random
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.metrics.scope import (
    exact_mean,
    exact_sum,
    exact_sum_horizontal,
    fixed_list_sum,
    fixed_sum,
    fixed_weighted_mean,
    wide_sum,
)

FRAMES = [pl.DataFrame, pl.LazyFrame]


def _rbp_run(p: float, ranks: list[int], depth: int) -> tuple[pl.DataFrame, pl.DataFrame, float]:
    """A run of ``depth`` documents, the relevant ones at ``ranks``, and the fsum of their
    rbp terms ``(1 - p) p**(rank - 1)``, the power as the library raises it
    (``exp((rank - 1) ln p)``: the same bits on every engine)."""
    docs = [f"d{r}" for r in range(1, depth + 1)]
    run = pl.DataFrame({"query_id": "q", "doc_id": docs, "rank": range(1, depth + 1)})
    qrels = pl.DataFrame({"query_id": "q", "doc_id": [f"d{r}" for r in ranks], "relevance": 1})
    return run, qrels, math.fsum((1.0 - p) * math.exp((r - 1) * math.log(p)) for r in ranks)


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize(
    ("p", "ranks", "depth"),
    [
        (0.9, [300], 300),  # one term of 2.08e-15: was 2.0821018520411627e-15
        (0.9, list(range(1, 401)), 400),  # 400 terms adding up to 1.0: was 0.9999999999999999
    ],
    ids=["rank-300", "deep"],
)
def test_rbp_is_the_exact_sum_of_its_terms(frame, p, ranks, depth):
    run, qrels, want = _rbp_run(p, ranks, depth)
    rows = run.sample(fraction=1.0, shuffle=True, seed=7)  # any row order: the same bits
    name = f"rbp(p={p})"
    for table in (run, rows):
        per_query = irm.evaluate(frame(table), [name], qrels=frame(qrels), per_query=True)
        mean = irm.evaluate(frame(table), [name], qrels=frame(qrels))
        if isinstance(per_query, pl.LazyFrame):
            per_query, mean = per_query.collect(), mean.collect()
        assert per_query[name].to_list() == [want]
        assert mean[name].to_list() == [want]


_TINY = [1e-7] * 5 + [3e-21, 2.0**-75, 7e-13]
_MEAN = math.fsum(_TINY) / len(_TINY)


@pytest.mark.parametrize(
    ("aggregate", "values", "want"),
    [
        (fixed_sum(pl.col("x")), _TINY, math.fsum(_TINY)),
        (exact_sum(pl.col("x")), _TINY, math.fsum(_TINY)),
        # one level of units, the group scaled first: its tiny terms keep their digits
        (wide_sum(pl.col("x")), _TINY, math.fsum(_TINY)),
        (exact_mean(pl.col("x")), _TINY, _MEAN),
        (exact_mean(pl.col("x"), bounded=True), _TINY, _MEAN),
        (fixed_weighted_mean(pl.col("x"), pl.col("x").is_not_null() * 2), _TINY, _MEAN),
    ],
    ids=["fixed_sum", "exact_sum", "wide_sum", "exact_mean", "bounded_mean", "weighted"],
)
def test_small_terms_keep_their_digits_in_any_order(aggregate, values, want):
    shuffled = values.copy()
    random.Random(5).shuffle(shuffled)
    got = [pl.DataFrame({"x": xs}).select(aggregate).item() for xs in (values, shuffled)]
    assert got == [want, want]


def test_row_and_list_forms_give_the_bits_of_the_long_form():
    terms = pl.DataFrame({"a": [1e-7, 0.1], "b": [1e-7, 0.2], "c": [2.0**-75, 0.3]})
    long = terms.transpose().select(fixed_sum(pl.col(c)) for c in ("column_0", "column_1"))
    horizontal = terms.select(exact_sum_horizontal([pl.col(c) for c in "abc"]))["a"]
    listed = terms.select(fixed_list_sum(pl.concat_list("a", "b", "c")))["a"]
    want = [math.fsum(row) for row in terms.rows()]
    assert long.row(0) == tuple(want)
    assert horizontal.to_list() == want == listed.to_list()


def test_a_mean_of_tiny_values_over_groups():
    frame = pl.LazyFrame({"g": [1, 1, 1, 2, 2], "x": [1e-7, 1e-7, 1e-7, 3e-9, 5e-30]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        means = frame.group_by("g").agg(exact_mean(pl.col("x"))).sort("g").collect()
    assert means["x"].to_list() == [1e-7, math.fsum([3e-9, 5e-30]) / 2]
