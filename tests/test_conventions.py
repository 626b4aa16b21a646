"""trec_eval's conventions, each pinned by a test that fails if it changes."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import subprocess
import sys
import textwrap
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

from .conftest import Evaluate


def test_ties_broken_by_doc_id_descending_as_text(evaluate: Evaluate) -> None:
    # All scores tie: trec_eval orders d9 > d10 > d1 (strcmp, descending).
    run = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["d1", "d10", "d9"], "score": [1.0, 1.0, 1.0]}
    )
    for relevant, expected_rr in [("d9", 1.0), ("d10", 1 / 2), ("d1", 1 / 3)]:
        qrels = pl.DataFrame({"query_id": ["q"], "doc_id": [relevant], "relevance": [1]})
        assert evaluate(run, ["mrr"], qrels=qrels)["mrr"].item() == expected_rr


def test_integer_doc_ids_tie_break_as_text_like_trec_eval(evaluate: Evaluate) -> None:
    # As text "9" > "10" > "1"; trec_eval reads ids as text, so we compare them as text too.
    run = pl.DataFrame({"query_id": [1, 1, 1], "doc_id": [1, 10, 9], "score": [0.5, 0.5, 0.5]})
    qrels = pl.DataFrame({"query_id": [1], "doc_id": [10], "relevance": [1]})
    assert evaluate(run, ["mrr"], qrels=qrels)["mrr"].item() == 1 / 2


def test_unjudged_documents_tied_above_push_a_judged_one_down(evaluate: Evaluate) -> None:
    # Scores: a 3, then b, c, d10, d9 all 2, then e 1. The tie is ordered by id as text,
    # descending: d9, d10, c, b. Only c is judged, so its position (4) depends on the
    # unjudged documents it ties with: a (1), d9 (2), d10 (3), c (4), b (5), e (6).
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 6,
            "doc_id": ["b", "c", "d10", "d9", "a", "e"],
            "score": [2.0, 2.0, 2.0, 2.0, 3.0, 1.0],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["c"], "relevance": [1]})
    assert evaluate(run, ["mrr"], qrels=qrels)["mrr"].item() == 1 / 4
    # depth cuts the tie: positions 1..3 keep a, d9, d10 and leave c out
    assert evaluate(run, ["mrr", "num_ret"], qrels=qrels, depth=3).row(0) == (1, 0.0, 3.0)
    assert evaluate(run, ["mrr"], qrels=qrels, depth=4)["mrr"].item() == 1 / 4
    # a judged table ranks its rows the same way
    table = run.with_columns(relevance=(pl.col("doc_id") == "c").cast(pl.Int64))
    assert evaluate(table, ["mrr"])["mrr"].item() == 1 / 4
    assert evaluate(table, ["mrr"], depth=3)["mrr"].item() == 0.0


def test_input_order_is_never_used(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0, 3.0, 2.0]}
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["c"], "relevance": [1]})
    shuffled = run.reverse()
    assert evaluate(run, ["mrr"], qrels=qrels)["mrr"].item() == 1 / 2
    assert evaluate(shuffled, ["mrr"], qrels=qrels)["mrr"].item() == 1 / 2


def test_the_rank_column_is_read_alone_or_when_chosen(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 2,
            "doc_id": ["a", "b"],
            "score": [2.0, 1.0],
            "rank": [2, 1],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    assert evaluate(run.drop("score"), ["mrr"], qrels=qrels)["mrr"].item() == 1.0
    assert evaluate(run, ["mrr"], qrels=qrels, order="rank")["mrr"].item() == 1.0
    assert evaluate(run, ["mrr"], qrels=qrels, order="score")["mrr"].item() == 1 / 2
    # order='auto' with both, where they order the query differently: refused
    with pytest.raises(irm.InvalidValueError, match=r"^columns 'rank' and 'score' of the run"):
        evaluate(run, ["mrr"], qrels=qrels)


def test_rank_gaps_are_positions(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "rank": [1, 5]})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    row = evaluate(run, ["mrr", "P@4", "num_ret"], qrels=qrels, per_query=True).row(0, named=True)
    assert row == {"query_id": "q", "mrr": 1 / 5, "P@4": 0.0, "num_ret": 2}


RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q3"],
        "doc_id": ["a", "b", "a", "a"],
        "rank": [1, 2, 1, 1],
    }
)
# q1 and q2 are judged; q3 only retrieved; q4 only judged.
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q4"],
        "doc_id": ["b", "a", "x"],
        "relevance": [1, 1, 1],
    }
)


@pytest.mark.parametrize(
    ("unjudged", "unretrieved", "queries", "mean_mrr"),
    [
        ("drop", "zero", ["q1", "q2", "q4"], (1 / 2 + 1 + 0) / 3),
        ("drop", "drop", ["q1", "q2"], (1 / 2 + 1) / 2),
        ("zero", "zero", ["q1", "q2", "q3", "q4"], (1 / 2 + 1 + 0 + 0) / 4),
        ("zero", "drop", ["q1", "q2", "q3"], (1 / 2 + 1 + 0) / 3),
    ],
)
def test_query_set_policies(
    evaluate: Evaluate, unjudged: str, unretrieved: str, queries: list[str], mean_mrr: float
) -> None:
    kwargs = {"qrels": QRELS, "unjudged": unjudged, "unretrieved": unretrieved}
    per_query = evaluate(RUN, ["mrr", "num_ret", "num_rel"], per_query=True, **kwargs)
    assert per_query["query_id"].to_list() == queries
    mean = evaluate(RUN, ["mrr"], **kwargs)
    assert mean["num_q"].item() == len(queries)
    assert mean["mrr"].item() == pytest.approx(mean_mrr, abs=1e-15)
    counts = {r["query_id"]: (r["num_ret"], r["num_rel"]) for r in per_query.iter_rows(named=True)}
    if "q3" in counts:
        assert counts["q3"] == (1, 0)  # retrieved, nothing judged
    if "q4" in counts:
        assert counts["q4"] == (0, 1)  # judged, nothing retrieved


def test_negative_labels_are_judged_but_not_judged(evaluate: Evaluate) -> None:
    # d2 has label -1: in the pool, not judged. It neither counts as relevant nor as
    # judged non-relevant, so for bpref it is skipped like an unjudged document.
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["d1", "d2", "d3"], "rank": [1, 2, 3]})
    qrels = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["d1", "d2", "d3"], "relevance": [0, -1, 1]}
    )
    row = evaluate(run, ["bpref", "num_rel", "P@3", "ndcg"], qrels=qrels, per_query=True).row(
        0, named=True
    )
    assert row["num_rel"] == 1
    assert row["P@3"] == 1 / 3
    # R = 1, N = 1 (d1 only): one non-relevant above d3 -> 1 - min(1, 1) / min(1, 1) = 0.
    assert row["bpref"] == 0.0
    assert row["ndcg"] == pytest.approx((1 / math.log2(4)) / 1.0, abs=1e-15)


def test_relevance_level(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    qrels = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [1, 2, 0]}
    )
    level1 = evaluate(run, ["P@3", "mrr", "ndcg@3"], qrels=qrels).row(0, named=True)
    level2 = evaluate(
        run, ["P@3", "mrr", "ndcg@3", "P(rel=1)@3"], qrels=qrels, relevance_level=2
    ).row(0, named=True)
    assert (level1["P@3"], level1["mrr"]) == (2 / 3, 1.0)
    assert (level2["P@3"], level2["mrr"]) == (1 / 3, 1 / 2)
    assert level2["P(rel=1)@3"] == 2 / 3  # the metric's own level wins
    assert level1["ndcg@3"] == level2["ndcg@3"]  # graded metrics ignore the level


def test_cutoff_past_the_end_of_the_list(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "rank": [1, 2]})
    qrels = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "z"], "relevance": [1, 1]})
    row = evaluate(
        run,
        ["P@10", "recall@10", "ndcg@10", "map@10", "hit_rate@10"],
        qrels=qrels,
        per_query=True,
    ).row(0, named=True)
    assert row["P@10"] == 1 / 10  # divided by k, not by the 2 retrieved
    assert row["recall@10"] == 1 / 2
    assert row["ndcg@10"] == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-15)
    assert row["map@10"] == 1 / 2
    assert row["hit_rate@10"] == 1.0


def test_query_without_relevant_documents_scores_zero(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "rank": [1, 2]})
    qrels = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "relevance": [0, 0]})
    names = [
        "P@2",
        "recall@2",
        "ndcg@2",
        "ndcg",
        "map",
        "mrr",
        "r_precision",
        "bpref",
        "f1@2",
        "hit_rate@2",
        "recall(denominator='capped')@2",
        "map(denominator='capped')@2",
        "map(denominator='retrieved')@2",
    ]
    row = evaluate(run, names, qrels=qrels, per_query=True).row(0, named=True)
    assert {name: row[name] for name in names} == dict.fromkeys(names, 0.0)


def test_depth_truncates_like_trec_eval_M(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
    )
    qrels = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["b", "c"], "relevance": [1, 1]})
    row = evaluate(
        run, ["num_ret", "num_rel", "num_rel_ret", "map"], qrels=qrels, depth=2, per_query=True
    ).row(0, named=True)
    assert row == {
        "query_id": "q",
        "num_ret": 2,
        "num_rel": 2,
        "num_rel_ret": 1,
        "map": (1 / 2) / 2,
    }


def test_by_keys_are_separate_groups(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {
            "system": ["bm25", "bm25", "dense", "dense"],
            "query_id": ["q1", "q2", "q1", "q2"],
            "doc_id": ["a", "a", "b", "a"],
            "rank": [1, 1, 1, 1],
        }
    )
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "a", "a"], "relevance": [1, 1, 1]}
    )
    means = evaluate(run, ["P@1"], qrels=qrels, systems="system")
    # q3 is judged but retrieved by no system: it scores 0 in every group.
    assert means.to_dicts() == [
        {"system": "bm25", "num_q": 3, "P@1": 2 / 3},
        {"system": "dense", "num_q": 3, "P@1": 1 / 3},
    ]
    per_query = evaluate(run, ["P@1"], qrels=qrels, systems=["system"], per_query=True)
    assert per_query.columns == ["system", "query_id", "P@1"]
    assert per_query.height == 6


def test_by_key_in_the_judgments_is_matched(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {"market": ["us", "uk"], "query_id": ["q1", "q1"], "doc_id": ["a", "a"], "rank": [1, 1]}
    )
    qrels = pl.DataFrame(
        {
            "market": ["us", "uk"],
            "query_id": ["q1", "q1"],
            "doc_id": ["a", "b"],
            "relevance": [1, 1],
        }
    )
    means = evaluate(run, ["P@1"], qrels=qrels, by="market")
    assert means.to_dicts() == [
        {"market": "uk", "num_q": 1, "P@1": 0.0},
        {"market": "us", "num_q": 1, "P@1": 1.0},
    ]


def test_judged_table_null_rank_is_judged_not_retrieved(evaluate: Evaluate) -> None:
    table = pl.DataFrame(
        {
            "query_id": ["q"] * 3,
            "doc_id": ["a", "b", "c"],
            "rank": [1, 2, None],
            "relevance": [0, 1, 1],
        }
    )
    row = evaluate(table, ["recall@10", "num_ret", "num_rel"], per_query=True).row(0, named=True)
    assert row == {"query_id": "q", "recall@10": 1 / 2, "num_ret": 2, "num_rel": 2}


def test_fractional_and_integer_ids(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {"query_id": [1, 1], "doc_id": [10, 20], "rank": [1, 2]},
        schema={"query_id": pl.Int32, "doc_id": pl.Int64, "rank": pl.UInt8},
    )
    qrels = pl.DataFrame({"query_id": [1], "doc_id": [20], "relevance": [0.5]})
    out = evaluate(run, ["mrr", "ndcg"], qrels=qrels, relevance_level=0.5, per_query=True)
    assert out.row(0) == (1, 1 / 2, pytest.approx((0.5 / math.log2(3)) / 0.5))


def test_categorical_ids(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 1.0]},
        schema={"query_id": pl.Categorical, "doc_id": pl.Categorical, "score": pl.Float64},
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    assert evaluate(run, ["mrr"], qrels=qrels)["mrr"].item() == 1 / 2


def test_empty_inputs_give_empty_results(evaluate: Evaluate) -> None:
    run = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64})
    qrels = pl.DataFrame(
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}
    )
    per_query = evaluate(run, ["ndcg@10", "num_ret"], qrels=qrels, per_query=True)
    assert per_query.shape == (0, 3)
    assert per_query.schema == pl.Schema(
        {"query_id": pl.String, "ndcg@10": pl.Float64, "num_ret": pl.Int64}
    )
    mean = evaluate(run, ["ndcg@10"], qrels=qrels)
    assert mean.to_dicts() == [{"num_q": 0, "ndcg@10": None}]
    by = evaluate(run.with_columns(system=pl.lit("x")), ["ndcg@10"], qrels=qrels, systems="system")
    assert by.height == 0


def test_result_columns_are_named_as_given(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "rank": [1]})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    names = ["nDCG@10", "ndcg_cut_10", "P_1", "AP"]
    out = evaluate(run, names, qrels=qrels)
    assert out.columns == ["num_q", *names]
    assert out.row(0) == (1, 1.0, 1.0, 1.0, 1.0)


def test_custom_column_names(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"qid": ["q"], "docno": ["a"], "sim": [0.3]})
    qrels = pl.DataFrame({"qid": ["q"], "docno": ["a"], "label": [2]})
    out = evaluate(
        run,
        ["P@1"],
        qrels=qrels,
        query_id="qid",
        doc_id="docno",
        score="sim",
        relevance="label",
        per_query=True,
    )
    assert out.to_dicts() == [{"qid": "q", "P@1": 1.0}]


def test_lazy_input_is_not_computed_before_collect() -> None:
    def explode(frame: pl.DataFrame) -> pl.DataFrame:
        raise RuntimeError("the run was read before collect()")

    run = pl.LazyFrame({"query_id": ["q"], "doc_id": ["a"], "rank": [1]}).map_batches(explode)
    qrels = pl.LazyFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    plan = irm.evaluate(run, ["ndcg@10", "map"], qrels=qrels)
    assert isinstance(plan, pl.LazyFrame)
    with pytest.raises(RuntimeError, match="the run was read before collect"):
        plan.collect()


def test_expressions_work_on_lazy_frames(frame_kind: str) -> None:
    table = pl.DataFrame({"query_id": ["a", "a", "b"], "rank": [1, 2, 1], "relevance": [0, 1, 1]})
    frame = table.lazy() if frame_kind == "LazyFrame" else table
    out = frame.group_by("query_id").agg(irm.mrr(), irm.ndcg(k=2)).sort("query_id")
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert result.to_dicts() == [
        {"query_id": "a", "mrr": 0.5, "ndcg@2": pytest.approx(1 / math.log2(3))},
        {"query_id": "b", "mrr": 1.0, "ndcg@2": 1.0},
    ]


def test_check_duplicates_off_still_refuses_judged_duplicates(evaluate: Evaluate) -> None:
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    # An unjudged document twice: not looked for, so it counts twice in num_ret.
    unjudged_twice = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "z", "z"], "rank": [1, 2, 3]}
    )
    with pytest.raises(irm.DuplicateError, match="has 1 repeated listing"):
        evaluate(unjudged_twice, ["num_ret"], qrels=qrels)
    row = evaluate(
        unjudged_twice, ["num_ret", "P@1"], qrels=qrels, per_query=True, check_duplicates=False
    ).row(0, named=True)
    assert row == {"query_id": "q", "num_ret": 3, "P@1": 1.0}
    # A judged document twice would change the metrics: still refused.
    judged_twice = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "a"], "rank": [1, 2]})
    with pytest.raises(
        irm.DuplicateError,
        match=re.escape(
            "column 'doc_id': query 'q' has judged document(s) listed more than once, in "
            "the run or in the judgments: 1 repeated row(s) once its judgments are joined to "
            "its run rows (the run's own duplicate checks are off: check_duplicates=False); "
            "keep one row per document"
        ),
    ):
        evaluate(judged_twice, ["map"], qrels=qrels, check_duplicates=False)
    # Two judged documents at one rank: still refused.
    qrels2 = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "relevance": [1, 0]})
    shared_rank = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "rank": [1, 1]})
    with pytest.raises(
        irm.DuplicateError,
        match=re.escape(
            "column 'rank' of the run: query 'q' has 1 judged document(s) at a rank another "
            "judged document holds"
        ),
    ):
        evaluate(shared_rank, ["map"], qrels=qrels2, check_duplicates=False)
    with pytest.raises(
        irm.InvalidValueError, match="check_duplicates must be True or False, got 'no'"
    ):
        evaluate(shared_rank, ["map"], qrels=qrels2, check_duplicates="no")


def test_check_duplicates_off_gives_the_same_values_on_clean_runs(evaluate: Evaluate) -> None:
    from polars_irmetrics.io.files import sample_paths

    runs, qrels_path = sample_paths()
    run, qrels = pl.read_parquet(runs[0]), pl.read_parquet(qrels_path)
    names = list(irm.DEFAULT_METRICS)
    checked = evaluate(run, names, qrels=qrels, per_query=True)
    unchecked = evaluate(run, names, qrels=qrels, per_query=True, check_duplicates=False)
    assert checked.equals(unchecked)


def test_division_by_a_cutoff_is_correctly_rounded(evaluate: Evaluate) -> None:
    # polars multiplies a column by 1/10 when asked to divide it by 10, and
    # 6 * 0.1 = 0.6000000000000001; trec_eval prints 6 / 10.0 = 0.6 (and 3 / 10.0 = 0.3).
    run = pl.DataFrame(
        {
            "query_id": ["q1"] * 10 + ["q2"] * 10,
            "doc_id": [f"d{i}" for i in range(10)] * 2,
            "rank": list(range(1, 11)) * 2,
        }
    )
    qrels = pl.DataFrame(
        {
            "query_id": ["q1"] * 6 + ["q2"] * 3,
            "doc_id": [f"d{i}" for i in range(6)] + [f"d{i}" for i in range(3)],
            "relevance": [1] * 9,
        }
    )
    out = evaluate(run, ["P@10", "unjudged@10"], qrels=qrels, per_query=True)
    assert out["P@10"].to_list() == [6 / 10, 3 / 10]
    assert out["unjudged@10"].to_list() == [(10 - 6) / 10, (10 - 3) / 10]


def _layouts(frame: pl.DataFrame) -> list[pl.DataFrame]:
    """The same rows reversed, shuffled, and cut into many small chunks."""
    pieces = [frame.slice(i, 7) for i in range(0, frame.height, 7)]
    return [
        frame.reverse(),
        frame.sample(fraction=1.0, shuffle=True, seed=3),
        pl.concat(pieces[::-1], rechunk=False),
    ]


def _synthetic(queries: int, docs: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run with scores and about 20 graded judgments per query, half retrieved."""
    rng = np.random.default_rng(7)
    qid = np.repeat([f"q{q:04d}" for q in range(queries)], docs)
    run = pl.DataFrame(
        {
            "query_id": qid,
            "doc_id": [f"d{d:03d}" for d in rng.integers(0, 10 * docs, queries * docs)],
            "score": rng.random(queries * docs).round(2),
        }
    ).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    judged = pl.DataFrame(
        {
            "query_id": np.repeat([f"q{q:04d}" for q in range(queries)], 20),
            "doc_id": [f"d{d:03d}" for d in rng.integers(0, 2 * docs, queries * 20)],
            "relevance": rng.integers(-1, 4, queries * 20),
        }
    ).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    return run, judged


def test_values_do_not_depend_on_row_layout_or_engine(evaluate: Evaluate) -> None:
    # Float sums are fixed-point sums (Scope.sum), exact in any order: never per-batch
    # float partial sums, whose rounding depends on where the engine's batches end.
    run, qrels = _synthetic(400, 60)
    names = [*irm.DEFAULT_METRICS, "err@10", "rbp", "infAP", "ndcg_rel", "Rndcg", "G"]
    reference = evaluate(run, names, qrels=qrels, per_query=True)
    for layout in _layouts(run):
        assert evaluate(layout, names, qrels=qrels, per_query=True).equals(reference)
    in_memory = irm.evaluate(run.lazy(), names, qrels=qrels, per_query=True)
    assert in_memory.collect(engine="in-memory").equals(reference)


#: One spelling of every registered metric, with non-default parameters where they
#: change the terms summed.
EVERY_METRIC = [
    *irm.DEFAULT_METRICS, "cg@10", "dcg@5", "idcg", "ndcg(gain='exponential')@10",
    "ndcg(ideal='retrieved')", "map(denominator='capped')@10",
    "recall(denominator='capped')@10", "err@10", "err(max_grade=2.5)", "rbp",
    "rbp(p=0.95, gain='linear')@20", "rbp_residual", "arhr", "mar@10", "fcp", "judged@10",
    "gm_map", "gm_bpref", "iprec_at_recall_0.30", "11pt_avg", "relative_P_5",
    "Rprec_mult_0.60", "infAP", "set_map", "num_nonrel_judged_ret", "ndcg_rel", "Rndcg",
    "binG", "G", "utility", "trec_rbp", "rbp_resid", "unjudged@10",
    "trec_ndcg(gains='1=3,2=9')@5", "g(gains='0=1,3=-2')", "rndcg(gains='1=0.5,4=10')",
    "NumQ", "SetF(beta=2.0)", "precision(agg='median')@5", "map(agg='std')", "NumRet(rel=2)",
    "f1_beta(beta=2)@5", "partial_auc@5", "pap@5", "covered_users@5",
    "ncrr@5", "ncrr", "rocauc@5", "rocauc(agg='ci_halfwidth')@3",
]  # fmt: skip


def test_every_metric_is_in_the_engine_batch_test() -> None:
    covered = {irm.parse_metric(name).metric.name for name in EVERY_METRIC}
    # click metrics read an impression log: evaluate refuses them (tests/test_online.py),
    # as it refuses preference and judgment-group measures (tests/test_trec_eval_versions.py);
    # beyond-accuracy metrics (level "collection") are not per-query formulas of this
    # plan: tests/test_recsys.py covers them
    offline = {
        m.name
        for m in irm.list_metrics()
        if set(m.reads) <= {"run", "judgments"} and m.level == "query"
    }
    assert covered == offline


def _every_metric_script(evaluate: str) -> str:
    """A script that runs ``evaluate``: code using ``runs``, ``{order: run}`` by score and
    by rank, of every metric's synthetic case, and ``qrels``. 40 queries are enough: with
    ``**`` or a division by a constant put back in ``power`` and ``divide``, the
    batch-size test fails there (checked), at a third of 150 queries' time."""
    return textwrap.dedent(
        """
        import polars as pl, polars_irmetrics as irm
        from tests.test_conventions import EVERY_METRIC, _synthetic
        run, qrels = _synthetic(40, 30)
        rank = pl.col("score").rank("ordinal", descending=True).over("query_id")
        runs = {"score": run, "rank": run.with_columns(rank.alias("rank")).drop("score")}
        """
    ) + textwrap.dedent(evaluate)


def _in_a_fresh_python(
    script: str, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """``script`` run by this Python in a process of its own (``args`` its arguments),
    from the repository's root, with ``env`` beside this process' environment (polars
    reads its settings when it starts); it must succeed."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done


#: the batch-size test's script: per query, no agg= (refused there: the per-query values
#: are not summarized), both orders
_EVERY_METRIC_ENGINES = _every_metric_script(
    """
    per_query = [name for name in EVERY_METRIC if "agg=" not in name]
    for order, run in runs.items():
        plan = irm.evaluate(run.lazy(), per_query, qrels=qrels, per_query=True)
        streaming = plan.collect(engine="streaming")
        in_memory = plan.collect(engine="in-memory")
        differ = [c for c in streaming.columns if not streaming[c].equals(in_memory[c])]
        print(f"{order} differ:", differ)
    """
)

#: runs each script of a JSON object ``{name: script}`` (argv[1]) in a namespace of its
#: own, its output between "=== name" and "=== name ok" (or its traceback and "=== name
#: failed"): one process for the scripts that need the same start-up settings
_RUN_EACH = """
import json, sys, traceback
for name, script in json.loads(sys.argv[1]).items():
    print(f"=== {name}", flush=True)
    try:
        exec(script, {"__name__": name})
    except BaseException:
        traceback.print_exc(file=sys.stdout)
        print(f"=== {name} failed", flush=True)
    else:
        print(f"=== {name} ok", flush=True)
"""


@pytest.fixture(scope="module")
def one_row_batches() -> dict[str, str]:
    """The output of each script that runs with one-row batches
    (POLARS_IDEAL_MORSEL_SIZE=1, read when polars starts, so in a process of its own),
    by name, how it ended (``f"{name} ended"``: ``f"{name} ok"`` or ``f"{name} failed"``)
    and the process' log ("log"): the batch-size tests' scripts in one process (its
    start and imports once, for both tests)."""
    scripts = {"every metric": _EVERY_METRIC_ENGINES, "recommender": _RECOMMENDER_ENGINES}
    done = _in_a_fresh_python(_RUN_EACH, {"POLARS_IDEAL_MORSEL_SIZE": "1"}, json.dumps(scripts))
    parts = re.split(r"^=== (.*)\n", done.stdout, flags=re.MULTILINE)
    # "", name, its output, f"{name} ok", "", name, ...: each script's output and end
    out = {"log": done.stderr}
    for name in scripts:
        at = parts.index(name)
        out[name], out[f"{name} ended"] = parts[at + 1], parts[at + 2]
    return out


def _one_row_output(one_row_batches: dict[str, str], name: str) -> str:
    """The output of the script ``name`` of :func:`one_row_batches`; it must succeed."""
    out = one_row_batches[name]
    assert one_row_batches[f"{name} ended"] == f"{name} ok", out + one_row_batches["log"]
    return out


def test_values_do_not_depend_on_the_streaming_engines_batch_size(
    one_row_batches: dict[str, str],
) -> None:
    # With one-row batches (POLARS_IDEAL_MORSEL_SIZE=1, read when polars starts, so in a
    # process of its own): polars raises a constant to a column's powers, and divides a
    # column by a constant, differently on a batch of one row, so a term built with
    # those kernels would differ by a unit in the last place from the in-memory engine.
    # The formulas use metrics._common.power and divide instead. Both orders, one process
    # (_EVERY_METRIC_ENGINES).
    out = _one_row_output(one_row_batches, "every metric") + one_row_batches["log"]
    assert "score differ: []" in out
    assert "rank differ: []" in out


def _group_by_nodes(plan: pl.LazyFrame) -> tuple[int, list[str]]:
    """The streaming engine's physical plan of ``plan`` (polars' own graph of the nodes
    ``collect(engine="streaming")`` runs, built without running them): its number of
    streaming group-by nodes, and the nodes that run an aggregation in the in-memory
    engine's fallback (their label), where polars sends a group-by whose aggregates are
    not all reductions of row-wise expressions (POLARS_VERBOSE then logs "keys/aggregates
    are not partitionable: running default HASH AGGREGATION" as it runs)."""
    graph = plan.show_graph(engine="streaming", plan_stage="physical", raw_output=True)
    assert graph is not None
    kinds = re.findall(r'^\d+ \[label="([^"\\]*)', graph, re.MULTILINE)
    fallbacks = re.findall(r'^\d+ \[label="(in-memory-map\\nAGGREGATE.*)$', graph, re.MULTILINE)
    return kinds.count("group-by"), fallbacks


def test_the_metric_group_by_streams_for_every_metric() -> None:
    # A plan guard, not a timing: polars' streaming group-by runs its partitioned
    # aggregation only when every aggregate is a reduction of row-wise expressions; a
    # row compared with a per-query value (R, a cut-off from R) or a filter inside the
    # aggregation sends the whole group-by to a slower fallback, an in-memory-map node
    # of the streaming engine's physical plan. Formulas read per-query values through
    # Scope.window and use when/then instead of filter. Each order, with and without
    # the duplicate checks, the metrics in the same 8 plans as the verbose log read here
    # before (a formula that is not a reduction sends its plan's group-by to the
    # fallback, whose node the graph names).
    run, qrels = _synthetic(40, 30)
    rank = pl.col("score").rank("ordinal", descending=True).over("query_id")
    runs = {"score": run, "rank": run.with_columns(rank.alias("rank")).drop("score")}
    for order, frame in runs.items():
        for checked in (True, False):
            for part in range(8):
                plan = irm.evaluate(
                    frame.lazy(), EVERY_METRIC[part::8], qrels=qrels, check_duplicates=checked
                )
                case = f"order {order}, check_duplicates={checked}, part {part}"
                group_bys, fallbacks = _group_by_nodes(plan)
                assert group_bys > 0, case  # the graph is there to read
                assert fallbacks == [], case


#: Parameters of the recommendation table's metrics beyond the benchmark's defaults
#: that change a formula's terms (a given catalogue size, other cut-offs).
RECOMMENDER_VARIANTS = [
    "serendipity(kind='kotkov', n_items=500)@5", "reco_accuracy@3", "mcc@25",
    "serendipity(kind='kotkov')@3",
]  # fmt: skip


#: The benchmark's recommender, beyond-accuracy and exposure metrics, at a small size,
#: collected on each engine: prints the metrics skipped, the columns and those that differ.
_RECOMMENDER_ENGINES = """
import os, sys, warnings
import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning
from tests import test_conventions
from tests.test_conventions import RECOMMENDER_VARIANTS
root = os.path.dirname(os.path.dirname(os.path.abspath(test_conventions.__file__)))
if os.path.join(root, "benchmarks") not in sys.path:
    sys.path.insert(0, os.path.join(root, "benchmarks"))
import recsys42
with warnings.catch_warnings():
    warnings.simplefilter("ignore", IrmWarning)
    data = recsys42.tables(3000, 100, 400)
    names, skipped, keywords = recsys42.plan_metrics((*recsys42.WANTED, *RECOMMENDER_VARIANTS))
    print("skipped:", sorted(skipped))
    given = {k: data[k].lazy() for k in sorted(keywords)}
    plan = irm.evaluate(data["run"].lazy(), names, **given, unseen_items="drop")
    streaming = plan.collect(engine="streaming")
    in_memory = plan.collect(engine="in-memory")
differ = [c for c in streaming.columns if not streaming[c].equals(in_memory[c])]
print("columns:", len(streaming.columns), "differ:", differ)
"""


def test_recommender_and_exposure_metrics_do_not_depend_on_the_engine(
    one_row_batches: dict[str, str],
) -> None:
    # The benchmark's recommender, beyond-accuracy and exposure metrics in one plan
    # (benchmarks/recsys42.py's tables at a small size), with the engine's own batches
    # (here) and with one-row batches (a process of its own: polars reads the size when
    # it starts), against the in-memory engine, to the bit. RecTools' serendipity once
    # divided by the catalogue's size joined on every row, which polars' in-memory
    # engine divides by as a product with its reciprocal (a unit in the last place off
    # the streaming engine's quotient on some values).
    here = io.StringIO()
    with contextlib.redirect_stdout(here):
        exec(_RECOMMENDER_ENGINES, {"__name__": "recommender_engines"})
    one_row = _one_row_output(one_row_batches, "recommender")  # the fixture's process
    # every wanted metric is in the plan but those of reference= (their route is
    # apart: a call of their own)
    skipped = "['intersection@10', 'unexpectedness@10']"
    for out in (here.getvalue(), one_row):
        assert "differ: []" in out, out
        assert f"skipped: {skipped}" in out, out
        assert f"columns: {len(RECOMMENDER_VARIANTS) + 42}" in out, out


def test_the_recommender_and_exposure_group_bys_stream() -> None:
    # The guard above, for the benchmark's recommender, beyond-accuracy and exposure
    # metrics (benchmarks/recsys42.py's tables at a small size): a sum of a filter
    # (fixed_sum(value.filter(top))) once sent the per-user group-by of every
    # recommendation-table formula to polars' in-memory engine, which holds all its
    # rows at once (a log larger than memory would not fit). Formulas read the top k
    # through CollectionScope.within (when/then) where they do arithmetic on it.
    # Each family of the benchmark (and the variants) in a plan of its own, as the
    # verbose log read here before had them; a formula that is not a reduction still
    # sends its family's group-by to the fallback, whose node the graph names.
    here: dict[str, Any] = {"__name__": "recommender_group_bys"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(_RECOMMENDER_ENGINES.split("    streaming = plan.collect")[0], here)
    recsys42, names, given, data = here["recsys42"], here["names"], here["given"], here["data"]
    # the variants beside RecTools' metrics (unseen_items= needs a reader)
    families = [
        (*family, *RECOMMENDER_VARIANTS) if "mcc@10" in family else family
        for family in recsys42.FAMILIES.values()
    ]
    assert sorted(n for family in families for n in family if n in names) == sorted(names)
    group_bys = 0
    for family in families:
        wanted = [name for name in names if name in family]
        kept = recsys42.reading(wanted, {**given, "unseen_items": "drop"})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrmWarning)
            plan = irm.evaluate(data["run"].lazy(), wanted, **kept)
        found, fallbacks = _group_by_nodes(plan)
        group_bys += found
        assert fallbacks == [], wanted
    assert group_bys > 0  # the graph is there to read
