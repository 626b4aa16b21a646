"""One machine, without flags: in one plan or out of core, chosen from the input's size.

``evaluate(..., buckets="auto-memory")`` (the default) resolves to ``None`` (one plan)
or a number of buckets (:mod:`polars_irmetrics.ground.buckets`) before the plan is
built:

* **The input's size**: its run rows, free where they are known without reading the
  data (a DataFrame; a Parquet scan, whose footers hold the counts; a LazyFrame over
  DataFrames; with projections and unions). A plan reading other sources (CSV,
  NDJSON, a Python source) or that would have to run to be counted (a filter, a join,
  a Python function) is not run twice to be measured: it runs in one plan.
* **The memory it needs**: :data:`BYTES_PER_ROW` per run row, measured for the one
  plan (peak RSS over run rows, string ids, 100-document rankings:
  benchmarks/results_out_of_core.md), with a margin.
* **The budget**: ``memory_limit`` (bytes, or a string such as ``"4GiB"``), by default
  :data:`MEMORY_FRACTION` of the machine's memory (or of the container's limit, when
  a cgroup sets a lower one).

Within the budget: one plan, the fastest. Beyond it: buckets of at most the budget
each. The choice is logged (logger ``polars_irmetrics``, level INFO) and printed with
``explain=True``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import polars as pl

from polars_irmetrics.errors import InvalidValueError

if TYPE_CHECKING:
    from polars_irmetrics.ground.options import EvalOptions

__all__ = [
    "BYTES_PER_ROW",
    "MEMORY_FRACTION",
    "Choice",
    "choose",
    "machine_memory",
    "parse_memory",
    "resolve_buckets",
]

logger = logging.getLogger("polars_irmetrics")

#: Peak memory of the one plan per run row, with a margin: measured 121 B at 10M rows
#: and 107 B at 50M rows (string ids, 100 documents per query).
BYTES_PER_ROW = 160
#: The default budget: this share of the machine's (or the container's) memory.
MEMORY_FRACTION = 0.5

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS.update({"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40})
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


@dataclass(frozen=True)
class Choice:
    """What :func:`choose` decided, and from what.

    ``buckets`` is ``None`` for one plan, else the number of buckets; ``rows`` is
    ``None`` where the size was not known without reading the data.
    """

    buckets: int | None
    rows: int | None
    need: int | None
    limit: int
    source: str
    partitioned_by: str | None = None

    def describe(self) -> str:
        """One line saying what was chosen and why."""
        budget = f"memory_limit {_human(self.limit)}"
        if self.rows is None or self.need is None:
            return (
                f"one plan: the run's size is not known without reading it ({self.source}); "
                "pass buckets='auto' or buckets=N to evaluate out of core"
            )
        size = f"{self.rows:,} run rows ({self.source}) need about {_human(self.need)}"
        if self.buckets is None:
            return f"one plan: {size}, within {budget}"
        if self.partitioned_by is not None:
            return (
                f"out of core, partition by partition of {self.partitioned_by!r} (each "
                f"read alone): {size}, over {budget}"
            )
        return f"out of core in {self.buckets} buckets: {size}, over {budget}"


def choose(run: pl.LazyFrame, memory_limit: int | str | None = None) -> Choice:
    """One plan or out of core for ``run``, within ``memory_limit`` (module docstring).

    Examples
    --------
    A 3-row run needs far less than any budget; 10 million rows do not fit in 1 GiB:

    >>> import polars as pl
    >>> run = pl.LazyFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"]})
    >>> choose(run, "1GiB").describe()
    'one plan: 3 run rows (in memory) need about 480 B, within memory_limit 1.0 GiB'
    >>> big = pl.DataFrame({"x": range(10_000_000)}).lazy()
    >>> choose(big, "1GiB").buckets
    2

    A plan that would have to run to be counted (a filter here) is not counted:

    >>> choose(big.filter(pl.col("x") > 5), "1GiB").describe()[:56]
    "one plan: the run's size is not known without reading it"
    """
    limit = parse_memory(memory_limit)
    source = _source(run)
    if source is None:
        return Choice(None, None, None, limit, "not a plain Parquet scan or frame")
    # frames in memory counted by the in-memory engine, in this thread: the default
    # engine's start (its thread pool woken for one number) took 0.22 ms of a small
    # call unloaded (0.02 ms so), and up to 8 ms under load
    engine: Literal["auto", "in-memory"] = "in-memory" if source == "in memory" else "auto"
    rows = int(run.select(pl.len()).collect(engine=engine).item())
    need = rows * BYTES_PER_ROW
    buckets = None if need <= limit else math.ceil(need / limit)
    return Choice(buckets, rows, need, limit, source)


def parse_memory(memory_limit: int | str | None) -> int:
    """``memory_limit`` in bytes: an integer, a size such as ``"512MB"`` or ``"4 GiB"``,
    or ``None`` for :data:`MEMORY_FRACTION` of :func:`machine_memory`.

    Examples
    --------
    >>> parse_memory("4GiB"), parse_memory("1.5 GB"), parse_memory(1000)
    (4294967296, 1500000000, 1000)
    >>> parse_memory("lots")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: memory_limit='lots' is not a size: pass bytes \
(an integer) or a string such as '4GiB' or '512MB'
    """
    if memory_limit is None:
        return int(machine_memory() * MEMORY_FRACTION)
    if isinstance(memory_limit, int) and not isinstance(memory_limit, bool) and memory_limit > 0:
        return memory_limit
    found = _SIZE.match(memory_limit) if isinstance(memory_limit, str) else None
    unit = found.group(2).lower() if found else ""
    if found is None or unit not in _UNITS or float(found.group(1)) <= 0:
        raise InvalidValueError(
            f"memory_limit={memory_limit!r} is not a size: pass bytes (an integer) or a "
            "string such as '4GiB' or '512MB'"
        )
    return int(float(found.group(1)) * _UNITS[unit])


@functools.cache
def machine_memory() -> int:
    """The machine's physical memory in bytes, or the container's (cgroup) limit when
    lower: read once, at the process's first call (``buckets="auto-memory"`` read two
    files on every call); a limit changed while the process runs (``docker update
    --memory``) is not seen: pass ``memory_limit=``.
    """
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def resolve_buckets(run: pl.LazyFrame, options: EvalOptions) -> int | None:
    """``buckets="auto-memory"`` resolved for ``run``: ``None`` (one plan) or a count."""
    choice = choose(run, options.memory_limit)
    if choice.buckets is not None and options.partitioned_by is not None:
        choice = dataclasses.replace(choice, partitioned_by=options.partitioned_by)
    report(choice, options.explain)
    return choice.buckets


def report(choice: Choice, explain: bool) -> None:
    """Log the choice (INFO, logger ``polars_irmetrics``); print it too when asked."""
    line = f"polars_irmetrics.evaluate: {choice.describe()}"
    logger.info(line)
    if explain:
        print(line)


def _source(run: pl.LazyFrame) -> str | None:
    """Where the run's rows come from, if counting them reads no data, else ``None``.

    Only a plan made of Parquet scans or in-memory frames, projections, column
    expressions and unions qualifies: a filter, a join, an aggregation or a Python
    function would have to run (and a lazy plan must not run before ``collect()``).
    """
    plan = run.explain(optimized=False)
    lines = [line.strip() for line in plan.splitlines() if line.strip()]
    if "python_udf" in plan or any(not line.startswith(_FREE) for line in lines):
        return None
    if "Parquet SCAN" in plan:
        return "Parquet metadata"
    return "in memory" if "DF [" in plan else None


#: The lines of a plan whose row count is free (see :func:`_source`).
_FREE = (
    "Parquet SCAN",
    "DF [",
    "PROJECT",
    "ESTIMATED ROWS",
    "simple π",
    "SELECT",
    "WITH_COLUMNS",
    "[",
    "FROM",
    "UNION",
    "PLAN ",
    "END UNION",
)


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
