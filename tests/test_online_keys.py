"""A segment key (``by=``) holds one value per session: one that varies within a session
is refused from the data, at every online door and on every path.

Before this, a ``by`` column that no asked metric reads but that changes within a
session (a per-impression ``device``, ``hour`` or ``timestamp``) split each session
into one part per value, every part evaluated as a session of its own: with ``s1``
shown on a phone for positions 1-2 and on a desktop for position 3,
``evaluate_online(log, ["ctr", "abandonment"], by="device")`` counted ``s1`` in both
segments (``num_sessions`` summing to 9 of 8 sessions) and scored its desktop fragment
(no click) as an abandoned session; ``ab_test`` counted its user in both segments, and
``interleaving_test`` its session in both. Now the plan counts, when it runs, the
sessions found under two values of a key and refuses them, naming ``by=``, the key,
the count, the first session (by its keys) and two of its values (the smallest).

A session is told apart by its id (in an A/B test by its arm, unit and id, the keys
``ab_test`` groups sessions by without ``by``), so a key fixed within each session
(day, arm, user) passes with the values it had, and a key that varies within a user
but not within a session (a user's sessions on two devices) still segments.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

from .helpers import engine_io, irm_in_process

#: a DataFrame or a LazyFrame (the doors' overloads take one or the other)
Frame = Any

_CLICKS = [[1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 1, 1], [1, 0, 1], [0, 0, 0], [0, 1, 0], [1, 0, 0]]
_START = dt.datetime(2024, 5, 1, 9, 0)


def _log() -> pl.DataFrame:
    """Eight users, one session of three impressions each: s1-s4 in arm A, s5-s8 in B;
    days d1 (s1, s2, s5, s6) and d2 (the others). Clicks (by position): s1 1, s2 2, s3
    none, s4 all, s5 1 and 3, s6 none, s7 2, s8 1; teams A, B, A by position.

    Keys that vary within a session: ``device`` in s1 (m, m, d); ``hour`` in s3 (9, 10,
    10) and s6 (13, 14, 14); ``page`` in s7 (3, 1, 2); ``market`` (Categorical) in s4
    (fr, fr, de); ``timestamp`` (Datetime, read by no metric asked) in every session
    (09:00 + 10 i + p minutes, session i, position p).
    """
    sessions = range(1, 9)
    return pl.DataFrame(
        {
            "arm": [("A" if i <= 4 else "B") for i in sessions for _ in range(3)],
            "user_id": [f"u{i}" for i in sessions for _ in range(3)],
            "session_id": [f"s{i}" for i in sessions for _ in range(3)],
            "day": [("d1" if i in (1, 2, 5, 6) else "d2") for i in sessions for _ in range(3)],
            "position": [1, 2, 3] * 8,
            "clicked": [c for row in _CLICKS for c in row],
            "team": ["A", "B", "A"] * 8,
            "device": ["m", "m", "d"]
            + [("m" if i % 2 else "d") for i in range(2, 9) for _ in range(3)],
            "hour": [8] * 3 + [8] * 3 + [9, 10, 10] + [11] * 3 + [12] * 3 + [13, 14, 14]
            + [15] * 3 + [16] * 3,
            "page": [1] * 18 + [3, 1, 2] + [1] * 3,
            "market": pl.Series(["fr"] * 9 + ["fr", "fr", "de"] + ["de"] * 12,
                                dtype=pl.Categorical),
            "timestamp": [_START + dt.timedelta(minutes=10 * i + p)
                          for i in sessions for p in (1, 2, 3)],
        }
    )  # fmt: skip


def _split(by: list[str], count: int, key: str, session: str, shown: str) -> str:
    return (
        f"by={by!r}: {count} session(s) hold more than one value of {key!r}, e.g. session "
        f"{session} holds {shown}; a key holds one value per session: group by a column "
        "fixed within each session, or give each part its own session id"
    )


def _ts(minute: int) -> str:
    return repr(_START + dt.timedelta(minutes=minute))


# (id, by, count, key, session (as the doors but ab_test show it), its user and arm,
# the values shown)
KEYS: list[tuple[str, list[str], int, str, str, tuple[str, str], str]] = [
    ("string", ["device"], 1, "device", "s1", ("A", "u1"), "'d' and 'm'"),
    ("integer-two-sessions", ["hour"], 2, "hour", "s3", ("A", "u3"), "9 and 10"),
    ("three-values", ["page"], 1, "page", "s7", ("B", "u7"), "3 values, e.g. 1 and 2"),
    ("categorical", ["market"], 1, "market", "s4", ("A", "u4"), "'de' and 'fr'"),
    ("datetime-every-session", ["timestamp"], 8, "timestamp", "s1", ("A", "u1"),
     f"3 values, e.g. {_ts(11)} and {_ts(12)}"),
    # the first key (in by's order) that varies is named; one fixed per session passes
    ("second-key", ["day", "device"], 1, "device", "s1", ("A", "u1"), "'d' and 'm'"),
    ("first-of-two", ["hour", "device"], 2, "hour", "s3", ("A", "u3"), "9 and 10"),
]  # fmt: skip


def _evaluate_online(frame: Frame, by: list[str]) -> Any:
    return irm.evaluate_online(frame, ["ctr", "abandonment"], by=by)


def _per_session(frame: Frame, by: list[str]) -> Any:
    return irm.evaluate_online(frame, ["ctr"], by=by, per_session=True)


def _out_of_core(frame: Frame, by: list[str]) -> Any:
    return irm.evaluate_online(frame, ["ctr"], by=by, buckets=3)


def _evaluate(frame: Frame, by: list[str]) -> Any:
    return irm.evaluate(frame, ["ctr"], by=by, query_id="session_id", rank="position")


def _ab_test(frame: Frame, by: list[str]) -> Any:
    return irm.ab_test(frame, ["ctr", "abandonment"], by=by)


def _interleaving(frame: Frame, by: list[str]) -> Any:
    return irm.interleaving_test(frame, by=by)


DOORS: list[tuple[str, Callable[[Frame, list[str]], Any]]] = [
    ("evaluate_online", _evaluate_online),
    ("evaluate_online-per_session", _per_session),
    ("evaluate_online-buckets", _out_of_core),
    ("evaluate", _evaluate),
    ("ab_test", _ab_test),
    ("interleaving_test", _interleaving),
]


def _to_the_end(out: Any) -> Any:
    """The call's result, a lazy one collected (a refusal may come at either step)."""
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("by", "count", "key", "session", "unit", "shown"),
                         [c[1:] for c in KEYS], ids=[c[0] for c in KEYS])  # fmt: skip
@pytest.mark.parametrize(("door", "call"), DOORS, ids=[d[0] for d in DOORS])
def test_a_key_varying_within_a_session_is_refused(
    door: str,
    call: Callable[[Frame, list[str]], Any],
    by: list[str],
    count: int,
    key: str,
    session: str,
    unit: tuple[str, str],
    shown: str,
    lazy: bool,
) -> None:
    frame: Frame = _log().lazy() if lazy else _log()
    # ab_test tells sessions apart by arm, unit and id, and names them so
    named = (
        f"{session!r} (arm={unit[0]!r}, user_id={unit[1]!r})"
        if door == "ab_test"
        else repr(session)
    )
    with pytest.raises(InvalidValueError) as caught:
        _to_the_end(call(frame, by))
    assert str(caught.value) == _split(by, count, key, named, shown)


def test_the_module_example() -> None:
    # the numbers the split gave, for the record of what is refused: s1's fragments
    # (positions 1-2 on m: 1 click; position 3 on d: none) counted as two sessions
    log = _log()
    fixed = log.with_columns(pl.col("device").first().over("session_id"))
    out = irm.evaluate_online(fixed, ["ctr", "abandonment"], by="device")
    # d: s2, s4, s6, s8: clicks 1 + 3 + 0 + 1 of 12, s6 abandoned; m: s1, s3, s5, s7:
    # 1 + 0 + 2 + 1 of 12, s3 abandoned
    assert out.to_dict(as_series=False) == {
        "device": ["d", "m"],
        "num_sessions": [4, 4],
        "ctr": [5 / 12, 4 / 12],
        "abandonment": [0.25, 0.25],
    }
    with pytest.raises(InvalidValueError, match=r"^by=\['device'\]: 1 session\(s\)"):
        irm.evaluate_online(log, ["ctr", "abandonment"], by="device")


def test_a_lazy_log_is_refused_when_collected_not_when_built() -> None:
    plan = irm.evaluate_online(_log().lazy(), ["ctr"], by="device")  # builds
    with pytest.raises(InvalidValueError, match="hold more than one value of 'device'"):
        plan.collect()


def test_evaluate_online_tells_sessions_apart_by_their_id() -> None:
    # a session id shared by two users is one session to evaluate_online (as without
    # by=, where their rows are one session): by='user_id' is refused, not a fix
    log = _log().with_columns(pl.lit("s").alias("session_id"))
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate_online(log, ["ctr"], by="user_id")
    assert str(caught.value) == _split(
        ["user_id"], 1, "user_id", "'s'", "8 values, e.g. 'u1' and 'u2'"
    )


# -- null keys are named by the null check, before a split is looked for


@pytest.mark.parametrize(("door", "call"), DOORS, ids=[d[0] for d in DOORS])
def test_a_null_key_is_named_by_the_null_check(
    door: str, call: Callable[[Frame, list[str]], Any]
) -> None:
    log = _log().with_columns(
        pl.when(pl.int_range(pl.len()) == 2).then(None).otherwise(pl.col("device")).alias("device")
    )
    with pytest.raises(InvalidValueError) as caught:
        _to_the_end(call(log, ["device"]))
    assert str(caught.value) == (
        "column 'device' of the log has null values; every impression needs a device: fill "
        "or drop them, e.g. .drop_nulls('device')"
    )


# -- keys fixed within each session pass, with the values they had (by hand)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("buckets", [None, 3], ids=["one-plan", "buckets"])
@pytest.mark.parametrize(
    ("by", "expected"),
    [
        # d1: s1, s2, s5, s6: clicks 1 + 1 + 2 + 0 of 12, s6 abandoned; d2: s3, s4, s7,
        # s8: 0 + 3 + 1 + 1 of 12, s3 abandoned
        ("day", {"day": ["d1", "d2"], "num_sessions": [4, 4], "ctr": [4 / 12, 5 / 12],
                 "abandonment": [0.25, 0.25]}),
        # A: s1-s4: 1 + 1 + 0 + 3 of 12, s3; B: s5-s8: 2 + 0 + 1 + 1 of 12, s6
        ("arm", {"arm": ["A", "B"], "num_sessions": [4, 4], "ctr": [5 / 12, 4 / 12],
                 "abandonment": [0.25, 0.25]}),
        # one session per user: each session's own values
        ("user_id", {"user_id": [f"u{i}" for i in range(1, 9)], "num_sessions": [1] * 8,
                     "ctr": [1 / 3, 1 / 3, 0.0, 1.0, 2 / 3, 0.0, 1 / 3, 1 / 3],
                     "abandonment": [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]}),
    ],
    ids=["day", "arm", "user_id"],
)  # fmt: skip
def test_a_key_fixed_within_sessions_segments_as_before(
    by: str, expected: dict[str, list[Any]], buckets: int | None, lazy: bool
) -> None:
    frame: Frame = _log().lazy() if lazy else _log()
    out = _to_the_end(irm.evaluate_online(frame, ["ctr", "abandonment"], by=by, buckets=buckets))
    assert out.to_dict(as_series=False) == expected
    # the segments partition the sessions of the call without by=
    assert sum(expected["num_sessions"]) == irm.evaluate_online(_log(), ["ctr"])["num_sessions"][0]


def _two_devices() -> pl.DataFrame:
    """Six users (a1-a3 in arm A, b1-b3 in B), each with a session on m then one on d,
    two impressions each; session ids x1, x2 repeat across users (ab_test tells
    sessions apart by unit). Clicks: a1 m 1 0, d 0 0; a2 m 1 1, d 1 0; a3 m 0 0, d 0 1;
    b1 m 1 1, d 1 1; b2 m 0 1, d 0 0; b3 m 1 0, d 1 0."""
    clicks = {
        "a1": ([1, 0], [0, 0]),
        "a2": ([1, 1], [1, 0]),
        "a3": ([0, 0], [0, 1]),
        "b1": ([1, 1], [1, 1]),
        "b2": ([0, 1], [0, 0]),
        "b3": ([1, 0], [1, 0]),
    }
    rows = [
        (user[0].upper(), user, f"x{s + 1}", device, p + 1, flags[p])
        for user, sessions in clicks.items()
        for s, (device, flags) in enumerate(zip(("m", "d"), sessions, strict=True))
        for p in range(2)
    ]
    return pl.DataFrame(
        rows,
        schema=["arm", "user_id", "session_id", "device", "position", "clicked"],
        orient="row",
    )


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_ab_test_key_varying_within_users_not_sessions(lazy: bool) -> None:
    log = _two_devices()
    frame: Frame = log.lazy() if lazy else log
    out = irm.ab_test(frame, ["ctr"], by="device")
    # ctr per device (ratio of sums over the units): d: A 0 + 1 + 1 of 6, B 2 + 0 + 1 of
    # 6; m: A 1 + 2 + 0 of 6, B 2 + 1 + 1 of 6
    assert out.select("device", "units", "control_units", "mean", "control_mean").to_dict(
        as_series=False
    ) == {
        "device": ["d", "m"],
        "units": [3, 3],
        "control_units": [3, 3],
        "mean": [3 / 6, 4 / 6],
        "control_mean": [2 / 6, 3 / 6],
    }
    # the ids repeating across users are read as the users' own: unique ids, same result
    unique = log.with_columns(pl.concat_str("user_id", "session_id").alias("session_id"))
    assert out.equals(irm.ab_test(unique, ["ctr"], by="device"))


def test_interleaving_by_a_key_fixed_within_sessions() -> None:
    # team A at positions 1 and 3, B at 2. d1: s1 A, s2 B, s5 A (2-0), s6 none; d2:
    # s3 none, s4 A (2-1), s7 B, s8 A
    out = irm.interleaving_test(_log(), by=["day", "arm"], teams=("A", "B"))
    assert out.select("day", "arm", "sessions", "no_click", "wins_a", "wins_b").to_dict(
        as_series=False
    ) == {
        "day": ["d1", "d1", "d2", "d2"],
        "arm": ["A", "B", "A", "B"],
        "sessions": [2, 2, 2, 2],
        "no_click": [0, 1, 1, 0],
        "wins_a": [1, 1, 1, 1],
        "wins_b": [1, 0, 0, 1],
    }


def test_cli_ab_names_the_flag(tmp_path: Path) -> None:
    _log().drop("timestamp", "market").write_csv(tmp_path / "log.csv")
    done = irm_in_process("ab", "log.csv", "-m", "ctr", "--by", "device", cwd=tmp_path)
    message = _split(["device"], 1, "device", "'s1' (arm='A', user_id='u1')", "'d' and 'm'")
    message = message.replace("by=['device']", "--by device")
    assert (done.returncode, done.stderr) == (2, f"irm: error: log.csv: {message}\n")


# -- the engines: each part is the door's per-session plan over whole sessions (parts
# are hashed by session), so the check runs there too. Their means of click metrics
# are not available (before and after this check), so the per-session values are read


def _engine(name: str, request: pytest.FixtureRequest) -> tuple[Any, Any, Any]:
    """The engine's evaluate, a converter to its frames and one back (helpers.engine_io)."""
    return engine_io(name, request)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_a_split_session_and_keep_fixed_keys(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = _engine(engine, request)
    log = _log().select("session_id", "day", "device", "position", "clicked")
    options = {"query_id": "session_id", "rank": "position", "per_query": True}
    with pytest.raises(InvalidValueError) as caught:
        back(evaluate(to_engine(log), ["ctr"], by="device", **options))
    assert str(caught.value) == _split(["device"], 1, "device", "'s1'", "'d' and 'm'")
    # a key fixed within each session: the door's per-session values
    out = back(evaluate(to_engine(log), ["ctr"], by="day", **options))
    assert out.equals(irm.evaluate(log, ["ctr"], by="day", **options))


#: The engines' refusal of the means of click metrics (engines._sides.refuse_click_means).
_CLICK_MEANS = (
    "the means of click metrics (ctr, abandonment) are not computed on {engine} (their "
    "means count sessions, and ctr is the clicks over every session's impressions, not a "
    "mean of per-session values); pass per_query=True for each session's values, or "
    "evaluate the log with polars_irmetrics.evaluate_online (a LazyFrame of the Parquet "
    "logs, out of core with buckets=)"
)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_the_means_of_click_metrics(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """Before, Dask raised pyarrow's 'Target schema's field names are not matching' and
    Spark a PySparkTypeError (uint32) at compute time; the means averaged per-session ctr
    (0.5 here) where the one machine gives the clicks over the impressions (0.4)."""
    evaluate, to_engine, _ = _engine(engine, request)
    log = pl.DataFrame(
        {
            "session_id": ["s1", "s1", "s2", "s2", "s3"],
            "position": [1, 2, 1, 2, 1],
            "clicked": [True, False, False, False, True],
        }
    )
    assert irm.evaluate_online(log, ["ctr"])["ctr"].item() == 2 / 5
    options = {"query_id": "session_id", "rank": "position"}
    with pytest.raises(InvalidValueError) as caught:
        evaluate(to_engine(log), ["ctr", "abandonment"], **options)
    assert str(caught.value) == _CLICK_MEANS.format(engine=engine.capitalize())
