"""Round 20 command line: one line on stderr naming the flag or the file (and its line
or row), the value and the fix, exit status 2.

- ``irm fuse --depth 0`` printed irm.fuse's "... or None for all" (a Python value);
- ``irm fuse --weights -1,2``: argparse took ``-1,2`` for a flag ("expected one
  argument"); irm.fuse's refusal of a weight did not name ``--weights``;
- a click log's bad click that is an integer (2, -1), in Parquet or CSV, named a
  session but no line or row; a Parquet log's bad click named no row at all.
- an empty or fractional click (Parquet, CSV) named a session and a Python fix, no row;
- a TREC run or qrels file that lists or judges a document twice was refused naming
  the query and the count, but neither the line nor the document.
- a misspelled flag (``--metrics``) was "unrecognized" with no word of the flag meant;
- a TREC file's header line was "score 'score' is not a number" with no word of a header.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from .helpers import irm_in_process

_RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"


def _runs(tmp_path: Path) -> None:
    (tmp_path / "a.run").write_text(_RUN)
    (tmp_path / "b.run").write_text(_RUN)


# (flags after 'irm fuse a.run b.run ... -o out.run', the one error line)
_FUSE_CASES = [
    (
        ["--depth", "0"],
        "irm fuse: error: argument --depth: expected an integer > 0, got '0' "
        "(see 'irm fuse --help')",
    ),
    (
        ["--depth", "-3"],
        "irm fuse: error: argument --depth: expected an integer > 0, got '-3' "
        "(see 'irm fuse --help')",
    ),
    (
        ["--method", "wsum", "--weights", "-1,2"],
        "irm: error: --weights -1,2: weight -1.0 of run 'a.run' is not valid; weights "
        "must be finite numbers >= 0",
    ),
    (
        ["--method", "wsum", "--weights=-1,2"],
        "irm: error: --weights -1,2: weight -1.0 of run 'a.run' is not valid; weights "
        "must be finite numbers >= 0",
    ),
    (
        ["--method", "wsum", "--weights", "-0.5,-1e-3"],
        "irm: error: --weights -0.5,-1e-3: weight -0.5 of run 'a.run' is not valid; "
        "weights must be finite numbers >= 0",
    ),
    (
        ["--method", "wsum", "--weights", "0.5"],
        "irm: error: --weights 0.5: weights has 1 value(s) for 2 runs ('a.run', 'b.run'); "
        "give one weight per run, in the runs' order",
    ),
    (
        ["--method", "wsum", "--weights", "0,0"],
        "irm: error: --weights 0,0: weights are all zero; give at least one run a positive weight",
    ),
]


@pytest.mark.parametrize(("flags", "line"), _FUSE_CASES)
def test_fuse_flag_errors_name_the_flag(tmp_path: Path, flags: list[str], line: str) -> None:
    _runs(tmp_path)
    done = irm_in_process("fuse", "a.run", "b.run", *flags, "-o", "out.run", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"{line}\n")
    assert not (tmp_path / "out.run").exists()


def test_fuse_positive_weights_after_a_flag_still_fuse(tmp_path: Path) -> None:
    """The wider negative-number pattern changes nothing for valid weights: 0.6,0.4."""
    _runs(tmp_path)
    done = irm_in_process(
        "fuse", "a.run", "b.run", "--method", "wsum", "--weights", "0.6,0.4", "-o", "out.run",
        cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "out.run").read_text().startswith("q1 Q0 d1 1 ")


def test_negative_number_after_a_flag_is_its_value(tmp_path: Path) -> None:
    """``--relevance-level -1e-3``: a value, read as one (argparse's own pattern took
    '-1e-3' for a flag: "expected one argument"); every judged document counts."""
    (tmp_path / "run.txt").write_text(_RUN)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    done = irm_in_process(
        "evaluate", "run.txt", "--qrels", "qrels.txt", "-m", "P@2", "--relevance-level",
        "-1e-3", "--format", "csv", cwd=tmp_path,
    )  # fmt: skip
    # relevance >= -0.001: q1's d1, d2 both relevant (P@2 = 2/2 = 1), q2's d3 only
    # (P@2 = 1/2); mean (1 + 0.5) / 2 = 0.75
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[1].endswith(",0.75")


def _log(clicks: list[int]) -> pl.DataFrame:
    """One session per click: arm A for even sessions, B for odd."""
    n = len(clicks)
    return pl.DataFrame(
        {
            "arm": ["AB"[i % 2] for i in range(n)],
            "user_id": [f"u{i}" for i in range(n)],
            "session_id": [f"s{i}" for i in range(n)],
            "position": [1] * n,
            "clicked": clicks,
        }
    )


_EVALUATE = ["-m", "ctr", "--query-id", "session_id", "--rank", "position"]

# (file name, clicks, the message): rows from 0; a CSV's header is line 1, row r line r + 2
_BAD_INT_CLICKS = [
    (
        "log.parquet",
        [1, 0, 2, 1],
        "log.parquet, row 2 (counted from 0): column 'clicked' holds 2, not a click, "
        "true/false or 1/0; fix or drop the row",
    ),
    (
        "log.parquet",
        [1, 0, 1, -1],
        "log.parquet, row 3 (counted from 0): column 'clicked' holds -1, not a click, "
        "true/false or 1/0; fix or drop the row",
    ),
    (
        "log.csv",
        [1, 0, 2, 1],
        "log.csv, line 4: column 'clicked' holds 2, not a click, true/false or 1/0; fix or "
        "drop the line",
    ),
]


@pytest.mark.parametrize(("name", "clicks", "message"), _BAD_INT_CLICKS)
@pytest.mark.parametrize("command", [["evaluate", *_EVALUATE], ["ab", "-m", "ctr"]])
def test_bad_integer_click_names_the_row(
    tmp_path: Path, name: str, clicks: list[int], message: str, command: list[str]
) -> None:
    log = _log(clicks)
    if name.endswith(".parquet"):
        log.write_parquet(tmp_path / name)
    else:
        log.write_csv(tmp_path / name)
    done = irm_in_process(command[0], name, *command[1:], cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_bad_text_click_in_parquet_names_the_row(tmp_path: Path) -> None:
    log = _log([1, 0, 1]).with_columns(pl.Series("clicked", ["1", "0", "yes"]))
    log.write_parquet(tmp_path / "log.parquet")
    done = irm_in_process("ab", "log.parquet", "-m", "ctr", cwd=tmp_path)
    message = (
        "log.parquet, row 2 (counted from 0): column 'clicked' holds 'yes', not a click, "
        "true/false or 1/0; fix or drop the row"
    )
    assert (done.returncode, done.stderr) == (2, f"irm: error: {message}\n")


# (file name, its text, the one error line's end): a TREC file's duplicate judgment or
# listing was refused naming the query and the count, but neither the line nor the
# document (and with the Python fix ".unique(['query_id', 'doc_id'])")
_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
_DUPLICATES = [
    (
        "qrels",
        "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\nq2 0 d3 1\n",
        "qrels.txt, line 3: query 'q1' has 1 repeated judgment(s) (document 'd1' again, "
        "first on line 1); keep one judgment per query and document: drop or merge the "
        "repeated line",
    ),
    (
        # a comment and a blank line count as the file's lines; the check names query
        # q1, whose repeat is line 6 (first on line 4), though q2's (line 5) comes first
        # in the file: the line named is the query's the message names
        "qrels",
        "# judged\nq2 0 d3 1\n\nq1 0 d1 1\nq2 0 d3 0\nq1 0 d1 1\n",
        "qrels.txt, line 6: query 'q1' has 1 repeated judgment(s) (document 'd1' again, "
        "first on line 4); keep one judgment per query and document: drop or merge the "
        "repeated line",
    ),
    (
        "run",
        "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq1 Q0 d1 3 0.5 r\nq2 Q0 d3 1 1.0 r\n",
        "run.txt, line 3: query 'q1' has 1 repeated listing(s) (document 'd1' "
        "again, first on line 1); each (query, document) pair may appear once (trec_eval "
        "refuses such runs too): drop the repeated line",
    ),
]


@pytest.mark.parametrize(("side", "text", "message"), _DUPLICATES)
@pytest.mark.parametrize("command", ["evaluate", "trec-eval"])
def test_a_trec_duplicate_names_its_line(
    tmp_path: Path, side: str, text: str, message: str, command: str
) -> None:
    (tmp_path / "qrels.txt").write_text(text if side == "qrels" else _QRELS)
    (tmp_path / "run.txt").write_text(text if side == "run" else _RUN)
    if command == "evaluate":
        done = irm_in_process("evaluate", "run.txt", "--qrels", "qrels.txt", cwd=tmp_path)
    else:
        done = irm_in_process("trec-eval", "qrels.txt", "run.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_a_duplicate_judgment_under_compare_and_fuse_names_its_line(tmp_path: Path) -> None:
    _runs(tmp_path)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d1 0\n")
    end = (
        "(document 'd1' again, first on line 1); keep one judgment per query and "
        "document: drop or merge the repeated line"
    )
    done = irm_in_process("compare", "a.run", "b.run", "--qrels", "qrels.txt", cwd=tmp_path)
    assert done.stderr.startswith("irm: error: qrels.txt, line 2: query 'q1' ")
    assert (done.returncode, done.stderr.endswith(f"{end}\n")) == (2, True)
    done = irm_in_process(
        "fuse", "a.run", "b.run", "--optimize", "--qrels", "qrels.txt", cwd=tmp_path
    )
    line = f"qrels.txt, line 2: query 'q1' has 1 repeated judgment(s) {end}"
    assert (done.returncode, done.stderr) == (2, f"irm: error: {line}\n")


# (argv after 'irm', the one error line): a flag misspelled (--metrics for --metric) was
# "unrecognized arguments: --metrics ndcg" with no word of the flag meant
_MISSPELLED = [
    (
        ["evaluate", "run.txt", "--qrels", "qrels.txt", "--metrics", "ndcg"],
        "irm evaluate: error: unrecognized arguments: --metrics ndcg; did you mean "
        "--metric? (see 'irm evaluate --help')",
    ),
    (
        ["evaluate", "run.txt", "--qrels", "qrels.txt", "--per_query"],
        "irm evaluate: error: unrecognized arguments: --per_query; did you mean "
        "--per-query? (see 'irm evaluate --help')",
    ),
    (
        ["compare", "run.txt", "run.txt", "--qrels", "qrels.txt", "--alpah", "0.1"],
        "irm compare: error: unrecognized arguments: --alpah 0.1; did you mean --alpha? "
        "(see 'irm compare --help')",
    ),
    (  # nothing close: no guess
        ["evaluate", "run.txt", "--qrels", "qrels.txt", "--bogus"],
        "irm evaluate: error: unrecognized arguments: --bogus (see 'irm evaluate --help')",
    ),
]


@pytest.mark.parametrize(("argv", "line"), _MISSPELLED)
def test_a_misspelled_flag_is_named_with_the_flag_meant(
    tmp_path: Path, argv: list[str], line: str
) -> None:
    (tmp_path / "run.txt").write_text(_RUN)
    (tmp_path / "qrels.txt").write_text(_QRELS)
    done = irm_in_process(*argv, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"{line}\n")


_HEADER = "; a header line? TREC files have none: delete it, or start it with '#'"

# (which file, its text, the message): a TREC file that starts with a header line was
# refused as "score 'score' is not a number" with no word of the header
_HEADERS = [
    (
        "run",
        "query_id Q0 doc_id rank score run_id\n" + _RUN,
        "run.txt, line 1: score 'score' is not a number: 'query_id Q0 doc_id rank score "
        f"run_id'{_HEADER}",
    ),
    (
        "qrels",
        "query_id iteration doc_id relevance\n" + _QRELS,
        "qrels.txt, line 1: relevance 'relevance' is not a number: 'query_id iteration "
        f"doc_id relevance'{_HEADER}",
    ),
    (  # a label 'rel' after an iteration 0 is no header: no hint
        "qrels",
        "q1 0 d1 rel\n",
        "qrels.txt, line 1: relevance 'rel' is not a number: 'q1 0 d1 rel'",
    ),
    (  # a bad score is no header: no hint
        "run",
        "q1 Q0 d1 1 high r\n",
        "run.txt, line 1: score 'high' is not a number: 'q1 Q0 d1 1 high r'",
    ),
]


@pytest.mark.parametrize(("side", "text", "message"), _HEADERS)
@pytest.mark.parametrize("command", ["evaluate", "trec-eval"])
def test_a_trec_header_line_is_named_as_one(
    tmp_path: Path, side: str, text: str, message: str, command: str
) -> None:
    (tmp_path / "qrels.txt").write_text(text if side == "qrels" else _QRELS)
    (tmp_path / "run.txt").write_text(text if side == "run" else _RUN)
    if command == "evaluate":
        done = irm_in_process("evaluate", "run.txt", "--qrels", "qrels.txt", cwd=tmp_path)
    else:
        done = irm_in_process("trec-eval", "qrels.txt", "run.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_a_commented_trec_header_is_read_past(tmp_path: Path) -> None:
    """The fix the hint gives works: '# query_id Q0 ...' is a comment."""
    (tmp_path / "run.txt").write_text("# query_id Q0 doc_id rank score run_id\n" + _RUN)
    (tmp_path / "qrels.txt").write_text(_QRELS)
    done = irm_in_process(
        "evaluate", "run.txt", "--qrels", "qrels.txt", "-m", "map", "--format", "csv",
        cwd=tmp_path,
    )  # fmt: skip
    # q1: d1 relevant at rank 1, AP 1; q2: d3 at rank 1, AP 1; mean 1.0
    assert (done.returncode, done.stdout, done.stderr) == (0, "num_q,map\n2,1.0\n", "")


_NORMS = "min-max, min-max-inverted, max, sum, zmuv, rank, borda"


# (mode flags, the one error line): irm.fuse offers its keyword's None ("choose one of
# ..., or None"), which a command line types as --norm none
@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (
            ["-o", "out.run"],
            f"--norm nope: unknown normalisation 'nope'; choose one of {_NORMS}, or none",
        ),
        (
            ["--optimize", "--qrels", "qrels.txt"],
            f"--norm nope: unknown normalisation 'nope'; choose one of {_NORMS}, or none, or "
            "'auto' (the default: min-max for a method that reads scores, none for one that "
            "reads positions)",
        ),
    ],
)
def test_fuse_unknown_norm_offers_none_as_typed(
    tmp_path: Path, flags: list[str], line: str
) -> None:
    _runs(tmp_path)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    done = irm_in_process("fuse", "a.run", "b.run", "--norm", "nope", *flags, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {line}\n")


# (command, the second run's system as the message names it): a duplicate in one of
# several run files named the system but no file nor line
@pytest.mark.parametrize(
    ("command", "system"), [("compare", "system='dup'"), ("evaluate", "run='dup'")]
)
def test_a_duplicate_in_one_of_several_runs_names_its_file_and_line(
    tmp_path: Path, command: str, system: str
) -> None:
    _runs(tmp_path)
    (tmp_path / "dup.run").write_text(_RUN + "q2 Q0 d3 2 0.5 r\n")
    (tmp_path / "qrels.txt").write_text(_QRELS)
    done = irm_in_process(
        command, "a.run", "dup.run", "b.run", "--qrels", "qrels.txt", cwd=tmp_path
    )
    line = (
        f"dup.run, line 4: query 'q2' ({system}) has 1 repeated listing(s) "
        "(document 'd3' again, first on line 3); each (query, document) pair may appear "
        "once (trec_eval refuses such runs too): drop the repeated line"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {line}\n")


# (file name, the click column, the message): an empty click, or a fractional one, was
# refused by ab_test naming a session and a Python fix ("fill them, e.g.
# pl.col('clicked').fill_null(False)"), no line nor row
_EMPTY_CLICKS = [
    (
        "log.parquet",
        pl.Series("clicked", [1, 0, None, 1]),
        "log.parquet, row 2 (counted from 0): column 'clicked' holds no value, not a "
        "click, true/false or 1/0; fix or drop the row",
    ),
    (
        "log.parquet",
        pl.Series("clicked", [True, None, False, True]),
        "log.parquet, row 1 (counted from 0): column 'clicked' holds no value, not a "
        "click, true/false or 1/0; fix or drop the row",
    ),
    (
        "log.parquet",
        pl.Series("clicked", [1.0, 0.0, 0.5, 1.0]),
        "log.parquet, row 2 (counted from 0): column 'clicked' holds 0.5, not a click, "
        "true/false or 1/0; fix or drop the row",
    ),
    (
        # an empty field: header line 1, row 3 is line 5
        "log.csv",
        pl.Series("clicked", [1, 0, 1, None]),
        "log.csv, line 5: column 'clicked' holds no value, not a click, true/false or 1/0; "
        "fix or drop the line",
    ),
]


@pytest.mark.parametrize(("name", "clicks", "message"), _EMPTY_CLICKS)
@pytest.mark.parametrize("command", [["evaluate", *_EVALUATE], ["ab", "-m", "ctr"]])
def test_an_empty_or_fractional_click_names_the_row(
    tmp_path: Path, name: str, clicks: pl.Series, message: str, command: list[str]
) -> None:
    log = _log([1] * len(clicks)).with_columns(clicks)
    if name.endswith(".parquet"):
        log.write_parquet(tmp_path / name)
    else:
        log.write_csv(tmp_path / name)
    done = irm_in_process(command[0], name, *command[1:], cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# (argv after 'irm', the one error line): argparse's "invalid int value: 'abc'" names
# the type in Python's words; said as what the flag takes
@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["trec-eval", "-M", "abc", "qrels.txt", "run.txt"],
            "irm trec-eval: error: argument -M/--Max_retrieved_per_topic: expected an "
            "integer, got 'abc' (see 'irm trec-eval --help')",
        ),
        (
            ["evaluate", "run.txt", "--qrels", "qrels.txt", "--relevance-level", "x"],
            "irm evaluate: error: argument --relevance-level: expected a number, got 'x' "
            "(see 'irm evaluate --help')",
        ),
        (
            ["fuse", "run.txt", "b.run", "--optimize", "--qrels", "qrels.txt", "--folds", "2.5"],
            "irm fuse: error: argument --folds: expected an integer, got '2.5' "
            "(see 'irm fuse --help')",
        ),
    ],
)
def test_a_flag_value_of_the_wrong_type_says_what_the_flag_takes(
    tmp_path: Path, argv: list[str], line: str
) -> None:
    _runs(tmp_path)
    (tmp_path / "run.txt").write_text(_RUN)
    (tmp_path / "qrels.txt").write_text(_QRELS)
    done = irm_in_process(*argv, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"{line}\n")


@pytest.mark.parametrize("command", [["evaluate", "runs", "--qrels", "qrels.txt"], ["ab", "runs"]])
def test_a_broken_link_in_a_folder_is_named(tmp_path: Path, command: list[str]) -> None:
    """A folder read as one Parquet dataset, holding a link to a file that is gone:
    polars' "No such file or directory (os error 2)" named no file."""
    (tmp_path / "runs").mkdir()
    _log([1, 0]).write_parquet(tmp_path / "runs" / "a.parquet")
    (tmp_path / "runs" / "b.parquet").symlink_to(tmp_path / "gone.parquet")
    (tmp_path / "qrels.txt").write_text(_QRELS)
    done = irm_in_process(*command, cwd=tmp_path)
    start = (
        f"irm: error: runs/b.parquet: a broken link (to {tmp_path / 'gone.parquet'}, which "
        "is not there) in the folder runs, read as one dataset; fix the link or remove it; "
        "expected "
    )
    assert (done.returncode, done.stdout, done.stderr.startswith(start)) == (2, "", True)
    assert done.stderr.count("\n") == 1
