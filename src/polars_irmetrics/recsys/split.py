"""The metrics of a recommendation table over a table split into parts, beyond the
means of per-user values: the hook the Spark and Dask engines call
(:mod:`polars_irmetrics.engines._recsys`).

* ``catalog_coverage@k``, ``distributional_coverage@k``, ``gini_index@k`` and
  ``novelty@k`` (:func:`~polars_irmetrics.metrics.registry.merges_from_counts`) read only
  how often each item is recommended within the cutoff, and the item's own columns (its
  popularity, the catalogue's size): each part gives its items' counts
  (:func:`part_rows` of kind ``"counts"``), and :func:`merge_rows` adds them up and
  computes each metric from the totals.
* RePlay's ``novelty(kind='replay')@k`` averages over the users of the history, a user
  without recommendations counting 1: each part gives its users' values (kind
  ``"users"``), and :func:`merge_rows` adds the history's other users and takes the
  one plan's exact mean (or gives every user's row, ``per_query=True``).

* A recommended item the history never holds, refused under ``unseen_items='error'``
  by the metrics that read its popularity or co-occurrence
  (:func:`~polars_irmetrics.recsys.plan.unseen_item_check`): each part lists its
  users' such items (:func:`~polars_irmetrics.recsys.plan.unseen_items`), and
  :func:`~polars_irmetrics.recsys.plan.merge_unseen_items` and
  :func:`~polars_irmetrics.recsys.plan.raise_on_unseen_items` refuse them with the
  whole run's count and example, one machine's message.

Every row of a user goes to one part (the position in a user's list, and the checks of
a list, read the user's rows), and every part and the merge read the history whole:
the same bits as :func:`polars_irmetrics.evaluate` in one plan, whatever the number of
parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import with_common_keys
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.recsys.options import recsys_options, recsys_tables
from polars_irmetrics.recsys.plan import (
    build_recsys_plan,
    merge_counts,
    merge_unseen_items,
    merge_users,
    raise_on_unseen_items,
    unseen_item_check,
    unseen_items,
)

__all__ = [
    "Kind",
    "merge_rows",
    "merge_unseen_items",
    "part_rows",
    "raise_on_unseen_items",
    "unseen_item_check",
    "unseen_items",
]

Requests = list[tuple[str, MetricRequest]]

#: The kinds of a part's rows: the items' counts, or the users' values of a metric
#: averaged over the history's users.
Kind = Literal["counts", "users"]


def part_rows(
    run: pl.LazyFrame,
    requests: Requests,
    sides: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    caller: str,
    kind: Kind,
) -> pl.LazyFrame:
    """One part's rows (every row of its users), once the part's checks pass: one per
    (``by`` group, item) with the item's count within each cutoff (``"counts"``), or
    each user's values and the group's count of history users (``"users"``). ``sides``:
    the history (``interactions``) and ``item_features``, whole. No warning of the
    history (the engine's, over the whole table)."""
    users = kind == "users"
    recsys = recsys_options(options.replace(per_query=True) if users else options, caller)
    # a by= key of one kind in two dtypes lined up, as the door lines it up
    run, sides = with_common_keys(run, sides, options.by_keys)
    tables = recsys_tables(run, sides.get("interactions"), sides.get("item_features"), recsys)
    return build_recsys_plan(
        tables, requests, recsys, tally=False, counts=kind == "counts", users=users
    )


def merge_rows(
    rows: pl.LazyFrame,
    run: pl.LazyFrame,
    requests: Requests,
    sides: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    caller: str,
    kind: Kind,
) -> pl.LazyFrame:
    """The result from every part's rows of :func:`part_rows` (stacked; ``run``: a frame
    of the run's schema, whose rows are not read): one row per ``by`` group with each
    metric, or with ``per_query=True`` (kind ``"users"``) every user's row, the
    history's users without recommendations included.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"],
    ...                     "rank": [1, 2, 1]})
    >>> history = {"interactions": pl.LazyFrame({"query_id": ["a", "c", "c"],
    ...                                          "doc_id": ["x", "y", "z"]})}
    >>> def merged(metric, kind):
    ...     requests = parse_metric_list([metric])
    ...     parts = [part_rows(run.filter(pl.col("query_id") == u), requests, history,
    ...                        EvalOptions(), "x", kind) for u in "ab"]
    ...     return merge_rows(pl.concat(parts), run, requests, history, EvalOptions(),
    ...                       "x", kind).collect().item()
    >>> merged("catalog_coverage@1", "counts")  # x alone at the top, of 3 items
    0.3333333333333333
    >>> merged("novelty(kind='replay')@2", "users")  # a: 1 - 1/2; c: 1; b: no history
    0.75
    """
    recsys = recsys_options(options, caller)
    run, sides = with_common_keys(run, sides, options.by_keys)
    tables = recsys_tables(run, sides.get("interactions"), sides.get("item_features"), recsys)
    merge = merge_counts if kind == "counts" else merge_users
    return merge(rows, tables, requests, recsys)
