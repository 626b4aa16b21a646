"""Round 34: the off-policy wing's ids that do not line up and numbers that could be
silently wrong: round ids spelt apart between the log and ``policy=`` (refused with no
word of the spelling); ``dr_os`` with its default ``lambda=0`` NaN for a deterministic
policy (no warning); the propensity-scored metrics' ``per_query=True`` quotient
``N_q / (I / Q)`` (its divisor a scalar the optimiser may turn into a product by its
reciprocal, a unit in the last place off); a cascade_dr log whose other slate
propensities (``pscore``, ``pscore_item_position``) the slate estimators refuse, read
without a check."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, QuerySetError
from tests.helpers import engine_io, warned

LOG = pl.DataFrame(
    {
        "round_id": ["R1", "R2", "R3"],
        "action": ["a", "b", "a"],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5] * 3,
    }
)


def _policy(rounds: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "round_id": [r for r in rounds for _ in range(2)],
            "action": ["a", "b"] * len(rounds),
            "prob": [0.5] * (2 * len(rounds)),
        }
    )


LACKS = (
    "{n} log row(s) have a round the policy table lacks (first: round_id=R1): the policy "
    "needs every logged round's probabilities, one row per (round_id, action) in column "
    "'prob'"
)


def _spelt(n: int, what: str, pair: str, fix: str) -> str:
    return (
        f"{LACKS.format(n=n)}. {n} round id(s) of the log match an id of policy= only when "
        f"{what} ({pair}): ids are compared exactly; give the log and policy= the same "
        f"spelling, e.g. pl.col('round_id'){fix} on each."
    )


ROUNDS = [
    (
        "case",
        ["r1", "r2", "R3"],
        _spelt(2, "case is ignored", "'R1' against 'r1'", ".str.to_lowercase()"),
    ),
    (
        "spaces",
        [" R1", "R2", "R3"],
        _spelt(
            1, "the spaces around the ids are ignored", "'R1' against ' R1'", ".str.strip_chars()"
        ),
    ),
    (
        "separators",
        ["R_1", "R2", "R3"],
        _spelt(
            1,
            "separators are ignored",
            "'R1' against 'R_1'",
            ".str.replace_all('[-_.: ]', '')",
        ),
    ),
    ("none", ["X9", "R2", "R3"], LACKS.format(n=1)),
]


def _evaluate(log: pl.DataFrame, metrics: list[str], route: str, **kw: Any) -> pl.DataFrame:
    """``irm.evaluate`` on DataFrames ("frame"), LazyFrames ("lazy", collected) or out
    of core in 2 buckets ("buckets")."""
    if route == "lazy":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kw.items()}
        return irm.evaluate(log.lazy(), metrics, **lazy).collect()
    return irm.evaluate(log, metrics, **({"buckets": 2} if route == "buckets" else {}), **kw)


CASES = [(*r, "frame") for r in ROUNDS] + [(*ROUNDS[0], "lazy"), (*ROUNDS[0], "buckets")]


@pytest.mark.parametrize(
    ("name", "rounds", "message", "route"), CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES]
)
def test_round_ids_spelt_apart_are_named(
    name: str, rounds: list[str], message: str, route: str
) -> None:
    # before: the refusal named the round the policy lacks, not its spelling
    policy = _policy(rounds)
    with pytest.raises(QuerySetError) as caught:
        _evaluate(LOG, ["ips"], route, policy=policy)
    assert str(caught.value) == message


#: Round 1's logged action 'a' the policy never takes (a deterministic policy): a weight
#: of 0, whose shrunk weight under dr_os's default lambda=0 is 0 / 0 (segment 1's).
DR_LOG = LOG.with_columns(seg=pl.Series([1, 1, 2]))
DR_POLICY = pl.DataFrame(
    {
        "round_id": ["R1", "R1", "R2", "R2", "R3", "R3"],
        "action": ["a", "b"] * 3,
        "prob": [0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
    }
)
DR_MODEL = DR_POLICY.select("round_id", "action", q_hat=pl.lit(0.5))


def _unshrunk(where: str) -> str:
    return (
        f"metric 'dr_os' is NaN {where}: with lambda=0 (obp's default) its shrunk weight "
        "lambda w / (w^2 + lambda) is 0 / 0 where the policy gives the logged action "
        "probability 0 (a weight w of 0, as any deterministic policy gives), as obp's is, "
        "and so is dr_os_ess; give lambda a positive value, e.g. dr_os(lambda=1) (a weight "
        "of 0 then counts 0)"
    )


UNSHRUNK = [
    ("log", "frame", {}, [_unshrunk("in the log")]),
    ("log", "lazy", {}, [_unshrunk("in the log")]),
    ("by", "frame", {"by": "seg"}, [_unshrunk("in 1 by group(s) (first: seg=1)")]),
    ("by", "buckets", {"by": "seg"}, [_unshrunk("in 1 by group(s) (first: seg=1)")]),
]


@pytest.mark.parametrize(
    ("name", "route", "kw", "said"), UNSHRUNK, ids=[f"{u[0]}-{u[1]}" for u in UNSHRUNK]
)
def test_dr_os_nan_at_lambda_0_is_warned(
    name: str, route: str, kw: dict[str, Any], said: list[str]
) -> None:
    # before: NaN (obp's 0 / 0) without a word; dr_os(lambda=1) and a stochastic policy
    # give numbers, and no warning
    metrics = ["dr_os", "dr_os(lambda=1)"]
    model = {"policy": DR_POLICY, "reward_model": DR_MODEL}
    got, warnings = warned(lambda: _evaluate(DR_LOG, metrics, route, **model, **kw))
    assert warnings == said
    assert got["dr_os"].is_nan().to_list() == ([True, False] if kw else [True])
    assert not got["dr_os(lambda=1)"].is_nan().any()
    stochastic = DR_POLICY.with_columns(prob=pl.lit(0.5))
    model = {"policy": stochastic, "reward_model": DR_MODEL}
    got, warnings = warned(lambda: _evaluate(DR_LOG, metrics, route, **model, **kw))
    assert warnings == []
    assert not got["dr_os"].is_nan().any()


def test_ps_per_query_quotients_are_correctly_rounded(frame_kind: str) -> None:
    # weights 1/p: a 2, b 4, c 5; each query retrieves one relevant document at rank 1,
    # so N_q = I_q = its weight and the mean ideal is 11 / 3, not a float64: each share
    # is the correctly rounded w / (11 / 3), never w * (3 / 11) (a unit in the last
    # place off), in one plan and out of core alike
    run = pl.DataFrame({"query_id": ["q0", "q1", "q2"], "doc_id": ["a", "b", "c"], "rank": 1})
    qrels = run.select("query_id", "doc_id", relevance=pl.lit(1))
    props = pl.DataFrame({"doc_id": ["a", "b", "c"], "propensity": [0.5, 0.25, 0.2]})
    want = [w / (11 / 3) for w in (2.0, 4.0, 5.0)]
    assert want != [w * (3 / 11) for w in (2.0, 4.0, 5.0)]  # the input tells them apart
    metrics = ["ps_precision@1", "ps_ndcg@1"]
    for kw in ({}, {"buckets": 2}):
        tables = (run, qrels, props)
        if frame_kind == "LazyFrame":
            tables = tuple(t.lazy() for t in tables)  # type: ignore[assignment]
        out = irm.evaluate(
            tables[0], metrics, qrels=tables[1], propensities=tables[2], per_query=True, **kw
        )
        out = out.collect() if isinstance(out, pl.LazyFrame) else out
        assert out["ps_precision@1"].to_list() == want, kw
        assert out["ps_ndcg@1"].to_list() == want, kw
    # one query: its share N / (I / 1) is the summarized N / I, 2 / 5, to the bit
    one = run.head(1)
    judged = pl.DataFrame({"query_id": ["q0", "q0"], "doc_id": ["a", "c"], "relevance": 1})
    share = irm.evaluate(one, metrics[:1], qrels=judged, propensities=props, per_query=True)
    mean = irm.evaluate(one, metrics[:1], qrels=judged, propensities=props)
    assert share["ps_precision@1"].item() == mean["ps_precision@1"].item() == 2 / 5


#: A cascade_dr log of two slates of two slots (obp's three propensity columns), its
#: policy and reward model.
SLATES = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": [0, 1, 1, 0],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25],
        "pscore": [0.25] * 4,
        "pscore_item_position": [0.5] * 4,
    }
)
CASCADE = {
    "policy": pl.DataFrame(
        {
            "round_id": [1, 1, 1, 1, 2, 2, 2, 2],
            "position": [1, 1, 2, 2] * 2,
            "action": [0, 1] * 4,
            "prob": [0.5, 0.5, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0],
        }
    )
}
CASCADE["reward_model"] = CASCADE["policy"].select(
    "round_id", "position", "action", q_hat=pl.lit(0.5)
)
OTHER_PROPENSITIES = [
    (
        "pscore",
        pl.lit(2.0),
        "column 'pscore' of the log has 4 value(s) that are null, NaN, 0, negative or above "
        "1 (first: round_id=1, position=1); it is the logging policy's probability of the "
        "logged slate, in (0, 1]",
    ),
    (
        "pscore_item_position",
        pl.Series([0.5, 0.0, 0.5, 0.5]),
        "column 'pscore_item_position' of the log has 1 value(s) that are null, NaN, 0, "
        "negative or above 1 (first: round_id=1, position=2); it is the logging policy's "
        "probability of the logged slate, in (0, 1]",
    ),
    (
        "pscore",
        pl.Series([0.25, 0.5, 0.25, 0.25]),
        "column 'pscore' of the log takes more than one value in a round on 2 row(s) (first: "
        "round_id=1, position=1): it is the probability of the whole slate, one value per "
        "round (obp: 'unique in each slate'): give each round's rows the slate's probability",
    ),
]


@pytest.mark.parametrize(("column", "value", "message"), OTHER_PROPENSITIES)
@pytest.mark.parametrize("metric", ["cascade_dr", "slate_rips"])
def test_cascade_dr_checks_the_logs_other_propensities(
    column: str, value: Any, message: str, metric: str
) -> None:
    # before: cascade_dr read the log and said nothing, where slate_rips (which reads
    # pscore_cascade alone too) refused it: which checks run depended on the metric
    log = SLATES.with_columns(value.alias(column))
    if metric == "slate_rips":
        tables = {"policy": SLATES.select("round_id", "position", "pscore_cascade")}
    else:
        tables = CASCADE
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(log, [metric], **tables)
    assert str(caught.value) == message


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_round_ids_spelt_apart_on_the_engines(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    for _, rounds, message in ROUNDS[::3]:  # spelt apart, and not
        with pytest.raises(QuerySetError) as caught:
            back(evaluate(to_engine(LOG), ["ips"], policy=to_engine(_policy(rounds))))
        assert str(caught.value) == message
    # dr_os(lambda=0) NaN: one machine's warning, from the engine's means
    model = {"policy": to_engine(DR_POLICY), "reward_model": to_engine(DR_MODEL)}
    got, said = warned(lambda: back(evaluate(to_engine(DR_LOG), ["dr_os"], by="seg", **model)))
    assert said == [_unshrunk("in 1 by group(s) (first: seg=1)")]
    assert got.sort("seg")["dr_os"].is_nan().to_list() == [True, False]
    # cascade_dr: the log's other slate propensities checked, in the same words
    _, value, message = OTHER_PROPENSITIES[0]
    tables = {k: to_engine(v) for k, v in CASCADE.items()}
    log = to_engine(SLATES.with_columns(value.alias("pscore")))
    with pytest.raises(InvalidValueError) as caught:
        back(evaluate(log, ["cascade_dr"], **tables))
    assert str(caught.value) == message
