"""Expected exposure through the one door: worked examples as arithmetic, the
stochastic run, groups, the identity loss = disparity - 2 relevance + Σ ε*² on random
inputs, the refusals, and the CLI's --groups. Equality with expeval is in
test_fairness_peers.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)

from .conftest import Evaluate
from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["ee_loss", "ee_disparity", "ee_relevance"]
RBP = [f"{name}(browsing='rbp')" for name in NAMES]

RUN = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
QRELS = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 1]})


def _evaluate(frame_kind: str, run: pl.DataFrame, metrics: list[str], **kw: Any) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        out = irm.evaluate(run.lazy(), metrics, **kw)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(run, metrics, **kw)
    assert isinstance(result, pl.DataFrame)
    return result


# rbp, p = 0.5: the target gives a and b the mean of positions 0 and 1, (1 + 0.5) / 2;
# the run gives b 1, a 0.5, x 0.25
TARGET = (1 + 0.5) / 2
WORKED = [
    (
        "rbp",
        RBP,
        {
            "ee_loss(browsing='rbp')": (TARGET - 1) ** 2 + (TARGET - 0.5) ** 2 + 0.25**2,
            "ee_disparity(browsing='rbp')": 1 + 0.5**2 + 0.25**2,
            "ee_relevance(browsing='rbp')": TARGET * 1 + TARGET * 0.5,
        },
    ),
    # geometric (gerr, utility 0.5): position i exposed by p^i 0.5^(relevant above);
    # target decay p * 0.5 = 0.25: (1 + 0.25) / 2 each; run b 1, a 0.5*0.5, x 0.25*0.25
    (
        "geometric",
        NAMES,
        {
            "ee_loss": (0.625 - 1) ** 2 + (0.625 - 0.25) ** 2 + 0.0625**2,
            "ee_disparity": 1 + 0.25**2 + 0.0625**2,
            "ee_relevance": 0.625 * (1 + 0.25),
        },
    ),
]


@pytest.mark.parametrize(("case", "metrics", "expected"), WORKED, ids=[w[0] for w in WORKED])
def test_worked_example(
    case: str, metrics: list[str], expected: dict[str, float], frame_kind: str
) -> None:
    out = _evaluate(frame_kind, RUN, metrics, qrels=QRELS, per_query=True)
    assert out["query_id"].to_list() == ["q"]
    for name, value in expected.items():
        assert out[name][0] == pytest.approx(value, abs=1e-12)


def test_samples_average_the_exposure(frame_kind: str) -> None:
    # two samples swap a and b: each gets (1 + 0.5) / 2, the target's: loss 0.25² (x)
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 6,
            "sample": [1, 1, 1, 2, 2, 2],
            "doc_id": ["a", "b", "x", "b", "a", "x"],
            "rank": [1, 2, 3, 1, 2, 3],
        }
    )
    out = _evaluate(frame_kind, run, RBP, qrels=QRELS)
    assert out.row(0) == pytest.approx((1, 0.25**2, 2 * TARGET**2 + 0.25**2, 2 * TARGET**2))


def test_groups_count_a_document_in_full_for_each_group(frame_kind: str) -> None:
    # b is in g1 and g2, a in g1; x is not relevant and counts for no group.
    # target: g1 = 0.75 + 0.75, g2 = 0.75; run: g1 = 1 + 0.5, g2 = 1
    groups = pl.DataFrame({"doc_id": ["a", "b", "b", "x"], "group": ["g1", "g1", "g2", "g2"]})
    out = _evaluate(frame_kind, RUN, RBP, qrels=QRELS, groups=groups, per_query=True)
    assert out.row(0) == pytest.approx(
        ("q", 0.0**2 + (0.75 - 1) ** 2, 1.5**2 + 1**2, 1.5 * 1.5 + 0.75 * 1)
    )


def test_a_judged_query_the_run_lacks_has_no_exposure(frame_kind: str) -> None:
    # expeval prints disparity 1/(1-p²) there, and loss 0 when the query has one grade
    # (its bounds, tests/fixtures/fairness/expeval.json case 1, query 'r'); no exposure
    # is disparity 0, relevance 0, and the whole target as loss: a single relevant
    # document's target is 1 (rbp)
    qrels = QRELS.vstack(pl.DataFrame({"query_id": ["r"], "doc_id": ["z"], "relevance": [2]}))
    out = _evaluate(frame_kind, RUN, RBP, qrels=qrels, per_query=True)
    assert out.row(1) == ("r", 1.0, 0.0, 0.0)


def test_queries_without_a_relevant_document_are_left_out(frame_kind: str) -> None:
    run = RUN.vstack(pl.DataFrame({"query_id": ["s"], "doc_id": ["y"], "score": [1.0]}))
    qrels = QRELS.vstack(pl.DataFrame({"query_id": ["s"], "doc_id": ["y"], "relevance": [0]}))
    out = _evaluate(frame_kind, run, ["ee_loss"], qrels=qrels, per_query=True)
    assert out["query_id"].to_list() == ["q"]


rankings = st.lists(
    st.permutations([f"d{i}" for i in range(6)]).map(lambda p: p[:4]), min_size=1, max_size=3
)


@settings(max_examples=40, deadline=None)
@given(
    samples=rankings,
    grades=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    browsing=st.sampled_from(["rbp", "geometric"]),
    patience=st.sampled_from([0.3, 0.5, 0.9]),
)
def test_loss_is_disparity_minus_twice_relevance_plus_the_target_norm(
    samples: list[list[str]], grades: list[int], browsing: str, patience: float
) -> None:
    grades[0] = max(grades[0], 1)
    run = pl.DataFrame(
        [("q", s, d, i + 1) for s, ranking in enumerate(samples) for i, d in enumerate(ranking)],
        schema=["query_id", "sample", "doc_id", "rank"],
        orient="row",
    )
    qrels = pl.DataFrame(
        {"query_id": ["q"] * 6, "doc_id": [f"d{i}" for i in range(6)], "relevance": grades}
    )
    params = f"(browsing='{browsing}', patience={patience})"
    out = irm.evaluate(run, [n + params for n in NAMES], qrels=qrels).row(0)
    # an empty run: loss = the target's squared norm
    norm = irm.evaluate(run.head(0), ["ee_loss" + params], qrels=qrels).row(0)[1]
    assert out[1] == pytest.approx(out[2] - 2 * out[3] + norm, abs=1e-12)


def test_refusals() -> None:
    groups = pl.DataFrame({"doc_id": ["a"], "group": ["g"]})
    cases: list[tuple[type[Exception], str, Any]] = [
        (
            MetricParameterError,
            # every measure that reads it named, and no "call of its own": they share
            # a call with the ranking metrics (round 10)
            "groups= holds the document groups the exposure measures (ee_loss, "
            "ee_disparity, ee_relevance, awrf, awrf_ndcg, rnd, rkl, rrd) and Elliot's "
            "item_mad@k read, and no metric asked for reads them: drop groups=, or ask for "
            "one of them",
            lambda: irm.evaluate(RUN, ["ndcg"], qrels=QRELS, groups=groups),
        ),
        (
            DuplicateError,
            "the groups table (groups=) lists document 'a' twice in one group (column "
            "'group'); one row per (document, group): drop the duplicates, e.g. .unique()",
            lambda: irm.evaluate(RUN, ["ee_loss"], qrels=QRELS, groups=groups.vstack(groups)),
        ),
        (
            ColumnTypeError,
            "column 'doc_id' holds strings in the run (String) but integers in groups= "
            "(Int64); cast one side, e.g. pl.col('doc_id').cast(pl.String) on both",
            lambda: irm.evaluate(
                RUN, ["ee_loss"], qrels=QRELS, groups=pl.DataFrame({"doc_id": [1], "group": [1]})
            ),
        ),
        (
            InvalidValueError,
            "column 'sample' of the run has null (or NaN) values in query 'q'; each row "
            "belongs to one sampled ranking: fill or drop those rows",
            lambda: irm.evaluate(
                RUN.with_columns(sample=pl.Series([1, None, 1], dtype=pl.Int64)),
                ["ee_loss"],
                qrels=QRELS,
            ),
        ),
        (  # one ranking per query: as the accuracy metrics refuse it
            DuplicateError,
            "column 'doc_id' of the run: query 'q' has 3 repeated listing(s) "
            "(each of a document listed before in the query); each "
            "(query, document) pair may appear once (trec_eval refuses such runs too): keep "
            "one row per document, e.g. .unique(['query_id', 'doc_id'])",
            lambda: irm.evaluate(RUN.vstack(RUN), ["ee_loss"], qrels=QRELS),
        ),
        (  # sampled rankings: each ranking holds a document once
            DuplicateError,
            "the run lists a document twice in one ranking of query 'q'; a ranking (one "
            "query and 'sample') holds each document once: drop the duplicates",
            lambda: irm.evaluate(
                RUN.vstack(RUN).with_columns(sample=pl.lit(1)), ["ee_loss"], qrels=QRELS
            ),
        ),
        (
            ColumnTypeError,
            "column 'relevance' in the judgments has dtype String; it must be numeric: "
            "cast it, e.g. pl.col('relevance').cast(pl.Float64)",
            lambda: irm.evaluate(
                RUN, ["ee_loss"], qrels=QRELS.with_columns(pl.col("relevance").cast(pl.String))
            ),
        ),
        (  # one ranking per query: as the accuracy metrics refuse it
            InvalidValueError,
            "column 'score' of the run has 1 NaN value(s) in query 'q'; NaN cannot be "
            "ranked: replace them, e.g. pl.col('score').fill_nan(float('-inf'))",
            lambda: irm.evaluate(
                RUN.with_columns(score=pl.Series([1.0, float("nan"), 0.5])),
                ["ee_loss"],
                qrels=QRELS,
            ),
        ),
        (  # sampled rankings
            InvalidValueError,
            "column 'score' of the run has null or NaN values in query 'q'; rankings are "
            "read from it: fill or drop those rows",
            lambda: irm.evaluate(
                RUN.with_columns(score=pl.Series([1.0, float("nan"), 0.5]), sample=pl.lit(0)),
                ["ee_loss"],
                qrels=QRELS,
            ),
        ),
        (
            MetricParameterError,
            "the expected-exposure measures read relevance judgments: pass qrels=...",
            lambda: irm.evaluate(RUN, ["ee_loss"]),
        ),
    ]
    for error, message, call in cases:
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            call()


def test_an_option_the_measures_do_not_read_is_refused() -> None:
    with pytest.raises(Exception, match=re.escape("relevance_level")) as caught:
        irm.evaluate(RUN, ["ee_loss"], qrels=QRELS, relevance_level=2)
    assert type(caught.value).__module__ == "polars_irmetrics.errors"


def test_cli_groups_flag(tmp_path: Path) -> None:
    RUN.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    pl.DataFrame({"doc_id": ["a", "b"], "group": ["g1", "g2"]}).write_parquet(
        tmp_path / "groups.parquet"
    )
    done = irm_in_process(
        "evaluate", "run.parquet", "--qrels", "qrels.parquet", "--groups", "groups.parquet",
        "-m", "ee_relevance(browsing='rbp')", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # g1 (a): target 0.75, run 0.5; g2 (b): 0.75, 1
    (row,) = json.loads(done.stdout)
    assert row["ee_relevance(browsing='rbp')"] == pytest.approx(0.75 * 0.5 + 0.75 * 1)


def test_sample_id_names_the_column_of_the_sampled_rankings(frame_kind: str) -> None:
    # the same two samples as above under another column name; without sample= the
    # column is not read and the run is one ranking with each document twice (refused)
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 6,
            "draw": [1, 1, 1, 2, 2, 2],
            "doc_id": ["a", "b", "x", "b", "a", "x"],
            "rank": [1, 2, 3, 1, 2, 3],
        }
    )
    out = _evaluate(frame_kind, run, RBP[:1], qrels=QRELS, sample_id="draw")
    assert out.row(0) == pytest.approx((1, 0.25**2))
    with pytest.raises(DuplicateError, match=re.escape("has 3 repeated listing(s)")):
        _evaluate(frame_kind, run, RBP[:1], qrels=QRELS)


def test_sample_id_is_refused_where_no_metric_reads_it() -> None:
    with pytest.raises(Exception, match=re.escape("sample_id")) as caught:
        irm.evaluate(RUN, ["ndcg"], qrels=QRELS, sample_id="draw")
    assert type(caught.value).__module__ == "polars_irmetrics.errors"


def test_per_query_columns_in_the_order_asked(evaluate: Evaluate) -> None:
    # the plan computes the measures grouped by kind (awrf before the expected exposure);
    # its per-query values come in the order given, as the means do
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    groups = pl.DataFrame({"doc_id": ["a", "b", "c"], "group": ["x", "y", "x"]})
    metrics = ["ee_loss", "awrf", "ee_disparity"]
    for per_query in (True, False):
        out = evaluate(run, metrics, qrels=qrels, groups=groups, per_query=per_query)
        assert out.columns == ["query_id" if per_query else "num_q", *metrics]
