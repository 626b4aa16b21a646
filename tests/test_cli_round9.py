"""irm compare takes the flags irm evaluate takes for the run's columns and the plan's
options (--query-id ... --relevance, --order, --relevance-level, --depth, --unjudged):
its error named query_id=, a keyword the command line has no flag for, and a relevance
level could not be given at all. The same numbers as irm.compare."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import irm_in_process

RUN = pl.DataFrame(
    {"qid": ["q1", "q1", "q2", "q2"], "did": ["a", "b", "a", "b"], "rk": [1, 2, 2, 1]}
)
QRELS = pl.DataFrame({"qid": ["q1", "q1", "q2"], "did": ["a", "b", "b"], "rel": [2, 1, 1]})
COLUMNS = ["--query-id", "qid", "--doc-id", "did", "--rank", "rk", "--relevance", "rel"]
KEYWORDS = {"query_id": "qid", "doc_id": "did", "rank": "rk", "relevance": "rel"}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    RUN.write_parquet(tmp_path / "a.parquet")
    RUN.with_columns(rk=pl.col("rk").reverse().over("qid")).write_parquet(tmp_path / "b.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    return tmp_path


@pytest.mark.parametrize(
    "options", [[], ["--relevance-level", "2"], ["--depth", "1"], ["--order", "rank"]]
)
def test_compare_reads_the_columns_and_options_it_is_given(
    files: Path, options: list[str]
) -> None:
    args = ["compare", "a.parquet", "b.parquet", "--qrels", "qrels.parquet", "-m", "map"]
    done = irm_in_process(*args, *COLUMNS, *options, "--format", "csv", cwd=files)
    assert done.returncode == 0, done.stderr
    got = pl.read_csv(done.stdout.encode())
    keywords = dict(KEYWORDS)
    for flag, value in zip(options[::2], options[1::2], strict=True):
        name = flag.removeprefix("--").replace("-", "_")
        keywords[name] = (
            float(value)
            if name == "relevance_level"
            else (int(value) if name == "depth" else value)
        )
    runs = {
        "a": pl.read_parquet(files / "a.parquet"),
        "b": pl.read_parquet(files / "b.parquet"),
    }
    want = irm.compare(runs, ["map"], qrels=QRELS, **keywords)  # type: ignore[arg-type]
    columns = ["metric", "system", "baseline", "delta", "mean", "baseline_mean", "p_value", "n"]
    assert got.select(columns).rows() == want.select(columns).rows()


def test_compare_without_the_column_flags_names_the_flag(files: Path) -> None:
    args = ["compare", "a.parquet", "b.parquet", "--qrels", "qrels.parquet", "-m", "map"]
    done = irm_in_process(*args, cwd=files)
    assert done.returncode == 2
    assert "--query-id" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


def test_compare_refuses_an_option_no_metric_reads(files: Path) -> None:
    args = ["compare", "a.parquet", "b.parquet", "--qrels", "qrels.parquet", "-m", "ndcg@2"]
    done = irm_in_process(*args, *COLUMNS, "--relevance-level", "2", cwd=files)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "irm: error: --relevance-level 2.0 is not read by metric 'ndcg@2'"
    )


@pytest.fixture
def scored(files: Path) -> Path:
    for name in ("a", "b"):
        frame = pl.read_parquet(files / f"{name}.parquet")
        frame.with_columns(sc=1.0 / pl.col("rk")).write_parquet(files / f"s{name}.parquet")
    return files


def test_fuse_reads_the_columns_it_is_given(scored: Path) -> None:
    ids = ["--query-id", "qid", "--doc-id", "did", "--score", "sc"]
    done = irm_in_process("fuse", "sa.parquet", "sb.parquet", *ids, "-o", "f.parquet", cwd=scored)
    assert done.returncode == 0, done.stderr
    standard = {"qid": "query_id", "did": "doc_id", "sc": "score"}
    runs = {
        name: pl.read_parquet(scored / f"s{name}.parquet").select(*standard).rename(standard)
        for name in ("a", "b")
    }
    want = irm.fuse(runs, "rrf")
    assert pl.read_parquet(scored / "f.parquet").equals(want)


def test_fuse_optimize_reads_the_judgments_relevance_column(scored: Path) -> None:
    ids = ["--query-id", "qid", "--doc-id", "did", "--score", "sc", "--relevance", "rel"]
    args = ["fuse", "sa.parquet", "sb.parquet", "--optimize", "--qrels", "qrels.parquet"]
    done = irm_in_process(*args, *ids, "--metric", "map", "--step", "0.5", cwd=scored)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("best map: 1.0000 with {'weights': [1.0, 0.0]}")


def test_fuse_relevance_without_optimize_refused(scored: Path) -> None:
    ids = ["--query-id", "qid", "--doc-id", "did", "--score", "sc", "--relevance", "rel"]
    done = irm_in_process("fuse", "sa.parquet", "sb.parquet", *ids, "-o", "f.run", cwd=scored)
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: --relevance rel names the judgments' column, which only --optimize "
        "reads: drop --relevance, or pass --optimize --qrels QRELS\n"
    )


def test_optimize_fusion_reads_a_relevance_level() -> None:
    # before: TypeError (no such keyword); each grid point's mean is evaluate's of its
    # fused run at that level
    qrels = QRELS.rename({"qid": "query_id", "did": "doc_id", "rel": "relevance"})
    runs = {
        name: RUN.rename({"qid": "query_id", "did": "doc_id"}).with_columns(
            score=(1.0 / pl.col("rk")) if name == "a" else pl.col("rk").cast(pl.Float64)
        )
        for name in ("a", "b")
    }
    _, grid = irm.optimize_fusion(  # type: ignore[misc]
        runs, "map", qrels=qrels, relevance_level=2, step=0.5, return_grid=True, buckets=None
    )
    for weights, value in grid.iter_rows():
        fused = irm.fuse(runs, "wsum", norm="min-max", weights=weights)
        assert irm.evaluate(fused, ["map"], qrels=qrels, relevance_level=2)["map"].item() == value


def test_fuse_relevance_level_without_optimize_refused(scored: Path) -> None:
    ids = ["--query-id", "qid", "--doc-id", "did", "--score", "sc"]
    args = ["fuse", "sa.parquet", "sb.parquet", *ids, "--relevance-level", "2", "-o", "f.run"]
    done = irm_in_process(*args, cwd=scored)
    assert done.returncode == 2
    assert (
        "--relevance-level 2 is read by the judged metric --optimize searches with" in done.stderr
    )


def test_fuse_optimize_at_a_relevance_level(scored: Path) -> None:
    ids = ["--query-id", "qid", "--doc-id", "did", "--score", "sc", "--relevance", "rel"]
    args = ["fuse", "sa.parquet", "sb.parquet", "--optimize", "--qrels", "qrels.parquet"]
    done = irm_in_process(
        *args, *ids, "--metric", "map", "--step", "0.5", "--relevance-level", "2", cwd=scored
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("best map: ")
