"""Round 33 engines: an Enum key column of ``systems=`` or ``by=`` keeps its dtype and
its order on Dask, as on one machine.

One machine sorts the result rows by an Enum key in the Enum's order (``y`` before
``x`` for ``pl.Enum(["y", "x", "w"])``), gives the key back as that Enum and warns of
its systems in that order. Dask read the key as text: rows and per-system coverage
warnings came in text order (``w``, ``x``, ``y``) and the key came back as a plain
(unordered) Arrow dictionary of the values seen. An Enum reaches Dask as an ordered
Arrow dictionary whose dictionary (in the frame's ``meta``) is the Enum's categories:
Dask now reads them at the call and gives one machine's dtype, rows and warnings.
"""

from __future__ import annotations

from typing import Any

import dask
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from tests.helpers import warned

ENUM = pl.Enum(["y", "x", "w"])

#: y and x retrieve no judged document (each warned of); w retrieves q1's
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q1", "q2", "q1", "q2"],
        "doc_id": ["b", "c", "z", "z", "a", "c"],
        "rank": [1, 1, 1, 1, 1, 1],
        "g": ["x", "x", "y", "y", "w", "w"],
    },
    schema_overrides={"g": ENUM},
)
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
#: the judgments of every group, for by=
QRELS_BY = QRELS.join(pl.DataFrame({"g": ["w", "x", "y"]}, schema={"g": ENUM}), how="cross")


def _to_dask(frame: pl.DataFrame) -> Any:
    import dask.dataframe as dd
    import pandas as pd

    return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)


def _from_dask(out: Any) -> pl.DataFrame:
    """Dask's result in polars, an ordered Arrow dictionary (how an Enum reaches pandas)
    read back as the Enum of its dictionary, any other column as pl.from_arrow reads it."""
    table = pa.Table.from_pandas(out.compute(), preserve_index=False)
    frame: pl.DataFrame = pl.from_arrow(table)  # type: ignore[assignment]
    for field in table.schema:
        if pa.types.is_dictionary(field.type) and field.type.ordered:
            words = {tuple(c.dictionary.to_pylist()) for c in table.column(field.name).chunks}
            assert len(words) == 1, words
            enum = pl.Enum(list(words.pop()))
            frame = frame.with_columns(pl.col(field.name).cast(pl.String).cast(enum))
    return frame


@pytest.mark.parametrize(
    ("key", "per_query"),
    [("systems", False), ("systems", True), ("by", False), ("by", True)],
)
def test_dask_keeps_an_enum_keys_dtype_and_order(
    key: str, per_query: bool, request: pytest.FixtureRequest
) -> None:
    import polars_irmetrics.dask as irm_dask

    request.getfixturevalue("client")
    qrels = QRELS if key == "systems" else QRELS_BY
    kw: dict[str, Any] = {key: "g", "per_query": per_query}
    one, one_warned = warned(lambda: irm.evaluate(RUN, ["P@2", "mrr"], qrels=qrels, **kw))
    assert one["g"].dtype == ENUM
    # on distributed's default shuffle, P2P, which fails on Arrow dictionary columns (the
    # suite's cluster shuffles by tasks: tests/conftest.py)
    with dask.config.set({"dataframe.shuffle.method": "p2p"}):
        got, got_warned = warned(
            lambda: _from_dask(
                irm_dask.evaluate(_to_dask(RUN), ["P@2", "mrr"], qrels=_to_dask(qrels), **kw)
            )
        )
    if per_query:  # per-query rows come in partition order, each partition's sorted
        got = got.sort("g", "query_id")
    assert_frame_equal(got, one)
    assert got_warned == one_warned
    assert len(one_warned) == (2 if key == "systems" else 0)
