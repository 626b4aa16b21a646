"""Ids that do not line up, round 24.

1. ``irm.knn(..., exclude_self=True)`` where no query id is an id of the corpus (``'q1'``
   beside ``'d1'``, ids shifted by an offset, another numbering) left nothing out in
   silence: each query that is a row of the corpus under another id was its own nearest
   neighbour (a self-search read as perfect). It now gives a
   :class:`~polars_irmetrics.errors.CoverageWarning` naming the columns and a first id of
   each side, in memory and block by block from Parquet alike; and its refusal of ids
   of two kinds (text beside integers) names the cast that lines them up.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm


def _said(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """``call``'s result (collected) and the library's warnings it gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call()
        if isinstance(got, pl.LazyFrame):
            got = got.collect()
    return got, [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]


# --- 1. knn's exclude_self where no query id is a document id ---------------------------

_VECTORS = np.random.default_rng(24).standard_normal((6, 3))
CORPUS = pl.DataFrame({"doc_id": [1, 2, 3, 4, 5, 6], "embedding": _VECTORS.tolist()})
#: the corpus' first two rows searched as queries: each its own nearest neighbour
QUERIES = pl.DataFrame({"query_id": [1, 2], "embedding": _VECTORS[:2].tolist()})


def _no_self(
    query: object, doc: object, query_id: str = "query_id", doc_id: str = "doc_id"
) -> str:
    return (
        "exclude_self=True leaves out each query's own id, and the corpus holds none of the "
        f"2 query id(s) (column {query_id!r} of the queries, column {doc_id!r} of the corpus; "
        f"e.g. query {query!r}, document {doc!r}): nothing is left out, so a query that is a "
        "row of the corpus under another id finds itself first. Ids that do not line up are "
        "the likely cause: give the queries and the corpus the same ids (same spelling, same "
        "collection), or pass exclude_self=False where the queries are not rows of the corpus"
    )


def _texts(frame: pl.DataFrame, column: str, prefix: str) -> pl.DataFrame:
    return frame.with_columns(pl.format(prefix + "{}", pl.col(column)).alias(column))


# (case, the queries, the corpus, the warnings)
SELF: list[tuple[str, pl.DataFrame, pl.DataFrame, list[str]]] = [
    ("the same ids: no warning", QUERIES, CORPUS, []),
    (
        "Int32 query ids beside Int64 document ids: no warning",
        QUERIES.with_columns(pl.col("query_id").cast(pl.Int32)),
        CORPUS,
        [],
    ),
    (
        "Categorical query ids beside String ones: no warning",
        _texts(QUERIES, "query_id", "").with_columns(pl.col("query_id").cast(pl.Categorical)),
        _texts(CORPUS, "doc_id", ""),
        [],
    ),
    (
        "some query ids only (a query that is no row of the corpus): no warning",
        QUERIES.with_columns(pl.Series("query_id", [1, 100])),
        CORPUS,
        [],
    ),
    (
        "query ids shifted by an offset",
        QUERIES.with_columns(pl.col("query_id") + 100),
        CORPUS,
        [_no_self(101, 1)],
    ),
    (
        "text ids of two prefixes",
        _texts(QUERIES, "query_id", "q"),
        _texts(CORPUS, "doc_id", "d"),
        [_no_self("q1", "d1")],
    ),
    (
        "zero-padded query ids",
        _texts(QUERIES, "query_id", "00"),
        _texts(CORPUS, "doc_id", ""),
        [_no_self("001", "1")],
    ),
]


@pytest.mark.parametrize(("case", "queries", "corpus", "expected"), SELF, ids=[c[0] for c in SELF])
def test_exclude_self_that_leaves_nothing_out_is_warned_of(
    case: str, queries: pl.DataFrame, corpus: pl.DataFrame, expected: list[str]
) -> None:
    run, said = _said(lambda: irm.knn(queries, corpus, k=2, exclude_self=True))
    assert said == expected
    # each query is row 0 or 1 of the corpus: found first unless its own id is left out
    firsts = run.filter(pl.col("rank") == 1).get_column("doc_id").cast(pl.String).to_list()
    itself = [str(corpus["doc_id"][0]), str(corpus["doc_id"][1])]
    # (query 100 of "some query ids only" is no id of the corpus: it finds row 1 first)
    own = [True, True] if expected else [False, "some query ids only" in case]
    assert [a == b for a, b in zip(firsts, itself, strict=True)] == own


def test_exclude_self_from_parquet_blocks_warns_once(tmp_path: Path) -> None:
    """Block by block from a file: one warning, after the last block (a query's own id
    in a later block is found there: no warning)."""
    path = tmp_path / "corpus.parquet"
    CORPUS.write_parquet(path, row_group_size=2)
    _, said = _said(
        lambda: irm.knn(QUERIES.with_columns(pl.col("query_id") + 100), path, k=2,
                        exclude_self=True, block_size=2)
    )  # fmt: skip
    assert said == [_no_self(101, 1)]
    late = QUERIES.with_columns(pl.Series("query_id", [5, 6]))
    _, quiet = _said(lambda: irm.knn(late, path, k=2, exclude_self=True, block_size=2))
    assert quiet == []


def test_exclude_self_warning_names_the_columns_given() -> None:
    queries = QUERIES.rename({"query_id": "qid"}).with_columns(pl.col("qid") + 100)
    _, said = _said(
        lambda: irm.knn(
            queries, CORPUS.rename({"doc_id": "pid"}), k=2, exclude_self=True,
            query_id="qid", doc_id="pid",
        )
    )  # fmt: skip
    assert said == [_no_self(101, 1, "qid", "pid")]


# (case, the queries, the corpus, the refusal)
KINDS: list[tuple[str, Any, pl.DataFrame, str]] = [
    (
        "text query ids, integer document ids",
        _texts(QUERIES, "query_id", ""),
        CORPUS,
        "exclude_self=True compares query ids with document ids, but they have dtypes String "
        "and Int64: cast one of them, e.g. pl.col('doc_id').cast(pl.String) on the corpus",
    ),
    (
        "integer query ids, text document ids",
        QUERIES,
        _texts(CORPUS, "doc_id", ""),
        "exclude_self=True compares query ids with document ids, but they have dtypes Int64 "
        "and String: cast one of them, e.g. pl.col('query_id').cast(pl.String) on the queries",
    ),
]


@pytest.mark.parametrize(
    ("case", "queries", "corpus", "message"), KINDS, ids=[c[0] for c in KINDS]
)
def test_exclude_self_ids_of_two_kinds_name_the_cast(
    case: str, queries: Any, corpus: pl.DataFrame, message: str
) -> None:
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.knn(queries, corpus, k=2, exclude_self=True)
    # the cast named lines the ids up: each query's own id left out, no warning
    fixed = (
        (queries, corpus.with_columns(pl.col("doc_id").cast(pl.String)))
        if "on the corpus" in message
        else (queries.with_columns(pl.col("query_id").cast(pl.String)), corpus)
    )
    run, said = _said(lambda: irm.knn(*fixed, k=2, exclude_self=True))
    assert said == []
    assert run.filter(pl.col("rank") == 1)["doc_id"].cast(pl.String).to_list() != ["1", "2"]
