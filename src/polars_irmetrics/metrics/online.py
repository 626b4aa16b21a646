"""Click and interaction metrics of an impression log: CTR, abandonment, click nDCG, ...

An impression log has one row per item shown: the session (or query) it was shown in,
its ``position`` (1 = top), whether it was ``clicked``, and optionally the ``dwell``
time of the click (seconds), whether it ``converted`` and a ``timestamp``. Each
formula here is one aggregation over the impressions of one session, seen through a
:class:`ClickScope`: a :class:`~polars_irmetrics.metrics.scope.TableScope` whose rank
is the position and whose relevance is the click (1) or not (0), with the log's other
columns beside it.

Click-based nDCG, precision, MRR and session CTR are the offline formulas of
:mod:`polars_irmetrics.metrics.core` called on that scope: the session is a judged
table whose rank is the position and whose relevance is the click, or the satisfied
click (``signal='satisfied'``: a click with ``dwell >= dwell_threshold``).

Two kinds of aggregate over sessions:

* *ratio* metrics (:attr:`ClickMetric.ratio`): CTR, satisfied-click rate and mean click
  position are a ratio of sums over every impression or click of a segment
  (``sum(clicks) / sum(impressions)``), not a mean of per-session ratios;
* the others are a per-session value averaged over the sessions where it is defined
  (time to first click and the median click position are undefined, null, in a session
  without a click).

:func:`polars_irmetrics.evaluate_online` computes them; :func:`polars_irmetrics.evaluate`
refuses them (it has no clicks).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import check_number, divide, ranked, ratio
from polars_irmetrics.metrics.core import CORE_METRICS
from polars_irmetrics.metrics.scope import Scope, TableScope
from polars_irmetrics.metrics.spec import Alias, Input, Metric, Param, Params, ParamValue

__all__ = ["ONLINE_METRICS", "ClickMetric", "ClickScope"]

Compute = Callable[[Scope, Params], pl.Expr]

#: Clicks with at least this dwell (seconds) are satisfied clicks, by default.
DEFAULT_DWELL = 30.0

SIGNAL = Param(
    "signal",
    "click",
    ("click", "satisfied"),
    "relevance of an impression: its click, or a satisfied click (dwell >= dwell_threshold)",
)
_check_dwell_range = check_number(
    "dwell_threshold",
    low=0.0,
    what="a number of seconds >= 0",
    hint="e.g. sat_click_rate(dwell_threshold=30)",
)


def _check_dwell(value: ParamValue) -> ParamValue:
    """:data:`DWELL`'s check: a number of seconds >= 0, and an integer one that a
    Float64 holds exactly (the dwells are compared with it in Float64, where 2**53 + 1
    reads as 2**53: a dwell of 2**53 would be satisfied)."""
    value = _check_dwell_range(value)
    if isinstance(value, int) and float(value) != value:
        raise ValueError(
            f"dwell_threshold must be a number of seconds that a Float64 holds exactly, got "
            f"{value!r} (read as {float(value)!r}: the dwells are compared with it in "
            "Float64); rescale the dwells and the threshold by one factor, e.g. to "
            "thousands of seconds"
        )
    return value


DWELL = Param(
    "dwell_threshold",
    DEFAULT_DWELL,
    None,
    "dwell (seconds) from which a click is satisfied",
    check=_check_dwell,
)


def _check_signal_dwell(value: ParamValue) -> ParamValue:
    return None if value is None else _check_dwell(value)


#: :data:`DWELL` of the metrics with a :data:`SIGNAL`: read only with
#: ``signal='satisfied'`` (:func:`_check_signal`), so ``None`` by default, which tells
#: a threshold given from none (the satisfied signal's default, :data:`DEFAULT_DWELL`).
SIGNAL_DWELL = Param(
    "dwell_threshold",
    None,
    None,
    "dwell (seconds) from which a click is satisfied, read with signal='satisfied' (default 30)",
    check=_check_signal_dwell,
)


def _check_signal(metric: str, k: int | None, options: Mapping[str, ParamValue]) -> None:
    """The parser's check of :data:`SIGNAL` and :data:`SIGNAL_DWELL`
    (:attr:`Metric.check_params <polars_irmetrics.metrics.spec.Metric.check_params>`):
    ``dwell_threshold`` only with ``signal='satisfied'``, the signal that reads it."""
    dwell = options.get("dwell_threshold")
    if dwell is not None and options.get("signal", "click") != "satisfied":
        raise ValueError(
            f"dwell_threshold={dwell!r} applies only with signal='satisfied' (a click "
            f"counts whatever its dwell otherwise); add it, e.g. {metric}(signal="
            f"'satisfied',dwell_threshold={dwell!r}), or drop dwell_threshold"
        )


class ClickScope(TableScope):
    """The impressions of one session inside a group-by, in position order.

    ``rank`` is the position and ``rel`` the click (1 or 0); :attr:`dwell`,
    :attr:`converted` and :attr:`timestamp` are the log's other columns in the same
    order. Reading one records it in :attr:`used`, so the entry point asks the log for
    that column only when a metric reads it.

    Parameters
    ----------
    position, clicked
        Column names of the position (1 = top) and of the click flag (Boolean).
    dwell, converted, timestamp
        Expressions for the dwell in seconds (Float64), the conversion flag (Boolean)
        and the time of the impression (in seconds, or in units of which
        ``per_second`` make a second).
    per_second
        The timestamp's units per second (1.0: seconds).
    """

    def __init__(
        self,
        position: str,
        clicked: str,
        *,
        dwell: pl.Expr,
        converted: pl.Expr,
        timestamp: pl.Expr,
        per_second: float = 1.0,
    ) -> None:
        super().__init__(clicked, position)
        self._position = pl.col(position)
        self.clicked = self._in_order(pl.col(clicked).cast(pl.Boolean))
        self.rel = self.clicked.cast(pl.Int64)
        self._dwell = dwell
        self._converted = converted
        self._timestamp = timestamp
        #: How many units of :attr:`timestamp` make a second (1e6: whole microseconds
        #: since the epoch, exact; a difference of them is divided last).
        self.per_second = per_second
        #: The optional columns a formula read: ``"dwell"``, ``"converted"``, ``"timestamp"``.
        self.used: set[str] = set()

    def _in_order(self, value: pl.Expr) -> pl.Expr:
        return value.sort_by(self._position, nulls_last=True, maintain_order=True)

    @property
    def dwell(self) -> pl.Expr:
        """Dwell time of each impression, in seconds, in position order."""
        self.used.add("dwell")
        return self._in_order(self._dwell)

    @property
    def converted(self) -> pl.Expr:
        """Whether each impression converted, in position order."""
        self.used.add("converted")
        return self._in_order(self._converted)

    @property
    def timestamp(self) -> pl.Expr:
        """Time of each impression in seconds, in position order."""
        self.used.add("timestamp")
        return self._in_order(self._timestamp)

    def judged(self, relevance: pl.Expr) -> ClickScope:
        """This scope with ``relevance`` (already in position order) as the relevance:
        the session as a judged table for the offline formulas."""
        view = copy.copy(self)
        view.rel = relevance
        return view


def _clicks(s: Scope) -> ClickScope:
    if not isinstance(s, ClickScope):
        raise MetricParameterError(
            "click metrics read an impression log's clicks; compute them with "
            "irm.evaluate_online(log, metrics), not on a judged table"
        )
    return s


def _satisfied(s: ClickScope, p: Params) -> pl.Expr:
    given = p.options.get("dwell_threshold") is not None  # None: SIGNAL_DWELL's default
    threshold = p.number("dwell_threshold") if given else DEFAULT_DWELL
    return s.clicked & (s.dwell >= threshold)


def _signal(s: ClickScope, p: Params) -> ClickScope:
    """The session as a judged table: relevance 1 for a click (or a satisfied click)."""
    if p.options.get("signal", "click") == "satisfied":
        return s.judged(_satisfied(s, p).cast(pl.Int64))
    return s


def _core(name: str) -> Compute:
    return next(m.compute for m in CORE_METRICS if m.name == name)


def _offline(name: str, **options: str) -> Compute:
    """A core formula over the session as a judged table (click or satisfied click)."""
    formula = _core(name)

    def compute(s: Scope, p: Params) -> pl.Expr:
        judged = _signal(_clicks(s), p)
        return formula(judged, Params(k=p.k, level=1.0, options=options))

    return compute


# --------------------------------------------------------------------------- formulas
def _clicks_at(s: Scope, p: Params) -> pl.Expr:
    c = _clicks(s)
    return (c.clicked & ranked(c, p.k)).sum().cast(pl.Float64)


def _impressions_at(s: Scope, p: Params) -> pl.Expr:
    return ranked(s, p.k).sum().cast(pl.Float64)


def _satisfied_clicks(s: Scope, p: Params) -> pl.Expr:
    return _satisfied(_clicks(s), p).sum().cast(pl.Float64)


def _all_clicks(s: Scope, p: Params) -> pl.Expr:
    return _clicks(s).clicked.sum().cast(pl.Float64)


def _click_position_sum(s: Scope, p: Params) -> pl.Expr:
    c = _clicks(s)
    # summed as Int128, then rounded once: a sum in the position's own dtype wraps
    # around (two clicks at Int32 positions near 2**31 gave a mean position of -1.5)
    return pl.when(c.clicked).then(c.rank.cast(pl.Int128)).sum().cast(pl.Float64)


def _clicks_per_session(s: Scope, p: Params) -> pl.Expr:
    return _offline("num_rel_ret")(s, p).cast(pl.Float64)


def _abandonment(s: Scope, p: Params) -> pl.Expr:
    return 1.0 - _offline("hit_rate")(s, p)


def _median_click_position(s: Scope, p: Params) -> pl.Expr:
    c = _clicks(s)
    return pl.when(c.clicked).then(c.rank).median().cast(pl.Float64)


def _time_to_first_click(s: Scope, p: Params) -> pl.Expr:
    c = _clicks(s)
    time = c.timestamp
    # the difference of whole units (a Datetime's), then seconds: exact to the unit
    waited = (pl.when(c.clicked).then(time).min() - time.min()).cast(pl.Float64)
    return waited if c.per_second == 1.0 else divide(waited, c.per_second)


def _conversion_rate(s: Scope, p: Params) -> pl.Expr:
    return _clicks(s).converted.fill_null(False).any().cast(pl.Float64)


@dataclass(frozen=True)
class ClickMetric(Metric):
    """A click metric; with :attr:`ratio`, a ratio of sums over the sessions.

    Attributes
    ----------
    ratio
        ``(numerator, denominator)``: per-session formulas whose sums over a segment
        (or a randomization unit) make the metric, ``sum(numerator) / sum(denominator)``
        (CTR = clicks / impressions). A session's own value is its ratio (null when its
        denominator is 0: a rate over the clicks of a session without one). ``None``:
        the metric is the mean of the per-session values that are not null.
    binary
        ``False``: a click metric has no relevance level (``rel=``).
    """

    binary: bool = False
    ratio: tuple[Compute, Compute] | None = None


def _ratio_metric(numerator: Compute, denominator: Compute) -> Compute:
    def compute(s: Scope, p: Params) -> pl.Expr:
        # a session whose denominator is 0 (no click, for a rate over the clicks) has no
        # value: null, left out as a segment's sums leave it out, never a 0 that reads
        # as the best mean click position
        den = denominator(s, p)
        return pl.when(den > 0).then(ratio(numerator(s, p), den))

    return compute


_CLICKS: tuple[Input, ...] = ("run", "clicks")

# --------------------------------------------------------------------------- registry
ONLINE_METRICS: tuple[Metric, ...] = (
    ClickMetric(
        "ctr",
        "click-through rate: clicks per impression in the top k",
        _ratio_metric(_clicks_at, _impressions_at),
        ratio=(_clicks_at, _impressions_at),
        aliases=(Alias("click_through_rate"),),
        reads=_CLICKS,
        formula="sum(clicks at positions <= k) / sum(impressions at positions <= k) over "
        "every session of the segment (a ratio of sums; the A/B test uses the delta method).",
        latex=(
            r"\mathrm{CTR@}k = \frac{\sum_{s} |\{\text{clicks at } r \le k\}|}{\sum_{s}"
            r" |\{\text{impressions at } r \le k\}|}"
        ),
    ),
    ClickMetric(
        "session_ctr",
        "share of sessions with a click in the top k",
        _offline("hit_rate"),
        aliases=(Alias("session_click_rate"),),
        reads=_CLICKS,
        matches={
            "irm.evaluate": "hit_rate@k of the session as a judged table (clicks as relevance), "
            "to 1e-15"
        },
        formula="per session, 1 if a position <= k was clicked, else 0 (hit_rate with clicks "
        "as relevance); mean over sessions.",
        latex=(
            r"\frac{1}{|S|}\sum_{s \in S} \mathbb{1}\left[\exists\, r \le k : c_{s,r} ="
            r" 1\right]"
        ),
    ),
    ClickMetric(
        "clicks_per_session",
        "number of clicks in a session (in the top k)",
        _clicks_per_session,
        reads=_CLICKS,
        matches={
            "irm.evaluate": "num_rel_ret@k of the session as a judged table (clicks as "
            "relevance), "
            "to 1e-15"
        },
        formula="per session, the clicks at positions <= k (num_rel_ret with clicks as "
        "relevance); mean over sessions.",
        latex=r"\frac{1}{|S|}\sum_{s \in S} \sum_{r \le k} c_{s,r}",
    ),
    ClickMetric(
        "abandonment",
        "share of sessions without any click",
        _abandonment,
        cutoff="none",
        aliases=(Alias("abandonment_rate"),),
        higher_is_better=False,
        reads=_CLICKS,
        formula="per session, 1 if nothing was clicked, else 0 (1 - hit_rate with clicks as "
        "relevance); mean over sessions.",
        latex=r"\frac{1}{|S|}\sum_{s \in S} \mathbb{1}\left[\textstyle\sum_r c_{s,r} = 0\right]",
    ),
    ClickMetric(
        "click_mrr",
        "reciprocal position of the first click",
        _offline("mrr"),
        params=(SIGNAL, SIGNAL_DWELL),
        check_params=_check_signal,
        aliases=(Alias("click_rr"),),
        reads=_CLICKS,
        matches={
            "irm.evaluate": "mrr@k of the session as a judged table (clicks as relevance), "
            "to 1e-15"
        },
        formula="per session, 1 / position of the first click (within the top k), 0 without a "
        "click (mrr with clicks as relevance); mean over sessions.",
        latex=r"\frac{1}{|S|}\sum_{s \in S} \frac{1}{\min\{r \le k : c_{s,r} = 1\}}",
    ),
    ClickMetric(
        "mean_click_position",
        "average position of a click",
        _ratio_metric(_click_position_sum, _all_clicks),
        cutoff="none",
        ratio=(_click_position_sum, _all_clicks),
        higher_is_better=False,
        reads=_CLICKS,
        formula="sum of the positions of the clicks / number of clicks, over every click of "
        "the segment (a ratio of sums).",
        latex=r"\frac{\sum_{s}\sum_{r} r\, c_{s,r}}{\sum_{s}\sum_{r} c_{s,r}}",
    ),
    ClickMetric(
        "median_click_position",
        "median position of the clicks of a session",
        _median_click_position,
        cutoff="none",
        higher_is_better=False,
        reads=_CLICKS,
        formula="per session, the median position of its clicks (null without a click); mean "
        "over the sessions with a click.",
        latex=(
            r"\operatorname{mean}_{s:\, \text{clicked}} \operatorname{median}\{r : c_{s,r} ="
            r" 1\}"
        ),
    ),
    ClickMetric(
        "time_to_first_click",
        "seconds from a session's first impression to its first click",
        _time_to_first_click,
        cutoff="none",
        higher_is_better=False,
        reads=_CLICKS,
        formula="per session, timestamp of the first click - first timestamp of the session, "
        "in seconds (null without a click); mean over the sessions with a click.",
        latex=(
            r"\operatorname{mean}_{s:\, \text{clicked}} \big(t_{\text{first click}} -"
            r" t_{\text{first impression}}\big)"
        ),
    ),
    ClickMetric(
        "sat_click_rate",
        "share of clicks that are satisfied (dwell >= dwell_threshold)",
        _ratio_metric(_satisfied_clicks, _all_clicks),
        cutoff="none",
        params=(DWELL,),
        ratio=(_satisfied_clicks, _all_clicks),
        aliases=(Alias("satisfied_click_rate"),),
        reads=_CLICKS,
        formula="sum(clicks with dwell >= dwell_threshold) / sum(clicks) over every click of "
        "the segment (a ratio of sums; default threshold 30 s).",
        latex=r"\frac{|\{\text{clicks with dwell} \ge \tau\}|}{|\{\text{clicks}\}|}",
    ),
    ClickMetric(
        "conversion_rate",
        "share of sessions with a conversion",
        _conversion_rate,
        cutoff="none",
        reads=_CLICKS,
        formula="per session, 1 if an impression converted, else 0; mean over sessions.",
        latex=(
            r"\frac{1}{|S|}\sum_{s \in S} \mathbb{1}\left[\exists\, r :"
            r" \text{converted}_{s,r}\right]"
        ),
    ),
    ClickMetric(
        "click_ndcg",
        "nDCG of the session's ranking with clicks as relevance",
        _offline("ndcg", gain="linear", ideal="judgments"),
        params=(SIGNAL, SIGNAL_DWELL),
        check_params=_check_signal,
        reads=_CLICKS,
        matches={
            "irm.evaluate": "ndcg@k of the session as a judged table (clicks as relevance), "
            "to 1e-15"
        },
        formula="ndcg@k of the session as a judged table: rank = position, relevance = 1 "
        "for a click (or a satisfied click), 0 otherwise; the ideal puts the clicks on top.",
        latex=r"\frac{1}{|S|}\sum_{s} \mathrm{nDCG@}k\ \text{with } \ell_r = c_{s,r}",
    ),
    ClickMetric(
        "click_precision",
        "share of the top k that was clicked",
        _offline("precision"),
        params=(SIGNAL, SIGNAL_DWELL),
        check_params=_check_signal,
        reads=_CLICKS,
        matches={
            "irm.evaluate": "precision@k of the session as a judged table (clicks as relevance), "
            "to 1e-15"
        },
        formula="precision@k of the session as a judged table (clicks as relevance): "
        "clicks at positions <= k / k; mean over sessions.",
        latex=r"\frac{1}{|S|}\sum_{s} \frac{1}{k}\sum_{r \le k} c_{s,r}",
    ),
)
