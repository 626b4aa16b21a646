"""irm.evaluate refuses what a route never reads, and null ids, whatever the metrics.

Round 14 of the door's probes: the click metrics ignored six tables they never read
(qrels=, queries=, interactions=, item_features=, prefs=, qrels_jg=), where every other
route refuses an unread table.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

_LOG = pl.DataFrame(
    {"query_id": ["s1", "s1", "s2"], "rank": [1, 2, 1], "clicked": [True, False, False]}
)
_QRELS = pl.DataFrame({"query_id": ["s1"], "doc_id": ["x"], "relevance": [1]})
_TABLES: dict[str, pl.DataFrame] = {
    "qrels": _QRELS,
    "queries": pl.DataFrame({"query_id": ["s1", "s2"], "day": ["mon", "tue"]}),
    "interactions": pl.DataFrame({"query_id": ["u9"], "doc_id": ["x"]}),
    "item_features": pl.DataFrame({"doc_id": ["x"], "features": [[1.0]]}),
    "prefs": pl.DataFrame(
        {"query_id": ["s1"], "jg": ["u"], "jsg": ["s"], "doc_id": ["a"], "rel_level": [1.0]}
    ),
    "qrels_jg": _QRELS.with_columns(jg=pl.lit("u")),
}


def _collect(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _lazy(tables: dict[str, Any], lazy: bool) -> dict[str, Any]:
    return {k: v.lazy() if lazy and isinstance(v, pl.DataFrame) else v for k, v in tables.items()}


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("name", list(_TABLES))
def test_the_click_metrics_refuse_a_table_they_do_not_read(name: str, lazy: bool) -> None:
    message = (
        f"{name}= is not read by click metrics (ctr, click_mrr, abandonment...): they read "
        "the impression log alone, its sessions the queries and its own columns the by= "
        f"segments; drop {name}="
    )
    log = _LOG.lazy() if lazy else _LOG
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collect(irm.evaluate(log, ["ctr", "click_mrr"], **_lazy({name: _TABLES[name]}, lazy)))


def test_the_click_metrics_alone_are_still_computed() -> None:
    out = irm.evaluate(_LOG, ["ctr", "click_mrr"])
    assert out.rows() == [(2, 1 / 3, 0.5)]


_RUN = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]})
_QUERIES = pl.DataFrame({"query_id": ["q1", "q2"], "day": ["mon", "tue"]})
_HISTORY = pl.DataFrame({"query_id": ["q1", "q2", "u9"], "doc_id": ["a", "b", "c"]})
_FEATURES = pl.DataFrame({"doc_id": ["a", "b"], "features": [[1.0, 0.0], [0.0, 1.0]]})
_BEYOND = (
    "queries= is not read by the beyond-accuracy metrics (novelty@k, catalog_coverage@k, "
    "intra_list_diversity@k...): they read the recommendation table, interactions= and "
    "item_features=, and the by= keys from its own columns; drop queries="
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("by", [None, "day"])
@pytest.mark.parametrize(
    ("metric", "tables"),
    [
        ("novelty@10", {"interactions": _HISTORY}),
        ("catalog_coverage@10", {"interactions": _HISTORY}),
        ("intra_list_diversity@10", {"item_features": _FEATURES}),
    ],
)
def test_the_beyond_accuracy_metrics_refuse_queries(
    metric: str, tables: dict[str, pl.DataFrame], by: str | None, lazy: bool
) -> None:
    run = _RUN.lazy() if lazy else _RUN
    given = _lazy({**tables, "queries": _QUERIES}, lazy)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_BEYOND)}$"):
        _collect(irm.evaluate(run, [metric], by=by, **given))
    assert _collect(irm.evaluate(run, [metric], **_lazy(tables, lazy))).height == 1


_NULL_QUERY = (
    "column 'query_id' of the run has null values; every row needs a query_id: drop them, "
    "e.g. .drop_nulls('query_id')"
)
_JUDGED = pl.DataFrame(
    {"query_id": ["q1", "q1"], "jg": ["u", "v"], "doc_id": ["a", "b"], "relevance": [1, 1]}
)


def _ids_as_integers(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col("query_id").str.slice(1).cast(pl.Int64))


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("integers", [False, True], ids=["text ids", "integer ids"])
@pytest.mark.parametrize("door", ["evaluate", "evaluate_jg"])
def test_a_null_query_id_is_refused_beside_the_judgment_groups(
    door: str, integers: bool, lazy: bool
) -> None:
    run = pl.DataFrame(
        {"query_id": ["q1", "q1", None], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]}
    )
    judged = _JUDGED
    if integers:
        run, judged = _ids_as_integers(run), _ids_as_integers(judged)
    given = (run.lazy(), judged.lazy()) if lazy else (run, judged)
    calls = {
        "evaluate": lambda: irm.evaluate(given[0], ["map_avgjg"], qrels_jg=given[1]),
        "evaluate_jg": lambda: irm.evaluate_jg(given[0], ["map"], qrels_jg=given[1]),
    }
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_NULL_QUERY)}$"):
        _collect(calls[door]())
    # without the row, the value stands (two groups: AP 1 and 1/2)
    kept = given[0].drop_nulls("query_id")
    assert _collect(irm.evaluate_jg(kept, ["map"], qrels_jg=given[1])).rows() == [
        (1 if integers else "q1", 0.75)
    ]


_GOOD_RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]}
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("column", "integers", "message"),
    [
        (
            "jg",
            False,
            "column 'jg' of the judgments (qrels_jg=) has 2 null value(s) in query 'q1'; every "
            "judgment needs a judgment group: drop them, e.g. .drop_nulls('jg')",
        ),
        (
            "user",
            True,
            "column 'user' of the judgments (qrels_jg=) has 2 null value(s) in query 1; every "
            "judgment needs a judgment group: drop them, e.g. .drop_nulls('user')",
        ),
    ],
)
@pytest.mark.parametrize("door", ["evaluate", "evaluate_jg"])
def test_a_null_judgment_group_is_named(
    door: str, column: str, integers: bool, message: str, lazy: bool
) -> None:
    # before: "column 'query_id' of the run has null values", of a run with none
    judged = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2", "q3"],
            column: ["u", None, None, None, "v"],
            "doc_id": ["a", "b", "c", "a", "a"],
            "relevance": [1, 1, 0, 1, 1],
        }
    )
    run = _GOOD_RUN
    if integers:
        run, judged = _ids_as_integers(run), _ids_as_integers(judged)
    given = (run.lazy(), judged.lazy()) if lazy else (run, judged)
    calls = {
        "evaluate": lambda: irm.evaluate(given[0], ["map_avgjg"], qrels_jg=given[1], jg=column),
        "evaluate_jg": lambda: irm.evaluate_jg(given[0], ["map"], qrels_jg=given[1], jg=column),
    }
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collect(calls[door]())


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("side", ["run", "reference"])
@pytest.mark.parametrize("metric", ["rbo", "intersection@10"])
def test_the_rank_similarity_metrics_word_a_null_query_id_as_the_others(
    metric: str, side: str, lazy: bool
) -> None:
    message = (
        f"column 'query_id' of the {side} has null values; every row needs a query_id: drop "
        "them, e.g. .drop_nulls('query_id')"
    )
    bad = _GOOD_RUN.with_columns(query_id=pl.Series(["q1", "q1", None]))
    run, reference = (bad, _GOOD_RUN) if side == "run" else (_GOOD_RUN, bad)
    given = _lazy({"run": run, "reference": reference}, lazy)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collect(irm.evaluate(given["run"], [metric], reference=given["reference"]))


_PREFS = pl.DataFrame(
    {"query_id": ["q1"], "jg": ["u"], "jsg": ["s"], "doc_id": ["a"], "rel_level": [1.0]}
)
_UNREAD = {
    "qrels": pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]}),
    "queries": _QUERIES,
    "interactions": _HISTORY,
    "item_features": _FEATURES,
}


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("name", list(_UNREAD))
@pytest.mark.parametrize(
    ("metric", "judged"), [("map_avgjg", {"qrels_jg": _JUDGED}), ("prefs_simp", {"prefs": _PREFS})]
)
def test_the_preference_and_group_measures_refuse_a_table_they_do_not_read(
    metric: str, judged: dict[str, pl.DataFrame], name: str, lazy: bool
) -> None:
    # found beside the click metrics' fix: these ignored the four tables too
    message = (
        f"{name}= is not read by the preference and judgment-group measures (prefs_*, "
        f"*_avgjg): they read the run and prefs= or qrels_jg=; drop {name}="
    )
    run = _GOOD_RUN.lazy() if lazy else _GOOD_RUN
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collect(irm.evaluate(run, [metric], **_lazy({**judged, name: _UNREAD[name]}, lazy)))
    assert _collect(irm.evaluate(run, [metric], **_lazy(judged, lazy))).height == 1
