"""Off-policy evaluation on the engines, round 17: a policy row of a null round is
refused on Spark and Dask as in one plan, whatever the number of partitions. Each
engine splits the tables by a hash of the round; every null round lands in one part,
and where that part held no log row (4 rounds: Dask in 5, 8, 10 or 11 partitions,
Spark in 6, 10, 12 or 13) nothing carried the refusal: ips 1.0958 in silence. The side
tables' null-id rows now go to the part of the log's first row."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from polars_irmetrics.errors import InvalidValueError

from .test_ope_nulls_round17 import LOG, P_LONG, POLICY

NULL_ROW = pl.DataFrame({"round_id": [None], "action": [0], "prob": [0.5]}, schema=POLICY.schema)
MESSAGE = P_LONG  # policy='s refusal of a null round, as in one plan


def _pandas(frame: pl.DataFrame) -> Any:
    nullable = {
        c: "Int64" for c, s in frame.to_dict().items() if s.dtype.is_integer() and s.has_nulls()
    }
    return frame.to_pandas().astype(nullable)


@pytest.mark.parametrize("partitions", [5, 8, 11])
def test_dask_refuses_a_null_round_in_any_partition(partitions: int, client: Any) -> None:
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    def frame(f: pl.DataFrame) -> Any:
        return dd.from_pandas(_pandas(f), npartitions=2)

    policy = frame(pl.concat([POLICY, NULL_ROW]))
    with pytest.raises(InvalidValueError) as caught:
        irm_dask.evaluate(frame(LOG), ["ips"], policy=policy, partitions=partitions).compute()
    assert str(caught.value) == MESSAGE


@pytest.mark.parametrize("partitions", [6, 10, 13])
def test_spark_refuses_a_null_round_in_any_partition(partitions: int, spark: Any) -> None:
    import polars_irmetrics.spark as irm_spark

    policy = spark.createDataFrame(_pandas(pl.concat([POLICY, NULL_ROW])))
    log = spark.createDataFrame(_pandas(LOG))
    with pytest.raises(InvalidValueError) as caught:
        irm_spark.evaluate(log, ["ips"], policy=policy, partitions=partitions).collect()
    assert str(caught.value) == MESSAGE
