"""Where ``irm.evaluate`` splits metrics across routes (round 29).

* A refused input warns of nothing: a history with a null id beside ``mcc@k`` or
  ``epc@k`` and judgments the run never retrieves was refused after the ranking plan's
  coverage warning (one machine, and ``mcc@k`` on Spark and Dask); the exposure measures
  with a ``queries=`` that lacks a query's ``by`` key were refused after groups=' and
  the values' warnings. The refusals now ride inside the plans, before their warnings.
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


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]


@pytest.mark.parametrize(
    ("case", "metrics", "given", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_a_refused_input_warns_of_nothing(
    case: str, metrics: list[str], given: dict[str, Any], message: str
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ERRORS[message], match=f"^{re.escape(message)}$"):
            irm.evaluate(RUN, metrics, **given)
    assert _said(caught) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_refused_history_warns_of_nothing_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """mcc@k's catalogue travels alone to the engines' ranking parts: the history's null
    ids were counted and refused after the parts' coverage warning."""
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(NULL_IDS)}$"):
            back(
                evaluate(
                    to_engine(RUN),
                    ["mcc@2"],
                    qrels=to_engine(UNRETRIEVED),
                    interactions=to_engine(NULL_HISTORY),
                )
            )
    assert _said(caught) == []
