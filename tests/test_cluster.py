"""End to end on real clusters started from the command line on 127.0.0.1: a Spark
standalone master and two workers, the library's wheel submitted by ``spark-submit``
(README's recipe); a ``dask scheduler`` and two ``dask worker`` processes. Slow
(minutes on a busy machine): marked ``cluster``, deselected from the default run and
run by .ci/run as a step of its own (``pytest -m cluster tests/test_cluster.py``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import dask.dataframe as dd
import polars as pl
import pytest
from distributed import Client

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask

from .clusters import SPARK_HOME, build_wheel, dask_cli, spark_env, spark_standalone
from .engine_cases import ONE, QRELS, with_bucket

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[1]
JOB = Path(__file__).with_name("cluster_job.py")
METRICS = ["ndcg@10", "map", "P@5", "recall@100"]


def _hive(frame: pl.DataFrame, folder: Path) -> Path:
    for (bucket,), rows in frame.group_by("bucket"):
        (folder / f"bucket={bucket:02d}").mkdir(parents=True)
        rows.drop("bucket").write_parquet(folder / f"bucket={bucket:02d}" / "part-0.parquet")
    return folder


def test_spark_standalone_spark_submit_of_the_wheel(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # partitioned_by: the tasks read the hive buckets with polars on the executors
    partitioned_by = "bucket"
    folder = tmp_path_factory.mktemp("spark")
    run_dir = _hive(with_bucket(ONE), folder / "run")
    qrels_dir = _hive(with_bucket(QRELS), folder / "qrels")
    wheel = build_wheel(ROOT, folder / "dist")
    out = folder / "means.json"
    with spark_standalone(folder / "cluster", workers=2, cores=1, memory="1g") as cluster:
        submit = [
            str(SPARK_HOME / "bin" / "spark-submit"),
            "--master",
            cluster.address,
            "--py-files",
            str(wheel),
            "--conf",
            "spark.executor.cores=1",
            "--conf",
            "spark.executor.memory=768m",
            "--conf",
            "spark.ui.enabled=false",
            # the wheel ahead of any installed copy on the executors' sys.path (this
            # machine's shared venv holds an editable install of another checkout)
            "--conf",
            f"spark.executorEnv.PYTHONPATH={wheel}",
            "--conf",
            "spark.sql.shuffle.partitions=4",
            str(JOB),
            str(run_dir),
            str(qrels_dir),
            str(out),
            *([partitioned_by] if partitioned_by else []),
        ]
        done = subprocess.run(
            submit, env=spark_env(folder), capture_output=True, timeout=1500, check=False
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    found = json.loads(out.read_text())
    expected = irm.evaluate(ONE, METRICS, qrels=QRELS)
    assert found["means"] == expected.to_dicts()  # exact, to the last bit
    # the executors (two, on the workers) and the driver imported the submitted wheel
    assert wheel.name in found["driver"]
    assert found["executors"]
    assert all(wheel.name in path for path in found["executors"])


def test_dask_scheduler_and_two_command_line_workers(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("dask")
    run_dir = _hive(with_bucket(ONE), folder / "run")
    expected = irm.evaluate(ONE, METRICS, qrels=QRELS)
    with dask_cli(folder / "cluster", workers=2) as cluster, Client(cluster.address) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        qrels = dd.from_pandas(QRELS.to_pandas(), npartitions=2)
        for partitioned_by in ("bucket", None):
            run = dd.read_parquet(str(run_dir), dtype_backend="pyarrow")
            if partitioned_by is None:
                run = run.drop(columns="bucket")
            got = irm_dask.evaluate(
                run, METRICS, qrels=qrels, partitioned_by=partitioned_by
            ).compute()
            assert got.to_dict("records") == expected.to_dicts(), partitioned_by
