"""``by=``/``systems=`` keys of one kind in two widths, round 25.

A group key the run holds in one dtype and a side table it is matched on in another of
the same kind (Int32 beside Int64, UInt32 beside Int64, Categorical beside String) was
lined up on the ``reference=`` route alone (cast to the dtype that holds both, as the
ids are: ``ground.validate.common_id_dtype``) and refused on every other route with
``key_dtype_error``'s "cast one side to match". The door now lines it up for every
route (``ground.validate.with_common_keys``): the values are those of the same call
with the key of one dtype on both sides, bit for bit, on one machine and on Spark and
Dask; a UInt64 group beyond Int64 is kept whole (Int128). Two kinds (text beside
integers) and dtypes that hold no ids (Float64) are refused as before, naming the cast.
A table the key is not matched on (``labels=``, ``groups=``, ``policy=``...) leaves the
run's key its own dtype, as before.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["a", "b", "c", "a", "d", "b", "c"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q3", "q3"],
        "doc_id": ["a", "c", "d", "b", "c"],
        "relevance": [1, 2, 1, 1, 0],
    }
)
#: the reference and the exact neighbours: the run's rankings reordered
OTHER = RUN.with_columns(pl.col("score").reverse().over("query_id"))
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
#: each day's history holds every item (q1's is day 1's, the others day 2's)
HISTORY = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q1", "q2", "q2", "q3", "q3", "q4"],
        "doc_id": ["a", "b", "c", "d", "a", "b", "c", "d", "a"],
    }
)
QUERIES = pl.DataFrame({"query_id": ["q1", "q2", "q3"]})
PREDICTIONS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["a", "b", "c", "d", "a", "b"],
        "prediction": [0.9, 0.2, 0.4, 0.7, 0.3, 0.6],
    }
)
LABELS = PREDICTIONS.select("query_id", "doc_id", label=pl.Series([1, 0, 0, 1, 1, 0]))
LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4],
        "action": ["a1", "b2", "a1", "b2"],
        "reward": [1.0, 0.0, 1.0, 0.0],
        "pscore": [0.5] * 4,
    }
)
POLICY = pl.DataFrame(
    {"round_id": [1, 1, 2, 2, 3, 3, 4, 4], "action": ["a1", "b2"] * 4, "prob": [0.8, 0.2] * 4}
)


def _day(frame: pl.DataFrame, dtype: pl.DataType, rows: str = "query_id") -> pl.DataFrame:
    """``frame`` with a group key 'day' in ``dtype``: 1 for q1 (round 1), else 2 (text:
    '1' and '2')."""
    if rows not in frame.columns:  # groups=: no query column, one day
        day = pl.lit(2)
    else:
        first = pl.col(rows).cast(pl.String).is_in(["q1", "1"])
        day = pl.when(first).then(pl.lit(1)).otherwise(pl.lit(2))
    if not (dtype.is_integer() or dtype.is_float()):
        day = day.cast(pl.String)
    return frame.with_columns(day.cast(dtype).alias("day"))


# (case, metrics, the run, the side table's keyword, the side table, the other tables,
#  options, whether the side table is matched on the key)
ROUTES: list[tuple[str, list[str], pl.DataFrame, str, pl.DataFrame, dict[str, Any],
                   dict[str, Any], bool]] = [
    ("ranking metrics, qrels=", ["ndcg@2", "map"], RUN, "qrels", QRELS, {}, {}, True),
    ("ranking metrics, queries=", ["ndcg@2"], RUN, "queries", QUERIES, {"qrels": QRELS},
     {}, True),
    ("exposure measures, qrels=", ["ee_loss", "ee_relevance"], RUN, "qrels", QRELS,
     {"groups": GROUPS}, {}, True),
    ("exposure beside ranking metrics, qrels=", ["ndcg@2", "ee_loss"], RUN, "qrels",
     QRELS, {"groups": GROUPS}, {}, True),
    ("awrf, qrels=", ["awrf"], RUN, "qrels", QRELS, {"groups": GROUPS}, {}, True),
    ("beyond-accuracy metrics, interactions=", ["novelty@2", "catalog_coverage@2"], RUN,
     "interactions", HISTORY, {}, {}, True),
    ("unseen items dropped, interactions=", ["surprisal@2"], RUN, "interactions",
     HISTORY, {}, {"unseen_items": "drop"}, True),
    ("Elliot's metrics, interactions=", ["epc@2"], RUN, "interactions", HISTORY,
     {"qrels": QRELS}, {}, True),
    ("Elliot's metrics, qrels=", ["epc@2"], RUN, "qrels", QRELS, {"interactions": HISTORY},
     {}, True),
    ("rank similarity, reference=", ["rbo", "jaccard@2"], RUN, "reference", OTHER, {}, {},
     True),
    ("neighbour recall, neighbors=", ["neighbor_recall@2"], RUN, "neighbors", OTHER, {},
     {}, True),
    # a table the key is not matched on: the run's key keeps its dtype
    ("prediction metrics, labels= (not matched on the key)", ["auc", "logloss"],
     PREDICTIONS, "labels", LABELS, {}, {}, False),
    # groups= with a key column is refused (read by no measure, each day's groups would
    # be every day's): tests/test_recsys_exposure_round30.py
    ("off-policy estimators, policy= (not matched on the key)", ["ips", "snips"], LOG,
     "policy", POLICY, {}, {}, False),
]  # fmt: skip

#: (the run's key dtype, the side table's, the one dtype they are lined up in)
WIDTHS: list[tuple[pl.DataType, pl.DataType, pl.DataType]] = [
    (pl.Int32(), pl.Int64(), pl.Int64()),
    (pl.Int64(), pl.Int32(), pl.Int64()),
    (pl.UInt32(), pl.Int64(), pl.Int64()),
    (pl.UInt64(), pl.Int64(), pl.Int128()),
    (pl.UInt8(), pl.UInt64(), pl.UInt64()),
    (pl.Categorical(), pl.String(), pl.String()),
    (pl.String(), pl.Categorical(), pl.String()),
]
_OPTIONS = ("by", "systems")


def _cases() -> list[Any]:
    cases = []
    for case, metrics, run, keyword, side, others, options, matched in ROUTES:
        for option in _OPTIONS:
            if option == "systems" and keyword in ("queries", "policy"):
                continue  # queries= gives by= keys; systems= is refused for the estimators
            for ran, theirs, common in WIDTHS:
                cases.append(
                    pytest.param(
                        metrics,
                        run,
                        keyword,
                        side,
                        others,
                        {option: "day", **options},
                        ran,
                        theirs,
                        # a systems= key labels= holds is joined on (round 26:
                        # tests/test_labels_systems_round26.py): matched, one dtype
                        common if matched or (keyword, option) == ("labels", "systems") else ran,
                        id=f"{case}-{option}-{ran}/{theirs}",
                    )
                )
    return cases


def _keyed(
    run: pl.DataFrame,
    keyword: str,
    side: pl.DataFrame,
    others: dict[str, Any],
    ran: pl.DataType,
    theirs: pl.DataType,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    rows = "round_id" if keyword == "policy" else "query_id"
    # the judgments or interactions beside (not queries=', which give the key): keyed
    # in the run's dtype, each group's own
    keyed = ("qrels", "interactions") if keyword != "queries" else ()
    tables = {k: _day(v, ran) if k in keyed else v for k, v in others.items()}
    tables[keyword] = _day(side, theirs, rows)
    return _day(run, ran, rows), tables


def _quiet(call: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irm.IrmWarning)
        got = call()
    return got.collect() if isinstance(got, pl.LazyFrame) else got


#: the one-dtype call of test_a_key_of_one_kind_in_two_widths_is_lined_up_on_every_route,
#: by its metrics, tables (ROUTES' own objects, alive for the session), options and dtype
_ONE_DTYPE: dict[tuple[Any, ...], pl.DataFrame] = {}


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("metrics", "run", "keyword", "side", "others", "options", "ran", "theirs", "expected"),
    _cases(),
)
def test_a_key_of_one_kind_in_two_widths_is_lined_up_on_every_route(
    metrics: list[str],
    run: pl.DataFrame,
    keyword: str,
    side: pl.DataFrame,
    others: dict[str, Any],
    options: dict[str, Any],
    ran: pl.DataType,
    theirs: pl.DataType,
    expected: pl.DataType,
    lazy: bool,
) -> None:
    table, tables = _keyed(run, keyword, side, others, ran, theirs)
    if lazy:
        table, tables = table.lazy(), {k: v.lazy() for k, v in tables.items()}
    got = _quiet(lambda: irm.evaluate(table, metrics, **tables, **options))
    # the same call with the key in one dtype on both sides (the same for the cases of
    # a route and option lined up in that dtype, both frame kinds: computed once)
    key = (tuple(metrics), id(run), keyword, id(side), id(others), repr(options), repr(expected))
    if key not in _ONE_DTYPE:
        one, same = _keyed(run, keyword, side, others, expected, expected)
        _ONE_DTYPE[key] = _quiet(lambda: irm.evaluate(one, metrics, **same, **options))
    want = _ONE_DTYPE[key]
    assert got.schema["day"] == expected
    assert got.equals(want)  # values to the last bit, and the key's dtype
    assert got.height == 2  # two groups: the days met by value


#: (case, metrics, the side table's keyword, the run's key dtype, the table's, the
#:  refusal)
_TWO_KINDS = "column 'day' has dtype {} in {} but {} in {}; cast one side to match, e.g. "
REFUSED: list[tuple[str, list[str], str, pl.DataType, pl.DataType, str]] = [
    ("judgments: String beside Int64", ["ndcg@2"], "qrels", pl.String(), pl.Int64(),
     _TWO_KINDS.format("String", "the run", "Int64", "the judgments")
     + "pl.col('day').cast(pl.String) on both"),
    ("judgments: Int32 beside Categorical", ["ee_loss"], "qrels", pl.Int32(),
     pl.Categorical(), _TWO_KINDS.format("Int32", "the run", "Categorical", "the judgments")
     + "pl.col('day').cast(pl.String) on both"),
    ("judgments: Float64 beside Int64", ["ndcg@2"], "qrels", pl.Float64(), pl.Int64(),
     _TWO_KINDS.format("Float64", "the run", "Int64", "the judgments")
     + "pl.col('day').cast(pl.Float64) on both"),
    ("queries=: Int64 beside String", ["ndcg@2"], "queries", pl.Int64(), pl.String(),
     _TWO_KINDS.format("Int64", "the run", "String", "queries=")
     + "pl.col('day').cast(pl.String) on both"),
    ("interactions: UInt64 beside String", ["novelty@2"], "interactions", pl.UInt64(),
     pl.String(), _TWO_KINDS.format("UInt64", "the recommendations", "String",
                                    "the interactions")
     + "pl.col('day').cast(pl.String) on both"),
    ("reference: Int64 beside String", ["rbo"], "reference", pl.Int64(), pl.String(),
     _TWO_KINDS.format("Int64", "the run", "String", "the reference")
     + "pl.col('day').cast(pl.String) on both"),
    ("neighbors: Categorical beside Int64", ["neighbor_recall@2"], "neighbors",
     pl.Categorical(), pl.Int64(),
     _TWO_KINDS.format("Categorical", "the run", "Int64", "the neighbors")
     + "pl.col('day').cast(pl.String) on both"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "metrics", "keyword", "ran", "theirs", "message"),
    REFUSED,
    ids=[c[0] for c in REFUSED],
)
def test_a_key_of_two_kinds_is_refused_naming_the_cast(
    case: str,
    metrics: list[str],
    keyword: str,
    ran: pl.DataType,
    theirs: pl.DataType,
    message: str,
) -> None:
    side = {
        "qrels": QRELS,
        "queries": QUERIES,
        "interactions": HISTORY,
        "reference": OTHER,
        "neighbors": OTHER,
    }[keyword]
    others: dict[str, Any] = {"qrels": QRELS} if keyword == "queries" else {}
    if metrics == ["ee_loss"]:
        others["groups"] = GROUPS
    run, tables = _keyed(RUN, keyword, side, others, ran, theirs)
    for option in _OPTIONS if keyword != "queries" else ("by",):
        with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
            irm.evaluate(run, metrics, **tables, **{option: "day"})


_BEYOND = 2**63 + 5
#: ``_BEYOND`` wrapped into Int64: the side table's group a wrong cast would meet
_WRAPPED = _BEYOND - 2**64

# (case, metrics, the side table's keyword, the side table, the other tables)
WHOLE: list[tuple[str, list[str], str, pl.DataFrame, dict[str, Any]]] = [
    ("qrels=", ["ndcg@2"], "qrels", QRELS, {}),
    ("exposure, qrels=", ["ee_relevance"], "qrels", QRELS, {"groups": GROUPS}),
    ("interactions=", ["novelty@2"], "interactions", HISTORY, {}),
    ("reference=", ["rbo"], "reference", OTHER, {}),
]


def _outcome(call: Any) -> pl.DataFrame | str:
    """``call``'s result, or its library error's class and text."""
    try:
        return _quiet(call)
    except irm.IrmError as error:
        return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize(
    ("case", "metrics", "keyword", "side", "others"), WHOLE, ids=[c[0] for c in WHOLE]
)
def test_a_uint64_group_beyond_int64_is_kept_whole(
    case: str, metrics: list[str], keyword: str, side: pl.DataFrame, others: dict[str, Any]
) -> None:
    # the run's groups 1 and 2**63 + 5 (UInt64) beside the side table's 1 and
    # 5 - 2**63 (Int64), the first one wrapped: compared in Int128, they stay apart
    def day(frame: pl.DataFrame, other: int, dtype: pl.DataType) -> pl.DataFrame:
        value = pl.when(pl.col("query_id") == "q1").then(pl.lit(1)).otherwise(pl.lit(other))
        return frame.with_columns(value.cast(dtype).alias("day"))

    run = day(RUN, _BEYOND, pl.UInt64())
    tables = {**others, keyword: day(side, _WRAPPED, pl.Int64())}
    got = _outcome(lambda: irm.evaluate(run, metrics, **tables, systems="day"))
    one = {k: v.with_columns(pl.col("day").cast(pl.Int128)) if "day" in v.columns else v
           for k, v in tables.items()}  # fmt: skip
    runs = run.with_columns(pl.col("day").cast(pl.Int128))
    want = _outcome(lambda: irm.evaluate(runs, metrics, **one, systems="day"))
    if isinstance(got, str):
        assert got == want
        assert str(_BEYOND) in got  # the run's group named whole
    else:
        assert isinstance(want, pl.DataFrame)
        assert got.schema["day"] == pl.Int128
        assert got.equals(want)


# (case, metrics, the side table's keyword, the side table)
OUT_OF_CORE: list[tuple[str, list[str], str, pl.DataFrame]] = [
    ("qrels=", ["ndcg@2", "map"], "qrels", QRELS),
    ("interactions=", ["novelty@2", "catalog_coverage@2"], "interactions", HISTORY),
]


@pytest.mark.parametrize("option", _OPTIONS)
@pytest.mark.parametrize(
    ("case", "metrics", "keyword", "side"), OUT_OF_CORE, ids=[c[0] for c in OUT_OF_CORE]
)
def test_out_of_core_lines_a_key_up_as_one_plan(
    case: str, metrics: list[str], keyword: str, side: pl.DataFrame, option: str
) -> None:
    run, tables = _keyed(RUN, keyword, side, {}, pl.Int32(), pl.Int64())
    lazy = {k: v.lazy() for k, v in tables.items()}
    got = _quiet(lambda: irm.evaluate(run.lazy(), metrics, **lazy, **{option: "day"}, buckets=2))
    one, same = _keyed(RUN, keyword, side, {}, pl.Int64(), pl.Int64())
    want = _quiet(lambda: irm.evaluate(one, metrics, **same, **{option: "day"}))
    assert got.equals(want)


# --- Spark and Dask: the same values as one machine's call of one dtype ---------------

# (case, metrics, the run, the side table's keyword, the side table, the other tables,
#  options)
ENGINE_ROUTES: list[tuple[str, list[str], pl.DataFrame, str, pl.DataFrame, dict[str, Any],
                          dict[str, Any]]] = [
    ("qrels=", ["ndcg@2", "map"], RUN, "qrels", QRELS, {}, {}),
    ("queries=", ["ndcg@2"], RUN, "queries", QUERIES, {"qrels": QRELS}, {}),
    ("exposure, qrels=", ["ee_loss", "ee_relevance"], RUN, "qrels", QRELS,
     {"groups": GROUPS}, {}),
    ("interactions=", ["novelty@2"], RUN, "interactions", HISTORY, {}, {}),
    ("unseen items dropped, interactions=", ["surprisal@2"], RUN, "interactions", HISTORY,
     {}, {"unseen_items": "drop"}),
    ("Elliot's, interactions=", ["epc@2"], RUN, "interactions", HISTORY, {"qrels": QRELS},
     {}),
    ("reference=", ["rbo"], RUN, "reference", OTHER, {}, {}),
    ("labels= (not matched on the key)", ["auc"], PREDICTIONS, "labels", LABELS, {}, {}),
]  # fmt: skip
#: (the engine, the run's key dtype, the side table's, the one dtype they are lined up
#:  in): each engine a narrower run and a narrower side (one machine's cases above hold
#:  every pair on every route); a Categorical column on Dask (a pyarrow dictionary,
#:  read as its text since round 26): tests/test_trust_round26.py
ENGINE_WIDTHS = [
    ("spark", pl.Int32(), pl.Int64(), pl.Int64()),
    ("spark", pl.Categorical(), pl.String(), pl.String()),
    ("dask", pl.Int64(), pl.Int16(), pl.Int64()),
]


@pytest.mark.parametrize(
    ("engine", "ran", "theirs", "common"),
    ENGINE_WIDTHS,
    ids=[f"{e}-{a}/{b}" for e, a, b, _ in ENGINE_WIDTHS],
)
@pytest.mark.parametrize(
    ("case", "metrics", "run", "keyword", "side", "others", "options"),
    ENGINE_ROUTES,
    ids=[c[0] for c in ENGINE_ROUTES],
)
def test_the_engines_line_a_key_up_as_one_machine(
    case: str,
    metrics: list[str],
    run: pl.DataFrame,
    keyword: str,
    side: pl.DataFrame,
    others: dict[str, Any],
    options: dict[str, Any],
    engine: str,
    ran: pl.DataType,
    theirs: pl.DataType,
    common: pl.DataType,
    request: pytest.FixtureRequest,
) -> None:
    evaluate, to_engine, from_engine = engine_io(engine, request)
    given = {"by" if keyword == "queries" else "systems": "day", **options}
    table, tables = _keyed(run, keyword, side, others, ran, theirs)
    got = _quiet(
        lambda: from_engine(
            evaluate(
                to_engine(table),
                metrics,
                **{k: to_engine(v) for k, v in tables.items()},
                **given,
            )
        )
    )
    if keyword == "labels":  # the run's key, as one machine keeps it
        common = ran
    one, same = _keyed(run, keyword, side, others, common, common)
    want = _quiet(lambda: irm.evaluate(one, metrics, **same, **given))
    # the engine's key as one machine's (a Categorical comes back as text)
    got = got.with_columns(pl.col("day").cast(want.schema["day"]))
    assert got.sort("day").equals(want.sort("day"))
