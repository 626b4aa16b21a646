"""Microsoft Recommenders parity (issues 29 and 28): the ranking metrics with
``relevancy_method``, ``r_precision_at_k``, MAP@k's min(k, R), diversity and serendipity
from item co-occurrence, and their convention for cold items (``unseen_items=
'recommenders'``).

Reference values come from Microsoft Recommenders 1.2.1 (``tests/data/
recommenders_parity.json``, written by ``scripts/recommenders_parity.py`` in a throwaway
virtual environment: the package's own requirements would change this project's
environment). The small cases are also worked out by hand below.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import InvalidValueError, MetricParameterError
from tests.helpers import property_settings

REFERENCE = json.loads((Path(__file__).parent / "data" / "recommenders_parity.json").read_text())
COOC = "item_cooccurrence_count"
FEATURES = "item_feature_vector"
SETTINGS = [(c, s) for c in range(len(REFERENCE["ranking"])) for s in range(5)]


def _lazy(frame: pl.DataFrame, frame_kind: str) -> pl.DataFrame | pl.LazyFrame:
    return frame.lazy() if frame_kind == "LazyFrame" else frame


def _collect(out: pl.DataFrame | pl.LazyFrame, frame_kind: str) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    assert isinstance(out, pl.DataFrame)
    return out


# --------------------------------------------------------------------- ranking metrics
def _ranking_tables(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    true = pl.DataFrame(case["rating_true"]).rename({"user_id": "query_id", "item_id": "doc_id"})
    pred = pl.DataFrame(case["rating_pred"]).rename(
        {"user_id": "query_id", "item_id": "doc_id", "prediction": "score"}
    )
    return pred, true


def _named(metric: str, k: int, method: str, threshold: int, *params: str) -> str:
    extra = list(params)
    if method == "by_threshold":
        extra += ["relevancy_method='by_threshold'", f"threshold={threshold}"]
    return f"{metric}({','.join(extra)})@{k}" if extra else f"{metric}@{k}"


@pytest.mark.parametrize(("case", "setting"), SETTINGS)
def test_ranking_metrics_equal_recommenders(frame_kind: str, case: int, setting: int) -> None:
    data = REFERENCE["ranking"][case]
    theirs = data["values"][setting]
    k, method, threshold = theirs["k"], theirs["relevancy_method"], theirs["threshold"]
    run, truth = _ranking_tables(data)
    binary = truth.with_columns(relevance=pl.lit(1))  # every rating_true row is relevant
    ours = {
        "precision_at_k": _named("precision", k, method, threshold),
        "recall_at_k": _named("recall", k, method, threshold),
        "map": _named("map", k, method, threshold),
        "map_at_k": _named("map", k, method, threshold, "denominator='capped'"),
    }
    # precision, recall, map: the mean over the users of both tables
    got = _collect(
        irm.evaluate(
            _lazy(run, frame_kind), list(ours.values()), qrels=_lazy(binary, frame_kind),
            unretrieved="drop",
        ),
        frame_kind,
    )  # fmt: skip
    for name, label in ours.items():
        assert got[label].item() == pytest.approx(theirs[name], abs=1e-12), name
    # ndcg_at_k: the mean over every user of rating_true (one without predictions
    # scores 0, unretrieved='zero'), gains 1 (binary), the rating (raw) or 2^rating - 1
    graded = truth.rename({"rating": "relevance"})
    for score_type, qrels, params in (
        ("binary", binary, ()),
        ("raw", graded, ()),
        ("exp", graded, ("gain='exponential'",)),
    ):
        label = _named("ndcg", k, method, threshold, *params)
        value = irm.evaluate(run, [label], qrels=qrels)[label].item()
        assert value == pytest.approx(theirs[f"ndcg_at_k_{score_type}"], abs=1e-12), score_type


@pytest.mark.parametrize("case", range(len(REFERENCE["ranking"])))
def test_r_precision_at_k_per_user_equals_recommenders_mean_is_over_every_user(
    frame_kind: str, case: int
) -> None:
    data = REFERENCE["ranking"][case]
    run, truth = _ranking_tables(data)
    binary = truth.with_columns(relevance=pl.lit(1))
    for theirs in data["values"]:
        k, method, threshold = theirs["k"], theirs["relevancy_method"], theirs["threshold"]
        label = _named("r_precision", k, method, threshold)
        per_user = _collect(
            irm.evaluate(
                _lazy(run, frame_kind), [label], qrels=_lazy(binary, frame_kind),
                unretrieved="drop", per_query=True,
            ),
            frame_kind,
        )[label]  # fmt: skip
        # Recommenders averages over the users with a hit in the top min(k, R) only
        hits = per_user.filter(per_user > 0)
        assert hits.mean() == pytest.approx(theirs["r_precision_at_k"], abs=1e-12)
        # here every user counts, a user without a hit as 0
        mean = irm.evaluate(run, [label], qrels=binary, unretrieved="drop")[label].item()
        assert mean == pytest.approx(hits.sum() / per_user.len(), abs=1e-12)
        if hits.len() < per_user.len():
            assert mean < theirs["r_precision_at_k"]


def test_ranking_metrics_worked_by_hand(frame_kind: str) -> None:
    # user 1: a, b relevant (R = 2), listed a, b, c; user 2: a, b relevant, listed c, d, e
    truth = pl.DataFrame(
        {"query_id": [1, 1, 2, 2], "doc_id": ["a", "b", "a", "b"], "relevance": [1, 1, 1, 1]}
    )
    run = pl.DataFrame(
        {
            "query_id": [1, 1, 1, 2, 2, 2],
            "doc_id": ["a", "b", "c", "c", "d", "e"],
            "score": [0.9, 0.8, 0.7, 0.9, 0.8, 0.7],
        }
    )
    by = "relevancy_method='by_threshold',threshold=1"
    names = [
        "r_precision@2",
        f"precision({by})@2",
        f"recall({by})@2",
        f"map(denominator='capped',{by})@2",
        f"ndcg({by})@2",
        f"r_precision({by})@2",
        f"r_precision(denominator='capped',{by})@2",
        "map@1",
        "map(denominator='capped')@1",
        "r_precision@1",
        "r_precision(denominator='capped')@1",
    ]
    got = _collect(irm.evaluate(_lazy(run, frame_kind), names, qrels=truth), frame_kind)
    expected = [
        (1.0 + 0.0) / 2,  # Recommenders: 1.0 (user 2, no hit, left out)
        (1 / 2 + 0) / 2,  # the top 1 counts, divided by k = 2
        (1 / 2 + 0) / 2,
        (1 / 2 + 0) / 2,  # P@1 over min(k, R) = 2
        (1 / (1 / math.log2(2) + 1 / math.log2(3)) + 0) / 2,  # DCG@1 / IDCG@2
        (1 / 2 + 0) / 2,  # top min(threshold 1, R 2) = a: one hit over R = 2
        (1 / 2 + 0) / 2,  # capped: over min(k 2, R 2) = 2
        (1 / 2 + 0) / 2,  # map@1 divides by R = 2
        (1 / 1 + 0) / 2,  # map_at_k divides by min(1, 2) = 1
        (1 / 2 + 0) / 2,  # top min(1, 2) = 1: one hit over R = 2
        (1 / 1 + 0) / 2,  # over min(k, R) = 1
    ]
    assert list(got.select(names).row(0)) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        (
            "precision(threshold=3)@2",
            "metric 'precision(threshold=3)@2': threshold=3 applies only with "
            "relevancy_method='by_threshold'; "
            "add it, e.g. precision(relevancy_method='by_threshold',threshold=3)@10, or drop "
            "threshold",
        ),
        (
            "ndcg(relevancy_method='by_threshold',threshold=2)",
            "metric \"ndcg(relevancy_method='by_threshold',threshold=2)\": "
            "relevancy_method='by_threshold' needs a cutoff k (the divisor "
            "Microsoft Recommenders keeps), e.g. ndcg(relevancy_method='by_threshold',"
            "threshold=5)@10",
        ),
        (
            "recall(relevancy_method='by_threshold',threshold=0.5)@2",
            "metric \"recall(relevancy_method='by_threshold',threshold=0.5)@2\": "
            "relevancy_method='by_threshold' needs threshold, a positive whole "
            "number of top items per user, got 0.5. Microsoft Recommenders' by_threshold keeps "
            "each user's top `threshold` items (pandas head), not the items scored above a "
            "threshold: to count only recommendations scored above t, filter the run first, "
            "run.filter(pl.col('score') > t)",
        ),
        (
            "map(relevancy_method='by_threshold')@2",
            "metric \"map(relevancy_method='by_threshold')@2\": "
            "relevancy_method='by_threshold' needs threshold, a positive whole "
            "number of top items per user, got None.",
        ),
        (
            "precision(relevancy_method='score')@2",
            "metric \"precision(relevancy_method='score')@2\": relevancy_method='score' is not "
            "allowed; choose one of 'top_k', 'by_threshold'",
        ),
        (
            "rprec@3",
            "metric 'rprec@3': rprec takes no cutoff; use 'r_precision' without '@3'",
        ),
    ],
)
def test_relevancy_parameters_are_checked(frame_kind: str, metric: str, message: str) -> None:
    run = pl.DataFrame({"query_id": [1], "doc_id": ["a"], "score": [1.0]})
    qrels = pl.DataFrame({"query_id": [1], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        _collect(irm.evaluate(_lazy(run, frame_kind), [metric], qrels=qrels), frame_kind)


# --------------------------------------------------------------- co-occurrence similarity
def _beyond_tables(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return (
        pl.DataFrame(case["recommendations"]),
        pl.DataFrame(case["interactions"]),
        pl.DataFrame(case["item_features"]),
    )


@pytest.mark.parametrize("case", range(len(REFERENCE["cooccurrence"])))
def test_cooccurrence_diversity_and_serendipity_equal_recommenders(
    frame_kind: str, case: int
) -> None:
    data = REFERENCE["cooccurrence"][case]
    recs, history, _ = _beyond_tables(data)
    theirs = data["values"]
    names = [f"diversity(item_sim_measure='{COOC}')", f"serendipity(item_sim_measure='{COOC}')"]
    got = _collect(
        irm.beyond_accuracy(
            _lazy(recs, frame_kind), names, interactions=_lazy(history, frame_kind)
        ),
        frame_kind,
    )
    assert got.row(0) == pytest.approx(
        (theirs[f"diversity_{COOC}"], theirs[f"serendipity_{COOC}"]), abs=1e-12
    )
    # per user: the user id as a `by` key (the interactions, without it, serve every group)
    per_user = irm.beyond_accuracy(
        recs.with_columns(pl.col("user_id").alias("u")), names, interactions=history, by="u"
    )
    diversity = dict(zip(per_user["u"].cast(pl.String), per_user[names[0]], strict=True))
    serendipity = dict(zip(per_user["u"].cast(pl.String), per_user[names[1]], strict=True))
    assert {u: v for u, v in diversity.items() if v is not None} == pytest.approx(
        theirs[f"user_diversity_{COOC}"], abs=1e-12
    )
    assert serendipity == pytest.approx(theirs[f"user_serendipity_{COOC}"], abs=1e-12)


def test_cooccurrence_worked_by_hand(frame_kind: str) -> None:
    # users of each item: 1 -> {u1, u2}, 2 -> {u1, u3}, 3 -> {u2}
    history = pl.DataFrame({"user_id": [1, 1, 2, 2, 3], "item_id": [1, 2, 1, 3, 2]})
    recs = pl.DataFrame({"user_id": [1, 3, 3, 4, 4], "item_id": [3, 1, 3, 1, 2]})
    names = [f"diversity(item_sim_measure='{COOC}')", f"serendipity(item_sim_measure='{COOC}')"]
    got = _collect(
        irm.beyond_accuracy(_lazy(recs, frame_kind), names[:1], interactions=history),
        frame_kind,
    )
    # sim(1, 3) = |{u2}| / sqrt(2 * 1), sim(1, 2) = |{u1}| / sqrt(2 * 2)
    diversity = ((1 - 1 / math.sqrt(2)) + (1 - 1 / 2)) / 2  # users 3 and 4; user 1 has one item
    assert got.item() == pytest.approx(diversity, abs=1e-15)
    recs = recs.filter(pl.col("user_id") != 4)  # user 4 has no history
    got = irm.beyond_accuracy(recs, names[1:], interactions=history)
    user_1 = 1 - (0 + 1 / math.sqrt(2)) / 2  # item 3 against the history 1, 2
    user_3 = ((1 - 1 / 2) + (1 - 0)) / 2  # items 1 and 3 against the history 2
    assert got.item() == pytest.approx((user_1 + user_3) / 2, abs=1e-15)


@given(
    st.lists(
        st.lists(st.integers(0, 5), min_size=1, max_size=5, unique=True), min_size=1, max_size=6
    ),
    st.lists(
        st.lists(st.integers(0, 5), min_size=2, max_size=4, unique=True), min_size=1, max_size=4
    ),
)
@property_settings(30)
def test_cooccurrence_diversity_equals_the_user_item_matrix(
    histories: list[list[int]], lists: list[list[int]]
) -> None:
    seen = sorted({i for h in histories for i in h})
    lists = [[i for i in items if i in seen] for items in lists]
    lists = [items for items in lists if len(items) >= 2]
    if not lists:
        return
    matrix = np.zeros((len(histories), 6))
    for user, items in enumerate(histories):
        matrix[user, items] = 1.0
    norms = np.sqrt(matrix.sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = (matrix.T @ matrix) / np.outer(norms, norms)
    expected = np.mean(
        [1 - np.mean([cosine[i, j] for i in x for j in x if i != j]) for x in lists]
    )
    history = pl.DataFrame(
        {
            "user_id": [u for u, h in enumerate(histories) for _ in h],
            "item_id": [i for h in histories for i in h],
        }
    )
    recs = pl.DataFrame(
        {
            "user_id": [100 + u for u, x in enumerate(lists) for _ in x],
            "item_id": [i for x in lists for i in x],
        }
    )
    got = irm.beyond_accuracy(
        recs, [f"diversity(item_sim_measure='{COOC}')"], interactions=history
    ).item()
    assert got == pytest.approx(expected, abs=1e-12)


# -------------------------------------------------------------------------- cold items
@pytest.mark.parametrize("case", range(len(REFERENCE["cold"])))
def test_unseen_items_recommenders_equals_recommenders(frame_kind: str, case: int) -> None:
    data = REFERENCE["cold"][case]
    recs, history, features = _beyond_tables(data)
    theirs = data["values"]
    names = {
        "novelty": "novelty",
        "catalog_coverage": "catalog_coverage",
        "distributional_coverage": "distributional_coverage",
    }
    for measure in (COOC, FEATURES):
        names[f"diversity_{measure}"] = f"diversity(item_sim_measure='{measure}')"
        names[f"serendipity_{measure}"] = f"serendipity(item_sim_measure='{measure}')"
    got = _collect(
        irm.beyond_accuracy(
            _lazy(recs, frame_kind), list(names.values()), interactions=_lazy(history, frame_kind),
            item_features=_lazy(features, frame_kind), unseen_items="recommenders",
        ),
        frame_kind,
    )  # fmt: skip
    for key, label in names.items():
        assert got[label].item() == pytest.approx(theirs[key], abs=1e-12), key
    assert theirs["catalog_coverage"] > 1  # cold items count, the catalogue does not grow
    # the default refuses the cold items, naming one
    with pytest.raises(InvalidValueError, match="never occurs in the interactions"):
        irm.beyond_accuracy(recs, ["novelty"], interactions=history)


def test_unseen_items_recommenders_worked_by_hand(frame_kind: str) -> None:
    history = pl.DataFrame({"user_id": [1, 1, 2, 2, 3], "item_id": [1, 2, 1, 3, 2]})
    recs = pl.DataFrame({"user_id": [1, 2, 3], "item_id": [9, 2, 9]})  # 9: never seen
    got = _collect(
        irm.beyond_accuracy(
            _lazy(recs, frame_kind), ["novelty", "coverage"], interactions=history,
            unseen_items="recommenders",
        ),
        frame_kind,
    )  # fmt: skip
    # novelty: item 2 (2 of 5 interactions) and two rows of 9 adding 0, over 3 rows;
    # coverage: 2 distinct recommended items (9 among them) over the 3 of the catalogue
    assert got.row(0) == pytest.approx((-math.log2(2 / 5) / 3, 2 / 3), abs=1e-15)
    # serendipity: user 4 (no history) is left out; 9 is similar 0 to every item;
    # features: item 3 has no vector, so its pairs count 0 too
    features = pl.DataFrame({"item_id": [1, 2], "features": [[1.0, 0.0], [0.6, 0.8]]})
    recs = pl.DataFrame({"user_id": [1, 1, 3, 4], "item_id": [3, 9, 1, 1]})
    names = [f"serendipity(item_sim_measure='{COOC}')", "serendipity", "diversity"]
    got = _collect(
        irm.beyond_accuracy(
            _lazy(recs, frame_kind), names, interactions=history, item_features=features,
            unseen_items="recommenders",
        ),
        frame_kind,
    )  # fmt: skip
    cooc = ((1 - (1 / math.sqrt(2) + 0) / 2) + 1) / 2, 1 - 1 / 2  # users 1 and 3
    cosine = (1 + 1) / 2, 1 - 0.6  # user 1: 3 and 9 have no vector; user 3: cos(1, 2)
    # diversity: user 1 lists 3 and 9 (no vectors: similarity 0); users 3 and 4 one item
    assert got.row(0) == pytest.approx((sum(cooc) / 2, sum(cosine) / 2, 1.0), abs=1e-15)


def test_unseen_items_recommenders_refuses_metrics_recommenders_lacks(frame_kind: str) -> None:
    recs = pl.DataFrame({"user_id": [1], "item_id": [1]})
    history = pl.DataFrame({"user_id": [2], "item_id": [1]})
    message = (
        "metric 'arp': unseen_items='recommenders' is Microsoft Recommenders' convention for "
        "their metrics (catalog_coverage, distributional_coverage, novelty, "
        "intra_list_diversity, serendipity); they have no average_popularity, so it has "
        "none: use unseen_items='error' or 'drop'"
    )
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        irm.beyond_accuracy(
            _lazy(recs, frame_kind), ["novelty", "arp"], interactions=history,
            unseen_items="recommenders",
        )  # fmt: skip


def test_cooccurrence_errors_name_the_fix(frame_kind: str) -> None:
    history = pl.DataFrame({"user_id": [1, 2], "item_id": [1, 2]})
    recs = pl.DataFrame({"user_id": [3, 3], "item_id": [1, 7]})
    name = f"diversity(item_sim_measure='{COOC}')"
    message = (
        "item 7 (recommended to user 3) never occurs in the interactions, so its "
        "co-occurrence similarity to any item is undefined (1 recommendations name such "
        "items): add its interactions to interactions=..., drop it from the recommendations "
        "(unseen_items='drop'), or count it similar 0 to every item as Microsoft "
        "Recommenders does (unseen_items='recommenders')"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _collect(
            irm.beyond_accuracy(_lazy(recs, frame_kind), [name], interactions=history),
            frame_kind,
        )
    # the co-occurrence reads the interactions, not the item features
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            f"metric {name!r} reads the interaction history (where item popularity, the "
            "catalogue and each user's history come from): pass interactions=... to "
            "irm.beyond_accuracy"
        ),
    ):
        irm.beyond_accuracy(_lazy(recs, frame_kind), [name])
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric \"diversity(item_sim_measure='jaccard')\": item_sim_measure='jaccard' is "
            "not allowed; choose one of 'item_feature_vector', 'item_cooccurrence_count'"
        ),
    ):
        irm.beyond_accuracy(recs, ["diversity(item_sim_measure='jaccard')"], interactions=history)
    # drop: the cold item 7 leaves user 3 a one-item list, whose diversity is undefined
    dropped = irm.beyond_accuracy(recs, [name], interactions=history, unseen_items="drop")
    assert dropped.item() is None
    kept = irm.beyond_accuracy(recs, [name], interactions=history, unseen_items="recommenders")
    assert kept.item() == 1.0  # 1 and 7 share no user: similarity 0


def test_evaluate_takes_the_cooccurrence_without_item_features(frame_kind: str) -> None:
    history = pl.DataFrame({"query_id": [1, 1, 2, 2, 3], "doc_id": [1, 2, 1, 3, 2]})
    run = pl.DataFrame({"query_id": [3, 3], "doc_id": [1, 3], "rank": [1, 2]})
    qrels = pl.DataFrame({"query_id": [3], "doc_id": [1], "relevance": [1]})
    name = f"diversity(item_sim_measure='{COOC}')"
    got = _collect(
        irm.evaluate(
            _lazy(run, frame_kind), ["precision@1", name], qrels=qrels,
            interactions=_lazy(history, frame_kind),
        ),
        frame_kind,
    )  # fmt: skip
    # sim(1, 3): one user (2) of the two of item 1 and the one of item 3
    assert got.select("precision@1", name).row(0) == pytest.approx((1.0, 1 - 1 / math.sqrt(2)))
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            f"metric {name!r} reads the interaction history (where item popularity, the "
            "catalogue and each user's history come from): pass interactions=... to "
            "irm.evaluate"
        ),
    ):
        irm.evaluate(_lazy(run, frame_kind), [name], qrels=qrels)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")  # random runs
@given(
    st.lists(st.lists(st.integers(0, 2), min_size=0, max_size=8), min_size=1, max_size=5),
    st.integers(1, 6),
    st.integers(1, 9),
    st.integers(0, 3),
)
@property_settings(40)
def test_by_threshold_equals_recommenders_arithmetic(
    lists: list[list[int]], k: int, threshold: int, missing: int
) -> None:
    """Recommenders' formulas per user, written out: the top ``threshold`` count, k divides.

    Labels 0..2 (0: judged non-relevant), ``missing`` relevant items never retrieved per
    user, empty lists and users without a relevant item included.
    """
    run_rows, qrel_rows, expected = [], [], []
    for user, labels in enumerate(lists):
        for rank, label in enumerate(labels, start=1):
            run_rows.append((user, f"d{rank}", rank))
            qrel_rows.append((user, f"d{rank}", label))
        for extra in range(missing):
            qrel_rows.append((user, f"m{extra}", 1))
        if not qrel_rows or qrel_rows[-1][0] != user:
            qrel_rows.append((user, "m", 0))  # judged, so the user is evaluated
        hits = [rank for rank, label in enumerate(labels, start=1) if label > 0]
        big_r = len(hits) + missing
        top = [r for r in hits if r <= threshold]
        gains = [label for label in labels if label > 0] + [1] * missing
        ideal = sorted(gains, reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        dcg = sum(labels[r - 1] / math.log2(r + 1) for r in top)
        ap = sum((i + 1) / r for i, r in enumerate(top))
        expected.append(
            (
                len(top) / k,
                len(top) / big_r if big_r else 0.0,
                ap / min(k, big_r) if big_r else 0.0,
                dcg / idcg if idcg else 0.0,
            )
        )
    ids = {"query_id": pl.Int64, "doc_id": pl.String}
    run = pl.DataFrame(run_rows, schema={**ids, "rank": pl.Int64}, orient="row")
    qrels = pl.DataFrame(qrel_rows, schema={**ids, "relevance": pl.Int64}, orient="row")
    by = f"relevancy_method='by_threshold',threshold={threshold}"
    names = [
        f"precision({by})@{k}",
        f"recall({by})@{k}",
        f"map(denominator='capped',{by})@{k}",
        f"ndcg({by})@{k}",
    ]
    got = irm.evaluate(run, names, qrels=qrels, per_query=True).sort("query_id")
    assert [tuple(row) for row in got.select(names).rows()] == [
        pytest.approx(values, abs=1e-12) for values in expected
    ]


def test_cooccurrence_by_groups_equal_separate_evaluations(frame_kind: str) -> None:
    data = REFERENCE["cooccurrence"]
    parts = []
    for day, case in enumerate(data[:2]):
        recs, history, _ = _beyond_tables(case)
        parts.append((recs.with_columns(day=pl.lit(day)), history.with_columns(day=pl.lit(day))))
    names = [
        f"diversity(item_sim_measure='{COOC}')@3",
        f"serendipity(item_sim_measure='{COOC}')",
        "novelty",
    ]
    recs = pl.concat([r for r, _ in parts]).with_columns(
        rank=pl.int_range(pl.len()).over("day", "user_id") + 1
    )
    history = pl.concat([h for _, h in parts])
    together = _collect(
        irm.beyond_accuracy(
            _lazy(recs, frame_kind), names, interactions=_lazy(history, frame_kind), by="day"
        ),
        frame_kind,
    )
    for day in range(2):
        alone = irm.beyond_accuracy(
            recs.filter(pl.col("day") == day), names,
            interactions=history.filter(pl.col("day") == day),
        )  # fmt: skip
        assert together.filter(pl.col("day") == day).select(names).row(0) == pytest.approx(
            alone.row(0), abs=1e-12
        )
