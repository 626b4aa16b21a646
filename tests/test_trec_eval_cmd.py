"""``irm trec-eval``: trec_eval's flags and output, checked line for line against pytrec_eval.

Every value printed is compared with trec_eval's own C code (through ``pytrec_eval``) at
the 4 decimals printed, on TREC files written here: tied scores, graded and negative
labels, fractional labels, a query judged but not retrieved and one retrieved but not
judged. The summary (``all``) lines are built from pytrec_eval's per-query values the way
trec_eval builds them: sums for the counts, means (over every judged query with ``-c``,
a query with no results scoring 0) for the rest.
"""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

from polars_irmetrics.cli import main
from polars_irmetrics.trec_eval_cmd import ALL_TREC, MEASURE_ORDER, NICKNAMES, OFFICIAL

pytrec_eval = pytest.importorskip("pytrec_eval")

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

COUNTS = {"num_ret", "num_rel", "num_rel_ret"}
CUTS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
OFFICIAL_PRINTED = [
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
    *(f"P_{k}" for k in CUTS),
]  # fmt: skip
#: pytrec_eval measures behind OFFICIAL_PRINTED.
OFFICIAL_SPECS = {"num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P"}
OFFICIAL_UNSUPPORTED = "gm_map, " + ", ".join(f"iprec_at_recall_{i / 10:.2f}" for i in range(11))


# --------------------------------------------------------------------------- data
def _make_data() -> tuple[Qrels, Run]:
    """Judgments and a run with ties, graded/negative labels and one-sided queries."""
    rng = random.Random(20240611)
    qrels: Qrels = {}
    run: Run = {}
    for q in ["q1", "q2", "q3", "q4", "q5", "q6", "q10", "q11", "7"]:
        labels = [-1, 0, 0, 0, 1, 1, 2, 3] if q != "q4" else [0, 0, -1]  # q4: none relevant
        judged = rng.sample(range(40), rng.randint(3, 20))
        qrels[q] = {f"d{d}": rng.choice(labels) for d in judged}
        if q == "q11":  # judged but never retrieved
            continue
        retrieved = rng.sample(range(40), rng.randint(1, 30))
        run[q] = {f"d{d}": rng.choice([0.5, 1.0, 1.5, 2.0, 2.5, 3.0]) for d in retrieved}
    run["q99"] = {"d1": 2.0, "d2": 1.0}  # retrieved but not judged
    return qrels, run


QRELS, RUN = _make_data()


def _write_qrels(path: Path, qrels: Qrels | dict[str, dict[str, float]]) -> Path:
    lines = [f"{q} 0 {d} {rel}" for q, docs in qrels.items() for d, rel in docs.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_run(path: Path, run: Run, tag: str = "bm25", last_tag: str | None = None) -> Path:
    lines = []
    for q, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: kv[1], reverse=True)
        lines += [f"{q} Q0 {d} {i} {s!r} {tag}" for i, (d, s) in enumerate(ranked, start=1)]
    if last_tag is not None:
        head, *_ = lines[-1].rsplit(" ", 1)
        lines[-1] = f"{head} {last_tag}"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    qrels = _write_qrels(tmp_path / "qrels.txt", QRELS)
    run = _write_run(tmp_path / "run.txt", RUN)
    return str(qrels), str(run)


# --------------------------------------------------------------------------- oracle
def _truncate(run: Run, depth: int | None) -> Run:
    """trec_eval -M: score descending, ties by document id descending, top ``depth``."""
    if depth is None:
        return run
    return {
        q: dict(sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:depth])
        for q, docs in run.items()
    }


def _fmt(name: str, qid: str, value: float) -> str:
    text = str(round(value)) if name in COUNTS else f"{value:.4f}"
    return f"{name:<22}\t{qid}\t{text}"


def expected(
    specs: set[str],
    printed: list[str],
    *,
    qrels: Qrels = QRELS,
    run: Run = RUN,
    level: int = 1,
    depth: int | None = None,
    complete: bool = False,
    per_query: bool = False,
    summary: bool = True,
    runid: str | None = None,
    num_q: bool = False,
) -> list[str]:
    """trec_eval's lines, from pytrec_eval's per-query values of ``specs``."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, specs, relevance_level=level)
    values: dict[str, dict[str, float]] = evaluator.evaluate(_truncate(run, depth))
    queries = sorted(qrels if complete else values)
    for q in queries:  # -c: a judged query with no results scores 0
        if q not in values:
            values[q] = dict.fromkeys(printed, 0.0)
            if "num_rel" in printed:
                values[q]["num_rel"] = sum(rel >= level for rel in qrels[q].values())
    lines = []
    if per_query:
        lines += [_fmt(n, q, values[q][n]) for q in queries for n in printed]
    if summary:
        if runid is not None:
            lines.append(f"{'runid':<22}\tall\t{runid}")
        if num_q:
            lines.append(f"{'num_q':<22}\tall\t{len(queries)}")
        for name in printed:
            total = 0.0
            for q in queries:
                total += values[q][name]
            lines.append(_fmt(name, "all", total if name in COUNTS else total / len(queries)))
    return lines


def trec_eval(
    capsys: pytest.CaptureFixture[str], *args: str, status: int = 0
) -> tuple[list[str], str]:
    assert main(["trec-eval", *args]) == status
    captured = capsys.readouterr()
    return captured.out.splitlines(), captured.err


# --------------------------------------------------------------------------- format
def test_exact_text_of_a_tiny_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 d 1\n")
    run = tmp_path / "run.txt"
    run.write_text(
        "q1 Q0 b 1 3.0 mysys\n"
        "q1 Q0 a 2 2.0 mysys\n"
        "q1 Q0 z 3 2.0 mysys\n"  # tied with a: z ranks above a (doc id descending)
        "q2 Q0 d 1 1.0 mysys\n"
    )
    assert main(["trec-eval", "-q", "-m", "official", "-m", "P.1,2", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out == (
        "num_ret               \tq1\t3\n"
        "num_rel               \tq1\t2\n"
        "num_rel_ret           \tq1\t1\n"
        "map                   \tq1\t0.1667\n"
        "Rprec                 \tq1\t0.0000\n"
        "bpref                 \tq1\t0.0000\n"
        "recip_rank            \tq1\t0.3333\n"
        "P_1                   \tq1\t0.0000\n"
        "P_2                   \tq1\t0.0000\n"
        "num_ret               \tq2\t1\n"
        "num_rel               \tq2\t1\n"
        "num_rel_ret           \tq2\t1\n"
        "map                   \tq2\t1.0000\n"
        "Rprec                 \tq2\t1.0000\n"
        "bpref                 \tq2\t1.0000\n"
        "recip_rank            \tq2\t1.0000\n"
        "P_1                   \tq2\t1.0000\n"
        "P_2                   \tq2\t0.5000\n"
        "runid                 \tall\tmysys\n"
        "num_q                 \tall\t2\n"
        "num_ret               \tall\t4\n"
        "num_rel               \tall\t3\n"
        "num_rel_ret           \tall\t2\n"
        "map                   \tall\t0.5833\n"
        "Rprec                 \tall\t0.5000\n"
        "bpref                 \tall\t0.5000\n"
        "recip_rank            \tall\t0.6667\n"
        "P_1                   \tall\t0.5000\n"
        "P_2                   \tall\t0.2500\n"
    )


def test_official_is_the_default(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = trec_eval(capsys, *files)
    assert out == expected(OFFICIAL_SPECS, OFFICIAL_PRINTED, runid="bm25", num_q=True)
    assert err == f"irm trec-eval: not supported yet, not printed: {OFFICIAL_UNSUPPORTED}\n"
    assert trec_eval(capsys, "-m", "official", *files) == (out, err)


def test_runid_is_the_tag_of_the_last_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = _write_qrels(tmp_path / "qrels.txt", QRELS)
    run = _write_run(tmp_path / "run.txt", RUN, tag="first", last_tag="last")
    out, _ = trec_eval(capsys, "-m", "runid", "-m", "map", str(qrels), str(run))
    assert out[0] == "runid                 \tall\tlast"
    assert out[1].startswith("map ")


def test_parquet_run_without_run_id_uses_the_file_stem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = _write_qrels(tmp_path / "qrels.txt", QRELS)
    rows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    frame = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    frame.write_parquet(tmp_path / "dense_v2.parquet")
    out, _ = trec_eval(capsys, "-m", "official", str(qrels), str(tmp_path / "dense_v2.parquet"))
    _, text_run = str(qrels), str(_write_run(tmp_path / "run.txt", RUN))
    text_out, _ = trec_eval(capsys, "-m", "official", str(qrels), text_run)
    assert out[0] == "runid                 \tall\tdense_v2"
    assert out[1:] == text_out[1:]


# --------------------------------------------------------------------------- flags
def test_per_query_lines(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    measures = ["map", "ndcg", "recip_rank", "P.5,10", "set_F", "num_rel_ret"]
    args = [a for m in measures for a in ("-m", m)]
    out, err = trec_eval(capsys, "-q", *args, *files)
    printed = ["num_rel_ret", "map", "recip_rank", "P_5", "P_10", "ndcg", "set_F"]
    assert out == expected(set(measures), printed, per_query=True)
    assert err == ""
    # queries in text order, no runid or num_q per query, no query without judgments
    seen = list(dict.fromkeys(line.split("\t")[1] for line in out))
    assert seen == ["7", "q1", "q10", "q2", "q3", "q4", "q5", "q6", "all"]


def test_no_summary(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = trec_eval(capsys, "-q", "-n", "-m", "official", *files)
    assert out == expected(OFFICIAL_SPECS, OFFICIAL_PRINTED, per_query=True, summary=False)
    assert trec_eval(capsys, "-n", *files)[0] == []


@pytest.mark.parametrize("per_query", [False, True])
def test_complete_counts_unretrieved_queries_as_zero(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], per_query: bool
) -> None:
    specs = {"num_ret", "num_rel", "num_rel_ret", "map", "P.5,10", "ndcg_cut.10", "bpref"}
    printed = ["num_ret", "num_rel", "num_rel_ret", "map", "bpref", "P_5", "P_10"]
    printed.append("ndcg_cut_10")
    args = [a for m in sorted(specs) for a in ("-m", m)]
    flags = ["-c", "-m", "num_q"] + (["-q"] if per_query else [])
    out, _ = trec_eval(capsys, *flags, *args, *files)
    assert out == expected(specs, printed, complete=True, per_query=per_query, num_q=True)
    assert f"{'num_q':<22}\tall\t9" in out  # q11 (judged, no results) counts; q99 does not
    without, _ = trec_eval(capsys, "-m", "num_q", *args, *files)
    assert f"{'num_q':<22}\tall\t8" in without


@pytest.mark.parametrize("level", [1, 2, 3])
def test_relevance_level(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], level: int
) -> None:
    specs = {"official", "recall.10", "success.1,5", "set_P", "set_recall", "ndcg"}
    printed = [*OFFICIAL_PRINTED, "recall_10", "ndcg", "success_1", "success_5"]
    printed += ["set_P", "set_recall"]
    args = [a for m in sorted(specs) for a in ("-m", m)]
    out, _ = trec_eval(capsys, "-q", f"-l{level}", *args, *files)
    oracle_specs = (specs - {"official"}) | OFFICIAL_SPECS
    assert out == expected(
        oracle_specs, printed, level=level, per_query=True, runid="bm25", num_q=True
    )


@pytest.mark.parametrize("depth", [1, 3, 10])
def test_max_docs_per_topic(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    specs = {"num_ret", "num_rel_ret", "map", "Rprec", "bpref", "P.2,5", "set_P", "ndcg"}
    printed = ["num_ret", "num_rel_ret", "map", "Rprec", "bpref", "P_2", "P_5", "ndcg"]
    printed.append("set_P")
    args = [a for m in sorted(specs) for a in ("-m", m)]
    out, _ = trec_eval(capsys, "-q", "-M", str(depth), *args, *files)
    assert out == expected(specs, printed, depth=depth, per_query=True)
    joined, _ = trec_eval(capsys, "-q", f"-M{depth}", *args, *files)
    assert joined == out


def test_families_and_print_order(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    measures = [
        "success.1,5,10", "ndcg_cut.10,20", "P.5,10", "recall.20,2000", "map_cut.5",
        "set_recall", "set_P", "bpref", "Rprec", "map", "recip_rank", "num_rel",
    ]  # fmt: skip
    args = [a for m in measures for a in ("-m", m)]
    out, err = trec_eval(capsys, "-q", "-c", *args, *files)
    printed = [
        "num_rel", "map", "Rprec", "bpref", "recip_rank", "P_5", "P_10", "recall_20",
        "recall_2000", "ndcg_cut_10", "ndcg_cut_20", "map_cut_5", "success_1", "success_5",
        "success_10", "set_P", "set_recall",
    ]  # fmt: skip
    assert out == expected(set(measures), printed, per_query=True, complete=True)
    assert err == ""


def test_default_cutoffs_and_sorted_cutoffs(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = trec_eval(capsys, "-m", "success", "-m", "map_cut", "-m", "recall", *files)
    names = [line.split()[0] for line in out]
    assert names == [
        *(f"recall_{k}" for k in CUTS),
        *(f"map_cut_{k}" for k in CUTS),
        "success_1",
        "success_5",
        "success_10",
    ]
    assert out == expected({"success", "map_cut", "recall"}, names)
    out, _ = trec_eval(capsys, "-m", "P.10,5,7", "-m", "ndcg_cut.23.4", *files)
    assert [line.split()[0] for line in out] == ["P_5", "P_7", "P_10", "ndcg_cut_23"]


def test_all_trec(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    out, err = trec_eval(capsys, "-q", "-m", "all_trec", *files)
    printed = [
        *OFFICIAL_PRINTED, *(f"recall_{k}" for k in CUTS), "ndcg",
        *(f"ndcg_cut_{k}" for k in CUTS), *(f"map_cut_{k}" for k in CUTS),
        "success_1", "success_5", "success_10", "set_P", "set_recall", "set_F",
    ]  # fmt: skip
    specs = {"num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank"}
    specs |= {"P", "recall", "ndcg", "ndcg_cut", "map_cut", "success", "set_P"}
    specs |= {"set_recall", "set_F"}
    assert out == expected(specs, printed, per_query=True, runid="bm25", num_q=True)
    assert err.count("\n") == 1
    note = err.removeprefix("irm trec-eval: not supported yet, not printed: ").strip()
    assert note.split(", ") == [
        "gm_map",
        *(f"iprec_at_recall_{i / 10:.2f}" for i in range(11)),
        "relstring", "infAP", "gm_bpref",
        *(f"Rprec_mult_{i / 5:.2f}" for i in range(1, 11)),
        "utility", "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg",
        *(f"relative_P_{k}" for k in CUTS),
        "set_relative_P", "set_map", "num_nonrel_judged_ret", "rbp", "rbp_resid",
        "unj_5", "unj_10", "unj_20",
    ]  # fmt: skip


def test_tables_match_trec_eval() -> None:
    """measures.c: nicknames name only measures of the table; official is a prefix."""
    assert set(ALL_TREC) <= set(MEASURE_ORDER)
    for names in NICKNAMES.values():
        assert set(names) <= set(MEASURE_ORDER)
    assert MEASURE_ORDER[: len(OFFICIAL)] == OFFICIAL
    assert MEASURE_ORDER[:5] == ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret")


def test_parameters_are_named_like_trec_eval(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = trec_eval(
        capsys, "-m", "set_F.1", "-m", "ndcg.1=3,2=9", "-m", "iprec_at_recall..10,.5", *files
    )
    assert [line.split()[0] for line in out] == ["set_F_1"]
    assert out[0].split("\t")[2] == expected({"set_F"}, ["set_F"])[0].split("\t")[2]
    assert err == (
        "irm trec-eval: not supported yet, not printed: iprec_at_recall_0.10, "
        "iprec_at_recall_0.50, ndcg_1=3,2=9\n"
    )
    _, err = trec_eval(capsys, "-m", "set_F.0.5", "-m", "map", *files)
    assert err == "irm trec-eval: not supported yet, not printed: set_F_0.5\n"


def test_first_parameters_win(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    out, err = trec_eval(capsys, "-m", "P.5", "-m", "P.10", "-m", "P", *files)
    assert [line.split()[0] for line in out] == ["P_5"]
    assert "using the first, P.5" in err


def test_ties_break_by_document_id_descending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = _write_qrels(tmp_path / "qrels.txt", {"q": {"d10": 1, "d9": 0}})
    run = tmp_path / "run.txt"
    run.write_text("q Q0 d10 1 1.0 x\nq Q0 d9 2 1.0 x\n")  # "d9" > "d10" as text
    out, _ = trec_eval(capsys, "-m", "recip_rank", str(qrels), str(run))
    assert out == [f"{'recip_rank':<22}\tall\t0.5000"]


def test_fractional_relevance_is_truncated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded = {q: {d: rel + 0.5 if rel >= 0 else rel for d, rel in docs.items()}
              for q, docs in QRELS.items()}  # fmt: skip
    qrels = _write_qrels(tmp_path / "qrels.txt", graded)
    run = _write_run(tmp_path / "run.txt", RUN)
    out, _ = trec_eval(capsys, "-q", "-m", "ndcg", "-m", "map", str(qrels), str(run))
    assert out == expected({"ndcg", "map"}, ["map", "ndcg"], per_query=True)


# --------------------------------------------------------------------------- errors
def _one_error_line(err: str) -> str:
    assert err.count("\n") == 1
    assert err.startswith("irm: error: ")
    return err


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        ("P_10", "Did you mean: P.10?"),
        ("mapp", "Did you mean: map"),
        ("ndcg@10", "Did you mean: ndcg.10?"),
        ("P.5,5", "cutoff 5 is listed twice"),
        ("P.0,5", "cutoffs must be positive"),
        ("P.", "nothing after the '.'"),
        ("map.10", "did you mean -m map_cut.10?"),
        ("official.5", "takes no parameters"),
    ],
)
def test_bad_measures(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], measure: str, message: str
) -> None:
    out, err = trec_eval(capsys, "-m", measure, *files, status=2)
    assert out == []
    assert message in _one_error_line(err)


def test_only_unsupported_measures(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = trec_eval(capsys, "-m", "gm_map", *files, status=2)
    assert out == []
    note, error = err.splitlines()
    assert note == "irm trec-eval: not supported yet, not printed: gm_map"
    assert error.startswith("irm: error: none of the requested measures is computed yet")


def test_unreadable_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = str(_write_qrels(tmp_path / "qrels.txt", QRELS))
    run = str(_write_run(tmp_path / "run.txt", RUN))
    _, err = trec_eval(capsys, "-m", "map", qrels, str(tmp_path / "missing.txt"), status=2)
    assert "missing.txt" in _one_error_line(err)
    _, err = trec_eval(capsys, "-m", "map", str(tmp_path / "nope.txt"), run, status=2)
    assert "nope.txt" in _one_error_line(err)
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 high bm25\n")
    _, err = trec_eval(capsys, "-m", "map", qrels, str(bad), status=2)
    _one_error_line(err)


def test_no_common_query(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = _write_qrels(tmp_path / "qrels.txt", {"a": {"d1": 1}})
    run = _write_run(tmp_path / "run.txt", {"b": {"d1": 1.0}})
    _, err = trec_eval(capsys, "-m", "map", str(qrels), str(run), status=2)
    assert "no queries with both results and relevance info" in _one_error_line(err)


def test_bad_depth(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    _, err = trec_eval(capsys, "-M", "0", "-m", "map", *files, status=2)
    assert "-M must be a positive" in _one_error_line(err)
