"""Real clusters on this machine, on 127.0.0.1 only, for the cluster tests and
benchmarks/scale.py: a Spark standalone master and workers, and a Dask scheduler and
workers, each started as the command-line processes an operator starts, and stopped
(terminated, then killed) when the ``with`` block ends, whatever happens inside it.

pyspark's pip package ships ``bin/spark-class`` but not ``sbin/start-master.sh`` or
``sbin/start-worker.sh`` (a Spark distribution's scripts, which call
``spark-daemon.sh start org.apache.spark.deploy.master.Master ...``, i.e.
``spark-class`` in the background): the master and workers are started by
``spark-class`` in the foreground, as child processes, so that they are ours to stop.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
BIN = Path(sys.executable).parent
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    """The address to connect to, and the processes started (to measure or stop)."""

    address: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: Path | None = None

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in reversed(processes):
        if process.poll() is None:
            process.terminate()
    for process in reversed(processes):
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _wait(until: object, what: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if until():  # type: ignore[operator]
            return
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s; log tail:\n{tail}")


def spark_env(folder: Path) -> dict[str, str]:
    """The environment of the cluster's processes: loopback only, this interpreter for
    Python, and no PYTHONPATH (the library reaches the executors in the wheel)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_LOCAL_DIRS=str(folder / "local"),
        SPARK_WORKER_DIR=str(folder / "work"),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        # no REST submission server (it would take the fixed port 6066)
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
    )
    return env


@contextlib.contextmanager
def spark_standalone(
    folder: Path, workers: int = 2, cores: int = 1, memory: str = "2g", timeout: float = 240
) -> Iterator[Cluster]:
    """A standalone master and ``workers`` workers of ``cores`` cores each."""
    folder.mkdir(parents=True, exist_ok=True)
    env = spark_env(folder)
    port = free_port()
    master_log = folder / "master.log"
    cluster = Cluster(f"spark://{LOOPBACK}:{port}", logs=folder)
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    try:
        with master_log.open("wb") as out:
            cluster.processes.append(
                subprocess.Popen(
                    [
                        spark_class,
                        "org.apache.spark.deploy.master.Master",
                        "--host",
                        LOOPBACK,
                        "--port",
                        str(port),
                        "--webui-port",
                        str(free_port()),
                    ],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
        _wait(
            lambda: "I have been elected leader" in master_log.read_text(errors="replace"),
            "the Spark master",
            master_log,
            timeout,
        )
        for n in range(workers):
            with (folder / f"worker-{n}.log").open("wb") as out:
                cluster.processes.append(
                    subprocess.Popen(
                        [
                            spark_class,
                            "org.apache.spark.deploy.worker.Worker",
                            cluster.address,
                            "--host",
                            LOOPBACK,
                            "--cores",
                            str(cores),
                            "--memory",
                            memory,
                            "--webui-port",
                            str(free_port()),
                            "--work-dir",
                            str(folder / "work"),
                        ],
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
        _wait(
            lambda: master_log.read_text(errors="replace").count("Registering worker") >= workers,
            f"{workers} Spark workers",
            master_log,
            timeout,
        )
        yield cluster
    finally:
        _stop(cluster.processes)


@contextlib.contextmanager
def dask_cli(
    folder: Path, workers: int = 2, memory: str = "2GiB", timeout: float = 120
) -> Iterator[Cluster]:
    """``dask scheduler`` and ``workers`` ``dask worker`` processes (one thread each)."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cluster = Cluster(f"tcp://{LOOPBACK}:{port}", logs=folder)
    dask = str(BIN / "dask")
    log = folder / "scheduler.log"
    try:
        with log.open("wb") as out:
            cluster.processes.append(
                subprocess.Popen(
                    [
                        dask,
                        "scheduler",
                        "--host",
                        LOOPBACK,
                        "--port",
                        str(port),
                        "--no-dashboard",
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
        for n in range(workers):
            with (folder / f"worker-{n}.log").open("wb") as out:
                cluster.processes.append(
                    subprocess.Popen(
                        [
                            dask,
                            "worker",
                            cluster.address,
                            "--host",
                            LOOPBACK,
                            "--nthreads",
                            "1",
                            "--memory-limit",
                            memory,
                            "--no-dashboard",
                            "--local-directory",
                            str(folder / f"worker-{n}"),
                        ],
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
        _wait(
            lambda: log.read_text(errors="replace").count("Register worker") >= workers,
            f"{workers} Dask workers",
            log,
            timeout,
        )
        yield cluster
    finally:
        _stop(cluster.processes)


def build_wheel(root: Path, out: Path) -> Path:
    """The library's wheel, built from ``root`` by pip (no dependencies)."""
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out)]
    subprocess.run([*command, str(root)], check=True)
    (wheel,) = out.glob("polars_irmetrics-*.whl")
    return wheel
