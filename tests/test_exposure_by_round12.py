"""The exposure measures with a ``by=`` key of the run alone, round 12.

1. ``ee_loss``, ``ee_disparity`` and ``ee_relevance`` score a judged query a group of
   the run lacks (an empty ranking, ``ee_loss = Σ ε*²``). With a ``by=`` key the
   judgments lack, the judgments do not say which group such a query belongs to; the
   ranking metrics refuse it (``raise_unplaced``), and the exposure measures left it out
   of every group the run did not list it under, in silence: a judged query no row of
   the run lists was in no group's ``num_q``, and each group's mean lacked its (worst)
   value. They now refuse it in the ranking metrics' words, without their
   ``unretrieved='drop'`` (which the exposure measures alone do not read), on one plan
   and in buckets; with ``queries=`` (or the key in the judgments) each query counts in
   its group, as for the ranking metrics. ``awrf``, ``awrf_ndcg`` and rND's family have
   no value for a query a group did not retrieve whatever the key means: not refused.
2. ``queries=`` without a row for a query of the judgments put that query in a segment
   of no key (a ``null`` row of its own in the means), and without a row for a query of
   the run (the key a column of ``queries=`` alone) was refused as the run's null
   ``segment`` column, which the caller never gave (beside ``map`` too, whose own
   refusal names ``queries=``). Both are now refused as the ranking metrics refuse
   them: the query ``queries=`` lacks and how many.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import QuerySetError

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

# q1 under segment 's', q2 under 't', q3 judged and retrieved by no segment
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["a", "b", "c"],
        "score": [2.0, 1.0, 1.0],
        "segment": ["s", "s", "t"],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "c", "d"], "relevance": [1, 1, 1]}
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
# every segment lists q1; q3 (judged) is listed by none
BOTH = pl.DataFrame(
    {
        "query_id": ["q1", "q1"],
        "doc_id": ["a", "a"],
        "score": [1.0, 1.0],
        "segment": ["s", "t"],
    }
)
QUERIES = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "segment": ["s", "t", "t"]})


def _unplaced(queries: int, example: str, *, drop: bool) -> str:
    """The ranking metrics' refusal of a judged query a segment lacks (``drop``: with
    their ``unretrieved='drop'``, which the exposure measures alone do not read)."""
    many = "judged query" if queries == 1 else "judged queries"
    return (
        "by key 'segment' is in the run but not in the judgments: the judgments do not say "
        f"which 'segment' each judged query belongs to, so {queries} {many} that some of "
        f"the 2 groups did not retrieve cannot be placed {example}. If 'segment' is an "
        "attribute of the query (day, market, segment), give each judged query its "
        "'segment': with queries= (a table of query ids and 'segment', e.g. "
        "queries=run.select('query_id', 'segment').unique()), or in a 'segment' column of "
        "the judgments; if it names systems or runs (each scored on every judged query), "
        "pass systems='segment' instead of by="
        + (
            "; or pass unretrieved='drop' to score each group on the queries it retrieved"
            if drop
            else ""
        )
    )


def _lacked(first: str, count: int) -> str:
    """The ranking metrics' refusal of queries ``queries=`` has no row for."""
    return (
        f"query {first!r} has no 'segment' in queries=: give every query of the run and the "
        f"judgments a row there ({count} have none)"
    )


LISTED_Q1 = (
    "(e.g. query 'q1': the run lists it under segment='s', and the judgments cannot tell "
    "whether it belongs to the other groups too)"
)
LISTED_NONE = "(e.g. query 'q3', which no group of the run lists)"

# (id, run, metrics, extra keyword arguments, message)
REFUSED: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], str]] = [
    ("ee_loss", RUN, ["ee_loss"], {}, _unplaced(3, LISTED_Q1, drop=False)),
    ("ee_disparity", RUN, ["ee_disparity"], {}, _unplaced(3, LISTED_Q1, drop=False)),
    (
        "ee_relevance(browsing='rbp')",
        RUN,
        ["ee_relevance(browsing='rbp')"],
        {},
        _unplaced(3, LISTED_Q1, drop=False),
    ),
    (
        "ee_loss beside awrf",
        RUN,
        ["awrf", "ee_loss"],
        {"groups": GROUPS},
        _unplaced(3, LISTED_Q1, drop=False),
    ),
    (
        "ee_loss beside rnd",
        RUN,
        ["ee_loss", "rnd"],
        {"groups": GROUPS},
        _unplaced(3, LISTED_Q1, drop=False),
    ),
    ("in buckets", RUN, ["ee_loss"], {"buckets": 2}, _unplaced(3, LISTED_Q1, drop=False)),
    (
        "a query no segment lists",
        BOTH,
        ["ee_loss"],
        {"qrels": QRELS.filter(pl.col("query_id") != "q2")},
        _unplaced(1, LISTED_NONE, drop=False),
    ),
    (
        "beside map: map's words",
        RUN,
        ["map", "ee_loss"],
        {},
        _unplaced(3, LISTED_Q1, drop=True),
    ),
    ("map alone", RUN, ["map"], {}, _unplaced(3, LISTED_Q1, drop=True)),
    # 2. queries= without a row for a query of the judgments (q3), of the run (q2), both
    *(
        (
            f"queries= lacks {lacked}: {' '.join(metrics)}",
            RUN.drop("segment"),
            metrics,
            {"queries": QUERIES.filter(~pl.col("query_id").is_in(lacked))},
            _lacked(lacked[0], len(lacked)),
        )
        for lacked in (["q3"], ["q2"], ["q2", "q3"])
        for metrics in (["ee_loss"], ["awrf"], ["map", "ee_loss"], ["map"])
    ),
]


def _lazy(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kwargs.items()}


def _evaluate(
    frame_kind: str, run: pl.DataFrame, metrics: list[str], **kwargs: Any
) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        out = irm.evaluate(run.lazy(), metrics, **_lazy(kwargs))
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(run, metrics, **kwargs)
    assert isinstance(result, pl.DataFrame)
    return result


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per_query"])
@pytest.mark.parametrize(
    ("run", "metrics", "extra", "message"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_a_judged_query_a_segment_lacks_is_refused(
    frame_kind: str,
    run: pl.DataFrame,
    metrics: list[str],
    extra: dict[str, Any],
    message: str,
    per_query: bool,
) -> None:
    kwargs: dict[str, Any] = {"qrels": QRELS, "by": "segment", "per_query": per_query, **extra}
    if metrics == ["awrf"]:
        kwargs["groups"] = GROUPS
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        _evaluate(frame_kind, run, metrics, **kwargs)


# (id, run, metrics, extra keyword arguments, the means' rows)
SCORED: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], list[tuple[Any, ...]]]] = [
    # queries= places q3 in 't': counted there (an empty ranking: ee_loss 1), as map
    # counts it (num_q 2)
    (
        "queries= places every judged query",
        RUN,
        ["map", "ee_loss"],
        {"queries": QUERIES},
        [("s", 1, 1, 1.0, 0.0625), ("t", 2, 2, 0.5, 0.5)],
    ),
    (
        "queries=, ee_loss alone",
        RUN,
        ["ee_loss"],
        {"queries": QUERIES},
        [("s", 1, 0.0625), ("t", 2, 0.5)],
    ),
    # the judgments give each query its segment
    (
        "the key in the judgments",
        RUN,
        ["map", "ee_loss"],
        {"qrels": QRELS.join(QUERIES, on="query_id")},
        [("s", 1, 1, 1.0, 0.0625), ("t", 2, 2, 0.5, 0.5)],
    ),
    # beside the ranking metrics, unretrieved='drop' scores each group on the queries
    # it retrieved: the same queries for both
    (
        "unretrieved='drop' beside map",
        RUN,
        ["map", "ee_loss"],
        {"unretrieved": "drop"},
        [("s", 1, 1, 1.0, 0.0625), ("t", 1, 1, 1.0, 0.0)],
    ),
    # awrf has no value for a query a group did not retrieve, whatever the key means
    (
        "awrf alone",
        RUN,
        ["awrf"],
        {"groups": GROUPS},
        [("s", 1, 0.7842384456611644), ("t", 1, 1.0)],
    ),
    # every segment lists every judged query: nothing to place
    (
        "every segment lists every judged query",
        BOTH,
        ["ee_loss"],
        {"qrels": QRELS.filter(pl.col("query_id") == "q1")},
        [("s", 1, 0.0), ("t", 1, 0.0)],
    ),
]


@pytest.mark.parametrize(
    ("run", "metrics", "extra", "rows"),
    [case[1:] for case in SCORED],
    ids=[case[0] for case in SCORED],
)
def test_a_placed_judged_query_counts(
    frame_kind: str,
    run: pl.DataFrame,
    metrics: list[str],
    extra: dict[str, Any],
    rows: list[tuple[Any, ...]],
) -> None:
    kwargs: dict[str, Any] = {"qrels": QRELS, "by": "segment", **extra}
    got = _evaluate(frame_kind, run, metrics, **kwargs)
    assert got.rows() == rows
