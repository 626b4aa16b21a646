"""A run with a rank and a score column that order a query differently, under
``order='auto'``: refused by every route that ranks the run, naming the first query and
the fix (pass ``order='rank'`` or ``order='score'``); one plan, out of core and on the
engines alike. Where the two agree (tied scores included), or the order is chosen, the
values are those of the run with one order column."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io, irm_in_process

#: q1: c (rank 3) scores 0.7, above b (rank 2, 0.2): one document scores lower than a
#: document ranked below it. q2 agrees (its tie of scores is broken by the ranks).
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "b", "c"],
        "rank": [1, 2, 3, 1, 2, 3],
        "score": [0.9, 0.2, 0.7, 0.5, 0.5, 0.1],
    }
)
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["c", "a"], "relevance": [1, 1]})
HISTORY = pl.DataFrame({"query_id": ["u1", "u2", "u3"], "doc_id": ["a", "b", "c"]})
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c"], "group": ["x", "y", "x"]})
PROPENSITIES = pl.DataFrame({"doc_id": ["a", "b", "c"], "propensity": [0.5, 0.5, 0.5]})


def refusal(query: str = "'q1'", n: int = 1, frame: str = "run") -> str:
    return (
        f"columns 'rank' and 'score' of the {frame} order query {query} differently: {n} "
        "document(s) score lower than a document ranked below them. order='auto' reads "
        f"'rank' where the {frame} has it, and which order is meant the data cannot say: "
        "pass order='rank' to rank by 'rank', or order='score' to rank by 'score' "
        "(trec_eval's order, which ignores ranks)"
    )


#: (id, metrics, the tables by keyword): a route each
ROUTES: list[tuple[str, list[str], dict[str, pl.DataFrame]]] = [
    ("ranking", ["ndcg", "P@2"], {"qrels": QRELS}),
    ("exposure", ["ee_loss"], {"qrels": QRELS}),
    ("exposure beside ranking", ["ee_loss", "map"], {"qrels": QRELS}),
    ("grouped exposure", ["awrf"], {"qrels": QRELS, "groups": GROUPS}),
    ("recommendations", ["novelty@2"], {"interactions": HISTORY}),
    ("data quality", ["unrepeated_reco@2"], {}),
    ("beside accuracy", ["novelty@2", "recall@2"], {"interactions": HISTORY, "qrels": QRELS}),
    ("elliot", ["pop_rsp@2"], {"interactions": HISTORY, "qrels": QRELS}),
    ("propensity", ["ps_ndcg@3"], {"qrels": QRELS, "propensities": PROPENSITIES}),
    # the reference's own ranks and scores agree
    ("reference", ["rbo(p=0.9)@3"], {"reference": RUN.with_columns(score=-pl.col("rank"))}),
]


ROUTE_IDS = [r[0] for r in ROUTES]


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _tables(tables: dict[str, pl.DataFrame], lazy: bool) -> dict[str, Any]:
    return {k: v.lazy() if lazy else v for k, v in tables.items()}


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("metrics", "tables"), [r[1:] for r in ROUTES], ids=[r[0] for r in ROUTES]
)
def test_two_orders_are_refused_on_every_route(
    metrics: list[str], tables: dict[str, pl.DataFrame], lazy: bool
) -> None:
    run = RUN.lazy() if lazy else RUN
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(refusal())}$"):
        _collected(irm.evaluate(run, metrics, **_tables(tables, lazy)))


@pytest.mark.parametrize(
    ("metrics", "tables"), [r[1:] for r in ROUTES], ids=[r[0] for r in ROUTES]
)
@pytest.mark.parametrize("order", ["rank", "score"])
def test_a_chosen_order_reads_that_column_alone(
    metrics: list[str], tables: dict[str, pl.DataFrame], order: str
) -> None:
    """order='rank' (or 'score') gives the values of the run without the other column."""
    chosen = irm.evaluate(RUN, metrics, order=order, **tables)
    alone = irm.evaluate(RUN.drop("score" if order == "rank" else "rank"), metrics, **tables)
    assert chosen.equals(alone)


def test_the_reference_is_checked_too() -> None:
    reference = RUN.filter(pl.col("query_id") == "q1")
    message = refusal(frame="reference (reference=)")
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN.drop("score"), ["rbo(p=0.9)@3"], reference=reference)


#: (id, scores by rank 1, 2, 3 of one query, whether the two orders differ there)
SCORES: list[tuple[str, pl.Series, bool]] = [
    ("descending", pl.Series([3.0, 2.0, 1.0]), False),
    ("tied, the ranks break it", pl.Series([2.0, 2.0, 2.0]), False),
    ("one pair swapped", pl.Series([1.0, 2.0, 0.0]), True),
    ("a null score compared with nothing", pl.Series([None, 2.0, 1.0]), False),
    ("a NaN score compared with nothing", pl.Series([float("nan"), 2.0, 1.0]), False),
    ("below a null, above the next", pl.Series([1.0, None, 2.0]), True),
    # integers as evaluate ranks them: exactly, beyond 2**53 too
    ("integers beyond 2**53", pl.Series([2**62 + 1, 2**62, 0]), False),
    ("integers beyond 2**53, swapped", pl.Series([2**62, 2**62 + 1, 0]), True),
    ("decimals", pl.Series([Decimal("0.3"), Decimal("0.2"), Decimal("0.1")]), False),
    # floats equal to 12 significant digits tie (a sum's order moves the last digits)
    ("floats equal to 12 digits", pl.Series([7.199999999999999, 7.2, 1.0]), False),
    ("floats apart at the 12th digit", pl.Series([7.19999999999, 7.2, 1.0]), True),
    ("booleans", pl.Series([False, True, False]), True),
]


@pytest.mark.parametrize(("scores", "differ"), [s[1:] for s in SCORES], ids=[s[0] for s in SCORES])
def test_what_counts_as_two_orders(scores: pl.Series, differ: bool) -> None:
    run = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3], "score": scores}
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    if differ:
        with pytest.raises(irm.InvalidValueError, match=re.escape(refusal("'q'"))):
            irm.evaluate(run, ["ndcg"], qrels=qrels)
    else:
        got = irm.evaluate(run, ["ndcg"], qrels=qrels)
        assert got.equals(irm.evaluate(run.drop("score"), ["ndcg"], qrels=qrels))


def test_rows_in_any_order_and_the_count() -> None:
    """The ranks decide, not the rows' order; the count is of the documents scoring
    lower than one ranked below them (here rank 1 and rank 2, below rank 3's 9.0)."""
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 4,
            "doc_id": ["d", "c", "b", "a"],
            "rank": [4, 3, 2, 1],
            "score": [0.0, 9.0, 2.0, 5.0],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    message = refusal("'q'", 2)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["ndcg"], qrels=qrels)


def test_tied_ranks_without_duplicate_checks() -> None:
    """check_duplicates=False keeps tied ranks: their rows are not counted against one
    another, whatever their scores; a rank above them still is."""
    tied = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 1, 2],
         "score": [1.0, 3.0, 0.5]}
    )  # fmt: skip
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    got = irm.evaluate(tied, ["P@2"], qrels=qrels, check_duplicates=False)
    assert got.equals(
        irm.evaluate(tied.drop("score"), ["P@2"], qrels=qrels, check_duplicates=False)
    )
    below = tied.with_columns(pl.Series("score", [1.0, 3.0, 2.0]))  # rank 1's a below c
    with pytest.raises(irm.InvalidValueError, match=re.escape(refusal("'q'"))):
        irm.evaluate(below, ["P@2"], qrels=qrels, check_duplicates=False)


def test_each_group_is_a_ranking_of_its_own() -> None:
    """With by= (and systems=), the query is named with its group."""
    run = pl.concat(
        [
            RUN.filter(pl.col("query_id") == "q2").with_columns(system=pl.lit("A")),
            RUN.with_columns(system=pl.lit("B")),
        ]
    )
    message = refusal("'q1' (system='B')")
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["ndcg"], qrels=QRELS, systems="system")


def test_a_fused_run_is_read_by_its_ranks_as_by_its_scores() -> None:
    """irm.fuse ranks by the fused score rounded to 12 significant digits, ties by the
    document id descending: d1's 0.1 + 0.2 (0.30000000000000004) ties d2's 0.3, so d2
    is first though its score is the lower. The check reads float scores alike: the
    fused run is not refused (its ranks read). By its exact scores (order='score'), d1
    is first."""
    runs = {
        "a": pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["d1", "d2"], "score": [0.1, 0.3]}),
        "b": pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["d1", "d2"], "score": [0.2, 0.0]}),
    }
    fused = irm.fuse(runs, "combsum")
    assert fused.rows() == [("q", "d2", 0.3, 1), ("q", "d1", 0.1 + 0.2, 2)]
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["d2"], "relevance": [1]})
    by_ranks = irm.evaluate(fused, ["ndcg", "P@1"], qrels=qrels)
    assert by_ranks.rows() == [(1, 1.0, 1.0)]
    assert by_ranks.equals(irm.evaluate(fused, ["ndcg", "P@1"], qrels=qrels, order="rank"))
    by_scores = irm.evaluate(fused, ["ndcg", "P@1"], qrels=qrels, order="score")
    assert by_scores.rows() == [(1, 0.6309297535714574, 0.0)]  # 1 / log2(3), trec_eval's


def test_a_text_score_column_is_not_an_order() -> None:
    run = RUN.with_columns(pl.col("score").cast(pl.String))
    got = irm.evaluate(run, ["ndcg"], qrels=QRELS)
    assert got.equals(irm.evaluate(RUN.drop("score"), ["ndcg"], qrels=QRELS))


def test_out_of_core_refuses_alike(tmp_path: Any) -> None:
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(refusal())}$"):
        irm.evaluate(RUN, ["ndcg"], qrels=QRELS, buckets=2, spill_dir=str(tmp_path))


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    ("metrics", "tables"),
    [(["ndcg"], {"qrels": QRELS}), (["ee_loss"], {"qrels": QRELS})],
    ids=["ranking", "exposure"],
)
def test_the_engines_refuse_alike(
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    engine: str,
    request: pytest.FixtureRequest,
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    given = {k: to_engine(v) for k, v in tables.items()}
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(refusal())}$"):
        back(evaluate(to_engine(RUN), metrics, partitions=2, **given))


def test_the_command_line_names_the_file_and_its_flags(tmp_path: Path) -> None:
    RUN.filter(pl.col("query_id") == "q1").write_csv(tmp_path / "run.csv")
    (tmp_path / "qrels.txt").write_text("q1 0 c 1\n")
    done = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.txt", "-m", "ndcg",
                          cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    message = refusal().replace("order='auto'", "--order auto")
    message = message.replace("order='rank'", "--order rank")
    message = message.replace("order='score'", "--order score")
    assert done.stderr == f"irm: error: run.csv: {message}\n"
    chosen = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.txt", "-m", "ndcg",
                            "--order", "score", cwd=tmp_path)  # fmt: skip
    assert chosen.returncode == 0
