"""A query of the reference the run did not retrieve (``unretrieved='zero'``, the
default) against each rank similarity: the value against an empty ranking.

``kendall_tau`` and ``tau_ap`` are null there, as for any ranking sharing fewer than two
documents with the reference, and left out of the mean: scored 0 ("uncorrelated"),
retrieving nothing for ``q2`` raised the mean above that of retrieving three documents
none of which the reference holds (``-0.5`` against ``-1.0``). The set similarities
are 0, RBO's upper bound and residual 1.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

REFERENCE = pl.DataFrame(
    {"query_id": ["q1"] * 3 + ["q2"] * 3, "doc_id": list("abcdef"), "score": [3.0, 2.0, 1.0] * 2}
)
#: q1 in reverse (tau -1); q2 not retrieved, or retrieved sharing no document.
REVERSED = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["c", "b", "a"], "score": [3.0, 2.0, 1.0]}
)
DISJOINT = pl.concat(
    [
        REVERSED,
        pl.DataFrame({"query_id": ["q2"] * 3, "doc_id": list("xyz"), "score": [3.0, 2.0, 1.0]}),
    ]
)

CASES = [
    # metric, q2's value when unretrieved, the mean over the queries
    ("kendall_tau@3", None, -1.0),
    ("tau_ap@3", None, -1.0),
    ("jaccard@3", 0.0, 0.5),  # q1 shares all three: 1, q2 0
    ("overlap@3", 0.0, 0.5),
    ("rbo(kind='min')@3", 0.0, None),
    ("rbo(kind='res')@3", 1.0, None),
]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(("metric", "empty", "mean"), CASES)
def test_an_unretrieved_query_is_valued_against_an_empty_ranking(
    metric: str, empty: float | None, mean: float | None, lazy: bool
) -> None:
    run: Any = REVERSED.lazy() if lazy else REVERSED
    per_query = irm.evaluate(run, [metric], reference=REFERENCE, per_query=True)
    per_query = per_query.collect() if lazy else per_query
    values = dict(per_query.select("query_id", metric).iter_rows())
    assert values["q2"] == empty
    if mean is not None:
        out = irm.evaluate(run, [metric], reference=REFERENCE)
        assert (out.collect() if lazy else out)[metric].item() == mean


@pytest.mark.parametrize("metric", ["kendall_tau@3", "tau_ap@3"])
def test_retrieving_nothing_scores_as_retrieving_no_shared_document(metric: str) -> None:
    nothing = irm.evaluate(REVERSED, [metric], reference=REFERENCE)
    disjoint = irm.evaluate(DISJOINT, [metric], reference=REFERENCE)
    assert nothing[metric].item() == disjoint[metric].item() == -1.0
