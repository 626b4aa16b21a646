"""``irm trec-eval`` against the trec_eval 10.0 and 9.0.8 binaries, round 16.

Each expected output below is what the binary built from ``usnistgov/trec_eval``
(tags v10.0 and v9.0.8, ``make``) printed on the same files, pasted as printed.

* ``-c`` with ``--trec-eval-version 9`` on files that share no query: 9.0.8 stops
  ("No queries with both results and relevance info", exit status 7); zeros were
  printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_irmetrics.cli.main import main


@pytest.mark.parametrize(
    ("qrels", "flags"),
    [
        ("q1 0 a 1\nq1 0 b 0\n", ["-c", "-m", "map"]),
        ("q1 0 a 1\nq1 0 b 0\n", ["-q", "-c", "-m", "map"]),
        ("q1 u a 1\nq1 u b 0\n", ["-c", "-R", "qrels_jg", "-m", "qrels_jg"]),
        ("q1 u s a 1\nq1 u s b 0\n", ["-c", "-R", "prefs", "-m", "prefs"]),
    ],
)
def test_version_9_with_c_and_no_shared_query_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels: str, flags: list[str]
) -> None:
    # trec_eval 9.0.8 on each: "trec_eval: No queries with both results and relevance
    # info" on standard error, exit status 7, nothing on standard output
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text("q2 Q0 a 1 3 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "--trec-eval-version", "9", *flags, *files])
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err == (
        "irm: error: no queries with both results and relevance info: the run and the "
        "judgments share no query id (compare the first field of both files)\n"
    )
