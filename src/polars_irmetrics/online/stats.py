"""The statistics of an A/B comparison, vectorised in numpy over (segment, metric, arm) rows.

Every metric of an arm is a ratio of per-unit means, ``mean(x) / mean(y)`` over the
arm's n randomization units (users):

* a *per-unit mean* metric (abandonment, click MRR, ...) has ``x`` = the unit's mean
  session value and ``y = 1``: the arm's value is the mean of the units' values, its
  variance ``var(x) / n``, and two arms are compared by **Welch's t-test**
  (``scipy.stats.ttest_ind(equal_var=False)``);
* a *ratio* metric (CTR) has ``x`` = the unit's clicks and ``y`` = its impressions:
  ``R = sum(x) / sum(y)``, whose variance by the **delta method** (Deng et al., KDD
  2018, "Applying the Delta Method in Metric Analytics") is

  .. math:: \\mathrm{Var}(R) \\approx \\frac{1}{n \\bar y^2}
            \\left(s_{xx} - 2 R\\, s_{xy} + R^2 s_{yy}\\right)

  with the sample (co)variances ``s`` (``ddof=1``); two arms are compared by a z-test.
  With ``y = 1`` this is ``var(x) / n``: Welch's variance.

The relative lift ``delta / control`` has the delta-method variance
``v_t / m_c**2 + m_t**2 v_c / m_c**4``; its interval uses the same critical value as
the absolute one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from polars_irmetrics.ground.lazy import LazyModule

if TYPE_CHECKING:
    from scipy import stats
else:
    stats = LazyModule("scipy.stats")  # imported at the first test (import time)

__all__ = ["ArmMoments", "Comparison", "compare", "ratio_variance", "srm_p_values"]

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ArmMoments:
    """Per row (one arm of one metric in one segment), the moments of its units' (x, y).

    ``n`` units, means ``mx``, ``my``, sample variances ``vxx``, ``vyy`` and covariance
    ``cxy`` (``ddof=1``).
    """

    n: Array
    mx: Array
    my: Array
    vxx: Array
    vyy: Array
    cxy: Array

    @property
    def value(self) -> Array:
        """The arm's metric, ``mx / my``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out: Array = self.mx / self.my
        return out


def ratio_variance(arm: ArmMoments) -> Array:
    """Delta-method variance of ``mean(x) / mean(y)`` (``var(x) / n`` when ``y = 1``).

    Examples
    --------
    Three users with (clicks, impressions) (1, 10), (3, 10), (2, 20): R = 6 / 40 =
    0.15, s_xx = 1, s_yy = 100/3, s_xy = 0, mean(y) = 40/3, so
    Var(R) = (1 - 0 + 0.15**2 * 100/3) / (3 * (40/3)**2) = 1.75 / 533.33... = 0.00328125:

    >>> import numpy as np
    >>> from polars_irmetrics.online.stats import ArmMoments, ratio_variance
    >>> x, y = np.array([1.0, 3.0, 2.0]), np.array([10.0, 10.0, 20.0])
    >>> arm = ArmMoments(np.array([3.0]), np.array([x.mean()]), np.array([y.mean()]),
    ...                  np.array([x.var(ddof=1)]), np.array([y.var(ddof=1)]),
    ...                  np.array([np.cov(x, y)[0, 1]]))
    >>> round(float(ratio_variance(arm)[0]), 12)
    0.00328125
    """
    r = arm.value
    with np.errstate(divide="ignore", invalid="ignore"):
        out: Array = (arm.vxx - 2.0 * r * arm.cxy + r * r * arm.vyy) / (arm.n * arm.my**2)
    # 0 where it rounds below: x = R y on every unit makes the variance exactly 0, which
    # the three terms give as -3e-16 (a NaN stays a NaN)
    return np.maximum(out, 0.0)


@dataclass(frozen=True)
class Comparison:
    """Per row: treatment against control."""

    delta: Array
    std_error: Array
    relative: Array
    ci_low: Array
    ci_high: Array
    relative_ci_low: Array
    relative_ci_high: Array
    p_value: Array


def compare(
    treatment: ArmMoments, control: ArmMoments, welch: npt.NDArray[np.bool_], alpha: float
) -> Comparison:
    """Welch's t-test where ``welch`` (per-unit means), else a z-test on delta-method
    variances (ratio metrics); confidence intervals at level ``1 - alpha``.

    A difference with a standard error of 0 (both arms constant) has p-value 1 when
    the difference is 0, else 0.
    """
    m_t, m_c = treatment.value, control.value
    v_t, v_c = ratio_variance(treatment), ratio_variance(control)
    delta = m_t - m_c
    se = np.sqrt(v_t + v_c)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (v_t + v_c) ** 2 / (v_t**2 / (treatment.n - 1) + v_c**2 / (control.n - 1))
        score = delta / se
        t_p = 2.0 * stats.t.sf(np.abs(score), df)
        z_p = 2.0 * stats.norm.sf(np.abs(score))
        crit = np.where(welch, stats.t.ppf(1.0 - alpha / 2.0, df), stats.norm.ppf(1 - alpha / 2))
        relative = delta / m_c
        rel_se = np.sqrt(v_t / m_c**2 + m_t**2 * v_c / m_c**4)
    p = np.where(welch, t_p, z_p)
    flat = se == 0
    p = np.where(flat, np.where(delta == 0, 1.0, 0.0), p)
    crit = np.where(flat, 0.0, crit)
    return Comparison(
        delta=delta,
        std_error=se,
        relative=relative,
        ci_low=delta - crit * se,
        ci_high=delta + crit * se,
        relative_ci_low=relative - crit * rel_se,
        relative_ci_high=relative + crit * rel_se,
        p_value=p,
    )


def srm_p_values(observed: Array, shares: Array) -> Array:
    """Per row of ``observed`` (units per arm), the chi-square p-value against ``shares``.

    ``scipy.stats.chisquare(observed, total * shares)`` row by row, vectorised.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_irmetrics.online.stats import srm_p_values
    >>> srm_p_values(np.array([[50.0, 50.0], [60.0, 40.0]]), np.array([0.5, 0.5])).round(4)
    array([1.    , 0.0455])
    """
    expected = observed.sum(axis=1, keepdims=True) * shares[np.newaxis, :]
    chi2 = ((observed - expected) ** 2 / expected).sum(axis=1)
    out: Array = stats.chi2.sf(chi2, observed.shape[1] - 1)
    return out
