"""Round 20: the exposure measures that read the judgments (ee_loss, ee_disparity,
ee_relevance, awrf, awrf_ndcg) score no query where the judgments hold no relevant
document for the run's queries; the null mean is said in a warning (IrmWarning), on
the one plan, in buckets, and from an engine's parts, never silent."""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.exposure.rnd import undefined_part, warn_undefined_parts
from polars_irmetrics.metrics.registry import parse_metric_list

RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 4 + ["q2"] * 4,
        "doc_id": ["a", "b", "c", "d"] * 2,
        "score": [4.0, 3.0, 2.0, 1.0] * 2,
    }
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
ZERO = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [0, 0]})
NEGATIVE = ZERO.with_columns(pl.lit(-1).alias("relevance"))
OTHER_DOCS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["zz"], "relevance": [1]})
OTHER_QUERIES = pl.DataFrame({"query_id": ["q9"], "doc_id": ["a"], "relevance": [1]})
UNSCORED = "scores no query (its mean is null)"


def _warned(**kw: object) -> tuple[pl.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(RUN, **kw)  # type: ignore[call-overload]
        frame = got.collect() if isinstance(got, pl.LazyFrame) else got
    return frame, [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]


@pytest.mark.parametrize(
    ("metric", "qrels", "groups"),
    [
        ("ee_loss", ZERO, GROUPS),  # every grade 0: no relevant document
        ("ee_disparity", NEGATIVE, GROUPS),  # every grade below 0
        ("ee_relevance", ZERO, None),  # no groups=: each document its own group
        ("awrf", ZERO, GROUPS),
        ("awrf_ndcg", ZERO, GROUPS),
        # the one relevant judgment's document is in no group of groups=
        ("ee_loss", OTHER_DOCS, GROUPS),
        # judgments of a query the run lacks: awrf reads a ranking, so scores none
        ("awrf", OTHER_QUERIES, GROUPS),
    ],
)
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("buckets", [None, 2])
def test_no_relevant_judgment_is_warned(
    metric: str,
    qrels: pl.DataFrame,
    groups: pl.DataFrame | None,
    per_query: bool,
    buckets: int | None,
) -> None:
    kw: dict[str, object] = {"qrels": qrels, "per_query": per_query}
    if groups is not None:
        kw["groups"] = groups
    if buckets is not None:
        kw["buckets"] = buckets
    frame, texts = _warned(metrics=[metric], **kw)
    # no query scored: the mean is null (num_q 0), or no per-query row is left
    if per_query:
        assert frame.height == 0 or frame[metric].null_count() == frame.height
    else:
        assert frame.rows() == [(0, None)]
    said = [t for t in texts if UNSCORED in t]
    assert len(said) == 1, texts
    assert said[0].startswith(f"{metric!r} {UNSCORED}: the exposure measures that read")
    assert "relevance= names the judgments' grade column" in said[0]


def test_several_measures_are_named_once() -> None:
    _, texts = _warned(metrics=["ee_loss", "ee_disparity", "awrf"], qrels=ZERO, groups=GROUPS)
    said = [t for t in texts if "score no query" in t]
    assert said == [
        "'ee_loss', 'ee_disparity', 'awrf' score no query (their means are null): the "
        "exposure measures that read the judgments score only the queries with a "
        "relevant judgment (relevance > 0; with groups=, one whose document has a "
        "group), and the judgments hold none for the run's queries (every grade 0 or "
        "less, no relevant document in groups=, or judgments of other queries). Check "
        "that relevance= names the judgments' grade column, that the run and the "
        "judgments name the same queries and documents (same id spelling), and that "
        "groups= holds the relevant documents"
    ]


def test_beside_rnd_the_null_measures_are_named() -> None:
    # rnd scores both queries (NaN: 4 documents, no cut-off), awrf and ee_loss none
    frame, texts = _warned(metrics=["awrf", "ee_loss", "rnd"], qrels=ZERO, groups=GROUPS)
    assert frame["awrf"].to_list() == [None]
    assert frame["ee_loss"].to_list() == [None]
    assert any(t.startswith("'awrf', 'ee_loss' score no query") for t in texts), texts
    # said once: not again as "null on 2 of the 2 queries ... which 'rnd' beside score"
    assert not [t for t in texts if "null on" in t], texts


def test_a_scored_query_is_not_warned() -> None:
    # q1 has a relevant document (a, group x): every measure scores it
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    frame, texts = _warned(metrics=["ee_loss", "awrf"], qrels=qrels, groups=GROUPS)
    assert frame["num_q"].to_list() == [1]
    assert not [t for t in texts if "no query" in t]


@pytest.mark.parametrize(
    ("parts_values", "warned"),
    [
        # two parts (disjoint queries), every value null: warned, over both parts
        ([[None], [None, None]], True),
        # no part holds a row (no query scored anywhere)
        ([[], []], True),
        # one part scores a query: its mean is over that query, not warned
        ([[None], [0.5]], False),
    ],
)
def test_engine_parts_warn_as_the_one_plan(
    parts_values: list[list[float | None]], warned: bool
) -> None:
    """The Spark and Dask engines tally each partition's per-query values
    (undefined_part) and warn once from them all (warn_undefined_parts)."""
    requests = parse_metric_list(["ee_loss"])
    parts = [
        undefined_part(
            pl.DataFrame(
                {"query_id": [f"q{i}" for i in range(len(values))], "ee_loss": values},
                schema={"query_id": pl.String, "ee_loss": pl.Float64},
            ),
            requests,
            [],
            "query_id",
        )
        for values in parts_values
    ]
    said: list[str] = []
    warn_undefined_parts(parts, requests, [], "query_id", said.append)
    assert [t.startswith(f"'ee_loss' {UNSCORED}") for t in said] == ([True] if warned else [])


# q1 ranks c and d, neither in groups=: its ranking has no group distribution, so its
# awrf is NaN (wptrec's too), and the mean over q1 and q2 with it
UNGROUPED_RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["c", "d", "a", "b"], "score": [2.0, 1, 2, 1]}
)
UNGROUPED_QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]}
)


@pytest.mark.parametrize("metric", ["awrf", "awrf_ndcg"])
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("buckets", [None, 2])
def test_awrf_of_a_ranking_without_groups_is_warned(
    metric: str, per_query: bool, buckets: int | None
) -> None:
    kw: dict[str, object] = {} if buckets is None else {"buckets": buckets}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(
            UNGROUPED_RUN,
            [metric],
            qrels=UNGROUPED_QRELS,
            groups=GROUPS.head(2),  # a (x) and b (y) only
            per_query=per_query,
            **kw,  # type: ignore[arg-type]
        )
    assert isinstance(got, pl.DataFrame)
    column = got.sort(got.columns[0])[metric].to_list()
    assert math.isnan(column[0])
    if per_query:  # q2 (a at 1, b at 2; target from a: all x) is defined
        assert not math.isnan(column[1])
    said = [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]
    assert [t for t in said if "NaN on" in t] == [
        f"{metric!r} is NaN on 1 of the 2 queries (first: query_id='q1'): none of the "
        "ranking's documents has a group in groups=, so the ranking has no group "
        "distribution to compare with the target, or (without target=) none of the "
        "query's relevant documents has one, so the target has none (wptrec drops the "
        "pages without an alignment and gives NaN too), and the mean over the queries is "
        "NaN with it; give the run's documents and the relevant judged ones their groups "
        "in groups= (ids spelt as the run spells them), or leave those queries out"
    ]


def test_engine_parts_warn_of_awrf_nan_as_the_one_plan() -> None:
    requests = parse_metric_list(["awrf"])
    frames = [
        pl.DataFrame({"query_id": ["q1"], "awrf": [float("nan")]}),
        pl.DataFrame({"query_id": ["q2"], "awrf": [0.9]}),
    ]
    parts = [undefined_part(frame, requests, [], "query_id") for frame in frames]
    said: list[str] = []
    warn_undefined_parts(parts, requests, [], "query_id", said.append)
    assert [t[:56] for t in said] == ["'awrf' is NaN on 1 of the 2 queries (first: query_id='q1"]
