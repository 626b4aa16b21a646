"""A metric's parameter is declared once (``Param`` in the registry); the expression
functions (``irm.ndcg(...)``) and the namespace methods (``df.irm.ndcg(...)``) keep
hand-written signatures, as polars does, and are held here against the declaration:
the same names, the same defaults and, for a ``Literal``, the same choices."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from polars_irmetrics import expressions, namespace
from polars_irmetrics.metrics.registry import get_metric
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
