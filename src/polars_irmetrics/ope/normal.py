"""The normal interval of an off-policy estimate (``ci=``, ``ci_method="normal"``) from
exact sums, so that it adds up across parts.

``mean +- z sd / sqrt(n)``, with ``z`` the normal quantile of ``(1 + ci) / 2`` and ``sd``
the rows' contributions' standard deviation (``ddof=1``) written with two exact sums
(:mod:`polars_irmetrics.ope.sums`): ``sd^2 = (sum x^2 - (sum x)^2 / n) / (n - 1)``
(never below 0). The sums are the same integers however the log is split, so the
interval is the same bits in one plan, out of core (``buckets=``) and on Spark and Dask.
``n < 2`` gives no interval (null), as a one-row standard deviation has none; rows
whose contributions are all one value (their largest equal to their smallest, two
maxima carried through the parts as the sums are) have the variance 0 exactly, the
interval the estimate itself, where the two sums' difference would leave their rounding.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.ope.sums import Summary, exact_total, scale_column
from polars_irmetrics.stats.normal import two_sided_z

__all__ = ["normal_interval", "wants_normal"]


def wants_normal(ci: float | None, method: str) -> bool:
    """Whether the options ask for the normal interval (``ci=`` with
    ``ci_method="normal"``).

    Examples
    --------
    >>> wants_normal(0.95, "normal"), wants_normal(0.95, "bootstrap"), wants_normal(None, "normal")
    (True, False, False)
    """
    return ci is not None and method == "normal"


def normal_interval(
    summary: Summary,
    label: str,
    terms: Sequence[tuple[pl.Expr, pl.Expr | None]],
    total: str,
    n: pl.Expr,
    ci: float,
    present: pl.Expr | None = None,
    peak: pl.Expr | None = None,
) -> list[pl.Expr]:
    """``<label>_lower`` and ``<label>_upper`` of the estimate ``exact_total(total) / n``
    (the sum of the rows' contributions ``terms``'s one numerator over their count
    ``n``): the sum of squares is added to ``summary``; a scaled summary's (each sum
    at a power of two of its own) reads the squares at the scale of ``peak``'s largest
    magnitude where given (the rounds' values, whatever the scale of ``total``: a split
    log's first pass finds it), else of the contributions'. A ratio (a self-normalised
    estimator: a term with a denominator, or several) has no closed-form variance: refused.

    Examples
    --------
    Contributions 1, 2 and 4: mean 7/3, ``sd^2 = (21 - 49/3) / 2 = 7/3``; at 95 %
    ``z = 1.959964``, the half width ``1.959964 sqrt(7/3) / sqrt(3) = 1.7285``:

    >>> s = Summary(count="n", count_expr=pl.len(), sums={"x": pl.col("x")})
    >>> n = pl.col("n").cast(pl.Float64)
    >>> bounds = normal_interval(s, "m", [(pl.col("x"), None)], "x", n, 0.95)
    >>> part = s.part(pl.LazyFrame({"x": [1.0, 2.0, 4.0]}), [])
    >>> [round(v, 4) for v in part.select(bounds).collect().row(0)]
    [0.6048, 4.0619]

    >>> normal_interval(s, "snips", [(pl.col("x"), pl.col("w"))], "x", n, 0.95)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'snips' is a ratio ...
    """
    if len(terms) != 1 or terms[0][1] is not None:
        raise MetricParameterError(
            f"metric {label!r} is a ratio (self-normalised) and has no closed-form "
            "variance: use ci_method='bootstrap'"
        )
    x = terms[0][0]
    square = f"{label}:x2"
    summary.sums[square] = x * x
    if summary.scaled:  # the squares of the contributions, scaled before squaring
        summary.squares[square] = total
        if not x.meta.eq(summary.sums[total]):  # the rounds' values, not the rows' terms
            summary.roots[square] = x
        if peak is not None:
            summary.root_peaks[square] = peak
    # the largest and the smallest contribution (of the rows ``present`` marks): where
    # they are one value the variance is 0 exactly, which the two sums' difference
    # misses by their rounding (contributions all -0.19 gave a half width of 2.5e-9)
    read = x if present is None else pl.when(present).then(x)
    high, low = f"{INTERNAL}{label}:x_max", f"{INTERNAL}{label}:x_min"
    summary.maxima[high] = read
    summary.maxima[low] = -read
    sum_x = exact_total(total)
    if summary.scaled:  # read at the squares' scale (a power of two: exact), divided last
        at = scale_column(square)
        sum_x = sum_x * (at / scale_column(total))
    mean = sum_x / n
    spread = ((exact_total(square) - sum_x * mean) / (n - 1.0)).clip(lower_bound=0.0)
    variance = pl.when(pl.col(high) == -pl.col(low)).then(pl.lit(0.0)).otherwise(spread)
    half = two_sided_z(ci) * variance.sqrt() / n.sqrt()
    lower, upper = mean - half, mean + half
    if summary.scaled:
        lower, upper = lower / at, upper / at
    return [
        pl.when(n > 1).then(lower).alias(f"{label}_lower"),
        pl.when(n > 1).then(upper).alias(f"{label}_upper"),
    ]
