"""AWRF and awrf_ndcg (TREC Fair 2022, task 1) through the one door: equal to wptrec
(fair-trec/trec2022-fair-public @ 227e284, ``wptrec/metrics/awrf.py``) on the 120
seeded cases of tests/fixtures/fairness/awrf.json (made by make_awrf.py beside it, which
runs wptrec's own AWRFMetric in a side venv) to 1e-6: wptrec computes its discounts and
gains in float32, the library in float64. Then worked examples as float64 arithmetic,
the refusals of target= and the CLI's --target."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)

from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]
CASES = json.loads((ROOT / "tests/fixtures/fairness/awrf.json").read_text())
#: wptrec's float32 discounts against the library's float64: the largest difference
#: seen on the fixtures is about 1e-7; 1e-6 is the bound asserted.
FLOAT32 = 1e-6
NAMES = ["awrf", "awrf_ndcg"]

RUN = pl.DataFrame(
    {"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]}
)
QRELS = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "c"], "relevance": [1, 1]})
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d", "d"], "group": ["x", "x", "y", "x", "y"]})
HALF = pl.DataFrame({"group": ["x", "y"], "target": [0.5, 0.5]})


def _evaluate(frame_kind: str, run: pl.DataFrame, metrics: list[str], **kw: Any) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kw.items()}
        out = irm.evaluate(run.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(run, metrics, **kw)
    assert isinstance(result, pl.DataFrame)
    return result


def _jsd(p: list[float], q: list[float]) -> float:
    """scipy's jensenshannon squared (natural log), written out."""
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    left = sum(a * math.log(a / c) for a, c in zip(p, m, strict=True) if a > 0)
    right = sum(b * math.log(b / c) for b, c in zip(q, m, strict=True) if b > 0)
    return (left + right) / 2


def _w(rank: int) -> float:
    return 1 / math.log2(max(rank, 2))


@pytest.mark.parametrize("index", range(len(CASES)))
def test_equal_to_wptrec(index: int, frame_kind: str) -> None:
    case = CASES[index]
    run = pl.DataFrame(
        case["run"],
        schema={"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64},
        orient="row",
    )
    qrels = pl.DataFrame(
        case["qrels"], schema={"query_id": pl.String, "doc_id": pl.String}, orient="row"
    ).with_columns(relevance=pl.lit(1))
    groups = pl.DataFrame(
        case["groups"], schema={"doc_id": pl.String, "group": pl.String}, orient="row"
    )
    kw: dict[str, Any] = {"qrels": qrels, "groups": groups, "per_query": True}
    if case["target"] is not None:
        kw["target"] = pl.DataFrame(
            case["target"], schema={"group": pl.String, "target": pl.Float64}, orient="row"
        )
    out = _evaluate(frame_kind, run, NAMES, **kw).rows_by_key("query_id", unique=True)
    assert set(out) == set(case["expected"])
    for query, (_ndcg, awrf, score) in case["expected"].items():
        got = out[query]
        if math.isnan(awrf):  # a ranking with no document in any group
            assert math.isnan(got[0])
            assert math.isnan(got[1])
            continue
        assert got == pytest.approx((awrf, score), abs=FLOAT32, rel=0)


def test_worked_example_with_a_target(frame_kind: str) -> None:
    # weights 1, 1, 1/log2(3), 1/2 (ranks 1-4); a, b in x, c in y, d half in each
    total = 1 + 1 + _w(3) + 0.5
    p = [(1 + 1 + 0.25) / total, (_w(3) + 0.25) / total]
    awrf = 1 - _jsd(p, [0.5, 0.5])
    # nDCG: a (rank 1) and c (rank 3) relevant, the ideal over 2: 1 + 1
    ndcg = (1 + _w(3)) / 2
    out = _evaluate(frame_kind, RUN, NAMES, qrels=QRELS, groups=GROUPS, target=HALF)
    assert out.row(0) == pytest.approx((1, awrf, awrf * ndcg), abs=1e-12)


def test_default_target_is_the_relevant_documents_groups(frame_kind: str) -> None:
    # relevant a (x) and d (half x, half y): target x 1.5/2, y 0.5/2
    qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "d"], "relevance": [2, 1]})
    total = 1 + 1 + _w(3) + 0.5
    p = [(1 + 1 + 0.25) / total, (_w(3) + 0.25) / total]
    want = 1 - _jsd(p, [0.75, 0.25])
    out = _evaluate(frame_kind, RUN, ["awrf"], qrels=qrels, groups=GROUPS, per_query=True)
    assert out["awrf"].to_list() == pytest.approx([want], abs=1e-12)


def test_unknown_documents_and_absent_groups(frame_kind: str) -> None:
    # b has no group: left out with its weight; the target's group z is never exposed
    groups = pl.DataFrame({"doc_id": ["a", "c", "d"], "group": ["x", "y", "y"]})
    target = pl.DataFrame({"group": ["x", "y", "z"], "target": [0.25, 0.25, 0.5]})
    total = 1 + _w(3) + 0.5
    p = [1 / total, (_w(3) + 0.5) / total, 0.0]
    want = 1 - _jsd(p, [0.25, 0.25, 0.5])
    out = _evaluate(frame_kind, RUN, ["awrf"], qrels=QRELS, groups=groups, target=target)
    assert out["awrf"].to_list() == pytest.approx([want], abs=1e-12)


def test_a_ranking_with_no_grouped_document_is_nan_as_in_wptrec(frame_kind: str) -> None:
    groups = pl.DataFrame({"doc_id": ["z"], "group": ["x"]})
    out = _evaluate(frame_kind, RUN, NAMES, qrels=QRELS, groups=groups, target=HALF)
    assert math.isnan(out["awrf"][0])
    assert math.isnan(out["awrf_ndcg"][0])


def test_sampled_rankings_are_averaged(frame_kind: str) -> None:
    # sample 1: a, c (x then y); sample 2: c, a — both weights 1, so both are 0.5/0.5
    # against target x 0.8, y 0.2; nDCG 1 in each
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 4,
            "sample": [1, 1, 2, 2],
            "doc_id": ["a", "c", "c", "a"],
            "rank": [1, 2, 1, 2],
        }
    )
    target = pl.DataFrame({"group": ["x", "y"], "target": [0.8, 0.2]})
    want = 1 - _jsd([0.5, 0.5], [0.8, 0.2])
    out = _evaluate(frame_kind, run, NAMES, qrels=QRELS, groups=GROUPS, target=target)
    assert out.row(0) == pytest.approx((1, want, want), abs=1e-12)


def test_a_perfect_ranking_scores_one(frame_kind: str) -> None:
    run = RUN.filter(pl.col("doc_id").is_in(["a", "c"]))
    out = _evaluate(frame_kind, run, NAMES, qrels=QRELS, groups=GROUPS, target=HALF)
    assert out.row(0) == pytest.approx((1, 1.0, 1.0), abs=1e-12)


def test_integer_groups_match_a_string_free_target(frame_kind: str) -> None:
    groups = GROUPS.with_columns(pl.col("group").replace_strict({"x": 1, "y": 2}))
    target = pl.DataFrame({"group": [1, 2], "target": [0.5, 0.5]})
    want = _evaluate(frame_kind, RUN, ["awrf"], qrels=QRELS, groups=GROUPS, target=HALF)
    out = _evaluate(frame_kind, RUN, ["awrf"], qrels=QRELS, groups=groups, target=target)
    assert out["awrf"].to_list() == pytest.approx(want["awrf"].to_list(), abs=1e-15)


BAD_TARGETS = [
    (
        {"group": ["x", "y"], "target": [0.5, 0.6]},
        InvalidValueError,
        "the target (target=) sums to 1.1 in column 'target'; a target is a distribution "
        "over groups: divide each value by the sum so they sum to 1",
    ),
    (
        {"group": ["x", "y"], "target": [-0.5, 1.5]},
        InvalidValueError,
        "the target (target=) gives group 'x' a negative, null or NaN value in column "
        "'target'; a target is a distribution over groups: give every group a value >= 0",
    ),
    (
        {"group": ["x", "x"], "target": [0.5, 0.5]},
        DuplicateError,
        "the target (target=) lists group 'x' twice in column 'group'; one row per group: "
        "drop or add up the duplicates",
    ),
    (
        {"group": ["x", "y"], "share": [0.5, 0.5]},
        ColumnNotFoundError,
        "column 'target' not found in the target (its columns: 'group', 'share'); one row "
        "per group",
    ),
    (
        {"group": ["x", "y"], "target": ["0.5", "0.5"]},
        ColumnTypeError,
        "column 'target' in the target has dtype String; it must be numeric",
    ),
]


@pytest.mark.parametrize(("target", "error", "message"), BAD_TARGETS)
def test_bad_targets_are_refused(
    target: dict[str, list[Any]], error: type[Exception], message: str, frame_kind: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        _evaluate(
            frame_kind, RUN, ["awrf"], qrels=QRELS, groups=GROUPS, target=pl.DataFrame(target)
        )


REFUSALS = [
    (
        ["ee_loss"],
        {"groups": GROUPS, "target": HALF},
        "target= holds the target group distribution awrf and awrf_ndcg read, and no metric "
        "asked for reads it: drop target=, or ask for awrf or awrf_ndcg",
    ),
    (
        ["ndcg"],
        {"target": HALF},
        "target= holds the target group distribution awrf and awrf_ndcg read, and no metric "
        "asked for reads it: drop target=, or ask for awrf or awrf_ndcg",
    ),
    (
        ["awrf_ndcg"],
        {},
        "metric 'awrf_ndcg' reads document groups: pass groups=... (one row per (document, "
        "group)) to irm.evaluate",
    ),
]


@pytest.mark.parametrize(("metrics", "kw", "message"), REFUSALS)
def test_target_and_groups_refusals(
    metrics: list[str], kw: dict[str, Any], message: str, frame_kind: str
) -> None:
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        _evaluate(frame_kind, RUN, metrics, qrels=QRELS, **kw)


def test_a_ranking_longer_than_wptrec_scores_is_refused(frame_kind: str) -> None:
    run = pl.DataFrame(
        {"query_id": ["q"] * 501, "doc_id": [f"d{i}" for i in range(501)], "rank": range(1, 502)}
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["d0"], "relevance": [1]})
    with pytest.raises(InvalidValueError, match=re.escape("holds more than 500 documents")):
        _evaluate(frame_kind, run, ["awrf"], qrels=qrels, groups=GROUPS)
    out = _evaluate(frame_kind, run.head(500), ["awrf_ndcg"], qrels=qrels, groups=GROUPS)
    assert out["num_q"].to_list() == [1]


def test_cli_target_flag(tmp_path: Path) -> None:
    RUN.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    GROUPS.write_parquet(tmp_path / "groups.parquet")
    pl.DataFrame({"group": ["x", "y"], "target": [0.8, 0.2]}).write_csv(tmp_path / "t.csv")
    done = irm_in_process(
        "evaluate", "run.parquet", "--qrels", "qrels.parquet", "--groups", "groups.parquet",
        "--target", "t.csv", "-m", "awrf", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    total = 1 + 1 + _w(3) + 0.5
    p = [(1 + 1 + 0.25) / total, (_w(3) + 0.25) / total]
    (row,) = json.loads(done.stdout)
    assert row["awrf"] == pytest.approx(1 - _jsd(p, [0.8, 0.2]), abs=1e-12)
