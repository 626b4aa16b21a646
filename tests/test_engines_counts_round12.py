"""The counted data checks of prediction metrics (predictions out of [0, 1], NaN or
infinite, labels neither 0 nor the positive one, bad weights, pairs on one side of
``labels=``) raise on Spark and Dask the message one machine gives: the counts over
the whole table, the first group in the keys' order. Each part of an engine raised its
own count (on Dask ``gauc`` with ``logloss``, 6 predictions out of [0, 1] of the
table's 10). Now every part counts its rows and one task adds the counts up
(``engines._prediction.checks_job``): on Dask before the last pass's parts read their
rows, on Spark once a part has refused its rows. The bad rows below are spread over
several queries, so over several of the three parts."""

from __future__ import annotations

import re
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark

#: Twelve users of four rows each, in two segments (users 0-5: 'a', 6-11: 'b').
N = 48
LOG = pl.DataFrame(
    {
        "user": [i % 12 for i in range(N)],
        "item": [i // 12 for i in range(N)],
        "segment": ["a" if i % 12 < 6 else "b" for i in range(N)],
        "y": [(i // 12 + i) % 2 for i in range(N)],
        "p": [((i * 7) % 10) / 10 + 0.05 for i in range(N)],
        "w": [1.0] * N,
        "rating": [float(i % 5) for i in range(N)],
    }
)
#: One row in four (in every user's rows but users 1, 3, 5...: 0, 4, 8 and their
#: neighbours) is bad: 12 rows, over 9 users.
BAD = pl.col("item") == 2
BAD_EVEN = (pl.col("item") == 2) & (pl.col("user") % 4 != 1)


def _bad(column: str, value: object, where: pl.Expr = BAD_EVEN) -> pl.DataFrame:
    return LOG.with_columns(
        pl.when(where).then(pl.lit(value)).otherwise(pl.col(column)).alias(column)
    )


KW = {"label": "y", "prediction": "p"}
RANGE = (
    "column 'p' has {n} value(s) outside [0, 1]{where} (e.g. 1.5); logloss read(s) it as "
    "a probability, so it is refused for them (auc, pr_auc and gauc read any score, the "
    "rating metrics any number): pass probabilities (e.g. a sigmoid of the score)"
)
NAN = (
    "column 'p' has 9 NaN value(s); a NaN prediction has no rank nor loss: fix the "
    "model's output or drop those rows, e.g. .filter(pl.col('p').is_not_nan())"
)
BINARY = (
    "column 'y' has 9 label(s) that are neither 0 nor the positive label 1 (e.g. 2); "
    "auc, gauc read(s) it as a binary label, so it is refused for them (the rating "
    "metrics read any number): map the labels to 0/1, or declare the positive one with "
    "positive_label="
)
WEIGHT = (
    "column 'w' has 9 weight(s) that are null, NaN, negative, below 2**-30 (other than 0) "
    "or 2**32 or more (infinite too) (e.g. -1.0); sample weights must be 0 or in "
    "[2**-30, 2**32) = [9.313225746154785e-10, 4294967296) (what the exact sums in units "
    "of 2**-64 hold): rescale them (every prediction metric is unchanged when all weights "
    "in that range are multiplied by one number)"
)
INFINITE = (
    "column 'p' has 9 infinite value(s) (e.g. inf); rmse read(s) it as a number, and an "
    "infinite one has no finite error (scikit-learn refuses it too): drop or fix those "
    "rows, e.g. .filter(pl.col('p').is_finite())"
)
ONLY_PREDICTIONS = (
    "12 (user, item) pair(s) have a prediction but no label (e.g. (0, 2)); pass "
    "unmatched='drop' to evaluate only the pairs on both sides (as Microsoft "
    "Recommenders' inner merge does)"
)
#: One NaN prediction (user 11), predictions out of [0, 1] in other users: one machine
#: raises the NaN first, whichever part holds it.
NAN_AND_RANGE = _bad("p", 1.5).with_columns(
    p=pl.when(BAD & (pl.col("user") == 11)).then(float("nan")).otherwise("p")
)
NAN_ONE = NAN.replace("9 NaN", "1 NaN")
PREDICTED = LOG.select("user", "item", "segment", "p")
TRUTH = LOG.filter(~BAD).select("user", "item", "y")
TWO = {**KW, "query_id": "user", "doc_id": "item"}

#: (id, table, labels, metrics, options, message): one machine's message, the engines'.
CASES: list[tuple[str, pl.DataFrame, pl.DataFrame | None, list[str], dict[str, Any], str]] = [
    ("range-gauc", _bad("p", 1.5), None, ["gauc", "logloss"], {**KW, "query_id": "user"}, RANGE.format(n=9, where="")),  # noqa: E501
    ("range-every-user", _bad("p", 1.5, BAD), None, ["gauc", "logloss"], {**KW, "query_id": "user"}, RANGE.format(n=12, where="")),  # noqa: E501
    ("range-no-query-column", _bad("p", 1.5).drop("user"), None, ["logloss"], KW, RANGE.format(n=9, where="")),  # noqa: E501
    ("range-by", _bad("p", 1.5), None, ["gauc", "logloss"], {**KW, "query_id": "user", "by": "segment"}, RANGE.format(n=9, where=" (first in the group segment='a')")),  # noqa: E501
    ("range-by-b", _bad("p", 1.5, BAD_EVEN & (pl.col("segment") == "b")), None, ["gauc", "logloss"], {**KW, "query_id": "user", "by": "segment"}, RANGE.format(n=5, where=" (first in the group segment='b')")),  # noqa: E501
    ("range-per-query", _bad("p", 1.5), None, ["logloss"], {**KW, "query_id": "user", "per_query": True}, RANGE.format(n=9, where=" (first in the group user=0)")),  # noqa: E501
    ("nan-before-range", NAN_AND_RANGE, None, ["logloss"], KW, NAN_ONE),
    ("nan", _bad("p", float("nan")), None, ["auc", "gauc"], {**KW, "query_id": "user"}, NAN),
    ("binary", _bad("y", 2), None, ["auc", "gauc"], {**KW, "query_id": "user"}, BINARY),
    ("weight", _bad("w", -1.0), None, ["auc"], {**KW, "sample_weight": "w"}, WEIGHT),
    ("infinite-rating", _bad("p", float("inf")), None, ["rmse"], {"label": "rating", "prediction": "p"}, INFINITE),  # noqa: E501
    ("two-tables", PREDICTED, TRUTH, ["auc", "logloss"], TWO, ONLY_PREDICTIONS),
]  # fmt: skip

ENGINES = ["spark", "dask"]


def _on(
    engine: str,
    request: pytest.FixtureRequest,
    table: pl.DataFrame,
    metrics: list[str],
    labels: pl.DataFrame | None,
    **options: Any,
) -> pl.DataFrame:
    """``engine``'s result as a polars frame, computed (three parts)."""
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
    ("name", "table", "labels", "metrics", "options", "message"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_one_machine_counts_the_whole_table(
    name: str,
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(irm.IrmError, match=f"^{re.escape(message)}$"):
        irm.evaluate(table, metrics, labels=labels, **options)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("name", "table", "labels", "metrics", "options", "message"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_engines_count_the_whole_table_as_one_machine(
    request: pytest.FixtureRequest,
    engine: str,
    name: str,
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(irm.IrmError) as one_machine:
        irm.evaluate(table, metrics, labels=labels, **options)
    with pytest.raises(type(one_machine.value), match=f"^{re.escape(message)}$") as raised:
        _on(engine, request, table, metrics, labels, **options)
    assert str(raised.value) == str(one_machine.value) == message


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_values_unchanged_where_every_check_passes(
    request: pytest.FixtureRequest, engine: str
) -> None:
    """The checks' pass refuses nothing of a clean table: the values are one machine's."""
    options = {**KW, "query_id": "user", "by": "segment"}
    want = irm.evaluate(LOG, ["auc", "gauc", "logloss"], **options)
    got = _on(engine, request, LOG, ["auc", "gauc", "logloss"], None, **options)
    assert got.equals(want.cast(got.schema))  # type: ignore[arg-type]
