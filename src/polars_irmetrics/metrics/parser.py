"""The metric parser: look a metric up by any of its names, parse metric strings.

One parser reads every accepted spelling:

* canonical names: ``ndcg@10``, ``map``, ``recall(denominator='capped')@10``;
* ir_measures names: ``nDCG@10``, ``nDCG(dcg='exp-log2')@10``, ``AP(rel=2)``,
  ``P@10``, ``R@100``, ``RR@10``, ``Success@10``;
* trec_eval names: ``ndcg_cut_10``, ``P_10``, ``recall_100``, ``map_cut_10``,
  ``success_10``, ``recip_rank``, ``Rprec``, and real-valued ones,
  ``iprec_at_recall_0.10`` and ``Rprec_mult_0.20`` (also ``IPrec@0.1``): the number
  sets the metric's parameter, ``iprec(recall=0.1)``;
* scikit-learn's ``ndcg_score@10`` and ``dcg_score@10`` (tie-averaged gains,
  ``ndcg(ties='average', ideal='retrieved')@10``), its ``ignore_ties=False`` as
  ``ties='average'`` and ``log_base=10``;
* ranx names: ``ndcg_burges@10``, ``dcg_burges@10``, ``r-precision``, ``hit_rate@10``,
  ``hits@10``, ``rbp.95`` (``rbp(p=0.95, gain='linear')``) and a relevance level as
  ranx writes it, ``map@10-l2`` (``map(rel=2)@10``);
* ir_measures' parameters that pick another measure: ``SetP(relative=True)`` is
  ``relative_precision``, ``NumRet(rel=2)`` the relevant retrieved at level 2
  (``num_rel_ret(rel=2)``), and its printed gains, ``nDCG(gains={0:1,1:4})``
  (``trec_ndcg(gains='0=1,1=4')``).

Any metric takes ``agg=`` (``'mean'``, ``'sum'``, ``'median'``, ``'min'``, ``'max'``,
``'std'``, ``'geometric'``, ``'median_low'``): how its per-query values become one
number (``precision(agg='median')@10``; ir_measures' counts are sums: ``NumRet`` is
``num_ret(agg='sum')``). torchmetrics' retrieval options are parameters too:
``precision(adaptive_k=True)@10`` (P@min(k, n)) and, on any per-query score of the
judgments, ``empty_target_action='skip'`` / ``'neg'`` / ``'pos'`` / ``'error'`` (the
value of a query without a relevant document); ir_measures' ``judged_only=True`` is an
option of the whole evaluation (every metric of a list must say it alike). Measures of
ir_measures and ranx that have no equal here are refused with a message that names the
nearest one (:data:`REFUSED`).

A cutoff range, ``recall@1..100`` or ``P@10..100:10``, expands into one name per cutoff
(:func:`expand_metric_names`). Names are case-insensitive. :attr:`MetricRequest.name`
is the canonical spelling, and it parses back to an equal request.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace

from polars_irmetrics.errors import IrmError, MetricParameterError, UnknownMetricError
from polars_irmetrics.ground.options import plain_number
from polars_irmetrics.metrics.requests import BY_NAME, EMPTY_TARGET_ACTIONS, MetricRequest
from polars_irmetrics.metrics.spec import (
    AGGREGATES,
    CI_LEVEL,
    SUMMARIZED_ROUTES,
    Aggregate,
    Alias,
    Metric,
    ParamValue,
)
from polars_irmetrics.metrics.trec import REAL_CUTOFFS

__all__ = [
    "MAX_RANGE_CUTOFFS",
    "REFUSED",
    "expand_metric_names",
    "get_metric",
    "parse_metric",
    "parse_metric_list",
    "repeated_metric",
    "request",
    "writes_aggregate",
]

#: Parameter spellings from other tools: name -> (our name, value translation).
_PARAM_ALIASES: dict[str, tuple[str, Mapping[str, str]]] = {
    "dcg": ("gain", {"log2": "linear", "exp-log2": "exponential"}),
    # scikit-learn's dcg_score / ndcg_score flag
    "ignore_ties": ("ties", {"false": "average", "true": "break"}),
}

#: ir_measures parameters that turn one measure into another:
#: (name, parameter) -> the name it becomes. ``relative`` is consumed (a flag),
#: ``rel`` stays (the relevance level of the new measure).
_SWITCHES: dict[tuple[str, str], str] = {
    ("setp", "relative"): "setrelp",
    ("numret", "rel"): "numrelret",
    ("ndcg", "gains"): "trec_ndcg",
}

_INTENT = (
    "it needs subtopic (intent) judgments, which polars_irmetrics does not read; "
    "the nearest is {near} per query, or {near} on each subtopic's judgments "
    "averaged with by="
)
#: Measures of ir_measures (and their ranx cousins) with no equal here:
#: lowercase name -> why, and the nearest metric that is here.
REFUSED: dict[str, str] = {
    "ap_ia": _INTENT.format(near="'map'"),
    "map_ia": _INTENT.format(near="'map'"),
    "p_ia": _INTENT.format(near="'precision@k'"),
    "err_ia": _INTENT.format(near="'err@k'"),
    "nerr_ia": _INTENT.format(near="'err@k'"),
    "alpha_dcg": _INTENT.format(near="'dcg@k'"),
    "alpha_ndcg": _INTENT.format(near="'ndcg@k'"),
    "\u03b1_dcg": _INTENT.format(near="'dcg@k'"),
    "\u03b1_ndcg": _INTENT.format(near="'ndcg@k'"),
    "strecall": _INTENT.format(near="'recall@k'"),
    "accuracy": "ir_measures' Accuracy (the probability that a retrieved relevant "
    "document is ranked before a retrieved non-relevant one) is not implemented; the "
    "nearest is 'fcp', the fraction of concordant pairs, or 'bpref'. RecTools' "
    "Accuracy (the catalogue classified by the top k) is 'reco_accuracy@k'",
    "bpm": "the Bejeweled player model (BPM) is not implemented; the nearest "
    "user-model metrics are 'rbp' and 'err@k'",
    "compat": "Clarke's compatibility measure needs preference judgments in its own "
    "ideal-ranking form and is not implemented; the nearest are 'rbp' and "
    "irm.evaluate_prefs' 'prefs_simp'",
    "insq": "the INSQ user model is not implemented; the nearest is 'rbp' (a fixed "
    "persistence instead of one adapting to T)",
    "inst": "the INST user model is not implemented; the nearest is 'rbp' (a fixed "
    "persistence instead of one adapting to T)",
    "nerr8": "NERR8..NERR11 (Sakai's normalized ERR variants) are not implemented; the "
    "nearest is 'err@k'",
    "nerr9": "NERR8..NERR11 (Sakai's normalized ERR variants) are not implemented; the "
    "nearest is 'err@k'",
    "nerr10": "NERR8..NERR11 (Sakai's normalized ERR variants) are not implemented; the "
    "nearest is 'err@k'",
    "nerr11": "NERR8..NERR11 (Sakai's normalized ERR variants) are not implemented; the "
    "nearest is 'err@k'",
    "nrbp": "novelty-and-rank-biased precision needs subtopic judgments; the nearest is 'rbp'",
    "nnrbp": "novelty-and-rank-biased precision needs subtopic judgments; the nearest is 'rbp'",
    "sdcg": "scaled DCG (SDCG, DCG divided by its largest possible value for any "
    "judgments) is not implemented; the nearest is 'ndcg@k'",
}

_NAME_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9_\-]*(?:\.\d+)?)\s*"
    r"(?:\((?P<params>[^()]*)\))?\s*"
    r"(?:@\s*(?P<k>\S+?))?\s*$"
)
_TREC_CUTOFF_RE = re.compile(r"^(?P<name>.+?)_(?P<k>\d+)$")
#: trec_eval's real-valued suffix (``iprec_at_recall_0.10``), for REAL_CUTOFFS metrics.
_TREC_REAL_RE = re.compile(r"^(?P<name>.+?)_(?P<x>\d+(?:\.\d*)?|\.\d+)$")
_RANGE_RE = re.compile(r"@\s*(?P<start>\d+)\s*\.\.\s*(?P<stop>\d+)\s*(?::\s*(?P<step>\d+)\s*)?$")
#: The most cutoffs one range may expand to.
MAX_RANGE_CUTOFFS = 10_000
_ITEM_RE = re.compile(r"""(?:[^,'"{}]|'[^']*'|"[^"]*"|\{[^{}]*\})+""")
#: ranx's relevance level suffix: ``ndcg@10-l2``.
_RANX_LEVEL_RE = re.compile(r"-l(?P<level>\d+)\s*$")
#: ranx's RBP persistence: ``rbp.95`` is p = 0.95.
_RANX_RBP_RE = re.compile(r"^rbp\.(?P<p>\d+)$")
#: The name at the start of a metric string, whatever its characters (for refusals).
_HEAD_RE = re.compile(r"^\s*(?P<name>[^\s(@]+)")
_PARAM_RE = re.compile(r"^\s*(?P<key>[A-Za-z_]\w*)\s*=\s*(?P<value>.+?)\s*$")


def get_metric(name: str) -> Metric:
    """The registry entry for ``name`` (any alias, any case), without parameters.

    Parameters
    ----------
    name
        A canonical name or an alias, without cutoff or parameters (``"AP"``).

    Returns
    -------
    Metric
        The declaration the name refers to.

    Raises
    ------
    UnknownMetricError
        When no metric has that name; the message lists close matches.

    Examples
    --------
    >>> import polars_irmetrics as irm
    >>> irm.get_metric("recip_rank").name
    'mrr'
    """
    found = BY_NAME.get(name.strip().lower())
    if found is None:
        raise _unknown(name)
    return found[0]


def _unknown(name: str) -> UnknownMetricError:
    lowered = name.strip().lower()
    close = difflib.get_close_matches(lowered, list(BY_NAME), n=4, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return UnknownMetricError(
        f"unknown metric {name!r}.{hint} See irm.list_metrics() for every metric and its aliases."
    )


def expand_metric_names(text: str) -> list[str]:
    """Expand a cutoff range into one metric name per cutoff.

    ``NAME@a..b`` means every cutoff from ``a`` to ``b`` (both included) and
    ``NAME@a..b:step`` every ``step``-th one from ``a``. Each name keeps the spelling
    given, with the range replaced by one cutoff; a name without a range comes back
    alone. :func:`polars_irmetrics.evaluate` expands its metric list this way, so
    ``"recall@1..100"`` gives 100 result columns, ``recall@1`` to ``recall@100``,
    computed in the same single pass.

    Parameters
    ----------
    text
        A metric name, with or without a cutoff range.

    Returns
    -------
    list of str
        One name per cutoff, in increasing order.

    Raises
    ------
    MetricParameterError
        For an empty or reversed range, a zero cutoff or step, or more than 10,000
        cutoffs.

    Examples
    --------
    >>> from polars_irmetrics import expand_metric_names
    >>> expand_metric_names("recall@1..3")
    ['recall@1', 'recall@2', 'recall@3']
    >>> expand_metric_names("P@10..35:10")
    ['P@10', 'P@20', 'P@30']
    >>> expand_metric_names("nDCG(dcg='exp-log2')@5..6")
    ["nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@6"]
    >>> expand_metric_names("map")
    ['map']
    """
    if not isinstance(text, str):
        raise MetricParameterError(
            f"a metric must be given as a string such as 'ndcg@10', got {text!r}"
        )
    match = _RANGE_RE.search(text)
    if match is None:
        return [text]
    start, stop = int(match["start"]), int(match["stop"])
    step = 1 if match["step"] is None else int(match["step"])
    if start < 1 or step < 1:
        raise MetricParameterError(
            f"metric {text!r}: cutoffs and the step of a range must be positive integers, "
            "e.g. 'recall@1..100' or 'P@10..100:10'"
        )
    if stop < start:
        raise MetricParameterError(
            f"metric {text!r}: the range {start}..{stop} is empty; write the smaller "
            f"cutoff first, e.g. '@{stop}..{start}'"
        )
    cutoffs = range(start, stop + 1, step)
    if len(cutoffs) > MAX_RANGE_CUTOFFS:
        raise MetricParameterError(
            f"metric {text!r}: the range has {len(cutoffs)} cutoffs, more than "
            f"{MAX_RANGE_CUTOFFS:,}; use a step, e.g. '@{start}..{stop}:10'"
        )
    name = text[: match.start()].strip()
    return [f"{name}@{k}" for k in cutoffs]


def parse_metric(text: str) -> MetricRequest:
    """Parse a metric string into a :class:`MetricRequest`.

    Parameters
    ----------
    text
        A metric name in canonical, ir_measures, trec_eval or ranx spelling.

    Returns
    -------
    MetricRequest
        The metric with its cutoff and parameters resolved.

    Raises
    ------
    UnknownMetricError
        For a name no metric has (with close matches in the message).
    MetricParameterError
        For a bad cutoff or parameter.

    Examples
    --------
    >>> from polars_irmetrics import parse_metric
    >>> parse_metric("nDCG@10").name
    'ndcg@10'
    >>> parse_metric("ndcg_cut_10").name
    'ndcg@10'
    >>> parse_metric("nDCG(dcg='exp-log2')@10").name
    "ndcg(gain='exponential')@10"
    >>> parse_metric("AP(rel=2)").name
    'map(rel=2)'
    >>> parse_metric("P_10").name
    'precision@10'
    >>> parse_metric("SetP(relative=True)").name
    'relative_precision'
    >>> parse_metric("map@10-l2").name
    'map(rel=2)@10'

    A measure of a peer with no equal here is refused, naming the nearest:

    >>> parse_metric("SDCG@10")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.UnknownMetricError: metric 'SDCG@10' ... the nearest is 'ndcg@k'
    """
    if not isinstance(text, str):
        raise MetricParameterError(
            f"a metric must be given as a string such as 'ndcg@10', got {text!r}"
        )
    head = _HEAD_RE.match(text)
    if head is not None and head["name"].lower() in REFUSED:
        raise UnknownMetricError(
            f"metric {text!r} is not supported: {REFUSED[head['name'].lower()]}"
        )
    ranx_level: int | None = None
    ranx_tail = _RANX_LEVEL_RE.search(text)
    if ranx_tail is not None:
        ranx_level = int(ranx_tail["level"])
        text_core = text[: ranx_tail.start()]
    else:
        text_core = text
    match = _NAME_RE.match(text_core)
    if match is None:
        raise UnknownMetricError(
            f"cannot read metric {text!r}: expected NAME, NAME@K or NAME(param=value)@K, "
            "e.g. 'ndcg@10' or \"recall(denominator='capped')@100\""
        )
    name = match["name"].lower()
    k_text = match["k"]
    params = _parse_params(match["params"], text)
    if ranx_level is not None:
        _ranx_level(name, ranx_level, params, text)
    rbp = _RANX_RBP_RE.match(name)
    if rbp is not None:  # ranx: rbp.95 is p = 0.95, its gain the label
        name = "rbp"
        params = {"p": float("0." + rbp["p"]), "gain": "linear", **params}
    for key in list(params):
        target = _SWITCHES.get((name, key))
        if target is None:
            continue
        if key == "relative":
            flag = params.pop(key)
            if str(flag).lower() not in ("true", "false", "1", "0"):
                raise MetricParameterError(
                    f"metric {text!r}: relative must be True or False, got {flag!r}"
                )
            if str(flag).lower() in ("true", "1"):
                name = target
        else:
            name = target
    real: str | None = None  # iprec_at_recall_0.10, IPrec@0.1: a parameter, not a cutoff
    if name not in BY_NAME and k_text is None:
        trec_real = _TREC_REAL_RE.match(name)
        if trec_real is not None and _real_cutoff(trec_real["name"]) is not None:
            name, real = trec_real["name"], trec_real["x"]
        else:
            trec = _TREC_CUTOFF_RE.match(name)
            if trec is not None and trec["name"] in BY_NAME:
                name, k_text = trec["name"], trec["k"]
    elif k_text is not None and _real_cutoff(name) is not None:
        real, k_text = k_text, None
    found = BY_NAME.get(name)
    if found is None:
        raise _unknown(match["name"])
    metric, alias = found
    k = None if k_text is None else _parse_k(k_text, text)
    options = dict(alias.fixed) if alias is not None else {}
    if real is not None:
        options[REAL_CUTOFFS[metric.name]] = _parse_real(real, text)
    level: float | None = None
    aggregate = alias.aggregate if alias is not None else None
    ci_level: float | None = None
    for key, value in params.items():
        if key == "rel":
            level = _check_level(metric, value, text)
        elif key == "agg":
            aggregate = _check_aggregate(value, text)
        elif key == "ci_level":
            ci_level = _check_ci_level(value, text)
        else:
            options[key] = value
    built = _build(metric, alias, k, level, options, text, aggregate)
    return _with_ci_level(built, ci_level, text)


#: The keyword that sets a metric's cutoff in its expression function and method, where
#: it is not ``k`` (``irm.ece(bins=20)`` is ``ece@20``): a refused cutoff is named by it.
_CUTOFF_KEYWORDS = {"ece": "bins"}


def request(
    metric: str,
    k: int | None = None,
    level: float | None = None,
    options: Mapping[str, ParamValue] | None = None,
    aggregate: str | None = None,
) -> MetricRequest:
    """Build a request from keyword arguments (the path the expression functions take).

    A numpy number (``k=np.int64(3)``, ``log_base=np.float64(10)``) is read as the
    Python number it equals: it was refused as no integer, or named
    ``dcg(log_base=np.float64(10.0))``, a name :func:`parse_metric` cannot read back.
    """
    entry = get_metric(metric)
    shown = f"irm.{entry.name}(...)"
    k, level = plain_number(k), plain_number(level)
    options = {name: plain_number(value) for name, value in (options or {}).items()}
    if k is not None:
        k = _check_k(k, shown, _CUTOFF_KEYWORDS.get(entry.name, "k"))
    if level is not None:
        level = _check_level(entry, level, shown)
    agg = None if aggregate is None else _check_aggregate(aggregate, shown)
    return _build(entry, None, k, level, options, shown, agg)


def _build(
    metric: Metric,
    alias: Alias | None,
    k: int | None,
    level: float | None,
    options: dict[str, ParamValue],
    shown: str,
    aggregate: Aggregate | None = None,
) -> MetricRequest:
    cutoff = alias.cutoff if alias is not None and alias.cutoff is not None else metric.cutoff
    called = alias.name if alias is not None else metric.name
    if cutoff == "required" and k is None:
        k = _ASSUMED_CUTOFF.get()  # parse_metric_list's usable=: the metric, not its cutoff
        if k is None:
            raise MetricParameterError(
                f"metric {shown!r}: {called} needs a cutoff, e.g. '{called}@10'"
            )
    if cutoff == "dropped":
        k = None  # ir_measures' SetP@5: its providers score the whole set (spec.CutoffRule)
    if cutoff == "none" and k is not None:
        raise MetricParameterError(
            f"metric {shown!r}: {called} takes no cutoff; use {metric.name!r} without '@{k}'"
        )
    judged_only = _check_judged_only(metric, options.pop("judged_only", False), shown, k)
    empty = _check_empty(metric, options.pop("empty_target_action", None), shown)
    resolved: list[tuple[str, ParamValue]] = []
    for param in metric.params:
        value = options.pop(param.name, param.default)
        if param.choices is not None and value not in param.choices:
            raise MetricParameterError(
                f"metric {shown!r}: {param.name}={value!r} is not allowed; "
                f"choose one of {', '.join(repr(c) for c in param.choices)}"
            )
        if param.check is not None:  # the declaration's own check (Param.check)
            try:
                value = param.check(value)
            except ValueError as error:
                raise MetricParameterError(f"metric {shown!r}: {error}") from None
        if k is None and value in param.with_cutoff:  # spec.Param.with_cutoff
            # a name's fix is a name; an expression function's (request()) its keywords
            example = (
                f"irm.{metric.name}(k=10, {param.name}={value!r})"
                if shown.startswith("irm.")
                else f'"{metric.name}({param.name}={value!r})@10"'
            )
            raise MetricParameterError(
                f"metric {shown!r}: {param.name}={value!r} reads the cutoff @k, and the "
                f"request has none, so it computes what {param.name}={param.default!r} "
                f"does: add a cutoff, e.g. {example}, or drop {param.name}"
            )
        resolved.append((param.name, value))
    if options:
        unknown = next(iter(options))
        known = [p.name for p in metric.params] + (["rel"] if metric.binary else [])
        if metric.whole is None:
            known.append("agg")
        raise MetricParameterError(
            f"metric {shown!r}: unknown parameter {unknown!r}; "
            f"{metric.name} takes {', '.join(known)}"
        )
    if metric.check_params is not None:  # the declaration's check across parameters
        try:
            metric.check_params(metric.name, k, dict(resolved))
        except ValueError as error:
            raise MetricParameterError(f"metric {shown!r}: {error}") from None
    if (
        aggregate is not None
        and aggregate != metric.aggregate
        and (
            metric.whole is not None  # one value of the whole table, declared so
            or (
                metric.route not in SUMMARIZED_ROUTES
                # the recommendation table's metrics: the plan knows which average over
                # users (these take agg=) and which describe all rows at once
                # (recsys/plan.py)
                and metric.route != "recsys"
            )
        )
    ):
        why = metric.whole or f"its {metric.route} route computes one summary of its own"
        if aggregate == "ci_halfwidth":
            raise MetricParameterError(
                f"metric {shown!r}: agg='ci_halfwidth' is the confidence interval of the mean "
                f"of per-query values; {metric.name} has none to summarize ({why}): drop "
                "agg='ci_halfwidth' (it summarizes per-query metrics such as ndcg@10 or "
                "rocauc@10)"
            )
        raise MetricParameterError(
            f"metric {shown!r}: agg={aggregate!r} summarizes per-query values; "
            f"{metric.name} has none to summarize ({why}), so agg= would be ignored: "
            f"drop agg={aggregate!r}"
        )
    if aggregate == metric.aggregate:
        aggregate = None
    return MetricRequest(metric, k, level, tuple(resolved), aggregate, judged_only, empty)


def _check_ci_level(value: object, shown: str) -> float:
    """``ci_level=``: the confidence level of ``agg='ci_halfwidth'``, in (0, 1)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0.0 < value < 1.0:
        return float(value)
    raise MetricParameterError(
        f"metric {shown!r}: ci_level={value!r} is not a confidence level; give a number "
        "between 0 and 1 (exclusive), e.g. ci_level=0.95 for a 95% interval"
    )


def _with_ci_level(built: MetricRequest, ci_level: float | None, shown: str) -> MetricRequest:
    """The request with ``ci_level=``, which only ``agg='ci_halfwidth'`` reads."""
    if ci_level is None:
        return built
    if built.aggregate != "ci_halfwidth":
        raise MetricParameterError(
            f"metric {shown!r}: ci_level is the confidence level of agg='ci_halfwidth', "
            f"and this name summarizes with agg={built.aggregate or built.metric.aggregate!r}; "
            "add agg='ci_halfwidth' or drop ci_level"
        )
    return replace(built, ci_level=None if ci_level == CI_LEVEL else ci_level)


def _check_empty(metric: Metric, value: ParamValue, shown: str) -> str | None:
    """torchmetrics' ``empty_target_action``: a query without a relevant document."""
    if value is None:
        return None
    if value not in EMPTY_TARGET_ACTIONS:
        raise MetricParameterError(
            f"metric {shown!r}: empty_target_action={value!r} is not allowed; choose one of "
            f"{', '.join(repr(a) for a in EMPTY_TARGET_ACTIONS)}"
        )
    if metric.integer or metric.level != "query" or "judgments" not in metric.reads:
        raise MetricParameterError(
            f"metric {shown!r}: empty_target_action sets the value of a query without a "
            f"relevant document; {metric.name} is not a per-query score of the judgments"
        )
    return str(value)


def _check_judged_only(metric: Metric, value: ParamValue, shown: str, k: int | None) -> bool:
    """ir_measures' ``judged_only=True``: unjudged documents removed before scoring;
    refused where that changes nothing (:meth:`Metric.reads_judged_only
    <polars_irmetrics.metrics.spec.Metric.reads_judged_only>`)."""
    flag = str(value).lower()
    if flag not in ("true", "false", "1", "0"):
        raise MetricParameterError(
            f"metric {shown!r}: judged_only must be True or False, got {value!r}"
        )
    if flag in ("true", "1") and "judgments" not in metric.reads:
        raise MetricParameterError(
            f"metric {shown!r}: judged_only removes the run's unjudged documents; "
            f"{metric.name} reads no relevance judgments"
        )
    if flag in ("true", "1") and not metric.reads_judged_only(k):
        what = (
            "reads no ranking (a count of the judgments or of the queries)"
            if not metric.ranking
            else "without a cutoff @k reads the judged documents alone (which of them the "
            "run retrieved, or their order), the same with the unjudged ones removed"
        )
        raise MetricParameterError(
            f"metric {shown!r}: judged_only removes the run's unjudged documents, and "
            f"{metric.name} {what}: it would change nothing; drop judged_only"
        )
    return flag in ("true", "1")


def writes_aggregate(text: str) -> bool:
    """Whether the metric name ``text`` sets ``agg=`` itself (``"P(agg='std')@5"``),
    not through a name that implies a summary (ir_measures' ``NumRet`` sums its
    per-query counts, as trec_eval does: its per-query values are still the counts).

    Examples
    --------
    >>> writes_aggregate("P(agg='std')@5"), writes_aggregate("NumRet"), writes_aggregate("P@5")
    (True, False, False)
    """
    tail = _RANX_LEVEL_RE.search(text)
    match = _NAME_RE.match(text if tail is None else text[: tail.start()])
    return match is not None and "agg" in _parse_params(match["params"], text)


def _check_aggregate(value: object, shown: str) -> Aggregate:
    for name in AGGREGATES:
        if value == name:
            return name
    raise MetricParameterError(
        f"metric {shown!r}: agg={value!r} is not allowed; choose one of "
        f"{', '.join(repr(a) for a in AGGREGATES)}"
    )


def _ranx_level(name: str, level: int, params: dict[str, ParamValue], shown: str) -> None:
    """ranx's ``-lN``: the relevance level of a binary metric; for ranx's graded ones,
    labels below N gain 0 (``ndcg@10-l2`` is ``trec_ndcg(gains='1=0')@10``)."""
    found = BY_NAME.get(name)
    if found is None or found[0].binary:
        params["rel"] = level
        return
    metric, alias = found
    if metric.name == "ndcg" and not (alias is not None and alias.fixed):
        if level > 1:
            params["gains"] = ",".join(f"{label}=0" for label in range(1, level))
        return
    if level <= 1:  # ranx's default: labels >= 1 gain, as here
        return
    raise MetricParameterError(
        f"metric {shown!r}: ranx's -l{level} on {name} gives labels below {level} no gain; "
        f"that is not expressible for {metric.name} here. The nearest is "
        f"trec_ndcg(gains='{','.join(f'{x}=0' for x in range(1, level))}') for ndcg "
        f"with linear gains, or {metric.name} on judgments with the labels below {level} "
        "set to 0"
    )


def _real_cutoff(name: str) -> str | None:
    """The parameter a real-valued cutoff of metric ``name`` sets, if it has one."""
    found = BY_NAME.get(name)
    return None if found is None else REAL_CUTOFFS.get(found[0].name)


def _parse_real(text: str, shown: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise MetricParameterError(
            f"metric {shown!r}: expected a number after '@', got {text!r}, e.g. 'IPrec@0.1'"
        ) from None


def _parse_k(k_text: str, shown: str) -> int:
    if not re.fullmatch(r"\d+", k_text) or int(k_text) < 1:
        raise MetricParameterError(
            f"metric {shown!r}: the cutoff must be a positive integer, got {k_text!r}"
        )
    return int(k_text)


def _check_k(k: object, shown: str, keyword: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise MetricParameterError(
            f"metric {shown!r}: {keyword} must be a positive integer or None, got {k!r}"
        )
    return k


def _check_level(metric: Metric, value: object, shown: str) -> float:
    if metric.threshold:
        raise MetricParameterError(
            f"metric {shown!r}: {metric.name} takes no relevance level 'rel' of its own: "
            "it weighs the labels, and where it counts relevant items (Elliot's "
            "rel_threshold, RecTools' Serendipity) it reads the call's: pass "
            "relevance_level= to irm.evaluate instead"
        )
    if not metric.binary:
        why = (
            "uses graded relevance"
            if "judgments" in metric.reads
            else "reads no relevance judgments"
        )
        raise MetricParameterError(
            f"metric {shown!r}: {metric.name} {why} and takes no relevance level 'rel'"
        )
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise MetricParameterError(
            f"metric {shown!r}: rel must be a number (the relevance level), got {value!r}"
        )
    return float(value)


def _parse_params(text: str | None, shown: str) -> dict[str, ParamValue]:
    out: dict[str, ParamValue] = {}
    spelled: dict[str, str] = {}  # each parameter's value as written
    if text is None or not text.strip():
        return out
    for item in _ITEM_RE.findall(text):  # commas inside quotes: gains='1=3,2=9'
        match = _PARAM_RE.match(item)
        if match is None:
            raise MetricParameterError(
                f"metric {shown!r}: cannot read parameter {item.strip()!r}; "
                "write key=value, e.g. gain='exponential'"
            )
        key, value = match["key"].lower(), _parse_value(match["value"])
        if key == "gains" and match["value"].startswith("{"):
            value = _gains_dict(match["value"], shown)
        if key in _PARAM_ALIASES:
            key, translate = _PARAM_ALIASES[key]
            if isinstance(value, str):
                value = translate.get(value.lower() if key == "ties" else value, value)
        written = match["value"].strip()
        if key in out:  # the last value would be read, the first dropped in silence
            raise MetricParameterError(
                f"metric {shown!r}: parameter {key!r} is given twice ({key}={spelled[key]} "
                f"and {key}={written}), and one metric reads one value; give it once"
            )
        out[key], spelled[key] = value, written
    return out


def _gains_dict(text: str, shown: str) -> str:
    """ir_measures' printed gains, ``{0:1,1:4}``, as a gains table, ``'0=1,1=4'``."""
    inner = text.strip()[1:-1].strip()
    pairs = []
    for item in inner.split(",") if inner else []:
        label, sep, value = item.partition(":")
        if not sep or not label.strip() or not value.strip():
            raise MetricParameterError(
                f"metric {shown!r}: cannot read gains {text!r}; write {{label: gain, ...}}, "
                "e.g. gains={0:1,1:4}"
            )
        pairs.append(f"{label.strip()}={value.strip()}")
    return ",".join(pairs)


def _parse_value(text: str) -> ParamValue:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


#: The cutoff a metric that needs one is read with while a caller's ``usable=`` check of
#: :func:`parse_metric_list` runs (``None``: a missing cutoff is refused).
_ASSUMED_CUTOFF: ContextVar[int | None] = ContextVar("assumed_cutoff", default=None)


def parse_metric_list(
    metrics: str | Iterable[str],
    usable: Callable[[list[tuple[str, MetricRequest]]], None] | None = None,
) -> list[tuple[str, MetricRequest]]:
    """``(label, request)`` per metric; a label is the string as the user gave it.

    A cutoff range (``"recall@1..100"``, ``"P@10..100:10"``) becomes one entry per
    cutoff, labelled with the user's spelling and that cutoff (``"recall@1"``, ...);
    they all go into the plan's one group-by.

    ``usable``, where given, is the caller's refusal of a metric it cannot use at all
    (one that reads a table the caller does not take): it runs before a metric's
    missing cutoff is refused, with such a metric read at ``@10``, so that the fix of
    the first refusal ("needs a cutoff, e.g. 'pop_rsp@10'") never leads to the second.

    >>> def ranking_only(requests):
    ...     for label, request in requests:
    ...         if "interactions" in request.reads:
    ...             raise MetricParameterError(f"metric {label!r} reads the interactions")
    >>> parse_metric_list("pop_rsp", usable=ranking_only)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'pop_rsp' reads the interactions
    >>> parse_metric_list("mar", usable=ranking_only)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'mar': mar needs a cutoff, e.g. 'mar@10'
    """
    if usable is None:
        return _parse_list(metrics)
    try:
        parsed = _parse_list(metrics)
    except IrmError:  # a missing cutoff? read at @10, the metric may be refused first
        token = _ASSUMED_CUTOFF.set(10)
        try:
            assumed = _parse_list(metrics)
        except IrmError:  # refused for its spelling: the first parse's words stand
            assumed = None
        finally:
            _ASSUMED_CUTOFF.reset(token)
        if assumed is not None:
            usable(assumed)
        raise
    usable(parsed)  # each metric string parsed once where nothing is refused
    return parsed


def _parse_list(metrics: str | Iterable[str]) -> list[tuple[str, MetricRequest]]:
    """:func:`parse_metric_list` without its ``usable`` check."""
    if not isinstance(metrics, str) and not (
        isinstance(metrics, Iterable) and not isinstance(metrics, Mapping)
    ):
        raise MetricParameterError(
            f"metrics must be a metric name or a list of names, got {metrics!r}; pass names "
            "such as ['ndcg@10', 'map']"
        )
    given = [metrics] if isinstance(metrics, str) else list(metrics)
    odd = [m for m in given if not isinstance(m, str)]
    if odd:
        raise MetricParameterError(
            f"metrics must be names (str), got {odd[0]!r} among them; pass names such as "
            "['ndcg@10', 'map']"
        )
    if not given:
        raise MetricParameterError("no metrics given: pass names such as ['ndcg@10', 'map']")
    names = [name for text in given for name in expand_metric_names(text)]
    seen: set[str] = set()
    out = []
    for name in names:
        request = parse_metric(name)
        if name in seen:
            raise MetricParameterError(f"metric {name!r} is listed twice; list it once")
        seen.add(name)
        out.append((name, replace(request, given=name)))
    return out


def repeated_metric(
    requests: Sequence[tuple[str, MetricRequest]],
) -> tuple[str, str, str] | None:
    """The first two labels that spell one metric (``'P@5'`` and ``'P_5'``, ``'map'``
    and ``'ap'``: one canonical name), with that name, or ``None``: read where every
    metric's test joins one family of a multiple-testing correction, which would count
    the one test twice (:func:`~polars_irmetrics.compare`,
    :func:`~polars_irmetrics.ab_test`). The same label twice is refused by
    :func:`parse_metric_list` itself.

    >>> repeated_metric(parse_metric_list(["P@5", "ndcg@10", "P_5"]))
    ('P@5', 'P_5', 'precision@5')
    >>> repeated_metric(parse_metric_list(["P@5", "P@10"])) is None
    True
    """
    first: dict[str, str] = {}
    for label, request in requests:
        if request.name in first:
            return first[request.name], label, request.name
        first[request.name] = label
    return None
