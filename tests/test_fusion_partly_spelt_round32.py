"""Round 32: fusion warns of documents spelt apart beside shared ones in a query.

Runs x: q1 [d1, D3] and y: q1 [d1, d3] share 'd1', so no query is disjoint and the
whole-query warning said nothing; 'D3' and 'd3' were fused as two documents in silence.
Now one CoverageWarning names the pairs, the first, and the fix; ids that match only
once a prefix or leading zeros are ignored ('d01' beside 'd1') stay silent: they may be
two documents.
"""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import warned


def _run(*docs: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": ["q1"] * len(docs),
            "doc_id": list(docs),
            "score": [float(len(docs) - i) for i in range(len(docs))],
        }
    )


PARTLY = (
    "1 pair(s) of documents of two runs in 1 query held by several runs, beside documents "
    "the runs share, match only when case is ignored (query 'q1': run 'x' 'D3', run 'y' "
    "'d3'): ids are compared exactly, so each such pair is fused as two different "
    "documents, one scored by each run. Give the runs the same spelling, e.g. "
    "pl.col('doc_id').str.to_lowercase() on each; if those documents are meant to differ, "
    "the fused run is as documented: silence this with "
    "warnings.filterwarnings('ignore', category=irm.CoverageWarning)."
)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(
    ("x", "y", "said"),
    [
        (("d1", "D3"), ("d1", "d3"), [PARTLY]),
        # nothing spelt apart: every document lines up or is truly another
        (("d1", "d3"), ("d1", "d4"), []),
        # an odd id that matches nothing once its spelling is ignored
        (("d1", "D-9"), ("d1", "d3"), []),
        # a prefix or leading zeros are kept: 'd01' and 'd1' may be two documents
        (("d2", "D01"), ("d2", "d1"), []),
    ],
    ids=["case", "silent", "no-match", "leading-zeros"],
)
def test_documents_spelt_apart_beside_shared_ones(x, y, said, lazy):
    left = _run(*x)
    runs = {"x": left.lazy() if lazy else left, "y": _run(*y)}
    fused, got = warned(lambda: irm.fuse(runs, "sum"))
    assert got == said
    assert fused.height == len(set(x) | set(y))


QRELS = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d3"], "relevance": [1, 1]})


#: optimize_fusion's own check of the judgments (round 33): run 'x' spells the judged
#: 'd3' apart beside the judged 'd1' it retrieves
TRAINING = (
    "run 'x' retrieves documents spelt apart from judged ones in 1 judged query where it "
    "retrieves other judged documents (1 of 2 judged documents, in 1 of 1 judged queries): "
    "1 (query, document) pair(s) of the run there match a judgment of the query only when "
    "case is ignored (query 'q1': run 'D3', judgments 'd3') and are scored as unjudged "
    "documents: ids are compared exactly, as trec_eval compares them; give both the same "
    "spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and the judgments. "
    "optimize_fusion tunes the fusion on these judgments: no grid point can score such "
    "documents of that run's."
)


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda runs: irm.fuse(runs, "rrf", buckets=2), [PARTLY]),
        (
            lambda runs: irm.optimize_fusion(runs, qrels=QRELS, method="rrf", metric="ndcg"),
            [PARTLY, TRAINING],
        ),
    ],
    ids=["rrf-buckets", "optimize_fusion"],
)
def test_other_routes_warn_alike(call, said):
    _, got = warned(lambda: call({"x": _run("d1", "D3"), "y": _run("d1", "d3")}))
    assert got == said
