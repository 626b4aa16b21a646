"""The judgments' data checks (metrics.scope.judgment_flags) say the same on every route.

The ranking metrics' plan (ndcg), the propensity-scored metrics (ps_ndcg), the exposure
measures (ee_loss) and the trained fusions (irm.fit_fusion) each count a judgment table's
null document ids, null labels, unfit labels and documents judged twice per query with
:func:`~polars_irmetrics.metrics.scope.judgment_flags`: the same bad judgments get the
same error class and the same first clause of the message (the column, the count, the
query) from all four, with the checks raised in RUN_FLAGS' order whatever the queries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError, IrmError
from polars_irmetrics.metrics.scope import JUDGMENT_FLAGS, judgment_flags

NAN = float("nan")

_RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
_PROPENSITIES = pl.DataFrame({"doc_id": ["a", "b", "c", "d", "x"], "propensity": [0.5] * 5})

_BAD_LABEL = (
    "column 'relevance' of the judgments has {n} label(s) that are NaN, infinite, of "
    "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in query {q}"
)
_NULL_DOC = "column 'doc_id' of the judgments has {n} null value(s) in query {q}"
_NULL_LABEL = "column 'relevance' of the judgments has {n} null value(s) in query {q}"
_TWICE = (
    "column 'doc_id' of the judgments: query {q} has {n} repeated judgment(s) (each of a "
    "document judged before in the query)"
)

#: (name, judgments (query, doc, label), error, first clause of its message): written
#: out, not built from RUN_FLAGS' templates.
CASES: list[tuple[str, list[tuple[str, str | None, float | None]], type[IrmError], str]] = [
    (
        "null doc",
        [("q1", None, 1.0), ("q1", "b", 1.0), ("q2", "d", 0.0)],
        InvalidValueError,
        _NULL_DOC.format(n=1, q="'q1'"),
    ),
    (
        "two null docs, not a duplicate",
        [("q1", None, 1.0), ("q1", None, 2.0), ("q1", "b", 1.0), ("q2", "d", 0.0)],
        InvalidValueError,
        _NULL_DOC.format(n=2, q="'q1'"),
    ),
    (
        "null label",
        [("q1", "b", None), ("q1", "x", 2.0), ("q2", "d", 0.0)],
        InvalidValueError,
        _NULL_LABEL.format(n=1, q="'q1'"),
    ),
    (
        "NaN label",
        [("q1", "b", 1.0), ("q1", "x", 2.0), ("q2", "d", NAN)],
        InvalidValueError,
        _BAD_LABEL.format(n=1, q="'q2'"),
    ),
    (
        "label -0.5 (-1 is fit)",
        [("q1", "b", -0.5), ("q1", "x", -1.0), ("q1", "c", NAN), ("q2", "d", 0.0)],
        InvalidValueError,
        _BAD_LABEL.format(n=2, q="'q1'"),
    ),
    (
        "duplicate doc",
        [("q1", "b", 1.0), ("q1", "b", 2.0), ("q2", "d", 0.0)],
        DuplicateError,
        _TWICE.format(n=1, q="'q1'"),
    ),
    (
        "a doc judged three times counts twice",
        [("q1", "b", 1.0), ("q2", "d", 0.0), ("q2", "d", 1.0), ("q2", "d", 0.0)],
        DuplicateError,
        _TWICE.format(n=2, q="'q2'"),
    ),
    (
        "duplicate doc beside null docs",
        [("q1", "b", 1.0), ("q1", "b", 1.0), ("q1", None, 1.0), ("q1", None, 1.0)],
        InvalidValueError,
        _NULL_DOC.format(n=2, q="'q1'"),
    ),
    (
        "a null doc in a later query before a duplicate in an earlier one",
        [("q1", "b", 1.0), ("q1", "b", 2.0), ("q2", None, 0.0)],
        InvalidValueError,
        _NULL_DOC.format(n=1, q="'q2'"),
    ),
    (
        "a null label before a bad label of an earlier query",
        [("q1", "b", NAN), ("q2", "d", None), ("q2", "a", 1.0)],
        InvalidValueError,
        _NULL_LABEL.format(n=1, q="'q2'"),
    ),
    (
        "a duplicate of the null-labelled doc: the null label first",
        [("q1", "b", None), ("q1", "b", 1.0), ("q2", "d", 0.0)],
        InvalidValueError,
        _NULL_LABEL.format(n=1, q="'q1'"),
    ),
]


def _qrels(rows: list[tuple[str, str | None, float | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Float64},
        orient="row",
    )


Route = Callable[[pl.DataFrame, pl.DataFrame], Any]

#: The four routes, each with eager inputs (the fusion fit reads two runs).
ROUTES: dict[str, Route] = {
    "ndcg": lambda run, qrels: irm.evaluate(run, ["ndcg"], qrels=qrels),
    "ps_ndcg": lambda run, qrels: irm.evaluate(
        run, ["ps_ndcg@2"], qrels=qrels, propensities=_PROPENSITIES
    ),
    "ee_loss": lambda run, qrels: irm.evaluate(run, ["ee_loss"], qrels=qrels),
    "fit_fusion": lambda run, qrels: irm.fit_fusion(
        {"a": run, "b": run.with_columns(-pl.col("score"))}, "posfuse", qrels=qrels
    ),
}


def _lazy(route: str) -> Route:
    if route == "fit_fusion":
        return lambda run, qrels: ROUTES[route](run, qrels.lazy())
    return lambda run, qrels: ROUTES[route](run.lazy(), qrels.lazy()).collect()


@pytest.mark.parametrize("frame_kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize(("name", "rows", "error", "clause"), CASES, ids=[c[0] for c in CASES])
def test_every_route_refuses_the_judgments_alike(
    route: str,
    frame_kind: str,
    name: str,
    rows: list[tuple[str, str | None, float | None]],
    error: type[IrmError],
    clause: str,
) -> None:
    call = ROUTES[route] if frame_kind == "DataFrame" else _lazy(route)
    with pytest.raises(IrmError) as info:
        call(_RUN, _qrels(rows))
    assert type(info.value) is error
    assert str(info.value).split(";")[0] == clause


def test_clean_judgments_pass_every_route() -> None:
    # the checks can pass: the same route, judgments without a problem
    qrels = _qrels([("q1", "b", 1.0), ("q1", "x", -1.0), ("q2", "d", 0.0)])
    for route in ROUTES.values():
        route(_RUN, qrels)


#: (docs, labels, mask, counts by JUDGMENT_FLAGS' names): counted by hand.
COUNTS: list[tuple[list[str | None], list[float | None], list[bool] | None, tuple[int, ...]]] = [
    (["a", "b"], [1.0, 0.0], None, (0, 0, 0, 0)),
    (["a", "a", "a", "b"], [1.0, 1.0, 1.0, 1.0], None, (0, 0, 0, 2)),
    # two null ids: two null documents, no duplicate
    ([None, None, "a"], [1.0, 1.0, 1.0], None, (2, 0, 0, 0)),
    # -0.5, NaN, inf, 2**32 and 2**-31 are unfit; -1, 0, -0.0, 2**-30 and a null are not
    (
        ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
        [-0.5, NAN, float("inf"), 2.0**32, 2.0**-31, -1.0, 0.0, -0.0, 2.0**-30, None],
        None,
        (0, 1, 5, 0),
    ),
    # the masked-out rows count nowhere (the evaluation plan's run rows, null ids)
    (
        ["a", "a", None, None, "a", "b"],
        [NAN, None, 1.0, None, 1.0, -0.5],
        [True, True, True, False, False, False],
        (1, 1, 1, 1),
    ),
    (["a", "a"], [NAN, NAN], [False, False], (0, 0, 0, 0)),
]


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
@pytest.mark.parametrize(("docs", "labels", "mask", "expected"), COUNTS)
def test_judgment_flags_counts(
    docs: list[str | None],
    labels: list[float | None],
    mask: list[bool] | None,
    expected: tuple[int, ...],
    engine: Any,
) -> None:
    # in a group-by, as every route reads them: the first group the rows, the second
    # a clean row of its own
    frame = pl.LazyFrame(
        {
            "q": ["q1"] * len(docs) + ["q2"],
            "doc": [*docs, "z"],
            "rel": [*labels, 1.0],
            "mask": [True] * len(docs) + [True] if mask is None else [*mask, True],
        },
        schema={"q": pl.String, "doc": pl.String, "rel": pl.Float64, "mask": pl.Boolean},
    )
    flags = judgment_flags(pl.col("doc"), pl.col("rel"), None if mask is None else pl.col("mask"))
    assert list(flags) == list(JUDGMENT_FLAGS)
    out = frame.group_by("q").agg(**flags).sort("q").collect(engine=engine)
    assert out.row(0)[1:] == expected
    assert out.row(1)[1:] == (0, 0, 0, 0)
