"""Beyond accuracy for recommenders: ``irm.beyond_accuracy`` and ``evaluate(interactions=...)``.

Reference values come from Microsoft Recommenders 1.2.1 (``tests/data/
recsys_reference.json``, written by ``scripts/recommenders_reference.py`` in a
throwaway virtual environment: the package pins versions that would change this
project's environment). The metrics recommenders lacks (Gini, ARP, long-tail share)
are checked against their published formulas as explicit arithmetic in numpy.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    IrmError,
    MetricParameterError,
)
from polars_irmetrics.recsys.vectors import pair_similarity_by_self_join, pair_similarity_by_sums
from tests.helpers import property_settings

REFERENCE = json.loads((Path(__file__).parent / "data" / "recsys_reference.json").read_text())
CASES = REFERENCE["cases"]
#: our name -> the key of recommenders' value in the fixture
THEIRS = {
    "catalog_coverage": "catalog_coverage",
    "distributional_coverage": "distributional_coverage",
    "novelty": "novelty",
    "intra_list_diversity": "diversity",
    "serendipity": "serendipity",
}


def _tables(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return (
        pl.DataFrame(case["recommendations"]),
        pl.DataFrame(case["interactions"]),
        pl.DataFrame(case["item_features"]),
    )


def _run(frame_kind: str, recs: pl.DataFrame, metrics: Any, **kwargs: Any) -> pl.DataFrame:
    """``irm.beyond_accuracy`` on eager or lazy inputs; checks the kind of the result."""
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kwargs.items()}
        out = irm.beyond_accuracy(recs.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.beyond_accuracy(recs, metrics, **kwargs)
    assert isinstance(result, pl.DataFrame)
    return result


# --------------------------------------------------------------------------- recommenders
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("cutoff", [None, 3])
def test_equals_microsoft_recommenders(frame_kind: str, case: int, cutoff: int | None) -> None:
    recs, interactions, features = _tables(CASES[case])
    suffix = "" if cutoff is None else f"@{cutoff}"
    names = [f"{name}{suffix}" for name in THEIRS]
    out = _run(frame_kind, recs, names, interactions=interactions, item_features=features)
    assert out.columns == names
    theirs = CASES[case]["values" if cutoff is None else f"values@{cutoff}"]
    for ours, key in THEIRS.items():
        assert out[f"{ours}{suffix}"][0] == pytest.approx(theirs[key], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_serendipity_weighted_by_relevance_equals_recommenders(frame_kind: str, case: int) -> None:
    recs, interactions, features = _tables(CASES[case])
    out = _run(
        frame_kind,
        recs,
        ["serendipity"],
        interactions=interactions,
        item_features=features,
        relevance="relevance",
    )
    expected = CASES[case]["values"]["serendipity_relevance"]
    assert out["serendipity"][0] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_per_item_novelty_equals_historical_item_novelty(case: int) -> None:
    # by= a copy of the item id: each group is one item, its novelty the item's
    recs, interactions, _ = _tables(CASES[case])
    recs = recs.with_columns(pl.col("item_id").alias("slot"))
    out = irm.beyond_accuracy(recs, ["novelty"], interactions=interactions, by="slot")
    theirs = CASES[case]["values"]["historical_item_novelty"]
    for slot, value in out.iter_rows():
        assert value == pytest.approx(theirs[str(slot)], rel=1e-12)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_per_user_diversity_equals_user_diversity(case: int) -> None:
    # by= a copy of the user id: each group is one user; a one-item list has none
    recs, _, features = _tables(CASES[case])
    recs = recs.with_columns(pl.col("user_id").alias("who"))
    out = irm.beyond_accuracy(recs, ["ild"], item_features=features, by="who")
    theirs = CASES[case]["values"]["user_diversity"]
    ours = {str(who): value for who, value in out.iter_rows() if value is not None}
    assert ours.keys() == theirs.keys()
    for who, value in ours.items():
        assert value == pytest.approx(theirs[who], rel=1e-12)
    assert out.filter(pl.col("who") == 0)["ild"].to_list() == [None]  # user 0: one item


# --------------------------------------------------------------------------- arithmetic
def test_worked_example_by_hand(frame_kind: str) -> None:
    # catalogue a, b, c, d with 4, 2, 1, 1 interactions (8 in all)
    interactions = pl.DataFrame(
        {
            "user_id": ["u1", "u1", "u2", "u2", "u3", "u3", "u4", "u4"],
            "item_id": ["a", "b", "a", "c", "a", "b", "a", "d"],
        }
    )
    recs = pl.DataFrame(
        {
            "user_id": ["u1", "u1", "u2", "u2", "u3"],
            "item_id": ["c", "d", "b", "d", "c"],
            "rank": [1, 2, 1, 2, 1],
        }
    )
    names = ["coverage", "entropy", "gini", "novelty", "arp", "aplt(head=0.5)", "coverage@1"]
    out = _run(frame_kind, recs, names, interactions=interactions)
    # c, d, b recommended: 3 of 4 items
    assert out["coverage"][0] == 3 / 4
    # shares 2/5 (c), 2/5 (d), 1/5 (b)
    assert out["entropy"][0] == pytest.approx(-(2 * 0.4 * math.log2(0.4) + 0.2 * math.log2(0.2)))
    # shares ascending over the 4 items: 0 (a), 1/5, 2/5, 2/5 at places j = 1..4
    gini = ((2 - 5) * 0 + (4 - 5) * 0.2 + (6 - 5) * 0.4 + (8 - 5) * 0.4) / 3
    assert out["gini"][0] == pytest.approx(gini)
    # -log2 of 1/8 (c), 1/8 (d), 2/8 (b), 1/8 (d), 1/8 (c)
    assert out["novelty"][0] == pytest.approx((3 + 3 + 2 + 3 + 3) / 5)
    # users' mean popularity: u1 (1 + 1) / 2, u2 (2 + 1) / 2, u3 1
    assert out["arp"][0] == pytest.approx((1 + 1.5 + 1) / 3)
    # head at 0.5: a (nothing more popular) only; b has 4 of 8 above it, not < 4
    assert out["aplt(head=0.5)"][0] == 1.0
    # top 1: c, b, c: 2 of 4 items
    assert out["coverage@1"][0] == 2 / 4


def test_long_tail_head_with_ties() -> None:
    # counts a 3, b 3, c 2, d 1, e 1 (10): above a and b 0, c 6, d and e 8
    interactions = pl.DataFrame(
        {"user_id": [1] * 10, "item_id": ["a"] * 3 + ["b"] * 3 + ["c"] * 2 + ["d", "e"]}
    )
    recs = pl.DataFrame({"user_id": [7, 7, 7, 8], "item_id": ["a", "b", "c", "d"]})
    out = irm.beyond_accuracy(
        recs, ["aplt(head=0.6)", "aplt(head=0.61)", "aplt"], interactions=interactions
    )
    # head=0.6: above < 6: a, b; user 7: c of 3 in the tail, user 8: d
    assert out.row(0) == pytest.approx(((1 / 3 + 1) / 2, (0 + 1) / 2, (1 / 3 + 1) / 2))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_gini_arp_and_tail_share_equal_numpy_arithmetic(case: int) -> None:
    recs, interactions, _ = _tables(CASES[case])
    out = irm.beyond_accuracy(recs, ["gini", "arp", "aplt"], interactions=interactions)
    items, counts = np.unique(interactions["item_id"].to_numpy(), return_counts=True)
    popularity = dict(zip(items.tolist(), counts.tolist(), strict=True))
    recommended = recs["item_id"].to_list()
    shares = np.array([recommended.count(i) for i in items], dtype=float) / len(recommended)
    shares.sort()
    n = len(items)
    gini = ((2 * np.arange(1, n + 1) - n - 1) * shares).sum() / (n - 1)
    assert out["gini"][0] == pytest.approx(gini, rel=1e-12)
    total = counts.sum()
    above = {i: sum(c for c in counts if c > popularity[i]) for i in items.tolist()}
    per_user: dict[int, list[int]] = {}
    for user, item in zip(recs["user_id"], recs["item_id"], strict=True):
        per_user.setdefault(user, []).append(item)
    arp = np.mean([np.mean([popularity[i] for i in its]) for its in per_user.values()])
    tail = np.mean([np.mean([above[i] >= 0.2 * total for i in its]) for its in per_user.values()])
    assert out["arp"][0] == pytest.approx(arp, rel=1e-12)
    assert out["aplt"][0] == pytest.approx(tail, rel=1e-12)


vectors = st.lists(
    st.lists(
        st.floats(-10, 10, allow_nan=False).filter(lambda x: abs(x) > 1e-3), min_size=3, max_size=3
    ),
    min_size=1,
    max_size=8,
)


@property_settings(60)
@given(lists=st.lists(vectors, min_size=1, max_size=4))
def test_pair_sum_identity_equals_every_pair(lists: list[list[list[float]]]) -> None:
    rows = [
        (user, f"i{n}", list(np.array(v) / np.linalg.norm(v)))
        for user, items in enumerate(lists)
        for n, v in enumerate(items)
    ]
    frame = pl.DataFrame(rows, schema=["user", "item", "unit"], orient="row").lazy()
    by_sums = pair_similarity_by_sums(frame, ["user"], "unit").collect().sort("user")
    by_width = pair_similarity_by_sums(frame, ["user"], "unit", 3).collect().sort("user")
    assert by_width["pair_similarity_sum"].to_list() == pytest.approx(
        by_sums["pair_similarity_sum"].to_list(), abs=1e-12
    )
    by_pairs = pair_similarity_by_self_join(frame, ["user"], "item", "unit").collect()
    pairs = dict(by_pairs.iter_rows())
    for user, value in by_sums.iter_rows():
        units = np.array([r[2] for r in rows if r[0] == user])
        gram = units @ units.T
        exact = gram.sum() - np.trace(gram)
        assert value == pytest.approx(exact, abs=1e-12)
        assert pairs.get(user, 0.0) == pytest.approx(exact, abs=1e-12)


# --------------------------------------------------------------------------- behaviour
def test_by_segments_equal_separate_evaluations(frame_kind: str) -> None:
    recs, interactions, features = _tables(CASES[1])
    other = recs.with_columns(pl.col("rank").reverse().over("user_id"))
    both = pl.concat(
        [recs.with_columns(system=pl.lit("a")), other.with_columns(system=pl.lit("b"))]
    )
    names = ["coverage@2", "entropy@2", "novelty@2", "ild@2", "serendipity@2", "arp@2"]
    tables = {"interactions": interactions, "item_features": features}
    out = _run(frame_kind, both, names, by="system", **tables)
    assert out["system"].to_list() == ["a", "b"]
    for system, frame in (("a", recs), ("b", other)):
        alone = irm.beyond_accuracy(frame, names, **tables)
        row = out.filter(pl.col("system") == system).drop("system")
        assert row.row(0) == pytest.approx(alone.row(0), rel=1e-12)


def test_score_order_breaks_ties_by_item_descending() -> None:
    interactions = pl.DataFrame({"user_id": [9, 9, 9], "item_id": ["a", "b", "b"]})
    recs = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "score": [0.5, 0.5]})
    out = irm.beyond_accuracy(recs, ["novelty@1"], interactions=interactions)
    # tie: 'b' (the greater id) comes first; -log2(2/3)
    assert out["novelty@1"][0] == pytest.approx(-math.log2(2 / 3))


def test_single_item_lists_are_left_out_of_diversity() -> None:
    features = pl.DataFrame(
        {"item_id": [1, 2, 3], "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]}
    )
    recs = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 3]})
    out = irm.beyond_accuracy(recs, ["ild"], item_features=features)
    assert out["ild"][0] == 1.0  # user 1's orthogonal pair; user 2 has no pair


def test_array_features_equal_list_features() -> None:
    recs, interactions, features = _tables(CASES[0])
    arrays = features.with_columns(pl.col("features").list.to_array(4))
    names = ["ild", "serendipity"]
    lists = irm.beyond_accuracy(recs, names, interactions=interactions, item_features=features)
    out = irm.beyond_accuracy(recs, names, interactions=interactions, item_features=arrays)
    assert out.row(0) == pytest.approx(lists.row(0), rel=1e-12)


def test_evaluate_puts_them_next_to_accuracy_metrics(evaluate: Any) -> None:
    run = pl.DataFrame(
        {
            "system": ["s1"] * 3 + ["s2"] * 3,
            "query_id": ["u1", "u1", "u2"] * 2,
            "doc_id": ["a", "b", "a", "c", "b", "c"],
            "rank": [1, 2, 1] * 2,
        }
    )
    qrels = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    interactions = pl.DataFrame({"query_id": ["u3"] * 4, "doc_id": ["a", "a", "b", "c"]})
    out = evaluate(
        run,
        ["P@1", "coverage", "novelty@1"],
        qrels=qrels,
        interactions=interactions,
        systems="system",
    )
    assert out.columns == ["system", "num_q", "P@1", "coverage", "novelty@1"]
    assert out.rows() == [
        ("s1", 2, 0.5, 2 / 3, pytest.approx(1.0)),
        ("s2", 2, 0.5, 2 / 3, pytest.approx(2.0)),
    ]
    alone = evaluate(run, ["coverage"], interactions=interactions, systems="system")
    assert alone.rows() == [("s1", 2 / 3), ("s2", 2 / 3)]


def test_registry_lists_and_parses_them() -> None:
    names = {m.name for m in irm.list_metrics() if m.level == "collection"}
    assert names == {
        "catalog_coverage",
        "distributional_coverage",
        "gini_index",
        "novelty",
        "intra_list_diversity",
        "serendipity",
        "average_popularity",
        "long_tail_share",
        "sufficient_reco",  # RecTools' data quality (tests/test_rectools_parity.py)
        "surprisal",  # RePlay's (tests/test_replay_parity.py)
        "categorical_diversity",  # RePlay's (tests/test_replay_parity.py)
        "unrepeated_reco",  # RecTools' data quality (tests/test_rectools_more.py)
    }
    assert irm.parse_metric("Diversity@10").name == "intra_list_diversity@10"
    assert irm.parse_metric("aplt(head=0.1)").name == "long_tail_share(head=0.1)"
    assert irm.get_metric("novelty").reads == ("run", "interactions")
    assert irm.get_metric("ndcg").level == "query"


# --------------------------------------------------------------------------- errors
ITEMS = pl.DataFrame({"item_id": ["a", "b"], "features": [[1.0, 0.0], [0.0, 1.0]]})
RECS = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [1, 2]})
HISTORY = pl.DataFrame({"user_id": [1, 2], "item_id": ["a", "b"]})
Z = HISTORY.head(1).with_columns(item_id=pl.lit("z"))

#: (metrics, recommendations, interactions, item_features, error, message)
ERRORS: list[tuple[list[str], pl.DataFrame, Any, Any, type[Exception], str]] = [
    (
        ["novelty"], RECS, None, None, MetricParameterError,
        "metric 'novelty' reads the interaction history (where item popularity, the "
        "catalogue and each user's history come from): pass interactions=... to "
        "irm.beyond_accuracy",
    ),
    (
        ["ild"], RECS, None, None, MetricParameterError,
        "metric 'ild' reads the items' feature vectors (one row per item: its id and a "
        "list or array of numbers; or its category, for categorical_diversity): pass "
        "item_features=... to irm.beyond_accuracy",
    ),
    (
        ["ndcg@10"], RECS, None, None, MetricParameterError,
        "metric 'ndcg@10' is an accuracy metric, one value per query against judgments: "
        "compute it with irm.evaluate(run, metrics, qrels=...)",
    ),
    (
        ["aplt(head=2)"], RECS, HISTORY, None, MetricParameterError,
        "metric 'aplt(head=2)': head must be a number between 0 and 1 (exclusive), the "
        "share of interactions held by the popular head, got 2",
    ),
    (
        ["ild"], RECS, None, ITEMS.filter(pl.col("item_id") == "a"), InvalidValueError,
        "item 'b' (recommended to user 1) has no row in item_features (1 recommendations "
        "name such items): add its feature vector to item_features=..., or drop it from "
        "the recommendations",
    ),
    (
        ["ild"], RECS, None, ITEMS.with_columns(pl.Series("features", [[1.0, 0.0], []])),
        InvalidValueError,
        "item 'b' has an empty (zero-length) feature vector in item_features (1 items): "
        "give every item a vector of the same length",
    ),
    (
        ["ild"], RECS, None,
        ITEMS.with_columns(pl.Series("features", [[1.0, 0.0], [0.0, 0.0]])),
        InvalidValueError,
        "item 'b' has a zero feature vector in item_features (1 items): it has no "
        "direction, so its cosine similarity is undefined; give it a nonzero vector, or "
        "drop the item",
    ),
    (
        ["ild"], RECS, None,
        ITEMS.with_columns(pl.Series("features", [[1.0, float("nan")], [0.0, 1.0]])),
        InvalidValueError,
        "item 'a' has a NaN, infinite or null value in its feature vector in item_features "
        "(1 items): fix the vector, or drop the item",
    ),
    (
        ["ild"], RECS, None,
        ITEMS.with_columns(pl.Series("features", [[1.0, 0.0], None])),
        InvalidValueError,
        "item 'b' has a null feature vector in item_features (1 items): give every item a "
        "vector, or drop the item",
    ),
    (
        ["ild"], RECS, None,
        ITEMS.with_columns(pl.Series("features", [[1.0, 0.0], [0.0, 1.0, 2.0]])),
        InvalidValueError,
        "the feature vectors in item_features differ in length (2 and 3): give every "
        "item a vector of the same length",
    ),
    (
        ["ild"], RECS, None, pl.concat([ITEMS, ITEMS.head(1)]), DuplicateError,
        "item 'a' has more than one row in item_features (1 extra rows): keep one feature "
        "vector per item",
    ),
    (
        ["ild"], RECS, None, ITEMS.with_columns(pl.col("features").cast(pl.List(pl.String))),
        ColumnTypeError,
        "column 'features' in the item_features has dtype List(String); it must hold one "
        "feature vector per item, a list or array of numbers: e.g. "
        "pl.col('features').cast(pl.List(pl.Float64)), or name the vector column with "
        "features=...",
    ),
    (
        ["coverage"], RECS, HISTORY.clear(), None, InvalidValueError,
        "the interactions table has no rows: the catalogue and the items' popularity come "
        "from it; pass the interactions the recommender learned from as interactions=...",
    ),
    (
        ["novelty"], RECS, HISTORY.filter(pl.col("item_id") == "a"), None, InvalidValueError,
        "item 'b' (recommended to user 1) never occurs in the interactions, so it has no "
        "popularity (1 recommendations name such items): add its interactions to "
        "interactions=..., or drop it from the recommendations",
    ),
    (
        ["serendipity"], RECS, HISTORY.filter(pl.col("user_id") == 2), ITEMS,
        InvalidValueError,
        "user 1 has recommendations but no row in the interactions (2 recommendations of "
        "such users): serendipity compares each recommendation with the user's history; "
        "add the user's interactions to interactions=..., or drop the user from the "
        "recommendations",
    ),
    (
        ["serendipity"], RECS, pl.concat([HISTORY, Z]),
        ITEMS, InvalidValueError,
        "item 'z' (in the history of user 1) has no row in item_features (1 interactions "
        "name such items): serendipity compares each recommendation with every item of the "
        "user's history; add its feature vector to item_features=...",
    ),
    (
        ["coverage"], pl.concat([RECS, RECS.head(1)]), HISTORY, None, DuplicateError,
        "column 'item_id' of the recommendations: query 1 has 1 repeated listing(s) (each "
        "of a document listed before in the query); each (query, document) pair may "
        "appear once (trec_eval refuses such runs too): keep one row per document, e.g. "
        ".unique(['user_id', 'item_id'])",
    ),
    (
        ["coverage@1"], RECS.with_columns(pl.Series("rank", [0, 2])), HISTORY, None,
        InvalidValueError,
        "column 'rank' of the recommendations has 1 rank(s) below 1 in query 1; ranks start "
        "at 1 for the top document: add 1 to 0-based ranks, e.g. pl.col('rank') + 1",
    ),
    (
        ["coverage@1"], RECS.drop("rank").with_columns(score=pl.Series([0.5, float("nan")])),
        HISTORY, None, InvalidValueError,
        "column 'score' of the recommendations has 1 NaN value(s) in query 1; NaN cannot be "
        "ranked: replace them, e.g. pl.col('score').fill_nan(float('-inf'))",
    ),
    (
        ["coverage"], RECS.with_columns(pl.Series("user_id", [1, None])), HISTORY, None,
        InvalidValueError,
        "column 'user_id' of the recommendations has null values; every row needs a "
        "user_id: drop them, e.g. .drop_nulls('user_id')",
    ),
    (
        ["coverage@1"], RECS.drop("rank"), HISTORY, None, ColumnNotFoundError,
        "the recommendations have neither a 'rank' nor a 'score' column to order each "
        "user's list, which a cutoff (@k) needs; name yours with rank=... or score=...",
    ),
    (
        ["coverage"], RECS, HISTORY.with_columns(pl.Series("item_id", [1, 2], pl.UInt32)),
        None, ColumnTypeError,
        "column 'item_id' holds strings in the recommendations (String) but integers in "
        "the interactions (UInt32); cast one side, e.g. pl.col('item_id').cast(pl.String) "
        "on both",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("metrics", "recs", "interactions", "features", "error", "message"), ERRORS
)
def test_bad_input_names_the_fix(
    frame_kind: str,
    metrics: list[str],
    recs: pl.DataFrame,
    interactions: pl.DataFrame | None,
    features: pl.DataFrame | None,
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _run(frame_kind, recs, metrics, interactions=interactions, item_features=features)


def test_evaluate_errors_name_the_argument(evaluate: Any) -> None:
    run = RECS.rename({"user_id": "query_id", "item_id": "doc_id"})
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'novelty' reads the interaction history (where item popularity, the "
            "catalogue and each user's history come from): pass interactions=... to "
            "irm.evaluate"
        ),
    ):
        evaluate(run, ["novelty"])
    history = HISTORY.rename({"user_id": "query_id", "item_id": "doc_id"})
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'novelty' describes a whole recommendation table, not one query: "
            "evaluate it with per_query=False"
        ),
    ):
        evaluate(run, ["novelty"], interactions=history, per_query=True)


def test_the_per_query_path_refuses_them() -> None:
    table = pl.DataFrame({"query_id": ["q"], "rank": [1], "relevance": [1]})
    request = irm.parse_metric("novelty")
    from polars_irmetrics.metrics.scope import TableScope

    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'novelty' describes a whole recommendation table, not one query: "
            "compute it with irm.beyond_accuracy(recommendations, ...) or "
            "irm.evaluate(..., interactions=..., item_features=...)"
        ),
    ):
        table.group_by("query_id").agg(request.expr(TableScope("rank", "relevance"), 1.0))


def test_benchmark_script_runs_at_a_tiny_size(tmp_path: Path) -> None:
    # no time is asserted: the script must run and its plans agree (it exits otherwise)
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "results.md"
    proc = subprocess.run(
        [
            sys.executable,
            "benchmarks/recsys.py",
            *("--users", "50", "--k", "3", "--dim", "4"),
            *("--repeat", "1", "--out", str(out)),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(root / "src")},
    )
    assert proc.returncode == 0, proc.stderr
    assert "| 50 | 3 | 4 |" in out.read_text()


def test_an_empty_catalogue_of_one_group_names_the_group(frame_kind: str) -> None:
    # the interactions carry the by key: each system is measured against its own
    recs = pl.DataFrame({"system": ["a", "b"], "user_id": [1, 1], "item_id": ["x", "x"]})
    history = pl.DataFrame({"system": ["a"], "user_id": [1], "item_id": ["x"]})
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "the interactions table has no rows for system=b: the catalogue and the items' "
            "popularity come from it; pass the interactions the recommender learned from as "
            "interactions=..."
        ),
    ):
        _run(frame_kind, recs, ["coverage"], interactions=history, by="system")
    out = _run(frame_kind, recs.head(1), ["coverage"], interactions=history, by="system")
    assert out.rows() == [("a", 1.0)]


def test_evaluate_keeps_a_group_without_judged_queries() -> None:
    run = pl.DataFrame(
        {"system": ["a", "b"], "query_id": ["q1", "q2"], "doc_id": ["x", "x"], "rank": [1, 1]}
    )
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["x"], "relevance": [1]})
    interactions = pl.DataFrame({"query_id": ["q9"], "doc_id": ["x"]})
    out = irm.evaluate(
        run,
        ["P@1", "coverage"],
        qrels=qrels,
        interactions=interactions,
        by="system",
        unretrieved="drop",
    )
    # system b has no judged query: no accuracy mean (over 0 queries: num_q 0), its
    # coverage all the same
    assert out.rows() == [("a", 1, 1.0, 1.0), ("b", 0, None, 1.0)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"user_id": "item_id"},
            "user_id='item_id' and item_id='item_id' name the same column; each needs its own "
            "column: pass item_id= with the name of the doc_id column",
        ),
        (
            {"relevance": "w"},
            "relevance='w' weighs each recommended item in serendipity, and no metric asked "
            "for reads it ('novelty'): drop relevance= (it would change nothing), or ask for "
            "serendipity@k",
        ),
    ],
)
def test_beyond_accuracy_refuses_in_its_own_keywords(
    options: dict[str, str], message: str
) -> None:
    """The refusals named evaluate's keywords (query_id=, doc_id=,
    serendipity_relevance=), which beyond_accuracy does not take."""
    recs = pl.DataFrame({"user_id": [1, 1, 2], "item_id": ["a", "b", "a"], "w": [1.0] * 3})
    history = pl.DataFrame({"user_id": [1, 2], "item_id": ["a", "b"]})
    with pytest.raises(IrmError, match=f"^{re.escape(message)}$"):
        irm.beyond_accuracy(recs, "novelty", interactions=history, **options)  # type: ignore[arg-type]
