"""Plots of a comparison (matplotlib, the ``plot`` extra).

* :func:`plot_metric_curves`: metric@k per system, from ``evaluate(..., systems=system)``
  over a cutoff range (``"ndcg@1..20"``).
* :func:`plot_deltas`: per-query deltas against the baseline, sorted, from
  ``compare(..., per_query=True)``.
* :func:`plot_significance_matrix`: system × system adjusted p-values, significant
  cells starred and marked with the better side (``▲``/``▼``), from
  ``compare(..., mode="pairs")``.
* :func:`plot_ci`: each comparison's delta with its confidence interval.
* :func:`plot_swaps`: two evaluations' orderings of the same systems (a slope chart).
* :func:`plot_similarity_distribution`: a rank similarity's per-query histogram, one
  panel per system.

Each takes a DataFrame, or the LazyFrame :func:`~polars_irmetrics.evaluate` gives for a
LazyFrame (collected).

Each returns the :class:`matplotlib.figure.Figure` it drew on, so that it can be
restyled and saved; given ``ax=`` (one :class:`~matplotlib.axes.Axes`, or one per
panel) it draws there, in the caller's figure; without it, it builds a new figure
(without pyplot, so no backend or global state is touched). Given ``path``, the figure
is saved as PNG or SVG (by the suffix). Without matplotlib they raise
:class:`MissingDependencyError` naming the extra.

A win is better in the metric's direction (the ``higher_is_better`` column
:func:`~polars_irmetrics.compare` writes: a lower value of ``logloss`` or ``rmse``);
the metric names are never parsed again to learn it.

Colours are colour-blind safe: the Okabe-Ito blue and vermillion for wins and losses,
the cividis map (readable by every form of colour blindness, and in grey) for
p-values, whose labels are black or white by the cell's luminance (WCAG contrast).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.comparison.agreement import (
    matched,
    mean_by_system,
    orientation,
    swapped_pairs,
)
from polars_irmetrics.comparison.options import CompareOptions, found_above
from polars_irmetrics.comparison.record import recall
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    IrmError,
)
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.options import plain_number
from polars_irmetrics.io.output import check_target, write_atomic
from polars_irmetrics.metrics.registry import parse_metric

_INSTALL = "pip install 'polars_irmetrics[plot]'"
_MISSING = f"plots need matplotlib, which is not installed: {_INSTALL}"

if TYPE_CHECKING:
    import matplotlib as _mpl
    import matplotlib.figure as _mpl_figure
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
else:  # imported at the first plot (import time)
    _mpl = LazyModule("matplotlib", missing=_MISSING)
    _mpl_figure = LazyModule("matplotlib.figure", missing=_MISSING)

__all__ = [
    "BLUE",
    "DEFAULT_ALPHA",
    "OKABE_ITO",
    "VERMILLION",
    "check_declared",
    "check_dtypes",
    "check_flags",
    "check_per_query",
    "check_plot_path",
    "check_significance",
    "figure_bytes",
    "label_color",
    "one_mean_each",
    "plot_ci",
    "plot_deltas",
    "plot_metric_curves",
    "plot_significance_matrix",
    "plot_similarity_distribution",
    "plot_swaps",
]

_RESULT = "the result of irm.compare"
#: The frame plot_metric_curves reads, as its refusals name it.
_CURVES = "evaluate(..., systems=system) over a cutoff range"
#: Okabe-Ito colours (colour-blind safe): wins, losses, ties.
BLUE, VERMILLION, GREY = "#0072B2", "#D55E00", "#999999"
#: Okabe-Ito's colour-blind safe palette (yellow last: faint on white), for lines.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
             "#F0E442")  # fmt: skip
_CMAP = "cividis_r"


def _need_matplotlib() -> None:
    _mpl_figure.Figure  # noqa: B018 (imports matplotlib, or names the extra)


def _figure(**kwargs: Any) -> Figure:
    _need_matplotlib()
    return _mpl_figure.Figure(layout="constrained", **kwargs)


def _axes(
    ax: Axes | Sequence[Axes] | None,
    panels: int,
    what: str,
    *,
    grid: tuple[int, int],
    figsize: tuple[float, float],
) -> list[Axes]:
    """``panels`` axes: the given ones, or those of a new figure laid out as ``grid``."""
    _need_matplotlib()
    if ax is None:
        figure = _figure(figsize=figsize)
        return list(figure.subplots(*grid, squeeze=False).ravel())
    given = list(ax) if isinstance(ax, Sequence) else [ax]
    if len(given) != panels:
        raise InvalidValueError(
            f"ax= has {len(given)} axes but this plot draws {panels} panel"
            f"{'s' if panels != 1 else ''} ({what}); pass {panels} axes, or ax=None"
        )
    return given


def _root(ax: Axes) -> Figure:
    figure: Any = ax.figure
    while not isinstance(figure, _mpl_figure.Figure):  # a SubFigure: its parent
        figure = figure.figure
    return figure


def label_color(rgba: Sequence[float]) -> str:
    """``"black"`` or ``"white"``, whichever contrasts more with the colour ``rgba``
    (WCAG relative luminance; black wins above 0.179).

    Examples
    --------
    >>> from polars_irmetrics.comparison.plot import label_color
    >>> label_color((1.0, 0.9, 0.2, 1.0)), label_color((0.0, 0.13, 0.3, 1.0))
    ('black', 'white')
    """
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "black" if luminance > 0.179 else "white"


def check_plot_path(path: str | Path) -> str:
    """The image format ``path`` names (``"png"`` or ``"svg"``), after checking that it
    can be written (:func:`~polars_irmetrics.io.output.check_target`): a command
    checks it before it computes or writes anything.

    Examples
    --------
    >>> from polars_irmetrics.comparison.plot import check_plot_path
    >>> check_plot_path("deltas.SVG")
    'svg'
    >>> check_plot_path("deltas.pdf")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: plot file 'deltas.pdf' must end in .png or .svg ...
    """
    suffix = Path(path).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise InvalidValueError(
            f"plot file {str(path)!r} must end in .png or .svg (e.g. deltas.png)"
        )
    check_target(path)
    return suffix[1:]


def figure_bytes(figure: Figure, fmt: str) -> bytes:
    """``figure`` as a PNG or SVG file's bytes (100 dpi, tight bounding box)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def _save(figure: Figure, path: str | Path | None) -> Figure:
    if path is not None:
        data = figure_bytes(figure, check_plot_path(path))
        write_atomic(path, lambda handle: handle.write(data))  # whole or not at all
    return figure


def _frame(frame: FrameInput, name: str) -> pl.DataFrame:
    """``frame`` as a DataFrame: a LazyFrame collected (``irm.evaluate`` gives one for a
    LazyFrame), a pandas or Arrow table converted."""
    data = as_polars(frame, name)
    return data.collect() if isinstance(data, pl.LazyFrame) else data


def _need(frame: pl.DataFrame, columns: tuple[str, ...], source: str) -> None:
    for column in columns:
        if column not in frame.columns:
            raise ColumnNotFoundError(f"column {column!r} is not in the frame; pass {source}")


def check_dtypes(
    frame: pl.DataFrame,
    numbers: Sequence[str] = (),
    flags: Sequence[str] = (),
    *,
    source: str = "result",
    reader: str = "the plot",
    fix: str = "pass the result of irm.compare",
) -> None:
    """Refuse a column of ``frame`` (``source``, as the message names it) whose dtype is
    not what ``reader`` reads there (:class:`ColumnTypeError`): ``numbers`` (a numeric
    dtype) and ``flags`` (Boolean); a column of nulls only (dtype Null) passes, its
    values are checked where they are read, and a column not in ``frame`` is not
    checked. Text read as a number would fail in Python's words (or be read as a number
    by numpy), and a ``significant`` of ``"false"`` would read as true.

    Examples
    --------
    >>> check_dtypes(pl.DataFrame({"std": ["0.1"]}), ["std"], reader="the report")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 'std' of result has dtype String; the report reads numbers there: pass the result of irm.compare
    """  # noqa: E501
    for columns, numeric, what in ((numbers, True, "numbers"), (flags, False, "True or False")):
        for column in columns:
            dtype = frame.schema.get(column)
            if dtype is None or dtype == pl.Null:
                continue  # not read, or nulls only: their values are checked where read
            if dtype.is_numeric() if numeric else dtype == pl.Boolean:
                continue
            raise ColumnTypeError(
                f"column {column!r} of {source} has dtype {dtype}; {reader} reads {what} "
                f"there: {fix}"
            )


def check_significance(
    frame: pl.DataFrame,
    p_values: Sequence[str],
    *,
    reader: str,
    fix: str = "pass the frame irm.compare returned, or drop those rows",
) -> None:
    """Refuse a comparison row (``frame``, named "result") whose ``significant`` is null
    (``reader`` would read it as not significant: no marker, no word), or whose
    ``p_values`` columns (those in ``frame``, numeric: :func:`check_dtypes` first) hold a
    NaN or a value outside [0, 1] (no p-value: drawn as ``3.000*``, its colour clipped);
    a null p-value is left to the caller. The first row is named by its ``metric``,
    ``system`` and ``baseline``.

    Examples
    --------
    >>> rows = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...                      "significant": [True], "p_adjusted": [3.0]})
    >>> check_significance(rows, ["p_adjusted"], reader="the report")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'p_adjusted' of result is 3.0 on 1 row(s) (first: metric 'map', system 'b', baseline 'a'): a p-value is a probability, in [0, 1]: no test gives this one, and the report's markers would stand on it; pass the frame irm.compare returned, or drop those rows
    """  # noqa: E501
    keys = [key for key in ("metric", "system", "baseline") if key in frame.columns]

    def refuse(column: str, bad: pl.DataFrame, shown: str, why: str) -> None:
        _refuse_rows(bad, column, shown, source="result", keys=keys, fix=f"{why}; {fix}")

    if "significant" in frame.columns:
        bad = frame.filter(pl.col("significant").is_null())
        if bad.height:
            refuse(
                "significant",
                bad,
                "null",
                f"{reader} would read it as not significant (no marker, no word)",
            )
    for column in p_values:
        if column not in frame.columns or not frame.schema[column].is_numeric():
            continue
        p = pl.col(column).cast(pl.Float64)
        bad = frame.filter(p.is_nan() | (p < 0) | (p > 1))
        if bad.height:
            refuse(
                column,
                bad,
                repr(bad.get_column(column).cast(pl.Float64)[0]),
                f"a p-value is a probability, in [0, 1]: no test gives this one, and "
                f"{reader}'s markers would stand on it",
            )


#: The level a frame's ``significant`` is read at where no alpha is recorded or given.
DEFAULT_ALPHA = 0.05


def check_flags(
    frame: pl.DataFrame,
    given: float | None,
    *,
    given_as: str,
    recorded: float | None,
    reader: str,
    fix: str,
    tukey: bool = False,
) -> None:
    """Refuse a comparison row (``frame``, named "result") whose ``significant`` says
    other than its p-value at alpha: ``given`` (the caller's keyword ``given_as``), else
    ``recorded`` (the one :func:`~polars_irmetrics.compare` recorded for the frame), else
    :data:`DEFAULT_ALPHA`, the message saying which:
    :func:`~polars_irmetrics.compare` writes ``p_adjusted <= alpha``
    (:func:`~polars_irmetrics.tukey_hsd`, which has no ``p_adjusted``, ``p_value <=
    alpha``: ``tukey``), so a frame edited or built by hand with ``significant`` True
    beside ``p_adjusted`` 0.9 would have ``reader`` mark a difference no test found (and
    False beside 0.001 leave one out). A comparison without ``p_adjusted`` is read by its
    ``p_value``, which no correction raises above the adjusted one: only a True beside
    a ``p_value`` above ``alpha`` is refused there (unless ``tukey``). ``fix`` ends the
    message. Run :func:`check_dtypes` and :func:`check_significance` first; a
    null p-value is left to the caller. The first row is named by its ``metric``,
    ``system`` and ``baseline``.

    Examples
    --------
    >>> rows = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...                      "significant": [True], "p_adjusted": [0.9]})
    >>> check_flags(rows, 0.95, given_as="options=", recorded=None, reader="the report",
    ...             fix="drop them")
    >>> check_flags(rows, None, given_as="options=", recorded=None, reader="the report",
    ...             fix="drop them")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'significant' of result is True on 1 row(s) where p_adjusted is above alpha 0.05 (first: metric 'map', system 'b', baseline 'a', p_adjusted 0.9; alpha: the default, as none was recorded for this frame nor given): significant is p_adjusted <= alpha, so the report would mark a difference the test did not find; drop them
    """  # noqa: E501
    column = "p_adjusted" if "p_adjusted" in frame.columns else "p_value"
    if "significant" not in frame.columns or column not in frame.columns:
        return
    if not frame.schema[column].is_numeric() or frame.schema["significant"] != pl.Boolean:
        return  # refused by check_dtypes, or nulls only (refused where read)
    if given is not None:
        level, where = given, f"given as {given_as}"
    elif recorded is not None:
        level, where = recorded, "recorded by irm.compare"
    else:
        level, where = DEFAULT_ALPHA, "the default, as none was recorded for this frame nor given"
    keys = [key for key in ("metric", "system", "baseline") if key in frame.columns]
    p = pl.col(column).cast(pl.Float64)
    flagged = pl.col("significant")
    for bad, shown, side, what in (
        (flagged & (p > level), "True", "above", "mark a difference the test did not find"),
        (~flagged & (p <= level), "False", "at or below", "leave out a difference it found"),
    )[: 1 if column == "p_value" and not tukey else 2]:
        rows = frame.filter(bad)
        if rows.height:
            first = ", ".join(f"{key} {rows.get_column(key)[0]!r}" for key in keys)
            value = rows.get_column(column).cast(pl.Float64)[0]
            raise InvalidValueError(
                f"column 'significant' of result is {shown} on {rows.height} row(s) where "
                f"{column} is {side} alpha {level:g} (first: {first}, {column} {value!r}; "
                f"alpha: {where}): significant is {column} <= alpha, so {reader} would "
                f"{what}; {fix}"
            )


#: The columns of ``compare(..., per_query=True)`` beside its query id.
_PER_QUERY = ("metric", "system", "baseline", "value", "baseline_value", "delta",
              "higher_is_better")  # fmt: skip


def one_mean_each(result: pl.DataFrame, would: str) -> dict[tuple[str, str], float]:
    """Each system's mean of each metric, read from the ``mean`` and ``baseline_mean``
    of ``result``'s rows; a system given two different means of one metric is refused
    (``would``: what the reader would do with them, "the table would print one of
    them"): :func:`~polars_irmetrics.compare` pairs every system on the same queries,
    so its means are the same bits in every row (a frame edited by hand is not).

    >>> rows = pl.DataFrame({"metric": ["map"] * 2, "system": ["b", "c"],
    ...                      "baseline": ["a", "a"], "mean": [0.5, 0.4],
    ...                      "baseline_mean": [0.3, 0.35]})
    >>> one_mean_each(rows[:1], "the table would print one of them")
    {('b', 'map'): 0.5, ('a', 'map'): 0.3}
    >>> one_mean_each(rows, "the table would print one of them")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: system 'a' has mean 0.3 on metric 'map' ...
    """
    means: dict[tuple[str, str], float] = {}
    seen: dict[tuple[str, str], str] = {}  # the row each mean was read from
    columns = ("metric", "system", "baseline", "mean", "baseline_mean")
    for metric, system, baseline, mean, baseline_mean in result.select(columns).iter_rows():
        for name, value, column in (
            (system, mean, "mean"),
            (baseline, baseline_mean, "baseline_mean"),
        ):
            row = f"{column} of {system} against {baseline}"
            if (name, metric) in means and means[name, metric] != value:
                raise InvalidValueError(
                    f"system {name!r} has mean {means[name, metric]!r} on metric {metric!r} "
                    f"in one row ({seen[name, metric]}) and {value!r} in another ({row}): "
                    "irm.compare pairs every system on the same queries, so each has one "
                    f"mean per metric, and {would} without a word; pass the frame "
                    "irm.compare returned"
                )
            means[name, metric] = value
            seen.setdefault((name, metric), row)
    return means


def check_per_query(per_query: pl.DataFrame) -> None:
    """Refuse a per-query table (``compare(..., per_query=True)``, or one built by hand)
    whose rows would be counted wrong in silence: a ``delta``, ``value`` or
    ``baseline_value`` that is not numeric (:func:`check_dtypes`), or null or NaN (a
    query left out of the wins, ties and losses and of the spread), or a query held in
    two rows of one comparison (counted twice; the query id: the columns beside
    :data:`_PER_QUERY`, where there are any).

    Examples
    --------
    >>> pq = pl.DataFrame({"metric": ["m"] * 2, "system": ["b"] * 2, "baseline": ["a"] * 2,
    ...                    "query_id": ["q1", "q1"], "delta": [0.1, 0.1]})
    >>> check_per_query(pq)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.DuplicateError: per_query holds metric 'm', system 'b', ...
    """
    check_dtypes(
        per_query,
        ("delta", "value", "baseline_value"),
        source="per_query",
        reader="a count of wins, ties and losses",
        fix="pass the per_query=True result of irm.compare",
    )
    keys = [c for c in ("metric", "system", "baseline") if c in per_query.columns]
    ids = [c for c in per_query.columns if c not in _PER_QUERY]

    def named(row: dict[str, object]) -> str:
        return ", ".join(f"{c} {row[c]!r}" for c in (*keys, *ids))

    for column in ("delta", "value", "baseline_value"):
        if column not in per_query.columns:
            continue
        values = pl.col(column)
        undefined = values.is_null()
        if per_query.schema[column].is_float():
            undefined = undefined | values.is_nan()
        bad = per_query.filter(undefined)
        if bad.height:
            first = bad.row(0, named=True)
            raise InvalidValueError(
                f"column {column!r} of per_query is "
                f"{'null' if first[column] is None else 'NaN'} on {bad.height} row(s) "
                f"(first: {named(first)}): a query without a value cannot be counted as a "
                "win, tie or loss, nor in a spread; pass the per_query=True result of "
                "irm.compare (whose every value is defined), or drop those rows"
            )
    if not ids:
        return
    repeated = per_query.filter(pl.struct(*keys, *ids).is_duplicated())
    if repeated.height:
        first = repeated.row(0, named=True)
        count = repeated.filter(
            pl.all_horizontal(pl.col(c).eq_missing(first[c]) for c in (*keys, *ids))
        ).height
        raise DuplicateError(
            f"per_query holds {named(first)} in {count} rows: each query is one delta of "
            "its comparison, and a repeated one would count twice in the wins, ties, "
            "losses and spread; keep one row per query, or pass the per_query=True "
            "result of irm.compare"
        )


def _direction(rows: pl.DataFrame, metric: str) -> bool | None:
    """The direction of ``metric`` (the frame's ``higher_is_better`` column, one value;
    null: no better direction)."""
    found = rows.get_column("higher_is_better").unique().to_list()
    if len(found) != 1 or not (found[0] is None or isinstance(found[0], bool)):
        raise InvalidValueError(
            f"higher_is_better of metric {metric!r} is {found!r}; it must be one True, "
            "False or null per metric (pass the result of irm.compare)"
        )
    value: bool | None = found[0]
    check_declared(metric, value, reader="the plot")
    return value


def check_declared(metric: str, given: bool | None, *, reader: str) -> None:
    """Refuse a frame's ``higher_is_better`` (``given``) of ``metric`` that says the
    opposite of the metric's declaration (:attr:`MetricRequest.higher_is_better
    <polars_irmetrics.metrics.requests.MetricRequest.higher_is_better>`): True for
    ``rmse`` or ``ee_loss`` would have ``reader`` call the higher error the better. A
    name that is no metric's, a metric with no declared direction (the column may give
    one), and a null column (no better side: nothing marked) are left as given.

    Examples
    --------
    >>> check_declared("logloss", False, reader="the report")
    >>> check_declared("my_score", True, reader="the report")
    >>> check_declared("logloss", True, reader="the report")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: higher_is_better of metric 'logloss' is True, and logloss is declared lower-is-better: the report would read the higher value as the better; pass the result of irm.compare, which writes each metric's declared direction, or set the column to False
    """  # noqa: E501
    if given is None:
        return
    try:
        declared = parse_metric(metric).higher_is_better
    except IrmError:
        return  # no metric's name: the column is the only word on its direction
    if declared is None or declared == given:
        return
    said = "higher-is-better" if declared else "lower-is-better"
    read = "higher" if given else "lower"
    raise InvalidValueError(
        f"higher_is_better of metric {metric!r} is {given}, and {metric} is declared "
        f"{said}: {reader} would read the {read} value as the better; pass the result "
        "of irm.compare, which writes each metric's declared direction, or set the "
        f"column to {declared}"
    )


def _declared(metric: str) -> bool | None:
    """The declared direction of ``metric`` (:attr:`MetricRequest.higher_is_better
    <polars_irmetrics.metrics.requests.MetricRequest.higher_is_better>`), for a frame
    without a ``higher_is_better`` column; a name that is no metric's is refused (the
    direction is then the caller's to give)."""
    try:
        return parse_metric(metric).higher_is_better
    except IrmError as error:
        raise ColumnNotFoundError(
            f"column 'higher_is_better' is not in the frame and {metric!r} is not a metric "
            "name whose direction could be read: pass the result of irm.compare, or add "
            "the column (True where higher is better, False where lower is, null for "
            "neither)"
        ) from error


def _note(higher: bool | None) -> str:
    """The direction said beside a metric's name, where higher is not better."""
    return "no better direction" if higher is None else "" if higher else "lower is better"


def _metric(frame: pl.DataFrame, metric: str | None) -> str:
    metrics = frame.get_column("metric").unique(maintain_order=True).to_list()
    if metric is None:
        if not metrics:
            raise InvalidValueError("the frame has no rows to plot")
        return str(metrics[0])
    if metric not in metrics:
        shown = ", ".join(repr(m) for m in metrics)
        raise InvalidValueError(f"metric {metric!r} is not in the frame; choose one of {shown}")
    return metric


def plot_metric_curves(
    means: FrameInput,
    *,
    system: str = "system",
    path: str | Path | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """metric@k against k, one line per system (one panel per metric family).

    The y axis names the family and, where higher is not better, its direction
    (``gini@k (lower is better)``), as the other plots say it.

    Parameters
    ----------
    means
        ``evaluate(runs, "ndcg@1..20", systems=system)``: a system column and one column
        per cutoff.
    system
        The system column.
    path
        Save as PNG or SVG (by suffix).
    ax
        Draw on these axes (one per metric family) instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax``'s own when given).

    Raises
    ------
    ColumnTypeError
        A metric@k column that is not numeric (:func:`check_dtypes`, as the other plots
        read their columns).
    InvalidValueError
        No metric@k column, no row, or a null, NaN or infinite mean (matplotlib would
        leave a gap in the line without a word), a column of nulls only among them
        (named by its first system, as any null mean).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_metric_curves
    >>> means = pl.DataFrame({"system": ["a", "b"], "num_q": [2, 2],
    ...                       "P@1": [0.5, 1.0], "P@2": [0.5, 0.75]})
    >>> len(plot_metric_curves(means).axes)
    1
    """
    means = _frame(means, "means")
    _need(means, (system,), _CURVES)
    families: dict[str, list[tuple[int, str]]] = {}
    directions: dict[str, bool | None] = {}  # each family's declared direction
    for column in means.columns:
        if column in (system, "num_q"):
            continue
        request = parse_metric(column)
        if request.k is None:
            continue
        family = column.rsplit("@", 1)[0] if "@" in column else request.metric.name
        families.setdefault(family, []).append((request.k, column))
        directions.setdefault(family, request.higher_is_better)
    if not families:
        raise InvalidValueError(
            "no metric@k columns to plot: evaluate a cutoff range, e.g. 'ndcg@1..20'"
        )
    if not means.height:
        raise InvalidValueError("the frame has no rows to plot")
    drawn = [column for columns in families.values() for _, column in columns]
    # a column of nulls only (dtype Null) passes here and is refused as null below
    check_dtypes(means, drawn, source="means", reader="a curve", fix=f"pass {_CURVES}")
    _refuse_undefined(
        means,
        drawn,
        source="means",
        keys=(system,),
        infinite=True,
        fix="that is no point to draw (the line would stop there without a word); pass "
        f"{_CURVES}, or drop those rows",
    )
    n = len(families)
    axes = _axes(ax, n, "one per metric family", grid=(1, n), figsize=(4.5 * n, 3.5))
    markers = "osD^vP*X"
    for panel, (family, columns) in zip(axes, families.items(), strict=True):
        columns.sort()
        ks = [k for k, _ in columns]
        for i, row in enumerate(means.iter_rows(named=True)):
            panel.plot(
                ks,
                [row[c] for _, c in columns],
                marker=markers[i % len(markers)],
                color=OKABE_ITO[i % len(OKABE_ITO)],
                label=str(row[system]),
            )
        panel.set_xlabel("k")
        note = _note(directions[family])  # said where higher is not better
        panel.set_ylabel(f"{family}@k" + (f" ({note})" if note else ""))
        panel.grid(alpha=0.3)
        panel.legend()
    return _save(_root(axes[0]), path)


def plot_deltas(
    per_query: FrameInput,
    *,
    metric: str | None = None,
    path: str | Path | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """Per-query deltas (system − baseline) as bars sorted by delta, one panel per comparison.

    A bar is a win (blue) where the system is better than the baseline in the metric's
    direction (the frame's ``higher_is_better`` column: a negative delta of a
    lower-is-better metric such as ``logloss`` is a win), a loss (vermillion) where it
    is worse; the title counts them as :func:`~polars_irmetrics.compare` does. For a
    metric with no better direction (a null ``higher_is_better``, such as
    ``calibration``) every bar is grey and the title counts the queries above, equal
    to and below the baseline instead.

    Parameters
    ----------
    per_query
        ``compare(..., per_query=True)``.
    metric
        The metric to plot (default: the first).
    path
        Save as PNG or SVG (by suffix).
    ax
        Draw on these axes (one per comparison) instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax``'s own when given).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_deltas
    >>> pq = pl.DataFrame({"metric": ["rmse"] * 3, "system": ["b"] * 3,
    ...                    "baseline": ["a"] * 3, "delta": [0.2, -0.1, -0.3],
    ...                    "higher_is_better": False})
    >>> plot_deltas(pq).axes[0].get_title()
    'b vs a (rmse, lower is better): 2 wins, 0 ties, 1 losses'
    >>> plot_deltas(pq.with_columns(higher_is_better=None)).axes[0].get_title()
    'b vs a (rmse, no better direction): 1 above, 0 equal, 2 below'
    """
    per_query = _frame(per_query, "per_query")
    needed = ("metric", "system", "baseline", "delta", "higher_is_better")
    _need(per_query, needed, "compare(..., per_query=True)")
    check_per_query(per_query)
    metric = _metric(per_query, metric)
    rows = per_query.filter(pl.col("metric") == metric)
    higher = _direction(rows, metric)
    pairs = rows.select("system", "baseline").unique(maintain_order=True).rows()
    n = len(pairs)
    axes = _axes(ax, n, "one per comparison", grid=(n, 1), figsize=(7, 2.8 * n))
    for panel, (system, baseline) in zip(axes, pairs, strict=True):
        pair = (pl.col("system") == system) & (pl.col("baseline") == baseline)
        delta = np.sort(rows.filter(pair).get_column("delta").to_numpy())[::-1]
        won, lost = (delta > 0, delta < 0) if higher is not False else (delta < 0, delta > 0)
        ties = (delta == 0).sum()
        if higher is None:  # no direction: neither a win nor a loss
            colors = np.full(len(delta), GREY)
            counts = f"{won.sum()} above, {ties} equal, {lost.sum()} below"
        else:
            colors = np.where(won, BLUE, np.where(lost, VERMILLION, GREY))
            counts = f"{won.sum()} wins, {ties} ties, {lost.sum()} losses"
        panel.bar(np.arange(len(delta)), delta, width=1.0, color=colors)
        panel.axhline(0, color="black", linewidth=0.8)
        named = f"{metric}, {_note(higher)}" if _note(higher) else metric
        panel.set_title(f"{system} vs {baseline} ({named}): {counts}")
        panel.set_xlabel("queries, sorted by delta")
        panel.set_ylabel("delta")
    return _save(_root(axes[0]), path)


def plot_significance_matrix(
    result: FrameInput,
    *,
    metric: str | None = None,
    alpha: float | None = None,
    path: str | Path | None = None,
    ax: Axes | None = None,
) -> Figure:
    """System × system adjusted p-values (pairs); significant cells are starred, and
    marked with which system is better.

    A significant cell of the row's system and the column's reads ``▲`` where the row's
    system is the better (``0.010*▲``) and ``▼`` where it is the worse: better in the
    metric's declared direction (the frame's ``higher_is_better`` column, else the
    metric's declaration; a lower mean of ``logloss`` or ``ee_loss`` is better), the
    way the test found the difference (as the report's markers read it:
    :func:`~polars_irmetrics.comparison.options.found_above`; where the test's side and
    the mean's disagree, the title says so, as the report's legend: the system's
    ``mean`` against its ``baseline_mean`` where the frame has them, else the sign of
    ``delta``). The title says the
    rule, and the metric's direction where higher is not better; a metric with no
    better direction (``calibration``) is starred without an arrow.

    The cells are coloured by cividis (dark: small p); each label is black or white,
    whichever contrasts more with its cell (:func:`label_color`).

    Parameters
    ----------
    result
        ``compare(..., mode="pairs")`` (any mode works; missing pairs are blank).
    metric
        The metric to plot (default: the first).
    alpha
        The level ``significant`` was read at (``irm.compare(..., alpha=)``); default:
        the one ``compare`` recorded for ``result``, else 0.05. A row whose
        ``significant`` says other than ``p_adjusted <= alpha`` is refused
        (:func:`check_flags`): its star would stand on a difference the test did not
        find (or a found one go unstarred).
    path
        Save as PNG or SVG (by suffix).
    ax
        Draw on this axes instead of a new figure (the colour bar goes beside it).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax``'s own when given).

    Raises
    ------
    ColumnNotFoundError
        A column the matrix reads (``delta`` among them) not in the frame.
    ColumnTypeError
        ``delta``, ``p_adjusted``, ``statistic``, ``mean`` or ``baseline_mean`` that is
        not numeric, or
        ``significant`` that is not Boolean.
    InvalidValueError
        A significant row whose ``delta`` is null or NaN (no side is better), or a
        ``p_adjusted`` that is null or NaN (its cell would be blank, as a missing
        pair's) or outside [0, 1], or a null ``significant`` (:func:`check_significance`),
        or one that disagrees with ``p_adjusted`` at ``alpha`` (:func:`check_flags`);
        an ``alpha`` not strictly between 0 and 1. Where the frame has ``mean`` and
        ``baseline_mean``: a null or NaN one in a significant row, or a system given
        two different means of the metric (:func:`one_mean_each`, as the report).
    DuplicateError
        A pair of systems in two rows of the metric (either way round): its cells
        would show one row's p-value beside another's side.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_significance_matrix
    >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...                        "delta": [0.1], "p_adjusted": [0.01], "significant": [True]})
    >>> print(plot_significance_matrix(result).axes[0].get_title())
    map: adjusted p-values
    * significant; ▲ row's system better than column's, ▼ worse

    Drawn on a given axes, it returns that axes' figure; a small p is a light cell,
    so its label is black (not white on yellow). b is better than a (row b, column a):

    >>> from matplotlib.figure import Figure
    >>> figure = Figure()
    >>> plot_significance_matrix(result, ax=figure.subplots()) is figure
    True
    >>> [(t.get_text(), t.get_color()) for t in figure.axes[0].texts]
    [('0.010*▼', 'black'), ('0.010*▲', 'black')]

    Where lower is better, the lower mean is the better system:

    >>> loss = result.with_columns(metric=pl.lit("logloss"), higher_is_better=False)
    >>> [t.get_text() for t in plot_significance_matrix(loss).axes[0].texts]
    ['0.010*▲', '0.010*▼']
    """

    if alpha is not None:
        CompareOptions(alpha=alpha).checked()  # alpha=1.0 refused in compare's words
    record = recall(result) if isinstance(result, pl.DataFrame) else None
    result = _frame(result, "result")
    needed = ("metric", "system", "baseline", "delta", "p_adjusted", "significant")
    _need(result, needed, _RESULT)
    numbers = ("delta", "p_adjusted", "statistic", "mean", "baseline_mean")
    check_dtypes(result, numbers, ("significant",))
    metric = _metric(result, metric)
    rows = result.filter(pl.col("metric") == metric)
    # the note on the test's side against the mean's reads the means where the frame
    # has them (as the report's legend), else the sign of delta
    read_means = {"mean", "baseline_mean"} <= set(rows.columns)
    higher = _direction(rows, metric) if "higher_is_better" in rows.columns else _declared(metric)
    _refuse_undefined(
        rows.filter(pl.col("significant").fill_null(False)),
        ("delta",),
        source="result",
        keys=("metric", "system", "baseline"),
        fix="a significant difference without a delta has no better side to mark; pass "
        "the result of irm.compare, or drop those rows",
    )
    _refuse_undefined(
        rows,
        ("p_adjusted",),
        source="result",
        keys=("metric", "system", "baseline"),
        fix="that is no p-value to draw (its cell would be blank, as that of a pair not "
        "compared); pass the result of irm.compare, or drop those rows",
    )
    check_significance(rows, ("p_adjusted",), reader="the matrix")
    names = [pl.col(c).cast(pl.String) for c in ("system", "baseline")]
    pair = pl.concat_list(pl.min_horizontal(names), pl.max_horizontal(names))  # either way
    twice = rows.filter(pair.is_duplicated())
    if twice.height:  # one cell would show one row's p-value and another row's side
        system, baseline = twice.select("system", "baseline").row(0)
        raise DuplicateError(
            f"result holds systems {system!r} and {baseline!r} on metric {metric!r} in "
            f"{twice.filter(pair == pair.first()).height} rows (either way round): the "
            "matrix draws one p-value per pair; keep one row per pair, or pass the result "
            "of irm.compare"
        )
    if read_means:  # after a pair twice: its two rows' means may differ as well
        _refuse_undefined(
            rows.filter(pl.col("significant").fill_null(False)),
            ("mean", "baseline_mean"),
            source="result",
            keys=("metric", "system", "baseline"),
            fix="a significant difference beside no mean has no side of the means to "
            "say; pass the result of irm.compare, or drop those rows",
        )
        one_mean_each(rows, "the matrix would read one of them")
    check_flags(
        rows,
        alpha,
        given_as="alpha=",
        recorded=None if record is None else record.options.alpha,
        reader="the matrix",
        fix="pass the frame irm.compare returned, or alpha= the alpha it ran with",
    )
    options = None if record is None else record.options
    systems: list[str] = []
    for baseline, system in rows.select("baseline", "system").iter_rows():
        for name in (baseline, system):
            if name not in systems:
                systems.append(name)
    k = len(systems)
    matrix = np.full((k, k), np.nan)
    stars = np.zeros((k, k), dtype=bool)
    sides = np.zeros((k, k), dtype=np.int8)  # 1: the row's system is the better, -1: worse
    statistic = (
        rows.get_column("statistic").cast(pl.Float64)
        if "statistic" in rows.columns
        else pl.repeat(None, rows.height, dtype=pl.Float64, eager=True)
    )
    # the system's mean against its baseline's where the frame has them, else delta to 0
    compared = (
        (pl.col("mean"), pl.col("baseline_mean")) if read_means else (pl.col("delta"), pl.lit(0.0))
    )
    sides_of = (compared[0].alias("mine"), compared[1].alias("theirs"))
    cells = rows.select("system", "baseline", "p_adjusted", "significant", "delta", *sides_of)
    disagree: list[str] = []  # the test's side against the mean's (Wilcoxon's ranks)
    for (system, baseline, p, significant, delta, mine, theirs), stat in zip(
        cells.iter_rows(), statistic, strict=True
    ):
        i, j = systems.index(system), systems.index(baseline)
        matrix[i, j] = matrix[j, i] = p
        stars[i, j] = stars[j, i] = bool(significant)
        above = found_above(delta, stat, options) if significant else None
        if above is not None and higher is not None:
            sides[i, j] = 1 if above == higher else -1  # the system against its baseline
            sides[j, i] = -sides[i, j]
            if mine == theirs or (mine > theirs) != above:  # as the report's legend
                side, mean_side = ("above", "below") if above else ("below", "above")
                mean_side = "equal to" if mine == theirs else mean_side
                disagree.append(
                    f"{system} {side} {baseline} though its mean is {mean_side} {baseline}'s"
                )
    (panel,) = _axes(ax, 1, "the matrix", grid=(1, 1), figsize=(1.2 * k + 2.5, 1.0 * k + 1.5))
    figure = _root(panel)
    cmap = _mpl.colormaps[_CMAP]
    image = panel.imshow(matrix, vmin=0, vmax=1, cmap=cmap)
    figure.colorbar(image, ax=panel, label="adjusted p-value")
    panel.set_xticks(range(k), systems, rotation=45, ha="right")
    panel.set_yticks(range(k), systems)
    arrows = {1: "▲", -1: "▼", 0: ""}
    for i in range(k):
        for j in range(k):
            if not math.isnan(matrix[i, j]):
                label = f"{matrix[i, j]:.3f}" + ("*" if stars[i, j] else "")
                label += arrows[int(sides[i, j])]
                color = label_color(cmap(float(matrix[i, j])))
                panel.text(j, i, label, ha="center", va="center", color=color, fontsize=8)
    named = f"{metric} ({_note(higher)})" if _note(higher) else metric
    rule = "* significant" + (
        "" if higher is None else "; ▲ row's system better than column's, ▼ worse"
    )
    if disagree:
        rule += "\nthe arrows follow the test, which found " + "; ".join(disagree)
    panel.set_title(f"{named}: adjusted p-values\n{rule}")
    return _save(figure, path)


def plot_ci(
    result: FrameInput,
    *,
    metric: str | None = None,
    path: str | Path | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Each comparison's delta with its confidence interval (whiskers), zero marked.

    Parameters
    ----------
    result
        ``compare(...)``.
    metric
        The metric to plot (default: the first).
    path
        Save as PNG or SVG (by suffix).
    ax
        Draw on this axes instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax``'s own when given).

    Examples
    --------
    A one-sided interval has an infinite bound; its whisker stops at the axis edge (a
    null or NaN delta or bound is no interval, and is refused: it would be drawn as one
    without end):

    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_ci
    >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...                        "delta": [0.1], "ci_low": [0.02], "ci_high": [float("inf")],
    ...                        "significant": [True]})
    >>> [t.get_text() for t in plot_ci(result).axes[0].get_yticklabels()]
    ['b vs a']
    """
    result = _frame(result, "result")
    _need(result, ("metric", "system", "baseline", "delta", "ci_low", "ci_high"), _RESULT)
    check_dtypes(result, ("delta", "ci_low", "ci_high"))
    metric = _metric(result, metric)
    rows = result.filter(pl.col("metric") == metric)
    _refuse_undefined_interval(rows, metric)
    delta = rows.get_column("delta").to_numpy()
    low = rows.get_column("ci_low").to_numpy()
    high = rows.get_column("ci_high").to_numpy()
    finite = np.concatenate([delta, low[np.isfinite(low)], high[np.isfinite(high)]])
    span = max(float(np.ptp(finite)), 1e-9)
    low = np.where(np.isfinite(low), low, finite.min() - span)
    high = np.where(np.isfinite(high), high, finite.max() + span)
    labels = [f"{s} vs {b}" for s, b in rows.select("system", "baseline").iter_rows()]
    higher = _direction(rows, metric) if "higher_is_better" in rows.columns else _declared(metric)
    (panel,) = _axes(ax, 1, "the intervals", grid=(1, 1), figsize=(6, 0.5 * len(labels) + 1.5))
    y = np.arange(len(labels))
    panel.errorbar(delta, y, xerr=[delta - low, high - delta], fmt="o", capsize=4, color=BLUE)
    panel.axvline(0, color="gray", linestyle="--", linewidth=0.8)
    panel.set_yticks(y, labels)
    panel.invert_yaxis()
    panel.set_xlabel(f"delta of {metric}" + (f" ({_note(higher)})" if _note(higher) else ""))
    panel.set_title(f"{metric}: delta and confidence interval")
    return _save(_root(panel), path)


def plot_swaps(
    a: pl.DataFrame,
    b: pl.DataFrame,
    *,
    metric: str | None = None,
    metric_b: str | None = None,
    higher_is_better: bool | None = None,
    higher_is_better_b: bool | None = None,
    labels: tuple[str, str] = ("a", "b"),
    system: str = "system",
    query_id: str = "query_id",
    path: str | Path | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """Two evaluations' orderings of the same systems side by side, a line per system
    (a slope chart): a line that crosses another is a swapped pair, drawn in
    vermillion, counted in the title as :func:`~polars_irmetrics.system_agreement`
    counts its ``swaps`` (the same function): a tie in either ordering is no swap, and
    tied systems are drawn at one height (one label, their names).

    Parameters
    ----------
    a, b
        Per-query results (``system, query_id, <value>``), as ``system_agreement`` takes.
    metric, metric_b
        Their value columns (default: the one column besides the keys).
    higher_is_better, higher_is_better_b
        Which way each is better, read as ``system_agreement`` reads them (the same
        function): by default the direction of the metric its column names; ``b``'s
        column of ``a``'s name takes ``higher_is_better`` unless ``higher_is_better_b``
        is given, whether or not the name is a metric's. The best system is drawn on
        top, so a column of no known direction (``value``) is refused unless its
        direction is given.
    labels
        The two axes' names.
    path, ax
        Save as PNG or SVG; draw on this axis instead of a new figure.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_swaps
    >>> a = pl.DataFrame({"system": ["x", "y", "z"], "query_id": ["q"] * 3,
    ...                   "map": [0.3, 0.2, 0.1]})
    >>> b = a.with_columns(pl.Series("map", [0.2, 0.3, 0.1]))
    >>> plot_swaps(a, b).axes[0].get_title()
    'system orderings: 1 of 3 pairs swapped'

    A tie is no swap, whichever way names would break it:

    >>> tie = a.filter(pl.col("system") != "z").with_columns(map=pl.lit(0.5))
    >>> plot_swaps(tie, b.filter(pl.col("system") != "z")).axes[0].get_title()
    'system orderings: 0 of 1 pairs swapped'
    """
    names, mean_a, column_a = mean_by_system(a, "a", metric, system, query_id, "plot_swaps")
    names_b, mean_b, column_b = mean_by_system(
        b, "b", metric_b or metric, system, query_id, "plot_swaps"
    )
    # the directions as system_agreement reads them (the same function; the best system
    # is drawn on top, so a column of no known direction is refused): the means negated
    # where lower is better, the best system first on each side
    sign_a, sign_b = orientation(
        column_a, column_b, higher_is_better, higher_is_better_b, top=True
    )
    mean_a, mean_b = sign_a * mean_a, sign_b * mean_b
    order_b = matched(names, names_b, system)
    if order_b is None:
        raise InvalidValueError("a and b must evaluate the same systems to plot their orderings")
    mean_b = mean_b[order_b]
    # the swaps as system_agreement counts them (a tie is no swap); tied systems share a
    # height, so that two lines cross exactly where their pair is swapped
    left, right, swapped = swapped_pairs(mean_a, mean_b)
    swapped_any = np.zeros(len(names), dtype=bool)
    swapped_any[left[swapped]] = True
    swapped_any[right[swapped]] = True
    rank_a, rank_b = _tied_ranks(mean_a), _tied_ranks(mean_b)
    (panel,) = _axes(ax, 1, "one slope chart", grid=(1, 1), figsize=(5, 0.35 * len(names) + 1.5))
    for i in range(len(names)):
        color = VERMILLION if swapped_any[i] else GREY
        panel.plot([0, 1], [rank_a[i], rank_b[i]], color=color, marker="o")
    texts = names.cast(pl.String).to_list()
    for x, ranks, ha in ((-0.03, rank_a, "right"), (1.03, rank_b, "left")):
        for rank, tied in _by_rank(ranks, texts).items():  # one label per height
            panel.text(x, rank, ", ".join(tied), ha=ha, va="center", fontsize=8)
    panel.set_xlim(-0.4, 1.4)
    panel.invert_yaxis()
    panel.set_xticks([0, 1], list(labels))
    panel.set_yticks([])
    panel.set_title(f"system orderings: {int(swapped.sum())} of {len(left)} pairs swapped")
    return _save(_root(panel), path)


def _tied_ranks(means: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each system's position, best (the highest mean) 0; equal means share the
    average of their positions."""
    above = (means[None, :] > means[:, None]).sum(axis=1)
    equal = (means[None, :] == means[:, None]).sum(axis=1)
    ranks: npt.NDArray[np.float64] = above + (equal - 1) / 2.0
    return ranks


def _by_rank(ranks: npt.NDArray[np.float64], names: list[str]) -> dict[float, list[str]]:
    """The systems at each height, in name order."""
    found: dict[float, list[str]] = {}
    for rank, name in zip(ranks.tolist(), names, strict=True):
        found.setdefault(rank, []).append(name)
    return found


def plot_similarity_distribution(
    per_query: FrameInput,
    *,
    metric: str | None = None,
    bins: int = 20,
    system: str = "system",
    query_id: str = "query_id",
    path: str | Path | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """The per-query distribution of a rank similarity (``rbo``, ``jaccard@10``...): a
    histogram of ``irm.evaluate(run, [...], reference=..., per_query=True)``'s column,
    one panel per system where the frame has a ``system`` column
    (``evaluate(..., systems="system", per_query=True)``), on one scale.

    The x axis names the column and, where it is a metric whose higher value is not the
    better, its direction, as the other plots say it: ``rbo(kind='res')@20 (no better
    direction)`` (RBO's residual, its uncertainty), ``logloss (lower is better)``.

    Parameters
    ----------
    per_query
        ``irm.evaluate(run, metrics, reference=..., per_query=True)``, a DataFrame or
        the LazyFrame it gives for a LazyFrame (collected here).
    metric
        The column to plot (default: the first float column).
    bins
        The number of bins, a whole number >= 1.
    system
        The system column (one panel per system, where the frame has it).
    query_id
        The query-id column: one row per query (per system).
    path
        Save as PNG or SVG (by suffix).
    ax
        Draw on these axes (one per system) instead of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax``'s own when given).

    Raises
    ------
    ColumnNotFoundError
        ``metric`` or ``query_id`` not in the frame.
    InvalidValueError
        ``metric`` naming a key column or a column that is not numeric, or one holding
        NaN or an infinite value (a histogram has no bin for it, and its mean would be
        NaN or infinite), or no value at all (no row, or only nulls); ``bins`` not a
        whole number >= 1; a query twice (of one system): a column of several systems
        that ``system=`` does not name.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_similarity_distribution
    >>> pq = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "rbo": [0.2, 0.9, 1.0]})
    >>> plot_similarity_distribution(pq).axes[0].get_title()
    'rbo over 3 queries: mean 0.700, median 0.900'

    One panel per system:

    >>> pq = pl.DataFrame({"system": ["a", "a", "b", "b"], "query_id": ["q1", "q2"] * 2,
    ...                    "rbo": [0.2, 0.4, 0.9, 1.0]})
    >>> [panel.get_title() for panel in plot_similarity_distribution(pq).axes]
    ['a: rbo over 2 queries: mean 0.300, median 0.300', 'b: rbo over 2 queries: mean 0.950, median 0.950']

    A metric with no better direction says so on its axis:

    >>> pq = pl.DataFrame({"query_id": ["q1", "q2"], "rbo(kind='res')@20": [0.1, 0.3]})
    >>> plot_similarity_distribution(pq).axes[0].get_xlabel()
    "rbo(kind='res')@20 (no better direction)"
    """  # noqa: E501
    per_query = _frame(per_query, "per_query")
    source = "irm.evaluate(run, metrics, reference=..., per_query=True)"
    bins = plain_number(bins)
    if not (isinstance(bins, int) and not isinstance(bins, bool) and bins >= 1):
        raise InvalidValueError(
            f"bins={bins!r} is not a number of bins: it must be a whole number >= 1, e.g. bins=20"
        )
    if query_id not in per_query.columns:
        raise ColumnNotFoundError(
            f"column {query_id!r} is not in the frame; name the query-id column with "
            f"query_id=, or pass {source}"
        )
    keys = [c for c in (system, query_id) if c in per_query.columns]
    numeric = [c for c in per_query.columns if c not in keys and per_query[c].dtype.is_numeric()]
    shown = ", ".join(repr(c) for c in numeric) or "none: pass " + source
    if metric is None:
        floats = [c for c in numeric if per_query[c].dtype.is_float()]
        if not floats:
            raise InvalidValueError("the frame has no similarity column to plot")
        metric = floats[0]
    _need(per_query, (metric,), source)
    if metric in keys:
        what = "system" if metric == system else "query-id"
        raise InvalidValueError(
            f"metric={metric!r} is the {what} column, not a similarity; choose one of {shown}"
        )
    if metric not in numeric:
        raise InvalidValueError(
            f"column {metric!r} has dtype {per_query.schema[metric]}, not a similarity's "
            f"numbers; choose one of {shown}"
        )
    groups = (
        per_query.get_column(system).unique(maintain_order=True).to_list()
        if system in per_query.columns
        else [None]
    )
    twice = per_query.filter(pl.struct(keys).is_duplicated())
    if twice.height:
        of = f" of system {twice[system][0]!r}" if system in keys else ""
        raise InvalidValueError(
            f"query {twice[query_id][0]!r}{of} has more than one row; one per query: a "
            "frame of several systems needs their column named with system= (one panel "
            "each), or filter it to one system"
        )
    _refuse_not_finite(per_query, metric, query_id)
    values = [
        (per_query if name is None else per_query.filter(pl.col(system) == name))
        .get_column(metric)
        .drop_nulls()
        .cast(pl.Float64)
        .to_numpy()
        for name in groups
    ]
    pooled = np.concatenate(values)
    if not pooled.size:
        raise InvalidValueError(
            f"column {metric!r} holds no value to plot (the frame has no rows, or every "
            "value is null)"
        )
    span = (min(0.0, float(pooled.min(initial=0.0))), max(1.0, float(pooled.max(initial=1.0))))
    n = len(groups)
    note = _said(metric)  # said where higher is not better
    axes = _axes(ax, n, "one per system", grid=(n, 1), figsize=(6, 3 * n))
    for panel, name, found in zip(axes, groups, values, strict=True):
        panel.hist(found, bins=bins, range=span, color=BLUE)
        panel.set_xlabel(metric + (f" ({note})" if note else ""))
        panel.set_ylabel("queries")
        title = f"{metric} over {len(found)} queries"
        if len(found):
            title += f": mean {_short(found.mean())}, median {_short(np.median(found))}"
        panel.set_title(title if name is None else f"{name}: {title}")
    return _save(_root(axes[0]), path)


def _said(column: str) -> str:
    """The direction said beside a column that names a metric, where higher is not
    better (:func:`_note`); nothing for a column that names no metric (``cosine``)."""
    try:
        return _note(parse_metric(column).higher_is_better)
    except IrmError:
        return ""


def _refuse_not_finite(frame: pl.DataFrame, column: str, query_id: str) -> None:
    """Refuse NaN and infinite values of ``column`` (a histogram has no bin for them),
    naming the first query that holds one."""
    values = pl.col(column).cast(pl.Float64)
    bad = frame.filter(values.is_nan() | values.is_infinite())
    if bad.height:
        value = float(bad.get_column(column)[0])
        raise InvalidValueError(
            f"column {column!r} has {bad.height} NaN or infinite value(s) (e.g. {value!r} in "
            f"query {bad.get_column(query_id)[0]!r}); a histogram has no bin for them and "
            "their mean is not a number: drop or fix those rows, e.g. "
            f"per_query.filter(pl.col({column!r}).is_finite())"
        )


def _short(value: float) -> str:
    """A mean or median for a title: three decimals, or three significant digits where
    those would print a tiny value as 0.000 or a huge one with hundreds of digits."""
    value = float(value)
    return f"{value:.3f}" if value == 0 or 1e-3 <= abs(value) < 1e6 else f"{value:.3g}"


def _refuse_undefined_interval(rows: pl.DataFrame, metric: str) -> None:
    """Refuse a null or NaN ``delta``, ``ci_low`` or ``ci_high`` of ``metric``'s rows
    (an infinite bound is a one-sided interval's; a NaN one is none, and would be drawn
    as a whisker to the axis edge)."""
    _refuse_undefined(
        rows,
        ("delta", "ci_low", "ci_high"),
        source="result",
        keys=("metric", "system", "baseline"),
        fix="that is no interval to draw (an infinite bound is a one-sided interval's); "
        "pass the result of irm.compare, or drop those rows",
    )


def _refuse_undefined(
    frame: pl.DataFrame,
    columns: Sequence[str],
    *,
    source: str,
    keys: Sequence[str],
    fix: str,
    infinite: bool = False,
) -> None:
    """Refuse a null or NaN value (and with ``infinite`` an infinite one) of ``columns``
    of ``frame`` (``source``, as the message names it), naming the first row by its
    ``keys`` and ending with ``fix``: a value matplotlib would leave out (a line's gap)
    or draw to the axis edge without a word."""
    for column in columns:
        values = frame.get_column(column).cast(pl.Float64)
        undefined = values.is_null() | values.is_nan()
        if infinite:
            undefined = undefined | values.is_infinite()
        bad = frame.filter(undefined)
        if bad.height:
            kinds = "null, NaN or infinite" if infinite else "null or NaN"
            _refuse_rows(bad, column, kinds, source=source, keys=keys, fix=fix)


def _refuse_rows(
    bad: pl.DataFrame, column: str, shown: str, *, source: str, keys: Sequence[str], fix: str
) -> None:
    """Raise :class:`InvalidValueError`: ``column`` of ``source`` is ``shown`` on the rows
    ``bad``, the first named by its ``keys``; the message ends with ``fix``."""
    first = ", ".join(f"{key} {bad.get_column(key)[0]!r}" for key in keys)
    raise InvalidValueError(
        f"column {column!r} of {source} is {shown} on {bad.height} row(s) (first: {first}): {fix}"
    )
