"""Round 31: the off-policy wing's ids that do not line up (a policy whose actions are
spelt apart from the log's in some rounds only, which read as weights of 0 with no word
of the spelling; a ``by=`` key that varies within a round of a position-wise log; a
slate policy table of 0-based positions, which read each logged slot's neighbour)."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from tests.helpers import engine_io, warned

LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4],
        "action": ["a1", "b2", "a1", "b2"],
        "reward": [1.0, 0.0, 1.0, 0.0],
        "pscore": [0.5] * 4,
    }
)
#: Rounds 1 and 2 spelt in capitals: their logged actions read as probability 0.
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3, 4, 4],
        "action": ["A1", "B2", "A1", "B2", "a1", "b2", "a1", "b2"],
        "prob": [0.8, 0.2] * 4,
    }
)

PARTLY_SPELT_APART = (
    "the policy gives a positive probability to 2 action(s) never logged (e.g. action=A1): "
    "the logging policy never took them, so the log cannot support this policy and every "
    "estimate of it is biased (the direct method extrapolates the reward model there). Some "
    "of them may be logged actions spelt apart, whose rows then read the logged action's "
    "probability as 0 (an importance weight of 0): 2 action id(s) of policy= match an id of "
    "the log only when case is ignored ('A1' against 'a1'): ids are compared exactly; give "
    "policy= and the log the same spelling, e.g. pl.col('action').str.to_lowercase() on each."
)


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
def test_a_policy_spelt_apart_in_some_rounds_names_the_spelling(lazy: bool) -> None:
    # before: the support warning named 'A1' as an action never logged, not as 'a1'
    # spelt apart, and ips was 0.4 (rounds 1 and 2 weighed 0) where the ids mean 0.8
    log, policy = (LOG.lazy(), POLICY.lazy()) if lazy else (LOG, POLICY)
    got, said = warned(lambda: irm.evaluate(log, ["ips"], policy=policy))
    assert said == [PARTLY_SPELT_APART]
    assert got["ips"].item() == pytest.approx(0.4, abs=1e-15)
    fixed = POLICY.with_columns(pl.col("action").str.to_lowercase())
    got, said = warned(lambda: irm.evaluate(log, ["ips"], policy=fixed))
    assert said == []
    assert got["ips"].item() == pytest.approx(0.8, abs=1e-15)


def test_unlogged_actions_that_match_no_logged_one_get_no_hint() -> None:
    # a policy that also takes an action the logger never took ('c3'): no hint
    policy = POLICY.with_columns(pl.col("action").str.to_lowercase().replace("b2", "c3"))
    _, said = warned(lambda: irm.evaluate(LOG, ["ips"], policy=policy))
    assert said == [
        "the policy gives a positive probability to 1 action(s) never logged (e.g. "
        "action=c3): the logging policy never took them, so the log cannot support this "
        "policy and every estimate of it is biased (the direct method extrapolates the "
        "reward model there)"
    ]


#: A position-wise log of two rounds of two slots; slot 2 of round 1 in segment 'y'.
POSITIONS = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": ["a", "b", "b", "a"],
        "reward": [1.0, 1.0, 1.0, 0.0],
        "pscore": [0.5] * 4,
        "segment": ["x", "y", "x", "x"],
    }
)
POSITION_POLICY = pl.DataFrame(
    {
        "round_id": [1] * 4 + [2] * 4,
        "position": [1, 1, 2, 2] * 2,
        "action": ["a", "b"] * 4,
        "prob": [0.75, 0.25, 0.25, 0.75] * 2,
    }
)


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
def test_a_by_key_varying_within_a_round_of_a_position_wise_log_is_per_slot(
    lazy: bool,
) -> None:
    # the single-action estimators are means over the log's rows (slots): a key that
    # varies within a round groups slots, each read alone (the slate estimators and
    # cascade_dr, which sum a round's slots, refuse it)
    log, policy = POSITIONS, POSITION_POLICY
    if lazy:
        log, policy = POSITIONS.lazy(), POSITION_POLICY.lazy()
    got, said = warned(lambda: irm.evaluate(log, ["ips", "snips"], policy=policy, by="segment"))
    assert said == []
    got = got.sort("segment")
    # x: weights 1.5, 0.5, 0.5 on rewards 1, 1, 0; y: weight 1.5 on reward 1
    assert got["num_rows"].to_list() == [3, 1]
    assert got["ips"].to_list() == pytest.approx([2 / 3, 1.5], abs=1e-15)
    assert got["snips"].to_list() == pytest.approx([0.8, 1.0], abs=1e-15)
    rows = irm.evaluate(POSITIONS, ["ips"], policy=POSITION_POLICY, per_query=True)
    assert rows.sort("round_id", "position")["ips"].to_list() == [1.5, 1.5, 0.5, 0.0]


#: A slate log of two rounds of two slots, positions 1 and 2.
SLATE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.125] * 4,
        "pscore_item_position": [0.5] * 4,
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25],
    }
)
#: The evaluation policy's three slots of each round, numbered from 0.
SLATE_POLICY_0_BASED = pl.DataFrame(
    {
        "round_id": [1, 1, 1, 2, 2, 2],
        "position": [0, 1, 2] * 2,
        "pscore": [0.045] * 6,
        "pscore_item_position": [0.9, 0.5, 0.1] * 2,
        "pscore_cascade": [0.9, 0.45, 0.045] * 2,
    }
)


POLICY_BELOW_1 = (
    "column 'position' of the policy table has a position below 1 in a logged round "
    "(first: round_id=1, position=1, 4 log row(s) in all); positions start at 1 for the "
    "top: add 1 to 0-based positions, e.g. pl.col('position') + 1"
)


def _collected(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


@pytest.mark.parametrize("options", [{}, {"buckets": 2}], ids=["one plan", "buckets"])
@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
def test_a_slate_policy_of_0_based_positions_is_refused(lazy: bool, options: dict) -> None:
    # before: its positions 1 and 2 (the slate's 2nd and 3rd slots) met the log's 1 and 2,
    # slate_iips 1.1 where the slots' own propensities give 2.3, with only a SupportWarning
    # naming position 0 as a slot the log never shows; ips refused it already
    log, policy = SLATE_LOG, SLATE_POLICY_0_BASED
    if lazy:
        log, policy = log.lazy(), policy.lazy()
    with pytest.raises(InvalidValueError) as caught:
        _collected(irm.evaluate(log, ["slate_iips", "slate_rips"], policy=policy, **options))
    assert str(caught.value) == POLICY_BELOW_1
    fixed = SLATE_POLICY_0_BASED.with_columns(pl.col("position") + 1)
    got, _ = warned(lambda: irm.evaluate(SLATE_LOG, ["slate_iips"], policy=fixed))
    assert got["slate_iips"].item() == pytest.approx(2.3, abs=1e-15)


def test_dask_gives_the_spelling_hint_and_the_slate_refusal(
    request: pytest.FixtureRequest,
) -> None:
    """Dask hands the warning's distinct actions, and the parts' checks, to the same
    words."""
    evaluate, to_engine, from_engine = engine_io("dask", request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = from_engine(evaluate(to_engine(LOG), ["ips"], policy=to_engine(POLICY)))
    said = [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]
    assert said == [PARTLY_SPELT_APART]
    assert got["ips"].item() == pytest.approx(0.4, abs=1e-15)
    tables = to_engine(SLATE_LOG), to_engine(SLATE_POLICY_0_BASED)
    with pytest.raises(InvalidValueError) as refused:
        from_engine(evaluate(tables[0], ["slate_iips"], policy=tables[1]))
    assert str(refused.value) == POLICY_BELOW_1
