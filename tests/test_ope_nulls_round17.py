"""Off-policy evaluation, round 17: a null round (or position) in policy= or
reward_model= is refused by the argument and the column, as every other side table's
null id is (``null_ids_error``). Such a row meets no log row: an extra one was dropped
in silence, and a round whose own row was nulled was refused as a round that "does not
sum to 1" (or as one the policy lacks), which pointed at the wrong problem."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4],
        "action": [0, 1, 0, 1],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.5, 0.5, 0.4, 0.6],
    }
)
PROBS = [[0.9, 0.1], [0.3, 0.7], [0.5, 0.5], [0.2, 0.8]]
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3, 4, 4],
        "action": [0, 1] * 4,
        "prob": [p for row in PROBS for p in row],
    }
)
LISTS = pl.DataFrame({"round_id": [1, 2, 3, 4], "prob": PROBS})
MODEL = POLICY.select("round_id", "action", q_hat=pl.lit(0.5))
MODEL_LISTS = LISTS.select("round_id", q_hat=pl.lit([0.5, 0.5]))


def _nulled(frame: pl.DataFrame, row: int, column: str = "round_id") -> pl.DataFrame:
    """``frame`` with ``column`` null on ``row``."""
    return frame.with_columns(
        pl.when(pl.int_range(pl.len()) == row).then(None).otherwise(pl.col(column)).alias(column)
    )


def _extra(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with a copy of its first row whose round is null."""
    return pl.concat([frame, _nulled(frame.head(1), 0)])


LONG = "each row gives one action's {} in one round"
LISTED = "each row gives one round's {}, a list by action"


def _message(keyword: str, row: str, columns: str = "'round_id'") -> str:
    return (
        f"{keyword}= has 1 row(s) with a null {columns}: {row}, and a null id names none; "
        f"fill or drop them, e.g. {keyword}.drop_nulls([{columns.replace(' or ', ', ')}])"
    )


P_LONG = _message("policy", LONG.format("probability"))
P_LISTED = _message("policy", LISTED.format("probabilities"))
Q_LONG = _message("reward_model", LONG.format("q_hat"))
Q_LISTED = _message("reward_model", LISTED.format("q_hat"))
CASES = [
    # (name, metrics, policy, reward model, message)
    ("policy_extra", ["ips"], _extra(POLICY), None, P_LONG),
    # round 1's action 0 nulled: the round's probabilities sum to 0.1, which was the error
    ("policy_nulled", ["ips"], _nulled(POLICY, 0), None, P_LONG),
    ("lists_extra", ["ips"], _extra(LISTS), None, P_LISTED),
    ("lists_nulled", ["ips"], _nulled(LISTS, 1), None, P_LISTED),
    ("model_extra", ["dm"], POLICY, _extra(MODEL), Q_LONG),
    ("model_nulled", ["dr"], POLICY, _nulled(MODEL, 2), Q_LONG),
    ("model_lists", ["dm"], LISTS, _nulled(MODEL_LISTS, 3), Q_LISTED),
]


@pytest.mark.parametrize(
    ("name", "metrics", "policy", "model", "message"), CASES, ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize(
    "options", [{}, {"buckets": 2}, {"per_query": True}], ids=["plan", "buckets", "per_query"]
)
def test_a_null_round_of_a_side_table_is_refused_by_name(
    name: str,
    metrics: list[str],
    policy: pl.DataFrame,
    model: pl.DataFrame | None,
    message: str,
    options: dict[str, Any],
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(LOG, metrics, policy=policy, reward_model=model, **options)
    assert str(caught.value) == message


@pytest.mark.parametrize("buckets", [2, 3, 5, 8, 16])
@pytest.mark.parametrize("by", [None, "segment"])
def test_a_bucket_of_no_log_row_does_not_hide_the_null_round(buckets: int, by: str | None) -> None:
    # every null round hashes to one bucket; with 5 buckets, none of the 4 logged
    # rounds is there, and that bucket had no log row to carry the refusal: 1.0958 in
    # silence. The side tables' null-id rows now go with the log's first row.
    log = LOG.with_columns(segment=pl.lit("x")) if by else LOG
    plan = irm.evaluate(log.lazy(), ["ips"], policy=_extra(POLICY).lazy(), buckets=buckets, by=by)
    with pytest.raises(InvalidValueError) as caught:
        plan.collect()
    assert str(caught.value) == P_LONG


def test_the_count_is_of_the_rows_with_a_null_id() -> None:
    policy = pl.concat([POLICY, _nulled(POLICY.head(3), 0), _nulled(POLICY.head(3), 1)])
    with pytest.raises(InvalidValueError, match=r"^policy= has 2 row\(s\) with a null"):
        irm.evaluate(LOG, ["ips"], policy=policy)


def test_cascade_and_slate_policies_name_the_position_too() -> None:
    log = pl.DataFrame(
        {
            "round_id": [1, 1],
            "position": [1, 2],
            "action": [0, 1],
            "reward": [1.0, 0.0],
            "pscore_cascade": [0.5, 0.25],
        }
    )
    policy = pl.DataFrame(
        {
            "round_id": [1] * 4,
            "position": [1, 1, 2, 2],
            "action": [0, 1] * 2,
            "prob": [1.0, 0.0, 0.4, 0.6],
        }
    )
    columns = "'round_id' or 'position'"
    row = "each row gives one action's probability in one round and position"
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(
            log,
            ["cascade_dr"],
            reward_model=policy.rename({"prob": "q_hat"}),
            policy=_nulled(policy, 3, "position"),
        )
    assert str(caught.value) == _message("policy", row, columns)
    slate = log.drop("action", "pscore_cascade").with_columns(pscore=pl.lit(0.25))
    slate_policy = slate.select("round_id", "position", pscore=pl.lit(0.5))
    row = "each row gives the evaluation policy's propensities of one logged slot"
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(slate, ["slate_ips"], policy=_extra(slate_policy))
    assert str(caught.value) == _message("policy", row, columns)
    # and without the null row: 2 (1 + 0) * 0.5 / 0.25 over one round
    assert irm.evaluate(slate, ["slate_ips"], policy=slate_policy)["slate_ips"].item() == 2.0
