"""trec_eval's catalogue beyond the core metrics (``polars_irmetrics.metrics.trec``).

* Per-query values equal trec_eval's C code (through ``pytrec_eval``) to 1e-9 for every
  measure it exposes (gm_map, gm_bpref, iprec_at_recall, 11pt_avg, relative_P,
  set_relative_P, Rprec_mult, infAP, set_map, num_nonrel_judged_ret, ndcg_rel, Rndcg,
  binG, G, utility), on generated runs and judgments with tied scores, string ids whose
  text order differs from their numeric order, graded and negative labels, queries on
  one side only, empty and all-irrelevant queries, at relevance levels 1 and 2 and with
  a depth (trec_eval -M).
* For what pytrec_eval lacks (rbp, rbp_resid, unj, custom gains), a small reference
  written from trec_eval's documented behaviour (below), itself checked against
  pytrec_eval wherever the two overlap, and hand-computed cases.
* The same values through the expression scope (a judged table in a user's group-by).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import polars as pl
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import MetricParameterError, UnknownMetricError
from polars_irmetrics.metrics.scope import TableScope

from .helpers import by_query, property_settings
from .oracle_cases import Case, CasePools, case_batches, padded, trec_order

#: Each example is a batch of 3.58 cases on average (oracle_cases.case_batches: one
#: evaluation for them all), so a third of the examples a test had with one case an
#: example checks as many cases: 24 examples in place of 70.
SETTINGS = property_settings(24)
TOL = 1e-9
MIN_GEO_MEAN = 0.00001

#: Up to 4 queries; few scores, so that ties are frequent; a query with no relevant
#: document is judged -1 or 0.
POOLS = CasePools(
    queries=["q1", "q2", "q10", "7"],
    scores=[0.0, 0.5, 1.0, 1.5, 2.0],
    not_relevant=[-1, 0],
)

ELEVEN = [i / 10 for i in range(11)]
MULTIPLES = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
CUTS = [5, 10, 15, 20, 30, 100]

#: Our name (trec_eval spelling, used verbatim as the result column) -> pytrec_eval's.
PYTREC_NAMES: dict[str, str] = {
    "gm_map": "gm_map",
    "gm_bpref": "gm_bpref",
    **{f"iprec_at_recall_{x:.2f}": f"iprec_at_recall_{x:.2f}" for x in ELEVEN},
    "11pt_avg": "11pt_avg",
    **{f"relative_P_{k}": f"relative_P_{k}" for k in CUTS},
    "set_relative_P": "set_relative_P",
    **{f"Rprec_mult_{m:.2f}": f"Rprec_mult_{m:.2f}" for m in MULTIPLES},
    "infAP": "infAP",
    "set_map": "set_map",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "Rndcg",
    "binG": "binG",
    "G": "G",
    "utility": "utility",
}
PYTREC_MEASURES = {
    "gm_map", "gm_bpref", "iprec_at_recall", "11pt_avg", "relative_P", "set_relative_P",
    "Rprec_mult", "infAP", "set_map", "num_nonrel_judged_ret", "ndcg_rel", "Rndcg", "binG",
    "G", "utility",
}  # fmt: skip
#: pytrec_eval returns log(max(value, 0.00001)) per query for the geometric means.
LOG_VALUED = {"gm_map", "gm_bpref"}
#: Measures with no pytrec_eval counterpart, checked against the reference below.
REFERENCE_NAMES = ["rbp_resid", "unj_5", "unj_10", "unj_20", "trec_rbp", "trec_rbp(p=0.5)"]


# ------------------------------------------------------------------------ references
def ranked_labels(docs: Mapping[str, float], labels: Mapping[str, int]) -> list[int | None]:
    """The label of each retrieved document in rank order; None: not in the judgments."""
    return [labels.get(d) for d in trec_order(docs)]


def _gain(label: int | None, gains: Mapping[int, float]) -> float:
    if label is None or label < 0:
        return 0.0
    return gains.get(label, float(label))


def _ideal(judged: list[int], gains: Mapping[int, float]) -> list[float]:
    """Positive gains of the judged documents, largest first (sorted exactly)."""
    return sorted((g for g in (_gain(lab, gains) for lab in judged) if g > 0), reverse=True)


def _dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ref_ndcg(ranking: list[int | None], judged: list[int], gains: Mapping[int, float]) -> float:
    """nDCG with a gain table (trec_eval ndcg.l=g,...)."""
    idcg = _dcg(_ideal(judged, gains))
    return _dcg([_gain(lab, gains) for lab in ranking]) / idcg if idcg > 0 else 0.0


def ref_ndcg_rel(
    ranking: list[int | None], judged: list[int], gains: Mapping[int, float]
) -> float:
    """nDCG at each retrieved document with a positive gain; DCG@n for those missed."""
    ideal, got = _ideal(judged, gains), [_gain(lab, gains) for lab in ranking]
    total, dcg, idcg, hits = 0.0, 0.0, 0.0, 0
    for i in range(max(len(got), len(ideal))):
        if i < len(ideal):
            idcg += ideal[i] / math.log2(i + 2)
        if i < len(got):
            dcg += got[i] / math.log2(i + 2)
            if got[i] > 0:
                total += dcg / idcg
                hits += 1
    if idcg > 0:
        total += (len(ideal) - hits) * dcg / idcg
    return total / len(ideal) if total > 0 else 0.0


def ref_rndcg(
    ranking: list[int | None], judged: list[int], gains: Mapping[int, float], level: int
) -> float:
    """nDCG at the ends of the ideal gain levels, and at n when n >= |ideal| + 2."""
    if not any(lab >= level for lab in judged):
        return 0.0
    ideal, got = _ideal(judged, gains), [_gain(lab, gains) for lab in ranking]
    points = []
    for c in range(1, len(ideal) + 1):
        after = ideal[c] if c < len(ideal) else 0.0
        if ideal[c - 1] != after:
            points.append(_dcg(got[:c]) / _dcg(ideal[:c]))
    if ideal and len(got) >= len(ideal) + 2:
        points.append(_dcg(got) / _dcg(ideal))
    return sum(points) / len(points) if points else 0.0


def ref_g(ranking: list[int | None], judged: list[int], gains: Mapping[int, float]) -> float:
    """Each gain over log2(2 + cost so far - gain so far), cost: ideal gains, at least 1."""
    ideal, got = _ideal(judged, gains), [_gain(lab, gains) for lab in ranking]
    total, cost, gained = 0.0, 0.0, 0.0
    for i, g in enumerate(got):
        cost += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
        gained += g
        if g != 0:
            total += g / math.log2(2 + cost - gained)
    return total / sum(ideal) if ideal else 0.0


def ref_unj(ranking: list[int | None], k: int) -> float:
    """Unjudged (not in the judgments, or a negative label) in the top k, over k."""
    return sum(lab is None or lab < 0 for lab in ranking[:k]) / k


def ref_rbp(ranking: list[int | None], judged: list[int], p: float) -> float:
    """trec_eval's rbp: labels as gains, divided by the largest label when above 1."""
    top = max((lab for lab in judged if lab >= 0), default=0)
    scale = top if top > 1 else 1
    return (1 - p) * sum(
        _gain(lab, {}) / scale * p**i for i, lab in enumerate(ranking) if _gain(lab, {}) > 0
    )


def ref_rbp_resid(ranking: list[int | None], p: float) -> float:
    """p^n + (1 - p) * sum of p^i over unjudged positions; 0 when all are judged."""
    unjudged = [i for i, lab in enumerate(ranking) if lab is None or lab < 0]
    if not unjudged:
        return 0.0
    return p ** len(ranking) + (1 - p) * sum(p**i for i in unjudged)


def reference(case: Case, query: str, name: str, level: int = 1) -> float:
    """The reference value of one of REFERENCE_NAMES (or a gain measure) for a query."""
    labels = case.qrels_dict[query]
    ranking = ranked_labels(case.run_dict[query], labels)
    judged = list(labels.values())
    if name.startswith("unj_"):
        return ref_unj(ranking, int(name.removeprefix("unj_")))
    if name == "rbp_resid":
        return ref_rbp_resid(ranking, 0.9)
    if name == "trec_rbp":
        return ref_rbp(ranking, judged, 0.9)
    if name == "trec_rbp(p=0.5)":
        return ref_rbp(ranking, judged, 0.5)
    raise AssertionError(name)


# ------------------------------------------------------------------------ helpers
def _pytrec(case: Case, level: int, depth: int | None = None) -> dict[str, dict[str, float]]:
    run = case.run_dict
    if depth is not None:
        run = {q: {d: docs[d] for d in trec_order(docs)[:depth]} for q, docs in run.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(
        padded(case.qrels_dict), PYTREC_MEASURES, relevance_level=level
    )
    return dict(evaluator.evaluate(run))


def _ours(case: Case, names: list[str], **kwargs: Any) -> dict[str, dict[str, Any]]:
    return by_query(irm.evaluate(case.run, names, qrels=case.qrels, per_query=True, **kwargs))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TOL)


def _check_pytrec(case: Case, level: int, depth: int | None = None) -> None:
    ours = _ours(case, list(PYTREC_NAMES), relevance_level=level, depth=depth)
    theirs = _pytrec(case, level, depth)
    assert set(theirs) == case.both
    bad = []
    for q in sorted(case.both):
        for name, trec_name in PYTREC_NAMES.items():
            a, b = ours[q][name], theirs[q][trec_name]
            if name in LOG_VALUED:  # our per-query value is the base measure itself
                a = math.log(max(a, MIN_GEO_MEAN))
            if not _close(a, b):
                bad.append(f"{q} {name}: ours={a!r} trec_eval={b!r}")
    assert not bad, "disagreement with trec_eval:\n" + "\n".join(bad) + "\n" + case.failing(bad)
    for q in set(ours) - case.both:  # judged, not retrieved: every measure 0
        assert all(ours[q][name] == 0 for name in PYTREC_NAMES), ours[q]


# ------------------------------------------------------------------------ trec_eval
@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@SETTINGS
@given(case=case_batches(POOLS), level=st.sampled_from([1, 2]))
def test_per_query_values_equal_trec_eval(case: Case, level: int) -> None:
    _check_pytrec(case, level)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@settings(SETTINGS, max_examples=17)
@given(case=case_batches(POOLS), depth=st.sampled_from([1, 3, 7]))
def test_depth_equals_trec_eval_max_docs(case: Case, depth: int) -> None:
    _check_pytrec(case, 1, depth)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@SETTINGS
@given(case=case_batches(POOLS))
def test_measures_pytrec_eval_lacks_equal_the_reference(case: Case) -> None:
    ours = _ours(case, REFERENCE_NAMES)
    bad = []
    for q in sorted(case.both):
        for name in REFERENCE_NAMES:
            if not _close(ours[q][name], reference(case, q, name)):
                bad.append(f"{q} {name}: ours={ours[q][name]!r} ref={reference(case, q, name)!r}")
    assert not bad, "\n".join(bad) + "\n" + case.failing(bad)


@SETTINGS
@given(case=case_batches(POOLS), level=st.sampled_from([1, 2]))
def test_gain_reference_equals_trec_eval(case: Case, level: int) -> None:
    # The reference gain measures (used below for custom gains) are trec_eval's.
    theirs = _pytrec(case, level)
    ndcg = pytrec_eval.RelevanceEvaluator(padded(case.qrels_dict), {"ndcg"}).evaluate(
        case.run_dict
    )
    for q in case.both:
        labels = case.qrels_dict[q]
        ranking, judged = ranked_labels(case.run_dict[q], labels), list(labels.values())
        assert _close(ref_ndcg(ranking, judged, {}), ndcg[q]["ndcg"]), case.cases_of([q])
        assert _close(ref_ndcg_rel(ranking, judged, {}), theirs[q]["ndcg_rel"]), case.cases_of([q])
        assert _close(ref_rndcg(ranking, judged, {}, level), theirs[q]["Rndcg"]), case.cases_of(
            [q]
        )
        assert _close(ref_g(ranking, judged, {}), theirs[q]["G"]), case.cases_of([q])


#: Gain tables whose distinct gains are at least 1 apart, so that trec_eval sorts them
#: right too (see test_gains_less_than_1_apart_are_sorted_exactly).
GAIN_TABLES: list[dict[int, float]] = [
    {1: 3.0, 2: 9.0},
    {0: 1.0, 3: -2.0},
    {1: 0.5, 4: 10.0},
    {2: 2.0, 1: 2.0},
]


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@SETTINGS
@given(case=case_batches(POOLS), gains=st.sampled_from(GAIN_TABLES), level=st.sampled_from([1, 2]))
def test_custom_gains_equal_the_reference(case: Case, gains: dict[int, float], level: int) -> None:
    text = ",".join(f"{label}={g}" for label, g in gains.items())
    names = {
        f"trec_ndcg(gains='{text}')": ref_ndcg,
        f"ndcg_rel(gains='{text}')": ref_ndcg_rel,
        f"g(gains='{text}')": ref_g,
        f"rndcg(gains='{text}')": lambda r, j, g: ref_rndcg(r, j, g, level),
    }
    ours = _ours(case, list(names), relevance_level=level)
    bad = []
    for q in sorted(case.both):
        labels = case.qrels_dict[q]
        ranking, judged = ranked_labels(case.run_dict[q], labels), list(labels.values())
        for name, ref in names.items():
            want = ref(ranking, judged, gains)
            if not _close(ours[q][name], want):
                bad.append(f"{q} {name}: ours={ours[q][name]!r} ref={want!r}")
    assert not bad, "\n".join(bad) + "\n" + case.failing(bad)


#: Every measure of this module through the expression scope (TableScope).
SCOPE_NAMES = [
    "gm_map", "gm_bpref", "iprec_at_recall_0.30", "11pt_avg", "relative_P_5",
    "set_relative_P", "Rprec_mult_0.60", "infAP", "set_map", "num_nonrel_judged_ret",
    "ndcg_rel", "Rndcg", "binG", "G", "utility", "trec_rbp", "rbp_resid", "unj_5", "unjudged",
    "trec_ndcg(gains='1=3,2=9')@5", "g(gains='0=1,3=-2')", "rndcg(gains='1=0.5,4=10')",
]  # fmt: skip


@settings(SETTINGS, max_examples=3)  # 0.8 s an example: each metric's own expression
@given(case=case_batches(POOLS), level=st.sampled_from([1, 2]))
def test_expression_scope_equals_evaluate_on_a_judged_table(case: Case, level: int) -> None:
    table = case.run.join(case.qrels, on=["query_id", "doc_id"], how="left").with_columns(
        pl.col("relevance").fill_null(-1)
    )
    via_evaluate = irm.evaluate(
        table, SCOPE_NAMES, per_query=True, order="score", relevance_level=level
    )
    scope = TableScope("relevance", irm.rank_by_score())
    exprs = [irm.parse_metric(n).expr(scope, level).alias(n) for n in SCOPE_NAMES]
    via_scope = table.group_by("query_id").agg(exprs).sort("query_id")
    assert via_scope["query_id"].equals(via_evaluate["query_id"])
    for name in SCOPE_NAMES:
        for q, a, b in zip(
            via_scope["query_id"], via_scope[name], via_evaluate[name], strict=True
        ):
            assert _close(a, b), (name, q, a, b, case.cases_of([q]))


# ------------------------------------------------------------------------ by hand
def _one_query(
    ranking: list[int | None], unretrieved: list[int] = (), **kwargs: Any
) -> pl.DataFrame:
    """Run d1..dn in that order; labels as given (None: not judged) plus judged extras."""
    docs = [f"d{i}" for i in range(1, len(ranking) + 1)]
    run = pl.DataFrame({"query_id": "q", "doc_id": docs, "rank": list(range(1, len(docs) + 1))})
    judged = [(d, lab) for d, lab in zip(docs, ranking, strict=True) if lab is not None]
    judged += [(f"x{i}", lab) for i, lab in enumerate(unretrieved)]
    qrels = pl.DataFrame(
        judged, schema={"doc_id": pl.String, "relevance": pl.Int64}, orient="row"
    ).with_columns(query_id=pl.lit("q"))
    return irm.evaluate(run, list(kwargs.pop("metrics")), qrels=qrels, per_query=True, **kwargs)


def test_interpolated_precision_rounds_up_from_0_1() -> None:
    # Relevant at ranks 1, 4, 6; R = 4 (one never retrieved). iprec at recall x looks
    # from the c-th relevant document on, c = floor(4x + 0.9): 0.3 -> c = 2.
    frame = _one_query(
        [1, 0, None, 1, -1, 2],
        [1],
        metrics=["iprec_at_recall_0.00", "iprec_at_recall_0.30", "iprec_at_recall_0.80"],
    )
    assert frame.row(0)[1:] == (1.0, 0.5, 0.0)  # c = 0, 2, 4 > 3 found
    avg = _one_query([1, 0, None, 1, -1, 2], [1], metrics=["11pt_avg"])["11pt_avg"].item()
    assert avg == pytest.approx((3 * 1.0 + 5 * 0.5 + 3 * 0.0) / 11, abs=1e-15)


def test_rprec_mult_and_relative_precision() -> None:
    frame = _one_query(
        [1, 0, None, 1, -1, 2],
        [1],
        metrics=["Rprec_mult_0.60", "Rprec_mult_1.60", "relative_P_5", "set_relative_P"],
    )
    # R = 4: 0.6 R + 0.9 = 3.3 -> top 3; 1.6 R + 0.9 = 7.3 -> top 7, past the end.
    assert frame.row(0)[1:] == (1 / 3, 3 / 7, 2 / 4, 3 / 4)


def test_infap_counts_pooled_unjudged_documents() -> None:
    # rel, nonrel, not in the judgments, rel, pooled-unjudged (-1), rel; R = 4.
    e = 0.00001
    second = 1 / 4 + (3 / 4) * ((1 + 1 + 0) / 3) * ((1 + e) / (1 + 1 + 2 * e))
    third = 1 / 6 + (5 / 6) * ((2 + 1 + 1) / 5) * ((2 + e) / (2 + 1 + 2 * e))
    value = _one_query([1, 0, None, 1, -1, 2], [1], metrics=["infAP"])["infAP"].item()
    assert value == pytest.approx((1 + second + third) / 4, abs=1e-15)


def test_geometric_means_floor_each_query_at_0_00001() -> None:
    run = pl.DataFrame(
        {"query_id": ["a", "a", "b", "c"], "doc_id": ["x", "y", "x", "x"], "rank": [1, 2, 1, 1]}
    )
    qrels = pl.DataFrame(
        {
            "query_id": ["a", "a", "b", "c", "d"],
            "doc_id": ["x", "y", "z", "x", "x"],
            "relevance": [0, 1, 1, 1, 1],
        }
    )
    # AP: a 1/2, b 0 (floored to 0.00001), c 1; d judged but not retrieved: 0.
    per_query = irm.evaluate(run, ["gm_map", "map"], qrels=qrels, per_query=True)
    assert per_query["gm_map"].to_list() == per_query["map"].to_list() == [0.5, 0.0, 1.0, 0.0]
    mean = irm.evaluate(run, ["gm_map"], qrels=qrels)["gm_map"].item()
    assert mean == pytest.approx((0.5 * 1e-5 * 1.0 * 1e-5) ** 0.25, rel=1e-12)
    dropped = irm.evaluate(run, ["gm_map"], qrels=qrels, unretrieved="drop")["gm_map"].item()
    assert dropped == pytest.approx((0.5 * 1e-5 * 1.0) ** (1 / 3), rel=1e-12)


def test_unjudged_rbp_and_residual_by_hand() -> None:
    # labels 3, unjudged, 0, 1, -1; the judgments' largest label is 3 > 1: gains / 3.
    ranking: list[int | None] = [3, None, 0, 1, -1]
    frame = _one_query(
        ranking,
        metrics=["unj_2", "unj_10", "trec_rbp", "rbp_resid", "trec_rbp(p=0.5)", "unjudged"],
    )
    unj2, unj10, rbp, resid, rbp_half, share = frame.row(0)[1:]
    assert (unj2, unj10, share) == (0.5, 0.2, 0.4)
    assert rbp == pytest.approx(0.1 * (1.0 + (1 / 3) * 0.9**3), abs=1e-15)
    assert rbp_half == pytest.approx(0.5 * (1.0 + (1 / 3) * 0.5**3), abs=1e-15)
    assert resid == pytest.approx(0.9**5 + 0.1 * (0.9 + 0.9**4), abs=1e-15)
    # Binary judgments are not scaled; a fully judged ranking has no residual.
    frame = _one_query([1, 0, 1], metrics=["trec_rbp", "rbp_resid"])
    assert frame.row(0)[1:] == (pytest.approx(0.1 * (1 + 0.81), abs=1e-15), 0.0)


def test_utility_coefficients() -> None:
    # 2 relevant retrieved, 3 others retrieved (one not judged), R = 3.
    ranking: list[int | None] = [1, 0, None, 1, -1]
    names = ["utility", "utility(rel_ret=2, nonrel_ret=-0.5, rel_missed=-1)"]
    frame = _one_query(ranking, [2], metrics=names)
    assert frame.row(0)[1:] == (2 - 3, 2 * 2 - 0.5 * 3 - 1 * 1)
    nonrel = _one_query(ranking, [2], metrics=["num_nonrel_judged_ret", "set_map"])
    assert nonrel.row(0)[1:] == (1, 2 * 2 / (5 * 3))


def test_gains_less_than_1_apart_are_sorted_exactly() -> None:
    # trec_eval sorts its gain table with (int) (g1 - g2): 3.5 and 3 compare equal and
    # its ideal ranking may put the label-2 document (gain 3) first, giving nDCG 1.0.
    # The ideal ranking here is exact: 3.5 first.
    frame = _one_query([2, 1], metrics=["trec_ndcg(gains='1=3.5,2=3')", "ndcg"])
    dcg = 3 + 3.5 / math.log2(3)
    assert frame["trec_ndcg(gains='1=3.5,2=3')"].item() == pytest.approx(
        dcg / (3.5 + 3 / math.log2(3)), abs=1e-15
    )
    assert frame["trec_ndcg(gains='1=3.5,2=3')"].item() < 1.0


def test_gains_may_be_zero_or_negative_and_label_0_may_gain() -> None:
    # 0=1: judged non-relevant documents gain 1 and enter the ideal ranking; 1=-1.
    frame = _one_query([0, 1, 2], [0], metrics=["trec_ndcg(gains='0=1,1=-1')"])
    dcg = 1 - 1 / math.log2(3) + 2 / math.log2(4)
    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert frame.item(0, 1) == pytest.approx(dcg / idcg, abs=1e-15)
    plain = _one_query([0, 1, 2], [0], metrics=["trec_ndcg", "ndcg"])
    assert plain.item(0, 1) == plain.item(0, 2)


def test_rndcg_is_0_without_relevant_documents_at_the_level() -> None:
    frame = _one_query([1, 1], metrics=["Rndcg", "rndcg(rel=2)"])
    assert frame.row(0)[1] == pytest.approx(1.0)
    assert frame.row(0)[2] == 0.0


# ------------------------------------------------------------------------ names
SPELLINGS = [
    ("gm_map", "gm_map"),
    ("gm_ap", "gm_map"),
    ("gm_bpref", "gm_bpref"),
    ("iprec_at_recall_0.10", "iprec(recall=0.1)"),
    ("iprec_at_recall_1.00", "iprec(recall=1.0)"),
    ("IPrec@0.1", "iprec(recall=0.1)"),
    ("iprec(recall=1)", "iprec(recall=1.0)"),
    ("11pt_avg", "11pt_avg"),
    ("11-pt_avg", "11pt_avg"),
    ("relative_P_10", "relative_precision@10"),
    ("set_relative_P", "relative_precision"),
    ("Rprec_mult_0.20", "rprec_mult(multiple=0.2)"),
    ("rprec_mult@2", "rprec_mult(multiple=2.0)"),
    ("infAP", "infap"),
    ("set_map", "set_map"),
    ("SetAP", "set_map"),
    ("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
    ("ndcg_rel", "ndcg_rel"),
    ("Rndcg", "rndcg"),
    ("binG", "bin_g"),
    ("G", "g"),
    ("rbp_resid", "trec_rbp_resid"),
    ("trec_rbp(p=0.95)", "trec_rbp(p=0.95)"),
    ("unj_5", "unjudged@5"),
    ("utility", "utility"),
    ("utility(nonrel_ret=-2)", "utility(nonrel_ret=-2)"),
    ("trec_ndcg(gains='2=9, 1=3.0')@10", "trec_ndcg(gains='1=3,2=9')@10"),
    ('g(gains="1=0.5")', "g(gains='1=0.5')"),
]


@pytest.mark.parametrize(("text", "canonical"), SPELLINGS)
def test_trec_eval_spellings_parse_to_canonical_names(text: str, canonical: str) -> None:
    request = irm.parse_metric(text)
    assert request.name == canonical
    assert irm.parse_metric(canonical) == request
    assert irm.parse_metric(canonical).name == canonical


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("iprec", MetricParameterError, "iprec needs its recall, e.g. iprec(recall=0.2)"),
        ("rprec_mult", MetricParameterError, "Rprec_mult_0.20"),
        ("iprec(recall='x')", MetricParameterError, "recall must be a number"),
        ("IPrec@high", MetricParameterError, "expected a number after '@'"),
        ("trec_ndcg(gains='1:3')", MetricParameterError, "write label=gain pairs"),
        ("trec_ndcg(gains='-1=3')", MetricParameterError, "integer labels >= 0"),
        ("trec_ndcg(gains='1=3,1=4')", MetricParameterError, "label 1 is listed twice"),
        ("trec_ndcg(gains=3)", MetricParameterError, "gains must be a string"),
        ("relative_P", MetricParameterError, "relative_p needs a cutoff"),
        ("gm_map@10", MetricParameterError, "gm_map takes no cutoff"),
        ("P_2.5", UnknownMetricError, "unknown metric 'P_2.5'"),
    ],
)
def test_bad_names(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=_escape(message)):
        irm.parse_metric(text)


def _escape(text: str) -> str:
    return re.escape(text)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("trec_rbp(p=1.5)", "p must be a probability between 0 and 1"),
        ("utility(rel_ret='a')", "rel_ret must be a number"),
    ],
)
def test_bad_parameter_values_fail_when_parsed(metric: str, message: str) -> None:
    """The parameter's declared check (Param.check) refuses it before any plan."""
    with pytest.raises(MetricParameterError, match=_escape(message)):
        irm.parse_metric(metric)


def test_expression_functions() -> None:
    df = pl.DataFrame({"rank": [1, 2, 3, 4, None], "relevance": [1, 0, -1, 1, 2]})
    row = df.select(
        irm.iprec(0.3),
        irm.rprec_mult(0.5),
        irm.relative_precision(k=2),
        irm.unjudged(k=4),
        irm.infap(),
        irm.trec_ndcg(gains={1: 3}),
    ).row(0)
    expected = df.select(
        irm.parse_metric(n).expr(TableScope("relevance", "rank"), 1).alias(n)
        for n in [
            "iprec(recall=0.3)",
            "rprec_mult(multiple=0.5)",
            "relative_P_2",
            "unj_4",
            "infAP",
            "trec_ndcg(gains='1=3')",
        ]
    ).row(0)
    assert row == expected
    assert row[:4] == (1.0, 0.5, 0.5, 0.25)  # R = 3: rprec_mult 0.5 looks at the top 2
