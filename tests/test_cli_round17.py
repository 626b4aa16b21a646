"""Round 17 command line: the --format help of ``irm ab`` and ``irm metrics`` says what
they do with an -o suffix that names no format (refuse it, as ``irm evaluate`` does),
not 'else table'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _log_csv(users: list[str], dwell: bool = True, day: str = "s") -> str:
    """Two impressions per user and session: arm A for users of even index, B odd."""
    head = "arm,user_id,session_id,position,clicked" + (",dwell" if dwell else "")
    rows = [
        f"{'AB'[i % 2]},{user},{day}{user},{position},{str(position == 1).lower()}"
        + (",40.5" if dwell else "")
        for i, user in enumerate(users)
        for position in (1, 2)
    ]
    return "\n".join([head, *rows]) + "\n"


_TREC_QRELS = "q1 0 d1 1\n"
_USERS = [f"u{i}" for i in range(8)]
_LOGS = [
    # day2's user ids are integers: 'u3' of day1 and 3 of day2 would be two users (the
    # log was read as one, the ids cast to text), inflating the units of every arm
    (
        {"day1.csv": _log_csv(_USERS), "day2.csv": _log_csv([str(i) for i in range(8)])},
        "day2.csv: column 'user_id' is Int64, but day1.csv has it as String; every file "
        "of an impression log needs the same column types: write the files again with one "
        "type, e.g. pl.col('user_id').cast(pl.String)",
    ),
    # day2 has no dwell column: its rows' dwell would be null
    (
        {"day1.csv": _log_csv(_USERS), "day2.csv": _log_csv(_USERS, dwell=False)},
        "day2.csv: no column 'dwell', which day1.csv has; every file of an impression log "
        "needs the same columns: add it, or read the files apart",
    ),
]


_GOOD_JSON = '{"arm": "A", "user_id": "u1", "clicked": true}\n'
_LOGS.append(
    # day2's second line is cut short: the files' columns are compared first, and polars'
    # text there ("Syntax at character 28 (',')") named neither the file nor the line
    (
        {"day1.jsonl": _GOOD_JSON, "day2.jsonl": _GOOD_JSON + '{"arm": "B", "user_id": "u2",\n'},
        'day2.jsonl, line 2: not a JSON object: \'{"arm": "B", "user_id": "u2",\'; '
        "fix or drop the line",
    )
)


@pytest.mark.parametrize(
    ("files", "message"), _LOGS, ids=["id types", "missing column", "damaged JSON"]
)
def test_ab_log_files_that_disagree(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    done = irm_in_process("ab", *files, "-m", "ctr", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_ab_log_files_numbers_widen(tmp_path: Path) -> None:
    """Integer dwells in one file and fractional ones in another are one log, as one
    file holding both is: the same output."""
    first, second = _log_csv(_USERS).replace("40.5", "40"), _log_csv(_USERS, day="t")
    (tmp_path / "day1.csv").write_text(first)
    (tmp_path / "day2.csv").write_text(second)
    (tmp_path / "both.csv").write_text(first + "".join(second.splitlines(keepends=True)[1:]))
    two = irm_in_process(
        "ab", "day1.csv", "day2.csv", "-m", "ctr", "--format", "csv", cwd=tmp_path
    )
    one = irm_in_process("ab", "both.csv", "-m", "ctr", "--format", "csv", cwd=tmp_path)
    assert two.returncode == 0, two.stderr
    assert two.stdout == one.stdout


def _spoil(text: str, line: int, column: int, value: str) -> str:
    """``text`` with field ``column`` (from 0) of line ``line`` (the header is line 1)
    replaced by ``value``."""
    lines = text.splitlines()
    fields = lines[line - 1].split(",")
    fields[column] = value
    lines[line - 1] = ",".join(fields)
    return "\n".join(lines) + "\n"


# the log of _log_csv (8 users, 16 impressions, lines 2 to 17); a bad value on line 12:
# ab_test refused the column's type ("column 'clicked' of the log has dtype String"),
# naming no line
_BAD_VALUES = [
    (4, "yes", "ctr", "column 'clicked' holds 'yes', not a click, true/false or 1/0"),
    (3, "top", "ctr", "column 'position' holds 'top', not a number"),
    (5, "12s", "sat_click_rate", "column 'dwell' holds '12s', not a number"),
]


@pytest.mark.parametrize(
    ("column", "value", "metric", "message"), _BAD_VALUES, ids=["clicked", "position", "dwell"]
)
def test_ab_csv_bad_value_names_the_line(
    tmp_path: Path, column: int, value: str, metric: str, message: str
) -> None:
    (tmp_path / "log.csv").write_text(_spoil(_log_csv(_USERS), 12, column, value))
    done = irm_in_process("ab", "log.csv", "-m", metric, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: log.csv, line 12: {message}; fix or drop the line\n"


def test_ab_csv_unread_bad_dwell_is_ignored(tmp_path: Path) -> None:
    """A dwell no asked metric reads is not looked at (ctr reads clicks only)."""
    (tmp_path / "bad.csv").write_text(_spoil(_log_csv(_USERS), 12, 5, "12s"))
    (tmp_path / "good.csv").write_text(_log_csv(_USERS))
    bad = irm_in_process("ab", "bad.csv", "-m", "ctr", "--format", "csv", cwd=tmp_path)
    good = irm_in_process("ab", "good.csv", "-m", "ctr", "--format", "csv", cwd=tmp_path)
    assert bad.returncode == 0, bad.stderr
    assert bad.stdout == good.stdout


# an impression log evaluated by 'irm evaluate' (click metrics): a data error of the log
# named no file ("irm: error: column 'clicked' of the log has dtype String; ..."): the
# messages name the table 'the log', which the command did not tie to its run file
_LOG_FAULTS = [
    (
        lambda text: _spoil(text, 12, 4, "yes"),
        "line 12: column 'clicked' holds 'yes', not a click, true/false or 1/0; fix or drop "
        "the line",
    ),
    (
        lambda text: text + text.splitlines(keepends=True)[1],
        "column 'position' of the log: session 'su0' shows 1 impression(s) at a position "
        "another impression holds; each position shows one item: keep one row per "
        "position: drop or merge the repeated rows; or, where two users "
        "share the session id 'su0' (ids that restart for each user), their impressions are one "
        "session here: give each user's sessions ids of their own, e.g. the user id joined "
        "onto the session id",
    ),
]


@pytest.mark.parametrize(("spoil", "message"), _LOG_FAULTS, ids=["clicked text", "position"])
def test_evaluate_log_error_names_the_file(tmp_path: Path, spoil: Any, message: str) -> None:
    (tmp_path / "log.csv").write_text(spoil(_log_csv(_USERS)))
    argv = ["evaluate", "log.csv", "-m", "ctr", "--query-id", "session_id", "--rank", "position"]
    done = irm_in_process(*argv, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    where = "log.csv," if message.startswith("line") else "log.csv:"
    assert done.stderr == f"irm: error: {where} {message}\n"


# the prediction metrics' messages name a column alone ("column 'prediction' has dtype
# String; ..."): the command printed them without the file that holds the column
_PREDICTIONS = "query_id,doc_id,label,prediction\nq1,d1,1,0.9\nq1,d2,0,0.2\n"
_PREDICTION_FAULTS = [
    (
        {"run.csv": _PREDICTIONS},
        ["-m", "auc", "--positive-label", "x"],
        "run.csv: column 'label' has dtype Int64 but --positive-label x is a string: pass a "
        "number, e.g. --positive-label 1, or cast the labels to strings",
    ),
    (
        {"run.csv": _PREDICTIONS.replace("q1,d2,0", "q1,d2,x")},
        ["-m", "rmse"],
        "run.csv: column 'label' holds strings, and rmse read(s) the label as a number (a "
        "rating): cast it, e.g. pl.col('label').cast(pl.Float64), or evaluate the binary "
        "metrics (auc, logloss...) of a text label in a call of their own",
    ),
    (
        {
            "run.csv": "query_id,doc_id,prediction\nq1,d1,0.9\nq1,d2,0.2\n",
            "labels.csv": "query_id,doc_id,label\nq1,d1,x\nq1,d2,0\n",
        },
        ["--labels", "labels.csv", "-m", "rmse"],
        "labels.csv: column 'label' holds strings, and rmse read(s) the label as a number (a "
        "rating): cast it, e.g. pl.col('label').cast(pl.Float64), or evaluate the binary "
        "metrics (auc, logloss...) of a text label in a call of their own",
    ),
]


@pytest.mark.parametrize(
    ("files", "flags", "message"), _PREDICTION_FAULTS, ids=["positive label", "label", "labels"]
)
def test_prediction_error_names_the_file(
    tmp_path: Path, files: dict[str, str], flags: list[str], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    done = irm_in_process("evaluate", "run.csv", *flags, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


@pytest.mark.parametrize(
    ("text", "flags", "message"),
    [
        (_PREDICTIONS + "q2,d3,1,high\n", [], "run.csv, line 4: column 'prediction' holds 'high'"),
        (
            "query_id,doc_id,label,prediction,w\nq1,d1,1,0.9,1\nq1,d2,0,0.2,heavy\n",
            ["--sample-weight", "w"],
            "run.csv, line 3: column 'w' holds 'heavy'",
        ),
    ],
    ids=["prediction", "weight"],
)
def test_prediction_text_value_names_the_line(
    tmp_path: Path, text: str, flags: list[str], message: str
) -> None:
    """A text value among the predictions (or the weights) is named with its line, as a
    score is (the label may be text: --positive-label yes)."""
    (tmp_path / "run.csv").write_text(text)
    done = irm_in_process("evaluate", "run.csv", "-m", "auc", *flags, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}, not a number; fix or drop the line\n"


def test_queries_missing_id_column_names_the_file(tmp_path: Path) -> None:
    """--queries without the query id column: the message named 'the queries', not the
    file ('irm: error: column 'query_id' not found in the queries ...')."""
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 r\n")
    (tmp_path / "qrels.txt").write_text(_TREC_QRELS)
    (tmp_path / "days.csv").write_text("qid,day\nq1,mon\n")
    argv = ["evaluate", "run.txt", "--qrels", "qrels.txt", "--by", "day", "--queries", "days.csv"]
    done = irm_in_process(*argv, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: days.csv: column 'query_id' not found in the queries (its columns: "
        "'qid', 'day'); --queries holds one row per query: its id and attributes\n"
    )
