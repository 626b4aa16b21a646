"""The ``.irm`` namespace on DataFrame and LazyFrame, and the expression functions."""

from __future__ import annotations

import inspect
import math
import re

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.namespace import IrmFrameNamespace, IrmLazyFrameNamespace

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "x", "d"], "relevance": [1, 2, 1]}
)

# method -> (kwargs, metric name for evaluate): every metric method
METHODS = {
    "precision": ({"k": 2}, "precision@2"),
    "recall": ({"k": 2, "denominator": "capped"}, "recall(denominator='capped')@2"),
    "f1": ({"k": 2}, "f1@2"),
    "r_precision": ({}, "r_precision"),
    "hit_rate": ({"k": 1}, "hit_rate@1"),
    "mrr": ({"k": 10}, "mrr@10"),
    "map": ({"denominator": "retrieved"}, "map(denominator='retrieved')"),
    "ndcg": ({"k": 3, "gain": "exponential"}, "ndcg(gain='exponential')@3"),
    "dcg": ({"k": 3}, "dcg@3"),
    "idcg": ({"k": 3, "ideal": "retrieved"}, "idcg(ideal='retrieved')@3"),
    "cg": ({"k": 3}, "cg@3"),
    "bpref": ({}, "bpref"),
    "num_ret": ({}, "num_ret"),
    "num_rel": ({}, "num_rel"),
    "num_rel_ret": ({"k": 2}, "num_rel_ret@2"),
    "err": ({"k": 2, "max_grade": 2}, "err(max_grade=2)@2"),
    "rbp": ({"p": 0.5}, "rbp(p=0.5)"),
    "rbp_residual": ({"k": 2}, "rbp_residual@2"),
    "arhr": ({}, "arhr"),
    "mar": ({"k": 2}, "mar@2"),
    "fcp": ({}, "fcp"),
    "judged": ({"k": 2}, "judged@2"),
    "trec_ndcg": ({"gains": "1=3,2=9"}, "trec_ndcg(gains='1=3,2=9')"),
    "iprec": ({"recall": 0.5}, "iprec(recall=0.5)"),
    "relative_precision": ({"k": 2}, "relative_precision@2"),
    "rprec_mult": ({"multiple": 2.0}, "rprec_mult(multiple=2.0)"),
    "infap": ({}, "infap"),
    "unjudged": ({"k": 2}, "unjudged@2"),
}


class Counted:
    """A LazyFrame of RUN whose rows are counted each time the plan reads them."""

    def __init__(self) -> None:
        self.reads = 0

    def frame(self, source: pl.DataFrame = RUN) -> pl.LazyFrame:
        def count(score: pl.Series) -> pl.Series:
            self.reads += 1
            return score

        return source.lazy().with_columns(
            pl.col("score").map_batches(count, return_dtype=pl.Float64)
        )


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_dataframe_method_returns_the_mean_as_float(method: str) -> None:
    kwargs, name = METHODS[method]
    value = getattr(RUN.irm, method)(qrels=QRELS, **kwargs)
    assert isinstance(value, float)
    assert value == irm.evaluate(RUN, [name], qrels=QRELS)[name].item()


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_lazyframe_method_returns_a_plan_of_the_mean(method: str) -> None:
    kwargs, name = METHODS[method]
    counted = Counted()
    plan = getattr(counted.frame().irm, method)(qrels=QRELS, **kwargs)
    assert isinstance(plan, pl.LazyFrame)
    assert counted.reads == 0  # nothing has run
    expected = irm.evaluate(RUN, [name], qrels=QRELS).select(name)
    assert_frame_equal(plan.collect(), expected)
    assert counted.reads > 0


def test_methods_pass_evaluate_options(frame_kind: str) -> None:
    frame = RUN.lazy() if frame_kind == "LazyFrame" else RUN
    qrels = QRELS.with_columns(pl.col("relevance") * 2).rename({"relevance": "label"})

    def mean(value: float | pl.LazyFrame) -> float:
        return float(value.collect().item()) if isinstance(value, pl.LazyFrame) else value

    # labels b=2, x=4 (q1), d=2 (q2): at level 2, b and d count, both at rank 2
    assert mean(frame.irm.mrr(qrels=qrels, relevance="label", relevance_level=2)) == 1 / 2
    assert mean(frame.irm.mrr(qrels=qrels, relevance="label", relevance_level=3)) == 0.0
    assert mean(frame.irm.num_ret(qrels=QRELS, depth=1)) == 1.0


def test_mean_of_no_query_is_nan_or_null(frame_kind: str) -> None:
    empty = RUN.clear()
    if frame_kind == "DataFrame":
        assert math.isnan(empty.irm.ndcg(k=10, qrels=QRELS, unretrieved="drop"))
    else:
        plan = empty.lazy().irm.ndcg(k=10, qrels=QRELS, unretrieved="drop")
        assert plan.collect().rows() == [(None,)]


def test_evaluate_methods_keep_the_frame_kind() -> None:
    assert_frame_equal(
        RUN.irm.evaluate(["map"], qrels=QRELS), irm.evaluate(RUN, ["map"], qrels=QRELS)
    )
    counted = Counted()
    lazy = counted.frame().irm.evaluate(["map"], qrels=QRELS, per_query=True)
    assert isinstance(lazy, pl.LazyFrame)
    assert counted.reads == 0
    assert lazy.collect().columns == ["query_id", "map"]


#: Two systems of one long frame, as compare and fuse take them.
SYSTEMS = pl.concat([RUN.with_columns(system=pl.lit(s)) for s in ("a", "b")]).with_columns(
    score=pl.when(pl.col("system") == "b").then(-pl.col("score")).otherwise(pl.col("score"))
)


def test_compare_keeps_the_frame_kind() -> None:
    expected = irm.compare(SYSTEMS, ["map", "P@1"], qrels=QRELS)
    assert_frame_equal(SYSTEMS.irm.compare(["map", "P@1"], qrels=QRELS), expected)
    counted = Counted()
    plan = counted.frame(SYSTEMS).irm.compare(["map", "P@1"], qrels=QRELS)
    assert isinstance(plan, pl.LazyFrame)
    assert counted.reads == 0
    assert_frame_equal(plan.collect(), expected)
    reads = counted.reads
    assert plan.collect_schema() == expected.schema
    assert_frame_equal(plan.collect(), expected)
    assert counted.reads == reads  # the comparison ran once


def test_fuse_keeps_the_frame_kind() -> None:
    expected = irm.fuse(SYSTEMS, "sum", system="system")
    assert isinstance(expected, pl.DataFrame)
    assert_frame_equal(SYSTEMS.irm.fuse("sum", system="system"), expected)
    plan = SYSTEMS.lazy().irm.fuse("sum", system="system")
    assert isinstance(plan, pl.LazyFrame)
    assert_frame_equal(plan.collect(), expected)


def test_argument_errors_are_raised_when_called(frame_kind: str) -> None:
    frame = RUN.lazy() if frame_kind == "LazyFrame" else RUN
    with pytest.raises(
        MetricParameterError,
        match=re.escape("metric 'irm.ndcg(...)': k must be a positive integer or None, got 0"),
    ):
        frame.irm.ndcg(k=0, qrels=QRELS)
    with pytest.raises(
        ColumnNotFoundError,
        match=re.escape(
            "column 'relevance' not found in the judgments (its columns: 'query_id', "
            "'doc_id'); pass the column names, e.g. relevance='label'"
        ),
    ):
        frame.irm.map(qrels=QRELS.drop("relevance"))
    with pytest.raises(
        InvalidValueError,
        match=re.escape("unjudged='x' is not a policy; choose one of 'zero', 'drop', 'error'"),
    ):
        frame.irm.precision(k=1, qrels=QRELS, unjudged="x")  # type: ignore[typeddict-item]


def test_data_errors_of_a_lazyframe_are_raised_when_collected() -> None:
    twice = pl.concat([RUN, RUN])
    message = re.escape(
        "column 'doc_id' of the run: query 'q1' has 3 repeated listing(s) "
        "(each of a document listed before in the query); each "
        "(query, document) pair may appear once (trec_eval refuses such runs too): keep one "
        "row per document, e.g. .unique(['query_id', 'doc_id'])"
    )
    with pytest.raises(DuplicateError, match=message):
        twice.irm.ndcg(k=3, qrels=QRELS)
    plan = twice.lazy().irm.ndcg(k=3, qrels=QRELS)
    with pytest.raises(DuplicateError, match=message):
        plan.collect()


@pytest.mark.parametrize("cls", [IrmFrameNamespace, IrmLazyFrameNamespace])
def test_namespace_methods_have_real_signatures_and_docstrings(cls: type) -> None:
    for name in [*METHODS, "evaluate"]:
        method = getattr(cls, name)
        assert method.__doc__, name
        assert "kwargs" not in inspect.signature(method).parameters
    assert not hasattr(cls, "__getattr__") or cls.__getattr__ is object.__getattr__


def test_every_registry_metric_has_a_namespace_method() -> None:
    expression_metrics = {
        m.name for m in irm.list_metrics() if hasattr(irm, m.name) and m.aggregate == "mean"
    }
    for name in expression_metrics:
        assert hasattr(IrmFrameNamespace, name), name


def test_expression_columns_are_canonical_names() -> None:
    table = pl.DataFrame({"query_id": ["a", "a"], "rank": [1, 2], "relevance": [1, 0]})
    out = table.group_by("query_id").agg(
        irm.recall(k=5, denominator="capped"), irm.map(k=5), irm.ndcg(gain="exponential")
    )
    assert out.columns == [
        "query_id",
        "recall(denominator='capped')@5",
        "map@5",
        "ndcg(gain='exponential')",
    ]


def test_rank_by_score_inside_a_group_by(frame_kind: str) -> None:
    table = pl.DataFrame(
        {
            "query_id": ["a", "a", "a"],
            "doc_id": ["d1", "d10", "d9"],
            "score": [1.0, 1.0, 1.0],
            "relevance": [1, 0, 0],
        }
    )
    frame = table.lazy() if frame_kind == "LazyFrame" else table
    out = frame.group_by("query_id").agg(irm.mrr(rank=irm.rank_by_score()))
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert result["mrr"].item() == 1 / 3  # d9 > d10 > d1 as text


@pytest.mark.parametrize(
    ("options", "keys"),
    [
        ({"per_query": True}, ["query_id"]),
        ({"by": "day"}, ["day"]),
        ({"systems": "day"}, ["day"]),
        ({"by": "day", "per_query": True}, ["day", "query_id"]),
    ],
    ids=["per_query", "by", "systems", "by-per_query"],
)
def test_a_metric_method_per_query_or_group_gives_the_frame(
    frame_kind: str, options: dict[str, object], keys: list[str]
) -> None:
    # one value per query or group: the keys and the values, as evaluate gives them
    # (without num_q), in the frame's kind; not polars' .item() error, not bare values
    run = RUN.with_columns(
        pl.when(pl.col("query_id") == "q1")
        .then(pl.lit("mon"))
        .otherwise(pl.lit("tue"))
        .alias("day")
    )
    qrels = QRELS.join(run.select("query_id", "day").unique(), on="query_id")
    expected = irm.evaluate(run, ["ndcg@10"], qrels=qrels, **options).drop(  # type: ignore[arg-type]
        "num_q", strict=False
    )
    assert expected.columns == [*keys, "ndcg@10"]
    if frame_kind == "LazyFrame":
        lazy = run.lazy().irm.ndcg(k=10, qrels=qrels, **options)  # type: ignore[arg-type]
        assert isinstance(lazy, pl.LazyFrame)
        got = lazy.collect()
    else:
        out = run.irm.ndcg(k=10, qrels=qrels, **options)  # type: ignore[arg-type]
        assert isinstance(out, pl.DataFrame)
        got = out
    assert_frame_equal(got.sort(keys), expected.sort(keys))


def test_a_plain_mean_is_still_one_number() -> None:
    assert (
        RUN.irm.ndcg(k=10, qrels=QRELS, per_query=False)
        == irm.evaluate(RUN, ["ndcg@10"], qrels=QRELS)["ndcg@10"].item()
    )
    assert RUN.lazy().irm.ndcg(k=10, qrels=QRELS).collect().columns == ["ndcg@10"]


def test_r_precision_takes_a_cutoff() -> None:
    """Microsoft Recommenders' r_precision_at_k through the namespace, as through the
    expression and the metric name (the method once took no k)."""
    at_1 = irm.evaluate(RUN, ["r_precision@1"], qrels=QRELS)["r_precision@1"].item()
    assert RUN.irm.r_precision(1, qrels=QRELS) == at_1
    assert RUN.irm.r_precision(k=1, qrels=QRELS) == at_1
