"""The direction of a metric: every place that reads "better" reads the metric's
declaration (``Metric.higher_is_better``), carried by ``compare``'s result in its
``higher_is_better`` column: wins and losses, the report's markers and bold (text,
Markdown, LaTeX, HTML), the delta plot, and the fusion optimiser's objective (API and
``irm fuse``). Worked by hand on a prediction metric (rmse, per user) beside a
higher-is-better one, and on unjudged@1, a share of the judgments' completeness that
no system is better at (no direction, as num_nonrel_judged_ret), beside P@1."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.report import render_report
from polars_irmetrics.metrics.registry import list_metrics
from tests.test_report import _Cells

from .helpers import irm_in_process

QUERIES = [f"q{i}" for i in range(1, 9)]


def _frames(frames: dict[str, pl.DataFrame], frame_kind: str) -> dict[str, Any]:
    return {k: v.lazy() if frame_kind == "LazyFrame" else v for k, v in frames.items()}


@pytest.fixture
def ranking(frame_kind: str) -> tuple[dict[str, Any], pl.DataFrame]:
    """Eight queries, each with a relevant ``r`` and a judged non-relevant ``j``. ``a``
    puts ``r`` first everywhere (P@1 = 1, unjudged@1 = 0); ``b`` puts an unjudged ``u``
    first on seven queries (P@1 = 1/8, unjudged@1 = 7/8): ``b`` is worse on P@1, and
    on unjudged@1 neither better nor worse (the pool judged less of it)."""
    qrels = pl.DataFrame(
        {"query_id": QUERIES * 2, "doc_id": ["r"] * 8 + ["j"] * 8, "relevance": [1] * 8 + [0] * 8}
    )
    a = pl.DataFrame({"query_id": QUERIES, "doc_id": "r", "rank": 1})
    b = pl.DataFrame({"query_id": QUERIES, "doc_id": ["u"] * 7 + ["r"], "rank": 1})
    return _frames({"a": a, "b": b}, frame_kind), qrels


def test_wins_and_losses_follow_the_direction(
    ranking: tuple[dict[str, Any], pl.DataFrame],
) -> None:
    runs, qrels = ranking
    out = irm.compare(runs, ["P@1", "unjudged@1"], qrels=qrels, baseline="a")
    rows = out.select(
        "metric", "delta", "wins", "ties", "losses", "significant", "higher_is_better"
    ).rows()
    # deltas b - a: P@1 is -1 on q1..q7 and 0 on q8: seven losses of b. unjudged@1 is
    # +1 on q1..q7 and 0 on q8: a real difference (significant), but more unjudged
    # documents are neither a win nor a loss (no direction: wins, ties, losses null).
    assert rows == [
        ("P@1", -0.875, 0, 1, 7, True, True),
        ("unjudged@1", 0.875, None, None, None, True, None),
    ]
    per_query = irm.compare(runs, ["unjudged@1"], qrels=qrels, baseline="a", per_query=True)
    assert per_query["higher_is_better"].to_list() == [None] * 8
    title = plot.plot_deltas(per_query).axes[0].get_title()
    assert title == "b vs a (unjudged@1, no better direction): 7 above, 1 equal, 0 below"
    axis = plot.plot_ci(out, metric="unjudged@1").axes[0].get_xlabel()
    assert axis == "delta of unjudged@1 (no better direction)"
    assert plot.plot_ci(out, metric="P@1").axes[0].get_xlabel() == "delta of P@1"


def test_report_marks_and_bolds_the_better_system(
    ranking: tuple[dict[str, Any], pl.DataFrame],
) -> None:
    runs, qrels = ranking
    result = irm.compare(runs, ["P@1", "unjudged@1"], qrels=qrels, baseline="a")
    daggers = irm.report(result, markers="daggers")
    markdown = daggers.to_markdown().splitlines()
    # a is better on P@1: bold; b is significantly worse there: a double dagger.
    # unjudged@1 has no better direction: nothing bold, nothing marked, though b's
    # difference is significant
    assert markdown[2:4] == ["| a | **1.0000** | 0.0000 |", "| b | 0.1250‡ | 0.8750 |"]
    assert "no better direction for unjudged@1: nothing marked or bold" in markdown
    latex = daggers.to_latex().splitlines()
    assert latex[5:7] == [
        "a & \\textbf{1}&\\textbf{0000} & 0&0000 \\\\",
        "b & 0&1250$^{\\ddagger}$ & 0&8750 \\\\",
    ]
    cells = _Cells()
    cells.feed(daggers._repr_html_())
    assert [row[0] for row in cells.rows] == ["a", "b"]
    assert sorted(cells.bold) == [(0, 1)]  # a's P@1 alone
    assert [row[2] for row in cells.rows] == ["0.0000", "0.8750"]
    # letters (every pair): a is significantly better than b on P@1 alone
    letters = str(irm.report(irm.compare(runs, ["P@1", "unjudged@1"], qrels=qrels)))
    assert [line.split() for line in letters.splitlines()[2:4]] == [
        ["a", "a", "1.0000ᵇ", "0.0000"],
        ["b", "b", "0.1250", "0.8750"],
    ]


def _predictions(frame_kind: str) -> dict[str, Any]:
    """Ten users, each with a positive and a negative row. ``A`` predicts 0.6 / 0.4
    (rmse 0.4, AUC 1 for every user); ``B`` predicts 0.9 / 0.1 (rmse 0.1, AUC 1) on
    u1..u9 and 0.5 / 0.5 on u10 (rmse 0.5, AUC 0.5)."""
    users = [f"u{i:02d}" for i in range(1, 11) for _ in range(2)]
    label = [1, 0] * 10
    a = pl.DataFrame({"user": users, "clicked": label, "p": [0.6, 0.4] * 10})
    b = pl.DataFrame({"user": users, "clicked": label, "p": [0.9, 0.1] * 9 + [0.5, 0.5]})
    return _frames({"A": a, "B": b}, frame_kind)


def test_prediction_metrics_compare_and_report_by_direction(frame_kind: str) -> None:
    models = _predictions(frame_kind)
    kw: dict[str, Any] = {"label": "clicked", "prediction": "p", "query_id": "user"}
    result = irm.compare(models, ["rmse", "auc"], baseline="A", **kw)
    rows = {r["metric"]: r for r in result.iter_rows(named=True)}
    # rmse of B - A: 0.1 - 0.4 = -0.3 on u01..u09 (B better: a lower error), 0.5 - 0.4
    # = +0.1 on u10; mean (9 * 0.1 + 0.5) / 10 = 0.14 against 0.4
    rmse = rows["rmse"]
    assert (rmse["wins"], rmse["ties"], rmse["losses"]) == (9, 0, 1)
    assert rmse["mean"] == pytest.approx(0.14, abs=1e-12)
    assert rmse["baseline_mean"] == pytest.approx(0.4, abs=1e-12)
    assert rmse["significant"]
    assert not rmse["higher_is_better"]
    # auc of B - A: 0 on u01..u09, 0.5 - 1 on u10: one loss, not significant
    auc = rows["auc"]
    assert (auc["wins"], auc["ties"], auc["losses"]) == (0, 9, 1)
    assert auc["mean"] == pytest.approx(0.95)
    assert auc["higher_is_better"]
    assert not auc["significant"]
    markdown = irm.report(result, markers="daggers").to_markdown().splitlines()
    # B's rmse is the lowest (bold) and significantly better (dagger); A's AUC is bold
    assert markdown[2] == "| A | 0.4000 | **1.0000** |"
    assert markdown[3] == "| B | **0.1400**† | 0.9500 |"
    letters = render_report(irm.compare(models, ["rmse", "auc"], **kw), "markdown")
    assert letters.splitlines()[2:4] == [
        "| A | 0.4000 | **1.0000** |",
        "| B | **0.1400**ᵃ | 0.9500 |",
    ]


def test_tukey_result_carries_the_direction(frame_kind: str) -> None:
    kw: dict[str, Any] = {"label": "clicked", "prediction": "p", "query_id": "user"}
    out = irm.tukey_hsd(_predictions(frame_kind), ["rmse", "auc"], **kw)
    assert out.select("metric", "higher_is_better").rows() == [("rmse", False), ("auc", True)]
    table = render_report(out, "markdown").splitlines()
    assert table[3] == "| B | **0.1400**ᵃ | 0.9500 |"


def test_a_frame_without_the_direction_is_refused() -> None:
    """The report never guesses a direction from a metric's name: a frame built by hand
    names it, or is refused."""
    result = pl.DataFrame({
        "metric": ["logloss"], "system": ["b"], "baseline": ["a"], "mean": [0.2],
        "baseline_mean": [0.3], "delta": [-0.1], "significant": [True],
    })  # fmt: skip
    message = (
        "column 'higher_is_better' (each metric's direction) is not in the frame; pass the "
        "result of irm.compare, or add the column (True where a higher value is better, "
        "False for an error such as logloss, null where neither is)"
    )
    with pytest.raises(irm.ColumnNotFoundError, match=re.escape(message)):
        irm.report(result)
    given = result.with_columns(higher_is_better=pl.lit(False))
    assert "| b | **0.2000**ᵃ |" in render_report(given, "markdown")
    both = pl.concat([given, given.with_columns(higher_is_better=pl.lit(True))])
    with pytest.raises(irm.InvalidValueError, match="has higher_is_better False in one row"):
        irm.report(both)


def _fusion_runs() -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    """``bm25`` ranks a, b, c; ``dense`` b, c, a. Only ``b`` is judged. After min-max,
    with weights (w, 1 - w): a scores w, b 0.5 w + (1 - w), c 0.5 (1 - w); b is on top
    for w <= 0.5 (at w = 2/3 a ties b), a above it for w = 0.75 and 1."""
    docs = {"query_id": "q1", "doc_id": ["a", "b", "c"]}
    bm25 = pl.DataFrame({**docs, "score": [3.0, 2.0, 1.0]})
    dense = pl.DataFrame({**docs, "score": [0.1, 0.9, 0.5]})
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [0]})
    return {"bm25": bm25, "dense": dense}, qrels


def test_optimize_fusion_refuses_more_than_one_metric(frame_kind: str) -> None:
    runs, qrels = _fusion_runs()
    message = (
        "metric='P@1..2' names 2 metrics; optimize_fusion optimises one (e.g. metric='ndcg@10')"
    )
    with pytest.raises(irm.MetricParameterError, match=re.escape(message)):
        irm.optimize_fusion(_frames(runs, frame_kind), "P@1..2", qrels=qrels)


def test_irm_fuse_optimize_refuses_a_share_of_judged_documents(tmp_path: Path) -> None:
    """unjudged@1 (0 where b, the one judged document, is on top) says how much of the
    fused ranking the pool judged, not how good it is: no weight is the best for it."""
    runs, _ = _fusion_runs()
    paths = []
    for name, frame in runs.items():
        path = tmp_path / f"{name}.run"
        irm.write_trec_run(frame, path, run_id=name)
        paths.append(str(path))
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("q1 0 b 0\n")
    command = ["fuse", *paths, "--optimize"]
    command += ["--qrels", str(qrels_path), "--metric", "unjudged@1", "--step", "0.25"]
    done = irm_in_process(*command)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: --metric unjudged@1 has no better direction (neither a higher nor a "
        "lower value is better), so there is no best weight to find; optimize_fusion "
        "maximises or minimises one metric (e.g. --metric ndcg@10)\n"
    )


def test_irm_compare_reads_the_direction(tmp_path: Path) -> None:
    qrels = "".join(f"{q} 0 r 1\n{q} 0 j 0\n" for q in QUERIES)
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "a.txt").write_text("".join(f"{q} Q0 r 1 1.0 a\n" for q in QUERIES))
    b = [f"{q} Q0 {'u' if i < 7 else 'r'} 1 1.0 b\n" for i, q in enumerate(QUERIES)]
    (tmp_path / "b.txt").write_text("".join(b))
    command = ["compare", "--qrels", "qrels.txt"]
    command += ["a.txt", "b.txt", "--baseline", "a", "-m", "P@1", "-m", "unjudged@1"]
    done = irm_in_process(*command, "--markers", "daggers", "--format", "markdown", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2:4] == [
        "| a | **1.0000** | 0.0000 |",
        "| b | 0.1250‡ | 0.8750 |",
    ]
    done = irm_in_process(*command, "--format", "csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = pl.read_csv(done.stdout.encode()).select(
        "metric", "wins", "ties", "losses", "higher_is_better"
    )
    assert rows.rows() == [("P@1", 0, 1, 7, True), ("unjudged@1", None, None, None, None)]


def _calibrated(frame_kind: str) -> dict[str, Any]:
    """Eight users, a positive and a negative row each. ``A`` predicts 0.5 / 0.5:
    calibration (0.5 + 0.5) / 1 = 1 on every user, calibrated. ``B`` predicts 0.3 / 0.2
    on u1..u4 (calibration 0.5) and 0.2 / 0.2 on u5..u8 (0.4): mean 0.45, under-predicting.
    AUC: A 0.5 everywhere (a tie); B 1 on u1..u4, 0.5 on u5..u8."""
    users = [f"u{i}" for i in range(1, 9) for _ in range(2)]
    label = [1, 0] * 8
    a = pl.DataFrame({"user": users, "clicked": label, "p": [0.5] * 16})
    b = pl.DataFrame({"user": users, "clicked": label, "p": [0.3, 0.2] * 4 + [0.2] * 8})
    return _frames({"A": a, "B": b}, frame_kind)


def test_a_metric_without_direction_has_no_winner(frame_kind: str) -> None:
    """calibration declares no better direction (1 is calibrated): B's 0.45 is not
    better than A's 1.0 for being lower, nor worse for it. compare gives the delta and
    the test, but no wins, ties or losses; the report marks and bolds nothing for it."""
    models = _calibrated(frame_kind)
    kw: dict[str, Any] = {"label": "clicked", "prediction": "p", "query_id": "user"}
    result = irm.compare(models, ["calibration", "auc"], baseline="A", **kw)
    rows = {r["metric"]: r for r in result.iter_rows(named=True)}
    cal = rows["calibration"]
    assert cal["mean"] == pytest.approx(0.45, abs=1e-12)
    assert cal["baseline_mean"] == pytest.approx(1.0, abs=1e-12)
    assert cal["delta"] == pytest.approx(-0.55, abs=1e-12)  # (4 * -0.5 + 4 * -0.6) / 8
    assert cal["significant"]  # a real difference, in no better direction
    assert (cal["wins"], cal["ties"], cal["losses"], cal["higher_is_better"]) == (
        None, None, None, None,
    )  # fmt: skip
    auc = rows["auc"]  # B - A: +0.5 on u1..u4, 0 on u5..u8
    assert (auc["wins"], auc["ties"], auc["losses"], auc["higher_is_better"]) == (4, 4, 0, True)
    assert result.schema["higher_is_better"] == pl.Boolean
    assert result.schema["wins"] == pl.Int64
    per_query = irm.compare(models, ["calibration"], baseline="A", per_query=True, **kw)
    assert per_query["higher_is_better"].to_list() == [None] * 8
    assert per_query.schema["higher_is_better"] == pl.Boolean
    title = plot.plot_deltas(per_query).axes[0].get_title()
    assert title == "B vs A (calibration, no better direction): 0 above, 0 equal, 8 below"
    axis = plot.plot_ci(result, metric="calibration").axes[0].get_xlabel()
    assert axis == "delta of calibration (no better direction)"

    daggers = irm.report(result, markers="daggers")
    markdown = daggers.to_markdown().splitlines()
    # B's AUC 0.75 is bold (and significantly better: the t-test of 4 * 0.5, 4 * 0)
    assert markdown[2:4] == ["| A | 1.0000 | 0.5000 |", "| B | 0.4500 | **0.7500**† |"]
    assert "no better direction for calibration: nothing marked or bold" in markdown
    latex = daggers.to_latex().splitlines()
    assert latex[5:7] == [
        "A & 1&0000 & 0&5000 \\\\",
        "B & 0&4500 & \\textbf{0}&\\textbf{7500}$^{\\dagger}$ \\\\",
    ]
    cells = _Cells()
    cells.feed(daggers._repr_html_())
    assert sorted(cells.bold) == [(1, 2)]  # B's AUC only
    assert [row[1] for row in cells.rows] == ["1.0000", "0.4500"]
    letters = str(irm.report(irm.compare(models, ["calibration", "auc"], **kw)))
    assert [line.split() for line in letters.splitlines()[2:4]] == [
        ["a", "A", "1.0000", "0.5000"],
        ["b", "B", "0.4500", "0.7500ᵃ"],
    ]
    tukey = render_report(irm.tukey_hsd(models, ["calibration"], **kw), "markdown")
    assert tukey.splitlines()[2:4] == ["| A | 1.0000 |", "| B | 0.4500 |"]


def _counts(frame_kind: str) -> tuple[dict[str, Any], pl.DataFrame]:
    """Two queries, each with one relevant ``r`` (grade 1) and a judged ``j`` (grade 0).
    ``a`` retrieves r; ``b`` retrieves r, x, y on q1 and r on q2."""
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["r", "j"] * 2, "relevance": [1, 0] * 2}
    )
    a = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": "r", "rank": 1})
    b = pl.DataFrame(
        {"query_id": ["q1"] * 3 + ["q2"], "doc_id": ["r", "x", "y", "r"], "rank": [1, 2, 3, 1]}
    )
    return _frames({"a": a, "b": b}, frame_kind), qrels


def test_counts_of_the_input_have_no_direction(frame_kind: str) -> None:
    """num_ret, num_rel, idcg and num_q describe the input, not its quality: b retrieves
    more (num_ret 3 and 1 against 1 and 1: delta (2 + 0) / 2 = 1), which is neither a
    win nor a loss; num_rel (1) and idcg (1 / log2(2) = 1) are the judgments' own."""
    runs, qrels = _counts(frame_kind)
    metrics = ["num_ret", "num_rel", "idcg", "num_rel_ret"]
    out = irm.compare(runs, metrics, qrels=qrels, baseline="a", test="randomization")
    rows = out.select("metric", "delta", "wins", "ties", "losses", "higher_is_better").rows()
    assert rows == [
        ("num_ret", 1.0, None, None, None, None),
        ("num_rel", 0.0, None, None, None, None),
        ("idcg", 0.0, None, None, None, None),
        ("num_rel_ret", 0.0, 0, 2, 0, True),
    ]


def test_every_direction_is_declared_on_purpose() -> None:
    """The audit of every metric's direction, pinned: what is lower-is-better and what
    has no better direction (every other metric is higher-is-better)."""
    declared = {m.name: m.higher_is_better for m in list_metrics()}
    assert sorted(n for n, d in declared.items() if d is None) == [
        "calibration", "idcg", "intersection", "judged", "num_nonrel_judged_ret", "num_q",
        "num_rel", "num_ret", "prefs_num_prefs_poss", "rbp_residual", "trec_rbp_resid",
        "unexpectedness", "unjudged",
    ]  # fmt: skip
    assert sorted(n for n, d in declared.items() if d is False) == [
        "abandonment", "average_popularity", "brier", "ece", "ee_disparity", "ee_loss",
        "gini_index", "item_mad", "logloss", "mae",
        "mean_click_position", "median_click_position", "mse", "ne",
        "pop_reo", "pop_rsp", "rkl", "rmse", "rnd",
        "rrd",
        "time_to_first_click",
        "user_mad",
    ]  # fmt: skip


# calibration (no direction either) is refused first as no ranking metric (round 11)
# the judgments' completeness (judged, unjudged, the rbp residuals): no direction either
@pytest.mark.parametrize(
    "metric", ["num_ret", "judged@1", "unjudged@1", "rbp_residual", "trec_rbp_resid"]
)
def test_optimize_fusion_refuses_a_metric_without_direction(frame_kind: str, metric: str) -> None:
    runs, qrels = _fusion_runs()
    message = (
        f"metric={metric!r} has no better direction (neither a higher nor a lower value is "
        "better), so there is no best weight to find; optimize_fusion maximises or "
        "minimises one metric (e.g. metric='ndcg@10')"
    )
    with pytest.raises(irm.MetricParameterError, match=re.escape(message)):
        irm.optimize_fusion(_frames(runs, frame_kind), metric, qrels=qrels, step=0.25)


def test_judged_non_relevant_documents_are_a_count_without_direction(frame_kind: str) -> None:
    """a lists the relevant r, then an unjudged x; b lists r, then the judged
    non-relevant j. Neither is the better system (P@2 = 1/2 for both): b's
    num_nonrel_judged_ret of 1 against a's 0 on each query (delta (1 + 1) / 2 = 1) says
    how the pool judged its second document, not that it ranked worse."""
    _, qrels = _counts(frame_kind)
    queries = ["q1", "q1", "q2", "q2"]
    a = pl.DataFrame({"query_id": queries, "doc_id": ["r", "x"] * 2, "rank": [1, 2] * 2})
    b = pl.DataFrame({"query_id": queries, "doc_id": ["r", "j"] * 2, "rank": [1, 2] * 2})
    runs = _frames({"a": a, "b": b}, frame_kind)
    out = irm.compare(runs, ["num_nonrel_judged_ret", "P@2"], qrels=qrels, baseline="a")
    rows = out.select("metric", "delta", "wins", "ties", "losses", "higher_is_better").rows()
    assert rows == [
        ("num_nonrel_judged_ret", 1.0, None, None, None, None),
        ("P@2", 0.0, 0, 2, 0, True),
    ]
    shown = irm.report(out, markers="daggers").to_markdown()
    assert "no better direction for num_nonrel_judged_ret: nothing marked or bold" in shown
