"""Round 34 (second part): ``sg_ips(lambda=1)`` and ``sg_dr(lambda=1)`` NaN for a
deterministic policy (``w / (1 - lambda + lambda w)`` is 0 / 0 at a weight of 0) with no
warning, where ``dr_os(lambda=0)`` now warns; round ids spelt apart between the log and
``reward_model=`` refused with no word of the spelling, where ``policy=`` now gets it."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import QuerySetError
from tests.helpers import engine_io, warned

#: Round R1 logs 'a', which the policy never takes (a weight of 0): segment 1's.
LOG = pl.DataFrame(
    {
        "round_id": ["R1", "R2", "R3"],
        "action": ["a", "b", "a"],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5] * 3,
        "seg": [1, 1, 2],
    }
)
POLICY = pl.DataFrame(
    {
        "round_id": ["R1", "R1", "R2", "R2", "R3", "R3"],
        "action": ["a", "b"] * 3,
        "prob": [0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
    }
)
MODEL = POLICY.select("round_id", "action", q_hat=pl.lit(0.5))


def _evaluate(log: pl.DataFrame, metrics: list[str], route: str, **kw: Any) -> pl.DataFrame:
    """``irm.evaluate`` on DataFrames ("frame"), LazyFrames ("lazy", collected) or out
    of core in 2 buckets ("buckets")."""
    if route == "lazy":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kw.items()}
        return irm.evaluate(log.lazy(), metrics, **lazy).collect()
    return irm.evaluate(log, metrics, **({"buckets": 2} if route == "buckets" else {}), **kw)


def _unshrunk(name: str, where: str) -> str:
    label = f"{name}(lambda=1)"
    return (
        f"metric {label!r} is NaN {where}: with lambda=1 its shrunk weight "
        "w / (1 - lambda + lambda w) is 0 / 0 where the policy gives the logged action "
        "probability 0 (a weight w of 0, as any deterministic policy gives), as obp's is, "
        f"and so is {label}_ess; give lambda a value below 1, e.g. {name}(lambda=0.5) (a "
        "weight of 0 then counts 0)"
    )


SG = ["sg_ips(lambda=1)", "sg_dr(lambda=1)", "sg_ips(lambda=0.5)"]
UNSHRUNK = [
    ("frame", {}, "in the log"),
    ("lazy", {}, "in the log"),
    ("buckets", {"by": "seg"}, "in 1 by group(s) (first: seg=1)"),
]


@pytest.mark.parametrize(("route", "kw", "where"), UNSHRUNK, ids=[u[0] for u in UNSHRUNK])
def test_sg_nan_at_lambda_1_is_warned(route: str, kw: dict[str, Any], where: str) -> None:
    # before: NaN (obp's 0 / 0) without a word; lambda=0.5 and a stochastic policy give
    # numbers, and no warning
    tables = {"policy": POLICY, "reward_model": MODEL}
    got, said = warned(lambda: _evaluate(LOG, SG, route, **tables, **kw))
    assert said == [_unshrunk("sg_ips", where), _unshrunk("sg_dr", where)]
    nan = [True, False] if kw else [True]
    for label in SG[:2]:
        assert got.sort(kw.get("by", []))[label].is_nan().to_list() == nan
        assert got.sort(kw.get("by", []))[f"{label}_ess"].is_nan().to_list() == nan
    assert not got[SG[2]].is_nan().any()
    tables["policy"] = POLICY.with_columns(prob=pl.lit(0.5))
    got, said = warned(lambda: _evaluate(LOG, SG, route, **tables, **kw))
    assert said == []
    assert not got.select(SG).to_series().is_nan().any()


def _no_q_hat(n: int) -> str:
    return (
        "the reward_model table has no 'q_hat' (or a null or NaN one) for the logged action "
        f"or an action the policy may take (first: round_id=R1, {n} log row(s) in all): "
        "give q_hat for every (round_id, action) the policy gives a positive probability "
        "and every logged one"
    )


SPELT = (
    f"{_no_q_hat(1)}. 1 round id(s) of the log match an id of reward_model= only when case "
    "is ignored ('R1' against 'r1'): ids are compared exactly; give the log and "
    "reward_model= the same spelling, e.g. pl.col('round_id').str.to_lowercase() on each."
)
#: (name, the reward model's rounds R1..R3 spelt, the refusal)
MODEL_ROUNDS = [
    ("case", ["r1", "R2", "R3"], SPELT),
    ("none", ["X9", "R2", "R3"], _no_q_hat(1)),
]
MODEL_CASES = [(*m, "frame") for m in MODEL_ROUNDS] + [
    (*MODEL_ROUNDS[0], "lazy"),
    (*MODEL_ROUNDS[0], "buckets"),
]


def _model(rounds: list[str]) -> pl.DataFrame:
    return MODEL.with_columns(pl.col("round_id").replace(["R1", "R2", "R3"], rounds))


@pytest.mark.parametrize(
    ("name", "rounds", "message", "route"),
    MODEL_CASES,
    ids=[f"{c[0]}-{c[3]}" for c in MODEL_CASES],
)
def test_reward_model_round_ids_spelt_apart_are_named(
    name: str, rounds: list[str], message: str, route: str
) -> None:
    # before: the refusal named the round without a q_hat, not its spelling
    with pytest.raises(QuerySetError) as caught:
        _evaluate(LOG, ["dr"], route, policy=POLICY, reward_model=_model(rounds))
    assert str(caught.value) == message


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_sg_nan_and_model_rounds_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    # sg_*(lambda=1) NaN: one machine's warning, from the engine's means
    tables = {"policy": to_engine(POLICY), "reward_model": to_engine(MODEL)}
    got, said = warned(lambda: back(evaluate(to_engine(LOG), SG[:2], by="seg", **tables)))
    where = "in 1 by group(s) (first: seg=1)"
    assert said == [_unshrunk("sg_ips", where), _unshrunk("sg_dr", where)]
    assert got.sort("seg")["sg_dr(lambda=1)"].is_nan().to_list() == [True, False]
    # round ids spelt apart between the log and reward_model=: one machine's hint
    for _, rounds, message in MODEL_ROUNDS:  # spelt apart, and not
        tables["reward_model"] = to_engine(_model(rounds))
        with pytest.raises(QuerySetError) as caught:
            back(evaluate(to_engine(LOG), ["dr"], **tables))
        assert str(caught.value) == message
