"""Round 28: an adversarial audit of "a lower-is-better metric is never marked better".

* The declarations. ``Metric.higher_is_better`` and ``Param.directions`` are checked
  when they are declared: a direction that is not ``True``, ``False`` or ``None`` (the
  string ``"lower"`` is truthy: every reader would read it higher-is-better), or a
  direction keyed by a value the parameter does not take (a misspelt ``'RES'`` would
  leave ``rbo(kind='res')`` higher-is-better without a word), is refused by name.
* Every value of every string parameter has a direction decided here, by hand from the
  metric's definition: a value added to a metric's choices without a row fails
  :func:`test_every_parameter_value_is_audited` (only ``rbo(kind='res')``, the
  residual, turns its metric; since round 31 to no direction, as ``kind='max'``).
  ``agg=`` keeps the direction, but for the spreads.
* The readers, on a metric whose direction a parameter value turns (an invented
  ``my_p``, precision's formula with ``sense='loss'``: lower is better, and
  ``sense='neutral'``: no direction, beside its default, higher): ``compare``'s wins,
  the report's markers and bold in text, Markdown, LaTeX and great_tables, Tukey's
  HSD, the delta and interval plots, ``system_agreement`` and ``plot_swaps``,
  ``optimize_fusion`` with and without folds, ``irm fuse --optimize`` and
  ``irm compare``; ties share the bold and take no marker.
* The beyond-accuracy guide's "better" column is each metric's declared direction;
  ``average_popularity`` (lower) and ``long_tail_share`` (higher), one popularity bias
  read two ways, order systems alike.
* ``options=`` of a report cannot turn the test: an ``alternative`` other than the one
  ``compare`` recorded, or (a frame without a record) one the rows' statistics deny,
  is refused; read as given, a two-sided result where B is significantly below A,
  read as ``'greater'``, marked B better.
* ``optimize_fusion``'s coverage warning said the judged queries the fused run misses
  score 0: in ``rbp_residual`` (lower is better) an empty ranking is 1, its worst.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.report import render_report
from polars_irmetrics.metrics import requests
from polars_irmetrics.metrics.requests import list_metrics
from polars_irmetrics.metrics.spec import AGGREGATES, Param

from .helpers import irm_in_process

DOCS = Path(__file__).resolve().parents[1] / "docs" / "guides"

# ---------------------------------------------------------------- the declarations
#: (what is declared, the message it is refused with)
DECLARATIONS: list[tuple[Callable[[], object], str]] = [
    (
        lambda: Param("kind", "ext", ("ext", "res"), directions={"RES": False}),
        "parameter 'kind': directions names 'RES', which is not one of its choices ('ext', "
        "'res'); a direction is declared for a value the parameter takes: name one of its "
        "choices",
    ),
    (
        lambda: Param("p", 0.9, directions={"0.5": False}),
        "parameter 'p': directions names '0.5', which is not one of its choices (none); a "
        "direction is declared for a value the parameter takes: name one of its choices",
    ),
    (
        lambda: Param("kind", "ext", ("ext", "res"), directions={"res": "lower"}),  # type: ignore[dict-item]
        "parameter 'kind': directions gives 'res' the direction 'lower'; it must be True "
        "(higher is better), False (lower is better) or None (neither)",
    ),
    (
        lambda: Param("kind", "ext", ("ext", "res"), directions={"res": 0}),
        "parameter 'kind': directions gives 'res' the direction 0; it must be True (higher "
        "is better), False (lower is better) or None (neither)",
    ),
    (
        lambda: dataclasses.replace(irm.get_metric("logloss"), higher_is_better="lower"),
        "metric 'logloss': higher_is_better='lower' is not a direction; it must be True "
        "(higher is better), False (lower is better) or None (neither)",
    ),
    (
        lambda: dataclasses.replace(irm.get_metric("ndcg"), higher_is_better=1),
        "metric 'ndcg': higher_is_better=1 is not a direction; it must be True (higher is "
        "better), False (lower is better) or None (neither)",
    ),
]


@pytest.mark.parametrize(
    ("declare", "message"),
    DECLARATIONS,
    ids=["misspelt-value", "number-param", "string", "zero", "metric-string", "metric-one"],
)
def test_a_direction_that_cannot_be_read_is_refused(
    declare: Callable[[], object], message: str
) -> None:
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        declare()


def test_the_registry_declares_directions_that_can_be_read() -> None:
    for metric in list_metrics():
        up = metric.higher_is_better
        assert up is None or isinstance(up, bool), metric.name
        for param in metric.params:
            for value, direction in param.directions.items():
                assert param.choices is not None, (metric.name, param.name)
                assert value in param.choices, (metric.name, param.name)
                assert direction is None or isinstance(direction, bool)


# -------------------------------------------- every string parameter value, decided
#: (metric, parameter, value, a name that asks for it, the direction, why)
VALUES: list[tuple[str, str, str, str, bool | None, str]] = [
    ("precision", "relevancy_method", "top_k", "P(relevancy_method='top_k')@5", True,
     "which documents count as retrieved: precision either way"),
    ("precision", "relevancy_method", "by_threshold",
     "P(relevancy_method='by_threshold', threshold=3)@5", True, "the same"),
    ("recall", "relevancy_method", "top_k", "recall(relevancy_method='top_k')@5", True, ""),
    ("recall", "relevancy_method", "by_threshold",
     "recall(relevancy_method='by_threshold', threshold=3)@5", True, ""),
    ("recall", "denominator", "relevant", "recall(denominator='relevant')@5", True, ""),
    ("recall", "denominator", "capped", "recall(denominator='capped')@5", True,
     "divided by min(k, R): still a share found"),
    ("r_precision", "relevancy_method", "top_k", "rprec(relevancy_method='top_k')", True, ""),
    ("r_precision", "relevancy_method", "by_threshold",
     "r_precision(relevancy_method='by_threshold', threshold=3)@10", True, ""),
    ("r_precision", "denominator", "relevant", "rprec(denominator='relevant')", True, ""),
    ("r_precision", "denominator", "capped", "r_precision(denominator='capped')@5", True, ""),
    ("map", "relevancy_method", "top_k", "map(relevancy_method='top_k')", True, ""),
    ("map", "relevancy_method", "by_threshold",
     "map(relevancy_method='by_threshold', threshold=3)@10", True, ""),
    ("map", "denominator", "relevant", "map(denominator='relevant')", True, ""),
    ("map", "denominator", "capped", "map(denominator='capped')@5", True, ""),
    ("map", "denominator", "retrieved", "map(denominator='retrieved')", True,
     "AP over the relevant retrieved: still a precision"),
    ("ndcg", "relevancy_method", "top_k", "ndcg(relevancy_method='top_k')@5", True, ""),
    ("ndcg", "relevancy_method", "by_threshold",
     "ndcg(relevancy_method='by_threshold', threshold=3)@5", True, ""),
    ("ndcg", "gain", "linear", "ndcg(gain='linear')@5", True, "gains, discounted"),
    ("ndcg", "gain", "exponential", "ndcg(gain='exponential')@5", True, ""),
    ("ndcg", "ideal", "judgments", "ndcg(ideal='judgments')@5", True, ""),
    ("ndcg", "ideal", "retrieved", "ndcg(ideal='retrieved')@5", True,
     "scikit-learn's ideal: still 1 at best"),
    ("ndcg", "ties", "break", "ndcg(ties='break')@5", True, ""),
    ("ndcg", "ties", "average", "ndcg(ties='average')@5", True, ""),
    ("dcg", "gain", "linear", "dcg(gain='linear')@5", True, ""),
    ("dcg", "gain", "exponential", "dcg(gain='exponential')@5", True, ""),
    ("dcg", "ties", "break", "dcg(ties='break')@5", True, ""),
    ("dcg", "ties", "average", "dcg(ties='average')@5", True, ""),
    ("idcg", "gain", "linear", "idcg(gain='linear')@5", None,
     "the judgments' ideal, the same for every system"),
    ("idcg", "gain", "exponential", "idcg(gain='exponential')@5", None, ""),
    ("idcg", "ideal", "judgments", "idcg(ideal='judgments')@5", None, ""),
    ("idcg", "ideal", "retrieved", "idcg(ideal='retrieved')@5", None, ""),
    ("cg", "gain", "linear", "cg(gain='linear')@5", True, ""),
    ("cg", "gain", "exponential", "cg(gain='exponential')@5", True, ""),
    ("rbp", "gain", "binary", "rbp(gain='binary')", True, ""),
    ("rbp", "gain", "linear", "rbp(gain='linear')", True, ""),
    ("iprec", "rounding", "truncate", "iprec(recall=0.5, rounding='truncate')", True, ""),
    ("iprec", "rounding", "lround", "iprec(recall=0.5, rounding='lround')", True, ""),
    ("11pt_avg", "rounding", "truncate", "11pt_avg(rounding='truncate')", True, ""),
    ("11pt_avg", "rounding", "lround", "11pt_avg(rounding='lround')", True, ""),
    ("click_mrr", "signal", "click", "click_mrr(signal='click')", True, ""),
    ("click_mrr", "signal", "satisfied", "click_mrr(signal='satisfied')", True,
     "a satisfied click is a click too"),
    ("click_ndcg", "signal", "click", "click_ndcg(signal='click')@5", True, ""),
    ("click_ndcg", "signal", "satisfied", "click_ndcg(signal='satisfied')@5", True, ""),
    ("click_precision", "signal", "click", "click_precision(signal='click')@5", True, ""),
    ("click_precision", "signal", "satisfied", "click_precision(signal='satisfied')@5", True,
     ""),
    ("novelty", "kind", "recommenders", "novelty(kind='recommenders')@5", True,
     "self-information: a rarer item is newer"),
    ("novelty", "kind", "replay", "novelty(kind='replay')@5", True,
     "RePlay: the share of items the user never saw"),
    ("intra_list_diversity", "item_sim_measure", "item_feature_vector",
     "ild(item_sim_measure='item_feature_vector')@5", True, "1 - similarity"),
    ("intra_list_diversity", "item_sim_measure", "item_cooccurrence_count",
     "ild(item_sim_measure='item_cooccurrence_count')@5", True, "1 - similarity"),
    ("serendipity", "item_sim_measure", "item_feature_vector",
     "serendipity(item_sim_measure='item_feature_vector')@5", True, ""),
    ("serendipity", "item_sim_measure", "item_cooccurrence_count",
     "serendipity(item_sim_measure='item_cooccurrence_count')@5", True, ""),
    ("serendipity", "kind", "recommenders", "serendipity(kind='recommenders')@5", True, ""),
    ("serendipity", "kind", "kotkov", "serendipity(kind='kotkov')@5", True,
     "RecTools: relevant items above their popularity rank"),
    ("gauc", "weighting", "rows", "gauc(weighting='rows')", True, "an AUC either way"),
    ("gauc", "weighting", "uniform", "gauc(weighting='uniform')", True, ""),
    ("neighbor_recall_rel", "distance", "auto", "neighbor_recall_rel(distance='auto')@5",
     True, "how a score becomes a distance, not the metric's direction"),
    ("neighbor_recall_rel", "distance", "neg_score",
     "neighbor_recall_rel(distance='neg_score')@5", True, ""),
    ("neighbor_recall_rel", "distance", "one_minus_score",
     "neighbor_recall_rel(distance='one_minus_score')@5", True, ""),
    ("rbo", "kind", "ext", "rbo(kind='ext')@5", True, "the overlap, extrapolated"),
    ("rbo", "kind", "min", "rbo(kind='min')@5", True, "its lower bound"),
    ("rbo", "kind", "max", "rbo(kind='max')@5", None,
     "its upper bound, which grows with the unseen depths (round 31)"),
    ("rbo", "kind", "res", "rbo(kind='res')@5", None,
     "max - min: the uncertainty the unseen depths leave, no overlap (round 31)"),
    ("rbo", "ties", "a", "rbo(ties='a')@5", True, ""),
    ("rbo", "ties", "w", "rbo(ties='w')@5", True, ""),
    ("rbo", "ties", "b", "rbo(ties='b')@5", True, ""),
    ("tau_ap", "ties", "a", "tau_ap(ties='a')@5", True, ""),
    ("tau_ap", "ties", "b", "tau_ap(ties='b')@5", True, ""),
    ("partial_auc", "insufficient_handling", "ignore",
     "partial_auc(insufficient_handling='ignore')@5", True, ""),
    ("partial_auc", "insufficient_handling", "exclude",
     "partial_auc(insufficient_handling='exclude')@5", True, ""),
    ("pap", "insufficient_handling", "ignore", "pap(insufficient_handling='ignore')@5", True,
     ""),
    ("pap", "insufficient_handling", "exclude", "pap(insufficient_handling='exclude')@5",
     True, ""),
    ("ee_loss", "browsing", "geometric", "ee_loss(browsing='geometric')", False,
     "a distance to the deserved exposure, whichever browsing model"),
    ("ee_loss", "browsing", "rbp", "ee_loss(browsing='rbp')", False, ""),
    ("ee_disparity", "browsing", "geometric", "ee_disparity(browsing='geometric')", False, ""),
    ("ee_disparity", "browsing", "rbp", "ee_disparity(browsing='rbp')", False, ""),
    ("ee_relevance", "browsing", "geometric", "ee_relevance(browsing='geometric')", True, ""),
    ("ee_relevance", "browsing", "rbp", "ee_relevance(browsing='rbp')", True, ""),
    ("item_mad", "kind", "ranking", "item_mad(kind='ranking')@5", False,
     "a spread between clusters, whichever values"),
    ("item_mad", "kind", "rating", "item_mad(kind='rating')@5", False, ""),
    ("user_mad", "kind", "ranking", "user_mad(kind='ranking')@5", False, ""),
    ("user_mad", "kind", "rating", "user_mad(kind='rating')@5", False, ""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("metric", "param", "value", "name", "direction", "why"),
    VALUES,
    ids=[f"{row[0]}-{row[1]}={row[2]}" for row in VALUES],
)
def test_each_parameter_value_reads_its_direction(
    metric: str, param: str, value: str, name: str, direction: bool | None, why: str
) -> None:
    parsed = irm.parse_metric(name)
    assert parsed.metric.name == metric
    assert dict(parsed.options)[param] == value  # the name asks for that value
    assert parsed.higher_is_better is direction, why


def test_every_parameter_value_is_audited() -> None:
    """A value added to a string parameter's choices needs a row above: its direction
    decided, not inherited from the metric's without a look."""
    declared = {
        (metric.name, param.name, value)
        for metric in list_metrics()
        for param in metric.params
        for value in param.choices or ()
    }
    audited = [(row[0], row[1], row[2]) for row in VALUES]
    assert len(set(audited)) == len(audited)
    assert declared - set(audited) == set()  # values without a decided direction
    assert set(audited) - declared == set()  # rows of no value


#: (name, the direction of each agg=): a summary keeps the direction, a spread has none
AGGS: list[tuple[str, bool | None]] = [
    ("unjudged(agg='{}')@5", None),  # the judgments' completeness, no direction
    ("rbo(kind='res', agg='{}')@5", None),  # the uncertainty, no direction (round 31)
    ("P(agg='{}')@5", True),
    ("num_ret(agg='{}')", None),
]


@pytest.mark.parametrize(("template", "direction"), AGGS)
@pytest.mark.parametrize("aggregate", AGGREGATES)
def test_agg_keeps_the_direction_but_for_a_spread(
    template: str, direction: bool | None, aggregate: str
) -> None:
    expected = None if aggregate in ("std", "ci_halfwidth") else direction
    assert irm.parse_metric(template.format(aggregate)).higher_is_better is expected


# ---------------------------------------- the readers, on a direction a value turns
#: precision's formula with a parameter that turns it: sense='loss' reads it lower is
#: better, sense='neutral' of no direction; the default, higher.
_PRECISION = irm.get_metric("precision")
_SENSE = Param(
    "sense", "gain", ("gain", "loss", "neutral"), directions={"loss": False, "neutral": None}
)
_MY_P = dataclasses.replace(
    _PRECISION, name="my_p", aliases=(), params=(*_PRECISION.params, _SENSE)
)
LOSS, GAIN, NEUTRAL = "my_p(sense='loss')@2", "my_p@2", "my_p(sense='neutral')@2"

_Q = [f"q{i}" for i in range(1, 7)]
#: each query: r relevant, x judged not relevant
_QRELS = pl.DataFrame(
    {"query_id": _Q * 2, "doc_id": ["r"] * 6 + ["x"] * 6, "relevance": [1] * 6 + [0] * 6}
)


def _run(docs: list[str]) -> pl.DataFrame:
    """The same two documents, ranked 1 and 2, on every query."""
    return pl.DataFrame(
        {
            "query_id": [q for q in _Q for _ in docs],
            "doc_id": docs * len(_Q),
            "rank": [1, 2] * len(_Q),
            "score": [2.0, 1.0] * len(_Q),
        }
    )


#: my_p@2 by hand: A and C hold r in their top 2 (1/2 on every query), B never (0);
#: so sense='loss' reads B best (0 below 1/2) and A, C tied worst.
RUNS = {"A": _run(["r", "x"]), "B": _run(["x", "y"]), "C": _run(["y", "r"])}


@pytest.fixture
def my_p(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(requests.BY_NAME, "my_p", (_MY_P, None))


@pytest.mark.usefixtures("my_p")
def test_the_request_reads_the_value() -> None:
    assert [irm.parse_metric(n).higher_is_better for n in (GAIN, LOSS, NEUTRAL)] == [
        True,
        False,
        None,
    ]


@pytest.mark.usefixtures("my_p")
@pytest.mark.parametrize(
    ("name", "row"),
    [
        # (mean, baseline_mean, wins, ties, losses, higher_is_better) of B against A
        (LOSS, (0.0, 0.5, 6, 0, 0, False)),
        (GAIN, (0.0, 0.5, 0, 0, 6, True)),
        (NEUTRAL, (0.0, 0.5, None, None, None, None)),
    ],
)
def test_compare_counts_the_wins_the_value_says(name: str, row: tuple[object, ...]) -> None:
    runs = {"A": RUNS["A"], "B": RUNS["B"]}
    out = irm.compare(runs, [name], qrels=_QRELS, baseline="A")
    columns = ("mean", "baseline_mean", "wins", "ties", "losses", "higher_is_better")
    assert out.select(columns).row(0) == row


@pytest.mark.usefixtures("my_p")
def test_the_report_marks_and_bolds_each_way() -> None:
    """B is significantly below A and C (t = -inf: every delta -1/2) and A ties C: the
    loss reads B better (bold, †), the gain reads it worse (‡; A and C share the bold,
    neither marked against the other), the neutral value marks and bolds nothing."""
    same = "every per-query delta is 0 in 2 comparisons"  # C against A: the directed two
    with pytest.warns(irm.IrmWarning, match=re.escape(same)):
        result = irm.compare(RUNS, [LOSS, GAIN, NEUTRAL], qrels=_QRELS, baseline="A")
    report = irm.report(result, markers="daggers")
    lines = report.to_markdown().splitlines()
    assert lines[:5] == [
        f"| system | {LOSS} | {GAIN} | {NEUTRAL} |",
        "|---|---:|---:|---:|",
        "| A | 0.5000 | **0.5000** | 0.5000 |",
        "| B | **0.0000**† | 0.0000‡ | 0.0000 |",
        "| C | 0.5000 | **0.5000** | 0.5000 |",
    ]
    assert f"lower is better for {LOSS}: the best mean is the lowest" in lines
    assert f"no better direction for {NEUTRAL}: nothing marked or bold" in lines
    latex = report.to_latex().splitlines()
    assert latex[5:8] == [
        "A & 0&5000 & \\textbf{0}&\\textbf{5000} & 0&5000 \\\\",
        "B & \\textbf{0}&\\textbf{0000}$^{\\dagger}$ & 0&0000$^{\\ddagger}$ & 0&0000 \\\\",
        "C & 0&5000 & \\textbf{0}&\\textbf{5000} & 0&5000 \\\\",
    ]
    pytest.importorskip("great_tables")
    html = report.to_gt().as_raw_html()
    cells = re.findall(r'<td (?:style="font-weight: bold;" )?headers="([^"]+)"', html)
    bolded = re.findall(r'<td style="font-weight: bold;" headers="([^"]+)"', html)
    assert len(cells) == 9
    assert bolded == [cells[1], cells[3], cells[7]]  # A's gain, B's loss, C's gain


@pytest.mark.usefixtures("my_p")
def test_tukey_letters_read_the_value() -> None:
    """Letters: a = A, b = B, c = C. On the loss B is better than A and C; on the gain
    A and C are better than B; A and C tie (no letter either way)."""
    flat = "no system's per-query values vary"  # every query alike: p 0 where means differ
    with pytest.warns(irm.IrmWarning, match=re.escape(flat)):
        result = irm.tukey_hsd(RUNS, [LOSS, GAIN], qrels=_QRELS)
    lines = irm.report(result).to_markdown().splitlines()
    assert lines[2:5] == [
        "| A | 0.5000 | **0.5000**ᵇ |",
        "| B | **0.0000**ᵃᶜ | 0.0000 |",
        "| C | 0.5000 | **0.5000**ᵇ |",
    ]


@pytest.mark.usefixtures("my_p")
@pytest.mark.parametrize(
    ("name", "title", "axis"),
    [
        (LOSS, f"B vs A ({LOSS}, lower is better): 6 wins, 0 ties, 0 losses",
         f"delta of {LOSS} (lower is better)"),
        (GAIN, f"B vs A ({GAIN}): 0 wins, 0 ties, 6 losses", f"delta of {GAIN}"),
        (NEUTRAL, f"B vs A ({NEUTRAL}, no better direction): 0 above, 0 equal, 6 below",
         f"delta of {NEUTRAL} (no better direction)"),
    ],
)  # fmt: skip
def test_the_plots_read_the_value(name: str, title: str, axis: str) -> None:
    pytest.importorskip("matplotlib")
    runs = {"A": RUNS["A"], "B": RUNS["B"]}
    per_query = irm.compare(runs, [name], qrels=_QRELS, baseline="A", per_query=True)
    assert plot.plot_deltas(per_query).axes[0].get_title() == title
    result = irm.compare(runs, [name], qrels=_QRELS, baseline="A")
    assert plot.plot_ci(result).axes[0].get_xlabel() == axis
    # without the column, the name's declaration (the value's own)
    bare = result.drop("higher_is_better")
    assert plot.plot_ci(bare).axes[0].get_xlabel() == axis


def _per_query(name: str) -> pl.DataFrame:
    runs = pl.concat([run.with_columns(system=pl.lit(s)) for s, run in RUNS.items()])
    return irm.evaluate(runs, [name], qrels=_QRELS, systems="system", per_query=True)


@pytest.mark.usefixtures("my_p")
def test_the_orderings_read_the_value() -> None:
    """One number read two ways: the loss orders B first and A, C tied after it, the
    gain A, C first and B last. Read as declared the orderings are opposite (Kendall's
    tau-b -1: pairs (A, B) and (B, C) swapped, (A, C) tied in both, no swap); the loss
    told higher-is-better is the gain, and they agree."""
    loss, gain = _per_query(LOSS), _per_query(GAIN)
    out = irm.system_agreement(loss, gain)
    assert out.select("swaps", "pairs").row(0) == (2, 3)
    assert out["correlation"].item() == pytest.approx(-1.0, abs=1e-12)
    # tau_ap: A and C tied on both sides (ties='b')
    for options in ({"method": "kendall"}, {"method": "tau_ap", "ties": "b"}):
        told = irm.system_agreement(loss, gain, higher_is_better=True, **options)  # type: ignore[arg-type]
        method = options["method"]
        assert told.select("swaps", "pairs").row(0) == (0, 3), method
        assert told["correlation"].item() == pytest.approx(1.0, abs=1e-12), method
    pytest.importorskip("matplotlib")
    title = plot.plot_swaps(loss, gain).axes[0].get_title()
    assert title == "system orderings: 2 of 3 pairs swapped"
    told_title = plot.plot_swaps(loss, gain, higher_is_better=True).axes[0].get_title()
    assert told_title == "system orderings: 0 of 3 pairs swapped"


@pytest.mark.usefixtures("my_p")
def test_the_orderings_refuse_the_neutral_value() -> None:
    neutral = _per_query(NEUTRAL)
    message = (
        f"metric {NEUTRAL!r} of a has no better direction (neither a higher nor a lower "
        "value is better), so the systems have no best-first order: say which way to "
        "order them with higher_is_better=True or higher_is_better=False"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(neutral, _per_query(GAIN))
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(neutral, neutral, "tau_ap")


@pytest.mark.usefixtures("my_p")
def test_optimize_fusion_minimises_the_loss() -> None:
    """A and B fused: weights (0, 1) is B alone (0 on every query: the best loss), every
    other point holds r in the top 2 (1/2). The gain picks the last of those."""
    runs = {"A": RUNS["A"], "B": RUNS["B"]}
    best, grid, folds = irm.optimize_fusion(
        runs, LOSS, qrels=_QRELS, step=0.5, return_grid=True, folds=2
    )
    assert best == {"weights": [0.0, 1.0]}
    assert grid[LOSS].to_list() == [0.0, 0.5, 0.5]
    assert folds.select("weights", "train", "test").rows() == [([0.0, 1.0], 0.0, 0.0)] * 2
    assert irm.optimize_fusion(runs, GAIN, qrels=_QRELS, step=0.5) == {"weights": [1.0, 0.0]}
    message = (
        f"metric={NEUTRAL!r} has no better direction (neither a higher nor a lower value "
        "is better), so there is no best weight to find; optimize_fusion maximises or "
        "minimises one metric (e.g. metric='ndcg@10')"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.optimize_fusion(runs, NEUTRAL, qrels=_QRELS, step=0.5)


def _files(tmp_path: Path) -> tuple[list[str], str]:
    paths = []
    for name, run in RUNS.items():
        path = tmp_path / f"{name}.run"
        irm.write_trec_run(run, path, run_id=name)
        paths.append(str(path))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 r 1\n{q} 0 x 0\n" for q in _Q))
    return paths, str(qrels)


@pytest.mark.usefixtures("my_p")
def test_irm_fuse_optimize_prints_the_lowest_with_folds(tmp_path: Path) -> None:
    paths, qrels = _files(tmp_path)
    command = ["fuse", *paths[:2], "--optimize", "--qrels", qrels, "--metric", LOSS]
    done = irm_in_process(*command, "--step", "0.5", "--folds", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"best {LOSS} (lower is better): 0.0000 with {{'weights': [0.0, 1.0]}}"
    assert lines[-1] == f"cross-validated {LOSS}: 0.0000 (mean of held-out folds)"


@pytest.mark.usefixtures("my_p")
def test_irm_compare_marks_each_way(tmp_path: Path) -> None:
    paths, qrels = _files(tmp_path)
    command = ["compare", "--qrels", qrels, *paths, "--baseline", "A", "--markers", "daggers"]
    done = irm_in_process(*command, "-m", LOSS, "-m", GAIN, "--format", "markdown")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2:5] == [
        "| A | 0.5000 | **0.5000** |",
        "| B | **0.0000**† | 0.0000‡ |",
        "| C | 0.5000 | **0.5000** |",
    ]


# --------------------------------------------------- the beyond-accuracy guide says it
def _guide_directions() -> dict[str, str]:
    """The "better" column of the beyond-accuracy guide's table: metric -> its first
    word (higher, lower)."""
    text = (DOCS / "beyond_accuracy.md").read_text(encoding="utf-8")
    table = text[text.index("| metric (aliases) | value | better |") :]
    out: dict[str, str] = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].split("`")[1]
        out[name] = cells[-1].split(":")[0]
    return out


def test_the_guide_says_each_declared_direction() -> None:
    words = {True: "higher", False: "lower", None: "neither"}
    said = _guide_directions()
    assert sorted(said) == sorted(
        [
            "catalog_coverage",
            "distributional_coverage",
            "gini_index",
            "novelty",
            "intra_list_diversity",
            "serendipity",
            "average_popularity",
            "long_tail_share",
        ]
    )
    assert said["average_popularity"] == "lower"  # by hand: a popularity bias
    assert said["long_tail_share"] == "higher"  # the same bias, read the other way
    for name, word in said.items():
        assert word == words[irm.get_metric(name).higher_is_better], name


def test_popularity_bias_read_two_ways_orders_systems_alike() -> None:
    """Item a has 4 interactions of 7 (the head: at least 20 %), b 2, c 1. A recommends
    a to everyone (ARP 4, APLT 0), B b, b, a (ARP 8/3, APLT 2/3), C c (ARP 1, APLT 1):
    both read C best and A worst, so they agree (correlation 1, no swap)."""
    history = pl.DataFrame(
        {"user_id": ["u1", "u1", "u1", "u2", "u3", "u3", "u4"], "item_id": list("abcaaba")}
    )
    recommended = {"A": "aaa", "B": "bba", "C": "ccc"}
    runs = pl.concat(
        pl.DataFrame(
            {"user_id": ["u1", "u2", "u3"], "item_id": list(items), "rank": 1, "system": name}
        )
        for name, items in recommended.items()
    )
    values = irm.evaluate(
        runs,
        ["arp@1", "aplt@1"],
        interactions=history,
        systems="system",
        per_query=True,
        query_id="user_id",
        doc_id="item_id",
    )
    means = values.group_by("system").agg(pl.col("arp@1", "aplt@1").mean()).sort("system")
    assert means.rows() == [("A", 4.0, 0.0), ("B", 8 / 3, 2 / 3), ("C", 1.0, 1.0)]
    arp, aplt = values.select("system", "user_id", "arp@1"), values.drop("arp@1")
    for method in ("kendall", "tau_ap"):
        out = irm.system_agreement(arp, aplt, method, query_id="user_id")
        assert out.select("correlation", "swaps").row(0) == (1.0, 0), method


# ------------------------------- options= cannot turn the test the result recorded
# report(result, options=...) took the given alternative for the test's direction: a
# two-sided result where B is significantly below A read with alternative='greater'
# marked B better (†) on P@1, its footnote naming a one-sided test never run.
def _two_sided() -> pl.DataFrame:
    """B against A: P@1 0 below 1 and unjudged@2 1/2 above 0 on every query (A lists r
    and x, both judged; B x and the unjudged y): B significantly worse on P@1, and
    significantly different on unjudged@2, which has no better direction (unmarked)."""
    runs = {"A": RUNS["A"], "B": RUNS["B"]}
    return irm.compare(runs, ["P@1", "unjudged@2"], qrels=_QRELS, baseline="A")


#: the entry points that take options=: the report object and the text renderer
RENDERERS: list[Callable[[pl.DataFrame, CompareOptions], str]] = [
    lambda result, options: irm.report(result, options=options, markers="daggers").to_markdown(),
    lambda result, options: render_report(result, "markdown", options=options, markers="daggers"),
]


@pytest.mark.parametrize("alternative", ["greater", "less"])
@pytest.mark.parametrize("render", RENDERERS, ids=["report", "render_report"])
def test_options_of_another_alternative_are_refused(
    alternative: str, render: Callable[[pl.DataFrame, CompareOptions], str]
) -> None:
    result = _two_sided()
    options = CompareOptions(baseline="A", alternative=alternative)  # type: ignore[arg-type]
    message = (
        f"options= says alternative={alternative!r}, and irm.compare ran this result's "
        "tests with alternative='two-sided': the markers (better or worse) and the "
        "footnote read which way the test looked, so they would name a test that was not "
        "run; drop options= (the result's record names its test), or compare again with "
        f"alternative={alternative!r}"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        render(result, options)


def test_the_recorded_alternative_marks_each_way() -> None:
    result = _two_sided()
    same = irm.report(result, options=CompareOptions(baseline="A"), markers="daggers")
    assert same.to_markdown().splitlines()[2:4] == [
        "| A | **1.0000** | 0.0000 |",
        "| B | 0.0000‡ | 0.5000 |",
    ]
    # one-sided 'less' (B below A): worse on P@1; unjudged@2 has no direction: no marker
    runs = {"A": RUNS["A"], "B": RUNS["B"]}
    less = irm.compare(runs, ["P@1", "unjudged@2"], qrels=_QRELS, baseline="A", alternative="less")
    lines = irm.report(less, markers="daggers").to_markdown().splitlines()
    assert lines[2:4] == ["| A | **1.0000** | 0.0000 |", "| B | 0.0000‡ | 0.5000 |"]


@pytest.mark.parametrize(
    ("alternative", "row"),
    [
        ("greater", "B against A on P@1 is significant with p_value 0 and statistic -inf, "
         "below 0"),
        ("less", "B against A on unjudged@2 is significant with p_value 0 and statistic "
         "inf, above 0"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("render", RENDERERS, ids=["report", "render_report"])
def test_options_the_rows_deny_are_refused_without_a_record(
    alternative: str, row: str, render: Callable[[pl.DataFrame, CompareOptions], str]
) -> None:
    """A frame derived from compare's result has no record: options= is the caller's
    word, and a two-sided result's rows (t = -inf on P@1, +inf on unjudged@2, p 0) deny
    a one-sided test the other way."""
    derived = _two_sided().drop("ci_low", "ci_high")
    options = CompareOptions(baseline="A", alternative=alternative)  # type: ignore[arg-type]
    message = (
        f"options= says alternative={alternative!r} (test='t'), and {row}: a one-sided "
        "test gives a p-value under 1/2 only to a statistic on its own side, so this "
        "result is not of that test; pass the options irm.compare was called with"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        render(derived, options)
    # the options it was computed with: read as before
    same = render(derived, CompareOptions(baseline="A"))
    assert "| B | 0.0000‡ | 0.5000 |" in same.splitlines()


# ------------------- optimize_fusion: rbp_residual, the judgments' completeness, is refused
def test_optimize_fusion_refuses_rbp_residual() -> None:
    """rbp_residual (1 for an empty ranking, 0.8 for [d1] judged at p = 0.8) says how
    much of each fused ranking the judgments leave unknown, not how good it is: it has
    no direction (round 29), so no grid point is the best and the search is refused
    (the missed queries' warning reads as for every metric: tests/test_fusion_overlap)."""
    runs = {
        "a": pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}),
        "b": pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [2.0]}),
    }
    qrels = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["d1", "d5", "d6"]})
    qrels = qrels.with_columns(relevance=pl.lit(1))
    message = (
        "metric='rbp_residual' has no better direction (neither a higher nor a lower value "
        "is better), so there is no best weight to find; optimize_fusion maximises or "
        "minimises one metric (e.g. metric='ndcg@10')"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.optimize_fusion(runs, "rbp_residual", qrels=qrels, step=0.5, return_grid=True)
