"""Files, round 9: a Spark-written folder (``_SUCCESS``, ``.crc`` files beside the
parts) was refused as "its columns cannot be read"; files of a folder or glob whose
column types differ reached polars' SchemaError, naming no file; a glob of a folder
whose name holds ``?`` (or an escaped pattern) recursed without end."""

from __future__ import annotations

import glob
import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import FileFormatError, MissingFileError
from polars_irmetrics.io.files import detect_format, scan_run

RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})


def test_a_spark_folder_reads_its_parts_alone(tmp_path: Path) -> None:
    out = tmp_path / "run"
    (out / "day=1").mkdir(parents=True)
    RUN.write_parquet(out / "day=1" / "part-00000.snappy.parquet")
    (out / "day=1" / ".part-00000.snappy.parquet.crc").write_bytes(b"crc!")
    (out / "_SUCCESS").write_text("")
    got = scan_run(str(out)).collect()
    assert got.sort("doc_id").equals(RUN.with_columns(day=pl.lit(1, pl.Int64)))


@pytest.mark.parametrize("pattern", [False, True], ids=["folder", "glob"])
def test_files_of_other_column_types_named(tmp_path: Path, pattern: bool) -> None:
    RUN.with_columns(rank=pl.lit(1, pl.Int32)).write_parquet(tmp_path / "a.parquet")
    RUN.with_columns(rank=pl.lit(1, pl.Int64)).write_parquet(tmp_path / "b.parquet")
    message = (
        f"{tmp_path / 'b.parquet'}: column 'rank' is Int64, but {tmp_path / 'a.parquet'} has "
        "it as Int32; every file of a run needs the same column types: write the files again "
        "with one type, e.g. pl.col('rank').cast(pl.Int32)"
    )
    source = str(tmp_path / "*.parquet") if pattern else str(tmp_path)
    with pytest.raises(FileFormatError, match=re.escape(message)):
        scan_run(source)


@pytest.mark.parametrize("folder", ["q?x", "brack[1]"])
def test_a_pattern_in_a_folder_name(tmp_path: Path, folder: str) -> None:
    (tmp_path / folder).mkdir()
    RUN.write_parquet(tmp_path / folder / "a.parquet")
    source = glob.escape(str(tmp_path / folder)) + "/*.parquet"
    assert detect_format(source) == "parquet"  # before: RecursionError
    assert scan_run(source).collect().equals(RUN)


@pytest.mark.parametrize("name", ["br[1]", "q?x", "st*r"])
def test_a_spill_dir_named_like_a_pattern(tmp_path: Path, name: str) -> None:
    # before: polars' "expanded paths were empty" (the bucket's files read by a glob
    # under the folder the user named)
    spill = tmp_path / name
    spill.mkdir()
    run = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]}
    )
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    split = irm.evaluate(run, ["map", "P@1"], qrels=qrels, buckets=3, spill_dir=spill)
    assert split.equals(irm.evaluate(run, ["map", "P@1"], qrels=qrels))
    assert not list(spill.iterdir())


def test_a_spill_dir_removed_before_the_collect_is_named(tmp_path: Path) -> None:
    # before: Python's FileNotFoundError from tempfile, naming no option
    spill = tmp_path / "spill"
    spill.mkdir()
    run = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]}
    )
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    plan = irm.evaluate(run.lazy(), ["map"], qrels=qrels.lazy(), buckets=3, spill_dir=spill)
    spill.rmdir()
    message = (
        f"spill_dir={str(spill)!r} cannot hold the out-of-core buckets now (No such file or "
        "directory): it was checked when the plan was built, and removed or made read-only "
        "since; give an existing folder this process can write, and collect again"
    )
    with pytest.raises(MissingFileError, match=re.escape(message)):
        plan.collect()
