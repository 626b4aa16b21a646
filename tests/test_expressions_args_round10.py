"""Round 10: the arguments of the expression functions.

* A column argument that is no name (``rank=5``, ``doc_id=None``, ``relevance=pl.col(...)``)
  reached the user as Python's or polars' own error (AttributeError, TypeError); it is the
  library's InvalidValueError naming the argument, the value and the fix. A missing
  column of ``cosine_similarity`` was polars' ColumnNotFoundError.
* numpy numbers are read as the Python numbers they equal (``k=np.int64(3)``,
  ``relevance_level=np.int64(1)``), and a metric's name shows the number
  (``dcg(log_base=10.0)@2``, not ``np.float64(10.0)``), which evaluate reads back.
* ``ece(bins=0)`` names ``bins``; ``rprec_mult(multiple=0)`` is refused; evaluate computes
  ``partial_auc``/``pap`` at a cutoff of 2**32 or more, as the expression does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MetricParameterError

DF = pl.DataFrame(
    {
        "query_id": ["a"] * 3,
        "doc_id": ["x", "y", "z"],
        "rank": [1, 2, 3],
        "score": [0.1, 5.0, 5.0],  # not the ranks' order: evaluate reads them by order="rank"
        "relevance": [0, 1, 0],
    }
)


def _not_a_name(name: str, value: str) -> str:
    return (
        f"{name} must be a column name (a str), got {value}; pass one name, e.g. {name}={name!r}"
    )


def _expression(name: str) -> str:
    return (
        f"{name} must be a column name (a str), got a polars expression; pass the column's "
        f"name, e.g. {name}={name!r}; compute a column first with .with_columns"
    )


def _name_or_expression(name: str, value: str, example: str) -> str:
    return (
        f"{name} must be a column name (a str) or a polars expression, got {value}; pass one "
        f"name, e.g. {name}={name!r}, or an expression, e.g. {name}={example}"
    )


RANK = "irm.rank_by_score()"

COLUMN_ARGUMENTS: list[tuple[str, Callable[[], Any], str]] = [
    # before: AttributeError: 'int' object has no attribute 'sort'
    ("ndcg rank=5", lambda: irm.ndcg(rank=5), _name_or_expression("rank", "5", RANK)),
    ("ndcg rank=None", lambda: irm.ndcg(rank=None), _name_or_expression("rank", "None", RANK)),
    # before: TypeError: unhashable type: 'Expr'
    (
        "ndcg relevance=col",
        lambda: irm.ndcg(relevance=pl.col("relevance")),
        _expression("relevance"),
    ),
    (
        "df.irm.ndcg relevance=col",
        lambda: DF.irm.ndcg(relevance=pl.col("relevance")),
        _expression("relevance"),
    ),
    # before: TypeError: invalid name
    ("ndcg doc_id=None", lambda: irm.ndcg(doc_id=None), _not_a_name("doc_id", "None")),
    ("ndcg relevance=3", lambda: irm.ndcg(relevance=3), _not_a_name("relevance", "3")),
    ("map doc_id=col", lambda: irm.map(doc_id=pl.col("doc_id")), _expression("doc_id")),
    ("rank_by_score(1)", lambda: irm.rank_by_score(1), _not_a_name("score", "1")),
    (
        "rank_by_score doc_id",
        lambda: irm.rank_by_score(doc_id=None),
        _not_a_name("doc_id", "None"),
    ),
    # before: TypeError: the truth value of an Expr is ambiguous
    ("dcg score=col", lambda: irm.dcg(score=pl.col("score")), _expression("score")),
    ("ndcg score=3 average", lambda: irm.ndcg(score=3, ties="average"), _not_a_name("score", "3")),
    # before: AttributeError / TypeError: invalid input for `col`
    (
        "click position=3",
        lambda: irm.click_metric("ctr", position=3),
        _not_a_name("position", "3"),
    ),
    (
        "click clicked=None",
        lambda: irm.click_metric("ctr", clicked=None),
        _not_a_name("clicked", "None"),
    ),
    (
        "click position=col",
        lambda: irm.click_metric("ctr", position=pl.col("position")),
        _expression("position"),
    ),
    (
        "click dwell=3",
        lambda: irm.click_metric("sat_click_rate", dwell=3),
        _name_or_expression("dwell", "3", "pl.col('dwell')"),
    ),
    ("auc label=3", lambda: irm.auc(label=3), _not_a_name("label", "3")),
    ("mse prediction=None", lambda: irm.mse(prediction=None), _not_a_name("prediction", "None")),
    ("gauc query_id=col", lambda: irm.gauc(query_id=pl.col("q")), _expression("query_id")),
    (
        "auc sample_weight=3",
        lambda: irm.auc(sample_weight=3),
        "sample_weight must be a column name (a str or None), got 3; pass a name",
    ),
    (
        "cosine a=3",
        lambda: irm.cosine_similarity(3, "d"),
        _name_or_expression("a", "3", "pl.col('embedding')"),
    ),
]


@pytest.mark.parametrize(
    ("call", "message"),
    [(call, message) for _, call, message in COLUMN_ARGUMENTS],
    ids=[name for name, _, _ in COLUMN_ARGUMENTS],
)
def test_a_column_argument_that_is_no_name_is_refused(
    call: Callable[[], Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call()


def test_trec_ndcg_refuses_gains_that_are_no_mapping() -> None:
    # before: AttributeError: 'list' object has no attribute 'items'
    message = (
        "metric 'irm.trec_ndcg(...)': gains must be a mapping of label to gain or a string "
        "of label=gain pairs, got [1, 2]; pass e.g. gains={1: 3, 2: 9} or gains='1=3,2=9'"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.trec_ndcg(gains=[1, 2])


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("option", ["a", "b"])
def test_cosine_similarity_refuses_a_missing_column_as_the_library(
    lazy: bool, option: str
) -> None:
    frame = pl.DataFrame({"q": [[1.0, 0.0]], "d": [[2.0, 0.0]]})
    names = {"a": "q", "b": "d", option: "nope"}
    message = (
        "column 'nope' not found in the frame: the metric reads its embeddings from it; "
        f"name yours with irm.cosine_similarity({option}=...)"
    )
    expr = irm.cosine_similarity(names["a"], names["b"])
    source = frame.lazy() if lazy else frame
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        source.select(expr).lazy().collect()
    assert frame.select(irm.cosine_similarity("q", "d")).item() == 1.0


LOG = pl.DataFrame(
    {
        "query_id": ["q"] * 4,
        "doc_id": ["a", "b", "b", "a"],
        "rank": [1, 2, 1, 2],
        "clicked": [1, 0, 1, 1],  # rank 2 clicked once: EM refuses a rank never clicked
    }
)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # before: TypeError: 'float' object cannot be interpreted as an integer
        (
            {"max_iter": 2.5},
            "max_iter must be a whole number >= 1, got 2.5; pass the most EM iterations, "
            "e.g. max_iter=100 (the default)",
        ),
        (
            {"max_iter": "3"},
            "max_iter must be a whole number >= 1, got '3'; pass the most EM iterations, "
            "e.g. max_iter=100 (the default)",
        ),
        (
            {"tol": float("nan")},
            "tol must be a number >= 0, got nan; pass the change below which EM stops, "
            "e.g. tol=1e-10 (the default)",
        ),
    ],
    ids=["max_iter float", "max_iter text", "tol nan"],
)
def test_position_bias_refuses_em_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.position_bias(LOG, **options)


def test_position_bias_reads_numpy_numbers() -> None:
    # before: max_iter=np.int64(5) was refused as no number
    plain = irm.position_bias(LOG, max_iter=5, tol=0.001)
    numpy = irm.position_bias(LOG, max_iter=np.int64(5), tol=np.float32(0.001))
    assert numpy.equals(irm.position_bias(LOG, max_iter=5, tol=float(np.float32(0.001))))
    assert numpy.columns == plain.columns


NUMPY_EXPRESSIONS: list[tuple[str, Callable[[], pl.Expr], Callable[[], pl.Expr]]] = [
    ("ndcg k", lambda: irm.ndcg(k=np.int64(3)), lambda: irm.ndcg(k=3)),
    ("rbp k", lambda: irm.rbp(k=np.int32(2)), lambda: irm.rbp(k=2)),
    ("rbp p", lambda: irm.rbp(p=np.float64(0.5)), lambda: irm.rbp(p=0.5)),
    ("f1 beta", lambda: irm.f1(beta=np.int64(2)), lambda: irm.f1(beta=2)),
    ("err max_grade", lambda: irm.err(max_grade=np.int64(4)), lambda: irm.err(max_grade=4)),
    (
        "precision level",
        lambda: irm.precision(relevance_level=np.int64(2)),
        lambda: irm.precision(relevance_level=2),
    ),
    (
        "dcg log_base",
        lambda: irm.dcg(k=2, log_base=np.float64(10)),
        lambda: irm.dcg(k=2, log_base=10.0),
    ),
]


@pytest.mark.parametrize(
    ("numpy", "plain"),
    [(numpy, plain) for _, numpy, plain in NUMPY_EXPRESSIONS],
    ids=[name for name, _, _ in NUMPY_EXPRESSIONS],
)
def test_expressions_read_numpy_numbers(
    numpy: Callable[[], pl.Expr], plain: Callable[[], pl.Expr]
) -> None:
    got, want = DF.select(numpy()), DF.select(plain())
    assert got.equals(want)
    # the name is one evaluate reads back, to the same value
    (name,) = got.columns
    assert "np." not in name
    back = irm.evaluate(DF, [name], qrels=None, order="rank")  # as the expressions
    assert back.item(0, name) == got.item()


def test_dcg_named_by_a_numpy_base_is_read_back_by_evaluate() -> None:
    # before: 'dcg(log_base=np.float64(10.0))@2', which evaluate cannot parse
    got = DF.select(irm.dcg(k=2, log_base=np.float64(10)))
    assert got.columns == ["dcg(log_base=10.0)@2"]
    back = irm.evaluate(DF, ["dcg(log_base=10.0)@2"], qrels=None, order="rank")
    assert back.item(0, "dcg(log_base=10.0)@2") == got.item()


def test_ece_reads_numpy_bins() -> None:
    frame = pl.DataFrame({"label": [0, 1], "prediction": [0.2, 0.7]})
    assert frame.select(irm.ece(bins=np.int64(5))).equals(frame.select(irm.ece(bins=5)))


@pytest.mark.parametrize(
    "options",
    [{"relevance_level": np.int64(1)}, {"depth": np.int64(2)}, {"relevance_level": np.int32(2)}],
    ids=["relevance_level int64", "depth", "relevance_level int32"],
)
def test_evaluate_reads_numpy_options(options: dict[str, Any]) -> None:
    # before: "relevance_level must be a number, got np.int64(1)" (np.float64 accepted)
    plain = {name: int(value) for name, value in options.items()}
    metrics = ["ndcg", "precision@2", "map"]
    got = irm.evaluate(DF, metrics, qrels=None, order="rank", **options)
    assert got.equals(irm.evaluate(DF, metrics, qrels=None, order="rank", **plain))


ECE = "metric 'irm.ece(...)': bins must be a positive integer or None, got 0"


@pytest.mark.parametrize(
    "call",
    [
        lambda: irm.ece(bins=0),
        lambda: pl.DataFrame({"label": [0, 1], "prediction": [0.2, 0.7]}).irm.ece(bins=0),
    ],
    ids=["irm.ece", "df.irm.ece"],
)
def test_ece_names_bins(call: Callable[[], Any]) -> None:
    # before: "... k must be a positive integer or None, got 0"
    with pytest.raises(MetricParameterError, match=f"^{re.escape(ECE)}$"):
        call()


def _multiple(shown: str, value: str) -> str:
    return (
        f"metric {shown!r}: multiple must be a number above 0 (the precision is taken at rank "
        f"multiple * R, R the relevant documents), got {value}, e.g. rprec_mult(multiple=0.2), "
        "rprec_mult@0.2 or Rprec_mult_0.20"
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: irm.rprec_mult(multiple=-1), _multiple("irm.rprec_mult(...)", "-1.0")),
        (lambda: irm.rprec_mult(multiple=0), _multiple("irm.rprec_mult(...)", "0.0")),
        (
            lambda: irm.evaluate(DF, ["rprec_mult(multiple=-1)"], qrels=None),
            _multiple("rprec_mult(multiple=-1)", "-1.0"),
        ),
        (
            lambda: irm.evaluate(DF, ["rprec_mult(multiple=0)"], qrels=None),
            _multiple("rprec_mult(multiple=0)", "0.0"),
        ),
    ],
    ids=["expression -1", "expression 0", "evaluate -1", "evaluate 0"],
)
def test_rprec_mult_refuses_a_multiple_not_above_zero(
    call: Callable[[], Any], message: str
) -> None:
    # before: accepted, 0.0 for every query
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        call()


@pytest.mark.parametrize("metric", ["partial_auc", "pap"])
@pytest.mark.parametrize("k", [3, 2**31, 2**32, 2**40, 2**60])
def test_partial_auc_at_a_huge_cutoff_is_computed_alike(metric: str, k: int) -> None:
    # before: evaluate refused k >= 2**32 as "column 'relevance' ... rescale the labels"
    name = f"{metric}@{k}"
    expression = DF.group_by("query_id").agg(getattr(irm, metric)(k=k)).item(0, name)
    for engine in ("in-memory", "streaming"):
        got = irm.evaluate(DF.lazy(), [name], qrels=None, order="rank").collect(engine=engine)
        assert got.item(0, name) == expression
    assert expression == pytest.approx(1 - 1 / k if k > 3 else 2 / 3, rel=1e-15)
