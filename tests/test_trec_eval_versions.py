"""``irm trec-eval`` against what trec_eval 10.0 and 9.0.8 printed, byte for byte.

The inputs and the expected outputs are in ``tests/data/trec_eval/``: the inputs were
generated, and the outputs printed by the two trec_eval binaries, by
``scripts/trec_eval_expected.py`` (see there to regenerate them). The Python API
(``iprec``'s and ``11pt_avg``'s rounding, :func:`evaluate_jg`, :func:`evaluate_prefs`)
is checked against the same outputs, on DataFrame and LazyFrame input.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.door.jg import evaluate_jg
from polars_irmetrics.door.prefs import evaluate_prefs
from polars_irmetrics.io.prefs import read_trec_prefs, read_trec_qrels_jg, read_trec_qrels_prefs
from polars_irmetrics.io.trec import read_trec_qrels, read_trec_run
from polars_irmetrics.metrics.scope import TableScope
from polars_irmetrics.offline.prefs import PREFS_MEASURES
from tests.conftest import Evaluate
from tests.helpers import property_settings
from tests.test_trec_eval_cmd import ref_iprec_lround

DATA = Path(__file__).parent / "data" / "trec_eval"
CASES: dict[str, dict[str, list]] = json.loads((DATA / "cases.json").read_text())  # type: ignore[type-arg]
RUNS = [
    pytest.param(name, version, id=f"{name}-v{version}")
    for name, case in CASES.items()
    for version in case["versions"]
]
MISSING_WARNING = (
    "irm trec-eval: warning: 1 judged query has no results in run.txt and is left out "
    "(trec_eval 10.0 stops there with exit status 4; -c scores them 0): q7\n"
)


@pytest.fixture
def in_data(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(DATA)
    return DATA


def irm_trec_eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["trec-eval", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --------------------------------------------------------------------------- CLI parity
@pytest.mark.parametrize(("name", "version"), RUNS)
def test_output_is_byte_identical(
    in_data: Path, capsys: pytest.CaptureFixture[str], name: str, version: int
) -> None:
    args = [str(a) for a in CASES[name]["args"]]
    status, out, _ = irm_trec_eval(capsys, "--trec-eval-version", str(version), *args)
    assert status == 0
    assert out == (DATA / f"{name}.v{version}.out").read_text()


def test_default_is_trec_eval_10(in_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(a) for a in CASES["all_trec_q"]["args"]]
    assert irm_trec_eval(capsys, *args)[1] == (DATA / "all_trec_q.v10.out").read_text()
    assert (DATA / "all_trec_q.v10.out").read_text() != (DATA / "all_trec_q.v9.out").read_text()


@pytest.mark.parametrize("version", ["9", "10"])
def test_judged_query_without_results_is_skipped_with_a_warning(
    in_data: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    # trec_eval 9.0.8 skips q7 silently, 10.0 exits with status 4: irm skips it and says so
    args = ["--trec-eval-version", version, "-q", "qrels_missing.txt", "run.txt"]
    status, out, err = irm_trec_eval(capsys, *args)
    assert status == 0
    assert err == MISSING_WARNING
    expected = (DATA / "warning_missing.v9.out").read_text()
    if version == "10":  # 10.0 rounds iprec_at_recall with lround: only those differ
        keep = [line for line in expected.splitlines() if not line.startswith("iprec")]
        assert [line for line in out.splitlines() if not line.startswith("iprec")] == keep
    else:
        assert out == expected


def test_zscore_undefined_is_named_on_stderr(
    in_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, err = irm_trec_eval(capsys, "-q", "-Z", "zscores.txt", "qrels.txt", "run.txt")
    assert "Znum_rel               \t301\t-1000000.0000\n" in out
    assert err.splitlines()[0] == (
        "irm trec-eval: warning: z-score undefined, printed -1000000: zscores.txt, line 110: "
        "query 301, measure num_rel: standard deviation 0 and value 11.0 is not the mean 2.3829"
    )


def test_help_documents_the_version_switch(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["trec-eval", "-h"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--trec-eval-version {9,10}" in text
    assert "behave as trec_eval 10.0 (10, the default) or 9.0.8 (9)" in text


# --------------------------------------------------------------------------- bad input
BAD_INPUT = [
    pytest.param(
        {"prefs.bad": "q1 u s d1 2\nq1 u s d2\n"},
        ["-R", "prefs", "-m", "all_prefs", "prefs.bad", "run.txt"],
        "irm: error: prefs.bad, line 2: expected 5 whitespace-separated fields "
        "(query_id jg jsg doc_id rel_level), got 4: 'q1 u s d2'",
        id="prefs-fields",
    ),
    pytest.param(
        {"prefs.bad": "# c\nq1 u s d1 high\n"},
        ["-R", "prefs", "prefs.bad", "run.txt"],
        "irm: error: prefs.bad, line 2: rel_level 'high' is not a number: 'q1 u s d1 high'",
        id="prefs-level",
    ),
    pytest.param(
        {"prefs.bad": "q1 u s1 d1 2\nq1 u s1 d2 1\nq1 u s2 d2 2\nq1 u s2 d1 1\n"},
        ["-R", "prefs", "prefs.bad", "run.txt"],
        "irm: error: preferences of query q1, judgment group u are inconsistent: 'd1' and "
        "'d2' are each preferred to the other (directly or through other documents); a "
        "judgment group must be one consistent order: put conflicting judgments in "
        "different groups",
        id="prefs-inconsistent",
    ),
    pytest.param(
        {"jg.bad": "q1 alice d1 1\nq1 bob d2\n"},
        ["-R", "qrels_jg", "jg.bad", "run.txt"],
        "irm: error: jg.bad, line 2: expected 4 whitespace-separated fields "
        "(query_id jg doc_id relevance), got 3: 'q1 bob d2'",
        id="qrels_jg-fields",
    ),
    pytest.param(
        {"z.bad": "q1 map 0.2 0.1\n"},
        ["-Z", "z.bad", "-m", "map", "qrels.txt", "run.txt"],
        "irm: error: z.bad: no mean and standard deviation for query 301, measure map; add "
        "a line '301 map MEAN STDDEV'",
        id="zscores-missing",
    ),
    pytest.param(
        {"z.bad": "301 map 0.2 -1\n"},
        ["-Z", "z.bad", "-m", "map", "qrels.txt", "run.txt"],
        "irm: error: z.bad, line 1: standard deviation '-1' is negative: '301 map 0.2 -1'",
        id="zscores-negative",
    ),
    pytest.param(
        {},
        ["-R", "qrelz", "qrels.txt", "run.txt"],
        "irm: error: -R 'qrelz': unknown relevance format; choose one of qrels, prefs, "
        "qrels_prefs, qrels_jg",
        id="unknown-format",
    ),
    pytest.param(
        {},
        ["-R", "prefs", "-m", "map", "prefs.txt", "run.txt"],
        "irm: error: measure map needs -R qrels; -R prefs gives the preference measures "
        "(-m all_prefs)",
        id="measure-of-another-format",
    ),
    pytest.param(
        {},
        ["--trec-eval-version", "9", "-m", "rbp", "qrels.txt", "run.txt"],
        "irm: error: trec_eval measure 'rbp' is new in trec_eval 10.0; drop "
        "--trec-eval-version 9 to compute it",
        id="measure-new-in-10",
    ),
]


@pytest.mark.parametrize(("files", "args", "message"), BAD_INPUT)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    args: list[str],
    message: str,
) -> None:
    for name in ("qrels.txt", "run.txt", "prefs.txt"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    status, out, err = irm_trec_eval(capsys, *args)
    assert (status, out) == (2, "")
    assert err == message + "\n"


# --------------------------------------------------------------------------- the library
def _printed(name: str, version: int) -> dict[tuple[str, str], str]:
    """(measure, query) -> the value trec_eval printed."""
    out = {}
    for line in (DATA / f"{name}.v{version}.out").read_text().splitlines():
        measure, query, value = line.split()
        out[measure, query] = value
    return out


def _run() -> pl.DataFrame:
    return read_trec_run(DATA / "run.txt")


@pytest.mark.parametrize(("rounding", "version"), [("lround", 10), ("truncate", 9)])
def test_iprec_and_11pt_avg_rounding_match_each_version(
    evaluate: Evaluate, rounding: str, version: int
) -> None:
    levels = [0.1, 0.2, 0.5, 0.6, 0.9]
    metrics = [f"iprec(recall={x}, rounding='{rounding}')" for x in levels]
    metrics.append(f"11pt_avg(rounding='{rounding}')")
    qrels = read_trec_qrels(DATA / "qrels.txt").with_columns(pl.col("relevance").cast(pl.Int64))
    out = evaluate(_run(), metrics, qrels=qrels, per_query=True)
    printed = _printed("all_trec_q", version)
    for row in out.iter_rows(named=True):
        for x, metric in zip(levels, metrics, strict=False):
            assert f"{row[metric]:.4f}" == printed[f"iprec_at_recall_{x:.2f}", row["query_id"]]
        assert f"{row[metrics[-1]]:.4f}" == printed["11pt_avg", row["query_id"]]


def test_eleven_point_average_with_recall_levels(evaluate: Evaluate) -> None:
    qrels = read_trec_qrels(DATA / "qrels.txt").with_columns(pl.col("relevance").cast(pl.Int64))
    name = "11pt_avg(recalls='0.1,0.5,0.9', rounding='lround')"
    out = evaluate(_run(), [name], qrels=qrels, per_query=True)
    printed = _printed("meas_params", 10)
    for row in out.iter_rows(named=True):
        assert f"{row[name]:.4f}" == printed["11pt_avg_.1,.5,.9", row["query_id"]]


def test_rounding_parts_where_trec_eval_versions_part() -> None:
    # R = 2, relevant at ranks 1 and 4: recall 0.6 needs floor(1.2 + 0.9) = 2 relevant
    # documents in 9.0.x (best precision from rank 4 on: 2/4) and lround(1.2) = 1 in 10.0
    df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 0, 0, 1]})
    row = df.select(irm.iprec(0.6), irm.iprec(0.6, rounding="lround")).row(0)
    assert row == (2 / 4, 1 / 1)


@given(
    labels=st.lists(st.integers(-1, 3), min_size=1, max_size=25),
    missing=st.integers(0, 5),
    recall=st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.3, 0.5, 0.55, 0.7, 0.75, 0.9, 1.0]),
)
@property_settings(60)
def test_lround_iprec_agrees_with_trec_eval_10_loop(
    labels: list[int], missing: int, recall: float
) -> None:
    # ``missing`` relevant documents judged but never retrieved (rank null)
    ranks = [*range(1, len(labels) + 1), *([None] * missing)]
    df = pl.DataFrame({"rank": ranks, "relevance": [*labels, *([1] * missing)]})
    got = df.select(irm.iprec(recall, rounding="lround")).item()
    ranking: list[int | None] = list(labels)
    expected = ref_iprec_lround(ranking, [*labels, *([1] * missing)], 1, [recall])[0]
    assert math.isclose(got, expected, abs_tol=1e-12)


@pytest.mark.parametrize("lazy", [False, True])
def test_evaluate_jg_matches_trec_eval(lazy: bool) -> None:
    judgments = read_trec_qrels_jg(DATA / "qrels_jg.txt")
    run = _run()
    names = ["map_avgjg", "P_avgjg_5", "P_avgjg_10", "Rprec_mult_avgjg_0.20"]
    out = evaluate_jg(
        run.lazy() if lazy else run, names, qrels_jg=judgments.lazy() if lazy else judgments
    )
    assert isinstance(out, pl.LazyFrame) is lazy  # lazy in, lazy out
    out = out.lazy().collect()
    printed = _printed("qrels_jg", 10)
    assert out.height == 5
    for row in out.iter_rows(named=True):
        for name in names:
            assert f"{row[name]:.4f}" == printed[name, row["query_id"]]


@pytest.mark.parametrize(
    ("case", "reader"), [("prefs", read_trec_prefs), ("qrels_prefs", read_trec_qrels_prefs)]
)
@pytest.mark.parametrize("lazy", [False, True])
def test_evaluate_prefs_matches_trec_eval(case: str, reader: object, lazy: bool) -> None:
    source = "prefs.txt" if case == "prefs" else "qrels.txt"
    prefs = reader(DATA / source)
    run = _run()
    out = evaluate_prefs(run.lazy() if lazy else run, prefs=prefs.lazy() if lazy else prefs)
    assert isinstance(out, pl.LazyFrame) is lazy  # lazy in, lazy out
    out = out.lazy().collect()
    printed = _printed(case, 10)
    for row in out.iter_rows(named=True):
        for name in PREFS_MEASURES:
            value = row[name]
            text = str(value) if isinstance(value, int) else f"{value:.4f}"
            assert text == printed[name, row["query_id"]], (name, row["query_id"])


def test_trailing_fields_of_a_run_line_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.5 sys more junk here\nq1 Q0 d2 2 1.5 sys\n")
    assert read_trec_run(path).rows() == [("q1", "d1", 2.5, "sys"), ("q1", "d2", 1.5, "sys")]


def test_results_from_standard_input(
    in_data: Path, stdin: Callable[[bytes], None], capsys: pytest.CaptureFixture[str]
) -> None:
    stdin((DATA / "run.txt").read_bytes())
    status, out, _ = irm_trec_eval(capsys, "-q", "-m", "all_trec", "qrels.txt", "-")
    assert status == 0
    assert out == (DATA / "all_trec_q.v10.out").read_text()


def test_a_bad_line_on_standard_input_is_named(
    stdin: Callable[[bytes], None], capsys: pytest.CaptureFixture[str]
) -> None:
    stdin(b"q1 Q0 d1 1 x sys\n")
    status, out, err = irm_trec_eval(capsys, str(DATA / "qrels.txt"), "-")
    assert (status, out) == (2, "")
    assert err == ("irm: error: <stdin>, line 1: score 'x' is not a number: 'q1 Q0 d1 1 x sys'\n")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "prefs_simp",
            "metric 'prefs_simp' reads preference judgments: pass prefs=... to irm.evaluate",
        ),
        (
            "prefs_avgjg_Rnonrel",
            "metric 'prefs_avgjg_Rnonrel' reads preference judgments: pass prefs=... to "
            "irm.evaluate",
        ),
        (
            "P_avgjg_10",
            "metric 'P_avgjg_10' reads judgments with a judgment-group column: pass "
            "qrels_jg=... to irm.evaluate",
        ),
        (
            "rprec_mult_avgjg@0.2",
            "metric 'rprec_mult_avgjg@0.2' reads judgments with a judgment-group column: "
            "pass qrels_jg=... to irm.evaluate",
        ),
    ],
)
def test_evaluate_points_to_the_entry_point_of_other_tables(
    evaluate: Evaluate, name: str, message: str
) -> None:
    # the measures are registered (they parse) but read another table than evaluate's
    run = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]})
    assert irm.parse_metric(name).metric.reads[0] == "run"
    with pytest.raises(irm.MetricParameterError) as caught:
        evaluate(run, [name], qrels=qrels)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "prefs_pair",
            "preference measures read preference judgments (query_id, jg, jsg, doc_id, "
            "rel_level), not a judged table; compute them with "
            "irm.evaluate(run, metrics, prefs=irm.read_trec_prefs(path))",
        ),
        (
            "map_avgjg",
            "judgment-group measures average over the judgment groups of qrels with a jg "
            "column, not one judged table; compute them with "
            "irm.evaluate(run, metrics, qrels_jg=irm.read_trec_qrels_jg(path))",
        ),
    ],
)
def test_the_expression_of_another_tables_measure_names_its_entry_point(
    name: str, message: str
) -> None:
    # the expression over a judged table (the public expression API's scope)
    with pytest.raises(irm.MetricParameterError) as caught:
        irm.parse_metric(name).expr(TableScope("relevance", "rank"), 1.0)
    assert str(caught.value) == message


def test_registered_judgment_group_names_evaluate_as_trec_eval_spells_them() -> None:
    # canonical registry names give evaluate_jg the same values as trec_eval's spellings
    run = pl.DataFrame(
        {"query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"], "score": [3.0, 2.0, 1.0]}
    )
    qrels = pl.DataFrame(
        {
            "query_id": ["q1"] * 4,
            "jg": ["a", "a", "b", "b"],
            "doc_id": ["d1", "d3", "d2", "d3"],
            "relevance": [1, 1, 1, 0],
        }
    )
    trec = evaluate_jg(run, ["map_avgjg", "P_avgjg_2", "Rprec_mult_avgjg_0.5"], qrels_jg=qrels)
    names = [irm.parse_metric(n).name for n in trec.columns[1:]]
    assert names == ["map_avgjg", "precision_avgjg@2", "rprec_mult_avgjg(multiple=0.5)"]
    canonical = evaluate_jg(run, names, qrels_jg=qrels)
    # a: AP (1 + 2/3) / 2, P@2 1/2, c = floor(0.5 * 2 + 0.9) = 1: 1; b: AP 1/2, P@2 1/2, c = 1: 0
    assert trec.rows() == canonical.rows()
    assert trec.row(0)[1:] == pytest.approx(((5 / 6 + 1 / 2) / 2, 0.5, 0.5), abs=1e-15)
