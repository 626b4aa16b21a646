"""Round 4 of the agreement fixes: RBO of an empty ranking, RBO at small ``p``,
``system_agreement``'s undefined and refused cases, ``reproducibility``'s arguments.

RBO values are checked against an exact reference: Corsi & Urbano's definitions
(``julian-urbano/sigir2024-rbo``, ``rbo/Python/rbo.py``: the agreement at every depth of
the two rankings, then the tail beyond the longer one) transcribed depth by depth in
``fractions.Fraction``; the infinite tail ``sum_{d > l} p^d / d`` in fixed point of
``2^-bits`` (far below any value read here), square roots (``ties='b'``) to 400 bits.
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from collections.abc import Callable
from fractions import Fraction
from math import isqrt
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, InvalidValueError, MetricParameterError

KINDS = ("ext", "min", "max", "res")

# ------------------------------------------------------------------ exact reference


def _flat(groups: list[list[str]]) -> tuple[list[str], list[int], list[int]]:
    """Each item with its tie group's first and last 0-based positions."""
    ids: list[str] = []
    tops: list[int] = []
    bottoms: list[int] = []
    last = -1
    for group in groups:
        for item in group:
            ids.append(item)
            tops.append(last + 1)
            bottoms.append(last + len(group))
        last += len(group)
    return ids, tops, bottoms


def _sqrt(x: Fraction, bits: int = 400) -> Fraction:
    return Fraction(isqrt(x.numerator * x.denominator * 4**bits), x.denominator * 2**bits)


def _tail(p: Fraction, start: int, coef: Callable[[int], Fraction]) -> Fraction:
    """``sum_{D > start} coef(D) p^D`` for ``0 <= coef <= 2``, in fixed point: ``p^D`` as
    a whole number of ``2^-bits`` (truncated), summed until it is 0; ``bits`` is 200
    more than ``p^(start + 2)`` needs, so the error is below ``2^-200`` of the sum."""
    num, den = p.numerator, p.denominator
    bits = 200 + (den.bit_length() - num.bit_length() + 1) * (start + 2)
    power = (num ** (start + 1) << bits) // den ** (start + 1)
    total, depth = 0, start + 1
    while power:
        c = coef(depth)
        total += (c.numerator * power) // c.denominator
        power = (power * num) // den
        depth += 1
    return Fraction(total, 1 << bits)


def rbo_exact(x: list[list[str]], y: list[list[str]], p: float, ties: str) -> dict[str, Fraction]:
    """RBO ext/min/max/res of two rankings given as tie groups (Corsi & Urbano's code,
    depth by depth, exact)."""
    q = Fraction(p)
    a, b = _flat(x), _flat(y)
    short, long_ = (b, a) if len(a[0]) >= len(b[0]) else (a, b)
    n_s, n_l = len(short[0]), len(long_[0])
    if all(t == u for t, u in zip(short[1], short[2], strict=True)) and all(
        t == u for t, u in zip(long_[1], long_[2], strict=True)
    ):
        ties = "w"  # no tie: every treatment is w
    omega = list(short[0]) + [i for i in long_[0] if i not in short[0]]

    def contributions(side: tuple[list[str], list[int], list[int]]) -> dict[str, list[Fraction]]:
        c = {o: [Fraction(0)] * n_l for o in omega}
        for item, top, bottom in zip(*side, strict=True):
            for d in range(n_l):
                if ties == "w" or d >= bottom:
                    c[item][d] = Fraction(int(d >= top))
                elif d >= top:
                    c[item][d] = Fraction(d - top + 1, bottom - top + 1)
        return c

    c_s, c_l = contributions(short), contributions(long_)

    def total(c: dict[str, list[Fraction]], d: int, square: bool = False) -> Fraction:
        return sum((c[o][d] ** (2 if square else 1) for o in omega), Fraction(0))

    overlap = [sum((c_s[o][d] * c_l[o][d] for o in omega), Fraction(0)) for d in range(n_l)]
    first = []
    for d in range(n_s):
        if ties == "w":
            first.append(2 * overlap[d] / (total(c_s, d) + total(c_l, d)))
        elif ties == "a":
            first.append(overlap[d] / (d + 1))
        else:
            norms = _sqrt(total(c_s, d, True)) * _sqrt(total(c_l, d, True))
            first.append(overlap[d] / norms)

    def agreement(x_d: Fraction, d: int) -> Fraction:
        if ties == "w":
            return 2 * x_d / (d + 1 + total(c_l, d))
        if ties == "a":
            return x_d / (d + 1)
        return x_d / _sqrt(Fraction(d + 1)) / _sqrt(total(c_l, d, True))

    l_only = [i for i in long_[0] if i not in short[0]]
    low, high, extrapolated = list(first), list(first), list(first)
    for d in range(n_s, n_l):
        low.append(agreement(overlap[d], d))
        unseen_max = sum((c_l[l_only[j]][d] for j in range(d - n_s + 1)), Fraction(0))
        high.append(agreement(overlap[d] + unseen_max, d))
        seen = [c_l[o][d] for o in l_only if c_l[o][d] != 0]
        mean = sum(seen, Fraction(0)) / len(seen)
        extrapolated.append(agreement(overlap[d] + (d - n_s + 1) * first[n_s - 1] * mean, d))
    x_l = overlap[n_l - 1]
    assert x_l.denominator == 1
    f = n_l + n_s - int(x_l)
    weights = [q ** (d + 1) for d in range(n_l)]
    tail_min = x_l * _tail(q, n_l, lambda depth: Fraction(1, depth))
    tail_max = sum(
        ((2 * depth - n_l - n_s + x_l) / depth * q**depth for depth in range(n_l + 1, f + 1)),
        Fraction(0),
    ) + q ** (f + 1) / (1 - q)
    tail_ext = (x_l + (n_l - n_s) * first[n_s - 1]) / n_l * q ** (n_l + 1) / (1 - q)
    scale = (1 - q) / q

    def rbo(agreements: list[Fraction], tail: Fraction) -> Fraction:
        return scale * (sum((v * w for v, w in zip(agreements, weights, strict=True))) + tail)

    lowest, highest = rbo(low, tail_min), rbo(high, tail_max)
    return {
        "ext": rbo(extrapolated, tail_ext),
        "min": lowest,
        "max": highest,
        "res": highest - lowest,
    }


def _groups(text: str) -> list[list[str]]:
    """``"a (b c) d"`` -> ``[["a"], ["b", "c"], ["d"]]``."""
    out: list[list[str]] = []
    current: list[str] | None = None
    for token in text.split():
        if token.startswith("("):
            current = [token[1:]]
        elif token.endswith(")"):
            assert current is not None
            out.append([*current, token[:-1]])
            current = None
        elif current is not None:
            current.append(token)
        else:
            out.append([token])
    return out


def _ranking(text: str, query: str = "q") -> pl.DataFrame:
    """A ranking as run rows, one score per tie group, descending."""
    rows = [(query, d, float(-i)) for i, g in enumerate(_groups(text)) for d in g]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")


def test_the_reference_is_corsi_and_urbanos() -> None:
    # the first rows of their file of expected values (the plan matches all of them to
    # 1e-9 in tests/test_agreement.py): the reference reads the definitions alike
    from pathlib import Path

    expected = pl.read_csv(Path(__file__).parent / "data/agreement/sigir2024_rbo_test.csv.gz")
    for row in expected.head(12).iter_rows(named=True):
        for ties in "wab":
            want = rbo_exact(_groups(row["x"]), _groups(row["y"]), row["p"], ties)
            for kind in KINDS:
                assert float(want[kind]) == pytest.approx(row[f"{ties}.{kind}"], abs=1e-12)


# ------------------------------------------------ 1. the residual of an empty ranking

S = pl.List(pl.String)


def _lists(rows: dict[str, list[str]]) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": list(rows), "doc_id": list(rows.values())},
        schema={"query_id": pl.String, "doc_id": S},
    )


# q1: the run retrieved nothing against the reference's [a, b]. Nothing is seen of
# the run (s = 0), so the agreement at every depth is 0 as far as the run goes and
# every depth is unknown: min = 0 (no overlap assumed), max = (1 - p) sum_{d >= 1}
# p^(d-1) * 1 = 1 (the run could hold the reference's documents in its order), so
# res = max - min = 1: the whole weight is uncertainty (lower is better: the worst).
# ext extrapolates the agreement seen at depth s = 0, of which there is none: 0.
# q2: the run's [c] against [a, b]: s = 1, l = 2, no shared document, f = l + s - 0 = 3;
# min = ext = 0 and max = (1 - p)(p/2 + p^2) + p^3 (Webber's bound: c could be b at
# depth 2 (1/2 agreement), a at depth 3 (2/3 + the third (2*3 - 2 - 1 + 0)/3 = 1)...):
# at p = 0.9, 0.1 * (0.45 + 0.81) + 0.729 = 0.855.
EMPTY_CASES = [
    ("rbo(kind='res')", {"q1": 1.0, "q2": 0.855}),
    ("rbo(kind='max')", {"q1": 1.0, "q2": 0.855}),
    ("rbo(kind='min')", {"q1": 0.0, "q2": 0.0}),
    ("rbo", {"q1": 0.0, "q2": 0.0}),
    ("rbo(kind='res', ties='w')@5", {"q1": 1.0, "q2": 0.855}),
]


@functools.cache
def _empty_ranking_values(how: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every metric of EMPTY_CASES in one call per query and one for the means (two
    calls for the five cases of ``how`` instead of ten): each case reads its column."""
    ref = _lists({"q1": ["a", "b"], "q2": ["a", "b"]})
    run = _lists({"q1": [], "q2": ["c"]})
    options: dict[str, Any] = {}
    if how == "query missing":
        run = _lists({"q2": ["c"]})
    if how == "reference lacks it":  # RBO is symmetric: the run's [a, b], no reference
        run, ref = _lists({"q1": ["a", "b"], "q2": ["a", "b"]}), _lists({"q2": ["c"]})
        options = {"unjudged": "zero"}
    metrics = [metric for metric, _ in EMPTY_CASES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        got = irm.evaluate(run, metrics, reference=ref, per_query=True, **options)
        mean = irm.evaluate(run, metrics, reference=ref, **options)
    return got, mean


@pytest.mark.parametrize(("metric", "want"), EMPTY_CASES)
@pytest.mark.parametrize("how", ["empty list", "query missing", "reference lacks it"])
def test_an_empty_ranking_has_the_whole_weight_unknown(
    metric: str, want: dict[str, float], how: str
) -> None:
    got, mean = _empty_ranking_values(how)
    values = dict(got.sort("query_id").select("query_id", metric).iter_rows())
    assert values == pytest.approx(want, abs=1e-15)
    assert mean[metric].item() == pytest.approx((want["q1"] + want["q2"]) / 2, abs=1e-15)


def test_an_empty_ranking_has_the_largest_residual() -> None:
    ref = _lists({"q1": ["a", "b"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        empty = irm.evaluate(_lists({"q1": []}), ["rbo(kind='res')"], reference=ref)
        some = irm.evaluate(_lists({"q1": ["b"]}), ["rbo(kind='res')"], reference=ref)
    assert irm.parse_metric("rbo(kind='res')").higher_is_better is None  # (round 31)
    assert empty.item(0, 1) > some.item(0, 1)


# ----------------------------------------------------------------- 2. RBO at small p

SMALL_P_CASES = (
    [
        # the tester's rankings: a, b swapped at the top, c shared at depth 3, d at 5
        ("a b c d e", "b a c f d", p)
        for p in (1e-20, 1e-12, 1e-10, 1e-8, 1e-5, 1e-3, 0.01, 0.3, 0.9, 0.999)
    ]
    + [
        # the first shared document deep in both (depth 6): every value is of order p^5
        ("a b c d e f", "u v w x y f", p)
        for p in (1e-20, 1e-5, 0.01, 0.5)
    ]
    + [
        # uneven lengths, one shared document
        ("a b c d e f g h", "x b z", p)
        for p in (1e-15, 1e-4, 0.2, 0.95)
    ]
    + [
        # ties on one side (the per-depth plan), the tester's p
        ("a (b c) d e", "b a c f d", p)
        for p in (1e-20, 1e-10, 1e-5, 0.1, 0.9)
    ]
    + [
        # ties on both sides, uneven
        ("(a b) c (d e f)", "b (a x) c y", p)
        for p in (1e-16, 1e-6, 0.05, 0.7)
    ]
)


@pytest.mark.parametrize(("x", "y", "p"), SMALL_P_CASES)
def test_rbo_is_exact_at_any_persistence(x: str, y: str, p: float) -> None:
    # every tie treatment and kind in one call (one plan instead of one a treatment),
    # each value against the exact reference of its treatment
    names = {f"rbo(p={p!r}, kind='{k}', ties='{t}')": (t, k) for t in "awb" for k in KINDS}
    got = irm.evaluate(_ranking(x), list(names), reference=_ranking(y), per_query=True)
    want = {t: rbo_exact(_groups(x), _groups(y), p, t) for t in "awb"}
    for name, (ties, kind) in names.items():
        value, exact = got[name].item(), want[ties][kind]
        assert abs(Fraction(value) - exact) <= Fraction(1, 10**12) * exact, (name, value, exact)


def _random_rankings(seed: int, queries: int, tied: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    sides = []
    for _ in range(2):
        rows = []
        for q in range(queries):
            docs = rng.choice(30, int(rng.integers(1, 15)), replace=False)
            for i, d in enumerate(docs):
                rows.append((q, int(d), float(len(docs) - i) // (2 if tied else 1)))
        sides.append(pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row"))
    return sides[0], sides[1]


@pytest.mark.parametrize("p", [1e-300, 1e-20, 1e-8, 0.01, 0.05, 0.3, 0.9, 0.99, 0.995, 0.99999])
@pytest.mark.parametrize("tied", [False, True])
def test_rbo_stays_in_the_unit_interval_and_its_bounds_in_order(p: float, tied: bool) -> None:
    # no tolerance: 0 <= min <= ext <= max <= 1, 0 <= res <= 1 (before: at p = 0.01 the
    # lower bound was below 0 and ext above max; at 1e-20, 4.0)
    run, ref = _random_rankings(7, 150, tied)
    # the three tie treatments in one call (one plan instead of three): each column's
    # bounds are checked as before
    names = {t: [f"rbo(p={p!r}, kind='{k}', ties='{t}')" for k in KINDS] for t in "awb"}
    got = irm.evaluate(run, [n for t in "awb" for n in names[t]], reference=ref, per_query=True)
    for ties in "awb":
        ext, low, high, res = (got[n] for n in names[ties])
        assert ((low >= 0) & (low <= ext) & (ext <= high) & (high <= 1)).all(), ties
        assert ((res >= 0) & (res <= 1)).all(), ties
    assert got.height == 150


def test_small_p_through_the_reference_of_the_tester() -> None:
    run = pl.DataFrame(
        {"query_id": ["q"] * 5, "doc_id": list("abcde"), "score": [5.0, 4, 3, 2, 1]}
    )
    ref = pl.DataFrame(
        {"query_id": ["q"] * 5, "doc_id": list("bacfd"), "score": [5.0, 4, 3, 2, 1]}
    )
    names = ["rbo(p=1e-20)", "rbo(p=1e-12)", "rbo(p=1e-8)"]
    got = irm.evaluate(run, names, reference=ref).row(0)[1:]
    # agreement 0 at depth 1, 1 at depth 2: RBO = (1 - p) p (1 + O(p)) ~ p
    for value, p in zip(got, (1e-20, 1e-12, 1e-8), strict=True):
        assert value == pytest.approx(p, rel=1e-6)


@pytest.mark.parametrize("p", [1e-12, 0.3, 0.995, 0.99999])
def test_a_querys_value_does_not_depend_on_the_other_queries_at_any_p(p: float) -> None:
    # the table of tails has the same bits whatever the longest ranking of the call
    run, ref = _random_rankings(3, 40, True)
    long_run = pl.DataFrame(
        {"query_id": [99] * 400, "doc_id": np.arange(400), "score": -np.arange(400.0)}
    )
    names = [f"rbo(p={p!r}, kind='{k}', ties='{t}')" for k in KINDS for t in "aw"]
    whole = irm.evaluate(pl.concat([run, long_run]), names, reference=ref, per_query=True)
    alone = irm.evaluate(run, names, reference=ref, per_query=True)
    assert alone.equals(whole.filter(pl.col("query_id") != 99))


# ----------------------------------------------------------- 3, 4. system_agreement


def _long(means: list[float], column: str = "ndcg@10") -> pl.DataFrame:
    names = [f"s{i}" for i in range(len(means))]
    return pl.DataFrame(
        {
            "system": np.repeat(names, 2),
            "query_id": np.tile([0, 1], len(means)),
            column: np.repeat(np.asarray(means, float), 2) + np.tile([0.01, -0.01], len(means)),
        }
    )


@pytest.mark.parametrize("method", ["kendall", "tau_ap", "spearman", "pearson"])
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1, 1, 1, 1], [1, 2, 3, 4]),
        ([1, 1, 1, 1], [4, 3, 2, 1]),
        ([1, 2, 3, 4], [5, 5, 5, 5]),
        ([4, 3, 2, 1], [5, 5, 5, 5]),
    ],
)
def test_a_constant_side_has_no_correlation(method: str, a: list[float], b: list[float]) -> None:
    # all means equal on one side: no order to compare (tau_ap gave +-1 by the names);
    # but tau_ap (ties='a') averages b's ties over their orders: ircor's tauAP_a, 0
    out = irm.system_agreement(_long(a), _long(b), method)
    constant_b = len(set(b)) == 1
    assert out["correlation"].item() == (0.0 if method == "tau_ap" and constant_b else None)
    assert out["p_value"].item() is None


@pytest.mark.parametrize(
    ("method", "correlation", "p_value"),
    [
        ("kendall", -1.0, 1.0),
        ("spearman", -1.0, None),  # scipy's nan: no test with two systems
        ("pearson", -1.0, 1.0),
        ("tau_ap", -1.0, None),
    ],
)
def test_two_systems(method: str, correlation: float, p_value: float | None) -> None:
    out = irm.system_agreement(_long([1, 2]), _long([2, 1]), method)
    assert out["correlation"].item() == pytest.approx(correlation, abs=1e-12)
    assert out["p_value"].item() == p_value


@pytest.mark.parametrize(
    ("value", "side", "message"),
    [
        (
            math.inf,
            "a",
            "a has an infinite 'ndcg@10' (inf) for system 's1' on query 0; every system "
            "needs a finite value on every query: fix or recompute that value",
        ),
        (
            -math.inf,
            "b",
            "b has an infinite 'ndcg@10' (-inf) for system 's1' on query 0; every system "
            "needs a finite value on every query: fix or recompute that value",
        ),
        (
            math.nan,
            "a",
            "a has a null or NaN 'ndcg@10' for system 's1' on query 0; every system needs "
            "a value on every query",
        ),
    ],
)
def test_a_value_that_is_not_finite_is_refused(value: float, side: str, message: str) -> None:
    bad = _long([1, value, 3]) if math.isnan(value) else _long([1, 2, 3])
    if not math.isnan(value):
        bad = bad.with_columns(
            pl.when((pl.col("system") == "s1") & (pl.col("query_id") == 0))
            .then(value)
            .otherwise(pl.col("ndcg@10"))
            .alias("ndcg@10")
        )
    a, b = (bad, _long([1, 2, 3])) if side == "a" else (_long([1, 2, 3]), bad)
    for method in ("kendall", "tau_ap"):
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.system_agreement(a, b, method)


# -------------------------------------------------- 6. direction of a column name

LOWER = [4.0, 3.0, 2.0, 1.0]  # lower is better: the same order as HIGHER
HIGHER = [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("column", ["rnd", "logloss", "ee_disparity"])
def test_a_lower_is_better_column_is_read_by_its_direction(column: str) -> None:
    out = irm.system_agreement(_long(HIGHER, "ndcg@10"), _long(LOWER, column), "kendall")
    assert out["correlation"].item() == pytest.approx(1.0)
    assert out["swaps"].item() == 0


def _unknown(column: str, side: str, parameter: str, reason: str) -> str:
    return (
        f"column {column!r} of {side} names no metric ({reason}), so which way is better "
        f"is unknown: say it with {parameter}=True (higher values are better) or "
        f"{parameter}=False"
    )


def _undirected(column: str, side: str, parameter: str) -> str:
    return (
        f"metric {column!r} of {side} has no better direction (neither a higher nor a "
        "lower value is better), so the systems have no best-first order: say which way "
        f"to order them with {parameter}=True or {parameter}=False"
    )


@pytest.mark.parametrize(
    ("a_column", "b_column", "method", "options", "message"),
    [
        (  # tau_ap weighs the top: which end is the top is the direction
            "xyzzy",
            "xyzzy",
            "tau_ap",
            {},
            _unknown(
                "xyzzy",
                "a",
                "higher_is_better",
                "unknown metric 'xyzzy'. See irm.list_metrics() for every metric and its aliases.",
            ),
        ),
        (  # against a column of a direction: the relative orientation is the answer
            "ndcg@10",
            "rnd@10",
            "kendall",
            {},
            _unknown(
                "rnd@10",
                "b",
                "higher_is_better_b",
                "metric 'rnd@10': rnd takes no cutoff; use 'rnd' without '@10'",
            ),
        ),
        ("ndcg@10", "num_ret", "spearman", {}, _undirected("num_ret", "b", "higher_is_better_b")),
        (  # two columns of no direction and of two names: nothing says they agree
            "xyzzy",
            "plugh",
            "kendall",
            {},
            _unknown(
                "xyzzy",
                "a",
                "higher_is_better",
                "unknown metric 'xyzzy'. See irm.list_metrics() for every metric and its aliases.",
            ),
        ),
        (  # a's stated direction is not b's: another name
            "xyzzy",
            "plugh",
            "pearson",
            {"higher_is_better": True},
            _unknown(
                "plugh",
                "b",
                "higher_is_better_b",
                "unknown metric 'plugh'. See irm.list_metrics() for every metric and its aliases.",
            ),
        ),
    ],
)
def test_a_column_of_no_direction_needs_one_stated_where_it_matters(
    a_column: str, b_column: str, method: str, options: dict[str, Any], message: str
) -> None:
    a, b = _long(HIGHER, a_column), _long(LOWER, b_column)
    metric = {} if a_column == b_column else {"metric": a_column, "metric_b": b_column}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(a, b, method, **metric, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["kendall", "spearman", "pearson"])
def test_one_column_of_no_direction_on_both_sides_reads_alike_either_way(method: str) -> None:
    # the correlations, swaps and pairs of a quantity read alike on both sides do not
    # depend on its direction: given either way, or not at all, the same result
    rng = np.random.default_rng(2)
    a = _long(rng.random(5).tolist(), "xyzzy")
    b = _long(rng.random(5).tolist(), "xyzzy")
    results = [
        irm.system_agreement(a, b, method, **options)  # type: ignore[arg-type]
        for options in ({}, {"higher_is_better": True}, {"higher_is_better": False})
    ]
    assert results[0].equals(results[1])
    assert results[0].equals(results[2])
    pairs = irm.system_agreement(a, b, per_pair=True)  # no method is read per pair
    assert pairs.equals(irm.system_agreement(a, b, per_pair=True, higher_is_better=False))


@pytest.mark.parametrize(
    ("options", "correlation"),
    [
        ({"higher_is_better": True}, -1.0),  # b's column of that name: a's direction
        ({"higher_is_better": True, "higher_is_better_b": False}, 1.0),
        ({"higher_is_better": False, "higher_is_better_b": True}, 1.0),
    ],
)
def test_a_stated_direction_orders_a_column_of_no_metric(
    options: dict[str, bool], correlation: float
) -> None:
    out = irm.system_agreement(_long(HIGHER, "xyzzy"), _long(LOWER, "xyzzy"), "tau_ap", **options)
    assert out["correlation"].item() == pytest.approx(correlation)


def test_the_docstring_names_parseable_lower_is_better_metrics() -> None:
    # the examples of lower-is-better columns parse as such (rnd@10 did not parse: rnd
    # takes no cutoff, and a column of that name was read as higher-is-better)
    doc = " ".join((irm.system_agreement.__doc__ or "").split())
    examples = doc.split("the metric its column names (")[1].split(": lower)")[0]
    names = re.findall(r"``([^`]+)``", examples)
    assert "rnd" in names
    for name in names:
        assert irm.parse_metric(name).higher_is_better is False, name
    with pytest.raises(MetricParameterError):
        irm.parse_metric("rnd@10")


# ------------------------------------------------------------- 5. reproducibility


def _repro_inputs() -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    run = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["a", "b", "a", "b"],
            "score": [2.0, 1, 2, 1],
        }
    )
    return qrels, run


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda run, qrels: irm.reproducibility(
                [run, run], {"baseline": run}, ["P_1"], qrels=qrels
            ),
            InvalidValueError,
            "original= must map 'baseline' (and optionally 'advanced') to runs, got a list; "
            "e.g. original={'baseline': run_b, 'advanced': run_a}",
        ),
        (
            lambda run, qrels: irm.reproducibility({"baseline": run}, run, ["P_1"], qrels=qrels),
            InvalidValueError,
            "reproduced= must map 'baseline' (and optionally 'advanced') to runs, got a "
            "DataFrame; e.g. reproduced={'baseline': run_b, 'advanced': run_a}",
        ),
    ]
    + [
        (
            lambda run, qrels, p=p: irm.reproducibility(
                {"baseline": run}, {"baseline": run}, ["P_1"], qrels=qrels, p=p
            ),
            MetricParameterError,
            f"p={p!r} is not a persistence: it must be a number strictly between 0 and 1 "
            "(of the RBO of the document orders, repro_eval's RBO_P), e.g. p=0.95",
        )
        for p in (0, 1, 1.5, -0.1, True, "0.9")
    ]
    + [
        (
            lambda run, qrels, c=c: irm.reproducibility(
                {"baseline": run}, {"baseline": run}, ["P_1"], qrels=qrels, cutoff=c
            ),
            MetricParameterError,
            f"cutoff={c!r} is not a depth: it must be a whole number >= 1 (of the KTU and "
            "RBO of the document orders, repro_eval's RBO_DEPTH), e.g. cutoff=1000",
        )
        for c in (0, -1, 1.5, True)
    ],
)
def test_reproducibility_names_its_own_arguments(
    call: Callable[[pl.DataFrame, pl.DataFrame], Any], error: type[Exception], message: str
) -> None:
    qrels, run = _repro_inputs()
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call(run, qrels)


def test_reproducibility_takes_a_small_persistence() -> None:
    qrels, run = _repro_inputs()
    again = run.with_columns(pl.col("score").reverse().over("query_id"))
    out = irm.reproducibility(
        {"baseline": run}, {"baseline": again}, ["P_1"], qrels=qrels, p=1e-20
    )
    rbo = out.filter(pl.col("measure") == "rbo")["value"].item()
    assert rbo == pytest.approx(0.0, abs=1e-15)  # depth 1 disagrees; depth 2 weighs 1e-20


def _one_minus_exp(x: float) -> Fraction:
    """1 - e^x = -(x + x^2/2! + ...) for x < 0, in Fractions, to 1e-40 of the value."""
    value, term, n = Fraction(0), -Fraction(x), 1
    while term != 0 and abs(term) > abs(value) * Fraction(1, 10**40):
        value += term
        n += 1
        term = term * Fraction(x) / n
    return value


@pytest.mark.parametrize(
    "x", [-1e-300, -3e-17, -1.1e-16, -2e-16, -1e-9, -0.1, -0.4999, -0.5, -3.0]
)
def test_one_minus_power_is_within_two_ulps(x: float) -> None:
    # rbo's 1 - p^k for the geometric sums: Kahan's expm1 (the seventeenfold Taylor
    # series before: the same precision, a plan five times larger)
    from polars_irmetrics.agreement.rbo import _one_minus_power

    got = pl.DataFrame({"k": [1.0]}).select(_one_minus_power(math.exp(x), pl.col("k"))).item()
    p = math.exp(x)
    exact = _one_minus_exp(math.log(p))  # the same x as the function reads: ln p rounded
    assert abs(Fraction(got) - exact) <= 2 * Fraction(math.ulp(float(exact))), (x, got)
