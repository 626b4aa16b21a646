"""A reference per group (round 10): the rank-similarity metrics read a reference with
the by= or systems= key column as one reference per group, and a group of the run the
reference lacked was dropped in silence (``systems='system'`` with a reference of bm25's
rows alone gave one row, bm25's; dense vanished). It is refused by name. On the command
line a TREC reference file's run tag (``run_id``, always there) made every system such
a group under ``--systems run_id``: the file is one run, and its tag is not read."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.errors import InvalidValueError

RUNS = pl.DataFrame(
    {
        "system": ["bm25"] * 6 + ["dense"] * 6,
        "query_id": (["q1"] * 3 + ["q2"] * 3) * 2,
        "doc_id": list("abc") + list("xyz") + list("cab") + list("zyx"),
        "score": [3.0, 2, 1] * 4,
    }
)


def test_a_group_the_reference_lacks_is_refused() -> None:
    reference = RUNS.filter(pl.col("system") == "bm25")
    message = (
        "the group system='dense' of the run has no rows in reference=, which holds the by= "
        "key column 'system' (a reference per group): give the reference that group's "
        "rankings, or drop those columns from the reference to compare every group with one "
        "reference"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUNS, ["rbo", "jaccard@2"], reference=reference, systems="system")
    one = irm.evaluate(RUNS, ["rbo"], reference=reference.drop("system"), systems="system")
    assert isinstance(one, pl.DataFrame)
    assert one.get_column("system").to_list() == ["bm25", "dense"]
    # a reference of every group: each system against its own rows
    own = irm.evaluate(RUNS, ["rbo"], reference=RUNS, systems="system")
    assert isinstance(own, pl.DataFrame)
    assert own.get_column("rbo").to_list() == [1.0, 1.0]


def test_a_trec_reference_is_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run.txt"
    lines = [
        f"{q} Q0 {d} {i + 1} {3.0 - i} {system}"
        for system, docs in (("bm25", "abc"), ("dense", "cab"))
        for q in ("q1",)
        for i, d in enumerate(docs)
    ]
    run.write_text("\n".join(lines) + "\n")
    reference = tmp_path / "ref.txt"
    reference.write_text("q1 Q0 a 1 3.0 exact\nq1 Q0 b 2 2.0 exact\nq1 Q0 c 3 1.0 exact\n")
    code = main(
        ["evaluate", str(run), "-m", "rbo", "--reference", str(reference), "--systems", "run_id"]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "bm25" in out
    assert "dense" in out
    assert "exact" not in out
