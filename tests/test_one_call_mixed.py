"""The exposure measures beside the accuracy and beyond-accuracy metrics in one call
(issue 42): one lazy plan whose values equal the separate calls' bit for bit, per query
joined on the query id, the summary one row with the metrics in the order given; the
refusals of a table no metric reads stay; irm.compare and the CLI follow."""

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
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError

from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]

EXPOSURE = [
    "ee_loss",
    "ee_disparity(browsing='rbp')",
    "ee_relevance(patience=0.8)",
    "awrf",
    "awrf_ndcg",
    "rnd",
    "rkl",
    "rrd",
]
OFFLINE = ["ndcg@10", "P@5", "map", "recall@10"]
RECSYS = ["catalog_coverage@10", "novelty@10", "gini_index@10"]


def _tables(seed: int) -> dict[str, pl.DataFrame]:
    """A random run (8 users, up to 12 of 30 items each, some users unjudged), judgments
    graded 0-2, training interactions for every item and 3 groups (some items in two)."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(8):
        items = rng.choice(30, size=int(rng.integers(1, 13)), replace=False)
        rows += [(f"u{user}", f"i{item}", rank) for rank, item in enumerate(items, 1)]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank"], orient="row")
    judged = run.sample(fraction=0.4, seed=seed).select("query_id", "doc_id")
    extra = pl.DataFrame(
        {
            "query_id": [f"u{u}" for u in rng.integers(0, 10, 6)],
            "doc_id": [f"i{i}" for i in rng.integers(0, 30, 6)],
        }
    )
    pairs = pl.concat([judged, extra]).unique(maintain_order=True)
    qrels = pairs.with_columns(relevance=pl.Series(rng.integers(0, 3, len(pairs)), dtype=pl.Int64))
    items = [f"i{i}" for i in range(30)]
    groups = pl.concat(
        [
            pl.DataFrame({"doc_id": items, "group": [f"g{i % 3}" for i in range(30)]}),
            pl.DataFrame({"doc_id": ["i0", "i1", "i3", "i4"], "group": ["g2"] * 4}),
        ]
    )
    interactions = pl.DataFrame(
        {
            "query_id": [f"u{u}" for u in rng.integers(0, 20, 60)] + ["u0"] * 30,
            "doc_id": [f"i{i}" for i in rng.integers(0, 30, 60)] + items,
        }
    )
    target = pl.DataFrame({"group": ["g0", "g1", "g2"], "target": [0.5, 0.25, 0.25]})
    return {
        "run": run,
        "qrels": qrels,
        "groups": groups,
        "interactions": interactions,
        "target": target,
    }


def _call(frame_kind: str, run: pl.DataFrame, metrics: list[str], **kw: Any) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        kw = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kw.items()}
        out = irm.evaluate(run.lazy(), metrics, **kw)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(run, metrics, **kw)
    assert isinstance(result, pl.DataFrame)
    return result


def _mix(*parts: list[str]) -> list[str]:
    """The metrics of ``parts`` interleaved (a, x, b, y...), so the order given is not
    the routes' order."""
    out: list[str] = []
    longest = max(len(p) for p in parts)
    for i in range(longest):
        out += [p[i] for p in parts if i < len(p)]
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_summary_equals_the_separate_calls(frame_kind: str, seed: int) -> None:
    t = _tables(seed)
    metrics = _mix(EXPOSURE, OFFLINE)
    together = _call(
        frame_kind, t["run"], metrics, qrels=t["qrels"], groups=t["groups"], target=t["target"]
    )
    exposure = _call(
        frame_kind, t["run"], EXPOSURE, qrels=t["qrels"], groups=t["groups"], target=t["target"]
    )
    offline = _call(frame_kind, t["run"], OFFLINE, qrels=t["qrels"])
    assert together.columns == ["num_q", "num_q_exposure", *metrics]
    # num_q: the accuracy metrics' count of judged queries; num_q_exposure: the exposure
    # measures' own (their means are over those queries)
    expected = pl.concat([offline, exposure.rename({"num_q": "num_q_exposure"})], how="horizontal")
    assert_frame_equal(together, expected.select(together.columns), check_exact=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_query_rows_are_joined_on_the_query(frame_kind: str, seed: int) -> None:
    t = _tables(seed)
    metrics = _mix(OFFLINE, EXPOSURE)
    kw = {"groups": t["groups"], "target": t["target"], "per_query": True}
    together = _call(frame_kind, t["run"], metrics, qrels=t["qrels"], **kw)
    exposure = _call(frame_kind, t["run"], EXPOSURE, qrels=t["qrels"], **kw)
    offline = _call(frame_kind, t["run"], OFFLINE, qrels=t["qrels"], per_query=True)
    assert together.columns == ["query_id", *metrics]
    expected = offline.join(exposure, on="query_id", how="full", coalesce=True)
    assert_frame_equal(
        together.sort("query_id"),
        expected.select(together.columns).sort("query_id"),
        check_exact=True,
    )
    # every query of either side has its row, once
    assert together.get_column("query_id").n_unique() == together.height
    assert set(together.get_column("query_id")) == set(offline["query_id"]) | set(
        exposure["query_id"]
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_with_the_beyond_accuracy_metrics(frame_kind: str, seed: int) -> None:
    t = _tables(seed)
    metrics = _mix(RECSYS, EXPOSURE, OFFLINE)
    tables = {"groups": t["groups"], "target": t["target"], "interactions": t["interactions"]}
    together = _call(frame_kind, t["run"], metrics, qrels=t["qrels"], **tables)
    exposure = _call(
        frame_kind, t["run"], EXPOSURE, qrels=t["qrels"], groups=t["groups"], target=t["target"]
    )
    rest = _call(
        frame_kind, t["run"], [*OFFLINE, *RECSYS], qrels=t["qrels"], interactions=t["interactions"]
    )
    assert together.columns == ["num_q", "num_q_exposure", *metrics]
    expected = pl.concat([rest, exposure.rename({"num_q": "num_q_exposure"})], how="horizontal")
    assert_frame_equal(together, expected.select(together.columns), check_exact=True)


def test_beyond_accuracy_and_rnd_alone_keep_the_exposure_count(frame_kind: str) -> None:
    # no accuracy metric: the recommendation table's metrics have no num_q, the
    # exposure measures' is kept
    t = _tables(5)
    metrics = ["rnd", "catalog_coverage@10", "rkl"]
    together = _call(
        frame_kind, t["run"], metrics, groups=t["groups"], interactions=t["interactions"]
    )
    alone = _call(frame_kind, t["run"], ["rnd", "rkl"], groups=t["groups"])
    coverage = _call(frame_kind, t["run"], ["catalog_coverage@10"], interactions=t["interactions"])
    assert together.columns == ["num_q", *metrics]
    expected = pl.concat([alone, coverage], how="horizontal").select(together.columns)
    assert_frame_equal(together, expected, check_exact=True)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), exposure=st.sets(st.sampled_from(EXPOSURE), min_size=1))
def test_any_mix_equals_the_separate_calls_bit_for_bit(seed: int, exposure: set[str]) -> None:
    # random tables and a random subset of the exposure measures beside two accuracy
    # metrics, per query: each value the separate call's, to the last bit
    t = _tables(seed)
    chosen = [m for m in EXPOSURE if m in exposure]
    judged = any(not m.startswith(("rnd", "rkl", "rrd")) for m in chosen)
    kw: dict[str, Any] = {"groups": t["groups"], "per_query": True}
    if any(m.startswith("awrf") for m in chosen):
        kw["target"] = t["target"]
    together = irm.evaluate(t["run"], [*chosen, "ndcg@10", "P@5"], qrels=t["qrels"], **kw)
    alone = irm.evaluate(t["run"], chosen, **({"qrels": t["qrels"]} if judged else {}), **kw)
    offline = irm.evaluate(t["run"], ["ndcg@10", "P@5"], qrels=t["qrels"], per_query=True)
    expected = offline.join(alone, on="query_id", how="full", coalesce=True)
    assert_frame_equal(
        together.sort("query_id"),
        expected.select(together.columns).sort("query_id"),
        check_exact=True,
    )


def test_a_lazy_call_computes_nothing_before_collect() -> None:
    t = _tables(0)
    plan = irm.evaluate(
        t["run"].lazy().filter(pl.col("rank") > 0),
        ["ndcg@10", "ee_loss", "rnd"],
        qrels=t["qrels"].lazy(),
        groups=t["groups"].lazy(),
    )
    assert isinstance(plan, pl.LazyFrame)
    assert plan.collect_schema().names() == [
        "num_q",
        "num_q_exposure",
        "ndcg@10",
        "ee_loss",
        "rnd",
    ]


def test_worked_example() -> None:
    # q: b (relevant, group g1) at 1, a (relevant, g2) at 2, x (g2) at 3. ndcg@10:
    # (1 + 1/log2(3)) / (1 + 1/log2(3)) = 1. ee_relevance (rbp, patience 0.5, groups):
    # target per relevant doc (1 + 0.5) / 2 = 0.75; run b 1, a 0.5, so g1 0.75 * 1 and
    # g2 0.75 * 0.5 (x not relevant: left out): 0.75 + 0.375 = 1.125
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["b", "a", "x"], "rank": [1, 2, 3]})
    qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    groups = pl.DataFrame({"doc_id": ["a", "b", "x"], "group": ["g2", "g1", "g2"]})
    out = irm.evaluate(
        run, ["ee_relevance(browsing='rbp')", "ndcg@10"], qrels=qrels, groups=groups
    )
    assert out.rows() == [(1, 1, 0.75 * 1 + 0.75 * 0.5, 1.0)]  # num_q, num_q_exposure


REFUSED = [
    (
        "groups= without an exposure metric",
        ["ndcg@10", "P@5"],
        {"groups": True},
        MetricParameterError,
        "groups= holds the document groups the exposure measures",
    ),
    (
        "target= beside exposure measures that do not read it",
        ["ndcg@10", "ee_loss"],
        {"groups": True, "qrels": True, "target": True},
        MetricParameterError,
        "target= holds the target group distribution awrf and awrf_ndcg read, and no "
        "metric asked for reads it: drop target=",
    ),
    (
        "judgments no metric reads",
        ["rnd", "catalog_coverage@10"],
        {"groups": True, "qrels": True, "interactions": True},
        MetricParameterError,
        "rnd, rkl and rrd read the run and groups= only, and no metric asked for reads "
        "the judgments: drop qrels=",
    ),
    (
        "a table of another route",
        ["ndcg@10", "ee_loss"],
        {"groups": True, "qrels": True, "reference": True},
        InvalidValueError,
        "reference= is not read by the exposure measures",
    ),
    (
        "the expected-exposure measures without judgments",
        ["catalog_coverage@10", "ee_loss"],
        {"groups": True, "interactions": True},
        MetricParameterError,
        "the expected-exposure measures read relevance judgments: pass qrels=...",
    ),
    (
        "a route that reads other tables",
        ["ee_loss", "auc"],
        {"groups": True, "qrels": True},
        MetricParameterError,
        "metrics 'ee_loss' and 'auc' are computed from different tables",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("metrics", "given", "error", "message"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_refusals_stay_whatever_the_mix(
    frame_kind: str,
    metrics: list[str],
    given: dict[str, bool],
    error: type[Exception],
    message: str,
) -> None:
    t = _tables(0)
    t["reference"] = t["run"]
    kw = {name: t[name] for name in given}
    with pytest.raises(error, match=re.escape(message)):
        _call(frame_kind, t["run"], metrics, **kw)


def test_by_and_compare_are_in_test_exposure_by() -> None:
    # by=/systems= beside the exposure measures and irm.compare(..., groups=) are
    # tested in tests/test_exposure_by.py; here only that a mixed call with by= runs
    t = _tables(0)
    run = t["run"].with_columns(segment=pl.lit("s"))
    out = irm.evaluate(
        run, ["ndcg@10", "ee_loss"], qrels=t["qrels"], groups=t["groups"], by="segment",
        unretrieved="drop",
    )  # fmt: skip
    assert out.columns == ["segment", "num_q", "num_q_exposure", "ndcg@10", "ee_loss"]


def test_cli_puts_them_in_one_call(tmp_path: Path) -> None:
    t = _tables(1)
    for name in ("run", "qrels", "groups", "target"):
        t[name].write_parquet(tmp_path / f"{name}.parquet")
    metrics = ["ndcg@10", "ee_loss", "P@5", "awrf", "rnd"]
    done = irm_in_process(
        "evaluate", "run.parquet", "--qrels", "qrels.parquet", "--groups", "groups.parquet",
        "--target", "target.parquet", *(a for m in metrics for a in ("-m", m)), "--per-query",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    expected = irm.evaluate(
        t["run"], metrics, qrels=t["qrels"], groups=t["groups"], target=t["target"], per_query=True
    )
    assert list(rows[0]) == ["query_id", *metrics]
    by_query = {r["query_id"]: r for r in rows}
    for row in expected.iter_rows(named=True):
        got = by_query[row["query_id"]]
        for m in metrics:  # JSON keeps a float's shortest repr: the same double
            if row[m] is None or np.isnan(row[m]):  # JSON has no NaN: null
                assert got[m] is None, (row, got, m)
            else:
                assert got[m] == row[m], (row, got, m)


def test_the_exposure_measures_own_count_is_beside_num_q(frame_kind: str) -> None:
    # query b is judged (nDCG counts it, 0) but has no relevant document, so the expected
    # exposure measures cannot score it: their mean is over query a alone, and the
    # summary says so instead of showing one num_q for both means
    run = pl.DataFrame({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"], "rank": [1, 2, 1]})
    qrels = pl.DataFrame({"query_id": ["a", "b"], "doc_id": ["x", "z"], "relevance": [1, 0]})
    groups = pl.DataFrame({"doc_id": ["x", "y", "z"], "group": ["g1", "g2", "g1"]})
    out = _call(frame_kind, run, ["ndcg@10", "ee_loss"], qrels=qrels, groups=groups)
    assert out.columns == ["num_q", "num_q_exposure", "ndcg@10", "ee_loss"]
    assert out.row(0)[:3] == (2, 1, (1.0 + 0.0) / 2)
