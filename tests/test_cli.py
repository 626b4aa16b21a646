"""The ``irm evaluate`` command, the file readers behind it, and README's promises."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.io.files import detect_format, sample_paths, scan_qrels, scan_run

from .helpers import irm_in_process

ROOT = Path(__file__).resolve().parents[1]

RUN_TXT = "q1 Q0 a 1 3.0 sys\nq1 Q0 b 2 2.0 sys\nq2 Q0 a 1 1.0 sys\n"
QRELS_TXT = "q1 0 b 1\nq2 0 a 0\nq3 0 z 2\n"


@pytest.fixture
def trec_files(tmp_path: Path) -> tuple[Path, Path]:
    run, qrels = tmp_path / "bm25.txt", tmp_path / "qrels.txt"
    run.write_text(RUN_TXT)
    qrels.write_text(QRELS_TXT)
    return run, qrels


def test_sample_runs_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--sample"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == [
        "run",
        "num_q",
        "ndcg@10",
        "map",
        "mrr",
        "precision@10",
        "recall@100",
    ]
    assert [line.split()[0] for line in out[2:]] == ["run_bm25", "run_dense", "run_hybrid"]
    assert main(["demo", "-m", "map"]) == 0
    assert "run_hybrid" in capsys.readouterr().out


def test_sample_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    runs, qrels = sample_paths()
    main(["evaluate", str(runs[0]), "--qrels", str(qrels), "-m", "ndcg@10", "--format", "json"])
    printed = json.loads(capsys.readouterr().out)
    expected = irm.evaluate(pl.read_parquet(runs[0]), ["ndcg@10"], qrels=pl.read_parquet(qrels))
    assert printed[0]["num_q"] == expected["num_q"].item()
    assert printed[0]["ndcg@10"] == pytest.approx(expected["ndcg@10"].item(), abs=1e-15)


def test_trec_files_table_and_per_query(
    trec_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, qrels = trec_files
    assert main(["evaluate", str(run), "--qrels", str(qrels), "-m", "P_1", "-m", "mrr"]) == 0
    assert capsys.readouterr().out == (
        "num_q     P_1     mrr\n-----  ------  ------\n    3  0.0000  0.1667\n"
    )
    main(
        [
            "evaluate",
            str(run),
            "--qrels",
            str(qrels),
            "-m",
            "mrr",
            "--per-query",
            "--format",
            "csv",
        ]
    )
    assert capsys.readouterr().out == "query_id,mrr\nq1,0.5\nq2,0.0\nq3,0.0\n"
    main(
        [
            "evaluate",
            str(run),
            "--qrels",
            str(qrels),
            "-m",
            "mrr",
            "--per-query",
            "--format",
            "trec",
            "--unretrieved",
            "drop",
        ]
    )
    assert capsys.readouterr().out == (
        "mrr                   \tq1\t0.5000\nmrr                   \tq2\t0.0000\n"
    )


def test_several_runs_give_one_row_each(
    trec_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, qrels = trec_files
    other = tmp_path / "dense.parquet"
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "score": [1.0]}).write_parquet(other)
    main(
        [
            "evaluate",
            str(run),
            str(other),
            "--qrels",
            str(qrels),
            "-m",
            "mrr",
            "--format",
            "markdown",
        ]
    )
    assert capsys.readouterr().out == (
        "| run | num_q | mrr |\n|---|---:|---:|\n| bm25 | 3 | 0.1667 |\n| dense | 3 | 0.3333 |\n"
    )


def test_parquet_output_needs_a_file(
    trec_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, qrels = trec_files
    out = tmp_path / "out.parquet"
    assert (
        main(["evaluate", str(run), "--qrels", str(qrels), "--format", "parquet", "-o", str(out)])
        == 0
    )
    assert pl.read_parquet(out).columns[0] == "num_q"
    assert main(["evaluate", str(run), "--qrels", str(qrels), "--format", "parquet"]) == 2
    assert capsys.readouterr().err == (
        "irm: error: --format parquet writes a binary file: name it with -o FILE.parquet\n"
    )


def test_hive_partitioned_logs_group_by_partition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for day, doc in (("2026-11-01", "a"), ("2026-11-02", "b")):
        folder = tmp_path / "logs" / f"day={day}"
        folder.mkdir(parents=True)
        pl.DataFrame({"query_id": ["q1"], "doc_id": [doc], "rank": [1]}).write_parquet(
            folder / "part.parquet"
        )
    qrels = tmp_path / "qrels.parquet"
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]}).write_parquet(qrels)
    main(
        [
            "evaluate",
            str(tmp_path / "logs"),
            "--qrels",
            str(qrels),
            "--by",
            "day",
            "-m",
            "P@1",
            "--format",
            "csv",
        ]
    )
    assert capsys.readouterr().out == "day,num_q,P@1\n2026-11-01,1,0.0\n2026-11-02,1,1.0\n"
    lazy = pl.scan_parquet(tmp_path / "logs").irm.evaluate(
        ["P@1"], qrels=pl.scan_parquet(qrels), by="day"
    )
    assert lazy.collect()["P@1"].to_list() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evaluate", "missing.txt", "--qrels", "q.txt"], "irm: error: missing.txt: no such file"),
        (
            ["evaluate", "{run}", "--qrels", "{qrels}", "-m", "ndcg@0"],
            "irm: error: metric 'ndcg@0': the cutoff must be a positive integer, got '0'",
        ),
        (
            ["evaluate", "{run}", "--qrels", "{qrels}", "-m", "mapp"],
            "irm: error: unknown metric 'mapp'. Did you mean: map",
        ),
        (
            ["evaluate", "{run}", "--qrels", "{qrels}", "--systems", "system"],
            "irm: error: {run}: column 'system' not found in the run",
        ),
        (["evaluate"], "irm: error: no run given: name one or more run files, or pass --sample"),
    ],
)
def test_errors_are_one_line_on_stderr(
    trec_files: tuple[Path, Path],
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run, qrels = trec_files
    argv = [a.format(run=run, qrels=qrels) for a in args]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message.format(run=run, qrels=qrels))
    assert captured.err.count("\n") == 1


@pytest.mark.parametrize("command", ["evaluate", "trec-eval"])
def test_a_data_error_names_the_file_it_is_in(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # a fault found while the plan runs named the run, not its file
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 a 1 3.0 sys\nq1 Q0 a 2 2.0 sys\n")
    qrels.write_text(QRELS_TXT)
    argv = [command, str(run), "--qrels", str(qrels)]
    if command == "trec-eval":
        argv = [command, str(qrels), str(run)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"irm: error: {run}, line 2: query 'q1' has 1 repeated listing(s) ")
    assert err.count("\n") == 1


def test_malformed_trec_line_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 a 1 3.0 sys\nq1 Q0 b 2 sys\n")
    qrels.write_text(QRELS_TXT)
    assert main(["evaluate", str(run), "--qrels", str(qrels)]) == 2
    assert re.fullmatch(r"irm: error: .*run\.txt, line 2: .*\n", capsys.readouterr().err)


def test_help_documents_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = capsys.readouterr().out
    for flag in [
        "--qrels",
        "--metric",
        "--per-query",
        "--by",
        "--format",
        "--output",
        "--sample",
        "--run-format",
        "--qrels-format",
        "--order",
        "--relevance-level",
        "--depth",
        "--unjudged",
        "--unretrieved",
        "--query-id",
        "--doc-id",
        "--rank",
        "--score",
        "--relevance",
        "--no-duplicate-check",
        "--buckets",
        "examples:",
    ]:
        assert flag in text


def test_format_detection(tmp_path: Path) -> None:
    (tmp_path / "run.trec").write_text("# comment\nq1 Q0 a 1 3.0 sys\n")
    (tmp_path / "qrels").write_text("q1\t0\ta\t1\n")
    (tmp_path / "table.txt").write_text("query_id,doc_id,rank\nq1,a,1\n")
    (tmp_path / "table.tab").write_text("query_id\tdoc_id\trank\nq1\ta\t1\n")
    pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "noext")
    pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "a.parquet")
    assert detect_format(tmp_path / "run.trec") == "trec"
    assert detect_format(tmp_path / "qrels") == "trec"
    assert detect_format(tmp_path / "table.txt") == "csv"
    assert detect_format(tmp_path / "table.tab") == "tsv"
    assert detect_format(tmp_path / "noext") == "parquet"
    assert detect_format("s3://bucket/logs/") == "parquet"
    assert detect_format(str(tmp_path / "*.parquet")) == "parquet"
    csv = scan_run(tmp_path / "table.txt").collect()
    assert csv.schema["query_id"] == pl.String
    assert scan_qrels(tmp_path / "qrels").collect().to_dicts() == [
        {"query_id": "q1", "doc_id": "a", "relevance": 1}
    ]


def test_readme_commands_are_what_ci_runs() -> None:
    # the title, one sentence, then the first code block: the two set-up commands
    readme = (ROOT / "README.md").read_text().splitlines()
    assert readme[0] == "# polars_irmetrics"
    assert readme[1] == ""
    assert readme[2].endswith(".")
    assert readme[3] == ""
    assert readme[4] == "```bash"
    install, tests = readme[5], readme[6]
    assert readme[7] == "```"
    # the main job's install takes no extra; the second command brings the test extra
    assert ".venv/bin/pip install -e . &&" in install
    assert install.endswith(".venv/bin/irm evaluate --sample")
    assert tests == ".venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest"
    # CI runs README's first code block as written, whatever it says
    ci = (ROOT / ".ci" / "run").read_text()
    assert "awk '/^```bash$/" in ci
    assert 'bash -euo pipefail -c "${setup[0]}"' in ci
    assert 'bash -euo pipefail -c "${setup[1]}"' in ci


def test_readme_links_to_every_guide() -> None:
    # README is the front door; the catalogue (tests/test_docs.py) lists every metric
    readme = (ROOT / "README.md").read_text()
    for guide in sorted((ROOT / "docs" / "guides").glob("*.md")):
        assert f"(docs/guides/{guide.name})" in readme, guide.name
    assert "(docs/metrics.md)" in readme


class _FakeTerminal:
    """A text stream that says it is a terminal and records what it gets."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.text = ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("tty", [True, False])
def test_elapsed_time_only_on_a_terminal_and_only_when_slow(tty: bool) -> None:
    import time

    from polars_irmetrics.cli.main import _Elapsed

    stream = _FakeTerminal(tty)
    with _Elapsed(stream, delay=0.05):  # type: ignore[arg-type]
        time.sleep(0.7)
    if tty:
        assert "evaluating... " in stream.text
        assert re.search(r"\rdone in \d+\.\d s", stream.text)
    else:
        assert stream.text == ""
    quick = _FakeTerminal(tty)
    with _Elapsed(quick, delay=5.0):  # type: ignore[arg-type]
        pass
    assert quick.text == ""


def test_no_duplicate_check_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 a 1 3.0 s\nq1 Q0 z 2 2.0 s\nq1 Q0 z 3 1.0 s\n")
    qrels.write_text("q1 0 a 1\n")
    assert main(["evaluate", str(run), "--qrels", str(qrels), "-m", "num_ret"]) == 2
    assert "has 1 repeated listing(s)" in capsys.readouterr().err
    argv = ["evaluate", str(run), "--qrels", str(qrels), "-m", "num_ret", "--format", "csv"]
    assert main([*argv, "--no-duplicate-check"]) == 0
    assert capsys.readouterr().out == "num_q,num_ret\n1,3.0\n"
    assert main([*argv, "--no-duplicate-check", "--buckets", "3"]) == 0
    assert capsys.readouterr().out == "num_q,num_ret\n1,3.0\n"


@pytest.mark.parametrize("buckets", ["2", "auto"])
def test_buckets_flag_gives_the_same_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], buckets: str
) -> None:
    argv = ["evaluate", "--sample", "-m", "ndcg@10", "-m", "map", "--format", "csv"]
    assert main(argv) == 0
    whole = capsys.readouterr().out
    spill = tmp_path / "spill"
    spill.mkdir()
    assert main([*argv, "--buckets", buckets, "--spill-dir", str(spill)]) == 0
    assert capsys.readouterr().out == whole
    assert list(spill.iterdir()) == []


@pytest.mark.parametrize(
    ("flag", "drawn"), [("--progress", True), ("--no-progress", False), (None, False)]
)
def test_progress_flag_draws_the_buckets_bar(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flag: str | None,
    drawn: bool,
) -> None:
    # standard error is captured (not a terminal): only --progress draws the bar
    monkeypatch.delenv("IRM_PROGRESS", raising=False)
    argv = ["evaluate", "--sample", "-m", "map", "--format", "csv", "--buckets", "3"]
    assert main([*argv] if flag is None else [*argv, flag]) == 0
    captured = capsys.readouterr()
    assert ("buckets" in captured.err and "3/3" in captured.err) is drawn
    assert drawn or captured.err == ""
    assert captured.out.startswith("run,num_q,map\n")


@pytest.mark.parametrize("value", ["0", "x", "-3"])
def test_buckets_flag_refuses_bad_values(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--sample", "--buckets", value])
    assert exit_.value.code == 2
    expected = f"expected a positive integer, 'auto' or 'auto-memory', got {value!r}"
    assert expected in capsys.readouterr().err


def _irm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The ``irm`` command's exit status, stdout and stderr (run in this process as a
    fresh process runs it: :func:`tests.helpers.irm_in_process`)."""
    return irm_in_process(*args, cwd=cwd)


@pytest.fixture
def neighbor_files(tmp_path: Path) -> Path:
    # q1: the exact top 2 are a (0.9), b (0.8); the index returned a and c (0.5): 1 of 2.
    # q2: exact c (0.6), a (0.7) ... the index returned b at 0.65 (within the 2nd true
    # score 0.6 plus epsilon) and c: 2 of 2.
    pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["a", "b", "a", "c"],
            "score": [0.9, 0.8, 0.7, 0.6],
        }
    ).write_parquet(tmp_path / "exact.parquet")
    pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["a", "c", "b", "c"],
            "score": [0.9, 0.5, 0.65, 0.6],
        }
    ).write_parquet(tmp_path / "approx.parquet")
    (tmp_path / "exact.txt").write_text("q1 Q0 a 1 0.9 exact\nq1 Q0 b 2 exact\n")
    return tmp_path


def test_neighbors_flag_gives_neighbor_recall(neighbor_files: Path) -> None:
    done = _irm(
        "evaluate", "approx.parquet", "--neighbors", "exact.parquet",
        "-m", "neighbor_recall@2", "--per-query", "--format", "csv", cwd=neighbor_files,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["query_id,neighbor_recall@2", "q1,0.5", "q2,1.0"]
    approx = pl.read_parquet(neighbor_files / "approx.parquet")
    exact = pl.read_parquet(neighbor_files / "exact.parquet")
    means = _irm(
        "evaluate", "approx.parquet", "--neighbors", "exact.parquet",
        "-m", "neighbor_recall@2", "--format", "json", cwd=neighbor_files,
    )  # fmt: skip
    library = irm.evaluate(approx, ["neighbor_recall@2"], neighbors=exact)
    assert json.loads(means.stdout) == library.to_dicts()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--neighbors", "missing.parquet"],
            "irm: error: missing.parquet: no such file or folder",
        ),
        (
            ["--neighbors", "exact.txt"],
            "irm: error: exact.txt, line 2: expected 6 whitespace-separated fields",
        ),
        (
            [],
            "irm: error: metric 'neighbor_recall@2' reads the exact nearest neighbours "
            "(e.g. irm.knn(queries, corpus, k=...)): pass --neighbors FILE",
        ),
    ],
)
def test_neighbors_flag_errors_name_the_file(
    neighbor_files: Path, args: list[str], message: str
) -> None:
    done = _irm("evaluate", "approx.parquet", *args, "-m", "neighbor_recall@2", cwd=neighbor_files)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(message)
    assert done.stderr.count("\n") == 1


def test_neighbors_flag_without_its_metric_is_refused(neighbor_files: Path) -> None:
    (neighbor_files / "qrels.txt").write_text(QRELS_TXT)
    done = _irm(
        "evaluate", "approx.parquet", "--qrels", "qrels.txt", "--neighbors", "exact.parquet",
        "-m", "ndcg@10", cwd=neighbor_files,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: --neighbors holds the exact nearest neighbours of neighbor_recall@k and "
        "neighbor_recall_rel@k, and no metric asked for reads them: drop --neighbors, or ask "
        "for one of them (in a call of its own)\n"
    )


# ----------------------------------------------- issue 38: the CLI speaks the API's language
def _json(done: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


@pytest.fixture
def prediction_files(tmp_path: Path) -> Path:
    # one table: y and p; two tables: the predictions beside labels named 'yes'/'no'
    log = pl.DataFrame({
        "y": [0, 1, 1, 0, 1, 0], "p": [0.1, 0.9, 0.4, 0.5, 0.8, 0.3],
        "w": [1.0, 2.0, 1.0, 1.0, 0.5, 3.0],
    })  # fmt: skip
    log.write_parquet(tmp_path / "log.parquet")
    preds = pl.DataFrame({
        "query_id": ["u1", "u1", "u2", "u2", "u3"], "doc_id": ["a", "b", "a", "c", "d"],
        "p": [0.1, 0.9, 0.4, 0.5, 0.7],
    })  # fmt: skip
    preds.write_parquet(tmp_path / "preds.parquet")
    labels = pl.DataFrame({
        "query_id": ["u1", "u1", "u2", "u2", "u9"], "doc_id": ["a", "b", "a", "c", "z"],
        "y": ["no", "yes", "yes", "no", "yes"],
    })  # fmt: skip
    labels.write_csv(tmp_path / "labels.csv")
    return tmp_path


def test_a_prediction_log_is_read_by_the_columns_its_metrics_read(
    prediction_files: Path,
) -> None:
    # the log has no query_id nor doc_id: auc does not read them
    log = pl.read_parquet(prediction_files / "log.parquet")
    done = _irm(
        "evaluate", "log.parquet", "-m", "auc", "-m", "logloss", "--label", "y",
        "--prediction", "p", "--sample-weight", "w", "--format", "json", cwd=prediction_files,
    )  # fmt: skip
    expected = irm.evaluate(log, ["auc", "logloss"], label="y", prediction="p", sample_weight="w")
    assert _json(done) == expected.to_dicts()
    # the two-table form: --labels, --positive-label and --unmatched as the keywords
    done = _irm(
        "evaluate", "preds.parquet", "--labels", "labels.csv", "-m", "auc", "--label", "y",
        "--prediction", "p", "--positive-label", "yes", "--unmatched", "drop",
        "--format", "json", cwd=prediction_files,
    )  # fmt: skip
    expected = irm.evaluate(
        pl.read_parquet(prediction_files / "preds.parquet"), ["auc"],
        labels=pl.read_csv(prediction_files / "labels.csv"), label="y", prediction="p",
        positive_label="yes", unmatched="drop",
    )  # fmt: skip
    assert _json(done) == expected.to_dicts()
    assert expected["auc"].item() == 0.75  # u1: b (yes) over a; u2: c (no) over a (yes)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["log.parquet", "-m", "auc", "--label", "y"], "log.parquet: no column 'prediction' "
         "(its columns: 'y', 'p', 'w'); name the prediction column with --prediction COL"),
        (["log.parquet", "-m", "auc", "--label", "y", "--prediction", "p", "--sample-weight",
          "weight"], "log.parquet: no column 'weight' (its columns: 'y', 'p', 'w'); name the "
         "sample weight column with --sample-weight COL"),
        (["preds.parquet", "--labels", "labels.csv", "-m", "auc", "--prediction", "p"],
         "labels.csv: no column 'label' (its columns: 'query_id', 'doc_id', 'y'); name the "
         "label column with --label COL"),
        (["preds.parquet", "--labels", "labels.csv", "-m", "auc", "--prediction", "p",
          "--label", "y", "--positive-label", "yes"], "1 (query_id, doc_id) pair(s) have a "
         "prediction but no label (e.g. (u3, d)); pass --unmatched drop to evaluate only the "
         "pairs on both sides (as Microsoft Recommenders' inner merge does)"),
    ],
)  # fmt: skip
def test_prediction_flags_errors_name_the_file_and_the_flag(
    prediction_files: Path, args: list[str], message: str
) -> None:
    done = _irm("evaluate", *args, cwd=prediction_files)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_every_keyword_of_evaluate_is_a_flag_of_the_same_name() -> None:
    import inspect
    import typing

    from polars_irmetrics.cli.main import _flags, build_parser
    from polars_irmetrics.ground.options import EvalKwargs

    flags = _flags(build_parser(), "evaluate")
    keywords = set(typing.get_type_hints(EvalKwargs))
    parameters = inspect.signature(irm.evaluate).parameters
    tables = {n for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert tables == {
        "qrels", "queries", "interactions", "item_features", "prefs", "qrels_jg", "labels",
        "neighbors", "policy", "reward_model", "reference", "propensities", "groups",
        "target", "user_groups",
    }  # fmt: skip
    renamed = {"check_duplicates": "--no-duplicate-check"}
    for keyword in sorted(keywords | tables):
        assert keyword in flags, f"irm evaluate has no flag for {keyword}="
        option = renamed.get(keyword, "--" + keyword.replace("_", "-"))
        assert option in flags[keyword].option_strings, (keyword, flags[keyword].option_strings)


@pytest.fixture
def id_files(tmp_path: Path) -> Path:
    # a list-shaped run with integer ids (JSON lines) against TREC qrels (text ids), and
    # a TREC run of another system with tied scores (ranked by doc id descending)
    (tmp_path / "ann.jsonl").write_text(
        '{"query_id": 1, "doc_id": [11, 1, 17]}\n{"query_id": 2, "doc_id": [3, 4]}\n'
    )
    (tmp_path / "qrels.txt").write_text("1 0 1 1\n1 0 17 1\n2 0 4 2\n3 0 9 1\n")
    (tmp_path / "bm25.txt").write_text(
        "1 Q0 17 1 2.0 s\n1 Q0 1 2 2.0 s\n1 Q0 5 3 1.0 s\n2 Q0 4 1 1.0 s\n"
    )
    return tmp_path


def test_ids_flag_reads_integer_ids_as_text(id_files: Path) -> None:
    metrics = ["-m", "map", "-m", "mrr", "--per-query", "--format", "json"]
    refused = _irm("evaluate", "ann.jsonl", "--qrels", "qrels.txt", *metrics, cwd=id_files)
    assert (refused.returncode, refused.stderr) == (
        2, "irm: error: ann.jsonl, qrels.txt: column 'query_id' holds integers in the run "
        "(Int64) but strings in the judgments (String); cast one side, e.g. --ids str (every "
        "id of every file read as text)\n",
    )  # fmt: skip
    done = _irm(
        "evaluate", "ann.jsonl", "--qrels", "qrels.txt", "--ids", "str", *metrics, cwd=id_files
    )
    # q1: 1 at rank 2, 17 at rank 3 of 2 relevant: AP (1/2 + 2/3) / 2; q2: 4 at rank 2;
    # q3: judged, not retrieved
    assert _json(done) == [
        {"query_id": "1", "map": (1 / 2 + 2 / 3) / 2, "mrr": 0.5},
        {"query_id": "2", "map": 0.5, "mrr": 0.5},
        {"query_id": "3", "map": 0.0, "mrr": 0.0},
    ]


@pytest.mark.parametrize("ids", [[], ["--ids", "str"]])
def test_a_list_run_and_a_long_run_together_as_each_alone(id_files: Path, ids: list[str]) -> None:
    metrics = ["-m", "map", "-m", "mrr", "-m", "P@1", "--per-query", "--format", "json"]
    both = _json(_irm(
        "evaluate", "ann.jsonl", "bm25.txt", "--qrels", "qrels.txt", *ids, *metrics, cwd=id_files
    ))  # fmt: skip
    args = ["--qrels", "qrels.txt", "--ids", "str", *metrics]
    alone = {
        name: _json(_irm("evaluate", path, *args, cwd=id_files))
        for name, path in (("ann", "ann.jsonl"), ("bm25", "bm25.txt"))
    }
    assert both == [{"run": name, **row} for name in ("ann", "bm25") for row in alone[name]]
    # bm25's tie: 17 above 1 (doc ids descending as text), as trec_eval ranks it: AP 1
    assert alone["bm25"][0]["map"] == 1.0


def test_a_quoted_glob_of_systems_is_said_to_be_read_as_one_run(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    for name, docs in (("bm25", ["a", "b"]), ("dense", ["b", "a"])):
        run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": docs, "score": [2.0, 1.0]})
        run.write_parquet(tmp_path / "runs" / f"{name}.parquet")
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    done = _irm("evaluate", "runs/*.parquet", "--qrels", "qrels.txt", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2, "irm: error: column 'doc_id' of the run: query 'q1' has 2 repeated listing(s) "
        "(each of a document listed before in the query); each (query, document) pair may "
        "appear once (trec_eval refuses such runs too); runs/*.parquet names 2 files "
        "(runs/bm25.parquet, runs/dense.parquet, ...), read as one run: to score each file "
        "as a system, name them one by one (an unquoted shell glob does), or pass --systems "
        "COL with a column that tells them apart\n",
    )  # fmt: skip
    each = _irm(
        "evaluate", "runs/bm25.parquet", "runs/dense.parquet", "--qrels", "qrels.txt",
        "-m", "mrr", "--format", "csv", cwd=tmp_path,
    )  # fmt: skip
    assert each.stdout == "run,num_q,mrr\nbm25,1,1.0\ndense,1,0.5\n"
    # ranked files of other documents: two at rank 1, the note after the run's own hint
    for name, docs in (("bm25", ["a", "b"]), ("dense", ["c", "d"])):
        run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": docs, "rank": [1, 2]})
        run.write_parquet(tmp_path / "runs" / f"{name}.parquet")
    done = _irm("evaluate", "runs", "--qrels", "qrels.txt", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2, "irm: error: column 'rank' of the run: query 'q1' has 2 duplicate rank(s); each "
        "rank may hold one document: break the ties, or rank by score with --order score; "
        "runs names 2 files (runs/bm25.parquet, runs/dense.parquet, ...), read as one run: to "
        "score each file as a system, name them one by one (an unquoted shell glob does), or "
        "pass --systems COL with a column that tells them apart\n",
    )  # fmt: skip


_WARNING_SCRIPT = """
import importlib, sys, warnings
from polars_irmetrics import errors

cli = importlib.import_module("polars_irmetrics.cli.main")
evaluate = cli.evaluate_tables

def warned(*args, **kwargs):
    warnings.warn("run 'day1' misses 1 of 2 judged queries\\nsecond line", errors.CoverageWarning)
    warnings.warn("check_duplicates=False skips a check", UserWarning)
    return evaluate(*args, **kwargs)

cli.evaluate_tables = warned
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("runs", [["bm25.txt"], ["bm25.txt", "dense.txt"]])
def test_warnings_are_one_line_each_with_the_shell_glob_hint(
    trec_files: tuple[Path, Path], runs: list[str]
) -> None:
    run, _ = trec_files
    (run.parent / "dense.txt").write_text(RUN_TXT)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _WARNING_SCRIPT, "evaluate", *runs, "--qrels", "qrels.txt",
         "-m", "mrr"],
        capture_output=True, text=True, cwd=run.parent, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    hint = (
        " (several run files were given: each is scored as a system on every judged query, "
        "as an unquoted shell glob gives them; if they are parts of one run, such as one file "
        "per day, quote the glob, e.g. 'logs/*.parquet', to read them as one run)"
    )
    assert done.stderr == (
        f"irm: warning: run 'day1' misses 1 of 2 judged queries{hint if len(runs) > 1 else ''}\n"
        "irm: warning: --no-duplicate-check skips a check\n"
    )


def test_ab_reads_several_files_as_one_log(tmp_path: Path) -> None:
    # an unquoted shell glob over a log's days: the files are one log, as the pattern is
    from polars_irmetrics.io.files import sample_interactions_path

    log = pl.read_parquet(sample_interactions_path())
    half = log.height // 2
    log.slice(0, half).write_parquet(tmp_path / "day1.parquet")
    log.slice(half).write_parquet(tmp_path / "day2.parquet")
    args = ["-m", "ctr@10", "--format", "csv"]
    split = _irm("ab", "day1.parquet", "day2.parquet", *args, cwd=tmp_path)
    pattern = _irm("ab", "day*.parquet", *args, cwd=tmp_path)
    whole = _irm("ab", "--sample", *args, cwd=tmp_path)
    assert split.returncode == 0, split.stderr
    assert split.stdout == pattern.stdout == whole.stdout


def test_off_policy_estimators_from_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a log of three rounds under a logger that chose with 0.5, the policy and a model
    log = pl.DataFrame(
        {"round_id": [1, 2, 3], "item": ["a", "a", "b"], "reward": [1.0, 0.0, 1.0],
         "pscore": [0.5] * 3}
    )  # fmt: skip
    policy = pl.DataFrame(
        {"round_id": [1, 1, 2, 2, 3, 3], "item": ["a", "b"] * 3,
         "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9]}
    )  # fmt: skip
    model = policy.select("round_id", "item", q_hat=pl.Series([0.6, 0.3] * 3))
    for name, frame in (("log", log), ("pi", policy), ("q", model)):
        frame.write_parquet(tmp_path / f"{name}.parquet")
    args = ["evaluate", str(tmp_path / "log.parquet"), "-m", "ips", "-m", "dr", "--action",
            "item", "--policy", str(tmp_path / "pi.parquet"), "--reward-model",
            str(tmp_path / "q.parquet"), "--format", "json"]  # fmt: skip
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = irm.evaluate(log, ["ips", "dr"], policy=policy, reward_model=model, action="item")
    # ips: (0.9 * 1 / 0.5 + 0.5 * 0 / 0.5 + 0.9 * 1 / 0.5) / 3 = 1.2
    assert printed[0]["ips"] == pytest.approx(1.2, abs=1e-12)
    assert printed[0]["ips"] == expected["ips"].item()
    assert printed[0]["dr"] == expected["dr"].item()


def test_rank_similarity_against_a_reference_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]}
    )
    ref = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
    )
    run.write_parquet(tmp_path / "run.parquet")
    ref.write_parquet(tmp_path / "ref.parquet")
    args = ["evaluate", str(tmp_path / "run.parquet"), "-m", "jaccard@3", "-m", "overlap@3",
            "--reference", str(tmp_path / "ref.parquet"), "--format", "json"]  # fmt: skip
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    # two of the four distinct documents are shared: jaccard 2/4, overlap 2/3
    assert printed[0]["jaccard@3"] == 0.5
    assert printed[0]["overlap@3"] == pytest.approx(2 / 3, abs=1e-15)
