"""fuse refuses score= and rank= naming one column (round 32): the fused run has a score
column and a rank column, and one name for both gave polars' DuplicateError at collect."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm

A = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "rank": [1, 2]})
B = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d1"], "rank": [1, 2]})

MESSAGE = (
    "score='rank' and rank='rank' name one column, but the fused run gives its scores and "
    "its ranks in two columns named by them: leave score= out (a run without a score "
    "column is ordered by its rank column, lowest first), or rename the runs' rank column "
    "and pass its new name as score="
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_score_and_rank_naming_one_column_is_refused(lazy: bool) -> None:
    runs = {"a": A.lazy() if lazy else A, "b": B.lazy() if lazy else B}
    with pytest.raises(irm.InvalidValueError) as caught:
        irm.fuse(runs, "rrf", score="rank")
    assert str(caught.value) == MESSAGE


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_a_run_of_ranks_alone_fuses_by_its_ranks(lazy: bool) -> None:
    runs = {"a": A.lazy() if lazy else A, "b": B.lazy() if lazy else B}
    fused = irm.fuse(runs, "rrf")
    frame = fused.collect() if isinstance(fused, pl.LazyFrame) else fused
    # d1: 1/61 + 1/62, d2: 1/62 + 1/61: a tie, broken by the document id, descending
    assert frame.select("doc_id", "rank").rows() == [("d2", 1), ("d1", 2)]
