"""Round 34 (fix34-g): the comparison's outputs refuse a column of the wrong dtype in
the library's words.

* A ``std`` column of text reached ``math.isnan`` in the report (Python's ``must be
  real number, not str``); ``delta``, ``statistic``, ``p_value``, ``significant``,
  ``p_adjusted`` and the interval's bounds alike (Python's, numpy's words, or a
  ``significant`` of ``"false"`` read as true): each is a ``ColumnTypeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot

_RESULT = pl.DataFrame({
    "metric": ["map"], "system": ["b"], "baseline": ["a"], "mean": [0.4],
    "baseline_mean": [0.3], "delta": [0.1], "p_value": [0.01], "p_adjusted": [0.01],
    "significant": [True], "higher_is_better": [True], "ci_low": [0.05], "ci_high": [0.15],
    "statistic": [3.0], "std": [0.1], "baseline_std": [0.2],
})  # fmt: skip
_PER_QUERY = pl.DataFrame({
    "metric": ["map"] * 2, "system": ["b"] * 2, "baseline": ["a"] * 2, "query_id": ["q1", "q2"],
    "value": [0.5, 0.3], "baseline_value": [0.4, 0.2], "delta": [0.1, 0.1],
    "higher_is_better": [True] * 2,
})  # fmt: skip


def _report(frame: pl.DataFrame) -> object:
    return irm.report(frame)  # a DataFrame only (a LazyFrame is refused: collect it)


def _text(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.String)


_NUMBERS = "the report reads numbers there: pass the frame irm.compare returned"
_PLOT = "the plot reads numbers there: pass the result of irm.compare"


_REFUSED: list[tuple[Callable[[Any], object], pl.DataFrame, type[Exception], str]] = [
    (_report, _RESULT.with_columns(_text("std")), irm.ColumnTypeError,
     f"column 'std' of result has dtype String; {_NUMBERS}"),
    (_report, _RESULT.with_columns(_text("baseline_std")), irm.ColumnTypeError,
     f"column 'baseline_std' of result has dtype String; {_NUMBERS}"),
    (_report, _RESULT.with_columns(_text("delta")), irm.ColumnTypeError,
     f"column 'delta' of result has dtype String; {_NUMBERS}"),
    (_report, _RESULT.with_columns(_text("statistic")), irm.ColumnTypeError,
     f"column 'statistic' of result has dtype String; {_NUMBERS}"),
    # "false" read as true: b marked significantly better than a
    (_report, _RESULT.with_columns(significant=pl.lit("false")), irm.ColumnTypeError,
     "column 'significant' of result has dtype String; the report reads True or False "
     "there: pass the frame irm.compare returned"),
    (plot.plot_significance_matrix, _RESULT.with_columns(_text("p_adjusted")),
     irm.ColumnTypeError, f"column 'p_adjusted' of result has dtype String; {_PLOT}"),
    (plot.plot_ci, _RESULT.with_columns(_text("ci_low")), irm.ColumnTypeError,
     f"column 'ci_low' of result has dtype String; {_PLOT}"),
    (plot.plot_deltas, _PER_QUERY.with_columns(_text("delta")), irm.ColumnTypeError,
     "column 'delta' of per_query has dtype String; a count of wins, ties and losses "
     "reads numbers there: pass the per_query=True result of irm.compare"),
]  # fmt: skip


#: the plots take a LazyFrame too (irm.report takes a DataFrame only)
_CASES = _REFUSED + [(c, f.lazy(), e, m) for c, f, e, m in _REFUSED if c is not _report]


@pytest.mark.parametrize(
    ("call", "frame", "error", "message"),
    _CASES,
    ids=[
        f"{c.__name__}-{m.split()[1].strip(chr(39))}-{type(f).__name__}" for c, f, _, m in _CASES
    ],
)
def test_a_column_of_the_wrong_dtype_is_refused(
    call: Callable[[Any], object], frame: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        call(frame)
    assert str(info.value) == message
