"""Slates, the rest: bootstrap intervals of the self-normalised slate estimators (the
ratio recomputed in each resample) beside obp's ``estimate_interval``
(tests/fixtures/ope/obp_slate_intervals.json, make_obp_slate_intervals.py), and the
SupportWarning of the slate and cascade estimators."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import MetricParameterError, SupportWarning

FIXTURES = Path(__file__).parent / "fixtures" / "ope"
OBP = json.loads((FIXTURES / "obp_slate_intervals.json").read_text())
SN = {
    "slate_snips": "pscore",
    "slate_sniips": "pscore_item_position",
    "slate_snrips": "pscore_cascade",
}
SUMS = ["slate_ips", "slate_iips", "slate_rips"]


def _tables(case: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return (
        pl.read_parquet(FIXTURES / f"{case}_log.parquet"),
        pl.read_parquet(FIXTURES / f"{case}_policy.parquet"),
    )


def _run(frame_kind: str, log: pl.DataFrame, metrics: list[str], **kwargs: object) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        out = irm.evaluate(log.lazy(), metrics, **kwargs)  # type: ignore[arg-type]
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(log, metrics, **kwargs)  # type: ignore[arg-type]
    assert isinstance(result, pl.DataFrame)
    return result


def _reference(
    log: pl.DataFrame, policy: pl.DataFrame, column: str, per_position: bool
) -> np.ndarray:
    """A multinomial bootstrap over rounds (numpy), the ratio recomputed per resample:
    the method, written apart from the library's Poisson draws."""
    rows = log.join(policy, on=["round_id", "position"], suffix="_e").sort("round_id", "position")
    rounds = rows["round_id"].unique().sort().to_numpy()
    n, positions = rounds.size, rows["position"].unique().sort().to_list()
    w = (rows[f"{column}_e"] / rows[column]).to_numpy().reshape(n, len(positions))
    rw = rows["reward"].to_numpy().reshape(n, len(positions)) * w
    rng = np.random.default_rng(7)
    draws = rng.integers(0, n, size=(20_000, n))
    a, b = rw[draws].sum(axis=1), w[draws].sum(axis=1)  # resamples x positions
    if per_position:
        estimates = (a / b).sum(axis=1)
    else:
        estimates = a.sum(axis=1) * len(positions) / b.sum(axis=1)
    return np.percentile(estimates, [5.0, 95.0])


@pytest.mark.parametrize("case", sorted(OBP))
def test_self_normalised_slate_intervals(case: str, frame_kind: str) -> None:
    log, policy = _tables(case)
    metrics = [*SUMS, *SN]
    out = _run(frame_kind, log, metrics, policy=policy, ci=0.9, n_bootstrap=5000, seed=0)
    assert out.columns[:4] == ["num_rounds", "slate_ips", "slate_ips_lower", "slate_ips_upper"]
    for label in metrics:
        low, high = out[f"{label}_lower"].item(), out[f"{label}_upper"].item()
        obp = OBP[case][label]
        width = obp["upper"] - obp["lower"]
        assert low < out[label].item() < high, label
        if label in SUMS:  # the same method as obp's: within 3% of its width
            assert abs(low - obp["lower"]) < 0.03 * width, label
            assert abs(high - obp["upper"]) < 0.03 * width, label
            continue
        # obp normalises once, over the whole log: its interval leaves out the weights'
        # variance that the ratio cancels, and holds the library's
        assert obp["lower"] - 0.02 * width < low, label
        assert high < obp["upper"] + 0.02 * width, label
        ref_low, ref_high = _reference(log, policy, SN[label], label != "slate_snips")
        ref_width = ref_high - ref_low
        assert abs(low - ref_low) < 0.06 * ref_width, label
        assert abs(high - ref_high) < 0.06 * ref_width, label


def _constant_reward_log(n: int = 300) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(1)
    log = pl.DataFrame(
        {
            "round_id": np.repeat(np.arange(n), 2),
            "position": np.tile([1, 2], n),
            "reward": np.ones(2 * n),
            "pscore": np.repeat(rng.uniform(0.1, 0.5, n), 2),
            "pscore_item_position": rng.uniform(0.2, 0.6, 2 * n),
        }
    )
    policy = log.select(
        "round_id",
        "position",
        pscore=pl.Series(np.repeat(rng.uniform(0.1, 0.5, n), 2)),
        pscore_item_position=pl.Series(rng.uniform(0.2, 0.6, 2 * n)),
    )
    return log, policy


@pytest.mark.parametrize("rounds", [300, 5000])  # 5000: rounds pooled into 4096 buckets
def test_every_reward_one_gives_a_point_interval(frame_kind: str, rounds: int) -> None:
    """Every slot rewarded: each self-normalised estimate is 1 + 1 = 2 whatever the
    weights, in every resample (sum_l A_l n_l / (n W_l) with A_l = W_l), so the interval
    is the point; slate_ips, a mean of weights, still varies, as obp's fixed
    normalisation would make the self-normalised ones vary."""
    log, policy = _constant_reward_log(rounds)
    metrics = ["slate_snips", "slate_sniips", "slate_ips"]
    out = _run(frame_kind, log, metrics, policy=policy, ci=0.9, n_bootstrap=500)
    for label in ("slate_snips", "slate_sniips"):
        assert out[label].item() == pytest.approx(2.0, abs=1e-12)
        assert out[f"{label}_lower"].item() == pytest.approx(2.0, abs=1e-12)
        assert out[f"{label}_upper"].item() == pytest.approx(2.0, abs=1e-12)
    assert out["slate_ips_upper"].item() - out["slate_ips_lower"].item() > 0.01


def test_intervals_per_group_and_reproducible() -> None:
    log, policy = _tables("slate_standard_s2")
    log = log.with_columns(segment=pl.col("round_id") % 2)
    kwargs = {"policy": policy, "ci": 0.9, "by": "segment", "n_bootstrap": 400}
    first = irm.evaluate(log, ["slate_sniips"], seed=5, **kwargs)  # type: ignore[arg-type]
    again = irm.evaluate(log.lazy(), ["slate_sniips"], seed=5, **kwargs).collect()  # type: ignore[arg-type]
    other = irm.evaluate(log, ["slate_sniips"], seed=6, **kwargs)  # type: ignore[arg-type]
    assert first["segment"].to_list() == [0, 1]
    assert again.equals(first)  # the same draws and exact sums: the same bits
    assert not first["slate_sniips_lower"].equals(other["slate_sniips_lower"])
    for segment in (0, 1):  # each group's own estimate inside its own interval
        row = first.row(segment, named=True)
        assert row["slate_sniips_lower"] < row["slate_sniips"] < row["slate_sniips_upper"]


def test_normal_interval_of_a_ratio_refused() -> None:
    log, policy = _tables("slate_cascade_s0")
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'slate_snrips' is a ratio (self-normalised) and has no closed-form "
            "variance: use ci_method='bootstrap'"
        ),
    ):
        irm.evaluate(log, ["slate_snrips", "slate_ips"], policy=policy, ci=0.9, ci_method="normal")


def test_slate_support_warning(frame_kind: str) -> None:
    log, policy = _constant_reward_log(20)
    extra = pl.DataFrame(
        {"round_id": [3], "position": [3], "pscore": [0.2], "pscore_item_position": [0.0]}
    )
    wider = pl.concat([policy, extra], how="vertical_relaxed")
    with pytest.warns(
        SupportWarning,
        match=re.escape(
            "the policy puts mass on 1 slot(s) of slates the log never shows (e.g. "
            "round_id=3, position=3): the logging policy never showed them"
        ),
    ):
        _run(frame_kind, log, ["slate_ips"], policy=wider)
    # the slot's mass is in a column slate_iips does not read (0 there): no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", SupportWarning)
        _run(frame_kind, log, ["slate_iips"], policy=wider)
        _run(frame_kind, log, ["slate_ips"], policy=policy)


#: A cascade log of two rounds of two positions (actions a and b only).
CASCADE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": ["a", "b", "b", "a"],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.25] * 4,
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25],
    }
)


def test_cascade_support_warning() -> None:
    log = CASCADE_LOG
    cascade = pl.DataFrame(
        {
            "round_id": [1] * 6 + [2] * 6,
            "position": [1, 1, 1, 2, 2, 2] * 2,
            "action": ["a", "b", "c"] * 4,  # c is never logged
            "prob": [0.5, 0.3, 0.2, 0.0, 0.8, 0.2, 0.4, 0.6, 0.0, 1.0, 0.0, 0.0],
            "q_hat": [0.5] * 12,
        }
    )
    with pytest.warns(
        SupportWarning,
        match=re.escape("the policy gives a positive probability to 2 action(s) never logged"),
    ):
        irm.evaluate(
            log, ["cascade_dr"], policy=cascade.drop("q_hat"), reward_model=cascade.drop("prob")
        )
