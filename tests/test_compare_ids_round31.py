"""Round 31 (compare's query ids): systems whose queries do not line up are said, never
paired in silence. Under query_set='judged' systems that retrieved mostly different
judged queries are warned of (each missed query scores 0 against another's list); under
'common' a pairing of fewer than half the queries is warned of, and a pairing of fewer
than two refused, with each system's count; ids spelt apart between the runs ('Q1'
beside 'q1') are named with the fix, as the ranking metrics' coverage hints name them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import warned

QUERIES = [f"q{i}" for i in range(6)]
#: Judgments holding both spellings (merged from two sources): a lists q0.., b Q0..
QRELS = pl.DataFrame(
    {
        "query_id": QUERIES + [q.upper() for q in QUERIES],
        "doc_id": ["d"] * 12,
        "relevance": [1] * 12,
    }
)


def _run(ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ids, "doc_id": ["d"] * len(ids), "rank": [1] * len(ids)})


def _predictions(ids: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": [q for q in ids for _ in range(2)],
            "label": [0, 1] * len(ids),
            "prediction": [0.2, 0.8] * len(ids),
        }
    )


SPELT = (
    "6 query id(s) of run 'b' match an id of run 'a' only when case is ignored ('Q0' "
    "against 'q0'): ids are compared exactly; give both runs the same spelling, e.g. "
    "pl.col('query_id').str.to_lowercase() on each."
)
CHECK = "Check that every run names the same queries (same collection, same id spelling)."

WARNED: list[tuple[str, Callable[..., Any], dict[str, Any], str]] = [
    (
        "judged, spelt apart",
        irm.compare,
        {"runs": {"a": _run(QUERIES), "b": _run([q.upper() for q in QUERIES])}, "qrels": QRELS},
        "the systems retrieved mostly different judged queries: 0 of the 12 judged queries "
        "some system retrieved are retrieved by every system (each system's count: 'a' 6, "
        "'b' 6); query_set='judged' scores a query a system did not retrieve as an empty "
        "ranking (0 in ndcg, map, precision, recall and the like), so 12 of the paired "
        f"queries set one system's ranking against another's empty one. {SPELT} Pass "
        "query_set='common' to pair only the queries every system retrieved",
    ),
    (
        "common, two of six",
        irm.compare,
        {
            "runs": {"a": _run(QUERIES[:4]), "b": _run(QUERIES[2:])},
            "qrels": QRELS.head(6),
            "query_set": "common",
            "baseline": "a",
        },
        "the systems were scored on mostly different queries: query_set='common' keeps 2 "
        "of the 6 queries the systems are scored on (each system's count: 'a' 4, 'b' 4), "
        f"and leaves the 4 others out of every test, the means included. {CHECK}",
    ),
    (
        "tukey, common, two of six",
        irm.tukey_hsd,
        {
            "runs": {"a": _run(QUERIES[:4]), "b": _run(QUERIES[2:]), "c": _run(QUERIES)},
            "qrels": QRELS.head(6),
            "query_set": "common",
        },
        "the systems were scored on mostly different queries: query_set='common' keeps 2 "
        "of the 6 queries the systems are scored on (each system's count: 'a' 4, 'b' 4, "
        f"'c' 6), and leaves the 4 others out of every test, the means included. {CHECK}",
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("case", "call", "kwargs", "message"), WARNED, ids=[w[0] for w in WARNED])
def test_mostly_different_queries_are_warned(
    case: str, call: Callable[..., Any], kwargs: dict[str, Any], message: str, lazy: bool
) -> None:
    runs = {name: run.lazy() if lazy else run for name, run in kwargs["runs"].items()}
    options = {**kwargs, "runs": runs}
    _, said = warned(lambda: call(metrics="P@1", **options))
    assert message in said, said


REFUSED = [
    (
        "common, spelt apart",
        {"runs": {"a": _run(QUERIES), "b": _run([q.upper() for q in QUERIES])}},
        {"qrels": QRELS, "query_set": "common"},
        "0 paired queries: a paired test needs at least two queries that every system is "
        "scored on, and query_set='common' keeps 0 of the 12 queries the systems are "
        f"scored on (each system's count: 'a' 6, 'b' 6). {SPELT}",
    ),
    (
        "predictions, spelt apart",
        {"runs": {"a": _predictions(QUERIES), "b": _predictions([q.upper() for q in QUERIES])}},
        {},
        "system 'a' has no value for query 'Q0' (12 of 12 queries are missing from some "
        f"system); {SPELT}",
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("case", "given", "kwargs", "message"), REFUSED, ids=[r[0] for r in REFUSED]
)
def test_queries_spelt_apart_are_refused_with_the_fix(
    case: str, given: dict[str, Any], kwargs: dict[str, Any], message: str, lazy: bool
) -> None:
    runs = {name: run.lazy() if lazy else run for name, run in given["runs"].items()}
    metric = "auc" if case.startswith("predictions") else "P@1"
    with pytest.raises(irm.QuerySetError) as info:
        warned(lambda: irm.compare(runs, metric, **kwargs))
    assert str(info.value) == message


def _per_query() -> tuple[pl.DataFrame, pl.DataFrame]:
    """compare's result of b against a on six queries (a finds the judged document of
    three), and its per-query values."""
    missing = _run(QUERIES).with_columns(doc_id=pl.Series(["d", "d", "d", "n", "n", "n"]))
    runs = {"a": missing, "b": _run(QUERIES)}
    qrels = QRELS.head(6)
    result = irm.compare(runs, "P@1", qrels=qrels, baseline="a")
    return result, irm.compare(runs, "P@1", qrels=qrels, baseline="a", per_query=True)


PER_QUERY_FAULTS = [
    (
        "a query twice",
        lambda pq: pl.concat([pq, pq.tail(1)]),
        irm.DuplicateError,
        "per_query holds metric 'P@1', system 'b', baseline 'a', query_id 'q5' in 2 rows: "
        "each query is one delta of its comparison, and a repeated one would count twice "
        "in the wins, ties, losses and spread; keep one row per query, or pass the "
        "per_query=True result of irm.compare",
    ),
    (
        "a null value",
        lambda pq: pq.with_columns(
            pl.when(pl.col("query_id") == "q4")
            .then(None)
            .otherwise(pl.col("delta"))
            .alias("delta")
        ),
        irm.InvalidValueError,
        "column 'delta' of per_query is null on 1 row(s) (first: metric 'P@1', system 'b', "
        "baseline 'a', query_id 'q4'): a query without a value cannot be counted as a win, "
        "tie or loss, nor in a spread; pass the per_query=True result of irm.compare "
        "(whose every value is defined), or drop those rows",
    ),
]


@pytest.mark.parametrize("entry", ["report", "with_std"])
@pytest.mark.parametrize(
    ("case", "spoil", "error", "message"), PER_QUERY_FAULTS, ids=[f[0] for f in PER_QUERY_FAULTS]
)
def test_per_query_tables_counted_wrong_are_refused(
    case: str, spoil: Callable[[pl.DataFrame], pl.DataFrame], error: type, message: str, entry: str
) -> None:
    from polars_irmetrics.comparison.report import with_std

    result, per_query = warned(_per_query)[0]
    call = irm.report if entry == "report" else with_std
    with pytest.raises(error) as info:
        call(result, per_query=spoil(per_query))
    assert str(info.value) == message
