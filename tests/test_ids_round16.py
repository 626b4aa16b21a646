"""Ids that do not line up, round 16.

1. The ranking metrics' coverage hint (ids of the run that match the judgments' only
   once their spelling is ignored) is ground.spelling's, as fusion's is: one rule of which
   ids are spelt apart (case, the spaces around them, separators, a prefix, leading
   zeros) and a fix that gives both tables one spelling. Before, the query hint gave one
   fix whatever the ids (``pl.concat_str(pl.lit('q'), ...)`` or ``.str.strip_prefix('q')``,
   which leaves ``'1'`` and ``'001'`` apart), and the document hint knew only case and
   spaces (``'1'`` beside ``'001'``, ``'7'`` beside ``'d7'``: the plain advice).
2. ``labels=`` whose key is a float beside the predictions' integers (or the other way
   round) is refused as every table's float ids are, with the cast that lines them up
   (``pl.Int64``); before, its own message said ``cast(pl.String)``, after which the
   labels' ``'1.0'`` still matches no prediction's ``1``.
3. With ``systems=``, ``reference=`` that holds none of one system's queries or
   documents, beside systems that line up, is warned about by the system's name
   (ground.validate.held_tally's ``systems``, warn_on_joint's ``by_system``): the
   tally counted every system's ids together, so system B's ids of another spelling
   scored rbo 0 in silence.
4. Likewise ``interactions=``: a system whose items (users) the interactions lack,
   beside one that lines up, is warned about by name; before, under
   ``unseen_items='drop'`` the system left the result without a word, and its users'
   replay novelty read 1 (every item new) in silence.
5. Likewise ``groups=`` (the exposure measures and Elliot's ``item_mad``),
   ``user_groups=`` (``user_mad``) and ``neighbors=``: a system none of whose ids they
   hold, beside one that lines up, got NaN, null or 0 in silence.
6. A null id in ``groups=``, ``user_groups=``, ``propensities=`` or ``queries=`` is
   refused by name (ground.validate.null_ids_error), as the judgments', interactions',
   item features', target's, reference's and labels' are; before, a join dropped the
   row in silence (and groups= with a null ``doc_id`` was read by the exposure measures
   and Elliot's MAD alike, whichever metric was asked).
7. ``irm compare`` and ``irm fuse`` take ``--ids str``, as ``irm evaluate`` does, and
   their refusal of integer ids beside text ones names that flag; before, the fix they
   named was a Python cast (``pl.col('doc_id').cast(pl.String)``), which a command's
   user cannot apply, and no flag did it.
8. The exposure measures' warning of a run that retrieves no judged document says what
   they score (ee_relevance 0, not ee_loss nor ee_disparity; it said "every metric
   scores 0", and ee_loss was 2.3125), and with ``systems=`` it is given per system,
   by name (it was skipped: system B's ids of another spelling scored in silence).
9. irm.reproducibility, whose rank similarities read the original runs as reference=
   with one system per run: the reproduced run whose ids the original lacks is named,
   in the call's words ("the reproduced run 'advanced'", "the original run lacks").
10. ``labels=`` under ``unmatched='drop'`` with ``systems=``: a system whose pairs the
    labels lack, beside one that lines up, is named (it left the result in silence).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import irm_in_process, warned

# --- 1. the coverage hint: the shared rule and a fix that works ------------------------


def _run(queries: list[str], docs: list[str]) -> pl.DataFrame:
    """Two queries, each retrieving its own relevant document first, then ``'x'``."""
    return pl.DataFrame(
        {
            "query_id": [queries[0], queries[0], queries[1], queries[1]],
            "doc_id": [docs[0], "x", docs[1], "x"],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )


def _qrels(queries: list[str], docs: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": queries, "doc_id": docs, "relevance": [1, 1]})


_NO_HIT = (
    "the run retrieves no judged document (0 of 2 judged documents, in 0 of 2 judged "
    "queries; it lists {listed} of the 2 judged queries): every judged query scores as a ranking "
    "of no judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval "
    "scores such a run. "
)
_EXACT = "ids are compared exactly, as trec_eval compares them; give both the same spelling"

# (case, the run's query ids, its documents, the judgments' query ids, their documents,
#  the hint, the fix it names, applied to both tables)
HINTS: list[tuple[str, list[str], list[str], list[str], list[str], str, pl.Expr]] = [
    (
        "zero-padded query ids",
        ["1", "2"],
        ["a", "b"],
        ["001", "002"],
        ["a", "b"],
        "2 query id(s) of the run match a judged query only once leading zeros are ignored "
        f"(run '1', judgments '001'): {_EXACT}, e.g. "
        "pl.col('query_id').str.strip_chars_start('0') on the run and the judgments.",
        pl.col("query_id").str.strip_chars_start("0"),
    ),
    (
        "a prefix and zeros on the judged query ids",
        ["1", "2"],
        ["a", "b"],
        ["q01", "q02"],
        ["a", "b"],
        "2 query id(s) of the run match a judged query only once a prefix and leading "
        f"zeros are ignored (run '1', judgments 'q01'): {_EXACT}, e.g. "
        "pl.col('query_id').str.strip_prefix('q').str.strip_chars_start('0') on the run and "
        "the judgments.",
        pl.col("query_id").str.strip_prefix("q").str.strip_chars_start("0"),
    ),
    (
        "a prefix on the run's query ids",
        ["Q-1", "Q-2"],
        ["a", "b"],
        ["1", "2"],
        ["a", "b"],
        "2 query id(s) of the run match a judged query only once a prefix is ignored (run "
        f"'Q-1', judgments '1'): {_EXACT}, e.g. pl.col('query_id').str.strip_prefix('Q-') "
        "on the run and the judgments.",
        pl.col("query_id").str.strip_prefix("Q-"),
    ),
    (
        "query ids with another separator",
        ["q-1", "q-2"],
        ["a", "b"],
        ["q_1", "q_2"],
        ["a", "b"],
        "2 query id(s) of the run match a judged query only once separators are ignored "
        f"(run 'q-1', judgments 'q_1'): {_EXACT}, e.g. "
        "pl.col('query_id').str.replace_all('[-_.: ]', '') on the run and the judgments.",
        pl.col("query_id").str.replace_all("[-_.: ]", ""),
    ),
    (
        "zero-padded document ids",
        ["q1", "q2"],
        ["7", "8"],
        ["q1", "q2"],
        ["007", "008"],
        "2 (query, document) pair(s) of the run match a judgment only when leading zeros "
        f"are ignored (run '7', judgments '007'): {_EXACT}, e.g. "
        "pl.col('doc_id').str.strip_chars_start('0') on the run and the judgments.",
        pl.col("doc_id").str.strip_chars_start("0"),
    ),
    (
        "a prefix on the judged document ids",
        ["q1", "q2"],
        ["7", "8"],
        ["q1", "q2"],
        ["doc7", "doc8"],
        "2 (query, document) pair(s) of the run match a judgment only when a prefix is "
        f"ignored (run '7', judgments 'doc7'): {_EXACT}, e.g. "
        "pl.col('doc_id').str.strip_prefix('doc') on the run and the judgments.",
        pl.col("doc_id").str.strip_prefix("doc"),
    ),
    (
        "document ids with another separator and case",
        ["q1", "q2"],
        ["doc-1", "doc-2"],
        ["q1", "q2"],
        ["DOC_1", "DOC_2"],
        "2 (query, document) pair(s) of the run match a judgment only when case and "
        f"separators are ignored (run 'doc-1', judgments 'DOC_1'): {_EXACT}, e.g. "
        "pl.col('doc_id').str.to_lowercase().str.replace_all('[-_.: ]', '') on the run and "
        "the judgments.",
        pl.col("doc_id").str.to_lowercase().str.replace_all("[-_.: ]", ""),
    ),
    (
        "document ids that differ in case alone (unchanged)",
        ["q1", "q2"],
        ["d1", "d2"],
        ["q1", "q2"],
        ["D1", "D2"],
        "2 (query, document) pair(s) of the run match a judgment only when case is ignored "
        f"(run 'd1', judgments 'D1'): {_EXACT}, e.g. pl.col('doc_id').str.to_lowercase() on "
        "the run and the judgments.",
        pl.col("doc_id").str.to_lowercase(),
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "run_q", "run_d", "judged_q", "judged_d", "hint", "fix"),
    HINTS,
    ids=[h[0] for h in HINTS],
)
def test_the_coverage_hint_names_the_fix_that_gives_one_spelling(
    case: str,
    run_q: list[str],
    run_d: list[str],
    judged_q: list[str],
    judged_d: list[str],
    hint: str,
    fix: pl.Expr,
    lazy: bool,
) -> None:
    run, qrels = _run(run_q, run_d), _qrels(judged_q, judged_d)
    tables = (run.lazy(), qrels.lazy()) if lazy else (run, qrels)
    got, said = warned(lambda: irm.evaluate(tables[0], ["ndcg@2"], qrels=tables[1]))
    listed = 0 if run_q != judged_q else 2
    # each judged query scored as an empty ranking: 0
    assert got.row(0) == (2, 0.0)
    assert said == [_NO_HIT.format(listed=listed) + hint]
    # the fix named, applied to both tables, lines the ids up: no warning, each relevant
    # document first (ndcg@2 = 1 per query)
    fixed, quiet = warned(
        lambda: irm.evaluate(run.with_columns(fix), ["ndcg@2"], qrels=qrels.with_columns(fix))
    )
    assert quiet == []
    assert fixed.row(0) == (2, 1.0)


def test_fusion_names_ids_with_another_separator() -> None:
    """fusion's hint reads the same rule: 'doc-1' beside 'doc_1' (before: the plain
    advice, as two prefixes that differ, 'doc-' and 'doc_')."""
    a = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["doc-1", "doc-2"], "score": [2.0, 1.0]})
    b = a.with_columns(pl.col("doc_id").str.replace("-", "_"))
    _, said = warned(lambda: irm.fuse({"a": a, "b": b}))
    assert len(said) == 1
    assert (
        "2 document id(s) of run 'b' match an id of run 'a' only when separators are "
        "ignored ('doc_1' against 'doc-1'): ids are compared exactly; give both runs the "
        "same spelling, e.g. pl.col('doc_id').str.replace_all('[-_.: ]', '') on each."
    ) in said[0]


def test_two_prefixes_that_differ_are_two_names() -> None:
    """As fusion reads them: 'x1' beside 'q1' is no hint (no fix gives one spelling
    short of dropping both prefixes): the plain advice."""
    _, said = warned(
        lambda: irm.evaluate(
            _run(["x1", "x2"], ["a", "b"]), ["ndcg@2"], qrels=_qrels(["q1", "q2"], ["a", "b"])
        )
    )
    assert said == [
        _NO_HIT.format(listed=0) + "Check that the run and the judgments name the same "
        "queries and documents (same collection, same id spelling)."
    ]


# --- 2. a float key of labels= ---------------------------------------------------------

PREDICTIONS = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "p": [4.0, 3.5, 4.5]})
LABELS = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [5.0, 3.0, 4.0]})
PAIRS: dict[str, Any] = {
    "label": "rating",
    "prediction": "p",
    "query_id": "user",
    "doc_id": "item",
}

# (case, predictions, labels, the message)
FLOAT_KEYS: list[tuple[str, pl.DataFrame, pl.DataFrame, str]] = [
    (
        "float users in the labels",
        PREDICTIONS,
        LABELS.with_columns(pl.col("user").cast(pl.Float64)),
        "column 'user' in the labels has dtype Float64; ids must be strings or integers: "
        "cast it, e.g. pl.col('user').cast(pl.Int64)",
    ),
    (
        "float items in the predictions",
        PREDICTIONS.with_columns(pl.col("item").cast(pl.Float32)),
        LABELS,
        "column 'item' in the predictions has dtype Float32; ids must be strings or "
        "integers: cast it, e.g. pl.col('item').cast(pl.Int64)",
    ),
    (
        "float users beside string ones",
        PREDICTIONS.with_columns(pl.col("user").cast(pl.String)),
        LABELS.with_columns(pl.col("user").cast(pl.Float64)),
        "column 'user' in the labels has dtype Float64; ids must be strings or integers: "
        "cast it, e.g. pl.col('user').cast(pl.Int64)",
    ),
    (
        "string users beside integers (unchanged)",
        PREDICTIONS,
        LABELS.with_columns(pl.col("user").cast(pl.String)),
        "column 'user' is Int64 in the predictions but String in the labels; cast one side "
        "so that the pairs match, e.g. pl.col('user').cast(pl.String)",
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "predictions", "labels", "message"), FLOAT_KEYS, ids=[c[0] for c in FLOAT_KEYS]
)
def test_a_float_key_of_labels_is_refused_with_the_cast_that_fits(
    case: str, predictions: pl.DataFrame, labels: pl.DataFrame, message: str, lazy: bool
) -> None:
    tables = (predictions.lazy(), labels.lazy()) if lazy else (predictions, labels)
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        warned(lambda: irm.evaluate(tables[0], ["rmse"], labels=tables[1], **PAIRS))


def test_the_cast_named_lines_the_pairs_up() -> None:
    labels = LABELS.with_columns(pl.col("user").cast(pl.Float64))
    fixed = labels.with_columns(pl.col("user").cast(pl.Int64))
    got, said = warned(lambda: irm.evaluate(PREDICTIONS, ["rmse"], labels=fixed, **PAIRS))
    # errors 1, 0.5, 0.5: sqrt((1 + 0.25 + 0.25) / 3) = sqrt(0.5)
    assert said == []
    assert got.row(0) == (3, pytest.approx(0.5**0.5, abs=1e-15))


# --- 3. reference= that lines up with one system and not another ------------------------

SYS_RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
REFERENCE = SYS_RUN.with_columns(pl.Series("score", [1.0, 2.0, 3.0, 2.0, 1.0]))


def _systems(b: pl.DataFrame) -> pl.DataFrame:
    return pl.concat(
        [
            SYS_RUN.with_columns(pl.lit("A").alias("system")),
            b.with_columns(pl.lit("B").alias("system")),
        ]
    )


def _warned_of(things: str, count: int, column: str, effect: str, name: str = "system 'B'") -> str:
    return (
        f"reference= holds none of the {count} {things} of the run of {name} (column "
        f"{column!r}): {effect}. Ids that do not line up are the likely cause: give "
        f"reference= and the run of {name} the same {column!r} values (same spelling, "
        "same collection)."
    )


_NO_SHARED = (
    "no list shares a document with the reference's: every overlap is 0 (rbo, jaccard, "
    "intersection...; unexpectedness 1), the orders of the shared documents are null "
    "(kendall_tau, tau_ap) and repro_eval's ktu, which pairs where each list's ids fall "
    "in the sorted union of both, reads the ids' spelling alone"
)
_LACKED = (
    "the 2 the reference lacks are left out (unjudged='drop'), and each query of the "
    "reference the run lacks scores as an empty ranking does (unretrieved='zero': 0)"
)

# (case, system B's run, options, the warnings, B's jaccard@2)
SYSTEMS: list[tuple[str, pl.DataFrame, dict[str, Any], list[str], float]] = [
    (
        "B's documents of another spelling",
        SYS_RUN.with_columns(pl.col("doc_id").str.to_uppercase()),
        {},
        [_warned_of("documents", 4, "doc_id", _NO_SHARED)],
        # no document shared: every overlap 0
        0.0,
    ),
    (
        "B's queries of another spelling",
        SYS_RUN.with_columns(pl.col("query_id").str.to_uppercase()),
        {},
        [_warned_of("queries", 2, "query_id", _LACKED)],
        # Q1, Q2 left out (unjudged='drop'); the reference's q1, q2 score 0
        0.0,
    ),
    (
        "B's documents, out of core",
        SYS_RUN.with_columns(pl.col("doc_id").str.to_uppercase()),
        {"buckets": 2},
        [_warned_of("documents", 4, "doc_id", _NO_SHARED)],
        0.0,
    ),
    (
        "B lines up: no warning",
        REFERENCE,
        {},
        [],
        # B's rankings are the reference's: every top 2 shared, 1 per query
        1.0,
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "b", "options", "expected", "b_value"), SYSTEMS, ids=[c[0] for c in SYSTEMS]
)
def test_reference_names_the_system_whose_ids_it_lacks(
    case: str,
    b: pl.DataFrame,
    options: dict[str, Any],
    expected: list[str],
    b_value: float,
    lazy: bool,
) -> None:
    runs, reference = _systems(b), REFERENCE
    tables = (runs.lazy(), reference.lazy()) if lazy else (runs, reference)
    got, said = warned(
        lambda: irm.evaluate(
            tables[0], ["jaccard@2"], reference=tables[1], systems="system", **options
        )
    )
    assert said == expected
    # A's own run against the reference: q1 {a, b} against {c, b}: 1/3; q2 {a, d}: 1
    assert got.rows() == [("A", 2, pytest.approx((1 / 3 + 1) / 2)), ("B", 2, b_value)]


def test_a_system_named_by_two_keys_and_an_integer_key() -> None:
    b = SYS_RUN.with_columns(pl.col("doc_id").str.to_uppercase())
    runs = _systems(b).with_columns(pl.lit(7).alias("day"))
    _, said = warned(
        lambda: irm.evaluate(runs, ["rbo"], reference=REFERENCE, systems=["system", "day"])
    )
    assert said == [_warned_of("documents", 4, "doc_id", _NO_SHARED, "system (system='B', day=7)")]
    numbered = _systems(b).with_columns(pl.col("system").replace_strict({"A": 1, "B": 2}))
    _, said = warned(
        lambda: irm.evaluate(numbered, ["rbo"], reference=REFERENCE, systems="system")
    )
    assert said == [_warned_of("documents", 4, "doc_id", _NO_SHARED, "system 2")]


def test_every_system_of_another_spelling_is_the_whole_run_s_warning() -> None:
    """Where the whole run's ids match none, the run is warned about once, as before
    (not once more per system)."""
    upper = SYS_RUN.with_columns(pl.col("doc_id").str.to_uppercase())
    runs = pl.concat([upper.with_columns(pl.lit(s).alias("system")) for s in ("A", "B")])
    _, said = warned(lambda: irm.evaluate(runs, ["rbo"], reference=REFERENCE, systems="system"))
    assert said == [
        "reference= holds none of the 4 documents of the run (column 'doc_id'): "
        f"{_NO_SHARED}. Ids that do not line up are the likely cause: give reference= and "
        "the run the same 'doc_id' values (same spelling, same collection)."
    ]


# --- 4. interactions= that lines up with one system and not another ---------------------

HISTORY = pl.DataFrame({"query_id": ["q1", "q2", "q2", "q1"], "doc_id": ["b", "a", "c", "d"]})


def _interactions_warning(things: str, count: int, column: str, owner: str, effect: str) -> str:
    return (
        f"interactions= holds none of the {count} {things} of the {owner} of system 'B' "
        f"(column {column!r}): {effect}. Ids that do not line up are the likely cause: give "
        f"interactions= and the {owner} of system 'B' the same {column!r} values (same "
        "spelling, same collection)."
    )


_DROPPED = (
    "the recommendations of an item the interactions lack are left out "
    "(unseen_items='drop'), so the metrics read few of the lists' items"
)
# the metric asked that reads the interactions is named (round 19: the families were)
_NEVER_SEEN = (
    "an item the interactions lack has no popularity and no user has seen it, so epc@2 "
    "reads it as never seen, and the catalogue does not hold it"
)
_NEW = (
    "a user without a history finds every item new (novelty(kind='replay')@2 reads no "
    "history for them)"
)
_UPPER_DOCS = SYS_RUN.with_columns(pl.col("doc_id").str.to_uppercase())
_UPPER_USERS = SYS_RUN.with_columns(pl.col("query_id").str.to_uppercase())

# (case, system B's run, metrics, the other tables and options, the warnings, the
#  systems of the result)
INTERACTIONS: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], list[str], list[str]]] = [
    (
        "B's items, unseen_items='drop'",
        _UPPER_DOCS,
        ["novelty@2"],
        {"unseen_items": "drop"},
        [_interactions_warning("items", 4, "doc_id", "recommendations", _DROPPED)],
        # every recommendation of B left out: B has no row
        ["A"],
    ),
    (
        "B's users, replay novelty",
        _UPPER_USERS,
        ["novelty(kind='replay')@2"],
        {},
        [_interactions_warning("users", 2, "query_id", "recommendations", _NEW)],
        ["A", "B"],
    ),
    (
        "B's items, Elliot's metrics beside the ranking metrics",
        _UPPER_DOCS,
        ["epc@2"],
        {
            "qrels": pl.concat([SYS_RUN, _UPPER_DOCS])
            .select("query_id", "doc_id")
            .with_columns(pl.lit(1).alias("relevance"))
        },
        [_interactions_warning("items", 4, "doc_id", "run", _NEVER_SEEN)],
        ["A", "B"],
    ),
    (
        "B lines up: no warning",
        SYS_RUN,
        ["novelty@2"],
        {},
        [],
        ["A", "B"],
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "b", "metrics", "tables", "expected", "systems"),
    INTERACTIONS,
    ids=[c[0] for c in INTERACTIONS],
)
def test_interactions_name_the_system_whose_ids_they_lack(
    case: str,
    b: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, Any],
    expected: list[str],
    systems: list[str],
    lazy: bool,
) -> None:
    runs = _systems(b)
    given = {k: v.lazy() if lazy and isinstance(v, pl.DataFrame) else v for k, v in tables.items()}
    history = HISTORY.lazy() if lazy else HISTORY
    got, said = warned(
        lambda: irm.evaluate(
            runs.lazy() if lazy else runs,
            metrics,
            interactions=history,
            systems="system",
            **given,
        )
    )
    assert said == expected
    assert got["system"].to_list() == systems


# --- 5. groups=, user_groups=, neighbors= that line up with one system only -------------

GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
USER_GROUPS = pl.DataFrame({"query_id": ["q1", "q2"], "group": ["new", "old"]})
JUDGED = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "c", "d"], "relevance": [1, 2, 1]}
)


def _both_spellings(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    return pl.concat([frame, frame.with_columns(pl.col(column).str.to_uppercase())])


def _named(table: str, count: int, things: str, column: str, effect: str) -> str:
    return (
        f"{table}= holds none of the {count} {things} of the run of system 'B' (column "
        f"{column!r}): {effect}. Ids that do not line up are the likely cause: give {table}= "
        f"and the run of system 'B' the same {column!r} values (same spelling, same "
        "collection)."
    )


_UNGROUPED = (
    "a document without a group counts in no group, so its exposure and relevance are "
    "left out of every group's (with none grouped, the values are null or NaN)"
)
_NO_CLUSTER = "{} without a cluster counts in no cluster's mean (with none clustered, MAD is null)"

# (case, system B's run, metrics, the other tables, the warnings, B's value)
CLUSTERS: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], list[str], Any]] = [
    (
        "groups=: B's documents, awrf",
        _UPPER_DOCS,
        ["awrf"],
        {"qrels": _both_spellings(JUDGED, "doc_id"), "groups": GROUPS},
        [
            _named("groups", 4, "documents", "doc_id", _UNGROUPED),
            # B's NaN said too, naming B (tests/test_exposure_round20.py)
            "'awrf' is NaN on 2 of the 4 queries (first: system='B', query_id='q1'): none "
            "of the ranking's documents has a group in groups=, so the ranking has no "
            "group distribution to compare with the target, or (without target=) none of "
            "the query's relevant documents has one, so the target has none (wptrec drops "
            "the pages without an alignment and gives NaN too), and the mean over the "
            "queries is NaN with it; give the run's documents and the relevant judged ones "
            "their groups in groups= (ids spelt as the run spells them), or leave those "
            "queries out",
        ],
        # no document of B grouped: awrf NaN (B's own judgments are grouped alike none)
        "nan",
    ),
    (
        "groups=: B's items, item_mad",
        _UPPER_DOCS,
        ["item_mad@2"],
        {"qrels": _both_spellings(JUDGED, "doc_id"), "groups": GROUPS},
        [_named("groups", 4, "items", "doc_id", _NO_CLUSTER.format("an item"))],
        None,
    ),
    (
        "user_groups=: B's users, user_mad",
        _UPPER_USERS,
        ["user_mad@2"],
        {"qrels": _both_spellings(JUDGED, "query_id"), "user_groups": USER_GROUPS},
        [_named("user_groups", 2, "users", "query_id", _NO_CLUSTER.format("a user"))],
        None,
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "b", "metrics", "tables", "expected", "b_value"),
    CLUSTERS,
    ids=[c[0] for c in CLUSTERS],
)
def test_clusters_name_the_system_whose_ids_they_lack(
    case: str,
    b: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, Any],
    expected: list[str],
    b_value: Any,
    lazy: bool,
) -> None:
    runs = _systems(b)
    given = {k: v.lazy() if lazy else v for k, v in tables.items()}
    got, said = warned(
        lambda: irm.evaluate(runs.lazy() if lazy else runs, metrics, systems="system", **given)
    )
    assert said == expected
    value = got.filter(pl.col("system") == "B")[metrics[0]].item()
    assert (value != value) if b_value == "nan" else value is b_value


def test_neighbors_name_the_system_whose_queries_they_lack() -> None:
    exact = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": [1, 2, 3], "score": [-1.0, -2.0, -3.0]})
    runs = pl.concat(
        [
            exact.with_columns(pl.lit("A").alias("system")),
            exact.with_columns(pl.lit("Q").alias("query_id"), pl.lit("B").alias("system")),
        ]
    )
    got, said = warned(
        lambda: irm.evaluate(runs, ["neighbor_recall@2"], neighbors=exact, systems="system")
    )
    # B's 'Q' left out (unjudged='drop'); neighbors=' 'q', which B lacks, scores 0
    assert got.rows() == [("A", 1, 1.0), ("B", 1, 0.0)]
    assert said == [
        _named(
            "neighbors", 1, "queries", "query_id", "the 1 it lacks are left out (unjudged='drop')"
        )
    ]


# --- 6. a null id in groups=, user_groups=, propensities=, queries= ---------------------


def _with_null(frame: pl.DataFrame, column: str, rows: int = 1) -> pl.DataFrame:
    first = pl.int_range(pl.len()) < rows
    return frame.with_columns(pl.when(first).then(None).otherwise(pl.col(column)).alias(column))


def _null_ids(keyword: str, count: int, column: str, row: str) -> str:
    return (
        f"{keyword}= has {count} row(s) with a null {column!r}: {row}, and a null id names "
        f"none; fill or drop them, e.g. {keyword}.drop_nulls([{column!r}])"
    )


_GROUP_ROW = "each row puts one document in a group"
PROPENSITIES = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "propensity": [0.5, 0.4, 0.3, 0.2]})
BY_POSITION = pl.DataFrame({"position": [1, 2, 3], "propensity": [0.9, 0.5, 0.3]})
RANKED = SYS_RUN.with_columns(
    pl.col("score").rank("ordinal", descending=True).over("query_id").cast(pl.Int64).alias("rank")
).drop("score")

# (case, the run, metrics, the tables, options, the message)
NULL_IDS: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], dict[str, Any], str]] = [
    *(
        (
            f"groups= doc_id, {metric}",
            SYS_RUN,
            [metric],
            {"groups": _with_null(GROUPS, "doc_id")}
            | ({} if metric == "rnd" else {"qrels": JUDGED}),
            {},
            _null_ids("groups", 1, "doc_id", _GROUP_ROW),
        )
        for metric in ("ee_loss", "awrf", "rnd", "item_mad@2")
    ),
    (
        "groups= doc_id, two rows, exposure and MAD together",
        SYS_RUN,
        ["ee_loss", "item_mad@2"],
        {"qrels": JUDGED, "groups": _with_null(GROUPS, "doc_id", rows=2)},
        {},
        _null_ids("groups", 2, "doc_id", _GROUP_ROW),
    ),
    (
        "user_groups= query_id",
        SYS_RUN,
        ["user_mad@2"],
        {"qrels": JUDGED, "user_groups": _with_null(USER_GROUPS, "query_id")},
        {},
        _null_ids("user_groups", 1, "query_id", "each row puts one user in a group"),
    ),
    (
        "propensities= doc_id",
        SYS_RUN,
        ["ps_precision@2", "ps_ndcg@2"],
        {"qrels": JUDGED, "propensities": _with_null(PROPENSITIES, "doc_id")},
        {},
        _null_ids("propensities", 1, "doc_id", "each row gives one document's propensity"),
    ),
    (
        "propensities= doc_id, out of core",
        SYS_RUN,
        ["ps_ndcg@2"],
        {"qrels": JUDGED, "propensities": _with_null(PROPENSITIES, "doc_id")},
        {"buckets": 2},
        _null_ids("propensities", 1, "doc_id", "each row gives one document's propensity"),
    ),
    (
        "propensities= position",
        RANKED,
        ["ps_precision@2"],
        {"qrels": JUDGED, "propensities": _with_null(BY_POSITION, "position")},
        {},
        _null_ids("propensities", 1, "position", "each row gives one position's propensity"),
    ),
    (
        "queries= query_id",
        SYS_RUN,
        ["ndcg@2"],
        {
            "qrels": JUDGED,
            "queries": pl.DataFrame({"query_id": ["q1", "q2", None], "day": [1, 2, 3]}),
        },
        {"by": "day"},
        _null_ids("queries", 1, "query_id", "each row gives one query's attributes"),
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "run", "metrics", "tables", "options", "message"),
    NULL_IDS,
    ids=[c[0] for c in NULL_IDS],
)
def test_a_null_id_beside_the_run_is_refused_by_name(
    case: str,
    run: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, Any],
    options: dict[str, Any],
    message: str,
    lazy: bool,
) -> None:
    given = {k: v.lazy() if lazy else v for k, v in tables.items()}
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        warned(lambda: irm.evaluate(run.lazy() if lazy else run, metrics, **given, **options))


def test_the_same_tables_without_the_null_rows_are_read() -> None:
    got, said = warned(
        lambda: irm.evaluate(
            SYS_RUN,
            ["ee_loss", "user_mad@2"],
            qrels=JUDGED,
            groups=GROUPS,
            user_groups=USER_GROUPS,
        )
    )
    assert said == []
    assert got.height == 1


# --- 7. --ids str of irm compare and irm fuse -------------------------------------------

_ID_FLAG = "e.g. --ids str (every id of every file read as text)"


@pytest.fixture
def id_files(tmp_path: Path) -> Path:
    """Run a (text ids, Parquet), run b (the same, integer ids) and TREC judgments."""
    run = pl.DataFrame(
        {
            "query_id": ["1", "1", "2", "2"],
            "doc_id": ["10", "11", "12", "10"],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )
    run.write_parquet(tmp_path / "a.parquet")
    run.with_columns(pl.col("doc_id").cast(pl.Int64)).write_parquet(tmp_path / "b.parquet")
    (tmp_path / "qrels.txt").write_text("1 0 10 1\n2 0 10 1\n")
    return tmp_path


# (case, the command's arguments, the refusal without --ids str)
COMMANDS: list[tuple[str, list[str], str]] = [
    (
        "compare",
        ["compare", "a.parquet", "b.parquet", "--qrels", "qrels.txt", "-m", "mrr",
         "--format", "json"],
        "irm: error: qrels.txt: system 'b': column 'doc_id' holds integers in the run "
        f"(Int64) but strings in the judgments (String); cast one side, {_ID_FLAG}\n",
    ),
    (
        "fuse",
        ["fuse", "a.parquet", "b.parquet", "-o", "fused.parquet"],
        "irm: error: column 'doc_id' holds strings in some runs and integers in others "
        f"('a.parquet': String, 'b.parquet': Int64); cast it to one type in every run, "
        f"{_ID_FLAG}\n",
    ),
    (
        "fuse --optimize",
        ["fuse", "a.parquet", "b.parquet", "--optimize", "--qrels", "qrels.txt"],
        "irm: error: column 'doc_id' holds strings in some runs and integers in others "
        f"('a.parquet': String, 'b.parquet': Int64); cast it to one type in every run, "
        f"{_ID_FLAG}\n",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("case", "args", "refusal"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_compare_and_fuse_take_ids_str(
    id_files: Path, case: str, args: list[str], refusal: str
) -> None:
    refused = irm_in_process(*args, cwd=id_files)
    assert (refused.returncode, refused.stderr) == (2, refusal)
    done = irm_in_process(*args, "--ids", "str", cwd=id_files)
    # a and b score the same mrr on both queries: compare's warning of identical
    # systems (round 17) is all it says
    said = [line for line in done.stderr.splitlines() if "every per-query delta is 0" not in line]
    assert (done.returncode, said) == (0, [])


def test_compare_with_ids_str_pairs_the_same_rankings(id_files: Path) -> None:
    args = ["compare", "a.parquet", "b.parquet", "--qrels", "qrels.txt", "-m", "mrr"]
    done = irm_in_process(*args, "--format", "json", "--ids", "str", cwd=id_files)
    row = json.loads(done.stdout)[0]
    # the same rankings once the ids are text: q1 10 first (1), q2 10 second (1/2)
    assert (row["mean"], row["baseline_mean"], row["delta"]) == (0.75, 0.75, 0.0)
    fused = irm_in_process(
        "fuse", "a.parquet", "b.parquet", "-o", "f.parquet", "--ids", "str", cwd=id_files
    )
    assert fused.returncode == 0
    assert pl.read_parquet(id_files / "f.parquet").schema["doc_id"] == pl.String


# --- 8. the exposure measures' coverage warning --------------------------------------------

_EXPOSED = (
    "no relevant document is exposed on any judged query, and the exposure measures score "
    "each as a ranking without one (ee_relevance 0; not 0 for ee_loss and ee_disparity)"
)
_CASE_HINT = (
    "3 (query, document) pair(s) of the run match a judgment only when case is ignored "
    "(run 'A', judgments 'a'): ids are compared exactly, as trec_eval compares them; give "
    "both the same spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and the "
    "judgments."
)
_TALLY = "(0 of 3 judged documents, in 0 of 2 judged queries)"

# (case, the run, options, the warnings)
EXPOSED: list[tuple[str, pl.DataFrame, dict[str, Any], list[str]]] = [
    (
        "the whole run",
        _UPPER_DOCS,
        {},
        [f"the run retrieves no judged document {_TALLY}: {_EXPOSED}. {_CASE_HINT}"],
    ),
    (
        "system B of two",
        _systems(_UPPER_DOCS),
        {"systems": "system"},
        [f"system 'B' retrieves no judged document {_TALLY}: {_EXPOSED}. {_CASE_HINT}"],
    ),
    ("two systems that line up", _systems(SYS_RUN), {"systems": "system"}, []),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "run", "options", "expected"), EXPOSED, ids=[c[0] for c in EXPOSED]
)
def test_the_exposure_measures_say_what_they_score_on_a_run_of_no_judged_document(
    case: str, run: pl.DataFrame, options: dict[str, Any], expected: list[str], lazy: bool
) -> None:
    judged = JUDGED.lazy() if lazy else JUDGED
    got, said = warned(
        lambda: irm.evaluate(
            run.lazy() if lazy else run, ["ee_loss", "ee_relevance"], qrels=judged, **options
        )
    )
    assert said == expected
    if expected:  # the run that misses: ee_relevance 0, ee_loss not
        missed = got.tail(1).row(0, named=True)
        assert missed["ee_relevance"] == 0.0
        assert missed["ee_loss"] > 0.0


# --- 9. irm.reproducibility names the reproduced run whose ids the original lacks ---------


def test_reproducibility_names_the_reproduced_run_whose_ids_the_original_lacks() -> None:
    doubled = SYS_RUN.with_columns(pl.col("score") * 2)
    upper = doubled.with_columns(pl.col("query_id").str.to_uppercase())
    _, said = warned(
        lambda: irm.reproducibility(
            {"baseline": SYS_RUN, "advanced": SYS_RUN},
            {"baseline": doubled, "advanced": upper},
            ["ndcg@2"],
            qrels=JUDGED,
        )
    )
    assert (
        "original= holds none of the 2 queries of the reproduced run 'advanced' (column "
        "'query_id'): the 2 the original run lacks are left out (unjudged='drop'), and each "
        "query of the original run the reproduced run lacks scores as an empty ranking does "
        "(unretrieved='zero': 0, but null in ktu@1000). "
        "Ids that do not line up are the likely cause: give original= and the reproduced run "
        "'advanced' the same 'query_id' values (same spelling, same collection)."
    ) in said


# --- 10. labels= that lines up with one system's predictions only --------------------------


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
def test_labels_name_the_system_whose_pairs_they_lack(lazy: bool) -> None:
    predictions = pl.concat(
        [
            PREDICTIONS.with_columns(pl.lit("A").alias("system")),
            PREDICTIONS.with_columns(pl.col("item") + 100, pl.lit("B").alias("system")),
        ]
    )
    tables = (predictions.lazy(), LABELS.lazy()) if lazy else (predictions, LABELS)
    got, said = warned(
        lambda: irm.evaluate(
            tables[0], ["rmse"], labels=tables[1], systems="system", unmatched="drop", **PAIRS
        )
    )
    # A: errors 1, 0.5, 0.5 (sqrt(0.5)); B: every pair left out, no row
    assert got.rows() == [("A", 3, pytest.approx(0.5**0.5, abs=1e-15))]
    assert said == [
        "labels= and the predictions of system 'B' share none of their (user, item) pairs "
        "(3 predictions, 3 labels): unmatched='drop' leaves out every prediction without a "
        "label, so system 'B' has no row. Ids that do not line up are the likely cause: give "
        "labels= and the predictions of system 'B' the same 'user' and 'item' values (same "
        "spelling, same collection)."
    ]
