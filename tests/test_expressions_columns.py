"""The click and prediction expressions check the columns they read when the plan
knows the frame (:mod:`polars_irmetrics.ground.deferred`), as the ranking expressions
do: a missing column or one of another dtype is the library's error, naming the column
and the fix, the same text from a DataFrame and a LazyFrame.

Before: ``irm.click_metric('ctr@2')`` over a String position raised polars'
``ComputeError: cannot compare string with numeric type``, a misspelt ``position=``
polars' ``ColumnNotFoundError``, and ``irm.auc(prediction='p')`` cast a String column
of numbers in silence. polars appends its plan to an error raised while it plans a
lazy query; the library's errors cut it (:class:`~polars_irmetrics.errors.IrmError`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, ColumnTypeError

LOG = pl.DataFrame(
    {"session_id": [1, 1], "position": [1, 2], "clicked": [True, False], "dwell": [40.0, 0.0]}
)
TABLE = pl.DataFrame(
    {"query_id": [1, 1, 2, 2], "label": [1, 0, 1, 0], "p": [0.3, 0.2, 0.1, 0.5], "w": [1.0] * 4}
)


def _typed(column: str, role: str) -> str:
    return (
        f"column {column!r} has dtype String; the metric reads its {role} from it, which "
        f"must be numeric: cast it, e.g. pl.col({column!r}).cast(pl.Float64)"
    )


def _missing(column: str, role: str, keyword: str) -> str:
    return (
        f"column {column!r} not found in the frame: the metric reads its {role} from it; "
        f"name yours with {keyword}=..."
    )


def _string(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    return frame.with_columns(pl.col(column).cast(pl.String))


CASES: list[tuple[str, pl.DataFrame, Callable[[], pl.Expr], type[Exception], str]] = [
    # name, frame, expression, error, message
    ("click position String", _string(LOG, "position"), lambda: irm.click_metric("ctr@2"),
     ColumnTypeError, _typed("position", "positions (1 = top)")),
    ("click position missing", LOG, lambda: irm.click_metric("ctr@2", position="pos"),
     ColumnNotFoundError, _missing("pos", "positions (1 = top)", "position")),
    ("click clicked String", _string(LOG, "clicked"), lambda: irm.click_metric("ctr@2"),
     ColumnTypeError, _typed("clicked", "clicks (Boolean or 0/1)")),
    ("click dwell String", _string(LOG, "dwell"), lambda: irm.click_metric("sat_click_rate"),
     ColumnTypeError, _typed("dwell", "dwell times in seconds")),
    ("auc prediction missing", TABLE, lambda: irm.auc(prediction="q"),
     ColumnNotFoundError, _missing("q", "predictions", "prediction")),
    ("auc prediction String", _string(TABLE, "p"), lambda: irm.auc(prediction="p"),
     ColumnTypeError, _typed("p", "predictions")),
    ("rmse label String", _string(TABLE, "label"), lambda: irm.rmse(prediction="p"),
     ColumnTypeError, _typed("label", "labels")),
    ("logloss weight String", _string(TABLE, "w"),
     lambda: irm.logloss(prediction="p", sample_weight="w"),
     ColumnTypeError, _typed("w", "sample weights")),
    ("gauc group missing", TABLE, lambda: irm.gauc(prediction="p", query_id="user"),
     ColumnNotFoundError, _missing("user", "groups (users)", "query_id")),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("name", "frame", "expr", "error", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_a_bad_column_is_the_librarys_error(
    name: str,
    frame: pl.DataFrame,
    expr: Callable[[], pl.Expr],
    error: type[Exception],
    message: str,
    lazy: bool,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _run(frame.lazy() if lazy else frame, expr)


def _run(frame: pl.DataFrame | pl.LazyFrame, expr: Callable[[], pl.Expr]) -> None:
    """The expression over ``frame``: per session for a click metric, else whole."""
    if "session_id" in frame.collect_schema():
        out = frame.group_by("session_id").agg(expr())
    else:
        out = frame.select(expr())
    if isinstance(out, pl.LazyFrame):
        out.collect()


def test_a_string_label_of_a_string_positive_is_read() -> None:
    """A String label column is no error where the positive label is a string."""
    texts = _string(TABLE, "label")
    assert texts.select(irm.auc(prediction="p", positive_label="1")).item() == (
        TABLE.select(irm.auc(prediction="p")).item()
    )


def test_the_checks_change_no_value() -> None:
    values = LOG.group_by("session_id").agg(irm.click_metric("ctr@2"))["ctr@2"].to_list()
    assert values == [0.5]
    assert TABLE.select(irm.auc(prediction="p")).item() == 0.25
