"""The off-policy plan's fast paths give the same estimates as the slow ones.

The plan pairs the policy's and the reward model's rows without a join where they line
up (the same ids at the same row of both tables) and joins only the rest, and it reads
each log row's round from the policy table in one join and one ``group_by``. Here the
same tables are given lined up, shuffled, cut and padded: every estimate equals obp's
(tests/fixtures/ope/obp_expected.json, to 1e-9) and the lined-up call's bit for bit
(the sums are fixed-point, the same in any row order), and the refusals name the same
round whichever path a row takes.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError, QuerySetError
from polars_irmetrics.ope.evaluate import _TWICE, _listed_twice, _twice_outside

FIXTURES = Path(__file__).parent / "fixtures" / "ope"
CASES = {c["name"]: c for c in json.loads((FIXTURES / "obp_expected.json").read_text())["cases"]}


@functools.cache
def _tables(name: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """obp's ``name`` case, read once (polars frames are not changed in place)."""
    log, policy, model = (
        pl.read_parquet(FIXTURES / f"{name}_{table}.parquet")
        for table in ("log", "policy", "reward_model")
    )
    return log, policy, model


def _shuffled(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    return frame[np.random.default_rng(seed).permutation(frame.height)]


def _run(frame_kind: str, log: pl.DataFrame, metrics: list[str], **kwargs: Any) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kwargs.items()}
        out = irm.evaluate(log.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(log, metrics, **kwargs)
    assert isinstance(result, pl.DataFrame)
    return result


def _layouts(policy: pl.DataFrame, model: pl.DataFrame) -> dict[str, tuple[pl.DataFrame, ...]]:
    """The same two tables in orders that take each path."""
    half = model.height // 2
    return {
        "lined up": (policy, model),
        "model shuffled": (policy, _shuffled(model, 1)),
        "both shuffled": (_shuffled(policy, 2), _shuffled(model, 3)),
        "first half lined up": (policy, pl.concat([model.head(half), model[half:][::-1]])),
        # rows of unlogged rounds at the top of the model: nothing lines up
        "model padded": (
            policy,
            pl.concat([model.with_columns(pl.col("round_id") + 10**6), model]),
        ),
        # the policy longer than the model: its tail pairs with nothing
        "policy padded": (
            pl.concat([policy, policy.with_columns(pl.col("round_id") + 10**6)]),
            model,
        ),
    }


_METRICS = ["ips", "ips(clip=2)", "snips", "dm", "dr", "sndr", "switch_dr(tau=3)", "dr_os"]


@functools.cache
def _lined_up(frame_kind: str, case: str, per_query: bool) -> pl.DataFrame:
    """The lined-up tables' frame of ``case``: the reference of every layout, computed
    once for the six."""
    log, policy, model = _tables(case)
    metrics = [k for k in CASES[case]["expected"] if k in _METRICS]
    kwargs = {"per_query": True} if per_query else {}
    return _run(frame_kind, log, metrics, policy=policy, reward_model=model, **kwargs)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize(
    "layout",
    [
        "lined up",
        "model shuffled",
        "both shuffled",
        "first half lined up",
        "model padded",
        "policy padded",
    ],
)
def test_every_layout_equals_obp(frame_kind: str, case: str, layout: str) -> None:
    log, policy, model = _tables(case)
    expected = {k: v for k, v in CASES[case]["expected"].items() if k in _METRICS}
    pi, q = _layouts(policy, model)[layout]
    out = _run(frame_kind, log, list(expected), policy=pi, reward_model=q)
    reference = _lined_up(frame_kind, case, False)
    assert out["num_rows"].item() == log.height
    for label, value in expected.items():
        assert out[label].item() == pytest.approx(value, abs=1e-9, rel=0), label
        assert out[label].item() == reference[label].item(), label
    per_row = _run(frame_kind, log, list(expected), policy=pi, reward_model=q, per_query=True)
    assert per_row.equals(_lined_up(frame_kind, case, True))


@functools.cache
def _binary_lined_up() -> pl.DataFrame:
    """bandit_binary_s2's lined-up frame: the reference of every example below."""
    log, policy, model = _tables("bandit_binary_s2")
    return irm.evaluate(log, _METRICS, policy=policy, reward_model=model)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 200))
def test_any_order_and_split_gives_the_lined_up_estimates(seed: int, cut: int) -> None:
    log, policy, model = _tables("bandit_binary_s2")
    # a prefix lined up, the rest of both tables shuffled apart
    pi = pl.concat([policy.head(cut), _shuffled(policy[cut:], seed)])
    q = pl.concat([model.head(cut), _shuffled(model[cut:], seed + 1)])
    out = irm.evaluate(log, _METRICS, policy=pi, reward_model=q)
    assert out.equals(_binary_lined_up())


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_bits_from_parquet_memory_and_any_log_order(tmp_path: Path, case: str) -> None:
    log, policy, model = _tables(case)
    metrics = [*_METRICS, "sg_ips(lambda=0.1)", "sg_dr(lambda=0.1)"]
    kwargs: dict[str, Any] = {"ci": 0.9, "n_bootstrap": 50, "seed": 3}
    reference = irm.evaluate(log, metrics, policy=policy, reward_model=model, **kwargs)
    for name, frame in (("log", log), ("policy", policy), ("model", model)):
        frame.write_parquet(tmp_path / f"{name}.parquet")
    scanned = irm.evaluate(
        pl.scan_parquet(tmp_path / "log.parquet"),
        metrics,
        policy=pl.scan_parquet(tmp_path / "policy.parquet"),
        reward_model=pl.scan_parquet(tmp_path / "model.parquet"),
        **kwargs,
    )
    assert isinstance(scanned, pl.LazyFrame)
    assert scanned.collect().equals(reference)
    # the bootstrap draws follow the rounds' ids, not the rows' order
    reordered = irm.evaluate(
        _shuffled(log, 4), metrics, policy=policy, reward_model=model, **kwargs
    )
    assert reordered.equals(reference)


def test_a_logged_action_only_the_model_lists() -> None:
    # the policy omits the actions it gives 0; the model still lists them (the logged
    # action's q_hat comes from the model, its probability is 0)
    log, policy, model = _tables("bandit_binary_s0")
    sparse = policy.with_columns(
        prob=pl.when(pl.col("action") == 0).then(0.0).otherwise(pl.col("prob"))
    ).with_columns(prob=pl.col("prob") / pl.col("prob").sum().over("round_id"))
    full = irm.evaluate(log, _METRICS, policy=sparse, reward_model=model)
    dropped = irm.evaluate(
        log, _METRICS, policy=sparse.filter(pl.col("prob") > 0), reward_model=model
    )
    assert (log["action"] == 0).any()
    for label in _METRICS:
        assert dropped[label].item() == pytest.approx(full[label].item(), abs=1e-12, nan_ok=True)


# three rounds, actions a and b; the logger took a, b, a
_LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3],
        "action": ["a", "b", "a"],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.5],
    }
)
_PI = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3],
        "action": ["a", "b"] * 3,
        "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9],
    }
)
_Q = _PI.select("round_id", "action", q_hat=pl.Series([0.6, 0.3] * 3))


@pytest.mark.parametrize(
    ("policy", "model", "error", "message"),
    [
        # a duplicate in the model alone, lined up with the policy but for the extra row
        (
            _PI,
            pl.concat([_Q, _Q.tail(1)]),
            DuplicateError,
            "an action is listed twice for one round in the policy table or the "
            "reward_model table (first: round_id=3)",
        ),
        # the same duplicate, the model reversed
        (
            _PI,
            pl.concat([_Q, _Q.tail(1)])[::-1],
            DuplicateError,
            "an action is listed twice for one round in the policy table or the "
            "reward_model table (first: round_id=3)",
        ),
        # a duplicate in the policy, the model lined up
        (
            pl.concat([_PI.head(2), _PI.head(2), _PI.tail(4)]),
            _Q,
            DuplicateError,
            "(first: round_id=1)",
        ),
        # the logged action's q_hat missing, the model shuffled
        (
            _PI,
            _Q.filter((pl.col("round_id") != 2) | (pl.col("action") != "b"))[[4, 0, 2, 1, 3]],
            QuerySetError,
            "the reward_model table has no 'q_hat' (or a null or NaN one) for the logged "
            "action or an action the policy may take (first: round_id=2, 1 log row(s) in all)",
        ),
        # a null q_hat at a row that lines up
        (
            _PI,
            _Q.with_columns(q_hat=pl.Series([0.6, 0.3, None, 0.3, 0.6, 0.3])),
            QuerySetError,
            "(first: round_id=2, 1 log row(s) in all)",
        ),
        # a round the policy lacks, the model complete
        (
            _PI.filter(pl.col("round_id") != 2),
            _Q,
            QuerySetError,
            "1 log row(s) have a round the policy table lacks (first: round_id=2)",
        ),
        # probabilities that do not sum to 1, the tables in opposite orders
        (
            _PI.with_columns(prob=pl.Series([0.9, 0.1, 0.5, 0.6, 0.1, 0.9])),
            _Q[::-1],
            InvalidValueError,
            "column 'prob' of the policy table does not sum to 1 over the actions (first: "
            "round_id=2, 1 log row(s) in all",
        ),
    ],
)
def test_refusals_on_every_path(
    frame_kind: str,
    policy: pl.DataFrame,
    model: pl.DataFrame,
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        _run(frame_kind, _LOG, ["ips", "dr"], policy=policy, reward_model=model)


def test_the_first_round_is_the_smallest_as_text() -> None:
    # rounds 9 and 10 fail; as text "round_id=10" < "round_id=9"
    log = pl.DataFrame(
        {
            "round_id": [8, 9, 10],
            "action": ["a", "a", "a"],
            "reward": [1.0, 0.0, 1.0],
            "pscore": [0.5, 0.0, 0.0],
        }
    )
    policy = _PI.with_columns(pl.col("round_id") + 7)
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "2 value(s) that are null, NaN, 0, negative or above 1 (first: round_id=10)"
        ),
    ):
        irm.evaluate(log, ["ips"], policy=policy)


# integer actions: 0 to 63 a bit each, the others (negative, 64 and up) apart
@pytest.mark.parametrize(
    ("actions", "twice"),
    [
        (list(range(64)), None),  # every bit once
        ([*range(64), 64, -1, 10**12], None),  # the others distinct beside them
        ([0, 5, 63, 5], 5),
        ([0, 63, 63], 63),
        ([0, 64, 64], 64),
        ([-1, 3, -1], -1),
        ([2**40, 7, 2**40], 2**40),
        ([1, 65, 129], None),  # 65 and 129 are not 1's bit again
    ],
)
def test_integer_actions_listed_twice(
    frame_kind: str, actions: list[int], twice: int | None
) -> None:
    n = len(set(actions))
    log = pl.DataFrame(
        {"round_id": [1, 2], "action": [actions[0], 0], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
    )
    policy = pl.DataFrame(
        {
            "round_id": [2] + [1] * len(actions),
            "action": [0, *actions],
            "prob": [1.0] + [1.0 / n if a != twice else 0.5 / n for a in actions],
        }
    )
    if twice is None:
        out = _run(frame_kind, log, ["ips"], policy=policy)
        assert out["ips"].item() == pytest.approx((1.0 / n / 0.5 + 0.0) / 2)
        return
    with pytest.raises(
        DuplicateError,
        match=re.escape("an action is listed twice for one round in the policy table (first: "),
    ):
        _run(frame_kind, log, ["ips"], policy=policy)


@settings(max_examples=60, deadline=None)
@given(
    rounds=st.lists(
        st.lists(st.sampled_from([-2, -1, 0, 1, 2, 62, 63, 64, 65, 127, 2**40]), max_size=6),
        min_size=1,
        max_size=8,
    )
)
def test_the_bits_tell_twice_as_n_unique(rounds: list[list[int]]) -> None:
    frame = pl.DataFrame(
        {
            "r": [r for r, acts in enumerate(rounds) for _ in (acts or [None])],
            "a": [a for acts in rounds for a in (acts or [None])],
        },
        schema={"r": pl.Int64, "a": pl.Int64},
    )
    # the small actions' bits in the group_by, the others from their own rows, as _rows
    small = frame.lazy().group_by("r").agg(_listed_twice(pl.col("a"), pl.Int64).alias("t"))
    others = _twice_outside([frame.lazy()], [pl.col("r"), pl.col("a")], "a")
    got = (
        small.join(others, on="r", how="left")
        .select("r", pl.col("t") | pl.col(_TWICE).fill_null(False))
        .sort("r")
        .collect()
    )
    want = [len(acts) > len(set(acts)) for acts in rounds]
    assert got["t"].to_list() == want


_OUT_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": [100, 7, 200, 7],
        "reward": [1.0, 0.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.5, 0.5],
    }
)
# per (round, position): actions 100 or 200, and 7, half each
_OUT_PI = pl.DataFrame(
    {
        "round_id": [1, 1, 1, 1, 2, 2, 2, 2],
        "position": [1, 1, 2, 2, 1, 1, 2, 2],
        "action": [100, 7, 100, 7, 200, 7, 200, 7],
        "prob": [0.5] * 8,
    }
)
_OUT_Q = _OUT_PI.select("round_id", "position", "action", q_hat=pl.lit(0.25))


@pytest.mark.parametrize("source", ["memory", "parquet"])
@pytest.mark.parametrize(
    ("table", "row", "first"),
    [
        ("policy", 4, "round_id=2, position=1"),  # 200 at (2, 1) twice in the policy
        ("reward_model", 2, "round_id=1, position=2"),  # 100 at (1, 2) twice in the model
        ("reward_model", 1, None),  # 7 at (1, 1) twice: a bit's action, the other check
    ],
)
def test_an_action_outside_the_bits_listed_twice_by_position(
    tmp_path: Path, frame_kind: str, source: str, table: str, row: int, first: str | None
) -> None:
    # actions outside 0 to 63 listed twice are found from their own rows: in either
    # table, per (round, position), whether the tables are in memory or Parquet (whose
    # statistics skip the row groups without one)
    tables = {"policy": _OUT_PI, "reward_model": _OUT_Q}
    tables[table] = pl.concat([tables[table], tables[table][row]])
    if source == "parquet":
        for name, frame in tables.items():
            frame.write_parquet(tmp_path / f"{name}.parquet", row_group_size=2)
        kwargs: dict[str, Any] = {
            name: pl.scan_parquet(tmp_path / f"{name}.parquet") for name in tables
        }
    else:
        kwargs = dict(tables)
    message = "an action is listed twice for one round in the policy table or the reward_model "
    message += f"table (first: {first or 'round_id=1, position=1'}): keep one row per "
    message += "(round_id, position, action)"
    with pytest.raises(DuplicateError, match=re.escape(message)):
        _run(frame_kind, _OUT_LOG, ["ips", "dr"], **kwargs)
    # without the duplicate row: the estimates
    clean = _run(frame_kind, _OUT_LOG, ["ips", "dr"], policy=_OUT_PI, reward_model=_OUT_Q)
    assert clean["ips"].item() == (1.0 + 0.0 + 0.0 + 1.0) / 4


def _outcome(log: pl.DataFrame, **tables: pl.DataFrame) -> list[str]:
    """The estimates' reprs (NaN included), or the refusal's class and message."""
    metrics = ["ips", "dm", "dr", "sndr", "switch_dr(tau=2)"]
    try:
        result = irm.evaluate(log, metrics, **tables)
    except (DuplicateError, InvalidValueError, QuerySetError) as error:
        return [type(error).__name__, str(error)]
    assert isinstance(result, pl.DataFrame)
    return [repr(value) for value in result.row(0)]


_ODD_PROBS = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, -0.1, float("nan")])
_ODD_Q = st.sampled_from([0.0, 1.0, -2.5, 2.0**62, float("inf"), float("nan")])


@settings(max_examples=20, deadline=None)  # 20: each costs about 0.1 s
@given(data=st.data(), rounds=st.integers(1, 3), actions=st.integers(1, 3))
def test_the_long_form_refuses_and_estimates_as_the_lists_do(
    data: st.DataObject, rounds: int, actions: int
) -> None:
    # the long form's checks come from one OR-ed byte of facts per round (and its sums
    # from the joined rows); the list shape reads each list's items: the same refusal
    # (class, first round, count) or the same estimates, whatever is wrong and where
    one_hot = [[float(a == b) for a in range(actions)] for b in range(actions)]
    probs = []
    for _ in range(rounds):
        # mostly a distribution, at times with one odd cell
        cells = list(data.draw(st.sampled_from([[1.0 / actions] * actions, *one_hot])))
        if data.draw(st.integers(0, 3)) == 0:
            cells[data.draw(st.integers(0, actions - 1))] = data.draw(_ODD_PROBS)
        probs.append(cells)
    odd_q = st.one_of(st.just(0.5), _ODD_Q)
    q_hat = [[data.draw(odd_q) for _ in range(actions)] for _ in range(rounds)]
    logged = data.draw(st.lists(st.integers(0, actions - 1), min_size=rounds, max_size=rounds))
    log = pl.DataFrame(
        {
            "round_id": range(rounds),
            "action": logged,
            "reward": [float(r % 2) for r in range(rounds)],
            "pscore": [0.5] * rounds,
        }
    )
    ids = {
        "round_id": [r for r in range(rounds) for _ in range(actions)],
        "action": [a for _ in range(rounds) for a in range(actions)],
    }
    long = _outcome(
        log,
        policy=pl.DataFrame({**ids, "prob": [p for row in probs for p in row]}),
        reward_model=pl.DataFrame({**ids, "q_hat": [q for row in q_hat for q in row]}),
    )
    lists = _outcome(
        log,
        policy=pl.DataFrame({"round_id": range(rounds), "prob": probs}),
        reward_model=pl.DataFrame({"round_id": range(rounds), "q_hat": q_hat}),
    )
    assert long == lists


def test_a_nan_q_hat_where_the_policy_goes_is_missing_not_too_large() -> None:
    # polars orders NaN above every number, so NaN >= 2**62: it is read as missing
    policy = pl.DataFrame({"round_id": [0, 0], "action": [0, 1], "prob": [0.5, 0.5]})
    model = policy.select("round_id", "action", q_hat=pl.Series([float("nan"), 1.0]))
    log = pl.DataFrame({"round_id": [0], "action": [1], "reward": [1.0], "pscore": [0.5]})
    with pytest.raises(QuerySetError, match=re.escape("has no 'q_hat' (or a null or NaN one)")):
        irm.evaluate(log, ["dr"], policy=policy, reward_model=model)


@pytest.mark.parametrize("table", ["policy", "reward_model"])
def test_a_table_row_without_an_action_is_refused(frame_kind: str, table: str) -> None:
    # before, a policy row with a null action counted in its round's sum (0.5 + 0.5 = 1)
    # and was never logged: ips read 1.0 from half the policy, with a support warning
    # naming "None"; the reward model's was dropped unseen
    policy = pl.DataFrame(
        {"round_id": [0, 0, 1, 1], "action": [None, 1, 0, 1], "prob": [0.5] * 4},
        schema={"round_id": pl.Int64, "action": pl.Int64, "prob": pl.Float64},
    )
    model = policy.select("round_id", "action", q_hat=pl.lit(0.5))
    if table == "reward_model":  # the policy complete, the model's first row unnamed
        policy = policy.with_columns(action=pl.Series([0, 1, 0, 1]))
    log = pl.DataFrame(
        {"round_id": [0, 1], "action": [1, 0], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
    )
    tables = "the policy table or the reward_model table"
    message = (
        f"{tables} has a row with a null 'action' (first: round_id=0, 1 log row(s) in all): "
        "each row gives the probability (or q_hat) of one action; drop those rows, e.g. "
        ".drop_nulls('action'), or name their action"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _run(frame_kind, log, ["ips", "dr"], policy=policy, reward_model=model)
    if table == "policy":  # without a reward model, the policy alone is named
        alone = message.replace(tables, "the policy table")
        with pytest.raises(InvalidValueError, match=re.escape(alone)):
            _run(frame_kind, log, ["ips"], policy=policy)
