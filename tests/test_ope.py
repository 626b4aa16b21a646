"""Off-policy estimators through irm.evaluate: equal to obp 0.5.7, segments, refusals.

The expected values were computed by obp in a side environment
(tests/fixtures/ope/make_obp_fixtures.py) on its SyntheticBanditDataset logs, which the
fixtures hold as Parquet.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
    SupportWarning,
)

from .helpers import docs_hook

FIXTURES = Path(__file__).parent / "fixtures" / "ope"
EXPECTED = json.loads((FIXTURES / "obp_expected.json").read_text())
CASES = {case["name"]: case for case in EXPECTED["cases"]}


def _tables(name: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return tuple(  # type: ignore[return-value]
        pl.read_parquet(FIXTURES / f"{name}_{table}.parquet")
        for table in ("log", "policy", "reward_model")
    )


def _run(frame_kind: str, log: pl.DataFrame, metrics: Any, **kwargs: Any) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kwargs.items()}
        out = irm.evaluate(log.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(log, metrics, **kwargs)
    assert isinstance(result, pl.DataFrame)
    return result


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_estimator_equals_obp(frame_kind: str, case: str) -> None:
    log, policy, model = _tables(case)
    expected = CASES[case]["expected"]
    out = _run(frame_kind, log, list(expected), policy=policy, reward_model=model)
    assert out.height == 1
    assert out["num_rows"].item() == log.height
    for label, value in expected.items():
        assert out[label].item() == pytest.approx(value, abs=1e-9, rel=0), label


@pytest.mark.parametrize("case", [c for c in sorted(CASES) if CASES[c]["per_round"]])
def test_per_query_gives_obps_round_rewards(frame_kind: str, case: str) -> None:
    log, policy, model = _tables(case)
    per_round = CASES[case]["per_round"]
    out = _run(frame_kind, log, list(per_round), policy=policy, reward_model=model, per_query=True)
    keys = ["round_id", "position"] if "position" in log.columns else ["round_id"]
    assert out.columns == [*keys, *per_round]
    # obp's rows are the log's rows in order; the result is sorted by the keys, as is the log
    assert out.select(keys).equals(log.select(keys).sort(keys))
    for label, values in per_round.items():
        assert out[label].to_list() == pytest.approx(values, abs=1e-9, rel=0), label


def test_segments_are_each_segments_estimate(frame_kind: str) -> None:
    log, policy, model = _tables("bandit_binary_s0")
    log = log.with_columns(segment=pl.col("round_id") % 3)
    metrics = ["ips(clip=2)", "snips", "dm", "sndr", "switch_dr(tau=2)"]
    out = _run(frame_kind, log, metrics, policy=policy, reward_model=model, by="segment")
    assert out["segment"].to_list() == [0, 1, 2]
    for segment in range(3):
        alone = irm.evaluate(
            log.filter(pl.col("segment") == segment).drop("segment"),
            metrics,
            policy=policy,
            reward_model=model,
        )
        row = out.filter(pl.col("segment") == segment)
        for label in metrics:
            assert row[label].item() == pytest.approx(alone[label].item(), abs=1e-12), label
    per_round = _run(
        frame_kind, log, metrics, policy=policy, reward_model=model, by="segment", per_query=True
    )
    means = per_round.group_by("segment").agg(pl.col(metrics).mean()).sort("segment")
    for label in metrics:
        assert means[label].to_list() == pytest.approx(out[label].to_list(), abs=1e-12)


def test_weight_diagnostics_by_hand() -> None:
    # weights 1.8, 1.0, 0.2 (see build_ope_plan's example); ips(clip=1.5) caps 1.8
    log, pi = _ALL_A, _PI
    with pytest.warns(SupportWarning):  # the log shows only 'a'
        out = irm.evaluate(log, ["ips(clip=1.5)", "sg_ips(lambda=0.5)"], policy=pi)
    assert out["ips(clip=1.5)"].item() == pytest.approx((1.5 + 0.2) / 3, abs=1e-15)
    assert out["ips(clip=1.5)_max_weight"].item() == 1.5
    assert out["ips(clip=1.5)_ess"].item() == pytest.approx(2.7**2 / (2.25 + 1 + 0.04))
    # sg_ips(lambda=0.5): w / (0.5 + 0.5 w): 1.8 / 1.4, 1.0, 0.2 / 0.6
    shrunk = [1.8 / 1.4, 1.0, 0.2 / 0.6]
    assert out["sg_ips(lambda=0.5)"].item() == pytest.approx((shrunk[0] + shrunk[2]) / 3)
    assert out["sg_ips(lambda=0.5)_max_weight"].item() == pytest.approx(1.8 / 1.4)
    # an action the policy does not list has probability 0: weight 0 (and the policy
    # takes only 'b', which the log never shows)
    only_b = pi.filter(pl.col("action") != "a").with_columns(prob=1.0)
    with pytest.warns(SupportWarning, match=re.escape("(e.g. action=b)")):
        out = irm.evaluate(log, ["ips"], policy=only_b)
    assert out["ips"].item() == 0.0


def test_columns_by_keyword(frame_kind: str) -> None:
    log, policy, model = _tables("bandit_binary_s2")
    renamed = log.rename({"round_id": "rid", "action": "item", "reward": "click", "pscore": "p0"})
    out = _run(
        frame_kind,
        renamed,
        ["dr", "ips"],
        policy=policy.rename({"round_id": "rid", "action": "item"}),
        reward_model=model.rename({"round_id": "rid", "action": "item"}),
        round_id="rid",
        action="item",
        reward="click",
        propensity="p0",
    )
    expected = CASES["bandit_binary_s2"]["expected"]
    assert out["dr"].item() == pytest.approx(expected["dr"], abs=1e-9)
    assert out["ips"].item() == pytest.approx(expected["ips"], abs=1e-9)


# the catalogue's worked example: three rounds, the logger's pscore 0.5 throughout
CATALOGUE = docs_hook("catalogue")
EXAMPLE_OPE_POLICY: pl.DataFrame = CATALOGUE.EXAMPLE_OPE_POLICY
_LOG: pl.DataFrame = CATALOGUE.EXAMPLE_OPE_LOG
_PI = EXAMPLE_OPE_POLICY.drop("q_hat")
#: the log of build_ope_plan's example: the logger chose 'a' (0.5) in every round
_ALL_A = _LOG.with_columns(action=pl.lit("a"))
_Q = EXAMPLE_OPE_POLICY.drop("prob")


@pytest.mark.parametrize(
    ("log", "policy", "model", "error", "message"),
    [
        (
            _LOG.with_columns(pscore=pl.Series([0.5, 0.0, 0.5])),
            _PI,
            None,
            InvalidValueError,
            "column 'pscore' of the log has 1 value(s) that are null, NaN, 0, negative or "
            "above 1 (first: round_id=2)",
        ),
        (
            _LOG.with_columns(pscore=pl.Series([1.5, -0.1, 0.5])),
            _PI,
            None,
            InvalidValueError,
            "column 'pscore' of the log has 2 value(s) that are null, NaN, 0, negative or "
            "above 1 (first: round_id=1)",
        ),
        (
            _LOG.with_columns(reward=pl.Series([1.0, None, 1.0])),
            _PI,
            None,
            InvalidValueError,
            "column 'reward' of the log has 1 null or NaN value(s) (first: round_id=2)",
        ),
        (
            _LOG,
            _PI.filter(pl.col("round_id") != 3),
            None,
            QuerySetError,
            "1 log row(s) have a round the policy table lacks (first: round_id=3)",
        ),
        (
            _LOG,
            _PI.with_columns(prob=pl.Series([0.9, 0.1, 0.5, 0.6, 0.1, 0.9])),
            None,
            InvalidValueError,
            "column 'prob' of the policy table does not sum to 1 over the actions (first: "
            "round_id=2, 1 log row(s) in all; tolerance 1.001e-05)",
        ),
        (
            _LOG,
            _PI.with_columns(prob=pl.Series([1.1, -0.1, 0.5, 0.5, 0.1, 0.9])),
            None,
            InvalidValueError,
            "column 'prob' of the policy table has a value that is null, NaN, negative or "
            "above 1 (first: round_id=1)",
        ),
        # a null probability, of an action not logged: refused, with or without q_hat
        (
            _LOG,
            _PI.with_columns(prob=pl.Series([0.9, 0.1, 0.5, None, 0.1, 0.9])),
            None,
            InvalidValueError,
            "column 'prob' of the policy table has a value that is null, NaN, negative or "
            "above 1 (first: round_id=2)",
        ),
        (
            _LOG,
            _PI.with_columns(prob=pl.Series([0.9, 0.1, 0.5, None, 0.1, 0.9])),
            _Q,
            InvalidValueError,
            "column 'prob' of the policy table has a value that is null, NaN, negative or "
            "above 1 (first: round_id=2)",
        ),
        (
            _LOG,
            pl.concat([_PI, _PI.head(1)]),
            None,
            DuplicateError,
            "an action is listed twice for one round in the policy table (first: round_id=1)",
        ),
        (
            _LOG,
            _PI,
            _Q.filter((pl.col("round_id") != 3) | (pl.col("action") != "b")),
            QuerySetError,
            "the reward_model table has no 'q_hat' (or a null or NaN one) for the logged "
            "action or an action the policy may take (first: round_id=3, 1 log row(s) in all)",
        ),
        # the logged action's q_hat NaN where the policy gives it 0: only the logged
        # row's own value is checked there
        (
            _LOG,
            _PI.with_columns(prob=pl.Series([0.9, 0.1, 0.5, 0.5, 1.0, 0.0])),
            _Q.with_columns(q_hat=pl.Series([0.6, 0.3, 0.6, 0.3, 0.6, float("nan")])),
            QuerySetError,
            "the reward_model table has no 'q_hat' (or a null or NaN one) for the logged "
            "action or an action the policy may take (first: round_id=3, 1 log row(s) in all)",
        ),
        # q_hat of 2**62 or more (or infinite) where the policy goes: its sum with the
        # probabilities is exact below that (ope.sums.bounded_columns)
        (
            _LOG,
            _PI,
            _Q.with_columns(q_hat=pl.Series([0.6, 0.3, 0.6, 2.0**62, 0.6, 0.3])),
            InvalidValueError,
            "the reward_model table has a 'q_hat' that is infinite or 2**62 or more in "
            "magnitude for an action the policy may take (first: round_id=2, 1 log row(s) "
            "in all)",
        ),
        (
            _LOG,
            _PI,
            _Q.with_columns(q_hat=pl.Series([0.6, 0.3, 0.6, 0.3, float("-inf"), 0.3])),
            InvalidValueError,
            "'q_hat' that is infinite or 2**62 or more in magnitude for an action the "
            "policy may take (first: round_id=3, 1 log row(s) in all)",
        ),
        (
            _LOG,
            _PI.with_columns(pl.col("round_id").cast(pl.String)),
            None,
            ColumnTypeError,
            "column 'round_id' has dtype String in the policy table but Int64 in the log; "
            "the ids must match",
        ),
    ],
)
def test_refusals(
    frame_kind: str,
    log: pl.DataFrame,
    policy: pl.DataFrame,
    model: pl.DataFrame | None,
    error: type[Exception],
    message: str,
) -> None:
    metrics = ["ips", "dr"] if model is not None else ["ips"]
    with pytest.raises(error, match=re.escape(message)):
        _run(frame_kind, log, metrics, policy=policy, reward_model=model)


def test_a_large_q_hat_where_the_policy_never_goes_is_not_read(frame_kind: str) -> None:
    # round 3: the policy gives 'a' 0; its q_hat (2**70) is never weighed
    policy = _PI.with_columns(prob=pl.Series([0.9, 0.1, 0.5, 0.5, 0.0, 1.0]))
    large = _Q.with_columns(q_hat=pl.Series([0.6, 0.3, 0.6, 0.3, 2.0**70, 0.3]))
    metrics = ["dm", "dr"]
    out = _run(frame_kind, _LOG, metrics, policy=policy, reward_model=large)
    same = _run(frame_kind, _LOG, metrics, policy=policy, reward_model=_Q)
    assert out.row(0) == same.row(0)
    # dm: each round's sum of pi q_hat, over 3 rounds
    assert out["dm"].item() == pytest.approx((0.9 * 0.6 + 0.1 * 0.3 + 0.45 + 0.3) / 3)


def test_refusals_per_round() -> None:
    with pytest.raises(QuerySetError, match=re.escape("(first: round_id=3)")):
        irm.evaluate(_LOG, ["ips"], policy=_PI.filter(pl.col("round_id") != 3), per_query=True)


@pytest.mark.parametrize(
    ("metrics", "kwargs", "message"),
    [
        (["dr"], {"policy": _PI}, "metric 'dr' reads a reward model"),
        (["ips"], {}, "metric 'ips' reads an evaluation policy"),
        (
            ["ips"],
            {"policy": _PI, "reward_model": _Q},
            "reward_model= holds q_hat for dm and the doubly robust estimators",
        ),
        (["ips", "ndcg@10"], {"policy": _PI}, "are computed from different tables"),
        (["ndcg@10"], {"policy": _PI}, "policy= is read by the off-policy estimators"),
        (["sg_ips(lambda=2)"], {"policy": _PI}, "lambda must be a number in [0, 1], got 2"),
        (["ips(clip=-1)"], {"policy": _PI}, "clip must be a number >= 0 (inf: no threshold)"),
        (["switch_dr(tau='x')"], {"policy": _PI, "reward_model": _Q}, "tau must be a number"),
    ],
)
def test_refused_requests(metrics: list[str], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        irm.evaluate(_LOG, metrics, **kwargs)


def test_systems_refused() -> None:
    with pytest.raises(InvalidValueError, match=re.escape("systems= is not available")):
        irm.evaluate(_LOG.with_columns(system=pl.lit("x")), ["ips"], policy=_PI, systems="system")


SLATES = {case["name"]: case for case in EXPECTED["slates"]}
SLATE_IPS = [
    "slate_ips",
    "slate_iips",
    "slate_rips",
    "slate_snips",
    "slate_sniips",
    "slate_snrips",
]


def _slate_tables(name: str, *tables: str) -> list[pl.DataFrame]:
    return [pl.read_parquet(FIXTURES / f"{name}_{table}.parquet") for table in tables]


@pytest.mark.parametrize("case", sorted(SLATES))
def test_slate_estimators_equal_obp(frame_kind: str, case: str) -> None:
    log, policy, cascade_policy, cascade_model = _slate_tables(
        case, "log", "policy", "cascade_policy", "cascade_reward_model"
    )
    expected = SLATES[case]["expected"]
    out = _run(frame_kind, log, SLATE_IPS, policy=policy)
    assert out["num_rounds"].item() == log["round_id"].n_unique()
    for label in SLATE_IPS:
        assert out[label].item() == pytest.approx(expected[label], abs=1e-9, rel=0), label
    out = _run(frame_kind, log, ["cascade_dr"], policy=cascade_policy, reward_model=cascade_model)
    assert out["cascade_dr"].item() == pytest.approx(expected["cascade_dr"], abs=1e-9, rel=0)


def test_cascade_dr_reads_pscore_cascade_alone(frame_kind: str) -> None:
    # obp's cascade log needs no pscore column: it was required (and never read)
    case = "slate_cascade_s0"
    log, cascade_policy, cascade_model = _slate_tables(
        case, "log", "cascade_policy", "cascade_reward_model"
    )
    cascade = log.select(pl.exclude("pscore"))
    out = _run(
        frame_kind, cascade, ["cascade_dr"], policy=cascade_policy, reward_model=cascade_model
    )
    expected = SLATES[case]["expected"]["cascade_dr"]
    assert out["cascade_dr"].item() == pytest.approx(expected, abs=1e-9, rel=0)
    message = "column 'pscore_cascade' not found in the log"
    with pytest.raises(ColumnNotFoundError, match=re.escape(message)):
        irm.evaluate(
            log.drop("pscore_cascade"),
            ["cascade_dr"],
            policy=cascade_policy,
            reward_model=cascade_model,
        )


def test_slate_rows_in_any_order_and_per_round(frame_kind: str) -> None:
    case = "slate_cascade_s0"
    log, policy, cascade_policy, cascade_model = _slate_tables(
        case, "log", "policy", "cascade_policy", "cascade_reward_model"
    )
    shuffled = log.sample(fraction=1.0, shuffle=True, seed=7)
    expected = SLATES[case]["expected"]
    out = _run(
        frame_kind,
        shuffled,
        ["cascade_dr"],
        policy=cascade_policy.sample(fraction=1.0, shuffle=True, seed=8),
        reward_model=cascade_model,
    )
    assert out["cascade_dr"].item() == pytest.approx(expected["cascade_dr"], abs=1e-9, rel=0)
    per_round = _run(frame_kind, shuffled, SLATE_IPS, policy=policy, per_query=True)
    assert per_round.height == log["round_id"].n_unique()
    for label in SLATE_IPS:  # a round's contribution is the sum over its slots
        assert per_round[label].mean() == pytest.approx(expected[label], abs=1e-9, rel=0)


def test_slate_refusals() -> None:
    log, policy = _slate_tables("slate_cascade_s0", "log", "policy")
    bad = log.with_columns(
        pscore_item_position=pl.when(pl.col("round_id") == 3)
        .then(0.0)
        .otherwise(pl.col("pscore_item_position"))
    )
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "column 'pscore_item_position' of the log has 3 value(s) that are null, NaN, 0, "
            "negative or above 1 (first: round_id=3, position=1)"
        ),
    ):
        irm.evaluate(bad, ["slate_iips"], policy=policy)
    missing = policy.filter((pl.col("round_id") != 5) | (pl.col("position") != 2))
    with pytest.raises(
        QuerySetError,
        match=re.escape(
            "1 log row(s) have a (round_id, position) the policy table lacks (first: "
            "round_id=5, position=2)"
        ),
    ):
        irm.evaluate(log, ["slate_ips"], policy=missing)
    with pytest.raises(MetricParameterError, match=re.escape("read different policy tables")):
        irm.evaluate(log, ["slate_ips", "ips"], policy=policy)
    with pytest.raises(ColumnNotFoundError, match=re.escape("column 'pscore_cascade' not found")):
        irm.evaluate(log, ["slate_rips"], policy=policy.drop("pscore_cascade"))


def test_normal_interval_by_hand(frame_kind: str) -> None:
    # ips contributions 1.8, 0, 0.2 (weights 1.8, 1.0, 0.2; rewards 1, 0, 1)
    log, pi = _ALL_A, _PI
    log = pl.concat([log, log.with_columns(round_id=pl.col("round_id") + 3, action=pl.lit("b"))])
    pi = pl.concat([pi, pi.with_columns(round_id=pl.col("round_id") + 3)])
    # six rows: a in rounds 1-3 (weights 1.8, 1.0, 0.2) and b in 4-6 (0.2, 1.0, 1.8)
    out = _run(frame_kind, log, ["ips"], policy=pi, ci=0.9, ci_method="normal")
    x = [1.8, 0.0, 0.2, 0.2, 0.0, 1.8]
    mean = sum(x) / 6
    sd = (sum((v - mean) ** 2 for v in x) / 5) ** 0.5
    z = NormalDist().inv_cdf(0.95)
    assert out.columns[:4] == ["num_rows", "ips", "ips_lower", "ips_upper"]
    assert out["ips_lower"].item() == pytest.approx(mean - z * sd / 6**0.5, abs=1e-12)
    assert out["ips_upper"].item() == pytest.approx(mean + z * sd / 6**0.5, abs=1e-12)


def test_bootstrap_interval_reproducible_and_near_normal(frame_kind: str) -> None:
    log, policy, model = _tables("bandit_continuous_s1")
    log = log.with_columns(segment=pl.col("round_id") % 2)
    metrics = ["ips", "snips", "dr", "sndr", "switch_dr(tau=2)"]
    kwargs = {"policy": policy, "reward_model": model, "by": "segment", "ci": 0.95}
    first = _run(frame_kind, log, metrics, n_bootstrap=2000, seed=3, **kwargs)
    again = irm.evaluate(log, metrics, n_bootstrap=2000, seed=3, **kwargs)
    other = irm.evaluate(log, metrics, n_bootstrap=2000, seed=4, **kwargs)
    for label in metrics:  # the same draws; polars may add a group's floats in another order
        for column in (f"{label}_lower", f"{label}_upper"):
            assert again[column].to_list() == pytest.approx(first[column].to_list(), abs=1e-12)
            assert other[column].to_list() != pytest.approx(first[column].to_list(), abs=1e-6)
    normal = irm.evaluate(log, ["ips", "dr"], ci_method="normal", **kwargs)
    for label in metrics:
        assert (first[f"{label}_lower"] < first[label]).all()
        assert (first[label] < first[f"{label}_upper"]).all()
    for label in ["ips", "dr"]:  # 120 rows a group: the percentiles near mean +- 1.96 se
        for side in ("lower", "upper"):
            column = f"{label}_{side}"
            width = (normal[f"{label}_upper"] - normal[f"{label}_lower"]).to_numpy()
            gap = (first[column] - normal[column]).abs().to_numpy()
            assert (gap < 0.15 * width).all(), column


def test_slate_and_cascade_intervals(frame_kind: str) -> None:
    log, policy, cascade_policy, cascade_model = _slate_tables(
        "slate_cascade_s0", "log", "policy", "cascade_policy", "cascade_reward_model"
    )
    out = _run(frame_kind, log, ["slate_ips", "slate_rips"], policy=policy, ci=0.9)
    assert (out["slate_ips_lower"] < out["slate_ips"]).all()
    assert (out["slate_rips"] < out["slate_rips_upper"]).all()
    out = _run(
        frame_kind,
        log,
        ["cascade_dr"],
        policy=cascade_policy,
        reward_model=cascade_model,
        ci=0.9,
        ci_method="normal",
    )
    rounds = log["round_id"].n_unique()
    assert out["cascade_dr_upper"].item() - out["cascade_dr_lower"].item() > 0
    assert out["num_rounds"].item() == rounds


@pytest.mark.parametrize(
    ("metrics", "kwargs", "error", "message"),
    [
        (["ips"], {"ci": 1.5}, InvalidValueError, "ci must be a level between 0 and 1"),
        (["ips"], {"ci": 0.9, "per_query": True}, InvalidValueError, "drop one of them"),
        (["ips"], {"ci": 0.9, "ci_method": "exact"}, InvalidValueError, "ci_method='exact'"),
        (["ips"], {"ci": 0.9, "n_bootstrap": 0}, InvalidValueError, "n_bootstrap must be"),
        (
            ["snips"],
            {"ci": 0.9, "ci_method": "normal"},
            MetricParameterError,
            "metric 'snips' is a ratio (self-normalised) and has no closed-form variance",
        ),
    ],
)
def test_interval_refusals(
    metrics: list[str], kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        irm.evaluate(_LOG, metrics, policy=_PI, **kwargs)


def test_interval_refused_elsewhere() -> None:
    # the self-normalised slate estimators have intervals: tests/test_ope_slates_extra.py
    run = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "rank": [1], "relevance": [1]})
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "ci=0.9 is not read by metric 'ndcg': only the off-policy estimators (ips, "
            "snips, dr...) read it; drop ci="
        ),
    ):
        irm.evaluate(run, ["ndcg"], ci=0.9)


def test_support_warning(frame_kind: str) -> None:
    # the policy gives 'c' probability 0.1 in round 1; the log never shows 'c'
    policy = pl.DataFrame(
        {
            "round_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
            "action": ["a", "b", "c"] * 3,
            "prob": [0.8, 0.1, 0.1, 0.5, 0.5, 0.0, 0.1, 0.9, 0.0],
        }
    )
    with pytest.warns(
        SupportWarning,
        match=re.escape(
            "the policy gives a positive probability to 1 action(s) never logged (e.g. action=c)"
        ),
    ):
        out = _run(frame_kind, _LOG, ["ips"], policy=policy)
    assert out["ips"].item() == pytest.approx((1.6 + 0 + 1.8) / 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        supported = policy.filter(pl.col("action") != "c").with_columns(
            prob=pl.when((pl.col("round_id") == 1) & (pl.col("action") == "b"))
            .then(0.2)
            .otherwise(pl.col("prob"))
        )
        irm.evaluate(_LOG, ["ips"], policy=supported, per_query=True)


def test_benchmark_script_runs_tiny() -> None:
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [
            sys.executable,
            "benchmarks/ope.py",
            "--rounds",
            "2000",
            "--repeats",
            "1",
            "--resamples",
            "20",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["rounds"] == 2000
    low, high = result["irm_ci"]
    assert low < result["irm_values"]["ips"] < high


def test_position_bias_recovers_the_pbm(frame_kind: str) -> None:
    # clicks simulated from a PBM: gamma = 1, 0.6, 0.35, 0.2; every document shown at
    # every position (a randomised ranking), so EM identifies gamma up to its scale
    rng = np.random.default_rng(5)
    gamma = np.array([1.0, 0.6, 0.35, 0.2])
    n_sessions, n_docs = 40_000, 4
    attractiveness = rng.uniform(0.2, 0.9, size=(10, n_docs))
    query = rng.integers(0, 10, n_sessions)
    order = np.argsort(rng.random((n_sessions, n_docs)), axis=1)  # doc at each position
    p_click = gamma[None, :] * attractiveness[query[:, None], order]
    clicked = (rng.random((n_sessions, n_docs)) < p_click).astype(np.int8)
    log = pl.DataFrame(
        {
            "query_id": np.repeat(query, n_docs),
            "doc_id": order.ravel(),
            "rank": np.tile(np.arange(1, n_docs + 1), n_sessions),
            "clicked": clicked.ravel(),
        }
    )
    frame = log.lazy() if frame_kind == "LazyFrame" else log
    out = irm.position_bias(frame)
    assert out["position"].to_list() == [1, 2, 3, 4]
    assert out["impressions"].to_list() == [n_sessions] * 4
    assert out["propensity"][0] == 1.0
    assert out["propensity"].to_list() == pytest.approx(gamma.tolist(), abs=0.03)


def test_position_bias_refusals() -> None:
    log = pl.DataFrame(
        {"query_id": ["q"] * 2, "doc_id": ["a", "b"], "rank": [1, 2], "clicked": [1, 2]}
    )
    with pytest.raises(InvalidValueError, match=re.escape("that is neither 0 nor 1")):
        irm.position_bias(log)
    with pytest.raises(ColumnNotFoundError, match=re.escape("column 'click' not found")):
        irm.position_bias(log, clicked="click")
    with pytest.raises(InvalidValueError, match=re.escape("max_iter must be a whole number >= 1")):
        irm.position_bias(log.with_columns(clicked=pl.lit(1)), max_iter=0)


_WEIGHTED = [
    "ips",
    "ips(clip=2)",
    "snips",
    "dr",
    "dr(clip=0.5)",
    "sndr",
    "switch_dr(tau=1.5)",
    "dr_os(lambda=3)",
    "dr_os(lambda=inf)",
    "sg_ips(lambda=0.3)",
    "sg_dr(lambda=0.3)",
]


@pytest.mark.parametrize("name", _WEIGHTED)
def test_the_effective_weight_is_the_contribution_at_reward_1(name: str) -> None:
    # the effective sample size and the largest weight read each estimator's weight,
    # written plainly (so that estimators giving the same weight share its sums): it is
    # the contribution at r = 1, dm = q = 0 and a mean weight of 1, to the bit
    from polars_irmetrics.metrics.ope import OpeTerms, contribution, effective_weight
    from polars_irmetrics.metrics.registry import parse_metric

    request = parse_metric(name)
    params = request.params(1.0)
    w = pl.col("w")
    one = OpeTerms(pl.lit(1.0), w, pl.lit(0.0), pl.lit(0.0), pl.lit(1.0))
    weights = pl.DataFrame({"w": np.random.default_rng(0).exponential(1.0, 500).tolist()})
    weights = weights.vstack(pl.DataFrame({"w": [0.0, 1.5, 2.0, 1e-300, 1e300]}))
    plain = weights.select(effective_weight(request.metric.name, params, name, w))
    derived = weights.select(contribution(request.metric.name, params, name, one))
    assert plain.to_series().equals(derived.to_series(), check_names=False)


@pytest.mark.parametrize("rounds", [1, 2])
def test_an_estimators_own_nan_stays_nan(rounds: int, evaluate: Any) -> None:
    # dr_os(lambda=0) at a weight of 0 is 0 / 0, NaN, as obp's: the estimate is NaN, not
    # refused as a term too large to sum (a sum of NaN terms alone, too: one round)
    log = pl.DataFrame(
        {"round_id": [1, 2], "action": ["a", "a"], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
    ).head(rounds)
    pi = pl.DataFrame(
        {"round_id": [1, 1, 2, 2], "action": ["a", "b"] * 2, "prob": [0.0, 1.0, 0.5, 0.5]}
    )
    q = pi.select("round_id", "action", q_hat=pl.lit(0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate(log, ["dr_os(lambda=0)", "dr"], policy=pi, reward_model=q)
    assert np.isnan(out["dr_os(lambda=0)"].item())
    assert out["dr"].item() == (0.5 if rounds == 1 else 0.25)
