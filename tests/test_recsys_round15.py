"""Recommendation metrics, round 15: an empty training history (or a ``by`` group's,
where the interactions carry the key) under RecTools' ``serendipity(kind='kotkov')``
(a catalogue of 0 items: ``inf``) and Elliot's metrics (every item read as never seen:
``aclt`` 0, ``efd`` 0, ``pop_rsp`` NaN) is refused, as the recommendation table's
metrics (``surprisal``, RePlay's novelty) refuse it."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

RECS = pl.DataFrame(
    {"query_id": [1, 1, 1, 2, 2, 2], "doc_id": [10, 11, 12, 10, 13, 14], "rank": [1, 2, 3] * 2}
)
TEST = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [11, 13, 14], "relevance": 1})
TRAIN = pl.DataFrame({"query_id": [1, 2, 3, 3, 1, 2, 4], "doc_id": [10, 10, 10, 11, 12, 12, 13]})
# the run twice, as segments x and y; the training history of segment x alone
RECS_BY = pl.concat([RECS.with_columns(d=pl.lit("x")), RECS.with_columns(d=pl.lit("y"))])
TRAIN_BY = TRAIN.with_columns(d=pl.lit("x"))

_EMPTY = (
    "the interactions table has no rows{}: the catalogue and the items' popularity come "
    "from it; pass the interactions the recommender learned from as interactions=..."
)
_KOTKOV = "serendipity(kind='kotkov')@3"


@pytest.mark.parametrize(
    ("metrics", "kwargs", "where"),
    [
        # a catalogue of 0 items: RecTools' (n + 1 - r) / n was inf
        ([_KOTKOV], {"interactions": TRAIN.clear()}, ""),
        (["serendipity(kind='kotkov', n_items=10)@3"], {"interactions": TRAIN.clear()}, ""),
        (["aclt@3"], {"interactions": TRAIN.clear()}, ""),  # was 0
        (["efd@3"], {"interactions": TRAIN.clear()}, ""),  # was 0
        (["pop_rsp@3", "epc@3"], {"interactions": TRAIN.clear()}, ""),
        (["ndcg@3", "pop_reo@3"], {"interactions": TRAIN.clear()}, ""),
        # segment y has no training rows: its values were 0 (kotkov) and aclt 0, efd 0
        ([_KOTKOV], {"interactions": TRAIN_BY, "by": "d"}, " for d=y"),
        (["aclt@3", "efd@3"], {"interactions": TRAIN_BY, "by": "d"}, " for d=y"),
        (["ndcg@3", _KOTKOV, "epc@3"], {"interactions": TRAIN_BY, "by": "d"}, " for d=y"),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_an_empty_history_is_refused(
    metrics: list[str], kwargs: dict[str, object], where: str, lazy: bool
) -> None:
    run = RECS_BY if "by" in kwargs else RECS
    tables = {
        k: v.lazy() if lazy and isinstance(v, pl.DataFrame) else v for k, v in kwargs.items()
    }
    message = _EMPTY.format(where)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        # eager: refused by evaluate; lazy: when the plan is collected
        irm.evaluate(run.lazy() if lazy else run, metrics, qrels=TEST, **tables).lazy().collect()


def test_a_history_for_every_segment_still_scores() -> None:
    # each segment with its own rows: the values of each segment alone
    both = TRAIN_BY.vstack(TRAIN.with_columns(d=pl.lit("y")))
    out = irm.evaluate(RECS_BY, ["aclt@3", _KOTKOV], qrels=TEST, interactions=both, by="d")
    alone = irm.evaluate(RECS, ["aclt@3", _KOTKOV], qrels=TEST, interactions=TRAIN)
    for segment in ("x", "y"):
        row = out.filter(pl.col("d") == segment).drop("d")
        assert row.to_dicts() == alone.to_dicts()
