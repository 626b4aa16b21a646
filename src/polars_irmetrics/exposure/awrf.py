"""AWRF and its product with nDCG (TREC Fair 2022, task 1) as one lazy plan.

wptrec's ``AWRFMetric`` (``wptrec/metrics/awrf.py``): position ``i`` (1-based) weighs
``w_i = 1 / log2(max(i, 2))``; the ranking's group distribution is the weighted mean of
its documents' alignments (a document in ``k`` groups is aligned ``1/k`` to each, a
document in no group is left out, as wptrec drops unknown pages), and
``awrf = 1 - JSD(ranking, target)`` with scipy's ``jensenshannon`` (natural log) squared.
``awrf_ndcg`` multiplies it by wptrec's binary nDCG (ideal over ``min(500, R)``). A run
with a ``sample`` column gets the mean over the query's sampled rankings. See
:mod:`polars_irmetrics.metrics.fairness`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_irmetrics.metrics._common import divide
from polars_irmetrics.metrics.fairness import AWRF_LENGTH
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import beyond_fixed, fixed_sum

__all__ = [
    "SEP",
    "alignments",
    "awrf_values",
    "cell_name",
    "cell_totals",
    "exact_mean",
    "exact_sum",
    "target_flags",
]

Requests = list[tuple[str, MetricRequest]]

_S, _POS, _REL, _G, _A, _P, _Q = "__s", "__pos", "__rel", "__g", "__a", "__p", "__q"
_W, _BAD = "__w", "__bad"


def _weight(position: pl.Expr) -> pl.Expr:
    """wptrec's ``discount``: ``1 / log2(max(rank, 2))`` of the 1-based rank."""
    return 1.0 / pl.max_horizontal(position + 1, pl.lit(2)).cast(pl.Float64).log(2)


def exact_sum(value: pl.Expr) -> pl.Expr:
    """Group context: the sum of ``value`` the same to the last bit in any row order (a
    join or a streamed group-by leaves the rows in any order): a fixed-point sum
    (:func:`~polars_irmetrics.metrics.scope.fixed_sum`), or the float sum where a value
    is too large or not finite (NaN or infinite either way)."""
    return pl.when(beyond_fixed(value).any()).then(value.sum()).otherwise(fixed_sum(value))


def exact_mean(value: pl.Expr) -> pl.Expr:
    """Group context: the mean of the non-null ``value`` (:func:`exact_sum`), null when
    none is."""
    count = value.count()
    return pl.when(count > 0).then(exact_sum(value) / count)


def _rel_entr(x: pl.Expr, y: pl.Expr) -> pl.Expr:
    """scipy's ``rel_entr``: ``x ln(x/y)``, 0 where ``x`` is 0."""
    return pl.when(x > 0).then(x * (x / y).log()).otherwise(0.0)


def alignments(
    groups: pl.LazyFrame, doc_id: str, dimensions: Sequence[str], *, named: bool = True
) -> pl.LazyFrame:
    """``doc_id, __g0 .. __g{D-1}, __a``: each document's alignment to each cell of its
    groups' intersection, wptrec's outer product of its dimensions' alignments (a
    document with ``k`` values of one dimension is aligned ``1/k`` to each).

    One dimension is the column ``group`` as it is (a duplicate (document, group) row
    is refused by the plan's checks); with several, each column's distinct non-null
    values per document (so the rows may pair them in any way), and a document with no
    value in some dimension is in no cell (left out, as a document in no group).
    ``named``: the cells as text (their names, as the target's are matched); ``False``
    keeps each column's dtype (a join of every ranked row, then named on the few cells:
    :func:`cell_totals`).
    """
    parts = []
    for j, column in enumerate(dimensions):
        value = pl.col(column).cast(pl.String) if named else pl.col(column)
        part = groups.select(doc_id, value.alias(f"{_G}{j}"))
        if len(dimensions) > 1:
            part = part.drop_nulls(f"{_G}{j}").unique()
        parts.append(
            part.with_columns((1.0 / pl.len().over(doc_id).cast(pl.Float64)).alias(f"{_A}{j}"))
        )
    joined = parts[0]
    for part in parts[1:]:
        joined = joined.join(part, on=doc_id)
    product = pl.lit(1.0)
    for j in range(len(dimensions)):
        product = product * pl.col(f"{_A}{j}")
    return joined.select(doc_id, *_cells(len(dimensions)), product.alias(_A))


def _cells(count: int) -> list[str]:
    return [f"{_G}{j}" for j in range(count)]


#: :func:`cell_totals`' columns: the ranking's documents in the cell, and their attention.
CELL_COUNT, CELL_ATTENTION = "__c", _P


def cell_totals(grouped: pl.LazyFrame, query_id: str, *, sampled: bool = True) -> pl.LazyFrame:
    """One row per (ranking, cell) of one dimension: ``query_id, __s, __g0`` (the cell
    as ``grouped`` holds it), the count of the ranking's documents in it (``__c``: rND's
    minority group) and their attention (``__p``: awrf's weighted sum of alignments), from
    ``grouped`` (``query_id, __s, __pos, __g0, __a``: each ranked row with its group, as
    :func:`alignments` gives it); one group-by of every ranked row for both measures.
    The attention is a fixed-point sum, the same bits for any set of rows it is later
    filtered to. ``sampled=False``: each query holds one ranking (``__s`` is 0 on every
    row), grouped by the query alone (a key fewer to hash on every ranked row)."""
    totals = [
        pl.len().alias(CELL_COUNT),
        fixed_sum(_weight(pl.col(_POS)) * pl.col(_A)).alias(CELL_ATTENTION),
    ]
    cell = f"{_G}0"
    if sampled:
        return grouped.group_by(query_id, _S, cell).agg(totals)
    return (
        grouped.group_by(query_id, cell)
        .agg(totals)
        .select(query_id, pl.lit(0).alias(_S), cell, CELL_COUNT, CELL_ATTENTION)
    )


def awrf_values(
    ranked: pl.LazyFrame,
    relevant: pl.LazyFrame,
    groups: pl.LazyFrame,
    target: pl.LazyFrame | None,
    query_id: str,
    doc_id: str,
    requests: Requests,
    *,
    dimensions: Sequence[str] = ("group",),
    per_query_target: bool = False,
    rankings: pl.LazyFrame | None = None,
    totals: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row per query: each requested ``awrf``/``awrf_ndcg`` label, the mean over the
    query's sampled rankings (``rankings``: ``query_id, __s``, the rankings of
    ``ranked``; ``totals``: one dimension's :func:`cell_totals` of rankings including ``ranked``'s
    (the others are left out here); each where the caller has it already).

    ``ranked``: ``query_id, __s, doc_id, __rel, __pos`` (0-based positions);
    ``relevant``: ``query_id, doc_id, __rel`` (relevance > 0); ``groups``:
    ``doc_id`` and the ``dimensions`` columns (``group``, or several: intersectional
    groups, see :func:`alignments`); ``target``: the ``dimensions`` columns and
    ``target``, with ``query_id`` too when ``per_query_target`` (one distribution per
    query), or ``None`` (the relevant documents' group distribution, wptrec's target
    for its dimensions without a background population).
    """
    cells = _cells(len(dimensions))
    # one group column: the groups as groups= holds them (the target's of one dtype with
    # them: the plan casts both to a common one); several: each cell named as text
    named = len(dimensions) > 1
    align = alignments(groups, doc_id, dimensions, named=named)
    kinds = groups.collect_schema()
    keys = [query_id, _S]
    if rankings is None:
        rankings = ranked.select(keys).unique()
    # the weights and alignments are finite and at most 1: plain fixed-point sums
    # each cell's weighted sum: scipy's normalisation below (each cell over the cells'
    # total) makes it the weighted mean, so no division by the weights' total is needed
    if totals is not None:  # the cells named here, on the few rows of the totals
        run_dist = totals.join(rankings, on=keys, how="semi").select(
            *keys, pl.col(cells[0]).cast(pl.String) if named else pl.col(cells[0]), CELL_ATTENTION
        )
    else:
        grouped = ranked.join(align, on=doc_id, how="inner")
        known = grouped.with_columns(_weight(pl.col(_POS)).alias(_W))
        run_dist = known.group_by([*keys, *cells]).agg(
            fixed_sum(pl.col(_W) * pl.col(_A)).alias(_P)
        )
    if target is None:
        wanted = (
            relevant.join(align, on=doc_id, how="inner")
            .group_by(query_id, *cells)
            .agg(fixed_sum(pl.col(_A)).alias(_Q))
        )
        per_query = wanted.join(rankings, on=query_id)
    else:
        table = target.select(
            *([query_id] if per_query_target else []),
            *(
                (pl.col(c).cast(pl.String) if named else pl.col(c).cast(kinds[c])).alias(cell)
                for c, cell in zip(dimensions, cells, strict=True)
            ),
            pl.col("target").cast(pl.Float64).alias(_Q),
        )
        if per_query_target:  # the plan refuses a scored query with no target row
            per_query = rankings.join(table, on=query_id)
        else:
            per_query = rankings.join(table, how="cross")
    cells_of = (
        run_dist.join(per_query, on=[*keys, *cells], how="full", coalesce=True)
        .with_columns(pl.col(_P).fill_null(0.0), pl.col(_Q).fill_null(0.0))
        .cache()  # read by the totals and divided by them
    )
    # scipy normalises both vectors: each ranking's totals from a group-by joined back
    # (a window of these sums, in-memory and group by group, took 3x as long), each
    # quotient by divide: a column joined from one row is divided as one scalar
    totals_of = cells_of.group_by(keys).agg(
        exact_sum(pl.col(_P)).alias("__tp"), exact_sum(pl.col(_Q)).alias("__tq")
    )
    both = (
        cells_of.join(totals_of, on=keys, how="left", nulls_equal=True)
        .with_columns(
            divide(pl.col(_P), pl.col("__tp")).alias(_P),
            divide(pl.col(_Q), pl.col("__tq")).alias(_Q),
        )
        .with_columns(((pl.col(_P) + pl.col(_Q)) / 2.0).alias("__m"))
    )
    divergence = (
        exact_sum(_rel_entr(pl.col(_P), pl.col("__m")) + _rel_entr(pl.col(_Q), pl.col("__m")))
        / 2.0
    )
    fairness = both.group_by(keys).agg((1.0 - divergence).alias("awrf"))
    # wptrec's nDCG: binary gain, the ideal over min(500, R) relevant documents
    ideal = (
        pl.LazyFrame({"__r": pl.int_range(1, AWRF_LENGTH + 1, eager=True)})
        .with_columns(_weight(pl.col("__r") - 1).cum_sum().alias("__ideal"))
        .select(pl.col("__r").cast(pl.Int64), "__ideal")
    )
    counts = (
        relevant.group_by(query_id)
        .agg(pl.len().clip(upper_bound=AWRF_LENGTH).cast(pl.Int64).alias("__r"))
        .join(ideal, on="__r")
    )
    # the DCG from the relevant rows alone (a fixed-point sum: the other rows' zero
    # terms changed nothing), 0 for a ranking of a judged query that retrieved none
    dcg = (
        ranked.filter(pl.col(_REL).is_not_null())
        .group_by(keys)
        .agg(fixed_sum(_weight(pl.col(_POS))).alias("__dcg"))
    )
    gains = (
        rankings.join(counts, on=query_id)
        .join(dcg, on=keys, how="left", nulls_equal=True)
        .select(*keys, (pl.col("__dcg").fill_null(0.0) / pl.col("__ideal")).alias("ndcg"))
    )
    values = rankings.join(fairness, on=keys, how="left").join(gains, on=keys, how="left")
    values = values.with_columns(
        pl.col("awrf").fill_null(float("nan")),
        (pl.col("ndcg") * pl.col("awrf").fill_null(float("nan"))).alias("awrf_ndcg"),
    )
    return values.group_by(query_id).agg(
        exact_mean(pl.col(request.metric.name)).alias(label) for label, request in requests
    )


#: Between a query id and a group (cell) name in a per-query target's flag values.
SEP = "\x1f"


def cell_name(dimensions: Sequence[str]) -> pl.Expr:
    """A target row's group (one dimension) or its cell's groups joined by ``', '``."""
    return pl.concat_str(
        [pl.col(c).cast(pl.String).fill_null("null") for c in dimensions], separator=", "
    )


def target_flags(
    target: pl.LazyFrame, dimensions: Sequence[str] = ("group",), query_id: str | None = None
) -> pl.LazyFrame:
    """One row of first offenders in the target table (null when none); with
    ``query_id`` (a per-query target) each value is ``query SEP group`` and the sum is
    checked per query."""
    value = pl.col("target").cast(pl.Float64)
    name = cell_name(dimensions)
    bad = value.is_null() | value.is_nan() | (value < 0)
    # a row with a null id (group, a dimension or the query): its share is no group's
    ids = [*([] if query_id is None else [query_id]), *dimensions]
    nameless = pl.any_horizontal(pl.col(c).is_null() for c in ids)
    null_ids = (
        pl.when(nameless.any())
        .then(nameless.sum().cast(pl.String))
        .alias("|".join([f"{_BAD}", "null target", *ids]))
    )
    if query_id is None:
        total = value.sum()
        return target.select(
            null_ids,
            name.filter(bad).min().alias(f"{_BAD}|bad target"),
            pl.when((total - 1.0).abs() > 1e-6)
            .then(total.cast(pl.String))
            .otherwise(None)
            .alias(f"{_BAD}|target sum"),
            name.filter(pl.struct(dimensions).is_duplicated())
            .min()
            .alias(f"{_BAD}|duplicate target"),
        )
    query = pl.col(query_id).cast(pl.String)
    keyed = pl.concat_str([query, name], separator=SEP)
    rows = target.select(
        null_ids,
        keyed.filter(bad).min().alias(f"{_BAD}|bad target"),
        keyed.filter(pl.struct([query_id, *dimensions]).is_duplicated())
        .min()
        .alias(f"{_BAD}|duplicate target"),
    )
    sums = (
        target.group_by(query_id)
        .agg(value.sum().alias("__t"))
        .select(
            pl.concat_str([query, pl.col("__t").cast(pl.String)], separator=SEP)
            .filter((pl.col("__t") - 1.0).abs() > 1e-6)
            .min()
            .alias(f"{_BAD}|target sum")
        )
    )
    return pl.concat([rows, sums], how="horizontal")
