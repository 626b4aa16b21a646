"""Issue 28's file reading: every bad file refused in one line naming the file (and the
line), by the readers and by the ``irm`` command (exit 2); nothing of polars' own text."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from polars_irmetrics.errors import ColumnNotFoundError, FileFormatError, MissingFileError
from polars_irmetrics.io.files import detect_format, scan_qrels, scan_run

ROOT = Path(__file__).resolve().parents[1]
RUN_SUFFIX = (
    "expected a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or "
    "JSON lines"
)


def irm_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "polars_irmetrics", *args],
        capture_output=True, text=True, cwd=cwd, env=env, check=False,
    )  # fmt: skip


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
