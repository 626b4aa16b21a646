"""Write the reference values of Microsoft Recommenders' beyond-accuracy metrics.

    python3 -m venv /tmp/recvenv && /tmp/recvenv/bin/pip install recommenders
    /tmp/recvenv/bin/python scripts/recommenders_reference.py   # -> tests/data/

``recommenders`` (1.2.1 when written) pins versions that would change the packages of
the project's environment, so it is not a test dependency: this script, run in a
throwaway virtual environment, draws random inputs (numpy ``default_rng(SEED)``),
computes ``recommenders.evaluation.python_evaluation``'s values on them, and writes
inputs and values to ``tests/data/recsys_reference.json``, which
``tests/test_recsys.py`` reads. Each case is also evaluated on its recommendations cut
to rank <= 3 (the value of ``metric@3``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SEED = 20261125
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "recsys_reference.json"


def _case(rng: np.random.Generator, users: int, items: int, dim: int) -> dict[str, Any]:
    train: list[tuple[int, int]] = []
    reco: list[tuple[int, int, int, float]] = []
    popularity = rng.dirichlet(np.full(items, 0.3))  # a long tail
    history = {}
    for user in range(users):
        seen = rng.choice(items, size=int(rng.integers(1, 8)), replace=False, p=popularity)
        history[user] = seen
        train += [(user, int(i)) for i in seen]
    # Only catalogue items (those of the interactions) are recommended: an item the
    # interactions lack counts 0 novelty and pushes coverage past 1 in recommenders,
    # and is an error in polars_irmetrics.
    catalogue = np.unique([i for _, i in train])
    for user in range(users):
        unseen = np.setdiff1d(catalogue, history[user])
        # user 0 gets a one-item list: its diversity is undefined
        size = 1 if user == 0 else int(rng.integers(2, 7))
        picked = rng.choice(unseen, size=min(size, len(unseen)), replace=False)
        reco += [
            (user, int(i), r + 1, round(float(rng.random()), 3)) for r, i in enumerate(picked)
        ]
    relevance = [int(rng.integers(0, 2)) for _ in reco]
    features = rng.normal(size=(items, dim)).round(3)
    return {
        "interactions": {"user_id": [u for u, _ in train], "item_id": [i for _, i in train]},
        "recommendations": {
            "user_id": [u for u, _, _, _ in reco],
            "item_id": [i for _, i, _, _ in reco],
            "rank": [r for _, _, r, _ in reco],
            "relevance": relevance,
        },
        "item_features": {"item_id": list(range(items)), "features": features.tolist()},
    }


def _values(case: dict[str, Any], cutoff: int | None) -> dict[str, Any]:
    from recommenders.evaluation import python_evaluation as ev

    train = pd.DataFrame(case["interactions"])
    reco = pd.DataFrame(case["recommendations"])
    if cutoff is not None:
        reco = reco[reco["rank"] <= cutoff].reset_index(drop=True)
    feats = pd.DataFrame(
        {
            "item_id": case["item_features"]["item_id"],
            "features": [np.array(v) for v in case["item_features"]["features"]],
        }
    )
    cols = {"col_user": "user_id", "col_item": "item_id"}
    sim = {"item_feature_df": feats, "item_sim_measure": "item_feature_vector", **cols}
    pairs = reco[["user_id", "item_id"]]
    weighted = reco[["user_id", "item_id", "relevance"]]
    item_novelty = ev.historical_item_novelty(train, pairs, **cols)
    user_diversity = ev.user_diversity(train, pairs, **sim)
    return {
        "catalog_coverage": float(ev.catalog_coverage(train, pairs, **cols)),
        "distributional_coverage": float(ev.distributional_coverage(train, pairs, **cols)),
        "novelty": float(ev.novelty(train, pairs, **cols)),
        "diversity": float(ev.diversity(train, pairs, **sim)),
        "serendipity": float(ev.serendipity(train, pairs, **sim)),
        "serendipity_relevance": float(
            ev.serendipity(train, weighted, col_relevance="relevance", **sim)
        ),
        "historical_item_novelty": {
            str(i): float(v)
            for i, v in zip(item_novelty["item_id"], item_novelty["item_novelty"], strict=True)
        },
        "user_diversity": {
            str(u): float(v)
            for u, v in zip(
                user_diversity["user_id"], user_diversity["user_diversity"], strict=True
            )
        },
    }


def main() -> None:
    import recommenders

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(SEED)
    cases = []
    for users, items, dim in ((12, 15, 4), (40, 60, 8), (25, 10, 3)):
        case = _case(rng, users, items, dim)
        case["values"] = _values(case, None)
        case["values@3"] = _values(case, 3)
        cases.append(case)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    document = {"recommenders": recommenders.__version__, "seed": SEED, "cases": cases}
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
