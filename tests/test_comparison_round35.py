"""Round 35: a comparison's outputs mark "better" only where the test found it.

* ``irm.report`` and ``plot_significance_matrix`` drew their markers from a result's
  ``significant`` as given: a frame edited or built by hand with ``significant`` True
  beside ``p_adjusted`` 0.37 marked a difference no test found (False beside 0.03 left
  a found one out). Such a row is refused, at the alpha ``irm.compare`` recorded, the
  one given (``options=`` of the report, ``alpha=`` of the matrix), else 0.05, said so.
* ``plot_metric_curves`` read its columns' dtypes by hand: a column of nulls only was a
  ``ColumnTypeError`` ("dtype Null") there and an ``InvalidValueError`` (null) in the
  other plots; it reads them as they do (``check_dtypes``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.options import CompareOptions

#: b significantly better than a (p_adjusted 0.01), c not (0.37)
RESULT = pl.DataFrame(
    {
        "metric": ["map", "map"], "system": ["b", "c"], "baseline": ["a", "a"],
        "n": [5, 5], "mean": [0.5, 0.31], "baseline_mean": [0.3, 0.3],
        "delta": [0.2, 0.01], "p_value": [0.005, 0.37], "p_adjusted": [0.01, 0.37],
        "significant": [True, False], "higher_is_better": [True, True],
    }
)  # fmt: skip
_DEFAULT = "alpha: the default, as none was recorded for this frame nor given"
_MARK = (
    "column 'significant' of result is True on 1 row(s) where p_adjusted is above alpha "
    "0.05 (first: metric 'map', system 'c', baseline 'a', p_adjusted 0.37; {alpha}): "
    "significant is p_adjusted <= alpha, so the {reader} would mark a difference the "
    "test did not find; pass the frame irm.compare returned, or {fix}"
)
_UNMARK = (
    "column 'significant' of result is False on 1 row(s) where p_adjusted is at or below "
    "alpha 0.05 (first: metric 'map', system 'b', baseline 'a', p_adjusted 0.01; {alpha}): "
    "significant is p_adjusted <= alpha, so the {reader} would leave out a difference it "
    "found; pass the frame irm.compare returned, or {fix}"
)
_REPORT = {
    "reader": "report",
    "fix": "options=CompareOptions(alpha=...) with the alpha it ran with",
}
_MATRIX = {"reader": "matrix", "fix": "alpha= the alpha it ran with"}
_TRUE, _FALSE = pl.lit(True), pl.lit(False)


def _markdown(frame: pl.DataFrame, **options: Any) -> str:
    return irm.report(frame, **options).to_markdown()


def _matrix(frame: Any, **options: Any) -> list[str]:
    return [t.get_text() for t in plot.plot_significance_matrix(frame, **options).axes[0].texts]


_CALLS: list[tuple[str, Callable[..., object], dict[str, str]]] = [
    ("report", _markdown, _REPORT),
    ("matrix", _matrix, _MATRIX),
    ("matrix-lazy", lambda f, **o: _matrix(f.lazy(), **o), _MATRIX),
]


@pytest.mark.parametrize(
    ("call", "words"), [(c, w) for _, c, w in _CALLS], ids=[n for n, *_ in _CALLS]
)
@pytest.mark.parametrize(
    ("flags", "message"),
    [([_TRUE, _TRUE], _MARK), ([_FALSE, _FALSE], _UNMARK)],
    ids=["marked", "unmarked"],
)
def test_a_significant_flag_its_p_value_denies_is_refused(
    call: Callable[..., object], words: dict[str, str], flags: list[pl.Expr], message: str
) -> None:
    edited = RESULT.with_columns(
        significant=pl.when(pl.col("system") == "b").then(flags[0]).otherwise(flags[1])
    )
    with pytest.raises(irm.InvalidValueError) as info:
        call(edited)
    assert str(info.value) == message.format(alpha=_DEFAULT, **words)


def test_the_alpha_given_reads_the_flags() -> None:
    """At alpha 0.5 (given), c's 0.37 is significant: marked, and starred."""
    edited = RESULT.with_columns(significant=_TRUE)
    table = _markdown(edited, options=CompareOptions(alpha=0.5))
    assert "| c | 0.3100ᵃ |" in table
    assert _matrix(edited, alpha=0.5) == ["0.010*▼", "0.370*▼", "0.010*▲", "0.370*▲"]
    with pytest.raises(irm.InvalidValueError) as info:
        _matrix(edited, alpha=0.2)
    assert str(info.value) == _MARK.replace("0.05", "0.2").format(
        alpha="alpha: given as alpha=", **_MATRIX
    )
    with pytest.raises(irm.InvalidValueError) as info:
        _matrix(edited, alpha=1.0)
    assert str(info.value) == "alpha=1.0 must be strictly between 0 and 1 (e.g. alpha=0.05)"


def test_the_alpha_compare_recorded_reads_the_flags() -> None:
    """compare(alpha=0.01): b's p_adjusted (0.016) is not significant there; the frame
    compare returned is read at its alpha, a frame derived from it at 0.05 (refused),
    or at the alpha given."""
    queries = ["q1", "q2", "q3", "q4", "q5"]
    qrels = pl.DataFrame({"query_id": queries, "doc_id": "x", "relevance": 1})
    a = pl.DataFrame({"query_id": queries, "doc_id": ["x", "n", "n", "n", "n"], "rank": 1})
    b = pl.DataFrame({"query_id": queries, "doc_id": "x", "rank": 1})
    result = irm.compare({"a": a, "b": b}, "P@1", qrels=qrels, baseline="a", alpha=0.01)
    p, significant = result.select("p_adjusted", "significant").row(0)
    assert 0.01 < p <= 0.05
    assert significant is False
    assert "| b | **1.0000** |" in _markdown(result)
    assert _matrix(result) == [f"{p:.3f}"] * 2
    derived = result.drop("ci_low", "ci_high")
    with pytest.raises(irm.InvalidValueError) as info:
        _markdown(derived)
    said = _UNMARK.replace("'map'", "'P@1'").replace("0.01;", f"{p!r};")
    assert str(info.value) == said.format(alpha=_DEFAULT, **_REPORT)
    assert "| b | **1.0000** |" in _markdown(derived, options=CompareOptions(alpha=0.01))
    # the namespace's lazy comparison: its collected frame is recognised by its rows
    long = pl.concat([r.with_columns(system=pl.lit(n)) for n, r in (("a", a), ("b", b))])
    lazy = long.lazy().irm.compare("P@1", system="system", baseline="a", qrels=qrels, alpha=0.01)
    assert "| b | **1.0000** |" in _markdown(lazy.collect())
    edited = result.with_columns(significant=_TRUE)  # no record: the default, 0.05
    assert _matrix(edited) == [f"{p:.3f}*▼", f"{p:.3f}*▲"]


def test_a_tukey_result_is_read_by_its_p_value() -> None:
    tukey = RESULT.drop("p_adjusted").with_columns(significant=_TRUE)
    with pytest.raises(irm.InvalidValueError) as info:
        _markdown(tukey)
    assert str(info.value) == (
        _MARK.replace("p_adjusted", "p_value").format(alpha=_DEFAULT, **_REPORT)
    )
    # without p_adjusted, a False beside a small p_value may be a corrected one: kept
    assert "| c | 0.3100 |" in _markdown(
        RESULT.drop("p_adjusted").with_columns(significant=_FALSE)
    )


_CURVES = "pass evaluate(..., systems=system) over a cutoff range"


@pytest.mark.parametrize(
    ("column", "error", "message"),
    [
        (
            pl.lit(None),
            irm.InvalidValueError,
            "column 'P@2' of means is null, NaN or infinite on 2 row(s) (first: system 'a'): "
            f"that is no point to draw (the line would stop there without a word); {_CURVES}, "
            "or drop those rows",
        ),
        (
            pl.lit("0.5"),
            irm.ColumnTypeError,
            f"column 'P@2' of means has dtype String; a curve reads numbers there: {_CURVES}",
        ),
    ],
    ids=["all-null", "text"],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_plot_metric_curves_reads_dtypes_as_the_other_plots(
    column: pl.Expr, error: type[Exception], message: str, lazy: bool
) -> None:
    means = pl.DataFrame({"system": ["a", "b"], "P@1": [0.5, 1.0]}).with_columns(
        column.alias("P@2")
    )
    with pytest.raises(error) as info:
        plot.plot_metric_curves(means.lazy() if lazy else means)
    assert str(info.value) == message


# ---------------- a frame whose higher_is_better, means or delta say other than its metric
#: b and c against a on rmse (lower is better): b's error the higher, c's the lower
ERRORS = pl.DataFrame(
    {
        "metric": ["rmse", "rmse"], "system": ["b", "c"], "baseline": ["a", "a"],
        "n": [5, 5], "mean": [0.5, 0.2], "baseline_mean": [0.3, 0.3],
        "delta": [0.2, -0.1], "p_value": [0.5, 0.5], "p_adjusted": [0.5, 0.5],
        "significant": [False, False], "higher_is_better": [False, False],
        "ci_low": [0.1, -0.2], "ci_high": [0.3, 0.0],
    }
)  # fmt: skip
_PER_QUERY = pl.DataFrame(
    {
        "metric": ["rmse"] * 2, "system": ["b"] * 2, "baseline": ["a"] * 2,
        "query_id": ["q1", "q2"], "value": [0.5, 0.4], "baseline_value": [0.3, 0.3],
        "delta": [0.2, 0.1], "higher_is_better": [False] * 2,
    }
)  # fmt: skip
_FLIPPED = pl.lit(True).alias("higher_is_better")
_CONTRADICTED = (
    "higher_is_better of metric 'rmse' is True, and rmse is declared lower-is-better: "
    "{reader} would read the higher value as the better; pass the result of irm.compare, "
    "which writes each metric's declared direction, or set the column to False"
)
_READERS: list[tuple[str, Callable[[Any], object], pl.DataFrame, str]] = [
    ("report", _markdown, ERRORS, "the report"),
    ("matrix", plot.plot_significance_matrix, ERRORS, "the plot"),
    ("ci", plot.plot_ci, ERRORS, "the plot"),
    ("deltas", plot.plot_deltas, _PER_QUERY, "the plot"),
]
_READ = _READERS + [(f"{n}-lazy", c, f.lazy(), r) for n, c, f, r in _READERS if n != "report"]


@pytest.mark.parametrize(
    ("call", "frame", "reader"), [r[1:] for r in _READ], ids=[r[0] for r in _READ]
)
def test_a_direction_against_the_metrics_declaration_is_refused(
    call: Callable[[Any], object], frame: Any, reader: str
) -> None:
    """rmse said higher-is-better: b's higher error was bold, and its plots' wins were
    losses."""
    call(frame)  # as declared: drawn
    with pytest.raises(irm.InvalidValueError) as info:
        call(frame.with_columns(_FLIPPED))
    assert str(info.value) == _CONTRADICTED.format(reader=reader)


def test_a_system_with_two_means_is_refused() -> None:
    """a's baseline_mean 0.3 beside b and 0.35 beside c: the table printed 0.35."""
    two = ERRORS.with_columns(baseline_mean=pl.Series([0.3, 0.35]))
    with pytest.raises(irm.InvalidValueError) as info:
        _markdown(two)
    assert str(info.value) == (
        "system 'a' has mean 0.3 on metric 'rmse' in one row (baseline_mean of b against "
        "a) and 0.35 in another (baseline_mean of c against a): irm.compare pairs every "
        "system on the same queries, so each has one mean per metric, and the table would "
        "print one of them without a word; pass the frame irm.compare returned"
    )


def test_the_legend_reads_the_printed_means() -> None:
    """A delta edited apart from the means: b's -0.2 marks it better (a lower error)
    beside a mean above a's; the legend says so (it read the delta: nothing)."""
    edited = ERRORS.with_columns(
        delta=-pl.col("delta"), p_adjusted=pl.lit(0.01), significant=pl.lit(True)
    )
    text = irm.report(edited, markers="daggers").to_markdown()
    assert "| b | 0.5000† |" in text
    assert (
        "the markers follow the test, which found b below a on rmse (better), though its "
        "mean is above a's; c above a on rmse (worse), though its mean is below a's (the "
        "table's numbers are the means)"
    ) in text


def test_a_per_query_of_another_comparison_is_refused_by_the_page() -> None:
    """The page drew per_query's deltas beside the table as given: b's higher errors
    counted as 2 wins under a table where lower is better, or the deltas of a pair
    the table does not hold."""
    two = _PER_QUERY.with_columns(pl.lit("z").alias("system"))
    with pytest.raises(irm.InvalidValueError) as info:
        irm.report(ERRORS, per_query=two)
    assert str(info.value) == (
        "per_query holds system 'z' against 'a' on metric 'rmse', which result does not "
        "compare: its plot would stand beside another comparison's table; pass the "
        "per_query=True result of the same irm.compare call"
    )
    # a name of no metric's: the column is its only direction, and the two must agree
    mine = {"metric": pl.lit("my_error")}
    flipped = _PER_QUERY.with_columns(**mine, higher_is_better=pl.lit(True))
    with pytest.raises(irm.InvalidValueError) as info:
        irm.report(ERRORS.with_columns(**mine), per_query=flipped)
    assert str(info.value) == (
        "higher_is_better of metric 'my_error' is True in per_query and False in result: "
        "the delta plots would count as wins what the table calls worse (or the other "
        "way); pass the per_query=True result of the same irm.compare call"
    )
    page = irm.report(ERRORS.with_columns(**mine), per_query=_PER_QUERY.with_columns(**mine))
    titles = [figure.axes[0].get_title() for _, _, figure in page.figures()[:1]]
    assert titles == ["b vs a (my_error, lower is better): 0 wins, 0 ties, 2 losses"]
