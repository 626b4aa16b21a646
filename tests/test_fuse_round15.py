"""irm fuse on runs that hold ranks and no scores (round 15).

``irm.fuse`` fuses rank-only runs with a rank-based method (rrf, borda...); the command
line asked for a score column every such file lacks ("name it with --score COL"), with
no flag to name the ranks. It now reads the ranks where a table has no scores
(``--rank COL`` names them), and a method that reads scores refuses such a run in the
library's words, as flags.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

import polars_irmetrics as irm

from .helpers import irm_in_process

A = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "pos": [1, 2, 1]})
B = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "a", "c"], "pos": [1, 2, 1]})


def test_rank_only_tables_are_fused_as_the_library_fuses_them(tmp_path: Path) -> None:
    A.write_parquet(tmp_path / "a.parquet")
    B.write_parquet(tmp_path / "b.parquet")
    done = irm_in_process(
        "fuse", "a.parquet", "b.parquet", "--rank", "pos", "-o", "f.parquet", cwd=tmp_path
    )
    assert (done.returncode, done.stderr) == (0, "")
    expected = irm.fuse({"a": A, "b": B}, rank="pos")
    assert isinstance(expected, pl.DataFrame)
    # the command writes its columns under its own names (query_id, doc_id, score, rank)
    assert pl.read_parquet(tmp_path / "f.parquet").equals(expected.rename({"pos": "rank"}))


def test_a_table_without_scores_or_ranks_names_both_flags(tmp_path: Path) -> None:
    A.write_parquet(tmp_path / "a.parquet")
    B.write_parquet(tmp_path / "b.parquet")
    done = irm_in_process("fuse", "a.parquet", "b.parquet", "-o", "f.parquet", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: a.parquet: no column 'score' nor 'rank' (its columns: 'query_id', "
        "'doc_id', 'pos'); name the scores with --score COL, or the ranks with --rank COL\n"
    )


def test_a_method_reading_scores_refuses_rank_only_tables(tmp_path: Path) -> None:
    A.write_parquet(tmp_path / "a.parquet")
    B.write_parquet(tmp_path / "b.parquet")
    args = ("--rank", "pos", "--method", "wsum", "--weights", "0.5,0.5", "-o", "f.parquet")
    done = irm_in_process("fuse", "a.parquet", "b.parquet", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: run 'a.parquet' has no 'score' column, and method 'wsum' reads scores: "
        "give every run a score column (name it with --score COL), or use a rank-based "
        "method such as 'rrf' with norm=None or 'borda'\n"
    )
