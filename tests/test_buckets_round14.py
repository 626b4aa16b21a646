"""Out of core (``buckets=``, ``memory_limit=``), round 14: one plan's bits or one plan's
refusal, whatever else the call asks for."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

RECS = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2, 3, 3, 4],
        "doc_id": [10, 11, 10, 12, 11, 13, 12],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3],
    }
)
CATEGORIES = pl.DataFrame({"doc_id": [10, 11, 12, 13], "category_id": [0, 1, 1, 2]})
HISTORY = pl.DataFrame({"query_id": [1, 2, 3, 5], "doc_id": [10, 11, 12, 13]})

# categorical_diversity's item features hold categories, no vectors: the metrics merged
# apart in buckets (item counts, the history's users) do not read them
BESIDE_CATEGORIES = [
    "novelty(kind='replay')@5",
    "novelty@5",
    "gini_index@5",
    "catalog_coverage@5",
    "surprisal@5",
]


#: the metrics of the whole table (no per-query value) only with means
_WHOLE_TABLE = ("novelty@5", "gini_index@5", "catalog_coverage@5")
_CATEGORY_CASES = [
    pytest.param(other, options, id=f"{other}-{name}")
    for other in BESIDE_CATEGORIES
    for name, options in (("means", {}), ("per-query", {"per_query": True}))
    if not (options and other in _WHOLE_TABLE)
]


@pytest.mark.parametrize(("other", "options"), _CATEGORY_CASES)
@pytest.mark.parametrize("buckets", [2, 3, "auto"])
def test_categorical_diversity_beside_a_merged_metric_gives_one_plans_bits(
    other: str, buckets: int | str, options: dict[str, Any], tmp_path: Path
) -> None:
    metrics = ["categorical_diversity@5", other]
    tables = {"item_features": CATEGORIES, "interactions": HISTORY}
    one = irm.evaluate(RECS, metrics, **tables, **options)
    split = irm.evaluate(RECS, metrics, **tables, **options, buckets=buckets)
    assert split.equals(one)
    path = tmp_path / "recs.parquet"
    RECS.write_parquet(path)
    lazy = irm.evaluate(pl.scan_parquet(path), metrics, **tables, **options, buckets=buckets)
    assert lazy.collect().equals(one)


def test_the_worked_example_of_categories_and_replay_novelty() -> None:
    recs = pl.DataFrame(
        {"query_id": [1, 1, 2, 2], "doc_id": [10, 11, 10, 12], "score": [0.9, 0.8, 0.7, 0.6]}
    )
    feats = pl.DataFrame({"doc_id": [10, 11, 12], "category_id": [0, 1, 1]})
    hist = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": [10, 11, 12]})
    metrics = ["categorical_diversity@5", "novelty(kind='replay')@5"]
    one = irm.evaluate(recs, metrics, item_features=feats, interactions=hist)
    assert one.row(0) == pytest.approx((0.4, 5 / 6))
    split = irm.evaluate(recs, metrics, item_features=feats, interactions=hist, buckets=2)
    assert split.equals(one)


# Elliot's metrics (and MAD) are computed in one plan over the whole table: an
# out-of-core option is refused with them, whatever else the call asks for
RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2, 3],
        "doc_id": [10, 11, 10, 12, 11],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5],
    }
)
QRELS = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": [10, 12, 13], "relevance": [1, 1, 1]})
TRAIN = pl.DataFrame({"query_id": [1, 2, 4], "doc_id": [10, 11, 12]})
ITEM_GROUPS = pl.DataFrame({"doc_id": [10, 11, 12, 13], "group": ["a", "b", "a", "b"]})
USER_GROUPS = pl.DataFrame({"query_id": [1, 2, 3], "group": ["a", "b", "a"]})

_ELLIOT = "Elliot's metrics"
_MAD = "Elliot's MAD metrics"
OUT_OF_CORE: list[tuple[str, str, dict[str, Any]]] = [
    ("epc@5", _ELLIOT, {"interactions": TRAIN}),
    ("pop_rsp@5", _ELLIOT, {"interactions": TRAIN}),
    ("pop_reo@5", _ELLIOT, {"interactions": TRAIN}),
    ("aclt@5", _ELLIOT, {"interactions": TRAIN}),
    ("efd@5", _ELLIOT, {"interactions": TRAIN}),
    ("item_mad@5", _MAD, {"groups": ITEM_GROUPS}),
    ("user_mad@5", _MAD, {"user_groups": USER_GROUPS}),
]
OPTIONS: list[tuple[str, object, dict[str, Any]]] = [
    ("buckets", 2, {}),
    ("buckets", 3, {}),
    ("buckets", "auto", {}),
    ("memory_limit", "1GiB", {}),
    ("buckets", 2, {"spill_dir": "."}),
]


@pytest.mark.parametrize(("metric", "whose", "sides"), OUT_OF_CORE)
@pytest.mark.parametrize(("option", "value", "more"), OPTIONS)
@pytest.mark.parametrize("beside", [[], ["ndcg@5"], ["ndcg@5", "P@3"]], ids=["alone", "1", "2"])
def test_elliot_refuses_out_of_core_whatever_else_is_asked(
    metric: str,
    whose: str,
    sides: dict[str, Any],
    option: str,
    value: object,
    more: dict[str, Any],
    beside: list[str],
) -> None:
    message = (
        f"{option}={value!r} bounds the memory of an out-of-core evaluation (buckets of "
        f"queries), and {whose} ({metric!r}) compare the whole recommendation table in one "
        f"plan, which no bucket bounds: drop {option}= (evaluate them in a call of their "
        "own where the other metrics need it)"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, [*beside, metric], qrels=QRELS, **sides, **{option: value}, **more)


@pytest.mark.parametrize(("metric", "whose", "sides"), OUT_OF_CORE)
def test_elliot_beside_the_ranking_metrics_in_one_plan_still_runs(
    metric: str, whose: str, sides: dict[str, Any]
) -> None:
    # buckets=None (one plan) is read by ndcg; alone it is refused as an option no
    # metric reads
    both = irm.evaluate(RUN, ["ndcg@5", metric], qrels=QRELS, **sides, buckets=None)
    alone = irm.evaluate(RUN, [metric], qrels=QRELS, **sides)
    assert both[metric].equals(alone[metric])
    with pytest.raises(InvalidValueError, match=r"^buckets=None is not read by "):
        irm.evaluate(RUN, [metric], qrels=QRELS, **sides, buckets=None)
