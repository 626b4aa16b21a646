"""Off-policy estimates of small rewards: every estimate and interval scales with them.

The estimators and their intervals are linear in the rewards and ``q_hat``, so a log
whose rewards and ``q_hat`` are multiplied by ``s`` has estimates and intervals ``s``
times the unscaled log's: to the bit for a power of two (a product by it is exact), to
1e-12 for a decimal ``s``. The exact sums count units of 2**-64, in which small rewards
used to lose digits (rewards near 1e-9: the normal interval 0.5 % off, the estimates
5e-10); the plan now reads them times one power of two from the log's largest reward
(:mod:`polars_irmetrics.ope.scale`), on one machine, out of core and on Spark and Dask
alike. The peers: the unscaled log's result times ``s`` (explicit arithmetic), scipy's
normal interval of the contributions written out in numpy, and ``math.frexp`` for the
power of two.
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import scipy.stats

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ope.scale import scale_of

FIXTURES = Path(__file__).parent / "fixtures" / "ope"

SINGLE = [
    "ips",
    "ips(clip=2)",
    "snips",
    "dm",
    "dr",
    "dr(clip=3)",
    "sndr",
    "switch_dr(tau=2)",
    "dr_os(lambda=5)",
    "sg_ips(lambda=0.2)",
    "sg_dr(lambda=0.2)",
]
#: The estimators with a closed-form variance (the normal interval).
NORMAL = [m for m in SINGLE if not m.startswith(("snips", "sndr"))]
SLATE = ["slate_ips", "slate_iips", "slate_rips", "slate_snips", "slate_sniips", "slate_snrips"]
_MODEL = ("dm", "dr", "sndr", "switch_dr", "dr_os", "sg_dr", "cascade_dr")

#: Powers of two (the same bits, scaled) and decimal scales (to 1e-12).
EXACT_SCALES = [2.0**-2, 2.0**-10, 2.0**-20, 2.0**-30]
DECIMAL_SCALES = [1e-3, 1e-5, 1e-7, 1e-9]

_NORMAL = {"ci": 0.95, "ci_method": "normal"}
_BOOT = {"ci": 0.9, "n_bootstrap": 100, "seed": 3}


@functools.cache
def _bandit(rounds: int = 3000, actions: int = 8, seed: int = 7) -> dict[str, pl.DataFrame]:
    """A log of binary rewards: the logger's and the policy's propensities from
    softmaxes of linear scores, ``q_hat`` a noisy model of the expected reward."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rounds, 4))
    scores = x @ rng.normal(size=(4, actions))

    def softmax(z: np.ndarray) -> np.ndarray:
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return np.asarray(e / e.sum(axis=1, keepdims=True))

    logger = softmax(0.5 * scores)
    target = softmax(1.5 * scores + 0.3 * rng.normal(size=(rounds, actions)))
    expected = 1.0 / (1.0 + np.exp(-(x @ rng.normal(size=(4, actions)))))
    cumulative = logger.cumsum(axis=1)
    action = np.minimum((cumulative < rng.random((rounds, 1))).sum(axis=1), actions - 1)
    chosen = np.arange(rounds), action
    ids, acts = np.repeat(np.arange(rounds), actions), np.tile(np.arange(actions), rounds)
    q_hat = np.clip(expected + rng.normal(scale=0.1, size=expected.shape), 0.0, 1.0)
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
    """The same log with the policy and the model in obp's shape (a list per round)."""
    tables = _bandit()
    return {
        "log": tables["log"],
        "policy": tables["policy"].group_by("round_id", maintain_order=True).agg("prob"),
        "reward_model": tables["reward_model"]
        .group_by("round_id", maintain_order=True)
        .agg("q_hat"),
    }


def _slates(cascade: bool = False) -> dict[str, pl.DataFrame]:
    """obp's standard slate log (tests/fixtures/ope/), with its cascade tables."""
    name = "slate_standard_s2"
    log = pl.read_parquet(FIXTURES / f"{name}_log.parquet")
    if not cascade:
        return {"log": log, "policy": pl.read_parquet(FIXTURES / f"{name}_policy.parquet")}
    return {
        "log": log,
        "policy": pl.read_parquet(FIXTURES / f"{name}_cascade_policy.parquet"),
        "reward_model": pl.read_parquet(FIXTURES / f"{name}_cascade_reward_model.parquet"),
    }


#: (case, tables, metrics, options): every estimator, every interval, per_query too
CASES: list[tuple[str, str, list[str], dict[str, Any]]] = [
    ("estimates", "bandit", SINGLE, {}),
    ("normal interval", "bandit", NORMAL, _NORMAL),
    ("normal interval by segment", "bandit", NORMAL, {**_NORMAL, "by": "segment"}),
    ("bootstrap interval", "bandit", SINGLE, _BOOT),
    ("per_query", "bandit", SINGLE, {"per_query": True}),
    ("list shape, normal interval", "listed", NORMAL, _NORMAL),
    ("slate estimates", "slates", SLATE, {}),
    ("slate normal interval", "slates", SLATE[:3], _NORMAL),
    ("slate bootstrap interval", "slates", SLATE, _BOOT),
    ("slate per_query", "slates", SLATE, {"per_query": True}),
    ("cascade normal interval", "cascade", ["cascade_dr"], _NORMAL),
    ("cascade bootstrap interval", "cascade", ["cascade_dr"], _BOOT),
]
_TABLES = {
    "bandit": _bandit,
    "listed": _listed,
    "slates": _slates,
    "cascade": functools.partial(_slates, cascade=True),
}


def _scaled(tables: dict[str, pl.DataFrame], s: float) -> dict[str, pl.DataFrame]:
    """The tables with the rewards and ``q_hat`` (a number or a list) times ``s``."""
    out = dict(tables)
    out["log"] = tables["log"].with_columns(pl.col("reward") * s)
    if "reward_model" in tables:
        out["reward_model"] = tables["reward_model"].with_columns(pl.col("q_hat") * s)
    return out


def _evaluate(
    tables: dict[str, pl.DataFrame], metrics: list[str], *, lazy: bool = False, **kw: Any
) -> pl.DataFrame:
    """``irm.evaluate`` of ``metrics`` over ``tables`` (as LazyFrames with ``lazy``)."""
    given: dict[str, pl.DataFrame | pl.LazyFrame] = {"policy": tables["policy"]}
    if any(m.split("(")[0] in _MODEL for m in metrics):
        given["reward_model"] = tables["reward_model"]
    log: pl.DataFrame | pl.LazyFrame = tables["log"]
    if lazy:
        log, given = log.lazy(), {k: v.lazy() for k, v in given.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the support warning of obp's slates
        out = irm.evaluate(log, metrics, **given, **kw)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@functools.cache
def _unscaled(case: str) -> pl.DataFrame:
    _, kind, metrics, options = next(c for c in CASES if c[0] == case)
    return _evaluate(_TABLES[kind](), metrics, **options)


def _reward_columns(frame: pl.DataFrame, metrics: list[str]) -> list[str]:
    """The estimates and their intervals' columns (linear in the rewards)."""
    names = {f"{m}{end}" for m in metrics for end in ("", "_lower", "_upper")}
    return [c for c in frame.columns if c in names]


def _power(s: float) -> str:
    return f"2**{int(math.log2(s))}"


def covering(
    cases: list[tuple[str, str, list[str], dict[str, Any]]],
    scales: list[float],
    name: Callable[[float], str] = str,
) -> list[Any]:
    """``(case, kind, metrics, options, s)``: a covering design of ``cases`` x
    ``scales`` (each evaluate call costs a quarter second). Every case meets the last,
    deepest scale; the other scales are rotated over the cases of each kind of tables
    (a kind with fewer cases than other scales gives its last case the rest), so that
    every kind of tables (long, list shape, slates, cascade) meets every scale."""
    deepest, others = scales[-1], scales[:-1]
    out = []
    for kind in dict.fromkeys(c[1] for c in cases):
        mine = [c for c in cases if c[1] == kind]
        for i, case in enumerate(mine):
            picked = [others[i % len(others)]]
            if i == len(mine) - 1:
                picked += others[len(mine) :]
            out += [pytest.param(*case, s, id=f"{case[0]}-{name(s)}") for s in [deepest, *picked]]
    return out


@pytest.mark.parametrize(
    ("case", "kind", "metrics", "options", "s"), covering(CASES, EXACT_SCALES, _power)
)
def test_a_power_of_two_scale_gives_the_same_bits_scaled(
    case: str, kind: str, metrics: list[str], options: dict[str, Any], s: float
) -> None:
    base = _unscaled(case)
    got = _evaluate(_scaled(_TABLES[kind](), s), metrics, **options)
    assert got.columns == base.columns
    linear = _reward_columns(base, metrics)
    assert len(linear) >= len(metrics)
    expected = base.with_columns(pl.col(c) * s for c in linear)  # exact: a power of two
    assert got.equals(expected), (case, s)


@pytest.mark.parametrize(
    ("case", "kind", "metrics", "options", "s"), covering(CASES, DECIMAL_SCALES)
)
def test_a_decimal_scale_scales_every_estimate_to_1e12(
    case: str, kind: str, metrics: list[str], options: dict[str, Any], s: float
) -> None:
    base = _unscaled(case)
    got = _evaluate(_scaled(_TABLES[kind](), s), metrics, **options)
    assert got.columns == base.columns
    linear = _reward_columns(base, metrics)
    # the other columns (counts, keys, the weights' ess and largest) do not read rewards
    assert got.drop(linear).equals(base.drop(linear))
    for column in linear:
        np.testing.assert_allclose(
            got[column].to_numpy(), base[column].to_numpy() * s, rtol=1e-12, atol=0.0
        )


@pytest.mark.parametrize("s", [1.0, 1e-9, 2.0**-30], ids=str)
def test_the_normal_interval_of_tiny_rewards_is_scipys(s: float) -> None:
    # each round's contribution written out in numpy, the interval from scipy
    tables = _scaled(_bandit(), s)
    out = _evaluate(tables, ["ips", "dm", "dr"], **_NORMAL)
    log = tables["log"].sort("round_id")
    model = tables["policy"].join(tables["reward_model"], on=["round_id", "action"])
    rounds = model.group_by("round_id").agg(
        dm=(pl.col("prob") * pl.col("q_hat")).sum() / pl.col("prob").sum()
    )
    rows = (
        log.join(model, on=["round_id", "action"], how="left")
        .join(rounds, on="round_id")
        .sort("round_id")
    )
    w = (rows["prob"] / rows["pscore"]).to_numpy()
    r, q, dm = rows["reward"].to_numpy(), rows["q_hat"].to_numpy(), rows["dm"].to_numpy()
    for label, x in (("ips", w * r), ("dm", dm), ("dr", dm + w * (r - q))):
        sem = x.std(ddof=1) / math.sqrt(x.size)
        low, high = scipy.stats.norm.interval(0.95, loc=x.mean(), scale=sem)
        np.testing.assert_allclose(out[label].item(), x.mean(), rtol=1e-12)
        np.testing.assert_allclose(out[f"{label}_lower"].item(), low, rtol=1e-12)
        np.testing.assert_allclose(out[f"{label}_upper"].item(), high, rtol=1e-12)


def _frexp_scale(peak: float | None) -> float:
    """The power of two that brings ``peak`` to [1, 2) where it is below 0.5 (and
    positive, finite), else 1: from ``math.frexp`` (``peak = m 2**e``, ``m`` in
    [0.5, 1))."""
    if peak is None or not 0.0 < peak < 0.5:
        return 1.0
    return math.ldexp(1.0, 1 - math.frexp(peak)[1])


_PEAKS = [
    1.0,
    0.75,
    0.5,
    math.nextafter(0.5, 0.0),
    0.25,
    1e-3,
    math.nextafter(2.0**-29, 0.0),
    2.0**-29,
    1e-9,
    2.0**-30,
    3e-300,
    2.5,
    0.0,
    math.inf,
    None,
]


@pytest.mark.parametrize("peak", _PEAKS, ids=str)
def test_the_scale_is_the_power_of_two_to_one(peak: float | None) -> None:
    got = pl.select(scale_of(pl.lit(peak, pl.Float64))).item()
    assert got == _frexp_scale(peak)
    if got != 1.0:
        assert 1.0 <= peak * got < 2.0  # type: ignore[operator]


def test_a_log_with_one_large_reward_is_not_scaled() -> None:
    # the largest reward (0.5 or more) keeps the log unscaled: its other rewards, 1e-9
    # apart, are summed in units of 2**-64 as before (the same bits as the unscaled
    # computation: ips over 1, 0 and 1e-9 weights 1 is the exact sum over 3)
    log = pl.DataFrame(
        {
            "round_id": [1, 2, 3],
            "action": [0, 0, 0],
            "reward": [0.5, 0.0, 1e-9],
            "pscore": [1.0, 1.0, 1.0],
        }
    )
    pi = pl.DataFrame({"round_id": [1, 2, 3], "action": [0, 0, 0], "prob": [1.0, 1.0, 1.0]})
    units = sum(math.floor(r * 2.0**64) for r in log["reward"])
    assert irm.evaluate(log, ["ips"], policy=pi)["ips"].item() == units / 2.0**64 / 3


def test_q_hat_beyond_the_bound_once_scaled_is_refused() -> None:
    # rewards up to 2**-30 are read times 2**30: a q_hat of 2**40 the policy takes is
    # then 2**70, beyond the direct method's exact sums (2**62): refused, naming it
    tables = _scaled(_bandit(300, 4, 1), 2.0**-30)
    model = tables["reward_model"].with_columns(
        q_hat=pl.when((pl.col("round_id") == 5) & (pl.col("action") == 0))
        .then(2.0**40)
        .otherwise("q_hat")
    )
    message = (
        "the reward_model table has a 'q_hat' that is infinite or 2**62 or more in "
        "magnitude for an action the policy may take (first: round_id=5, 1 log row(s) in "
        "all): the direct method's sums are exact below 2**62 (where every reward is "
        "below 0.5 in magnitude, q_hat times the power of two that brings the largest "
        "reward to [1, 2))"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(tables["log"], ["dr"], policy=tables["policy"], reward_model=model)


# --- a split log: out of core, Spark and Dask read the whole log's scale ---------------

_SPLIT = [
    ("bandit", ["ips", "snips", "dm", "dr", "sndr"], _BOOT),
    ("bandit", NORMAL, _NORMAL),
    ("bandit", ["ips", "dm", "sndr"], {"per_query": True}),
    ("slates", SLATE, _BOOT),
    ("cascade", ["cascade_dr"], _NORMAL),
]


def _small(kind: str, s: float) -> dict[str, pl.DataFrame]:
    """A few hundred rounds of ``kind``'s tables (the engines' tasks stay short), the
    rewards and ``q_hat`` times ``s``, the first round's reward ``2**10 s``: the largest
    reward is in one part of the log only, whose own scale differs from the others'."""
    tables = _scaled(_bandit(400, 5, 11) if kind == "bandit" else _TABLES[kind](), s)
    first = pl.col("round_id") == pl.col("round_id").min()
    log = tables["log"].with_columns(reward=pl.when(first).then(1024.0 * s).otherwise("reward"))
    return {**tables, "log": log}


@pytest.mark.parametrize("s", [2.0**-30, 1e-9], ids=str)
@pytest.mark.parametrize(("kind", "metrics", "options"), _SPLIT, ids=lambda v: str(v)[:20])
def test_buckets_read_the_whole_logs_scale(
    kind: str, metrics: list[str], options: dict[str, Any], s: float
) -> None:
    tables = _small(kind, s)
    whole = _evaluate(tables, metrics, **options)
    assert _evaluate(tables, metrics, lazy=True, buckets=3, **options).equals(whole)


#: A covering design of _SPLIT's cases on the engines (each engine call costs seconds):
#: every case on one engine at least; each engine meets the bootstrap, the normal
#: interval and the per-query second pass (on both: the weights broadcast to each part)
_ENGINE_SPLIT = {
    "spark": (0, 2, 4),  # bandit bootstrap, bandit per query, cascade normal
    "dask": (1, 2, 3),  # bandit normal, bandit per query, slates bootstrap
}
assert set().union(*_ENGINE_SPLIT.values()) == set(range(len(_SPLIT)))


@pytest.mark.parametrize(
    ("engine", "kind", "metrics", "options"),
    [
        pytest.param(engine, *_SPLIT[i], id=f"{engine}-{_SPLIT[i][0]}-{i}")
        for engine, cases in _ENGINE_SPLIT.items()
        for i in cases
    ],
)
def test_engines_read_the_whole_logs_scale(
    engine: str,
    kind: str,
    metrics: list[str],
    options: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    # each partition's own largest reward would give its own scale, and other sums
    tables = _small(kind, 2.0**-30)
    whole = _evaluate(tables, metrics, **options)
    if engine == "spark":
        import polars_irmetrics.spark as irm_spark

        session = request.getfixturevalue("spark")
        frames = {k: session.createDataFrame(v.to_pandas()) for k, v in tables.items()}
        run = irm_spark.evaluate
    else:
        request.getfixturevalue("client")
        import dask.dataframe as dd

        import polars_irmetrics.dask as irm_dask

        frames = {k: dd.from_pandas(v.to_pandas(), npartitions=2) for k, v in tables.items()}
        run = irm_dask.evaluate
    model = frames.get("reward_model") if any(m.split("(")[0] in _MODEL for m in metrics) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run(
            frames["log"],
            metrics,
            policy=frames["policy"],
            reward_model=model,
            partitions=3,
            **options,
        )
        got = out.toPandas() if engine == "spark" else out.compute().reset_index(drop=True)
    got_frame = pl.from_pandas(got).cast(whole.schema)
    if options.get("per_query"):  # the engines' rows are in no global order
        keys = [c for c in ("round_id", "position") if c in whole.columns]
        got_frame = got_frame.sort(keys)
    assert got_frame.columns == whole.columns
    assert got_frame.equals(whole)
