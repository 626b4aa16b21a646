"""Small builders shared by the tests."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl
import pyarrow as pa
from hypothesis import HealthCheck, settings

import polars_irmetrics as irm
from polars_irmetrics.cli import main as cli_main
from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.io import sources

ROOT = Path(__file__).resolve().parents[1]


def script(path: str) -> ModuleType:
    """A Python file of the repository that is not part of the package (a docs build
    hook, a fixture script), by its path from the repository root."""
    name = "_script_" + path.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs_hook(name: str) -> ModuleType:
    """A docs build hook (docs/hooks/NAME.py), which is not part of the package."""
    return script(f"docs/hooks/{name}.py")


def judged_list(query_id: str, relevance: list[float]) -> pl.DataFrame:
    """A judged table: one query whose documents at ranks 1..n have these labels."""
    n = len(relevance)
    return pl.DataFrame(
        {
            "query_id": [query_id] * n,
            "doc_id": [f"d{i}" for i in range(1, n + 1)],
            "rank": list(range(1, n + 1)),
            "relevance": relevance,
        }
    )


def property_settings(max_examples: int) -> settings:
    """Hypothesis settings of the property tests: reproducible, no deadline."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def by_query(frame: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """A per-query result frame as ``{query_id: {metric: value}}``."""
    return {row.pop("query_id"): row for row in frame.iter_rows(named=True)}


#: A fresh interpreter's warning filters (``python -W`` unset): the ``irm`` command's
#: "each warning once per place" reads them, so the in-process runner restores them.
_FRESH_FILTERS: list[tuple[str, type[Warning], str | None]] = [
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
]


def irm_in_process(
    *args: str, cwd: Path | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """The ``irm`` command run by its entry point in this process, as a fresh process
    runs it (``python -m polars_irmetrics ARGS`` in ``cwd``): its exit status, standard
    output and standard error, without a second interpreter's start (about a second
    each). A few tests in ``test_cli.py`` run the real process for the same contract."""
    out, err = io.StringIO(), io.StringIO()
    feed = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    here = os.getcwd()
    sources.stream_bytes.cache_clear()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            warnings.resetwarnings()
            for action, category, module in reversed(_FRESH_FILTERS):
                warnings.filterwarnings(action, category=category, module=module or "")
            old_stdin, sys.stdin = sys.stdin, feed
            try:
                status = cli_main(list(args))
            except SystemExit as done:  # argparse: a usage error (2), --help (0)
                status = done.code if isinstance(done.code, int) else 1
            finally:
                sys.stdin = old_stdin
    finally:
        os.chdir(here)
        sources.stream_bytes.cache_clear()
    return subprocess.CompletedProcess(
        ["irm", *args], status, stdout=out.getvalue(), stderr=err.getvalue()
    )


def multipletests(pvals: Any, alpha: float = 0.05, method: str = "hs") -> Any:
    """statsmodels' ``multipletests``, called as is, with ``gc.collect`` a no-op during
    the call: its holm branch runs a full garbage collection after the arithmetic, about
    0.4 s in a test process that holds Spark and Dask (the values do not depend on it)."""
    import gc

    from statsmodels.stats.multitest import multipletests as peer

    collect = gc.collect
    gc.collect = lambda generation=2: 0  # type: ignore[assignment]
    try:
        return peer(pvals, alpha=alpha, method=method)
    finally:
        gc.collect = collect


def engine_io(name: str, request: Any) -> tuple[Any, Any, Any]:
    """The engine ``name``'s evaluate ("spark" or "dask"), a converter of polars frames
    to its frames (Dask: two partitions), and one of its results back to polars, on the
    real Spark session and Dask cluster of tests/conftest.py (asked of ``request``, a
    ``pytest.FixtureRequest``, so that the test joins that engine's xdist group)."""
    if name == "spark":
        import polars_irmetrics.spark as irm_spark

        session = request.getfixturevalue("spark")

        def from_spark(out: Any) -> pl.DataFrame:
            return pl.from_arrow(out.toArrow())  # type: ignore[return-value]

        return irm_spark.evaluate, lambda f: session.createDataFrame(f.to_arrow()), from_spark
    request.getfixturevalue("client")
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa

    import polars_irmetrics.dask as irm_dask

    def from_dask(out: Any) -> pl.DataFrame:
        table = pa.Table.from_pandas(out.compute(), preserve_index=False)
        return pl.from_arrow(table)  # type: ignore[return-value]

    def to_dask(frame: pl.DataFrame) -> Any:
        return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)

    return irm_dask.evaluate, to_dask, from_dask


def predicted(
    route: str,
    request: Any,
    predictions: pl.DataFrame,
    labels: pl.DataFrame,
    metrics: list[str],
    order: tuple[str, ...],
    **kw: Any,
) -> pl.DataFrame:
    """``metrics`` of ``predictions`` against ``labels`` on ``route``: "spark" or "dask"
    (:func:`engine_io`), "lazy" (LazyFrames in, collected), "buckets" (out of core in 4
    buckets) or "frame" (DataFrames); the result sorted by the columns of ``order`` it
    holds, so that every route's rows compare as they are."""
    if route in ("spark", "dask"):
        evaluate, to_engine, back = engine_io(route, request)
        out = back(evaluate(to_engine(predictions), metrics, labels=to_engine(labels), **kw))
    elif route == "lazy":
        out = irm.evaluate(predictions.lazy(), metrics, labels=labels.lazy(), **kw).collect()
    else:
        extra = {"buckets": 4} if route == "buckets" else {}
        out = irm.evaluate(predictions, metrics, labels=labels, **extra, **kw)
    keys = [c for c in order if c in out.columns]
    return out.sort(keys) if keys else out


def lists_refused(frame: str, query: str) -> str:
    """The refusal of a list-shaped ``frame`` ("run" or "reference (reference=)") whose
    lists' order and score lists order query ``query`` differently (one document)."""
    return (
        f"the lists' order and column 'score' of the {frame} order query {query} "
        "differently: 1 document(s) score lower than a document listed after them. "
        f"order='auto' reads the lists' order (their positions) where the {frame} has no "
        "list of ranks, and which order is meant the data cannot say: pass order='rank' "
        "to rank by the lists' order, or order='score' to rank by the score lists in "
        "'score' (trec_eval's order, which ignores ranks)"
    )


def zstd_compress(data: bytes) -> bytes:
    """``data`` as one zstd frame (pyarrow's codec: the standard library has none)."""
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return bytes(sink.getvalue().to_pybytes())


def warned(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """``call``'s result (a LazyFrame collected) and the library's warnings it gives
    (:class:`~polars_irmetrics.errors.IrmWarning` and its kinds), in order."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call()
        if isinstance(got, pl.LazyFrame):
            got = got.collect()
    return got, [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]


#: The Spark calls :func:`at_once` makes at once
SPARK_CALLS_AT_ONCE = 4


def at_once(calls: Sequence[Callable[[], Any]]) -> list[Any]:
    """Each call's result, in order, the calls made from a few threads at once: Spark
    calls, whose jobs then share the one session's time rather than wait one call after
    another (benchmarks/results_tests.md). For calls that raise nothing and whose
    warnings no assertion reads: a refusal run beside other calls once crashed a Spark
    Python worker, and the library's own ``warnings.catch_warnings`` (a warning kept to
    give later) is not thread-safe, so a call's warnings may reach another's record; the
    process's warning filters are restored after. Every call has ended when this
    returns; the first error is raised, as one after another."""
    with warnings.catch_warnings(), ThreadPoolExecutor(SPARK_CALLS_AT_ONCE) as pool:
        futures = [pool.submit(call) for call in calls]
    return [future.result() for future in futures]


def dask_idle(client: Any, *, always: bool = True) -> bool:
    """Wait until the Dask cluster of ``client`` runs no task (a graph's last tasks
    outlive a ``compute()`` that raised), then 0.3 s more: a worker's event (the warning
    a task relays through the scheduler) reaches the client a little after its task
    ends. ``always=False`` waits that extra time only where a task was still running.
    Says whether any was."""
    busy = False
    for _ in range(200):
        if not any(client.processing().values()):
            break
        busy = True
        time.sleep(0.05)
    if always or busy:
        time.sleep(0.3)
    return busy
