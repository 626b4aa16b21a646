"""Issue 28's file reading: every bad file refused in one line naming the file (and the
line), by the readers and by the ``irm`` command (exit 2); nothing of polars' own text."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import polars as pl
import pytest

from polars_irmetrics.errors import ColumnNotFoundError, FileFormatError, MissingFileError
from polars_irmetrics.io.files import detect_format, scan_qrels, scan_run

from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]
RUN_SUFFIX = (
    "expected a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or "
    "JSON lines"
)


def irm_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The ``irm`` command's exit status, stdout and stderr (run in this process as a
    fresh process runs it: :func:`tests.helpers.irm_in_process`)."""
    return irm_in_process(*args, cwd=cwd)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "comma.run").write_text("q1 Q0 Paris,_Texas 1 2.5 r\nq1 Q0 b 2 1.0 r\n")
    (tmp_path / "comma.qrels").write_text("q1 0 Paris,_Texas 2\nq1 0 b 0\n")
    ok = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "score": [1.0]})
    ok.write_parquet(tmp_path / "ok.parquet")
    data = (tmp_path / "ok.parquet").read_bytes()
    (tmp_path / "trunc.parquet").write_bytes(data[: len(data) // 2])
    (tmp_path / "empty").mkdir()
    (tmp_path / "dir[1]").mkdir()
    (tmp_path / "dir[1]" / "run.txt").write_text("q1 Q0 b 1 1.0 r\n")
    ok.rename({"query_id": "qid"}).write_parquet(tmp_path / "wrong.parquet")
    (tmp_path / "mixed").mkdir()
    ok.write_parquet(tmp_path / "mixed" / "a.parquet")
    ok.drop("score").write_parquet(tmp_path / "mixed" / "b.parquet")
    return tmp_path


def test_trec_doc_ids_with_commas_are_trec(files: Path) -> None:
    assert detect_format(files / "comma.run") == "trec"
    assert detect_format(files / "comma.qrels") == "trec"
    assert scan_run(files / "comma.run").collect()["doc_id"].to_list() == ["Paris,_Texas", "b"]
    done = irm_cli("evaluate", "comma.run", "--qrels", "comma.qrels", "-m", "P_1", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2].split() == ["1", "1.0000"]


def test_csv_is_typed_over_the_whole_file(files: Path) -> None:
    rows = "".join(f"q{i},d{i},1\n" for i in range(150))
    (files / "late.csv").write_text("query_id,doc_id,relevance\n" + rows + "q150,d150,0.5\n")
    for frame in (scan_qrels(files / "late.csv"), scan_qrels(files / "late.csv").collect()):
        got = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
        assert got.schema["relevance"] == pl.Float64
        assert got["relevance"].to_list()[-1] == 0.5
    bad = "".join(f"q{i},d{i},{i}.5\n" for i in range(150))
    (files / "bad.csv").write_text("query_id,doc_id,score\n" + bad + "q150,d150,abc\n")
    with pytest.raises(FileFormatError, match=re.escape(
        f"{files / 'bad.csv'}, line 152: column 'score' holds 'abc', not a number; "
        "fix or drop the line"
    )):  # fmt: skip
        scan_run(files / "bad.csv")
    done = irm_cli("evaluate", "bad.csv", "--qrels", "comma.qrels", cwd=files)
    assert (done.returncode, done.stderr) == (
        2, "irm: error: bad.csv, line 152: column 'score' holds 'abc', not a number; fix or "
        "drop the line\n",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("run", "error", "message"),
    [
        ("trunc.parquet", FileFormatError, "trunc.parquet: a truncated Parquet file (it does "
         "not end with Parquet's footer, {size} bytes); write it again, or copy it whole; "
         + RUN_SUFFIX),
        ("empty", MissingFileError, "empty: the folder holds no file; " + RUN_SUFFIX),
        ("nothing*.parquet", MissingFileError, "nothing*.parquet: the pattern matches no "
         "file; " + RUN_SUFFIX),
        ("mixed", FileFormatError, "mixed/b.parquet: no column 'score', which "
         "mixed/a.parquet has; every file of a run needs the same columns"),
        ("wrong.parquet", ColumnNotFoundError, "wrong.parquet: no column 'query_id' (its "
         "columns: 'qid', 'doc_id', 'score'); name the query id column with query_id=..."),
    ],
)  # fmt: skip
def test_bad_sources_name_the_file(
    files: Path, run: str, error: type[Exception], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(files)
    size = (files / "trunc.parquet").stat().st_size
    with pytest.raises(error, match=re.escape(message.format(size=size))):
        scan_run(run)


def test_bad_sources_one_line_exit_2_in_every_command(files: Path) -> None:
    size = (files / "trunc.parquet").stat().st_size
    truncated = (
        f"irm: error: trunc.parquet: a truncated Parquet file (it does not end with Parquet's "
        f"footer, {size} bytes); write it again, or copy it whole; {RUN_SUFFIX}\n"
    )
    for command in (
        ["evaluate", "trunc.parquet", "--qrels", "comma.qrels"],
        ["trec-eval", "comma.qrels", "trunc.parquet"],
        ["compare", "--qrels", "comma.qrels", "ok.parquet", "trunc.parquet"],
    ):
        done = irm_cli(*command, cwd=files)
        assert (done.returncode, done.stderr) == (2, truncated)
    # several runs: the one without the column is named, not a 'null values' diagnosis
    done = irm_cli("evaluate", "ok.parquet", "wrong.parquet", "--qrels", "comma.qrels", cwd=files)
    assert (done.returncode, done.stderr) == (
        2, "irm: error: wrong.parquet: no column 'query_id' (its columns: 'qid', 'doc_id', "
        "'score'); name the query id column with --query-id COL\n",
    )  # fmt: skip


def test_paths_with_brackets_are_paths(files: Path) -> None:
    assert detect_format(files / "dir[1]" / "run.txt") == "trec"
    assert scan_run(files / "dir[1]" / "run.txt").collect()["doc_id"].to_list() == ["b"]
    (files / "p[1].parquet").write_bytes((files / "ok.parquet").read_bytes())
    assert scan_run(files / "p[1].parquet").collect()["doc_id"].to_list() == ["b"]


def test_a_huge_malformed_line_is_cut_in_the_error(files: Path) -> None:
    (files / "big.run").write_text("q1 Q0 d 1 x" + "y" * 3_000_000 + " r\n")
    with pytest.raises(FileFormatError) as info:
        scan_run(files / "big.run").collect()
    text = str(info.value)
    assert len(text) < 400
    assert text.endswith("... (3000013 characters)")
    assert text.startswith(f"{files / 'big.run'}, line 1: score 'xyyy")


def test_trec_eval_parquet_integer_ids_against_trec_qrels(files: Path) -> None:
    run = pl.DataFrame(
        {"query_id": [1, 1, 2], "doc_id": ["a", "c", "b"], "score": [2.0, 1.0, 1.0]}
    )
    run.write_parquet(files / "int.parquet")
    (files / "int.qrels").write_text("1 0 c 1\n2 0 b 1\n")
    (files / "int.run").write_text("1 Q0 a 1 2.0 r\n1 Q0 c 2 1.0 r\n2 Q0 b 1 1.0 r\n")
    parquet = irm_cli("trec-eval", "-q", "-m", "map", "int.qrels", "int.parquet", cwd=files)
    text = irm_cli("trec-eval", "-q", "-m", "map", "int.qrels", "int.run", cwd=files)
    assert parquet.returncode == 0, parquet.stderr
    # AP: query 1 finds c at rank 2 (1/2), query 2 finds b at rank 1 (1)
    assert (
        parquet.stdout
        == text.stdout
        == (
            "map                   \t1\t0.5000\nmap                   \t2\t1.0000\n"
            "map                   \tall\t0.7500\n"
        )
    )


# ---------------------------------------------- issue 38: empty inputs, OS errors, every command
QRELS_SUFFIX = (
    "expected judgments: Parquet, TREC qrels (query_id iteration doc_id relevance), CSV, TSV "
    "or JSON lines"
)
LOG_SUFFIX = "expected an impression log: Parquet, CSV or TSV with a header"


@pytest.fixture
def empties(files: Path) -> Path:
    (files / "empty.txt").write_text("")
    (files / "blank.txt").write_text("\n# a comment\n\n")
    (files / "header.csv").write_text("query_id,doc_id,relevance\n")
    (files / "empty.jsonl").write_text("\n")
    pl.DataFrame(
        schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}
    ).write_parquet(files / "empty.parquet")
    (files / "run.txt").write_text("q1 Q0 b 1 1.0 r\n")
    (files / "other.txt").write_text("q1 Q0 Paris,_Texas 1 1.0 r\n")
    (files / "qrels.txt").write_text("q1 0 b 1\n")
    return files


EMPTY_RUN = {
    "empty.txt": "empty.txt: an empty file (no line of data)",
    "blank.txt": "blank.txt: an empty file (no line of data)",
    "empty.jsonl": "empty.jsonl: an empty file (no line of data)",
    "header.csv": "header.csv: an empty file (a header, no rows)",
    "empty.parquet": "empty.parquet: an empty Parquet file (no rows)",
}


EVERY_COMMAND = [
    (["evaluate", "{empty}", "--qrels", "qrels.txt"], RUN_SUFFIX),
    (["evaluate", "run.txt", "other.txt", "{empty}", "--qrels", "qrels.txt"], RUN_SUFFIX),
    (["evaluate", "run.txt", "--qrels", "{empty}"], QRELS_SUFFIX),
    (["trec-eval", "qrels.txt", "{empty}"], RUN_SUFFIX),
    (["trec-eval", "{empty}", "run.txt"], QRELS_SUFFIX),
    (["compare", "--qrels", "qrels.txt", "run.txt", "{empty}"], RUN_SUFFIX),
    (["compare", "--qrels", "{empty}", "run.txt", "other.txt"], QRELS_SUFFIX),
    (["fuse", "run.txt", "{empty}"], RUN_SUFFIX),
    (["fuse", "--optimize", "--qrels", "{empty}", "run.txt", "other.txt"], QRELS_SUFFIX),
    (["ab", "{empty}"], LOG_SUFFIX),
]


@pytest.mark.parametrize(
    ("command", "suffix", "empty"),
    # every command with an empty text file; every kind of empty file as a run and a log
    [(command, suffix, "empty.txt") for command, suffix in EVERY_COMMAND]
    + [(EVERY_COMMAND[0][0], RUN_SUFFIX, e) for e in sorted(EMPTY_RUN) if e != "empty.txt"]
    + [(["ab", "{empty}"], LOG_SUFFIX, empty) for empty in ("header.csv", "empty.parquet")]
    + [
        (
            ["evaluate", "run.txt", "--qrels", "qrels.txt", "--queries", "{empty}", "--by", "d"],
            "expected query attributes: Parquet, CSV or TSV with a header",
            "header.csv",
        )
    ],
)
def test_empty_inputs_are_refused_in_every_command(
    empties: Path, command: list[str], suffix: str, empty: str
) -> None:
    done = irm_cli(*(a.format(empty=empty) for a in command), cwd=empties)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"irm: error: {EMPTY_RUN[empty]}; {suffix}\n"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["trec-eval", "-R", "prefs", "empty.txt", "run.txt"],
         "empty.txt: an empty file (no line of data); expected judgments in the -R prefs "
         "format"),
        (["trec-eval", "-R", "qrels_jg", "empty.txt", "run.txt"],
         "empty.txt: an empty file (no line of data); expected judgments in the -R qrels_jg "
         "format"),
        (["trec-eval", "-Z", "empty.txt", "qrels.txt", "run.txt"],
         "empty.txt: an empty file (no line of data); expected z-scores (query_id measure mean "
         "stddev)"),
        (["evaluate", "run.txt", "--prefs", "empty.txt", "-m", "prefs_simp"],
         "empty.txt: an empty file (no line of data); expected preference judgments (query_id "
         "jg jsg doc_id rel_level)"),
    ],
)  # fmt: skip
def test_empty_trec_eval_side_files_are_refused(
    empties: Path, command: list[str], message: str
) -> None:
    done = irm_cli(*command, cwd=empties)
    assert (done.returncode, done.stderr) == (2, f"irm: error: {message}\n")


def _damaged(files: Path) -> None:
    # starts and ends as Parquet, but its footer is garbage
    data = (files / "ok.parquet").read_bytes()
    (files / "damaged.parquet").write_bytes(data[:4] + b"x" * (len(data) - 8) + data[-4:])


#: (file, what the message says of it); {what} is the side's expected content.
OS_FAULTS = [
    ("damaged.parquet", "damaged.parquet: a damaged Parquet file (its footer cannot be read); "
     "write it again; {what}"),
    ("empty", "empty: the folder holds no file; {what}"),
    ("ok.parquet/x", "ok.parquet/x: no such file; {what}"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "message"), OS_FAULTS)
@pytest.mark.parametrize(
    ("command", "what"),
    [
        (["evaluate", "{f}", "--qrels", "qrels.txt"], RUN_SUFFIX),
        (["evaluate", "run.txt", "--qrels", "{f}"], QRELS_SUFFIX),
        (["evaluate", "run.txt", "--qrels", "qrels.txt", "--neighbors", "{f}", "-m",
          "neighbor_recall@1"], RUN_SUFFIX),
        (["trec-eval", "qrels.txt", "{f}"], RUN_SUFFIX),
        (["trec-eval", "{f}", "run.txt"], QRELS_SUFFIX),
        (["ab", "{f}"], LOG_SUFFIX),
    ],
)  # fmt: skip
def test_os_and_parquet_faults_are_one_line_naming_the_file(
    empties: Path, command: list[str], what: str, source: str, message: str
) -> None:
    _damaged(empties)
    done = irm_cli(*(a.format(f=source) for a in command), cwd=empties)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == f"irm: error: {message.format(what=what)}\n"


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["trec-eval", "-R", "prefs", "ok.parquet/x", "run.txt"], "ok.parquet/x: no such "
         "file; expected judgments in the -R prefs format"),
        (["trec-eval", "-R", "qrels_jg", "empty", "run.txt"], "empty: not a file; expected "
         "judgments in the -R qrels_jg format"),
        (["trec-eval", "-Z", "empty", "qrels.txt", "run.txt"], "empty: not a file; expected "
         "z-scores (query_id measure mean stddev)"),
        (["evaluate", "empty", "--run-format", "trec", "--qrels", "qrels.txt"], "empty: not a "
         "file; " + RUN_SUFFIX),
        (["compare", "--qrels", "qrels.txt", "run.txt", "ok.parquet/x"], "ok.parquet/x: no "
         "such file"),
        (["fuse", "run.txt", "ok.parquet/x"], "ok.parquet/x: no such run file"),
    ],
)  # fmt: skip
def test_side_files_and_other_commands_name_the_file(
    empties: Path, command: list[str], message: str
) -> None:
    done = irm_cli(*command, cwd=empties)
    assert (done.returncode, done.stderr) == (2, f"irm: error: {message}\n")


def test_unreadable_files_are_named_without_the_os_text(empties: Path) -> None:
    from polars_irmetrics.cli.main import _os_message

    # as the command prints them (root reads any file, so the permission is simulated)
    assert _os_message(PermissionError(13, "Permission denied", "run.txt")) == (
        "run.txt: permission denied"
    )
    assert _os_message(IsADirectoryError(21, "Is a directory", "runs")) == "runs: is a directory"
    polars_text = pl.exceptions.ComputeError("Not a directory (os error 20): run.txt/x")
    assert _os_message(polars_text) == "run.txt/x: not a directory"
    locked = empties / "locked.txt"
    locked.write_text("q1 Q0 b 1 1.0 r\n")
    locked.chmod(0)
    if os.access(locked, os.R_OK):  # root reads anywhere: the real refusal cannot be made
        return
    done = irm_cli("evaluate", "locked.txt", "--qrels", "qrels.txt", cwd=empties)
    assert (done.returncode, done.stderr) == (2, "irm: error: locked.txt: permission denied\n")
