"""``irm trec-eval`` and ``irm.evaluate`` against trec_eval's C source, round 11.

* ``-J`` with ``-M`` (``judged_only=True`` with ``depth=``): form_res_rels.c sorts the
  results, truncates them to ``-M``, and only then keeps the judged ones.
* qrels labels: get_qrels.c (and get_qrels_jg.c) reads them with ``atol``, the sign
  and leading digits (``1e1`` is 1, ``.5e1`` is 0); digits beyond Int64 are refused
  with the file, line and value.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import TrecFormatError
from polars_irmetrics.io.trec import read_trec_eval_qrels
from tests.test_trec_eval_cmd import expected, files, trec_eval

__all__ = ["files"]  # the fixture, used by name


# ------------------------------------------------------------------ -J with -M
def test_judged_only_cuts_at_depth_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # z1 (unjudged) ranks first: the top 2 are z1 and d1, of which d1 is judged
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 z1 1 5 r\nq1 Q0 d1 2 4 r\nq1 Q0 d3 3 3 r\nq1 Q0 d2 4 2 r\n")
    args = ["-q", "-J", "-M", "2", "-m", "map", "-m", "num_ret", "-m", "P.2"]
    out, err = trec_eval(capsys, *args, str(qrels), str(run))
    assert err == ""
    assert out == [
        "num_ret               \tq1\t1",
        "map                   \tq1\t0.5000",
        "P_2                   \tq1\t0.5000",
        "num_ret               \tall\t1",
        "map                   \tall\t0.5000",
        "P_2                   \tall\t0.5000",
    ]


@pytest.mark.parametrize("order", ["score", "rank"])
@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("table", [False, True], ids=["qrels", "judged-table"])
def test_judged_only_depth_in_python(order: str, lazy: bool, table: bool) -> None:
    run = pl.DataFrame(
        {
            "query_id": ["q1"] * 4,
            "doc_id": ["z1", "d1", "d3", "d2"],
            "score": [5.0, 4.0, 3.0, 2.0],
            "rank": [1, 2, 3, 4],
        }
    )
    qrels = pl.DataFrame(
        {"query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"], "relevance": [1, 0, 1]}
    )
    metrics = ["map", "P@2", "num_ret"]
    options = {"depth": 2, "judged_only": True, "order": order, "per_query": True}
    if table:  # the run's own rows carry the labels: z1's -1 is "not judged"
        frame = run.join(qrels, on=["query_id", "doc_id"], how="left").fill_null(-1)
        got = irm.evaluate(frame.lazy() if lazy else frame, metrics, **options)
    else:
        got = irm.evaluate(run.lazy() if lazy else run, metrics, qrels=qrels, **options)
    if isinstance(got, pl.LazyFrame):
        got = got.collect()
    assert got.row(0, named=True) == {"query_id": "q1", "map": 0.5, "P@2": 0.5, "num_ret": 1}


@pytest.mark.parametrize("depth", [1, 3, 7])
def test_judged_only_depth_matches_trec_eval(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    # pytrec_eval (trec_eval -J) on the run truncated to depth as trec_eval -M does
    specs = {"num_ret", "num_rel_ret", "map", "Rprec", "bpref", "P.2,5", "recall.5", "ndcg"}
    printed = ["num_ret", "num_rel_ret", "map", "Rprec", "bpref", "P_2", "P_5", "recall_5"]
    printed.append("ndcg")
    args = [a for m in sorted(specs) for a in ("-m", m)]
    out, _ = trec_eval(capsys, "-q", "-J", "-M", str(depth), *args, *files)
    assert out == expected(specs, printed, per_query=True, depth=depth, judged_only=True)


# ------------------------------------------------------------------ labels read as atol
@pytest.mark.parametrize(
    ("labels", "expected_labels"),
    [
        (["+1", "1e-1", ".5e1"], [1, 1, 0]),
        (["1.9", "-0.5", "1e1"], [1, 0, 1]),
        (["1e19", "007", "-2"], [1, 7, -2]),
        (["12.9", "0", "1"], [12, 0, 1]),
    ],
)
def test_labels_are_read_as_atol_reads_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    labels: list[str],
    expected_labels: list[int],
) -> None:
    # get_qrels.c and get_qrels_jg.c: text_qrels_ptr->rel = atol(lines[i].rel)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q1 0 d{i} {lab}\n" for i, lab in enumerate(labels, 1)))
    assert read_trec_eval_qrels(qrels)["relevance"].to_list() == expected_labels
    jg = tmp_path / "jg.txt"
    jg.write_text("".join(f"q1 a d{i} {lab}\n" for i, lab in enumerate(labels, 1)))
    assert irm.read_trec_qrels_jg(jg)["relevance"].to_list() == expected_labels
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\n")
    out, _ = trec_eval(capsys, "-q", "-m", "relstring", str(qrels), str(run))
    shown = "".join("." if lab < 0 else ">" if lab > 9 else str(lab) for lab in expected_labels)
    assert out == [f"relstring             \tq1\t'{shown}'"]


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("99999999999999999999", "is out of the range of a 64-bit integer"),
        ("-99999999999999999999", "is out of the range of a 64-bit integer"),
        ("rel", "is not a number"),
        ("inf", "is not a finite number"),
    ],
)
def test_a_label_atol_cannot_read_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], token: str, problem: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q1 0 d0 1\nq1 0 d1 {token}\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3 r\n")
    fix = "; write a label within it" if "range" in problem else ""
    message = f"{qrels}, line 2: relevance {token!r} {problem}: 'q1 0 d1 {token}'{fix}"
    with pytest.raises(TrecFormatError, match=f"^{re.escape(message)}$"):
        read_trec_eval_qrels(qrels)
    out, err = trec_eval(capsys, str(qrels), str(run), status=2)
    assert (out, err) == ([], f"irm: error: {message}\n")


# ------------------------------------------------------------------ relstring under -J
@pytest.mark.parametrize(
    ("flags", "lines"),
    [
        # m_relstring.c prints res_rels.results_rel_list, which under -J holds the
        # judged documents only (form_res_rels.c), in their order: z1 is gone
        (["-J"], ["relstring             \tq1\t'110'"]),
        (["-J", "-M", "2"], ["relstring             \tq1\t'1'"]),  # the top 2: z1, d1
        (["-J", "-m", "relstring.2"], ["relstring_2           \tq1\t'11'"]),
        ([], ["relstring             \tq1\t'-110'"]),
    ],
)
def test_relstring_with_judged_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], lines: list[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq1 0 u1 -1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 z1 1 5 r\nq1 Q0 d1 2 4 r\nq1 Q0 d3 3 3 r\nq1 Q0 d2 4 2 r\n")
    measures = [] if "relstring.2" in flags else ["-m", "relstring"]
    out, err = trec_eval(capsys, "-q", *flags, *measures, str(qrels), str(run))
    assert (out, err) == (lines, "")


def test_all_trec_with_judged_only_prints_relstring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    run = tmp_path / "run.txt"
    # q1: an unjudged document first; q2: none judged (num_ret 0, relstring '')
    run.write_text("q1 Q0 z1 1 5 r\nq1 Q0 d2 2 4 r\nq1 Q0 d1 3 3 r\nq2 Q0 z2 1 1 r\n")
    out, err = trec_eval(capsys, "-q", "-J", "-m", "all_trec", str(qrels), str(run))
    assert err == ""
    found = [line for line in out if line.startswith(("relstring", "num_ret "))]
    assert found == [
        "num_ret               \tq1\t2",
        "relstring             \tq1\t'01'",
        "num_ret               \tq2\t0",
        "relstring             \tq2\t''",
        "num_ret               \tall\t2",
    ]


# ------------------------------------------------------------------ set_F with a beta
def _set_f(qrels: dict[str, dict[str, int]], run: dict[str, list[str]], x: float) -> list[float]:
    """m_set_F.c: (x + 1) P R / (x P + R) where num_rel_ret > 0, else 0."""
    values = []
    for q in sorted(run):
        relevant = {d for d, rel in qrels[q].items() if rel >= 1}
        rel_ret = len(relevant & set(run[q]))
        if rel_ret == 0:
            values.append(0.0)
            continue
        p, r = rel_ret / len(run[q]), rel_ret / len(relevant)
        values.append((x + 1.0) * p * r / (x * p + r))
    return values


@pytest.mark.parametrize(("param", "x"), [("0.5", 0.5), ("2", 2.0), ("0", 0.0), ("3,7", 3.0)])
def test_set_f_takes_beta_as_its_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], param: str, x: float
) -> None:
    judged = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"d": 1, "e": 2, "f": 0}, "q3": {"g": 1}}
    ranked = {"q1": ["a", "b", "x"], "q2": ["e", "f"], "q3": ["y"]}
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, docs in judged.items() for d, r in docs.items())
    )
    run = tmp_path / "run.txt"
    run.write_text(
        "".join(
            f"{q} Q0 {d} {i} {9 - i} r\n" for q, docs in ranked.items() for i, d in enumerate(docs)
        )
    )
    out, err = trec_eval(capsys, "-q", "-m", f"set_F.{param}", str(qrels), str(run))
    values = _set_f(judged, ranked, x)
    name = f"set_F_{param}"  # append_string(tm->name, printable_params): as given
    lines = [f"{name:<22}\t{q}\t{v:.4f}" for q, v in zip(sorted(ranked), values, strict=True)]
    lines.append(f"{name:<22}\tall\t{sum(values) / len(values):.4f}")
    assert (out, err) == (lines, "")


@pytest.mark.parametrize("flags", [["-m", "set_F.-1"], ["-l", "0", "-m", "Rndcg"]])
def test_no_measure_computed_says_which_are(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    name = flags[-1].replace(".", "_")
    message = (
        "none of the requested measures is computed (they are named on the line above); "
        "choose among the measures of -m all_trec, which are computed with their default "
        "parameters (Rndcg from -l 1 up)"
    )
    out, err = trec_eval(capsys, *flags, *files, status=2)
    assert (out, err) == (
        [],
        f"irm trec-eval: not supported yet, not printed: {name}\nirm: error: {message}\n",
    )


# ------------------------------------------------------------------ minor
def test_inf_is_printed_in_six_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # te_print_single_meas_s_double: printf("%-22s\t%s\t%6.4f\n"), and C pads inf to 6
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\n")
    for coefficient, shown in [("1e308", "   inf"), ("-1e308", "  -inf")]:
        out, _ = trec_eval(capsys, "-m", f"utility.{coefficient},0,0,0", str(qrels), str(run))
        assert out == [f"{f'utility_{coefficient},0,0,0':<22}\tall\t{shown}"]


@pytest.mark.parametrize("suffix", ["json", "csv", "parquet"])
def test_a_table_keeps_relstring_and_runid_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 2 sys\nq1 Q0 z 2 1 sys\n")
    out_path = tmp_path / f"out.{suffix}"
    args = ["-q", "-m", "relstring", "-m", "runid", "-m", "P.1", "-o", str(out_path)]
    trec_eval(capsys, *args, str(qrels), str(run))
    reader = {"json": pl.read_json, "csv": pl.read_csv, "parquet": pl.read_parquet}[suffix]
    assert reader(out_path).rows() == [
        ("P_1", "q1", 1.0, None),
        ("relstring", "q1", None, "1-"),
        ("runid", "all", None, "sys"),
        ("P_1", "all", 1.0, None),
    ]


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        (
            "ndcg_cut.5.5",
            "measure 'ndcg_cut.5.5': parameter '5.5' is not an integer written in digits "
            "(trec_eval's strtol would read 5); write one, e.g. -m P.5,10",
        ),
        (
            "success.1e1",
            "measure 'success.1e1': parameter '1e1' is not an integer written in digits "
            "(trec_eval's strtol would read 1); write one, e.g. -m P.5,10",
        ),
        (
            "P.5,.5",
            "measure 'P.5,.5': parameter '.5' is not an integer written in digits "
            "(trec_eval's strtol would read 0); write one, e.g. -m P.5,10",
        ),
        (
            "P.x",
            "measure 'P.x': parameter 'x' is not a number (trec_eval would read its leading "
            "digits, or 0 without any); write a number, e.g. -m P.5,10, -m ndcg.1=1,2=3 or "
            "-m rbp.p=0.8",
        ),
    ],
)
def test_a_cutoff_that_is_a_number_but_no_integer_is_named_so(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], measure: str, message: str
) -> None:
    out, err = trec_eval(capsys, "-m", measure, *files, status=2)
    assert (out, err) == ([], f"irm: error: {message}\n")
