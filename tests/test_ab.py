"""A/B tests at the randomization unit: Welch = scipy, delta method = a hand-derived
variance and a bootstrap over units, SRM = scipy.stats.chisquare, correction =
statsmodels, bad input, segments and the ``irm ab`` command."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from contextlib import redirect_stderr
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from polars_irmetrics.io.files import sample_interactions_path

from .helpers import multipletests

Frame = pl.DataFrame | pl.LazyFrame
AS_FRAME: list[Callable[[pl.DataFrame], Frame]] = [lambda f: f, lambda f: f.lazy()]


def _log(units: list[tuple[str, str, list[tuple[int, int]]]]) -> pl.DataFrame:
    """An impression log: per (arm, user), sessions of (clicks, impressions); the clicks
    are on the top positions."""
    rows: dict[str, list[Any]] = {
        "arm": [], "user_id": [], "session_id": [], "position": [], "clicked": []
    }  # fmt: skip
    for arm, user, sessions in units:
        for s, (clicks, shown) in enumerate(sessions):
            for position in range(1, shown + 1):
                rows["arm"].append(arm)
                rows["user_id"].append(user)
                rows["session_id"].append(f"{user}-{s}")
                rows["position"].append(position)
                rows["clicked"].append(position <= clicks)
    return pl.DataFrame(rows)


def _random_log(seed: int, users: int = 120) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    units = []
    for u in range(users):
        arm = "A" if u % 2 else "B"
        rate = 0.25 if arm == "A" else 0.3
        sessions = [
            (int(rng.binomial(shown, rate)), shown)
            for shown in rng.integers(2, 11, rng.integers(1, 5))
        ]
        units.append((arm, f"u{u:03d}", sessions))
    return _log(units)


# --------------------------------------------------------- Welch's t-test = scipy's
@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_per_unit_means_use_welch_equal_to_scipy(
    as_frame: Callable[[pl.DataFrame], Frame],
) -> None:
    log = _random_log(1)
    names = ["abandonment", "click_mrr", "clicks_per_session"]
    out = irm.ab_test(as_frame(log), names, control="A", correction=None, alpha=0.1)
    sessions = irm.evaluate_online(log, names, by=["arm", "user_id"], per_session=True)
    per_user = sessions.group_by("arm", "user_id").agg(pl.col(names).mean())
    for name in names:
        row = out.filter(pl.col("metric") == name).row(0, named=True)
        treated = per_user.filter(pl.col("arm") == "B")[name].to_numpy()
        control = per_user.filter(pl.col("arm") == "A")[name].to_numpy()
        scipy = stats.ttest_ind(treated, control, equal_var=False)
        low, high = scipy.confidence_interval(confidence_level=0.9)
        assert row["method"] == "welch"
        assert (row["units"], row["control_units"]) == (len(treated), len(control))
        assert row["mean"] == pytest.approx(treated.mean(), rel=1e-12)
        assert row["control_mean"] == pytest.approx(control.mean(), rel=1e-12)
        assert row["delta"] / row["std_error"] == pytest.approx(scipy.statistic, rel=1e-9)
        assert row["p_value"] == pytest.approx(scipy.pvalue, rel=1e-9)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-9)
        assert row["p_adjusted"] == row["p_value"]  # correction=None


# ---------------------------------------------------------------- the delta method
# Arm A: users with (clicks, impressions) (1, 10), (3, 10), (2, 20); arm B: (2, 10),
# (4, 10), (6, 20). CTR_A = 6/40 = 0.15, CTR_B = 12/40 = 0.3.
WORKED = _log(
    [
        ("A", "a1", [(1, 10)]), ("A", "a2", [(3, 10)]), ("A", "a3", [(1, 10), (1, 10)]),
        ("B", "b1", [(2, 10)]), ("B", "b2", [(4, 10)]), ("B", "b3", [(6, 20)]),
    ]
)  # fmt: skip


def test_delta_method_variance_equals_the_hand_derived_formula() -> None:
    row = irm.ab_test(WORKED, ["ctr"]).row(0, named=True)
    # Var(R) = (s_xx - 2 R s_xy + R^2 s_yy) / (n * mean(y)^2), sample (co)variances.
    # A: x = 1, 3, 2 (mean 2), y = 10, 10, 20 (mean 40/3): s_xx = (1 + 1 + 0) / 2 = 1,
    #    s_yy = ((10/3)^2 + (10/3)^2 + (20/3)^2) / 2 = 100/3,
    #    s_xy = ((-1)(-10/3) + (1)(-10/3) + 0 (20/3)) / 2 = 0
    var_a = (1 - 2 * 0.15 * 0 + 0.15**2 * 100 / 3) / (3 * (40 / 3) ** 2)
    # B: x = 2, 4, 6 (mean 4): s_xx = (4 + 0 + 4) / 2 = 4, s_yy = 100/3,
    #    s_xy = ((-2)(-10/3) + 0 (-10/3) + 2 (20/3)) / 2 = 10
    var_b = (4 - 2 * 0.3 * 10 + 0.3**2 * 100 / 3) / (3 * (40 / 3) ** 2)
    assert var_a == pytest.approx(1.75 / 533.3333333333334, rel=1e-12)
    assert var_b == pytest.approx(1.0 / 533.3333333333334, rel=1e-12)
    se = np.sqrt(var_a + var_b)
    assert row["method"] == "delta"
    assert (row["mean"], row["control_mean"]) == pytest.approx((0.3, 0.15), rel=1e-12)
    assert row["delta"] == pytest.approx(0.15, rel=1e-12)
    assert row["relative"] == pytest.approx(1.0, rel=1e-12)
    assert row["std_error"] == pytest.approx(se, rel=1e-12)
    z = stats.norm.ppf(0.975)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.15 - z * se, 0.15 + z * se))
    assert row["p_value"] == pytest.approx(2 * stats.norm.sf(0.15 / se), rel=1e-12)
    # relative lift, Fieller: (0.3 - θ 0.15)^2 <= z^2 (var_b + θ^2 var_a), θ = 1 + lift
    a = 0.15**2 - z**2 * var_a
    root = z * np.sqrt(0.3**2 * var_a + 0.15**2 * var_b - z**2 * var_a * var_b)
    fieller = ((0.3 * 0.15 - root) / a - 1.0, (0.3 * 0.15 + root) / a - 1.0)
    relative = (row["relative_ci_low"], row["relative_ci_high"])
    assert relative == pytest.approx(fieller, rel=1e-12)
    assert relative[0] > 0  # as ci_low: the delta method's 1 - z * se_rel was -0.6


def test_delta_method_agrees_with_a_bootstrap_over_units() -> None:
    log = _random_log(7, users=400)
    out = irm.ab_test(log, ["ctr"]).row(0, named=True)
    per_user = log.group_by("arm", "user_id").agg(
        pl.col("clicked").sum().alias("x"), pl.len().alias("y")
    )
    rng = np.random.default_rng(11)
    boot_var = 0.0
    for arm in ("A", "B"):
        unit = per_user.filter(pl.col("arm") == arm)
        x, y = unit["x"].to_numpy(), unit["y"].to_numpy()
        draws = rng.integers(0, len(x), (4000, len(x)))  # 4000 resamples of the units
        boot_var += (x[draws].sum(axis=1) / y[draws].sum(axis=1)).var(ddof=1)
    # 4000 resamples estimate a variance to about sqrt(2/4000) = 2.2 % (one standard
    # error); 10 % is 4.5 of them, and the delta method's own error is O(1/n)
    assert out["std_error"] ** 2 == pytest.approx(boot_var, rel=0.10)


# ----------------------------------------------------- SRM, correction, shape, segments
def test_srm_equals_scipy_chisquare_and_warns() -> None:
    units = [("A", f"a{i}", [(1, 3)]) for i in range(34)]
    units += [("B", f"b{i}", [(i % 2, 3)]) for i in range(6)]
    out = irm.ab_test(_log(units), ["ctr"], split={"A": 0.6, "B": 0.4}, srm_alpha=0.01)
    expected = stats.chisquare([34, 6], [24, 16]).pvalue
    assert out["srm_p_value"].item() == pytest.approx(expected, rel=1e-12)
    assert out["warnings"].item().to_list() == [
        f"sample ratio mismatch: user_id per arm {{A: 34, B: 6}} against the intended split "
        f"{{A: 0.6, B: 0.4}}, chi-square p = {expected:.3g} < 0.01; the assignment or the "
        "logging is broken: do not trust this comparison"
    ]
    # equal shares by default
    even = irm.ab_test(_log(units), ["ctr"])["srm_p_value"].item()
    assert even == pytest.approx(stats.chisquare([34, 6]).pvalue, rel=1e-12)


def _flat(metric: str, delta: str) -> str:
    return (
        f"{metric}: no unit (user_id) varies within its arm (standard error 0), so the "
        f"p-value of 0 and the interval [{delta}, {delta}] rest on 2 and 2 units without "
        "spread, not on evidence; a difference without variance cannot be tested: collect "
        "more units before reading it as certain"
    )


@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_a_difference_without_variance_is_named(as_frame: Callable[[pl.DataFrame], Frame]) -> None:
    """Arm A never clicks, arm B always: p 0 and a point interval (scipy's ttest_ind
    gives p 0 too, with a RuntimeWarning), rested on no spread: named per metric; a
    metric with spread, or none without a difference, is not."""
    log = pl.DataFrame(
        {
            "arm": ["A", "A", "B", "B"],
            "user_id": ["a1", "a2", "b1", "b2"],
            "session_id": ["s1", "s2", "s3", "s4"],
            "position": [1] * 4,
            "clicked": [False, False, True, True],
        }
    )
    out = irm.ab_test(as_frame(log), ["abandonment", "ctr"])
    assert out["p_value"].to_list() == [0.0, 0.0]
    assert out["warnings"].to_list() == [[_flat("abandonment", "-1")], [_flat("ctr", "1")]]
    # every unit clicks in both arms: no difference, p 1, and (since round 19) named as
    # resting on no spread too: scipy's ttest_ind gives NaN there, and a p of 1 without
    # variance is no more evidence of no effect than a p of 0 is of one
    # (tests/test_agreement_stats_round19.py)
    same = irm.ab_test(as_frame(log.with_columns(clicked=pl.lit(True))), ["ctr"])
    assert same["p_value"].to_list() == [1.0]
    assert same["warnings"].to_list() == [
        [
            "ctr: every unit (user_id) of both arms has the same value (standard error 0), "
            "so the p-value of 1 and the interval [0, 0] rest on 2 and 2 units without "
            "spread, not on evidence of no difference; a comparison without variance cannot "
            "be tested: collect more units before reading it as no effect"
        ]
    ]


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "fdr_bh"])
def test_correction_across_metrics_equals_statsmodels(correction: str) -> None:
    log = _random_log(3)
    names = ["ctr@5", "abandonment", "click_mrr", "session_ctr@3", "mean_click_position"]
    out = irm.ab_test(log, names, correction=correction)  # type: ignore[arg-type]
    assert out["metric"].to_list() == names
    expected = multipletests(out["p_value"].to_numpy(), method=correction)[1]
    assert out["p_adjusted"].to_list() == expected.tolist()
    assert out["significant"].to_list() == (expected < 0.05).tolist()


def test_result_columns_and_three_arms() -> None:
    log = pl.concat(
        [_random_log(5), _random_log(6).filter(pl.col("arm") == "B").with_columns(
            pl.lit("C").alias("arm"), pl.col("user_id") + "c")]
    )  # fmt: skip
    out = irm.ab_test(log, ["ctr", "abandonment"])
    assert out.columns == [
        "metric", "arm", "control", "method", "units", "control_units", "mean",
        "control_mean", "delta", "relative", "std_error", "ci_low", "ci_high",
        "relative_ci_low", "relative_ci_high", "p_value", "p_adjusted", "significant",
        "higher_is_better", "srm_p_value", "warnings",
    ]  # fmt: skip
    # the metric's declared direction beside its test: abandonment is lower-is-better
    assert out.select("metric", "higher_is_better").unique(maintain_order=True).rows() == [
        ("ctr", True), ("abandonment", False)
    ]  # fmt: skip
    assert out.select("metric", "arm").rows() == [
        ("ctr", "B"), ("ctr", "C"), ("abandonment", "B"), ("abandonment", "C")
    ]  # fmt: skip
    assert set(out["control"]) == {"A"}


def test_segments_equal_separate_tests() -> None:
    log = _random_log(9, users=200).with_columns(
        pl.when(pl.col("user_id").str.slice(1).cast(pl.Int64) < 100)
        .then(pl.lit("mobile"))
        .otherwise(pl.lit("desktop"))
        .alias("device")
    )
    out = irm.ab_test(log, ["ctr", "abandonment"], by="device", correction=None)
    assert out["device"].to_list() == ["desktop", "mobile", "desktop", "mobile"]
    for device in ("desktop", "mobile"):
        alone = irm.ab_test(log.filter(pl.col("device") == device), ["ctr", "abandonment"],
                            correction=None)  # fmt: skip
        mine = out.filter(pl.col("device") == device).drop("device")
        assert mine.select("metric", "arm", "units", "control_units").equals(
            alone.select("metric", "arm", "units", "control_units")
        )
        for column in ("mean", "control_mean", "std_error", "ci_low", "p_value", "srm_p_value"):
            # polars' variance of a group may round the last bit differently
            assert mine[column].to_list() == pytest.approx(alone[column].to_list(), rel=1e-12)


def test_the_sample_shows_a_ctr_lift() -> None:
    out = irm.ab_test(pl.scan_parquet(sample_interactions_path()), ["ctr@10", "abandonment"])
    ctr = out.row(0, named=True)
    assert (ctr["metric"], ctr["arm"], ctr["units"], ctr["control_units"]) == (
        "ctr@10", "B", 286, 314
    )  # fmt: skip
    assert ctr["significant"]
    assert ctr["delta"] > 0
    assert ctr["srm_p_value"] == pytest.approx(stats.chisquare([314, 286]).pvalue)


# ------------------------------------------------------------------------- bad input
TWO_ARMS = _log([("A", "a1", [(1, 3)]), ("A", "a2", [(0, 3)]),
                 ("B", "b1", [(2, 3)]), ("B", "b2", [(1, 3)]), ("B", "b3", [(0, 3)])])  # fmt: skip


def _bad(error: type[Exception], message: str) -> Any:
    return pytest.raises(error, match="^" + re.escape(message) + "$")


@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_an_arm_with_one_unit(as_frame: Callable[[pl.DataFrame], Frame]) -> None:
    log = TWO_ARMS.filter(~pl.col("user_id").is_in(["b2", "b3"]))
    with _bad(
        InvalidValueError,
        "arm 'B' has 1 unit(s) with a value of 'ctr'; comparing arms needs at least 2 "
        "units in each: check the 'arm' column, or leave the metric out",
    ):
        irm.ab_test(as_frame(log), ["ctr"])


@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_a_unit_in_two_arms(as_frame: Callable[[pl.DataFrame], Frame]) -> None:
    # b1 also shows up in arm A: reported and left out by default, an error when strict
    log = pl.concat([TWO_ARMS, _log([("A", "b1", [(0, 3)])])])
    row = irm.ab_test(as_frame(log), ["ctr"]).row(0, named=True)
    assert row["warnings"] == [
        "1 user_id value(s) appear in more than one arm (e.g. 'b1' in 'A' and 'B'); they "
        "are left out of the comparison (strict=True raises instead)"
    ]
    assert (row["units"], row["control_units"]) == (2, 2)  # b2, b3 against a1, a2
    assert row["mean"] == (1 + 0) / 6  # b1 is left out
    with _bad(
        InvalidValueError,
        "1 user_id value(s) appear in more than one arm of column 'arm' (e.g. 'b1' in 'A' "
        "and 'B'); randomization by 'user_id' is broken: fix the assignment, or pass "
        "strict=False to leave those units out with a warning",
    ):
        irm.ab_test(as_frame(log), ["ctr"], strict=True)


BAD_OPTIONS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    (
        "no control",
        {"control": "control"},
        InvalidValueError,
        "control arm 'control' is not in column 'arm' of the log (its arms: 'A', 'B'); "
        "name the control arm with control=...",
    ),
    (
        "missing arm column",
        {"arm": "variant"},
        ColumnNotFoundError,
        "column 'variant' not found in the log (its columns: 'arm', 'user_id', 'session_id', "
        "'position', 'clicked'); name the experiment's columns, e.g. arm='variant', "
        "unit='user_id'",
    ),
    (
        "split without an arm",
        {"split": {"A": 0.5}},
        InvalidValueError,
        "arm 'B' of column 'arm' is not in the split {'A': 0.5}; give every arm its intended "
        "share",
    ),
    (
        "negative share",
        {"split": {"A": 0.5, "B": -1}},
        InvalidValueError,
        "split['B'] must be a positive, finite share, got -1",
    ),
    (
        "infinite share",  # inf / (inf + 1) is NaN for itself: every SRM p-value NaN
        {"split": {"A": float("inf"), "B": 1}},
        InvalidValueError,
        "split['A'] must be a positive, finite share, got inf",
    ),
    (
        "NaN share",
        {"split": {"A": float("nan"), "B": 1}},
        InvalidValueError,
        "split['A'] must be a positive, finite share, got nan",
    ),
    (
        "alpha of 1",
        {"alpha": 1},
        InvalidValueError,
        "alpha must be a number in (0, 1), e.g. 0.05; got 1",
    ),
    (
        "control not text",  # integer arms are named as text: the fix says so
        {"control": 1},
        InvalidValueError,
        "control must be the control arm's name as text, got 1: the arms are named as text "
        "whatever the column's dtype, e.g. control='1'",
    ),
    (
        "arm is the unit",
        {"unit": "arm"},
        InvalidValueError,
        "arm and unit name the same column 'arm'; the unit is what was randomized into "
        "arms, e.g. unit='user_id'",
    ),
    (
        "unknown correction",
        {"correction": "sidak"},
        InvalidValueError,
        "correction='sidak' is not a correction; choose 'bonferroni', 'holm', 'holm-sidak', "
        "'fdr_bh', 'fdr_by' or None",
    ),
]


@pytest.mark.parametrize("as_frame", AS_FRAME)
@pytest.mark.parametrize(
    ("case", "options", "error", "message"), BAD_OPTIONS, ids=[c[0] for c in BAD_OPTIONS]
)
def test_bad_options(
    as_frame: Callable[[pl.DataFrame], Frame],
    case: str,
    options: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with _bad(error, message):
        irm.ab_test(as_frame(TWO_ARMS), ["ctr"], **options)


def test_a_metric_undefined_in_an_arm() -> None:
    log = TWO_ARMS.with_columns(pl.when(pl.col("arm") == "A").then(False).otherwise(
        pl.col("clicked")).alias("clicked"))  # fmt: skip
    with _bad(
        InvalidValueError,
        "metric 'mean_click_position' is undefined in arm 'A': its denominator is 0 in every "
        "unit (no clicks, or no impressions in the top k); leave it out",
    ):
        irm.ab_test(log, ["mean_click_position"])


# ------------------------------------------------------------------------------ the CLI
def test_cli_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ab", "--sample", "-m", "ctr@10", "-m", "abandonment", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = irm.ab_test(pl.scan_parquet(sample_interactions_path()), ["ctr@10", "abandonment"])
    assert [row["metric"] for row in printed] == ["ctr@10", "abandonment"]
    assert [row["p_adjusted"] for row in printed] == expected["p_adjusted"].to_list()
    assert main(["ab", "--sample"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:4] == ["metric", "arm", "method", "units"]
    assert [line.split()[0] for line in table[2:]] == [
        "ctr@10", "abandonment", "click_mrr", "sat_click_rate"
    ]  # fmt: skip


def test_cli_errors_name_the_log(tmp_path: Any) -> None:
    path = tmp_path / "log.parquet"
    TWO_ARMS.write_parquet(path)
    stderr = io.StringIO()
    with redirect_stderr(stderr):
        assert main(["ab", str(path), "-m", "ctr", "--control", "C"]) == 2
    assert stderr.getvalue() == (
        f"irm: error: {path}: control arm 'C' is not in column 'arm' of the log (its arms: "
        "'A', 'B'); name the control arm with --control ARM\n"
    )
    mixed = tmp_path / "mixed.csv"
    pl.concat([TWO_ARMS, _log([("A", "b1", [(0, 3)])])]).write_csv(mixed)
    stderr = io.StringIO()
    with redirect_stderr(stderr):
        assert main(["ab", str(mixed), "-m", "ctr", "--format", "csv", "-o",
                     str(tmp_path / "out.csv")]) == 0  # fmt: skip
    assert stderr.getvalue().startswith(f"irm: warning: {mixed}: 1 user_id value(s) appear")
    stderr = io.StringIO()
    with redirect_stderr(stderr):
        assert main(["ab", str(mixed), "-m", "ctr", "--strict"]) == 2
    assert stderr.getvalue().startswith(f"irm: error: {mixed}: 1 user_id value(s) appear")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--alpha", "2"], "alpha must be a number in (0, 1), e.g. 0.05; got 2.0"),
        (["--unit", "arm"], "arm and unit name the same column 'arm'; the unit is what was "
                            "randomized into arms, e.g. --unit user_id"),
        (["-m", "nosuch"], "unknown metric 'nosuch'"),
    ],
)  # fmt: skip
def test_cli_option_errors_name_no_file(tmp_path: Any, flags: list[str], message: str) -> None:
    """An option bad whatever the log is refused before the log is read: its one line
    names no file (the log's path led it, as if the log were at fault)."""
    path = tmp_path / "log.parquet"
    TWO_ARMS.write_parquet(path)
    for source in ([str(path)], ["--sample"]):
        stderr = io.StringIO()
        with redirect_stderr(stderr):
            assert main(["ab", *source, *flags]) == 2
        line = stderr.getvalue()
        assert line.startswith(f"irm: error: {message}"), line
        assert line.count("\n") == 1
        assert str(path) not in line
        assert "interactions.parquet" not in line


def test_a_ratio_constant_on_every_unit_has_no_spread() -> None:
    # mean_click_position per unit is x / y (positions summed over clicks): arm A's
    # users click only at position 3 (or never), arm B's at 1 and 2 (1.5 each): both
    # ratios are the same on every unit, so the delta-method variance is exactly 0,
    # which its three terms once gave as -3e-16 (a NaN standard error, then a refusal)
    rows, session = [], 0
    for arm in ("A", "B"):
        for user in range(6):
            for s in range(2):
                session += 1
                click = (3 if user % 2 else None) if arm == "A" else 1 + (user + s) % 2
                rows += [(arm, f"{arm}{user}", f"s{session}", p, p == click) for p in (1, 2, 3)]
    log = pl.DataFrame(
        rows, schema=["arm", "user_id", "session_id", "position", "clicked"], orient="row"
    )
    out = irm.ab_test(log, ["mean_click_position"]).row(0, named=True)
    assert (out["control_mean"], out["mean"], out["delta"]) == (3.0, 1.5, -1.5)
    assert out["std_error"] == 0.0
    assert out["p_value"] == 0.0  # a difference with no spread (the documented rule)
