"""RecTools parity, part two (issue 42): unrepeated_reco, intersection, Kotkov's
serendipity, and RecTools' own ``tests/metrics`` replayed through ``irm.evaluate``.

``tests/fixtures/rectools/their_tests.json`` is every metric call RecTools' own test
suite (199 test cases, all passing on RecTools 0.19.0) made, recorded by
``tests/fixtures/rectools/record_their_tests.py`` (a pytest plugin run beside their
suite in a side environment: RecTools cannot share this project's pins): the metric,
its parameters, the tables, and the values RecTools returned. Each call of a metric
this library has is replayed here (:func:`_plan` says how, or why it is not);
``more.json`` (``make_more_fixtures.py``) adds random inputs for the three new metrics.

RecTools' conventions, as this library's options: its test interactions are the
judgments (every row relevant), its training interactions ``interactions=``, its
catalogue the distinct items of ``interactions=`` (``reco_accuracy``, ``mcc``,
``catalog_coverage``) or ``n_items`` (``serendipity(kind='kotkov')``, which reads the
training interactions' popularity too); users are the test users for the accuracy
metrics (the defaults) and the recommendation users for ``Intersection`` and
``Serendipity`` (``unjudged='zero', unretrieved='drop'``).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pandas as pd
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ground.debias import debiased

from .helpers import irm_in_process

HERE = Path(__file__).parent / "fixtures" / "rectools"
THEIRS = json.loads((HERE / "their_tests.json").read_text())
MORE = json.loads((HERE / "more.json").read_text())
TOL = 1e-9
NAMES = {"user_id": "query_id", "item_id": "doc_id"}
RECO_USERS = {"unjudged": "zero", "unretrieved": "drop"}

#: RecTools' classes this library has, by a function of their attributes to the metric.
SIMPLE = {
    "Recall": lambda a: "recall",
    "HitRate": lambda a: "hit_rate",
    "MRR": lambda a: "mrr",
    "CoveredUsers": lambda a: "covered_users",
    "Precision": lambda a: "recall(denominator='capped')" if a["r_precision"] else "precision",
    "F1Beta": lambda a: f"f1_beta(beta={a['beta']!r})",
    "PartialAUC": lambda a: f"partial_auc(insufficient_handling={a['insufficient_handling']!r})",
    "PAP": lambda a: f"pap(insufficient_handling={a['insufficient_handling']!r})",
}


def _plan(call: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | str:
    """How a recorded call replays: (its kind of tables, the metric name with its
    cutoff, evaluate's options); or why it does not (a string)."""
    name, attrs = call["class"], call["attrs"]
    k = attrs.get("k")
    if "raised" in call:
        return "RecTools raised: insufficient_handling='raise', not offered here"
    if attrs.get("debias_config") is not None:
        return "debias_config: debias= draws the kept rows by a seeded hash, not numpy's draw"
    if attrs.get("insufficient_handling") == "raise":
        return "insufficient_handling='raise': not offered (a data error, not a value)"
    refused = _refused(call)
    if refused:
        return refused
    if name in SIMPLE:
        return "judged", f"{SIMPLE[name](attrs)}@{k}", {}
    if name == "MAP":
        if attrs["divide_by_k"]:
            return (
                "MAP(divide_by_k=True): no AP divided by k here (map's denominators: R, "
                "min(R, k), retrieved)"
            )
        return "judged", f"map@{k}", {}
    if name == "NDCG":
        if not attrs["divide_by_achievable"]:
            return (
                "NDCG(divide_by_achievable=False): normalised by k relevant items, not "
                "the achievable ideal"
            )
        return "judged", f"ndcg@{k}", {}
    if name in ("Accuracy", "MCC"):
        return "catalogue", f"{'reco_accuracy' if name == 'Accuracy' else 'mcc'}@{k}", {}
    if name in ("SufficientReco", "UnrepeatedReco"):
        metric = "sufficient_reco" if name == "SufficientReco" else "unrepeated_reco"
        deep = "(deep=True)" if attrs["deep"] else ""
        return "reco", f"{metric}{deep}@{k}", {"check_duplicates": name == "SufficientReco"}
    if name == "Intersection":
        ref_k = "" if attrs["ref_k"] is None else f"(ref_k={attrs['ref_k']})"
        return "reference", f"intersection{ref_k}@{k}", RECO_USERS
    if name == "Serendipity":
        n = len(call["args"]["catalog"]["items"])
        return "serendipity", f"serendipity(kind='kotkov', n_items={n})@{k}", RECO_USERS
    if name == "CatalogCoverage":
        if not attrs["normalize"]:
            return "CatalogCoverage(normalize=False): a count of items, not a share"
        return "coverage", f"catalog_coverage@{k}", {}
    if name == "AvgRecPopularity":
        prev = call["args"]["prev_interactions"]["table"]["item_id"]
        if attrs["normalize"]:
            return "AvgRecPopularity(normalize=True): popularity as a share of the interactions"
        if not set(call["args"]["reco"]["table"]["item_id"]) <= set(prev):
            return (
                "AvgRecPopularity with a cold item: popularity 0 there, refused here "
                "(unseen_items)"
            )
        return "popularity", f"average_popularity@{k}", {}
    reasons = {
        "MeanInvUserFreq": "MeanInvUserFreq: -log2(users of the item / users), not "
        "novelty's share of interactions",
        "IntraListDiversity": "IntraListDiversity: a Hamming distance calculator; "
        "intra_list_diversity is 1 - cosine similarity",
        "MetricAtK": "MetricAtK: a custom metric of their test (unsupported there too)",
    }
    return reasons[name]


def _refused(call: dict[str, Any]) -> str | None:
    """Why the library refuses the call's tables (its checks run for every metric)."""
    args, name = call["args"], call["class"]
    reco = args["reco"]["table"]
    rows = list(zip(reco["user_id"], reco["item_id"], reco["rank"], strict=True))
    if name != "UnrepeatedReco" and len({(u, i) for u, i, _ in rows}) < len(rows):
        return "an item listed twice: refused (check_duplicates; unrepeated_reco measures it)"
    # unrepeated_reco runs with check_duplicates=False (it measures the duplicates),
    # which leaves a rank held twice unchecked too, as for every metric
    if name != "UnrepeatedReco" and len({(u, r) for u, _, r in rows}) < len(rows):
        return "two items at one rank: refused, a ranking orders its items"
    test = (args.get("interactions") or {}).get("table")
    pairs = set(zip(test["user_id"], test["item_id"], strict=True)) if test else set()
    if name == "MAP" and test and len(pairs) < len(test["user_id"]):
        return "MAP with a repeated test interaction: counted twice there (AP above 1)"
    ref = (args.get("ref_reco") or {}).get("table")
    if name == "Intersection" and ref is not None and not ref.get("user_id"):
        return "Intersection with an empty reference: no user there, 0 per query here"
    return None


def _frame(data: dict[str, Any] | None, like: pl.DataFrame | None = None) -> pl.DataFrame:
    table = pl.DataFrame((data or {"table": {}})["table"]).rename(lambda c: NAMES.get(c, c))
    if like is not None:  # an empty table takes the recommendations' dtypes
        table = table.with_columns(
            pl.col(c).cast(like.schema[c]) for c in table.columns if c in like.columns
        )
    return table


#: the frame kinds met in turn along a peer's fixture cases (a covering design of
#: frame kind x case: every case compared once, both kinds met many times; the eager and
#: lazy paths giving the same values is the point of other tests, not of each case's)
KINDS = ("DataFrame", "LazyFrame")


def _run(call: dict[str, Any], lazy: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The per-user values and the means of one replayed call, on lazy or eager input."""
    plan = _plan(call)
    assert not isinstance(plan, str)
    kind, metric, options = plan
    args = call["args"]
    reco = _frame(args["reco"]).with_columns(pl.col("rank").cast(pl.Int64))
    wrap = (lambda f: f.lazy()) if lazy else (lambda f: f)
    tables: dict[str, Any] = {}
    if kind in ("judged", "catalogue", "serendipity"):
        test = _frame(args["interactions"], reco).select("query_id", "doc_id")
        # the judgments hold each (user, item) once; RecTools' tests with a repeated
        # test interaction count it once too (test_when_duplicates_in_interactions)
        tables["qrels"] = wrap(test.unique().with_columns(relevance=pl.lit(1)))
    if kind in ("catalogue", "coverage"):
        items = pl.Series("doc_id", args["catalog"]["items"], dtype=reco.schema["doc_id"])
        tables["interactions"] = wrap(
            pl.DataFrame({"query_id": -1}).join(items.to_frame(), how="cross")
        )
    if kind in ("serendipity", "popularity"):
        tables["interactions"] = wrap(_frame(args["prev_interactions"], reco))
    if kind == "reference":
        tables["reference"] = wrap(
            _frame(args["ref_reco"], reco).with_columns(pl.col("rank").cast(pl.Int64))
        )
    given = args["interactions"]["table"] if "interactions" in args else {}
    empty = kind in ("judged", "catalogue", "serendipity") and not given.get("user_id")
    with warnings.catch_warnings():
        if empty:  # their tests without test interactions: no judged query here
            warnings.simplefilter("ignore", irm.CoverageWarning)
        per_user = None
        if kind not in ("reco", "coverage", "popularity"):
            per_user = irm.evaluate(wrap(reco), [metric], per_query=True, **tables, **options)
        means = irm.evaluate(wrap(reco), [metric], **tables, **options)
        out = [f.collect() if isinstance(f, pl.LazyFrame) else f for f in (per_user, means)]
    return out[0], out[1]


def _several(call: dict[str, Any]) -> bool:
    """Whether the call compares with several references (calc_metrics' dict)."""
    return "tables" in (call["args"].get("ref_reco") or {})


def _calls(single_reference: bool = True) -> list[tuple[str, int]]:
    out = []
    for node, calls in THEIRS["calls"].items():
        for i, call in enumerate(calls):
            multiple = call["class"] == "Intersection" and _several(call)
            if not isinstance(_plan(call), str) and not multiple:
                out.append((node, i))
    return out


def _close(ours: float | None, theirs: float | None) -> bool:
    if theirs is None or math.isnan(theirs):  # NaN there: no value (null) here
        return ours is None
    return ours is not None and math.isclose(ours, theirs, rel_tol=0.0, abs_tol=TOL)


@pytest.mark.parametrize(
    ("frame_kind", "node", "index"),
    [(KINDS[n % 2], node, index) for n, (node, index) in enumerate(_calls())],
    ids=lambda v: str(v),
)
def test_their_tests_replayed(frame_kind: str, node: str, index: int) -> None:
    call = THEIRS["calls"][node][index]
    per_user, means = _run(call, frame_kind == "LazyFrame")
    label = means.columns[-1]
    returned = call["returned"]
    if call["method"] == "calc_per_user" and per_user is None:  # a whole-table metric
        values = [v for v in returned["values"] if not math.isnan(v)]
        mean = sum(values) / len(values) if values else math.nan
    elif call["method"] == "calc_per_user":
        ours = dict(per_user.select("query_id", label).drop_nulls().iter_rows())
        theirs = {
            u: v for u, v in zip(returned["users"], returned["values"], strict=True)
            if not math.isnan(v)
        }  # fmt: skip
        assert sorted(ours) == sorted(theirs), (node, label)
        for user, value in theirs.items():
            assert _close(ours[user], value), (node, label, user, ours[user], value)
        mean = sum(theirs.values()) / len(theirs) if theirs else math.nan
    elif call["method"] == "calc":
        mean = returned
    else:  # calc_metrics: the value under the metric's name in their mapping
        mean = returned[call["name"]]
    assert _close(means[label].item(), mean), (node, label, means[label].item(), mean)


def test_their_intersection_with_several_references(frame_kind: str) -> None:
    # calc_metrics with a dict of references: one value per reference, "name_reference"
    calls = [
        c for calls in THEIRS["calls"].values() for c in calls
        if c["class"] == "Intersection" and _several(c)
    ]  # fmt: skip
    assert len(calls) == 1
    (call,) = calls
    reco = _frame(call["args"]["reco"])
    wrap = (lambda f: f.lazy()) if frame_kind == "LazyFrame" else (lambda f: f)
    plan = _plan(call)
    assert not isinstance(plan, str)
    metric = plan[1]
    for name, table in call["args"]["ref_reco"]["tables"].items():
        ref = _frame(table, reco)
        got = irm.evaluate(wrap(reco), [metric], reference=wrap(ref), **RECO_USERS)
        value = (got.collect() if isinstance(got, pl.LazyFrame) else got)[metric].item()
        assert _close(value, call["returned"][f"{call['name']}_{name}"]), name


def _coverage() -> tuple[Counter[str], dict[str, str]]:
    """Their test cases by how much of them is replayed, and the reasons for the rest."""
    kinds: Counter[str] = Counter()
    reasons: dict[str, str] = {}
    for node in THEIRS["outcomes"]:
        calls = THEIRS["calls"].get(node, [])
        plans = [_plan(c) for c in calls]
        missed = [p for p in plans if isinstance(p, str)]
        if not calls:
            kinds["no metric value"] += 1
            continue
        kinds["covered" if not missed else "partly" if len(missed) < len(plans) else "not"] += 1
        for reason in missed:
            reasons.setdefault(reason.split(":")[0], node)
    return kinds, reasons


def test_how_many_of_their_tests_are_covered() -> None:
    assert THEIRS["rectools"] == "0.19.0"
    assert Counter(THEIRS["outcomes"].values()) == {"passed": 199}
    kinds, reasons = _coverage()
    # covered: every metric value the test case computes is replayed above; partly: some
    # (test_scoring's calc_metrics also asks for IntraListDiversity and others); not:
    # debiased values, a 'raise' handling, or a metric defined otherwise here; no metric
    # value: their checks of errors, of the distance calculators and of the debiasing
    # of the interactions themselves
    # (three of their SufficientReco and CatalogCoverage cases put two items at one
    # rank: refused here as a rank held twice is for every metric; the one
    # CatalogCoverage(normalize=False) case among them)
    assert dict(kinds) == {"covered": 53, "partly": 19, "not": 49, "no metric value": 78}
    assert sorted(reasons) == [
        "AvgRecPopularity with a cold item",
        "AvgRecPopularity(normalize=True)",
        "Intersection with an empty reference",
        "IntraListDiversity",
        "MAP with a repeated test interaction",
        "MAP(divide_by_k=True)",
        "MeanInvUserFreq",
        "MetricAtK",
        "NDCG(divide_by_achievable=False)",
        "RecTools raised",
        "an item listed twice",
        "debias_config",
        "insufficient_handling='raise'",
        "two items at one rank",
    ]


# ----------------------------------------------------------------- random inputs
def _more_tables(case: dict[str, Any], name: str) -> pl.DataFrame:
    # every column holds integers (a table may be empty)
    return pl.DataFrame(case[name], schema=dict.fromkeys(case[name], pl.Int64)).rename(
        lambda c: NAMES.get(c, c)
    )


def _check(per_user: pl.DataFrame | None, means: pl.DataFrame, label: str, theirs: Any) -> None:
    pairs = zip(theirs["users"], theirs["values"], strict=True)
    expected = {u: v for u, v in pairs if not math.isnan(v)}
    if per_user is not None:
        ours = dict(per_user.select("query_id", label).drop_nulls().iter_rows())
        assert sorted(ours) == sorted(expected), label
        for user, value in expected.items():
            assert _close(ours[user], value), (label, user)
    assert _close(means[label].item(), theirs["mean"]), label


def _collected(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


# a random case whose run misses every judged item is part of the comparison (0 there)
@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize(
    ("frame_kind", "case"), [(KINDS[c % 2], c) for c in range(len(MORE["cases"]))]
)
def test_random_inputs_equal_rectools(frame_kind: str, case: int) -> None:
    data = MORE["cases"][case]
    wrap = (lambda f: f.lazy()) if frame_kind == "LazyFrame" else (lambda f: f)
    reco, ref = _more_tables(data, "reco"), _more_tables(data, "ref_reco")
    repeated = _more_tables(data, "repeated")
    test = _more_tables(data, "interactions").with_columns(relevance=pl.lit(1))
    train = _more_tables(data, "prev_interactions")
    n = len(data["catalog"])
    # every cutoff's labels of one table and options in one call (per user and means),
    # each label's values checked on their own against RecTools' (_check names it)
    checks: dict[str, list[tuple[str, Any]]] = {"ref": [], "repeated": [], "history": []}
    for values in data["values"]:
        k = values["k"]
        for ref_k in (None, 1, 4):
            label = f"intersection@{k}" if ref_k is None else f"intersection(ref_k={ref_k})@{k}"
            checks["ref"].append((label, values[f"intersection(ref_k={ref_k})"]))
        for deep in (False, True):
            label = f"unrepeated_reco(deep=True)@{k}" if deep else f"unrepeated_reco@{k}"
            checks["repeated"].append((label, values[f"unrepeated_reco(deep={deep})"]))
        label = f"serendipity(kind='kotkov', n_items={n})@{k}"
        checks["history"].append((label, values["serendipity"]))
    given: dict[str, dict[str, Any]] = {
        "ref": {"reference": wrap(ref), **RECO_USERS},
        "history": {"qrels": wrap(test), "interactions": wrap(train), **RECO_USERS},
    }
    for name, kwargs in given.items():
        labels = [label for label, _ in checks[name]]
        per_user = _collected(irm.evaluate(wrap(reco), labels, per_query=True, **kwargs))
        means = _collected(irm.evaluate(wrap(reco), labels, **kwargs))
        for label, theirs in checks[name]:
            _check(per_user, means, label, theirs)
    labels = [label for label, _ in checks["repeated"]]
    means = _collected(irm.evaluate(wrap(repeated), labels, check_duplicates=False))
    for label, theirs in checks["repeated"]:
        _check(None, means, label, theirs)


# ----------------------------------------------------------------- worked examples
def test_serendipity_kotkov_by_hand() -> None:
    # RecTools' docstring: catalogue i1..i4; training popularity i1 (3 users) rank 1,
    # i2 (2) rank 2; u4 is recommended i2 (relevant) at 1 and i3 (cold, not relevant) at 2
    train = pl.DataFrame({"query_id": ["u1", "u1", "u2", "u2", "u3"],
                          "doc_id": ["i1", "i2", "i1", "i2", "i1"]})  # fmt: skip
    test = pl.DataFrame({"query_id": ["u4"], "doc_id": ["i2"], "relevance": [1]})
    reco = pl.DataFrame({"query_id": ["u4", "u4"], "doc_id": ["i2", "i3"], "rank": [1, 2]})
    labels = ["serendipity(kind='kotkov', n_items=4)@1", "serendipity(kind='kotkov', n_items=4)@2",
              "serendipity(kind='kotkov')@1"]  # fmt: skip
    got = irm.evaluate(reco, labels, qrels=test, interactions=train)
    n = 4
    gain = max((n + 1 - 1) / n - (n + 1 - 2) / n, 0)  # rank 1, popularity rank 2: 1/4
    # without n_items: the catalogue is the training items, i1 and i2 (n = 2)
    assert got.row(0)[1:] == (gain, gain / 2, max((2 + 1 - 1) / 2 - (2 + 1 - 2) / 2, 0))


def test_unrepeated_reco_by_hand() -> None:
    # user 1 lists item 7 twice in its top 3; user 2 none twice; user 3 nothing within 3
    reco = pl.DataFrame({"query_id": [1, 1, 1, 2, 2, 3], "doc_id": [7, 8, 7, 7, 9, 7],
                         "rank": [1, 2, 3, 1, 2, 5]})  # fmt: skip
    got = irm.evaluate(reco, ["unrepeated_reco@3", "unrepeated_reco(deep=True)@3",
                              "unrepeated_reco@2"], check_duplicates=False)  # fmt: skip
    assert got.row(0) == ((0 + 1) / 2, (2 / 3 + 1) / 2, 1.0)


def test_unrepeated_reco_needs_the_duplicates_kept() -> None:
    reco = pl.DataFrame({"query_id": [1, 1], "doc_id": [7, 7], "rank": [1, 2]})
    message = (
        "column 'doc_id' of the run: query 1 has 1 repeated listing(s) "
        "(each of a document listed before in the query); each "
        "(query, document) pair may appear once (trec_eval refuses such runs too): keep "
        "one row per document, e.g. .unique(['query_id', 'doc_id'])"
    )
    with pytest.raises(irm.DuplicateError, match="^" + re.escape(message) + "$"):
        irm.evaluate(reco, ["unrepeated_reco@2"])


def test_intersection_by_hand() -> None:
    # RecTools' test input, user 5 given distinct ranks: the run's top 3 by rank value
    # (a rank may be skipped) against the reference's top ref_k
    reco = pl.DataFrame({"query_id": [1, 1, 4, 4, 4, 5, 5, 5], "doc_id": [1, 2, 1, 2, 3, 1, 2, 3],
                         "rank": [3, 1, 2, 1, 8, 1, 2, 3]})  # fmt: skip
    ref = pl.DataFrame({"query_id": [1, 1, 4, 4, 4, 5, 5], "doc_id": [1, 3, 1, 2, 3, 1, 3],
                        "rank": [3, 2, 5, 1, 2, 3, 1]})  # fmt: skip
    got = irm.evaluate(reco, ["intersection@3", "intersection(ref_k=6)@3"], reference=ref,
                       per_query=True)  # fmt: skip
    # user 1: run {2, 1}, reference top 3 {3, 1}: 1/2; user 4: run {2, 1}, reference top
    # 3 {2, 3}: 1/2, top 6 {2, 3, 1}: 1; user 5: run {1, 2, 3}, reference {3, 1}: 2/3
    assert got.rows() == [(1, 1 / 2, 1 / 2), (4, 1 / 2, 1.0), (5, 2 / 3, 2 / 3)]


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        (
            "intersection(ref_k=0)@3",
            "metric 'intersection(ref_k=0)@3': ref_k must be a whole number >= 1, the "
            "reference's cutoff (RecTools' ref_k; by default the request's k), got 0",
        ),
        (
            "intersection",
            "metric 'intersection': intersection needs a cutoff, e.g. 'intersection@10'",
        ),
        (
            "serendipity(n_items=5)@3",
            "metric 'serendipity(n_items=5)@3': n_items is the catalogue size of "
            "kind='kotkov' (RecTools' Serendipity); kind='recommenders' reads none: drop "
            "n_items or pass kind='kotkov'",
        ),
        (
            "serendipity(kind='kotkov', item_sim_measure='item_cooccurrence_count')@3",
            "metric \"serendipity(kind='kotkov', item_sim_measure='item_cooccurrence_count')"
            "@3\": item_sim_measure is the similarity of kind='recommenders'; kind='kotkov' "
            "compares ranks with popularity ranks: drop item_sim_measure",
        ),
        (
            "serendipity(kind='kotkov', n_items=0.5)@3",
            "metric \"serendipity(kind='kotkov', n_items=0.5)@3\": n_items must be a number "
            ">= 1, the catalogue size (RecTools' len(catalog)), got 0.5",
        ),
        (
            "unrepeated_reco(deep=maybe)@3",
            "metric 'unrepeated_reco': deep must be True or False (RecTools' deep: the share "
            "of distinct items among the top k, instead of whether all are distinct), got "
            "'maybe'",
        ),
    ],
)
def test_refusals(metric: str, message: str) -> None:
    reco = pl.DataFrame({"query_id": [1], "doc_id": [1], "rank": [1]})
    kwargs: dict[str, Any] = {"reference": reco} if metric.startswith("intersection") else {}
    with pytest.raises(irm.IrmError, match="^" + re.escape(message)):
        irm.evaluate(reco, [metric], **kwargs)


def test_kotkov_serendipity_reads_the_interactions() -> None:
    reco = pl.DataFrame({"query_id": [1], "doc_id": [1], "rank": [1]})
    qrels = reco.drop("rank").with_columns(relevance=pl.lit(1))
    message = (
        "metric \"serendipity(kind='kotkov')@3\" reads the interaction history (where "
        "item popularity, the catalogue and each user's history come from): pass "
        "interactions=..."
    )
    with pytest.raises(irm.MetricParameterError, match="^" + re.escape(message)):
        irm.evaluate(reco, ["serendipity(kind='kotkov')@3"], qrels=qrels)


def test_kotkov_serendipity_sits_beside_the_accuracy_metrics_by_score(frame_kind: str) -> None:
    # by score, positions 1..n (ties broken by doc_id descending): the same values as
    # the ranks they give
    ranked = pl.DataFrame({"query_id": [1, 1, 1, 2], "doc_id": [3, 1, 2, 1], "rank": [1, 2, 3, 1]})
    scored = ranked.with_columns(score=4.0 - pl.col("rank")).drop("rank")
    qrels = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [1, 2, 1], "relevance": 1})
    train = pl.DataFrame({"query_id": [9, 9, 8], "doc_id": [1, 2, 1]})
    labels = ["serendipity(kind='kotkov', n_items=5)@2", "P@2"]
    wrap = (lambda f: f.lazy()) if frame_kind == "LazyFrame" else (lambda f: f)
    by_rank = _collected(
        irm.evaluate(wrap(ranked), labels, qrels=qrels, interactions=train, per_query=True)
    )
    by_score = _collected(
        irm.evaluate(wrap(scored), labels, qrels=qrels, interactions=train, per_query=True)
    )
    assert by_rank.equals(by_score)
    # query 1: doc 1 (relevant, popularity rank 1) at 2: (5+1-2)/5 - (5+1-1)/5 < 0 -> 0;
    # query 2: doc 1 at 1: (5/5 - 5/5) = 0
    assert by_rank["serendipity(kind='kotkov', n_items=5)@2"].to_list() == [0.0, 0.0]


# ------------------------------------------------- RePlay's unexpectedness (reference=)
UNEXPECTED = json.loads((HERE / "unexpectedness.json").read_text())


@pytest.mark.parametrize(
    ("frame_kind", "case"), [(KINDS[c % 2], c) for c in range(len(UNEXPECTED["cases"]))]
)
def test_unexpectedness_equals_replay(frame_kind: str, case: int) -> None:
    data = UNEXPECTED["cases"][case]
    wrap = (lambda f: f.lazy()) if frame_kind == "LazyFrame" else (lambda f: f)
    names = {"item_id": "doc_id", "rating": "score"}
    recs = pl.DataFrame(data["recs"]).rename(names)
    base = pl.DataFrame(data["base"]).rename(names)
    # every cutoff's label in one call (per user and means), each checked on its own
    labels = [f"unexpectedness@{values['k']}" for values in data["values"]]
    kwargs: dict[str, Any] = {"reference": wrap(base), **RECO_USERS}
    per_user = _collected(irm.evaluate(wrap(recs), labels, per_query=True, **kwargs))
    means = _collected(irm.evaluate(wrap(recs), labels, **kwargs))
    for label, values in zip(labels, data["values"], strict=True):
        _check(per_user, means, label, values)


def test_unexpectedness_by_hand() -> None:
    # user 1: top 2 {1, 2} against the base's {2, 5}: one shared; user 2: none shared;
    # user 3: no base list, 0 as RePlay (unjudged='zero')
    run = pl.DataFrame({"query_id": [1, 1, 1, 2, 3], "doc_id": [1, 2, 3, 1, 1],
                        "score": [3.0, 2.0, 1.0, 1.0, 1.0]})  # fmt: skip
    base = pl.DataFrame({"query_id": [1, 1, 2, 4], "doc_id": [2, 5, 7, 1],
                         "score": [3.0, 2.0, 1.0, 1.0]})  # fmt: skip
    got = irm.evaluate(run, ["unexpectedness@2", "overlap@2"], reference=base,
                       per_query=True, **RECO_USERS)  # fmt: skip
    assert got.rows() == [(1, 1 - 1 / 2, 1 / 2), (2, 1 - 0 / 2, 0.0), (3, 0.0, 0.0)]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "serendipity(kind='kotkov')@3",
            "metric 'serendipity' (kind='kotkov') reads the run's ranks, the judgments and "
            "the interactions' popularity: compute it with irm.evaluate(recommendations, "
            "metrics, qrels=test_interactions, interactions=train)",
        ),
        (
            "unrepeated_reco@3",
            "metric 'unrepeated_reco' describes a whole recommendation table, not one query: "
            "compute it with irm.beyond_accuracy(recommendations, ...) or irm.evaluate",
        ),
        (
            "intersection@3",
            "rank similarity compares a run with a reference run, not with judgments; compute "
            "it with irm.evaluate(run, ['rbo(p=0.9)', 'jaccard@10'], reference=other_run)",
        ),
    ],
)
def test_no_formula_over_one_querys_judged_rows(name: str, message: str) -> None:
    request = irm.parse_metric(name)
    with pytest.raises(irm.MetricParameterError, match="^" + re.escape(message) + "$"):
        request.metric.compute(cast(Any, None), request.params(1.0))


# --------------------------------------------------------- debias= (RecTools' DebiasConfig)
DEBIAS = MORE["debias"]


def _counts(table: pl.DataFrame) -> dict[int, int]:
    return dict(table.group_by("doc_id").len().iter_rows())


@pytest.mark.parametrize("case", range(len(DEBIAS)))
def test_debias_keeps_what_rectools_keeps(case: int) -> None:
    # the border, the items cut down and how many rows each keeps equal RecTools'; the
    # rows of every other item are all kept (the draw of which rows differs: seeded hash
    # here, numpy's generator there)
    data = DEBIAS[case]
    test = _more_tables(data, "interactions")
    for config in data["configs"]:
        theirs = _more_tables(config, "kept")
        ours = debiased(
            test.lazy(),
            irm.Debias(config["iqr_coef"], config["random_state"]),
            "query_id",
            "doc_id",
        ).collect()
        assert _counts(ours) == _counts(theirs), config["iqr_coef"]
        cut = {item for item, n in _counts(test).items() if n != _counts(theirs).get(item)}
        untouched = [pl.col("doc_id").is_in(list(cut)).not_()]
        assert (
            ours.filter(untouched)
            .sort(ours.columns)
            .equals(theirs.filter(untouched).sort(ours.columns))
        )
        assert ours.join(test, on=["query_id", "doc_id"], how="anti").height == 0  # a subset


@pytest.mark.parametrize(("frame_kind", "case"), [(KINDS[c % 2], c) for c in range(len(DEBIAS))])
def test_debiased_metrics_equal_rectools_where_nothing_is_drawn(
    frame_kind: str, case: int
) -> None:
    # where no item is over the border RecTools' debiased values are its plain ones, and
    # so are these; where one is, they are these metrics on the rows the hash keeps
    data = DEBIAS[case]
    wrap = (lambda f: f.lazy()) if frame_kind == "LazyFrame" else (lambda f: f)
    reco = _more_tables(data, "reco")
    test = _more_tables(data, "interactions").with_columns(relevance=pl.lit(1))
    labels = ["precision@3", "recall@3", "map@3"]
    for config in data["configs"]:
        debias = irm.Debias(config["iqr_coef"], config["random_state"])
        got = _collected(irm.evaluate(wrap(reco), labels, qrels=wrap(test), debias=debias))
        kept = debiased(test.lazy(), debias, "query_id", "doc_id").collect()
        by_hand = irm.evaluate(reco, labels, qrels=kept)
        assert got.select(labels).equals(by_hand.select(labels))
        if len(config["kept"]["user_id"]) == test.height:  # nothing drawn
            for label in labels:
                assert _close(got[label].item(), config["means"][label]), label


def test_debias_by_hand_is_deterministic() -> None:
    # item a: 5 users, b..e one each: quartiles 1 and 1, border int(1 + 1.5 * 0) = 1: a
    # keeps one row, the same one whatever the row order, chosen by the seed
    qrels = pl.DataFrame({"query_id": [1, 2, 3, 4, 5, 1, 2, 3, 4],
                          "doc_id": ["a"] * 5 + ["b", "c", "d", "e"], "relevance": 1})  # fmt: skip
    run = pl.DataFrame({"query_id": [1, 2, 3, 4, 5], "doc_id": "a", "rank": 1})
    kept = {
        seed: irm.evaluate(
            run, ["P@1"], qrels=qrels, debias=irm.Debias(1.5, seed), per_query=True
        )["P@1"].to_list()
        for seed in range(6)
    }
    for seed, values in kept.items():
        # one user keeps item a (user 5 has no other judgment: without a it is not judged)
        assert values.count(1.0) == 1
        assert set(values) == {0.0, 1.0}
        shuffled = irm.evaluate(run, ["P@1"], qrels=qrels.reverse(), debias=irm.Debias(1.5, seed),
                                per_query=True)  # fmt: skip
        assert shuffled["P@1"].to_list() == values
    assert len({tuple(v) for v in kept.values()}) > 1  # the seed decides which user


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"debias": irm.Debias(-0.5)},
            irm.InvalidValueError,
            "debias=Debias(iqr_coef=-0.5, ...): iqr_coef must be a finite number >= 0 "
            "(RecTools' DebiasConfig.iqr_coef, e.g. 1.5), got -0.5",
        ),
        (
            {"debias": irm.Debias(1.5, -1)},
            irm.InvalidValueError,
            "debias=Debias(..., random_state=-1): random_state must be an integer >= 0, the "
            "seed of the draw of the rows kept, got -1",
        ),
        (
            {"debias": 1.5},
            irm.InvalidValueError,
            "debias must be irm.Debias(iqr_coef=..., random_state=...) or None, got 1.5",
        ),
    ],
)
def test_debias_refusals(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    run = pl.DataFrame({"query_id": [1], "doc_id": [1], "rank": [1]})
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        irm.evaluate(run, ["P@1"], qrels=run.with_columns(relevance=pl.lit(1)), **kwargs)


def test_debias_is_refused_beside_metrics_that_do_not_read_the_judgments() -> None:
    run = pl.DataFrame({"query_id": [1], "doc_id": [1], "rank": [1]})
    message = (
        "debias=Debias(iqr_coef=1.5, random_state=0) is not read by metric "
        "'sufficient_reco@1': only the ranking metrics of a run and judgments (ndcg, map, "
        "recall...) read it"
    )
    with pytest.raises(irm.InvalidValueError, match="^" + re.escape(message)):
        irm.evaluate(run, ["sufficient_reco@1"], debias=irm.Debias())


def test_debias_from_the_command_line(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 a 1 1.0 x\n" for q in range(1, 6)))
    qrels = tmp_path / "qrels.txt"
    pairs = [(q, "a") for q in range(1, 6)] + [(1, "b"), (2, "c"), (3, "d"), (4, "e")]
    qrels.write_text("".join(f"{q} 0 {d} 1\n" for q, d in pairs))
    command = ["evaluate", str(run), "--qrels", str(qrels), "-m", "P@1", "--debias", "1.5:3",
               "--format", "csv"]  # fmt: skip
    done = irm_in_process(*command)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    table = irm.evaluate(
        pl.DataFrame({"query_id": [str(q) for q in range(1, 6)], "doc_id": "a", "rank": 1}),
        ["P@1"],
        qrels=pl.DataFrame(
            {
                "query_id": [str(q) for q, _ in pairs],
                "doc_id": [d for _, d in pairs],
                "relevance": 1,
            }
        ),
        debias=irm.Debias(1.5, 3),
    )
    assert out.splitlines()[-1].endswith(str(table["P@1"].item()))
    bad = irm_in_process(*command[:-4], "--debias", "high")
    assert bad.returncode == 2
    assert (
        "expected IQR_COEF or IQR_COEF:SEED, a finite number >= 0 and an integer seed >= 0, "
        "e.g. 1.5 or 1.5:7, got 'high'" in bad.stderr
    )


def test_out_of_core_gives_the_same_numbers(tmp_path: Path) -> None:
    # the run and judgments evaluated in 2 buckets (spilled to Parquet) and in one plan
    data = MORE["cases"][0]
    reco = _more_tables(data, "reco")
    test = _more_tables(data, "interactions").with_columns(relevance=pl.lit(1))
    train = _more_tables(data, "prev_interactions")
    labels = [
        f"serendipity(kind='kotkov', n_items={len(data['catalog'])})@3",
        "partial_auc(insufficient_handling='exclude')@2",
        "pap(insufficient_handling='exclude')@2",
        "recall@3",
    ]
    kwargs: dict[str, Any] = {"qrels": test, "interactions": train, "debias": irm.Debias(0.5)}
    one = irm.evaluate(reco, labels, buckets=None, **kwargs)
    two = irm.evaluate(reco, labels, buckets=2, spill_dir=str(tmp_path), **kwargs)
    assert one.equals(two)


def test_debias_is_refused_on_dask(client: Any) -> None:
    # each part holds some queries only: the border would be a part's, so it is refused
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    frame = pd.DataFrame({"query_id": [1], "doc_id": [1], "rank": [1]})
    run = dd.from_pandas(frame, npartitions=1)
    qrels = dd.from_pandas(frame.drop(columns="rank").assign(relevance=1), npartitions=1)
    message = (
        "debias= reads the quartiles of every item's users over all the judgments, and on "
        "Dask each part holds some queries only: down-sample the judgments first "
        "(polars_irmetrics.ground.debias.debiased) or evaluate with polars_irmetrics.evaluate"
    )
    with pytest.raises(irm.InvalidValueError, match="^" + re.escape(message) + "$"):
        irm_dask.evaluate(run, ["P@1"], qrels=qrels, debias=irm.Debias())


def test_both_kinds_of_serendipity_in_one_call() -> None:
    # kind='kotkov' goes the offline route beside P@2, the default kind the beyond-accuracy
    # route; n = 2 (i1, i2 in the interactions), popularity ranks i1 1 (4 users), i2 2
    train = pl.DataFrame({"query_id": ["u1", "u1", "u2", "u2", "u3", "u4"],
                          "doc_id": ["i1", "i2", "i1", "i2", "i1", "i1"]})  # fmt: skip
    test = pl.DataFrame({"query_id": ["u1", "u1", "u2", "u2", "u3", "u4"],
                         "doc_id": ["i1", "i2", "i2", "i3", "i2", "i2"]}).with_columns(
        relevance=pl.lit(1)
    )  # fmt: skip
    reco = pl.DataFrame({"query_id": ["u1", "u1", "u2", "u2", "u3", "u4"],
                         "doc_id": ["i1", "i2", "i2", "i1", "i1", "i2"],
                         "rank": [1, 2, 1, 2, 1, 1]})  # fmt: skip
    labels = [
        "serendipity(kind='kotkov')@2",
        "serendipity(item_sim_measure='item_cooccurrence_count')@2",
    ]
    got = irm.evaluate(reco, labels, qrels=test, interactions=train)
    # u1: i1 at 1: 2/2 - 2/2 = 0, i2 at 2: 1/2 - 1/2 = 0; u2: i2 at 1: 2/2 - 1/2, i1 not
    # relevant -> 1/4; u3: i1 not relevant -> 0; u4: i2 at 1 -> 1/2 (one row)
    assert got[labels[0]].item() == (0 + 1 / 4 + 0 + 1 / 2) / 4
    assert got[labels[1]].item() is not None
