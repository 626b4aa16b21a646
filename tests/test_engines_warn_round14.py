"""Spark's and Dask's warnings and refusals that were not one machine's (round 14).

* Dask on an in-process cluster (``distributed.Client(processes=False)``, a common
  notebook setup) gave every warning of a worker's task twice: ``distributed.warn``
  warns in the worker's process, the client's own there, and again on the client. Once
  now, as on a process cluster and on the local schedulers.
* A metric of a recommendation table (``sufficient_reco@k``) beside a metric of the run
  against its other tables (``serendipity(kind='kotkov')@k``) is refused by both
  engines, "evaluate them in two calls", where one machine takes them in one: that
  refusal is documented now (docs/guides/scale_out.md), pinned here with the two calls'
  values, each one machine's.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest
from distributed import Client

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
from tests.helpers import engine_io

ENGINES = ["spark", "dask"]

RUN = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 12], "score": [0.9, 0.8, 0.7]})
#: judgments of documents the run never retrieves: a coverage warning
UNJUDGED = pl.DataFrame({"query_id": [1, 2], "doc_id": [99, 98], "relevance": [1, 1]})
QRELS = pl.DataFrame({"query_id": [1, 2], "doc_id": [10, 12], "relevance": [1, 1]})
#: a history that holds one of the run's three items: the catalogue's warning
HISTORY = pl.DataFrame(
    {"query_id": [1, 1, 2, 2, 2, 2, 2, 2, 2], "doc_id": [1, 2, 3, 4, 5, 6, 7, 8, 10]}
)

_NO_JUDGED = (
    "the run retrieves no judged document (0 of 2 judged documents, in 0 of 2 judged "
    "queries; it lists 2 of the 2 judged queries): every judged query scores as a ranking of no "
    "judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval scores "
    "such a run. Check that the run and the judgments name "
    "the same queries and documents (same collection, same id spelling)."
)
_CATALOGUE = (
    "interactions= holds only 1 of the 3 items of the run (column 'doc_id'): an item the "
    "interactions lack has no popularity and no user has seen it, so mcc@2 reads it as "
    "never seen, and the catalogue does not hold it. Ids that do not line up are "
    "the likely cause: give interactions= and the run the same 'doc_id' values (same "
    "spelling, same collection)."
)
#: (id, metrics, tables, per_query, the one warning's text)
WARNED: list[tuple[str, list[str], dict[str, pl.DataFrame], bool, str]] = [
    ("coverage-means", ["ndcg@5"], {"qrels": UNJUDGED}, False, _NO_JUDGED),
    ("coverage-per-query", ["ndcg@5"], {"qrels": UNJUDGED}, True, _NO_JUDGED),
    ("catalogue-means", ["mcc@2"], {"qrels": QRELS, "interactions": HISTORY}, False,
     _CATALOGUE),
    ("catalogue-per-query", ["mcc@2"], {"qrels": QRELS, "interactions": HISTORY}, True,
     _CATALOGUE),
]  # fmt: skip


@pytest.fixture(scope="module")
def in_process() -> Iterator[Client]:
    """A cluster whose worker runs in this process, as ``Client(processes=False)``
    starts it; not the default client (the suite's cluster and the local schedulers
    serve every other test as before): each compute here names it."""
    with Client(
        processes=False,
        n_workers=1,
        threads_per_worker=1,
        dashboard_address=None,
        set_as_default=False,
    ) as session:
        yield session


def _to_dask(frame: pl.DataFrame) -> dd.DataFrame:
    return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=1)


def _texts(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]


@pytest.mark.parametrize("scheduler", ["in-process", "synchronous", "threads"])
@pytest.mark.parametrize("partitions", [1, 2, 3])
@pytest.mark.parametrize(
    ("name", "metrics", "tables", "per_query", "text"), WARNED, ids=[c[0] for c in WARNED]
)
def test_dask_warns_once_on_an_in_process_cluster(
    name: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    per_query: bool,
    text: str,
    partitions: int,
    scheduler: str,
    in_process: Client,
) -> None:
    with warnings.catch_warnings(record=True) as one_machine:
        warnings.simplefilter("always")
        irm.evaluate(RUN, metrics, per_query=per_query, **tables)
    assert _texts(one_machine) == [text]
    # a local scheduler cannot run the peer-to-peer shuffle dask picks while a
    # distributed client is the default (the suite's cluster, where its tests ran
    # before on this worker): such a graph is built with the task shuffle
    local = scheduler != "in-process"
    with dask.config.set({"dataframe.shuffle.method": "tasks"} if local else {}):
        out = irm_dask.evaluate(
            _to_dask(RUN),
            metrics,
            per_query=per_query,
            partitions=partitions,
            **{k: _to_dask(v) for k, v in tables.items()},
        )
    chosen: Any = scheduler if local else in_process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out.compute(scheduler=chosen)
    assert _texts(caught) == [text]


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize(
    ("name", "metrics", "tables", "per_query", "text"), WARNED, ids=[c[0] for c in WARNED]
)
def test_dask_warns_once_on_a_process_cluster(
    name: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    per_query: bool,
    text: str,
    partitions: int,
    client: Client,
) -> None:
    out = irm_dask.evaluate(
        _to_dask(RUN),
        metrics,
        per_query=per_query,
        partitions=partitions,
        **{k: _to_dask(v) for k, v in tables.items()},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out.compute(scheduler=client)
    assert _texts(caught) == [text]


_RECO_RUN = pl.DataFrame(
    {
        "query_id": ["u1", "u1", "u2", "u2", "u3"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5],
    }
)
_RECO_QRELS = pl.DataFrame(
    {"query_id": ["u1", "u2", "u3"], "doc_id": ["a", "c", "e"], "relevance": [1, 1, 1]}
)
_RECO_HISTORY = pl.DataFrame(
    {"query_id": ["u1", "u2", "u3", "u3"], "doc_id": ["b", "a", "c", "a"]}
)
_TABLE_METRIC, _RUN_METRIC = "sufficient_reco@5", "serendipity(kind='kotkov')@5"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("partitions", [1, 2, 3])
def test_a_table_metric_beside_kotkov_serendipity_is_two_calls(
    partitions: int, engine: str, request: pytest.FixtureRequest
) -> None:
    # one machine takes them in one call, each mean over its own queries
    both = irm.evaluate(
        _RECO_RUN,
        [_TABLE_METRIC, _RUN_METRIC],
        qrels=_RECO_QRELS,
        interactions=_RECO_HISTORY,
    )
    evaluate, to_engine, back = engine_io(engine, request)
    name = "Spark" if engine == "spark" else "Dask"
    message = (
        f"metrics {_TABLE_METRIC!r} and {_RUN_METRIC!r} are computed from different "
        f"tables ({_TABLE_METRIC!r} describes the recommendation table, {_RUN_METRIC!r} "
        f"the run against its other tables): on {name}, evaluate them in two calls"
    )
    run, qrels, history = map(to_engine, (_RECO_RUN, _RECO_QRELS, _RECO_HISTORY))
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        back(
            evaluate(
                run,
                [_TABLE_METRIC, _RUN_METRIC],
                qrels=qrels,
                interactions=history,
                partitions=partitions,
            )
        )
    # the two calls the message asks for: each mean one machine's bits
    table = back(evaluate(run, [_TABLE_METRIC], partitions=partitions))
    rest = back(
        evaluate(run, [_RUN_METRIC], qrels=qrels, interactions=history, partitions=partitions)
    )
    assert table[_TABLE_METRIC].to_list() == both[_TABLE_METRIC].to_list()
    assert rest.to_dicts() == both.select("num_q", _RUN_METRIC).to_dicts()
