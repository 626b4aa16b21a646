"""Round 35, trust at the wings' joints: a table's column that a metric does not read is
refused, never ignored; ids that do not line up are refused or warned of, never a
silent number."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError

#: A cascade_dr log of two slates of two slots, its policy and reward model (long
#: tables keyed by round, position and action).
SLATES = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": [0, 1, 1, 0],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25],
    }
)
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 1, 1, 2, 2, 2, 2],
        "position": [1, 1, 2, 2] * 2,
        "action": [0, 1] * 4,
        "prob": [0.5, 0.5, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0],
    }
)
MODEL = POLICY.select("round_id", "position", "action", q_hat=pl.lit(0.5))

_SLATE_COLUMNS = (
    "of the policy table are the slate estimators' propensities of the evaluation policy, "
    "which cascade_dr does not read: it reads 'prob' per (round_id, position, action), its "
    "cascade propensity the running product of 'prob' at the logged actions; drop them, "
    "e.g. policy.drop({}), or evaluate the slate estimators in a call of their own"
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("columns", "message"),
    [
        # before: a pscore_cascade of 2 (no probability) beside prob, read by no one
        (
            {"pscore_cascade": 2.0},
            "column(s) 'pscore_cascade' " + _SLATE_COLUMNS.format("['pscore_cascade']"),
        ),
        (
            {"pscore_item_position": 0.5, "pscore": 0.25},
            "column(s) 'pscore', 'pscore_item_position' "
            + _SLATE_COLUMNS.format("['pscore', 'pscore_item_position']"),
        ),
    ],
)
def test_cascade_dr_refuses_the_slate_columns_of_its_policy(
    columns: dict[str, float], message: str, lazy: bool
) -> None:
    policy = POLICY.with_columns(pl.lit(v).alias(k) for k, v in columns.items())
    log = SLATES.lazy() if lazy else SLATES
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(log, ["cascade_dr"], policy=policy, reward_model=MODEL)
    assert str(caught.value) == message
    # without them: the estimate, by hand (round 1: 1 - 0.5, round 2: 1 + 1.5; the mean)
    got = irm.evaluate(log, ["cascade_dr"], policy=POLICY, reward_model=MODEL)
    assert pl.DataFrame(got.collect() if lazy else got)["cascade_dr"].item() == 1.5


def _collected(got: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return got.collect() if isinstance(got, pl.LazyFrame) else got


#: Two users' sessions under one id (ids that restart for each user)
SHARED = pl.DataFrame(
    {
        "user": ["u1", "u1", "u2", "u2"],
        "session_id": ["s1"] * 4,
        "position": [1, 2, 1, 2],
        "clicked": [1, 0, 0, 1],
    }
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("by", "error", "message"),
    [
        # before: the refusal spoke of positions alone, not of the shared id
        (
            None,
            DuplicateError,
            "column 'position' of the log: session 's1' shows 2 impression(s) at a position "
            "another impression holds; each position shows one item: keep one row per "
            "position, e.g. .unique(['session_id', 'position']); or, where two users share "
            "the session id 's1' (ids that restart for each user), their impressions are one "
            "session here: give each user's sessions ids of their own, e.g. the user id "
            "joined onto the session id",
        ),
        (
            "user",
            InvalidValueError,
            "by=['user']: 1 session(s) hold more than one value of 'user', e.g. session 's1' "
            "holds 'u1' and 'u2'; a key holds one value per session: group by a column fixed "
            "within each session, or give each part its own session id",
        ),
    ],
)
def test_a_session_id_of_two_users_is_named(
    by: str | None, error: type[Exception], message: str, lazy: bool
) -> None:
    log = SHARED.lazy() if lazy else SHARED
    with pytest.raises(error) as caught:
        _collected(irm.evaluate_online(log, ["ctr"], by=by))
    assert str(caught.value) == message


_WIDE = (
    "column 'reward' of the log ({}) has 1 value(s) of magnitude 2**53 or more (first: "
    "{}reward=9007199254740993); the estimates read the rewards as Float64 numbers, which "
    "hold such values to a few units only (2**53 + 1 reads as 2**53): rescale the rewards "
    "and 'q_hat' by one factor (every estimate scales with them), e.g. pl.col('reward') / "
    "1000, or cast the column to Float64 to read it so rounded, "
    "pl.col('reward').cast(pl.Float64)"
)
_LOG = pl.DataFrame(
    {"round_id": [1, 2, 3], "action": [0, 1, 0], "reward": [1, 2**53 + 1, 1], "pscore": 0.5}
)
_PI = pl.DataFrame(
    {"round_id": [1, 1, 2, 2, 3, 3], "action": [0, 1] * 3, "prob": [0.5, 0.5, 0.2, 0.8, 1, 0]}
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("log", "metric", "tables", "message"),
    [
        # before: read as the Float64 2**53 without a word (2**53 + 1 and 2**53 one reward)
        (_LOG, "ips", {"policy": _PI}, _WIDE.format("Int64", "round_id=2, ")),
        (
            _LOG.with_columns(pl.col("reward").cast(pl.Decimal(38, 0))),
            "ips",
            {"policy": _PI, "buckets": 2},
            _WIDE.format("Decimal(precision=38, scale=0)", "round_id=2, "),
        ),
        (
            SLATES.with_columns(reward=pl.Series([2**53 + 1, 0, 1, 1])),
            "slate_rips",
            {"policy": SLATES.select("round_id", "position", "pscore_cascade")},
            _WIDE.format("Int64", "round_id=1, position=1, "),
        ),
        (
            SLATES.with_columns(reward=pl.Series([2**53 + 1, 0, 1, 1])),
            "cascade_dr",
            {"policy": POLICY, "reward_model": MODEL},
            _WIDE.format("Int64", "round_id=1, position=1, "),
        ),
    ],
)
def test_an_integer_reward_beyond_float64s_integers_is_refused(
    log: pl.DataFrame, metric: str, tables: dict[str, Any], message: str, lazy: bool
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        _collected(irm.evaluate(log.lazy() if lazy else log, [metric], **tables))
    assert str(caught.value) == message


def test_an_integer_reward_below_2_53_is_read_as_its_float() -> None:
    # below 2**53 an integer is read as the Float64 it equals: the same bits as the cast
    exact = _LOG.with_columns(reward=pl.Series([1, 2**53 - 1, 1]))
    cast = exact.with_columns(pl.col("reward").cast(pl.Float64))
    assert_frame_equal(
        irm.evaluate(exact, ["ips"], policy=_PI), irm.evaluate(cast, ["ips"], policy=_PI)
    )
