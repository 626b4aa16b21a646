"""A slate log's propensities of the wrong shape are refused, as obp refuses them: a
slate's ``pscore`` (the whole slate's probability) taking two values in one round, and
a ``pscore_cascade`` (the top-l prefix's) rising down the slate, in the log or in the
policy table. Accepted, the estimators read one slot's value as the slate's: on the log
below, ``slate_ips`` was 1.75 where no reading of the log gives a slate one weight."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io


def _log(**columns: list[float]) -> pl.DataFrame:
    base = {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.25] * 4,
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25],
    }
    return pl.DataFrame({**base, **columns})


def _policy(**columns: list[float]) -> pl.DataFrame:
    base = {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "pscore": [0.5, 0.5, 0.125, 0.125],
        "pscore_cascade": [0.5, 0.5, 0.5, 0.5],
    }
    return pl.DataFrame({**base, **columns})


_SLATE = (
    "column 'pscore' of the {table} takes more than one value in a round on 2 row(s) "
    "(first: round_id={round}, position=1): it is the probability of the whole slate, one "
    "value per round (obp: 'unique in each slate'): give each round's rows the slate's "
    "probability"
)
_CASCADE = (
    "column 'pscore_cascade' of the {table} rises from one position to the next in a round "
    "on 1 row(s) (first: round_id={round}, position=2): it is the probability of the "
    "slate's top positions up to this one, which cannot rise further down the slate (obp: "
    "'non-increasing sequence in each slate'): check the positions and the products"
)

CASES = [
    # the log's slate propensity 0.25 at position 1 and 0.5 at 2 of round 1
    ("log", _log(pscore=[0.25, 0.5, 0.25, 0.25]), _policy(), _SLATE, 1),
    ("policy table", _log(), _policy(pscore=[0.5, 0.5, 0.125, 0.25]), _SLATE, 2),
    # 0.5 then 0.6: the top-2 prefix more likely than the top one
    ("log", _log(pscore_cascade=[0.5, 0.6, 0.5, 0.25]), _policy(), _CASCADE, 1),
    ("policy table", _log(), _policy(pscore_cascade=[0.5, 0.5, 0.4, 0.5]), _CASCADE, 2),
]


@pytest.mark.parametrize("metric", ["slate_ips", "slate_rips", "slate_snips"])
@pytest.mark.parametrize(("table", "log", "policy", "message", "round_id"), CASES)
@pytest.mark.parametrize("buckets", [None, 2])
def test_a_propensity_of_the_wrong_shape_is_refused_whichever_metric_reads_it(
    metric: str,
    table: str,
    log: pl.DataFrame,
    policy: pl.DataFrame,
    message: str,
    round_id: int,
    buckets: int | None,
) -> None:
    # every propensity column a table has is checked, read by the metric or not
    expected = message.format(table=table, round=round_id)
    with pytest.raises(irm.errors.InvalidValueError, match=re.escape(expected)):
        irm.evaluate(log.lazy(), [metric], policy=policy.lazy(), buckets=buckets).collect()


def test_the_cascade_is_read_in_order_of_position_not_of_rows() -> None:
    # the rows of each round listed bottom slot first: falling by position, accepted
    log = _log().reverse()
    policy = _policy().reverse()
    out = irm.evaluate(log, ["slate_ips", "slate_rips"], policy=policy)
    # slate_ips: weights 0.5/0.25 = 2 (round 1) and 0.125/0.25 = 0.5 (round 2); rewards
    # 1 + 0 and 1 + 1: (2 * 1 + 0.5 * 2) / 2 = 1.5
    assert out["slate_ips"].item() == 1.5
    # slate_rips: weights 0.5/0.5 = 1 and 0.5/0.25 = 2 at positions 1 and 2 of each
    # round: (1 * 1 + 2 * 0 + 1 * 1 + 2 * 1) / 2 = 2.0
    assert out["slate_rips"].item() == 2.0
    # the same rows with a rise at position 2 of round 2, the rows still reversed
    rising = _log(pscore_cascade=[0.5, 0.25, 0.25, 0.5]).reverse()
    expected = _CASCADE.format(table="log", round=2)
    with pytest.raises(irm.errors.InvalidValueError, match=re.escape(expected)):
        irm.evaluate(rising, ["slate_ips"], policy=policy)


def test_equal_propensities_stay_accepted() -> None:
    # a constant cascade (no fall) and one slate value per round: the estimate as before
    out = irm.evaluate(_log(pscore_cascade=[0.5] * 4), ["slate_ips"], policy=_policy())
    assert out["slate_ips"].item() == 1.5


@pytest.mark.parametrize("buckets", [None, 2])
def test_cascade_dr_refuses_a_rising_cascade_in_the_log(buckets: int | None) -> None:
    # obp's cascade fixture, round 0's third slot given 0.99 (above its second's
    # 1/30): the weight of that slot divided by it, a product no logging policy gives
    fixtures = Path(__file__).parent / "fixtures" / "ope" / "slate_cascade_s0_"
    log, policy, model = (
        pl.read_parquet(f"{fixtures}{table}.parquet")
        for table in ("log", "cascade_policy", "cascade_reward_model")
    )
    third = (pl.col("round_id") == 0) & (pl.col("position") == 3)
    rising = log.with_columns(
        pl.when(third).then(0.99).otherwise(pl.col("pscore_cascade")).alias("pscore_cascade")
    )
    expected = _CASCADE.format(table="log", round=0).replace("position=2", "position=3")
    with pytest.raises(irm.errors.InvalidValueError, match=re.escape(expected)):
        irm.evaluate(
            rising.lazy(), ["cascade_dr"], policy=policy, reward_model=model, buckets=buckets
        ).collect()
    # the log as obp made it: accepted
    irm.evaluate(log, ["cascade_dr"], policy=policy, reward_model=model, buckets=buckets)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_engines_refuse_a_slate_pscore_that_varies(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # each task holds whole rounds: the same refusal as the one plan's
    evaluate, frame, back = engine_io(engine, request)
    log = _log(pscore=[0.25, 0.5, 0.25, 0.25])
    expected = _SLATE.format(table="log", round=1)
    with pytest.raises(irm.errors.InvalidValueError, match=re.escape(expected)):
        back(evaluate(frame(log), ["slate_ips"], policy=frame(_policy()), partitions=2))
