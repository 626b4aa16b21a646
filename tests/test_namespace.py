"""The ``.irm`` namespace on DataFrame and LazyFrame, and the expression functions."""

from __future__ import annotations

import inspect
import math

import polars as pl
import pytest

import polars_irmetrics as irm
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

# method -> (kwargs, metric name for evaluate)
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
}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_each_method_returns_the_mean_as_float(frame_kind: str, method: str) -> None:
    kwargs, name = METHODS[method]
    frame = RUN.lazy() if frame_kind == "LazyFrame" else RUN
    value = getattr(frame.irm, method)(qrels=QRELS, **kwargs)
    assert isinstance(value, float)
    expected = irm.evaluate(RUN, [name], qrels=QRELS)[name].item()
    assert value == pytest.approx(expected, abs=1e-15)


def test_methods_pass_evaluate_options(frame_kind: str) -> None:
    frame = RUN.lazy() if frame_kind == "LazyFrame" else RUN
    qrels = QRELS.with_columns(pl.col("relevance") * 2).rename({"relevance": "label"})
    # labels b=2, x=4 (q1), d=2 (q2): at level 2, b and d count, both at rank 2
    assert frame.irm.mrr(qrels=qrels, relevance="label", relevance_level=2) == 1 / 2
    assert frame.irm.mrr(qrels=qrels, relevance="label", relevance_level=3) == 0.0
    assert frame.irm.num_ret(qrels=QRELS, depth=1) == 1.0


def test_mean_of_no_query_is_nan(frame_kind: str) -> None:
    empty = RUN.clear()
    frame = empty.lazy() if frame_kind == "LazyFrame" else empty
    assert math.isnan(frame.irm.ndcg(k=10, qrels=QRELS, unretrieved="drop"))


def test_evaluate_methods_keep_the_frame_kind() -> None:
    assert isinstance(RUN.irm.evaluate(["map"], qrels=QRELS), pl.DataFrame)
    lazy = RUN.lazy().irm.evaluate(["map"], qrels=QRELS, per_query=True)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().columns == ["query_id", "map"]


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
