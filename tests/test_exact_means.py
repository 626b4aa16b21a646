"""Two systems whose per-query values are the same numbers in another query order have
equal means, to the bit, wherever the comparison statistics read them.

numpy's pairwise sums of ``0.1, 0.2, 0.3`` and ``0.3, 0.2, 0.1`` differ in the last
bit (``0.6000000000000001`` against ``0.6``): a tie read as a swap by
``irm.system_agreement`` (one significant), a correlation of ``-1`` where the means
all tie, and a mean delta of ``5.6e-17`` in ``irm.compare``. The means now add the
values one by one from the least (:func:`polars_irmetrics.comparison.paired.exact_means`,
and ``irm.evaluate``'s alike since round 10: it added them in the queries' order, so the
same per-query values gave another last bit with String query ids than with Int64 ones,
and than ``irm.compare``). The tests' statistics are computed on each column scaled by a power
of two (exact), so that tiny and huge values are neither 0-variance nor overflowing.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
import scipy.stats

import polars_irmetrics as irm
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.paired import exact_means, paired_stats
from polars_irmetrics.errors import IrmWarning

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
    # the values added one by one from the least: 0.1 + 0.2 + 0.3, in either column
    assert exact_means(values).tolist() == [(0.1 + 0.2 + 0.3) / 3] * 2


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
    means of ``irm.evaluate`` to the bit, for each system (round 10: evaluate added in
    the queries' order, 0.6000000000000001 for x and 0.6 for y, so its two means
    differed, and compare's matched only one of them)."""
    runs = {"x": _run([1, 2, 3]), "y": _run([3, 2, 1])}
    out = irm.compare(runs, ["P@10"], qrels=QRELS, baseline="x").row(0, named=True)
    assert out["mean"] == out["baseline_mean"]
    assert out["delta"] == 0.0
    for name in ("x", "y"):
        alone = irm.evaluate(runs[name], ["P@10"], qrels=QRELS)["P@10"].item()
        assert out["mean"] == alone == (0.1 + 0.2 + 0.3) / 3


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization", "bootstrap"])
@pytest.mark.parametrize("exponent", [-1000, -990, 990, 1000])
def test_the_statistics_do_not_depend_on_scale(test: str, exponent: int) -> None:
    """The same deltas times ``2**exponent`` (exact): the same p-value and effect size,
    the delta and the interval scaled, whereas unscaled squares vanish at 1e-300
    (sd 0: p 0, "significant") and overflow at 1e300 (p 1, effect 0)."""
    a = np.array([[1.0, 2.0, 3.0, 5.0]]).T
    b = np.array([[0.5, 2.5, 1.0, 1.0]]).T
    options = CompareOptions(test=test)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrmWarning)  # bootstrap's floor on 4 queries
        higher = np.array([True])
        plain = paired_stats(a, b, options, higher)
        scaled = paired_stats(a * 2.0**exponent, b * 2.0**exponent, options, higher)
    assert scaled.p_value.tolist() == plain.p_value.tolist()
    assert scaled.effect_size.tolist() == plain.effect_size.tolist()
    for field in ("delta", "ci_low", "ci_high", "mean", "baseline_mean"):
        assert (getattr(scaled, field) / 2.0**exponent).tolist() == getattr(
            plain, field
        ).tolist(), field
    if test == "t":  # scipy on the unscaled values
        assert plain.p_value[0] == scipy.stats.ttest_rel(a[:, 0], b[:, 0]).pvalue


def test_the_mean_is_the_same_bits_whatever_the_query_ids() -> None:
    """P@10 of 12 queries (hits 6, 6, 0, 4, 8, 7, 6, 4, 7, 5, 9, 3): Int64 ids gave
    0.5416666666666667, String ids 0.5416666666666666 and compare 0.5416666666666666."""
    hits = [6, 6, 0, 4, 8, 7, 6, 4, 7, 5, 9, 3]
    rows = [
        (q, f"r{i}" if i < n else f"n{i}", float(10 - i))
        for q, n in zip(range(1, 13), hits, strict=True)
        for i in range(10)
    ]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(
        [(q, f"r{i}", 1) for q in range(1, 13) for i in range(10)],
        schema=["query_id", "doc_id", "relevance"],
        orient="row",
    )
    means = set()
    for kind in (pl.Int64, pl.String, pl.Int32):
        cast = pl.col("query_id").cast(kind)
        out = irm.evaluate(run.with_columns(cast), ["P@10"], qrels=qrels.with_columns(cast))
        means.add(out["P@10"].item())
    compared = irm.compare({"a": run, "b": run}, ["P@10"], qrels=qrels)["mean"].item()
    per_query = [n / 10 for n in hits]
    assert means == {compared} == {exact_means(np.array([per_query]).T)[0]}
