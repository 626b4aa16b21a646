"""Side-by-side benchmark: polars_irmetrics vs ranx vs pytrec_eval vs plain polars plans.

The plain polars plans: ``minimal``, the five metrics written by hand with no checks,
and ``floor``, a bare scan, join and group-by that no evaluation can undercut.

    python benchmarks/run.py --sizes 1000,10000,100000 --docs 100

Every (library, mode) pair runs in its own subprocess, so the peak RSS reported
(``resource.getrusage(RUSAGE_SELF).ru_maxrss`` read inside the child) belongs to
that library and mode alone.  Imports and warm-up (ranx's numba JIT, first-call
costs) happen before timing and are reported separately as ``setup``.  Times are
the best of ``--repeats`` runs.

Modes
  e2e      Parquet files on disk -> mean metrics (reading included)
  compute  polars frames already in memory -> mean metrics (for ranx/pytrec_eval
           this includes converting the frames to their own structures; that
           part is also shown on its own as ``convert``)

See benchmarks/README.md for what every column means.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SRC = REPO / "src"

CORE_METRICS = ["ndcg@10", "map", "mrr@10", "recall@100", "precision@10"]
TREC_MEASURES = {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}
TREC_TO_CORE = {
    "ndcg_cut_10": "ndcg@10",
    "map": "map",
    "recip_rank": "mrr@10",  # NB: trec_eval's recip_rank is not cut at 10
    "recall_100": "recall@100",
    "P_10": "precision@10",
}
IRM_LIBS = ["irm-rank", "irm-score", "irm-full", "irm-unchecked"]
PEER_LIBS = ["ranx", "pytrec_eval"]
ALL_LIBS = [*IRM_LIBS, *PEER_LIBS, "minimal", "floor"]
#: ``--systems``: S runs in one table, evaluated in one call with ``systems="system"``
SYSTEMS_LIB = "irm-systems"
REFERENCE = "irm-score"  # peers rank from score, so they are compared with this variant
MODES = ["e2e", "compute"]
RESULT_MARK = "@@RESULT@@ "
WARM_QUERIES = 5


# =====================================================================================
# child side: one library, one mode, one process
# =====================================================================================


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _vmhwm_mib() -> float | None:
    """This process's own peak RSS (Linux /proc), a cross-check of ru_maxrss."""
    with contextlib.suppress(OSError), open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return None


def _scan(path: str, columns: Sequence[str]) -> Any:
    import polars as pl

    p = Path(path)
    if p.is_dir():  # hive-partitioned run: run/bucket=NN/part.parquet
        lf = pl.scan_parquet(str(p / "**" / "*.parquet"), hive_partitioning=True)
    else:
        lf = pl.scan_parquet(p)
    return lf.select(list(columns))


def _read(path: str, columns: Sequence[str]) -> Any:
    return _scan(path, columns).collect()


def _frame_means(df: Any) -> dict[str, float]:
    """Mean metric values out of an evaluate() result, whatever its shape."""
    import polars as pl

    cols = set(df.columns)
    if {"metric", "value"} <= cols:
        return {str(m): float(v) for m, v in zip(df["metric"], df["value"], strict=True)}
    if df.height == 0:
        return {}
    row = df.row(0, named=True)
    numeric = {c for c, t in df.schema.items() if t.is_numeric() and t != pl.Boolean}
    return {c: float(v) for c, v in row.items() if c in numeric and v is not None}


def _to_dod(df: Any, value: str) -> dict[str, dict[str, Any]]:
    """{query_id: {doc_id: value}} from a polars frame (the fastest route we measured:
    sort by query, then dict(zip(...)) over contiguous slices)."""
    import numpy as np
    import polars as pl

    df = df.select("query_id", "doc_id", value)
    if df.schema["query_id"] != pl.String or df.schema["doc_id"] != pl.String:
        df = df.with_columns(pl.col("query_id", "doc_id").cast(pl.String))
    df = df.sort("query_id")
    q = df["query_id"]
    starts = np.flatnonzero(q.ne_missing(q.shift(1)).to_numpy())
    bounds = [*starts.tolist(), df.height]
    qids = q.gather(starts).to_list()
    docs = df["doc_id"].to_list()
    vals = df[value].to_list()
    return {
        qid: dict(zip(docs[a:b], vals[a:b], strict=True))
        for qid, a, b in zip(qids, bounds[:-1], bounds[1:], strict=True)
    }


@dataclass
class Timing:
    total: float
    phases: dict[str, float] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)


class Bench:
    """One library.  ``frames``: in-memory run/qrels (compute mode) or None (e2e)."""

    run_cols: Sequence[str] = ("query_id", "doc_id", "rank", "score")

    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job

    def warm(self) -> None:
        """One tiny evaluation before timing (ranx: numba JIT; everyone: first calls).

        The tiny input comes from the generator with the same dtypes and id widths as
        the data (so ranx does not recompile), and reads no file: reading even a few
        rows of a Parquet file decodes a whole row group, which would set the peak RSS.
        """
        sys.path.insert(0, str(BENCH_DIR))
        from generate import Spec, make_chunk

        run, qrels = make_chunk(Spec(WARM_QUERIES, self.job["docs"], self.job["int_ids"]), 0)
        if "system" in self.run_cols:
            import polars as pl

            run = run.with_columns(system=pl.lit("s00"))
        self.compute(run.select(self.run_cols), qrels)

    def load(self) -> tuple[Any, Any]:
        return (
            _read(self.job["run"], self.run_cols),
            _read(self.job["qrels"], ("query_id", "doc_id", "relevance")),
        )

    def e2e(self) -> Timing:  # default: read frames, then compute
        t0 = time.perf_counter()
        run, qrels = self.load()
        t1 = time.perf_counter()
        r = self.compute(run, qrels)
        r.phases = {"read": t1 - t0, **r.phases}
        r.total = time.perf_counter() - t0
        return r

    def compute(self, run: Any, qrels: Any) -> Timing:
        raise NotImplementedError


class IrmBench(Bench):
    def __init__(self, job: dict[str, Any]) -> None:
        super().__init__(job)
        import polars_irmetrics as irm

        self.irm = irm
        variant = job["lib"].split("-", 1)[1]
        self.order = "score" if variant == "score" else "rank"
        # irm-systems: S runs stacked in one table with a "system" column, one call
        self.by = "system" if variant == "systems" else None
        if self.by is not None:
            self.run_cols = ("system", "query_id", "doc_id", "rank", "score")
        if variant == "full":
            self.metrics = list(getattr(irm, "DEFAULT_METRICS", CORE_METRICS))
        else:
            self.metrics = list(CORE_METRICS)
        # order="score": the frames carry no rank column at all
        if self.order == "score":
            self.run_cols = ("query_id", "doc_id", "score")
        self.engine = job.get("engine", "auto")
        # irm-unchecked: rank given, without the run's per-query duplicate checks
        self.check_duplicates = variant != "unchecked"
        self.buckets = job.get("buckets")  # evaluate(buckets=N), out_of_core.py sets it
        # systems= since the one door; a --baseline checkout from before it says by=
        door = hasattr(irm, "EvalOptions")
        self.groups = {} if self.by is None else {"systems" if door else "by": self.by}

    def e2e(self) -> Timing:
        import polars as pl

        t0 = time.perf_counter()
        out = self.irm.evaluate(
            _scan(self.job["run"], self.run_cols),
            self.metrics,
            qrels=pl.scan_parquet(self.job["qrels"]),
            order=self.order,
            check_duplicates=self.check_duplicates,
            buckets=self.buckets,
            **self.groups,
        ).collect(engine=self.engine)
        return Timing(time.perf_counter() - t0, values=_frame_means(out))

    def compute(self, run: Any, qrels: Any) -> Timing:
        t0 = time.perf_counter()
        out = self.irm.evaluate(
            run,
            self.metrics,
            qrels=qrels,
            order=self.order,
            check_duplicates=self.check_duplicates,
            buckets=self.buckets,
            **self.groups,
        )
        return Timing(time.perf_counter() - t0, values=_frame_means(out))


class RanxBench(Bench):
    run_cols = ("query_id", "doc_id", "score")

    def __init__(self, job: dict[str, Any]) -> None:
        super().__init__(job)
        import ranx

        self.ranx = ranx

    def compute(self, run: Any, qrels: Any) -> Timing:
        t0 = time.perf_counter()
        q = self.ranx.Qrels.from_dict(_to_dod(qrels, "relevance"))
        r = self.ranx.Run.from_dict(_to_dod(run, "score"))
        t1 = time.perf_counter()
        res = self.ranx.evaluate(q, r, list(CORE_METRICS))
        t2 = time.perf_counter()
        values = {k: float(v) for k, v in res.items()}
        return Timing(t2 - t0, {"convert": t1 - t0, "eval": t2 - t1}, values)


class TrecBench(Bench):
    run_cols = ("query_id", "doc_id", "score")

    def __init__(self, job: dict[str, Any]) -> None:
        super().__init__(job)
        import pytrec_eval

        self.pytrec_eval = pytrec_eval

    def compute(self, run: Any, qrels: Any) -> Timing:
        import numpy as np

        t0 = time.perf_counter()
        q = _to_dod(qrels, "relevance")
        r = _to_dod(run, "score")
        t1 = time.perf_counter()
        evaluator = self.pytrec_eval.RelevanceEvaluator(q, TREC_MEASURES)
        per_query = evaluator.evaluate(r)
        values = {
            core: float(np.mean([m[name] for m in per_query.values()]))
            for name, core in TREC_TO_CORE.items()
        }
        t2 = time.perf_counter()
        return Timing(t2 - t0, {"convert": t1 - t0, "eval": t2 - t1}, values)


def _floor_plan(run: Any, qrels: Any) -> Any:
    """The floor: scan, one join with the relevant judgments, one group-by sum, a mean."""
    import polars as pl

    rel = qrels.filter(pl.col("relevance") > 0)
    return (
        run.join(rel, on=["query_id", "doc_id"], how="inner")
        .group_by("query_id")
        .agg((pl.col("relevance") / (pl.col("rank") + 1).log(2)).sum().alias("dcg"))
        .select(pl.col("dcg").mean())
    )


def _minimal_plan(run: Any, qrels: Any) -> Any:
    """The five metrics written by hand in plain polars: ranks given, nothing checked.

    What a user would write for ndcg@10, map, mrr@10, recall@100 and precision@10
    alone, with trec_eval's conventions but none of the library's checks, exact sums or
    query-set policies: one join with every judgment (non-relevant ones included, as any
    metric set with bpref or judged@k needs), one group-by of the judged retrieved rows
    (AP orders each query's relevant ranks), one group-by of the judgments (R and the
    ideal DCG), a join of the two, the means. The same runtime-filter hint on the join
    as the library's. Reads the ``rank`` column, so it is the rank path's yardstick.
    """
    import polars as pl

    rel, rank = pl.col("relevance"), pl.col("rank")
    hit = rel >= 1
    hit_ranks = rank.filter(hit).sort()
    found = run.join(
        qrels.filter(pl.lit(True)),
        on=["query_id", "doc_id"],
        how="inner",
        build_side="prefer_right",
    )
    per_run = found.group_by("query_id").agg(
        pl.when((rank <= 10) & (rel > 0))
        .then(rel / (rank + 1).cast(pl.Float64).log(2))
        .sum()
        .alias("dcg"),
        (hit_ranks.cum_count() / hit_ranks).sum().alias("ap"),
        pl.when(hit & (rank <= 10)).then(1.0 / rank).max().alias("rr"),
        (hit & (rank <= 10)).sum().alias("hits10"),
        (hit & (rank <= 100)).sum().alias("hits100"),
    )
    top = rel.filter(rel > 0).sort(descending=True).head(10)
    ideal = qrels.group_by("query_id").agg(
        hit.sum().cast(pl.Float64).alias("n_rel"),
        (top / (top.cum_count().cast(pl.Float64) + 1.0).log(2)).sum().alias("idcg"),
    )

    def ratio(num: str, den: Any) -> Any:
        return pl.when(den > 0).then(pl.col(num).fill_null(0) / den).otherwise(0.0)

    n_rel = pl.col("n_rel")
    return ideal.join(per_run, on="query_id", how="left").select(
        ratio("dcg", pl.col("idcg")).mean().alias("ndcg@10"),
        ratio("ap", n_rel).mean().alias("map"),
        pl.col("rr").fill_null(0.0).mean().alias("mrr@10"),
        ratio("hits100", n_rel).mean().alias("recall@100"),
        (pl.col("hits10").fill_null(0) / 10).mean().alias("precision@10"),
    )


class PlainPolarsBench(Bench):
    """A plain polars plan (``plan``) over the run's ids and ranks and the judgments."""

    run_cols = ("query_id", "doc_id", "rank")

    def plan(self, run: Any, qrels: Any) -> Any:
        raise NotImplementedError

    def values(self, out: Any) -> dict[str, float]:
        raise NotImplementedError

    def e2e(self) -> Timing:
        t0 = time.perf_counter()
        out = self.plan(
            _scan(self.job["run"], self.run_cols),
            _scan(self.job["qrels"], ("query_id", "doc_id", "relevance")),
        ).collect(engine=self.job.get("engine", "auto"))
        return Timing(time.perf_counter() - t0, values=self.values(out))

    def compute(self, run: Any, qrels: Any) -> Timing:
        t0 = time.perf_counter()
        out = self.plan(run.lazy(), qrels.lazy()).collect()
        return Timing(time.perf_counter() - t0, values=self.values(out))


class MinimalBench(PlainPolarsBench):
    def plan(self, run: Any, qrels: Any) -> Any:
        return _minimal_plan(run, qrels)

    def values(self, out: Any) -> dict[str, float]:
        return _frame_means(out)


class FloorBench(PlainPolarsBench):
    def plan(self, run: Any, qrels: Any) -> Any:
        return _floor_plan(run, qrels)

    def values(self, out: Any) -> dict[str, float]:
        return {"floor_dcg": float(out.item())}


BENCHES: dict[str, Callable[[dict[str, Any]], Bench]] = {
    "irm-rank": IrmBench,
    "irm-score": IrmBench,
    "irm-full": IrmBench,
    "irm-unchecked": IrmBench,
    "ranx": RanxBench,
    "pytrec_eval": TrecBench,
    "minimal": MinimalBench,
    "floor": FloorBench,
    SYSTEMS_LIB: IrmBench,
}


def child_main(job: dict[str, Any]) -> int:
    out: dict[str, Any] = {"lib": job["lib"], "mode": job["mode"], "status": "ok"}
    try:
        t0 = time.perf_counter()
        bench = BENCHES[job["lib"]](job)
        bench.warm()
        gc.collect()
        out["setup_s"] = time.perf_counter() - t0
        out["rss_setup_mib"] = _rss_mib()
        frames = bench.load() if job["mode"] == "compute" else None
        best: Timing | None = None
        cpu: list[float] = []
        for _ in range(job["repeats"]):
            c0 = time.process_time()
            t = bench.e2e() if frames is None else bench.compute(*frames)
            cpu.append(time.process_time() - c0)
            if best is None or t.total < best.total:
                best = t
            del t
            gc.collect()
        assert best is not None
        # CPU seconds of the process (every thread), least of the repeats: on a loaded
        # machine steadier than the wall-clock time
        out.update(time_s=best.total, cpu_s=min(cpu), phases=best.phases, values=best.values)
        if frames is not None:
            out["rows"] = frames[0].height
    except BaseException as e:  # report, never hang the parent
        out["status"] = "error"
        out["error"] = f"{type(e).__name__}: {e}".strip().splitlines()[0][:300]
        out["traceback"] = traceback.format_exc()[-4000:]
    out["rss_peak_mib"] = _rss_mib()
    out["vmhwm_mib"] = _vmhwm_mib()
    print(RESULT_MARK + json.dumps(out), flush=True)
    return 0 if out["status"] == "ok" else 1


# =====================================================================================
# parent side
# =====================================================================================


def _child_env(src: Path = SRC) -> dict[str, str]:
    env = dict(os.environ)
    # use the checkout's polars_irmetrics even when the package is not installed
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH", "")) if p)
    return env


def baseline_src(rev: str) -> Path:
    """The ``src`` folder of a checkout of ``rev`` (a git worktree under
    ``benchmarks/.work``, made once), for ``--baseline``."""
    folder = BENCH_DIR / ".work" / f"baseline-{rev}"
    if not folder.exists():
        cmd = ["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), rev]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return folder / "src"


def generate_data(spec: Any, folder: Path, *, flat: bool = True, hive: bool = False) -> Path:
    """Run benchmarks/generate.py in a subprocess (if the files are missing).

    Not in this process: a child's ``ru_maxrss`` starts from the high-water mark of
    the process that spawned it (Linux carries it across fork + exec), so the parent
    must never hold the data, or even import polars.
    """
    cmd = [
        sys.executable,
        str(BENCH_DIR / "generate.py"),
        f"--queries={spec.queries}",
        f"--docs={spec.docs}",
        f"--seed={spec.seed}",
        f"--chunk-queries={spec.chunk_queries}",
        f"--out={folder}",
        *(["--int-ids"] if spec.int_ids else []),
        *(["--hive"] if hive else []),
        *([] if flat else ["--no-flat"]),
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return folder


def stack_systems(run: Path, systems: int) -> Path:
    """``systems`` copies of ``run`` in one file with a ``system`` column (s00, s01, ...),
    written once by a subprocess (the parent never imports polars)."""
    out = run.with_name(f"runs_{systems}sys.parquet")
    if not out.exists():
        cmd = [sys.executable, str(Path(__file__).resolve()), "--stack", str(run), str(out)]
        subprocess.run([*cmd, str(systems)], check=True, env=_child_env())
    return out


def _stack_main(run: str, out: str, systems: int) -> int:
    import polars as pl

    base = pl.scan_parquet(run)
    copies = [base.select(pl.lit(f"s{i:02d}").alias("system"), pl.all()) for i in range(systems)]
    pl.concat(copies).sink_parquet(out)
    return 0


def run_child(job: dict[str, Any], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(job)]
    base = {"lib": job["lib"], "mode": job["mode"], "baseline": "src" in job}
    try:
        src = Path(job["src"]) if "src" in job else SRC
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=_child_env(src)
        )
    except subprocess.TimeoutExpired:
        return {**base, "status": "timeout", "error": f"timeout after {timeout:.0f}s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            res: dict[str, Any] = json.loads(line[len(RESULT_MARK) :])
            return res
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    return {**base, "status": "error", "error": f"rc={proc.returncode}: {tail[0][:300]}"}


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on Linux/macOS
        return float("nan")


def machine_info() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    ram = "?"
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024**2:.1f} GiB"
                break
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "ram": ram,
        "os": f"{platform.system()} {platform.release()}",
    }


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name, dist in [
        ("polars", "polars"),
        ("numpy", "numpy"),
        ("ranx", "ranx"),
        ("numba", "numba"),
        ("pytrec_eval", "pytrec-eval-terrier"),
        ("polars_irmetrics", "polars_irmetrics"),
    ]:
        try:
            out[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    if out["polars_irmetrics"] == "not installed":
        out["polars_irmetrics"] = "src checkout"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        rev = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        if rev:
            out["polars_irmetrics"] += f" (git {rev})"
    return out


def _fmt_s(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _fmt_mib(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}"


def _fmt_ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or not b else f"{a / b:.2f}×"


def _time(res: dict[str, Any] | None) -> float | None:
    return res.get("time_s") if res and res.get("status") == "ok" else None


def _cpu(res: dict[str, Any] | None) -> float | None:
    return res.get("cpu_s") if res and res.get("status") == "ok" else None


def build_baseline_table(results: list[dict[str, Any]], rev: str) -> list[str]:
    """Per (queries, library, mode): the time before (``rev``) and after, and the ratio."""
    lines = [
        "| queries | library | mode | before s | after s | after / before | before MiB "
        "| after MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    before = {(r["queries"], r["lib"], r["mode"]): r for r in results if r.get("baseline")}
    for r in results:
        if r.get("baseline") or r["lib"] not in IRM_LIBS:
            continue
        b = before.get((r["queries"], r["lib"], r["mode"]))
        tb, ta = _time(b), _time(r)
        ratio = f"{ta / tb:.2f}" if ta is not None and tb else "-"
        lines.append(
            f"| {r['queries']:,} | {r['lib']} | {r['mode']} | {_fmt_s(tb)} | {_fmt_s(ta)} "
            f"| {ratio} | {_fmt_mib((b or {}).get('rss_peak_mib'))} "
            f"| {_fmt_mib(r.get('rss_peak_mib'))} |"
        )
    return lines


def build_table(results: list[dict[str, Any]], sizes: Sequence[int], docs: int) -> list[str]:
    head = [
        "queries",
        "rows",
        "library",
        "e2e s",
        "compute s",
        "convert s",
        "setup s",
        "e2e RSS MiB",
        "compute RSS MiB",
        "e2e / floor",
        "compute / floor",
        "e2e CPU s",
        "e2e CPU / floor",
        f"e2e / {REFERENCE}",
        f"compute / {REFERENCE}",
        "status",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    results = [r for r in results if r["lib"] != SYSTEMS_LIB]
    idx = {(r["queries"], r["lib"], r["mode"]): r for r in results}
    libs = [lib for lib in ALL_LIBS if any(r["lib"] == lib for r in results)]
    for q in sizes:
        for lib in libs:
            e, c = idx.get((q, lib, "e2e")), idx.get((q, lib, "compute"))
            te, tc = _time(e), _time(c)
            fe, fc = (_time(idx.get((q, "floor", m))) for m in MODES)
            floor_cpu = _cpu(idx.get((q, "floor", "e2e")))
            re_, rc = (_time(idx.get((q, REFERENCE, m))) for m in MODES)
            convert = (c or {}).get("phases", {}).get("convert") if tc is not None else None
            setups = [r["setup_s"] for r in (e, c) if r and "setup_s" in r]
            errors = [
                f"{r['mode']}: {r.get('error', r['status'])}"
                for r in (e, c)
                if r and r.get("status") != "ok"
            ]
            status = "ok" if not errors else "; ".join(errors).replace("|", "/")
            is_ref = lib == REFERENCE
            lines.append(
                "| "
                + " | ".join(
                    [
                        f"{q:,}",
                        f"{q * docs:,}",
                        lib,
                        _fmt_s(te),
                        _fmt_s(tc),
                        _fmt_s(convert),
                        _fmt_s(max(setups) if setups else None),
                        _fmt_mib((e or {}).get("rss_peak_mib") if te is not None else None),
                        _fmt_mib((c or {}).get("rss_peak_mib") if tc is not None else None),
                        "–" if lib == "floor" else _fmt_ratio(te, fe),
                        "–" if lib == "floor" else _fmt_ratio(tc, fc),
                        _fmt_s(_cpu(e)),
                        "–" if lib == "floor" else _fmt_ratio(_cpu(e), floor_cpu),
                        "–" if is_ref else _fmt_ratio(te, re_),
                        "–" if is_ref else _fmt_ratio(tc, rc),
                        status,
                    ]
                )
                + " |"
            )
    return lines


def build_systems_table(results: list[dict[str, Any]], docs: int) -> list[str]:
    """Many runs in one call: time against S times the one-system time."""
    rows = sorted(
        (r for r in results if r["lib"] == SYSTEMS_LIB), key=lambda r: (r["systems"], r["mode"])
    )
    if not rows:
        return []
    head = ["systems", "queries each", "rows", "e2e s", "compute s", "e2e RSS MiB"]
    head += ["e2e / (S × one)", "compute / (S × one)", "e2e CPU s", "CPU / (S × one)", "status"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    idx = {(r["systems"], r["mode"]): r for r in rows}
    one = {m: _time(idx.get((1, m))) for m in MODES}
    one_cpu = _cpu(idx.get((1, "e2e")))
    for systems in sorted({r["systems"] for r in rows}):
        e, c = idx.get((systems, "e2e")), idx.get((systems, "compute"))
        te, tc = _time(e), _time(c)
        errors = [
            f"{r['mode']}: {r.get('error', r['status'])}"
            for r in (e, c)
            if r and r.get("status") != "ok"
        ]
        q = (e or c or {}).get("queries", 0)
        cells = [
            str(systems),
            f"{q:,}",
            f"{systems * q * docs:,}",
            _fmt_s(te),
            _fmt_s(tc),
            _fmt_mib((e or {}).get("rss_peak_mib") if te is not None else None),
            _fmt_ratio(te, None if one["e2e"] is None else systems * one["e2e"]),
            _fmt_ratio(tc, None if one["compute"] is None else systems * one["compute"]),
            _fmt_s(_cpu(e)),
            _fmt_ratio(_cpu(e), None if one_cpu is None else systems * one_cpu),
            "ok" if not errors else "; ".join(errors).replace("|", "/"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _lookup(values: dict[str, float], metric: str) -> float | None:
    aliases = {
        "mrr@10": ["mrr@10", "recip_rank@10", "rr@10"],
        "precision@10": ["precision@10", "p@10", "P@10", "P_10"],
        "recall@100": ["recall@100", "recall_100"],
        "ndcg@10": ["ndcg@10", "ndcg_cut@10", "ndcg_cut_10"],
    }.get(metric, [metric])
    for a in aliases:
        if a in values:
            return values[a]
    lower = {k.lower(): v for k, v in values.items()}
    return next((lower[a.lower()] for a in aliases if a.lower() in lower), None)


def build_values(results: list[dict[str, Any]], sizes: Sequence[int]) -> list[str]:
    head = ["queries", "library", "mode", *CORE_METRICS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for q in sizes:
        for r in results:
            if r["queries"] != q or r.get("status") != "ok" or r["lib"] in ("floor", SYSTEMS_LIB):
                continue
            vals = [_lookup(r.get("values", {}), m) for m in CORE_METRICS]
            cells = ["–" if v is None else f"{v:.6f}" for v in vals]
            lines.append("| " + " | ".join([f"{q:,}", r["lib"], r["mode"], *cells]) + " |")
    return lines


NOTES = """\
Notes
- Times are seconds, best of the repeats; RSS is the peak resident set size of the
  child process (`ru_maxrss`), so it includes the interpreter, the imported libraries
  and, in compute mode, the frames already loaded.
- `e2e`: Parquet files -> mean metrics. `compute`: polars frames in memory -> mean
  metrics; for ranx and pytrec_eval this includes converting the frames to their own
  structures, and `convert s` is that part alone. `setup s` (imports, warm-up, ranx's
  numba JIT) is not in any time.
- `irm-rank` ranks by the `rank` column (`order="rank"`), `irm-score` from the score
  (`order="score"`, frames without a rank column), `irm-full` is `order="rank"` with
  `irm.DEFAULT_METRICS`. ranx and pytrec_eval rank from the score, so the peer/irm ratios
  use `irm-score`. Ratios > 1 mean slower than the reference.
- ranx: frames -> `{qid: {docid: value}}` dicts (sort by query, zip slices) ->
  `Qrels.from_dict` / `Run.from_dict`; measured faster than the documented pandas route
  (`Run.from_df`), which groups in pandas. JIT warmed on the first rows of the same data
  (same id widths, so no recompilation). `ranx.evaluate` runs numba-parallel on all cores.
- pytrec_eval: the same dicts; `RelevanceEvaluator(qrels, {ndcg_cut.10, map, recip_rank,
  recall.100, P.10})`, evaluate, mean over queries in Python. Its `recip_rank` is NOT cut
  at 10 (it is trec_eval's full-ranking reciprocal rank), unlike `mrr@10` of the others.
- minimal: the five metrics written by hand as one plain polars plan (ranks given, no
  checks, float sums): a join with every judgment, a group-by of the judged retrieved
  rows, a group-by of the judgments, a join, the means. The yardstick for `irm-rank`
  and `irm-unchecked`: what the metrics themselves cost in polars.
- floor: a bare polars plan over the same files: scan (query_id, doc_id, rank), one inner
  join with the judgments of relevance > 0, one group-by sum of rel / log2(rank + 1)
  per query, a mean. No library can do the job with less work.
"""


def write_markdown(
    path: Path,
    results: list[dict[str, Any]],
    args: argparse.Namespace,
    sizes: Sequence[int],
    libs: Sequence[str],
) -> None:
    m, v = machine_info(), versions()
    lines = [
        "# polars_irmetrics benchmarks",
        "",
        f"- date: {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}",
        f"- load average (1 min) at start / end: {args.load_start:.2f} / {_load():.2f}"
        " (other processes on the machine make times noisy)",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- command: `python benchmarks/run.py --sizes {','.join(map(str, sizes))} "
        f"--docs {args.docs} --repeats {args.repeats} --libs {','.join(libs)}"
        + (" --int-ids" if args.int_ids else "")
        + (f" --baseline {args.baseline}" if args.baseline else "")
        + (f" --jobs {args.jobs}" if args.jobs > 1 else "")
        + (
            f" --systems {args.systems} --systems-queries {args.systems_queries}"
            if args.systems
            else ""
        )
        + "`",
        f"- data: `benchmarks/generate.py`, {args.docs} retrieved docs per query, ~10 judged "
        f"docs per query (about half retrieved), grades 0-3, "
        f"{'Int64' if args.int_ids else 'string'} ids, seed {args.seed}",
        f"- metrics: {', '.join(CORE_METRICS)}",
        "",
    ]
    if args.jobs > 1:
        lines += [f"**Children ran {args.jobs} at a time: times are not comparable.**", ""]
    current = [r for r in results if not r.get("baseline")]
    lines += ["## Times and peak memory", "", *build_table(current, sizes, args.docs), ""]
    if args.baseline:
        lines += [
            f"## Before and after: this checkout against `{args.baseline}`",
            "",
            "The same polars_irmetrics jobs on a checkout of the baseline revision, run "
            "interleaved with this checkout's in the same run; `after / before` below 1 is "
            "faster.",
            "",
            *build_baseline_table(results, args.baseline),
            "",
        ]
    systems = build_systems_table(results, args.docs)
    if systems:
        lines += [
            "## Many runs in one call",
            "",
            f"`irm-systems`: S copies of the {args.systems_queries:,}-query run stacked in one "
            "table with a `system` column (judgments without one), the five metrics with "
            '`systems="system"` in one call; `S × one` is S times the one-system time of the '
            "same run.",
            "",
            *systems,
            "",
        ]
    lines += ["## Mean metric values (sanity check)", "", *build_values(results, sizes), ""]
    lines += [NOTES]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def parse_libs(text: str) -> list[str]:
    out: list[str] = []
    for item in (s.strip() for s in text.split(",")):
        group = {"irm": IRM_LIBS, "peers": PEER_LIBS, "all": ALL_LIBS}.get(item, [item])
        for lib in group:
            if lib not in BENCHES:
                raise SystemExit(f"unknown library {lib!r}; choose from {', '.join(ALL_LIBS)}")
            if lib not in out:
                out.append(lib)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child_main(json.loads(argv[1]))
    if argv[:1] == ["--stack"]:
        return _stack_main(argv[1], argv[2], int(argv[3]))

    sys.path.insert(0, str(BENCH_DIR))
    from generate import DATA_DIR, Spec  # lean: numpy/polars are not imported here

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sizes", default="1000,10000,100000", help="numbers of queries")
    p.add_argument("--docs", type=int, default=100, help="retrieved docs per query")
    p.add_argument("--repeats", type=int, default=3, help="best of N")
    p.add_argument("--libs", default="all", help=f"{','.join(ALL_LIBS)} (or irm, peers, all)")
    p.add_argument("--modes", default="e2e,compute")
    p.add_argument("--out", type=Path, default=BENCH_DIR / "results.md")
    p.add_argument("--json", type=Path, default=None, help="also dump raw results here")
    p.add_argument("--data-dir", type=Path, default=DATA_DIR)
    p.add_argument("--int-ids", action="store_true", help="Int64 ids instead of strings")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--baseline",
        metavar="REV",
        help="also run the polars_irmetrics jobs on a checkout of git revision REV, "
        "interleaved, and print before/after ratios (e.g. --baseline HEAD~3)",
    )
    p.add_argument("--timeout", type=float, default=1800, help="seconds per child")
    p.add_argument("--engine", default="auto", help="polars engine for the lazy plans")
    p.add_argument(
        "--jobs", type=int, default=1, help="children at once (>1 only for smoke tests)"
    )
    p.add_argument(
        "--systems",
        default="",
        help="also time S runs in one systems='system' call, e.g. 1,10,50 (1 for the ratio)",
    )
    p.add_argument("--systems-queries", type=int, default=10_000, help="queries per system")
    args = p.parse_args(argv)
    args.load_start = _load()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    libs = parse_libs(args.libs)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if set(modes) - set(MODES):
        raise SystemExit(f"--modes: choose from {', '.join(MODES)}")

    results: list[dict[str, Any]] = []
    for q in sizes:
        spec = Spec(q, args.docs, args.int_ids, args.seed)
        folder = generate_data(spec, args.data_dir / spec.name)
        jobs = [
            {
                "lib": lib,
                "mode": mode,
                "run": str(folder / "run.parquet"),
                "qrels": str(folder / "qrels.parquet"),
                "repeats": args.repeats,
                "engine": args.engine,
                "docs": args.docs,
                "int_ids": args.int_ids,
            }
            for lib in libs
            for mode in modes
        ]
        if args.baseline:  # the same irm jobs on the baseline checkout, interleaved
            before = str(baseline_src(args.baseline))
            jobs = [
                one_job
                for job in jobs
                for one_job in ([job, {**job, "src": before}] if job["lib"] in IRM_LIBS else [job])
            ]

        def one(job: dict[str, Any], q: int = q) -> dict[str, Any]:
            res = run_child(job, args.timeout)
            res.update(queries=q, baseline="src" in job)
            t = _time(res)
            msg = (
                f"{t:.3f}s, {res.get('rss_peak_mib', 0):,.0f} MiB"
                if t is not None
                else (f"{res['status']}: {res.get('error', '')}")
            )
            label = job["lib"] + ("@" + args.baseline if "src" in job else "")
            print(f"[{q:>9,} q] {label:<12} {job['mode']:<8} {msg}", file=sys.stderr)
            return res

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results.extend(pool.map(one, jobs))

    counts = [int(s) for s in args.systems.split(",") if s.strip()]
    if counts:
        spec = Spec(args.systems_queries, args.docs, args.int_ids, args.seed)
        folder = generate_data(spec, args.data_dir / spec.name)
        for systems in counts:
            stacked = stack_systems(folder / "run.parquet", systems)
            for mode in modes:
                job = {
                    "lib": SYSTEMS_LIB,
                    "mode": mode,
                    "run": str(stacked),
                    "qrels": str(folder / "qrels.parquet"),
                    "repeats": args.repeats,
                    "engine": args.engine,
                    "docs": args.docs,
                    "int_ids": args.int_ids,
                }
                res = run_child(job, args.timeout)
                res.update(queries=args.systems_queries, systems=systems)
                t = _time(res)
                msg = f"{t:.3f}s" if t is not None else f"{res['status']}: {res.get('error', '')}"
                print(f"[{systems:>3} systems] {mode:<8} {msg}", file=sys.stderr)
                results.append(res)

    table = build_table([r for r in results if not r.get("baseline")], sizes, args.docs)
    print("\n".join(table))
    if args.baseline:
        print("\n".join(["", *build_baseline_table(results, args.baseline)]))
    write_markdown(args.out, results, args, sizes, libs)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
