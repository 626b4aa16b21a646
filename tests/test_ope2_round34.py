"""Round 34 (second part): ``sg_ips(lambda=1)`` and ``sg_dr(lambda=1)`` NaN for a
deterministic policy (``w / (1 - lambda + lambda w)`` is 0 / 0 at a weight of 0) with no
warning, where ``dr_os(lambda=0)`` now warns; round ids spelt apart between the log and
``reward_model=`` refused with no word of the spelling, where ``policy=`` now gets it."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
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


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_sg_nan_on_the_engines(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    # sg_*(lambda=1) NaN: one machine's warning, from the engine's means
    tables = {"policy": to_engine(POLICY), "reward_model": to_engine(MODEL)}
    got, said = warned(lambda: back(evaluate(to_engine(LOG), SG[:2], by="seg", **tables)))
    where = "in 1 by group(s) (first: seg=1)"
    assert said == [_unshrunk("sg_ips", where), _unshrunk("sg_dr", where)]
    assert got.sort("seg")["sg_dr(lambda=1)"].is_nan().to_list() == [True, False]
