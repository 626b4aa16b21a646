"""List-shaped runs and judgments on Dask: exploded to the long form first.

Each partition of a side whose ``doc_id`` holds lists goes through
:class:`~polars_irmetrics.engines._long_form.LongForm` (``map_partitions``, through
Arrow and polars: no shuffle). A list column typed as such (``pd.ArrowDtype`` of a
list, as ``dd.read_parquet(..., dtype_backend="pyarrow")`` gives) is seen in the
frame's ``meta``; an ``object`` column (Python lists in pandas) is told from a column
of ids by its first value (``head(1)``: the first partition is computed once).
"""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa

from polars_irmetrics.engines._dask_frames import arrow_of, to_pandas, to_table
from polars_irmetrics.engines._long_form import LongForm, long_forms, ranked_options
from polars_irmetrics.engines._partition import check_run_columns
from polars_irmetrics.errors import ColumnNotFoundError
from polars_irmetrics.ground.options import EvalOptions

__all__ = ["dask_long_form", "listed_schema", "named_columns"]


def dask_long_form(
    run: dd.DataFrame, qrels: dd.DataFrame | None, options: EvalOptions
) -> tuple[dd.DataFrame, dd.DataFrame | None, EvalOptions]:
    """``run`` and ``qrels`` in the long form (each unchanged unless it is list-shaped),
    and ``options`` with the rank column marked where it is the run's lists' positions
    (:func:`~polars_irmetrics.engines._long_form.ranked_options`)."""
    lists = (options.doc_id, options.score, options.rank, options.relevance)
    run_schema = _schema(run, lists)
    qrels_schema = None if qrels is None else _schema(qrels, lists)
    run_form, qrels_form = long_forms(run_schema, qrels_schema, options)
    if run_form is not None:
        run = _exploded(run, run_schema, run_form)
    if qrels is not None and qrels_schema is not None and qrels_form is not None:
        qrels = _exploded(qrels, qrels_schema, qrels_form)
    return run, qrels, ranked_options(run_schema, options)


def named_columns(run: dd.DataFrame, options: EvalOptions) -> pa.Schema:
    """The run's Arrow schema as the check of the columns ``rank=``, ``score=`` and
    ``sample_id=`` name reads it
    (:func:`~polars_irmetrics.engines._partition.check_run_columns`): from the frame's
    ``meta``, where that check passes on it or ``doc_id`` is not an ``object`` column;
    otherwise with the list types read from the first row, as :func:`dask_long_form`
    reads them (a list-shaped run's positions are the column ``rank=`` names). So the
    first partition is computed only where a refusal would depend on it."""
    schema = arrow_of(run)
    try:
        check_run_columns(options, schema)
    except ColumnNotFoundError:
        lists = (options.doc_id, options.score, options.rank, options.relevance)
        return _schema(run, lists)
    return schema


def listed_schema(frame: dd.DataFrame, options: EvalOptions) -> pa.Schema:
    """The Arrow schema of ``frame`` with its list columns typed as lists, where they
    are ``object`` columns of Python lists (read from the first row, as
    :func:`dask_long_form` reads them): the schema a task's polars frame has."""
    return _schema(frame, (options.doc_id, options.score, options.rank, options.relevance))


def _schema(frame: dd.DataFrame, lists: tuple[str, ...]) -> pa.Schema:
    """The Arrow schema of ``frame``, with the types of its ``object`` columns among
    ``lists`` read from their first row when ``doc_id`` (``lists[0]``) is one."""
    schema = arrow_of(frame)
    objects = [c for c in lists if c in frame.columns and frame._meta[c].dtype == object]
    if lists[0] not in objects:
        return schema
    first = frame[objects].head(1)
    if not len(first) or not isinstance(first[lists[0]].iloc[0], list | tuple | np.ndarray):
        return schema
    types = to_table(first).schema
    return pa.schema(types.field(f.name) if f.name in objects else f for f in schema)


def _exploded(frame: dd.DataFrame, schema: pa.Schema, form: LongForm) -> dd.DataFrame:
    target = form.schema(schema)

    def part(pandas: pd.DataFrame) -> pd.DataFrame:
        table = pa.Table.from_pandas(pandas, schema=schema, preserve_index=False)
        return to_pandas(form.table(table))

    return frame.map_partitions(part, meta=to_pandas(target.empty_table()), enforce_metadata=False)
