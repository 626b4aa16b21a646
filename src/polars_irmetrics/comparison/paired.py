"""Paired statistics of many comparisons at once, vectorised over a delta matrix.

Every function takes ``a`` and ``b``, two ``n × K`` arrays (n paired queries, K
comparisons: systems × metrics side by side), and returns one value per comparison.
Nothing loops over comparisons, queries or resamples in Python; the resampling
tests loop over *chunks* of resamples only, to bound memory.

Definitions (``d = a - b``, the per-query deltas; ``mean`` is over queries):

* **t**: Student's paired t-test, :func:`scipy.stats.ttest_rel` (its p-value and, for
  ``ci="t"``, its confidence interval of the mean delta).
* **wilcoxon**: the signed-rank test, :func:`scipy.stats.wilcoxon` with its defaults
  (``zero_method="wilcox"``: zero deltas are dropped before ranking; ``method="auto"``:
  exact distribution for small samples, else the normal approximation).
* **randomization**: Fisher's sign-flip test. Under the null hypothesis each delta's
  sign is a coin flip; the statistic is the mean delta. With ``2**n <= n_resamples``
  every sign vector is enumerated and the p-value is exact (the share of sign vectors
  whose mean is at least as extreme). Otherwise ``R = n_resamples`` random sign
  vectors give ``p = (1 + c) / (1 + R)``, c the number at least as extreme (counting
  the observed one, so p is never 0; ranx reports ``c / R``, which differs by at most
  ``1 / R``). "At least as extreme" is ``|mean*| >= |mean|`` for
  ``alternative="two-sided"``, ``mean* >= mean`` for ``"greater"`` and
  ``mean* <= mean`` for ``"less"``, up to a rounding tolerance of 1e-12 of the sum of
  ``|d|``, so that sign vectors giving the observed mean exactly count as ties.
  The means are one matrix product: a chunk of 0/1 sign bits (``R_c × n``) times the
  ``n × K`` deltas.
* **bootstrap**: the paired bootstrap test of the mean delta (Efron & Tibshirani's
  shift method): the deltas are centred on 0 (the null hypothesis) and resampled with
  replacement; ``p = (1 + c) / (1 + R)``, c the resampled means at least as extreme
  as the observed mean (as above). Each chunk of resamples is a count matrix (how
  many times each query is drawn) times the deltas. On a handful of queries its p can
  fall below what any sign-flip test of them can give (``2 / 2**n``): warned
  (:func:`_warn_coarse`).
* **intervals**: ``ci="t"``: scipy's t interval of the mean delta; ``ci="bootstrap"``:
  the percentile interval of the bootstrap means of the (uncentred) deltas. One-sided
  alternatives give one-sided intervals (an infinite bound), as scipy does.
* **statistic**: each test's own signed statistic of ``a - b``, whose sign is the
  direction the test found: t for the t-test; for Wilcoxon the signed-rank sums
  ``r+ - r-`` (the ranks of ``|d|`` among the non-zero deltas, ties averaged, as scipy
  ranks them; scipy's two-sided ``statistic`` is ``min(r+, r-)``, which has no sign);
  the mean delta for the randomization and bootstrap tests. 0 where every delta is 0.
  The signed ranks can disagree with the mean: 19 deltas of -0.1 and one of +5 have a
  positive mean and ``r+ - r- = 20 - 190``.
* **effect size**: paired Cohen's d_z, ``mean(d) / std(d, ddof=1)`` (NaN when the
  deltas are constant, also where they differ only by the rounding of the values: every
  delta within 8 units in the last place of its own query's values of their mean).

A comparison whose deltas are all zero gets p = 1 from every test (scipy returns NaN
there: the systems are identical on these queries, nothing is significant).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.comparison.caller import warn_at_caller
from polars_irmetrics.comparison.options import Alternative, CompareOptions
from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.progress import track
from polars_irmetrics.metrics.spec import ordered_mean

if TYPE_CHECKING:
    import scipy.stats as scipy_stats
else:
    scipy_stats = LazyModule("scipy.stats")  # imported at the first test (import time)

__all__ = [
    "PairedStats",
    "bootstrap_means",
    "exact_means",
    "paired_stats",
    "randomization_p",
    "sign_bits",
    "signed_rank_sums",
]

Array = npt.NDArray[np.float64]

#: Elements of one chunk of signs or counts (float64): 2**22 is 32 MiB.
CHUNK_ELEMENTS = 2**22


@dataclass(frozen=True)
class PairedStats:
    """One value per comparison (length-K arrays)."""

    n: int
    mean: Array
    baseline_mean: Array
    delta: Array
    effect_size: Array
    #: The test's signed statistic (module doc): its sign is the direction it found.
    statistic: Array
    ci_low: Array
    ci_high: Array
    p_value: Array
    wins: npt.NDArray[np.int64]
    ties: npt.NDArray[np.int64]
    losses: npt.NDArray[np.int64]


def exact_means(values: Array) -> Array:
    """The column means of a ``queries x systems`` matrix of finite values, each its
    values added one by one from the least and divided by the count, by the expression
    of :func:`irm.evaluate`'s means
    (:func:`~polars_irmetrics.metrics.spec.ordered_mean`): the same bits in any order of
    the queries, so that two systems of the same values in another order tie exactly
    (numpy's pairwise sums may differ in the last bit, and a tie would read as a win or
    a swap), and the bits ``irm.evaluate`` gives each system.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_irmetrics.comparison.paired import exact_means
    >>> values = np.array([[0.1, 0.3], [0.2, 0.2], [0.3, 0.1]])
    >>> bool(exact_means(values)[0] == exact_means(values)[1])
    True
    >>> float(values.mean(axis=0)[0] - values.mean(axis=0)[1])  # numpy's differ
    5.551115123125783e-17

    Tiny and huge values keep their sign and size (a sum beyond Float64 is added in
    units of 2**64):

    >>> exact_means(np.array([[-1e-20, 1e308], [3e-20, 1e308]])).tolist()
    [1.0000000000000001e-20, 1e+308]
    """
    columns = np.asarray(values, dtype=np.float64).T  # a few systems, one mean each
    frame = pl.DataFrame({f"s{i}": column for i, column in enumerate(columns)})
    means = frame.select(ordered_mean(pl.col(c)) for c in frame.columns)
    return means.to_numpy().reshape(-1).astype(np.float64)


def _extreme(resampled: Array, observed: Array, tol: Array, alternative: Alternative) -> Array:
    """How many rows of ``resampled`` are at least as extreme as ``observed`` (per column)."""
    if alternative == "greater":
        hits = resampled >= observed - tol
    elif alternative == "less":
        hits = resampled <= observed + tol
    else:
        hits = np.abs(resampled) >= np.abs(observed) - tol
    counted: Array = hits.sum(axis=0, dtype=np.float64)
    return counted


def sign_bits(rng: np.random.Generator, rows: int, n: int) -> Array:
    """``rows × n`` random 0/1 values as float64, 8 bits from each random byte."""
    packed = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
    return np.unpackbits(packed, axis=1, count=n).astype(np.float64)


def _chunks(draws: int, chunk: int, label: str, progress: bool | None) -> Iterator[int]:
    """The first resample of each chunk, with a bar of the chunks when more than one."""
    count = -(-draws // chunk)
    starts = range(0, draws, chunk)
    if count == 1 and progress is not True:
        return iter(starts)
    return track(starts, f"{label}, {draws} resamples", count, enabled=progress)


def randomization_p(
    d: Array,
    alternative: Alternative,
    n_resamples: int,
    rng: np.random.Generator,
    progress: bool | None = None,
) -> Array:
    """Fisher's sign-flip p-value of the mean of each column of ``d`` (n × K).

    A sign vector s (±1) gives the sum ``s @ d = 2 * (b @ d) - sum(d)`` with b = (s + 1)/2
    in {0, 1}: one matrix product per chunk of sign vectors.

    Examples
    --------
    Three deltas, all positive: of the 2**3 sign vectors only "all +" reaches a mean as
    high, and "all -" one as low, so the exact two-sided p-value is 2/8:

    >>> import numpy as np
    >>> from polars_irmetrics.comparison.paired import randomization_p
    >>> d = np.array([[0.1], [0.2], [0.3]])
    >>> randomization_p(d, "two-sided", 10_000, np.random.default_rng(0)).tolist()
    [0.25]
    >>> randomization_p(d, "greater", 10_000, np.random.default_rng(0)).tolist()
    [0.125]
    """
    n, k = d.shape
    total = d.sum(axis=0)
    tol = 1e-12 * np.abs(d).sum(axis=0)
    count = np.zeros(k)
    exact = n < 63 and 2**n <= n_resamples
    draws = 2**n if exact else n_resamples
    chunk = max(1, min(draws, CHUNK_ELEMENTS // max(n, 1)))
    bits = np.arange(n, dtype=np.int64)
    for start in _chunks(draws, chunk, "randomization test", progress):
        rows = min(chunk, draws - start)
        if exact:
            codes = np.arange(start, start + rows, dtype=np.int64)[:, None]
            b = ((codes >> bits) & 1).astype(np.float64)
        else:
            b = sign_bits(rng, rows, n)
        count += _extreme(2.0 * (b @ d) - total, total, tol, alternative)
    if exact:
        exact_p: Array = count / draws
        return exact_p
    p: Array = (1.0 + count) / (1.0 + draws)
    return p


def bootstrap_means(
    d: Array, n_resamples: int, rng: np.random.Generator, progress: bool | None = None
) -> tuple[Array, Array]:
    """The ``n_resamples × K`` bootstrap means of ``d``'s columns, and the observed means.

    Each resample draws n queries with replacement (the same draw for every column, so
    comparisons stay paired); a chunk of resamples is a count matrix (how many times
    each query is drawn) times ``d``.

    Examples
    --------
    A resample's mean is a mean of observed deltas, so it lies between their extremes:

    >>> import numpy as np
    >>> from polars_irmetrics.comparison.paired import bootstrap_means
    >>> means, observed = bootstrap_means(np.array([[0.0], [1.0]]), 1000, np.random.default_rng(0))
    >>> sorted(set(means[:, 0].tolist())), observed.tolist()
    ([0.0, 0.5, 1.0], [0.5])
    """
    n, k = d.shape
    chunk = max(1, min(n_resamples, CHUNK_ELEMENTS // max(n, 1)))
    means = np.empty((n_resamples, k))
    for start in _chunks(n_resamples, chunk, "bootstrap", progress):
        rows = min(chunk, n_resamples - start)
        draws = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n)
        means[start : start + rows] = (counts.astype(np.float64) @ d) / n
    return means, d.mean(axis=0)


def _bootstrap_p(means: Array, observed: Array, d: Array, alternative: Alternative) -> Array:
    tol = 1e-12 * np.abs(d).sum(axis=0) / len(d)
    count = _extreme(means - observed, observed, tol, alternative)
    p: Array = (1.0 + count) / (1.0 + len(means))
    return p


def _percentile(means: Array, confidence: float, alternative: Alternative) -> tuple[Array, Array]:
    tail = 1.0 - confidence
    inf = np.full(means.shape[1], np.inf)
    if alternative == "greater":
        return np.quantile(means, tail, axis=0), inf
    if alternative == "less":
        return -inf, np.quantile(means, confidence, axis=0)
    low, high = np.quantile(means, [tail / 2, 1 - tail / 2], axis=0)
    return low, high


def _wilcoxon_p(d: Array, live: npt.NDArray[np.bool_], alternative: Alternative) -> Array:
    """scipy's ``wilcoxon`` p-value of each column, as if called on that column alone.

    scipy's ``method="auto"`` picks the exact distribution only when the *whole* array
    has no zero and no tie, so the columns are passed in two calls: those without zeros
    or ties, and the others.
    """
    p = np.ones(d.shape[1])
    magnitude = np.sort(np.abs(d), axis=0)
    repeated = (magnitude[1:] == magnitude[:-1]) & (magnitude[1:] > 0)
    tied = (magnitude == 0).any(axis=0) | repeated.any(axis=0)
    for group in (live & ~tied, live & tied):  # two calls, not one per column
        if group.any():
            p[group] = scipy_stats.wilcoxon(d[:, group], axis=0, alternative=alternative).pvalue
    return p


def signed_rank_sums(d: Array) -> Array:
    """``r+ - r-`` of each column: the ranks of ``|d|`` among its non-zero values (ties
    averaged, scipy's ``rankdata``), those of the positive deltas minus those of the
    negative (``zero_method="wilcox"``: zeros dropped). Zeros rank below every non-zero
    value, so a non-zero value's rank among the non-zero ones is its rank among all
    less the count of zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_irmetrics.comparison.paired import signed_rank_sums
    >>> signed_rank_sums(np.array([[-0.1] * 19 + [5.0], [0.0, 1.0] * 10]).T).tolist()
    [-170.0, 55.0]
    """
    ranks = scipy_stats.rankdata(np.abs(d), axis=0)
    zeros = (d == 0).sum(axis=0)
    sums: Array = (np.sign(d) * (ranks - zeros)).sum(axis=0)
    return sums


def _warn_coarse(p: Array, live: npt.NDArray[np.bool_], n: int, alternative: Alternative) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where the bootstrap's p-value is
    below the smallest a sign-flip test of the ``n`` paired queries can give (``2 /
    2**n``, one-sided ``1 / 2**n``): with so few queries the centred deltas' resampled
    means cannot reach the observed mean, and p is its floor ``1 / (1 + R)`` whatever
    the evidence (two queries, deltas 0.2 and 0.5: p about 1e-4, where the t-test
    gives 0.26 and the exact randomization test 0.5)."""
    floor = (2.0 if alternative == "two-sided" else 1.0) / 2.0**n
    coarse = int((live & (p < floor)).sum())
    if coarse:
        warn_at_caller(
            f"test='bootstrap' gave {coarse} p-value(s) below {floor:.3g}, the smallest a "
            f"sign-flip test of {n} paired queries can give: with so few queries the "
            "resampled means cannot reach the observed one, and the p-value is the "
            "resampling floor whatever the evidence; use test='randomization' (exact for "
            "so few queries) or test='t', or compare on more queries",
            IrmWarning,  # at the user's line, whichever entry point led here
        )


def _pow2_scales(a: Array, b: Array) -> Array:
    """Per column, ``2**-e``, ``e`` the binary exponent of the largest ``|value|`` of
    ``a`` and ``b`` (clipped to +-1022, so that the scale and its inverse are normal
    floats); 1 for a column of zeros.

    >>> import numpy as np
    >>> scale = _pow2_scales(np.array([[3e-300, 1.0]]), np.array([[0.0, -5.0]]))
    >>> (scale * [3e-300, 5.0]).tolist()  # the largest magnitudes, now in [1, 2)
    [1.0045393192371257, 1.25]
    """
    largest = np.maximum(np.abs(a).max(axis=0, initial=0.0), np.abs(b).max(axis=0, initial=0.0))
    _, exponent = np.frexp(largest)  # largest = m * 2**exponent, m in [0.5, 1)
    exponent = np.clip(exponent - 1, -1022, 1022)
    return np.where(largest > 0, np.ldexp(1.0, -exponent), 1.0)


def _rounding_only(a: Array, b: Array, d: Array) -> npt.NDArray[np.bool_]:
    """Per column, whether the deltas ``d = a - b`` differ from their mean only by the
    rounding of the values: each delta within a few units in the last place of its own
    query's values (the values themselves rounded results), so deltas equal but for
    that are constant (effect size NaN, the interval the delta itself, as for deltas
    equal to the bit). Query by query: a query of values 1e200 (its delta 0) does not
    make the deltas 0.1 and -0.04 of the others rounding.

    >>> import numpy as np
    >>> a = np.array([[0.2, 1e200], [0.3, 0.2], [0.4, 0.3]])
    >>> b = np.array([[0.1, 1e200], [0.2, 0.16], [0.3, 0.41]])
    >>> _rounding_only(a, b, a - b).tolist()
    [True, False]
    """
    mean = d.mean(axis=0)
    room = 8.0 * np.finfo(np.float64).eps * (np.abs(a) + np.abs(b) + np.abs(mean))
    only: npt.NDArray[np.bool_] = (np.abs(d - mean) <= room).all(axis=0)
    return only


def paired_stats(
    a: Array,
    b: Array,
    options: CompareOptions,
    higher_is_better: npt.NDArray[np.bool_],
) -> PairedStats:
    """Every statistic of :func:`~polars_irmetrics.compare` for the K columns of ``a - b``.

    Parameters
    ----------
    a, b
        ``n × K`` per-query values: the systems and their baselines, column by column.
    options
        The test, alternative, confidence, resamples and seed (checked already).
    higher_is_better
        Each column's direction (length K, required: no direction is assumed). A query
        is a win where the system is better than the baseline in that direction (a
        lower value, for a lower-is-better metric). The delta, the test (and its
        ``alternative``) and the interval are of ``a - b`` whatever the direction.

    Returns
    -------
    PairedStats

    Examples
    --------
    Four queries; the system wins two, ties one and loses one. The mean delta is
    (0.2 + 0.1 + 0 - 0.1) / 4 = 0.05:

    >>> import numpy as np
    >>> from polars_irmetrics.comparison.options import CompareOptions
    >>> from polars_irmetrics.comparison.paired import paired_stats
    >>> a = np.array([[0.5], [0.4], [0.3], [0.1]])
    >>> b = np.array([[0.3], [0.3], [0.3], [0.2]])
    >>> s = paired_stats(a, b, CompareOptions(), np.array([True]))
    >>> round(float(s.delta[0]), 12), s.wins.tolist(), s.ties.tolist(), s.losses.tolist()
    (0.05, [2], [1], [1])

    Were the values errors (lower is better), the same queries are one win (the 0.1
    below 0.2) and two losses:

    >>> s = paired_stats(a, b, CompareOptions(), np.array([False]))
    >>> round(float(s.delta[0]), 12), s.wins.tolist(), s.ties.tolist(), s.losses.tolist()
    (0.05, [1], [1], [2])
    """
    mean, baseline_mean = exact_means(a), exact_means(b)
    # each column scaled by a power of two to a largest magnitude in [1, 2): the tests
    # and the effect size do not depend on scale, and a product by a power of two is
    # exact, so ordinary values keep every bit while 1e-300's squares no longer vanish
    # (sd 0: p 0, "significant") nor 1e300's overflow (p 1, effect 0); the delta and
    # the interval are scaled back at the end
    scale = _pow2_scales(a, b)
    a, b = a * scale, b * scale
    d = a - b
    n, k = d.shape
    delta = exact_means(d)
    above = (d > 0).sum(axis=0).astype(np.int64)
    ties = (d == 0).sum(axis=0).astype(np.int64)
    below = (d < 0).sum(axis=0).astype(np.int64)
    wins = np.where(higher_is_better, above, below)
    losses = np.where(higher_is_better, below, above)
    # the deltas scaled again, to a largest magnitude in [1, 2): values of 1e200 beside
    # deltas of 0.1 leave deltas of 1e-201 after the values' scale, whose squares vanish
    # (the t-test's variance 0: p 0); ttest_rel(a, b) is ttest_1samp(a - b), and a
    # power of two changes no bit of t
    d_scale = _pow2_scales(d, np.zeros_like(d))
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = (d * d_scale).std(axis=0, ddof=1) / d_scale
        # a spread at the rounding of the values is none: P@10's deltas 0.2 - 0.1 and
        # 0.3 - 0.2 differ in the last bit, and d_z came out 3.6e15 (module doc)
        sd = np.where(_rounding_only(a, b, d), 0.0, sd)
        effect = np.where(sd > 0, delta / np.where(sd > 0, sd, 1.0), np.nan)
    zero = ties == n
    rng = np.random.default_rng(options.seed)
    alternative = options.alternative
    p = np.ones(k)
    live = ~zero
    statistic: Array | None = None  # the mean delta but for the t and Wilcoxon tests
    boot: tuple[Array, Array] | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        t_result = scipy_stats.ttest_1samp(d * d_scale, 0.0, axis=0, alternative=alternative)
        if options.test == "t":
            p = np.where(live, t_result.pvalue, 1.0)
            statistic = np.where(live, t_result.statistic, 0.0)
        elif options.test == "wilcoxon":
            p = _wilcoxon_p(d, live, alternative)
            statistic = signed_rank_sums(d)
        elif options.test == "randomization":
            p = np.where(
                live,
                randomization_p(d, alternative, options.n_resamples, rng, options.progress),
                1.0,
            )
        else:
            boot = bootstrap_means(d, options.n_resamples, rng, options.progress)
            p = np.where(live, _bootstrap_p(boot[0], boot[1], d, alternative), 1.0)
            _warn_coarse(p, live, n, alternative)
        if options.interval == "t":
            interval = t_result.confidence_interval(options.confidence)
            low = np.asarray(interval.low, float) / d_scale
            high = np.asarray(interval.high, float) / d_scale
            low = np.where(sd > 0, low, np.where(alternative == "less", -np.inf, delta))
            high = np.where(sd > 0, high, np.where(alternative == "greater", np.inf, delta))
        else:
            if boot is None:
                boot = bootstrap_means(d, options.n_resamples, rng, options.progress)
            low, high = _percentile(boot[0], options.confidence, alternative)
    return PairedStats(
        n=n,
        mean=mean,
        baseline_mean=baseline_mean,
        delta=delta / scale,
        effect_size=effect,
        statistic=delta / scale if statistic is None else np.asarray(statistic, np.float64),
        ci_low=np.asarray(low, dtype=np.float64) / scale,
        ci_high=np.asarray(high, dtype=np.float64) / scale,
        p_value=np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0),
        wins=wins,
        ties=ties,
        losses=losses,
    )
