"""The exposure measures beside the accuracy metrics read the run's join with the
judgments the door makes once for both routes (``SharedFacts.with_judged``): the same
values, to the last bit, as each route alone, whether the ranks run 1..n (positions
from the ranks) or not (the rankings sorted), the ids of one dtype or two (then each
route joins its own), with ``unretrieved='drop'`` (the exposure measures read the
retrieved queries' judgments, another table: their own join)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ground.facts import SharedFacts

EXPOSURE = ["ee_loss", "ee_disparity(browsing='geometric')", "awrf", "awrf_ndcg", "rnd", "rrd"]
ACCURACY = ["ndcg@10", "map"]


def _tables(gaps: bool, query_dtype: pl.DataType) -> tuple[pl.DataFrame, ...]:
    rng = np.random.default_rng(26)
    queries, length = 30, 25
    run = pl.DataFrame(
        {
            "query_id": np.repeat(np.arange(queries), length),
            "doc_id": rng.integers(0, 200, queries * length),
        }
    ).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    step = pl.when(pl.col("query_id") % 4 == 0).then(2).otherwise(1) if gaps else pl.lit(1)
    run = run.with_columns(
        (pl.int_range(1, pl.len() + 1).over("query_id") * step).alias("rank"),
        pl.col("query_id").cast(query_dtype),
    )
    qrels = pl.DataFrame(
        {
            "query_id": rng.integers(0, queries + 3, 500),
            "doc_id": rng.integers(0, 200, 500),
            "relevance": rng.integers(-1, 4, 500),
        }
    ).unique(["query_id", "doc_id"])
    groups = pl.DataFrame({"doc_id": np.arange(200), "group": rng.integers(0, 3, 200)})
    return run, qrels, groups


def _evaluate(run: pl.DataFrame, metrics: list[str], **tables: object) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = irm.evaluate(run.lazy(), metrics, per_query=True, **tables)  # type: ignore[arg-type]
        return out.collect(engine="streaming").sort("query_id")


@pytest.mark.parametrize("unretrieved", ["zero", "drop"])
@pytest.mark.parametrize("query_dtype", [pl.Int64(), pl.Int32()], ids=["one dtype", "two"])
@pytest.mark.parametrize("gaps", [False, True], ids=["ranks 1..n", "ranks with gaps"])
def test_beside_the_accuracy_metrics_as_alone(
    gaps: bool, query_dtype: pl.DataType, unretrieved: str
) -> None:
    run, qrels, groups = _tables(gaps, query_dtype)
    both = _evaluate(
        run, [*ACCURACY, *EXPOSURE], qrels=qrels, groups=groups, unretrieved=unretrieved
    )
    accuracy = _evaluate(run, ACCURACY, qrels=qrels, unretrieved=unretrieved)
    exposure = _evaluate(run, EXPOSURE, qrels=qrels, groups=groups)
    if unretrieved == "drop":  # the exposure measures then score the retrieved alone
        exposure = exposure.join(run.select("query_id").unique(), on="query_id", how="semi")
    expected = accuracy.join(exposure, on="query_id", how="full", coalesce=True).sort("query_id")
    assert both.select(expected.columns).equals(expected)


def test_the_judged_rows_serve_the_door_s_own_judgments_and_order_only() -> None:
    run, qrels, _ = _tables(False, pl.Int64())
    lazy_run, lazy_qrels = run.lazy(), qrels.lazy()
    facts = SharedFacts.of(lazy_run, "query_id", "doc_id", "rank")
    schema = lazy_run.collect_schema()
    assert facts.judged_frame(lazy_qrels, "rank", schema, "doc_id") is None  # none joined
    joined = facts.with_judged(lazy_run, lazy_qrels, "doc_id", "relevance")
    rows = [
        joined.judged_frame(lazy_qrels, "rank", schema, "doc_id"),
        joined.judged_frame(lazy_qrels.filter(pl.lit(True)), "rank", schema, "doc_id"),
        joined.judged_frame(lazy_qrels, "score", schema, "doc_id"),
    ]
    assert [frame is None for frame in rows] == [False, True, True]
    frame = rows[0]
    assert frame is not None
    want = run.join(qrels, on=["query_id", "doc_id"], how="inner")
    assert frame.collect().sort("query_id", "doc_id").equals(want.sort("query_id", "doc_id"))


_TWICE = (
    "the groups table (groups=) lists document {doc!r} twice in one group (column "
    "'group'); one row per (document, group): drop the duplicates, e.g. .unique()"
)


@pytest.mark.parametrize(
    ("rows", "doc"),
    [
        ([(5, 0), (5, 0)], 5),  # a document listed twice in its one group
        ([(7, 1), (7, 2), (7, 1), (3, 0), (3, 0)], 3),  # the first of two (as text)
        ([(12, 0), (12, 0), (3, 1), (3, 1)], 12),  # '12' < '3' as text
        ([(5, 0), (5, 1)], None),  # two groups, each once: no duplicate
        ([(5, 0), (5, None), (5, None)], None),  # a null group is no group
    ],
)
@pytest.mark.parametrize("beside", [[], ACCURACY], ids=["alone", "beside ndcg"])
def test_one_pass_of_groups_checks_its_duplicates(
    rows: list[tuple[int, int | None]], doc: int | None, beside: list[str]
) -> None:
    run, qrels, groups = _tables(False, pl.Int64())
    extra = pl.DataFrame(rows, schema={"doc_id": pl.Int64, "group": pl.Int64}, orient="row")
    grouped = pl.concat([groups.filter(~pl.col("doc_id").is_in(extra["doc_id"])), extra])
    if doc is None:
        _evaluate(run, [*beside, *EXPOSURE], qrels=qrels, groups=grouped)
        return
    with pytest.raises(irm.DuplicateError, match=re.escape(_TWICE.format(doc=str(doc)))):
        _evaluate(run, [*beside, *EXPOSURE], qrels=qrels, groups=grouped)


@pytest.mark.parametrize("kept", [200, 40], ids=["all", "few"])
def test_the_coverage_tally_counts_the_grouped_documents_once(kept: int) -> None:
    """The warning of the run's documents groups= lacks reads the distinct documents of
    the one group-by per document the duplicate check reads (a document in two groups
    counted once)."""
    run, qrels, groups = _tables(False, pl.Int64())
    grouped = pl.concat(
        [groups, groups.with_columns(pl.col("group") + 10)]  # every document twice
    ).filter(pl.col("doc_id") < kept)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(run.lazy(), EXPOSURE, qrels=qrels, groups=grouped).collect()
    held = run.filter(pl.col("doc_id") < kept)["doc_id"].n_unique()
    said = [str(w.message) for w in caught if str(w.message).startswith("groups= holds only")]
    run_said = [text for text in said if "documents of the run" in text]
    if kept == 200:
        assert run_said == []
    else:
        docs = run["doc_id"].n_unique()
        start = f"groups= holds only {held} of the {docs} documents of the run (column 'doc_id')"
        assert len(run_said) == 1
        assert run_said[0].startswith(start)
