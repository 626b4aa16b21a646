"""Expected exposure equal to expeval (diazf/expeval @ 69ab070) to 1e-9: the worked
examples and 150 seeded random cases of tests/fixtures/fairness/expeval.json, made by
make_expeval.py beside it (expeval has no package; its own modules compute the values).

A judged query the run lacks is compared with the library's own values (no exposure:
``ee_disparity = 0``, ``ee_relevance = 0``, ``ee_loss = Σ ε*²``), not with expeval's,
which prints bounds of its normalisation there (see test_fairness.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

CASES = json.loads((Path(__file__).parent / "fixtures/fairness/expeval.json").read_text())
NAMES = ("ee_loss", "ee_disparity", "ee_relevance")


def _tables(case: dict[str, Any]) -> dict[str, Any]:
    run = pl.DataFrame(
        case["run"],
        schema={"query_id": pl.String, "sample": pl.Int64, "doc_id": pl.String, "rank": pl.Int64},
        orient="row",
    )
    qrels = pl.DataFrame(
        case["qrels"],
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
        orient="row",
    )
    groups = None
    if case["groups"] is not None:
        groups = pl.DataFrame(
            [(d, g) for d, gs in case["groups"].items() for g in gs],
            schema={"doc_id": pl.String, "group": pl.Int64},
            orient="row",
        )
    return {"run": run, "qrels": qrels, "groups": groups}


@pytest.mark.parametrize("index", range(len(CASES)))
def test_equal_to_expeval(index: int, frame_kind: str) -> None:
    case = CASES[index]
    tables = _tables(case)
    params = f"(browsing='{case['browsing']}', patience={case['patience']})"
    metrics = [name + params for name in NAMES]
    run = tables["run"] if frame_kind == "DataFrame" else tables["run"].lazy()
    out = irm.evaluate(
        run, metrics, qrels=tables["qrels"], groups=tables["groups"], per_query=True
    )
    got = (out.collect() if isinstance(out, pl.LazyFrame) else out).rows_by_key(
        "query_id", named=True, unique=True
    )
    ran = set(tables["run"]["query_id"])
    expected = {q: v for q, v in case["expected"].items() if q in ran}
    assert {q for q in got if q in ran} == set(expected)
    for query, values in expected.items():
        for name, metric in zip(NAMES, metrics, strict=True):
            # expeval's l2 is inf for a run that exposes no relevant document of any
            # group (its guard for a normalisation); the disparity of no exposure is 0
            want = 0.0 if values[name] == math.inf else values[name]
            assert got[query][metric] == pytest.approx(want, abs=1e-9, rel=1e-9)
