"""Round 7 of the online wing: Fieller's relative interval (consistent with the test),
exact sums at any scale (= scipy from 1e-12 to 1e12), segments without an arm, split
arms absent from the log, ``significant`` at its boundary, nested key columns, the
interleaving log's checks, and the CLI's data locations."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, DuplicateError, InvalidValueError
from polars_irmetrics.online.stats import ArmMoments, compare, fieller

from .helpers import irm_in_process, multipletests

Frame = pl.DataFrame | pl.LazyFrame
AS_FRAME: list[Callable[[pl.DataFrame], Frame]] = [lambda f: f, lambda f: f.lazy()]
KIND = ["DataFrame", "LazyFrame"]


def _collect(frame: Frame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def _one_session_log(arms: list[str], values: list[bool]) -> pl.DataFrame:
    """One user per row, one session of one impression: ``values`` are the clicks."""
    n = len(arms)
    return pl.DataFrame(
        {
            "arm": arms,
            "user_id": [f"u{i}" for i in range(n)],
            "session_id": [f"s{i}" for i in range(n)],
            "position": [1] * n,
            "clicked": values,
        }
    )


def _abandoned(control: int, treated: int, users: int) -> pl.DataFrame:
    """``control`` of ``users`` control users (arm A) abandon, ``treated`` of ``users``
    treated ones (arm B)."""
    a = [i >= control for i in range(users)]  # clicked = not abandoned
    b = [i >= treated for i in range(users)]
    return _one_session_log(["A"] * users + ["B"] * users, a + b)


def _welch_pieces(xb: np.ndarray, xa: np.ndarray, alpha: float = 0.05) -> dict[str, float]:
    """The means, variances of the means and Welch's critical value, by numpy/scipy."""
    v_t, v_c = xb.var(ddof=1) / len(xb), xa.var(ddof=1) / len(xa)
    df = (v_t + v_c) ** 2 / (v_t**2 / (len(xb) - 1) + v_c**2 / (len(xa) - 1))
    c = stats.t.ppf(1 - alpha / 2, df)
    return {"m_t": xb.mean(), "m_c": xa.mean(), "v_t": v_t, "v_c": v_c, "c": c}


def _fieller_by_hand(
    m_t: float, m_c: float, v_t: float, v_c: float, c: float
) -> tuple[float, float]:
    """The roots of (m_t - θ m_c)^2 = c^2 (v_t + θ^2 v_c), less 1."""
    # θ^2 (m_c^2 - c^2 v_c) - 2 θ m_t m_c + (m_t^2 - c^2 v_t) = 0
    qa, qb, qc = m_c**2 - c**2 * v_c, -2 * m_t * m_c, m_t**2 - c**2 * v_t
    disc = qb * qb - 4 * qa * qc
    return ((-qb - np.sqrt(disc)) / (2 * qa) - 1, (-qb + np.sqrt(disc)) / (2 * qa) - 1)


# ------------------------------------------------------------ 1. Fieller's interval
def test_fieller_worked_example() -> None:
    # m_t = 0.3, m_c = 0.2, v_t = 0.0009, v_c = 0.0004, c = 2:
    # a = 0.2^2 - 2^2 * 0.0004 = 0.04 - 0.0016 = 0.0384
    # D = 0.09 * 0.0004 + 0.04 * 0.0009 - 4 * 0.0009 * 0.0004 = 0.00007056, sqrt 0.0084
    # θ = (0.06 -+ 2 * 0.0084) / 0.0384 = 0.0432 / 0.0384, 0.0768 / 0.0384 = 1.125, 2
    low, high = fieller(*(np.array([v]) for v in (0.3, 0.2, 0.0009, 0.0004, 2.0)))
    assert (low[0], high[0]) == pytest.approx((0.125, 1.0), rel=1e-12)
    # each bound solves (m_t - θ m_c)^2 = c^2 (v_t + θ^2 v_c)
    for theta in (1.125, 2.0):
        assert (0.3 - theta * 0.2) ** 2 == pytest.approx(4 * (0.0009 + theta**2 * 0.0004))
    # the control mean within c standard errors of 0: unbounded, NaN
    low, high = fieller(*(np.array([v]) for v in (0.3, 0.03, 0.0009, 0.0004, 2.0)))
    assert np.isnan(low[0])
    assert np.isnan(high[0])


def _random_arms(rng: np.random.Generator, size: int) -> tuple[ArmMoments, ArmMoments]:
    """Control means of any sign and size (1e-6 to 1e6), treatment means that differ by
    a random effect, standard errors of the means from 2% to 80% of the control's."""
    zeros, ones = np.zeros(size), np.ones(size)

    def arm(mean: np.ndarray) -> ArmMoments:
        n = rng.integers(2, 500, size).astype(float)
        se = np.abs(control_mean) * rng.uniform(0.02, 0.8, size)
        return ArmMoments(n, mean, ones, se**2 * n, zeros, zeros)  # var(x) / n = se^2

    control_mean = rng.uniform(-2, 3, size) * 10.0 ** rng.integers(-6, 6, size)
    treatment_mean = control_mean * (1 + rng.normal(0, 0.6, size))
    return arm(treatment_mean), arm(control_mean)


@pytest.mark.parametrize("seed", range(5))
def test_relative_interval_excludes_0_exactly_when_the_absolute_one_does(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = 4000
    treatment, control = _random_arms(rng, size)
    welch = rng.random(size) < 0.5
    out = compare(treatment, control, welch, 0.05)
    bounded = ~np.isnan(out.relative_ci_low)
    assert np.array_equal(bounded, ~np.isnan(out.relative_ci_high))
    assert 0.2 < bounded.mean() < 0.95  # both kinds are drawn
    absolute = (out.ci_low > 0) | (out.ci_high < 0)
    relative = (out.relative_ci_low > 0) | (out.relative_ci_high < 0)
    assert 0.1 < absolute[bounded].mean() < 0.9  # significant and not
    assert np.array_equal(absolute[bounded], relative[bounded])
    # the interval holds the estimate
    inside = (out.relative_ci_low <= out.relative + 1e-12 * np.abs(out.relative))[bounded]
    assert inside.all()
    # unbounded exactly where a = m_c^2 - c^2 v_c <= 0: the test then rejects 0 only if
    # the set is all but an interval (never here where it holds the estimate's ratio)
    m_c, v_c = control.value, control.vxx / control.n
    crit = (out.ci_high - out.ci_low) / (2 * out.std_error)
    assert np.array_equal(~bounded, m_c**2 - crit**2 * v_c <= 0)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(-1e3, 1e3),
    st.floats(1e-3, 1e3),
    st.floats(1e-8, 1e2),
    st.floats(1e-8, 1e2),
    st.floats(0.5, 4.0),
)
def test_fieller_bounds_solve_the_quadratic(
    m_t: float, m_c: float, v_t: float, v_c: float, c: float
) -> None:
    low, high = fieller(*(np.array([v]) for v in (m_t, m_c, v_t, v_c, c)))
    if m_c**2 - c**2 * v_c <= 0:
        assert np.isnan(low[0])
        assert np.isnan(high[0])
        return
    delta_excludes_0 = abs(m_t - m_c) > c * np.sqrt(v_t + v_c)
    ratio_excludes_0 = low[0] > 0 or high[0] < 0
    if abs(abs(m_t - m_c) - c * np.sqrt(v_t + v_c)) > 1e-9 * (abs(m_t) + abs(m_c)):
        assert delta_excludes_0 == ratio_excludes_0
    for bound in (low[0], high[0]):
        theta = bound + 1
        lhs, rhs = (m_t - theta * m_c) ** 2, c**2 * (v_t + theta**2 * v_c)
        assert lhs == pytest.approx(rhs, rel=1e-6, abs=1e-9 * (m_t**2 + c**2 * v_t))


@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_ab_test_relative_interval_against_scipy_pieces(
    as_frame: Callable[[pl.DataFrame], Frame],
) -> None:
    # 16 of 2000 control users abandon, 7 of 2000 treated ones: p = 0.0599, the
    # absolute interval holds 0, and so does the relative one now (the delta method
    # gave [-0.950, -0.175], excluding 0)
    row = irm.ab_test(as_frame(_abandoned(16, 7, 2000)), ["abandonment"]).row(0, named=True)
    xa = np.r_[np.ones(16), np.zeros(1984)]
    xb = np.r_[np.ones(7), np.zeros(1993)]
    welch = stats.ttest_ind(xb, xa, equal_var=False)
    assert row["p_value"] == pytest.approx(welch.pvalue, rel=1e-12)
    assert round(row["p_value"], 4) == 0.0599
    ci = welch.confidence_interval(0.95)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-12)
    expected = _fieller_by_hand(**_welch_pieces(xb, xa))
    got = (row["relative_ci_low"], row["relative_ci_high"])
    assert got == pytest.approx(expected, rel=1e-12)
    assert round(got[0], 4) == -0.8906
    assert round(got[1], 4) == 0.0396
    assert row["relative"] == pytest.approx(7 / 16 - 1, rel=1e-15)  # the estimate stays


@pytest.mark.parametrize(
    ("control", "treated", "users", "expected"),
    [
        # 1 of 20 against 0 of 20: the control mean is within c standard errors of 0,
        # unbounded (the delta method gave [-1, -1], zero width, against p = 0.33)
        (1, 0, 20, (None, None)),
        # 4 of 20 against 1 of 20: Fieller's lower bound is below -1, cut at -1 for a
        # metric that cannot be negative (the delta method gave -1.38)
        (4, 1, 20, (-1.0, "fieller")),
        # a control mean of 0: no relative lift at all, as before
        (0, 3, 20, (None, None)),
    ],
)
def test_ab_test_relative_interval_edges(
    control: int, treated: int, users: int, expected: tuple[Any, Any]
) -> None:
    row = irm.ab_test(_abandoned(control, treated, users), ["abandonment"]).row(0, named=True)
    got = (row["relative_ci_low"], row["relative_ci_high"])
    if expected[1] == "fieller":
        xa = np.r_[np.ones(control), np.zeros(users - control)]
        xb = np.r_[np.ones(treated), np.zeros(users - treated)]
        low, high = _fieller_by_hand(**_welch_pieces(xb, xa))
        assert low < -1
        assert got == pytest.approx((-1.0, high), rel=1e-12)
    else:
        assert got == expected
    if control:
        assert row["relative"] == pytest.approx(treated / control - 1)


def test_relative_interval_agrees_with_the_test_on_random_logs() -> None:
    rng = np.random.default_rng(7)
    agree = 0
    for _ in range(12):
        users = int(rng.integers(20, 200))
        control, treated = (int(k) for k in rng.integers(1, users // 3, 2))
        out = irm.ab_test(_abandoned(control, treated, users), ["abandonment", "ctr"])
        for row in out.iter_rows(named=True):
            if row["relative_ci_low"] is None:
                continue
            absolute = row["ci_low"] > 0 or row["ci_high"] < 0
            relative = row["relative_ci_low"] > 0 or row["relative_ci_high"] < 0
            assert absolute == relative == (row["p_value"] < 0.05), row
            agree += 1
    assert agree > 12


# ----------------------------------------------------- 2. exact sums at any scale
@pytest.mark.parametrize("scale", [1e-12, 1e-9, 1e-6, 1.0, 1e6, 1e12])
@pytest.mark.parametrize("kind", KIND)
def test_time_to_first_click_equals_scipy_at_any_scale(scale: float, kind: str) -> None:
    rng = np.random.default_rng(0)
    rows: list[tuple[Any, ...]] = []
    values: dict[str, list[float]] = {}
    for arm, factor in (("A", 1.0), ("B", 1.3)):
        values[arm] = []
        for u in range(30):
            # two sessions per user: the user's value is the mean of the two
            times = rng.uniform(0, 1, 2) * scale * factor
            values[arm].append(times.mean())
            for s, t in enumerate(times):
                session = f"{arm}{u}-{s}"
                rows += [(arm, f"{arm}{u}", session, 1, False, 0.0)]
                rows += [(arm, f"{arm}{u}", session, 2, True, float(t))]
    log = pl.DataFrame(
        rows, schema=["arm", "user_id", "session_id", "position", "clicked", "ts"], orient="row"
    )
    frame = log.lazy() if kind == "LazyFrame" else log
    row = irm.ab_test(frame, ["time_to_first_click"], timestamp="ts").row(0, named=True)
    xa, xb = np.array(values["A"]), np.array(values["B"])
    welch = stats.ttest_ind(xb, xa, equal_var=False)
    ci = welch.confidence_interval(0.95)
    se = np.sqrt(xb.var(ddof=1) / 30 + xa.var(ddof=1) / 30)
    assert row["p_value"] == pytest.approx(welch.pvalue, rel=1e-12)
    assert row["std_error"] == pytest.approx(se, rel=1e-12)
    assert (row["mean"], row["control_mean"]) == pytest.approx((xb.mean(), xa.mean()), rel=1e-13)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-12)
    expected = _fieller_by_hand(**_welch_pieces(xb, xa))
    got = (row["relative_ci_low"], row["relative_ci_high"])
    assert got == pytest.approx(expected, rel=1e-10)


def test_a_scale_changes_no_bit_of_a_power_of_two_multiple() -> None:
    # the same log with its times multiplied by 2**-40: every result but the relative
    # ones (scale-free) is the first's times 2**-40, to the bit
    rng = np.random.default_rng(3)
    n = 40
    times = rng.uniform(0, 5, 2 * n)
    log = pl.DataFrame(
        {
            "arm": ["A"] * (2 * n) + ["B"] * (2 * n),
            "user_id": [f"u{i}" for i in range(2 * n) for _ in range(2)],
            "session_id": [f"s{i}" for i in range(2 * n) for _ in range(2)],
            "position": [1, 2] * (2 * n),
            "clicked": [False, True] * (2 * n),
            "ts": [v for t in times for v in (0.0, float(t))],
        }
    )
    ms = ["time_to_first_click"]
    one = irm.ab_test(log, ms, timestamp="ts").row(0, named=True)
    small = irm.ab_test(log.with_columns(pl.col("ts") * 2.0**-40), ms, timestamp="ts")
    tiny = small.row(0, named=True)
    for column in ("mean", "control_mean", "delta", "std_error", "ci_low", "ci_high"):
        assert tiny[column] == one[column] * 2.0**-40, column
    for column in ("relative", "relative_ci_low", "relative_ci_high", "p_value"):
        assert tiny[column] == one[column], column


# ------------------------------------------------ 3. a segment without an arm
@pytest.mark.parametrize("kind", KIND)
def test_a_segment_without_an_arm_is_refused(kind: str) -> None:
    base = _one_session_log(["A"] * 6 + ["B"] * 6, [True, False] * 6)
    # day 1: A's users u0, u1, u2 only; day 2: both arms; day 3: B's u9 .. u11 only
    day = [1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3]
    log = base.with_columns(day=pl.Series(day))
    frame = log.lazy() if kind == "LazyFrame" else log
    message = (
        "2 segment(s) by 'day' miss an arm of column 'arm': (day=1) has no user_id in "
        "arm 'B'; (day=3) has no user_id in arm 'A'; each segment compares its arms apart, "
        "with at least 2 units in each: leave those segments out (filter the log), or "
        "segment by other keys"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.ab_test(frame, ["ctr"], by="day")
    # the segment with both arms alone: compared as before
    kept = irm.ab_test(log.filter(pl.col("day") == 2), ["ctr"], by="day")
    assert kept["day"].to_list() == [2]


def test_three_arms_one_missing_in_a_segment_is_refused() -> None:
    arms = ["A"] * 4 + ["B"] * 4 + ["C"] * 2
    log = _one_session_log(arms, [True, False] * 5).with_columns(
        day=pl.Series(["x", "y"] * 4 + ["x", "x"])
    )
    message = (
        "1 segment(s) by 'day' miss an arm of column 'arm': (day='y') has no user_id "
        "in arm 'C'; each segment"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.ab_test(log, ["ctr"], by="day")


# ------------------------------------------------ 7. a split arm absent from the log
@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_a_split_arm_absent_from_the_log_is_refused(
    as_frame: Callable[[pl.DataFrame], Frame],
) -> None:
    log = _one_session_log(["A"] * 3 + ["B"] * 3, [True, False, True] * 2)
    message = (
        "the split names arm 'C', which is not in column 'arm' of the log (its arms: 'A', "
        "'B'); give the shares of the log's arms only, or, if arm 'C' ran, find why the log "
        "has none of its user_id values"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.ab_test(as_frame(log), ["ctr"], split={"A": 1, "B": 1, "C": 1})
    # the log's arms alone: the SRM check against scipy, one degree of freedom
    out = irm.ab_test(as_frame(log), ["ctr"], split={"A": 2, "B": 1})
    expected = stats.chisquare([3, 3], [4, 2]).pvalue
    assert out["srm_p_value"][0] == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------ 6. significant at its boundary
def test_significant_is_p_adjusted_at_most_alpha() -> None:
    log = _abandoned(16, 7, 2000)
    p = irm.ab_test(log, ["abandonment"], correction=None)["p_value"][0]
    at = irm.ab_test(log, ["abandonment"], correction=None, alpha=p)
    assert at["p_adjusted"][0] == p
    assert at["significant"][0] is True
    below = irm.ab_test(log, ["abandonment"], correction=None, alpha=float(np.nextafter(p, 0)))
    assert below["significant"][0] is False
    # holm over two metrics: p_adjusted as statsmodels', significant where <= alpha
    out = irm.ab_test(log, ["abandonment", "ctr"], correction="holm")
    adjusted = multipletests(out["p_value"].to_numpy(), method="holm")[1]
    assert out["p_adjusted"].to_list() == pytest.approx(adjusted, rel=1e-15)
    alpha = float(out["p_adjusted"].to_numpy().max())
    at = irm.ab_test(log, ["abandonment", "ctr"], correction="holm", alpha=alpha)
    assert at["significant"].to_list() == [True, True]


def test_intervals_are_not_adjusted_for_the_correction() -> None:
    log = _abandoned(16, 7, 2000)
    columns = ["ci_low", "ci_high", "relative_ci_low", "relative_ci_high"]
    plain = irm.ab_test(log, ["abandonment", "ctr"], correction=None).select(columns)
    held = irm.ab_test(log, ["abandonment", "ctr"], correction="bonferroni").select(columns)
    assert plain.equals(held)


# ------------------------------------------------ 9. nested key columns
_LOG9 = _one_session_log(["A"] * 3 + ["B"] * 3, [True, False, True] * 2).with_columns(day=1)


@pytest.mark.parametrize("kind", KIND)
@pytest.mark.parametrize(
    ("column", "change", "message"),
    [
        (
            "arm",
            pl.concat_list("arm"),
            "column 'arm' of the log has dtype List(String); the arm must be one value per "
            "row (a string or an integer), not a nested value: take one, e.g. "
            "pl.col('arm').list.first()",
        ),
        (
            "user_id",
            pl.struct(id="user_id"),
            "column 'user_id' of the log has dtype Struct({'id': String}); the unit must be "
            "one value per row (a string or an integer), not a nested value: take one, e.g. "
            "pl.col('user_id').struct.field('id')",
        ),
        (
            "session_id",
            pl.concat_list("session_id", "session_id").list.to_array(2),
            "column 'session_id' of the log has dtype Array(String, shape=(2,)); the session "
            "id must be one value per row (a string or an integer), not a nested value: "
            "take one, e.g. pl.col('session_id').arr.first()",
        ),
        (
            "day",
            pl.concat_list("day"),
            "column 'day' of the log has dtype List(Int32); a segment key must be one value "
            "per row (a string or an integer), not a nested value: take one, e.g. "
            "pl.col('day').list.first()",
        ),
    ],
)
def test_ab_test_refuses_nested_keys(
    kind: str, column: str, change: pl.Expr, message: str
) -> None:
    log = _LOG9.with_columns(change.alias(column))
    frame = log.lazy() if kind == "LazyFrame" else log
    with pytest.raises(ColumnTypeError, match=re.escape(message)):
        irm.ab_test(frame, ["ctr"], by="day")


# ------------------------------------------------ 4, 5, 8. the interleaving log
_IL = pl.DataFrame(
    {
        "session_id": ["s1", "s1", "s2", "s2", "s3", "s3"],
        "position": [1, 2, 1, 2, 1, 2],
        "team": ["A", "B", "B", "A", "A", "B"],
        "clicked": [1, 0, 1, 0, 1, 0],
        "day": [1, 1, 1, 1, 2, 2],
    }
)


@pytest.mark.parametrize("kind", KIND)
@pytest.mark.parametrize(
    ("case", "log", "options", "error", "message"),
    [
        (
            "null session",
            _IL.with_columns(session_id=pl.Series(["s1", "s1", None, None, "s3", "s3"])),
            {},
            InvalidValueError,
            "column 'session_id' of the log has null values; every impression needs a "
            "session_id: fill or drop them, e.g. .drop_nulls('session_id')",
        ),
        (
            "click of 5",
            _IL.with_columns(clicked=pl.Series([1, 0, 5, 0, 1, 0])),
            {},
            InvalidValueError,
            "column 'clicked' of the log has 1 value(s) other than 0 and 1, e.g. in session "
            "'s2'; a click is a flag: use True/False or 0/1",
        ),
        (
            "click of -1 in a segment",
            _IL.with_columns(clicked=pl.Series([1, 0, 1, 0, -1, 0])),
            {"by": "day"},
            InvalidValueError,
            "column 'clicked' of the log has 1 value(s) other than 0 and 1 (day=2), e.g. in "
            "session 's3'; a click is a flag: use True/False or 0/1",
        ),
        (
            "two items at one position",
            _IL.with_columns(position=pl.Series([1, 2, 1, 1, 1, 2])),
            {},
            DuplicateError,
            "column 'position' of the log: 1 impression(s) at a position another impression "
            "of their session holds, e.g. in session 's2'; each position shows one item: "
            "keep one row per position, e.g. .unique(['session_id', 'position'])",
        ),
        (
            "position 0",
            _IL.with_columns(position=pl.Series([0, 1, 1, 2, 1, 2])),
            {},
            InvalidValueError,
            "column 'position' of the log has 1 position(s) below 1, e.g. in session 's1'; "
            "positions start at 1 for the top: add 1 to 0-based positions, e.g. "
            "pl.col('position') + 1",
        ),
        (
            "text positions",
            _IL.with_columns(pl.col("position").cast(pl.String)),
            {},
            ColumnTypeError,
            "column 'position' of the log has dtype String; a position must be an integer "
            "(1 = top): cast it, e.g. pl.col('position').cast(pl.Int64)",
        ),
        (
            "empty log",
            _IL.head(0),
            {},
            InvalidValueError,
            "the log has no rows; interleaving_test needs one row per shown item (its "
            "'session_id', 'position', 'team' and 'clicked'): check the log, or the filter "
            "that emptied it",
        ),
        (
            "empty log with segments",
            _IL.head(0),
            {"by": "day"},
            InvalidValueError,
            "the log has no rows; interleaving_test needs one row per shown item",
        ),
        (
            "list team",
            _IL.with_columns(pl.concat_list("team")),
            {},
            ColumnTypeError,
            "column 'team' of the log has dtype List(String); the team must be one value per "
            "row (a string or an integer), not a nested value: take one, e.g. "
            "pl.col('team').list.first()",
        ),
        (
            "list session",
            _IL.with_columns(pl.concat_list("session_id")),
            {},
            ColumnTypeError,
            "column 'session_id' of the log has dtype List(String); the session id must be",
        ),
        (
            "list segment",
            _IL.with_columns(pl.concat_list("day")),
            {"by": "day"},
            ColumnTypeError,
            "column 'day' of the log has dtype List(Int64); a segment key must be one value",
        ),
    ],
)
def test_interleaving_bad_input(
    kind: str,
    case: str,
    log: pl.DataFrame,
    options: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    frame = log.lazy() if kind == "LazyFrame" else log
    with pytest.raises(error, match=re.escape(message)):
        _collect(irm.interleaving_test(frame, **options))


def test_interleaving_keeps_its_values_on_a_clean_log() -> None:
    # a null position on an item that was not shown (and not clicked) is still read
    log = pl.concat(
        [_IL, pl.DataFrame({"session_id": ["s1"], "position": [None], "team": ["A"],
                            "clicked": [0], "day": [1]}, schema=_IL.schema)]
    )  # fmt: skip
    out = irm.interleaving_test(log).row(0, named=True)
    assert (out["wins_a"], out["wins_b"], out["ties"], out["sessions"]) == (2, 1, 0, 3)
    assert out["p_value"] == stats.binomtest(2, 3, 0.5).pvalue
    assert out["preference"] == 2 / 3 - 0.5


def test_a_null_arm_says_an_arm() -> None:
    log = _one_session_log(["A", "A", "B", "B"], [True, False] * 2).with_columns(
        arm=pl.Series(["A", None, "B", "B"])
    )
    message = (
        "column 'arm' of the log has null values; every impression needs an arm: fill or "
        "drop them, e.g. .drop_nulls('arm')"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.ab_test(log, ["ctr"])


# ------------------------------------------------ 8. the CLI keeps data locations
def test_irm_ab_keeps_the_data_location_of_an_error(tmp_path: Path) -> None:
    log = _one_session_log(["A", "A", "B", "B"], [True, False, True, False])
    log = log.with_columns(clicked=pl.Series([2, 0, 1, 0]), day=pl.lit("d1"))
    log.write_csv(tmp_path / "log.csv")
    done = irm_in_process("ab", "log.csv", "-m", "ctr", "--by", "day", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        # the click's line (header line 1, its row line 2), where ab_test named its
        # session and segment: "log.csv: column 'clicked' of the log has 1 value(s) other
        # than 0 and 1 in session 's0' (day='d1', arm='A', user_id='u0'); ..."
        "irm: error: log.csv, line 2: column 'clicked' holds 2, not a click, true/false or "
        "1/0; fix or drop the line\n",
    )
    # a segment is a place in the data too; the split is shown as given
    log.with_columns(
        clicked=pl.Series([1, 0, 1, 0]), day=pl.Series(["d1", "d1", "d1", "d2"])
    ).write_csv(tmp_path / "seg.csv")
    done = irm_in_process("ab", "seg.csv", "-m", "ctr", "--by", "day", cwd=tmp_path)
    assert done.stderr.startswith(
        "irm: error: seg.csv: 1 segment(s) by 'day' miss an arm of column 'arm': (day='d2') "
        "has no user_id in arm 'A'; each segment"
    )
    done = irm_in_process("ab", "seg.csv", "-m", "ctr", "--split", "A=1", cwd=tmp_path)
    assert done.stderr == (
        "irm: error: seg.csv: arm 'B' of column 'arm' is not in the split {'A': 1.0}; give "
        "every arm its intended share\n"
    )
    # a keyword suggestion is still written as the command's flag
    only_a = log.filter(pl.col("arm") == "A").with_columns(clicked=pl.lit(1))
    only_a.write_csv(tmp_path / "one.csv")
    done = irm_in_process("ab", "one.csv", "-m", "ctr", cwd=tmp_path)
    assert done.returncode == 2
    assert "check the arm column (--arm COL) or the log" in done.stderr
