"""A judged table's ranked rows without a label: retrieved documents nobody judged.

``run.join(qrels, how="full")`` leaves a null relevance beside every retrieved,
unjudged document. The expressions read it as no judgment; ``irm.evaluate`` on the
same table refused it (suggesting ``.fill_null(0)``, which would judge them
non-relevant and change bpref and infAP). Now both equal ``irm.evaluate(run,
qrels=qrels)`` to the bit, with ``depth=`` and ``judged_only=`` too.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

METRICS = [
    "map", "ndcg", "P@5", "bpref", "infAP", "Rprec", "recip_rank", "num_ret", "num_rel",
    "num_rel_ret", "judged@5", "ndcg_cut_10", "success@1",
]  # fmt: skip
KEYS = ["query_id", "doc_id"]


def _tables(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(8):
        docs = rng.choice(40, int(rng.integers(1, 15)), replace=False)
        rows += [(f"q{q}", f"d{d}", r + 1, float(rng.integers(0, 4))) for r, d in enumerate(docs)]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "score"], orient="row")
    judged = [
        (f"q{q}", f"d{d}", int(rng.integers(-1, 3)))
        for q in range(9)
        for d in rng.choice(40, 10, replace=False)
    ]
    return run, pl.DataFrame(judged, schema=[*KEYS, "relevance"], orient="row")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"order": "score"},
        {"depth": 5},
        {"judged_only": True},
        {"judged_only": True, "depth": 4},
    ],
)
def test_a_full_join_equals_the_run_with_its_judgments(seed: int, options: dict) -> None:
    run, qrels = _tables(seed)
    # by score: ties broken by the id, as the run's; else the ranks alone (the random
    # scores contradict them: refused beside them)
    run = run.drop("rank" if options.get("order") == "score" else "score")
    judged = run.join(qrels, on=KEYS, how="full", coalesce=True)
    assert judged["relevance"].null_count() > 0  # retrieved documents nobody judged
    expected = irm.evaluate(run, METRICS, qrels=qrels, per_query=True, **options)
    got = irm.evaluate(judged, METRICS, per_query=True, **options)
    assert got.sort("query_id").equals(expected.sort("query_id"))
    lazy = irm.evaluate(judged.lazy(), METRICS, **options).collect()
    assert lazy.equals(irm.evaluate(run, METRICS, qrels=qrels, **options))


def test_a_worked_example_of_bpref() -> None:
    # q1: a (rel 1), x (retrieved, unjudged), b (rel 0), c (rel 1, not retrieved).
    # bpref = (1/R) sum over relevant retrieved r of (1 - |n ranked above r| / min(R, N))
    # with R = 2, N = 1: a has no judged non-relevant above it: 1/2 * (1 - 0) = 0.5.
    # x holds place 2 (P@2 = 1/2) and is not judged (judged@2 = 1/2).
    judged = pl.DataFrame(
        {
            "query_id": ["q1"] * 4,
            "doc_id": ["a", "x", "b", "c"],
            "rank": [1, 2, 3, None],
            "relevance": [1, None, 0, 1],
        }
    )
    out = irm.evaluate(judged, ["bpref", "P@2", "judged@2", "num_ret", "num_rel"])
    assert out.select("bpref", "P@2", "judged@2", "num_ret", "num_rel").row(0) == (
        0.5,
        0.5,
        0.5,
        3,
        2,
    )
    # .fill_null(0) would judge x non-relevant: judged@2 1.0, not 0.5
    filled = irm.evaluate(judged.with_columns(pl.col("relevance").fill_null(0)), ["judged@2"])
    assert filled["judged@2"][0] == 1.0


def test_a_query_nobody_judged_is_unjudged() -> None:
    judged = pl.DataFrame(
        {
            "query_id": ["q1", "q2", "q2"],
            "doc_id": ["a", "b", "c"],
            "rank": [1, 1, 2],
            "relevance": [1, None, None],
        }
    )
    assert irm.evaluate(judged, ["map"])["num_q"][0] == 1  # unjudged='drop'
    kept = irm.evaluate(judged, ["map"], unjudged="zero", per_query=True).sort("query_id")
    assert kept["map"].to_list() == [1.0, 0.0]


def test_a_row_with_neither_rank_nor_label_is_refused() -> None:
    judged = pl.DataFrame(
        {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "rank": [1, None], "relevance": [1, None]}
    )
    message = (
        "column 'relevance' of the judged table has 1 null value(s) in query 'q1'; every "
        "judged document needs a relevance label: fill them (e.g. .fill_null(0)) or drop them"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(judged, ["map"])
