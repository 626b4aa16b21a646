"""Round 30: rND, rKL and rRD score the most unfair ranking exactly 1.0 (each term rounded
once, the sums fixed-point, rRD's normaliser the largest of the rankings' own sums added
the same way), none above 1."""

from __future__ import annotations

import polars as pl
import pytest

from tests.test_awrf import _evaluate

#: (measure, N, the protected positions (0-based)): a ranking that reaches the
#: measure's maximum over every ranking of N documents with as many protected, so its
#: value is 1 (before: 0.9999999999999999 or below, or above 1).
UNFAIR = [
    ("rrd", 20, range(5)),  # 0.9999999999999999 before: Z summed another way
    ("rrd", 53, range(6)),  # 1.0000000000000002 before: above 1
    ("rrd", 11, range(5)),  # ties k = 4 at i = 10 (both 1/6): 0.9999999999999993 before
    ("rrd", 30, [1, *range(2, 13)]),  # one unprotected on top: no segregated ranking
    ("rnd", 20, range(11)),  # ties its bottom mirror: 0.9999999999999999 before
    ("rnd", 58, range(29)),
    ("rkl", 14, range(7, 14)),  # ties its top mirror
    ("rkl", 16, range(8)),
]


@pytest.mark.parametrize(("measure", "n", "protected"), UNFAIR)
def test_the_most_unfair_ranking_scores_exactly_one(
    measure: str, n: int, protected: range | list[int], frame_kind: str
) -> None:
    run = pl.DataFrame({"query_id": ["q"] * n, "doc_id": range(n), "rank": range(1, n + 1)})
    groups = pl.DataFrame(
        {"doc_id": range(n), "group": ["w" if d in protected else "m" for d in range(n)]}
    )
    label = f"{measure}(protected='w')"
    out = _evaluate(frame_kind, run, [label], groups=groups)
    assert out[label].to_list() == [1.0]


def test_every_segregated_ranking_at_most_one() -> None:
    # every N in 11 .. 66 and P in 1 .. N-1, the protected documents all on top or all
    # at the bottom, one query each: rnd's and rkl's maximum is the larger of the two,
    # exactly 1.0; none of the three above 1
    rows = []
    for n in range(11, 67):
        for p in range(1, n):
            for top in (True, False):
                first = 0 if top else n - p
                q = f"{n}-{p}-{top}"
                rows += [(q, f"{q}-{d}", d + 1, first <= d < first + p, n, p) for d in range(n)]
    frame = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "w", "n", "p"], orient="row")
    groups = frame.select(
        "doc_id", pl.when("w").then(pl.lit("w")).otherwise(pl.lit("m")).alias("group")
    )
    labels = [f"{m}(protected='w')" for m in ("rnd", "rkl", "rrd")]
    out = _evaluate(
        "LazyFrame",
        frame.select("query_id", "doc_id", "rank"),
        labels,
        groups=groups,
        per_query=True,
    ).join(frame.select("query_id", "n", "p").unique(), on="query_id")
    assert out.height == sum(2 * (n - 1) for n in range(11, 67))
    for label in labels:
        assert out[label].max() == 1.0
        assert out.filter(pl.col(label) > 1.0).height == 0
    best = out.group_by("n", "p").agg(pl.col(labels[:2]).max())
    assert best.filter(pl.any_horizontal(pl.col(labels[:2]) != 1.0)).height == 0
