"""Round 21 command line: one line on stderr naming the file (and its line or row), the
value and the fix, exit status 2, with command-line advice rather than Python code.

- a semicolon-separated CSV was refused with a Python fix
  (``pl.read_csv(path, separator=';', decimal_comma=True).write_csv(new_path)``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import irm_in_process

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
