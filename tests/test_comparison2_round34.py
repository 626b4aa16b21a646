"""Round 34 (fix34-g): the comparison's outputs read the declared direction and refuse a
column of the wrong dtype in the library's words.

* ``plot_significance_matrix`` starred a significant cell in both halves of the
  matrix (``0.010*`` both ways) without saying which system is better; now the row's
  system's cell reads ``▲`` where it is the better, ``▼`` where the worse, in the
  metric's declared direction (``ee_loss``: lower is better), the way the test found
  it (as the report's markers: Wilcoxon's ranks against the mean are said in the title),
  and the title says the rule.
* A ``std`` column of text reached ``math.isnan`` in the report (Python's ``must be
  real number, not str``); ``delta``, ``statistic``, ``p_value``, ``significant``,
  ``p_adjusted`` and the interval's bounds alike (Python's, numpy's words, or a
  ``significant`` of ``"false"`` read as true): each is a ``ColumnTypeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot

_Q = ["q1", "q2", "q3", "q4"]
QRELS = pl.DataFrame(
    {"query_id": _Q * 2, "doc_id": ["r"] * 4 + ["s"] * 4, "relevance": [1] * 6 + [0] * 2}
)
GROUPS = pl.DataFrame({"doc_id": ["r", "s", "x", "y"], "group": ["g1", "g1", "g2", "g2"]})


def _run(orders: list[str]) -> pl.DataFrame:
    rows = [(q, d, i + 1) for q, o in zip(_Q, orders, strict=True) for i, d in enumerate(o)]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "rank"], orient="row")


#: means (ee_loss, lower is better; ndcg@4): A (0.7715, 0.5180), C (0.1895, 0.7898),
#: B (0.0, 1.0): B is the best, A the worst, in both
RUNS = {
    "A": _run(["xyrs", "xyrs", "xysr", "yxrs"]),
    "C": _run(["xrys", "rxys", "xrsy", "rsxy"]),
    "B": _run(["rsxy", "rsxy", "rsxy", "rxsy"]),
}


@cache
def _compare(mode: str) -> pl.DataFrame:
    baseline = {"baseline": "A"} if mode == "baseline" else {}
    return irm.compare(
        RUNS, ["ee_loss", "ndcg@4"], qrels=QRELS, groups=GROUPS, mode=mode, **baseline
    )


_RULE = "* significant; ▲ row's system better than column's, ▼ worse"
_WILCOXON = pl.DataFrame({
    "metric": ["map"], "system": ["b"], "baseline": ["a"], "delta": [0.155],
    "statistic": [-170.0], "p_adjusted": [0.01], "significant": [True],
    "higher_is_better": [True],
})  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("source", "metric", "undirected", "title", "cells"),
    [
        # (row, column): the label; A is worse than C and B on ee_loss (lower is better)
        ("pairs", "ee_loss", False, f"ee_loss (lower is better): adjusted p-values\n{_RULE}", {
            ("A", "C"): "0.033*▼", ("A", "B"): "0.010*▼", ("C", "A"): "0.033*▲",
            ("C", "B"): "0.201", ("B", "A"): "0.010*▲", ("B", "C"): "0.201",
        }),
        ("pairs", "ndcg@4", False, f"ndcg@4: adjusted p-values\n{_RULE}", {
            ("A", "C"): "0.166", ("A", "B"): "0.004*▼", ("C", "A"): "0.166",
            ("C", "B"): "0.201", ("B", "A"): "0.004*▲", ("B", "C"): "0.201",
        }),
        ("baseline", "ee_loss", False, f"ee_loss (lower is better): adjusted p-values\n{_RULE}", {
            ("A", "C"): "0.017*▼", ("A", "B"): "0.006*▼", ("C", "A"): "0.017*▲",
            ("B", "A"): "0.006*▲",
        }),
        # no better direction: starred, no side marked
        ("baseline", "ee_loss", True,
     "ee_loss (no better direction): adjusted p-values\n* significant", {
            ("A", "C"): "0.017*", ("A", "B"): "0.006*", ("C", "A"): "0.017*",
            ("B", "A"): "0.006*",
        }),
        # Wilcoxon's signed ranks below 0 though the mean delta is above: the test's side
        # (the report's markers alike), said in the title
        (_WILCOXON, "map", False, f"map: adjusted p-values\n{_RULE}\nthe arrows follow the "
         "test, which found b below a though its mean is above a's", {
            ("a", "b"): "0.010*▲", ("b", "a"): "0.010*▼",
        }),
    ],
    ids=["pairs-lower", "pairs-higher", "baseline-lower", "baseline-undirected",
         "wilcoxon-ranks"],
)  # fmt: skip
def test_significance_matrix_marks_the_better_system(
    lazy: bool,
    source: str | pl.DataFrame,
    metric: str,
    undirected: bool,
    title: str,
    cells: dict[tuple[str, str], str],
) -> None:
    result = _compare(source) if isinstance(source, str) else source
    if undirected:  # a metric of no better direction (calibration's null)
        result = result.with_columns(higher_is_better=pl.lit(None, pl.Boolean))
    panel = plot.plot_significance_matrix(result.lazy() if lazy else result, metric=metric)
    (axes,) = [a for a in panel.axes if a.images]
    rows = [t.get_text() for t in axes.get_yticklabels()]
    found = {
        (rows[round(t.get_position()[1])], rows[round(t.get_position()[0])]): t.get_text()
        for t in axes.texts
    }
    assert (axes.get_title(), found) == (title, cells)


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
    (plot.plot_significance_matrix, _RESULT.drop("delta"), irm.ColumnNotFoundError,
     "column 'delta' is not in the frame; pass the result of irm.compare"),
    (plot.plot_significance_matrix, _RESULT.with_columns(delta=None),
     irm.InvalidValueError,
     "column 'delta' of result is null or NaN on 1 row(s) (first: metric 'map', system "
     "'b', baseline 'a'): a significant difference without a delta has no better side "
     "to mark; pass the result of irm.compare, or drop those rows"),
    (plot.plot_significance_matrix, _RESULT.with_columns(p_adjusted=float("nan")),
     irm.InvalidValueError,
     "column 'p_adjusted' of result is null or NaN on 1 row(s) (first: metric 'map', "
     "system 'b', baseline 'a'): that is no p-value to draw (its cell would be blank, as "
     "that of a pair not compared); pass the result of irm.compare, or drop those rows"),
    # b against a and a against b: the cell showed a's p-value (not significant) with
    # b's side ("0.500▼")
    (plot.plot_significance_matrix, pl.concat([_RESULT, _RESULT.with_columns(
        system=pl.lit("a"), baseline=pl.lit("b"), significant=False)]), irm.DuplicateError,
     "result holds systems 'b' and 'a' on metric 'map' in 2 rows (either way round): the "
     "matrix draws one p-value per pair; keep one row per pair, or pass the result of "
     "irm.compare"),
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
        f"{c.__name__}-{m.split()[1].strip(chr(39))}-{e.__name__}-{type(f).__name__}"
        for c, f, e, m in _CASES
    ],
)
def test_a_column_the_outputs_cannot_read_is_refused(
    call: Callable[[Any], object], frame: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        call(frame)
    assert str(info.value) == message
