"""``interleaving_test()``: team-draft interleaving, credit per click and a sign test.

In team-draft interleaving (Radlinski, Kurup & Joachims, CIKM 2008) each session shows
one list merged from two systems' rankings; every shown item carries the ``team``
(system) that contributed it. A click credits the item's team. A session is a win for
the team with more clicked items, a tie when both have as many (at least one), and
sessions without a click are left out of the comparison (counted in ``no_click``).
The preference of team A is Chapelle et al.'s (TOIS 2012)
``Δ = (wins_a + ties / 2) / (wins_a + wins_b + ties) - 1/2`` (positive: A is
preferred), and the p-value is the two-sided sign test of ``wins_a`` among the
``wins_a + wins_b`` decided sessions (``scipy.stats.binomtest(wins_a, wins_a + wins_b,
0.5)``; 1 when no session is decided).

One lazy plan: a per-session group-by (credits and data checks), a per-segment
group-by, and the test, vectorised over the segments, when the result is collected. A
segment key (``by=``) that varies within a session is refused when the plan runs, by
the check of the other online doors
(:func:`~polars_irmetrics.online.sessions.raise_on_split_sessions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    IrmWarning,
)
from polars_irmetrics.ground.inputs import as_polars
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.options import refuse_result_keys
from polars_irmetrics.ground.validate import INTERNAL, require_columns, warn_from_plan
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.online.ab import segment_keys
from polars_irmetrics.online.columns import LogColumns, article, check_log_names, refuse_nested
from polars_irmetrics.online.sessions import raise_on_split_sessions

if TYPE_CHECKING:
    from scipy import stats
else:
    stats = LazyModule("scipy.stats")  # imported at the first test (import time)

__all__ = ["interleaving_test", "sign_test_p_values"]

_A, _B = f"{INTERNAL}team_a", f"{INTERNAL}team_b"
#: Each session's clicks on the items of team a and of team b.
_CREDIT_A, _CREDIT_B = f"{INTERNAL}credit_a", f"{INTERNAL}credit_b"
#: The columns of :func:`interleaving_test`'s result, which no segment key may name.
_RESULT_COLUMNS = (
    "team_a", "team_b", "sessions", "no_click", "wins_a", "wins_b", "ties", "preference",
    "p_value", "preferred",
)  # fmt: skip


def _flag(name: str) -> str:
    return f"{INTERNAL}v_{name}"


def _first(name: str) -> str:
    return f"{INTERNAL}first_{name}"


#: The data checks counted per session, in the order they are reported.
_SESSION_CHECKS = (
    "null_team",
    "null_clicked",
    "bad_clicked",
    "unshown_click",
    "bad_position",
    "dup_position",
)


def sign_test_p_values(
    wins_a: npt.NDArray[np.int64], decided: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Two-sided sign-test p-values, ``binomtest(wins_a, decided, 0.5).pvalue``, vectorised.

    The binomial distribution with p = 1/2 is symmetric, so the two-sided p-value is
    ``min(1, 2 P(X <= min(k, n - k)))``; 1 where ``decided`` is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_irmetrics.online.interleaving import sign_test_p_values
    >>> sign_test_p_values(np.array([9, 5, 0]), np.array([10, 10, 0])).round(6).tolist()
    [0.021484, 1.0, 1.0]
    """
    k = np.minimum(wins_a, decided - wins_a)
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(k, decided, 0.5))
    out: npt.NDArray[np.float64] = np.where(decided > 0, p, 1.0)
    return out


@overload
def interleaving_test(
    log: pl.DataFrame,
    *,
    teams: tuple[str, str] | None = ...,
    by: str | Sequence[str] | None = ...,
    session_id: str = ...,
    position: str = ...,
    clicked: str = ...,
    team: str = ...,
) -> pl.DataFrame: ...


@overload
def interleaving_test(
    log: pl.LazyFrame,
    *,
    teams: tuple[str, str] | None = ...,
    by: str | Sequence[str] | None = ...,
    session_id: str = ...,
    position: str = ...,
    clicked: str = ...,
    team: str = ...,
) -> pl.LazyFrame: ...


def interleaving_test(
    log: pl.DataFrame | pl.LazyFrame,
    *,
    teams: tuple[str, str] | None = None,
    by: str | Sequence[str] | None = None,
    session_id: str = "session_id",
    position: str = "position",
    clicked: str = "clicked",
    team: str = "team",
) -> pl.DataFrame | pl.LazyFrame:
    """Analyse a team-draft interleaving log: wins, ties, losses and a sign test.

    Parameters
    ----------
    log
        One row per shown item: ``session_id`` (or query), ``position`` (an integer,
        1 = top, one item per position in a session; null for an item that was not
        shown, which cannot be clicked), ``clicked`` (Boolean or 0/1) and ``team``, the
        system that contributed the item.
    teams
        The two teams ``(a, b)``, named as text whatever the ``team`` column's dtype
        (``('1', '0')`` for an integer column); default: the two values of the ``team``
        column of each segment, in sorted order (as text). A third team is an error.
    by
        Segment keys (day, market): each segment is analysed apart. A key holds one
        value per session: one whose values vary within a session is refused when the
        plan runs. A key named as a column of the result (``team_a``, ``p_value``...:
        see Returns) is refused: rename it in the log first.
    session_id, position, clicked, team
        Column names in ``log``.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The same kind as ``log``, one row per segment: ``team_a``, ``team_b``,
        ``sessions``, ``no_click`` (sessions without a click, left out), ``wins_a``,
        ``wins_b``, ``ties``, ``preference`` (Δ, positive when ``team_a`` is
        preferred), ``p_value`` (sign test) and ``preferred`` (the team with more wins,
        null on a draw).

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError
        A missing column or a wrong dtype (a position that is no integer; a nested
        session, team or segment key).
    InvalidValueError
        When the plan runs: an empty log; a null team, click or key (session or
        segment); a segment key with two values in a session; a click other than 0 or
        1; a position below 1; a click on an item that was not shown (null
        ``position``); a segment without exactly two teams.
    DuplicateError
        Two items of a session at one position (when the plan runs).

    Examples
    --------
    Five sessions of a log interleaving systems A and B: in s1 only A's item is
    clicked (a win for A); in s2 only B's (a win for B); in s3 one item of each (a
    tie); in s4 nothing (left out); in s5 two of B's items (a win for B). So
    wins_a = 1, wins_b = 2, ties = 1, Δ = (1 + 1/2) / 4 - 1/2 = -0.125 (B preferred),
    and the sign test of 1 win in 3 decided sessions gives p = 1:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4", "s5", "s5"],
    ...     "position": [1, 2] * 5,
    ...     "team": ["A", "B", "B", "A", "A", "B", "B", "A", "B", "B"],
    ...     "clicked": [1, 0, 1, 0, 1, 1, 0, 0, 1, 1],
    ... })
    >>> irm.interleaving_test(log).select("wins_a", "wins_b", "ties", "no_click",
    ...                                   "preference", "p_value", "preferred")
    shape: (1, 7)
    ┌────────┬────────┬──────┬──────────┬────────────┬─────────┬───────────┐
    │ wins_a ┆ wins_b ┆ ties ┆ no_click ┆ preference ┆ p_value ┆ preferred │
    │ ---    ┆ ---    ┆ ---  ┆ ---      ┆ ---        ┆ ---     ┆ ---       │
    │ i64    ┆ i64    ┆ i64  ┆ i64      ┆ f64        ┆ f64     ┆ str       │
    ╞════════╪════════╪══════╪══════════╪════════════╪═════════╪═══════════╡
    │ 1      ┆ 2      ┆ 1    ┆ 1        ┆ -0.125     ┆ 1.0     ┆ B         │
    └────────┴────────┴──────┴──────────┴────────────┴─────────┴───────────┘
    """
    log = as_polars(log, "log")
    eager = isinstance(log, pl.DataFrame)
    roles = {"session_id": session_id, "position": position, "clicked": clicked, "team": team}
    check_log_names(roles)  # one name each, and no column named for two roles
    columns = LogColumns(session_id=session_id, position=position, clicked=clicked, team=team)
    by_keys = segment_keys(
        by,
        (session_id, team),
        "the session or the team",
        columns,
    )
    refuse_result_keys("by", by_keys, _RESULT_COLUMNS, "log")
    if teams is not None and (
        not isinstance(teams, tuple | list) or len(teams) != 2 or teams[0] == teams[1]
    ):
        raise InvalidValueError(
            f"teams must be two different team names, e.g. ('bm25', 'dense'); got {teams!r}"
        )
    if teams is not None and not all(isinstance(t, str) for t in teams):
        # the team column is read as text whatever its dtype (1 as '1'), as ab_test's arms
        text = tuple(str(t).lower() if isinstance(t, bool) else str(t) for t in teams)
        example = text if text[0] != text[1] else ("bm25", "dense")
        raise InvalidValueError(
            f"teams must be the two team names as text, got {teams!r}: the teams are named "
            f"as text whatever the column's dtype, e.g. teams={example!r}"
        )
    plan = _plan(log.lazy(), columns, by_keys, teams)
    return plan.collect() if eager else plan


def _plan(
    lf: pl.LazyFrame,
    columns: LogColumns,
    by: tuple[str, ...],
    teams: tuple[str, str] | None,
) -> pl.LazyFrame:
    schema = lf.collect_schema()
    keys = [*by, columns.session_id]
    require_columns(
        schema,
        [*keys, columns.position, columns.clicked, columns.team],
        "log",
        "name your columns, e.g. session_id='query_id', team='system'",
    )
    refuse_nested(
        schema,
        {columns.session_id: "the session id", columns.team: "the team"}
        | dict.fromkeys(by, "a segment key"),
    )
    if not schema[columns.position].is_integer():
        raise ColumnTypeError(
            f"column {columns.position!r} of the log has dtype {schema[columns.position]}; "
            f"a position must be an integer (1 = top): cast it, e.g. "
            f"pl.col({columns.position!r}).cast(pl.Int64)"
        )
    dtype = schema[columns.clicked]
    bad_click = pl.lit(0)
    if dtype == pl.Boolean:
        click = pl.col(columns.clicked)
    elif dtype.is_integer():
        click = pl.col(columns.clicked) != 0
        bad_click = (~pl.col(columns.clicked).is_in([0, 1])).sum()
    else:
        raise ColumnTypeError(
            f"column {columns.clicked!r} of the log has dtype {dtype}; a click must be "
            f"Boolean or integers 0/1: cast it, e.g. pl.col({columns.clicked!r}).cast(pl.Boolean)"
        )
    name = pl.col(columns.team).cast(pl.String)
    # the number of teams per segment, and the first team outside ``teams`` (by name)
    found = name.drop_nulls().n_unique()
    stray = pl.lit(None, pl.String)
    if teams is None:
        a, b = name.min(), name.max()
    else:
        a, b = pl.lit(teams[0]), pl.lit(teams[1])
        stray = name.filter(~name.is_in(list(teams))).min()
    if by:
        a, b, found = a.over(list(by)), b.over(list(by)), found.over(list(by))
        stray = stray.over(list(by))
    pos = pl.col(columns.position)
    sessions = (
        lf.with_columns(
            a.alias(_A), b.alias(_B), found.alias(_flag("teams")), stray.alias(_flag("stray"))
        )
        .group_by(keys)
        .agg(
            pl.col(_A).first(),
            pl.col(_B).first(),
            pl.col(_flag("teams")).first(),
            pl.col(_flag("stray")).first(),
            (click & (name == pl.col(_A))).sum().cast(pl.Int64).alias(_CREDIT_A),
            (click & (name == pl.col(_B))).sum().cast(pl.Int64).alias(_CREDIT_B),
            *(
                check.cast(pl.Int64).alias(_flag(check_name))
                for check_name, check in (
                    ("null_team", name.is_null().sum()),
                    ("null_clicked", pl.col(columns.clicked).is_null().sum()),
                    ("bad_clicked", bad_click),
                    ("unshown_click", (click & pos.is_null()).sum()),
                    ("bad_position", (pos < 1).sum()),
                    ("dup_position", pos.count() - pos.drop_nulls().n_unique()),
                )
            ),
        )
    )
    if by:
        # a session split by a segment key (one row per value): refused, over the whole
        # per-session frame (map_batches is not streamable: it sees every row at once)
        def check(frame: pl.DataFrame) -> pl.DataFrame:
            raise_on_split_sessions(frame, by, (columns.session_id,))
            return frame

        sessions = sessions.map_batches(check, schema=sessions.collect_schema())
    credit_a, credit_b = pl.col(_CREDIT_A), pl.col(_CREDIT_B)
    summary = [
        pl.col(_A).first().alias("team_a"),
        pl.col(_B).first().alias("team_b"),
        pl.len().cast(pl.Int64).alias("sessions"),
        ((credit_a + credit_b) == 0).sum().cast(pl.Int64).alias("no_click"),
        (credit_a > credit_b).sum().cast(pl.Int64).alias("wins_a"),
        (credit_b > credit_a).sum().cast(pl.Int64).alias("wins_b"),
        ((credit_a == credit_b) & (credit_a > 0)).sum().cast(pl.Int64).alias("ties"),
        pl.col(_flag("teams")).max().cast(pl.Int64),
        pl.col(_flag("stray")).min(),
        pl.col(columns.session_id).is_null().sum().cast(pl.Int64).alias(_flag("null_session")),
        *(pl.col(_flag(n)).sum() for n in _SESSION_CHECKS),
        # the first session (by id) each check finds
        *(
            pl.col(columns.session_id).filter(pl.col(_flag(n)) > 0).min().alias(_first(n))
            for n in _SESSION_CHECKS
        ),
    ]
    segments = (
        sessions.group_by(list(by)).agg(summary).sort(list(by)) if by else sessions.select(summary)
    )
    out_schema = pl.Schema(
        {
            **{k: schema[k] for k in by},
            "team_a": pl.String(),
            "team_b": pl.String(),
            "sessions": pl.Int64(),
            "no_click": pl.Int64(),
            "wins_a": pl.Int64(),
            "wins_b": pl.Int64(),
            "ties": pl.Int64(),
            "preference": pl.Float64(),
            "p_value": pl.Float64(),
            "preferred": pl.String(),
        }
    )
    return segments.map_batches(
        warns_in_order(lambda frame: _finish(frame, columns, by, teams)), schema=out_schema
    )


def _raise_on_session_checks(row: dict[str, object], columns: LogColumns, where: str) -> None:
    """Raise the first data problem of a segment's row (``where``: the segment)."""
    if row[_flag("null_team")]:
        raise InvalidValueError(
            f"column {columns.team!r} of the log has {row[_flag('null_team')]} null "
            f"value(s){where}, e.g. in session {row[_first('null_team')]!r}; every shown "
            "item needs the team that contributed it: fill it from the interleaving's "
            "assignment, or drop those sessions, e.g. .filter(pl.col("
            f"{columns.team!r}).is_not_null().all().over({columns.session_id!r}))"
        )
    if row[_flag("null_clicked")]:
        raise InvalidValueError(
            f"column {columns.clicked!r} of the log has {row[_flag('null_clicked')]} null "
            f"value(s){where}, e.g. in session {row[_first('null_clicked')]!r}; every "
            "impression is clicked or not: fill them, e.g. "
            f"pl.col({columns.clicked!r}).fill_null(False)"
        )
    if row[_flag("bad_clicked")]:
        raise InvalidValueError(
            f"column {columns.clicked!r} of the log has {row[_flag('bad_clicked')]} value(s) "
            f"other than 0 and 1{where}, e.g. in session {row[_first('bad_clicked')]!r}; a "
            "click is a flag: use True/False or 0/1"
        )
    if row[_flag("unshown_click")]:
        raise InvalidValueError(
            f"session {row[_first('unshown_click')]!r}{where} has a click on an item "
            f"that was not shown (a null {columns.position!r}); a click needs the position "
            "it was shown at: fix the join of clicks to impressions, or drop those rows"
        )
    position = columns.position
    if row[_flag("bad_position")]:
        raise InvalidValueError(
            f"column {position!r} of the log has {row[_flag('bad_position')]} position(s) "
            f"below 1{where}, e.g. in session {row[_first('bad_position')]!r}; positions "
            f"start at 1 for the top: add 1 to 0-based positions, e.g. pl.col({position!r}) + 1"
        )
    if row[_flag("dup_position")]:
        raise DuplicateError(
            f"column {position!r} of the log: {row[_flag('dup_position')]} impression(s)"
            f"{where} at a position another impression of their session holds, e.g. in "
            f"session {row[_first('dup_position')]!r}; each position shows one item: keep one "
            f"row per position, e.g. .unique([{columns.session_id!r}, {position!r}])"
        )


def _finish(
    frame: pl.DataFrame,
    columns: LogColumns,
    by: Sequence[str],
    teams: tuple[str, str] | None,
) -> pl.DataFrame:
    if frame.height == 0 or (not by and frame["sessions"][0] == 0):
        raise InvalidValueError(
            "the log has no rows; interleaving_test needs one row per shown item (its "
            f"{columns.session_id!r}, {columns.position!r}, {columns.team!r} and "
            f"{columns.clicked!r}): check the log, or the filter that emptied it"
        )
    for key in [*by]:
        if frame[key].null_count():
            raise InvalidValueError(
                f"column {key!r} of the log has null values; every impression needs "
                f"{article(key)}: fill or drop them, e.g. .drop_nulls({key!r})"
            )
    if frame[_flag("null_session")].sum():
        key = columns.session_id
        raise InvalidValueError(
            f"column {key!r} of the log has null values; every impression needs "
            f"{article(key)}: fill or drop them, e.g. .drop_nulls({key!r})"
        )
    for row in frame.iter_rows(named=True):
        where = " (" + ", ".join(f"{k}={row[k]!r}" for k in by) + ")" if by else ""
        _raise_on_session_checks(row, columns, where)
        if row[_flag("stray")] is not None:
            raise InvalidValueError(
                f"column {columns.team!r} of the log holds team {row[_flag('stray')]!r}"
                f"{where}, which is not one of teams={teams!r}: name the log's two teams "
                "in teams= (as the log spells them), or filter the log to them"
            )
        if row[_flag("teams")] != 2:
            expected = f"the teams {teams!r}" if teams is not None else "two teams"
            raise InvalidValueError(
                f"column {columns.team!r} of the log holds {row[_flag('teams')]} team(s)"
                f"{where} where team-draft interleaving needs {expected}: "
                "analyse one pair of systems at a time, e.g. filter the log"
            )
    wins_a = frame["wins_a"].to_numpy()
    wins_b = frame["wins_b"].to_numpy()
    ties = frame["ties"].to_numpy()
    clicked = wins_a + wins_b + ties
    _warn_no_click(frame, clicked, by, columns)
    with np.errstate(divide="ignore", invalid="ignore"):
        preference = np.where(clicked > 0, (wins_a + ties / 2) / clicked - 0.5, np.nan)
    p = sign_test_p_values(wins_a, wins_a + wins_b)
    return frame.select(
        *by, "team_a", "team_b", "sessions", "no_click", "wins_a", "wins_b", "ties"
    ).with_columns(
        pl.Series("preference", preference).fill_nan(None),
        pl.Series("p_value", p, dtype=pl.Float64),
        pl.when(pl.col("wins_a") > pl.col("wins_b"))
        .then(pl.col("team_a"))
        .when(pl.col("wins_b") > pl.col("wins_a"))
        .then(pl.col("team_b"))
        .alias("preferred"),
    )


def _warn_no_click(
    frame: pl.DataFrame, clicked: npt.NDArray[np.int64], by: Sequence[str], columns: LogColumns
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` for each segment whose sessions
    have no click at all: no session tells the teams apart, so ``preference`` is null
    and ``p_value`` 1 (scipy's ``binomtest`` refuses 0 trials), which no data measured;
    and for each whose clicked sessions are all ties: ``preference`` 0 is measured, but
    the sign test has no decided session, and its ``p_value`` 1 no more."""
    for row, count in zip(frame.iter_rows(named=True), clicked.tolist(), strict=True):
        where = " (" + ", ".join(f"{k}={row[k]!r}" for k in by) + ")" if by else ""
        if count and row["wins_a"] + row["wins_b"] == 0:
            warn_from_plan(
                f"no session of the log{where} prefers a team: its {row['ties']} clicked "
                f"session{'' if row['ties'] == 1 else 's'} "
                f"{'is a tie' if row['ties'] == 1 else 'are all ties'} (and "
                f"{row['no_click']} without a click), so the sign test has no decided "
                "session and its p_value 1 measures nothing (scipy's binomtest refuses 0 "
                "trials); preference 0 is the ties' own: log more sessions",
                IrmWarning,
            )
        if count:
            continue
        warn_from_plan(
            f"no session of the log{where} has a click ({row['sessions']} sessions, all "
            "counted in no_click): nothing tells the teams apart, so preference is null "
            "and p_value 1 (scipy's binomtest refuses 0 trials); check the "
            f"{columns.clicked!r} column (clicked=...), or log more sessions",
            IrmWarning,
        )
