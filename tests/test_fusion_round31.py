"""Round 31: trust at every joint of the fusion wing (irm.fuse, optimize_fusion,
fit_fusion), with tiny adversarial runs; values compared with ranx where at stake."""

from __future__ import annotations

import polars as pl
import pytest
from ranx import Run
from ranx import fuse as ranx_fuse

import polars_irmetrics as irm
from tests.helpers import warned

#: Run 'a' gives rank 1 to d1 and d2 in q1, and rank 3 to d1 and d2 in q2.
TIED = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["d1", "d2", "d3", "d1", "d2"],
        "rank": [1, 1, 2, 3, 3],
    }
)
DISTINCT = TIED.with_columns(pl.Series("rank", [1, 2, 3, 1, 2]))
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "relevance": [1, 1]})

TIE_WARNING = (
    "run 'a' gives one rank to several documents in 2 queries (query 'q1': rank 1 to 2 "
    "documents, placed 'd2', 'd1'): fusion reads each run's order, and placed the "
    "documents of one rank by document id, descending compared as text (as tied scores "
    "are, trec_eval's rule), an order the run did not give, on which the fused scores "
    "depend (irm.evaluate refuses such ranks). Give each document of a query its own "
    "rank, e.g. pl.col('rank').rank('ordinal').over('query_id') on rows sorted in the "
    "order you mean, or give the runs a score column."
)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(
    "call",
    [
        lambda runs: irm.fuse(runs, "rrf"),
        lambda runs: irm.fuse(runs, "condorcet"),
        lambda runs: irm.fuse(runs, "bordafuse", norm="borda"),
        lambda runs: irm.optimize_fusion(runs, qrels=QRELS, method="rrf", metric="ndcg"),
        lambda runs: irm.fit_fusion(runs, "probfuse", qrels=QRELS, n_segments=2),
    ],
    ids=["rrf", "condorcet", "borda", "optimize_fusion", "fit_fusion"],
)
def test_a_repeated_rank_is_warned_with_the_order_assumed(call, lazy):
    runs = {"a": TIED.lazy() if lazy else TIED, "b": DISTINCT}
    _, said = warned(lambda: call(runs))
    assert said == [TIE_WARNING]
    _, said = warned(lambda: call({"a": DISTINCT, "b": DISTINCT}))
    assert said == []


def test_the_order_a_repeated_rank_is_warned_of_is_the_order_fused():
    # the fused scores are ranx's of the order the warning names (d2 before d1 in q1)
    fused, said = warned(lambda: irm.fuse({"a": TIED, "b": DISTINCT}, "rrf"))
    assert said == [TIE_WARNING]
    fused = fused.sort("query_id", "doc_id")
    as_placed = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}, "q2": {"d2": 2.0, "d1": 1.0}}
    given = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d1": 2.0, "d2": 1.0}}
    peer = ranx_fuse([Run(as_placed), Run(given)], method="rrf", norm=None).to_dict()
    expected = [peer[q][d] for q, d in fused.select("query_id", "doc_id").iter_rows()]
    assert fused["score"].to_list() == pytest.approx(expected, rel=1e-15, abs=0)


#: Run 'e' spells q1's documents in capitals: they match run 'a''s once case is ignored.
SPELT = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["d1", "d2", "d3", "d4"],
        "score": [2.0, 1.0, 2.0, 1.0],
    }
)
CAPITALS = SPELT.with_columns(
    pl.when(pl.col("query_id") == "q1")
    .then(pl.col("doc_id").str.to_uppercase())
    .otherwise(pl.col("doc_id"))
)
QRELS_SPELT = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d3"], "relevance": [1, 1]})

APART_WARNING = (
    "1 query held by several runs shares no document between them, and 2 document id(s) "
    "of run 'e' match an id of run 'a' only when case is ignored ('D1' against 'd1'): ids "
    "are compared exactly; give both runs the same spelling, e.g. "
    "pl.col('doc_id').str.to_lowercase() on each. Each such document is fused as two, "
    "one scored by each run. If the runs' documents there are meant to differ, the fused "
    "run is as documented: silence this with warnings.filterwarnings('ignore', "
    "category=irm.CoverageWarning)."
)


#: optimize_fusion's judgments spell q1's document as run 'a' does: run 'e' is warned of
#: by the judgments' check too (test_ids_spelt_round31's routes)
JUDGED_APART = (
    "run 'e' retrieves no judged document in 1 judged query where its documents match "
    "judged ones once their spelling is ignored (1 of 2 judged documents, in 1 of 2 judged "
    "queries): it scores as a ranking of no judged document does (0 in ndcg, map, "
    "precision, recall and the like). 1 (query, document) pair(s) of the run in such "
    "queries match a judgment only when case is ignored (query 'q1': run 'D1', judgments "
    "'d1'): ids are compared exactly, as trec_eval compares them; give both the same "
    "spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and the judgments. "
    "optimize_fusion tunes the fusion on these judgments: no grid point can score that "
    "run's documents in such a query."
)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(
    ("call", "also"),
    [
        (lambda runs: irm.fuse(runs, "sum"), []),
        (lambda runs: irm.fuse(runs, "rrf", buckets=2), []),
        (
            lambda runs: irm.optimize_fusion(runs, qrels=QRELS_SPELT, method="rrf", metric="ndcg"),
            [JUDGED_APART],
        ),
    ],
    ids=["sum", "rrf-buckets", "optimize_fusion"],
)
def test_documents_spelt_apart_in_some_queries_are_warned_with_the_fix(call, also, lazy):
    # q2 shares its documents, so no pair of runs is disjoint: only q1's are spelt apart
    runs = {"a": SPELT, "e": CAPITALS.lazy() if lazy else CAPITALS}
    _, said = warned(lambda: call(runs))
    assert said == [APART_WARNING, *also]
    # disjoint lists in a query with no match once spelling is ignored: as documented
    other = CAPITALS.with_columns(pl.col("doc_id").str.replace("D", "x"))
    _, said = warned(lambda: call({"a": SPELT, "e": other}))
    assert said == []


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_ids_of_two_kinds_name_a_run_of_each(lazy):
    text = SPELT.lazy() if lazy else SPELT
    number = SPELT.with_columns(pl.col("query_id").str.slice(1).cast(pl.Int64))
    with pytest.raises(irm.errors.ColumnTypeError) as refused:
        irm.fuse({"a": text, "b": SPELT, "c": number}, "rrf")
    assert str(refused.value) == (
        "column 'query_id' holds strings in some runs and integers in others ('a': String, "
        "'c': Int64); cast it to one type in every run, e.g. pl.col('query_id').cast(pl.String)"
    )


#: Run 'x' has scores that all tie and ranks that order them d1, d2, d3 (irm.evaluate
#: reads the ranks), and run 'z' ranks d3 first but scores it lowest.
BOTH = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"], "rank": [1, 2, 3], "score": 0.0}
)
AGREE = BOTH.with_columns(pl.Series("rank", [3, 2, 1]), pl.Series("score", [1.0, 2.0, 3.0]))
CONTRARY = AGREE.with_columns(pl.Series("rank", [1, 2, 3]))


def _misordered(run: str) -> str:
    return (
        f"the 'rank' column orders some queries otherwise than the 'score' column (run "
        f"{run!r} in 1 query (first: 'q1')): fusion orders a run by its 'score' column, as "
        "ranx does (ties by document id, descending compared as text), and ignored its "
        "ranks, where irm.evaluate reads the ranks (and refuses a run whose ranks "
        "contradict its scores). Drop the 'rank' column to fuse the scores without this "
        "warning, or the 'score' column to fuse the ranks."
    )


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(
    ("runs", "system"),
    [
        ({"x": BOTH, "y": AGREE}, "x"),
        ({"y": AGREE, "z": CONTRARY.drop("rank").with_columns(rank=pl.lit(1))}, None),
        ({"y": AGREE, "z": CONTRARY}, "z"),
        ("long", "z"),
    ],
    ids=["tied-scores", "one-rank", "contrary", "long-frame"],
)
def test_a_rank_column_beside_the_scores_that_orders_otherwise_is_warned(runs, system, lazy):
    if runs == "long":
        long = pl.concat(
            [AGREE.with_columns(run=pl.lit("y")), CONTRARY.with_columns(run=pl.lit("z"))]
        )
        runs = long.lazy() if lazy else long
        call = lambda: irm.fuse(runs, "rrf", system="run")  # noqa: E731
    else:
        runs = {k: v.lazy() if lazy else v for k, v in runs.items()}
        call = lambda: irm.fuse(runs, "rrf")  # noqa: E731
    _, said = warned(call)
    assert said == ([] if system is None else [_misordered(system)])
