"""Round 8 of the online wing: a segment key (``by=``) naming a column the click metrics
read as their data is refused at every online door, not computed over split sessions.

Every column keyword of ``evaluate_online``, ``evaluate`` (an impression log),
``ab_test``, ``interleaving_test`` and ``irm ab`` is tried as a key: the ids each door
groups by itself, the positions and clicks (every click metric reads them), and the
dwell times, conversions and timestamps where an asked metric reads them (a key holds
one value per session; these hold one per impression). Before this round the last three
were accepted: ``evaluate_online(log, "conversion_rate", by="converted")`` gave one row
per conversion value (1.0 and 0.0, each session split in two), ``ab_test`` compared arms
within each value. A column no asked metric reads is a key like any other (a log's
``converted`` may be a per-session flag), and the keys that do hold one value per session
(arm, user, day) still segment, with the values checked by hand below.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

from .helpers import irm_in_process

#: a DataFrame or a LazyFrame (the doors' overloads take one or the other)
Frame = Any

SAT = "sat_click_rate(dwell_threshold=10)"
TTFC = "time_to_first_click"
CONV = "conversion_rate"


def _log() -> pl.DataFrame:
    """Eight users in two arms over two days, one session of two impressions each.

    A: s0 clicks 1 (dwell 30, converts), s1 clicks 2 (dwell 4), s2 nothing, s3 both
    (dwell 12 and 2, the second converts); B: s4 clicks 1 (dwell 20), s5 both (dwell 15
    and 11, the first converts), s6 clicks 2 (dwell 3), s7 nothing.
    """
    return pl.DataFrame(
        {
            "arm": ["A"] * 8 + ["B"] * 8,
            "user_id": [f"u{i // 2}" for i in range(16)],
            "session_id": [f"s{i // 2}" for i in range(16)],
            "day": (["d1"] * 4 + ["d2"] * 4) * 2,
            "position": [1, 2] * 8,
            "clicked": [1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 0],
            "dwell": [30.0, None, None, 4.0, None, None, 12.0, 2.0,
                      20.0, None, 15.0, 11.0, None, 3.0, None, None],
            "converted": [1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0],
            "timestamp": [float(10 * (i // 2) + 3 * (i % 2)) for i in range(16)],
            "team": ["A", "B"] * 8,
        }
    )  # fmt: skip


def _renamed() -> pl.DataFrame:
    """The log with every column named otherwise, for the keywords that name them."""
    return _log().rename(
        {
            "arm": "variant",
            "user_id": "uid",
            "session_id": "sid",
            "position": "pos",
            "clicked": "click",
            "dwell": "dw",
            "converted": "conv",
            "timestamp": "ts",
            "team": "side",
        }
    )


_VARIES = "; a key holds one value per query (session), and {key!r} varies within one: "
_SEGMENT = "; a segment key holds one value per session, and {key!r} varies within one: "


def _read(key: str, role: str, metric: str) -> str:
    """The refusal of an evaluating door (``check_key_roles``)."""
    return (
        f"by=[{key!r}] names {key!r}, which is the column of {role} (read by metric "
        f"{metric!r})" + _VARIES.format(key=key) + "group by another column, e.g. by='day'"
    )


def _segment(key: str, role: str) -> str:
    """The refusal of a test's segment key (``ab_test``, ``interleaving_test``)."""
    return (
        f"by=[{key!r}] names {key!r}, which is the column of {role}"
        + _SEGMENT.format(key=key)
        + "segment by another column, e.g. by='day'"
    )


def _already(key: str, named: str, extra: str = "segment keys such as 'day'") -> str:
    return f"by=[{key!r}] names {key!r}, which is already {named}; list only {extra}"


_IDS = "the query or document id"
_AB_IDS = "the arm, the unit or the session"
_IL_IDS = "the session or the team"
_POSITIONS, _CLICKS = "the impressions' positions", "the clicks"
_DWELL, _CONVERSIONS, _TIMES = "the dwell times", "the conversions", "the impressions' timestamps"
_LOG_KEYS = {"query_id": "session_id", "rank": "position"}

#: (entry point, column keyword, log, call, the exact message)
CASES: list[tuple[str, str, Callable[[], pl.DataFrame], Callable[[Frame], Any], str]] = [
    # -- evaluate_online: session_id, position, clicked, dwell, converted, timestamp
    ("evaluate_online", "session_id", _log,
     lambda f: irm.evaluate_online(f, [CONV], by="session_id"),
     _already("session_id", _IDS, "extra keys such as 'system' or 'day'")),
    ("evaluate_online", "position", _log, lambda f: irm.evaluate_online(f, [CONV], by="position"),
     _read("position", _POSITIONS, CONV)),
    ("evaluate_online", "clicked", _log, lambda f: irm.evaluate_online(f, [SAT], by="clicked"),
     _read("clicked", _CLICKS, SAT)),
    ("evaluate_online", "dwell", _log, lambda f: irm.evaluate_online(f, [SAT], by="dwell"),
     _read("dwell", _DWELL, SAT)),
    ("evaluate_online", "converted", _log,
     lambda f: irm.evaluate_online(f, [CONV], by="converted"),
     _read("converted", _CONVERSIONS, CONV)),
    ("evaluate_online", "timestamp", _log,
     lambda f: irm.evaluate_online(f, [TTFC], by="timestamp"),
     _read("timestamp", _TIMES, TTFC)),
    # the keywords that rename the columns: the key names the column they name
    ("evaluate_online", "dwell=", _renamed,
     lambda f: irm.evaluate_online(f, [SAT], by=["day", "dw"], session_id="sid",
                                   position="pos", clicked="click", dwell="dw"),
     _read("dw", _DWELL, SAT).replace("by=['dw']", "by=['day', 'dw']")),
    ("evaluate_online", "converted=", _renamed,
     lambda f: irm.evaluate_online(f, [CONV], by="conv", session_id="sid", position="pos",
                                   clicked="click", converted="conv"),
     _read("conv", _CONVERSIONS, CONV)),
    ("evaluate_online", "timestamp=", _renamed,
     lambda f: irm.evaluate_online(f, [TTFC], by="ts", session_id="sid", position="pos",
                                   clicked="click", timestamp="ts"),
     _read("ts", _TIMES, TTFC)),
    # per session and out of core: the same plan builder refuses it
    ("evaluate_online per_session", "converted", _log,
     lambda f: irm.evaluate_online(f, [CONV], by="converted", per_session=True),
     _read("converted", _CONVERSIONS, CONV)),
    ("evaluate_online buckets=2", "dwell", _log,
     lambda f: irm.evaluate_online(f, [SAT], by="dwell", buckets=2),
     _read("dwell", _DWELL, SAT)),
    # -- evaluate on an impression log: query_id, rank, clicked, dwell, converted, timestamp
    ("evaluate", "query_id", _log,
     lambda f: irm.evaluate(f, [CONV], by="session_id", **_LOG_KEYS),
     _already("session_id", _IDS, "extra keys such as 'system' or 'day'")),
    ("evaluate", "rank", _log, lambda f: irm.evaluate(f, [CONV], by="position", **_LOG_KEYS),
     _read("position", _POSITIONS, CONV)),
    ("evaluate", "clicked", _log, lambda f: irm.evaluate(f, [CONV], by="clicked", **_LOG_KEYS),
     _read("clicked", _CLICKS, CONV)),
    # the refusal names the metric that reads the column, not every metric asked
    ("evaluate", "dwell", _log,
     lambda f: irm.evaluate(f, ["ctr", SAT, CONV], by="dwell", **_LOG_KEYS),
     _read("dwell", _DWELL, SAT)),
    ("evaluate", "converted", _log,
     lambda f: irm.evaluate(f, ["ctr", CONV], by="converted", **_LOG_KEYS),
     _read("converted", _CONVERSIONS, CONV)),
    ("evaluate", "timestamp", _log,
     lambda f: irm.evaluate(f, [TTFC], by="timestamp", **_LOG_KEYS),
     _read("timestamp", _TIMES, TTFC)),
    # -- ab_test: arm, unit, session_id, position, clicked, dwell, converted, timestamp
    ("ab_test", "arm", _log, lambda f: irm.ab_test(f, [CONV], by="arm"),
     _already("arm", _AB_IDS)),
    ("ab_test", "unit", _log, lambda f: irm.ab_test(f, [CONV], by="user_id"),
     _already("user_id", _AB_IDS)),
    ("ab_test", "session_id", _log, lambda f: irm.ab_test(f, [CONV], by="session_id"),
     _already("session_id", _AB_IDS)),
    ("ab_test", "position", _log, lambda f: irm.ab_test(f, [CONV], by="position"),
     _segment("position", _POSITIONS)),
    ("ab_test", "clicked", _log, lambda f: irm.ab_test(f, [CONV], by="clicked"),
     _segment("clicked", _CLICKS)),
    ("ab_test", "dwell", _log, lambda f: irm.ab_test(f, ["ctr", SAT], by="dwell"),
     _segment("dwell", _DWELL)),
    ("ab_test", "converted", _log, lambda f: irm.ab_test(f, [CONV], by="converted"),
     _segment("converted", _CONVERSIONS)),
    ("ab_test", "timestamp", _log, lambda f: irm.ab_test(f, [TTFC], by="timestamp"),
     _segment("timestamp", _TIMES)),
    ("ab_test", "dwell=", _renamed,
     lambda f: irm.ab_test(f, [SAT], by="dw", arm="variant", unit="uid", session_id="sid",
                           position="pos", clicked="click", dwell="dw"),
     _segment("dw", _DWELL)),
    ("ab_test", "converted=", _renamed,
     lambda f: irm.ab_test(f, [CONV], by="conv", arm="variant", unit="uid", session_id="sid",
                           position="pos", clicked="click", converted="conv"),
     _segment("conv", _CONVERSIONS)),
    ("ab_test", "timestamp=", _renamed,
     lambda f: irm.ab_test(f, [TTFC], by=["day", "ts"], arm="variant", unit="uid",
                           session_id="sid", position="pos", clicked="click", timestamp="ts"),
     _segment("ts", _TIMES).replace("by=['ts']", "by=['day', 'ts']")),
    # -- interleaving_test: session_id, team, position, clicked (it reads nothing else)
    ("interleaving_test", "session_id", _log,
     lambda f: irm.interleaving_test(f, by="session_id"), _already("session_id", _IL_IDS)),
    ("interleaving_test", "team", _log, lambda f: irm.interleaving_test(f, by="team"),
     _already("team", _IL_IDS)),
    ("interleaving_test", "position", _log, lambda f: irm.interleaving_test(f, by="position"),
     _segment("position", _POSITIONS)),
    ("interleaving_test", "clicked", _log, lambda f: irm.interleaving_test(f, by="clicked"),
     _segment("clicked", _CLICKS)),
    ("interleaving_test", "position=", _renamed,
     lambda f: irm.interleaving_test(f, by="pos", session_id="sid", position="pos",
                                     clicked="click", team="side"),
     _segment("pos", _POSITIONS)),
]  # fmt: skip


def _to_the_end(call: Callable[[Frame], Any], frame: Frame) -> object:
    """The call's result, a lazy one collected (a refusal may come at either step)."""
    out = call(frame)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("make", "call", "message"),
    [c[2:] for c in CASES],
    ids=[f"{c[0]}-{c[1]}" for c in CASES],
)
def test_a_key_naming_a_data_column_is_refused(
    make: Callable[[], pl.DataFrame], call: Callable[[Frame], Any], message: str, lazy: bool
) -> None:
    frame: Frame = make().lazy() if lazy else make()
    with pytest.raises(InvalidValueError) as caught:
        _to_the_end(call, frame)
    assert str(caught.value) == message


def test_the_refusal_comes_before_the_plan_runs() -> None:
    # a lazy log is refused when the plan is built, not when it is collected
    with pytest.raises(InvalidValueError, match="names 'converted'"):
        irm.evaluate_online(_log().lazy(), [CONV], by="converted")


def test_cli_ab_refuses_a_data_column_as_key(tmp_path: Path) -> None:
    _log().drop("dwell").write_csv(tmp_path / "log.csv")
    done = irm_in_process("ab", "log.csv", "-m", CONV, "--by", "converted", cwd=tmp_path)
    message = (
        "--by converted names 'converted', which is the column of the conversions; a segment "
        "key holds one value per session, and 'converted' varies within one: segment by "
        "another column, e.g. --by day"
    )
    assert (done.returncode, done.stderr) == (2, f"irm: error: log.csv: {message}\n")


# -- the keys that hold one value per session still segment, to the values by hand


def test_evaluate_online_by_arm_and_by_user() -> None:
    # A: sessions converting s0, s3 of 4 -> 0.5; satisfied clicks (dwell >= 10) 30, 12 of
    # the clicks 30, 4, 12, 2 -> 0.5. B: s5 of 4 -> 0.25; 20, 15, 11 of 20, 15, 11, 3
    # -> 0.75
    out = irm.evaluate_online(_log(), [CONV, SAT], by="arm")
    assert out.to_dict(as_series=False) == {
        "arm": ["A", "B"],
        "num_sessions": [4, 4],
        CONV: [0.5, 0.25],
        SAT: [0.5, 0.75],
    }
    # one session per user: each user's own values (s2, s7 have no click: null rate)
    out = irm.evaluate_online(_log(), [CONV, SAT], by="user_id")
    assert out[CONV].to_list() == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    assert out[SAT].to_list() == [1.0, 0.0, None, 0.5, 1.0, 1.0, 0.0, None]


def test_a_column_no_asked_metric_reads_is_a_key_like_any_other() -> None:
    # a per-session conversion flag named "converted", keyed while only clicks are
    # measured: CTR of the converting sessions s0, s3, s5 = 1+2+2 of 6, of the others
    # 1+0+1+1+0 of 10
    log = _log().with_columns(pl.col("converted").max().over("session_id"))
    out = irm.evaluate_online(log, ["ctr"], by="converted")
    assert out.to_dict(as_series=False) == {
        "converted": [0, 1],
        "num_sessions": [5, 3],
        "ctr": [3 / 10, 5 / 6],
    }
    # and a per-session time, keyed where no metric reads the timestamps
    log = _log().with_columns(pl.col("timestamp").min().over("session_id"))
    out = irm.evaluate_online(log, ["ctr"], by="timestamp")
    assert out["num_sessions"].to_list() == [1] * 8


def test_ab_test_and_interleaving_by_day() -> None:
    # sat_click_rate per arm and day (ratio of sums over the units): A d1 30, 4 -> 1/2,
    # A d2 12, 2 -> 1/2; B d1 20, 15, 11 -> 3/3, B d2 3 -> 0/1
    out = irm.ab_test(_log(), [SAT], by="day")
    assert out.select("day", "arm", "mean", "control_mean").to_dict(as_series=False) == {
        "day": ["d1", "d2"],
        "arm": ["B", "B"],
        "mean": [1.0, 0.0],
        "control_mean": [0.5, 0.5],
    }
    # team A at position 1, B at 2: d1 s0, s4 won by A, s1 by B, s5 a tie; d2 s6 won by
    # B, s3 a tie (s2, s7 no click)
    out = irm.interleaving_test(_log(), by="day", teams=("A", "B"))
    assert out.select("day", "wins_a", "wins_b", "ties").to_dict(as_series=False) == {
        "day": ["d1", "d2"],
        "wins_a": [2, 0],
        "wins_b": [1, 1],
        "ties": [1, 1],
    }
