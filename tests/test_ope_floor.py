"""The off-policy estimators' floor of small rewards, relative to the log's scale.

The exact sums count units of 2**-64 of the rewards (and ``q_hat``) read times the
power of two that brings the log's largest reward magnitude to [1, 2)
(:mod:`polars_irmetrics.ope.scale`). A reward other than 0 was refused below 2**-30 in
magnitude whatever the log (a log of rewards all near 1e-12 could not be evaluated); it
is now refused only where its magnitude *times the scale* is below 2**-30 (about 2**30
times smaller than the largest reward, or more: its digits would be lost), and the same
for ``q_hat``, on the one plan, out of core (``buckets=``), Spark and Dask alike (the
check reads the whole log's scale, found by the split paths in a first pass). A log
whose largest reward magnitude is subnormal (below 2**-1022) is refused: no power of
two within float64's range brings it to [1, 2).

Peers: the unscaled log's result times the scale (explicit arithmetic: a product by a
power of two is exact, subnormal results correctly rounded alike), a few rewards whose
mean is exact (the sums written out), ``math.frexp`` for the power of two, and numpy for
the decimal scales.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ope.scale import SUBNORMAL, scale_of

from .test_ope_engines import _dr_refused
from .test_ope_round8 import _evaluate, _power, _reward_columns, _scaled, _slates, covering

SINGLE = ["ips", "ips(clip=2)", "snips", "dm", "dr", "sndr", "switch_dr(tau=2)", "dr_os(lambda=5)"]
NORMAL = [m for m in SINGLE if not m.startswith(("snips", "sndr"))]
SLATE = ["slate_ips", "slate_iips", "slate_rips", "slate_snips"]
_NORMAL = {"ci": 0.95, "ci_method": "normal"}
_BOOT = {"ci": 0.9, "n_bootstrap": 50, "seed": 3}

#: Powers of two below the old floor of 2**-30, down to the smallest normal float64.
EXACT_SCALES = [2.0**-40, 2.0**-100, 2.0**-1000, 2.0**-1022]
DECIMAL_SCALES = [1e-12, 1e-100]
_SMALLEST_NORMAL = 2.0**-1022


def _grid(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to multiples of 2**-20: times any power of two down to
    2**-1022 they stay exact (multiples of 2**-1074, subnormal or not), so that the
    scaled tables are exactly the unscaled ones times the scale."""
    return np.asarray(np.round(values * 2.0**20) / 2.0**20)


@functools.cache
def _bandit(rounds: int = 600, actions: int = 5, seed: int = 5) -> dict[str, pl.DataFrame]:
    """A log of binary rewards (softmax loggers and policy), ``q_hat`` on a grid."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rounds, 3))
    scores = x @ rng.normal(size=(3, actions))

    def softmax(z: np.ndarray) -> np.ndarray:
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return np.asarray(e / e.sum(axis=1, keepdims=True))

    logger, target = softmax(0.5 * scores), softmax(1.5 * scores)
    expected = 1.0 / (1.0 + np.exp(-(x @ rng.normal(size=(3, actions)))))
    action = np.minimum((logger.cumsum(axis=1) < rng.random((rounds, 1))).sum(axis=1), actions - 1)
    chosen = np.arange(rounds), action
    ids, acts = np.repeat(np.arange(rounds), actions), np.tile(np.arange(actions), rounds)
    q_hat = _grid(np.clip(expected + rng.normal(scale=0.1, size=expected.shape), 0.0, 1.0))
    return {
        "log": pl.DataFrame(
            {
                "round_id": np.arange(rounds),
                "action": action,
                "reward": (rng.random(rounds) < expected[chosen]).astype(np.float64),
                "pscore": logger[chosen],
                "segment": np.arange(rounds) % 3,
            }
        ),
        "policy": pl.DataFrame({"round_id": ids, "action": acts, "prob": target.ravel()}),
        "reward_model": pl.DataFrame({"round_id": ids, "action": acts, "q_hat": q_hat.ravel()}),
    }


def _listed() -> dict[str, pl.DataFrame]:
    """The same tables, the policy and the reward model in obp's shape (lists)."""
    tables = _bandit()
    by_round = {"maintain_order": True}
    return {
        "log": tables["log"],
        "policy": tables["policy"].group_by("round_id", **by_round).agg("prob"),
        "reward_model": tables["reward_model"].group_by("round_id", **by_round).agg("q_hat"),
    }


def _cascade() -> dict[str, pl.DataFrame]:
    """obp's standard slate log with its cascade tables, ``q_hat`` on the grid."""
    tables = _slates(cascade=True)
    model = tables["reward_model"]
    q = pl.Series(_grid(model["q_hat"].to_numpy()))
    return {**tables, "reward_model": model.with_columns(q_hat=q)}


_TABLES = {"bandit": _bandit, "listed": _listed, "slates": _slates, "cascade": _cascade}

#: (case, tables, metrics, options): every kind of estimator, estimates and intervals
CASES: list[tuple[str, str, list[str], dict[str, Any]]] = [
    ("normal interval", "bandit", NORMAL, _NORMAL),
    ("normal interval by segment", "bandit", ["ips", "dm", "dr"], {**_NORMAL, "by": "segment"}),
    ("bootstrap interval", "bandit", SINGLE, _BOOT),
    ("per_query", "bandit", SINGLE, {"per_query": True}),
    ("list shape", "listed", NORMAL, _NORMAL),
    ("slate bootstrap interval", "slates", SLATE, _BOOT),
    ("slate normal interval", "slates", SLATE[:3], _NORMAL),
    ("cascade normal interval", "cascade", ["cascade_dr"], _NORMAL),
]


@functools.cache
def _unscaled(case: str) -> pl.DataFrame:
    _, kind, metrics, options = next(c for c in CASES if c[0] == case)
    return _evaluate(_TABLES[kind](), metrics, **options)


# --- every estimate and interval below the old floor: the unscaled log's, scaled -------


# a covering design (test_ope_round8.covering): every case at 2**-1022, every kind of
# tables at every scale
@pytest.mark.parametrize(
    ("case", "kind", "metrics", "options", "s"), covering(CASES, EXACT_SCALES, _power)
)
def test_a_power_of_two_below_the_old_floor_gives_the_same_bits_scaled(
    case: str, kind: str, metrics: list[str], options: dict[str, Any], s: float
) -> None:
    base = _unscaled(case)
    tables = _scaled(_TABLES[kind](), s)
    got = _evaluate(tables, metrics, **options)
    linear = _reward_columns(base, metrics)
    assert len(linear) >= len(metrics)
    # a product by a power of two: exact, or (a subnormal result) correctly rounded,
    # as the estimate divided by the scale is
    expected = base.with_columns(pl.col(c) * s for c in linear)
    assert got.equals(expected), (case, s)
    # out of core: the scale of the whole log, found in a first pass over the buckets
    assert _evaluate(tables, metrics, lazy=True, buckets=3, **options).equals(got), (case, s)


@pytest.mark.parametrize("s", DECIMAL_SCALES, ids=str)
@pytest.mark.parametrize(("case", "kind", "metrics", "options"), CASES, ids=[c[0] for c in CASES])
def test_a_decimal_scale_below_the_old_floor_scales_every_estimate_to_1e12(
    case: str, kind: str, metrics: list[str], options: dict[str, Any], s: float
) -> None:
    base = _unscaled(case)
    got = _evaluate(_scaled(_TABLES[kind](), s), metrics, **options)
    linear = _reward_columns(base, metrics)
    assert got.drop(linear).equals(base.drop(linear))  # counts, keys, weights
    for column in linear:
        np.testing.assert_allclose(
            got[column].to_numpy(), base[column].to_numpy() * s, rtol=1e-12, atol=0.0
        )


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize("s", [2.0**-1000, 2.0**-1022], ids=["2**-1000", "2**-1022"])
def test_engines_read_small_rewards_at_the_whole_logs_scale(
    engine: str, s: float, request: pytest.FixtureRequest
) -> None:
    # the rewards and q_hat of a few hundred rounds times s; the one plan's result is
    # the unscaled log's times s (above), which each engine gives to the bit
    tables = _scaled(_bandit(200, 4, 9), s)
    metrics = ["ips", "dm", "dr", "switch_dr(tau=2)"]
    whole = _evaluate(tables, metrics, **_NORMAL)
    base = _evaluate(_bandit(200, 4, 9), metrics, **_NORMAL)
    assert whole.equals(base.with_columns(pl.col(c) * s for c in _reward_columns(base, metrics)))
    if engine == "spark":
        import polars_irmetrics.spark as irm_spark

        session = request.getfixturevalue("spark")
        frames = {k: session.createDataFrame(v.to_pandas()) for k, v in tables.items()}
        out = irm_spark.evaluate(
            frames["log"],
            metrics,
            policy=frames["policy"],
            reward_model=frames["reward_model"],
            partitions=3,
            **_NORMAL,
        ).toPandas()
    else:
        request.getfixturevalue("client")
        import dask.dataframe as dd

        import polars_irmetrics.dask as irm_dask

        frames = {k: dd.from_pandas(v.to_pandas(), npartitions=2) for k, v in tables.items()}
        out = (
            irm_dask.evaluate(
                frames["log"],
                metrics,
                policy=frames["policy"],
                reward_model=frames["reward_model"],
                partitions=3,
                **_NORMAL,
            )
            .compute()
            .reset_index(drop=True)
        )
    assert pl.from_pandas(out).cast(whole.schema).equals(whole)


# --- the floor, relative: a reward about 2**30 times smaller than the largest ----------


def _frexp_scale(peak: float) -> float:
    """The power of two that brings ``peak`` to [1, 2) where it is below 0.5, else 1:
    from ``math.frexp`` (``peak = m 2**e``, ``m`` in [0.5, 1))."""
    return math.ldexp(1.0, 1 - math.frexp(peak)[1]) if peak < 0.5 else 1.0


def _four(peak: float, small: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Four rounds of one action each, logged and taken with probability 1 (weights 1):
    rewards ``peak``, ``small``, 0 and -0.0, so ``ips`` is their sum over 4."""
    log = pl.DataFrame(
        {
            "round_id": [1, 2, 3, 4],
            "action": [0, 0, 0, 0],
            "reward": [peak, small, 0.0, -0.0],
            "pscore": [1.0] * 4,
        }
    )
    policy = log.select("round_id", "action", prob=pl.lit(1.0))
    return log, policy


def _ips(log: pl.DataFrame, policy: pl.DataFrame, **kw: Any) -> pl.DataFrame:
    """``ips`` of ``log``, as a LazyFrame collected where ``buckets=`` is given."""
    out = irm.evaluate(log.lazy() if "buckets" in kw else log, ["ips"], policy=policy, **kw)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _message(first: str, n: int = 1) -> str:
    return (
        f"column 'reward' of the log has {n} value(s) other than 0 too small beside its "
        f"largest reward (first: {first}): the exact sums count units of 2**-64 of the "
        "rewards read at the log's scale (times the power of two that brings the largest "
        "to [1, 2) where it is below 0.5), in which a reward below 2**-30, about 2**30 "
        "times smaller than the largest or more, would lose its digits (1e-20 beside 1.0 "
        "would count 0); set the rewards below the smallest kept to 0, negligible beside "
        "the largest (pl.when(pl.col('reward').abs() < kept).then(0.0).otherwise("
        "'reward')), or evaluate them apart (a log whose rewards are all small is read "
        "at their own scale, exactly)"
    )


def _below(x: float) -> float:
    return math.nextafter(x, 0.0)


#: (peak, small): the largest reward and one beside it, 2**-30 of the scale or more
#: (kept) or just below (refused)
_KEPT = [
    (1.0, 2.0**-30),  # the old floor itself, at the scale 1
    (1000.0, 2.0**-30),  # the scale 1 from 0.5 up: the floor is 2**-30
    (0.5, -(2.0**-30)),
    (2.0**-40, 2.0**-70),  # below the old floor: read times 2**40
    (0.75 * 2.0**-40, 2.0**-71),  # read times 2**41
    (1e-12, 2.0**-70),  # 1e-12 is read times 2**40
    (1.5 * 2.0**-997, 2.0**-1026),  # read times 2**997
    (_SMALLEST_NORMAL, 2.0**-1052),  # read times 2**1022: a subnormal reward, kept whole
]
_REFUSED = [
    (1.0, 1e-20),
    (1.0, _below(2.0**-30)),
    (1000.0, 1e-10),
    (0.5, -_below(2.0**-30)),
    (1.0, 5e-324),
    (2.0**-40, _below(2.0**-70)),
    (0.75 * 2.0**-40, _below(2.0**-71)),
    (1e-12, 1e-32),
    (1.5e-300, 1e-320),
    (_SMALLEST_NORMAL, 2.0**-1053),
]


@pytest.mark.parametrize(("peak", "small"), _KEPT, ids=str)
def test_a_reward_within_2_30_of_the_scale_is_kept_exactly(peak: float, small: float) -> None:
    log, policy = _four(peak, small)
    # the exact mean (the library's sums hold both rewards whole: each a multiple of
    # 2**-64 once read at the scale), a float here
    exact = (Fraction(peak) + Fraction(small)) / 4
    want = float(exact)
    assert Fraction(want) == exact
    for kw in ({}, {"buckets": 3}):
        assert _ips(log, policy, **kw)["ips"].item() == want, kw


@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize(("peak", "small"), _REFUSED, ids=str)
def test_a_reward_more_than_2_30_below_the_largest_is_refused(
    peak: float, small: float, per_query: bool
) -> None:
    log, policy = _four(peak, small)
    kept = 2.0**-30 / _frexp_scale(peak)
    first = f"round_id=2, reward={small!r}, below the smallest kept, {kept!r}"
    for kw in ({}, {"buckets": 3}):
        with pytest.raises(InvalidValueError, match=re.escape(_message(first))):
            _ips(log, policy, per_query=per_query, **kw)


def test_the_floor_follows_the_largest_reward_across_buckets() -> None:
    # every reward 2**-40 but round 0's, 1.0: each bucket without round 0 would read its
    # rewards at 2**40 and keep them, the whole log's scale 1 refuses them all
    tables = _bandit(200, 4, 9)
    log = tables["log"].with_columns(
        reward=pl.when(pl.col("round_id") == 0).then(1.0).otherwise(pl.col("reward") * 2.0**-40)
    )
    bad = log.filter((pl.col("round_id") != 0) & (pl.col("reward") != 0))
    least = min(f"round_id={i}" for i in bad["round_id"])
    kept = "below the smallest kept, 9.313225746154785e-10"
    message = _message(f"{least}, reward={2.0**-40!r}, {kept}", bad.height)
    for kw in ({}, {"buckets": 3}):
        with pytest.raises(InvalidValueError, match=re.escape(message)):
            _evaluate({**tables, "log": log}, ["ips", "dr"], lazy=bool(kw), **kw)
    # the same log without round 0's reward: all small, read at 2**40, exactly
    small = log.with_columns(reward=pl.when(pl.col("round_id") == 0).then(0.0).otherwise("reward"))
    got = _evaluate({**tables, "log": small}, ["ips"])
    unscaled = small.with_columns(pl.col("reward") * 2.0**40)
    base = _evaluate({**tables, "log": unscaled}, ["ips"])
    assert got["ips"].item() == base["ips"].item() * 2.0**-40


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_the_refusal_is_the_same_on_every_path(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # rewards 1e-12 (read times 2**40 alone) beside round 0's 1.0, in one part only
    tables = _bandit(200, 4, 9)
    log = tables["log"].with_columns(
        reward=pl.when(pl.col("round_id") == 0)
        .then(1.0)
        .when(pl.col("round_id").is_in([7, 150]))
        .then(1e-12)
        .otherwise(0.0)
    )
    kept = "below the smallest kept, 9.313225746154785e-10"
    message = _message(f"round_id=150, reward=1e-12, {kept}", 2)
    with pytest.raises(InvalidValueError, match=re.escape(message)):  # the one plan's
        _evaluate({**tables, "log": log}, ["dr"])
    model = tables["reward_model"]
    _dr_refused(engine, request, log, tables["policy"], model, InvalidValueError, message)


# --- q_hat, read at the rewards' scale ---------------------------------------------------


def _q_message(first: str, n: int) -> str:
    return (
        "the reward_model table has a 'q_hat' other than 0 too small beside the log's "
        "largest reward for the logged action or an action the policy may take (first: "
        f"{first}, the smallest kept: {{kept}}, {n} log row(s) in all): q_hat is read at "
        "the rewards' scale (times the power of two that brings the largest reward to "
        "[1, 2) where it is below 0.5) and summed exactly in units of 2**-64, in which a "
        "q_hat below 2**-30 would lose its digits; set q_hat below the smallest kept to "
        "0, negligible beside the rewards, or evaluate such rounds apart"
    )


def _q_tables(q: dict[tuple[int, int], float], scale: float) -> dict[str, pl.DataFrame]:
    """Three rounds of two actions: action 0 logged, the policy's probabilities (0.75,
    0.25), (1, 0) and (0, 1); rewards 1, 0.5, 0 times ``scale``; ``q_hat`` 0.5 times
    ``scale`` but the ``(round, action)`` of ``q``."""
    log = pl.DataFrame(
        {
            "round_id": [1, 2, 3],
            "action": [0, 0, 0],
            "reward": [scale, 0.5 * scale, 0.0],
            "pscore": [0.5] * 3,
        }
    )
    ids = {"round_id": [1, 1, 2, 2, 3, 3], "action": [0, 1] * 3}
    policy = pl.DataFrame({**ids, "prob": [0.75, 0.25, 1.0, 0.0, 0.0, 1.0]})
    values = [q.get(key, 0.5 * scale) for key in zip(ids["round_id"], ids["action"], strict=True)]
    return {"log": log, "policy": policy, "reward_model": pl.DataFrame({**ids, "q_hat": values})}


#: (q_hat set, the rounds refused): a tiny q_hat where the policy goes (round 1's
#: action 1; round 3's action 1), of the logged action (round 2's, taken; round 3's,
#: which the policy does not take: dr reads it), and where nothing reads it (round 2's
#: action 1, probability 0 and not logged: kept)
_Q_CASES = [
    ({(1, 1): 1e-12}, [1]),
    ({(3, 1): -1e-20}, [3]),
    ({(2, 0): 1e-15}, [2]),
    ({(3, 0): 1e-15}, [3]),
    ({(2, 1): 1e-15}, []),
    ({(1, 1): 1e-12, (3, 0): 1e-300, (2, 1): 1e-15}, [1, 3]),
]


@pytest.mark.parametrize("shape", ["long", "list"])
@pytest.mark.parametrize("scale", [1.0, 2.0**-40], ids=["1", "2**-40"])
@pytest.mark.parametrize(("q", "refused"), _Q_CASES, ids=str)
def test_q_hat_too_small_at_the_rewards_scale_is_refused(
    q: dict[tuple[int, int], float], refused: list[int], scale: float, shape: str
) -> None:
    tables = _q_tables({k: v * scale for k, v in q.items()}, scale)
    if shape == "list":
        for name, column in (("policy", "prob"), ("reward_model", "q_hat")):
            tables[name] = tables[name].group_by("round_id", maintain_order=True).agg(column)
    metrics = ["dm", "dr"]
    if not refused:
        got = _evaluate(tables, metrics)
        # dm: (0.75 * 0.5 + 0.25 * 0.5 + 0.5 + 0.5) / 3 times the scale; dr adds each
        # round's w (r - q): 1.5 * 0.5, 2 * 0, 0 (exact in the sums' units)
        assert got["dm"].item() == 1.5 / 3 * scale
        assert got["dr"].item() == (1.5 + 0.75) / 3 * scale
        return
    kept = 2.0**-30 / _frexp_scale(scale)
    message = _q_message(f"round_id={refused[0]}", len(refused)).format(kept=repr(kept))
    for kw in ({}, {"buckets": 2}):
        with pytest.raises(InvalidValueError, match=re.escape(message)):
            _evaluate(tables, metrics, lazy=bool(kw), **kw)


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_a_tiny_q_hat_is_refused_on_every_path(
    engine: str, request: pytest.FixtureRequest
) -> None:
    tables = _bandit(200, 4, 9)
    model = tables["reward_model"].with_columns(
        q_hat=pl.when(pl.col("round_id").is_in([7, 150])).then(1e-12).otherwise("q_hat")
    )
    # each round's every action has a positive probability (softmax): both read
    message = _q_message("round_id=150", 2).format(kept=repr(2.0**-30))
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _evaluate({**tables, "reward_model": model}, ["dr"])
    log, policy = tables["log"], tables["policy"]
    _dr_refused(engine, request, log, policy, model, InvalidValueError, message)


# --- a log whose largest reward is subnormal: refused ------------------------------------


def _subnormal_message(first: str, n: int) -> str:
    return (
        f"column 'reward' of the log has {n} value(s) other than 0, all subnormal (below "
        "2**-1022 = 2.2250738585072014e-308 in magnitude, the smallest normal float64; "
        f"first: {first}): such rewards hold fewer digits than a float64, no power of two "
        "within its range brings them to [1, 2) for the exact sums, and estimates that "
        "small would be rounded to units of 2**-1074; multiply the rewards and 'q_hat' by "
        "one power of two, e.g. pl.col('reward') * 2.0**600, and read the estimates at "
        "that unit"
    )


_PEAKS = [
    (1.0, 1.0),
    (0.25, 4.0),
    (2.0**-40, 2.0**40),
    (0.75 * 2.0**-1000, 2.0**1001),
    (1.5 * 2.0**-1022, 2.0**1022),
    (_SMALLEST_NORMAL, 2.0**1022),  # the smallest normal: brought to 1
    (_below(_SMALLEST_NORMAL), SUBNORMAL),
    (2.0**-1060, SUBNORMAL),
    (5e-324, SUBNORMAL),
]


@pytest.mark.parametrize(("peak", "scale"), _PEAKS, ids=str)
def test_the_scale_reaches_the_smallest_normal(peak: float, scale: float) -> None:
    got = pl.select(scale_of(pl.lit(peak, pl.Float64))).item()
    assert got == scale
    if peak >= _SMALLEST_NORMAL:
        assert got == _frexp_scale(peak)
        assert 1.0 <= peak * got < 2.0 or peak >= 0.5


@pytest.mark.parametrize("peak", [_below(_SMALLEST_NORMAL), 2.0**-1060, -5e-324], ids=str)
def test_a_log_of_subnormal_rewards_is_refused(peak: float) -> None:
    # rewards peak and peak / 2 (each still subnormal): dividing estimates this small by
    # the scale would round them to units of 2**-1074
    log, policy = _four(peak, peak / 2 if abs(peak) > 5e-324 else 0.0)
    n = int((log["reward"] != 0).sum())
    message = _subnormal_message(f"round_id=1, reward={peak!r}", n)
    for kw in ({}, {"buckets": 3}):
        with pytest.raises(InvalidValueError, match=re.escape(message)):
            _ips(log, policy, **kw)
    slates = _slates()
    slate_log = slates["log"].with_columns(pl.col("reward") * 5e-324)
    with pytest.raises(InvalidValueError, match="all subnormal"):
        _evaluate({**slates, "log": slate_log}, ["slate_ips"])


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_a_log_of_subnormal_rewards_is_refused_on_every_path(
    engine: str, request: pytest.FixtureRequest
) -> None:
    tables = _bandit(200, 4, 9)
    log = tables["log"].with_columns(
        reward=pl.when(pl.col("round_id").is_in([7, 150])).then(1e-310).otherwise(0.0)
    )
    message = _subnormal_message("round_id=150, reward=1e-310", 2)
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _evaluate({**tables, "log": log}, ["dr"])
    model = tables["reward_model"].with_columns(pl.col("q_hat") * 1e-310)
    _dr_refused(engine, request, log, tables["policy"], model, InvalidValueError, message)
