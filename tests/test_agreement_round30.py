"""Round 30: the rank-similarity metrics' corners (agreement wing audit)."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

from .helpers import engine_io

#: An unsigned id past 2**63, and the signed id it wraps to (which must not match it).
BIG = 2**63 + 5
WIDE_RUN = pl.DataFrame(
    {
        "system": ["s1"] * 3 + ["s2"] * 2,
        "query_id": [1, 1, 1, 1, 2],
        "doc_id": pl.Series([7, 2**63 - 1, 3, BIG, BIG + 1], dtype=pl.UInt64),
        "score": [3.0, 2.0, 1.0, 1.0, 1.0],
    }
)
WIDE_REFERENCE = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 2, 2],
        "doc_id": [7, BIG - 2**64, 3, 2**63 - 1, BIG + 1 - 2**64],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)


def _warned(call: Any, *args: Any, **kwargs: Any) -> tuple[pl.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call(*args, **kwargs)
    return out, sorted(str(w.message) for w in caught if issubclass(w.category, IrmWarning))


def test_dask_rank_similarity_lines_up_unsigned_and_signed_document_ids(
    request: pytest.FixtureRequest,
) -> None:
    """UInt64 document ids in the run beside Int64 ones in the reference: one machine
    matches them as Int128 (``BIG`` never meets the negative id it wraps to, so system
    s2 shares no document and is warned of by name). Dask refused the call; lifted, the
    count of the documents the reference lists merged the two columns as float64
    (pyarrow's 'Integer value 9223372036854775813 not in range' from a task). Now one
    machine's values and warnings."""
    evaluate, to_engine, back = engine_io("dask", request)
    metrics = ["rbo", "jaccard@2", "kendall_tau@3", "ktu@3"]
    for per_query in (False, True):
        options = {"systems": "system", "per_query": per_query}
        want, said = _warned(irm.evaluate, WIDE_RUN, metrics, reference=WIDE_REFERENCE, **options)
        assert any("run of system 's2'" in text for text in said)  # the wrap would match it
        run, reference = to_engine(WIDE_RUN), to_engine(WIDE_REFERENCE)
        got, told = _warned(
            lambda run=run, reference=reference, options=options: back(
                evaluate(run, metrics, reference=reference, **options)
            )
        )
        keys = ["system", "query_id"] if per_query else ["system"]
        assert_frame_equal(got.sort(keys), want.sort(keys), check_exact=True)
        assert told == said


def test_no_shared_document_warning_does_not_say_ktu_is_one() -> None:
    """The warning of a reference holding none of the run's documents said "repro_eval's
    ktu is 1, its value with no pair to compare"; ktu pairs where each list's ids fall
    in their sorted union: run [b, a] beside reference [c, d] pairs positions (1, 0)
    with (2, 3), tau -1."""
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    reference = run.with_columns(pl.Series("doc_id", ["c", "d"]))
    out, said = _warned(irm.evaluate, run, ["ktu@2"], reference=reference, per_query=True)
    assert out["ktu@2"].to_list() == [-1.0]  # concordant 0, discordant 1: (0 - 1) / 1
    assert len(said) == 1
    assert (
        "repro_eval's ktu, which pairs where each list's ids fall in the sorted union of "
        "both, reads the ids' spelling alone" in said[0]
    )


def test_dask_rank_similarity_ids_of_two_dtypes_give_no_dask_warning(
    request: pytest.FixtureRequest,
) -> None:
    """Query ids Int64 beside Int32, document ids Categorical beside String: one machine
    lines them up in silence; Dask's count of the reference's queries and documents
    merged the two dtypes and gave its own UserWarning ("Merging dataframes with merge
    column data type mismatches"). Every warning is compared, of any class."""
    evaluate, to_engine, back = engine_io("dask", request)
    run = pl.DataFrame(
        {"query_id": [1, 1, 2], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
    ).with_columns(pl.col("doc_id").cast(pl.Categorical))
    reference = pl.DataFrame(
        {"query_id": [1, 1, 2], "doc_id": ["b", "a", "c"], "score": [2.0, 1.0, 1.0]},
        schema_overrides={"query_id": pl.Int32},
    )
    for options in ({}, {"per_query": True}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            want = irm.evaluate(run, ["rbo", "jaccard@2"], reference=reference, **options)
        said = [str(w.message) for w in caught]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = back(
                evaluate(
                    to_engine(run), ["rbo", "jaccard@2"], reference=to_engine(reference), **options
                )
            )
        assert [str(w.message) for w in caught] == said
        assert_frame_equal(
            got.sort(got.columns[0]), want.sort(want.columns[0]), check_dtypes=False
        )
