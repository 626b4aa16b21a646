"""Peers' variants, each a named parameter equal to its peer (issue 29).

* scikit-learn's ``dcg_score`` / ``ndcg_score`` defaults: tie-averaged gains
  (``ignore_ties=False``) and ``log_base``: ``dcg(ties='average', log_base=b)@k`` and
  ``ndcg(ties='average', ideal='retrieved')@k`` (aliases ``dcg_score``, ``ndcg_score``),
  tested against the installed scikit-learn on random runs with tied scores, graded
  labels and queries without a relevant document; through ``irm.evaluate`` (DataFrame
  and LazyFrame) and the expression functions.

scikit-learn reads one array of labels and one of scores per query: the candidates are
the retrieved documents, an unjudged one labelled 0. Each query's arrays are padded
with one document of label 0 scored below all the others (a gain of 0 at the bottom
changes no DCG and no ideal), so a query with one document can be scored (scikit-learn
refuses nDCG of one document) and the queries stack into one matrix for the mean.
"""

from __future__ import annotations

import json
import math
import re

import ir_measures
import numpy as np
import polars as pl
import pytest
import ranx
from hypothesis import given, settings
from sklearn.metrics import dcg_score, ndcg_score

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.publish import report
from polars_irmetrics.comparison.report import render_report, with_std
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.io.files import sample_paths

from .helpers import by_query, property_settings
from .oracle_cases import Case, CasePools, RunDict, case_batches, cases, nested, padded, trec_order

#: Each example is a batch of 3.58 cases on average (oracle_cases.case_batches: one
#: evaluation for them all), so a third of the examples a test had with one case an
#: example checks as many cases: 7 examples in place of 20.
SETTINGS = property_settings(7)
POOLS = CasePools(queries=["q1", "q2", "q10"], scores=[0.0, 0.5, 1.0, 2.0], not_relevant=[0])
TOL = 1e-9
CUTOFFS = [None, 1, 3, 5]


# ------------------------------------------------------------------------ scikit-learn
def _sklearn_arrays(case: Case, query: str, width: int) -> tuple[list[float], list[float]]:
    """scikit-learn's ``y_true`` and ``y_score`` of one query, padded to ``width``."""
    labels = dict(
        case.qrels.filter(pl.col("query_id") == query).select("doc_id", "relevance").iter_rows()
    )
    rows = case.run.filter(pl.col("query_id") == query).select("doc_id", "score").rows()
    y_true = [float(labels.get(d, 0)) for d, _ in rows]
    y_score = [s for _, s in rows]
    low = min(y_score) - 1.0
    pad = width - len(rows)
    return y_true + [0.0] * pad, y_score + [low - i for i in range(pad)]


def _sklearn_names(k: int | None) -> dict[str, tuple[str, dict[str, object]]]:
    at = "" if k is None else f"@{k}"
    return {
        f"ndcg_score{at}": ("ndcg", {}),
        f"dcg_score{at}": ("dcg", {}),
        f"dcg(ignore_ties=False, log_base=10){at}": ("dcg", {"log_base": 10}),
    }


def _sklearn(
    kind: str, y_true: np.ndarray, y_score: np.ndarray, k: int | None, **kw: object
) -> float:
    if kind == "ndcg":
        return float(ndcg_score(y_true, y_score, k=k))
    return float(dcg_score(y_true, y_score, k=k, **kw))  # type: ignore[arg-type]


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(SETTINGS)
@given(case=case_batches(POOLS, negative=False))
@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize("lazy", [False, True])
def test_sklearn_dcg_ndcg_per_query_and_mean(case: Case, k: int | None, lazy: bool) -> None:
    names = _sklearn_names(k)
    both = sorted(case.both)
    if not both:
        return
    width = 1 + max(case.run.filter(pl.col("query_id") == q).height for q in both)
    arrays = [_sklearn_arrays(case, q, width) for q in both]
    y_true = np.array([a[0] for a in arrays])
    y_score = np.array([a[1] for a in arrays])
    run = case.run.filter(pl.col("query_id").is_in(both))
    qrels = case.qrels.filter(pl.col("query_id").is_in(both))
    tied_names = list(names)
    args = (run.lazy(), qrels.lazy()) if lazy else (run, qrels)
    per_query = irm.evaluate(args[0], tied_names, qrels=args[1], per_query=True, order="score")
    mean = irm.evaluate(args[0], tied_names, qrels=args[1], order="score")
    if lazy:
        assert isinstance(per_query, pl.LazyFrame)
        assert isinstance(mean, pl.LazyFrame)
        per_query, mean = per_query.collect(), mean.collect()
    ours = by_query(per_query)
    bad = []
    for name in tied_names:
        kind, kw = names[name]
        for i, q in enumerate(both):
            theirs = _sklearn(kind, y_true[i : i + 1], y_score[i : i + 1], k, **kw)
            if not math.isclose(ours[q][name], theirs, abs_tol=TOL):
                bad.append(f"{q} {name}: ours={ours[q][name]!r} sklearn={theirs!r}")
        theirs = _sklearn(kind, y_true, y_score, k, **kw)
        if not math.isclose(mean[name].item(), theirs, abs_tol=TOL):
            bad.append(f"mean {name}: ours={mean[name].item()!r} sklearn={theirs!r}")
    assert not bad, "\n".join(bad) + "\n" + case.failing(bad)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(SETTINGS)
@given(case=case_batches(POOLS, negative=False, ties=False))
def test_sklearn_ignore_ties_true_is_the_untied_ndcg(case: Case) -> None:
    # without tied scores every order agrees: ignore_ties=True is ideal='retrieved'
    both = sorted(case.both)
    if not both:
        return
    width = 1 + max(case.run.filter(pl.col("query_id") == q).height for q in both)
    ours = by_query(
        irm.evaluate(
            case.run.filter(pl.col("query_id").is_in(both)),
            ["ndcg(ideal='retrieved')@3", "ndcg(ignore_ties=True, ideal='retrieved')@3"],
            qrels=case.qrels,
            per_query=True,
        )
    )
    for q in both:
        y_true, y_score = _sklearn_arrays(case, q, width)
        theirs = float(ndcg_score([y_true], [y_score], k=3, ignore_ties=True))
        assert math.isclose(ours[q]["ndcg(ideal='retrieved')@3"], theirs, abs_tol=TOL), case
        assert (
            ours[q]["ndcg(ignore_ties=True, ideal='retrieved')@3"]
            == ours[q]["ndcg(ideal='retrieved')@3"]
        )


@settings(SETTINGS)
@given(case=case_batches(POOLS, negative=False))
def test_sklearn_through_the_expression_functions(case: Case) -> None:
    # a judged table: the run with each document's label (0 unjudged), in a group-by
    table = case.run.join(case.qrels, on=["query_id", "doc_id"], how="left").with_columns(
        pl.col("relevance").fill_null(0),
        irm.rank_by_score().over("query_id"),
    )
    if table.is_empty():
        return
    got = (
        table.lazy()
        .group_by("query_id")
        .agg(
            irm.ndcg(k=3, ties="average", ideal="retrieved").alias("ndcg"),
            irm.dcg(k=3, ties="average", log_base=10).alias("dcg"),
            irm.idcg(k=3, ideal="retrieved", log_base=10).alias("idcg"),
        )
        .collect()
    )
    for q, ndcg, dcg, idcg in got.select("query_id", "ndcg", "dcg", "idcg").iter_rows():
        rows = table.filter(pl.col("query_id") == q)
        y_true = [[*rows["relevance"].cast(pl.Float64).to_list(), 0.0]]
        y_score = [[*rows["score"].to_list(), min(rows["score"]) - 1.0]]
        assert math.isclose(ndcg, ndcg_score(y_true, y_score, k=3), abs_tol=TOL), case
        assert math.isclose(dcg, dcg_score(y_true, y_score, k=3, log_base=10), abs_tol=TOL), case
        ideal = dcg_score(y_true, y_true, k=3, log_base=10)
        assert math.isclose(idcg, ideal, abs_tol=TOL), case


def test_sklearn_tie_averaging_by_hand() -> None:
    # scores 3, 2, 2, 2, 1: positions 2..4 tie; only b (label 2) of them is relevant,
    # so each of the three positions gets 2/3 of a gain; e (label 1) is at position 5
    run = pl.DataFrame(
        {"query_id": ["q"] * 5, "doc_id": list("abcde"), "score": [3.0, 2.0, 2.0, 2.0, 1.0]}
    )
    qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "e"], "relevance": [2, 1]})
    got = irm.evaluate(run, ["dcg_score@3", "dcg_score", "dcg(log_base=10)@3"], qrels=qrels)
    share = 2 / 3
    assert math.isclose(got["dcg_score@3"].item(), share * (1 / math.log2(3) + 1 / math.log2(4)))
    whole = share * sum(1 / math.log2(r + 1) for r in (2, 3, 4)) + 1 / math.log2(6)
    assert math.isclose(got["dcg_score"].item(), whole)
    # trec_eval's order puts d, c, b at 2, 3, 4: b is beyond the cutoff
    assert math.isclose(got["dcg(log_base=10)@3"].item(), 0.0)
    # the df.irm namespace takes the same parameters
    assert run.irm.dcg(3, ties="average", qrels=qrels) == got["dcg_score@3"].item()
    lazy = run.lazy().irm.ndcg(3, ties="average", ideal="retrieved", qrels=qrels)
    assert lazy.collect().item() == irm.evaluate(run, ["ndcg_score@3"], qrels=qrels).item(0, 1)


SKLEARN_REFUSALS = [
    (
        "dcg(log_base=1)@3",
        "metric 'dcg(log_base=1)@3': log_base must be a number above 1 (the discount is "
        "1 / log_b(r + 1)), got 1, e.g. log_base=10",
    ),
    (
        "ndcg(ties='mean')",
        "metric \"ndcg(ties='mean')\": ties='mean' is not allowed; choose one of 'break', "
        "'average'",
    ),
]


@pytest.mark.parametrize(("text", "message"), SKLEARN_REFUSALS)
def test_sklearn_parameters_refused(text: str, message: str) -> None:
    with pytest.raises(MetricParameterError, match="^" + re.escape(message) + "$"):
        irm.parse_metric(text)


@pytest.mark.parametrize("lazy", [False, True])
def test_ties_average_needs_scores(lazy: bool) -> None:
    run = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "rank": [1]})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    message = (
        "metric 'ndcg_score@10': ties='average' shares the gain of documents with the same "
        "score, and the run is ordered by its rank column 'rank'; evaluate by score: "
        "order='score' (and score=... to name the score column)"
    )
    with pytest.raises(MetricParameterError, match="^" + re.escape(message) + "$"):
        irm.evaluate(run.lazy() if lazy else run, ["ndcg_score@10"], qrels=qrels)
    scored = run.rename({"rank": "score"})
    message = (
        "metric 'ndcg_score@10': ties='average' shares the gain of a tie group over its "
        "positions, and depth=5 would cut a group in two; use a cutoff, 'ndcg_score@5', "
        "instead of depth"
    )
    with pytest.raises(MetricParameterError, match="^" + re.escape(message) + "$"):
        irm.evaluate(scored.lazy() if lazy else scored, ["ndcg_score@10"], qrels=qrels, depth=5)
    table = run.with_columns(relevance=pl.lit(1))
    with pytest.raises(ColumnNotFoundError, match=re.escape("column 'score' not found")):
        table.select(irm.dcg(ties="average"))


# ------------------------------------------------------------------------ judged_only
#: ir_measures' measures with judged_only=True (its pytrec_eval provider: trec_eval -J).
JUDGED_ONLY = [
    "P@5",
    "RR",
    "Rprec",
    "AP",
    "AP@5",
    "nDCG",
    "nDCG@5",
    "R@5",
    "SetP",
    "SetF",
    "Success@3",
    "IPrec@0.2",
]
JUDGED_POOLS = CasePools(
    queries=["q1", "q2", "q10"], scores=[0.0, 0.5, 1.0, 2.0], not_relevant=[-1, 0]
)


def _untied(run: RunDict) -> RunDict:
    """Ties broken as trec_eval breaks them (scores n, n-1, ..., 1), for the peer."""
    return {
        q: {d: float(len(docs) - i) for i, d in enumerate(trec_order(docs))}
        for q, docs in run.items()
    }


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
# single cases, 20 of them, as before: batches (7 or 20) did not find a cut-off dropped
# from R@5 (judged_only=True) that these find
@settings(SETTINGS, max_examples=20)
@given(case=cases(JUDGED_POOLS))
@pytest.mark.parametrize("lazy", [False, True])
def test_judged_only_equals_ir_measures(case: Case, lazy: bool) -> None:
    # negative labels included: trec_eval -J (and so ir_measures) removes them as unjudged
    measures = [ir_measures.parse_measure(m)(judged_only=True) for m in JUDGED_ONLY]
    names = [str(m) for m in measures]
    theirs: dict[str, dict[str, float]] = {}
    qrels_dict = padded(case.qrels_dict)
    for m in ir_measures.iter_calc(measures, qrels_dict, _untied(case.run_dict)):
        theirs.setdefault(m.query_id, {})[str(m.measure)] = float(m.value)
    run, qrels = (case.run.lazy(), case.qrels.lazy()) if lazy else (case.run, case.qrels)
    by_name = irm.evaluate(run, names, qrels=qrels, per_query=True, order="score")
    by_option = irm.evaluate(
        run, JUDGED_ONLY, qrels=qrels, per_query=True, order="score", judged_only=True
    )
    if lazy:
        assert isinstance(by_name, pl.LazyFrame)
        assert isinstance(by_option, pl.LazyFrame)
        by_name, by_option = by_name.collect(), by_option.collect()
    ours, option = by_query(by_name), by_query(by_option)
    # trec_eval -J leaves a query whose retrieved documents are all unjudged with no
    # ranking, and its iprec_at_recall divides 0 by 0 (NaN); here it is 0, as every
    # other measure of an empty ranking is there (see the migration guide)
    bad = [
        f"{q} {name}: ours={ours[q][name]!r} ir_measures={value!r}"
        for q in sorted(case.both)
        for name, value in theirs.get(q, {}).items()
        if not math.isclose(ours[q][name], 0.0 if math.isnan(value) else value, abs_tol=TOL)
        or (
            math.isnan(value)
            and (not name.startswith("IPrec") or ours[q]["SetP(judged_only=True)"])
        )
    ]
    assert not bad, "\n".join(bad) + "\n" + case.failing(bad)
    assert [list(v.values()) for v in ours.values()] == [list(v.values()) for v in option.values()]


def test_judged_only_by_hand() -> None:
    # a (label -1: pooled, not judged) and c (no judgment) leave the run; b moves to 1
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    qrels = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "z"], "relevance": [-1, 1, 0]}
    )
    metrics = ["precision@1", "num_ret", "map", "mrr"]
    plain = irm.evaluate(run, metrics, qrels=qrels).row(0, named=True)
    judged = irm.evaluate(run, metrics, qrels=qrels, judged_only=True).row(0, named=True)
    assert plain == {"num_q": 1, "precision@1": 0.0, "num_ret": 3.0, "map": 0.5, "mrr": 0.5}
    assert judged == {"num_q": 1, "precision@1": 1.0, "num_ret": 1.0, "map": 1.0, "mrr": 1.0}
    # a judged table: its own labels say which rows are judged
    table = run.join(qrels, on=["query_id", "doc_id"], how="left").drop_nulls("relevance")
    assert irm.evaluate(table, metrics, judged_only=True).row(0, named=True) == judged


JUDGED_ONLY_REFUSALS = [
    (
        ["AP(judged_only=True)", "P@1"],
        {},
        MetricParameterError,
        "metric 'AP(judged_only=True)' says judged_only=True and 'P@1' does not: it removes "
        "the unjudged documents from the run, for every metric of one evaluation; pass "
        "judged_only=True to irm.evaluate, or evaluate the two lists apart",
    ),
    (
        ["AP(judged_only=maybe)"],
        {},
        MetricParameterError,
        "metric 'AP(judged_only=maybe)': judged_only must be True or False, got 'maybe'",
    ),
    (
        ["map"],
        {"judged_only": "yes"},
        InvalidValueError,
        "judged_only must be True or False, got 'yes'",
    ),
]


@pytest.mark.parametrize(("metrics", "options", "error", "message"), JUDGED_ONLY_REFUSALS)
def test_judged_only_refusals(
    metrics: list[str], options: dict[str, object], error: type[Exception], message: str
) -> None:
    run = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "rank": [1]})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        irm.evaluate(run, metrics, qrels=qrels, **options)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ torchmetrics
# torchmetrics is not a test dependency (from PyPI it pulls a CUDA build of torch), so
# its retrieval module's arithmetic is written out here, from torchmetrics 1.x:
# ``RetrievalMetric.compute`` splits by query; a query whose targets are all 0 gets
# ``empty_target_action`` ('error' raises, 'pos' 1.0, 'neg' 0.0, 'skip' nothing); the
# values are aggregated (mean, torch.median: the lower middle value, min, max), and
# 0.0 when nothing is left. ``retrieval_precision``: top_k = n when None; with
# adaptive_k and top_k > n, top_k = n; relevant in the top_k / top_k.
# ``retrieval_reciprocal_rank``: 1 / position of the first relevant in the top_k.
# A query is the list of its targets in score order (the scores are distinct here).


def _tm_precision(targets: list[int], k: int | None, adaptive: bool) -> float:
    top = len(targets) if k is None else k
    if adaptive and top > len(targets):
        top = len(targets)
    return sum(targets[:top]) / top


def _tm_reciprocal_rank(targets: list[int], k: int | None) -> float:
    top = targets if k is None else targets[:k]
    return 1.0 / (top.index(1) + 1) if 1 in top else 0.0


def _tm_compute(values: list[tuple[list[int], float]], action: str, aggregation: str) -> float:
    res: list[float] = []
    for targets, value in values:
        if not sum(targets):
            if action == "error":
                raise ValueError(
                    "`compute` method was provided with a query with no positive target."
                )
            if action == "pos":
                res.append(1.0)
            elif action == "neg":
                res.append(0.0)
        else:
            res.append(value)
    if not res:
        return 0.0
    ordered = sorted(res)
    return {
        "mean": sum(res) / len(res),
        "median_low": ordered[(len(ordered) - 1) // 2],
        "min": ordered[0],
        "max": ordered[-1],
    }[aggregation]


TM_POOLS = CasePools(queries=["q1", "q2", "q10", "Q3"], scores=[0.0], not_relevant=[0])


def _judged_table(case: Case) -> tuple[pl.DataFrame, dict[str, list[int]]]:
    """torchmetrics' input (indexes, preds, target): the run, each document's target 1
    when judged relevant, else 0; and each query's targets in score order."""
    table = case.run.join(case.qrels, on=["query_id", "doc_id"], how="left").with_columns(
        (pl.col("relevance").fill_null(0) >= 1).cast(pl.Int64).alias("relevance")
    )
    ordered = table.sort(["query_id", "score"], descending=[False, True])
    targets = {
        q: g["relevance"].to_list()
        for (q,), g in ordered.group_by("query_id", maintain_order=True)
    }
    return table, targets


@settings(SETTINGS)
@given(case=case_batches(TM_POOLS, ties=False, negative=False))
@pytest.mark.parametrize("lazy", [False, True])
def test_torchmetrics_precision_reciprocal_rank_empty_and_aggregation(
    case: Case, lazy: bool
) -> None:
    table, targets = _judged_table(case)
    if not targets:  # no query: nothing to compute (torchmetrics has no input either)
        return
    spellings: dict[str, tuple[str, int | None, bool, str, str]] = {}
    # every action with every aggregation on P(adaptive_k=True)@5; the other kinds and
    # cutoffs with one pair each
    for action in ("skip", "neg", "pos"):
        for agg in ("mean", "median_low", "min", "max"):
            opts = f"empty_target_action='{action}', agg='{agg}'"
            spellings[f"P(adaptive_k=True, {opts})@5"] = ("P", 5, True, action, agg)
    pairs = [("skip", "mean"), ("neg", "median_low"), ("pos", "max")]
    for (action, agg), k in zip(pairs, (None, 2, 5), strict=True):
        at = "" if k is None else f"@{k}"
        opts = f"empty_target_action='{action}', agg='{agg}'"
        if k is not None:  # without a cutoff adaptive_k is refused: it changes nothing
            spellings[f"P(adaptive_k=True, {opts}){at}"] = ("P", k, True, action, agg)
        spellings[f"P({opts}){at}"] = ("P", k, False, action, agg)
        spellings[f"RR({opts}){at}"] = ("RR", k, False, action, agg)
    frame = table.lazy() if lazy else table
    got = irm.evaluate(frame, list(spellings), order="score")
    if lazy:
        assert isinstance(got, pl.LazyFrame)
        got = got.collect()
    bad = []
    for name, (kind, k, adaptive, action, agg) in spellings.items():
        values = [
            (t, _tm_precision(t, k, adaptive) if kind == "P" else _tm_reciprocal_rank(t, k))
            for t in targets.values()
        ]
        theirs = _tm_compute(values, action, agg)
        if not math.isclose(got[name].item(), theirs, abs_tol=TOL):
            bad.append(f"{name}: ours={got[name].item()!r} torchmetrics={theirs!r}")
    assert not bad, "\n".join(bad) + "\n" + case.failing(bad)


def test_torchmetrics_adaptive_k_and_empty_by_hand() -> None:
    # q: 2 documents, the first relevant; r: no relevant document
    table = pl.DataFrame(
        {
            "query_id": ["q", "q", "r"],
            "doc_id": ["a", "b", "c"],
            "rank": [1, 2, 1],
            "relevance": [1, 0, 0],
        }
    )
    names = [
        "P@5",
        "P(adaptive_k=True)@5",
        "P(adaptive_k=True, empty_target_action='skip')@5",
        "P(adaptive_k=True, empty_target_action='pos')@5",
    ]
    got = irm.evaluate(table, names, per_query=True)
    assert got.rows() == [("q", 1 / 5, 1 / 2, 1 / 2, 1 / 2), ("r", 0.0, 0.0, None, 1.0)]
    expression = irm.precision(k=5, adaptive_k=True)
    grouped = table.lazy().group_by("query_id").agg(expression).sort("query_id").collect()
    assert grouped.rows() == [("q", 1 / 2), ("r", 0.0)]
    means = irm.evaluate(table.lazy(), names).collect()
    assert means.row(0) == (2, 1 / 10, 1 / 4, 1 / 2, 3 / 4)
    assert table.irm.precision(5, adaptive_k=True) == 1 / 4
    message = (
        "metric \"P(empty_target_action='error')@5\": query 'r' has no relevant document, and "
        "empty_target_action='error' refuses such a query (as torchmetrics' "
        "empty_target_action does; queries without one: 1). Choose "
        "empty_target_action='skip' (left out of the mean), 'neg' (0) or 'pos' (1)"
    )
    for frame in (table, table.lazy()):
        with pytest.raises(QuerySetError, match="^" + re.escape(message) + "$"):
            irm.evaluate(
                frame, ["P(empty_target_action='error')@5"], per_query=True
            ).lazy().collect()
    # with by= segments (several systems in one table), the message names the segment
    systems = pl.concat([table.with_columns(system=pl.lit(name)) for name in ("A", "B")]).filter(
        (pl.col("system") == "A") | (pl.col("query_id") == "q") | (pl.col("rank") > 1)
    )
    message = message.replace("query 'r' has", "query 'r', system='A' has")
    for frame in (systems, systems.lazy()):
        with pytest.raises(QuerySetError, match="^" + re.escape(message) + "$"):
            irm.evaluate(frame, ["P(empty_target_action='error')@5"], by="system").lazy().collect()
    # every query left out: torchmetrics' mean is 0.0
    only_r = table.filter(pl.col("query_id") == "r")
    assert irm.evaluate(only_r, ["P(empty_target_action='skip')@5"]).row(0) == (1, 0.0)


TM_REFUSALS = [
    (
        "P(empty_target_action='drop')@5",
        "metric \"P(empty_target_action='drop')@5\": empty_target_action='drop' is not "
        "allowed; choose one of 'skip', 'neg', 'pos', 'error'",
    ),
    (
        "num_ret(empty_target_action='skip')",
        "metric \"num_ret(empty_target_action='skip')\": empty_target_action sets the value "
        "of a query without a relevant document; num_ret is not a per-query score of the "
        "judgments",
    ),
    (
        "P(adaptive_k=maybe)@5",
        "metric 'P(adaptive_k=maybe)@5': adaptive_k must be True or False, got 'maybe'",
    ),
    (
        "IPrec@10",
        "metric 'IPrec@10': recall must be a recall level between 0 and 1, got 10.0: the "
        "number after '@' in iprec@x (ir_measures' IPrec@x) and iprec_at_recall_x is the "
        "recall level, not a rank cutoff, e.g. iprec(recall=0.2), iprec@0.2 or "
        "iprec_at_recall_0.20; for the precision of the top documents use 'P@10'",
    ),
]


@pytest.mark.parametrize(("text", "message"), TM_REFUSALS)
def test_torchmetrics_and_iprec_refusals(text: str, message: str) -> None:
    with pytest.raises(MetricParameterError, match="^" + re.escape(message) + "$"):
        irm.parse_metric(text)


def test_iprec_at_one_is_recall_one() -> None:
    # ir_measures refuses IPrec@1 (an int where it wants a float); its meaning is recall 1
    assert irm.parse_metric("IPrec@1").name == "iprec(recall=1.0)"


# ------------------------------------------------------------------------ ranx return_std
RANX_STD = ["map", "ndcg@5", "mrr", "precision@3", "recall@5"]


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(SETTINGS, max_examples=2)
@given(case=case_batches(POOLS, negative=False, ties=False))
@pytest.mark.parametrize("lazy", [False, True])
def test_agg_std_is_ranx_return_std(case: Case, lazy: bool) -> None:
    both = sorted(case.both)
    if not both:
        return
    run = case.run.filter(pl.col("query_id").is_in(both))
    qrels = case.qrels.filter(pl.col("query_id").is_in(both))
    theirs = ranx.evaluate(
        ranx.Qrels(nested(qrels, "relevance", int)),
        ranx.Run(nested(run, "score", float)),
        RANX_STD,
        return_std=True,
        threads=1,
    )
    names = [
        *RANX_STD,
        *(
            f"{m.split('@')[0]}(agg='std')" + (f"@{m.split('@')[1]}" if "@" in m else "")
            for m in RANX_STD
        ),
    ]
    got = irm.evaluate(run.lazy() if lazy else run, names, qrels=qrels.lazy() if lazy else qrels)
    if lazy:
        assert isinstance(got, pl.LazyFrame)
        got = got.collect()
    for mean_name, std_name in zip(names[: len(RANX_STD)], names[len(RANX_STD) :], strict=True):
        assert math.isclose(
            got[mean_name].item(), float(theirs[mean_name]["mean"]), abs_tol=TOL
        ), case
        assert math.isclose(got[std_name].item(), float(theirs[mean_name]["std"]), abs_tol=TOL), (
            case
        )


def test_compare_report_shows_ranx_std(capsys: pytest.CaptureFixture[str]) -> None:
    paths, qrels_path = sample_paths()
    runs = {p.stem: pl.read_parquet(p) for p in paths}
    qrels = pl.read_parquet(qrels_path)
    metrics = ["ndcg@10", "map"]
    result = irm.compare(runs, metrics, qrels=qrels, baseline="run_bm25")
    spread = with_std(
        result, irm.compare(runs, metrics, qrels=qrels, baseline="run_bm25", per_query=True)
    )
    # each system's std equals ranx's return_std on the same queries
    judged = nested(qrels, "relevance", int)
    for name, run in runs.items():
        theirs = ranx.evaluate(  # ties broken as here (the sample runs have some)
            ranx.Qrels(judged),
            ranx.Run(_untied(nested(run, "score", float))),
            metrics,
            return_std=True,
            threads=1,
            make_comparable=True,  # a judged query the run lacks scores 0, as here
        )
        column = "baseline_std" if name == "run_bm25" else "std"
        side = "baseline" if name == "run_bm25" else "system"
        for metric in metrics:
            ours = spread.filter((pl.col(side) == name) & (pl.col("metric") == metric))[column]
            assert all(math.isclose(v, float(theirs[metric]["std"]), abs_tol=TOL) for v in ours)
    text = render_report(spread)
    bm25 = spread.filter(pl.col("metric") == "map")["baseline_std"][0]
    assert f"± {bm25:.4f}" in text
    assert "mean ± standard deviation of the per-query values (ddof=0)" in text
    assert "$\\pm$" in render_report(spread, "latex")
    assert f"</span> ± {bm25:.4f}" in report(spread).to_html(plots=False)
    # the command line: --std gives the same report, and std columns in json
    args = ["compare", "--qrels", str(qrels_path), *map(str, paths), "--baseline", "run_bm25"]
    args += ["-m", "ndcg@10", "-m", "map", "--std"]
    assert main([*args, "--format", "json"]) == 0
    printed = pl.DataFrame(json.loads(capsys.readouterr().out))
    assert printed.select("std", "baseline_std").equals(spread.select("std", "baseline_std"))
    options = CompareOptions(baseline="run_bm25")
    assert render_report(printed, options=options) == render_report(spread, options=options)
    with pytest.raises(ColumnNotFoundError, match=re.escape("column 'value' is not in per_query")):
        with_std(result, result)
