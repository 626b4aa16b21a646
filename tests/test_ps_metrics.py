"""Propensity-scored metrics (ps_precision@k, ps_ndcg@k) and irm.label_propensity.

Expected values: pyxclib's ``xc_metrics.psprecision``, ``psndcg`` and
``compute_inv_propesity`` (tests/fixtures/pyxclib/, made by make_pyxclib_fixtures.py in
a side venv), and worked examples with the arithmetic written out.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)

from .helpers import irm_in_process

CASES = json.loads((Path(__file__).parent / "fixtures/pyxclib/pyxclib_expected.json").read_text())
IDS = [case["name"] for case in CASES]


def _frames(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame(case["run"], schema=["query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(case["qrels"], schema=["query_id", "doc_id", "relevance"], orient="row")
    train = pl.DataFrame(
        case["train_qrels"], schema=["query_id", "doc_id", "relevance"], orient="row"
    )
    # pyxclib's instances are every row of the label matrix: the queries without a
    # relevant label are judged too (relevance 0)
    every = run.select("query_id").unique().with_columns(pl.lit("none").alias("doc_id"))
    qrels = pl.concat(
        [qrels, every.with_columns(pl.lit(0).alias("relevance"))], how="vertical_relaxed"
    )
    return run, qrels, train


def _lazy_or_not(frame: pl.DataFrame, frame_kind: str) -> pl.DataFrame | pl.LazyFrame:
    return frame.lazy() if frame_kind == "LazyFrame" else frame


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_label_propensity_equals_pyxclib(case: dict[str, Any], frame_kind: str) -> None:
    _, _, train = _frames(case)
    out = irm.label_propensity(_lazy_or_not(train, frame_kind), case["a"], case["b"])
    assert isinstance(out, pl.LazyFrame if frame_kind == "LazyFrame" else pl.DataFrame)
    got = out.lazy().collect()
    expected = case["inv_propensity"]
    assert got["doc_id"].to_list() == sorted(expected)
    for doc, inv, p in got.select("doc_id", "inv_propensity", "propensity").iter_rows():
        assert inv == pytest.approx(expected[doc], rel=1e-14, abs=0)
        assert p == pytest.approx(1.0 / expected[doc], rel=1e-14, abs=0)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_ps_metrics_equal_pyxclib(case: dict[str, Any], evaluate: Any) -> None:
    run, qrels, train = _frames(case)
    propensities = irm.label_propensity(train, case["a"], case["b"])
    assert isinstance(propensities, pl.DataFrame)
    metrics = [f"{m}@{k}" for m in ("ps_precision", "ps_ndcg") for k in range(1, 6)]
    out = evaluate(run, metrics, qrels=qrels, propensities=propensities.drop("inv_propensity"))
    assert out["num_q"].item() == run["query_id"].n_unique()
    for k in range(1, 6):
        assert out[f"ps_precision@{k}"].item() == pytest.approx(
            case["ps_precision"][k - 1], rel=1e-12, abs=0
        )
        # pyxclib keeps its nDCG means in float32
        assert out[f"ps_ndcg@{k}"].item() == pytest.approx(case["ps_ndcg"][k - 1], rel=1e-6, abs=0)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_per_query_shares_average_to_the_value(case: dict[str, Any], evaluate: Any) -> None:
    run, qrels, train = _frames(case)
    propensities = irm.label_propensity(train, case["a"], case["b"])
    metrics = ["ps_precision@3", "ps_ndcg@5"]
    kwargs = {"qrels": qrels, "propensities": propensities}
    shares = evaluate(run, metrics, per_query=True, **kwargs)
    whole = evaluate(run, metrics, **kwargs)
    assert shares.height == whole["num_q"].item()
    for metric in metrics:
        assert shares[metric].mean() == pytest.approx(whole[metric].item(), rel=1e-12)


def _worked() -> tuple[pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2", "q2"],
            "doc_id": ["a", "b", "c", "a", "d"],
            "rank": [1, 2, 3, 1, 2],
        }
    )
    qrels = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q3"],
            "doc_id": ["b", "c", "d", "a"],
            "relevance": [1, 1, 1, 1],
        }
    )
    return run, qrels


def test_worked_example_by_document(evaluate: Any) -> None:
    run, qrels = _worked()
    # weights 1/p: a 2, b 4, c 1, d 5
    props = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "propensity": [0.5, 0.25, 1.0, 0.2]})
    out = evaluate(run, ["ps_precision@2", "ps_ndcg@2"], qrels=qrels, propensities=props)
    # P@2: q1 retrieves b at 2 (4), q2 d at 2 (5), q3 nothing; ideal: q1 {b, c} = 5,
    # q2 {d} = 5, q3 {a} = 2 (a query the run misses adds to the ideal only)
    assert out["ps_precision@2"].item() == pytest.approx((4 + 5) / (5 + 5 + 2), abs=1e-15)
    # nDCG@2: Z = 1 + 1/log2(3) for q1 (two relevant), 1 for q2 and q3
    d2 = 1 / math.log2(3)
    z1 = 1 + d2
    numerator = 4 * d2 / z1 + 5 * d2
    ideal = (4 + 1 * d2) / z1 + 5 + 2
    assert out["ps_ndcg@2"].item() == pytest.approx(numerator / ideal, abs=1e-15)
    assert out["num_q"].item() == 3


def test_worked_example_by_position(evaluate: Any) -> None:
    run, qrels = _worked()
    qrels = qrels.filter(pl.col("query_id") != "q3")  # a click is on a shown document
    # irm.position_bias's table: p_1 = 1, p_2 = 0.5, p_3 = 0.25 (extra columns are fine)
    positions = pl.DataFrame(
        {"position": [1, 2, 3], "propensity": [1.0, 0.5, 0.25], "impressions": [9, 9, 9]}
    )
    out = evaluate(run, ["ps_precision@2", "ps_precision@3"], qrels=qrels, propensities=positions)
    # clicks: q1 b at 2 (weight 2), c at 3 (weight 4); q2 d at 2 (weight 2)
    # @2: numerator 2 + 2; ideal: q1's best two weights 4 + 2, q2's 2
    assert out["ps_precision@2"].item() == pytest.approx((2 + 2) / (6 + 2), abs=1e-15)
    assert out["ps_precision@3"].item() == pytest.approx((6 + 2) / (6 + 2), abs=1e-15)


def test_graded_judgments_use_the_relevance_level(evaluate: Any) -> None:
    run, qrels = _worked()
    qrels = qrels.with_columns(pl.Series("relevance", [2, 1, 2, 0]))
    props = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "propensity": [0.5, 0.25, 1.0, 0.2]})
    # at level 2: q1 {b} (4), q2 {d} (5): both retrieved at 2, within @2
    out = evaluate(run, ["ps_precision(rel=2)@2"], qrels=qrels, propensities=props)
    assert out["ps_precision(rel=2)@2"].item() == 1.0
    out = evaluate(run, ["ps_precision@1"], qrels=qrels, propensities=props, relevance_level=2)
    assert out["ps_precision@1"].item() == 0.0


@settings(max_examples=25, deadline=None)
@given(
    weights=st.lists(st.floats(0.01, 1.0), min_size=4, max_size=4),
    relevant=st.lists(st.booleans(), min_size=4, max_size=4),
    k=st.integers(1, 4),
)
def test_ideal_run_scores_one(weights: list[float], relevant: list[bool], k: int) -> None:
    """A run ranked by the weights of its relevant documents is pyxclib's ideal: 1."""
    docs = ["a", "b", "c", "d"]
    props = pl.DataFrame({"doc_id": docs, "propensity": weights})
    qrels = pl.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": docs, "relevance": [int(r) for r in relevant]}
    )
    key = [(not rel, p) for rel, p in zip(relevant, weights, strict=True)]
    order = sorted(range(4), key=lambda i: key[i])
    run = pl.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": [docs[i] for i in order], "rank": [1, 2, 3, 4]}
    )
    out = irm.evaluate(run, [f"ps_precision@{k}", f"ps_ndcg@{k}"], qrels=qrels, propensities=props)
    if any(relevant):
        assert out[f"ps_precision@{k}"].item() == pytest.approx(1.0, abs=1e-12)
        assert out[f"ps_ndcg@{k}"].item() == pytest.approx(1.0, abs=1e-12)
    else:  # no relevant document: 0 / 0
        assert out[f"ps_precision@{k}"].item() is None


_PROPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "propensity": [0.5, 0.25, 1.0, 0.2]})


@pytest.mark.parametrize(
    ("propensities", "error", "message"),
    [
        (
            _PROPS.with_columns(pl.Series("propensity", [0.5, 0.0, 1.0, 0.2])),
            InvalidValueError,
            "propensities= has propensity 0.0 in column 'propensity' for doc_id 'b': a "
            "propensity is a probability in (0, 1]",
        ),
        (
            _PROPS.with_columns(pl.Series("propensity", [0.5, 0.25, 1.5, 0.2])),
            InvalidValueError,
            "propensities= has propensity 1.5 in column 'propensity' for doc_id 'c'",
        ),
        (
            _PROPS.with_columns(pl.Series("propensity", [-0.5, 0.25, 1.0, 0.2])),
            InvalidValueError,
            "propensities= has propensity -0.5 in column 'propensity' for doc_id 'a'",
        ),
        (
            _PROPS.with_columns(pl.Series("propensity", [0.5, None, 1.0, 0.2])),
            InvalidValueError,
            "propensities= has propensity None in column 'propensity' for doc_id 'b'",
        ),
        (
            pl.concat([_PROPS, _PROPS.head(1)]),
            DuplicateError,
            "propensities= lists doc_id 'a' twice: give one propensity per doc_id",
        ),
        (
            _PROPS.filter(pl.col("doc_id") != "c"),
            InvalidValueError,
            "document 'c' of query 'q1' is relevant (relevance >= 1) and has no "
            "propensity: propensities= (column 'doc_id') must list every relevant document",
        ),
        (
            _PROPS.rename({"propensity": "p"}),
            ColumnNotFoundError,
            "column 'propensity' not found in the propensities (its columns: 'doc_id', 'p')",
        ),
        (
            _PROPS.with_columns(pl.col("propensity").cast(pl.String)),
            ColumnTypeError,
            "column 'propensity' in the propensities has dtype String; it must be numeric",
        ),
        (
            _PROPS.with_columns(pl.lit(1).alias("position")),
            InvalidValueError,
            "propensities= has both a 'position' and a 'doc_id' column",
        ),
        (
            pl.DataFrame({"position": [1, 2], "propensity": [1.0, 0.5]}),
            InvalidValueError,
            "document 'c' of query 'q1' is relevant (relevance >= 1) and its rank 3 has no "
            "row in propensities= (column 'position')",
        ),
    ],
)
def test_bad_propensities_are_refused(
    propensities: pl.DataFrame, error: type[Exception], message: str, frame_kind: str
) -> None:
    run, qrels = _worked()
    qrels = qrels.filter(pl.col("query_id") != "q3")
    table = _lazy_or_not(propensities, frame_kind)
    with pytest.raises(error, match=re.escape(message)):
        _evaluated(run, frame_kind, table, qrels)


def _evaluated(
    run: pl.DataFrame, frame_kind: str, table: pl.DataFrame | pl.LazyFrame, qrels: pl.DataFrame
) -> pl.DataFrame:
    """ps_ndcg@2 of the run, collected (a lazy plan raises on collect)."""
    out = irm.evaluate(
        _lazy_or_not(run, frame_kind), ["ps_ndcg@2"], qrels=qrels, propensities=table
    )
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def test_a_click_outside_the_logged_ranking_is_refused() -> None:
    run, qrels = _worked()  # q3's relevant 'a' was never shown to q3
    positions = pl.DataFrame({"position": [1, 2, 3], "propensity": [1.0, 0.5, 0.25]})
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "document 'a' of query 'q3' is relevant (relevance >= 1) and it is not in the "
            "run (the logged ranking: a click is on a shown document): give the run the whole "
            "logged ranking"
        ),
    ):
        irm.evaluate(run, ["ps_precision@2"], qrels=qrels, propensities=positions)


def test_propensities_without_a_ps_metric_are_refused() -> None:
    run, qrels = _worked()
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "propensities= is read by the propensity-scored metrics (ps_precision@k, "
            "ps_ndcg@k), and no metric asked for reads it: drop propensities="
        ),
    ):
        irm.evaluate(run, ["ndcg@2"], qrels=qrels, propensities=_PROPS)


def test_ps_metric_without_propensities_is_refused() -> None:
    run, qrels = _worked()
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'ps_ndcg@2' reads propensities (one row per document, or per position, "
            "with its 'propensity'): pass propensities=... to irm.evaluate"
        ),
    ):
        irm.evaluate(run, ["ps_ndcg@2"], qrels=qrels)


def test_cutoff_required_and_mix_refused() -> None:
    run, qrels = _worked()
    with pytest.raises(MetricParameterError, match="ps_ndcg"):
        irm.evaluate(run, ["ps_ndcg"], qrels=qrels, propensities=_PROPS)
    with pytest.raises(
        MetricParameterError,
        match=re.escape("metrics 'ps_ndcg@2' and 'ndcg@2' are computed from different tables"),
    ):
        irm.evaluate(run, ["ps_ndcg@2", "ndcg@2"], qrels=qrels, propensities=_PROPS)


def test_unread_options_and_by_are_refused() -> None:
    run, qrels = _worked()
    with pytest.raises(InvalidValueError, match=re.escape("depth=5 is not read by")):
        irm.evaluate(run, ["ps_ndcg@2"], qrels=qrels, propensities=_PROPS, depth=5)
    with pytest.raises(
        InvalidValueError,
        match=re.escape("by= and systems= are not available for the propensity-scored"),
    ):
        irm.evaluate(
            run.with_columns(pl.lit("x").alias("day")),
            ["ps_ndcg@2"],
            qrels=qrels,
            propensities=_PROPS,
            by="day",
        )


def test_lazy_plan_computes_nothing_before_collect(tmp_path: Path) -> None:
    run, qrels = _worked()
    path = tmp_path / "run.parquet"
    run.write_parquet(path)
    plan = irm.evaluate(pl.scan_parquet(path), ["ps_ndcg@2"], qrels=qrels, propensities=_PROPS)
    assert isinstance(plan, pl.LazyFrame)
    path.unlink()  # nothing was read: collecting now fails on the missing file
    with pytest.raises(Exception, match=re.escape("run.parquet")):
        plan.collect()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"a": "x"}, "a must be a finite number (Jain et al.'s A: a=0.55, b=1.5 in general), "),
        ({"b": -1.0}, "b must be a finite number above -1 (Jain et al.'s B"),
        ({"b": math.nan}, "b must be a finite number above -1"),
    ],
)
def test_label_propensity_refuses_bad_parameters(kwargs: dict[str, Any], message: str) -> None:
    _, qrels = _worked()
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.label_propensity(qrels, **kwargs)


def test_label_propensity_names_a_missing_column() -> None:
    _, qrels = _worked()
    with pytest.raises(
        ColumnNotFoundError, match=re.escape("column 'rel' not found in the qrels")
    ):
        irm.label_propensity(qrels, relevance="rel")


def test_cli_propensities_flag(tmp_path: Path) -> None:
    run, qrels = _worked()
    run.write_csv(tmp_path / "run.csv")
    qrels.write_csv(tmp_path / "qrels.csv")
    _PROPS.write_csv(tmp_path / "p.csv")
    argv = ["evaluate", "run.csv", "--qrels", "qrels.csv", "-m", "ps_precision@2"]
    done = irm_in_process(*argv, "--propensities", "p.csv", "--format", "csv", cwd=tmp_path)
    # (4 + 5) / (5 + 5 + 2): the worked example by document
    assert (done.returncode, done.stdout, done.stderr) == (0, "num_q,ps_precision@2\n3,0.75\n", "")
    refused = irm_in_process(*argv, cwd=tmp_path)
    assert refused.returncode == 2
    assert "reads propensities (one row per document, or per position" in refused.stderr


def test_compare_refuses_ps_metrics() -> None:
    run, qrels = _worked()
    runs = pl.concat([run.with_columns(system=pl.lit(s)) for s in ("x", "y")])
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'ps_ndcg@2' is computed from a run, judgments and propensities, which "
            "irm.compare does not take (it pairs the per-query values of runs and judgments, "
            "or of predictions): evaluate it with irm.evaluate(table, propensities=...) for "
            "each system"
        ),
    ):
        irm.compare(runs, ["ps_ndcg@2"], qrels=qrels)
