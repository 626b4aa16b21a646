"""``polars_irmetrics.dask.evaluate`` on a real ``distributed.LocalCluster`` (2 worker
processes): equal to ``irm.evaluate`` to the last bit, and the library's own errors."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from distributed import Client, LocalCluster

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask

from .engine_cases import ERRORS, MATRIX, METRICS, ONE, QRELS, RUN, single_message


@pytest.fixture(scope="session")
def client() -> Iterator[Client]:
    """Two worker processes of one thread each, shared by every test."""
    with (
        dask.config.set({"distributed.logging.distributed": "error"}),
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as session,
    ):
        yield session


def _dask(frame: pl.DataFrame, parts: int) -> dd.DataFrame:
    # pyarrow-backed columns: an integer column with nulls stays an integer column
    return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=parts)


def _polars(frame: dd.DataFrame) -> pl.DataFrame:
    out = pl.from_arrow(pa.Table.from_pandas(frame.compute(), preserve_index=False))
    assert isinstance(out, pl.DataFrame)
    return out


@pytest.mark.parametrize(
    ("run", "qrels", "options", "per_query"), [c[1:] for c in MATRIX], ids=[c[0] for c in MATRIX]
)
def test_dask_equals_evaluate_bit_for_bit(
    client: Client,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
) -> None:
    expected = irm.evaluate(run, METRICS, qrels=qrels, per_query=per_query, **options)
    got = irm_dask.evaluate(
        _dask(run, 3),
        METRICS,
        qrels=None if qrels is None else _dask(qrels, 2),
        per_query=per_query,
        **options,
    )
    result = _polars(got)
    if per_query:  # rows come in partition order
        result = result.sort(list(expected.columns[: result.columns.index(METRICS[0])]))
    assert result.schema == expected.schema
    assert result.height == expected.height > 0
    for column in expected.columns:
        assert result[column].to_list() == expected[column].to_list(), column


@pytest.mark.parametrize(
    ("run", "qrels", "metrics", "options", "error", "part"),
    [e[1:] for e in ERRORS],
    ids=[e[0] for e in ERRORS],
)
def test_dask_data_errors_are_the_librarys(
    client: Client,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    error: type,
    part: str,
) -> None:
    message = single_message(run, qrels, metrics, **options)
    assert part in message
    lazy = irm_dask.evaluate(
        _dask(run, 2), metrics, qrels=None if qrels is None else _dask(qrels, 2), **options
    )
    with pytest.raises(error) as raised:
        lazy.compute()
    assert type(raised.value) is error
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("metrics", "options", "error", "message"),
    [
        (["mapp"], {}, irm.UnknownMetricError, None),
        (["map"], {"order": "rank"}, irm.ColumnNotFoundError, None),
        (
            ["map"],
            {"partitions": 0},
            irm.InvalidValueError,
            "partitions must be a positive integer or None, got 0",
        ),
    ],
    ids=["unknown-metric", "missing-rank", "bad-partitions"],
)
def test_dask_schema_errors_raise_at_the_call(
    metrics: list[str], options: dict[str, Any], error: type, message: str | None
) -> None:
    if message is None:
        message = single_message(ONE, QRELS, metrics, **options)
    with pytest.raises(error) as raised:
        irm_dask.evaluate(_dask(ONE, 2), metrics, qrels=_dask(QRELS, 1), **options)
    assert str(raised.value) == message


def test_dask_refuses_polars_frames() -> None:
    with pytest.raises(irm.ColumnTypeError, match="run must be a Dask DataFrame, got DataFrame"):
        irm_dask.evaluate(ONE, ["map"])  # type: ignore[arg-type]


def test_dask_means_of_the_whole_sample_by_system(client: Client) -> None:
    # a worked check beside the exact ones: the three systems' MAP, as irm.evaluate says
    got = _polars(irm_dask.evaluate(_dask(RUN, 4), ["map"], qrels=_dask(QRELS, 1), by="system"))
    expected = irm.evaluate(RUN, ["map"], qrels=QRELS, by="system")
    assert got.rows() == expected.rows()
    assert got["num_q"].to_list() == expected["num_q"].to_list()


def test_dask_module_without_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("polars_irmetrics.dask", "polars_irmetrics.engines.dask"):
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    with pytest.raises(irm.MissingDependencyError) as raised:
        importlib.import_module("polars_irmetrics.dask")
    assert str(raised.value) == (
        "polars_irmetrics.dask needs Dask's dataframe package: "
        "pip install 'polars_irmetrics[dask]'"
    )
