"""Round 24, shapes and scales of the off-policy intervals: every level of ``ci=`` in
(0, 1) gives its interval (a level next to 1 raised ``statistics.StatisticsError`` from
inside), and contributions that are all one value have a point interval, not the
rounding of two sums' difference."""

from __future__ import annotations

import math
import re
from statistics import NormalDist
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.stats.normal import two_sided_z

NEXT_TO_1 = 1.0 - 2.0**-53  # 0.9999999999999999: (1 + ci) / 2 rounds to 1.0


def _log(rewards: list[float], actions: list[int], pscore: float = 0.5) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "round_id": list(range(len(rewards))),
            "action": actions,
            "reward": rewards,
            "pscore": [pscore] * len(rewards),
        }
    )


def _policy(rounds: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "round_id": [r for r in range(rounds) for _ in (0, 1)],
            "action": [0, 1] * rounds,
            "prob": [0.8, 0.2] * rounds,
        }
    )


def _model(rounds: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "round_id": [r for r in range(rounds) for _ in (0, 1)],
            "action": [0, 1] * rounds,
            "q_hat": [0.5, 0.25] * rounds,
        }
    )


def _slates(rounds: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    ids = [r for r in range(rounds) for _ in (1, 2)]
    log = pl.DataFrame(
        {
            "round_id": ids,
            "position": [1, 2] * rounds,
            "reward": [0.1] * (2 * rounds),
            "pscore": [0.25] * (2 * rounds),
        }
    )
    policy = pl.DataFrame(
        {"round_id": ids, "position": [1, 2] * rounds, "pscore": [0.5] * (2 * rounds)}
    )
    return log, policy


@pytest.mark.parametrize("level", [NEXT_TO_1, 1e-300, 0.95])
def test_two_sided_z_is_defined_for_every_level(level: float) -> None:
    z = two_sided_z(level)
    assert math.isfinite(z)
    assert z >= 0.0
    # the upper tail's quantile, the same value (to rounding) wherever both are defined
    assert z == pytest.approx(-NormalDist().inv_cdf((1.0 - level) / 2.0), rel=1e-9, abs=1e-300)


def test_two_sided_z_keeps_the_usual_bits_below_1() -> None:
    for level in (0.5, 0.9, 0.95, 0.99, 1.0 - 2.0**-52):
        assert two_sided_z(level) == NormalDist().inv_cdf((1.0 + level) / 2.0)


def test_a_level_next_to_1_gives_the_normal_interval(frame_kind: str) -> None:
    # ips contributions: w r with w = 0.8 / 0.5 at action 0, 0.2 / 0.5 at action 1
    log = _log([1.0, 0.0, 1.0, 1.0], [0, 1, 0, 1])
    policy = _policy(4)
    if frame_kind == "LazyFrame":
        out = irm.evaluate(
            log.lazy(), ["ips"], policy=policy.lazy(), ci=NEXT_TO_1, ci_method="normal"
        )
        assert isinstance(out, pl.LazyFrame)
        result = out.collect()
    else:
        result = irm.evaluate(log, ["ips"], policy=policy, ci=NEXT_TO_1, ci_method="normal")
    x = [1.6, 0.0, 1.6, 0.4]
    mean = sum(x) / 4
    sd = math.sqrt(sum((v - mean) ** 2 for v in x) / 3)
    half = -NormalDist().inv_cdf(2.0**-54) * sd / 2.0
    assert result["ips_lower"].item() == pytest.approx(mean - half, rel=1e-12)
    assert result["ips_upper"].item() == pytest.approx(mean + half, rel=1e-12)


def test_a_level_next_to_1_gives_the_ci_halfwidth() -> None:
    run = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["a"] * 3, "score": [1.0] * 3})
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "b", "a"], "relevance": [1] * 3}
    )
    name = f"P(agg='ci_halfwidth', ci_level={NEXT_TO_1!r})@1"
    out = irm.evaluate(run, [name], qrels=qrels)
    # P@1 is 1, 0, 1: the sample deviation sqrt(1/3)
    expected = -NormalDist().inv_cdf(2.0**-54) * math.sqrt(1.0 / 3.0) / math.sqrt(3.0)
    assert out[name].item() == pytest.approx(expected, rel=1e-12)


# one value in every row (the doubly robust 0.45 + 1.6 (0.1 - 0.5) = -0.19 gave a half
# width of 2.5e-9), in one plan and split in buckets
CONSTANT: list[Any] = [
    pytest.param("dr", [0.1] * 3, {}, id="dr"),
    pytest.param("ips", [0.1] * 3, {}, id="ips"),
    pytest.param("dr", [0.1] * 3, {"buckets": 2}, id="dr-buckets"),
    pytest.param("dr", [0.3] * 5, {}, id="dr-five"),
    pytest.param("sg_dr(lambda=0.1)", [0.7] * 4, {}, id="sg_dr"),
]


@pytest.mark.parametrize(("metric", "rewards", "options"), CONSTANT)
def test_constant_contributions_give_a_point_interval(
    metric: str, rewards: list[float], options: dict[str, Any]
) -> None:
    rounds = len(rewards)
    log = _log(rewards, [0] * rounds)
    out = irm.evaluate(
        log,
        [metric],
        policy=_policy(rounds),
        reward_model=_model(rounds) if "dr" in metric else None,
        ci=0.95,
        ci_method="normal",
        **options,
    )
    value = out[metric].item()
    assert out[f"{metric}_lower"].item() == value
    assert out[f"{metric}_upper"].item() == value


def test_constant_slate_rounds_give_a_point_interval() -> None:
    log, policy = _slates(3)
    out = irm.evaluate(log, ["slate_ips"], policy=policy, ci=0.95, ci_method="normal")
    value = out["slate_ips"].item()
    assert value == pytest.approx(0.4, rel=1e-15)
    assert out["slate_ips_lower"].item() == value
    assert out["slate_ips_upper"].item() == value


def test_contributions_that_differ_keep_their_spread() -> None:
    log = _log([0.1, 0.1, 0.2], [0, 0, 0])
    out = irm.evaluate(
        log, ["dr"], policy=_policy(3), reward_model=_model(3), ci=0.95, ci_method="normal"
    )
    x = [0.45 + 1.6 * (r - 0.5) for r in (0.1, 0.1, 0.2)]
    mean = sum(x) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in x) / 2)
    half = NormalDist().inv_cdf(0.975) * sd / math.sqrt(3.0)
    assert out["dr_lower"].item() == pytest.approx(mean - half, rel=1e-12)
    assert out["dr_upper"].item() == pytest.approx(mean + half, rel=1e-12)


# position_bias(method="swap") read a UInt64 swap column beyond 2**63 - 1 with polars'
# strict cast: its InvalidOperationError, not the library's refusal the rank column has
_SWAP_LOG = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2, 3, 3],
        "rank": [1, 2, 1, 2, 1, 2],
        "clicked": [1, 0, 0, 1, 1, 1],
    }
)


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        (
            "swap",
            [None, None, 2**64 - 1, 2**64 - 1, None, None],
            "column 'swap' of the log holds swapped rank 18446744073709551615, beyond 2**63 - 1 "
            "= 9223372036854775807, the largest rank position_bias reads: a rank counts the "
            "positions from 1 for the top; check the column",
        ),
        (
            "rank",
            [1, 2**63, 1, 2, 1, 2],
            "column 'rank' of the log holds rank 9223372036854775808, beyond 2**63 - 1 = "
            "9223372036854775807, the largest rank position_bias reads: a rank counts the "
            "positions from 1 for the top; check the column",
        ),
    ],
)
def test_a_uint64_rank_beyond_int64_is_refused_by_name(
    frame_kind: str, column: str, values: list[int | None], message: str
) -> None:
    log = _SWAP_LOG.with_columns(swap=pl.Series([None, None, 2, 2, None, None], dtype=pl.UInt64))
    log = log.with_columns(pl.Series(column, values, dtype=pl.UInt64))
    table = log.lazy() if frame_kind == "LazyFrame" else log
    with pytest.raises(irm.errors.InvalidValueError, match=re.escape(message)):
        irm.position_bias(table, method="swap")


def test_a_uint64_swap_within_int64_is_read() -> None:
    log = _SWAP_LOG.with_columns(swap=pl.Series([None, None, 2, 2, None, None], dtype=pl.UInt64))
    as_int64 = log.with_columns(pl.col("swap").cast(pl.Int64))
    assert irm.position_bias(log, method="swap").equals(irm.position_bias(as_int64, method="swap"))


# label_propensity: (B + 1)^A beyond float64 raised Python's OverflowError (a=800), and
# (B + 1)^A underflowing to 0 beside (N_d + B)^-A overflowing gave 0 * inf, a NaN
# propensity (a=-1000); each is now the value of one power of the ratio of the two
_TRAIN = pl.DataFrame(
    {
        "query_id": ["t1", "t1", "t2", "t3"],
        "doc_id": ["a", "b", "a", "z"],
        "relevance": [1, 1, 1, 0],
    }
)


@pytest.mark.parametrize(("a", "b"), [(800.0, 1.5), (-1000.0, 1.5), (1e300, 0.5), (0.55, 1.5)])
def test_label_propensity_is_its_formula_at_any_exponent(
    frame_kind: str, a: float, b: float
) -> None:
    table = _TRAIN.lazy() if frame_kind == "LazyFrame" else _TRAIN
    out = irm.label_propensity(table, a=a, b=b)
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    c0 = math.log(3) - 1.0  # three queries
    for doc, freq in (("a", 2), ("b", 1), ("z", 0)):
        try:  # the formula in Python floats where it is defined, else the ratio's power
            expected = 1.0 + c0 * (b + 1.0) ** a * (freq + b) ** -a
        except OverflowError:
            expected = math.nan
        if not math.isfinite(expected):
            try:
                expected = 1.0 + c0 * ((b + 1.0) / (freq + b)) ** a
            except OverflowError:
                expected = math.inf
        inv = result.filter(pl.col("doc_id") == doc)["inv_propensity"].item()
        assert inv == pytest.approx(expected, rel=1e-12), doc
        assert not math.isnan(result.filter(pl.col("doc_id") == doc)["propensity"].item())


# system_agreement read an integer column as float64: per-query values 2**62 + 1, 2**62 +
# 2... became one float, every system's mean the same, and the correlation null with a
# warning that the means are equal (they are not); delta_a 0.0 in per_pair=True
def _per_query(offset: int, dtype: pl.DataType) -> pl.DataFrame:
    values = {"s1": [1, 2, 3], "s2": [3, 2, 5], "s3": [9, 8, 7]}
    return pl.DataFrame(
        {
            "system": [s for s in values for _ in range(3)],
            "query_id": [0, 1, 2] * 3,
            "v": pl.Series([v + offset for vs in values.values() for v in vs], dtype=dtype),
        }
    )


@pytest.mark.parametrize(
    ("offset", "dtype", "shown"),
    [
        (2**62, pl.Int64, 4611686018427387905),
        (2**64 - 20, pl.UInt64, 18446744073709551597),
        (2**53, pl.Int64, 9007199254740993),
    ],
)
@pytest.mark.parametrize("per_pair", [False, True])
def test_integers_beyond_float64s_range_are_refused_by_system_agreement(
    offset: int, dtype: pl.DataType, shown: int, per_pair: bool
) -> None:
    message = (
        f"a has 'v' {shown} for system 's1' on query 0, an integer beyond 2**53 = "
        "9007199254740992 in magnitude, which the means and tests (float64) cannot hold: "
        "integers that differ by less than float64's spacing there would read as equal, "
        "their systems as tied; subtract a common offset, or cast the column to accept the "
        "rounding, e.g. pl.col('v').cast(pl.Float64)"
    )
    small = _per_query(0, pl.Int64)
    with pytest.raises(irm.errors.InvalidValueError, match=re.escape(message)):
        irm.system_agreement(
            _per_query(offset, dtype), small, higher_is_better=True, per_pair=per_pair
        )


@pytest.mark.parametrize(
    ("offset", "dtype"), [(2**53 - 9, pl.Int64), (0, pl.UInt64), (0, pl.Int8)]
)
def test_integers_float64_holds_are_read(offset: int, dtype: pl.DataType) -> None:
    out = irm.system_agreement(
        _per_query(offset, dtype), _per_query(0, pl.Int64), higher_is_better=True
    )
    assert out["correlation"].item() == 1.0
    assert out["swaps"].item() == 0


# rbo_repro_eval(p)@k built its weights of depths 1..k in a Python loop and a table of
# k rows: @10**20 never finished (the process ran out of memory), as did
# irm.reproducibility(cutoff=10**20). The depths whose p**d is 0.0 add nothing, so the
# loop stops there, the same bits; a p so near 1 that more than 10,000,000 remain is
# refused by name
_RUN = pl.DataFrame(
    {
        "query_id": [0] * 5 + [1] * 5,
        "doc_id": list(range(5)) * 2,
        "score": [5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    }
)
_REFERENCE = _RUN.with_columns(score=pl.Series([1.0, 5.0, 4.0, 3.0, 2.0, 5.0, 4.0, 3.0, 2.0, 1.0]))


def _repro_eval_rbo(run: pl.DataFrame, reference: pl.DataFrame, p: float, k: int) -> list[float]:
    """repro_eval's finite RBO by its definition, per query, in Python."""
    values = []
    for q in (0, 1):
        a = run.filter(pl.col("query_id") == q).sort("score", descending=True)["doc_id"].to_list()
        b = (
            reference.filter(pl.col("query_id") == q)
            .sort("score", descending=True)["doc_id"]
            .to_list()
        )
        # the overlap of the whole lists holds at the depths below them; p**2000 is
        # below 1e-90 at p = 0.9: the depths beyond add nothing at this tolerance
        depth = min(k, 2000)
        total = sum(p**d * len(set(a[: d + 1]) & set(b[: d + 1])) / (d + 1) for d in range(depth))
        values.append(total / sum(p**d for d in range(depth)))
    return values


@pytest.mark.parametrize(("p", "k"), [(0.9, 10**20), (0.5, 2**64), (0.9, 5)])
def test_rbo_repro_eval_reads_any_cutoff(frame_kind: str, p: float, k: int) -> None:
    name = f"rbo_repro_eval(p={p})@{k}"
    run, reference = _RUN, _REFERENCE
    if frame_kind == "LazyFrame":
        out = irm.evaluate(run.lazy(), [name], reference=reference.lazy(), per_query=True)
        assert isinstance(out, pl.LazyFrame)
        result = out.collect()
    else:
        result = irm.evaluate(run, [name], reference=reference, per_query=True)
    expected = _repro_eval_rbo(run, reference, p, k)
    assert result.sort("query_id")[name].to_list() == pytest.approx(expected, rel=1e-12)


def test_rbo_repro_eval_of_a_huge_cutoff_is_its_value_at_the_rankings_depth() -> None:
    deep = irm.evaluate(
        _RUN, ["rbo_repro_eval(p=0.9)@100000000000000000000"], reference=_REFERENCE
    )
    at = irm.evaluate(_RUN, ["rbo_repro_eval(p=0.9)@100000"], reference=_REFERENCE)
    assert deep.item(0, 1) == at.item(0, 1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: irm.evaluate(
                _RUN, ["rbo_repro_eval(p=0.9999999)@1000000000"], reference=_REFERENCE
            ),
            "metric 'rbo_repro_eval(p=0.9999999)@1000000000': repro_eval's RBO adds the "
            "weights p**d of the depths 1 to 1000000000 one by one, and at p=0.9999999 the "
            "first 1000000000 of them are not 0, more than 10_000_000 (the most it adds); cut "
            "the rankings at the depth they reach, at most 10_000_000, or give a smaller p",
        ),
        (
            lambda: irm.reproducibility(
                {"baseline": _RUN},
                {"baseline": _REFERENCE},
                ["P@1"],
                qrels=_QRELS,
                p=0.9999999,
                cutoff=10**20,
            ),
            "p=0.9999999 with cutoff=100000000000000000000: repro_eval's RBO adds the "
            "weights p**d of the depths 1 to 100000000000000000000 one by one, and at "
            "p=0.9999999 the first 7624618609 of them are not 0, more than 10_000_000",
        ),
    ],
)
def test_rbo_repro_eval_of_too_many_weights_is_refused_by_name(call: Any, message: str) -> None:
    with pytest.raises(irm.errors.MetricParameterError, match=re.escape(message)):
        call()


_QRELS = pl.DataFrame({"query_id": [0, 1], "doc_id": [0, 4], "relevance": [1, 1]})


def test_reproducibility_reads_a_huge_cutoff() -> None:
    deep = irm.reproducibility(
        {"baseline": _RUN}, {"baseline": _REFERENCE}, ["P@1"], qrels=_QRELS, cutoff=10**20
    )
    at = irm.reproducibility(
        {"baseline": _RUN}, {"baseline": _REFERENCE}, ["P@1"], qrels=_QRELS, cutoff=1000
    )
    assert deep.equals(at)


# rbo's sums scaled their terms by 2**-ceil(log2(largest)) as a division, which polars
# computes as a product with the reciprocal: for a largest term below 2**-1023 (a
# value in float64's subnormal range, p = 1e-155 with the rankings first agreeing at
# depth 3) that reciprocal overflowed, every term read inf or NaN and rbo 0.0
def _one(docs: str) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": list(docs), "score": [4.0, 3.0, 2.0, 1.0]}
    )


@pytest.mark.parametrize(
    ("reference", "p", "expected"),
    [
        # abcd against bacd: A_1 = 0, then every A_d = 1: rbo = p exactly
        ("bacd", 1e-310, 1e-310),
        ("bacd", 1e-320, 1e-320),
        ("bacd", 1e-300, 1e-300),
        # abcd against cdab: A_1 = A_2 = 0, A_3 = 2/3, A_4 = 1: rbo = p^2 (2/3 + p/3)
        ("cdab", 1e-155, 1e-310 * 2 / 3),
        ("cdab", 1e-160, 1e-320 * 2 / 3),
        ("cdab", 1e-100, 1e-200 * 2 / 3),
    ],
)
@pytest.mark.parametrize("kind", ["ext", "min", "max"])
def test_rbo_keeps_a_value_in_the_subnormal_range(
    reference: str, p: float, expected: float, kind: str
) -> None:
    name = f"rbo(p={p!r},kind='{kind}')"
    out = irm.evaluate(_one("abcd"), [name], reference=_one(reference))
    # a subnormal holds fewer digits: within a few of its units
    assert out[name].item() == pytest.approx(expected, rel=1e-12, abs=2.0**-1074 * 4)
    assert out[name].item() > 0.0


# the bootstrap hashed the rounds' ids and positions cast strictly to Int64: a UInt64
# id or position from 2**63 on raised polars' InvalidOperationError (a slate's
# per-position sums too). They wrap to their low 64 bits now: a round id gives the
# interval of the log with its ids written as the Int64 of the same bits; a position
# (never below 1, so not so written) the estimates of position 2, and the same interval
# in one plan and in buckets
def _positions(
    position: int, dtype: pl.DataType, rounds: int = 6
) -> tuple[pl.DataFrame, pl.DataFrame]:
    ids = [r for r in range(rounds) for _ in (1, 2)]
    slots = pl.Series([1, position] * rounds, dtype=dtype)
    log = pl.DataFrame(
        {
            "round_id": ids,
            "position": slots,
            "action": [0, 1, 1, 0] * (rounds // 2),
            "reward": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0] * (rounds // 3),
            "pscore": [0.5] * (2 * rounds),
        }
    )
    policy = pl.DataFrame(
        {
            "round_id": [r for r in ids for _ in (0, 1)],
            "position": pl.Series(
                [p for p in [1, position] * rounds for _ in (0, 1)], dtype=dtype
            ),
            "action": [0, 1] * (2 * rounds),
            "prob": [0.8, 0.2] * (2 * rounds),
        }
    )
    return log, policy


def _slate_positions(position: int, dtype: pl.DataType) -> tuple[pl.DataFrame, pl.DataFrame]:
    ids = [r for r in range(4) for _ in (1, 2)]
    slots = pl.Series([1, position] * 4, dtype=dtype)
    log = pl.DataFrame(
        {
            "round_id": ids,
            "position": slots,
            "reward": [1.0, 0.0, 1.0, 1.0] * 2,
            "pscore": [0.25] * 8,
            "pscore_item_position": [0.5] * 8,
        }
    )
    policy = pl.DataFrame(
        {
            "round_id": ids,
            "position": slots,
            "pscore": [0.5] * 8,
            "pscore_item_position": [0.5, 0.25] * 4,
        }
    )
    return log, policy


def _wrapped(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col("round_id").cast(pl.Int64, wrap_numerical=True))


@pytest.mark.parametrize("position", [2**64 - 1, 2**63])
@pytest.mark.parametrize(
    ("tables", "metrics"),
    [(_positions, ["ips", "snips"]), (_slate_positions, ["slate_ips", "slate_sniips"])],
    ids=["position-wise", "slates"],
)
def test_a_uint64_position_from_2_63_on_has_its_bootstrap_interval(
    frame_kind: str, position: int, tables: Any, metrics: list[str]
) -> None:
    log, policy = tables(position, pl.UInt64)
    if frame_kind == "LazyFrame":
        out = irm.evaluate(log.lazy(), metrics, policy=policy.lazy(), ci=0.9, n_bootstrap=200)
        assert isinstance(out, pl.LazyFrame)
        result = out.collect()
    else:
        result = irm.evaluate(log, metrics, policy=policy, ci=0.9, n_bootstrap=200)
    split = irm.evaluate(log, metrics, policy=policy, ci=0.9, n_bootstrap=200, buckets=2)
    assert split.equals(result)
    small_log, small_policy = tables(2, pl.Int64)
    plain = irm.evaluate(small_log, metrics, policy=small_policy)
    for metric in metrics:
        value = result[metric].item()
        assert value == plain[metric].item()
        assert result[f"{metric}_lower"].item() <= value <= result[f"{metric}_upper"].item()


def test_a_uint64_round_id_from_2_63_on_has_its_bootstrap_interval() -> None:
    rounds = [2**64 - 1 - i for i in range(8)]
    log = pl.DataFrame(
        {
            "round_id": pl.Series(rounds, dtype=pl.UInt64),
            "action": [0, 1] * 4,
            "reward": [1.0, 0.0, 0.0, 1.0] * 2,
            "pscore": [0.5] * 8,
        }
    )
    policy = pl.DataFrame(
        {
            "round_id": pl.Series([r for r in rounds for _ in (0, 1)], dtype=pl.UInt64),
            "action": [0, 1] * 8,
            "prob": [0.8, 0.2] * 8,
        }
    )
    out = irm.evaluate(log, ["ips", "snips"], policy=policy, ci=0.9, n_bootstrap=200)
    expected = irm.evaluate(
        _wrapped(log), ["ips", "snips"], policy=_wrapped(policy), ci=0.9, n_bootstrap=200
    )
    assert out.equals(expected)


# b < 0 beside a document relevant to no query (N_d = 0) raised a negative base to -A:
# a NaN propensity in silence (pyxclib's too); b = 0 there is 0 ** -A, inf: propensity 0
_UNDEFINED = (
    "label_propensity(a=0.55, b=-0.5) is undefined (NaN) for 1 document(s) of qrels (first: "
    "'z'): relevant to no query, N_d = 0, they raise N_d + B = B < 0 to the power -A; give "
    "b > 0 (Jain et al.'s B: 1.5 in general), or drop the judgments below relevance_level, "
    "e.g. qrels.filter(pl.col('relevance') >= 1)"
)


def test_label_propensity_of_a_negative_base_is_refused_by_name(frame_kind: str) -> None:
    def call() -> object:
        if frame_kind == "LazyFrame":  # lazy in, lazy out: refused when collected
            out = irm.label_propensity(_TRAIN.lazy(), a=0.55, b=-0.5)
            assert isinstance(out, pl.LazyFrame)
            return out.collect()
        return irm.label_propensity(_TRAIN, a=0.55, b=-0.5)

    with pytest.raises(irm.errors.InvalidValueError, match=re.escape(_UNDEFINED)):
        call()


@pytest.mark.parametrize(("a", "b"), [(0.55, -0.5), (-2.0, -0.5), (0.55, 0.0)])
def test_label_propensity_of_b_at_most_0_is_read_where_defined(a: float, b: float) -> None:
    judged = _TRAIN if (a, b) != (0.55, -0.5) else _TRAIN.filter(pl.col("relevance") >= 1)
    out = irm.label_propensity(judged, a=a, b=b)
    assert isinstance(out, pl.DataFrame)
    c0 = math.log(judged["query_id"].n_unique()) - 1.0
    for doc in out["doc_id"].to_list():
        n_d = judged.filter((pl.col("doc_id") == doc) & (pl.col("relevance") >= 1)).height
        try:
            expected = 1.0 + c0 * (b + 1.0) ** a * (n_d + b) ** -a
        except ZeroDivisionError:  # 0 ** -a: inf, a propensity of 0
            expected = math.inf
        assert out.filter(pl.col("doc_id") == doc)["inv_propensity"].item() == pytest.approx(
            expected, rel=1e-12
        )
