"""What the Dask engine's modules share: pandas partitions to Arrow and back, the
frames' schemas, and the judgments crossed with the run's ``by`` groups."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
from dask.delayed import Delayed, delayed
from dask.highlevelgraph import HighLevelGraph

from polars_irmetrics.engines._partition import PART, Job, Refusal, arrow_schema, raise_least

_together: Callable[..., Any] | None
try:  # Dask's (not public, 2025.4 on) expression of several collections together
    from dask.base import collections_to_expr as _together
except ImportError:  # pragma: no cover - an older Dask: each collection optimized alone
    _together = None

__all__ = [
    "after",
    "arrow_of",
    "computed",
    "meta",
    "shared",
    "to_pandas",
    "to_table",
    "with_groups",
]


def to_table(frame: pd.DataFrame) -> pa.Table:
    """A pandas partition as an Arrow table (its index dropped)."""
    return pa.Table.from_pandas(frame, preserve_index=False)


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """An Arrow table as a pandas frame with pyarrow-backed columns (no NaN for null)."""
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def meta(schema: pl.Schema) -> pd.DataFrame:
    """The empty pandas frame Dask takes as the ``meta`` of a result of ``schema``."""
    return to_pandas(arrow_schema(schema).empty_table())


def arrow_of(frame: dd.DataFrame) -> pa.Schema:
    """The Arrow schema of a Dask frame, from its empty ``_meta`` (an object column,
    which holds Python strings in Dask, reads as a string column)."""
    schema = pa.Schema.from_pandas(frame._meta, preserve_index=False)
    fields = [f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in schema]
    return pa.schema(fields)


def with_groups(run: dd.DataFrame, qrels: dd.DataFrame, job: Job) -> dd.DataFrame:
    """The judgments, crossed with the run's distinct groups of the ``by`` keys they
    lack (as the one-machine plan does); unchanged when they lack none.

    Dask has no cross join: the groups, found by a tree reduction over the run (no
    shuffle of its rows) into one partition, are merged on a constant column.
    """
    if not job.run_only_by:
        return qrels
    one = f"{PART}_one"
    groups = run[list(job.run_only_by)].drop_duplicates(split_out=1).repartition(npartitions=1)
    return (
        qrels.assign(**{one: 1})
        .merge(groups.assign(**{one: 1}), on=one, how="inner")
        .drop(columns=one)
    )


def after(frame: pd.DataFrame, done: object) -> pd.DataFrame:
    """A partition of a result, once the task ``done`` is the output of has run (for
    ``map_partitions(after, task)``: a warning's task before the values are released)."""
    return frame


def computed(
    values: dd.DataFrame, refusals: Callable[[pd.DataFrame], list[Refusal]] | None = None
) -> tuple[dd.DataFrame, Delayed]:
    """``values`` again, and a task that runs once every partition of them is computed
    (their lengths alone travel to it): a warning's task that reads it is never reached
    where a part refuses the input, as one machine warns of nothing before refusing it.
    Both read the same tasks of the partitions (``to_delayed``), so each is computed
    once: the frame given back is to be read in place of ``values``. ``refusals``: the
    data errors a partition carries (where the parts hand them on rather than raise
    them: :func:`~polars_irmetrics.engines._partition.held_part`), the least of which
    that task raises."""
    parts = values.to_delayed()
    found = refusals or _none
    done = delayed(_all_computed)(*(delayed(found)(part) for part in parts))
    return dd.from_delayed(parts, meta=values._meta, verify_meta=False), done


def _none(frame: pd.DataFrame) -> list[Refusal]:
    return []


def _all_computed(*found: list[Refusal]) -> bool:
    raise_least(r for part in found for r in part)
    return True


def shared(collections: Sequence[object]) -> list[Delayed]:
    """Each of ``collections`` (Dask frames, series, scalars) as a ``Delayed`` of its
    computed value, all optimized together into one graph: what two of them share (a
    merge, a shuffle) is one set of tasks. Each collection passed to ``delayed(f)``
    apart is optimized alone and given keys of its own, so a merge two arguments share
    would run once per argument (measured: 12 hash-join tasks where 4 merges are
    asked, in the agreement warning's task)."""
    if not collections:
        return []
    if _together is None:  # an older Dask: the same values, each merge once per argument
        return [delayed(collection) for collection in collections]
    together = _together(list(collections)).finalize_compute().optimize()
    # one layer that every Delayed names (as ``to_delayed`` does), not a copy each
    layer = f"shared-{together._name}"
    graph = HighLevelGraph.from_collections(layer, together.__dask_graph__(), dependencies=())
    return [Delayed(keys[0], graph, layer=layer) for keys in together.__dask_keys__()]
