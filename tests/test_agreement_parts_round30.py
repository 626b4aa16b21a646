"""Round 30: a group of the run that ``reference=`` lacks, decided on the whole tables.

The rank-similarity metrics refuse a ``systems=``/``by=`` group of the run that the
reference lacks (a reference per group). Each part of a split evaluation (``buckets=``,
Spark's and Dask's partitions, split by query) checked that on its own rows: system
'x' scored on its query 'r' alone (its query 'q' absent from the reference) was refused
by the part holding 'q', whose reference rows are system 'y''s only. A part now reads
the whole reference's groups: one machine's values and warnings, and the true refusal
(a system the reference lacks entirely) in one machine's words, on every path.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, IrmWarning

from .helpers import engine_io

#: system 'x' ranks queries 'q' to 'z'; 'y' ranks 'q' and 'r'
RUN = pl.DataFrame(
    {
        "system": ["x"] * 20 + ["y"] * 4,
        "query_id": [q for q in "qrstuvwxyzqr" for _ in "ab"],
        "doc_id": ["a", "b"] * 12,
        "rank": [1, 2] * 12,
    }
)
#: system 'x''s queries but 'r' absent: 'x' scored on 'r' alone (and warned of)
HALF = RUN.filter((pl.col("system") == "y") | (pl.col("query_id") == "r"))
#: system 'x' absent (refused), and spelt apart (refused with the spelling hint)
REFUSED = [
    RUN.filter(pl.col("system") == "y"),
    RUN.with_columns(pl.col("system").str.to_uppercase()).filter(pl.col("query_id") == "r"),
]
PATHS = ["buckets", "buckets-lazy", "spark", "dask"]


def _on(path: str, request: pytest.FixtureRequest, reference: pl.DataFrame) -> pl.DataFrame:
    kw: dict[str, Any] = {"systems": "system"}
    if path.startswith("buckets"):
        lazy = path.endswith("lazy")
        run, ref = (RUN.lazy(), reference.lazy()) if lazy else (RUN, reference)
        out = irm.evaluate(run, ["rbo", "jaccard@2"], reference=ref, buckets=2, **kw)
        return out.collect() if isinstance(out, pl.LazyFrame) else out
    evaluate, frame, back = engine_io(path, request)
    out = evaluate(
        frame(RUN), ["rbo", "jaccard@2"], reference=frame(reference), partitions=3, **kw
    )
    return back(out)  # type: ignore[no-any-return]


def _said(work: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = work()
    return out, [
        f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, IrmWarning)
    ]


@pytest.mark.parametrize("path", PATHS)
def test_a_part_refuses_only_a_group_the_whole_reference_lacks(
    path: str, request: pytest.FixtureRequest
) -> None:
    whole, expected = _said(
        lambda: irm.evaluate(RUN, ["rbo", "jaccard@2"], reference=HALF, systems="system")
    )
    assert whole.rows() == [("x", 1, 1.0, 1.0), ("y", 2, 1.0, 1.0)]
    assert len(expected) == 1
    assert expected[0].startswith("CoverageWarning: reference= holds only 3 of the 12")
    got, said = _said(lambda: _on(path, request, HALF))
    assert got.cast(whole.schema).equals(whole)
    assert said == expected
    for reference in REFUSED:  # the true refusal, in one machine's words
        with pytest.raises(InvalidValueError) as alone:
            irm.evaluate(RUN, ["rbo", "jaccard@2"], reference=reference, systems="system")
        assert str(alone.value).startswith("the group system='x' of the run has no rows")
        with pytest.raises(InvalidValueError, match=f"^{re.escape(str(alone.value))}$"):
            _on(path, request, reference)
