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
from polars_irmetrics.metrics.scope import exact_mean, power_scale, wide_sum

__all__ = ["FLOORED", "NORMS", "POSITION_NORMS", "floored", "normalise", "resolve_norm"]

FLOOR = 1e-9

#: The long frame's column (under ``norm='max'``): whether the row's (run, query) top
#: score is below :data:`FLOOR`, so that its scores were divided by the floor.
FLOORED = "__irmf_floored"


def _floor(expr: pl.Expr, scale: pl.Expr | float = 1.0) -> pl.Expr:
    return pl.max_horizontal(expr, FLOOR * scale)


#: Columns of :func:`normalise`'s stages, dropped after it: the scores times their
#: (run, query)'s power-of-two scale, that scale, and zmuv's mean.
_Y, _K, _M = "__irmf_norm_y", "__irmf_norm_k", "__irmf_norm_m"
_Y_, _K_ = pl.col(_Y), pl.col(_K)


def _min_max(by: list[str]) -> pl.Expr:
    low, high = _Y_.min().over(by), _Y_.max().over(by)
    return (_Y_ - low) / _floor(high - low, _K_)


def _min_max_inverted(by: list[str]) -> pl.Expr:
    low, high = _Y_.min().over(by), _Y_.max().over(by)
    return (high - _Y_) / _floor(high - low, _K_)


def _max(by: list[str]) -> pl.Expr:
    return _Y_ / _floor(_Y_.max().over(by))  # read unscaled (_K is 1): no difference overflows


def _sum(by: list[str]) -> pl.Expr:
    # the scores' sum the same bits in any order whatever their size (wide_sum)
    low = _Y_.min().over(by)
    return (_Y_ - low) / _floor(wide_sum(_Y_).over(by) - low * pl.len().over(by), _K_)


def _zmuv(by: list[str]) -> pl.Expr:
    # the variance the same bits in any order, scores of 2**32 and more too; the mean
    # (_M) a column of its own, computed before (a window inside a window is evaluated
    # group by group, a hundred times slower)
    std = exact_mean((_Y_ - pl.col(_M)) ** 2, wide=True).over(by).sqrt()  # ddof 0, as numpy's
    return (_Y_ - pl.col(_M)) / _floor(std, _K_)


#: Score normalisations computed from the scores alone (``rank`` and ``borda`` use
#: positions and are built in :mod:`polars_irmetrics.fusion.fuse`).
SCORE_NORMS: dict[str, Callable[[list[str]], pl.Expr]] = {
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


def normalise(norm: str, frame: pl.LazyFrame, score: str, by: list[str], out: str) -> pl.LazyFrame:
    """``frame`` with column ``out``: column ``score`` under a score normalisation (one
    of ``SCORE_NORMS``), each window over ``by``.

    The scores of each window are first multiplied by the power of two that brings
    their largest magnitude near 1 where it is below ``2**-1`` or of ``2**96`` or more
    (:func:`~polars_irmetrics.metrics.scope.power_scale`; 1 otherwise, and always under
    ``max``), and the floor alike: every normalisation but ``max`` is a quotient of
    differences of the scores, the same on the scaled scores (a product by a power of
    two is exact), where the differences and squares of scores of ``1e300`` no longer
    overflow (zmuv's variance was infinite and every score 0) nor those of ``1e-160``
    underflow. Each stage is a column of its own, so no window holds another.

    Examples
    --------
    Every denominator is floored at ``1e-9``: a query whose documents all score the
    same maps them all to 0 under ``min-max`` rather than dividing by zero.

    >>> import polars as pl
    >>> from polars_irmetrics.fusion.norms import normalise
    >>> frame = pl.LazyFrame({"q": ["a", "a", "a", "b", "b"], "s": [3.0, 1.0, 2.0, 5.0, 5.0]})
    >>> normalise("min-max", frame, "s", ["q"], "n").collect()["n"].to_list()
    [1.0, 0.0, 0.5, 0.0, 0.0]
    >>> huge = pl.LazyFrame({"q": ["a"] * 3, "s": [1e300, 2e300, 4e300]})
    >>> normalise("zmuv", huge, "s", ["q"], "n").collect()["n"].round(12).to_list()
    [-1.06904496765, -0.267261241912, 1.336306209562]
    """
    s = pl.col(score)
    scale = pl.lit(1.0) if norm == "max" else power_scale(s.abs().max().over(by))
    frame = frame.with_columns(scale.alias(_K)).with_columns((s * _K_).alias(_Y))
    if norm == "zmuv":
        frame = frame.with_columns(exact_mean(_Y_, wide=True).over(by).alias(_M))
    return frame.with_columns(SCORE_NORMS[norm](by).alias(out)).drop(_Y, _K, _M, strict=False)


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
    >>> frame = pl.LazyFrame({"q": ["a", "a", "b", "b"], "s": [2.0, 1.0, -1.0, -2.0]})
    >>> normalise("max", frame, "s", ["q"], "n").select(
    ...     "n", f=floored("max", pl.col("s"), ["q"])
    ... ).collect().rows()
    [(1.0, False), (0.5, False), (-999999999.9999999, True), (-1999999999.9999998, True)]
    """
    if norm != "max":
        return None
    return score.max().over(by) < FLOOR
