"""Team-draft interleaving: credit per click, wins/ties/losses, the sign test = scipy's
binomtest, segments and bad input."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from polars_irmetrics.io.files import sample_interleaving_path
from polars_irmetrics.online.interleaving import sign_test_p_values

Frame = pl.DataFrame | pl.LazyFrame
AS_FRAME: list[Callable[[pl.DataFrame], Frame]] = [lambda f: f, lambda f: f.lazy()]

# s1: A's item clicked (A wins); s2: B's (B wins); s3: one each (tie); s4: nothing
# (left out); s5: two of B's (B wins); s6: B's item, not A's (B wins).
LOG = pl.DataFrame(
    {
        "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4", "s5", "s5", "s6", "s6"],
        "position": [1, 2] * 6,
        "team": ["A", "B", "B", "A", "A", "B", "B", "A", "B", "B", "A", "B"],
        "clicked": [True, False, True, False, True, True, False, False, True, True, False, True],
    }
)


def _collect(frame: Frame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_worked_example(as_frame: Callable[[pl.DataFrame], Frame]) -> None:
    out = irm.interleaving_test(as_frame(LOG))
    assert isinstance(out, type(as_frame(LOG)))
    row = _collect(out).row(0, named=True)
    # wins: A in s1; B in s2, s5, s6; tie in s3; s4 has no click
    assert row == {
        "team_a": "A",
        "team_b": "B",
        "sessions": 6,
        "no_click": 1,
        "wins_a": 1,
        "wins_b": 3,
        "ties": 1,
        "preference": (1 + 1 / 2) / (1 + 3 + 1) - 1 / 2,  # -0.2: B preferred
        "p_value": stats.binomtest(1, 4, 0.5).pvalue,  # 2 * (1 + 4) / 16 = 0.625
        "preferred": "B",
    }
    assert row["p_value"] == 2 * (1 + 4) / 16


def test_teams_given_in_another_order_swap_the_sides() -> None:
    row = irm.interleaving_test(LOG, teams=("B", "A")).row(0, named=True)
    assert (row["team_a"], row["wins_a"], row["wins_b"], row["preference"]) == (
        "B",
        3,
        1,
        (3 + 1 / 2) / 5 - 1 / 2,
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300))
def test_sign_test_equals_scipy_binomtest(wins_a: int, wins_b: int) -> None:
    ours = sign_test_p_values(np.array([wins_a]), np.array([wins_a + wins_b]))[0]
    theirs = 1.0 if wins_a + wins_b == 0 else stats.binomtest(wins_a, wins_a + wins_b).pvalue
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-300)


def test_segments_and_the_sample() -> None:
    log = pl.read_parquet(sample_interleaving_path()).with_columns(
        pl.when(pl.col("session_id") < "q0150").then(pl.lit("mon")).otherwise(pl.lit("tue"))
        .alias("day")
    )  # fmt: skip
    whole = irm.interleaving_test(log)
    assert whole.select("team_a", "team_b", "preferred").row(0) == ("bm25", "dense", "dense")
    assert whole["p_value"].item() < 0.01
    days = irm.interleaving_test(log, by="day")
    assert days["day"].to_list() == ["mon", "tue"]
    for column in ("sessions", "no_click", "wins_a", "wins_b", "ties"):
        assert days[column].sum() == whole[column].item()
    for day in ("mon", "tue"):
        alone = irm.interleaving_test(log.filter(pl.col("day") == day))
        assert days.filter(pl.col("day") == day).drop("day").equals(alone)


def _with(column: str, values: list[Any]) -> pl.DataFrame:
    return LOG.with_columns(pl.Series(column, values))


BAD: list[tuple[str, pl.DataFrame, dict[str, Any], type[Exception], str]] = [
    (
        "missing team",
        LOG.drop("team"),
        {},
        ColumnNotFoundError,
        "column 'team' not found in the log (its columns: 'session_id', 'position', "
        "'clicked'); name your columns, e.g. session_id='query_id', team='system'",
    ),
    (
        "three teams",
        _with("team", ["A", "B", "B", "A", "A", "C", "B", "A", "B", "B", "A", "B"]),
        {},
        InvalidValueError,
        "column 'team' of the log holds 3 team(s) where team-draft interleaving needs two "
        "teams: analyse one pair of systems at a time, e.g. filter the log",
    ),
    (
        "a team outside teams",
        LOG,
        {"teams": ("A", "C")},
        InvalidValueError,
        # (before: "holds 3 team(s)", where the log holds two, one of them not in teams)
        "column 'team' of the log holds team 'B', which is not one of teams=('A', 'C'): "
        "name the log's two teams in teams= (as the log spells them), or filter the log to "
        "them",
    ),
    (
        "null team",
        _with("team", ["A", "B", "B", None, "A", "B", "B", "A", "B", "B", "A", "B"]),
        {},
        InvalidValueError,
        # (before: no session, no fix)
        "column 'team' of the log has 1 null value(s), e.g. in session 's2'; every shown "
        "item needs the team that contributed it: fill it from the interleaving's "
        "assignment, or drop those sessions, e.g. "
        ".filter(pl.col('team').is_not_null().all().over('session_id'))",
    ),
    (
        "click not shown",
        _with("position", [1, 2, None, 2, 1, 2, 1, 2, 1, 2, 1, 2]),
        {},
        InvalidValueError,
        "session 's2' has a click on an item that was not shown (a null 'position'); a "
        "click needs the position it was shown at: fix the join of clicks to impressions, "
        "or drop those rows",
    ),
    (
        "same team twice",
        LOG,
        {"teams": ("A", "A")},
        InvalidValueError,
        "teams must be two different team names, e.g. ('bm25', 'dense'); got ('A', 'A')",
    ),
]


@pytest.mark.parametrize("as_frame", AS_FRAME)
@pytest.mark.parametrize(
    ("case", "log", "options", "error", "message"), BAD, ids=[c[0] for c in BAD]
)
def test_bad_input(
    as_frame: Callable[[pl.DataFrame], Frame],
    case: str,
    log: pl.DataFrame,
    options: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        _collect(irm.interleaving_test(as_frame(log), **options))
