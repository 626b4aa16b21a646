"""Plots of a comparison (matplotlib, the ``plot`` extra).

* :func:`plot_metric_curves`: metric@k per system, from ``evaluate(..., by=system)``
  over a cutoff range (``"ndcg@1..20"``).
* :func:`plot_deltas`: per-query deltas against the baseline, sorted, from
  ``compare(..., per_query=True)``.
* :func:`plot_significance_matrix`: system × system adjusted p-values, significant
  cells marked, from ``compare(..., mode="pairs")``.
* :func:`plot_ci`: each comparison's delta with its confidence interval.

Each returns a :class:`matplotlib.figure.Figure` (built without pyplot, so no
backend or global state is touched) and, given ``path``, saves it as PNG or SVG (by
the suffix). Without matplotlib they raise :class:`MissingDependencyError` naming the
extra.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MissingDependencyError
from polars_irmetrics.io.output import write_atomic
from polars_irmetrics.metrics.registry import parse_metric

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_ci", "plot_deltas", "plot_metric_curves", "plot_significance_matrix"]

_INSTALL = "pip install 'polars_irmetrics[plot]'"
_RESULT = "the result of irm.compare"


def _figure(**kwargs: Any) -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise MissingDependencyError(
            f"plots need matplotlib, which is not installed: {_INSTALL}"
        ) from error
    return Figure(layout="constrained", **kwargs)


def _save(figure: Figure, path: str | Path | None) -> Figure:
    if path is not None:
        suffix = Path(path).suffix.lower()
        if suffix not in (".png", ".svg"):
            raise InvalidValueError(
                f"plot file {str(path)!r} must end in .png or .svg (e.g. deltas.png)"
            )
        write_atomic(  # written whole or not at all, as every output
            path,
            lambda handle: figure.savefig(handle, format=suffix[1:], dpi=100, bbox_inches="tight"),
        )
    return figure


def _need(frame: pl.DataFrame, columns: tuple[str, ...], source: str) -> None:
    for column in columns:
        if column not in frame.columns:
            raise ColumnNotFoundError(f"column {column!r} is not in the frame; pass {source}")


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
    means: pl.DataFrame, *, system: str = "system", path: str | Path | None = None
) -> Figure:
    """metric@k against k, one line per system (one panel per metric family).

    Parameters
    ----------
    means
        ``evaluate(runs, "ndcg@1..20", by=system)``: a system column and one column
        per cutoff.
    system
        The system column.
    path
        Save as PNG or SVG (by suffix).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_metric_curves
    >>> means = pl.DataFrame({"system": ["a", "b"], "num_q": [2, 2],
    ...                       "P@1": [0.5, 1.0], "P@2": [0.5, 0.75]})
    >>> len(plot_metric_curves(means).axes)
    1
    """
    _need(means, (system,), "evaluate(..., by=system) over a cutoff range")
    families: dict[str, list[tuple[int, str]]] = {}
    for column in means.columns:
        if column in (system, "num_q"):
            continue
        request = parse_metric(column)
        if request.k is None:
            continue
        family = column.rsplit("@", 1)[0] if "@" in column else request.metric.name
        families.setdefault(family, []).append((request.k, column))
    if not families:
        raise InvalidValueError(
            "no metric@k columns to plot: evaluate a cutoff range, e.g. 'ndcg@1..20'"
        )
    figure = _figure(figsize=(4.5 * len(families), 3.5))
    axes = figure.subplots(1, len(families), squeeze=False)[0]
    for ax, (family, columns) in zip(axes, families.items(), strict=True):
        columns.sort()
        ks = [k for k, _ in columns]
        for row in means.iter_rows(named=True):
            ax.plot(ks, [row[c] for _, c in columns], marker="o", label=str(row[system]))
        ax.set_xlabel("k")
        ax.set_ylabel(f"{family}@k")
        ax.grid(alpha=0.3)
        ax.legend()
    return _save(figure, path)


def plot_deltas(
    per_query: pl.DataFrame, *, metric: str | None = None, path: str | Path | None = None
) -> Figure:
    """Per-query deltas (system − baseline) as bars sorted by delta, one panel per comparison.

    Parameters
    ----------
    per_query
        ``compare(..., per_query=True)``.
    metric
        The metric to plot (default: the first).
    path
        Save as PNG or SVG (by suffix).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_deltas
    >>> pq = pl.DataFrame({"metric": ["map"] * 3, "system": ["b"] * 3,
    ...                    "baseline": ["a"] * 3, "delta": [0.2, -0.1, 0.0]})
    >>> plot_deltas(pq).axes[0].get_title()
    'b vs a (map): 1 wins, 1 ties, 1 losses'
    """
    _need(per_query, ("metric", "system", "baseline", "delta"), "compare(..., per_query=True)")
    metric = _metric(per_query, metric)
    rows = per_query.filter(pl.col("metric") == metric)
    pairs = rows.select("system", "baseline").unique(maintain_order=True).rows()
    figure = _figure(figsize=(7, 2.8 * len(pairs)))
    axes = figure.subplots(len(pairs), 1, squeeze=False)[:, 0]
    for ax, (system, baseline) in zip(axes, pairs, strict=True):
        pair = (pl.col("system") == system) & (pl.col("baseline") == baseline)
        delta = np.sort(rows.filter(pair).get_column("delta").to_numpy())[::-1]
        colors = np.where(delta > 0, "tab:green", np.where(delta < 0, "tab:red", "tab:gray"))
        ax.bar(np.arange(len(delta)), delta, width=1.0, color=colors)
        ax.axhline(0, color="black", linewidth=0.8)
        wins, ties, losses = (delta > 0).sum(), (delta == 0).sum(), (delta < 0).sum()
        ax.set_title(
            f"{system} vs {baseline} ({metric}): {wins} wins, {ties} ties, {losses} losses"
        )
        ax.set_xlabel("queries, sorted by delta")
        ax.set_ylabel("delta")
    return _save(figure, path)


def plot_significance_matrix(
    result: pl.DataFrame, *, metric: str | None = None, path: str | Path | None = None
) -> Figure:
    """System × system adjusted p-values (pairs); significant cells are starred.

    Parameters
    ----------
    result
        ``compare(..., mode="pairs")`` (any mode works; missing pairs are blank).
    metric
        The metric to plot (default: the first).
    path
        Save as PNG or SVG (by suffix).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_significance_matrix
    >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...                        "p_adjusted": [0.01], "significant": [True]})
    >>> plot_significance_matrix(result).axes[0].get_title()
    'map: adjusted p-values (* significant)'
    """
    _need(result, ("metric", "system", "baseline", "p_adjusted", "significant"), _RESULT)
    metric = _metric(result, metric)
    rows = result.filter(pl.col("metric") == metric)
    systems: list[str] = []
    for baseline, system in rows.select("baseline", "system").iter_rows():
        for name in (baseline, system):
            if name not in systems:
                systems.append(name)
    k = len(systems)
    matrix = np.full((k, k), np.nan)
    stars = np.zeros((k, k), dtype=bool)
    for system, baseline, p, significant in rows.select(
        "system", "baseline", "p_adjusted", "significant"
    ).iter_rows():
        i, j = systems.index(system), systems.index(baseline)
        matrix[i, j] = matrix[j, i] = p
        stars[i, j] = stars[j, i] = significant
    figure = _figure(figsize=(1.2 * k + 2.5, 1.0 * k + 1.5))
    ax = figure.subplots()
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis_r")
    figure.colorbar(image, ax=ax, label="adjusted p-value")
    ax.set_xticks(range(k), systems, rotation=45, ha="right")
    ax.set_yticks(range(k), systems)
    for i in range(k):
        for j in range(k):
            if not math.isnan(matrix[i, j]):
                label = f"{matrix[i, j]:.3f}" + ("*" if stars[i, j] else "")
                ax.text(j, i, label, ha="center", va="center", color="white", fontsize=8)
    ax.set_title(f"{metric}: adjusted p-values (* significant)")
    return _save(figure, path)


def plot_ci(
    result: pl.DataFrame, *, metric: str | None = None, path: str | Path | None = None
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

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    A one-sided interval has an infinite bound; its whisker stops at the axis edge:

    >>> import polars as pl
    >>> from polars_irmetrics.comparison.plot import plot_ci
    >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...                        "delta": [0.1], "ci_low": [0.02], "ci_high": [float("inf")],
    ...                        "significant": [True]})
    >>> [t.get_text() for t in plot_ci(result).axes[0].get_yticklabels()]
    ['b vs a']
    """
    _need(result, ("metric", "system", "baseline", "delta", "ci_low", "ci_high"), _RESULT)
    metric = _metric(result, metric)
    rows = result.filter(pl.col("metric") == metric)
    delta = rows.get_column("delta").to_numpy()
    low = rows.get_column("ci_low").to_numpy()
    high = rows.get_column("ci_high").to_numpy()
    finite = np.concatenate([delta, low[np.isfinite(low)], high[np.isfinite(high)]])
    span = max(float(np.ptp(finite)), 1e-9)
    low = np.where(np.isfinite(low), low, finite.min() - span)
    high = np.where(np.isfinite(high), high, finite.max() + span)
    labels = [f"{s} vs {b}" for s, b in rows.select("system", "baseline").iter_rows()]
    figure = _figure(figsize=(6, 0.5 * len(labels) + 1.5))
    ax = figure.subplots()
    y = np.arange(len(labels))
    ax.errorbar(delta, y, xerr=[delta - low, high - delta], fmt="o", capsize=4)
    ax.axvline(0, color="gray", linestyle="--", linewidth=0.8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"delta of {metric}")
    ax.set_title(f"{metric}: delta and confidence interval")
    return _save(figure, path)
