"""Round 15 of the vector wing: knn's id columns named as the run's own columns.

``irm.knn(queries, corpus, query_id="score")`` (or ``doc_id="rank"``...) returns a run of
``query_id``, ``doc_id``, ``score`` and ``rank`` columns: an id column named ``score`` or
``rank`` was polars' DuplicateError after the whole corpus was searched. It is refused
at the call, naming the option, the column and the fix.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

_QUERIES = pl.DataFrame({"q": [1, 2], "embedding": [[1.0, 0.0], [0.0, 1.0]]})
_CORPUS = pl.DataFrame({"d": [1, 2, 3], "embedding": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]})


@pytest.mark.parametrize(
    ("query_id", "doc_id", "name", "table"),
    [
        ("score", "d", "query_id", "queries"),
        ("rank", "d", "query_id", "queries"),
        ("q", "score", "doc_id", "corpus"),
        ("q", "rank", "doc_id", "corpus"),
    ],
)
def test_knn_refuses_an_id_column_named_as_a_run_column(
    query_id: str, doc_id: str, name: str, table: str
) -> None:
    value = query_id if name == "query_id" else doc_id
    message = (
        f"{name}={value!r} names the column {value!r}, which is also a column of the run "
        f"knn returns (its {value}s); rename the ids first, e.g. "
        f"{table}.rename({{{value!r}: {value + '_id'!r}}}), and pass {name}={value + '_id'!r}"
    )
    queries = _QUERIES.rename({"q": query_id})
    corpus = _CORPUS.rename({"d": doc_id})
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.knn(queries, corpus, k=2, query_id=query_id, doc_id=doc_id)


def test_knn_reads_an_embedding_column_named_score() -> None:
    """The embedding column is no column of the run: any name serves."""
    queries = _QUERIES.rename({"embedding": "score"})
    corpus = _CORPUS.rename({"embedding": "score"})
    out = irm.knn(queries, corpus, k=1, query_id="q", doc_id="d", embedding="score")
    assert out.select("q", "d").rows() == [(1, 1), (2, 2)]
