"""Shared fixtures: every behaviour is checked on a DataFrame and on a LazyFrame; one
local Spark session and one Dask cluster serve every test that asks for ``spark`` or
``client``.

The suite runs on pytest-xdist workers (``-n auto --dist loadgroup`` in pyproject's
addopts). Every test that uses the ``spark`` fixture is put in one xdist group and every
test that uses ``client`` in another, so one worker starts the JVM and one the Dask
cluster, once each, and the workers run the rest of the suite meanwhile; a new test file
needs nothing more than to ask for the fixture (or, taking the engine by
``request.getfixturevalue``, to name it in an ``engine`` parameter: "spark" or "dask").
"""

from __future__ import annotations

import os

# ranx, a test oracle, runs interpreted: the same Python code and the same values as its
# numba-compiled form, on the tests' small inputs in a fraction of a second, where
# compiling its functions costs minutes of CPU in every fresh environment (80 s for ten
# metrics, measured; cached after). Set before anything imports numba; subprocesses
# inherit it. The one test that shows a bug of ranx's compiled form runs it in a
# subprocess with the JIT on (tests/test_peer_parity.py).
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")
# Python's compiled-module cache on, whatever the environment says (some set
# PYTHONDONTWRITEBYTECODE=1): without it every process the suite starts (the two xdist
# workers, Spark's and Dask's Python workers, each test's fresh interpreter) compiles
# this library and the test modules anew, 1.5 s of CPU each (measured: importing
# polars_irmetrics takes 2.7 s without the cache, 1.1 s with it). Processes started
# from here on inherit it; this one writes from the end of its imports below (the test
# modules). The files land in __pycache__ folders, which git ignores.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import inspect
import io
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dask
import polars as pl
import pytest
from distributed import Client, LocalCluster
from pyspark.sql import SparkSession

import polars_irmetrics as irm
from polars_irmetrics.io import sources
from tests.helpers import dask_idle

sys.dont_write_bytecode = False

#: the xdist group of the tests that use the Spark session, of those that use the Dask
#: cluster (each started once, on the one worker that runs its group; the two groups
#: run side by side on two workers), and of a test that uses both
SPARK_GROUP, DASK_GROUP, ENGINE_GROUP = "spark", "dask", "engines"

Evaluate = Callable[..., pl.DataFrame]


@pytest.fixture(params=["DataFrame", "LazyFrame"])
def frame_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def evaluate(frame_kind: str) -> Evaluate:
    """``irm.evaluate`` on eager or lazy inputs; checks the result's kind, returns a DataFrame."""

    def run(run: pl.DataFrame, metrics: Any, **kwargs: Any) -> pl.DataFrame:
        if frame_kind == "LazyFrame":
            qrels = kwargs.get("qrels")
            if isinstance(qrels, pl.DataFrame):
                kwargs["qrels"] = qrels.lazy()
            out = irm.evaluate(run.lazy(), metrics, **kwargs)
            assert isinstance(out, pl.LazyFrame)
            return out.collect()
        result = irm.evaluate(run, metrics, **kwargs)
        assert isinstance(result, pl.DataFrame)
        return result

    return run


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], None]]:
    """Give the process these bytes as standard input (read once, then cached)."""

    def feed(data: bytes) -> None:
        sources.stream_bytes.cache_clear()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    yield feed
    sources.stream_bytes.cache_clear()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests using a Spark session or a Dask cluster run on one xdist worker (one JVM,
    one cluster for the whole run); runs before xdist reads the groups."""
    # pytest-xdist (3.8) groups by a suffix it adds to ``item._nodeid``; pytest 9.2 keeps
    # the node id in ``item._id`` instead, where that suffix never lands, so it is added
    # here in that case (on an xdist worker with --dist loadgroup only)
    # (and for a test's own ``xdist_group`` marker: the report page's tests share a worker)
    suffix_here = getattr(config.option, "loadgroup", False)
    for item in items:
        engine = _engine_group(item)
        if engine is not None:
            item.add_marker(pytest.mark.xdist_group(engine))
        marker = item.get_closest_marker("xdist_group")
        if marker is None:
            continue
        group = marker.args[0] if marker.args else marker.kwargs.get("name", "default")
        if suffix_here and not hasattr(item, "_nodeid") and hasattr(item, "_id"):
            item._id = type(item._id).parse(f"{item.nodeid}@{group}")


#: a test's own ``request.getfixturevalue("spark")`` / ``engine_io("dask", request)``
_ASKS = re.compile(r"""(?:getfixturevalue|engine_io)\(\s*["'](spark|client|dask)["']""")


#: the engines a test function's source asks for, by function: read once for all of its
#: parametrized items (``inspect.getsource`` per item was a third of collection's time)
_ASKED: dict[object, frozenset[str]] = {}


def _asked(item: pytest.Item) -> frozenset[str]:
    """The engines the test function's source asks for by name (none where it has no
    source, e.g. a doctest)."""
    function = getattr(item, "function", None)
    if function is None:
        return frozenset()
    if function not in _ASKED:
        try:
            source = inspect.getsource(function)
        except (OSError, TypeError):
            source = ""
        _ASKED[function] = frozenset(_ASKS.findall(source))
    return _ASKED[function]


def _engine_group(item: pytest.Item) -> str | None:
    """The xdist group of a test that starts an engine: by the fixtures it asks for, by
    a parameter of its that names the engine ("spark" or "dask", whatever the
    parameter's name: ``engine``, ``path``...), or by its own
    ``request.getfixturevalue("spark")`` / ``engine_io("dask", request)`` call. A test
    missed here starts a second JVM or cluster on another worker (measured: the run had
    a second Spark session and Dask cluster, from test_by_paths_round12's ``path``
    parameter, test_samples_round13's and test_engines_round10's own calls)."""
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    params = [v for v in callspec.params.values() if isinstance(v, str)] if callspec else []
    # a parameter naming the engine says which branch of the test's source runs
    asked = set(params) & {"spark", "dask"}
    if not asked and "request" in names:
        asked = set(_asked(item))
    spark = "spark" in names or "spark" in asked
    dask = "client" in names or bool(asked & {"client", "dask"})
    if spark and dask:
        return ENGINE_GROUP
    if spark:
        return SPARK_GROUP
    if dask:
        return DASK_GROUP
    return None


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local Spark session (2 cores) for every test; its Python workers run this
    interpreter and import this checkout of the library."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    source = str(Path(irm.__file__).resolve().parents[1])
    # the repository's root too: the workers' daemon is tests/_spark_daemon.py
    root = str(Path(__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (source, root, os.environ.get("PYTHONPATH")) if p
    )
    session = (
        SparkSession.builder.master("local[2]")
        .appName("polars_irmetrics tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        # the Python workers forked by a daemon that has imported this library: a worker
        # that ran a task that raised is not reused, and each new one imported it anew
        # (tests/_spark_daemon.py; measured: a refused input's job 5.6-10 s -> 1.6-4 s
        # under load 12, the first job 16 s -> 10 s)
        .config("spark.python.daemon.module", "tests._spark_daemon")
        .config("spark.driver.memory", "1g")
        # the driver JVM's quick compiler only: these jobs are small and many, so the
        # optimising compiler's work (CPU the other test worker needs) never pays off
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def client() -> Iterator[Client]:
    """A real ``distributed.LocalCluster``: two worker processes of one thread each,
    shared by every test."""
    with (
        dask.config.set(
            {
                "distributed.logging.distributed": "error",
                # no statistical profiler sampling each worker's stack every 10 ms
                "distributed.worker.profile.enabled": False,
                # the task-based shuffle for every shuffle and merge of the suite's small
                # frames: distributed's default, P2P, costs each one a run of its own on
                # every worker (measured on four Dask test files, -n 0 at load 11-14:
                # 121 s with P2P, 93 s so). The P2P path users get by default is kept by
                # the tests that pin what it needs (Arrow dictionary and list columns,
                # test_dask.py's matrix): each sets it back around its own calls.
                "dataframe.shuffle.method": "tasks",
            }
        ),
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as session,
    ):
        yield session


@pytest.fixture(autouse=True)
def _dask_settled(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that used the Dask cluster, wait until it runs no task: a graph's
    tasks outlive a ``compute()`` that raised, and a warning one of them relays
    (``distributed.warn``) reaches the client on its event-loop thread, where the next
    test's ``warnings.catch_warnings`` would record it (CI saw one). Only a test that
    left tasks running waits."""
    yield
    if "client" not in request.fixturenames:
        return
    dask_idle(request.getfixturevalue("client"), always=False)


#: The scripts that made the peers' expected values run in side environments where the
#: peers are installed (obp, repro_eval, RecTools), and the Spark workers' daemon: not
#: test modules, not collected.
collect_ignore_glob = ["data/*/make_*.py", "fixtures/*/make_*.py", "_spark_daemon.py"]
