"""The refusals of a ``by=`` key of the run alone name the fixes that work, round 12.

1. On Spark and Dask such a key is refused up front (``engines._partition.prepare``),
   and the message offered ``unretrieved='drop'`` whatever the metrics: the exposure
   measures alone refuse it (an option none of them reads), and beside the ranking
   metrics the engines refuse it beside an exposure measure that reads the judgments
   (``engines._sides.two_calls``). It is now offered where it works, as one machine
   offers it (``exposure.plan.refuse_unplaced``); beside ``rnd`` (which does not read
   the judgments) it works as on one machine: the exposure measures' call of the two no
   longer refuses ``unretrieved=``, which the ranking metrics read.
2. One machine's refusal (``ground.validate.raise_unplaced``) gave as its example the
   groups the run lists a judged query under, one row per system with ``systems=``:
   ``segment='s', segment='s'``. Each group is now named once.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import QuerySetError

from .conftest import Evaluate
from .helpers import engine_io

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

# q1 under segment 's', q2 under 't', q3 judged and retrieved by no segment
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["a", "b", "c"],
        "score": [2.0, 1.0, 1.0],
        "segment": ["s", "s", "t"],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "c", "d"], "relevance": [1, 1, 1]}
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})

DROP = "; or pass unretrieved='drop' to score each group on the queries it retrieved"


def _engines(drop: bool) -> str:
    """The engines' refusal of a ``by`` key of the run alone (``drop``: with
    ``unretrieved='drop'``, where it works)."""
    return (
        "by key 'segment' is in the run but not in the judgments: on Spark and Dask each "
        "part sees its own queries, so a judged query that some 'segment' group did not "
        "retrieve cannot be placed. If it names systems or runs (each scored on every "
        "judged query), pass systems='segment' instead of by=; if it is an attribute of "
        "the query (day, market, segment), give each judged query its 'segment': with "
        "queries= (a table of query ids and 'segment'), or in a 'segment' column of the "
        "judgments" + (DROP if drop else "")
    )


# (metrics, whether groups= is given, whether unretrieved='drop' is offered)
ENGINE_CASES: list[tuple[list[str], bool, bool]] = [
    (["ee_loss"], False, False),
    (["ee_disparity"], False, False),
    (["ee_relevance(browsing='rbp')"], False, False),
    # awrf and awrf_ndcg alone score no query a group did not retrieve: one machine's
    # values on the engines (tests/test_by_paths_round12.py)
    (["ee_loss", "rkl"], True, False),
    (["rrd", "ee_loss"], True, False),
    # the engines refuse unretrieved='drop' beside a measure that reads the judgments
    (["map", "ee_loss"], False, False),
    (["awrf", "ndcg@2"], True, False),
    (["map"], False, True),
    (["map", "rnd"], True, True),
]


@pytest.mark.parametrize(
    ("metrics", "grouped", "drop"),
    ENGINE_CASES,
    ids=[" ".join(case[0]) for case in ENGINE_CASES],
)
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_offer_unretrieved_drop_only_where_it_works(
    engine: str, request: pytest.FixtureRequest, metrics: list[str], grouped: bool, drop: bool
) -> None:
    evaluate, frame, _ = engine_io(engine, request)
    tables: dict[str, Any] = {"qrels": frame(QRELS)}
    if grouped:
        tables["groups"] = frame(GROUPS)
    message = _engines(drop)
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        evaluate(frame(RUN), metrics, by="segment", **tables)


# the fix offered works: the same values as one machine
@pytest.mark.parametrize(
    ("metrics", "grouped"),
    [(["map"], False), (["map", "rnd"], True)],
    ids=["map", "map rnd"],
)
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_unretrieved_drop_where_offered_is_one_machines(
    engine: str, request: pytest.FixtureRequest, metrics: list[str], grouped: bool
) -> None:
    evaluate, frame, back = engine_io(engine, request)
    options: dict[str, Any] = {"by": "segment", "unretrieved": "drop"}
    groups = {"groups": GROUPS} if grouped else {}
    expected = irm.evaluate(RUN, metrics, qrels=QRELS, **groups, **options)
    got = back(
        evaluate(
            frame(RUN),
            metrics,
            qrels=frame(QRELS),
            **{k: frame(v) for k, v in groups.items()},
            **options,
        )
    ).sort("segment")
    assert got.columns == expected.columns
    assert got.cast(expected.schema).equals(expected, null_equal=True)


def _one_machine(example: str, *, drop: bool) -> str:
    """One machine's refusal of the three judged queries some segment lacks."""
    return (
        "by key 'segment' is in the run but not in the judgments: the judgments do not say "
        "which 'segment' each judged query belongs to, so 3 judged queries that some of "
        "the 2 groups did not retrieve cannot be placed (e.g. query 'q1': the run lists it "
        f"under {example}, and the judgments cannot tell whether it belongs to the other "
        "groups too). If 'segment' is an attribute of the query (day, market, segment), "
        "give each judged query its 'segment': with queries= (a table of query ids and "
        "'segment', e.g. queries=run.select('query_id', 'segment').unique()), or in a "
        "'segment' column of the judgments; if it names systems or runs (each scored on "
        "every judged query), pass systems='segment' instead of by=" + (DROP if drop else "")
    )


# systems A and B both list q1 under segment 's'
SAME = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q1"],
        "doc_id": ["a", "b", "c", "a"],
        "score": [2.0, 1.0, 1.0, 1.0],
        "segment": ["s", "s", "t", "s"],
        "system": ["A", "A", "A", "B"],
    }
)
# A lists q1 under 's', B under 't'
APART = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q1"],
        "doc_id": ["a", "c", "a"],
        "score": [2.0, 1.0, 1.0],
        "segment": ["s", "t", "t"],
        "system": ["A", "A", "B"],
    }
)

# (id, run, metrics, message)
ONE_MACHINE: list[tuple[str, pl.DataFrame, list[str], str]] = [
    ("one group, map", SAME, ["map"], _one_machine("segment='s'", drop=True)),
    ("one group, ee_loss", SAME, ["ee_loss"], _one_machine("segment='s'", drop=False)),
    ("two groups, map", APART, ["map"], _one_machine("segment='s', segment='t'", drop=True)),
    (
        "two groups, ee_loss",
        APART,
        ["ee_loss"],
        _one_machine("segment='s', segment='t'", drop=False),
    ),
    ("no systems=", RUN, ["map"], _one_machine("segment='s'", drop=True)),
]


@pytest.mark.parametrize(
    ("run", "metrics", "message"),
    [case[1:] for case in ONE_MACHINE],
    ids=[case[0] for case in ONE_MACHINE],
)
def test_one_machine_names_each_group_once(
    evaluate: Evaluate, run: pl.DataFrame, metrics: list[str], message: str
) -> None:
    options: dict[str, Any] = {"by": "segment"}
    if "system" in run.columns:
        options["systems"] = "system"
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        evaluate(run, metrics, qrels=QRELS, **options)
