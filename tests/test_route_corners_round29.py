"""Where ``irm.evaluate`` splits metrics across routes (round 29).

* A refused input warns of nothing: a history with a null id beside ``mcc@k`` or
  ``epc@k`` and judgments the run never retrieves was refused after the ranking plan's
  coverage warning (one machine, and ``mcc@k`` on Spark and Dask); the exposure measures
  with a ``queries=`` that lacks a query's ``by`` key were refused after groups=' and
  the values' warnings; the beyond-accuracy metrics' history after the item features'
  warning, or an empty run's (which Spark and Dask accepted). The refusals now ride
  inside the plans, before their warnings.
* A ``by`` key that ``queries=`` places, beside the beyond-accuracy metrics (which read
  their keys from the run's own columns and refuse ``queries=`` alone) and the ranking
  metrics or the exposure measures (which read it from ``queries=``): one machine raised
  a missing column ('day' not found in the run) or refused the ``queries=`` that awrf
  reads; Spark and Dask sent the caller to two calls. Every path now refuses it in one
  message that names the fix, whose call gives each part's values asked alone.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io
from tests.test_engines_round13 import ENGINES

RUN = pl.DataFrame(
    {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "y"], "rank": [1, 2, 1, 2]}
)
UNRETRIEVED = pl.DataFrame({"query_id": ["a", "b"], "doc_id": ["z", "w"], "relevance": [1, 1]})
QRELS = pl.DataFrame({"query_id": ["a", "b"], "doc_id": ["x", "y"], "relevance": [1, 1]})
NULL_HISTORY = pl.DataFrame({"query_id": ["a", "b", None], "doc_id": ["x", None, "y"]})
HISTORY = pl.DataFrame({"query_id": ["a", "b", "c"], "doc_id": ["x", "y", "x"]})
QUERIES = pl.DataFrame({"query_id": ["a", "b"], "day": [1, 2]})
LACKING = pl.DataFrame({"query_id": ["a"], "day": [1]})  # no row for query 'b'
NO_FEATURES = pl.DataFrame({"doc_id": ["q"], "features": [[1.0, 0.0]]})  # none of the run's
GROUPS = pl.DataFrame({"doc_id": ["x", "y"], "group": ["g1", "g2"]})
FEW_GROUPS = pl.DataFrame({"doc_id": ["x", "q"], "group": ["g1", "g2"]})

NULL_IDS = (
    "the interactions have 2 row(s) with a null 'query_id' or 'doc_id': each row is one "
    "user's interaction with one item; fill or drop them, e.g. "
    "interactions.drop_nulls(['query_id', 'doc_id'])"
)
NO_DAY = (
    "query 'b' has no 'day' in queries=: give every query of the run and the judgments a "
    "row there (1 have none)"
)
REFUSED: list[tuple[str, list[str], dict[str, Any], str]] = [  # the class: ERRORS
    ("mcc", ["mcc@2"], {"qrels": UNRETRIEVED, "interactions": NULL_HISTORY}, NULL_IDS),
    ("epc", ["epc@2"], {"qrels": UNRETRIEVED, "interactions": NULL_HISTORY}, NULL_IDS),
    (
        "mcc, novelty",
        ["novelty@2", "mcc@2"],
        {"qrels": UNRETRIEVED, "interactions": NULL_HISTORY},
        NULL_IDS,
    ),
    (
        "features, history",
        ["intra_list_diversity@2", "serendipity@2"],
        {
            "interactions": NULL_HISTORY,
            "item_features": NO_FEATURES,
            "unseen_items": "recommenders",  # scored, and warned of
        },
        NULL_IDS,
    ),
    ("empty run", ["novelty@2"], {"interactions": NULL_HISTORY, "run": RUN.clear()}, NULL_IDS),
    ("rnd", ["rnd"], {"groups": FEW_GROUPS, "queries": LACKING, "by": ["day"]}, NO_DAY),
    (
        "awrf",
        ["awrf"],
        {"qrels": QRELS, "groups": FEW_GROUPS, "queries": LACKING, "by": ["day"]},
        NO_DAY,
    ),
    (
        "awrf in buckets",
        ["awrf", "rnd"],
        {"qrels": QRELS, "groups": FEW_GROUPS, "queries": LACKING, "by": ["day"], "buckets": 2},
        NO_DAY,
    ),
]


#: The class of each refusal (a query queries= lacks is one of the query set).
ERRORS: dict[str, type[Exception]] = {NULL_IDS: irm.InvalidValueError, NO_DAY: irm.QuerySetError}


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("case", "metrics", "given", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_a_refused_input_warns_of_nothing(
    case: str, metrics: list[str], given: dict[str, Any], message: str, lazy: bool
) -> None:
    """On a LazyFrame the refusal and the warnings come at ``collect()``."""
    tables = {
        name: table.lazy() if lazy and isinstance(table, pl.DataFrame) else table
        for name, table in given.items()
    }
    run = tables.pop("run", RUN.lazy() if lazy else RUN)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ERRORS[message], match=f"^{re.escape(message)}$"):
            _collected(irm.evaluate(run, metrics, **tables))
    assert _said(caught) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_refused_history_warns_of_nothing_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """mcc@k's catalogue travels alone to the engines' ranking parts: the history's null
    ids were counted and refused after the parts' coverage warning; an empty run's was
    accepted, with the warning of a table of no row (one machine refuses it)."""
    evaluate, to_engine, back = engine_io(engine, request)
    cases: list[tuple[pl.DataFrame, list[str], dict[str, pl.DataFrame]]] = [
        (RUN, ["mcc@2"], {"qrels": UNRETRIEVED, "interactions": NULL_HISTORY}),
        (RUN.clear(), ["novelty@2"], {"interactions": NULL_HISTORY}),
    ]
    for run, metrics, tables in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(NULL_IDS)}$"):
                back(
                    evaluate(
                        to_engine(run), metrics, **{k: to_engine(v) for k, v in tables.items()}
                    )
                )
        assert _said(caught) == [], metrics


def _placed(readers: str, verb: str) -> str:
    return (
        f"by='day' is a column of queries=, not of the run: {readers} {verb} the by= keys "
        "from queries=, and the beyond-accuracy metrics ('surprisal@2') do not (they read "
        "them from the recommendation table's own columns), so one call cannot group both "
        "by it: put the key in the run and the judgments first, e.g. run.join(queries, "
        "on='query_id', how='left') (and qrels= alike), and drop queries=, or evaluate "
        "'surprisal@2' in a separate call without by='day'"
    )


MIXED: list[tuple[list[str], dict[str, Any], str]] = [
    (["surprisal@2", "ndcg@2"], {}, _placed("metric 'ndcg@2'", "reads")),
    (["surprisal@2", "awrf"], {"groups": GROUPS}, _placed("metric 'awrf'", "reads")),
    (
        ["surprisal@2", "awrf", "ndcg@2"],
        {"groups": GROUPS},
        _placed("metrics 'awrf', 'ndcg@2'", "read"),
    ),
]


@pytest.mark.parametrize(
    ("metrics", "given", "message"), MIXED, ids=[", ".join(c[0]) for c in MIXED]
)
def test_a_key_queries_places_beside_beyond_accuracy_is_refused(
    metrics: list[str], given: dict[str, Any], message: str
) -> None:
    asked = {"interactions": HISTORY, "qrels": QRELS, "queries": QUERIES, "by": ["day"], **given}
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, metrics, **asked)
    # each part alone: the beyond-accuracy metric refuses queries=, the others read it
    with pytest.raises(irm.InvalidValueError, match=r"^queries= is not read by the beyond"):
        irm.evaluate(RUN, ["surprisal@2"], interactions=HISTORY, queries=QUERIES, by=["day"])
    others = [m for m in metrics if m != "surprisal@2"]
    alone = irm.evaluate(RUN, others, qrels=QRELS, queries=QUERIES, by=["day"], **given)
    # the fix the message names: the key in the run and the judgments, no queries=
    keyed = {"qrels": QRELS.join(QUERIES, on="query_id", how="left")}
    fixed = irm.evaluate(
        RUN.join(QUERIES, on="query_id", how="left"),
        metrics,
        interactions=HISTORY,
        by=["day"],
        **keyed,
        **given,
    )
    beyond = irm.evaluate(
        RUN.join(QUERIES, on="query_id", how="left"),
        ["surprisal@2"],
        interactions=HISTORY,
        by=["day"],
    )
    expected = alone.join(beyond, on="day", how="full", coalesce=True)
    assert fixed.select(expected.columns).equals(expected)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_engines_refuse_a_placed_key_in_the_same_words(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """Spark and Dask refused the call as two tables' metrics mixed ('evaluate them in
    two calls'), where the beyond-accuracy call would refuse queries= in turn."""
    evaluate, to_engine, back = engine_io(engine, request)
    for metrics, given, message in MIXED:
        tables = {"interactions": HISTORY, "qrels": QRELS, "queries": QUERIES, **given}
        with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
            back(
                evaluate(
                    to_engine(RUN),
                    metrics,
                    **{k: to_engine(v) for k, v in tables.items()},
                    by=["day"],
                )
            )
