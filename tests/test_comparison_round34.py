"""Round 34: the comparison's outputs read no undefined number as a number.

* A report (terminal, Markdown, LaTeX, the HTML page) of a result whose ``mean`` or
  ``baseline_mean`` is NaN or infinite (a frame edited by hand: ``irm.compare`` refuses
  such per-query values) printed ``nan``/``inf`` and bolded the best of the other cells,
  or bolded ``inf`` as the best; it is refused, naming the row, metric and system.
* ``with_std`` of a ``per_query`` lacking a comparison of ``result`` gave it a null
  ``std`` (and its baseline's, shared with the other rows, too): the report printed
  ``0.3100 ± nan`` and ``0.3000 ± nan`` for the baseline; it is refused, and a report
  of a null, NaN or infinite ``std`` or ``baseline_std`` too.
* ``plot_metric_curves`` drew a null, NaN or infinite mean as a gap in the line, and a
  column of text as categories; both are refused, in ``plot_ci``'s words.
* A metric's refusal "pass relevance_level= to irm.evaluate" names the function called
  (``irm.compare``, ``irm.tukey_hsd``, ``irm.reproducibility``, ``irm.optimize_fusion``);
  the command line names the flag alone (``pass --relevance-level instead``: it said
  ``pass --relevance-level to irm.evaluate instead``, a call the user did not make).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.report import render_report, with_std

from .helpers import irm_in_process

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


_PER_QUERY = pl.DataFrame(
    {"metric": ["map"] * 2, "system": ["b"] * 2, "baseline": ["a"] * 2,
     "query_id": ["q1", "q2"], "value": [0.4, 0.6], "baseline_value": [0.2, 0.4]}
)  # fmt: skip


def test_with_std_refuses_a_comparison_without_per_query_values() -> None:
    message = (
        "per_query holds no value of system 'c' against 'a' on metric 'map' (1 "
        "comparison(s) of result without per-query values): their spread cannot be read; "
        "pass the per_query=True result of the same irm.compare call"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        with_std(RESULT, _PER_QUERY)


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [("std", NAN, "nan in row 0 (metric 'map', system 'b')"),
     ("baseline_std", None, "null in row 0 (metric 'map', baseline 'a')")],
    ids=["nan-std", "null-baseline-std"],
)  # fmt: skip
def test_a_report_refuses_an_undefined_spread(column: str, value: object, said: str) -> None:
    spread = RESULT.with_columns(std=pl.lit(0.1), baseline_std=pl.lit(0.1))
    spread = spread.with_columns(pl.Series(column, [value, 0.1], dtype=pl.Float64))
    message = (
        f"column {column!r} of result is {said}: a standard deviation of per-query values "
        "is a finite number; pass with_std(result, per_query) with the per_query=True "
        "result of the same irm.compare call, or drop the columns: result.drop('std', "
        "'baseline_std')"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        render_report(spread, "markdown")


def _means(value: object) -> pl.DataFrame:
    return pl.DataFrame(
        {"system": ["a", "b"], "P@1": [0.5, value], "P@2": [0.5, 0.75]},
        schema_overrides={"P@1": pl.Float64},
    )


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("value", [NAN, INF, None], ids=["nan", "inf", "null"])
def test_plot_metric_curves_refuses_an_undefined_mean(value: object, lazy: bool) -> None:
    plot = pytest.importorskip("polars_irmetrics.comparison.plot")
    pytest.importorskip("matplotlib")
    means: Any = _means(value).lazy() if lazy else _means(value)
    message = (
        "column 'P@1' of means is null, NaN or infinite on 1 row(s) (first: system 'b'): "
        "that is no point to draw (the line would stop there without a word); pass "
        "evaluate(..., systems=system) over a cutoff range, or drop those rows"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_metric_curves(means)


def test_plot_metric_curves_refuses_a_column_of_text() -> None:
    plot = pytest.importorskip("polars_irmetrics.comparison.plot")
    pytest.importorskip("matplotlib")
    means = _means(0.25).with_columns(pl.col("P@1").cast(pl.String))
    message = (
        "column 'P@1' of means has dtype String; a curve reads numbers there: pass "
        "evaluate(..., systems=system) over a cutoff range"
    )
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        plot.plot_metric_curves(means)


_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})
_A = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d1", "d2"] * 2, "rank": [1, 2] * 2,
     "score": [2.0, 1.0] * 2}
)  # fmt: skip
_RUNS = {"a": _A, "b": _A.with_columns(doc_id=pl.col("doc_id").reverse().over("query_id"))}
_LONG = pl.concat([run.with_columns(s=pl.lit(name)) for name, run in _RUNS.items()])
_METRIC = "serendipity(rel=1)@2"
_CALLS: dict[str, tuple[str, Callable[[], object]]] = {
    "compare": ("irm.compare", lambda: irm.compare(_RUNS, _METRIC, qrels=_QRELS)),
    "namespace-DataFrame": (
        "irm.compare",
        lambda: _LONG.irm.compare(_METRIC, qrels=_QRELS, system="s"),
    ),
    "namespace-LazyFrame": (
        "irm.compare",
        lambda: _LONG.lazy().irm.compare(_METRIC, qrels=_QRELS, system="s").collect(),
    ),
    "tukey_hsd": ("irm.tukey_hsd", lambda: irm.tukey_hsd(_RUNS, _METRIC, qrels=_QRELS)),
    "reproducibility": (
        "irm.reproducibility",
        lambda: irm.reproducibility({"baseline": _A}, {"baseline": _A}, _METRIC, qrels=_QRELS),
    ),
    "optimize_fusion": (
        "irm.optimize_fusion",
        lambda: irm.optimize_fusion(_RUNS, _METRIC, qrels=_QRELS),
    ),
}


@pytest.mark.parametrize(("calls", "call"), list(_CALLS.values()), ids=list(_CALLS))
def test_the_relevance_level_hint_names_the_function_called(
    calls: str, call: Callable[[], object]
) -> None:
    message = (
        f"metric {_METRIC!r}: serendipity takes no relevance level 'rel' of its own: it "
        "weighs the labels, and where it counts relevant items (Elliot's rel_threshold, "
        "RecTools' Serendipity) it reads the call's: pass relevance_level= to "
        f"{calls} instead"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        call()


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_the_command_names_the_flag_alone(tmp_path: Path, command: str) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    for name in ("a", "b"):
        (tmp_path / f"{name}.run").write_text(f"q1 Q0 d1 1 2.0 {name}\nq1 Q0 d2 2 1.0 {name}\n")
    runs = ["a.run"] if command == "evaluate" else ["a.run", "b.run"]
    done = irm_in_process(command, "--qrels", "qrels.txt", *runs, "-m", _METRIC, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.endswith("it reads the call's: pass --relevance-level instead\n")
