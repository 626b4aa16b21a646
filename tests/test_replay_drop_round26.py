"""``unseen_items='drop'`` leaves out the recommendations of items the interactions or
the item features lack with one semi-join of the rows where the two tables' ids share
their dtypes (their known ids joined first), and with one per table where they do not,
round 26 (``recsys.options._seen_once``).

Each case's values equal those of the run with the left-out rows removed by hand (no
item left to drop), bit for bit, for RePlay's metrics and the beyond-accuracy ones
beside.
"""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

METRICS = [
    "surprisal@2",
    "categorical_diversity@2",
    "novelty(kind='replay')@2",
    "catalog_coverage@2",
    "novelty@2",
]

# items 1..6 recommended; 5 lacks interactions, 6 lacks features, 4 lacks both
RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 1, 2, 2, 2, 3, 3],
        "doc_id": [1, 5, 2, 6, 3, 4, 1, 6, 5],
        "rank": [1, 2, 3, 4, 1, 2, 3, 1, 2],
    }
)
INTERACTIONS = pl.DataFrame({"query_id": [1, 2, 2, 3, 3, 4, 4], "doc_id": [1, 1, 2, 3, 6, 2, 1]})
FEATURES = pl.DataFrame({"doc_id": [1, 2, 3, 5], "category_id": ["x", "y", "x", "y"]})
KEPT = {1, 2, 3}


def _cast(frame: pl.DataFrame, dtype: pl.DataType) -> pl.DataFrame:
    return frame.with_columns(pl.col("doc_id").cast(dtype))


CASES = [
    # the same dtype in every table: one semi-join of the rows
    pytest.param(pl.Int64, pl.Int64, pl.Int64, id="one-semi-join"),
    # Int32 beside Int64: both tables' ids joined as Int64, one semi-join
    pytest.param(pl.Int32, pl.Int64, pl.Int32, id="int32-beside-int64"),
    # the interactions' ids joined as UInt64, the features' as Int128: one per table
    pytest.param(pl.UInt64, pl.UInt64, pl.Int64, id="two-semi-joins"),
    # strings in every table
    pytest.param(pl.String, pl.String, pl.String, id="strings"),
]


@pytest.mark.parametrize(("run_dtype", "history_dtype", "features_dtype"), CASES)
def test_drop_keeps_the_items_both_tables_know(
    run_dtype: pl.DataType, history_dtype: pl.DataType, features_dtype: pl.DataType
) -> None:
    run = _cast(RUN, run_dtype)
    history = _cast(INTERACTIONS, history_dtype)
    features = _cast(FEATURES, features_dtype)
    dropped = irm.evaluate(
        run, METRICS, interactions=history, item_features=features, unseen_items="drop"
    )
    kept = run.filter(pl.col("doc_id").cast(pl.Int64, strict=False).is_in(list(KEPT)))
    if run_dtype == pl.String:
        kept = run.filter(pl.col("doc_id").is_in([str(i) for i in KEPT]))
    assert kept.height == 4  # five rows left out: items 4, 5 and 6
    by_hand = irm.evaluate(kept, METRICS, interactions=history, item_features=features)
    assert dropped.rows() == by_hand.rows()


@pytest.mark.parametrize("per_query", [False, True])
def test_drop_with_a_by_key_the_interactions_carry(per_query: bool) -> None:
    """The interactions' ids per ``by`` group, the features' per item: an item a group's
    interactions lack is left out of that group only."""
    run = RUN.with_columns(pl.Series("market", ["m", "m", "m", "m", "n", "n", "n", "n", "n"]))
    history = INTERACTIONS.with_columns(pl.Series("market", ["m", "m", "n", "n", "n", "m", "m"]))
    options = {"by": ["market"], "per_query": per_query}
    metrics = METRICS[:3]
    dropped = irm.evaluate(
        run,
        metrics,
        interactions=history,
        item_features=FEATURES,
        unseen_items="drop",
        **options,
    )
    # market m knows items 1 and 2, market n items 1, 2, 3 and 6; the features 1, 2, 3, 5
    known = pl.DataFrame({"market": ["m", "m", "n", "n", "n"], "doc_id": [1, 2, 1, 2, 3]})
    kept = run.join(known, on=["market", "doc_id"], how="semi")
    assert kept.height == 4
    by_hand = irm.evaluate(kept, metrics, interactions=history, item_features=FEATURES, **options)
    assert dropped.sort(dropped.columns[:2]).rows() == by_hand.sort(by_hand.columns[:2]).rows()
