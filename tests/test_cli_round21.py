"""Round 21 command line: one line on stderr naming the file (and its line or row), the
value and the fix, exit status 2, with command-line advice rather than Python code.

- ``irm compare a.run b.run -m ndcg@10`` without ``--qrels`` said "column 'relevance'
  not found in the judged table", naming neither the files nor that compare needs
  the judgments;
- a semicolon-separated CSV was refused with a Python fix
  (``pl.read_csv(path, separator=';', decimal_comma=True).write_csv(new_path)``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import irm_in_process

_RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"

_NO_QRELS = (
    "a.run, b.run: irm {command} needs the judgments (--qrels QRELS) to compute these "
    "metrics, and none was given: the runs hold no column 'relevance' (their columns: "
    "{columns}); pass --qrels FILE "
    "(e.g. --qrels qrels.txt), or add the relevance column to every run (name it with "
    "--relevance COL)"
)


# (command, the columns of the runs as read: evaluate names each run's system 'run')
@pytest.mark.parametrize(
    ("command", "columns"),
    [
        ("compare", "'query_id', 'doc_id', 'score', 'run_id'"),
        ("evaluate", "'query_id', 'doc_id', 'score', 'run_id', 'run'"),
    ],
)
def test_runs_without_qrels_name_the_files_and_the_flag(
    tmp_path: Path, command: str, columns: str
) -> None:
    (tmp_path / "a.run").write_text(_RUN)
    (tmp_path / "b.run").write_text(_RUN)
    done = irm_in_process(command, "a.run", "b.run", "-m", "ndcg@10", cwd=tmp_path)
    message = _NO_QRELS.format(command=command, columns=columns)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


_SAVE_AGAIN = (
    "save the file again so (e.g. export it from the spreadsheet with that field "
    "separator and '.' as the decimal separator)"
)


# (file, its text, the message): the command line's fix, not the Python API's
@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "qrels.csv",
            "query_id;doc_id;relevance\nq1;d1;1\n",
            "qrels.csv, line 1: the header 'query_id;doc_id;relevance' is separated by "
            "semicolons; a CSV file's fields are separated by commas and its numbers have "
            f"a decimal point: {_SAVE_AGAIN}",
        ),
        (
            "run.tsv",
            "query_id;doc_id;score\nq1;d1;0,5\n",
            "run.tsv, line 1: the header 'query_id;doc_id;score' is separated by "
            "semicolons; a TSV file's fields are separated by tabs and its numbers have "
            f"a decimal point: {_SAVE_AGAIN}",
        ),
    ],
)
def test_a_semicolon_separated_file_gets_a_command_line_fix(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / "run.tsv").write_text("query_id\tdoc_id\tscore\nq1\td1\t0.5\n")
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\n")
    (tmp_path / name).write_text(text)
    done = irm_in_process("evaluate", "run.tsv", "--qrels", "qrels.csv", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")
