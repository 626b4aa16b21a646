"""Off-policy estimators on an empty log (no row, or none left after a filter): every
estimate, interval and weight diagnostic is null, never NaN nor 0, for every estimator
the registry accepts, on every route; no warning, as the online metrics on an empty
impression log (commit a48a557)."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.metrics.ope import (
    CASCADE_METRICS,
    MODEL_METRICS,
    OPE_METRICS,
    SELF_NORMALIZED,
    SLATE_COLUMNS,
    WEIGHTED,
)

FIXTURES = Path(__file__).parent / "fixtures" / "ope"
#: every off-policy estimator the registry accepts
ESTIMATORS = [metric.name for metric in OPE_METRICS]
#: the self-normalised ones, ratios with no normal interval (refused: ci_method='bootstrap')
RATIOS = SELF_NORMALIZED | {name for name, (_, how) in SLATE_COLUMNS.items() if how}

#: a single-action log whose actions are the indexes of obp's lists too
_LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3],
        "action": [0, 0, 1],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5, 0.5, 0.5],
        "segment": ["x", "x", "y"],
    }
)
_PI = pl.DataFrame(
    {"round_id": [1, 1, 2, 2, 3, 3], "action": [0, 1] * 3, "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9]}
)
_Q = _PI.select("round_id", "action", q_hat=pl.Series([0.6, 0.3] * 3))


@functools.cache
def _read(table: str) -> pl.DataFrame:
    """obp's cascade fixture table, read once (polars frames are not changed in place)."""
    return pl.read_parquet(FIXTURES / f"slate_cascade_s0_{table}.parquet")


def _tables(name: str, *, listed: bool = False) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """A non-empty log of the estimator's kind, and its policy= (and reward_model=)."""
    if name in SLATE_COLUMNS:
        log, policy, model = _read("log"), _read("policy"), None
    elif name in CASCADE_METRICS:
        log, policy, model = _read("log"), _read("cascade_policy"), _read("cascade_reward_model")
    else:
        log, policy, model = _LOG, _PI, _Q
        if listed:  # obp's shape: a list per round, indexed by action
            policy = _PI.group_by("round_id", maintain_order=True).agg("prob")
            model = _Q.group_by("round_id", maintain_order=True).agg("q_hat")
    tables = {"policy": policy}
    if name in MODEL_METRICS:
        tables["reward_model"] = model
    log = log.with_columns(segment=pl.lit("x")) if "segment" not in log.columns else log
    return log, tables


def _count(name: str) -> str:
    return "num_rounds" if name in SLATE_COLUMNS or name in CASCADE_METRICS else "num_rows"


#: each route of the one call: its options, and whether the policy is in obp's shape
ROUTES: dict[str, tuple[dict[str, Any], bool]] = {
    "plain": ({}, False),
    "listed policy": ({}, True),
    "bootstrap interval": ({"ci": 0.9, "n_bootstrap": 50}, False),
    "normal interval": ({"ci": 0.9, "ci_method": "normal"}, False),
    "out of core": ({"buckets": 2}, False),
    "out of core, bootstrap": ({"buckets": 2, "ci": 0.9, "n_bootstrap": 50}, False),
}
_PAIRS = [
    (name, route)
    for name in ESTIMATORS
    for route in ROUTES
    if not (route == "listed policy" and (name in SLATE_COLUMNS or name in CASCADE_METRICS))
    if not (route.startswith("normal") and name in RATIOS)
]
CASES = [pytest.param(name, route, id=f"{name}-{route}") for name, route in _PAIRS]


def _empties(log: pl.DataFrame, frame_kind: str) -> list[pl.DataFrame | pl.LazyFrame]:
    """No row: an empty frame of the log's schema, and (lazy) the log filtered to
    nothing, whose plan does not know it is empty. An eager log filtered to nothing is
    the same empty frame as ``log.clear()`` (the same bits and path: read once)."""
    if frame_kind == "LazyFrame":
        return [log.clear().lazy(), log.lazy().filter(pl.col("round_id") < 0)]
    return [log.clear()]


def _evaluate(log: Any, metrics: list[str], **kwargs: Any) -> tuple[pl.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(log, metrics, **kwargs)
        if isinstance(out, pl.LazyFrame):
            out = out.collect()
    return out, [f"{w.category.__name__}: {w.message}" for w in caught]


def _family(name: str) -> tuple[str, bool]:
    """The tables an estimator is given (_tables): its kind of log, and a reward model."""
    kind = "slate" if name in SLATE_COLUMNS else "cascade" if name in CASCADE_METRICS else "bandit"
    return kind, name in MODEL_METRICS


def _columns(name: str, options: dict[str, Any]) -> list[str]:
    """The columns of ``name`` alone on an empty log: the count, then its own."""
    columns = [_count(name), name]
    if "ci" in options:
        columns += [f"{name}_lower", f"{name}_upper"]
    if name in WEIGHTED or name in SLATE_COLUMNS or name in CASCADE_METRICS:
        columns += [f"{name}_ess", f"{name}_max_weight"]
    return columns


@functools.cache
def _together(
    kind: str, route: str, frame_kind: str
) -> tuple[list[str], list[tuple[pl.DataFrame, list[str]]]]:
    """Every estimator of a ``kind`` of log (_family) that ``route`` takes (CASES), in
    one call on each empty log of ``frame_kind`` (one call for up to 12 cases; the
    reward model given where one of them reads it): the estimators, and each call's
    result and warnings."""
    names = [n for n in ESTIMATORS if _family(n)[0] == kind and (n, route) in _PAIRS]
    options, listed = ROUTES[route]
    log, tables = _tables(next((n for n in names if n in MODEL_METRICS), names[0]), listed=listed)
    return names, [_evaluate(e, names, **tables, **options) for e in _empties(log, frame_kind)]


@pytest.mark.parametrize(("name", "route"), CASES)
def test_an_empty_log_gives_every_value_null(name: str, route: str, frame_kind: str) -> None:
    options, _ = ROUTES[route]
    count = _count(name)
    expected = _columns(name, options)
    # the estimators of its kind of log (the bandits with and without a reward model
    # alike), evaluated together (_together): the count, then each one's columns as
    # alone, in the order asked
    names, calls = _together(_family(name)[0], route, frame_kind)
    for out, caught in calls:
        assert out.columns == [count, *(c for n in names for c in _columns(n, options)[1:])]
        out = out.select(expected)
        assert out.columns == expected
        assert out.height == 1
        assert out[count].item() == 0
        values = out.drop(count)
        assert values.schema == pl.Schema(dict.fromkeys(expected[1:], pl.Float64()))
        # null, not NaN (0 / 0) nor 0 (a resample with no round): no value without a row
        assert values.rows() == [(None,) * len(expected[1:])], values.to_dicts()
        assert caught == []


@pytest.mark.parametrize("name", ESTIMATORS)
def test_an_empty_log_has_no_group_and_no_row(name: str) -> None:
    # by=: a group is the rows of one key, so an empty log has none (no row to be null);
    # per_query=True: one row per log row (per round for the slates), none
    log, tables = _tables(name)
    empty = log.clear()
    by, caught = _evaluate(empty, [name], **tables, by="segment")
    assert by.height == 0
    assert by.columns[:3] == ["segment", _count(name), name]
    assert by.schema[name] == pl.Float64
    rows, caught_rows = _evaluate(empty, [name], **tables, per_query=True)
    assert rows.height == 0
    assert rows.columns[-1] == name
    assert caught == caught_rows == []


def test_a_non_empty_log_keeps_its_values() -> None:
    # the convention reads the count of rows only: one row gives values (the normal
    # interval needs two: null with one, as before)
    log, tables = _tables("dr")
    out, _ = _evaluate(log.head(1), ["ips", "dr"], **tables, ci=0.9, ci_method="normal")
    row = out.row(0, named=True)
    assert row["num_rows"] == 1
    assert row["ips"] == pytest.approx(1.8)
    assert row["ips_ess"] == 1.0
    assert row["ips_max_weight"] == pytest.approx(1.8)
    assert row["ips_lower"] is None
    assert row["ips_upper"] is None


def _engine(name: str, request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """The engine's evaluate (its result as polars) and a converter of polars frames to
    its frames (the Spark session and Dask cluster of tests/conftest.py)."""
    if name == "spark":
        import polars_irmetrics.spark as irm_spark

        session = request.getfixturevalue("spark")

        def spark(*args: Any, **kw: Any) -> pl.DataFrame:
            # through Arrow: pandas' float64 holds NaN and null alike
            out = pl.from_arrow(irm_spark.evaluate(*args, **kw).toArrow())
            assert isinstance(out, pl.DataFrame)
            return out

        def to_spark(frame: pl.DataFrame) -> Any:
            return session.createDataFrame(frame.to_pandas())

        return spark, to_spark
    request.getfixturevalue("client")
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    def dask(*args: Any, **kw: Any) -> pl.DataFrame:
        out = irm_dask.evaluate(*args, **kw).compute().reset_index(drop=True)
        return pl.from_pandas(out, nan_to_null=False)

    return dask, lambda frame: dd.from_pandas(frame.to_pandas(), npartitions=1)


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize("metrics", [["ips", "dr"], ["slate_ips", "slate_sniips"], ["cascade_dr"]])
def test_an_empty_log_is_null_on_the_engines(
    engine: str, metrics: list[str], request: pytest.FixtureRequest
) -> None:
    evaluate, frame = _engine(engine, request)
    log, tables = _tables(metrics[-1])
    # the schema of an empty pandas frame is lost on the way: one row, filtered out there
    given = frame(log.drop("segment"))
    empty = given.filter(given.round_id < 0) if engine == "spark" else given[given.round_id < 0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = evaluate(
            empty,
            metrics,
            **{k: frame(v) for k, v in tables.items()},
            ci=0.9,
            n_bootstrap=20,
        )
    count = "num_rows" if metrics[0] == "ips" else "num_rounds"
    assert out[count].to_list() == [0]
    values = out.drop(count)
    assert values.rows() == [(None,) * values.width], values.to_dicts()
    assert [w for w in caught if issubclass(w.category, irm.errors.IrmWarning)] == []
