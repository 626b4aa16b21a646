"""Silent zeros: a run that retrieves no judged document, or misses most judged queries,
is scored as trec_eval scores it (0), and warned about once per run, with the counts
and a hint where the ids match after a change (case, a prefix, leading zeros)."""

from __future__ import annotations

import re
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, IrmWarning

QRELS = pl.DataFrame(
    {
        "query_id": ["q001", "q002", "q003", "q004"],
        "doc_id": ["d1", "d2", "d3", "d4"],
        "relevance": [1, 1, 1, 1],
    }
)
RUN = pl.DataFrame(
    {
        "query_id": ["q001", "q001", "q002", "q003", "q004"],
        "doc_id": ["d1", "x", "d2", "d3", "d4"],
        "score": [2.0, 1.0, 1.0, 1.0, 1.0],
    }
)
NO_MATCH = (
    "Check that the run and the judgments name the same queries and documents (same "
    "collection, same id spelling)."
)


def _evaluate(
    run: pl.DataFrame, frame_kind: str, metrics: list[str], **kwargs: object
) -> tuple[pl.DataFrame, list[warnings.WarningMessage]]:
    """The result and the warnings given; for a LazyFrame, none before collect()."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if frame_kind == "LazyFrame":
            qrels = kwargs.get("qrels")
            if isinstance(qrels, pl.DataFrame):
                kwargs["qrels"] = qrels.lazy()
            plan = irm.evaluate(run.lazy(), metrics, **kwargs)  # type: ignore[arg-type]
            assert not [w for w in caught if issubclass(w.category, IrmWarning)]
            out = plan.collect()
        else:
            out = irm.evaluate(run, metrics, **kwargs)  # type: ignore[arg-type]
    return out, [w for w in caught if issubclass(w.category, IrmWarning)]


def _messages(caught: list[warnings.WarningMessage]) -> list[str]:
    assert all(w.category is CoverageWarning for w in caught)
    return [str(w.message) for w in caught]


def test_a_clean_run_gives_no_warning(frame_kind: str) -> None:
    out, caught = _evaluate(RUN, frame_kind, ["mrr"], qrels=QRELS)
    assert out["mrr"].item() == 1.0
    assert caught == []


@pytest.mark.parametrize("check_duplicates", [True, False])
def test_doc_ids_that_differ_in_case(frame_kind: str, check_duplicates: bool) -> None:
    run = RUN.with_columns(pl.col("doc_id").str.to_uppercase())
    out, caught = _evaluate(
        run, frame_kind, ["mrr", "P@1"], qrels=QRELS, check_duplicates=check_duplicates
    )
    assert out.rows() == [(4, 0.0, 0.0)]  # the values stay trec_eval's
    # the run's query list is read by its duplicate checks; without them it is unknown
    listed = "; it lists 4 of the 4 judged queries" if check_duplicates else ""
    assert _messages(caught) == [
        "the run retrieves no judged document (0 of 4 judged documents, in 0 of 4 judged "
        f"queries{listed}): every judged query scores as a ranking of no judged document does (0 "
        "in ndcg, map, precision, recall and the like), as trec_eval scores such a run. 4 (query,"
        " document) pair(s) of the run match a judgment only "
        "when case is ignored (run 'D1', judgments 'd1'): ids are compared exactly, as "
        "trec_eval compares them; give both the same spelling, e.g. "
        "pl.col('doc_id').str.to_lowercase() on the run and the judgments."
    ]


FIXES = {
    "001": ("a prefix is ignored", ".str.strip_prefix('q')"),
    "1": (
        "a prefix and leading zeros are ignored",
        ".str.strip_prefix('q').str.strip_chars_start('0')",
    ),
}


@pytest.mark.parametrize("run_ids", ["001", "1", "Q001"])
def test_query_ids_that_match_after_a_prefix_or_zeros(frame_kind: str, run_ids: str) -> None:
    renamed = {"001": lambda q: q[1:], "1": lambda q: q.lstrip("q0"), "Q001": str.upper}
    rename = renamed[run_ids]
    ids = {q: rename(q) for q in QRELS["query_id"]}
    run = RUN.with_columns(pl.col("query_id").replace_strict(ids))
    out, caught = _evaluate(run, frame_kind, ["mrr"], qrels=QRELS)
    assert out["mrr"].item() == 0.0
    hint = (
        # ids that differ in case alone: the case hint (strip_prefix('q') would not help)
        "4 query id(s) of the run match a judged query only once case is ignored (run "
        "'Q001', judgments 'q001'): ids are compared exactly, as trec_eval compares them; "
        "give both the same spelling, e.g. pl.col('query_id').str.to_lowercase() on the "
        "run and the judgments."
        if run_ids == "Q001"
        # the fix that gives both one spelling ('001' and 'q001': the prefix; '1' and
        # 'q001': the prefix, then the zeros), as fusion's hints give it
        else f"4 query id(s) of the run match a judged query only once {FIXES[run_ids][0]} "
        f"(run {rename('q001')!r}, judgments 'q001'): ids are compared exactly, as "
        "trec_eval compares them; give both the same spelling, e.g. "
        f"pl.col('query_id'){FIXES[run_ids][1]} on the run and the judgments."
    )
    assert _messages(caught) == [
        "the run retrieves no judged document (0 of 4 judged documents, in 0 of 4 judged "
        "queries; it lists 0 of the 4 judged queries): every judged query scores as a ranking of "
        "no judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval "
        f"scores such a run. {hint}"
    ]


def test_a_run_that_misses_most_judged_queries(frame_kind: str) -> None:
    run = RUN.filter(pl.col("query_id") == "q001")
    out, caught = _evaluate(run, frame_kind, ["mrr"], qrels=QRELS)
    assert out.rows() == [(4, 0.25)]
    assert _messages(caught) == [
        "the run misses most judged queries (1 of 4 judged documents, in 1 of 4 judged "
        "queries; it lists 1 of the 4 judged queries): the 3 it misses each score as an empty "
        "ranking does (unretrieved='zero', as trec_eval -c: 0 in ndcg, map, precision, recall and"
        f" the like). {NO_MATCH}"
    ]
    # half of them retrieved is not most missed
    half = RUN.filter(pl.col("query_id").is_in(["q001", "q002"]))
    assert _evaluate(half, frame_kind, ["mrr"], qrels=QRELS)[1] == []


def test_once_per_system_and_only_for_the_one_at_fault(frame_kind: str) -> None:
    run = pl.concat(
        [
            RUN.with_columns(pl.lit("good").alias("system")),
            RUN.with_columns(pl.lit("bad").alias("system"), pl.col("doc_id") + "z"),
        ]
    )
    out, caught = _evaluate(run, frame_kind, ["mrr"], qrels=QRELS, systems="system")
    assert out.sort("system").rows() == [("bad", 4, 0.0), ("good", 4, 1.0)]
    assert _messages(caught) == [
        "system 'bad' retrieves no judged document (0 of 4 judged documents, in 0 of 4 "
        "judged queries; it lists 4 of the 4 judged queries): every judged query scores as a "
        "ranking of no judged document does (0 in ndcg, map, precision, recall and the like), as "
        f"trec_eval scores such a run. {NO_MATCH}"
    ]


def test_once_over_every_bucket(frame_kind: str) -> None:
    run = RUN.with_columns(pl.col("doc_id").str.to_uppercase())
    _, caught = _evaluate(run, frame_kind, ["mrr"], qrels=QRELS, buckets=3, per_query=True)
    assert len(caught) == 1
    assert _messages(caught)[0].startswith(
        "the run retrieves no judged document (0 of 4 judged documents, in 0 of 4 judged "
        "queries; it lists 4 of the 4 judged queries)"
    )


def test_an_empty_run_is_scored_and_warned_about(frame_kind: str) -> None:
    # trec_eval refuses it; the API scores it as trec_eval -c would (every judged query
    # an empty ranking) and says so: a part of a pipeline may be empty on purpose
    out, caught = _evaluate(RUN.clear(), frame_kind, ["mrr"], qrels=QRELS)
    assert out.rows() == [(4, 0.0)]
    assert _messages(caught) == [
        "the run retrieves no judged document (0 of 4 judged documents, in 0 of 4 judged "
        "queries; it lists 0 of the 4 judged queries): every judged query scores as a ranking of "
        "no judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval "
        f"scores such a run. {NO_MATCH}"
    ]


@pytest.mark.parametrize("systems", [None, "system"])
def test_empty_judgments_are_warned_about(frame_kind: str, systems: str | None) -> None:
    run = RUN.with_columns(pl.lit("a").alias("system"))
    out, caught = _evaluate(run, frame_kind, ["mrr"], qrels=QRELS.clear(), systems=systems)
    assert out["num_q"].to_list() == ([0] if systems is None else [])
    where = " (with systems=: or the run has no rows)" if systems else ""
    assert _messages(caught) == [
        f"no judged query to evaluate: the judgments are empty{where}, so every mean is "
        "over 0 queries (num_q 0; with unjudged='zero', over the run's queries, each "
        "scoring 0); check the judgments' file or frame (trec_eval refuses "
        "such an evaluation: 'No queries with both results and relevance info')"
    ]


def test_compare_warns_for_the_system_at_fault() -> None:
    runs = {"good": RUN, "bad": RUN.with_columns(pl.col("doc_id").str.to_uppercase())}
    with pytest.warns(CoverageWarning) as caught:
        irm.compare(runs, ["mrr"], qrels=QRELS)
    texts = [str(w.message) for w in caught if w.category is CoverageWarning]
    assert len(texts) == 1
    assert texts[0].startswith("system 'bad' retrieves no judged document (0 of 4")
    assert "match a judgment only when case is ignored (run 'D1', judgments 'd1')" in texts[0]


def test_the_warnings_are_the_librarys_own() -> None:
    assert issubclass(CoverageWarning, IrmWarning)
    assert issubclass(IrmWarning, UserWarning)
    assert irm.CoverageWarning is CoverageWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrmWarning)
        with pytest.raises(CoverageWarning, match=re.escape("the run retrieves no judged")):
            irm.evaluate(RUN.clear(), ["mrr"], qrels=QRELS)


#: Every query listed; three of the four retrieve their judged document under another
#: spelling (upper case), or not at all (a shallow run over sparse judgments).
SPELT_APART = RUN.with_columns(
    pl.when(pl.col("query_id") == "q001")
    .then(pl.col("doc_id"))
    .otherwise(pl.col("doc_id").str.to_uppercase())
)
MISSED = RUN.with_columns(
    pl.when(pl.col("query_id") == "q001").then(pl.col("doc_id")).otherwise(pl.lit("other"))
)


@pytest.mark.parametrize("buckets", [None, 2])
def test_judged_documents_in_few_listed_queries_are_named_where_spelt_apart(
    frame_kind: str, buckets: int | None
) -> None:
    """A run listing every judged query but retrieving judged documents in one of four,
    the others under another spelling: the three zeros were silent (the run lists the
    queries and retrieves a judged document). Without a spelling that matches (MISSED:
    a poor or shallow run), nothing is said."""
    options = {} if buckets is None else {"buckets": buckets}
    out, caught = _evaluate(SPELT_APART, frame_kind, ["mrr"], qrels=QRELS, **options)
    assert out["mrr"].item() == 0.25
    assert _messages(caught) == [
        "the run retrieves a judged document in only 1 of the 4 judged queries it lists "
        "(1 of 4 judged documents, in 1 of 4 judged queries; it lists 4 of the 4 judged "
        "queries): the others score as a ranking of no judged document does (0 in ndcg, map, "
        "precision, recall and the like). 3 (query, document) pair(s) of the run match a "
        "judgment only when case is ignored (run 'D2', judgments 'd2'): ids are compared "
        "exactly, as trec_eval compares them; give both the same spelling, e.g. "
        "pl.col('doc_id').str.to_lowercase() on the run and the judgments."
    ]
    out, caught = _evaluate(MISSED, frame_kind, ["mrr"], qrels=QRELS, **options)
    assert out["mrr"].item() == 0.25
    assert caught == []
