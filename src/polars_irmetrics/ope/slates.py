"""The slate IPS estimators (``slate_ips``, ``slate_iips``, ``slate_rips`` and their
self-normalised forms): one lazy plan over a slate log and the evaluation policy's
propensities.

The log has one row per ``(round_id, position)`` with the slot's reward and the logging
policy's propensities (``pscore``: the whole slate; ``pscore_item_position``: the item at
that position; ``pscore_cascade``: the top-l prefix); ``policy=`` has the evaluation
policy's propensities of the logged slate under the same names, keyed by ``(round_id,
position)``. Each estimator reads one of the three (obp's ``SlateStandardIPS``,
``SlateIndependentIPS``, ``SlateRewardInteractionIPS``); only the columns the metrics
asked for read are required. A row's contribution is ``r w`` (self-normalised: divided
by the mean weight of every row, or of the rows at its position), and the estimate the
sum of the contributions over the number of rounds: the expected sum of slot rewards
per round. ``per_query=True`` gives each round's sum. ``ci=``: the bootstrap over rounds
(:mod:`~polars_irmetrics.ope.intervals`); for the self-normalised estimators the ratio is
recomputed in each resample (:func:`_with_ratio_intervals`). A positive propensity the
policy gives a ``(round_id, position)`` the log never shows raises a
:class:`~polars_irmetrics.errors.SupportWarning` when the plan is collected.

Checks (raised when the plan is collected, naming the table, the column and the round):
a propensity in the log that is null, NaN, 0, negative or above 1; one in the policy
that is null, NaN, negative or above 1; a null or NaN reward; a logged ``(round_id,
position)`` the policy lacks; a ``(round_id, position)`` twice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL, check_numeric, id_kind, require_columns
from polars_irmetrics.metrics.ope import SLATE_COLUMNS
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.ope.checks import WHERE, Check, warning_unsupported
from polars_irmetrics.ope.intervals import BUCKETS, _poisson_counts, interval_columns
from polars_irmetrics.ope.rounds import over_rounds
from polars_irmetrics.ope.sums import PartsPlan, exact_sum

__all__ = ["build_slate_plan"]

_IN_P = f"{INTERNAL}in_p"
_DUP = f"{INTERNAL}dup"
_ROUND = f"{INTERNAL}round"
_SLOT = f"{INTERNAL}slot"
_GROUP = f"{INTERNAL}group"
#: Buckets of rounds drawn per numpy block of the self-normalised intervals (a block's
#: counts are ``n_bootstrap x block``).
_ROUNDS_BLOCK = 1024


def _e(column: str) -> str:
    """The evaluation policy's propensity column, beside the log's."""
    return f"{INTERNAL}e_{column}"


def _raw(label: str) -> str:
    """A slate estimator's rows' ``r w``, not normalised."""
    return f"{INTERNAL}rw_{label}"


def _w(column: str) -> str:
    return f"{INTERNAL}w_{column}"


def build_slate_plan(
    log: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    policy: pl.LazyFrame,
    options: EvalOptions,
    *,
    parts: bool = False,
) -> pl.LazyFrame | PartsPlan:
    """The lazy slate estimate of ``requests`` (see the module); ``parts``: the sums of
    one part of the log instead (:func:`~polars_irmetrics.ope.evaluate.build_ope_parts`).

    Examples
    --------
    Two slates of two slots; the logger showed each slate with probability 0.25, the
    evaluation policy would show them with 0.5 and 0.125 (weights 2 and 0.5); the slot
    rewards are (1, 0) and (1, 1): ``slate_ips`` = (2 * 1 + 0.5 * 2) / 2 = 1.5, and
    ``slate_snips`` divides by the mean weight 1.25: 1.2.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "round_id": [1, 1, 2, 2], "position": [1, 2, 1, 2],
    ...     "reward": [1.0, 0.0, 1.0, 1.0], "pscore": [0.25] * 4,
    ... })
    >>> pi = log.select("round_id", "position", pscore=pl.Series([0.5, 0.5, 0.125, 0.125]))
    >>> out = irm.evaluate(log, ["slate_ips", "slate_snips"], policy=pi)
    >>> out["num_rounds"].item(), out["slate_ips"].item(), round(out["slate_snips"].item(), 12)
    (2, 1.5, 1.2)
    """
    by = list(options.attribute_keys)
    round_id, position, reward = options.round_id, options.position, options.reward
    keys = [round_id, position]
    columns = sorted({SLATE_COLUMNS[request.metric.name][0] for _, request in requests})
    log_schema = log.collect_schema()
    require_columns(
        log_schema,
        [*keys, reward, *columns, *by],
        "log",
        "a slate log has one row per (round_id, position) with the slot's reward and the "
        "logging policy's propensities (pscore, pscore_item_position, pscore_cascade)",
    )
    schema = policy.collect_schema()
    require_columns(
        schema,
        [*keys, *columns],
        "policy table",
        "for the slate estimators the policy table has one row per (round_id, position) "
        "with the evaluation policy's propensities of the logged slate, under the log's names",
    )
    for key in keys:
        if id_kind(schema, key, "policy table") != id_kind(log_schema, key, "log"):
            raise ColumnTypeError(
                f"column {key!r} has dtype {schema[key]} in the policy table but "
                f"{log_schema[key]} in the log; the ids must match: cast one side, e.g. "
                f"pl.col({key!r}).cast(pl.String)"
            )
    for column in columns:
        check_numeric(log_schema, column, "log", integer=False)
        check_numeric(schema, column, "policy table", integer=False)
    check_numeric(log_schema, reward, "log", integer=False)
    check_numeric(log_schema, position, "log", integer=True)
    ids = [
        pl.col(c).cast(pl.Int64) if log_schema[c].is_integer() else pl.col(c).cast(pl.String)
        for c in keys
    ]
    evaluation = policy.select(
        *ids,
        *(pl.col(c).cast(pl.Float64).alias(_e(c)) for c in columns),
        pl.lit(True).alias(_IN_P),
    )
    where = pl.format(
        f"{round_id}={{}}, {position}={{}}", *(pl.col(k).cast(pl.String) for k in keys)
    )
    rows = (
        log.select(*by, *ids, reward, *columns)
        .join(evaluation, on=keys, how="left")
        .with_columns(
            where.alias(WHERE),
            (pl.len().over(keys) > 1).alias(_DUP),
            *((pl.col(_e(c)) / pl.col(c).cast(pl.Float64)).alias(_w(c)) for c in columns),
        )
    )
    r = pl.col(reward).cast(pl.Float64)
    values = []
    sums: dict[str, tuple[str, str | None]] = {}
    for label, request in requests:
        column, normalised = SLATE_COLUMNS[request.metric.name]
        w = pl.col(_w(column))
        values.append((r * w).alias(_raw(label)))
        sums[label] = (_raw(label), normalised)
        if normalised is None:
            values.append((r * w).alias(label))
            continue
        group = [*by, position] if normalised == "position" else by
        exact_mean = exact_sum(w) / w.count()  # the same bits in any row order
        mean = exact_mean.over(group) if group else exact_mean
        values.append((r * w / mean).alias(label))
    checks = _checks(columns, keys, reward)
    rows = rows.with_columns(values)
    reading = {
        label: (label, _w(SLATE_COLUMNS[request.metric.name][0])) for label, request in requests
    }
    ratios = {
        label: (_w(SLATE_COLUMNS[request.metric.name][0]), normalised)
        for label, request in requests
        if (normalised := SLATE_COLUMNS[request.metric.name][1]) is not None
    }
    if options.ci is not None and ratios and options.ci_method == "normal":
        raise MetricParameterError(
            f"metric {next(iter(ratios))!r} is a ratio (self-normalised) and has no "
            "closed-form variance: use ci_method='bootstrap'"
        )
    slates = (position, sums)
    if parts:  # the engines and buckets: exact sums per part (ci= is refused there)
        return over_rounds(rows, reading, by, round_id, checks, options, parts=True, slates=slates)
    if options.ci is None or not ratios:
        result = _plan(over_rounds(rows, reading, by, round_id, checks, options, slates=slates))
    else:  # the sums over rounds as before; the ratios recomputed in each resample
        plain_labels = [label for label in reading if label not in ratios]
        plain = options.replace(ci=None) if not plain_labels else options
        result = _plan(over_rounds(rows, reading, by, round_id, checks, plain, slates=slates))
        if plain_labels:  # over_rounds added intervals to every label: keep the sums'
            result = result.drop(c for label in ratios for c in interval_columns(label))
        result = _with_ratio_intervals(result, rows, ratios, by, keys, reward, options)
    return _support_warning(result, log, policy, keys, columns)


def _with_ratio_intervals(
    result: pl.LazyFrame,
    rows: pl.LazyFrame,
    ratios: dict[str, tuple[str, str]],
    by: list[str],
    keys: list[str],
    reward: str,
    options: EvalOptions,
) -> pl.LazyFrame:
    """``result`` with the bootstrap intervals of the self-normalised slate estimates:
    over rounds (each drawn ``Poisson(1)`` times per resample, by the counter-based
    generator of :mod:`~polars_irmetrics.ope.intervals`, from the seed, the ``by`` group
    and the round; beyond :data:`~polars_irmetrics.ope.intervals.BUCKETS` rounds a group's
    rounds are pooled into that many buckets by the rank of their hash, each drawn as one
    unit, as the other estimators' units are), the ratio recomputed in each resample.
    With ``A_l``, ``W_l`` and ``n_l`` the resample's sums of ``r w``, of ``w`` and of the
    rounds with a slot at position ``l``, ``n`` its rounds and ``m`` its slots:
    ``slate_sniips`` and ``slate_snrips`` are ``sum_l A_l n_l / (n W_l)`` and ``slate_snips`` is
    ``(sum_l A_l) m / (n sum_l W_l)``, which are the estimates themselves when every
    count is 1."""
    round_id, position = keys
    r = pl.col(reward).cast(pl.Float64)
    labels = list(ratios)
    a_cols = [f"{INTERNAL}a{i}" for i in range(len(labels))]
    b_cols = [f"{INTERNAL}b{i}" for i in range(len(labels))]
    slots = rows.select(
        *by,
        pl.col(round_id).hash(seed=0).alias(_ROUND),
        pl.col(position).cast(pl.Int64).alias(_SLOT),
        *((r * pl.col(w)).alias(a) for (w, _), a in zip(ratios.values(), a_cols, strict=True)),
        *(pl.col(w).alias(b) for (w, _), b in zip(ratios.values(), b_cols, strict=True)),
    )
    names = [_ROUND, _SLOT, *a_cols, *b_cols]
    key = pl.struct(by).hash(seed=0).first() if by else pl.lit(0, pl.UInt64)
    grouped = (
        slots.group_by(by).agg(*names, key.alias(_GROUP))
        if by
        else slots.select(*(pl.col(c).implode() for c in names), key.alias(_GROUP))
    )
    schema = grouped.collect_schema()
    out_schema = pl.Schema(
        [
            *((k, schema[k]) for k in by),
            *((c, pl.Float64()) for label in labels for c in interval_columns(label)),
        ]
    )
    alpha = 1.0 - float(options.ci or 0.0)
    draws = np.arange(options.n_bootstrap, dtype=np.uint64)[None, :]
    seed = options.seed

    def resample(frame: pl.DataFrame) -> pl.DataFrame:
        out: dict[str, list[float]] = {c: [] for c in out_schema.names() if c not in by}
        for row in frame.iter_rows(named=True):
            ids, slots = np.asarray(row[_ROUND], np.uint64), np.asarray(row[_SLOT], np.int64)
            rounds, round_index = np.unique(ids, return_inverse=True)
            places, slot_index = np.unique(slots, return_inverse=True)
            # rounds pooled into up to BUCKETS buckets by the rank of their hash (each
            # round its own bucket in a smaller group), as the other estimators' units;
            # per bucket and position: the rounds with the slot, then r w and w
            of_round = np.arange(rounds.size, dtype=np.int64) % BUCKETS
            bucket = of_round[round_index]
            n_buckets = min(rounds.size, BUCKETS)
            rounds_in = np.bincount(of_round, minlength=n_buckets).astype(np.float64)
            tables = np.zeros((1 + 2 * len(labels), n_buckets, places.size))
            for i, column in enumerate([None, *a_cols, *b_cols]):
                values = 1.0 if column is None else np.asarray(row[column], np.float64)
                np.add.at(tables[i], (bucket, slot_index), values)
            ids_b = np.arange(n_buckets, dtype=np.uint64)
            group = np.full(n_buckets, row[_GROUP], np.uint64)
            n = np.zeros(draws.size)
            sums = np.zeros((tables.shape[0], draws.size, places.size))
            for start in range(0, n_buckets, _ROUNDS_BLOCK):  # blocks of buckets
                stop = min(start + _ROUNDS_BLOCK, n_buckets)
                counts = _poisson_counts(group[start:stop], ids_b[start:stop], draws, seed).T
                n += counts @ rounds_in[start:stop]  # resamples x buckets of the block
                sums += np.einsum("br,trl->tbl", counts, tables[:, start:stop])
            n_l = sums[0]
            for i, (_, normalised) in enumerate(ratios.values()):
                a_l, w_l = sums[1 + i], sums[1 + len(labels) + i]
                with np.errstate(divide="ignore", invalid="ignore"):
                    if normalised == "position":  # a position no resampled round has: 0
                        terms = np.where(w_l > 0, a_l * n_l / (n[:, None] * w_l), 0.0)
                        estimate = terms.sum(axis=1)
                    else:
                        estimate = a_l.sum(1) * n_l.sum(1) / (n * w_l.sum(1))
                low, high = np.percentile(estimate, [50.0 * alpha, 100.0 - 50.0 * alpha])
                lower, upper = interval_columns(labels[i])
                out[lower].append(float(low))
                out[upper].append(float(high))
        return pl.DataFrame({**{k: frame[k] for k in by}, **out}, schema=out_schema)

    intervals = grouped.map_batches(resample, schema=out_schema)
    joined = (
        result.join(intervals, on=by, how="left", nulls_equal=True, maintain_order="left")
        if by
        else pl.concat([result, intervals], how="horizontal")
    )
    order: list[str] = []
    for column in result.collect_schema().names():
        order.append(column)
        if column in ratios:
            order += interval_columns(column)
    return joined.select(order)


def _support_warning(
    result: pl.LazyFrame,
    log: pl.LazyFrame,
    policy: pl.LazyFrame,
    keys: list[str],
    columns: list[str],
) -> pl.LazyFrame:
    """``result``, warning (:class:`~polars_irmetrics.errors.SupportWarning`) when it is
    collected if the policy puts mass (a positive propensity in a column the metrics
    read) on a ``(round_id, position)`` the log never shows: a slot of a slate the
    logging policy never could have shown, whose reward no estimator sees."""
    log_schema = log.collect_schema()
    ids = [
        pl.col(c).cast(pl.Int64) if log_schema[c].is_integer() else pl.col(c).cast(pl.String)
        for c in keys
    ]
    mass = pl.any_horizontal(pl.col(c).cast(pl.Float64) > 0 for c in columns)
    unsupported = (
        policy.filter(mass)
        .select(ids)
        .unique()
        .join(log.select(ids).unique(), on=keys, how="anti", nulls_equal=True)
    )
    return warning_unsupported(
        result,
        unsupported,
        keys,
        lambda n, example: (
            f"the policy puts mass on {n} slot(s) of slates the log never shows (e.g. "
            f"{example}): the logging policy never showed them, so the log cannot support "
            "this policy and every slate estimate of it is biased"
        ),
    )


def _checks(columns: list[str], keys: list[str], reward: str) -> list[Check]:
    checks = []
    for column in columns:
        logged = pl.col(column).cast(pl.Float64)
        checks.append(
            Check(
                f"log_{column}",
                ~(logged > 0.0).fill_null(False) | (logged > 1.0) | logged.is_nan(),
                InvalidValueError,
                f"column {column!r} of the log has {{n}} value(s) that are null, NaN, 0, "
                "negative or above 1 (first: {first}); it is the logging policy's "
                "probability of the logged slate, in (0, 1]",
            )
        )
    reward_col = pl.col(reward)
    checks += [
        Check(
            "reward",
            reward_col.is_null() | reward_col.cast(pl.Float64).is_nan(),
            InvalidValueError,
            f"column {reward!r} of the log has {{n}} null or NaN value(s) (first: {{first}}); "
            "every logged slot needs its reward: drop those rows",
        ),
        Check(
            "policy_round",
            pl.col(_IN_P).is_null(),
            QuerySetError,
            "{n} log row(s) have a (round_id, position) the policy table lacks (first: "
            "{first}): the policy needs the propensities of every logged slot",
        ),
        Check(
            "dup",
            pl.col(_DUP),
            DuplicateError,
            "{n} row(s) share a (round_id, position) with another in the log or the policy "
            "table (first: {first}): keep one row per slot",
        ),
    ]
    for column in columns:
        e = pl.col(_e(column))
        checks.append(
            Check(
                f"policy_{column}",
                pl.col(_IN_P).fill_null(False) & ~e.is_between(0.0, 1.0).fill_null(False),
                InvalidValueError,
                f"column {column!r} of the policy table has {{n}} value(s) that are null, "
                "NaN, negative or above 1 (first: {first}): propensities are in [0, 1]",
            )
        )
    return checks


def _plan(plan: pl.LazyFrame | PartsPlan) -> pl.LazyFrame:
    """The one plan of :func:`~polars_irmetrics.ope.rounds.over_rounds` (``parts=False``)."""
    if isinstance(plan, PartsPlan):  # pragma: no cover - parts=False gives the plan
        raise TypeError("a slate plan")
    return plan
