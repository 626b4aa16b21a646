"""Numeric scale of the prediction metrics: exact, or refused (or warned) by name.

Three holes, each against scikit-learn (or, where scikit-learn's own float arithmetic
overflows or loses the digits, against exact rational arithmetic on the same floats):

* integer scores beyond 2**53 (``Int64``, ``UInt64``) are ranked in their own dtype:
  scores that differ by 1 are not ties (``auc``, ``pr_auc``, ``gauc``, on every path);
* ``logloss`` (and ``ne``) clip a ``Float32`` (``Float16``) prediction at that dtype's
  machine epsilon, as scikit-learn's ``log_loss`` does (``np.finfo(dtype).eps``);
* ``r2``, ``explained_variance``, ``rmse``, ``mae`` and ``mse`` are the exact values to
  1e-12 (each residual ``y - p`` is rounded to a float first, as scikit-learn rounds
  it: not the exact value rounded once) where the residuals overflow float64 (labels
  of -1e308 predicted 1e308) and where the labels' spread is tiny beside their
  magnitude (1e6 + 1e-3 noise); a value float64 cannot hold (``mse`` of 1e200 errors)
  is infinite with an ``IrmWarning`` that names it, and an infinite label or prediction
  is refused for the rating metrics.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn import metrics as skm

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, IrmWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import parse_metric_list
from polars_irmetrics.prediction.parts import (
    merge_means,
    merge_scale,
    merge_statistics,
    part_means,
    part_scale,
    part_statistics,
)
from polars_irmetrics.prediction.statistics import needs_means, needs_scale

from .helpers import engine_io

REL = 1e-12


def _close(ours: float | None, theirs: float, rel: float = REL) -> None:
    assert ours is not None
    if math.isinf(theirs):
        assert ours == theirs, (ours, theirs)
        return
    assert math.isclose(ours, theirs, rel_tol=rel, abs_tol=rel if theirs == 0 else 0.0), (
        ours,
        theirs,
    )


@pytest.fixture(autouse=True)
def _no_stray_warnings() -> Iterator[None]:
    """Every warning is an error unless a test expects it (pytest.warns)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrmWarning)
        yield


def _merged_parts(
    table: pl.DataFrame, metrics: list[str], options: EvalOptions, parts: int = 2
) -> pl.DataFrame:
    """The engines' means: the table split by ``query_id`` into parts, each part's
    statistics (after the scale and the means of the rating metrics), merged."""
    requests = parse_metric_list(metrics)
    split = [table.filter(pl.col("query_id") % parts == k).lazy() for k in range(parts)]
    first = None
    if needs_scale(requests):  # the rating and the probability metrics
        maxima = pl.concat([part_scale(t, requests, options) for t in split])
        first = merge_scale(maxima, options).collect()
    if needs_means(requests):
        means = pl.concat([part_means(t, requests, options, first=first) for t in split])
        first = merge_means(means, options).collect()
    pieces = [part_statistics(t, requests, options, first=first) for t in split]
    return merge_statistics(pl.concat(pieces, how="diagonal"), requests, options).collect()


def _every_path(
    table: pl.DataFrame,
    metrics: list[str],
    exprs: dict[str, pl.Expr],
    **kw: Any,
) -> Iterator[tuple[str, dict[str, float | None]]]:
    """Each metric's mean over the whole table (one group) by every path: evaluate on a
    DataFrame, a LazyFrame, by a segment, out of core (buckets=), per query (one query),
    the engines' parts merged, and the expression functions in a select and a
    group_by."""
    table = table.with_columns(segment=pl.lit("s"), query_id=pl.lit(0))
    plain = irm.evaluate(table, metrics, **kw)
    yield "DataFrame", plain.row(0, named=True)
    lazy = irm.evaluate(table.lazy(), metrics, **kw)
    assert isinstance(lazy, pl.LazyFrame)
    yield "LazyFrame", lazy.collect().row(0, named=True)
    yield "by", irm.evaluate(table, metrics, by="segment", **kw).row(0, named=True)
    yield "buckets", irm.evaluate(table, metrics, buckets=2, **kw).row(0, named=True)
    per_query = irm.evaluate(table, metrics, per_query=True, **kw)
    yield "per_query", per_query.row(0, named=True)
    options = EvalOptions.build(**kw)
    split = table.with_columns(query_id=pl.int_range(pl.len()) % 3)
    yield "parts", _merged_parts(split, metrics, options).row(0, named=True)
    if exprs:
        yield "select", table.select(e.alias(m) for m, e in exprs.items()).row(0, named=True)
        grouped = table.group_by("segment").agg(e.alias(m) for m, e in exprs.items())
        yield "group_by", grouped.row(0, named=True)


# --------------------------------------------------------------------------- 1. integer scores
B53 = 2**53


def _int_scores(dtype: type[pl.DataType], seed: int, n: int = 60) -> pl.DataFrame:
    """Scores a few units apart beyond 2**53 (ties too), labels of both classes, weights,
    three queries."""
    rng = np.random.default_rng(seed)
    base = 2**63 + 2**62 if dtype == pl.UInt64 else 2**62
    offsets = rng.integers(0, 25, n)
    labels = rng.integers(0, 2, n)
    labels[0], labels[1] = 0, 1
    return pl.DataFrame(
        {
            "label": labels,
            "prediction": pl.Series([base + int(o) for o in offsets], dtype=dtype),
            "w": rng.choice([0.5, 1.0, 2.0, 3.0], n),
            "query_id": rng.integers(0, 3, n),
        }
    )


def test_the_issue_auc_of_int64_scores_beyond_2_53() -> None:
    """Scores 2**53 .. 2**53 + 3 are four distinct scores: auc 0.75 (scikit-learn), not
    0.625 (the Float64 cast made 2**53 and 2**53 + 1 one tie)."""
    scores = [B53, B53 + 1, B53 + 2, B53 + 3]
    labels = [0, 1, 0, 1]
    want = skm.roc_auc_score(labels, np.array(scores, dtype=np.int64))
    assert want == 0.75
    table = pl.DataFrame({"label": labels, "prediction": scores})
    assert table.schema["prediction"] == pl.Int64
    for path, row in _every_path(table, ["auc"], {"auc": irm.auc()}):
        assert row["auc"] == want, path


@pytest.mark.parametrize("dtype", [pl.Int64, pl.UInt64], ids=["Int64", "UInt64"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("seed", [0, 1])
def test_integer_scores_beyond_2_53_are_ranked_exactly(
    dtype: type[pl.DataType], weighted: bool, seed: int
) -> None:
    """auc, pr_auc and gauc of integer scores beyond 2**53 equal scikit-learn's on the
    integers (np.int64 / np.uint64: exact), by every path."""
    table = _int_scores(dtype, seed)
    y = table["label"].to_numpy()
    p = table["prediction"].to_numpy()
    assert p.dtype == (np.uint64 if dtype == pl.UInt64 else np.int64)
    w = table["w"].to_numpy() if weighted else None
    weight = "w" if weighted else None
    want = {
        "auc": skm.roc_auc_score(y, p, sample_weight=w),
        "pr_auc": skm.average_precision_score(y, p, sample_weight=w),
    }
    # the Float64 cast would merge them: the test reads the integers' order
    as_float = p.astype(np.float64)
    assert skm.roc_auc_score(y, as_float, sample_weight=w) != want["auc"]
    exprs = {"auc": irm.auc(sample_weight=weight), "pr_auc": irm.pr_auc(sample_weight=weight)}
    for path, row in _every_path(table.drop("query_id"), list(want), exprs, sample_weight=weight):
        for name, value in want.items():
            _close(row[name], value)
            if not weighted:
                assert row[name] == pytest.approx(value, rel=1e-15), (path, name)
    # gauc, and each query's AUC (per_query=True and the expression in a group_by)
    aucs, sizes = [], []
    for q in sorted(set(table["query_id"].to_list())):
        part = table.filter(pl.col("query_id") == q)
        yq, pq = part["label"].to_numpy(), part["prediction"].to_numpy()
        if len(set(yq.tolist())) == 2:
            wq = part["w"].to_numpy() if weighted else None
            aucs.append(skm.roc_auc_score(yq, pq, sample_weight=wq))
            sizes.append(float(part["w"].sum()) if weighted else float(part.height))
    gauc = sum(a * s for a, s in zip(aucs, sizes, strict=True)) / sum(sizes)
    got = irm.evaluate(table, ["gauc"], sample_weight=weight)
    _close(got["gauc"].item(), gauc)
    _close(table.select(irm.gauc(sample_weight=weight)).item(), gauc)
    per_query = irm.evaluate(table, ["auc"], per_query=True, sample_weight=weight)
    grouped = table.group_by("query_id").agg(irm.auc(sample_weight=weight)).sort("query_id")["auc"]
    defined = [a for a in per_query["auc"].to_list() if a is not None]
    assert len(defined) == len(aucs)
    for ours, theirs in zip(defined, aucs, strict=True):
        _close(ours, theirs)
    assert grouped.to_list() == per_query["auc"].to_list()


# --------------------------------------------------------------------------- 2. Float32 log loss
EPS32 = float(np.finfo(np.float32).eps)  # 2**-23
EPS64 = float(np.finfo(np.float64).eps)  # 2**-52


def _exact_logloss(
    y: list[int], p: list[float], eps: float, w: list[float] | None = None
) -> float:
    """scikit-learn's definition (p and 1 - p clipped to [eps, 1 - eps]) in float64."""
    weights = w if w is not None else [1.0] * len(y)
    terms = []
    for label, prob, weight in zip(y, p, weights, strict=True):
        right = prob if label == 1 else 1.0 - prob
        terms.append(-weight * math.log(min(max(right, eps), 1.0 - eps)))
    return math.fsum(terms) / math.fsum(weights)


#: Certain predictions, right (1 for a click, 0 for none) and wrong, and a few others.
LOG_LABELS = [1, 0, 1, 0, 1, 0, 1, 0]
LOG_PREDS = [0.0, 1.0, 1.0, 0.0, 0.25, 0.5, 0.875, 0.125]
LOG_WEIGHTS = [1.0, 2.0, 0.5, 3.0, 1.0, 1.0, 2.0, 0.5]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_logloss_of_float32_clips_at_float32_eps(weighted: bool) -> None:
    """A Float32 prediction of 0.0 or 1.0 costs -ln(2**-23) = 15.94 where it is wrong, as
    scikit-learn's log_loss clips float32 input (np.finfo(float32).eps), not 36.04
    (float64's eps): equal to scikit-learn's definition computed in float64 to 1e-12,
    and to scikit-learn itself (which adds in float32) to float32's precision."""
    table = pl.DataFrame(
        {"label": LOG_LABELS, "prediction": LOG_PREDS, "w": LOG_WEIGHTS},
        schema_overrides={"prediction": pl.Float32},
    )
    w = LOG_WEIGHTS if weighted else None
    weight = "w" if weighted else None
    want = _exact_logloss(LOG_LABELS, LOG_PREDS, EPS32, w)
    p32 = np.array(LOG_PREDS, dtype=np.float32)
    peer = skm.log_loss(LOG_LABELS, p32, sample_weight=w, labels=[0, 1])
    _close(want, peer, rel=1e-6)  # scikit-learn computes in float32
    # scikit-learn in float64 on the float32-clipped input: the same definition
    clipped = np.clip(p32, EPS32, 1 - EPS32).astype(np.float64)
    _close(skm.log_loss(LOG_LABELS, clipped, sample_weight=w, labels=[0, 1]), want)
    rate = np.average(LOG_LABELS, weights=w)
    entropy = -(rate * math.log(rate) + (1 - rate) * math.log(1 - rate))
    exprs = {"logloss": irm.logloss(sample_weight=weight), "ne": irm.ne(sample_weight=weight)}
    for path, row in _every_path(table, ["logloss", "ne"], exprs, sample_weight=weight):
        _close(row["logloss"], want)
        _close(row["ne"], want / entropy)
        assert path


def test_logloss_of_float64_still_clips_at_float64_eps() -> None:
    """Float64 (and integer) predictions keep float64's eps: scikit-learn's value."""
    for dtype in (pl.Float64, pl.Int64):
        labels, preds = [1, 0, 1, 0], [0, 1, 1, 0]
        table = pl.DataFrame(
            {"label": labels, "prediction": preds}, schema_overrides={"prediction": dtype}
        )
        want = skm.log_loss(labels, np.array(preds, dtype=np.float64), labels=[0, 1])
        _close(want, _exact_logloss(labels, [float(v) for v in preds], EPS64))
        for _, row in _every_path(table, ["logloss"], {"logloss": irm.logloss()}):
            _close(row["logloss"], want)


def test_logloss_of_float16_clips_at_float16_eps() -> None:
    """Float16 predictions clip at 2**-10, as scikit-learn's float16 log_loss."""
    table = pl.DataFrame(
        {"label": LOG_LABELS, "prediction": LOG_PREDS},
        schema_overrides={"prediction": pl.Float16},
    )
    eps16 = float(np.finfo(np.float16).eps)
    want = _exact_logloss(LOG_LABELS, LOG_PREDS, eps16)
    peer = skm.log_loss(LOG_LABELS, np.array(LOG_PREDS, dtype=np.float16), labels=[0, 1])
    _close(want, peer, rel=2e-3)  # scikit-learn computes in float16
    _close(irm.evaluate(table, ["logloss"])["logloss"].item(), want)
    _close(table.select(irm.logloss()).item(), want)


# --------------------------------------------------------------------------- 3. rating scale
RATING = ["rmse", "mae", "mse", "r2", "explained_variance"]


def _rating_exprs(weight: str | None) -> dict[str, pl.Expr]:
    fns: list[Callable[..., pl.Expr]] = [irm.rmse, irm.mae, irm.mse, irm.r2]
    fns.append(irm.explained_variance)
    return {f.__name__: f(sample_weight=weight) for f in fns}


def _to_float(value: Fraction) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _sqrt(value: Fraction) -> float:
    if value == 0:
        return 0.0
    half = (value.numerator.bit_length() - value.denominator.bit_length()) // 2
    root = math.sqrt(float(value / Fraction(2) ** (2 * half)))
    try:
        return math.ldexp(root, half)
    except OverflowError:
        return math.inf


def exact_rating(y: list[float], p: list[float], w: list[float] | None = None) -> dict[str, float]:
    """The rating metrics of these floats in exact rational arithmetic, rounded once."""
    ys, ps = [Fraction(v) for v in y], [Fraction(v) for v in p]
    ws = [Fraction(v) for v in w] if w is not None else [Fraction(1)] * len(y)
    total = sum(ws)
    res = [a - b for a, b in zip(ys, ps, strict=True)]
    sq = sum(wi * r * r for wi, r in zip(ws, res, strict=True))
    mean_y = sum(wi * v for wi, v in zip(ws, ys, strict=True)) / total
    mean_r = sum(wi * r for wi, r in zip(ws, res, strict=True)) / total
    spread = sum(wi * (v - mean_y) ** 2 for wi, v in zip(ws, ys, strict=True))
    spread_r = sum(wi * (r - mean_r) ** 2 for wi, r in zip(ws, res, strict=True))
    return {
        "mse": _to_float(sq / total),
        "rmse": _sqrt(sq / total),
        "mae": _to_float(sum(wi * abs(r) for wi, r in zip(ws, res, strict=True)) / total),
        "r2": _to_float(1 - sq / spread),
        "explained_variance": _to_float(1 - spread_r / spread),
    }


def _clustered(center: float, spread: float, seed: int, n: int = 40) -> tuple[list[float], ...]:
    """Labels ``center`` plus noise of relative size ``spread``, predictions near them,
    and weights."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=n)
    y = center * (1.0 + spread * noise)
    p = y + center * spread * rng.normal(scale=0.3, size=n)
    w = rng.uniform(0.1, 3.0, n)
    return y.tolist(), p.tolist(), w.tolist()


#: (name, labels, predictions, weights): every value but mse finite. scikit-learn gives
#: nan where its squares overflow (1e200 and beyond) and is off in the 10th digit at
#: 1e6 with noise of 1e-6; the earlier scale (one power of two from the largest label or
#: prediction) gave inf or nan beyond 1e308, and lost digits of the small spreads.
FINITE_CASES: list[tuple[str, list[float], list[float], list[float]]] = [
    (
        "opposite_extremes",  # residuals of 2e308 overflow float64
        [1e308, -1e308, 5e307, 0.0],
        [-1e308, 1e308, 0.0, 0.0],
        [1.0, 2.0, 0.5, 1.0],
    ),
    (
        "largest_floats",
        [1.7e308, -1.7e308, 1.0, 2.0, 3.0],
        [1.6e308, -1.65e308, 1e308, -1e308, 3.0],
        [1.0, 1.0, 2.0, 0.5, 1.0],
    ),
    ("around_1e200", *_clustered(1e200, 1e-9, 0)),
    ("around_1e6_tiny_spread", *_clustered(1e6, 1e-9, 1)),
    ("around_1e6_tinier_spread", *_clustered(1e6, 1e-12, 2)),
    ("around_1e-300_tiny_spread", *_clustered(1e-300, 1e-10, 3)),
    (
        "zero_weight_outlier",
        [1e300, 1.0, 2.0, 3.0, 4.0],
        [-1e300, 1.5, 2.0, 2.5, 5.0],
        [0.0, 1.0, 2.0, 1.0, 1.0],
    ),
]


#: Each case weighted and not (the outlier of weight 0 weighted only).
WEIGHTED_CASES = [
    pytest.param(*case, weighted, id=f"{case[0]}-{'weighted' if weighted else 'unweighted'}")
    for case in FINITE_CASES
    for weighted in (False, True)
    if weighted or case[0] != "zero_weight_outlier"
]


@pytest.mark.parametrize(("name", "y", "p", "w", "weighted"), WEIGHTED_CASES)
def test_rating_metrics_are_exact_where_float_sums_overflow_or_cancel(
    name: str, y: list[float], p: list[float], w: list[float], weighted: bool
) -> None:
    """r2, explained_variance, rmse and mae are the exact values (rational arithmetic on
    the same floats, rounded once) to 1e-12 by every path, where the residuals overflow
    float64 or the labels' spread is 1e-9 of their magnitude; mse too where it is
    finite, and infinite with an IrmWarning that names it where it is not."""
    assert name
    weights = w if weighted else None
    weight = "w" if weighted else None
    want = exact_rating(y, p, weights)
    assert all(math.isfinite(want[m]) for m in ("rmse", "mae", "r2", "explained_variance"))
    table = pl.DataFrame({"label": y, "prediction": p, "w": w})
    metrics = RATING if math.isfinite(want["mse"]) else [m for m in RATING if m != "mse"]
    exprs = {m: e for m, e in _rating_exprs(weight).items() if m in metrics}
    for path, row in _every_path(table, metrics, exprs, sample_weight=weight):
        for metric in metrics:
            assert row[metric] is not None, (path, metric)
            _close(row[metric], want[metric])
    if not math.isfinite(want["mse"]):
        with pytest.warns(IrmWarning, match="'mse'"):
            got = irm.evaluate(table, ["mse"], sample_weight=weight)
        assert got["mse"].item() == math.inf


def test_scikit_learn_agrees_where_it_is_finite() -> None:
    """Ordinary ratings, at three scales: scikit-learn's values to 1e-12."""
    rng = np.random.default_rng(5)
    y0 = rng.normal(size=30)
    p0 = y0 + rng.normal(scale=0.4, size=30)
    w = rng.uniform(0.5, 2.0, 30)
    peers = {
        "rmse": skm.root_mean_squared_error,
        "mae": skm.mean_absolute_error,
        "mse": skm.mean_squared_error,
        "r2": skm.r2_score,
        "explained_variance": skm.explained_variance_score,
    }
    for scale in (1.0, 1e-100, 1e100):
        y, p = y0 * scale, p0 * scale
        table = pl.DataFrame({"label": y, "prediction": p, "w": w})
        for weight in (None, "w"):
            got = irm.evaluate(table, RATING, sample_weight=weight).row(0, named=True)
            exprs = table.select(_rating_exprs(weight).values()).row(0, named=True)
            for metric, peer in peers.items():
                value = peer(y, p, sample_weight=w if weight else None)
                _close(got[metric], value)
                _close(exprs[metric], value)


def test_a_value_beyond_float64_is_infinite_with_a_warning() -> None:
    """mse of errors of 1e200 is 1e400 and r2 of errors 1e600 times the labels' spread
    is -1e1200: float64 holds neither. They are inf and -inf (as scikit-learn's, which
    overflows) with an IrmWarning that names the metric, the value and the fix; the
    values that are finite come out beside them."""
    table = pl.DataFrame({"label": [1e200, 2e200, 3e200], "prediction": [2e200, 1e200, 5e200]})
    with pytest.warns(IrmWarning, match=r"'mse' is inf") as caught:
        got = irm.evaluate(table, ["mse", "rmse", "r2"]).row(0, named=True)
    assert len(caught) == 1
    assert "rescale" in str(caught[0].message)
    want = exact_rating(table["label"].to_list(), table["prediction"].to_list())
    assert got["mse"] == math.inf
    _close(got["rmse"], want["rmse"])
    _close(got["r2"], want["r2"])
    far = pl.DataFrame({"label": [0.0, 1e-300, 2e-300], "prediction": [1e300, -1e300, 0.0]})
    with pytest.warns(IrmWarning, match=r"'r2' is -inf"):
        assert irm.evaluate(far, ["r2"])["r2"].item() == -math.inf
    with pytest.warns(IrmWarning, match=r"'r2' is -inf \(first in the group query_id=0\)"):
        per_query = irm.evaluate(far.with_columns(query_id=pl.lit(0)), ["r2"], per_query=True)
    assert per_query["r2"].item() == -math.inf


@pytest.mark.parametrize("column", ["label", "prediction"])
def test_an_infinite_rating_is_refused_for_the_rating_metrics(column: str) -> None:
    """An infinite label or prediction has no finite error: refused by name for the
    rating metrics (scikit-learn refuses it too; an infinite score is valid for auc)."""
    table = pl.DataFrame({"label": [1.0, 2.0, 3.0, 4.0], "prediction": [1.5, 2.0, 3.5, 4.0]})
    table = table.with_columns(
        pl.when(pl.int_range(pl.len()) == 2).then(math.inf).otherwise(pl.col(column)).alias(column)
    )
    with pytest.raises(InvalidValueError, match=rf"column '{column}' has 1 infinite value"):
        irm.evaluate(table, ["rmse", "r2"])
    with pytest.raises(InvalidValueError, match=r"r2, rmse read\(s\) it as a number"):
        irm.evaluate(table.lazy(), ["r2", "rmse"]).collect()


# --------------------------------------------------------------------------- engines
def _engine(name: str, request: pytest.FixtureRequest) -> tuple[Any, Any, Any]:
    """The engine's evaluate, a converter to its frames and one back (helpers.engine_io)."""
    return engine_io(name, request)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_engines_give_the_same_exact_values(
    engine: str, request: pytest.FixtureRequest
) -> None:
    """Spark and Dask (parts' statistics merged) give one machine's values to the last
    bit: Int64 scores beyond 2**53, a Float32 log loss, ratings of +-1e308."""
    evaluate, to_engine, back = _engine(engine, request)
    scores = _int_scores(pl.Int64, 0)
    floats = pl.DataFrame(
        {"label": LOG_LABELS, "prediction": LOG_PREDS, "query_id": [0, 1, 2, 3] * 2},
        schema_overrides={"prediction": pl.Float32},
    )
    _, y, p, w = FINITE_CASES[0]
    ratings = pl.DataFrame({"label": y, "prediction": p, "w": w, "query_id": [0, 1, 2, 3]})
    exact = exact_rating(y, p, w)
    y_int, p_int = scores["label"].to_numpy(), scores["prediction"].to_numpy()
    for table, metrics, kw, values in (
        (scores, ["auc", "pr_auc", "gauc"], {}, {"auc": skm.roc_auc_score(y_int, p_int)}),
        (scores, ["auc", "pr_auc"], {"sample_weight": "w"}, {}),
        (floats, ["logloss", "ne"], {}, {"logloss": _exact_logloss(LOG_LABELS, LOG_PREDS, EPS32)}),
        (ratings, ["rmse", "mae", "r2", "explained_variance"], {"sample_weight": "w"}, exact),
    ):
        want = irm.evaluate(table, metrics, **kw)
        got = back(evaluate(to_engine(table), metrics, partitions=3, **kw))
        assert got.select(want.columns).rows() == want.rows(), (engine, metrics)
        for metric, value in values.items():
            if metric in metrics:
                _close(got[metric].item(), value)
