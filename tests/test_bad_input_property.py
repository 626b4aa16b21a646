"""Random bad inputs: each is evaluated exactly or refused with a library error.

A clean run and judgments (:func:`tests.oracle_cases.cases`, the cases the oracle tests
compare with pytrec_eval) get one to three random changes: a null, NaN or infinite
value, a huge label, a duplicated row, a column of another dtype or missing, an empty
frame. Each change is either one the library must refuse, or one with a known clean
equivalent (an infinite score ranks as a finite one beyond every other score, a
Categorical id as its text, an Int32 label as its Int64 value). Then, for every
registered metric alone and for random groups of them:

The changed input is given as a DataFrame, a LazyFrame or a pyarrow Table.

* a refused change raises an :class:`~polars_irmetrics.IrmError` (never a polars or
  Python exception, never a result);
* otherwise the result equals the same evaluation of the clean equivalent, which the
  oracle tests tie to pytrec_eval: never a silent change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import IrmError

from .bad_inputs import EVERY_METRIC
from .helpers import property_settings
from .oracle_cases import Case, CasePools, cases

POOLS = CasePools(
    queries=["q1", "q2", "q10", "q3"],
    scores=[-1.0, 0.0, 0.5, 1.0, 2.0],
    not_relevant=[-1, 0],
)
NAN, INF = float("nan"), float("inf")
EXPONENTIAL = ["ndcg(gain='exponential')@5", "dcg(gain='exponential')"]
METRICS = [*EVERY_METRIC, "P@3", "recall@2", "map@2", *EXPONENTIAL]


@dataclass
class Pair:
    """The changed input, its clean equivalent, and whether the change must be refused."""

    run: pl.DataFrame
    qrels: pl.DataFrame
    clean_run: pl.DataFrame
    clean_qrels: pl.DataFrame
    refused: bool = False
    #: a label the exponential gain cannot sum exactly (refused only by those metrics)
    big_label: bool = False


Change = Callable[[st.DrawFn, Pair], None]


def _set(frame: pl.DataFrame, row: int, column: str, value: Any) -> pl.DataFrame:
    dtype = frame.schema[column]
    values = frame[column].to_list()
    values[row] = value
    return frame.with_columns(pl.Series(column, values, dtype=dtype))


def _row(draw: st.DrawFn, frame: pl.DataFrame, column: str) -> int | None:
    """A row to change in ``column``; None when there is none (the change is skipped)."""
    if frame.height == 0 or column not in frame.columns:
        return None
    return draw(st.integers(0, frame.height - 1))


def bad_label(draw: st.DrawFn, pair: Pair) -> None:
    row = _row(draw, pair.qrels, "relevance")
    if row is None:
        return
    value = draw(st.sampled_from([NAN, INF, -INF, 2.0**32, -(2.0**33), None]))
    pair.qrels = _set(
        pair.qrels.with_columns(pl.col("relevance").cast(pl.Float64)), row, "relevance", value
    )
    pair.refused = True


def big_label(draw: st.DrawFn, pair: Pair) -> None:
    row = _row(draw, pair.qrels, "relevance")
    if row is None:
        return
    pair.qrels = _set(pair.qrels, row, "relevance", 40)
    pair.clean_qrels = _set(pair.clean_qrels, row, "relevance", 40)
    pair.big_label = True


def bad_score(draw: st.DrawFn, pair: Pair) -> None:
    row = _row(draw, pair.run, "score")
    if row is None:
        return
    pair.run = _set(pair.run, row, "score", draw(st.sampled_from([NAN, None])))
    pair.refused = True


def infinite_score(draw: st.DrawFn, pair: Pair) -> None:
    row = _row(draw, pair.run, "score")
    if row is None:
        return
    sign = draw(st.sampled_from([1.0, -1.0]))
    pair.run = _set(pair.run, row, "score", sign * INF)
    # the same order with a finite score beyond every other one
    pair.clean_run = _set(pair.clean_run, row, "score", sign * 1e6)


def null_id(draw: st.DrawFn, pair: Pair) -> None:
    side = draw(st.sampled_from(["run", "qrels"]))
    column = draw(st.sampled_from(["query_id", "doc_id"]))
    frame = pair.run if side == "run" else pair.qrels
    row = _row(draw, frame, column)
    if row is None:
        return
    changed = _set(frame, row, column, None)
    if side == "run":
        pair.run = changed
    else:
        pair.qrels = changed
    pair.refused = True


def duplicate_row(draw: st.DrawFn, pair: Pair) -> None:
    side = draw(st.sampled_from(["run", "qrels"]))
    frame = pair.run if side == "run" else pair.qrels
    row = _row(draw, frame, "doc_id")
    if row is None:
        return
    changed = pl.concat([frame, frame.slice(row, 1)])
    if side == "run":
        pair.run = changed
    else:
        pair.qrels = changed
    pair.refused = True


def ranks(draw: st.DrawFn, pair: Pair) -> None:
    """A rank column (trec_eval's order of the scores) instead of the scores."""
    if pair.run.height == 0 or "score" not in pair.run.columns:
        return

    def ranked(run: pl.DataFrame) -> pl.DataFrame:
        return run.with_columns(irm.rank_by_score().over("query_id")).drop("score")

    pair.run, pair.clean_run = ranked(pair.run), ranked(pair.clean_run)


def bad_rank(draw: st.DrawFn, pair: Pair) -> None:
    """A rank below 1, a null rank or a rank held twice in a query."""
    row = _row(draw, pair.run, "rank")
    if row is None:
        return
    bad = draw(st.sampled_from(["zero", "null", "twice"]))
    if bad == "twice":
        first = pair.run.row(row, named=True)
        same_query = pair.run.with_row_index().filter(
            (pl.col("query_id") == first["query_id"]) & (pl.col("rank") != first["rank"])
        )
        if same_query.height == 0:
            return
        pair.run = _set(pair.run, int(same_query["index"][0]), "rank", first["rank"])
    else:
        pair.run = _set(pair.run, row, "rank", 0 if bad == "zero" else None)
    pair.refused = True


def same_values_other_dtype(draw: st.DrawFn, pair: Pair) -> None:
    """Categorical ids, Int32 or Float64 labels: read as the values they hold."""
    change = draw(st.sampled_from(["categorical ids", "int32 labels", "float labels"]))
    if change == "categorical ids":
        ids = [pl.col("query_id", "doc_id").cast(pl.Categorical)]
        pair.run, pair.qrels = pair.run.with_columns(ids), pair.qrels.with_columns(ids)
        return
    dtype = pl.Int32 if change == "int32 labels" else pl.Float64
    if not pair.qrels.schema["relevance"].is_float():
        pair.qrels = pair.qrels.with_columns(pl.col("relevance").cast(dtype))


def wrong_dtype(draw: st.DrawFn, pair: Pair) -> None:
    """A column of a dtype the evaluation cannot read as it is."""
    change = draw(
        st.sampled_from(
            [
                "string scores",
                "string labels",
                "float doc ids",
                "integer query ids in the judgments",
                "float ranks",
            ]
        )
    )
    if change == "string scores" and "score" in pair.run.columns:
        pair.run = pair.run.with_columns(pl.col("score").cast(pl.String))
    elif change == "string labels":
        pair.qrels = pair.qrels.with_columns(pl.col("relevance").cast(pl.String))
    elif change == "float doc ids":
        pair.run = pair.run.with_columns(
            pl.col("doc_id").cast(pl.String).str.len_bytes().cast(pl.Float64)
        )
    elif change == "integer query ids in the judgments":
        pair.qrels = pair.qrels.with_columns(
            pl.col("query_id").cast(pl.String).str.len_bytes().cast(pl.Int64)
        )
    elif change == "float ranks" and "rank" in pair.run.columns:
        pair.run = pair.run.with_columns(pl.col("rank").cast(pl.Float64))
    else:
        return
    pair.refused = True


def missing_column(draw: st.DrawFn, pair: Pair) -> None:
    side = draw(st.sampled_from(["run", "qrels"]))
    frame = pair.run if side == "run" else pair.qrels
    column = draw(st.sampled_from(frame.columns))
    if side == "run":
        pair.run = frame.drop(column)
    else:
        pair.qrels = frame.drop(column)
    pair.refused = True


def empty(draw: st.DrawFn, pair: Pair) -> None:
    side = draw(st.sampled_from(["run", "qrels", "both"]))
    if side in ("run", "both"):
        pair.run, pair.clean_run = pair.run.clear(), pair.clean_run.clear()
    if side in ("qrels", "both"):
        pair.qrels, pair.clean_qrels = pair.qrels.clear(), pair.clean_qrels.clear()


#: Changes with a clean equivalent, and changes that must be refused.
EQUIVALENT: list[Change] = [big_label, infinite_score, same_values_other_dtype, empty]
REFUSED: list[Change] = [
    bad_label,
    bad_score,
    null_id,
    duplicate_row,
    bad_rank,
    wrong_dtype,
    missing_column,
]


@st.composite
def pairs(draw: st.DrawFn) -> Pair:
    """A clean case with ranks or scores, up to two changes with a clean equivalent,
    then at most one that must be refused (last, so that nothing undoes it)."""
    case: Case = draw(cases(POOLS))
    pair = Pair(case.run, case.qrels, case.run, case.qrels)
    if draw(st.booleans()):
        ranks(draw, pair)
    for change in draw(st.lists(st.sampled_from(EQUIVALENT), max_size=2)):
        change(draw, pair)
    if draw(st.integers(0, 3)):  # three times in four
        draw(st.sampled_from(REFUSED))(draw, pair)
    return pair


Kind = str  # "DataFrame", "LazyFrame" or "pyarrow" (converted by evaluate)
KINDS = st.sampled_from(["DataFrame", "LazyFrame", "pyarrow"])


def _evaluate(run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str], kind: Kind) -> Any:
    if kind == "LazyFrame":
        return irm.evaluate(run.lazy(), metrics, qrels=qrels.lazy(), per_query=True).collect()
    if kind == "pyarrow":
        return irm.evaluate(run.to_arrow(), metrics, qrels=qrels.to_arrow(), per_query=True)
    return irm.evaluate(run, metrics, qrels=qrels, per_query=True)


def _outcome(run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str], kind: Kind) -> Any:
    """The per-query result, or the message of the library error raised instead."""
    try:
        got = _evaluate(run, qrels, metrics, kind)
    except IrmError as error:  # anything else fails the test
        return str(error).splitlines()[0]
    return got.with_columns(pl.col("query_id").cast(pl.String)).sort("query_id")


def _check(pair: Pair, metrics: list[str], kind: Kind) -> None:
    got = _outcome(pair.run, pair.qrels, metrics, kind)
    if pair.refused:
        assert isinstance(got, str), f"accepted a bad input: {pair}"
        return
    expected = _outcome(pair.clean_run, pair.clean_qrels, metrics, "DataFrame")
    if isinstance(expected, str):
        # the only clean input refused: an exponential gain of 2**40 that a metric sums
        assert pair.big_label, expected
        assert any(m in EXPONENTIAL for m in metrics), expected
        assert "give a metric term of 2**32 or more" in expected
        assert got == expected
        return
    assert isinstance(got, pl.DataFrame), f"refused an input with a clean equivalent: {got}"
    assert got.equals(expected, null_equal=True), (got, expected)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@property_settings(70)
@given(pair=pairs(), metric=st.sampled_from(METRICS), kind=KINDS)
def test_every_metric_alone(pair: Pair, metric: str, kind: Kind) -> None:
    _check(pair, [metric], kind)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@property_settings(50)
@given(
    pair=pairs(),
    metrics=st.lists(st.sampled_from(METRICS), min_size=2, max_size=6, unique=True),
    kind=KINDS,
)
def test_groups_of_metrics(pair: Pair, metrics: list[str], kind: Kind) -> None:
    _check(pair, metrics, kind)


def test_every_registered_metric_is_drawn() -> None:
    # every metric evaluate computes from a run and judgments (click and
    # beyond-accuracy metrics read other tables and are checked by their own entry points)
    names = {irm.parse_metric(m).metric.name for m in METRICS}
    assert names == {
        m.name
        for m in irm.list_metrics()
        if set(m.reads) <= {"run", "judgments"} and m.level == "query"
    }
