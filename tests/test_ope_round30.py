"""Round 30: the off-policy wing's audit (per_query's round values of the slate
estimators and cascade_dr at any magnitude; ...)."""

from __future__ import annotations

import math
import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, SupportWarning

#: Two slates of two slots, logged with probability 0.25 (weights 2 and 0.5 times ``e``).
SLATE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.25] * 4,
    }
)

#: A cascade log of three rounds; ``pscore_cascade`` of round 1 set by each case.
CASCADE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3],
        "position": [1, 2, 1, 2, 1],
        "action": ["a", "b", "b", "a", "a"],
        "reward": [1.0, 0.0, 1.0, 1.0, 1.0],
        "pscore": [0.25] * 5,
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25, 0.5],
    }
)
CASCADE = pl.DataFrame(
    {
        "round_id": [1] * 4 + [2] * 4 + [3] * 2,
        "position": [1, 1, 2, 2] * 2 + [1, 1],
        "action": ["a", "b"] * 5,
        "prob": [0.6, 0.4, 0.3, 0.7, 0.5, 0.5, 0.2, 0.8, 0.9, 0.1],
        "q_hat": [0.5, 0.2] * 5,
    }
)


def _slate(e: float, reward: float) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    log = SLATE_LOG.with_columns(pl.col("reward") * reward)
    pscore = pl.Series([0.5, 0.5, 0.125, 0.125]) * e
    return log, {"policy": log.select("round_id", "position", pscore=pscore)}


def _cascade(top: float) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    log = CASCADE_LOG.with_columns(
        pscore_cascade=pl.Series([top, top / 2, 0.5, 0.25, 0.5]),
    )
    return log, {"policy": CASCADE.drop("q_hat"), "reward_model": CASCADE.drop("prob")}


def _run(
    kind: str, log: pl.DataFrame, metric: str | list[str], *, per_query: bool = True, **tables: Any
) -> pl.DataFrame:
    if kind == "lazy":
        lazy = {
            name: table.lazy() if isinstance(table, pl.DataFrame) else table
            for name, table in tables.items()
        }
        metrics = [metric] if isinstance(metric, str) else metric
        out = irm.evaluate(log.lazy(), metrics, per_query=per_query, **lazy)
        return out.collect() if isinstance(out, pl.LazyFrame) else out
    metrics = [metric] if isinstance(metric, str) else metric
    return irm.evaluate(log, metrics, per_query=per_query, **tables)


# (case, metric, tables, each round's value): the rounds' values a power of two apart
# from the plain case's (the weights or the rewards scaled), exact, where they were a few
# 1e-9 off (tiny weights) or NaN (values of 2**96 or more) before
ROUND_VALUES = [
    ("slate weights 1e-12", "slate_ips", _slate(1e-12, 1.0), [2e-12, 1e-12]),
    ("slate huge rewards", "slate_ips", _slate(1.0, 2.0**100), [2.0**101, 2.0**100]),
    ("slate_snips huge", "slate_snips", _slate(1.0, 2.0**300), [1.6 * 2.0**300, 0.8 * 2.0**300]),
    # round 1's value 0.306 * 2**100 + 0.38 (checked through the estimate below)
    ("cascade huge weights", "cascade_dr", _cascade(2.0**-100), None),
]


@pytest.mark.parametrize("kind", ["frame", "lazy"])
@pytest.mark.parametrize(
    ("metric", "case", "expected"),
    [(m, c, e) for _, m, c, e in ROUND_VALUES],
    ids=[name for name, *_ in ROUND_VALUES],
)
def test_per_query_round_values_at_any_magnitude(
    kind: str,
    metric: str,
    case: tuple[pl.DataFrame, dict[str, pl.DataFrame]],
    expected: list[float] | None,
) -> None:
    log, tables = case
    values = _run(kind, log, metric, **tables)[metric].to_list()
    if expected is not None:
        assert values == expected
    # their mean is the estimate, as obp's rounds' values average to its estimate
    (estimate,) = irm.evaluate(log, [metric], **tables)[metric].to_list()
    assert math.fsum(values) / len(values) == pytest.approx(estimate, rel=1e-15)


# a slot value beyond float64's range: refused in the estimate's words, not a NaN round
BEYOND = [
    (
        "slate",
        "slate_ips",
        _slate(1.0, 1e308),
        "metric 'slate_ips' cannot be summed: a term of its sums is beyond float64's range "
        "(a slate weight, the policy's propensity over the log's, times a huge 'reward')",
    ),
    (
        "slate self-normalised",
        "slate_snips",
        _slate(1.0, 1e308),
        "metric 'slate_snips' cannot be summed: a term of its sums is beyond float64's range "
        "(a slate weight, the policy's propensity over the log's, times a huge 'reward')",
    ),
    (
        "cascade",
        "cascade_dr",
        _cascade(1e-300),
        "metric 'cascade_dr' cannot be summed: a term of its sums is beyond float64's range "
        "(an importance weight, the policy's cascade probability over 'pscore_cascade', "
        "times a huge 'reward' or 'q_hat')",
    ),
]


@pytest.mark.parametrize("kind", ["frame", "lazy"])
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize(
    ("metric", "case", "message"),
    [(m, c, t) for _, m, c, t in BEYOND],
    ids=[name for name, *_ in BEYOND],
)
def test_per_query_refuses_a_value_beyond_range_as_the_estimate(
    kind: str,
    per_query: bool,
    metric: str,
    case: tuple[pl.DataFrame, dict[str, pl.DataFrame]],
    message: str,
) -> None:
    log, tables = case
    if metric == "cascade_dr":  # a huge reward on the huge weight's slot
        log = log.with_columns(
            pl.when(pl.col("round_id") == 1).then(1e300).otherwise(0.0).alias("reward")
        )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _run(kind, log, metric, per_query=per_query, **tables)


#: The single-action log of three rounds and its policy and reward model.
LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3],
        "action": ["a", "a", "a"],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.5],
    }
)
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3],
        "action": ["a", "b"] * 3,
        "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9],
    }
)
MODEL = POLICY.select("round_id", "action", q_hat=pl.Series([0.6, 0.3] * 3))

# an infinite reward: refused as a data check for every estimator (dm, which reads no
# reward, took the log; per_query gave ips an inf row; the others refused it in words
# about huge weights)
INFINITE_REWARD = [
    ("dm", "dm", LOG, {"policy": POLICY, "reward_model": MODEL}, "round_id=2"),
    ("ips", "ips", LOG, {"policy": POLICY}, "round_id=2"),
    ("slate_ips", "slate_ips", *_slate(1.0, 1.0), "round_id=1, position=2"),
    ("cascade_dr", "cascade_dr", *_cascade(0.5), "round_id=1, position=2"),
]


@pytest.mark.parametrize("kind", ["frame", "lazy"])
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize(
    ("metric", "log", "tables", "first"),
    [case[1:] for case in INFINITE_REWARD],
    ids=[case[0] for case in INFINITE_REWARD],
)
def test_an_infinite_reward_is_refused_for_every_estimator(
    kind: str,
    per_query: bool,
    metric: str,
    log: pl.DataFrame,
    tables: dict[str, pl.DataFrame],
    first: str,
) -> None:
    # the second row's reward (round 2 of the single-action log, a slate's second slot)
    bad = log.with_columns(
        pl.when(pl.int_range(pl.len()) == 1)
        .then(float("-inf"))
        .otherwise(pl.col("reward"))
        .alias("reward")
    )
    message = (
        f"column 'reward' of the log has 1 infinite value(s) (first: {first}); every logged "
        "reward must be finite: drop those rows, or cap the rewards, e.g. "
        "pl.col('reward').clip(-1e300, 1e300)"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _run(kind, bad, metric, per_query=per_query, **tables)


#: The policy gives the logged action ``a`` probability 0 in round 1 (weight 0 there).
POLICY_0 = POLICY.with_columns(prob=pl.Series([0.0, 1.0, 0.5, 0.5, 0.1, 0.9]))
LISTED_LOG = LOG.with_columns(action=pl.lit(0))
LISTED_POLICY = pl.DataFrame({"round_id": [1, 2, 3], "prob": [[0.0, 1.0], [0.5, 0.5], [0.1, 0.9]]})


def _q(first: float) -> list[float]:
    return [first, 0.3, 0.6, 0.3, 0.6, 0.3]


# a q_hat of the logged action infinite (as read, at the rewards' scale) where the policy
# gives it 0: dr was NaN in silence (0 * (reward - inf)), now refused as a null or NaN one
LOGGED_Q = [
    ("long", LOG, POLICY_0, MODEL.with_columns(q_hat=pl.Series(_q(float("-inf"))))),
    (
        "listed",
        LISTED_LOG,
        LISTED_POLICY,
        pl.DataFrame(
            {"round_id": [1, 2, 3], "q_hat": [[float("inf"), 0.3], [0.6, 0.3], [0.6, 0.3]]}
        ),
    ),
    # finite, but beyond float64's range times the rewards' scale (2**996 for 1e-300)
    (
        "scaled",
        LOG.with_columns(pl.col("reward") * 1e-300),
        POLICY_0,
        MODEL.with_columns(q_hat=pl.Series([1e300, *(q * 1e-300 for q in _q(0.0)[1:])])),
    ),
]


@pytest.mark.parametrize("kind", ["frame", "lazy"])
@pytest.mark.parametrize(
    ("log", "policy", "model"),
    [case[1:] for case in LOGGED_Q],
    ids=[case[0] for case in LOGGED_Q],
)
def test_an_infinite_q_hat_of_the_logged_action_is_refused(
    kind: str, log: pl.DataFrame, policy: pl.DataFrame, model: pl.DataFrame
) -> None:
    message = (
        "the reward_model table has a 'q_hat' for the logged action that is infinite (or "
        "beyond float64's range at the rewards' scale: q_hat times the power of two that "
        "brings the largest reward to [1, 2)) (first: round_id=1, 1 log row(s) in all)"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _run(kind, log, "dr", per_query=False, policy=policy, reward_model=model)


# action= and propensity= beside estimators that read neither (slates) or not
# propensity= (cascade_dr, its 'pscore_cascade'): refused, where they were ignored
UNREAD = [
    (
        "slate propensity",
        "slate_ips",
        _slate(1.0, 1.0),
        {"propensity": "pscore_cascade"},
        "propensity='pscore_cascade' is not read by metric 'slate_ips': the slate estimators "
        "read the logging policy's propensities under obp's names (pscore, "
        "pscore_item_position, pscore_cascade), in the log and the policy table; drop "
        "propensity= (it would change nothing), and rename the column instead, e.g. "
        "log.rename({'pscore_cascade': 'pscore'})",
    ),
    (
        "slate action",
        "slate_snips",
        _slate(1.0, 1.0),
        {"action": "item"},
        "action='item' is not read by metric 'slate_snips': the slate estimators read each "
        "slot's reward and propensities, not its action; drop action= (it would change "
        "nothing)",
    ),
    (
        "cascade propensity",
        "cascade_dr",
        _cascade(0.5),
        {"propensity": "p_cascade"},
        "propensity='p_cascade' is not read by metric 'cascade_dr': cascade_dr reads the "
        "logging policy's cascade propensity of each logged action in column "
        "'pscore_cascade' (obp's name); drop propensity= (it would change nothing), and "
        "rename the column instead, e.g. log.rename({'p_cascade': 'pscore_cascade'})",
    ),
]


@pytest.mark.parametrize("kind", ["frame", "lazy"])
@pytest.mark.parametrize(
    ("metric", "case", "option", "message"),
    [case[1:] for case in UNREAD],
    ids=[case[0] for case in UNREAD],
)
def test_an_option_a_slate_or_cascade_estimator_does_not_read_is_refused(
    kind: str,
    metric: str,
    case: tuple[pl.DataFrame, dict[str, pl.DataFrame]],
    option: dict[str, str],
    message: str,
) -> None:
    log, tables = case
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _run(kind, log, metric, per_query=False, **tables, **option)


# a by key that takes two values in one round of a slate log: the round was split, each
# part summed and counted as a round (num_rounds 3 for 2 rounds); cascade_dr refused it
# as a round with a gap. Now refused by name, after the by keys' null check
SPLIT = [
    ("slate_ips", *_slate(1.0, 1.0), "the slate estimators"),
    ("cascade_dr", *_cascade(0.5), "cascade_dr's estimates"),
]


@pytest.mark.parametrize("kind", ["frame", "lazy"])
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize(("metric", "log", "tables", "words"), SPLIT, ids=[c[0] for c in SPLIT])
def test_a_by_key_that_varies_within_a_slate_round_is_refused(
    kind: str,
    per_query: bool,
    metric: str,
    log: pl.DataFrame,
    tables: dict[str, pl.DataFrame],
    words: str,
) -> None:
    # round 1's second slot under another day
    split = log.with_columns(
        day=pl.when((pl.col("round_id") == 1) & (pl.col("position") == 2)).then(2).otherwise(1)
    )
    message = (
        "by=['day']: 2 log row(s) are in a round that holds more than one value of 'day' "
        f"(first: round_id=1, position=1); {words} sum each round's slots, and a key that "
        "varies within a round would split it into rounds of each group: give every row of "
        "a round its round's value, or group by a column fixed within each round"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _run(kind, split, metric, per_query=per_query, by="day", **tables)
    # one value per round: estimated per group
    whole = split.with_columns(day=pl.col("round_id"))
    assert _run(kind, whole, metric, per_query=per_query, by="day", **tables).height > 0


@pytest.mark.parametrize("kind", ["frame", "lazy"])
@pytest.mark.parametrize("metric", ["ips", "dr", "snips", "sndr"])
def test_a_per_query_row_beyond_range_is_refused_as_the_estimate(kind: str, metric: str) -> None:
    # a weight of 1.8e10 times a reward of 1e300: the estimate refused it, per_query
    # gave the row inf (ips, dr) or NaN (snips, sndr: inf over the mean weight)
    log = LOG.with_columns(
        reward=pl.Series([1e300, 0.0, 1.0]), pscore=pl.Series([5e-11, 0.5, 0.5])
    )
    tables = {"policy": POLICY} | ({"reward_model": MODEL} if "dr" in metric else {})
    message = (
        f"metric {metric!r} cannot be summed: a term of its sums is beyond float64's range "
        "(the product of a huge importance weight pi / 'pscore' and a huge 'reward' or "
        "'q_hat')"
    )
    for per_query in (False, True):
        with pytest.raises(InvalidValueError, match=re.escape(message)):
            _run(kind, log, metric, per_query=per_query, **tables)


# the policy gives every logged slate (logged action) of a group probability 0: every
# weight is 0, the slate IPS estimate 0 and the self-normalised NaN; warned, as the
# single-action estimators' groups are, where nothing was said
UNWEIGHTED = [
    (
        "slate by group",
        ["slate_ips", "slate_snips"],
        SLATE_LOG.with_columns(seg=pl.col("round_id")),
        {
            "policy": _slate(1.0, 1.0)[1]["policy"].with_columns(
                pscore=pl.when(pl.col("round_id") == 2).then(0.0).otherwise(pl.col("pscore"))
            )
        },
        "seg",
        "every importance weight of metrics 'slate_ips', 'slate_snips' is 0 in 1 by group(s) "
        "(first: seg=2): the policy gives each logged slate (each logged action, for "
        "cascade_dr) probability 0 there",
    ),
    (
        "slate whole log",
        ["slate_ips"],
        SLATE_LOG,
        {"policy": _slate(0.0, 1.0)[1]["policy"]},
        None,
        "every importance weight of metric 'slate_ips' is 0 in the log",
    ),
    (
        "cascade",
        ["cascade_dr"],
        CASCADE_LOG,
        {
            "policy": CASCADE.drop("q_hat").with_columns(
                prob=pl.Series([0.0, 1.0, 0.3, 0.7, 1.0, 0.0, 0.2, 0.8, 0.0, 1.0])
            ),
            "reward_model": CASCADE.drop("prob"),
        },
        None,
        "every importance weight of metric 'cascade_dr' is 0 in the log",
    ),
]


@pytest.mark.parametrize("kind", ["frame", "lazy", "buckets"])
@pytest.mark.parametrize(
    ("metrics", "log", "tables", "by", "message"),
    [case[1:] for case in UNWEIGHTED],
    ids=[case[0] for case in UNWEIGHTED],
)
def test_every_weight_0_in_a_slate_group_is_warned(
    kind: str,
    metrics: list[str],
    log: pl.DataFrame,
    tables: dict[str, pl.DataFrame],
    by: str | None,
    message: str,
) -> None:
    given = {"by": by} if by else {}
    if kind == "buckets":
        given["buckets"] = 2
    with pytest.warns(SupportWarning, match=re.escape(message)):
        out = _run(
            kind if kind == "frame" else "lazy", log, metrics, per_query=False, **tables, **given
        )
    assert out[f"{metrics[0]}_max_weight"].to_list()[-1] == 0.0
