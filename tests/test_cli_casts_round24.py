"""``irm`` words a column of the wrong dtype in a Parquet file (float ranks, text scores
or labels) as the file's fix, not the Python cast (``cast it, e.g.
pl.col('rank').cast(pl.Int64)``, which a command line's user cannot run and which, for
float ranks, would cut 1.5 to 1)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from .helpers import irm_in_process

RUN = {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"]}


@pytest.mark.parametrize(
    ("run", "qrels", "message"),
    [
        (
            {**RUN, "rank": [1.0, 2.0]},
            None,
            "run.parquet: column 'rank' in the run has dtype Float64; it must be an integer: "
            "write the file again with column 'rank' as integers (not Float64)",
        ),
        (
            {**RUN, "score": ["1", "2"]},
            None,
            "run.parquet: column 'score' in the run has dtype String; it must be numeric: "
            "write the file again with column 'score' as numbers (not String)",
        ),
        (
            {**RUN, "score": [1.0, 2.0]},
            {**RUN, "relevance": ["1", "0"]},
            "qrels.parquet: column 'relevance' in the judgments has dtype String; it must be "
            "numeric: write the file again with column 'relevance' as numbers (not String)",
        ),
    ],
    ids=["float ranks", "text scores", "text labels"],
)
def test_a_column_of_another_dtype_is_refused_with_the_files_fix(
    tmp_path: Path,
    run: dict[str, list[object]],
    qrels: dict[str, list[object]] | None,
    message: str,
) -> None:
    pl.DataFrame(run).write_parquet(tmp_path / "run.parquet")
    if qrels is None:
        (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
        judged = "qrels.txt"
    else:
        pl.DataFrame(qrels).write_parquet(tmp_path / "qrels.parquet")
        judged = "qrels.parquet"
    done = irm_in_process("evaluate", "run.parquet", "--qrels", judged, "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"


def test_a_missing_groups_file_is_asked_for_by_its_flag_alone(tmp_path: Path) -> None:
    # it was "pass --groups FILE (one row per (document, group)) to irm.evaluate": the
    # Python call after the flag, where the parenthesis hid it from the translation
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,1\nq1,d2,2\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    done = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.txt", "-m", "awrf",
                          cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: metric 'awrf' reads document groups: pass --groups FILE (one row per "
        "(document, group))\n"
    )


@pytest.mark.parametrize(
    ("run", "qrels", "said"),
    [
        (
            "query_id,doc_id,score\nQ1,D1,1\n",
            "q1 0 d1 1\n",
            "1 query id(s) of the run match a judged query only once case is ignored (run "
            "'Q1', judgments 'q1'): ids are compared exactly, as trec_eval compares them; give "
            "both the same spelling in the files' column 'query_id'.",
        ),
        (
            "query_id,doc_id,score\nq1, d1,1\n",
            "q1 0 d1 1\n",
            "1 (query, document) pair(s) of the run match a judgment only when the spaces "
            "around the ids are ignored (run ' d1', judgments 'd1'): ids are compared exactly, "
            "as trec_eval compares them; give both the same spelling in the files' column "
            "'doc_id'.",
        ),
    ],
    ids=["query ids", "document ids"],
)
def test_an_id_spelling_hint_names_the_files_column_not_a_python_call(
    tmp_path: Path, run: str, qrels: str, said: str
) -> None:
    # it was "give both the same spelling, e.g. pl.col('query_id').str.to_lowercase() on
    # the run and the judgments."
    (tmp_path / "run.csv").write_text(run)
    (tmp_path / "qrels.txt").write_text(qrels)
    done = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.txt", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("irm: warning: the run retrieves no judged document")
    assert done.stderr.endswith(f" {said}\n")
    assert "pl.col" not in done.stderr
