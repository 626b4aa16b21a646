"""A ``by=`` key of the run alone gives the same result on every path, round 12.

1. Spark and Dask refused such a key up front (``engines._partition.prepare``) for
   every metric of the judgments, where one machine refuses it only for the metrics
   that score a judged query a group did not retrieve (the ranking metrics, ``ee_loss``,
   ``ee_disparity``, ``ee_relevance``): ``awrf`` and ``awrf_ndcg`` alone gave values on
   one machine and the engines' refusal on Spark and Dask. A part holds every row of its
   queries, so its plan now scores them as one machine does (the same values), the
   judgments not crossed with the run's groups. ``rnd`` alone with ``qrels=`` got the
   by-key refusal on the engines, and one machine's "drop qrels=" now.
2. The engines' refusal named the judgments as the one place to give the key; a
   ``queries=`` table (the key of every query) works there too, and one machine's
   refusal names it: so does the engines' now. Beside the ranking metrics the exposure
   measures' call of the two (``engines._sides.two_calls``) was not given ``queries=``,
   and refused the key ``queries=`` places: it is now given it (one machine's values).
"""

from __future__ import annotations

import re
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import dask
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import MetricParameterError, QuerySetError

from .helpers import engine_io

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

# q1 under segments 's' and 't', q2 under 't'; q3 judged and retrieved by none
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "c", "d"],
        "score": [2.0, 1.0, 1.0, 2.0, 1.0],
        "segment": ["s", "s", "t", "t", "t"],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q3"],
        "doc_id": ["a", "c", "d", "d"],
        "relevance": [1, 2, 1, 1],
    }
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
# each query's segment (q1 listed under 't' too by the run: the run's rows say where)
QUERIES = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "segment": ["s", "t", "t"]})

PATHS = ["one machine", "spark", "dask"]


def _path(name: str, request: pytest.FixtureRequest) -> tuple[Any, Any, Any]:
    """The evaluate of ``name``, a converter of polars frames to its frames, and one of
    its results back to polars."""
    if name == "one machine":
        return irm.evaluate, lambda f: f, lambda f: f
    return engine_io(name, request)


def _engines(drop: bool) -> str:
    """The engines' refusal of a ``by`` key of the run alone."""
    return (
        "by key 'segment' is in the run but not in the judgments: on Spark and Dask each "
        "part sees its own queries, so a judged query that some 'segment' group did not "
        "retrieve cannot be placed. If it names systems or runs (each scored on every "
        "judged query), pass systems='segment' instead of by=; if it is an attribute of "
        "the query (day, market, segment), give each judged query its 'segment': with "
        "queries= (a table of query ids and 'segment'), or in a 'segment' column of the "
        "judgments"
        + (
            "; or pass unretrieved='drop' to score each group on the queries it retrieved"
            if drop
            else ""
        )
    )


# (id, metrics, tables): the values of one machine on both engines
VALUES: list[tuple[str, list[str], dict[str, pl.DataFrame]]] = [
    ("awrf", ["awrf"], {"qrels": QRELS, "groups": GROUPS}),
    ("awrf_ndcg", ["awrf_ndcg"], {"qrels": QRELS, "groups": GROUPS}),
    ("rkl awrf", ["rkl", "awrf"], {"qrels": QRELS, "groups": GROUPS}),
    ("rrd awrf_ndcg", ["rrd", "awrf_ndcg"], {"qrels": QRELS, "groups": GROUPS}),
    ("rnd", ["rnd"], {"groups": GROUPS}),
    ("map queries=", ["map"], {"qrels": QRELS, "queries": QUERIES}),
    ("ee_loss queries=", ["ee_loss"], {"qrels": QRELS, "queries": QUERIES}),
    (
        "map ee_loss queries=",
        ["map", "ee_loss"],
        {"qrels": QRELS, "queries": QUERIES, "groups": GROUPS},
    ),
    (
        "ndcg awrf queries=",
        ["ndcg", "awrf"],
        {"qrels": QRELS, "queries": QUERIES, "groups": GROUPS},
    ),
]


PER_QUERY = [False, True]


@pytest.fixture(scope="module")
def dask_values(request: pytest.FixtureRequest) -> dict[tuple[str, bool], pl.DataFrame]:
    """Every case's result on Dask, by (case id, per_query), computed by one
    ``dask.compute`` of the 18 lazy results: one graph on the cluster for them all, where
    a compute per case paid a job's fixed cost 18 times (each case is still its own
    ``evaluate`` call, and its own test compares its values)."""
    evaluate, frame, _ = engine_io("dask", request)
    lazy = {
        (name, per_query): evaluate(
            frame(RUN),
            metrics,
            **{k: frame(v) for k, v in tables.items()},
            by="segment",
            per_query=per_query,
        )
        for name, metrics, tables in VALUES
        for per_query in PER_QUERY
    }
    (computed,) = dask.compute(lazy)
    return {
        key: pl.DataFrame(pl.from_arrow(pa.Table.from_pandas(out, preserve_index=False)))
        for key, out in computed.items()
    }


#: The Spark calls :func:`spark_values` makes at once (threads of this process, each
#: call's jobs submitted to the one session as they come)
SPARK_CALLS_AT_ONCE = 4


@pytest.fixture(scope="module")
def spark_values(request: pytest.FixtureRequest) -> dict[tuple[str, bool], Future[Any]]:
    """Every case's result on Spark, by (case id, per_query): each case its own
    ``evaluate`` call (its own Spark jobs, about ten small ones each), the 18 calls made
    from a few threads at once, so that their jobs share the session's time rather
    than wait one call after another (measured, the file's Spark tests on a shared
    machine: 56 s one after another, 41 s so; benchmarks/results_tests.md). Each case's
    test takes its own call's result, or its error, from its ``Future``."""
    evaluate, frame, back = engine_io("spark", request)

    def call(metrics: list[str], tables: dict[str, pl.DataFrame], per_query: bool) -> Any:
        given = {k: frame(v) for k, v in tables.items()}
        return back(evaluate(frame(RUN), metrics, **given, by="segment", per_query=per_query))

    pool = ThreadPoolExecutor(SPARK_CALLS_AT_ONCE)
    calls = {
        (name, per_query): pool.submit(call, metrics, tables, per_query)
        for name, metrics, tables in VALUES
        for per_query in PER_QUERY
    }
    # every call ended before the first test takes one: none runs beside a later test
    # (its warnings, its jobs beside another test's failing ones)
    pool.shutdown(wait=True)
    return calls


@pytest.mark.parametrize("per_query", PER_QUERY, ids=["means", "per_query"])
@pytest.mark.parametrize(("name", "metrics", "tables"), VALUES, ids=[case[0] for case in VALUES])
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_give_one_machines_values(
    engine: str,
    request: pytest.FixtureRequest,
    name: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    per_query: bool,
) -> None:
    options: dict[str, Any] = {"by": "segment", "per_query": per_query}
    expected = irm.evaluate(RUN, metrics, **tables, **options)
    if engine == "dask":
        got = request.getfixturevalue("dask_values")[(name, per_query)]
    else:
        got = request.getfixturevalue("spark_values")[(name, per_query)].result()
    keys = ["segment", "query_id"] if per_query else ["segment"]
    assert_frame_equal(got.sort(keys), expected.sort(keys), check_dtypes=False, check_exact=True)


# (id, metrics, tables, paths, error class, message)
REFUSED: list[tuple[str, list[str], dict[str, pl.DataFrame], list[str], type, str]] = [
    (
        "rnd qrels=",
        ["rnd"],
        {"qrels": QRELS, "groups": GROUPS},
        PATHS,
        MetricParameterError,
        "rnd, rkl and rrd read the run and groups= only, and no metric asked for reads the "
        "judgments: drop qrels=",
    ),
    ("map", ["map"], {"qrels": QRELS}, ["spark", "dask"], QuerySetError, _engines(True)),
    ("ee_loss", ["ee_loss"], {"qrels": QRELS}, ["spark", "dask"], QuerySetError, _engines(False)),
    (
        "map awrf",
        ["map", "awrf"],
        {"qrels": QRELS, "groups": GROUPS},
        ["spark", "dask"],
        QuerySetError,
        _engines(False),
    ),
]


@pytest.mark.parametrize(
    ("metrics", "tables", "path", "error", "message"),
    [
        (metrics, tables, path, error, message)
        for _, metrics, tables, paths, error, message in REFUSED
        for path in paths
    ],
    ids=[f"{case[0]}, {path}" for case in REFUSED for path in case[3]],
)
def test_refusals_of_a_by_key_of_the_run_alone(
    request: pytest.FixtureRequest,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    path: str,
    error: type,
    message: str,
) -> None:
    evaluate, frame, _ = _path(path, request)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        evaluate(frame(RUN), metrics, by="segment", **{k: frame(v) for k, v in tables.items()})
