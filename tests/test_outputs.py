"""Every output goes through io/output.py: the suffix names the format, --format overrides,
files are written atomically; ``irm metrics``; CLI errors name flags; README's example runs."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.errors import InvalidValueError, MissingFileError
from polars_irmetrics.io.files import sample_paths
from polars_irmetrics.io.output import write_atomic, write_table

from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]
RUN_TXT = "q1 Q0 a 1 3.0 sys\nq1 Q0 b 2 2.0 sys\nq2 Q0 a 1 1.0 sys\n"
QRELS_TXT = "q1 0 b 1\nq2 0 a 0\nq3 0 z 2\n"


def irm_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The ``irm`` command's exit status, stdout and stderr (run in this process as a
    fresh process runs it: :func:`tests.helpers.irm_in_process`)."""
    return irm_in_process(*args, cwd=cwd)


@pytest.fixture
def trec_files(tmp_path: Path) -> tuple[Path, Path]:
    run, qrels = tmp_path / "bm25.txt", tmp_path / "qrels.txt"
    run.write_text(RUN_TXT)
    qrels.write_text(QRELS_TXT)
    return run, qrels


def _expected(run: Path, qrels: Path) -> pl.DataFrame:
    return irm.evaluate(irm.read_trec_run(run), ["map"], qrels=irm.read_trec_qrels(qrels))


# ------------------------------------------------------------------ suffix picks the format
def test_evaluate_output_suffix_picks_the_format(
    trec_files: tuple[Path, Path], tmp_path: Path
) -> None:
    run, qrels = trec_files
    args = ["evaluate", str(run), "--qrels", str(qrels), "-m", "map"]
    expected = _expected(run, qrels)
    for suffix in (".parquet", ".csv", ".json", ".md", ".tex"):
        assert main([*args, "-o", str(tmp_path / f"out{suffix}")]) == 0
    assert_frame_equal(pl.read_parquet(tmp_path / "out.parquet"), expected)
    assert_frame_equal(pl.read_csv(tmp_path / "out.csv"), expected, check_dtypes=False)
    assert json.loads((tmp_path / "out.json").read_text()) == expected.to_dicts()
    num_q, map_text = expected["num_q"].item(), f"{expected['map'].item():.4f}"
    assert (tmp_path / "out.md").read_text() == (
        f"| num_q | map |\n|---:|---:|\n| {num_q} | {map_text} |\n"
    )
    assert (tmp_path / "out.tex").read_text() == (
        "\\begin{tabular}{rr}\n\\toprule\nnum\\_q & map \\\\\n\\midrule\n"
        f"{num_q} & {map_text} \\\\\n\\bottomrule\n\\end{{tabular}}\n"
    )
    # --format names the format of a suffix that names none (one that names another
    # format is refused: test_small_trust_round32); .txt is the aligned table, .html a
    # page (an unknown suffix is refused: test_evaluate_and_compare_accept_the_same_suffixes)
    assert main([*args, "-o", str(tmp_path / "x.csv.out"), "--format", "csv"]) == 0
    assert (tmp_path / "x.csv.out").read_text() == (tmp_path / "out.csv").read_text()
    assert main([*args, "-o", str(tmp_path / "x.out"), "--format", "table"]) == 0
    assert main([*args, "-o", str(tmp_path / "x.txt")]) == 0
    assert (tmp_path / "x.txt").read_text() == (tmp_path / "x.out").read_text()
    assert (tmp_path / "x.txt").read_text().splitlines()[0].split() == ["num_q", "map"]


def test_compare_and_ab_and_metrics_follow_the_suffix(tmp_path: Path) -> None:
    runs, qrels = sample_paths()
    args = ["compare", "--qrels", str(qrels), *map(str, runs[:2]), "-m", "map"]
    assert main([*args, "-o", str(tmp_path / "c.parquet")]) == 0
    assert main([*args, "-o", str(tmp_path / "c.tex")]) == 0
    tidy = pl.read_parquet(tmp_path / "c.parquet")
    assert tidy.select("metric", "system", "baseline").row(0) == ("map", "run_dense", "run_bm25")
    # irm.report's booktabs table: numbers aligned on the decimal point
    tex = (tmp_path / "c.tex").read_text()
    assert tex.startswith("% needs \\usepackage{booktabs}")
    assert "\\begin{tabular}{lr@{.}l}\n\\toprule" in tex
    assert main(["ab", "--sample", "-m", "ctr@10", "-o", str(tmp_path / "ab.parquet")]) == 0
    assert "warnings" in pl.read_parquet(tmp_path / "ab.parquet").columns
    assert main(["metrics", "recip_rank", "-o", str(tmp_path / "m.csv")]) == 0
    assert pl.read_csv(tmp_path / "m.csv").row(0)[:1] == ("mrr",)


def test_fuse_and_trec_eval_follow_the_suffix(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("q1 Q0 x 1 3 a\nq1 Q0 y 2 2 a\n")
    (tmp_path / "b.txt").write_text("q1 Q0 y 1 5 b\nq1 Q0 z 2 1 b\n")
    (tmp_path / "q.txt").write_text("q1 0 y 1\n")
    runs = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert main(["fuse", *runs, "-o", str(tmp_path / "f.csv")]) == 0
    assert main(["fuse", *runs, "-o", str(tmp_path / "f.run")]) == 0
    fused = pl.read_csv(tmp_path / "f.csv")
    assert fused["doc_id"].to_list() == ["y", "x", "z"]
    assert (tmp_path / "f.run").read_text().splitlines()[0].split()[:4] == ["q1", "Q0", "y", "1"]
    te = ["trec-eval", "-m", "map", "-m", "P.1", str(tmp_path / "q.txt"), runs[0]]
    assert main([*te, "-o", str(tmp_path / "t.txt")]) == 0
    assert main([*te, "-o", str(tmp_path / "t.parquet")]) == 0
    assert (tmp_path / "t.txt").read_text().splitlines()[0].split() == ["map", "all", "0.5000"]
    assert pl.read_parquet(tmp_path / "t.parquet").rows() == [
        ("map", "all", 0.5, None),
        ("P_1", "all", 0.0, None),
    ]  # fmt: skip


def test_a_full_device_is_named_in_the_os_words(tmp_path: Path) -> None:
    # polars' writer added Rust's " (os error 28)" to the message
    (tmp_path / "a.txt").write_text("q1 Q0 x 1 3 a\nq1 Q0 y 2 2 a\n")
    (tmp_path / "b.txt").write_text("q1 Q0 y 1 5 b\nq1 Q0 z 2 1 b\n")
    runs = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    done = irm_cli("fuse", *runs, "-o", "/dev/full")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: /dev/full: cannot write: No space left on device; choose another path\n"
    )


def test_evaluate_output_errors_one_line_exit_2(
    trec_files: tuple[Path, Path], tmp_path: Path
) -> None:
    run, qrels = trec_files
    args = ["evaluate", str(run), "--qrels", str(qrels), "-m", "map"]
    missing = tmp_path / "nope" / "out.csv"
    done = irm_cli(*args, "-o", str(missing))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm: error: {missing}: cannot write, the folder {str(missing.parent)!r} does not "
        "exist; create it first\n"
    )
    done = irm_cli(*args, "--format", "parquet")
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: --format parquet writes a binary file: name it with -o FILE.parquet\n"
    )


# ------------------------------------------------------------------ atomic writes
@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_write_table_is_atomic_and_leaves_no_temporary(kind: str, tmp_path: Path) -> None:
    target = tmp_path / "out.parquet"
    target.write_bytes(b"the previous output")
    frame = pl.DataFrame({"a": [1, 2]})
    source = frame.lazy() if kind == "LazyFrame" else frame
    written = source.collect() if isinstance(source, pl.LazyFrame) else source
    write_table(written, target)
    assert_frame_equal(pl.read_parquet(target), frame)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]

    def half_then_fail(handle: object) -> None:
        handle.write(b"half")  # type: ignore[attr-defined]
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        write_atomic(target, half_then_fail)
    assert_frame_equal(pl.read_parquet(target), frame)  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]


def test_write_table_refusals(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": [1]})
    with pytest.raises(InvalidValueError, match=re.escape(
        f"{tmp_path / 'x.xyz'}: the suffix names no output format; use one of .csv, .htm, "
        ".html, .json, .markdown, .md, .parquet, .pq, .tex, .txt, or name the format "
        "(format csv)"
    )):  # fmt: skip
        write_table(frame, tmp_path / "x.xyz")
    with pytest.raises(MissingFileError, match=re.escape("does not exist; create it first")):
        write_table(frame, tmp_path / "no" / "x.csv")
    with pytest.raises(InvalidValueError, match=re.escape(
        "format 'yaml' is not a known output format; choose one of table, html, csv, json, "
        "markdown, latex, parquet"
    )):  # fmt: skip
        write_table(frame, tmp_path / "x.csv", "yaml")


def test_write_trec_run_is_atomic(tmp_path: Path) -> None:
    target = tmp_path / "run.txt"
    frame = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    for run in (frame, frame.lazy()):
        irm.write_trec_run(run, target)
        assert target.read_text() == "q1 Q0 d1 1 1.0 irm\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]


# ------------------------------------------------------------------ irm metrics
def test_irm_metrics_lists_names_aliases_summaries() -> None:
    done = irm_cli("metrics", "recip_rank")
    assert done.returncode == 0, done.stderr
    header, _, row = done.stdout.splitlines()
    assert header.split() == ["name", "aliases", "reads", "better", "summary"]
    assert " higher " in row
    mrr = irm.get_metric("mrr")
    assert row.startswith("mrr")
    assert ", ".join(a.name for a in mrr.aliases) in row
    assert row.endswith(mrr.summary.splitlines()[0])
    every = irm_cli("metrics")
    assert len(every.stdout.splitlines()) == 2 + len(irm.list_metrics())
    # the declared direction, as compare and report read it
    directions = {line.split()[0]: line for line in every.stdout.splitlines()[2:]}
    assert " lower " in directions["logloss"]
    assert " - " in directions["num_ret"]
    none = irm_cli("metrics", "no-such-metric")
    assert (none.returncode, none.stderr) == (
        2,
        "irm: error: no metric matches 'no-such-metric'; run 'irm metrics' for every metric\n",
    )


# ------------------------------------------------------------------ flags, not keywords
def test_cli_errors_name_flags_not_keywords(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text(RUN_TXT)
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,label\nq1,b,1\n")
    done = irm_cli("evaluate", "run.txt", "--qrels", "qrels.csv", "-m", "map", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: qrels.csv: no column 'relevance' (its columns: 'query_id', 'doc_id', "
        "'label'); name the relevance column with --relevance COL\n"
    )
    done = irm_cli("evaluate", "--sample", "--relevance-level", "nan")
    assert done.returncode == 2
    assert "relevance_level" not in done.stderr
    assert "--relevance-level" in done.stderr


# ------------------------------------------------------------------ README
def _readme_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """README's "Thirty seconds" block, in a folder holding the files it reads."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Thirty seconds", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    runs, qrels = sample_paths()
    (tmp_path / "runs").mkdir()
    shutil.copy(runs[0], tmp_path / "runs" / "bm25.parquet")
    shutil.copy(runs[1], tmp_path / "runs" / "dense.parquet")
    shutil.copy(qrels, tmp_path / "qrels.parquet")
    monkeypatch.chdir(tmp_path)
    return block


def test_readme_thirty_second_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = _readme_example(tmp_path, monkeypatch)
    names: dict[str, object] = {}
    exec(compile(block, "README.md", "exec"), names)
    judged = names["judged"]
    assert isinstance(judged, pl.LazyFrame)
    by_expression = judged.group_by("query_id").agg(irm.ndcg(k=10)).collect().sort("query_id")
    runs, qrels = sample_paths()
    by_evaluate = irm.evaluate(
        pl.read_parquet(runs[0]), ["ndcg@10"], qrels=pl.read_parquet(qrels), per_query=True
    ).sort("query_id")
    assert_frame_equal(by_expression, by_evaluate.select(by_expression.columns))


# ------------------------------------------------------------------ one language for -o
#: The suffixes every ``irm`` command that writes a table accepts, and what each writes
#: (the first characters of the file): evaluate's and compare's alike.
ACCEPTED = {
    ".csv": "", ".json": "[", ".parquet": "PAR1", ".pq": "PAR1", ".md": "| ",
    ".markdown": "| ", ".tex": "", ".html": "<!DOCTYPE html>", ".htm": "<!DOCTYPE html>",
    ".txt": "",
}  # fmt: skip
ACCEPTED_TEXT = ".csv, .htm, .html, .json, .markdown, .md, .parquet, .pq, .tex, .txt"


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_evaluate_and_compare_accept_the_same_suffixes(command: str, tmp_path: Path) -> None:
    runs, qrels = sample_paths()
    if command == "evaluate":
        args = ["evaluate", *map(str, runs[:2]), "--qrels", str(qrels), "-m", "map"]
    else:
        args = ["compare", "--qrels", str(qrels), *map(str, runs[:2]), "-m", "map"]
    for suffix, start in ACCEPTED.items():
        target = tmp_path / f"out{suffix}"
        assert main([*args, "-o", str(target)]) == 0
        assert target.read_bytes().startswith(start.encode()), suffix
    page = (tmp_path / "out.html").read_text()
    assert page.rstrip().endswith("</html>")
    assert "run_bm25" in page
    assert "http" not in page.replace("http-equiv", "")  # self-contained
    # a suffix that names no format is refused, naming the file and the accepted ones,
    # before anything is evaluated or written
    for name in ("means.xlsx", "means", "means.out"):
        target = tmp_path / name
        done = irm_cli(*args, "-o", str(target))
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"irm: error: {target}: the suffix names no output format; use one of "
            f"{ACCEPTED_TEXT}, or name the format (--format csv)\n"
        )
        assert not target.exists()


def test_compare_checks_every_output_before_writing(tmp_path: Path) -> None:
    runs, qrels = sample_paths()
    args = ["compare", "--qrels", str(qrels), *map(str, runs[:2]), "-m", "map"]
    table = tmp_path / "t.md"
    done = irm_cli(*args, "-o", str(table), "--plot", str(tmp_path / "x.pdf"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm: error: plot file {str(tmp_path / 'x.pdf')!r} must end in .png or .svg "
        "(e.g. deltas.png)\n"
    )
    missing = tmp_path / "no" / "d.png"
    done = irm_cli(*args, "-o", str(table), "--plot", str(missing))
    assert done.returncode == 2
    assert done.stderr == (
        f"irm: error: {missing}: cannot write, the folder {str(missing.parent)!r} does not "
        "exist; create it first\n"
    )
    (tmp_path / "folder.md").mkdir()
    done = irm_cli(*args, "-o", str(tmp_path / "folder.md"), "--plot", str(tmp_path / "d.png"))
    assert done.returncode == 2
    assert "folder.md: is a folder, not a file; name a file in it" in done.stderr
    same = tmp_path / "same.png"
    done = irm_cli(*args, "--format", "csv", "-o", str(same), "--plot", str(same))
    assert done.stderr == (
        f"irm: error: -o {same} and --plot {same} name the same file; name two files\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.md"]  # nothing written
    done = irm_cli(*args, "--baseline", "run_bm25", "-o", str(table), "--plot", str(same))
    assert done.returncode == 0, done.stderr
    assert table.read_text().startswith("| system | map |")
    assert same.read_bytes().startswith(b"\x89PNG")


def test_compare_std_keeps_the_footnote() -> None:
    runs, qrels = sample_paths()
    args = ["compare", "--qrels", str(qrels), *map(str, runs[:2]), "-m", "map"]
    done = irm_cli(*args, "--baseline", "run_bm25", "--std")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == [
        "mean ± standard deviation of the per-query values (ddof=0): each system's over the "
        "paired queries, as ranx's return_std",
        "Two-sided paired t-test, Holm correction over 1 comparison (all metrics together), "
        "significant at adjusted p ≤ 0.05; 30 queries; baseline: run_bm25.",
    ]
    assert " ± " in lines[2]


# ------------------------------------------------------------------ one atomic writer
def test_one_atomic_writer_for_every_output() -> None:
    """Only io/output.py renames a temporary file into place: every other module that
    writes a file calls its write_atomic (reports, plots, TREC and fused runs)."""
    package = ROOT / "src" / "polars_irmetrics"
    writers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if re.search(r"os\.replace\(|mkstemp\(|def write_atomic|def _umask", path.read_text())
    )
    assert writers == ["io/output.py"]


def test_atomic_writer_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "means.csv"
    frame = pl.DataFrame({"a": [1]})
    write_table(frame, target)
    mask = os.umask(0o022)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask  # a plain open()'s mode
    target.chmod(0o640)
    write_table(frame, target)
    assert target.stat().st_mode & 0o777 == 0o640  # as open(path, "w") keeps it


def test_fuse_checks_its_output_before_fusing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("q1 Q0 x 1 3 a\n")
    (tmp_path / "b.txt").write_text("q1 Q0 y 1 5 b\n")
    runs = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    (tmp_path / "fused").mkdir()
    done = irm_cli("fuse", *runs, "-o", str(tmp_path / "fused"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm: error: {tmp_path / 'fused'}: is a folder, not a file; name a file in it "
        f"(e.g. {tmp_path / 'fused' / 'results.csv'})\n"
    )


def test_readme_thirty_second_example_prints_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each line of the example a reader would see printed (a bare expression) is a
    # table, not a LazyFrame's query plan
    block = _readme_example(tmp_path, monkeypatch)
    names: dict[str, object] = {}
    shown = []
    for statement in ast.parse(block).body:
        if isinstance(statement, ast.Expr):
            value = eval(compile(ast.Expression(statement.value), "README.md", "eval"), names)
            shown.append((statement.lineno, type(value).__name__))
        else:
            exec(compile(ast.Module([statement], []), "README.md", "exec"), names)
    assert len(shown) == 4
    assert all(kind == "DataFrame" for _, kind in shown), shown
