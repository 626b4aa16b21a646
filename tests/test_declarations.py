"""A metric's parameter is declared once (``Param`` in the registry); the expression
functions (``irm.ndcg(...)``) and the namespace methods (``df.irm.ndcg(...)``) keep
hand-written signatures, as polars does, and are held here against the declaration:
the same names, the same defaults and, for a ``Literal``, the same choices."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from polars_irmetrics import expressions, namespace
from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics.registry import get_metric, list_metrics, parse_metric
from polars_irmetrics.metrics.spec import Param

#: Keywords that are not a metric's own parameter: the cutoff, the relevance level, the
#: columns, and the namespace's evaluation options.
COMMON = {
    "self",
    "k",
    "relevance_level",
    "relevance",
    "rank",
    "doc_id",
    "score",
    "label",
    "prediction",
    "sample_weight",
    "positive_label",
    "query_id",
    "bins",  # ece's number of bins: its cutoff, ece@bins
}
#: Declared parameters that only a metric name takes (``"map(relevancy_method=
#: 'by_threshold', threshold=5)@10"``): Microsoft Recommenders' selection of the
#: recommendations that count, which an expression over one ranking does not offer.
NAME_ONLY = {"relevancy_method", "threshold"}


def _own(function: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    return {
        name: p
        for name, p in inspect.signature(function).parameters.items()
        if name not in COMMON and p.kind is not inspect.Parameter.VAR_KEYWORD
    }


def _choices(annotation: object, module: ModuleType) -> tuple[object, ...] | None:
    """The values of a ``Literal`` annotation (also inside a union), else ``None``."""
    if isinstance(annotation, str):
        annotation = eval(annotation, vars(module))  # the module's own names
    parts = (
        typing.get_args(annotation) if typing.get_origin(annotation) is not typing.Literal else ()
    )
    literals = [a for a in (annotation, *parts) if typing.get_origin(a) is typing.Literal]
    if not literals:
        return None
    return tuple(v for literal in literals for v in typing.get_args(literal))


def _signatures() -> list[tuple[str, ModuleType, Callable[..., Any]]]:
    found: list[tuple[str, ModuleType, Callable[..., Any]]] = []
    for name in expressions.__all__:
        function = getattr(expressions, name)
        if inspect.isfunction(function) and name != "rank_by_score":
            found.append((f"irm.{name}", expressions, function))
    for name, method in inspect.getmembers(namespace._Namespace, inspect.isfunction):
        if not name.startswith("_") and name not in ("evaluate", "compare"):
            found.append((f"df.irm.{name}", namespace, method))
    return found


SIGNATURES = _signatures()


def test_every_signature_is_checked() -> None:
    names = {shown for shown, _, _ in SIGNATURES}
    assert {"irm.ndcg", "irm.rbp", "df.irm.ndcg", "df.irm.auc", "df.irm.iprec"} <= names


@pytest.mark.parametrize(
    ("shown", "module", "function"), SIGNATURES, ids=[s for s, _, _ in SIGNATURES]
)
def test_signature_matches_the_declaration(
    shown: str, module: ModuleType, function: Callable[..., Any]
) -> None:
    metric = get_metric(shown.rsplit(".", 1)[-1])
    declared: dict[str, Param] = {p.name: p for p in metric.params}
    own = _own(function)
    assert set(own) == set(declared) - NAME_ONLY, shown
    for name, parameter in own.items():
        param = declared[name]
        if parameter.default is not inspect.Parameter.empty:  # a required value: no default
            assert parameter.default == param.default, f"{shown}: {name}"
        choices = _choices(parameter.annotation, module)
        if param.choices is not None:
            assert choices is not None, f"{shown}: {name} is not a Literal of its choices"
            assert set(choices) == set(param.choices), f"{shown}: {name}"
        else:
            assert choices is None, f"{shown}: {name} has choices it does not declare"


@pytest.mark.parametrize(
    ("shown", "module", "function"), SIGNATURES, ids=[s for s, _, _ in SIGNATURES]
)
def test_the_cutoff_is_taken_where_the_metric_takes_one(
    shown: str, module: ModuleType, function: Callable[..., Any]
) -> None:
    """``k`` in the signature exactly where the metric's name takes ``@k`` (the
    namespace's r_precision once lacked it, though irm.r_precision and
    'r_precision@1' take it); ece's cutoff is its ``bins``."""
    metric = get_metric(shown.rsplit(".", 1)[-1])
    parameters = inspect.signature(function).parameters
    takes = "k" in parameters or (metric.name == "ece" and "bins" in parameters)
    assert takes == (metric.cutoff in ("optional", "required")), shown


#: A parameter's own check (``Param.check``) runs when the name is parsed, before any
#: plan: (metric string, the message).
CHECKED: list[tuple[str, str]] = [
    (
        "f1(beta=-1)@10",
        "metric 'f1(beta=-1)@10': beta must be a number >= 0, the weight of recall against "
        "precision, got -1, e.g. f1(beta=0.5)@10 (1: the harmonic mean)",
    ),
    (
        "f1_beta(beta=1e200)@10",
        "metric 'f1_beta(beta=1e200)@10': beta must be a number from 0 to 1e150, the weight "
        "of recall (RecTools' F1Beta(beta=...); squared in the formula), got 1e+200, e.g. "
        "f1_beta(beta=2)@10 (1: the harmonic mean)",
    ),
    (
        "dcg(log_base=1)@10",
        "metric 'dcg(log_base=1)@10': log_base must be a number above 1 (the discount is "
        "1 / log_b(r + 1)), got 1, e.g. log_base=10",
    ),
    (
        "precision(adaptive_k='maybe')@10",
        "metric \"precision(adaptive_k='maybe')@10\": adaptive_k must be True or False, got "
        "'maybe'",
    ),
    (
        "trec_ndcg(gains='x')",
        "metric \"trec_ndcg(gains='x')\": gains='x': cannot read 'x'; write label=gain pairs "
        "with integer labels >= 0, e.g. gains='1=3,2=9'",
    ),
    (
        "11pt_avg(recalls='a')",
        "metric \"11pt_avg(recalls='a')\": recalls='a': cannot read 'a'; write recall levels "
        "separated by commas, e.g. recalls='0.25,0.5,0.75'",
    ),
    (
        "rprec_mult(multiple='x')",
        "metric \"rprec_mult(multiple='x')\": multiple must be a number, e.g. "
        "rprec_mult(multiple=0.2), rprec_mult@0.2 or Rprec_mult_0.20; got 'x'",
    ),
    (
        "trec_rbp(p=1.5)",
        "metric 'trec_rbp(p=1.5)': p must be a probability between 0 and 1, got 1.5",
    ),
    (
        "utility(rel_ret='a')",
        "metric \"utility(rel_ret='a')\": rel_ret must be a number, got 'a'",
    ),
    (
        "utility(collection=inf)",
        "metric 'utility(collection=inf)': collection must be a number, got inf",
    ),
    (
        "neighbor_recall(epsilon=-1)@1",
        "metric 'neighbor_recall(epsilon=-1)@1': epsilon must be a number >= 0, got -1",
    ),
    (
        "neighbor_recall_rel(epsilon='x')@1",
        "metric \"neighbor_recall_rel(epsilon='x')@1\": epsilon must be a number >= 0, got 'x'",
    ),
    (
        "rbp(p=1)",
        "metric 'rbp(p=1)': p must be a number between 0 and 1 (exclusive), got 1",
    ),
    (
        "rbp_residual(p=-0.5)",
        "metric 'rbp_residual(p=-0.5)': p must be a number between 0 and 1 (exclusive), got -0.5",
    ),
    (
        "err(max_grade=inf)",
        "metric 'err(max_grade=inf)': max_grade must be a number > 0, got inf",
    ),
    (
        "categorical_diversity(category=3)@5",
        "metric 'categorical_diversity(category=3)@5': category must name the column of "
        "item_features that holds each item's category, e.g. "
        "categorical_diversity(category='genre')@10; got 3",
    ),
    (
        "aplt(head=0)",
        "metric 'aplt(head=0)': head must be a number between 0 and 1 (exclusive), the share "
        "of interactions held by the popular head, got 0",
    ),
    (
        "sat_click_rate(dwell_threshold=-1)",
        "metric 'sat_click_rate(dwell_threshold=-1)': dwell_threshold must be a number of "
        "seconds >= 0, got -1, e.g. sat_click_rate(dwell_threshold=30)",
    ),
    (
        "click_mrr(signal='satisfied', dwell_threshold=-1)",
        "metric \"click_mrr(signal='satisfied', dwell_threshold=-1)\": dwell_threshold must "
        "be a number of seconds >= 0, got -1, e.g. sat_click_rate(dwell_threshold=30)",
    ),
    # Metric.check_params: dwell_threshold only with the signal that reads it
    (
        "click_precision(dwell_threshold=10)@5",
        "metric 'click_precision(dwell_threshold=10)@5': dwell_threshold=10 applies only "
        "with signal='satisfied' (a click counts whatever its dwell otherwise); add it, e.g. "
        "click_precision(signal='satisfied',dwell_threshold=10), or drop dwell_threshold",
    ),
    (
        "iprec(recall=2)",
        "metric 'iprec(recall=2)': recall must be a recall level between 0 and 1, got 2.0: "
        "the number after '@' in iprec@x (ir_measures' IPrec@x) and iprec_at_recall_x is the "
        "recall level, not a rank cutoff, e.g. iprec(recall=0.2), iprec@0.2 or "
        "iprec_at_recall_0.20; for the precision of the top documents use 'P@2'",
    ),
    (
        "rprec_mult_avgjg(multiple=inf)",
        "metric 'rprec_mult_avgjg(multiple=inf)': multiple must be a finite number, got inf",
    ),
    # RecTools' (issue 42, tests/test_rectools_more.py)
    (
        "serendipity(kind='kotkov', n_items=0)",
        "metric \"serendipity(kind='kotkov', n_items=0)\": n_items must be a number >= 1, "
        "the catalogue size (RecTools' len(catalog)), got 0",
    ),
    (
        "intersection(ref_k=0.5)@2",
        "metric 'intersection(ref_k=0.5)@2': ref_k must be a whole number >= 1, the "
        "reference's cutoff (RecTools' ref_k; by default the request's k), got 0.5",
    ),
    (
        "ee_loss(patience=1)",
        "metric 'ee_loss(patience=1)': patience must be a number strictly between 0 and 1 "
        "(expeval's -p), got 1",
    ),
    (
        "pop_rsp(pop_ratio=1.5)@10",
        "metric 'pop_rsp(pop_ratio=1.5)@10': pop_ratio must be a number between 0 and 1 "
        "(exclusive), the share of training interactions held by the short head, got 1.5, "
        "e.g. pop_ratio=0.8 (Elliot's default)",
    ),
    (
        "rkl(protected=1.5)",
        "metric 'rkl(protected=1.5)': protected must name a group (a string or an integer), "
        "got 1.5",
    ),
]


@pytest.mark.parametrize(("name", "message"), CHECKED, ids=[n for n, _ in CHECKED])
def test_a_declared_check_refuses_at_parse_time(name: str, message: str) -> None:
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        parse_metric(name)


def test_a_check_across_parameters_refuses_at_parse_time() -> None:
    """``Metric.check_params``: Recommenders' threshold only with by_threshold."""
    message = (
        "metric 'ndcg(threshold=3)@2': threshold=3 applies only with "
        "relevancy_method='by_threshold'; add it, e.g. ndcg(relevancy_method='by_threshold',"
        "threshold=3)@10, or drop threshold"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        parse_metric("ndcg(threshold=3)@2")


def test_every_checked_parameter_has_a_case() -> None:
    """Each declared check is exercised above, directly or through the one ``Param``
    another metric shares (a new check adds its row)."""
    tested = [get_metric(name.split("(")[0]) for name, _ in CHECKED]
    for metric in list_metrics():
        for param in metric.params:
            if param.check is None or metric.name in {m.name for m in tested}:
                continue
            sharing = [m.name for m in tested if any(q is param for q in m.params)]
            assert sharing, f"{metric.name}({param.name}=...) has a check and no case"
