"""Bad inputs shared by the reliability tests, and one spelling of every registered metric."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_irmetrics.errors import DuplicateError, InvalidValueError, IrmError
from polars_irmetrics.metrics.registry import list_metrics
from polars_irmetrics.metrics.spec import Metric

#: Values for the parameters that have no default.
REQUIRED_PARAMS = {"recall": "0.5", "multiple": "0.5"}


def spelling(metric: Metric) -> str:
    """A name that parses to ``metric`` with its defaults (a cutoff or value where needed)."""
    needed = [p for p in metric.params if p.default is None and p.name in REQUIRED_PARAMS]
    name = metric.name
    if needed:
        name += "(" + ", ".join(f"{p.name}={REQUIRED_PARAMS[p.name]}" for p in needed) + ")"
    if metric.cutoff == "required":
        name += "@5"
    return name


#: Every registered metric that ``evaluate`` computes from a run and judgments, once
#: each: click metrics read an impression log (``evaluate_online``) and beyond-accuracy
#: metrics a recommendation table's history (``beyond_accuracy``), with checks of their own.
EVERY_METRIC = [
    spelling(m)
    for m in list_metrics()
    if set(m.reads) <= {"run", "judgments"} and m.level == "query"
]

NAN, INF = float("nan"), float("inf")


def run_frame(**overrides: Any) -> pl.DataFrame:
    """Two queries: q1 retrieves a, b, c; q2 retrieves a, d."""
    data: dict[str, Any] = {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
    data.update(overrides)
    return pl.DataFrame(data)


def qrels_frame(**overrides: Any) -> pl.DataFrame:
    data: dict[str, Any] = {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["b", "x", "d"],
        "relevance": [1.0, 2.0, 0.0],
    }
    data.update(overrides)
    return pl.DataFrame(data)


@dataclass(frozen=True)
class BadInput:
    """A run and its judgments with one problem, and the error every metric must raise."""

    name: str
    build: Callable[[], tuple[pl.DataFrame, dict[str, Any]]]
    error: type[IrmError]
    message: str


_LABEL = (
    "column 'relevance' of the judgments has 1 label(s) that are NaN, infinite, of "
    "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in "
    "query 'q1'; a relevance label must be 0 or a finite number of magnitude in "
    "[2**-30, 2**32) (what evaluate's exact sums hold), and not between -1 and 0 "
    "(unjudged here, judged non-relevant by trec_eval, which truncates it to 0): "
    "replace or drop them, or rescale the labels"
)


def _ranked(rank: list[int | None] | None = None, **overrides: Any) -> pl.DataFrame:
    return run_frame(rank=rank or [1, 2, 3, 1, 2], **overrides).drop("score")


BAD_INPUTS = [
    *(
        BadInput(
            f"label {value!r}",
            lambda value=value: (run_frame(), {"qrels": qrels_frame(relevance=[value, 2.0, 0.0])}),
            InvalidValueError,
            _LABEL,
        )
        for value in (NAN, INF, -INF, 2.0**32, -(2.0**40))
    ),
    BadInput(
        "NaN label of a judged document no run retrieves",
        lambda: (run_frame(), {"qrels": qrels_frame(relevance=[1.0, NAN, 0.0])}),
        InvalidValueError,
        _LABEL,
    ),
    BadInput(
        "NaN label in a judged table",
        lambda: (_ranked(relevance=[NAN, 1.0, 0.0, 0.0, 1.0]), {}),
        InvalidValueError,
        _LABEL.replace("of the judgments", "of the judged table"),
    ),
    BadInput(
        "null label",
        lambda: (run_frame(), {"qrels": qrels_frame(relevance=[None, 2.0, 0.0])}),
        InvalidValueError,
        "column 'relevance' of the judgments has 1 null value(s) in query 'q1'; every judged "
        "document needs a relevance label: fill them (e.g. .fill_null(0)) or drop them",
    ),
    BadInput(
        "null query id in the run",
        lambda: (run_frame(query_id=["q1", None, "q1", "q2", "q2"]), {"qrels": qrels_frame()}),
        InvalidValueError,
        "column 'query_id' of the run has null values; every row needs a query_id: drop "
        "them, e.g. .drop_nulls('query_id')",
    ),
    BadInput(
        "null query id in the judgments",
        lambda: (run_frame(), {"qrels": qrels_frame(query_id=["q1", None, "q2"])}),
        InvalidValueError,
        "column 'query_id' of the judgments has null values; every row needs a query_id: "
        "drop them, e.g. .drop_nulls('query_id')",
    ),
    BadInput(
        "null query ids on both sides",
        lambda: (
            run_frame(query_id=["q1", None, "q1", "q2", "q2"]),
            {"qrels": qrels_frame(query_id=["q1", None, "q2"])},
        ),
        InvalidValueError,
        "column 'query_id' of the run has null values",
    ),
    BadInput(
        "null document id in the run",
        lambda: (run_frame(doc_id=["a", "b", None, "a", "d"]), {"qrels": qrels_frame()}),
        InvalidValueError,
        "column 'doc_id' of the run has 1 null value(s) in query 'q1'; every row needs a "
        "document id: drop them, e.g. .drop_nulls('doc_id')",
    ),
    BadInput(
        "null document id in the judgments",
        lambda: (run_frame(), {"qrels": qrels_frame(doc_id=["b", None, "d"])}),
        InvalidValueError,
        "column 'doc_id' of the judgments has 1 null value(s) in query 'q1'; every judgment "
        "needs a document id: drop them, e.g. .drop_nulls('doc_id')",
    ),
    BadInput(
        "null score",
        lambda: (run_frame(score=[3.0, None, 1.0, 2.0, 1.0]), {"qrels": qrels_frame()}),
        InvalidValueError,
        "column 'score' of the run has 1 null value(s) in query 'q1'; every document needs "
        "a score to be ranked: fill or drop them, e.g. .drop_nulls('score')",
    ),
    BadInput(
        "NaN score of an unjudged document",
        lambda: (run_frame(score=[3.0, 2.0, NAN, 2.0, 1.0]), {"qrels": qrels_frame()}),
        InvalidValueError,
        "column 'score' of the run has 1 NaN value(s) in query 'q1'; NaN cannot be ranked: "
        "replace them, e.g. pl.col('score').fill_nan(float('-inf'))",
    ),
    BadInput(
        "rank 0",
        lambda: (_ranked([0, 1, 2, 1, 2]), {"qrels": qrels_frame()}),
        InvalidValueError,
        "column 'rank' of the run has 1 rank(s) below 1 in query 'q1'; ranks start at 1 for "
        "the top document: add 1 to 0-based ranks, e.g. pl.col('rank') + 1",
    ),
    BadInput(
        "null rank",
        lambda: (
            _ranked([1, 2, None, 1, 2]),
            {"qrels": qrels_frame()},
        ),
        InvalidValueError,
        "column 'rank' of the run has 1 null value(s) in query 'q1'; every retrieved "
        "document needs a rank: fill or drop them, or rank by score with order='score'",
    ),
    BadInput(
        "a rank held twice",
        lambda: (_ranked([1, 2, 2, 1, 2]), {"qrels": qrels_frame()}),
        DuplicateError,
        "column 'rank' of the run: query 'q1' has 1 duplicate rank(s); each rank may hold one "
        "document: break the ties, or rank by score with order='score'",
    ),
    BadInput(
        "a document listed twice",
        lambda: (run_frame(doc_id=["a", "b", "a", "a", "d"]), {"qrels": qrels_frame()}),
        DuplicateError,
        "column 'doc_id' of the run: query 'q1' has 1 repeated listing(s) "
        "(each of a document listed before in the query); each "
        "(query, document) pair may appear once (trec_eval refuses such runs too): keep one "
        "row per document, e.g. .unique(['query_id', 'doc_id'])",
    ),
    BadInput(
        "a document judged twice",
        lambda: (run_frame(), {"qrels": qrels_frame(doc_id=["b", "b", "d"])}),
        DuplicateError,
        "column 'doc_id' of the judgments: query 'q1' has 1 repeated judgment(s) (each of a "
        "document judged before in the query); keep one judgment per document, e.g. "
        ".unique(['query_id', 'doc_id'])",
    ),
]
