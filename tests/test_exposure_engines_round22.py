"""Round 22: the exposure measures' warnings are the same, in the same order and once
each, on one machine, in buckets, on Spark and on Dask (the warnings of round 20 and 21:
tests/test_exposure_round20.py, tests/test_exposure_round21.py)."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io

# the tables of round 21's tests: q1 ranks a (relevant, group x), b (relevant, no
# group), c (group y); q2 ranks a, d (relevant, group y); q9's zz is judged but not
# ranked: b is the one relevant document of the run's queries groups= gives no group to.
# Segment t's one query (q2) has no relevant judgment: the exposure measures score no
# query of it.
from .test_exposure_round21 import (
    GROUPS,
    QRELS,
    RUN,
    SEGMENT_GROUPS,
    SEGMENT_QRELS,
    SEGMENT_RUN,
    TARGET,
)

# q1 ranks c and d, neither in groups=: awrf and awrf_ndcg are NaN there
UNGROUPED_RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["c", "d", "a", "b"], "score": [2.0, 1, 2, 1]}
)
UNGROUPED_QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]}
)
UNGROUPED_GROUPS = pl.DataFrame({"doc_id": ["a", "b"], "group": ["x", "y"]})
# q1's one relevant document (e) has no group: awrf's target is empty, awrf NaN
EMPTY_RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["e", "a"], "score": [2.0, 1.0]})
EMPTY_QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["e"], "relevance": [1]})

_LOST = "groups= gives no group to 1 relevant judged document(s) in 1 query of the run"
_UNSCORED_SEGMENT = "no query in 1 of the 2 groups of 'seg' (first: seg="
_NAN = "NaN on 1 of the 2 queries (first: "
_RND = "'rnd' is NaN on 2 of the 2 queries (first: query_id='q1')"

#: name, run, metrics, the other arguments (frames are converted for each engine), and
#: the warnings one machine gives (category, how each text starts), in order
CASES: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], list[tuple[type, str]]]] = [
    # 67e1ef06: a few relevant documents without a group, named
    (
        "lost",
        RUN,
        ["ee_loss", "awrf"],
        {"qrels": QRELS, "groups": GROUPS},
        [(irm.CoverageWarning, f"{_LOST} (first: 'b' of query 'q1'): ee_loss, awrf leave")],
    ),
    (
        "lost, per query",
        RUN,
        ["ee_disparity", "ee_relevance", "awrf_ndcg"],
        {"qrels": QRELS, "groups": GROUPS, "per_query": True},
        [(irm.CoverageWarning, f"{_LOST} (first: 'b' of query 'q1'): ee_disparity, ")],
    ),
    # awrf with target= reads no relevant document's group; rnd's NaN said after
    (
        "lost, target= and rnd",
        RUN,
        ["ee_loss", "awrf", "rnd"],
        {"qrels": QRELS, "groups": GROUPS, "target": TARGET},
        [
            (irm.CoverageWarning, f"{_LOST} (first: 'b' of query 'q1'): ee_loss leave"),
            (irm.IrmWarning, _RND),
        ],
    ),
    (
        "lost, by= from queries=",
        RUN.with_columns(seg=pl.Series(["s", "s", "s", "t", "t"])),
        ["ee_loss"],
        {
            "qrels": QRELS,
            "groups": GROUPS,
            "by": "seg",
            "queries": pl.DataFrame({"query_id": ["q1", "q2", "q9"], "seg": ["s", "t", "t"]}),
        },
        [(irm.CoverageWarning, f"{_LOST} (first: 'b' of query 'q1'): ee_loss leave")],
    ),
    # 33a865b6: a by= group scored on no query, named (and given its row of num_q 0)
    (
        "segment unscored",
        SEGMENT_RUN,
        ["ee_loss", "ee_disparity"],
        {"qrels": SEGMENT_QRELS, "groups": SEGMENT_GROUPS, "by": "seg"},
        [(irm.IrmWarning, f"'ee_loss', 'ee_disparity' score {_UNSCORED_SEGMENT}'t')")],
    ),
    (
        "segment unscored, integer keys",
        SEGMENT_RUN.with_columns(pl.col("seg").replace_strict({"s": 1, "t": 2})),
        ["ee_loss"],
        {
            "qrels": SEGMENT_QRELS.with_columns(pl.col("seg").replace_strict({"s": 1, "t": 2})),
            "groups": SEGMENT_GROUPS,
            "by": "seg",
        },
        [(irm.IrmWarning, f"'ee_loss' scores {_UNSCORED_SEGMENT}2)")],
    ),
    (
        "segment unscored, beside ndcg",
        SEGMENT_RUN,
        ["ee_loss", "ndcg"],
        {"qrels": SEGMENT_QRELS, "groups": SEGMENT_GROUPS, "by": "seg"},
        [(irm.IrmWarning, f"'ee_loss' scores {_UNSCORED_SEGMENT}'t')")],
    ),
    # ab40bea6: awrf/awrf_ndcg NaN of a ranking with no grouped document
    (
        "ungrouped ranking",
        UNGROUPED_RUN,
        ["awrf", "awrf_ndcg"],
        {"qrels": UNGROUPED_QRELS, "groups": UNGROUPED_GROUPS},
        [(irm.IrmWarning, f"'awrf', 'awrf_ndcg' are {_NAN}query_id='q1')")],
    ),
    # 1d57aee7 and e3a79567: measures that score no query, said once, rnd's NaN after
    (
        "no relevant judgment",
        UNGROUPED_RUN,
        ["ee_loss", "awrf", "rnd"],
        {"qrels": UNGROUPED_QRELS.with_columns(relevance=pl.lit(0)), "groups": UNGROUPED_GROUPS},
        [
            (irm.IrmWarning, "'ee_loss', 'awrf' score no query (their means are null)"),
            (irm.IrmWarning, _RND),
        ],
    ),
    # dbffae3f: awrf NaN of an empty target, after groups=' coverage warning
    (
        "empty target",
        EMPTY_RUN,
        ["awrf"],
        {"qrels": EMPTY_QRELS, "groups": UNGROUPED_GROUPS.head(1)},
        [
            (irm.CoverageWarning, "groups= holds none of the 1 relevant documents of the"),
            (irm.IrmWarning, "'awrf' is NaN on 1 of the 1 queries (first: query_id='q1')"),
        ],
    ),
    # 14002d6d: by= says each warning once
    (
        "by= once",
        UNGROUPED_RUN.with_columns(seg=pl.Series(["s", "s", "t", "t"])),
        ["awrf"],
        {"qrels": UNGROUPED_QRELS, "groups": UNGROUPED_GROUPS, "by": "seg"},
        [(irm.IrmWarning, f"'awrf' is {_NAN}seg='s', query_id='q1')")],
    ),
]


def _said(caught: list[warnings.WarningMessage]) -> list[tuple[type, str]]:
    return [(w.category, str(w.message)) for w in caught if issubclass(w.category, irm.IrmWarning)]


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort([c for c in ("seg", "query_id") if c in frame.columns])


def _one_machine(**extra: Any) -> dict[str, tuple[pl.DataFrame, list[tuple[type, str]]]]:
    found = {}
    for name, run, metrics, kwargs, _ in CASES:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = irm.evaluate(run, metrics, **kwargs, **extra)
        assert isinstance(got, pl.DataFrame)
        found[name] = (_sorted(got), _said(caught))
    return found


@functools.cache
def _reference() -> dict[str, tuple[pl.DataFrame, list[tuple[type, str]]]]:
    """One machine's values and warnings of every case, computed once for the module's
    tests (the reference each path is compared with; read, never changed)."""
    return _one_machine()


def test_one_machine_gives_the_warnings() -> None:
    # the reference the other paths are compared with: each warning, in order, once
    found = _reference()
    for name, _, _, _, expected in CASES:
        said = found[name][1]
        heads = [
            (kind, text[: len(head)])
            for (kind, text), (_, head) in zip(said, expected, strict=False)
        ]
        assert (len(said), heads) == (len(expected), expected), name


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_every_path_gives_the_same_warnings(engine: str, request: pytest.FixtureRequest) -> None:
    expected = _reference()
    got = {}
    if engine == "buckets":
        got = _one_machine(buckets=2)
    else:
        evaluate, frame, back = engine_io(engine, request)
        for name, run, metrics, kwargs, _ in CASES:
            given = {k: frame(v) if isinstance(v, pl.DataFrame) else v for k, v in kwargs.items()}
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                values = back(evaluate(frame(run), metrics, **given, partitions=2))
            got[name] = (_sorted(values), _said(caught))
    assert {name: said for name, (_, said) in got.items()} == {
        name: said for name, (_, said) in expected.items()
    }
    for name, (values, _) in got.items():  # a group scored on no query has its row too
        assert values.equals(expected[name][0]), name
