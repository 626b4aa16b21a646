"""The normal quantile of a two-sided interval at a confidence level, for every level
strictly between 0 and 1.

``NormalDist().inv_cdf((1 + level) / 2)`` is the usual formula, but ``(1 + level) / 2``
rounds to 1.0 for a level within ``2**-53`` of 1 (``0.9999999999999999``, which every
check of a level accepts), and ``inv_cdf(1.0)`` raises ``statistics.StatisticsError``.
:func:`two_sided_z` reads the upper tail there instead: ``-inv_cdf((1 - level) / 2)``,
exact for such a level (``1 - level`` is), so no level in (0, 1) reaches a Python
error from inside.
"""

from __future__ import annotations

from statistics import NormalDist

__all__ = ["two_sided_z"]


def two_sided_z(level: float) -> float:
    """``z`` with ``P(|Z| <= z) = level`` for a standard normal ``Z``, ``0 < level < 1``.

    The same bits as ``NormalDist().inv_cdf((1 + level) / 2)`` wherever that is defined
    (every level below 1 - 2**-53); above, the quantile of the upper tail.

    Examples
    --------
    >>> round(two_sided_z(0.95), 6)
    1.959964
    >>> round(two_sided_z(0.9999999999999999), 4)
    8.2924
    """
    half = (1.0 + level) / 2.0
    if half < 1.0:
        return NormalDist().inv_cdf(half)
    return -NormalDist().inv_cdf((1.0 - level) / 2.0)
