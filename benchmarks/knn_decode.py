"""How long reading a Parquet corpus of embeddings takes, block by block: the floor of
``irm.knn``'s out-of-core time (results in ``results_vectors.md``).

    python benchmarks/knn_decode.py --rows 400000

Writes ``data/vectors/decode_<rows>_<dim>.parquet`` (zstd, row groups of 50,000) if
missing, then reads it to numpy in blocks of ``--block-size`` rows, three ways (best of
``--repeats``): polars slices of a LazyFrame (what ``irm.knn`` does), polars
``collect_batches`` and pyarrow's ``ParquetFile.iter_batches``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

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

    ways: list[tuple[str, Callable[[], None]]] = [
        ("polars LazyFrame slices (irm.knn)", slices),
        ("polars collect_batches", batches),
        ("pyarrow ParquetFile.iter_batches", pyarrow_batches),
    ]
    best = {name: float("inf") for name, _ in ways}
    for _ in range(args.repeats):
        for name, way in ways:
            start = time.perf_counter()
            way()
            best[name] = min(best[name], time.perf_counter() - start)
    print(f"{args.rows:,} x {args.dim}, blocks of {size:,}; load {os.getloadavg()[0]:.1f}")
    for name, seconds in best.items():
        print(f"{name}: {seconds:.2f} s, {seconds / args.rows * 1e6:.1f} µs per row")


if __name__ == "__main__":
    main()
