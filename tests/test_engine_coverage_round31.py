"""Spark and Dask give one machine's coverage words where ids do not line up (round 31).

Two routes that read the judgments beside their own rows warned on one machine only:

* the exposure measures with ``systems=``: each engine part handed no coverage at all, so
  a system that retrieves no judged document (or one whose documents are spelt apart
  from the judged ones in a query) was scored 0 in silence; the parts' tallies are now
  added up per system on the driver, each system counted on every judged query (the
  parts' judged queries summed: a system absent from some parts is not under-counted);
* the propensity-scored metrics: the engines warned of a run that retrieves no judged
  document, not of a query whose documents are spelt apart (``'D1'``, ``'D2'`` beside the
  judged ``'d1'``, ``'d2'``); each part now gives its matches, added up where the result
  is finished (Spark: on the driver).

Each case runs at 1 and 4 partitions (at 4, ``q2``, the query spelt apart, has a part of
its own on both engines), and compares the words and the values with one machine's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io, warned
from tests.test_engines_round13 import ENGINES
from tests.test_ids_spelt_round31 import PROPENSITIES, QRELS, SPELT, SYSTEMS

#: system 'a' spelt apart in q2 (the others fine), 'b' shallow there, 'c' every id
#: upper case and only q1 and q3 listed (absent from the parts of q2 and q4)
RUN = pl.concat(
    [
        SYSTEMS,
        pl.DataFrame(
            {
                "query_id": ["q1", "q1", "q3", "q3"],
                "doc_id": ["A", "B", "A", "C"],
                "rank": [1, 2, 1, 2],
                "system": "c",
            }
        ),
    ]
)
#: the partitions: one, and four, where q2 (spelt apart) has a part of its own on both
#: engines (a part where the run, or system 'a', retrieves no judged document at all)
PARTITIONS = (1, 4)
Call = Callable[[Callable[[pl.DataFrame], Any], Any], Any]

CASES: list[tuple[str, Call, list[str]]] = [
    (
        "exposure by system",
        lambda to, evaluate: evaluate(
            to(RUN), ["ee_relevance", "ee_loss"], qrels=to(QRELS), systems="system"
        ),
        ["system", "query_id"],
    ),
    (
        "propensities",
        lambda to, evaluate: evaluate(
            to(SPELT), ["ps_ndcg@2"], qrels=to(QRELS), propensities=to(PROPENSITIES)
        ),
        ["query_id"],
    ),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("call", "keys"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_engines_warn_as_one_machine(
    call: Call, keys: list[str], engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    expected, said = warned(lambda: call(lambda f: f, partial(irm.evaluate, per_query=True)))
    assert said
    for partitions in PARTITIONS:
        on = partial(evaluate, per_query=True, partitions=partitions)
        got, given = warned(lambda on=on: back(call(to_engine, on)))
        assert given == said, partitions
        assert got.sort(keys).equals(expected.sort(keys)), partitions
