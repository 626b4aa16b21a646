"""The rank-similarity metrics out of core (``buckets=``): the run and the reference split
into hash buckets of queries, each bucket evaluated by the one plan, the means over every
query's values; the same bits as the one plan."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, InvalidValueError
from tests.test_agreement import runs_with_ties

METRICS = [
    "rbo",
    "rbo(ties='a', kind='res')",
    "jaccard@5",
    "overlap@5",
    "kendall_tau@5",
    "tau_ap@5",
    "intersection@3",
    "unexpectedness@3",
]
RUN, REFERENCE = runs_with_ties(5)

#: (id, options, the reference's columns): by= shared with the reference, systems= read
#: from the run alone (one reference for every system), by= from the run alone with
#: each segment scored on the queries it retrieved, and the query-set policies
CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("plain", {}, True),
    ("by-shared", {"by": "segment"}, True),
    ("systems-run-only", {"systems": "segment"}, False),
    ("by-run-only-drop", {"by": "segment", "unretrieved": "drop"}, False),
    ("drop-both", {"unjudged": "drop", "unretrieved": "drop"}, True),
]


def _quiet(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        return call()


@pytest.mark.parametrize(
    ("options", "segmented"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("per_query", [False, True])
def test_buckets_give_the_one_plans_bits(
    options: dict[str, Any], segmented: bool, per_query: bool
) -> None:
    reference = REFERENCE if segmented else REFERENCE.drop("segment")
    one = _quiet(
        lambda: irm.evaluate(RUN, METRICS, reference=reference, per_query=per_query, **options)
    )
    for buckets in (3, "auto"):  # "auto" is buckets=1 at this size
        split = _quiet(
            lambda b=buckets: irm.evaluate(
                RUN.lazy(),
                METRICS,
                reference=reference.lazy(),
                per_query=per_query,
                buckets=b,
                **options,
            ).collect()
        )
        assert split.equals(one), buckets


def test_the_warning_counts_the_whole_run_once(tmp_path: Path) -> None:
    # the reference holds 2 of the run's 40 queries: one warning, the one plan's words,
    # however many buckets; the spill folder is gone afterwards
    reference = REFERENCE.filter(pl.col("query_id").is_in(["q05", "q06"]))
    with pytest.warns(CoverageWarning) as one:
        irm.evaluate(RUN, ["rbo"], reference=reference)
    with pytest.warns(CoverageWarning) as split:
        irm.evaluate(RUN, ["rbo"], reference=reference, buckets=4, spill_dir=tmp_path)
    assert [str(w.message) for w in split] == [str(w.message) for w in one]
    assert list(tmp_path.iterdir()) == []


def test_a_spill_folder_needs_buckets() -> None:
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(RUN, ["rbo"], reference=REFERENCE, spill_dir="/tmp")
    assert str(caught.value) == (
        "spill_dir='/tmp' is the folder of the out-of-core buckets, and the rank-similarity "
        "metrics evaluate in one plan unless buckets= is a number or 'auto': pass "
        "buckets=, or drop spill_dir="
    )
