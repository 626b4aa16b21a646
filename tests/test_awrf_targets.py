"""AWRF with per-query targets and intersectional groups, through the one door: equal
to wptrec (fair-trec/trec2022-fair-public @ 227e284, ``wptrec/metrics/awrf.py`` and
``wptrec/dimension.py``) on the 160 seeded cases of
tests/fixtures/fairness/awrf_targets.json (made by make_awrf_targets.py beside it, which
runs wptrec's AWRFMetric with one FairDim per group dimension in a side venv) to 1e-6
(wptrec's float32 discounts). Then worked examples as float64 arithmetic and the
refusals of a per-query target and of intersectional groups."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
)
from tests.test_awrf import _evaluate, _jsd, _w

from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]
CASES = json.loads((ROOT / "tests/fixtures/fairness/awrf_targets.json").read_text())
#: wptrec's float32 discounts: the largest difference on the fixtures is about 8e-8.
FLOAT32 = 1e-6
NAMES = ["awrf", "awrf_ndcg"]

RUN = pl.DataFrame(
    {
        "query_id": ["q"] * 4 + ["r"] * 2,
        "doc_id": ["a", "b", "c", "d", "a", "c"],
        "rank": [1, 2, 3, 4, 1, 2],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q", "q", "r"], "doc_id": ["a", "c", "c"], "relevance": [1, 1, 1]}
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d", "d"], "group": ["x", "x", "y", "x", "y"]})
PER_QUERY = pl.DataFrame(
    {
        "query_id": ["q", "q", "r", "r"],
        "group": ["x", "y", "x", "y"],
        "target": [0.5, 0.5, 0.9, 0.1],
    }
)
#: two dimensions: a is (f, n), b (m, n), c (f, s), d (m, n) and (m, s)
WIDE = pl.DataFrame(
    {
        "doc_id": ["a", "b", "c", "d", "d"],
        "gender": ["f", "m", "f", "m", "m"],
        "region": ["n", "n", "s", "n", "s"],
    }
)


def _case_tables(case: dict[str, Any]) -> dict[str, Any]:
    dims = case["dims"]
    kw: dict[str, Any] = {
        "qrels": pl.DataFrame(
            case["qrels"], schema={"query_id": pl.String, "doc_id": pl.String}, orient="row"
        ).with_columns(relevance=pl.lit(1)),
        "groups": pl.DataFrame(
            case["groups"], schema={"doc_id": pl.String, **dict.fromkeys(dims, pl.String)},
            orient="row",
        ),
        "per_query": True,
    }  # fmt: skip
    if case["target"] is not None:
        keys = (["query_id"] if case["per_query"] else []) + dims
        kw["target"] = pl.DataFrame(
            case["target"],
            schema={**dict.fromkeys(keys, pl.String), "target": pl.Float64},
            orient="row",
        )
    return kw


@pytest.mark.parametrize("index", range(len(CASES)))
def test_equal_to_wptrec(index: int, frame_kind: str) -> None:
    case = CASES[index]
    run = pl.DataFrame(
        case["run"],
        schema={"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64},
        orient="row",
    )
    out = _evaluate(frame_kind, run, NAMES, **_case_tables(case))
    got = out.rows_by_key("query_id", unique=True)
    assert set(got) == set(case["expected"])
    for query, (_ndcg, awrf, score) in case["expected"].items():
        assert got[query] == pytest.approx((awrf, score), abs=FLOAT32, rel=0, nan_ok=True)


def test_the_fixtures_cover_each_form() -> None:
    kinds = {
        (len(c["dims"]), c["target"] is None, c["per_query"]) for c in CASES
    }  # dimensions, no target, per-query target
    assert {(1, False, True), (2, True, False), (2, False, False), (2, False, True)} <= kinds
    assert any(len(c["dims"]) == 3 for c in CASES)


def test_worked_example_per_query_target(frame_kind: str) -> None:
    # q: weights 1, 1, 1/log2(3), 1/2; a, b in x, c in y, d half each; target 0.5/0.5
    total = 1 + 1 + _w(3) + 0.5
    q_awrf = 1 - _jsd([(2.25) / total, (_w(3) + 0.25) / total], [0.5, 0.5])
    # r: a (x) then c (y), weights 1, 1: 0.5/0.5 against 0.9/0.1; nDCG 1 (c, R = 1)
    r_awrf = 1 - _jsd([0.5, 0.5], [0.9, 0.1])
    q_ndcg = (1 + _w(3)) / 2
    out = _evaluate(
        frame_kind, RUN, NAMES, qrels=QRELS, groups=GROUPS, target=PER_QUERY, per_query=True
    )
    assert out["query_id"].to_list() == ["q", "r"]
    assert out["awrf"].to_list() == pytest.approx([q_awrf, r_awrf], abs=1e-12)
    assert out["awrf_ndcg"].to_list() == pytest.approx([q_awrf * q_ndcg, r_awrf], abs=1e-12)


def test_a_per_query_target_for_every_query_equals_the_global_one(frame_kind: str) -> None:
    half = pl.DataFrame({"group": ["x", "y"], "target": [0.5, 0.5]})
    both = pl.concat(
        [half.with_columns(query_id=pl.lit(q)) for q in ["q", "r", "unjudged"]]
    ).select("query_id", "group", "target")
    kw = {"qrels": QRELS, "groups": GROUPS, "per_query": True}
    want = _evaluate(frame_kind, RUN, NAMES, target=half, **kw)
    assert _evaluate(frame_kind, RUN, NAMES, target=both, **kw).equals(want)


def test_integer_query_ids_in_a_per_query_target(frame_kind: str) -> None:
    run = RUN.with_columns(pl.col("query_id").replace_strict({"q": 1, "r": 2}))
    qrels = QRELS.with_columns(pl.col("query_id").replace_strict({"q": 1, "r": 2}))
    target = PER_QUERY.with_columns(pl.col("query_id").replace_strict({"q": 1, "r": 2}))
    want = _evaluate(frame_kind, RUN, NAMES, qrels=QRELS, groups=GROUPS, target=PER_QUERY)
    out = _evaluate(frame_kind, run, NAMES, qrels=qrels, groups=GROUPS, target=target)
    assert out.row(0) == pytest.approx(want.row(0), abs=1e-15)


def test_worked_example_intersectional(frame_kind: str) -> None:
    # cells (f,n) (f,s) (m,n) (m,s); a: (f,n) 1; b: (m,n) 1; c: (f,s) 1; d: m with
    # region n or s: (m,n) 1/2, (m,s) 1/2. Query q's weights 1, 1, 1/log2(3), 1/2
    total = 1 + 1 + _w(3) + 0.5
    p = [1 / total, _w(3) / total, (1 + 0.25) / total, 0.25 / total]
    # the default target: the relevant a and c, (f,n) 1/2, (f,s) 1/2
    want_q = 1 - _jsd(p, [0.5, 0.5, 0.0, 0.0])
    # query r: a, c (weights 1, 1), relevant c: (f,s) 1
    want_r = 1 - _jsd([0.5, 0.5], [0.0, 1.0])
    out = _evaluate(frame_kind, RUN, ["awrf"], qrels=QRELS, groups=WIDE, per_query=True)
    assert out["query_id"].to_list() == ["q", "r"]
    assert out["awrf"].to_list() == pytest.approx([want_q, want_r], abs=1e-12)
    # a global target over the cells
    target = pl.DataFrame(
        {
            "gender": ["f", "f", "m", "m"],
            "region": ["n", "s", "n", "s"],
            "target": [0.25, 0.25, 0.25, 0.25],
        }
    )
    out = _evaluate(frame_kind, RUN, ["awrf"], qrels=QRELS, groups=WIDE, target=target)
    mean = (1 - _jsd(p, [0.25] * 4) + 1 - _jsd([0.5, 0.0, 0.5, 0.0], [0.25] * 4)) / 2
    assert out["awrf"].to_list() == pytest.approx([mean], abs=1e-12)


def test_intersection_reads_each_dimension_not_the_row_pairing(frame_kind: str) -> None:
    # d listed as (m, n), (m, s) or as (m, n), (m, s), (m, n): the same alignments
    paired = pl.concat([WIDE, pl.DataFrame({"doc_id": ["d"], "gender": ["m"], "region": ["n"]})])
    kw = {"qrels": QRELS, "per_query": True}
    want = _evaluate(frame_kind, RUN, NAMES, groups=WIDE, **kw)
    assert _evaluate(frame_kind, RUN, NAMES, groups=paired, **kw).equals(want)


def test_one_dimension_among_columns_named_otherwise_is_the_plain_awrf(frame_kind: str) -> None:
    # a groups table of two columns where each document has one region: region x gender
    # with one gender is region alone
    one = WIDE.with_columns(pl.lit("all").alias("gender"))
    plain = WIDE.select("doc_id", pl.col("region").alias("group"))
    kw = {"qrels": QRELS, "per_query": True}
    got = _evaluate(frame_kind, RUN, NAMES, groups=one, **kw)
    want = _evaluate(frame_kind, RUN, NAMES, groups=plain, **kw)
    for name in NAMES:
        assert got[name].to_list() == pytest.approx(want[name].to_list(), abs=1e-12)


def test_a_document_missing_a_dimension_is_left_out(frame_kind: str) -> None:
    # b has no region: as if b had no group at all
    holes = WIDE.with_columns(
        pl.when(pl.col("doc_id") == "b").then(None).otherwise(pl.col("region")).alias("region")
    )
    kw = {"qrels": QRELS, "per_query": True}
    got = _evaluate(frame_kind, RUN, NAMES, groups=holes, **kw)
    want = _evaluate(frame_kind, RUN, NAMES, groups=WIDE.filter(pl.col("doc_id") != "b"), **kw)
    assert got.equals(want)


BAD_PER_QUERY = [
    (
        PER_QUERY.filter(pl.col("query_id") == "q"),
        InvalidValueError,
        "the target (target=) has no row for query 'r' of the run (column 'query_id'); a "
        "per-query target gives each judged query of the run its distribution over groups: "
        "add its rows, or filter the run to the queries the target covers",
    ),
    (
        PER_QUERY.with_columns(target=pl.when(pl.col("query_id") == "r").then(0.3).otherwise(0.5)),
        InvalidValueError,
        "the target (target=) sums to 0.6 for query 'r' in column 'target'; a target is a "
        "distribution over groups per query: divide each value by the sum so they sum to 1",
    ),
    (
        PER_QUERY.with_columns(
            target=pl.when(pl.col("target") == 0.9).then(-0.9).otherwise(pl.col("target"))
        ),
        InvalidValueError,
        "the target (target=) gives group 'x' for query 'r' a negative, null or NaN value in "
        "column 'target'; a target is a distribution over groups: give every group a value "
        ">= 0",
    ),
    (
        pl.concat([PER_QUERY, PER_QUERY.head(1)]),
        DuplicateError,
        "the target (target=) lists group 'x' for query 'q' twice in columns 'query_id', "
        "'group'; one row per (query, group): drop or add up the duplicates",
    ),
    (
        PER_QUERY.with_columns(pl.col("group").replace({"y": "Y"})),
        InvalidValueError,
        "the target (target=) names group 'Y' for query 'q' in column 'group', and no "
        "document of the groups table (groups=) is in it; a per-query target is over the "
        "groups of groups=: correct the name (and its type), or drop the row",
    ),
    (
        PER_QUERY.with_columns(pl.col("query_id").cast(pl.Categorical).to_physical()),
        ColumnTypeError,
        "column 'query_id' holds strings in the run (String) but integers in target= (UInt32)",
    ),
]


@pytest.mark.parametrize(("target", "error", "message"), BAD_PER_QUERY)
def test_bad_per_query_targets_are_refused(
    target: pl.DataFrame, error: type[Exception], message: str, frame_kind: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        _evaluate(frame_kind, RUN, ["awrf"], qrels=QRELS, groups=GROUPS, target=target)


def test_a_query_without_judgments_needs_no_target(frame_kind: str) -> None:
    # the run's query u is unjudged: awrf leaves it out, so no target row is asked for
    run = pl.concat([RUN, pl.DataFrame({"query_id": ["u"], "doc_id": ["a"], "rank": [1]})])
    out = _evaluate(frame_kind, run, ["awrf"], qrels=QRELS, groups=GROUPS, target=PER_QUERY)
    assert out["num_q"].to_list() == [2]


BAD_INTERSECTIONAL = [
    (
        ["awrf"],
        WIDE.select("doc_id", "gender"),
        None,
        ColumnNotFoundError,
        "column 'group' not found in the groups (its columns: 'doc_id', 'gender'); one row "
        "per (document, group), or for awrf's intersectional groups doc_id and two or more "
        "group columns",
    ),
    (
        ["awrf", "ee_loss"],
        WIDE,
        None,
        ColumnNotFoundError,
        "column 'group' not found in the groups (its columns: 'doc_id', 'gender', "
        "'region'); ee_loss reads one group per row from column 'group' (the group columns "
        "'gender', 'region' are intersectional groups, which only awrf and awrf_ndcg read): "
        "ask for it in a call of its own with a groups table doc_id, group",
    ),
    (
        ["awrf"],
        WIDE,
        pl.DataFrame({"gender": ["f", "m"], "target": [0.5, 0.5]}),
        ColumnNotFoundError,
        "column 'region' not found in the target (its columns: 'gender', 'target'); one row "
        "per cell",
    ),
    (
        ["awrf"],
        WIDE,
        pl.DataFrame({"gender": ["f", "f"], "region": ["n", "n"], "target": [0.5, 0.5]}),
        DuplicateError,
        "the target (target=) lists group 'f, n' twice in columns 'gender', 'region'; one "
        "row per group: drop or add up the duplicates",
    ),
    (
        ["awrf"],
        WIDE.with_columns(pl.col("region").replace_strict({"n": 1.0, "s": 2.0})),
        None,
        ColumnTypeError,
        "column 'region' in the groups",
    ),
]


@pytest.mark.parametrize(("metrics", "groups", "target", "error", "message"), BAD_INTERSECTIONAL)
def test_bad_intersectional_groups_are_refused(
    metrics: list[str],
    groups: pl.DataFrame,
    target: pl.DataFrame | None,
    error: type[Exception],
    message: str,
    frame_kind: str,
) -> None:
    kw: dict[str, Any] = {"qrels": QRELS, "groups": groups}
    if target is not None:
        kw["target"] = target
    with pytest.raises(error, match=re.escape(message)):
        _evaluate(frame_kind, RUN, metrics, **kw)


def test_cli_per_query_target_and_intersectional_groups(tmp_path: Path) -> None:
    RUN.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    WIDE.write_parquet(tmp_path / "groups.parquet")
    pl.DataFrame(
        {
            "query_id": ["q", "q", "r"],
            "gender": ["f", "m", "f"],
            "region": ["n", "s", "s"],
            "target": [0.5, 0.5, 1.0],
        }
    ).write_csv(tmp_path / "t.csv")
    done = irm_in_process(
        "evaluate", "run.parquet", "--qrels", "qrels.parquet", "--groups", "groups.parquet",
        "--target", "t.csv", "-m", "awrf", "--per-query", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    total = 1 + 1 + _w(3) + 0.5
    # cells (f,n) (f,s) (m,n) (m,s) as in the worked example; targets 1/2 (f,n) 1/2 (m,s)
    p = [1 / total, _w(3) / total, 1.25 / total, 0.25 / total]
    want = {"q": 1 - _jsd(p, [0.5, 0.0, 0.0, 0.5]), "r": 1 - _jsd([0.5, 0.5], [0.0, 1.0])}
    rows = {row["query_id"]: row["awrf"] for row in json.loads(done.stdout)}
    assert rows == pytest.approx(want, abs=1e-12)
    assert not math.isnan(rows["q"])
