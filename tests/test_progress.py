"""progress=: every long evaluation draws its steps in a notebook (and a terminal), stays
silent in a pipeline or a log, and is turned off by progress=False; the value travels in
the one options object (EvalOptions) from every door that evaluates."""

from __future__ import annotations

import io
import re
import sys
import types
from collections.abc import Callable
from typing import Any

import dask.dataframe as dd
import polars as pl
import pytest

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
from polars_irmetrics.comparison import paired
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.ground import progress
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.io.files import sample_paths

PATHS, QRELS_PATH = sample_paths()
RUNS = {p.stem.removeprefix("run_"): pl.read_parquet(p) for p in PATHS}
QRELS = pl.read_parquet(QRELS_PATH)
BM25 = RUNS["bm25"]
TWO = {k: RUNS[k] for k in ("bm25", "dense")}
#: each query's rows in one partition (a hive column such as qhash)
PARTED = BM25.with_columns(part=pl.col("query_id").rank("dense") % 3)
LOG = pl.DataFrame({
    "session_id": [f"s{i}" for i in range(6) for _ in range(3)],
    "position": [1, 2, 3] * 6,
    "clicked": [i % 4 == 0 for i in range(18)],
})  # fmt: skip

Work = Callable[[bool | None], Any]

#: (the work, given progress=; the bar's label; its last count drawn)
LONG: dict[str, tuple[Work, str, str]] = {
    "evaluate-buckets": (
        lambda p: irm.evaluate(BM25, ["map"], qrels=QRELS, buckets=2, progress=p),
        "buckets", "2/2",
    ),
    "evaluate-lazy-buckets": (  # drawn when the plan is collected
        lambda p: irm.evaluate(
            BM25.lazy(), ["map"], qrels=QRELS.lazy(), buckets=2, progress=p
        ).collect(),
        "buckets", "2/2",
    ),
    "evaluate-partitions": (
        lambda p: irm.evaluate(
            PARTED, ["map"], qrels=QRELS, buckets=2, partitioned_by="part", progress=p
        ),
        "partitions", "3/3",
    ),
    "namespace-buckets": (
        lambda p: BM25.irm.evaluate(["map"], qrels=QRELS, buckets=2, progress=p),
        "buckets", "2/2",
    ),
    "evaluate-online-buckets": (
        lambda p: irm.evaluate_online(LOG, ["ctr@3"], buckets=2, progress=p),
        "buckets", "2/2",
    ),
    "evaluate-log-buckets": (  # the door, routed to the online wing
        lambda p: irm.evaluate(
            LOG, ["ctr@3"], query_id="session_id", rank="position", buckets=2, progress=p
        ),
        "buckets", "2/2",
    ),
    "fuse-buckets": (
        lambda p: irm.fuse(TWO, "rrf", buckets=2, progress=p),
        "buckets", "2/2",
    ),
    "optimize-fusion-grid": (
        lambda p: irm.optimize_fusion(
            TWO, "ndcg@10", qrels=QRELS, step=0.5, buckets=3, return_grid=True, progress=p
        )[1],
        "buckets", "3/3",
    ),
    "compare-resamples": (
        lambda p: irm.compare(
            TWO, "map", qrels=QRELS, baseline="bm25", test="bootstrap", seed=1,
            n_resamples=500, progress=p,
        ),
        "bootstrap, 500 resamples", "5/5",  # chunks of 100 resamples (the test's)
    ),
    "compare-buckets": (
        lambda p: irm.compare(TWO, "map", qrels=QRELS, baseline="bm25", buckets=2, progress=p),
        "buckets", "2/2",
    ),
}  # fmt: skip


class _Kernel:
    kernel = object()  # what an IPython shell inside a Jupyter kernel has


def _last_line(err: str) -> str:
    """The bar as last drawn (tqdm redraws the line after a '\\r')."""
    return err.rstrip("\n").split("\r")[-1].split("\n")[-1]


def _same(a: Any, b: Any) -> bool:
    return bool(a.equals(b)) if isinstance(a, pl.DataFrame) else bool(a == b)


@pytest.mark.parametrize("case", list(LONG))
def test_long_evaluation_draws_in_a_notebook_and_is_silent_elsewhere(
    case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work, label, count = LONG[case]
    monkeypatch.delenv("IRM_PROGRESS", raising=False)
    # chunks of 100 resamples on 30 queries, so that 500 resamples make 5 steps
    monkeypatch.setattr(paired, "CHUNK_ELEMENTS", 30 * 100)
    # a pipeline or a log (standard error is neither a terminal nor a kernel's)
    silent = work(None)
    assert capsys.readouterr().err == ""
    forced = work(True)  # drawn on any stream
    assert label in capsys.readouterr().err
    # in a notebook: drawn by default, not with progress=False
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = _Kernel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    drawn = work(None)
    err = capsys.readouterr().err
    last = _last_line(err[err.index(label) :])
    assert last.startswith(label)
    assert re.search(rf"\s{re.escape(count)}\b", last), last
    off = work(False)
    assert capsys.readouterr().err == ""
    progress.set_progress(False)  # a whole batch job turned off
    try:
        work(None)
    finally:
        progress.set_progress(None)
    assert capsys.readouterr().err == ""
    for other in (forced, drawn, off):
        assert _same(silent, other)  # the bar changes nothing else


def test_the_options_object_carries_progress() -> None:
    assert EvalOptions.build(progress=True).progress is True
    assert EvalOptions().progress is None
    message = (
        "progress must be True, False or None, got 'yes': True draws a bar on any stream, "
        "False none, None (default) in a terminal or a notebook only"
    )
    refused: list[Callable[[], object]] = [
        lambda: irm.evaluate(BM25, "map", qrels=QRELS, progress="yes"),  # type: ignore[call-overload]
        lambda: irm.evaluate(BM25.lazy(), "map", qrels=QRELS, progress="yes"),  # type: ignore[call-overload]
        lambda: irm.compare(TWO, "map", qrels=QRELS, progress="yes"),  # type: ignore[typeddict-item]
        lambda: CompareOptions(progress="yes").checked(),  # type: ignore[arg-type]
        lambda: irm.evaluate_online(LOG, "ctr@3", progress="yes"),  # type: ignore[call-overload]
        lambda: irm.fuse(TWO, "rrf", progress="yes"),  # type: ignore[arg-type]
        lambda: irm.optimize_fusion(TWO, "map", qrels=QRELS, progress="yes"),  # type: ignore[arg-type]
        lambda: irm_dask.evaluate(
            dd.from_pandas(BM25.to_pandas(), npartitions=1),
            "map",
            progress="yes",  # type: ignore[arg-type]
        ),
    ]
    for call in refused:
        with pytest.raises(irm.InvalidValueError, match=re.escape(message)):
            call()


def test_bar_draws_in_a_notebook_and_stays_silent_in_a_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("IRM_PROGRESS", raising=False)
    log = io.StringIO()  # not a terminal: a pipeline's or a log file's stream
    assert list(progress.track(range(3), "buckets", 3, stream=log)) == [0, 1, 2]
    assert log.getvalue() == ""
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = _Kernel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    cell = io.StringIO()  # a notebook's output stream is no terminal either
    assert list(progress.track(range(3), "buckets", 3, stream=cell)) == [0, 1, 2]
    drawn = _last_line(cell.getvalue())
    assert drawn.startswith("buckets")
    assert re.search(r" 3/3\b", drawn)
    off = io.StringIO()
    assert list(progress.track(range(3), "buckets", 3, enabled=False, stream=off)) == [0, 1, 2]
    assert off.getvalue() == ""
    monkeypatch.setenv("IRM_PROGRESS", "0")
    assert not progress.Progress("x", 1, stream=io.StringIO()).shown
    progress.set_progress(True)
    try:
        assert progress.Progress("x", 1, stream=io.StringIO()).shown
    finally:
        progress.set_progress(None)
    with pytest.raises(irm.InvalidValueError) as info:
        progress.set_progress("yes")  # type: ignore[arg-type]
    assert str(info.value) == "set_progress('yes'): pass True, False or None"
