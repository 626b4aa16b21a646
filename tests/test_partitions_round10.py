"""``partitioned_by=`` on one machine refuses a query that spans two partitions (round 10).

Before, the module took the caller's word that no query spans two partitions: a run
whose query q1 has rows under part=0 and part=1 was evaluated twice for q1, once per
partition with part of its rows (``num_q`` 3 for 2 queries, ``map`` 0.667 for 0.917,
q1 listed twice per query), in silence, where Spark and Dask refuse the same files.
Each partition's queries are now read in the pass that evaluates it, and a query under
two values (of the run, or of the run and the judgments where they carry the column) is
refused with the engines' error.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "b"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
        "part": [0, 0, 1, 1, 1],  # q1 under 0 and 1
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "c", "a"], "relevance": [1, 1, 1]}
)
SPANNING = (
    "partitioned_by='part': query 'q1' has rows under more than one value of 'part' (in "
    "the run or the judgments), so the partitions do not keep each query whole; partition "
    "by a function of 'query_id' alone, or drop partitioned_by= to shuffle the rows by query"
)


def _hive(frame: pl.DataFrame, folder: Path) -> pl.LazyFrame:
    for (value,), rows in frame.group_by("part"):
        (folder / f"part={value}").mkdir(parents=True)
        rows.drop("part").write_parquet(folder / f"part={value}" / "0.parquet")
    return pl.scan_parquet(folder / "**" / "*.parquet", hive_partitioning=True)


@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("buckets", [2, "auto"])
def test_a_query_in_two_partitions_is_refused(
    tmp_path: Path, per_query: bool, buckets: int | str
) -> None:
    plan = irm.evaluate(
        _hive(RUN, tmp_path / "run"),
        ["map", "recall@10"],
        qrels=QRELS,
        partitioned_by="part",
        buckets=buckets,  # type: ignore[arg-type]
        per_query=per_query,
    )
    assert isinstance(plan, pl.LazyFrame)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(SPANNING)}$"):
        plan.collect()


def test_a_query_judged_under_another_partition_is_refused(tmp_path: Path) -> None:
    """The judgments carry the column: q1's are under part=1, its run rows under 0 (it
    was scored as unretrieved in partition 0's judgments pass, 0 in silence)."""
    run = RUN.with_columns(part=pl.Series([0, 0, 0, 1, 1]))
    qrels = QRELS.with_columns(part=pl.Series([1, 1, 1]))
    plan = irm.evaluate(
        _hive(run, tmp_path / "run"),
        ["map"],
        qrels=_hive(qrels, tmp_path / "qrels"),
        partitioned_by="part",
        buckets=2,
    )
    assert isinstance(plan, pl.LazyFrame)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(SPANNING)}$"):
        plan.collect()
    # each query whole in one partition, as the judgments: the one plan's values
    whole = run.with_columns(part=pl.Series([0, 0, 0, 1, 1]))
    judged = QRELS.with_columns(part=pl.Series([0, 0, 1]))
    got = irm.evaluate(
        _hive(whole, tmp_path / "run2"),
        ["map"],
        qrels=_hive(judged, tmp_path / "qrels2"),
        partitioned_by="part",
        buckets=2,
        per_query=True,
    )
    assert isinstance(got, pl.LazyFrame)
    expected = irm.evaluate(whole.drop("part"), ["map"], qrels=QRELS, per_query=True)
    assert isinstance(expected, pl.DataFrame)
    assert got.collect().equals(expected)
