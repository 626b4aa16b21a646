"""Reports, round 10: what a comparison's report says and reads.

- ``lf.irm.compare(...).collect()`` gives a frame polars builds anew: its report said
  "Test, correction and alpha not recorded" and drew no per-query plot. A frame equal to
  one of the last results is now given its record.
- The randomization test enumerates every sign vector where ``2**n <= n_resamples``;
  the footnote said "(10000 resamples, seed 0)" of such an exact test.
- A null mean raised Python's ``TypeError: must be real number, not NoneType``.
- The summary frame passed as ``per_query=`` drew a wrong panel ("1 wins" for "2 wins,
  2 ties") in silence.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError

#: b wins q2 and q3 beside a, ties q1 and q4: 4 queries, 2**4 sign vectors
JUDGED = pl.DataFrame(
    {
        "run": ["a"] * 4 + ["b"] * 4,
        "query_id": [1, 2, 3, 4] * 2,
        "doc_id": 1,
        "rank": 1,
        "relevance": [1, 0, 0, 0, 1, 1, 1, 0],
    }
)
EXACT = (
    "Two-sided randomization (sign-flip) test (exact: all 2**n sign vectors enumerated, no "
    "resample drawn), Holm correction over 1 comparison (all metrics together), significant "
    "at adjusted p ≤ 0.05; 4 queries; baseline: a."
)


def _compare(lazy: bool, judged: pl.DataFrame = JUDGED, **options: object) -> pl.DataFrame:
    if lazy:
        out = judged.lazy().irm.compare("P@1", qrels=None, system="run", **options)
        return out.collect()
    return judged.irm.compare("P@1", qrels=None, system="run", **options)


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
def test_the_record_of_a_lazy_comparison(lazy: bool) -> None:
    result = _compare(lazy, test="randomization", baseline="a")
    report = irm.report(result)
    assert report.note == EXACT
    assert report.per_query is not None
    assert report.per_query.get_column("delta").sort().to_list() == [0.0, 0.0, 1.0, 1.0]


def test_equal_results_of_other_options_are_not_recorded() -> None:
    """Two recent results with these rows and other options: which test made the frame
    is unknown, and the report says so (the identity of each result still finds its own)."""
    # other rows than the other tests' (whose results are recent too, in any order)
    judged = JUDGED.with_columns(relevance=pl.Series([1, 0, 0, 0, 1, 1, 0, 0]))
    holm = _compare(False, judged, test="randomization", baseline="a")
    bonferroni = _compare(
        False, judged, test="randomization", baseline="a", correction="bonferroni"
    )
    assert holm.equals(bonferroni)  # one comparison: the corrections agree
    assert irm.report(holm).note == EXACT
    copy = holm.clone()
    assert irm.report(copy).note.startswith("Test, correction and alpha not recorded")


def test_resamples_drawn_where_the_test_is_not_exact() -> None:
    result = _compare(False, test="randomization", baseline="a", n_resamples=15, seed=4)
    assert irm.report(result).note.startswith(
        "Two-sided randomization (sign-flip) test (15 resamples, seed 4), Holm"
    )


def test_a_null_mean_is_refused_by_name() -> None:
    hand = pl.DataFrame({"metric": ["map", "map"], "system": ["b", "c"], "mean": [0.5, None]})
    message = (
        "column 'mean' of result is null in row 1; the report reads a number there: pass "
        "the frame irm.compare returned, or drop that row"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.report(hand)


def test_the_summary_is_no_per_query_frame() -> None:
    result = _compare(False, baseline="a")
    message = (
        "column 'value' is not in per_query; pass the per_query=True result of the same "
        "irm.compare call"
    )
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.report(result, per_query=result)


def test_numpy_probabilities_are_numbers() -> None:
    """np.float32(0.05) was refused as "alpha=np.float32(0.05) must be strictly between 0
    and 1" (numpy's float32 is no Python float); np.float64 was accepted."""
    import numpy as np

    plain = _compare(False, baseline="a", alpha=0.25, confidence=0.5)
    for kind in (np.float32, np.float64):
        got = _compare(False, baseline="a", alpha=kind(0.25), confidence=kind(0.5))
        assert got.drop("ci_low", "ci_high").equals(plain.drop("ci_low", "ci_high"))
    message = "alpha=np.True_ must be strictly between 0 and 1 (e.g. alpha=0.05)"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _compare(False, alpha=np.bool_(True))
    with pytest.raises(InvalidValueError, match=re.escape("confidence=np.float32(1.0) must")):
        irm.tukey_hsd(JUDGED, "P@1", qrels=None, system="run", confidence=np.float32(1.0))
