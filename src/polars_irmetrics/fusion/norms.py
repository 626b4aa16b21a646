"""Per-(run, query) score normalisations, as polars window expressions.

Each normalisation maps a run's scores for one query to a common scale before the
runs are combined. The formulas, the ``1e-9`` floor on every denominator and the
population standard deviation are ranx's (``ranx.normalization``), so that fused
scores agree with ranx's to rounding.

=====================  ==========================================================
name                   normalised score of a document with score ``s``
=====================  ==========================================================
``min-max``            ``(s - min) / max(max - min, 1e-9)``
``min-max-inverted``   ``(max - s) / max(max - min, 1e-9)`` (low scores first)
``max``                ``s / max(max, 1e-9)``
``sum``                ``(s - min) / max(sum - n * min, 1e-9)``
``zmuv``               ``(s - mean) / max(std, 1e-9)`` (population std, ddof 0)
``rank``               ``1 - (p - 1) / n`` at position ``p`` of ``n``
``borda``              ``1 - (p - 1) / c`` at position ``p``; a candidate the run
                       did not retrieve gets ``0.5 - (n - 1) / (2 c)``, with ``c``
                       the query's candidates (documents retrieved by any run)
=====================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polars_irmetrics.errors import UnknownMetricError
from polars_irmetrics.metrics.scope import exact_mean, wide_sum

__all__ = ["FLOORED", "NORMS", "POSITION_NORMS", "floored", "normalise", "resolve_norm"]

FLOOR = 1e-9

#: The long frame's column (under ``norm='max'``): whether the row's (run, query) top
#: score is below :data:`FLOOR`, so that its scores were divided by the floor.
FLOORED = "__irmf_floored"


def _floor(expr: pl.Expr) -> pl.Expr:
    return pl.max_horizontal(expr, pl.lit(FLOOR))


def _min_max(s: pl.Expr, by: list[str]) -> pl.Expr:
    low, high = s.min().over(by), s.max().over(by)
    return (s - low) / _floor(high - low)


def _min_max_inverted(s: pl.Expr, by: list[str]) -> pl.Expr:
    low, high = s.min().over(by), s.max().over(by)
    return (high - s) / _floor(high - low)


def _max(s: pl.Expr, by: list[str]) -> pl.Expr:
    return s / _floor(s.max().over(by))


def _sum(s: pl.Expr, by: list[str]) -> pl.Expr:
    # the scores' sum the same bits in any order whatever their size (wide_sum)
    low = s.min().over(by)
    return (s - low) / _floor(wide_sum(s).over(by) - low * pl.len().over(by))


def _zmuv(s: pl.Expr, by: list[str]) -> pl.Expr:
    # the mean and the variance the same bits in any order, scores of 2**32 and more too
    mean = exact_mean(s, wide=True).over(by)
    std = exact_mean((s - mean) ** 2, wide=True).over(by).sqrt()  # population (ddof 0), as numpy's
    return (s - mean) / _floor(std)


#: Score normalisations computed from the scores alone (``rank`` and ``borda`` use
#: positions and are built in :mod:`polars_irmetrics.fusion.fuse`).
SCORE_NORMS: dict[str, Callable[[pl.Expr, list[str]], pl.Expr]] = {
    "min-max": _min_max,
    "min-max-inverted": _min_max_inverted,
    "max": _max,
    "sum": _sum,
    "zmuv": _zmuv,
}

#: Every normalisation's canonical name.
NORMS: tuple[str, ...] = (*SCORE_NORMS, "rank", "borda")

#: The normalisations that change a run's positions, the only ones a method reading
#: positions alone can tell from no normalisation: ``min-max-inverted`` reverses each
#: run, ``borda`` places each run's unretrieved candidates after its list (ordered by
#: document id, descending compared as text, as every tie); the others keep each
#: run's order (:func:`~polars_irmetrics.fusion.fuse.check_positions_norm`).
POSITION_NORMS: tuple[str, ...] = ("min-max-inverted", "borda")

_ALIASES = {"min_max": "min-max", "minmax": "min-max", "min_max_inverted": "min-max-inverted"}


def resolve_norm(norm: str | None) -> str | None:
    """The canonical name of a normalisation (``None`` or ``"none"``: no normalisation).

    Examples
    --------
    >>> from polars_irmetrics.fusion.norms import resolve_norm
    >>> resolve_norm("min_max"), resolve_norm("none")
    ('min-max', None)
    >>> resolve_norm("l2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.UnknownMetricError: unknown normalisation 'l2'; choose one of ...
    """
    if norm is None or norm == "none":
        return None
    if not isinstance(norm, str):  # a list or set: no key of the aliases (TypeError)
        raise UnknownMetricError(
            f"norm={norm!r} is not a normalisation's name; choose one of {', '.join(NORMS)}, "
            "or None"
        )
    name = _ALIASES.get(norm, norm)
    if name not in NORMS:
        raise UnknownMetricError(
            f"unknown normalisation {norm!r}; choose one of {', '.join(NORMS)}, or None"
        )
    return name


def normalise(norm: str, score: pl.Expr, by: list[str]) -> pl.Expr:
    """A score normalisation (one of ``SCORE_NORMS``) as a window over ``by``.

    Examples
    --------
    Every denominator is floored at ``1e-9``: a query whose documents all score the
    same maps them all to 0 under ``min-max`` rather than dividing by zero.

    >>> import polars as pl
    >>> from polars_irmetrics.fusion.norms import normalise
    >>> frame = pl.DataFrame({"q": ["a", "a", "a", "b", "b"], "s": [3.0, 1.0, 2.0, 5.0, 5.0]})
    >>> frame.select(normalise("min-max", pl.col("s"), ["q"]))["s"].to_list()
    [1.0, 0.0, 0.5, 0.0, 0.0]
    """
    return SCORE_NORMS[norm](score, by)


def floored(norm: str | None, score: pl.Expr, by: list[str]) -> pl.Expr | None:
    """Under ``max`` (the one normalisation whose floor is not a tie's), whether the
    window's top score is below :data:`FLOOR`: its scores are then divided by ``1e-9``
    (ranx's floor), not by the top score, and a top score of 0 or below (distances)
    makes them of order ``-1e9``; ``None`` for the other normalisations (their floors
    only meet windows whose scores all tie, which map to 0).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.fusion.norms import floored, normalise
    >>> frame = pl.DataFrame({"q": ["a", "a", "b", "b"], "s": [2.0, 1.0, -1.0, -2.0]})
    >>> frame.select(
    ...     normalise("max", pl.col("s"), ["q"]), f=floored("max", pl.col("s"), ["q"])
    ... ).rows()
    [(1.0, False), (0.5, False), (-999999999.9999999, True), (-1999999999.9999998, True)]
    """
    if norm != "max":
        return None
    return score.max().over(by) < FLOOR
