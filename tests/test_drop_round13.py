"""One machine's refusal of a ``by=`` key of the run alone offers ``unretrieved='drop'``
only where the call takes it, round 13.

With ``systems=``, the ranking metrics beside an exposure measure that reads the
judgments (``ee_loss``, ``awrf``...) refused a judged query some group did not retrieve
and offered ``unretrieved='drop'``, which that call then refuses (``systems=`` beside
such a measure: ``door.evaluate._check_drop_beside_exposure``). The ranking metrics'
plan sees its own metrics alone; the door now tells it, in the options
(``EvalOptions.offers_drop``), that the call refuses ``'drop'``, and the message names
the other fixes (``queries=``, ``systems=``), which work there, as the engines' refusal
does (tests/test_by_messages_round12.py).
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, QuerySetError
from polars_irmetrics.ground.options import EvalOptions

from .conftest import Evaluate
from .helpers import engine_io

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

# systems A and B both list q1 under segment 's'; q2 under 't' (A); q3 judged, retrieved
# by no segment
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q1"],
        "doc_id": ["a", "b", "c", "a"],
        "score": [2.0, 1.0, 1.0, 1.0],
        "segment": ["s", "s", "t", "s"],
        "system": ["A", "A", "A", "B"],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "c", "d"], "relevance": [1, 1, 1]}
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
# every judged query in a segment: the fix queries= offers
QUERIES = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "segment": ["s", "t", "t"]})

DROP = "; or pass unretrieved='drop' to score each group on the queries it retrieved"


def _one_machine(*, drop: bool) -> str:
    """One machine's refusal of the three judged queries some segment lacks."""
    return (
        "by key 'segment' is in the run but not in the judgments: the judgments do not say "
        "which 'segment' each judged query belongs to, so 3 judged queries that some of "
        "the 2 groups did not retrieve cannot be placed (e.g. query 'q1': the run lists it "
        "under segment='s', and the judgments cannot tell whether it belongs to the other "
        "groups too). If 'segment' is an attribute of the query (day, market, segment), "
        "give each judged query its 'segment': with queries= (a table of query ids and "
        "'segment', e.g. queries=run.select('query_id', 'segment').unique()), or in a "
        "'segment' column of the judgments; if it names systems or runs (each scored on "
        "every judged query), pass systems='segment' instead of by=" + (DROP if drop else "")
    )


# (id, metrics, whether groups= is given, whether unretrieved='drop' is offered)
CASES: list[tuple[str, list[str], bool, bool]] = [
    ("map ee_loss", ["map", "ee_loss"], False, False),
    ("ee_loss map", ["ee_loss", "map"], False, False),
    ("ndcg ee_disparity", ["ndcg@2", "ee_disparity"], False, False),
    ("map ee_relevance", ["map", "ee_relevance(browsing='rbp')"], False, False),
    ("map awrf", ["map", "awrf"], True, False),
    ("recall awrf_ndcg", ["recall@2", "awrf_ndcg"], True, False),
    ("map ee_loss rnd", ["map", "ee_loss", "rnd"], True, False),
    # rnd reads no judgments: the call takes unretrieved='drop'
    ("map rnd", ["map", "rnd"], True, True),
    ("map", ["map"], False, True),
]


def _tables(grouped: bool) -> dict[str, Any]:
    return {"qrels": QRELS, **({"groups": GROUPS} if grouped else {})}


@pytest.mark.parametrize(
    ("metrics", "grouped", "drop"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per query"])
def test_one_machine_offers_unretrieved_drop_only_where_the_call_takes_it(
    evaluate: Evaluate, metrics: list[str], grouped: bool, drop: bool, per_query: bool
) -> None:
    message = _one_machine(drop=drop)
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        evaluate(
            RUN,
            metrics,
            by="segment",
            systems="system",
            per_query=per_query,
            **_tables(grouped),
        )


@pytest.mark.parametrize(
    ("metrics", "grouped", "drop"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
def test_the_fixes_offered_work(
    evaluate: Evaluate, metrics: list[str], grouped: bool, drop: bool
) -> None:
    tables = _tables(grouped)
    # queries= placing every judged query, and the key named as systems
    placed = evaluate(RUN, metrics, by="segment", systems="system", queries=QUERIES, **tables)
    assert placed.height == 4  # A s, A t, B s, B t
    systems = evaluate(RUN, metrics, systems=["system", "segment"], **tables)
    assert systems.height == 3  # A s, A t, B s
    if drop:
        dropped = evaluate(
            RUN, metrics, by="segment", systems="system", unretrieved="drop", **tables
        )
        assert dropped.height == 3
    else:  # not offered: the call refuses it
        with pytest.raises(InvalidValueError, match=r"^unretrieved='drop' is read by "):
            evaluate(RUN, metrics, by="segment", systems="system", unretrieved="drop", **tables)


def test_without_systems_unretrieved_drop_is_still_offered_and_works(
    evaluate: Evaluate,
) -> None:
    run = RUN.filter(pl.col("system") == "A").drop("system")
    message = _one_machine(drop=True)
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        evaluate(run, ["map", "ee_loss"], by="segment", qrels=QRELS)
    dropped = evaluate(run, ["map", "ee_loss"], by="segment", qrels=QRELS, unretrieved="drop")
    assert dropped.get_column("segment").to_list() == ["s", "t"]


def test_offers_drop_is_no_keyword_and_never_given() -> None:
    with pytest.raises(InvalidValueError, match=r"^unknown option offers_drop=\.\.\.; the "):
        irm.evaluate(RUN, ["map"], qrels=QRELS, offers_drop=False)
    with pytest.raises(InvalidValueError) as refused:
        irm.evaluate(RUN, ["map"], qrels=QRELS, offers_drop=False)
    assert "offers_drop" not in str(refused.value).split("; the options are ")[1]
    assert EvalOptions().replace(offers_drop=False).given() == ()


def _engines(*, drop: bool) -> str:
    """The engines' refusal of a ``by`` key of the run alone."""
    return (
        "by key 'segment' is in the run but not in the judgments: on Spark and Dask each "
        "part sees its own queries, so a judged query that some 'segment' group did not "
        "retrieve cannot be placed. If it names systems or runs (each scored on every "
        "judged query), pass systems='segment' instead of by=; if it is an attribute of "
        "the query (day, market, segment), give each judged query its 'segment': with "
        "queries= (a table of query ids and 'segment'), or in a 'segment' column of the "
        "judgments" + (DROP if drop else "")
    )


ENGINE_CASES = [CASES[0], CASES[4], CASES[7]]


# the engines, with systems= too, offer it where one machine does
@pytest.mark.parametrize(
    ("metrics", "grouped", "drop"),
    [case[1:] for case in ENGINE_CASES],
    ids=[c[0] for c in ENGINE_CASES],
)
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_agree_with_one_machine(
    engine: str, request: pytest.FixtureRequest, metrics: list[str], grouped: bool, drop: bool
) -> None:
    evaluate, frame, _ = engine_io(engine, request)
    tables = {k: frame(v) for k, v in _tables(grouped).items()}
    message = _engines(drop=drop)
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        evaluate(frame(RUN), metrics, by="segment", systems="system", **tables)
