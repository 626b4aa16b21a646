"""Off-policy evaluation, round 10: a ``by=`` key naming one of the log's own columns
(its rounds, actions, rewards, propensities, positions) is refused by name before any
data is read, on every path (it was polars' DuplicateError from the plan); and
``position_bias`` checks the keys of its log whatever the method (an impression holding
a rank twice, a null impression or query id, a swapped rank the impression never
shows)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError

from .helpers import engine_io

FIXTURES = Path(__file__).parent / "fixtures" / "ope"

LOG = pl.DataFrame(
    {"round_id": [1, 2], "action": [0, 1], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
)
POLICY = pl.DataFrame(
    {"round_id": [1, 1, 2, 2], "action": [0, 1, 0, 1], "prob": [0.8, 0.2, 0.3, 0.7]}
)

_TAIL = (
    "; the log's rounds, actions, rewards, propensities and positions are the estimators' "
    "data, not a segment of the rounds: group by another column, e.g. by='day'"
)


def _key(key: str, role: str, rounds: bool = False) -> str:
    """The refusal of ``by=key`` naming the log's column of ``role``."""
    tail = " (each round's contribution: per_query=True)" if rounds else ""
    return f"by=[{key!r}] names {key!r}, which is the log's column of {role}{_TAIL}{tail}"


ROLES = {
    "action": _key("action", "the logged actions (action=)"),
    "round_id": _key("round_id", "the rounds' ids (round_id=)", rounds=True),
    "reward": _key("reward", "the rewards (reward=)"),
    "pscore": _key("pscore", "the logging policy's propensities (propensity=)"),
    "position": _key("position", "the slates' positions (position=)"),
}


@pytest.mark.parametrize("key", list(ROLES))
@pytest.mark.parametrize(
    "options",
    [{}, {"per_query": True}, {"ci": 0.9}, {"buckets": 2}],
    ids=["means", "per_query", "ci", "buckets"],
)
def test_by_naming_a_log_column_is_refused(key: str, options: dict[str, Any]) -> None:
    log = LOG.with_columns(position=pl.lit(1)) if key == "position" else LOG
    policy = POLICY.with_columns(position=pl.lit(1)) if key == "position" else POLICY
    with pytest.raises(InvalidValueError, match=f"^{re.escape(ROLES[key])}$"):
        irm.evaluate(log, ["ips"], policy=policy, by=key, **options)
    listed = ROLES[key].replace(f"by=[{key!r}]", f"by=['segment', {key!r}]", 1)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(listed)}$"):
        irm.evaluate(log.lazy(), ["ips"], policy=policy.lazy(), by=["segment", key], **options)


def test_a_renamed_column_is_refused_by_its_name_and_the_old_name_is_a_key() -> None:
    log = LOG.rename({"action": "arm"}).with_columns(action=pl.Series([7, 8]))
    policy = POLICY.rename({"action": "arm"})
    message = _key("arm", "the logged actions (action=)").replace(
        "by=['arm']", "by=['action', 'arm']"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(log, ["ips"], policy=policy, action="arm", by=["action", "arm"])
    out = irm.evaluate(log, ["ips"], policy=policy, action="arm", by="action")
    assert out["action"].to_list() == [7, 8]


def test_the_refusal_comes_before_the_data_is_read() -> None:
    """A lazy log whose data would fail to read: the key is refused first."""
    broken = LOG.lazy().with_columns(pl.col("reward").map_batches(lambda s: 1 / 0))
    with pytest.raises(InvalidValueError, match=f"^{re.escape(ROLES['reward'])}$"):
        irm.evaluate(broken, ["ips"], policy=POLICY, by="reward")


def _slates(name: str = "slate_standard_s2") -> dict[str, pl.DataFrame]:
    return {
        table: pl.read_parquet(FIXTURES / f"{name}_{table}.parquet")
        for table in ("log", "policy", "cascade_policy", "cascade_reward_model")
    }


SLATE_PROPENSITIES = {
    "pscore_item_position": _key(
        "pscore_item_position",
        "the logging policy's propensities of each slot's item (read by the slate estimators)",
    ),
    "pscore_cascade": _key(
        "pscore_cascade",
        "the logging policy's cascade propensities (read by the slate estimators)",
    ),
}


@pytest.mark.parametrize("metric", ["slate_ips", "slate_iips", "slate_rips", "slate_snips"])
@pytest.mark.parametrize("key", ["position", "round_id", "reward", "pscore", "action"])
def test_slate_by_naming_a_log_column_is_refused(metric: str, key: str) -> None:
    tables = _slates()
    with pytest.raises(InvalidValueError, match=f"^{re.escape(ROLES[key])}$"):
        irm.evaluate(tables["log"], [metric], policy=tables["policy"], by=key)


@pytest.mark.parametrize("metric", ["slate_ips", "slate_iips", "slate_rips", "slate_snips"])
@pytest.mark.parametrize("key", list(SLATE_PROPENSITIES))
def test_slate_by_naming_a_propensity_column_is_refused(metric: str, key: str) -> None:
    tables = _slates()
    with pytest.raises(InvalidValueError, match=f"^{re.escape(SLATE_PROPENSITIES[key])}$"):
        irm.evaluate(tables["log"], [metric], policy=tables["policy"], by=key)


@pytest.mark.parametrize("key", ["position", "round_id", "reward", "action", "pscore_cascade"])
def test_cascade_by_naming_a_log_column_is_refused(key: str) -> None:
    tables = _slates()
    message = ROLES.get(key) or _key(
        key, "the logging policy's cascade propensities (read by cascade_dr)"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(
            tables["log"],
            ["cascade_dr"],
            policy=tables["cascade_policy"],
            reward_model=tables["cascade_reward_model"],
            by=key,
        )


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    ("key", "metric", "message"),
    [
        ("action", "ips", ROLES["action"]),
        ("round_id", "ips", ROLES["round_id"]),
        ("pscore", "snips", ROLES["pscore"]),
        ("pscore_cascade", "slate_rips", SLATE_PROPENSITIES["pscore_cascade"]),
    ],
)
def test_engines_refuse_by_naming_a_log_column(
    engine: str, key: str, metric: str, message: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, _ = engine_io(engine, request)
    if metric.startswith("slate"):
        tables = _slates()
        log, policy = tables["log"], tables["policy"]
    else:
        log, policy = LOG, POLICY
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        evaluate(frame(log), [metric], policy=frame(policy), by=key)


SWAP = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2, 3, 3, 4, 4],
        "rank": [1, 2] * 4,
        "clicked": [1, 0, 0, 0, 0, 1, 0, 0],
        "swap": [None] * 4 + [2] * 4,
    }
)
RANKED = pl.DataFrame(
    {
        "ranker": ["A", "A", "B", "B"],
        "query_id": [1, 1, 1, 1],
        "doc_id": ["a", "b", "b", "a"],
        "rank": [1, 2, 1, 2],
        "clicked": [1, 0, 1, 1],
    }
)
_AGAIN = (
    "column 'rank' of the log: 1 row(s) at a rank another row of their impression holds, "
    "e.g. in impression 1; each rank of an impression shows one document: keep one row per "
    "rank, e.g. .unique(['query_id', 'rank'])"
)
_UNREAD = (
    "; {n} impression(s) do not show the rank they are read at: log every rank an "
    "impression shows, or swap only ranks the impressions show"
)


def _null(frame: pl.DataFrame, column: str, where: pl.Expr) -> pl.DataFrame:
    return frame.with_columns(pl.when(where).then(None).otherwise(pl.col(column)).alias(column))


def _nulls(column: str, n: int, what: str) -> str:
    return (
        f"column {column!r} of the log has {n} null value(s); every row names {what}: fill "
        f"or drop them, e.g. log.drop_nulls({column!r})"
    )


POSITION_BIAS_CASES = [
    (
        "swap: rank 1 twice in impression 1",
        pl.concat([SWAP, SWAP.head(1)]),
        {"method": "swap"},
        DuplicateError,
        _AGAIN,
    ),
    (
        "swap: a null impression id",
        _null(SWAP, "query_id", pl.col("query_id") == 2),
        {"method": "swap"},
        InvalidValueError,
        _nulls("query_id", 2, "its impression"),
    ),
    (
        "swap: a swapped rank the impressions never show",
        SWAP.with_columns(pl.col("swap").replace(2, 9)),
        {"method": "swap"},
        InvalidValueError,
        "impression 3 of the log: 'swap' is 9 and it has no row at rank 9, whose click the "
        "ratio reads" + _UNREAD.format(n=2),
    ),
    (
        "swap: an impression without intervention and without rank 1",
        SWAP.filter((pl.col("query_id") != 2) | (pl.col("rank") != 1)),
        {"method": "swap"},
        InvalidValueError,
        "impression 2 of the log: it has no intervention ('swap' null) and no row at rank 1, "
        "whose click the base rate reads" + _UNREAD.format(n=1),
    ),
    (
        "em: a null query id",
        _null(RANKED, "query_id", pl.col("ranker") == "B").drop("ranker"),
        {},
        InvalidValueError,
        _nulls("query_id", 2, "its query"),
    ),
    (
        "em: a null document id",
        _null(RANKED, "doc_id", pl.col("rank") == 2).drop("ranker"),
        {},
        InvalidValueError,
        _nulls("doc_id", 2, "its document"),
    ),
    (
        "harvest: a null query id",
        _null(RANKED, "query_id", pl.col("doc_id") == "a"),
        {"method": "harvest"},
        InvalidValueError,
        _nulls("query_id", 2, "its query"),
    ),
    (
        "harvest: a null document id",
        _null(RANKED, "doc_id", pl.col("ranker") == "A"),
        {"method": "harvest"},
        InvalidValueError,
        _nulls("doc_id", 2, "its document"),
    ),
    (
        "harvest: two documents of a query at one rank under one ranker",
        pl.concat(
            [
                RANKED,
                pl.DataFrame(
                    {"ranker": ["A"], "query_id": [1], "doc_id": ["c"], "rank": [2]},
                    schema_overrides={"rank": pl.Int64},
                ).with_columns(clicked=pl.lit(0, pl.Int64)),
            ]
        ),
        {"method": "harvest"},
        InvalidValueError,
        "ranker 'A' shows 2 documents of query 1 at rank 2 (e.g. 'b' and 'c'): intervention "
        "harvesting reads each ranker as a function of the query (Agarwal et al. 2019); give "
        "each version of a ranker its own 'ranker' value",
    ),
]


@pytest.mark.parametrize(
    ("log", "kwargs", "error", "message"),
    [case[1:] for case in POSITION_BIAS_CASES],
    ids=[case[0] for case in POSITION_BIAS_CASES],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_position_bias_refuses_bad_keys(
    log: pl.DataFrame,
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
    lazy: bool,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        irm.position_bias(log.lazy() if lazy else log, **kwargs)


def test_position_bias_reads_a_well_keyed_log() -> None:
    assert irm.position_bias(SWAP, method="swap")["propensity"].to_list() == [1.0, 1.0]
    assert irm.position_bias(RANKED.drop("ranker"), max_iter=1)["position"].to_list() == [1, 2]
    assert irm.position_bias(RANKED, method="harvest")["position"].to_list() == [1, 2]
