"""Round 21: the exposure measures say what they leave out (tests/test_exposure_round20.py
has the rounds before)."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io

# q1 ranks a (relevant, group x), b (relevant, no group), c (group y); q2 ranks a, d
# (relevant, group y): groups= gives 3 of the run's 4 documents a group and 2 of the 3
# relevant documents one, too many for the warning of groups= lacking most of them
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q9"],
        "doc_id": ["a", "b", "d", "zz"],
        "relevance": [1, 1, 1, 1],
    }
)
GROUPS = pl.DataFrame({"doc_id": ["a", "c", "d"], "group": ["x", "y", "y"]})
TARGET = pl.DataFrame({"group": ["x", "y"], "target": [0.5, 0.5]})


def _lost(named: str) -> str:
    # b of q1: the one relevant document of the run's queries without a group (zz of q9,
    # a query the run does not rank, is not counted)
    return (
        "groups= gives no group to 1 relevant judged document(s) in 1 query of the run "
        f"(first: 'b' of query 'q1'): {named} leave them out (a relevant document without "
        "a group counts in no group: the expected-exposure targets leave its exposure "
        "out, and awrf's target, the relevant documents' groups, does not count it). Give "
        "each relevant document its group in groups= (same 'doc_id' spelling), or drop it "
        "from the judgments where it is meant to count in no group"
    )


LOST_CASES: list[tuple[str, list[str], dict[str, Any], list[str]]] = [
    ("ee_loss and awrf", ["ee_loss", "awrf"], {}, [_lost("ee_loss, awrf")]),
    ("buckets", ["ee_loss", "awrf"], {"buckets": 2}, [_lost("ee_loss, awrf")]),
    (
        "per query",
        ["ee_disparity", "ee_relevance"],
        {"per_query": True},
        [_lost("ee_disparity, ee_relevance")],
    ),
    ("awrf_ndcg alone", ["awrf_ndcg"], {}, [_lost("awrf_ndcg")]),
    # awrf with target= reads no relevant document's group: nothing to say
    ("awrf with target=", ["awrf"], {"target": TARGET}, []),
    # rnd reads no relevant document's group: not named beside ee_loss
    ("ee_loss and rnd", ["ee_loss", "rnd"], {}, [_lost("ee_loss")]),
    # every relevant document grouped: silent
    (
        "all grouped",
        ["ee_loss"],
        {"groups": pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "x", "y", "y"]})},
        [],
    ),
]


@pytest.mark.parametrize(
    ("metrics", "extra", "expected"),
    [case[1:] for case in LOST_CASES],
    ids=[case[0] for case in LOST_CASES],
)
def test_relevant_documents_without_a_group_are_named(
    metrics: list[str], extra: dict[str, Any], expected: list[str]
) -> None:
    kwargs: dict[str, Any] = {"qrels": QRELS, "groups": GROUPS, **extra}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(RUN, metrics=metrics, **kwargs)
    said = [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]
    assert said == expected


def test_relevant_documents_without_a_group_are_named_per_segment_query() -> None:
    # by=: the query named as the run gives it (not the plan's struct of keys)
    run = RUN.with_columns(pl.Series("seg", ["s", "s", "s", "t", "t"]))
    queries = pl.DataFrame({"query_id": ["q1", "q2", "q9"], "seg": ["s", "t", "t"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(
            run, metrics=["ee_loss"], qrels=QRELS, groups=GROUPS, by="seg", queries=queries
        )
    said = [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]
    assert said == [_lost("ee_loss")]


# ------------------------- compare: the expected exposure's nulls drop pairs, said
# systems A and B rank q1: a (relevant, x), b (y); q2: c (relevant, x), d (y); q3: e
# (relevant, no group), a (x): ee_loss is null on q3 (no relevant document with a group),
# awrf (against target=) scores it; compare pairs both on q1 and q2 alone (n = 2)
SYSTEMS = pl.DataFrame(
    {
        "system": ["A"] * 6 + ["B"] * 6,
        "query_id": ["q1", "q1", "q2", "q2", "q3", "q3"] * 2,
        "doc_id": ["a", "b", "c", "d", "e", "a"] * 2,
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0],
    }
)
JUDGED = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "c", "e"], "relevance": [1] * 3}
)
GROUPED = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
PAIRED = (
    "'ee_loss' is null on 2 of the 6 queries (first: system='A', query_id='q3'), which "
    "{others} beside score: the expected-exposure measures score only the queries with a "
    "relevant document in groups= (a query without relevant judgments, or none of whose "
    "relevant documents has a group, is left out), so compare leaves those queries out of "
    "every measure's pairs, and {others} {verb} compared on fewer queries than {scores} "
    "(n). Compare 'ee_loss' in a call of its own to keep those queries in the others' "
    "pairs (or give those relevant documents a group)"
)
COMPARE_CASES: list[tuple[str, list[str], dict[str, Any], list[str]]] = [
    (
        "ee_loss and awrf",
        ["ee_loss", "awrf"],
        {"target": TARGET},
        [PAIRED.format(others="'awrf'", verb="is", scores="it scores")],
    ),
    (
        "ee_loss, awrf and awrf_ndcg, common",
        ["ee_loss", "awrf", "awrf_ndcg"],
        {"target": TARGET, "query_set": "common"},
        [PAIRED.format(others="'awrf', 'awrf_ndcg'", verb="are", scores="they score")],
    ),
    # the expected exposure alone: every measure scores the same queries, n says it
    ("ee_loss and ee_disparity", ["ee_loss", "ee_disparity"], {}, []),
]


@pytest.mark.parametrize(
    ("metrics", "extra", "expected"),
    [case[1:] for case in COMPARE_CASES],
    ids=[case[0] for case in COMPARE_CASES],
)
def test_compare_says_the_expected_exposure_drops_pairs(
    metrics: list[str], extra: dict[str, Any], expected: list[str]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.compare(
            SYSTEMS,
            metrics,
            qrels=JUDGED,
            groups=GROUPED,
            system="system",
            **extra,
        )
    assert got["n"].to_list() == [2] * len(metrics)  # q1, q2
    said = [str(w.message) for w in caught if " is null on " in str(w.message)]
    assert said == expected


# ------------------------- by= with buckets=: each warning once, as the one plan's
@pytest.mark.parametrize("buckets", [None, 2])
def test_segments_in_buckets_warn_once(buckets: int | None) -> None:
    # segment t's query q2 ranks e (relevant, no group) and f (no group): awrf is NaN on
    # it and e is named; the buckets' per-query values used to be read twice by the
    # segments' summary, each warning said twice
    run = pl.DataFrame(
        {
            "seg": ["s", "s", "t", "t"],
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["a", "b", "e", "f"],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )
    qrels = pl.DataFrame(
        {"seg": ["s", "t"], "query_id": ["q1", "q2"], "doc_id": ["a", "e"], "relevance": [1, 1]}
    )
    groups = pl.DataFrame({"doc_id": ["a", "b"], "group": ["x", "y"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(run, ["awrf"], qrels=qrels, groups=groups, by="seg", buckets=buckets)
    assert got["num_q"].to_list() == [1, 1]
    said = sorted(str(w.message)[:40] for w in caught)
    assert said == [
        "'awrf' is NaN on 1 of the 2 queries (fir",
        "groups= gives no group to 1 relevant jud",
    ]


# ------------------------- by=: a segment the exposure measures score no query of, named
SEGMENT_RUN = pl.DataFrame(
    {
        "seg": ["s", "s", "t", "t"],
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "e", "f"],
        "score": [2.0, 1.0, 2.0, 1.0],
    }
)
# q2 (segment t) has no relevant judgment: ee_loss scores q1 alone
SEGMENT_QRELS = pl.DataFrame(
    {"seg": ["s", "t"], "query_id": ["q1", "q2"], "doc_id": ["a", "e"], "relevance": [1, 0]}
)
SEGMENT_GROUPS = pl.DataFrame({"doc_id": ["a", "b", "e", "f"], "group": ["x", "y", "x", "y"]})
UNSCORED_SEGMENT = (
    "{named} no query in 1 of the 2 groups of 'seg' (first: seg='t'): num_q is 0 and the "
    "values are null there (the group's queries have no relevant judgment the measures "
    "read, or it retrieved no judged query). Check that group's judgments (and their "
    "groups in groups=), or filter it out of the run"
)


@pytest.mark.parametrize(
    ("metrics", "buckets", "expected"),
    [
        (["ee_loss"], None, [UNSCORED_SEGMENT.format(named="'ee_loss' scores")]),
        (["ee_loss"], 2, [UNSCORED_SEGMENT.format(named="'ee_loss' scores")]),
        (
            ["ee_loss", "ee_disparity"],
            None,
            [UNSCORED_SEGMENT.format(named="'ee_loss', 'ee_disparity' score")],
        ),
    ],
)
def test_a_segment_scored_on_no_query_is_named(
    metrics: list[str], buckets: int | None, expected: list[str]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(
            SEGMENT_RUN,
            metrics,
            qrels=SEGMENT_QRELS,
            groups=SEGMENT_GROUPS,
            by="seg",
            buckets=buckets,
        )
    assert got["num_q"].to_list() == [1, 0]
    assert got["ee_loss"][1] is None
    assert [str(w.message) for w in caught] == expected


def test_a_segment_scored_everywhere_is_silent() -> None:
    qrels = SEGMENT_QRELS.with_columns(relevance=pl.lit(1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(SEGMENT_RUN, ["ee_loss"], qrels=qrels, groups=SEGMENT_GROUPS, by="seg")
    assert got["num_q"].to_list() == [1, 1]
    assert [str(w.message) for w in caught] == []


# ------------------------- awrf NaN for an empty target: the cause named
def test_awrf_nan_of_an_empty_target_names_its_cause() -> None:
    # q1 ranks e (relevant, no group) and a (group x): the ranking has a group
    # distribution, the target (the relevant documents' groups) none: awrf is NaN
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["e", "a"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["e"], "relevance": [1]})
    groups = pl.DataFrame({"doc_id": ["a"], "group": ["x"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(run, ["awrf"], qrels=qrels, groups=groups)
    assert got["awrf"].is_nan().to_list() == [True]
    said = [str(w.message) for w in caught if "NaN on" in str(w.message)]
    assert len(said) == 1
    assert "or (without target=) none of the query's relevant documents has one" in said[0]


# ---------------------------------- the value warnings in one order on every path
# q1 ranks x, y, z, none of which groups= holds: awrf is NaN there (no group
# distribution) and so is rnd (3 documents, no cut-off 10); q2 ranks d0..d11, half of
# them in each group, 12 documents: both defined. Two warnings, awrf's before rnd's.
_DOCS = [f"d{i}" for i in range(12)]
ORDER_RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 12,
        "doc_id": ["x", "y", "z", *_DOCS],
        "score": [3.0, 2.0, 1.0] + [float(12 - i) for i in range(12)],
    }
)
ORDER_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d0", "d1"], "relevance": [1, 1]})
ORDER_GROUPS = pl.DataFrame({"doc_id": _DOCS, "group": ["a", "b"] * 6})


def _value_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if " is NaN on " in str(w.message)]


@pytest.mark.parametrize("engine", ["one", "buckets", "spark", "dask"])
def test_the_value_warnings_come_in_one_order_on_every_path(
    engine: str, request: pytest.FixtureRequest
) -> None:
    tables = {"qrels": ORDER_QRELS, "groups": ORDER_GROUPS}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(ORDER_RUN, ["awrf", "rnd"], **tables, per_query=True)
    expected = _value_warnings(caught)
    assert [text.split(" is NaN")[0] for text in expected] == ["'awrf'", "'rnd'"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if engine in ("one", "buckets"):
            extra = {"buckets": 2} if engine == "buckets" else {}
            irm.evaluate(ORDER_RUN, ["awrf", "rnd"], **tables, per_query=True, **extra)
        else:
            evaluate, frame, back = engine_io(engine, request)
            back(
                evaluate(
                    frame(ORDER_RUN),
                    ["awrf", "rnd"],
                    qrels=frame(ORDER_QRELS),
                    groups=frame(ORDER_GROUPS),
                    per_query=True,
                    partitions=2,
                )
            )
    assert _value_warnings(caught) == expected
