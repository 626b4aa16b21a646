"""The interactions' passes every route of a call shares (issue 42's speed): Elliot's
metrics, RecTools' catalogue and Kotkov's serendipity, RePlay's and the beyond-accuracy
metrics, and the coverage tallies each read the interactions' distinct (user, item)
pairs, their count per item, the items' rows (popularity, the catalogue) or the users
with a history. Built apart, each route's cached frame was a pass of its own (polars
does not merge the plans inside two caches); the door's
:class:`~polars_irmetrics.ground.facts.SharedIds` hands each route the one frame of each
pass, and the values and warnings are those of the separate calls."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.ground.facts import SharedIds, id_rows

#: One of each family that reads the interactions: Elliot (the distinct pairs, the
#: items' distinct users), RecTools (the catalogue, Kotkov's popularity), RePlay
#: (surprisal: the items' distinct users; novelty: the users with a history), the
#: beyond-accuracy metrics (popularity, the catalogue).
METRICS = [
    "pop_rsp@2",
    "efd@3",
    "mcc@2",
    "serendipity(kind='kotkov')@3",
    "surprisal@2",
    "novelty(kind='replay')@3",
    "average_popularity@2",
    "catalog_coverage@3",
]


#: The metrics of :data:`METRICS` that read the judgments (RecTools' serendipity reads
#: them where given: without, the run is judged).
JUDGED = {"pop_rsp@2", "efd@3", "mcc@2", "serendipity(kind='kotkov')@3"}


def _alone(tables: dict[str, Any], metric: str) -> dict[str, Any]:
    """``tables`` as a call of ``metric`` alone takes them (qrels= where it reads it)."""
    return {k: v for k, v in tables.items() if k != "qrels" or metric in JUDGED}


def _tables(seed: int, *, item_dtype: Any = pl.Int64, keyed: bool = False) -> dict[str, Any]:
    """8 users ranking up to 6 of 15 items, test items for most users, and a history
    of 70 interactions over 20 items (every item of the run, some never recommended);
    ``keyed``: every table carries a ``segment`` key (each user in one segment)."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(8):
        items = rng.choice(15, size=int(rng.integers(1, 7)), replace=False)
        rows += [(user, int(item), rank) for rank, item in enumerate(items, 1)]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank"], orient="row")
    qrels = (
        run.sample(fraction=0.4, seed=seed)
        .select("query_id", "doc_id", relevance=pl.lit(1, pl.Int64))
        .vstack(pl.DataFrame({"query_id": [0, 3], "doc_id": [16, 17], "relevance": [1, 1]}))
    )
    # every item the run lists has a popularity in each segment (an unseen one is
    # refused by default): users 8 and 9, in the two segments, interacted with each
    history = pl.DataFrame(
        {
            "query_id": np.concatenate([rng.integers(0, 10, size=40), np.tile([8, 9], 15)]),
            "doc_id": np.concatenate([rng.integers(0, 20, size=40), np.repeat(np.arange(15), 2)]),
        }
    )
    tables = {"run": run, "qrels": qrels, "interactions": history}
    if keyed:
        segment = (pl.col("query_id") % 2).cast(pl.String).alias("segment")
        tables = {name: table.with_columns(segment) for name, table in tables.items()}
    return {
        name: table.with_columns(pl.col("doc_id").cast(item_dtype))
        for name, table in tables.items()
    }


def _interaction_scans(plan: pl.LazyFrame) -> int:
    """The scans of the interactions (the only two-column table of ids) in the
    optimized plan: one per pass (a cached pass is printed once, its readers naming
    its id)."""
    scan = 'DF ["query_id", "doc_id"]; PROJECT'
    return sum(scan in line for line in plan.explain().splitlines())


def _evaluate(tables: dict[str, Any], metrics: list[str], **options: Any) -> pl.DataFrame:
    sides = {k: v for k, v in tables.items() if k != "run"}
    return irm.evaluate(tables["run"], metrics, **sides, **options)


def test_one_pass_of_each_kind_for_every_route() -> None:
    t = _tables(0)
    plan = irm.evaluate(
        t["run"].lazy(),
        METRICS,
        qrels=t["qrels"].lazy(),
        interactions=t["interactions"].lazy(),
    )
    # the rows with a null id (the tally), the distinct pairs, the items' rows and the
    # users with a history: four passes where the routes built apart made eleven
    assert _interaction_scans(plan) == 4


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    item_dtype=st.sampled_from([pl.Int64, pl.Int32, pl.String]),
    keyed=st.booleans(),
)
def test_the_values_and_warnings_of_the_separate_calls(
    seed: int, item_dtype: Any, keyed: bool
) -> None:
    t = _tables(seed, item_dtype=item_dtype, keyed=keyed)
    options: dict[str, Any] = {"by": "segment"} if keyed else {}
    with warnings.catch_warnings(record=True) as together:
        warnings.simplefilter("always")
        values = _evaluate(t, METRICS, **options)
    key = ["segment"] if keyed else []
    apart = []
    said: set[str] = set()
    for metric in METRICS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            apart.append(_evaluate(_alone(t, metric), [metric], **options).select(*key, metric))
        said |= {str(w.message) for w in caught}
    expected = apart[0]
    for frame in apart[1:]:
        expected = expected.join(frame, on=key, how="left") if key else expected.hstack(frame)
    assert_frame_equal(values.select(*key, *METRICS), expected)
    assert {str(w.message) for w in together} == said


@pytest.mark.parametrize("dtype", [pl.Int32, pl.String])
def test_a_route_that_casts_the_ids_otherwise_reads_its_own_pass(dtype: Any) -> None:
    # the run's items Int64 and the test items in another dtype of the same kind (or
    # both text): the routes cast the interactions' ids to the dtype that holds theirs,
    # and a pass shared by two casts would give one route ids of another dtype
    t = _tables(1)
    if dtype is pl.String:
        t = {k: v.with_columns(pl.col("doc_id").cast(pl.String)) for k, v in t.items()}
    t["qrels"] = t["qrels"].with_columns(pl.col("doc_id").cast(dtype))
    assert_frame_equal(
        _evaluate(t, METRICS).select(METRICS),
        pl.concat([_evaluate(_alone(t, m), [m]).select(m) for m in METRICS], how="horizontal"),
    )


def test_a_shared_pass_is_the_door_tables_own() -> None:
    # the same pass of two side tables (another object, the same content) is two
    # passes: frames are shared by the very table the door was given
    ids = SharedIds.of(pl.LazyFrame({"q": [1], "doc": [5]}), "q", "doc")
    history = pl.LazyFrame({"user": [1, 2, 2], "item": [5, 5, 6]})
    other = pl.LazyFrame({"user": [1, 2, 2], "item": [5, 5, 6]})
    first = id_rows(ids, history, history, [], "item")
    assert id_rows(ids, history, history, [], "item") is first
    assert id_rows(ids, other, other, [], "item") is not first
    # another cast of the ids: another pass
    cast = history.with_columns(pl.col("item").cast(pl.String))
    assert id_rows(ids, history, cast, [], "item") is not first
    assert id_rows(None, history, history, [], "item") is not first
    assert sorted(first.collect().rows()) == [(5, 2), (6, 1)]


def test_one_group_by_of_the_item_features_for_their_checks_tally_and_drop() -> None:
    # the features' items counted once: the check that each is listed once, the tally of
    # the run's items they hold and unseen_items='drop' read the one group-by; the
    # categories' join and the null ids' count are the other two scans
    t = _tables(2)
    features = pl.LazyFrame({"doc_id": list(range(12)), "genre": [d % 3 for d in range(12)]})
    plan = irm.evaluate(
        t["run"].lazy(),
        ["categorical_diversity(category='genre')@3", "catalog_coverage@3"],
        interactions=t["interactions"].lazy(),
        item_features=features,
        unseen_items="drop",
    )
    text = plan.explain().splitlines()
    assert sum('DF ["doc_id", "genre"]; PROJECT' in line for line in text) == 3
    assert not any("is_duplicated" in line for line in text)
    # an item listed twice: refused as before, the smallest such item named
    doubled = pl.concat([features, features.filter(pl.col("doc_id").is_in([7, 4]))])
    message = (
        "item 4 has more than one row in item_features (2 extra rows): "
        "categorical_diversity reads one category per item; keep one row per item"
    )
    with pytest.raises(irm.DuplicateError, match=f"^{re.escape(message)}$"):
        irm.evaluate(
            t["run"],
            ["categorical_diversity(category='genre')@3"],
            item_features=doubled,
        )
