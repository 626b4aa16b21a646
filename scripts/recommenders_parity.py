"""Write Microsoft Recommenders' values for the parity tests of issue 29 and 28.

    python3 -m venv /tmp/recvenv
    /tmp/recvenv/bin/pip install "pandas<3" "numpy<2" scikit-learn
    /tmp/recvenv/bin/pip install --no-deps recommenders==1.2.1
    /tmp/recvenv/bin/python scripts/recommenders_parity.py   # -> tests/data/

``recommenders.evaluation.python_evaluation`` imports only pandas, numpy and
scikit-learn, so ``--no-deps`` keeps the throwaway environment small (the package's
own requirements pin numpy < 2 and pull in transformers, lightgbm, notebook, ...:
it is not a test dependency of this project). pandas 3 breaks their ``novelty``
(``Series[0]`` on a labelled index), hence ``pandas<3``.

Three groups of random inputs (numpy ``default_rng(SEED)``), written with their values
to ``tests/data/recommenders_parity.json``, which ``tests/test_recommenders_parity.py``
reads:

* ``ranking``: ``rating_true`` / ``rating_pred`` with distinct predictions per user,
  some users only in one of the two tables, and users without a hit; the values of
  ``precision_at_k``, ``recall_at_k``, ``r_precision_at_k``, ``ndcg_at_k`` (three
  ``score_type``), ``map`` and ``map_at_k``, with ``relevancy_method='top_k'`` and
  ``'by_threshold'``.
* ``cooccurrence``: ``diversity``, ``user_diversity``, ``serendipity`` and
  ``user_serendipity`` with ``item_sim_measure='item_cooccurrence_count'`` (their
  default), on interactions without repeated (user, item) rows (their assumption).
* ``cold``: recommendations that name items the interactions never saw, items without a
  feature vector (in the recommendations and in histories) and users without history:
  ``novelty``, ``catalog_coverage``, ``distributional_coverage``, and ``diversity`` /
  ``serendipity`` with both similarity measures (Recommenders' own convention for
  them, ``unseen_items='recommenders'`` in polars_irmetrics).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SEED = 20261126
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "recommenders_parity.json"
COLS = {"col_user": "user_id", "col_item": "item_id"}


def _ranking_case(rng: np.random.Generator, users: int, items: int) -> dict[str, Any]:
    truth: list[tuple[int, int, int]] = []
    pred: list[tuple[int, int, float]] = []
    for user in range(users):
        # the last user has judgments only, the one before predictions only
        if user != users - 2:
            liked = rng.choice(items, size=int(rng.integers(1, 7)), replace=False)
            truth += [(user, int(i), int(rng.integers(1, 6))) for i in liked]
        if user != users - 1:
            listed = rng.choice(items, size=min(items, int(rng.integers(1, 12))), replace=False)
            scores = rng.permutation(len(listed)) / len(listed) + 0.01  # distinct
            pred += [(user, int(i), float(s)) for i, s in zip(listed, scores, strict=True)]
    return {
        "rating_true": {
            "user_id": [u for u, _, _ in truth],
            "item_id": [i for _, i, _ in truth],
            "rating": [r for _, _, r in truth],
        },
        "rating_pred": {
            "user_id": [u for u, _, _ in pred],
            "item_id": [i for _, i, _ in pred],
            "prediction": [p for _, _, p in pred],
        },
    }


def _ranking_values(case: dict[str, Any]) -> list[dict[str, Any]]:
    from recommenders.evaluation import python_evaluation as ev

    true = pd.DataFrame(case["rating_true"])
    pred = pd.DataFrame(case["rating_pred"])
    kw = {**COLS, "col_rating": "rating", "col_prediction": "prediction"}
    out = []
    for k, method, threshold in ((1, "top_k", 10), (3, "top_k", 10), (5, "top_k", 10),
                                 (3, "by_threshold", 2), (3, "by_threshold", 5)):  # fmt: skip
        args = {**kw, "k": k, "relevancy_method": method, "threshold": threshold}
        values: dict[str, Any] = {"k": k, "relevancy_method": method, "threshold": threshold}
        for name in ("precision_at_k", "recall_at_k", "r_precision_at_k", "map", "map_at_k"):
            values[name] = float(getattr(ev, name)(true, pred, **args))
        for score_type in ("binary", "raw", "exp"):
            values[f"ndcg_at_k_{score_type}"] = float(
                ev.ndcg_at_k(true, pred, score_type=score_type, **args)
            )
        out.append(values)
    return out


def _beyond_case(
    rng: np.random.Generator, users: int, items: int, dim: int, cold: bool
) -> dict[str, Any]:
    train: list[tuple[int, int]] = []
    reco: list[tuple[int, int]] = []
    popularity = rng.dirichlet(np.full(items, 0.5))
    history: dict[int, np.ndarray] = {}
    # cold: the last 3 users have no history, the last 4 item ids never occur in the
    # interactions, and every fifth item has no feature vector
    warm_items = items - 4 if cold else items
    weights = popularity[:warm_items] / popularity[:warm_items].sum()
    for user in range(users):
        if cold and user >= users - 3:
            history[user] = np.array([], dtype=int)
            continue
        seen = rng.choice(warm_items, size=int(rng.integers(1, 8)), replace=False, p=weights)
        history[user] = seen
        train += [(user, int(i)) for i in seen]
    # without cold: only catalogue items (those of the interactions) are recommended
    catalogue = np.arange(items) if cold else np.unique([i for _, i in train])
    for user in range(users):
        unseen = np.setdiff1d(catalogue, history[user])
        size = 1 if user == 0 else int(rng.integers(2, 7))
        picked = rng.choice(unseen, size=min(size, len(unseen)), replace=False)
        reco += [(user, int(i)) for i in picked]
    with_features = [i for i in range(items) if not (cold and i % 5 == 4)]
    features = rng.normal(size=(len(with_features), dim)).round(3)
    return {
        "interactions": {"user_id": [u for u, _ in train], "item_id": [i for _, i in train]},
        "recommendations": {"user_id": [u for u, _ in reco], "item_id": [i for _, i in reco]},
        "item_features": {"item_id": with_features, "features": features.tolist()},
    }


def _beyond_values(case: dict[str, Any], measures: tuple[str, ...]) -> dict[str, Any]:
    from recommenders.evaluation import python_evaluation as ev

    train = pd.DataFrame(case["interactions"])
    reco = pd.DataFrame(case["recommendations"])
    feats = pd.DataFrame(
        {
            "item_id": case["item_features"]["item_id"],
            "features": [np.array(v) for v in case["item_features"]["features"]],
        }
    )
    values: dict[str, Any] = {
        "novelty": float(ev.novelty(train, reco, **COLS)),
        "catalog_coverage": float(ev.catalog_coverage(train, reco, **COLS)),
        "distributional_coverage": float(ev.distributional_coverage(train, reco, **COLS)),
    }
    for measure in measures:
        sim = {"item_sim_measure": measure, "item_feature_df": feats, **COLS}
        values[f"diversity_{measure}"] = float(ev.diversity(train, reco, **sim))
        values[f"serendipity_{measure}"] = float(ev.serendipity(train, reco, **sim))
        per_user = ev.user_diversity(train, reco, **sim)
        values[f"user_diversity_{measure}"] = {
            str(u): float(v)
            for u, v in zip(per_user["user_id"], per_user["user_diversity"], strict=True)
        }
        per_user = ev.user_serendipity(train, reco, **sim)
        values[f"user_serendipity_{measure}"] = {
            str(u): float(v)
            for u, v in zip(per_user["user_id"], per_user["user_serendipity"], strict=True)
        }
    return values


def main() -> None:
    import recommenders

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(SEED)
    ranking = []
    for users, items in ((8, 12), (30, 40), (15, 8)):
        case = _ranking_case(rng, users, items)
        case["values"] = _ranking_values(case)
        ranking.append(case)
    cooccurrence = []
    for users, items in ((12, 15), (40, 60), (25, 10)):
        case = _beyond_case(rng, users, items, 4, cold=False)
        case["values"] = _beyond_values(case, ("item_cooccurrence_count",))
        cooccurrence.append(case)
    cold = []
    for users, items in ((12, 15), (30, 25)):
        case = _beyond_case(rng, users, items, 4, cold=True)
        measures = ("item_cooccurrence_count", "item_feature_vector")
        case["values"] = _beyond_values(case, measures)
        cold.append(case)
    document = {
        "recommenders": recommenders.__version__,
        "pandas": pd.__version__,
        "seed": SEED,
        "ranking": ranking,
        "cooccurrence": cooccurrence,
        "cold": cold,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
