"""Rank similarity at scale: RBO of many queries against a reference run, vs ndcg@100.

A run of ``--queries`` queries x ``--depth`` documents (random float scores, so almost
no ties; ``--ties`` rounds them to one decimal, so tie groups of a few documents) and a
reference run that keeps about 70 % of each query's documents, re-scored with noise, are
built once in memory (not timed). Timed, best of ``--repeats``:

* ``irm.evaluate(run.lazy(), ["ndcg@100"], qrels=qrels).collect()`` (qrels: 20 judged
  documents per query, half of them from the run);
* ``irm.evaluate(run.lazy(), ["rbo@100"], reference=ref).collect()`` (ext, ties='a');
* the four kinds in one plan (``rbo(kind='ext'|'min'|'max'|'res')@100``);
* with ``--buckets N``, ``rbo@100`` out of core in N buckets (both tables written to
  Parquet by a hash of the query, each bucket one plan);
* the reference implementation (Corsi & Urbano's ``rbo.py``, ``--reference-rbo PATH``:
  ``git show HEAD:rbo/Python/rbo.py`` of julian-urbano/sigir2024-rbo) over a sample of
  ``--sample`` queries (rankings from ``extract_ranking``, built beforehand, not timed),
  extrapolated to all queries.

    python benchmarks/agreement.py --queries 100000 --depth 100 \
        --reference-rbo /path/to/rbo.py

Target (issue 41): rbo@100 within 3x ndcg@100, and faster than the reference.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import polars_irmetrics as irm


def best(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def build(queries: int, depth: int, ties: bool, seed: int) -> tuple[pl.DataFrame, ...]:
    rng = np.random.default_rng(seed)
    n = queries * depth
    qid = np.repeat(np.arange(queries, dtype=np.int64), depth)
    doc = rng.integers(0, 10 * depth, n, dtype=np.int64)
    run = (
        pl.DataFrame({"query_id": qid, "doc_id": doc, "score": rng.random(n)})
        .unique(["query_id", "doc_id"])
        .sort("query_id")
    )
    if ties:
        run = run.with_columns(pl.col("score").round(1))
    kept = run.filter(pl.Series(rng.random(run.height) < 0.7))
    fresh = pl.DataFrame(
        {
            "query_id": np.repeat(np.arange(queries, dtype=np.int64), depth // 3),
            "doc_id": rng.integers(10 * depth, 20 * depth, queries * (depth // 3)),
            "score": rng.random(queries * (depth // 3)),
        }
    )
    ref = (
        pl.concat([kept.with_columns(pl.col("score") + rng.normal(0, 0.2, kept.height)), fresh])
        .unique(["query_id", "doc_id"])
        .sort("query_id")
    )
    judged = pl.concat([run.group_by("query_id").head(10), ref.group_by("query_id").head(10)])
    qrels = judged.unique(["query_id", "doc_id"]).select(
        "query_id", "doc_id", pl.lit(1, dtype=pl.Int64).alias("relevance")
    )
    return run, ref, qrels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ties", action="store_true")
    parser.add_argument("--reference-rbo", default=None)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--buckets", type=int, default=None, help="also time rbo@depth out of core in N buckets"
    )
    args = parser.parse_args()
    run, ref, qrels = build(args.queries, args.depth, args.ties, args.seed)
    depth = args.depth
    lazy, lazy_ref = run.lazy(), ref.lazy()
    kinds = [f"rbo(kind='{k}')@{depth}" for k in ("ext", "min", "max", "res")]
    timings = {
        f"ndcg@{depth}": best(
            lambda: irm.evaluate(lazy, [f"ndcg@{depth}"], qrels=qrels).collect(), args.repeats
        ),
        f"rbo@{depth}": best(
            lambda: irm.evaluate(lazy, [f"rbo@{depth}"], reference=lazy_ref).collect(),
            args.repeats,
        ),
        "rbo, 4 kinds": best(
            lambda: irm.evaluate(lazy, kinds, reference=lazy_ref).collect(), args.repeats
        ),
    }
    if args.buckets:
        timings[f"rbo@{depth}, buckets={args.buckets}"] = best(
            lambda: irm.evaluate(
                lazy, [f"rbo@{depth}"], reference=lazy_ref, buckets=args.buckets
            ).collect(),
            args.repeats,
        )
    if args.reference_rbo:
        spec = importlib.util.spec_from_file_location("rbo_reference", args.reference_rbo)
        if spec is None or spec.loader is None:
            raise SystemExit(f"--reference-rbo {args.reference_rbo}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(np, "in1d"):  # removed in numpy 2; rbo.py's ext calls it
            np.in1d = np.isin  # type: ignore[attr-defined]
        sample = min(args.sample, args.queries)
        pairs = []
        for part, other in zip(
            run.filter(pl.col("query_id") < sample).partition_by("query_id", maintain_order=True),
            ref.filter(pl.col("query_id") < sample).partition_by("query_id", maintain_order=True),
            strict=True,
        ):
            top = part.sort("score", descending=True).head(depth)
            top_ref = other.sort("score", descending=True).head(depth)
            pairs.append(
                (
                    module.extract_ranking(
                        top["doc_id"].cast(pl.String).to_list(), top["score"].to_list()
                    ),
                    module.extract_ranking(
                        top_ref["doc_id"].cast(pl.String).to_list(), top_ref["score"].to_list()
                    ),
                )
            )

        def reference() -> None:
            for x, y in pairs:
                module.rbo(x, y, 0.9, ties="a", score=("ext",))

        timings["reference rbo.py (extrapolated)"] = best(reference, 1) * args.queries / sample
    print(
        f"queries={args.queries} depth={depth} rows={run.height} ref_rows={ref.height} "
        f"ties={args.ties} cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} "
        f"POLARS_MAX_THREADS={os.environ.get('POLARS_MAX_THREADS')}"
    )
    base = timings[f"ndcg@{depth}"]
    print("| what | seconds | vs ndcg |")
    print("|---|---:|---:|")
    for name, seconds in timings.items():
        print(f"| {name} | {seconds:.2f} | {seconds / base:.2f}x |")


if __name__ == "__main__":
    main()
