"""Round 18 engines: the warnings the one plan gives are given out of core too.

``rnd``/``rkl``/``rrd`` undefined on a query (a ranking of 10 documents or fewer: no
cut-off below its length, 0 / 0) warned on one machine, and said nothing with
``buckets=``: each bucket's plan is told not to warn (it holds some of the queries), and
the whole run's values were never looked at. Now the buckets' per-query values warn,
with the whole run's count and first query, the text of the one plan.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io


def _ranking(query: str, length: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": [query] * length,
            "doc_id": [f"d{i}" for i in range(length)],
            "score": [float(length - i) for i in range(length)],
        }
    )


#: q1 and q3 rank 12 documents (a cut-off at 10 below their length: defined); q2 and
#: q4 rank 3 and 10 (no cut-off below: undefined). Half the documents protected.
RUN = pl.concat([_ranking("q1", 12), _ranking("q2", 3), _ranking("q3", 12), _ranking("q4", 10)])
GROUPS = pl.DataFrame({"doc_id": [f"d{i}" for i in range(12)], "group": ["p", "u"] * 6})

_TAIL = (
    ": Yang & Stoyanovich's sum runs over the cut-offs 10, 20, ... up to the ranking's "
    "length and is divided by its largest value, so a ranking of 10 documents or fewer, "
    "or with no or only protected documents, has none (0 / 0), and the mean over the "
    "queries is NaN too (ir_measures' rND, rKL and rRD sum at every position and give 0 "
    "where the largest value is 0: another definition); rank more than 10 documents of "
    "both groups, or leave those queries out (the short rankings: "
    "run.filter(pl.len().over('query_id') > 10))"
)
#: 2 of the 4 queries (q2, q4) undefined; the first in query order is q2
_WARNED = [
    (["rnd"], "'rnd' is NaN on 2 of the 4 queries (first: query_id='q2')" + _TAIL),
    (["rnd", "rkl"], "'rnd', 'rkl' are NaN on 2 of the 4 queries (first: query_id='q2')" + _TAIL),
]


def _said(metrics: list[str], **options: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(RUN, metrics, groups=GROUPS, **options)  # type: ignore[arg-type]
    return [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]


@pytest.mark.parametrize(("metrics", "text"), _WARNED, ids=["rnd", "rnd+rkl"])
@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per query"])
@pytest.mark.parametrize("buckets", [None, 2, 3])
def test_undefined_segregation_warns_in_buckets(
    metrics: list[str], text: str, per_query: bool, buckets: int | None
) -> None:
    assert _said(metrics, per_query=per_query, buckets=buckets) == [text]


def test_defined_segregation_warns_nothing_in_buckets() -> None:
    """Every ranking longer than 10, both groups: nothing to say, in buckets too."""
    long = RUN.filter(pl.col("query_id").is_in(["q1", "q3"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        irm.evaluate(long, ["rnd"], groups=GROUPS, buckets=2)


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per query"])
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_undefined_segregation_warns_on_engines(
    engine: str, per_query: bool, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out: Any = evaluate(
            to_engine(RUN),
            ["rnd", "rkl"],
            groups=to_engine(GROUPS),
            per_query=per_query,
            partitions=2,
        )
        values = back(out)
    said = [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]
    assert said == [_WARNED[1][1]]
    # the values are the one plan's (NaN where the warning says)
    one = irm.evaluate(RUN, ["rnd", "rkl"], groups=GROUPS, per_query=per_query)
    assert values.sort(values.columns[0]).equals(one.sort(one.columns[0]), null_equal=True)


# click metrics per session on an engine: each part's plan warned "the impression log
# holds no row" where the part held no session, so a log of one session in 3 parts was
# said to be empty (twice or more); an empty log warned once per part. The parts do not
# warn now: the engine warns once, where no part holds a session.
LOG = pl.DataFrame({"session_id": ["s1", "s1"], "position": [1, 2], "clicked": [True, False]})
_EMPTY_LOG = (
    "the impression log holds no row, so every metric is null: nothing was scored (a "
    "filter that kept nothing, or an empty file?)"
)
_LOGS = [("one session", LOG, []), ("empty", LOG.clear(), [_EMPTY_LOG])]


@pytest.mark.parametrize(("name", "log", "said"), _LOGS, ids=[c[0] for c in _LOGS])
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_click_parts_warn_for_the_whole_log(
    engine: str, name: str, log: pl.DataFrame, said: list[str], request: pytest.FixtureRequest
) -> None:
    columns = {"query_id": "session_id", "rank": "position", "per_query": True}
    with warnings.catch_warnings(record=True) as one_machine:
        warnings.simplefilter("always")
        one = irm.evaluate(log, ["ctr"], **columns)  # type: ignore[arg-type]
    assert [str(w.message) for w in one_machine] == said
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = back(evaluate(to_engine(log), ["ctr"], partitions=3, **columns))
    assert [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)] == said
    # 1 click of 2 impressions in s1: ctr 0.5; no row for the empty log
    assert values.to_dicts() == one.to_dicts()


# an empty recommendation table with a history: one machine warns that it holds no row;
# Spark and Dask said nothing (the history's warning returned early on no item)
HISTORY = pl.DataFrame({"query_id": ["u1", "u2", "u1"], "doc_id": ["a", "b", "c"]})
_EMPTY_RECS = (
    "the recommendation table holds no row, so every metric is null: nothing was scored "
    "(a filter that kept nothing, or an empty file?)"
)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_empty_recommendations_warn_on_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    empty = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
    with warnings.catch_warnings(record=True) as one_machine:
        warnings.simplefilter("always")
        irm.evaluate(empty, ["novelty@5"], interactions=HISTORY)
    assert [str(w.message) for w in one_machine] == [_EMPTY_RECS]
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        back(evaluate(to_engine(empty), ["novelty@5"], interactions=to_engine(HISTORY)))
    # the one machine's class too (a Dask worker's warning was a CoverageWarning)
    assert [
        (w.category, str(w.message)) for w in caught if issubclass(w.category, irm.IrmWarning)
    ] == [(irm.IrmWarning, _EMPTY_RECS)]


# two systems' recommendations, the history holding A's items and none of B's: one
# machine names system 'B' ("... of the recommendations of system 'B'"); Spark and Dask
# tallied the whole run's items (3 of 6 held: no warning), naming no system
SYSTEMS = pl.DataFrame(
    {
        "system": ["A", "A", "A", "B", "B", "B"],
        "query_id": ["u1", "u1", "u2", "u1", "u1", "u2"],
        "doc_id": ["a", "c", "b", "x", "y", "z"],
        "score": [0.9, 0.8, 0.7, 0.9, 0.8, 0.7],
    }
)
_SYSTEM_B = (
    "interactions= holds none of the 3 items of the recommendations of system 'B' (column "
    "'doc_id'): the recommendations of an item the interactions lack are left out "
    "(unseen_items='drop'), so the metrics read few of the list"
)


@pytest.mark.parametrize("metric", ["novelty@5", "catalog_coverage@5"])
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_history_names_the_system_on_engines(
    engine: str, metric: str, request: pytest.FixtureRequest
) -> None:
    options: dict[str, Any] = {"systems": ["system"], "unseen_items": "drop"}

    def said(caught: list[warnings.WarningMessage]) -> list[str]:
        texts = [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]
        return [t for t in texts if t.startswith("interactions= holds")]

    with warnings.catch_warnings(record=True) as one_machine:
        warnings.simplefilter("always")
        one = irm.evaluate(SYSTEMS, [metric], interactions=HISTORY, **options)
    assert len(said(one_machine)) == 1
    assert said(one_machine)[0].startswith(_SYSTEM_B)
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = back(
            evaluate(to_engine(SYSTEMS), [metric], interactions=to_engine(HISTORY), **options)
        )
    assert said(caught) == said(one_machine)
    assert values.sort("system").equals(one.sort("system"))


# two systems against one reference: B's documents (or B's queries) are none of the
# reference's; one machine names system 'B', Spark and Dask tallied the whole run (3 of
# 6 documents, 2 of 4 query keys held: no warning) and said nothing
REFERENCE = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [0.9, 0.8, 0.7]}
)
_B_DOCS = pl.DataFrame(
    {
        "system": ["A", "A", "A", "B", "B", "B"],
        "query_id": ["q1", "q1", "q2", "q1", "q1", "q2"],
        "doc_id": ["a", "b", "c", "x", "y", "z"],
        "score": [0.9, 0.8, 0.7, 0.9, 0.8, 0.7],
    }
)
_B_QUERIES = (
    _B_DOCS.with_columns(
        pl.when(pl.col("system") == "B")
        .then(pl.col("query_id") + "b")
        .otherwise(pl.col("query_id"))
        .alias("query_id"),
        pl.when(pl.col("system") == "B").then(pl.lit("a")).otherwise(pl.col("doc_id")).alias("d"),
    )
    .drop("doc_id")
    .rename({"d": "doc_id"})
    .unique(["system", "query_id", "doc_id"])
)
_RUNS = [("documents", _B_DOCS, "reference= holds none of the 3 documents of the run of "
          "system 'B'"), ("queries", _B_QUERIES, "reference= holds none of the 2 queries "
          "of the run of system 'B'")]  # fmt: skip


@pytest.mark.parametrize(("name", "run", "start"), _RUNS, ids=[c[0] for c in _RUNS])
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_reference_names_the_system_on_engines(
    engine: str, name: str, run: pl.DataFrame, start: str, request: pytest.FixtureRequest
) -> None:
    def said(caught: list[warnings.WarningMessage]) -> list[str]:
        return [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]

    with warnings.catch_warnings(record=True) as one_machine:
        warnings.simplefilter("always")
        one = irm.evaluate(run, ["rbo"], reference=REFERENCE, systems=["system"])
    assert len(said(one_machine)) == 1
    assert said(one_machine)[0].startswith(start)
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = back(
            evaluate(to_engine(run), ["rbo"], reference=to_engine(REFERENCE), systems=["system"])
        )
    assert said(caught) == said(one_machine)
    assert values.sort("system").equals(one.sort("system"))
