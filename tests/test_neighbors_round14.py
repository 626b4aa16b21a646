"""Neighbour recall's document ids (round 14).

The recall reads distances only (ann-benchmarks' definition, kept): each of the run's
first k scores against the k-th true distance. It never read the document ids but for
the duplicate check, so

* a run whose ``doc_id`` is text where ``neighbors=``'s is integers was accepted in
  silence, while the same mismatch on ``query_id`` raised a ``ColumnTypeError``
  naming both tables: refused now, with that message's shape;
* a run whose document ids ``neighbors=`` holds none of (ids of another id space: row
  positions against external ids) scored 1.0 in silence: its values are unchanged, and
  a ``CoverageWarning`` from the plan names it, saying the recall reads distances only.

The engines (Spark, Dask) do not take ``neighbors=``: neighbour recall is one machine's,
refused there by name.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io

METRIC = "neighbor_recall(epsilon=0)@2"
EXACT = pl.DataFrame({"query_id": [1, 1], "doc_id": [10, 11], "score": [-0.1, -0.2]})
APPROX = pl.DataFrame({"query_id": [1, 1], "doc_id": [998, 999], "score": [-0.1, -0.2]})


def _evaluate(run: pl.DataFrame, exact: pl.DataFrame, lazy: bool, **kw: Any) -> pl.DataFrame:
    if lazy:
        out = irm.evaluate(run.lazy(), [METRIC], neighbors=exact.lazy(), **kw)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    out = irm.evaluate(run, [METRIC], neighbors=exact, **kw)
    assert isinstance(out, pl.DataFrame)
    return out


def _type_message(column: str, run: str, truth: str, what: str) -> str:
    return (
        f"column {column!r} is {run} in the run and {truth} in the neighbors; the approximate "
        f"run's {what} are matched with the exact run's by their ids, which must be of one "
        f"kind: cast one of them, e.g. pl.col({column!r}).cast(pl.String) (the ids of a "
        "TREC file are read as text)"
    )


#: (id, run, neighbors=, error class, message)
REFUSED: list[tuple[str, pl.DataFrame, pl.DataFrame, type[Exception], str]] = [
    ("doc-string-run", APPROX.with_columns(doc_id=pl.Series(["10", "11"])), EXACT,
     irm.ColumnTypeError, _type_message("doc_id", "String", "Int64", "documents")),
    ("doc-string-neighbors", EXACT.with_columns(pl.col("doc_id").cast(pl.Int32)),
     EXACT.with_columns(pl.col("doc_id").cast(pl.String)),
     irm.ColumnTypeError, _type_message("doc_id", "Int32", "String", "documents")),
    ("doc-categorical-vs-integers",
     APPROX.with_columns(doc_id=pl.Series(["10", "11"], dtype=pl.Categorical)), EXACT,
     irm.ColumnTypeError, _type_message("doc_id", "Categorical", "Int64", "documents")),
    ("doc-float-run", APPROX.with_columns(pl.col("doc_id").cast(pl.Float64)), EXACT,
     irm.ColumnTypeError,
     "column 'doc_id' in the run has dtype Float64; ids must be strings or integers: "
     "cast it, e.g. pl.col('doc_id').cast(pl.Int64)"),
    # both mismatched: the queries' refusal first, as before
    ("query-and-doc", APPROX.with_columns(query_id=pl.Series(["1", "1"]),
                                          doc_id=pl.Series(["10", "11"])), EXACT,
     irm.ColumnTypeError, _type_message("query_id", "String", "Int64", "queries")),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("name", "run", "exact", "error", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_document_ids_of_two_kinds_are_refused(
    name: str,
    run: pl.DataFrame,
    exact: pl.DataFrame,
    error: type[Exception],
    message: str,
    lazy: bool,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _evaluate(run, exact, lazy)


def _none_held(documents: int) -> str:
    return (
        f"neighbors= holds none of the {documents} documents of the run (column 'doc_id'): "
        "neighbour recall reads distances only (the run's scores against the k-th true "
        "distance), so its values, computed all the same, assume the run's scores are true "
        "distances to the same corpus. Ids that do not line up are the likely cause: give "
        "neighbors= and the run the same 'doc_id' values (same spelling, same collection)."
    )


TWO_SYSTEMS = pl.concat(
    [APPROX.with_columns(system=pl.lit("a")), APPROX.with_columns(system=pl.lit("b"))]
)
#: (id, run, neighbors=, options, rows of the result, warnings)
WARNED: list[tuple[str, pl.DataFrame, pl.DataFrame, dict[str, Any], list[tuple[Any, ...]],
                   list[str]]] = [
    # the prober's case: row positions against external ids, 1.0 as before, now named
    ("integers-of-another-space", APPROX, EXACT, {}, [(1, 1.0)], [_none_held(2)]),
    ("strings-of-another-space",
     APPROX.with_columns(pl.col("doc_id").cast(pl.String)),
     EXACT.with_columns(pl.col("doc_id").map_elements(lambda d: f"doc{d}",
                                                      return_dtype=pl.String)),
     {}, [(1, 1.0)], [_none_held(2)]),
    ("per-query", APPROX, EXACT, {"per_query": True}, [(1, 1.0)], [_none_held(2)]),
    ("by-systems", TWO_SYSTEMS, EXACT, {"by": "system"}, [("a", 1, 1.0), ("b", 1, 1.0)],
     [_none_held(2)]),
    # integers of two widths line up: no warning, the same value
    ("widths-matched", EXACT.with_columns(pl.col("doc_id").cast(pl.Int32)), EXACT, {},
     [(1, 1.0)], []),
    # one document in common: an index that finds few true neighbours is no id mismatch
    ("one-shared", APPROX.with_columns(doc_id=pl.Series([10, 999])), EXACT, {},
     [(1, 1.0)], []),
    ("categorical-and-string",
     EXACT.with_columns(pl.col("doc_id").cast(pl.String).cast(pl.Categorical)),
     EXACT.with_columns(pl.col("doc_id").cast(pl.String)), {}, [(1, 1.0)], []),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("name", "run", "exact", "options", "rows", "said"), WARNED, ids=[c[0] for c in WARNED]
)
def test_a_run_of_no_document_of_neighbors_is_named(
    name: str,
    run: pl.DataFrame,
    exact: pl.DataFrame,
    options: dict[str, Any],
    rows: list[tuple[Any, ...]],
    said: list[str],
    lazy: bool,
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _evaluate(run, exact, lazy, **options)
    assert out.rows() == rows
    assert [str(w.message) for w in caught if w.category is irm.CoverageWarning] == said


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize("partitions", [1, 2])
def test_engines_do_not_take_neighbors(
    engine: str, partitions: int, request: pytest.FixtureRequest
) -> None:
    """Neighbour recall is one machine's: the engines refuse neighbors= by name."""
    evaluate, to_engine, back = engine_io(engine, request)
    name = {"spark": "Spark", "dask": "Dask"}[engine]
    message = (
        "neighbors= is a table polars_irmetrics.evaluate reads (neighbour recall's exact "
        f"neighbours), which {name} does not take: evaluate those metrics with "
        "polars_irmetrics.evaluate (a LazyFrame of the Parquet files runs out of core on "
        "one machine)"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        back(
            evaluate(
                to_engine(APPROX),
                [METRIC],
                neighbors=to_engine(EXACT),
                partitions=partitions,
            )
        )
