"""The rank-similarity metrics (``reference=``) on Spark and Dask: the one plan's bits,
means and per-query values, with ``by=``, and the whole run's warning when the
reference lacks most of its queries."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, InvalidValueError, MetricParameterError

from .test_agreement import runs_with_ties as _runs
from .test_engines_recsys42 import PARTS, _engine, results

#: Every kind of rank similarity: RBO (ties too), set overlaps, the tau measures,
#: RecTools' and RePlay's metrics against a reference model.
METRICS = [
    "rbo",
    "rbo(p=0.8)@10",
    "jaccard@5",
    "overlap@5",
    "kendall_tau@10",
    "tau_ap@10",
    "intersection@5",
    "unexpectedness@5",
]


def _one_plan(run: pl.DataFrame, reference: pl.DataFrame, **kw: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        out = irm.evaluate(run, METRICS, reference=reference, **kw)
    assert isinstance(out, pl.DataFrame)
    return out


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_rank_similarity_on_engines_gives_the_one_plans_bits(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = _engine(engine, request)
    run, reference = _runs(3)
    frames = frame(run), frame(reference)
    # by= keys both sides have; systems= the reference lacks (one reference for each).
    # A covering design: each engine evaluates both, one for the means and the other per
    # query (the means without keys: the warnings' tests below, on both engines)
    alone = frame(reference.drop("segment"))
    per_query = engine == "spark"
    cases: list[tuple[dict[str, Any], Any, pl.DataFrame]] = [
        ({"by": "segment", "per_query": per_query}, frames[1], reference),
        ({"systems": "segment", "per_query": not per_query}, alone, reference.drop("segment")),
    ]
    outs = [
        lambda other=other, options=options: evaluate(
            frames[0], METRICS, reference=other, partitions=PARTS, **options
        )
        for options, other, _ in cases
    ]
    for (options, _, given), got in zip(cases, results(engine, outs, back), strict=True):
        whole = _one_plan(run, given, **options)
        if options["per_query"]:  # Dask gives the rows in task order
            got = got.sort("segment", "query_id")
        assert got.columns == whole.columns, options
        assert got.cast(whole.schema).equals(whole), options


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_warn_of_a_reference_lacking_the_runs_queries(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # the reference holds 2 of the run's 40 queries: one machine's words, once, from the
    # whole run (each part alone holds some of them)
    evaluate, frame, back = _engine(engine, request)
    run, reference = _runs(5)
    reference = reference.filter(pl.col("query_id").is_in(["q04", "q05"]))
    with pytest.warns(CoverageWarning) as expected:
        whole = irm.evaluate(run, ["rbo"], reference=reference)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = back(evaluate(frame(run), ["rbo"], reference=frame(reference), partitions=PARTS))
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert said == [str(expected[0].message)]
    assert said[0].startswith("reference= holds only 2 of the 40 queries of the run")
    # and the means without keys: one machine's bits
    assert isinstance(whole, pl.DataFrame)
    assert got.cast(whole.schema).equals(whole)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_tables_the_rank_similarity_metrics_do_not_read(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, _ = _engine(engine, request)
    run, reference = _runs(7)
    name = "Spark" if engine == "spark" else "Dask"
    with pytest.raises(MetricParameterError, match=re.escape(
        "metric 'rbo' reads a reference run (the ranking each query's is compared with): "
        f"pass reference=... to polars_irmetrics.{name.lower()}.evaluate"
    )):  # fmt: skip
        evaluate(frame(run), ["rbo"])
    with pytest.raises(InvalidValueError, match=re.escape(
        "qrels= is not read by the rank-similarity metrics (rbo, jaccard@k, kendall_tau@k, "
        "intersection@k...): they read the run and reference=; drop qrels="
    )):  # fmt: skip
        evaluate(frame(run), ["rbo"], reference=frame(reference), qrels=frame(run))
    with pytest.raises(MetricParameterError, match=re.escape(
        "reference= holds the run that rank-similarity metrics (rbo, jaccard@k, "
        "kendall_tau@k...) compare with, and no metric asked for reads it"
    )):  # fmt: skip
        evaluate(frame(run), ["ndcg@5"], qrels=frame(run), reference=frame(reference))
    with pytest.raises(MetricParameterError, match=re.escape(
        "metrics 'rbo' and 'ndcg@5' are computed from different tables"
    )):  # fmt: skip
        evaluate(frame(run), ["rbo", "ndcg@5"], reference=frame(reference))


def test_dask_computes_nothing_at_the_call(request: pytest.FixtureRequest) -> None:
    # the warning's count of the reference's queries is a task of the graph: a run whose
    # reading fails fails at compute(), not at the call (before, the count ran there)
    request.getfixturevalue("client")
    import dask
    import dask.dataframe as dd
    import pandas as pd

    import polars_irmetrics.dask as irm_dask

    run, reference = _runs(5)
    ref = dd.from_pandas(reference.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)

    def unreadable() -> pd.DataFrame:
        raise OSError("the run's files are gone")

    shape = run.head(0).to_pandas(types_mapper=pd.ArrowDtype)
    failing = dd.from_delayed([dask.delayed(unreadable)()], meta=shape)
    lazy = irm_dask.evaluate(failing, ["rbo"], reference=ref)  # nothing read yet
    with pytest.raises(OSError, match="the run's files are gone"):
        lazy.compute()


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_warn_of_a_reference_sharing_no_document(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # the same queries, the documents in another id space: every similarity 0 (once in
    # silence); one machine's words, once, from the engines too
    evaluate, frame, back = _engine(engine, request)
    run, reference = _runs(5)
    reference = reference.with_columns(("x" + pl.col("doc_id").cast(pl.String)).alias("doc_id"))
    run = run.with_columns(pl.col("doc_id").cast(pl.String))
    with pytest.warns(CoverageWarning) as expected:
        whole = irm.evaluate(run, ["rbo", "jaccard@5"], reference=reference)
    assert len(expected) == 1
    text = str(expected[0].message)
    assert text.startswith("reference= holds none of the ")
    assert "no list shares a document with the reference's" in text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = back(
            evaluate(
                frame(run), ["rbo", "jaccard@5"], reference=frame(reference), partitions=PARTS
            )
        )
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert said == [text]
    # and the means without keys: one machine's bits, every similarity 0
    assert isinstance(whole, pl.DataFrame)
    assert whole.row(0)[1:] == (0.0, 0.0)
    assert got.cast(whole.schema).equals(whole)
