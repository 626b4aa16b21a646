"""Round 6 of "an option a metric does not use is refused, never ignored" and "no number
is silently wrong", in the off-policy, prediction and online wings:

* the off-policy intervals' ``n_bootstrap=``, ``seed=`` and ``ci_method=`` without
  ``ci=``, and ``n_bootstrap=`` and ``seed=`` beside ``ci_method="normal"``;
* a bootstrap interval of a small log: a Poisson resample that draws no row gave NaN
  bounds (1.8 % of the resamples of a 4-row log, so any ``n_bootstrap >= 100``); it is
  skipped for the next draw now, and a resample that still gives NaN warns;
* ``positive_label=`` with only rating metrics (rmse...);
* ``dwell=``, ``converted=``, ``timestamp=`` with click metrics that read none of them;
* an off-policy ``position=`` naming no column of the log.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, IrmWarning

#: the small policies below take actions some logs never show: not what is tested here
pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.SupportWarning")

# --- the off-policy intervals' options -------------------------------------------------

#: four rounds; contributions w r = 1.8, 0, 1.8, 0 (ips 0.9); every action is logged
LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4],
        "action": ["a", "a", "b", "a"],
        "reward": [1.0, 0.0, 1.0, 0.0],
        "pscore": [0.5, 0.5, 0.5, 0.5],
    }
)
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3, 4, 4],
        "action": ["a", "b"] * 4,
        "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9, 0.3, 0.7],
    }
)

_DROP = "(an option no metric reads would change nothing)"


def _without_ci(name: str, value: object, what: str) -> str:
    return (
        f"{name}={value!r} is not read by metric 'ips' without ci=: it sets {what}, and no "
        f"interval is asked for; drop {name}= {_DROP}, or pass ci= (e.g. ci=0.95 for a 95% "
        "interval)"
    )


def _with_normal(name: str, value: object) -> str:
    return (
        f"{name}={value!r} is not read by metric 'ips' with ci_method='normal': the normal "
        f"interval is a closed form, nothing is resampled; drop {name}= {_DROP}, or pass "
        "ci_method='bootstrap' (the default)"
    )


UNREAD_INTERVAL = [
    pytest.param(
        {"n_bootstrap": 50},
        _without_ci("n_bootstrap", 50, "the bootstrap interval's resamples"),
        id="n_bootstrap-without-ci",
    ),
    pytest.param(
        {"seed": 7}, _without_ci("seed", 7, "the bootstrap interval's draws"), id="seed-without-ci"
    ),
    pytest.param(
        {"ci_method": "normal"},
        _without_ci("ci_method", "normal", "how an interval is computed"),
        id="ci_method-without-ci",
    ),
    pytest.param(
        {"ci": 0.9, "ci_method": "normal", "n_bootstrap": 50},
        _with_normal("n_bootstrap", 50),
        id="n_bootstrap-with-normal",
    ),
    pytest.param(
        {"ci": 0.9, "ci_method": "normal", "seed": 7},
        _with_normal("seed", 7),
        id="seed-with-normal",
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), UNREAD_INTERVAL)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_an_unread_interval_option_is_refused(
    kwargs: dict[str, Any], message: str, lazy: bool
) -> None:
    log = LOG.lazy() if lazy else LOG
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(log, ["ips"], policy=POLICY, **kwargs)


@pytest.mark.parametrize(("kwargs", "message"), UNREAD_INTERVAL[:2])
def test_an_unread_interval_option_is_refused_out_of_core(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(LOG, ["ips"], policy=POLICY, buckets=2, **kwargs)


def test_an_unread_interval_option_is_refused_for_slates() -> None:
    log = pl.DataFrame(
        {
            "round_id": [1, 1, 2, 2],
            "position": [1, 2, 1, 2],
            "reward": [1.0, 0.0, 1.0, 1.0],
            "pscore": [0.25] * 4,
        }
    )
    pi = log.select("round_id", "position", pscore=pl.Series([0.5, 0.5, 0.125, 0.125]))
    message = "n_bootstrap=50 is not read by metric 'slate_ips' without ci=: it sets"
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(log, ["slate_ips"], policy=pi, n_bootstrap=50)


def test_interval_options_that_are_read_still_evaluate() -> None:
    # a pin of what was already right: each option where an interval reads it
    boot = irm.evaluate(LOG, ["ips"], policy=POLICY, ci=0.9, n_bootstrap=50, seed=7)
    assert boot.columns[:4] == ["num_rows", "ips", "ips_lower", "ips_upper"]
    normal = irm.evaluate(LOG, ["ips"], policy=POLICY, ci=0.9, ci_method="normal")
    assert normal["ips_lower"].item() < 0.9 < normal["ips_upper"].item()


# --- a bootstrap interval of a small log: never a NaN in silence -------------------------


@pytest.mark.parametrize("n_bootstrap", [100, 1000])
@pytest.mark.parametrize("buckets", ["auto-memory", 2], ids=["one-plan", "out-of-core"])
def test_a_small_log_has_a_bootstrap_interval(n_bootstrap: int, buckets: int | str) -> None:
    # obp's bootstrap (4 rows drawn with replacement) gives means k * 1.8 / 4 with k
    # ~ Binomial(4, 1/2): 0 and 1.8 each 1/16 > 5 %, so its 90 % interval is [0, 1.8]
    out = irm.evaluate(
        LOG, ["ips"], policy=POLICY, ci=0.9, n_bootstrap=n_bootstrap, buckets=buckets
    )
    assert out.select("ips", "ips_lower", "ips_upper").row(0) == (0.9, 0.0, 1.8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_one_row_log_has_the_point_interval(seed: int) -> None:
    # every resample of one row (drawn at least once) is that row: the interval is its
    # contribution 1.8; an empty resample (37 % of Poisson draws) used to make it NaN
    one = LOG.head(1)
    out = irm.evaluate(one, ["ips", "snips"], policy=POLICY, ci=0.9, seed=seed)
    assert out.select("ips_lower", "ips_upper").row(0) == (1.8, 1.8)
    assert out.select("snips_lower", "snips_upper").row(0) == (1.0, 1.0)


def test_groups_of_one_row_beside_a_large_one() -> None:
    # small groups are redrawn, a large group of the same batch keeps its draws
    big = pl.DataFrame(
        {
            "round_id": range(10, 210),
            "action": ["a"] * 200,
            "reward": [float(i % 3 == 0) for i in range(200)],
            "pscore": [0.5] * 200,
            "day": [0] * 200,
        }
    )
    big_pi = pl.DataFrame({"round_id": range(10, 210), "action": ["a"] * 200, "prob": [1.0] * 200})
    small = LOG.head(2).with_columns(day=pl.Series([1, 2]))
    log = pl.concat([big, small])
    pi = pl.concat([big_pi, POLICY.filter(pl.col("round_id") <= 2)])
    out = irm.evaluate(log, ["ips"], policy=pi, by="day", ci=0.9, n_bootstrap=200)
    alone = irm.evaluate(big, ["ips"], policy=big_pi, by="day", ci=0.9, n_bootstrap=200)
    assert out.filter(pl.col("day") == 0).select("ips_lower", "ips_upper").row(0) == (
        alone.select("ips_lower", "ips_upper").row(0)
    )
    assert out.filter(pl.col("day") > 0).select("ips_lower", "ips_upper").rows() == [
        (1.8, 1.8),
        (0.0, 0.0),
    ]


def test_a_one_round_slate_log_has_the_point_interval() -> None:
    # one round: every resample holding it gives the estimates themselves; without it
    # slate_sniips was 0 (a position no round has adds 0) and slate_snips NaN
    log = pl.DataFrame(
        {"round_id": [1, 1], "position": [1, 2], "reward": [1.0, 0.0], "pscore": [0.25] * 2}
    )
    pi = log.select("round_id", "position", pscore=pl.Series([0.5, 0.5]))
    log = log.with_columns(pscore_item_position=pl.lit(0.5))
    pi = pi.with_columns(pscore_item_position=pl.lit(0.25))
    metrics = ["slate_snips", "slate_sniips"]
    out = irm.evaluate(log, metrics, policy=pi, ci=0.9, n_bootstrap=200)
    for label in metrics:
        value = out[label].item()
        assert out.select(f"{label}_lower", f"{label}_upper").row(0) == (value, value)


def test_a_resample_without_weight_warns_that_the_interval_is_nan() -> None:
    # round 2's weight is 0: a resample of it alone has a self-normalised estimate 0 / 0
    log = pl.DataFrame(
        {"round_id": [1, 2], "action": ["a", "b"], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
    )
    pi = pl.DataFrame(
        {"round_id": [1, 1, 2, 2], "action": ["a", "b"] * 2, "prob": [1.0, 0.0, 1.0, 0.0]}
    )
    message = (
        "metric 'snips': 10 of the 20 bootstrap resamples give no number (NaN: a "
        "self-normalised estimate of a resample whose rows all have weight 0 is 0 / 0"
    )
    with pytest.warns(IrmWarning, match=re.escape(message)):
        out = irm.evaluate(log, ["snips"], policy=pi, ci=0.9, n_bootstrap=20)
    assert np.isnan(out["snips_lower"].item())
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrmWarning)  # ips has a number in every resample
        out = irm.evaluate(log, ["ips"], policy=pi, ci=0.9, n_bootstrap=20)
    assert out.select("ips_lower", "ips_upper").row(0) == (0.0, 2.0)


# --- prediction metrics: positive_label= ------------------------------------------------

REG = pl.DataFrame({"label": [1.0, 2.0, 3.0], "prediction": [1.5, 2.0, 2.5]})


@pytest.mark.parametrize("metrics", [["rmse"], ["mae", "r2"]])
def test_positive_label_with_only_rating_metrics_is_refused(metrics: list[str]) -> None:
    shown = ", ".join(repr(m) for m in metrics)
    noun = "metric" if len(metrics) == 1 else "metrics"
    message = (
        f"positive_label=2 is not read by {noun} {shown}: a rating metric reads the label "
        "as a number, and only the binary metrics (auc, pr_auc, gauc, logloss, ne, brier, "
        "calibration, ece) read a positive label; drop positive_label= (an option no "
        "metric reads would change nothing), or evaluate a binary metric"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(REG, metrics, positive_label=2)
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(REG.lazy(), metrics, positive_label=2)


def test_positive_label_read_by_a_binary_metric_still_evaluates() -> None:
    # a pin of what was already right: auc reads it, beside rmse too
    table = pl.DataFrame({"label": [0, 2, 2, 0], "prediction": [0.1, 0.8, 0.4, 0.3]})
    out = irm.evaluate(table, ["rmse", "auc"], positive_label=2)
    assert out["auc"].item() == 1.0


# --- click metrics: dwell=, converted=, timestamp= --------------------------------------

CLICKS = pl.DataFrame(
    {
        "session_id": [1, 1, 2, 2],
        "user_id": [1, 1, 2, 2],
        "arm": ["A", "A", "B", "B"],
        "position": [1, 2, 1, 2],
        "clicked": [1, 0, 0, 1],
        "dw": [40.0, None, None, 5.0],
    }
)
_EVAL = {"query_id": "session_id", "rank": "position"}
_READERS = {
    "dwell": "sat_click_rate and the satisfied-click signal (click_ndcg, click_precision and "
    "click_mrr with signal='satisfied') read the dwell",
    "converted": "conversion_rate reads the conversion flag",
    "timestamp": "time_to_first_click reads the impressions' time",
}


def _unread(role: str, metrics: list[str], value: str = "'dw'") -> str:
    shown = ", ".join(repr(m) for m in metrics)
    noun = "metric" if len(metrics) == 1 else "metrics"
    return (
        f"{role}={value} is not read by {noun} {shown}: only {_READERS[role]}; drop {role}= "
        f"{_DROP}, or evaluate a metric that reads it"
    )


@pytest.mark.parametrize("role", ["dwell", "converted", "timestamp"])
@pytest.mark.parametrize("metric", ["ctr", "abandonment", "click_mrr", "clicks_per_session"])
def test_an_unread_click_column_is_refused_by_evaluate(role: str, metric: str) -> None:
    # the column named may be in the log (dw) or not (missing): refused either way
    for name in ("dw", "missing"):
        with pytest.raises(
            InvalidValueError, match=re.escape(_unread(role, [metric], repr(name)))
        ):
            irm.evaluate(CLICKS, [metric], **_EVAL, **{role: name})  # type: ignore[arg-type]


@pytest.mark.parametrize("role", ["dwell", "converted", "timestamp"])
def test_an_unread_click_column_is_refused_by_evaluate_online(role: str) -> None:
    metrics = ["ctr", "abandonment"]
    with pytest.raises(InvalidValueError, match=re.escape(_unread(role, metrics))):
        irm.evaluate_online(CLICKS, metrics, **{role: "dw"})  # type: ignore[arg-type]


def test_an_unread_click_column_is_refused_by_ab_test_and_click_metric() -> None:
    with pytest.raises(InvalidValueError, match=re.escape(_unread("dwell", ["ctr"]))):
        irm.ab_test(CLICKS, ["ctr"], dwell="dw")
    with pytest.raises(InvalidValueError, match=re.escape(_unread("dwell", ["ctr"]))):
        irm.click_metric("ctr", dwell="dw")
    expr = _unread("timestamp", ["ctr"], "<a polars expression>")
    with pytest.raises(InvalidValueError, match=re.escape(expr)):
        irm.click_metric("ctr", timestamp=pl.col("ts"))


def test_a_click_column_a_metric_reads_is_still_read() -> None:
    # pins of what was already right: sat_click_rate reads dwell=, and refuses it missing
    out = irm.evaluate_online(CLICKS, ["ctr", "sat_click_rate"], dwell="dw")
    assert out["sat_click_rate"].item() == 0.5
    with pytest.raises(ColumnNotFoundError, match="column 'missing' not found in the log"):
        irm.evaluate_online(CLICKS, ["sat_click_rate"], dwell="missing")
    assert irm.click_metric("sat_click_rate", dwell="dw") is not None


# --- off-policy position= ---------------------------------------------------------------


@pytest.mark.parametrize("buckets", ["auto-memory", 2], ids=["one-plan", "out-of-core"])
def test_a_position_naming_no_column_is_refused(buckets: int | str) -> None:
    message = (
        "position='slot' names no column of the log (its columns: 'round_id', 'action', "
        "'reward', 'pscore'); position= names the log's slot column (several logged "
        "actions per round): name the column the log has, or drop position= for a log of "
        "one action per round"
    )
    with pytest.raises(ColumnNotFoundError, match=re.escape(message)):
        irm.evaluate(LOG, ["ips"], policy=POLICY, position="slot", buckets=buckets)


def test_a_position_naming_a_column_is_read() -> None:
    # a pin of what was already right: the slots of a position-wise log, renamed
    log = LOG.with_columns(round_id=pl.lit(1), slot=pl.Series([1, 2, 3, 4]))
    pi = pl.DataFrame(
        {"round_id": [1] * 8, "slot": [1, 1, 2, 2, 3, 3, 4, 4], "action": ["a", "b"] * 4}
    ).with_columns(prob=POLICY["prob"])
    out = irm.evaluate(log, ["ips"], policy=pi, position="slot")
    assert out["ips"].item() == pytest.approx(0.9)


def test_an_optional_column_no_metric_reads_is_not_checked() -> None:
    # a log's own 'converted' of floats (the default name) is no concern of ctr's: it
    # was refused ("a conversion must be Boolean") though ctr never reads it
    log = CLICKS.with_columns(converted=pl.lit(0.5), timestamp=pl.lit("noon"))
    assert irm.evaluate_online(log, ["ctr"])["ctr"].item() == 0.5
    with pytest.raises(irm.ColumnTypeError, match="a conversion must be Boolean"):
        irm.evaluate_online(log, ["conversion_rate"])
