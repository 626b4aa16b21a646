"""Off-policy evaluation, round 9: ``cascade_dr`` refuses a round whose positions skip
one (it read the slots present as if they were the top, a wrong value in silence), and
the slate estimators check every propensity column a table has, whichever the metrics
read (a bad ``pscore_cascade`` passed with ``slate_ips`` alone, refused beside
``slate_rips``)."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError, SupportWarning

LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 1],
        "position": [1, 2, 3],
        "action": [0, 1, 0],
        "reward": [0.0, 0.0, 1.0],
        "pscore_cascade": [0.5, 0.25, 0.125],
    }
)
POLICY = pl.DataFrame(
    {"round_id": [1] * 6, "position": [1, 1, 2, 2, 3, 3], "action": [0, 1] * 3, "prob": [0.5] * 6}
)
MODEL = POLICY.rename({"prob": "q_hat"}).with_columns(q_hat=pl.lit(0.0))

GAP = (
    "2 log row(s) are in a round whose positions do not run 1, 2, 3, ... without a gap "
    "(first: round_id=1, position={p}): cascade_dr reads each round's top slots down to its "
    "last logged one, every one of them; keep each round's unbroken top (drop the rows "
    "below its first missing 'position'), or log the missing slots"
)


def _evaluate(log: pl.DataFrame, lazy: bool, metrics: list[str], **kw: object) -> pl.DataFrame:
    if lazy:
        out = irm.evaluate(log.lazy(), metrics, **kw)  # type: ignore[arg-type]
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    frame = irm.evaluate(log, metrics, **kw)  # type: ignore[arg-type]
    assert isinstance(frame, pl.DataFrame)
    return frame


@pytest.mark.parametrize("lazy", [False, True])
def test_cascade_dr_of_whole_rounds_and_a_top_prefix(lazy: bool) -> None:
    # the weights: 0.5/0.5, 0.25/0.25, 0.125/0.125, all 1; q_hat 0: the rewards' sum
    # (the policy's other action at each slot was never logged: a SupportWarning)
    with pytest.warns(SupportWarning, match="3 action"):
        full = _evaluate(LOG, lazy, ["cascade_dr"], policy=POLICY, reward_model=MODEL)
    assert full["cascade_dr"].item() == 1.0
    # the top two slots only (a shorter slate): fine, the third's reward unseen
    top_two = LOG.filter(pl.col("position") <= 2)
    with pytest.warns(SupportWarning, match="4 action"):
        top = _evaluate(top_two, lazy, ["cascade_dr"], policy=POLICY, reward_model=MODEL)
    assert top["cascade_dr"].item() == 0.0


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(("missing", "first"), [(2, 1), (1, 2)])
def test_cascade_dr_refuses_a_round_with_a_gap(lazy: bool, missing: int, first: int) -> None:
    # before: 2.0 for both (the missing slot's 0.5 left out of the policy's product while
    # the log's pscore_cascade 0.125 holds it; or position 2 read as the top)
    log = LOG.filter(pl.col("position") != missing)
    with pytest.raises(InvalidValueError, match=re.escape(GAP.format(p=first))):
        _evaluate(log, lazy, ["cascade_dr"], policy=POLICY, reward_model=MODEL)


def test_cascade_dr_gap_in_one_round_of_several_by_groups() -> None:
    log = pl.concat(
        [LOG, LOG.with_columns(round_id=pl.lit(2, pl.Int64)).filter(pl.col("position") != 2)]
    ).with_columns(segment=pl.lit("a"))
    policy = pl.concat([POLICY, POLICY.with_columns(round_id=pl.lit(2, pl.Int64))])
    model = pl.concat([MODEL, MODEL.with_columns(round_id=pl.lit(2, pl.Int64))])
    with pytest.raises(InvalidValueError, match=r"\(first: round_id=2, position=1\)"):
        irm.evaluate(log, ["cascade_dr"], policy=policy, reward_model=model, by="segment")


SLOG = pl.DataFrame(
    {
        "round_id": [1, 2],
        "position": [1, 1],
        "reward": [1.0, 0.0],
        "pscore": [0.5, 0.5],
        "pscore_item_position": [0.5, 0.5],
        "pscore_cascade": [0.25, 0.25],
    }
)
SPOLICY = SLOG.select("round_id", "position", "pscore", "pscore_item_position", "pscore_cascade")


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("metrics", [["slate_ips"], ["slate_ips", "slate_rips"], ["slate_iips"]])
def test_slate_log_propensity_checked_whatever_the_metrics(lazy: bool, metrics: list[str]) -> None:
    log = SLOG.with_columns(pscore_cascade=pl.Series([0.0, 7.0]))
    message = (
        "column 'pscore_cascade' of the log has 2 value(s) that are null, NaN, 0, negative "
        "or above 1 (first: round_id=1, position=1); it is the logging policy's probability "
        "of the logged slate, in (0, 1]"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _evaluate(log, lazy, metrics, policy=SPOLICY)


@pytest.mark.parametrize("metrics", [["slate_ips"], ["slate_rips"]])
def test_slate_policy_propensity_checked_whatever_the_metrics(metrics: list[str]) -> None:
    policy = SPOLICY.with_columns(pscore_cascade=pl.lit(2.0))
    message = (
        "column 'pscore_cascade' of the policy table has 2 value(s) that are null, NaN, "
        "negative or above 1 (first: round_id=1, position=1): propensities are in [0, 1]"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(SLOG, metrics, policy=policy)


@pytest.mark.parametrize("table", ["log", "policy table"])
def test_slate_text_propensity_refused_whatever_the_metrics(table: str) -> None:
    log, policy = SLOG, SPOLICY
    if table == "log":
        log = log.with_columns(pscore_cascade=pl.lit("0.5"))
    else:
        policy = policy.with_columns(pscore_cascade=pl.lit("0.5"))
    message = (
        f"column 'pscore_cascade' in the {table} has dtype String; it must be numeric: "
        "cast it, e.g. pl.col('pscore_cascade').cast(pl.Float64)"
    )
    with pytest.raises(ColumnTypeError, match=re.escape(message)):
        irm.evaluate(log, ["slate_ips"], policy=policy)


def test_slate_unread_columns_absent_still_fine() -> None:
    # only the read columns are required: a log and policy with pscore alone
    log, policy = SLOG.select("round_id", "position", "reward", "pscore"), SPOLICY
    out = irm.evaluate(log, ["slate_ips"], policy=policy.select("round_id", "position", "pscore"))
    assert out["slate_ips"].item() == 0.5  # (1 * 1 + 0 * 1) / 2
