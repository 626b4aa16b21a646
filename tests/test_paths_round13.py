"""The same data, the same bits on every path (round 13).

A DataFrame held in several chunks (``pl.concat(..., rechunk=False)``, or
``pl.read_parquet`` of several files) crashed :func:`polars_irmetrics.evaluate` with
polars' ``ShapeError`` where a ranking prediction metric (``auc``, ``pr_auc``,
``gauc``) was asked beside a rating one (``rmse``, ``mae``...): the rating metrics'
scale was put beside each row as ``with_columns`` of aggregations over the table, which
polars' in-memory engine breaks where that table is read twice from a chunked frame.
It is now a one-row frame joined across.

``partitioned_by=`` refused a query spanning two partitions on the out-of-core path
(``buckets=``) only: the one plan evaluated it whole, in silence. It now counts each
query's distinct values beside its other checks and refuses it with the same error.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.metrics.prediction import PREDICTION_METRICS
from tests.test_partitions_round10 import QRELS, RUN

TABLE = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q1", "q2", "q3", "q3"],
        "label": [0, 1, 0, 1, 1, 0, 1, 0],
        "prediction": [0.1, 0.9, 0.4, 0.6, 0.3, 0.2, 0.7, 0.7],
        "weight": [1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 0.25, 1.0],
        "group": ["a", "a", "b", "b", "a", "b", "a", "b"],
    }
)


def _chunked(frame: pl.DataFrame, pieces: int = 3) -> pl.DataFrame:
    size = -(-frame.height // pieces)
    parts = [frame.slice(i * size, size) for i in range(pieces)]
    chunked = pl.concat(parts, rechunk=False)
    assert chunked.n_chunks() > 1
    return chunked


def _evaluate(table: pl.DataFrame, metrics: list[str], **options: object) -> pl.DataFrame:
    result = irm.evaluate(table, metrics, **options)  # type: ignore[arg-type]
    assert isinstance(result, pl.DataFrame)
    return result


@pytest.mark.parametrize("rating", ["rmse", "mae"])
@pytest.mark.parametrize("ranking", ["auc", "pr_auc", "gauc"])
def test_a_ranking_metric_beside_a_rating_one_on_a_chunked_frame(
    ranking: str, rating: str
) -> None:
    whole = _evaluate(TABLE, [ranking, rating])  # once, each chunking held to it
    for pieces in (2, 3):
        got = _evaluate(_chunked(TABLE, pieces), [ranking, rating])
        assert got.equals(whole)


CASES = [
    pytest.param({}, id="plain"),
    pytest.param({"sample_weight": "weight"}, id="weighted"),
    pytest.param({"by": "group"}, id="by"),
    pytest.param({"per_query": True}, id="per_query"),
]


@pytest.mark.parametrize("options", CASES)
def test_every_prediction_metric_on_a_chunked_frame_gives_the_same_bits(
    options: dict[str, object],
) -> None:
    names = [metric.name for metric in PREDICTION_METRICS]
    expected = _evaluate(TABLE, names, **options)
    # each alone, and beside auc: the whole frame's values once, each chunking's held to them
    paired = {name: ["auc", name] if name != "auc" else ["auc", "rmse"] for name in names}
    whole_alone = {name: _evaluate(TABLE, [name], **options) for name in names}
    whole_both = {name: _evaluate(TABLE, paired[name], **options) for name in names}
    for pieces in (2, 3):
        assert _evaluate(_chunked(TABLE, pieces), names, **options).equals(expected)
        for name in names:
            alone = _evaluate(_chunked(TABLE, pieces), [name], **options)
            assert alone.equals(whole_alone[name])
            both = _evaluate(_chunked(TABLE, pieces), paired[name], **options)
            assert both.equals(whole_both[name])


def test_parquet_files_read_as_one_frame(tmp_path: Path) -> None:
    TABLE.slice(0, 4).write_parquet(tmp_path / "0.parquet")
    TABLE.slice(4, 4).write_parquet(tmp_path / "1.parquet")
    frame = pl.read_parquet(tmp_path / "*.parquet")
    metrics = ["auc", "gauc", "rmse", "r2"]
    expected = _evaluate(TABLE, metrics)
    assert _evaluate(frame, metrics).equals(expected)
    lazy = irm.evaluate(pl.scan_parquet(tmp_path / "*.parquet"), metrics)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(expected)


# partitioned_by=: a query under two values is refused on one plan as in buckets

WHOLE = RUN.with_columns(part=pl.Series([0, 0, 0, 1, 1]))  # each query in one partition


def _spanning(query: str) -> str:
    return (
        f"partitioned_by='part': query {query!r} has rows under more than one value of 'part' "
        "(in the run or the judgments), so the partitions do not keep each query whole; "
        "partition by a function of 'query_id' alone, or drop partitioned_by= to shuffle "
        "the rows by query"
    )


SPANNING = [
    pytest.param(RUN, QRELS, {}, "q1", id="run"),
    pytest.param(RUN, QRELS, {"per_query": True}, "q1", id="run-per-query"),
    pytest.param(RUN.with_columns(system=pl.lit("s")), QRELS, {"by": "system"}, "q1", id="run-by"),
    pytest.param(
        WHOLE, QRELS.with_columns(part=pl.Series([1, 1, 1])), {}, "q1", id="judged-elsewhere"
    ),
    pytest.param(
        WHOLE.with_columns(part=pl.Series([0, 0, 0, 1, None])), QRELS, {}, "q2", id="null-value"
    ),
    pytest.param(
        RUN.join(QRELS, on=["query_id", "doc_id"], how="left").with_columns(
            pl.col("relevance").fill_null(0)
        ),
        None,
        {},
        "q1",
        id="judged-table",
    ),
]
PATHS = [
    pytest.param({}, False, id="one-plan"),
    pytest.param({}, True, id="one-plan-lazy"),
    pytest.param({"buckets": 2}, True, id="buckets"),
]


def _collected(
    run: pl.DataFrame | pl.LazyFrame, qrels: pl.DataFrame | None, options: dict[str, object]
) -> pl.DataFrame:
    result = irm.evaluate(run, ["map"], qrels=qrels, partitioned_by="part", **options)  # type: ignore[arg-type]
    return result.collect() if isinstance(result, pl.LazyFrame) else result


@pytest.mark.parametrize(("path", "lazy"), PATHS)
@pytest.mark.parametrize(("run", "qrels", "options", "query"), SPANNING)
def test_a_query_in_two_partitions_is_refused_on_every_path(
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, object],
    query: str,
    path: dict[str, object],
    lazy: bool,
) -> None:
    message = _spanning(query)
    given = run.lazy() if lazy else run
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collected(given, qrels, {**options, **path})


@pytest.mark.parametrize(("path", "lazy"), PATHS)
def test_whole_queries_in_partitions_give_the_plain_values(
    path: dict[str, object], lazy: bool
) -> None:
    judged = QRELS.with_columns(part=pl.Series([0, 0, 1]))
    expected = _evaluate(RUN.drop("part"), ["map"], qrels=QRELS, per_query=True)
    for qrels in (QRELS, judged):
        given = WHOLE.lazy() if lazy else WHOLE
        got = _collected(given, qrels, {"per_query": True, **path})
        assert got.equals(expected)
