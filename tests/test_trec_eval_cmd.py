"""``irm trec-eval``: trec_eval's flags and output, checked line for line against pytrec_eval.

Every value printed is compared with trec_eval's own C code (through ``pytrec_eval``) at
the 4 decimals printed, on TREC files written here: tied scores, graded and negative
labels, fractional labels, a query judged but not retrieved and one retrieved but not
judged. The summary (``all``) lines are built from pytrec_eval's per-query values the way
trec_eval builds them: sums for the counts, geometric means of max(value, 0.00001) for
gm_map and gm_bpref, means (over every judged query with ``-c``, a query with no
results scoring 0) for the rest. rbp, rbp_resid and unj, which pytrec_eval lacks, come
from the reference in ``tests/test_trec_measures.py``; relstring (a string, per query
only) from :func:`ref_relstring` here and hand-written text.
"""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import polars as pl
import pytest

from polars_irmetrics.cli.main import main
from polars_irmetrics.cli.trec_eval import ALL_TREC, MEASURE_ORDER, NICKNAMES, OFFICIAL
from tests.test_trec_measures import (
    ranked_labels,
    ref_ndcg,
    ref_rbp,
    ref_rbp_resid,
    ref_unj,
)

pytrec_eval = pytest.importorskip("pytrec_eval")

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
#: Summary-only geometric means; pytrec_eval gives log(max(value, 0.00001)) per query.
GEOMETRIC = {"gm_map", "gm_bpref"}
MIN_GEO_MEAN = 0.00001
CUTS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
IPREC = [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]
OFFICIAL_PRINTED = [
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    *IPREC, *(f"P_{k}" for k in CUTS),
]  # fmt: skip
#: pytrec_eval measures behind OFFICIAL_PRINTED.
OFFICIAL_SPECS = {
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P",
}  # fmt: skip
#: Every line of -m all_trec, in trec_eval's order (relstring: per query only).
ALL_TREC_PRINTED = [
    *OFFICIAL_PRINTED[:8], *IPREC, *(f"P_{k}" for k in CUTS), "relstring",
    *(f"recall_{k}" for k in CUTS),
    "infAP", "gm_bpref", *(f"Rprec_mult_{i / 5:.2f}" for i in range(1, 11)), "utility",
    "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", *(f"ndcg_cut_{k}" for k in CUTS),
    *(f"map_cut_{k}" for k in CUTS), *(f"relative_P_{k}" for k in CUTS), "success_1",
    "success_5", "success_10", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj_5", "unj_10", "unj_20",
]  # fmt: skip
ALL_TREC_SPECS = {
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
    "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
}  # fmt: skip


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


def ref_relstring(judged: dict[str, int], docs: dict[str, float], length: int) -> str:
    """m_relstring.c by hand: the first ``length`` documents in trec_eval's order."""
    ranked = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:length]
    chars = []
    for doc, _ in ranked:
        rel = judged.get(doc)
        chars.append("-" if rel is None else "." if rel < 0 else ">" if rel > 9 else str(rel))
    return "".join(chars)


def _relstring_line(name: str, qid: str, qrels: Qrels, run: Run) -> str:
    """A relstring line; with -c, a judged query with no results prints '' as
    ``relstring`` and '-' under a parameterised name (trec_eval 10's stand-in document)."""
    length = 10 if name == "relstring" else int(name.split("_")[1])
    if qid in run:
        text = ref_relstring(qrels[qid], run[qid], length)
    else:
        text = "" if name == "relstring" else "-"[:length]
    return f"{name:<22}\t{qid}\t'{text}'"


def _fmt(name: str, qid: str, value: float) -> str:
    text = str(round(value)) if name in COUNTS else f"{value:.4f}"
    return f"{name:<22}\t{qid}\t{text}"


def lround(value: float) -> int:
    """C's lround for a value >= 0: halves away from zero."""
    whole = math.floor(value)
    return whole + (1 if value - whole >= 0.5 else 0)


def ref_iprec_lround(
    ranking: list[int | None], judged: list[int], level: int, recalls: list[float]
) -> list[float]:
    """trec_eval 10.0's m_iprec_at_recall.c, line by line: c = lround(x * R)."""
    labels = [-1 if lab is None else lab for lab in ranking]
    num_rel = sum(lab >= level for lab in judged)
    rel_ret = sum(lab >= level for lab in labels)
    cuts = [lround(x * num_rel) for x in recalls]
    values = [0.0] * len(cuts)
    current = len(cuts) - 1
    while current >= 0 and cuts[current] > rel_ret:
        current -= 1
    best = rel_ret / len(labels) if labels else 0.0
    so_far = rel_ret
    i = len(labels)
    while i > 0 and so_far > 0:
        best = max(best, so_far / i)
        if labels[i - 1] >= level:
            while current >= 0 and so_far == cuts[current]:
                values[current] = best
                current -= 1
            so_far -= 1
        i -= 1
    while current >= 0:
        values[current] = best
        current -= 1
    return values


def _reference(
    qrels: Qrels, run: Run, level: int = 1, version: int = 10
) -> dict[str, dict[str, float]]:
    """rbp, rbp_resid and unj (not in pytrec_eval) for the queries in both files, and
    with version 10 iprec_at_recall and 11pt_avg as trec_eval 10.0 rounds them."""
    out: dict[str, dict[str, float]] = {}
    points = [i / 10 for i in range(11)]
    for q in set(qrels) & set(run):
        ranking, judged = ranked_labels(run[q], qrels[q]), list(qrels[q].values())
        out[q] = {
            "rbp": ref_rbp(ranking, judged, 0.9),
            "rbp_resid": ref_rbp_resid(ranking, 0.9),
            **{f"unj_{k}": ref_unj(ranking, k) for k in (5, 10, 20)},
        }
        if version == 10:
            iprec = ref_iprec_lround(ranking, judged, level, points)
            out[q].update(zip(IPREC, iprec, strict=True))
            total = 0.0
            for value in reversed(iprec):
                total += value
            out[q]["11pt_avg"] = total / 11
    return out


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
    version: int = 10,
    judged_only: bool = False,
) -> list[str]:
    """trec_eval's lines, from pytrec_eval's per-query values of ``specs`` (9.0.x), with
    iprec_at_recall and 11pt_avg as trec_eval 10.0 rounds them unless ``version`` is 9."""
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, specs, relevance_level=level, judged_docs_only_flag=judged_only
    )
    values: dict[str, dict[str, float]] = evaluator.evaluate(_truncate(run, depth))
    for q, extra in _reference(qrels, _truncate(run, depth), level, version).items():
        values[q].update(extra)
    queries = sorted(qrels if complete else values)
    numbers = [n for n in printed if not n.startswith("relstring")]  # relstring: -q only
    for q in queries:  # -c: a judged query with no results scores 0
        if q not in values:
            values[q] = dict.fromkeys(numbers, 0.0)
            values[q].update(dict.fromkeys(GEOMETRIC, math.log(MIN_GEO_MEAN)))
            if "num_rel" in numbers:
                values[q]["num_rel"] = sum(rel >= level for rel in qrels[q].values())
    lines = []
    if per_query:  # gm_map and gm_bpref: nothing per query
        for q in queries:
            for n in printed:
                if n not in numbers:
                    lines.append(_relstring_line(n, q, qrels, _truncate(run, depth)))
                elif n not in GEOMETRIC:
                    lines.append(_fmt(n, q, values[q][n]))
    if summary:
        if runid is not None:
            lines.append(f"{'runid':<22}\tall\t{runid}")
        if num_q:
            lines.append(f"{'num_q':<22}\tall\t{len(queries)}")
        for name in numbers:
            total = 0.0
            for q in queries:
                total += values[q][name]
            if name == "num_rel" and complete:  # m_num_rel.c: every judgment > 0
                total = sum(rel > 0 for docs in qrels.values() for rel in docs.values())
            if name in COUNTS:
                lines.append(_fmt(name, "all", total))
            elif name in GEOMETRIC:
                lines.append(_fmt(name, "all", math.exp(total / len(queries))))
            else:
                lines.append(_fmt(name, "all", total / len(queries)))
    return lines


#: The warning for judged queries without results (tested in test_trec_eval_versions.py).
_UNRETRIEVED = re.compile(r"irm trec-eval: warning: \d+ judged quer.* no results in .*\n")


def trec_eval(
    capsys: pytest.CaptureFixture[str], *args: str, status: int = 0, version: str = "10"
) -> tuple[list[str], str]:
    """``irm trec-eval`` as trec_eval 9.0.8 (pytrec_eval's version) unless ``version``
    says otherwise; standard error without the warning for judged queries left out."""
    assert main(["trec-eval", "--trec-eval-version", version, *args]) == status
    captured = capsys.readouterr()
    return captured.out.splitlines(), _UNRETRIEVED.sub("", captured.err)


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
    args = ["-q", "-m", "official", "-m", "P.1,2", str(qrels), str(run)]
    assert main(["trec-eval", "--trec-eval-version", "9", *args]) == 0
    # iprec_at_recall_x starts at the c-th relevant document, c = floor(x R + 0.9): q1
    # (R = 2, a at rank 3) has c <= 1 up to x = 0.5 (precision 1/3), c = 2 > 1 found after.
    # gm_map, only in the summary: sqrt(1/6 * 1).
    assert capsys.readouterr().out == (
        "num_ret               \tq1\t3\n"
        "num_rel               \tq1\t2\n"
        "num_rel_ret           \tq1\t1\n"
        "map                   \tq1\t0.1667\n"
        "Rprec                 \tq1\t0.0000\n"
        "bpref                 \tq1\t0.0000\n"
        "recip_rank            \tq1\t0.3333\n"
        + _iprec_lines("q1", ["0.3333"] * 6 + ["0.0000"] * 5)
        + "P_1                   \tq1\t0.0000\n"
        "P_2                   \tq1\t0.0000\n"
        "num_ret               \tq2\t1\n"
        "num_rel               \tq2\t1\n"
        "num_rel_ret           \tq2\t1\n"
        "map                   \tq2\t1.0000\n"
        "Rprec                 \tq2\t1.0000\n"
        "bpref                 \tq2\t1.0000\n"
        "recip_rank            \tq2\t1.0000\n"
        + _iprec_lines("q2", ["1.0000"] * 11)
        + "P_1                   \tq2\t1.0000\n"
        "P_2                   \tq2\t0.5000\n"
        "runid                 \tall\tmysys\n"
        "num_q                 \tall\t2\n"
        "num_ret               \tall\t4\n"
        "num_rel               \tall\t3\n"
        "num_rel_ret           \tall\t2\n"
        "map                   \tall\t0.5833\n"
        "gm_map                \tall\t0.4082\n"
        "Rprec                 \tall\t0.5000\n"
        "bpref                 \tall\t0.5000\n"
        "recip_rank            \tall\t0.6667\n"
        + _iprec_lines("all", ["0.6667"] * 6 + ["0.5000"] * 5)
        + "P_1                   \tall\t0.5000\n"
        "P_2                   \tall\t0.2500\n"
    )


def _iprec_lines(qid: str, values: list[str]) -> str:
    return "".join(f"{name:<22}\t{qid}\t{v}\n" for name, v in zip(IPREC, values, strict=True))


def test_official_is_the_default(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = trec_eval(capsys, *files)
    assert out == expected(OFFICIAL_SPECS, OFFICIAL_PRINTED, runid="bm25", num_q=True)
    assert err == ""
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


def test_judged_docs_only(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval -J (pytrec_eval's judged_docs_only_flag): unjudged documents leave each
    # ranking before any measure, so the judged ones move up
    specs = {"num_ret", "num_rel_ret", "map", "Rprec", "bpref", "P.2,5", "recall.5", "ndcg"}
    printed = ["num_ret", "num_rel_ret", "map", "Rprec", "bpref", "P_2", "P_5", "recall_5"]
    printed.append("ndcg")
    args = [a for m in sorted(specs) for a in ("-m", m)]
    out, _ = trec_eval(capsys, "-q", "-J", *args, *files)
    assert out == expected(specs, printed, per_query=True, judged_only=True)
    assert out != expected(specs, printed, per_query=True)  # the flag changes the values
    err = trec_eval(capsys, "-J", "-R", "prefs", *files, status=2)[1]
    assert err == (
        "irm: error: -J (judged documents only) is not available with -R prefs: the "
        "preference measures count judged documents themselves; drop -J\n"
    )


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
    out, _ = trec_eval(capsys, "-m", "P.10,5,7", "-m", "ndcg_cut.23", *files)
    assert [line.split()[0] for line in out] == ["P_5", "P_7", "P_10", "ndcg_cut_23"]
    # trec_eval's strtol reads 23.4 as 23; a cutoff that is not a whole number is
    # refused here (tests/test_cli_round5.py: parameters that are not numbers)
    assert main(["trec-eval", "-m", "ndcg_cut.23.4", *files]) == 2
    assert "parameter '23.4' is not an integer written in digits" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags",
    [[], ["-c"], ["-M", "5"], ["-l", "2"], ["-c", "-l", "3", "-M", "7"], ["-n", "-c", "-M1"]],
)
def test_all_trec(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    out, err = trec_eval(capsys, "-q", *flags, "-m", "all_trec", *files)
    level = int(flags[flags.index("-l") + 1]) if "-l" in flags else 1
    depth = int(flags[flags.index("-M") + 1]) if "-M" in flags else 1 if "-M1" in flags else None
    assert out == expected(
        ALL_TREC_SPECS,
        ALL_TREC_PRINTED,
        level=level,
        depth=depth,
        complete="-c" in flags,
        per_query=True,
        summary="-n" not in flags,
        runid="bm25",
        num_q=True,
    )
    assert err == ""  # every measure of all_trec is printed
    strings = [line for line in out if line.startswith("relstring ")]
    assert len(strings) == (9 if "-c" in flags else 8)  # one per query, none in the summary
    at = out.index(strings[0])  # between P and recall, as in trec_eval's measure table
    assert out[at - 1].startswith("P_1000 ")
    assert out[at + 1].startswith("recall_5 ")


def test_gm_measures_print_only_in_the_summary(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    measures = ["-m", "gm_map", "-m", "gm_bpref", "-m", "map"]
    out, _ = trec_eval(capsys, "-q", "-c", *measures, *files)
    assert [line.split()[0] for line in out if "\tall\t" not in line] == ["map"] * 9
    assert out == expected({"gm_map", "gm_bpref", "map"}, ["map", "gm_map", "gm_bpref"],
                           complete=True, per_query=True)  # fmt: skip
    # By hand: q11 (judged, no results) counts as 0.00001 with -c, not at all without.
    gm = {line.split()[0]: float(line.split()[2]) for line in out if "\tall\t" in line}
    without, _ = trec_eval(capsys, "-m", "gm_map", *files)
    ap = trec_eval(capsys, "-q", "-m", "map", *files)[0][:-1]
    logs = [math.log(max(float(line.split()[2]), MIN_GEO_MEAN)) for line in ap]
    assert without == [_fmt("gm_map", "all", math.exp(sum(logs) / 8))]
    with_q11 = math.exp((sum(logs) + math.log(MIN_GEO_MEAN)) / 9)
    assert gm["gm_map"] == pytest.approx(with_q11, abs=5e-5)


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
    names = ["iprec_at_recall_0.10", "iprec_at_recall_0.50", "ndcg_1=3,2=9", "set_F_1"]
    assert [line.split()[0] for line in out] == names
    iprec = expected({"iprec_at_recall"}, ["iprec_at_recall_0.10", "iprec_at_recall_0.50"])
    assert out[:2] == iprec
    assert out[2] == _fmt("ndcg_1=3,2=9", "all", _mean_gain_ndcg({1: 3.0, 2: 9.0}))
    assert out[3].split("\t")[2] == expected({"set_F"}, ["set_F"])[0].split("\t")[2]
    assert err == ""
    _, err = trec_eval(capsys, "-m", "set_F.-0.5", "-m", "map", *files)
    assert err == "irm trec-eval: not supported yet, not printed: set_F_-0.5\n"


def _mean_gain_ndcg(gains: dict[int, float]) -> float:
    """The summary of ndcg with a gain table, from the reference (not in pytrec_eval)."""
    queries = sorted(set(QRELS) & set(RUN))
    total = 0.0
    for q in queries:
        total += ref_ndcg(ranked_labels(RUN[q], QRELS[q]), list(QRELS[q].values()), gains)
    return total / len(queries)


def test_gain_tables_read_like_trec_eval(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Names that are not integers are ignored and the first gain of a label wins.
    out, _ = trec_eval(capsys, "-m", "ndcg.1=3,x=5,1=7,2=9", *files)
    assert out == [_fmt("ndcg_1=3,x=5,1=7,2=9", "all", _mean_gain_ndcg({1: 3.0, 2: 9.0}))]
    out, _ = trec_eval(capsys, "-m", "ndcg.x=5", "-m", "ndcg_rel.y=1", *files)
    plain = expected({"ndcg", "ndcg_rel"}, ["ndcg", "ndcg_rel"])
    assert [line.split("\t")[2] for line in out] == [line.split("\t")[2] for line in plain]
    assert [line.split()[0] for line in out] == ["ndcg_x=5", "ndcg_rel_y=1"]


def test_rbp_utility_and_cutoff_parameters(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = trec_eval(
        capsys, "-q", "-m", "rbp.p=0.5", "-m", "rbp_resid.p=0.8,p=0.5", "-m",
        "utility.2,-0.5,-1,0", "-m", "Rprec_mult.1.5,0.5", "-m", "relative_P.3", "-m",
        "unj.2", *files,
    )  # fmt: skip
    assert err == ""
    by_query = {}
    for line in out:
        name, qid, value = line.split("\t")
        by_query.setdefault(qid, {})[name.strip()] = value
    specs = {"num_ret", "num_rel", "num_rel_ret", "Rprec_mult.0.5,1.5", "relative_P.3"}
    counts = pytrec_eval.RelevanceEvaluator(QRELS, specs).evaluate(RUN)
    for q in sorted(set(QRELS) & set(RUN)):
        ranking, judged = ranked_labels(RUN[q], QRELS[q]), list(QRELS[q].values())
        c = counts[q]
        a, n, r = c["num_rel_ret"], c["num_ret"], c["num_rel"]
        assert by_query[q] == {
            "utility_2,-0.5,-1,0": f"{2 * a - 0.5 * (n - a) - 1 * (r - a):.4f}",
            "Rprec_mult_0.50": f"{c['Rprec_mult_0.50']:.4f}",
            "Rprec_mult_1.50": f"{c['Rprec_mult_1.50']:.4f}",
            "relative_P_3": f"{c['relative_P_3']:.4f}",
            "rbp_p=0.5": f"{ref_rbp(ranking, judged, 0.5):.4f}",
            "rbp_resid_p=0.8,p=0.5": f"{ref_rbp_resid(ranking, 0.5):.4f}",  # the last p wins
            "unj_2": f"{ref_unj(ranking, 2):.4f}",
        }


@pytest.mark.parametrize(
    ("measure", "printed"),
    [
        ("11pt_avg.0.5,0.2", "11pt_avg_0.5,0.2"),  # trec_eval mishandles unsorted points
        ("dcg.1=2", "dcg_1=2"),
        ("ndcg.-1=2", "ndcg_-1=2"),  # a gain for documents missing from the judgments
        ("rbp.1=2", "rbp_1=2"),  # rbp with a gain table
        ("rbp.p=1.5", "rbp_p=1.5"),
        ("Rndcg.1=0", "Rndcg_1=0"),  # a relevant label with no gain: nan in trec_eval
    ],
)
def test_parameters_not_computed_are_named(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], measure: str, printed: str
) -> None:
    out, err = trec_eval(capsys, "-m", measure, "-m", "map", *files)
    assert [line.split()[0] for line in out] == ["map"]
    assert err == f"irm trec-eval: not supported yet, not printed: {printed}\n"


def test_rndcg_below_relevance_level_1_is_not_printed(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # -l 0: a query whose judgments are all 0 has R > 0 and no positive gain, and
    # trec_eval prints nan for it.
    out, err = trec_eval(capsys, "-l", "0", "-m", "Rndcg", "-m", "ndcg_rel", *files)
    assert [line.split()[0] for line in out] == ["ndcg_rel"]
    assert err == "irm trec-eval: not supported yet, not printed: Rndcg\n"
    # ndcg_rel does not use the level (and pytrec_eval refuses level 0)
    assert out == expected({"ndcg_rel"}, ["ndcg_rel"], level=1)


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


# --------------------------------------------------------------------------- relstring
RELSTRING_QRELS = (
    "q1 0 a 1\nq1 0 b 0\nq1 0 c 12\nq1 0 d -1\nq1 0 e 2.7\nq1 0 g -2\nq1 0 i 9\n"
    "q1 0 k 1\nq2 0 x 1\nq3 0 y 3\n"  # q3: judged, not retrieved
)
#: q1 in trec_eval's order: a z b c d e g i h j k (z over b and i over h: tied scores,
#: document id descending); z, h, j are not judged, d and g have negative labels.
RELSTRING_RUN = [
    ("q1", "a", 3.0), ("q1", "b", 2.0), ("q1", "z", 2.0), ("q1", "c", 1.5), ("q1", "d", 1.0),
    ("q1", "e", 0.5), ("q1", "g", 0.2), ("q1", "h", 0.1), ("q1", "i", 0.1), ("q1", "j", 0.05),
    ("q1", "k", 0.01), ("q2", "x", 1.0), ("q9", "x", 1.0),  # q9: not judged, not printed
]  # fmt: skip


@pytest.fixture
def relstring_files(tmp_path: Path) -> tuple[str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(RELSTRING_QRELS)
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} 0 {s!r} sys\n" for q, d, s in RELSTRING_RUN))
    return str(qrels), str(run)


def test_relstring_exact_text(
    relstring_files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    measures = ["-m", "recall.2", "-m", "relstring", "-m", "P.2"]
    assert main(["trec-eval", "--trec-eval-version", "9", "-q", *measures, *relstring_files]) == 0
    # Labels 0-9 as digits (2.7 read as 2), 12 as '>', not judged '-', negative '.';
    # the first 10 documents; between P and recall; nothing in the summary.
    assert capsys.readouterr() == (
        "P_2                   \tq1\t0.5000\n"
        "relstring             \tq1\t'1-0>.2.9--'\n"
        "recall_2              \tq1\t0.2000\n"
        "P_2                   \tq2\t0.5000\n"
        "relstring             \tq2\t'1'\n"
        "recall_2              \tq2\t1.0000\n"
        "P_2                   \tall\t0.5000\n"
        "recall_2              \tall\t0.6000\n",
        f"irm trec-eval: warning: 1 judged query has no results in {relstring_files[1]} and is "
        "left out (trec_eval 10.0 stops there with exit status 4; -c scores them 0): q3\n",
    )


@pytest.mark.parametrize(
    ("args", "text"),
    [
        # -c: a judged query with no results prints '' as relstring, but '-' under a
        # parameterised name (trec_eval 10 ranks a stand-in document, not judged, and
        # clears only the measure named exactly "relstring")
        (["-c", "-m", "relstring"], ["'1-0>.2.9--'", "'1'", "''"]),
        (["-c", "-M", "3", "-m", "relstring.20"], ["'1-0'", "'1'", "'-'"]),
        (["-M4", "-m", "relstring.20"], ["'1-0>'", "'1'"]),
        (["-m", "relstring.12"], ["'1-0>.2.9--1'", "'1'"]),
        (["-c", "-m", "relstring.3.9,1"], ["'1-0'", "'1'", "'-'"]),  # N: (long) of 3.9
        (["-c", "-m", "relstring.0"], ["''", "''", "''"]),
        (["-m", "relstring.-2"], ["''", "''"]),
    ],
)
def test_relstring_parameters_depth_and_complete(
    relstring_files: tuple[str, str],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    text: list[str],
) -> None:
    out, err = trec_eval(capsys, "-q", "-n", *args, *relstring_files)
    name = next(a for a in args if a.startswith("relstring")).replace(".", "_", 1)
    assert out == [f"{name:<22}\t{q}\t{t}" for q, t in zip(["q1", "q2", "q3"], text, strict=False)]
    assert err == ""


def test_relstring_only_prints_per_query(
    relstring_files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert trec_eval(capsys, "-m", "relstring", *relstring_files) == ([], "")
    assert trec_eval(capsys, "-c", "-m", "relstring", "-m", "num_q", *relstring_files) == (
        [f"{'num_q':<22}\tall\t3"],
        "",
    )


def test_relstring_of_a_run_ranked_by_its_rank_column(
    tmp_path: Path, relstring_files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    ranked = sorted(RELSTRING_RUN, key=lambda r: (r[0], -r[2], tuple(-ord(c) for c in r[1])))
    rows = [(q, d, 100 * i) for i, (q, d, _) in enumerate(ranked, start=1)]  # gaps: fine
    frame = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank"], orient="row")
    frame.write_parquet(tmp_path / "ranked.parquet")
    qrels, run = relstring_files
    args = ["-q", "-c", "-m", "relstring.4"]
    from_ranks, _ = trec_eval(capsys, *args, qrels, str(tmp_path / "ranked.parquet"))
    assert from_ranks == trec_eval(capsys, *args, qrels, run)[0]
    assert [line.split("\t")[2] for line in from_ranks] == ["'1-0>'", "'1'", "'-'"]


def test_relstring_matches_the_reference(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = trec_eval(capsys, "-q", "-c", "-M", "6", "-m", "relstring.25", "-m", "map", *files)
    assert out == expected({"map"}, ["map", "relstring_25"], depth=6, complete=True,
                           per_query=True)  # fmt: skip
    assert err == ""


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
        ("binG.1", "takes no parameters"),
        ("iprec_at_recall.0.1,.1", "cutoff 0.1 is listed twice"),
        ("utility.1,-1", "utility takes 4 coefficients"),
        ("ndcg.1=3=4", "malformed parameters"),
        ("G.1", "malformed parameters"),
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
    out, err = trec_eval(capsys, "-m", "yaap", *files, status=2)
    assert out == []
    note, error = err.splitlines()
    assert note == "irm trec-eval: not supported yet, not printed: yaap"
    assert error.startswith("irm: error: none of the requested measures is computed")


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
