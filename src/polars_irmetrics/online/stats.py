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

The relative lift ``delta / control = m_t / m_c - 1`` has **Fieller's interval**
(Fieller 1954, "Some problems in interval estimation"; the delta-method interval Deng et
al. 2018 discuss beside it is symmetric about the estimate, so it can cross -100% for a
non-negative metric, collapse to a point when the treatment arm is constant, and
disagree with the test): the ratios ``θ = m_t / m_c`` that the test of
``m_t - θ m_c = 0`` does not reject,

.. math:: (m_t - θ m_c)^2 \\le c^2 (v_t + θ^2 v_c),

with the critical value ``c`` and the variances ``v_t``, ``v_c`` of the absolute
interval. With ``a = m_c^2 - c^2 v_c > 0`` (the control mean clearly away from 0) it
is ``(m_t m_c ± c sqrt(D)) / a - 1``, ``D = m_t^2 v_c + m_c^2 v_t - c^2 v_t v_c``; it
holds θ = 1 (a relative lift of 0) exactly when ``(m_t - m_c)^2 <= c^2 (v_t + v_c)``,
that is when the absolute interval holds 0. With ``a <= 0`` the set is unbounded (the
whole line, or all but an interval): no finite interval says it, and the bounds are
NaN (null in :func:`~polars_irmetrics.ab_test`). For a metric whose units' values are
all >= 0 the ratio is >= 0, so the lower bound is cut at -1 (-100%).
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

__all__ = ["ArmMoments", "Comparison", "compare", "fieller", "ratio_variance", "srm_p_values"]

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
    treatment: ArmMoments,
    control: ArmMoments,
    welch: npt.NDArray[np.bool_],
    alpha: float,
    nonnegative: npt.NDArray[np.bool_] | None = None,
) -> Comparison:
    """Welch's t-test where ``welch`` (per-unit means), else a z-test on delta-method
    variances (ratio metrics); confidence intervals at level ``1 - alpha``, Fieller's
    for the relative lift (:func:`fieller`).

    A difference with a standard error of 0 (both arms constant) has p-value 1 when
    the difference is 0, else 0. Where ``nonnegative`` (every unit's ``x`` and ``y``
    >= 0 in both arms), the ratio of the means cannot be negative, so the relative
    interval is cut at -1 (the confidence set less the ratios no data can have: its
    coverage is the same).
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
    p = np.where(welch, t_p, z_p)
    flat = se == 0
    p = np.where(flat, np.where(delta == 0, 1.0, 0.0), p)
    crit = np.where(flat, 0.0, crit)
    relative_low, relative_high = fieller(m_t, m_c, v_t, v_c, crit)
    if nonnegative is not None:
        # np.maximum keeps a NaN (an unbounded interval)
        relative_low = np.where(nonnegative, np.maximum(relative_low, -1.0), relative_low)
    return Comparison(
        delta=delta,
        std_error=se,
        relative=relative,
        ci_low=delta - crit * se,
        ci_high=delta + crit * se,
        relative_ci_low=relative_low,
        relative_ci_high=relative_high,
        p_value=p,
    )


def fieller(m_t: Array, m_c: Array, v_t: Array, v_c: Array, crit: Array) -> tuple[Array, Array]:
    """Fieller's interval of the relative lift ``m_t / m_c - 1`` of two independent
    means with variances ``v_t``, ``v_c``, at critical value ``crit``; NaN bounds where
    it is unbounded (``m_c**2 <= crit**2 v_c``; see the module docstring).

    Examples
    --------
    A control mean of 0.2 (variance 0.0004) and a treatment mean of 0.3 (variance
    0.0009), at c = 2: a = 0.04 - 4 * 0.0004 = 0.0384, D = 0.09 * 0.0004 + 0.04 * 0.0009
    - 4 * 0.0009 * 0.0004 = 0.00007056, c sqrt(D) = 2 * 0.0084 = 0.0168, so θ runs from
    (0.06 - 0.0168) / 0.0384 = 1.125 to (0.06 + 0.0168) / 0.0384 = 2: a relative lift
    from 0.125 to 1 about the estimate 0.5 (the delta method's 0.5 ± 0.424 is
    symmetric). The absolute interval 0.1 ± 2 sqrt(0.0013) = [0.028, 0.172] excludes 0
    as this one does. A control mean of 0.03 is within c standard errors of 0
    (a = 0.0009 - 0.0016 < 0): unbounded.

    >>> import numpy as np
    >>> from polars_irmetrics.online.stats import fieller
    >>> low, high = fieller(*(np.array([v]) for v in (0.3, 0.2, 0.0009, 0.0004, 2.0)))
    >>> round(float(low[0]), 12), round(float(high[0]), 12)
    (0.125, 1.0)
    >>> fieller(*(np.array([v]) for v in (0.3, 0.03, 0.0009, 0.0004, 2.0)))[0]
    array([nan])
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a = m_c**2 - crit**2 * v_c
        # D >= a v_t >= 0 where a > 0; max: a rounding below 0 where every variance is 0
        root = crit * np.sqrt(np.maximum(m_t**2 * v_c + m_c**2 * v_t - crit**2 * v_t * v_c, 0.0))
        bounded = a > 0
        low = np.where(bounded, (m_t * m_c - root) / a - 1.0, np.nan)
        high = np.where(bounded, (m_t * m_c + root) / a - 1.0, np.nan)
    return low, high


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
