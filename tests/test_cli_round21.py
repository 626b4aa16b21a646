"""Round 21 command line: one line on stderr naming the file (and its line or row), the
value and the fix, exit status 2, with command-line advice rather than Python code.

- ``irm compare a.run b.run -m ndcg@10`` without ``--qrels`` said "column 'relevance'
  not found in the judged table", naming neither the files nor that compare needs
  the judgments;
- a semicolon-separated CSV was refused with a Python fix
  (``pl.read_csv(path, separator=';', decimal_comma=True).write_csv(new_path)``);
- a CSV, TSV, JSON lines or Parquet file that judges or lists a document twice named
  the query and the count, but neither the line (row) nor the document;
- a Parquet or JSON lines log whose click column held floats 0.0/1.0 was refused with
  a Python fix (``pl.col('clicked').cast(pl.Boolean)``);
- a duplicate the checks refused where no line could be named (the run's own checks
  off, a log's position held twice) gave the Python fix ``.unique([...])``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
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


_JUDGED_TWICE = (
    "query 'q1' has 1 repeated judgment(s) (document 'd1' again, first on {first}); "
    "keep one judgment per query and document: drop or merge the repeated {unit}"
)


def _write_qrels(path: Path) -> None:
    """q1 judges d1 on its 1st and 3rd rows (rows 0 and 2, lines 2 and 4 of a CSV)."""
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q1", "q1"], "doc_id": ["d1", "d2", "d1"], "relevance": [1, 0, 2]}
    )
    if path.suffix == ".parquet":
        qrels.write_parquet(path)
    elif path.suffix == ".jsonl":
        qrels.write_ndjson(path)
    else:
        qrels.write_csv(path, separator="\t" if path.suffix == ".tsv" else ",")


# (judgments file, where the repeat is named): a table's duplicate judgment named the
# query and the count but neither the line nor the row, as a TREC file's now does
@pytest.mark.parametrize(
    ("name", "where", "first", "unit"),
    [
        ("qrels.csv", "line 4", "line 2", "line"),  # header line 1, rows from line 2
        ("qrels.tsv", "line 4", "line 2", "line"),
        ("qrels.jsonl", "line 3", "line 1", "line"),  # no header: row r is line r + 1
        ("qrels.parquet", "row 2 (counted from 0)", "row 0", "row"),
    ],
)
def test_a_table_judging_a_document_twice_names_its_line_or_row(
    tmp_path: Path, name: str, where: str, first: str, unit: str
) -> None:
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,1.0\nq1,d2,0.5\n")
    _write_qrels(tmp_path / name)
    done = irm_in_process("evaluate", "run.csv", "--qrels", name, "-m", "ndcg@10", cwd=tmp_path)
    message = f"{name}, {where}: " + _JUDGED_TWICE.format(first=first, unit=unit)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_a_csv_run_listing_a_document_twice_names_its_line_with_renamed_columns(
    tmp_path: Path,
) -> None:
    # qid/docno named by --query-id/--doc-id; d1 on lines 2 and 4 of query 'q1'
    (tmp_path / "run.csv").write_text("qid,docno,score\nq1,d1,3\nq1,d2,2\nq1,d1,1\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    args = ("--query-id", "qid", "--doc-id", "docno", "-m", "ndcg@10")
    done = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.txt", *args, cwd=tmp_path)
    message = (
        "run.csv, line 4: query 'q1' has 1 repeated listing(s) (document 'd1' "
        "again, first on line 2); each (query, document) pair may appear once (trec_eval "
        "refuses such runs too): drop the repeated line"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# (command's args, log file): a float click column (0.0/1.0, which the library refuses
# as clicks) was refused with the Python fix "cast it, e.g. pl.col('clicked')
# .cast(pl.Boolean)"; the command line's fix is the file written again
@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("ab",), "log.parquet"),
        (("ab",), "log.jsonl"),
        (("evaluate", "-m", "ctr@10", "--query-id", "session_id", "--rank", "position"),
         "log.parquet"),
    ],
)  # fmt: skip
def test_a_float_click_column_gets_a_command_line_fix(
    tmp_path: Path, args: tuple[str, ...], name: str
) -> None:
    log = pl.DataFrame(
        {
            "user_id": ["u1", "u2", "u3", "u4"],
            "session_id": ["s1", "s2", "s3", "s4"],
            "arm": ["A", "B", "A", "B"],
            "position": [1, 1, 1, 1],
            "clicked": [1.0, 0.0, 1.0, 1.0],
        }
    )
    if name.endswith(".parquet"):
        log.write_parquet(tmp_path / name)
    else:
        log.write_ndjson(tmp_path / name)
    done = irm_in_process(*args[:1], name, *args[1:], cwd=tmp_path)
    message = (
        f"{name}: column 'clicked' of the log has dtype Float64; a click must be Boolean or "
        "integers 0/1: write the log again with column 'clicked' as true/false or as "
        "integers 0/1 (not Float64)"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_duplicates_with_the_checks_off_get_a_command_line_fix(tmp_path: Path) -> None:
    # d1 twice in the run (lines 2 and 4) and twice in the judgments, the run's own
    # duplicate checks off: the joined check refused it with ".unique(['query_id',
    # 'doc_id'])", a Python fix
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,3\nq1,d2,2\nq1,d1,1\n")
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\nq1,d1,0\n")
    args = ("--qrels", "qrels.csv", "-m", "ndcg@10", "--no-duplicate-check")
    done = irm_in_process("evaluate", "run.csv", *args, cwd=tmp_path)
    message = (
        "run.csv, qrels.csv: column 'doc_id': query 'q1' has judged document(s) listed "
        "more than once, in the run or in the judgments: 3 repeated row(s) once its "
        "judgments are joined to its run rows (the run's own duplicate checks are off: "
        "--no-duplicate-check); keep one row per document: drop or merge the repeated rows"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_a_log_without_rank_gets_flags_only(tmp_path: Path) -> None:
    # the hint ended "(irm.evaluate_online(log, metrics, session_id=..., position=...)
    # for the first two)", a Python call after the flags
    log = pl.DataFrame({"session_id": ["s1"], "position": [1], "clicked": [True]})
    log.write_parquet(tmp_path / "log.parquet")
    done = irm_in_process(
        "evaluate", "log.parquet", "-m", "ctr@10", "--query-id", "session_id", cwd=tmp_path
    )
    message = (
        "log.parquet: column 'rank' not found in the log (its columns: 'session_id', "
        "'position', 'clicked'); an impression log's sessions are the queries: name your "
        "columns, e.g. --query-id session_id, --rank position, --clicked click"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# (run file, where the repeat is named): irm fuse's refusal named the run and the
# document but no line, and gave the Python fix ".unique(['query_id', 'doc_id'])"
@pytest.mark.parametrize(
    ("name", "text", "where", "first", "unit"),
    [
        ("a.csv", "query_id,doc_id,score\nq1,d1,3\nq1,d2,2\nq1,d1,1\n", "line 4", "line 2",
         "line"),
        ("a.run", "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d1 3 1 a\n", "line 3", "line 1",
         "line"),
    ],
)  # fmt: skip
def test_fuse_names_the_line_of_a_document_listed_twice(
    tmp_path: Path, name: str, text: str, where: str, first: str, unit: str
) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "b.run").write_text("q1 Q0 d1 1 3 b\nq1 Q0 d3 2 2 b\n")
    done = irm_in_process("fuse", name, "b.run", "-o", "fused.parquet", cwd=tmp_path)
    message = (
        f"{name}, {where}: query 'q1' lists document 'd1' again (first on {first}); a run "
        f"may list a document once per query: drop the repeated {unit}"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")
