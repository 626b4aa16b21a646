"""Trust at the joints, fourth pass: the shapes of arguments and of values a probe of the
door found unwrapped or silently wrong (each case failed before its fix)."""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

import pandas as pd
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)

RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
)
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})


# a pandas object column whose first value is text and a later one a number: polars'
# own TypeError came through; a column name held twice: its ValueError
@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (
            pd.DataFrame({"query_id": ["q1", 1], "doc_id": ["a", "b"], "score": [1.0, 2.0]}),
            "column 'query_id' of the run (a pandas DataFrame) holds values Arrow cannot "
            "convert to one type ('int' object is not an instance of 'str'); give the "
            "column one type first: ids as text, e.g. df['query_id'].astype(str), scores "
            "and labels as numbers, e.g. df['query_id'].astype(float)",
        ),
        (
            pd.DataFrame(
                [["q1", "a", 1.0, 2.0]], columns=["query_id", "doc_id", "score", "score"]
            ),
            "the run (a pandas DataFrame) has more than one column named 'score': a polars "
            "table names each column once; keep one of them, e.g. "
            "df.loc[:, ~df.columns.duplicated()], or rename the others",
        ),
    ],
)
def test_pandas_tables_polars_cannot_take_are_refused_in_our_words(
    frame: pd.DataFrame, message: str
) -> None:
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(frame, ["mrr"], qrels=QRELS)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"score": pl.col("score")},
            "score must be a column name (a str), got a polars expression; pass the column's "
            "name, e.g. score='score'; compute a column first with .with_columns",
        ),
        (
            {"query_id": ["query_id"]},
            "query_id must be a column name (a str), got ['query_id']; pass one name, e.g. "
            "query_id='query_id'",
        ),
        (
            {"doc_id": 3},
            "doc_id must be a column name (a str), got 3; pass one name, e.g. doc_id='doc_id'",
        ),
        (
            {"sample_weight": ["w"]},
            "sample_weight must be a column name (a str or None), got ['w']; pass one name, "
            "e.g. sample_weight='w'",
        ),
    ],
)
def test_column_options_must_be_one_name(given: dict[str, Any], message: str) -> None:
    # before: Python's TypeError (an Expr's truth value, an unhashable list) or polars'
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, ["mrr"], qrels=QRELS, **given)


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        (None, "metrics must be a metric name or a list of names, got None"),
        (3, "metrics must be a metric name or a list of names, got 3"),
        ({"map": 1}, "metrics must be a metric name or a list of names, got {'map': 1}"),
        ([1], "metrics must be names (str), got 1 among them"),
        (["map", None], "metrics must be names (str), got None among them"),
    ],
)
def test_metrics_must_be_names(metrics: Any, message: str) -> None:
    full = f"{message}; pass names such as ['ndcg@10', 'map']"
    with pytest.raises(MetricParameterError, match=f"^{re.escape(full)}$"):
        irm.evaluate(RUN, metrics, qrels=QRELS)


@pytest.mark.parametrize("per_query", [False, True])
def test_a_query_column_named_as_a_metric_is_refused(per_query: bool) -> None:
    # before: polars' DuplicateError with the plan's tree
    run, qrels = (t.rename({"query_id": "map"}) for t in (RUN, QRELS))
    message = (
        "query_id='map' names the column 'map', which is also a metric's column of the "
        "result; rename the key first, e.g. run.rename({'map': 'map_id'}) (and the other "
        "tables alike), and pass query_id='map_id'"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["map"], qrels=qrels, query_id="map", per_query=per_query)


def _coverage(call: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]


def test_query_ids_that_differ_in_case_get_the_case_hint() -> None:
    # before: "only once a prefix or leading zeros are stripped", and strip_prefix('q')
    run = RUN.with_columns(pl.col("query_id").str.to_uppercase())
    said = _coverage(lambda: irm.evaluate(run, ["mrr"], qrels=QRELS))
    assert len(said) == 1
    assert said[0].endswith(
        "2 query id(s) of the run match a judged query only once case is ignored (run "
        "'Q1', judgments 'q1'): ids are compared exactly, as trec_eval compares them; give "
        "both the same spelling, e.g. pl.col('query_id').str.to_lowercase() on the run "
        "and the judgments."
    )
    prefixed = RUN.with_columns(
        pl.concat_str(pl.lit("x0"), pl.col("query_id").str.slice(1)).alias("query_id")
    )
    said = _coverage(lambda: irm.evaluate(prefixed, ["mrr"], qrels=QRELS))
    # two prefixes that differ are two names, not one spelt twice (as fusion's hints
    # read them): the plain advice, not a fix that would not give one spelling (before:
    # "pl.col('query_id').str.strip_prefix('q')", which leaves 'x01' and '1' apart)
    assert said[0].endswith(
        "Check that the run and the judgments name the same queries and documents (same "
        "collection, same id spelling)."
    )


def test_empty_judgments_with_unjudged_zero_are_not_said_to_give_no_query() -> None:
    said = _coverage(lambda: irm.evaluate(RUN, ["mrr"], qrels=QRELS.clear(), unjudged="zero"))
    out = irm.evaluate(RUN, ["mrr"], qrels=QRELS.clear(), unjudged="zero")
    assert out["num_q"].item() == 2
    assert len(said) == 1
    assert "(num_q 0; with unjudged='zero', over the run's queries, each scoring 0)" in said[0]


_RECS = pl.DataFrame(
    {"user_id": [1, 1, 2, 2], "item_id": ["a", "b", "a", "c"], "rank": [1, 2, 1, 2]}
)


def test_ragged_vectors_are_refused_before_serendipity_reads_them() -> None:
    # before: polars' ShapeError from serendipity's dot products ("list lengths differed")
    history = pl.DataFrame({"user_id": [1, 2, 2, 3], "item_id": ["c", "a", "b", "a"]})
    features = pl.DataFrame(
        {"item_id": ["a", "b", "c"], "features": [[1.0], [0.0, 1.0], [1.0, 1.0]]}
    )
    message = (
        "the feature vectors in item_features differ in length (1 and 2): give every item "
        "a vector of the same length"
    )
    for metric in ("serendipity", "intra_list_diversity"):
        tables = {"item_features": features}
        if metric == "serendipity":
            tables["interactions"] = history
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.beyond_accuracy(_RECS, [metric], **tables)


@pytest.mark.parametrize("scale", [1e155, 1e300, 1e-160, 1e-170, 1e-300, 5e-324])
def test_cosine_similarity_reads_directions_at_any_scale(scale: float) -> None:
    # before: 1e155 overflowed (|v| inf: ild 1.0), 1e-160 lost digits, 1e-170 was refused
    # as a zero vector
    def ild(s: float) -> float:
        features = pl.DataFrame(
            {"item_id": ["a", "b", "c"], "features": [[s, s], [0.0, s], [s, 0.0]]}
        )
        out = irm.beyond_accuracy(_RECS, ["intra_list_diversity"], item_features=features)
        return float(out.item())

    # users 1 (a, b) and 2 (a, c): each pair's cosine is 1/sqrt(2)
    expected = 1 - 1 / math.sqrt(2)
    assert ild(1.0) == pytest.approx(expected, abs=1e-15)
    assert ild(scale) == ild(1.0)


def test_the_duplicate_fix_names_the_users_query_column() -> None:
    # before: ".unique([query_id, 'docno'])", the option's name unquoted
    run = pl.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "a"], "score": [1.0, 2.0]})
    qrels = pl.DataFrame({"qid": ["q1"], "docno": ["a"], "relevance": [1]})
    message = (
        "column 'docno' of the run: query 'q1' has 1 repeated listing(s) "
        "(each of a document listed before in the query); each "
        "(query, document) pair may appear once (trec_eval refuses such runs too): keep one "
        "row per document, e.g. .unique(['qid', 'docno'])"
    )
    propensities = pl.DataFrame({"docno": ["a"], "propensity": [0.5]})
    for metrics, tables in (
        (["map"], {}),
        (["ee_relevance"], {}),
        (["ps_precision@5"], {"propensities": propensities}),
    ):
        with pytest.raises(DuplicateError, match=f"^{re.escape(message)}$"):
            irm.evaluate(run, metrics, qrels=qrels, query_id="qid", doc_id="docno", **tables)


_JG_RUN = pl.DataFrame(
    {"query_id": [9, 10, 10], "doc_id": ["a", "a", "b"], "score": [1.0, 2.0, 1.0]}
)
_JG = pl.DataFrame(
    {"query_id": [9, 10, 10], "jg": [1, 1, 2], "doc_id": ["a", "a", "b"], "relevance": [1, 1, 1]}
)


@pytest.mark.parametrize("run_dtype", [pl.Int64, pl.Int32, pl.UInt16])
def test_judgment_group_measures_give_the_ids_back_in_their_dtype(run_dtype: Any) -> None:
    # before: the query ids as text, sorted as text ('10' before '9')
    run = _JG_RUN.with_columns(pl.col("query_id").cast(run_dtype))
    got = irm.evaluate(run, ["map_avgjg", "P_avgjg_5"], qrels_jg=_JG, per_query=True)
    ranking = irm.evaluate(run, ["map"], qrels=_JG.drop("jg"), per_query=True)
    assert got.schema["query_id"] == ranking.schema["query_id"] == pl.Int64
    # q10: map 1 against group 1 (a at rank 1), 1/2 against group 2 (b at rank 2)
    assert got.rows() == [(9, 1.0, 0.2), (10, 0.75, 0.2)]


def test_judgment_groups_refuse_ids_of_another_kind() -> None:
    # before: matched as text where evaluate's ranking metrics refuse
    message = (
        "column 'query_id' holds integers in the run (Int64) but strings in the qrels_jg "
        "(String); cast one side, e.g. pl.col('query_id').cast(pl.String) on both"
    )
    text = _JG.with_columns(pl.col("query_id").cast(pl.String))
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(_JG_RUN, ["map_avgjg"], qrels_jg=text)


def test_int128_ids_beyond_int64_beside_int64_judgments() -> None:
    # before: polars' InvalidOperationError (the ids cast to Int64)
    big = 2**70
    run = pl.DataFrame(
        {"query_id": pl.Series([big, big, 1], dtype=pl.Int128), "doc_id": ["a", "b", "a"],
         "score": [1.0, 2.0, 1.0]}
    )  # fmt: skip
    qrels = pl.DataFrame({"query_id": [1], "doc_id": ["a"], "relevance": [1]})
    got = irm.evaluate(run, ["map"], qrels=qrels, per_query=True, unretrieved="drop")
    assert got.schema["query_id"] == pl.Int128
    assert got.rows() == [(1, 1.0)]


# a null group in groups=: rND took it as the minority group (every value NaN), awrf and
# the expected exposure as a group of its own, where the guide says a document in no
# group is unprotected, and intersectional groups leave out a document a dimension of
# which is null: a null group is no group now, on every measure
_EX_RUN = pl.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abcd"), "rank": [1, 2, 3, 4]})
_EX_QRELS = pl.DataFrame(
    {"query_id": ["q"] * 4, "doc_id": list("abcd"), "relevance": [1, 0, 1, 1]}
)
_NULL_GROUP = pl.DataFrame({"doc_id": list("abcd"), "group": ["g1", None, "g2", "g2"]})


@pytest.mark.parametrize(
    "metrics", [["rnd"], ["rkl", "rrd"], ["awrf"], ["awrf_ndcg"], ["ee_loss", "ee_relevance"]]
)
@pytest.mark.parametrize("buckets", [None, 2])
def test_a_null_group_is_no_group(metrics: list[str], buckets: int | None) -> None:
    qrels = None if metrics[0].startswith("r") else _EX_QRELS
    kw: dict[str, Any] = {"qrels": qrels, "buckets": buckets, "per_query": True}
    got = irm.evaluate(_EX_RUN, metrics, groups=_NULL_GROUP, **kw)
    want = irm.evaluate(_EX_RUN, metrics, groups=_NULL_GROUP.drop_nulls(), **kw)
    assert got.equals(want)
    # rND's worked example (docs/guides/fairness.md): 0.2 with the null's row or without
    n = 20
    ranking = pl.DataFrame(
        {"query_id": ["q"] * n, "doc_id": list(range(1, n + 1)), "rank": list(range(1, n + 1))}
    )
    group = ["w" if d in (2, 3, 4, 12, 20) else "m" for d in range(1, n + 1)]
    held = pl.DataFrame({"doc_id": list(range(1, n + 1)), "group": [None, *group[1:]]})
    assert irm.evaluate(ranking, ["rnd"], groups=held)["rnd"].item() == pytest.approx(0.2)


@pytest.mark.parametrize(
    "sample", [pl.Series([1, 1, None, None]), pl.Series([1.0, 1.0, float("nan"), float("nan")])]
)
def test_a_null_or_nan_sample_is_named(sample: pl.Series) -> None:
    # before: "column 'rank' of the run: query 'q' has 2 duplicate rank(s)" (the null
    # and NaN rows one ranking beside the first); the NaN ones scored as a sample
    run = pl.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abab"), "rank": [1, 2, 1, 2]})
    message = (
        "column 'sample' of the run has null (or NaN) values in query 'q'; each row belongs "
        "to one sampled ranking: fill or drop those rows"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run.with_columns(sample.alias("sample")), ["ee_loss"], qrels=_EX_QRELS)
