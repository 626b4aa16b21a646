"""The propensity-scored metrics' partly spelt hint on Spark and Dask (round 33).

``q1`` retrieves ``d1, D3, d4`` against the judged ``d1, d3, d4``: one machine's
``ps_precision@3`` says that ``'D3'`` is read as unjudged (the hint of a query where the
run retrieves some judged documents but not all); the engines' parts carried only the
data of the no-judged-document hint, so Spark and Dask said nothing. Each now gives one
machine's warnings, words and order: the partly hint alone, and two such queries (``q1``,
and ``q2``: ``e1, E2`` against the judged ``e1, e2``; in two parts on both engines, as
their hashes of the query ids place them: Spark ``q1`` 0, ``q2`` 1; Dask 1, 0) added up,
beside a query of no judged document (``q3``: ``F1`` against the judged ``f1``).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io, warned
from tests.test_engines_round13 import ENGINES


def _frame(rows: dict[str, list[str]], column: str, values: list[Any]) -> pl.DataFrame:
    """The rows of each query (``rows``: its documents), ``column`` holding ``values``."""
    queries = [q for q, docs in rows.items() for _ in docs]
    docs = [d for docs in rows.values() for d in docs]
    return pl.DataFrame({"query_id": queries, "doc_id": docs, column: values})


QRELS = _frame(
    {"q1": ["d1", "d3", "d4"], "q2": ["e1", "e2"], "q3": ["f1"]},
    "relevance",
    [1, 1, 0, 1, 1, 1],
)
PROPENSITIES = pl.DataFrame(
    {"doc_id": ["d1", "d3", "d4", "e1", "e2", "f1"], "propensity": [0.5] * 4 + [0.25] * 2}
)
SPELT = _frame({"q1": ["d1", "D3", "d4"]}, "rank", [1, 2, 3])
SEVERAL = _frame(
    {"q1": ["d1", "D3", "d4"], "q2": ["e1", "E2"], "q3": ["F1"]}, "rank", [1, 2, 3, 1, 2, 1]
)
SAID = (
    "the run retrieves documents spelt apart from judged ones in 1 judged query where it "
    "retrieves other judged documents (2 of 3 judged documents, in 1 of 1 judged queries): "
    "1 (query, document) pair(s) of the run there match a judgment of the query only when "
    "case is ignored (query 'q1': run 'D3', judgments 'd3') and are scored as unjudged "
    "documents: ids are compared exactly, as trec_eval compares them; give both the same "
    "spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and the judgments."
)
#: the start of each warning one machine gives (q3's no judged document first)
SEVERAL_SAID = [
    "the run retrieves no judged document in 1 judged query where its documents match",
    "the run retrieves documents spelt apart from judged ones in 2 judged queries where it "
    "retrieves other judged documents (3 of 6 judged documents, in 2 of 3 judged queries): "
    "2 (query, document) pair(s) of the run there match a judgment of the query only when "
    "case is ignored (query 'q1': run 'D3', judgments 'd3')",
]

CASES: list[tuple[str, pl.DataFrame, pl.DataFrame, list[str], list[str]]] = [
    ("partly", SPELT, QRELS.filter(pl.col("query_id") == "q1"), ["ps_precision@3"], [SAID]),
    ("partly in two parts", SEVERAL, QRELS, ["ps_precision@3", "ps_ndcg@2"], SEVERAL_SAID),
]


@pytest.mark.parametrize(
    ("run", "qrels", "metrics", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("engine", ENGINES)
def test_engines_say_one_machines_partly_hint(
    engine: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    metrics: list[str],
    said: list[str],
    request: pytest.FixtureRequest,
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    kw: dict[str, Any] = {"qrels": qrels, "propensities": PROPENSITIES}
    expected = warned(lambda: irm.evaluate(run, metrics, **kw))
    assert len(expected[1]) == len(said)
    assert all(given.startswith(start) for given, start in zip(expected[1], said, strict=True))
    tables = {k: to_engine(v) for k, v in kw.items()}
    got = warned(lambda: back(evaluate(to_engine(run), metrics, **tables)))
    assert got[1] == expected[1]
    assert got[0].equals(expected[0])
