"""The rank-similarity metrics on Dask (:mod:`polars_irmetrics.engines._agreement`).

The run and the reference (their columns the plan reads) get each row's part number
(the engine's polars hash of its ``query_id``) and are shuffled on it into
``partitions`` partitions; each pair of partitions gives its queries' values
(``map_partitions``), which for the means are gathered in one task and averaged. Each
pair holds every row of both sides for its queries, so it counts them too for the
warning of the reference's coverage (:func:`~polars_irmetrics.engines._agreement.part_counts`:
the run's query keys, those the reference holds, the reference's, per system), carried
in one row of its own beside its values (:data:`_COUNTS`, pickled). A task adds every
part's counts up (so it runs once every part has computed its values: a run a part
refuses warns of nothing, as on one machine) and another warns (on the client, through
``distributed.warn`` from a worker) before the values are released: nothing is
computed at the call, and no shuffle or merge beyond the result's own. The documents'
counts join across queries: a part that finds a document of its run listed by its
reference proves the warning of documents that do not line up silent (for the run, and
each system it proves); only where no part proves it are the parts' distinct documents
handed to the warning's task, which counts them (each part's task hands nothing on
otherwise). Each part is given the reference's distinct groups (the
``by``/``systems`` keys it shares with the run, a task of the graph), so that it
refuses a group of the run only where the whole reference lacks it; and the run's
distinct groups of the ``by``/``systems`` keys the reference lacks (a task reading the
run's partitions), so that it scores the reference's queries it lacks for every group
of the whole run, as one machine does. The queries where
a correlation is null for its ties are marked in each part's values; the means' task
(which holds every query) or, for per-query values, a task reading every partition's
tally warns of them once, as one machine does. :mod:`polars_irmetrics.engines.dask`
passes its own part numbering (this module does not import it: it imports this one).
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterable

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
from dask.delayed import delayed

from polars_irmetrics.agreement.coverage import missed_hint
from polars_irmetrics.agreement.keys import reference_group_keys
from polars_irmetrics.engines._agreement import (
    AgreementJob,
    CoverageCounts,
    PartCounts,
    agreement_finish,
    agreement_part,
    document_counts,
    lacked_keys,
    part_counts,
    prepare_agreement,
    run_group_rows,
    split_marks,
    summed_counts,
    warn_on_reference,
    warn_on_tied,
)
from polars_irmetrics.engines._dask_coverage import emitter
from polars_irmetrics.engines._dask_frames import meta, to_pandas, to_table
from polars_irmetrics.engines._dask_lists import listed_schema
from polars_irmetrics.engines._ope_dask import Tag, _shuffled
from polars_irmetrics.engines._partition import _frame, as_polars_frame, warned_to
from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL

__all__ = ["agreement_frame"]

#: The column of a part's counts (:func:`_part`: pickled, in one row of its own; null
#: on the value rows).
_COUNTS = f"{INTERNAL}counts"


def agreement_frame(
    run: dd.DataFrame,
    metrics: Iterable[str],
    *,
    reference: dd.DataFrame,
    count: int,
    options: EvalOptions,
    tag: Tag,
) -> dd.DataFrame:
    """:func:`polars_irmetrics.dask.evaluate`'s lazy result for the rank-similarity
    metrics (module doc); the warning of the reference's queries is given when it is
    computed."""
    # a side of Python lists (object columns) typed as lists: each part's plan reads them
    job = prepare_agreement(
        listed_schema(run, options), listed_schema(reference, options), metrics, options
    )
    query_id = job.options.query_id
    runs = _shuffled(run[list(job.run_schema)], query_id, count, tag)
    others = _shuffled(reference[list(job.reference_schema)], query_id, count, tag)
    # a part holds some of a group's queries: the whole reference's groups, a task
    shared = reference_group_keys(job.options, list(job.reference_schema))
    groups = delayed(_group_rows)(reference[shared].drop_duplicates()) if shared else None
    # and the whole run's groups of the keys the reference lacks (a part may hold none of
    # a group's queries, and scores the reference's queries it lacks for every group)
    lacked = None
    if lacked_keys(job):
        found = [delayed(_groups_in)(job, p) for p in run[list(job.run_schema)].to_delayed()]
        lacked = delayed(_run_groups)(*found)
    carried = dd.map_partitions(
        _part,
        runs,
        others,
        groups,
        lacked,
        job=job,
        meta=meta(pl.Schema({**job.part_schema, _COUNTS: pl.Binary()})),
        enforce_metadata=False,
        align_dataframes=False,
    )
    parts = carried.to_delayed()
    # every part's counts added up (once every part has computed its values: a run a
    # part refuses warns of nothing, as on one machine); its documents handed on only
    # where no part proved them listed; the warning before the ties' (one machine's order)
    counts = delayed(_summed)(job, *(delayed(_counts_of)(p) for p in parts))
    documents = [delayed(_documents_of)(p, counts) for p in parts]
    warned = delayed(_warn)(job, counts, *documents)
    kept = [delayed(_values_of)(p) for p in parts]
    if not job.options.per_query:
        means = delayed(_finish)(job, warned, *kept)
        return dd.from_delayed([means], meta=meta(job.result_schema), verify_meta=False)
    # released once a task has added up every part's ties' marks and warned
    tied = delayed(_warn_tied)(job, warned, *(delayed(_tally_of)(job, k) for k in kept))
    released = [delayed(_released)(job, k, tied) for k in kept]
    return dd.from_delayed(released, meta=meta(job.per_query_schema), verify_meta=False)


def _part(
    run: pd.DataFrame,
    reference: pd.DataFrame,
    groups: tuple[tuple[object, ...], ...] | None,
    lacked: tuple[tuple[object, ...], ...] | None,
    *,
    job: AgreementJob,
) -> pd.DataFrame:
    """A part's values (:func:`agreement_part`: a refusal raised first) and, in one row
    of its own, its counts for the coverage warning (module doc). ``groups``: the
    whole reference's groups; ``lacked``: the whole run's groups of the keys the
    reference lacks."""
    runs, references = to_table(run), to_table(reference)
    values = agreement_part(job, runs, references, groups, lacked)
    counts = part_counts(
        job,
        _frame(runs).select(pl.col(c).cast(t) for c, t in job.run_schema.items()),
        _frame(references).select(pl.col(c).cast(t) for c, t in job.reference_schema.items()),
    )
    schema = pl.Schema({**job.part_schema, _COUNTS: pl.Binary()})
    rows = _frame(values).with_columns(pl.lit(None, pl.Binary()).alias(_COUNTS))
    row = pl.DataFrame({_COUNTS: [pickle.dumps(counts)]}, schema={_COUNTS: pl.Binary()})
    out = pl.concat([rows, row], how="diagonal_relaxed").select(schema.names())
    return to_pandas(out.to_arrow(compat_level=pl.CompatLevel.oldest()))


def _group_rows(groups: pd.DataFrame) -> tuple[tuple[object, ...], ...]:
    """The reference's distinct groups (:func:`agreement_frame`), as
    :attr:`~polars_irmetrics.ground.options.EvalOptions.reference_groups` holds them."""
    return tuple(as_polars_frame(to_table(groups)).rows())


def _groups_in(job: AgreementJob, run: pd.DataFrame) -> pl.DataFrame:
    """A partition of the run's distinct groups of the keys the reference lacks
    (:func:`~polars_irmetrics.engines._agreement.run_group_rows`)."""
    frame = _frame(to_table(run)).select(pl.col(c).cast(t) for c, t in job.run_schema.items())
    return run_group_rows(job, frame)


def _run_groups(*found: pl.DataFrame) -> tuple[tuple[object, ...], ...]:
    """The whole run's groups of the keys the reference lacks, from every partition's
    (:func:`_groups_in`), as
    :attr:`~polars_irmetrics.ground.options.EvalOptions.run_groups` holds them."""
    return tuple(pl.concat(found).unique().rows())


def _split(part: pd.DataFrame) -> tuple[pa.Table, PartCounts]:
    """A part's values (in :attr:`AgreementJob.part_schema`) and its counts."""
    table = to_table(part)
    given = table.column(_COUNTS)
    values = table.filter(given.is_null()).drop_columns([_COUNTS])
    counts = pickle.loads(table.filter(given.is_valid())[_COUNTS][0].as_py())
    return values, counts


def _counts_of(part: pd.DataFrame) -> PartCounts:
    """A part's counts, without its documents (handed on only where needed:
    :func:`_documents_of`)."""
    counts = _split(part)[1]
    docs, listed = counts.documents
    return dataclasses.replace(counts, documents=(docs.clear(), listed.clear()))


def _summed(job: AgreementJob, *parts: PartCounts) -> CoverageCounts:
    return summed_counts(job, parts)


def _documents_of(
    part: pd.DataFrame, counts: CoverageCounts
) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """A part's distinct documents, where no part proved the reference to list one of
    the run's (of each system's: ``counts``); else nothing."""
    return _split(part)[1].documents if counts.needs_documents else None


def _values_of(part: pd.DataFrame) -> pd.DataFrame:
    return to_pandas(_split(part)[0])


def _finish(job: AgreementJob, _warned: bool, *parts: pd.DataFrame) -> pd.DataFrame:
    """The means of every query's values (every part's), whose task warns of the
    correlations null for their ties first (after the reference's warning, ``_warned``)."""
    values = pa.concat_tables([to_table(p) for p in parts])
    kept, tally = split_marks(job, values)
    warned_to(lambda: warn_on_tied(job, [tally]), emitter(IrmWarning))
    return to_pandas(agreement_finish(job, kept))


def _tally_of(job: AgreementJob, values: pd.DataFrame) -> pl.DataFrame:
    return split_marks(job, to_table(values))[1]


def _warn_tied(job: AgreementJob, _warned: bool, *tallies: pl.DataFrame) -> bool:
    return warned_to(lambda: warn_on_tied(job, tallies), emitter(IrmWarning))


def _released(job: AgreementJob, values: pd.DataFrame, warned: bool) -> pd.DataFrame:
    return to_pandas(split_marks(job, to_table(values))[0])


def _warn(
    job: AgreementJob,
    counts: CoverageCounts,
    *documents: tuple[pl.DataFrame, pl.DataFrame] | None,
) -> bool:
    """The warning of the reference's coverage, from the whole run's ``counts`` and,
    where they are needed, every part's ``documents``."""
    docs: int | None = None
    held_docs: int | None = None
    system_docs = None
    if counts.needs_documents:
        given = [d for d in documents if d is not None]
        docs, held_docs, system_docs = document_counts(job, given)
    by_system = None if counts.by_system is None else (counts.by_system, system_docs)
    hint = None
    if counts.spelt is not None:
        lacking, missed = (f.lazy() for f in counts.spelt)
        query_id = job.options.query_id
        hint = lambda: missed_hint(lacking, missed, query_id)  # noqa: E731
    references = (counts.found, counts.every)
    return warned_to(
        lambda: warn_on_reference(
            job,
            counts.total,
            counts.matched,
            docs,
            held_docs,
            by_system,
            references=references,
            hint=hint,
        ),
        emitter(),
    )
