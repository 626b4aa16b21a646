"""Every engine gives one machine's outcome (round 29).

* The exposure measures beside the beyond-accuracy metrics of a recommendation table
  (``surprisal@k``, ``novelty@k``, ``intra_list_diversity@k``...) in one call: one
  machine joins them into one result; Spark and Dask refused the call ("evaluate them in
  two calls"). They now make the two calls themselves and join them as one machine does
  (the means beside ``num_q``, the exposure measures' count of queries; per query, on
  the query keys), each call taking the tables and the options its metrics read
  (``unseen_items=`` goes to the beyond-accuracy metrics alone); an option no metric of
  the call reads is refused in one machine's words.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, IrmWarning

from .helpers import engine_io

ENGINES = ["dask", "spark"]

# --- 1. the exposure measures beside the beyond-accuracy metrics ---------------------

RUN = pl.DataFrame(
    {
        "query_id": ["a", "a", "b", "b", "d"],
        "doc_id": ["x", "y", "x", "y", "z"],
        "rank": [1, 2, 1, 2, 1],
        "day": [1, 1, 2, 2, 2],
    }
)
HISTORY = pl.DataFrame({"query_id": ["a", "b", "c", "e"], "doc_id": ["x", "y", "x", "z"]})
QRELS = HISTORY.with_columns(relevance=pl.lit(1))
FEATURES = pl.DataFrame(
    {"doc_id": ["x", "y", "z"], "features": [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]}
)
GROUPS = pl.DataFrame({"doc_id": ["x", "y"], "group": ["1", "2"]})
#: a history of item x alone and groups= of it alone: both calls warn (the history's
#: coverage; groups='s coverage, rnd's NaN, ee_loss's nulls)
THIN = {
    "interactions": HISTORY.filter(pl.col("doc_id") == "x"),
    "qrels": QRELS.filter(pl.col("doc_id") == "x"),
    "groups": GROUPS.filter(pl.col("doc_id") == "x"),
}
WIDE = {"interactions": HISTORY, "qrels": QRELS, "groups": GROUPS, "item_features": FEATURES}
PER_USER = ["surprisal@2", "rnd", "ild@2", "awrf", "ee_loss"]
#: (metrics, tables, options, partitions): the means and per query, by a key of the run,
#: the metrics of the items' counts, on 1 and 3 partitions
CASES: list[tuple[list[str], dict[str, pl.DataFrame], dict[str, Any], int]] = [
    (PER_USER, WIDE, {}, 1),
    (["surprisal@2", "rnd", "ild@2", "awrf"], WIDE, {"by": "day", "per_query": True}, 3),
    (["novelty@2", "ee_loss", "rnd"], THIN, {"unseen_items": "drop"}, 3),
]


def _warned(
    call: Callable[..., Any], *args: Any, **kwargs: Any
) -> tuple[Any, list[tuple[str, str]]]:
    """``call(*args, **kwargs)``'s result and the library's warnings it gave (class
    name, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call(*args, **kwargs)
    ours = [w for w in caught if issubclass(w.category, IrmWarning)]  # not PySpark's
    return out, [(w.category.__name__, str(w.message)) for w in ours]


def _computed(
    evaluate: Callable[..., Any], back: Callable[[Any], pl.DataFrame], *args: Any, **kwargs: Any
) -> pl.DataFrame:
    """An engine's result, computed (where Dask gives its warnings)."""
    return back(evaluate(*args, **kwargs))


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in ("day", "query_id") if c in frame.columns]
    return frame.sort(keys) if keys and "num_q" not in frame.columns else frame


@pytest.mark.parametrize("engine", ENGINES)
def test_exposure_beside_beyond_accuracy_in_one_call(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """One machine's values (bits: exact, NaN too), columns and warnings. The warnings
    are compared as a multiset: one machine collects the two plans at once, and gives
    the history's warning before or after the exposure measures' ones from run to run."""
    evaluate, to_engine, back = engine_io(engine, request)
    for metrics, tables, options, partitions in CASES:
        read = {k: t for k, t in tables.items() if k != "item_features" or "ild@2" in metrics}
        want, said = _warned(irm.evaluate, RUN, metrics, **read, **options)
        given = {k: to_engine(t) for k, t in read.items()}
        got, told = _warned(
            _computed,
            evaluate,
            back,
            to_engine(RUN),
            metrics,
            **given,
            **options,
            partitions=partitions,
        )
        assert_frame_equal(_sorted(got), _sorted(want), check_exact=True)
        assert sorted(told) == sorted(said)
        assert said  # each case warns
    # an option none of the call's metrics reads: one machine's refusal, before any job
    with pytest.raises(InvalidValueError) as one:
        irm.evaluate(RUN, PER_USER, **WIDE, judged_only=True)
    given = {k: to_engine(t) for k, t in WIDE.items()}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(str(one.value))}$"):
        evaluate(to_engine(RUN), PER_USER, **given, judged_only=True)
