"""Deterministic synthetic run + qrels for the benchmarks.

Q queries x D retrieved documents per query.  Each query has about 10 judged
documents (6..14, graded 0..3); about half of them are in the retrieved list
(placed with a bias towards the top ranks), the rest are judged but not
retrieved.  Scores strictly decrease with rank (no ties), so ranking by the
``rank`` column and ranking by ``score`` give the same order.

Layout written under ``--out`` (default ``benchmarks/data/q{Q}_d{D}_{ids}_s{seed}``,
plus ``_c{N}`` for a non-default ``--chunk-queries``)::

    run.parquet        query_id, doc_id, rank (Int32), score (Float64)
    qrels.parquet      query_id, doc_id, relevance (Int64)
    run/bucket=NN/part.parquet   (with --hive: the same run, hive-partitioned)
    qrels/bucket=NN/part.parquet (with --hive: the judgments, in the run's buckets)

Everything is generated in chunks of ``--chunk-queries`` queries with
``numpy.random.default_rng([seed, chunk_index])`` and streamed to disk, so even
200M rows are never held in memory at once; the output depends only on
(Q, D, ids, seed, chunk-queries).

    python benchmarks/generate.py --queries 100000 --docs 100
    python benchmarks/generate.py --queries 2000000 --docs 100 --hive --no-flat
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy/polars are imported where used: the benchmark parents stay lean
    import numpy as np
    import polars as pl

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / "data"

CORPUS_BITS = 24  # doc numbers live in [0, 2**24): "d" + 8 digits
CORPUS_SIZE = 1 << CORPUS_BITS
QUERY_ID_WIDTH = 7  # "q" + 7 digits: up to 10M queries
DOC_ID_WIDTH = 8
GRADE_P = (0.25, 0.35, 0.25, 0.15)  # P(relevance = 0, 1, 2, 3) of a judged doc
DEFAULT_CHUNK_QUERIES = 50_000


@dataclass(frozen=True)
class Spec:
    """What to generate."""

    queries: int
    docs: int
    int_ids: bool = False
    seed: int = 0
    chunk_queries: int = DEFAULT_CHUNK_QUERIES

    @property
    def name(self) -> str:
        ids = "int" if self.int_ids else "str"
        chunk = "" if self.chunk_queries == DEFAULT_CHUNK_QUERIES else f"_c{self.chunk_queries}"
        return f"q{self.queries}_d{self.docs}_{ids}_s{self.seed}{chunk}"

    @property
    def n_chunks(self) -> int:
        return max(1, -(-self.queries // self.chunk_queries))


def _ids(values: np.ndarray, prefix: str, width: int, int_ids: bool) -> pl.Series:
    import numpy as np
    import polars as pl

    s = pl.Series(values.astype(np.int64))
    if int_ids:
        return s
    return pl.select(
        pl.format(prefix + "{}", pl.lit(s).cast(pl.String).str.zfill(width))
    ).to_series()


def make_chunk(spec: Spec, chunk: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Run and qrels rows of the queries of one chunk (deterministic in spec, chunk)."""
    import numpy as np
    import polars as pl

    q0 = chunk * spec.chunk_queries
    n = min(spec.chunk_queries, spec.queries - q0)
    d = spec.docs
    rng = np.random.default_rng([spec.seed, chunk])

    # Each query retrieves docs (base + j * step) mod 2**24, j = 0..D-1, with an odd
    # step: distinct within a query; judged-but-unretrieved docs use j = D, D+1, ...
    base = rng.integers(0, CORPUS_SIZE, n, dtype=np.int64)
    step = rng.integers(0, CORPUS_SIZE // 2, n, dtype=np.int64) * 2 + 1
    qidx = np.arange(q0, q0 + n, dtype=np.int64)

    # --- run ---------------------------------------------------------------------
    j = np.arange(d, dtype=np.int64)
    docnum = (base[:, None] + j[None, :] * step[:, None]) & (CORPUS_SIZE - 1)
    score = 100.0 - np.cumsum(rng.exponential(1.0, (n, d)), axis=1)
    rank = np.broadcast_to(np.arange(1, d + 1, dtype=np.int32), (n, d))
    run = pl.DataFrame(
        {
            "query_id": _ids(np.repeat(qidx, d), "q", QUERY_ID_WIDTH, spec.int_ids),
            "doc_id": _ids(docnum.ravel(), "d", DOC_ID_WIDTH, spec.int_ids),
            "rank": pl.Series(rank.ravel(), dtype=pl.Int32),
            "score": pl.Series(score.ravel(), dtype=pl.Float64),
        }
    )

    # --- qrels -------------------------------------------------------------------
    n_judged = rng.integers(6, 15, n)  # 6..14, mean 10
    n_ret = np.minimum(rng.binomial(n_judged, 0.5), d)
    n_unret = n_judged - n_ret
    # Distinct retrieved positions per query, biased to the top: Gumbel top-k with
    # weights 1 / (j + 1) ** 0.7.
    kmax = int(n_ret.max(initial=0))
    if kmax:
        keys = -0.7 * np.log1p(j)[None, :] + rng.gumbel(size=(n, d))
        pos = np.argsort(-keys, axis=1, kind="stable")[:, :kmax]
        take = np.arange(kmax)[None, :] < n_ret[:, None]
        ret_q = np.broadcast_to(np.arange(n)[:, None], (n, kmax))[take]
        ret_doc = docnum[ret_q, pos[take]]
    else:
        ret_q = np.empty(0, np.int64)
        ret_doc = np.empty(0, np.int64)
    unret_q = np.repeat(np.arange(n), n_unret)
    # offset of each unretrieved judged doc within its query: 0, 1, ...
    starts = np.repeat(np.cumsum(n_unret) - n_unret, n_unret)
    t = np.arange(unret_q.size) - starts
    unret_doc = (base[unret_q] + (d + t) * step[unret_q]) & (CORPUS_SIZE - 1)
    q_all = np.concatenate([ret_q, unret_q])
    doc_all = np.concatenate([ret_doc, unret_doc])
    order = np.argsort(q_all, kind="stable")
    q_all, doc_all = q_all[order], doc_all[order]
    grade = rng.choice(4, size=q_all.size, p=GRADE_P).astype(np.int64)
    qrels = pl.DataFrame(
        {
            "query_id": _ids(qidx[q_all], "q", QUERY_ID_WIDTH, spec.int_ids),
            "doc_id": _ids(doc_all, "d", DOC_ID_WIDTH, spec.int_ids),
            "relevance": pl.Series(grade, dtype=pl.Int64),
        }
    )
    return run, qrels


def iter_chunks(spec: Spec) -> Iterator[tuple[int, pl.DataFrame, pl.DataFrame]]:
    for c in range(spec.n_chunks):
        run, qrels = make_chunk(spec, c)
        yield c, run, qrels


class _StreamWriter:
    """Append polars frames to one Parquet file (pyarrow writer, zstd)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp = path.with_name(path.name + ".tmp")
        self.writer: Any = None

    def write(self, df: pl.DataFrame) -> None:
        import pyarrow.parquet as pq  # imported here: the benchmark children avoid pyarrow

        table = df.to_arrow()
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.tmp, table.schema, compression="zstd")
        self.writer.write_table(table, row_group_size=1 << 18)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.tmp.replace(self.path)


def generate(
    spec: Spec,
    out: Path | None = None,
    *,
    flat: bool = True,
    hive: bool = False,
    force: bool = False,
    verbose: bool = False,
) -> Path:
    """Write the data set; skip the parts already present (unless ``force``)."""
    out = Path(out) if out is not None else DATA_DIR / spec.name
    out.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path, hive_dir = out / "qrels.parquet", out / "run.parquet", out / "run"
    done_marker = hive_dir / "_SUCCESS"
    need_qrels = force or not qrels_path.exists()
    need_flat = flat and (force or not run_path.exists())
    need_hive = hive and (force or not done_marker.exists())
    if not (need_qrels or need_flat or need_hive):
        return out
    if need_hive and hive_dir.exists():
        shutil.rmtree(hive_dir)
    width = max(2, len(str(spec.n_chunks - 1)))
    t0 = time.perf_counter()
    qw = _StreamWriter(qrels_path) if need_qrels else None
    rw = _StreamWriter(run_path) if need_flat else None
    rows = 0
    for c, run, qrels in iter_chunks(spec):
        rows += run.height
        if qw is not None:
            qw.write(qrels)
        if rw is not None:
            rw.write(run)
        if need_hive:
            part = hive_dir / f"bucket={c:0{width}d}"
            part.mkdir(parents=True, exist_ok=True)
            run.write_parquet(part / "part.parquet", compression="zstd")
        if verbose and spec.n_chunks > 1:
            print(f"  chunk {c + 1}/{spec.n_chunks}: {rows:,} rows", file=sys.stderr)
    for w in (qw, rw):
        if w is not None:
            w.close()
    if need_hive:
        done_marker.touch()
    if hive:
        hive_qrels(spec, out)
    if verbose:
        print(
            f"generated {spec.name}: {rows:,} run rows in {time.perf_counter() - t0:.1f}s"
            f" -> {out}",
            file=sys.stderr,
        )
    return out


def hive_qrels(spec: Spec, out: Path) -> Path:
    """``qrels/bucket=NN/part.parquet``: the judgments in the run's buckets (chunk ``c``
    holds queries ``c * chunk_queries`` up to the next chunk), from ``qrels.parquet``."""
    import polars as pl

    folder = out / "qrels"
    if (folder / "_SUCCESS").exists():
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    width = max(2, len(str(spec.n_chunks - 1)))
    qrels = pl.read_parquet(out / "qrels.parquet")
    number = pl.col("query_id") if spec.int_ids else pl.col("query_id").str.slice(1).cast(pl.Int64)
    bucket = (number // spec.chunk_queries).alias("bucket")
    for (c,), part in qrels.with_columns(bucket).partition_by("bucket", as_dict=True).items():
        path = folder / f"bucket={c:0{width}d}"
        path.mkdir(parents=True, exist_ok=True)
        part.drop("bucket").write_parquet(path / "part.parquet", compression="zstd")
    (folder / "_SUCCESS").touch()
    return folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--queries", "-q", type=int, default=1000)
    p.add_argument("--docs", "-d", type=int, default=100)
    p.add_argument("--int-ids", action="store_true", help="Int64 ids instead of strings")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunk-queries", type=int, default=DEFAULT_CHUNK_QUERIES)
    p.add_argument("--out", type=Path, default=None, help="output folder")
    p.add_argument("--hive", action="store_true", help="also write run/bucket=NN/part.parquet")
    p.add_argument("--no-flat", action="store_true", help="do not write run.parquet")
    p.add_argument("--force", action="store_true", help="regenerate even if present")
    a = p.parse_args(argv)
    spec = Spec(a.queries, a.docs, a.int_ids, a.seed, a.chunk_queries)
    out = generate(spec, a.out, flat=not a.no_flat, hive=a.hive, force=a.force, verbose=True)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
