"""``irm trec-eval`` against the trec_eval 10.0 and 9.0.8 binaries, round 16.

Each expected output below is what the binary built from ``usnistgov/trec_eval``
(tags v10.0 and v9.0.8, ``make``) printed on the same files, pasted as printed.

* ``-N NUM`` (``--Number_docs_in_coll``): the documents in the collection, which
  utility's fourth coefficient reads (m_utility.c: ``p4 * (N + a - num_ret - R)``);
  it was refused as an unknown flag.
* ``-c``: a judged query without results scores 0 on every measure but num_rel.
  ``utility`` with a coefficient for missed documents scored the library's empty
  ranking there (``utility.1,-1,-1,0``: -R), which trec_eval 9.0.8 never adds to its
  summary.
* ``-c`` with ``--trec-eval-version 9`` on files that share no query: 9.0.8 stops
  ("No queries with both results and relevance info", exit status 7); zeros were
  printed.
* ``-Z``: gm_map and gm_bpref convert the logarithm trec_eval holds for them, not the
  value; with ``-c``, the summary num_rel is the count of judgments above 0, z-scores
  or not, and 9.0.8's summary adds nothing for a query without results.
* An error in a file named ``run`` (or any word of the message) named no file: the
  file was taken to be named already by the message's "of the run".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_irmetrics.cli.main import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 x 0\n"
#: q3 is judged (2 relevant documents) and has no results
QRELS_Q3 = QRELS + "q3 0 k 1\nq3 0 m 1\n"
RUN = "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 z 3 1 r\nq2 Q0 x 1 1 r\nq2 Q0 y 2 1 r\n"

#: (judgments, flags, version, the lines printed)
N_CASES = [
    pytest.param(
        QRELS,
        ["-q", "-N", "100", "-m", "utility.1,-1,0,1"],
        version,
        # both binaries; q1: a = 1, num_ret = 3, R = 2:
        # 1*1 - 1*(3 - 1) + 0*(2 - 1) + 1*(100 + 1 - 3 - 2) = 1 - 2 + 96 = 95
        # q2: a = 0, num_ret = 2, R = 1: 0 - 2 + 0 + (100 + 0 - 2 - 1) = 95
        "utility_1,-1,0,1      \tq1\t95.0000\n"
        "utility_1,-1,0,1      \tq2\t95.0000\n"
        "utility_1,-1,0,1      \tall\t95.0000\n",
        id=f"N-utility-v{version}",
    )
    for version in (10, 9)
]
N_CASES += [
    pytest.param(
        QRELS,
        ["--Number_docs_in_coll", "7", "-m", "set"],
        version,
        # both binaries: -N changes no measure of 'set' (utility's fourth coefficient is 0)
        "runid                 \tall\tr\n"
        "num_q                 \tall\t2\n"
        "num_ret               \tall\t5\n"
        "num_rel               \tall\t3\n"
        "num_rel_ret           \tall\t1\n"
        "utility               \tall\t-1.5000\n"
        "set_P                 \tall\t0.1667\n"
        "set_relative_P        \tall\t0.2500\n"
        "set_recall            \tall\t0.2500\n"
        "set_map               \tall\t0.0833\n"
        "set_F                 \tall\t0.2000\n",
        id=f"N-set-v{version}",
    )
    for version in (10, 9)
]
N_CASES.append(
    pytest.param(
        QRELS_Q3,
        ["-q", "-c", "-N", "100", "-m", "utility.0,0,0,1"],
        9,
        # trec_eval 9.0.8: q1 100 + 1 - 3 - 2 = 96, q2 100 + 0 - 2 - 1 = 97, q3 adds 0:
        # (96 + 97) / 3 = 64.3333
        "utility_0,0,0,1       \tq1\t96.0000\n"
        "utility_0,0,0,1       \tq2\t97.0000\n"
        "utility_0,0,0,1       \tall\t64.3333\n",
        id="c-N-utility-v9",
    )
)

C_CASES = [
    pytest.param(
        QRELS_Q3,
        ["-q", "-c", "-m", "utility.1,-1,-1,0"],
        9,
        # trec_eval 9.0.8: q3 adds 0; the summary divides by the 3 judged queries:
        # (-2 - 3 + 0) / 3 = -1.6667 (it was (-2 - 3 - 2) / 3 = -2.3333: q3's -R)
        "utility_1,-1,-1,0     \tq1\t-2.0000\n"
        "utility_1,-1,-1,0     \tq2\t-3.0000\n"
        "utility_1,-1,-1,0     \tall\t-1.6667\n",
        id="c-utility-missed-v9",
    ),
    pytest.param(
        QRELS_Q3,
        ["-q", "-c", "-m", "utility.1,-1,-1,0"],
        10,
        # On purpose not trec_eval 10.0's lines (the trec_eval guide's table, "-c
        # parameterised utility"): 10.0 scores q3 on its one-document stand-in ranking,
        # -1 - 2 = -3.0000 (all -2.6667), and resets only a measure named exactly
        # 'utility'. q3 scores 0 here, as under that name: (-2 - 3 + 0) / 3 = -1.6667
        "utility_1,-1,-1,0     \tq1\t-2.0000\n"
        "utility_1,-1,-1,0     \tq2\t-3.0000\n"
        "utility_1,-1,-1,0     \tq3\t0.0000\n"
        "utility_1,-1,-1,0     \tall\t-1.6667\n",
        id="c-utility-missed-v10",
    ),
]


@pytest.mark.parametrize(("qrels", "flags", "version", "printed"), N_CASES + C_CASES)
def test_output_is_trec_evals(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    qrels: str,
    flags: list[str],
    version: int,
    printed: str,
) -> None:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(RUN)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "--trec-eval-version", str(version), *flags, *files])
    captured = capsys.readouterr()
    assert (status, captured.out) == (0, printed)


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


@pytest.mark.parametrize(
    ("name", "qrels", "run", "message"),
    [
        (
            "run",
            QRELS,
            "q1 Q0 a 1 3 r\nq1 Q0 a 2 2 r\n",
            "irm: error: run, line 2: query 'q1' has 1 repeated listing(s) "
            "(document 'a' again, first on line 1); each (query, document) pair may appear "
            "once (trec_eval refuses such runs too): drop the repeated line\n",
        ),
        (
            "q",
            "q1 0 a 1\nq1 0 a 0\n",
            RUN,
            "irm: error: q, line 2: query 'q1' has 1 repeated judgment(s) "
            "(document 'a' again, first on line 1); keep one judgment per query and "
            "document: drop or merge the repeated line\n",
        ),
    ],
)
def test_a_file_named_like_a_word_of_the_message_is_named(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    qrels: str,
    run: str,
    message: str,
) -> None:
    # trec_eval's own usage names its files 'qrels' and 'run'; 'run' is also a word of
    # the message ("of the run"), which was taken for the file's name: none was given.
    # trec_eval 10.0 and 9.0.8 on the run: "trec_eval.form_res_qrels: duplicate docs a",
    # exit 4; on the judgments: "trec_eval.form_res_rels: duplicate docs a", exit 4
    monkeypatch.chdir(tmp_path)
    qrels_name, run_name = ("qrels", name) if name == "run" else (name, "run")
    (tmp_path / qrels_name).write_text(qrels)
    (tmp_path / run_name).write_text(run)
    status = main(["trec-eval", "-m", "map", qrels_name, run_name])
    captured = capsys.readouterr()
    assert (status, captured.out, captured.err) == (2, "", message)


#: The last three rows of the trec_eval guide's table "Where irm trec-eval prints
#: another number, on purpose": (judgments, run, flags, version, the lines printed).
GAINS_QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\n"
KEPT = [
    pytest.param(
        GAINS_QRELS,
        "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 c 3 1 r\n",
        ["-q", "-m", "dcg", "-m", "ndcg.1=2"],
        10,
        # trec_eval 10.0: "Segmentation fault", exit 139. Alone, -m dcg prints 2.0000
        # (1/log2(2) + 0 + 2/log2(4) = 1 + 1) and -m ndcg.1=2 prints 0.9197:
        # (2 + 0 + 2/2) / (2 + 2/log2(3)) = 3 / 3.2619
        "dcg                   \tq1\t2.0000\n"
        "ndcg_1=2              \tq1\t0.9197\n"
        "dcg                   \tall\t2.0000\n"
        "ndcg_1=2              \tall\t0.9197\n",
        id="dcg-beside-parameterised-ndcg",
    ),
]
KEPT += [
    pytest.param(
        GAINS_QRELS,
        "q1 Q0 b 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 c 3 1 r\n",
        ["-q", "-m", "ndcg.1=0.5"],
        version,
        # both binaries: 0.6577 = 1.3155 / 2 (the gain 0 sorted above 0.5 ends the ideal
        # ranking after rank 1). Here: DCG 0 + 0.5/log2(3) + 2/2 = 1.3155, ideal DCG
        # 2 + 0.5/log2(3) = 2.3155: 0.5681
        "ndcg_1=0.5            \tq1\t0.5681\nndcg_1=0.5            \tall\t0.5681\n",
        id=f"gains-less-than-1-apart-v{version}",
    )
    for version in (10, 9)
]
KEPT.append(
    pytest.param(
        "\ufeffq1 0 a 1\nq1 0 b 0\nq2 0 c 1\n",
        "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq2 Q0 c 1 1 r\n",
        ["-q", "-m", "map"],
        9,
        # trec_eval 9.0.8: map q1 0.0000, q2 1.0000, all 0.5000 (its q1 has no judgment
        # of a: that line's query is '\ufeffq1')
        "map                   \tq1\t1.0000\nmap                   \tq2\t1.0000\n"
        "map                   \tall\t1.0000\n",
        id="byte-order-mark",
    )
)


@pytest.mark.parametrize(("qrels", "run", "flags", "version", "printed"), KEPT)
def test_the_useful_behaviour_is_kept(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    qrels: str,
    run: str,
    flags: list[str],
    version: int,
    printed: str,
) -> None:
    (tmp_path / "qrels").write_text(qrels, encoding="utf-8")
    (tmp_path / "run").write_text(run)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "--trec-eval-version", str(version), *flags, *files])
    assert (status, capsys.readouterr().out) == (0, printed)


# ------------------------------------------------------------------ -Z
Z_QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 a 1\nq2 0 x 0\nq3 0 k 1\n"  # q3: no results
Z_RUN = "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq2 Q0 x 1 1 r\n"
Z_FILE = (
    "q1 map 0.25 0.25\nq2 map 0.25 0.25\nq3 map 0.25 0.25\n"
    "q1 gm_map -4 2\nq2 gm_map -4 2\nq3 gm_map -4 2\n"
    "q1 num_rel 1 0.5\nq2 num_rel 1 0.5\nq3 num_rel 2 1\n"
)
# map: q1 1 -> (1 - 0.25) / 0.25 = 3, q2 and q3 0 -> -1. gm_map converts the log of
# max(map, 0.00001): q1 log 1 = 0 -> (0 + 4) / 2 = 2, q2 and q3 log 0.00001 = -11.5129
# -> -3.7565; the summary is exp of the mean
Z_CASES = [
    pytest.param(
        Z_QRELS,
        ["-q", "-c", "-m", "map", "-m", "gm_map", "-m", "num_rel"],
        10,
        # trec_eval 10.0. Znum_rel all: with -c the count of judgments > 0 (3), not a
        # sum of z-scores (it was 0 + 0 - 1 = -1.0000); Zmap all (3 - 1 - 1) / 3;
        # Zgm_map all exp((2 - 3.7565 - 3.7565) / 3) = 0.1592 (it was 2.1544, the
        # geometric mean of the z-scores of map itself, (1 + 4) / 2 and (0 + 4) / 2)
        "Znum_rel               \tq1\t0.0000\nZmap                   \tq1\t3.0000\n"
        "Znum_rel               \tq2\t0.0000\nZmap                   \tq2\t-1.0000\n"
        "Znum_rel               \tq3\t-1.0000\nZmap                   \tq3\t-1.0000\n"
        "Znum_rel               \tall\t3.0000\nZmap                   \tall\t0.3333\n"
        "Zgm_map                \tall\t0.1592\n",
        id="c-v10",
    ),
    pytest.param(
        Z_QRELS,
        ["-q", "-c", "-m", "map", "-m", "gm_map", "-m", "num_rel"],
        9,
        # trec_eval 9.0.8: q3 is not evaluated: it adds 0 to Zmap, (3 - 1 + 0) / 3 =
        # 0.6667 (it was 0.3333), and log(0.00001) to gm_map's sum:
        # exp((2 - 3.7565 - 11.5129) / 3) = 0.0120 (it was 2.1544)
        "Znum_rel               \tq1\t0.0000\nZmap                   \tq1\t3.0000\n"
        "Znum_rel               \tq2\t0.0000\nZmap                   \tq2\t-1.0000\n"
        "Znum_rel               \tall\t3.0000\nZmap                   \tall\t0.6667\n"
        "Zgm_map                \tall\t0.0120\n",
        id="c-v9",
    ),
    *(
        pytest.param(
            "q1 0 a 1\nq1 0 b 0\nq2 0 a 1\nq2 0 x 0\n",
            ["-m", "gm_map"],
            version,
            # both binaries: exp((2 - 3.7565) / 2) = 0.4155 (it was 2.2361, the
            # geometric mean of the z-scores of map, 2.5 and 2)
            "Zgm_map                \tall\t0.4155\n",
            id=f"gm_map-v{version}",
        )
        for version in (10, 9)
    ),
]


@pytest.mark.parametrize(("qrels", "flags", "version", "printed"), Z_CASES)
def test_z_scores_summarise_as_trec_eval(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    qrels: str,
    flags: list[str],
    version: int,
    printed: str,
) -> None:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(Z_RUN)
    (tmp_path / "z").write_text(Z_FILE)
    files = ["-Z", str(tmp_path / "z"), str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "--trec-eval-version", str(version), *flags, *files])
    assert (status, capsys.readouterr().out) == (0, printed)


# ------------------------------------------------------------------ -T and -D
@pytest.mark.parametrize(
    "flags",
    [["-T", "trec_results"], ["--Results_format=trec_results"], ["-D", "0"], ["-D0"]],
)
def test_flags_that_change_nothing_are_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    # trec_eval 10.0 and 9.0.8 on each: "map all 0.2500" (q1: a at rank 1 of R = 2,
    # AP (1/1) / 2 = 0.5; q2: 0); they were refused as unrecognized arguments, with
    # the file after them ("unrecognized arguments: -T run")
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert main(["trec-eval", *flags, "-m", "map", *files]) == 0
    assert capsys.readouterr().out == "map                   \tall\t0.2500\n"


@pytest.mark.parametrize("level", ["1", "0.q1"])
def test_debug_output_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str
) -> None:
    # trec_eval prints its debug lines on standard output (-D 1), or evaluates only
    # query q1 (-D 0.q1): neither is reproduced
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert main(["trec-eval", "-D", level, "-m", "map", *files]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        f"irm: error: -D '{level}': trec_eval's debug output (and -D LEVEL.QUERY's one "
        "query) is not reproduced; drop -D, or give -D 0 (no debug output)\n",
    )


@pytest.mark.parametrize("flag", ["-v", "--version"])
def test_version_is_printed_on_standard_error(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    # trec_eval 10.0: "trec_eval version 10.0-rc3" on standard error, exit status 0,
    # without files (9.0.8: "trec_eval version 9.0.7"); it was refused as unknown
    with pytest.raises(SystemExit) as done:
        main(["trec-eval", flag])
    assert done.value.code == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        "trec_eval version 10.0 (irm trec-eval; --trec-eval-version 9 for 9.0.8)\n",
    )
