"""Where ``irm trec-eval`` prints another number than trec_eval, on purpose (the trec_eval
guide's table "Where irm trec-eval prints another number"): each input, and what
``irm trec-eval`` prints on it. trec_eval's own output (from the binaries built from
``usnistgov/trec_eval`` v10.0 and v9.0.8) is in the guide: a trec_eval bug, or an input
it refuses by accident, that this pins the useful behaviour against.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_irmetrics.cli.main import main

#: name, judgments, run, flags, the lines printed (measure, query, value).
CASES = [
    (
        # 10.0 scores q2 on its stand-in ranking: -1.0000 and 1.0000 under these names
        "-c parameterised utility and rbp_resid",
        "q1 0 a 1\nq2 0 b 1\n",
        "q1 Q0 a 1 1 r\n",
        ["-q", "-c", "-m", "utility.2,-1,0,0", "-m", "rbp_resid.p=0.5"],
        [
            ("utility_2,-1,0,0", "q1", "2.0000"),
            ("rbp_resid_p=0.5", "q1", "0.0000"),
            ("utility_2,-1,0,0", "q2", "0.0000"),
            ("rbp_resid_p=0.5", "q2", "0.0000"),
            ("utility_2,-1,0,0", "all", "1.0000"),
            ("rbp_resid_p=0.5", "all", "0.0000"),
        ],
    ),
    (
        # trec_eval: -nan (0/0 once the unjudged document is removed)
        "-J, every retrieved document unjudged",
        "q1 0 a 1\n",
        "q1 Q0 z 1 1 r\n",
        ["-q", "-J", "-m", "iprec_at_recall.0", "-m", "11pt_avg"],
        [
            ("iprec_at_recall_0.00", "q1", "0.0000"),
            ("11pt_avg", "q1", "0.0000"),
            ("iprec_at_recall_0.00", "all", "0.0000"),
            ("11pt_avg", "all", "0.0000"),
        ],
    ),
    (
        # trec_eval: 1.0000 each (an unjudged document's internal label -1 passes -l -1)
        "-l -1, an unjudged document",
        "q1 0 a 1\nq1 0 b 0\n",
        "q1 Q0 z 1 3 r\nq1 Q0 a 2 2 r\n",
        ["-q", "-l", "-1", "-m", "map", "-m", "P.2"],
        [
            ("map", "q1", "0.2500"),
            ("P_2", "q1", "0.5000"),
            ("map", "all", "0.2500"),
            ("P_2", "all", "0.5000"),
        ],
    ),
    (
        # trec_eval: "trec_eval.get_qrels: Malformed line 2", exit 2
        "a blank line in the judgments",
        "q1 0 a 1\n\nq1 0 b 0\nq2 0 x 1\n",
        "q1 Q0 a 1 3 r\nq2 Q0 x 1 1 r\n",
        ["-m", "map"],
        [("map", "all", "1.0000")],
    ),
    (
        # trec_eval 10.0: b 7.0000 (a's ideal DCG, carried over), all 7.0000; alone,
        # "Can't calculate measure 'ideal_dcg'", exit 4
        "ideal_dcg of a query whose judgments are all negative",
        "a 0 x 7\nb 0 y -1\n",
        "a Q0 x 1 1 r\nb Q0 z 1 1 r\n",
        ["-q", "-m", "ideal_dcg"],
        [
            ("ideal_dcg", "a", "7.0000"),
            ("ideal_dcg", "b", "0.0000"),
            ("ideal_dcg", "all", "3.5000"),
        ],
    ),
    (
        # trec_eval 10.0: Segmentation fault (exit 139)
        "-c, a judged query whose labels are all negative, without results",
        "a 0 y 1\nb 0 x -2\n",
        "a Q0 y 1 0 r\n",
        ["-q", "-c", "-m", "map"],
        [("map", "a", "1.0000"), ("map", "b", "0.0000"), ("map", "all", "0.5000")],
    ),
    (
        # trec_eval 10.0: "Can't calculate measure 'P'", exit 4
        "a retrieved query whose only judgment is negative",
        "1 0 24 -1\n",
        "1 Q0 2 6 1.0 r\n",
        ["-q", "-m", "P.5"],
        [("P_5", "1", "0.0000"), ("P_5", "all", "0.0000")],
    ),
]


@pytest.mark.parametrize(
    ("name", "qrels", "run", "flags", "lines"), CASES, ids=[c[0] for c in CASES]
)
def test_the_useful_behaviour_is_kept(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    qrels: str,
    run: str,
    flags: list[str],
    lines: list[tuple[str, str, str]],
) -> None:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    assert main(["trec-eval", *flags, str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert out == "".join(f"{m:<22}\t{q}\t{v}\n" for m, q, v in lines)


def test_rndcg_below_level_1_is_named_not_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """trec_eval prints -nan for a query whose judged documents at the level have no
    positive gain (and then a -nan summary): not printed here, and named."""
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert main(["trec-eval", "-l", "0", "-m", "Rndcg", "-m", "map", *files]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{'map':<22}\tall\t1.0000\n"
    assert "not printed: Rndcg" in captured.err
