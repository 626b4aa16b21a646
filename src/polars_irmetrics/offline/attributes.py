"""Attributes of the query from a table of their own (``queries=``).

A ``by`` key such as day, market or segment is an attribute of the query: a judged
query counts in the group its own value names, whether the run retrieved it or not.
:func:`with_query_attributes` brings the attributes of ``queries`` onto the judgments
(and onto the run where it lacks them), so that the plan matches them as keys of the
judgments (:mod:`polars_irmetrics.offline.plan`).
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    check_id_kinds,
    common_id_dtype,
    key_dtype_error,
    null_ids_error,
    require_columns,
)

__all__ = ["with_query_attributes"]

#: The query id in the dtype every table's ids share, while ``queries=`` is joined.
_QUERY_KEY = f"{INTERNAL}query_key"


def with_query_attributes(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    queries: pl.LazyFrame,
    options: EvalOptions,
) -> tuple[pl.LazyFrame, pl.LazyFrame | None, tuple[str, ...]]:
    """``run`` and ``qrels`` with the ``by`` keys that ``queries`` holds, and those keys.

    A judged (or retrieved) query with no row in ``queries`` gets a null key, which the
    plan's checks refuse by name; a query with several rows counts in each group.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> run = pl.LazyFrame({"query_id": ["q1"], "doc_id": ["a"], "rank": [1]})
    >>> qrels = pl.LazyFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    >>> queries = pl.LazyFrame({"query_id": ["q1", "q2"], "day": ["mon", "tue"]})
    >>> run, qrels, keys = with_query_attributes(
    ...     run, qrels, queries, EvalOptions.build(by="day")
    ... )
    >>> keys, qrels.sort("query_id").collect().rows()  # a join keeps no row order
    (('day',), [('q1', 'a', 1, 'mon'), ('q2', 'b', 1, 'tue')])
    """
    query_id = options.query_id
    schema = queries.collect_schema()
    require_columns(
        schema, [query_id], "queries", "queries= holds one row per query: its id and attributes"
    )
    if not options.attribute_keys:  # no key to read: the table would change nothing
        raise InvalidValueError(
            "queries= holds the by= keys of each query (day, market, segment...), and no "
            "by= was given, so it would change nothing: pass by= with its key columns "
            f"(its columns: {', '.join(map(repr, schema.names()))}), or drop queries="
        )
    keys = [k for k in options.attribute_keys if k in schema]
    if not keys:
        raise InvalidValueError(
            f"queries= has none of the by= keys {list(options.attribute_keys)!r} (its "
            f"columns: {', '.join(map(repr, schema.names()))}); add them, or drop queries="
        )
    run_schema = run.collect_schema()
    # the judgments' own key wins (see evaluate's by=): queries= would be read for nothing;
    # without qrels= the run is the judged table, its rows the judgments
    judgments = run_schema if qrels is None else qrels.collect_schema()
    given = [k for k in keys if k in judgments]
    if given:
        where = "the judged table" if qrels is None else "the judgments"
        raise InvalidValueError(
            f"by key {given[0]!r} is both in queries= and in {where}; give each "
            "judged query its value once: drop the column from one of them"
        )
    # a row of no query: refused when the plan runs, as every table's null id (a join
    # would drop it in silence)
    attributes = (
        queries.select(query_id, *keys)
        .map_batches(lambda frame: _refuse_null_ids(frame, query_id))
        .unique()
    )
    for key in keys:  # a key the run holds too: checked against queries='s, not the
        # judgments' (which take queries=' column, so the refusal would name them)
        if key in run_schema and run_schema[key] != schema[key]:
            raise key_dtype_error(key, run_schema[key], "the run", schema[key], "queries=")
    # ids of one kind: a string id never equals an integer
    check_id_kinds(schema, "queries=", run_schema, "run", [query_id])
    if qrels is not None:
        check_id_kinds(schema, "queries=", qrels.collect_schema(), "judgments", [query_id])
    # matched in the dtype that holds every table's ids (a UInt64 id beyond Int64 beside
    # an Int64 run: Int128), never cast to the run's (which failed or wrapped); the run's
    # and the judgments' own columns keep their dtypes
    schemas = [schema, run_schema, *(() if qrels is None else (qrels.collect_schema(),))]
    common = common_id_dtype([s[query_id] for s in schemas if query_id in s])
    if schema[query_id] != common:
        attributes = attributes.with_columns(pl.col(query_id).cast(common))
    if qrels is not None:
        qrels = _with_attributes(qrels, attributes, query_id, common)
    missing = [k for k in keys if k not in run_schema]
    if missing:
        run = _with_attributes(run, attributes.select(query_id, *missing), query_id, common)
    return run, qrels, tuple(keys)


def _with_attributes(
    table: pl.LazyFrame, attributes: pl.LazyFrame, query_id: str, common: pl.DataType
) -> pl.LazyFrame:
    """``table`` left-joined with ``attributes`` (their ids in ``common``) on the query
    id compared in ``common``; ``table``'s id column as it was."""
    if table.collect_schema()[query_id] == common:
        return table.join(attributes, on=query_id, how="left", nulls_equal=False)
    matched = attributes.rename({query_id: _QUERY_KEY})
    return (
        table.with_columns(pl.col(query_id).cast(common).alias(_QUERY_KEY))
        .join(matched, on=_QUERY_KEY, how="left", nulls_equal=False)
        .drop(_QUERY_KEY)
    )


def _refuse_null_ids(frame: pl.DataFrame, query_id: str) -> pl.DataFrame:
    """``frame`` (queries= as the plan reads it), refused where a query id is null."""
    nulls = frame.get_column(query_id).null_count()
    if nulls:
        raise null_ids_error("queries", nulls, [query_id], "each row gives one query's attributes")
    return frame
