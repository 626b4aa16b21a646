"""Round 32's small trust defects: each a refusal, a warning or a label that was missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import irm_in_process

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-N", "-2"],
         "irm trec-eval: error: argument -N/--Number_docs_in_coll: expected an integer >= 0, "
         "got '-2' (see 'irm trec-eval --help')"),
        (["-N", "1.5"],
         "irm trec-eval: error: argument -N/--Number_docs_in_coll: expected an integer >= 0, "
         "got '1.5' (see 'irm trec-eval --help')"),
    ],
)  # fmt: skip
def test_trec_eval_number_of_documents_is_a_non_negative_integer(
    files: Path, args: list[str], message: str
) -> None:
    done = irm_in_process("trec-eval", *args, "qrels", "run", cwd=files)
    assert (done.returncode, done.stdout, done.stderr.strip().splitlines()[-1]) == (2, "", message)
    # -N 0 is trec_eval's default
    assert irm_in_process("trec-eval", "-N", "0", "qrels", "run", cwd=files).returncode == 0
