"""A list-shaped run (a ``doc_id`` list per query) with a query in two rows.

``irm.evaluate`` refuses it (the two lists' positions both start at 1, so their
documents would share ranks) with a message that says so and how to join the lists.
``irm.compare`` said "column 'rank' of the run: query 'q1' (system='a') has 1 duplicate
rank(s) ... break the ties, or rank by score", about a rank column the user never gave,
and ``irm.fuse`` fused the two rows' documents at the same ranks in silence. Both now
give evaluate's refusal (one check: :func:`~polars_irmetrics.ground.lists.long_run`
with the call's system and ``by`` keys).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError

QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "relevance": [1, 1, 1]}
)
# q1 in two rows of run a: [d1, d2] and [d3], ranks 1, 2 and 1
TWICE = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": [["d1", "d2"], ["d3"], ["d3"]]})
ONCE = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": [["d2", "d1"], ["d3"]]})
LONG = pl.concat(
    [TWICE.with_columns(pl.lit("a").alias("sys")), ONCE.with_columns(pl.lit("b").alias("sys"))]
)


def _refusal(within: str = "", run: str = "the run") -> str:
    return (
        f"query 'q1'{within} is in 2 rows of {run}, whose 'doc_id' holds one list per "
        "query, its ranking in order (rank = position in the list): each row's positions "
        "start at 1, so the rows' documents would share ranks; keep one row per query, e.g. "
        "join the lists: .group_by('query_id', maintain_order=True)"
        ".agg(pl.col('doc_id').explode())"
    )


CASES: list[tuple[str, Callable[[], object], str]] = [
    ("evaluate", lambda: irm.evaluate(TWICE, qrels=QRELS, metrics=["ndcg@10"]), _refusal()),
    (
        "compare, a dict",
        lambda: irm.compare({"a": TWICE, "b": ONCE}, qrels=QRELS, metrics=["ndcg@10"]),
        _refusal(),
    ),
    (
        "compare, lazy",
        lambda: irm.compare(
            {"b": ONCE.lazy(), "a": TWICE.lazy()}, qrels=QRELS, metrics=["ndcg@10"]
        ),
        _refusal(),
    ),
    # fuse names which of its runs (irm fuse: the file)
    ("fuse, a dict", lambda: irm.fuse({"a": TWICE, "b": ONCE}), _refusal(run="the run 'a'")),
    ("fuse, a long frame", lambda: irm.fuse(LONG, system="sys"), _refusal(" (sys='a')")),
]


@pytest.mark.parametrize(("route", "call", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_query_in_two_rows_of_a_list_run_is_refused_alike(
    route: str, call: Callable[[], object], message: str
) -> None:
    def collected() -> object:
        result = call()
        return result.collect() if isinstance(result, pl.LazyFrame) else result

    with pytest.raises(DuplicateError, match=f"^{re.escape(message)}$"):
        collected()


def test_one_row_per_query_in_each_group_is_not_refused() -> None:
    # q1 in two rows, one per system of a long frame: one row per (system, query)
    fused = irm.fuse(
        LONG.filter(pl.col("query_id") != "q1").vstack(
            pl.DataFrame({"query_id": ["q1"], "doc_id": [["d1"]], "sys": ["b"]})
        ),
        system="sys",
    )
    assert fused.height == 2  # q1: d1 (b alone); q2: d3 (both)


# ---------------------------------------------------------------- n_resamples' bound
# compare's bootstrap held n_resamples x comparisons means (np.empty): n_resamples=1e9
# of one comparison, 8 GB and a copy for the percentiles, an out-of-memory kill


def _two_runs() -> dict[str, pl.DataFrame]:
    # b misses d2 of q1: its ndcg differs from a's there
    return {"a": ONCE, "b": pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": [["d1"], ["d3"]]})}


@pytest.mark.parametrize(
    ("value", "gib", "options"),
    [
        (10_000_001, "0.1", {"test": "bootstrap"}),  # 8 * 10_000_001 / 2**30 = 0.0745
        (10**9, "7.5", {"test": "t", "ci": "bootstrap"}),  # 8e9 / 2**30 = 7.45
    ],
)
def test_a_bootstrap_of_too_many_resamples_is_refused_with_its_memory(
    value: int, gib: str, options: dict[str, str]
) -> None:
    message = (
        f"n_resamples={value} is above 10_000_000, the most a bootstrap (test='bootstrap' "
        "or ci='bootstrap') draws: it holds each comparison's resampled means in memory, 8 "
        f"bytes each (about {gib} GiB per metric and pair of systems here). Pass "
        "n_resamples=10_000_000 or fewer (the default 10_000 is plenty), or "
        "test='randomization', which holds none"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare(_two_runs(), qrels=QRELS, metrics=["ndcg@10"], n_resamples=value, **options)


def test_the_randomization_test_takes_many_resamples() -> None:
    # 2 queries: 2**2 = 4 sign vectors <= n_resamples, the exact test, nothing held
    result = irm.compare(
        _two_runs(), qrels=QRELS, metrics=["ndcg@10"], test="randomization", n_resamples=10**9
    )
    assert result.height == 1
