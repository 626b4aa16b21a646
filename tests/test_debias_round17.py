"""``debias=irm.Debias(iqr_coef, random_state)``, round 17: a ``random_state`` of 2**64 or
more reached polars' ``hash(seed=)`` and raised its raw ``OverflowError: int too big to
convert``; it is now refused by the option's check (``InvalidValueError``, naming the
value and the fix), and 2**64 - 1, the largest 64-bit seed, draws as any other."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

# item "a" is judged by four users (queries), the others by one: with iqr_coef=0 the
# border is int(q3) = 1 user, so "a" keeps one of its four judgments, drawn by the seed
QRELS = pl.DataFrame(
    {
        "query_id": [1, 2, 3, 4, 1, 2, 3, 4],
        "doc_id": ["a", "a", "a", "a", "b", "c", "d", "e"],
        "relevance": [1] * 8,
    }
)
RUN = pl.DataFrame({"query_id": [1, 2, 3, 4], "doc_id": ["a"] * 4, "rank": [1] * 4})


@pytest.mark.parametrize("seed", [2**63, 2**64 - 1], ids=["2**63", "2**64-1"])
def test_a_64_bit_random_state_draws(seed: int) -> None:
    out = irm.evaluate(RUN, ["P@1"], qrels=QRELS, debias=irm.Debias(0.0, seed), per_query=True)
    # "a" stays relevant for exactly one of the four users: P@1 is 1 there, 0 elsewhere
    assert sorted(out["P@1"].to_list()) == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (
            2**64,
            "debias=Debias(..., random_state=18446744073709551616): random_state must be at "
            "most 2**64 - 1 (18446744073709551615), the 64-bit seed of the hash that draws "
            "the rows kept: pass random_state % 2**64",
        ),
        (
            10**20,
            "debias=Debias(..., random_state=100000000000000000000): random_state must be at "
            "most 2**64 - 1 (18446744073709551615), the 64-bit seed of the hash that draws "
            "the rows kept: pass random_state % 2**64",
        ),
    ],
    ids=["2**64", "1e20"],
)
def test_a_random_state_beyond_64_bits_is_refused(seed: int, message: str) -> None:
    with pytest.raises(InvalidValueError, match="^" + re.escape(message) + "$"):
        irm.evaluate(RUN, ["P@1"], qrels=QRELS, debias=irm.Debias(0.0, seed))
