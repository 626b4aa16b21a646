"""The one door: group keys that mean what users mean, routing by what a metric reads,
one options object."""

from __future__ import annotations

import math
import re

import pandas
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError, QuerySetError

LAZY = [pytest.param(False, id="DataFrame"), pytest.param(True, id="LazyFrame")]


def _segmented(n: int = 60, mobile: int = 20) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run of ``n`` queries, the first ``mobile`` on mobile, the rest on desktop; each
    retrieves three documents, its relevant one at rank 1 + (i % 4) (rank 4: missed).
    The judgments have no segment column."""
    rows = []
    qrels = []
    for i in range(n):
        q = f"q{i:02d}"
        segment = "mobile" if i < mobile else "desktop"
        for r, d in enumerate(["a", "b", "c"], start=1):
            rows.append((q, f"{q}{d}", r, segment))
        qrels.append((q, f"{q}{'abcx'[i % 4]}", 1))
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "segment"], orient="row")
    judgments = pl.DataFrame(qrels, schema=["query_id", "doc_id", "relevance"], orient="row")
    return run, judgments


def _maybe_lazy(frame: pl.DataFrame, lazy: bool) -> pl.DataFrame | pl.LazyFrame:
    return frame.lazy() if lazy else frame


def _collect(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


@pytest.mark.parametrize("lazy", LAZY)
def test_a_run_only_attribute_with_unretrieved_judged_queries_is_refused(lazy: bool) -> None:
    # The case: desktop's judged queries would count as zeros in mobile's mean.
    run, qrels = _segmented()
    # the cause is that the judgments do not place a judged query in a group, not that
    # 60 (query, group) pairs were "not retrieved" (q00 is a mobile query, not a desktop
    # one the run missed)
    message = (
        "by key 'segment' is in the run but not in the judgments: the judgments do not say "
        "which 'segment' each judged query belongs to, so 60 judged queries that some of "
        "the 2 groups did not retrieve cannot be placed (e.g. query 'q00': the run lists it "
        "under segment='mobile', and the judgments cannot tell whether it belongs to the "
        "other groups too). If 'segment' is an attribute of the query (day, market, "
        "segment), give each judged query its 'segment': with queries= (a table of query "
        "ids and 'segment', e.g. queries=run.select('query_id', 'segment').unique()), or in "
        "a 'segment' column of the judgments; if it names systems or runs (each scored on "
        "every judged query), pass systems='segment' instead of by=; or pass "
        "unretrieved='drop' to score each group on the queries it retrieved"
    )
    with pytest.raises(QuerySetError, match=re.escape(message)):
        _collect(irm.evaluate(_maybe_lazy(run, lazy), ["ndcg@10"], qrels=qrels, by="segment"))


@pytest.mark.parametrize("lazy", LAZY)
@pytest.mark.parametrize("source", ["queries", "judgments", "drop"])
def test_each_judged_query_counts_in_its_own_group(lazy: bool, source: str) -> None:
    run, qrels = _segmented()
    segments = run.select("query_id", "segment").unique()
    kwargs: dict[str, object] = {}
    if source == "queries":
        kwargs["queries"] = _maybe_lazy(segments, lazy)
    elif source == "judgments":
        qrels = qrels.join(segments, on="query_id")
    else:
        kwargs["unretrieved"] = "drop"
    out = _collect(
        irm.evaluate(
            _maybe_lazy(run, lazy), ["ndcg@10", "P@1"], qrels=qrels, by="segment", **kwargs
        )
    ).sort("segment")
    # the reference: each segment evaluated on its own queries alone
    for segment, n in (("desktop", 40), ("mobile", 20)):
        alone = run.filter(pl.col("segment") == segment).drop("segment")
        judged = qrels.join(alone.select("query_id").unique(), on="query_id", how="semi")
        expected = irm.evaluate(alone, ["ndcg@10", "P@1"], qrels=judged.select(qrels.columns[:3]))
        row = out.filter(pl.col("segment") == segment)
        assert row["num_q"].item() == n
        assert row["ndcg@10"].item() == expected["ndcg@10"].item()
        assert row["P@1"].item() == expected["P@1"].item()
    # desktop by hand: ranks 1, 2, 3 and missed in turn, nDCG 1, 1/log2(3), 1/2, 0
    assert math.isclose(
        out.filter(pl.col("segment") == "desktop")["ndcg@10"].item(),
        (1 + 1 / math.log2(3) + 1 / 2 + 0) / 4,
        rel_tol=1e-12,
    )


@pytest.mark.parametrize("lazy", LAZY)
def test_systems_are_scored_on_every_judged_query(lazy: bool) -> None:
    run, qrels = _segmented()
    out = _collect(
        irm.evaluate(_maybe_lazy(run, lazy), ["P@1"], qrels=qrels, systems="segment")
    ).sort("segment")
    assert out["num_q"].to_list() == [60, 60]
    # each "system" finds its own queries' relevant document at rank 1 a quarter of the
    # time, and scores 0 on the queries it did not retrieve
    assert out["P@1"].to_list() == [10 / 60, 5 / 60]


def test_a_key_every_group_retrieves_fully_needs_no_declaration() -> None:
    run, qrels = _segmented(n=8, mobile=8)
    both = pl.concat([run, run.with_columns(pl.lit("desktop").alias("segment"))])
    out = irm.evaluate(both, ["P@1"], qrels=qrels, by="segment").sort("segment")
    assert out.rows() == [("desktop", 8, 0.25), ("mobile", 8, 0.25)]


def test_queries_table_missing_a_judged_query_is_refused() -> None:
    run, qrels = _segmented(n=4, mobile=2)
    queries = run.select("query_id", "segment").unique().filter(pl.col("query_id") != "q03")
    message = "query 'q03' has no 'segment' in queries=: give every query of the run and the"
    with pytest.raises(QuerySetError, match=re.escape(message)):
        irm.evaluate(run.drop("segment"), ["P@1"], qrels=qrels, by="segment", queries=queries)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"by": ["day", "day"]}, InvalidValueError, "by lists 'day' twice; list each key once"),
        (
            {"by": "day", "systems": "day"},
            InvalidValueError,
            "'day' is in both systems= and by=;",
        ),
        ({"by": "query_id"}, InvalidValueError, "by=['query_id'] names 'query_id'"),
        (
            {"query_id": "id", "doc_id": "id"},
            InvalidValueError,
            "query_id='id' and doc_id='id' name the same column; each needs its own column: "
            "pass doc_id= with the name of the doc_id column",
        ),
        (
            {"relevance_level": float("nan")},
            InvalidValueError,
            "relevance_level=nan is not a finite number",
        ),
        ({"cutoff": 3}, InvalidValueError, "unknown option cutoff=...; the options are"),
        ({"by": 3}, InvalidValueError, "by must be a column name or a list of column names"),
    ],
)
def test_options_wrong_whatever_the_data_are_refused(
    options: dict[str, object], error: type[Exception], message: str
) -> None:
    run, qrels = _segmented(n=2)
    with pytest.raises(error, match=re.escape(message)):
        irm.evaluate(run.lazy(), ["P@1"], qrels=qrels, **options)  # type: ignore[arg-type]


# --- routing: every kind of metric through irm.evaluate -----------------------------


def _prefs() -> tuple[pl.DataFrame, pl.DataFrame]:
    prefs = pl.DataFrame(
        {
            "query_id": ["q1"] * 3,
            "jg": ["u"] * 3,
            "jsg": ["s"] * 3,
            "doc_id": ["a", "b", "c"],
            "rel_level": [2.0, 1.0, 0.0],
        }
    )
    run = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["b", "a", "c"], "score": [3.0, 2, 1]})
    return run, prefs


@pytest.mark.parametrize("lazy", LAZY)
def test_preference_measures_through_the_door(lazy: bool) -> None:
    run, prefs = _prefs()
    out = irm.evaluate(_maybe_lazy(run, lazy), ["prefs_simp"], prefs=prefs, per_query=True)
    assert isinstance(out, pl.LazyFrame) is lazy
    # a > b > c preferred; the run ranks b, a, c: a > c and b > c fulfilled, 2 of 3
    assert _collect(out).rows() == [("q1", 2 / 3)]
    assert irm.evaluate(run, "prefs_simp", prefs=prefs).rows() == [(1, 2 / 3)]
    assert irm.evaluate_prefs(run, ["prefs_simp"], prefs=prefs).rows() == [("q1", 2 / 3)]
    thin = irm.evaluate_prefs(_maybe_lazy(run, lazy), "prefs_simp", prefs=prefs, per_query=False)
    assert isinstance(thin, pl.LazyFrame) is lazy
    assert _collect(thin).rows() == [(1, 2 / 3)]


@pytest.mark.parametrize("lazy", LAZY)
def test_judgment_group_measures_through_the_door(lazy: bool) -> None:
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    groups = pl.DataFrame(
        {
            "query_id": ["q1"] * 4,
            "jg": ["alice", "alice", "bob", "bob"],
            "doc_id": ["d1", "d2", "d1", "d2"],
            "relevance": [1, 0, 0, 1],
        }
    )
    # alice: AP 1; bob: AP 1/2
    out = irm.evaluate(_maybe_lazy(run, lazy), ["map_avgjg"], qrels_jg=groups, per_query=True)
    assert _collect(out).rows() == [("q1", 0.75)]
    assert irm.evaluate_jg(run, "map_avgjg", qrels_jg=groups).rows() == [("q1", 0.75)]
    # the thin door's means are the door's: the same running sum, the same num_q
    door = irm.evaluate(run, ["map_avgjg"], qrels_jg=groups)
    thin = irm.evaluate_jg(_maybe_lazy(run, lazy), "map_avgjg", qrels_jg=groups, per_query=False)
    assert _collect(thin).rows() == door.rows() == [(1, 0.75)]


@pytest.mark.parametrize("lazy", LAZY)
def test_click_metrics_through_the_door(lazy: bool) -> None:
    log = pl.DataFrame(
        {
            "session": ["s1", "s1", "s2", "s2"],
            "position": [1, 2, 1, 2],
            "clicked": [False, True, False, False],
        }
    )
    out = irm.evaluate(
        _maybe_lazy(log, lazy), ["ctr@2", "abandonment"], query_id="session", rank="position"
    )
    # one click in four impressions; s2 has no click
    assert _collect(out).rows() == [(2, 0.25, 0.5)]


@pytest.mark.parametrize(
    ("metrics", "kwargs", "message"),
    [
        (
            ["prefs_simp"],
            {},
            "metric 'prefs_simp' reads preference judgments: pass prefs=... to irm.evaluate",
        ),
        (
            ["map_avgjg"],
            {},
            "metric 'map_avgjg' reads judgments with a judgment-group column: pass qrels_jg=...",
        ),
        (["novelty"], {}, "metric 'novelty' reads the interaction history (where item"),
        (
            ["ndcg@10", "ctr@10"],
            {"qrels": pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]})},
            "metrics 'ndcg@10' and 'ctr@10' are computed from different tables (offline: a "
            "run and judgments; online: an impression log): evaluate them in two calls",
        ),
    ],
)
def test_a_metric_whose_table_is_missing_names_the_keyword(
    metrics: list[str], kwargs: dict[str, object], message: str
) -> None:
    run, _ = _prefs()
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        irm.evaluate(run, metrics, **kwargs)  # type: ignore[arg-type]


def test_compare_takes_evaluates_keywords_and_pandas() -> None:
    runs = {
        name: pandas.DataFrame(
            {"qid": ["1", "2", "3"], "docno": ["a", "a", "a"], "rank": [1, 1, 1]}
        )
        for name in ("x", "y")
    }
    qrels = pandas.DataFrame(
        {"qid": ["1", "2", "3"], "docno": ["a", "a", "b"], "label": [1, 1, 1]}
    )
    out = irm.compare(
        runs, ["P@1"], qrels=qrels, query_id="qid", doc_id="docno", relevance="label"
    )
    assert out.select("system", "baseline", "n", "mean", "delta").rows() == [
        ("y", "x", 3, 2 / 3, 0.0)
    ]
    with pytest.raises(InvalidValueError, match=re.escape("compare sets by= itself")):
        irm.compare(runs, ["P@1"], qrels=qrels, by="day")  # type: ignore[call-arg]


@pytest.mark.parametrize("lazy", LAZY)
def test_beyond_accuracy_options_through_the_door(lazy: bool) -> None:
    # a cold item: refused by default, Recommenders' convention when asked (novelty 0,
    # its row still counted; coverage 1 of the 3 catalogue items), as beyond_accuracy
    recs = pl.DataFrame({"query_id": [1], "doc_id": ["z"], "rank": [1]})
    history = pl.DataFrame({"query_id": [1, 2, 2, 3], "doc_id": ["c", "a", "b", "a"]})
    with pytest.raises(irm.InvalidValueError, match="never occurs in the interactions"):
        _collect(irm.evaluate(_maybe_lazy(recs, lazy), ["novelty"], interactions=history))
    out = irm.evaluate(
        _maybe_lazy(recs, lazy),
        ["novelty", "coverage"],
        interactions=history,
        unseen_items="recommenders",
    )
    assert _collect(out).rows() == [(0.0, 1 / 3)]
    with pytest.raises(irm.InvalidValueError, match=re.escape("unseen_items='zero' is not")):
        irm.evaluate(recs, ["map"], qrels=recs.with_columns(relevance=1), unseen_items="zero")


@pytest.mark.parametrize("lazy", LAZY)
def test_a_judged_query_no_group_lists_is_named_as_such(lazy: bool) -> None:
    run, qrels = _segmented(n=4, mobile=2)
    # the same two groups, but q03 is judged and retrieved by neither
    listed = run.filter(pl.col("query_id") != "q03")
    run = pl.concat(
        [listed.with_columns(pl.lit(segment).alias("segment")) for segment in ("a", "b")]
    )
    message = (
        "so 1 judged query that some of the 2 groups did not retrieve cannot be placed "
        "(e.g. query 'q03', which no group of the run lists). If 'segment' is an attribute"
    )
    with pytest.raises(QuerySetError, match=re.escape(message)):
        _collect(irm.evaluate(_maybe_lazy(run, lazy), ["P@1"], qrels=qrels, by="segment"))
