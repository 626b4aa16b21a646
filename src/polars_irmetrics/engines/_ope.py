"""Off-policy estimators (``ips``, ``snips``, ``dr``, ``slate_ips``, ``cascade_dr``...) on
the engines.

Both engines split the log, the ``policy=`` table and the ``reward_model=`` table by a
hash of ``round_id`` (the engine's own part number, integers hashed as 64-bit), so that
every row of a round, in the three tables, reaches one task. Each task gives its exact
sums per ``by`` group (:func:`~polars_irmetrics.ope.parts.part_sums`: integers, their
Int128 columns as two Int64 halves), and one task adds them and computes the estimates
(:func:`~polars_irmetrics.ope.parts.merge_sums`): the same bits as
:func:`polars_irmetrics.evaluate` in one plan and out of core, whatever the number of
parts. The data checks run in each task and are raised after the merge, naming the
least failing round of the whole log and the count over it; the support warning
(:class:`~polars_irmetrics.errors.SupportWarning`) reads the distinct actions (and
positions) of the whole log and policy, gathered on the driver (of a policy in obp's
list shape, ``prob`` a list per round, its lists' positive items, found by each task:
:func:`taken_slots`), the few the log never shows then looked up in the logged rounds;
the slate estimators' reads the slots of logged rounds' slates the log never shows,
counted by a job of the engine (:func:`warn_slates`). The list
shape is read by each task as one machine reads it.

The intervals (``ci=``) are exact sums, merged like the estimates: the normal
interval's, and the bootstrap's per bucket of log rows (of rounds for the slate
estimators and ``cascade_dr``; each part's rows beside its sums:
:mod:`polars_irmetrics.ope.intervals`, :mod:`polars_irmetrics.ope.ratio_intervals`),
resampled by the task that merges them. ``per_query=True`` takes two passes: the first
merges each ``by`` group's mean weights (:func:`ope_summary`, gathered on the driver:
the whole log's checks are raised there), the second gives each part's rows with them
(:func:`ope_rows`); the rows are not in a global order (the one plan sorts them by the
``by`` keys, ``round_id`` and ``position``).

Before any task runs, :func:`prepare_ope` builds the one-machine plan on empty frames of
the schemas: a missing column, a wrong dtype, an unknown metric or a bad option is raised
there by the library, with its usual message.

The rewards (and ``q_hat``) are read times one power of two chosen from the whole log's
largest reward magnitude (:mod:`polars_irmetrics.ope.scale`: small rewards lose no digit
in the exact sums), the estimates divided by it last: a first pass, one job over the
log's reward column, gives each partition's largest magnitude (:func:`ope_peak`), and
:func:`scaled_job` puts the scale they give in the job every task reads (the one plan's,
so the same sums, and the same verdict of the checks of a reward or ``q_hat`` too small
beside the largest reward, or of a log of subnormal rewards, which read it).

Each sum is read times a power of two of its own (the importance weights all tiny or
all huge, and their products: :class:`~polars_irmetrics.ope.sums.Summary`'s
``scaled``), from the whole log's largest magnitude of its terms: the parts' sums are
computed at the call with every such scale 1, with each part's largest magnitudes, and
where the whole log's give other scales (:func:`rescaled_job`; 1 wherever the weights
are of ordinary size) every part is read again at them, the same sums as the one plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from polars_irmetrics.door.evaluate import evaluate_plan
from polars_irmetrics.engines._partition import (
    ParsedJob,
    _empty,
    _frame,
    _to_arrow,
    check_options_read,
)
from polars_irmetrics.errors import (
    ColumnTypeError,
    InvalidValueError,
    MetricParameterError,
    SupportWarning,
)
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.spelling import round_key
from polars_irmetrics.ground.validate import INTERNAL, is_text, warn_from_plan
from polars_irmetrics.metrics.registry import parse_metric_list, split_routes
from polars_irmetrics.ope.checks import (
    listed_slots,
    round_hint,
    slate_columns,
    slate_unsupported_text,
    unshrunk_labels,
    warn_unshrunk,
)
from polars_irmetrics.ope.parts import (
    OpeTables,
    merge_sums,
    part_rows,
    part_sums,
    rescaled_peaks,
    warn_unsupported_parts,
    warned,
)
from polars_irmetrics.ope.scale import SCALE, reward_peak, scale_from_peaks

if TYPE_CHECKING:
    pass

__all__ = [
    "PEAK_SCHEMA",
    "PROB",
    "ROUND_KEY",
    "InLoggedRounds",
    "OpeJob",
    "check_ope_inputs",
    "keyed_rounds",
    "lacks_rounds",
    "ope_part",
    "ope_peak",
    "ope_route",
    "ope_rows",
    "ope_summary",
    "prepare_ope",
    "reads_policy",
    "rescaled_job",
    "round_schema",
    "scaled_job",
    "slots",
    "spelt_rounds",
    "taken_schema",
    "taken_slots",
    "warn_groups",
    "warn_slates",
    "warn_support",
    "warn_unshrunk_result",
]

#: The policy's probability column: the support warning reads the actions where it is
#: positive.
PROB = "prob"
#: :func:`ope_peak`'s schema: one row, the part's largest reward magnitude.
PEAK_SCHEMA = pl.Schema({SCALE: pl.Float64()})


@dataclass(frozen=True)
class OpeJob(ParsedJob):
    """One off-policy evaluation, resolved on the driver (it pickles): the schemas of
    the three tables, of a part's sums and of the result."""

    metrics: tuple[str, ...]
    options: EvalOptions
    by: tuple[str, ...]
    log_schema: pl.Schema
    policy_schema: pl.Schema
    model_schema: pl.Schema | None
    part_schema: pl.Schema
    result_schema: pl.Schema
    #: ``per_query=True``: the merged sums' schema (each ``by`` group's mean weight),
    #: which the second pass reads (:func:`ope_rows`); else the result's.
    merged_schema: pl.Schema
    #: The rewards' scale of the whole log (:func:`scaled_job`, after the first pass
    #: over the log's rewards); ``None`` before it.
    scale: float | None = None
    #: The whole log's largest magnitude of each sum's terms, where the parts' sums are
    #: read again at the scales they give (:func:`rescaled_job`); ``None``: every sum's
    #: scale 1 (the first pass of the sums, which stands in the usual case).
    peaks: dict[str, float | None] | None = None
    #: The sentence of round ids spelt apart that follows the refusal of logged rounds
    #: the policy lacks (:func:`spelt_rounds`, found by the driver where the first pass
    #: counts such rounds); ``None``: none found.
    round_hint: str | None = None
    #: Alike, the sentence that follows the refusal of logged rounds without a
    #: ``q_hat``, where the reward model spells the log's round ids apart.
    model_round_hint: str | None = None

    @property
    def reward_scale(self) -> float:
        """:attr:`scale`, which every part reads (found by the first pass)."""
        if self.scale is None:  # pragma: no cover - the engines find it first
            raise TypeError("the rewards' scale is found before any part: scaled_job()")
        return self.scale

    @property
    def listed(self) -> bool:
        """Whether the policy is in obp's list shape (``prob`` a list per round)."""
        return PROB in self.policy_schema and isinstance(
            self.policy_schema[PROB], pl.List | pl.Array
        )

    def empty(self) -> OpeTables:
        """Empty frames of the three tables' schemas."""
        model = None if self.model_schema is None else pl.LazyFrame(schema=self.model_schema)
        return OpeTables(
            pl.LazyFrame(schema=self.log_schema), pl.LazyFrame(schema=self.policy_schema), model
        )


def reads_policy(metrics: Iterable[str]) -> bool:
    """Whether the metrics are off-policy estimators (a mix with others is refused).

    Examples
    --------
    >>> reads_policy(["ips", "dr"]), reads_policy(["ndcg@10"])
    (True, False)
    """
    return "ope" in split_routes(parse_metric_list(tuple(metrics)))


def ope_route(
    engine: str, metrics: str | Iterable[str], options: EvalOptions, tables: dict[str, object]
) -> tuple[tuple[str, ...], bool]:
    """The engines' first step: the metric names as a tuple (they are read twice) and
    whether they are off-policy estimators (:func:`reads_policy`), with the tables
    checked against them (:func:`check_ope_inputs`) and, for them, the options read.

    Examples
    --------
    >>> ope_route("Dask", "ips", EvalOptions(), {"policy": object()})
    (('ips',), True)
    """
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    ope = reads_policy(names)
    check_ope_inputs(engine, options, ope, tables)
    if ope:  # an option none of the metrics reads is refused, as irm.evaluate refuses it
        check_options_read(options, names, labels=False)
    return names, ope


def check_ope_inputs(
    engine: str,
    options: EvalOptions,
    ope: bool,
    tables: dict[str, object],
) -> None:
    """Refuse by name a table the metrics do not read (nothing is ignored silently):
    ``policy`` or ``reward_model`` without off-policy estimators; ``qrels``,
    ``queries``, ``labels`` or ``partitioned_by`` with them, and no ``policy``.

    Examples
    --------
    >>> check_ope_inputs("Spark", EvalOptions(), False, {"policy": object()})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: policy= is read by the off-policy ...
    """
    if not ope:
        for name in ("policy", "reward_model"):
            if tables.get(name) is not None:
                raise MetricParameterError(
                    f"{name}= is read by the off-policy estimators (ips, snips, dm, dr...), "
                    f"and no metric asked for reads it: drop {name}=, or ask for them"
                )
        return
    for name in ("qrels", "queries", "labels"):
        if tables.get(name) is not None:
            raise InvalidValueError(
                f"{name}= is not read by the off-policy estimators (ips, snips, dm, dr...): "
                f"they read the log, policy= and reward_model=; drop {name}="
            )
    if options.partitioned_by is not None:
        raise InvalidValueError(
            f"partitioned_by= is not available for the off-policy estimators on {engine}: "
            "the log, policy and reward model are shuffled by round; drop partitioned_by="
        )
    if tables.get("policy") is None:
        raise MetricParameterError(
            "the off-policy estimators need the evaluation policy: pass policy= (one row "
            "per (round_id, action) with its 'prob')"
        )


def _refuse_text_lists(policy: pa.Schema, reward_model: pa.Schema | None, action: str) -> None:
    """The policy and the reward model are long tables (a number per row) or obp's list
    shape (a list per round, Arrow list types: what Spark's arrays and Dask's
    ``pd.ArrowDtype`` lists are). A list that went through pandas objects arrives as
    text (Dask turns object columns into strings) or untyped: refused, naming the ways
    to give it.

    >>> schema = pa.schema([("round_id", pa.int64()), ("prob", pa.large_string())])
    >>> _refuse_text_lists(schema, None, "action")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: policy= has its column 'prob' as large_string...
    >>> _refuse_text_lists(pa.schema([("prob", pa.list_(pa.float64()))]), None, "action")
    """
    for name, column, schema in (
        ("policy", "prob", policy),
        ("reward_model", "q_hat", reward_model),
    ):
        if schema is None or column not in schema.names:
            continue
        kind = schema.field(column).type
        numeric = pa.types.is_floating(kind) or pa.types.is_integer(kind)
        listed = (
            pa.types.is_list(kind)
            or pa.types.is_large_list(kind)
            or pa.types.is_fixed_size_list(kind)
        )
        if numeric or listed or pa.types.is_null(kind):
            continue
        raise ColumnTypeError(
            f"{name}= has its column {column!r} as {kind}: a number per (round_id, "
            f"{action}) row, or a list per round indexed by {action} (obp's shape) as an "
            "Arrow list (Spark's array<double>; in Dask a pd.ArrowDtype(pa.list_("
            "pa.float64())) column, as dd.read_parquet(..., dtype_backend='pyarrow') "
            "reads it: a list of pandas objects becomes text), or explode it, e.g. in "
            f"polars .with_columns(pl.int_ranges(pl.col({column!r}).list.len())"
            f".alias({action!r})).explode({column!r}, {action!r})"
        )


def prepare_ope(
    log: pa.Schema,
    policy: pa.Schema,
    reward_model: pa.Schema | None,
    metrics: Iterable[str],
    options: EvalOptions,
) -> OpeJob:
    """Check everything that can be checked without the data, on the driver: the one
    plan and a part's sums built on empty frames of the schemas (raising the library's
    errors for columns, dtypes, metric names and options).

    Examples
    --------
    >>> import pyarrow as pa
    >>> log = pa.schema([("round_id", pa.int64()), ("action", pa.string()),
    ...                  ("reward", pa.float64()), ("pscore", pa.float64())])
    >>> pi = pa.schema([("round_id", pa.int32()), ("action", pa.string()),
    ...                 ("prob", pa.float64())])
    >>> list(prepare_ope(log, pi, None, ["snips"], EvalOptions()).result_schema)
    ['num_rows', 'snips', 'snips_ess', 'snips_max_weight']
    >>> prepare_ope(log, pi, None, ["snips"], EvalOptions(propensity="p"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnNotFoundError: column 'p' not found in the log ...
    """
    given = tuple(metrics)
    requests = parse_metric_list(given)
    _refuse_text_lists(policy, reward_model, options.action)
    options = options.replace(buckets=None, partitioned_by=None)
    tables = OpeTables(
        _empty(log).lazy(),
        _empty(policy).lazy(),
        None if reward_model is None else _empty(reward_model).lazy(),
    )
    result = evaluate_plan(
        tables.log,
        requests,
        {"policy": tables.policy, "reward_model": tables.reward_model},
        options,
    ).collect_schema()
    part = part_sums(tables, requests, options).collect_schema()
    merged = result
    if options.per_query:
        sums = pl.LazyFrame(schema=part)
        merged = merge_sums(sums, tables, requests, options, warn=False).collect_schema()
    return OpeJob(
        metrics=given,
        options=options,
        by=options.attribute_keys,
        log_schema=tables.log.collect_schema(),
        policy_schema=tables.policy.collect_schema(),
        model_schema=None if tables.reward_model is None else tables.reward_model.collect_schema(),
        part_schema=part,
        result_schema=result,
        merged_schema=merged,
    )


def ope_peak(job: OpeJob, log: pa.Table) -> pa.Table:
    """The first pass over one part of the log (any split: its reward column will do):
    its largest reward magnitude (:data:`PEAK_SCHEMA`; null without a reward), read as
    the one plan reads the column.

    >>> import pyarrow as pa
    >>> log = pa.schema([("round_id", pa.int64()), ("action", pa.int64()),
    ...                  ("reward", pa.float64()), ("pscore", pa.float64())])
    >>> pi = pa.schema([("round_id", pa.int64()), ("action", pa.int64()),
    ...                 ("prob", pa.float64())])
    >>> job = prepare_ope(log, pi, None, ["ips"], EvalOptions())
    >>> ope_peak(job, pa.table({"reward": [0.0, -2e-9, 1e-9]})).column(0).to_pylist()
    [2e-09]
    """
    reward = job.options.reward
    frame = _frame(log).lazy().select(pl.col(reward).cast(job.log_schema[reward]))
    return _to_arrow(frame.select(reward_peak(reward)).collect(), PEAK_SCHEMA)


def scaled_job(job: OpeJob, peaks: pa.Table) -> OpeJob:
    """``job`` with the rewards' scale of the whole log, from every part's
    :func:`ope_peak` (stacked)."""
    frame = _frame(peaks).select(pl.col(SCALE).cast(pl.Float64))
    return replace(job, scale=scale_from_peaks(frame))


def ope_part(
    job: OpeJob, log: pa.Table, policy: pa.Table | None, reward_model: pa.Table | None
) -> pa.Table:
    """One part's sums (every row of its rounds, from the three tables; a table without
    rows in this part is an empty frame of its schema)."""
    tables = _part_tables(job, log, policy, reward_model)
    sums = part_sums(tables, job.requests, job.options, job.reward_scale, job.peaks)
    return _to_arrow(sums.collect(), job.part_schema)


def warn_groups(job: OpeJob, sums: pa.Table) -> None:
    """The support warning of the ``by`` groups where the policy takes none of the
    logged actions, as one machine gives it
    (:func:`~polars_irmetrics.ope.evaluate.warn_unsupported_groups`), on the driver from
    every part's :func:`ope_part` (stacked): each group's count and largest weight."""
    parts = _frame(sums).lazy().select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    warn_unsupported_parts(parts, list(job.by), [label for label, _ in job.requests])


def rescaled_job(job: OpeJob, sums: pa.Table) -> OpeJob | None:
    """``job`` reading its parts again at the scales of the whole log's sums, where the
    parts' sums of a first pass (every part's :func:`ope_part`, stacked) were read at
    others (weights all tiny or all huge:
    :func:`~polars_irmetrics.ope.parts.rescaled_peaks`); ``None`` where they stand."""
    parts = _frame(sums).select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    peaks = rescaled_peaks(parts, job.empty(), job.requests, job.options)
    return None if peaks is None else replace(job, peaks=peaks)


def _part_tables(
    job: OpeJob, log: pa.Table | None, policy: pa.Table | None, reward_model: pa.Table | None
) -> OpeTables:
    """One part's three tables in their schemas (a table without rows in this part is an
    empty frame of its schema)."""

    def frame(table: pa.Table | None, schema: pl.Schema) -> pl.LazyFrame:
        if table is None:
            return pl.LazyFrame(schema=schema)
        return _frame(table).lazy().select(pl.col(c).cast(t) for c, t in schema.items())

    model = None
    if job.model_schema is not None:
        model = frame(reward_model, job.model_schema)
    return OpeTables(frame(log, job.log_schema), frame(policy, job.policy_schema), model)


def ope_summary(job: OpeJob, sums: pa.Table) -> pa.Table:
    """The result of whole ``by`` groups from the sums of every part, the checks raised
    (the support warning is the driver's: :func:`warn_support`)."""
    parts = _frame(sums).lazy().select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    merged = merge_sums(
        parts,
        job.empty(),
        job.requests,
        job.options,
        warn=False,
        round_hint=job.round_hint,
        model_round_hint=job.model_round_hint,
    )
    return _to_arrow(merged.collect(), job.merged_schema)


def ope_rows(
    job: OpeJob,
    weights: pa.Table,
    log: pa.Table,
    policy: pa.Table | None,
    reward_model: pa.Table | None,
) -> pa.Table:
    """``per_query=True``'s second pass over one part: each log row's contribution, the
    self-normalised estimators reading the mean weight of their whole ``by`` group from
    ``weights`` (:func:`ope_summary` of the first pass, gathered and broadcast)."""
    tables = _part_tables(job, log, policy, reward_model)
    means = _frame(weights).lazy().select(pl.col(c).cast(t) for c, t in job.merged_schema.items())
    rows = part_rows(tables, job.requests, job.options, means, job.reward_scale)
    return _to_arrow(rows.collect(), job.result_schema)


def lacks_rounds(job: OpeJob, sums: pa.Table, table: str = "policy=") -> bool:
    """Whether the first pass's sums (every part's :func:`ope_part`, stacked) count a
    logged round the policy lacks (``table="reward_model="``: a logged row without a
    ``q_hat``), of text round ids: the refusal whose hint of ids spelt apart the engine
    then looks for (:func:`spelt_rounds`)."""
    count = f"{INTERNAL}n_{_REFUSALS[table]}"
    round_id = job.options.round_id
    if count not in sums.column_names or not is_text(job.log_schema[round_id]):
        return False
    return bool(_frame(sums.select([count])).select(pl.col(count).cast(pl.Int64).sum()).item())


def keyed_rounds(job: OpeJob, rounds: pa.Table) -> pa.Table:
    """One part of a table's distinct round ids with their :func:`~polars_irmetrics.ground.\
spelling.round_key` (column :data:`ROUND_KEY`), in an engine's task."""
    round_id = job.options.round_id
    frame = _frame(rounds).select(pl.col(round_id).cast(pl.String))
    keyed = frame.with_columns(round_key(pl.col(round_id)).alias(ROUND_KEY))
    return _to_arrow(keyed, round_schema(round_id))


def spelt_rounds(
    job: OpeJob, missing: pa.Table, taken: pa.Table, table: str = "policy="
) -> OpeJob:
    """``job`` with the hint of round ids spelt apart (:func:`~polars_irmetrics.ope.\
checks.round_hint`'s words, one machine's), from the log's rounds the policy lacks
    (``missing``) and the policy's rounds (``taken``) of the same :data:`ROUND_KEY`, the
    only ones that can match once their spelling is ignored, gathered by the engine
    (``table="reward_model="``: the reward model's, its hint
    :attr:`OpeJob.model_round_hint`)."""
    round_id = job.options.round_id
    log, policy = (
        _frame(t).lazy().select(pl.col(round_id).cast(pl.String)) for t in (missing, taken)
    )
    hint = round_hint(log, policy, round_id, table)
    said = hint() if hint is not None else None
    if table == "policy=":
        return replace(job, round_hint=said)
    return replace(job, model_round_hint=said)


#: The check whose refusal the hint of round ids spelt apart with each table follows
#: (:func:`lacks_rounds`).
_REFUSALS = {"policy=": "policy_round", "reward_model=": "q_hat"}


#: The column of :func:`keyed_rounds`'s key.
ROUND_KEY = f"{INTERNAL}round_key"


def round_schema(round_id: str) -> pl.Schema:
    """The schema of :func:`keyed_rounds`."""
    return pl.Schema({round_id: pl.String(), ROUND_KEY: pl.String()})


def warn_unshrunk_result(job: OpeJob, result: pa.Table) -> None:
    """The warning of a ``dr_os(lambda=0)`` estimate that is NaN, as one machine gives
    it (:func:`~polars_irmetrics.ope.checks.warn_unshrunk`), on the driver from the
    computed means (a few rows; Spark's merge task keeps its warnings)."""
    if job.options.per_query or not unshrunk_labels(job.requests):
        return
    frame = _frame(result).lazy()
    warn_unshrunk(frame, job.requests, list(job.by)).collect()


def slots(job: OpeJob) -> tuple[list[str], list[str]]:
    """The log's and the policy's columns the support warning reads (the action, and the
    position where the log has one), for the engine to gather distinct, and whether it
    applies (single-action estimators and ``cascade_dr``; an empty list for the slate
    estimators, whose warning reads slots of each round: :func:`warn_slates`)."""
    if slate_columns(job.requests):  # one call's estimators are all of one kind
        return [], []
    options = job.options
    slot = [options.action] + ([options.position] if options.position in job.log_schema else [])
    return slot, [*slot, PROB]


def taken_slots(job: OpeJob, policy: pa.Table, *, rounds: bool = False) -> pa.Table:
    """The distinct actions (with the position, where the log has one) to which one part
    of a policy in the list shape gives a positive probability: the list's indexes, in
    the log's dtypes, with ``prob`` 1.0 (what :func:`warn_support` reads); with
    ``rounds``, each with the round that takes it (first column)."""
    names = slots(job)[0]
    frame = _frame(policy).lazy().select(pl.col(c).cast(t) for c, t in job.policy_schema.items())
    keys = [job.options.round_id] if rounds else []
    taken = listed_slots(frame, [pl.col(c) for c in [*keys, *names[1:]]], job.options.action, PROB)
    in_log = (pl.col(c).cast(job.log_schema[c]) for c in [*keys, *names])
    schema = taken_schema(job, rounds=rounds)
    return _to_arrow(taken.select(*in_log, pl.lit(1.0).alias(PROB)).collect(), schema)


def taken_schema(job: OpeJob, *, rounds: bool = False) -> pl.Schema:
    """The schema of :func:`taken_slots`."""
    keys = [job.options.round_id] if rounds else []
    return pl.Schema(
        [*((c, job.log_schema[c]) for c in [*keys, *slots(job)[0]]), (PROB, pl.Float64())]
    )


#: ``candidates -> those of them the policy takes in a round the log has`` (the
#: engine's lookup, for the few slots the log never shows; :func:`warn_support`).
InLoggedRounds = Callable[[pl.DataFrame], pl.DataFrame]


def warn_slates(count: int, example: str | None) -> None:
    """The slate estimators' support warning, as one machine gives it, from the
    engine's count of unsupported slots of logged rounds and the least of them
    (``"round_id=3, position=2"``, as text): slots the policy puts mass on, a positive
    value in one of the columns :func:`~polars_irmetrics.ope.checks.slate_columns`
    names, and the log never shows."""
    if count:
        warn_from_plan(slate_unsupported_text(count, str(example)), SupportWarning)


def warn_support(
    job: OpeJob,
    log_slots: pl.DataFrame,
    policy_slots: pl.DataFrame,
    in_logged_rounds: InLoggedRounds | None = None,
) -> None:
    """Warn as :func:`polars_irmetrics.evaluate` does when the policy gives a positive
    probability to an action (at a position) the log never shows, in a round the log
    has: from the distinct actions of the whole log and of the policy, gathered by the
    engine; the slots the log never shows (few or none) are then looked up by
    ``in_logged_rounds`` (a policy may cover rounds beyond the log's, which no estimate
    reads)."""
    names = slots(job)[0]
    if not names:
        return
    log = log_slots.lazy().select(pl.col(c).cast(job.log_schema[c]) for c in names)
    kinds = job.log_schema if job.listed else job.policy_schema  # lists: the log's action
    policy = policy_slots.lazy().select(
        *(pl.col(c).cast(kinds[c]) for c in names), pl.col(PROB).cast(pl.Float64)
    )
    if in_logged_rounds is not None:
        shown = log.select(pl.col(c).cast(kinds[c]) for c in names).unique()
        candidates = (
            policy.select(names).unique().join(shown, on=names, how="anti", nulls_equal=True)
        ).collect()
        if not candidates.height:
            return
        taken = in_logged_rounds(candidates)
        # the slots taken in logged rounds that the log never shows, and those it shows
        # (which the warning's count of the logged slots the policy takes reads)
        supported = policy.filter(pl.col(PROB) > 0).select(names).unique()
        supported = supported.join(shown, on=names, how="semi", nulls_equal=True)
        policy = pl.concat(
            [taken.lazy().select(pl.col(c).cast(kinds[c]) for c in names), supported]
        ).with_columns(pl.lit(1.0).alias(PROB))
    one_row = pl.LazyFrame({"row": [0]})
    warned(one_row, OpeTables(log, policy, None), job.requests, job.options).collect()
