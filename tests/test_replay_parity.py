"""RePlay parity (issue 42): its beyond-accuracy metrics over recommendations.

Reference values come from RePlay 0.22.0 (``tests/fixtures/replay/expected.json``,
written by ``tests/fixtures/replay/make_fixtures.py`` in a side environment: RePlay
pins polars < 2), on RePlay's own test inputs (their ``tests/metrics/conftest.py``) and
on random ones. RePlay's order (score descending, then item descending) is the
fixtures' ``rank``; its training log is ``interactions=``, and the items' categories a
column of ``item_features=``. Random inputs beyond the fixtures are checked against a
transcription of RePlay's per-user code (``_replay_*`` below).
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import (
    ColumnNotFoundError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from tests.helpers import irm_in_process, property_settings

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "replay" / "expected.json").read_text())
CASES = FIXTURE["cases"]
TOL = 1e-9
NAMES = {
    "surprisal": "surprisal@{k}",
    "novelty": "novelty(kind='replay')@{k}",
    "categorical_diversity": "categorical_diversity@{k}",
    # RePlay's Median mode is agg='median'
    "surprisal_median": "surprisal(agg='median')@{k}",
    "categorical_diversity_median": "categorical_diversity(agg='median')@{k}",
}
#: the frame kinds met in turn along a peer's fixture cases (a covering design of
#: frame kind x case: every case compared once, both kinds met many times; the eager and
#: lazy paths giving the same values is the point of other tests, not of each case's)
KINDS = ("DataFrame", "LazyFrame")


def _tables(
    case: dict[str, Any], order: str = "rank"
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The recommendations (ordered by RePlay's ``rank``, or by its ``score``: untied
    within a user in these cases), the training log and the categories."""
    run = pl.DataFrame(case["recs"]).select("user", "item", order)
    run = run.rename({"user": "query_id", "item": "doc_id"})
    train = pl.DataFrame(case["train"], schema={"user": pl.Int64, "item": pl.Int64})
    categories = pl.DataFrame(case["categories"])
    return (
        run,
        train.select(query_id="user", doc_id="item"),
        categories.select(doc_id="item", category_id="category"),
    )


def _evaluate(
    frame_kind: str, run: pl.DataFrame, metrics: list[str], **tables: Any
) -> pl.DataFrame:
    """``irm.evaluate`` with every table eager or every table lazy."""
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in tables.items()}
        out = irm.evaluate(run.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(run, metrics, **tables)
    assert isinstance(result, pl.DataFrame)
    return result


# a covering design of case x order x frame kind: every case in both orders, each order
# of a case on the other frame kind, so every (case, order), (case, kind) and (order,
# kind) pair is met
@pytest.mark.parametrize(
    ("case", "order", "frame_kind"),
    [
        (c, order, KINDS[(c + n) % 2])
        for c in range(len(CASES))
        for n, order in enumerate(("rank", "score"))
    ],
    ids=[f"{c['name']}-{order}" for c in CASES for order in ("rank", "score")],
)
def test_equal_to_replay_on_its_fixtures_and_random_inputs(
    frame_kind: str, case: int, order: str
) -> None:
    data = CASES[case]
    run, train, categories = _tables(data, order)
    labels = [n.format(k=v["k"]) for v in data["values"] for n in NAMES.values()]
    out = _evaluate(frame_kind, run, labels, interactions=train, item_features=categories)
    assert out.columns == labels
    for values in data["values"]:
        for name, label in NAMES.items():
            ours = out[label.format(k=values["k"])][0]
            assert ours == pytest.approx(values[name], abs=TOL, rel=0), (name, values["k"])


PER_USER = {k: v for k, v in NAMES.items() if not k.endswith("_median")}


@pytest.mark.parametrize(
    ("frame_kind", "case"),
    [(KINDS[c % 2], c) for c in range(len(CASES))],
    ids=[c["name"] for c in CASES],
)
def test_per_query_is_replays_per_user_mode(frame_kind: str, case: int) -> None:
    """``per_query=True``: one row per user, RePlay's ``PerUser`` (its users: those of
    the recommendations; for novelty, those of the history, one without
    recommendations valued 1); a user RePlay leaves out is null here."""
    data = CASES[case]
    run, train, categories = _tables(data)
    labels = [n.format(k=v["k"]) for v in data["values"] for n in PER_USER.values()]
    out = _evaluate(
        frame_kind, run, labels, interactions=train, item_features=categories, per_query=True
    )
    assert out.columns == ["query_id", *labels]
    for values in data["values"]:
        for name, label in PER_USER.items():
            column = label.format(k=values["k"])
            ours = dict(out.select("query_id", column).drop_nulls().iter_rows())
            theirs = dict(values["per_user"][name])
            assert ours.keys() == {int(u) for u in theirs}, (name, values["k"])
            for user, value in theirs.items():
                assert ours[int(user)] == pytest.approx(value, abs=TOL, rel=0), (name, user)


def test_the_fixtures_hold_replays_own_expected_values() -> None:
    """RePlay's tests/metrics/test_metrics.py asserts these (to 1e-5): the fixtures are
    their inputs, computed by their code."""
    by_name = {c["name"]: {v["k"]: v for v in c["values"]} for c in CASES}
    theirs = [
        ("recs_train_recs", "surprisal", {3: 0.78969, 5: 0.614294}),
        ("recs_train_gt", "surprisal", {3: 0.719586, 5: 0.698418}),
        ("cold_items_train_gt", "surprisal", {5: 0.315876}),
        ("missing_users_train_gt", "surprisal", {5: 0.210721}),
        ("recs_train_recs", "novelty", {3: 0.0, 5: 0.0}),
        ("recs_train_gt", "novelty", {3: 0.444444, 5: 0.577777}),
        ("recs_train_recs", "categorical_diversity", {3: 1.0, 5: 0.866666}),
    ]
    for case, name, values in theirs:
        for k, value in values.items():
            assert by_name[case][k][name] == pytest.approx(value, abs=1e-5)


# --------------------------------------------------------------------------- worked example
RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 2, 2, 3],
        "doc_id": [10, 11, 12, 10, 13, 11],
        "rank": [1, 2, 3, 1, 2, 1],
    }
)
TRAIN = pl.DataFrame({"query_id": [1, 2, 2, 4], "doc_id": [10, 10, 11, 12]})
GENRES = pl.DataFrame({"doc_id": [10, 11, 12, 13], "genre": ["a", "a", "b", "c"]})


def test_worked_example(frame_kind: str) -> None:
    out = _evaluate(
        frame_kind,
        RUN,
        ["surprisal@2", "novelty(kind='replay')@2", "categorical_diversity(category='genre')@3"],
        interactions=TRAIN,
        item_features=GENRES,
    )
    # N = 3 users in the history (1, 2, 4); item 10: 2 of them, 11: 1, 12: 1, 13: none
    w10, w11 = math.log2(3 / 2) / math.log2(3), math.log2(3 / 1) / math.log2(3)
    surprisal = ((w10 + w11) / 2 + (w10 + 1.0) / 2 + w11 / 2) / 3  # 13 is cold: 1
    # the history's users: 1 saw 10 of [10, 11]; 2 saw 10 of [10, 13]; 4 has no list
    # (1); user 3 has no history (left out)
    novelty = ((1 - 1 / 2) + (1 - 1 / 2) + 1.0) / 3
    # genres of the top 3, over 3: {a, b}, {a, c}, {a}
    diversity = (2 / 3 + 2 / 3 + 1 / 3) / 3
    assert out.row(0) == pytest.approx((surprisal, novelty, diversity), abs=1e-15)


def test_a_pair_listed_twice_in_the_history_counts_once(frame_kind: str) -> None:
    # user 1 saw item 10 twice, user 2 saw 10 and 11: N = 2 users; item 10 has 2
    # distinct users (3 rows), item 11 one: w10 = log2(2/2)/log2(2) = 0, w11 = 1
    run = pl.DataFrame({"query_id": [1, 1], "doc_id": [10, 11], "rank": [1, 2]})
    history = pl.DataFrame({"query_id": [1, 1, 2, 2], "doc_id": [10, 10, 10, 11]})
    out = _evaluate(
        frame_kind, run, ["surprisal@2", "novelty(kind='replay')@2"], interactions=history
    )
    # surprisal (0 + 1) / 2; novelty over the history's users: user 1 saw 10 (once,
    # however often listed) of its two, 1 - 1/2; user 2 has no list, 1
    assert out.row(0) == (0.5, (0.5 + 1.0) / 2)


def test_novelty_keeps_its_meaning_by_default() -> None:
    """``novelty`` is still Microsoft Recommenders' self-information; ``kind`` is a
    parameter, not printed at its default."""
    assert irm.parse_metric("novelty(kind='recommenders')@2").name == "novelty@2"
    out = irm.evaluate(
        RUN.filter(pl.col("doc_id") < 13),
        ["novelty@2", "novelty(kind='recommenders')@2"],
        interactions=TRAIN,
    )
    # rows within @2: 10, 11 (user 1), 10 (user 2), 11 (user 3); popularity 2, 1 of 4
    expected = (2 * -math.log2(2 / 4) + 2 * -math.log2(1 / 4)) / 4
    assert out.row(0) == pytest.approx((expected, expected), abs=1e-12)


def test_systems_each_get_their_own_values(frame_kind: str) -> None:
    both = pl.concat(
        [RUN.with_columns(system=pl.lit("a")), RUN.head(3).with_columns(system=pl.lit("b"))]
    )
    metrics = [
        "surprisal@2",
        "novelty(kind='replay')@2",
        "categorical_diversity(category='genre')@2",
    ]
    out = _evaluate(
        frame_kind, both, metrics, interactions=TRAIN, item_features=GENRES, systems="system"
    )
    for system, run in (("a", RUN), ("b", RUN.head(3))):
        alone = irm.evaluate(run, metrics, interactions=TRAIN, item_features=GENRES)
        ours = out.filter(pl.col("system") == system).drop("system")
        assert ours.row(0) == pytest.approx(alone.row(0), abs=1e-15)


# --------------------------------------------------------------------------- random inputs
def _replay_surprisal(lists: dict[int, list[int]], train: dict[int, list[int]], k: int) -> float:
    """RePlay's Surprisal, transcribed (``_get_weights`` and the per-user sum over k)."""
    users_of: dict[int, set[int]] = defaultdict(set)
    for user, items in train.items():
        for item in items:
            users_of[item].add(user)
    n = len(train)
    weights = {i: math.log2(n / len(u)) / math.log2(n) for i, u in users_of.items()}
    values = [sum(weights.get(i, 1.0) for i in items[:k]) / k for items in lists.values()]
    return sum(values) / len(values)


def _replay_novelty(lists: dict[int, list[int]], train: dict[int, list[int]], k: int) -> float:
    """RePlay's Novelty, transcribed (its users are the training log's)."""
    values = []
    for user, history in train.items():
        pred = lists.get(user)
        if not pred:
            values.append(1.0)
            continue
        values.append(1.0 - len(set(pred[:k]) & set(history)) / len(pred[:k]))
    return sum(values) / len(values)


def _replay_diversity(lists: dict[int, list[int]], category: dict[int, int], k: int) -> float:
    """RePlay's CategoricalDiversity, transcribed."""
    values = [len({category[i] for i in items[:k]}) / k for items in lists.values()]
    return sum(values) / len(values)


@st.composite
def _inputs(draw: Callable[..., Any]) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    item = st.integers(0, 9)
    lists = draw(
        st.dictionaries(
            st.integers(0, 6),
            st.lists(item, min_size=1, max_size=6, unique=True),
            min_size=1,
            max_size=6,
        )
    )
    train = draw(
        st.dictionaries(
            st.integers(0, 6),
            st.lists(item, min_size=1, max_size=5, unique=True),
            min_size=2,
            max_size=7,
        )
    )
    return lists, train


@property_settings(30)
@given(data=_inputs(), k=st.integers(1, 7), modulus=st.integers(1, 4))
def test_equal_to_replays_code_on_random_inputs(
    data: tuple[dict[int, list[int]], dict[int, list[int]]], k: int, modulus: int
) -> None:
    lists, train = data
    run = pl.DataFrame(
        [(u, i, r) for u, items in lists.items() for r, i in enumerate(items, start=1)],
        schema=["query_id", "doc_id", "rank"],
        orient="row",
    )
    history = pl.DataFrame(
        [(u, i) for u, items in train.items() for i in items],
        schema=["query_id", "doc_id"],
        orient="row",
    )
    category = {i: i % modulus for i in range(10)}
    features = pl.DataFrame({"doc_id": list(category), "category_id": list(category.values())})
    out = irm.evaluate(
        run,
        [f"surprisal@{k}", f"novelty(kind='replay')@{k}", f"categorical_diversity@{k}"],
        interactions=history,
        item_features=features,
    )
    expected = (
        _replay_surprisal(lists, train, k),
        _replay_novelty(lists, train, k),
        _replay_diversity(lists, category, k),
    )
    assert out.row(0) == pytest.approx(expected, abs=TOL, rel=0)


# --------------------------------------------------------------------------- errors
DIVERSITY = "categorical_diversity(category='genre')@2"
ERRORS: list[tuple[list[str], dict[str, Any], type[Exception], str]] = [
    (
        ["categorical_diversity@2"],
        {"item_features": GENRES},
        ColumnNotFoundError,
        "column 'category_id' not found in the item_features (its columns: 'doc_id', "
        "'genre'); name the category column with categorical_diversity(category='...')",
    ),
    (
        [DIVERSITY],
        {"item_features": pl.concat([GENRES, GENRES.head(1)])},
        DuplicateError,
        "item 10 has more than one row in item_features (1 extra rows): "
        "categorical_diversity reads one category per item; keep one row per item",
    ),
    (
        [DIVERSITY],
        {"item_features": GENRES.filter(pl.col("doc_id") != 11)},
        InvalidValueError,
        "item 11 (recommended to user 1) has no row, or a null category, in item_features "
        "(2 recommendations name such items): categorical_diversity counts the categories "
        "of each list; give the item a category in item_features=..., or drop it from "
        "the recommendations",
    ),
    (
        [DIVERSITY],
        {},
        MetricParameterError,
        f"metric {DIVERSITY!r} reads the items' feature vectors (one row per item: its id "
        "and a list or array of numbers; or its category, for categorical_diversity): "
        "pass item_features=... to irm.evaluate",
    ),
    (
        ["surprisal@2"],
        {},
        MetricParameterError,
        "metric 'surprisal@2' reads the interaction history (where item popularity, the "
        "catalogue and each user's history come from): pass interactions=... to "
        "irm.evaluate",
    ),
    (
        ["novelty(kind='replay')@2"],
        {"interactions": TRAIN.clear()},
        InvalidValueError,
        "the interactions table has no rows: the catalogue and the items' popularity come "
        "from it; pass the interactions the recommender learned from as interactions=...",
    ),
    (
        ["surprisal@2"],
        {"interactions": TRAIN, "unseen_items": "recommenders"},
        MetricParameterError,
        "metric 'surprisal@2': unseen_items='recommenders' is Microsoft Recommenders' "
        "convention for their metrics (catalog_coverage, distributional_coverage, "
        "novelty, intra_list_diversity, serendipity); they have no surprisal, so it "
        "has none: use unseen_items='error' or 'drop'",
    ),
    (
        ["novelty(kind='replay')@2"],
        {"interactions": TRAIN, "unseen_items": "recommenders"},
        MetricParameterError,
        "metric \"novelty(kind='replay')@2\": unseen_items='recommenders' is Microsoft "
        "Recommenders' convention for their metrics (catalog_coverage, "
        "distributional_coverage, novelty, intra_list_diversity, serendipity); they have "
        "no novelty(kind='replay'), so it has none: use unseen_items='error' or 'drop'",
    ),
    (
        ["surprisal"],
        {"interactions": TRAIN},
        MetricParameterError,
        "metric 'surprisal': surprisal needs a cutoff, e.g. 'surprisal@10'",
    ),
    (
        ["surprisal@2", "novelty@2"],  # Recommenders' novelty: one value of all rows
        {"interactions": TRAIN, "per_query": True},
        MetricParameterError,
        "metric 'novelty@2' describes a whole recommendation table, not one query: "
        "evaluate it with per_query=False",
    ),
    (
        ["novelty(kind='other')@2"],
        {"interactions": TRAIN},
        MetricParameterError,
        "metric \"novelty(kind='other')@2\": kind='other' is not allowed; choose one of "
        "'recommenders', 'replay'",
    ),
    (
        ["surprisal@2"],
        {"interactions": TRAIN.select("doc_id")},
        ColumnNotFoundError,
        "column 'query_id' not found in the interactions (its columns: 'doc_id'); rename "
        "its id columns as in the run: 'query_id', 'doc_id'",
    ),
]


@pytest.mark.parametrize(("metrics", "kwargs", "error", "message"), ERRORS)
def test_bad_inputs_raise_the_librarys_errors(
    frame_kind: str,
    metrics: list[str],
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _evaluate(frame_kind, RUN, metrics, **kwargs)


def test_agg_summarizes_the_users_values(frame_kind: str) -> None:
    """``agg=`` is RePlay's mode (``Median()``): the per-user values summarized
    otherwise than by their mean."""
    out = _evaluate(
        frame_kind,
        RUN,
        ["surprisal(agg='median')@1", "categorical_diversity(category='genre', agg='max')@2"],
        interactions=TRAIN,
        item_features=GENRES,
    )
    w10 = math.log2(3 / 2) / math.log2(3)  # 2 of the history's 3 users saw item 10
    # @1: user 1 [10], 2 [10], 3 [11] -> median of (w10, w10, 1); genres @2: {a} of
    # [10, 11], {a, c} of [10, 13], {a} of [11] over 2 -> max 1
    assert out.row(0) == pytest.approx((w10, 1.0), abs=1e-15)


def test_agg_of_a_mean_over_other_users_is_refused() -> None:
    cases = [
        (
            "novelty(agg='median')",
            "metric \"novelty(agg='median')\": agg='median' summarizes per-user values, and "
            "novelty is one value over every recommendation: drop agg=",
        ),
        (
            "novelty(kind='replay', agg='median')@2",
            "metric \"novelty(kind='replay', agg='median')@2\": agg='median' summarizes "
            "per-user values, and novelty is a mean over the users of the interactions: "
            "drop agg=",
        ),
    ]
    for name, message in cases:
        with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
            irm.evaluate(RUN, [name], interactions=TRAIN)


def test_unseen_items_drop_leaves_uncategorised_items_out(frame_kind: str) -> None:
    out = _evaluate(
        frame_kind,
        RUN,
        [DIVERSITY],
        item_features=GENRES.filter(pl.col("doc_id") != 11),
        unseen_items="drop",
    )
    # item 11 dropped, the ranks kept: user 1's top 2 is [10] ({a}), 2's [10, 13]
    # ({a, c}), 3 has none left
    assert out.item() == pytest.approx((1 / 2 + 2 / 2) / 2, abs=1e-15)


def test_the_cli_reads_a_category_column(tmp_path: Path) -> None:
    """``irm evaluate --item-features`` takes a file with a category column and no
    vectors: the metrics say which column they read."""
    RUN.write_parquet(tmp_path / "run.parquet")
    TRAIN.write_parquet(tmp_path / "train.parquet")
    GENRES.write_parquet(tmp_path / "items.parquet")
    proc = irm_in_process(
        *("evaluate", str(tmp_path / "run.parquet")),
        *("-m", "surprisal@2", "-m", "categorical_diversity(category='genre')@3"),
        *("--interactions", str(tmp_path / "train.parquet")),
        *("--item-features", str(tmp_path / "items.parquet")),
        *("--format", "csv"),
    )
    assert proc.returncode == 0, proc.stderr
    header, values = proc.stdout.strip().splitlines()
    assert header == "surprisal@2,categorical_diversity(category='genre')@3"
    expected = irm.evaluate(
        RUN,
        ["surprisal@2", "categorical_diversity(category='genre')@3"],
        interactions=TRAIN,
        item_features=GENRES,
    ).row(0)
    assert tuple(float(v) for v in values.split(",")) == pytest.approx(expected, abs=1e-12)


def test_per_query_sits_beside_accuracy_and_means_agree(frame_kind: str) -> None:
    """Each user's values join the per-query accuracy values (a user without judgments
    has null accuracy); the mean of a users' metric's values is its summary."""
    run = RUN.filter(pl.col("doc_id") != 13)  # 10, 11, 12 | 10 | 11
    qrels = pl.DataFrame({"query_id": [1, 2], "doc_id": [11, 13], "relevance": [1, 1]})
    metrics = ["P@2", "surprisal@2", "novelty(kind='replay')@2", "average_popularity@2"]
    out = _evaluate(frame_kind, run, metrics, qrels=qrels, interactions=TRAIN, per_query=True)
    w10 = math.log2(3 / 2) / math.log2(3)  # 2 of the history's 3 users; 11 and 12: 1
    expected = {
        1: (0.5, (w10 + 1.0) / 2, 1 - 1 / 2, (2 + 1) / 2),
        2: (0.0, w10 / 2, 1 - 1 / 1, 2.0),
        3: (None, 1.0 / 2, None, 1.0),  # no judgments; no history: left out of novelty
        4: (None, None, 1.0, None),  # a history without recommendations
    }
    rows = {row[0]: row[1:] for row in out.rows()}
    assert rows.keys() == expected.keys()
    for user, values in expected.items():
        for ours, theirs in zip(rows[user], values, strict=True):
            assert ours == (None if theirs is None else pytest.approx(theirs, abs=1e-15))
    means = _evaluate(frame_kind, run, metrics[1:], interactions=TRAIN)
    for label in metrics[1:]:
        assert out[label].drop_nulls().mean() == pytest.approx(means[label][0], abs=1e-15)


def test_surprisal_with_one_history_user() -> None:
    # log2(N) = 0 with one user in the interactions: a seen item's weight is 0/0, so its
    # user's value is NaN, as RePlay's; a list of unseen items weighs 1 each (2 of k=2 -> 1,
    # 1 of k=2 -> 0.5), summed as floats there (the fixed-point sum needs finite weights)
    run = pl.DataFrame({"query_id": ["u", "u", "v"], "doc_id": ["a", "b", "c"], "rank": [1, 2, 1]})
    history = pl.DataFrame({"query_id": ["w"], "doc_id": ["a"]})
    with pytest.warns(irm.CoverageWarning):
        out = irm.evaluate(run, ["surprisal@2"], interactions=history, per_query=True)
    values = dict(out.iter_rows())
    assert math.isnan(values["u"])
    assert values["v"] == 0.5
