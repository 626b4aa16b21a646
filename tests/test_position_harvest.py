"""irm.position_bias(log, method="harvest"): position bias by intervention harvesting
(Agarwal et al. 2019, WSDM; Fang, Agarwal & Joachims 2019, SIGIR) -- against the public
reference code (fixtures made by tests/fixtures/harvest/make_harvest_fixtures.py), on
simulated logs of several rankers with known propensities, a worked example by hand, a
brute-force transcription of the paper on random small logs, invariants, and refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, ColumnTypeError, InvalidValueError

FIXTURES = json.loads(
    (Path(__file__).parent / "fixtures" / "harvest" / "harvest_expected.json").read_text()
)
TRUE = np.array([1.0, 0.6, 0.4, 0.3, 0.2])


def _frame(log: pl.DataFrame, frame_kind: str) -> pl.DataFrame | pl.LazyFrame:
    return log.lazy() if frame_kind == "LazyFrame" else log


@pytest.mark.parametrize("case", FIXTURES["cases"], ids=lambda c: c["name"])
def test_equals_the_reference_allpairs_code(case: dict[str, Any], frame_kind: str) -> None:
    """Fang et al.'s code (two rankers, each serving every query once): ours agrees within
    the spread of the reference's own random starts (a few 1e-5)."""
    log = pl.DataFrame(case["log"])
    out = irm.position_bias(_frame(log, frame_kind), method="harvest")
    assert isinstance(out, pl.DataFrame)
    assert out["position"].to_list() == list(range(1, len(case["propensity"]) + 1))
    assert out["propensity"][0] == 1.0
    got = out["propensity"].to_numpy()
    assert np.abs(got - np.array(case["propensity"])).max() <= case["spread"]
    assert case["spread"] < 1e-4


def _simulated(n: int, seed: int, rankers: int = 3, true: np.ndarray = TRUE) -> pl.DataFrame:
    """``n`` impressions: a query drawn from a skewed distribution, a ranker drawn with
    unequal traffic (independently of the query), the ranker's fixed ranking of the
    query's documents (a noisy score of their relevance: better documents higher) and
    PBM clicks."""
    rng = np.random.default_rng(seed)
    queries, pool, depth = 200, 6, len(true)
    relevance = rng.uniform(0.05, 0.95, (queries, pool))
    scores = relevance[None] + rng.normal(0.0, 0.3, (rankers, queries, pool))
    order = np.argsort(-scores, axis=2)[:, :, :depth]
    query = rng.choice(queries, n, p=rng.dirichlet(np.ones(queries)))
    traffic = np.arange(rankers, 0, -1) / np.arange(rankers, 0, -1).sum()
    ranker = rng.choice(rankers, n, p=traffic)
    docs = order[ranker, query]
    clicks = rng.random((n, depth)) < true[None, :] * relevance[query[:, None], docs]
    return pl.DataFrame(
        {
            "ranker": np.repeat(ranker, depth),
            "query_id": np.repeat(query, depth),
            "doc_id": docs.ravel(),
            "rank": np.tile(np.arange(1, depth + 1), n),
            "clicked": clicks.ravel().astype(np.int8),
        }
    )


@pytest.mark.parametrize(("seed", "rankers"), [(0, 2), (1, 3)])
def test_estimate_converges_to_the_true_propensities(seed: int, rankers: int) -> None:
    errors = []
    for n in (3_000, 300_000):
        out = irm.position_bias(_simulated(n, seed, rankers), method="harvest")
        assert out["position"].to_list() == [1, 2, 3, 4, 5]
        errors.append(np.abs(out["propensity"].to_numpy() - TRUE).max())
    assert errors[1] < 0.015
    assert errors[1] < errors[0]


def test_naive_ctr_by_position_does_not_converge() -> None:
    """The rankers put better documents higher, so the click-through rate by rank mixes
    examination and relevance; the harvested estimate separates them."""
    log = _simulated(300_000, 2)
    ctr = log.group_by("rank").agg(pl.col("clicked").mean()).sort("rank")["clicked"]
    naive = (ctr / ctr[0]).to_numpy()
    harvested = irm.position_bias(log, method="harvest")["propensity"].to_numpy()
    assert np.abs(naive - TRUE)[1:].min() > 0.05
    assert np.abs(naive - TRUE).max() > 0.08
    assert np.abs(harvested - TRUE).max() < 0.015


def test_worked_example_with_explicit_arithmetic() -> None:
    """Two positions: AllPairs fits each weighted rate exactly (``p_1 r = c_1 / (c_1 +
    not_c_1)``, ``p_2 r = c_2 / (c_2 + not_c_2)``), so ``p_2 / p_1`` is their ratio.

    Ranker A served query q 3 times as [a, b] and query z once ([y, x]): n_A = 4; ranker B
    served q twice as [b, a]: n_B = 2. w(q, a, 1) = w(q, b, 2) = 4, w(q, b, 1) = w(q, a, 2)
    = 2. Clicks: a at 1: 2 of 3; b at 2: 1 of 3; b at 1: 1 of 2; a at 2: 1 of 2.
    """
    log = pl.DataFrame(
        {
            "system": ["A"] * 6 + ["B"] * 4 + ["A"] * 2,
            "q": ["q"] * 10 + ["z"] * 2,
            "doc": ["a", "b"] * 3 + ["b", "a"] * 2 + ["y", "x"],
            "pos": [1, 2] * 6,
            "click": [1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 1],
        }
    )
    c_1, not_c_1 = 2 / 4 + 1 / 2, 1 / 4 + 1 / 2
    c_2, not_c_2 = 1 / 2 + 1 / 4, 1 / 2 + 2 / 4
    expected = (c_2 / (c_2 + not_c_2)) / (c_1 / (c_1 + not_c_1))  # (0.75/1.75)/(1/1.75)
    out = irm.position_bias(
        log, method="harvest", ranker="system", query_id="q", doc_id="doc", rank="pos",
        clicked="click",
    )  # fmt: skip
    assert out.columns == ["position", "examination", "propensity", "impressions"]
    assert out["position"].to_list() == [1, 2]
    assert out["impressions"].to_list() == [5, 5]  # z's rows are in no interventional set
    assert out["examination"].null_count() == 2
    assert out["propensity"][0] == 1.0
    assert out["propensity"][1] == pytest.approx(expected, rel=1e-9)
    assert expected == pytest.approx(0.75)


def _brute_force(log: pl.DataFrame) -> dict[int, float]:
    """The paper's definitions transcribed with Python loops over the rows, and its
    objective maximised in (p, r) directly (not in logs) from several starts."""
    rows = log.rows(named=True)
    rank_of: dict[tuple[Any, Any, Any], int] = {}
    per_query: dict[tuple[Any, Any], dict[Any, int]] = {}
    for row in rows:
        rank_of[(row["ranker"], row["query_id"], row["doc_id"])] = row["rank"]
        docs = per_query.setdefault((row["ranker"], row["query_id"]), {})
        docs[row["doc_id"]] = docs.get(row["doc_id"], 0) + 1
    n: dict[Any, int] = {}
    for (ranker, _), docs in per_query.items():
        n[ranker] = n.get(ranker, 0) + max(docs.values())
    ranks: dict[tuple[Any, Any], set[int]] = {}
    for (_, query, doc), k in rank_of.items():
        ranks.setdefault((query, doc), set()).add(k)
    positions = sorted({row["rank"] for row in rows})
    index = {k: i for i, k in enumerate(positions)}
    m = len(positions)
    w: dict[tuple[Any, Any, int], int] = {}  # sum_i n_i [ranker i shows d at k for q]
    for (ranker, query, doc), k in rank_of.items():
        w[(query, doc, k)] = w.get((query, doc, k), 0) + n[ranker]
    c, not_c = np.zeros((m, m)), np.zeros((m, m))
    for row in rows:
        key = (row["query_id"], row["doc_id"])
        k = row["rank"]
        for other in ranks[key] - {k}:
            c[index[k], index[other]] += row["clicked"] / w[(*key, k)]
            not_c[index[k], index[other]] += (1 - row["clicked"]) / w[(*key, k)]

    def negative(x: np.ndarray) -> float:
        p, r = x[:m], x[m:].reshape(m, m)
        pr = p[:, None] * (r + r.T) / 2
        return float(-(c * np.log(pr) + not_c * np.log(1 - pr)).sum())

    best = None
    for seed in range(3):
        x0 = np.random.default_rng(seed).uniform(0.2, 0.8, m + m * m)
        fit = minimize(negative, x0, method="L-BFGS-B", bounds=[(1e-9, 1 - 1e-9)] * (m + m * m))
        if best is None or fit.fun < best.fun:
            best = fit
    assert best is not None
    return {k: float(best.x[index[k]] / best.x[0]) for k in positions}


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), rankers=st.integers(2, 3))
def test_agrees_with_a_brute_force_transcription(seed: int, rankers: int) -> None:
    log = _simulated(400, seed, rankers, true=np.array([1.0, 0.6, 0.3]))
    out = irm.position_bias(log, method="harvest")
    expected = _brute_force(log)
    got = dict(zip(out["position"].to_list(), out["propensity"].to_list(), strict=True))
    assert got.keys() == expected.keys()
    for k, value in expected.items():
        assert got[k] == pytest.approx(value, rel=2e-4, abs=1e-6)


@st.composite
def _small_logs(draw: st.DrawFn) -> pl.DataFrame:
    """2-3 rankers, 1-4 queries, each (ranker, query) a fixed ranking of 2-3 of the
    query's documents served 1-3 times, random clicks."""
    rankers = draw(st.integers(2, 3))
    queries = draw(st.integers(1, 4))
    depth = draw(st.integers(2, 3))
    rows: dict[str, list[Any]] = {k: [] for k in ("ranker", "query_id", "doc_id", "rank")}
    for r in range(rankers):
        for q in range(queries):
            order = draw(st.permutations(list(range(depth + 1))))[:depth]
            for _ in range(draw(st.integers(1, 3))):  # impressions of this ranking
                rows["ranker"] += [f"r{r}"] * depth
                rows["query_id"] += [q] * depth
                rows["doc_id"] += [f"d{d}" for d in order]
                rows["rank"] += list(range(1, depth + 1))
    size = len(rows["rank"])
    clicks = draw(st.lists(st.integers(0, 1), min_size=size, max_size=size))
    return pl.DataFrame({**rows, "clicked": clicks})


def _outcome(log: pl.DataFrame) -> tuple[str, Any]:
    try:
        out = irm.position_bias(log, method="harvest")
    except InvalidValueError as error:
        return ("error", str(error))
    return ("ok", out)


@settings(max_examples=15, deadline=None)
@given(log=_small_logs(), seed=st.integers(0, 99))
def test_invariants(log: pl.DataFrame, seed: int) -> None:
    """p_1 = 1; the row order, the rankers' and queries' names and a log repeated twice
    (every n_i and every count doubled) change nothing."""
    kind, out = _outcome(log)
    variants = [
        log.sample(fraction=1.0, shuffle=True, seed=seed),
        log.with_columns(pl.col("ranker").replace({"r0": "zz", "r1": "aa"})),
        log.with_columns((pl.col("query_id") * 7 + 3).alias("query_id")),
        pl.concat([log, log]),
    ]
    for variant in variants:
        other_kind, other = _outcome(variant)
        assert other_kind == kind
        if kind == "error":
            continue
        assert other["position"].to_list() == out["position"].to_list()
        assert other["propensity"].to_numpy() == pytest.approx(
            out["propensity"].to_numpy(), rel=1e-6
        )
    if kind == "ok":
        assert out["propensity"][0] == 1.0
        assert (out["propensity"] > 0).all()


def test_the_table_feeds_the_position_propensities() -> None:
    """The run is the logged ranking, the judgments its clicks: ps_precision@3 weighs a
    click at rank r by 1 / p_r from the harvested table."""
    bias = irm.position_bias(_simulated(20_000, 4), method="harvest")
    run = pl.DataFrame({"query_id": ["s"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    clicks = pl.DataFrame({"query_id": ["s", "s"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    out = irm.evaluate(run, ["ps_precision@1"], qrels=clicks, propensities=bias)
    p_3 = bias["propensity"][2]
    # the ideal ranking puts c (weight 1/p_3 > 1) first: 1 / (1 / p_3)
    assert out["ps_precision@1"].item() == pytest.approx(p_3)


LOG = pl.DataFrame(
    {
        "ranker": ["A", "A", "B", "B"],
        "query_id": [1, 1, 1, 1],
        "doc_id": ["a", "b", "b", "a"],
        "rank": [1, 2, 1, 2],
        "clicked": [1, 0, 1, 1],
    }
)


@pytest.mark.parametrize(
    ("log", "kwargs", "error", "message"),
    [
        (
            LOG,
            {"method": "em", "ranker": "ranker"},
            InvalidValueError,
            "ranker='ranker' is read by method='harvest' only (the logs of several rankers); "
            "drop ranker=, or pass method='harvest'",
        ),
        (
            LOG,
            {"method": "swap", "ranker": "r"},
            InvalidValueError,
            "ranker='r' is read by method='harvest' only",
        ),
        (
            LOG,
            {"method": "harvest", "max_iter": 5},
            InvalidValueError,
            "max_iter=5 is not read by method='harvest': intervention harvesting reads the "
            "ranker, the query, the document, its rank and its click, and fits its objective "
            "to convergence; drop max_iter=",
        ),
        (LOG, {"method": "harvest", "tol": 0.1}, InvalidValueError, "tol=0.1 is not read by"),
        (LOG, {"method": "harvest", "swap": "s"}, InvalidValueError, "swap='s' is not read by"),
        (
            LOG.drop("ranker"),
            {"method": "harvest"},
            ColumnNotFoundError,
            "column 'ranker' not found in the log (its columns: 'query_id', 'doc_id', 'rank', "
            "'clicked'); intervention harvesting reads the logs of several rankers, one row "
            "per shown document: name the columns with ranker=, query_id=, doc_id=, rank= "
            "and clicked=",
        ),
        (
            LOG.with_columns(pl.col("rank").cast(pl.Float64)),
            {"method": "harvest"},
            ColumnTypeError,
            "column 'rank' in the log has dtype Float64; it must be an integer",
        ),
        (
            LOG.with_columns(pl.Series("clicked", [1, 0, 2, 1])),
            {"method": "harvest"},
            InvalidValueError,
            "the log has a null rank, a rank below 1, or a 'clicked' that is neither 0 nor 1 "
            "(e.g. ranker 'B', {'query_id': 1, 'doc_id': 'b'}): clicks are 0/1 and positions "
            "start at 1",
        ),
        (
            pl.concat([LOG, LOG.head(1).with_columns(rank=pl.lit(3, pl.Int64))]),
            {"method": "harvest"},
            InvalidValueError,
            "ranker 'A' shows {'query_id': 1, 'doc_id': 'a'} at ranks 1 and 3: intervention "
            "harvesting reads each ranker as a function of the query (Agarwal et al. 2019); "
            "give each version of a ranker its own 'ranker' value",
        ),
        (
            # rank 3 is shown by ranker A only: no interventional set reaches it
            pl.concat(
                [LOG, pl.DataFrame({"ranker": ["A"], "query_id": [1], "doc_id": ["c"]})],
                how="diagonal",
            ).with_columns(pl.col("rank").fill_null(3), pl.col("clicked").fill_null(1)),
            {"method": "harvest"},
            InvalidValueError,
            "position(s) 3 of the log are in no interventional set that reaches position 1 "
            "(no document of a query shown there by one ranker and at a linked position by "
            "another, per 'ranker'): their propensity is not identified; log more rankers, or "
            "keep the ranks you can estimate, e.g. log.filter(pl.col('rank') <= K)",
        ),
        (
            LOG.with_columns(pl.Series("clicked", [1, 0, 1, 0])),
            {"method": "harvest"},
            InvalidValueError,
            "position(s) 2 have no click in their interventional sets: the estimate of their "
            "propensity would be 0, which no propensity-weighted estimator can divide by; log "
            "more clicks there, or keep the ranks above, e.g. log.filter(pl.col('rank') <= K)",
        ),
        (
            LOG.with_columns(pl.Series("ranker", ["A", "A", None, "B"])),
            {"method": "harvest"},
            InvalidValueError,
            "column 'ranker' of the log has 1 null value(s); every row names the ranker that "
            "showed it: fill or drop them, e.g. log.drop_nulls('ranker')",
        ),
        (
            LOG.with_columns(pl.col("rank") + 1),
            {"method": "harvest"},
            InvalidValueError,
            "the log shows no document at rank 1 (its ranks start at 2): the propensities are "
            "relative to the top, p_k / p_1; log the whole ranking from rank 1",
        ),
        (
            LOG.head(0),
            {"method": "harvest"},
            InvalidValueError,
            "the log has no row: intervention harvesting needs the rankings of two rankers "
            "or more",
        ),
        (
            LOG.filter(pl.col("ranker") == "A"),
            {"method": "harvest"},
            InvalidValueError,
            "position(s) 2 of the log are in no interventional set",
        ),
    ],
)
def test_bad_harvest_logs_are_refused(
    log: pl.DataFrame, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        irm.position_bias(log, **kwargs)
