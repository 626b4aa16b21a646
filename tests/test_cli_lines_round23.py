"""``irm`` names the line of a value the checks refuse in a run or judgments file (a
null id, rank, score or label, a NaN score, a rank below 1) with the fix as a file's
user makes it, not the library's Python; and reads the numbers polars' CSV reader
leaves as text (``nan``, ``Infinity``, `` 1.5``, ``+2``) and ranks written as floats
(``3.0``) as the numbers they are, a rank that is no whole number refused at its line."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from .helpers import irm_in_process

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"
NULL_FIX = "fill it in or drop the line"
NAN_FIX = "write a number there (-inf ranks the document last) or drop the line"

# (file, its text, the message after "irm: error: ")
REFUSED = [
    (
        "run.csv",
        "query_id,doc_id,score\nq1,d1,2\nq2,,1\n",
        "run.csv, line 3: column 'doc_id' of the run has 1 null value(s) in query 'q2'; "
        f"every row needs a document id: {NULL_FIX}",
    ),
    (
        "run.csv",
        "query_id,doc_id,score\nq1,d1,2\nq1,d2,NaN\n",
        "run.csv, line 3: column 'score' of the run has 1 NaN value(s) in query 'q1'; "
        f"NaN cannot be ranked: {NAN_FIX}",
    ),
    (  # a NaN polars' CSV reader leaves as text, read as NaN, then refused as NaN
        "run.csv",
        "query_id,doc_id,score\nq1,d1,nan\nq1,d2,1\n",
        "run.csv, line 2: column 'score' of the run has 1 NaN value(s) in query 'q1'; "
        f"NaN cannot be ranked: {NAN_FIX}",
    ),
    (
        "run.tsv",
        "query_id\tdoc_id\tscore\nq1\td1\t2\n\td2\t1\n",
        f"run.tsv, line 3: column 'query_id' of the run has null values; every row needs a "
        f"query_id: {NULL_FIX}",
    ),
    (
        "run.csv",
        "query_id,doc_id,rank\nq1,d1,0\nq1,d2,1\n",
        "run.csv, line 2: column 'rank' of the run has 1 rank(s) below 1 in query 'q1'; "
        "ranks start at 1 for the top document: number the ranks from 1 (add 1 to 0-based "
        "ranks)",
    ),
    (  # a quoted field over two lines: the line the record starts on
        "run.csv",
        'query_id,doc_id,score\nq1,"d\n1",2\nq1,d2,NaN\n',
        "run.csv, line 4: column 'score' of the run has 1 NaN value(s) in query 'q1'; "
        f"NaN cannot be ranked: {NAN_FIX}",
    ),
    (
        "run.jsonl",
        '{"query_id": "q1", "doc_id": "d1", "score": 2}\n\n'
        '{"query_id": "q1", "doc_id": null, "score": 1}\n',
        "run.jsonl, line 3: column 'doc_id' of the run has 1 null value(s) in query 'q1'; "
        f"every row needs a document id: {NULL_FIX}",
    ),
    (
        "run.csv",
        "query_id,doc_id,rank\nq1,d1,1.0\nq1,d2,2.5\n",
        "run.csv, line 3: column 'rank' holds '2.5', not a whole number; a rank is a "
        "position 1, 2, 3, ... in its query's list: fix or drop the line",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), REFUSED)
def test_a_refused_value_is_named_by_its_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process("evaluate", name, "--qrels", "qrels.txt", "-m", "ndcg", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"


def test_a_parquet_runs_row_is_named_from_0(tmp_path: Path) -> None:
    pl.DataFrame(
        {"query_id": ["q1", "q1", "q1"], "doc_id": ["d1", "d2", "d3"], "score": [3.0, 2.0, None]}
    ).write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process("evaluate", "run.parquet", "--qrels", "qrels.txt", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert done.stderr == (
        "irm: error: run.parquet, row 2 (counted from 0): column 'score' of the run has 1 "
        "null value(s) in query 'q1'; every document needs a score to be ranked: "
        "fill it in or drop the row\n"
    )


def test_a_judgments_files_null_label_is_named_by_its_line(tmp_path: Path) -> None:
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,2\n")
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\nq1,d2,\n")
    done = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.csv", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert done.stderr == (
        "irm: error: qrels.csv, line 3: column 'relevance' of the judgments has 1 null "
        f"value(s) in query 'q1'; every judged document needs a relevance label: {NULL_FIX}\n"
    )


def test_compare_names_the_file_of_the_system_with_the_value(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("query_id,doc_id,score\nq1,d1,2\nq1,d2,1\n")
    (tmp_path / "b.csv").write_text("query_id,doc_id,score\nq1,d1,2\nq1,d2,NaN\n")
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process("compare", "a.csv", "b.csv", "--qrels", "qrels.txt", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("irm: error: b.csv, line 3: column 'score' of the run ")
    assert done.stderr.endswith(f"NaN cannot be ranked: {NAN_FIX}\n")


def _per_query(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process("evaluate", name, "--qrels", "qrels.txt", "-m", "ndcg", "-m", "map",
                          "--per-query", "--format", "csv", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        # numbers polars' reader leaves as text: read as the numbers they are
        (
            "query_id,doc_id,score\nq1,d1, 1.5\nq1,d2,+2\nq2,d2,Infinity\nq2,d1,-inf\n",
            "query_id,doc_id,score\nq1,d1,1.5\nq1,d2,2\nq2,d2,inf\nq2,d1,-inf\n",
        ),
        # ranks written as floats (a pandas export of a column with a gap): integers
        (
            "query_id,doc_id,rank\nq1,d1,2.0\nq1,d2,1.0\nq2,d2,1.0\n",
            "query_id,doc_id,rank\nq1,d1,2\nq1,d2,1\nq2,d2,1\n",
        ),
        (
            "query_id,doc_id,rank\nq1,d1, 2\nq1,d2,+1\nq2,d2,1\n",
            "query_id,doc_id,rank\nq1,d1,2\nq1,d2,1\nq2,d2,1\n",
        ),
    ],
)
def test_numbers_written_otherwise_read_as_the_numbers_they_are(
    tmp_path: Path, text: str, same_as: str
) -> None:
    got = _per_query(tmp_path, "run.csv", text)
    assert got == _per_query(tmp_path, "clean.csv", same_as)
    assert "0.6309" in got or "0.63" in got  # q1's relevant d1 at rank 2 in every case


def test_a_pattern_of_files_reads_float_ranks_as_integers(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.csv").write_text("query_id,doc_id,rank\nq1,d2,1\nq1,d1,2\n")
    (tmp_path / "runs" / "b.csv").write_text("query_id,doc_id,rank\nq2,d2,1.0\nq2,d1,2.0\n")
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process("evaluate", "runs/*.csv", "--qrels", "qrels.txt", "-m", "ndcg",
                          "--per-query", "--format", "csv", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert pl.read_csv(done.stdout.encode()).rows() == [("q1", 1 / pl.Series([3.0]).log(2)[0]),
                                                        ("q2", 1.0)]  # fmt: skip


_LABELS = (
    "column 'relevance' of the judgments has 1 label(s) that are NaN, infinite, of "
    "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in query "
    "'q1'; a relevance label must be 0 or a finite number of magnitude in [2**-30, 2**32) "
    "(what evaluate's exact sums hold), and not between -1 and 0 (unjudged here, judged "
    "non-relevant by trec_eval, which truncates it to 0): fix or drop the line, or rescale "
    "the file's labels"
)


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("qrels.csv", "query_id,doc_id,relevance\nq1,d1,1\nq1,d2,-0.5\n", 3),
        ("qrels.csv", "query_id,doc_id,relevance\nq1,d2,NaN\nq1,d1,1\n", 2),
        ("qrels.csv", "query_id,doc_id,relevance\nq1,d1,1\nq1,d2,4294967296\n", 3),
        ("qrels.txt", "q1 0 d1 1\nq1 0 d3 0\nq1 0 d2 -0.25\n", 3),
    ],
)
def test_a_label_out_of_range_is_named_by_its_line(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,2\n")
    (tmp_path / name).write_text(text)
    done = irm_in_process("evaluate", "run.csv", "--qrels", name, "-m", "ndcg", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {name}, line {line}: {_LABELS}\n"


def test_a_pattern_or_folder_of_files_names_the_file_that_holds_the_value(
    tmp_path: Path,
) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.csv").write_text("query_id,doc_id,score\nq1,d1,1\nq1,d2,2\n")
    (tmp_path / "runs" / "b.csv").write_text("query_id,doc_id,score\nq2,d1,1\nq2,d2,NaN\n")
    done = irm_in_process("evaluate", "runs/*.csv", "--qrels", "qrels.txt", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert done.stderr == (
        "irm: error: runs/b.csv, line 3: column 'score' of the run has 1 NaN value(s) in "
        f"query 'q2'; NaN cannot be ranked: {NAN_FIX}\n"
    )
    (tmp_path / "parts").mkdir()
    frame = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    frame.write_parquet(tmp_path / "parts" / "0.parquet")
    # another query (q3) and q2's second document, with no id: nothing listed twice
    other = frame.with_columns(query_id=pl.Series(["q3", "q2"]), doc_id=pl.Series(["d1", None]))
    other.write_parquet(tmp_path / "parts" / "1.parquet")
    done = irm_in_process("evaluate", "parts", "--qrels", "qrels.txt", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert done.stderr == (
        "irm: error: parts/1.parquet, row 1 (counted from 0): column 'doc_id' of the run has "
        "1 null value(s) in query 'q2'; every row needs a document id: fill it in or drop "
        "the row\n"
    )
