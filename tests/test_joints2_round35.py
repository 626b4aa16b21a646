"""Round 35, trust at the joints (2): ids spelt apart get the hint wherever they are
refused; a column no metric reads is refused, never ignored; integers a Float64 would
round are refused, never read rounded."""

from __future__ import annotations

from functools import partial
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from tests.helpers import engine_io, warned


def _frame(frame: pl.DataFrame, lazy: bool) -> Any:
    return frame.lazy() if lazy else frame


def _collected(got: Any) -> Any:
    """A result, a LazyFrame collected (where its checks raise)."""
    return got.collect() if isinstance(got, pl.LazyFrame) else got


_PS_RUN = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "rank": [1, 1]})
_PS_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})
_PS_QUERY = (
    "propensities= has a 'query_id' column, which the propensity-scored metrics do not "
    "read: they weigh {}, the same in every query, not one per ('query_id', '{}'); drop "
    "the column, with one row per '{}', e.g. propensities.drop('query_id').unique()"
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("table", "message"),
    [
        # before: a document under two queries refused as listed twice, no word of why
        (
            {"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "propensity": [0.5, 0.25]},
            _PS_QUERY.format(
                "a relevant document by its one propensity (pyxclib's per-label one)",
                "doc_id",
                "doc_id",
            ),
        ),
        # before: read as d1's propensity in every query (q2's 0.5 too), the column ignored
        (
            {"query_id": ["q1"], "position": [1], "propensity": [0.5]},
            _PS_QUERY.format(
                "a click at a rank by that rank's one examination propensity",
                "position",
                "position",
            ),
        ),
    ],
)
def test_propensities_with_a_query_column_refused(
    table: dict[str, list[Any]], message: str, lazy: bool
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(
            _frame(_PS_RUN, lazy),
            ["ps_precision@1"],
            qrels=_frame(_PS_QRELS, lazy),
            propensities=_frame(pl.DataFrame(table), lazy),
        )
    assert str(caught.value) == message


_DWELL_LOG = pl.DataFrame(
    {
        "session_id": ["s1", "s2"],
        "position": [1, 1],
        "clicked": [True, True],
        "dwell": [2**53 + 3, 2**53],
    }
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("log", "threshold", "error", "message"),
    [
        # before: 2**53 + 3 read as 2**53 + 4, satisfied: 0.5 where 0.0 is right
        (
            _DWELL_LOG,
            2**53 + 4,
            InvalidValueError,
            "column 'dwell' of the log has 1 value(s) of magnitude 2**53 or more in session "
            "'s1'; a dwell is read as seconds, in Float64, which holds such values to a few "
            "units only (2**53 + 1 reads as 2**53), so a threshold would compare rounded "
            "dwells: rescale the column and dwell_threshold by one factor, e.g. "
            "pl.col('dwell') / 1000 for milliseconds, or cast it to Float64 to read it so "
            "rounded, pl.col('dwell').cast(pl.Float64)",
        ),
        # before: the threshold read as 2**53, a dwell of 2**53 satisfied (0.5, not 0)
        (
            _DWELL_LOG.with_columns(pl.col("dwell").cast(pl.Float64)),
            2**53 + 1,
            MetricParameterError,
            "metric 'sat_click_rate(dwell_threshold=9007199254740993)': dwell_threshold "
            "must be a number of seconds that a Float64 holds exactly, got "
            "9007199254740993 (read as 9007199254740992.0: the dwells are compared with it "
            "in Float64); rescale the dwells and the threshold by one factor, e.g. to "
            "thousands of seconds",
        ),
    ],
)
def test_sat_click_rate_refuses_rounded_dwells(
    log: pl.DataFrame, threshold: int, error: type[Exception], message: str, lazy: bool
) -> None:
    metrics = [f"sat_click_rate(dwell_threshold={threshold})"]
    with pytest.raises(error) as caught:
        _collected(irm.evaluate_online(_frame(log, lazy), metrics))
    assert str(caught.value) == message


def test_sat_click_rate_exact_dwells_read_as_they_are() -> None:
    # below 2**53 an integer dwell is exact: the threshold splits the two sessions
    log = _DWELL_LOG.with_columns(pl.Series("dwell", [2**53 - 1, 2**53 - 2]))
    got = irm.evaluate_online(log, [f"sat_click_rate(dwell_threshold={2**53 - 1})"])
    assert got.item(0, 1) == 0.5


_RECS = pl.DataFrame({"user_id": [1, 1, 2], "item_id": ["a", "b", "c"], "rank": [1, 2, 1]})
_SPELT = (
    "2 item id(s) of the {0} match an id of the interactions only when case is ignored "
    "('a' against 'A'): ids are compared exactly; give the {0} and the interactions the "
    "same spelling, e.g. pl.col('item_id').str.to_lowercase() on each."
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("route", ["beyond_accuracy", "evaluate"])
def test_recsys_items_spelt_apart_get_the_hint(route: str, lazy: bool) -> None:
    interactions = _frame(pl.DataFrame({"user_id": [1, 2], "item_id": ["A", "C"]}), lazy)
    recs = _frame(_RECS, lazy)
    frame = "recommendations" if route == "beyond_accuracy" else "run"
    call = (
        irm.beyond_accuracy
        if route == "beyond_accuracy"
        else partial(irm.evaluate, query_id="user_id", doc_id="item_id")
    )
    with pytest.raises(InvalidValueError) as caught:
        _collected(call(recs, ["novelty"], interactions=interactions))
    # before: the refusal alone, no word of the spelling
    assert str(caught.value) == (
        "item 'a' (recommended to user 1) never occurs in the interactions, so it has no "
        "popularity (3 recommendations name such items): add its interactions to "
        "interactions=..., or drop it from the recommendations. " + _SPELT.format(frame)
    )


def test_recsys_items_spelt_apart_get_the_hint_on_dask(request: pytest.FixtureRequest) -> None:
    # the engines refuse unseen items from every part's rows merged: the same words
    evaluate, to_engine, back = engine_io("dask", request)
    interactions = pl.DataFrame({"user_id": [1, 2], "item_id": ["A", "C"]})
    keys = {"query_id": "user_id", "doc_id": "item_id"}
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(_RECS, ["novelty"], interactions=interactions, **keys)
    with pytest.raises(InvalidValueError) as engine:
        back(evaluate(to_engine(_RECS), ["novelty"], interactions=to_engine(interactions), **keys))
    assert str(engine.value) == str(caught.value)
    assert str(caught.value).endswith(_SPELT.format("run"))


_LOG = pl.DataFrame(
    {"round_id": [1, 2], "action": [0, 1], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
)
_POLICY = pl.DataFrame({"round_id": [1, 1, 2, 2], "action": [0, 1, 0, 1], "prob": [0.5] * 4})
_WIDE_Q = (
    "column 'q_hat' of the reward_model table ({}) has 1 value(s) of magnitude 2**53 or "
    "more (first: round_id=1, action={}, q_hat=9007199254740993); the estimates read q_hat "
    "as Float64 numbers, which hold such values to a few units only (2**53 + 1 reads as "
    "2**53): rescale the rewards and 'q_hat' by one factor (every estimate scales with "
    "them), e.g. pl.col('q_hat') / 1000, or cast the column to Float64 to read it so "
    "rounded, pl.col('q_hat').cast(pl.Float64)"
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("policy", "model", "message"),
    [
        # before: dm read q_hat 2**53 + 1 as 2**53 (below 2**62: no refusal)
        (
            _POLICY,
            _POLICY.select("round_id", "action", q_hat=pl.Series([2**53 + 1, 3, 3, 3])),
            _WIDE_Q.format("Int64", 0),
        ),
        # the list shape: the item's index is the action
        (
            pl.DataFrame({"round_id": [1, 2], "prob": [[0.5, 0.5]] * 2}),
            pl.DataFrame({"round_id": [1, 2], "q_hat": [[3, 2**53 + 1], [1, 2]]}),
            _WIDE_Q.format("List(Int64)", 1),
        ),
    ],
)
def test_ope_integer_q_hat_beyond_2_53_refused(
    policy: pl.DataFrame, model: pl.DataFrame, message: str, lazy: bool
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        _collected(
            irm.evaluate(
                _frame(_LOG, lazy),
                ["dm", "dr"],
                policy=_frame(policy, lazy),
                reward_model=_frame(model, lazy),
            )
        )
    assert str(caught.value) == message


_NEVER = (
    "the policy gives a positive probability to 1 action(s) never logged (e.g. "
    "action={}): the logging policy never took them, so the log cannot support this "
    "policy and every estimate of it is biased (the direct method extrapolates the "
    "reward model there)"
)
_SHIFTED = (
    ". The actions the policy takes hold every logged action {0} one, from the log's "
    "lowest {0} one: ids numbered from {1} in the log and from {2} in policy= ({1}-based "
    "against {2}-based)? If both number the same actions, give policy= (and "
    "reward_model=) the log's numbering, e.g. pl.col('action') {3} in each"
)
_SHIFT_LOG = pl.DataFrame(
    {"round_id": [1, 2, 3], "action": [0, 1, 0], "reward": [1.0, 0.0, 1.0], "pscore": [0.5] * 3}
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("log_actions", "policy_actions", "said"),
    [
        # before: "action never logged (action=2)" alone
        ([0, 1, 0], [1, 2], _NEVER.format(2) + _SHIFTED.format("plus", 0, 1, "- 1")),
        ([1, 2, 1], [0, 1], _NEVER.format(0) + _SHIFTED.format("minus", 1, 0, "+ 1")),
        # not a shift (the policy takes 3, not the log's 0 plus one): no hint
        ([0, 1, 0], [1, 3], _NEVER.format(3)),
    ],
)
def test_ope_actions_off_by_one_hint(
    log_actions: list[int], policy_actions: list[int], said: str, lazy: bool
) -> None:
    log = _SHIFT_LOG.with_columns(pl.Series("action", log_actions))
    policy = pl.DataFrame(
        {"round_id": [1, 1, 2, 2, 3, 3], "action": policy_actions * 3, "prob": [0.5] * 6}
    )
    _, messages = warned(
        lambda: irm.evaluate(_frame(log, lazy), ["ips"], policy=_frame(policy, lazy))
    )
    assert messages == [said]
