"""``compare()``: paired significance tests of systems over the same queries.

The per-query values come from one plan (:mod:`polars_irmetrics.comparison.frame`);
the statistics are numpy over the ``queries × comparisons`` delta matrix
(:mod:`polars_irmetrics.comparison.paired`); the corrections are
:func:`polars_irmetrics.stats.multitest.adjust`.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.comparison.caller import (
    SET_BY_COMPARISON,
    parsed_as_called,
    warn_at_caller,
)
from polars_irmetrics.comparison.frame import (
    PerQuery,
    Runs,
    check_system_role,
    per_query_values,
    refuse_other_tables,
    stack_runs,
)
from polars_irmetrics.comparison.options import (
    Alternative,
    CompareOptions,
    Interval,
    Mode,
    QuerySet,
    Scope,
    Test,
)
from polars_irmetrics.comparison.paired import PairedStats, paired_stats
from polars_irmetrics.comparison.record import Record, recall, remember
from polars_irmetrics.door.evaluate import Parsed, check_ids_read, check_level_read
from polars_irmetrics.errors import (
    InvalidValueError,
    IrmError,
    IrmWarning,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.exposure.rnd import nan_cause
from polars_irmetrics.ground.inputs import FrameInput
from polars_irmetrics.ground.options import EvalOptions, PlanKwargs, check_read, option_names
from polars_irmetrics.metrics.registry import (
    labels_by_route,
    parse_metric,
    parse_metric_list,
    repeated_metric,
)
from polars_irmetrics.stats.multitest import Correction, adjust

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["RESULT_COLUMNS", "check_compare", "compare", "compare_values", "recorded_per_query"]

#: The columns of :func:`compare`'s result, in order.
#: The answer first (the identity, the delta and whether it is significant, where a
#: notebook's wide table shows them without scrolling), then the detail.
RESULT_COLUMNS: tuple[str, ...] = (
    "metric", "system", "baseline", "delta", "p_value", "p_adjusted", "significant",
    "mean", "baseline_mean", "relative", "effect_size", "statistic", "ci_low", "ci_high", "n",
    "wins", "ties", "losses", "higher_is_better",
)  # fmt: skip


def compare(
    runs: Runs,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = None,
    groups: FrameInput | None = None,
    target: FrameInput | None = None,
    system: str = "system",
    baseline: str | None = None,
    mode: Mode | None = None,
    test: Test = "t",
    alternative: Alternative = "two-sided",
    correction: Correction = "holm",
    correction_scope: Scope = "all",
    alpha: float = 0.05,
    confidence: float = 0.95,
    ci: Interval | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    query_set: QuerySet = "judged",
    per_query: bool = False,
    **options: Unpack[PlanKwargs],
) -> pl.DataFrame:
    """Compare systems on the same queries: paired tests, corrections, intervals.

    Parameters
    ----------
    runs
        A dict ``{system name: run frame}`` (DataFrame or LazyFrame), or one long frame
        whose ``system`` column names the system of each row. Each system's per-query
        values are those :func:`~polars_irmetrics.evaluate` gives its run alone, to the
        bit: runs whose columns or dtypes differ (Int64 beside Float64 scores, a
        rank-only run beside score-only runs) are evaluated in plans of their own, never
        cast to a common dtype; a run ``evaluate`` refuses alone is refused with its
        error, the system named first (``system 'B': ...``).
    metrics
        Metric names as :func:`~polars_irmetrics.evaluate` takes them (cutoff ranges
        included); the family of comparisons spans them all. ``agg=`` is refused: the
        tests pair the per-query values, which it would not change (take a summary such
        as ``"P(agg='std')@10"`` from :func:`~polars_irmetrics.evaluate`), and so is a
        metric summarized its own way (``gm_map``, the geometric mean of the per-query
        AP: their mean is ``map``).
    qrels
        The judgments, shared by every system (``None``, the default: judged tables; for
        prediction metrics such as ``auc``, ``gauc`` or ``logloss``, whose per-query
        values are each user's, read from every system's ``label=`` and
        ``prediction=`` columns; a user with an undefined value, such as the AUC of a
        user with one class, is left out of every test, with a warning).
    groups, target
        The exposure measures' tables (``ee_loss``, ``awrf``, ``rnd``...; as
        :func:`~polars_irmetrics.evaluate` takes them): the documents' groups, and
        ``awrf``'s target distribution. Each system's per-query values are those of its
        run alone; ``awrf``, ``awrf_ndcg``, ``rnd``, ``rkl`` and ``rrd`` have no value
        for a query the system did not retrieve, so systems that retrieved different
        queries need ``query_set="common"``. A win of ``ee_loss``, ``ee_disparity``,
        ``rnd``, ``rkl`` or ``rrd`` is a lower value (their declared direction).
    system
        The system column of a long frame (and of the per-query values). A dict of runs
        names each system by its key: another ``system=`` beside it is refused
        (``InvalidValueError``), never ignored.
    baseline
        The system every other is compared with (``mode="baseline"``, the default when
        it is given). Without it every pair is compared (``mode="pairs"``). System
        names are text: a long frame's system column is cast to String
        (``baseline='1'``, not ``1``).
    mode
        ``"baseline"`` or ``"pairs"``; in pairs, the earlier system (dict order, or
        sorted names for a frame) is the ``baseline`` column of each row.
    test
        ``"t"`` (paired t-test), ``"wilcoxon"`` (signed-rank; zero deltas dropped, as
        scipy's default), ``"randomization"`` (Fisher's sign flip; exact when
        ``2**n <= n_resamples``) or ``"bootstrap"`` (paired, shift method). See
        :mod:`polars_irmetrics.comparison.paired` for the exact definitions.
    alternative
        ``"two-sided"``, ``"greater"`` (the system's mean is above the baseline's) or
        ``"less"`` (below), as scipy's: of the delta, whatever the metric's direction
        (for a lower-is-better metric such as ``logloss``, ``"less"`` tests that the
        system is better).
    correction
        Multiple-testing correction (statsmodels' names): ``"bonferroni"``, ``"holm"``,
        ``"holm-sidak"``, ``"fdr_bh"``, ``"fdr_by"`` or ``None``.
    correction_scope
        The family corrected together: ``"all"`` comparisons × metrics (default), or
        each ``"metric"`` on its own (with one metric the two are one family, and give
        the same p-values). Refused beside ``correction=None``, which adjusts no family,
        and for any other value.
    alpha
        ``significant`` is ``p_adjusted <= alpha``.
    confidence
        Confidence level of ``[ci_low, ci_high]``, the interval of ``delta``.
    ci
        ``"t"`` (default; bootstrap after a bootstrap test) or ``"bootstrap"``
        (percentile interval of ``n_resamples`` bootstrap means).
    n_resamples, seed
        Resamples of the randomization and bootstrap tests, and their random seed
        (the same seed gives the same p-values; by default 0, so the same data gives
        the same p-values on every call, as ranx's fixed default does; ``None``: fresh
        draws on each call). Refused, with the other options no chosen statistic
        reads, unless a resampling test or ``ci="bootstrap"`` reads them.
    query_set
        The paired queries. ``"judged"`` (default): every judged query; a system that
        did not retrieve one scores it as an empty ranking (as ``evaluate`` does).
        ``"common"``: the queries every system retrieved. ``"error"``: refuse systems
        whose query sets differ. Under both, a judged query a system did not retrieve is
        no value of that system in every metric, as ``evaluate(...,
        unretrieved="drop")`` of its run alone leaves it out: in ``ee_loss``,
        ``ee_disparity`` and ``ee_relevance`` too (which alone score it as an empty
        ranking). Beside the exposure measures, a query the ranking metrics do not score
        (an unjudged one, which ``rnd`` scores) is no value of the system either.
        Queries that mostly do not line up are said (a ``CoverageWarning`` with each
        system's count, and the fix where the runs' ids are spelt apart: ``'Q1'``
        beside ``'q1'``): under ``"judged"``, where fewer than half of the judged
        queries some system retrieved are retrieved by every system; under
        ``"common"``, where it keeps fewer than half of the queries the systems are
        scored on (fewer than two: refused, ``QuerySetError``).
    per_query
        ``True``: instead of the tests, the per-query values and deltas of every
        comparison, one row per metric, comparison and query (the queries each test
        used). No test runs, so the statistics options (``test``, ``alternative``,
        ``correction``, ``correction_scope``, ``alpha``, ``confidence``, ``ci``,
        ``n_resamples``, ``seed``) are refused beside it.
    **options
        :func:`~polars_irmetrics.evaluate`'s keyword arguments (``order``,
        ``relevance_level``, ``depth``, the column names ``query_id=``, ``relevance=``,
        ...); the groups, ``per_query`` and ``unretrieved`` are set by ``compare``.
        ``progress=`` among them draws a bar of the long steps, the out-of-core
        evaluation's buckets and the resampling tests' chunks of resamples (when there
        is more than one): ``None`` (default) in a terminal or a notebook only,
        ``True`` on any stream, ``False`` never
        (:mod:`polars_irmetrics.ground.progress`).

    Returns
    -------
    pl.DataFrame
        One row per metric and comparison, in this order (:data:`RESULT_COLUMNS`):
        ``metric``, ``system``, ``baseline`` (String); ``delta`` (mean − baseline
        mean), ``p_value``, ``p_adjusted`` (Float64), ``significant`` (Boolean:
        ``p_adjusted <= alpha``); ``mean``, ``baseline_mean``, ``relative`` (delta /
        baseline mean; null when that is 0), ``effect_size`` (Cohen's d_z, NaN where
        the deltas are constant: the mean delta over their standard deviation, 0),
        ``statistic`` (the test's own signed statistic of system − baseline, whose sign
        is the direction the test found: t for ``"t"``, the signed-rank sums
        ``r+ − r−`` for ``"wilcoxon"``, which may disagree with the mean's sign, the
        mean delta for ``"randomization"`` and ``"bootstrap"``; 0 where every delta is
        0), ``ci_low``, ``ci_high`` (Float64); ``n`` (paired queries), ``wins``, ``ties``,
        ``losses`` (Int64: queries where the system is better than, equal to, worse
        than the baseline, in the metric's direction: a win of ``logloss`` is a lower
        value; null for a metric with no better direction, such as ``calibration``);
        ``higher_is_better`` (Boolean: the metric's declared direction, null where it
        declares none, which :func:`~polars_irmetrics.report` reads for its markers and
        bold).
        With ``per_query=True``: ``metric``, ``system``, ``baseline``, the query id,
        ``value``, ``baseline_value``, ``delta`` and ``higher_is_better``.

    Raises
    ------
    InvalidValueError
        Fewer than two systems, a baseline that is not a system, an unknown test,
        correction or mode, ``alpha`` or ``confidence`` outside (0, 1),
        ``n_resamples < 1``, NaN or infinite per-query values, a ``system=`` beside a dict
        of runs.
    QuerySetError
        Fewer than two paired queries, systems with different query sets under
        ``query_set="error"``, or a metric with no value on any query for any system
        (its side tables, ``qrels=`` or ``groups=``, empty or holding none of the runs'
        ids).
    MetricParameterError
        A metric with ``agg=`` (or a name that implies one, ``NumRet``) or summarized
        its own way (``gm_map``, ``num_q``), a metric ``compare`` does not take.
    ColumnNotFoundError, ColumnTypeError
        A run :func:`~polars_irmetrics.evaluate` refuses alone (its error, the system
        named), or query ids that are strings in some runs and integers in others (the
        systems are paired by query id); a long frame's system column of lists, arrays
        or structs (``ColumnTypeError``: each row names one system).

    Examples
    --------
    Two systems on three queries, graded by precision at 1. ``b`` wins q1, ties q2
    and loses q3: the deltas are +1, 0, -1, their mean is 0 and nothing is
    significant. Every test gets the same rows.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> qrels = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "z"],
    ...                       "relevance": [1, 1, 1]})
    >>> a = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["n", "y", "z"],
    ...                   "rank": [1, 1, 1]})
    >>> b = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "n"],
    ...                   "rank": [1, 1, 1]})
    >>> out = irm.compare({"a": a, "b": b}, "P@1", qrels=qrels, baseline="a")
    >>> out.select("system", "baseline", "n", "delta", "p_value", "wins", "ties", "losses")
    shape: (1, 8)
    ┌────────┬──────────┬─────┬───────┬─────────┬──────┬──────┬────────┐
    │ system ┆ baseline ┆ n   ┆ delta ┆ p_value ┆ wins ┆ ties ┆ losses │
    │ ---    ┆ ---      ┆ --- ┆ ---   ┆ ---     ┆ ---  ┆ ---  ┆ ---    │
    │ str    ┆ str      ┆ i64 ┆ f64   ┆ f64     ┆ i64  ┆ i64  ┆ i64    │
    ╞════════╪══════════╪═════╪═══════╪═════════╪══════╪══════╪════════╡
    │ b      ┆ a        ┆ 3   ┆ 0.0   ┆ 1.0     ┆ 1    ┆ 1    ┆ 1      │
    └────────┴──────────┴─────┴───────┴─────────┴──────┴──────┴────────┘

    A judged query a system never retrieved is an empty ranking (0), not a dropped
    query; ``per_query=True`` lists the queries each test paired:

    >>> c = a.filter(pl.col("query_id") != "q3")
    >>> irm.compare({"a": a, "c": c}, "P@1", qrels=qrels, per_query=True)["delta"].to_list()
    [0.0, 0.0, -1.0]

    For a lower-is-better metric a win is a lower value; a metric with no better
    direction counts no wins at all. ``unjudged@1`` is 1 where the top document has no
    judgment: ``b`` has one unjudged top document (q3), ``a`` one (q1). That says how
    much of each ranking the pool judged, not which system is better, so its wins, ties
    and losses are null (its delta and test stay):

    >>> out = irm.compare({"a": a, "b": b}, "unjudged@1", qrels=qrels, baseline="a")
    >>> out.select("delta", "wins", "ties", "losses", "higher_is_better").row(0)
    (0.0, None, None, None, None)

    Two identical systems: every delta is 0, so the p-value is 1 and the statistic 0
    from every test (scipy's ``ttest_rel`` gives NaN for both; its ``wilcoxon`` and
    ``permutation_test`` give 1 too), the effect size is NaN (0 / 0), and a warning
    says so (often the same run passed twice):

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     out = irm.compare({"a": a, "b": a}, "P@1", qrels=qrels, baseline="a")
    >>> out.select("delta", "p_value", "statistic", "effect_size").row(0)
    (0.0, 1.0, 0.0, nan)
    >>> str(caught[0].message)[:62]
    "every per-query delta is 0 in 'P@1', system 'b' against 'a': t"

    ``system=`` names the system column of one long frame; a dict names each system by
    its key, and another ``system=`` beside it is refused, not ignored:

    >>> long = pl.concat([a.with_columns(run=pl.lit("a")), b.with_columns(run=pl.lit("b"))])
    >>> irm.compare(long, "P@1", qrels=qrels, system="run")["delta"].to_list()
    [0.0]
    >>> irm.compare({"a": a, "b": b}, "P@1", qrels=qrels, system="run")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: system='run' is not read with a dict of runs: ...
    """
    statistics = CompareOptions(
        baseline=baseline,
        mode=mode,
        test=test,
        alternative=alternative,
        correction=correction,
        correction_scope=correction_scope,
        alpha=alpha,
        confidence=confidence,
        ci=ci,
        n_resamples=n_resamples,
        seed=seed,
        query_set=query_set,
        per_query=per_query,
    )
    parsed, plan_options, checked = _checked_arguments(metrics, options, statistics)
    values = per_query_values(
        runs,
        parsed,
        qrels,
        system=system,
        query_set=checked.query_set,
        options=plan_options,
        groups=groups,
        target=target,
    )
    query_id = plan_options.query_id
    result = compare_values(values, checked, per_query=per_query, query_id=query_id)
    return result if per_query else remember(result, Record(checked, values, query_id))


def recorded_per_query(result: pl.DataFrame) -> pl.DataFrame | None:
    """``compare(..., per_query=True)`` of the comparison that returned ``result``, from
    the per-query values it recorded (nothing evaluated again); ``None`` for a frame
    ``compare`` did not return."""
    record = recall(result)
    if record is None or record.values is None:
        return None
    return compare_values(record.values, record.options, per_query=True, query_id=record.query_id)


def _checked_arguments(
    metrics: str | Iterable[str], options: Mapping[str, object], statistics: CompareOptions
) -> tuple[Parsed, EvalOptions, CompareOptions]:
    """:func:`compare`'s metrics parsed (once: every step below receives the requests),
    its evaluation options and its statistics options, each checked."""
    usable = partial(refuse_other_tables, calls="irm.compare")  # before a missing cutoff
    parsed = Parsed(parsed_as_called(metrics, "irm.compare", usable))
    plan_options = compare_eval_options(options, parsed)
    checked = statistics.replace(progress=plan_options.progress).checked()
    _refuse_repeats(parsed, checked)
    return parsed, plan_options, checked


def _refuse_repeats(parsed: Parsed, options: CompareOptions) -> None:
    """Refuse two spellings of one metric (``'P@5'`` and ``'P_5'``, ``'map'`` and
    ``'ap'``: one canonical name) where the correction adjusts the p-values of every
    metric together (``correction_scope='all'``): the one test would be counted twice in
    its family, raising every adjusted p-value (Holm over two comparisons where there
    is one). The same name twice is refused by the parser; with
    ``correction_scope='metric'``, ``correction=None`` or ``per_query=True`` a second
    spelling changes no number (two equal rows, as :func:`~polars_irmetrics.evaluate`
    gives two equal columns).

    >>> _refuse_repeats(Parsed(parse_metric_list(["P@5", "P_5"])), CompareOptions())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metrics 'P@5' and 'P_5' are one metric, ...
    """
    if options.per_query or options.correction is None or options.correction_scope != "all":
        return
    repeat = repeated_metric(parsed.requests)
    if repeat is not None:
        first, label, name = repeat
        raise MetricParameterError(
            f"metrics {first!r} and {label!r} are one metric, {name!r}, listed "
            f"twice: compare would test it twice and count both tests in the family "
            f"that correction={options.correction!r} adjusts with "
            "correction_scope='all', raising every adjusted p-value; list it once"
        )


def check_compare(runs: Runs, metrics: str | Iterable[str], **arguments: Any) -> None:
    """Every check of :func:`compare`'s arguments that reads no row: the metrics, the
    options (``arguments``: its keyword arguments) and a long frame's system column.
    ``lf.irm.compare`` runs it when called, so that a bad argument raises the library's
    error there (polars wraps an error raised while a deferred frame's schema is
    computed in its own ``ComputeError``)."""
    bound = inspect.signature(compare).bind(runs, metrics, **arguments)
    bound.apply_defaults()
    given = dict(bound.arguments)
    fields = {f.name for f in dataclasses.fields(CompareOptions)}
    statistics = CompareOptions(**{k: v for k, v in given.items() if k in fields})
    _, plan_options, _ = _checked_arguments(metrics, given["options"], statistics)
    check_system_role(runs, given["system"], plan_options)
    stack_runs(runs, given["system"])


def compare_eval_options(
    options: Mapping[str, object],
    metrics: str | Iterable[str] | Parsed,
    caller: Callable[..., object] | None = None,
) -> EvalOptions:
    """The evaluation options of a comparison, from its keyword arguments (checked), an
    option none of ``metrics`` reads refused as :func:`~polars_irmetrics.evaluate`
    refuses it (``relevance_level=`` beside graded metrics alone too). ``caller`` is
    the function called (default :func:`compare`; :func:`~polars_irmetrics.tukey_hsd`
    too): its name and its own keywords are those a refusal names."""
    function = compare if caller is None else caller
    own = SET_BY_COMPARISON
    for name in own:
        if name in options:
            raise InvalidValueError(
                f"{function.__name__} sets {name}= itself (the systems are its groups, and "
                f"query_set= chooses the queries); drop {name}=..."
            )
    # an unknown keyword: the caller's options listed (evaluate's less those it sets,
    # and its own statistics options), not evaluate's alone
    fields = set(option_names()) - set(own)
    for name in options:
        if name not in fields:
            keywords = set(inspect.signature(function).parameters) - {"runs", "metrics", "options"}
            shown = ", ".join(sorted(fields | keywords))
            raise InvalidValueError(f"unknown option {name}=...; the options are {shown}")
    built = EvalOptions.build(**options)
    requests = metrics.requests if isinstance(metrics, Parsed) else parse_metric_list(metrics)
    routes = labels_by_route(requests)
    check_read(built, routes)
    # doc_id= as evaluate refuses it (query_id= pairs the queries: per_query)
    per_query = built.replace(per_query=True)
    check_ids_read(per_query, requests, routes, labels=False, takes_labels=False)
    check_level_read(built, requests)
    return built


def comparisons(systems: list[str], options: CompareOptions) -> list[tuple[int, int]]:
    """``(system, baseline)`` index pairs, in result order."""
    if options.baseline is not None and options.baseline not in systems:
        shown = ", ".join(repr(s) for s in systems)
        fix = "pass one of them"
        as_text = str(options.baseline)
        if not isinstance(options.baseline, str) and as_text in systems:
            fix = (
                "system names are text (a long frame's system column is cast to String): "
                f"pass baseline={as_text!r}"
            )
        raise InvalidValueError(
            f"baseline={options.baseline!r} is not among the systems ({shown}); {fix}"
        )
    if options.pairs:
        return [(j, i) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    base = systems.index(str(options.baseline))
    return [(s, base) for s in range(len(systems)) if s != base]


def _check_values(values: PerQuery) -> None:
    n = values.values.shape[1]
    if n < 2:
        raise QuerySetError(
            f"{n} paired quer{'y' if n == 1 else 'ies'}: a paired test needs at least two "
            "queries that every system is scored on"
            + (f" ({values.dropped} not common to every system)" if values.dropped else "")
        )
    nan = np.isnan(values.values)
    if nan.any():
        m, q, s = np.argwhere(nan)[0]
        label, query = values.metrics[m], values.queries[int(q)]
        count = int(nan[m, :, s].sum())
        others = (
            f" (and on {count - 1} other quer{'y' if count == 2 else 'ies'})" if count > 1 else ""
        )
        column = values.queries.name or "query_id"
        where = f"per-query value of {label!r} for system {values.systems[s]!r} on query"
        cause = _nan_cause(label, column)
        if cause is not None:  # the measure's own why and fix (irm.evaluate's warning)
            raise InvalidValueError(
                f"{where} {query!r} is NaN{others}: {cause[0]}; NaN cannot be paired: "
                f"{cause[1]}, in every system's run, or compare a metric defined there"
            )
        raise InvalidValueError(
            f"{where} {query!r} is NaN{others}: {_undefined_where(label)}; NaN cannot be "
            f"paired: drop that query from every system's run, e.g. "
            f"run.filter(pl.col({column!r}) != {query!r}), or compare a metric defined "
            "there"
        )
    infinite = np.isinf(values.values)
    if infinite.any():
        m, q, s = np.argwhere(infinite)[0]
        value = float(values.values[m, q, s])
        raise InvalidValueError(
            f"per-query value of {values.metrics[m]!r} for system {values.systems[s]!r} on "
            f"query {values.queries[int(q)]!r} is {value}: its true value is beyond "
            "float64's range (about 1.8e308), and an infinite value cannot be paired (inf "
            "- inf is NaN): rescale the labels and predictions (e.g. divide both by 1e150; "
            "an error metric scales with them), or compare a metric whose values float64 "
            "holds"
        )


def _nan_cause(label: str, query_id: str) -> tuple[str, str] | None:
    """Why ``label``'s exposure measure is NaN on a query and the fix, as
    :func:`~polars_irmetrics.exposure.rnd.nan_cause` says them (``rnd``: a ranking of
    10 documents or fewer); ``None`` for another metric, or a label that is none."""
    try:
        name = parse_metric(label).metric.name
    except IrmError:  # values built by hand, under a label that is no metric
        return None
    return nan_cause(name, query_id)


def _undefined_where(label: str) -> str:
    """Why ``label``'s metric has no value on a query: its formula's own words where it
    declares a NaN (``rnd``: "NaN with 10 documents or fewer or no or only protected
    ones"), else the generic reason.

    >>> _undefined_where("rnd")[-76:]
    "(its formula: 'NaN with 10 documents or fewer or no or only protected ones')"
    """
    reason = "the metric is undefined there, as irm.evaluate(..., per_query=True) shows"
    try:
        formula = parse_metric(label).metric.formula or ""
    except IrmError:  # values built by hand, under a label that is no metric
        return reason
    said = re.search(r"NaN[^;.]*", formula)
    return reason if said is None else f"{reason} (its formula: {said.group(0)!r})"


def _comparisons_named(
    chosen: npt.NDArray[np.bool_],
    labels: tuple[npt.NDArray[np.object_], npt.NDArray[np.object_], npt.NDArray[np.object_]],
) -> tuple[int, str]:
    """The first ``chosen`` comparison's index, and the chosen ones as a warning names
    them (``labels``: the metric, system and baseline of each): that one, or how many
    and the first."""
    metrics, systems, baselines = labels
    first = int(np.argmax(chosen))
    where = f"{metrics[first]!r}, system {systems[first]!r} against {baselines[first]!r}"
    count = int(chosen.sum())
    return first, where if count == 1 else f"{count} comparisons (first: {where})"


def _warn_identical(
    stats: PairedStats,
    directed: npt.NDArray[np.bool_],
    metrics: npt.NDArray[np.object_],
    systems: npt.NDArray[np.object_],
    baselines: npt.NDArray[np.object_],
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` naming the comparisons whose
    per-query deltas are all 0 (the two systems score the same on every paired query:
    often the same run passed twice): their ``effect_size`` is NaN (Cohen's d_z, the
    mean delta over the deltas' standard deviation, is 0 / 0), their ``p_value`` 1 and
    ``statistic`` 0, where scipy's ``ttest_rel`` gives NaN for both. Only the
    ``directed`` columns (a metric with a better direction): a count that describes the
    input (``num_rel``, ``idcg``) is the same in every system by design."""
    zero = (stats.ties == stats.n) & directed
    if not zero.any():
        return
    _, said = _comparisons_named(zero, (metrics, systems, baselines))
    warn_at_caller(
        f"every per-query delta is 0 in {said}: the systems score the same on all "
        f"{stats.n} paired queries (the same run passed twice?); effect_size is NaN "
        "(Cohen's d_z, the mean delta over the deltas' standard deviation, is 0 / 0), "
        "p_value 1 and statistic 0 (scipy's ttest_rel gives NaN for both; 1 is the "
        "p-value of every sign flip of zero deltas, so nothing identical reads as "
        "significant)",
        IrmWarning,
    )


def _warn_no_spread(
    stats: PairedStats,
    deltas: npt.NDArray[np.float64],
    directed: npt.NDArray[np.bool_],
    labels: tuple[npt.NDArray[np.object_], npt.NDArray[np.object_], npt.NDArray[np.object_]],
    test: str,
    alternative: str,
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` naming the comparisons whose
    per-query deltas are one value other than 0 (equal to the bit, or but for the
    values' rounding): they have no spread, so their ``effect_size`` is NaN, their
    interval the delta itself and ``test='t'``'s p-value that of a difference without
    variance (scipy's ``ttest_rel``: t infinite, p 0), resting on no spread, not on
    evidence (:func:`ab_test` and :func:`tukey_hsd` say the same of theirs). ``deltas``:
    ``n × K``, the columns of ``stats``; only the ``directed`` ones, as
    :func:`_warn_identical`."""
    constant = np.isnan(stats.effect_size) & (stats.ties != stats.n) & directed
    if not constant.any():
        return
    first, said = _comparisons_named(constant, labels)
    column = deltas[:, first]
    exact = bool((column == column[0]).all())
    value = f"{float(stats.delta[first])!r}" + ("" if exact else " (but for rounding)")
    interval = "is the delta itself" if alternative == "two-sided" else "ends at the delta"
    p_value = (
        f", and test='t' reads the difference as certain (p_value "
        f"{float(stats.p_value[first])!r}: scipy's ttest_rel divides by that 0 spread)"
        if test == "t"
        else ""
    )
    exact_p = (
        f"test='randomization' gives the exact p-value of the sign flips "
        f"({2.0 ** (1 - stats.n)!r} two-sided, for {stats.n} queries), or compare on more "
        "queries"
        if test in ("t", "bootstrap")
        else "compare on more queries before reading them"
    )
    warn_at_caller(
        f"every per-query delta is {value} in {said}, on all {stats.n} paired queries: "
        "the deltas have no spread, so effect_size is NaN (Cohen's d_z divides the mean "
        f"delta by their standard deviation, 0), the interval {interval}{p_value}: "
        f"resting on no spread, not on evidence; {exact_p}",
        IrmWarning,
    )


def compare_values(
    values: PerQuery,
    options: CompareOptions,
    *,
    per_query: bool = False,
    query_id: str = "query_id",
) -> pl.DataFrame:
    """:func:`compare`'s result from paired per-query values (``options`` checked).

    Examples
    --------
    The NaN check, on values built by hand:

    >>> import numpy as np, polars as pl
    >>> from polars_irmetrics.comparison.api import compare_values
    >>> from polars_irmetrics.comparison.frame import PerQuery
    >>> from polars_irmetrics.comparison.options import CompareOptions
    >>> v = np.array([[[0.5, 0.1], [np.nan, 0.2]]])
    >>> compare_values(PerQuery(["map"], ["a", "b"], pl.Series(["q1", "q2"]), v, 0, [True]),
    ...                CompareOptions())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: per-query value of 'map' for system 'a' on ...
    """
    pairs = comparisons(values.systems, options)
    _check_values(values)
    sys_idx = np.array([s for s, _ in pairs])
    base_idx = np.array([b for _, b in pairs])
    n_m, n, _ = values.values.shape
    n_c = len(pairs)
    # n × (metrics × comparisons), metric-major
    a = values.values[:, :, sys_idx].transpose(1, 0, 2).reshape(n, n_m * n_c)
    b = values.values[:, :, base_idx].transpose(1, 0, 2).reshape(n, n_m * n_c)
    metric_col = np.repeat(np.array(values.metrics, dtype=object), n_c)
    directions = values.directions()
    # a metric without a direction: its wins, ties and losses are null (counted as
    # higher-is-better below, then masked)
    higher = np.repeat(np.array([d is not False for d in directions], dtype=bool), n_c)
    declared = pl.Series(
        "higher_is_better", [d for d in directions for _ in range(n_c)], pl.Boolean
    )
    system_col = np.tile(np.array(values.systems, dtype=object)[sys_idx], n_m)
    base_col = np.tile(np.array(values.systems, dtype=object)[base_idx], n_m)
    if per_query:
        return pl.DataFrame(
            {
                "metric": np.repeat(metric_col, n).tolist(),
                "system": np.repeat(system_col, n).tolist(),
                "baseline": np.repeat(base_col, n).tolist(),
                query_id: pl.concat([values.queries] * (n_m * n_c)),
                "value": a.T.ravel(),
                "baseline_value": b.T.ravel(),
                "delta": (a - b).T.ravel(),
                "higher_is_better": declared.gather(np.repeat(np.arange(n_m * n_c), n)),
            }
        )
    stats = paired_stats(a, b, options, higher)
    # a metric without a direction (num_rel, idcg: the judgments' own counts) is
    # expected to be the same in every system: not said
    has_direction = np.repeat(np.array([d is not None for d in directions], dtype=bool), n_c)
    _warn_identical(stats, has_direction, metric_col, system_col, base_col)
    labels = (metric_col, system_col, base_col)
    _warn_no_spread(stats, a - b, has_direction, labels, options.test, options.alternative)
    if options.correction_scope == "all":
        adjusted = adjust(stats.p_value, options.correction)
    else:
        adjusted = np.concatenate(
            [adjust(row, options.correction) for row in stats.p_value.reshape(n_m, n_c)]
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        relative: npt.NDArray[np.float64] = stats.delta / stats.baseline_mean
    frame = pl.DataFrame(
        {
            "metric": metric_col.tolist(),
            "system": system_col.tolist(),
            "baseline": base_col.tolist(),
            "delta": stats.delta,
            "p_value": stats.p_value,
            "p_adjusted": adjusted,
            "significant": adjusted <= options.alpha,
            "mean": stats.mean,
            "baseline_mean": stats.baseline_mean,
            "relative": relative,
            "effect_size": stats.effect_size,
            "statistic": stats.statistic,
            "ci_low": stats.ci_low,
            "ci_high": stats.ci_high,
            "n": np.full(n_m * n_c, stats.n, dtype=np.int64),
            "wins": stats.wins,
            "ties": stats.ties,
            "losses": stats.losses,
            "higher_is_better": declared,
        },
        schema_overrides={
            "metric": pl.String,
            "system": pl.String,
            "baseline": pl.String,
            "higher_is_better": pl.Boolean,
        },
    )
    directed = pl.col("higher_is_better").is_not_null()
    return frame.with_columns(
        pl.when(pl.col("baseline_mean") != 0).then(pl.col("relative")).alias("relative"),
        *(pl.when(directed).then(pl.col(c)).alias(c) for c in ("wins", "ties", "losses")),
    )
