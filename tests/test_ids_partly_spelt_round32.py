"""A query where only some of the run's documents are spelt apart (round 32).

The run ``q1: d1, D3, d4`` beside the judgments ``q1: d1=1, d3=1, d4=0`` scored ``'D3'``
as an unjudged document (P@3 1/3 where the run means 2/3) with no word: the coverage
warning read the run's documents again only in a judged query where it retrieves no
judged document. The run's documents that no judgment of their query names and that
match a judged one of it once the spaces around them, case and separators are ignored
are warned of now in every judged query where it retrieves some judged documents but
not all (how many pairs, the first: query, run id, judged id, and that they are scored
as unjudged); a run with no such document is still said nothing of.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import warned

QRELS = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["d1", "d3", "d4"], "relevance": [1, 1, 0]}
)


def _run(docs: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": docs, "rank": [1, 2, 3]})


SAID = (
    "{name} retrieves documents spelt apart from judged ones in 1 judged query where it "
    "retrieves other judged documents (2 of 3 judged documents, in 1 of 1 judged queries; "
    "it lists 1 of the 1 judged queries): 1 (query, document) pair(s) of the run there "
    "match a judgment of the query only when {what} (query 'q1': run {ran!r}, judgments "
    "{held!r}) and are scored as unjudged documents: ids are compared exactly, as "
    "trec_eval compares them; give both the same spelling, e.g. pl.col('doc_id'){fix} on "
    "the run and the judgments."
)
CASE = {"what": "case is ignored", "fix": ".str.to_lowercase()"}
SEPARATORS = {"what": "separators are ignored", "fix": ".str.replace_all('[-_.: ]', '')"}
#: two runs in one frame: 'a' spells 'd3' apart, 'b' retrieves an unjudged 'x3'
SYSTEMS = pl.concat(
    [
        _run(["d1", "D3", "d4"]).with_columns(system=pl.lit("a")),
        _run(["d1", "x3", "d4"]).with_columns(system=pl.lit("b")),
    ]
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "qrels", "options", "said", "value"),
    [
        # 'D3' scored as unjudged: 1/3 (2/3 where it were read as 'd3'), now said
        (
            _run(["d1", "D3", "d4"]),
            QRELS,
            {},
            [SAID.format(name="the run", ran="D3", held="d3", **CASE)],
            1 / 3,
        ),
        # the judged id the one spelt otherwise ('d-3' judged, 'd3' in the run)
        (
            _run(["d1", "d3", "d4"]),
            QRELS.with_columns(pl.col("doc_id").replace("d3", "d-3")),
            {},
            [SAID.format(name="the run", ran="d3", held="d-3", **SEPARATORS)],
            1 / 3,
        ),
        # no document spelt apart (an unjudged 'x3'): nothing said
        (_run(["d1", "x3", "d4"]), QRELS, {}, [], 1 / 3),
        # 'D3' judged itself (beside 'd3'): judged, nothing said
        (
            _run(["d1", "D3", "d4"]),
            pl.concat(
                [QRELS, pl.DataFrame({"query_id": ["q1"], "doc_id": ["D3"], "relevance": [0]})]
            ),
            {},
            [],
            1 / 3,
        ),
        (
            SYSTEMS,
            QRELS,
            {"systems": "system"},
            [SAID.format(name="system 'a'", ran="D3", held="d3", **CASE)],
            {"a": 1 / 3, "b": 1 / 3},
        ),
    ],
    ids=["run spelt apart", "judgment spelt apart", "no match", "judged twice", "systems"],
)
def test_a_document_spelt_apart_beside_judged_ones_is_warned(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    options: dict[str, Any],
    said: list[str],
    value: Any,
    lazy: bool,
) -> None:
    def call() -> pl.DataFrame:
        if lazy:
            return irm.evaluate(run.lazy(), ["P@3"], qrels=qrels.lazy(), **options).collect()
        return irm.evaluate(run, ["P@3"], qrels=qrels, **options)

    out, given = warned(call)
    assert given == said
    if isinstance(value, dict):
        assert dict(out.sort("system").select("system", "P@3").iter_rows()) == value
    else:
        assert out["P@3"].item() == value
