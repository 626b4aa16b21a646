"""``irm`` names the line (or a Parquet file's row) of standard input that holds a value
the checks refuse, or that repeats a document, as it names a file's: the library's
Python fix (``pl.col('score').fill_nan(...)``, ``.drop_nulls('doc_id')``) reached the
command line where the run or the judgments came from ``-``; a Parquet file's fix says
"the row", not "the line"."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import polars as pl
import pytest

from .helpers import irm_in_process

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"
NAN_FIX = "write a number there (-inf ranks the document last) or drop the"


def _parquet(**columns: list[object]) -> bytes:
    buffer = io.BytesIO()
    pl.DataFrame(columns).write_parquet(buffer)
    return buffer.getvalue()


# (standard input, the run file argument, the judgments argument, the message)
CASES = [
    (
        b"query_id,doc_id,score\nq1,d1,1\nq1,d2,NaN\n",
        "-",
        "qrels.txt",
        "<stdin>, line 3: column 'score' of the run has 1 NaN value(s) in query 'q1'; NaN "
        f"cannot be ranked: {NAN_FIX} line",
    ),
    (
        b"query_id,doc_id,score\nq1,d1,1\nq1,,2\n",
        "-",
        "qrels.txt",
        "<stdin>, line 3: column 'doc_id' of the run has 1 null value(s) in query 'q1'; "
        "every row needs a document id: fill it in or drop the line",
    ),
    (
        b'{"query_id": "q1", "doc_id": "d1", "score": 1}\n\n'
        b'{"query_id": "q1", "doc_id": null, "score": 2}\n',
        "-",
        "qrels.txt",
        "<stdin>, line 3: column 'doc_id' of the run has 1 null value(s) in query 'q1'; "
        "every row needs a document id: fill it in or drop the line",
    ),
    (
        b"q1 Q0 d1 1 1.0 r\nq1 Q0 d1 2 0.5 r\n",
        "-",
        "qrels.txt",
        "<stdin>, line 2: query 'q1' has 1 repeated listing(s) (document 'd1' again, first "
        "on line 1); each (query, document) pair may appear once (trec_eval refuses such "
        "runs too): drop the repeated line",
    ),
    (
        _parquet(query_id=["q1", "q1"], doc_id=["d1", "d2"], score=[1.0, float("nan")]),
        "-",
        "qrels.txt",
        "<stdin>, row 1 (counted from 0): column 'score' of the run has 1 NaN value(s) in "
        f"query 'q1'; NaN cannot be ranked: {NAN_FIX} row",
    ),
    (
        b"query_id,doc_id,relevance\nq1,d1,1\nq2,d2,\n",
        "run.csv",
        "-",
        "<stdin>, line 3: column 'relevance' of the judgments has 1 null value(s) in query "
        "'q2'; every judged document needs a relevance label: fill it in or drop the line",
    ),
]


@pytest.mark.parametrize(("stdin", "run", "qrels", "message"), CASES)
def test_standard_inputs_line_is_named_as_a_files(
    tmp_path: Path, stdin: bytes, run: str, qrels: str, message: str
) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,1\nq2,d2,2\n")
    done = irm_in_process("evaluate", run, "--qrels", qrels, "-m", "ndcg", cwd=tmp_path,
                          stdin=stdin)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"


@pytest.mark.parametrize(
    ("stdin", "place", "unit"),
    [
        (b"user_id,arm,clicked\nu1,A,1\nu2,B,2\nu3,A,0\nu4,B,1\n", "line 3", "line"),
        (
            _parquet(
                user_id=["u1", "u2", "u3", "u4"], arm=["A", "B", "A", "B"], clicked=[1, 2, 0, 1]
            ),
            "row 1 (counted from 0)",
            "row",
        ),
    ],
)
def test_an_impression_log_from_standard_input_is_named_as_stdin(
    tmp_path: Path, stdin: bytes, place: str, unit: str
) -> None:
    # it was "-, line 3": the file argument as typed, where the run's messages say <stdin>
    done = irm_in_process("ab", "-", "-m", "ctr", cwd=tmp_path, stdin=stdin)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm: error: <stdin>, {place}: column 'clicked' holds 2, not a click, true/false or "
        f"1/0; fix or drop the {unit}\n"
    )


def test_a_pipes_line_is_named_as_a_files(tmp_path: Path) -> None:
    # a shell's <(zcat run.csv.gz): a pipe read once, its bytes kept; its line was not named
    pipe = tmp_path / "run.pipe"
    os.mkfifo(pipe)

    def feed() -> None:
        with open(pipe, "wb") as handle:
            handle.write(b"query_id,doc_id,score\nq1,d1,1\nq1,d2,NaN\n")

    writer = threading.Thread(target=feed)
    writer.start()
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process("evaluate", str(pipe), "--qrels", "qrels.txt", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    writer.join()
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm: error: {pipe}, line 3: column 'score' of the run has 1 NaN value(s) in query "
        f"'q1'; NaN cannot be ranked: {NAN_FIX} line\n"
    )
