"""Do two evaluations order the systems alike? :func:`system_agreement`.

Two per-query evaluation results of the same systems (two metrics, two judgment sets,
an original and a cheaper pipeline), each ``system, query_id, <value>``: the systems'
means are correlated (Kendall's τ-b, Yilmaz et al.'s τ_AP with ``a`` as the truth,
Spearman's ρ or Pearson's r), and every pair of systems is checked for a *swap* (the
two results order the pair oppositely) and a *significant swap* (a swap whose
difference :func:`~polars_irmetrics.compare`'s paired test finds significant in either
result, after its correction over every pair; Voorhees & Buckley's measure of how
often a conclusion flips). The statistics are vectorised over all pairs at once
(:func:`~polars_irmetrics.comparison.paired.paired_stats`).
"""

from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.comparison.caller import warn_at_caller
from polars_irmetrics.comparison.options import CompareOptions, Test
from polars_irmetrics.comparison.paired import exact_means, paired_stats
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    IrmError,
    IrmWarning,
    QuerySetError,
)
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import FLOAT64_EXACT, id_kinds_error, kind_of
from polars_irmetrics.metrics.registry import parse_metric
from polars_irmetrics.metrics.requests import refuse_own_summaries
from polars_irmetrics.stats.multitest import Correction, adjust, check_correction

scipy_stats = LazyModule("scipy.stats")

__all__ = [
    "METHODS",
    "matched",
    "mean_by_system",
    "orientation",
    "swapped_pairs",
    "system_agreement",
]

Method = Literal["kendall", "tau_ap", "spearman", "pearson"]
#: The correlations of :func:`system_agreement`.
METHODS: tuple[str, ...] = ("kendall", "tau_ap", "spearman", "pearson")
Array = npt.NDArray[np.float64]


def system_agreement(
    a: FrameInput,
    b: FrameInput,
    method: Method = "kendall",
    *,
    metric: str | None = None,
    metric_b: str | None = None,
    higher_is_better: bool | None = None,
    higher_is_better_b: bool | None = None,
    test: Test = "t",
    alpha: float = 0.05,
    correction: Correction = "holm",
    n_resamples: int = 10_000,
    seed: int | None = 0,
    per_pair: bool = False,
    ties: Literal["a", "b"] = "a",
    system: str = "system",
    query_id: str = "query_id",
) -> pl.DataFrame:
    """How alike two per-query evaluation results order the same systems.

    Parameters
    ----------
    a, b
        Per-query results, one row per ``(system, query_id)`` with a value column (e.g.
        ``irm.evaluate(runs, ["ndcg@10"], qrels=..., systems="system",
        per_query=True)``, once with each judgment set). ``a`` is the truth of
        ``tau_ap``. Every system must be in both and have a value on each of its
        result's queries.
    method
        ``"kendall"`` (τ-b of the means, :func:`scipy.stats.kendalltau`), ``"tau_ap"``
        (Yilmaz et al.'s AP correlation of ``b``'s order against ``a``'s, trectools'
        ``get_correlation(a_sorted, b_sorted, "tau_ap")`` where no means are equal;
        equal means are tie groups, as ``ties=`` says), ``"spearman"``
        (:func:`scipy.stats.spearmanr`) or ``"pearson"`` (:func:`scipy.stats.pearsonr`
        of the means; trectools' ``"pearson"`` correlates the ranks instead, which is
        Spearman's ρ).
        Not read with ``per_pair=True`` (refused there but for the default).
    metric, metric_b
        The value columns of ``a`` and ``b`` (default: the one column besides
        ``system`` and ``query_id``; ``metric_b`` defaults to ``metric``).
    higher_is_better, higher_is_better_b
        Which way each result's value is better: by default the declared direction of
        the metric its column names (``logloss``, ``ee_disparity``, ``rnd``: lower). A
        column that names no metric (``value``; ``rnd@10``, which does not parse:
        ``rnd`` takes no cutoff), or a metric with no better direction (``num_ret``;
        ``rbo(kind='res')@10``, RBO's uncertainty, and ``rbo(kind='max')@10``), has no
        direction to read: where
        the result depends on it, it is refused (``InvalidValueError``) unless given
        here; that is against a column of a direction or of another name, and for
        ``tau_ap``, which weighs the top. One such column on both sides (the same name)
        is read alike, the way immaterial to Kendall's, Spearman's and Pearson's
        correlations, the swaps and the pairs (``per_pair``). ``b``'s column of the same
        name as ``a``'s takes ``higher_is_better`` unless ``higher_is_better_b`` is
        given, whether or not the name is a metric's (the same column is read one way
        on both sides); a column of another name keeps its metric's direction unless
        ``higher_is_better_b`` is given. A lower-is-better result is ordered best first
        like any other: its means are negated before the orderings, the swaps and the
        correlations (``auc`` and ``logloss`` that rank the systems alike correlate at
        +1).
    test, alpha, correction
        :func:`~polars_irmetrics.compare`'s paired test (``"t"``, ``"wilcoxon"``,
        ``"randomization"``, ``"bootstrap"``), level and correction over the pairs
        of systems of each result.
    n_resamples, seed
        The randomization and bootstrap tests' resamples and random seed, as
        :func:`~polars_irmetrics.compare` takes them (the same seed gives the same
        p-values, by default 0; ``None``: fresh draws on each call).
    ties
        ``tau_ap``'s treatment of equal means (Urbano & Marrero, ICTIR 2017; ``ircor``'s
        ``tauAP_a`` and ``tauAP_b``), never broken by the systems' names (trectools'
        order, which made the value depend on them): ``"a"`` (``a`` is the truth,
        without ties: ``b``'s equal means are averaged over their orders; null where
        ``a`` has equal means) or ``"b"`` (ties on both sides: the mean of the two
        directions). Read by ``tau_ap`` only (refused with another method but for the
        default).
    per_pair
        ``True``: one row per pair of systems (``system``, ``other``, each result's
        mean difference and adjusted p-value, ``swapped``, ``significant_swap``)
        instead of the summary.
    system, query_id
        Column names.

    Returns
    -------
    pl.DataFrame
        One row: ``method``, ``systems`` (their number), ``correlation`` (null where
        undefined: one result's means all equal, for every method but ``tau_ap`` with
        ``ties="a"``, which averages ``b``'s equal means over their orders, 0 where they
        are all equal; ``tau_ap`` with ``ties="a"`` where ``a`` has equal means),
        ``p_value``
        (scipy's; null for ``tau_ap``, which has none, where the correlation is null,
        and where scipy gives none: ``spearman`` of two systems; a null but ``tau_ap``'s
        p-value comes with an :class:`~polars_irmetrics.errors.IrmWarning` naming its
        cause and the fix), ``pairs``, ``swaps``
        (pairs the
        two results order oppositely; a tie in one of them is no swap),
        ``significant_a``/``significant_b`` (pairs significant in each result) and
        ``significant_swaps`` (swaps significant in either).

    Raises
    ------
    ColumnNotFoundError
        A column missing from ``a`` or ``b``.
    ColumnTypeError
        A value column that is not numeric (a String column of numbers: cast it); a
        system column of lists or structs; systems that are integers in one result and
        strings in the other (cast one side).
    InvalidValueError
        A bad ``method``, ``alpha`` or ``correction``; ``metric``/``metric_b`` naming
        the system or query-id column, or ``system`` and ``query_id`` naming one
        column; fewer than two systems; a system twice on one query; a null system
        name or query id; a null, NaN or infinite value; a system without a value on
        one of its result's queries; a column of no known direction
        (``higher_is_better``).
    MetricParameterError
        A value column named after a metric summarized its own way (``gm_map``, the
        geometric mean of the per-query AP): the systems are ordered by the mean of the
        values, which is another metric's (``map``).
    QuerySetError
        Systems in one result and not the other; a result of fewer than two queries
        (each pair of systems is compared by a paired test over the queries, as
        :func:`~polars_irmetrics.compare` refuses one query).

    Examples
    --------
    Three systems on three queries: ``b`` swaps the first two systems' means.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> a = pl.DataFrame({"system": ["x"] * 3 + ["y"] * 3 + ["z"] * 3,
    ...                   "query_id": ["q1", "q2", "q3"] * 3,
    ...                   "ndcg": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.1, 0.2, 0.1]})
    >>> b = a.with_columns(pl.when(pl.col("system") == "x").then(pl.col("ndcg") - 0.35)
    ...                    .otherwise(pl.col("ndcg")))
    >>> out = irm.system_agreement(a, b)
    >>> out.select("systems", "correlation", "pairs", "swaps")
    shape: (1, 4)
    ┌─────────┬─────────────┬───────┬───────┐
    │ systems ┆ correlation ┆ pairs ┆ swaps │
    │ ---     ┆ ---         ┆ ---   ┆ ---   │
    │ i64     ┆ f64         ┆ i64   ┆ i64   │
    ╞═════════╪═════════════╪═══════╪═══════╡
    │ 3       ┆ 0.333333    ┆ 3     ┆ 1     │
    └─────────┴─────────────┴───────┴───────┘
    """
    if method not in METHODS:
        raise InvalidValueError(
            f"method={method!r} is not a correlation; choose one of "
            + ", ".join(repr(m) for m in METHODS)
        )
    if ties not in ("a", "b"):
        raise InvalidValueError(
            f"ties={ties!r} is not a treatment of equal means; choose 'a' (a is the truth, "
            "b's ties averaged) or 'b' (ties on both sides)"
        )
    if ties != "a" and method != "tau_ap":
        raise InvalidValueError(
            f"ties={ties!r} is read by method='tau_ap' only (Kendall's tau-b, Spearman's "
            f"and Pearson's correlations count equal means as ties); drop ties= or pass "
            "method='tau_ap'"
        )
    if per_pair and method != "kendall":
        raise InvalidValueError(
            f"method={method!r} is not read with per_pair=True: the rows of the pairs hold "
            "each result's mean differences, p-values and swaps, no correlation; drop "
            "method=, or pass per_pair=False for the correlation"
        )
    options = CompareOptions(
        test=test,
        alpha=alpha,
        correction=check_correction(correction),
        n_resamples=n_resamples,
        seed=seed,
    )
    options = options.checked()
    calls = "irm.system_agreement"
    names, values_a, column_a = _matrix(a, "a", metric, system, query_id, calls)
    names_b, values_b, column_b = _matrix(b, "b", metric_b or metric, system, query_id, calls)
    sign_a, sign_b = orientation(
        column_a,
        column_b,
        higher_is_better,
        higher_is_better_b,
        top=method == "tau_ap" and not per_pair,
    )
    values_a, values_b = sign_a * values_a, sign_b * values_b
    order_b = matched(names, names_b, system)
    if order_b is None:
        raise QuerySetError(_systems_apart(names, names_b, system))
    values_b = values_b[:, order_b]
    n = len(names)
    # exact: systems of the same values in another query order tie (no swap)
    mean_a, mean_b = exact_means(values_a), exact_means(values_b)
    left, right, swapped = swapped_pairs(mean_a, mean_b)
    diff_a, diff_b = mean_a[left] - mean_a[right], mean_b[left] - mean_b[right]
    adjusted = []
    # the values are oriented (negated where lower is better): higher is better in each
    oriented = np.ones(len(left), dtype=bool)
    for values in (values_a, values_b):  # two results, not a loop over systems
        stats = paired_stats(values[:, left], values[:, right], options, oriented)
        adjusted.append(adjust(stats.p_value, options.correction))
    sig_a, sig_b = adjusted[0] <= alpha, adjusted[1] <= alpha
    significant_swap = swapped & (sig_a | sig_b)
    if per_pair:  # the deltas as the values read (not negated)
        return pl.DataFrame(
            {
                "system": names.gather(left),
                "other": names.gather(right),
                # + 0.0: equal means differ by 0.0, not by the -0.0 a lower-is-better
                # sign turns it into
                "delta_a": sign_a * diff_a + 0.0,
                "delta_b": sign_b * diff_b + 0.0,
                "p_adjusted_a": adjusted[0],
                "p_adjusted_b": adjusted[1],
                "swapped": swapped,
                "significant_swap": significant_swap,
            },
        )
    correlation, p_value = _correlation(method, mean_a, mean_b, ties)
    if correlation is None or (p_value is None and method != "tau_ap"):
        warn_at_caller(
            _null_reason(
                method, names, mean_a, mean_b, (column_a, column_b), (sign_a, sign_b), ties
            ),
            IrmWarning,
        )
    return pl.DataFrame(
        {
            "method": [method],
            "systems": [n],
            "correlation": [correlation],
            "p_value": [p_value],
            "pairs": [len(left)],
            "swaps": [int(swapped.sum())],
            "significant_a": [int(sig_a.sum())],
            "significant_b": [int(sig_b.sum())],
            "significant_swaps": [int(significant_swap.sum())],
        },
        schema_overrides={
            "correlation": pl.Float64,
            "p_value": pl.Float64,
            "systems": pl.Int64,
            "pairs": pl.Int64,
        },
    )


def swapped_pairs(
    mean_a: Array, mean_b: Array
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """Every pair of systems ``(left[i], right[i])``, ``left < right``, and whether the
    two results order it oppositely (a *swap*): the means' differences have opposite
    signs. A tie in either result (equal means) is no swap, however names would break
    it. The one count of swaps, of :func:`system_agreement` and
    :func:`~polars_irmetrics.comparison.plot.plot_swaps`.

    Examples
    --------
    ``x`` and ``y`` tie in ``a`` and ``y`` is ahead in ``b``: no swap; ``z`` swaps
    with both in ``b``:

    >>> import numpy as np
    >>> left, right, swapped = swapped_pairs(np.array([0.5, 0.5, 0.1]),
    ...                                      np.array([0.4, 0.6, 0.9]))
    >>> [(int(i), int(j)) for i, j in zip(left[swapped], right[swapped])]
    [(0, 2), (1, 2)]
    """
    left, right = np.triu_indices(len(mean_a), k=1)
    diff_a, diff_b = mean_a[left] - mean_a[right], mean_b[left] - mean_b[right]
    return left, right, np.sign(diff_a) * np.sign(diff_b) < 0


def _correlation(
    method: str, mean_a: Array, mean_b: Array, ties: str = "a"
) -> tuple[float | None, float | None]:
    """The correlation and its p-value; ``None`` where undefined: one side's means all
    equal (no order), or scipy's NaN (Spearman's p-value of two systems).

    ``tau_ap`` of ``ties='a'`` reads ``b``'s equal means as tie groups averaged over
    their orders, so ``b``'s means all equal give that average, 0 (``ircor``'s
    ``tauAP_a``, and ``tau_ap@k`` of a run that ties every shared document), not null.

    >>> _correlation("tau_ap", np.array([0.3, 0.2, 0.1]), np.array([0.5, 0.5, 0.5]))
    (0.0, None)
    """
    if np.all(mean_a == mean_a[0]):
        return None, None
    if method == "tau_ap" and ties == "a":
        return _tau_ap(mean_a, mean_b, ties), None
    if np.all(mean_b == mean_b[0]):
        return None, None
    if method == "tau_ap":
        return _tau_ap(mean_a, mean_b, ties), None
    with warnings.catch_warnings():  # a constant input: scipy's nan, null here
        warnings.simplefilter("ignore")
        if method == "kendall":
            result = scipy_stats.kendalltau(mean_a, mean_b)
        elif method == "spearman":
            result = scipy_stats.spearmanr(mean_a, mean_b)
        else:
            result = scipy_stats.pearsonr(mean_a, mean_b)
    statistic, p_value = float(result.statistic), float(result.pvalue)
    if math.isnan(statistic):
        return None, None
    return statistic, None if math.isnan(p_value) else p_value


def _null_reason(
    method: str,
    names: pl.Series,
    mean_a: Array,
    mean_b: Array,
    columns: tuple[str, str],
    signs: tuple[float, float],
    ties: str = "a",
) -> str:
    """Why :func:`_correlation` left the correlation (or its p-value) null, and what to
    do: one result's means all equal (no order), ``tau_ap`` of ``ties='a'`` against a
    tied ``a`` (the truth has no ties), or Spearman's p-value of two systems. ``means``
    are the signed means (lower-is-better negated): the values shown are as read.

    >>> names = pl.Series(["x", "y", "z"])
    >>> _null_reason("kendall", names, np.array([0.3, 0.2, 0.1]), np.array([0.5, 0.5, 0.5]),
    ...              ("ndcg", "ndcg"), (1.0, 1.0))[:72]
    "correlation is null: every system's mean 'ndcg' in b is 0.5 (3 systems),"
    """
    for side, means, column, sign in (
        ("a", mean_a, columns[0], signs[0]),
        ("b", mean_b, columns[1], signs[1]),
    ):
        # tau_ap of ties='a' averages b's equal means over their orders: b's all equal
        # is no reason for its null
        if np.all(means == means[0]) and not (method == "tau_ap" and ties == "a" and side == "b"):
            return (
                f"correlation is null: every system's mean {column!r} in {side} is "
                f"{sign * means[0] + 0.0:.6g} ({len(means)} systems), so {side} orders no "
                f"system and {method!r} has nothing to correlate; compare results that "
                "separate the systems (another metric, more queries or judgments)"
            )
    if method == "tau_ap":
        left, right = next(
            (int(i), int(j))
            for i, j in zip(*np.triu_indices(len(mean_a), k=1), strict=True)
            if mean_a[i] == mean_a[j]
        )
        return (
            f"correlation is null: systems {names[left]!r} and {names[right]!r} have the "
            f"same mean {columns[0]!r} in a ({signs[0] * mean_a[left] + 0.0:.6g}), and "
            "method='tau_ap' with ties='a' (the default) reads a as the truth, which has no "
            "ties; pass ties='b', which reads ties on both sides"
        )
    return (
        f"p_value is null: scipy's {method} test of {len(mean_a)} systems gives no "
        "p-value (NaN); the correlation stands, but a test needs three systems or more"
    )


def _tau_ap(truth: Array, compared: Array, ties: str) -> float | None:
    """τ_AP of ``compared``'s order against ``truth``'s (higher first), equal values tie
    groups as Urbano & Marrero treat them (``ircor``'s ``tauAP_a``, ``tauAP_b``): ``p``
    a system's group's first rank (1-based), ``t`` its size, and a pair *above* a
    system one higher on both sides.

    ``"a"``: ``2/(n-1) sum_i (C(i) S(p_i, t_i) + W(p_i, t_i)) - 1`` over ``compared``'s
    groups, ``C(i)`` the systems above ``i``, ``S(p, t) = (1/t) sum_{m=1}^{t} 1/(p + m -
    2)``, ``W(p, t) = 1/(2t) sum_{k=1}^{t-1} k/(p + k - 1)``: Yilmaz's τ_AP without ties,
    its mean over the orders of ``compared``'s ties; ``None`` where ``truth`` has ties.
    ``"b"``: the mean of the two directions, each ``2/N' sum_{i: p_i > 1} C(i)/(p_i -
    1) - 1`` over the ``N'`` systems below its side's first group.

    >>> _tau_ap(np.array([3.0, 2.0, 1.0]), np.array([2.0, 1.0, 1.0]), "a")
    0.75
    >>> _tau_ap(np.array([3.0, 2.0, 1.0]), np.array([2.0, 3.0, 1.0]), "a")
    0.0
    """
    n = len(truth)
    above = (compared[None, :] > compared[:, None]) & (truth[None, :] > truth[:, None])
    count = above.sum(axis=1).astype(np.float64)  # C(i): row i, the systems above it
    if ties == "a":
        if len(np.unique(truth)) < n:
            return None
        first = (compared[None, :] > compared[:, None]).sum(axis=1) + 1
        size = (compared[None, :] == compared[:, None]).sum(axis=1)
        total = 0.0
        for p, t, c in zip(first.tolist(), size.tolist(), count.tolist(), strict=True):
            if p > 1:
                total += c * math.fsum(1.0 / m for m in range(p - 1, p + t - 1)) / t
            total += math.fsum(k / (p + k - 1) for k in range(1, t)) / (2 * t)
        return float(2.0 / (n - 1) * total - 1.0)
    halves = []
    for side in (compared, truth):
        first = (side[None, :] > side[:, None]).sum(axis=1) + 1
        below = first > 1
        terms = count[below] / (first[below] - 1)
        halves.append(2.0 / below.sum() * math.fsum(terms.tolist()) - 1.0)
    return float((halves[0] + halves[1]) / 2.0)


def mean_by_system(
    frame: FrameInput, side: str, metric: str | None, system: str, query_id: str, calls: str
) -> tuple[pl.Series, Array, str]:
    """The systems (sorted), their means over queries (as the values read: not negated;
    :func:`orientation` gives the signs) and the value column's name, checked as
    :func:`system_agreement` checks its inputs (one query is enough for a mean;
    ``calls``: the entry point a refusal names)."""
    names, values, column = _matrix(frame, side, metric, system, query_id, calls, paired=False)
    return names, exact_means(values), column


def orientation(
    column_a: str,
    column_b: str,
    higher_is_better: bool | None,
    higher_is_better_b: bool | None,
    *,
    top: bool,
) -> tuple[float, float]:
    """The signs of ``a``'s and ``b``'s values (``-1.0`` where lower is better), one
    reading for :func:`system_agreement` and
    :func:`~polars_irmetrics.comparison.plot.plot_swaps`: each side's :func:`direction`;
    ``b``'s column of ``a``'s name takes ``higher_is_better`` unless
    ``higher_is_better_b`` is given, whether or not the name is a metric's; one column
    of no known direction on both sides (the same name) is read alike, ``(1.0, 1.0)``,
    whichever way, unless ``top`` (the result weighs which system is best: ``tau_ap``,
    the slope chart's best on top), where it is refused naming the argument to give.

    Examples
    --------
    >>> orientation("logloss", "auc", None, None, top=False)
    (-1.0, 1.0)
    >>> orientation("value", "value", False, None, top=True)
    (-1.0, -1.0)
    >>> orientation("value", "value", None, None, top=False)
    (1.0, 1.0)
    >>> orientation("ndcg", "ndcg", False, None, top=True)
    (-1.0, -1.0)
    """
    given_b = _inherited(higher_is_better_b, higher_is_better, column_a, column_b)
    if _unoriented(column_a, higher_is_better) and _unoriented(column_b, given_b):
        # one quantity of no known direction on both sides: read alike, whichever way
        # (refused where the way changes the result: the top)
        if column_a != column_b or top:
            direction(column_a, higher_is_better, "a")  # raises, naming the argument
        return 1.0, 1.0
    sign_a = 1.0 if direction(column_a, higher_is_better, "a") else -1.0
    sign_b = 1.0 if direction(column_b, given_b, "b") else -1.0
    return sign_a, sign_b


def direction(
    column: str, given: bool | None, side: str = "a", parameter: str | None = None
) -> bool:
    """Whether higher values of ``column`` are better: ``given``, else the declared
    direction of the metric the column names (a parameter's own included). A column
    that names no metric, or a metric with no better direction, is refused: reading it
    as higher-is-better would order a lower-is-better quantity worst first without a
    word (``side`` names the result, ``parameter`` the argument that says its direction:
    by default ``higher_is_better`` for ``a``, ``higher_is_better_b`` for ``b``).

    Examples
    --------
    >>> direction("logloss", None), direction("ndcg@10", None), direction("rnd", None)
    (False, True, False)
    >>> direction("rbo@10", None), direction("rbo(kind='res')@10", False)
    (True, False)
    >>> direction("logloss", True), direction("value", False)
    (True, False)
    >>> direction("xyzzy", None, "b")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'xyzzy' of b names no metric (unknown metric 'xyzzy'. See irm.list_metrics() for every metric and its aliases.), so which way is better is unknown: say it with higher_is_better_b=True (higher values are better) or higher_is_better_b=False
    """  # noqa: E501
    if parameter is None:
        parameter = "higher_is_better" if side == "a" else f"higher_is_better_{side}"
    if given is not None:
        if not isinstance(given, bool):
            raise InvalidValueError(
                f"{parameter} must be True, False or None (the metric's own), got {given!r}"
            )
        return given
    try:
        declared = parse_metric(column).higher_is_better  # a parameter's own included
    except IrmError as error:
        raise InvalidValueError(
            f"column {column!r} of {side} names no metric ({error}), so which way is better "
            f"is unknown: say it with {parameter}=True (higher values are better) or "
            f"{parameter}=False"
        ) from None
    if declared is None:
        raise InvalidValueError(
            f"metric {column!r} of {side} has no better direction (neither a higher nor a "
            "lower value is better), so the systems have no best-first order: say which way "
            f"to order them with {parameter}=True or {parameter}=False"
        )
    return declared


def _unoriented(column: str, given: bool | None) -> bool:
    """Whether ``column`` has no direction: none given, and it names no metric or a
    metric with no better direction."""
    if given is not None:
        return False
    try:
        return parse_metric(column).higher_is_better is None
    except IrmError:
        return True


def _inherited(
    given_b: bool | None, given_a: bool | None, column_a: str, column_b: str
) -> bool | None:
    """``b``'s stated direction: ``higher_is_better_b``, else ``higher_is_better`` where
    ``b``'s column is ``a``'s (the same name), whether or not the column names a metric
    of a direction (the same quantity on both sides, read one way: a metric's own
    direction for ``b`` against ``a``'s stated one would read it two ways); ``None``
    otherwise (the declared direction of the metric ``b``'s column names)."""
    if given_b is not None or column_b != column_a:
        return given_b
    return given_a


def _matrix(
    frame: FrameInput,
    side: str,
    metric: str | None,
    system: str,
    query_id: str,
    calls: str,
    *,
    paired: bool = True,
) -> tuple[pl.Series, Array, str]:
    """The systems (sorted), the ``queries × systems`` values of one result and the
    value column's name. ``paired``: the values are tested pair by pair of systems, so
    fewer than two queries are refused (the means alone need one). A column named
    after a metric summarized its own way (``gm_map``, the geometric mean of its
    per-query AP) is refused (``calls`` names the entry point): the systems are ordered
    by the mean of the values, which is another metric's (``map``)."""
    if system == query_id:  # one column read as both: the values would be its pivot
        raise InvalidValueError(
            f"system={system!r} and query_id={query_id!r} name one column of {side}; each "
            "row needs a system name and a query id in columns of their own: name them "
            "with system= and query_id="
        )
    polars_frame = as_polars(frame, side)
    data = polars_frame.collect() if isinstance(polars_frame, pl.LazyFrame) else polars_frame
    for column in (system, query_id):
        if column not in data.columns:
            raise ColumnNotFoundError(
                f"column {column!r} not found in {side} (its columns: "
                f"{', '.join(repr(c) for c in data.columns)}); name them with system= and "
                "query_id="
            )
    kind = data.schema[system]
    if kind.is_nested():  # a list or struct of names: no text cast names one system
        raise ColumnTypeError(
            f"column {system!r} of {side} has dtype {kind}; each row needs one system name "
            "(a string or an integer): give each row its system's name, e.g. "
            f"pl.col({system!r}).list.first() for a list of one name"
        )
    if metric is None:
        rest = [c for c in data.columns if c not in (system, query_id)]
        if len(rest) != 1:
            raise InvalidValueError(
                f"{side} has {len(rest)} value columns ({', '.join(repr(c) for c in rest)}); "
                "name the one to compare with metric= (and metric_b= for b)"
            )
        metric = rest[0]
    if metric not in data.columns:
        raise ColumnNotFoundError(
            f"column {metric!r} not found in {side} (its columns: "
            f"{', '.join(repr(c) for c in data.columns)}); name it with metric= or metric_b="
        )
    for key, role, argument in ((system, "system", "system"), (query_id, "query-id", "query_id")):
        if metric == key:  # selected twice below: polars' duplicate-name error
            raise InvalidValueError(
                f"metric={metric!r} of {side} is its {role} column ({argument}={key!r}), not "
                "a value column; name the value column with metric= (and metric_b= for b)"
            )
    try:
        request = parse_metric(metric)
    except IrmError:  # a column of no metric's name: its values' mean is all it has
        request = None
    if request is not None:
        refuse_own_summaries([(metric, request)], calls=calls)
    dtype = data.schema[metric]
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        raise ColumnTypeError(
            f"column {metric!r} of {side} has dtype {dtype}; its values are averaged and "
            f"tested as numbers: cast it, e.g. pl.col({metric!r}).cast(pl.Float64)"
        )
    for column, what in ((system, "a system name"), (query_id, "a query id")):
        nulls = data[column].null_count()
        if nulls:
            raise InvalidValueError(
                f"column {column!r} of {side} has {nulls} null value"
                f"{'' if nulls == 1 else 's'}; every row needs {what}: fill or drop those rows"
            )
    if dtype.is_integer():  # the means and tests read float64, exact to 2**53
        beyond = data.filter((pl.col(metric) > FLOAT64_EXACT) | (pl.col(metric) < -FLOAT64_EXACT))
        if beyond.height:
            raise InvalidValueError(
                f"{side} has {metric!r} {beyond[metric][0]} for system {beyond[system][0]!r} "
                f"on query {beyond[query_id][0]!r}, an integer beyond 2**53 = "
                f"{FLOAT64_EXACT} in magnitude, which the means and tests (float64) cannot "
                "hold: integers that differ by less than float64's spacing there would read "
                "as equal, their systems as tied; subtract a common offset, or cast the "
                f"column to accept the rounding, e.g. pl.col({metric!r}).cast(pl.Float64)"
            )
    if isinstance(dtype, pl.Decimal):  # read as float64 too: a decimal it rounds
        value = pl.col(metric)
        back = value.cast(pl.Float64).cast(dtype, strict=False)
        rounded = data.filter(value.is_not_null() & (back != value).fill_null(True))
        if rounded.height:
            raise InvalidValueError(
                f"{side} has {metric!r} {rounded[metric][0]} for system "
                f"{rounded[system][0]!r} on query {rounded[query_id][0]!r}, a decimal that "
                "float64 (the means and tests) rounds: decimals that differ by less than "
                "float64's spacing there would read as equal, their systems as tied; "
                "subtract a common offset, or cast the column to accept the rounding, e.g. "
                f"pl.col({metric!r}).cast(pl.Float64)"
            )
    # the system column keeps its dtype (integer systems 2 and 10 sort as numbers, and
    # come back as integers); the pivot below reads their text
    data = data.select(system, query_id, pl.col(metric).cast(pl.Float64))
    bad = data.filter(pl.col(metric).is_null() | pl.col(metric).is_nan())
    if bad.height:
        raise InvalidValueError(
            f"{side} has a null or NaN {metric!r} for system {bad[system][0]!r} on query "
            f"{bad[query_id][0]!r}; every system needs a value on every query"
        )
    infinite = data.filter(pl.col(metric).is_infinite())
    if infinite.height:
        raise InvalidValueError(
            f"{side} has an infinite {metric!r} ({infinite[metric][0]}) for system "
            f"{infinite[system][0]!r} on query {infinite[query_id][0]!r}; every system needs "
            "a finite value on every query: fix or recompute that value"
        )
    twice = data.filter(pl.struct(system, query_id).is_duplicated())
    if twice.height:
        raise InvalidValueError(
            f"{side} lists system {twice[system][0]!r} twice on query "
            f"{twice[query_id][0]!r}; one row per (system, query)"
        )
    names = data[system].unique().sort()
    texts = names.cast(pl.String).to_list()
    if len(names) < 2:
        raise InvalidValueError(f"{side} holds {len(names)} system; agreement needs two or more")
    if query_id in texts:  # each system becomes a column beside the query ids
        raise InvalidValueError(
            f"system {query_id!r} of {side} is named like its query-id column; rename that "
            f"system, e.g. pl.col({system!r}).replace({query_id!r}, {query_id + '_system'!r})"
        )
    # the queries in order (the pivot keeps them as they first appear): the means and
    # tests add them in one order however the rows come
    wide = (
        data.with_columns(pl.col(system).cast(pl.String))
        .pivot(on=system, index=query_id, values=metric)
        .sort(query_id)
    )
    if paired and wide.height < 2:
        shown = f" ({wide[query_id][0]!r})" if wide.height else ""
        raise QuerySetError(
            f"{side} holds {wide.height} query{shown}: each pair of systems is compared by "
            "a paired test over the queries, which needs at least two queries that every "
            "system is scored on; evaluate the systems on more queries"
        )
    wide = wide.select(texts)
    if wide.null_count().sum_horizontal().item():
        column = next(n for n, c in zip(names, texts, strict=True) if wide[c].null_count())
        raise InvalidValueError(
            f"system {column!r} has no value in {side} on some of its queries; evaluate "
            "every system on the same queries (systems= scores an unretrieved query 0)"
        )
    return names, wide.to_numpy().astype(np.float64), metric


def _systems_apart(names: pl.Series, names_b: pl.Series, system: str) -> str:
    """The refusal of results that do not hold the same systems: the first one a result
    lacks, and where the two system columns differ in dtype (Int64 beside Float64, whose
    ``1`` and ``1.0`` are matched by their text and differ), both dtypes and the cast
    that lines them up.

    >>> print(_systems_apart(pl.Series([1, 2]), pl.Series([1.0, 2.0]), "system"))
    ... # doctest: +NORMALIZE_WHITESPACE
    system 1 is in one result and not the other; a and b must evaluate the same systems
    (column 'system' is Int64 in a but Float64 in b, and two dtypes are matched by their
    text: '1' beside '1.0'): give both one dtype, e.g. pl.col('system').cast(pl.Int64) on both
    """
    first = _unmatched(names, names_b)
    text = (
        f"system {first!r} is in one result and not the other; a and b must evaluate the "
        "same systems"
    )
    if names.dtype == names_b.dtype == pl.String:
        hint = _spelt_apart(names, names_b, system)
        return text if hint is None else f"{text}. {hint}"
    if names.dtype == names_b.dtype:
        return text
    floats = names.dtype.is_float() or names_b.dtype.is_float()
    to = "pl.Int64" if floats else "pl.String"
    return (
        f"{text} (column {system!r} is {names.dtype} in a but {names_b.dtype} in b, and two "
        f"dtypes are matched by their text: {names.cast(pl.String)[0]!r} beside "
        f"{names_b.cast(pl.String)[0]!r}): give both one dtype, e.g. "
        f"pl.col({system!r}).cast({to}) on both"
    )


def _spelt_apart(names: pl.Series, names_b: pl.Series, system: str) -> str | None:
    """The spelling hint of two results' system names (both text) that match only once
    case, the spaces around them, separators, a prefix or leading zeros are ignored
    (:func:`~polars_irmetrics.ground.spelling.spelling_hint`, as the runs' and the
    judgments' ids are hinted): ``a``'s names first, then ``b``'s; ``None`` where none
    matches so.

    >>> print(_spelt_apart(pl.Series(["A", "B"]), pl.Series(["a", "b"]), "system"))
    ... # doctest: +NORMALIZE_WHITESPACE
    2 system id(s) of column 'system' of a match an id of b only when case is ignored
    ('A' against 'a'): ids are compared exactly; give a and b the same spelling, e.g.
    pl.col('system').str.to_lowercase() on each.
    """
    frames = (pl.LazyFrame({system: names}), pl.LazyFrame({system: names_b}))
    for (left, right), (one, other) in zip(
        (frames, frames[::-1]), (("a", "b"), ("b", "a")), strict=True
    ):
        sides = Sides(f"column {system!r} of {one}", other, "a and b")
        hint = spelling_hint(left, right, system, within=None, noun="system", sides=sides)
        if hint is not None:
            return hint
    return None


def _unmatched(names: pl.Series, names_b: pl.Series) -> object:
    """The first system (in its result's order, ``a``'s first) the other result lacks."""
    texts, texts_b = names.cast(pl.String).to_list(), names_b.cast(pl.String).to_list()
    only = [n for n, t in zip(names.to_list(), texts, strict=True) if t not in texts_b]
    only += [n for n, t in zip(names_b.to_list(), texts_b, strict=True) if t not in texts]
    return only[0]


def matched(
    names: pl.Series, names_b: pl.Series, system: str = "system"
) -> npt.NDArray[np.intp] | None:
    """For each system of ``names``, its index in ``names_b`` (both sorted, each as its
    result's system column holds them: integers as numbers); ``None`` where the two do
    not hold the same systems. Columns of two dtypes of one kind (Int32 and Int64
    systems; Int64 beside Float64, whose texts ``1`` and ``1.0`` differ) are matched by
    text, ``a``'s order kept; integers in one result and strings in the other (column
    ``system``) are refused, as every route refuses ids of two kinds
    (:func:`~polars_irmetrics.ground.validate.id_kinds_error`).

    >>> matched(pl.Series([2, 10]), pl.Series([10, 2], dtype=pl.Int32).sort()).tolist()
    [0, 1]
    >>> print(matched(pl.Series([2, 10]), pl.Series([2, 3])))
    None
    >>> matched(pl.Series([2, 10]), pl.Series(["10", "2"]))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 'system' holds integers in a= (Int64) ...
    """
    kinds = kind_of(names.dtype), kind_of(names_b.dtype)
    if None not in kinds and kinds[0] != kinds[1]:
        schemas = (pl.Schema({system: s.dtype}) for s in (names, names_b))
        raise id_kinds_error(system, next(schemas), "a=", next(schemas), "b=")
    if names.dtype == names_b.dtype:
        return np.arange(len(names)) if names.equals(names_b) else None
    texts = names.cast(pl.String).to_list()
    where = {text: i for i, text in enumerate(names_b.cast(pl.String).to_list())}
    if sorted(texts) != sorted(where):
        return None
    return np.array([where[text] for text in texts], dtype=np.intp)
