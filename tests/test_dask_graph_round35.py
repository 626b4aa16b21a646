"""Round 35: the Dask agreement warning's task computes each merge it asks for once
(round 36: it asks for none, tests/test_agreement_dask_round36.py).

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
from dask.base import collections_to_expr

import polars_irmetrics.dask as irm_dask
from polars_irmetrics.engines import _dask_frames
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


@pytest.mark.parametrize("systems", [None, "system"], ids=["one run", "systems"])
def test_the_reference_warnings_task_merges_once_each(systems: str | None) -> None:
    run = REFERENCE if systems is None else REFERENCE.with_columns(system=pl.lit("x"))
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        out = irm_dask.evaluate(
            _to_dask(run),
            ["rbo"],
            reference=_to_dask(REFERENCE),
            **({} if systems is None else {"systems": systems}),
        )
        graph = collections_to_expr([out]).finalize_compute().optimize().__dask_graph__()
    # round 36: the warning's counts come from the result's own parts (each pair of
    # partitions holds its queries' rows of both sides), no merge at all (round 35: one
    # per count, 4 merges, 5 with systems=, of two partitions each)
    assert _merges(graph) == 0
