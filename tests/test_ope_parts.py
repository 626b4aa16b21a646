"""Off-policy intervals over a split log: ``ci=`` with ``ci_method="normal"`` out of core
(``buckets=``) and on Spark and Dask gives the same bits as the one plan (exact sums of
the contributions and of their squares, :mod:`polars_irmetrics.ope.normal`); what a
split log still refuses names the fix."""

from __future__ import annotations

import functools
import json
import math
import re
import warnings
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import MetricParameterError, SupportWarning
from polars_irmetrics.ope.intervals import interval_columns

from .helpers import irm_in_process
from .test_ope_engines import (
    BANDITS,
    SLATE,
    SLATES,
    SPLIT_BANDITS,
    SPLIT_SLATES,
    _bandit,
    _engine,
    _evaluate,
    _tables,
)

#: The single-action estimators that are means of their rows' contributions (snips and
#: sndr are ratios: no closed-form variance).
MEANS = [
    "ips",
    "ips(clip=2)",
    "dm",
    "dr",
    "dr(clip=3)",
    "switch_dr(tau=2)",
    "dr_os(lambda=5)",
    "sg_ips(lambda=0.2)",
    "sg_dr(lambda=0.2)",
]
NORMAL = {"ci": 0.9, "ci_method": "normal"}


def _head(tables: dict[str, pl.DataFrame], rounds: int = 300) -> dict[str, pl.DataFrame]:
    """The first ``rounds`` rounds of each table (the engines' tasks stay short)."""
    first = tables["log"]["round_id"].unique(maintain_order=True).head(rounds)
    return {k: v.filter(pl.col("round_id").is_in(first.implode())) for k, v in tables.items()}


@functools.cache
def _one_plan(
    case: str, names: tuple[str, ...], metrics: tuple[str, ...], options: tuple[Any, ...]
) -> pl.DataFrame:
    """The one plan's frame (a DataFrame) of ``metrics`` on ``case``'s tables ``names``
    with ``options`` (sorted items), made once per module: the reference of a split
    and of a formula's test alike."""
    out: pl.DataFrame = _evaluate(
        "DataFrame", _tables(case, names), list(metrics), **dict(options)
    )
    return out


#: the options of the one-plan calls shared by two tests
_BY_NORMAL = (("by", "segment"), *NORMAL.items())


@pytest.mark.parametrize("case", SPLIT_BANDITS)
def test_normal_interval_in_buckets_is_the_same_bits(case: str) -> None:
    tables = _tables(case, ("policy", "reward_model"))
    for by in (None, "segment"):  # the one plan of a DataFrame, the buckets of a LazyFrame
        options = (("by", by), *NORMAL.items())
        whole = _one_plan(case, ("policy", "reward_model"), tuple(MEANS), options)
        for buckets in (3, "auto"):  # "auto" is buckets=1 at this size
            split = _evaluate("LazyFrame", tables, MEANS, by=by, buckets=buckets, **NORMAL)
            assert split.columns == whole.columns
            assert split.equals(whole), (case, by, buckets)
        at = whole.columns.index("ips")  # the interval after its estimate, as in one plan
        assert whole.columns[at : at + 4] == ["ips", "ips_lower", "ips_upper", "ips_ess"]


def test_normal_interval_is_mean_plus_minus_z_sd_over_root_n() -> None:
    # the interval from the rows' contributions (per_query=True), computed by hand
    tables = _bandit("bandit_positions_s3")
    contributions = _evaluate("DataFrame", tables, MEANS, by="segment", per_query=True)
    # the reference of the buckets' test above (the same call)
    out = _one_plan("bandit_positions_s3", ("policy", "reward_model"), tuple(MEANS), _BY_NORMAL)
    z = NormalDist().inv_cdf(0.95)
    for row in out.iter_rows(named=True):
        rows = contributions.filter(pl.col("segment") == row["segment"])
        for label in MEANS:
            x = rows[label].to_numpy()
            mean, half = math.fsum(x) / x.size, z * float(np.std(x, ddof=1)) / math.sqrt(x.size)
            assert row[label] == pytest.approx(mean, rel=1e-15)
            assert row[f"{label}_lower"] == pytest.approx(mean - half, rel=1e-12)
            assert row[f"{label}_upper"] == pytest.approx(mean + half, rel=1e-12)


def test_normal_interval_worked_example() -> None:
    # weights 0.9/0.5 = 1.8, 1.0 and 0.2, rewards 1, 0, 1: ips contributions 1.8, 0, 0.2;
    # mean 2/3, sd^2 = (3.24 + 0.04 - 4/3) / 2 = 0.97333, at 95 % the half width is
    # 1.959964 sqrt(0.97333 / 3) = 1.11641
    log = pl.DataFrame(
        {
            "round_id": [1, 2, 3],
            "action": ["a"] * 3,
            "reward": [1.0, 0.0, 1.0],
            "pscore": [0.5] * 3,
        }
    )
    pi = pl.DataFrame(
        {
            "round_id": [1, 1, 2, 2, 3, 3],
            "action": ["a", "b"] * 3,
            "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9],
        }
    )
    half = NormalDist().inv_cdf(0.975) * math.sqrt((3.24 + 0.04 - 4.0 / 3.0) / 2.0 / 3.0)
    for buckets in ("auto-memory", 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SupportWarning)
            out = irm.evaluate(
                log, ["ips"], policy=pi, ci=0.95, ci_method="normal", buckets=buckets
            )
            # one row: no standard deviation, no interval
            one = irm.evaluate(log.head(1), ["ips"], policy=pi, ci=0.95, ci_method="normal")
        assert one.select("ips_lower", "ips_upper").row(0) == (None, None)
        assert out["ips_lower"].item() == pytest.approx(2.0 / 3.0 - half, rel=1e-12)
        assert out["ips_upper"].item() == pytest.approx(2.0 / 3.0 + half, rel=1e-12)


# 4 examples: each costs about 2 s (three evaluate calls of nine estimators)
@settings(max_examples=4, deadline=None)
@given(
    rounds=st.integers(1, 40),
    actions=st.integers(1, 4),
    buckets=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_random_logs_normal_interval_in_buckets(
    rounds: int, actions: int, buckets: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    raw = rng.random((rounds, actions)) + 1e-3
    log = pl.DataFrame(
        {
            "round_id": np.arange(rounds),
            "action": rng.integers(0, actions, rounds),
            "reward": rng.random(rounds) * 10.0 ** rng.integers(-3, 4, rounds),
            "pscore": rng.uniform(1e-3, 1.0, rounds),
            "day": rng.integers(0, 3, rounds),
        }
    )
    ids = np.repeat(np.arange(rounds), actions)
    policy = pl.DataFrame(
        {
            "round_id": ids,
            "action": np.tile(np.arange(actions), rounds),
            "prob": (raw / raw.sum(axis=1, keepdims=True)).ravel(),
        }
    )
    model = policy.select("round_id", "action", q_hat=pl.Series(rng.random(rounds * actions)))
    tables = {"log": log, "policy": policy, "reward_model": model}
    whole = _evaluate("DataFrame", tables, MEANS, by="day", **NORMAL)
    assert _evaluate("DataFrame", tables, MEANS, by="day", buckets=buckets, **NORMAL).equals(whole)
    # and in any row order
    shuffled = {k: v.sample(fraction=1.0, shuffle=True, seed=seed) for k, v in tables.items()}
    assert _evaluate("DataFrame", shuffled, MEANS, by="day", **NORMAL).equals(whole)


@pytest.mark.parametrize(
    ("metrics", "tables", "kwargs", "error", "message"),
    [
        (
            ["snips"],
            ("policy",),
            NORMAL,
            MetricParameterError,
            "metric 'snips' is a ratio (self-normalised) and has no closed-form variance: "
            "use ci_method='bootstrap'",
        ),
    ],
)
def test_split_interval_refusals(
    metrics: list[str],
    tables: tuple[str, ...],
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    case = SLATES[0] if metrics[0].startswith("slate") else BANDITS[0]
    given_tables = _tables(case, tables)
    with pytest.raises(error, match=re.escape(message)):
        _evaluate("LazyFrame", given_tables, metrics, buckets=2, **kwargs)


#: The two ways a split log is read: unsegmented in 3 parts, by segment in 2.
SPLITS: list[tuple[str | None, int]] = [(None, 3), ("segment", 2)]


def covering(first: int) -> list[Any]:
    """``(engine, by, partitions)``: Spark with split ``first`` of :data:`SPLITS`, Dask
    with the other. Each engine call costs seconds, so a test of the engines reads each
    split on one engine only; its partner test (``first`` the other way round) reads
    each on the other engine: a covering design, each engine meeting each split."""
    return [
        pytest.param("spark", *SPLITS[first], id=f"spark-{SPLITS[first][0] or 'whole'}"),
        pytest.param("dask", *SPLITS[1 - first], id=f"dask-{SPLITS[1 - first][0] or 'whole'}"),
    ]


def engines_give_the_one_plans_bits(
    engine: str,
    request: pytest.FixtureRequest,
    metrics: list[str],
    by: str | None,
    partitions: int,
    **options: Any,
) -> None:
    """``metrics`` on the engine, ``by`` in ``partitions`` parts, equal the one plan's
    frame bit for bit (the first 300 rounds of a positions log); per-query rows, which
    the engines give part by part, sorted as the one plan sorts them."""
    evaluate, frame = _engine(engine, request)
    tables = _head(_bandit("bandit_positions_s3"))
    frames = {k: frame(v) for k, v in tables.items()}
    whole = _evaluate("DataFrame", tables, metrics, by=by, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        out = evaluate(
            frames["log"],
            metrics,
            policy=frames["policy"],
            reward_model=frames["reward_model"],
            by=by,
            partitions=partitions,
            **options,
        )
    got = pl.from_pandas(out.toPandas() if engine == "spark" else out.reset_index(drop=True))
    assert got.columns == whole.columns
    got = got.cast(whole.schema)
    if options.get("per_query"):
        got = got.sort([*([by] if by else []), "round_id", "position"])
    assert got.equals(whole), by


# the normal interval unsegmented on Spark, by segment on Dask; the bootstrap the other
# way round (test_ope_boot_parts.py)
@pytest.mark.parametrize(("engine", "by", "partitions"), covering(0))
def test_engines_normal_interval_is_the_same_bits(
    engine: str, by: str | None, partitions: int, request: pytest.FixtureRequest
) -> None:
    engines_give_the_one_plans_bits(engine, request, MEANS, by, partitions, **NORMAL)


#: The slate and cascade intervals: every slate estimator's bootstrap (the ratios
#: recomputed in each resample) and the normal interval of those that are means. 50
#: resamples: the point is the same bits split or not, which needs no more.
SLATE_INTERVALS = [
    (SLATE, ("policy",), {"ci": 0.9, "n_bootstrap": 50}),
    (SLATE[:3], ("policy",), NORMAL),
    (["cascade_dr"], ("cascade_policy", "cascade_reward_model"), {"ci": 0.9, "n_bootstrap": 50}),
    (["cascade_dr"], ("cascade_policy", "cascade_reward_model"), NORMAL),
]


@pytest.mark.parametrize(("metrics", "tables", "kwargs"), SLATE_INTERVALS)
def test_slate_intervals_in_buckets_are_the_same_bits(
    metrics: list[str], tables: tuple[str, ...], kwargs: dict[str, Any]
) -> None:
    for case in SPLIT_SLATES:  # the one plan of a DataFrame, the buckets of a LazyFrame
        given_tables = _tables(case, tables)
        for by in (None, "segment"):
            options = (("by", by), *kwargs.items())
            whole = _one_plan(case, tables, tuple(metrics), options)
            assert whole.columns[-5:-2] == [metrics[-1], *interval_columns(metrics[-1])]
            for buckets in (1, 3):  # "auto" is one bucket at this size
                split = _evaluate(
                    "LazyFrame", given_tables, metrics, by=by, buckets=buckets, **kwargs
                )
                assert split.columns == whole.columns
                assert split.equals(whole), (case, by, buckets)


@pytest.mark.parametrize("case", SLATES)
def test_slate_normal_interval_is_the_rounds_mean_and_sd(case: str) -> None:
    # mean +- z sd / sqrt(n) of the rounds' values (per_query=True), computed apart
    tables = _tables(case, ("policy",))
    # the reference of the buckets' test above (the same call)
    out = _one_plan(case, ("policy",), tuple(SLATE[:3]), _BY_NORMAL)
    rounds = _evaluate("DataFrame", tables, SLATE[:3], by="segment", per_query=True)
    z = NormalDist().inv_cdf(0.95)
    for row in out.iter_rows(named=True):
        mine = rounds.filter(pl.col("segment") == row["segment"])
        for label in SLATE[:3]:
            values = mine[label].to_numpy()
            half = z * values.std(ddof=1) / math.sqrt(values.size)
            assert row[label] == pytest.approx(values.mean(), rel=1e-12)
            assert row[f"{label}_lower"] == pytest.approx(values.mean() - half, rel=1e-12)
            assert row[f"{label}_upper"] == pytest.approx(values.mean() + half, rel=1e-12)


# each engine: the slates and cascade_dr, the bootstrap and the normal interval, in two
# calls (Spark the slates' bootstrap and cascade_dr's normal interval, Dask the others)
@pytest.mark.parametrize(
    ("engine", "intervals"), [("spark", (0, 3)), ("dask", (1, 2))], ids=["spark", "dask"]
)
def test_engines_slate_intervals_are_the_same_bits(
    engine: str, intervals: tuple[int, int], request: pytest.FixtureRequest
) -> None:
    evaluate, frame = _engine(engine, request)
    for metrics, names, kwargs in (SLATE_INTERVALS[i] for i in intervals):
        tables = _head(_tables(SLATES[0], names), 100)
        frames = {k: frame(v) for k, v in tables.items()}
        whole = _evaluate("DataFrame", tables, metrics, by="segment", **kwargs)
        out = evaluate(
            frames["log"],
            metrics,
            policy=frames["policy"],
            reward_model=frames.get("reward_model"),
            by="segment",
            partitions=2,
            **kwargs,
        )
        got = pl.from_pandas(out.toPandas() if engine == "spark" else out.reset_index(drop=True))
        assert got.columns == whole.columns
        assert got.cast(whole.schema).equals(whole), metrics


def test_cli_normal_interval_in_buckets(tmp_path: Path) -> None:
    # the irm command (its entry point, as a process runs it), out of core from Parquet
    # files: the normal interval and the bootstrap, the one plan's bits
    tables = _bandit("bandit_binary_s0")
    for name, frame in tables.items():
        frame.write_parquet(tmp_path / f"{name}.parquet")
    metrics = ["ips", "dr"]
    args = ["evaluate", str(tmp_path / "log.parquet")]
    args += [a for m in metrics for a in ("-m", m)]
    args += ["--policy", str(tmp_path / "policy.parquet"), "--reward-model"]
    args += [str(tmp_path / "reward_model.parquet"), "--by", "segment", "--buckets", "3"]
    args += ["--ci", "0.9", "--format", "json"]
    done = irm_in_process(*args, "--ci-method", "normal")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    expected = _evaluate("DataFrame", tables, metrics, by="segment", **NORMAL)
    assert [row["segment"] for row in printed] == [0, 1, 2]
    for row, values in zip(printed, expected.iter_rows(named=True), strict=True):
        for column in ("ips", "ips_lower", "ips_upper", "dr", "dr_lower", "dr_upper"):
            assert row[column] == values[column], column  # the same float, to the last bit
    # per_query out of core: each round's contribution, the same floats
    rows_args = [a for a in args if a not in ("--ci", "0.9")] + ["--per-query", "-m", "snips"]
    done = irm_in_process(*rows_args)
    assert done.returncode == 0, done.stderr
    expected = _evaluate(
        "DataFrame", tables, [*metrics, "snips"], by="segment", per_query=True
    ).to_dicts()
    assert json.loads(done.stdout) == expected
    # the bootstrap out of core: each bucket's sums merged, the one plan's interval
    boot = irm_in_process(*args, "--n-bootstrap", "50")
    assert boot.returncode == 0, boot.stderr
    expected = _evaluate(
        "DataFrame", tables, metrics, by="segment", ci=0.9, n_bootstrap=50
    ).to_dicts()
    assert json.loads(boot.stdout) == expected


# --- per_query=True in buckets: two passes, the same bits --------------------------------

SINGLE_ALL = [*MEANS, "snips", "sndr"]


@pytest.mark.parametrize("case", SPLIT_BANDITS)
def test_per_query_in_buckets_is_the_same_bits(frame_kind: str, case: str) -> None:
    # snips and sndr read their group's mean weight: merged in the first pass
    tables = _tables(case, ("policy", "reward_model"))
    for by in (None, "segment"):
        whole = _evaluate(frame_kind, tables, SINGLE_ALL, by=by, per_query=True)
        for buckets in (3, "auto"):  # "auto" is buckets=1 at this size
            split = _evaluate(
                frame_kind, tables, SINGLE_ALL, by=by, per_query=True, buckets=buckets
            )
            assert split.columns == whole.columns
            assert split.equals(whole), (case, by, buckets)
        assert whole.height == tables["log"].height


def test_per_query_snips_rows_average_to_snips() -> None:
    # each row's r w / mean(w): their mean is snips, whose weights' mean is the group's
    tables = _tables("bandit_continuous_s1", ("policy",))
    rows = _evaluate("DataFrame", tables, ["snips"], by="segment", per_query=True, buckets=4)
    means = _evaluate("DataFrame", tables, ["snips"], by="segment")
    got = rows.group_by("segment").agg(pl.col("snips").mean()).sort("segment")
    assert got["snips"].to_list() == pytest.approx(means["snips"].to_list(), rel=1e-12)


def test_per_query_in_buckets_checks_the_whole_log(tmp_path: Path) -> None:
    tables = _bandit("bandit_binary_s0")
    policy = tables["policy"].filter(~pl.col("round_id").is_in([7, 150]))
    message = (
        "2 log row(s) have a round the policy table lacks (first: round_id=150): the "
        "policy needs every logged round's probabilities"
    )
    with pytest.raises(irm.errors.QuerySetError, match=re.escape(message)):
        irm.evaluate(
            tables["log"], ["snips"], policy=policy, per_query=True, buckets=5, spill_dir=tmp_path
        )
    assert list(tmp_path.iterdir()) == []  # the buckets' folder is removed
    wider = tables["policy"].with_columns(
        action=pl.when(pl.col("action") == 0).then(9).otherwise("action")
    )
    with pytest.warns(SupportWarning, match=re.escape("(e.g. action=9)")):
        irm.evaluate(tables["log"], ["ips"], policy=wider, per_query=True, buckets=2)


#: The slate estimators (the self-normalised ones divide by the whole log's mean
#: weights, merged in a first pass), and cascade_dr.
ROUND_SETS = [
    (SLATE, ("policy",)),
    (["cascade_dr"], ("cascade_policy", "cascade_reward_model")),
]


@pytest.mark.parametrize("case", SPLIT_SLATES)
@pytest.mark.parametrize(("metrics", "tables"), ROUND_SETS)
def test_per_query_slates_in_buckets_is_the_same_bits(
    case: str, metrics: list[str], tables: tuple[str, ...]
) -> None:
    given_tables = _tables(case, tables)
    for by in (None, "segment"):  # the one plan of a DataFrame, the buckets of a LazyFrame
        whole = _evaluate("DataFrame", given_tables, metrics, by=by, per_query=True)
        for buckets in (3, "auto"):  # "auto" is buckets=1 at this size
            split = _evaluate(
                "LazyFrame", given_tables, metrics, by=by, per_query=True, buckets=buckets
            )
            assert split.columns == whole.columns
            assert split.equals(whole), (case, by, buckets)
        assert whole.height == given_tables["log"]["round_id"].n_unique()


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(("metrics", "tables"), ROUND_SETS)
def test_engines_per_query_slates_is_the_same_bits(
    engine: str, metrics: list[str], tables: tuple[str, ...], request: pytest.FixtureRequest
) -> None:
    evaluate, frame = _engine(engine, request)
    given_tables = _head(_tables(SLATES[0], tables), 100)
    frames = {k: frame(v) for k, v in given_tables.items()}
    whole = _evaluate("DataFrame", given_tables, metrics, by="segment", per_query=True)
    out = evaluate(
        frames["log"],
        metrics,
        policy=frames["policy"],
        reward_model=frames.get("reward_model"),
        by="segment",
        partitions=2,
        per_query=True,
    )
    got = pl.from_pandas(out.toPandas() if engine == "spark" else out.reset_index(drop=True))
    assert got.columns == whole.columns
    assert got.cast(whole.schema).sort("segment", "round_id").equals(whole)


# by segment on Spark, unsegmented on Dask (the list shape's per_query, unsegmented on
# Spark: test_ope_engines.py; the slates' by segment on both: above)
@pytest.mark.parametrize(("engine", "by", "partitions"), covering(1))
def test_engines_per_query_is_the_same_bits(
    engine: str, by: str | None, partitions: int, request: pytest.FixtureRequest
) -> None:
    # the first pass merges each group's mean weight; the second gives each part's rows
    engines_give_the_one_plans_bits(engine, request, SINGLE_ALL, by, partitions, per_query=True)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_per_query_checks_the_whole_log(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # the first pass raises at the call, with the count and least round of the whole log
    evaluate, frame = _engine(engine, request)
    tables = _head(_bandit("bandit_binary_s0"))
    policy = tables["policy"].filter(~pl.col("round_id").is_in([7, 150]))
    message = (
        "2 log row(s) have a round the policy table lacks (first: round_id=150): the "
        "policy needs every logged round's probabilities"
    )
    with pytest.raises(irm.errors.QuerySetError, match=re.escape(message)):
        evaluate(
            frame(tables["log"]), ["snips"], policy=frame(policy), per_query=True, partitions=3
        )


def _random_slates(rounds: int, slots: int, seed: int) -> dict[str, pl.DataFrame]:
    """A slate log of ``rounds`` rounds of 1 to ``slots`` slots (a round shows its first
    ones), weights over orders of magnitude, and the policy's propensities (of the
    shapes a slate's have: one ``pscore`` per round, a falling ``pscore_cascade``)."""
    rng = np.random.default_rng(seed)
    shown = rng.integers(1, slots + 1, rounds)
    round_id = np.repeat(np.arange(rounds), shown)
    position = np.concatenate([np.arange(1, n + 1) for n in shown])
    size = round_id.size

    def propensity() -> np.ndarray:
        return np.asarray(rng.uniform(1e-3, 1.0, size) * 10.0 ** -rng.integers(0, 3, size))

    columns = ("pscore", "pscore_item_position", "pscore_cascade")
    log = pl.DataFrame(
        {
            "round_id": round_id,
            "position": position,
            "reward": rng.random(size) * 10.0 ** rng.integers(-2, 3, size),
            **{c: propensity() for c in columns},
            "day": (round_id * 7) % 3,
        }
    )
    policy = log.select("round_id", "position", **{c: pl.Series(propensity()) for c in columns})
    # a slate's pscore one value per round, its cascade falling down the slate (the
    # rows of a round in order of position)
    shaped = [
        pl.col("pscore").first().over("round_id"),
        pl.col("pscore_cascade").cum_min().over("round_id"),
    ]
    return {"log": log.with_columns(shaped), "policy": policy.with_columns(shaped)}


# 4 examples: each costs about 1.5 s (six evaluate calls)
@settings(max_examples=4, deadline=None)
@given(
    rounds=st.integers(2, 30),
    slots=st.integers(1, 4),
    buckets=st.integers(2, 5),
    seed=st.integers(0, 2**16),
)
def test_random_slate_logs_split_are_the_same_bits(
    rounds: int, slots: int, buckets: int, seed: int
) -> None:
    # rounds of different lengths (a position some rounds lack), the intervals and
    # per_query of every slate estimator: the one plan's bits with buckets=
    tables = _random_slates(rounds, slots, seed)
    for options in (
        {"ci": 0.8, "n_bootstrap": 50, "seed": seed},
        {"ci": 0.8, "ci_method": "normal"},
        {"per_query": True},
    ):
        metrics = SLATE[:3] if options.get("ci_method") == "normal" else SLATE
        whole = _evaluate("DataFrame", tables, metrics, by="day", **options)
        split = _evaluate("DataFrame", tables, metrics, by="day", buckets=buckets, **options)
        assert split.equals(whole), options


def test_pooled_slate_rounds_split_are_the_same_bits() -> None:
    # 5,000 rounds: pooled into 4,096 buckets by their hash, in any split
    tables = _random_slates(5000, 3, 11)
    kwargs = {"ci": 0.9, "n_bootstrap": 100}
    whole = _evaluate("DataFrame", tables, SLATE, **kwargs)
    assert whole.equals(_evaluate("LazyFrame", tables, SLATE, buckets=3, **kwargs))
    for label in SLATE:
        assert (
            whole[f"{label}_lower"].item() < whole[label].item() < whole[f"{label}_upper"].item()
        )


def test_per_query_mean_weights_are_correctly_rounded() -> None:
    # the first pass's mean weight of slate_snips over the whole log is the exact sum of
    # the weights divided once (polars multiplies a column by a broadcast scalar's
    # reciprocal, a unit in the last place off, unless the divisor is a column)
    from polars_irmetrics.ground.options import EvalOptions
    from polars_irmetrics.metrics.registry import parse_metric_list
    from polars_irmetrics.ope.parts import OpeTables, merge_sums, part_sums

    tables = _tables("slate_standard_s2", ("policy",))
    joined = tables["log"].join(tables["policy"], on=["round_id", "position"], suffix="_e")
    weights = (joined["pscore_e"] / joined["pscore"]).to_list()
    options = EvalOptions(per_query=True)
    requests = parse_metric_list(["slate_snips"])
    split = OpeTables(tables["log"].lazy(), tables["policy"].lazy(), None)
    sums = part_sums(split, requests, options).collect().lazy()
    means = merge_sums(sums, split, requests, options, warn=False).collect()
    (column,) = [c for c in means.columns if c.endswith("slate_snips")]
    assert means[column].to_list() == [math.fsum(weights) / len(weights)] * 3
