"""Comparison, round 10: judgments per system under the default query set.

``irm.compare`` reads judgments with a ``system`` column as
:func:`~polars_irmetrics.evaluate` reads them with ``systems=``: each system judged
apart. Under ``query_set='judged'`` (the default) it also scores an empty ranking of
every judged query (for a system with an empty run, and for the warning of a missed
query that scores better than a list); that evaluation dropped the systems and read
every system's judgments as one query's, refusing the call with "query 'q1' judges 1
document(s) more than once" and a fix (``.unique(...)``) that would drop one system's
judgments in silence. It now scores the empty ranking per system.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polars_irmetrics as irm

pytestmark = pytest.mark.filterwarnings(
    "ignore::polars_irmetrics.errors.CoverageWarning", "ignore::polars_irmetrics.IrmWarning"
)

RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b"] * 2, "score": [2.0, 1.0] * 2}
)
RUNS = {"bm25": RUN, "dense": RUN.with_columns(score=-pl.col("score"))}
#: each system's own judgments: a is relevant to bm25 in q1 and q2, to dense in q2 alone
QRELS = pl.DataFrame(
    {
        "system": ["bm25", "bm25", "dense", "dense"],
        "query_id": ["q1", "q2"] * 2,
        "doc_id": ["a"] * 4,
        "relevance": [1, 1, 0, 1],
    }
)


def _alone(name: str, metric: str) -> list[float]:
    """The system's per-query values from its run and its judgments alone."""
    qrels = QRELS.filter(pl.col("system") == name).drop("system")
    out = irm.evaluate(RUNS[name], [metric], qrels=qrels, per_query=True)
    assert isinstance(out, pl.DataFrame)
    return out.sort("query_id").get_column(metric).to_list()


@pytest.mark.parametrize("query_set", ["judged", "common", "error"])
def test_judgments_per_system(query_set: str) -> None:
    out = irm.compare(RUNS, ["map"], qrels=QRELS, query_set=query_set, per_query=True)  # type: ignore[arg-type]
    rows = out.sort("query_id")
    # bm25 ranks a first (AP 1); dense ranks it second, relevant in q2 alone (AP 0.5)
    assert rows.get_column("baseline_value").to_list() == _alone("bm25", "map") == [1.0, 1.0]
    assert rows.get_column("value").to_list() == _alone("dense", "map") == [0.0, 0.5]
    means = irm.compare(RUNS, ["map"], qrels=QRELS, query_set=query_set)  # type: ignore[arg-type]
    assert means.select("system", "mean", "baseline_mean").rows() == [("dense", 0.25, 1.0)]


def test_an_empty_run_judged_per_system() -> None:
    """A system with an empty run scores 0 on each of its own judged queries; the
    missed-query warning reads each system's empty ranking (unjudged@1 lower is better)."""
    runs = {**RUNS, "empty": RUN.head(0)}
    qrels = pl.concat([QRELS, QRELS.filter(system="bm25").with_columns(system=pl.lit("empty"))])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.compare(runs, ["map", "unjudged@1"], qrels=qrels, per_query=True)
    empty = out.filter(system="empty", baseline="bm25").sort("metric", "query_id")
    assert empty.select("metric", "query_id", "value").rows() == [
        ("map", "q1", 0.0),
        ("map", "q2", 0.0),
        ("unjudged@1", "q1", 0.0),
        ("unjudged@1", "q2", 0.0),
    ]
    said = [
        str(w.message)
        for w in caught
        if "scores better as an empty ranking" in str(w.message)
        or "score better as an empty ranking" in str(w.message)
    ]
    assert len(said) == 1
    assert "e.g. system 'empty'" in said[0]
    assert said[0].startswith("unjudged@1")
