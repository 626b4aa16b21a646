"""Round 34: the comparison's outputs read no undefined number as a number.

* A report (terminal, Markdown, LaTeX, the HTML page) of a result whose ``mean`` or
  ``baseline_mean`` is NaN or infinite (a frame edited by hand: ``irm.compare`` refuses
  such per-query values) printed ``nan``/``inf`` and bolded the best of the other cells,
  or bolded ``inf`` as the best; it is refused, naming the row, metric and system.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.report import render_report

NAN, INF = float("nan"), float("inf")
RESULT = pl.DataFrame(
    {
        "metric": ["map", "map"], "system": ["b", "c"], "baseline": ["a", "a"],
        "n": [20, 20], "mean": [0.5, 0.31], "baseline_mean": [0.3, 0.3],
        "delta": [0.2, 0.01], "significant": [True, False],
        "higher_is_better": [True, True],
    }
)  # fmt: skip
_REFUSED = (
    ": irm.compare refuses NaN and infinite per-query values, so its means are finite "
    "numbers, and beside this one the best mean (bold) and the markers would be chosen "
    "among the other cells; pass the frame irm.compare returned, or drop such rows: "
    "result.filter(pl.col({column!r}).is_finite())"
)
_RENDERS: dict[str, Callable[[pl.DataFrame], object]] = {
    "terminal": render_report,
    "markdown": lambda r: render_report(r, "markdown"),
    "latex": lambda r: render_report(r, "latex"),
    "html": irm.report,
}


@pytest.mark.parametrize(
    ("column", "values", "said"),
    [
        ("mean", [NAN, 0.31], "nan in row 0 (metric 'map', system 'b')"),
        ("mean", [0.5, INF], "inf in row 1 (metric 'map', system 'c')"),
        ("baseline_mean", [-INF, NAN], "-inf in row 0 (metric 'map', baseline 'a'), and 1 "
         "more row(s)"),
    ],
    ids=["nan", "inf", "baseline-two-rows"],
)  # fmt: skip
@pytest.mark.parametrize("fmt", list(_RENDERS))
def test_a_report_refuses_an_undefined_mean(
    fmt: str, column: str, values: list[float], said: str
) -> None:
    result = RESULT.with_columns(pl.Series(column, values))
    message = f"column {column!r} of result is {said}" + _REFUSED.format(column=column)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        _RENDERS[fmt](result)
