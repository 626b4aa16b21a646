"""Fusion against ranx: every method x normalisation, the trained methods, the grid
search; the documented differences; bad input with exact messages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    UnknownMetricError,
)
from tests.fusion_data import (
    assert_same_scores,
    our_scores,
    random_qrels,
    random_runs,
    ranx_scores,
    to_ranx_qrels,
    to_ranx_run,
)

ranx = pytest.importorskip("ranx")
from ranx.fusion import fusion_switch  # noqa: E402
from ranx.normalization import norm_switch  # noqa: E402

warnings.filterwarnings("ignore", module="numba")

PARAMS = {
    "rrf": {"k": 60},
    "rbc": {"phi": 0.8},
    "gmnz": {"gamma": 0.7},
    "logn_isr": {"sigma": 0.2},
}
WEIGHTED = ("w_bordafuse", "wsum", "wmnz", "mixed")
RANK_BASED = ("rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse")
SCORE_BASED = ("sum", "mnz", "max", "min", "med", "anz", "gmnz", "wsum", "wmnz", "mixed")
NORMS = (None, "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")


def _ranx_fuse(runs: dict[str, pl.DataFrame], method: str, norm: str | None, params: dict):  # type: ignore[no-untyped-def,type-arg]
    rx = [to_ranx_run(frame, name) for name, frame in runs.items()]
    if norm == "borda":
        # ranx leaves Borda-normalised runs in set order; rank-based methods read that
        # order, so sort them by score as fuse does (see test_borda_rank_based_full_overlap)
        normed = norm_switch("borda")(rx)
        for run in normed:
            run.sort()
        return fusion_switch(method)(normed, **params)
    return ranx.fuse(rx, norm=norm, method=method, params=params)


def _ours(runs, method, norm, params, lazy=False):  # type: ignore[no-untyped-def]
    kwargs = {k: v for k, v in params.items() if k != "weights"}
    # a method reading positions alone refuses a norm that keeps every run's order
    # (ranx applies it, to no effect): fuse without it equals ranx with it
    norm = norm if method in SCORE_BASED or norm in (None, "min-max-inverted", "borda") else None
    given = {n: f.lazy() for n, f in runs.items()} if lazy else runs
    return irm.fuse(given, method, norm=norm, weights=params.get("weights"), **kwargs)


def _params(method: str, n_runs: int) -> dict:  # type: ignore[type-arg]
    params = dict(PARAMS.get(method, {}))
    if method in WEIGHTED:
        params["weights"] = [0.5, 0.3, 0.2, 0.4][:n_runs]
    return params


# rank-based x borda is tested on full overlap (test_borda_rank_based_full_overlap)
CASES = [
    (m, n)
    for m in SCORE_BASED + RANK_BASED
    for n in NORMS
    if not (n == "borda" and m in RANK_BASED)
]


@pytest.mark.parametrize(("method", "norm"), CASES)
def test_equal_to_ranx(method: str, norm: str | None) -> None:
    for seed, n_runs in ((1, 3), (2, 2))[: 2 if norm in (None, "min-max") else 1]:
        runs = random_runs(seed, n_runs=n_runs)
        params = _params(method, n_runs)
        assert_same_scores(
            our_scores(_ours(runs, method, norm, params)),
            ranx_scores(_ranx_fuse(runs, method, norm, params)),
        )


@pytest.mark.parametrize("method", RANK_BASED)
def test_borda_rank_based_full_overlap(method: str) -> None:
    """Borda normalisation gives every unretrieved candidate the same score, so ranks
    among them depend on tie order (ranx's set order, fuse's document id): with runs
    that all retrieve every candidate there are no such ties, and ranx agrees."""
    runs = random_runs(7, n_runs=3, pool=12)
    pools = pl.concat(list(runs.values())).select("query_id", "doc_id").unique()
    rng = np.random.default_rng(0)
    full = {
        name: pools.with_columns(pl.Series("score", rng.uniform(0, 1, pools.height)))
        for name in runs
    }
    params = _params(method, 3)
    assert_same_scores(
        our_scores(_ours(full, method, "borda", params)),
        ranx_scores(_ranx_fuse(full, method, "borda", params)),
    )


@pytest.mark.parametrize("method", ["condorcet", "w_condorcet"])
def test_condorcet_equal_to_ranx_when_majority_is_an_order(method: str) -> None:
    """Two identical full runs outvote a third partial one: the majority is a strict
    order, and ranx's sort and fuse's pairwise wins agree."""
    base = random_runs(11, n_runs=2, pool=15)
    pools = pl.concat(list(base.values())).select("query_id", "doc_id").unique()
    rng = np.random.default_rng(1)
    full = pools.with_columns(pl.Series("score", rng.uniform(0, 1, pools.height)))
    runs = {"a": full, "b": full.with_columns(pl.col("score") * 10), "c": base["run1"]}
    params = {"weights": [0.4, 0.4, 0.3]} if method == "w_condorcet" else {}
    ours = irm.fuse(runs, method, weights=params.get("weights"))
    assert_same_scores(our_scores(ours), ranx_scores(_ranx_fuse(runs, method, None, params)))


def test_condorcet_draw_counts_half() -> None:
    """Two runs disagreeing on a and b: a draw, half a win each; ties then by id,
    descending, as evaluate and trec_eval break them."""
    one = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    two = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    out = irm.fuse({"one": one, "two": two}, "condorcet")
    assert out.rows() == [("q", "b", 2.0, 1), ("q", "a", 1.0, 2)]


TRAINED = {
    "probfuse": ({"n_segments": 4}, {}, "probs"),
    "segfuse": ({}, {}, "probs"),
    "slidefuse": ({}, {"w": 2}, "probs"),
    "posfuse": ({}, {}, "probs"),
    "bayesfuse": ({}, {}, "log_odds"),
    "mapfuse": ({}, {}, "map_scores"),
}


@pytest.mark.parametrize("norm", [None, "min-max", "zmuv"])
@pytest.mark.parametrize("method", list(TRAINED))
def test_trained_equal_to_ranx(method: str, norm: str | None) -> None:
    from ranx import fusion as rf

    fit_kw, fuse_kw, key = TRAINED[method]
    runs, qrels = random_runs(3, n_queries=8), random_qrels(4, n_queries=8)
    rx = [to_ranx_run(f, n) for n, f in runs.items()]
    rx = rx if norm is None else [norm_switch(norm)(r) for r in rx]
    train = getattr(rf, f"{method}_train")
    theirs_fit = train(to_ranx_qrels(qrels), rx, *fit_kw.values())
    # only segfuse's fuse reads scores: the others refuse a norm that keeps each run's
    # order (fit_fusion as fuse), which ranx applies to no effect: ranx with it equals
    # ours without it; every fit reads positions alone, so fit_fusion refuses it for
    # segfuse too, and ranx's table fitted with it equals ours fitted without it
    kept = norm if method == "segfuse" else None
    fitted = irm.fit_fusion(runs, method, qrels=qrels, **fit_kw)
    for i, expected in enumerate(theirs_fit):
        got = fitted.filter(run=f"run{i}").sort("index")["value"].to_numpy()
        expected = np.atleast_1d(np.asarray(expected, dtype=float))
        if method == "bayesfuse":  # ranx spreads each segment over its positions
            expected = expected[[0, 5, 10, 15, 20, 30, 100, 200, 500]]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    theirs = fusion_switch(method)(rx, **{key: theirs_fit, **fuse_kw})
    for lazy in (False, True):
        given = {n: f.lazy() for n, f in runs.items()} if lazy else runs
        ours = irm.fuse(given, method, norm=kept, fitted=fitted, **fuse_kw)
        assert isinstance(ours, pl.LazyFrame) == lazy
        assert_same_scores(our_scores(ours), ranx_scores(theirs))


def test_queries_in_some_runs_only() -> None:
    """ranx refuses runs with different queries; fuse fuses each query from the runs
    that have it, which equals ranx on those runs alone."""
    runs = random_runs(5, n_runs=3, query_sets=True)
    rx = [to_ranx_run(f, n) for n, f in runs.items()]
    with pytest.raises(AssertionError, match="query ids do not match"):
        ranx.fuse(rx, method="sum")
    ours = our_scores(irm.fuse(runs, "mnz", norm="min-max"))
    for query in sorted({q for q, _ in ours}):
        having = {n: f.filter(query_id=query) for n, f in runs.items() if query in f["query_id"]}
        if len(having) < 2:
            theirs = {
                (query, d): s
                for q, d, s in irm.fuse(
                    {**having, "empty": next(iter(having.values())).clear()}, "mnz", norm="min-max"
                ).iter_rows()
            }
        else:
            theirs = ranx_scores(_ranx_fuse(having, "mnz", "min-max", {}))
        assert_same_scores({k: v for k, v in ours.items() if k[0] == query}, theirs)


def test_ties_broken_by_doc_id_and_depth() -> None:
    one = pl.DataFrame({"query_id": "q", "doc_id": ["c", "b", "a"], "score": [1.0, 1.0, 1.0]})
    two = pl.DataFrame({"query_id": "q", "doc_id": ["z"], "score": [0.5]})
    # ties by document id descending compared as text, as evaluate and trec_eval
    out = irm.fuse({"one": one, "two": two}, "sum", depth=2)
    assert out.rows() == [("q", "c", 1.0, 1), ("q", "b", 1.0, 2)]
    # rrf reads positions: c, b, a are 1st, 2nd, 3rd of run one (ties by id); c and z
    # then tie at 1/1, and z > c
    rrf = irm.fuse({"one": one, "two": two}, "rrf", k=0)
    assert rrf.rows() == [
        ("q", "z", 1.0, 1),
        ("q", "c", 1.0, 2),
        ("q", "b", 0.5, 3),
        ("q", "a", 1 / 3, 4),
    ]


@pytest.mark.parametrize("method", ["sum", "max", "rrf", "isr", "log_isr", "mnz"])
@pytest.mark.parametrize("integer_ids", [False, True])
def test_fusing_a_run_with_itself_gives_that_runs_metrics(method: str, integer_ids: bool) -> None:
    # many ties in score: the fused run must break them as evaluate breaks the run's
    rng = np.random.default_rng(3)
    n = 400
    run = pl.DataFrame(
        {
            "query_id": [f"q{i % 20}" for i in range(n)],
            "doc_id": [i // 20 * 7 % 97 for i in range(n)],
            "score": rng.integers(0, 4, n).astype(float),
        }
    )
    run = run.with_columns(pl.col("doc_id") if integer_ids else pl.col("doc_id").cast(pl.String))
    qrels = run.select("query_id", "doc_id").with_columns(
        pl.Series("relevance", rng.integers(0, 3, n))
    )
    metrics = ["mrr", "ndcg@5", "P@3", "map"]
    # fusion takes two runs or more: the run with itself fuses to the same order
    fused = irm.fuse({"one": run, "again": run}, method)
    assert_frame_equal(
        irm.evaluate(fused, metrics, qrels=qrels, per_query=True),
        irm.evaluate(run, metrics, qrels=qrels, per_query=True),
    )


def test_long_frame_and_namespace_equal_dict() -> None:
    runs = random_runs(9)
    long = pl.concat([f.with_columns(pl.lit(n).alias("system")) for n, f in runs.items()])
    expected = irm.fuse(runs, "wsum", norm="zmuv", weights=[0.2, 0.3, 0.5])
    same = {"check_exact": False, "rel_tol": 1e-12}
    assert_frame_equal(
        irm.fuse(long, "wsum", norm="zmuv", weights=[0.2, 0.3, 0.5], system="system"),
        expected,
        **same,
    )
    assert_frame_equal(
        long.irm.fuse("wsum", norm="zmuv", weights=[0.2, 0.3, 0.5], system="system"),
        expected,
        **same,
    )
    lazy = long.lazy().irm.fuse(
        "wsum", norm="zmuv", weights={"run2": 0.5, "run0": 0.2, "run1": 0.3}, system="system"
    )
    assert_frame_equal(lazy.collect(), expected, **same)


def test_rank_only_runs() -> None:
    runs = {
        n: f.with_columns(
            pl.col("score").rank("ordinal", descending=True).over("query_id").alias("rank")
        ).drop("score")
        for n, f in random_runs(4).items()
    }
    with_scores = random_runs(4)
    assert_frame_equal(
        irm.fuse(runs, "rrf"), irm.fuse(with_scores, "rrf"), check_exact=False, rel_tol=1e-12
    )


@pytest.mark.parametrize(
    ("method", "norm", "metric"),
    [
        ("wsum", "min-max", "ndcg@10"),
        ("wmnz", "zmuv", "map"),
        ("mixed", "sum", "ndcg@5"),
        ("w_bordafuse", None, "ndcg@10"),
        ("rrf", None, "ndcg@10"),
        ("rbc", None, "map"),
        ("gmnz", "min-max", "ndcg@10"),
        ("logn_isr", None, "ndcg@10"),
    ],
)
def test_optimize_grid_is_ranx_grid_and_each_point_is_fuse_then_evaluate(
    method: str, norm: str | None, metric: str
) -> None:
    runs, qrels = random_runs(5, n_queries=8), random_qrels(6, n_queries=8)
    rx = [to_ranx_run(f, n) for n, f in runs.items()]
    kwargs = {"step": 0.2} if method in ("wsum", "wmnz", "mixed", "w_bordafuse") else {}
    kwargs |= {"step": 0.1} if method in ("rbc", "gmnz", "logn_isr") else {}
    best, grid = irm.optimize_fusion(
        runs, metric, qrels=qrels, method=method, norm=norm, return_grid=True, **kwargs
    )
    _, report = ranx.optimize_fusion(
        to_ranx_qrels(qrels),
        rx,
        norm=norm,
        method=method,
        metric=metric,
        return_optimization_report=True,
        show_progress=False,
        **kwargs,
    )
    param = next(c for c in grid.columns if c != metric)
    theirs = [eval(c, {"np": np}) for c in report.configs]  # ranx keys its report by str(point)
    if param == "phi":  # ranx's phi=0 and phi=1 order by the tie-break alone: left out
        assert theirs[0] == 0.0  # (0.01 rounded at step 0.1)
        assert theirs[-1] == 1.0
        theirs = theirs[1:-1]
    ours = grid[param].to_list()
    assert [tuple(p) if isinstance(p, list) else p for p in ours] == [
        tuple(float(x) for x in c) if isinstance(c, tuple) else c for c in theirs
    ]
    # each point fused on its own, then every point's fused run scored in one evaluate
    # call (systems=: each point's value is evaluate's of its run alone)
    fused = [
        irm.fuse(
            runs,
            method,
            norm=norm,
            **({"weights": value} if param == "weights" else {param: value}),
        ).with_columns(point=pl.lit(n))
        for n, value in enumerate(grid[param].to_list())
    ]
    scored = irm.evaluate(pl.concat(fused), metric, qrels=qrels, systems="point")
    expected = dict(scored.select("point", metric).iter_rows())
    assert sorted(expected) == list(range(grid.height))
    for n, row in enumerate(grid.iter_rows(named=True)):
        assert row[metric] == pytest.approx(expected[n], abs=1e-12)
    scores = grid[metric].to_list()
    last_best = len(scores) - 1 - scores[::-1].index(max(scores))
    assert best == {param: ours[last_best]}


def test_optimize_without_ties_equals_ranx() -> None:
    """gmnz's fused scores do not tie, so ranx's scores and choice are fuse's."""
    runs, qrels = random_runs(5, n_queries=8), random_qrels(6, n_queries=8)
    rx = [to_ranx_run(f, n) for n, f in runs.items()]
    best, grid = irm.optimize_fusion(
        runs, "ndcg@10", qrels=qrels, method="gmnz", step=0.05, return_grid=True
    )
    theirs, report = ranx.optimize_fusion(
        to_ranx_qrels(qrels),
        rx,
        norm="min-max",
        method="gmnz",
        metric="ndcg@10",
        step=0.05,
        return_optimization_report=True,
        show_progress=False,
    )
    np.testing.assert_allclose(
        grid["ndcg@10"].to_numpy(), np.array(report.results, dtype=float), atol=1e-12
    )
    assert best == {"gamma": float(theirs["gamma"])}


def test_optimize_folds() -> None:
    runs, qrels = random_runs(5, n_queries=10), random_qrels(6, n_queries=10)
    best, grid, folds = irm.optimize_fusion(
        runs, "ndcg@10", qrels=qrels, method="rrf", norm=None, return_grid=True, folds=5, seed=3
    )
    scores = grid["ndcg@10"].to_list()
    assert best == {"k": grid["k"][len(scores) - 1 - scores[::-1].index(max(scores))]}
    assert folds.columns == ["fold", "queries", "k", "train", "test"]
    assert folds["queries"].to_list() == [2, 2, 2, 2, 2]
    per_query = {}
    for k in grid["k"].to_list():
        fused = irm.fuse(runs, "rrf", k=k)
        per_query[k] = (
            irm.evaluate(fused, "ndcg@10", qrels=qrels, per_query=True)
            .sort("query_id")["ndcg@10"]
            .to_numpy()
        )
    order = np.random.default_rng(3).permutation(10)
    fold_of = np.empty(10, dtype=int)
    fold_of[order] = np.arange(10) % 5
    for row in folds.iter_rows(named=True):
        test = fold_of == row["fold"] - 1
        train_means = {k: v[~test].mean() for k, v in per_query.items()}
        top = max(train_means.values())
        assert (
            row["k"]
            == [k for k, v in train_means.items() if v == pytest.approx(top, abs=1e-12)][-1]
        )
        assert row["test"] == pytest.approx(per_query[row["k"]][test].mean(), abs=1e-12)


A = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 0.5]})
B = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [2.0]})
BAD_INPUT = [
    (
        {"runs": {"a": A}},
        InvalidValueError,
        "fusion needs at least two runs; got 1 ('a'): pass a dict of two or more runs, or one "
        "frame whose system column names two or more runs",
    ),
    (
        {"method": "wsum", "weights": [1.0]},
        InvalidValueError,
        "weights has 1 value(s) for 2 runs ('a', 'b'); give one weight per run, in the runs' "
        "order",
    ),
    (
        {"method": "wsum", "weights": [1.0, -0.5]},
        InvalidValueError,
        "weight -0.5 of run 'b' is not valid; weights must be finite numbers >= 0",
    ),
    (
        {"method": "wsum", "weights": [0, 0]},
        InvalidValueError,
        "weights are all zero; give at least one run a positive weight",
    ),
    (
        {"method": "wsum"},
        MetricParameterError,
        "wsum needs weights, one per run ('a', 'b'): pass them, e.g. weights=[0.5, 0.5]",
    ),
    (
        {"method": "rrf", "weights": [1, 1]},
        MetricParameterError,
        "rrf takes no weights; drop weights=, or use a weighted method (w_bordafuse, "
        "w_condorcet, wsum, wmnz, mixed)",
    ),
    (
        {"method": "rff"},
        UnknownMetricError,
        "unknown fusion method 'rff'; choose one of rrf, isr, log_isr, logn_isr, rbc, bordafuse, "
        "w_bordafuse, condorcet, w_condorcet, sum, mnz, max, min, med, anz, gmnz, wsum, wmnz, "
        "mixed, probfuse, segfuse, slidefuse, posfuse, bayesfuse, mapfuse",
    ),
    (
        {"norm": "l2"},
        UnknownMetricError,
        "unknown normalisation 'l2'; choose one of min-max, min-max-inverted, max, sum, zmuv, "
        "rank, borda, or None",
    ),
    (
        {"method": "gmnz"},
        MetricParameterError,
        "gmnz needs the parameter gamma: pass it, e.g. fuse(runs, method='gmnz', gamma=...)",
    ),
    (
        {"method": "rrf", "phi": 0.5},
        MetricParameterError,
        "rrf has no parameter 'phi' (its parameters: k)",
    ),
    (
        {"method": "rbc", "phi": 2},
        MetricParameterError,
        "rbc: phi=2 is not valid; it must be a number in (0, 1) (phi=0 weights every document "
        "but each run's first 0 ** (rank - 1) = 0, their order the tie-break's; phi=1 "
        "weights every document (1 - 1) * 1 = 0, a fused run of ties ordered by the "
        "tie-break alone)",
    ),
    (
        {"runs": {"a": A, "b": B.with_columns(score=float("nan"))}},
        InvalidValueError,
        "column 'score' of run 'b' has a NaN, infinite or null value (query 'q', document 'a'); "
        "fusion needs a finite value on every row: fix or drop such rows, e.g. "
        ".filter(pl.col('score').is_finite())",
    ),
    (
        {"runs": {"a": A, "b": B.with_columns(score=float("inf"))}},
        InvalidValueError,
        "column 'score' of run 'b' has a NaN, infinite or null value (query 'q', document 'a'); "
        "fusion needs a finite value on every row: fix or drop such rows, e.g. "
        ".filter(pl.col('score').is_finite())",
    ),
    (
        {"runs": {"a": pl.concat([A, A.head(1)]), "b": B}},
        DuplicateError,
        "run 'a' lists document 'a' 2 times in query 'q'; a run may list a document once per "
        "query: keep one row per document, e.g. .unique(['query_id', 'doc_id'])",
    ),
    (
        {"method": "posfuse"},
        MetricParameterError,
        "posfuse is a trained method and needs fitted parameters: fit them on judged queries, "
        "e.g. fitted = irm.fit_fusion(runs, 'posfuse', qrels=qrels), then fuse(runs, 'posfuse', "
        "fitted=fitted)",
    ),
    (
        {"runs": {"a": A, "b": B.drop("score")}},
        ColumnNotFoundError,
        "run 'b' has neither a 'score' nor a 'rank' column (its columns: 'query_id', 'doc_id'); "
        "name its score column with score=... or its rank column with rank=...",
    ),
    (
        {"depth": 0},
        MetricParameterError,
        "depth=0 is not valid; it must be an integer >= 1 (the number of fused documents kept "
        "per query), or None for all",
    ),
]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_INPUT)
def test_bad_input(kwargs: dict, error: type[Exception], message: str, lazy: bool) -> None:  # type: ignore[type-arg]
    kwargs = dict(kwargs)
    runs = kwargs.pop("runs", {"a": A, "b": B})
    if lazy:
        runs = {n: f.lazy() for n, f in runs.items()}
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _collected(irm.fuse(runs, **kwargs))


def _collected(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def test_bad_input_optimize_and_fit() -> None:
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "optimize_fusion searches wsum, wmnz, mixed, w_bordafuse, rrf, rbc, gmnz, logn_isr; "
            "sum has no grid (trained methods are fitted with fit_fusion)"
        ),
    ):
        irm.optimize_fusion({"a": A, "b": B}, qrels=qrels, method="sum")
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "probfuse needs the parameter n_segments: pass it, e.g. fit_fusion(runs, 'probfuse', "
            "qrels=qrels, n_segments=10)"
        ),
    ):
        irm.fit_fusion({"a": A, "b": B}, "probfuse", qrels=qrels)
    fitted = irm.fit_fusion({"a": A, "b": B}, "posfuse", qrels=qrels)
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "fitted holds parameters of posfuse, not mapfuse: fit them with fit_fusion(runs, "
            "'mapfuse', qrels=qrels)"
        ),
    ):
        irm.fuse({"a": A, "b": B}, "mapfuse", fitted=fitted)


def test_cli_fuse_and_optimize(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from polars_irmetrics.cli.main import main
    from polars_irmetrics.io.files import sample_paths

    (bm25, dense, _), qrels = sample_paths()
    out = tmp_path / "fused.parquet"
    assert (
        main(
            [
                "fuse",
                str(bm25),
                str(dense),
                "--method",
                "wsum",
                "--norm",
                "min-max",
                "--weights",
                "0.6,0.4",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    expected = irm.fuse(
        {str(bm25): pl.read_parquet(bm25), str(dense): pl.read_parquet(dense)},
        "wsum",
        norm="min-max",
        weights=[0.6, 0.4],
    )
    assert_frame_equal(pl.read_parquet(out), expected)
    rbc = tmp_path / "rbc.parquet"
    assert (
        main(
            [
                "fuse",
                str(bm25),
                str(dense),
                "--method",
                "rbc",
                "--param",
                "phi=0.9",
                "-o",
                str(rbc),
            ]
        )
        == 0
    )
    expected = irm.fuse({"a": pl.read_parquet(bm25), "b": pl.read_parquet(dense)}, "rbc", phi=0.9)
    assert_frame_equal(pl.read_parquet(rbc), expected)
    assert (
        main(["fuse", str(bm25), str(dense), "--method", "rbc", "--param", "phi", "-o", str(rbc)])
        == 2
    )
    assert capsys.readouterr().err == (
        "irm: error: --param 'phi' is not NAME=NUMBER, e.g. --param phi=0.8\n"
    )
    trec = tmp_path / "fused.run"
    assert main(["fuse", str(bm25), str(dense), "-o", str(trec)]) == 0
    assert (
        irm.read_trec_run(trec).height
        == irm.fuse({"a": pl.read_parquet(bm25), "b": pl.read_parquet(dense)}).height
    )
    assert (
        main(
            [
                "fuse",
                str(bm25),
                str(dense),
                "--optimize",
                "--qrels",
                str(qrels),
                "--metric",
                "ndcg@10",
                "--folds",
                "3",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert printed.startswith("best ndcg@10: ")
    assert "cross-validated ndcg@10: " in printed
    assert main(["fuse", str(bm25), str(tmp_path / "missing.run"), "-o", str(trec)]) == 2
    assert capsys.readouterr().err == f"irm: error: {tmp_path / 'missing.run'}: no such run file\n"


@pytest.mark.parametrize(
    ("method", "kwargs"),
    [("rrf", {}), ("wsum", {"norm": "min-max", "weights": [0.2, 0.3, 0.5]}), ("bordafuse", {})],
)
def test_out_of_core_buckets_equal_one_plan(method: str, kwargs: dict, tmp_path) -> None:  # type: ignore[type-arg,no-untyped-def]
    runs = random_runs(3, n_queries=20)
    lazy = {n: f.lazy() for n, f in runs.items()}
    bucketed = irm.fuse(lazy, method, buckets=3, spill_dir=tmp_path, **kwargs).collect()
    one_plan = irm.fuse(runs, method, **kwargs)
    assert_frame_equal(bucketed, one_plan, check_exact=False, rel_tol=1e-12)
    assert bucketed["rank"].equals(one_plan["rank"])
    assert list(tmp_path.iterdir()) == []  # the buckets' folder is removed


def test_optimize_in_buckets_equals_one_plan(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runs, qrels = random_runs(5, n_queries=12), random_qrels(6, n_queries=14)
    one = irm.optimize_fusion(runs, "ndcg@10", qrels=qrels, return_grid=True, buckets=None)
    split = irm.optimize_fusion(
        runs, "ndcg@10", qrels=qrels, return_grid=True, buckets=4, spill_dir=tmp_path
    )
    assert one[0] == split[0]
    assert_frame_equal(one[1], split[1], check_exact=False, rel_tol=1e-12)
    # two judged queries (q12, q13) retrieved nothing: they count 0, as in evaluate
    weights = one[0]["weights"]
    fused = irm.fuse(runs, "wsum", norm="min-max", weights=weights)
    expected = irm.evaluate(fused, "ndcg@10", qrels=qrels)
    assert expected["num_q"].item() == 14
    assert one[1]["ndcg@10"].max() == pytest.approx(expected["ndcg@10"].item(), abs=1e-12)


def test_benchmark_script_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """benchmarks/fusion.py at a tiny size, so that it never rots; no time is asserted."""
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "results.md"
    args = ["--runs", "2", "--queries", "6", "--depth", "10", "--opt-queries", "6"]
    proc = subprocess.run(
        [
            sys.executable,
            str(root / "benchmarks" / "fusion.py"),
            *args,
            "--skip-ranx",
            "--out",
            str(out),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "PYTHONPATH": str(root / "src")},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "| irm.fuse rrf (from Parquet, end to end) |" in text
    assert "| irm.optimize_fusion (62 points, one plan) |" in text


def test_unsigned_ids_beyond_int64_are_kept_whole() -> None:
    # every id was cast to Int64: a UInt64 id beyond 2**63 raised polars' error
    big = 2**63 + 11
    ids = {"doc_id": pl.UInt64}
    a = pl.DataFrame(
        {"query_id": [1, 1], "doc_id": [big, big + 1], "score": [2.0, 1.0]}, schema_overrides=ids
    )
    b = pl.DataFrame(
        {"query_id": [1, 1], "doc_id": [big + 1, big + 2], "score": [2.0, 1.0]},
        schema_overrides=ids,
    )
    out = irm.fuse({"a": a, "b": b}, "rrf")
    assert out["doc_id"].to_list() == [big + 1, big, big + 2]
    # beside a run of signed ids: compared as Int128, every id whole
    signed = pl.DataFrame({"query_id": [1, 1], "doc_id": [5, -6], "score": [2.0, 1.0]})
    mixed = irm.fuse({"a": signed, "b": b}, "rrf")
    assert mixed.schema["doc_id"] == pl.Int128
    assert sorted(mixed["doc_id"].to_list()) == [-6, 5, big + 1, big + 2]


@pytest.mark.parametrize(
    ("method", "norm"),
    [
        ("combsum", "zmuv"),
        ("combsum", "sum"),
        ("combsum", None),
        ("combmnz", None),
        ("wsum", None),
    ],
)
def test_scores_of_2_to_the_32_and_more_do_not_follow_the_row_order(
    method: str, norm: str | None
) -> None:
    # the per-query mean (zmuv) and sum (sum) of scores near 2**40, and a method's sum
    # of them unnormalised (or divided by the largest), were float sums, whose last bit
    # moved with the order of the rows
    rng = np.random.default_rng(11)
    runs = {}
    for name in ("a", "b", "c", "d"):  # three terms or more per document: order matters
        rows = [
            (f"q{q}", f"d{d}", float(2**40 + rng.integers(0, 2**20)) + rng.random())
            for q in range(30)
            for d in rng.choice(30, 25, replace=False)
        ]
        runs[name] = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    weights = {"weights": [0.1, 0.2, 0.3, 0.4]} if method == "wsum" else {}
    given = irm.fuse(runs, method, norm=norm, **weights).sort("query_id", "doc_id")
    for seed in range(3):
        shuffled = {
            name: run.sample(fraction=1.0, shuffle=True, seed=seed) for name, run in runs.items()
        }
        again = irm.fuse(shuffled, method, norm=norm, **weights).sort("query_id", "doc_id")
        assert_frame_equal(again, given, check_exact=True)
    lazy = {name: run.lazy() for name, run in shuffled.items()}
    fused = irm.fuse(lazy, method, norm=norm, **weights).collect()
    assert_frame_equal(fused.sort("query_id", "doc_id"), given, check_exact=True)
