"""The eager entry points collect small in-memory tables with polars' in-memory engine
(its start is cheaper), larger or lazy ones, or any call under a user's engine affinity,
with polars' own choice; the values are the same bits either way."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ground import buckets
from polars_irmetrics.ground.buckets import eager_engine

RUN = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]})
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "a"], "relevance": [1, 2]})


def test_small_frames_take_the_in_memory_engine() -> None:
    assert eager_engine([RUN, QRELS, None]) == "in-memory"


def test_a_lazy_table_or_many_rows_leave_the_choice_to_polars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert eager_engine([RUN, QRELS.lazy()]) == "auto"
    monkeypatch.setattr(buckets, "IN_MEMORY_ROWS", RUN.height + QRELS.height - 1)
    assert eager_engine([RUN, QRELS]) == "auto"


@pytest.mark.parametrize("affinity", ["streaming", "in-memory"])
def test_a_users_engine_affinity_is_kept(affinity: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARS_ENGINE_AFFINITY", affinity)
    assert eager_engine([RUN]) == "auto"


def test_the_eager_call_gives_the_streaming_engines_bits() -> None:
    metrics = ["ndcg@2", "map", "P@1", "recall@2"]
    eager = irm.evaluate(RUN, metrics, qrels=QRELS, per_query=True)
    lazy = irm.evaluate(RUN.lazy(), metrics, qrels=QRELS.lazy(), per_query=True)
    assert isinstance(eager, pl.DataFrame)
    assert isinstance(lazy, pl.LazyFrame)
    assert eager.equals(lazy.collect(engine="streaming"))
