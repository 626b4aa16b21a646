"""``polars_irmetrics.dask.evaluate`` on a real ``distributed.LocalCluster`` (2 worker
processes, the ``client`` fixture of conftest.py): equal to ``irm.evaluate`` to the last
bit, and the library's own errors."""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from dask.core import get_deps
from dask.utils import key_split
from distributed import Client, futures_of

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
from polars_irmetrics.errors import ColumnTypeError

from .engine_cases import (
    DENSE,
    ERRORS,
    MATRIX,
    METRICS,
    ONE,
    PARTITIONED,
    QRELS,
    QUERIES,
    RUN,
    UNREAD,
    single_message,
    with_bucket,
)
from .prediction_cases import (
    BINARY_KW,
    PREDICTION_CASES,
    assert_histogram_exact,
    assert_same,
    ids_read,
)
from .prediction_cases import LOG as PREDICTION_LOG
from .prediction_cases import expected as prediction_expected
from .test_prediction import DROP_KW, NO_PAIR, PRED, SHIFTED, TRUTH


def _dask(frame: pl.DataFrame, parts: int) -> dd.DataFrame:
    # pyarrow-backed columns: an integer column with nulls stays an integer column
    return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=parts)


def _polars(frame: dd.DataFrame) -> pl.DataFrame:
    out = pl.from_arrow(pa.Table.from_pandas(frame.compute(), preserve_index=False))
    assert isinstance(out, pl.DataFrame)
    return out


_REFERENCES: dict[tuple[int, int, str, bool], pl.DataFrame] = {}


def _reference(
    run: pl.DataFrame, qrels: pl.DataFrame | None, options: dict[str, Any], per_query: bool
) -> pl.DataFrame:
    """``irm.evaluate``'s result with every metric, computed once per case: the matrix
    and the partitioned runs share cases (the module's frames live as long as the
    module, so their ids name them)."""
    key = (id(run), id(qrels), repr(sorted(options.items())), per_query)
    if key not in _REFERENCES:
        _REFERENCES[key] = irm.evaluate(run, METRICS, qrels=qrels, per_query=per_query, **options)
    return _REFERENCES[key]


#: The cases of engine_cases.MATRIX run on Dask: every per-query case (each a path of
#: the parts' plan) but rank-order, and the means (one code path over per-query values
#: already checked) with ``by`` (by-system-score) and without (no-by-zero-drop,
#: integer-ids). rank-order and unchecked differ only by options no engine reads, handed
#: to each part's one-machine plan (order="rank", check_duplicates=False), on the same
#: ranked run with systems: unchecked here, rank-order on Spark. means-judged-table runs
#: on Spark too (test_spark.py, where test_spark_cases_cover_the_matrix_with_dask checks
#: that the two engines together run every case).
DASK_MATRIX = [c for c in MATRIX if c[0] not in ("means-judged-table", "rank-order")]


def _computed(lazy: dict[str, dd.DataFrame]) -> dict[str, pl.DataFrame]:
    """The lazy results computed by one ``dask.compute`` (one graph on the cluster for
    every case, where a compute per case paid a job's fixed cost each time), as polars
    frames."""
    (computed,) = dask.compute(lazy)
    found = {}
    for name, frame in computed.items():
        found[name] = pl.from_arrow(pa.Table.from_pandas(frame, preserve_index=False))
        assert isinstance(found[name], pl.DataFrame)
    return found


@pytest.fixture(scope="module")
def matrix_values(client: Client) -> dict[str, pl.DataFrame]:
    """Every case of DASK_MATRIX on Dask, by id: each its own ``evaluate`` call, the
    results computed together (``_computed``); each case's test compares its own. On
    distributed's default shuffle, P2P, which users get (the suite's cluster shuffles by
    tasks: tests/conftest.py)."""
    with dask.config.set({"dataframe.shuffle.method": "p2p"}):
        return _computed(
            {
                name: irm_dask.evaluate(
                    _dask(run, 2),  # two parts (the default: the run's partitions) to merge
                    METRICS,
                    qrels=None if qrels is None else _dask(qrels, 2),
                    per_query=per_query,
                    **options,
                )
                for name, run, qrels, options, per_query in DASK_MATRIX
            }
        )


@pytest.mark.parametrize(
    ("name", "run", "qrels", "options", "per_query"),
    DASK_MATRIX,
    ids=[c[0] for c in DASK_MATRIX],
)
def test_dask_equals_evaluate_bit_for_bit(
    matrix_values: dict[str, pl.DataFrame],
    name: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
) -> None:
    expected = _reference(run, qrels, options, per_query)
    _same(matrix_values[name], expected, per_query)


@pytest.mark.parametrize(
    ("run", "qrels", "metrics", "options", "error", "part"),
    [e[1:] for e in ERRORS],
    ids=[e[0] for e in ERRORS],
)
def test_dask_data_errors_are_the_librarys(
    client: Client,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    error: type,
    part: str,
) -> None:
    message = single_message(run, qrels, metrics, **options)
    assert part in message
    lazy = irm_dask.evaluate(
        _dask(run, 2), metrics, qrels=None if qrels is None else _dask(qrels, 2), **options
    )
    with pytest.raises(error) as raised:
        lazy.compute()
    assert type(raised.value) is error
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("metrics", "options", "error", "message"),
    [
        (["mapp"], {}, irm.UnknownMetricError, None),
        (["map"], {"order": "rank"}, irm.ColumnNotFoundError, None),
        (["map"], {"partitioned_by": "bucket"}, irm.ColumnNotFoundError, None),
        (
            ["map"],
            {"partitions": 2, "partitioned_by": "doc_id"},
            irm.InvalidValueError,
            "partitions=2 and partitioned_by='doc_id' exclude each other: with "
            "partitioned_by the run's own partitions make the tasks; drop partitions=",
        ),
        (
            ["map"],
            {"partitions": 0},
            irm.InvalidValueError,
            "partitions must be a positive integer or None, got 0",
        ),
    ],
    ids=[
        "unknown-metric",
        "missing-rank",
        "unknown-partition-column",
        "partitions-and-partitioned-by",
        "bad-partitions",
    ],
)
def test_dask_schema_errors_raise_at_the_call(
    metrics: list[str], options: dict[str, Any], error: type, message: str | None
) -> None:
    if message is None:
        message = single_message(ONE, QRELS, metrics, **options)
    with pytest.raises(error) as raised:
        irm_dask.evaluate(_dask(ONE, 2), metrics, qrels=_dask(QRELS, 1), **options)
    assert str(raised.value) == message


def test_dask_refuses_polars_frames() -> None:
    with pytest.raises(irm.ColumnTypeError, match="run must be a Dask DataFrame, got DataFrame"):
        irm_dask.evaluate(ONE, ["map"])  # type: ignore[arg-type]


def test_dask_module_without_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("polars_irmetrics.dask", "polars_irmetrics.engines.dask"):
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    with pytest.raises(irm.MissingDependencyError) as raised:
        importlib.import_module("polars_irmetrics.dask")
    assert str(raised.value) == (
        "polars_irmetrics.dask needs Dask's dataframe package: "
        "pip install 'polars_irmetrics[dask]'"
    )


def _hive(frame: pl.DataFrame, folder: Path, files: int = 3, **read: Any) -> dd.DataFrame:
    """``frame`` written as ``folder/bucket=NN/part-K.parquet`` (``files`` files per
    bucket, without the column, as data lakes hold them; row groups of 100 rows), read
    back by Dask with pyarrow-backed columns (an integer column with nulls stays an
    integer column) and the options ``read``."""
    for (bucket,), rows in frame.group_by("bucket"):
        (folder / f"bucket={bucket:02d}").mkdir(parents=True)
        size = -(-rows.height // files)
        for k, piece in enumerate(rows.drop("bucket").iter_slices(size)):
            path = folder / f"bucket={bucket:02d}" / f"part-{k}.parquet"
            piece.write_parquet(path, row_group_size=100)
    return dd.read_parquet(str(folder), dtype_backend="pyarrow", **read)


def _equal(got: dd.DataFrame, expected: pl.DataFrame, per_query: bool) -> None:
    _same(_polars(got), expected, per_query)


def _same(result: pl.DataFrame, expected: pl.DataFrame, per_query: bool) -> None:
    """A computed Dask result is ``expected`` to the last bit (``_equal``'s check)."""
    if per_query:  # rows come in partition (task) order
        result = result.sort(list(expected.columns[: result.columns.index(METRICS[0])]))
    assert result.schema == expected.schema
    assert result.height == expected.height > 0
    for column in expected.columns:
        assert result[column].to_list() == expected[column].to_list(), column


def _judgments(qrels: pl.DataFrame, kind: str, folder: Path, buckets: int = 4) -> dd.DataFrame:
    """The judgments as a Dask frame: ``flat`` (no bucket), ``bucketed`` (a bucket
    column, from pandas: shuffled to the tasks) or ``files`` (hive-partitioned files by
    bucket, read by the tasks; the unretrieved judged queries in a bucket of their own,
    which the run lacks)."""
    if kind == "files":
        return _hive(with_bucket(qrels, buckets), folder, files=2)
    return _dask(with_bucket(qrels, buckets) if kind == "bucketed" else qrels, 2)


#: The buckets of the partitioned runs compared with irm.evaluate: two (and the
#: unretrieved judged queries' own), so that each call merges the values of several
#: tasks, each task a plan of every metric
BUCKETS = 2

# the judgments flat, carrying the bucket, or in hive files by bucket: every way for the
# systems and for the unretrieved judged queries (which "files" puts in a bucket the run
# lacks), each other case one way, so that each way has per-query values and means
_ONE_WAY = {
    "means-by-system": "bucketed",
    "means-unretrieved-zero": "files",
    "zero-drop": "bucketed",
    "judged-table": "flat",  # no judgments
    "integer-ids": "files",
}
PARTITIONED_CASES = [
    (f"{name}-{kind}", run, qrels, options, per_query, kind)
    for name, run, qrels, options, per_query in PARTITIONED
    for kind in ((_ONE_WAY[name],) if name in _ONE_WAY else ("flat", "bucketed", "files"))
]


@pytest.fixture(scope="module")
def partitioned_values(
    client: Client, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[dd.DataFrame, pl.DataFrame]]:
    """Every case of PARTITIONED_CASES on Dask, by id: its lazy result (each its own
    ``evaluate`` call on its own files) and its values, computed together
    (``_computed``); each case's test checks its own graph and values."""
    lazy = {}
    for name, run, qrels, options, per_query, kind in PARTITIONED_CASES:
        folder = tmp_path_factory.mktemp("partitioned")
        judged = None if qrels is None else _judgments(qrels, kind, folder / "qrels", BUCKETS)
        lazy[name] = irm_dask.evaluate(
            _hive(with_bucket(run, BUCKETS), folder / "run"),
            METRICS,
            qrels=judged,
            per_query=per_query,
            partitioned_by="bucket",
            **options,
        )
    values = _computed(lazy)
    return {name: (lazy[name], values[name]) for name in lazy}


@pytest.mark.parametrize(
    ("name", "run", "qrels", "options", "per_query", "kind"),
    PARTITIONED_CASES,
    ids=[c[0] for c in PARTITIONED_CASES],
)
def test_dask_partitioned_by_equals_evaluate(
    partitioned_values: dict[str, tuple[dd.DataFrame, pl.DataFrame]],
    name: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
    kind: str,
) -> None:
    expected = _reference(run, qrels, options, per_query)
    got, values = partitioned_values[name]
    if "systems" not in options:
        # the run is not shuffled, nor read by Dask at all: each task reads its own
        # files (test_dask_shuffle_path_moves_the_run: the shuffle path does both);
        # judgments with a bucket column alone are shuffled to their tasks, files are
        # read by the tasks as the run's are. (With systems the run's groups of the
        # key are read by Dask, to cross the judgments with.)
        count, reads = _shuffles(got)
        assert (count > 0) is (kind == "bucketed")
        assert reads == set()
        assert not _reads(got)
    _same(values, expected, per_query)


# the judgments flat or in hive files by bucket (read by the grouped tasks); judgments
# carrying the bucket column, shuffled to grouped tasks, are met by the filtered read of
# test_dask_partitioned_by_reads_of_the_files (its partitions share buckets too)
@pytest.mark.parametrize("kind", ["flat", "files"], ids=["flat-qrels", "files-qrels"])
def test_dask_partitioned_by_groups_partitions_sharing_a_value(
    client: Client, tmp_path: Path, kind: str
) -> None:
    # rows sorted by bucket, cut into 3 partitions: partitions share buckets, so they
    # are grouped into one task per connected bucket range
    run = _dask(with_bucket(RUN).sort("bucket"), 3)
    assert max(len(set(p)) for p in dask.compute(*run["bucket"].to_delayed())) > 1
    qrels = _judgments(QRELS, kind, tmp_path / "qrels")
    expected = _reference(RUN, QRELS, {"systems": "system"}, True)
    got = irm_dask.evaluate(
        run, METRICS, qrels=qrels, systems="system", per_query=True, partitioned_by="bucket"
    )
    _equal(got, expected, True)


def _shuffles(frame: dd.DataFrame) -> tuple[int, set[str]]:
    """How many shuffle tasks the graph holds, and the read tasks (``read_parquet``,
    the run's) that any of them depends on."""
    graph = dict(frame.__dask_graph__())
    dependencies, _ = get_deps(graph)
    words = ("shuffle", "p2p", "set_partitions")
    shuffles = [k for k in graph if any(w in key_split(k) for w in words)]
    seen: set[Any] = set()
    todo = list(shuffles)
    while todo:
        for dep in dependencies.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return len(shuffles), {key_split(k) for k in seen if key_split(k).startswith("read_parquet")}


@pytest.mark.parametrize("kind", ["flat", "bucketed", "files"])
def test_dask_shuffle_path_moves_the_run(client: Client, tmp_path: Path, kind: str) -> None:
    # the other side of the graph checks of test_dask_partitioned_by_equals_evaluate
    # (they can fail): without partitioned_by the run's files are read by Dask and its
    # rows shuffled by query, whatever the judgments (the graph alone: the values of
    # this path are checked by test_dask_equals_evaluate_bit_for_bit)
    run = _hive(with_bucket(ONE), tmp_path / "run")
    qrels = _judgments(QRELS, kind, tmp_path / "qrels")
    shuffled = irm_dask.evaluate(run, ["map"], qrels=qrels, per_query=True)
    count, reads = _shuffles(shuffled)
    assert count > 0
    assert reads == {"read_parquet"}
    assert _reads(shuffled)


def _reads(frame: dd.DataFrame) -> bool:
    """Whether Dask reads Parquet files in ``frame``'s graph (rather than its tasks)."""
    return any(key_split(k).startswith("read_parquet") for k in frame.__dask_graph__())


# (id, options of dd.read_parquet, the rows the frame holds, read by the tasks)
READS = [
    ("row-groups", {"split_row_groups": True}, None, True),
    ("columns", {"columns": ["query_id", "doc_id", "score", "bucket"]}, None, True),
    ("filtered", {"filters": [("bucket", "!=", 1)]}, pl.col("bucket") != 1, False),
]


@pytest.mark.parametrize(
    ("run", "qrels", "metrics", "options", "error", "part"),
    [e[1:] for e in ERRORS],
    ids=[e[0] for e in ERRORS],
)
def test_dask_partitioned_by_data_errors_of_files_are_the_librarys(
    client: Client,
    tmp_path: Path,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    error: type,
    part: str,
) -> None:
    # raised by the streaming plan of a task that reads its files, as on one machine;
    # a query-set error names the queries of the task's bucket (those of one machine's
    # message that the bucket holds)
    message = single_message(run, qrels, metrics, **options)
    lazy = irm_dask.evaluate(
        _hive(with_bucket(run), tmp_path / "run"),
        metrics,
        qrels=None if qrels is None else _judgments(qrels, "files", tmp_path / "qrels"),
        partitioned_by="bucket",
        **options,
    )
    with pytest.raises(error) as raised:
        lazy.compute()
    assert type(raised.value) is error
    if error is not irm.QuerySetError:
        assert str(raised.value) == message
        return
    named = re.compile(r"'q\d+' \(system='\w+'\)")
    assert set(named.findall(str(raised.value))) <= set(named.findall(message))
    assert named.findall(str(raised.value))
    assert str(raised.value).split("; ")[-1] == message.split("; ")[-1]


#: (read, the judgments' kind): each read of the run's files once with judgments the
#: tasks read too (files) or that come shuffled (bucketed), not every pair: the run's
#: read options shape only the run's own layout (_dask_files.read_layout of the run;
#: the judgments' layout is read apart). The run Dask reads itself (filtered: its
#: partitions, two files of a bucket each, grouped by bucket) with judgments shuffled
#: to the tasks; with the judgments' files in
#: test_dask_partitioned_by_groups_partitions_sharing_a_value.
READ_KINDS = [
    (read, kind)
    for read in READS
    for kind in {"row-groups": ["files"], "columns": ["bucketed"]}.get(read[0], ["bucketed"])
]


@pytest.mark.parametrize(
    ("read", "rows", "by_tasks", "kind"),
    [(*c[1:], kind) for c, kind in READ_KINDS],
    ids=[f"{kind}-{c[0]}" for c, kind in READ_KINDS],
)
def test_dask_partitioned_by_reads_of_the_files(
    client: Client,
    tmp_path: Path,
    read: dict[str, Any],
    rows: pl.Expr | None,
    by_tasks: bool,
    kind: str,
) -> None:
    # pieces of files (row groups), a projection (a column the metrics do not read
    # left out) are read by the tasks; a filtered read is Dask's to make (its
    # partitions, as for any frame that is not a plain read)
    run = with_bucket(ONE).with_columns(extra=pl.lit("x"))
    frame = _hive(run, tmp_path / "run", files=2, **read)
    kept = run if rows is None else run.filter(rows)
    queries = kept["query_id"].unique()
    qrels = QRELS.filter(pl.col("query_id").is_in(queries.implode()))
    expected = irm.evaluate(kept.drop("bucket", "extra"), METRICS, qrels=qrels, per_query=True)
    got = irm_dask.evaluate(
        frame,
        METRICS,
        qrels=_judgments(qrels, kind, tmp_path / "qrels"),
        per_query=True,
        partitioned_by="bucket",
    )
    assert _reads(got) is not by_tasks
    _equal(got, expected, True)


def test_dask_partitioned_by_a_column_of_the_files(client: Client, tmp_path: Path) -> None:
    # the bucket is a column inside the files, not a hive directory: its values come
    # from a pass over that column at the call, and the tasks read their files
    (tmp_path / "run").mkdir()
    run = with_bucket(ONE).sort("bucket")
    for k, piece in enumerate(run.iter_slices(-(-run.height // 5))):
        piece.write_parquet(tmp_path / "run" / f"part-{k}.parquet")
    frame = dd.read_parquet(str(tmp_path / "run"), dtype_backend="pyarrow")
    assert frame.npartitions == 5
    got = irm_dask.evaluate(
        frame,
        METRICS,
        qrels=_judgments(QRELS, "files", tmp_path / "qrels"),
        per_query=True,
        partitioned_by="bucket",
    )
    assert not _reads(got)
    expected = irm.evaluate(ONE, METRICS, qrels=QRELS, per_query=True)
    _equal(got, expected, True)


def test_dask_partitioned_by_judgment_files_of_a_false_claim(
    client: Client, tmp_path: Path
) -> None:
    # the run in 4 buckets, the judgments' files in 3: a query whose two hashes differ
    # is in two tasks, and the first such query is named
    run, qrels = with_bucket(ONE, 4), with_bucket(QRELS, 3)
    both = run.join(qrels, on="query_id", suffix="_judged").filter(
        pl.col("bucket") != pl.col("bucket_judged")
    )
    query = both["query_id"].min()
    lazy = irm_dask.evaluate(
        _hive(run, tmp_path / "run"),
        ["map"],
        qrels=_hive(qrels, tmp_path / "qrels", files=1),
        partitioned_by="bucket",
    )
    with pytest.raises(irm.InvalidValueError) as raised:
        lazy.compute()
    assert str(raised.value).startswith(
        f"partitioned_by='bucket': query {query!r} has rows under more than one value of "
    )


#: (per_query, bucketed): both ways of the judgments; the means and the per-query values
#: once each (Spark takes the other pairs). A query found in two tasks is refused by the
#: check every task's values wait on (engines/_dask_partitions._whole), before the
#: per-query values or the means are made of them
FALSE_CLAIMS = [(False, False), (True, True)]


@pytest.mark.parametrize(
    ("per_query", "bucketed"), FALSE_CLAIMS, ids=["flat-qrels-means", "bucketed-qrels-per-query"]
)
def test_dask_partitioned_by_a_false_claim_is_an_error(
    client: Client, tmp_path: Path, per_query: bool, bucketed: bool
) -> None:
    # every other row of a query in another bucket: each query spans two buckets
    run = ONE.with_columns(bucket=pl.int_range(pl.len()).mod(2).cast(pl.Int64))
    qrels = with_bucket(QRELS, 2) if bucketed else QRELS
    lazy = irm_dask.evaluate(
        _hive(run, tmp_path / "run", files=2),
        ["map"],
        qrels=_dask(qrels, 2),
        per_query=per_query,
        partitioned_by="bucket",
    )
    with pytest.raises(irm.InvalidValueError) as raised:
        lazy.compute()
    assert str(raised.value) == (
        "partitioned_by='bucket': query 'q001' has rows under more than one value of "
        "'bucket' (in the run or the judgments), so the partitions do not keep each query "
        "whole; partition by a function of 'query_id' alone, or drop partitioned_by= to "
        "shuffle the rows by query"
    )


def _last_bar(err: str) -> tuple[int, int]:
    """(done, total) of the last redraw of the "dask tasks" bar (tqdm's, or ours)."""
    drawn = err.rstrip("\n").split("\r")[-1]
    assert drawn.startswith("dask tasks")
    done, total = re.search(r" (\d+)/(\d+)", drawn).groups()  # type: ignore[union-attr]
    return int(done), int(total)


def test_dask_progress_draws_the_tasks_and_persists(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = irm.evaluate(RUN, ["map", "ndcg@10"], qrels=QRELS, systems="system")
    got = irm_dask.evaluate(
        _dask(RUN, 3), ["map", "ndcg@10"], qrels=_dask(QRELS, 2), systems="system", progress=True
    )
    done, total = _last_bar(capsys.readouterr().err)
    assert done == total
    assert total > 3
    assert isinstance(got, dd.DataFrame)
    assert all(f.status == "finished" for f in futures_of(got))  # already computed
    assert _polars(got).rows() == expected.rows()
    # without progress=, lazy and nothing drawn: test_dask_refuses_a_by_key_only_the_run_has


def test_dask_progress_of_tasks_reading_their_files(
    client: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _hive(with_bucket(ONE), tmp_path / "run")
    qrels = _judgments(QRELS, "files", tmp_path / "qrels")
    got = irm_dask.evaluate(run, ["map"], qrels=qrels, partitioned_by="bucket", progress=True)
    done, total = _last_bar(capsys.readouterr().err)
    assert done == total > 4  # a task per bucket, the check, the means
    assert all(f.status == "finished" for f in futures_of(got))
    assert _polars(got).rows() == irm.evaluate(ONE, ["map"], qrels=QRELS).rows()


def test_dask_progress_raises_a_tasks_error_at_the_call(client: Client) -> None:
    _, run, qrels, metrics, options, error, _ = ERRORS[0]
    with pytest.raises(error) as raised:
        irm_dask.evaluate(_dask(run, 2), metrics, qrels=_dask(qrels, 2), progress=True)
    assert str(raised.value) == single_message(run, qrels, metrics, **options)


def test_dask_progress_on_the_local_scheduler(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    # the session's client stays connected, but Dask is told to compute locally (and
    # to shuffle by tasks: its default with a client, P2P, needs the cluster)
    with dask.config.set({"scheduler": "threads", "dataframe.shuffle.method": "tasks"}):
        got = irm_dask.evaluate(_dask(ONE, 3), ["map"], qrels=_dask(QRELS, 2), progress=True)
    done, total = _last_bar(capsys.readouterr().err)
    assert done == total > 0
    assert futures_of(got) == []  # held in this process, not on a cluster
    assert _polars(got).rows() == irm.evaluate(ONE, ["map"], qrels=QRELS).rows()


@pytest.mark.parametrize("bucketed", [False, True], ids=["flat-qrels", "bucketed-qrels"])
def test_dask_partitioned_by_unretrieved_error_as_evaluate(
    client: Client, tmp_path: Path, bucketed: bool
) -> None:
    # DENSE misses a judged query: it is evaluated once, against an empty run, where
    # the "error" policy names it as irm.evaluate does
    message = single_message(DENSE, QRELS, ["map"], unretrieved="error")
    lazy = irm_dask.evaluate(
        _hive(with_bucket(DENSE), tmp_path / "run"),
        ["map"],
        qrels=_dask(with_bucket(QRELS) if bucketed else QRELS, 2),
        unretrieved="error",
        partitioned_by="bucket",
    )
    with pytest.raises(irm.QuerySetError) as raised:
        lazy.compute()
    assert str(raised.value) == message


def test_dask_refuses_a_by_key_only_the_run_has(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    # one machine refuses it where a group missed a judged query; a part cannot tell
    message = (
        "by key 'system' is in the run but not in the judgments: on Spark and Dask each "
        "part sees its own queries, so a judged query that some 'system' group did not "
        "retrieve cannot be placed."
    )
    with pytest.raises(irm.QuerySetError, match=re.escape(message)):
        irm_dask.evaluate(_dask(RUN, 2), ["map"], qrels=_dask(QRELS, 1), by="system")
    # the way out it names: the key as systems (the same values as one machine), a
    # worked check beside the exact ones (the three systems' MAP and query counts);
    # progress= not given, not a terminal: lazy, and nothing drawn at compute
    got = irm_dask.evaluate(_dask(RUN, 4), ["map"], qrels=_dask(QRELS, 1), systems="system")
    assert futures_of(got) == []
    result = _polars(got)
    assert capsys.readouterr().err == ""
    expected = irm.evaluate(RUN, ["map"], qrels=QRELS, systems="system")
    assert result.rows() == expected.rows()
    assert result["num_q"].to_list() == expected["num_q"].to_list()


# the means on Dask, per query on Spark (test_spark.py): queries= is joined onto both
# sides before the parts, the per-query values and the means are made of the parts'
# values as in every other call
@pytest.mark.parametrize("per_query", [False], ids=["means"])
def test_dask_queries_place_unretrieved_judged_queries(client: Client, per_query: bool) -> None:
    options: dict[str, Any] = {"by": "segment", "per_query": per_query}
    expected = irm.evaluate(DENSE, METRICS, qrels=QRELS, queries=QUERIES, **options)
    got = _polars(
        irm_dask.evaluate(
            _dask(DENSE, 2), METRICS, qrels=_dask(QRELS, 2), queries=_dask(QUERIES, 1), **options
        )
    )
    assert got.sort(["segment", "query_id"] if per_query else "segment").rows() == expected.rows()
    assert expected["segment"].n_unique() == 2


def test_dask_refuses_the_one_machine_options(client: Client) -> None:
    message = (
        "buckets= is an option of the one-machine out-of-core plan "
        "(polars_irmetrics.evaluate); on Dask the work divides into partitions= parts "
        "(or by partitioned_by=): drop buckets="
    )
    with pytest.raises(irm.InvalidValueError, match=re.escape(message)):
        irm_dask.evaluate(_dask(DENSE, 2), ["map"], qrels=_dask(QRELS, 1), buckets=4)


@pytest.mark.parametrize(
    ("table", "what"),
    [
        ("user_groups", "user_mad's groups of users"),
        ("prefs", "the preference judgments"),
        ("qrels_jg", "the judgment groups"),
        ("neighbors", "neighbour recall's exact neighbours"),
    ],
)
def test_dask_names_the_tables_it_does_not_take(table: str, what: str) -> None:
    """Refused as an 'unknown option', listing the options, though irm.evaluate takes
    it as a table."""
    message = (
        f"{table}= is a table polars_irmetrics.evaluate reads ({what}), which Dask does not "
        "take: evaluate those metrics with polars_irmetrics.evaluate (a LazyFrame of the "
        "Parquet files runs out of core on one machine)"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm_dask.evaluate(_dask(DENSE, 2), ["map"], qrels=_dask(QRELS, 1), **{table: QRELS})


# --------------------------------------------------------------------------- prediction
#: The prediction cases on Dask: each metric family (binary, rating), table form (one
#: table, two), by= mode, the per-query values and the means, weighted and not; the
#: other cases run on Spark (test_spark.py, where
#: test_spark_and_dask_cover_the_prediction_cases checks that the union of the two
#: engines is every case).
DASK_PREDICTION = [
    c
    for c in PREDICTION_CASES
    if c[0] in {"per-user-by-segment", "two-tables-by-segment", "weighted-ratings"}
]


@pytest.fixture(scope="module")
def prediction_values(client: Client) -> dict[str, pl.DataFrame]:
    """Every case of DASK_PREDICTION on Dask, by id: each its own ``evaluate`` call, the
    results computed together (``_computed``); each case's test compares its own."""
    return _computed(
        {
            name: irm_dask.evaluate(
                _dask(table, 3),
                metrics,
                labels=None if labels is None else _dask(labels, 2),
                per_query=per_query,
                partitions=4,
                **ids_read(options, metrics, labels, per_query),
            )
            for name, table, labels, metrics, options, per_query in DASK_PREDICTION
        }
    )


@pytest.mark.parametrize(
    ("name", "table", "labels", "metrics", "options", "per_query"),
    DASK_PREDICTION,
    ids=[c[0] for c in DASK_PREDICTION],
)
def test_dask_prediction_metrics_equal_evaluate(
    prediction_values: dict[str, pl.DataFrame],
    name: str,
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    per_query: bool,
) -> None:
    want = prediction_expected(table, labels, metrics, options, per_query)
    got = prediction_values[name]
    if per_query:  # rows come in partition (task) order
        got = got.sort(want.columns[: want.columns.index("num_rows")])
    assert_same(got, want)
    assert_histogram_exact(got, table, labels, metrics, options, per_query)


# warned and not, the means and the per-query values once each; Spark takes the other
# pairs
@pytest.mark.parametrize(
    ("truth", "per_query", "warned"),
    [(SHIFTED, True, True), (TRUTH, False, False)],
    ids=["no-pair-per-query", "every-pair-means"],
)
def test_dask_drop_warns_of_unmatched_labels_as_one_machine(
    client: Client, truth: pl.DataFrame, per_query: bool, warned: bool
) -> None:
    """unmatched='drop': the whole table's pairs against both tables' rows, warned of
    once (not by each part), in one machine's words."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _polars(
            irm_dask.evaluate(
                _dask(PRED, 2),
                ["rmse"],
                labels=_dask(truth, 2),
                per_query=per_query,
                partitions=3,
                **DROP_KW,
            )
        )
    said = [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]
    assert said == ([NO_PAIR] if warned else [])
    assert got["num_rows"].sum() == (0 if warned else TRUTH.height)


def test_dask_prediction_errors_are_the_librarys(client: Client) -> None:
    # the users as the query_id column, which splits the table though no metric reads
    # it: user 5's rows in one part, whose task's message counts them all
    log = PREDICTION_LOG.rename({"user": "query_id"})
    log = log.with_columns(p=pl.when(pl.col("query_id") == 5).then(1.5).otherwise("p"))
    read = ids_read(BINARY_KW, ["auc"], None, False)
    with pytest.raises(irm.InvalidValueError) as raised:
        irm_dask.evaluate(_dask(log, 2), ["auc", "logloss"], **read).compute()
    with pytest.raises(irm.InvalidValueError) as one_machine:
        irm.evaluate(log, ["auc", "logloss"], **read)
    assert str(raised.value) == str(one_machine.value)
    frame = _dask(PREDICTION_LOG, 2)
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            "qrels= is not read by prediction metrics (auc, logloss, rmse...): the table "
            "holds the label= and prediction= columns, or labels= the true labels; drop qrels="
        ),
    ):
        irm_dask.evaluate(frame, ["auc"], qrels=frame, **BINARY_KW)
    with pytest.raises(irm.ColumnNotFoundError, match=re.escape("column 'score' not found")):
        irm_dask.evaluate(frame, ["auc"], **{**read, "prediction": "score"})
    with pytest.raises(
        irm.MetricParameterError,
        match=re.escape("labels= holds the true labels of prediction metrics"),
    ):
        irm_dask.evaluate(frame, ["map"], labels=frame, query_id="user", doc_id="item")


@pytest.mark.parametrize(
    ("metrics", "kind", "options"), [c[1:] for c in UNREAD], ids=[c[0] for c in UNREAD]
)
def test_dask_refuses_an_option_no_metric_reads(
    client: Client, metrics: list[str], kind: str, options: dict[str, Any]
) -> None:
    table_kind = DENSE if kind == "run" else PREDICTION_LOG
    message = single_message(table_kind, QRELS if kind == "run" else None, metrics, **options)
    table = _dask(DENSE if kind == "run" else PREDICTION_LOG, 2)
    qrels = _dask(QRELS, 1) if kind == "run" else None
    with pytest.raises(irm.InvalidValueError) as raised:
        irm_dask.evaluate(table, metrics, qrels=qrels, **options)
    assert str(raised.value) == message
    assert "is not read by" in message or "unmatched=" in message


def test_dask_refuses_unseen_items_without_the_tables_that_know_the_items(
    client: Client,
) -> None:
    # as irm.evaluate refuses it (the door's check_item_options)
    recommendations = DENSE.select("query_id", "doc_id", "score")
    message = single_message(
        recommendations, None, ["distributional_coverage@10"], unseen_items="drop"
    )
    assert message.startswith("unseen_items='drop' says what becomes of a recommended item")
    with pytest.raises(irm.InvalidValueError) as raised:
        irm_dask.evaluate(
            _dask(recommendations, 2), ["distributional_coverage@10"], unseen_items="drop"
        )
    assert str(raised.value) == message


#: UInt64 query ids, one beyond 2**63 (a 64-bit hash as the id).
WIDE_RUN = pl.DataFrame(
    {
        "query_id": pl.Series([2**63, 5], dtype=pl.UInt64),
        "doc_id": ["a", "b"],
        "score": [1.0, 2.0],
    }
)
WIDE_QRELS = pl.DataFrame(
    {
        "query_id": pl.Series([2**63, 5], dtype=pl.UInt64),
        "doc_id": ["a", "b"],
        "relevance": [1, 1],
    }
)


def test_dask_uint64_ids_beyond_2_63_equal_evaluate(client: Client) -> None:
    """The part of a row was found by hashing its id cast to Int64, which a UInt64
    beyond 2**63 refused (polars' InvalidOperationError from a task)."""
    for per_query in (False, True):
        got = irm_dask.evaluate(
            _dask(WIDE_RUN, 2), ["ndcg@10"], qrels=_dask(WIDE_QRELS, 2), per_query=per_query
        )
        expected = irm.evaluate(WIDE_RUN, ["ndcg@10"], qrels=WIDE_QRELS, per_query=per_query)
        assert (
            _polars(got).sort(expected.columns[0]).rows()
            == expected.sort(expected.columns[0]).rows()
        )


def test_dask_refuses_ids_one_machine_holds_as_int128() -> None:
    """Int64 ids beside UInt64 ones are matched as Int128 on one machine; Arrow, which
    the tasks exchange, has no such type (pyarrow's 'unsupported format string
    _pli128' from a task): refused at the call, naming the columns and the fix."""
    run = WIDE_RUN.filter(pl.col("query_id") == 5).cast({"query_id": pl.Int64})
    message = (
        "column 'query_id' is Int64 in the run, UInt64 in the qrels: one machine matches "
        "them as Int128, which the Arrow tables of Dask's tasks cannot carry; cast every "
        "table's 'query_id' to one dtype first, e.g. .astype({'query_id': 'int64'}) where "
        "every id is below 2**63, or to strings"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm_dask.evaluate(_dask(run, 1), ["ndcg@10"], qrels=_dask(WIDE_QRELS, 1))
