"""The coverage warning says what a judged query scores where the run retrieves no
judged document for it, or does not list it: what a ranking of no judged document (or
an empty one) scores, 0 in ndcg, map, precision and recall. It said "every metric
scores 0" and "each score 0", while rbp_residual scores 1 there (its worst value: a
lower-is-better metric read as 0 would look best), num_rel counts the query's relevant
documents and num_ret and unjudged@k the run's."""

from __future__ import annotations

import warnings

import polars as pl

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning

METRICS = ["ndcg", "rbp_residual", "num_ret", "num_rel", "unjudged@10"]
NOTHING = "0 in ndcg, map, precision, recall and the like"


def _evaluated(run: pl.DataFrame, qrels: pl.DataFrame) -> tuple[list[str], pl.DataFrame]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(run, METRICS, qrels=qrels, per_query=True)
    return [str(w.message) for w in caught if w.category is CoverageWarning], out


def test_a_run_of_no_judged_document_is_said_to_score_as_such_a_ranking() -> None:
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["x", "y"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    said, out = _evaluated(run, qrels)
    # not 0 in every metric: rbp_residual 1 (worst), the counts of the run and judgments
    assert out.select(METRICS).row(0) == (0.0, 1.0, 2, 1, 0.2)
    assert len(said) == 1
    assert said[0].startswith(
        "the run retrieves no judged document (0 of 1 judged documents, in 0 of 1 judged "
        "queries; it lists 1 of the 1 judged queries): every judged query scores as a "
        f"ranking of no judged document does ({NOTHING}), as trec_eval scores such a run."
    )


def test_a_judged_query_the_run_misses_is_said_to_score_as_an_empty_ranking() -> None:
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "y"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "b", "c"], "relevance": [1, 1, 1]}
    )
    said, out = _evaluated(run, qrels)
    assert out.filter(pl.col("query_id") == "q2").select(METRICS).row(0) == (0.0, 1.0, 0, 1, 0.0)
    assert len(said) == 1
    assert said[0].startswith(
        "the run misses most judged queries (1 of 3 judged documents, in 1 of 3 judged "
        "queries; it lists 1 of the 3 judged queries): the 2 it misses each score as an "
        f"empty ranking does (unretrieved='zero', as trec_eval -c: {NOTHING})."
    )
