"""List-shaped runs and judgments on Spark and Dask: the long form, made first.

A run whose ``doc_id`` column is a list (one row per query, its ranking in order) and
judgments whose ``doc_id`` is a list are turned into the long form (one row per
document) before anything else, by the one-machine conversion itself
(:mod:`polars_irmetrics.ground.lists`: ``long_run``, ``long_judgments``) run on each
batch or partition through polars: the same rows, ranks and errors as
:func:`polars_irmetrics.evaluate` on the same lists, so the engines' results equal it
bit for bit. A frame whose ``doc_id`` is not a list is left as it is (no extra work).

This module holds the engine-free part: the conversion of one Arrow table and the
schema it gives; :mod:`~polars_irmetrics.engines._spark_lists` and
:mod:`~polars_irmetrics.engines._dask_lists` apply it to each engine's frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from polars_irmetrics.engines._partition import arrow_schema, as_polars_frame
from polars_irmetrics.ground.lists import is_list_column, long_judgments, long_run, ranked_by
from polars_irmetrics.ground.options import EvalOptions

__all__ = ["LongForm", "long_forms", "ranked_options"]


@dataclass(frozen=True)
class LongForm:
    """The conversion of one side (``"run"`` or ``"judgments"``) to the long form, with
    the column names it reads; it pickles, to be shipped to the tasks.

    Examples
    --------
    >>> import pyarrow as pa
    >>> run = pa.table({"query_id": ["q1", "q2"], "doc_id": [["a", "b"], []]})
    >>> form = LongForm("run", "query_id", "doc_id", "rank", "score", "relevance")
    >>> form.table(run).to_pydict()
    {'query_id': ['q1', 'q1'], 'doc_id': ['a', 'b'], 'rank': [1, 2]}
    >>> form.schema(run.schema)
    query_id: string
    doc_id: string
    rank: int64
    """

    side: str
    query_id: str
    doc_id: str
    rank: str
    score: str
    relevance: str

    def frame(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` in the long form (:mod:`polars_irmetrics.ground.lists`)."""
        if self.side == "run":
            return long_run(
                frame,
                query_id=self.query_id,
                doc_id=self.doc_id,
                rank=self.rank,
                score=self.score,
                relevance=self.relevance,
            )
        return long_judgments(
            frame, query_id=self.query_id, doc_id=self.doc_id, relevance=self.relevance
        )

    def schema(self, schema: pa.Schema) -> pa.Schema:
        """The Arrow schema of the long form of a table of ``schema``."""
        return arrow_schema(self.frame(as_polars_frame(schema.empty_table())).schema)

    def table(self, table: pa.Table) -> pa.Table:
        """``table`` in the long form, cast to :meth:`schema` (so that every batch of a
        frame gives the same types)."""
        long = self.frame(as_polars_frame(table))
        return long.to_arrow(compat_level=pl.CompatLevel.oldest()).cast(self.schema(table.schema))


def long_forms(
    run_schema: pa.Schema, qrels_schema: pa.Schema | None, options: EvalOptions
) -> tuple[LongForm | None, LongForm | None]:
    """The conversions the run and the judgments need: ``None`` for a side whose
    ``doc_id`` is not a list (or for absent judgments)."""
    names = (options.query_id, options.doc_id, options.rank, options.score, options.relevance)
    forms: list[LongForm | None] = []
    for side, schema in (("run", run_schema), ("judgments", qrels_schema)):
        listed = schema is not None and is_list_column(
            as_polars_frame(schema.empty_table()).schema, options.doc_id
        )
        forms.append(LongForm(side, *names) if listed else None)
    return forms[0], forms[1]


def ranked_options(run_schema: pa.Schema, options: EvalOptions) -> EvalOptions:
    """``options`` with the rank column's name marked where the run's ranks are its
    lists' positions (:func:`~polars_irmetrics.ground.lists.ranked_by`), as one machine
    marks it: a message about the ranks then names the lists' order."""
    schema = as_polars_frame(run_schema.empty_table()).schema
    rank = ranked_by(schema, doc_id=options.doc_id, rank=options.rank)
    return options if rank is options.rank else options.replace(rank=rank)
