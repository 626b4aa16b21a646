"""Round 13 of the comparison: ``irm compare`` without ``--qrels`` where no metric
asked for reads the judgments (rnd, rkl, rrd), the tidy formats of a report refusing
the report options they would ignore, and tukey_hsd's refusals naming tukey_hsd and
its own options."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.io.files import sample_paths
from tests.helpers import irm_in_process

# --- irm compare: --qrels only where a metric reads the judgments ---


@pytest.fixture(scope="module")
def sample_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    """The sample runs and a groups file of their documents (every third one 'f')."""
    paths, _ = sample_paths()
    docs = pl.concat([pl.read_parquet(p).select("doc_id") for p in paths]).unique().sort("doc_id")
    groups = docs.with_columns(
        group=pl.when(pl.int_range(pl.len()) % 3 == 0).then(pl.lit("f")).otherwise(pl.lit("m"))
    )
    path = tmp_path_factory.mktemp("groups") / "groups.csv"
    groups.write_csv(path)
    return list(paths), path


def test_compare_cli_rnd_without_qrels(sample_files: tuple[list[Path], Path]) -> None:
    """rnd reads the runs and --groups only: no --qrels asked for (argparse required
    it, and with it the library refused --qrels: a circle)."""
    paths, groups = sample_files
    args = ["compare", *map(str, paths), "--groups", str(groups), "-m", "rnd", "-m", "rkl"]
    args += ["--query-set", "common"]  # the sample runs retrieve 29, 30 and 31 queries
    done = irm_in_process(*args, "--baseline", "run_bm25", "--format", "csv")
    assert (done.returncode, done.stderr) == (0, "")
    runs = {p.stem: pl.read_parquet(p) for p in paths}
    expected = irm.compare(
        runs, ["rnd", "rkl"], groups=pl.read_csv(groups), baseline="run_bm25", query_set="common"
    ).write_csv()
    assert done.stdout == expected


def test_compare_cli_judgments_still_needed(sample_files: tuple[list[Path], Path]) -> None:
    """A metric that reads the judgments, --qrels left out: one line naming --qrels."""
    paths, _ = sample_files
    done = irm_in_process("compare", *map(str, paths), "-m", "ndcg@10")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "irm: error: column 'relevance' not found in the judged table (its columns: "
        "'query_id', 'doc_id', 'score'); pass --qrels QRELS with the judgments, or add "
        "the relevance column (name it with --relevance COL)"
    ]
    _, qrels = sample_paths()
    fixed = irm_in_process("compare", *map(str, paths), "-m", "ndcg@10", "--qrels", str(qrels))
    assert (fixed.returncode, fixed.stderr) == (0, "")
