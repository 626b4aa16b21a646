"""Round 36: the Dask agreement warning's counts come from the result's own tasks.

Run and reference are shuffled on the query's part number, so each pair of partitions
holds every row of both sides for its queries: it counts them beside its values, and
the warning's task adds the parts' counts up; no merge or shuffle of its own (round 35's
warning task asked for eight merges and eleven shuffles more than the result's two).
The documents' counts join across queries: a part that finds a document of its run
listed by its reference proves that no document warning can be given, and the parts'
documents are counted (in the warning's task) only where no part proves it, for the run
or for one of its systems. The graphs are built here, and computed by the synchronous
scheduler (in this process, where the document counts' calls are seen).
"""

from __future__ import annotations

import functools
import re
import warnings
from collections import Counter
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from dask.base import collections_to_expr

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
from polars_irmetrics.engines import _agreement_dask
from polars_irmetrics.engines._ope_dask import _shuffled
from polars_irmetrics.engines.dask import _tag
from polars_irmetrics.errors import IrmError, IrmWarning


@functools.cache
def _parted(count: int = 4) -> tuple[str, str]:
    """Two query ids that the engine's shuffle puts in two of ``count`` partitions."""
    ids = pd.DataFrame({"query_id": [f"q{i}" for i in range(40)]}).astype("string[pyarrow]")
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        parts = _shuffled(dd.from_pandas(ids, npartitions=1), "query_id", count, _tag)
        held = [list(p["query_id"]) for p in dask.compute(*parts.to_delayed(), scheduler="sync")]
    first, other = [ids for ids in held if ids][:2]  # Dask hashes the part numbers again
    return first[0], other[0]


def _to_dask(frame: pl.DataFrame) -> Any:
    return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)


def _run(system_y_doc: str, docs: tuple[str, str] = ("a", "b")) -> pl.DataFrame:
    """System 'x' ranks q1 (``docs``), system 'y' q2 (one document), two queries of two
    parts (:func:`_parted`)."""
    q1, q2 = _parted()
    return pl.DataFrame(
        {
            "system": ["x", "x", "y"],
            "query_id": [q1, q1, q2],
            "doc_id": [*docs, system_y_doc],
            "rank": [1, 2, 1],
        }
    )


def _reference() -> pl.DataFrame:
    """q1 (of system 'x') lists 'c' and 'a'; q2 (of 'y', in the other part) 'd'."""
    return _run("d", ("c", "a"))


def _said(work: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = work()
    return out, [
        f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, IrmWarning)
    ]


def _names(graph: Any) -> Counter[str]:
    """The layers of ``graph`` (a task key's name, its token cut off), with their tasks."""
    names = (str(k[0] if isinstance(k, tuple) else k) for k in dict(graph))
    return Counter(re.sub(r"-[0-9a-f]{32}$|-[0-9a-f-]{36}$", "", name) for name in names)


@pytest.mark.parametrize("systems", [None, "system"], ids=["one run", "systems"])
def test_the_warnings_counts_add_no_merge_or_shuffle_to_the_result(systems: str | None) -> None:
    run = _run("d")
    kw = {} if systems is None else {"systems": systems}
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        out = irm_dask.evaluate(
            _to_dask(run if systems else run.drop("system")),
            ["rbo", "jaccard@2"],
            reference=_to_dask(_reference() if systems else _reference().drop("system")),
            partitions=4,
            **kw,
        )
        graph = collections_to_expr([out]).finalize_compute().optimize().__dask_graph__()
    layers = _names(graph)
    assert not [n for n in layers if "merge" in n or "join" in n]
    # the run's shuffle and the reference's (and with systems= the reference's groups',
    # which each part reads)
    shuffles = {str(k[0]) for k in dict(graph) if str(k[0]).startswith("taskshuffle-")}
    assert len(shuffles) == (2 if systems is None else 3)
    # four parts: each one's values, counts, documents (handed on where needed)
    assert (layers["_counts_of"], layers["_documents_of"], layers["_values_of"]) == (4, 4, 4)
    assert (layers["_summed"], layers["_warn"], layers["_finish"]) == (1, 1, 1)


#: y's document: 'd' (listed in its own query), 'c' (listed in q1 only, in the other
#: part: no part proves it, the whole count finds it) and 'z' (listed nowhere: warned).
CASES = [("d", False), ("c", True), ("z", True)]


@pytest.mark.parametrize(("doc", "counted"), CASES, ids=["proven", "listed apart", "unlisted"])
@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per query"])
def test_the_documents_are_counted_only_where_no_part_proves_them_listed(
    monkeypatch: pytest.MonkeyPatch,
    evaluate: Any,
    doc: str,
    counted: bool,
    per_query: bool,
) -> None:
    calls: list[int] = []
    counts = _agreement_dask.document_counts

    def seen(*args: Any) -> Any:
        calls.append(1)
        return counts(*args)

    monkeypatch.setattr(_agreement_dask, "document_counts", seen)
    run = _run(doc)
    kw: dict[str, Any] = {"systems": "system", "per_query": per_query}
    whole, expected = _said(
        lambda: evaluate(run, ["rbo", "jaccard@2"], reference=_reference(), **kw)
    )
    out = irm_dask.evaluate(
        _to_dask(run), ["rbo", "jaccard@2"], reference=_to_dask(_reference()), partitions=4, **kw
    )
    got, said = _said(lambda: out.compute(scheduler="sync"))
    table = pl.from_arrow(pa.Table.from_pandas(got, preserve_index=False))
    assert isinstance(table, pl.DataFrame)
    assert (
        table.sort("system", *(["query_id"] if per_query else []))
        .cast(whole.schema)
        .equals(whole.sort("system", *(["query_id"] if per_query else [])))
    )
    assert said == expected
    assert len(calls) == int(counted)
    unlisted = [s for s in said if "documents" in s]
    if doc == "z":
        assert unlisted == [
            "CoverageWarning: reference= holds none of the 1 documents of the run of "
            "system 'y' (column 'doc_id'): " + unlisted[0].split("(column 'doc_id'): ")[1]
        ]
    else:
        assert not unlisted


def test_a_refused_run_warns_of_nothing_and_counts_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(_agreement_dask, "_summed", lambda *a: calls.append(1))
    # a null query id: the part holding it refuses the run, before any count is read
    run = _run("z").with_columns(
        pl.when(pl.col("system") == "y").then(None).otherwise(pl.col("query_id")).alias("query_id")
    )
    with pytest.raises(IrmError) as machine:
        irm.evaluate(run, ["rbo"], reference=_reference(), systems="system")
    out = irm_dask.evaluate(
        _to_dask(run), ["rbo"], reference=_to_dask(_reference()), systems="system"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(type(machine.value)) as raised:
            out.compute(scheduler="sync")
    assert str(raised.value) == str(machine.value)
    assert not [w for w in caught if issubclass(w.category, IrmWarning)]
    assert calls == []
