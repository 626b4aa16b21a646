"""Round 16 numeric probe: scores of any scale, exact or refused.

Fusion's sums of raw scores counted units of 2**-64: scores near 1e-10 kept about 31
bits (``sum`` 6.6e-10 off ranx's), near 1e-20 none (every fused score 0.0, the run
ordered by document id), and ``zmuv`` on scores near 1e-8 was 1 % off (its variance's
terms near 1e-16 are a few units each). Scores of 1e160 made ``zmuv``'s variance
infinite (every normalised score 0.0, as ranx's), and ``sum``'s normalisation of
scores near 1e308 overflowed. The sums now read each group at a power-of-two scale
(exact), and a fused score beyond float64's range is refused by name.
"""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

RNG = np.random.default_rng(16)
A_BASE = RNG.random(6)
B_BASE = RNG.random(6)
DOCS = [f"d{i}" for i in range(6)]


def _run(values: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q1"] * 6, "doc_id": DOCS, "score": values.tolist()})


def _fused(out: pl.DataFrame) -> dict[str, float]:
    return dict(zip(out["doc_id"].to_list(), out["score"].to_list(), strict=True))


def _zmuv(x: np.ndarray) -> np.ndarray:
    # ranx's zmuv: (s - mean) / max(std, 1e-9), population std; computed here on the
    # scores brought to [0, 1) by a power of two (exact), so numpy's squares neither
    # underflow nor overflow, and the floor scaled alike
    k = 2.0 ** -math.floor(math.log2(np.abs(x).max()))
    y = x * k
    return (y - y.mean()) / max(float(y.std()), 1e-9 * k)


def _sum_norm(x: np.ndarray) -> np.ndarray:
    # ranx's sum: (s - min) / max(sum - n * min, 1e-9)
    k = 2.0 ** -math.floor(math.log2(np.abs(x).max()))
    y = x * k
    return (y - y.min()) / max(float(y.sum() - len(y) * y.min()), 1e-9 * k)


def _expected(method: str, norm: str | None, scale: float) -> dict[str, float]:
    a, b = A_BASE * scale, B_BASE * scale
    if norm == "zmuv":
        a, b = _zmuv(a), _zmuv(b)
    elif norm == "sum":
        a, b = _sum_norm(a), _sum_norm(b)
    combined = {"sum": a + b, "mnz": 2 * (a + b), "anz": (a + b) / 2, "wsum": 0.3 * a + 0.7 * b}
    return dict(zip(DOCS, combined[method].tolist(), strict=True))


CASES = [
    # (method, norm, scale): before the fix, the worst relative error against the
    # formula (in float64 on numpy) was, per case:
    ("sum", None, 1e-10),  # 6.6e-10
    ("wsum", None, 1e-10),  # 1.4e-9
    ("sum", None, 1e-15),  # 2.4e-4
    ("mnz", None, 1e-20),  # 1.0: every fused score 0.0
    ("anz", None, 1e-300),  # 1.0
    ("sum", "zmuv", 1e-8),  # 1.1e-2
    ("sum", "zmuv", 1e-6),  # 5.6e-7
    ("sum", "zmuv", 1e160),  # 1.0: every normalised score 0.0 (the variance infinite)
    ("sum", "sum", 1e-8),  # 8.3e-12 (absolute)
    ("sum", "sum", 1e308),  # a normalised score infinite, the others 0.0
]


@pytest.mark.parametrize(("method", "norm", "scale"), CASES)
@pytest.mark.parametrize("lazy", [False, True])
def test_fused_scores_of_any_scale_equal_the_formula(
    method: str, norm: str | None, scale: float, lazy: bool
) -> None:
    runs = {"a": _run(A_BASE * scale), "b": _run(B_BASE * scale)}
    weights = {"weights": [0.3, 0.7]} if method == "wsum" else {}
    if lazy:
        got = irm.fuse({k: v.lazy() for k, v in runs.items()}, method, norm=norm, **weights)
        assert isinstance(got, pl.LazyFrame)
        out = got.collect()
    else:
        out = irm.fuse(runs, method, norm=norm, **weights)
        assert isinstance(out, pl.DataFrame)
    fused, expected = _fused(out), _expected(method, norm, scale)
    assert fused.keys() == expected.keys()
    for doc, value in expected.items():
        assert fused[doc] == pytest.approx(value, rel=1e-12, abs=0.0), doc
    # and the run is ranked by those scores, the highest first
    assert out["doc_id"].to_list() == sorted(expected, key=lambda doc: -expected[doc])


def test_a_fused_score_beyond_float64_is_refused() -> None:
    # sum: d0 = 1e308 + 1.7e308 and d1 = 1.5e308 + 1e308 are both beyond 1.8e308: they
    # came out inf and tied (d1 ranked above d0 by id, though 2.7e308 > 2.5e308)
    a = pl.DataFrame(
        {"query_id": ["q1"] * 3, "doc_id": ["d0", "d1", "d2"], "score": [1e308, 1.5e308, 1.7e308]}
    )
    b = a.with_columns(pl.Series("score", [1.7e308, 1e308, 0.5]))
    message = (
        "the fused score of query 'q1', document 'd0' is inf in 'sum': the runs' scores are "
        "finite, but their combination is beyond float64's range (about 1.8e308), so such "
        "documents would tie; divide the scores by a large number first, e.g. "
        "pl.col('score') / 1e300, or pass norm='max'"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse({"a": a, "b": b}, "sum")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse({"a": a.lazy(), "b": b.lazy()}, "sum", buckets=2).collect()
    # the fix the message gives: 1e8 + 1.7e8 = 2.7e8 above 1.5e8 + 1e8 = 2.5e8
    scaled = {k: v.with_columns(pl.col("score") / 1e300) for k, v in {"a": a, "b": b}.items()}
    assert irm.fuse(scaled, "sum")["doc_id"].to_list() == ["d0", "d1", "d2"]
    # wsum stays within range: 0.3 * 1e308 + 0.7 * 1.7e308 = 1.49e308
    out = irm.fuse({"a": a, "b": b}, "wsum", weights=[0.3, 0.7])
    assert out["score"][0] == pytest.approx(1.49e308, rel=1e-12)


def test_a_duration_dwell_is_refused_with_a_fix_in_seconds() -> None:
    # before: the hint was pl.col('dwell').cast(pl.Float64), which reads a Duration in
    # its unit: 12.5 s in ns became 12.5e9 "seconds", every click satisfied
    log = pl.DataFrame(
        {
            "session_id": [1, 1, 2],
            "position": [1, 2, 1],
            "clicked": [1, 1, 1],
            "dwell": [12.5, 3.0, 30.0],
        }
    )
    metric = "sat_click_rate(dwell_threshold=10)"
    for unit in ("ns", "us", "ms"):
        timed = log.with_columns(
            (pl.col("dwell") * 1e9).cast(pl.Duration("ns")).cast(pl.Duration(unit))
        )
        message = (
            f"column 'dwell' of the log has dtype Duration(time_unit='{unit}'); a dwell must "
            "be a number of seconds: convert it, e.g. "
            "pl.col('dwell').dt.total_seconds(fractional=True)"
        )
        with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
            irm.evaluate_online(timed, [metric])
        fixed = timed.with_columns(pl.col("dwell").dt.total_seconds(fractional=True))
        # satisfied clicks: 12.5 and 30.0 of the 3 clicks are above 10 s: 2 / 3
        assert irm.evaluate_online(fixed, [metric])[metric].item() == 2 / 3
    # a text dwell keeps the cast
    text = log.with_columns(pl.col("dwell").cast(pl.String))
    message = (
        "column 'dwell' of the log has dtype String; a dwell must be a number of seconds: "
        "cast it, e.g. pl.col('dwell').cast(pl.Float64)"
    )
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate_online(text, [metric])


# the run orders b a c e d, the reference a b c d e
_REFERENCE = pl.DataFrame(
    {"query_id": ["q"] * 5, "doc_id": list("abcde"), "score": [5.0, 4.0, 3.0, 2.0, 1.0]}
)


@pytest.mark.parametrize(
    ("dtype", "base"),
    [
        (pl.Int64, 2**62),
        (pl.UInt64, 2**62),
        (pl.UInt64, 2**64 - 6),
        (pl.Int128, 2**100),
        (pl.Decimal(38, 0), 10**30),
    ],
)
def test_agreement_orders_wide_integer_scores_exactly(dtype: pl.DataType, base: int) -> None:
    # scores base + 4, base + 5, base + 3, base + 1, base + 2: as Float64 they were one
    # value, the query one tie group ordered by id (e d c b a): kendall_tau null,
    # tau_ap -1.0, jaccard@2 0.0
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 5,
            "doc_id": list("abcde"),
            "score": [base + i for i in (4, 5, 3, 1, 2)],
        },
        schema_overrides={"score": dtype},
    )
    metrics = ["kendall_tau", "tau_ap", "jaccard@2", "rbo(ties='w')"]
    out = irm.evaluate(run, metrics, reference=_REFERENCE, per_query=True)
    # kendall_tau: 2 discordant pairs of 10 ((a, b), (d, e)): (8 - 2) / 10 = 0.6
    assert out["kendall_tau"].item() == pytest.approx(0.6, abs=1e-12)
    # tau_ap over b a c e d: a 0/1, c 2/2, e 3/3, d 3/4: 2/4 * 2.75 - 1 = 0.375
    assert out["tau_ap"].item() == pytest.approx(0.375, abs=1e-12)
    assert out["jaccard@2"].item() == 1.0  # {b, a} and {a, b}
    # the same as the run given by its ranks, which has no scores to round
    ranked = run.drop("score").with_columns(pl.Series("rank", [2, 1, 3, 5, 4]))
    want = irm.evaluate(ranked, metrics, reference=_REFERENCE, per_query=True)
    assert out.rows() == want.rows()


# scores base + 4, base + 3, base + 2, base + 1 for documents 1..4: the order 1 2 3 4,
# which as Float64 became one tie, broken by id descending (4 3 2 1)
WIDE_SCORES = [
    (pl.Int64, 2**62),
    (pl.UInt64, 2**62),
    (pl.Int128, 2**100),
    (pl.Decimal(38, 0), 10**30),
]


def _wide_run(
    dtype: pl.DataType, base: int, query: str = "query_id", doc: str = "doc_id"
) -> pl.DataFrame:
    scores = pl.Series("score", [base + 4, base + 3, base + 2, base + 1], dtype=dtype)
    return pl.DataFrame({query: [1] * 4, doc: [1, 2, 3, 4], "score": scores})


@pytest.mark.parametrize(("dtype", "base"), WIDE_SCORES)
def test_beyond_accuracy_orders_wide_integer_scores_exactly(dtype: pl.DataType, base: int) -> None:
    history = pl.DataFrame({"user_id": [9, 9, 9, 8, 8, 7, 6], "item_id": [1, 1, 1, 2, 2, 3, 4]})
    recs = _wide_run(dtype, base, "user_id", "item_id")
    metrics = ["novelty@2", "arp@2", "aplt@2"]
    out = irm.beyond_accuracy(recs, metrics, interactions=history)
    # the top 2 are items 1 (3 of 7 interactions) and 2 (2 of 7); before: 4 and 3 (1 each)
    # novelty: (-log2(3/7) - log2(2/7)) / 2 = 1.5149; arp: (3 + 2) / 2 = 2.5; aplt: item
    # 2 alone is in the long tail (the head: the most popular items up to 20 %... item 1)
    assert out["novelty@2"].item() == pytest.approx(
        (-math.log2(3 / 7) - math.log2(2 / 7)) / 2, abs=1e-12
    )
    assert out["arp@2"].item() == 2.5
    ranked = recs.drop("score").with_columns(pl.Series("rank", [1, 2, 3, 4]))
    assert out.rows() == irm.beyond_accuracy(ranked, metrics, interactions=history).rows()


@pytest.mark.parametrize(("dtype", "base"), WIDE_SCORES)
def test_serendipity_and_exposure_order_wide_integer_scores_exactly(
    dtype: pl.DataType, base: int
) -> None:
    run = _wide_run(dtype, base)
    ranked = run.drop("score").with_columns(pl.Series("rank", [1, 2, 3, 4]))
    history = pl.DataFrame({"query_id": [9, 9, 9, 8, 8, 7, 6], "doc_id": [1, 1, 1, 2, 2, 3, 4]})
    qrels = pl.DataFrame({"query_id": [1, 1], "doc_id": [3, 4], "relevance": [1, 1]})
    metric = "serendipity(kind='kotkov')@2"
    out = irm.evaluate(run, [metric], qrels=qrels, interactions=history)
    # the top 2 (items 1 and 2) are not relevant: 0.0; before, items 4 and 3 (popularity
    # rank 3 of n = 4) at ranks 1 and 2: ((3 - 1) / 4 + (3 - 2) / 4) / 2 = 0.375
    assert out[metric].item() == 0.0
    groups = pl.DataFrame({"doc_id": [1, 2, 3, 4], "group": ["x", "x", "y", "y"]})
    judged = pl.DataFrame({"query_id": [1] * 4, "doc_id": [1, 2, 3, 4], "relevance": [1, 1, 0, 0]})
    exposure = ["awrf", "ee_loss", "ee_disparity"]
    got = irm.evaluate(run, exposure, qrels=judged, groups=groups)
    want = irm.evaluate(ranked, exposure, qrels=judged, groups=groups)
    # before: ee_loss 0.87890625 where the ranking 1 2 3 4 gives 0.0
    assert got.rows() == want.rows()
    assert got["ee_loss"].item() == 0.0


@pytest.mark.parametrize(("method", "param"), [("wsum", "weights"), ("gmnz", "gamma")])
def test_optimize_fusion_grid_reads_small_scores_as_fuse_does(method: str, param: str) -> None:
    # raw scores near 1e-25 (norm=None): optimize_fusion's grid summed them in units of
    # 2**-64, every fused score 0.0, so every grid point ranked by id and scored alike
    # (ndcg@5 0.577 on this data), where fuse and evaluate give 0.69 to 0.75
    rng = np.random.default_rng(4)
    pairs = [(f"q{q}", f"d{d}") for q in range(6) for d in range(8)]
    ids = {"query_id": [q for q, _ in pairs], "doc_id": [d for _, d in pairs]}
    qrels = pl.DataFrame({**ids, "relevance": rng.integers(0, 3, len(pairs))})
    runs = {
        "a": pl.DataFrame({**ids, "score": rng.random(len(pairs)) * 1e-25}),
        "b": pl.DataFrame({**ids, "score": rng.random(len(pairs)) * 1e-25}),
    }
    _, grid = irm.optimize_fusion(
        runs, "ndcg@5", qrels=qrels, method=method, norm=None, step=0.25, return_grid=True
    )
    values = []
    for row in grid.iter_rows(named=True):
        value = list(row[param]) if param == "weights" else row[param]
        fused = irm.fuse(runs, method, norm=None, **{param: value})
        want = irm.evaluate(fused, ["ndcg@5"], qrels=qrels)["ndcg@5"].item()
        assert row["ndcg@5"] == pytest.approx(want, abs=1e-12), row
        values.append(want)
    # the scores are read: wsum's points differ (gmnz's gamma changes no order where
    # both runs list every document), and none is the ids' order (0.577...)
    assert len(set(values)) > 1 or method == "gmnz"
    assert all(abs(v - 0.5770771961191933) > 1e-3 for v in values)


@pytest.mark.parametrize(
    "dtype", [pl.Int64, pl.UInt64, pl.Int128, pl.Decimal(38, 0)], ids=lambda d: str(d)
)
def test_rating_metrics_refuse_integers_float64_cannot_hold(dtype: pl.DataType) -> None:
    # labels 2**62 + (10, 20, 35, 41), predictions 2**62 + (12, 18, 30, 44): errors
    # -2, 2, 5, -3 (rmse sqrt(42 / 4) = 3.24); read as Float64 every value was 2**62:
    # rmse 0.0 and r2 null
    base = 2**62
    frame = pl.DataFrame(
        {
            "y": pl.Series([base + 10, base + 20, base + 35, base + 41], dtype=dtype),
            "p": pl.Series([base + 12, base + 18, base + 30, base + 44], dtype=dtype),
        }
    )
    message = (
        "column 'y' has 4 value(s) of magnitude 2**53 or more (e.g. 4611686018427387914); "
        "mae, rmse read(s) it as a Float64 number, which holds such integers to a few "
        "units only (2**62 + 10 and 2**62 + 12 are one value, their error 0): subtract one "
        "offset from the labels and the predictions first, e.g. pl.col('y') - 2**62 and "
        "pl.col('p') - 2**62"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(frame, ["rmse", "mae"], label="y", prediction="p")
    # the fix the message gives: rmse sqrt((4 + 4 + 25 + 9) / 4), mae (2 + 2 + 5 + 3) / 4
    shifted = frame.select((pl.all().cast(pl.Int128) - base).cast(pl.Int64))
    out = irm.evaluate(shifted, ["rmse", "mae"], label="y", prediction="p")
    assert out["rmse"].item() == pytest.approx(math.sqrt(42 / 4), abs=1e-12)
    assert out["mae"].item() == 3.0
    # auc orders such integers exactly, as before: not refused
    clicks = frame.with_columns(pl.Series("y", [0, 1, 0, 1]))
    assert irm.evaluate(clicks, ["auc"], label="y", prediction="p")["auc"].item() == 0.75
