"""Off-policy sums of importance weights all tiny or all huge: each sum is read at a power
of two of its own (:class:`polars_irmetrics.ope.sums.Summary`'s ``scaled``), so that the
estimates, their effective sample sizes and normal intervals are those of float64
formulas (math.fsum) whatever the weights' magnitude, with the same bits in one plan,
out of core (``buckets=``) and on Spark and Dask; a weight no scale keeps exact is
refused."""

from __future__ import annotations

import functools
import math
import re
import warnings
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError, SupportWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import parse_metric_list
from polars_irmetrics.ope.parts import OpeTables, part_sums, rescaled_peaks

from .helpers import engine_io

REWARDS = [1.0, 0.0, 0.5, 1.0]
PSCORES = [0.5, 0.25, 0.8, 0.4]
#: The evaluation policy's probability of the logged action "a" (the rest on "b").
ORDINARY = [0.9, 0.5, 0.1, 0.3]
TINY = [1e-20, 2e-20, 3e-20, 1e-20]
#: Logging propensities that make the weights near 1e300.
HUGE_PSCORES = [1e-300, 3e-300, 2e-300, 5e-301]
Q_A, Q_B = 0.6, 0.3


def _log(pscores: list[float]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "round_id": [1, 2, 3, 4],
            "action": ["a"] * 4,
            "reward": REWARDS,
            "pscore": pscores,
            "segment": [1, 1, 2, 2],
        }
    )


def _policy(probs: list[float]) -> pl.DataFrame:
    rounds = [r for r in (1, 2, 3, 4) for _ in range(2)]
    values = [v for p in probs for v in (p, 1.0 - p)]
    return pl.DataFrame({"round_id": rounds, "action": ["a", "b"] * 4, "prob": values})


def _model() -> pl.DataFrame:
    rounds = [r for r in (1, 2, 3, 4) for _ in range(2)]
    return pl.DataFrame({"round_id": rounds, "action": ["a", "b"] * 4, "q_hat": [Q_A, Q_B] * 4})


@dataclass(frozen=True)
class Case:
    name: str
    probs: list[float]
    pscores: list[float]
    metric: str


CASES = [
    *(Case(f"clip={c:g}", ORDINARY, PSCORES, f"ips(clip={c!r})") for c in (1e-9, 1e-12, 1e-19)),
    Case("clip=1e-300", ORDINARY, PSCORES, "ips(clip=1e-300)"),
    *(Case(f"tiny {m}", TINY, PSCORES, m) for m in ("ips", "snips", "dr", "sndr")),
    *(Case(f"huge {m}", ORDINARY, HUGE_PSCORES, m) for m in ("ips", "snips", "dr", "sndr")),
    Case("huge clip", ORDINARY, HUGE_PSCORES, "ips(clip=1e299)"),
]


def _weights(case: Case) -> list[float]:
    """Each row's weight as the estimator reads it (capped by clip)."""
    raw = [p / s for p, s in zip(case.probs, case.pscores, strict=True)]
    if "clip=" in case.metric:
        cap = float(case.metric.split("clip=")[1].rstrip(")"))
        return [min(w, cap) for w in raw]
    return raw


def _scaled(values: list[float]) -> tuple[list[float], int]:
    """``values`` times the power of two ``2**k`` that brings their largest to [0.5, 1)."""
    k = -math.frexp(max(abs(v) for v in values))[1]
    return [math.ldexp(v, k) for v in values], k


def _expected(case: Case) -> tuple[float, float]:
    """The estimate and its effective sample size, from float64 formulas (math.fsum)."""
    w = _weights(case)
    n = len(w)
    name = case.metric.split("(")[0]
    dm = [p * Q_A + (1.0 - p) * Q_B for p in case.probs]
    if name == "ips":
        value = math.fsum(r * x for r, x in zip(REWARDS, w, strict=True)) / n
    elif name == "snips":
        value = math.fsum(r * x for r, x in zip(REWARDS, w, strict=True)) / math.fsum(w)
    elif name == "dr":
        value = math.fsum(d + x * (r - Q_A) for d, x, r in zip(dm, w, REWARDS, strict=True)) / n
    else:  # sndr
        fixes = math.fsum(x * (r - Q_A) for x, r in zip(w, REWARDS, strict=True))
        value = math.fsum(dm) / n + fixes / math.fsum(w)
    ws, _ = _scaled(w)  # the effective sample size holds at any power of two
    ess = math.fsum(ws) ** 2 / math.fsum(x * x for x in ws)
    return value, ess


def _evaluate(case: Case, frames: Any = None, **kw: Any) -> pl.DataFrame:
    log, policy, model = _log(case.pscores), _policy(case.probs), _model()
    reads_model = case.metric.split("(")[0] in ("dr", "sndr")
    tables = {"policy": policy, "reward_model": model if reads_model else None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        if frames == "lazy":
            lazy = {k: v.lazy() if v is not None else None for k, v in tables.items()}
            return irm.evaluate(log.lazy(), [case.metric], **lazy, **kw).collect()
        return irm.evaluate(log, [case.metric], **tables, **kw)


def _options(case: Case, options: dict[str, Any]) -> dict[str, Any]:
    """The options a case is evaluated with: an interval of a ratio (snips, sndr) the
    bootstrap (no closed-form variance)."""
    if "ci" in options and case.metric.split("(")[0] in ("snips", "sndr"):
        return {"ci": 0.9, "ci_method": "bootstrap", "n_bootstrap": 20, "seed": 1}
    return options


@functools.cache
def _pooled_call(
    probs: tuple[float, ...], pscores: tuple[float, ...], lazy: bool, options: tuple[Any, ...]
) -> pl.DataFrame:
    """One evaluate call of every case of CASES on these tables that is evaluated with
    these options, made once per module (each metric's sums are read at their own
    scale: beside the others, its alone values)."""
    kw = dict(options)
    boot = kw.get("ci_method") == "bootstrap"  # the ratios' interval (_options)
    metrics = [
        c.metric
        for c in CASES
        if (c.probs, c.pscores) == (list(probs), list(pscores))
        if "ci" not in kw or (c.metric.split("(")[0] in ("snips", "sndr")) == boot
    ]
    reads_model = any(m.split("(")[0] in ("dr", "sndr") for m in metrics)
    log, policy = _log(list(pscores)), _policy(list(probs))
    model = _model() if reads_model else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        if lazy:
            lazy_model = None if model is None else model.lazy()
            out = irm.evaluate(
                log.lazy(), metrics, policy=policy.lazy(), reward_model=lazy_model, **kw
            )
            return out.collect()  # type: ignore[union-attr]
        return irm.evaluate(log, metrics, policy=policy, reward_model=model, **kw)  # type: ignore[no-any-return]


def _pooled(case: Case, lazy: bool = False, **kw: Any) -> pl.DataFrame:
    """``case``'s columns (the keys and count, then its metric's) of :func:`_pooled_call`."""
    out = _pooled_call(tuple(case.probs), tuple(case.pscores), lazy, tuple(sorted(kw.items())))
    metric = case.metric
    mine = [c for c in out.columns if c == metric or c.startswith(f"{metric}_")]
    keys = [c for c in out.columns if not c.startswith(("ips", "snips", "dr", "sndr"))]
    return out.select(*keys, *mine)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_estimates_are_float64_formulas_of_the_weights(case: Case) -> None:
    out = _pooled(case)  # beside the other cases of its tables (test_out_of_core's call)
    value, ess = _expected(case)
    got = out[case.metric].item()
    assert math.isclose(got, value, rel_tol=1e-14), (got, value)
    assert math.isclose(out[f"{case.metric}_ess"].item(), ess, rel_tol=1e-14)
    assert out[f"{case.metric}_max_weight"].item() == max(_weights(case))


@pytest.mark.parametrize("clip", [1e-9, 1e-12, 1e-19, 1e-300])
def test_a_tiny_clip_gives_every_round_its_weight(clip: float) -> None:
    # every weight capped at clip: the effective sample size is the number of rounds
    # (it read 3.074 at clip=1e-9 and 0.0 from 1e-12), ips clip times the mean reward
    case = Case("", ORDINARY, PSCORES, f"ips(clip={clip!r})")
    out = _pooled(case)  # the four clips are CASES' first four: one call
    assert math.isclose(out[f"{case.metric}_ess"].item(), 4.0, rel_tol=1e-15)
    assert math.isclose(out[case.metric].item(), clip * 2.5 / 4, rel_tol=1e-15)


@pytest.mark.parametrize("k", [-200, -60, 60, 200])
def test_a_power_of_two_moves_the_estimate_by_it_exactly(k: int) -> None:
    # the weights times 2**k (the clip, or the propensities over 2**k): the estimate
    # times 2**k, to the bit, and the same effective sample size
    base = _evaluate(Case("", ORDINARY, PSCORES, "ips(clip=1e-100)"))
    moved = _evaluate(Case("", ORDINARY, PSCORES, f"ips(clip={math.ldexp(1e-100, k)!r})"))
    assert moved.row(0)[1] == math.ldexp(base.row(0)[1], k)
    assert moved.row(0)[2] == base.row(0)[2]
    pscores = [math.ldexp(p, -abs(k)) for p in PSCORES]  # propensities stay below 1
    huge = _evaluate(Case("", ORDINARY, pscores, "snips"))
    plain = _evaluate(Case("", ORDINARY, PSCORES, "snips"))
    assert huge["snips"].item() == plain["snips"].item()
    assert huge["snips_ess"].item() == plain["snips_ess"].item()


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.metric.startswith("ips")], ids=lambda c: c.name
)
def test_the_normal_interval_is_the_float64_formula(case: Case) -> None:
    out = _pooled(case, ci=0.9, ci_method="normal")  # test_out_of_core's call
    x = [r * w for r, w in zip(REWARDS, _weights(case), strict=True)]
    xs, k = _scaled(x)
    n = len(xs)
    mean = math.fsum(xs) / n
    variance = (math.fsum(v * v for v in xs) - math.fsum(xs) * mean) / (n - 1)
    half = NormalDist().inv_cdf(0.95) * math.sqrt(variance) / math.sqrt(n)
    for column, bound in (("lower", mean - half), ("upper", mean + half)):
        got = out[f"{case.metric}_{column}"].item()
        assert math.isclose(got, math.ldexp(bound, -k), rel_tol=1e-12), (column, got)


_SPLIT = [
    {},
    {"by": "segment"},
    {"ci": 0.9, "ci_method": "normal"},
    {"per_query": True},
]


@pytest.mark.parametrize("options", _SPLIT, ids=str)
@pytest.mark.parametrize(
    "case",
    CASES,
    ids=lambda c: c.name,
)
def test_out_of_core_gives_the_same_bits(case: Case, options: dict[str, Any]) -> None:
    # the cases of the same tables and options in one call each (_pooled)
    options = _options(case, options)
    whole = _pooled(case, **options)
    split = _pooled(case, lazy=True, buckets=2, **options)
    assert split.equals(whole), (whole, split)


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    "case",
    [CASES[1], CASES[4], CASES[-3]],  # clip=1e-12, tiny ips, huge dr
    ids=lambda c: c.name,
)
def test_the_engines_give_the_same_bits(
    engine: str, case: Case, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    whole = _evaluate(case, by="segment")
    reads_model = case.metric.split("(")[0] in ("dr", "sndr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        out = evaluate(
            to_engine(_log(case.pscores)),
            [case.metric],
            policy=to_engine(_policy(case.probs)),
            reward_model=to_engine(_model()) if reads_model else None,
            by="segment",
            partitions=2,
        )
    got = back(out).sort("segment")
    assert got.columns == whole.columns
    assert got.cast(whole.schema).equals(whole), (whole, got)


def _refusal(probs: list[float], pscores: list[float], rewards: list[float]) -> Any:
    log = _log(pscores).with_columns(reward=pl.Series(rewards))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        return irm.evaluate(log, ["ips"], policy=_policy(probs))


@pytest.mark.parametrize(
    ("probs", "pscores", "rewards", "message"),
    [
        (
            [1e-310, 0.5, 0.5, 0.5],
            PSCORES,
            REWARDS,
            "1 log row(s) have an importance weight prob / 'pscore' that is subnormal, "
            "other than 0 but below 2**-1022 = 2.2250738585072014e-308 (first: round_id=1, "
            "prob=1e-310, pscore=0.5): such a weight holds fewer digits than a float64, "
            "which no scale gives back; set the policy's probabilities that small to 0 (the "
            "action not taken), or evaluate such rounds apart",
        ),
        (
            ORDINARY,
            [0.5, 1e-310, 0.8, 0.4],
            REWARDS,
            "1 log row(s) have an importance weight prob / 'pscore' beyond float64's range "
            "(first: round_id=2, prob=0.5, pscore=1e-310): column 'pscore' is too small for "
            "the policy's probability (below prob / 1.8e308); drop those rows, or check how "
            "the logging propensities were computed (e.g. a product of many small ones)",
        ),
        (
            ORDINARY,
            [0.5, 1e-300, 0.8, 0.4],
            [1.0, 1e300, 0.5, 1.0],
            "metric 'ips' cannot be summed: a term of its sums is beyond float64's range "
            "(the product of a huge importance weight pi / 'pscore' and a huge 'reward' or "
            "'q_hat'): read the rewards and q_hat at a larger unit (e.g. "
            "pl.col('reward') * 2.0**-600, the estimates then at that unit), or cap the "
            "weights (e.g. ips(clip=1e300))",
        ),
    ],
    ids=["subnormal weight", "infinite weight", "infinite term"],
)
def test_a_weight_no_scale_keeps_is_refused(
    probs: list[float], pscores: list[float], rewards: list[float], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _refusal(probs, pscores, rewards)


def test_a_subnormal_clip_is_refused() -> None:
    message = (
        "metric 'ips(clip=1e-310)': clip=1e-310 is subnormal (other than 0 but below "
        "2**-1022 = 2.2250738585072014e-308, the smallest normal float64): the weights it "
        "caps would hold fewer digits than a float64; use clip=0 (no weight) or a clip of "
        "at least 2**-1022"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        _evaluate(Case("", ORDINARY, PSCORES, "ips(clip=1e-310)"))


#: Segment 2's rounds (3 and 4) log action "b", which the policy never takes there.
_SEGMENTS = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4, 5],
        "action": ["a", "a", "b", "b", "a"],
        "reward": [1.0, 0.0, 1.0, 1.0, 0.0],
        "pscore": [0.5] * 5,
        "segment": [1, 1, 2, 2, 3],
    }
)
_SEGMENT_POLICY = pl.DataFrame(
    {
        "round_id": [r for r in (1, 2, 3, 4, 5) for _ in range(2)],
        "action": ["a", "b"] * 5,
        "prob": [0.9, 0.1, 0.5, 0.5, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0],
    }
)
_SEGMENT_WARNING = (
    "the policy gives a positive probability to none of the logged actions in 2 by "
    "group(s) (first: segment=2): every importance weight there is 0, so the weighted "
    "estimators read none of their logged rewards (ips 0, snips and sndr NaN, "
    "<metric>_ess 0); the log cannot support the policy in those groups (the direct "
    "method extrapolates the reward model there)"
)


def _said(run: Any) -> tuple[list[str], Any]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run()
    return [str(w.message) for w in caught if issubclass(w.category, SupportWarning)], out


@pytest.mark.parametrize("path", ["one plan", "buckets"])
def test_a_segment_the_policy_supports_nowhere_is_named(path: str) -> None:
    # segments 2 and 3 log only actions the policy gives probability 0 there (it takes
    # them elsewhere: no action is unsupported in the whole log): ips 0, ESS 0, named
    def run() -> pl.DataFrame:
        if path == "buckets":
            lazy = irm.evaluate(
                _SEGMENTS.lazy(),
                ["ips", "snips"],
                policy=_SEGMENT_POLICY.lazy(),
                by="segment",
                buckets=2,
            )
            return lazy.collect()
        return irm.evaluate(_SEGMENTS, ["ips", "snips"], policy=_SEGMENT_POLICY, by="segment")

    said, out = _said(run)
    assert said == [_SEGMENT_WARNING]
    assert out["ips_ess"].to_list()[1:] == [0.0, 0.0]
    assert "_wmax" not in "".join(out.columns)


@pytest.mark.parametrize(
    ("metrics", "options"),
    [(["dm"], {"by": "segment"}), (["ips"], {}), (["ips"], {"by": "segment", "per_query": True})],
    ids=["dm reads no weight", "no by", "per_query"],
)
def test_the_segment_warning_needs_weights_and_segments(
    metrics: list[str], options: dict[str, Any]
) -> None:
    model = _SEGMENT_POLICY.select("round_id", "action", q_hat=pl.lit(0.5))
    extra = {"reward_model": model} if metrics == ["dm"] else {}
    said, _ = _said(
        lambda: irm.evaluate(_SEGMENTS, metrics, policy=_SEGMENT_POLICY, **extra, **options)
    )
    assert said == []


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_engines_name_the_segment_as_one_plan(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    whole = irm.evaluate(_SEGMENTS, ["ips"], policy=_SEGMENT_POLICY, by="segment")
    said, out = _said(
        lambda: back(
            evaluate(
                to_engine(_SEGMENTS),
                ["ips"],
                policy=to_engine(_SEGMENT_POLICY),
                by="segment",
                partitions=2,
            )
        )
    )
    assert said == [_SEGMENT_WARNING]
    assert out.sort("segment").cast(whole.schema).equals(whole)


@pytest.mark.parametrize(
    ("probs", "metrics", "again"),
    [
        (ORDINARY, ["ips", "snips", "dr", "sndr", "dm"], False),  # dm near 0.05: unscaled
        (ORDINARY, ["ips(clip=1e-9)"], True),
        (TINY, ["snips"], True),
    ],
    ids=["ordinary weights", "tiny clip", "tiny policy"],
)
def test_a_split_log_reads_its_parts_again_only_for_weights_out_of_range(
    probs: list[float], metrics: list[str], again: bool
) -> None:
    # the parts' first pass reads every sum at scale 1: a second pass only where the
    # whole log's largest terms ask for another scale (not for a small direct method)
    model = _model().with_columns(q_hat=pl.col("q_hat") / 10.0).lazy() if "dm" in metrics else None
    tables = OpeTables(_log(PSCORES).lazy(), _policy(probs).lazy(), model)
    requests = parse_metric_list(metrics)
    options = EvalOptions()
    sums = part_sums(tables, requests, options, 1.0).collect()
    assert (rescaled_peaks(sums, tables, requests, options) is not None) == again
