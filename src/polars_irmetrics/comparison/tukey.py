"""``tukey_hsd()``: Tukey's honestly significant difference test over all systems.

For each metric, :func:`scipy.stats.tukey_hsd` over the systems' per-query values (one
sample per system, as ranx's ``stat_test="tukey"`` does): every pair's p-value and
simultaneous confidence interval, adjusted for all pairs by the studentized range
distribution (so no further correction applies).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.comparison.api import _check_values, compare_eval_options
from polars_irmetrics.comparison.caller import parsed_as_called, warn_at_caller
from polars_irmetrics.comparison.frame import Runs, per_query_values, refuse_other_tables
from polars_irmetrics.comparison.options import CompareOptions, QuerySet
from polars_irmetrics.comparison.paired import exact_means
from polars_irmetrics.comparison.record import Record, remember
from polars_irmetrics.door.evaluate import Parsed
from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.inputs import FrameInput
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.options import PlanKwargs

if TYPE_CHECKING:
    import scipy.stats as scipy_stats
    from typing_extensions import Unpack
else:
    scipy_stats = LazyModule("scipy.stats")  # imported at the first test (import time)

__all__ = ["tukey_hsd"]


def tukey_hsd(
    runs: Runs,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = None,
    groups: FrameInput | None = None,
    target: FrameInput | None = None,
    system: str = "system",
    alpha: float = 0.05,
    confidence: float = 0.95,
    query_set: QuerySet = "judged",
    **options: Unpack[PlanKwargs],
) -> pl.DataFrame:
    """Tukey's HSD for every pair of systems, per metric.

    Parameters
    ----------
    runs, metrics, qrels, groups, target, system, query_set, **options
        As for :func:`~polars_irmetrics.compare` (``groups=`` and ``target=``: the
        exposure measures' tables, ``ee_loss``, ``awrf``, ``rnd``...).
    alpha
        ``significant`` is ``p_value <= alpha``.
    confidence
        Level of the simultaneous interval ``[ci_low, ci_high]`` of ``delta``.

    Returns
    -------
    pl.DataFrame
        One row per metric and pair (the earlier system is ``baseline``): ``metric``,
        ``system``, ``baseline``, ``n``, ``mean``, ``baseline_mean`` (the bits
        :func:`~polars_irmetrics.evaluate` and :func:`~polars_irmetrics.compare` give,
        whatever the order of the queries, so that an exact tie stays one and the
        report bolds both), ``delta``, ``ci_low``, ``ci_high``, ``p_value`` (scipy's
        ``tukey_hsd``; where no system's per-query values vary, 1 for equal means,
        where scipy gives NaN, and 0 for different ones, with the delta as the interval
        and an ``IrmWarning``), ``significant``, ``higher_is_better`` (the metric's
        direction, which :func:`~polars_irmetrics.report` reads).
        :func:`~polars_irmetrics.report` of this very frame names Tukey's HSD and
        ``alpha`` in its footnote, and plots the per-query deltas of every pair.

    Raises
    ------
    InvalidValueError, QuerySetError, MetricParameterError
        As for :func:`~polars_irmetrics.compare` (``agg=`` is refused: the test reads
        the per-query values).

    Examples
    --------
    Three systems on four queries (a judged table: relevance in the run). ``c``
    finds the relevant document of every query at rank 1, ``a`` of none:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> def run(hits):
    ...     return pl.DataFrame({"query_id": [1, 2, 3, 4], "doc_id": [1, 1, 1, 1],
    ...                          "rank": [1, 1, 1, 1], "relevance": hits})
    >>> runs = {"a": run([0, 0, 0, 0]), "b": run([1, 0, 1, 0]), "c": run([1, 1, 1, 1])}
    >>> out = irm.tukey_hsd(runs, "P@1", qrels=None)
    >>> out.select("system", "baseline", "delta", "significant")
    shape: (3, 4)
    ┌────────┬──────────┬───────┬─────────────┐
    │ system ┆ baseline ┆ delta ┆ significant │
    │ ---    ┆ ---      ┆ ---   ┆ ---         │
    │ str    ┆ str      ┆ f64   ┆ bool        │
    ╞════════╪══════════╪═══════╪═════════════╡
    │ b      ┆ a        ┆ 0.5   ┆ false       │
    │ c      ┆ a        ┆ 1.0   ┆ true        │
    │ c      ┆ b        ┆ 0.5   ┆ false       │
    └────────┴──────────┴───────┴─────────────┘
    """
    # parsed once (below receive the requests); a fix names irm.tukey_hsd
    usable = partial(refuse_other_tables, calls="irm.tukey_hsd")  # before a missing cutoff
    parsed = Parsed(parsed_as_called(metrics, "irm.tukey_hsd", usable))
    plan_options = compare_eval_options(options, parsed, tukey_hsd)
    checked = CompareOptions(alpha=alpha, confidence=confidence, query_set=query_set).checked()
    values = per_query_values(
        runs,
        parsed,
        qrels,
        system=system,
        query_set=checked.query_set,
        options=plan_options,
        groups=groups,
        target=target,
        calls="irm.tukey_hsd",
    )
    _check_values(values)
    k = len(values.systems)
    upper_j, upper_i = np.triu_indices(k, 1)[1], np.triu_indices(k, 1)[0]
    rows: list[pl.DataFrame] = []
    directions = values.directions()
    for m, metric in enumerate(values.metrics):  # one scipy call per metric
        samples = values.values[m].T
        # irm.evaluate's (and compare's) bits in any order of the queries: numpy's
        # pairwise mean may differ in the last bit, and a tie would read as a win
        means = exact_means(values.values[m])
        if np.all(samples == samples[:, :1]):  # no spread in any system: no scipy call
            # (it would divide by a zero variance): equal means differ by exactly 0, p = 1
            # as compare gives; unequal constant means differ without doubt, p = 0
            delta = means[:, None] - means[None, :]
            low = high = delta[upper_j, upper_i]
            statistic = delta
            p = np.where(delta[upper_j, upper_i] == 0, 1.0, 0.0)
            _warn_no_spread(metric, values.values.shape[1], means)
        else:
            # scaled by a power of two to a largest magnitude in [1, 2) (exact; the test
            # does not depend on scale): values of 1e200 squared overflowed to inf (the
            # interval [-inf, inf], numpy's overflow warnings), and scaled back after
            scale = _pow2_scale(samples)
            result = scipy_stats.tukey_hsd(*(samples * scale))
            interval = result.confidence_interval(confidence)
            low = interval.low[upper_j, upper_i] / scale
            high = interval.high[upper_j, upper_i] / scale
            statistic = result.statistic / scale
            p = result.pvalue[upper_j, upper_i]
        rows.append(
            pl.DataFrame(
                {
                    "metric": [metric] * len(p),
                    "system": [values.systems[j] for j in upper_j],
                    "baseline": [values.systems[i] for i in upper_i],
                    "n": np.full(len(p), values.values.shape[1], dtype=np.int64),
                    "mean": means[upper_j],
                    "baseline_mean": means[upper_i],
                    "delta": statistic[upper_j, upper_i],
                    "ci_low": low,
                    "ci_high": high,
                    "p_value": p,
                    "significant": p <= alpha,
                    "higher_is_better": pl.Series([directions[m]] * len(p), dtype=pl.Boolean),
                }
            )
        )
    result = pl.concat(rows)
    # what a report's footnote names (Tukey's HSD, alpha), and the per-query values of
    # its plots (every pair, the earlier system the baseline: compare's pairs)
    return remember(result, Record(checked, values, plan_options.query_id, "tukey_hsd"))


def _pow2_scale(samples: npt.NDArray[np.float64]) -> float:
    """``2**-e``, ``e`` the binary exponent of the largest ``|value|`` (clipped to
    +-1022); 1 for values all 0.

    >>> _pow2_scale(np.array([[3.0, -5.0], [1e-300, 0.0]]))
    0.25
    """
    largest = float(np.abs(samples).max(initial=0.0))
    if largest == 0:
        return 1.0
    exponent = int(np.clip(np.frexp(largest)[1] - 1, -1022, 1022))
    return float(np.ldexp(1.0, -exponent))


def _warn_no_spread(metric: str, n: int, means: npt.NDArray[np.float64]) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where no system's per-query
    values of ``metric`` vary: scipy's ``tukey_hsd`` has no variance to divide by (its
    p-value is NaN), and :func:`tukey_hsd` gives each pair p 1 where the means are
    equal and 0 where they differ, with the delta itself as its interval: a certainty
    ``n`` queries without spread cannot give (as ``ab_test`` warns of its arms)."""
    shown = ", ".join(f"{float(m):.6g}" for m in means)
    warn_at_caller(
        f"tukey_hsd of {metric!r}: no system's per-query values vary (each system has "
        f"one value on all {n} queries: {shown}), so there is no variance to test "
        "against; each pair's p_value is 1 where the means are equal (scipy's tukey_hsd "
        "gives NaN) and 0 where they differ (as scipy's), and its interval the delta "
        "itself, resting on no spread, not on evidence: compare on more queries before "
        "reading it",
        IrmWarning,
    )
