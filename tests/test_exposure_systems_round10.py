"""The exposure measures with ``systems=`` (round 10).

The exposure route checked the judgments per query alone: judgments per system (the
``system`` column, a system's judgments serving that system only, as
``docs/guides/fairness.md`` says) were refused as documents judged twice ("query 'q1'
judges 2 document(s) more than once"), on one machine; the engines, which hand each
part's plan judgments per system, refused every call of ``systems=``. The values are
each system's run evaluated alone with its judgments. A real duplicate's fix keeps the
system column.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError

from .helpers import engine_io

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 4 + ["q2"] * 4,
        "doc_id": ["a", "b", "a", "b"] * 2,
        "score": [2.0, 1.0, 1.0, 2.0, 1.0, 2.0, 2.0, 1.0],
        "system": ["S", "S", "T", "T"] * 2,
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "a", "b"],
        "relevance": [1, 0, 1, 1],
    }
)
#: each system's own judgments: T's judge b relevant in q1 too
PER_SYSTEM = pl.concat(
    [
        QRELS.with_columns(system=pl.lit("S")),
        QRELS.with_columns(system=pl.lit("T"), relevance=pl.lit(1, pl.Int64)),
    ]
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b"], "group": ["g1", "g2"]})
METRICS = ["ee_loss", "ee_disparity", "awrf"]


def _alone(qrels: pl.DataFrame, metrics: list[str], **options: Any) -> pl.DataFrame:
    """Each system's values from its run (and its judgments) alone, stacked."""
    parts = []
    for name in ("S", "T"):
        judged = qrels.filter(system=name).drop("system") if "system" in qrels.columns else qrels
        run = RUN.filter(system=name).drop("system")
        out = irm.evaluate(run, metrics, qrels=judged, groups=GROUPS, **options)
        assert isinstance(out, pl.DataFrame)
        parts.append(out.select(pl.lit(name).alias("system"), pl.all()))
    return pl.concat(parts)


@pytest.mark.parametrize("qrels", [QRELS, PER_SYSTEM], ids=["shared", "per-system"])
@pytest.mark.parametrize("per_query", [False, True])
def test_systems_are_each_run_alone(qrels: pl.DataFrame, per_query: bool) -> None:
    out = irm.evaluate(
        RUN, METRICS, qrels=qrels, groups=GROUPS, systems="system", per_query=per_query
    )
    assert isinstance(out, pl.DataFrame)
    expected = _alone(qrels, METRICS, per_query=per_query)
    assert out.equals(expected)
    beside = irm.evaluate(RUN, ["ndcg@2", "ee_loss"], qrels=qrels, groups=GROUPS, systems="system")
    assert isinstance(beside, pl.DataFrame)
    assert beside.select("system", "ee_loss").equals(
        _alone(qrels, ["ee_loss"]).select("system", "ee_loss")
    )


def test_a_duplicate_judgment_of_a_system_keeps_the_system_in_the_fix() -> None:
    doubled = pl.concat([PER_SYSTEM, PER_SYSTEM.tail(1)])
    # the query named with its system by both (round 33: the exposure measures named
    # 'q2' alone)
    message = (
        "column 'doc_id' of the judgments: query 'q2' (system='T') has 1 repeated "
        "judgment(s) (each of a document judged before in the query); keep one judgment "
        "per document, e.g. .unique(['system', 'query_id', 'doc_id'])"
    )
    with pytest.raises(DuplicateError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, ["ee_loss"], qrels=doubled, groups=GROUPS, systems="system")
    with pytest.raises(DuplicateError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, ["ndcg@2"], qrels=doubled, systems="system")


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_systems_on_the_engines(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, frame, back = engine_io(engine, request)
    qrels = PER_SYSTEM if engine == "spark" else QRELS
    got = back(
        evaluate(frame(RUN), METRICS, qrels=frame(qrels), groups=frame(GROUPS), systems="system")
    ).sort("system")
    expected = _alone(qrels, METRICS)
    assert got.columns == expected.columns
    assert got.cast(expected.schema).equals(expected)
