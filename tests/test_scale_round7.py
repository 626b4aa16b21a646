"""Round 7 scale probe of the off-policy estimators: rewards of any ordinary scale give
the estimates times that scale (equal to a plain numpy implementation), and a reward the
exact sums cannot hold (nonzero, below 2**-30 in magnitude beside a largest reward of
1: 1e-12 came out 2.7e-7 off, 1e-300 gave dr = -2.1e-20) is refused by name, on one
machine as a DataFrame and as a LazyFrame (the check is row-wise, from the whole log's
scale: every part of a split log counts it alike). A log whose rewards are all small is
read at their own scale instead: tests/test_ope_floor.py."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

FIXTURES = Path(__file__).parent / "fixtures" / "ope"
SINGLE = ["ips", "ips(clip=3)", "snips", "dm", "dr", "sndr", "switch_dr(tau=3)"]
SLATE = ["slate_ips", "slate_iips", "slate_rips", "slate_snips"]


def _table(case: str, table: str) -> pl.DataFrame:
    return pl.read_parquet(FIXTURES / f"{case}_{table}.parquet")


def _run(kind: str, log: pl.DataFrame, metrics: list[str], **tables: Any) -> pl.DataFrame:
    if kind == "LazyFrame":
        lazy = {k: v.lazy() for k, v in tables.items()}
        out = irm.evaluate(log.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(log, metrics, **tables)
    assert isinstance(result, pl.DataFrame)
    return result


def _scaled(frame: pl.DataFrame, column: str, s: float) -> pl.DataFrame:
    return frame.with_columns(pl.col(column) * s)


def _numpy_estimates(
    log: pl.DataFrame, policy: pl.DataFrame, model: pl.DataFrame
) -> dict[str, float]:
    """ips, snips, dm and dr as obp defines them, in numpy on the long tables."""
    pi = policy.join(model, on=["round_id", "action"], how="left")
    logged = log.join(pi, on=["round_id", "action"], how="left").sort("round_id")
    w = logged["prob"].fill_null(0.0).to_numpy() / logged["pscore"].to_numpy()
    r = logged["reward"].to_numpy()
    q = logged["q_hat"].fill_null(0.0).to_numpy()
    q_pi = (
        pi.group_by("round_id")
        .agg((pl.col("prob") * pl.col("q_hat")).sum())
        .sort("round_id")["prob"]
        .to_numpy()
    )
    return {
        "ips": float(np.mean(w * r)),
        "snips": float(np.sum(w * r) / np.sum(w)),
        "dm": float(np.mean(q_pi)),
        "dr": float(np.mean(q_pi + w * (r - q))),
    }


@functools.cache
def _base(kind: str, case: str) -> pl.DataFrame:
    """The estimates at the log's own scale, which each scale's are held to: once per
    frame kind and log (not once per scale)."""
    log, policy, model = (_table(case, t) for t in ("log", "policy", "reward_model"))
    return _run(kind, log, SINGLE, policy=policy, reward_model=model)


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("case", ["bandit_binary_s0", "bandit_continuous_s1"])
@pytest.mark.parametrize("s", [1e-6, 1e-3, 1e3, 1e9, 1e12])
def test_estimates_scale_with_the_rewards(kind: str, case: str, s: float) -> None:
    log, policy, model = (_table(case, t) for t in ("log", "policy", "reward_model"))
    base = _base(kind, case)
    slog, smodel = _scaled(log, "reward", s), _scaled(model, "q_hat", s)
    out = _run(kind, slog, SINGLE, policy=policy, reward_model=smodel)
    for column in base.columns:
        if base[column].dtype != pl.Float64:
            continue
        unchanged = column.endswith(("_ess", "_max_weight"))
        want = base[column].item() * (1.0 if unchanged else s)
        assert math.isclose(out[column].item(), want, rel_tol=1e-12), column
    for name, value in _numpy_estimates(slog, policy, smodel).items():
        assert math.isclose(out[name].item(), value, rel_tol=1e-12), name


@functools.cache
def _slate_base(kind: str) -> pl.DataFrame:
    """The slate estimates at the log's own scale: once per frame kind."""
    case = "slate_standard_s2"
    return _run(kind, _table(case, "log"), SLATE, policy=_table(case, "policy"))


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("s", [1e-6, 1e6])
def test_slate_estimates_scale_with_the_rewards(kind: str, s: float) -> None:
    case = "slate_standard_s2"
    log, policy = _table(case, "log"), _table(case, "policy")
    base = _slate_base(kind)
    out = _run(kind, _scaled(log, "reward", s), SLATE, policy=policy)
    for name in SLATE:
        assert math.isclose(out[name].item(), base[name].item() * s, rel_tol=1e-12), name


def test_the_floor_itself_is_read() -> None:
    """A reward of exactly 2**-30 (and 0, and -0.0) is summed exactly: accepted."""
    log = pl.DataFrame(
        {
            "round_id": [0, 1, 2],
            "action": [0, 1, 0],
            "reward": [2.0**-30, 0.0, -0.0],
            "pscore": [0.5, 0.5, 0.5],
        }
    )
    policy = pl.DataFrame(
        {"round_id": [0, 0, 1, 1, 2, 2], "action": [0, 1] * 3, "prob": [0.25, 0.75] * 3}
    )
    out = irm.evaluate(log, ["ips"], policy=policy)
    assert out["ips"].item() == 2.0**-30 * 0.5 / 3


def _message(n: int, first: str) -> str:
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


#: The smallest reward magnitude kept beside a largest reward of 1 (the scale 1).
_KEPT = "below the smallest kept, 9.313225746154785e-10"


def _first(rows: pl.DataFrame, keys: list[str], tiny: float) -> str:
    """The first failing row as the message names it: the least text of its keys."""
    texts = [", ".join(f"{k}={row[k]}" for k in keys) for row in rows.iter_rows(named=True)]
    return f"{min(texts)}, reward={tiny!r}, {_KEPT}"


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("tiny", [1e-12, -1e-300, 5e-324, 2.0**-31])
def test_tiny_rewards_are_refused(kind: str, tiny: float) -> None:
    # the largest reward 1.0 (the least round's) keeps the scale 1: a reward below
    # 2**-30 beside it is refused (alone, a log of them is read at their own scale:
    # tests/test_ope_floor.py)
    case = "bandit_binary_s0"
    log, policy, model = (_table(case, t) for t in ("log", "policy", "reward_model"))
    peak = log.filter(pl.col("reward") != 0)["round_id"].min()
    small = (pl.col("reward") != 0) & (pl.col("round_id") != peak)
    log = log.with_columns(pl.when(small).then(pl.lit(tiny)).otherwise("reward").alias("reward"))
    bad = log.filter(small)
    message = _message(bad.height, _first(bad, ["round_id"], tiny))
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _run(kind, log, ["ips", "dr"], policy=policy, reward_model=model)


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_tiny_slate_rewards_are_refused(kind: str) -> None:
    case = "slate_standard_s2"
    log, policy = (_table(case, t) for t in ("log", "policy"))
    peak = log.filter(pl.col("reward") != 0)["round_id"].min()
    small = (pl.col("reward") != 0) & (pl.col("round_id") != peak)
    log = log.with_columns(pl.when(small).then(pl.col("reward") * 1e-12).otherwise("reward"))
    bad = log.filter(small)
    first = _first(bad, ["round_id", "position"], 1e-12)
    with pytest.raises(InvalidValueError, match=re.escape(_message(bad.height, first))):
        _run(kind, log, ["slate_ips"], policy=policy)
    cascade = {
        "policy": _table(case, "cascade_policy"),
        "reward_model": _table(case, "cascade_reward_model"),
    }
    with pytest.raises(InvalidValueError, match=re.escape("too small beside its largest reward")):
        _run(kind, log, ["cascade_dr"], **cascade)


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_tiny_rewards_are_refused_on_every_path(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """The same refusal out of core and on Spark and Dask: the check is counted per part
    and the least failing round of the whole log named."""
    from .test_ope_engines import _dr_refused

    case = "bandit_binary_s0"
    log, policy, model = (_table(case, t) for t in ("log", "policy", "reward_model"))
    log = log.with_columns(
        reward=pl.when(pl.col("round_id").is_in([7, 150])).then(1e-12).otherwise(pl.col("reward"))
    )
    # the least as text, as every check
    message = _message(2, f"round_id=150, reward=1e-12, {_KEPT}")
    _dr_refused(engine, request, log, policy, model, InvalidValueError, message)
