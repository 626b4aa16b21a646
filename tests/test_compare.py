"""irm.compare and irm.tukey_hsd against real peers on the same per-query values.

scipy (ttest_rel, wilcoxon, tukey_hsd, bootstrap), statsmodels (multipletests) and
ranx (compare, Fisher's randomization test); the bundled sample (3 systems, 30 queries)
and small synthetic data. Bad inputs assert their exact messages.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

import numpy as np
import polars as pl
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import polars_irmetrics as irm
from polars_irmetrics.comparison.api import RESULT_COLUMNS, compare_values
from polars_irmetrics.comparison.frame import PerQuery
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.paired import randomization_p
from polars_irmetrics.io.files import sample_paths

from .helpers import multipletests, property_settings

METRICS = ["ndcg@10", "map", "P@10"]


@pytest.fixture(scope="module")
def sample() -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    paths, qrels = sample_paths()
    runs = {p.stem.removeprefix("run_"): pl.read_parquet(p) for p in paths}
    return runs, pl.read_parquet(qrels)


@pytest.fixture(scope="module")
def per_query(sample: tuple[dict[str, pl.DataFrame], pl.DataFrame]) -> dict[str, pl.DataFrame]:
    runs, qrels = sample
    return {
        name: irm.evaluate(run, METRICS, qrels=qrels, per_query=True).sort("query_id")
        for name, run in runs.items()
    }


def _inputs(
    kind: str, runs: dict[str, pl.DataFrame], qrels: pl.DataFrame
) -> tuple[Any, dict[str, Any]]:
    """The same runs as a dict, a long DataFrame or a long LazyFrame."""
    if kind == "dict":
        return runs, {"qrels": qrels}
    long = pl.concat([r.with_columns(system=pl.lit(n)) for n, r in runs.items()])
    if kind == "LazyFrame":
        return long.lazy(), {"qrels": qrels.lazy(), "system": "system"}
    return long, {"qrels": qrels, "system": "system"}


@pytest.mark.parametrize("kind", ["dict", "DataFrame", "LazyFrame"])
@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_equal_scipy(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame],
    per_query: dict[str, pl.DataFrame],
    kind: str,
    test: str,
) -> None:
    runs, qrels = sample
    data, kwargs = _inputs(kind, runs, qrels)
    out = irm.compare(data, METRICS, baseline="bm25", test=test, **kwargs)  # type: ignore[arg-type]
    assert out.columns == list(RESULT_COLUMNS)
    assert out.height == 2 * len(METRICS)
    for row in out.iter_rows(named=True):
        a = per_query[row["system"]][row["metric"]].to_numpy()
        b = per_query[row["baseline"]][row["metric"]].to_numpy()
        assert row["n"] == 30
        if test == "t":
            ref = scipy.stats.ttest_rel(a, b)
            low, high = ref.confidence_interval(0.95)
            assert row["ci_low"] == pytest.approx(low, abs=1e-12)
            assert row["ci_high"] == pytest.approx(high, abs=1e-12)
        else:
            ref = scipy.stats.wilcoxon(a, b)
        assert row["p_value"] == pytest.approx(ref.pvalue, abs=1e-12, rel=1e-12)
        d = a - b
        assert row["mean"] == pytest.approx(a.mean(), abs=1e-15)
        assert row["delta"] == pytest.approx(d.mean(), abs=1e-15)
        assert row["relative"] == pytest.approx(d.mean() / b.mean(), rel=1e-12)
        assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert (row["wins"], row["ties"], row["losses"]) == (
            (d > 0).sum(),
            (d == 0).sum(),
            (d < 0).sum(),
        )
    # every correction of the whole family equals statsmodels
    for correction in ["bonferroni", "holm", "holm-sidak", "fdr_bh", "fdr_by"]:
        again = irm.compare(
            data, METRICS, baseline="bm25", test=test, correction=correction, **kwargs
        )
        reject, adjusted, _, _ = multipletests(again["p_value"].to_numpy(), 0.05, correction)
        assert again["p_adjusted"].to_list() == adjusted.tolist()
        assert again["significant"].to_list() == reject.tolist()


@pytest.mark.parametrize("correction", ["holm", "fdr_by"])
def test_correction_per_metric_equals_statsmodels_per_family(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame], correction: str | None
) -> None:
    runs, qrels = sample
    out = irm.compare(runs, METRICS, qrels=qrels, correction=correction, correction_scope="metric")
    assert out.height == 3 * len(METRICS)  # pairs: bm25-dense, bm25-hybrid, dense-hybrid
    assert out.select("baseline", "system").unique(maintain_order=True).rows() == [
        ("bm25", "dense"), ("bm25", "hybrid"), ("dense", "hybrid")
    ]  # fmt: skip
    for metric in METRICS:
        family = out.filter(pl.col("metric") == metric)
        p = family["p_value"].to_numpy()
        expected = multipletests(p, 0.05, correction)[1]
        assert family["p_adjusted"].to_list() == expected.tolist()


def _nested(frame: pl.DataFrame, value: str) -> dict[str, dict[str, Any]]:
    """{query: {doc: value}}, the dicts ranx reads."""
    out: dict[str, dict[str, Any]] = {}
    for q, d, v in frame.select("query_id", "doc_id", value).iter_rows():
        out.setdefault(q, {})[d] = v
    return out


def test_randomization_within_monte_carlo_error_of_ranx(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame],
) -> None:
    # Tolerance: each estimate of p has standard error sqrt(p(1 - p) / R) <= 0.5 / sqrt(R);
    # the difference of two independent estimates (R1 and R2 resamples) has standard error
    # sqrt(p(1 - p) (1 / R1 + 1 / R2)). We allow 5 standard errors plus 1/R (ranx reports
    # c / R, we report (1 + c) / (1 + R)).
    ranx = pytest.importorskip("ranx")
    from ranx.statistical_tests import fisher_randomization_test

    runs, qrels = sample
    bm25 = runs["bm25"]
    for seed in (5, 6):  # bm25 with noisy scores: p-values far from 0 and 1
        noise = np.random.default_rng(seed).normal(0, 0.5, bm25.height)
        runs = {**runs, f"noisy{seed}": bm25.with_columns(score=pl.col("score") + noise)}
    # untie the scores in trec_eval's order (ranx breaks ties otherwise)
    runs = {
        name: run.sort(
            ["query_id", "score", "doc_id"], descending=[False, True, True]
        ).with_columns(score=-pl.int_range(pl.len()).over("query_id").cast(pl.Float64))
        for name, run in runs.items()
    }
    # ranx's loop runs interpreted here (numba off) and is this test's cost: ranx draws
    # 4,000 permutations, ours (vectorised, cheap) 32,000; 5 standard errors of the
    # difference stay under 0.03, as with 8,000 on each side
    n_resamples, n_ranx = 32_000, 4_000
    out = irm.compare(
        runs, ["ndcg@10"], qrels=qrels, test="randomization", n_resamples=n_resamples, seed=7
    )
    ranx_qrels = ranx.Qrels.from_dict(_nested(qrels, "relevance"))
    ranx_runs = [ranx.Run.from_dict(_nested(run, "score"), name=n) for n, run in runs.items()]
    for run in ranx_runs:  # ranx scored the same per-query values
        ranx.evaluate(ranx_qrels, run, ["ndcg@10"], make_comparable=True)
        ours = irm.evaluate(runs[run.name], "ndcg@10", qrels=qrels, per_query=True)
        expected = dict(zip(*ours.select("query_id", "ndcg@10"), strict=True))
        assert run.scores["ndcg@10"] == pytest.approx(expected, abs=1e-12)
    scores = {run.name: run.scores["ndcg@10"] for run in ranx_runs}
    queries = sorted(scores["bm25"])
    assert out.filter(pl.col("p_value").is_between(0.1, 0.9)).height >= 3
    for row in out.iter_rows(named=True):
        # ranx.compare's own test (the function it calls for stat_test="fisher"), on the
        # pairs compared here only: ranx.compare runs every ordered pair, four times as
        # many, in ranx's interpreted form (tests/conftest.py turns numba's JIT off)
        theirs, _ = fisher_randomization_test(
            np.array([scores[row["baseline"]][q] for q in queries]),
            np.array([scores[row["system"]][q] for q in queries]),
            n_permutations=n_ranx,
            random_seed=3,
        )
        p = max(theirs, 1 / n_ranx)
        tolerance = 5 * math.sqrt(p * (1 - p) * (1 / n_resamples + 1 / n_ranx)) + 1 / n_ranx
        assert abs(row["p_value"] - theirs) <= tolerance, (row, theirs, tolerance)
    again = irm.compare(
        runs, ["ndcg@10"], qrels=qrels, test="randomization", n_resamples=n_resamples, seed=7
    )
    assert again.equals(out)  # deterministic for a seed


DELTAS = [-0.5, -0.1, 0.0, 0.2, 1.0]


@given(
    d=hnp.arrays(np.float64, st.integers(2, 9), elements=st.sampled_from(DELTAS)),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
@property_settings(60)
def test_exact_randomization_equals_enumeration(d: np.ndarray, alternative: Any) -> None:
    # Small n: every sign vector is enumerated (2**n <= n_resamples); ties count.
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=len(d))))
    means = np.round(signs @ d, 9)
    observed = round(float(d.sum()), 9)
    if alternative == "greater":
        expected = np.mean(means >= observed)
    elif alternative == "less":
        expected = np.mean(means <= observed)
    else:
        expected = np.mean(np.abs(means) >= abs(observed))
    got = randomization_p(d[:, None], alternative, 1024, np.random.default_rng(0))
    assert got.tolist() == [expected]


def _values(a: np.ndarray, b: np.ndarray) -> PerQuery:
    queries = pl.Series("query_id", [f"q{i}" for i in range(len(a))])
    return PerQuery(["m"], ["base", "sys"], queries, np.stack([b, a], axis=1)[None], 0, [True])


def test_bootstrap_within_monte_carlo_error_of_exact_bootstrap() -> None:
    # n = 5 queries: all 5**5 resamples enumerate the exact bootstrap distribution of the
    # mean; the shifted p-value and the percentile interval must match it within Monte
    # Carlo error (p: 5 standard errors of R = 20_000 draws; interval: within one step
    # of the exact distribution's quantiles).
    d = np.array([0.3, 0.1, -0.2, 0.4, 0.25])
    n_resamples = 20_000
    out = compare_values(
        _values(d, np.zeros(5)),
        CompareOptions(baseline="base", test="bootstrap", n_resamples=n_resamples, seed=1),
    ).row(0, named=True)
    draws = np.array(list(itertools.product(range(5), repeat=5)))
    means = d[draws].mean(axis=1)
    exact_p = np.mean(np.abs(means - d.mean()) >= abs(d.mean()) - 1e-12)
    tolerance = 5 * math.sqrt(exact_p * (1 - exact_p) / n_resamples) + 1 / n_resamples
    assert abs(out["p_value"] - exact_p) <= tolerance
    again = compare_values(
        _values(d, np.zeros(5)),
        CompareOptions(baseline="base", test="bootstrap", n_resamples=n_resamples, seed=1),
    ).row(0, named=True)
    assert again == out  # deterministic for a seed
    low, high = np.quantile(means, [0.025, 0.975])
    assert abs(out["ci_low"] - low) <= 0.011
    assert abs(out["ci_high"] - high) <= 0.011


def test_bootstrap_interval_agrees_with_scipy_bootstrap(
    per_query: dict[str, pl.DataFrame],
) -> None:
    # scipy.stats.bootstrap(method="percentile") of the mean delta; two estimates from
    # 20_000 resamples each agree within 0.1 standard deviations of the mean (measured
    # spread of the 2.5 % quantile at this R is ~0.02 sd).
    a, b = per_query["hybrid"]["ndcg@10"].to_numpy(), per_query["bm25"]["ndcg@10"].to_numpy()
    out = compare_values(
        _values(a, b),
        CompareOptions(baseline="base", ci="bootstrap", n_resamples=20_000, seed=2),
    ).row(0, named=True)
    ref = scipy.stats.bootstrap(
        (a - b,), np.mean, method="percentile", n_resamples=20_000, random_state=3
    )
    se = ref.standard_error
    assert abs(out["ci_low"] - ref.confidence_interval.low) <= 0.1 * se
    assert abs(out["ci_high"] - ref.confidence_interval.high) <= 0.1 * se


@given(
    x=hnp.arrays(
        np.float64,
        st.tuples(st.integers(3, 40).filter(lambda n: n > 13 or n < 6), st.just(3)),
        elements=st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 3)),
    ),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
@property_settings(25)
def test_random_values_t_and_wilcoxon_equal_scipy(x: np.ndarray, alternative: Any) -> None:
    queries = pl.Series("query_id", [str(i) for i in range(len(x))])
    values = PerQuery(["m"], ["a", "b", "c"], queries, x[None], 0, [True])
    for test, reference in [("t", scipy.stats.ttest_rel), ("wilcoxon", scipy.stats.wilcoxon)]:
        options = CompareOptions(test=test, alternative=alternative, correction=None)  # type: ignore[arg-type]
        out = compare_values(values, options)
        for row in out.iter_rows(named=True):
            a = x[:, "abc".index(row["system"])]
            b = x[:, "abc".index(row["baseline"])]
            if np.all(a == b):
                assert row["p_value"] == 1.0  # identical: scipy gives NaN
                continue
            with np.errstate(all="ignore"):
                expected = reference(a, b, alternative=alternative).pvalue
            assert row["p_value"] == pytest.approx(expected, abs=1e-12, rel=1e-12)


TUKEY_SYSTEMS = ["bm25", "dense", "hybrid"]


@pytest.fixture(scope="module")
def tukey_reference(per_query: dict[str, pl.DataFrame]) -> dict[str, Any]:
    """scipy's Tukey HSD (and its 95% intervals, the slow part) once per metric."""
    out: dict[str, Any] = {}
    for metric in METRICS:
        ref = scipy.stats.tukey_hsd(*(per_query[s][metric].to_numpy() for s in TUKEY_SYSTEMS))
        out[metric] = (ref, ref.confidence_interval(0.95))
    return out


@pytest.mark.parametrize("kind", ["dict", "DataFrame", "LazyFrame"])
def test_tukey_hsd_equals_scipy(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame],
    tukey_reference: dict[str, Any],
    kind: str,
) -> None:
    runs, qrels = sample
    data, kwargs = _inputs(kind, runs, qrels)
    out = irm.tukey_hsd(data, METRICS, **kwargs)
    systems = TUKEY_SYSTEMS
    for metric in METRICS:
        ref, ci = tukey_reference[metric]
        rows = out.filter(pl.col("metric") == metric)
        assert rows.height == 3
        for row in rows.iter_rows(named=True):
            j, i = systems.index(row["system"]), systems.index(row["baseline"])
            assert row["p_value"] == ref.pvalue[j, i]
            assert row["delta"] == ref.statistic[j, i]
            assert (row["ci_low"], row["ci_high"]) == (ci.low[j, i], ci.high[j, i])
            assert row["significant"] == (ref.pvalue[j, i] <= 0.05)


def _tiny() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    qrels = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "z"],
                          "relevance": [1, 1, 1]})  # fmt: skip
    a = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "n", "z"],
                      "rank": [1, 1, 1]})  # fmt: skip
    b = a.filter(pl.col("query_id") != "q3")
    return qrels, a, b


@pytest.mark.parametrize("frame_kind", ["DataFrame", "LazyFrame"])
def test_query_set_policies(frame_kind: str) -> None:
    qrels, a, b = _tiny()
    if frame_kind == "LazyFrame":
        runs: dict[str, Any] = {"a": a.lazy(), "b": b.lazy()}
    else:
        runs = {"a": a, "b": b}
    judged = irm.compare(runs, "P@1", qrels=qrels, per_query=True)
    # b never retrieved q3: an empty ranking, 0
    assert judged.select("query_id", "value", "baseline_value").rows() == [
        ("q1", 1.0, 1.0), ("q2", 0.0, 0.0), ("q3", 0.0, 1.0)
    ]  # fmt: skip
    common = irm.compare(runs, "P@1", qrels=qrels, query_set="common", per_query=True)
    assert common["query_id"].to_list() == ["q1", "q2"]
    assert irm.compare(runs, "P@1", qrels=qrels, query_set="common")["n"].item() == 2
    assert irm.compare(runs, "P@1", qrels=qrels)["n"].item() == 3


def test_worked_example_explicit_arithmetic() -> None:
    # a: P@1 = 1, 0, 1; b: 0, 0, 1 (misses q1). Deltas b - a: -1, 0, 0.
    # mean(b) = 1/3, mean(a) = 2/3, delta = -1/3, relative = -1/2; one loss, two ties.
    # Randomization, exact (2**3 <= 10_000): sign vectors give sums +-1: all 8 are at
    # least as extreme as |-1|, so p = 1.
    qrels, a, _ = _tiny()
    b = a.with_columns(doc_id=pl.when(pl.col("query_id") == "q1").then(pl.lit("n"))
                       .otherwise(pl.col("doc_id")))  # fmt: skip
    out = irm.compare({"a": a, "b": b}, "P@1", qrels=qrels, baseline="a", test="randomization")
    row = out.row(0, named=True)
    assert (row["mean"], row["baseline_mean"]) == (1 / 3, 2 / 3)
    assert (row["delta"], row["relative"]) == pytest.approx((-1 / 3, -0.5))
    assert (row["wins"], row["ties"], row["losses"]) == (0, 2, 1)
    assert row["p_value"] == 1.0
    # effect size: deltas -1, 0, 0 have sd sqrt(1/3), so d_z = (-1/3) / sqrt(1/3)
    assert row["effect_size"] == pytest.approx(-1 / 3 / math.sqrt(1 / 3))


def test_identical_systems_are_not_significant() -> None:
    qrels, a, _ = _tiny()
    for test in ["t", "wilcoxon", "randomization", "bootstrap"]:
        out = irm.compare({"a": a, "b": a}, "P@1", qrels=qrels, test=test)  # type: ignore[arg-type]
        assert out.select("p_value", "p_adjusted", "significant", "ties").row(0) == (
            1.0, 1.0, False, 3
        )  # fmt: skip


def test_namespace_compare_equals_function(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame],
) -> None:
    runs, qrels = sample
    long = pl.concat([r.with_columns(run=pl.lit(n)) for n, r in runs.items()])
    expected = irm.compare(long, METRICS, qrels=qrels, system="run", baseline="bm25")
    assert long.irm.compare(METRICS, qrels=qrels, system="run", baseline="bm25").equals(expected)
    lazy = long.lazy().irm.compare(METRICS, qrels=qrels, system="run", baseline="bm25")
    assert isinstance(lazy, pl.LazyFrame)  # lazy in, lazy out
    assert lazy.collect().equals(expected)


def _bad(**changes: Any) -> dict[str, Any]:
    return changes


BAD = [
    (_bad(test="z"), irm.InvalidValueError,
     "test='z' is not valid; choose one of 't', 'wilcoxon', 'randomization', 'bootstrap'"),
    (_bad(correction="sidak"), irm.InvalidValueError,
     "correction='sidak' is not a correction; choose 'bonferroni', 'holm', 'holm-sidak', "
     "'fdr_bh', 'fdr_by' or None"),
    (_bad(alpha=0), irm.InvalidValueError,
     "alpha=0 must be strictly between 0 and 1 (e.g. alpha=0.05)"),
    (_bad(alpha=1.5), irm.InvalidValueError,
     "alpha=1.5 must be strictly between 0 and 1 (e.g. alpha=0.05)"),
    (_bad(confidence=1), irm.InvalidValueError,
     "confidence=1 must be strictly between 0 and 1 (e.g. confidence=0.95)"),
    (_bad(n_resamples=0), irm.InvalidValueError,
     "n_resamples=0 must be a positive integer (e.g. n_resamples=10_000)"),
    (_bad(baseline="zzz"), irm.InvalidValueError,
     "baseline='zzz' is not among the systems ('a', 'b'); pass one of them"),
    (_bad(mode="baseline"), irm.InvalidValueError,
     "mode='baseline' needs baseline=...: name the system the others are compared with, "
     "or use mode='pairs'"),
    (_bad(correction_scope="x"), irm.InvalidValueError,
     "correction_scope='x' is not valid; choose one of 'all', 'metric'"),
    (_bad(query_set="error"), irm.QuerySetError,
     "system 'b' has no value for query 'q3' (1 of 3 queries are missing from some system); "
     "pass query_set='common' to keep the queries every system has"),
]  # fmt: skip


@pytest.mark.parametrize("frame_kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("changes", "error", "message"), BAD)
def test_bad_arguments(
    frame_kind: str, changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    qrels, a, b = _tiny()
    runs: dict[str, Any] = {"a": a, "b": b}
    if frame_kind == "LazyFrame":
        runs = {k: v.lazy() for k, v in runs.items()}
    with pytest.raises(error) as info:
        irm.compare(runs, "P@1", qrels=qrels, **changes)
    assert str(info.value) == message


@pytest.mark.parametrize("frame_kind", ["DataFrame", "LazyFrame"])
def test_bad_inputs(frame_kind: str) -> None:
    qrels, a, b = _tiny()
    lazy = frame_kind == "LazyFrame"
    a_in = a.lazy() if lazy else a
    with pytest.raises(irm.InvalidValueError) as info:
        irm.compare({"a": a_in}, "P@1", qrels=qrels)
    assert str(info.value) == (
        "compare needs at least two systems; got 1 ('a'): pass more runs, or a frame whose "
        "system column holds two or more values"
    )
    long = a_in.with_columns(system=pl.lit("only"))
    with pytest.raises(irm.InvalidValueError) as info:
        irm.compare(long, "P@1", qrels=qrels)
    assert str(info.value) == (
        "compare needs at least two systems; got 1 ('only'): pass more runs, or a frame "
        "whose system column holds two or more values"
    )
    with pytest.raises(irm.ColumnNotFoundError) as info:
        irm.compare(a_in, "P@1", qrels=qrels)
    assert str(info.value) == (
        "column 'system' (the system of each row) is not in the runs; "
        "pass system='<your system column>' or a dict of runs"
    )
    one_query = qrels.filter(pl.col("query_id") == "q1")
    with pytest.raises(irm.QuerySetError) as info:
        irm.compare({"a": a_in, "b": a_in}, "P@1", qrels=one_query)
    assert str(info.value) == (
        "1 paired query: a paired test needs at least two queries that every system is scored on"
    )
    b_in = (b.lazy() if lazy else b).filter(pl.col("query_id") == "q1")
    with pytest.raises(irm.QuerySetError) as info:
        irm.compare({"a": a_in, "b": b_in}, "P@1", qrels=qrels, query_set="common")
    assert str(info.value) == (
        "1 paired query: a paired test needs at least two queries that every system is "
        "scored on, and query_set='common' keeps 1 of the 3 queries the systems are scored "
        "on (each system's count: 'a' 3, 'b' 1). Check that every run names the same "
        "queries (same collection, same id spelling)."
    )


def test_nan_per_query_values_are_refused() -> None:
    values = _values(np.array([0.1, np.nan, 0.3]), np.array([0.2, 0.2, 0.2]))
    with pytest.raises(irm.InvalidValueError) as info:
        compare_values(values, CompareOptions())
    assert str(info.value) == (
        "per-query value of 'm' for system 'sys' on query 'q1' is NaN: the metric is "
        "undefined there, as irm.evaluate(..., per_query=True) shows; NaN cannot be "
        "paired: drop that query from every system's run, e.g. "
        "run.filter(pl.col('query_id') != 'q1'), or compare a metric defined there"
    )


@pytest.mark.parametrize("lazy", [False, True])
def test_a_ranked_run_beside_score_only_runs_is_ranked_as_evaluate_ranks_it(lazy: bool) -> None:
    # a fused run carries ranks; the runs it came from only scores: each is ordered as
    # irm.evaluate orders it alone (the ranked one by its ranks), not one way for all
    run = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "b"],
         "score": [2.0, 1.0, 1.0, 2.0]}
    )  # fmt: skip
    # ranks alone (with the scores beside, which they contradict, refused: below)
    ranked = run.with_columns(rank=pl.Series([2, 1, 2, 1])).drop("score")
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
    runs = {"scores": run, "ranked": ranked}
    if lazy:
        runs = {name: frame.lazy() for name, frame in runs.items()}  # type: ignore[misc]
    out = irm.compare(runs, ["P@1"], qrels=qrels, baseline="scores", test="t")
    # by score, P@1 = (1 + 0) / 2; by its ranks "ranked" puts b first twice: 0
    alone = irm.evaluate(ranked, ["P@1"], qrels=qrels)["P@1"].item()
    assert out.select("mean", "baseline_mean", "delta").row(0) == (alone, 0.5, -0.5)
    assert alone == 0.0
    message = (
        "system 'scores': column 'rank' not found in the run (its columns: 'query_id', "
        "'doc_id', 'score'); pass rank=... or score=... to name it, or choose order= (now "
        "'rank')"
    )
    with pytest.raises(irm.ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.compare(
            runs, ["P@1"], qrels=qrels, baseline="scores", test="t",
            order="rank",
        )  # fmt: skip
    # ranks and scores that order a query differently: which is meant is not known
    both = {"scores": run, "ranked": ranked.with_columns(run["score"])}
    message = "^columns 'rank' and 'score' of the run order query 'q1' \\(system='ranked'\\)"
    with pytest.raises(irm.InvalidValueError, match=message):
        irm.compare(both, ["P@1"], qrels=qrels, baseline="scores", test="t")
