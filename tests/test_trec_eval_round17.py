"""``irm trec-eval`` against the trec_eval 10.0 and 9.0.8 binaries, round 17: a run's
scores written as C99 hexadecimal constants (``0x1p3``, as ``printf("%a")`` writes
them) are read as trec_eval's ``atof`` reads them, where they were refused as "not a
number"; and a file that is not UTF-8 (latin-1 ids, which trec_eval compares as bytes)
is refused with the fix, re-encoding every file alike. Each expected output is what
both binaries print on the same files (built from ``usnistgov/trec_eval`` tags v10.0
and v9.0.8)."""

from __future__ import annotations

from pathlib import Path

import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 1\n"
# d2 (0x1p4 = 16) above d1 (0x1p3 = 8) above d3: q1's relevant d1 and d3 at ranks 2 and
# 3, AP (1/2 + 2/3) / 2 = 0.5833; q2 AP 1; map (0.5833 + 1) / 2 = 0.7917
HEX_RUN = "q1 Q0 d1 1 0x1p3 r\nq1 Q0 d2 2 0x1p4 r\nq1 Q0 d3 3 1.0 r\nq2 Q0 d1 1 1.0 r\n"
HEX_PRINTED = (
    "num_ret               \tq1\t3\n"
    "map                   \tq1\t0.5833\n"
    "num_ret               \tq2\t1\n"
    "map                   \tq2\t1.0000\n"
    "num_ret               \tall\t4\n"
    "map                   \tall\t0.7917\n"
)
# the largest double, the least subnormal, a negative, a point without exponent, an
# upper-case exponent with a sign: q1 ranks d1, d2, d3 (AP (1 + 2/3) / 2 = 0.8333); q2
# ranks d2 (2) above d1 (0.5): AP 1/2
HEX_EDGES = (
    "q1 Q0 d1 1 0x1.fffffffffffffp1023 r\nq1 Q0 d2 2 0x1p-1074 r\nq1 Q0 d3 3 -0x1.8p1 r\n"
    "q2 Q0 d1 1 0x.8 r\nq2 Q0 d2 2 0X1P+1 r\n"
)
EDGES_PRINTED = "map                   \tq1\t0.8333\nmap                   \tq2\t0.5000\n"
EDGES_PRINTED += "map                   \tall\t0.6667\n"


@pytest.mark.parametrize("version", [10, 9])
@pytest.mark.parametrize(
    ("run", "flags", "printed"),
    [
        (HEX_RUN, ["-m", "map", "-m", "num_ret"], HEX_PRINTED),
        (HEX_EDGES, ["-m", "map"], EDGES_PRINTED),
    ],
    ids=["hex", "hex_edges"],
)
def test_hexadecimal_scores_are_read_as_trec_eval_reads_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    run: str,
    flags: list[str],
    printed: str,
    version: int,
) -> None:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(run)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "--trec-eval-version", str(version), "-q", *flags, *files])
    assert (status, capsys.readouterr().out) == (0, printed)


def test_read_trec_run_reads_hexadecimal_scores(tmp_path: Path) -> None:
    (tmp_path / "run").write_text(HEX_EDGES)
    scores = irm.read_trec_run(tmp_path / "run")["score"].to_list()
    # float.fromhex of each: 1.7976931348623157e308, 5e-324, -3.0, 0.5, 2.0
    assert scores == [1.7976931348623157e308, 5e-324, -3.0, 0.5, 2.0]


@pytest.mark.parametrize(
    "score", ["0x", "0xg1", "0x1p", "0x1.2.3", "1.5abc"], ids=["bare", "g", "p", "points", "tail"]
)
def test_text_that_is_no_number_is_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], score: str
) -> None:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(f"q1 Q0 d1 1 {score} r\n")
    status = main(["trec-eval", str(tmp_path / "qrels"), str(tmp_path / "run")])
    line = f"q1 Q0 d1 1 {score} r"
    err = f"irm: error: {tmp_path / 'run'}, line 1: score {score!r} is not a number: {line!r}\n"
    assert (status, capsys.readouterr().err) == (2, err)


def test_a_latin1_file_is_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # trec_eval compares the ids as bytes (map 1.0000 here); ids are text here, so the
    # refusal says to re-encode every file alike, on one line, exit status 2
    (tmp_path / "qrels").write_bytes(b"q1 0 d\xe91 1\nq1 0 d2 0\n")
    (tmp_path / "run").write_bytes(b"q1 Q0 d\xe91 1 3.0 r\nq1 Q0 d2 2 2.0 r\n")
    status = main(["trec-eval", "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1
    assert err == (
        f"irm: error: {tmp_path / 'run'}, line 1: not valid UTF-8: b'q1 Q0 d\\xe91 1 3.0 r' "
        "(text files are read as UTF-8: re-encode it, e.g. iconv -f latin1 -t utf-8, and the "
        "files whose ids it must match alike); expected a run: Parquet, a TREC run (query_id "
        "Q0 doc_id rank score run_id), CSV, TSV or JSON lines\n"
    )


@pytest.mark.parametrize(
    ("flags", "err"),
    [
        # trec_eval prints 0 for every measure: nothing is retrieved
        (["-M", "0"], "irm: error: -M must be a positive number of documents, got 0\n"),
        # trec_eval reads 1.5 with atol, as -l 1 (map 0.9167, where -l 2 gives 0.1667)
        (
            ["-l", "1.5"],
            "irm trec-eval: error: argument -l/--level_for_rel: expected an integer, got '1.5' "
            "(see 'irm trec-eval --help')\n",
        ),
    ],
    ids=["M0", "l1.5"],
)
def test_options_trec_eval_reads_as_nothing_sensible_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], err: str
) -> None:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(HEX_RUN.replace("0x1p3", "8").replace("0x1p4", "16"))
    args = ["trec-eval", *flags, "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")]
    status: object
    try:  # the argument parser exits, the command's own checks return the status
        status = main(args)
    except SystemExit as stopped:
        status = stopped.code
    assert (status, capsys.readouterr().err) == (2, err)
