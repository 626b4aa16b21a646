"""A ``by`` key of the run alone, out of core (``buckets=``, ``memory_limit=``), round 14:
the refusal of the judged queries (or the reference's) that some group did not retrieve
counts and shows the whole table's, as one plan does, not the first refusing bucket's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, QuerySetError
from polars_irmetrics.ground.validate import UnplacedParts, raise_unplaced

# 12 queries, each retrieved under one 'seg' (q00, q02...: seg=0; q01, q03...: seg=1),
# all of them judged and in the reference: every one is missed by the other group
_QUERIES = [f"q{i:02d}" for i in range(12)]
RUN = pl.DataFrame(
    {
        "query_id": [q for q in _QUERIES for _ in range(2)],
        "doc_id": [f"d{i + j}" for i in range(12) for j in range(2)],
        "score": [0.9, 0.5] * 12,
        "seg": [i % 2 for i in range(12) for _ in range(2)],
    }
)
QRELS = pl.DataFrame(
    {"query_id": _QUERIES, "doc_id": [f"d{i}" for i in range(12)], "relevance": [1] * 12}
)
REFERENCE = pl.DataFrame(
    {"query_id": _QUERIES, "doc_id": [f"d{i + 1}" for i in range(12)], "rank": [1] * 12}
)

_ADVICE = (
    "If 'seg' is an attribute of the query (day, market, segment), give each {one} its "
    "'seg': {how}; if it names systems or runs ({scored}), pass systems='seg' instead of "
    "by=; or pass unretrieved='drop' to score each group on the queries it retrieved"
)


def _judgments(count: int) -> str:
    return (
        "by key 'seg' is in the run but not in the judgments: the judgments do not say "
        f"which 'seg' each judged query belongs to, so {count} judged queries that some of "
        "the 2 groups did not retrieve cannot be placed (e.g. query 'q00': the run lists it "
        "under seg=0, and the judgments cannot tell whether it belongs to the other groups "
        "too). "
        + _ADVICE.format(
            one="judged query",
            how="with queries= (a table of query ids and 'seg', e.g. queries=run.select("
            "'query_id', 'seg').unique()), or in a 'seg' column of the judgments",
            scored="each scored on every judged query",
        )
    )


JUDGMENTS = _judgments(12)
REFERENCE_MESSAGE = (
    "by key 'seg' is in the run but not in the reference: the reference does not say "
    "which 'seg' each query of the reference belongs to, so 12 queries of the reference "
    "that some of the 2 groups did not retrieve cannot be placed (e.g. query 'q00': the "
    "run lists it under seg=0, and the reference cannot tell whether it belongs to the "
    "other groups too). "
    + _ADVICE.format(
        one="query of the reference",
        how="in a 'seg' column of the reference",
        scored="each compared with the reference on every query",
    )
)

#: (metric, its side table, the message of one plan)
CASES = [
    ("ndcg@5", {"qrels": QRELS}, JUDGMENTS),
    ("ncrr@5", {"qrels": QRELS}, JUDGMENTS),
    ("intersection@5", {"reference": REFERENCE}, REFERENCE_MESSAGE),
]
#: one plan, then out of core: N buckets, 'auto' (one here), and memory_limit= (bytes)
#: small enough that 'auto-memory' (the default) splits
PATHS: list[dict[str, Any]] = [
    {"buckets": None},
    {"buckets": 2},
    {"buckets": 3},
    {"buckets": 5},
    {"buckets": "auto"},
    {"memory_limit": 400},
]


def _collected(result: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    # a scan's evaluation is lazy: the buckets run, and refuse, when it is collected
    return result.collect() if isinstance(result, pl.LazyFrame) else result


def _reads_memory_limit(metric: str, options: dict[str, Any]) -> bool:
    # rank similarity refuses memory_limit=: only the metrics of judgments read it
    return "memory_limit" not in options or metric != "intersection@5"


@pytest.mark.parametrize(
    ("metric", "side", "message", "options"),
    [
        pytest.param(metric, side, message, options, id=f"{metric}-{options}")
        for metric, side, message in CASES
        for options in PATHS
        if _reads_memory_limit(metric, options)
    ],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "scan"])
def test_unplaced_refusal_counts_the_whole_table_out_of_core(
    metric: str,
    side: dict[str, pl.DataFrame],
    message: str,
    options: dict[str, Any],
    lazy: bool,
    tmp_path: Path,
) -> None:
    run: pl.DataFrame | pl.LazyFrame = RUN
    if lazy:
        RUN.write_parquet(tmp_path / "run.parquet")
        run = pl.scan_parquet(tmp_path / "run.parquet")
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        _collected(irm.evaluate(run, [metric], **side, by="seg", **options))


# the run partitioned by a column of its own (3 values); the judgments with a 13th query,
# q12, that no partition retrieves (evaluated last, against an empty run)
PARTED = RUN.with_columns(part=pl.col("query_id").str.slice(1).cast(pl.Int64) % 3)
MORE_QRELS = pl.concat(
    [QRELS, pl.DataFrame({"query_id": ["q12"], "doc_id": ["d12"], "relevance": [1]})]
)


@pytest.mark.parametrize("metric", ["ndcg@5", "ncrr@5"])
@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "hive-scan"])
@pytest.mark.parametrize(
    ("qrels", "count"), [(QRELS, 12), (MORE_QRELS, 13)], ids=["judged-retrieved", "judged-rest"]
)
def test_unplaced_refusal_counts_every_partition(
    metric: str, lazy: bool, qrels: pl.DataFrame, count: int, tmp_path: Path
) -> None:
    message = _judgments(count)
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        irm.evaluate(PARTED, [metric], qrels=qrels, by="seg")  # one plan
    run: pl.DataFrame | pl.LazyFrame = PARTED
    if lazy:
        PARTED.write_parquet(tmp_path / "run", partition_by="part")
        run = pl.scan_parquet(tmp_path / "run", hive_partitioning=True)
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        _collected(
            irm.evaluate(run, [metric], qrels=qrels, by="seg", partitioned_by="part", buckets=2)
        )


def test_memory_limit_splits_this_table(capsys: pytest.CaptureFixture[str]) -> None:
    """The ``memory_limit=`` case above goes out of core (else it pins nothing)."""
    with pytest.raises(QuerySetError):
        irm.evaluate(RUN, ["ndcg@5"], qrels=QRELS, by="seg", memory_limit=400, explain=True)
    assert "out of core in 10 buckets" in capsys.readouterr().out


def _refusal(queries: list[str]) -> pl.DataFrame:
    # each query retrieved under seg=0 alone: missed by seg=1
    return pl.DataFrame(
        {
            "seg": [0, 1] * len(queries),
            "query_id": [q for q in queries for _ in range(2)],
            "__irm_retrieved": [True, False] * len(queries),
        }
    )


def _refuse(judged: pl.DataFrame) -> None:
    raise_unplaced(judged, ["seg", "query_id"], ["seg"], "query_id")


def test_parts_refuse_once_with_every_parts_queries() -> None:
    parts = UnplacedParts()
    for queries in (["q2", "q3"], [], ["q1"]):
        with parts.part():
            if queries:
                _refuse(_refusal(queries))
    with pytest.raises(QuerySetError) as whole:
        _refuse(_refusal(["q1", "q2", "q3"]))
    with pytest.raises(QuerySetError, match=f"^{re.escape(str(whole.value))}$"):
        parts.raise_together()


def test_another_error_of_a_part_keeps_its_order() -> None:
    """Before a refusal, another error is raised at once; after one, the first refusal
    stands (as it did when the first refusing part raised)."""
    parts = UnplacedParts()
    with pytest.raises(DuplicateError, match=r"^twice$"), parts.part():
        raise DuplicateError("twice")
    with parts.part():
        _refuse(_refusal(["q2"]))
    with pytest.raises(QuerySetError) as first:
        _refuse(_refusal(["q2"]))
    with pytest.raises(QuerySetError, match=f"^{re.escape(str(first.value))}$"), parts.part():
        raise DuplicateError("twice")
