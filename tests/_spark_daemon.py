"""PySpark's worker daemon (``pyspark.daemon``) with this library imported first: the
tests' Spark session runs it (``spark.python.daemon.module``, tests/conftest.py).

The daemon forks a Python worker for each task slot, and forks a new one whenever a
worker exits: after a task raised (a refused input, which many tests check on Spark)
PySpark does not reuse that worker. Each fresh worker imported polars_irmetrics when it
unpickled its first task (about 1 s of CPU, several on a loaded machine); forked from a
daemon that has imported it, a worker starts with it in memory. Only imported: the
daemon runs no polars operation, so polars' thread pool is not started before the fork
(a pool started in the parent would hang in the child).
"""

from __future__ import annotations

# imported before the daemon forks its workers (the Spark route's modules with it)
import polars_irmetrics.spark  # noqa: F401

if __name__ == "__main__":
    from pyspark import daemon

    daemon.manager()
