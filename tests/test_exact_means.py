"""Two systems whose per-query values are the same numbers in another query order have
equal means, to the bit, wherever the comparison statistics read them.

numpy's pairwise sums of ``0.1, 0.2, 0.3`` and ``0.3, 0.2, 0.1`` differ in the last
bit (``0.6000000000000001`` against ``0.6``): a tie read as a swap by
``irm.system_agreement`` (one significant), a correlation of ``-1`` where the means
all tie, and a mean delta of ``5.6e-17`` in ``irm.compare``. The means are now
correctly rounded (:func:`polars_irmetrics.comparison.paired.exact_means`), the bits of
``irm.evaluate``'s.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

import polars_irmetrics as irm
from polars_irmetrics.comparison.paired import exact_means

QUERIES = ["q1", "q2", "q3"]
#: The same values, the second system's in reverse query order: the means tie exactly.
A = pl.DataFrame(
    {
        "system": ["x"] * 3 + ["y"] * 3,
        "query_id": QUERIES * 2,
        "ndcg": [0.1, 0.2, 0.3, 0.3, 0.2, 0.1],
    }
)
B = pl.DataFrame(
    {"system": ["x"] * 3 + ["y"] * 3, "query_id": QUERIES * 2, "ndcg": [0.4] * 3 + [0.5] * 3}
)


def test_numpy_sums_differ_in_the_last_bit() -> None:
    """The premise: without exact sums the two means differ."""
    values = np.array([[0.1, 0.3], [0.2, 0.2], [0.3, 0.1]])
    assert values.mean(axis=0)[0] != values.mean(axis=0)[1]
    assert exact_means(values).tolist() == [math.fsum([0.1, 0.2, 0.3]) / 3] * 2


def test_system_agreement_reads_a_tie_as_no_swap() -> None:
    out = irm.system_agreement(A, B, "kendall").row(0, named=True)
    # a's means all tie: no correlation (scipy's kendalltau gives NaN), no swap
    assert out["correlation"] is None
    assert out["swaps"] == 0
    assert out["significant_swaps"] == 0
    pairs = irm.system_agreement(A, B, "kendall", per_pair=True).row(0, named=True)
    assert pairs["delta_a"] == 0.0
    assert pairs["swapped"] is False


QRELS = pl.DataFrame(
    [(q, f"r{i}", 1) for q in QUERIES for i in range(3)],
    schema=["query_id", "doc_id", "relevance"],
    orient="row",
)


def _run(hits: list[int]) -> pl.DataFrame:
    """Ten documents per query, the first ``n`` of them relevant: P@10 of ``n / 10``."""
    return pl.DataFrame(
        [
            (q, f"r{i}" if i < n else f"n{i}", float(10 - i))
            for q, n in zip(QUERIES, hits, strict=True)
            for i in range(10)
        ],
        schema=["query_id", "doc_id", "score"],
        orient="row",
    )


def test_compare_reads_the_same_values_as_a_tie() -> None:
    """P@10 of 0.1, 0.2, 0.3 against 0.3, 0.2, 0.1: equal means, a delta of 0, the
    means of ``irm.evaluate`` to the bit."""
    runs = {"x": _run([1, 2, 3]), "y": _run([3, 2, 1])}
    out = irm.compare(runs, ["P@10"], qrels=QRELS, baseline="x").row(0, named=True)
    assert out["mean"] == out["baseline_mean"]
    assert out["delta"] == 0.0
    alone = irm.evaluate(runs["y"], ["P@10"], qrels=QRELS)["P@10"].item()
    assert out["mean"] == alone == math.fsum([0.1, 0.2, 0.3]) / 3
