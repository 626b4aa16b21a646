"""``irm``'s messages give a command line's fix, not Python code: rND's, rKL's and
rRD's undefined queries (rankings of 10 documents or fewer) are named as the rows to
leave out of the run files, on ``evaluate``'s warning and ``compare``'s error, where
the library's message (kept for Python callers) shows a ``run.filter(...)`` call."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import irm_in_process

RUN_A = "query_id,doc_id,rank\nq1,d1,1\nq1,d2,2\nq2,d1,1\n"
RUN_B = "query_id,doc_id,rank\nq1,d2,1\nq1,d1,2\nq2,d1,1\n"
GROUPS = "doc_id,group\nd1,x\nd2,y\n"
FIX = (
    "rank more than 10 documents of both groups, or leave those queries out (the "
    "queries ranking 10 documents or fewer: their rows in the run files)"
)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.csv").write_text(RUN_A)
    (tmp_path / "b.csv").write_text(RUN_B)
    (tmp_path / "groups.csv").write_text(GROUPS)
    return tmp_path


@pytest.mark.parametrize("metric", ["rnd", "rkl", "rrd"])
def test_evaluate_warns_with_the_command_lines_fix(files: Path, metric: str) -> None:
    done = irm_in_process("evaluate", "a.csv", "-m", metric, "--groups", "groups.csv", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"irm: warning: '{metric}' is NaN on 2 of the 2 queries")
    assert done.stderr.endswith(f"; {FIX}\n")
    assert "pl." not in done.stderr


def test_compare_refuses_with_the_command_lines_fix(files: Path) -> None:
    done = irm_in_process(
        "compare", "a.csv", "b.csv", "-m", "rnd", "--groups", "groups.csv", cwd=files
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("irm: error: per-query value of 'rnd' for system 'a' on ")
    assert done.stderr.endswith(
        f"NaN cannot be paired: {FIX}, in every system's run, or compare a metric defined there\n"
    )
    assert "pl." not in done.stderr
