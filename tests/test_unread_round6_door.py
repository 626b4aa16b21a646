"""The door refuses what would be ignored or computed otherwise in silence: a named
rank=, score= or sample_id= column the run lacks, relevance_level= beside metrics
with a level of their own, unjudged= for the judgment-group measures, features=
without item_features=; and reads doc_id= for the rank-similarity metrics."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["a", "b", "c"],
        "rank": [2, 1, 1],
        "score": [2.0, 1.0, 1.0],  # the scores order q1 a, b; the ranks b, a
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "relevance": [2, 0, 1]}
)
COLUMNS = "(its columns: 'query_id', 'doc_id', 'rank', 'score')"


def _named(name: str, column: str, role: str) -> str:
    return (
        f"{name}={column!r} names no column of the run {COLUMNS}; name the column of its "
        f"{role} with {name}=..., or drop {name}= (without the column the values would be "
        "computed otherwise, in silence)"
    )


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("metrics", "keywords", "message"),
    [
        # before: ranked by score, ndcg@10 of q1 1.0 where the ranks give 0.63
        (["ndcg@10"], {"rank": "r"}, _named("rank", "r", "ranks (1 = top)")),
        (["rbo(p=0.9)"], {"rank": "r", "reference": RUN}, _named("rank", "r", "ranks (1 = top)")),
        # before: ignored beside the rank column
        (["map"], {"score": "s"}, _named("score", "s", "scores")),
        # before: read as one deterministic ranking
        (["ee_loss"], {"sample_id": "draw"}, _named("sample_id", "draw", "sampled rankings' ids")),
    ],
    ids=["rank-ndcg", "rank-rbo", "score-map", "sample-ee"],
)
def test_a_named_column_the_run_lacks_is_refused(
    lazy: bool, metrics: list[str], keywords: dict[str, object], message: str
) -> None:
    qrels = {} if "reference" in keywords else {"qrels": QRELS}
    table = RUN.lazy() if lazy else RUN
    with pytest.raises(ColumnNotFoundError, match=re.escape(message)):
        irm.evaluate(table, metrics, **qrels, **keywords)  # type: ignore[arg-type]


def test_a_named_column_the_run_has_is_read() -> None:
    ranked = RUN.rename({"rank": "r"})
    # order='rank': the scores contradict the ranks (refused under order='auto')
    by_rank = irm.evaluate(
        ranked, ["ndcg@10"], qrels=QRELS, rank="r", per_query=True, order="rank"
    )
    by_default = irm.evaluate(RUN, ["ndcg@10"], qrels=QRELS, per_query=True, order="rank")
    assert by_rank.equals(by_default)
    # a list-shaped run: its rank column is made under the name given
    lists = pl.DataFrame({"query_id": ["q1"], "doc_id": [["b", "a"]]})
    named = irm.evaluate(lists, ["P@1"], qrels=QRELS, rank="position")
    assert named["P@1"].item() == 0.0


def test_relevance_level_beside_metrics_with_their_own_is_refused() -> None:
    # before: accepted, P(rel=2)@2 the same at every level
    message = (
        "relevance_level=3 is not read by metric 'P(rel=2)@2': a graded metric weighs each "
        "judged document by its label (its gain), a metric with a level of its own "
        "(P(rel=2)@5) reads that one"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(RUN, ["P(rel=2)@2"], qrels=QRELS, relevance_level=3)
    # beside a metric that reads it, it is read (P@1 of b, judged 0; level 2: a counts)
    out = irm.evaluate(
        RUN, ["P(rel=2)@2", "recall@1"], qrels=QRELS, relevance_level=2, order="rank"
    )
    assert out.row(0) == (2, 0.25, 0.0)


def test_unjudged_is_refused_for_the_judgment_group_measures() -> None:
    # before: accepted, the run's unjudged queries dropped whatever the policy
    qrels_jg = QRELS.with_columns(jg=pl.lit(1))
    message = "unjudged='error' is not read by metric 'map': only neighbour recall"
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate_jg(RUN, ["map"], qrels_jg=qrels_jg, unjudged="error")


def test_features_without_item_features_is_refused() -> None:
    interactions = pl.DataFrame({"query_id": ["u"], "doc_id": ["a"]})
    message = (
        "features='vector' names the vector column of item_features=, and no item_features= "
        "is given: pass item_features=... (one row per item, with that column), or drop "
        "features="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(RUN, ["catalog_coverage@10"], interactions=interactions, features="vector")


def test_doc_id_is_read_by_the_rank_similarity_metrics() -> None:
    # before: refused ("doc_id='did' is not read by metric 'rbo'"), though both tables
    # name their documents so
    run = RUN.rename({"doc_id": "did"})
    out = irm.evaluate(run, ["rbo(p=0.9)", "jaccard@2"], reference=run, doc_id="did", order="rank")
    assert out.row(0) == (2, 1.0, 1.0)


def test_compare_refuses_a_named_column_no_run_has() -> None:
    # before: both runs ranked by score in silence
    message = (
        "rank='r' names no column of the runs (their columns: 'query_id', 'doc_id', 'rank', "
        "'score'); name the column of their ranks (1 = top) with rank=..., or drop rank="
    )
    with pytest.raises(ColumnNotFoundError, match=re.escape(message)):
        irm.compare({"a": RUN, "b": RUN}, ["ndcg@10"], qrels=QRELS, rank="r")
    # a dict mixing a run ranked by 'r' and one by its scores: each by its own column
    ranked = RUN.drop("score").rename({"rank": "r"})
    out = irm.compare({"a": ranked, "b": RUN.drop("rank")}, ["ndcg@10"], qrels=QRELS, rank="r")
    assert out.height == 1


def test_unseen_items_without_the_tables_that_know_the_items_is_refused() -> None:
    # before: distributional_coverage@10 gave the same value with and without it
    recommendations = pl.DataFrame(
        {"query_id": ["u1", "u1", "u2"], "doc_id": ["a", "b", "c"], "rank": [1, 2, 1]}
    )
    message = (
        "unseen_items='drop' says what becomes of a recommended item that interactions= or "
        "item_features= lack, and neither is given, so it would change nothing: drop "
        "unseen_items=, or pass the table that knows the items"
    )
    for metric in ("distributional_coverage@10", "sufficient_reco@10"):
        with pytest.raises(InvalidValueError, match=re.escape(message)):
            irm.evaluate(recommendations, [metric], unseen_items="drop")


def test_serendipity_relevance_without_serendipity_is_refused() -> None:
    # before: novelty@10 took it and changed nothing (only serendipity weighs items)
    recommendations = pl.DataFrame(
        {"query_id": ["u1", "u1", "u2"], "doc_id": ["a", "b", "c"], "rank": [1, 2, 1],
         "w": [1.0, 2.0, 1.0]}
    )  # fmt: skip
    interactions = pl.DataFrame({"query_id": ["u1", "u2", "u3"], "doc_id": ["a", "c", "b"]})
    message = (
        "serendipity_relevance='w' weighs each recommended item in serendipity, and no "
        "metric asked for reads it ('novelty@10'): drop serendipity_relevance= (it would "
        "change nothing), or ask for serendipity@k"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(
            recommendations, ["novelty@10"], interactions=interactions, serendipity_relevance="w"
        )
    # beside serendipity@10 it is read
    features = pl.DataFrame(
        {"doc_id": ["a", "b", "c"], "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]}
    )
    kw = {"interactions": interactions, "item_features": features}
    weighed = irm.evaluate(recommendations, ["serendipity@10"], serendipity_relevance="w", **kw)
    plain = irm.evaluate(recommendations, ["serendipity@10"], **kw)
    assert weighed.item() != plain.item()
