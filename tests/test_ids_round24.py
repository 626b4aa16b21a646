"""Ids that do not line up, round 24.

1. ``irm.knn(..., exclude_self=True)`` where no query id is an id of the corpus (``'q1'``
   beside ``'d1'``, ids shifted by an offset, another numbering) left nothing out in
   silence: each query that is a row of the corpus under another id was its own nearest
   neighbour (a self-search read as perfect). It now gives a
   :class:`~polars_irmetrics.errors.CoverageWarning` naming the columns and a first id of
   each side, in memory and block by block from Parquet alike; and its refusal of ids
   of two kinds (text beside integers) names the cast that lines them up.
2. ``by=`` or ``systems=`` keys that both the run and the judgments hold (judgments per
   group), spelt apart (``'B'`` beside ``'b'``): the run's group the judgments lack was
   left out in silence (its queries unjudged, ``unjudged='drop'``), and the judgments'
   group the run lacks scored 0 on every judged query, in silence under ``by=`` (a
   ``systems=`` key's is the coverage warning's, naming the system). Each is now a
   :class:`~polars_irmetrics.errors.CoverageWarning` naming the first group and the key
   column (``ground.validate.warn_on_absent_groups``), on one machine, lazy or not, out
   of core, and on Spark and Dask (each part hands its groups to the engine's coverage,
   which gathers them) alike.
3. A ``by=``/``systems=`` key of one dtype in the run and another in a side table (the
   judgments, queries=, interactions=, reference=; Int32 beside Int64, Categorical or
   Float64 beside String) is refused by one shared text
   (``ground.validate.key_dtype_error``) that names the cast giving both one dtype; it
   said "cast one side to match", naming none, in six copies. (Round 25: a key of one
   kind in two dtypes, Int32 beside Int64 or Categorical beside String, is lined up
   instead, as the ids are: tests/test_key_widths_round25.py; two kinds stay refused.)
4. Off-policy evaluation: a policy that takes none of the logged actions, whose text
   action ids match the log's once their spelling is ignored (``'A'`` beside ``'a'``,
   ``'01'`` beside ``'1'``), says so with the fix (``ground.spelling``'s hint, as the
   ranking metrics' and fusion's coverage warnings give it); the warning said only
   "same spelling", naming no difference.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io, warned

# --- 1. knn's exclude_self where no query id is a document id ---------------------------

_VECTORS = np.random.default_rng(24).standard_normal((6, 3))
CORPUS = pl.DataFrame({"doc_id": [1, 2, 3, 4, 5, 6], "embedding": _VECTORS.tolist()})
#: the corpus' first two rows searched as queries: each its own nearest neighbour
QUERIES = pl.DataFrame({"query_id": [1, 2], "embedding": _VECTORS[:2].tolist()})


def _no_self(
    query: object, doc: object, query_id: str = "query_id", doc_id: str = "doc_id"
) -> str:
    return (
        "exclude_self=True leaves out each query's own id, and the corpus holds none of the "
        f"2 query id(s) (column {query_id!r} of the queries, column {doc_id!r} of the corpus; "
        f"e.g. query {query!r}, document {doc!r}): nothing is left out, so a query that is a "
        "row of the corpus under another id finds itself first. Ids that do not line up are "
        "the likely cause: give the queries and the corpus the same ids (same spelling, same "
        "collection), or pass exclude_self=False where the queries are not rows of the corpus"
    )


def _texts(frame: pl.DataFrame, column: str, prefix: str) -> pl.DataFrame:
    return frame.with_columns(pl.format(prefix + "{}", pl.col(column)).alias(column))


# (case, the queries, the corpus, the warnings)
SELF: list[tuple[str, pl.DataFrame, pl.DataFrame, list[str]]] = [
    ("the same ids: no warning", QUERIES, CORPUS, []),
    (
        "Int32 query ids beside Int64 document ids: no warning",
        QUERIES.with_columns(pl.col("query_id").cast(pl.Int32)),
        CORPUS,
        [],
    ),
    (
        "Categorical query ids beside String ones: no warning",
        _texts(QUERIES, "query_id", "").with_columns(pl.col("query_id").cast(pl.Categorical)),
        _texts(CORPUS, "doc_id", ""),
        [],
    ),
    (
        "some query ids only (a query that is no row of the corpus): no warning",
        QUERIES.with_columns(pl.Series("query_id", [1, 100])),
        CORPUS,
        [],
    ),
    (
        "query ids shifted by an offset",
        QUERIES.with_columns(pl.col("query_id") + 100),
        CORPUS,
        [_no_self(101, 1)],
    ),
    (
        "text ids of two prefixes",
        _texts(QUERIES, "query_id", "q"),
        _texts(CORPUS, "doc_id", "d"),
        [_no_self("q1", "d1")],
    ),
    (
        "zero-padded query ids",
        _texts(QUERIES, "query_id", "00"),
        _texts(CORPUS, "doc_id", ""),
        [_no_self("001", "1")],
    ),
]


@pytest.mark.parametrize(("case", "queries", "corpus", "expected"), SELF, ids=[c[0] for c in SELF])
def test_exclude_self_that_leaves_nothing_out_is_warned_of(
    case: str, queries: pl.DataFrame, corpus: pl.DataFrame, expected: list[str]
) -> None:
    run, said = warned(lambda: irm.knn(queries, corpus, k=2, exclude_self=True))
    assert said == expected
    # each query is row 0 or 1 of the corpus: found first unless its own id is left out
    firsts = run.filter(pl.col("rank") == 1).get_column("doc_id").cast(pl.String).to_list()
    itself = [str(corpus["doc_id"][0]), str(corpus["doc_id"][1])]
    # (query 100 of "some query ids only" is no id of the corpus: it finds row 1 first)
    own = [True, True] if expected else [False, "some query ids only" in case]
    assert [a == b for a, b in zip(firsts, itself, strict=True)] == own


def test_exclude_self_from_parquet_blocks_warns_once(tmp_path: Path) -> None:
    """Block by block from a file: one warning, after the last block (a query's own id
    in a later block is found there: no warning)."""
    path = tmp_path / "corpus.parquet"
    CORPUS.write_parquet(path, row_group_size=2)
    _, said = warned(
        lambda: irm.knn(QUERIES.with_columns(pl.col("query_id") + 100), path, k=2,
                        exclude_self=True, block_size=2)
    )  # fmt: skip
    assert said == [_no_self(101, 1)]
    late = QUERIES.with_columns(pl.Series("query_id", [5, 6]))
    _, quiet = warned(lambda: irm.knn(late, path, k=2, exclude_self=True, block_size=2))
    assert quiet == []


def test_exclude_self_warning_names_the_columns_given() -> None:
    queries = QUERIES.rename({"query_id": "qid"}).with_columns(pl.col("qid") + 100)
    _, said = warned(
        lambda: irm.knn(
            queries, CORPUS.rename({"doc_id": "pid"}), k=2, exclude_self=True,
            query_id="qid", doc_id="pid",
        )
    )  # fmt: skip
    assert said == [_no_self(101, 1, "qid", "pid")]


# (case, the queries, the corpus, the refusal)
KINDS: list[tuple[str, Any, pl.DataFrame, str]] = [
    (
        "text query ids, integer document ids",
        _texts(QUERIES, "query_id", ""),
        CORPUS,
        "exclude_self=True compares query ids with document ids, but they have dtypes String "
        "and Int64: cast one of them, e.g. pl.col('doc_id').cast(pl.String) on the corpus",
    ),
    (
        "integer query ids, text document ids",
        QUERIES,
        _texts(CORPUS, "doc_id", ""),
        "exclude_self=True compares query ids with document ids, but they have dtypes Int64 "
        "and String: cast one of them, e.g. pl.col('query_id').cast(pl.String) on the queries",
    ),
]


@pytest.mark.parametrize(
    ("case", "queries", "corpus", "message"), KINDS, ids=[c[0] for c in KINDS]
)
def test_exclude_self_ids_of_two_kinds_name_the_cast(
    case: str, queries: Any, corpus: pl.DataFrame, message: str
) -> None:
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.knn(queries, corpus, k=2, exclude_self=True)
    # the cast named lines the ids up: each query's own id left out, no warning
    fixed = (
        (queries, corpus.with_columns(pl.col("doc_id").cast(pl.String)))
        if "on the corpus" in message
        else (queries.with_columns(pl.col("query_id").cast(pl.String)), corpus)
    )
    run, said = warned(lambda: irm.knn(*fixed, k=2, exclude_self=True))
    assert said == []
    assert run.filter(pl.col("rank") == 1)["doc_id"].cast(pl.String).to_list() != ["1", "2"]


def test_exclude_self_of_matrix_queries_beside_text_ids_asks_for_a_table() -> None:
    # a numpy matrix's ids are its rows (0, 1, ...): the cast advice named a query_id
    # column the matrix does not have
    corpus = _texts(CORPUS, "doc_id", "")
    message = (
        "exclude_self=True compares query ids with document ids, but the queries are a numpy "
        "matrix, whose ids are its rows 0, 1, ... (Int64), and the corpus' ids are String: "
        "pass the queries as a table with a 'query_id' column (the corpus' ids of those "
        "rows) beside their embeddings"
    )
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.knn(_VECTORS[:2], corpus, k=2, exclude_self=True)
    # the table it asks for leaves each query's own row out
    queries = pl.DataFrame({"query_id": ["1", "2"], "embedding": _VECTORS[:2].tolist()})
    run, said = warned(lambda: irm.knn(queries, corpus, k=2, exclude_self=True))
    assert said == []
    assert "1" not in run.filter(pl.col("query_id") == "1")["doc_id"].to_list()


# --- 2. by= / systems= keys the judgments hold too, spelt apart --------------------------

RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "c", "d"], "relevance": [1, 2, 1]}
)


def _groups(frame: pl.DataFrame, key: str, names: list[Any]) -> pl.DataFrame:
    return pl.concat([frame.with_columns(pl.lit(n).alias(key)) for n in names])


def _run_lacks(key: str, option: str, fate: str, first: str = "'B'") -> str:
    return (
        f"the judgments hold none of the run's 1 group(s) (first: {key}={first}): the "
        f"judgments carry the {option}= key column {key!r} (judgments per group), and each "
        f"query of such a group is unjudged and {fate}. Ids that do not line up are the "
        f"likely cause: give the run and the judgments the same {key!r} values (same "
        f"spelling, same collection), or drop {key!r} from the judgments to judge every "
        "group by the same judgments."
    )


#: What a query of a group the other side lacks scores (as a ranking of no judged
#: document, or an empty one: not 0 in every metric, e.g. rbp_residual 1).
_NOTHING = "0 in ndcg, map, precision, recall and the like"
_EMPTY_FATE = f"scores as an empty ranking does (unretrieved='zero': {_NOTHING})"
_UNJUDGED_FATE = f"scores as a ranking of no judged document does ({_NOTHING}) (unjudged='zero')"


def _judged_lacks(key: str, fate: str, first: str = "'b'") -> str:
    return (
        f"the run holds none of the 1 group(s) of the judgments (first: {key}={first}; "
        f"by= key column {key!r}): each judged query of such a group {fate}. Ids that do not "
        f"line up are the likely cause: give the run and the judgments the same {key!r} "
        "values (same spelling, same collection)."
    )


_LEFT_OUT = "left out (unjudged='drop'): no metric that reads the judgments scores the group"
_SYSTEM_B = (
    "system 'b' retrieves no judged document (0 of 3 judged documents, in 0 of 2 judged "
    "queries; it lists 0 of the 2 judged queries): every judged query scores as a ranking of no "
    "judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval scores "
    "such a run. Check that the run and the judgments name the "
    "same queries and documents (same collection, same id spelling)."
)
# A's own ndcg@2: q1 (a, b) of a=1, c=2: 1/(idcg) ... as evaluate gives it alone
_A = irm.evaluate(RUN, ["ndcg@2"], qrels=QRELS).item(0, "ndcg@2")

# (case, the key, by= or systems=, the run's groups, the judgments' groups, options,
#  the warnings, the result's rows)
GROUPS: list[tuple[str, str, str, list[Any], list[Any], dict[str, Any], list[str], list[Any]]] = [
    (
        "by=: 'B' beside 'b'",
        "seg",
        "by",
        ["A", "B"],
        ["A", "b"],
        {},
        [
            _run_lacks("seg", "by", _LEFT_OUT),
            _judged_lacks("seg", _EMPTY_FATE),
        ],
        [("A", 2, _A), ("b", 2, 0.0)],
    ),
    (
        "by=: out of core",
        "seg",
        "by",
        ["A", "B"],
        ["A", "b"],
        {"buckets": 2},
        [
            _run_lacks("seg", "by", _LEFT_OUT),
            _judged_lacks("seg", _EMPTY_FATE),
        ],
        [("A", 2, _A), ("b", 2, 0.0)],
    ),
    (
        "by=: unjudged='zero', unretrieved='drop'",
        "seg",
        "by",
        ["A", "B"],
        ["A", "b"],
        {"unjudged": "zero", "unretrieved": "drop"},
        [
            _run_lacks("seg", "by", _UNJUDGED_FATE),
            _judged_lacks("seg", "is left out (unretrieved='drop')"),
        ],
        [("A", 2, _A), ("B", 2, 0.0)],
    ),
    (
        "by=: integer groups, one the judgments lack",
        "day",
        "by",
        [1, 2],
        [1],
        {},
        [_run_lacks("day", "by", _LEFT_OUT, "2")],
        [(1, 2, _A)],
    ),
    (
        "systems=: 'B' beside 'b' (b is the coverage warning's)",
        "system",
        "systems",
        ["A", "B"],
        ["A", "b"],
        {},
        [_SYSTEM_B, _run_lacks("system", "systems", _LEFT_OUT)],
        [("A", 2, _A), ("b", 2, 0.0)],
    ),
    ("by=: the same groups: no warning", "seg", "by", ["A", "B"], ["A", "B"], {}, [],
     [("A", 2, _A), ("B", 2, _A)]),
    ("by=: a key of the run alone (one set of judgments): no warning", "seg", "by",
     ["A", "B"], [], {}, [], [("A", 2, _A), ("B", 2, _A)]),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "key", "option", "ran", "judged", "options", "expected", "rows"),
    GROUPS,
    ids=[c[0] for c in GROUPS],
)
def test_groups_of_the_run_and_the_judgments_that_match_nothing_are_named(
    case: str,
    key: str,
    option: str,
    ran: list[Any],
    judged: list[Any],
    options: dict[str, Any],
    expected: list[str],
    rows: list[Any],
    lazy: bool,
) -> None:
    run = _groups(RUN, key, ran)
    qrels = _groups(QRELS, key, judged) if judged else QRELS
    tables = (run.lazy(), qrels.lazy()) if lazy else (run, qrels)
    got, said = warned(
        lambda: irm.evaluate(tables[0], ["ndcg@2"], qrels=tables[1], **{option: key}, **options)
    )
    assert said == expected
    assert got.sort(key).rows() == sorted(rows, key=lambda r: r[0])


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_groups_that_match_nothing_are_named_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, from_engine = engine_io(engine, request)
    run, qrels = _groups(RUN, "seg", ["A", "B"]), _groups(QRELS, "seg", ["A", "b"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = from_engine(evaluate(to_engine(run), ["ndcg@2"], qrels=to_engine(qrels), by="seg"))
    said = [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]
    assert said == [
        _run_lacks("seg", "by", _LEFT_OUT),
        _judged_lacks("seg", _EMPTY_FATE),
    ]
    assert got.sort("seg").rows() == [("A", 2, _A), ("b", 2, 0.0)]


_EXPOSURE_FATE = (
    "is a ranking of no document: the expected-exposure measures score it as one that "
    "exposes no relevant document (ee_relevance 0; not 0 for ee_loss and ee_disparity), "
    "and awrf and awrf_ndcg give it no value"
)
DOC_GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize("metrics", [["ee_loss", "ee_relevance"], ["awrf"]], ids=str)
def test_the_exposure_measures_name_the_groups_that_match_nothing(
    metrics: list[str], lazy: bool
) -> None:
    run, qrels = _groups(RUN, "seg", ["A", "B"]), _groups(QRELS, "seg", ["A", "b"])
    tables = (run.lazy(), qrels.lazy()) if lazy else (run, qrels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(tables[0], metrics, qrels=tables[1], groups=DOC_GROUPS, by="seg")
        got = got.collect() if isinstance(got, pl.LazyFrame) else got
    said = [str(w.message) for w in caught if w.category is irm.CoverageWarning]
    assert said == [
        _run_lacks("seg", "by", _LEFT_OUT),
        _judged_lacks("seg", _EXPOSURE_FATE),
    ]
    # B scores no query; b's judged queries: ee_relevance 0 where the measures score it
    values = {row["seg"]: row for row in got.iter_rows(named=True)}
    assert values["B"]["num_q"] == 0
    if "ee_relevance" in metrics:
        assert values["b"]["ee_relevance"] == 0.0
    else:
        assert "b" not in values


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_exposure_measures_name_the_groups_that_match_nothing_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # the engines gave the coverage warning alone: each part's groups are gathered now
    evaluate, to_engine, from_engine = engine_io(engine, request)
    run, qrels = _groups(RUN, "seg", ["A", "B"]), _groups(QRELS, "seg", ["A", "b"])
    tables = {"qrels": to_engine(qrels), "groups": to_engine(DOC_GROUPS)}
    got, said = warned(
        lambda: from_engine(evaluate(to_engine(run), ["ee_relevance"], **tables, by="seg"))
    )
    assert [s for s in said if "group(s)" in s] == [
        _run_lacks("seg", "by", _LEFT_OUT),
        _judged_lacks("seg", _EXPOSURE_FATE),
    ]
    one = irm.evaluate(run, ["ee_relevance"], qrels=qrels, groups=DOC_GROUPS, by="seg")
    assert got.sort("seg").equals(one.sort("seg"))


def test_the_exposure_measures_beside_the_ranking_metrics_warn_once() -> None:
    """With ndcg@2 beside, the ranking metrics' route warns (one warning of each)."""
    run, qrels = _groups(RUN, "seg", ["A", "B"]), _groups(QRELS, "seg", ["A", "b"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(run, ["ndcg@2", "ee_loss"], qrels=qrels, groups=DOC_GROUPS, by="seg")
    said = [str(w.message) for w in caught if w.category is irm.CoverageWarning]
    assert said == [
        _run_lacks("seg", "by", _LEFT_OUT),
        _judged_lacks("seg", _EMPTY_FATE),
    ]


# --- 3. a by= key of two dtypes: the cast that lines the groups up ---------------------


def _keyed(frame: pl.DataFrame, key: str, dtype: pl.DataType) -> pl.DataFrame:
    """``frame`` with ``key`` = 1 on every row, in ``dtype`` (text: '1')."""
    value = pl.lit("1") if dtype in (pl.String, pl.Categorical) else pl.lit(1)
    return frame.with_columns(value.cast(dtype).alias(key))


def _cast(key: str, to: str) -> str:
    return f"cast one side to match, e.g. pl.col({key!r}).cast(pl.{to}) on both"


HISTORY = RUN.select("query_id", "doc_id")

# (case, metrics, the side table's keyword, the run's key dtype, the table's, the
#  refusal's start, the dtype named)
KEY_DTYPES: list[tuple[str, list[str], str, pl.DataType, pl.DataType, str, str]] = [
    ("judgments: Int32 beside String", ["ndcg@2"], "qrels", pl.Int32(), pl.String(),
     "column 'day' has dtype Int32 in the run but String in the judgments", "String"),
    ("judgments: Categorical beside Int64", ["ndcg@2"], "qrels", pl.Categorical(),
     pl.Int64(), "column 'day' has dtype Categorical in the run but Int64 in the "
     "judgments", "String"),
    ("judgments: Float64 beside Int64", ["ndcg@2"], "qrels", pl.Float64(), pl.Int64(),
     "column 'day' has dtype Float64 in the run but Int64 in the judgments", "Float64"),
    ("exposure judgments: String beside Int64", ["ee_loss"], "qrels", pl.String(),
     pl.Int64(), "column 'day' has dtype String in the run but Int64 in the judgments",
     "String"),
    ("queries=: String beside UInt8", ["ndcg@2"], "queries", pl.String(), pl.UInt8(),
     "column 'day' has dtype String in the run but UInt8 in queries=", "String"),
    ("interactions: UInt64 beside Categorical", ["novelty@2"], "interactions", pl.UInt64(),
     pl.Categorical(), "column 'day' has dtype UInt64 in the recommendations but "
     "Categorical in the interactions", "String"),
    ("reference: Int64 beside String", ["rbo"], "reference", pl.Int64(), pl.String(),
     "column 'day' has dtype Int64 in the run but String in the reference", "String"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "metrics", "keyword", "ran", "theirs", "start", "to"),
    KEY_DTYPES,
    ids=[c[0] for c in KEY_DTYPES],
)
def test_a_key_of_two_dtypes_names_the_cast_that_lines_the_groups_up(
    case: str,
    metrics: list[str],
    keyword: str,
    ran: pl.DataType,
    theirs: pl.DataType,
    start: str,
    to: str,
) -> None:
    side = {
        "qrels": QRELS,
        "queries": pl.DataFrame({"query_id": ["q1", "q2"]}),
        "interactions": HISTORY,
        "reference": RUN,
    }[keyword]
    tables: dict[str, Any] = {keyword: _keyed(side, "day", theirs)}
    if keyword == "queries":
        tables["qrels"] = QRELS
    if metrics == ["ee_loss"]:
        tables["groups"] = DOC_GROUPS
    run = _keyed(RUN, "day", ran)
    message = f"{start}; {_cast('day', to)}"
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, metrics, by="day", **tables)
    # the cast named, on both, lines the groups up: one group, day 1
    dtype = getattr(pl, to)()
    fixed = {k: v.with_columns(pl.col("day").cast(dtype)) if "day" in v.columns else v
             for k, v in tables.items()}  # fmt: skip
    got = irm.evaluate(run.with_columns(pl.col("day").cast(dtype)), metrics, by="day", **fixed)
    assert got.get_column("day").cast(pl.String).to_list() in (["1"], ["1.0"])


# --- 4. off-policy evaluation: the spelling hint of a policy that takes no logged action --

OPE_LOG = pl.DataFrame(
    {"round_id": [1, 2, 3, 4], "action": ["a1", "b2", "a1", "b2"], "reward": [1.0, 0.0, 1.0, 0.0]}
).with_columns(pscore=pl.lit(0.5))
OPE_POLICY = pl.DataFrame(
    {"round_id": [1, 1, 2, 2, 3, 3, 4, 4], "action": ["a1", "b2"] * 4, "prob": [0.8, 0.2] * 4}
)
_TAKES_NONE = (
    "the policy gives a positive probability to 2 action(s) never logged (e.g. action={}): "
    "the logging policy never took them, so the log cannot support this policy and every "
    "estimate of it is biased (the direct method extrapolates the reward model there). It "
    "takes none of the log's 2 actions (column 'action'), so every importance weight is 0 "
    "(ips 0, the self-normalised estimators NaN): if its ids are meant to be the log's, ids "
    "that do not line up are the likely cause: give policy= and the log the same 'action' "
    "values (same spelling, same collection)"
)


def _ope_hint(what: str, pair: str, fix: str) -> str:
    return (
        f". 2 action id(s) of policy= match an id of the log only when {what} ({pair}): ids "
        "are compared exactly; give policy= and the log the same spelling, e.g. "
        f"pl.col('action'){fix} on each."
    )


# (case, the policy's action ids (for a1, b2), the warning, the fix it names)
OPE_SPELLINGS: list[tuple[str, Callable[[pl.Expr], pl.Expr], str, pl.Expr | None]] = [
    (
        "case",
        lambda a: a.str.to_uppercase(),
        _TAKES_NONE.format("A1")
        + _ope_hint("case is ignored", "'A1' against 'a1'", ".str.to_lowercase()"),
        pl.col("action").str.to_lowercase(),
    ),
    (
        "leading zeros",
        lambda a: a.str.replace(r"(\d)", "0$1"),
        _TAKES_NONE.format("a01")
        + _ope_hint(
            "leading zeros are ignored",
            "'a01' against 'a1'",
            ".str.replace('^([^0-9]*)0+([0-9])', '${1}${2}')",
        ),
        pl.col("action").str.replace("^([^0-9]*)0+([0-9])", "${1}${2}"),
    ),
    (
        "two prefixes that differ: no hint",
        lambda a: a.str.replace("a", "x").str.replace("b", "y"),
        _TAKES_NONE.format("x1"),
        None,
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "respell", "expected", "fix"), OPE_SPELLINGS, ids=[c[0] for c in OPE_SPELLINGS]
)
def test_a_policy_of_respelt_actions_names_the_fix(
    case: str,
    respell: Callable[[pl.Expr], pl.Expr],
    expected: str,
    fix: pl.Expr | None,
    lazy: bool,
) -> None:
    policy = OPE_POLICY.with_columns(respell(pl.col("action")))
    tables = (OPE_LOG.lazy(), policy.lazy()) if lazy else (OPE_LOG, policy)
    got, said = warned(lambda: irm.evaluate(tables[0], ["ips"], policy=tables[1]))
    assert said == [expected]
    assert got["ips"].item() == 0.0
    if fix is not None:  # the fix named, on each table, lines the ids up: no warning
        fixed = (OPE_LOG.with_columns(fix), policy.with_columns(fix))
        _, quiet = warned(lambda: irm.evaluate(fixed[0], ["ips"], policy=fixed[1]))
        assert quiet == []


def test_a_policy_of_respelt_actions_names_the_fix_on_dask(request: pytest.FixtureRequest) -> None:
    """Dask hands the warning's distinct actions to the same text: the hint too."""
    evaluate, to_engine, from_engine = engine_io("dask", request)
    policy = OPE_POLICY.with_columns(pl.col("action").str.to_uppercase())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = from_engine(evaluate(to_engine(OPE_LOG), ["ips"], policy=to_engine(policy)))
    said = [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]
    assert said == [OPE_SPELLINGS[0][2]]
    assert got["ips"].item() == 0.0
