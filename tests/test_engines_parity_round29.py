"""Every engine gives one machine's outcome (round 29).

* The exposure measures beside the beyond-accuracy metrics of a recommendation table
  (``surprisal@k``, ``novelty@k``, ``intra_list_diversity@k``...) in one call: one
  machine joins them into one result; Spark and Dask refused the call ("evaluate them in
  two calls"). They now make the two calls themselves and join them as one machine does
  (the means beside ``num_q``, the exposure measures' count of queries; per query, on
  the query keys), each call taking the tables and the options its metrics read
  (``unseen_items=`` goes to the beyond-accuracy metrics alone); an option no metric of
  the call reads is refused in one machine's words.
* Dask refused UInt64 document ids beside Int64 ones (one machine lines them up as
  Int128), naming a cast. Within the parts of the ranking metrics, the exposure
  measures and the means of per-user values they are lined up now, as one machine
  does: an id above 2**63 never matches the negative id it would wrap to. The query
  ids of the per-query values, and the document ids of the routes whose parts give rows
  per item, travel between tasks as Arrow, which has no 128-bit integer: refused still,
  with the column, its dtypes and the fix.
* Spark has no unsigned 64-bit type (a Spark frame cannot hold UInt64 ids:
  ``spark.createDataFrame`` refuses the Arrow column, and pandas' conversion turns an id
  above 2**63 into a null); a polars frame holding one, handed to
  ``polars_irmetrics.spark.evaluate``, is refused naming the column and the casts.
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
from polars_irmetrics.errors import ColumnTypeError, IrmError, IrmWarning

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


def _exposure_side(said: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The warnings of ``said`` but the history's (the beyond-accuracy metrics')."""
    return [(kind, text) for kind, text in said if not text.startswith("interactions=")]


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in ("day", "query_id") if c in frame.columns]
    return frame.sort(keys) if keys and "num_q" not in frame.columns else frame


@pytest.mark.parametrize("engine", ENGINES)
def test_exposure_beside_beyond_accuracy_in_one_call(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """One machine's values (bits: exact, NaN too), columns and warnings. The warnings
    are compared as a multiset, and in order but for the history's: one machine collects
    the two plans at once, and gives the history's warning before or after the exposure
    measures' ones from run to run."""
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
        # in one machine's order, but for the history's warning (the other plan's)
        assert _exposure_side(told) == _exposure_side(said)
        assert said  # each case warns
    # an option none of the call's metrics reads, the judgments none of them reads: one
    # machine's refusals (the judgments, read by neither call: the exposure measures' refuse)
    unread = {k: WIDE[k] for k in ("interactions", "groups", "qrels")}
    for metrics, tables, options in [
        (PER_USER, WIDE, {"judged_only": True}),
        (["surprisal@2", "rnd"], unread, {}),
    ]:
        with pytest.raises(IrmError) as one:
            irm.evaluate(RUN, metrics, **tables, **options)
        given = {k: to_engine(t) for k, t in tables.items()}
        with pytest.raises(type(one.value), match=f"^{re.escape(str(one.value))}$"):
            evaluate(to_engine(RUN), metrics, **given, **options)


# --- 2. UInt64 ids beside Int64 ones ---------------------------------------------------

BIG = 2**63 + 5  # beyond Int64: wrapped, it would be 5 - 2**63, a judged id below
IDS_RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2],
        "doc_id": pl.Series([BIG, 7, 7, 2**63 - 1], dtype=pl.UInt64),
        "score": [2.0, 1.0, 1.0, 1.0],
    }
)
IDS_QRELS = pl.DataFrame(
    {"query_id": [1, 1, 2, 2], "doc_id": [7, 5 - 2**63, 2**63 - 1, -3], "relevance": [1] * 4}
)
IDS_HISTORY = pl.DataFrame({"query_id": [1, 2, 3, 3], "doc_id": [7, 2**63 - 1, -3, BIG - 2**64]})
IDS_GROUPS = pl.DataFrame({"doc_id": [7, 2**63 - 1, 5 - 2**63], "group": ["a", "b", "a"]})
#: (metrics, tables, options, partitions): the judgments, groups= and the history hold
#: Int64 document ids beside the run's UInt64 ones
ID_CASES: list[tuple[list[str], dict[str, pl.DataFrame], dict[str, Any], int]] = [
    (["P@1", "ndcg@2", "recall@2"], {"qrels": IDS_QRELS}, {}, 3),
    (["P@1", "ndcg@2", "recall@2"], {"qrels": IDS_QRELS}, {"per_query": True}, 1),
    (
        ["rnd", "surprisal@2", "awrf", "ee_loss"],
        {"qrels": IDS_QRELS, "groups": IDS_GROUPS, "interactions": IDS_HISTORY},
        {"unseen_items": "drop"},
        3,
    ),
]


def test_dask_lines_up_unsigned_and_signed_document_ids(request: pytest.FixtureRequest) -> None:
    """One machine's values, where a wrapped id would score query 1's first document
    (``BIG``) relevant; the items' counts, whose parts give rows per document, refuse."""
    evaluate, to_engine, back = engine_io("dask", request)
    # the test can fail: the ids wrapped to Int64 give another value
    wrapped = IDS_RUN.with_columns(pl.col("doc_id").reinterpret(signed=True))
    assert (
        irm.evaluate(wrapped, ["P@1"], qrels=IDS_QRELS)["P@1"].item()
        != irm.evaluate(IDS_RUN, ["P@1"], qrels=IDS_QRELS)["P@1"].item()
    )
    for metrics, tables, options, partitions in ID_CASES:
        want, said = _warned(irm.evaluate, IDS_RUN, metrics, **tables, **options)
        given = {k: to_engine(t) for k, t in tables.items()}
        got, told = _warned(
            _computed,
            evaluate,
            back,
            to_engine(IDS_RUN),
            metrics,
            **given,
            **options,
            partitions=partitions,
        )
        assert_frame_equal(_sorted(got), _sorted(want), check_exact=True)
        assert sorted(told) == sorted(said)  # the ids the warnings name: one machine's
    message = (
        "column 'doc_id' is UInt64 in the run, Int64 in the interactions: one machine "
        "matches them as Int128, which the Arrow tables of Dask's tasks cannot carry; cast "
        "every table's 'doc_id' to one dtype first, e.g. .astype({'doc_id': 'int64'}) "
        "where every id is below 2**63, or to strings"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        evaluate(
            to_engine(IDS_RUN),
            ["catalog_coverage@2"],
            interactions=to_engine(IDS_HISTORY),
            unseen_items="drop",
        )


def test_spark_names_the_cast_of_an_unsigned_column() -> None:
    import polars_irmetrics.spark as irm_spark

    message = (
        "run must be a Spark DataFrame, got DataFrame; for polars frames use "
        "polars_irmetrics.evaluate, or convert, e.g. spark.createDataFrame(...); column "
        "'doc_id' is UInt64, which Spark has no type for (Arrow's conversion refuses it, "
        "pandas' turns an id above 2**63 into a null): cast it first in every table, to "
        "Int64 where every id is below 2**63 (pl.col('doc_id').cast(pl.Int64)), else to "
        "strings (pl.col('doc_id').cast(pl.String))"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm_spark.evaluate(IDS_RUN, ["P@1"], qrels=IDS_QRELS)
