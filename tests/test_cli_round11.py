"""The command line, round 11: standard input named by two inputs (--reference -,
--interactions -, ...) was read once and the run compared with itself; --explain printed
on stdout; an output naming an input replaced it; irm ab checked its output after the
test; --buckets auto-memory, the fix a message named, was refused; rrf's k given twice
kept one in silence; --systems run beside several files read as a typo; irm compare and
irm fuse took '-' for a missing file; messages named Python keywords and calls."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest

from polars_irmetrics.cli.main import INPUT_FLAGS, _command_parser, build_parser
from polars_irmetrics.io.files import sample_interactions_path

from .helpers import irm_in_process

RUN_A = "".join(f"q{q} Q0 d{d} {d} {10 - d} a\n" for q in (1, 2) for d in range(1, 6))
RUN_B = "".join(f"q{q} Q0 d{d} {6 - d} {d} b\n" for q in (1, 2) for d in range(1, 6))
QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 d2 1\n"
ONCE = (
    "irm: error: standard input ('-') can only be read once: name one file '-' and the "
    "others by their paths\n"
)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text(RUN_A)
    (tmp_path / "b.txt").write_text(RUN_B)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def _error(done: subprocess.CompletedProcess[str]) -> str:
    """The error line of a command that failed (exit status 2)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    return done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "-", "-m", "jaccard@5", "--reference", "-"],
        ["evaluate", "-", "-m", "novelty@5", "--interactions", "-"],
        ["evaluate", "-", "-m", "auc", "--labels", "-"],
        ["evaluate", "-", "--qrels", "qrels.txt", "-m", "map", "--by", "d", "--queries", "-"],
        ["evaluate", "a.txt", "--qrels", "-", "-m", "prefs_simp", "--prefs", "-"],
        ["compare", "-", "-", "--qrels", "qrels.txt"],
        ["fuse", "-", "-", "-o", "f.run"],
    ],
)
def test_standard_input_is_read_once_whatever_flags_name_it(files: Path, args: list[str]) -> None:
    done = irm_in_process(*args, cwd=files, stdin=RUN_A.encode())
    assert _error(done) == ONCE


def test_every_input_flag_of_every_command_is_checked() -> None:
    """A flag naming a file the command reads is in the one list the checks read."""
    parser = build_parser()
    outputs = {"output", "plot", "spill_dir", "baseline"}
    commands = ("evaluate", "demo", "trec-eval", "ab", "compare", "fuse", "metrics")
    for command in commands:
        for action in _command_parser(parser, command)._actions:
            reads = str(action.metavar).endswith(("FILE", "RUN", "QRELS", "LOG"))
            if (reads or action.dest == "qrels") and action.dest not in outputs:
                assert action.dest in INPUT_FLAGS, (command, action.dest)


@pytest.mark.parametrize("output", [[], ["-o", "-"]])
def test_explain_goes_to_stderr_in_flags(files: Path, output: list[str]) -> None:
    args = ["evaluate", "a.txt", "--qrels", "qrels.txt", "-m", "map", "--explain"]
    done = irm_in_process(*args, "--format", "csv", *output, cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("num_q,map\n"), done.stdout
    assert done.stderr == (
        "irm: explain: one plan: the run's size is not known without reading it (not a "
        "plain Parquet scan or frame); pass --buckets auto or --buckets N to evaluate out "
        "of core\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["evaluate", "a.txt", "--qrels", "qrels.txt", "-m", "map", "-o", "a.txt"],
            "-o a.txt names an input too (the run a.txt)",
        ),
        (
            ["evaluate", "a.txt", "--qrels", "qrels.txt", "-m", "map", "-o", "./link.txt"],
            "-o ./link.txt names an input too (the run a.txt)",
        ),
        (
            ["evaluate", "*.txt", "--qrels", "q/qrels.txt", "-m", "map", "-o", "b.txt"],
            "-o b.txt names an input too (the run b.txt, of *.txt)",
        ),
        (
            ["evaluate", "a.txt", "-m", "jaccard@5", "--reference", "b.txt", "-o", "b.txt"],
            "-o b.txt names an input too (--reference b.txt)",
        ),
        (["fuse", "a.txt", "b.txt", "-o", "a.txt"], "-o a.txt names an input too (the run a.txt)"),
        (
            ["trec-eval", "qrels.txt", "a.txt", "-o", "qrels.txt"],
            "-o qrels.txt names an input too (the judgments qrels.txt)",
        ),
        (
            ["compare", "a.txt", "b.txt", "--qrels", "qrels.txt", "--plot", "b.txt"],
            "--plot b.txt names an input too (the run b.txt)",
        ),
        (["ab", "log.csv", "-o", "log.csv"], "-o log.csv names an input too (the log log.csv)"),
    ],
)
def test_an_output_naming_an_input_is_refused(files: Path, args: list[str], message: str) -> None:
    (files / "link.txt").symlink_to("a.txt")
    (files / "q").mkdir()
    (files / "q" / "qrels.txt").write_text(QRELS)
    (files / "log.csv").write_text("arm,user_id,session_id,position,clicked\nA,u,s,1,1\n")
    before = {p.name: p.read_bytes() for p in files.iterdir() if p.is_file()}
    done = irm_in_process(*args, cwd=files)
    tail = ", which writing it would replace: name another output file"
    assert _error(done) == f"irm: error: {message}{tail}\n"
    assert {p.name: p.read_bytes() for p in files.iterdir() if p.is_file()} == before


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (["-o", "ab.foo"], "ab.foo: the suffix names no output format; use one of .csv, "
         ".htm, .html, .json, .markdown, .md, .parquet, .pq, .tex, .txt, or name the format "
         "(--format csv)"),
        (["-o", "out", "--format", "csv"],
         "out: is a folder, not a file; name a file in it (e.g. out/results.csv)"),
        (["-o", "no/ab.csv"], "no/ab.csv: cannot write, the folder 'no' does not exist; "
         "create it first"),
        (["--format", "parquet"],
         "--format parquet writes a binary file: name it with -o FILE.parquet"),
    ],
)  # fmt: skip
def test_ab_checks_its_output_before_the_test(
    tmp_path: Path, output: list[str], message: str
) -> None:
    """No warning of the test's (a default metric left out) before the output's error."""
    log = pl.read_parquet(sample_interactions_path()).drop("dwell")
    log.write_parquet(tmp_path / "log.parquet")
    (tmp_path / "out").mkdir()
    done = irm_in_process("ab", "log.parquet", *output, cwd=tmp_path)
    assert _error(done) == f"irm: error: {message}\n"


@pytest.mark.parametrize("flag", [["--memory-limit", "4GiB"], ["--explain"]])
def test_buckets_auto_memory_the_fix_a_message_names_is_taken(
    files: Path, flag: list[str]
) -> None:
    args = ["evaluate", "a.txt", "--qrels", "qrels.txt", "-m", "map", "--format", "csv"]
    refused = irm_in_process(*args, "--buckets", "2", *flag, cwd=files)
    assert "or pass --buckets auto-memory" in _error(refused)
    done = irm_in_process(*args, "--buckets", "auto-memory", *flag, cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout == irm_in_process(*args, cwd=files).stdout


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--param", "k=10", "-k", "20"],
         "-k 20 and --param 'k=10' both give rrf's k: give it once, with -k"),
        (["--param", "k=10", "--param", "k=20"],
         "--param 'k=20': parameter 'k' is given twice (--param 'k=10' before); give each "
         "parameter once"),
    ],
)  # fmt: skip
def test_fuse_refuses_rrf_k_given_twice(files: Path, flags: list[str], message: str) -> None:
    done = irm_in_process("fuse", "a.txt", "b.txt", *flags, "-o", "f.run", cwd=files)
    assert _error(done) == f"irm: error: {message}\n"
    assert not (files / "f.run").exists()


def test_systems_run_beside_several_run_files_says_the_command_adds_it(files: Path) -> None:
    args = ["evaluate", "a.txt", "b.txt", "--qrels", "qrels.txt", "--systems", "run"]
    assert _error(irm_in_process(*args, cwd=files)) == (
        "irm: error: --systems run: the 2 run files are told apart by a 'run' column the "
        "command adds (each file's name), which is a system key already: drop --systems run\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "{a}", "b.txt", "--qrels", "qrels.txt", "-m", "map", "--format", "csv"],
        ["fuse", "{a}", "b.txt", "-o", "-"],
    ],
)
def test_compare_and_fuse_read_a_run_from_standard_input(files: Path, args: list[str]) -> None:
    from_file = irm_in_process(*(a.format(a="a.txt") for a in args), cwd=files)
    from_stdin = irm_in_process(*(a.format(a="-") for a in args), cwd=files, stdin=RUN_A.encode())
    assert from_stdin.returncode == 0, from_stdin.stderr
    # compare names the system by its file, '-' here
    assert from_stdin.stdout == from_file.stdout.replace(",a,", ",-,")


PRED = "query_id,doc_id,p,y\nq1,d1,0.9,1\nq1,d2,0.2,0\nq2,d1,0.4,1\n"
RUN_COLUMNS = "(its columns: 'query_id', 'doc_id', 'score', 'run_id')"
EVAL = ["evaluate", "a.txt", "--qrels", "qrels.txt", "-m", "map"]
COMPARE = ["compare", "a.txt", "b.txt", "--qrels", "qrels.txt", "--markers", "daggers"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*EVAL, "--depth", "0"],
         "irm evaluate: error: argument --depth: expected an integer > 0, got '0' (see 'irm "
         "evaluate --help')"),
        (["compare", "a.txt", "b.txt", "--qrels", "qrels.txt", "--depth", "-1"],
         "irm compare: error: argument --depth: expected an integer > 0, got '-1' (see 'irm "
         "compare --help')"),
        ([*EVAL, "--debias", "-1"],
         "irm evaluate: error: argument --debias: expected IQR_COEF or IQR_COEF:SEED, a "
         "finite number >= 0 and an integer seed >= 0, e.g. 1.5 or 1.5:7, got '-1' (see "
         "'irm evaluate --help')"),
        (["evaluate", "a.txt", "--qrels", "qrels.txt", "-m", "nope"],
         "irm: error: unknown metric 'nope'. Did you mean: ne, pop_reo, novelty, entropy? "
         "See 'irm metrics' for every metric and its aliases."),
        ([*EVAL, "--buckets", "2", "--spill-dir", "no"],
         "irm: error: --spill-dir no does not exist; create the folder first, or drop "
         "--spill-dir for the system's temporary folder"),
        (["evaluate", "pred.csv", "-m", "auc", "--label", "y", "--prediction", "p",
          "--positive-label", "x"],
         "irm: error: pred.csv: column 'y' has dtype Int64 but --positive-label x is a "
         "string: pass a number, e.g. --positive-label 1, or cast the labels to strings"),
        (["fuse", "a.txt", "-o", "x.run"],
         "irm: error: irm fuse needs two or more run files; got only a.txt"),
        (["ab", "log.parquet", "-m", "ndcg@10"],
         "irm: error: metric 'ndcg@10' is not a click metric: it reads "
         "relevance judgments, which an impression log does not hold; evaluate it with irm "
         "evaluate RUN --qrels QRELS -m ndcg@10, or choose a click metric such as 'ctr@10' "
         "('irm metrics')"),
        ([*EVAL, "--by", "nope"],
         f"irm: error: a.txt: column 'nope' not found in the run {RUN_COLUMNS}; --by nope "
         "names none of its columns: name one it has, or give each query's group with "
         "--queries FILE"),
        ([*EVAL, "--systems", "nope"],
         f"irm: error: a.txt: column 'nope' not found in the run {RUN_COLUMNS}; --systems "
         "nope names none of its columns: name one it has"),
        (["ab", "log.parquet", "--by", "nope"],
         "irm: error: log.parquet: column 'nope' not found in the log (its columns: 'arm', "
         "'user_id', 'session_id', 'position', 'clicked'); --by nope names none of its "
         "columns: name one it has"),
        ([*EVAL, "--queries", "pred.csv"],
         "irm: error: --queries pred.csv places each query in its --by groups, and no --by "
         "was given: add --by COL (a column of the queries' table), or drop --queries"),
        ([*COMPARE, "--format", "csv"],
         "irm: error: --markers daggers marks the cells of a report (terminal, markdown, "
         "latex, html), and --format csv writes the tidy table, which has no markers: drop "
         "--markers, or write a report (e.g. --format markdown)"),
        ([*COMPARE, "-o", "x.json"],
         "irm: error: --markers daggers marks the cells of a report (terminal, markdown, "
         "latex, html), and -o x.json writes the tidy table, which has no markers: drop "
         "--markers, or write a report (e.g. --format markdown)"),
    ],
)  # fmt: skip
def test_messages_name_the_flags_and_commands(files: Path, args: list[str], message: str) -> None:
    (files / "pred.csv").write_text(PRED)
    log = pl.read_parquet(sample_interactions_path())
    log.select("arm", "user_id", "session_id", "position", "clicked").write_parquet(
        files / "log.parquet"
    )
    done = irm_in_process(*args, cwd=files)
    assert _error(done) == f"{message}\n"
    assert not (files / "x.json").exists()


def test_markers_still_mark_a_report(files: Path) -> None:
    done = irm_in_process(*COMPARE, "--baseline", "a", "-m", "map", cwd=files)
    assert done.returncode == 0, done.stderr
    assert "†/‡: significantly better/worse than a" in done.stdout
