"""``irm trec-eval -c``: a judged query without results keeps its ideal DCG, as trec_eval
10.0 prints it (it evaluates the query on a one-document stand-in ranking and resets
num_ret, utility, relstring, unj and rbp_resid, never ideal_dcg, which reads the
judgments alone). The expected output is what the trec_eval 10.0 binary (built from
usnistgov/trec_eval's v10.0 sources) printed on these files, 2026-12-03; the test never
runs a binary (9.0.8 has no ideal_dcg).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_irmetrics.cli.main import main


def _lines(*rows: tuple[str, str, str]) -> str:
    return "".join(f"{name:<22}\t{query}\t{value}\n" for name, query, value in rows)


def test_complete_keeps_the_ideal_dcg_of_a_query_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # -c: trec_eval 10.0 evaluates q2 (judged, no results) on a one-document stand-in
    # ranking and never resets ideal_dcg: 2 / log2(2) + 1 / log2(3) = 2.6309, and the
    # summary (1 + 2.6309) / 2 = 1.8155 (its binary's output on these files)
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 2\nq2 0 c 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 5 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "-c", "-q", "-m", "ideal_dcg", "-m", "dcg", *files])
    expected = _lines(
        ("dcg", "q1", "1.0000"),
        ("ideal_dcg", "q1", "1.0000"),
        ("dcg", "q2", "0.0000"),
        ("ideal_dcg", "q2", "2.6309"),
        ("dcg", "all", "0.5000"),
        ("ideal_dcg", "all", "1.8155"),
    )
    assert (status, capsys.readouterr().out) == (0, expected)
