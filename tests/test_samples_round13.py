"""A run of sampled rankings read by metrics of one ranking per query (round 13).

A run with a ``sample`` column (``sample_id=``: the exposure measures' stochastic
policy, several sampled rankings per query) evaluated with metrics that read one
ranking per query (the ranking metrics, Elliot's and the MAD metrics, RecTools' and
the beyond-accuracy metrics) was read as one merged list per query, in silence
(``ndcg@2`` 0.815, ``item_mad@2`` 0.5, ``epc@2`` 0.5). Only beside an exposure measure
did the door refuse it. A query with rows under more than one value of the column is
now refused when the plan runs, from a count of each query's distinct values read
beside the plan's other checks, on every path (DataFrame, LazyFrame, buckets, Spark,
Dask); a column with one value per query is one ranking per query and is evaluated.
"""

from __future__ import annotations

import re
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark
from polars_irmetrics.errors import InvalidValueError

RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 1, 2, 2],
        "sample": [0, 0, 1, 1, 0, 0],
        "doc_id": [10, 11, 12, 13, 11, 13],
        "score": [2.0, 1.0, 2.5, 0.5, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 12, 13], "relevance": [1, 1, 1]})
GROUPS = pl.DataFrame({"doc_id": [10, 11, 12, 13], "group": ["h", "h", "t", "t"]})
USER_GROUPS = pl.DataFrame({"query_id": [1, 2], "group": ["a", "b"]})
#: Every document of the run is in the history (the beyond-accuracy metrics read it).
INTERACTIONS = pl.DataFrame({"query_id": [1, 2, 3, 3], "doc_id": [10, 11, 12, 13]})


def _message(column: str = "sample", query: str = "1", n: int = 2) -> str:
    return (
        f"the run's column {column!r} (sample_id=) holds sampled rankings: query {query} "
        f"has rows under {n} of its values, and the metrics asked for read one ranking per "
        "query, so they would read every sample's documents as one ranking: evaluate them "
        f"on one sample, e.g. .filter(pl.col({column!r}) == 0), ask for the exposure "
        "measures that read sampled rankings (ee_loss, ee_disparity, ee_relevance, awrf, "
        "awrf_ndcg, rnd, rkl, rrd) in a call of their own, or drop or rename the column if "
        "it holds no samples"
    )


def _collected(got: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """A LazyFrame's result (its checks raise when it runs)."""
    return got.collect() if isinstance(got, pl.LazyFrame) else got


TREC = {"qrels": QRELS}
#: (id, metrics, tables and options): each reads one ranking per query.
ROUTES: list[tuple[str, list[str], dict[str, Any]]] = [
    ("ndcg", ["ndcg@2"], TREC),
    ("ndcg-sample_id", ["ndcg@2"], {**TREC, "sample_id": "sample"}),
    ("per-query", ["ndcg@2", "map"], {**TREC, "per_query": True}),
    ("buckets", ["ndcg@2"], {**TREC, "buckets": 2}),
    ("item_mad", ["item_mad@2"], {**TREC, "groups": GROUPS}),
    ("user_mad", ["user_mad@2"], {**TREC, "user_groups": USER_GROUPS}),
    ("epc", ["epc@2"], {**TREC, "interactions": INTERACTIONS}),
    ("accuracy-and-epc", ["P@2", "epc@2"], {**TREC, "interactions": INTERACTIONS}),
    ("catalog_coverage", ["catalog_coverage@2"], {"interactions": INTERACTIONS}),
    ("novelty-buckets", ["novelty@2"], {"interactions": INTERACTIONS, "buckets": 2}),
    ("novelty-and-ndcg", ["novelty@2", "ndcg@2"], {**TREC, "interactions": INTERACTIONS}),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(("name", "metrics", "options"), ROUTES, ids=[r[0] for r in ROUTES])
def test_sampled_run_refused_by_one_ranking_metrics(
    name: str, metrics: list[str], options: dict[str, Any], lazy: bool
) -> None:
    run = RUN.lazy() if lazy else RUN
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_message())}$"):
        _collected(irm.evaluate(run, metrics, **options))


#: (id, run, metrics, options, message): the query's group, a string id, three samples.
#: (A sample_id= other than the default is refused at the door beside metrics that do
#: not read it, so the column these read is 'sample'.)
NAMED: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], str]] = [
    ("systems", pl.concat([RUN.with_columns(system=pl.lit("b")),
                           RUN.with_columns(system=pl.lit("a"))]),
     ["ndcg@2"], {**TREC, "systems": "system"}, _message(query="1 (system='a')")),
    ("string-ids-three", RUN.with_columns(pl.col("query_id").cast(pl.String),
                                          sample=pl.Series([0, 1, 2, 2, 0, 0])),
     ["P@2"], {"qrels": QRELS.with_columns(pl.col("query_id").cast(pl.String))},
     _message(query="'1'", n=3)),
    ("string-ids-recsys", RUN.with_columns(pl.col("query_id").cast(pl.String)), ["novelty@2"],
     {"interactions": INTERACTIONS.with_columns(pl.col("query_id").cast(pl.String))},
     _message(query="'1'")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "run", "metrics", "options", "message"), NAMED, ids=[c[0] for c in NAMED]
)
def test_sampled_run_message_names_column_and_query(
    name: str, run: pl.DataFrame, metrics: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, metrics, **options)


ONE = RUN.filter(pl.col("sample") == 0)
#: (id, metrics, options): one value of the column per query, evaluated as without it.
ACCEPTED: list[tuple[str, list[str], dict[str, Any]]] = [
    ("ndcg", ["ndcg@2", "P@2"], TREC),
    ("buckets", ["ndcg@2"], {**TREC, "buckets": 2}),
    ("epc-item_mad", ["epc@2", "item_mad@2"], {**TREC, "interactions": INTERACTIONS,
                                               "groups": GROUPS}),
    ("novelty-ndcg", ["novelty@2", "ndcg@2"], {**TREC, "interactions": INTERACTIONS}),
    ("catalog_coverage", ["catalog_coverage@2"], {"interactions": INTERACTIONS}),
]  # fmt: skip


@pytest.mark.parametrize("column", ["one sample", "one value per query"])
@pytest.mark.parametrize(("name", "metrics", "options"), ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_one_value_per_query_is_one_ranking(
    name: str, metrics: list[str], options: dict[str, Any], column: str
) -> None:
    run = ONE if column == "one sample" else ONE.with_columns(sample=pl.col("query_id") * 7)
    expected = irm.evaluate(ONE.drop("sample"), metrics, **options)
    assert_frame_equal(irm.evaluate(run, metrics, **options), expected)
    assert_frame_equal(irm.evaluate(run.lazy(), metrics, **options).collect(), expected)


def test_beside_exposure_refusal_unchanged() -> None:
    message = (
        "the run's column 'sample' (sample_id=) holds sampled rankings, each a ranking of "
        "its own for the exposure measures ('ee_loss'); the other metrics of the call "
        "('ndcg@2') read one ranking per query, and would read every sample's documents "
        "as one ranking: evaluate 'ndcg@2' in a separate call, on one ranking per query "
        "(e.g. run.filter(pl.col('sample') == 0).drop('sample'))"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, ["ndcg@2", "ee_loss"], qrels=QRELS)


@pytest.mark.parametrize("metrics", [["ndcg@2"], ["novelty@2"]])
def test_spark_refuses_sampled_run(metrics: list[str], request: pytest.FixtureRequest) -> None:
    spark = request.getfixturevalue("spark")
    frame = spark.createDataFrame(RUN.to_arrow())
    tables = {"qrels": spark.createDataFrame(QRELS.to_arrow())}
    if metrics == ["novelty@2"]:
        tables = {"interactions": spark.createDataFrame(INTERACTIONS.to_arrow())}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_message())}$"):
        irm_spark.evaluate(frame, metrics, partitions=2, **tables).toArrow()


@pytest.mark.parametrize("metrics", [["ndcg@2"], ["novelty@2"]])
def test_dask_refuses_sampled_run(metrics: list[str], request: pytest.FixtureRequest) -> None:
    request.getfixturevalue("client")

    def frame(table: pl.DataFrame) -> dd.DataFrame:
        return dd.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)

    tables = {"qrels": frame(QRELS)}
    if metrics == ["novelty@2"]:
        tables = {"interactions": frame(INTERACTIONS)}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_message())}$"):
        irm_dask.evaluate(frame(RUN), metrics, partitions=2, **tables).compute()


# The routes 3a40e8a left reading a run of sampled rankings as one merged list per query
# (rbo 0.83 on RUN, kendall_tau 1.0; ps_ndcg@2 0.815; prefs_avgjg 1.0 for query 1;
# neighbor_recall@2 1.0): refused with the same message, from a check read beside each
# route's other checks.
REFERENCE = ONE.drop("sample")
PROPENSITIES = pl.DataFrame({"doc_id": [10, 11, 12, 13], "propensity": [0.5, 0.5, 0.25, 1.0]})
POSITIONS = pl.DataFrame({"position": [1, 2, 3, 4], "propensity": [1.0, 0.5, 0.5, 0.5]})
PS = {**TREC, "propensities": PROPENSITIES}
PREFS = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 1, 2, 2],
        "jg": ["a"] * 6,
        "jsg": ["s"] * 6,
        "doc_id": [10, 11, 12, 13, 11, 13],
        "rel_level": [1.0, 0.0, 1.0, 0.0, 0.0, 1.0],
    }
)
QRELS_JG = QRELS.with_columns(jg=pl.lit("1"))
#: (id, run, metrics, options, message): each route reads one ranking per query.
OTHER_ROUTES: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], str]] = [
    ("rbo", RUN, ["rbo"], {"reference": REFERENCE}, _message()),
    ("jaccard-kendall", RUN, ["jaccard@2", "kendall_tau@2"], {"reference": REFERENCE},
     _message()),
    ("rbo-per-query", RUN, ["rbo"], {"reference": REFERENCE, "per_query": True}, _message()),
    ("rbo-buckets", RUN, ["rbo"], {"reference": REFERENCE, "buckets": 2}, _message()),
    ("rbo-systems", pl.concat([RUN.with_columns(system=pl.lit("b")),
                               RUN.with_columns(system=pl.lit("a"))]),
     ["rbo"], {"reference": REFERENCE, "systems": "system"},
     _message(query="1 (system='a')")),
    ("rbo-reference-sampled", REFERENCE, ["rbo"], {"reference": RUN},
     _message().replace("the run's", "the reference's", 1)),
    ("ps", RUN, ["ps_ndcg@2", "ps_precision@2"], PS, _message()),
    ("ps-per-query-buckets", RUN, ["ps_ndcg@2"], {**PS, "per_query": True, "buckets": 2},
     _message()),
    ("ps-by-position", RUN, ["ps_precision@2"], {**TREC, "propensities": POSITIONS},
     _message()),
    ("ps-string-ids", RUN.with_columns(pl.col("query_id").cast(pl.String),
                                       sample=pl.Series([0, 1, 2, 2, 0, 0])),
     ["ps_ndcg@2"], {"qrels": QRELS.with_columns(pl.col("query_id").cast(pl.String)),
                     "propensities": PROPENSITIES}, _message(query="'1'", n=3)),
    ("prefs", RUN, ["prefs_avgjg", "prefs_pair_ret"], {"prefs": PREFS}, _message()),
    ("prefs-string-ids", RUN.with_columns(pl.col("query_id").cast(pl.String)),
     ["prefs_simp"], {"prefs": PREFS.with_columns(pl.col("query_id").cast(pl.String))},
     _message(query="'1'")),
    # the judgment groups' route was refused by 3a40e8a (the offline plan per group)
    ("jg", RUN, ["map_avgjg"], {"qrels_jg": QRELS_JG},
     _message(query="'1 (judgment group 1)'")),
    ("neighbors", RUN, ["neighbor_recall@2"], {"neighbors": REFERENCE}, _message()),
    ("neighbors-by", pl.concat([RUN.with_columns(system=pl.lit("b")),
                                RUN.with_columns(system=pl.lit("a"))]),
     ["neighbor_recall@2"], {"neighbors": REFERENCE, "by": "system", "per_query": True},
     _message(query="1 (system='a')")),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(
    ("name", "run", "metrics", "options", "message"),
    OTHER_ROUTES,
    ids=[r[0] for r in OTHER_ROUTES],
)
def test_sampled_run_refused_by_other_routes(
    name: str, run: pl.DataFrame, metrics: list[str], options: dict[str, Any], message: str,
    lazy: bool,
) -> None:  # fmt: skip
    table = run.lazy() if lazy else run
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collected(irm.evaluate(table, metrics, **options))


#: (id, metrics, options): one value of the column per query, evaluated as without it.
OTHER_ACCEPTED: list[tuple[str, list[str], dict[str, Any]]] = [
    ("rbo", ["rbo", "kendall_tau@2"], {"reference": RUN.filter(pl.col("sample") == 1)}),
    ("ps", ["ps_ndcg@2", "ps_precision@2"], PS),
    ("ps-per-query-buckets", ["ps_ndcg@2"], {**PS, "per_query": True, "buckets": 2}),
    ("prefs", ["prefs_avgjg", "prefs_pair_ret"], {"prefs": PREFS}),
    ("jg", ["map_avgjg"], {"qrels_jg": QRELS_JG}),
    ("neighbors", ["neighbor_recall@2"], {"neighbors": REFERENCE}),
]  # fmt: skip


@pytest.mark.parametrize("column", ["one sample", "one value per query"])
@pytest.mark.parametrize(
    ("name", "metrics", "options"), OTHER_ACCEPTED, ids=[c[0] for c in OTHER_ACCEPTED]
)
def test_one_value_per_query_is_one_ranking_other_routes(
    name: str, metrics: list[str], options: dict[str, Any], column: str
) -> None:
    run = ONE if column == "one sample" else ONE.with_columns(sample=pl.col("query_id") * 7)
    expected = irm.evaluate(ONE.drop("sample"), metrics, **options)
    assert_frame_equal(irm.evaluate(run, metrics, **options), expected)
    assert_frame_equal(irm.evaluate(run.lazy(), metrics, **options).collect(), expected)


def _lists_message(user: str = "1", n: int = 2) -> str:
    return (
        f"the recommendations' column 'sample' holds sampled rankings: user {user} has rows "
        f"under {n} of its values, and the beyond-accuracy metrics read one list per user, "
        "so they would read every sample's items as one list (a column named 'sample' is "
        "read as a stochastic policy's samples): evaluate them on one sample, e.g. "
        ".filter(pl.col('sample') == 0), or drop or rename the column if it holds no samples"
    )


RECS = RUN.rename({"query_id": "user_id", "doc_id": "item_id"})
HISTORY = INTERACTIONS.rename({"query_id": "user_id", "doc_id": "item_id"})
#: (id, recommendations, metrics, options, message): irm.beyond_accuracy (no
#: sample_id=) read a 'sample' column of several values per user as one list
#: (catalog_coverage@2 1.0, novelty@2 2.0 on RECS).
LISTS: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], str]] = [
    ("coverage-novelty", RECS, ["catalog_coverage@2", "novelty@2"],
     {"interactions": HISTORY}, _lists_message()),
    ("by-string-ids", pl.concat([RECS.with_columns(system=pl.lit("b")),
                                 RECS.with_columns(system=pl.lit("a"))])
     .with_columns(pl.col("user_id").cast(pl.String)),
     ["novelty@2"], {"interactions": HISTORY.with_columns(pl.col("user_id").cast(pl.String)),
                     "by": "system"}, _lists_message(user="'1' (system='a')")),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(
    ("name", "recs", "metrics", "options", "message"), LISTS, ids=[c[0] for c in LISTS]
)
def test_beyond_accuracy_refuses_sampled_lists(
    name: str, recs: pl.DataFrame, metrics: list[str], options: dict[str, Any], message: str,
    lazy: bool,
) -> None:  # fmt: skip
    table = recs.lazy() if lazy else recs
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collected(irm.beyond_accuracy(table, metrics, **options))


@pytest.mark.parametrize("column", ["one sample", "one value per user"])
def test_beyond_accuracy_one_value_per_user_is_one_list(column: str) -> None:
    one = RECS.filter(pl.col("sample") == 0)
    recs = one if column == "one sample" else one.with_columns(sample=pl.col("user_id") * 7)
    metrics = ["catalog_coverage@2", "novelty@2"]
    expected = irm.beyond_accuracy(one.drop("sample"), metrics, interactions=HISTORY)
    assert_frame_equal(irm.beyond_accuracy(recs, metrics, interactions=HISTORY), expected)
