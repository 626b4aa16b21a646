"""Round 35: the Dask agreement warning's task computes each merge it asks for once.

Each Dask collection given to ``delayed(f)`` apart is optimized alone with keys of its
own, so the merges two arguments share ran once per argument (the run's query keys
against the reference's, read for their size and again for their count). The graphs
are only built here (no cluster, nothing computed but one local sum)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest

import polars_irmetrics.dask as irm_dask
from polars_irmetrics.engines import _agreement_dask, _dask_frames
from polars_irmetrics.engines._dask_frames import shared

#: Four queries of two documents each.
REFERENCE = pl.DataFrame(
    {
        "query_id": [f"q{i}" for i in range(4) for _ in range(2)],
        "doc_id": ["a", "b"] * 4,
        "score": [2.0, 1.0] * 4,
    }
)


def _to_dask(frame: pl.DataFrame) -> Any:
    return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)


def _merges(graph: Any) -> int:
    """The hash-join tasks of ``graph``."""
    names = Counter(str(k[0] if isinstance(k, tuple) else k) for k in dict(graph))
    return sum(n for name, n in names.items() if name.startswith("blockwisemerge-"))


def test_collections_shared_compute_a_common_merge_once() -> None:
    left = _to_dask(REFERENCE)
    joined = left.merge(left[["query_id"]].drop_duplicates(), on="query_id")
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        size, count = shared([joined["doc_id"].size, joined["doc_id"].count()])
        graph = dask.delayed(lambda a, b: (int(a), int(b)))(size, count)
        # one merge of two partitions, where each collection alone asked for its own
        assert _merges(graph.dask) == 2
        assert graph.compute(scheduler="sync") == (8, 8)
    assert shared([]) == []


def test_an_older_dask_computes_each_collection_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # dask before 2025.4 has no collections_to_expr: each collection is its own Delayed
    monkeypatch.setattr(_dask_frames, "_together", None)
    left = _to_dask(REFERENCE)
    joined = left.merge(left[["query_id"]].drop_duplicates(), on="query_id")
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        size, count = shared([joined["doc_id"].size, joined["doc_id"].count()])
        graph = dask.delayed(lambda a, b: (int(a), int(b)))(size, count)
        assert _merges(graph.dask) == 4
        assert graph.compute(scheduler="sync") == (8, 8)


@pytest.mark.parametrize(
    ("systems", "merges"),
    [(None, 4), ("system", 5)],
    ids=["one run", "systems"],
)
def test_the_reference_warnings_task_merges_once_each(
    monkeypatch: pytest.MonkeyPatch, systems: str | None, merges: int
) -> None:
    tasks: list[Any] = []
    warned = _agreement_dask._warned

    def kept(*args: Any, **kwargs: Any) -> Any:
        tasks.append(warned(*args, **kwargs))
        return tasks[-1]

    monkeypatch.setattr(_agreement_dask, "_warned", kept)
    run = REFERENCE if systems is None else REFERENCE.with_columns(system=pl.lit("x"))
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        irm_dask.evaluate(
            _to_dask(run),
            ["rbo"],
            reference=_to_dask(REFERENCE),
            **({} if systems is None else {"systems": systems}),
        )
    # the run's query keys against the reference's, the documents likewise, and (text
    # ids) the two sides' missing ids; with systems=, each system's documents too: two
    # partitions each
    assert _merges(tasks[0].dask) == 2 * merges
