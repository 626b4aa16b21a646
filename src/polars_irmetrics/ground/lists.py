"""List-shaped runs and judgments, as the long tables the evaluation reads.

Embedding retrieval and vector search return one list of ids per query, and their
ground truth is one list of relevant ids per query::

    results      = [[11, 1, 17, 7, 21], [4, 9, 2], ...]
    ground_truth = [[11, 1, 7, 17, 21], [2, 8], ...]

A run whose ``doc_id`` column is a ``List`` (or ``Array``) holds one row per query, its
ranking in order: the document at list position ``i`` (0-based) gets rank ``i + 1``,
and a parallel ``List`` in ``score`` (same length) is kept as the score (a ``rank``
or ``score`` column must be such a list: one value per row is refused). Judgments whose
``doc_id`` is a ``List`` list a query's relevant documents (relevance 1), or give graded
labels in a parallel ``List`` named by ``relevance=`` (a scalar ``relevance`` applies to
every listed document).

:func:`long_run` and :func:`long_judgments` turn such frames into the long form, one row
per (query, document), inside the lazy plan (an ``explode``; nothing is collected). A
frame whose ``doc_id`` is not a list is returned as it is. An empty list is a query with
no document (dropped: a run's query then counts as unretrieved; the judgments' query is
then not judged at all, so it is left out of the means and of ``num_q``, as a query
without judgments is in trec_eval; to score it 0, judge one of its documents not
relevant: a ``relevance`` list with a 0). A null list, or parallel lists of different
lengths, raise :class:`~polars_irmetrics.errors.InvalidValueError` naming the column and
the query when the plan runs; null ids or labels *inside* a list are found by the evaluation's own
checks, as in the long form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import polars as pl

from polars_irmetrics.errors import DuplicateError, InvalidValueError
from polars_irmetrics.ground.validate import INTERNAL, ListOrder

__all__ = ["is_list_column", "long_judgments", "long_run", "ranked_by"]


def is_list_column(schema: pl.Schema, column: str) -> bool:
    """Whether ``column`` is in ``schema`` and holds lists (``List`` or ``Array``)."""
    return column in schema and isinstance(schema[column], pl.List | pl.Array)


@overload
def long_run(
    run: pl.DataFrame,
    *,
    query_id: str = ...,
    doc_id: str = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str = ...,
    keys: Sequence[str] | None = ...,
    frame: str = ...,
) -> pl.DataFrame: ...


@overload
def long_run(
    run: pl.LazyFrame,
    *,
    query_id: str = ...,
    doc_id: str = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str = ...,
    keys: Sequence[str] | None = ...,
    frame: str = ...,
) -> pl.LazyFrame: ...


@overload
def long_run(
    run: pl.DataFrame | pl.LazyFrame,
    *,
    query_id: str = ...,
    doc_id: str = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str = ...,
    keys: Sequence[str] | None = ...,
    frame: str = ...,
) -> pl.DataFrame | pl.LazyFrame: ...


def long_run(
    run: pl.DataFrame | pl.LazyFrame,
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    rank: str = "rank",
    score: str = "score",
    relevance: str = "relevance",
    keys: Sequence[str] | None = None,
    frame: str = "run",
) -> pl.DataFrame | pl.LazyFrame:
    """``run`` in the long form: one row per retrieved document, with its ``rank``.

    A run whose ``doc_id`` is not a list is returned unchanged. Otherwise each row's
    list is exploded in order; ``rank`` is the 1-based position unless ``rank`` is a
    parallel list itself; ``score`` (and ``relevance``, for a judged table) are exploded
    beside it when they are lists. Other columns (``by`` keys) are repeated.

    ``keys``: the ``systems=`` and ``by`` keys of the call, where known: a query in two
    rows of one (system, group), whose two lists' positions would collide as duplicate
    ranks, is then refused by its name when the plan runs (with positions for ranks).

    ``frame``: the table the messages name (``"run"``; ``"reference (reference=)"`` for
    a list-shaped reference, the other ranking a run is compared with).

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The same kind of frame; ``rank`` is ``Int64`` when made from positions.

    Examples
    --------
    Query ``q2`` has an empty list: it retrieved nothing.

    >>> import polars as pl
    >>> run = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": [[11, 1, 17], []]})
    >>> long_run(run)
    shape: (3, 3)
    ┌──────────┬────────┬──────┐
    │ query_id ┆ doc_id ┆ rank │
    │ ---      ┆ ---    ┆ ---  │
    │ str      ┆ i64    ┆ i64  │
    ╞══════════╪════════╪══════╡
    │ q1       ┆ 11     ┆ 1    │
    │ q1       ┆ 1      ┆ 2    │
    │ q1       ┆ 17     ┆ 3    │
    └──────────┴────────┴──────┘

    Parallel lists must have the same length:

    >>> bad = pl.DataFrame({"query_id": ["q1"], "doc_id": [[11, 1]], "score": [[0.9]]})
    >>> long_run(bad)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'score' of the run holds a list of ...

    A query in two rows (two lists whose positions both start at 1):

    >>> twice = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": [[11, 1], [17]]})
    >>> long_run(twice, keys=[])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.DuplicateError: query 'q1' is in 2 rows of the run, whose ...
    """
    schema = run.collect_schema()
    if not is_list_column(schema, doc_id):
        return run
    parallel: list[str] = [c for c in (score, rank, relevance) if is_list_column(schema, c)]
    for column, what in ((rank, "rank"), (score, "score")):
        # the positions would replace a rank, each document take the row's one score
        if column in schema and column not in parallel:
            raise InvalidValueError(
                f"column {column!r} of the {frame} holds one value per row beside the "
                f"lists of {doc_id!r}: a list-shaped {frame.split()[0]}'s ranks are the list "
                "positions (1 = first), "
                f"or a parallel list of one {what} per document in {column!r}; drop the "
                f"column, e.g. .drop({column!r}), or make it such a list"
            )
    lists: list[str] = [doc_id, *parallel]
    positions: list[str] = [] if rank in parallel else [rank]
    lazy = _as_lists(run.lazy(), schema, lists)
    if keys is not None and positions and query_id in schema:
        lazy = _with_rows_of_query(lazy, [*(k for k in keys if k in schema), query_id])
    lazy = _checked(lazy, lists, query_id, frame, doc_id, keys=keys or ())
    length = pl.col(doc_id).list.len()
    exploded = (
        lazy.filter(length > 0)
        .with_columns(pl.int_ranges(1, length + 1, dtype=pl.Int64).alias(c) for c in positions)
        .explode([*lists, *positions])
    )
    return exploded.collect() if isinstance(run, pl.DataFrame) else exploded


def ranked_by(schema: pl.Schema, *, doc_id: str, rank: str) -> str:
    """The rank column's name for a run of ``schema``: a :class:`ListOrder` where
    :func:`long_run` makes it of the lists' positions (``doc_id`` lists, ``rank`` no
    parallel list), so that a message about the ranks names the lists' order, not a
    column the caller never wrote; else ``rank`` as it is.

    >>> ranked_by(pl.Schema({"doc_id": pl.List(pl.String)}), doc_id="doc_id", rank="rank")
    'rank'
    >>> type(_).__name__
    'ListOrder'
    """
    if is_list_column(schema, doc_id) and not is_list_column(schema, rank):
        return ListOrder(rank)
    return rank


@overload
def long_judgments(
    qrels: pl.DataFrame,
    *,
    query_id: str = ...,
    doc_id: str = ...,
    relevance: str = ...,
) -> pl.DataFrame: ...


@overload
def long_judgments(
    qrels: pl.LazyFrame,
    *,
    query_id: str = ...,
    doc_id: str = ...,
    relevance: str = ...,
) -> pl.LazyFrame: ...


@overload
def long_judgments(
    qrels: pl.DataFrame | pl.LazyFrame,
    *,
    query_id: str = ...,
    doc_id: str = ...,
    relevance: str = ...,
) -> pl.DataFrame | pl.LazyFrame: ...


def long_judgments(
    qrels: pl.DataFrame | pl.LazyFrame,
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    relevance: str = "relevance",
) -> pl.DataFrame | pl.LazyFrame:
    """``qrels`` in the long form: one row per judged document, with its ``relevance``.

    Judgments whose ``doc_id`` is not a list are returned unchanged. Otherwise each row
    lists relevant documents: ``relevance`` is 1 (``Int64``) when the frame has no such
    column, the parallel list's labels when it is a list, and the row's value for every
    listed document when it is a scalar.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The same kind of frame.

    Examples
    --------
    Graded labels from a parallel list:

    >>> import polars as pl
    >>> qrels = pl.DataFrame({
    ...     "query_id": ["q1"], "doc_id": [["a", "b"]], "relevance": [[2, 1]],
    ... })
    >>> long_judgments(qrels)
    shape: (2, 3)
    ┌──────────┬────────┬───────────┐
    │ query_id ┆ doc_id ┆ relevance │
    │ ---      ┆ ---    ┆ ---       │
    │ str      ┆ str    ┆ i64       │
    ╞══════════╪════════╪═══════════╡
    │ q1       ┆ a      ┆ 2         │
    │ q1       ┆ b      ┆ 1         │
    └──────────┴────────┴───────────┘
    """
    schema = qrels.collect_schema()
    if not is_list_column(schema, doc_id):
        return qrels
    lists = [doc_id, *([relevance] if is_list_column(schema, relevance) else [])]
    lazy = _checked(_as_lists(qrels.lazy(), schema, lists), lists, query_id, "judgments")
    if relevance not in schema:
        lazy = lazy.with_columns(pl.lit(1, dtype=pl.Int64).alias(relevance))
    exploded = lazy.filter(pl.col(doc_id).list.len() > 0).explode(lists)
    return exploded.collect() if isinstance(qrels, pl.DataFrame) else exploded


def _as_lists(frame: pl.LazyFrame, schema: pl.Schema, lists: list[str]) -> pl.LazyFrame:
    """``frame`` with its ``Array`` columns among ``lists`` cast to ``List``."""
    casts = []
    for column in lists:
        dtype = schema[column]
        if isinstance(dtype, pl.Array):
            casts.append(pl.col(column).cast(pl.List(dtype.inner)))
    return frame.with_columns(casts)


#: Per row of a list-shaped run: the rows of its (system, group,) query, where two or more.
_ROWS = f"{INTERNAL}rows_of_query"


def _with_rows_of_query(frame: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """``frame`` with :data:`_ROWS` on the rows of a ``keys`` (the query last) held by
    more than one row: a count of the ids alone, joined back (null elsewhere)."""
    twice = frame.group_by(keys).agg(pl.len().alias(_ROWS)).filter(pl.col(_ROWS) > 1)
    return frame.join(twice, on=keys, how="left", nulls_equal=True, maintain_order="left")


def _twice_error(
    row: dict[str, object], keys: Sequence[str], query_id: str, doc_id: str, frame: str = "run"
) -> DuplicateError:
    """The refusal of a query in two rows (of one system and group: ``keys``) of a
    list-shaped run (``frame``: the table's name in the message)."""
    within = ", ".join(f"{k}={row[k]!r}" for k in keys if k != query_id)
    return DuplicateError(
        f"query {row[query_id]!r}{f' ({within})' if within else ''} is in {row[_ROWS]} "
        f"rows of the {frame}, whose {doc_id!r} "
        "holds one list per query, its ranking in order (rank = position in the list): "
        "each row's positions start at 1, so the rows' documents would share ranks; keep "
        f"one row per query, e.g. join the lists: .group_by({query_id!r}, "
        f"maintain_order=True).agg(pl.col({doc_id!r}).explode())"
    )


def _checked(
    frame: pl.LazyFrame,
    lists: list[str],
    query_id: str,
    what: str,
    doc_id: str = "doc_id",
    keys: Sequence[str] = (),
) -> pl.LazyFrame:
    """``frame`` with a row-wise check of its list columns, run on each batch (and of
    :data:`_ROWS`, where the frame has it: dropped after)."""
    schema = frame.collect_schema()
    lengths = [f"{INTERNAL}len_{i}" for i in range(len(lists))]
    twice = _ROWS in schema
    if twice:
        schema = pl.Schema({k: v for k, v in schema.items() if k != _ROWS})

    def check(batch: pl.DataFrame) -> pl.DataFrame:
        if twice:
            doubled = batch.filter(pl.col(_ROWS).is_not_null())
            if doubled.height:
                shown = [k for k in keys if k in doubled.columns]
                raise _twice_error(doubled.row(0, named=True), shown, query_id, doc_id, what)
            batch = batch.drop(_ROWS)
        sizes = batch.select(
            pl.col(query_id) if query_id in batch.columns else pl.lit(None).alias(query_id),
            *(pl.col(c).list.len().alias(n) for c, n in zip(lists, lengths, strict=True)),
        )
        for column, name in zip(lists, lengths, strict=True):
            nulls = sizes.filter(pl.col(name).is_null())
            if nulls.height:
                raise InvalidValueError(
                    f"column {column!r} of the {what} has a null list in query "
                    f"{nulls[query_id][0]!r}; a query with no document is an empty list: "
                    f"fill them, e.g. pl.col({column!r}).fill_null([]), or drop those rows"
                )
        for column, name in zip(lists[1:], lengths[1:], strict=True):
            bad = sizes.filter(pl.col(name) != pl.col(lengths[0]))
            if bad.height:
                row = bad.row(0, named=True)
                raise InvalidValueError(
                    f"column {column!r} of the {what} holds a list of {row[name]} value(s) "
                    f"in query {row[query_id]!r}, where column {lists[0]!r} holds "
                    f"{row[lengths[0]]}; parallel lists must have the same length, one "
                    "value per document"
                )
        return batch

    return frame.map_batches(check, schema=schema, streamable=True)
