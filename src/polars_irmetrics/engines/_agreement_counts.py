"""The counts of the rank-similarity metrics' coverage warning, taken by the parts.

An engine that splits the run and the reference by a hash of ``query_id`` (every row of
a query, on both sides, in one part) counts the warning's queries where it computes the
values: each part counts its run's distinct query keys and those its reference holds
(:func:`part_counts`), the reference's distinct query keys, and the run's distinct
groups of the ``by`` keys the reference lacks; the driver adds them up
(:func:`merged_counts`): a query's keys are in one part only, so the sums are the whole
run's counts (the groups, found in many parts, are gathered and counted once). The
documents are another matter: the run's distinct documents, and how many of them the
reference lists for any query, join across queries. A part that sees a document of its
run (of a system) listed by its reference proves that the reference lists some of them,
and the warning of documents is given only where it lists none (of the whole run, or of
one system: :func:`~polars_irmetrics.agreement.coverage.warn_on_queries`): the engine
counts the documents over the whole tables only where some system (or the run) has no
such proof (:attr:`Counted.unproven`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from polars_irmetrics.engines._agreement import AgreementJob, reference_keys
from polars_irmetrics.engines._partition import _frame
from polars_irmetrics.ground.validate import INTERNAL, common_id_dtype

__all__ = ["Counted", "PartCounts", "merged_counts", "part_counts"]

_HELD, _SHOWN = f"{INTERNAL}held", f"{INTERNAL}shown"


@dataclass(frozen=True)
class PartCounts:
    """One part's counts for the warning (it pickles: a task hands it to the driver).

    Attributes
    ----------
    queries : polars.DataFrame
        The run's distinct query keys (column ``total``) and how many of them the
        reference holds (``held``), per system (its system keys first; one row without
        ``systems=``).
    found : polars.DataFrame
        The reference's distinct query keys (on its keys), counted (``n``) per system key
        it holds.
    every : polars.DataFrame or None
        The run's distinct groups of the ``by`` keys the reference lacks (``None``: it
        lacks none).
    shown : polars.DataFrame
        Per system of the run's rows (its system keys; one row without ``systems=``),
        whether the part's reference lists one of its documents (``shown``).
    """

    queries: pl.DataFrame
    found: pl.DataFrame
    every: pl.DataFrame | None
    shown: pl.DataFrame


@dataclass(frozen=True)
class Counted:
    """The whole run's counts, from every part's (:func:`merged_counts`).

    Attributes
    ----------
    total, held : int
        The run's distinct query keys, and how many of them the reference holds.
    by_system : polars.DataFrame or None
        With ``systems=``: each system's ``total`` and ``held`` (its system keys first).
    found : polars.DataFrame
        The reference's distinct query keys counted (``n``) per system key it holds.
    every : polars.DataFrame or None
        The run's distinct groups of the ``by`` keys the reference lacks, counted (``n``)
        per system key among them (``None``: it lacks none).
    unproven : bool
        Whether some system of the run (or the run, without ``systems=``) has no part
        whose reference lists one of its documents: only then can the warning of
        documents be given, and only then are they counted over the whole tables.
    """

    total: int
    held: int
    by_system: pl.DataFrame | None
    found: pl.DataFrame
    every: pl.DataFrame | None
    unproven: bool


def part_counts(job: AgreementJob, run: pa.Table, reference: pa.Table | None) -> PartCounts:
    """One part's counts (:class:`PartCounts`) of its run's and reference's rows (every
    row of its queries, on both sides), as the engine counted them over the whole
    tables: a list-shaped side's queries where their list holds a document, its
    documents one per element (:attr:`AgreementJob.lists`); the query keys matched on the
    reference's keys, nulls matching nulls, in one dtype where the sides' differ.

    Examples
    --------
    >>> from polars_irmetrics.engines._agreement import prepare_agreement
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> run = pa.table({"s": ["x", "x", "y"], "query_id": ["a", "b", "a"],
    ...                 "doc_id": ["d", "e", "f"], "score": [1.0, 1.0, 1.0]})
    >>> ref = pa.table({"query_id": ["a"], "doc_id": ["d"], "score": [1.0]})
    >>> job = prepare_agreement(run.schema, ref.schema, ["rbo"], EvalOptions(systems="s"))
    >>> counts = part_counts(job, run, ref)
    >>> counts.queries.sort("s").rows(), counts.shown.sort("s").rows()
    ([('x', 2, 1), ('y', 1, 1)], [('x', True), ('y', False)])
    """
    options = job.options
    doc = options.doc_id
    systems = list(options.system_keys)
    on = reference_keys(job)
    run_lists, reference_lists = job.lists
    runs = _rows(run, job.run_schema, doc, run_lists)
    held = _rows(reference, job.reference_schema, doc, reference_lists)
    # a key the two sides hold in two dtypes (of one kind), joined in one
    cast = {
        k: common_id_dtype([runs.schema[k], held.schema[k]])
        for k in on
        if runs.schema[k] != held.schema[k]
    }
    keys = runs.select(job.keys).unique()
    found = held.select(on).unique()
    marked = found.with_columns(pl.col(k).cast(t) for k, t in cast.items())
    joined = (
        keys.with_columns(pl.col(k).cast(t) for k, t in cast.items())
        .join(marked.with_columns(pl.lit(True).alias(_HELD)), on=on, how="left", nulls_equal=True)
        .with_columns(pl.col(k).cast(keys.schema[k]) for k in cast)
    )
    tallies = [
        pl.len().cast(pl.Int64).alias("total"),
        pl.col(_HELD).count().cast(pl.Int64).alias("held"),
    ]
    queries = joined.group_by(systems).agg(*tallies) if systems else joined.select(*tallies)
    found_systems = [k for k in systems if k in on]
    n = pl.len().cast(pl.Int64).alias("n")
    counted = found.group_by(found_systems).agg(n) if found_systems else found.select(n)
    missing = [k for k in job.keys if k not in on]
    every = runs.select(missing).unique() if missing else None
    return PartCounts(queries, counted, every, _shown(runs, held, doc, systems, job.lists))


def merged_counts(job: AgreementJob, parts: Iterable[PartCounts]) -> Counted:
    """The whole run's counts (:class:`Counted`) from every part's
    (:func:`part_counts`; a part of no row gives none): each query's keys are counted by
    one part (its query id's), so their counts add up; the groups of the ``by`` keys the
    reference lacks are found in many parts, gathered once."""
    told = list(parts)
    options = job.options
    systems = list(options.system_keys)
    on = reference_keys(job)
    found_systems = [k for k in systems if k in on]
    missing = [k for k in job.keys if k not in on]
    sums = pl.col("total", "held").sum().cast(pl.Int64)
    queries = _stacked([p.queries for p in told], _schema(job, systems, total=True))
    whole = queries.select(sums).row(0, named=True)
    by_system = queries.group_by(systems).agg(sums) if systems else None
    found = _stacked([p.found for p in told], _schema(job, found_systems, reference=True))
    n = pl.col("n").sum().cast(pl.Int64)
    found = found.group_by(found_systems).agg(n) if found_systems else found.select(n)
    every = None
    if missing:
        groups = _stacked([p.every for p in told if p.every is not None], _schema(job, missing))
        present = [k for k in systems if k in missing]
        count = pl.len().cast(pl.Int64).alias("n")
        groups = groups.unique()
        every = groups.group_by(present).agg(count) if present else groups.select(count)
    shown = _stacked([p.shown for p in told], _schema(job, systems, shown=True))
    if systems:
        shown = shown.group_by(systems).agg(pl.col(_SHOWN).any())
    unproven = not bool(shown[_SHOWN].all()) if systems else not bool(shown[_SHOWN].any())
    return Counted(
        int(whole["total"]), int(whole["held"]), by_system, found, every, unproven=unproven
    )


def _rows(table: pa.Table | None, schema: pl.Schema, doc: str, lists: bool) -> pl.DataFrame:
    """A side's rows in its schema's dtypes (none: an empty frame of it), a list-shaped
    side's those whose list holds a document (the long form's queries)."""
    if table is None:
        return pl.DataFrame(schema=schema)
    frame = _frame(table).select(pl.col(c).cast(t) for c, t in schema.items())
    return frame.filter(pl.col(doc).list.len() > 0) if lists else frame


def _shown(
    run: pl.DataFrame,
    reference: pl.DataFrame,
    doc: str,
    systems: list[str],
    lists: tuple[bool, bool],
) -> pl.DataFrame:
    """Per system of ``run``'s rows (one row without ``systems``), whether ``reference``
    lists one of its documents (for any of the part's queries)."""
    run_docs = (run.explode(doc) if lists[0] else run).select(*systems, doc).unique()
    listed = (reference.explode(doc) if lists[1] else reference).select(doc).unique()
    dtype = common_id_dtype([run_docs.schema[doc], listed.schema[doc]])
    listed = listed.select(pl.col(doc).cast(dtype), pl.lit(True).alias(_SHOWN))
    marked = run_docs.with_columns(pl.col(doc).cast(dtype)).join(
        listed, on=doc, how="left", nulls_equal=True
    )
    shown = pl.col(_SHOWN).is_not_null().any()
    return marked.group_by(systems).agg(shown) if systems else marked.select(shown)


def _schema(
    job: AgreementJob,
    keys: list[str],
    *,
    total: bool = False,
    reference: bool = False,
    shown: bool = False,
) -> pl.Schema:
    """The schema of a part's frame of ``keys`` (the run's dtypes; ``reference``: the
    reference's) and its counts, for the empty frame of no part."""
    source = job.reference_schema if reference else job.run_schema
    columns: dict[str, pl.DataType] = {k: source[k] for k in keys}
    if total:
        columns |= {"total": pl.Int64(), "held": pl.Int64()}
    elif shown:
        columns[_SHOWN] = pl.Boolean()
    elif reference:
        columns["n"] = pl.Int64()
    return pl.Schema(columns)


def _stacked(frames: list[pl.DataFrame], schema: pl.Schema) -> pl.DataFrame:
    """``frames`` one below the other (an empty frame of ``schema`` for none)."""
    return pl.concat(frames, how="vertical") if frames else pl.DataFrame(schema=schema)
