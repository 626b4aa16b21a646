"""Round 34 engines: a Dask ``systems=`` / ``by=`` key held as an Enum gives one
machine's values and words.

* A hand-built Dask frame whose part holds a value outside its meta's Enum failed at
  compute with polars' own cast error text; it is refused in the library's words.
* An Enum whose meta holds no categories (``dd.read_parquet``'s meta) came back as a
  dictionary of the values seen, in text order; the parts' categories are read.
* One machine reads a key as text where the judgments hold it in another dtype than
  the run's (an Enum beside String); Dask gave the run's Enum back.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
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


def _pandas(frame: pl.DataFrame) -> Any:
    import pandas as pd

    return frame.to_pandas(types_mapper=pd.ArrowDtype)


def _to_dask(frame: pl.DataFrame, npartitions: int = 2) -> Any:
    import dask.dataframe as dd

    return dd.from_pandas(_pandas(frame), npartitions=npartitions)


def _from_dask(out: Any) -> pl.DataFrame:
    """Dask's result in polars, an ordered Arrow dictionary (how an Enum reaches pandas)
    read back as the Enum of its dictionary."""
    table = pa.Table.from_pandas(out.compute(), preserve_index=False)
    frame: pl.DataFrame = pl.from_arrow(table)  # type: ignore[assignment]
    for field in table.schema:
        if pa.types.is_dictionary(field.type) and field.type.ordered:
            words = {tuple(c.dictionary.to_pylist()) for c in table.column(field.name).chunks}
            assert len(words) == 1, words
            enum = pl.Enum(list(words.pop()))
            frame = frame.with_columns(pl.col(field.name).cast(pl.String).cast(enum))
    return frame


def test_dask_refuses_a_part_holding_a_value_outside_its_metas_enum(
    request: pytest.FixtureRequest,
) -> None:
    import dask.dataframe as dd
    from dask.delayed import delayed

    import polars_irmetrics.dask as irm_dask

    request.getfixturevalue("client")
    first = _pandas(RUN.head(2).with_columns(pl.col("g").cast(pl.Enum(["y", "x"]))))
    # the second part's Enum holds 'v', which the meta's (the first part's) lacks
    second = _pandas(
        RUN.slice(2, 2).with_columns(pl.Series("g", ["v", "y"], dtype=pl.Enum(["y", "x", "v"])))
    )
    run = dd.from_delayed([delayed(first), delayed(second)], meta=first.iloc[:0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InvalidValueError) as info:
            irm_dask.evaluate(run, ["P@2"], qrels=_to_dask(QRELS), systems="g").compute()
    assert str(info.value) == (
        "column 'g' of the run holds 'v', which is none of the categories of its Enum in "
        "the Dask frame's meta (['y', 'x']): one frame's Enum cannot hold it (a part holds "
        "another Enum than the meta's); give the meta and every part one Enum of every "
        "value, e.g. pl.Enum(['y', 'x', 'v']), or cast the column to text (pl.String) on "
        "every part"
    )
    assert not [w for w in caught if issubclass(w.category, irm.IrmWarning)]


@pytest.mark.parametrize(
    ("case", "kw"),
    [
        # an Enum's parquet parts, whose meta (dd.read_parquet's) holds no categories
        ("parquet", {"systems": "g"}),
        ("parquet", {"by": "g", "per_query": True}),
        # one machine reads g as text beside judgments holding it as text
        ("text judgments", {"by": "g"}),
    ],
)
def test_dask_gives_an_enum_keys_dtype_rows_and_warnings_as_one_machine(
    case: str, kw: dict[str, Any], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    request.getfixturevalue("client")
    qrels = QRELS if "systems" in kw else QRELS_BY
    if case == "parquet":
        RUN.head(3).write_parquet(tmp_path / "a.parquet")
        RUN.tail(3).write_parquet(tmp_path / "b.parquet")
        run = dd.read_parquet(str(tmp_path), dtype_backend="pyarrow")
        assert run._meta["g"].array._pa_array.chunks[0].dictionary.to_pylist() == []
    else:
        qrels = qrels.with_columns(pl.col("g").cast(pl.String))
        run = _to_dask(RUN)
    one, one_warned = warned(lambda: irm.evaluate(RUN, ["P@2"], qrels=qrels, **kw))
    assert one["g"].dtype == (pl.String if case == "text judgments" else ENUM)
    got, got_warned = warned(
        lambda: _from_dask(irm_dask.evaluate(run, ["P@2"], qrels=_to_dask(qrels), **kw))
    )
    if "per_query" in kw:  # per-query rows come in partition order, each partition's sorted
        got = got.sort("g", "query_id")
    assert_frame_equal(got, one)
    assert got_warned == one_warned
