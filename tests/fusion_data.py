"""Seeded random runs for the fusion tests: partial overlap, different score scales
and list lengths, no tied scores (ranx orders ties arbitrarily)."""

from __future__ import annotations

import numpy as np
import polars as pl

SCALES = ((0.0, 30.0), (-1.0, 1.0), (100.0, 101.0), (0.0, 1e-3), (-50.0, -10.0))


def random_runs(
    seed: int, n_runs: int = 3, n_queries: int = 6, pool: int = 40, query_sets: bool = False
) -> dict[str, pl.DataFrame]:
    """``n_runs`` runs over ``n_queries`` queries, each listing 1..30 documents of a pool
    of ``pool`` per query; with ``query_sets`` each run drops some queries."""
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        low, high = SCALES[r % len(SCALES)]
        rows: dict[str, list[object]] = {"query_id": [], "doc_id": [], "score": []}
        for q in range(n_queries):
            if query_sets and r > 0 and rng.random() < 0.3:
                continue
            size = int(rng.integers(1, min(30, pool) + 1))
            docs = rng.choice(pool, size=size, replace=False)
            scores = rng.uniform(low, high, size=size)
            rows["query_id"] += [f"q{q}"] * size
            rows["doc_id"] += [f"d{d}" for d in docs]
            rows["score"] += scores.tolist()
        runs[f"run{r}"] = pl.DataFrame(rows)
    return runs


def random_qrels(seed: int, n_queries: int = 6, pool: int = 40) -> pl.DataFrame:
    """Judgments: every query has at least one relevant document of the pool."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list[object]] = {"query_id": [], "doc_id": [], "relevance": []}
    for q in range(n_queries):
        docs = rng.choice(pool, size=int(rng.integers(3, 15)), replace=False)
        rel = rng.integers(0, 3, size=docs.size)
        rel[0] = max(rel[0], 1)
        rows["query_id"] += [f"q{q}"] * docs.size
        rows["doc_id"] += [f"d{d}" for d in docs]
        rows["relevance"] += rel.tolist()
    return pl.DataFrame(rows)


def to_ranx_run(frame: pl.DataFrame, name: str):  # type: ignore[no-untyped-def]
    from ranx import Run

    out: dict[str, dict[str, float]] = {}
    for q, d, s in frame.select("query_id", "doc_id", "score").iter_rows():
        out.setdefault(q, {})[d] = s
    return Run.from_dict(out, name=name)


def to_ranx_qrels(frame: pl.DataFrame):  # type: ignore[no-untyped-def]
    from ranx import Qrels

    out: dict[str, dict[str, int]] = {}
    for q, d, r in frame.select("query_id", "doc_id", "relevance").iter_rows():
        out.setdefault(q, {})[d] = int(r)
    return Qrels.from_dict(out)


def ranx_scores(run) -> dict[tuple[str, str], float]:  # type: ignore[no-untyped-def]
    return {(q, d): s for q, docs in run.run.items() for d, s in docs.items()}


def our_scores(frame: pl.DataFrame | pl.LazyFrame) -> dict[tuple[str, str], float]:
    data = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    return {(q, d): s for q, d, s in data.select("query_id", "doc_id", "score").iter_rows()}


def assert_same_scores(
    ours: dict[tuple[str, str], float], theirs: dict[tuple[str, str], float]
) -> None:
    assert ours.keys() == theirs.keys()
    worst = max(abs(ours[k] - theirs[k]) / max(1.0, abs(theirs[k])) for k in ours)
    assert worst <= 1e-9, worst
