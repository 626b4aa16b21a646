"""``irm``: outputs that are not regular files, one-line usage errors, ``fuse --step``,
a failing standard output, and malformed CSV lines in logs, runs and judgments."""

from __future__ import annotations

import errno
import io
import os
import stat
import threading
from pathlib import Path

import polars as pl
import pytest

from polars_irmetrics.io import output
from polars_irmetrics.io.files import sample_interactions_path, sample_paths

from .helpers import irm_in_process

RAGGED = "{name}, line 3: 4 fields where the header has 3; fix or drop the line (a separator "
RAGGED += "inside a value needs quotes)"


@pytest.fixture
def trec(tmp_path: Path) -> Path:
    """The bundled sample as TREC files: qrels.txt, bm25.txt, dense.txt."""
    runs, qrels = sample_paths()
    judged = pl.read_parquet(qrels)
    lines = [f"{q} 0 {d} {r}\n" for q, d, r in judged.select("query_id", "doc_id", "relevance")
             .iter_rows()]  # fmt: skip
    (tmp_path / "qrels.txt").write_text("".join(lines))
    for name in ("bm25", "dense"):
        path = next(p for p in runs if name in p.name)
        run = pl.read_parquet(path).with_columns(
            rank=pl.col("score").rank("ordinal", descending=True).over("query_id")
        )
        rows = run.select("query_id", "doc_id", "rank", "score").iter_rows()
        (tmp_path / f"{name}.txt").write_text(
            "".join(f"{q} Q0 {d} {k} {s} {name}\n" for q, d, k, s in rows)
        )
    return tmp_path


def _map_csv(trec: Path) -> str:
    done = irm_in_process("evaluate", "bm25.txt", "--qrels", "qrels.txt", "-m", "map",
                          "--format", "csv", cwd=trec)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


# -- 1. outputs that are not regular files --------------------------------------------


def test_a_fifo_output_is_streamed_not_replaced(trec: Path) -> None:
    fifo = trec / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = irm_in_process("evaluate", "bm25.txt", "--qrels", "qrels.txt", "-m", "map",
                          "--format", "csv", "-o", str(fifo), cwd=trec)  # fmt: skip
    reader.join(timeout=30)
    assert (done.returncode, done.stderr) == (0, "")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got == [_map_csv(trec).encode()]


def test_a_symlink_output_writes_its_target_and_keeps_the_link(trec: Path) -> None:
    (trec / "real").mkdir()
    target = trec / "real" / "means.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    link = trec / "means.csv"
    link.symlink_to(Path("real") / "means.csv")
    done = irm_in_process("evaluate", "bm25.txt", "--qrels", "qrels.txt", "-m", "map",
                          "-o", "means.csv", cwd=trec)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert link.is_symlink()
    assert os.readlink(link) == str(Path("real") / "means.csv")
    assert target.read_text() == _map_csv(trec)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in (trec / "real").iterdir()) == ["means.csv"]


def test_a_dangling_symlink_output_creates_its_target(trec: Path) -> None:
    (trec / "out").mkdir()
    (trec / "link.csv").symlink_to(Path("out") / "made.csv")
    done = irm_in_process("evaluate", "bm25.txt", "--qrels", "qrels.txt", "-m", "map",
                          "-o", "link.csv", cwd=trec)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert (trec / "link.csv").is_symlink()
    assert (trec / "out" / "made.csv").read_text() == _map_csv(trec)


def test_a_character_device_is_written_directly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a regular file that os.stat reports as a character device (as /dev/null is): it
    # is opened and written, never replaced by a renamed temporary file
    device = tmp_path / "device"
    device.write_bytes(b"")
    real_stat = os.stat
    inode = real_stat(device).st_ino

    def fake_stat(path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> os.stat_result:
        found = real_stat(path, follow_symlinks=follow_symlinks)
        if os.fspath(path) != os.fspath(device):
            return found
        fields = list(found)
        fields[0] = stat.S_IFCHR | 0o666
        return os.stat_result(fields)

    monkeypatch.setattr(os, "stat", fake_stat)
    output.write_atomic(device, lambda handle: handle.write(b"streamed\n"))
    monkeypatch.undo()
    assert os.stat(device).st_ino == inode
    assert device.read_bytes() == b"streamed\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["device"]


def test_dash_output_is_standard_output(trec: Path) -> None:
    done = irm_in_process("evaluate", "bm25.txt", "--qrels", "qrels.txt", "-m", "map",
                          "--format", "csv", "-o", "-", cwd=trec)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == _map_csv(trec)
    assert not (trec / "-").exists()
    fused = irm_in_process("fuse", "bm25.txt", "dense.txt", "-o", "-", cwd=trec)
    assert (fused.returncode, fused.stderr) == (0, "")
    assert fused.stdout.splitlines()[0].split()[:4] == ["q001", "Q0", "d05226", "1"]
    assert not (trec / "-").exists()


# -- 2. fuse --step that gives no grid ------------------------------------------------

# optimize_fusion's grid_points refuses the step (before the runs are read), its
# ``step=`` written as the command's ``--step``
_NO_WEIGHTS = (
    "gives no weights of the 2 runs that sum to 1 (each weight a multiple of the step from 0 "
    "to 1, their float sum exactly 1.0, as in ranx's grid): pass a step that divides 1, e.g. "
    "--step 0.1 or --step 0.25"
)
_RRF_STEP = (
    "is not valid for rrf's k (whole numbers from 10 to 100, ranx's grid): it must be an "
    "integer >= 1, e.g. --step 10"
)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--step", "0.7"], f"--step 0.7 {_NO_WEIGHTS}"),
        (["--step", "5"], f"--step 5 {_NO_WEIGHTS}"),  # as written, not 5.0
        (["--step", "nan"], "--step nan is not valid; it must be a finite number > 0"),
        (["--step", "0"], "--step 0 is not valid; it must be a finite number > 0"),
        (["--method", "rrf", "--step", "0.5"], f"--step 0.5 {_RRF_STEP}"),
    ],
)
def test_fuse_step_without_a_grid_is_one_line(trec: Path, args: list[str], message: str) -> None:
    done = irm_in_process("fuse", "bm25.txt", "dense.txt", "--optimize", "--qrels", "qrels.txt",
                          *args, cwd=trec)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"irm: error: {message}\n"
    assert done.stdout == ""


# -- 3. usage errors: one line -------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["evaluate", "x.txt", "--depth", "abc"],
         "irm evaluate: error: argument --depth: expected an integer > 0, got 'abc' "
         "(see 'irm evaluate --help')"),
        (["evaluate", "x.txt", "--buckets", "x"],
         "irm evaluate: error: argument --buckets: expected a positive integer, 'auto' or "
         "'auto-memory', got 'x' (see 'irm evaluate --help')"),
        (["evaluate", "--format", "bogus"],
         "irm evaluate: error: argument --format: invalid choice: 'bogus' (choose from "
         "'table', 'csv', 'json', 'parquet', 'markdown', 'latex', 'html', 'trec') "
         "(see 'irm evaluate --help')"),
        (["bogus"],
         "irm: error: argument COMMAND: invalid choice: 'bogus' (choose from 'evaluate', "
         "'demo', 'trec-eval', 'ab', 'compare', 'fuse', 'metrics') (see 'irm --help')"),
        ([], "irm: error: the following arguments are required: COMMAND (see 'irm --help')"),
        (["trec-eval", "-l", "abc"],
         "irm trec-eval: error: argument -l/--level_for_rel: expected an integer, got 'abc' "
         "(see 'irm trec-eval --help')"),
        (["trec-eval"],
         "irm trec-eval: error: the following arguments are required: QRELS, RUN "
         "(see 'irm trec-eval --help')"),
        (["fuse"],
         "irm fuse: error: the following arguments are required: RUN (see 'irm fuse --help')"),
        (["evaluate", "--sample", "--bogus"],
         "irm evaluate: error: unrecognized arguments: --bogus (see 'irm evaluate --help')"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line(tmp_path: Path, args: list[str], line: str) -> None:
    done = irm_in_process(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == line + "\n"


# -- 4. a failing standard output --------------------------------------------------


class _FullStdout(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "bm25.txt", "--qrels", "qrels.txt", "-m", "map", "--per-query"],
        ["trec-eval", "qrels.txt", "bm25.txt"],
        ["compare", "--qrels", "qrels.txt", "bm25.txt", "dense.txt", "-m", "map"],
    ],
)
def test_a_failing_standard_output_is_named(
    trec: Path,
    args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from polars_irmetrics.cli.main import main

    monkeypatch.chdir(trec)
    monkeypatch.setattr("sys.stdout", _FullStdout())
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "irm: error: standard output: cannot write: No space left on device; write to a "
        "file instead (-o FILE)\n"
    )


# -- 5. irm ab: a malformed CSV line, a CSV timestamp ---------------------------------


@pytest.fixture
def log_csv(tmp_path: Path) -> Path:
    path = tmp_path / "log.csv"
    pl.read_parquet(sample_interactions_path()).write_csv(path)
    return path


def _ab(*args: str, cwd: Path) -> str:
    done = irm_in_process("ab", *args, "--format", "csv", cwd=cwd)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout


def test_ab_refuses_a_csv_line_with_a_field_too_many(log_csv: Path) -> None:
    lines = log_csv.read_text().splitlines(keepends=True)
    lines[4] = lines[4].rstrip("\n") + ",extra\n"
    log_csv.write_text("".join(lines))
    done = irm_in_process("ab", "log.csv", "-m", "ctr@10", cwd=log_csv.parent)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: log.csv, line 5: 12 fields where the header has 11; fix or drop the "
        "line (a separator inside a value needs quotes)\n"
    )


@pytest.mark.parametrize("metric", ["ctr@10", "time_to_first_click"])
def test_ab_reads_a_csv_log_with_its_timestamps_as_the_parquet_one(
    log_csv: Path, metric: str
) -> None:
    parquet = _ab("--sample", "-m", metric, cwd=log_csv.parent)
    assert _ab("log.csv", "-m", metric, cwd=log_csv.parent) == parquet


def test_ab_names_the_line_of_a_timestamp_that_is_none(log_csv: Path) -> None:
    lines = log_csv.read_text().splitlines(keepends=True)
    fields = lines[6].split(",")
    fields[-1] = "yesterday\n"
    lines[6] = ",".join(fields)
    log_csv.write_text("".join(lines))
    done = irm_in_process("ab", "log.csv", "-m", "time_to_first_click", cwd=log_csv.parent)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: log.csv, line 7: column 'timestamp' holds 'yesterday', not a timestamp; "
        "write it as ISO 8601, e.g. 2026-03-02T10:01:41, or name another column with "
        "--timestamp COL\n"
    )
    # a metric that does not read the timestamp does not look at it
    assert _ab("log.csv", "-m", "ctr@10", cwd=log_csv.parent).startswith("metric,")


# -- 6. malformed CSV lines of runs and judgments name the file and the line ------------


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["evaluate", "run.csv", "--qrels", "qrels.txt", "-m", "map"], "run.csv"),
        (["evaluate", "bm25.txt", "--qrels", "qrels.csv", "-m", "map"], "qrels.csv"),
        (["trec-eval", "qrels.csv", "bm25.txt"], "qrels.csv"),
        (["compare", "--qrels", "qrels.txt", "run.csv", "bm25.txt", "-m", "map"], "run.csv"),
        (["fuse", "run.csv", "bm25.txt", "-o", "fused.txt"], "run.csv"),
    ],
)
def test_a_csv_line_with_a_field_too_many_names_file_and_line(
    trec: Path, args: list[str], name: str
) -> None:
    (trec / "run.csv").write_text("query_id,doc_id,score\nq001,d1,1.0\nq001,d2,0.5,x\n")
    (trec / "qrels.csv").write_text("query_id,doc_id,relevance\nq001,d1,1\nq001,d2,1,7\n")
    done = irm_in_process(*args, cwd=trec)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {RAGGED.format(name=name)}\n"
    assert not (trec / "fused.txt").exists()


# -- 7. trec-eval measure parameters that are not numbers -----------------------------


@pytest.mark.parametrize(
    ("measure", "text"),
    [
        ("ndcg.1=x", "x"),
        ("rbp.p=abc", "abc"),
        ("Rprec_mult.x", "x"),
        ("iprec_at_recall.x", "x"),
        ("relstring.x", "x"),
        ("P.5x", "5x"),
        ("utility.1,-1,0,z", "z"),
    ],
)
def test_trec_eval_refuses_a_parameter_that_is_not_a_number(
    trec: Path, measure: str, text: str
) -> None:
    # trec_eval reads parameters with atof/strtol: -m ndcg.1=x printed a gain of 0 for
    # relevance 1, -m rbp.p=abc an RBP of p = 0, with exit status 0
    done = irm_in_process("trec-eval", "-m", measure, "qrels.txt", "bm25.txt", cwd=trec)
    assert done.returncode == 2
    assert done.stderr == (
        f"irm: error: measure '{measure}': parameter {text!r} is not a number (trec_eval "
        "would read its leading digits, or 0 without any); write a number, e.g. -m P.5,10, "
        "-m ndcg.1=1,2=3 or -m rbp.p=0.8\n"
    )


def test_trec_eval_takes_numbers_as_before(trec: Path) -> None:
    done = irm_in_process(
        "trec-eval", "-m", "P.5,10", "-m", "ndcg.1=1,2=3", "-m", "rbp.p=0.8", "qrels.txt",
        "bm25.txt", cwd=trec,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == ["P_5", "P_10", "ndcg_1=1,2=3", "rbp_p=0.8"]
