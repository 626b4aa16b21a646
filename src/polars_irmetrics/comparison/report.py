"""Text reports of a comparison: one row per system, one column per metric, with markers.

A cell is the system's mean; its markers say which systems it is *significantly
better than* (``significant`` in :func:`~polars_irmetrics.compare`'s result, i.e. the
adjusted p-value is at most ``alpha``): ranx-style letters (each system gets a letter,
``ᵃ`` = better than system a), or, against a baseline, daggers (``†`` better than the
baseline, ``‡`` worse). A legend explains them, and a footnote names the test, the
correction, alpha, the number of queries and the baseline
(:func:`~polars_irmetrics.comparison.record.describe`). The best mean of each metric
(the lowest where lower is better) is bold in Markdown and LaTeX. The LaTeX is
booktabs with each metric in an ``r@{.}l`` column pair, so the numbers align on the
decimal point with nothing but ``booktabs`` loaded (great_tables' LaTeX was measured
and not used: it drops bold, aligns nothing on the decimal point and writes HTML
``<sup>`` markup into the cells). CSV, JSON and Parquet write the tidy result itself.
The HTML report (great_tables, with the plots) is
:mod:`~polars_irmetrics.comparison.publish`.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import polars as pl

from polars_irmetrics.comparison.options import CompareOptions, found_above
from polars_irmetrics.comparison.plot import (
    check_declared,
    check_dtypes,
    check_flags,
    check_per_query,
    check_significance,
    one_mean_each,
)
from polars_irmetrics.comparison.record import describe, recall, remember
from polars_irmetrics.errors import ColumnNotFoundError, ColumnTypeError, InvalidValueError
from polars_irmetrics.io.output import (
    Renderer,
    format_of,
    latex_escape,
    markdown_cell,
    resolve_format,
    write_table,
)

__all__ = [
    "REPORT_FORMATS",
    "REPRO_ORDER",
    "TIDY_FORMATS",
    "FileFormat",
    "Markers",
    "ReportFormat",
    "Table",
    "TextFormat",
    "check_report",
    "check_stated",
    "check_tidy",
    "footnote",
    "is_reproducibility",
    "kind_of",
    "latex",
    "markdown",
    "marker_text",
    "render_report",
    "report_renderers",
    "reproducibility_table",
    "table",
    "with_std",
    "write_report",
]

ReportFormat = Literal["terminal", "markdown", "latex", "html", "csv", "json", "parquet"]
#: Every format of ``irm compare --format`` (``html`` is the page of
#: :mod:`~polars_irmetrics.comparison.publish`).
REPORT_FORMATS: tuple[str, ...] = (
    "terminal", "markdown", "latex", "html", "csv", "json", "parquet"
)  # fmt: skip
#: The formats :func:`render_report` renders (the HTML page is
#: :meth:`~polars_irmetrics.comparison.publish.Report.to_html`'s).
TextFormat = Literal["terminal", "markdown", "latex", "csv", "json"]
#: The formats :func:`write_report` writes (the HTML page is
#: :meth:`~polars_irmetrics.comparison.publish.Report.save`'s).
FileFormat = Literal["terminal", "markdown", "latex", "csv", "json", "parquet"]
Markers = Literal["letters", "daggers"]

_SUPERSCRIPT = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz0123456789", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖᑫʳˢᵗᵘᵛʷˣʸᶻ⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True
    )
)
_NEEDED = (
    "metric", "system", "baseline", "mean", "baseline_mean", "delta", "significant",
    "higher_is_better",
)  # fmt: skip


@dataclass(frozen=True)
class Table:
    """The means, markers and legend of a report (``means[system, metric]``)."""

    systems: list[str]
    metrics: list[str]
    means: dict[tuple[str, str], float]
    marks: dict[tuple[str, str], list[str]]
    legend: list[str]
    #: Each metric's direction (the result's ``higher_is_better`` column): the best
    #: mean is the highest, or the lowest where this is ``False``; ``None``: the metric
    #: has no better direction (``calibration``), nothing is marked or bold.
    higher: dict[str, bool | None]
    #: The standard deviation of the per-query values beside each mean, where the
    #: result has ``std`` columns (:func:`with_std`).
    stds: dict[tuple[str, str], float] | None = None
    #: The rows' heading (``system``; ``measure`` for :func:`reproducibility_table`).
    row_label: str = "system"
    #: Whether rows are systems ranked on each metric (a letter per row, the best
    #: bold); ``False`` for measures with no better value (reproducibility).
    ranked: bool = True


_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def _letter(i: int) -> str:
    """The marker of the ``i``-th system: ``a`` .. ``z``, then ``aa``, ``ab`` .. ``az``,
    ``ba`` .. (as spreadsheet columns): letters only, so that no marker reads as a digit
    of the mean before it."""
    name = ""
    i += 1
    while i:
        i, rest = divmod(i - 1, 26)
        name = _ALPHABET[rest] + name
    return name


def marker_text(table: Table, marks: list[str]) -> str:
    """A cell's markers as one text: side by side (``abd``) while every system's letter
    is one letter, separated by commas (``a,b,aa``) where the table has more than 26
    systems, so that ``ab`` (system 28) is never read as ``a`` and ``b``."""
    return ("," if len(table.systems) > len(_ALPHABET) else "").join(marks)


def kind_of(value: object) -> str:
    """A value's type as a message names it: ``pandas DataFrame``, ``polars LazyFrame``."""
    root = type(value).__module__.split(".")[0]
    return f"{root} {type(value).__name__}" if root != "builtins" else type(value).__name__


def check_report(result: object, digits: object, options: object, *, values: bool = True) -> None:
    """The arguments of every report (:func:`render_report`, :func:`write_report`,
    :func:`~polars_irmetrics.report`), refused by name before anything is rendered:
    a result that is no polars DataFrame, ``digits`` that are no integer in 0..12,
    options that are not :class:`~polars_irmetrics.comparison.options.CompareOptions`,
    or whose ``alternative`` is not the one :func:`~polars_irmetrics.compare` recorded
    for ``result`` (the markers read which way the test looked); with ``values`` (the
    formats that read the means, not the tidy frame's csv, json and parquet) a result of
    no row, or with means that are not numbers, are null, or are NaN or infinite (which
    :func:`~polars_irmetrics.compare` never returns: it refuses such per-query values),
    or another column the report reads of a wrong dtype (``delta``, ``statistic``,
    ``p_value``, ``std`` and ``baseline_std`` not numeric, ``significant`` not Boolean:
    :class:`~polars_irmetrics.errors.ColumnTypeError`), a null ``significant``, or a
    ``p_value`` or ``p_adjusted`` that is NaN or outside [0, 1]
    (:func:`~polars_irmetrics.comparison.plot.check_significance`), or a ``significant``
    that says other than ``p_adjusted <= alpha`` (alpha: ``options``', else the one
    :func:`~polars_irmetrics.compare` recorded, else 0.05:
    :func:`~polars_irmetrics.comparison.plot.check_flags`).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.report import check_report
    >>> check_report(pl.DataFrame({"mean": [0.5]}), -1, None)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: digits=-1 must be an integer in 0..12 (e.g. 4)
    """
    if not isinstance(result, pl.DataFrame):
        raise InvalidValueError(
            f"result is a {kind_of(result)}; pass the polars DataFrame irm.compare "
            "returned (collect a LazyFrame first)"
        )
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 12:
        raise InvalidValueError(f"digits={digits!r} must be an integer in 0..12 (e.g. 4)")
    if values and result.height == 0:
        raise InvalidValueError(
            "result holds no row: nothing to report; pass the frame irm.compare returned "
            "(a filter that kept nothing?)"
        )
    for column in ("mean", "baseline_mean", "value") if values else ():
        if column in result.columns and not result.schema[column].is_numeric():
            raise ColumnTypeError(
                f"column {column!r} of result has dtype {result.schema[column]}; the report "
                "reads numbers there: pass the frame irm.compare returned"
            )
        if column in result.columns and result.get_column(column).null_count():
            row = result.get_column(column).is_null().arg_true()[0]
            raise InvalidValueError(
                f"column {column!r} of result is null in row {row}; the report reads a "
                "number there: pass the frame irm.compare returned, or drop that row"
            )
        if column in ("mean", "baseline_mean") and column in result.columns:
            _refuse_not_finite(result, column)
    if values:  # every other column a report reads (text read as a number fails in
        # Python's words; a significant "false" would read as true)
        check_dtypes(
            result,
            ("delta", "statistic", "p_value", "std", "baseline_std"),
            ("significant",),
            reader="the report",
            fix="pass the frame irm.compare returned",
        )
        check_significance(result, ("p_value", "p_adjusted"), reader="the report")
    for column in ("std", "baseline_std") if values else ():
        if column in result.columns:
            _refuse_not_finite(result, column)
    if options is not None and not isinstance(options, CompareOptions):
        raise InvalidValueError(
            f"options= takes the irm.compare options recorded with a result (a "
            f"CompareOptions) or None, got {kind_of(options)}; leave it out to read what "
            "irm.compare recorded"
        )
    record = recall(result) if options is not None or values else None
    if options is not None and record is not None and record.procedure == "compare":
        ran = record.options.alternative
        if options.alternative != ran:  # the markers and the footnote read which way
            raise InvalidValueError(
                f"options= says alternative={options.alternative!r}, and irm.compare ran "
                f"this result's tests with alternative={ran!r}: the markers (better or "
                "worse) and the footnote read which way the test looked, so they would "
                "name a test that was not run; drop options= (the result's record names "
                "its test), or compare again with "
                f"alternative={options.alternative!r}"
            )
    if values:  # the markers read significant: it must say what its p-value says
        check_flags(
            result,
            None if options is None else options.alpha,
            given_as="options=",
            recorded=None if record is None else record.options.alpha,
            tukey=record is not None and record.procedure == "tukey_hsd",
            reader="the report",
            fix="pass the frame irm.compare returned, or options=CompareOptions(alpha=...) "
            "with the alpha it ran with",
        )


def _refuse_not_finite(result: pl.DataFrame, column: str) -> None:
    """Refuse a NaN or infinite ``mean`` or ``baseline_mean`` (a frame edited by hand):
    :func:`~polars_irmetrics.compare` refuses NaN and infinite per-query values (they
    cannot be paired), so its result holds none, and beside one the best mean (bold) and
    the markers would be read among the other cells as if it were not there; and a null,
    NaN or infinite ``std`` or ``baseline_std`` (:func:`with_std` gives none), which
    would print as ``± nan``."""
    values = result.get_column(column)
    spread = column in ("std", "baseline_std")  # a null one is refused too
    undefined = values.is_null() if spread else pl.repeat(False, len(values), eager=True)
    if values.dtype.is_float():
        undefined = undefined | values.is_nan() | values.is_infinite()
    bad = undefined.fill_null(False).arg_true()
    if not bad.len():
        return
    row = int(bad[0])
    named = ("metric", "baseline" if column.startswith("baseline") else "system")
    where = [f"{n} {result.get_column(n)[row]!r}" for n in named if n in result.columns]
    said = f" ({', '.join(where)})" if where else ""
    more = f", and {bad.len() - 1} more row(s)" if bad.len() > 1 else ""
    shown = "null" if values[row] is None else repr(values[row])
    if spread:
        raise InvalidValueError(
            f"column {column!r} of result is {shown} in row {row}{said}{more}: "
            "a standard deviation of per-query values is a finite number; pass "
            "with_std(result, per_query) with the per_query=True result of the same "
            "irm.compare call, or drop the columns: result.drop('std', 'baseline_std')"
        )
    raise InvalidValueError(
        f"column {column!r} of result is {shown} in row {row}{said}{more}: "
        "irm.compare refuses NaN and infinite per-query values, so its means are finite "
        "numbers, and beside this one the best mean (bold) and the markers would be "
        "chosen among the other cells; pass the frame irm.compare returned, or drop such "
        f"rows: result.filter(pl.col({column!r}).is_finite())"
    )


#: The formats of the tidy result itself, which no report option shapes.
TIDY_FORMATS = ("csv", "json", "parquet")


def check_tidy(
    fmt: str,
    markers: object,
    digits: object,
    options: object,
    *,
    named: str | None = None,
    fix: str | None = None,
) -> None:
    """A report option given with a tidy format (csv, json, parquet), which writes the
    result's frame as it is and would ignore the option, refused by name: ``markers``
    other than ``"letters"``, ``digits`` other than 4, ``options`` other than
    ``None``. ``named`` is how the message names the format (default ``fmt='csv'``),
    ``fix`` the report it offers (default ``fmt='markdown'``).

    Examples
    --------
    >>> from polars_irmetrics.comparison.report import check_tidy
    >>> check_tidy("csv", "daggers", 4, None)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: markers='daggers' marks the cells of a ...
    """
    if fmt not in TIDY_FORMATS:
        return
    named = f"fmt={fmt!r}" if named is None else named
    fix = "fmt='markdown'" if fix is None else fix
    if markers != "letters":
        given, does, lacks = f"markers={markers!r}", "marks the cells", "has no markers"
    elif digits != 4:
        given, does, lacks = f"digits={digits!r}", "rounds the means", "keeps every decimal"
    elif options is not None:
        given, does, lacks = "options=...", "names the test in the footnote", "has no footnote"
    else:
        return
    option = given.split("=")[0]
    raise InvalidValueError(
        f"{given} {does} of a report (terminal, markdown, latex), and {named} writes the "
        f"tidy table, which {lacks}: drop {option}=, or write a report (e.g. {fix})"
    )


def with_std(result: pl.DataFrame, per_query: pl.DataFrame) -> pl.DataFrame:
    """``result`` with ``std`` and ``baseline_std``: the standard deviation of each
    system's per-query values over the pair's queries (population, ``ddof=0``: ranx's
    ``evaluate(..., return_std=True)``), from the ``per_query=True`` result of the same
    :func:`~polars_irmetrics.compare` call. The reports show them as ``mean ± std``;
    the new frame keeps what ``compare`` recorded for ``result`` (the footnote still
    names the test). A ``per_query`` with a null or NaN value (``InvalidValueError``),
    a query in two rows of one comparison (``DuplicateError``), or no row of a
    comparison of ``result`` (``InvalidValueError``: its spread would print as
    ``± nan``) is refused: its spread would be of other rows.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.report import with_std
    >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"]})
    >>> per_query = pl.DataFrame({
    ...     "metric": ["map"] * 2, "system": ["b"] * 2, "baseline": ["a"] * 2,
    ...     "value": [0.5, 1.0], "baseline_value": [0.2, 0.2]})
    >>> with_std(result, per_query).row(0)
    ('map', 'b', 'a', 0.25, 0.0)
    """
    keys = ["metric", "system", "baseline"]
    missing = [c for c in (*keys, "value", "baseline_value") if c not in per_query.columns]
    if missing:
        raise ColumnNotFoundError(
            f"column {missing[0]!r} is not in per_query; pass the per_query=True result of "
            "irm.compare"
        )
    check_per_query(per_query)  # a null value or a query twice: a spread of other rows
    spread = per_query.group_by(keys).agg(
        pl.col("value").std(ddof=0).alias("std"),
        pl.col("baseline_value").std(ddof=0).alias("baseline_std"),
    )
    out = result.drop("std", "baseline_std", strict=False).join(
        spread, on=keys, how="left", maintain_order="left"
    )
    lacking = out.filter(pl.col("std").is_null())
    if lacking.height:  # its spread would print as "± nan", and its baseline's too
        metric, system, baseline = lacking.select(keys).row(0)
        raise InvalidValueError(
            f"per_query holds no value of system {system!r} against {baseline!r} on "
            f"metric {metric!r} ({lacking.height} comparison(s) of result without "
            "per-query values): their spread cannot be read; pass the per_query=True "
            "result of the same irm.compare call"
        )
    record = recall(result)  # the same comparison: its footnote still names the test
    return out if record is None else remember(out, record)


def table(
    result: pl.DataFrame, markers: Markers = "letters", options: CompareOptions | None = None
) -> Table:
    """The report's cells from :func:`~polars_irmetrics.compare`'s result (with the
    standard deviations where it has :func:`with_std`'s columns).

    A system's marker and the bold read each metric's direction from the result's
    ``higher_is_better`` column (``compare`` writes it from the metric's declaration):
    for a lower-is-better metric, "significantly better" is a significantly lower
    mean, and the lowest mean is bold; for a metric with no better direction (a null
    ``higher_is_better``, such as ``calibration``) no cell is marked or bold.

    Which way a significant difference goes is the test's own
    (:func:`~polars_irmetrics.comparison.options.found_above`):
    the alternative of a one-sided test (``options``, else those ``compare``
    recorded), else the sign of the result's ``statistic`` (the signed-rank sums of
    Wilcoxon, which may disagree with the mean's sign), else of ``delta``. Where the
    test's direction and the mean's disagree (the means the table prints), the marker
    follows the test and the legend says so. A system given two means of one metric
    (in two rows: ``compare`` pairs every system on the same queries) is refused.
    """
    missing = [c for c in _NEEDED if c not in result.columns]
    if missing == ["higher_is_better"]:
        raise ColumnNotFoundError(
            "column 'higher_is_better' (each metric's direction) is not in the frame; "
            "pass the result of irm.compare, or add the column (True where a higher "
            "value is better, False for an error such as logloss, null where neither is)"
        )
    if missing and {"value", "baseline_value"} <= set(result.columns):
        raise ColumnNotFoundError(
            f"column {missing[0]!r} is not in the frame, which holds per-query values "
            "(compare(..., per_query=True)); pass the result of irm.compare without "
            "per_query=True (irm.report takes the per-query values as per_query=, for "
            "its plots)"
        )
    if missing:
        raise ColumnNotFoundError(
            f"column {missing[0]!r} is not in the frame; pass the result of irm.compare"
        )
    if markers not in ("letters", "daggers"):
        raise InvalidValueError(f"markers={markers!r} is not valid; choose 'letters' or 'daggers'")
    systems: list[str] = []
    metrics: list[str] = []
    marks: dict[tuple[str, str], list[str]] = {}
    higher: dict[str, bool | None] = {}
    rows = result.select(_NEEDED).iter_rows()
    for metric, system, baseline, _, _, _, _, up in rows:
        for name in (baseline, system):
            if name not in systems:
                systems.append(name)
        if metric not in metrics:
            metrics.append(metric)
        if up is not None and not isinstance(up, bool):
            raise InvalidValueError(
                f"higher_is_better of metric {metric!r} is {up!r}; it must be True, False "
                "or null (pass the result of irm.compare)"
            )
        if higher.setdefault(metric, up) != up:
            raise InvalidValueError(
                f"metric {metric!r} has higher_is_better {higher[metric]!r} in one row and "
                f"{up!r} in another; pass the result of irm.compare (one direction per "
                "metric)"
            )
    means = one_mean_each(result, "the table would print one of them")
    for metric, up in higher.items():
        check_declared(metric, up, reader="the report")
    baselines = set(result.get_column("baseline").unique().to_list())
    if markers == "daggers" and len(baselines) != 1:
        raise InvalidValueError(
            "markers='daggers' needs one baseline (mode='baseline'); use markers='letters'"
        )
    letter = {s: _letter(i) for i, s in enumerate(systems)}
    statistic = (
        result.get_column("statistic")
        if "statistic" in result.columns and result.schema["statistic"].is_numeric()
        else pl.Series([None] * result.height, dtype=pl.Float64)
    )
    if options is None:
        record = recall(result)
        options = None if record is None else record.options
    else:  # the caller's word for a frame compare may not have recorded: checked
        check_stated(result, options, statistic)
    disagree: list[str] = []
    for (metric, system, baseline, mean, baseline_mean, delta, significant, up), stat in zip(
        result.select(_NEEDED).iter_rows(), statistic, strict=True
    ):
        above = found_above(delta, stat, options)
        if not significant or above is None or up is None:
            continue  # no direction: a significant difference is neither better nor worse
        better = above == up  # the system is better than its baseline
        # against the means the table prints (a delta edited apart from them included)
        if mean == baseline_mean or (mean > baseline_mean) != above:
            side, mean_side = ("above", "below") if above else ("below", "above")
            mean_side = "equal to" if mean == baseline_mean else mean_side
            disagree.append(
                f"{system} {side} {baseline} on {metric} ({'better' if better else 'worse'}), "
                f"though its mean is {mean_side} {baseline}'s"
            )
        winner, loser = (system, baseline) if better else (baseline, system)
        if markers == "daggers":
            marks.setdefault((system, metric), []).append("†" if better else "‡")
        else:
            marks.setdefault((winner, metric), []).append(letter[loser])
    for key in marks:
        marks[key].sort(key=lambda name: (len(name), name))  # a .. z, aa, ab ..: by system
    stds: dict[tuple[str, str], float] | None = None
    if {"std", "baseline_std"} <= set(result.columns):
        stds = {}
        spread = result.select("metric", "system", "baseline", "std", "baseline_std")
        for metric, system, baseline, std, baseline_std in spread.iter_rows():
            stds[system, metric] = math.nan if std is None else std
            stds[baseline, metric] = math.nan if baseline_std is None else baseline_std
    if markers == "daggers":
        (base,) = baselines
        legend = [f"†/‡: significantly better/worse than {base} (adjusted p <= alpha)"]
    else:
        separated = len(systems) > len(_ALPHABET)  # marker_text's commas
        legend = [
            "superscript x: significantly better than system x (adjusted p <= alpha)"
            + ("; the markers of a cell are separated by commas" if separated else ""),
            ", ".join(f"{letter[s]} = {s}" for s in systems),
        ]
    if disagree:
        legend.append(
            "the markers follow the test, which found "
            + "; ".join(disagree)
            + " (the table's numbers are the means)"
        )
    lower = [m for m in metrics if higher[m] is False]
    if lower:
        names = ", ".join(lower)
        legend.append(f"lower is better for {names}: the best mean is the lowest")
    undirected = [m for m in metrics if higher[m] is None]
    if undirected:
        names = ", ".join(undirected)
        legend.append(f"no better direction for {names}: nothing marked or bold")
    if stds is not None:
        legend.append(
            "mean ± standard deviation of the per-query values (ddof=0): each system's "
            "over the paired queries, as ranx's return_std"
        )
    return Table(systems, metrics, means, marks, legend, higher, stds)


#: The tests whose one-sided p-value is below 1/2 only where the statistic is on the
#: alternative's side (their null distributions are symmetric about 0).
_SYMMETRIC = ("t", "wilcoxon", "randomization")


def check_stated(result: pl.DataFrame, options: CompareOptions, statistic: pl.Series) -> None:
    """Refuse ``options=`` whose one-sided ``alternative`` the result's own rows deny:
    a significant row whose ``p_value`` is below 1/4 and whose ``statistic`` is on the
    other side of 0 cannot come from that test (a t, Wilcoxon or randomization test's
    one-sided p-value is 1/2 or more where its statistic points the other way), so the
    markers, which read the alternative, would call a system better that the test
    found worse (a frame compare recorded is checked against its record instead).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.options import CompareOptions
    >>> from polars_irmetrics.comparison.report import check_stated
    >>> rows = pl.DataFrame({"metric": ["P@1"], "system": ["b"], "baseline": ["a"],
    ...                      "significant": [True], "p_value": [0.001]})
    >>> check_stated(rows, CompareOptions(alternative="less"), pl.Series([-4.2]))
    >>> check_stated(rows, CompareOptions(alternative="greater"), pl.Series([-4.2]))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: options= says alternative='greater' (test='t'), and b against a on P@1 is significant with p_value 0.001 and statistic -4.2, below 0: a one-sided test gives a p-value under 1/2 only to a statistic on its own side, so this result is not of that test; pass the options irm.compare was called with
    """  # noqa: E501
    if options.alternative == "two-sided" or options.test not in _SYMMETRIC:
        return
    if "p_value" not in result.columns or not result.schema["p_value"].is_numeric():
        return
    up = options.alternative == "greater"
    rows = result.select("metric", "system", "baseline", "significant", "p_value").iter_rows()
    for (metric, system, baseline, significant, p), stat in zip(rows, statistic, strict=True):
        if not significant or p is None or stat is None or math.isnan(stat) or stat == 0:
            continue
        if p < 0.25 and (stat > 0) != up:
            raise InvalidValueError(
                f"options= says alternative={options.alternative!r} (test="
                f"{options.test!r}), and {system} against {baseline} on {metric} is "
                f"significant with p_value {p:.3g} and statistic {stat:.4g}, "
                f"{'below' if up else 'above'} 0: a one-sided test gives a p-value under "
                "1/2 only to a statistic on its own side, so this result is not of that "
                "test; pass the options irm.compare was called with"
            )


_REPRO = ("measure", "metric", "run", "value")
#: The column of the measures of document order (``ktu``, ``rbo``: no metric).
REPRO_ORDER = "document order"
_REPRO_NOTE = (
    "repro_eval's measures (Breuer et al., SIGIR 2020), original against reproduced: "
    "ktu, rbo: document order, mean over topics; rmse, nrmse: per-topic error; er: "
    "effect ratio; delta_ri: delta relative improvement; p_paired, p_unpaired: t-test "
    "p-values. No value is marked best."
)


def is_reproducibility(result: pl.DataFrame) -> bool:
    """Whether ``result`` is :func:`~polars_irmetrics.reproducibility`'s frame."""
    return set(_REPRO) <= set(result.columns) and "system" not in result.columns


def reproducibility_table(result: pl.DataFrame) -> tuple[Table, str]:
    """The report's cells of :func:`~polars_irmetrics.reproducibility`'s frame, and
    its note: a row per measure and run (``rmse (baseline)``; ``er`` alone), a column
    per metric (``document order`` for ``ktu`` and ``rbo``), no markers, nothing bold.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.report import reproducibility_table, terminal
    >>> frame = pl.DataFrame({"measure": ["ktu", "rmse", "er"], "metric": [None, "P_1", "P_1"],
    ...                       "run": ["baseline", "baseline", None], "value": [0.5, 0.25, 1.0]})
    >>> cells, _ = reproducibility_table(frame)
    >>> print(terminal(cells, 2, note="(the note)"))
    measure          document order  P_1
    ---------------  --------------  ----
    ktu (baseline)   0.50
    rmse (baseline)                  0.25
    er                               1.00
    <BLANKLINE>
    (the note)
    <BLANKLINE>
    """
    rows: list[str] = []
    metrics: list[str] = []
    means: dict[tuple[str, str], float] = {}
    for measure, metric, run, value in result.select(_REPRO).iter_rows():
        row = str(measure) if run is None else f"{measure} ({run})"
        column = REPRO_ORDER if metric is None else str(metric)
        if row not in rows:
            rows.append(row)
        if column not in metrics:
            metrics.append(column)
        if (row, column) in means:
            raise InvalidValueError(
                f"measure {measure!r} of metric {metric!r} and run {run!r} has two rows; "
                "pass the frame irm.reproducibility returned"
            )
        means[row, column] = math.nan if value is None else float(value)
    if REPRO_ORDER in metrics:  # the document order first, as repro_eval's levels
        metrics.remove(REPRO_ORDER)
        metrics.insert(0, REPRO_ORDER)
    cells = Table(rows, metrics, means, {}, [], {}, row_label="measure", ranked=False)
    return cells, _REPRO_NOTE


def _number(value: float, digits: int) -> str:
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def _spread(table: Table, system: str, metric: str, digits: int, sign: str = " ± ") -> str:
    """`` ± std`` after a mean, where the table has standard deviations."""
    if table.stds is None or (system, metric) not in table.stds:
        return ""
    return sign + _number(table.stds[system, metric], digits)


def best(table: Table, metric: str) -> float:
    """The best mean of ``metric`` (the lowest where lower is better; NaN when none, when
    the metric has no better direction, or in a table of measures that rank nothing:
    reproducibility's)."""
    if not table.ranked or table.higher[metric] is None:
        return math.nan
    values = [table.means[s, metric] for s in table.systems if (s, metric) in table.means]
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return math.nan
    return max(finite) if table.higher[metric] else min(finite)


def footnote(
    result: pl.DataFrame, options: CompareOptions | None = None, *, recorded: bool = True
) -> str:
    """:func:`~polars_irmetrics.comparison.record.describe` with ``options``, or with
    those :func:`~polars_irmetrics.compare` (or :func:`~polars_irmetrics.tukey_hsd`)
    recorded for ``result`` (``recorded``). A frame ``tukey_hsd`` returned names its
    test itself: ``options=`` (a :func:`~polars_irmetrics.compare` call's) is refused
    there."""
    record = recall(result) if recorded else None
    procedure = "compare" if record is None else record.procedure
    if procedure == "tukey_hsd" and options is not None:
        raise InvalidValueError(
            "options= names the test of an irm.compare call, and this frame is "
            "irm.tukey_hsd's, whose footnote names Tukey's HSD and the alpha it was "
            "given: drop options="
        )
    if options is None and record is not None:
        options = record.options
    return describe(result, options, procedure)


def render_report(
    result: pl.DataFrame,
    fmt: TextFormat = "terminal",
    *,
    markers: Markers = "letters",
    digits: int = 4,
    options: CompareOptions | None = None,
) -> str:
    """The report of a comparison as text.

    Parameters
    ----------
    result
        The frame :func:`~polars_irmetrics.compare` returned (``per_query=False``).
    fmt
        ``"terminal"`` (aligned text), ``"markdown"``, ``"latex"`` (booktabs), ``"csv"``
        or ``"json"`` (the tidy frame itself). ``"html"`` is refused: the self-contained
        page (the table and the plots) is ``irm.report(result).to_html()``.
    markers
        ``"letters"`` (ranx style: ``a`` .. ``z``, then ``aa``, ``ab`` .. beyond 26
        systems, a cell's markers then separated by commas) or ``"daggers"`` (one
        baseline only). ``"csv"`` and ``"json"`` have no markers: only the default.
    digits
        Decimals of the means (0..12). The bold reads the unrounded means: two means
        that print alike may have only one bold (an exact tie bolds both).
        ``"csv"`` and ``"json"`` keep every decimal: only the default, 4.
    options
        The comparison's options, for the footnote; default: those
        :func:`~polars_irmetrics.compare` recorded for this very frame. ``"csv"`` and
        ``"json"`` have no footnote: only ``None``. An ``alternative`` other than the
        one recorded is refused: the markers read which way the test looked.

    Returns
    -------
    str

    Raises
    ------
    ColumnNotFoundError
        ``result`` is not a comparison result.
    ColumnTypeError
        A mean, ``delta``, ``statistic``, ``p_value`` or standard deviation that is not
        a number, or a ``significant`` that is not Boolean.
    InvalidValueError
        An unknown format (``"html"`` among them) or markers, ``digits`` not in 0..12,
        a null, NaN or infinite mean (``compare`` returns none), a null
        ``significant``, a ``p_value`` or ``p_adjusted`` NaN or outside [0, 1], daggers
        without a single baseline, or ``markers``, ``digits`` or ``options`` other than the
        default with ``"csv"`` or ``"json"``.

    Examples
    --------
    ``b`` beats ``a`` significantly, ``c`` does not differ from ``a``. The frame is
    built by hand, so the footnote says the test was not recorded:

    >>> import polars as pl
    >>> from polars_irmetrics.comparison.report import render_report
    >>> result = pl.DataFrame({
    ...     "metric": ["map", "map"], "system": ["b", "c"], "baseline": ["a", "a"],
    ...     "n": [20, 20], "mean": [0.5, 0.31], "baseline_mean": [0.3, 0.3],
    ...     "delta": [0.2, 0.01], "significant": [True, False],
    ...     "higher_is_better": [True, True]})
    >>> print(render_report(result))
    #  system  map
    -  ------  -------
    a  a       0.3000
    b  b       0.5000ᵃ
    c  c       0.3100
    <BLANKLINE>
    superscript x: significantly better than system x (adjusted p <= alpha)
    a = a, b = b, c = c
    Test, correction and alpha not recorded (pass options=CompareOptions(...)); 20 queries;
    baseline: a.

    LaTeX: booktabs, numbers aligned on the decimal point (``r@{.}l``), the best bold:

    >>> from polars_irmetrics.comparison.options import CompareOptions
    >>> print(render_report(result, "latex", markers="daggers",
    ...                     options=CompareOptions(baseline="a", correction=None)))
    % needs \\usepackage{booktabs}; numbers align on the decimal point (r@{.}l)
    \\begin{tabular}{lr@{.}l}
    \\toprule
    System & \\multicolumn{2}{c}{map} \\\\
    \\midrule
    a & 0&3000 \\\\
    b & \\textbf{0}&\\textbf{5000}$^{\\dagger}$ \\\\
    c & 0&3100 \\\\
    \\bottomrule
    \\end{tabular}
    <BLANKLINE>
    \\par\\smallskip{\\footnotesize $\\dagger$/$\\ddagger$: significantly better/worse than a
    (adjusted p $\\leq$ alpha). Two-sided paired t-test, no correction for multiple testing,
    significant at p $\\leq$ 0.05; 20 queries; baseline: a.}

    The bold reads the unrounded means: of two lower-is-better means that print alike at
    4 digits (0.30004 and 0.30001) only the lower is bold; an exact tie bolds both:

    >>> rmse = pl.DataFrame({
    ...     "metric": ["rmse", "rmse"], "system": ["b", "c"], "baseline": ["a", "a"],
    ...     "n": [20, 20], "mean": [0.30004, 0.30001], "baseline_mean": [0.5, 0.5],
    ...     "delta": [-0.19996, -0.19999], "significant": [False, False],
    ...     "higher_is_better": [False, False]})
    >>> print(render_report(rmse, "markdown").split("\\n\\n")[0])
    | system | rmse |
    |---|---:|
    | a | 0.5000 |
    | b | 0.3000 |
    | c | **0.3000** |
    >>> tie = rmse.with_columns(mean=pl.lit(0.3))
    >>> print(render_report(tie, "markdown").split("\\n\\n")[0])
    | system | rmse |
    |---|---:|
    | a | 0.5000 |
    | b | **0.3000** |
    | c | **0.3000** |
    """
    name: str = fmt  # a name the annotation does not allow, refused by name
    if name == "html":
        raise InvalidValueError(
            "report format 'html' is the page of irm.report (the table and the plots), "
            "which render_report does not render; use irm.report(result).to_html()"
        )
    if name not in ("terminal", "markdown", "latex", "csv", "json"):
        raise InvalidValueError(
            f"report format {fmt!r} is not a text format; choose one of "
            "terminal, markdown, latex, csv, json (html: irm.report(result).to_html(); "
            "parquet needs a file)"
        )
    check_report(result, digits, options, values=fmt not in ("csv", "json"))
    check_tidy(fmt, markers, digits, options)
    if fmt == "csv":
        return result.write_csv()
    if fmt == "json":
        buffer = io.StringIO()
        result.write_json(buffer)
        return buffer.getvalue() + "\n"
    if is_reproducibility(result):
        cells, note = reproducibility_table(result)
    else:
        cells, note = table(result, markers, options), footnote(result, options)
    if fmt == "terminal":
        return terminal(cells, digits, note)
    if fmt == "markdown":
        return markdown(cells, digits, note)
    return latex(cells, digits, note)


def _sup(table: Table, marks: list[str]) -> str:
    """The markers in superscript (the commas between them as they are)."""
    return "".join(_SUPERSCRIPT.get(c, c) for c in marker_text(table, marks))


def terminal(table: Table, digits: int = 4, note: str = "") -> str:
    """Aligned text: a letter per system, the means with superscript markers."""
    letters = ["#"] if table.ranked else []
    header = [*letters, table.row_label, *table.metrics]
    rows = [
        [_letter(i)][: len(letters)]
        + [s]
        + [
            _number(table.means[s, m], digits)
            + _sup(table, table.marks.get((s, m), []))
            + _spread(table, s, m, digits)
            if (s, m) in table.means
            else ""
            for m in table.metrics
        ]
        for i, s in enumerate(table.systems)
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [header, ["-" * w for w in widths], *rows]
    text = "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in lines
    )
    return text + "\n\n" + "\n".join([*table.legend, note] if note else table.legend) + "\n"


def markdown(table: Table, digits: int = 4, note: str = "") -> str:
    """A Markdown table (numbers right-aligned, the best bold) and its legend."""
    out = [f"| {table.row_label} | " + " | ".join(markdown_cell(m) for m in table.metrics) + " |"]
    out.append("|---|" + "---:|" * len(table.metrics))
    for s in table.systems:
        cells = []
        for m in table.metrics:
            if not table.ranked and (s, m) not in table.means:  # a measure without m
                cells.append("")
                continue
            value = table.means.get((s, m), math.nan)
            text = _number(value, digits)
            if value == best(table, m):
                text = f"**{text}**"
            cells.append(
                text + _sup(table, table.marks.get((s, m), [])) + _spread(table, s, m, digits)
            )
        out.append(f"| {markdown_cell(s)} | " + " | ".join(cells) + " |")
    legend = [*table.legend, note] if note else table.legend
    return "\n".join(out) + "\n\n" + "\n\n".join(legend) + "\n"


def _latex_legend(line: str) -> str:
    """A legend line in LaTeX: ``<=`` as ``≤`` (then ``$\\leq$``), a full stop at the end."""
    return latex_escape(line.replace("<=", "≤") + ("" if line.endswith(".") else "."))


def _latex_marks(table: Table, marks: list[str]) -> str:
    if not marks:
        return ""
    names = {"†": "\\dagger", "‡": "\\ddagger"}
    return "$^{" + marker_text(table, [names.get(m, m) for m in marks]) + "}$"


def _latex_cell(value: float, digits: int, bold: bool, marks: str) -> str:
    if math.isnan(value):
        return "\\multicolumn{2}{c}{--}"
    whole, _, fraction = f"{value:.{digits}f}".partition(".")
    if bold:
        whole, fraction = f"\\textbf{{{whole}}}", f"\\textbf{{{fraction}}}" if fraction else ""
    return f"{whole}&{fraction}{marks}"


def latex(table: Table, digits: int = 4, note: str = "") -> str:
    """A booktabs tabular, each metric an ``r@{.}l`` pair (decimal point aligned)."""
    out = [
        "% needs \\usepackage{booktabs}; numbers align on the decimal point (r@{.}l)",
        "\\begin{tabular}{l" + "r@{.}l" * len(table.metrics) + "}",
        "\\toprule",
        table.row_label.capitalize()
        + " & "
        + " & ".join(f"\\multicolumn{{2}}{{c}}{{{latex_escape(m)}}}" for m in table.metrics)
        + " \\\\",
        "\\midrule",
    ]
    for s in table.systems:
        cells = []
        for m in table.metrics:
            value = table.means.get((s, m), math.nan)
            marks = _latex_marks(table, table.marks.get((s, m), []))
            spread = _spread(table, s, m, digits, sign=" $\\pm$ ")
            cells.append(_latex_cell(value, digits, value == best(table, m), marks + spread))
        out.append(latex_escape(s) + " & " + " & ".join(cells) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}", ""]
    legend = [*table.legend, note] if note else table.legend
    text = " ".join(_latex_legend(line) for line in legend)
    return "\n".join(out) + f"\n\\par\\smallskip{{\\footnotesize {text}}}\n"


def report_renderers(
    *, markers: Markers = "letters", digits: int = 4, options: CompareOptions | None = None
) -> dict[str, Renderer]:
    """The report's own formats for :func:`~polars_irmetrics.io.output.write_table`:
    ``terminal`` (also ``table``, the format ``.txt`` names), ``markdown`` and
    ``latex``; csv, json and parquet are the tidy result as every table writes it."""
    out: dict[str, Renderer] = {
        name: partial(_report_bytes, fmt=name, markers=markers, digits=digits, options=options)
        for name in ("terminal", "markdown", "latex")
    }
    out["table"] = out["terminal"]
    return out


def write_report(
    result: pl.DataFrame,
    path: str | Path | None,
    fmt: FileFormat | None = None,
    *,
    markers: Markers = "letters",
    digits: int = 4,
    options: CompareOptions | None = None,
) -> None:
    """Write :func:`render_report`'s text to ``path`` (``None``: standard output), in
    ``fmt``, else the format ``path``'s suffix names (``.md``, ``.tex``, ``.txt``,
    ``.csv``, ``.json``, ``.parquet``; another suffix is refused); ``"terminal"`` on
    standard output; ``"parquet"`` writes the tidy result (csv, json and parquet,
    the tidy frame, refuse ``markers``, ``digits`` and ``options`` other than the
    defaults, which they would ignore). The file is written
    atomically (:func:`~polars_irmetrics.io.output.write_table`). The HTML page
    (``.html``, ``.htm``, ``fmt="html"``) is refused, nothing written: it is
    :meth:`~polars_irmetrics.comparison.publish.Report.save`'s
    (``irm.report(result).save(path)``).

    Raises
    ------
    InvalidValueError
        The HTML page, another suffix or format, and :func:`render_report`'s.
    MissingFileError
        The folder of ``path`` does not exist.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.report import write_report
    >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...     "mean": [0.5], "baseline_mean": [0.25], "delta": [0.25],
    ...     "significant": [False], "higher_is_better": [True]})
    >>> write_report(result, "x.html")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: report file 'x.html' names the HTML page, ...
    """
    check_report(result, digits, options, values=False)  # parquet renders nothing here
    renderers = report_renderers(markers=markers, digits=digits, options=options)
    resolved = resolve_format(path, fmt, default="terminal", renderers=renderers)
    if fmt is None and path is not None:  # named by the file's suffix
        named = f"report file {str(path)!r}"
        check_tidy(resolved, markers, digits, options, named=named, fix="a .md file")
    else:
        check_tidy(resolved, markers, digits, options)
    if resolved == "html":
        page = path is not None and format_of(path) == "html"  # a file named .html, .htm
        target = str(path) if page else "report.html"
        named = f"report file {str(path)!r}" if fmt is None else f"fmt={fmt!r}"
        raise InvalidValueError(
            f"{named} names the HTML page, which write_report does not write (it holds "
            f"the plots too); write it with irm.report(result).save({target!r})"
        )
    write_table(result, path, fmt, renderers=renderers, default="terminal")


def _report_bytes(
    result: pl.DataFrame,
    *,
    fmt: TextFormat,
    markers: Markers,
    digits: int,
    options: CompareOptions | None,
) -> bytes:
    return render_report(result, fmt, markers=markers, digits=digits, options=options).encode()
