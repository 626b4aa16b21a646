"""Ids that do not line up, round 28: an audit of every side table of ``irm.evaluate``
(qrels=, queries=, interactions=, item_features=, groups=, target=, user_groups=,
propensities=, reference=, neighbors=, labels=, prefs=, qrels_jg=, policy=,
reward_model=) and of the public functions beside it, each probed with ids of another
dtype (Int64 beside String, Int32 beside Int64, UInt beside Int, Categorical and Enum
beside String, Float64), of another spelling (case, trailing spaces), null, and sharing
no value, on DataFrames and LazyFrames. Every one was lined up, refused by name or
warned of, but for the gaps below.

1. Off-policy evaluation: a ``position`` of text (or floats) in the policy, the reward
   model or the log, beside integer positions in the other, was refused with the fix of
   an id, ``pl.col('position').cast(pl.String)``, after which the log's text positions
   are refused in turn (positions are integers, 1 = top). The slot column is now
   checked as an integer in every table first (``ope.checks.check_keys``, one check of
   the long form and the slates alike), naming the integer cast.
2. awrf with intersectional groups (several group columns, no ``group``): the warning
   of a target= that holds none of the groups named ``column 'group'``, a column
   neither table has; it names the dimensions (``columns 'gender', 'region'``). And the
   warning of relevant documents without a group said ``same 'doc_id' spelling``
   whatever ``doc_id=`` named.
3. ``irm.system_agreement``: results whose system columns differ in dtype and so in
   text (Int64 ``1`` beside Float64 ``1.0``, or a String ``'1 '``) were refused as "system
   1 is in one result and not the other", naming neither dtype; the refusal now names
   both dtypes, the two texts and the cast that lines them up.
4. ``irm.reproducibility``: the original and the reproduced runs share their names, so
   a run whose ids do not line up with its judgments was warned of as "system
   'baseline'" on either side, the same words whichever of ``qrels=`` and
   ``qrels_reproduced=`` was spelt apart; the warning names the side and the table
   ("the reproduced run 'baseline' (judged by qrels_reproduced=)").
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, QuerySetError

from .helpers import engine_io, warned

LAZY = [pytest.param(False, id="DataFrame"), pytest.param(True, id="LazyFrame")]


def _lazy(frame: pl.DataFrame | None, lazy: bool) -> Any:
    return frame.lazy() if lazy and frame is not None else frame


# --- 1. off-policy evaluation: the slot column is an integer in every table ------------

LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": [0, 1, 1, 0],
        "reward": [1.0, 0.0, 1.0, 0.0],
        "pscore": [0.5, 0.5, 0.5, 0.5],
    }
)
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 1, 1, 2, 2, 2, 2],
        "position": [1, 1, 2, 2, 1, 1, 2, 2],
        "action": [0, 1] * 4,
        "prob": [0.6, 0.4] * 4,
    }
)
MODEL = POLICY.rename({"prob": "q_hat"})
SLATES = LOG.select("round_id", "position", "reward", "pscore")
SLATE_POLICY = SLATES.select("round_id", "position", pscore=pl.lit(0.25))


def _positions(frame: pl.DataFrame, dtype: pl.DataType) -> pl.DataFrame:
    return frame.with_columns(pl.col("position").cast(dtype))


def _not_integer(table: str, dtype: str) -> str:
    return (
        f"column 'position' in the {table} has dtype {dtype}; it must be an integer: cast "
        "it, e.g. pl.col('position').cast(pl.Int64)"
    )


#: (case, log, policy, reward model, metrics, the refusal)
POSITIONS: list[tuple[str, pl.DataFrame, pl.DataFrame, pl.DataFrame | None, list[str], str]] = [
    (
        "text positions in the policy",
        LOG,
        _positions(POLICY, pl.String()),
        None,
        ["ips"],
        _not_integer("policy table", "String"),
    ),
    (
        "text positions in the log",
        _positions(LOG, pl.String()),
        POLICY,
        None,
        ["ips"],
        _not_integer("log", "String"),
    ),
    (
        "text positions in the reward model",
        LOG,
        POLICY,
        _positions(MODEL, pl.String()),
        ["dm"],
        _not_integer("reward_model table", "String"),
    ),
    (
        "float positions in the policy",
        LOG,
        _positions(POLICY, pl.Float64()),
        None,
        ["ips"],
        "column 'position' in the policy table has dtype Float64; it must be an integer: "
        "where every value is a whole number, cast it, e.g. pl.col('position').cast(pl.Int64) "
        "(a cast drops a fraction: 1.5 becomes 1; check (pl.col('position') % 1 == 0).all() "
        "first)",
    ),
    (
        "text positions in a slate policy",
        SLATES,
        _positions(SLATE_POLICY, pl.String()),
        None,
        ["slate_ips"],
        _not_integer("policy table", "String"),
    ),
    (
        "text positions in a slate log",
        _positions(SLATES, pl.String()),
        SLATE_POLICY,
        None,
        ["slate_ips"],
        _not_integer("log", "String"),
    ),
]


@pytest.mark.parametrize("lazy", LAZY)
@pytest.mark.parametrize(
    ("log", "policy", "model", "metrics", "message"),
    [case[1:] for case in POSITIONS],
    ids=[case[0] for case in POSITIONS],
)
def test_a_position_that_is_no_integer_is_refused_with_an_integer_cast(
    log: pl.DataFrame,
    policy: pl.DataFrame,
    model: pl.DataFrame | None,
    metrics: list[str],
    message: str,
    lazy: bool,
) -> None:
    tables = {"policy": _lazy(policy, lazy), "reward_model": _lazy(model, lazy)}
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(
            _lazy(log, lazy), metrics, **{k: v for k, v in tables.items() if v is not None}
        )


@pytest.mark.parametrize("lazy", LAZY)
@pytest.mark.parametrize("dtype", [pl.Int32(), pl.UInt32(), pl.UInt64()], ids=str)
@pytest.mark.parametrize(
    ("log", "policy", "model", "metrics"),
    [
        (LOG, POLICY, MODEL, ["ips", "snips", "dr"]),
        (SLATES, SLATE_POLICY, None, ["slate_ips", "slate_snips"]),
    ],
    ids=["long", "slates"],
)
def test_integer_positions_of_another_width_give_the_same_bits(
    log: pl.DataFrame,
    policy: pl.DataFrame,
    model: pl.DataFrame | None,
    metrics: list[str],
    dtype: pl.DataType,
    lazy: bool,
) -> None:
    """The check of (1) refuses no integer: a position of any width is lined up."""
    tables = {"policy": policy, "reward_model": model}
    expected = irm.evaluate(log, metrics, **{k: v for k, v in tables.items() if v is not None})
    wide = {k: _lazy(_positions(v, dtype), lazy) for k, v in tables.items() if v is not None}
    got = irm.evaluate(_lazy(log, lazy), metrics, **wide)
    got = got.collect() if isinstance(got, pl.LazyFrame) else got
    assert_frame_equal(got, expected, check_exact=True)


# --- 2. the exposure warnings name the columns the tables hold --------------------------

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
CELLS = pl.DataFrame(
    {
        "doc_id": ["a", "b", "c", "d"],
        "gender": ["f", "m", "f", "m"],
        "region": ["n", "s", "s", "n"],
    }
)
CELL_TARGET = pl.DataFrame(
    {"gender": ["F", "F", "M", "M"], "region": ["n", "s", "n", "s"], "target": [0.25] * 4}
)
_NO_CELL = (
    "target= holds none of the 4 groups of the groups= table (columns 'gender', "
    "'region'): a group the target lacks has a target share of 0 in awrf, so awrf measures "
    "the distance to a target that none of the ranked groups can meet. Ids that do not line "
    "up are the likely cause: give target= and the groups= table the same 'gender' and "
    "'region' values (same spelling, same collection)."
)
_NO_GROUP = (
    "target= holds none of the 2 groups of the groups= table (column 'group'): a group the "
    "target lacks has a target share of 0 in awrf, so awrf measures the distance to a "
    "target that none of the ranked groups can meet. Ids that do not line up are the likely "
    "cause: give target= and the groups= table the same 'group' values (same spelling, "
    "same collection)."
)
_DOCNO = {"doc_id": "docno"}
_LOST = (
    "groups= gives no group to 1 relevant judged document(s) in 1 query of the run (first: "
    "'a' of query 'q1'): ee_loss leave them out (a relevant document without a group counts "
    "in no group: the expected-exposure targets leave its exposure out, and awrf's target, "
    "the relevant documents' groups, does not count it). Give each relevant document its "
    "group in groups= (same 'docno' spelling), or drop it from the judgments where it is "
    "meant to count in no group"
)

#: (case, metrics, groups, target, the run's and judgments' doc_id column, warnings)
EXPOSURE: list[tuple[str, list[str], pl.DataFrame, pl.DataFrame | None, str, list[str]]] = [
    (
        "a target of intersectional groups spelt apart",
        ["awrf"],
        CELLS,
        CELL_TARGET,
        "doc_id",
        [_NO_CELL],
    ),
    (
        "a target of one group column spelt apart (unchanged)",
        ["awrf"],
        pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]}),
        pl.DataFrame({"group": ["X", "Y"], "target": [0.5, 0.5]}),
        "doc_id",
        [_NO_GROUP],
    ),
    (
        "a relevant document without a group, doc_id='docno'",
        ["ee_loss"],
        pl.DataFrame({"docno": ["b", "c", "d"], "group": ["y", "x", "y"]}),
        None,
        "docno",
        [_LOST],
    ),
]


@pytest.mark.parametrize("lazy", LAZY)
@pytest.mark.parametrize(
    ("metrics", "groups", "target", "doc_id", "messages"),
    [case[1:] for case in EXPOSURE],
    ids=[case[0] for case in EXPOSURE],
)
def test_the_exposure_warnings_name_the_tables_columns(
    metrics: list[str],
    groups: pl.DataFrame,
    target: pl.DataFrame | None,
    doc_id: str,
    messages: list[str],
    lazy: bool,
) -> None:
    renamed = {"doc_id": doc_id}
    run, qrels = RUN.rename(renamed), QRELS.rename(renamed)
    tables = {"qrels": qrels, "groups": groups, "target": target}
    keywords = {k: _lazy(v, lazy) for k, v in tables.items() if v is not None}
    options = {} if doc_id == "doc_id" else {"doc_id": doc_id}
    _, said = warned(lambda: irm.evaluate(_lazy(run, lazy), metrics, **keywords, **options))
    assert said == messages


# --- 3. system_agreement: system columns of two dtypes ----------------------------------

RESULT = pl.DataFrame(
    {
        "system": [1, 1, 2, 2, 3, 3],
        "query_id": ["q1", "q2"] * 3,
        "ndcg@10": [0.9, 0.8, 0.5, 0.4, 0.1, 0.2],
    }
)
_APART = "system 1 is in one result and not the other; a and b must evaluate the same systems"

#: (case, b's system column, the refusal; None: lined up, the same result as a beside a)
SYSTEMS: list[tuple[str, pl.Expr, str | None]] = [
    (
        "Float64 beside Int64",
        pl.col("system").cast(pl.Float64),
        f"{_APART} (column 'system' is Int64 in a but Float64 in b, and two dtypes are "
        "matched by their text: '1' beside '1.0'): give both one dtype, e.g. "
        "pl.col('system').cast(pl.Int64) on both",
    ),
    ("other systems of one dtype (unchanged)", pl.col("system") + 10, _APART),
    ("Int32 beside Int64", pl.col("system").cast(pl.Int32), None),
    # integers beside their text: refused as ids of two kinds since round 30
    # (tests/test_agreement_spelt_round30.py)
]


@pytest.mark.parametrize("lazy", LAZY)
@pytest.mark.parametrize(
    ("spelt", "message"), [case[1:] for case in SYSTEMS], ids=[case[0] for case in SYSTEMS]
)
def test_system_agreement_names_the_dtypes_of_systems_apart(
    spelt: pl.Expr, message: str | None, lazy: bool
) -> None:
    b = _lazy(RESULT.with_columns(spelt.alias("system")), lazy)
    if message is None:
        expected = irm.system_agreement(RESULT, RESULT)
        assert_frame_equal(irm.system_agreement(_lazy(RESULT, lazy), b), expected)
        return
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(_lazy(RESULT, lazy), b)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_text_positions_as_one_plan(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """The check of (1) is the plan's schema check, shared by Spark and Dask."""
    evaluate, frame, _ = engine_io(engine, request)
    with pytest.raises(
        ColumnTypeError, match=f"^{re.escape(_not_integer('policy table', 'String'))}$"
    ):
        evaluate(frame(LOG), ["ips"], policy=frame(_positions(POLICY, pl.String())))


# --- 4. reproducibility: the coverage warnings name the side and its judgments ----------

_SPELT = QRELS.with_columns(pl.col("doc_id").str.to_uppercase())


def _unjudged(side: str, keyword: str) -> str:
    return (
        f"the {side} run 'baseline' (judged by {keyword}) retrieves no judged document (0 of "
        "3 judged documents, in 0 of 2 judged queries; it lists 2 of the 2 judged queries): "
        "every judged query scores as a ranking of no judged document does (0 in ndcg, map, "
        "precision, recall and the like), as trec_eval scores such a run. 3 (query, "
        "document) pair(s) of the run match a judgment only when case is ignored (run 'a', "
        "judgments 'A'): ids are compared exactly, as trec_eval compares them; give both the "
        "same spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and the "
        "judgments."
    )


#: (case, qrels, qrels_reproduced, the coverage warnings)
REPRODUCED: list[tuple[str, pl.DataFrame, pl.DataFrame | None, list[str]]] = [
    (
        "qrels= spelt apart, read by both sides",
        _SPELT,
        None,
        [_unjudged("original", "qrels="), _unjudged("reproduced", "qrels=")],
    ),
    (
        "qrels_reproduced= spelt apart",
        QRELS,
        _SPELT,
        [_unjudged("reproduced", "qrels_reproduced=")],
    ),
    (
        "qrels= spelt apart beside qrels_reproduced=",
        _SPELT,
        QRELS,
        [_unjudged("original", "qrels=")],
    ),
]


@pytest.mark.parametrize("lazy", LAZY)
@pytest.mark.parametrize(
    ("qrels", "qrels_reproduced", "messages"),
    [case[1:] for case in REPRODUCED],
    ids=[case[0] for case in REPRODUCED],
)
def test_reproducibility_names_the_side_whose_ids_do_not_line_up(
    qrels: pl.DataFrame, qrels_reproduced: pl.DataFrame | None, messages: list[str], lazy: bool
) -> None:
    runs = {"baseline": _lazy(RUN, lazy)}
    tables = {"qrels": _lazy(qrels, lazy), "qrels_reproduced": _lazy(qrels_reproduced, lazy)}
    _, said = warned(
        lambda: irm.reproducibility(
            runs, runs, ["ndcg@3"], **{k: v for k, v in tables.items() if v is not None}
        )
    )
    assert [s for s in said if "judged by" in s or "retrieves no judged" in s] == messages
