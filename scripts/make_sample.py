"""Write the small sample data bundled with polars_irmetrics.

    python scripts/make_sample.py            # -> src/polars_irmetrics/data/
    python scripts/make_sample.py --out DIR

Deterministic (numpy ``default_rng(SEED)``, no network): running it twice gives
byte-identical files.

* ``qrels.parquet``: ``query_id``, ``doc_id`` (String), ``relevance`` (Int64, 0..3);
  30 queries ``q001``..``q030``, 15..25 judged documents each.
* ``run_bm25.parquet``, ``run_dense.parquet``, ``run_hybrid.parquet``: ``query_id``,
  ``doc_id`` (String), ``score`` (Float64), 100 documents per query.

Each query has a pool of 400 candidate documents, 15..25 of them judged. A system
scores every candidate as ``boost * relevance + noise`` (unjudged candidates count as
relevance 0), maps that to its own score scale, and keeps the top 100. The boost
sets the quality: bm25 < dense < hybrid.

Edge cases, on purpose:

* ``run_bm25``: a few tied scores (5 pairs in ``q003``, ``q011``, ``q024``; in
  ``q011`` ranks 1-2 and in ``q024`` ranks 9-10 pair a relevant with an unjudged
  document, so trec_eval's tie-break (higher ``doc_id`` first) changes the metrics);
* ``run_dense``: query ``q017`` is missing (retrieved nothing);
* ``run_hybrid``: an extra query ``q031`` that has no judgments.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

SEED = 20240611
N_QUERIES = 30
CORPUS = 20_000
POOL = 400
DEPTH = 100
GRADE_P = (0.45, 0.30, 0.15, 0.10)  # P(relevance = 0, 1, 2, 3) of a judged doc

# name -> (boost, noise sd, scale, offset, decimals)
SYSTEMS: dict[str, tuple[float, float, float, float, int]] = {
    "bm25": (0.7, 1.0, 2.5, 12.0, 5),
    "dense": (1.1, 1.0, 0.04, 0.55, 8),
    "hybrid": (1.6, 1.0, 0.01, 0.05, 8),
}
MISSING = ("dense", "q017")
UNJUDGED = ("hybrid", "q031")
TIES = ("bm25", {"q003": [4, 20], "q011": [1, 57], "q024": [9]})  # rank k ties with k+1

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "polars_irmetrics" / "data"


def _qid(i: int) -> str:
    return f"q{i + 1:03d}"


def make(seed: int = SEED) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    n_q = N_QUERIES + 1  # the last query is only retrieved (no judgments)
    pools = [rng.choice(CORPUS, POOL, replace=False) for _ in range(n_q)]
    n_judged = rng.integers(15, 26, n_q)
    grades = [np.zeros(POOL, np.int64) for _ in range(n_q)]
    for i in range(N_QUERIES):
        g = rng.choice(4, n_judged[i], p=GRADE_P)
        if g.max() == 0:  # every judged query has at least one relevant document
            g[rng.integers(n_judged[i])] = 1 + rng.integers(3)
        grades[i][: n_judged[i]] = g

    qrels = pl.DataFrame(
        {
            "query_id": [_qid(i) for i in range(N_QUERIES) for _ in range(n_judged[i])],
            "doc_id": [f"d{d:05d}" for i in range(N_QUERIES) for d in pools[i][: n_judged[i]]],
            "relevance": np.concatenate([grades[i][: n_judged[i]] for i in range(N_QUERIES)]),
        },
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
    ).sort("query_id", "doc_id")

    out = {"qrels": qrels}
    for name, (boost, sd, scale, offset, decimals) in SYSTEMS.items():
        q_col: list[str] = []
        d_col: list[str] = []
        s_col: list[float] = []
        for i in range(n_q):
            latent = boost * grades[i] + rng.normal(0.0, sd, POOL)
            qid = _qid(i)
            if (name, qid) == MISSING or (i == N_QUERIES and name != UNJUDGED[0]):
                continue
            top = np.argsort(-latent, kind="stable")[:DEPTH]
            score = np.round(offset + scale * latent[top], decimals)
            if name == TIES[0] and qid in TIES[1]:
                for k in TIES[1][qid]:
                    score[k] = score[k - 1]  # rank k+1 gets rank k's score
            q_col += [qid] * DEPTH
            d_col += [f"d{d:05d}" for d in pools[i][top]]
            s_col += score.tolist()
        out[f"run_{name}"] = pl.DataFrame(
            {"query_id": q_col, "doc_id": d_col, "score": s_col},
            schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64},
        )
    _check(out)
    return out


def _check(frames: dict[str, pl.DataFrame]) -> None:
    for name, df in frames.items():
        assert df.select(pl.struct("query_id", "doc_id").is_unique().all()).item(), name
        if name.startswith("run_"):
            ties = df.select(pl.struct("query_id", "score").is_duplicated().sum()).item()
            n_ties = sum(map(len, TIES[1].values())) if name == f"run_{TIES[0]}" else 0
            assert ties == 2 * n_ties, (name, ties)


def write(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, df in make().items():
        path = out / f"{name}.parquet"
        df.write_parquet(path, compression="zstd", compression_level=9, statistics=True)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = p.parse_args(argv)
    for path in write(args.out):
        print(f"{path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
