"""A Spark frame's schema in Arrow, as Spark's Arrow functions hand its rows to Python.

pyspark's ``to_arrow_schema`` needs a time zone for a ``TimestampType`` column (without
one it fails on a bare ``assert``); Spark writes such a column into the Arrow batches of
``mapInArrow``, ``applyInArrow`` and ``toArrow`` in the session's time zone
(``spark.sql.session.timeZone``), so the plans are built for that type.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

__all__ = ["arrow_in_session", "arrow_of"]


def arrow_of(frame: DataFrame) -> pa.Schema:
    """``frame``'s schema in Arrow, a ``TimestampType`` in its session's time zone."""
    return arrow_in_session(frame.schema, frame.sparkSession)


def arrow_in_session(schema: StructType, spark: SparkSession) -> pa.Schema:
    """``schema`` in Arrow, a ``TimestampType`` in the time zone of ``spark``."""
    zone = spark.conf.get("spark.sql.session.timeZone")
    return to_arrow_schema(schema, timezone=zone)
