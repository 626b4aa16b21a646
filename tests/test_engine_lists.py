"""List-shaped runs and judgments on Spark and Dask (the ``spark`` and ``client``
fixtures of conftest.py): put in the long form by the one-machine conversion, so equal
to ``irm.evaluate`` on the same lists to the last bit, with its errors."""

from __future__ import annotations

import re
from pathlib import Path

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from dask.distributed import Client
from polars.testing import assert_frame_equal
from pyspark.sql import SparkSession

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark
from polars_irmetrics.errors import InvalidValueError

METRICS = ["ndcg@10", "map", "recall@2", "P@1", "mrr"]

# q1 ranks three documents with scores; q2 one; q3 retrieved nothing (an empty list);
# q4 is judged only. Judgments graded by a parallel list; by key "market".
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q3"],
        "doc_id": [["a", "b", "c"], ["c"], []],
        "score": [[3.0, 2.0, 2.0], [1.0], []],
        "market": ["de", "fr", "de"],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q3", "q4"],
        "doc_id": [["b", "c"], ["c", "a"], ["z"], ["y"]],
        "relevance": [[2, 1], [1, 1], [1], [3]],
        "market": ["de", "fr", "de", "fr"],
    }
)
# parallel lists of different lengths: q2's score list is short
BAD = pl.DataFrame(
    {"query_id": ["q1", "q2"], "doc_id": [["a"], ["c", "a"]], "score": [[1.0], [2.0]]}
)
BAD_MESSAGE = (
    "column 'score' of the run holds a list of 1 value(s) in query 'q2', where column "
    "'doc_id' holds 2; parallel lists must have the same length, one value per document"
)


def _expected(per_query: bool) -> pl.DataFrame:
    return irm.evaluate(RUN, METRICS, qrels=QRELS, by="market", per_query=per_query)


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(frame.columns[: 2 if "query_id" in frame.columns else 1])


# the lists are put in the long form before the parts (engines._spark_lists and
# _dask_lists), the per-query values and the means made of them as in every call: per
# query on Spark; on Dask per query from Arrow-typed lists, the means from numpy arrays
# (test_dask_takes_lists_read_from_parquet)
@pytest.mark.parametrize("per_query", [True])
def test_spark_takes_lists(spark: SparkSession, per_query: bool) -> None:
    got = irm_spark.evaluate(
        spark.createDataFrame(RUN.to_arrow()),
        METRICS,
        qrels=spark.createDataFrame(QRELS.to_arrow()),
        by="market",
        per_query=per_query,
    )
    out = pl.from_arrow(got.toArrow())
    assert isinstance(out, pl.DataFrame)
    assert_frame_equal(_sorted(out), _sorted(_expected(per_query)), check_exact=True)


def test_spark_list_errors_are_evaluates(spark: SparkSession) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(BAD_MESSAGE)):
        irm.evaluate(BAD, ["map"], qrels=QRELS)
    with pytest.raises(InvalidValueError, match=re.escape(BAD_MESSAGE)):
        irm_spark.evaluate(
            spark.createDataFrame(BAD.to_arrow()),
            ["map"],
            qrels=spark.createDataFrame(QRELS.to_arrow()),
        )


def _computed(frame: dd.DataFrame) -> pl.DataFrame:
    out = pl.from_arrow(pa.Table.from_pandas(frame.compute(), preserve_index=False))
    assert isinstance(out, pl.DataFrame)
    return out


@pytest.mark.parametrize("per_query", [True])
def test_dask_takes_arrow_typed_lists(client: Client, per_query: bool) -> None:
    run = dd.from_pandas(RUN.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)
    qrels = dd.from_pandas(QRELS.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)
    got = irm_dask.evaluate(run, METRICS, qrels=qrels, by="market", per_query=per_query)
    assert_frame_equal(_sorted(_computed(got)), _sorted(_expected(per_query)), check_exact=True)


def test_dask_takes_lists_read_from_parquet(client: Client, tmp_path: Path) -> None:
    # dd.read_parquet's default: object columns holding numpy arrays, told apart from
    # ids by the first row
    RUN.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    run = dd.read_parquet(tmp_path / "run.parquet")
    assert run._meta["doc_id"].dtype == object
    got = irm_dask.evaluate(
        run, METRICS, qrels=dd.read_parquet(tmp_path / "qrels.parquet"), by="market"
    )
    assert_frame_equal(_sorted(_computed(got)), _sorted(_expected(False)), check_exact=True)


def test_dask_list_errors_are_evaluates(client: Client) -> None:
    run = dd.from_pandas(BAD.to_pandas(types_mapper=pd.ArrowDtype), npartitions=1)
    qrels = dd.from_pandas(QRELS.to_pandas(types_mapper=pd.ArrowDtype), npartitions=1)
    with pytest.raises(InvalidValueError, match=re.escape(BAD_MESSAGE)):
        irm_dask.evaluate(run, ["map"], qrels=qrels).compute()
