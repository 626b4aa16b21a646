"""Round 17 command line: the --format help of ``irm ab`` and ``irm metrics`` says what
they do with an -o suffix that names no format (refuse it, as ``irm evaluate`` does),
not 'else table'."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import irm_in_process

_SAID = (
    "output format (default: the one -o FILE's suffix names, .parquet .csv .json .md .tex "
    ".html .txt, another suffix is refused; table on stdout"
)
_REFUSED = (
    "irm: error: out.xyz: the suffix names no output format; use one of .csv, .htm, .html, "
    ".json, .markdown, .md, .parquet, .pq, .tex, .txt, or name the format (--format csv)\n"
)


@pytest.mark.parametrize(
    ("command", "run"),
    [("ab", ["ab", "--sample"]), ("metrics", ["metrics"]), ("evaluate", ["evaluate", "--sample"])],
)
def test_format_help_matches_the_refusal(tmp_path: Path, command: str, run: list[str]) -> None:
    shown = irm_in_process(command, "--help")
    assert shown.returncode == 0
    # argparse wraps the help at the terminal's width: compare the words
    assert _SAID in " ".join(shown.stdout.split())
    assert "else table" not in " ".join(shown.stdout.split())
    done = irm_in_process(*run, "-o", "out.xyz", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", _REFUSED)
    assert not (tmp_path / "out.xyz").exists()


# a CSV run whose score column is named 'sc' (--score sc) with text on line 4 (header
# on line 1), and judgments whose relevance column is 'lab' (--relevance lab)
_RUN_CSV = "query_id,doc_id,sc\nq1,d1,3\nq1,d2,2\nq1,d3,abc\n"
_RUN_JSONL = (
    '{"query_id": "q1", "doc_id": "d1", "sc": 3}\n'
    '{"query_id": "q1", "doc_id": "d2", "sc": "n/a"}\n'
)
_OTHER = "query_id,doc_id,sc\nq1,d1,3\n"
_QRELS_CSV = "query_id,doc_id,lab\nq1,d1,1\nq1,d3,x\n"
_RENAMED = [
    (
        ["evaluate", "run.csv", "--qrels", "qrels.txt", "--score", "sc"],
        "run.csv, line 4: column 'sc' holds 'abc', not a number",
    ),
    (
        ["evaluate", "run.jsonl", "--qrels", "qrels.txt", "--score", "sc"],
        "run.jsonl, line 2: column 'sc' holds 'n/a', not a number",
    ),
    (
        ["compare", "run.csv", "other.csv", "--qrels", "qrels.txt", "--score", "sc"],
        "run.csv, line 4: column 'sc' holds 'abc', not a number",
    ),
    (
        ["fuse", "other.csv", "run.csv", "--score", "sc"],
        "run.csv, line 4: column 'sc' holds 'abc', not a number",
    ),
    (
        ["evaluate", "other.csv", "--qrels", "qrels.csv", "--relevance", "lab", "--score", "sc"],
        "qrels.csv, line 3: column 'lab' holds 'x', not a number",
    ),
]


@pytest.mark.parametrize(
    ("argv", "message"), _RENAMED, ids=["evaluate", "jsonl", "compare", "fuse", "relevance"]
)
def test_renamed_number_column_names_the_line(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    """A text value in the column --score, --rank or --relevance names is refused with
    its file and line, as one in a column named 'score' is (it was 'column 'sc' in the
    run has dtype String', without the line)."""
    for name, text in {
        "run.csv": _RUN_CSV,
        "run.jsonl": _RUN_JSONL,
        "other.csv": _OTHER,
        "qrels.csv": _QRELS_CSV,
        "qrels.txt": "q1 0 d1 1\n",
    }.items():
        (tmp_path / name).write_text(text)
    done = irm_in_process(*argv, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}; fix or drop the line\n"
