"""The data and cases every engine is checked on against ``irm.evaluate``."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.io.files import sample_paths

# every metric of the registry that evaluate computes from a run and judgments (a
# parameter where one is required), and cutoff ranges; click and beyond-accuracy
# metrics read other tables, with entry points of their own
METRICS = [
    f"{m.name}@10" if m.cutoff == "required" else m.name
    for m in irm.list_metrics()
    if m.name not in ("iprec", "rprec_mult")
    and set(m.reads) <= {"run", "judgments"}
    and m.level == "query"
] + ["iprec@0.2", "rprec_mult@0.5", "ndcg@1..20:5", "P@5", "recall(denominator='capped')@20"]


def _sample() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Three systems in one long table (the sample has a query missing from one run
    and a run query without judgments), and the judgments."""
    runs, qrels_path = sample_paths()
    run = pl.concat([pl.read_parquet(p).with_columns(system=pl.lit(p.stem)) for p in runs])
    return run, pl.read_parquet(qrels_path)


RUN, QRELS = _sample()
RANKED = RUN.with_columns(
    rank=pl.col("score").rank("ordinal", descending=True).over("system", "query_id").cast(pl.Int32)
).drop("score")
ONE = RUN.filter(pl.col("system") == RUN["system"][0]).drop("system")
JUDGED = (
    ONE.join(QRELS, on=["query_id", "doc_id"], how="full", coalesce=True)
    .with_columns(
        rank=pl.col("score").rank("ordinal", descending=True).over("query_id").cast(pl.Int32)
    )
    .filter(pl.col("relevance").is_not_null())
    .drop("score")
)
INT_RUN = ONE.with_columns(pl.col("query_id").str.slice(1).cast(pl.Int64))
INT_QRELS = QRELS.with_columns(pl.col("query_id").str.slice(1).cast(pl.Int32))


# (id, run, qrels, options): every metric family, by=, both orders, each query-set
# policy, judged tables, integer ids of two widths, depth and relevance_level. An option
# the engines hand unchanged to each part's one-machine plan (a query's rows are whole
# in its part) comes once: unjudged="zero" with no-by-zero-drop; unretrieved="drop" also
# with systems (a judged query some system lacks)
CASES: list[tuple[str, pl.DataFrame, pl.DataFrame | None, dict[str, Any]]] = [
    ("by-system-score", RUN, QRELS, {"systems": "system"}),
    ("rank-order", RANKED, QRELS, {"systems": ["system"], "order": "rank"}),
    ("unretrieved-drop", RUN, QRELS, {"systems": "system", "unretrieved": "drop"}),
    ("no-by-zero-drop", ONE, QRELS, {"unjudged": "zero", "unretrieved": "drop"}),
    ("judged-table", JUDGED, None, {}),
    ("integer-ids", INT_RUN, INT_QRELS, {"depth": 10, "relevance_level": 2}),
    ("unchecked", RANKED, QRELS, {"systems": "system", "check_duplicates": False}),
]


#: (id, run, qrels, options, per_query): every case per query; the means (one code path
#: whatever the case, over per-query values already checked) with and without ``by``
MATRIX = [
    *((name, run, qrels, options, True) for name, run, qrels, options in CASES),
    *(
        (f"means-{name}", run, qrels, options, False)
        for name, run, qrels, options in CASES
        if name in ("by-system-score", "no-by-zero-drop", "judged-table", "integer-ids")
    ),
]


def single_message(
    run: pl.DataFrame, qrels: pl.DataFrame | None, metrics: list[str], **kw: Any
) -> str:
    with pytest.raises(irm.IrmError) as single:
        irm.evaluate(run, metrics, qrels=qrels, **kw)
    return str(single.value)


_BINARY = {"label": "clicked", "prediction": "p", "query_id": "user"}
#: Options the requested metrics do not read, which every engine refuses with the
#: message of irm.evaluate's one check: (id, metrics, the input ("run": DENSE and
#: QRELS; "log": the prediction log), options).
UNREAD: list[tuple[str, list[str], str, dict[str, Any]]] = [
    ("sample_weight-with-map", ["map"], "run", {"sample_weight": "w"}),
    ("clicked-with-ndcg", ["ndcg@10", "P@5"], "run", {"clicked": "click"}),
    ("relevance_level-with-auc", ["auc"], "log", {**_BINARY, "relevance_level": 2}),
    ("unmatched-without-labels", ["auc"], "log", {**_BINARY, "unmatched": "drop"}),
    # beside graded metrics alone, or metrics with a level of their own
    ("relevance_level-with-ndcg", ["ndcg@10"], "run", {"relevance_level": 2}),
    ("relevance_level-with-own-level", ["P(rel=2)@5"], "run", {"relevance_level": 3}),
]


# (id, run, qrels, metrics, options, error class, part of the message)
ERRORS: list[
    tuple[str, pl.DataFrame, pl.DataFrame | None, list[str], dict[str, Any], type, str]
] = [
    (
        "duplicate-document",
        ONE.with_columns(
            doc_id=pl.when(pl.col("doc_id") == ONE["doc_id"][1])
            .then(pl.lit(ONE["doc_id"][0]))
            .otherwise("doc_id")
        ),
        QRELS,
        ["map"],
        {},
        irm.DuplicateError,
        "has 1 repeated listing(s)",
    ),
    (
        "null-query-id",
        ONE.with_columns(
            query_id=pl.when(pl.col("doc_id") == ONE["doc_id"][5]).then(None).otherwise("query_id")
        ),
        QRELS,
        ["ndcg@10"],
        {},
        irm.InvalidValueError,
        "column 'query_id' of the run has null values",
    ),
    (
        "unjudged-error",
        RUN,
        QRELS.filter(pl.col("query_id") != "q003"),
        ["map"],
        {"systems": "system", "unjudged": "error"},
        irm.QuerySetError,
        "in the run but not in the judgments",
    ),
]


# A run "partitioned by query": ``bucket`` is a hash of the query id, so no query spans
# two buckets; the judged query DENSE never retrieves gets a bucket of its own (9),
# which no partition of DENSE's run holds
DENSE = RUN.filter(pl.col("system") == "run_dense").drop("system")
UNRETRIEVED = sorted(set(QRELS["query_id"]) - set(DENSE["query_id"]))


def with_bucket(frame: pl.DataFrame, buckets: int = 4) -> pl.DataFrame:
    """``frame`` with a ``bucket`` column: a hash of its query id modulo ``buckets``."""
    query = pl.col("query_id").cast(pl.String)
    return frame.with_columns(
        bucket=pl.when(query.is_in(UNRETRIEVED))
        .then(9)
        .otherwise(query.hash(seed=7) % buckets)
        .cast(pl.Int64)
    )


#: (id, run, qrels, options, per_query) for ``partitioned_by="bucket"``: a flat or a
#: bucketed judgments table, ``by`` groups the judgments lack, the query-set policies
#: (DENSE misses a judged query), a judged table and integer ids
PARTITIONED: list[tuple[str, pl.DataFrame, pl.DataFrame | None, dict[str, Any], bool]] = [
    ("by-system", RUN, QRELS, {"systems": "system"}, True),
    ("means-by-system", RUN, QRELS, {"systems": "system"}, False),
    ("unretrieved-zero", DENSE, QRELS, {}, True),
    ("means-unretrieved-zero", DENSE, QRELS, {}, False),
    ("zero-drop", DENSE, QRELS, {"unjudged": "zero", "unretrieved": "drop"}, True),
    ("judged-table", JUDGED, None, {}, True),
    ("integer-ids", INT_RUN, INT_QRELS, {"depth": 10, "relevance_level": 2}, True),
]


#: Attributes of every judged or retrieved query, for ``queries=`` with ``by="segment"``:
#: DENSE's unretrieved judged queries count in their own segment, as on one machine
QUERIES = pl.DataFrame(
    {"query_id": sorted(set(QRELS["query_id"]) | set(DENSE["query_id"]))}
).with_columns(
    segment=pl.when(pl.col("query_id").hash(seed=3) % 2 == 0)
    .then(pl.lit("mobile"))
    .otherwise(pl.lit("desktop"))
)
