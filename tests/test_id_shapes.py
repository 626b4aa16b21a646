"""Ids in every dtype a log holds them: the same values on every route, or a named refusal.

Ids may be strings (String, Categorical, Enum) or integers of any width, and the run and
its side tables (qrels=, interactions=, item_features=, groups=, propensities=,
reference=) need not agree on the width: each joint compares them in one dtype that holds
every value (``common_id_dtype``: an unsigned 64-bit id above 2**63 beside a signed one
is compared as Int128, never wrapped or nulled). Every variant below is the String-id
table relabelled one to one, so every metric must give the String-id values to the bit.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.ground.validate import common_id_dtype

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "c", "d"], "relevance": [1, 2, 1]}
)
HISTORY = pl.DataFrame({"query_id": ["q1", "q2", "q2", "q1"], "doc_id": ["b", "a", "c", "d"]})
FEATURES = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "category": ["u", "v", "u", "v"]})
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
USER_GROUPS = pl.DataFrame({"query_id": ["q1", "q2"], "group": ["new", "old"]})
PROPENSITIES = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "propensity": [0.5, 0.4, 0.3, 0.2]})
REFERENCE = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["b", "a", "c", "d", "a"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)

ROUTES: dict[str, tuple[list[str], dict[str, pl.DataFrame]]] = {
    "offline": (["ndcg@2", "map", "P@1", "recall@2", "bpref", "err@2"], {"qrels": QRELS}),
    "recsys": (
        [
            "novelty@2",
            "serendipity(kind='kotkov')@2",
            "surprisal@2",
            "catalog_coverage@2",
            "novelty(kind='replay')@2",
            "mcc@2",
        ],
        {"qrels": QRELS, "interactions": HISTORY},
    ),
    "elliot": (["pop_rsp@2", "epc@2", "aclt@2"], {"qrels": QRELS, "interactions": HISTORY}),
    "item_features": (
        ["categorical_diversity(category='category')@2"],
        {"item_features": FEATURES},  # (no judgments: none of them reads qrels=)
    ),
    "exposure": (["ee_loss", "awrf", "rnd", "rkl", "rrd"], {"qrels": QRELS, "groups": GROUPS}),
    "mad": (
        ["item_mad@2", "user_mad@2", "ndcg@2"],
        {"qrels": QRELS, "groups": GROUPS, "user_groups": USER_GROUPS},
    ),
    "propensity": (
        ["ps_precision@2", "ps_ndcg@2"],
        {"qrels": QRELS, "propensities": PROPENSITIES},
    ),
    "reference": (["rbo(p=0.9)", "kendall_tau", "jaccard@2"], {"reference": REFERENCE}),
}

_CODES = {name: code for code, name in enumerate(["q1", "q2", "a", "b", "c", "d"])}
_BIG = 2**63 + 11  # above Int64's range: a UInt64 id a signed cast would wrap or null


def _integers(frame: pl.DataFrame, dtype: pl.DataType, offset: int = 0) -> pl.DataFrame:
    codes = [
        (pl.col(c).replace_strict(_CODES, return_dtype=pl.UInt64) + offset).cast(dtype).alias(c)
        for c in ("query_id", "doc_id")
        if c in frame.columns
    ]
    return frame.with_columns(codes)


def _strings(frame: pl.DataFrame, dtype: pl.DataType) -> pl.DataFrame:
    return frame.with_columns(
        pl.col(c).cast(dtype) for c in ("query_id", "doc_id") if c in frame.columns
    )


# each variant maps (table name, table) to the relabelled table
VARIANTS: dict[str, Callable[[str, pl.DataFrame], pl.DataFrame]] = {
    "Int64 everywhere": lambda _, f: _integers(f, pl.Int64()),
    "UInt64 above 2**63 everywhere": lambda _, f: _integers(f, pl.UInt64(), _BIG),
    "Int32 run, Int64 side tables": lambda n, f: _integers(
        f, pl.Int32() if n == "run" else pl.Int64()
    ),
    "UInt64 run, Int64 side tables": lambda n, f: _integers(
        f, pl.UInt64() if n == "run" else pl.Int64()
    ),
    "UInt8 run, UInt64 side tables": lambda n, f: _integers(
        f, pl.UInt8() if n == "run" else pl.UInt64()
    ),
    "Categorical everywhere": lambda _, f: _strings(f, pl.Categorical()),
    "Enum run, String side tables": lambda n, f: (
        _strings(f, pl.Enum(["q1", "q2", "a", "b", "c", "d"])) if n == "run" else f
    ),
}


def _lazy(tables: dict[str, Any]) -> dict[str, Any]:
    return {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in tables.items()}


@functools.cache
def _string_ids_values(route: str) -> pl.DataFrame:
    """The route's values on the string ids: one call for the route's 14 cases."""
    metrics, tables = ROUTES[route]
    return irm.evaluate(RUN, metrics, **tables)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("route", list(ROUTES))
def test_every_id_dtype_gives_the_string_ids_values(route: str, variant: str, lazy: bool) -> None:
    metrics, tables = ROUTES[route]
    expected = _string_ids_values(route)
    relabel = VARIANTS[variant]
    run, sides = relabel("run", RUN), {k: relabel(k, v) for k, v in tables.items()}
    if lazy:
        got = irm.evaluate(run.lazy(), metrics, **_lazy(sides))
        assert isinstance(got, pl.LazyFrame)
        got = got.collect()
    else:
        got = irm.evaluate(run, metrics, **sides)
    assert_frame_equal(got, expected, check_exact=True)


# the routes' per-query metrics (the catalogue metrics and Elliot's popularity and MAD
# families describe whole recommendation tables: no per-query rows)
PER_QUERY = {"recsys": ["serendipity(kind='kotkov')@2", "surprisal@2", "mcc@2"]}


@pytest.mark.parametrize("route", [r for r in ROUTES if r not in ("elliot", "mad")])
def test_per_query_rows_keep_the_runs_ids(route: str) -> None:
    """Per-query values under UInt64 ids above 2**63 are keyed by the run's own ids."""
    metrics, tables = ROUTES[route]
    metrics = PER_QUERY.get(route, metrics)
    relabel = VARIANTS["UInt64 above 2**63 everywhere"]
    got = irm.evaluate(
        relabel("run", RUN),
        metrics,
        per_query=True,
        **{k: relabel(k, v) for k, v in tables.items()},
    )
    ids = got.get_column("query_id")
    assert ids.dtype == pl.UInt64
    assert sorted(ids.to_list()) == [_BIG + _CODES["q1"], _BIG + _CODES["q2"]]


@pytest.mark.parametrize(
    ("dtypes", "expected"),
    [
        ([pl.String(), pl.Categorical()], pl.String()),
        ([pl.Enum(["a"]), pl.String()], pl.String()),
        ([pl.Int32(), pl.Int64()], pl.Int64()),
        ([pl.UInt8(), pl.UInt32()], pl.Int64()),
        ([pl.UInt64(), pl.UInt8()], pl.UInt64()),
        ([pl.UInt64(), pl.Int8()], pl.Int128()),
    ],
)
def test_common_id_dtype(dtypes: list[pl.DataType], expected: pl.DataType) -> None:
    assert common_id_dtype(dtypes) == expected


def _with_null(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    first = pl.int_range(pl.len()) == 0
    return frame.with_columns(pl.when(first).then(None).otherwise(pl.col(column)).alias(column))


PREDICTIONS = pl.DataFrame(
    {"query_id": ["q1", "q1"], "label": [1, 0], "prediction": [float("nan"), 0.2]}
)

# (what is wrong, the table, metrics, the other tables, the error, the message's start)
REFUSALS: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], type[Exception], str]] = [
    (
        "a null user id in the interactions",
        RUN,
        ["novelty@2"],
        {"interactions": _with_null(HISTORY, "query_id")},
        InvalidValueError,
        "the interactions have 1 row(s) with a null 'query_id' or 'doc_id': each row is one"
        " user's interaction with one item; fill or drop them, e.g."
        " interactions.drop_nulls(['query_id', 'doc_id'])",
    ),
    (
        "a null item id in the interactions (Elliot's route)",
        RUN,
        ["pop_rsp@2"],
        {"qrels": QRELS, "interactions": _with_null(HISTORY, "doc_id")},
        InvalidValueError,
        "the interactions have 1 row(s) with a null 'query_id' or 'doc_id'",
    ),
    (
        "interactions without the item column",
        RUN,
        ["novelty@2"],
        {"interactions": HISTORY.drop("doc_id")},
        ColumnNotFoundError,
        "column 'doc_id' not found in the interactions (its columns: 'query_id'); rename its"
        " id columns as in the run: 'doc_id'",
    ),
    (
        "interactions= beside metrics none of which reads it",
        RUN,
        ["ndcg@2"],
        {"qrels": QRELS, "interactions": HISTORY},
        MetricParameterError,
        "interactions= holds the interaction history (where item popularity, the catalogue"
        " and each user's history come from), and no metric asked for reads it: drop"
        " interactions=, or ask for a metric that does (irm.list_metrics() says which)",
    ),
    (
        "qrels= beside metrics none of which reads it",
        RUN,
        ["novelty@2", "catalog_coverage@2"],
        {"qrels": QRELS, "interactions": HISTORY},
        MetricParameterError,
        "qrels= holds the relevance judgments, and no metric asked for reads them "
        "(novelty@2, catalog_coverage@2): drop qrels=, or ask for a metric that does "
        "(irm.list_metrics() says which)",
    ),
    (
        "item_features= beside metrics none of which reads it",
        RUN,
        ["ndcg@2", "novelty@2"],
        {"qrels": QRELS, "interactions": HISTORY, "item_features": FEATURES},
        MetricParameterError,
        "item_features= holds the items' feature vectors",
    ),
    (
        "a List group column",
        RUN,
        ["awrf"],
        {"qrels": QRELS, "groups": GROUPS.with_columns(pl.concat_list("group").alias("group"))},
        ColumnTypeError,
        "column 'group' in the groups has dtype List(String); ids must be strings or"
        " integers: cast it, e.g. pl.col('group').cast(pl.String)",
    ),
    (
        "a NaN prediction under ece's bins",
        PREDICTIONS,
        ["ece"],
        {},
        InvalidValueError,
        "column 'prediction' has 1 NaN value(s); a NaN prediction has no rank nor loss: fix"
        " the model's output or drop those rows, e.g. .filter(pl.col('prediction').is_not_nan())",
    ),
]


def _collected(table: pl.DataFrame, metrics: list[str], lazy: bool, **tables: Any) -> Any:
    if not lazy:
        return irm.evaluate(table, metrics, **tables)
    return irm.evaluate(table.lazy(), metrics, **_lazy(tables)).collect()


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("table", "metrics", "tables", "error", "message"),
    [r[1:] for r in REFUSALS],
    ids=[r[0] for r in REFUSALS],
)
def test_refusals_name_the_table_and_column(
    table: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, Any],
    error: type[Exception],
    message: str,
    lazy: bool,
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        _collected(table, metrics, lazy, **tables)


@pytest.mark.parametrize(
    "variant", ["UInt64 above 2**63 everywhere", "Enum run, String side tables"]
)
def test_exposure_segments_under_every_id_dtype(variant: str) -> None:
    """by= keys each ranking by a struct of the segment and the query id, built after
    the ids are cast to their common dtype: the String ids' values per segment (the
    judgments give each judged query its segment: a key of the run alone leaves a
    judged query some segment lacks unplaced, refused)."""
    metrics, tables = ROUTES["exposure"]
    segmented = RUN.with_columns(pl.Series("segment", ["s", "s", "s", "t", "t"]))
    qrels = tables["qrels"].with_columns(pl.Series("segment", ["s", "s", "t"]))
    tables = {**tables, "qrels": qrels}
    expected = irm.evaluate(segmented, metrics, by="segment", **tables)
    relabel = VARIANTS[variant]
    got = irm.evaluate(
        relabel("run", segmented),
        metrics,
        by="segment",
        **{k: relabel(k, v) for k, v in tables.items()},
    )
    assert_frame_equal(got, expected, check_exact=True)
