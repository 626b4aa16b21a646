"""Write the interactions and item features that go with the bundled sample runs.

    python scripts/make_recsys_sample.py            # -> src/polars_irmetrics/data/
    python scripts/make_recsys_sample.py --out DIR

For the beyond-accuracy metrics (``irm.beyond_accuracy``) the sample's runs double as
recommendations: each query is a user, each document an item. Deterministic (numpy
``default_rng(SEED)``, no network): running it twice gives byte-identical files.

* ``history.parquet``: ``user_id``, ``item_id`` (String), one row per interaction.
  The 31 query ids of the runs are users with 20 past interactions each; 300
  background users (``b001``..``b300``) with 30 each, drawn with Zipf-like popularity;
  and every document of the runs has at least one interaction, so each recommended
  item has a popularity.
* ``item_features.parquet``: ``item_id`` (String), ``features`` (Array(Float32, 8)):
  every item of the runs and the interactions; an item's vector is the centre of one of
  12 topics plus noise, so lists of one topic are similar.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

SEED = 20261125
DATA = Path(__file__).resolve().parents[1] / "src" / "polars_irmetrics" / "data"
TOPICS, DIM = 12, 8


def make(data: Path = DATA, seed: int = SEED) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    runs = pl.concat(
        [pl.read_parquet(data / f"run_{name}.parquet") for name in ("bm25", "dense", "hybrid")]
    )
    items = np.array(sorted(runs["doc_id"].unique().to_list()))
    users = sorted(runs["query_id"].unique().to_list())
    weight = 1.0 / np.arange(1, len(items) + 1) ** 0.8
    weight = weight[rng.permutation(len(items))]
    weight /= weight.sum()
    rows: list[tuple[str, str]] = []
    for user in users:
        rows += [(user, str(i)) for i in rng.choice(items, 20, replace=False, p=weight)]
    background = [f"b{n:03d}" for n in range(1, 301)]
    for user in background:
        rows += [(user, str(i)) for i in rng.choice(items, 30, replace=False, p=weight)]
    seen = {item for _, item in rows}
    for item in items:
        if item not in seen:
            rows.append((background[int(rng.integers(len(background)))], str(item)))
    interactions = pl.DataFrame(rows, schema=["user_id", "item_id"], orient="row").unique(
        maintain_order=True
    )
    centres = rng.normal(size=(TOPICS, DIM))
    topic = rng.integers(TOPICS, size=len(items))
    vectors = (centres[topic] + 0.6 * rng.normal(size=(len(items), DIM))).astype(np.float32)
    features = pl.DataFrame({"item_id": items.tolist()}).with_columns(
        pl.Series("features", vectors, dtype=pl.Array(pl.Float32, DIM))
    )
    return {"history": interactions, "item_features": features}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args(argv)
    for name, frame in make().items():
        path = args.out / f"{name}.parquet"
        frame.write_parquet(path, compression="zstd", compression_level=9, statistics=True)
        print(f"{path}: {frame.height:,} rows, {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
