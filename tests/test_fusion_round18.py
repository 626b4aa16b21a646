"""irm.fuse of runs whose query sets only partly overlap.

``ranx.fuse`` refuses runs whose query ids differ (``AssertionError: Runs 0 and 0 query
ids do not match``). ``irm.fuse`` fuses each query from the runs that have it; where no
run holds every query of the fused run (``a``: q1, q2 and ``b``: q1, q3, or ids spelled
``'1'`` beside ``'01'``), it now says so in one
:class:`~polars_irmetrics.errors.CoverageWarning` naming each run's missing queries,
consistently with the warning of runs that share no document. Runs whose query sets are
nested (one run retrieved nothing for a query: the sample's dense run and ``q017``)
are not warned.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning
from polars_irmetrics.io.files import sample_paths

_TAIL = (
    "Each such query is fused from the runs that have it alone, as if the others "
    "retrieved nothing for it (ranx.fuse refuses runs whose queries differ). "
)
_END = (
    "Check that the runs are of the same topics, with the same query id spelling; if "
    "those runs did retrieve nothing for those queries, the fused run is as documented: "
    "silence this with warnings.filterwarnings('ignore', category=irm.CoverageWarning)."
)


def _run(queries: list[str]) -> pl.DataFrame:
    """Documents d0 (score 2) and d1 (score 1) for each query."""
    return pl.DataFrame(
        {
            "query_id": [q for q in queries for _ in range(2)],
            "doc_id": ["d0", "d1"] * len(queries),
            "score": [2.0, 1.0] * len(queries),
        }
    )


_PARTIAL = {"a": _run(["q1", "q2"]), "b": _run(["q1", "q3"])}
_PARTIAL_TEXT = (
    "no run holds every one of the fused run's 3 queries: run 'a' has no row for 1 "
    "('q3'); run 'b' has no row for 1 ('q2'). " + _TAIL + _END
)


@pytest.mark.parametrize(
    "options",
    [
        {"method": "rrf"},
        {"method": "condorcet"},
        {"method": "bordafuse"},
        {"method": "sum", "norm": "min-max"},
        {"method": "rrf", "buckets": 2},
    ],
)
def test_runs_of_partly_shared_queries_are_warned_by_every_route(options: dict) -> None:
    with pytest.warns(CoverageWarning) as caught:
        fused = irm.fuse(_PARTIAL, **options)
    texts = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert texts == [_PARTIAL_TEXT]
    # the union is still fused: q1 from both runs, q2 from a alone, q3 from b alone
    assert sorted(set(fused.get_column("query_id").to_list())) == ["q1", "q2", "q3"]


def test_a_lazy_fusion_warns_when_collected() -> None:
    lazy = irm.fuse({k: v.lazy() for k, v in _PARTIAL.items()})
    with pytest.warns(CoverageWarning, match="^no run holds every one"):
        lazy.collect()


def test_ids_spelled_apart_for_some_queries_get_the_spelling_hint() -> None:
    # a: '1'..'11'; b: '01'..'09', '10', '11': 20 queries in the union, 9 in each alone
    a = _run([str(i) for i in range(1, 12)])
    b = _run([f"{i:02d}" for i in range(1, 12)])
    with pytest.warns(CoverageWarning) as caught:
        irm.fuse({"a": a, "b": b})
    assert [str(w.message) for w in caught] == [
        "no run holds every one of the fused run's 20 queries: run 'a' has no row for 9 "
        "('01', '02', '03', ...); run 'b' has no row for 9 ('1', '2', '3', ...). "
        + _TAIL
        + "Ids that do not line up may be the cause: 9 query id(s) of run 'a' match an id "
        "of run 'b' only when leading zeros are ignored ('1' against '01'): ids are "
        "compared exactly; give both runs the same spelling, e.g. "
        "pl.col('query_id').str.strip_chars_start('0') on each. " + _END
    ]


def test_many_runs_name_three_and_count_the_rest() -> None:
    # every run misses the query of the next one: no run holds all 5
    names = [f"q{i}" for i in range(5)]
    runs = {f"r{i}": _run([q for q in names if q != names[i]]) for i in range(5)}
    with pytest.warns(CoverageWarning) as caught:
        irm.fuse(runs)
    assert [str(w.message) for w in caught] == [
        "no run holds every one of the fused run's 5 queries: run 'r0' has no row for 1 "
        "('q0'); run 'r1' has no row for 1 ('q1'); run 'r2' has no row for 1 ('q2'); and "
        "2 more runs miss some. " + _TAIL + _END
    ]


@pytest.mark.parametrize(
    "runs",
    [
        {"a": _run(["q1", "q2"]), "b": _run(["q1"])},  # b retrieved nothing for q2
        {"a": _run(["q1", "q2", "q3"]), "b": _run(["q1"]), "c": _run(["q2", "q1"])},
        {"a": _run(["q1", "q2"]), "b": _run(["q2", "q1"])},
    ],
)
def test_nested_query_sets_are_not_warned(runs: dict[str, pl.DataFrame]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        irm.fuse(runs)


def test_the_sample_runs_fuse_without_a_warning() -> None:
    # run_dense has no row for q017 and run_hybrid holds q001..q031: nested
    (bm25, dense, hybrid), _ = sample_paths()
    runs = {p.stem: pl.read_parquet(p) for p in (bm25, dense, hybrid)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        irm.fuse(runs)


def test_optimize_fusion_gives_the_same_warning() -> None:
    # ranx.optimize_fusion refuses such runs as ranx.fuse does; the grid's fusions are
    # fuse's, so the warning is fuse's, given once after the grid
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q2", "q3"], "doc_id": ["d1"] * 3, "relevance": [1, 1, 1]}
    )
    with pytest.warns(CoverageWarning) as caught:
        irm.optimize_fusion(_PARTIAL, qrels=qrels, metric="ndcg@2", method="wsum")
    texts = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert texts == [_PARTIAL_TEXT]


def test_optimize_fusion_of_nested_query_sets_is_not_warned() -> None:
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1"] * 2, "relevance": [1, 1]})
    runs = {"a": _run(["q1", "q2"]), "b": _run(["q1"])}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        irm.optimize_fusion(runs, qrels=qrels, metric="ndcg@2", method="wsum")
