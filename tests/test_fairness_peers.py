"""Expected exposure equal to expeval (diazf/expeval @ 69ab070) to 1e-9: the worked
examples and 150 seeded random cases of tests/fixtures/fairness/expeval.json, made by
make_expeval.py beside it (expeval has no package; its own modules compute the values).

A judged query the run lacks is compared with the library's own values (no exposure:
``ee_disparity = 0``, ``ee_relevance = 0``, ``ee_loss = Σ ε*²``), not with expeval's,
which prints bounds of its normalisation there (see test_fairness.py)."""

from __future__ import annotations

import functools
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


def _params(case: dict[str, Any]) -> tuple[str, float, bool]:
    return case["browsing"], case["patience"], case["groups"] is None


@functools.cache
def _alone(index: int) -> bool:
    """Whether case ``index``'s run retrieves no judged document: evaluated alone, as a
    whole run without one (its call warns of it), not beside the other cases."""
    tables = _tables(CASES[index])
    keys = ["query_id", "doc_id"]
    return tables["run"].join(tables["qrels"], on=keys, how="semi").height == 0


def _evaluate(tables: dict[str, Any], metrics: list[str], frame_kind: str) -> pl.DataFrame:
    run = tables["run"] if frame_kind == "DataFrame" else tables["run"].lazy()
    out = irm.evaluate(
        run, metrics, qrels=tables["qrels"], groups=tables["groups"], per_query=True
    )
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@functools.cache
def _batch(frame_kind: str, params: tuple[str, float, bool]) -> dict[Any, dict[str, Any]]:
    """Every case of these parameters in one call (one plan for up to 15 cases) but
    those evaluated alone (_alone): case ``i``'s query and document ids prefixed ``i|``,
    its group ids offset by ``1000 * i`` (no two cases share a query, a document or a
    group); each query's values, keyed ``(i, query_id)``. A case's queries read only
    its own rows."""
    stacked: dict[str, list[pl.DataFrame]] = {"run": [], "qrels": [], "groups": []}
    for index, case in enumerate(CASES):
        if _params(case) != params or _alone(index):
            continue
        prefix = f"{index}|"
        for name, table in _tables(case).items():
            if table is None:
                continue
            ids = [
                (pl.lit(prefix) + pl.col(c)).alias(c) for c in ("query_id", "doc_id") if c in table
            ]
            if name == "groups":
                ids.append(pl.col("group") + 1000 * index)
            stacked[name].append(table.with_columns(ids))
    browsing, patience, no_groups = params
    metrics = [f"{name}(browsing='{browsing}', patience={patience})" for name in NAMES]
    together = {
        "run": pl.concat(stacked["run"]),
        "qrels": pl.concat(stacked["qrels"]),
        "groups": None if no_groups else pl.concat(stacked["groups"]),
    }
    rows = _evaluate(together, metrics, frame_kind).to_dicts()
    return {tuple(row["query_id"].split("|", 1)): row for row in rows}


@pytest.mark.parametrize("index", range(len(CASES)))
def test_equal_to_expeval(index: int, frame_kind: str) -> None:
    case = CASES[index]
    tables = _tables(case)
    params = f"(browsing='{case['browsing']}', patience={case['patience']})"
    metrics = [name + params for name in NAMES]
    if _alone(index):
        got = _evaluate(tables, metrics, frame_kind).rows_by_key(
            "query_id", named=True, unique=True
        )
    else:  # the case's rows, evaluated with the other cases of its parameters (_batch)
        batch = _batch(frame_kind, _params(case))
        got = {q: row for (i, q), row in batch.items() if i == str(index)}
    ran = set(tables["run"]["query_id"])
    expected = {q: v for q, v in case["expected"].items() if q in ran}
    assert {q for q in got if q in ran} == set(expected)
    for query, values in expected.items():
        for name, metric in zip(NAMES, metrics, strict=True):
            # expeval's l2 is inf for a run that exposes no relevant document of any
            # group (its guard for a normalisation); the disparity of no exposure is 0
            want = 0.0 if values[name] == math.inf else values[name]
            assert got[query][metric] == pytest.approx(want, abs=1e-9, rel=1e-9)
