"""The lazy plan of ``irm.evaluate(log, ["ips", "dr"], policy=pi, reward_model=q)``.

One lazy polars query, no Python loop over rounds:

1. The evaluation policy (one row per ``(round_id[, position], action)`` with ``prob``)
   is paired with the reward model (the same keys with ``q_hat``), as a full join would
   (a logged action the policy does not list still finds its ``q_hat``): rows that line
   up in the two tables (the same ids at the same row) are paired as they stand, only
   the others are joined.
2. Each log row is joined with its round's (and position's) rows of that table, and one
   ``group_by`` over the log rows reads the logged action's probability and ``q_hat``,
   the round's sum of probabilities, the reward model's value of the policy
   ``sum_a prob q_hat / sum_a prob`` (numpy's ``average``, as obp) and the checks of the
   two tables, in one pass.
3. Each estimator is a formula of the row's terms
   (:func:`~polars_irmetrics.metrics.ope.contribution`), averaged over the rows of each
   ``by`` group, or given per row with ``per_query=True``.

The policy and reward model may also be in obp's shape, one row per round (and
position) with ``prob`` and ``q_hat`` lists indexed by action (detected from the
schema): each log row then meets one row of each table (paired where the rows line up,
joined otherwise) and reads the logged action's item with ``list.get`` and the round's
sums over the list's items (:func:`_listed_rows`), the same exact sums, so the same bits.

A logged action the policy table does not list has probability 0 there. Policy rounds
the log does not have are not read (nor checked). The data checks are counted in the
same pass and raised when the plan is collected, naming the table, the column and the
first round that fails (the smallest id written as text):

* the log: a ``pscore`` that is null, NaN, 0, negative or above 1; a null, NaN or infinite reward;
  rewards other than 0 that are all subnormal (below 2**-1022), or a reward other than 0
  too small beside the log's largest (its magnitude times the rewards' scale below
  2**-30: :mod:`~polars_irmetrics.ope.scale`), whose digits the exact sums would lose;
* the policy: a logged round (and position) it lacks (:class:`QuerySetError`); a ``prob``
  null, NaN, negative or above 1; probabilities of a round (and position) that do not sum
  to 1 within ``1e-5`` (numpy's ``allclose``, which obp checks); an action listed twice;
* the reward model: the logged action, or an action the policy gives a positive
  probability, without a ``q_hat`` (:class:`QuerySetError`), or a null or NaN ``q_hat``;
  an action the policy gives a positive probability with a ``q_hat`` that is infinite
  or 2**62 or more in magnitude (so that a round's ``sum_a prob q_hat`` is one exact
  Int128 sum: :func:`~polars_irmetrics.ope.sums.bounded_columns`), or one other than 0
  too small at the rewards' scale (its magnitude times it below 2**-30), for the logged
  action or an action the policy gives a positive probability; an infinite ``q_hat``
  (at the rewards' scale) for the logged action, even where the policy gives it 0.

Which checks run depends on the tables given, never on the metrics asked for; the ids'
dtypes (``round_id``, ``action``, ``position``) must be alike in every table, checked
when the plan is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
    SupportWarning,
)
from polars_irmetrics.ground.known_schema import dropped, mapped, schema_of, without
from polars_irmetrics.ground.options import (
    EvalOptions,
    log_key_error,
    metrics_named,
    refuse_result_keys,
)
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import (
    INTERNAL,
    check_numeric,
    is_text,
    require_columns,
    warn_from_plan,
)
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics.ope import (
    CASCADE_METRICS,
    MODEL_METRICS,
    SLATE_COLUMNS,
    WEIGHTED,
    OpeTerms,
    components,
    contribution,
    effective_weight,
)
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import fixed_float, fixed_sum, fixed_units
from polars_irmetrics.ope.checks import (
    SHAPES,
    Check,
    action_shift,
    broken_shape,
    by_null_checks,
    check_interval_read,
    check_keys,
    check_position,
    id_column,
    in_logged_rounds,
    infinite_reward_check,
    listed_slots,
    log_id_checks,
    null_check,
    null_id_checks,
    policy_below_check,
    raising,
    round_hint,
    scaled_tiny,
    shape_check,
    slot_overlap,
    split_round_checks,
    split_round_flags,
    subnormal_reward_check,
    tiny_reward_check,
    warn_unshrunk,
    warning_unsupported,
    with_null_ids,
    with_policy_below,
    with_wide_ids,
    with_wide_q_hat,
    with_wide_reward_check,
)
from polars_irmetrics.ope.intervals import (
    BUCKET,
    bootstrap_part,
    joined_intervals,
    with_intervals,
)
from polars_irmetrics.ope.normal import normal_interval, wants_normal
from polars_irmetrics.ope.rounds import NUM_ROUNDS, over_rounds, unweighted_warning
from polars_irmetrics.ope.scale import FLOOR, SCALE, scale_column, sum_scale, unscaled
from polars_irmetrics.ope.slates import build_slate_plan, log_propensity_check
from polars_irmetrics.ope.sums import (
    BOUND,
    PartsPlan,
    Summary,
    beyond_range,
    bounded_columns,
    bounded_list_columns,
    effective_sample_size,
    exact_mean,
    exact_sum,
    unscaled_total,
    with_exact_totals,
)

__all__ = [
    "MEAN_WEIGHT",
    "NUM_ROUNDS",
    "NUM_ROWS",
    "PROB",
    "Q_HAT",
    "SUM_TOLERANCE",
    "WMAX",
    "build_ope_parts",
    "build_ope_plan",
    "build_ope_rows",
    "warn_unsupported",
    "warn_unsupported_groups",
]

#: The policy table's probability column and the reward model's estimate column.
PROB = "prob"
Q_HAT = "q_hat"
#: How far from 1 a round's probabilities may sum (numpy's ``allclose`` at 1: 1e-5 + 1e-8).
SUM_TOLERANCE = 1e-5 + 1e-8
#: The column counting the log rows averaged.
NUM_ROWS = "num_rows"
#: The largest importance weight of a ``by`` group, beside its sums (dropped from the
#: result by :func:`warn_unsupported_groups`).
WMAX = f"{INTERNAL}wmax"
#: The mean weight of a ``by`` group, read by the self-normalised estimators' rows.
MEAN_WEIGHT = f"{INTERNAL}mean_weight"
_NW = f"{INTERNAL}nw"
#: The smallest normal float64: a weight other than 0 below it is refused.
_NORMAL = 2.0**-1022
#: The weights' scale of ``per_query=True``'s mean weights (one plan).
_WSCALE = f"{INTERNAL}wscale"

_PI = f"{INTERNAL}pi"
_PROB = f"{INTERNAL}prob"
_IN_Q = f"{INTERNAL}in_q"
_ACT = f"{INTERNAL}act"
_ROW = f"{INTERNAL}row"
_TRUE = pl.lit(True)
_Q = f"{INTERNAL}q"
_N_P = f"{INTERNAL}n_p"
_PSUM = f"{INTERNAL}psum"
_PBAD = f"{INTERNAL}pbad"
_DUP = f"{INTERNAL}dup"
_DM = f"{INTERNAL}dm"
_QCODE = f"{INTERNAL}qcode"
_EQ = f"{INTERNAL}eq"
_VALUE = f"{INTERNAL}value"
_QL = f"{INTERNAL}q_list"
_ACT_BAD = f"{INTERNAL}act_bad"
_LEN_BAD = f"{INTERNAL}len_bad"
_P_DUP = f"{INTERNAL}p_dup"
_Q_DUP = f"{INTERNAL}q_dup"
_PQ = f"{INTERNAL}pq"
_PAIRED = f"{INTERNAL}paired"
_TWICE = f"{INTERNAL}twice"
_FACTS = f"{INTERNAL}facts"
#: The bits of :data:`_FACTS` (:func:`_rows`): the policy lists the round; a probability
#: outside [0, 1]; ``q_hat`` null or NaN, or too large, where the policy may go; a NaN
#: term of the round's ``sum(prob * q_hat)``; a table's row without an action.
#: (_Q_NULL and _Q_HUGE are :func:`_q_codes`' 1 and 2 times 4.)
_HAS_P, _P_BAD, _Q_NULL, _Q_HUGE, _PQ_NAN, _ACT_NULL = 1, 2, 4, 8, 16, 32
#: The log row's own facts (:func:`_log_facts`), bits of :data:`_FACTS` too.
_LOG_ACT_NULL, _LOG_TWICE = 64, 128
#: ``q_hat`` other than 0 too small at the rewards' scale where the policy may go
#: (:func:`~polars_irmetrics.ope.checks.scaled_tiny`), a bit of :data:`_FACTS` too.
_Q_SMALL = 256
#: The round has a ``q_hat`` of :data:`_Q_SMALL` (read from the bits, or the lists).
_QTINY = f"{INTERNAL}qtiny"
_LOG_FACTS = f"{INTERNAL}log_facts"
#: The log row's action is null; the log lists its round (and position) twice.
_NULL_LOGGED = f"{INTERNAL}null_logged"
_LOGGED_TWICE = f"{INTERNAL}logged_twice"
_POLICY_BELOW = f"{INTERNAL}policy_below"
#: A row of the policy (or reward model) with a null action: refused.
_NULL_ACT = f"{INTERNAL}null_act"

Requests = Sequence[tuple[str, MetricRequest]]


def build_ope_parts(
    log: pl.LazyFrame,
    requests: Requests,
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    options: EvalOptions,
    scale: float | None = None,
    peaks: dict[str, float | None] | None = None,
) -> PartsPlan:
    """The sums of :func:`build_ope_plan`'s estimates over one part of the log (whole
    rounds, with every policy and reward-model row of those rounds), and how the parts
    merge into its result, to the last bit (:mod:`polars_irmetrics.ope.sums`): the
    out-of-core path and the Spark and Dask engines (:mod:`polars_irmetrics.ope.parts`).
    Nothing is checked against the other parts here: the checks' counts travel in the
    frame and are raised by the merge; the support warning is the caller's
    (:func:`warn_unsupported`). ``scale``: the rewards' scale of the whole log
    (:func:`~polars_irmetrics.ope.scale.scale_from_peaks`), the same for every part;
    ``None``: this part's own (a part that is the whole log). ``peaks``: the whole log's
    largest magnitude of each sum's terms, which scale the sums
    (:meth:`~polars_irmetrics.ope.sums.Summary.part`); ``None``: every scale 1, a first
    pass whose parts tell whether they are read again at other scales
    (:meth:`~polars_irmetrics.ope.sums.Summary.rescaled`)."""
    plan = _ope_plan(
        log, requests, policy, reward_model, options, parts=True, scale=scale, peaks=peaks or {}
    )
    if not isinstance(plan, PartsPlan):  # pragma: no cover - parts=True gives parts
        raise TypeError("the parts of an off-policy plan")
    return plan


def build_ope_rows(
    log: pl.LazyFrame,
    requests: Requests,
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    options: EvalOptions,
    weights: pl.LazyFrame,
    scale: float | None = None,
) -> pl.LazyFrame:
    """``per_query=True`` over one part of the log (whole rounds): each row's
    contribution as :func:`build_ope_plan` gives it, the self-normalised estimators
    reading the mean weight of the whole ``by`` group from ``weights`` (the merge of
    :func:`build_ope_parts`'s first pass with ``per_query=True``: the ``by`` keys and
    :data:`MEAN_WEIGHT`), so the same bits as the one plan. No support warning (the
    caller's, over the whole log). ``scale``: the rewards' scale of the whole log, as
    :func:`build_ope_parts` reads it."""
    plan = _ope_plan(
        log, requests, policy, reward_model, options, parts=False, weights=weights, scale=scale
    )
    if isinstance(plan, PartsPlan):  # pragma: no cover - parts=False gives the plan
        raise TypeError("an off-policy plan")
    return unscaled(plan, [label for label, _ in requests])


def build_ope_plan(
    log: pl.LazyFrame,
    requests: Requests,
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    options: EvalOptions,
    *,
    scale: float | None = None,
) -> pl.LazyFrame:
    """The lazy off-policy evaluation of ``requests`` over ``log``.

    Parameters
    ----------
    log
        Logged feedback: one row per logged round (and position): ``options.round_id``,
        ``options.action``, ``options.reward``, ``options.propensity`` (the logging
        policy's probability of the logged action), ``options.position`` when the log
        has that column, and the ``by`` keys.
    requests
        The parsed metrics; every one reads ``"policy"``.
    policy
        The evaluation policy: one row per ``(round_id[, position], action)`` with its
        probability ``prob`` (the long form); or obp's shape, one row per
        ``(round_id[, position])`` with ``prob`` a List or Array indexed by action
        (``action_dist[:, a, pos]``; the log's actions are then the integers 0 to
        A - 1), read from the schema: the same estimates, to the bit.
    reward_model
        ``q_hat`` per ``(round_id[, position], action)``, for ``dm`` and the doubly
        robust estimators, in the policy's shape (a list per round with a list-shaped
        policy); ``None`` when no metric reads it.
    options
        The evaluation's options (:func:`polars_irmetrics.evaluate`).
    scale
        The rewards' power of two (:mod:`polars_irmetrics.ope.scale`): ``None``, this
        log's own; a part of a split log reads the whole log's.

    Returns
    -------
    pl.LazyFrame
        Means (default): one row per ``by`` group with ``num_rows`` (the log rows
        averaged), one Float64 column per metric, then, after each weighted estimator,
        ``<metric>_ess`` (the effective sample size of its weights, ``(sum w)^2 / sum
        w^2``; 0 where every weight is 0) and ``<metric>_max_weight``; an empty log (no
        ``by`` key): one row, ``num_rows`` 0 and every other column null.
        ``per_query=True``: one row per log row (the ``by`` keys, ``round_id`` and
        ``position``) with each row's contribution, whose mean over the group is the
        estimate.

    Examples
    --------
    Three rounds, two actions; the logger chose ``a`` with probability 0.5 in every
    round; the evaluation policy chooses ``a`` with 0.9, 0.5 and 0.1 in rounds 1, 2
    and 3. The weights are 0.9/0.5 = 1.8, 1.0 and 0.2; the rewards 1, 0, 1:

    * ``ips`` = (1.8 * 1 + 1.0 * 0 + 0.2 * 1) / 3 = 2.0 / 3 = 0.6667;
    * ``ips(clip=1.5)`` caps 1.8 at 1.5: (1.5 + 0 + 0.2) / 3 = 0.5667;
    * ``snips`` divides by the mean weight (1.8 + 1.0 + 0.2) / 3 = 1: 0.6667;
    * with ``q_hat`` 0.6 for ``a`` and 0.3 for ``b`` everywhere, ``dm`` is the mean of
      0.9 * 0.6 + 0.1 * 0.3 = 0.57, 0.45 and 0.33: 0.45; ``dr`` adds the weighted errors
      1.8 (1 - 0.6) = 0.72, 1.0 (0 - 0.6) = -0.6 and 0.2 (1 - 0.6) = 0.08: 0.45 + 0.2 / 3
      = 0.5167.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "round_id": [1, 2, 3], "action": ["a", "a", "a"],
    ...     "reward": [1.0, 0.0, 1.0], "pscore": [0.5, 0.5, 0.5],
    ... })
    >>> pi = pl.DataFrame({
    ...     "round_id": [1, 1, 2, 2, 3, 3], "action": ["a", "b"] * 3,
    ...     "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9],
    ... })
    >>> q = pi.select("round_id", "action", q_hat=pl.Series([0.6, 0.3] * 3))
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     out = irm.evaluate(
    ...         log, ["ips", "ips(clip=1.5)", "snips", "dm", "dr"], policy=pi, reward_model=q
    ...     )
    >>> [round(out[c].item(), 4) for c in ["ips", "ips(clip=1.5)", "snips", "dm", "dr"]]
    [0.6667, 0.5667, 0.6667, 0.45, 0.5167]
    >>> out["ips_ess"].item(), out["ips_max_weight"].item()  # (3.0)^2 / (3.24 + 1 + 0.04)
    (2.102803738317757, 1.8)

    The log never shows ``b``, which the policy takes: a ``SupportWarning`` says so (no
    estimator sees the rewards of what was never shown; ``dm`` extrapolates the model):

    >>> [w.category.__name__ for w in caught]
    ['SupportWarning']

    A round the policy does not cover is refused, by its id:

    >>> irm.evaluate(log, ["ips"], policy=pi.filter(pl.col("round_id") != 2))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.QuerySetError: 1 log row(s) have a round the policy table lacks
    (first: round_id=2): the policy needs every logged round's probabilities, one row per
    (round_id, action) in column 'prob'

    The same policy and model in obp's shape, a list per round indexed by action (the
    log's actions as indexes: ``a`` is 0): the same estimates, to the bit. A logged
    action beyond its round's list is refused:

    >>> listed = log.with_columns(action=pl.lit(0))
    >>> lists = [[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]]
    >>> pi_list = pl.DataFrame({"round_id": [1, 2, 3], "prob": lists})
    >>> q_list = pi_list.select("round_id", q_hat=pl.lit([0.6, 0.3]))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     same = irm.evaluate(listed, ["ips", "dr"], policy=pi_list, reward_model=q_list)
    >>> same["ips"].item() == out["ips"].item(), same["dr"].item() == out["dr"].item()
    (True, True)
    >>> irm.evaluate(listed.with_columns(action=pl.lit(2)), ["ips"], policy=pi_list)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'action' of the log has 3 action(s)
    outside the policy's list (first: round_id=1): with 'prob' a list per round, an action
    is its index, from 0 to the list's length - 1
    """
    plan = _ope_plan(log, requests, policy, reward_model, options, parts=False, scale=scale)
    if isinstance(plan, PartsPlan):  # pragma: no cover - parts=False gives the plan
        raise TypeError("an off-policy plan")
    # the rewards were read times their scale (:mod:`polars_irmetrics.ope.scale`)
    return unscaled(plan, [label for label, _ in requests])


def _ope_plan(
    log: pl.LazyFrame,
    requests: Requests,
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    options: EvalOptions,
    *,
    parts: bool,
    weights: pl.LazyFrame | None = None,
    scale: float | None = None,
    peaks: dict[str, float | None] | None = None,
) -> pl.LazyFrame | PartsPlan:
    for label, request in requests:
        if "policy" not in request.metric.reads:  # pragma: no cover - routed by the door
            raise MetricParameterError(f"metric {label!r} is not an off-policy estimator")
    if options.system_keys:
        raise InvalidValueError(
            "systems= is not available for off-policy estimators: evaluate each policy in a "
            "call of its own (its policy= table), or segment the log with by=..."
        )
    names = {request.metric.name for _, request in requests}
    if reward_model is not None and not names & MODEL_METRICS:
        raise MetricParameterError(
            "reward_model= holds q_hat for dm and the doubly robust estimators (dr, sndr, "
            "switch_dr, dr_os, sg_dr), and no metric asked for reads it: drop "
            "reward_model=, or ask for one of them"
        )
    # an interval's option where no interval reads it is refused, never ignored
    check_interval_read(options, [label for label, _ in requests])
    by = list(options.attribute_keys)
    if options.ci is not None and options.per_query:
        raise InvalidValueError(
            "ci= gives intervals of the estimates, and per_query=True gives each row's "
            "contribution, which has none: drop one of them"
        )
    # a UInt64 id beyond 2**63 in the policy or the reward model beside a signed log
    ids = (options.round_id, options.action, options.position)
    log = with_wide_ids(log, (policy, reward_model), ids)
    check_position(options, log.collect_schema())
    kind = _kind(requests)
    _refuse_unread(kind, options, [label for label, _ in requests])
    _refuse_result_keys(by, requests, kind, options)
    # the rewards and q_hat are read times one power of two (exact), the estimates
    # divided by it last: small rewards lose no digit in the exact sums
    scaling = scale_column(options.reward, scale)
    if kind == "slate":
        return build_slate_plan(
            log, requests, policy, options, scaling, parts=parts, weights=weights, peaks=peaks
        )
    propensity = "pscore_cascade" if kind == "cascade" else options.propensity
    keys, action, (reward_dtype, q_hat_dtype) = _check_schemas(
        log, policy, reward_model, by, options, propensity, positions=kind == "cascade"
    )
    listed = is_listed(policy)
    # the tables as given (the list shape's rows hand back the policy as they read it)
    tables = {"policy": policy, "reward_model": reward_model}
    policy_given, log_given = policy, log
    if listed:  # the support warning reads the log and the policy as the rows read them
        rows, log, policy = _listed_rows(
            log, policy, reward_model, keys, action, by, options, propensity, scaling
        )
    else:
        # cascade_dr: the log's other slate propensities, checked as the slate
        # estimators check them (which checks run never depends on the metrics)
        extra = _other_propensities(log.collect_schema(), propensity) if kind == "cascade" else []
        rows = _rows(
            log, policy, reward_model, keys, action, by, options, propensity, scaling, extra
        )
    if len(keys) > 1:  # a policy position below 1 in a logged round
        rows = with_policy_below(rows, policy, keys, log.collect_schema(), _POLICY_BELOW)
    rows = with_null_ids(rows, tables, keys)
    checks = _checks(options, keys, reward_model is not None, propensity, listed=listed)
    checks = with_wide_reward_check(checks, options.reward, reward_dtype)
    # an integer q_hat a Float64 would round (2**53 + 1 read as 2**53)
    rows, checks = with_wide_q_hat(rows, checks, reward_model, keys, action, q_hat_dtype)
    # a logged round the policy (or the reward model: no q_hat) lacks: the hint of round
    # ids spelt apart (on its path)
    hints = {"policy_round": round_hint(log_given, policy_given, options.round_id, "policy=")}
    if reward_model is not None:
        hints["q_hat"] = round_hint(log_given, reward_model, options.round_id, "reward_model=")
    checks = [replace(c, hint=hints[c.name]) if c.name in hints else c for c in checks]
    checks[:0] = by_null_checks(by)  # first: a null by key would form a group
    if kind == "cascade":  # an action the log never shows at a position: unsupported
        cascade = _cascade(
            rows,
            requests,
            by,
            keys,
            checks,
            options,
            propensity,
            parts=parts,
            peaks=peaks,
            extra=extra,
        )
        if isinstance(cascade, PartsPlan):
            return cascade
        # the unsupported actions, then a group whose every weight is 0
        cascade = _warning(cascade, log, policy, keys, action)
        return unweighted_warning(cascade, by, [label for label, _ in requests])
    w = pl.col(_PI) / pl.col(options.propensity).cast(pl.Float64)
    checks += _weight_checks(w, keys, options.propensity)
    terms = OpeTerms(
        r=pl.col(options.reward).cast(pl.Float64) * pl.col(SCALE),
        w=w,
        dm=pl.col(_DM) if reward_model is not None else pl.lit(None, pl.Float64),
        q=pl.col(_Q) if reward_model is not None else pl.lit(None, pl.Float64),
        mean_w=exact_mean(w),
    )
    if options.per_query:
        # the mean weight of each by group (the self-normalised estimators), an exact sum
        # (:mod:`polars_irmetrics.ope.sums`): a split log merges it in a first pass
        if parts:
            first = _mean_weight(w, checks)
            return PartsPlan(first.part(rows, by, peaks), first, by)
        # joined as a column (one plan and parts alike): the same division, the same bits
        split = weights is not None
        if weights is None:
            # the weights at the power of two of the whole log's largest (as the parts'
            # first pass reads them: _mean_weight)
            scaled = rows.with_columns(sum_scale(w.abs().max()).alias(_WSCALE))
            at = pl.col(_WSCALE)
            mean_w = (exact_sum(w * at) / at.first() / w.count()).alias(MEAN_WEIGHT)
            weights = scaled.group_by(by).agg(mean_w) if by else scaled.select(mean_w)
        means = weights.select(*by, MEAN_WEIGHT)
        on = {"on": by, "how": "left", "nulls_equal": True} if by else {"how": "cross"}
        rows = rows.join(means, **on)
        window = OpeTerms(terms.r, w, terms.dm, terms.q, pl.col(MEAN_WEIGHT))
        per_row = [
            contribution(request.metric.name, request.params(1.0), label, window).alias(label)
            for label, request in requests
        ]
        # a row beyond float64's range (a huge weight times a huge reward): refused in
        # the estimate's words, not an inf row beside an estimate that refuses it
        checks = [
            *checks,
            *(
                Check(
                    f"beyond_{label}",
                    (row.is_infinite() | _overflows(request.metric.name, window)).fill_null(False),
                    InvalidValueError,
                    beyond_range(label, options).replace("{", "{{").replace("}", "}}"),
                    keys=tuple(keys),
                )
                for (label, request), row in zip(requests, per_row, strict=True)
            ),
        ]
        out_keys = [*by, *keys]
        result = (
            rows.select(
                *out_keys, _ROW, *per_row, SCALE, *(e for check in checks for e in check.rows())
            )
            .sort([*out_keys, _ROW], nulls_last=True)
            .drop(_ROW)
        )
        if split:  # a part: the warning reads the whole log
            return raising(result, checks, options)
        return _warning(raising(result, checks, options), log, policy, keys, action)
    summary = _summary(requests, terms, checks, options)
    terms_of = [
        (label, components(request.metric.name, request.params(1.0), label, terms))
        for label, request in requests
    ]
    bootstrap = options.ci is not None and not wants_normal(options.ci, options.ci_method)
    labels = [label for label, _ in requests]
    # the bootstrap's columns read at the scales of the estimates' sums of the same
    # terms (the whole log's: weights all tiny or all huge keep their digits)
    scales = [
        summary.sum_scale(name, peaks if parts else None)
        for label, pairs in terms_of
        for k, (_, den) in enumerate(pairs)
        for name in (f"{label}:n{k}", *([] if den is None else [f"{label}:d{k}"]))
    ]
    if parts:
        part = summary.part(rows, by, peaks)
        if not bootstrap:
            return PartsPlan(part, summary, by, labels=tuple(labels))
        # the bootstrap's bucket sums beside the sums: they add up across parts too
        boot = bootstrap_part(rows, keys, terms_of, by, options, scales)

        def finish(result: pl.LazyFrame, buckets: pl.LazyFrame) -> pl.LazyFrame:
            return joined_intervals(result, boot.intervals(buckets), labels, by)

        frame = pl.concat([part, boot.frame], how="diagonal")
        return PartsPlan(frame, summary, by, beside=((BUCKET, finish),), labels=tuple(labels))
    result = summary.merge(summary.part(rows, by), by, options)
    # the log's unsupported actions, then the by groups the policy supports none of
    result = warn_unsupported_groups(_warning(result, log, policy, keys, action), by)
    result = warn_unshrunk(result, requests, by)  # dr_os(lambda=0) NaN: why, and the fix
    if not bootstrap:  # the normal interval is in the sums
        return result
    return with_intervals(result, rows, keys, terms_of, by, options, scales)


def _summary(
    requests: Requests, terms: OpeTerms, checks: list[Check], options: EvalOptions
) -> Summary:
    """The estimates as exact sums over the rows (:mod:`polars_irmetrics.ope.sums`): each
    a sum of ratios of sums (:func:`~polars_irmetrics.metrics.ope.components`), a
    weighted one with its weights' effective sample size and largest weight; the normal
    interval too (:mod:`polars_irmetrics.ope.normal`), so that it adds up across parts."""
    # each sum at a power of two of its own (:class:`Summary`'s ``scaled``): weights all
    # tiny or all huge, and their products, keep their digits
    summary = Summary(count=NUM_ROWS, count_expr=pl.len(), checks=checks, scale=SCALE, scaled=True)
    n = pl.col(NUM_ROWS).cast(pl.Float64)
    for label, request in requests:
        parts = components(request.metric.name, request.params(1.0), label, terms)
        value: pl.Expr = pl.lit(0.0)
        for k, (num, den) in enumerate(parts):
            summary.sums[f"{label}:n{k}"] = num
            if num.meta.eq(terms.dm):  # no weight: unscaled (dm, sndr's first term)
                summary.fixed.add(f"{label}:n{k}")
            total = unscaled_total(f"{label}:n{k}")
            if den is None:
                value = value + total / n
            else:
                summary.sums[f"{label}:d{k}"] = den
                value = value + total / unscaled_total(f"{label}:d{k}")
        summary.outputs.append(pl.when(n > 0).then(value).alias(label))
        if wants_normal(options.ci, options.ci_method):
            bounds = normal_interval(summary, label, parts, f"{label}:n0", n, options.ci or 0.0)
            summary.outputs.extend(bounds)
        if request.metric.name in WEIGHTED:
            weight = effective_weight(request.metric.name, request.params(1.0), label, terms.w)
            summary.sums[f"{label}:w"] = weight
            summary.sums[f"{label}:w2"] = weight * weight
            summary.squares[f"{label}:w2"] = f"{label}:w"
            summary.maxima[f"{INTERNAL}{label}:max"] = weight
            ess = effective_sample_size(f"{label}:w", f"{label}:w2", scaled=True)
            summary.outputs.extend(
                [
                    ess.alias(f"{label}_ess"),
                    pl.col(f"{INTERNAL}{label}:max").alias(f"{label}_max_weight"),
                ]
            )
    # the largest weight of each group: 0 where the policy takes none of its logged
    # actions (warn_unsupported_groups), for the estimators that weigh the rewards
    if any(request.metric.name in WEIGHTED for _, request in requests):
        summary.maxima[WMAX] = terms.w
        summary.outputs.append(pl.col(WMAX))
    return summary


def warn_unsupported_groups(
    result: pl.LazyFrame, by: list[str], count: str = NUM_ROWS, *, warn: bool = True
) -> pl.LazyFrame:
    """``result`` (one row per ``by`` group with its count of log rows and :data:`WMAX`,
    the group's largest importance weight) without :data:`WMAX`, warning when it is
    collected (``warn``, with ``by`` keys: :class:`~polars_irmetrics.errors.SupportWarning`)
    if in a group with log rows the policy gives every logged action probability 0:
    every weight there is 0, so its weighted estimates read none of its rewards (ips 0,
    the self-normalised ones NaN), whatever the whole log's support. The groups are
    named by the first one (in the result's order) and their count."""
    schema = schema_of(result)
    if WMAX not in schema:  # no weighted sums (per_query's mean weights, slates)
        return result
    if not (warn and by):
        return dropped(result, [WMAX])
    schema = without(schema, [WMAX])

    def warning(frame: pl.DataFrame) -> pl.DataFrame:
        empty = frame.filter((pl.col(count) > 0) & (pl.col(WMAX) == 0.0))
        if empty.height:
            first = ", ".join(f"{k}={empty[k][0]}" for k in by)
            warn_from_plan(
                f"the policy gives a positive probability to none of the logged actions in "
                f"{empty.height} by group(s) (first: {first}): every importance weight there "
                "is 0, so the weighted estimators read none of their logged rewards (ips 0, "
                "snips and sndr NaN, <metric>_ess 0); the log cannot support the policy in "
                "those groups (the direct method extrapolates the reward model there)",
                SupportWarning,
            )
        return frame.drop(WMAX)

    return mapped(result, warns_in_order(warning), schema)


def warn_unsupported(
    result: pl.LazyFrame, log: pl.LazyFrame, policy: pl.LazyFrame, options: EvalOptions
) -> pl.LazyFrame:
    """``result``, warning when it is collected if the policy takes an action (at a
    position) the log never shows (:class:`~polars_irmetrics.errors.SupportWarning`), as
    :func:`build_ope_plan` warns: ``log`` and ``policy`` may be any frames holding the
    distinct actions (and positions) of each, with ``prob`` for the policy's."""
    schema = log.collect_schema()
    keys = [options.round_id] + ([options.position] if options.position in schema else [])
    return _warning(result, log, policy, keys, options.action)


def _warning(
    result: pl.LazyFrame, log: pl.LazyFrame, policy: pl.LazyFrame, keys: list[str], action: str
) -> pl.LazyFrame:
    """``result``, warning (:class:`~polars_irmetrics.errors.SupportWarning`) when it is
    collected if the policy gives a positive probability to an action (at a position)
    that never appears in the log: the logger never took it, so no estimator sees its
    rewards (the importance weights cannot be corrected for what was never shown)."""
    slot = [action, *keys[1:]]
    schema = log.collect_schema()
    ids = [id_column(schema, c) for c in slot]
    round_id = keys[0]
    # the round too, where the tables have it (the engines hand their distinct slots,
    # already of the logged rounds only): what the policy takes in other rounds is read
    # by no estimate (in_logged_rounds)
    rounds = [id_column(schema, round_id)] if round_id in policy.collect_schema() else []
    if is_listed(policy):  # the list's indexes (with the position) of positive items
        taken = listed_slots(policy, [*rounds, *ids[1:]], action, PROB)
    else:
        taken = policy.filter(pl.col(PROB) > 0).select(*rounds, *ids)
    shown = log.select(ids).unique()
    unsupported = taken.select(slot).unique().join(shown, on=slot, how="anti", nulls_equal=True)
    if rounds:
        unsupported = in_logged_rounds(unsupported, taken, log.select(rounds), round_id)
    # where the policy takes no logged action: its text ids that match the log's once
    # their spelling is ignored ('01' beside '1', 'A' beside 'a'), as evaluate's hints
    sides = Sides("policy=", "the log", "policy= and the log")
    return warning_unsupported(
        result,
        unsupported,
        slot,
        overlap=slot_overlap(taken, shown, slot),
        # integer actions numbered from 1 in one table and from 0 in the other
        shift=action_shift(taken, shown, action) if schema[action].is_integer() else None,
        # where it takes some of them, the unlogged actions alone (few) against the log's
        hint=(
            (
                lambda unlogged: spelling_hint(
                    taken.select(action)
                    if unlogged is None
                    else pl.LazyFrame({action: unlogged}).select(pl.col(action).cast(pl.String)),
                    shown.select(action),
                    action,
                    within=None,
                    noun="action",
                    sides=sides,
                )
            )
            if is_text(schema[action])
            else None
        ),
        message=lambda n, example: (
            f"the policy gives a positive probability to {n} action(s) never logged "
            f"(e.g. {example}): the logging policy never took them, so the log cannot "
            "support this policy and every estimate of it is biased (the direct method "
            "extrapolates the reward model there)"
        ),
    )


def _refuse_result_keys(
    by: list[str], requests: Requests, kind: str, options: EvalOptions
) -> None:
    """A ``by`` key named like a column the result writes (the count, a metric's label,
    its interval and its diagnostics), refused as the ranking metrics refuse it: the
    plan would write the name twice."""
    taken = [label for label, _ in requests]
    if not options.per_query:
        taken = [NUM_ROWS if kind == "single" else NUM_ROUNDS]
        for label, request in requests:
            taken.append(label)
            if options.ci is not None:
                taken += [f"{label}_lower", f"{label}_upper"]
            if kind != "single" or request.metric.name in WEIGHTED:
                taken += [f"{label}_ess", f"{label}_max_weight"]
    refuse_result_keys("by", by, taken, "log", most=None)


#: The log's column options each kind of estimator does not read (the slates read the
#: propensities by obp's names and no action, cascade_dr its 'pscore_cascade'): why, and
#: the column to rename a propensity column to instead.
_UNREAD: dict[str, dict[str, tuple[str, str | None]]] = {
    "slate": {
        "action": (
            "the slate estimators read each slot's reward and propensities, not its action",
            None,
        ),
        "propensity": (
            "the slate estimators read the logging policy's propensities under obp's names "
            "(pscore, pscore_item_position, pscore_cascade), in the log and the policy table",
            "pscore",
        ),
    },
    "cascade": {
        "propensity": (
            "cascade_dr reads the logging policy's cascade propensity of each logged action "
            "in column 'pscore_cascade' (obp's name)",
            "pscore_cascade",
        ),
    },
}


def _refuse_unread(kind: str, options: EvalOptions, labels: list[str]) -> None:
    """Refuse ``action=`` or ``propensity=`` given to estimators that do not read them
    (:data:`_UNREAD`): they would change nothing, while the caller expects them read
    (``propensity='pscore_cascade'`` beside ``cascade_dr`` names the column it reads).

    >>> _refuse_unread("cascade", EvalOptions.build(propensity="p"), ["cascade_dr"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: propensity='p' is not read by metric \
'cascade_dr': cascade_dr reads the logging policy's cascade propensity of each logged \
action in column 'pscore_cascade' (obp's name); drop propensity= (it would change \
nothing), and rename the column instead, e.g. log.rename({'p': 'pscore_cascade'})
    """
    given = options.given()
    for name, (why, column) in _UNREAD.get(kind, {}).items():
        value = getattr(options, name)
        # cascade_dr's propensity= naming its one column: read as named
        if name in given and not (kind == "cascade" and value == column):
            fix = (
                ""
                if column is None
                else (
                    f", and rename the column instead, e.g. log.rename({{{value!r}: {column!r}}})"
                )
            )
            raise InvalidValueError(
                f"{name}={value!r} is not read by {metrics_named(labels)}: {why}; drop "
                f"{name}= (it would change nothing){fix}"
            )


def _kind(requests: Requests) -> str:
    """``"single"`` (single-action and position-wise), ``"slate"`` (slate IPS) or
    ``"cascade"``: estimators of different kinds read different tables."""
    kinds: dict[str, str] = {}
    for label, request in requests:
        name = request.metric.name
        kind = (
            "slate"
            if name in SLATE_COLUMNS
            else "cascade"
            if name in CASCADE_METRICS
            else "single"
        )
        kinds.setdefault(kind, label)
    if len(kinds) > 1:
        (a, first), (b, second) = list(kinds.items())[:2]
        raise MetricParameterError(
            f"metrics {first!r} and {second!r} read different policy tables ({_KINDS[a]}; "
            f"{_KINDS[b]}): evaluate them in two calls"
        )
    return next(iter(kinds))


_KINDS = {
    "single": "single-action: prob per (round_id[, position], action)",
    "slate": "slate IPS: the evaluation policy's propensities per (round_id, position)",
    "cascade": "cascade_dr: prob per (round_id, position, action)",
}


def _cascade(
    rows: pl.LazyFrame,
    requests: Requests,
    by: list[str],
    keys: list[str],
    checks: list[Check],
    options: EvalOptions,
    propensity: str,
    *,
    parts: bool = False,
    peaks: dict[str, float | None] | None = None,
    extra: Sequence[str] = (),
) -> pl.LazyFrame | PartsPlan:
    """``cascade_dr``: the policy's cascade propensity is the running product of its
    probabilities of the logged actions down the slate (obp's
    ``SlateCascadeDoublyRobust``); its sums each at a power of two of their own
    (``peaks``: :func:`~polars_irmetrics.ope.rounds.over_rounds`). ``extra``: the log's
    other slate propensity columns (:func:`_other_propensities`), read by no estimate
    here and checked as the slate estimators check them."""
    round_id, position = keys
    rnd = [*by, round_id]
    # the running product reads every slot above a row: a round whose positions skip
    # one (its top missing, or one between) would leave that slot's probability out of
    # the policy's product while the log's pscore_cascade holds it
    gap, rise = f"{INTERNAL}gap", f"{INTERNAL}rise"
    rows = rows.with_columns(
        (pl.col(position).max().over(rnd) != pl.len().over(rnd)).fill_null(False).alias(gap),
        # the log's cascade propensity rising down a slate: no logging policy gives it
        broken_shape("falling", pl.col(propensity), rnd, position).alias(rise),
        # a by key that varies within a round: the round split across groups
        *split_round_flags(by, round_id),
    )
    # after the by keys' null checks (first), before the others: a split round would
    # read as a round with a gap
    splits = split_round_checks(by, keys, "cascade_dr's estimates")
    checks = [*checks[: len(by)], *splits, *checks[len(by) :]]
    checks = [
        *checks,
        shape_check(propensity, "log", pl.col(rise), keys=tuple(keys), kind="falling"),
        Check(
            "gap",
            pl.col(gap),
            InvalidValueError,
            f"{{n}} log row(s) are in a round whose positions do not run 1, 2, 3, ... "
            f"without a gap (first: {{first}}): cascade_dr reads each round's top slots "
            f"down to its last logged one, every one of them; keep each round's unbroken "
            f"top (drop the rows below its first missing {position!r}), or log the "
            f"missing slots",
            keys=tuple(keys),
        ),
    ]
    # the log's other slate propensities: in (0, 1], and a slate's pscore one value per
    # round, as the slate estimators refuse them (slates._checks, their words)
    for column in extra:
        checks.append(log_propensity_check(column, tuple(keys)))
        if column in SHAPES:
            flag = f"{INTERNAL}shape_{column}"
            rows = rows.with_columns(
                broken_shape(SHAPES[column], pl.col(column), rnd, position).alias(flag)
            )
            checks.append(shape_check(column, "log", pl.col(flag), keys=tuple(keys)))
    cascade = pl.col(_PI).cum_prod().over(rnd, order_by=position)
    w = cascade / pl.col(propensity).cast(pl.Float64)
    above = w.shift(1).over(rnd, order_by=position).fill_null(1.0)
    r = pl.col(options.reward).cast(pl.Float64) * pl.col(SCALE)
    value = w * (r - pl.col(_Q)) + above * pl.col(_EQ)
    weight = f"{INTERNAL}w"
    rows = rows.with_columns(value.alias(_VALUE), w.alias(weight))
    columns = {label: (_VALUE, weight) for label, _ in requests}
    # the weights no scale keeps exact (subnormal, infinite), refused with the row named
    detail = pl.format(f"weight={{}}, {propensity}={{}}", pl.col(weight), pl.col(propensity))
    said = f"an importance weight (the policy's cascade probability over {propensity!r})"
    checks = [
        *checks,
        Check(
            "cascade_weight_subnormal",
            ((pl.col(weight) != 0.0) & (pl.col(weight).abs() < _NORMAL)).fill_null(False),
            InvalidValueError,
            f"{{n}} log row(s) have {said} that is subnormal, other than 0 but below "
            f"2**-1022 = {_NORMAL!r} (first: {{first}}): such a weight holds fewer digits "
            "than a float64, which no scale gives back; set the policy's probabilities that "
            "small to 0, or evaluate such rounds apart",
            keys=tuple(keys),
            detail=detail,
        ),
        Check(
            "cascade_weight_infinite",
            pl.col(weight).is_infinite().fill_null(False),
            InvalidValueError,
            f"{{n}} log row(s) have {said} beyond float64's range (first: {{first}}): "
            f"column {propensity!r} is too small for the policy's cascade probability "
            "(below it / 1.8e308); drop those rows, or check how the logging propensities "
            "were computed",
            keys=tuple(keys),
            detail=detail,
        ),
    ]
    reward = options.reward
    refusal = (
        "metric {label} cannot be summed: a term of its sums is beyond float64's range (an "
        f"importance weight, the policy's cascade probability over {propensity!r}, times a "
        f"huge {reward!r} or 'q_hat'): read the rewards and q_hat at a larger unit (e.g. "
        f"pl.col({reward!r}) * 2.0**-600, the estimates then at that unit), or drop those rounds"
    )
    return over_rounds(
        rows, columns, by, round_id, checks, options, parts=parts, peaks=peaks, refusal=refusal
    )


def _other_propensities(schema: pl.Schema, propensity: str) -> list[str]:
    """The slate propensity columns of the log (``schema``) other than ``propensity``
    (cascade_dr's ``pscore_cascade``), each checked as numbers.

    >>> _other_propensities(pl.Schema({"pscore": pl.Float64}), "pscore_cascade")
    ['pscore']
    """
    known = sorted({column for column, _ in SLATE_COLUMNS.values()} - {propensity})
    found = [column for column in known if column in schema]
    for column in found:
        check_numeric(schema, column, "log", integer=False)
    return found


def _overflows(name: str, terms: OpeTerms) -> pl.Expr:
    """Per row: the numerator of a self-normalised estimator's ``per_query=True`` row
    (``snips``: ``r w``; ``sndr``: ``w (r - q_hat)``) is beyond float64's range, which
    its division by the mean weight turns into NaN, not an infinity (its estimate's sum
    of those terms is refused); ``False`` for the others, whose rows are infinite then."""
    if name == "snips":
        return (terms.r * terms.w).is_infinite()
    if name == "sndr":
        return (terms.w * (terms.r - terms.q)).is_infinite()
    return pl.lit(False)


def _mean_weight(w: pl.Expr, checks: list[Check]) -> Summary:
    """The first pass of ``per_query=True`` over a split log: each ``by`` group's mean
    weight (:data:`MEAN_WEIGHT`, exact sums) and the data checks of the whole log."""
    n = pl.col(_NW).cast(pl.Float64)
    return Summary(
        count=_NW,
        count_expr=w.count(),
        sums={MEAN_WEIGHT: w},
        outputs=[(unscaled_total(MEAN_WEIGHT) / n).alias(MEAN_WEIGHT)],
        checks=checks,
        scaled=True,
    )


def _check_schemas(
    log: pl.LazyFrame,
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    by: list[str],
    options: EvalOptions,
    propensity: str,
    *,
    positions: bool,
) -> tuple[list[str], str, tuple[pl.DataType, pl.DataType | None]]:
    """The join keys (``round_id[, position]``) and the action column, the tables'
    columns and dtypes checked (raised now, before anything is computed); with the
    dtypes of the log's rewards and of the reward model's ``q_hat`` (``None``: no reward
    model), read here once for their own checks."""
    if propensity in by:  # cascade_dr's own column (the others are refused at the call)
        raise log_key_error(
            by, propensity, "the logging policy's cascade propensities (read by cascade_dr)"
        )
    log_schema = log.collect_schema()
    round_id, action = options.round_id, options.action
    if positions and options.position not in log_schema:
        raise ColumnNotFoundError(
            f"column {options.position!r} not found in the log: cascade_dr reads slates, one "
            "row per (round_id, position); name the column with position="
        )
    keys = [round_id] + ([options.position] if options.position in log_schema else [])
    hint = (
        "a log of logged feedback has one row per round (and position): name its columns "
        "with round_id=, action=, reward=, propensity= (the logging policy's probability "
        "of the logged action) and position="
    )
    if propensity != options.propensity:  # cascade_dr's own column, obp's name
        hint = (
            f"{hint}; cascade_dr reads the logging policy's cascade propensity of each "
            f"logged action in column {propensity!r} (obp's), not propensity="
        )
    require_columns(log_schema, [*keys, action, options.reward, propensity, *by], "log", hint)
    tables = [("policy", policy.collect_schema(), PROB)]
    if reward_model is not None:
        tables.append(("reward_model", reward_model.collect_schema(), Q_HAT))
    position = options.position
    for name, schema, value in tables:
        if position in schema and position not in log_schema:
            # the table's rows per position would meet the log's rounds as one action
            # each: read as an action listed twice, or its positions silently merged
            listed = value in schema and _listed(schema[value])
            row = round_id if listed else f"({round_id}, {action})"
            raise ColumnNotFoundError(
                f"column {position!r} not found in the log, but the {name} table has one: a "
                f"log without it is read as one action per round, and the {name} table "
                f"then has one row per {row}; add the logged positions to "
                f"the log (name the column with position=), or drop the {name} table's "
                f"{position!r} column"
            )
    wide = [name for name, schema, value in tables if value in schema and _listed(schema[value])]
    if wide:
        _check_wide(wide, [name for name, _, _ in tables], log_schema, action, positions=positions)
    for name, schema, value in tables:
        ids = keys if wide else [*keys, action]
        shape = f"({', '.join(ids)}) with its {value!r}" + (
            f" as a list indexed by {action} (0 to the number of actions - 1)" if wide else ""
        )
        require_columns(
            schema, [*ids, value], f"{name} table", f"the {name} table has one row per {shape}"
        )
        if wide:
            inner = schema[value].inner  # type: ignore[attr-defined]
            if not (inner.is_numeric() or inner == pl.Boolean):
                raise ColumnTypeError(
                    f"column {value!r} in the {name} table has dtype {schema[value]}; a list "
                    f"of numbers per row is read: cast it, e.g. "
                    f"pl.col({value!r}).cast(pl.List(pl.Float64))"
                )
        else:
            check_numeric(schema, value, f"{name} table", integer=False)
        check_keys(log_schema, schema, ids, name, options.position)
    if positions:
        _refuse_slate_policy(tables[0][1])
    for column in (options.reward, propensity):
        check_numeric(log_schema, column, "log", integer=False)
    if len(keys) > 1:
        check_numeric(log_schema, options.position, "log", integer=True)
    q_hat = None if reward_model is None else tables[-1][1][tables[-1][2]]
    return keys, action, (log_schema[options.reward], q_hat)


def _refuse_slate_policy(schema: pl.Schema) -> None:
    """Refuse cascade_dr's policy table (``schema``) where it holds a slate estimator's
    propensity columns (``pscore``, ``pscore_item_position``, ``pscore_cascade``):
    cascade_dr reads none of them (its policy's cascade propensity is the running
    product of ``prob``), so they would be neither read nor checked.

    >>> _refuse_slate_policy(pl.Schema({"prob": pl.Float64, "pscore_cascade": pl.Float64}))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column(s) 'pscore_cascade' of the policy \
table are the slate estimators' propensities of the evaluation policy, which cascade_dr \
does not read: it reads 'prob' per (round_id, position, action), its cascade propensity \
the running product of 'prob' at the logged actions; drop them, e.g. \
policy.drop(['pscore_cascade']), or evaluate the slate estimators in a call of their own
    """
    known = sorted({column for column, _ in SLATE_COLUMNS.values()})
    found = [column for column in known if column in schema]
    if found:
        named = ", ".join(repr(column) for column in found)
        raise InvalidValueError(
            f"column(s) {named} of the policy table are the slate estimators' propensities "
            "of the evaluation policy, which cascade_dr does not read: it reads "
            f"{PROB!r} per (round_id, position, action), its cascade propensity the running "
            f"product of {PROB!r} at the logged actions; drop them, e.g. "
            f"policy.drop({found!r}), or evaluate the slate estimators in a call of their own"
        )


def _listed(dtype: pl.DataType) -> bool:
    """Whether a policy's ``prob`` (a reward model's ``q_hat``) is in the list shape: one
    row per round (and position), a List or Array indexed by action."""
    return isinstance(dtype, pl.List | pl.Array)


def is_listed(policy: pl.LazyFrame) -> bool:
    """Whether ``policy`` is in the list shape (its ``prob`` a List or Array column)."""
    schema = policy.collect_schema()
    return PROB in schema and _listed(schema[PROB])


def _check_wide(
    wide: list[str], tables: list[str], log_schema: pl.Schema, action: str, *, positions: bool
) -> None:
    """The list shape: every table in it, for single-action estimators, integer actions."""
    if positions:
        raise ColumnTypeError(
            "cascade_dr reads its policy and reward model as long tables, one row per "
            f"(round_id, position, {action}): column {PROB!r} (or {Q_HAT!r}) is a list; "
            f"explode it, e.g. .with_columns(pl.int_ranges(pl.col({PROB!r}).list.len())"
            f".alias({action!r})).explode({PROB!r}, {action!r})"
        )
    if len(wide) != len(tables):
        (listed,) = wide
        (other,) = set(tables) - set(wide)
        raise ColumnTypeError(
            f"the {listed} table holds a list per round and the {other} table one row per "
            f"action: give both in one shape (lists indexed by {action}, or long tables "
            f"with an {action!r} column)"
        )
    if not log_schema[action].is_integer():
        raise ColumnTypeError(
            f"column {action!r} in the log has dtype {log_schema[action]}; with the policy "
            "as lists (one row per round, 'prob' indexed by action) the logged action is "
            f"the list's index, an integer from 0: map the actions to 0, 1, ..., e.g. "
            f"pl.col({action!r}).cast(pl.Int64)"
        )


def _ids(keys: list[str], action: str, schema: pl.Schema) -> list[pl.Expr]:
    """The id columns in one dtype on every side
    (:func:`~polars_irmetrics.ope.checks.id_column`)."""
    return [id_column(schema, c) for c in [*keys, action]]


def _table(
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    keys: list[str],
    action: str,
    schema: pl.Schema,
) -> pl.LazyFrame:
    """The policy's rows (``_PROB``, never null) with the reward model's ``_Q`` beside each:
    a full join on ``(round_id[, position], action)``, so that an action only one table
    lists keeps its row.

    Rows that already line up (the same ids at the same row of both tables, as when both
    were written from the same arrays) are paired without hashing them; only the others
    are joined. Ids that do not line up, or a null id, take the join: the pairs are
    the full join's, row for row, whenever neither table lists an action twice (and
    that is refused).
    """
    ids = _ids(keys, action, schema)
    # a null probability as NaN: refused alike (``_PBAD``), and a row's ``_PROB`` is
    # null only where the policy lacks the row
    prob = pl.col(PROB).cast(pl.Float64).fill_null(float("nan"))
    table = policy.select(*ids, prob.alias(_PROB))
    if reward_model is None:
        return table
    cols = [*keys, action]
    model = reward_model.select(*ids, pl.col(Q_HAT).cast(pl.Float64).alias(_Q), _TRUE.alias(_IN_Q))
    twin = {c: f"{INTERNAL}m_{c}" for c in cols}
    # read by three branches: cached, so that each table is read once (from Parquet,
    # each branch read and decoded both files again)
    side = pl.concat([table, model.rename(twin)], how="horizontal_extend").cache()
    aligned = pl.all_horizontal(pl.col(c) == pl.col(twin[c]) for c in cols).fill_null(False)
    paired = side.filter(aligned).select(*cols, _PROB, _Q)
    rest_p = side.filter(~aligned & pl.col(_PROB).is_not_null()).select(*cols, _PROB)
    rest_q = side.filter(~aligned & pl.col(_IN_Q).is_not_null()).select(
        *(pl.col(twin[c]).alias(c) for c in cols), _Q
    )
    joined = rest_p.join(rest_q, on=cols, how="full", coalesce=True)
    return pl.concat([paired, joined.select(*cols, _PROB, _Q)], how="vertical")


def _rows(
    log: pl.LazyFrame,
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    keys: list[str],
    action: str,
    by: list[str],
    options: EvalOptions,
    propensity: str,
    scale: pl.Expr,
    extra: Sequence[str] = (),
) -> pl.LazyFrame:
    """The log's rows with the policy's and the reward model's terms beside each (and
    the log's ``extra`` columns: cascade_dr's other slate propensities, checked).

    One join and one ``group_by``: each log row is joined with its round's (and
    position's) rows of the policy and reward model table (:func:`_table`), and grouped
    back to one row per log row, the logged action's probability and ``q_hat`` read in
    the same pass as the round's sums and checks. Each aggregation of the 10 R joined
    rows costs about as much as the join, so the round's yes/no facts (the policy lists
    it; a probability out of range; ``q_hat`` missing or too large where the policy
    goes; a NaN term of ``sum(prob * q_hat)``) are bits of one byte, OR-ed in one
    reduction and read back after it (two bytes: a UInt16).

    ``scale`` (:func:`~polars_irmetrics.ope.scale.scale_column`): the rewards' scale, a
    column of the rows; ``q_hat`` is read times it (``_Q``, the round's ``sum(prob *
    q_hat)``, and where it is checked against its bound).
    """
    schema = log.collect_schema()
    model = reward_model is not None
    table = _table(policy, reward_model, keys, action, schema).rename({action: _ACT})
    logged = (pl.col(_ACT) == pl.col(action)).fill_null(False)
    prob = pl.col(_PROB)
    in_p = prob.is_not_null()  # a row of the policy's (a null probability is NaN)
    columns = log.select(
        *by, *_ids(keys, action, schema), options.reward, propensity, *extra, scale
    )
    act_dtype = table.collect_schema()[_ACT]
    # a round's yes/no facts, each a bit of one UInt8 OR-ed over its rows: one reduction
    facts = [
        pl.col(_LOG_FACTS),  # the log row's own, the same on each of its joined rows
        _bit(_HAS_P, in_p),
        # prob outside [0, 1] (NaN included) is refused before the sum is read
        _bit(_P_BAD, in_p & ~prob.is_between(0.0, 1.0).fill_null(False)),
    ]
    aggs = [
        # the logged action is read on the joined rows (``logged``), not after them
        *(
            _carried(c, dtype)
            for c, dtype in columns.collect_schema().items()
            if c != action or c in by
        ),
        pl.when(logged).then(prob).otherwise(0.0).sum().alias(_PI),
        fixed_sum(prob).alias(_PSUM),
        _listed_twice(pl.col(_ACT), act_dtype).alias(_DUP),
    ]
    bit = pl.col(_FACTS)
    read = [
        (bit & _HAS_P != 0).cast(pl.Int64).alias(_N_P),  # 1 or 0: whether the policy has it
        (bit & _P_BAD != 0).alias(_PBAD),
        (bit & _ACT_NULL != 0).alias(_NULL_ACT),
        (bit & _LOG_ACT_NULL != 0).alias(_NULL_LOGGED),
        (bit & _LOG_TWICE != 0).alias(_LOGGED_TWICE),
    ]
    # a row of a table (not the one null row of a log row no table matches) without an
    # action: its probability would count in the round's sum, and never as logged
    from_table = in_p | pl.col(_Q).is_not_null() if model else in_p
    facts.append(_bit(_ACT_NULL, pl.col(_ACT).is_null() & from_table))
    if model:
        q = pl.col(_Q)
        # q_hat times the rewards' scale (exact); prob * q_hat as (prob * scale) * q_hat:
        # the product of the same reals, so the same bits as unscaled (never rounded as
        # a subnormal where q_hat is tiny and the scale large), and a q_hat the policy
        # never takes (prob 0) cannot overflow
        scaled_q = q * pl.col(SCALE)
        # a term of the round's sum(prob * q_hat) where the policy may go: a q_hat the
        # policy never takes (prob 0) is not read (0 * nan and 0 * inf are NaN, which
        # made the direct method's value NaN in silence); null, as a row of the reward
        # model the policy lacks
        goes = prob > 0
        term = pl.when(goes).then(prob * pl.col(SCALE) * q)
        facts += [
            # each row's _q_codes (1 missing, 2 too large) as the bits _Q_NULL, _Q_HUGE
            _q_codes(scaled_q, in_p & goes).cast(pl.UInt16) * _Q_NULL,
            # a NaN term of sum(prob * q_hat): its bounded sum's flag
            _bit(_PQ_NAN, pl.when(goes).then(prob * q).is_nan().fill_null(False)),
            # a q_hat too small at the rewards' scale where the policy may go
            _bit(_Q_SMALL, in_p & (prob > 0) & scaled_tiny(scaled_q).fill_null(False)),
        ]
        hi, lo, flag = bounded_columns(_EQ, term, nan=bit & _PQ_NAN != 0)
        aggs += [
            # the logged action's row: one at most (a second is refused as a duplicate);
            # a reduction, which polars' streaming group_by runs faster than a filter
            pl.when(logged).then(scaled_q).max().alias(_Q),
            # bounded: q_hat below 2**62 (else refused) times probabilities adding to 1
            hi,
            lo,
        ]
        # _q_codes' largest over the round: too large, else missing, else 0
        read += [
            flag,
            pl.when(bit & _Q_HUGE != 0)
            .then(pl.lit(_Q_TOO_LARGE, pl.Int8))
            .when(bit & _Q_NULL != 0)
            .then(pl.lit(_Q_MISSING, pl.Int8))
            .otherwise(pl.lit(0, pl.Int8))
            .alias(_QCODE),
            (bit & _Q_SMALL != 0).alias(_QTINY),
        ]
    aggs.append(pl.sum_horizontal(facts).cast(pl.UInt16).bitwise_or().alias(_FACTS))
    log_facts = _log_facts(keys, action)
    joined = columns.with_columns(log_facts).with_row_index(_ROW).join(table, on=keys, how="left")
    rows = joined.group_by(_ROW).agg(aggs).with_columns(read).drop(_FACTS)
    if act_dtype.is_integer():
        # an integer outside 0 to 63 listed twice: read from those rows alone (Parquet's
        # statistics skip every row group without one), each round found marked
        tables = [policy, *([reward_model] if reward_model is not None else [])]
        twice = _twice_outside(tables, _ids(keys, action, schema), action)
        dup = (pl.col(_DUP) | pl.col(_TWICE).fill_null(False)).alias(_DUP)
        rows = rows.join(twice, on=keys, how="left").with_columns(dup).drop(_TWICE)
    if not model:
        return rows
    # numpy's average(q_hat, weights=prob), as obp: the same two sums, divided once
    return with_exact_totals(rows, [_EQ]).with_columns((pl.col(_EQ) / pl.col(_PSUM)).alias(_DM))


def _logged_twice(keys: list[str]) -> pl.Expr:
    """Per log row: whether another row of the log has its round (and position): one
    action is logged per round (and position). A hash of the log's keys (the log's
    rows, not the joined ones)."""
    return (pl.struct(keys) if len(keys) > 1 else pl.col(keys[0])).is_duplicated()


def _log_facts(keys: list[str], action: str) -> pl.Expr:
    """Per log row, before the join: its own facts as bits of :data:`_FACTS` (a null
    action, its round logged twice), OR-ed with the joined rows' in the one reduction."""
    return (
        _bit(_LOG_ACT_NULL, pl.col(action).is_null()) + _bit(_LOG_TWICE, _logged_twice(keys))
    ).alias(_LOG_FACTS)


#: The codes of :func:`_q_codes` (times :data:`_Q_NULL`, its bits of :data:`_FACTS`).
_Q_MISSING, _Q_TOO_LARGE = 1, 2


def _bit(value: int, fact: pl.Expr) -> pl.Expr:
    """Per row: ``value`` (a bit of :data:`_FACTS`, UInt16) where ``fact`` holds, else 0."""
    return pl.when(fact).then(pl.lit(value, pl.UInt16)).otherwise(pl.lit(0, pl.UInt16))


def _q_codes(q: pl.Expr, read: pl.Expr) -> pl.Expr:
    """Per row (or list item): where ``read`` (an action the policy may take), 1
    (:data:`_Q_MISSING`) for a null or NaN ``q_hat``, 2 (:data:`_Q_TOO_LARGE`) for one that
    is infinite or :data:`~polars_irmetrics.ope.sums.BOUND` (2**62) or more in
    magnitude, else 0 (Int8): the largest over a round tells whether the round's
    ``q_hat`` can be read, and bounds its sum with the probabilities
    (:func:`~polars_irmetrics.ope.sums.bounded_columns`)."""
    return (
        pl.when(read & (q.is_null() | q.is_nan()))
        .then(pl.lit(_Q_MISSING, pl.Int8))
        .when(read & (q.abs() >= BOUND))
        .then(pl.lit(_Q_TOO_LARGE, pl.Int8))
        .otherwise(pl.lit(0, pl.Int8))
    )


def _carried(name: str, dtype: pl.DataType) -> pl.Expr:
    """Group context: a log row's column, the same on each of its joined rows. ``max``
    where the dtype has one (a reduction, cheaper than ``first`` in polars' streaming
    ``group_by``; of equal values, that value, NaN and null included)."""
    column = pl.col(name)
    if dtype.is_numeric() or dtype.is_temporal() or dtype in (pl.Boolean, pl.String):
        return column.max()
    return column.first()


#: Integer actions from 0 to this - 1 are told apart by a bit each (:func:`_listed_twice`).
_BITS = 64


def _listed_twice(act: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Group context: whether the rows list an action twice (a null action, the one row
    of a log row whose round no table lists, is none); for integer actions, only those
    from 0 to 63 (the others: :func:`_twice_outside`).

    ``n_unique`` keeps a set of values per group, the slowest aggregation of the plan.
    Integer actions from 0 to 63 are instead a bit each of a UInt64, OR-ed over the
    rows: an action listed twice sets its bit once, so the bits set are fewer than
    the rows. Text is told apart by ``n_unique``.

    >>> frame = pl.DataFrame({"r": [1, 1, 2, 2, 3, 3, 4], "a": [0, 63, 5, 5, 64, 64, None]})
    >>> twice = _listed_twice(pl.col("a"), pl.Int64).alias("twice")
    >>> frame.group_by("r").agg(twice).sort("r")["twice"].to_list()
    [False, True, False, False]
    """
    if not dtype.is_integer():
        return pl.len() > act.n_unique()
    small = act.is_between(0, _BITS - 1).fill_null(False)
    bit = pl.lit(2, pl.UInt64).pow(act.cast(pl.UInt32, strict=False))
    bits = pl.when(small).then(bit).otherwise(pl.lit(0, pl.UInt64)).bitwise_or()
    return bits.bitwise_count_ones() < small.sum()


def _twice_outside(tables: list[pl.LazyFrame], ids: list[pl.Expr], action: str) -> pl.LazyFrame:
    """The rounds (and positions) for which one of ``tables`` lists an integer action
    outside 0 to 63 twice, with :data:`_TWICE` true: what :func:`_listed_twice` leaves,
    from those rows alone (a filter that Parquet's statistics answer without reading a
    row group whose actions all lie in 0 to 63). ``ids``: the key columns and the
    action as the rows read them (:func:`_ids`).

    A table listing an action twice for a round gives the joined table (:func:`_table`)
    two rows of it, and only then: the same rounds as ``n_unique`` over those rows.

    >>> policy = pl.LazyFrame({"r": [1, 1, 2, 2, 3, 3], "a": [64, 64, 64, 65, 5, 5]})
    >>> _twice_outside([policy], [pl.col("r"), pl.col("a")], "a").collect().rows()
    [(1, True)]
    """
    outside = pl.col(action).is_not_null() & ~pl.col(action).is_between(0, _BITS - 1)
    keys = [e.meta.output_name() for e in ids[:-1]]
    listed = [
        table.filter(outside)
        .select(ids)
        .group_by([*keys, action])
        .agg(pl.len().alias(_TWICE))
        .filter(pl.col(_TWICE) > 1)
        .select(keys)
        for table in tables
    ]
    return pl.concat(listed).unique().with_columns(pl.lit(True).alias(_TWICE))


def _listed_rows(
    log: pl.LazyFrame,
    policy: pl.LazyFrame,
    reward_model: pl.LazyFrame | None,
    keys: list[str],
    action: str,
    by: list[str],
    options: EvalOptions,
    propensity: str,
    scale: pl.Expr,
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """:func:`_rows` for the list shape: the policy (and reward model) one row per round
    (and position), ``prob`` (``q_hat``) a list indexed by action. Also the log's ids
    and the policy's keys and ``prob`` as these rows read them, for the support warning
    (:func:`_warning`): each table is read once.

    Each log row meets one row of each table (no ``R x A`` rows): rows that line up (the
    same ids at the same row of the log and of each table, as when all were written from
    the same arrays) are paired as they stand, the others joined on the ids. The logged
    action's probability and ``q_hat`` are read with ``list.get``, the round's sums over
    the lists' items, by the same exact sums as the long form's, so the same bits. A
    round (and position) a table lists twice is marked in that table
    (``is_duplicated``), whichever way its rows meet the log.
    """
    schema = log.collect_schema()
    f64 = pl.List(pl.Float64)
    key_ids = _ids(keys, action, schema)[:-1]
    rows = log.select(
        *by,
        *_ids(keys, action, schema),
        pl.col(options.reward),
        pl.col(propensity),
        pl.col(action).is_null().alias(_NULL_LOGGED),
        _logged_twice(keys).alias(_LOGGED_TWICE),
        scale,
    ).with_row_index(_ROW)
    tables = [(policy, PROB, _PROB, _P_DUP)]
    if reward_model is not None:
        tables.append((reward_model, Q_HAT, _QL, _Q_DUP))
    # each table's keys under names of its own beside the log's
    twins = [{key: f"{INTERNAL}t{k}_{key}" for key in keys} for k in range(len(tables))]
    sides: list[pl.LazyFrame] = []
    aligned: list[pl.Expr] = []
    for twin, (table, value, alias, dup) in zip(twins, tables, strict=True):
        sides.append(
            table.select(
                *key_ids, pl.col(value).cast(f64).alias(alias), _TRUE.alias(f"{alias}#in")
            )
            .with_columns(pl.struct(keys).is_duplicated().alias(dup))
            .rename(twin)
        )
        aligned.append(pl.all_horizontal(pl.col(c) == pl.col(twin[c]) for c in keys))
    # read by several branches (and the support warning): computed once, the tables read
    # once (from Parquet, each use would read and decode the lists again)
    side = pl.concat([rows, *sides], how="horizontal_extend").cache()
    paired = pl.all_horizontal(aligned).fill_null(False)
    log_columns = rows.collect_schema().names()
    table_columns = [[alias, f"{alias}#in", dup] for _, _, alias, dup in tables]
    matched = side.filter(paired).select(*log_columns, *(c for cs in table_columns for c in cs))
    rest = side.filter(~paired & pl.col(_ROW).is_not_null()).select(log_columns)
    rest_keys = rest.select(keys)
    for k, (_, _, alias, _) in enumerate(tables):
        # every unpaired row of the table, and the paired ones of a round the rest has
        back = {twin: key for key, twin in twins[k].items()}
        present = pl.col(f"{alias}#in").fill_null(False)
        own = side.filter(present).select(*back, *table_columns[k], paired.alias(_PAIRED))
        own = own.rename(back)
        unpaired = own.filter(~pl.col(_PAIRED))
        shared = own.filter(pl.col(_PAIRED)).join(rest_keys, on=keys, how="semi")
        candidates = pl.concat([unpaired, shared]).drop(_PAIRED)
        rest = rest.join(candidates, on=keys, how="left")
    rows = pl.concat([matched, rest], how="vertical")
    seen_log = side.filter(pl.col(_ROW).is_not_null()).select([*keys, action])
    seen_policy = side.filter(pl.col(f"{_PROB}#in").fill_null(False)).select(
        *(pl.col(twin).alias(key) for key, twin in twins[0].items()), pl.col(_PROB).alias(PROB)
    )
    return _listed_terms(rows, action, model=reward_model is not None), seen_log, seen_policy


def _list_fixed_sum(items: pl.Expr) -> pl.Expr:
    """Each list's :func:`~polars_irmetrics.metrics.scope.fixed_sum` (the same bits as
    the long form's sum over its rows): the items' two units
    (:func:`~polars_irmetrics.metrics.scope.fixed_units`), the same integers, added."""
    high, low = fixed_units(pl.element().fill_null(0.0))
    return fixed_float(items.list.eval(high).list.sum(), items.list.eval(low).list.sum())


def _listed_terms(rows: pl.LazyFrame, action: str, *, model: bool) -> pl.LazyFrame:
    """The columns :func:`_rows` gives, from each log row's lists."""
    prob, act = pl.col(_PROB), pl.col(action)
    length = prob.list.len()
    in_p = pl.col(f"{_PROB}#in").fill_null(False)
    bad = ~pl.element().is_between(0.0, 1.0).fill_null(False)
    columns = [
        # an action outside the list is refused (_ACT_BAD); its probability read as 0
        prob.list.get(act, null_on_oob=True).fill_null(0.0).alias(_PI),
        in_p.cast(pl.Int64).alias(_N_P),
        _list_fixed_sum(prob).alias(_PSUM),
        (in_p & (prob.is_null() | prob.list.eval(bad).list.any().fill_null(True))).alias(_PBAD),
        (in_p & ((act < 0) | (act >= length))).fill_null(False).alias(_ACT_BAD),
    ]
    lengths = [length]
    dup = pl.col(_P_DUP).fill_null(False)
    if model:
        q = pl.col(_QL)
        lengths.append(q.list.len())
        dup = dup | pl.col(_Q_DUP).fill_null(False)
        # both lists cut to the shorter one (a length that differs is refused)
        short = pl.min_horizontal(length, q.list.len())
        p_cut, q_cut = prob.list.head(short), q.list.head(short)
        # times the rewards' scale, (prob * scale) * q_hat as the long form's (_rows):
        # the same bits
        scale = pl.col(SCALE)
        # an item the policy never takes (prob 0) is not read, as in the long form: its
        # term 0 * nan or 0 * inf is NaN, read as 0 (a NaN or infinite q_hat where the
        # probability is positive, and a NaN probability, are refused)
        terms = (p_cut * scale * q_cut).list.eval(pl.element().fill_nan(0.0))
        rows = rows.with_columns(terms.alias(_PQ))  # read by 4 list passes
        # each item's code (_q_codes) where its probability is positive, the largest; a
        # q_hat too small at the rewards' scale (finite, so code 0) as 0.5: the round's
        # largest is 0.5 where it has one and no other code
        item = pl.element()
        code = _q_codes(item, pl.lit(True)).cast(pl.Float64)
        codes = (q_cut * scale).list.eval(code + 0.5 * scaled_tiny(item).fill_null(False))
        positive = p_cut.list.eval((pl.element() > 0).cast(pl.Float64))
        largest = pl.when(in_p).then((codes * positive).list.max())
        columns += [
            (q.list.get(act, null_on_oob=True) * scale).alias(_Q),
            *bounded_list_columns(_EQ, pl.col(_PQ)),
            largest.floor().cast(pl.Int8).alias(_QCODE),
            (largest == 0.5).fill_null(False).alias(_QTINY),
        ]
    columns.append(dup.alias(_DUP))
    # every list of the log's rounds as long as the longest (each table, and both alike;
    # a null list is refused as a null 'prob' or 'q_hat')
    widest = pl.max_horizontal(*(n.max() for n in lengths))
    columns.append(
        (in_p & pl.any_horizontal(n != widest for n in lengths)).fill_null(False).alias(_LEN_BAD)
    )
    rows = rows.select(
        pl.exclude(_PROB, _QL, _PQ, f"{_PROB}#in", f"{_QL}#in", _P_DUP, _Q_DUP), *columns
    )
    if not model:
        return rows
    return with_exact_totals(rows, [_EQ]).with_columns((pl.col(_EQ) / pl.col(_PSUM)).alias(_DM))


def _checks(
    options: EvalOptions, keys: list[str], model: bool, propensity: str, *, listed: bool = False
) -> list[Check]:
    pscore, reward = pl.col(propensity).cast(pl.Float64), pl.col(options.reward)
    where = ", ".join(keys)
    checks = [
        *_log_checks(keys, options.action),
        *null_id_checks(keys, _null_id_rows(keys, model, listed=listed)),
        Check(
            "pscore",
            ~(pscore > 0.0).fill_null(False) | (pscore > 1.0) | pscore.is_nan(),
            InvalidValueError,
            f"column {propensity!r} of the log has {{n}} value(s) that are null, NaN, 0, "
            "negative or above 1 (first: {first}); it is the logging policy's probability "
            "of the logged action, in (0, 1]: a logged action had a positive probability",
        ),
        Check(
            "reward",
            reward.is_null() | reward.cast(pl.Float64).is_nan(),
            InvalidValueError,
            "column {reward!r} of the log has {n} null or NaN value(s) (first: {first}); "
            "every logged round needs its reward: drop those rows, e.g. "
            ".drop_nulls({reward!r})",
        ),
        infinite_reward_check(options.reward),
        subnormal_reward_check(options.reward),
        tiny_reward_check(options.reward),
        Check(
            "policy_round",
            pl.col(_N_P).fill_null(0) == 0,
            QuerySetError,
            "{n} log row(s) have a round the policy table lacks (first: {first}): the policy "
            "needs every logged round's probabilities, "
            + (
                f"one row per ({where}) with column 'prob' a list indexed by action"
                if listed
                else f"one row per ({where}, {{action}}) in column 'prob'"
            ),
        ),
        Check(
            "prob",
            pl.col(_PBAD).fill_null(False),
            InvalidValueError,
            "column 'prob' of the policy table has a value that is null, NaN, negative or "
            "above 1 (first: {first}): probabilities are in [0, 1]",
        ),
        Check(
            "dup",
            pl.col(_DUP).fill_null(False),
            DuplicateError,
            (
                "a round is listed twice in the policy table"
                if listed
                else "an action is listed twice for one round in the policy table"
            )
            + (" or the reward_model table" if model else "")
            + f" (first: {{first}}): keep one row per ({where}"
            + (")" if listed else ", {action})"),
        ),
        Check(
            "sum",
            (pl.col(_N_P) > 0) & ((pl.col(_PSUM) - 1.0).abs() > SUM_TOLERANCE),
            InvalidValueError,
            "column 'prob' of the policy table does not sum to 1 over the actions (first: "
            f"{{first}}, {{n}} log row(s) in all; tolerance {SUM_TOLERANCE:g}): the policy "
            "gives a probability to every action it may take, as many rows as actions",
        ),
    ]
    if not listed:  # the lists' actions are their indexes
        tables = "the policy table" + (" or the reward_model table" if model else "")
        checks.insert(
            len(checks) - 2,
            Check(
                "null_action",
                pl.col(_NULL_ACT).fill_null(False),
                InvalidValueError,
                f"{tables} has a row with a null {{action!r}} (first: {{first}}, {{n}} log "
                "row(s) in all): each row gives the probability (or q_hat) of one action; "
                "drop those rows, e.g. .drop_nulls({action!r}), or name their action",
            ),
        )
    if listed:  # before the sums: a list too short does not sum to 1 either
        model_lists = " and 'q_hat' of the reward_model table" if model else ""
        checks[-3:-3] = [
            Check(
                "action",
                pl.col(_ACT_BAD),
                InvalidValueError,
                "column {action!r} of the log has {n} action(s) outside the policy's list "
                "(first: {first}): with 'prob' a list per round, an action is its index, "
                "from 0 to the list's length - 1",
            ),
            Check(
                "length",
                pl.col(_LEN_BAD),
                InvalidValueError,
                f"the lists of column 'prob' of the policy table{model_lists} differ in "
                "length (first: {first}, {n} log row(s) in all): every list has one item "
                "per action, as many as the longest",
            ),
        ]
    if model:
        checks.append(
            Check(
                "q_hat",
                pl.col(_Q).is_null()
                | pl.col(_Q).is_nan()
                | (pl.col(_QCODE) == _Q_MISSING).fill_null(False),
                QuerySetError,
                "the reward_model table has no 'q_hat' (or a null or NaN one) for the logged "
                "action or an action the policy may take (first: {first}, {n} log row(s) in "
                f"all): give q_hat for every ({where}, {{action}}) the policy gives a "
                "positive probability and every logged one",
            )
        )
        checks.append(
            Check(
                "q_large",
                (pl.col(_QCODE) == _Q_TOO_LARGE).fill_null(False),
                InvalidValueError,
                "the reward_model table has a 'q_hat' that is infinite or 2**62 or more in "
                "magnitude for an action the policy may take (first: {first}, {n} log row(s) "
                "in all): the direct method's sums are exact below 2**62 (where every reward "
                "is below 0.5 in magnitude, q_hat times the power of two that brings the "
                "largest reward to [1, 2)); rescale the rewards and q_hat, e.g. to thousands "
                "rather than units",
            )
        )
        checks.append(
            Check(
                "q_logged_infinite",
                pl.col(_Q).is_infinite().fill_null(False),
                InvalidValueError,
                "the reward_model table has a 'q_hat' for the logged action that is infinite "
                "(or beyond float64's range at the rewards' scale: q_hat times the power of "
                "two that brings the largest reward to [1, 2)) (first: {first}, {n} log "
                "row(s) in all): the doubly robust estimators read the logged action's "
                "w * (reward - q_hat), NaN even where the policy gives it probability 0; give "
                "a finite q_hat, or rescale the rewards and q_hat",
            )
        )
        checks.append(
            Check(
                "q_tiny",
                scaled_tiny(pl.col(_Q)).fill_null(False) | pl.col(_QTINY).fill_null(False),
                InvalidValueError,
                "the reward_model table has a 'q_hat' other than 0 too small beside the log's "
                "largest reward for the logged action or an action the policy may take "
                "(first: {first}, {n} log row(s) in all): q_hat is read at the rewards' scale "
                "(times the power of two that brings the largest reward to [1, 2) where it is "
                "below 0.5) and summed exactly in units of 2**-64, in which a q_hat below "
                "2**-30 would lose its digits; set q_hat below the smallest kept to 0, "
                "negligible beside the rewards, or evaluate such rounds apart",
                detail=pl.format("the smallest kept: {}", FLOOR / pl.col(SCALE)),
            )
        )
    # the round is written as text only on the rows that fail
    return [replace(check, keys=tuple(keys)) for check in checks]


def _weight_checks(w: pl.Expr, keys: list[str], propensity: str) -> list[Check]:
    """The importance weights no scale keeps exact: one that is subnormal (other than 0,
    below 2**-1022: fewer digits than a float64) or beyond float64's range (a
    propensity too small for its probability), refused, the first one's values named.
    Every other weight, tiny or huge, is summed at a power of two of the whole log's
    (:class:`~polars_irmetrics.ope.sums.Summary`'s ``scaled``)."""
    values = pl.format(f"prob={{}}, {propensity}={{}}", pl.col(_PI), pl.col(propensity))
    return [
        Check(
            "weight_subnormal",
            ((w != 0.0) & (w.abs() < _NORMAL)).fill_null(False),
            InvalidValueError,
            f"{{n}} log row(s) have an importance weight prob / {propensity!r} that is "
            f"subnormal, other than 0 but below 2**-1022 = {_NORMAL!r} (first: {{first}}): "
            "such a weight holds fewer digits than a float64, which no scale gives back; "
            "set the policy's probabilities that small to 0 (the action not taken), or "
            "evaluate such rounds apart",
            keys=tuple(keys),
            detail=values,
        ),
        Check(
            "weight_infinite",
            w.is_infinite().fill_null(False),
            InvalidValueError,
            f"{{n}} log row(s) have an importance weight prob / {propensity!r} beyond "
            f"float64's range (first: {{first}}): column {propensity!r} is too small for "
            "the policy's probability (below prob / 1.8e308); drop those rows, or check "
            "how the logging propensities were computed (e.g. a product of many small ones)",
            keys=tuple(keys),
            detail=values,
        ),
    ]


def _null_id_rows(keys: list[str], model: bool, *, listed: bool) -> dict[str, str]:
    """What each row of policy= (and reward_model=) is, for :func:`null_id_checks`."""
    unit = "round" if len(keys) == 1 else "round and position"
    rows = {}
    for name, value, values in [
        ("policy", "probability", "probabilities"),
        ("reward_model", "q_hat", "q_hat"),
    ][: 2 if model else 1]:
        rows[name] = (
            f"each row gives one {unit}'s {values}, a list by action"
            if listed
            else f"each row gives one action's {value} in one {unit}"
        )
    return rows


def _log_checks(keys: list[str], action: str) -> list[Check]:
    """The checks of the log's own ids, raised before any other (a null id or a round
    logged twice would be read as another table's problem, or not at all): a null
    round (position, action), a position below 1, a round (and position) logged twice."""
    where = ", ".join(keys)
    checks = log_id_checks(keys)
    if len(keys) > 1:
        position = keys[1]
        checks += [policy_below_check(position, _POLICY_BELOW)]
    unit = "round" if len(keys) == 1 else "round and position"
    checks += [
        replace(
            null_check(action),
            name="null_logged",
            bad=pl.col(_NULL_LOGGED).fill_null(False),
        ),
        Check(
            "logged_twice",
            pl.col(_LOGGED_TWICE).fill_null(False),
            DuplicateError,
            f"{{n}} log row(s) share their ({where}) with another row of the log (first: "
            f"{{first}}): one action is logged per {unit}; keep one row per ({where})",
        ),
    ]
    return checks
