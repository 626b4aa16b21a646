"""The offline plan's arguments resolved against the tables' schemas, before any data
is read: which keys, which order, which ids are cast, what the data checks check.

Everything that needs no data is checked once by :meth:`EvalOptions.build
<polars_irmetrics.ground.options.EvalOptions.build>`; :func:`resolve` adds what the
schemas tell (missing columns, dtypes, where each group key lives).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from polars_irmetrics.ground.options import (
    EvalOptions,
    key_keyword,
    refuse_result_keys,
    shared_column_error,
)
from polars_irmetrics.ground.validate import (
    JUDGMENT_COLUMNS_HINT,
    RUN_COLUMNS_HINT,
    CheckSpec,
    check_numeric,
    common_id_dtype,
    id_kind,
    id_kinds_error,
    key_dtype_error,
    neither_order,
    rank_against,
    require_columns,
)

__all__ = ["Setup", "resolve"]


@dataclass(frozen=True)
class Setup:
    """Everything resolved from the arguments and the schemas, before any data is read."""

    keys: tuple[str, ...]
    by: tuple[str, ...]
    qrels_keys: tuple[str, ...]
    run_only_by: tuple[str, ...]
    order: Literal["rank", "score"]
    doc_is_string: bool
    cast_ids: dict[str, pl.DataType]
    check: CheckSpec
    doc_id: str
    rank: str
    score: str
    relevance: str
    depth: int | None
    relevance_level: float
    #: ir_measures' ``judged_only=True`` (trec_eval ``-J``): the run's documents without
    #: a judgment of 0 or more are removed before ranking.
    judged_only: bool = False


def _check_names(
    options: EvalOptions,
    order: Literal["rank", "score"],
    outputs: Sequence[str],
    judged_table: bool,
) -> None:
    """Each role (query id, document id, order, relevance) its own column; group keys
    none of them and none of the result's columns (``num_q``, the metric labels)."""
    roles = {"query_id": options.query_id, "doc_id": options.doc_id}
    roles[order] = options.rank if order == "rank" else options.score
    if judged_table:
        roles["relevance"] = options.relevance
    seen: dict[str, str] = {}
    for role, column in roles.items():
        if column in seen:
            raise shared_column_error(seen[column], role, column)
        seen[column] = role
    for key in options.by_keys:
        # the keyword the key was given by: systems= or by=
        given, keys = key_keyword(options, key)
        if key in seen:
            raise InvalidValueError(
                f"{given}={keys!r} names {key!r}, which is the {seen[key]} column; "
                "group by another column, or pass the " + seen[key] + " column's name as "
                f"{seen[key]}="
            )
        taken = ["num_q", *outputs] if not options.per_query else list(outputs)
        if key in taken:  # the first of its keyword's keys the result holds
            refuse_result_keys(given, keys, taken, "run", most=None)


def _refuse_judged_only_keys(
    run_schema: pl.Schema, qrels_schema: pl.Schema, options: EvalOptions
) -> None:
    """A ``by`` key the judgments carry and the run lacks: the group of a query the run
    retrieved is read from the run or from ``queries=``, which is the fix to name."""
    for key in options.attribute_keys:
        if key in qrels_schema and key not in run_schema:
            query_id = options.query_id
            raise ColumnNotFoundError(
                f"by key {key!r} is in the judgments but not in the run; a query's "
                "group is read from the run or from queries=: pass a table of the query "
                f"ids and {key!r} as queries= and drop the column from the judgments, "
                f"e.g. queries=qrels.select({query_id!r}, {key!r}).unique(), "
                f"qrels=qrels.drop({key!r})"
            )


def resolve(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    from_queries: tuple[str, ...] = (),
    *,
    outputs: Sequence[str] = (),
) -> Setup:
    by_keys = options.by_keys
    order, depth = options.order, options.depth
    query_id, doc_id, rank = options.query_id, options.doc_id, options.rank
    score, relevance = options.score, options.relevance

    run_schema = run.collect_schema()
    judged_table = qrels is None
    frame = "judged table" if judged_table else "run"
    if qrels is not None:
        _refuse_judged_only_keys(run_schema, qrels.collect_schema(), options)
    require_columns(
        run_schema,
        [query_id, doc_id, *by_keys],
        frame,
        RUN_COLUMNS_HINT,
    )
    resolved: Literal["rank", "score"]
    if order == "auto":
        if rank in run_schema:
            resolved = "rank"
        elif score in run_schema:
            resolved = "score"
        else:
            raise neither_order(run_schema, rank, score, frame)
    else:
        resolved = order
    order_col = rank if resolved == "rank" else score
    _check_names(options, resolved, outputs, judged_table)
    require_columns(
        run_schema,
        [order_col],
        frame,
        f"pass rank=... or score=... to name it, or choose order= (now {order!r})",
    )
    check_numeric(run_schema, order_col, frame, integer=resolved == "rank")

    cast_ids: dict[str, pl.DataType] = {}
    query_kind = id_kind(run_schema, query_id, frame)
    doc_kind = id_kind(run_schema, doc_id, frame)
    for column, kind in ((query_id, query_kind), (doc_id, doc_kind)):
        if kind == "string":
            cast_ids[column] = pl.String()
    if qrels is None:
        require_columns(
            run_schema,
            [relevance],
            frame,
            "pass qrels=... with the judgments, or add the relevance column "
            "(name it with relevance=...)",
        )
        check_numeric(run_schema, relevance, frame, integer=False)
        qrels_keys = (*by_keys, query_id)
        run_only_by: tuple[str, ...] = ()
    else:
        qrels_schema = qrels.collect_schema()
        require_columns(
            qrels_schema,
            [query_id, doc_id, relevance],
            "judgments",
            JUDGMENT_COLUMNS_HINT,
        )
        check_numeric(qrels_schema, relevance, "judgments", integer=False)
        for column, kind in ((query_id, query_kind), (doc_id, doc_kind)):
            other = id_kind(qrels_schema, column, "judgments")
            if other != kind:
                raise id_kinds_error(column, run_schema, "run", qrels_schema, "judgments")
            if kind == "integer" and run_schema[column] != qrels_schema[column]:
                cast_ids[column] = common_id_dtype([run_schema[column], qrels_schema[column]])
        qrels_keys = (*(k for k in by_keys if k in qrels_schema), query_id)
        run_only_by = tuple(k for k in by_keys if k not in qrels_schema)
        for key in by_keys:
            if key in qrels_schema and run_schema[key] != qrels_schema[key]:
                raise key_dtype_error(
                    key, run_schema[key], "the run", qrels_schema[key], "the judgments"
                )
    check = CheckSpec(
        keys=(*by_keys, query_id),
        query_id=query_id,
        doc_id=doc_id,
        rank=rank if resolved == "rank" else None,
        score=score if resolved == "score" else None,
        relevance=relevance,
        judged_table=judged_table,
        unjudged=options.unjudged,
        unretrieved=options.unretrieved,
        check_duplicates=options.check_duplicates,
        unplaced=tuple(k for k in options.attribute_keys if k in run_only_by),
        from_queries=from_queries,
        run_keys=tuple(k for k in by_keys if k not in from_queries),
        judged_keys=tuple(k for k in qrels_keys[:-1] if k not in from_queries),
        offers_drop=options.offers_drop,
        against=rank_against(run_schema, order, rank, score),
    )
    return Setup(
        keys=(*by_keys, query_id),
        by=by_keys,
        qrels_keys=qrels_keys,
        run_only_by=run_only_by,
        order=resolved,
        doc_is_string=doc_kind == "string",
        cast_ids=cast_ids,
        check=check,
        doc_id=doc_id,
        rank=rank,
        score=score,
        relevance=relevance,
        depth=depth,
        relevance_level=float(options.relevance_level),
        judged_only=options.judged_only,
    )
