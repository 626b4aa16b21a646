"""A run whose document ids are spelt apart from the judgments' in some queries (round 30).

A run whose documents line up with the judgments' but in one query (``'D1'``, ``'D2'``
beside the judged ``'d1'``, ``'d2'`` of ``q2``) scored that query 0 in silence: the
coverage warning spoke only where a run retrieved no judged document at all, or in most
judged queries. A run that retrieves no judged document in some judged query it lists
is warned of now where its documents there match judged ones of the same query once
their spelling is ignored, naming the query and a pair; a shallow run (no document spelt
apart) is still said nothing of. A query where only some documents are spelt apart (it
retrieves a judged document) was not detected; round 32 warns of it too.
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


SPELT, SHALLOW, PARTLY = _run(["D1", "D2"]), _run(["x", "y"]), _run(["D1", "d2"])
#: the systems' runs: 'a' spells q2's documents apart, 'b' retrieves no judged one there
SYSTEMS = pl.concat(
    [SPELT.with_columns(system=pl.lit("a")), SHALLOW.with_columns(system=pl.lit("b"))]
)
SAID = (
    "{name} retrieves no judged document in 1 judged query where its documents match "
    "judged ones once their spelling is ignored (3 of 5 judged documents, in 3 of 4 judged "
    "queries; it lists 4 of the 4 judged queries): it scores as a ranking of no judged "
    "document does (0 in ndcg, map, precision, recall and the like). 2 (query, document) "
    "pair(s) of the run in such queries match a judgment only when case is ignored (query "
    "'q2': run 'D1', judgments 'd1'): ids are compared exactly, as trec_eval compares them; "
    "give both the same spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and "
    "the judgments."
)
#: q2's documents in another case and with leading zeros ('D01' beside the judged 'd1')
ZEROS = _run(["D01", "D02"])
# braces doubled: the text is formatted with the run's name
ZEROS_FIX = ".str.replace('^([^0-9]*)0+([0-9])', '${{1}}${{2}}')"
SAID_ZEROS = (
    SAID.replace("case is ignored", "case and leading zeros are ignored")
    .replace("run 'D1'", "run 'D01'")
    .replace(".str.to_lowercase()", ".str.to_lowercase()" + ZEROS_FIX)
)
SAID_PARTLY = (
    "the run retrieves documents spelt apart from judged ones in 1 judged query where it "
    "retrieves other judged documents (4 of 5 judged documents, in 4 of 4 judged queries; "
    "it lists 4 of the 4 judged queries): 1 (query, document) pair(s) of the run there "
    "match a judgment of the query only when case is ignored (query 'q2': run 'D1', "
    "judgments 'd1') and are scored as unjudged documents: ids are compared exactly, as "
    "trec_eval compares them; give both the same spelling, e.g. "
    "pl.col('doc_id').str.to_lowercase() on the run and the judgments."
)
#: q1 1, q3 and q4 a relevant document at rank 2; q2 0 (spelt apart, or shallow)
NDCG = (1 + 0 + 2 / 1.5849625007211562) / 4


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "options", "said", "value"),
    [
        (SPELT, {}, [SAID.format(name="the run")], NDCG),
        (ZEROS, {}, [SAID_ZEROS.format(name="the run")], NDCG),
        # a shallow run: no document spelt apart, nothing said
        (SHALLOW, {}, [], NDCG),
        # only 'D1' spelt apart: q2 retrieves 'd2', 'D1' read as unjudged (said since
        # round 32: tests/test_ids_partly_spelt_round32.py)
        (PARTLY, {}, [SAID_PARTLY], (1 + 0.38685280723454163 + 2 / 1.5849625007211562) / 4),
        (
            SYSTEMS,
            {"systems": "system"},
            [SAID.format(name="system 'a'")],
            {"a": NDCG, "b": NDCG},
        ),
    ],
    ids=["spelt apart", "case and zeros", "shallow", "partly spelt apart", "systems"],
)
def test_a_query_whose_documents_are_spelt_apart_iswarned(
    run: pl.DataFrame, options: dict[str, Any], said: list[str], value: Any, lazy: bool
) -> None:
    def call() -> pl.DataFrame:
        if lazy:
            return irm.evaluate(run.lazy(), ["ndcg@2"], qrels=QRELS.lazy(), **options).collect()
        return irm.evaluate(run, ["ndcg@2"], qrels=QRELS, **options)

    out, given = warned(call)
    assert given == said
    if isinstance(value, dict):
        rows = out.sort("system").select("system", "ndcg@2").iter_rows()
        assert dict(rows) == pytest.approx(value, rel=1e-15)
    else:
        assert out["ndcg@2"].item() == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("engine", ENGINES)
def test_engines_say_it_as_one_machine(
    engine: str, partitions: int, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    expected = warned(lambda: irm.evaluate(SYSTEMS, ["ndcg@2"], qrels=QRELS, systems="system"))
    assert expected[1] == [SAID.format(name="system 'a'")]
    got = warned(
        lambda: back(
            evaluate(
                to_engine(SYSTEMS),
                ["ndcg@2"],
                qrels=to_engine(QRELS),
                systems="system",
                partitions=partitions,
            )
        )
    )
    assert got[1] == expected[1]
    assert got[0].sort("system").equals(expected[0].sort("system"))
