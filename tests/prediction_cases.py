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

#: (id, table, labels, metrics, options, per_query)
PREDICTION_CASES: list[
    tuple[str, pl.DataFrame, pl.DataFrame | None, list[str], dict[str, Any], bool]
] = [
    ("means", LOG, None, BINARY, BINARY_KW, False),
    ("weighted-by-segment", LOG, None, BINARY, {**BINARY_KW, "sample_weight": "w", "by": "segment"}, False),  # noqa: E501
    ("per-user-by-segment", LOG, None, BINARY, {**BINARY_KW, "by": "segment"}, True),
    ("two-tables-by-segment", PREDICTED, TRUTH, RATING, {**RATING_KW, "by": "segment"}, False),
    ("weighted-ratings", LOG, None, RATING, {**RATING_KW, "label": "rating", "prediction": "rating_hat", "sample_weight": "w"}, False),  # noqa: E501
]  # fmt: skip


def expected(
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    per_query: bool,
) -> pl.DataFrame:
    """``irm.evaluate``'s result, the one every engine must give."""
    return irm.evaluate(table, metrics, labels=labels, per_query=per_query, **options)


def assert_same(
    got: pl.DataFrame, want: pl.DataFrame, options: dict[str, Any], per_query: bool
) -> None:
    """The schema, the keys, the counts and the order to the last bit, and:

    * means: every value to the last bit (nulls equal): both add the same integers
      (units of 2**-64) and compute each metric from them with the same float operations
      (:mod:`polars_irmetrics.prediction.statistics`);
    * per query, unweighted ``auc`` and ``gauc`` to the last bit (a query is whole in one
      part, and its AUC adds ranks, multiples of 1/2, exactly in any order); every other
      per-query value to 1e-12 (a query's rows arrive in another order).
    """
    assert got.schema == want.schema
    assert got.height == want.height > 0
    unweighted = options.get("sample_weight") is None
    exact = {c for c in want.columns if c not in want.select(pl.selectors.float()).columns}
    if not per_query:
        exact = set(want.columns)
    elif unweighted:
        exact |= {c for c in want.columns if c == "auc" or c.startswith("gauc")}
    for column in want.columns:
        a, b = got[column].to_list(), want[column].to_list()
        if column in exact:
            assert a == b, column
            continue
        assert [x is None for x in a] == [y is None for y in b], column
        for x, y in zip(a, b, strict=True):
            if x is not None:
                assert abs(x - y) <= 1e-12 * max(1.0, abs(y)), (column, x, y)


def assert_histogram_exact(
    got: pl.DataFrame,
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
) -> None:
    """Means: every value equal to the last bit to one machine's out-of-core path
    (``buckets=``: ``auc`` and ``pr_auc`` from score ranges on disk) and to a LazyFrame's."""
    out_of_core = irm.evaluate(table, metrics, labels=labels, buckets=2, **options)
    assert got.to_dict(as_series=False) == out_of_core.to_dict(as_series=False)
    lazy = irm.evaluate(
        table.lazy(), metrics, labels=None if labels is None else labels.lazy(), **options
    ).collect()
    assert got.to_dict(as_series=False) == lazy.to_dict(as_series=False)
