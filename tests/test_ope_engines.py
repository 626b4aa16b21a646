"""Off-policy estimators out of core (``buckets=``) and on Spark and Dask: the same bits
as :func:`polars_irmetrics.evaluate` in one plan, on obp's logs (tests/fixtures/ope/)."""

from __future__ import annotations

import json
import math
import re
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import dask
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
    SupportWarning,
)

from .helpers import irm_in_process

FIXTURES = Path(__file__).parent / "fixtures" / "ope"
EXPECTED = json.loads((FIXTURES / "obp_expected.json").read_text())
BANDITS = sorted(case["name"] for case in EXPECTED["cases"])
SLATES = sorted(case["name"] for case in EXPECTED["slates"])

SINGLE = [
    "ips",
    "ips(clip=2)",
    "snips",
    "dm",
    "dr",
    "dr(clip=3)",
    "sndr",
    "switch_dr(tau=2)",
    "dr_os(lambda=5)",
    "sg_ips(lambda=0.2)",
    "sg_dr(lambda=0.2)",
]
SLATE = ["slate_ips", "slate_iips", "slate_rips", "slate_snips", "slate_sniips", "slate_snrips"]


def _read(name: str, table: str) -> pl.DataFrame:
    return pl.read_parquet(FIXTURES / f"{name}_{table}.parquet")


def _bandit(name: str) -> dict[str, pl.DataFrame]:
    log = _read(name, "log").with_columns(segment=pl.col("round_id") % 3)
    return {
        "log": log,
        "policy": _read(name, "policy"),
        "reward_model": _read(name, "reward_model"),
    }


def _evaluate(frame_kind: str, tables: dict[str, pl.DataFrame], metrics: Any, **kw: Any) -> Any:
    """irm.evaluate over DataFrames or LazyFrames (collected), warnings kept quiet."""
    lazy = frame_kind == "LazyFrame"
    frames = {k: v.lazy() if lazy else v for k, v in tables.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SupportWarning)
        out = irm.evaluate(frames.pop("log"), metrics, **frames, **kw)
        return out.collect() if lazy else out


# (case, metrics, tables): every estimator, on every obp log
_SETS = [
    *((name, SINGLE, ("policy", "reward_model")) for name in BANDITS),
    *((name, SLATE, ("policy",)) for name in SLATES),
    *((name, ["cascade_dr"], ("cascade_policy", "cascade_reward_model")) for name in SLATES),
]


def _tables(case: str, tables: tuple[str, ...]) -> dict[str, pl.DataFrame]:
    if case in BANDITS:
        return {k: v for k, v in _bandit(case).items() if k == "log" or k in tables}
    out = {"log": _read(case, "log").with_columns(segment=pl.col("round_id") % 3)}
    for table in tables:
        out[table.removeprefix("cascade_")] = _read(case, table)
    return out


#: The logs a split is checked on against the one plan: obp's logs but its second binary
#: one, whose tables have the first one's columns and types (the same plans, other
#: values; obp's values on it are checked in test_ope.py and test_ope_fast.py), and two
#: of its three slate logs, whose tables all have the same columns and types (their
#: reward structures differ: values again)
SPLIT_BANDITS = [name for name in BANDITS if name != "bandit_binary_s2"]
SPLIT_SLATES = [name for name in SLATES if name != "slate_independent_s1"]


@pytest.mark.parametrize(
    ("case", "metrics", "tables"), [s for s in _SETS if s[0] in (*SPLIT_BANDITS, *SPLIT_SLATES)]
)
def test_buckets_give_the_same_bits(
    case: str, metrics: list[str], tables: tuple[str, ...]
) -> None:
    given_tables = _tables(case, tables)
    for by in (None, "segment"):  # the one plan of a DataFrame, the buckets of a LazyFrame
        whole = _evaluate("DataFrame", given_tables, metrics, by=by)
        assert whole.height == (1 if by is None else 3)
        for buckets in (3, "auto"):  # "auto" is buckets=1 at this size
            split = _evaluate("LazyFrame", given_tables, metrics, by=by, buckets=buckets)
            assert split.equals(whole), (case, by, buckets)
            assert whole.columns == split.columns


def test_the_estimates_are_exact_sums_in_any_row_order() -> None:
    # the sums are exact (integers of 2**-64), so the one plan gives the same bits
    # whatever the order of the rows; a float sum in row order need not
    tables = _bandit("bandit_continuous_s1")
    first = _evaluate("DataFrame", tables, SINGLE, by="segment")
    for seed in range(3):
        shuffled = {k: v.sample(fraction=1.0, shuffle=True, seed=seed) for k, v in tables.items()}
        assert _evaluate("DataFrame", shuffled, SINGLE, by="segment").equals(first)
    # and ips is the exact mean of the contributions, rounded once
    log, pi = tables["log"], tables["policy"]
    w = log.join(pi, on=["round_id", "action"], how="left")
    terms = (w["prob"].fill_null(0.0) / w["pscore"] * w["reward"]).to_list()
    whole = _evaluate("DataFrame", {"log": log, "policy": pi}, ["ips"])
    assert whole["ips"].item() == pytest.approx(math.fsum(terms) / len(terms), rel=1e-15)


@settings(max_examples=10, deadline=None)
@given(
    rounds=st.integers(1, 40),
    actions=st.integers(1, 4),
    buckets=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_random_logs_in_buckets(rounds: int, actions: int, buckets: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    logged = rng.integers(0, actions, rounds)
    raw = rng.random((rounds, actions)) + 1e-3
    prob = raw / raw.sum(axis=1, keepdims=True)
    pscore = rng.uniform(1e-3, 1.0, rounds)
    # weights over several orders of magnitude, rewards with long fractions
    log = pl.DataFrame(
        {
            "round_id": np.arange(rounds),
            "action": logged,
            "reward": rng.random(rounds) * 10.0 ** rng.integers(-3, 4, rounds),
            "pscore": pscore,
            "day": rng.integers(0, 3, rounds),
        }
    )
    ids = np.repeat(np.arange(rounds), actions)
    policy = pl.DataFrame(
        {"round_id": ids, "action": np.tile(np.arange(actions), rounds), "prob": prob.ravel()}
    )
    model = policy.select("round_id", "action", q_hat=pl.Series(rng.random(rounds * actions)))
    tables = {"log": log, "policy": policy, "reward_model": model}
    whole = _evaluate("DataFrame", tables, SINGLE, by="day")
    assert _evaluate("DataFrame", tables, SINGLE, by="day", buckets=buckets).equals(whole)


def test_bucket_checks_name_the_first_round_of_the_whole_log(tmp_path: Path) -> None:
    tables = _bandit("bandit_binary_s0")
    policy = tables["policy"].filter(~pl.col("round_id").is_in([7, 150]))
    message = (
        "2 log row(s) have a round the policy table lacks (first: round_id=150): the "
        "policy needs every logged round's probabilities, one row per (round_id, action) "
        "in column 'prob'"
    )
    with pytest.raises(QuerySetError, match=re.escape(message)):
        irm.evaluate(tables["log"], ["ips"], policy=policy)
    with pytest.raises(QuerySetError, match=re.escape(message)):
        irm.evaluate(tables["log"], ["ips"], policy=policy, buckets=5, spill_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []  # the buckets' folder is removed


def test_bucket_support_warning_reads_the_whole_log() -> None:
    # the log shows 'b' in round 2 only; in buckets, most buckets lack it
    log = pl.DataFrame(
        {
            "round_id": [1, 2, 3, 4],
            "action": ["a", "b", "a", "a"],
            "reward": [1.0, 0.0, 1.0, 0.0],
            "pscore": [0.5] * 4,
        }
    )
    pi = pl.DataFrame(
        {"round_id": [1, 1, 2, 2, 3, 3, 4, 4], "action": ["a", "b"] * 4, "prob": [0.5] * 8}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", SupportWarning)
        assert irm.evaluate(log, ["ips"], policy=pi, buckets=4)["ips"].item() == 0.5
    wider = pi.with_columns(action=pl.col("action").replace("b", "c"))
    with pytest.warns(SupportWarning, match=re.escape("(e.g. action=c)")):
        irm.evaluate(log.filter(pl.col("action") == "a"), ["ips"], policy=wider, buckets=2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"spill_dir": "/no/such/folder"},
            "spill_dir='/no/such/folder' does not exist",
        ),
    ],
)
def test_bucket_refusals(kwargs: dict[str, Any], message: str) -> None:
    tables = _bandit("bandit_binary_s0")
    error = InvalidValueError if "spill_dir" not in kwargs else irm.errors.MissingFileError
    with pytest.raises(error, match=re.escape(message)):
        irm.evaluate(tables["log"].lazy(), ["ips"], policy=tables["policy"], buckets=2, **kwargs)


def test_spill_dir_without_buckets_refused() -> None:
    tables = _bandit("bandit_binary_s0")
    message = (
        "spill_dir='/tmp' is the folder of the out-of-core buckets, and the off-policy "
        "estimators evaluate in one plan unless buckets= is a number or 'auto': pass "
        "buckets=, or drop spill_dir="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):  # buckets="auto-memory"
        irm.evaluate(tables["log"], ["ips"], policy=tables["policy"], spill_dir="/tmp")


# --- Spark and Dask: the same bits as the one plan -------------------------------------

_ENGINE_SETS = [
    ("bandit_binary_s0", SINGLE, ("policy", "reward_model")),
    ("bandit_positions_s3", SINGLE, ("policy", "reward_model")),
    ("bandit_continuous_s1", ["ips", "snips", "sg_ips(lambda=0.2)"], ("policy",)),
    ("slate_cascade_s0", SLATE, ("policy",)),
    ("slate_standard_s2", ["cascade_dr"], ("cascade_policy", "cascade_reward_model")),
]

#: the two ways a split log is read: unsegmented in 3 parts, by segment in 2
_SPLITS = [(None, 3), ("segment", 2)]

#: A covering design, not the full product of cases, splits and engines (each engine
#: call costs seconds): each case (estimator family: rows with a reward model, rows by
#: position, rows without a reward model, slates, cascade) runs once on each engine,
#: Spark with one split and Dask with the other, the splits alternating from case to
#: case, so each engine meets every family once and each split (None and 'segment')
#: on two or three families, and each (case, split) pair is checked on one engine.
_ENGINE_RUNS = [
    pytest.param(*case, engine, by, partitions, id=f"{case[0]}-{engine}-{by or 'whole'}")
    for i, case in enumerate(_ENGINE_SETS)
    for engine in ("spark", "dask")
    for by, partitions in [_SPLITS[(i + (engine == "dask")) % 2]]
]


#: The case whose policy also takes an action no round of the log shows (in some rounds):
#: its engine calls check the support warning too (on Spark and on Dask).
_WARNED = "bandit_continuous_s1"


def _takes_action_9(policy: pl.DataFrame) -> pl.DataFrame:
    """``policy`` taking action 9, which no round of the log shows, in place of action 0
    in every seventh round."""
    return policy.with_columns(
        action=pl.when((pl.col("action") == 0) & (pl.col("round_id") % 7 == 3))
        .then(9)
        .otherwise("action")
    )


def _one_plan(tables: dict[str, pl.DataFrame], metrics: list[str], **kw: Any) -> pl.DataFrame:
    return _evaluate("DataFrame", tables, metrics, **kw)  # type: ignore[no-any-return]


def _engine_tables(case: str, tables: tuple[str, ...]) -> dict[str, pl.DataFrame]:
    """The case's tables, their first 300 rounds (a few partitions' worth, so the
    engines' tasks stay short); the warned case's policy taking action 9."""
    given_tables = _tables(case, tables)
    first = given_tables["log"]["round_id"].unique(maintain_order=True).head(300)
    given_tables = {
        k: v.filter(pl.col("round_id").is_in(first.implode())) for k, v in given_tables.items()
    }
    if case == _WARNED:  # the same call checks the support warning of the whole log
        given_tables["policy"] = _takes_action_9(given_tables["policy"])
    return given_tables


def _engine_call(
    evaluate: Any,
    frame: Any,
    given_tables: dict[str, pl.DataFrame],
    metrics: list[str],
    by: str | None,
    partitions: int,
) -> Any:
    """``evaluate`` of the engine over the case's tables, as its frames."""
    frames = {k: frame(v) for k, v in given_tables.items()}
    return evaluate(
        frames["log"],
        metrics,
        policy=frames["policy"],
        reward_model=frames.get("reward_model"),
        by=by,
        partitions=partitions,
    )


#: The Spark calls :func:`spark_bits` makes at once (threads of this process)
SPARK_CALLS_AT_ONCE = 4


@pytest.fixture(scope="module")
def spark_bits(request: pytest.FixtureRequest) -> dict[str, Future[Any]]:
    """The Spark calls of :func:`test_engines_give_the_same_bits` but the warned case's
    (whose test records its own call's warnings; these cases warn of nothing, as one
    plan), by case: each its own ``evaluate`` call, the calls made from a few threads at
    once, so that their jobs share the session's time rather than wait one call after
    another. Each case's test takes its own call's result, or its error, from its
    ``Future``."""
    evaluate, frame = _engine("spark", request)
    pool = ThreadPoolExecutor(SPARK_CALLS_AT_ONCE)
    calls = {
        case: pool.submit(
            _engine_call, evaluate, frame, _engine_tables(case, tables), metrics, by, parts
        )
        for case, metrics, tables, engine, by, parts in (r.values for r in _ENGINE_RUNS)
        if engine == "spark" and case != _WARNED
    }
    # every call ended before the first test takes one: none runs beside a later test
    # (its warnings, its jobs beside another test's failing ones)
    pool.shutdown(wait=True)
    return calls


@pytest.mark.parametrize(("case", "metrics", "tables", "engine", "by", "partitions"), _ENGINE_RUNS)
def test_engines_give_the_same_bits(
    engine: str,
    case: str,
    metrics: list[str],
    tables: tuple[str, ...],
    by: str | None,
    partitions: int,
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame = _engine(engine, request)
    given_tables = _engine_tables(case, tables)
    warned = case == _WARNED
    whole = _one_plan(given_tables, metrics, by=by)
    assert whole.height == (1 if by is None else 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if engine == "spark" and not warned:  # made by spark_bits
            out = request.getfixturevalue("spark_bits")[case].result()
        else:
            out = _engine_call(evaluate, frame, given_tables, metrics, by, partitions)
    if warned:  # one warning, the one plan's
        said = [str(w.message) for w in caught if issubclass(w.category, SupportWarning)]
        with pytest.warns(SupportWarning) as one_plan:
            irm.evaluate(given_tables["log"], metrics, policy=given_tables["policy"], by=by)
        assert said == [str(w.message) for w in one_plan], said
        assert "(e.g. action=9)" in said[0], said
    got = pl.from_pandas(out.toPandas() if engine == "spark" else out.reset_index(drop=True))
    assert got.columns == whole.columns
    assert got.cast(whole.schema).equals(whole), (case, by)


def _engine(name: str, request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """The engine's evaluate and a converter of polars frames to its frames (the real
    Spark session and Dask cluster of tests/conftest.py)."""
    if name == "spark":
        import polars_irmetrics.spark as irm_spark

        session = request.getfixturevalue("spark")
        return irm_spark.evaluate, lambda f: session.createDataFrame(_pandas(f))
    request.getfixturevalue("client")
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    def run(*args: Any, **kw: Any) -> Any:
        return irm_dask.evaluate(*args, **kw).compute()

    return run, lambda f: dd.from_pandas(_pandas(f), npartitions=2)


def _pandas(frame: pl.DataFrame) -> Any:
    """``frame`` in pandas, an integer column with nulls as pandas' nullable ``Int64``
    (not float64 with NaN, which the engines would read as a float id)."""
    nullable = {
        c: "Int64" for c, s in frame.to_dict().items() if s.dtype.is_integer() and s.has_nulls()
    }
    return frame.to_pandas().astype(nullable)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engine_checks_as_one_plan(engine: str, request: pytest.FixtureRequest) -> None:
    # (the support warning of the whole log, as one plan: test_engines_give_the_same_bits,
    # in the same call as the bits of bandit_continuous_s1)
    evaluate, frame = _engine(engine, request)
    tables = _bandit("bandit_binary_s0")
    log, policy = frame(tables["log"]), tables["policy"]
    message = (
        "2 log row(s) have a round the policy table lacks (first: round_id=150): the "
        "policy needs every logged round's probabilities, one row per (round_id, action) "
        "in column 'prob'"
    )
    missing = frame(policy.filter(~pl.col("round_id").is_in([7, 150])))
    with pytest.raises(QuerySetError, match=re.escape(message)):
        evaluate(log, ["ips"], policy=missing, partitions=3)


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_a_huge_q_hat_is_refused_as_one_plan(engine: str, request: pytest.FixtureRequest) -> None:
    # q_hat 2**62 for action 0 in rounds 7 and 150 (the policy gives it 0.65 and 0.013)
    tables = _bandit("bandit_binary_s0")
    huge = tables["reward_model"].with_columns(
        q_hat=pl.when(pl.col("round_id").is_in([7, 150]) & (pl.col("action") == 0))
        .then(2.0**62)
        .otherwise("q_hat")
    )
    message = (
        "the reward_model table has a 'q_hat' that is infinite or 2**62 or more in "
        "magnitude for an action the policy may take (first: round_id=150, 2 log row(s) "
        "in all)"
    )
    _dr_refused(engine, request, tables["log"], tables["policy"], huge, InvalidValueError, message)


def _dr_refused(
    engine: str,
    request: pytest.FixtureRequest,
    log: pl.DataFrame,
    policy: pl.DataFrame,
    model: pl.DataFrame,
    error: type[Exception],
    message: str,
) -> None:
    """``dr`` over the three tables in buckets or on Spark or Dask raises ``error``."""
    if engine == "buckets":
        run = partial(irm.evaluate, buckets=3)
        frames = (log, policy, model)
    else:
        evaluate, frame = _engine(engine, request)
        run = partial(evaluate, partitions=3)
        frames = (frame(log), frame(policy), frame(model))
    with pytest.raises(error, match=re.escape(message)):
        run(frames[0], ["dr"], policy=frames[1], reward_model=frames[2])


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_an_action_outside_the_bits_listed_twice_as_one_plan(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # actions 100 and up (outside the duplicate check's bits, found from their own rows
    # in each part), the reward model listing round 150's first action twice
    tables = {
        name: frame.with_columns(pl.col("action") + 100)
        for name, frame in _bandit("bandit_binary_s0").items()
    }
    model = tables["reward_model"]
    model = pl.concat([model, model.filter(pl.col("round_id") == 150).head(1)])
    message = (
        "an action is listed twice for one round in the policy table or the reward_model "
        "table (first: round_id=150): keep one row per (round_id, action)"
    )
    _dr_refused(engine, request, tables["log"], tables["policy"], model, DuplicateError, message)


@pytest.mark.parametrize("engine", ["buckets", "spark", "dask"])
def test_a_policy_row_without_an_action_is_refused_as_one_plan(
    engine: str, request: pytest.FixtureRequest
) -> None:
    tables = _bandit("bandit_binary_s0")
    policy = tables["policy"].with_columns(
        action=pl.when((pl.col("round_id") == 150) & (pl.col("action") == 0))
        .then(None)
        .otherwise("action")
    )
    message = (
        "the policy table or the reward_model table has a row with a null 'action' "
        "(first: round_id=150, 1 log row(s) in all)"
    )
    model = tables["reward_model"]
    _dr_refused(engine, request, tables["log"], policy, model, InvalidValueError, message)


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    ("metrics", "kwargs", "error", "message"),
    [
        (
            ["ips"],
            {"buckets": 4},
            InvalidValueError,
            "buckets= is an option of the one-machine out-of-core plan "
            "(polars_irmetrics.evaluate); on {engine} the work divides into partitions= parts",
        ),
        (
            ["ndcg@10"],
            {},
            MetricParameterError,
            "policy= is read by the off-policy estimators (ips, snips, dm, dr...), and no "
            "metric asked for reads it: drop policy=, or ask for them",
        ),
    ],
)
def test_engine_refusals(
    engine: str,
    metrics: list[str],
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame = _engine(engine, request)
    tables = _bandit("bandit_binary_s0")
    name = "Spark" if engine == "spark" else "Dask"
    with pytest.raises(error, match=re.escape(message.format(engine=name))):
        evaluate(frame(tables["log"]), metrics, policy=frame(tables["policy"]), **kwargs)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engine_refuses_judgments_beside_the_policy(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame = _engine(engine, request)
    tables = _bandit("bandit_binary_s0")
    qrels = frame(pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]}))
    message = (
        "qrels= is not read by the off-policy estimators (ips, snips, dm, dr...): they read "
        "the log, policy= and reward_model=; drop qrels="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        evaluate(frame(tables["log"]), ["ips"], policy=frame(tables["policy"]), qrels=qrels)


def test_cli_buckets_give_the_same_numbers(tmp_path: Path) -> None:
    # the irm command (its entry point, as a process runs it), out of core from Parquet
    tables = _bandit("bandit_binary_s0")
    for name, frame in tables.items():
        frame.write_parquet(tmp_path / f"{name}.parquet")
    metrics = ["ips", "snips", "dr", "sndr"]
    args = ["evaluate", str(tmp_path / "log.parquet")]
    args += [a for m in metrics for a in ("-m", m)]
    args += ["--policy", str(tmp_path / "policy.parquet"), "--reward-model"]
    args += [str(tmp_path / "reward_model.parquet"), "--by", "segment", "--buckets", "3"]
    args += ["--format", "json"]
    done = irm_in_process(*args)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    expected = _evaluate("DataFrame", tables, metrics, by="segment")
    assert [row["segment"] for row in printed] == [0, 1, 2]
    for row, values in zip(printed, expected.iter_rows(named=True), strict=True):
        for metric in metrics:
            assert row[metric] == values[metric], metric  # the same float, to the last bit


@pytest.mark.parametrize(("case", "metrics", "tables"), [_SETS[0], _SETS[len(BANDITS)], _SETS[-1]])
def test_per_query_values_are_the_same_bits_in_any_row_order(
    case: str, metrics: list[str], tables: tuple[str, ...]
) -> None:
    # each row's contribution reads its round's exact sums and its group's exact mean
    # weight, so the order the rows arrive in changes no bit
    given_tables = _tables(case, tables)
    first = _evaluate("DataFrame", given_tables, metrics, by="segment", per_query=True)
    for seed in range(3):
        shuffled = {
            k: v.sample(fraction=1.0, shuffle=True, seed=seed) for k, v in given_tables.items()
        }
        again = _evaluate("DataFrame", shuffled, metrics, by="segment", per_query=True)
        assert again.equals(first), (case, seed)


def _listed(long: pl.DataFrame, value: str) -> pl.DataFrame:
    """A long table (a row per round[, position] and action) as lists indexed by action."""
    keys = [c for c in ("round_id", "position") if c in long.columns]
    return long.sort([*keys, "action"]).group_by(keys, maintain_order=True).agg(pl.col(value))


def _arrow_frame(engine: str, frame: Any) -> Any:
    """The engine's frame of a polars frame, lists as Arrow lists (Dask: pd.ArrowDtype)."""
    if engine == "spark":
        return frame
    import dask.dataframe as dd
    import pandas as pd

    return lambda f: dd.from_pandas(f.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)


@pytest.mark.parametrize(
    ("engine", "options"), [("spark", {"per_query": True}), ("dask", {"by": "segment"})]
)
def test_engines_read_the_list_shape(
    engine: str, options: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    # obp's shape (prob and q_hat a list per round and position), each engine reading
    # its own list columns: the one plan's bits and the support warning of the whole log,
    # in one call (each call costs seconds): per query on Spark, means by segment on Dask
    # (each engine's per_query and by= on the long shape: test_ope_parts.py)
    evaluate, frame = _engine(engine, request)
    frame = _arrow_frame(engine, frame)
    tables = _bandit("bandit_positions_s3")
    first = tables["log"]["round_id"].unique(maintain_order=True).head(200)
    tables = {k: v.filter(pl.col("round_id").is_in(first.implode())) for k, v in tables.items()}
    # an action the policy takes (at a position) that the log never shows: warned once
    tables["log"] = tables["log"].filter(pl.col("action") != 0)
    listed = {
        "log": tables["log"],
        "policy": _listed(tables["policy"], "prob"),
        "reward_model": _listed(tables["reward_model"], "q_hat"),
    }
    frames = {k: frame(v) for k, v in listed.items()}
    whole = _evaluate("DataFrame", tables, SINGLE, **options)
    assert _evaluate("DataFrame", listed, SINGLE, **options).equals(whole)
    # Dask on distributed's default shuffle, P2P, which does not take Arrow list columns
    # (the suite's cluster shuffles by tasks: tests/conftest.py)
    p2p = {"dataframe.shuffle.method": "p2p"} if engine == "dask" else {}
    with (
        dask.config.set(p2p),
        pytest.warns(SupportWarning, match=re.escape("(e.g. action=0, position=")) as said,
    ):
        out = evaluate(
            frames["log"],
            SINGLE,
            policy=frames["policy"],
            reward_model=frames["reward_model"],
            partitions=3,
            **options,
        )
    assert len([w for w in said if issubclass(w.category, SupportWarning)]) == 1
    got = pl.from_pandas(out.toPandas() if engine == "spark" else out.reset_index(drop=True))
    assert got.columns == whole.columns
    got = got.cast(whole.schema)
    if options.get("per_query"):
        got = got.sort("round_id", "position")
    assert got.equals(whole), options


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_lists_read_as_text(engine: str, request: pytest.FixtureRequest) -> None:
    # a list that went through pandas objects (Dask turns them into strings), or text
    evaluate, frame = _engine(engine, request)
    log = pl.DataFrame(
        {"round_id": [1, 2], "action": [0, 1], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
    )
    policy = pl.DataFrame({"round_id": [1, 2], "prob": ["[0.2, 0.8]", "[0.5, 0.5]"]})
    if engine == "dask":  # a list column of pandas objects, as dd.from_pandas makes it
        policy = pl.DataFrame({"round_id": [1, 2], "prob": [[0.2, 0.8], [0.5, 0.5]]})
    with pytest.raises(ColumnTypeError, match=re.escape(
        "policy= has its column 'prob' as "
    )) as info:  # fmt: skip
        evaluate(frame(log), ["ips"], policy=frame(policy))
    assert "pd.ArrowDtype(pa.list_(pa.float64()))" in str(info.value)
    assert info.value.args[0].endswith(".explode('prob', 'action')")
