"""Round 24: every metric of the registry is held to an audited direction.

``Metric.higher_is_better`` defaults to ``True``, so a lower-is-better metric declared
without the word would be read higher-is-better by every reader of "better"
(``compare``'s wins, ``report``'s markers and bold, ``system_agreement``'s orderings,
``optimize_fusion``'s objective) with no error anywhere. ``tests/test_directions.py``
holds the metrics of the fairness, recommender-library and off-policy wings to their
peers' readings; this table holds every other metric to its definition (or peer), and
:func:`test_every_metric_is_audited` fails for a metric added to the registry without a
row here or there: its direction must be decided, not inherited from the default.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.agreement import direction
from polars_irmetrics.comparison.api import compare_values
from polars_irmetrics.comparison.frame import PerQuery
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.paired import paired_stats
from polars_irmetrics.metrics import requests
from polars_irmetrics.metrics.requests import list_metrics
from polars_irmetrics.metrics.spec import Alias

from .helpers import docs_hook
from .test_directions import DIRECTIONS

#: (metric, direction, why: its definition or its peer's reading)
AUDIT: list[tuple[str, bool | None, str]] = [
    # trec_eval / ir_measures: effectiveness, higher is better
    ("precision", True, "share of the top k that is relevant"),
    ("recall", True, "share of the relevant documents found"),
    ("f1", True, "harmonic mean of precision and recall"),
    ("r_precision", True, "precision at rank R"),
    ("hit_rate", True, "1 when a relevant document is in the top k"),
    ("mrr", True, "reciprocal rank of the first relevant document"),
    ("map", True, "average precision"),
    ("ndcg", True, "normalised gain, 1 is the ideal ranking"),
    ("dcg", True, "discounted gain of the run's ranking"),
    ("cg", True, "gain of the run's top k"),
    ("bpref", True, "relevant documents above judged non-relevant ones"),
    ("num_rel_ret", True, "relevant documents retrieved"),
    ("err", True, "expected reciprocal rank of a cascade user"),
    ("rbp", True, "rate of gain of a user of persistence p"),
    ("arhr", True, "sum of reciprocal hit ranks"),
    ("mar", True, "mean of recall@1..k"),
    ("fcp", True, "share of concordant judged pairs"),
    ("trec_ndcg", True, "nDCG with trec_eval's gain table"),
    ("gm_map", True, "AP, geometric mean over queries"),
    ("gm_bpref", True, "bpref, geometric mean over queries"),
    ("iprec", True, "interpolated precision at a recall level"),
    ("11pt_avg", True, "interpolated precision averaged over recall levels"),
    ("relative_precision", True, "precision relative to the best possible"),
    ("rprec_mult", True, "precision at a multiple of R"),
    ("infap", True, "inferred AP"),
    ("set_map", True, "set precision times set recall"),
    ("ndcg_rel", True, "nDCG averaged over the relevant documents"),
    ("rndcg", True, "nDCG averaged at the ideal ranking's gain changes"),
    ("bin_g", True, "binary G: fewer non-relevant documents above"),
    ("g", True, "normalised gain G"),
    ("trec_rbp", True, "trec_eval's rank-biased precision"),
    ("utility", True, "worth of the retrieved set (weights are worths)"),
    ("ncrr", True, "cornac: normalised cumulative reciprocal rank"),
    ("rocauc", True, "RePlay: RocAuc@K"),
    # the judgments' completeness (round 29): what the pool judged of a ranking, not
    # its quality (ir_measures' Judged@k and trec_eval's unj, rbp_resid: diagnostics)
    ("rbp_residual", None, "the weight of positions whose relevance is unknown"),
    ("trec_rbp_resid", None, "trec_eval: what unjudged documents could add to rbp"),
    ("unjudged", None, "share of the top k without a judgment"),
    ("judged", None, "share of the top k with a judgment: unjudged's complement"),
    # counts of the input, not a quality: neither way
    ("idcg", None, "the judgments' ideal gain, the same for every system"),
    ("num_q", None, "number of queries evaluated"),
    ("num_ret", None, "number of documents retrieved"),
    ("num_rel", None, "number of relevant documents judged"),
    ("num_nonrel_judged_ret", None, "how the pool judged the run, not its ranking"),
    ("prefs_num_prefs_poss", None, "the preferences the judgments hold"),
    # preference judgments (trec_eval -R prefs): fulfilled preferences, higher
    ("prefs_num_prefs_ful", True, "preferences the ranking fulfils"),
    ("prefs_num_prefs_ful_ret", True, "preferences between retrieved documents fulfilled"),
    ("prefs_simp", True, "share of preferences fulfilled"),
    ("prefs_pair", True, "share of groups agreeing per pair"),
    ("prefs_avgjg", True, "prefs_simp per judgment group"),
    ("prefs_avgjg_rnonrel", True, "prefs_avgjg, non-relevant balanced"),
    ("prefs_simp_ret", True, "prefs_simp over retrieved documents"),
    ("prefs_pair_ret", True, "prefs_pair over retrieved documents"),
    ("prefs_avgjg_ret", True, "prefs_avgjg over retrieved documents"),
    ("prefs_avgjg_rnonrel_ret", True, "prefs_avgjg_rnonrel over retrieved documents"),
    ("prefs_simp_imp", True, "prefs_simp with a retrieved document"),
    ("prefs_pair_imp", True, "prefs_pair with a retrieved document"),
    ("prefs_avgjg_imp", True, "prefs_avgjg with a retrieved document"),
    ("map_avgjg", True, "AP per judgment group"),
    ("precision_avgjg", True, "precision per judgment group"),
    ("rprec_mult_avgjg", True, "rprec_mult per judgment group"),
    # online: clicks are good; abandonment, late and low clicks are not
    ("ctr", True, "clicks per impression"),
    ("session_ctr", True, "share of sessions with a click"),
    ("clicks_per_session", True, "clicks in a session"),
    ("abandonment", False, "share of sessions without a click"),
    ("click_mrr", True, "reciprocal position of the first click"),
    ("mean_click_position", False, "a lower position is nearer the top"),
    ("median_click_position", False, "a lower position is nearer the top"),
    ("time_to_first_click", False, "seconds until the first click"),
    ("sat_click_rate", True, "share of clicks that satisfy"),
    ("conversion_rate", True, "share of sessions that convert"),
    ("click_ndcg", True, "nDCG with clicks as relevance"),
    ("click_precision", True, "share of the top k clicked"),
    # beyond accuracy (Microsoft Recommenders, Shani & Gunawardana)
    ("catalog_coverage", True, "share of the catalogue recommended"),
    ("distributional_coverage", True, "entropy of the recommendations: even is high"),
    ("gini_index", False, "Shani & Gunawardana's Gini: 0 even, 1 one item"),
    ("novelty", True, "self-information (or RePlay's unseen share): new is high"),
    ("intra_list_diversity", True, "1 - mean pairwise similarity"),
    ("serendipity", True, "1 - similarity to the history (or Kotkov's)"),
    ("average_popularity", False, "popularity bias: Elliot's ARP, lower is less biased"),
    ("long_tail_share", True, "share of items outside the popular head"),
    # predictions: scores of a classifier or a regressor
    ("auc", True, "ROC AUC"),
    ("pr_auc", True, "area under the precision-recall curve"),
    ("gauc", True, "group AUC"),
    ("logloss", False, "cross-entropy, a loss"),
    ("ne", False, "log loss over the base rate's: below 1 beats it"),
    ("brier", False, "squared error of a probability"),
    ("calibration", None, "predicted over observed: 1 is calibrated, neither way better"),
    ("ece", False, "expected calibration error"),
    ("rmse", False, "root mean squared error"),
    ("mae", False, "mean absolute error"),
    ("mse", False, "mean squared error"),
    ("r2", True, "coefficient of determination, 1 is exact"),
    ("explained_variance", True, "explained variance, 1 is exact"),
    # approximate search against the exact one: recall of the true neighbours
    ("neighbor_recall", True, "ann-benchmarks: share of the true neighbours found"),
    ("neighbor_recall_rel", True, "ann-benchmarks: epsilon recall"),
    # a run against a reference taken as the truth (the exact search, the original
    # run of a reproduction: the agreement guide): closer is better
    ("rbo", True, "rank-biased overlap with the reference (kind='max', 'res': neither)"),
    ("rbo_repro_eval", True, "repro_eval: the reproduced run's overlap with the original"),
    ("jaccard", True, "the top-k sets' overlap with the reference's"),
    ("overlap", True, "the top k's share the reference's top k holds"),
    ("kendall_tau", True, "the shared documents ordered as the reference orders them"),
    ("tau_ap", True, "AP correlation, the reference as the truth"),
    ("ktu", True, "repro_eval: Kendall's tau Union with the original"),
]


@pytest.mark.parametrize(("name", "direction", "why"), AUDIT, ids=[row[0] for row in AUDIT])
def test_direction_is_the_audited(name: str, direction: bool | None, why: str) -> None:
    assert irm.get_metric(name).higher_is_better is direction, why


def test_every_metric_is_audited() -> None:
    """Every metric of the registry has one row: here or in test_directions.DIRECTIONS,
    not both; a metric added without one fails here, whatever its declaration."""
    audited = [row[0] for row in AUDIT]
    peers = [row[0] for row in DIRECTIONS]
    assert len(set(audited)) == len(audited)
    assert set(audited) & set(peers) == set()
    registry = {metric.name for metric in list_metrics()}
    assert registry - set(audited) - set(peers) == set()  # unaudited metrics
    assert (set(audited) | set(peers)) - registry == set()  # rows of no metric


# ------------------------------------- paired values carry their directions, always
# The per-query values every comparison reads (compare's wins, tukey_hsd's column,
# the report's markers) took "higher is better for every metric" when built without
# directions: no caller of the library's did, but nothing made one say it.
_QUERIES = pl.Series("query_id", ["q1", "q2", "q3"])
#: values[metric, query, system]: b is above a on q1 and q2, equal on q3
_VALUES = np.array([[[0.2, 0.5], [0.3, 0.4], [0.1, 0.1]]])


@pytest.mark.parametrize(
    "build",
    [
        lambda: PerQuery(["logloss"], ["a", "b"], _QUERIES, _VALUES, 0),  # type: ignore[call-arg]
        lambda: paired_stats(_VALUES[0][:, 1:], _VALUES[0][:, :1], CompareOptions()),  # type: ignore[call-arg]
    ],
    ids=["PerQuery", "paired_stats"],
)
def test_paired_values_without_directions_are_refused(build: Callable[[], object]) -> None:
    with pytest.raises(TypeError, match="higher_is_better"):
        build()


@pytest.mark.parametrize(
    ("direction", "counts"),
    [(True, (2, 1, 0, True)), (False, (0, 1, 2, False)), (None, (None, None, None, None))],
)
def test_the_directions_given_are_the_wins(
    direction: bool | None, counts: tuple[int | None, ...]
) -> None:
    values = PerQuery(["m"], ["a", "b"], _QUERIES, _VALUES, 0, [direction])
    out = compare_values(values, CompareOptions(correction=None).checked())
    assert out.select("wins", "ties", "losses", "higher_is_better").row(0) == counts


# -------------------------- one quantity, or its complement, is read one way round
# unexpectedness@k is 1 - overlap@k (RePlay's formula) and intersection@k is overlap@k
# wherever the lists fill k: both declared higher-is-better, a system's overlap win was
# its unexpectedness loss, and system_agreement found every pair of systems swapped
# between a quantity and its own complement (correlation -1).
_REFERENCE = pl.DataFrame(
    {"query_id": ["q1"] * 4 + ["q2"] * 4, "doc_id": list("abcd") + list("efgh")}
).with_columns(rank=pl.int_range(1, 5).over("query_id"))
_DOCS = {"near": "abcxefxy", "mid": "abxyexyz", "far": "axyzwxyz"}
_RUNS = pl.concat(
    pl.DataFrame({"query_id": ["q1"] * 4 + ["q2"] * 4, "doc_id": list(docs), "system": name})
    for name, docs in _DOCS.items()
).with_columns(rank=pl.int_range(1, 5).over("system", "query_id"))
_JUDGED = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "x", "e"], "relevance": 1})

#: (a, b, how b's value follows a's, the table the two read)
RELATIONS = [
    ("overlap@4", "unexpectedness@4", "complement", "reference"),
    ("overlap@4", "intersection@4", "equal", "reference"),
    ("judged@4", "unjudged@4", "complement", "qrels"),
]


def _per_query(metrics: list[str], table: str) -> pl.DataFrame:
    tables = {"reference": _REFERENCE} if table == "reference" else {"qrels": _JUDGED}
    return irm.evaluate(_RUNS, metrics, systems="system", per_query=True, **tables)


@pytest.mark.parametrize(("a", "b", "relation", "table"), RELATIONS)
def test_the_relation_holds(a: str, b: str, relation: str, table: str) -> None:
    values = _per_query([a, b], table)
    expected = 1.0 - values[a] if relation == "complement" else values[a]
    assert values[b].to_list() == pytest.approx(expected.to_list(), abs=1e-12)


@pytest.mark.parametrize(("a", "b", "relation", "table"), RELATIONS)
def test_the_directions_agree_with_the_relation(a: str, b: str, relation: str, table: str) -> None:
    """A complement is better the other way round, an equal quantity the same way; a
    metric of no direction claims neither."""
    up_a, up_b = irm.parse_metric(a).higher_is_better, irm.parse_metric(b).higher_is_better
    if up_a is None or up_b is None:
        return
    assert (up_a == up_b) is (relation == "equal"), (a, up_a, b, up_b)


def test_system_agreement_reads_the_complement_only_as_told() -> None:
    values = _per_query(["overlap@4", "unexpectedness@4"], "reference")
    message = (
        "metric 'unexpectedness@4' of b has no better direction (neither a higher nor a "
        "lower value is better), so the systems have no best-first order: say which way "
        "to order them with higher_is_better_b=True or higher_is_better_b=False"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(values, values, metric="overlap@4", metric_b="unexpectedness@4")
    told = irm.system_agreement(
        values, values, metric="overlap@4", metric_b="unexpectedness@4", higher_is_better_b=False
    )
    assert told.select("correlation", "swaps", "pairs").row(0) == (1.0, 0, 3)


# ------------------------------------------- the catalogue says who reads "neither"
# compare does not take a reference run, so "compare counts no wins" said nothing true
# of intersection or unexpectedness: the orderings are their readers.
CATALOGUE = docs_hook("catalogue")
BETTER = [
    ("calibration", "neither: compare counts no wins, report marks nothing"),
    ("num_ret", "neither: compare counts no wins, report marks nothing"),
    ("intersection", "neither: system_agreement and plot_swaps order by it only as told"),
    ("unexpectedness", "neither: system_agreement and plot_swaps order by it only as told"),
    ("overlap", "higher"),
    ("rbo", "higher (neither for `kind='max'`; neither for `kind='res'`)"),
    ("logloss", "lower"),
]


@pytest.mark.parametrize(("name", "said"), BETTER)
def test_the_catalogue_says_the_direction_and_its_readers(name: str, said: str) -> None:
    assert CATALOGUE._better(irm.get_metric(name)) == said


# -------------------------- an invented metric's direction reaches every reader
# A metric registered beside the library's (here an error that is precision's formula
# declared lower-is-better, with an alias) is read the way it declares, by its name, its
# alias and its cutoff alike: wins, markers and bold, orderings, the fusion objective.
_ERROR = dataclasses.replace(
    irm.get_metric("precision"), name="my_err", aliases=(Alias("myerr"),), higher_is_better=False
)
_Q = [f"q{i}" for i in range(6)]
_QRELS = pl.DataFrame(  # x is judged too, not relevant
    {"query_id": _Q * 2, "doc_id": ["r"] * 6 + ["x"] * 6, "relevance": [1] * 6 + [0] * 6}
)
_A = pl.DataFrame({"query_id": [q for q in _Q for _ in "12"], "doc_id": ["r", "x"] * 6})
_B = _A.with_columns(doc_id=pl.Series(["x", "y"] * 6))  # never the relevant r: error 0
_A, _B = (
    f.with_columns(rank=pl.Series([1, 2] * 6), score=pl.Series([2.0, 1.0] * 6)) for f in (_A, _B)
)


@pytest.fixture
def invented(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(requests.BY_NAME, "my_err", (_ERROR, None))
    monkeypatch.setitem(requests.BY_NAME, "myerr", (_ERROR, _ERROR.aliases[0]))


@pytest.mark.usefixtures("invented")
@pytest.mark.parametrize("name", ["my_err@2", "myerr@2", "MY_ERR@2"])
def test_an_invented_lower_is_better_metric_is_read_lower(name: str) -> None:
    assert irm.parse_metric(name).higher_is_better is False
    out = irm.compare({"A": _A, "B": _B}, [name], qrels=_QRELS, baseline="A")
    row = out.select("mean", "baseline_mean", "wins", "losses", "higher_is_better").row(0)
    assert row == (0.0, 0.5, 6, 0, False)
    shown = irm.report(out, markers="daggers").to_markdown().splitlines()
    assert shown[2:4] == ["| A | 0.5000 |", "| B | **0.0000**† |"]
    runs = pl.concat([_A.with_columns(system=pl.lit("A")), _B.with_columns(system=pl.lit("B"))])
    per_query = irm.evaluate(runs, [name], qrels=_QRELS, systems="system", per_query=True)
    assert direction(name, None) is False
    agreement = irm.system_agreement(per_query, per_query, "tau_ap")
    assert agreement.select("correlation", "swaps").row(0) == (1.0, 0)
    best = irm.optimize_fusion({"A": _A, "B": _B}, name, qrels=_QRELS, method="wsum", step=0.5)
    assert best == {"weights": [0.0, 1.0]}  # B's ranking alone: error 0
