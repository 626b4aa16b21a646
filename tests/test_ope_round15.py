"""Off-policy evaluation, round 15: a reward model's ``q_hat`` at an action the policy
gives probability 0 (and that the log did not log) is never read, as the guide says, so
a NaN or infinite one there no longer turns ``dm``, the doubly robust estimators and
``cascade_dr`` into NaN in silence (``0 * nan`` was a term of the round's
``sum(prob * q_hat)``); in the long form and in obp's list shape, in one plan and out
of core. And ``position_bias(method="swap")`` refuses a swapped rank never clicked in
its swap impressions, whose propensity would be 0 (as ``method="harvest"`` refuses it),
instead of returning that 0 for every propensity-weighted metric to divide by."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.errors import InvalidValueError, MetricParameterError

LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4],
        "action": [0, 1, 0, 1],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.5, 0.5, 0.4, 0.6],
    }
)
# round 1: the policy never takes action 1, which the log did not log there either
PROBS = [[1.0, 0.0], [0.3, 0.7], [0.5, 0.5], [0.2, 0.8]]
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3, 4, 4],
        "action": [0, 1] * 4,
        "prob": [p for row in PROBS for p in row],
    }
)
POLICY_LISTS = pl.DataFrame({"round_id": [1, 2, 3, 4], "prob": PROBS})


def _model(unread: float, *, lists: bool) -> pl.DataFrame:
    """q_hat 0.6 and 0.3 for actions 0 and 1, ``unread`` at round 1's action 1."""
    q_hat = [[0.6, unread], [0.6, 0.3], [0.6, 0.3], [0.6, 0.3]]
    if lists:
        return pl.DataFrame({"round_id": [1, 2, 3, 4], "q_hat": q_hat})
    return POLICY.select("round_id", "action", q_hat=pl.Series([q for row in q_hat for q in row]))


# by hand: dm's round values 0.6, 0.39, 0.45, 0.36; dr adds w (r - q_hat(logged))
DM = (0.6 + 0.39 + 0.45 + 0.36) / 4
DR = DM + (2.0 * 0.4 + 1.4 * -0.3 + 1.25 * 0.4 + (0.8 / 0.6) * 0.7) / 4


@pytest.mark.parametrize("unread", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("lists", [False, True], ids=["long", "lists"])
@pytest.mark.parametrize("options", [{}, {"buckets": 2}], ids=["one_plan", "buckets"])
def test_a_q_hat_the_policy_never_takes_is_not_read(
    unread: float, lists: bool, options: dict[str, Any]
) -> None:
    policy = POLICY_LISTS if lists else POLICY
    out = irm.evaluate(
        LOG, ["dm", "dr"], policy=policy, reward_model=_model(unread, lists=lists), **options
    )
    same = irm.evaluate(
        LOG, ["dm", "dr"], policy=policy, reward_model=_model(0.3, lists=lists), **options
    )
    assert out.row(0) == same.row(0)
    assert out["dm"][0] == pytest.approx(DM, abs=1e-12)
    assert out["dr"][0] == pytest.approx(DR, abs=1e-12)


@pytest.mark.parametrize("unread", [math.nan, math.inf], ids=["nan", "inf"])
def test_cascade_dr_does_not_read_a_q_hat_the_policy_never_takes(unread: float) -> None:
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
            "action": [0, 1, 0, 1],
            "prob": [1.0, 0.0, 0.4, 0.6],
        }
    )
    model = policy.select(
        "round_id", "position", "action", q_hat=pl.Series([0.5, unread, 0.2, 0.4])
    )
    out = irm.evaluate(log, ["cascade_dr"], policy=policy, reward_model=model)
    # position 1: w = 1 / 0.5 = 2, 2 (1 - 0.5) + 1 * 0.5; position 2: w = 0.6 / 0.25
    # = 2.4, 2.4 (0 - 0.4) + 2 (0.4 * 0.2 + 0.6 * 0.4)
    expected = 2 * 0.5 + 0.5 + 2.4 * -0.4 + 2 * (0.08 + 0.24)
    assert out["cascade_dr"][0] == pytest.approx(expected, abs=1e-12)


def _swap_log(clicks_at_swapped: list[int]) -> pl.DataFrame:
    """Two impressions shown as ranked (one click at rank 1 each), then one swap-2 and
    one swap-3 impression with ``clicks_at_swapped`` at their swapped rank."""
    two, three = clicks_at_swapped
    return pl.DataFrame(
        {
            "query_id": [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3,
            "rank": [1, 2, 3] * 4,
            "clicked": [1, 0, 0, 1, 0, 0, 0, two, 0, 0, 0, three],
            "swap": [None] * 6 + [2] * 3 + [3] * 3,
        }
    )


_NEVER = (
    "position(s) {} have no click at the swapped rank of their swap impressions ('swap' "
    "k, the click at rank k): the estimate of their propensity would be 0, which no "
    "propensity-weighted estimator can divide by; log more swap impressions there, or "
    "drop them, e.g. log.filter(~pl.col('swap').is_in([{}]))"
)


@pytest.mark.parametrize(
    ("clicks", "positions"),
    [([1, 0], [3]), ([0, 1], [2]), ([0, 0], [2, 3])],
    ids=["rank3", "rank2", "both"],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_swap_refuses_a_rank_never_clicked(
    clicks: list[int], positions: list[int], lazy: bool
) -> None:
    log = _swap_log(clicks)
    named = ", ".join(map(str, positions))
    message = _NEVER.format(named, named)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.position_bias(log.lazy() if lazy else log, method="swap")


def test_swap_clicked_at_every_swapped_rank_still_gives_its_ratios() -> None:
    out = irm.position_bias(_swap_log([1, 1]), method="swap")
    assert out["propensity"].to_list() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "ips(clip=1, clip=2)",
            "metric 'ips(clip=1, clip=2)': parameter 'clip' is given twice (clip=1 and "
            "clip=2), and one metric reads one value; give it once",
        ),
        (
            "sg_dr(lambda=0.5, LAMBDA=0.1)",
            "metric 'sg_dr(lambda=0.5, LAMBDA=0.1)': parameter 'lambda' is given twice "
            "(lambda=0.5 and lambda=0.1), and one metric reads one value; give it once",
        ),
        (
            "rbo(p=0.5, kind='min', p=0.9)@10",
            "metric \"rbo(p=0.5, kind='min', p=0.9)@10\": parameter 'p' is given twice "
            "(p=0.5 and p=0.9), and one metric reads one value; give it once",
        ),
    ],
    ids=["ips", "sg_dr", "rbo"],
)
def test_a_parameter_given_twice_is_refused(name: str, message: str) -> None:
    # the last value was read and the first dropped in silence
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.evaluate(LOG, [name], policy=POLICY)


def _named(key: str, taken: list[str]) -> str:
    columns = ", ".join(repr(c) for c in taken)
    return (
        f"by=[{key!r}] names {key!r}, which is also a column of the result ({columns}); "
        f"rename the key first, e.g. log.rename({{{key!r}: {key + '_key'!r}}}), and pass "
        f"by={key + '_key'!r}"
    )


_IPS = ["num_rows", "ips", "ips_ess", "ips_max_weight"]
_IPS_CI = ["num_rows", "ips", "ips_lower", "ips_upper", "ips_ess", "ips_max_weight"]


@pytest.mark.parametrize(
    ("key", "options", "taken"),
    [
        ("num_rows", {}, _IPS),
        ("ips", {}, _IPS),
        ("ips_ess", {}, _IPS),
        ("ips_max_weight", {"buckets": 2}, _IPS),
        ("ips_upper", {"ci": 0.9, "n_bootstrap": 10}, _IPS_CI),
        ("ips", {"per_query": True}, ["ips"]),
    ],
    ids=["num_rows", "label", "ess", "max_weight-buckets", "upper-ci", "per_query"],
)
def test_a_by_key_named_like_a_result_column_is_refused(
    key: str, options: dict[str, Any], taken: list[str]
) -> None:
    # it was polars' DuplicateError from the plan
    log = LOG.with_columns(pl.lit("x").alias(key))
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_named(key, taken))}$"):
        irm.evaluate(log, ["ips"], policy=POLICY, by=key, **options)


def test_a_by_key_named_like_a_slate_result_column_is_refused() -> None:
    log = pl.DataFrame(
        {
            "round_id": [1, 1],
            "position": [1, 2],
            "reward": [1.0, 0.0],
            "pscore": [0.5, 0.5],
            "num_rounds": ["x", "x"],
        }
    )
    policy = log.select("round_id", "position", "pscore")
    taken = ["num_rounds", "slate_ips", "slate_ips_ess", "slate_ips_max_weight"]
    message = _named("num_rounds", taken)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(log, ["slate_ips"], policy=policy, by="num_rounds")


def test_a_by_key_named_like_an_unwritten_column_is_a_key() -> None:
    # without ci= there is no ips_lower column: the key is read as it is
    log = LOG.with_columns(ips_lower=pl.lit("x"))
    out = irm.evaluate(
        log, ["dm"], policy=POLICY, reward_model=_model(0.3, lists=False), by="ips_lower"
    )
    assert out.columns == ["ips_lower", "num_rows", "dm"]


@pytest.mark.parametrize(
    ("positions", "where"),
    [(False, ["1", "2", "3", "4"]), (True, ["1\t1", "2\t1", "3\t1", "4\t1"])],
    ids=["rounds", "positions"],
)
def test_cli_per_query_trec_lines_name_the_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], positions: bool, where: list[str]
) -> None:
    # each line said 'all' where the round goes: the command looked for query_id
    log = LOG.with_columns(position=pl.lit(1)) if positions else LOG
    policy = POLICY.with_columns(position=pl.lit(1)) if positions else POLICY
    log.write_parquet(tmp_path / "log.parquet")
    policy.write_parquet(tmp_path / "pi.parquet")
    args = ["evaluate", str(tmp_path / "log.parquet"), "-m", "ips", "--policy"]
    args += [str(tmp_path / "pi.parquet"), "--per-query", "--format", "trec"]
    assert main(args) == 0
    got = [re.sub(r"^ips +", "ips", line) for line in capsys.readouterr().out.splitlines()]
    values = ["2.0000", "0.0000", "1.2500", "1.3333"]  # w r: 1 / 0.5, 0, 0.5 / 0.4, 0.8 / 0.6
    assert got == [f"ips\t{w}\t{v}" for w, v in zip(where, values, strict=True)]


def _em_log(clicks_at: dict[int, int]) -> pl.DataFrame:
    """Six impressions of one query's three documents in every order; ``clicks_at``
    maps a rank to the clicks it gets (on the first impressions)."""
    orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
    rows = []
    for i, order in enumerate(orders):
        for rank, doc in enumerate(order, start=1):
            clicked = int(i < clicks_at.get(rank, 0))
            rows.append({"query_id": "q", "doc_id": doc, "rank": rank, "clicked": clicked})
    return pl.DataFrame(rows)


_EM_NEVER = (
    "position(s) {} of the log have no click: EM's examination of a position never "
    "clicked tends to 0 with its iterations, a propensity no propensity-weighted "
    "estimator can divide by; log more clicks there, or keep the ranks above, e.g. "
    "log.filter(pl.col('rank') <= K)"
)


@pytest.mark.parametrize(
    ("clicks_at", "named"),
    [({1: 3, 2: 2}, "3"), ({1: 3, 3: 1}, "2"), ({}, "1, 2, 3")],
    ids=["rank3", "rank2", "no_click"],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_em_refuses_a_rank_never_clicked(
    clicks_at: dict[int, int], named: str, lazy: bool
) -> None:
    # its propensity was 1.6e-40 after EM's iterations (and 1.0 everywhere for a log
    # without a click: 0 / 0)
    log = _em_log(clicks_at)
    message = _EM_NEVER.format(named)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.position_bias(log.lazy() if lazy else log)


def test_em_clicked_at_every_rank_still_fits() -> None:
    out = irm.position_bias(_em_log({1: 3, 2: 2, 3: 1}))
    assert out["position"].to_list() == [1, 2, 3]
    assert out["propensity"][0] == 1.0
    assert all(0 < p <= 1 for p in out["propensity"])
