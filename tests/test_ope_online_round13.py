"""Off-policy and online checks, round 13: a null ``by=`` key of an off-policy log is
refused as every other route refuses it (it formed a group of its own); ``irm ab``
names the line of a CSV timestamp polars infers no format from (it printed polars'
own error); ``position_bias(method="em")`` refuses a log without rank 1 (NaN
propensities) and fits ranks far apart (numpy's MemoryError); ``interleaving_test``
says that ``teams=`` names the teams as text; a policy or reward model with positions
beside a log without them is named (it was read as an action listed twice)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, SupportWarning

from .helpers import irm_in_process

# --- a null by= key of an off-policy log ------------------------------------------------

_LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3],
        "action": ["a", "a", "a"],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.5],
        "g": ["x", None, None],
    }
)
_POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3],
        "action": ["a", "b"] * 3,
        "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9],
    }
)
_LISTED = pl.DataFrame({"round_id": [1, 2, 3], "prob": [[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]]})
_SLATE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2],
        "position": [1, 2, 1],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.5],
        "g": ["x", "x", None],
    }
)
_SLATE_POLICY = pl.DataFrame(
    {"round_id": [1, 1, 2], "position": [1, 2, 1], "pscore": [0.4, 0.4, 0.4]}
)
_CASCADE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2],
        "position": [1, 2, 1],
        "action": [0, 1, 0],
        "reward": [0.0, 1.0, 1.0],
        "pscore_cascade": [0.5, 0.25, 0.5],
        "g": ["x", "x", None],
    }
)
_CASCADE_POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 1, 1, 2, 2],
        "position": [1, 1, 2, 2, 1, 1],
        "action": [0, 1] * 3,
        "prob": [0.5] * 6,
    }
)
_NULL_G = (
    "column 'g' of the log has null values; every impression needs a g: fill or drop "
    "them, e.g. .drop_nulls('g')"
)


def _collected(result: Any) -> Any:
    """``result``, collected where it is a LazyFrame (the checks raise on collect)."""
    return result.collect() if isinstance(result, pl.LazyFrame) else result


_NULL_BY_CASES: list[tuple[str, Callable[[], Any]]] = [
    ("ips", lambda: irm.evaluate(_LOG, ["ips"], policy=_POLICY, by="g")),
    ("lazy", lambda: irm.evaluate(_LOG.lazy(), ["snips"], policy=_POLICY.lazy(), by="g")),
    (
        "per_query",
        lambda: irm.evaluate(_LOG, ["snips"], policy=_POLICY, by="g", per_query=True),
    ),
    (
        "bootstrap",
        lambda: irm.evaluate(
            _LOG, ["ips"], policy=_POLICY, by="g", ci=0.9, n_bootstrap=20, seed=1
        ),
    ),
    ("buckets", lambda: irm.evaluate(_LOG, ["ips"], policy=_POLICY, by="g", buckets=2)),
    (
        "listed",
        lambda: irm.evaluate(_LOG.with_columns(action=pl.lit(0)), ["ips"], policy=_LISTED, by="g"),
    ),
    (
        "cascade_dr",
        lambda: irm.evaluate(
            _CASCADE_LOG,
            ["cascade_dr"],
            policy=_CASCADE_POLICY,
            reward_model=_CASCADE_POLICY.rename({"prob": "q_hat"}),
            by="g",
        ),
    ),
    ("slate_ips", lambda: irm.evaluate(_SLATE_LOG, ["slate_ips"], policy=_SLATE_POLICY, by="g")),
    (
        "slate_snips per_query",
        lambda: irm.evaluate(
            _SLATE_LOG, ["slate_snips"], policy=_SLATE_POLICY, by="g", per_query=True
        ),
    ),
    (
        "slate buckets",
        lambda: irm.evaluate(
            _SLATE_LOG.lazy(), ["slate_snips"], policy=_SLATE_POLICY, by="g", buckets=2
        ),
    ),
]


@pytest.mark.parametrize(("name", "call"), _NULL_BY_CASES, ids=[c[0] for c in _NULL_BY_CASES])
def test_null_by_key_of_an_off_policy_log_is_refused(name: str, call: Callable[[], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        with pytest.raises(InvalidValueError, match=f"^{re.escape(_NULL_G)}$"):
            _collected(call())


def test_null_by_key_on_dask_is_refused(client: Any) -> None:
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    log = dd.from_pandas(_LOG.to_pandas(), npartitions=2)
    policy = dd.from_pandas(_POLICY.to_pandas(), npartitions=1)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_NULL_G)}$"):
        irm_dask.evaluate(log, ["ips"], policy=policy, by="g").compute()


# --- irm ab: a CSV timestamp polars infers no format from -------------------------------

_HEADER = "arm,user_id,session_id,position,item_id,clicked,timestamp\n"
_ROWS = ["A,u1,s1,1,i1,true,{}\n", "A,u1,s1,2,i2,false,{}\n", "B,u2,s2,1,i1,true,{}\n"]
_TS = "2026-03-02T10:01:41"
_FIX = (
    "not a timestamp; write it as ISO 8601, e.g. 2026-03-02T10:01:41, or name another "
    "column with --timestamp COL"
)


@pytest.mark.parametrize(
    ("stamps", "message"),
    [
        (
            ["yesterday", "yesterday", "yesterday"],
            f"log.csv, line 2: column 'timestamp' holds 'yesterday', {_FIX}",
        ),
        (
            ["yesterday", _TS, _TS],
            f"log.csv, line 2: column 'timestamp' holds 'yesterday', {_FIX}",
        ),
        (["", "soon", _TS], f"log.csv, line 3: column 'timestamp' holds 'soon', {_FIX}"),
    ],
    ids=["all", "first", "after a null"],
)
def test_ab_names_a_csv_timestamp_without_a_format(
    tmp_path: Path, stamps: list[str], message: str
) -> None:
    rows = "".join(row.format(stamp) for row, stamp in zip(_ROWS, stamps, strict=True))
    (tmp_path / "log.csv").write_text(_HEADER + rows)
    done = irm_in_process("ab", "log.csv", "-m", "time_to_first_click", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# --- position_bias(method="em"): a log without rank 1, ranks far apart ------------------


def _impressions(ranks: list[int], dtype: pl.DataType = pl.Int64) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": ["q"] * 4,
            "doc_id": ["a", "b", "b", "a"],
            "rank": ranks,
            "clicked": [1, 1, 1, 0],
            "swap": [None] * 4,
            "ranker": ["A", "A", "B", "B"],
        },
        schema_overrides={"rank": dtype, "swap": pl.Int64},
    )


_NO_RANK_1 = (
    "the log shows no document at rank 1 (its ranks start at 2): the propensities are "
    "relative to the top, p_k / p_1; log the whole ranking from rank 1"
)
_BEYOND = (
    "column 'rank' of the log holds rank 9223372036854775808, beyond 2**63 - 1 = "
    "9223372036854775807, the largest rank position_bias reads: a rank counts the positions "
    "from 1 for the top; check the column"
)


@pytest.mark.parametrize(
    ("log", "method", "message"),
    [
        (_impressions([2, 3, 2, 3]).drop("swap", "ranker"), "em", _NO_RANK_1),
        (_impressions([1, 2**63, 1, 2**63], pl.UInt64).drop("swap", "ranker"), "em", _BEYOND),
        (_impressions([1, 2**63, 1, 2**63], pl.UInt64).drop("ranker"), "swap", _BEYOND),
        (_impressions([1, 2**63, 1, 2**63], pl.UInt64).drop("swap"), "harvest", _BEYOND),
    ],
    ids=["em without rank 1", "em UInt64", "swap UInt64", "harvest UInt64"],
)
def test_position_bias_refuses_ranks_it_cannot_read(
    log: pl.DataFrame, method: str, message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.position_bias(log, method=method)  # type: ignore[arg-type]


def test_em_fits_the_ranks_shown_whatever_their_values() -> None:
    """EM has one examination per rank the log shows: ranks 1 and 10**12 fit as 1 and 2
    (it sized its arrays by the largest rank: numpy's MemoryError)."""
    log = _impressions([1, 10**12, 1, 10**12]).drop("swap", "ranker")
    near = irm.position_bias(log.with_columns(rank=pl.col("rank").clip(1, 2)))
    far = irm.position_bias(log)
    assert far["position"].to_list() == [1, 10**12]
    assert far.drop("position").equals(near.drop("position"))
    assert far["propensity"][0] == 1.0


# --- interleaving_test: teams of an integer team column ---------------------------------

_INT_TEAMS = pl.DataFrame(
    {
        "session_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "team": [1, 0, 0, 1],
        "clicked": [1, 0, 0, 1],
    }
)


@pytest.mark.parametrize(
    ("teams", "message"),
    [
        (
            (1, 0),
            "teams must be the two team names as text, got (1, 0): the teams are named as "
            "text whatever the column's dtype, e.g. teams=('1', '0')",
        ),
        (
            (True, False),
            "teams must be the two team names as text, got (True, False): the teams are "
            "named as text whatever the column's dtype, e.g. teams=('true', 'false')",
        ),
        (
            (1, "1"),
            "teams must be the two team names as text, got (1, '1'): the teams are named as "
            "text whatever the column's dtype, e.g. teams=('bm25', 'dense')",
        ),
        (
            (1, 1),
            "teams must be two different team names, e.g. ('bm25', 'dense'); got (1, 1)",
        ),
    ],
    ids=["ints", "bools", "one text", "equal"],
)
def test_interleaving_teams_are_named_as_text(teams: Any, message: str) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.interleaving_test(_INT_TEAMS, teams=teams)


def test_interleaving_teams_as_text_read_an_integer_column() -> None:
    out = irm.interleaving_test(_INT_TEAMS, teams=("1", "0"))
    assert out.select("wins_a", "wins_b").row(0) == (2, 0)


# --- off-policy: a policy (reward model) with positions beside a log without ------------

_ONE_ACTION_LOG = pl.DataFrame(
    {"round_id": [1, 2], "action": [0, 1], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
)
_PER_POSITION = pl.DataFrame(
    {
        "round_id": [1, 1, 1, 1, 2, 2, 2, 2],
        "position": [1, 1, 2, 2, 1, 1, 2, 2],
        "action": [0, 1] * 4,
        "prob": [0.5] * 8,
    }
)
_PER_ROUND = _PER_POSITION.filter(pl.col("position") == 1).drop("position")


def _no_position(table: str, row: str) -> str:
    return (
        f"column 'position' not found in the log, but the {table} table has one: a log "
        f"without it is read as one action per round, and the {table} table then has one "
        f"row per {row}; add the logged positions to the log (name the column with "
        f"position=), or drop the {table} table's 'position' column"
    )


@pytest.mark.parametrize(
    ("metric", "policy", "model", "message"),
    [
        ("ips", _PER_POSITION, None, _no_position("policy", "(round_id, action)")),
        (
            "ips",
            _PER_POSITION.group_by("round_id", "position", maintain_order=True).agg("prob"),
            None,
            _no_position("policy", "round_id"),
        ),
        (
            "dr",
            _PER_ROUND,
            _PER_POSITION.rename({"prob": "q_hat"}),
            _no_position("reward_model", "(round_id, action)"),
        ),
    ],
    ids=["long policy", "listed policy", "reward model"],
)
def test_positions_of_a_table_beside_a_log_without_are_named(
    metric: str, policy: pl.DataFrame, model: pl.DataFrame | None, message: str
) -> None:
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.evaluate(_ONE_ACTION_LOG, [metric], policy=policy, reward_model=model)
