"""The rank-similarity metrics (``rbo``, ``jaccard@k``, ``kendall_tau@k``,
``intersection@k``, ``unexpectedness@k``...: the run against ``reference=``) on the
engines.

Both engines split the run and the reference by a hash of ``query_id`` (the engine's own
part number, as for the ranking metrics), so that every row of a query, on both sides,
reaches one task. Each task gives its queries' values (the one plan with
``per_query=True`` over its rows); with ``per_query=False`` one task then averages every
query's values as the one plan does (sorted by the keys, each metric's ``summarize``, a
running sum in query order): :func:`polars_irmetrics.evaluate`'s result to the last bit,
whatever the number of parts. The warning of a reference that lacks most of the run's
queries is the whole run's: the engine counts the run's distinct query keys and those
the reference holds (:func:`tally_keys`) and warns as one machine does; so is the
reverse, a run that misses most of the reference's queries, or one spelt apart from its
own (the reference's distinct query keys, :func:`reference_counts`, and the query ids
each side lacks of the other's, gathered for the spelling hint). So is the
warning of the correlations null for their ties: each part's values carry their marks
(:func:`split_marks`), whose tallies the engine adds up (:func:`warn_on_tied`).

Before any task runs, :func:`prepare_agreement` builds the one-machine plan on empty
frames of the schemas: a missing column, a wrong dtype, an unknown metric or a bad
option is raised there with the library's usual message.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from polars_irmetrics.agreement.coverage import (
    HELD,
    HELD_DOCS,
    LISTED,
    REF_QUERIES,
    RUN_DOCS,
    RUN_QUERIES,
    warn_on_queries,
)
from polars_irmetrics.agreement.keys import check_result_keys
from polars_irmetrics.agreement.ties import merged_tally, ties_tally, warn_on_ties
from polars_irmetrics.door.evaluate import evaluate_plan
from polars_irmetrics.engines._partition import (
    ParsedJob,
    _empty,
    _frame,
    _to_arrow,
    check_options_read,
)
from polars_irmetrics.errors import CoverageWarning, InvalidValueError, MetricParameterError
from polars_irmetrics.ground.lists import is_list_column
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    Hint,
    common_id_dtype,
    is_text,
    kind_of,
    systems_row,
)
from polars_irmetrics.metrics.registry import INPUTS, means, parse_metric_list, split_routes

if TYPE_CHECKING:
    pass

__all__ = [
    "AgreementJob",
    "CoverageCounts",
    "PartCounts",
    "agreement_finish",
    "agreement_part",
    "agreement_route",
    "document_counts",
    "lacked_keys",
    "part_counts",
    "prepare_agreement",
    "run_group_rows",
    "split_marks",
    "summed_counts",
    "warn_on_reference",
    "warn_on_tied",
]

#: The tables an engine's evaluate takes that the rank-similarity metrics do not read.
_NOT_READ = (
    "qrels",
    "queries",
    "labels",
    "policy",
    "reward_model",
    "propensities",
    "groups",
    "target",
    "interactions",
    "item_features",
)


def agreement_route(
    engine: str,
    metrics: str | Iterable[str],
    options: EvalOptions,
    tables: Mapping[str, object],
    *,
    run: pa.Schema | None = None,
) -> tuple[tuple[str, ...], bool]:
    """The metric names as a tuple and whether they are the rank-similarity metrics
    (``reference=``), the tables checked against them as :func:`polars_irmetrics.evaluate`
    checks them: another table beside them is refused by name, and a mix with other
    metrics with one machine's message; with ``run`` (the run's schema), a ``rank=`` or
    ``score=`` naming no column of it too
    (:func:`~polars_irmetrics.engines._partition.check_run_columns`).

    Examples
    --------
    >>> agreement_route("Spark", ["rbo"], EvalOptions(), {"reference": object()})
    (('rbo',), True)
    >>> agreement_route("Dask", ["rbo"], EvalOptions(), {"reference": 1, "qrels": 1})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: qrels= is not read by the rank-similarity ...
    """
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    requests = parse_metric_list(names)
    routes = split_routes(requests)  # one machine's refusal of a mix
    if "reference" not in routes:
        if tables.get("reference") is not None:
            raise MetricParameterError(
                "reference= holds the run that rank-similarity metrics (rbo, jaccard@k, "
                "kendall_tau@k...) compare with, and no metric asked for reads it: drop "
                "reference=, or ask for one of them (in a call of its own)"
            )
        return names, False
    if tables.get("reference") is None:
        what, keyword = INPUTS["reference"]
        raise MetricParameterError(
            f"metric {requests[0][0]!r} reads {what}: pass {keyword}=... to "
            f"polars_irmetrics.{engine.lower()}.evaluate"
        )
    for name in _NOT_READ:
        if tables.get(name) is not None:
            raise InvalidValueError(
                f"{name}= is not read by the rank-similarity metrics (rbo, jaccard@k, "
                f"kendall_tau@k, intersection@k...): they read the run and reference=; "
                f"drop {name}="
            )
    # an option none of the metrics reads is refused, as irm.evaluate refuses it
    check_options_read(options, names, labels=False, run=run)
    check_result_keys(requests, options)  # a by= key named like a result's column
    return names, True


@dataclass(frozen=True)
class AgreementJob(ParsedJob):
    """One evaluation of the rank-similarity metrics, resolved on the driver (it
    pickles): the schemas of the two split tables, of a part's per-query rows and of
    the result."""

    metrics: tuple[str, ...]
    options: EvalOptions
    run_schema: pl.Schema
    reference_schema: pl.Schema
    per_query_schema: pl.Schema
    result_schema: pl.Schema
    #: A part's per-query rows: :attr:`per_query_schema` and the ties' mark columns
    #: (:mod:`polars_irmetrics.agreement.ties`), counted for the whole run's warning.
    part_schema: pl.Schema

    @property
    def keys(self) -> list[str]:
        """The per-query rows' keys: the ``by`` keys, then the query id."""
        return [*self.options.by_keys, self.options.query_id]

    @property
    def lists(self) -> tuple[bool, bool]:
        """Whether the run and the reference are list-shaped (``doc_id`` a list: one
        row per query, its ranking in order). Each part's plan turns such a side into
        the long form itself, as one machine does (the query's rows are in one part);
        the engine's counts for the warning of the reference's coverage read a listed
        side's documents one per element, and its queries where their list is not
        empty (the long form's rows)."""
        doc_id = self.options.doc_id
        return (
            is_list_column(self.run_schema, doc_id),
            is_list_column(self.reference_schema, doc_id),
        )


def prepare_agreement(
    run: pa.Schema, reference: pa.Schema, metrics: Iterable[str], options: EvalOptions
) -> AgreementJob:
    """Check everything that can be checked without the data, on the driver: the one
    plan built on empty frames of the schemas (raising the library's errors for columns,
    dtypes, metric names and options).

    Examples
    --------
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                  ("score", pa.float64())])
    >>> list(prepare_agreement(run, run, ["rbo"], EvalOptions()).result_schema)
    ['num_q', 'rbo']
    """
    given = tuple(metrics)
    requests = parse_metric_list(given)
    options = options.replace(buckets=None, partitioned_by=None)
    empty_run, empty_reference = _empty(run).lazy(), _empty(reference).lazy()

    def schema(per_query: bool, warn: bool = True) -> pl.Schema:
        plan = evaluate_plan(
            empty_run,
            requests,
            {"reference": empty_reference},
            options.replace(per_query=per_query),
            warn=warn,
        )
        return plan.collect_schema()

    return AgreementJob(
        metrics=given,
        options=options,
        run_schema=empty_run.collect_schema(),
        reference_schema=empty_reference.collect_schema(),
        per_query_schema=schema(True),
        result_schema=schema(options.per_query),
        part_schema=schema(True, warn=False),
    )


def agreement_part(
    job: AgreementJob,
    run: pa.Table,
    reference: pa.Table | None,
    groups: tuple[tuple[object, ...], ...] | None = None,
    run_groups: tuple[tuple[object, ...], ...] | None = None,
) -> pa.Table:
    """One part's per-query values (every row of its queries, from both tables; the
    reference without rows in this part is an empty frame of its schema), in
    :attr:`AgreementJob.part_schema`: with the ties' marks (:func:`split_marks`). The
    part gives no warning: the whole run's are the driver's (:func:`warn_on_reference`,
    :func:`warn_on_tied`). ``groups``: the whole reference's distinct groups
    (:attr:`~polars_irmetrics.ground.options.EvalOptions.reference_groups`), where the
    job's options do not hold them; ``run_groups``: likewise the whole run's groups of
    the keys the reference lacks
    (:attr:`~polars_irmetrics.ground.options.EvalOptions.run_groups`)."""
    options = job.options.replace(per_query=True)
    if groups is not None:
        options = options.replace(reference_groups=groups)
    if run_groups is not None:
        options = options.replace(run_groups=run_groups)

    def frame(table: pa.Table | None, schema: pl.Schema) -> pl.LazyFrame:
        if table is None:
            return pl.LazyFrame(schema=schema)
        return _frame(table).lazy().select(pl.col(c).cast(t) for c, t in schema.items())

    plan = evaluate_plan(
        frame(run, job.run_schema),
        job.requests,
        {"reference": frame(reference, job.reference_schema)},
        options,
        warn=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        values = plan.collect()
    return _to_arrow(values, job.part_schema)


def split_marks(job: AgreementJob, part: pa.Table) -> tuple[pa.Table, pl.DataFrame]:
    """A part's values (:func:`agreement_part`'s) in :attr:`AgreementJob.per_query_schema`,
    and the tally of its ties' marks (:func:`~polars_irmetrics.agreement.ties.ties_tally`)."""
    frame = _frame(part)
    tally = ties_tally(frame, job.requests, job.keys)
    return part.select(list(job.per_query_schema)), tally


def warn_on_tied(job: AgreementJob, tallies: Iterable[pl.DataFrame]) -> None:
    """The whole run's warning of the correlations null for their ties, from every
    part's tally (:func:`split_marks`), as one machine gives it."""
    warn_on_ties(merged_tally(list(tallies)), job.requests, job.keys)


def agreement_finish(job: AgreementJob, per_query: pa.Table) -> pa.Table:
    """The means of every part's per-query values (:func:`agreement_part`), as the one
    plan takes them: sorted by the keys, one row per ``by`` group (sorted), ``num_q``
    and each metric's ``summarize``."""
    by = list(job.options.by_keys)
    frame = _frame(per_query).select(pl.col(c).cast(t) for c, t in job.per_query_schema.items())
    frame = frame.sort(job.keys)
    summaries = means(job.requests)
    if by:
        out = frame.group_by(by, maintain_order=True).agg(summaries).sort(by)
    else:
        out = frame.select(summaries)
    return _to_arrow(out.select(job.result_schema.names()), job.result_schema)


def warn_on_reference(
    job: AgreementJob,
    total: int,
    held: int,
    docs: int | None,
    held_docs: int | None,
    by_system: tuple[pl.DataFrame, pl.DataFrame | None] | None = None,
    *,
    references: tuple[pl.DataFrame, pl.DataFrame | None] | None = None,
    hint: Hint | None = None,
) -> None:
    """The whole run's warning when the reference lacks most of its queries: ``total``
    distinct query keys of the run (the ``by`` keys and the query id), ``held`` of them
    in the reference (on its keys: the ``by`` keys it has and the query id); or holds
    none of its ``docs`` distinct documents (``held_docs`` of them; ``None``, with no
    count of each system's documents either, where no such warning can be given: the
    reference is known to list some document of the run and of each system, or holds
    none of its queries).
    ``by_system`` (with ``systems=``): each system's counts of its query keys and of its
    documents (the system keys, ``total`` and ``held``), so that a system the reference
    mostly lacks is named, as one machine names it. ``references``: the reverse, the
    reference's queries the run misses (:func:`reference_counts`); ``hint``: the
    reference's query ids the run misses that match one of the run's once their
    spelling is ignored (:func:`~polars_irmetrics.agreement.coverage.missed_hint`)."""
    row: dict[str, object] = {RUN_QUERIES: total, HELD: held}
    if docs is not None:
        row |= {RUN_DOCS: docs, HELD_DOCS: held_docs}
    systems = job.options.system_keys
    if by_system is not None and systems:
        for counts, matched in zip(by_system, (HELD, HELD_DOCS), strict=True):
            if counts is None:
                continue
            renamed = counts.lazy().rename({"held": matched})
            row |= systems_row(renamed, systems, "total", matched).collect().row(0, named=True)
    if references is not None:
        whole, per_system = reference_counts(*references, systems)
        row[REF_QUERIES] = whole
        if per_system is not None and by_system is not None:
            ran = by_system[0].select(*systems, pl.col("held").alias(LISTED))
            dtypes = {
                k: common_id_dtype([ran.schema[k], per_system.schema[k]])
                for k in systems
                if ran.schema[k] != per_system.schema[k]
            }
            ran, per_system = (
                f.with_columns(pl.col(k).cast(t) for k, t in dtypes.items())
                for f in (ran, per_system)
            )
            joined = per_system.join(ran, on=systems, how="left", nulls_equal=True)
            listed = joined.lazy().with_columns(pl.col(LISTED).fill_null(0))
            row |= (
                systems_row(listed, systems, "n", LISTED, below_all=True)
                .collect()
                .row(0, named=True)
            )
    warn_on_queries(row, job.options.query_id, job.options, job.requests, hint)


def reference_counts(
    found: pl.DataFrame, every: pl.DataFrame | None, systems: Sequence[str]
) -> tuple[int, pl.DataFrame | None]:
    """The reference's queries, as one machine counts them (each group of the run it
    serves apart: :func:`~polars_irmetrics.agreement.plan.reference_queries`), from
    ``found``, its distinct query keys counted (column ``n``) per system key it holds,
    and ``every``, the run's distinct groups of the ``by`` keys the reference lacks
    counted per system key among them (``None``: it lacks none): the whole count, and
    with ``systems`` the count per system (the system keys and ``n``).

    >>> found = pl.DataFrame({"n": [3]})
    >>> every = pl.DataFrame({"s": ["x", "y"], "n": [1, 1]})
    >>> whole, per = reference_counts(found, every, ["s"])
    >>> whole, per.sort("s").rows()
    (6, [('x', 3), ('y', 3)])
    """
    groups = every if every is not None else pl.DataFrame({"n": [1]})
    whole = int(found["n"].sum()) * int(groups["n"].sum())
    if not systems:
        return whole, None
    crossed = found.join(groups, how="cross", suffix="_every")
    per_system = crossed.group_by(list(systems)).agg(
        (pl.col("n") * pl.col("n_every")).sum().cast(pl.Int64).alias("n")
    )
    return whole, per_system


def lacked_keys(job: AgreementJob) -> list[str]:
    """The ``by`` keys of the run the reference lacks (one reference serves each of
    their groups), in the order of the keys: those of
    :attr:`~polars_irmetrics.ground.options.EvalOptions.run_groups`."""
    return [k for k in job.options.by_keys if k not in job.reference_schema]


def run_group_rows(job: AgreementJob, run: pl.DataFrame) -> pl.DataFrame:
    """The distinct groups of :func:`lacked_keys` of ``run`` (a part's rows, or the
    whole run's groups gathered), counted on the long form as one machine counts them
    (a list-shaped run's rows whose list holds a document)."""
    return _long_side(run, job.options.doc_id, explode=False).select(lacked_keys(job)).unique()


def reference_keys(job: AgreementJob) -> list[str]:
    """The keys a run's query is found by in the reference: the ``by`` keys the
    reference has (the others: one reference serves every group), then the query id."""
    shared = [k for k in job.options.by_keys if k in job.reference_schema]
    return [*shared, job.options.query_id]


@dataclass(frozen=True)
class PartCounts:
    """What one part of a split run (every row of its queries, from both tables) counts
    for the whole run's warning of the reference's coverage (:func:`part_counts`).
    The query keys of one query id are in one part only, so its distinct keys are no
    other part's: the counts add up across parts. The documents do not (one document
    is listed in many queries): each part proves only whether some document of its run
    is listed by its reference (the whole run's ``held_docs`` is then above 0, and so is
    each system's it proves), and keeps its distinct documents for the whole count,
    read only where no part proves it (:func:`needs_documents`)."""

    #: The run's distinct query keys, and how many of them the reference holds.
    total: int
    matched: int
    #: Per system (its keys, ``total`` and ``held``): the run's query keys counted.
    by_system: pl.DataFrame | None
    #: The reference's distinct query keys (on its keys), counted (``n``) per system key
    #: it holds.
    found: pl.DataFrame
    #: The run's distinct groups of the ``by`` keys the reference lacks (``None``: it
    #: lacks none).
    every: pl.DataFrame | None
    #: The query ids (as text) of the run the reference lacks, and of the reference the
    #: run lacks (``None`` where the ids are not text).
    spelt: tuple[pl.DataFrame, pl.DataFrame] | None
    #: Whether a document of the run is listed by the reference (this part's); with
    #: systems, the systems of the run's documents and those of them it proves so.
    proven: bool
    seen: pl.DataFrame | None
    proven_systems: pl.DataFrame | None
    #: The run's distinct documents (with its system keys) and the reference's, in one
    #: dtype.
    documents: tuple[pl.DataFrame, pl.DataFrame]


@dataclass(frozen=True)
class CoverageCounts:
    """The whole run's counts for :func:`warn_on_reference`, every part's added up
    (:func:`summed_counts`); ``needs_documents``: whether the documents' counts must be
    read (no part proved that the reference lists a document of the run, or of some
    system)."""

    total: int
    matched: int
    by_system: pl.DataFrame | None
    found: pl.DataFrame
    every: pl.DataFrame | None
    spelt: tuple[pl.DataFrame, pl.DataFrame] | None
    needs_documents: bool


def _long_side(frame: pl.DataFrame, doc_id: str, explode: bool) -> pl.DataFrame:
    """A side's rows as the long form holds them: a list-shaped side's rows whose list
    holds a document (with ``explode``, one row per element); another side as it is."""
    dtype = frame.schema[doc_id]
    if not isinstance(dtype, pl.List | pl.Array):
        return frame
    kept = frame.with_columns(pl.col(doc_id).cast(pl.List(dtype.inner)))
    kept = kept.filter(pl.col(doc_id).list.len() > 0)
    return kept.explode(doc_id) if explode else kept


def _aligned(
    left: pl.DataFrame, right: pl.DataFrame, columns: Sequence[str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``left`` and ``right`` with each id column of ``columns`` whose dtypes differ
    cast to :func:`~polars_irmetrics.ground.validate.common_id_dtype` of both (ids of
    one kind; another column is left as it is: the part's plan refused two kinds)."""
    for column in columns:
        dtypes = [left.schema[column], right.schema[column]]
        if dtypes[0] == dtypes[1] or any(kind_of(d) is None for d in dtypes):
            continue
        common = common_id_dtype(dtypes)
        left, right = (f.with_columns(pl.col(column).cast(common)) for f in (left, right))
    return left, right


def part_counts(job: AgreementJob, run: pl.DataFrame, reference: pl.DataFrame) -> PartCounts:
    """One part's counts (:class:`PartCounts`), from its rows of the run and of the
    reference (in :attr:`AgreementJob.run_schema` and
    :attr:`AgreementJob.reference_schema`): null keys match null keys, as one
    machine's joins match them.

    Examples
    --------
    >>> schema = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                     ("score", pa.float64())])
    >>> job = prepare_agreement(schema, schema, ["rbo"], EvalOptions())
    >>> run = pl.DataFrame({"query_id": ["a", "b"], "doc_id": ["x", "y"], "score": [1.0, 1.0]})
    >>> counts = part_counts(job, run, run.filter(pl.col("query_id") == "b"))
    >>> counts.total, counts.matched, counts.proven, counts.found.rows()
    (2, 1, True, [(1,)])
    """
    options = job.options
    doc_id, query_id = options.doc_id, options.query_id
    on = reference_keys(job)
    systems = list(options.system_keys)
    ran = _long_side(run, doc_id, explode=False).select(job.keys).unique()
    found = _long_side(reference, doc_id, explode=False).select(on).unique()
    ran, found = _aligned(ran, found, on)
    held = f"{INTERNAL}held"
    joined = ran.join(
        found.with_columns(pl.lit(True).alias(held)), on=on, how="left", nulls_equal=True
    )
    counts = [
        pl.len().cast(pl.Int64).alias("total"),
        pl.col(held).count().cast(pl.Int64).alias("held"),
    ]
    by_system = joined.group_by(systems).agg(counts) if systems else None
    found_systems = [k for k in systems if k in on]
    n = pl.len().cast(pl.Int64).alias("n")
    counted = found.group_by(found_systems).agg(n) if found_systems else found.select(n)
    missing = [k for k in job.keys if k not in on]
    every = _long_side(run, doc_id, explode=False).select(missing).unique() if missing else None
    spelt = None
    if is_text(job.run_schema[query_id]):
        text = pl.col(query_id).cast(pl.String)
        ids = [side.select(text).unique() for side in (ran, found)]
        spelt = (
            ids[0].join(ids[1], on=query_id, how="anti", nulls_equal=True),
            ids[1].join(ids[0], on=query_id, how="anti", nulls_equal=True),
        )
    docs = _long_side(run, doc_id, explode=True).select(*systems, doc_id).unique()
    listed = _long_side(reference, doc_id, explode=True).select(doc_id).unique()
    docs, listed = _aligned(docs, listed, [doc_id])
    hit = docs.join(listed, on=doc_id, how="semi", nulls_equal=True)
    return PartCounts(
        total=ran.height,
        matched=joined[held].count(),
        by_system=by_system,
        found=counted,
        every=every,
        spelt=spelt,
        proven=hit.height > 0,
        seen=docs.select(systems).unique() if systems else None,
        proven_systems=hit.select(systems).unique() if systems else None,
        documents=(docs, listed),
    )


def summed_counts(job: AgreementJob, parts: Sequence[PartCounts]) -> CoverageCounts:
    """The whole run's counts from every part's (:func:`part_counts`), and whether its
    documents' counts are needed: only where the reference's queries line up with some
    of the run's (``matched``) and no part proved that the reference lists a document
    of the run (or of some system), the one case :func:`warn_on_queries` warns of."""
    systems = list(job.options.system_keys)
    on = reference_keys(job)
    total = sum(p.total for p in parts)
    matched = sum(p.matched for p in parts)
    by_system = None
    if systems:
        frames = pl.concat([p.by_system for p in parts if p.by_system is not None])
        by_system = frames.group_by(systems).agg(pl.col("total", "held").sum())
    found_systems = [k for k in systems if k in on]
    found = pl.concat([p.found for p in parts])
    found = (
        found.group_by(found_systems).agg(pl.col("n").sum())
        if found_systems
        else found.select(pl.col("n").sum().cast(pl.Int64))
    )
    every = None
    missing = [k for k in job.keys if k not in on]
    if missing:
        groups = pl.concat([p.every for p in parts if p.every is not None]).unique()
        own = [k for k in systems if k in missing]
        n = pl.len().cast(pl.Int64).alias("n")
        every = groups.group_by(own).agg(n) if own else groups.select(n)
    spelt = None
    if parts and parts[0].spelt is not None:
        spelt = (
            pl.concat([p.spelt[0] for p in parts if p.spelt is not None]),
            pl.concat([p.spelt[1] for p in parts if p.spelt is not None]),
        )
    needs = bool(matched) and not any(p.proven for p in parts)
    if matched and not needs and systems:
        seen = pl.concat([p.seen for p in parts if p.seen is not None]).unique()
        proven = pl.concat([p.proven_systems for p in parts if p.proven_systems is not None])
        needs = seen.join(proven, on=systems, how="anti", nulls_equal=True).height > 0
    return CoverageCounts(total, matched, by_system, found, every, spelt, needs)


def document_counts(
    job: AgreementJob, documents: Sequence[tuple[pl.DataFrame, pl.DataFrame]]
) -> tuple[int, int, pl.DataFrame | None]:
    """The run's distinct documents and how many of them the reference lists (for any
    query), and with systems each system's (its keys, ``total`` and ``held``), from
    every part's documents (:attr:`PartCounts.documents`)."""
    doc_id = job.options.doc_id
    systems = list(job.options.system_keys)
    held = f"{INTERNAL}held"
    docs = pl.concat([d for d, _ in documents]).unique()
    listed = pl.concat([f for _, f in documents]).unique()
    marked = docs.join(
        listed.with_columns(pl.lit(True).alias(held)), on=doc_id, how="left", nulls_equal=True
    )
    whole = marked.select(doc_id, held).unique(doc_id)
    by_system = None
    if systems:
        by_system = marked.group_by(systems).agg(
            pl.len().cast(pl.Int64).alias("total"),
            pl.col(held).count().cast(pl.Int64).alias("held"),
        )
    return whole.height, whole[held].count(), by_system
