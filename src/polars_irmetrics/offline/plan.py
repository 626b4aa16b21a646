"""``evaluate()``: every requested metric for every query, in one lazy polars plan.

The plan, for a run and judgments (qrels):

1. **Check the run** as given: rows with a null id, a bad rank or a bad score pass a
   filter into a small group-by (on clean data nothing does, and Parquet row groups
   are skipped by their statistics); the duplicate checks (a document twice in a
   query, a rank held twice) are a group-by per query, skipped with
   ``check_duplicates=False``. The count of documents per query (``num_ret``) joins
   that group-by only where a metric or a query-set policy reads it: with the default
   policies the queries evaluated are the judged ones.
2. **Judged rows**: the run inner-joined with the judgments (the hash table is built on
   the judgments), plus the judged documents it missed (an anti-join), so each judged
   document carries its position (null when not retrieved). Only judged rows take
   part in the metrics; unjudged retrieved documents only count in ``num_ret``.
3. **Positions**: the ``rank`` column as given, or ``score`` descending with ties
   broken by ``doc_id`` descending compared as text (trec_eval's rule), computed from
   a min and max rank of the scores per query and, for the judged rows that tie, a
   count of the tied documents with a greater id; ``depth`` keeps positions
   1..depth (trec_eval ``-M``).
4. **One group-by** over the judged rows (and one marker row per run query where
   ``num_ret`` is needed) computes every metric of every cutoff at once
   (:mod:`polars_irmetrics.metrics`). The rows
   are sorted by (query, rank) first and the queries numbered in that order, so the
   order-dependent columns (running counts, the ideal gains) are vectorised passes or
   windows on one integer. Every float sum is a fixed-point sum (exact in any order,
   :meth:`Scope.sum <polars_irmetrics.metrics.scope.Scope.sum>`), so the group-by is made of
   plain reductions and gives the same bits on any input layout, engine or number of
   buckets.
5. The data checks raise, the query-set policies apply, and ``per_query=False``
   averages per ``by`` group.

Nothing is collected before the caller's ``collect()`` (but the row count that
``buckets="auto-memory"`` reads from Parquet footers or an in-memory plan when the plan
is built); a DataFrame input is collected once at the end.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.ground.auto import resolve_buckets
from polars_irmetrics.ground.buckets import check_buckets, check_spill_dir, evaluate_in_buckets
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.partitions import check_partition_column, evaluate_in_partitions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    CheckSpec,
    Recount,
    check_numeric,
    check_policy,
    flag,
    id_kind,
    raise_on_bad_rows,
    require_columns,
)
from polars_irmetrics.metrics.registry import MetricRequest, parse_metric_list
from polars_irmetrics.metrics.scope import PlanScope, beyond_fixed

__all__ = ["build_plan"]
FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

_RANK = f"{INTERNAL}rank"
_REL = f"{INTERNAL}rel"
_SRC = f"{INTERNAL}src"
_NUM_RET = f"{INTERNAL}num_ret"
_JUDGED = f"{INTERNAL}judged"
_RETRIEVED = f"{INTERNAL}retrieved"
_GROUP = f"{INTERNAL}group"
_FIRST = f"{INTERNAL}first"
_START = f"{INTERNAL}start"
_CHECK = f"{INTERNAL}check"
_LOW = f"{INTERNAL}rank_min"
_HIGH = f"{INTERNAL}rank_max"


@dataclass(frozen=True)
class _Setup:
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


def build_plan(
    run: pl.LazyFrame,
    metrics: str | Iterable[str],
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
) -> pl.LazyFrame:
    """The lazy plan behind :func:`evaluate` (see the module docstring)."""
    requests = parse_metric_list(metrics)
    for label, req in requests:
        if "clicks" in req.metric.reads:
            raise MetricParameterError(
                f"metric {label!r} reads the clicks of an impression log, which a run and "
                f"judgments do not have; compute it with irm.evaluate_online(log, [{label!r}])"
            )
        if "prefs" in req.metric.reads:
            raise MetricParameterError(
                f"metric {label!r} reads preference judgments, which a run and judgments do "
                "not have; compute it with irm.evaluate_prefs(run, irm.read_trec_prefs(path))"
            )
        if "judgment_groups" in req.metric.reads:
            raise MetricParameterError(
                f"metric {label!r} averages over judgment groups, which a run and judgments "
                f"do not have; compute it with irm.evaluate_jg(run, [{label!r}], "
                "irm.read_trec_qrels_jg(path))"
            )
    setup = _setup(run, qrels, options, outputs=[label for label, _ in requests])
    buckets = options.buckets
    if buckets == "auto-memory":  # one plan or out of core, from the run's size
        buckets = resolve_buckets(run, options)
    query_id, doc_id = options.query_id, options.doc_id
    keys = list(setup.keys)
    run = run.with_columns(pl.col(c).cast(t) for c, t in setup.cast_ids.items())
    if qrels is not None:
        qrels = qrels.with_columns(
            pl.col(c).cast(t) for c, t in setup.cast_ids.items() if c in (query_id, doc_id)
        )

    groups = (
        run.select(setup.run_only_by).unique() if qrels is not None and setup.run_only_by else None
    )
    check_partition_column(run.collect_schema().names(), options.partitioned_by)
    if buckets is None:
        result = _per_query(run, qrels, groups, setup, requests)
    elif options.partitioned_by is not None:  # whole queries per partition: no re-writing
        result = evaluate_in_partitions(
            run,
            qrels,
            groups,
            query_id=query_id,
            column=options.partitioned_by,
            evaluate_part=lambda r, q, g: _per_query(r, q, g, setup, requests),
            schema=_per_query(run, qrels, groups, setup, requests).collect_schema(),
        )
    else:

        def evaluate_part(
            run: pl.LazyFrame, qrels: pl.LazyFrame | None, groups: pl.LazyFrame | None
        ) -> pl.LazyFrame:
            return _per_query(run, qrels, groups, setup, requests)

        result = evaluate_in_buckets(
            run,
            qrels,
            groups,
            query_id=query_id,
            buckets=buckets,
            spill_dir=options.spill_dir,
            evaluate_part=evaluate_part,
            schema=evaluate_part(run, qrels, groups).collect_schema(),
        )
    result = result.sort(keys)  # query order fixes the sums of the means
    labels = [label for label, _ in requests]
    if options.per_query:
        return result.select(*keys, *labels)
    means = [
        pl.len().cast(pl.Int64).alias("num_q"),
        *(request.metric.summarize(label) for label, request in requests),
    ]
    if setup.by:
        return result.group_by(list(setup.by), maintain_order=True).agg(means)
    return result.select(means)


def _per_query(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    setup: _Setup,
    requests: list[tuple[str, MetricRequest]],
) -> pl.LazyFrame:
    """Checked per-query metric values of ``run`` (steps 1 to 5 of the module docstring)."""
    keys = list(setup.keys)
    doc_id, relevance = setup.doc_id, setup.relevance
    scope = PlanScope(_RANK, _REL, _NUM_RET, group=_GROUP, first=_FIRST, start=_START)
    # Built first: they tell whether any formula reads num_ret.
    metric_exprs = [
        request.expr(scope, setup.relevance_level).alias(label) for label, request in requests
    ]
    # The checks and the counts read the run as given: only the join needs positions,
    # and ranking by score (a window over every row) is done once, for it alone.
    check = setup.check
    check_frames = [_bad_rows(run, setup)]
    # One row per query of the run (its num_ret), only where something needs it: a
    # formula, a query-set policy that looks at the run's queries, or a judged table.
    # With the defaults (unjudged='drop', unretrieved='zero') the queries evaluated are
    # the judged ones, whatever the run holds, so the run is not grouped for them.
    markers_needed = (
        qrels is None
        or scope.reads_num_ret
        or check.unjudged != "drop"
        or check.unretrieved != "zero"
    )
    markers = None
    if markers_needed:
        # read whole by the counts and by the join: cached, the input is read once
        run = run.cache()
        markers = run.group_by(keys).agg(
            _num_ret(setup).alias(_NUM_RET), *_duplicate_checks(setup)
        )
    elif check.check_duplicates:
        check_frames.append(run.group_by(keys).agg(_duplicate_checks(setup)))

    within = pl.col(_RANK) <= setup.depth if setup.depth is not None else None
    if qrels is None:  # a judged table: its own rows are the judgments
        ranked = _with_positions(run, setup, lambda rows: rows)
        rank_col = pl.col(_RANK) if within is None else pl.when(within).then(pl.col(_RANK))
        judged = ranked.select(*keys, doc_id, pl.col(relevance).alias(_REL), rank_col.alias(_RANK))
    else:
        judgments = qrels.select(*setup.qrels_keys, doc_id, pl.col(relevance).alias(_REL))
        # The join matches the run on the judgments' own keys: with ``by`` keys the
        # judgments lack (several systems judged by one set of qrels), one hash table
        # of the judgments serves every group, and the runtime filter below still
        # applies. Only the judged documents a group missed need the judgments
        # crossed with the groups.
        joined_on = [*setup.qrels_keys, doc_id]
        per_group = judgments if groups is None else groups.join(judgments, how="cross")
        carried = [_RANK] if setup.order == "rank" else [setup.score, _LOW, _HIGH]

        def join_judgments(rows: pl.LazyFrame) -> pl.LazyFrame:
            # An inner join, whose hash table is built on the small judgments side. The
            # no-op filter is a hint: polars 2.1's streaming engine adds a runtime filter
            # on the probe side (the run's keys, tested against the judged ones before
            # the rest of a row is decoded) only when the build side is a filtered scan.
            # Measured from Parquet, 10M run rows: the join 0.45 s -> 0.29 s, and peak
            # memory 530 -> 200 MiB. Results never depend on it.
            return rows.select(*keys, doc_id, *carried).join(
                judgments.filter(pl.lit(True)),
                on=joined_on,
                how="inner",
                nulls_equal=False,
                build_side="prefer_right",
            )

        found = _with_positions(run, setup, join_judgments).select(*keys, doc_id, _RANK, _REL)
        if within is not None:
            found = found.filter(within)
        # the judged documents that were not retrieved (rank null)
        missed = per_group.join(
            found.select(*keys, doc_id), on=[*keys, doc_id], how="anti", nulls_equal=False
        )
        judged = pl.concat([found, missed], how="diagonal_relaxed")
    rows = judged.with_columns(pl.lit(1, pl.Int8).alias(_SRC))
    if markers is not None:
        rows = pl.concat(
            [rows, markers.with_columns(pl.lit(0, pl.Int8).alias(_SRC))],
            how="diagonal_relaxed",
        )
    # Ordering each query's rows by (rank, label) makes the window columns and every
    # floating-point sum the same from one run to the next: rows that tie on both carry
    # the same values, so their order cannot change a result.
    rows = rows.sort(
        [*keys, _RANK, _REL], descending=[False] * len(keys) + [False, True], nulls_last=True
    )
    # Queries numbered 1, 2, ... in that order, and each one's first row and its number.
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    first = pl.any_horizontal(pl.col(k).ne_missing(pl.col(k).shift()) for k in keys) | (row == 0)
    rows = rows.with_columns(first.alias(_FIRST)).with_columns(
        pl.col(_FIRST).cum_sum().alias(_GROUP),
        pl.when(pl.col(_FIRST)).then(row).forward_fill().alias(_START),
    )
    if scope.derived:  # order-dependent per-row quantities, as window columns
        rows = rows.with_columns(scope.derived.values())
    if scope.terms:  # the terms of the float sums, which may read the columns above
        rows = rows.with_columns(scope.terms.values())
    is_judgment = pl.col(_SRC) == 1
    # the duplicate counts ride on the marker rows where there are any
    marker_flags = (
        [e.meta.output_name() for e in _duplicate_checks(setup)] if markers is not None else []
    )
    per_query_frame = (
        rows.group_by(_GROUP)
        .agg(
            *(pl.col(key).first() for key in keys),
            *metric_exprs,
            is_judgment.any().alias(_JUDGED),
            (~is_judgment).any().alias(_RETRIEVED),
            *(pl.col(name).max() for name in marker_flags),
            (pl.col(_REL).is_null() & is_judgment).sum().alias(flag("q_null_rel")),
            # whatever the metrics: NaN (which polars orders above every number, so
            # ``NaN >= level`` would hold), infinite, or beyond the exact sums
            (beyond_fixed(pl.col(_REL).cast(pl.Float64)) & is_judgment)
            .sum()
            .alias(flag("q_bad_rel")),
            (pl.col(doc_id).is_null() & is_judgment).sum().alias(flag("q_null_doc")),
            *_judged_rank_check(setup),
            # the marker row's id is null; a null judged id is reported before this
            (is_judgment.sum() - pl.col(doc_id).drop_nulls().n_unique()).alias(flag("q_dup_doc")),
            *_term_check(scope),
        )
        .drop(_GROUP)
    )
    # The run's own checks are small frames of their own (one row per query with a bad
    # row, or per query of the run for the duplicate checks), checked beside the
    # per-query values and then dropped: a query of the run that no judgment names is
    # checked too.
    seen = [pl.lit(True).alias(c) for c in (_CHECK, _JUDGED, _RETRIEVED)]
    combined = pl.concat(
        [
            per_query_frame.with_columns(pl.lit(False).alias(_CHECK)),
            *(frame.with_columns(seen) for frame in check_frames),
        ],
        how="diagonal_relaxed",
    )

    run_schema = run.collect_schema()
    checked_schema = {
        **{key: run_schema[key] for key in keys},
        **{label: _dtype(req) for label, req in requests},
        _JUDGED: pl.Boolean(),
        _RETRIEVED: pl.Boolean(),
    }
    recount = _recount(run, setup)
    checked = combined.map_batches(
        lambda frame: raise_on_bad_rows(frame, check, check_rows=_CHECK, recount=recount),
        schema=checked_schema,
    )
    keep = pl.lit(True)
    if check.unjudged == "drop":
        keep = keep & pl.col(_JUDGED)
    if check.unretrieved == "drop":
        keep = keep & pl.col(_RETRIEVED)
    return checked.filter(keep)


_INT64_MAX = 2**63 - 1


def _common_integer(left: pl.DataType, right: pl.DataType) -> pl.DataType:
    """An integer dtype that holds every value of both id columns: Int64, or where a
    UInt64 (ids up to 2**64 - 1) is involved UInt64 beside unsigned, Int128 beside signed."""
    if pl.UInt64() not in (left, right):
        return pl.Int64()
    signed = left.is_signed_integer() or right.is_signed_integer()
    return pl.Int128() if signed else pl.UInt64()


def _dtype(request: MetricRequest) -> pl.DataType:
    return pl.Int64() if request.metric.integer else pl.Float64()


def _check_names(
    options: EvalOptions,
    order: Literal["rank", "score"],
    outputs: Sequence[str],
    judged_table: bool,
) -> None:
    """Each role (query id, document id, order, relevance) its own column; ``by`` keys
    none of them and none of the result's columns (``num_q``, the metric labels)."""
    roles = {"query_id": options.query_id, "doc_id": options.doc_id}
    roles[order] = options.rank if order == "rank" else options.score
    if judged_table:
        roles["relevance"] = options.relevance
    seen: dict[str, str] = {}
    for role, column in roles.items():
        if column in seen:
            raise InvalidValueError(
                f"{seen[column]}={column!r} and {role}={column!r} name the same column; each "
                f"needs its own column: pass {role}= with the name of the {role} column"
            )
        seen[column] = role
    by_keys = options.by_keys
    for key in by_keys:
        if key in (options.query_id, options.doc_id):
            raise InvalidValueError(
                f"by={list(by_keys)!r} names {key!r}, which is already the query or "
                "document id; list only extra keys such as 'system'"
            )
        if key in seen:
            raise InvalidValueError(
                f"by={list(by_keys)!r} names {key!r}, which is the {seen[key]} column; "
                "group by another column, or pass the " + seen[key] + " column's name as "
                f"{seen[key]}="
            )
        taken = ["num_q", *outputs] if not options.per_query else list(outputs)
        if key in taken:
            raise InvalidValueError(
                f"by={list(by_keys)!r} names {key!r}, which is also a column of the result "
                f"({', '.join(repr(c) for c in taken)}); rename the key first, e.g. "
                f"run.rename({{{key!r}: {key + '_key'!r}}}), and pass by={key + '_key'!r}"
            )


def _setup(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    *,
    outputs: Sequence[str] = (),
) -> _Setup:
    by_keys = options.by_keys
    order, relevance_level, depth = options.order, options.relevance_level, options.depth
    query_id, doc_id, rank = options.query_id, options.doc_id, options.rank
    score, relevance = options.score, options.relevance
    check_duplicates = options.check_duplicates
    for key in by_keys:
        if key in (query_id, doc_id):
            raise InvalidValueError(
                f"by={list(by_keys)!r} names {key!r}, which is already the query or "
                "document id; list only extra keys such as 'system'"
            )
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int | float):
        raise InvalidValueError(f"relevance_level must be a number, got {relevance_level!r}")
    if not math.isfinite(relevance_level):
        raise InvalidValueError(
            f"relevance_level={relevance_level!r} is not a finite number: no label would count "
            "as relevant (or every one would); pass the lowest relevant label, e.g. "
            "relevance_level=1"
        )
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise InvalidValueError(f"depth must be a positive integer or None, got {depth!r}")
    unjudged_policy = check_policy("unjudged", options.unjudged)
    unretrieved_policy = check_policy("unretrieved", options.unretrieved)
    if not isinstance(check_duplicates, bool):
        raise InvalidValueError(
            f"check_duplicates must be True or False, got {check_duplicates!r}"
        )
    check_buckets(options.buckets)
    check_spill_dir(options.spill_dir)
    if order not in ("auto", "rank", "score"):
        raise InvalidValueError(
            f"order={order!r} is not an order; choose 'auto', 'rank' or 'score'"
        )

    run_schema = run.collect_schema()
    judged_table = qrels is None
    frame = "judged table" if judged_table else "run"
    require_columns(
        run_schema,
        [query_id, doc_id, *by_keys],
        frame,
        "pass the column names, e.g. query_id='qid', doc_id='docno'",
    )
    resolved: Literal["rank", "score"]
    if order == "auto":
        if rank in run_schema:
            resolved = "rank"
        elif score in run_schema:
            resolved = "score"
        else:
            raise ColumnNotFoundError(
                f"the {frame} has neither a {rank!r} nor a {score!r} column to order its "
                f"documents (its columns: {', '.join(repr(c) for c in run_schema.names())}); "
                "name yours with rank=... or score=..."
            )
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
            "pass the column names, e.g. relevance='label'",
        )
        check_numeric(qrels_schema, relevance, "judgments", integer=False)
        for column, kind in ((query_id, query_kind), (doc_id, doc_kind)):
            other = id_kind(qrels_schema, column, "judgments")
            if other != kind:
                raise ColumnTypeError(
                    f"column {column!r} holds {kind}s in the run ({run_schema[column]}) but "
                    f"{other}s in the judgments ({qrels_schema[column]}); cast one side, "
                    f"e.g. pl.col({column!r}).cast(pl.String) on both"
                )
            if kind == "integer" and run_schema[column] != qrels_schema[column]:
                cast_ids[column] = _common_integer(run_schema[column], qrels_schema[column])
        qrels_keys = (*(k for k in by_keys if k in qrels_schema), query_id)
        run_only_by = tuple(k for k in by_keys if k not in qrels_schema)
        for key in by_keys:
            if key in qrels_schema and run_schema[key] != qrels_schema[key]:
                raise ColumnTypeError(
                    f"column {key!r} has dtype {run_schema[key]} in the run but "
                    f"{qrels_schema[key]} in the judgments; cast one side to match"
                )
    check = CheckSpec(
        keys=(*by_keys, query_id),
        query_id=query_id,
        doc_id=doc_id,
        rank=rank if resolved == "rank" else None,
        score=score if resolved == "score" else None,
        relevance=relevance,
        judged_table=judged_table,
        unjudged=unjudged_policy,
        unretrieved=unretrieved_policy,
        check_duplicates=check_duplicates,
    )
    return _Setup(
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
        relevance_level=float(relevance_level),
    )


def _with_positions(
    run: pl.LazyFrame, setup: _Setup, keep: Callable[[pl.LazyFrame], pl.LazyFrame]
) -> pl.LazyFrame:
    """The rows ``keep`` takes from the run, with their position in ``_RANK`` (1 = top).

    ``keep`` (a join with the judgments, or all rows of a judged table) must keep the
    key, id and order columns. By rank, the position is the rank. By score, it is 1 +
    the documents of the query with a higher score + those with the same score and a
    greater id compared as text (trec_eval). The first two terms are a ``rank("min")``
    of the scores within the query, and a ``rank("max")`` beside it (sharing the
    window's grouping) tells which documents tie: only the kept rows that tie are then
    matched with the query's other tied documents to count those with a greater id.
    A window ordered by (score, id) would sort every query's whole list by two keys,
    at several times the cost, to place documents that are mostly never read.
    """
    if setup.order == "rank":
        # not strict: a rank beyond Int64 (a UInt64 at 2**63 or more) is refused by the
        # data checks (big_rank), not by polars' cast
        rank = pl.col(setup.rank).cast(pl.Int64, strict=False)
        return keep(run.with_columns(rank.alias(_RANK)))
    keys = list(setup.keys)
    score = setup.score
    doc = pl.col(setup.doc_id)
    text = doc if setup.doc_is_string else doc.cast(pl.String)
    low, high = pl.col(_LOW), pl.col(_HIGH)
    other, above = f"{INTERNAL}other", f"{INTERNAL}above"
    # cached, as is ``rows``: each is read twice (the tied rows are matched against it)
    windowed = run.with_columns(
        pl.col(score).rank("min", descending=True).over(keys).cast(pl.Int64).alias(_LOW),
        pl.col(score).rank("max", descending=True).over(keys).cast(pl.Int64).alias(_HIGH),
    ).cache()
    tied = (low != high).fill_null(False)
    rows = keep(windowed).cache()
    place = [*keys, setup.doc_id, score]
    ties = windowed.filter(tied).select(*keys, score, text.alias(other))
    ahead = (
        rows.filter(tied)
        .select(place)
        .unique()
        .join(ties, on=[*keys, score], how="inner", nulls_equal=False)
        .group_by(place)
        .agg((pl.col(other) > text).sum().cast(pl.Int64).alias(above))
    )
    return (
        rows.join(ahead, on=place, how="left", nulls_equal=False)
        .with_columns((low + pl.col(above).fill_null(0)).alias(_RANK))
        .drop(_LOW, _HIGH, above)
    )


def _num_ret(setup: _Setup) -> pl.Expr:
    """Documents retrieved for a query, within ``depth``, from the run as given.

    Ranked by score, the positions are 1..n over the n documents with a score, so
    ``depth`` keeps min(n, depth) of them.
    """
    if setup.order == "rank":
        rank = pl.col(setup.rank)
        kept = rank.count() if setup.depth is None else (rank <= setup.depth).sum()
    else:
        kept = pl.col(setup.score).count()
        if setup.depth is not None:
            kept = pl.min_horizontal(kept, pl.lit(setup.depth))
    return kept.cast(pl.Int64)


def _judged_rank_check(setup: _Setup) -> list[pl.Expr]:
    """Without the run's duplicate checks, still refuse judged documents sharing a rank."""
    if setup.check.check_duplicates or setup.order == "score":
        return []
    # ``when``, not ``filter``: a filter inside the aggregation keeps the streaming
    # group-by from partitioning it
    ranks = pl.when(pl.col(_SRC) == 1).then(pl.col(_RANK)).drop_nulls()
    return [(ranks.count() - ranks.n_unique()).alias(flag("j_dup_rank"))]


def _term_check(scope: PlanScope) -> list[pl.Expr]:
    """Per query, the rows with a float-sum term the fixed-point sums cannot hold."""
    if not scope.summed:
        return []
    too_big = pl.any_horizontal(*(beyond_fixed(value) for value in scope.summed.values()))
    return [too_big.sum().cast(pl.Int64).alias(flag("q_big_term"))]


def _bad_rows(run: pl.LazyFrame, setup: _Setup) -> pl.LazyFrame:
    """Per query, the run's rows with a null id, a bad rank or a bad score, by kind.

    A filter, then a group-by of what passes it: on clean data nothing does, so this
    costs one cheap predicate per row (and on Parquet whole row groups are skipped by
    their statistics). A null key makes a row of its own, with the key null.
    """
    doc = pl.col(setup.doc_id)
    kinds = {"null_doc": doc.is_null()}
    if setup.order == "rank":
        r = pl.col(setup.rank)
        if not setup.check.judged_table:  # there, a null rank means "not retrieved"
            kinds["null_rank"] = r.is_null()
        kinds["bad_rank"] = r < 1  # null for a null rank: the filter drops it, sum skips it
        kinds["big_rank"] = r > _INT64_MAX
    else:
        s = pl.col(setup.score).cast(pl.Float64)
        kinds["null_score"] = s.is_null()
        kinds["nan_score"] = s.is_nan()
    # an ``|`` chain without ``fill_null`` (unlike ``any_horizontal``, or a
    # ``fill_null`` inside the chain): Parquet statistics can then skip row groups for
    # it (measured: 0.002 s against 0.13 s on 10M rows)
    bad = functools.reduce(
        operator.or_, [*(pl.col(k).is_null() for k in setup.keys), *kinds.values()]
    )
    return (
        run.filter(bad)
        .group_by(list(setup.keys))
        .agg(cond.sum().cast(pl.Int64).alias(flag(name)) for name, cond in kinds.items())
    )


def _doc_fingerprint(doc: pl.Expr, setup: _Setup) -> pl.Expr:
    """What the duplicate check counts distinct values of: a string id's 64-bit hash.

    Hashing first makes the per-query sets hold integers instead of strings (measured
    on 10M rows: 9 % less time and 150 MiB less memory for the whole plan). Two ids of
    one query may share a hash, so the count can only err upwards; a flagged query is
    recounted exactly before anything is raised (:func:`_recount`).
    """
    return doc.hash() if setup.doc_is_string else doc


def _dup_doc(doc: pl.Expr) -> pl.Expr:
    """Per query, the rows beyond the first of each distinct ``doc`` (its ids, or their
    fingerprints): the plan's check and the exact recount count the same way."""
    return (pl.len() - doc.n_unique()).cast(pl.Int64).alias(flag("dup_doc"))


def _duplicate_checks(setup: _Setup) -> list[pl.Expr]:
    """Per query, documents listed twice and ranks held twice: a hash set per query."""
    if not setup.check.check_duplicates:
        return []
    checks = [_dup_doc(_doc_fingerprint(pl.col(setup.doc_id), setup))]
    if setup.order == "rank":
        r = pl.col(setup.rank)
        checks.append(
            (r.count() - r.drop_nulls().n_unique()).cast(pl.Int64).alias(flag("dup_rank"))
        )
    return checks


def _recount(run: pl.LazyFrame, setup: _Setup) -> dict[str, Recount]:
    """Exact duplicate-document counts for the queries the hashed check flagged.

    Runs only on the error path (:func:`raise_on_bad_rows`), as a query of its own over
    the run as given, restricted to the flagged queries.
    """
    if not setup.check.check_duplicates or not setup.doc_is_string:
        return {}
    keys = list(setup.keys)

    def dup_doc(flagged: pl.DataFrame) -> pl.DataFrame:
        queries = flagged.lazy().select(keys)
        return (
            run.join(queries, on=keys, how="semi", nulls_equal=True)
            .group_by(keys)
            .agg(_dup_doc(pl.col(setup.doc_id)))
            .collect()
        )

    return {"dup_doc": dup_doc}
