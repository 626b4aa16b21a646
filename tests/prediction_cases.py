"""The click log and cases the engines' prediction metrics are checked on against
``irm.evaluate``."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

import polars_irmetrics as irm

BINARY = [
    "auc",
    "pr_auc",
    "gauc",
    "gauc(weighting='uniform')",
    "logloss",
    "ne",
    "brier",
    "calibration",
    "ece@4",
]
RATING = ["rmse", "mae", "mse", "r2", "explained_variance"]


def _log() -> pl.DataFrame:
    """60 users (integer ids), two segments, probabilities on a grid of 0.05 (ties),
    users with one class, weights, and ratings for the rating metrics."""
    rng = np.random.default_rng(31)
    n = 600
    user = rng.integers(0, 60, n)
    p = np.round(rng.integers(0, 21, n) / 20, 2)
    clicked = (rng.random(n) < p).astype(np.int64)
    clicked[user % 7 == 0] = 0  # users with no click: left out of gauc, counted
    return pl.DataFrame(
        {
            "user": user,
            "item": np.arange(n),
            "segment": np.where(user % 3 == 0, "mobile", "desktop"),
            "clicked": clicked,
            "p": p,
            "w": rng.choice([0.5, 1.0, 2.0], n),
            "rating": rng.integers(1, 6, n),
            "rating_hat": np.round(rng.uniform(1, 5, n), 1),
        }
    )


LOG = _log()
TRUTH = LOG.select("user", "item", "rating")
PREDICTED = LOG.select("user", "item", "segment", "rating_hat")
BINARY_KW = {"label": "clicked", "prediction": "p", "query_id": "user"}
RATING_KW = {"label": "rating", "prediction": "rating_hat", "query_id": "user", "doc_id": "item"}

#: (id, table, labels, metrics, options, per_query). Per user, each part runs the
#: one-machine plan with the call's options (engines/_prediction.prediction_part):
#: sample_weight= changes the engines' path for the means only (the merged statistics),
#: so the weighted per-user cases are one of each table form, not one of each by=
PREDICTION_CASES: list[
    tuple[str, pl.DataFrame, pl.DataFrame | None, list[str], dict[str, Any], bool]
] = [
    ("means", LOG, None, BINARY, BINARY_KW, False),
    ("weighted-by-segment", LOG, None, BINARY, {**BINARY_KW, "sample_weight": "w", "by": "segment"}, False),  # noqa: E501
    ("per-user-by-segment", LOG, None, BINARY, {**BINARY_KW, "by": "segment"}, True),
    ("two-tables-per-user", PREDICTED, TRUTH, RATING, RATING_KW, True),
    ("two-tables-by-segment", PREDICTED, TRUTH, RATING, {**RATING_KW, "by": "segment"}, False),
    ("weighted-ratings", LOG, None, RATING, {**RATING_KW, "label": "rating", "prediction": "rating_hat", "sample_weight": "w"}, False),  # noqa: E501
    ("weighted-ratings-per-user", LOG, None, RATING, {**RATING_KW, "sample_weight": "w"}, True),
]  # fmt: skip


def shuffled(table: pl.DataFrame, seed: int = 7) -> pl.DataFrame:
    """The rows of ``table`` in another order: a query's rows reach each path in its own
    order, and the values must not depend on it."""
    return table.sample(fraction=1.0, shuffle=True, seed=seed)


def expected(
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    per_query: bool,
) -> pl.DataFrame:
    """``irm.evaluate``'s result on the rows in another order (:func:`shuffled`), the one
    every engine must give from the rows in their own order."""
    return irm.evaluate(
        shuffled(table),
        metrics,
        labels=None if labels is None else shuffled(labels),
        per_query=per_query,
        **ids_read(options, metrics, labels, per_query),
    )


def ids_read(
    options: dict[str, Any], metrics: list[str], labels: pl.DataFrame | None, per_query: bool
) -> dict[str, Any]:
    """``options`` less the ids no metric reads (every path refuses them): ``query_id``
    is read only by ``gauc``, ``per_query=True`` and ``labels=``, ``doc_id`` only with
    ``labels=``; the cases give both, and each path is called with these."""
    if labels is not None:
        return options
    drop = {"doc_id"} if per_query or "gauc" in metrics else {"query_id", "doc_id"}
    return {name: value for name, value in options.items() if name not in drop}


def assert_same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """The schema, the keys, the counts, the order and every value (means and per-query
    values, weighted or not) to the last bit, nulls equal: both add the same integers
    (units of 2**-64, per ``by`` group or per query) and compute each metric from them
    with the same float operations (:mod:`polars_irmetrics.prediction.statistics`),
    whatever the order the rows arrive in."""
    assert got.schema == want.schema
    assert got.height == want.height > 0
    for column in want.columns:
        assert got[column].to_list() == want[column].to_list(), column


def assert_histogram_exact(
    got: pl.DataFrame,
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    per_query: bool,
) -> None:
    """Every value equal to the last bit to one machine's out-of-core path (``buckets=``:
    for the means ``auc`` and ``pr_auc`` from score ranges on disk) and to a LazyFrame's,
    the rows in yet another order."""
    kw = {**ids_read(options, metrics, labels, per_query), "per_query": per_query}
    table, labels = shuffled(table, 11), None if labels is None else shuffled(labels, 11)
    out_of_core = irm.evaluate(table, metrics, labels=labels, buckets=2, **kw)
    assert got.to_dict(as_series=False) == out_of_core.to_dict(as_series=False)
    lazy = irm.evaluate(
        table.lazy(), metrics, labels=None if labels is None else labels.lazy(), **kw
    ).collect()
    assert got.to_dict(as_series=False) == lazy.to_dict(as_series=False)
