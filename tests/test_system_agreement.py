"""``irm.system_agreement``: two evaluations' orderings of the same systems.

Against scipy (kendalltau, spearmanr, pearsonr of the means), trectools'
``get_correlation`` (``tests/data/agreement/peers.json``, made by ``make_peers.py``),
brute-force swap counts, and ``compare``'s significance over every pair.
"""

from __future__ import annotations

import itertools
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import polars_irmetrics as irm
from polars_irmetrics.comparison.api import compare_values
from polars_irmetrics.comparison.frame import PerQuery
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, QuerySetError

PEERS = json.loads((Path(__file__).parent / "data" / "agreement" / "peers.json").read_text())


def _long(values: np.ndarray[Any, Any], names: list[str]) -> pl.DataFrame:
    """``queries × systems`` values as ``system, query_id, value`` rows."""
    n, s = values.shape
    return pl.DataFrame(
        {
            "system": np.repeat(np.array(names, dtype=object), n).tolist(),
            "query_id": [f"q{i}" for i in range(n)] * s,
            "value": values.T.ravel(),
        }
    )


def _with_means(means: dict[str, float]) -> pl.DataFrame:
    """Two queries per system, +-0.1 around its mean."""
    names = sorted(means)
    centre = np.array([means[s] for s in names])
    return _long(np.vstack([centre + 0.1, centre - 0.1]), names)


@pytest.mark.parametrize("case", range(len(PEERS["systems"])))
@pytest.mark.parametrize("method", ["kendall", "spearman", "tau_ap"])
def test_correlation_is_trectools(case: int, method: str) -> None:
    row = PEERS["systems"][case]
    got = irm.system_agreement(
        _with_means(row["a"]), _with_means(row["b"]), method, higher_is_better=True
    )
    assert got["correlation"][0] == pytest.approx(row[method], abs=1e-12)


matrices = st.integers(2, 7).flatmap(
    lambda s: st.tuples(
        st.lists(
            st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=s, max_size=s),
            min_size=3,
            max_size=8,
        ),
        st.lists(
            st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=s, max_size=s),
            min_size=3,
            max_size=8,
        ),
    )
)


@settings(max_examples=40, deadline=None)
@given(matrices)
def test_against_scipy_brute_force_and_compare(
    pair: tuple[list[list[float]], list[list[float]]],
) -> None:
    a, b = np.array(pair[0]), np.array(pair[1])
    names = [f"s{i}" for i in range(a.shape[1])]
    long_a, long_b = _long(a, names), _long(b, names)
    mean_a, mean_b = a.mean(axis=0), b.mean(axis=0)
    for method, peer in (
        ("kendall", stats.kendalltau),
        ("spearman", stats.spearmanr),
        ("pearson", stats.pearsonr),
    ):
        got = irm.system_agreement(long_a, long_b, method).row(0, named=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = peer(mean_a, mean_b).statistic
        if np.isnan(want):  # a constant input: null
            assert got["correlation"] is None
        else:
            assert got["correlation"] == pytest.approx(want, abs=1e-12)
    out = irm.system_agreement(long_a, long_b).row(0, named=True)
    swaps = sum(
        (mean_a[i] - mean_a[j]) * (mean_b[i] - mean_b[j]) < 0
        for i, j in itertools.combinations(range(len(names)), 2)
    )
    assert out["swaps"] == swaps
    assert out["pairs"] == len(names) * (len(names) - 1) // 2
    for side, values in (("significant_a", a), ("significant_b", b)):
        result = compare_values(
            PerQuery(
                ["value"],
                names,
                pl.Series([f"q{i}" for i in range(len(values))]),
                values[None],
                0,
                [True],
            ),
            CompareOptions().checked(),
        )
        assert out[side] == result["significant"].sum()
    assert out["significant_swaps"] <= min(
        out["swaps"], out["significant_a"] + out["significant_b"]
    )


def test_significant_swap_per_pair() -> None:
    # x beats y by far on 12 queries in a (significant); b reverses them slightly
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.6, 12)
    a = np.column_stack([base + 0.3, base])
    b = np.column_stack([base, base + 0.01 + rng.uniform(0, 0.001, 12)])
    pairs = irm.system_agreement(_long(a, ["x", "y"]), _long(b, ["x", "y"]), per_pair=True)
    row = pairs.row(0, named=True)
    assert (row["system"], row["other"]) == ("x", "y")
    assert row["delta_a"] == pytest.approx(0.3, abs=1e-12)
    assert row["delta_b"] == pytest.approx(float(b[:, 0].mean() - b[:, 1].mean()), abs=1e-12)
    assert row["delta_b"] < 0
    assert row["p_adjusted_a"] < 0.05  # one pair: no correction
    assert row["swapped"]
    assert row["significant_swap"]


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (lambda f: f.drop("query_id"), ColumnNotFoundError, "column 'query_id' not found in b"),
        (
            lambda f: f.with_columns(pl.lit(1.0).alias("other")),
            InvalidValueError,
            "b has 2 value columns ('value', 'other'); name the one to compare with metric=",
        ),
        (
            lambda f: f.filter(pl.col("system") != "s1"),
            QuerySetError,
            "system 's1' is in one result and not the other",
        ),
        (
            lambda f: f.with_columns(
                pl.when(pl.col("query_id") == "q0")
                .then(None)
                .otherwise(pl.col("value"))
                .alias("value")
            ),
            InvalidValueError,
            "b has a null or NaN 'value' for system 's0' on query 'q0'",
        ),
        (
            lambda f: pl.concat([f, f.head(1)]),
            InvalidValueError,
            "b lists system 's0' twice on query 'q0'",
        ),
        (
            lambda f: f.filter(~((pl.col("system") == "s1") & (pl.col("query_id") == "q1"))),
            InvalidValueError,
            "system 's1' has no value in b on some of its queries",
        ),
    ],
)
def test_bad_inputs(change: Any, error: type[Exception], message: str) -> None:
    a = _long(np.array([[0.1, 0.2, 0.3], [0.2, 0.3, 0.1]]), ["s0", "s1", "s2"])
    with pytest.raises(error, match=re.escape(message)):
        irm.system_agreement(a, change(a))
    with pytest.raises(error, match=re.escape(message)):
        irm.system_agreement(a.lazy(), change(a).lazy())


def test_bad_method() -> None:
    a = _long(np.array([[0.1, 0.2], [0.2, 0.3]]), ["s0", "s1"])
    with pytest.raises(InvalidValueError, match=re.escape("method='tau' is not a correlation")):
        irm.system_agreement(a, a, "tau")  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["tau_ap", "spearman", "pearson"])
def test_a_method_is_not_read_per_pair(method: str) -> None:
    """The rows of the pairs hold no correlation: a method other than the default is
    refused there (it gave the default's rows bit for bit)."""
    a = _long(np.array([[0.1, 0.2], [0.2, 0.3]]), ["s0", "s1"])
    message = (
        f"method={method!r} is not read with per_pair=True: the rows of the pairs hold each "
        "result's mean differences, p-values and swaps, no correlation; drop method=, or "
        "pass per_pair=False for the correlation"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.system_agreement(a, a, method, per_pair=True)  # type: ignore[arg-type]


def _named(means: dict[str, float], column: str) -> pl.DataFrame:
    return _with_means(means).rename({"value": column})


#: Five systems, s1 best: auc falls and logloss rises from s1 to s5 (they agree).
AUC = {f"s{i}": 0.9 - 0.1 * i for i in range(1, 6)}
LOGLOSS = {f"s{i}": 0.2 + 0.1 * i for i in range(1, 6)}


@pytest.mark.parametrize("method", ["kendall", "spearman", "tau_ap"])
def test_a_lower_is_better_metric_is_ordered_best_first(method: str) -> None:
    # auc (higher is better) and logloss (lower) that order the systems alike agree
    # perfectly: no swap, correlation +1, as the negated logloss gives
    out = irm.system_agreement(_named(AUC, "auc"), _named(LOGLOSS, "logloss"), method)
    assert out["correlation"][0] == pytest.approx(1.0, abs=1e-12)
    assert out["swaps"][0] == 0
    negated = _named({s: -v for s, v in LOGLOSS.items()}, "value")
    same = irm.system_agreement(_named(AUC, "auc"), negated, method, higher_is_better_b=True)
    assert same["correlation"][0] == out["correlation"][0]
    # the direction given overrides the name's: logloss read as higher-is-better
    flipped = irm.system_agreement(
        _named(AUC, "auc"), _named(LOGLOSS, "logloss"), method, higher_is_better_b=True
    )
    assert flipped["correlation"][0] == pytest.approx(-1.0, abs=1e-12)
    assert flipped["swaps"][0] == 10


def test_tau_ap_weighs_the_best_systems_of_a_lower_is_better_metric() -> None:
    # rmse under two label sets: s1 < s2 < ... < s5 in a; b swaps the best two (its
    # top, where tau_ap weighs most) or the worst two
    a = {f"s{i}": 0.1 * i for i in range(1, 6)}
    top = {**a, "s1": a["s2"], "s2": a["s1"]}
    bottom = {**a, "s4": a["s5"], "s5": a["s4"]}
    at_top = irm.system_agreement(_named(a, "rmse"), _named(top, "rmse"), "tau_ap")
    at_bottom = irm.system_agreement(_named(a, "rmse"), _named(bottom, "rmse"), "tau_ap")
    # tau_AP = 2/(N-1) sum_{i>=2} C(i)/(i-1) - 1, N = 5: the best pair swapped makes
    # C(2) = 0 (0, 2/2, 3/3, 4/4); the worst pair, C(5) = 3 (1, 1, 1, 3/4)
    assert at_top["correlation"][0] == pytest.approx(2 / 4 * (0 + 1 + 1 + 1) - 1, abs=1e-12)
    assert at_bottom["correlation"][0] == pytest.approx(2 / 4 * (1 + 1 + 1 + 3 / 4) - 1, abs=1e-12)
    # the deltas per pair are the values' own (rmse's, not negated)
    pairs = irm.system_agreement(_named(a, "rmse"), _named(top, "rmse"), per_pair=True)
    first = pairs.row(0, named=True)
    assert (first["system"], first["other"]) == ("s1", "s2")
    assert first["delta_a"] == pytest.approx(-0.1)
    assert first["delta_b"] == pytest.approx(0.1)
    assert first["swapped"]


def test_a_bad_direction_is_refused() -> None:
    with pytest.raises(InvalidValueError, match="higher_is_better must be True, False or None"):
        irm.system_agreement(_named(AUC, "auc"), _named(AUC, "auc"), higher_is_better="no")  # type: ignore[arg-type]


def test_the_same_bits_in_any_row_order_and_with_a_seed() -> None:
    # the queries in order before the means and tests (a pivot keeps them as they
    # first appear); a seed fixes the randomization test's draws
    rng = np.random.default_rng(5)
    names = [f"s{i}" for i in range(5)]
    a = _long(rng.random((30, 5)), names)
    b = _long(rng.random((30, 5)), names)
    shuffled = a.sample(fraction=1.0, shuffle=True, seed=1)
    for method in ("pearson", "kendall"):
        assert irm.system_agreement(a, b, method).equals(irm.system_agreement(shuffled, b, method))
    pairs = [
        irm.system_agreement(a, b, test="randomization", n_resamples=500, seed=3, per_pair=True)
        for _ in range(2)
    ]
    assert pairs[0].equals(pairs[1])
    assert irm.system_agreement(a, b, per_pair=True).equals(
        irm.system_agreement(shuffled, b, per_pair=True)
    )


def test_the_resampling_tests_give_the_same_p_values_on_every_call_by_default() -> None:
    # seed=0 by default (a fresh draw each call was the default: the same data gave other
    # p-values, and other significant swaps, from call to call); None asks for that
    rng = np.random.default_rng(8)
    names = [f"s{i}" for i in range(4)]
    a, b = (_long(rng.random((25, 4)), names) for _ in range(2))
    for test in ("randomization", "bootstrap"):
        calls = [
            irm.system_agreement(a, b, test=test, n_resamples=200, per_pair=True) for _ in range(2)
        ]
        assert calls[0].equals(calls[1]), test
        seeded = irm.system_agreement(a, b, test=test, n_resamples=200, per_pair=True, seed=0)
        assert calls[0].equals(seeded), test
    docs = [f"d{i}" for i in range(4)]
    runs = {
        name: pl.DataFrame(
            [(f"q{q}", d, r + 1) for q in range(25) for r, d in enumerate(rng.permutation(docs))],
            schema=["query_id", "doc_id", "rank"],
            orient="row",
        )
        for name in ("x", "y")
    }
    qrels = pl.DataFrame(
        [(f"q{q}", d, int(rng.integers(0, 3))) for q in range(25) for d in docs],
        schema=["query_id", "doc_id", "relevance"],
        orient="row",
    )
    compared = [
        irm.compare(runs, ["ndcg@2"], qrels=qrels, test="randomization", n_resamples=200)
        for _ in range(2)
    ]
    assert compared[0].equals(compared[1])
