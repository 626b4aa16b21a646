"""Routes that read the judgments beside their rows: a run spelt apart in a query (round 31).

Round 30 warned of a run whose document ids match the judged ones of a query only once
their spelling is ignored (``'D1'``, ``'D2'`` in the run, ``'d1'``, ``'d2'`` judged, in
``q2`` alone), for the ranking metrics; the exposure measures asked alone scored that
query 0 (ee_relevance) in silence. They give the same warning now (their own words for
what such a query scores), on one machine, in buckets and on the engines; a shallow run
(no document spelt apart) is still said nothing of.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io, warned
from tests.test_engines_round13 import ENGINES

QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q2", "q3", "q4"],
        "doc_id": ["a", "d1", "d2", "c", "a"],
        "relevance": 1,
    }
)


def _run(q2: list[str]) -> pl.DataFrame:
    """Four queries of two documents each, ``q2``'s given."""
    return pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"],
            "doc_id": ["a", "b", *q2, "a", "c", "b", "a"],
            "rank": [1, 2] * 4,
        }
    )


SPELT, SHALLOW = _run(["D1", "D2"]), _run(["x", "y"])
SYSTEMS = pl.concat(
    [SPELT.with_columns(system=pl.lit("a")), SHALLOW.with_columns(system=pl.lit("b"))]
)
EXPOSED = (
    "{name} retrieves no judged document in 1 judged query where its documents match "
    "judged ones once their spelling is ignored (3 of 5 judged documents, in 3 of 4 judged "
    "queries): it scores as a ranking that exposes no relevant document does (ee_relevance "
    "0, awrf_ndcg 0; not 0 for ee_loss). 2 (query, document) pair(s) of the run in such "
    "queries match a judgment only when case is ignored (query 'q2': run 'D1', judgments "
    "'d1'): ids are compared exactly, as trec_eval compares them; give both the same "
    "spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and the judgments."
)
EE = ["ee_relevance", "ee_loss"]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "options", "said"),
    [
        (SPELT, {}, [EXPOSED.format(name="the run")]),
        (SPELT, {"buckets": 2}, [EXPOSED.format(name="the run")]),
        (SYSTEMS, {"systems": "system"}, [EXPOSED.format(name="system 'a'")]),
    ],
    ids=["spelt apart", "buckets", "systems"],
)
def test_exposure_measures_alone_warn_of_a_query_spelt_apart(
    run: pl.DataFrame, options: dict[str, Any], said: list[str], lazy: bool
) -> None:
    def call(frame: pl.DataFrame) -> pl.DataFrame:
        if lazy:
            got = irm.evaluate(frame.lazy(), EE, qrels=QRELS.lazy(), per_query=True, **options)
            return got.collect()
        return irm.evaluate(frame, EE, qrels=QRELS, per_query=True, **options)

    out, given = warned(lambda: call(run))
    assert given == said
    # a shallow run (q2's documents judged nowhere) is said nothing of, and scores alike
    shallow = run.with_columns(pl.col("doc_id").replace({"D1": "x", "D2": "y"}))
    alike, quiet = warned(lambda: call(shallow))
    assert quiet == []
    keys = ["system", "query_id"] if "systems" in options else ["query_id"]
    assert out.sort(keys).equals(alike.sort(keys))
    assert set(out.filter(pl.col("query_id") == "q2")["ee_relevance"]) == {0.0}


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("engine", ENGINES)
def test_engines_warn_of_it_as_one_machine(
    engine: str, partitions: int, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    expected = warned(lambda: irm.evaluate(SPELT, EE, qrels=QRELS, per_query=True))
    assert expected[1] == [EXPOSED.format(name="the run")]
    got = warned(
        lambda: back(
            evaluate(
                to_engine(SPELT),
                EE,
                qrels=to_engine(QRELS),
                per_query=True,
                partitions=partitions,
            )
        )
    )
    assert got[1] == expected[1]
    assert got[0].sort("query_id").equals(expected[0].sort("query_id"))
