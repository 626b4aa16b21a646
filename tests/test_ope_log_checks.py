"""The off-policy estimators' checks of the logged feedback: a null id, a round (and
position) logged twice and a position below 1 are refused, naming the column, the round
and the fix, on one machine and with ``buckets=``, the policy long or in lists."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError

_LOG = pl.DataFrame(
    {
        "round_id": [0, 1, 2],
        "action": [0, 1, 0],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.5],
    }
)
_PI = pl.DataFrame({"round_id": [0, 0, 1, 1, 2, 2], "action": [0, 1] * 3, "prob": [0.5] * 6})
_Q = _PI.select("round_id", "action", q_hat=pl.lit(0.5))
_POS_LOG = pl.DataFrame(
    {
        "round_id": [0, 0, 1, 1],
        "position": [1, 2, 1, 2],
        "action": [0, 1, 1, 0],
        "reward": [1.0, 0.0, 0.0, 1.0],
        "pscore": [0.5] * 4,
    }
)
_POS_PI = pl.DataFrame(
    {
        "round_id": [0, 0, 0, 0, 1, 1, 1, 1],
        "position": [1, 1, 2, 2] * 2,
        "action": [0, 1] * 4,
        "prob": [0.5] * 8,
    }
)


def _listed(long: pl.DataFrame, value: str) -> pl.DataFrame:
    keys = [c for c in ("round_id", "position") if c in long.columns]
    return long.sort([*keys, "action"]).group_by(keys, maintain_order=True).agg(pl.col(value))


def _set(frame: pl.DataFrame, row: int, **values: Any) -> pl.DataFrame:
    """``frame`` with the columns of ``values`` set at ``row``."""
    index = pl.int_range(pl.len()) == row
    return frame.with_columns(
        pl.when(index).then(pl.lit(v)).otherwise(pl.col(c)).alias(c) for c, v in values.items()
    )


def _null(column: str) -> str:
    return (
        f"column {column!r} of the log has 1 null value(s) (first: {{first}}): every logged "
        f"row needs its {column}: drop those rows, e.g. .drop_nulls({column!r})"
    )


_BELOW = (
    "column 'position' of the log has {n} position(s) below 1 (first: {first}); positions "
    "start at 1 for the top: add 1 to 0-based positions, e.g. pl.col('position') + 1"
)
_TWICE = (
    "{n} log row(s) share their ({keys}) with another row of the log (first: {first}): one "
    "action is logged per {unit}; keep one row per ({keys})"
)

# name, log, position-wise, metrics, error, message
_CASES: list[tuple[str, pl.DataFrame, bool, list[str], type[Exception], str]] = [
    (
        "null action",
        _set(_LOG, 1, action=None),
        False,
        ["ips", "snips"],
        InvalidValueError,
        _null("action").format(first="round_id=1"),
    ),
    (
        "null action, dr",
        _set(_LOG, 1, action=None),
        False,
        ["dm", "dr"],
        InvalidValueError,
        _null("action").format(first="round_id=1"),
    ),
    (
        "null round",
        _set(_LOG, 2, round_id=None),
        False,
        ["ips"],
        InvalidValueError,
        _null("round_id").format(first="round_id=null"),
    ),
    (
        "round twice, other action",
        _set(_LOG, 1, round_id=0),
        False,
        ["ips"],
        DuplicateError,
        _TWICE.format(n=2, first="round_id=0", keys="round_id", unit="round"),
    ),
    (
        "round twice, same row",
        pl.concat([_LOG, _LOG.tail(1)]),
        False,
        ["ips", "dr"],
        DuplicateError,
        _TWICE.format(n=2, first="round_id=2", keys="round_id", unit="round"),
    ),
    (
        "slot twice",
        _set(_POS_LOG, 3, position=1),
        True,
        ["ips"],
        DuplicateError,
        _TWICE.format(
            n=2,
            first="round_id=1, position=1",
            keys="round_id, position",
            unit="round and position",
        ),
    ),
    (
        "null position",
        _set(_POS_LOG, 2, position=None),
        True,
        ["ips"],
        InvalidValueError,
        _null("position").format(first="round_id=1, position=null"),
    ),
    (
        "position 0",
        _POS_LOG.with_columns(pl.col("position") - 1),
        True,
        ["ips", "dr"],
        InvalidValueError,
        _BELOW.format(n=2, first="round_id=0, position=0"),
    ),
    (
        "negative position",
        _set(_POS_LOG, 1, position=-2),
        True,
        ["ips"],
        InvalidValueError,
        _BELOW.format(n=1, first="round_id=0, position=-2"),
    ),
]

_POLICY_BELOW = (
    "column 'position' of the policy table has a position below 1 in a logged round (first: "
    "{first}, {n} log row(s) in all); positions start at 1 for the top: add 1 to 0-based "
    "positions, e.g. pl.col('position') + 1"
)
# name, policy (position-wise), message: the log is valid
_POLICY_CASES: list[tuple[str, pl.DataFrame, str]] = [
    (
        "0-based",
        _POS_PI.with_columns(pl.col("position") - 1),
        _POLICY_BELOW.format(first="round_id=0, position=1", n=4),
    ),
    (
        "one round 0-based",
        _POS_PI.with_columns(
            pl.when(pl.col("round_id") == 1).then(pl.col("position") - 1).otherwise("position")
        ),
        _POLICY_BELOW.format(first="round_id=1, position=1", n=2),
    ),
]

_ROUTES = {"one plan": {}, "buckets": {"buckets": 3}, "per row": {"per_query": True}}


@pytest.mark.parametrize("shape", ["long", "lists"])
@pytest.mark.parametrize("route", list(_ROUTES))
@pytest.mark.parametrize(
    ("log", "positions", "metrics", "error", "message"),
    [case[1:] for case in _CASES],
    ids=[case[0] for case in _CASES],
)
def test_log_refused(
    log: pl.DataFrame,
    positions: bool,
    metrics: list[str],
    error: type[Exception],
    message: str,
    route: str,
    shape: str,
) -> None:
    policy = _POS_PI if positions else _PI
    if positions:  # a position 0 or below, on the policy's side as well
        shift = log["position"].min()
        if shift is not None and int(shift) < 1:  # type: ignore[arg-type]
            policy = _POS_PI.with_columns(pl.col("position") - 1)
    model = policy.select(*policy.columns[:-1], q_hat=pl.lit(0.5))
    if shape == "lists":
        policy, model = _listed(policy, "prob"), _listed(model, "q_hat")
    wants_model = any(m in ("dm", "dr") for m in metrics)
    kwargs: dict[str, Any] = {"policy": policy, **_ROUTES[route]}
    if wants_model:
        kwargs["reward_model"] = model
    if positions:
        kwargs["position"] = "position"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            irm.evaluate(log, metrics, **kwargs)


@pytest.mark.parametrize("route", list(_ROUTES))
def test_valid_logs_pass(route: str) -> None:
    """The checks pass on valid logs: the estimates as before."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = irm.evaluate(_LOG, ["ips"], policy=_PI, **_ROUTES[route])
        pos = irm.evaluate(
            _POS_LOG, ["ips"], policy=_POS_PI, position="position", **_ROUTES[route]
        )
    if route == "per row":
        assert out["ips"].to_list() == [1.0, 0.0, 1.0]
        assert pos["ips"].to_list() == [1.0, 0.0, 0.0, 1.0]
    else:
        assert out["ips"].item() == pytest.approx(2.0 / 3.0)
        assert pos["ips"].item() == pytest.approx(0.5)


@pytest.mark.parametrize("shape", ["long", "lists"])
@pytest.mark.parametrize("route", list(_ROUTES))
@pytest.mark.parametrize(
    ("policy", "message"), [c[1:] for c in _POLICY_CASES], ids=[c[0] for c in _POLICY_CASES]
)
def test_policy_position_below_1(
    policy: pl.DataFrame, message: str, route: str, shape: str
) -> None:
    if shape == "lists":
        policy = _listed(policy, "prob")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.evaluate(_POS_LOG, ["ips"], policy=policy, position="position", **_ROUTES[route])


def test_policy_position_below_1_outside_the_log() -> None:
    """A round the log lacks is not read, its positions neither."""
    extra = pl.DataFrame(
        {"round_id": [9, 9], "position": [0, 0], "action": [0, 1], "prob": [0.5] * 2}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = irm.evaluate(
            _POS_LOG, ["ips"], policy=pl.concat([_POS_PI, extra]), position="position"
        )
    assert out["ips"].item() == pytest.approx(0.5)


_SLATE_PI = (
    _POS_PI.select("round_id", "position").unique().with_columns(pscore_item_position=pl.lit(0.5))
)


@pytest.mark.parametrize("route", list(_ROUTES))
@pytest.mark.parametrize(
    ("log", "message"),
    [
        (
            _set(_POS_LOG, 2, position=None),
            _null("position").format(first="round_id=1, position=null"),
        ),
        (
            _POS_LOG.with_columns(pl.col("position") - 1),
            _BELOW.format(n=2, first="round_id=0, position=0"),
        ),
    ],
    ids=["null position", "position 0"],
)
def test_slate_log_refused(log: pl.DataFrame, message: str, route: str) -> None:
    """The slate estimators refuse the log's null and low positions in the same words."""
    log = log.with_columns(pscore_item_position=pl.lit(0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.evaluate(
                log, ["slate_iips"], policy=_SLATE_PI, position="position", **_ROUTES[route]
            )
