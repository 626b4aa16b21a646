"""Round 8 of the prediction fixes: the probability metrics (``logloss``, ``ne``,
``brier``, ``calibration``, ``ece``) are exact for tiny probabilities.

Their sums were kept in whole units of 2**-64 unscaled, so that a term below about 2**-30
lost its digits: ``calibration`` of probabilities near 1e-18 was 1.8% off, ``brier`` of
negatives predicted near 1e-12 was 0 (100% off), and ``logloss`` of certain predictions
(every term ``ln(1 - 2**-52)``) was 2.4e-4 off. Each of their statistics is now scaled by
a power of two of its own, chosen per group by the first pass of the rating metrics
(prediction/statistics.py): every value equals scikit-learn's (``log_loss``) or plain
float64 arithmetic to 1e-12 for every positive probability down to the subnormal ones,
with and without weights (weights near 2**-30 too), with the same bits on every path,
and with the bits of before for ordinary probabilities (the largest term of each sum in
``[2**-20, 2**30)``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn import metrics as skm

import polars_irmetrics as irm
from polars_irmetrics.engines._prediction import (
    means_job,
    prediction_part,
    prediction_summary,
    prepare_prediction,
)
from polars_irmetrics.ground.options import EvalOptions

REL = 1e-12
METRICS = ["logloss", "ne", "brier", "calibration", "ece", "ece@3"]

#: The scales of the probabilities: each row's is the scale times a number in [1, 2).
SCALES = {
    "1e-6": 1e-6,
    "1e-9": 1e-9,
    "1e-12": 1e-12,
    "1e-15": 1e-15,
    "1e-18": 1e-18,
    "1e-30": 1e-30,
    "1e-300": 1e-300,
    "smallest-normal": 2.0**-1022,
    "subnormal": 2.0**-1060,
}
#: negatives: every label 0; mixed: both labels, every probability tiny; sure:
#: positives predicted 1 - tiny, negatives tiny (every log-likelihood tiny).
KINDS = ("negatives", "mixed", "sure")
#: none; weights in [0.5, 2); weights in [2**-30, 2**-28.7) (each held to 2**-34 of
#: itself by the units of 2**-64 before).
WEIGHTS = ("none", "unit", "tiny")


def _table(kind: str, scale: float, weights: str, seed: int = 3, n: int = 40) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    tiny = scale * rng.uniform(1.0, 2.0, n)
    if kind == "negatives":
        y = np.zeros(n, dtype=np.int64)
    else:
        y = (rng.random(n) < 0.5).astype(np.int64)
        y[:2] = [0, 1]
    p = 1.0 - tiny if kind == "sure" else tiny
    p = np.where(y == 1, p, tiny)
    w = rng.uniform(0.5, 2.0, n)
    if weights == "tiny":  # the smallest weights there are
        w = (w + 0.5) * 2.0**-30
    return pl.DataFrame({"label": y, "prediction": p, "w": w})


def _ece(y: np.ndarray, p: np.ndarray, w: np.ndarray, bins: int) -> float:
    index = np.clip(np.floor(p * bins), 0, bins - 1)
    gaps = [abs(math.fsum(w[index == b] * (p[index == b] - y[index == b]))) for b in range(bins)]
    return math.fsum(gaps) / math.fsum(w)


def _reference(table: pl.DataFrame, weighted: bool) -> dict[str, float | None]:
    """scikit-learn's log loss, and plain float64 arithmetic (sums exact: math.fsum) of
    the documented formulas for the others. scikit-learn 1.9's brier_score_loss is not
    the peer for tiny probabilities: it averages the squared errors of both columns ``1 -
    p`` and ``p``, and ``1 - p`` rounds (1e-9 and 2e-9 give 2.500000040317475e-18, not
    2.5e-18)."""
    y = table["label"].to_numpy().astype(np.float64)
    p = table["prediction"].to_numpy()
    w = table["w"].to_numpy() if weighted else np.ones_like(p)
    sw = w if weighted else None
    logloss = skm.log_loss(y, p, sample_weight=sw, labels=[0, 1])
    rate = math.fsum(w * y) / math.fsum(w)
    entropy = -(rate * math.log(rate) + (1 - rate) * math.log(1 - rate)) if 0 < rate < 1 else 0
    clicks = math.fsum(w * y)
    return {
        "logloss": logloss,
        "ne": logloss / entropy if entropy else None,
        "brier": math.fsum(w * (p - y) ** 2) / math.fsum(w),
        "calibration": math.fsum(w * p) / clicks if clicks > 0 else None,
        "ece": _ece(y, p, w, 10),
        "ece@3": _ece(y, p, w, 3),
    }


def _close(ours: float | None, theirs: float | None, what: str) -> None:
    if theirs is None:
        assert ours is None, what
        return
    assert ours is not None, what
    assert math.isclose(ours, theirs, rel_tol=REL, abs_tol=0.0), (what, ours, theirs)


CASES = [
    (kind, name, weights)
    for kind in KINDS
    for name in SCALES
    for weights in WEIGHTS
    if not (weights == "tiny" and name in ("smallest-normal", "subnormal"))
]


@pytest.mark.parametrize(("kind", "scale", "weights"), CASES)
def test_tiny_probabilities_agree_with_float64(kind: str, scale: str, weights: str) -> None:
    """Each probability metric against scikit-learn or float64 arithmetic to 1e-12, for
    probabilities from 1e-6 down to the subnormal ones (tiny weights with probabilities
    down to 1e-300: their products stay normal floats)."""
    table = _table(kind, SCALES[scale], weights)
    weighted = weights != "none"
    got = irm.evaluate(table, METRICS, sample_weight="w" if weighted else None).row(0, named=True)
    want = _reference(table, weighted)
    for metric in METRICS:
        _close(got[metric], want[metric], f"{metric} {kind} {scale} {weights}")


#: Before this round (units of 2**-64 unscaled), measured: the relative error.
BEFORE = [
    ("calibration", "mixed", 1e-18, 1.8e-2),
    ("calibration", "mixed", 1e-12, 1.5e-8),
    ("brier", "negatives", 1e-12, 1.0),
    ("logloss", "sure", 1e-30, 2.4e-4),
    ("ece", "negatives", 1e-30, 1.0),
]


@pytest.mark.parametrize(("metric", "kind", "scale", "before"), BEFORE)
def test_the_measured_errors_are_gone(metric: str, kind: str, scale: float, before: float) -> None:
    """The errors measured before the fix (``before``, relative), each now below
    1e-12."""
    table = _table(kind, scale, "none")
    got = irm.evaluate(table, [metric])[metric].item()
    want = _reference(table, weighted=False)[metric]
    assert want is not None
    assert abs(got - want) <= REL * abs(want), (got, want, f"{before:g} off before")


def _engine_parts(table: pl.DataFrame, metrics: list[str], options: EvalOptions) -> pl.DataFrame:
    """The Spark and Dask engines' steps without either (engines/_prediction.py): the
    first pass (each group's scale) over three parts, merged, read by every part of the
    last pass, whose statistics are merged into the means."""
    parts = [table.filter(pl.col("query_id") % 3 == k).to_arrow() for k in range(3)]
    job = prepare_prediction(table.to_arrow().schema, None, metrics, options)
    while (first := means_job(job)) is not None:
        pieces = [prediction_part(first, part, None) for part in parts]
        merged = prediction_summary(
            first, pl.concat([pl.from_arrow(t) for t in pieces]).to_arrow()
        )
        job = job.with_means(pl.DataFrame(pl.from_arrow(merged)).cast(first.result_schema))
    pieces = [prediction_part(job, part, None) for part in parts]
    frames = [pl.DataFrame(pl.from_arrow(t)) for t in pieces]
    return pl.DataFrame(pl.from_arrow(prediction_summary(job, pl.concat(frames).to_arrow())))


def _every_path(
    table: pl.DataFrame, metrics: list[str], weight: str | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The values over the whole table (one group) by every path but Spark and Dask
    themselves: evaluate on a DataFrame and a LazyFrame, by a segment, per query (one
    query), out of core, the expression functions in a select and a group_by, and the
    engines' parts."""
    table = table.with_columns(segment=pl.lit("s"), query_id=pl.lit(0))
    kw: dict[str, Any] = {"sample_weight": weight}
    yield "DataFrame", irm.evaluate(table, metrics, **kw).row(0, named=True)
    lazy = irm.evaluate(table.lazy(), metrics, **kw)
    assert isinstance(lazy, pl.LazyFrame)
    yield "LazyFrame", lazy.collect().row(0, named=True)
    yield "by", irm.evaluate(table, metrics, by="segment", **kw).row(0, named=True)
    yield "per_query", irm.evaluate(table, metrics, per_query=True, **kw).row(0, named=True)
    yield "buckets", irm.evaluate(table, metrics, buckets=2, **kw).row(0, named=True)
    exprs = {
        "logloss": irm.logloss(sample_weight=weight),
        "ne": irm.ne(sample_weight=weight),
        "brier": irm.brier(sample_weight=weight),
        "calibration": irm.calibration(sample_weight=weight),
        "ece": irm.ece(sample_weight=weight),
        "ece@3": irm.ece(bins=3, sample_weight=weight),
    }
    yield "select", table.select(e.alias(m) for m, e in exprs.items()).row(0, named=True)
    grouped = table.group_by("segment").agg(e.alias(m) for m, e in exprs.items())
    yield "group_by", grouped.row(0, named=True)
    split = table.with_columns(query_id=pl.int_range(pl.len()) % 5)
    yield "parts", _engine_parts(split, metrics, EvalOptions.build(**kw)).row(0, named=True)


#: kind x scale in full, weighted or not in a covering design: (i + j) odd over the
#: 3 x 3 grid, so every kind and every scale meets both an unweighted and a weighted
#: table (the pairs that matter: kind x scale, kind x weights, scale x weights).
PATH_SCALES = ("1e-9", "1e-18", "subnormal")
PATH_CASES = [
    (kind, scale, (i + j) % 2 == 1)
    for i, kind in enumerate(KINDS)
    for j, scale in enumerate(PATH_SCALES)
]


@pytest.mark.parametrize(
    ("kind", "scale", "weighted"),
    PATH_CASES,
    ids=[f"{'weighted' if w else 'unweighted'}-{s}-{k}" for k, s, w in PATH_CASES],
)
def test_every_path_gives_the_same_bits(kind: str, scale: str, weighted: bool) -> None:
    """Tiny probabilities: the same bits eagerly and lazily, by group, per query, out of
    core, in the expressions and from the engines' parts (each reading the whole
    table's scale), in any order of the rows; and float64's values to 1e-12."""
    table = _table(kind, SCALES[scale], "unit")
    weight = "w" if weighted else None
    want = _reference(table, weighted)
    values: dict[str, dict[str, Any]] = {}
    for order, rows in (
        ("", table),
        (" shuffled", table.sample(fraction=1.0, shuffle=True, seed=5)),
    ):
        for path, row in _every_path(rows, METRICS, weight):
            values[path + order] = {m: row[m] for m in METRICS}
    first = values["DataFrame"]
    for path, got in values.items():
        assert got == first, path  # to the last bit (nulls too)
    for metric in METRICS:
        _close(first[metric], want[metric], metric)


def test_lazy_and_eager_bits_with_groups() -> None:
    """Groups of every scale in one table (by=, per_query=True): a LazyFrame's values
    are a DataFrame's to the last bit, each group's scale its own (float64's values to
    1e-12)."""
    tables = []
    for g, scale in enumerate(SCALES.values()):
        part = _table(KINDS[g % 3], scale, "unit", seed=g, n=12)
        query = pl.int_range(pl.len()) % 2 + 2 * g
        tables.append(part.with_columns(group=pl.lit(g), query_id=query))
    table = pl.concat(tables)
    for kw in ({"by": "group"}, {"by": "group", "sample_weight": "w"}, {"per_query": True}):
        eager = irm.evaluate(table, METRICS, **kw)
        lazy = irm.evaluate(table.lazy(), METRICS, **kw)
        assert isinstance(lazy, pl.LazyFrame)
        assert lazy.collect().to_dict(as_series=False) == eager.to_dict(as_series=False)
    got = irm.evaluate(table, METRICS, by="group")
    for g, part in enumerate(tables):
        want = _reference(part, weighted=False)
        row = got.filter(pl.col("group") == g).row(0, named=True)
        for metric in METRICS:
            _close(row[metric], want[metric], f"{metric} group {g}")


def _fixed(terms: np.ndarray) -> float:
    """The sum of float64 ``terms`` in whole units of 2**-64 rounded down (the sums
    before this round), as a float: exact integer arithmetic."""
    return float(sum(math.floor(float(t) * 2.0**64) for t in terms)) / 2.0**64


@pytest.mark.parametrize("low", [1e-3, 0.02, 0.3])
def test_ordinary_probabilities_keep_their_bits(low: float) -> None:
    """Probabilities in [1e-3, 1]: every sum's largest term is in [2**-20, 2**30), so
    its units are those of before, unscaled. Brier's squares of 1e-3 (below 2**-64 to
    the last of their 53 bits) are rounded down to units of 2**-64 as before: the values
    are those of that arithmetic, bit for bit (scaled sums would differ: the test can
    fail)."""
    rng = np.random.default_rng(int(low * 1000))
    n = 50
    p = rng.uniform(low, 2 * low, n)
    y = np.zeros(n)
    y[0] = 1.0
    w = rng.uniform(0.5, 2.0, n)
    table = pl.DataFrame({"label": y.astype(np.int64), "prediction": p, "w": w})
    got = irm.evaluate(table, ["brier", "calibration", "ece@2"], sample_weight="w")
    weight = _fixed(w)
    assert got["brier"].item() == _fixed(w * (p - y) ** 2) / weight
    assert got["calibration"].item() == _fixed(w * p) / _fixed(w * y)
    gaps = abs(_fixed(w * (p - y)))  # one bin: p < 0.5
    assert got["ece@2"].item() == gaps / weight


def test_brier_of_tiny_probabilities_where_scikit_learn_rounds() -> None:
    """scikit-learn 1.9's brier_score_loss squares ``1 - p`` beside ``p`` and averages
    both columns; ``1 - 1e-9`` rounds, so it gives 2.500000040317475e-18 for negatives
    predicted 1e-9 and 2e-9. The Brier score is ``((1e-9)**2 + (2e-9)**2) / 2 =
    2.5e-18``, which irm gives (the documented difference, docs/guides/prediction.md)."""
    frame = pl.DataFrame({"label": [0, 0], "prediction": [1e-9, 2e-9]})
    theirs = skm.brier_score_loss(frame["label"].to_numpy(), frame["prediction"].to_numpy())
    assert theirs == 2.500000040317475e-18
    ours = irm.evaluate(frame, ["brier"])["brier"].item()
    assert ours == (1e-9**2 + 2e-9**2) / 2 == 2.5e-18
