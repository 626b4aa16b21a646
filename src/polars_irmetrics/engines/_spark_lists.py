"""List-shaped runs and judgments on Spark: exploded to the long form first.

Each batch of a side whose ``doc_id`` is an ``ArrayType`` goes through
:class:`~polars_irmetrics.engines._long_form.LongForm` (polars, in the Python worker,
``mapInArrow``: no shuffle, the same stage as the read); a library error found in the
data (a null list, parallel lists of different lengths) is carried to the driver and
raised there with :func:`polars_irmetrics.evaluate`'s message.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from polars_irmetrics.engines._long_form import LongForm, long_forms, ranked_options
from polars_irmetrics.engines._partition import carry_error
from polars_irmetrics.engines._spark_arrow import arrow_of
from polars_irmetrics.errors import IrmError
from polars_irmetrics.ground.options import EvalOptions

__all__ = ["spark_long_form"]


def spark_long_form(
    run: DataFrame, qrels: DataFrame | None, options: EvalOptions
) -> tuple[DataFrame, DataFrame | None, EvalOptions]:
    """``run`` and ``qrels`` in the long form (each unchanged unless it is list-shaped),
    and ``options`` with the rank column marked where it is the run's lists' positions
    (:func:`~polars_irmetrics.engines._long_form.ranked_options`)."""
    run_schema = arrow_of(run)
    run_form, qrels_form = long_forms(
        run_schema,
        None if qrels is None else arrow_of(qrels),
        options,
    )
    if run_form is not None:
        run = _exploded(run, run_form)
    if qrels is not None and qrels_form is not None:
        qrels = _exploded(qrels, qrels_form)
    return run, qrels, ranked_options(run_schema, options)


def _exploded(frame: DataFrame, form: LongForm) -> DataFrame:
    source = arrow_of(frame)
    target = form.schema(source)

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            try:
                table = form.table(pa.Table.from_batches([batch], schema=source))
            except IrmError as exc:  # raised on the driver by the engine's _compute
                raise carry_error(exc) from exc
            yield from table.to_batches()

    return frame.mapInArrow(task, from_arrow_schema(target))
