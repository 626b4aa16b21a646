"""The rewards' power-of-two scale: small rewards summed without losing digits.

The exact sums (:mod:`polars_irmetrics.ope.sums`) count whole units of 2**-64: a term
of magnitude ``2**-e`` keeps ``64 - e`` bits, so the estimates of a log whose rewards
are all small lose digits (rewards near 1e-9: the estimates about 5e-10 of
themselves), and the normal interval's sum of squared contributions more (near 1e-9,
terms of 1e-18 are a few units each: the interval about 0.5 % off). Every estimate and
interval is linear in the rewards and ``q_hat``, so the plan reads them multiplied by
one power of two, chosen from the log's largest reward magnitude (:func:`scale_of`),
and divides the estimates and their intervals by it at the end: both exact (a product
by a power of two only moves the exponent). A log whose largest reward magnitude is
``2**-1`` or more (0/1 rewards, ratings, revenue) is read as it is (the scale is 1,
the same bits as before); a smaller one is brought to ``[1, 2)``, so that a log's
estimates at every power-of-two scale of its rewards (below ``2**-1``) are the same
bits, scaled, down to the smallest normal float64's (``2**-1022``). A log whose largest
reward magnitude is below that (subnormal: no power of two within float64's range brings
it to ``[1, 2)``, and its estimates would be rounded to units of ``2**-1074``) gets the
scale :data:`SUBNORMAL`, which no other log gets, and is refused
(:func:`~polars_irmetrics.ope.checks.subnormal_reward_check`). A reward (or ``q_hat``)
whose magnitude times the scale is below ``2**-30`` (about ``2**30`` times smaller than
the largest reward, or more) would still lose digits in the units of ``2**-64``, and is
refused (:func:`~polars_irmetrics.ope.checks.tiny_reward_check`): the check reads the
rows' scale, so that it gives the same verdict on every path.

The scale is the whole log's: the one plan computes it in the plan (a column,
:data:`SCALE`, on every row); a split log (out of core, Spark, Dask) in a first pass
over the log's rewards, each part's largest magnitude (:func:`reward_peak`), the
largest of them turned into the scale (:func:`scale_from_peaks`) and given to every
part: the same scale, so the same sums, on every path. The column travels through the
parts' sums as a maximum and the estimates are divided by it last (:func:`unscaled`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_irmetrics.ground.known_schema import schema_of
from polars_irmetrics.ground.validate import INTERNAL

__all__ = [
    "FLOOR",
    "NO_OP",
    "SCALE",
    "SUBNORMAL",
    "reward_peak",
    "scale_column",
    "scale_from_peaks",
    "scale_of",
    "unscaled",
]

#: The column of the rewards' scale, the same on every row of the log.
SCALE = f"{INTERNAL}scale"
#: A log whose largest reward magnitude is at least this is read unscaled.
NO_OP = 0.5
#: The largest exponent of the scale: the power of two that brings the smallest normal
#: float64, ``2**-1022``, to 1.
_MOST = 1022
#: The smallest normal float64: a log whose largest reward magnitude is below it is refused.
_NORMAL = 2.0**-1022
#: The scale of a log whose largest reward magnitude is subnormal (no other log's: the
#: others' are at most ``2**1022``), for the check to refuse it; finite, and the rewards
#: times it stay below 2.
SUBNORMAL = 2.0**1023
#: A reward or ``q_hat`` other than 0 whose magnitude times the scale is below this is
#: refused: in units of ``2**-64`` it would keep fewer than 34 bits.
FLOOR = 2.0**-30


def reward_peak(reward: str) -> pl.Expr:
    """Group context: the largest magnitude of the rewards of column ``reward`` (as
    Float64; NaN and nulls skipped, so that the parts' maxima add up in any order;
    null without one).

    >>> frame = pl.DataFrame({"reward": [0.5, -3.0, float("nan"), None]})
    >>> frame.select(reward_peak("reward")).item()
    3.0
    """
    return pl.col(reward).cast(pl.Float64).fill_nan(None).abs().max().alias(SCALE)


def scale_of(peak: pl.Expr) -> pl.Expr:
    """The rewards' scale from their largest magnitude ``peak`` (:func:`reward_peak`): 1
    from :data:`NO_OP` up (infinite included), for 0 or none (null); below, the power of
    two ``2**k`` that brings ``peak`` to ``[1, 2)`` (``k`` at most 1022, for the smallest
    normal float64); :data:`SUBNORMAL` for a subnormal ``peak`` (below ``2**-1022``).

    ``k`` is ``-floor(log2 peak)``, corrected by one where the logarithm rounds across
    an integer (just below a power of two), from ``peak * 2**k`` itself (exact).

    >>> peaks = pl.DataFrame({"p": [1.0, 0.5, 0.49, 2.0**-30, 1e-9, 0.0, None]})
    >>> peaks.select(scale_of(pl.col("p")).alias("s"))["s"].to_list()
    [1.0, 1.0, 4.0, 1073741824.0, 1073741824.0, 1.0, 1.0]
    >>> tiny = pl.DataFrame({"p": [2.0**-1022, 5e-324]})
    >>> tiny.select(scale_of(pl.col("p"))).to_series().to_list() == [2.0**1022, SUBNORMAL]
    True
    """
    two = pl.lit(2.0)
    first = (-peak.log(2.0).floor()).clip(0.0, float(_MOST))
    brought = peak * two.pow(first)  # exact: a power of two
    k = (first + (brought < 1.0).cast(pl.Float64) - (brought >= 2.0).cast(pl.Float64)).clip(
        0.0, float(_MOST)
    )
    small = ((peak > 0.0) & (peak < NO_OP)).fill_null(False)
    subnormal = ((peak > 0.0) & (peak < _NORMAL)).fill_null(False)
    return pl.when(subnormal).then(SUBNORMAL).when(small).then(two.pow(k)).otherwise(1.0)


def scale_column(reward: str, scale: float | None) -> pl.Expr:
    """The :data:`SCALE` column of a log's rows: ``scale`` where given (a split log's,
    from :func:`scale_from_peaks`), else this log's own (an aggregation broadcast to its
    rows: the one plan)."""
    if scale is not None:
        return pl.lit(scale, pl.Float64).alias(SCALE)
    return scale_of(reward_peak(reward)).alias(SCALE)


def scale_from_peaks(peaks: pl.DataFrame) -> float:
    """The scale of a log from its parts' :func:`reward_peak` (column :data:`SCALE`, a
    row per part; null for a part without a reward): the largest, as the one plan
    computes it over the whole log.

    >>> scale_from_peaks(pl.DataFrame({SCALE: [2.0**-20, None, 3e-7]}))
    1048576.0
    """
    column = pl.col(SCALE).cast(pl.Float64)
    value = peaks.select(scale_of(column.fill_nan(None).max())).item()
    return float(value)


def unscaled(frame: pl.LazyFrame, labels: Sequence[str]) -> pl.LazyFrame:
    """``frame`` (a result, its :data:`SCALE` column carried from the rows) with each
    estimate of ``labels`` and its interval's columns divided by the scale (exact: a
    power of two), without the scale's column; as it is without that column.

    >>> frame = pl.LazyFrame({"ips": [3.0], "ips_lower": [1.0], "ips_ess": [5.0], SCALE: [4.0]})
    >>> unscaled(frame, ["ips"]).collect().row(0)
    (0.75, 0.25, 5.0)
    """
    schema = schema_of(frame)
    if SCALE not in schema:
        return frame
    columns = [
        column
        for label in labels
        for column in (label, f"{label}_lower", f"{label}_upper")
        if column in schema
    ]
    return frame.with_columns(pl.col(c) / pl.col(SCALE) for c in columns).drop(SCALE)


#: The sums' own scales (:func:`sum_scale`): a sum whose terms' largest magnitude is
#: below this is read times a power of two (as the rewards are).
SUM_LOW = 0.5
#: A sum of terms up to this is read unscaled: their exact sums hold them (terms below
#: 2**96, :data:`~polars_irmetrics.ope.sums.EXACT_LIMIT`); a larger peak is brought to
#: ``[1, 2)``.
SUM_HIGH = 2.0**96
#: The same bound for the base of a sum of squares: its squares stay below 2**96.
SQUARE_HIGH = 2.0**48


def sum_scale(peak: pl.Expr, high: float = SUM_HIGH) -> pl.Expr:
    """The power of two an exact sum's terms are read times, from their largest magnitude
    ``peak`` (the whole log's): 1 from :data:`SUM_LOW` up to ``high`` (the same bits as
    an unscaled sum), for 0, NaN, an infinity or none (null); otherwise ``2**k`` that
    brings ``peak`` to ``[1, 2)`` (``k`` from -1024, the scale itself then subnormal, to
    1023: a subnormal ``peak`` is left below 1, and refused by the caller).

    The importance weights (and their products: the contributions, their squares) of a
    policy or a ``clip=`` that makes every weight small, or of tiny propensities that
    make them huge, are summed this way without losing digits, the sum divided by the
    scale last (exact).

    >>> peaks = pl.DataFrame({"p": [1.0, 0.49, 1e-9, 2.0**96, 3e300, 0.0, None]})
    >>> peaks.select(sum_scale(pl.col("p")).alias("s"))["s"].to_list()
    [1.0, 4.0, 1073741824.0, 1.262177448353619e-29, 3.7330544740128755e-301, 1.0, 1.0]
    >>> pl.select(sum_scale(pl.lit(2.0**-1020)) * 2.0**-1020).item()
    1.0
    """
    peak = peak.cast(pl.Float64)
    # -floor(log2 peak), corrected by one where the logarithm rounds across an integer;
    # 2**k as two factors, each within float64's range
    first = (-peak.log(2.0).floor()).clip(-1100.0, 1100.0)
    half = (first / 2.0).floor()
    brought = peak * pl.lit(2.0).pow(half) * pl.lit(2.0).pow(first - half)
    k = first + (brought < 1.0).cast(pl.Float64) - (brought >= 2.0).cast(pl.Float64)
    k = k.clip(-1074.0, 1023.0)
    outside = ((peak > 0.0) & ((peak < SUM_LOW) | (peak >= high)) & peak.is_finite()).fill_null(
        False
    )
    return pl.when(outside).then(pl.lit(2.0).pow(k)).otherwise(1.0)
