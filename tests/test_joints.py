"""Every joint where the ids of two tables must line up, route by route: when no id
matches or most do not, a value that would be a silent zero, NaN or constant comes
with a named warning (:class:`~polars_irmetrics.errors.CoverageWarning`: the table, the
column, the counts, the likely fix) or a refusal where the number cannot mean anything;
when the ids are strings on one side and integers on the other, the library's
``ColumnTypeError`` names the column and both dtypes. The same on a DataFrame and a
LazyFrame (there at ``collect()``), whichever metric of the route reads the table."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    CoverageWarning,
    InvalidValueError,
    IrmWarning,
    QuerySetError,
    SupportWarning,
)

RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 4 + ["q2"] * 2 + ["q3"] * 2,
        "doc_id": ["a", "b", "c", "d", "a", "e", "b", "c"],
        "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["a", "c", "e", "b"], "relevance": 1}
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d", "e"], "group": ["x", "x", "y", "x", "y"]})
TARGET = pl.DataFrame({"group": ["x", "y"], "target": [0.5, 0.5]})
HISTORY = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["a", "b", "c", "e"]})
PROPS = pl.DataFrame(
    {"doc_id": ["a", "b", "c", "d", "e"], "propensity": [0.5, 0.25, 1.0, 0.2, 0.5]}
)


def _suffixed(frame: pl.DataFrame, column: str, keep: tuple[str, ...] = ()) -> pl.DataFrame:
    """``frame`` with the ids of ``column`` changed (``_z`` added), but those in ``keep``."""
    value = pl.col(column)
    changed = pl.when(value.is_in(list(keep))).then(value).otherwise(value + "_z")
    return frame.with_columns(changed.alias(column))


def _fix(table: str, column: str, owner: str) -> str:
    return (
        f"Ids that do not line up are the likely cause: give {table}= and the {owner} the "
        f"same {column!r} values (same spelling, same collection)."
    )


REFERENCE_FATE = (
    "are left out (unjudged='drop'), and each query of the reference the run lacks scores as an "
    "empty ranking does (unretrieved='zero': 0)"
)
GROUPS_FATE = (
    "a document without a group counts in no group, so its exposure and relevance are left "
    "out of every group's (with none grouped, the values are null or NaN)"
)
#: rnd's documents without a group are its unprotected ones
UNPROTECTED_FATE = (
    "a document without a group is unprotected in rnd (counted in the ranking's N, not in "
    "its protected P; with none grouped no document is protected and the values are NaN)"
)
RELEVANT_FATE = (
    "a relevant document without a group counts in no group: the expected-exposure "
    "measures leave its exposure out (a query none of whose relevant documents has a group "
    "is left out of them), and awrf's target (the relevant documents' groups, where "
    "target= is not given) does not count it"
)
#: relevant documents the run never ranks, and groups= does not hold
MORE_RELEVANT = pl.concat(
    [
        QRELS,
        pl.DataFrame(
            {"query_id": ["q1", "q2", "q3", "q1", "q2"], "doc_id": ["f", "g", "h", "i", "j"]}
        ).with_columns(relevance=pl.lit(1, pl.Int32)),
    ]
)
#: the metric asked that reads the interactions is named (round 19: the families were)
ITEMS_FATE = (
    "an item the interactions lack has no popularity and no user has seen it, so {} reads "
    "it as never seen, and the catalogue does not hold it"
)
USERS_FATE = "a user without a history finds every item new ({} reads no history for them)"
REPLAY_ITEMS = ITEMS_FATE.format("novelty(kind='replay')@2")
REPLAY_USERS = USERS_FATE.format("novelty(kind='replay')@2")
KOTKOV_ITEMS = ITEMS_FATE.format("serendipity(kind='kotkov')@2")

#: the judgments' documents in another id space, and their propensities too
NO_DOCUMENT = {
    "qrels": _suffixed(QRELS, "doc_id"),
    "propensities": pl.concat([PROPS, _suffixed(PROPS, "doc_id")]),
}
NO_JUDGED_DOCUMENT = (
    "the run retrieves no judged document (0 of 4 judged documents, in 0 of 3 judged "
    "queries): every judged query scores as a ranking of no judged document does (0 in ndcg, map,"
    " precision, recall and the like), as trec_eval scores such a run. "
    "Check that the run and the judgments name the same queries and documents (same "
    "collection, same id spelling)."
)

#: (case, metrics, tables, the warnings given: exact texts)
WARNED: list[tuple[str, list[str], dict[str, pl.DataFrame], list[str]]] = [
    ("propensities: clean", ["ps_ndcg@2"], {"qrels": QRELS, "propensities": PROPS}, []),
    ("item clusters: clean", ["item_mad@2"], {"qrels": QRELS, "groups": GROUPS}, []),
    # Elliot's MAD once gave null in silence where its clusters matched no id
    (
        "item clusters: no item",
        ["item_mad@2"],
        {"qrels": QRELS, "groups": _suffixed(GROUPS, "doc_id")},
        [
            "groups= holds none of the 5 items of the run (column 'doc_id'): an item "
            "without a cluster counts in no cluster's mean (with none clustered, MAD is "
            f"null). {_fix('groups', 'doc_id', 'run')}"
        ],
    ),
    (
        "user clusters: most users not",
        ["user_mad@2"],
        {
            "qrels": QRELS,
            "user_groups": pl.DataFrame({"query_id": ["q1", "x2", "x3"], "group": [0, 1, 1]}),
        },
        [
            "user_groups= holds only 1 of the 3 users of the run (column 'query_id'): a "
            "user without a cluster counts in no cluster's mean (with none clustered, MAD "
            f"is null). {_fix('user_groups', 'query_id', 'run')}"
        ],
    ),
    # the propensity-scored metrics once scored 0 in silence where map warned
    ("judgments: no document (ps_ndcg)", ["ps_ndcg@2"], NO_DOCUMENT, [NO_JUDGED_DOCUMENT]),
    (
        "judgments: no document (ps_precision)",
        ["ps_precision@2"],
        NO_DOCUMENT,
        [NO_JUDGED_DOCUMENT],
    ),
    ("reference: clean", ["rbo", "intersection@2"], {"reference": RUN}, []),
    (
        "reference: no query",
        ["rbo"],
        {"reference": _suffixed(RUN, "query_id")},
        [
            "reference= holds none of the 3 queries of the run (column 'query_id'): the 3 "
            f"the reference lacks {REFERENCE_FATE}. {_fix('reference', 'query_id', 'run')}"
        ],
    ),
    (
        "reference: most queries not",
        ["intersection@2"],
        {"reference": _suffixed(RUN, "query_id", keep=("q1",))},
        [
            "reference= holds only 1 of the 3 queries of the run (column 'query_id'): the 2 "
            f"the reference lacks {REFERENCE_FATE}. {_fix('reference', 'query_id', 'run')}"
        ],
    ),
    # the same queries, no document in common: rbo 0 everywhere, once in silence
    (
        "reference: no document",
        ["rbo", "unexpectedness@2"],
        {"reference": _suffixed(RUN, "doc_id")},
        [
            "reference= holds none of the 5 documents of the run (column 'doc_id'): no list "
            "shares a document with the reference's: every overlap is 0 (rbo, jaccard, "
            "intersection...; unexpectedness 1), the orders of the shared documents are "
            "null (kendall_tau, tau_ap) and repro_eval's ktu, which pairs where each list's "
            "ids fall in the sorted union of both, reads the ids' spelling alone. "
            f"{_fix('reference', 'doc_id', 'run')}"
        ],
    ),
    ("groups: clean", ["ee_loss"], {"qrels": QRELS, "groups": GROUPS}, []),
    (
        "groups: no document",
        ["ee_loss", "ee_disparity"],
        {"qrels": QRELS, "groups": _suffixed(GROUPS, "doc_id")},
        [
            "groups= holds none of the 5 documents of the run (column 'doc_id'): "
            f"{GROUPS_FATE}. {_fix('groups', 'doc_id', 'run')}",
            "groups= holds none of the 4 relevant documents of the judgments (column "
            f"'doc_id'): {RELEVANT_FATE}. {_fix('groups', 'doc_id', 'judgments')}",
        ],
    ),
    # every ranked document grouped, most relevant ones not (judged, never retrieved):
    # ee_loss read the few, in silence
    (
        "groups: most relevant documents not (ee_loss)",
        ["ee_loss"],
        {"qrels": MORE_RELEVANT, "groups": GROUPS},
        [
            "groups= holds only 4 of the 9 relevant documents of the judgments (column "
            f"'doc_id'): {RELEVANT_FATE}. {_fix('groups', 'doc_id', 'judgments')}",
        ],
    ),
    # awrf with target= reads no relevant document's group
    (
        "groups: most relevant documents not (awrf, target)",
        ["awrf"],
        {"qrels": MORE_RELEVANT, "groups": GROUPS, "target": TARGET},
        [],
    ),
    (
        "groups: most documents not (awrf)",
        ["awrf"],
        {"qrels": QRELS, "groups": _suffixed(GROUPS, "doc_id", keep=("a", "b"))},
        [
            "groups= holds only 2 of the 5 documents of the run (column 'doc_id'): "
            f"{GROUPS_FATE}. {_fix('groups', 'doc_id', 'run')}"
        ],
    ),
    (
        "groups: no document (rnd, no judgments)",
        ["rnd"],
        {"groups": _suffixed(GROUPS, "doc_id")},
        [
            "groups= holds none of the 5 documents of the run (column 'doc_id'): "
            f"{UNPROTECTED_FATE}. {_fix('groups', 'doc_id', 'run')}"
        ],
    ),
    ("target: clean", ["awrf"], {"qrels": QRELS, "groups": GROUPS, "target": TARGET}, []),
    (
        "target: no group",
        ["awrf"],
        {"qrels": QRELS, "groups": GROUPS, "target": _suffixed(TARGET, "group")},
        [
            "target= holds none of the 2 groups of the groups= table (column 'group'): a "
            "group the target lacks has a target share of 0 in awrf, so awrf measures the "
            "distance to a target that none of the ranked groups can meet. "
            f"{_fix('target', 'group', 'groups= table')}"
        ],
    ),
    ("interactions: clean", ["surprisal@2"], {"interactions": HISTORY}, []),
    (
        "interactions: no item (recommendations)",
        ["surprisal@2"],
        {"interactions": _suffixed(HISTORY, "doc_id")},
        [
            "interactions= holds none of the 5 items of the recommendations (column "
            f"'doc_id'): {ITEMS_FATE.format('surprisal@2')}. "
            f"{_fix('interactions', 'doc_id', 'recommendations')}"
        ],
    ),
    (
        "interactions: most items not, another metric",
        ["novelty(kind='replay')@2"],
        {"interactions": _suffixed(HISTORY, "doc_id", keep=("a", "b"))},
        [
            "interactions= holds only 2 of the 5 items of the recommendations (column "
            f"'doc_id'): {REPLAY_ITEMS}. {_fix('interactions', 'doc_id', 'recommendations')}"
        ],
    ),
    (
        "interactions: no user",
        ["novelty(kind='replay')@2"],
        {"interactions": _suffixed(HISTORY, "query_id")},
        [
            "interactions= holds none of the 3 users of the recommendations (column "
            f"'query_id'): {REPLAY_USERS}. "
            f"{_fix('interactions', 'query_id', 'recommendations')}"
        ],
    ),
    (
        "interactions: no item (run and judgments)",
        ["serendipity(kind='kotkov')@2"],
        {"qrels": QRELS, "interactions": _suffixed(HISTORY, "doc_id")},
        [
            "interactions= holds none of the 5 items of the run (column 'doc_id'): "
            f"{KOTKOV_ITEMS}. {_fix('interactions', 'doc_id', 'run')}"
        ],
    ),
    (
        "interactions: no item, a catalogue metric",
        ["mcc@2"],
        {"qrels": QRELS, "interactions": _suffixed(HISTORY, "doc_id")},
        [
            "interactions= holds none of the 5 items of the run (column 'doc_id'): "
            f"{ITEMS_FATE.format('mcc@2')}. {_fix('interactions', 'doc_id', 'run')}"
        ],
    ),
]


FEATURES = pl.DataFrame(
    {
        "doc_id": ["a", "b", "c", "d", "e"],
        "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [1.0, 3.0]],
    }
)
NO_VECTOR = {
    "recommenders": "an item without a feature vector counts as similar 0 to every other "
    "item (unseen_items='recommenders', Microsoft Recommenders' fillna(0)), so a list of "
    "such items reads as diverse and serendipitous as a list can be",
    "drop": "the recommendations of an item without a feature vector are left out "
    "(unseen_items='drop'), so the metrics read few of the lists' items",
}
LEFT_OUT = (
    "the recommendations of an item the interactions lack are left out "
    "(unseen_items='drop'), so the metrics read few of the lists' items"
)

#: (case, metrics, tables, unseen_items, the warnings given): where an item a side table
#: lacks is scored or left out instead of refused, counted as given (before a drop)
WARNED_UNSEEN: list[tuple[str, list[str], dict[str, pl.DataFrame], str, list[str]]] = [
    ("features: clean", ["intra_list_diversity@2"], {"item_features": FEATURES}, "drop", []),
    # similar 0 to every item: every list's diversity 1.0, once in silence
    (
        "features: no item (recommenders)",
        ["intra_list_diversity@2"],
        {"item_features": _suffixed(FEATURES, "doc_id")},
        "recommenders",
        [
            "item_features= holds none of the 5 items of the recommendations (column "
            f"'doc_id'): {NO_VECTOR['recommenders']}. "
            f"{_fix('item_features', 'doc_id', 'recommendations')}"
        ],
    ),
    # every recommendation left out: null, once in silence
    (
        "features: most items not (drop)",
        ["intra_list_diversity@2"],
        {"item_features": _suffixed(FEATURES, "doc_id", keep=("a", "b"))},
        "drop",
        [
            "item_features= holds only 2 of the 5 items of the recommendations (column "
            f"'doc_id'): {NO_VECTOR['drop']}. "
            f"{_fix('item_features', 'doc_id', 'recommendations')}"
        ],
    ),
    # the history's tally was taken after the drop: none held, all dropped, in silence
    (
        "interactions: no item (drop)",
        ["surprisal@2"],
        {"interactions": _suffixed(HISTORY, "doc_id")},
        "drop",
        [
            "interactions= holds none of the 5 items of the recommendations (column "
            f"'doc_id'): {LEFT_OUT}. {_fix('interactions', 'doc_id', 'recommendations')}"
        ],
    ),
]


@pytest.mark.parametrize("buckets", [None, 2])
@pytest.mark.parametrize(
    ("case", "metrics", "tables", "unseen", "expected"),
    WARNED_UNSEEN,
    ids=[w[0] for w in WARNED_UNSEEN],
)
def test_a_side_table_lacking_items_that_are_scored_anyway_is_warned_about(
    frame_kind: str,
    case: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    unseen: str,
    expected: list[str],
    buckets: int | None,
) -> None:
    options: dict[str, Any] = {"unseen_items": unseen}
    if buckets is not None:
        options.update(buckets=buckets, per_query=True)
    _, said = _evaluate(frame_kind, metrics, tables, **options)
    assert said == expected


def test_features_lacking_items_refused_item_by_item_are_not_warned_about() -> None:
    lacking = _suffixed(FEATURES, "doc_id", keep=("a",))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        refused = "item 'b' (recommended to user 'q1') has no row in item_features"
        with pytest.raises(InvalidValueError, match=f"^{re.escape(refused)}"):
            irm.evaluate(RUN, ["intra_list_diversity@2"], item_features=lacking)


def _evaluate(
    frame_kind: str, metrics: list[str], tables: dict[str, pl.DataFrame], **options: Any
) -> tuple[pl.DataFrame, list[str]]:
    """The result and the texts of the library's warnings (none before a LazyFrame's
    collect())."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if frame_kind == "LazyFrame":
            lazy = {k: v.lazy() for k, v in tables.items()}
            plan = irm.evaluate(RUN.lazy(), metrics, **lazy, **options)  # type: ignore[arg-type]
            assert isinstance(plan, pl.LazyFrame)
            assert not [w for w in caught if issubclass(w.category, IrmWarning)]
            out = plan.collect()
        else:
            out = irm.evaluate(RUN, metrics, **tables, **options)  # type: ignore[arg-type]
            assert isinstance(out, pl.DataFrame)
    # the side tables' warnings (rnd of a ranking of 10 documents or fewer is NaN, and
    # says so in a warning of its own: tests/test_stat_round17.py; so does an exposure
    # measure of the judgments that scores no query: tests/test_exposure_round20.py)
    ours = [
        w
        for w in caught
        if issubclass(w.category, IrmWarning)
        and "NaN on" not in str(w.message)
        and "no query (" not in str(w.message)
    ]
    assert all(w.category is CoverageWarning for w in ours)
    return out, [str(w.message) for w in ours]


@pytest.mark.parametrize(
    ("case", "metrics", "tables", "expected"), WARNED, ids=[w[0] for w in WARNED]
)
def test_a_joint_that_does_not_line_up_is_warned_about(
    frame_kind: str,
    case: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    expected: list[str],
) -> None:
    out, said = _evaluate(frame_kind, metrics, tables)
    assert said == expected
    assert out.height >= 1  # the values are given as before, warned or not


#: (case, metrics, tables, options, error, message): a dtype of another kind, or ids
#: that give a number of no meaning
REFUSED: list[tuple[str, list[str], dict[str, pl.DataFrame], dict[str, Any], type, str]] = [
    (
        "groups: integer documents",
        ["ee_loss"],
        {"qrels": QRELS, "groups": GROUPS.with_columns(pl.int_range(5).alias("doc_id"))},
        {},
        ColumnTypeError,
        "column 'doc_id' holds strings in the run (String) but integers in groups= (Int64); "
        "cast one side, e.g. pl.col('doc_id').cast(pl.String) on both",
    ),
    (
        "target: integer groups",
        ["awrf"],
        {"qrels": QRELS, "groups": GROUPS, "target": TARGET.with_columns(group=pl.int_range(2))},
        {},
        ColumnTypeError,
        "column 'group' holds strings in groups= (String) but integers in target= (Int64); "
        "cast one side, e.g. pl.col('group').cast(pl.String) on both",
    ),
    (
        "reference: integer queries",
        ["rbo"],
        {"reference": RUN.with_columns(pl.col("query_id").str.slice(1).cast(pl.Int64))},
        {},
        ColumnTypeError,
        "column 'query_id' holds strings in the run (String) but integers in the reference "
        "(Int64); cast one side, e.g. pl.col('query_id').cast(pl.String) on both",
    ),
    (
        "interactions: integer items (recommendations)",
        ["surprisal@2"],
        {"interactions": HISTORY.with_columns(pl.int_range(4).alias("doc_id"))},
        {},
        ColumnTypeError,
        "column 'doc_id' holds strings in the run (String) but integers in the "
        "interactions (Int64); cast one side, e.g. pl.col('doc_id').cast(pl.String) on both",
    ),
    (
        "interactions: integer items (run and judgments)",
        ["serendipity(kind='kotkov')@2"],
        {"qrels": QRELS, "interactions": HISTORY.with_columns(pl.int_range(4).alias("doc_id"))},
        {},
        ColumnTypeError,
        "column 'doc_id' holds strings in the run (String) but integers in the "
        "interactions (Int64); cast one side, e.g. pl.col('doc_id').cast(pl.String) on both",
    ),
    (
        "queries: integer ids",
        ["mrr"],
        {"qrels": QRELS, "queries": pl.DataFrame({"query_id": [1, 2, 3], "day": "mon"})},
        {"by": "day"},
        ColumnTypeError,
        "column 'query_id' holds integers in queries= (Int64) but strings in the run "
        "(String); cast one side, e.g. pl.col('query_id').cast(pl.String) on both",
    ),
    (
        "queries: no query",
        ["mrr"],
        {
            "qrels": QRELS,
            "queries": pl.DataFrame({"query_id": ["x1", "x2", "x3"], "day": "mon"}),
        },
        {"by": "day"},
        QuerySetError,
        "query 'q1' has no 'day' in queries=: give every query of the run and the judgments "
        "a row there (3 have none)",
    ),
    (
        "propensities: no document",
        ["ps_precision@2"],
        {"qrels": QRELS, "propensities": _suffixed(PROPS, "doc_id")},
        {},
        InvalidValueError,
        "document 'a' of query 'q1' is relevant (relevance >= 1) and has no propensity: "
        "propensities= (column 'doc_id') must list every relevant document, e.g. "
        "irm.label_propensity over judgments that include them",
    ),
    (
        "propensities: integer documents",
        ["ps_ndcg@2"],
        {"qrels": QRELS, "propensities": PROPS.with_columns(pl.int_range(5).alias("doc_id"))},
        {},
        ColumnTypeError,
        "column 'doc_id' is Int64 in propensities= and String in the run: cast one, e.g. "
        "pl.col('doc_id').cast(pl.String)",
    ),
]


@pytest.mark.parametrize(
    ("case", "metrics", "tables", "options", "error", "message"),
    REFUSED,
    ids=[r[0] for r in REFUSED],
)
def test_a_joint_that_cannot_line_up_is_refused(
    frame_kind: str,
    case: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    options: dict[str, Any],
    error: type,
    message: str,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _evaluate(frame_kind, metrics, tables, **options)


PREDICTIONS = RUN.rename({"score": "prediction"}).with_columns(pl.col("prediction") / 5)
LABELS = RUN.select("query_id", "doc_id", pl.Series("label", [1, 0, 1, 0, 1, 0, 1, 0]))
LOG = pl.DataFrame(
    {"round_id": [1, 2, 3], "action": [0, 1, 0], "reward": [1.0, 0.0, 1.0], "pscore": 0.5}
)
POLICY = pl.DataFrame({"round_id": [1, 1, 2, 2, 3, 3], "action": [0, 1] * 3, "prob": 0.5})


@pytest.mark.parametrize(
    ("table", "metrics", "tables", "error", "message"),
    [
        (
            PREDICTIONS,
            ["auc"],
            {"labels": _suffixed(LABELS, "doc_id")},
            QuerySetError,
            # no pair at all: the ids, not a drop that leaves every value null (round 25)
            "labels= and the predictions share none of their (query_id, doc_id) pairs (8 "
            "predictions, 8 labels; e.g. the predictions' (q1, a), the labels' (q1, a_z)): ids "
            "that do not line up are the likely cause: give labels= and the predictions the "
            "same 'query_id' and 'doc_id' values (same spelling, same collection); "
            "unmatched='drop' would leave no pair to evaluate, every value null",
        ),
        (
            PREDICTIONS,
            ["auc"],
            {"labels": LABELS.with_columns(pl.col("query_id").str.slice(1).cast(pl.Int64))},
            ColumnTypeError,
            "column 'query_id' is String in the predictions but Int64 in the labels; cast one "
            "side so that the pairs match, e.g. pl.col('query_id').cast(pl.String)",
        ),
        (
            LOG,
            ["ips"],
            {"policy": POLICY.with_columns(pl.col("round_id") + 10)},
            QuerySetError,
            "3 log row(s) have a round the policy table lacks (first: round_id=1): the policy "
            "needs every logged round's probabilities, one row per (round_id, action) in "
            "column 'prob'",
        ),
        (
            LOG,
            ["ips"],
            {"policy": POLICY.with_columns(pl.col("round_id").cast(pl.String))},
            ColumnTypeError,
            "column 'round_id' has dtype String in the policy table but Int64 in the log; the "
            "ids must match: cast one side, e.g. pl.col('round_id').cast(pl.String)",
        ),
        (
            LOG,
            ["dm"],
            {
                "policy": POLICY,
                "reward_model": POLICY.rename({"prob": "q_hat"}).with_columns(
                    pl.col("action") + 10
                ),
            },
            QuerySetError,
            "the reward_model table has no 'q_hat' (or a null or NaN one) for the logged action "
            "or an action the policy may take (first: round_id=1, 3 log row(s) in all): give "
            "q_hat for every (round_id, action) the policy gives a positive probability and "
            "every logged one",
        ),
    ],
    ids=[
        "labels: no pair",
        "labels: integer queries",
        "policy: no round",
        "policy: text rounds",
        "reward_model: no action",
    ],
)
def test_the_tables_beside_a_log_are_refused_when_they_cannot_line_up(
    frame_kind: str,
    table: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    error: type,
    message: str,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _log(frame_kind, table, metrics, tables)


def _log(
    frame_kind: str, table: pl.DataFrame, metrics: list[str], tables: dict[str, pl.DataFrame]
) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() for k, v in tables.items()}
        plan = irm.evaluate(table.lazy(), metrics, **lazy)  # type: ignore[arg-type]
        assert isinstance(plan, pl.LazyFrame)
        return plan.collect()
    out = irm.evaluate(table, metrics, **tables)  # type: ignore[arg-type]
    assert isinstance(out, pl.DataFrame)
    return out


def test_policy_actions_never_logged_are_a_support_warning() -> None:
    """The policy's actions the log never took: obp's support question, warned about by
    its own class (the estimate is biased, not an id mismatch)."""
    moved = POLICY.with_columns(pl.col("action") + 10)
    with pytest.warns(SupportWarning, match=re.escape("never logged (e.g. action=10)")) as got:
        irm.evaluate(LOG, ["ips"], policy=moved)
    # shown under the library's name, as the coverage warnings are (it once pointed at
    # polars' own engine.py, the callback's caller)
    assert [w.filename for w in got] == ["polars_irmetrics"]
    # it takes none of the logged actions: every weight 0, and the id fix named (the
    # data cannot tell a policy of unlogged actions from two spellings of the same)
    logged = LOG["action"].n_unique()
    assert str(got[0].message).endswith(
        f". It takes none of the log's {logged} actions (column 'action'), so every "
        "importance weight is 0 (ips 0, the self-normalised estimators NaN): if its ids are "
        "meant to be the log's, ids that do not line up are the likely cause: give policy= "
        "and the log the same 'action' values (same spelling, same collection)"
    )
    # a policy that takes some logged action too: the support warning alone
    some = pl.concat([POLICY.head(1), moved.slice(1)])
    with pytest.warns(SupportWarning) as got:
        irm.evaluate(LOG, ["ips"], policy=some)
    assert "It takes none" not in str(got[0].message)


def test_unseen_items_dropped_across_dtypes_of_one_kind(frame_kind: str) -> None:
    # unseen_items='drop' joins the recommendations with the history's items before the
    # plan casts the ids: a Categorical run beside a String history once raised polars'
    # SchemaError there; now the same values as two String columns
    tables = {"interactions": HISTORY}
    plain, _ = _evaluate(frame_kind, ["surprisal@2"], tables, unseen_items="drop")
    categorical = RUN.with_columns(pl.col("doc_id").cast(pl.Categorical))
    run = categorical.lazy() if frame_kind == "LazyFrame" else categorical
    out = irm.evaluate(run, ["surprisal@2"], interactions=HISTORY, unseen_items="drop")
    out = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert out.equals(plain)


def test_unseen_items_dropped_refuses_ids_of_another_kind() -> None:
    history = HISTORY.with_columns(pl.int_range(4).alias("doc_id"))
    message = (
        "column 'doc_id' holds strings in the recommendations (String) but integers in the "
        "interactions (Int64); cast one side, e.g. pl.col('doc_id').cast(pl.String) on both"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, ["surprisal@2"], interactions=history, unseen_items="drop")
    # a key of two kinds (one kind in two widths is lined up: test_key_widths_round25.py)
    run = RUN.with_columns(system=pl.lit("1"))
    keyed = HISTORY.with_columns(system=pl.lit(1, pl.Int64))
    message = (
        "column 'system' has dtype String in the recommendations but Int64 in the "
        "interactions; cast one side to match, e.g. pl.col('system').cast(pl.String) on both"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["surprisal@2"], interactions=keyed, unseen_items="drop", by="system")


def test_propensity_metrics_line_up_ids_of_one_kind_in_any_dtype() -> None:
    # the judgments and propensities were cast to the run's own dtype: an id beyond
    # Int32 in the judgments of an Int32 run, a UInt64 id beyond Int64 among the
    # propensities, or a document an Enum run cannot hold raised polars' errors
    run = pl.DataFrame({"query_id": ["s"] * 3, "doc_id": [1, 2, 3], "rank": [1, 2, 3]})
    qrels = pl.DataFrame({"query_id": ["s", "s"], "doc_id": [1, 3], "relevance": [1, 1]})
    props = pl.DataFrame({"doc_id": [1, 2, 3], "propensity": [0.9, 0.5, 0.4]})
    metrics = ["ps_ndcg@3", "ps_precision@2"]
    plain = irm.evaluate(run, metrics, qrels=qrels, propensities=props)
    beyond = pl.DataFrame({"query_id": ["s"], "doc_id": [2**40], "relevance": [0]})
    huge = pl.DataFrame(
        {"doc_id": [2**63 + 5], "propensity": [0.5]},
        schema={"doc_id": pl.UInt64, "propensity": pl.Float64},
    )
    narrow = run.cast({"doc_id": pl.Int32})
    assert irm.evaluate(
        narrow, metrics, qrels=pl.concat([qrels, beyond]), propensities=props
    ).equals(plain)
    wide = pl.concat([props.cast({"doc_id": pl.UInt64}), huge])
    assert irm.evaluate(narrow, metrics, qrels=qrels, propensities=wide).equals(plain)
    text = {"doc_id": pl.col("doc_id").cast(pl.String)}
    enum = run.with_columns(pl.col("doc_id").cast(pl.String).cast(pl.Enum(["1", "2", "3"])))
    extra = pl.concat(
        [props.with_columns(**text), pl.DataFrame({"doc_id": ["9"], "propensity": [0.5]})]
    )
    got = irm.evaluate(enum, metrics, qrels=qrels.with_columns(**text), propensities=extra)
    assert got.equals(plain)


@pytest.mark.parametrize("column", ["query_id", "doc_id"])
def test_preferences_refuse_ids_of_another_kind(column: str) -> None:
    # the preference measures compare ids as text: an integer run beside string
    # preferences once matched 1 with '1' (queries) or scored 0 in silence
    run = pl.DataFrame(
        {"query_id": ["1"] * 3, "doc_id": ["7", "8", "9"], "score": [3.0, 2.0, 1.0]}
    )
    prefs = pl.DataFrame(
        {"query_id": ["1"] * 3, "jg": ["u"] * 3, "jsg": ["s"] * 3, "doc_id": ["7", "8", "9"],
         "rel_level": [2.0, 1.0, 0.0]}
    )  # fmt: skip
    integers = run.with_columns(pl.col(column).cast(pl.Int64))
    message = (
        f"column {column!r} holds integers in the run (Int64) but strings in the preferences "
        f"(String); cast one side, e.g. pl.col({column!r}).cast(pl.String) on both"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(integers, ["prefs_simp"], prefs=prefs)
    assert irm.evaluate(run, ["prefs_simp"], prefs=prefs)["prefs_simp"].item() == 1.0


def test_labels_line_up_ids_of_one_kind_in_any_dtype() -> None:
    # labels= refused any two dtypes: Int32 beside Int64, Categorical beside String
    metrics = ["auc", "logloss"]
    plain = irm.evaluate(PREDICTIONS, metrics, labels=LABELS)
    numbered = pl.col("query_id").str.slice(1).cast(pl.Int64)
    narrow = PREDICTIONS.with_columns(numbered).cast({"query_id": pl.Int32})
    got = irm.evaluate(narrow, metrics, labels=LABELS.with_columns(numbered))
    assert got.equals(plain)
    categorical = PREDICTIONS.with_columns(pl.col("doc_id").cast(pl.Categorical))
    assert irm.evaluate(categorical, metrics, labels=LABELS).equals(plain)


def test_off_policy_round_ids_beyond_int64_are_kept_whole() -> None:
    # the ids were cast to Int64: UInt64 round ids beyond 2**63 raised polars' error, in
    # the one plan and in the buckets' part key (which cast each table's round ids); and
    # the policy's and the reward model's were cast to the log's dtype: a UInt64 policy
    # beside an Int64 log raised polars' error where it held a big id
    big = 2**63 + 1
    shifted = pl.col("round_id").cast(pl.UInt64) + big
    metrics = ["ips", "snips", "dm"]
    model = POLICY.with_columns(q_hat=pl.Series([0.2, 0.7] * 3))
    plain = irm.evaluate(LOG, metrics, policy=POLICY, reward_model=model)
    tables = {"policy": POLICY.with_columns(shifted), "reward_model": model.with_columns(shifted)}
    for buckets in (None, 2):
        beyond = irm.evaluate(
            LOG.with_columns(shifted).lazy(),
            metrics,
            **{name: table.lazy() for name, table in tables.items()},
            buckets=buckets,
        )
        assert beyond.collect().equals(plain), buckets
    # UInt64 ids in the policy and the model beside the log's Int64 ones: the same rounds
    unsigned = {name: table.cast({"round_id": pl.UInt64}) for name, table in tables.items()}
    for buckets in (None, 2):
        got = irm.evaluate(
            LOG.lazy(),
            metrics,
            policy=POLICY.cast({"round_id": pl.UInt64}).lazy(),
            reward_model=model.cast({"round_id": pl.UInt64}).lazy(),
            buckets=buckets,
        )
        assert got.collect().equals(plain), buckets
    # ids beyond 2**63 that the signed log cannot hold: no round lines up, said so
    with pytest.raises(QuerySetError, match="have a round the policy table lacks"):
        irm.evaluate(LOG, metrics, **unsigned)
