"""The policy and reward model in obp's shape: one row per round (and position), ``prob``
and ``q_hat`` lists indexed by action (``action_dist[:, a, pos]``).

Every estimate equals obp's (tests/fixtures/ope/obp_expected.json, to 1e-9) and the long
form's on the same data bit for bit (the same exact sums), whichever way the rows line
up; the refusals name the table, the column and the round.
"""

from __future__ import annotations

import functools
import json
import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    QuerySetError,
    SupportWarning,
)

from .helpers import irm_in_process
from .test_ope_speed_paths import _tables

FIXTURES = Path(__file__).parent / "fixtures" / "ope"
CASES = {c["name"]: c for c in json.loads((FIXTURES / "obp_expected.json").read_text())["cases"]}
TEN = [
    "ips",
    "ips(clip=2)",
    "snips",
    "dm",
    "dr",
    "sndr",
    "switch_dr(tau=3)",
    "dr_os(lambda=10)",
    "sg_ips(lambda=0.1)",
    "sg_dr(lambda=0.1)",
]


def _listed(long: pl.DataFrame, value: str) -> pl.DataFrame:
    """A long table (a row per round[, position] and action) as lists indexed by action."""
    keys = [c for c in ("round_id", "position") if c in long.columns]
    return long.sort([*keys, "action"]).group_by(keys, maintain_order=True).agg(pl.col(value))


def _run(frame_kind: str, log: pl.DataFrame, metrics: list[str], **kwargs: Any) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kwargs.items()}
        out = irm.evaluate(log.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(log, metrics, **kwargs)
    assert isinstance(result, pl.DataFrame)
    return result


def _shuffled(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    return frame[np.random.default_rng(seed).permutation(frame.height)]


def _metrics(case: str) -> list[str]:
    """The estimators of obp's ``case`` that the list shape takes."""
    expected = CASES[case]["expected"]
    return [m for m in expected if m in TEN or m.split("(")[0] in {"sg_ips", "sg_dr"}]


@functools.cache
def _long_form(frame_kind: str, case: str, per_query: bool) -> pl.DataFrame:
    """The long form's frame of ``case``: the reference of each layout of the lists,
    computed once for the four layouts."""
    log, policy, model = _tables(case)
    kwargs = {"per_query": True} if per_query else {}
    return _run(frame_kind, log, _metrics(case), policy=policy, reward_model=model, **kwargs)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("layout", ["lined up", "shuffled", "padded", "array"])
def test_lists_equal_obp_and_the_long_form(frame_kind: str, case: str, layout: str) -> None:
    log, policy, model = _tables(case)
    expected = CASES[case]["expected"]
    metrics = _metrics(case)
    pi, q = _listed(policy, "prob"), _listed(model, "q_hat")
    if layout == "shuffled":
        pi, q = _shuffled(pi, 1), _shuffled(q, 2)
    elif layout == "padded":  # rounds the log does not have, at the top: nothing lines up
        pi = pl.concat([pi.with_columns(pl.col("round_id") + 10**6), pi])
    elif layout == "array":
        width = pi["prob"].list.len().max()
        pi = pi.with_columns(pl.col("prob").list.to_array(width))  # type: ignore[arg-type]
        q = q.with_columns(pl.col("q_hat").list.to_array(width))  # type: ignore[arg-type]
    out = _run(frame_kind, log, metrics, policy=pi, reward_model=q)
    assert out.equals(_long_form(frame_kind, case, False))  # the same bits, diagnostics too
    for label in metrics:
        assert out[label].item() == pytest.approx(expected[label], abs=1e-9, rel=0), label
    per_row = _run(frame_kind, log, metrics, policy=pi, reward_model=q, per_query=True)
    assert per_row.equals(_long_form(frame_kind, case, True))


def test_intervals_and_segments_are_the_long_forms(frame_kind: str) -> None:
    log, policy, model = _tables("bandit_binary_s0")
    log = log.with_columns(segment=pl.col("round_id") % 3)
    pi, q = _listed(policy, "prob"), _listed(model, "q_hat")
    metrics = ["ips", "snips", "dr", "sndr"]
    # 50 resamples: the same bits as the long form need no more
    for kwargs in ({"ci": 0.9, "n_bootstrap": 50, "seed": 7}, {"by": "segment"}):
        out = _run(frame_kind, log, metrics, policy=pi, reward_model=q, **kwargs)
        assert out.equals(
            _run(frame_kind, log, metrics, policy=policy, reward_model=model, **kwargs)
        )


@st.composite
def _logs(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    rounds = draw(st.integers(1, 40))
    actions = draw(st.integers(1, 6))
    positions = draw(st.sampled_from([0, 2]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    slots = max(positions, 1)
    n = rounds * slots
    raw = rng.random((n, actions)) * (rng.random((n, actions)) < 0.7)  # zeros, too
    raw[np.arange(n), rng.integers(0, actions, n)] += 0.5
    prob = raw / raw.sum(1, keepdims=True)
    ids = {"round_id": np.repeat(np.arange(rounds) * 7 - 20, slots)}
    if positions:
        ids["position"] = np.tile(np.arange(1, slots + 1), rounds)
    log = pl.DataFrame(
        {
            **ids,
            "action": rng.integers(0, actions, n),
            "reward": rng.random(n).round(1),
            "pscore": rng.uniform(0.01, 1.0, n),
        }
    )
    pi = pl.DataFrame({**ids, "prob": prob.tolist()})
    q = pl.DataFrame({**ids, "q_hat": (rng.random((n, actions)) * 3 - 1).tolist()})
    return log, _shuffled(pi, seed % 7), _shuffled(q, seed % 5)


def _exploded(listed: pl.DataFrame, value: str) -> pl.DataFrame:
    return listed.with_columns(pl.int_ranges(pl.col(value).list.len()).alias("action")).explode(
        value, "action"
    )


@settings(max_examples=10, deadline=None)  # 10: each costs about 0.45 s
@given(tables=_logs(), segments=st.booleans())
def test_random_logs_give_the_long_forms_bits(
    tables: tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame], segments: bool
) -> None:
    log, pi, q = tables
    kwargs: dict[str, Any] = {}
    if segments:
        log = log.with_columns(segment=pl.col("action") % 2)
        kwargs["by"] = "segment"
    long_pi, long_q = _exploded(pi, "prob"), _exploded(q, "q_hat")
    with warnings.catch_warnings():  # random logs may not show every action
        warnings.simplefilter("ignore", SupportWarning)
        listed = irm.evaluate(log, TEN, policy=pi, reward_model=q, **kwargs)
        long = irm.evaluate(log, TEN, policy=long_pi, reward_model=long_q, **kwargs)
        per_row = irm.evaluate(log, TEN, policy=pi, reward_model=q, per_query=True, **kwargs)
        long_rows = irm.evaluate(
            log, TEN, policy=long_pi, reward_model=long_q, per_query=True, **kwargs
        )
    assert listed.equals(long)
    assert per_row.equals(long_rows)


_LOG = pl.DataFrame(
    {"round_id": [1, 2, 3], "action": [0, 0, 1], "reward": [1.0, 0.0, 1.0], "pscore": [0.5] * 3}
)
_PI = pl.DataFrame({"round_id": [1, 2, 3], "prob": [[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]]})
_Q = pl.DataFrame({"round_id": [1, 2, 3], "q_hat": [[0.6, 0.3]] * 3})


def test_worked_example_by_hand(frame_kind: str) -> None:
    # weights pi(a_i) / 0.5: 0.9 / 0.5 = 1.8, 0.5 / 0.5 = 1.0, 0.9 / 0.5 = 1.8
    out = _run(frame_kind, _LOG, ["ips", "dm", "dr"], policy=_PI, reward_model=_Q)
    assert out["ips"].item() == pytest.approx((1.8 + 0.0 + 1.8) / 3, abs=1e-15)
    # dm: 0.9 * 0.6 + 0.1 * 0.3 = 0.57, 0.45, 0.33
    assert out["dm"].item() == pytest.approx((0.57 + 0.45 + 0.33) / 3, abs=1e-15)
    # dr adds 1.8 (1 - 0.6), 1.0 (0 - 0.6), 1.8 (1 - 0.3)
    errors = 1.8 * 0.4 - 0.6 + 1.8 * 0.7
    assert out["dr"].item() == pytest.approx((0.57 + 0.45 + 0.33 + errors) / 3, abs=1e-15)


def _with(frame: pl.DataFrame, column: str, round_id: int, value: Any) -> pl.DataFrame:
    dtype = frame.schema[column]
    return frame.with_columns(
        pl.when(pl.col("round_id") == round_id)
        .then(pl.lit(value, dtype=dtype))
        .otherwise(pl.col(column))
        .alias(column)
    )


_REFUSALS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    (
        "round twice",
        {"policy": pl.concat([_PI, _PI.filter(pl.col("round_id") == 2)])},
        DuplicateError,
        "a round is listed twice in the policy table (first: round_id=2): keep one row per "
        "(round_id)",
    ),
    (
        "round twice in the model",
        {"reward_model": pl.concat([_Q, _Q.head(1)]), "metrics": ["dr"]},
        DuplicateError,
        "a round is listed twice in the policy table or the reward_model table (first: "
        "round_id=1): keep one row per (round_id)",
    ),
    (
        "round missing",
        {"policy": _PI.filter(pl.col("round_id") != 3)},
        QuerySetError,
        "1 log row(s) have a round the policy table lacks (first: round_id=3): the policy "
        "needs every logged round's probabilities, one row per (round_id) with column "
        "'prob' a list indexed by action",
    ),
    (
        "short list",
        {"policy": _with(_PI, "prob", 2, [1.0])},
        InvalidValueError,
        "the lists of column 'prob' of the policy table differ in length (first: "
        "round_id=2, 1 log row(s) in all): every list has one item per action, as many "
        "as the longest",
    ),
    (
        "model list shorter",
        {"reward_model": _with(_Q, "q_hat", 3, [0.6]), "metrics": ["dm"]},
        InvalidValueError,
        "the lists of column 'prob' of the policy table and 'q_hat' of the reward_model "
        "table differ in length (first: round_id=3, 1 log row(s) in all)",
    ),
    (
        "action beyond the list",
        {"log": _LOG.with_columns(action=pl.Series([0, 2, -1]))},
        InvalidValueError,
        "column 'action' of the log has 2 action(s) outside the policy's list (first: "
        "round_id=2): with 'prob' a list per round, an action is its index, from 0 to the "
        "list's length - 1",
    ),
    (
        "null item",
        {"policy": _with(_PI, "prob", 1, [None, 1.0])},
        InvalidValueError,
        "column 'prob' of the policy table has a value that is null, NaN, negative or "
        "above 1 (first: round_id=1)",
    ),
    (
        "null list",
        {"policy": _with(_PI, "prob", 3, None)},
        InvalidValueError,
        "column 'prob' of the policy table has a value that is null, NaN, negative or "
        "above 1 (first: round_id=3)",
    ),
    (
        "NaN item",
        {"policy": _with(_PI, "prob", 2, [float("nan"), 1.0])},
        InvalidValueError,
        "column 'prob' of the policy table has a value that is null, NaN, negative or "
        "above 1 (first: round_id=2)",
    ),
    (
        "not summing to 1",
        {"policy": _with(_PI, "prob", 2, [0.5, 0.4999])},
        InvalidValueError,
        "column 'prob' of the policy table does not sum to 1 over the actions (first: "
        "round_id=2, 1 log row(s) in all; tolerance 1.001e-05)",
    ),
    (
        "q_hat missing where the policy goes",
        {"reward_model": _with(_Q, "q_hat", 2, [0.6, None]), "metrics": ["dr"]},
        QuerySetError,
        "the reward_model table has no 'q_hat' (or a null or NaN one) for the logged action "
        "or an action the policy may take (first: round_id=2, 1 log row(s) in all)",
    ),
    (
        "q_hat too large where the policy goes",
        {"reward_model": _with(_Q, "q_hat", 3, [0.6, float("inf")]), "metrics": ["dr"]},
        InvalidValueError,
        "the reward_model table has a 'q_hat' that is infinite or 2**62 or more in magnitude "
        "for an action the policy may take (first: round_id=3, 1 log row(s) in all)",
    ),
    (
        "one table in each shape",
        {"reward_model": _exploded(_Q, "q_hat"), "metrics": ["dr"]},
        ColumnTypeError,
        "the policy table holds a list per round and the reward_model table one row per "
        "action: give both in one shape (lists indexed by action, or long tables with an "
        "'action' column)",
    ),
    (
        "text actions",
        {"log": _LOG.with_columns(pl.col("action").cast(pl.String))},
        ColumnTypeError,
        "column 'action' in the log has dtype String; with the policy as lists (one row "
        "per round, 'prob' indexed by action) the logged action is the list's index",
    ),
    (
        "a list of text",
        {"policy": _PI.with_columns(pl.col("prob").cast(pl.List(pl.String)))},
        ColumnTypeError,
        "column 'prob' in the policy table has dtype List(String); a list of numbers per "
        "row is read: cast it, e.g. pl.col('prob').cast(pl.List(pl.Float64))",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [case[1:] for case in _REFUSALS],
    ids=[case[0] for case in _REFUSALS],
)
def test_refusals_name_the_table_column_and_round(
    frame_kind: str, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    given = {"log": _LOG, "policy": _PI, "reward_model": None, "metrics": ["ips"]} | kwargs
    if given["reward_model"] is None and given["metrics"] != ["ips"]:
        given["reward_model"] = _Q
    extra = {"reward_model": given["reward_model"]} if given["reward_model"] is not None else {}
    with pytest.raises(error, match=re.escape(message)):
        _run(frame_kind, given["log"], given["metrics"], policy=given["policy"], **extra)


def test_cascade_refuses_lists() -> None:
    log = pl.DataFrame(
        {"round_id": [1, 1], "position": [1, 2], "action": [0, 1], "reward": [1.0, 0.0],
         "pscore_cascade": [0.5, 0.25], "pscore": [0.5, 0.5]}
    )  # fmt: skip
    pi = pl.DataFrame({"round_id": [1, 1], "position": [1, 2], "prob": [[0.5, 0.5]] * 2})
    q = pi.select("round_id", "position", q_hat=pl.col("prob"))
    with pytest.raises(ColumnTypeError, match=re.escape("cascade_dr reads its policy")):
        irm.evaluate(log, ["cascade_dr"], policy=pi, reward_model=q)


def test_unsupported_actions_warn_in_the_list_shape() -> None:
    # the log shows actions 0 and 1; the policy gives action 2 a positive probability
    pi = _PI.with_columns(pl.col("prob").list.concat(pl.lit([0.0]))).pipe(
        _with, "prob", 3, [0.1, 0.8, 0.1]
    )
    with pytest.warns(SupportWarning, match=re.escape("1 action(s) never logged (e.g. action=2)")):
        irm.evaluate(_LOG, ["ips"], policy=pi)


def test_cli_reads_lists_from_parquet(tmp_path: Path) -> None:
    for name, frame in (("log", _LOG), ("pi", _PI), ("q", _Q)):
        frame.write_parquet(tmp_path / f"{name}.parquet")
    args = ["evaluate", str(tmp_path / "log.parquet"), "-m", "ips", "-m", "dr", "--policy",
            str(tmp_path / "pi.parquet"), "--reward-model", str(tmp_path / "q.parquet"),
            "--format", "json"]  # fmt: skip
    proc = irm_in_process(*args)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    expected = irm.evaluate(_LOG, ["ips", "dr"], policy=_PI, reward_model=_Q)
    assert printed[0]["ips"] == expected["ips"].item() == pytest.approx(1.2, abs=1e-15)
    assert printed[0]["dr"] == expected["dr"].item()


@pytest.mark.parametrize(
    ("metrics", "shape", "label"),
    [
        (["ips"], "list", "ips"),
        (["snips"], "long", "snips"),
        (["dr"], "list", "dr"),
        (["ips(clip=1e20)"], "long", "ips(clip=1e20)"),
    ],
)
def test_a_weight_beyond_2_48_is_summed_at_a_scale_of_its_own(
    frame_kind: str, metrics: list[str], shape: str, label: str
) -> None:
    # a pscore of 1e-16: the weight 0.5 / 1e-16 = 5e15 squares to 2.5e31 > 2**96 (7.9e28),
    # the exact sums' range, where it was refused; each sum is now read at a power of two
    # of its own (the squares scaled before they are squared: ope/sums.py), and the
    # effective sample size is float64's formula (a float sum would lose round 1's terms)
    log = _LOG.with_columns(pscore=pl.Series([0.5, 1e-16, 0.5]))
    pi, q = (_PI, _Q) if shape == "list" else (_exploded(_PI, "prob"), _exploded(_Q, "q_hat"))
    extra = {"reward_model": q} if metrics == ["dr"] else {}
    scaled = [w * 2.0**-53 for w in (1.8, 0.5 / 1e-16, 1.8)]  # ESS holds at any scale
    ess = math.fsum(scaled) ** 2 / math.fsum(w * w for w in scaled)
    for kwargs in ({}, {"ci": 0.9, "n_bootstrap": 50}):
        out = _run(frame_kind, log, metrics, policy=pi, **extra, **kwargs)
        assert out[f"{label}_ess"].item() == pytest.approx(ess, rel=1e-15)
        assert out[f"{label}_max_weight"].item() == 0.5 / 1e-16
    # capped below 2**48, the same log is summed exactly: round 2's weight 5e15 counts as
    # 1000 (times its reward 0): (0.9 / 0.5 * 1 + 1000 * 0 + 0.9 / 0.5 * 1) / 3
    out = _run(frame_kind, log, ["ips(clip=1000)"], policy=pi)
    assert out["ips(clip=1000)"].item() == pytest.approx((1.8 + 0.0 + 1.8) / 3, abs=1e-15)


def test_buckets_give_the_one_plans_bits_in_the_list_shape() -> None:
    log, policy, model = _tables("bandit_positions_s3")
    pi, q = _listed(policy, "prob"), _listed(model, "q_hat")
    metrics = ["ips", "snips", "dr", "sndr", "switch_dr(tau=3)"]
    one = irm.evaluate(log, metrics, policy=pi, reward_model=q)
    for buckets in (1, 3):
        out = irm.evaluate(log, metrics, policy=pi, reward_model=q, buckets=buckets)
        assert out.equals(one), buckets
    assert one.equals(irm.evaluate(log, metrics, policy=policy, reward_model=model))
