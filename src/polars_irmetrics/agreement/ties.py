"""The warnings of the rank correlations left null by tie groups, or by too few
shared documents.

``kendall_tau`` and ``tau_ap(ties='b')`` are null on a query where a side ties every
shared document (no order to compare), and ``tau_ap`` (``ties='a'``, the default) where
the reference ties shared documents (the truth has no ties): such a query is left out
of the mean, and a reference tied on every query gives a null mean. The plan marks each
such query in a column of its own per metric (:func:`tied_column`, True there); the
marks are counted (:func:`ties_tally`, one row per metric: how many queries, of how
many, and the first by its keys) and one warning names them all
(:func:`warn_on_ties`). A split evaluation (buckets, an engine's parts) counts each
part and adds the counts up (:func:`merged_tally`): one warning per call, as one plan
gives it. The same tally counts the queries these correlations (and repro_eval's
``ktu``) are null on otherwise: fewer than two shared documents, or a query one side
has no ranking of; a warning of its own names them.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.validate import INTERNAL, warn_from_plan
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics.registry import MetricRequest

__all__ = [
    "merged_tally",
    "tied_column",
    "tied_columns",
    "ties_tally",
    "warn_on_ties",
    "with_ties_warning",
]

Requests = Sequence[tuple[str, MetricRequest]]

#: The correlations a tie group can leave without a value.
_TIED = ("kendall_tau", "tau_ap")
#: The correlations null below two shared documents (repro_eval's ``ktu``: two paired
#: positions), ties or not.
_PAIRED = (*_TIED, "ktu")


def tied_column(label: str) -> str:
    """The column that marks the queries where ``label`` is null for its ties."""
    return f"{INTERNAL}tied|{label}"


def tied_columns(requests: Requests) -> list[str]:
    """The mark columns of the metrics ``requests`` asks for that ties can leave null."""
    return [tied_column(label) for label, request in requests if request.metric.name in _TIED]


def ties_tally(frame: pl.DataFrame, requests: Requests, keys: Sequence[str]) -> pl.DataFrame:
    """One row per correlation: ``label``, ``count`` (the queries of ``frame`` it is
    null on for its ties), ``queries`` (the rows of ``frame``), ``first`` (the first
    such query's ``keys``, a struct; null where none), and ``few`` and ``first_few``
    likewise of the queries it is null on otherwise: fewer than two shared documents
    (none where one side has no ranking of the query). ``frame`` holds the per-query
    values and the marks.

    >>> frame = pl.DataFrame({"query_id": ["b", "a", "c", "d"],
    ...                       "tau_ap": [None, None, 0.5, None],
    ...                       tied_column("tau_ap"): [True, True, False, False]})
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> ties_tally(frame, parse_metric_list(["tau_ap"]), ["query_id"]).row(0)
    ('tau_ap', 2, 4, {'query_id': 'a'}, 1, {'query_id': 'd'})
    """
    rows = []
    for label, request in requests:
        if request.metric.name not in _PAIRED:
            continue
        marked = (
            pl.col(tied_column(label)).fill_null(False)
            if request.metric.name in _TIED
            else pl.lit(False)
        )
        few = pl.col(label).is_null() & ~marked
        rows.append(
            frame.select(
                pl.lit(label, pl.String).alias("label"),
                marked.sum().cast(pl.Int64).alias("count"),
                pl.len().cast(pl.Int64).alias("queries"),
                pl.struct(*keys).filter(marked).sort().first().alias("first"),
                few.sum().cast(pl.Int64).alias("few"),
                pl.struct(*keys).filter(few).sort().first().alias("first_few"),
            )
        )
    if not rows:
        return pl.DataFrame()
    return pl.concat(rows, how="vertical")


def merged_tally(parts: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The tallies of the parts of a split evaluation (:func:`ties_tally`'s, each part
    holding its own queries) added up: the counts summed, the first query the first of
    the parts' firsts."""
    found = [part for part in parts if part.height]
    if not found:
        return pl.DataFrame()
    return (
        pl.concat(found, how="vertical_relaxed")
        .group_by("label", maintain_order=True)
        .agg(
            pl.col("count").sum(),
            pl.col("queries").sum(),
            pl.col("first").drop_nulls().sort().first(),
            pl.col("few").sum(),
            pl.col("first_few").drop_nulls().sort().first(),
        )
    )


def warn_on_ties(tally: pl.DataFrame, requests: Requests, keys: Sequence[str]) -> None:
    """One :class:`~polars_irmetrics.errors.IrmWarning` naming each metric of
    ``tally`` (:func:`ties_tally`'s, or :func:`merged_tally`'s) null on some queries
    for their ties: how many, the first, why, and the fix where there is one."""
    if not tally.height:
        return
    asked = dict(requests)
    _warn_on_few(tally, keys)
    said = []
    for row in tally.filter(pl.col("count") > 0).iter_rows(named=True):
        label, request = row["label"], asked[row["label"]]
        where = _where(label, row["count"], row["queries"], row["first"], keys)
        if request.metric.name == "tau_ap" and request.params(1.0).choice("ties") == "a":
            fix = "tau_ap(ties='b')" + ("" if request.k is None else f"@{request.k}")
            said.append(
                f"{where}, where the reference ties shared documents (equal scores): "
                "ties='a' (the default) reads the reference as the truth, which has no "
                f"ties; pass {fix}, which reads ties on both sides"
            )
        else:
            said.append(
                f"{where}, where the run or the reference ties every shared document (one score)"
            )
    if not said:
        return
    warn_from_plan(
        "rank correlations are null where tie groups leave no order to compare, and those "
        "queries are left out of the mean (num_q still counts them): " + "; ".join(said),
        IrmWarning,
    )


def _where(
    label: str, count: int, queries: int, first: dict[str, object], keys: Sequence[str]
) -> str:
    """``'label' on <count> of the <queries> queries (first: <query id> (<by keys>))``;
    a key of the library's own (reproducibility's run column) named without its
    internal prefix (``run='baseline'``, not ``__irm_run='baseline'``)."""
    query = repr(first[keys[-1]])
    if len(keys) > 1:
        shown = (f"{k.removeprefix(INTERNAL)}={first[k]!r}" for k in keys[:-1])
        query += " (" + ", ".join(shown) + ")"
    return f"{label!r} on {count} of the {queries} queries (first: {query})"


def _warn_on_few(tally: pl.DataFrame, keys: Sequence[str]) -> None:
    """One :class:`~polars_irmetrics.errors.IrmWarning` naming each correlation of
    ``tally`` null on some queries for want of two shared documents."""
    said = [
        _where(row["label"], row["few"], row["queries"], row["first_few"], keys)
        for row in tally.filter(pl.col("few") > 0).iter_rows(named=True)
    ]
    if not said:
        return
    warn_from_plan(
        "rank correlations are null where the run and the reference share fewer than two "
        "documents (one pair is the least a correlation reads; none where one side has no "
        "ranking of the query), and those queries are left out of the mean (num_q still "
        "counts them): "
        + "; ".join(said)
        + "; compare deeper rankings (a larger @k), and check that the two sides' doc ids "
        "match",
        IrmWarning,
    )


def with_ties_warning(
    values: pl.LazyFrame, requests: Requests, keys: Sequence[str]
) -> pl.LazyFrame:
    """``values`` (per-query, with the mark columns) without the marks, warning of them
    (:func:`warn_on_ties`) when the plan runs."""
    marks = tied_columns(requests)
    if not any(request.metric.name in _PAIRED for _, request in requests):
        return values
    schema = values.collect_schema()
    kept = [name for name in schema.names() if name not in marks]

    def read(frame: pl.DataFrame) -> pl.DataFrame:
        warn_on_ties(ties_tally(frame, requests, keys), requests, keys)
        return frame.select(kept)

    return values.map_batches(warns_in_order(read), schema=pl.Schema({n: schema[n] for n in kept}))
