"""Round 15 of the door's joints: what a prober found, pinned."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.comparison.report import render_report

from .helpers import irm_in_process

# --- a query without a judgment: null in the expressions, as evaluate leaves it out ----

#: A run full-joined with judgments that lack q2 (every label of q2 null) and judge q3's
#: only document -1 (a judgment: the query stays).
UNJUDGED_QUERY = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2", "q3"],
        "doc_id": ["a", "b", "z", "a", "c", "a"],
        "rank": [1, 2, None, 1, 2, 1],
        "relevance": [1, None, 1, None, None, -1],
    }
)

EXPRESSIONS = [
    ("P@2", irm.precision(k=2)),
    ("ndcg@2", irm.ndcg(k=2)),
    ("map", irm.map()),
    ("num_ret", irm.num_ret()),
    ("unjudged@2", irm.unjudged(k=2)),
    ("rbp_residual", irm.rbp_residual()),
]


@pytest.mark.parametrize(("name", "expr"), EXPRESSIONS, ids=[n for n, _ in EXPRESSIONS])
def test_a_group_without_a_judgment_is_null_as_evaluate_leaves_it_out(
    name: str, expr: pl.Expr
) -> None:
    by_expression = UNJUDGED_QUERY.group_by("query_id").agg(expr.alias(name)).sort("query_id")
    # q2 was 0 (1.0 for unjudged@2 and rbp_residual): a query nobody judged scored
    assert by_expression.filter(pl.col("query_id") == "q2")[name].to_list() == [None]
    by_evaluate = irm.evaluate(UNJUDGED_QUERY, [name], per_query=True).sort("query_id")
    assert_frame_equal(
        by_expression.drop_nulls(name), by_evaluate, check_dtypes=False, check_exact=True
    )


# --- compare: two spellings of one metric, counted twice in the correction's family ----

QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "z"], "relevance": [1, 1, 1]}
)
RUN_A = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["n", "y", "z"], "rank": [1, 1, 1]}
)
RUN_B = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "n"], "rank": [1, 1, 1]}
)


def _twice(first: str, second: str, name: str, correction: str = "holm") -> str:
    return (
        f"metrics {first!r} and {second!r} are one metric, {name!r}, listed twice: compare "
        "would test it twice and count both tests in the family that "
        f"correction={correction!r} adjusts with correction_scope='all', raising every "
        "adjusted p-value; list it once"
    )


TWICE = [
    (["P@1", "P_1"], {}, _twice("P@1", "P_1", "precision@1")),
    (["map", "ndcg@1", "ap"], {}, _twice("map", "ap", "map")),
    (
        ["ndcg@1", "ndcg(gain='linear')@1"],
        {"correction": "bonferroni"},
        _twice("ndcg@1", "ndcg(gain='linear')@1", "ndcg@1", "bonferroni"),
    ),
]


@pytest.mark.parametrize(("metrics", "options", "message"), TWICE)
def test_compare_refuses_two_spellings_of_one_metric_in_one_family(
    metrics: list[str], options: dict[str, str], message: str
) -> None:
    runs = {"a": RUN_A, "b": RUN_B}
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.compare(runs, metrics, qrels=QRELS, baseline="a", **options)
    # a LazyFrame's comparison refuses it when called, not at collect()
    long = pl.concat(
        [RUN_A.with_columns(system=pl.lit("a")), RUN_B.with_columns(system=pl.lit("b"))]
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        long.lazy().irm.compare(metrics, qrels=QRELS, baseline="a", **options)


@pytest.mark.parametrize(
    "options",
    [{"correction_scope": "metric"}, {"correction": None}, {"per_query": True}],
    ids=["per metric", "no correction", "per query"],
)
def test_two_spellings_change_no_number_outside_one_family(options: dict[str, object]) -> None:
    runs = {"a": RUN_A, "b": RUN_B}
    out = irm.compare(runs, ["P@1", "P_1"], qrels=QRELS, baseline="a", **options)
    assert out["metric"].unique(maintain_order=True).to_list() == ["P@1", "P_1"]


def test_irm_compare_refuses_two_spellings_in_its_flags(tmp_path: Path) -> None:
    for name, frame in (("a.parquet", RUN_A), ("b.parquet", RUN_B), ("qrels.parquet", QRELS)):
        frame.write_parquet(tmp_path / name)
    args = ("compare", "a.parquet", "b.parquet", "--qrels", "qrels.parquet")
    done = irm_in_process(*args, "-m", "P@1", "-m", "P_1", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: metrics 'P@1' and 'P_1' are one metric, 'precision@1', listed twice: "
        "compare would test it twice and count both tests in the family that --correction "
        "holm adjusts with --correction-scope all, raising every adjusted p-value; list it "
        "once\n"
    )


# --- irm: an option refused as unread is no fault of the judgments' file ---------------

_UNREAD_DEPTH = (
    "irm: error: --depth 5 is not read by metric 'num_rel': a count of the judgments or of "
    "the queries (num_rel, idcg, num_q, prefs_num_prefs_poss) reads no ranking, RecTools' "
    "covered_users@k reads the whole run, and only the metrics of a ranking (P, ndcg, map, "
    "num_ret...) read the documents within --depth; drop --depth (it would change nothing), "
    "or evaluate a metric of the ranking\n"
)


@pytest.mark.parametrize(
    "command",
    [("evaluate", "a.parquet"), ("compare", "a.parquet", "b.parquet")],
    ids=["evaluate", "compare"],
)
def test_an_unread_option_is_not_led_by_the_qrels_file(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # the reason's words 'a count of the judgments' led the line with 'qrels.parquet: '
    for name, frame in (("a.parquet", RUN_A), ("b.parquet", RUN_B), ("qrels.parquet", QRELS)):
        frame.write_parquet(tmp_path / name)
    args = (*command, "--qrels", "qrels.parquet", "-m", "num_rel", "--depth", "5")
    done = irm_in_process(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", _UNREAD_DEPTH)


# --- irm fuse: its run files are fused, not scored as systems ---------------------------

_SYSTEMS_HINT = " (several run files were given: each is scored as a system"


@pytest.mark.parametrize(
    ("command", "hinted"),
    [
        (("fuse", "a.parquet", "b.parquet", "-o", "fused.parquet"), False),
        (("fuse", "a.parquet", "b.parquet", "--qrels", "qrels.parquet", "--optimize"), False),
        (("compare", "a.parquet", "b.parquet", "--qrels", "qrels.parquet", "-m", "P@1"), True),
    ],
    ids=["fuse", "fuse --optimize", "compare"],
)
def test_the_several_files_hint_only_where_each_file_is_a_system(
    tmp_path: Path, command: tuple[str, ...], hinted: bool
) -> None:
    # b spells its query ids otherwise: a coverage warning names it (scores: irm fuse
    # reads a score column)
    scored = RUN_A.with_columns(score=-pl.col("rank").cast(pl.Float64)).drop("rank")
    spelt = scored.with_columns(pl.col("query_id").str.to_uppercase())
    for name, frame in (("a.parquet", scored), ("b.parquet", spelt), ("qrels.parquet", QRELS)):
        frame.write_parquet(tmp_path / name)
    done = irm_in_process(*command, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines
    assert all(line.startswith("irm: warning: ") for line in lines)
    assert [_SYSTEMS_HINT in line for line in lines] == [hinted] * len(lines)


# --- a group key refused names the keyword it was given by ------------------------------

SCORED = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["x", "n", "y", "n"],
        "score": [2.0, 1.0, 2.0, 1.0],
        "run": ["a", "a", "a", "a"],
    }
)
LONG = pl.concat([SCORED, SCORED.with_columns(run=pl.lit("b"), score=-pl.col("score"))])

KEYS = [
    (
        ["P@1"],
        {"systems": "score"},
        "systems=['score'] names 'score', which is the score column; group by another "
        "column, or pass the score column's name as score=",
    ),
    (
        ["P@1"],
        {"systems": "run", "by": "score"},
        "by=['score'] names 'score', which is the score column; group by another column, "
        "or pass the score column's name as score=",
    ),
    (
        ["ee_loss"],
        {"systems": "score", "groups": pl.DataFrame({"doc_id": ["x"], "group": ["g"]})},
        "systems=['score'] names 'score', which is the score column; group by another "
        "column, or pass the score column's name as score=",
    ),
]


@pytest.mark.parametrize(("metrics", "options", "message"), KEYS)
def test_evaluate_names_the_keyword_of_a_refused_key(
    metrics: list[str], options: dict[str, object], message: str
) -> None:
    # systems= was named by= (and by= listed the systems' keys too)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(LONG, metrics, qrels=QRELS, **options)


@pytest.mark.parametrize("column", ["query_id", "doc_id", "score"])
def test_compare_names_system_for_a_system_column_of_another_role(column: str) -> None:
    message = (
        f"system={column!r} names the {column} column; system= names the column of each "
        f"row's system: pass that column's name as system=, or the {column} column's name "
        f"as {column}="
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare(LONG, "P@1", qrels=QRELS, system=column)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.tukey_hsd(LONG, "P@1", qrels=QRELS, system=column)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        LONG.lazy().irm.compare("P@1", qrels=QRELS, system=column)  # at the call


# --- compare: a ranking metric of the interaction history, a table compare does not take


@pytest.mark.parametrize("metric", ["pop_rsp@1", "epc@1", "reco_accuracy@1", "mcc@1"])
def test_compare_refuses_a_metric_of_the_history_as_a_table_it_does_not_take(
    metric: str,
) -> None:
    # it said "pass interactions=... to irm.evaluate", and compare then refused
    # interactions= as an unknown option
    message = (
        f"metric {metric!r} is computed from a run, judgments and the interaction history, "
        "which irm.compare does not take (it pairs the per-query values of runs and "
        "judgments, or of predictions): evaluate it with irm.evaluate(table, qrels=..., "
        "interactions=...) for each system"
    )
    runs = {"a": RUN_A, "b": RUN_B}
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.compare(runs, ["P@1", metric], qrels=QRELS, baseline="a")


# --- irm: a damaged JSON line is named with its file and line ---------------------------

_RUN_JSONL = '{"query_id": "q1", "doc_id": "x", "score": 1.0}\n{"query_id": "q1", "doc_id":\n'
_QRELS_JSONL = '{"query_id": "q1", "doc_id": "x", "relevance": 1}\n\n["q1", "y", 1]\n'
_LOG_JSONL = (
    '{"user_id": "u1", "arm": "A", "session_id": "s1", "position": 1, "clicked": 1}\n'
    '{"user_id": "u2", "arm": "B",\n'
)
_RUN_LINE = (
    'irm: error: run.jsonl, line 2: not a JSON object: \'{"query_id": "q1", "doc_id":\'; '
    "fix or drop the line\n"
)
_QRELS_LINE = (
    'irm: error: qrels.jsonl, line 3: not a JSON object: \'["q1", "y", 1]\'; fix or drop '
    "the line\n"
)
_LOG_LINE = (
    'irm: error: log.jsonl, line 2: not a JSON object: \'{"user_id": "u2", "arm": "B",\'; '
    "fix or drop the line\n"
)
DAMAGED_JSON = [
    (("evaluate", "run.jsonl", "--qrels", "qrels.txt", "-m", "P@1"), _RUN_LINE),
    (("compare", "good.txt", "run.jsonl", "--qrels", "qrels.txt", "-m", "P@1"), _RUN_LINE),
    (("fuse", "good.txt", "run.jsonl", "-o", "fused.parquet"), _RUN_LINE),
    (("evaluate", "good.txt", "--qrels", "qrels.jsonl", "-m", "P@1"), _QRELS_LINE),
    (("ab", "log.jsonl", "-m", "ctr"), _LOG_LINE),
    (("ab", "log.jsonl"), _LOG_LINE),  # the default metrics read the columns first
]


@pytest.mark.parametrize(("command", "line"), DAMAGED_JSON)
def test_a_damaged_json_line_is_named_with_its_line(
    tmp_path: Path, command: tuple[str, ...], line: str
) -> None:
    # it was "FILE: its columns cannot be read (a damaged file, or files of a pattern or
    # folder that disagree)", no line
    (tmp_path / "run.jsonl").write_text(_RUN_JSONL)
    (tmp_path / "qrels.jsonl").write_text(_QRELS_JSONL)
    (tmp_path / "log.jsonl").write_text(_LOG_JSONL)
    (tmp_path / "good.txt").write_text("q1 Q0 x 1 1.0 good\n")
    (tmp_path / "qrels.txt").write_text("q1 0 x 1\n")
    done = irm_in_process(*command, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line)


# --- report: compare's per-query values named as such ----------------------------------


def test_a_report_of_the_per_query_values_says_so() -> None:
    # it said "pass the result of irm.compare", which the frame is
    per_query = irm.compare({"a": RUN_A, "b": RUN_B}, "P@1", qrels=QRELS, per_query=True)
    message = (
        "column 'mean' is not in the frame, which holds per-query values (compare(..., "
        "per_query=True)); pass the result of irm.compare without per_query=True "
        "(irm.report takes the per-query values as per_query=, for its plots)"
    )
    with pytest.raises(irm.ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.report(per_query)
    with pytest.raises(irm.ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        render_report(per_query, "markdown")
