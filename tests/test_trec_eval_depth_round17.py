"""``irm trec-eval -M DEPTH`` cuts each ranking before it checks for a document listed
twice, as trec_eval does (form_res_rels.c): a copy below the cut is no duplicate.

The run lists ``b`` twice, at scores 4 and 2: ranked a (5), b (4), c (3), b (2). With
``-M 1..3`` the second ``b`` is below the cut; with ``-M 4`` both copies are within it,
and both trec_eval and ``irm trec-eval`` refuse the run. Every expected output below is
what the trec_eval 10.0 and 9.0.8 binaries (built from usnistgov/trec_eval's v10.0 and
v9.0.8 sources) printed on these files, 2026-12-03; the tests never run a binary.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_irmetrics.cli.main import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\n"
RUN = "q1 Q0 a 1 5 r\nq1 Q0 b 2 4 r\nq1 Q0 c 3 3 r\nq1 Q0 b 4 2 r\n"


def _lines(*rows: tuple[str, str, str]) -> str:
    return "".join(f"{name:<22}\t{query}\t{value}\n" for name, query, value in rows)


PRINTED = {
    # -M 1: a alone; AP = (1/1) / 2 relevant
    1: _lines(
        ("num_ret", "q1", "1"),
        ("map", "q1", "0.5000"),
        ("relstring", "q1", "'1'"),
        ("num_ret", "all", "1"),
        ("map", "all", "0.5000"),
    ),
    # -M 2: a, b
    2: _lines(
        ("num_ret", "q1", "2"),
        ("map", "q1", "0.5000"),
        ("relstring", "q1", "'10'"),
        ("num_ret", "all", "2"),
        ("map", "all", "0.5000"),
    ),
    # -M 3: a, b, c; AP = (1/1 + 2/3) / 2 = 0.8333
    3: _lines(
        ("num_ret", "q1", "3"),
        ("map", "q1", "0.8333"),
        ("relstring", "q1", "'101'"),
        ("num_ret", "all", "3"),
        ("map", "all", "0.8333"),
    ),
}


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


@pytest.mark.parametrize("version", ["10", "9"])
@pytest.mark.parametrize("depth", sorted(PRINTED))
def test_a_duplicate_below_the_cut_is_cut_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int, version: str
) -> None:
    args = ["-q", "-M", str(depth), "-m", "num_ret", "-m", "map", "-m", "relstring"]
    status = main(["trec-eval", "--trec-eval-version", version, *args, *_files(tmp_path)])
    assert (status, capsys.readouterr().out) == (0, PRINTED[depth])


@pytest.mark.parametrize("version", ["10", "9"])
def test_a_duplicate_within_the_cut_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    # trec_eval: "trec_eval.form_res_qrels: duplicate docs b", exit status 4
    args = ["-M", "4", "-m", "map"]
    status = main(["trec-eval", "--trec-eval-version", version, *args, *_files(tmp_path)])
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert "query 'q1' has 1 repeated listing(s)" in captured.err


@pytest.mark.parametrize("version", ["10", "9"])
def test_preferences_cut_first_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    # form_prefs_counts.c cuts at -M before its duplicate check, as form_res_rels.c
    args = ["-R", "qrels_prefs", "-M", "3", "-m", "prefs_simp", "-m", "prefs_num_prefs_ful"]
    status = main(["trec-eval", "--trec-eval-version", version, *args, *_files(tmp_path)])
    expected = _lines(("prefs_num_prefs_ful", "all", "1"), ("prefs_simp", "all", "0.5000"))
    assert (status, capsys.readouterr().out) == (0, expected)


@pytest.mark.parametrize("version", ["10", "9"])
def test_runid_is_the_last_lines_tag_below_the_cut_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    # the run's last line (b, tag "last") is below -M 1; both binaries print "last"
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 5 first\nq1 Q0 b 2 4 last\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    args = ["-M", "1", "-m", "runid", "-m", "num_ret"]
    status = main(["trec-eval", "--trec-eval-version", version, *args, *files])
    expected = _lines(("runid", "all", "last"), ("num_ret", "all", "1"))
    assert (status, capsys.readouterr().out) == (0, expected)
