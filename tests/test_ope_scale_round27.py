"""Off-policy sums at a power of two of their own, round 27: the bootstrap's bucket sums
(``ci_method="bootstrap"``) are read at the scales of the point estimate's sums of the
same terms, so that weights all tiny or all huge keep their digits in the intervals too
(float64's formula over the same resamples, ``math.fsum``), with the same bits in one
plan, out of core (``buckets=``) and on Spark and Dask; a propensity column built from a
polars scalar (``pl.lit``) gives the same bits in one plan as in buckets."""

from __future__ import annotations

import functools
import math
import re
import warnings
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, SupportWarning
from polars_irmetrics.ope.intervals import _hashed, _poisson_counts

from .helpers import at_once, engine_io

#: Twelve rounds, action "a" logged in each.
REWARDS = [1.0, 0.0, 0.5, 1.0, 0.25, 0.75, 1.0, 0.0, 0.125, 1.0, 0.5, 0.375]
PSCORES = [0.5, 0.25, 0.8, 0.4, 0.3, 0.6, 0.45, 0.7, 0.2, 0.55, 0.35, 0.65]
#: The evaluation policy's probability of "a" (the rest on "b").
ORDINARY = [0.9, 0.5, 0.1, 0.3, 0.7, 0.2, 0.6, 0.4, 0.8, 0.15, 0.35, 0.55]
TINY = [p * 1e-20 for p in ORDINARY]
HUGE_PSCORES = [p * 1e-300 for p in PSCORES]
Q_A, Q_B = 0.6, 0.3
ROUNDS = list(range(1, 13))
N_BOOT, SEED, CI = 60, 7, 0.9


def _log(pscores: list[float], rewards: list[float] = REWARDS) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "round_id": ROUNDS,
            "action": ["a"] * 12,
            "reward": rewards,
            "pscore": pscores,
            "segment": [1] * 6 + [2] * 6,
        }
    )


def _policy(probs: list[float]) -> pl.DataFrame:
    rounds = [r for r in ROUNDS for _ in range(2)]
    values = [v for p in probs for v in (p, 1.0 - p)]
    return pl.DataFrame({"round_id": rounds, "action": ["a", "b"] * 12, "prob": values})


def _model() -> pl.DataFrame:
    rounds = [r for r in ROUNDS for _ in range(2)]
    return pl.DataFrame({"round_id": rounds, "action": ["a", "b"] * 12, "q_hat": [Q_A, Q_B] * 12})


def _evaluate(
    metric: str, probs: list[float], pscores: list[float], lazy: bool = False, **kw: Any
) -> pl.DataFrame:
    model = _model() if metric.split("(")[0] in ("dr", "sndr") else None
    kw = {"ci": CI, "n_bootstrap": N_BOOT, "seed": SEED, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        if lazy:
            return irm.evaluate(
                _log(pscores).lazy(),
                [metric],
                policy=_policy(probs).lazy(),
                reward_model=None if model is None else model.lazy(),
                **kw,
            ).collect()
        return irm.evaluate(
            _log(pscores), [metric], policy=_policy(probs), reward_model=model, **kw
        )


def _weights(metric: str, probs: list[float], pscores: list[float]) -> list[float]:
    raw = [p / s for p, s in zip(probs, pscores, strict=True)]
    if "clip=" in metric:
        cap = float(metric.split("clip=")[1].rstrip(")"))
        return [min(w, cap) for w in raw]
    return raw


def _resampled_counts() -> np.ndarray:
    """Each round's Poisson(1) count in each of the bootstrap's resamples (rounds x
    resamples): the library's counter-based draws of (seed, group 0, the round's bucket:
    the hash of its id), each resample that draws no round skipped for the next."""
    ids = pl.DataFrame({"round_id": ROUNDS})
    buckets = ids.select(_hashed(["round_id"], ids.schema, SEED)).to_series().to_numpy()
    draws = np.arange(4 * N_BOOT, dtype=np.uint64)[None, :]
    counts = _poisson_counts(np.zeros(len(ROUNDS), np.uint64), buckets, draws, SEED)
    return counts[:, counts.sum(axis=0) > 0][:, :N_BOOT]


def _oracle(metric: str, probs: list[float], pscores: list[float]) -> tuple[float, float]:
    """The percentile interval of float64's formula of each resample's estimate, the
    rows' terms times their counts added by math.fsum."""
    w = _weights(metric, probs, pscores)
    name = metric.split("(")[0]
    if name == "dr":
        dm = [p * Q_A + (1.0 - p) * Q_B for p in probs]
        x = [d + v * (r - Q_A) for d, v, r in zip(dm, w, REWARDS, strict=True)]
    else:
        x = [r * v for r, v in zip(REWARDS, w, strict=True)]
    estimates = []
    for c in _resampled_counts().T:
        num = math.fsum(k * v for k, v in zip(c, x, strict=True))
        den = math.fsum(k * v for k, v in zip(c, w, strict=True)) if name == "snips" else c.sum()
        estimates.append(num / den)
    alpha = 1.0 - CI
    low, high = np.percentile(estimates, [50.0 * alpha, 100.0 - 50.0 * alpha])
    return float(low), float(high)


CASES = [
    ("ips(clip=1e-12)", ORDINARY, PSCORES),
    ("ips(clip=1e-300)", ORDINARY, PSCORES),
    ("ips", TINY, PSCORES),
    ("snips", TINY, PSCORES),
    ("ips", ORDINARY, HUGE_PSCORES),
    ("snips", ORDINARY, HUGE_PSCORES),
    ("dr", ORDINARY, HUGE_PSCORES),
    ("ips", ORDINARY, PSCORES),  # ordinary weights: read at scale 1, as before
]
IDS = ["clip=1e-12", "clip=1e-300", "tiny ips", "tiny snips", "huge ips", "huge snips", "huge dr"]
IDS.append("ordinary ips")


#: The cases' metrics by their tables (probs, pscores): each table pair's metrics are
#: evaluated in one call (:func:`_pooled`), each case reading its own columns.
_POOLS: dict[tuple[tuple[float, ...], tuple[float, ...]], list[str]] = {}
for _metric, _probs, _pscores in CASES:
    _POOLS.setdefault((tuple(_probs), tuple(_pscores)), []).append(_metric)


@functools.cache
def _pooled_call(
    probs: tuple[float, ...], pscores: tuple[float, ...], lazy: bool, options: tuple[Any, ...]
) -> pl.DataFrame:
    metrics = _POOLS[probs, pscores]
    reads_model = any(m.split("(")[0] in ("dr", "sndr") for m in metrics)
    kw = {"ci": CI, "n_bootstrap": N_BOOT, "seed": SEED, **dict(options)}
    log, policy = _log(list(pscores)), _policy(list(probs))
    model = _model() if reads_model else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        if lazy:
            return irm.evaluate(
                log.lazy(),
                metrics,
                policy=policy.lazy(),
                reward_model=None if model is None else model.lazy(),
                **kw,
            ).collect()
        return irm.evaluate(log, metrics, policy=policy, reward_model=model, **kw)


def _pooled(
    metric: str, probs: list[float], pscores: list[float], lazy: bool = False, **kw: Any
) -> pl.DataFrame:
    """``metric``'s columns (after the segment and the count) of the one call of every
    case on its tables (:data:`_POOLS`; ``_evaluate``'s options), made once per module:
    a case's metric beside the others of its tables, as alone (each metric's sums are
    read at their own scale)."""
    out = _pooled_call(tuple(probs), tuple(pscores), lazy, tuple(sorted(kw.items())))
    own = [c for c in out.columns if c == metric or c.startswith(f"{metric}_")]
    first = out.columns.index(_POOLS[tuple(probs), tuple(pscores)][0])
    return out.select(*out.columns[:first], *own)  # the segment and count, then its own


@pytest.mark.parametrize(("metric", "probs", "pscores"), CASES, ids=IDS)
def test_the_bootstrap_interval_is_float64s_formula_over_the_same_resamples(
    metric: str, probs: list[float], pscores: list[float]
) -> None:
    # the buckets' sums kept about 24 bits at clip=1e-12 (1e-12 is 1.8e7 units of
    # 2**-64): the bounds were off by about 1e-8 of themselves; none at clip=1e-300
    out = _pooled(metric, probs, pscores)
    low, high = _oracle(metric, probs, pscores)
    assert math.isclose(out[f"{metric}_lower"].item(), low, rel_tol=1e-13), (out, low)
    assert math.isclose(out[f"{metric}_upper"].item(), high, rel_tol=1e-13), (out, high)


def test_a_power_of_two_clip_moves_the_interval_by_it_exactly() -> None:
    # every weight is at least 1 (prob 0.9 over pscore 0.5 to 0.9), so clip=1 makes each
    # 1 and clip=2**-70 each 2**-70: the second interval is the first times 2**-70, bit
    # for bit. Unscaled, a bucket's term r * 2**-70 is r / 64 units of 2**-64, floored
    # to 0 for every reward up to 1: the interval read [0, 0]
    probs = [0.9] * 12
    pscores = [0.5, 0.6, 0.7, 0.8, 0.9, 0.55, 0.65, 0.75, 0.85, 0.5, 0.6, 0.7]
    one = _evaluate("ips(clip=1.0)", probs, pscores)
    tiny = _evaluate(f"ips(clip={2.0**-70!r})", probs, pscores)
    label = f"ips(clip={2.0**-70!r})"
    for side in ("lower", "upper"):
        expected = math.ldexp(one[f"ips(clip=1.0)_{side}"].item(), -70)
        assert tiny[f"{label}_{side}"].item() == expected
    assert tiny[f"{label}_lower"].item() > 0.0
    assert tiny[label].item() == math.ldexp(one["ips(clip=1.0)"].item(), -70)


_SPLIT = [{}, {"by": "segment"}]


@pytest.mark.parametrize("options", _SPLIT, ids=str)
@pytest.mark.parametrize(("metric", "probs", "pscores"), CASES, ids=IDS)
def test_out_of_core_gives_the_same_bits(
    metric: str, probs: list[float], pscores: list[float], options: dict[str, Any]
) -> None:
    whole = _pooled(metric, probs, pscores, **options)
    for buckets in (2, 3):
        split = _pooled(metric, probs, pscores, lazy=True, buckets=buckets, **options)
        assert split.equals(whole), (buckets, whole, split)


ENGINE_CASES = CASES[:1] + CASES[3:4] + CASES[6:7]


def _engine_bits(
    io: tuple[Any, Any, Any], metric: str, probs: list[float], pscores: list[float]
) -> pl.DataFrame:
    """The engine's values (``io``: helpers.engine_io's) of a case of
    :func:`test_the_engines_give_the_same_bits`."""
    evaluate, to_engine, back = io
    reads_model = metric.split("(")[0] == "dr"
    out = evaluate(
        to_engine(_log(pscores)),
        [metric],
        policy=to_engine(_policy(probs)),
        reward_model=to_engine(_model()) if reads_model else None,
        by="segment",
        partitions=2,
        ci=CI,
        n_bootstrap=N_BOOT,
        seed=SEED,
    )
    return back(out)  # type: ignore[no-any-return]


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(("metric", "probs", "pscores"), ENGINE_CASES)
def test_the_engines_give_the_same_bits(
    engine: str,
    metric: str,
    probs: list[float],
    pscores: list[float],
    request: pytest.FixtureRequest,
) -> None:
    whole = _evaluate(metric, probs, pscores, by="segment")
    if engine == "spark":  # the module's Spark calls, made at once
        got = request.getfixturevalue("spark_values")[(metric, tuple(probs), tuple(pscores))]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SupportWarning)
            got = _engine_bits(engine_io(engine, request), metric, probs, pscores)
    got = got.sort("segment")
    assert got.columns == whole.columns
    assert got.cast(whole.schema).equals(whole), (whole, got)


# --- a propensity built from a polars scalar (note 23's unconfirmed case) -------------


def test_polars_divides_by_a_literal_column_as_by_its_reciprocal() -> None:
    # the hazard: a column made by pl.lit stays a scalar in a lazy plan until a join
    # materialises it, and a column divided by a scalar is multiplied by its reciprocal
    # (0.7 / 0.11 = 6.363636363636363, 0.7 * (1 / 0.11) = 6.363636363636364) on most rows
    frame = pl.LazyFrame({"k": [1, 2, 3], "a": [0.7] * 3}).with_columns(p=pl.lit(0.11))
    assert 0.7 * (1 / 0.11) != 0.7 / 0.11
    divided = frame.select(pl.col("a") / pl.col("p")).collect()["a"]
    assert divided[0] == 0.7 * (1 / 0.11)
    joined = frame.join(pl.LazyFrame({"k": [1, 2, 3]}), on="k")
    assert joined.select(pl.col("a") / pl.col("p")).collect()["a"].to_list() == [0.7 / 0.11] * 3


def _lit_log() -> pl.LazyFrame:
    rng = np.random.default_rng(3)
    frame = pl.DataFrame(
        {
            "round_id": np.arange(60),
            "action": rng.integers(0, 3, 60),
            "reward": rng.random(60),
            "segment": np.arange(60) % 2,
        }
    )
    return frame.lazy().with_columns(pscore=pl.lit(0.11))


def _lit_tables(prob: str) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    rounds, actions = np.repeat(np.arange(60), 3), np.tile(np.arange(3), 60)
    probs = np.tile([0.37, 0.21, 0.42], 60)
    policy = pl.DataFrame({"round_id": rounds, "action": actions, "prob": probs}).lazy()
    if prob == "lit":
        policy = policy.with_columns(prob=pl.lit(1.0 / 3.0))
    q = np.random.default_rng(4).random(180)
    model = pl.DataFrame({"round_id": rounds, "action": actions, "q_hat": q}).lazy()
    if prob == "listed":  # obp's shape: a list per round, indexed by action
        policy = policy.group_by("round_id", maintain_order=True).agg("prob")
        model = model.group_by("round_id", maintain_order=True).agg("q_hat")
    return policy, model


@pytest.mark.parametrize("prob", ["long", "lit", "listed"])
@pytest.mark.parametrize(
    "options",
    [{}, {"by": "segment"}, {"per_query": True}, {"ci": 0.9, "n_bootstrap": 20}],
    ids=str,
)
def test_a_literal_pscore_gives_the_same_bits_in_one_plan_and_in_buckets(
    prob: str, options: dict[str, Any]
) -> None:
    # refuted: every weight divides after the log's join with the policy, where the
    # literal is a column of values (divided value by value on every path)
    policy, model = _lit_tables(prob)
    metrics = ["ips", "snips", "dr", "sndr", "ips(clip=3)"]
    log = _lit_log()
    one = irm.evaluate(log, metrics, policy=policy, reward_model=model, **options).collect()
    split = irm.evaluate(
        log, metrics, policy=policy, reward_model=model, buckets=2, **options
    ).collect()
    assert split.equals(one)
    # and they are the weights of a pscore column of values
    values = log.with_columns(pscore=pl.col("reward") * 0.0 + 0.11)
    same = irm.evaluate(values, metrics, policy=policy, reward_model=model, **options).collect()
    assert same.equals(one)


def test_a_literal_pscore_gives_the_weights_of_a_division() -> None:
    # ips of rewards r at pscore 0.11 and prob 0.37 (action 0): the mean of r * (0.37 / 0.11)
    policy, _ = _lit_tables("long")
    log = _lit_log().filter(pl.col("action") == 0)
    out = irm.evaluate(log, ["ips"], policy=policy).collect()
    rewards = log.collect()["reward"].to_list()
    expected = math.fsum(r * (0.37 / 0.11) for r in rewards) / len(rewards)
    assert out["ips"].item() == expected


# --- the slate estimators and cascade_dr -----------------------------------------------

#: Eight slates of three slots.
S_ROUNDS = [r for r in range(1, 9) for _ in range(3)]
S_POSITIONS = [1, 2, 3] * 8
S_REWARDS = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.5, 0.0, 0.0]
S_REWARDS += [1.0, 0.25, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.75, 1.0, 0.0, 1.0]
S_LOG = {
    "pscore": [p for p in (0.2, 0.1, 0.3, 0.25, 0.05, 0.15, 0.4, 0.2) for _ in range(3)],
    "pscore_item_position": [0.5, 0.3, 0.2, 0.6, 0.25, 0.4] * 4,
    "pscore_cascade": [0.5, 0.25, 0.1] * 8,
}
S_POLICY = {
    "pscore": [p for p in (0.3, 0.05, 0.1, 0.2, 0.15, 0.25, 0.1, 0.35) for _ in range(3)],
    "pscore_item_position": [0.4, 0.35, 0.5, 0.3, 0.2, 0.6] * 4,
    "pscore_cascade": [0.6, 0.3, 0.15] * 8,
}
#: Each estimator: the propensity column it reads and where it normalises.
SLATES = {
    "slate_ips": ("pscore", None),
    "slate_iips": ("pscore_item_position", None),
    "slate_rips": ("pscore_cascade", None),
    "slate_snips": ("pscore", "all"),
    "slate_sniips": ("pscore_item_position", "position"),
    "slate_snrips": ("pscore_cascade", "position"),
}


def _slate_log(factor: float = 1.0) -> pl.DataFrame:
    """The slate log, its propensities times ``factor`` (below 1: huge weights)."""
    columns = {c: [v * factor for v in values] for c, values in S_LOG.items()}
    segment = [1 if r <= 4 else 2 for r in S_ROUNDS]
    base = {"round_id": S_ROUNDS, "position": S_POSITIONS, "reward": S_REWARDS}
    return pl.DataFrame({**base, **columns, "segment": segment})


def _slate_policy(factor: float = 1.0) -> pl.DataFrame:
    """The policy table, its propensities times ``factor`` (tiny weights below 1)."""
    columns = {c: [v * factor for v in values] for c, values in S_POLICY.items()}
    return pl.DataFrame({"round_id": S_ROUNDS, "position": S_POSITIONS, **columns})


def _slate_weights(column: str, policy: float, log: float) -> list[float]:
    return [(p * policy) / (q * log) for p, q in zip(S_POLICY[column], S_LOG[column], strict=True)]


def _slate_expected(metric: str, policy: float, log: float) -> tuple[float, float]:
    """The estimate and its effective sample size by float64's formulas (math.fsum)."""
    column, normalised = SLATES[metric]
    w = _slate_weights(column, policy, log)
    rw = [r * v for r, v in zip(S_REWARDS, w, strict=True)]
    rounds = 8
    if normalised is None:
        value = math.fsum(rw) / rounds
    elif normalised == "all":
        value = math.fsum(rw) * len(rw) / math.fsum(w) / rounds
    else:
        value = 0.0
        for position in (1, 2, 3):
            at = [i for i, p in enumerate(S_POSITIONS) if p == position]
            a, b = math.fsum(rw[i] for i in at), math.fsum(w[i] for i in at)
            value += a * len(at) / b
        value /= rounds
    k = -math.frexp(max(w))[1]
    ws = [math.ldexp(v, k) for v in w]  # the effective sample size at any power of two
    return value, math.fsum(ws) ** 2 / math.fsum(v * v for v in ws)


@functools.cache
def _slates_once(
    metrics: tuple[str, ...], policy: float, log: float, options: tuple[Any, ...]
) -> pl.DataFrame:
    """:func:`_slates` of a DataFrame, made once per module (the out-of-core test's one
    plan is the formulas' tests' call)."""
    out: pl.DataFrame = _slates(list(metrics), policy, log, **dict(options))
    return out


def _slate_columns(out: pl.DataFrame, metric: str) -> pl.DataFrame:
    """``metric``'s columns of a call of every slate estimator (the count first)."""
    return out.select("num_rounds", pl.col(metric), pl.selectors.starts_with(f"{metric}_"))


def _slates(metrics: list[str], policy: float, log: float, lazy: bool = False, **kw: Any) -> Any:
    frame, pi = _slate_log(log), _slate_policy(policy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        if lazy:
            return irm.evaluate(frame.lazy(), metrics, policy=pi.lazy(), **kw).collect()
        return irm.evaluate(frame, metrics, policy=pi, **kw)


#: (policy factor, log factor): weights all tiny, all huge, ordinary.
FACTORS = [(1e-20, 1.0), (2.0**-300, 1.0), (1.0, 1e-290), (1.0, 1.0)]
FACTOR_IDS = ["tiny", "tiny 2**-300", "huge", "ordinary"]


@pytest.mark.parametrize(("policy", "log"), FACTORS, ids=FACTOR_IDS)
@pytest.mark.parametrize("metric", list(SLATES))
def test_the_slate_estimates_are_float64_formulas_of_the_weights(
    metric: str, policy: float, log: float
) -> None:
    # unscaled, weights near 1e-20 (0.18 units of 2**-64 per slot) summed to 0, and
    # weights near 1e290 squared beyond 2**96 were refused
    # every slate estimator in one call (the out-of-core test's), each read at its scale
    out = _slate_columns(_slates_once(tuple(SLATES), policy, log, ()), metric)
    value, ess = _slate_expected(metric, policy, log)
    assert math.isclose(out[metric].item(), value, rel_tol=1e-14), (out, value)
    assert math.isclose(out[f"{metric}_ess"].item(), ess, rel_tol=1e-14)
    column = SLATES[metric][0]
    assert out[f"{metric}_max_weight"].item() == max(_slate_weights(column, policy, log))


def test_a_power_of_two_moves_the_slate_estimates_by_it_exactly() -> None:
    # the policy's propensities times 2**-80: every weight times 2**-80 (exact), so
    # slate_ips and its normal interval are times 2**-80 to the bit, and the
    # self-normalised estimates and their bootstrap intervals the same bits (a ratio of
    # sums both times 2**-80). Unscaled, a weight near 2 * 2**-80 is 2**-15 units of
    # 2**-64: every sum was 0 (slate_ips 0, slate_snips NaN)
    plain = ["slate_ips", "slate_iips", "slate_rips"]
    normal = {"ci": 0.9, "ci_method": "normal"}
    base = _slates(plain, 1.0, 1.0, **normal)
    moved = _slates(plain, 2.0**-80, 1.0, **normal)
    for column in base.columns[1:]:
        if column.endswith("_ess"):
            assert moved[column].item() == base[column].item()
        else:
            assert moved[column].item() == math.ldexp(base[column].item(), -80), column
    ratios = ["slate_snips", "slate_sniips", "slate_snrips"]
    boot = {"ci": 0.9, "n_bootstrap": 40, "seed": 3}
    same = _slates(ratios, 2.0**-80, 1.0, **boot).drop(pl.selectors.ends_with("_max_weight"))
    assert same.equals(
        _slates(ratios, 1.0, 1.0, **boot).drop(pl.selectors.ends_with("_max_weight"))
    )


def _round_values(metric: str, policy: float, log: float) -> list[float]:
    w = _slate_weights(SLATES[metric][0], policy, log)
    rw = [r * v for r, v in zip(S_REWARDS, w, strict=True)]
    return [math.fsum(rw[i : i + 3]) for i in range(0, 24, 3)]


@pytest.mark.parametrize(("policy", "log"), FACTORS, ids=FACTOR_IDS)
@pytest.mark.parametrize("metric", ["slate_ips", "slate_iips", "slate_rips"])
def test_the_slate_normal_interval_is_the_float64_formula(
    metric: str, policy: float, log: float
) -> None:
    normal = (("ci", 0.9), ("ci_method", "normal"))  # the three in one call, as below
    out = _slate_columns(_slates_once(tuple(SLATES)[:3], policy, log, normal), metric)
    x = _round_values(metric, policy, log)
    k = -math.frexp(max(abs(v) for v in x))[1]
    xs, n = [math.ldexp(v, k) for v in x], len(x)
    mean = math.fsum(xs) / n
    variance = (math.fsum(v * v for v in xs) - math.fsum(xs) * mean) / (n - 1)
    half = NormalDist().inv_cdf(0.95) * math.sqrt(variance) / math.sqrt(n)
    for side, bound in (("lower", mean - half), ("upper", mean + half)):
        got = out[f"{metric}_{side}"].item()
        assert math.isclose(got, math.ldexp(bound, -k), rel_tol=1e-12), (side, got)


def _round_counts(n_boot: int, seed: int) -> np.ndarray:
    ids = pl.DataFrame({"round_id": list(range(1, 9))})
    buckets = ids.select(_hashed(["round_id"], ids.schema, seed)).to_series().to_numpy()
    draws = np.arange(4 * n_boot, dtype=np.uint64)[None, :]
    counts = _poisson_counts(np.zeros(8, np.uint64), buckets, draws, seed)
    return counts[:, counts.sum(axis=0) > 0][:, :n_boot]


@pytest.mark.parametrize(("policy", "log"), FACTORS, ids=FACTOR_IDS)
def test_the_slate_bootstrap_is_float64s_formula_over_the_same_resamples(
    policy: float, log: float
) -> None:
    out = _slates(["slate_ips"], policy, log, ci=0.9, n_bootstrap=50, seed=5)
    x = _round_values("slate_ips", policy, log)
    estimates = [
        math.fsum(k * v for k, v in zip(c, x, strict=True)) / c.sum()
        for c in _round_counts(50, 5).T
    ]
    low, high = np.percentile(estimates, [5.0, 95.0])
    assert math.isclose(out["slate_ips_lower"].item(), low, rel_tol=1e-13)
    assert math.isclose(out["slate_ips_upper"].item(), high, rel_tol=1e-13)


_SLATE_SPLIT = [
    {},
    {"by": "segment"},
    {"ci": 0.9, "n_bootstrap": 30, "seed": 2},
    {"ci": 0.9, "ci_method": "normal"},
    {"per_query": True},
]


@pytest.mark.parametrize("options", _SLATE_SPLIT, ids=str)
@pytest.mark.parametrize(("policy", "log"), FACTORS, ids=FACTOR_IDS)
def test_the_slates_out_of_core_give_the_same_bits(
    policy: float, log: float, options: dict[str, Any]
) -> None:
    metrics = list(SLATES)
    if options.get("ci_method") == "normal":
        metrics = metrics[:3]
    whole = _slates_once(tuple(metrics), policy, log, tuple(sorted(options.items())))
    for buckets in (2, 3):
        split = _slates(metrics, policy, log, lazy=True, buckets=buckets, **options)
        assert split.equals(whole), (buckets, whole, split)


def _cascade_tables(prob: float) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """A cascade log of eight rounds of two slots, action 0 logged at each, the policy
    giving it ``prob`` at every slot (the rest on action 1), q_hat :func:`_q` of each."""
    rounds = [r for r in range(1, 9) for _ in range(2)]
    positions = [1, 2] * 8
    log = pl.DataFrame(
        {
            "round_id": rounds,
            "position": positions,
            "action": [0] * 16,
            "reward": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.0] * 2,
            "pscore_cascade": [0.5, 0.2, 0.4, 0.1] * 4,
            "segment": [1] * 8 + [2] * 8,
        }
    )
    slots = [(r, p) for r, p in zip(rounds, positions, strict=True) for _ in range(2)]
    policy = pl.DataFrame(
        {
            "round_id": [r for r, _ in slots],
            "position": [p for _, p in slots],
            "action": [0, 1] * 16,
            "prob": [prob, 1.0 - prob] * 16,
        }
    )
    model = policy.select("round_id", "position", "action", q_hat=pl.Series(list(_q(prob)) * 16))
    return log, policy, model


def _q(prob: float) -> tuple[float, float]:
    """q_hat of actions 0 and 1: 0 where the policy's probability is tiny (so that every
    value is a tiny weight times a reward; a q_hat that small beside the rewards is
    refused), else 0.25 and 0.5."""
    return (0.0, 0.0) if prob < 0.01 else (0.25, 0.5)


def _cascade(prob: float, lazy: bool = False, **kw: Any) -> pl.DataFrame:
    log, policy, model = _cascade_tables(prob)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        if lazy:
            out = irm.evaluate(
                log.lazy(), ["cascade_dr"], policy=policy.lazy(), reward_model=model.lazy(), **kw
            )
            return out.collect()
        return irm.evaluate(log, ["cascade_dr"], policy=policy, reward_model=model, **kw)


def _cascade_values(prob: float) -> list[float]:
    """Each row's value: w (r - q_hat) + w_above E_pi[q_hat], w the policy's cascade
    probability (prob, then prob squared) over pscore_cascade."""
    log, _, _ = _cascade_tables(prob)
    q0, q1 = _q(prob)
    expected_q = prob * q0 + (1.0 - prob) * q1
    values = []
    for i, row in enumerate(log.iter_rows(named=True)):
        cascade = prob if row["position"] == 1 else prob * prob
        w = cascade / row["pscore_cascade"]
        above = 1.0 if row["position"] == 1 else prob / log["pscore_cascade"][i - 1]
        values.append(w * (row["reward"] - q0) + above * expected_q)
    return values


@pytest.mark.parametrize("prob", [1e-12, 2.0**-200, 0.7], ids=["1e-12", "2**-200", "0.7"])
def test_cascade_dr_is_the_float64_formula(prob: float) -> None:
    # at prob 1e-12 the first slot's weight (1e-12 / 0.5) is 3.7e7 units of 2**-64 (25
    # bits kept), the second's (1e-24 / 0.2) 9.2e-5 units: summed as 0
    out = _cascade(prob, ci=0.9, ci_method="normal")
    values = _cascade_values(prob)
    x = [math.fsum(values[i : i + 2]) for i in range(0, 16, 2)]
    assert math.isclose(out["cascade_dr"].item(), math.fsum(values) / 8, rel_tol=1e-14)
    k = -math.frexp(max(abs(v) for v in x))[1]
    xs = [math.ldexp(v, k) for v in x]
    mean = math.fsum(xs) / 8
    variance = (math.fsum(v * v for v in xs) - math.fsum(xs) * mean) / 7
    half = NormalDist().inv_cdf(0.95) * math.sqrt(variance) / math.sqrt(8)
    assert math.isclose(out["cascade_dr_lower"].item(), math.ldexp(mean - half, -k), rel_tol=1e-12)
    assert math.isclose(out["cascade_dr_upper"].item(), math.ldexp(mean + half, -k), rel_tol=1e-12)


@pytest.mark.parametrize(
    "options",
    [{}, {"by": "segment"}, {"ci": 0.9, "n_bootstrap": 30}, {"ci": 0.9, "ci_method": "normal"}],
    ids=str,
)
@pytest.mark.parametrize("prob", [1e-12, 0.7], ids=["1e-12", "0.7"])
def test_cascade_dr_out_of_core_gives_the_same_bits(prob: float, options: dict[str, Any]) -> None:
    whole = _cascade(prob, **options)
    for buckets in (2, 3):
        assert _cascade(prob, lazy=True, buckets=buckets, **options).equals(whole), buckets


SLATE_OPTIONS = [{"ci": 0.9, "n_bootstrap": 30, "seed": 2}, {"ci": 0.9, "ci_method": "normal"}]


def _slate_metrics(options: dict[str, Any]) -> list[str]:
    return list(SLATES) if options.get("ci_method") != "normal" else list(SLATES)[:3]


def _engine_slates(io: tuple[Any, Any, Any], options: dict[str, Any]) -> pl.DataFrame:
    """The engine's values of the slates of
    :func:`test_the_engines_give_the_slates_and_cascades_bits` (``io``: helpers.engine_io's)."""
    evaluate, to_engine, back = io
    out = evaluate(
        to_engine(_slate_log()),
        _slate_metrics(options),
        policy=to_engine(_slate_policy(1e-20)),
        by="segment",
        partitions=2,
        **options,
    )
    return back(out)  # type: ignore[no-any-return]


def _engine_cascade(io: tuple[Any, Any, Any], options: dict[str, Any]) -> pl.DataFrame:
    """The engine's values of the cascade of
    :func:`test_the_engines_give_the_slates_and_cascades_bits` (``io``: helpers.engine_io's)."""
    evaluate, to_engine, back = io
    log, policy, model = _cascade_tables(1e-12)
    out = evaluate(
        to_engine(log),
        ["cascade_dr"],
        policy=to_engine(policy),
        reward_model=to_engine(model),
        by="segment",
        partitions=2,
        **options,
    )
    return back(out)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def spark_values(request: pytest.FixtureRequest) -> dict[Any, pl.DataFrame]:
    """The Spark values of :func:`test_the_engines_give_the_same_bits`' cases, by
    (metric, probs, pscores), and of
    :func:`test_the_engines_give_the_slates_and_cascades_bits`', by ("slates" or
    "cascade", options): each its own ``evaluate`` call, the seven calls made at once
    (helpers.at_once: none raises, no assertion reads their warnings); each test
    compares its own."""
    io = engine_io("spark", request)  # the session asked for here, not in the threads
    calls: dict[Any, Any] = {
        (metric, tuple(probs), tuple(pscores)): (
            lambda m=metric, p=probs, s=pscores: _engine_bits(io, m, p, s)
        )
        for metric, probs, pscores in ENGINE_CASES
    }
    for options in SLATE_OPTIONS:
        key = repr(options)
        calls["slates", key] = lambda o=options: _engine_slates(io, o)
        calls["cascade", key] = lambda o=options: _engine_cascade(io, o)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        return dict(zip(calls, at_once(list(calls.values())), strict=True))


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize("options", SLATE_OPTIONS, ids=["bootstrap", "normal"])
def test_the_engines_give_the_slates_and_cascades_bits(
    engine: str, options: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    whole = _slates(_slate_metrics(options), 1e-20, 1.0, by="segment", **options)
    if engine == "spark":  # the module's Spark calls, made at once
        got = request.getfixturevalue("spark_values")["slates", repr(options)]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SupportWarning)
            got = _engine_slates(engine_io(engine, request), options)
    got = got.sort("segment")
    assert got.cast(whole.schema).equals(whole), (whole, got)
    whole = _cascade(1e-12, by="segment", **options)
    if engine == "spark":
        got = request.getfixturevalue("spark_values")["cascade", repr(options)]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SupportWarning)
            got = _engine_cascade(engine_io(engine, request), options)
    got = got.sort("segment")
    assert got.cast(whole.schema).equals(whole), (whole, got)


_SLATE_SUBNORMAL = (
    "3 log row(s) have a slate weight (the policy table's 'pscore' over the log's) that is "
    "subnormal, other than 0 but below 2**-1022 = 2.2250738585072014e-308 (first: "
    "round_id=1, position=1, policy pscore=1e-310, log pscore=0.2): such a weight holds "
    "fewer digits than a float64, which no scale gives back; set the policy's propensities "
    "that small to 0, or evaluate such rounds apart"
)
_SLATE_INFINITE = (
    "3 log row(s) have a slate weight (the policy table's 'pscore' over the log's) beyond "
    "float64's range (first: round_id=1, position=1, policy pscore=0.3, log pscore=5e-324): "
    "the log's 'pscore' is too small for the policy's (below it / 1.8e308); drop those "
    "rows, or check how the logging propensities were computed"
)
_SLATE_OVERFLOW = (
    "metric 'slate_ips' cannot be summed: a term of its sums is beyond float64's range (a "
    "slate weight, the policy's propensity over the log's, times a huge 'reward'): read the "
    "rewards at a larger unit (e.g. pl.col('reward') * 2.0**-600, the estimates then at "
    "that unit), or drop those rounds"
)
_CASCADE_SUBNORMAL = (
    "8 log row(s) have an importance weight (the policy's cascade probability over "
    "'pscore_cascade') that is subnormal, other than 0 but below 2**-1022 = "
    "2.2250738585072014e-308 (first: round_id=1, position=2, weight=5e-320, "
    "pscore_cascade=0.2): such a weight holds fewer digits than a float64, which no scale "
    "gives back; set the policy's probabilities that small to 0, or evaluate such rounds apart"
)
_CASCADE_INFINITE = (
    "8 log row(s) have an importance weight (the policy's cascade probability over "
    "'pscore_cascade') beyond float64's range (first: round_id=1, position=2, weight=inf, "
    "pscore_cascade=5e-324): column 'pscore_cascade' is too small for the policy's cascade "
    "probability (below it / 1.8e308); drop those rows, or check how the logging "
    "propensities were computed"
)


def _slate_case(log: dict[str, Any], policy: dict[str, Any]) -> Any:
    def run(lazy: bool, **kw: Any) -> Any:
        frame = _slate_log().with_columns(**log)
        pi = _slate_policy().with_columns(**policy)
        if lazy:
            return irm.evaluate(frame.lazy(), ["slate_ips"], policy=pi.lazy(), **kw).collect()
        return irm.evaluate(frame, ["slate_ips"], policy=pi, **kw)

    return run


def _cascade_case(log: dict[str, Any], prob: float) -> Any:
    def run(lazy: bool, **kw: Any) -> Any:
        frame, policy, model = _cascade_tables(prob)
        frame = frame.with_columns(**log)
        if lazy:
            tables = {"policy": policy.lazy(), "reward_model": model.lazy()}
            return irm.evaluate(frame.lazy(), ["cascade_dr"], **tables, **kw).collect()
        return irm.evaluate(frame, ["cascade_dr"], policy=policy, reward_model=model, **kw)

    return run


_HEAD = S_LOG["pscore"][3:]
REFUSALS = [
    # a policy propensity of 1e-310 in round 1: weights 1e-310 / 0.2, subnormal
    ("slate subnormal", _slate_case({}, {"pscore": pl.Series([1e-310] * 3 + _HEAD)}), 0),
    # a log propensity of 5e-324 (the least subnormal) under 0.3: beyond float64's range
    ("slate infinite", _slate_case({"pscore": pl.Series([5e-324] * 3 + _HEAD)}, {}), 1),
    # weights near 1e300 (whose squares reaching 2**96 were refused: now summed) times a
    # reward of 1e10: the term is beyond float64's range
    (
        "slate overflow",
        _slate_case(
            {
                "pscore": pl.Series([p * 1e-300 for p in S_LOG["pscore"]]),
                "reward": pl.Series([1e10, *S_REWARDS[1:]]),
            },
            {},
        ),
        2,
    ),
    # prob 1e-160 at both slots: the second slot's cascade probability 1e-320, its
    # weight 1e-320 / 0.2 = 5e-320, subnormal
    ("cascade subnormal", _cascade_case({}, 1e-160), 3),
    ("cascade infinite", _cascade_case({"pscore_cascade": pl.Series([0.5, 5e-324] * 8)}, 0.5), 4),
]
MESSAGES = [_SLATE_SUBNORMAL, _SLATE_INFINITE, _SLATE_OVERFLOW, _CASCADE_SUBNORMAL]
MESSAGES.append(_CASCADE_INFINITE)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("options", [{}, {"ci": 0.9, "ci_method": "normal"}], ids=str)
@pytest.mark.parametrize(("name", "run", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_weight_no_scale_holds_is_refused(
    name: str, run: Any, message: int, lazy: bool, options: dict[str, Any]
) -> None:
    kw = {"buckets": 2} if lazy else {}
    with pytest.raises(InvalidValueError, match=re.escape(MESSAGES[message])):
        run(lazy, **kw, **options)


@pytest.mark.parametrize("lazy", [False, True])
def test_per_query_self_normalised_slates_hold_tiny_weights(lazy: bool) -> None:
    # each round's value divides its slots' r w by the mean weight (of every slot, or of
    # the slots at its position), both times 2**-80 where the policy's propensities are:
    # the same bits as at 2**0. The mean weights were exact sums in units of 2**-64,
    # where a weight near 2**-79 is 2**-15 units: 0, and every value inf or NaN
    ratios = ["slate_snips", "slate_sniips", "slate_snrips"]
    kw: dict[str, Any] = {"per_query": True, "by": "segment"}
    if lazy:
        kw["buckets"] = 2
    tiny = _slates(ratios, 2.0**-80, 1.0, lazy=lazy, **kw)
    assert tiny.equals(_slates(ratios, 1.0, 1.0, lazy=lazy, **kw))
    assert tiny["slate_snips"].is_finite().all()
