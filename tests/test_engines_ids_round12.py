"""``query_id=`` and ``doc_id=`` that no prediction metric reads are refused on Spark and
Dask as on one machine (since c663447 one machine refused them, the engines split the
table by ``query_id=`` whatever the metrics and gave a number): the door's own check
(``door.evaluate.check_ids_read``), with its message, raised at the call before any task
runs (a prediction a task would refuse is not reached). Where no metric reads
``query_id`` and the table has no ``query_id`` column, the engines deal the rows to the
parts round robin, so that such a table, which one machine evaluates, is evaluated there
too (it raised pandas' and Spark's own KeyError, and ``query_id=`` was the way round);
a table with the column, or metrics that read it (``gauc``, ``per_query=True``,
``labels=``), is split by it as before."""

from __future__ import annotations

import re
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark

#: Three users, two segments, no ``query_id`` column; the user column is ``user``.
LOG = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [10, 11, 12, 10, 13, 11, 12, 14],
        "segment": ["a", "a", "a", "b", "b", "b", "b", "b"],
        "y": [1, 0, 0, 1, 0, 0, 1, 1],
        "p": [0.9, 0.2, 0.4, 0.6, 0.7, 0.3, 0.8, 0.5],
        "rating": [4.0, 2.0, 3.0, 5.0, 1.0, 2.0, 4.0, 3.0],
    }
)
#: A prediction out of [0, 1], which a task would refuse: an id refusal comes first.
BAD = LOG.with_columns(p=pl.when(pl.col("user") == 3).then(1.5).otherwise("p"))
PREDICTED = LOG.select("user", "item", "segment", "p")
TRUTH = LOG.select("user", "item", "y")
KW = {"label": "y", "prediction": "p"}

QUERY_ID_AUC = (
    "query_id='user' is not read by metrics 'auc', 'logloss': among the prediction "
    "metrics only gauc, per_query=True and labels= (the two-table form, joined on "
    "query_id and doc_id) read it; drop query_id= (an option no metric reads would "
    "change nothing), or evaluate a metric that reads it"
)
QUERY_ID_RMSE = (
    "query_id='user' is not read by metric 'rmse': among the prediction metrics only "
    "gauc, per_query=True and labels= (the two-table form, joined on query_id and "
    "doc_id) read it; drop query_id= (an option no metric reads would change nothing), "
    "or evaluate a metric that reads it"
)
DOC_ID_RMSE = (
    "doc_id='item' is not read by metric 'rmse': the prediction metrics read it only "
    "with labels= (the two-table form, joined on query_id and doc_id); drop doc_id= (an "
    "option no metric reads would change nothing), or pass labels="
)
DOC_ID_GAUC = (
    "doc_id='item' is not read by metric 'gauc': the prediction metrics read it only "
    "with labels= (the two-table form, joined on query_id and doc_id); drop doc_id= (an "
    "option no metric reads would change nothing), or pass labels="
)

#: (id, metrics, options, message): refused on one machine and on both engines alike.
REFUSED: list[tuple[str, list[str], dict[str, Any], str]] = [
    ("query_id-auc", ["auc", "logloss"], {**KW, "query_id": "user"}, QUERY_ID_AUC),
    ("query_id-by", ["auc", "logloss"], {**KW, "query_id": "user", "by": "segment"}, QUERY_ID_AUC),
    ("query_id-rating", ["rmse"], {"label": "rating", "prediction": "p", "query_id": "user"}, QUERY_ID_RMSE),  # noqa: E501
    ("doc_id-rating", ["rmse"], {"label": "rating", "prediction": "p", "doc_id": "item"}, DOC_ID_RMSE),  # noqa: E501
    ("doc_id-gauc", ["gauc"], {**KW, "query_id": "user", "doc_id": "item"}, DOC_ID_GAUC),
]  # fmt: skip

#: (id, table, labels, metrics, options): the ids read (or none given), the engines'
#: values equal one machine's.
ACCEPTED: list[tuple[str, pl.DataFrame, pl.DataFrame | None, list[str], dict[str, Any]]] = [
    ("no-query-column", LOG, None, ["auc", "logloss"], KW),
    ("no-query-column-by", LOG, None, ["auc", "rmse"], {**KW, "by": "segment"}),
    ("default-query_id-given", LOG, None, ["auc"], {**KW, "query_id": "query_id"}),
    ("query-column-unread", LOG.rename({"user": "query_id"}), None, ["auc", "logloss"], KW),
    ("gauc", LOG, None, ["auc", "gauc"], {**KW, "query_id": "user"}),
    ("per-query", LOG, None, ["auc", "logloss"], {**KW, "query_id": "user", "per_query": True}),
    ("two-tables", PREDICTED, TRUTH, ["auc", "logloss"], {**KW, "query_id": "user", "doc_id": "item"}),  # noqa: E501
]  # fmt: skip

ENGINES = ["spark", "dask"]


def _on(
    engine: str,
    request: pytest.FixtureRequest,
    table: pl.DataFrame,
    metrics: list[str],
    labels: pl.DataFrame | None = None,
    **options: Any,
) -> pl.DataFrame:
    """``engine``'s result as a polars frame; a refusal is raised at the call (Dask's
    result is not computed before it returns)."""
    if engine == "spark":
        spark = request.getfixturevalue("spark")
        got = irm_spark.evaluate(
            spark.createDataFrame(table.to_arrow()),
            metrics,
            labels=None if labels is None else spark.createDataFrame(labels.to_arrow()),
            partitions=3,
            **options,
        )
        return pl.DataFrame(pl.from_arrow(got.toArrow()))
    request.getfixturevalue("client")

    def frame(t: pl.DataFrame) -> dd.DataFrame:
        return dd.from_pandas(t.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)

    lazy = irm_dask.evaluate(
        frame(table),
        metrics,
        labels=None if labels is None else frame(labels),
        partitions=3,
        **options,
    )
    return pl.from_pandas(lazy.compute().reset_index(drop=True))


@pytest.mark.parametrize(
    ("name", "metrics", "options", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_one_machine_refuses_the_ids_no_metric_reads(
    name: str, metrics: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(BAD, metrics, **options)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("name", "metrics", "options", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_engines_refuse_the_ids_no_metric_reads_as_one_machine(
    request: pytest.FixtureRequest,
    engine: str,
    name: str,
    metrics: list[str],
    options: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(irm.InvalidValueError) as one_machine:
        irm.evaluate(BAD, metrics, **options)
    # BAD's predictions out of [0, 1] would be refused by a task: the call refuses first
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$") as raised:
        _on(engine, request, BAD, metrics, **options)
    assert str(raised.value) == str(one_machine.value) == message


def _sorted(frame: pl.DataFrame, options: dict[str, Any]) -> pl.DataFrame:
    """Per query, Dask's rows in partition (task) order: sorted by the keys."""
    if not options.get("per_query"):
        return frame
    return frame.sort([c for c in ("segment", options["query_id"]) if c in frame.columns])


@pytest.fixture(scope="module")
def dask_values(client: Any) -> dict[str, pl.DataFrame]:
    """Every ACCEPTED case on Dask, by id: each its own ``evaluate`` call (a refusal
    would be raised here, at the call), the lazy results computed by one
    ``dask.compute`` (one graph on the cluster, where a compute per case paid a job's
    fixed cost each time); each case's test compares its own values."""

    def frame(t: pl.DataFrame) -> dd.DataFrame:
        return dd.from_pandas(t.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)

    lazy = {
        name: irm_dask.evaluate(
            frame(table),
            metrics,
            labels=None if labels is None else frame(labels),
            partitions=3,
            **options,
        )
        for name, table, labels, metrics, options in ACCEPTED
    }
    (computed,) = dask.compute(lazy)
    return {name: pl.from_pandas(out.reset_index(drop=True)) for name, out in computed.items()}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("name", "table", "labels", "metrics", "options"), ACCEPTED, ids=[c[0] for c in ACCEPTED]
)
def test_engines_take_the_ids_read_as_one_machine(
    request: pytest.FixtureRequest,
    engine: str,
    name: str,
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
) -> None:
    want = irm.evaluate(table, metrics, labels=labels, **options)
    if engine == "dask":
        got = request.getfixturevalue("dask_values")[name]
    else:
        got = _on(engine, request, table, metrics, labels, **options)
    assert_frame_equal(_sorted(got, options), want, check_dtypes=False)
