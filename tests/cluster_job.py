"""The job README's cluster recipe submits (``spark-submit --py-files <wheel>``): the
means of a hive-partitioned run, written as JSON with where the executors found the
library (the wheel, not a checkout).

    spark-submit --master spark://127.0.0.1:7077 --py-files polars_irmetrics.whl \\
        cluster_job.py RUN_DIR QRELS_DIR OUT.json [PARTITIONED_BY]
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

import polars_irmetrics
import polars_irmetrics.spark as irm_spark

METRICS = ["ndcg@10", "map", "P@5", "recall@100"]


def _where(_: object) -> str:
    return str(polars_irmetrics.__file__)


def _path(_: object) -> str:
    return "|".join(sys.path[:6])


def main(run_dir: str, qrels_dir: str, out: str, partitioned_by: str | None) -> None:
    spark = SparkSession.builder.appName("polars_irmetrics cluster job").getOrCreate()
    run = spark.read.parquet(run_dir)
    if partitioned_by is None:
        run = run.drop("bucket")
    means = irm_spark.evaluate(
        run,
        METRICS,
        qrels=spark.read.parquet(qrels_dir),
        partitioned_by=partitioned_by,
        progress=False,
    )
    rows = [row.asDict() for row in means.collect()]
    executors = spark.sparkContext.parallelize(range(4), 4).map(_where).distinct().collect()
    paths = spark.sparkContext.parallelize(range(2), 2).map(_path).distinct().collect()
    with open(out, "w") as f:
        found = {"means": rows, "driver": _where(None), "executors": executors, "paths": paths}
        json.dump(found, f)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
