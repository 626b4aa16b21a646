"""The metrics of every row of a recommendation table that read only the items' counts
(``catalog_coverage@k``, ``distributional_coverage@k``, ``gini_index@k``,
``novelty@k``) on Spark and Dask: each part (a share of the users) gives its items'
counts within each cutoff, one task adds them up and computes the metrics from the
totals, reading the history whole: one machine's bits."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from tests.test_engines_recsys42 import PARTS, _engine
from tests.test_engines_recsys_history import (
    TABLES,
    _warned,
    covering,
    history_for,
    one_and_engine,
)

COUNTED = [
    "catalog_coverage@5",
    "catalog_coverage",
    "distributional_coverage@3",
    "gini_index@5",
    "gini_index@1",
    "novelty@10",
    "novelty",
]
_NUMBER = pl.col("doc_id").str.slice(1).cast(pl.Int64)

# the run's scores contradict its ranks (so that by-score differs): each case chooses
CASES = [
    ("means", COUNTED, {"order": "rank"}),
    ("by-score", COUNTED, {"by": "segment", "order": "score"}),
    ("unseen-dropped", COUNTED, {"unseen_items": "drop", "order": "rank"}),
    (
        "unseen-recommenders",
        ["novelty@5", "catalog_coverage@5"],
        {"unseen_items": "recommenders", "order": "rank"},
    ),
    ("no-history", ["distributional_coverage@4", "distributional_coverage"], {"order": "rank"}),
]
# a covering design: each engine evaluates every metric without by= and by segment
# (ordered by score), with the history and without; the unseen items dropped on Dask,
# kept as the recommenders keep them on Spark
CASES_COVER = {
    "spark": ("means", "by-score", "unseen-recommenders", "no-history"),
    "dask": ("by-score", "unseen-dropped", "no-history"),
}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize(("engine", "case", "metrics", "options"), covering(CASES, CASES_COVER))
def test_item_count_metrics_equal_one_machine(
    engine: str,
    case: str,
    metrics: list[str],
    options: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    run = TABLES["run"].with_columns(score=1.0 / pl.col("rank") + (_NUMBER % 3) / 2)
    tables = {} if case == "no-history" else {"interactions": history_for(options)}
    one, got = one_and_engine(_engine(engine, request), run, metrics, tables, options)
    assert got.equals(one), case


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_warning_and_the_errors_are_one_machines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = _engine(engine, request)
    name = "Spark" if engine == "spark" else "Dask"
    run = TABLES["run"]
    # the history lacks i10 to i59: warned once, counted over the whole table
    history = TABLES["interactions"].drop("segment").filter(_NUMBER < 10)
    metrics, options = ["novelty@5"], {"unseen_items": "recommenders"}
    one = _warned(lambda: irm.evaluate(run, metrics, interactions=history, **options))
    assert len(one) == 1, one
    assert one[0].startswith("interactions= holds only "), one
    got = _warned(
        lambda: back(
            evaluate(frame(run), metrics, interactions=frame(history), partitions=PARTS, **options)
        )
    )
    assert got == one
    # an item the history lacks, under the default unseen_items='error': the first part
    # that finds one raises one machine's error (its count is that part's)
    pattern = (
        r"item 'i\d+' \(recommended to user 'u\d\d'\) never occurs in the interactions, so it "
        r"has no popularity \(\d+ recommendations name such items\)"
    )
    with pytest.raises(InvalidValueError, match=pattern):
        irm.evaluate(run, metrics, interactions=history)
    with pytest.raises(InvalidValueError, match=pattern):
        back(evaluate(frame(run), metrics, interactions=frame(history), partitions=PARTS))
    whole = frame(TABLES["interactions"].drop("segment"))
    mixed = (
        f"metrics 'gini_index@5' and 'surprisal@5' merge from different parts on {name} "
        "('gini_index@5' from the items' counts of every part, 'surprisal@5' from each "
        "user or query): evaluate them in two calls"
    )
    with pytest.raises(InvalidValueError, match=re.escape(mixed)):
        evaluate(frame(run), ["gini_index@5", "surprisal@5"], interactions=whole)
    per_query = (
        "metric 'gini_index@5' describes a whole recommendation table, not one query: "
        "evaluate it with per_query=False"
    )
    with pytest.raises(Exception, match=re.escape(per_query)):
        evaluate(frame(run), ["gini_index@5"], interactions=whole, per_query=True)
    partitioned = (
        "partitioned_by='segment' is not read by metric 'gini_index@5': only the ranking "
        "metrics of a run and judgments (ndcg, map, recall...) read it"
    )
    with pytest.raises(InvalidValueError, match=re.escape(partitioned)):
        evaluate(frame(run), ["gini_index@5"], interactions=whole, partitioned_by="segment")


REPLAY = ["novelty(kind='replay')@5", "novelty(kind='replay')"]
REPLAY_CASES = [
    ("means", {}),
    ("by-per-user", {"by": "segment", "per_query": True}),
    ("per-user-unseen-dropped", {"per_query": True, "unseen_items": "drop"}),
]
# each engine: the means and the per-user values (by segment on Spark, the unseen items
# dropped on Dask)
REPLAY_COVER = {"spark": ("means", "by-per-user"), "dask": ("means", "per-user-unseen-dropped")}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize(("engine", "case", "options"), covering(REPLAY_CASES, REPLAY_COVER))
def test_replay_novelty_counts_the_historys_users_once(
    engine: str, case: str, options: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    # a mean over the history's users: 15 of them have no recommendations (each counts
    # 1, added by the merge, not by every part), u00 to u04 no history (left out)
    history = history_for(options).filter(pl.col("query_id") >= "u05")
    tables = {"interactions": history}
    one, got = one_and_engine(_engine(engine, request), TABLES["run"], REPLAY, tables, options)
    assert got.equals(one), case
