"""How long reading a Parquet corpus of embeddings takes, block by block: the floor of
``irm.knn``'s out-of-core time (results in ``results_vectors.md``).

    python benchmarks/knn_decode.py --rows 400000

Writes ``data/vectors/decode_<rows>_<dim>.parquet`` (zstd, row groups of 50,000) if
missing, then reads it to numpy in blocks of ``--block-size`` rows, three ways (best of
``--repeats``): polars slices of a LazyFrame (what ``irm.knn`` does with a LazyFrame),
polars ``collect_batches``, pyarrow's ``ParquetFile.iter_batches``, ``irm.knn``'s path
reader (pyarrow's batches cut into checked blocks: what ``irm.knn(queries, path)``
reads), and pyarrow decoding two row groups at once in two threads (whether threads
help decoding on the machine). Wall and CPU time; under load only the CPU time is
comparable.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from polars_irmetrics.vectors.parquet import corpus_files, parquet_blocks

BENCH_DIR = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--block-size", type=int, default=65_536)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--data", default=str(BENCH_DIR / "data" / "vectors"))
    args = parser.parse_args()
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    path = data / f"decode_{args.rows}_{args.dim}.parquet"
    if not path.exists():
        rng = np.random.default_rng(1)
        vectors = rng.standard_normal((args.rows, args.dim)).astype(np.float32)
        frame = pl.DataFrame({"doc_id": np.arange(args.rows), "embedding": vectors})
        frame.write_parquet(path, row_group_size=50_000)
    lazy = pl.scan_parquet(path).select("doc_id", "embedding")
    size = args.block_size

    def slices() -> None:
        for offset in range(0, args.rows, size):
            lazy.slice(offset, size).collect()["embedding"].to_numpy()

    def batches() -> None:
        for frame in lazy.collect_batches(chunk_size=size):
            frame["embedding"].to_numpy()

    def pyarrow_batches() -> None:
        for batch in pq.ParquetFile(path).iter_batches(size, columns=["doc_id", "embedding"]):
            batch.column(1).flatten().to_numpy()

    def path_reader() -> None:
        files = corpus_files(path, "doc_id", "embedding")
        for _block in parquet_blocks(files, files.ids("doc_id"), "embedding", size, np.float32):
            pass

    pool = ThreadPoolExecutor(2)

    def two_row_groups() -> None:
        handles = [pq.ParquetFile(path, pre_buffer=False) for _ in range(2)]

        def one(group: int) -> None:
            table = handles[group % 2].read_row_group(group, ["embedding"], use_threads=False)
            table.column(0).combine_chunks().flatten().to_numpy()

        groups = handles[0].metadata.num_row_groups
        for first in range(0, groups, 2):
            list(pool.map(one, range(first, min(groups, first + 2))))

    ways: list[tuple[str, Callable[[], None]]] = [
        ("polars LazyFrame slices (irm.knn of a LazyFrame)", slices),
        ("polars collect_batches", batches),
        ("pyarrow ParquetFile.iter_batches", pyarrow_batches),
        ("irm.knn's path reader (pyarrow, checked blocks)", path_reader),
        ("pyarrow, two row groups at once in 2 threads", two_row_groups),
    ]
    best = {name: (float("inf"), float("inf")) for name, _ in ways}
    for _ in range(args.repeats):
        for name, way in ways:
            start, cpu = time.perf_counter(), time.process_time()
            way()
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    pool.shutdown()
    print(f"{args.rows:,} x {args.dim}, blocks of {size:,}; load {os.getloadavg()[0]:.1f}")
    for name, (wall, cpu) in best.items():
        print(
            f"{name}: {wall:.2f} s, {wall / args.rows * 1e6:.1f} µs per row "
            f"(CPU {cpu / args.rows * 1e6:.1f} µs per row)"
        )


if __name__ == "__main__":
    main()
