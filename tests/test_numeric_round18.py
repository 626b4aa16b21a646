"""Numeric scale and order: values that must come out with the peer's bits.

* trec_eval's ``rbp`` and ``rbp_resid`` (m_rbp.c, m_rbp_resid.c of usnistgov/trec_eval
  10.0) weigh rank ``i + 1`` by ``cur_p``, made by one product ``cur_p = cur_p * p`` per
  position from 1.0, and add their terms one by one in rank order; ``rbp_resid`` is
  ``p**num_ret + (1 - p) * (the sum of cur_p over the unjudged positions)``. The
  expected values below are those loops, transcribed (not pow, not an exact sum).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main


def _m_rbp(labels: list[int | None], p: float) -> float:
    """m_rbp.c's loop on one query's labels in rank order (None: unjudged); gains are
    the labels, divided by the query's largest label when it exceeds 1."""
    top = max([label for label in labels if label is not None] + [0])
    total, cur_p = 0.0, 1.0
    for label in labels:
        gain = 0.0 if label is None or label <= 0 else label / top if top > 1 else label
        if gain != 0:
            total += gain * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * total


def _m_rbp_resid(labels: list[int | None], p: float) -> float:
    """m_rbp_resid.c's loop: 0 when every retrieved document is judged."""
    total, cur_p, unjudged = 0.0, 1.0, 0
    for label in labels:
        if label is None or label < 0:
            unjudged += 1
            total += cur_p
        cur_p = cur_p * p
    return cur_p + (1.0 - p) * total if unjudged else 0.0


def test_rbp_prints_trec_evals_digits_on_a_rounding_boundary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # labels 1, 2, 2, 1, 3 (largest 3: gains 1/3, 2/3, 2/3, 1/3, 1) at weights
    # 1, .5, .25, .125, .0625: exactly 1/3 + 1/3 + 1/6 + 1/24 + 1/16 = 0.9375 and
    # 0.5 * 0.9375 = 0.46875 (printed 0.4688); added in rank order in doubles the sum is
    # 0.9374999999999999, so trec_eval 10.0 computes 0.46874999999999994 and prints
    # 0.4687 (its binary's output on these files)
    docs = ["d1", "d2", "d3", "d4", "d5"]
    labels = [1, 2, 2, 1, 3]
    qrels = "".join(f"q1 0 {d} {label}\n" for d, label in zip(docs, labels, strict=True))
    run = "".join(f"q1 Q0 {d} {i} {6 - i} r\n" for i, d in enumerate(docs, 1))
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "-m", "rbp.p=0.5", *files])
    assert (status, capsys.readouterr().out) == (0, "rbp_p=0.5             \tall\t0.4687\n")
    frame_run = pl.DataFrame({"query_id": "q1", "doc_id": docs, "rank": [1, 2, 3, 4, 5]})
    frame_qrels = pl.DataFrame({"query_id": "q1", "doc_id": docs, "relevance": labels})
    got = irm.evaluate(frame_run, "trec_rbp(p=0.5)", qrels=frame_qrels, per_query=True)
    assert got["trec_rbp(p=0.5)"].to_list() == [0.46874999999999994]


@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_rbp_and_its_residual_have_trec_evals_bits_at_depth_1000(p: float) -> None:
    # each query: up to 1000 retrieved documents, labels drawn from None (unjudged),
    # -1 (in the pool, not judged), 0, 1, 2; the values are m_rbp.c's and
    # m_rbp_resid.c's doubles (exp(k ln p) and an exact sum differ in the last bits of
    # most of these queries)
    draw = random.Random(18)
    runs, judged, expected = [], [], {}
    for q in range(8):
        depth = draw.choice([1, 7, 100, 1000])
        labels = [draw.choice([None, None, -1, 0, 1, 2]) for _ in range(depth)]
        if q == 0:
            labels = [None] * depth  # nothing judged
        for rank, label in enumerate(labels, 1):
            runs.append((f"q{q}", f"d{rank}", rank))
            if label is not None:
                judged.append((f"q{q}", f"d{rank}", label))
        judged.append((f"q{q}", "missed", 1))  # judged relevant, never retrieved
        expected[f"q{q}"] = (_m_rbp(labels, p), _m_rbp_resid(labels, p))
    run = pl.DataFrame(runs, schema=["query_id", "doc_id", "rank"], orient="row")
    qrels = pl.DataFrame(judged, schema=["query_id", "doc_id", "relevance"], orient="row")
    names = [f"trec_rbp(p={p})", f"trec_rbp_resid(p={p})"]
    for engine in ("in-memory", "streaming"):
        got = irm.evaluate(run.lazy(), names, qrels=qrels.lazy(), per_query=True)
        rows = got.collect(engine=engine).sort("query_id").rows()
        assert {q: (a, b) for q, a, b in rows} == expected, engine


@pytest.mark.parametrize("dtype", [pl.Float32, pl.Float64])
def test_knn_l2_distance_zero_is_a_positive_zero(dtype: pl.DataType) -> None:
    # l2's score is -sqrt(squared distance): for a document equal to the query (and the
    # zero query against the zero document) -sqrt(0.0) is -0.0, which printed "-0.0";
    # the score is 0.0 (sign bit clear), the other scores unchanged:
    # |(1, 2, 3) - (3, 2, 1)| = sqrt(8) and |(1, 2, 3)| = sqrt(14)
    schema = {"id": pl.String, "embedding": pl.Array(dtype, 3)}
    vectors = [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [3.0, 2.0, 1.0]]
    queries = pl.DataFrame({"id": ["a", "b"], "embedding": vectors[:2]}, schema=schema)
    corpus = pl.DataFrame({"id": ["x", "y", "z"], "embedding": vectors}, schema=schema)
    run = irm.knn(
        queries.rename({"id": "query_id"}), corpus.rename({"id": "doc_id"}), k=2, metric="l2"
    )
    width = 4 if dtype == pl.Float32 else 8
    as_float = np.float32 if dtype == pl.Float32 else np.float64
    expected = [
        ("a", "x", 0.0, 1),
        ("a", "z", float(-np.sqrt(as_float(8.0))), 2),
        ("b", "y", 0.0, 1),
        ("b", "z", float(-np.sqrt(as_float(14.0))), 2),
    ]
    assert run.rows() == expected
    scores = run["score"].to_numpy()
    assert scores.dtype.itemsize == width
    assert np.signbit(scores).tolist() == [False, True, False, True]


def test_bpref_expression_has_the_bits_of_evaluate() -> None:
    # R = 5 relevant (labels 3, 3, 3, 2, 1), N = 6 judged non-relevant: cap = min(N, R) = 5.
    # The relevant documents retrieved are ranked 15 (1 non-relevant above) and 27
    # (3 above): (1 - 1/5) + (1 - 3/5) = 0.8 + 0.4 is 1.2000000000000002 in doubles,
    # / 5 = 0.24000000000000005 (trec_eval's and evaluate's value). In a user's
    # group-by the cap was a scalar, and polars multiplied by its reciprocal:
    # 3 * 0.2 = 0.6000000000000001, 1 - 0.6000000000000001 = 0.3999999999999999 and
    # 0.8 + 0.3999999999999999 = 1.2, so the expression gave 0.24
    judged = pl.DataFrame(
        {
            "query_id": "q1",
            "doc_id": [f"d{i}" for i in range(13)],
            "rank": [3, 9, 15, 17, 21, 27, None, None, None, None, None, None, None],
            "relevance": [0, -1, 3, 0, 0, 3, 3, -1, 0, 0, 2, 1, 0],
        }
    )
    run = judged.filter(pl.col("rank").is_not_null()).select("query_id", "doc_id", "rank")
    qrels = judged.select("query_id", "doc_id", "relevance")
    expected = 0.24000000000000005
    assert irm.evaluate(run, "bpref", qrels=qrels, per_query=True)["bpref"].to_list() == [expected]
    assert judged.select(irm.bpref()).item() == expected
    assert judged.group_by("query_id").agg(irm.bpref())["bpref"].to_list() == [expected]
