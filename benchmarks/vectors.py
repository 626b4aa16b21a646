"""Vector search benchmark: irm.knn against faiss, out of core, and neighbour recall.

    python benchmarks/vectors.py                       # the issue's sizes (issue 30)
    python benchmarks/vectors.py --queries 2000 --ooc-rows 500000   # a smaller run

Three parts, each side by side in one process, written to
``benchmarks/results_vectors.md``:

1. ``irm.knn`` (cosine, float32, DataFrames with ``Array[Float32, d]`` columns) against
   faiss-cpu's exact ``IndexFlatIP`` on normalised vectors (normalising, adding and
   searching timed), with the same number of threads (``--threads``: OpenBLAS/OpenMP
   environment variables and ``faiss.omp_set_num_threads``); best of ``--repeats``;
   the share of (query, position) pairs with the same id where the scores around the
   position are distinct.
2. Out of core: the corpus written to Parquet, searched by its path
   (``irm.knn(queries, path, block_size=...)``, read with pyarrow) and as a LazyFrame
   (``irm.knn(queries, pl.scan_parquet(path), ...)``, read by polars), each in a child
   process that reports its peak anonymous memory beyond the queries, against the
   in-memory call on the same corpus, time per corpus row. Only this part:
   ``python benchmarks/vectors.py --parts ooc --out /tmp/ooc.md``.
3. ``neighbor_recall@100`` of a faiss ``IndexIVFFlat`` run (``--recall-queries`` ×
   100 rows) against the exact run, per query and as a mean, timed, and checked against
   ann-benchmarks' formula over numpy arrays.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def _threads(n: int) -> None:
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(n)


def _vm(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _child_out_of_core(args: argparse.Namespace) -> None:
    import numpy as np
    import polars as pl

    import polars_irmetrics as irm

    rng = np.random.default_rng(11)
    queries = pl.DataFrame(
        {
            "query_id": np.arange(args.ooc_queries),
            "embedding": rng.standard_normal((args.ooc_queries, args.dim)).astype(np.float32),
        }
    )
    # anonymous memory, sampled: RSS also counts the pages of the memory-mapped Parquet
    # file, which the kernel drops when memory is short
    before = _vm("RssAnon")
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _vm("RssAnon"))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start, cpu = time.perf_counter(), time.process_time()
    corpus = args.parquet if args.source == "path" else pl.scan_parquet(args.parquet)
    run = irm.knn(queries, corpus, k=args.k, block_size=args.block_size)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    done.set()
    sampler.join()
    beyond = max(peak[0], _vm("RssAnon")) - before
    hwm = _vm("VmHWM")
    result = {"seconds": seconds, "cpu": cpu, "beyond": beyond, "hwm": hwm, "rows": run.height}
    print(json.dumps(result))


def _best(repeats: int, fn: object) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--ooc-rows", type=int, default=2_000_000)
    parser.add_argument("--ooc-queries", type=int, default=1_000)
    parser.add_argument("--block-size", type=int, default=65_536)
    parser.add_argument(
        "--ooc-repeats", type=int, default=1, help="rounds of the out-of-core part (best of)"
    )
    parser.add_argument("--recall-queries", type=int, default=10_000)
    parser.add_argument("--recall-corpus", type=int, default=20_000)
    parser.add_argument("--data", default=str(BENCH_DIR / "data" / "vectors"))
    parser.add_argument("--out", default=str(BENCH_DIR / "results_vectors.md"))
    parser.add_argument(
        "--parts", default="knn,ooc,recall", help="which parts to run (comma-separated)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--parquet", default="", help=argparse.SUPPRESS)
    parser.add_argument("--source", default="path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    _threads(args.threads)
    if args.child:
        _child_out_of_core(args)
        return

    import faiss
    import numpy as np
    import polars as pl

    faiss.omp_set_num_threads(args.threads)
    lines = [
        f"# Vector search benchmark ({dt.date.today()})",
        "",
        f"Command: `python benchmarks/vectors.py {' '.join(sys.argv[1:])}`",
        f"Threads: {args.threads}; load average at start: {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores; faiss {faiss.__version__}, numpy {np.__version__}, "
        f"polars {pl.__version__}.",
        "",
    ]

    parts = set(args.parts.split(","))
    if "knn" in parts:
        lines += _knn_part(args)
    if "ooc" in parts:
        lines += _ooc_part(args)
    if "recall" in parts:
        lines += _recall_part(args)
    Path(args.out).write_text("\n".join(lines))


def _knn_part(args: argparse.Namespace) -> list[str]:
    import faiss
    import numpy as np
    import polars as pl

    import polars_irmetrics as irm

    # 1. knn against faiss IndexFlatIP
    rng = np.random.default_rng(0)
    corpus = rng.standard_normal((args.corpus, args.dim)).astype(np.float32)
    queries = rng.standard_normal((args.queries, args.dim)).astype(np.float32)
    docs = pl.DataFrame({"doc_id": np.arange(args.corpus), "embedding": corpus})
    topics = pl.DataFrame({"query_id": np.arange(args.queries), "embedding": queries})

    def ours() -> pl.DataFrame:
        return irm.knn(topics, docs, k=args.k, metric="cosine", block_size=args.block_size)

    def theirs() -> tuple[np.ndarray, np.ndarray]:
        c, q = corpus.copy(), queries.copy()
        faiss.normalize_L2(c)
        faiss.normalize_L2(q)
        index = faiss.IndexFlatIP(args.dim)
        index.add(c)
        return index.search(q, args.k)

    t_faiss, (f_scores, f_ids) = _best(args.repeats, theirs)  # type: ignore[misc]
    t_ours, run = _best(args.repeats, ours)
    assert isinstance(run, pl.DataFrame)
    o_ids = run["doc_id"].to_numpy().reshape(args.queries, args.k)
    o_scores = run["score"].to_numpy().reshape(args.queries, args.k)
    gaps = np.diff(f_scores, axis=1)
    distinct = np.ones_like(f_ids, dtype=bool)
    distinct[:, 1:] &= np.abs(gaps) > 1e-6
    distinct[:, :-1] &= np.abs(gaps) > 1e-6
    same = (o_ids == f_ids)[distinct].mean()
    lines = [
        f"## knn: {args.corpus:,} × {args.dim} corpus, {args.queries:,} queries, "
        f"float32, k={args.k}, cosine",
        "",
        "| contender | best time | ratio to faiss |",
        "|---|---|---|",
        f"| faiss-cpu IndexFlatIP (normalise + add + search) | {t_faiss:.2f} s | 1.00× |",
        f"| irm.knn (DataFrames, Array[Float32, {args.dim}]) | {t_ours:.2f} s | "
        f"{t_ours / t_faiss:.2f}× |",
        "",
        f"Identical ids at {same:.4%} of the positions whose score differs from its "
        f"neighbours' by more than 1e-6 ({distinct.mean():.2%} of all positions); largest "
        f"score difference {np.abs(o_scores - f_scores).max():.2e}.",
        "",
    ]
    print("\n".join(lines), flush=True)
    return lines


def _ooc_part(args: argparse.Namespace) -> list[str]:
    import numpy as np
    import polars as pl

    import polars_irmetrics as irm

    # 2. out of core from Parquet
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    path = data / f"corpus_{args.ooc_rows}_{args.dim}.parquet"
    if not path.exists():
        writer_rng = np.random.default_rng(1)
        parts = []
        chunk = 250_000
        for start in range(0, args.ooc_rows, chunk):
            n = min(chunk, args.ooc_rows - start)
            part = data / f"part_{start}.parquet"
            pl.DataFrame(
                {
                    "doc_id": np.arange(start, start + n),
                    "embedding": writer_rng.standard_normal((n, args.dim)).astype(np.float32),
                }
            ).write_parquet(part, row_group_size=50_000)
            parts.append(part)
        pl.scan_parquet(parts).sink_parquet(path, row_group_size=50_000)
        for part in parts:
            part.unlink()

    def child(source: str) -> dict[str, float]:
        argv = [sys.executable, __file__, *sys.argv[1:], "--child", "--parquet", str(path)]
        done = subprocess.run(
            [*argv, "--source", source],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]

    in_rng = np.random.default_rng(11)
    ooc_queries = pl.DataFrame(
        {
            "query_id": np.arange(args.ooc_queries),
            "embedding": in_rng.standard_normal((args.ooc_queries, args.dim)).astype(np.float32),
        }
    )
    whole = pl.read_parquet(path)
    # the three in turn, --ooc-repeats rounds, the best of each: a load that changes
    # during the run weighs on all three
    load = [os.getloadavg()[0]]
    by_path: dict[str, float] = {"seconds": float("inf")}
    by_scan: dict[str, float] = {"seconds": float("inf")}
    t_memory = cpu_memory = float("inf")
    for _ in range(args.ooc_repeats):
        by_path = min(by_path, child("path"), key=lambda result: result["seconds"])
        by_scan = min(by_scan, child("lazy"), key=lambda result: result["seconds"])
        start, cpu = time.perf_counter(), time.process_time()
        irm.knn(ooc_queries, whole, k=args.k, block_size=args.block_size)
        t_memory, cpu_memory = min(
            (t_memory, cpu_memory), (time.perf_counter() - start, time.process_time() - cpu)
        )
        load.append(os.getloadavg()[0])
    del whole
    per_row_mem = t_memory / args.ooc_rows * 1e6

    def row(name: str, ooc: dict[str, float]) -> str:
        per_row = ooc["seconds"] / args.ooc_rows * 1e6
        return (
            f"| {name} (child process) | {ooc['seconds']:.2f} s | {per_row:.2f} | "
            f"{per_row / per_row_mem:.2f}× | {ooc['cpu']:.2f} s ({ooc['cpu'] / cpu_memory:.2f}×) "
            f"| {ooc['beyond'] / 2**20:,.0f} MiB anonymous "
            f"(peak RSS with the mapped file's pages: {ooc['hwm'] / 2**30:.1f} GiB) |"
        )

    lines = [
        f"## Out of core: {args.ooc_rows:,} × {args.dim} corpus from Parquet, "
        f"{args.ooc_queries:,} queries, k={args.k}, block_size={args.block_size:,}",
        "",
        "| corpus | time | µs per corpus row | per row / in memory | CPU time (/ in memory) "
        "| peak memory beyond the queries (sampled every 20 ms) |",
        "|---|---|---|---|---|---|",
        row("irm.knn(queries, path): pyarrow", by_path),
        row("irm.knn(queries, pl.scan_parquet(path)): polars", by_scan),
        f"| irm.knn(queries, pl.read_parquet(path)) (corpus in memory) | {t_memory:.2f} s | "
        f"{per_row_mem:.2f} | 1.00× | {cpu_memory:.2f} s (1.00×) | (the corpus: "
        f"{args.ooc_rows * args.dim * 4 / 2**20:,.0f} MiB) |",
        "",
        f"Best of {args.ooc_repeats} round(s) of the three in turn (CPU time: of every "
        "thread of the process, in the fastest round). Load average (1 min) at "
        f"the start and after each round: {', '.join(f'{x:.1f}' for x in load)} on "
        f"{os.cpu_count()} cores.",
        "",
    ]
    print("\n".join(lines), flush=True)
    return lines


def _recall_part(args: argparse.Namespace) -> list[str]:
    import faiss
    import numpy as np
    import polars as pl

    import polars_irmetrics as irm

    # 3. neighbour recall of an IVF index
    r_rng = np.random.default_rng(2)
    dim = 64
    base = r_rng.standard_normal((args.recall_corpus, dim)).astype(np.float32)
    probe = r_rng.standard_normal((args.recall_queries, dim)).astype(np.float32)
    exact = irm.knn(probe, base, k=100, metric="l2")
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatL2(dim), dim, 64)
    ivf.train(base)
    ivf.add(base)
    ivf.nprobe = 4
    distances, ids = ivf.search(probe, 100)
    found = (ids >= 0).ravel()
    approx = pl.DataFrame(
        {
            "query_id": np.repeat(np.arange(args.recall_queries), 100)[found],
            "doc_id": ids.ravel()[found],
            "score": -np.sqrt(np.maximum(distances.ravel()[found], 0)).astype(np.float32),
            "rank": np.tile(np.arange(1, 101), args.recall_queries)[found],
        }
    )
    t_mean, means = _best(
        3, lambda: irm.evaluate(approx, ["neighbor_recall@100"], neighbors=exact)
    )
    t_per_query, per_query = _best(
        3,
        lambda: irm.evaluate(
            approx.lazy(), ["neighbor_recall@100"], neighbors=exact.lazy(), per_query=True
        ).collect(),
    )
    true_d = -exact["score"].to_numpy().reshape(args.recall_queries, 100).astype(np.float64)
    run_d = -np.where(ids >= 0, -np.sqrt(np.maximum(distances, 0)), -np.inf)
    threshold = true_d[:, 99:100] + 1e-3  # ann-benchmarks' knn_threshold
    reference = (run_d.astype(np.float32).astype(np.float64) <= threshold).sum(axis=1) / 100
    assert isinstance(per_query, pl.DataFrame)
    assert isinstance(means, pl.DataFrame)
    equal = np.array_equal(per_query["neighbor_recall@100"].to_numpy(), reference)
    lines = [
        f"## neighbor_recall@100: faiss IndexIVFFlat (nlist 64, nprobe 4) over "
        f"{args.recall_corpus:,} × {dim}, {approx.height:,} run rows",
        "",
        "| call | best of 3 |",
        "|---|---|",
        f"| irm.evaluate(approx, ['neighbor_recall@100'], neighbors=exact) (mean) | "
        f"{t_mean:.3f} s |",
        f"| the same, per query, from LazyFrames | {t_per_query:.3f} s |",
        "",
        f"Mean recall {means['neighbor_recall@100'].item():.4f}; per-query values equal "
        f"to ann-benchmarks' formula over the numpy arrays: {equal}.",
        "",
    ]
    print("\n".join(lines), flush=True)
    return lines


if __name__ == "__main__":
    main()
