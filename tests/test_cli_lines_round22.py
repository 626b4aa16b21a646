"""Round 22 command line: the line a CSV/TSV message names is the physical line its
record starts on.

A quoted field may hold line breaks (a title ``"a\\nb"``), so a record may span
several lines; the messages named polars' row index plus the header's line (row + 2),
a line too early after each such field. Where the csv module and polars read the
records apart (a bare carriage return in an unquoted field), the record is named,
counted from 1 after the header, never a guessed line. JSON lines hold no raw line
break inside a record (an escaped one, ``"a\\nb"``, is no line break): pinned as they
were.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import irm_in_process

_QRELS = "query_id,doc_id,relevance\nq1,d1,1\nq1,d2,0\n"

_RUN_TWICE = (
    "query 'q1' has 1 repeated listing(s) (document 'd1' again, first on {first}); "
    "each (query, document) pair may appear once (trec_eval refuses such runs too): drop "
    "the repeated {unit}"
)
_JUDGED_TWICE = (
    "query 'q1' has 1 repeated judgment(s) (document 'd1' again, first on {first}); "
    "keep one judgment per query and document: drop or merge the repeated line"
)
_RECORD = "record {} (counted from 1 after the header)"

# (file, its text, where the repeat is named, the message's format, first, unit)
_REPEATS = [
    (  # a title on lines 2-3: the repeat on line 5 (row 2 + 2 said line 4)
        "run.csv",
        'query_id,doc_id,score,title\nq1,d1,2.0,"a\nb"\nq1,d2,1.0,x\nq1,d1,0.5,y\n',
        "line 5",
        _RUN_TWICE,
        "line 2",
        "line",
    ),
    (
        "run.tsv",
        'query_id\tdoc_id\tscore\ttitle\nq1\td1\t2.0\t"a\nb"\nq1\td2\t1.0\tx\nq1\td1\t0.5\ty\n',
        "line 5",
        _RUN_TWICE,
        "line 2",
        "line",
    ),
    (  # the multi-line field before both records: both lines shift
        "run.csv",
        'query_id,doc_id,score,title\nq1,d0,3,"a\n\nb"\nq1,d1,2,x\nq1,d1,1,w\n',
        "line 6",
        _RUN_TWICE,
        "line 5",
        "line",
    ),
    (  # a header that spans two lines
        "run.csv",
        'query_id,doc_id,score,"ti\ntle"\nq1,d1,2,x\nq1,d1,1,w\n',
        "line 4",
        _RUN_TWICE,
        "line 3",
        "line",
    ),
    (  # lines ending in CR LF, one inside the quoted field
        "run.csv",
        'query_id,doc_id,score,title\r\nq1,d0,3,"a\r\nb"\r\nq1,d1,2,x\r\nq1,d1,1,w\r\n',
        "line 5",
        _RUN_TWICE,
        "line 4",
        "line",
    ),
    (  # a bare carriage return in an unquoted field: polars reads it, the csv module
        # does not, so no line is known: the records are named
        "run.csv",
        "query_id,doc_id,score,title\nq1,d1,2,x\ry\nq1,d2,1,z\nq1,d1,1,w\n",
        _RECORD.format(3),
        _RUN_TWICE,
        _RECORD.format(1).split(" (")[0],
        "record",
    ),
    (  # an escaped line break and a blank line: JSON lines count as they did
        "run.jsonl",
        '{"query_id":"q1","doc_id":"d1","score":2.0,"t":"a\\nb"}\n\n'
        '{"query_id":"q1","doc_id":"d2","score":1.0}\n{"query_id":"q1","doc_id":"d1","score":0.5}\n',
        "line 4",
        _RUN_TWICE,
        "line 1",
        "line",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "where", "message", "first", "unit"),
    _REPEATS,
    ids=["csv", "tsv", "csv-both-shifted", "csv-header", "csv-crlf", "csv-bare-cr", "jsonl"],
)
def test_repeated_run_document_names_its_physical_line(
    tmp_path: Path, name: str, text: str, where: str, message: str, first: str, unit: str
) -> None:
    (tmp_path / name).write_bytes(text.encode())
    (tmp_path / "qrels.csv").write_text(_QRELS)
    done = irm_in_process("evaluate", name, "--qrels", "qrels.csv", "-m", "ndcg@10", cwd=tmp_path)
    said = message.format(first=first, unit=unit)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {name}, {where}: {said}\n"


@pytest.mark.parametrize(
    ("name", "text", "where", "first"),
    [
        (  # a note on lines 2-4: the repeat on line 6
            "qrels.csv",
            'query_id,doc_id,relevance,note\nq1,d1,1,"multi\nline\nnote"\nq1,d2,0,x\nq1,d1,1,z\n',
            "line 6",
            "line 2",
        ),
        (
            "qrels.tsv",
            'query_id\tdoc_id\trelevance\tnote\nq1\td1\t1\t"a\nb"\nq1\td1\t0\tz\n',
            "line 4",
            "line 2",
        ),
    ],
    ids=["csv", "tsv"],
)
def test_repeated_judgment_names_its_physical_line(
    tmp_path: Path, name: str, text: str, where: str, first: str
) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,2.0\nq1,d2,1.0\n")
    done = irm_in_process("evaluate", "run.csv", "--qrels", name, "-m", "ndcg@10", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {name}, {where}: {_JUDGED_TWICE.format(first=first)}\n"


# (file, its text, where the score that is no number is named, the value shown)
_NOT_NUMBERS = [
    ("run.csv", 'query_id,doc_id,score,title\nq1,d1,2,"a\nb"\nq1,d2,n/a,x\n', "line 4", "'n/a'"),
    ("run.csv", 'query_id,doc_id,score\nq1,d1,"a\nb"\n', "line 2", "'a\\nb'"),
    (
        "run.tsv",
        'query_id\tdoc_id\tscore\ttitle\nq1\td1\t2\t"a\n\nb"\nq1\td2\tn/a\tx\n',
        "line 5",
        "'n/a'",
    ),
    (
        "run.csv",
        "query_id,doc_id,score,title\nq1,d1,2,x\ry\nq1,d2,n/a,x\n",
        _RECORD.format(2),
        "'n/a'",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "where", "shown"), _NOT_NUMBERS, ids=["csv", "csv-value", "tsv", "bare-cr"]
)
def test_score_not_a_number_names_its_physical_line(
    tmp_path: Path, name: str, text: str, where: str, shown: str
) -> None:
    (tmp_path / name).write_bytes(text.encode())
    (tmp_path / "qrels.csv").write_text(_QRELS)
    done = irm_in_process("evaluate", name, "--qrels", "qrels.csv", "-m", "ndcg@10", cwd=tmp_path)
    message = f"column 'score' holds {shown}, not a number; fix or drop the line"
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {name}, {where}: {message}\n"


_LOG_HEAD = "arm,user_id,session_id,position,clicked,note\n"
_LOG_TAIL = "B,u1,s1,1,0,x\nA,u2,s2,1,yes,y\nB,u3,s3,1,1,z\n"
_NOT_A_CLICK = "column 'clicked' holds 'yes', not a click, true/false or 1/0; fix or drop the line"


@pytest.mark.parametrize(
    ("first", "where"),
    [
        ('A,u0,s0,1,1,"a\nb"\n', "line 5"),  # a note on lines 2-3 (row 2 + 2 said line 4)
        ("A,u0,s0,1,1,a\rb\n", _RECORD.format(3)),  # read apart: the record
    ],
    ids=["quoted-newline", "bare-cr"],
)
@pytest.mark.parametrize(
    "command",
    [
        ["ab", "-m", "ctr"],
        ["evaluate", "-m", "ctr", "--query-id", "session_id", "--rank", "position"],
    ],
    ids=["ab", "evaluate"],
)
def test_log_value_names_its_physical_line(
    tmp_path: Path, first: str, where: str, command: list[str]
) -> None:
    (tmp_path / "log.csv").write_bytes((_LOG_HEAD + first + _LOG_TAIL).encode())
    done = irm_in_process(command[0], "log.csv", *command[1:], cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: log.csv, {where}: {_NOT_A_CLICK}\n"
