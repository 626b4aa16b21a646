"""Numeric scale, ties and shapes, round 28: an adversarial audit of ``irm.evaluate``
and the wings' public functions (beyond_accuracy, the prediction metrics, neighbours,
online/A-B, ``irm.fuse``) for a silently wrong number.

Probed against trec_eval (pytrec_eval), scikit-learn or a hand computation, on
DataFrames, LazyFrames, ``buckets=``, ``systems=``, ``by=``, list-shaped tables and Dask:
scores of Float32, Float16, Decimal (38 digits), Int8 to UInt64 and Int128 (integers
beyond 2**53 kept exact, never tied by a cast), -0.0 beside 0.0 (a tie, broken by the
doc id descending compared as text, as trec_eval), NaN (refused), infinities and
subnormals; ranks of 0, negative, with gaps, Float, duplicated, beside disagreeing
scores; labels of Float, Boolean, -1, beyond 2**32, null; list and Array runs and
judgments with nulls inside, empty lists and parallel lists of different lengths;
empty tables, unjudged queries, cutoffs of 0 and beyond every ranking; null keys.
Every one was exact or refused by name, but for the gap below.

1. A column read as numbers, of a dtype with no such cast, was refused with the fix
   ``pl.col(c).cast(pl.Float64)`` whatever its dtype. For a Datetime or Duration that
   fix loses the order the column holds: timestamps in nanoseconds are beyond 2**53,
   where a Float64 ties two of them a few nanoseconds apart, so the run that followed
   the library's own advice scored its ties as trec_eval breaks them (by doc id), a
   silently different number. A date or time is now told to cast to its integer count
   (``pl.Int64``, which every order column holds exactly); a list or struct per row,
   which no cast turns into one number, is told which value to take. One helper
   (``ground.validate.numeric_cast_fix``) words it for every door: the run and the
   judgments, the recommendations, ``irm.fuse``, the predictions, the reference run,
   neighbour recall, the click-metric expressions and the dwell of a log.

2. A float ``systems=`` or ``by=`` key holding -0.0 beside 0.0 (equal values, so one
   group) was labelled by whichever sign the grouping met first: ``-0.0`` in the means
   while the per-query rows of the ``0.0`` rows said ``0.0``, and ``evaluate_online``'s
   ``by=`` gave ``-0.0`` or ``0.0`` as the log's rows came (the same data, other bits).
   A float key is now read with -0.0 as 0.0 where the door lines up the keys
   (``ground.validate.signless_zero_keys``), every other value kept bit for bit.

The probes that held are pinned at the end: ties (Float32, -0.0 beside 0.0) and scores a
Float64 cast would tie (Int64 beyond 2**53, a Decimal's 20th digit) give the
hand-computed values on a DataFrame, a LazyFrame, ``buckets=``, ``systems=``, Spark and
Dask alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io

#: two nanosecond timestamps one apart, both beyond 2**53 (a Float64 reads them as one)
NS = [1_700_000_000_000_000_001, 1_700_000_000_000_000_000]
#: the fix told for a date or time read as numbers
TEMPORAL_FIX = (
    "cast it to its integer count, e.g. pl.col('score').cast(pl.Int64) (exact; a cast "
    "to pl.Float64 holds integers to 2**53 only: timestamps in nanoseconds a few apart "
    "would tie)"
)
QRELS = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 0]})


def _run(score: pl.Series) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": score})


def _eager(call: Callable[[], Any]) -> Any:
    out = call()
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _ns(dtype: pl.DataType) -> pl.Series:
    return pl.Series(NS).cast(dtype)


CASES: list[tuple[str, Callable[[], Any], str]] = [
    (
        "run score Datetime(ns)",
        lambda: irm.evaluate(_run(_ns(pl.Datetime("ns"))), ["mrr"], qrels=QRELS),
        "column 'score' in the run has dtype Datetime(time_unit='ns', time_zone=None); it "
        f"must be numeric: {TEMPORAL_FIX}",
    ),
    (
        "run score Duration(ns), lazy",
        lambda: irm.evaluate(_run(_ns(pl.Duration("ns"))).lazy(), ["mrr"], qrels=QRELS),
        f"column 'score' in the run has dtype Duration(time_unit='ns'); it must be numeric: "
        f"{TEMPORAL_FIX}",
    ),
    (
        "run score Date",
        lambda: irm.evaluate(_run(pl.Series([2, 1]).cast(pl.Date)), ["mrr"], qrels=QRELS),
        f"column 'score' in the run has dtype Date; it must be numeric: {TEMPORAL_FIX}",
    ),
    (
        "run score list beside scalar ids",
        lambda: irm.evaluate(_run(pl.Series([[1.0], [0.5]])), ["mrr"], qrels=QRELS),
        "column 'score' in the run has dtype List(Float64); it must be numeric: it holds a "
        "list per row, where one number per row is read: take one, e.g. "
        "pl.col('score').list.first() (a list-shaped table holds its ids in a list of the "
        "same length beside it)",
    ),
    (
        "run score Array beside scalar ids",
        lambda: irm.evaluate(
            _run(pl.Series([[1.0], [0.5]], dtype=pl.Array(pl.Float64, 1))), ["mrr"], qrels=QRELS
        ),
        "column 'score' in the run has dtype Array(Float64, shape=(1,)); it must be "
        "numeric: it holds an array per row, where one number per row is read: take one, "
        "e.g. pl.col('score').arr.first() (a list-shaped table holds its ids in a list of "
        "the same length beside it)",
    ),
    (
        "run score struct",
        lambda: irm.evaluate(
            _run(pl.Series([{"bm25": 1.0}, {"bm25": 0.5}])), ["mrr"], qrels=QRELS
        ),
        "column 'score' in the run has dtype Struct({'bm25': Float64}); it must be numeric: "
        "it holds a struct per row, where one number per row is read: take the field that "
        "holds it, e.g. pl.col('score').struct.field('bm25')",
    ),
    (
        "run rank list beside scalar ids",
        lambda: irm.evaluate(
            pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "rank": [[1]]}), ["mrr"], qrels=QRELS
        ),
        "column 'rank' in the run has dtype List(Int64); it must be an integer: it holds a "
        "list per row, where one number per row is read: take one, e.g. "
        "pl.col('rank').list.first() (a list-shaped table holds its ids in a list of the "
        "same length beside it)",
    ),
    (
        "judgments relevance list beside scalar ids",
        lambda: irm.evaluate(
            _run(pl.Series([1.0, 0.5])),
            ["mrr"],
            qrels=pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [[1]]}),
        ),
        "column 'relevance' in the judgments has dtype List(Int64); it must be numeric: it "
        "holds a list per row, where one number per row is read: take one, e.g. "
        "pl.col('relevance').list.first() (a list-shaped table holds its ids in a list of "
        "the same length beside it)",
    ),
    (
        "fuse score Datetime(ns)",
        lambda: irm.fuse({"x": _run(_ns(pl.Datetime("ns"))), "y": _run(pl.Series([1.0, 2.0]))}),
        "column 'score' of run 'x' has dtype Datetime(time_unit='ns', time_zone=None); it "
        f"must be numeric: {TEMPORAL_FIX}",
    ),
    (
        "beyond_accuracy score Datetime(ns)",
        lambda: irm.beyond_accuracy(
            pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "score": _ns(pl.Datetime)}),
            ["novelty@1"],
            interactions=pl.DataFrame({"user_id": [2, 2], "item_id": ["a", "b"]}),
        ),
        "column 'score' in the recommendations has dtype Datetime(time_unit='us', "
        f"time_zone=None); it must be numeric: {TEMPORAL_FIX}",
    ),
    (
        "reference score Duration(ns)",
        lambda: irm.evaluate(
            _run(pl.Series([1.0, 0.5])), ["rbo"], reference=_run(_ns(pl.Duration("ns")))
        ),
        "column 'score' in the reference has dtype Duration(time_unit='ns'); rankings are "
        f"read from it: {TEMPORAL_FIX}",
    ),
    (
        "neighbour recall score Datetime(ns)",
        lambda: irm.evaluate(
            _run(_ns(pl.Datetime("ns"))),
            ["neighbor_recall@1"],
            neighbors=_run(pl.Series([1.0, 0.5])),
        ),
        "column 'score' in the run has dtype Datetime(time_unit='ns', time_zone=None); "
        f"neighbour recall reads distances from scores: {TEMPORAL_FIX}",
    ),
    (
        "prediction Datetime(ns)",
        lambda: irm.evaluate(
            pl.DataFrame(
                {"query_id": [1, 2], "label": [1, 0], "prediction": _ns(pl.Datetime("ns"))}
            ),
            ["auc"],
        ),
        "column 'prediction' has dtype Datetime(time_unit='ns', time_zone=None); predictions "
        "and weights must be numbers: "
        + TEMPORAL_FIX.replace("pl.col('score')", "pl.col('prediction')"),
    ),
    (
        "dwell Datetime",
        lambda: irm.evaluate_online(
            pl.DataFrame(
                {
                    "session_id": ["s"],
                    "position": [1],
                    "clicked": [1],
                    "dwell": pl.Series([1]).cast(pl.Datetime),
                }
            ),
            ["sat_click_rate"],
        ),
        "column 'dwell' of the log has dtype Datetime(time_unit='us', time_zone=None); a "
        "dwell must be a number of seconds: "
        + TEMPORAL_FIX.replace("pl.col('score')", "pl.col('dwell')"),
    ),
    (
        "click-metric expression on a struct",
        lambda: (
            pl.DataFrame({"session_id": ["s"], "position": [1], "clicked": [{"v": 1}]})
            .group_by("session_id")
            .agg(irm.click_metric("ctr@1"))
        ),
        "column 'clicked' has dtype Struct({'v': Int64}); the metric reads its clicks (Boolean "
        "or 0/1) from it, which must be numeric: it holds a struct per row, where one number "
        "per row is read: take the field that holds it, e.g. pl.col('clicked').struct.field('v')",
    ),
]


@pytest.mark.parametrize(("call", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_column_read_as_numbers_is_refused_with_a_fix_that_keeps_its_order(
    call: Callable[[], Any], message: str
) -> None:
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        _eager(call)


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        # the fix told: the integer count keeps a ranked above b (1 ns later): rr 1
        (pl.Int64, 1.0),
        # the old fix: both read 1.7e18, a tie broken by doc id descending: b, then a
        (pl.Float64, 0.5),
    ],
)
def test_the_told_cast_of_nanosecond_timestamps_keeps_their_order(
    dtype: pl.DataType, expected: float
) -> None:
    run = _run(_ns(pl.Datetime("ns")).cast(dtype))
    for table in (run, run.lazy()):
        out = irm.evaluate(table, ["recip_rank"], qrels=QRELS)
        out = out.collect() if isinstance(out, pl.LazyFrame) else out
        assert out["recip_rank"].to_list() == [expected]


# --- pins: ties and exact scores on every path --------------------------------------

#: four documents judged a 1, b 0, c 2, d 0, scored in each dtype so that a and b lead;
#: "tie": a and b tie (broken by the doc id descending: b, a, c, d), else a leads by an
#: amount a Float64 cast would lose (2**53 + 1 beside 2**53, a Decimal's 20th digit)
SCORES: dict[str, tuple[pl.Series, str]] = {
    "Float32 tie": (pl.Series([1.0, 1.0, 0.5, 0.25], dtype=pl.Float32), "tie"),
    "-0.0 beside 0.0, a tie": (pl.Series([0.0, -0.0, -1.0, -2.0]), "tie"),
    "Int64 beyond 2**53": (pl.Series([2**53 + 1, 2**53, 2, 1]), "a first"),
    "Decimal(38, 20)": (
        pl.Series(["1.00000000000000000001", "1", "0.5", "0"]).cast(pl.Decimal(38, 20)),
        "a first",
    ),
}
#: by hand: tie, ranking b a c d (gains 0 1 2 0): rr 1/2, AP (1/2 + 2/3) / 2, nDCG@3
#: (1/log2(3) + 2/2) / (2 + 1/log2(3)); a first, ranking a b c d: rr 1, AP (1 + 2/3) / 2,
#: nDCG@3 (1 + 2/2) / (2 + 1/log2(3))
_IDEAL = 2 + 1 / math.log2(3)
EXPECTED = {
    "tie": {
        "recip_rank": 0.5,
        "map": (1 / 2 + 2 / 3) / 2,
        "ndcg@3": (1 / math.log2(3) + 1) / _IDEAL,
    },
    "a first": {"recip_rank": 1.0, "map": (1 + 2 / 3) / 2, "ndcg@3": 2 / _IDEAL},
}
FOUR = pl.DataFrame(
    {"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "relevance": [1, 0, 2, 0]}
)


def _four(score: pl.Series) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "score": score})


def _check(out: pl.DataFrame, case: str) -> None:
    for metric, value in EXPECTED[SCORES[case][1]].items():
        assert out[metric].item() == pytest.approx(value, rel=1e-15, abs=0), metric


@pytest.mark.parametrize("case", list(SCORES))
def test_ties_and_exact_scores_on_one_machine(case: str, tmp_path: Any) -> None:
    run = _four(SCORES[case][0])
    metrics = list(EXPECTED["tie"])
    out = irm.evaluate(run, metrics, qrels=FOUR)
    _check(out, case)
    lazy = irm.evaluate(run.lazy(), metrics, qrels=FOUR.lazy()).collect()
    stepped = irm.evaluate(run.lazy(), metrics, qrels=FOUR.lazy(), buckets=2, spill_dir=tmp_path)
    stepped = stepped.collect() if isinstance(stepped, pl.LazyFrame) else stepped
    systems = irm.evaluate(
        pl.concat([run.with_columns(s=pl.lit(n)) for n in ("x", "y")]),
        metrics,
        qrels=FOUR,
        systems="s",
    )
    for other in (lazy, stepped, systems.filter(pl.col("s") == "y").drop("s")):
        assert other.equals(out)


@pytest.mark.parametrize("case", list(SCORES))
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_ties_and_exact_scores_on_the_engines(
    engine: str, case: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = engine_io(engine, request)
    run = _four(SCORES[case][0])
    metrics = list(EXPECTED["tie"])
    out = back(evaluate(frame(run), metrics, qrels=frame(FOUR)))
    assert out.equals(irm.evaluate(run, metrics, qrels=FOUR))
    _check(out, case)


@pytest.mark.parametrize(
    ("ranks", "order"),
    [
        ([1, 2, 3], ["a", "b", "c"]),
        ([0, 1, 2], ["a", "b", "c"]),  # an order alone: 0 is first
        ([1, 3, 5], ["a", "b", "c"]),  # gaps: positions 1, 2, 3
        ([-1, 1, 2], ["a", "b", "c"]),
        ([1, 1, 2], ["b", "a", "c"]),  # a tie, broken by doc id descending
    ],
)
def test_fuse_reads_a_rank_column_as_an_order_as_documented(
    ranks: list[int], order: list[str]
) -> None:
    """By hand: RRF (k=60) of run x (ordered ``order``) and run y (c, b, a); each
    document's score is 1/(60 + its position in x) + 1/(60 + its position in y)."""
    x = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": ranks})
    y = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]})
    fused = irm.fuse({"x": x, "y": y}, "rrf")
    in_y = {"c": 1, "b": 2, "a": 3}
    want = {doc: 1 / (60 + order.index(doc) + 1) + 1 / (60 + in_y[doc]) for doc in "abc"}
    got = dict(zip(fused["doc_id"], fused["score"], strict=True))
    assert got == pytest.approx(want, rel=1e-15, abs=0)


# --- 2. a float key's -0.0 is 0.0 --------------------------------------------------

#: system -0.0 ranks c over a in q and a over c in r, system 0.0 the reverse: -0.0 and
#: 0.0 are one system (equal keys), which holds c (1.0) and a (0.5) in q, a (1.0) and c
#: (0.5) in r
SIGNED = pl.DataFrame(
    {
        "query_id": ["q", "q", "r", "r"],
        "doc_id": ["c", "a", "a", "c"],
        "score": [1.0, 0.5, 1.0, 0.5],
        "s": [-0.0, 0.0, 0.0, -0.0],
    }
)
TWO = pl.concat([FOUR, FOUR.with_columns(query_id=pl.lit("r"))])
#: by hand: q ranks c (2) then a (1), the ideal order: 1; r ranks a then c
_R = (1 + 2 / math.log2(3)) / _IDEAL
SIGNED_MEANS = {"num_q": 2, "ndcg@3": (1 + _R) / 2, "recip_rank": 1.0}


def _signs(values: pl.Series) -> list[float]:
    return [math.copysign(1.0, v) for v in values.to_list()]


@pytest.mark.parametrize("keyword", ["systems", "by"])
@pytest.mark.parametrize("reverse", [False, True], ids=["rows", "reversed rows"])
def test_a_float_key_reads_minus_zero_as_zero(keyword: str, reverse: bool, tmp_path: Any) -> None:
    run = SIGNED.reverse() if reverse else SIGNED
    metrics = ["ndcg@3", "recip_rank"]
    frame = irm.evaluate(run, metrics, qrels=TWO, **{keyword: "s"})
    stepped = irm.evaluate(
        run.lazy(), metrics, qrels=TWO.lazy(), buckets=2, spill_dir=tmp_path, **{keyword: "s"}
    )
    stepped = stepped.collect() if isinstance(stepped, pl.LazyFrame) else stepped
    for out in (frame, stepped):
        assert out.height == 1
        assert _signs(out["s"]) == [1.0]
        for column, value in SIGNED_MEANS.items():
            assert out[column].item() == pytest.approx(value, rel=1e-15, abs=0), column
    assert stepped.equals(frame)
    per_query = irm.evaluate(run, metrics, qrels=TWO, per_query=True, **{keyword: "s"})
    assert _signs(per_query["s"]) == [1.0, 1.0]


@pytest.mark.parametrize("reverse", [False, True], ids=["rows", "reversed rows"])
def test_an_online_float_key_reads_minus_zero_as_zero(reverse: bool) -> None:
    log = pl.DataFrame(
        {
            "session_id": ["s1", "s2", "s3"],
            "position": [1, 1, 1],
            "clicked": [1, 0, 1],
            "g": [-0.0, 0.0, -0.0],
        }
    )
    out = irm.evaluate_online(log.reverse() if reverse else log, ["ctr@1"], by="g")
    assert _signs(out["g"]) == [1.0]
    assert out["num_sessions"].to_list() == [3]
    assert out["ctr@1"].item() == pytest.approx(2 / 3, rel=1e-15, abs=0)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_a_float_system_key_reads_minus_zero_as_zero_on_the_engines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = engine_io(engine, request)
    metrics = ["ndcg@3", "recip_rank"]
    out = back(evaluate(frame(SIGNED), metrics, qrels=frame(TWO), systems="s"))
    assert _signs(out["s"]) == [1.0]
    assert out.equals(irm.evaluate(SIGNED, metrics, qrels=TWO, systems="s"))
