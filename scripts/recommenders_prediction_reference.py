"""Write the reference values of Microsoft Recommenders' rating and AUC/log-loss metrics.

    python3 -m venv /tmp/recvenv && /tmp/recvenv/bin/pip install recommenders
    /tmp/recvenv/bin/python scripts/recommenders_prediction_reference.py   # -> tests/data/

As ``scripts/recommenders_reference.py`` does for the beyond-accuracy metrics:
``recommenders`` (1.2.1 when written) pins versions that would change the packages of
the project's environment, so it is not a test dependency. This script, run in a
throwaway virtual environment, draws random ``rating_true`` and ``rating_pred`` tables
(numpy ``default_rng(SEED)``; some (user, item) pairs on one side only, which
Recommenders' inner merge leaves out), computes
``recommenders.evaluation.python_evaluation``'s ``rmse``, ``mae``, ``rsquared``,
``exp_var`` (on ratings 1-5 and predicted ratings) and ``auc``, ``logloss`` (on 0/1
labels and predicted probabilities, ties included), and writes inputs and values to
``tests/data/recommenders_prediction.json``, which ``tests/test_prediction.py`` reads.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SEED = 20261126
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "recommenders_prediction.json"
RATING = ("rmse", "mae", "rsquared", "exp_var")
BINARY = ("auc", "logloss")


def _case(rng: np.random.Generator, users: int, items: int, binary: bool) -> dict[str, Any]:
    pairs = [(u, i) for u in range(users) for i in range(items) if rng.random() < 0.4]
    truth = [p for p in pairs if rng.random() < 0.9]  # a tenth with no label
    predicted = [p for p in pairs if rng.random() < 0.9]  # a tenth with no prediction
    if binary:
        labels = [int(rng.integers(0, 2)) for _ in truth]
        # probabilities on a grid of 0.05: ties, and 0 and 1 (log loss clips them)
        scores = [round(float(rng.integers(0, 21)) / 20, 2) for _ in predicted]
    else:
        labels = [int(rng.integers(1, 6)) for _ in truth]
        scores = [round(float(rng.uniform(0.5, 5.5)), 3) for _ in predicted]
    return {
        "binary": binary,
        "rating_true": {
            "userID": [u for u, _ in truth],
            "itemID": [i for _, i in truth],
            "rating": labels,
        },
        "rating_pred": {
            "userID": [u for u, _ in predicted],
            "itemID": [i for _, i in predicted],
            "prediction": scores,
        },
    }


def _values(case: dict[str, Any]) -> dict[str, float]:
    from recommenders.evaluation import python_evaluation as ev

    truth = pd.DataFrame(case["rating_true"])
    predicted = pd.DataFrame(case["rating_pred"])
    names = BINARY if case["binary"] else RATING
    return {name: float(getattr(ev, name)(truth, predicted)) for name in names}


def main() -> None:
    import recommenders
    import sklearn

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(SEED)
    cases = []
    for users, items, binary in ((8, 12, False), (30, 20, False), (10, 15, True), (40, 25, True)):
        case = _case(rng, users, items, binary)
        case["values"] = _values(case)
        cases.append(case)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "recommenders": recommenders.__version__,
        "scikit-learn": sklearn.__version__,
        "seed": SEED,
        "cases": cases,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
