"""A run that misses some judged queries because their ids are spelt apart (round 29).

A run whose query ids line up with the judgments' but for a few (``'q2 '`` beside the
judged ``'q2'``) scored those judged queries 0 (or left them out) in silence: the
coverage warning spoke only where a run missed most judged queries or retrieved no
judged document. A run that misses any judged query is warned of now where the query
hint finds a query id of the run that matches a missed judged one once its spelling is
ignored; a run of some of the topics (no id spelt apart) is still said nothing of.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning
from tests.helpers import engine_io
from tests.test_engines_round13 import ENGINES

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2 ", "q2 ", "q3", "q3", "q4", "q4"],
        "doc_id": ["a", "b"] * 4,
        "rank": [1, 2] * 4,
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3", "q4"], "doc_id": ["a", "a", "b", "a"], "relevance": 1}
)
#: the run's queries but q2 ', which the judgments spell 'q2'
TOPICS = RUN.filter(pl.col("query_id") != "q2 ")

TALLY = (
    "the run misses 1 of the 4 judged queries (3 of 4 judged documents, in 3 of 4 judged "
    "queries; it lists 3 of the 4 judged queries): the 1 it misses "
)
HINT = (
    ". 1 query id(s) of the run match a judged query only once the spaces around the ids "
    "are ignored (run 'q2 ', judgments 'q2'): ids are compared exactly, as trec_eval "
    "compares them; give both the same spelling, e.g. pl.col('query_id').str.strip_chars() "
    "on the run and the judgments."
)
ZERO = (
    "each score as an empty ranking does (unretrieved='zero', as trec_eval -c: 0 in ndcg, "
    "map, precision, recall and the like)"
)
DROP = "are left out (unretrieved='drop')"


def _said(call: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    return out, [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "options", "said", "value"),
    [
        (RUN, {}, [TALLY + ZERO + HINT], (1 + 0 + 0.63092975357145743 + 1) / 4),
        (RUN, {"unretrieved": "drop"}, [TALLY + DROP + HINT], (1 + 0.63092975357145743 + 1) / 3),
        # a run of some topics: no id spelt apart, nothing said
        (TOPICS, {}, [], (1 + 0 + 0.63092975357145743 + 1) / 4),
    ],
    ids=["zero", "drop", "some topics"],
)
def test_a_judged_query_spelt_apart_is_said(
    run: pl.DataFrame, options: dict[str, Any], said: list[str], value: float, lazy: bool
) -> None:
    def call() -> pl.DataFrame:
        if lazy:
            out = irm.evaluate(run.lazy(), ["ndcg@2"], qrels=QRELS.lazy(), **options)
            return out.collect()
        return irm.evaluate(run, ["ndcg@2"], qrels=QRELS, **options)

    out, given = _said(call)
    assert given == said
    assert out["ndcg@2"].item() == pytest.approx(value, rel=1e-15)


def test_the_warning_names_the_run_of_several() -> None:
    runs = pl.concat(
        [RUN.with_columns(system=pl.lit("a")), TOPICS.with_columns(system=pl.lit("b"))]
    )
    _, given = _said(lambda: irm.evaluate(runs, ["ndcg@2"], qrels=QRELS, systems="system"))
    # the hint reads every run's ids: 'a' spells q2 apart; 'b' misses it too, and is
    # said with the same hint (one hint for the runs' ids together)
    assert [re.sub(r"^system '(\w)'.*", r"\1", text) for text in given] == ["a", "b"]


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("engine", ENGINES)
def test_engines_say_it_as_one_machine(
    engine: str, partitions: int, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    expected = _said(lambda: irm.evaluate(RUN, ["ndcg@2"], qrels=QRELS))
    got = _said(
        lambda: back(
            evaluate(to_engine(RUN), ["ndcg@2"], qrels=to_engine(QRELS), partitions=partitions)
        )
    )
    assert got[1] == expected[1]
    assert got[0].equals(expected[0])
