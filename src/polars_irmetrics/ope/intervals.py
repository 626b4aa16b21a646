"""Intervals of the off-policy estimates (``ci=``): a percentile bootstrap over the log's
rows, or a normal interval where the estimator's variance has a closed form.

``ci_method="bootstrap"`` (default): a Poisson bootstrap (Hanley & MacGibbon 2006;
Chamandy et al. 2012), the resampling that scales: each unit (a log row; a round for
the slate estimators, whose rows are its slots) is drawn ``Poisson(1)`` times in each of
``n_bootstrap`` resamples, which approximates drawing ``n`` units with replacement
(obp's ``estimate_confidence_interval_by_bootstrap``). Units are put in up to
:data:`BUCKETS` buckets per ``by`` group (by the rank of a hash of their ids, so each
unit is its own bucket in a group of at most that many units; beyond, a bucket holds
units spread at random), a bucket is drawn as one unit, and each estimator is written
as sums over units (:func:`~polars_irmetrics.metrics.ope.components`), so one
``group_by`` gives each bucket's sums and a resample's estimate is a product of its
counts with them: one vectorised step (numpy, in blocks of buckets), not a loop over
resamples. The counts are a function of ``(seed, group, bucket, resample)`` (a
counter-based generator), so the same seed gives the same draws however the engine
splits the work. The self-normalised estimators are normalised within each resample (the
weights' sum is resampled with the rewards). The interval is the ``(1 - ci) / 2`` and
``(1 + ci) / 2`` percentiles of the resampled estimates (numpy's ``percentile``, linear),
reproducible for a given ``seed``. A resample that draws no unit at all (each of
``B`` buckets drawn 0 times: probability ``exp(-B)``, 1.8 % of the resamples of a log
of 4 rows) has no estimate (0 / 0), where obp's resamples always hold ``n`` rows: it is
skipped and the group's next draw taken in its place (:class:`_Drawn`), so every
interval reads ``n_bootstrap`` resamples of at least one unit. A resample that draws
units and still gives NaN (a self-normalised estimate of rows all of weight 0, or a NaN
of the estimator's own formula) gives a NaN interval, as obp's does, with an
:class:`~polars_irmetrics.errors.IrmWarning` that says so (:func:`warn_undefined`).

``ci_method="normal"``: ``mean +- z sd / sqrt(n)`` with ``sd`` the units' contributions'
standard deviation (``ddof=1``) and ``z`` the normal quantile of ``(1 + ci) / 2``: the
estimators that are means of their units' contributions. ``snips``, ``sndr`` and the
self-normalised slate estimators are ratios, with no such closed form: refused.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_irmetrics.errors import IrmWarning, MetricParameterError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL, is_text, warn_from_plan
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.ope.sums import exact_added, exact_columns, exact_mean, exact_total
from polars_irmetrics.stats.normal import two_sided_z

__all__ = [
    "BUCKET",
    "BUCKETS",
    "DRAWN",
    "HELD",
    "ONE",
    "Bootstrap",
    "Parts",
    "bootstrap_part",
    "interval_columns",
    "joined_intervals",
    "warn_undefined",
    "with_intervals",
]

#: The most buckets of units one ``by`` group is resampled in.
BUCKETS = 4096
#: Buckets drawn per numpy block (a block's counts are ``block x`` a chunk of resamples).
_BLOCK = 256
#: The most counts (buckets x resamples) drawn at once: a block's resamples go in chunks
#: of ``DRAWN // block`` columns, so the draws' arrays stay near 8 MiB each whatever
#: ``n_bootstrap`` (each column's sums are the same bits in any chunk).
DRAWN = 1 << 20
#: The most resampled sums (sums x groups x resamples) one step holds: the groups of a
#: batch are resampled this many at a time (at least one; a group's sums are the same
#: bits whatever the other groups of its step).
HELD = 1 << 24

#: Each metric's estimate as ``sum_k sum(num_k) / sum(den_k)`` (``den`` ``None``: the
#: number of units).
Parts = Sequence[tuple[str, Sequence[tuple[pl.Expr, pl.Expr | None]]]]

#: A bootstrap part's bucket column (its rows beside a part's sums: the rows where it is set).
BUCKET = f"{INTERNAL}bucket"
#: A bootstrap part's count of units per bucket.
ONE = f"{INTERNAL}one"
_KEY = f"{INTERNAL}key"


def interval_columns(label: str) -> list[str]:
    """The interval's columns of metric ``label``."""
    return [f"{label}_lower", f"{label}_upper"]


def with_intervals(
    result: pl.LazyFrame,
    units: pl.LazyFrame,
    keys: list[str],
    parts: Parts,
    by: list[str],
    options: EvalOptions,
    scales: Sequence[pl.Expr] | None = None,
) -> pl.LazyFrame:
    """``result`` (the means, one row per ``by`` group) with ``<label>_lower`` and
    ``<label>_upper`` after each metric's column.

    ``units`` holds the ``by`` keys, the units' ids ``keys`` and the columns ``parts``
    reads; ``scales``: the bootstrap's (:func:`bootstrap_part`).
    """
    ci = options.ci
    if ci is None:  # pragma: no cover - the caller asks only with ci=
        return result
    if options.ci_method == "normal":
        intervals = _normal(units, parts, by, ci)
    else:
        boot = bootstrap_part(units, keys, parts, by, options, scales)
        intervals = boot.intervals(boot.frame)
    return joined_intervals(result, intervals, [label for label, _ in parts], by)


def joined_intervals(
    result: pl.LazyFrame, intervals: pl.LazyFrame, labels: list[str], by: list[str]
) -> pl.LazyFrame:
    """``result`` with the ``intervals`` of its ``by`` groups, each metric's two columns
    after its own."""
    joined = (
        result.join(intervals, on=by, how="left", nulls_equal=True, maintain_order="left")
        if by
        else pl.concat([result, intervals], how="horizontal")
    )
    order: list[str] = []
    for column in result.collect_schema().names():
        order.append(column)
        if column in labels:
            order += interval_columns(column)
    return joined.select(order)


def _normal(units: pl.LazyFrame, parts: Parts, by: list[str], ci: float) -> pl.LazyFrame:
    z = two_sided_z(ci)
    aggs = []
    for label, terms in parts:
        if len(terms) != 1 or terms[0][1] is not None:
            raise MetricParameterError(
                f"metric {label!r} is a ratio (self-normalised) and has no closed-form "
                "variance: use ci_method='bootstrap'"
            )
        x = terms[0][0]
        half = z * x.std(ddof=1) / x.count().sqrt()
        lower, upper = interval_columns(label)
        aggs += [(exact_mean(x) - half).alias(lower), (exact_mean(x) + half).alias(upper)]
    return units.group_by(by).agg(aggs) if by else units.select(aggs)


def _stable(name: str, dtype: pl.DataType) -> pl.Expr:
    """Column ``name`` in the dtype its hash is taken in: integers as Int64, text as
    String, floats as Float64, so that a table read through Spark, Dask or Arrow (other
    widths, a categorical as text) hashes alike. An integer from 2**63 on (a UInt64 id,
    or one the plan widened to Int128) wraps to its low 64 bits, the same bits, where a
    strict cast raised polars' InvalidOperationError (no id of a UInt64 column is
    negative, so none meets another's wrapped value)."""
    column = pl.col(name)
    if dtype.is_integer():
        return column.cast(pl.Int64, wrap_numerical=True)
    if dtype.is_float():
        return column.cast(pl.Float64)
    if is_text(dtype):
        return column.cast(pl.String)
    return column


def _hashed(names: list[str], schema: pl.Schema, seed: int) -> pl.Expr:
    return pl.struct([_stable(n, schema[n]) for n in names]).hash(seed=seed)


@dataclass(frozen=True)
class Bootstrap:
    """The bootstrap of a plan's estimates as exact sums per bucket of units, which add
    up across parts (each part holding whole units): ``frame`` holds one part's sums,
    :meth:`intervals` the interval of each ``by`` group from the sums of every part."""

    frame: pl.LazyFrame
    plan: list[tuple[str, list[tuple[int, int]]]]
    names: list[str]
    by: list[str]
    options: EvalOptions
    #: Each column's terms summed times a scale of its own (:func:`bootstrap_part`'s
    #: ``scales``), its column beside the sums.
    scaled: bool = False

    def intervals(self, parts: pl.LazyFrame) -> pl.LazyFrame:
        """One row per ``by`` group (sorted by the keys): its ``<label>_lower`` and
        ``<label>_upper``, from the rows of :attr:`frame` over any split of the units."""
        merged = _merged_buckets(parts, self.names, self.by, scaled=self.scaled)
        return _resample(merged, self)


def _scale_of(name: str) -> str:
    """The column of the scale a bootstrap column's terms are read at."""
    return f"{name}#scale"


def bootstrap_part(
    units: pl.LazyFrame,
    keys: list[str],
    parts: Parts,
    by: list[str],
    options: EvalOptions,
    scales: Sequence[pl.Expr] | None = None,
) -> Bootstrap:
    """The bootstrap's sums of one part of ``units`` (the module doc): one row per ``by``
    group and bucket, :data:`BUCKET` the bucket (Int64: the UInt64 id's bits), the units
    counted in :data:`ONE` and each column of ``parts`` summed exactly.

    ``scales``: a power of two per column of ``parts`` (each ``num``, then its ``den``
    where there is one; expressions of ``units``), the scale of the point estimate's sum
    of the same terms (:meth:`~polars_irmetrics.ope.sums.Summary.sum_scale`): each
    column's terms are summed times it, and each bucket's sum divided by it before the
    resamples (exact: a power of two), so that weights all tiny or all huge keep their
    digits in the buckets as in the estimate (a scale of 1: the same bits as unscaled)."""
    schema = units.collect_schema()
    unit = _hashed(keys, schema, options.seed)
    count = pl.len().over(by) if by else pl.len()
    bucket = pl.when(count <= BUCKETS).then(unit).otherwise(unit % BUCKETS)
    columns: list[pl.Expr] = []
    plan: list[tuple[str, list[tuple[int, int]]]] = []  # label -> (num, den) column indexes
    for label, terms in parts:
        pairs = []
        for num, den in terms:
            columns.append(num.alias(f"{INTERNAL}c{len(columns)}"))
            num_i = len(columns) - 1
            if den is None:
                pairs.append((num_i, -1))
                continue
            columns.append(den.alias(f"{INTERNAL}c{len(columns)}"))
            pairs.append((num_i, len(columns) - 1))
        plan.append((label, pairs))
    names = [f"{INTERNAL}c{i}" for i in range(len(columns))]
    scaled = scales is not None
    if scales is not None:
        if len(scales) != len(names):  # pragma: no cover - the caller's plan
            raise ValueError(f"{len(scales)} scales for {len(names)} bootstrap columns")
        units = units.with_columns(
            s.alias(_scale_of(c)) for c, s in zip(names, scales, strict=True)
        )
        columns = [
            (column.cast(pl.Float64) * pl.col(_scale_of(c))).alias(c)
            for c, column in zip(names, columns, strict=True)
        ]
        columns += [pl.col(_scale_of(c)) for c in names]
    aggs = [e for c in names for e in exact_columns(c, pl.col(c))]
    if scaled:
        aggs += [pl.col(_scale_of(c)).max() for c in names]
    frame = (
        units.select(*by, bucket.reinterpret(signed=True).alias(BUCKET), *columns)
        .group_by([*by, BUCKET])
        .agg(pl.len().cast(pl.Int64).alias(ONE), *aggs)
    )
    return Bootstrap(frame, plan, names, by, options, scaled)


def _merged_buckets(
    parts: pl.LazyFrame, names: list[str], by: list[str], *, scaled: bool = False
) -> pl.LazyFrame:
    """Each ``by`` group's buckets (sorted) with their units' count and sums (floats of
    the exact sums; ``scaled``: each divided by its column's scale), as lists: one row
    per group. A group of at most :data:`BUCKETS` units (counted over every part) keeps
    a bucket per unit hash; a larger one folds them (every part's, whatever it did
    alone) into ``hash % BUCKETS``."""
    units = pl.col(ONE).sum().over(by) if by else pl.col(ONE).sum()
    bucket = pl.col(BUCKET).reinterpret(signed=False)
    folded = parts.with_columns(
        pl.when(units <= BUCKETS).then(bucket).otherwise(bucket % BUCKETS).alias(BUCKET)
    )
    scales = [pl.col(_scale_of(c)).max() for c in names] if scaled else []
    totals = [
        (exact_total(c) / pl.col(_scale_of(c)) if scaled else exact_total(c)).alias(c)
        for c in names
    ]
    sums = (
        folded.group_by([*by, BUCKET])
        .agg(pl.col(ONE).sum(), *(e for c in names for e in exact_added(c)), *scales)
        .select(*by, BUCKET, pl.col(ONE).cast(pl.Float64), *totals)
    )
    # one row per group, its buckets' sums as lists: a batch never splits a group
    stats = [pl.col(c).sort_by(BUCKET) for c in [BUCKET, *names, ONE]]
    key = _hashed(by, parts.collect_schema(), 0).first() if by else pl.lit(0, pl.UInt64)
    return (
        sums.group_by(by).agg(*stats, key.alias(_KEY))
        if by
        else sums.select(*(s.implode() for s in stats), key.alias(_KEY))
    )


def _resample(grouped: pl.LazyFrame, boot: Bootstrap) -> pl.LazyFrame:
    """The percentile interval of each group's estimates over the resamples."""
    by, plan, names = boot.by, boot.plan, [*boot.names, ONE]
    schema = grouped.collect_schema()
    out_schema = pl.Schema(
        [
            *((k, schema[k]) for k in by),
            *((c, pl.Float64) for lb, _ in plan for c in interval_columns(lb)),
        ]
    )
    alpha = 1.0 - float(boot.options.ci or 0.0)
    b = boot.options.n_bootstrap
    seed = boot.options.seed

    def resample(frame: pl.DataFrame) -> pl.DataFrame:
        # a step's sums are names x groups x n_bootstrap floats: groups HELD at a time
        step = max(1, HELD // (b * (len(names) + 2)))
        if frame.height <= step:
            return resample_step(frame)
        steps = [resample_step(frame.slice(i, step)) for i in range(0, frame.height, step)]
        return pl.concat(steps, how="vertical")

    def resample_step(frame: pl.DataFrame) -> pl.DataFrame:
        n_groups = frame.height
        lengths = frame[BUCKET].list.len().to_numpy().astype(np.int64)
        group_key = np.repeat(frame[_KEY].to_numpy().astype(np.uint64), lengths)
        buckets = frame[BUCKET].explode().to_numpy().astype(np.uint64)
        values = np.column_stack([frame[c].explode().to_numpy() for c in names])
        drawn = _Drawn(lengths, group_key, buckets, values, seed)
        totals = drawn.nonempty(b)
        ones = totals[-1]
        out: dict[str, object] = {k: frame[k] for k in by}
        with np.errstate(divide="ignore", invalid="ignore"):
            for label, pairs in plan:
                estimate = np.zeros((n_groups, b))
                for num, den in pairs:
                    estimate += totals[num] / (ones if den < 0 else totals[den])
                low, high = np.percentile(estimate, [50.0 * alpha, 100.0 - 50.0 * alpha], axis=1)
                undefined = np.isnan(estimate).sum(axis=1) * (lengths > 0)
                if undefined.any():
                    first = int(np.flatnonzero(undefined)[0])
                    where = _group_text(frame.row(first, named=True), by)
                    groups = int(np.count_nonzero(undefined))
                    warn_undefined(label, int(undefined[first]), b, where, groups)
                lower, upper = interval_columns(label)
                out[lower], out[upper] = low, high
        # a group without a unit (the one row of an empty log) has no resample: null
        some = pl.lit(pl.Series(lengths > 0))
        bounds = [pl.when(some).then(pl.col(c)).alias(c) for c in out_schema if c not in by]
        return pl.DataFrame(out, schema=out_schema).with_columns(bounds)

    result = grouped.map_batches(warns_in_order(resample), schema=out_schema)
    return result.sort(by, nulls_last=True) if by else result


def _group_text(row: dict[str, object], by: Sequence[str]) -> str:
    """A ``by`` group in a message: ``" (group day=1)"``, or nothing without ``by``."""
    if not by:
        return ""
    return " (group " + ", ".join(f"{k}={row[k]!r}" for k in by) + ")"


def warn_undefined(label: str, count: int, total: int, where: str, groups: int = 1) -> None:
    """Warn (:class:`~polars_irmetrics.errors.IrmWarning`) that ``count`` of the ``total``
    resamples of metric ``label`` give no number (NaN), so that its interval is NaN
    (numpy's ``percentile``, as obp's bootstrap gives it): never a NaN in silence.
    ``where``: the first such ``by`` group (:func:`_group_text`); ``groups``: how many."""
    more = f" and {groups - 1} other group(s)" if groups > 1 else ""
    warn_from_plan(
        f"metric {label!r}: {count} of the {total} bootstrap resamples{where}{more} give "
        "no number (NaN: a self-normalised estimate of a resample whose rows all have "
        "weight 0 is 0 / 0, or the estimator's own formula gives NaN), so its interval "
        f"({label}_lower, {label}_upper) is NaN, as obp's bootstrap gives it: evaluate a "
        "larger log (or group), or an estimator that is not self-normalised (ips, dr)",
        IrmWarning,
    )


class _Drawn:
    """The resampled sums of one batch of ``by`` groups (``lengths`` buckets each, laid
    one group after the other; ``values``' last column the units per bucket, :data:`ONE`):
    each group's first ``n_bootstrap`` resamples that draw at least one unit.

    A Poisson resample draws no unit at all with probability ``exp(-buckets)`` (1.8 %
    of the resamples of a log of 4 rows), where drawing ``n`` units with replacement
    (obp's bootstrap, which the Poisson one approximates) always draws ``n``: its
    estimate is 0 / 0. Such a resample is not one of the bootstrap's, so it is skipped
    and the group's next resample (draw ``n_bootstrap``, ``n_bootstrap + 1``...) taken
    in its place: a group that never draws an empty resample keeps its draws ``0`` to
    ``n_bootstrap - 1``, the same bits as before, and the extra draws are a function of
    (seed, group, bucket, resample) as every draw is.
    """

    def __init__(
        self,
        lengths: np.ndarray,
        group_key: np.ndarray,
        buckets: np.ndarray,
        values: np.ndarray,
        seed: int,
    ) -> None:
        self.lengths, self.group_key, self.buckets = lengths, group_key, buckets
        self.values, self.seed = values, seed

    def totals(self, lengths: np.ndarray, pick: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """Each column's sum over the resamples ``draws`` (names x groups x draws) of the
        groups of ``lengths`` whose buckets are ``pick`` (a mask of the batch's)."""
        keys, ids, values = self.group_key[pick], self.buckets[pick], self.values[pick]
        totals = np.zeros((values.shape[1], lengths.size, draws.size))
        for rows, groups, starts in _blocks(lengths):  # blocks of buckets, not resamples
            step = max(1, DRAWN // rows.size)
            for first in range(0, draws.size, step):  # and chunks of resamples
                last = min(first + step, draws.size)
                chunk = draws[None, first:last]
                counts = _poisson_counts(keys[rows], ids[rows], chunk, self.seed)
                for c in range(values.shape[1]):
                    weighted = counts * values[rows, c][:, None]
                    # a group's runs in order (a block may hold two of one group's runs)
                    summed = np.add.reduceat(weighted, starts, axis=0)
                    np.add.at(totals[c][:, first:last], groups, summed)
        return totals

    def nonempty(self, b: int) -> np.ndarray:
        """The sums of each group's first ``b`` resamples that draw a unit (a group
        without a bucket, the one row of an empty log: its first ``b``, null later)."""
        lengths = self.lengths
        every = np.ones(self.buckets.size, dtype=bool)
        totals = self.totals(lengths, every, np.arange(b, dtype=np.uint64))
        drawn = b
        while True:
            some = (totals[-1] > 0) | (lengths == 0)[:, None]
            have = some.sum(axis=1)
            short = have < b
            if not short.any():
                break
            extra = max(16, 2 * int((b - have[short]).max()))
            draws = np.arange(drawn, drawn + extra, dtype=np.uint64)
            more = np.zeros((totals.shape[0], lengths.size, extra))
            more[:, short] = self.totals(lengths[short], np.repeat(short, lengths), draws)
            totals = np.concatenate([totals, more], axis=2)
            drawn += extra
        if drawn == b:
            return totals
        first = np.argsort(~some, axis=1, kind="stable")[:, :b]  # in the order drawn
        picked: np.ndarray = np.take_along_axis(totals, first[None, :, :], axis=2)
        return picked


def _blocks(lengths: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The buckets of groups of ``lengths`` buckets (laid one group after the other) in
    blocks of about :data:`_BLOCK`: each ``(buckets, their groups, where each group's
    run starts in them)``. A group's buckets go ``_BLOCK`` at a time, its ``k``-th run
    always the same buckets, so that each group's totals are the same sums in the same
    order (:func:`numpy.add.reduceat`, one bucket after the other) whatever the other
    groups of the batch: the same bits however the groups reach the step.

    >>> [(p.tolist(), g.tolist(), s.tolist()) for p, g, s in _blocks(np.array([2, 1]))]
    [([0, 1, 2], [0, 1], [0, 2])]
    >>> [(p.size, g.tolist(), s.tolist()) for p, g, s in _blocks(np.array([300, 3]))]
    [(256, [0], [0]), (47, [1, 0], [0, 3])]
    """
    firsts = np.cumsum(lengths) - lengths
    group = np.repeat(np.arange(lengths.size), lengths)
    ordinal = np.arange(group.size) - np.repeat(firsts, lengths)
    run = ordinal // _BLOCK  # the k-th run of each group
    order = np.lexsort((ordinal, group, run))  # by run, then group, then bucket
    run, group = run[order], group[order]
    new_run = np.flatnonzero(np.r_[True, (run[1:] != run[:-1]) | (group[1:] != group[:-1])])
    # whole runs per block, a block starting where a run starts past each _BLOCK buckets
    block = np.searchsorted(new_run, np.arange(0, group.size, _BLOCK), side="right") - 1
    edges = np.unique(np.r_[new_run[block], group.size])
    out = []
    for start, stop in itertools.pairwise(edges):
        runs = new_run[(new_run >= start) & (new_run < stop)]
        out.append((order[start:stop], group[runs], runs - start))
    return out


#: Poisson(1)'s distribution function at 0, 1, ..., 31: a count is the first k whose
#: value exceeds a uniform draw.
_POISSON_CDF = np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(32)])


def _poisson_counts(
    group: np.ndarray, bucket: np.ndarray, draws: np.ndarray, seed: int
) -> np.ndarray:
    """Poisson(1) counts of each bucket (rows) in each resample (columns), a function of
    (seed, group, bucket, resample) alone (a counter-based generator: SplitMix64 of the
    four), so that the draws do not depend on how the groups reach the step.

    >>> counts = _poisson_counts(
    ...     np.zeros(20_000, np.uint64), np.arange(20_000, dtype=np.uint64),
    ...     np.arange(50, dtype=np.uint64)[None, :], 0,
    ... )
    >>> round(float(counts.mean()), 2), round(float(counts.var()), 2)
    (1.0, 1.0)
    """
    with np.errstate(over="ignore"):
        x = (group[:, None] * np.uint64(0x9E3779B97F4A7C15)) ^ (
            bucket[:, None] * np.uint64(0xBF58476D1CE4E5B9)
        )
        # the seed's term wraps at 2**64 as the others do: the same bits for any seed
        # below 2**64 / 0x2545F491 (about 2.9e10), where it never wrapped; an
        # OverflowError above it before
        mixed = np.uint64((seed * 0x2545F491 + 1) % 2**64)
        x = x ^ (draws * np.uint64(0x94D049BB133111EB)) ^ mixed
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            x = (x ^ (x >> np.uint64(shift))) * np.uint64(mult)
        x = x ^ (x >> np.uint64(31))
    uniform = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    counts: np.ndarray = np.searchsorted(_POISSON_CDF, uniform, side="right").astype(np.float64)
    return counts
