"""Smoke test of benchmarks/ at a tiny size, so the scripts never rot.

Runs the generator, the side-by-side harness (every library, both modes, one repeat)
and the out-of-core script on tiny data under tmp_path. No time is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
LIBS = [
    "irm-rank", "irm-score", "irm-full", "irm-unchecked", "ranx", "pytrec_eval", "minimal", "floor"
]  # fmt: skip
# mrr@10 is left out: pytrec_eval's recip_rank is not cut at 10
SHARED_METRICS = ["ndcg@10", "map", "recall@100", "precision@10"]


def _py(*args: object, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def harness_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The harness's data folder, shared by the two harness tests: both read the same
    tiny data (20 queries of 10 documents), which run.py generates into it once (a
    folder already there is read, not generated again)."""
    return tmp_path_factory.mktemp("harness-data")


@pytest.mark.parametrize("int_ids", [False, True])
def test_generate_deterministic_and_consistent(tmp_path: Path, int_ids: bool) -> None:
    flags = ["--queries", 20, "--docs", 10, "--chunk-queries", 8, "--hive"]
    flags += ["--int-ids"] if int_ids else []
    for name in ("a", "b"):
        _py(BENCH / "generate.py", *flags, "--out", tmp_path / name)
    a, b = tmp_path / "a", tmp_path / "b"
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet"))
    assert len(files) == 2 + 3 + 3  # run, qrels, 3 buckets (20 queries / 8) of each
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f

    run = pl.read_parquet(a / "run.parquet")
    qrels = pl.read_parquet(a / "qrels.parquet")
    hive = pl.scan_parquet(a / "run" / "**" / "*.parquet", hive_partitioning=True)
    assert hive.drop("bucket").collect().equals(run)
    # the judgments in the run's buckets: the same rows, each query in its run's bucket
    hive_qrels = pl.read_parquet(a / "qrels" / "**" / "*.parquet", hive_partitioning=True)
    assert (
        hive_qrels.drop("bucket")
        .sort("query_id", "doc_id")
        .equals(qrels.sort("query_id", "doc_id"))
    )
    run_buckets = hive.select("query_id", "bucket").unique().collect()
    assert run_buckets["query_id"].n_unique() == run_buckets.height == 20
    pairs = hive_qrels.select("query_id", "bucket").unique()
    assert pairs.join(run_buckets, on=["query_id", "bucket"]).height == pairs.height == 20
    id_type = pl.Int64 if int_ids else pl.String
    assert run.schema == pl.Schema(
        {"query_id": id_type, "doc_id": id_type, "rank": pl.Int32, "score": pl.Float64}
    )
    assert qrels.schema == pl.Schema(
        {"query_id": id_type, "doc_id": id_type, "relevance": pl.Int64}
    )
    assert run.height == 200
    assert run["query_id"].n_unique() == qrels["query_id"].n_unique() == 20
    assert not run.select("query_id", "doc_id").is_duplicated().any()
    assert not qrels.select("query_id", "doc_id").is_duplicated().any()
    assert qrels["relevance"].is_between(0, 3).all()
    # scores fall strictly with rank inside each query
    assert run.select((pl.col("score").diff().over("query_id").fill_null(-1.0) < 0).all()).item()


def test_harness_all_libraries(tmp_path: Path, harness_data: Path) -> None:
    # every library in the compute mode (one child each); the end-to-end mode, which
    # adds the file reading, runs in test_harness_many_systems
    out, raw = tmp_path / "results.md", tmp_path / "results.json"
    _py(
        BENCH / "run.py",
        *("--sizes", 20, "--docs", 10, "--repeats", 1, "--jobs", 2, "--modes", "compute"),
        *("--out", out, "--json", raw, "--data-dir", harness_data),
    )
    results = json.loads(raw.read_text())
    assert {(r["lib"], r["mode"]) for r in results} == {(lib, "compute") for lib in LIBS}
    for r in results:
        assert r["status"] == "ok", r
        assert r["time_s"] >= 0
        assert r["rss_peak_mib"] > 0
    # every library computes the same means on the same data
    ref = next(r for r in results if r["lib"] == "pytrec_eval")["values"]
    for r in results:
        if r["lib"] == "floor":
            continue
        for m in SHARED_METRICS:
            assert r["values"][m] == pytest.approx(ref[m], abs=1e-9), (r["lib"], m)

    md = out.read_text()
    assert "## Times and peak memory" in md
    for lib in LIBS:
        assert f"| {lib} |" in md


def test_harness_many_systems(tmp_path: Path, harness_data: Path) -> None:
    # --systems: S copies of one run in one systems="system" call; each system's means are
    # the single run's
    out, raw = tmp_path / "results.md", tmp_path / "results.json"
    _py(
        BENCH / "run.py",
        *("--sizes", 20, "--docs", 10, "--repeats", 1, "--libs", "irm-rank"),
        *("--systems", "1,3", "--systems-queries", 20, "--modes", "e2e"),
        *("--out", out, "--json", raw, "--data-dir", harness_data),
    )
    results = json.loads(raw.read_text())
    systems = [r for r in results if r["lib"] == "irm-systems"]
    assert sorted(r["systems"] for r in systems) == [1, 3]
    single = next(r for r in results if r["lib"] == "irm-rank")["values"]
    for r in systems:
        assert r["status"] == "ok", r
        assert r["cpu_s"] >= 0
        for m in SHARED_METRICS:
            assert r["values"][m] == single[m], (r["systems"], m)
    md = out.read_text()
    assert "## Many runs in one call" in md
    assert md.count("| 3 | 20 | 600 |") == 1


def test_out_of_core_small(tmp_path: Path) -> None:
    out = tmp_path / "ooc.md"
    _py(
        BENCH / "out_of_core.py",
        *("--rows", "1K", "--docs", 10, "--chunk-queries", 50, "--irm-buckets", "0,3,auto"),
        *("--out", out, "--data-dir", tmp_path / "data"),
    )
    rows = [line for line in out.read_text().splitlines() if line.startswith("| 1,000 ")]
    assert len(rows) == 4  # irm-rank: plain, 3 buckets, auto; floor
    assert sum("| irm-rank (buckets=3) |" in line for line in rows) == 1
    assert sum("| irm-rank (buckets=auto) |" in line for line in rows) == 1
    assert all(line.rstrip().endswith("| ok |") for line in rows), rows
    assert (tmp_path / "data" / "q100_d10_str_s0_c50" / "run" / "bucket=01").is_dir()


def test_vectors_benchmark_runs(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    _py(
        BENCH / "vectors.py",
        *("--corpus", 300, "--queries", 20, "--dim", 8, "--k", 5, "--repeats", 1),
        *("--ooc-rows", 600, "--ooc-queries", 10, "--block-size", 128),
        *("--recall-queries", 200, "--recall-corpus", 2000),
        *("--data", tmp_path / "data", "--out", out),
    )
    text = out.read_text()
    assert "ratio to faiss" in text
    assert "| irm.knn(queries, path): pyarrow (child process) |" in text
    assert "| irm.knn(queries, pl.scan_parquet(path)): polars (child process) |" in text
    assert "formula over the numpy arrays: True" in text


def test_knn_decode_benchmark_runs(tmp_path: Path) -> None:
    done = _py(
        BENCH / "knn_decode.py",
        *("--rows", 3000, "--dim", 8, "--block-size", 1000, "--repeats", 1),
        *("--data", tmp_path),
    )
    assert (tmp_path / "decode_3000_8.parquet").is_file()
    assert "pyarrow ParquetFile.iter_batches: " in done.stdout
    assert "irm.knn's path reader (pyarrow, checked blocks): " in done.stdout


def test_recsys42_benchmark_runs(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    # a section written by hand below the generated table stays when the table is rewritten
    hand = "## A section by hand\n\n| 7 | a table of its own |\n"
    out.write_text(f"# old title\n\n| 1 | stale |\n\n{hand}")
    done = _py(
        BENCH / "recsys42.py",
        *("--rows", "5K", "--users", 100, "--items", 1000, "--out", out, "--floor"),
        "--families",
    )
    assert "ndcg@10 alone: " in done.stdout
    # each family timed with ndcg@10 (its measured metrics counted)
    assert "  ndcg@10 + Elliot (7): wall " in done.stdout
    assert "  ndcg@10 + RecTools (9): wall " in done.stdout  # intersection@10 skipped
    assert "the run's passes alone (floor): " in done.stdout
    assert "the run's and the side tables' passes (floor): " in done.stdout
    text = out.read_text()
    assert "| rows | users | items | metrics |" in text
    # Elliot's metrics are in this registry: measured, never skipped
    assert "pop_rsp@10, pop_reo@10, aclt@10" in text
    assert text.endswith(f"\n\n{hand}")  # once: its table is not read as the generated one's
    assert text.count("| 7 |") == 1
    assert "# old title" not in text


def test_ope_slates_benchmark_runs() -> None:
    """benchmarks/ope_slates.py on 200 rounds, this checkout's src: its synthetic log is
    one the checks accept (the log it drew before 5a2a83b was refused, unseen: pscore
    varied within a round)."""
    done = _py(BENCH / "ope_slates.py", *("--rounds", 200, "--repeats", 1, "--src", ROOT / "src"))
    times = json.loads(done.stdout)[str(ROOT / "src")]
    assert set(times) == {"means", "bootstrap interval, 1,000 resamples", "per_query"}
