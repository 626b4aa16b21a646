"""Multiple-testing corrections of a family of p-values, by statsmodels' names.

The arithmetic is that of :func:`statsmodels.stats.multitest.multipletests` step for
step, so the adjusted p-values are equal to it bit for bit (the tests compare them):

* ``"bonferroni"``: :math:`\\min(1, m p_i)`.
* ``"holm"``: step-down; sorted ascending, :math:`\\max_{j \\le i} (m - j + 1) p_{(j)}`,
  capped at 1.
* ``"holm-sidak"``: step-down with Šidák's factor,
  :math:`\\max_{j \\le i} 1 - (1 - p_{(j)})^{m - j + 1}`.
* ``"fdr_bh"``: Benjamini–Hochberg, step-up;
  :math:`\\min_{j \\ge i} p_{(j)} m / j`, capped at 1.
* ``"fdr_by"``: Benjamini–Yekutieli, as ``fdr_bh`` times :math:`\\sum_{k=1}^m 1/k`.
* ``None``: no correction (the adjusted p-value is the p-value).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from polars_irmetrics.errors import InvalidValueError

__all__ = ["CORRECTIONS", "Correction", "adjust", "check_correction"]

Correction = Literal["bonferroni", "holm", "holm-sidak", "fdr_bh", "fdr_by"] | None

CORRECTIONS: tuple[str, ...] = ("bonferroni", "holm", "holm-sidak", "fdr_bh", "fdr_by")


def check_correction(correction: object) -> Correction:
    """``correction`` as given, or :class:`InvalidValueError` listing the valid names."""
    if correction is None or correction in CORRECTIONS:
        return correction  # type: ignore[return-value]
    names = ", ".join(repr(c) for c in CORRECTIONS)
    raise InvalidValueError(
        f"correction={correction!r} is not a correction; choose {names} or None"
    )


def adjust(p_values: npt.ArrayLike, correction: Correction) -> npt.NDArray[np.float64]:
    """The adjusted p-values of one family, in the order given.

    Parameters
    ----------
    p_values
        The family's p-values, each in [0, 1] (NaN is refused).
    correction
        ``"bonferroni"``, ``"holm"``, ``"holm-sidak"``, ``"fdr_bh"``, ``"fdr_by"`` or
        ``None`` (see the module docstring for each formula).

    Returns
    -------
    numpy.ndarray
        float64, the same length and order as ``p_values``.

    Raises
    ------
    InvalidValueError
        An unknown correction, or a p-value that is NaN or outside [0, 1].

    Examples
    --------
    Holm multiplies the smallest of m p-values by m, the next by m - 1, ..., and
    never lets a larger p-value get a smaller adjustment: sorted, 0.01 × 3 = 0.03 and
    0.02 × 2 = 0.04; the largest would be 0.03 × 1 = 0.03, but it cannot drop under
    0.04.

    >>> from polars_irmetrics.stats.multitest import adjust
    >>> adjust([0.02, 0.03, 0.01], "holm").tolist()
    [0.04, 0.04, 0.03]
    >>> adjust([0.02, 0.03, 0.01], "fdr_bh").tolist()
    [0.03, 0.03, 0.03]
    """
    correction = check_correction(correction)
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise InvalidValueError(f"p-values must be one-dimensional, got shape {p.shape}")
    bad = np.isnan(p) | (p < 0) | (p > 1)
    if bad.any():
        raise InvalidValueError(
            f"p-value {float(p[bad][0])!r} is not in [0, 1]; "
            "a NaN p-value comes from NaN per-query values or a constant difference"
        )
    m = len(p)
    if correction is None or m == 0:
        unchanged: npt.NDArray[np.float64] = p.copy()
        return unchanged
    if correction == "bonferroni":
        scaled: npt.NDArray[np.float64] = p * float(m)
        scaled[scaled > 1] = 1
        return scaled
    order = np.argsort(p)
    s = np.take(p, order)
    down = np.arange(m, 0, -1)
    if correction == "holm":
        adjusted = np.maximum.accumulate(s * down)
    elif correction == "holm-sidak":
        with np.errstate(divide="ignore"):  # log1p(-1) = -inf: a p-value of 1 stays 1
            adjusted = np.maximum.accumulate(-np.expm1(down * np.log1p(-s)))
    else:
        ecdf = np.arange(1, m + 1) / float(m)
        if correction == "fdr_by":
            ecdf = ecdf / np.sum(1.0 / np.arange(1, m + 1))
        adjusted = np.minimum.accumulate((s / ecdf)[::-1])[::-1]
    adjusted[adjusted > 1] = 1
    out: npt.NDArray[np.float64] = np.empty_like(adjusted)
    out[order] = adjusted
    return out
