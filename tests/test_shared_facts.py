"""The counts per ranking every route's checks read (a document listed twice, a rank
held twice, the rankings' lengths and whether their ranks run 1..n): where the accuracy
metrics and the exposure measures check one run in one call, the door builds them once
(:class:`~polars_irmetrics.ground.facts.SharedFacts`) and the plan holds one group-by of
the run for both; the values and the refusals are those of the separate calls."""

from __future__ import annotations

import itertools
import re
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError
from polars_irmetrics.ground.facts import LENGTH
from polars_irmetrics.metrics.requests import INPUTS
from tests.test_exposure_by import _call

OFFLINE = [
    "ndcg@10",
    "P@5",
    "num_ret",
    "covered_users@1",
    "partial_auc(insufficient_handling='exclude')@3",
]
EXPOSURE = ["ee_loss", "awrf", "rnd"]


def _tables(seed: int, *, query_dtype: Any = pl.Int64, by_score: bool = False) -> dict[str, Any]:
    """Integer ids: 6 queries ranking up to 25 of 40 documents (ranks 1..n, or with
    gaps, or scores), judgments for some queries, two groups."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(6):
        docs = rng.choice(40, size=int(rng.integers(1, 26)), replace=False)
        step = 1 + q % 2  # odd queries ranked 2, 4, 6...: gaps
        rows += [(q, int(d), r * step) for r, d in enumerate(docs, 1)]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank"], orient="row")
    run = run.with_columns(pl.col("query_id").cast(query_dtype))
    if by_score:
        run = run.with_columns((100.0 - pl.col("rank")).alias("score")).drop("rank")
    # some of the run's rows, and a document no query retrieved (RecTools' insufficient
    # users: more liked than found)
    unretrieved = pl.DataFrame({"query_id": list(range(6)), "doc_id": [99] * 6})
    qrels = pl.concat(
        [
            run.sample(fraction=0.3, seed=seed).select(
                pl.col("query_id").cast(pl.Int64), "doc_id"
            ),
            unretrieved,
        ]
    ).with_columns(relevance=pl.lit(1, pl.Int64))
    groups = pl.DataFrame({"doc_id": list(range(40)), "group": [d % 2 for d in range(40)]})
    return {"run": run, "qrels": qrels, "groups": groups}


def _facts_group_bys(plan: pl.LazyFrame) -> int:
    """The distinct group-bys of the counts per ranking in the optimized plan (a cached
    one is printed under each reader, with its cache's id)."""
    lines = plan.explain().splitlines()
    found = set()
    for i, line in enumerate(lines):
        if f'len().alias("{LENGTH}")' in line:
            above = next(
                (re.search(r"CACHE\[id: ([0-9a-f-]+)", lines[j]) for j in (i - 1, i - 2)), None
            )
            found.add(above.group(1) if above else f"line {i}")
    return len(found)


def test_one_group_by_of_the_rankings_for_both_routes() -> None:
    t = _tables(0)
    both = irm.evaluate(
        t["run"].lazy(), [*OFFLINE, *EXPOSURE], qrels=t["qrels"].lazy(), groups=t["groups"].lazy()
    )
    assert _facts_group_bys(both) == 1
    # each route alone reads its own
    exposure = irm.evaluate(
        t["run"].lazy(), EXPOSURE, qrels=t["qrels"].lazy(), groups=t["groups"].lazy()
    )
    assert _facts_group_bys(exposure) == 1


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    query_dtype=st.sampled_from([pl.Int64, pl.Int32]),
    by_score=st.booleans(),
)
@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_the_values_of_the_separate_calls(
    kind: str, seed: int, query_dtype: Any, by_score: bool
) -> None:
    # the query ids of the run narrower than the judgments' (each route casts them):
    # the shared counts are cast to each route's ids; by score, num_ret and the
    # checks read the score column
    t = _tables(seed, query_dtype=query_dtype, by_score=by_score)
    kw = {"qrels": t["qrels"], "per_query": True}
    together = _call(kind, t["run"], [*OFFLINE, *EXPOSURE], groups=t["groups"], **kw)
    offline = _call(kind, t["run"], OFFLINE, **kw)
    exposure = _call(kind, t["run"], EXPOSURE, groups=t["groups"], **kw)
    expected = offline.join(exposure, on="query_id", how="full", coalesce=True)
    assert_frame_equal(
        together.sort("query_id"),
        expected.select(together.columns).sort("query_id"),
        check_exact=True,
    )


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("doubled", ["doc_id", "rank"])
def test_the_refusals_of_the_separate_calls(kind: str, doubled: str) -> None:
    # query 0 lists its first document again at a new rank, or a new document at rank
    # 1: each route alone refuses it with the one message (the exposure measures check
    # the run as the accuracy metrics do), and the call of both routes likewise
    t = _tables(1)
    first = t["run"].filter(pl.col("query_id") == 0).head(1)
    extra = first.with_columns(
        pl.col("rank") + 100 if doubled == "doc_id" else pl.col("doc_id") + 1000
    )
    bad = pl.concat([t["run"], extra])
    alone = []
    for metrics, kw in ((OFFLINE, {}), (EXPOSURE, {"groups": t["groups"]})):
        with pytest.raises(DuplicateError) as error:
            _call(kind, bad, metrics, qrels=t["qrels"], **kw)
        alone.append(str(error.value))
    assert alone[0] == alone[1]
    with pytest.raises(DuplicateError) as together:
        _call(kind, bad, [*OFFLINE, *EXPOSURE], qrels=t["qrels"], groups=t["groups"])
    assert str(together.value) in alone
    assert "query 0" in str(together.value) or "query '0'" in str(together.value)


def _distinct_passes(plan: pl.LazyFrame, column: str) -> int:
    """The distinct-value passes of the run's ``column`` in the optimized plan (a
    cached one is printed once, its readers naming its id)."""
    lines = plan.explain().splitlines()
    return sum(
        "UNIQUE" in line and f'PROJECT["{column}"] 1/3' in below
        for line, below in itertools.pairwise(lines)
    )


def test_one_pass_of_the_run_for_every_routes_tallies() -> None:
    # How groups=, interactions=, item_features= and Elliot's clusters line up with the
    # run's documents and users is counted by each route (the exposure measures, the
    # accuracy and Elliot metrics, the recommendation-table metrics), and Elliot's
    # metrics read the run's users: the door gives them the run's distinct ids once
    # (SharedIds), one pass of the run each. The warnings are the separate calls'.
    tables = _tables(3)
    run = tables["run"]
    # each table holds fewer than half of the run's documents (or users): warned of
    interactions = run.filter(pl.col("doc_id") < 12).select("query_id", "doc_id")
    features = pl.DataFrame({"doc_id": list(range(12)), "genre": [d % 3 for d in range(12)]})
    given = {
        "qrels": tables["qrels"].lazy(),
        "groups": tables["groups"].filter(pl.col("doc_id") < 12).lazy(),
        "interactions": interactions.lazy(),
        "item_features": features.lazy(),
    }
    metrics = ["ndcg@10", "rnd", "pop_rsp@5", "item_mad@5", "catalog_coverage@5",
               "categorical_diversity(category='genre')@5"]  # fmt: skip
    plan = irm.evaluate(run.lazy(), metrics, **given, unseen_items="drop")
    # the documents: one pass; the users: the rows of the counts per ranking (above),
    # which the accuracy metrics and the exposure measures read too, no pass of their own
    assert (_distinct_passes(plan, "doc_id"), _distinct_passes(plan, "query_id")) == (1, 0)
    assert _facts_group_bys(plan) == 1
    with pytest.warns(irm.CoverageWarning) as together:
        values = plan.collect()
    # DataFrames in, the one plan collected at the door: the same values and warnings
    frames = {name: table.collect() for name, table in given.items()}
    with pytest.warns(irm.CoverageWarning) as eager:
        got = irm.evaluate(run, metrics, **frames, unseen_items="drop")
    assert_frame_equal(got, values)
    assert {str(w.message) for w in eager} == {str(w.message) for w in together}
    # one warning per table and call: the groups (rND's, naming MAD's effect too), the
    # interactions (the recommendations'), the item features
    # (the coverage warnings: rnd's own word on its NaN queries, an IrmWarning, is
    # tests/test_stat_round17.py's)
    said = {str(w.message) for w in together if w.category is irm.CoverageWarning}
    assert sorted(m.split("=")[0] for m in said) == ["groups", "interactions", "item_features"]
    apart: set[str] = set()
    for metric in metrics:
        parsed = irm.parse_metric(metric).metric
        alone = {INPUTS[r][1]: given[INPUTS[r][1]] for r in parsed.reads if r in INPUTS}
        options = {"unseen_items": "drop"} if parsed.route == "recsys" else {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            irm.evaluate(run.lazy(), [metric], **alone, **options).collect()
        apart |= {str(w.message) for w in caught if w.category is irm.CoverageWarning}
    # the separate calls' words, but groups= once: the exposure measures' text, which
    # names item_mad's effect
    (merged,) = said - apart
    assert merged.startswith("groups= holds only 11 of the 35 documents of the run")
    assert ", and item_mad@5 reads it in no cluster's mean" in merged
    assert said - {merged} <= apart
