"""Round 33: "better" read at every joint, with a real lower-is-better metric.

One table of surfaces, each called once on three systems that every metric orders
alike: ``B`` best, ``C`` next, ``A`` worst, in ``ee_loss`` (the expected-exposure loss,
lower is better: B's exposure is the ideal one, 0) and in ``ndcg@4`` (higher is better,
the control). A surface that read ``ee_loss`` higher-is-better would mark ``A`` best, or
count B's wins as losses; each row says what the surface marks.

Beside it (``tests/test_direction_round28.py`` checks the same readers on an invented
metric whose direction a parameter turns; ``optimize_fusion`` and ``irm fuse
--optimize`` take no real lower-is-better metric: every one reads a table besides the
run and its judgments, or predictions, and is refused there):

* ``tukey_hsd`` takes ``groups=`` and ``target=`` as ``compare`` does: it refused them
  (``unknown option groups=...``) while its own refusal of ``awrf`` without them told
  to pass ``groups=``; the exposure measures could not be grouped at all.
* ``plot_similarity_distribution`` names the direction on its axis, as the other plots
  do, and refuses a NaN or infinite value (a NaN drew a histogram titled ``mean nan``;
  an infinite one raised numpy's ``supplied range of [0.0, inf] is not finite``); a
  huge mean is printed in three significant digits, not three hundred.
* ``plot_ci`` refuses a NaN ``delta`` or bound: it was drawn as a whisker to the axis
  edge, a one-sided interval's, without a word.
* Which checks run does not depend on the metrics asked for: a repeated document, a NaN
  score and a null query id give the same error beside every metric list; with several
  systems (``systems=``, ``by=``, ``compare``), the exposure measures' checks name the
  query with its system, as the ranking metrics' do, and a repeated document's fix keeps
  the system column.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot

from .helpers import irm_in_process

LOWER, HIGHER = "ee_loss", "ndcg@4"
METRICS = [LOWER, HIGHER]
_Q = ["q1", "q2", "q3", "q4"]
#: r relevant everywhere, s on q1 and q2; r and s are group g1, x and y group g2
QRELS = pl.DataFrame(
    {"query_id": _Q * 2, "doc_id": ["r"] * 4 + ["s"] * 4, "relevance": [1] * 6 + [0] * 2}
)
GROUPS = pl.DataFrame({"doc_id": ["r", "s", "x", "y"], "group": ["g1", "g1", "g2", "g2"]})


def _run(orders: list[str]) -> pl.DataFrame:
    rows = [
        (q, d, i + 1) for q, order in zip(_Q, orders, strict=True) for i, d in enumerate(order)
    ]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "rank"], orient="row")


#: means (ee_loss, ndcg@4): A (0.7715, 0.5180), C (0.1895, 0.7898), B (0.0, 1.0)
RUNS = {
    "A": _run(["xyrs", "xyrs", "xysr", "yxrs"]),
    "C": _run(["xrys", "rxys", "xrsy", "rsxy"]),
    "B": _run(["rsxy", "rsxy", "rsxy", "rxsy"]),
}
_LONG = pl.concat([run.with_columns(system=pl.lit(name)) for name, run in RUNS.items()])
_TABLES: dict[str, Any] = {"qrels": QRELS, "groups": GROUPS}


def _compare(**options: Any) -> pl.DataFrame:
    return irm.compare(RUNS, METRICS, baseline="A", **_TABLES, **options)


def _per_query(metric: str) -> pl.DataFrame:
    frame = irm.evaluate(_LONG, METRICS, systems="system", per_query=True, **_TABLES)
    return frame.select("system", "query_id", metric)


def _row(markdown: str, system: str) -> list[str]:
    """The cells of ``system``'s row of a Markdown table."""
    (line,) = [x for x in markdown.splitlines() if x.startswith(f"| {system} |")]
    return [cell.strip() for cell in line.strip("|").split("|")][1:]


def _wins() -> list[tuple[object, ...]]:
    out = _compare().filter(pl.col("system") == "B")
    return out.select("wins", "ties", "losses").rows()


def _namespace(lazy: bool) -> list[tuple[object, ...]]:
    frame = _LONG.lazy() if lazy else _LONG
    out = frame.irm.compare(METRICS, system="system", baseline="A", **_TABLES)
    if isinstance(out, pl.LazyFrame):
        out = out.collect()
    return out.filter(pl.col("system") == "B").select("wins", "ties", "losses").rows()


def _report_markdown() -> list[str]:
    return _row(irm.report(_compare(), markers="daggers").to_markdown(), "B")


def _report_latex() -> list[str]:
    (line,) = [x for x in irm.report(_compare()).to_latex().splitlines() if x.startswith("B &")]
    return line.removesuffix(" \\\\").split(" & ")[1:]


def _tukey() -> list[str]:
    result = irm.tukey_hsd(RUNS, METRICS, **_TABLES)
    return _row(irm.report(result).to_markdown(), "B")


def _plot_ci() -> list[str]:
    result = _compare()
    return [plot.plot_ci(result, metric=m).axes[0].get_xlabel() for m in METRICS]


def _plot_deltas() -> list[str]:
    two = {"A": RUNS["A"], "B": RUNS["B"]}
    per_query = irm.compare(two, METRICS, baseline="A", per_query=True, **_TABLES)
    return [plot.plot_deltas(per_query, metric=m).axes[0].get_title() for m in METRICS]


def _plot_curves() -> list[str]:
    # one lower-is-better family with cutoffs (gini_index@k), one higher (ndcg@k)
    means = pl.DataFrame(
        {"system": ["A", "B"], "gini_index@1": [0.5, 0.2], "gini_index@2": [0.6, 0.3],
         "ndcg@1": [0.1, 0.2], "ndcg@2": [0.3, 0.4]}
    )  # fmt: skip
    return [axes.get_ylabel() for axes in plot.plot_metric_curves(means).axes]


def _plot_distribution() -> list[str]:
    return [
        plot.plot_similarity_distribution(_per_query(m), metric=m).axes[0].get_xlabel()
        for m in METRICS
    ]


def _agreement() -> tuple[object, ...]:
    out = irm.system_agreement(_per_query(LOWER), _per_query(HIGHER))
    return out.select("correlation", "swaps", "pairs").row(0)


def _swaps() -> str:
    return plot.plot_swaps(_per_query(LOWER), _per_query(HIGHER)).axes[0].get_title()


_LOG = pl.DataFrame(
    {
        "arm": ["A"] * 4 + ["B"] * 4,
        "user_id": ["a1", "a1", "a2", "a2", "b1", "b1", "b2", "b2"],
        "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
        "position": [1, 2] * 4,
        "clicked": [True, False, False, False, True, True, False, True],
    }
)


def _ab() -> list[tuple[object, ...]]:
    out = irm.ab_test(_LOG, ["abandonment", "ctr"])
    return out.select("metric", "delta", "higher_is_better").rows()


#: (surface, call, what it gives): B marked better in both metrics
SURFACES: list[tuple[str, Callable[[], object], object]] = [
    ("compare-wins", _wins, [(4, 0, 0), (4, 0, 0)]),
    ("namespace-DataFrame", lambda: _namespace(False), [(4, 0, 0), (4, 0, 0)]),
    ("namespace-LazyFrame", lambda: _namespace(True), [(4, 0, 0), (4, 0, 0)]),
    ("report-markdown", _report_markdown, ["**0.0000**†", "**1.0000**†"]),
    ("report-latex", _report_latex,
     ["\\textbf{0}&\\textbf{0000}$^{a}$", "\\textbf{1}&\\textbf{0000}$^{a}$"]),
    ("tukey-letters", _tukey, ["**0.0000**ᵃ", "**1.0000**ᵃ"]),
    ("plot-ci", _plot_ci, [f"delta of {LOWER} (lower is better)", f"delta of {HIGHER}"]),
    ("plot-deltas", _plot_deltas, [
        f"B vs A ({LOWER}, lower is better): 4 wins, 0 ties, 0 losses",
        f"B vs A ({HIGHER}): 4 wins, 0 ties, 0 losses",
    ]),
    ("plot-metric-curves", _plot_curves, ["gini_index@k (lower is better)", "ndcg@k"]),
    ("plot-distribution", _plot_distribution, [f"{LOWER} (lower is better)", HIGHER]),
    # read as declared the two order the systems alike (read alike, opposite: -1, 3)
    ("system-agreement", _agreement, (1.0, 0, 3)),
    ("plot-swaps", _swaps, "system orderings: 0 of 3 pairs swapped"),
    # a negative delta of abandonment is B's improvement, as ctr's positive one
    ("ab-test", _ab, [("abandonment", -0.5, False), ("ctr", 0.5, True)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "marked"), [s[1:] for s in SURFACES], ids=[s[0] for s in SURFACES]
)
def test_each_surface_marks_b_better(call: Callable[[], object], marked: object) -> None:
    pytest.importorskip("matplotlib")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the systems differ on every query: nothing to say
        assert call() == marked


def test_irm_compare_marks_b_better(tmp_path: Path) -> None:
    paths = []
    for name, run in RUNS.items():
        path = tmp_path / f"{name}.run"
        irm.write_trec_run(run.with_columns(score=-pl.col("rank").cast(pl.Float64)), path)
        paths.append(str(path))
    qrels, groups = tmp_path / "qrels.txt", tmp_path / "groups.csv"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.iter_rows()))
    GROUPS.write_csv(groups)
    command = ["compare", "--qrels", str(qrels), "--groups", str(groups), *paths]
    done = irm_in_process(
        *command, "--baseline", "A", "-m", LOWER, "-m", HIGHER, "--format", "markdown",
        "--markers", "daggers",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _row(done.stdout, "B") == ["**0.0000**†", "**1.0000**†"]
    assert _row(done.stdout, "A") == ["0.7715", "0.5180"]


def test_tukey_hsd_names_the_tables_it_takes() -> None:
    """Without ``groups=`` the refusal tells to pass it; given, it is read (it was an
    unknown option of tukey_hsd)."""
    message = "metric 'awrf' reads document groups: pass groups=..."
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}"):
        irm.tukey_hsd(RUNS, ["awrf"], qrels=QRELS)
    target = pl.DataFrame({"group": ["g1", "g2"], "target": [0.5, 0.5]})
    out = irm.tukey_hsd(RUNS, ["awrf"], qrels=QRELS, groups=GROUPS, target=target)
    means = irm.compare(RUNS, ["awrf"], qrels=QRELS, groups=GROUPS, target=target)
    assert (
        out.select("system", "baseline", "mean").rows()
        == means.select("system", "baseline", "mean").rows()
    )


# ------------------------------------------------------ no number silently wrong
_NOT_FINITE = [float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("value", _NOT_FINITE, ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_the_distribution_refuses_a_value_it_cannot_bin(value: float, lazy: bool) -> None:
    pytest.importorskip("matplotlib")
    frame = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "rbo": [0.2, value, 1.0]})
    message = (
        f"column 'rbo' has 1 NaN or infinite value(s) (e.g. {value!r} in query 'q2'); a "
        "histogram has no bin for them and their mean is not a number: drop or fix those "
        "rows, e.g. per_query.filter(pl.col('rbo').is_finite())"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_similarity_distribution(frame.lazy() if lazy else frame)


@pytest.mark.parametrize(
    ("values", "title"),
    [
        ([1e300, 1.0, 2.0], "x over 3 queries: mean 3.33e+299, median 2.000"),
        ([1e-5, 3e-5], "x over 2 queries: mean 2e-05, median 2e-05"),
        ([0.0, 0.5], "x over 2 queries: mean 0.250, median 0.250"),
    ],
    ids=["huge", "tiny", "plain"],
)
def test_the_distribution_prints_its_mean_at_any_scale(values: list[float], title: str) -> None:
    pytest.importorskip("matplotlib")
    frame = pl.DataFrame({"query_id": [f"q{i}" for i in range(len(values))], "x": values})
    assert plot.plot_similarity_distribution(frame).axes[0].get_title() == title


@pytest.mark.parametrize("column", ["delta", "ci_low", "ci_high"])
def test_plot_ci_refuses_an_undefined_interval(column: str) -> None:
    pytest.importorskip("matplotlib")
    result = _compare().with_columns(
        pl.when(pl.col("system") == "B").then(float("nan")).otherwise(pl.col(column)).alias(column)
    )
    message = (
        f"column {column!r} of result is null or NaN on 1 row(s) (first: metric 'ee_loss', "
        "system 'B', baseline 'A'): that is no interval to draw (an infinite bound is a "
        "one-sided interval's); pass the result of irm.compare, or drop those rows"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_ci(result)


# ------------------------------------- the checks do not depend on the metrics asked
_RUN = RUNS["B"].with_columns(score=-pl.col("rank").cast(pl.Float64)).drop("rank")
_BAD = {
    "repeated-document": (
        _RUN.with_columns(doc_id=pl.when(pl.col("doc_id") == "s").then(pl.lit("r"))
                          .otherwise(pl.col("doc_id"))),
        irm.DuplicateError,
        "column 'doc_id' of the run: query 'q1' has 1 repeated listing(s)",
    ),
    "nan-score": (
        _RUN.with_columns(score=pl.when(pl.col("doc_id") == "y").then(float("nan"))
                          .otherwise(pl.col("score"))),
        irm.InvalidValueError,
        "column 'score' of the run has 1 NaN value(s) in query 'q1'",
    ),
    "null-query": (
        _RUN.with_columns(query_id=pl.when(pl.col("doc_id") == "y").then(None)
                          .otherwise(pl.col("query_id"))),
        irm.InvalidValueError,
        "column 'query_id' of the run has null values",
    ),
}  # fmt: skip
_LISTS: list[tuple[list[str], dict[str, Any]]] = [
    (["P@1"], {"qrels": QRELS}),
    (["num_ret"], {"qrels": QRELS}),
    ([LOWER, "map"], {"qrels": QRELS, "groups": GROUPS}),
    (["rnd"], {"groups": GROUPS}),
]


@pytest.mark.parametrize("bad", list(_BAD), ids=list(_BAD))
def test_a_bad_run_is_refused_alike_beside_every_metric_list(bad: str) -> None:
    run, error, start = _BAD[bad]
    messages = set()
    for metrics, tables in _LISTS:
        with pytest.raises(error, match=f"^{re.escape(start)}") as caught:
            irm.evaluate(run, metrics, **tables)
        messages.add(str(caught.value))
    assert len(messages) == 1, messages


_SYSTEMS = {
    "repeated-document": (
        "column 'doc_id' of the run: query 'q1' (system='B') has 1 repeated listing(s) (each "
        "of a document listed before in the query); each (query, document) pair may appear "
        "once (trec_eval refuses such runs too): keep one row per document, e.g. "
        ".unique(['system', 'query_id', 'doc_id'])"
    ),
    "nan-score": (
        "column 'score' of the run has 1 NaN value(s) in query 'q1' (system='B'); NaN cannot "
        "be ranked: replace them, e.g. pl.col('score').fill_nan(float('-inf'))"
    ),
}


@pytest.mark.parametrize("bad", list(_SYSTEMS), ids=list(_SYSTEMS))
@pytest.mark.parametrize("call", ["evaluate", "compare"])
def test_the_system_of_a_bad_run_is_named_beside_every_metric_list(bad: str, call: str) -> None:
    """Beside the exposure measures alone (ee_loss, rnd) the query was named without
    its system (``query 'q1'``), and a repeated document's fix was
    ``.unique(['query_id', 'doc_id'])``: run on the long frame, it would have merged the
    systems' rankings of the query into one."""
    run, error, _ = _BAD[bad]
    good = RUNS["A"].with_columns(score=-pl.col("rank").cast(pl.Float64)).drop("rank")
    long = pl.concat([good.with_columns(system=pl.lit("A")), run.with_columns(system=pl.lit("B"))])
    for metrics, tables in _LISTS:
        if call == "evaluate":
            with pytest.raises(error, match=f"^{re.escape(_SYSTEMS[bad])}$"):
                irm.evaluate(long, metrics, systems="system", **tables)
        else:
            with pytest.raises(error, match=f"^{re.escape(_SYSTEMS[bad])}$"):
                irm.compare({"A": good, "B": run}, metrics, **tables)


def test_an_empty_frame_is_no_plot() -> None:
    """Every plot refuses a frame with nothing to draw (the distribution drew an empty
    histogram titled 'rbo over 0 queries'; the curves an empty panel, with matplotlib's
    own warning of a legend without lines)."""
    pytest.importorskip("matplotlib")
    empty = pl.DataFrame(schema={"query_id": pl.String, "rbo": pl.Float64})
    message = "column 'rbo' holds no value to plot (the frame has no rows, or every value is null)"
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_similarity_distribution(empty)
    nulls = pl.DataFrame({"query_id": ["q1"], "rbo": [None]}, schema=empty.schema)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_similarity_distribution(nulls.lazy())
    means = pl.DataFrame(schema={"system": pl.String, "ndcg@1": pl.Float64, "ndcg@2": pl.Float64})
    with pytest.raises(irm.InvalidValueError, match=r"^the frame has no rows to plot$"):
        plot.plot_metric_curves(means)


def test_a_system_s_own_judgments_are_named_with_it_beside_every_metric_list() -> None:
    """Judgments per system (a ``system`` column in qrels=), one judged twice in B's q2:
    the exposure measures named ``query 'q2'`` alone, the ranking metrics ``query 'q2'
    (system='B')``."""
    good = RUNS["A"].with_columns(score=-pl.col("rank").cast(pl.Float64)).drop("rank")
    long = pl.concat([good.with_columns(system=pl.lit(s)) for s in ("A", "B")])
    qrels = pl.concat([QRELS.with_columns(system=pl.lit(s)) for s in ("A", "B")])
    twice = (pl.col("system") == "B") & (pl.col("query_id") == "q2") & (pl.col("doc_id") == "r")
    qrels = pl.concat([qrels, qrels.filter(twice)])
    message = (
        "column 'doc_id' of the judgments: query 'q2' (system='B') has 1 repeated "
        "judgment(s) (each of a document judged before in the query)"
    )
    for metrics, tables in [
        (["P@1"], {}),
        ([LOWER], {"groups": GROUPS}),
        (["awrf"], {"groups": GROUPS}),
    ]:
        with pytest.raises(irm.DuplicateError, match=f"^{re.escape(message)}"):
            irm.evaluate(long, metrics, systems="system", qrels=qrels, **tables)
