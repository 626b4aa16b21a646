"""The bootstrap intervals of the self-normalised slate estimators (``slate_snips``,
``slate_sniips``, ``slate_snrips``; ``ci=``), as exact sums that add up across parts.

A self-normalised estimate is a ratio, recomputed in each resample: with ``A_l``, ``W_l``
and ``n_l`` the resample's sums of ``r w``, of ``w`` and of the rounds with a slot at
position ``l``, ``n`` its rounds and ``m`` its slots, ``slate_sniips`` and
``slate_snrips`` (normalised within each position) are ``sum_l A_l n_l / (n W_l)`` (a
position no resampled round has adds 0) and ``slate_snips`` is
``(sum_l A_l) m / (n sum_l W_l)``: the estimates themselves when every count is 1.

The units are rounds, drawn ``Poisson(1)`` times per resample by the counter-based
generator of :mod:`polars_irmetrics.ope.intervals`, from the seed, the ``by`` group and
the unit's bucket: each round its own bucket (a hash of its id) in a group of at most
:data:`~polars_irmetrics.ope.intervals.BUCKETS` rounds, and beyond, that hash modulo
``BUCKETS`` (the other estimators' units are pooled alike). A part gives, per ``by``
group, bucket and position, the slots, the rounds whose first slot it is, and exact
sums of ``r w`` and ``w`` (:func:`ratio_part`); the parts' rows are added (integers)
and resampled in numpy, blocks of buckets at a time (:meth:`RatioBootstrap.intervals`):
the same bits in one plan, out of core (``buckets=``) and on Spark and Dask. A resample
that draws no round is skipped for the group's next draw, and a NaN resample warns, as
the other estimators' (:mod:`polars_irmetrics.ope.intervals`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.ope.intervals import (
    BUCKETS,
    DRAWN,
    HELD,
    _group_text,
    _hashed,
    _poisson_counts,
    interval_columns,
    joined_intervals,
    warn_undefined,
)
from polars_irmetrics.ope.sums import exact_added, exact_columns, exact_total

__all__ = ["RATIO_BUCKET", "RatioBootstrap", "ratio_part"]

#: A ratio bootstrap part's bucket column (its rows beside a part's sums: where it is set).
RATIO_BUCKET = f"{INTERNAL}rbucket"
_SLOT = f"{INTERNAL}rslot"
_ROWS = f"{INTERNAL}rrows"
_TOPS = f"{INTERNAL}rtops"
_KEY = f"{INTERNAL}rkey"
#: Buckets of rounds drawn per numpy block (a block's counts are ``n_bootstrap x block``).
_BLOCK = 1024


def _a(i: int) -> str:
    return f"{INTERNAL}ra{i}"


def _b(i: int) -> str:
    return f"{INTERNAL}rb{i}"


def _scale_of(name: str) -> str:
    return f"{name}#scale"


@dataclass(frozen=True)
class RatioBootstrap:
    """One part's bucket sums (``frame``) and how to resample them: ``ratios`` maps each
    label to where it normalises (``"all"`` or ``"position"``)."""

    frame: pl.LazyFrame
    ratios: dict[str, str]
    by: list[str]
    options: EvalOptions
    #: The sums' terms read times a scale of their own (:func:`ratio_part`'s ``scales``).
    scaled: bool = False

    def finish(self, result: pl.LazyFrame, parts: pl.LazyFrame) -> pl.LazyFrame:
        """``result`` with each ratio's interval after its column, from the rows of
        :attr:`frame` of every part."""
        return joined_intervals(result, self.intervals(parts), list(self.ratios), self.by)

    def intervals(self, parts: pl.LazyFrame) -> pl.LazyFrame:
        """One row per ``by`` group (sorted by the keys): each ratio's ``<label>_lower``
        and ``<label>_upper``."""
        by = self.by
        names = [c for i in range(len(self.ratios)) for c in (_a(i), _b(i))]
        units = pl.col(_TOPS).sum().over(by) if by else pl.col(_TOPS).sum()
        bucket = pl.col(RATIO_BUCKET).reinterpret(signed=False)
        folded = parts.with_columns(
            pl.when(units <= BUCKETS).then(bucket).otherwise(bucket % BUCKETS).alias(RATIO_BUCKET)
        )
        scaled = self.scaled
        totals = [
            (exact_total(c) / pl.col(_scale_of(c)) if scaled else exact_total(c)).alias(c)
            for c in names
        ]
        sums = (
            folded.group_by([*by, RATIO_BUCKET, _SLOT])
            .agg(
                pl.col(_ROWS).sum(),
                pl.col(_TOPS).sum(),
                *(e for c in names for e in exact_added(c)),
                *(pl.col(_scale_of(c)).max() for c in names if scaled),
            )
            .select(
                *by,
                RATIO_BUCKET,
                _SLOT,
                pl.col(_ROWS).cast(pl.Float64),
                pl.col(_TOPS).cast(pl.Float64),
                *totals,
            )
        )
        stats = [
            pl.col(c).sort_by([RATIO_BUCKET, _SLOT])
            for c in [RATIO_BUCKET, _SLOT, _ROWS, _TOPS, *names]
        ]
        key = _hashed(by, parts.collect_schema(), 0).first() if by else pl.lit(0, pl.UInt64)
        grouped = (
            sums.group_by(by).agg(*stats, key.alias(_KEY))
            if by
            else sums.select(*(s.implode() for s in stats), key.alias(_KEY))
        )
        schema = grouped.collect_schema()
        out_schema = pl.Schema(
            [
                *((k, schema[k]) for k in by),
                *((c, pl.Float64()) for label in self.ratios for c in interval_columns(label)),
            ]
        )
        ratios, options = self.ratios, self.options

        def resample(frame: pl.DataFrame) -> pl.DataFrame:
            out: dict[str, list[float | None]] = {c: [] for c in out_schema.names() if c not in by}
            for row in frame.iter_rows(named=True):
                if not row[RATIO_BUCKET]:  # no round (the one row of an empty log): null
                    for column in out.values():
                        column.append(None)
                    continue
                estimates = _resampled(row, ratios, options)
                alpha = 1.0 - float(options.ci or 0.0)
                for label, estimate in zip(ratios, estimates, strict=True):
                    undefined = int(np.count_nonzero(np.isnan(estimate)))
                    if undefined:
                        where = _group_text(row, by)
                        warn_undefined(label, undefined, options.n_bootstrap, where)
                    low, high = np.percentile(estimate, [50.0 * alpha, 100.0 - 50.0 * alpha])
                    lower, upper = interval_columns(label)
                    out[lower].append(float(low))
                    out[upper].append(float(high))
            return pl.DataFrame({**{k: frame[k] for k in by}, **out}, schema=out_schema)

        result = grouped.map_batches(warns_in_order(resample), schema=out_schema)
        return result.sort(by, nulls_last=True) if by else result


def _resampled(
    row: dict[str, object], ratios: Mapping[str, str], options: EvalOptions
) -> list[np.ndarray]:
    """Each ratio's estimate in each resample, from one group's sums per bucket and
    position (lists sorted by bucket, then position)."""
    buckets = np.asarray(row[RATIO_BUCKET], np.uint64)
    slots = np.asarray(row[_SLOT], np.int64)
    ids, bucket_index = np.unique(buckets, return_inverse=True)
    places, slot_index = np.unique(slots, return_inverse=True)
    n_tables = 1 + 2 * len(ratios)
    tables = np.zeros((n_tables, ids.size, places.size))
    tables[0][bucket_index, slot_index] = np.asarray(row[_ROWS], np.float64)
    for i in range(len(ratios)):
        tables[1 + i][bucket_index, slot_index] = np.asarray(row[_a(i)], np.float64)
        tables[1 + len(ratios) + i][bucket_index, slot_index] = np.asarray(row[_b(i)], np.float64)
    rounds_in = np.bincount(bucket_index, np.asarray(row[_TOPS], np.float64), ids.size)
    group = np.full(ids.size, row[_KEY], np.uint64)
    b, seed = options.n_bootstrap, options.seed

    def drawn(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.zeros(draws.size)
        sums = np.zeros((n_tables, draws.size, places.size))
        for start in range(0, ids.size, _BLOCK):  # blocks of buckets, each in its order
            stop = min(start + _BLOCK, ids.size)
            step = max(1, DRAWN // (stop - start))
            for first in range(0, draws.size, step):  # and chunks of resamples
                last = min(first + step, draws.size)
                chunk = draws[None, first:last]
                counts = _poisson_counts(group[start:stop], ids[start:stop], chunk, seed).T
                n[first:last] += np.einsum("br,r->b", counts, rounds_in[start:stop])
                sums[:, first:last] += np.einsum("br,trl->tbl", counts, tables[:, start:stop])
        return n, sums

    def estimated(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rounds drawn and each ratio's estimate (ratios x resamples) of ``draws``,
        resampled :data:`~polars_irmetrics.ope.intervals.HELD` sums at a time (each
        resample's estimate its own: the same bits in any chunk)."""
        step = max(1, HELD // (n_tables * places.size))
        n = np.empty(draws.size)
        estimates = np.empty((len(ratios), draws.size))
        for first in range(0, draws.size, step):
            last = min(first + step, draws.size)
            n[first:last], sums = drawn(draws[first:last])
            estimates[:, first:last] = _estimates(n[first:last], sums, ratios)
        return n, estimates

    # a resample that draws no round has no estimate (0 / 0): the next draw in its place
    # (as :class:`~polars_irmetrics.ope.intervals._Drawn` does for the other estimators)
    n, estimates = estimated(np.arange(b, dtype=np.uint64))
    total = b
    while (have := int(np.count_nonzero(n > 0))) < b:
        extra = max(16, 2 * (b - have))
        more_n, more = estimated(np.arange(total, total + extra, dtype=np.uint64))
        n, estimates = np.concatenate([n, more_n]), np.concatenate([estimates, more], axis=1)
        total += extra
    if total > b:
        estimates = estimates[:, np.flatnonzero(n > 0)[:b]]
    return list(estimates)


def _estimates(n: np.ndarray, sums: np.ndarray, ratios: Mapping[str, str]) -> np.ndarray:
    """Each ratio's estimate (ratios x resamples) of resamples of ``n`` rounds and the
    per-position ``sums`` (the slots, then each ratio's ``r w``, then its ``w``)."""
    n_l = sums[0]
    estimates = np.empty((len(ratios), n.size))
    for i, normalised in enumerate(ratios.values()):
        a_l, w_l = sums[1 + i], sums[1 + len(ratios) + i]
        with np.errstate(divide="ignore", invalid="ignore"):
            if normalised == "position":  # a position no resampled round has: 0
                terms = np.where(w_l > 0, a_l * n_l / (n[:, None] * w_l), 0.0)
                estimates[i] = terms.sum(axis=1)
            else:
                estimates[i] = a_l.sum(1) * n_l.sum(1) / (n * w_l.sum(1))
    return estimates


def ratio_part(
    rows: pl.LazyFrame,
    ratios: Mapping[str, tuple[str, str, str]],
    by: list[str],
    keys: tuple[str, str, str],
    options: EvalOptions,
    scales: Sequence[pl.Expr] | None = None,
) -> RatioBootstrap:
    """One part's sums (module doc) of ``rows`` (whole rounds): ``ratios`` maps each label
    to its rows' ``r w`` column, ``w`` column and normalisation; ``keys`` are the round,
    position and first-slot flag columns. ``scales``: a power of two per ``r w`` and
    ``w`` of each ratio (in that order; expressions of ``rows``), those of the estimate's
    sums of the same terms: each summed times it and divided by it before the resamples
    (exact), so that weights all tiny or all huge keep their digits."""
    round_id, position, top = keys
    schema = rows.collect_schema()
    unit = _hashed([round_id], schema, options.seed)
    rounds = pl.col(top).cast(pl.Int64).sum()
    count = rounds.over(by) if by else rounds
    bucket = pl.when(count <= BUCKETS).then(unit).otherwise(unit % BUCKETS)
    values = [
        e
        for i, (rw, w, _) in enumerate(ratios.values())
        for e in (pl.col(rw).alias(_a(i)), pl.col(w).alias(_b(i)))
    ]
    names = [c for i in range(len(ratios)) for c in (_a(i), _b(i))]
    scaled = scales is not None
    if scales is not None:
        rows = rows.with_columns(s.alias(_scale_of(c)) for c, s in zip(names, scales, strict=True))
        values = [
            (value.cast(pl.Float64) * pl.col(_scale_of(c))).alias(c)
            for c, value in zip(names, values, strict=True)
        ]
        values += [pl.col(_scale_of(c)) for c in names]
    frame = (
        rows.select(
            *by,
            bucket.reinterpret(signed=True).alias(RATIO_BUCKET),
            # wrapped, as the rounds' hash reads them: a position from 2**63 on (UInt64)
            pl.col(position).cast(pl.Int64, wrap_numerical=True).alias(_SLOT),
            pl.col(top).cast(pl.Int64).alias(_TOPS),
            *values,
        )
        .group_by([*by, RATIO_BUCKET, _SLOT])
        .agg(
            pl.len().cast(pl.Int64).alias(_ROWS),
            pl.col(_TOPS).sum(),
            *(e for c in names for e in exact_columns(c, pl.col(c))),
            *(pl.col(_scale_of(c)).max() for c in names if scaled),
        )
    )
    normalised = {label: how for label, (_, _, how) in ratios.items()}
    return RatioBootstrap(frame, normalised, by, options, scaled)
