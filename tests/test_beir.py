"""BEIR folders, and the vector-search recipe: knn runs scored as MTEB scores them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import pytrec_eval
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import FileFormatError, MissingFileError


def _write_beir(root: Path, n_docs: int = 30, n_queries: int = 6) -> None:
    rng = np.random.default_rng(3)
    with (root / "corpus.jsonl").open("w") as handle:
        for i in range(n_docs):
            doc = {"_id": f"d{i}", "title": f"T{i}", "text": f"text {i}", "metadata": {}}
            handle.write(json.dumps(doc) + "\n")
    with (root / "queries.jsonl").open("w") as handle:
        for i in range(n_queries):
            handle.write(json.dumps({"_id": str(i), "text": f"query {i}"}) + "\n")
    (root / "qrels").mkdir()
    lines = ["query-id\tcorpus-id\tscore"]
    for q in range(n_queries):
        for d in rng.choice(n_docs, size=min(4, n_docs), replace=False):
            lines.append(f"{q}\td{d}\t{int(rng.integers(1, 3))}")
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")


def test_read_beir(tmp_path: Path) -> None:
    _write_beir(tmp_path, n_docs=3, n_queries=2)
    corpus, queries, judgments = irm.read_beir(tmp_path)
    assert isinstance(corpus, pl.LazyFrame)
    assert_frame_equal(
        corpus.collect(),
        pl.DataFrame(
            {
                "doc_id": ["d0", "d1", "d2"],
                "title": ["T0", "T1", "T2"],
                "text": ["text 0", "text 1", "text 2"],
            }
        ),
    )
    assert queries.collect().rows() == [("0", "query 0"), ("1", "query 1")]
    assert judgments.collect_schema() == pl.Schema(
        {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}
    )
    assert judgments.collect().height == 6
    renamed = irm.read_beir(tmp_path, query_id="qid", doc_id="docno", relevance="label")
    assert renamed.judgments.collect_schema().names() == ["qid", "docno", "label"]


def _append(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)


@pytest.mark.parametrize(
    ("damage", "error", "message"),
    [
        (
            lambda root: (root / "corpus.jsonl").unlink(),
            MissingFileError,
            "corpus.jsonl: no such file; expected the BEIR corpus (JSON lines)",
        ),
        (
            lambda root: (root / "queries.jsonl").write_text("_id\ttext\n"),
            FileFormatError,
            "queries.jsonl, line 1: not valid JSON: '_id\\ttext'; expected the BEIR "
            "queries, one JSON object with an '_id' per line",
        ),
        (
            lambda root: _append(root / "corpus.jsonl", '{"_id": "x", "text": "cut\n'),
            FileFormatError,
            'corpus.jsonl, line 31: not valid JSON: \'{"_id": "x", "text": "cut\'; '
            "expected the BEIR corpus, one JSON object with an '_id' per line",
        ),
        (
            lambda root: _append(root / "corpus.jsonl", '\n{"title": "no id"}\n'),
            FileFormatError,
            "corpus.jsonl, line 32: no '_id' (or a null one): '{\"title\": \"no id\"}'",
        ),
        (
            lambda root: _append(root / "queries.jsonl", '["q9", "text"]\n'),
            FileFormatError,
            'queries.jsonl, line 7: not a JSON object: \'["q9", "text"]\'',
        ),
        (
            lambda root: (root / "qrels" / "test.tsv").write_text("q1\td1\t1\n"),
            FileFormatError,
            "test.tsv, line 1: ('q1', 'd1', '1') is not BEIR's qrels header "
            "'query-id<TAB>corpus-id<TAB>score'",
        ),
        (
            lambda root: _append(root / "qrels" / "test.tsv", "5\td1\n"),
            FileFormatError,
            "test.tsv, line 26: 2 tab-separated field(s) '5\\td1', not 3; expected BEIR "
            "judgments: query-id<TAB>corpus-id<TAB>score (an integer) per line",
        ),
        (
            lambda root: _append(root / "qrels" / "test.tsv", "5\td1\t1\t0\n"),
            FileFormatError,
            "test.tsv, line 26: 4 tab-separated field(s) '5\\td1\\t1\\t0', not 3",
        ),
        (
            lambda root: _append(root / "qrels" / "test.tsv", "5\td1\t0.5\n"),
            FileFormatError,
            "test.tsv, line 26: score '0.5' is not an integer",
        ),
        (
            lambda root: _append(root / "qrels" / "test.tsv", "5\t\t1\n"),
            FileFormatError,
            "test.tsv, line 26: an empty id: '5\\t\\t1'",
        ),
        (
            lambda root: (root / "qrels" / "test.tsv").rename(root / "qrels" / "dev.tsv"),
            MissingFileError,
            "test.tsv: no such file; expected BEIR judgments (query-id, corpus-id, score); "
            "the splits here: dev",
        ),
    ],
)
def test_bad_folders_name_the_file(
    tmp_path: Path, damage: object, error: type[Exception], message: str
) -> None:
    _write_beir(tmp_path)
    damage(tmp_path)  # type: ignore[operator]
    with pytest.raises(error, match=re.escape(message)):
        irm.read_beir(tmp_path)


def test_quotes_in_qrels_ids_are_kept(tmp_path: Path) -> None:
    _write_beir(tmp_path, n_docs=3, n_queries=2)
    _append(tmp_path / "qrels" / "test.tsv", '"q\td"1\t2\n')
    judgments = irm.read_beir(tmp_path).judgments.collect()
    assert judgments.row(-1) == ('"q', 'd"1', 2)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(
        MissingFileError, match=re.escape("nothing: no such folder; expected a BEIR dataset")
    ):
        irm.read_beir(tmp_path / "nothing")


MTEB = {"ndcg@10": "ndcg_cut_10", "map@10": "map_cut_10", "recall@10": "recall_10", "P@10": "P_10"}


def test_recipe_knn_runs_scored_as_mteb_scores_them(tmp_path: Path) -> None:
    _write_beir(tmp_path)
    corpus, queries, judgments = irm.read_beir(tmp_path)
    rng = np.random.default_rng(5)
    docs = corpus.select("doc_id").collect()
    topics = queries.select("query_id").collect()
    runs = {}
    for model in ("small", "large"):
        doc_vectors = docs.with_columns(
            embedding=rng.standard_normal((docs.height, 8)).astype(np.float32)
        )
        query_vectors = topics.with_columns(
            embedding=rng.standard_normal((topics.height, 8)).astype(np.float32)
        )
        runs[model] = irm.knn(query_vectors, doc_vectors.lazy(), k=10)
    qrels = judgments.collect()
    # MTEB's scorer: pytrec_eval with map_cut, ndcg_cut, recall and P at 10
    truth: dict[str, dict[str, int]] = {}
    for q, d, r in qrels.iter_rows():
        truth.setdefault(q, {})[d] = r
    evaluator = pytrec_eval.RelevanceEvaluator(
        truth, {"map_cut.10", "ndcg_cut.10", "recall.10", "P.10"}
    )
    for run in runs.values():
        scored: dict[str, dict[str, float]] = {}
        for q, d, s, _ in run.iter_rows():
            scored.setdefault(q, {})[d] = float(s)
        reference = evaluator.evaluate(scored)
        ours = irm.evaluate(run, list(MTEB), qrels=qrels, per_query=True)
        for row in ours.iter_rows(named=True):
            for name, theirs in MTEB.items():
                assert row[name] == pytest.approx(reference[row["query_id"]][theirs], abs=1e-12)
    table = irm.compare(runs, ["ndcg@10"], qrels=judgments)
    assert table.select("system", "baseline").row(0) == ("large", "small")
