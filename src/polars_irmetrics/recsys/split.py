"""The metrics of a recommendation table over a table split into parts, beyond the
means of per-user values: the hook the Spark and Dask engines call
(:mod:`polars_irmetrics.engines._recsys`).

* ``catalog_coverage@k``, ``distributional_coverage@k``, ``gini_index@k`` and
  ``novelty@k`` (:func:`~polars_irmetrics.metrics.registry.merges_from_counts`) read only
  how often each item is recommended within the cutoff, and the item's own columns (its
  popularity, the catalogue's size): each part gives its items' counts
  (:func:`part_counts`), and :func:`merge_part_counts` adds them up and computes each
  metric from the totals.
* RePlay's ``novelty(kind='replay')@k`` averages over the users of the history, a user
  without recommendations counting 1: each part gives its users' values
  (:func:`part_users`), and :func:`merge_part_users` adds the history's other users
  and takes the one plan's exact mean (or gives every user's row, ``per_query=True``).

Every row of a user goes to one part (the position in a user's list, and the checks of
a list, read the user's rows), and every part and the merge read the history whole:
the same bits as :func:`polars_irmetrics.evaluate` in one plan, whatever the number of
parts.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.recsys.options import RecsysOptions, Tables, recsys_options, recsys_tables
from polars_irmetrics.recsys.plan import build_recsys_plan, merge_counts, merge_users

__all__ = ["merge_part_counts", "merge_part_users", "part_counts", "part_users"]

Requests = list[tuple[str, MetricRequest]]


def part_counts(
    run: pl.LazyFrame,
    requests: Requests,
    sides: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    caller: str,
) -> pl.LazyFrame:
    """One part's rows (every row of its users): one row per (``by`` group, item) with
    the item's count within each cutoff, once the part's checks pass. ``sides``: the
    history (``interactions``) and ``item_features``, whole. No warning of the history
    (the engine's, over the whole table)."""
    recsys, tables = _beyond(run, sides, options, caller)
    return build_recsys_plan(tables, requests, recsys, tally=False, counts=True)


def part_users(
    run: pl.LazyFrame,
    requests: Requests,
    sides: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    caller: str,
) -> pl.LazyFrame:
    """One part's rows (every row of its users): each user's values and the group's count
    of history users, once the part's checks pass (``build_recsys_plan(users=True)``)."""
    recsys, tables = _beyond(run, sides, options.replace(per_query=True), caller)
    return build_recsys_plan(tables, requests, recsys, tally=False, users=True)


def merge_part_users(
    values: pl.LazyFrame,
    run: pl.LazyFrame,
    requests: Requests,
    sides: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    caller: str,
) -> pl.LazyFrame:
    """The result from every part's rows of :func:`part_users` (stacked; ``run``: a frame
    of the run's schema, whose rows are not read): the means, or with ``per_query=True``
    every user's row, the history's users without recommendations included.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"],
    ...                     "rank": [1, 2, 1]})
    >>> history = {"interactions": pl.LazyFrame({"query_id": ["a", "c"],
    ...                                          "doc_id": ["x", "z"]})}
    >>> requests = parse_metric_list(["novelty(kind='replay')@2"])
    >>> parts = [part_users(run.filter(pl.col("query_id") == u), requests, history,
    ...                     EvalOptions(), "x") for u in "ab"]
    >>> merge_part_users(pl.concat(parts), run, requests, history, EvalOptions(),
    ...                  "x").collect().item()  # a: 1 - 1/2; c: 1; b has no history
    0.75
    """
    recsys, tables = _beyond(run, sides, options, caller)
    return merge_users(values, tables, requests, recsys)


def merge_part_counts(
    counts: pl.LazyFrame,
    run: pl.LazyFrame,
    requests: Requests,
    sides: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    caller: str,
) -> pl.LazyFrame:
    """One row per ``by`` group with each metric, from every part's rows of
    :func:`part_counts` (stacked; ``run``: a frame of the run's schema, whose rows are
    not read).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"],
    ...                     "rank": [1, 2, 1]})
    >>> history = {"interactions": pl.LazyFrame({"query_id": ["a"] * 3,
    ...                                          "doc_id": ["x", "y", "z"]})}
    >>> requests = parse_metric_list(["catalog_coverage@1"])
    >>> parts = [part_counts(run.filter(pl.col("query_id") == u), requests, history,
    ...                      EvalOptions(), "x") for u in "ab"]
    >>> merge_part_counts(pl.concat(parts), run, requests, history, EvalOptions(),
    ...                   "x").collect().item()  # x alone at the top, of 3 items
    0.3333333333333333
    """
    recsys, tables = _beyond(run, sides, options, caller)
    return merge_counts(counts, tables, requests, recsys)


def _beyond(
    run: pl.LazyFrame,
    sides: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    caller: str,
) -> tuple[RecsysOptions, Tables]:
    """The beyond-accuracy options and tables of an engine's call, as the door makes them."""
    recsys = recsys_options(options, caller)
    tables = recsys_tables(run, sides.get("interactions"), sides.get("item_features"), recsys)
    return recsys, tables
