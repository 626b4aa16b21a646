"""Which checks run never depends on which metrics are asked for, across the routes.

tests/test_same_error_every_metric.py holds every metric of a run and judgments to one
error per bad input. The metrics that read a table more (the exposure measures, the
propensity-scored metrics, Elliot's and RecTools' metrics of the interactions, the
MAD metrics of groups) score the same run and judgments, so each bad input gets the
same error, with the same message, from them; rND, rKL and rRD read the run alone, and
get the same error for a bad run. And a table beside the run that lacks a column a
metric reads (renamed or dropped) is named in one of the library's errors, never in
polars' own.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, IrmError

from .bad_inputs import BAD_INPUTS, BadInput, qrels_frame
from .conftest import Evaluate

_DOCS = ["a", "b", "c", "d", "x"]
_GROUPS = pl.DataFrame({"doc_id": _DOCS, "group": ["g0", "g1", "g0", "g1", "g0"]})
_HISTORY = pl.DataFrame({"query_id": ["q1", "q2", "q3", "q3"], "doc_id": ["a", "b", "c", "d"]})
_USERS = pl.DataFrame({"query_id": ["q1", "q2"], "group": ["h0", "h1"]})
_PROPENSITIES = pl.DataFrame({"doc_id": _DOCS, "propensity": [0.5] * 5})

#: (metric, the tables it reads beside the run and the judgments)
JUDGED_ROUTES: list[tuple[str, dict[str, pl.DataFrame]]] = [
    ("ee_loss", {"groups": _GROUPS}),
    ("ee_relevance", {}),  # document level: no groups
    ("awrf", {"groups": _GROUPS}),
    ("ps_precision@5", {"propensities": _PROPENSITIES}),
    ("pop_rsp@5", {"interactions": _HISTORY}),
    ("epc@5", {"interactions": _HISTORY}),
    ("reco_accuracy@5", {"interactions": _HISTORY}),
    ("serendipity(kind='kotkov')@5", {"interactions": _HISTORY}),
    ("item_mad@5", {"groups": _GROUPS}),
    ("user_mad@5", {"user_groups": _USERS}),
]

#: The bad inputs that come with judgments (a judged table has none to give them).
JUDGED = [bad for bad in BAD_INPUTS if "qrels" in bad.build()[1]]


def _raised(evaluate: Evaluate, run: pl.DataFrame, metric: str, **tables: Any) -> tuple[Any, str]:
    with pytest.raises(IrmError) as info:
        evaluate(run, [metric], **tables)
    return type(info.value), str(info.value).splitlines()[0]


@pytest.mark.parametrize("bad", JUDGED, ids=[b.name for b in JUDGED])
def test_every_route_raises_the_accuracy_metrics_error(
    evaluate: Evaluate, frame_kind: str, bad: BadInput
) -> None:
    # half of the routes on a DataFrame, half on a LazyFrame (map on both)
    run, tables = bad.build()
    expected = _raised(evaluate, run, "map", **tables)
    assert expected[0] is bad.error
    half = JUDGED_ROUTES[frame_kind == "LazyFrame" :: 2]
    raised = {m: _raised(evaluate, run, m, **tables, **more) for m, more in half}
    assert raised == dict.fromkeys(raised, expected)


#: The bad inputs whose problem is the run's (the same error beside clean judgments).
RUN_ONLY = [bad for bad in JUDGED if "judg" not in bad.name and "label" not in bad.name]


@pytest.mark.parametrize("bad", RUN_ONLY, ids=[b.name for b in RUN_ONLY])
def test_the_segregation_measures_raise_the_runs_error(evaluate: Evaluate, bad: BadInput) -> None:
    # rnd, rkl and rrd read no judgments: the run's problem alone, as map finds it
    # beside clean judgments (so the case is the run's)
    run, _ = bad.build()
    expected = _raised(evaluate, run, "map", qrels=qrels_frame())
    assert expected[0] is bad.error
    assert expected[1].startswith(bad.message)
    for metric in ("rnd", "rkl", "rrd"):
        assert _raised(evaluate, run, metric, groups=_GROUPS) == expected, metric


#: The recommendation table's metrics (no judgments), with and without a cutoff (a
#: metric that reads no position checks the rank or score all the same).
RECOMMENDATION_ROUTES: list[tuple[str, dict[str, pl.DataFrame]]] = [
    ("novelty@5", {"interactions": _HISTORY}),
    ("catalog_coverage", {"interactions": _HISTORY}),
    ("gini_index@5", {"interactions": _HISTORY}),
    ("sufficient_reco@5", {}),
]


@pytest.mark.parametrize("bad", RUN_ONLY, ids=[b.name for b in RUN_ONLY])
def test_the_recommendation_tables_metrics_raise_the_runs_error(
    evaluate: Evaluate, bad: BadInput
) -> None:
    # a rank held twice among them: before, each user's top k took both items
    run, _ = bad.build()
    expected = _raised(evaluate, run, "map", qrels=qrels_frame())
    interactions = _HISTORY.vstack(_HISTORY.select("query_id", doc_id=pl.lit("x")))
    for metric, tables in RECOMMENDATION_ROUTES:
        tables = dict.fromkeys(tables, interactions)
        assert _raised(evaluate, run, metric, **tables) == expected, metric
    # irm.beyond_accuracy calls its table the recommendations
    with pytest.raises(IrmError) as info:
        irm.beyond_accuracy(run, ["novelty@5"], interactions=interactions, user_id="query_id",
                            item_id="doc_id")  # fmt: skip
    words = str(info.value).replace("of the recommendations", "of the run")
    assert (type(info.value), words) == expected


_RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "rank": [1, 2, 3, 1, 2],
    }
)
_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "d"], "relevance": [1, 2]})
_FEATURES = pl.DataFrame(
    {"doc_id": _DOCS, "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [0.5, 0.5]]}
)
_EVERY_ITEM = pl.DataFrame({"query_id": ["q3"] * 5, "doc_id": _DOCS})
_CATALOGUE = pl.concat([_HISTORY, _EVERY_ITEM, _EVERY_ITEM.with_columns(query_id=pl.lit("q4"))])

#: (metric, the tables it reads): each table's every column renamed, then dropped (the
#: popularity novelty and RecTools' catalogue size read the interactions' items alone:
#: their user column may go)
UNREAD = {
    ("novelty@5", "interactions", "query_id"),
    ("reco_accuracy@5", "interactions", "query_id"),
    ("mcc@5", "interactions", "query_id"),
}
SIDE_TABLES: list[tuple[str, dict[str, pl.DataFrame]]] = [
    ("reco_accuracy@5", {"qrels": _QRELS, "interactions": _CATALOGUE}),
    ("mcc@5", {"qrels": _QRELS, "interactions": _CATALOGUE}),
    ("serendipity(kind='kotkov')@5", {"qrels": _QRELS, "interactions": _HISTORY}),
    ("pop_rsp@5", {"qrels": _QRELS, "interactions": _HISTORY}),
    ("epc@5", {"qrels": _QRELS, "interactions": _HISTORY}),
    ("item_mad@5", {"qrels": _QRELS, "groups": _GROUPS}),
    ("user_mad@5", {"qrels": _QRELS, "user_groups": _USERS}),
    ("novelty@5", {"interactions": _EVERY_ITEM}),
    ("surprisal@5", {"interactions": _EVERY_ITEM}),
    ("intra_list_diversity@5", {"item_features": _FEATURES}),
    ("ps_ndcg@5", {"qrels": _QRELS, "propensities": _PROPENSITIES}),
    ("ee_disparity", {"qrels": _QRELS, "groups": _GROUPS}),
    ("awrf_ndcg", {"qrels": _QRELS, "groups": _GROUPS}),
    ("rkl", {"groups": _GROUPS}),
]


def _variants(tables: dict[str, pl.DataFrame]) -> list[tuple[str, str, pl.DataFrame]]:
    out = []
    for name, frame in {"run": _RUN, **tables}.items():
        for column in frame.columns:
            out.append((name, column, frame.rename({column: f"{column}_x"})))
            out.append((name, column, frame.drop(column)))
    return out


@pytest.mark.parametrize(("metric", "tables"), SIDE_TABLES, ids=[m for m, _ in SIDE_TABLES])
def test_a_missing_column_of_any_table_is_named(
    evaluate: Evaluate, metric: str, tables: dict[str, pl.DataFrame]
) -> None:
    evaluate(_RUN, [metric], **tables)  # the clean tables are accepted
    for name, column, frame in _variants(tables):
        given = {**tables, name: frame} if name != "run" else tables
        if (metric, name, column) in UNREAD:
            evaluate(frame if name == "run" else _RUN, [metric], **given)
            continue
        with pytest.raises(IrmError):  # polars' own error (or none) would fail here
            evaluate(frame if name == "run" else _RUN, [metric], **given)


def test_the_interactions_ids_are_named_with_the_fix() -> None:
    # an interactions table with other id names is refused by name, not by polars:
    # RecTools' accuracy reads the catalogue's size from its items, Kotkov's serendipity
    # and Elliot's metrics each user's history too
    history = _HISTORY.rename({"query_id": "user_id", "doc_id": "item_id"})
    found = "not found in the interactions (its columns: 'user_id', 'item_id'); rename its"
    messages = {
        "reco_accuracy@5": f"column 'doc_id' {found} id columns as in the run: 'doc_id'",
        "serendipity(kind='kotkov')@5": (
            f"column 'query_id' {found} id columns as in the run: 'query_id', 'doc_id'"
        ),
        "pop_rsp@5": f"column 'query_id' {found} id columns as in the run: 'query_id', 'doc_id'",
    }
    for metric, message in messages.items():
        with pytest.raises(ColumnNotFoundError) as info:
            irm.evaluate(_RUN, [metric], qrels=_QRELS, interactions=history)
        assert str(info.value) == message, metric


def test_integer_scores_are_scores_not_ranks(evaluate: Evaluate) -> None:
    # an integer score column may hold 0 and ties (broken by the document id, descending,
    # as trec_eval does): the rank checks are the rank column's alone
    run = _RUN.drop("rank").with_columns(score=pl.Series([0, 0, 1, 0, 0]))
    for metric, tables in JUDGED_ROUTES[:4]:
        out = evaluate(run, [metric], qrels=_QRELS, **tables)
        assert out.height == 1, metric


def test_the_messages_name_the_columns_as_given(evaluate: Evaluate) -> None:
    # score= names the run's score column: the routes' messages name it, not 'score'
    run = _RUN.drop("rank").with_columns(s=pl.Series([3.0, None, 1.0, 2.0, 1.0]))
    message = (
        "column 's' of the run has 1 null value(s) in query 'q1'; every document needs a "
        "score to be ranked: fill or drop them, e.g. .drop_nulls('s')"
    )
    for metric, tables in [("map", {}), *JUDGED_ROUTES[:4]]:
        assert _raised(evaluate, run, metric, qrels=_QRELS, score="s", **tables) == (
            InvalidValueError,
            message,
        ), metric
