"""Trust at every joint, round 26.

1. ``labels=`` that holds a ``by=``/``systems=`` key column: the groups are the
   predictions' column, and the labels' was read in silence (a labels table keyed by
   another day than its predictions gave the predictions' groups, no word). It is now
   matched pair by pair: where it agrees (in any dtype of the same kind) the values are
   those of the same call without it, bit for bit; a pair whose key differs (a null
   included) is refused naming the column, the count and the smallest pair, whatever
   ``unmatched=``; two kinds of dtype are refused naming the cast. On one machine
   (DataFrame, LazyFrame, out of core with ``buckets=``), Spark and Dask alike.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError

from .helpers import engine_io

# --- 1. labels= holding a by=/systems= key -------------------------------------------

PREDICTIONS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [10, 11, 12, 10, 13, 11, 12, 14],
        "prediction": [0.9, 0.2, 0.6, 0.4, 0.7, 0.3, 0.8, 0.1],
        "day": ["mon", "mon", "mon", "tue", "tue", "mon", "mon", "mon"],
    }
)
LABELS = pl.DataFrame(
    {
        "user": [3, 3, 3, 2, 2, 1, 1, 1],
        "item": [14, 12, 11, 13, 10, 12, 11, 10],
        "label": [0, 1, 0, 1, 0, 1, 0, 1],
    }
)
#: the labels' days, pair by pair as the predictions' (rows in another order)
DAYS = ["mon", "mon", "mon", "tue", "tue", "mon", "mon", "mon"]
PAIRS = {"query_id": "user", "doc_id": "item"}
KEYS = {"by": {"by": "day"}, "systems": {"systems": "day"}}
METRICS = ["auc", "logloss", "rmse"]


def _with_days(days: list[str | None], dtype: Any = pl.String) -> pl.DataFrame:
    return LABELS.with_columns(pl.Series("day", days, dtype=pl.String).cast(dtype))


def _one_machine(route: str, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any) -> Any:
    if route == "lazy":
        return irm.evaluate(predictions.lazy(), METRICS, labels=labels.lazy(), **kw).collect()
    extra = {"buckets": 4} if route == "buckets" else {}
    return irm.evaluate(predictions, METRICS, labels=labels, **extra, **kw)


def _engine(name: str, request: Any, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any):
    evaluate, to_engine, back = engine_io(name, request)
    out = evaluate(to_engine(predictions), METRICS, labels=to_engine(labels), **kw)
    return back(out).sort("day")


def _on(route: str, request: Any, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any):
    if route in ENGINES:
        return _engine(route, request, predictions, labels, **kw)
    return _one_machine(route, predictions, labels, **kw)


LOCAL = ["frame", "lazy", "buckets"]
ENGINES = ["spark", "dask"]

AGREEING = {
    "same dtype": _with_days(DAYS),
    "Categorical beside String": _with_days(DAYS, pl.Categorical),
    "Enum beside String": _with_days(DAYS, pl.Enum(["mon", "tue"])),
}


AGREEING_ROUTES = [(route, case) for route in LOCAL + ENGINES for case in AGREEING]
#: the values against the labels without the key, by (route, key): each case's want
_WITHOUT_KEY: dict[tuple[str, str], pl.DataFrame] = {}


@pytest.mark.parametrize("key", list(KEYS))
@pytest.mark.parametrize(("route", "case"), AGREEING_ROUTES)
def test_agreeing_key_of_labels_changes_no_bit(
    route: str, case: str, key: str, request: pytest.FixtureRequest
) -> None:
    kw = {**PAIRS, **KEYS[key]}
    # systems= against labels= without the column scores each system against every
    # label (tests/test_labels_systems_round26.py): here each system's pairs alone
    alone = {"unmatched": "drop"} if key == "systems" else {}
    # the labels without the key: one call per route and key, whatever the case (an
    # engine's call takes seconds)
    want = _WITHOUT_KEY.get((route, key))
    if want is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", irm.IrmWarning)
            want = _on(route, request, PREDICTIONS, LABELS, **kw, **alone)
        _WITHOUT_KEY[route, key] = want
    got = _on(route, request, PREDICTIONS, AGREEING[case], **kw)
    assert got.rows() == want.rows()
    assert got.schema == want.schema


def test_integer_key_of_two_widths_agrees() -> None:
    predictions = PREDICTIONS.with_columns(pl.col("user").cast(pl.Int32).alias("week"))
    labels = LABELS.with_columns(pl.col("user").cast(pl.Int64).alias("week"))
    want = irm.evaluate(predictions, METRICS, labels=LABELS, by="week", **PAIRS)
    got = irm.evaluate(predictions, METRICS, labels=labels, by="week", **PAIRS)
    assert got.rows() == want.rows()
    assert got.schema["week"] == pl.Int32  # the groups are the predictions' own column


def _differs(keyword: str, n: int, group: str, example: str) -> str:
    return (
        f"column 'day' of labels= disagrees with the predictions' on {n} (user, item) "
        f"pair(s) (first in the group day={group!r}) (e.g. {example}); {keyword}= groups "
        "the pairs by the predictions' column, and labels= that holds it must agree pair "
        "by pair: fix its values, or drop it from labels=, e.g. labels.drop('day')"
    )


#: labels (in LABELS' order: (3, 14), (3, 12), (3, 11), (2, 13), (2, 10), (1, 12)...)
DISAGREEING = {
    # (3, 12) and (3, 11) say 'tue' where the predictions say 'mon'
    "two pairs": (
        ["mon", "tue", "tue", "tue", "tue", "mon", "mon", "mon"],
        2,
        "mon",
        "(3, 11): 'mon' in the predictions, 'tue' in labels=",
    ),
    # the first group in the keys' order with a disagreement: 'mon' (none in 'tue')
    "a null": (
        ["mon", "mon", "mon", "tue", "tue", None, "mon", "mon"],
        1,
        "mon",
        "(1, 12): 'mon' in the predictions, null in labels=",
    ),
    "only in tue": (
        ["mon", "mon", "mon", "tue", "mon", "mon", "mon", "mon"],
        1,
        "tue",
        "(2, 10): 'tue' in the predictions, 'mon' in labels=",
    ),
}


@pytest.mark.parametrize("unmatched", ["error", "drop"])
@pytest.mark.parametrize("key", ["by"])  # a systems= key of labels= is joined on
@pytest.mark.parametrize("case", list(DISAGREEING))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_disagreeing_key_of_labels_is_refused(
    route: str, case: str, key: str, unmatched: str, request: pytest.FixtureRequest
) -> None:
    days, n, group, example = DISAGREEING[case]
    kw = {**PAIRS, **KEYS[key], "unmatched": unmatched}
    message = re.escape(_differs(key, n, group, example))
    with pytest.raises(InvalidValueError, match=f"^{message}$"):
        _on(route, request, PREDICTIONS, _with_days(days), **kw)


def test_categorical_key_of_labels_is_shown_as_text() -> None:
    labels = _with_days(DISAGREEING["two pairs"][0], pl.Categorical)
    message = re.escape(_differs("by", *DISAGREEING["two pairs"][1:]))
    with pytest.raises(InvalidValueError, match=f"^{message}$"):
        irm.evaluate(PREDICTIONS, METRICS, labels=labels, by="day", **PAIRS)


@pytest.mark.parametrize(
    ("dtype", "fix"),
    [(pl.Int64, "pl.String"), (pl.Float64, "pl.String")],
    ids=["integers", "floats"],
)
@pytest.mark.parametrize("route", ["frame", "lazy"])
def test_key_of_labels_in_another_kind_is_refused(route: str, dtype: Any, fix: str) -> None:
    labels = LABELS.with_columns(pl.lit(1, dtype=dtype).alias("day"))
    message = (
        f"column 'day' has dtype String in the predictions but {dtype()} in labels=; cast one "
        f"side to match, e.g. pl.col('day').cast({fix}) on both"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        _one_machine(route, PREDICTIONS, labels, by="day", **PAIRS)


def test_key_of_labels_that_the_call_does_not_group_by_is_not_read() -> None:
    # a column of labels= that no by=/systems= names is no key: not read, as before
    labels = _with_days(["x"] * 8)
    want = irm.evaluate(PREDICTIONS, METRICS, labels=LABELS, **PAIRS)
    assert irm.evaluate(PREDICTIONS, METRICS, labels=labels, **PAIRS).rows() == want.rows()


# --- 2. queries= ids matched in the common dtype --------------------------------------

BIG = 2**63 + 5  # a UInt64 id beyond Int64's range
RANKED = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2, 3, 3],
        "doc_id": ["a", "b", "a", "b", "a", "b"],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    }
)
JUDGED = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": ["a", "b", "b"], "relevance": [1, 1, 1]})
#: each query's day, and one more (a query of no table) whose id is the case's own
DAYS_OF = pl.DataFrame({"query_id": [1, 2, 3], "day": ["mon", "tue", "tue"]})


def _ids(frame: pl.DataFrame, dtype: Any) -> pl.DataFrame:
    return frame.with_columns(pl.col("query_id").cast(dtype))


def _queries(dtype: Any, extra: int | None) -> pl.DataFrame:
    days = (
        DAYS_OF
        if extra is None
        else pl.concat(
            [
                DAYS_OF.cast({"query_id": pl.UInt64}),
                pl.DataFrame(
                    {"query_id": [extra], "day": ["wed"]},
                    schema={"query_id": pl.UInt64, "day": pl.String},
                ),
            ]
        )
    )
    return days.with_columns(pl.col("query_id").cast(dtype))


#: (run's and judgments' dtype, queries=' dtype, an id of queries= alone)
WIDTHS = {
    "UInt64 beyond Int64 beside Int64": (pl.Int64, pl.UInt64, BIG),
    "Int64 beside Int32": (pl.Int32, pl.Int64, 2**40),
    "Int32 beside Int64": (pl.Int64, pl.Int32, 7),
    "UInt64 beside UInt64": (pl.UInt64, pl.UInt64, BIG),
}
ATTRIBUTE_METRICS = {"ranking": ["ndcg@2", "P@1"], "exposure": ["ee_relevance"]}


GROUPS = pl.DataFrame({"doc_id": ["a", "b"], "group": ["x", "y"]})
#: (metrics, route): the exposure measures have no out-of-core plan of their own
ATTRIBUTE_ROUTES = [
    (metrics, route)
    for metrics in ATTRIBUTE_METRICS
    for route in ("frame", "lazy", "buckets", "per_query")
    if metrics != "exposure" or route != "buckets"
]


def _attributes(
    route: str, run: pl.DataFrame, qrels: pl.DataFrame, queries: pl.DataFrame, metrics: str
):
    kw: dict[str, Any] = {"by": "day", "per_query": route == "per_query"}
    if metrics == "exposure":
        kw["groups"] = GROUPS
    if route == "buckets":
        kw["buckets"] = 2
    asked = ATTRIBUTE_METRICS[metrics]
    if route == "lazy":
        return irm.evaluate(
            run.lazy(), asked, qrels=qrels.lazy(), queries=queries.lazy(), **kw
        ).collect()
    return irm.evaluate(run, asked, qrels=qrels, queries=queries, **kw)


@pytest.mark.parametrize("case", list(WIDTHS))
@pytest.mark.parametrize(("metrics", "route"), ATTRIBUTE_ROUTES)
def test_queries_ids_meet_in_the_common_dtype(route: str, metrics: str, case: str) -> None:
    run_dtype, queries_dtype, extra = WIDTHS[case]
    run, qrels = _ids(RANKED, run_dtype), _ids(JUDGED, run_dtype)
    # the same call with queries= in the run's dtype and without the extra id
    want = _attributes(route, run, qrels, _ids(DAYS_OF, run_dtype), metrics)
    got = _attributes(route, run, qrels, _queries(queries_dtype, extra), metrics)
    assert got.rows() == want.rows()
    assert got.schema == want.schema  # the run's ids keep their dtype
    assert want["day"].to_list()[:2] == ["mon", "tue"]


@pytest.mark.parametrize(
    ("run_dtype", "queries_dtype", "message"),
    [
        (
            pl.Int64,
            pl.String,
            "column 'query_id' holds strings in queries= (String) but integers in the run "
            "(Int64); cast one side, e.g. pl.col('query_id').cast(pl.String) on both",
        ),
        (
            pl.String,
            pl.UInt64,
            "column 'query_id' holds integers in queries= (UInt64) but strings in the run "
            "(String); cast one side, e.g. pl.col('query_id').cast(pl.String) on both",
        ),
    ],
    ids=["string beside integers", "integers beside strings"],
)
@pytest.mark.parametrize("route", ["frame", "lazy"])
def test_queries_ids_of_another_kind_are_refused(
    route: str, run_dtype: Any, queries_dtype: Any, message: str
) -> None:
    run, qrels = _ids(RANKED, run_dtype), _ids(JUDGED, run_dtype)
    queries = _ids(DAYS_OF, pl.String).with_columns(pl.col("query_id").cast(queries_dtype))
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        _attributes(route, run, qrels, queries, "ranking")


#: Spark holds no unsigned integers (a UInt64 column is refused by Spark's own Arrow
#: conversion); Dask's tasks carry no Int128, the dtype a UInt64 id beside an Int64 one
#: is matched in: refused by name (below)
ENGINE_WIDTHS = [
    (engine, case)
    for engine in ENGINES
    for case in WIDTHS
    if not (engine == "spark" and WIDTHS[case][1] == pl.UInt64)
    and not (engine == "dask" and case == "UInt64 beyond Int64 beside Int64")
]


def _engine_attributes(engine: str, request: Any, run_dtype: Any, queries: pl.DataFrame):
    run, qrels = _ids(RANKED, run_dtype), _ids(JUDGED, run_dtype)
    evaluate, to_engine, back = engine_io(engine, request)
    out = evaluate(
        to_engine(run),
        ["ndcg@2", "P@1"],
        qrels=to_engine(qrels),
        queries=to_engine(queries),
        by="day",
    )
    return back(out).sort("day")


@pytest.mark.parametrize(("engine", "case"), ENGINE_WIDTHS)
def test_queries_ids_meet_in_the_common_dtype_on_the_engines(
    engine: str, case: str, request: pytest.FixtureRequest
) -> None:
    run_dtype, queries_dtype, extra = WIDTHS[case]
    run, qrels = _ids(RANKED, run_dtype), _ids(JUDGED, run_dtype)
    want = irm.evaluate(
        run, ["ndcg@2", "P@1"], qrels=qrels, queries=_ids(DAYS_OF, run_dtype), by="day"
    )
    got = _engine_attributes(engine, request, run_dtype, _queries(queries_dtype, extra))
    assert got.rows() == want.rows()


def test_dask_refuses_queries_ids_it_cannot_carry(request: pytest.FixtureRequest) -> None:
    message = (
        "column 'query_id' is Int64 in the run, Int64 in the qrels, UInt64 in the queries: "
        "one machine matches them as Int128, which the Arrow tables of Dask's tasks cannot "
        "carry; cast every table's 'query_id' to one dtype first, e.g. "
        ".astype({'query_id': 'int64'}) where every id is below 2**63, or to strings"
    )
    queries = _queries(pl.UInt64, BIG)
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        _engine_attributes("dask", request, pl.Int64, queries)


# --- 3. Categorical and Enum columns on the engines ------------------------------------

RUN_CAT = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["a", "b", "c", "a", "d", "b", "c"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
        "day": ["mon", "mon", "mon", "tue", "tue", "mon", "mon"],
    }
)
QRELS_CAT = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q3", "q3"],
        "doc_id": ["a", "c", "d", "b", "c"],
        "relevance": [1, 2, 1, 1, 0],
    }
)
TEXT_DTYPES = {
    "Categorical": pl.Categorical(),
    "Enum": pl.Enum(["a", "b", "c", "d", "mon", "q1", "q2", "q3", "tue"]),
}
#: which columns are Categorical (Enum): the run's ids, the run's and the judgments'
#: ids, the group key too
CAT_CASES = {
    "run ids": (["query_id", "doc_id"], []),
    "both sides' ids": (["query_id", "doc_id"], ["query_id", "doc_id"]),
    "ids and the key": (["query_id", "doc_id", "day"], ["query_id", "doc_id"]),
}


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per_query"])
@pytest.mark.parametrize("case", list(CAT_CASES))
@pytest.mark.parametrize("dtype", list(TEXT_DTYPES))
@pytest.mark.parametrize("engine", ENGINES)
def test_categorical_columns_on_the_engines(
    engine: str, dtype: str, case: str, per_query: bool, request: pytest.FixtureRequest
) -> None:
    in_run, in_qrels = CAT_CASES[case]
    to = TEXT_DTYPES[dtype]
    run = RUN_CAT.with_columns(pl.col(c).cast(to) for c in in_run)
    qrels = QRELS_CAT.with_columns(pl.col(c).cast(to) for c in in_qrels)
    kw = {"systems": "day", "per_query": per_query}
    want = irm.evaluate(run, ["ndcg@2", "P@1", "recip_rank"], qrels=qrels, **kw)
    evaluate, to_engine, back = engine_io(engine, request)
    out = evaluate(to_engine(run), ["ndcg@2", "P@1", "recip_rank"], qrels=to_engine(qrels), **kw)
    got = back(out)
    keys = ["day", "query_id"] if per_query else ["day"]
    # the ids come back as text (one machine's too); Dask's group key in the run's
    # dtype, as one machine's (an Enum's categories are no Arrow type: a Categorical)
    if engine == "dask":
        assert got.schema["day"] == (pl.String() if "day" not in in_run else pl.Categorical())
        assert want.schema["day"] == (pl.String() if "day" not in in_run else to)
    got = got.with_columns(pl.col(k).cast(want.schema[k]) for k in keys)
    assert got.sort(keys).rows() == want.sort(keys).rows()


# --- 4. a list-shaped run's two orders, in words of the lists --------------------------

#: the long RUN of test_orders_round25 as lists: q1's scores rise from b to c
LISTED = pl.DataFrame(
    {
        "query_id": ["q1", "q2"],
        "doc_id": [["a", "b", "c"], ["a", "b", "c"]],
        "score": [[0.9, 0.2, 0.7], [0.5, 0.5, 0.1]],
    }
)
LONG = LISTED.explode("doc_id", "score").with_columns(
    pl.int_range(1, 4, dtype=pl.Int64).over("query_id").alias("rank")
)
LIST_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["c", "a"], "relevance": [1, 1]})
LIST_ROUTES: dict[str, tuple[list[str], dict[str, pl.DataFrame]]] = {
    "ranking": (["ndcg", "P@2"], {"qrels": LIST_QRELS}),
    "exposure": (["ee_loss"], {"qrels": LIST_QRELS}),
    "grouped exposure": (
        ["awrf"],
        {
            "qrels": LIST_QRELS,
            "groups": pl.DataFrame({"doc_id": ["a", "b", "c"], "group": ["x", "y", "x"]}),
        },
    ),
    "recommendations": (
        ["novelty@2"],
        {
            "interactions": pl.DataFrame(
                {"query_id": ["u1", "u2", "u3"], "doc_id": ["a", "b", "c"]}
            )
        },
    ),
    "data quality": (["unrepeated_reco@2"], {}),
    "propensity": (
        ["ps_ndcg@3"],
        {
            "qrels": LIST_QRELS,
            "propensities": pl.DataFrame({"doc_id": ["a", "b", "c"], "propensity": [0.5] * 3}),
        },
    ),
    "reference": (["rbo(p=0.9)@3"], {"reference": LONG.with_columns(score=-pl.col("rank"))}),
}
LISTS_REFUSAL = (
    "the lists' order and column 'score' of the run order query 'q1' differently: 1 "
    "document(s) score lower than a document listed after them. order='auto' reads the "
    "lists' order (their positions) where the run has no list of ranks, and which order "
    "is meant the data cannot say: pass order='rank' to rank by the lists' order, or "
    "order='score' to rank by the score lists in 'score' (trec_eval's order, which "
    "ignores ranks)"
)


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize("route", list(LIST_ROUTES))
def test_list_run_of_two_orders_names_the_lists_order(route: str, lazy: bool) -> None:
    metrics, tables = LIST_ROUTES[route]
    run = LISTED.lazy() if lazy else LISTED
    given = {k: v.lazy() if lazy else v for k, v in tables.items()}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(LISTS_REFUSAL)}$"):
        pl.collect_all([irm.evaluate(run, metrics, **given).lazy()])


@pytest.mark.parametrize("route", list(LIST_ROUTES))
def test_list_run_in_the_order_its_message_offers(route: str) -> None:
    # order='rank' reads the lists' order, order='score' the score lists: as the long run
    metrics, tables = LIST_ROUTES[route]
    for order in ("rank", "score"):
        got = irm.evaluate(LISTED, metrics, order=order, **tables)
        assert got.equals(irm.evaluate(LONG, metrics, order=order, **tables))


def test_list_run_with_rank_lists_names_its_rank_column() -> None:
    # a list of ranks is a column the caller wrote: named as a long run's
    ranked = LISTED.with_columns(pl.Series("rank", [[1, 2, 3], [1, 2, 3]]))
    message = (
        "columns 'rank' and 'score' of the run order query 'q1' differently: 1 document(s) "
        "score lower than a document ranked below them. order='auto' reads 'rank' where "
        "the run has it, and which order is meant the data cannot say: pass order='rank' "
        "to rank by 'rank', or order='score' to rank by 'score' (trec_eval's order, which "
        "ignores ranks)"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(ranked, ["ndcg"], qrels=LIST_QRELS)


@pytest.mark.parametrize("engine", ENGINES)
def test_list_run_of_two_orders_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(LISTS_REFUSAL)}$"):
        back(evaluate(to_engine(LISTED), ["ndcg", "P@2"], qrels=to_engine(LIST_QRELS)))
