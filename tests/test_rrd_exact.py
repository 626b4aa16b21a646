"""rRD's normaliser is the maximum over rankings (Yang & Stoyanovich 2017's ``Z``, and
what ir_measures' ``rRD`` divides by: the largest value over every permutation of the
ranking). The library's dynamic programme over the prefix counts
(``exposure.rnd.rrd_normaliser``) against brute force: every ranking of ``N <= 22``
documents enumerated (bit patterns), and a memoised search over the prefix counts for
``N <= 80``; through the one door, every ranking of ``N = 11`` and ``12`` as a query of
one run, each value ``raw / max raw`` of its ``(N, P)``, all in ``[0, 1]``."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from itertools import product

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from polars_irmetrics.exposure.rnd import rrd_normaliser
from tests.helpers import property_settings
from tests.test_awrf import _evaluate


def _term(k: int, i: int, n: int, p: int) -> float:
    """rRD's term at the cut-off ``i``: ``|k/(i-k) - p/(n-p)| / log2(i)``, the ratio 0
    where the top ``i`` is all protected."""
    ratio = k / (i - k) if i > k else 0.0
    return abs(ratio - p / (n - p)) / math.log2(i)


def _bits(n: int) -> np.ndarray:
    return np.arange(2**n, dtype=np.int64)


def _count(patterns: np.ndarray, top: int) -> np.ndarray:
    """The protected documents (bits set) among positions ``0 .. top-1``."""
    return sum((patterns >> b) & 1 for b in range(top))  # type: ignore[return-value]


def _enumerated(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ranking of ``n`` documents (bit ``b`` set: position ``b`` protected): its
    protected count and its unnormalised rRD."""
    patterns = _bits(n)
    p = _count(patterns, n)
    raw = np.zeros(len(patterns))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_all = p / (n - p)
        for i in range(10, n + 1, 10):
            k = _count(patterns, i)
            ratio = np.where(k < i, k / np.maximum(i - k, 1), 0.0)
            raw += np.abs(ratio - ratio_all) / math.log2(i)
    return p, raw


@pytest.mark.parametrize("n", range(10, 23))
def test_every_ranking_enumerated(n: int) -> None:
    p, raw = _enumerated(n)
    counts = np.arange(1, n)
    brute = np.array([raw[p == c].max() for c in counts])
    got = rrd_normaliser(np.full(len(counts), n), counts)
    if n == 10:  # the one cut-off is N: every ranking is 0
        assert np.all(brute == 0)
    assert got == pytest.approx(brute, rel=1e-12, abs=1e-15)


def _nd_term(k: int, i: int, n: int, p: int) -> float:
    return abs(k / i - p / n) / math.log2(i)


def _kl_term(k: int, i: int, n: int, p: int) -> float:
    def xlog2(x: float, y: float) -> float:
        return x * math.log2(x / y) if x > 0 else 0.0

    return (xlog2(k / i, p / n) + xlog2(1 - k / i, 1 - p / n)) / math.log2(i)


def _searched(n: int, p: int, term: Callable[[int, int, int, int], float] = _term) -> float:
    """The maximum by a memoised search over the protected counts ``k`` at each cut-off
    (each step adds 0..10 protected documents, within ``max(0, i-(n-p)) <= k <= min(i,
    p)``), from the last cut-off back."""
    cuts = list(range(10, n + 1, 10))

    @functools.cache
    def best(j: int, k: int) -> float:
        if j == len(cuts):
            return 0.0
        i = cuts[j]
        low, high = max(0, i - (n - p)), min(i, p)
        options = [
            term(k2, i, n, p) + best(j + 1, k2) for k2 in range(max(k, low), min(k + 10, high) + 1)
        ]
        return max(options, default=-math.inf)

    return best(0, 0)


@pytest.mark.parametrize("n", [23, 29, 30, 31, 45, 60, 80])
def test_a_search_over_prefix_counts(n: int) -> None:
    counts = np.arange(1, n)
    want = [_searched(n, int(c)) for c in counts]
    got = rrd_normaliser(np.full(len(counts), n), counts)
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("term", [_nd_term, _kl_term], ids=["rnd", "rkl"])
@pytest.mark.parametrize("n", [20, 23, 30, 45, 80])
def test_rnd_and_rkl_keep_the_segregated_normaliser(
    n: int, term: Callable[[int, int, int, int], float]
) -> None:
    # rnd's and rkl's Z, the worse of the two most segregated rankings (all protected at
    # the bottom, k_i = max(0, i - (N - P)), or at the top, k_i = min(i, P)), is already
    # their maximum over rankings: they do not have rrd's flaw
    cuts = range(10, n + 1, 10)
    for p in range(1, n):
        bottom = sum(term(max(0, i - (n - p)), i, n, p) for i in cuts)
        top = sum(term(min(i, p), i, n, p) for i in cuts)
        assert max(bottom, top) == pytest.approx(_searched(n, p, term), rel=1e-12)


def test_undefined_pairs_are_nan() -> None:
    got = rrd_normaliser(np.array([20, 20, 9, 0]), np.array([0, 20, 3, 0]))
    assert all(math.isnan(v) for v in got)


def test_the_old_normaliser_was_below_the_maximum() -> None:
    # N = 30, P = 12: the worse of the two most segregated rankings (all protected at the
    # bottom, k = 0, 2, 12, or at the top, k = 10, 12, 12) against one unprotected
    # document on top of nine protected (k = 9, 12, 12)
    n, p = 30, 12
    bottom = sum(_term(k, i, n, p) for i, k in [(10, 0), (20, 2), (30, 12)])
    top = sum(_term(k, i, n, p) for i, k in [(10, 10), (20, 12), (30, 12)])
    best = sum(_term(k, i, n, p) for i, k in [(10, 9), (20, 12), (30, 12)])
    assert best > max(bottom, top)
    assert rrd_normaliser(np.array([n]), np.array([p]))[0] == pytest.approx(best, rel=1e-15)


@pytest.mark.parametrize("n", [11, 12])
def test_every_ranking_through_the_door(n: int, frame_kind: str) -> None:
    flags = list(product([False, True], repeat=n))
    run = pl.DataFrame(
        {
            "query_id": [q for q in range(len(flags)) for _ in range(n)],
            "doc_id": [d for _ in flags for d in range(n)],
            "rank": [r for _ in flags for r in range(1, n + 1)],
        }
    )
    # document d of query q is protected when flags[q][d]: one groups table for all
    # queries needs query-specific documents, so the doc id carries the query
    run = run.with_columns(doc_id=pl.col("query_id") * n + pl.col("doc_id"))
    groups = pl.DataFrame(
        {
            "doc_id": list(range(len(flags) * n)),
            "group": ["w" if f else "m" for row in flags for f in row],
        }
    )
    out = _evaluate(frame_kind, run, ["rrd(protected='w')"], groups=groups, per_query=True)
    got = dict(out.iter_rows())
    # the one cut-off is 10; a ranking with no or only protected documents has no value
    raws = {
        q: _term(sum(row[:10]), 10, n, sum(row)) for q, row in enumerate(flags) if 0 < sum(row) < n
    }
    tops: dict[int, float] = {}
    for q, raw in raws.items():
        tops[sum(flags[q])] = max(tops.get(sum(flags[q]), 0.0), raw)
    for q, row in enumerate(flags):
        if q not in raws:
            assert math.isnan(got[q])
            continue
        assert got[q] == pytest.approx(raws[q] / tops[sum(row)], rel=1e-12, abs=1e-15)
    values = [v for v in got.values() if not math.isnan(v)]
    assert max(values) == pytest.approx(1.0, rel=1e-12)
    assert min(values) >= 0


@property_settings(40)
@given(
    st.lists(st.booleans(), min_size=11, max_size=60).filter(
        lambda flags: 0 < sum(flags) < len(flags)
    )
)
def test_random_rankings_never_exceed_one(flags: list[bool]) -> None:
    n = len(flags)
    run = pl.DataFrame({"query_id": ["q"] * n, "doc_id": range(n), "rank": range(1, n + 1)})
    groups = pl.DataFrame({"doc_id": range(n), "group": ["w" if f else "m" for f in flags]})
    out = _evaluate("DataFrame", run, ["rrd(protected='w')"], groups=groups)
    p = sum(flags)
    raw = sum(_term(sum(flags[:i]), i, n, p) for i in range(10, n + 1, 10))
    want = raw / _searched(n, p)
    (value,) = out["rrd(protected='w')"].to_list()
    assert value == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert 0 <= value <= 1 + 1e-12
