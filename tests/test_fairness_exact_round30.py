"""Round 30: rND, rKL and rRD score the most unfair ranking exactly 1.0 (each term rounded
once, the sums fixed-point, rRD's normaliser the largest of the rankings' own sums added
the same way), none above 1; RecTools' serendipity(kind='kotkov', n_items=n) refuses a
catalogue smaller than the interactions' items, on every engine."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import MetricParameterError
from tests.test_awrf import _evaluate
from tests.test_engines_recsys42 import _engine

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


# serendipity(kind='kotkov', n_items=n): a catalogue smaller than the interactions'
# items is refused, naming both numbers (RecTools does not check it)
RECS = pl.DataFrame({"query_id": ["u1"] * 3, "doc_id": ["d", "b", "c"], "rank": [1, 2, 3]})
TEST = pl.DataFrame({"query_id": ["u1"], "doc_id": ["d"], "relevance": [1]})
#: 4 items (a 3 users, b, c, d 1 each): popularity ranks a 1, the rest 2
TRAIN = pl.DataFrame(
    {"query_id": ["u1", "u2", "u2", "u3", "u3", "u4"], "doc_id": ["a", "a", "b", "a", "c", "d"]}
)


def _too_small(label: str, n: str, items: int, where: str = "") -> str:
    return (
        f"metric {label!r}: n_items={n} is below the {items} distinct items of "
        f"interactions={where}, and the catalogue holds at least every item the users "
        "interacted with: RecTools' chances (n + 1 - rank) / n would read a catalogue "
        "that cannot be, and the value means nothing (RecTools does not check it); pass "
        f"n_items={items} or more (RecTools' len(catalog): every item that can be "
        f"recommended), or leave n_items out to take the interactions' {items} items"
    )


@pytest.mark.parametrize(
    ("n", "want"),
    [
        ("1", None),  # 0.3333 before: d at rank 1, (1+1-1)/1 - (1+1-2)/1 = 1, over 3 rows
        ("3.5", None),
        ("4", 0.25 / 3),  # (4+1-1)/4 - (4+1-2)/4 = 1/4, over 3 rows: as n left out
        ("9", (1 - 8 / 9) / 3),  # pu = (9+1-2)/9
    ],
)
def test_kotkov_n_items_below_the_interactions_items_is_refused(
    n: str, want: float | None, frame_kind: str
) -> None:
    label = f"serendipity(kind='kotkov', n_items={n})@3"
    if want is None:
        with pytest.raises(MetricParameterError) as caught:
            _evaluate(frame_kind, RECS, [label], qrels=TEST, interactions=TRAIN)
        assert str(caught.value) == _too_small(label, n, 4)
        return
    out = _evaluate(frame_kind, RECS, [label], qrels=TEST, interactions=TRAIN)
    assert out[label].to_list() == pytest.approx([want], rel=1e-15)


def test_kotkov_n_items_against_the_largest_by_group() -> None:
    # by a segment the interactions carry: each segment's popularity and catalogue; the
    # refusal names the largest segment's (x: 4 items, y: 2)
    run = pl.concat([RECS.with_columns(s=pl.lit(s)) for s in ("x", "y")])
    train = pl.concat(
        [TRAIN.with_columns(s=pl.lit("x")), TRAIN.head(3).with_columns(s=pl.lit("y"))]
    )
    label = "serendipity(kind='kotkov', n_items=3)@3"
    with pytest.raises(MetricParameterError) as caught:
        irm.evaluate(run.lazy(), [label], qrels=TEST, interactions=train, by="s").collect()
    assert str(caught.value) == _too_small(label, "3", 4, " (for s=x)")


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_kotkov_n_items_refused_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # every part reads the whole history: the one machine's refusal, word for word
    evaluate, frame, back = _engine(engine, request)
    label = "serendipity(kind='kotkov', n_items=2)@3"
    with pytest.raises(MetricParameterError) as caught:
        back(evaluate(frame(RECS), [label], qrels=frame(TEST), interactions=frame(TRAIN)))
    assert str(caught.value) == _too_small(label, "2", 4)
