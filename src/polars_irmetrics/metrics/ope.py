"""Off-policy estimators: the value a new policy would have online, from a logged policy's log.

These metrics read a log of logged feedback (``"run"``: one row per logged round, and per
position when a list was shown: the round, the action taken, its reward and the logging
policy's probability of it, ``pscore``), the evaluation policy (``"policy"``: its
probability ``prob`` of each action of each round) and, for the model-based estimators,
a reward model (``"reward_model"``: ``q_hat``, the estimated expected reward of each
action of each round). They are computed by :func:`polars_irmetrics.evaluate` with
``policy=`` and ``reward_model=`` (:mod:`polars_irmetrics.ope`); this module declares them
and holds their formulas, each as a polars expression of one log row's contribution.

Notation, as Open Bandit Pipeline's (obp 0.5.7, ``obp/ope/estimators.py``), which every
value equals to 1e-9 (tests/fixtures/ope/):

* ``w = pi_e(a_t | x_t) / pscore_t``: the importance weight of the logged action (an
  action the policy table does not list has probability 0);
* ``q_hat(x_t, pi_e) = sum_a pi_e(a | x_t) q_hat(x_t, a) / sum_a pi_e(a | x_t)``: the
  reward model's value of the policy in that round (numpy's ``average`` with the
  policy's probabilities as weights, as obp computes it);
* ``q_hat(x_t, a_t)``: the reward model's value of the logged action;
* ``E_n``: the mean over the log's rows (with several positions, over the logged slots).

Slates (``slate_*``, ``cascade_dr``): the log has one row per ``(round_id, position)``
(positions numbered from 1, the top), each with its slot's reward; a slate estimate is
the expected *sum* of the slot rewards per round, ``sum over rows / number of rounds``.
The logging policy's propensities are in the log (``pscore`` for the whole slate,
``pscore_item_position`` for the item at that position, ``pscore_cascade`` for the top-l
prefix), the evaluation policy's in ``policy=`` under the same names, keyed by
``(round_id, position)``; ``slate_sniips`` and ``slate_snrips`` normalise within each
position (obp's ``BaseSlateSelfNormalizedInverseProbabilityWeighting``), ``slate_snips``
over every row.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import divide
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Input, Metric, Param, Params

__all__ = [
    "CASCADE_METRICS",
    "MODEL_METRICS",
    "OPE_METRICS",
    "SELF_NORMALIZED",
    "SLATE_COLUMNS",
    "WEIGHTED",
    "OpeTerms",
    "components",
    "contribution",
    "effective_weight",
    "ope_parameter",
]

_OBP = "obp"
_FIXTURES = "on obp's SyntheticBanditDataset (tests/fixtures/ope/), to 1e-9"

#: The smallest normal float64: a ``clip`` other than 0 below it is refused.
_NORMAL = 2.0**-1022
#: Metrics that read the reward model (``reward_model=``).
MODEL_METRICS = frozenset({"dm", "dr", "sndr", "switch_dr", "dr_os", "sg_dr", "cascade_dr"})
#: The slate IPS estimators: the propensity column each reads (in the log and the policy)
#: and whether it normalises within each position (``"position"``), over every row
#: (``"all"``) or not at all (``None``).
SLATE_COLUMNS: dict[str, tuple[str, str | None]] = {
    "slate_ips": ("pscore", None),
    "slate_iips": ("pscore_item_position", None),
    "slate_rips": ("pscore_cascade", None),
    "slate_snips": ("pscore", "all"),
    "slate_sniips": ("pscore_item_position", "position"),
    "slate_snrips": ("pscore_cascade", "position"),
}
#: The cascade estimators: the policy and the reward model keyed by (round, position, action).
CASCADE_METRICS = frozenset({"cascade_dr"})
#: Metrics normalised by the mean importance weight of their group.
SELF_NORMALIZED = frozenset({"snips", "sndr"})
#: Metrics that weigh the logged rewards (all but ``dm``).
WEIGHTED = frozenset({"ips", "snips", "dr", "sndr", "switch_dr", "dr_os", "sg_ips", "sg_dr"})


@dataclass(frozen=True)
class OpeTerms:
    """The columns of one log row that every estimator is a formula of.

    ``r``: the reward; ``w``: the importance weight; ``dm``: the reward model's value of
    the policy in the row's round (and position); ``q``: the reward model's value of the
    logged action; ``mean_w``: the mean weight of the row's group (a window or an
    aggregation, where the self-normalised estimators are computed).
    """

    r: pl.Expr
    w: pl.Expr
    dm: pl.Expr
    q: pl.Expr
    mean_w: pl.Expr


def ope_parameter(name: str, params: Params, label: str, *, high: float = math.inf) -> float:
    """The estimator's parameter ``name`` (``clip``, ``tau``, ``lambda``), checked as obp's
    ``check_scalar`` does: a number in ``[0, high]`` (``lambda`` of ``sg_*``: ``high=1``),
    not NaN.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> request = parse_metric("sg_ips(lambda=2)")
    >>> ope_parameter("lambda", request.params(1), "sg_ips(lambda=2)", high=1.0)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'sg_ips(lambda=2)': lambda must be a
    number in [0, 1], got 2
    """
    value = params.options[name]
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and not math.isnan(value)
        and 0.0 <= value <= high
    ):
        if name == "clip" and 0.0 < value < _NORMAL:
            raise MetricParameterError(
                f"metric {label!r}: clip={value!r} is subnormal (other than 0 but below "
                f"2**-1022 = {_NORMAL!r}, the smallest normal float64): the weights it caps "
                "would hold fewer digits than a float64; use clip=0 (no weight) or a clip "
                "of at least 2**-1022"
            )
        return float(value)
    if high == 1.0:
        bound = "in [0, 1]"
    elif name == "lambda":  # dr_os: lambda shrinks the weights, inf leaves them (dr)
        bound = ">= 0 (inf: no shrinkage, dr's estimate)"
    else:
        bound = ">= 0 (inf: no threshold)"
    raise MetricParameterError(f"metric {label!r}: {name} must be a number {bound}, got {value!r}")


def contribution(name: str, params: Params, label: str, t: OpeTerms) -> pl.Expr:
    """One log row's contribution to estimator ``name``: the estimate is its mean.

    Examples
    --------
    A row with reward 1, weight 4, ``q_hat(x, pi_e) = 0.5`` and ``q_hat(x, a) = 0.25``:
    ``ips(clip=2)`` is ``1 * min(4, 2) = 2``; ``dr`` is ``0.5 + 4 * (1 - 0.25) = 3.5``;
    ``switch_dr(tau=3)`` drops the correction of a weight above 3: ``0.5``; ``sg_ips(lambda=0.5)``
    shrinks the weight to ``4 / (1 - 0.5 + 0.5 * 4) = 1.6``:

    >>> import polars as pl
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> t = OpeTerms(pl.lit(1.0), pl.lit(4.0), pl.lit(0.5), pl.lit(0.25), pl.lit(4.0))
    >>> names = ["ips(clip=2)", "dr", "switch_dr(tau=3)", "sg_ips(lambda=0.5)"]
    >>> exprs = [
    ...     contribution(parse_metric(n).metric.name, parse_metric(n).params(1), n, t).alias(n)
    ...     for n in names
    ... ]
    >>> pl.select(exprs).row(0)
    (2.0, 3.5, 0.5, 1.6)
    """
    r, w, dm, q = t.r, t.w, t.dm, t.q
    if name == "ips":
        return r * _capped(w, ope_parameter("clip", params, label))
    # divide: the mean weight is one value for every row where the rows are not split
    # by keys, which polars' in-memory engine would divide by as a product with its
    # reciprocal (a unit in the last place off the streaming engine's quotient)
    if name == "snips":
        return divide(r * w, t.mean_w)
    if name == "dm":
        return dm
    if name == "dr":
        return dm + _capped(w, ope_parameter("clip", params, label)) * (r - q)
    if name == "sndr":
        return dm + divide(w * (r - q), t.mean_w)
    if name == "switch_dr":
        tau = ope_parameter("tau", params, label)
        return dm + (w <= tau).cast(pl.Float64) * w * (r - q)
    if name == "dr_os":
        lam = ope_parameter("lambda", params, label)
        shrunk = w if math.isinf(lam) else (lam * w) / (w * w + lam)
        return dm + shrunk * (r - q)
    lam = ope_parameter("lambda", params, label, high=1.0)
    shrunk = w / (1.0 - lam + lam * w)
    if name == "sg_ips":
        return shrunk * r
    if name == "sg_dr":
        return dm + shrunk * (r - q)
    raise MetricParameterError(
        f"metric {label!r} is not an off-policy estimator"
    )  # pragma: no cover


def effective_weight(name: str, params: Params, label: str, w: pl.Expr) -> pl.Expr:
    """The weight a weighted estimator (:data:`WEIGHTED`) gives a logged reward, capped,
    switched or shrunk: its :func:`contribution` at a reward of 1, ``dm = q = 0`` and a
    mean weight of 1, to the bit, written plainly, so that estimators giving the same
    weight (``ips``, ``snips``, ``dr`` and ``sndr``: ``w``) share its sums (the
    effective sample size and the largest weight read them).

    Examples
    --------
    A weight of 4: ``switch_dr(tau=3)`` gives it 0, ``sg_ips(lambda=0.5)``
    ``4 / (1 - 0.5 + 0.5 * 4) = 1.6``:

    >>> import polars as pl
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> names = ["dr", "switch_dr(tau=3)", "sg_ips(lambda=0.5)", "dr_os(lambda=4)"]
    >>> exprs = [
    ...     effective_weight(
    ...         parse_metric(n).metric.name, parse_metric(n).params(1), n, pl.lit(4.0)
    ...     ).alias(n)
    ...     for n in names
    ... ]
    >>> pl.select(exprs).row(0)  # dr_os: 4 * 4 / (4 * 4 + 4)
    (4.0, 0.0, 1.6, 0.8)
    """
    if name in ("ips", "dr"):
        return _capped(w, ope_parameter("clip", params, label))
    if name in ("snips", "sndr"):
        return w
    if name == "switch_dr":
        return (w <= ope_parameter("tau", params, label)).cast(pl.Float64) * w
    if name == "dr_os":
        lam = ope_parameter("lambda", params, label)
        return w if math.isinf(lam) else (lam * w) / (w * w + lam)
    if name in ("sg_ips", "sg_dr"):
        lam = ope_parameter("lambda", params, label, high=1.0)
        return w / (1.0 - lam + lam * w)
    raise MetricParameterError(f"metric {label!r} gives no importance weight")  # pragma: no cover


def components(
    name: str, params: Params, label: str, t: OpeTerms
) -> list[tuple[pl.Expr, pl.Expr | None]]:
    """The estimator as a sum of ratios of sums over the log's rows: ``[(num, den), ...]``
    with the estimate ``sum_k sum(num_k) / sum(den_k)`` (``den`` ``None``: the number of
    rows). A resample of the rows (the bootstrap) recomputes each sum, so that the
    self-normalised estimators are normalised within each resample.

    Examples
    --------
    ``sndr`` is the direct method's mean plus the corrections' sum over the weights' sum:

    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> t = OpeTerms(pl.col("r"), pl.col("w"), pl.col("dm"), pl.col("q"), pl.col("w").mean())
    >>> [den is None for _, den in components("sndr", parse_metric("sndr").params(1), "sndr", t)]
    [True, False]
    """
    r, w, dm, q = t.r, t.w, t.dm, t.q
    if name == "snips":
        return [(r * w, w)]
    if name == "sndr":
        return [(dm, None), (w * (r - q), w)]
    return [(contribution(name, params, label, t), None)]


def _capped(w: pl.Expr, cap: float) -> pl.Expr:
    """obp's ``np.minimum(iw, lambda_)``: each weight capped at ``cap`` (not zeroed)."""
    return w if math.isinf(cap) else pl.min_horizontal(w, pl.lit(cap))


def _log_only(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} is an off-policy estimator: it reads a log of logged feedback "
            "and an evaluation policy, not a ranked run; compute it with "
            "irm.evaluate(log, [...], policy=..., reward_model=...)"
        )

    return compute


_CLIP = Param(
    "clip",
    math.inf,
    doc="cap of each importance weight (obp's lambda_: weights above it count as it, "
    "not 0); inf: no cap",
)


def _estimator(
    name: str,
    summary: str,
    *,
    obp: str,
    formula: str,
    latex: str,
    params: tuple[Param, ...] = (),
) -> Metric:
    reads: tuple[Input, ...] = (
        ("run", "policy", "reward_model") if name in MODEL_METRICS else ("run", "policy")
    )
    fixtures = _FIXTURES.replace("SyntheticBanditDataset", "SyntheticSlateBanditDataset")
    return Metric(
        name,
        summary,
        _log_only(name),
        cutoff="none",
        binary=False,
        params=params,
        formula=formula,
        latex=latex,
        reads=reads,
        matches={
            _OBP: f"{obp} {fixtures if name.startswith(('slate', 'cascade')) else _FIXTURES}"
        },
    )


def _slate(name: str, summary: str, obp: str, column: str, normalised: str) -> Metric:
    return _estimator(
        name,
        summary,
        obp=obp,
        formula=f"sum over the log's rows of r w / (number of rounds), w = "
        f"policy.{column} / log.{column}{normalised} (McInerney et al. 2020)",
        latex=r"\frac{1}{n}\sum_{i,l} r_i(l)\, w_i(l)",
    )


OPE_METRICS: tuple[Metric, ...] = (
    _estimator(
        "ips",
        "inverse propensity scoring: the logged rewards weighted by the policy's over the "
        "logger's probability; unbiased when every action the policy takes was possible "
        "under the logger",
        obp="InverseProbabilityWeighting(lambda_=clip)",
        params=(_CLIP,),
        formula="E_n[min(w, clip) r] (Horvitz & Thompson 1952; Strehl et al. 2010)",
        latex=r"\mathbb{E}_n\left[\min(w_t, \lambda)\, r_t\right]",
    ),
    _estimator(
        "snips",
        "self-normalised IPS: IPS divided by the mean weight (biased, far less variance)",
        obp="SelfNormalizedInverseProbabilityWeighting",
        formula="E_n[w r] / E_n[w] (Swaminathan & Joachims 2015); weights are not capped",
        latex=r"\frac{\mathbb{E}_n[w_t r_t]}{\mathbb{E}_n[w_t]}",
    ),
    _estimator(
        "dm",
        "direct method: the reward model's value of the policy, averaged over the logged "
        "rounds; as good as the model",
        obp="DirectMethod",
        formula="E_n[q_hat(x, pi_e)], q_hat(x, pi_e) = sum_a pi_e(a|x) q_hat(x, a) / "
        "sum_a pi_e(a|x) (Beygelzimer & Langford 2009)",
        latex=r"\mathbb{E}_n\left[\hat q(x_t, \pi_e)\right]",
    ),
    _estimator(
        "dr",
        "doubly robust: the direct method plus IPS of the model's error; unbiased when "
        "the propensities or the model are right",
        obp="DoublyRobust(lambda_=clip)",
        params=(_CLIP,),
        formula="E_n[q_hat(x, pi_e) + min(w, clip) (r - q_hat(x, a))] (Dudík et al. 2014)",
        latex=r"\mathbb{E}_n\left[\hat q(x_t, \pi_e) + \min(w_t, \lambda)"
        r"(r_t - \hat q(x_t, a_t))\right]",
    ),
    _estimator(
        "sndr",
        "self-normalised doubly robust: DR with the correction divided by the mean weight",
        obp="SelfNormalizedDoublyRobust",
        formula="E_n[q_hat(x, pi_e) + w (r - q_hat(x, a)) / E_n[w]]",
        latex=r"\mathbb{E}_n\left[\hat q(x_t, \pi_e) + \frac{w_t (r_t - \hat q(x_t, a_t))}"
        r"{\mathbb{E}_n[w]}\right]",
    ),
    _estimator(
        "switch_dr",
        "switch doubly robust: DR where the weight is at most tau, the direct method alone "
        "above it",
        obp="SwitchDoublyRobust(lambda_=tau)",
        params=(Param("tau", math.inf, doc="weight threshold; inf: DR everywhere"),),
        formula="E_n[q_hat(x, pi_e) + [w <= tau] w (r - q_hat(x, a))] (Wang et al. 2017)",
        latex=r"\mathbb{E}_n\left[\hat q(x_t, \pi_e) + \mathbb{I}\{w_t \le \tau\} w_t"
        r"(r_t - \hat q(x_t, a_t))\right]",
    ),
    _estimator(
        "dr_os",
        "doubly robust with optimistic shrinkage: DR with each weight shrunk to "
        "lambda w / (w^2 + lambda)",
        obp="DoublyRobustWithShrinkage(lambda_=lambda)",
        params=(
            Param(
                "lambda",
                0.0,
                doc="shrinkage (>= 0; 0: the direct method; inf: DR), obp's default 0",
            ),
        ),
        formula="E_n[q_hat(x, pi_e) + lambda w / (w^2 + lambda) (r - q_hat(x, a))] "
        "(Su et al. 2020); lambda = inf is DR",
        latex=r"\mathbb{E}_n\left[\hat q(x_t, \pi_e) + \frac{\lambda w_t}{w_t^2 + \lambda}"
        r"(r_t - \hat q(x_t, a_t))\right]",
    ),
    _estimator(
        "sg_ips",
        "subgaussian IPS: IPS with each weight shrunk to w / (1 - lambda + lambda w)",
        obp="SubGaussianInverseProbabilityWeighting(lambda_=lambda)",
        params=(Param("lambda", 0.0, doc="shrinkage in [0, 1] (0: IPS), obp's default 0"),),
        formula="E_n[w / (1 - lambda + lambda w) r] (Metelli et al. 2021)",
        latex=r"\mathbb{E}_n\left[\frac{w_t}{1 - \lambda + \lambda w_t} r_t\right]",
    ),
    _estimator(
        "sg_dr",
        "subgaussian doubly robust: DR with the weight shrunk as in sg_ips",
        obp="SubGaussianDoublyRobust(lambda_=lambda)",
        params=(Param("lambda", 0.0, doc="shrinkage in [0, 1] (0: DR), obp's default 0"),),
        formula="E_n[q_hat(x, pi_e) + w / (1 - lambda + lambda w) (r - q_hat(x, a))]",
        latex=r"\mathbb{E}_n\left[\hat q(x_t, \pi_e) + \frac{w_t}{1 - \lambda + \lambda w_t}"
        r"(r_t - \hat q(x_t, a_t))\right]",
    ),
    _slate(
        "slate_ips",
        "slate standard IPS: each slot's reward weighted by the whole slate's propensity ratio",
        "SlateStandardIPS",
        "pscore",
        "",
    ),
    _slate(
        "slate_iips",
        "slate independent IPS: each slot's reward weighted by its item-position propensity "
        "ratio (rewards independent across slots)",
        "SlateIndependentIPS",
        "pscore_item_position",
        "",
    ),
    _slate(
        "slate_rips",
        "slate reward-interaction IPS: each slot's reward weighted by the ratio of the top-l "
        "prefix's propensities (a user reads from the top)",
        "SlateRewardInteractionIPS",
        "pscore_cascade",
        "",
    ),
    _slate(
        "slate_snips",
        "self-normalised slate standard IPS",
        "SelfNormalizedSlateStandardIPS",
        "pscore",
        ", each weight divided by the mean weight of every row",
    ),
    _slate(
        "slate_sniips",
        "self-normalised slate independent IPS (normalised within each position)",
        "SelfNormalizedSlateIndependentIPS",
        "pscore_item_position",
        ", each weight divided by the mean weight of the rows at its position",
    ),
    _slate(
        "slate_snrips",
        "self-normalised slate reward-interaction IPS (normalised within each position)",
        "SelfNormalizedSlateRewardInteractionIPS",
        "pscore_cascade",
        ", each weight divided by the mean weight of the rows at its position",
    ),
    _estimator(
        "cascade_dr",
        "cascade doubly robust: the reward model's value of the next slot under the policy "
        "plus the weighted error of the logged slot, under the cascade behaviour model",
        obp="SlateCascadeDoublyRobust",
        formula="sum over rows (i, l) of w_l (r_l - q_hat_l(a_l)) + w_{l-1} sum_a "
        "pi_e(a | a_1..a_{l-1}) q_hat_l(a), over the number of rounds; w_l = prod_{k<=l} "
        "pi_e(a_k | a_1..a_{k-1}) / pscore_cascade_l, w_0 = 1 (Kiyohara et al. 2022)",
        latex=r"\frac{1}{n}\sum_{i,l}\left[w_{i,l}(r_i(l) - \hat Q_l(a_i(l))) + w_{i,l-1}"
        r"\sum_a \pi_e(a \mid a_i(1{:}l{-}1))\hat Q_l(a)\right]",
    ),
)
