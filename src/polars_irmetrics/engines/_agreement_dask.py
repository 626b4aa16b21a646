"""The rank-similarity metrics on Dask (:mod:`polars_irmetrics.engines._agreement`).

The run and the reference (their columns the plan reads) get each row's part number
(the engine's polars hash of its ``query_id``) and are shuffled on it into
``partitions`` partitions; each pair of partitions gives its queries' values
(``map_partitions``), which for the means are gathered in one partition and averaged.
The whole run's query keys and those the reference holds are counted by a task of the
graph, which warns (on the client, through ``distributed.warn`` from a worker) once
every part has computed its values (a run a part refuses warns of nothing, as on one
machine) and before the values are released: nothing is computed at the call. Each part
is given the reference's distinct groups (the ``by``/``systems`` keys it shares with the
run, a task of the graph), so that it refuses a group of the run only where the whole
reference lacks it. The queries where a correlation is null for its ties are marked in
each part's values; the means' task (which holds every query) or, for per-query values,
a task reading every partition's tally warns of them once, as one machine does.
:mod:`polars_irmetrics.engines.dask` passes its own part numbering (this module does
not import it: it imports this one).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
from dask.delayed import Delayed, delayed

from polars_irmetrics.agreement.coverage import missed_hint
from polars_irmetrics.agreement.keys import reference_group_keys
from polars_irmetrics.engines._agreement import (
    AgreementJob,
    agreement_finish,
    agreement_part,
    prepare_agreement,
    reference_keys,
    split_marks,
    warn_on_reference,
    warn_on_tied,
)
from polars_irmetrics.engines._dask_coverage import emitter
from polars_irmetrics.engines._dask_frames import (
    arrow_of,
    computed,
    meta,
    shared,
    to_pandas,
    to_table,
)
from polars_irmetrics.engines._dask_lists import listed_schema
from polars_irmetrics.engines._ope_dask import Tag, _shuffled
from polars_irmetrics.engines._partition import _to_arrow, as_polars_frame, warned_to
from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL, common_id_dtype, is_text, kind_of

__all__ = ["agreement_frame"]


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
    values = dd.map_partitions(
        _part,
        runs,
        others,
        groups,
        job=job,
        meta=meta(job.part_schema),
        enforce_metadata=False,
        align_dataframes=False,
    )
    # once every part has computed its values (a run a part refuses warns of nothing, as
    # on one machine), and before the ties' warning (one machine's order)
    values, done = computed(values)
    warned = _warned(job, run, reference, done)
    if not job.options.per_query:
        values = values.repartition(npartitions=1).map_partitions(
            _finish, job, warned, meta=meta(job.result_schema), enforce_metadata=False
        )
    else:  # released once a task has added up every part's ties' marks and warned
        parts = values.to_delayed()
        tied = delayed(_warn_tied)(job, warned, *(delayed(_tally_of)(job, p) for p in parts))
        kept = [delayed(_values_of)(job, p, tied) for p in parts]
        values = dd.from_delayed(kept, meta=meta(job.per_query_schema), verify_meta=False)
    return values


def _part(
    run: pd.DataFrame,
    reference: pd.DataFrame,
    groups: tuple[tuple[object, ...], ...] | None,
    *,
    job: AgreementJob,
) -> pd.DataFrame:
    return to_pandas(agreement_part(job, to_table(run), to_table(reference), groups))


def _group_rows(groups: pd.DataFrame) -> tuple[tuple[object, ...], ...]:
    """The reference's distinct groups (:func:`agreement_frame`), as
    :attr:`~polars_irmetrics.ground.options.EvalOptions.reference_groups` holds them."""
    return tuple(as_polars_frame(to_table(groups)).rows())


def _finish(values: pd.DataFrame, job: AgreementJob, _warned: bool) -> pd.DataFrame:
    """The means of every query's values, in one partition, whose task warns of the
    correlations null for their ties first (after the reference's warning, ``_warned``)."""
    kept, tally = split_marks(job, to_table(values))
    warned_to(lambda: warn_on_tied(job, [tally]), emitter(IrmWarning))
    return to_pandas(agreement_finish(job, kept))


def _tally_of(job: AgreementJob, values: pd.DataFrame) -> pl.DataFrame:
    return split_marks(job, to_table(values))[1]


def _warn_tied(job: AgreementJob, _warned: bool, *tallies: pl.DataFrame) -> bool:
    return warned_to(lambda: warn_on_tied(job, tallies), emitter(IrmWarning))


def _values_of(job: AgreementJob, values: pd.DataFrame, warned: bool) -> pd.DataFrame:
    return to_pandas(split_marks(job, to_table(values))[0])


def _warned(
    job: AgreementJob, run: dd.DataFrame, reference: dd.DataFrame, done: Delayed
) -> Delayed:
    """The task that warns when the reference lacks most of the run's queries, from the
    whole run's distinct query keys and those the reference holds (on its keys), once
    ``done`` has run (every part's values computed)."""
    on = reference_keys(job)
    held = f"{INTERNAL}held"
    doc = job.options.doc_id
    run_lists, reference_lists = job.lists
    run_schema, reference_schema = job.run_schema, job.reference_schema
    found = _long_rows(reference, reference_schema, on, doc, reference_lists)
    found = found.drop_duplicates().assign(**{held: 1})
    keys = _long_rows(run, run_schema, job.keys, doc, run_lists).drop_duplicates()
    keys, found = _one_dtype(keys, found, on)
    joined = keys.merge(found, on=on, how="left")
    # a list's documents in the other side's dtype where that side is long (Dask turns
    # a column of text into its own string dtype, not a list's elements); both sides'
    # as text where one machine lines them up as Int128 (UInt64 beside signed ids: a
    # merge of the two cast them to float64, refusing an id past 2**53), whose text is
    # the same for an id in any integer dtype
    ids = {
        "run": None if run_lists else run._meta[doc].dtype,
        "reference": None if reference_lists else reference._meta[doc].dtype,
    }
    if _wide_ids(run_schema[doc], reference_schema[doc]):
        ids = {"run": _TEXT, "reference": _TEXT}
    listed = _long_rows(
        reference, reference_schema, [doc], doc, reference_lists, explode=True, ids=ids["run"]
    )
    listed = listed.drop_duplicates().assign(**{held: 1})
    docs = _long_rows(run, run_schema, [doc], doc, run_lists, explode=True, ids=ids["reference"])
    docs, listed = _one_dtype(docs.drop_duplicates(), listed, [doc])
    docs = docs.merge(listed, on=doc, how="left")
    counts = (joined[held].size, joined[held].count(), docs[held].size, docs[held].count())
    systems = list(job.options.system_keys)
    # the reverse: the reference's queries (each group of the run it serves apart), per
    # system, of which the run lists as many as the reference holds of its own
    found_systems = [k for k in systems if k in on]
    missing = [k for k in job.keys if k not in on]
    references = [_counted(found, found_systems)]
    if missing:
        groups = _long_rows(run, run_schema, missing, doc, run_lists).drop_duplicates()
        references.append(_counted(groups, [k for k in systems if k in missing]))
    spelt = _missed_ids(job, keys, found)
    if not systems:
        return _warn_task(job, done, counts, (), references, spelt)
    # each system's counts too: a system the reference mostly lacks is named
    system_docs = _long_rows(
        run, run_schema, [*systems, doc], doc, run_lists, explode=True, ids=ids["reference"]
    )
    system_docs, listed = _one_dtype(system_docs.drop_duplicates(), listed, [doc])
    system_docs = system_docs.merge(listed, on=doc, how="left")
    by_system = [
        frame.groupby(systems)[held].agg(["size", "count"]).reset_index()
        for frame in (joined, system_docs)
    ]
    return _warn_task(job, done, counts, by_system, references, spelt)


def _warn_task(
    job: AgreementJob,
    done: Delayed,
    counts: Sequence[object],
    by_system: Sequence[object],
    references: Sequence[object],
    spelt: Sequence[object] | None,
) -> Delayed:
    """The task of :func:`_warn`, its Dask arguments computed from one graph: each one
    given to ``delayed`` apart is optimized alone, with keys of its own, so the merges
    they share would run once per argument (:func:`shared`)."""
    ids = list(spelt or ())
    given = shared([*counts, *by_system, *references, *ids])
    taken = iter(given)
    counted = [next(taken) for _ in counts]
    systems = [next(taken) for _ in by_system]
    found = delayed(_gathered)(*(next(taken) for _ in references))
    missed = None if spelt is None else delayed(_gathered)(*taken)
    return delayed(_warn)(job, done, *counted, *systems, references=found, ids=missed)


def _counted(frame: dd.DataFrame, keys: list[str]) -> object:
    """The rows of ``frame`` counted per ``keys`` (a pandas frame of the keys and ``n``,
    once computed), or in all (a scalar) without keys."""
    if not keys:
        return frame.map_partitions(len).sum()
    return frame.groupby(keys).size().rename("n").reset_index()


def _missed_ids(
    job: AgreementJob, keys: dd.DataFrame, found: dd.DataFrame
) -> list[dd.DataFrame] | None:
    """The query ids (as text) of the run the reference lacks and of the reference the
    run lacks, for the hint of ids spelt apart (``None`` where the ids are not text):
    ``keys`` the run's distinct query keys, ``found`` the reference's."""
    query_id = job.options.query_id
    if not is_text(job.run_schema[query_id]):
        return None
    flag = f"{INTERNAL}other"
    ran, held = (f[[query_id]].astype({query_id: _TEXT}).drop_duplicates() for f in (keys, found))

    def lacking(left: dd.DataFrame, right: dd.DataFrame) -> dd.DataFrame:
        merged = left.merge(right.assign(**{flag: 1}), on=query_id, how="left")
        return merged[merged[flag].isna()][[query_id]]

    return [lacking(ran, held), lacking(held, ran)]


def _gathered(*computed: object) -> list[object]:
    """The computed values, as one list (a task's argument)."""
    return list(computed)


def _long_rows(
    frame: dd.DataFrame,
    schema: pl.Schema,
    columns: list[str],
    doc_id: str,
    lists: bool,
    *,
    explode: bool = False,
    ids: object = None,
) -> dd.DataFrame:
    """``frame``'s ``columns`` as the long form's rows hold them, for the coverage
    counts: a list-shaped side (``lists``, its ``schema``) keeps the rows whose list of
    ``doc_id`` holds a document, and with ``explode`` gives one row per element (a
    partition's rows through polars, as its plan reads them; in the dtype ``ids``,
    where given: the other side's ids, which it is merged with); another side as it
    is."""
    if not lists:
        if explode and ids == _TEXT:  # the other side's ids, as text (_warned)
            return frame[columns].astype({doc_id: _TEXT})
        return frame[columns]
    needed = list(dict.fromkeys([*columns, doc_id]))
    # an Array (fixed-size lists) read as a List, as the plan reads it
    given = pl.Schema({c: _as_list(schema[c]) for c in needed})

    def rows(part: pl.DataFrame) -> pl.DataFrame:
        kept = part.filter(pl.col(doc_id).list.len() > 0)
        return (kept.explode(doc_id) if explode else kept).select(columns)

    out = rows(pl.DataFrame(schema=given)).schema
    # the frame's own dtypes (a list's elements that of its values), so that the merges
    # with the other side's columns meet one dtype
    dtypes = {c: frame._meta[c].dtype for c in columns}
    listed = dtypes.get(doc_id)
    if explode and ids is not None:
        dtypes[doc_id] = ids
    elif explode and isinstance(listed, pd.ArrowDtype):
        dtypes[doc_id] = pd.ArrowDtype(listed.pyarrow_dtype.value_type)

    def task(pandas: pd.DataFrame) -> pd.DataFrame:
        part = as_polars_frame(to_table(pandas[needed])).cast(given)
        return to_pandas(_to_arrow(rows(part), out)).astype(dtypes)

    empty = meta(out).astype(dtypes)
    return frame[needed].map_partitions(task, meta=empty, enforce_metadata=False)


def _one_dtype(
    left: dd.DataFrame, right: dd.DataFrame, columns: list[str]
) -> tuple[dd.DataFrame, dd.DataFrame]:
    """``left`` and ``right`` with each id column of ``columns`` in one dtype where
    theirs differ, as one machine lines them up
    (:func:`~polars_irmetrics.ground.validate.common_id_dtype`; as text where that is
    a 128-bit integer, which pandas has not): a merge of two dtypes gave Dask's own
    warning ("Merging dataframes with merge column data type mismatches"), which one
    machine does not give. A column of another kind (a date) is left as it is."""
    for column in columns:
        if left[column].dtype == right[column].dtype:
            continue
        dtypes = [as_polars_frame(arrow_of(f).empty_table())[column].dtype for f in (left, right)]
        kinds = {kind_of(d) for d in dtypes}
        if len(kinds) > 1 or None in kinds:  # ids of one kind only (the plan refuses two)
            continue
        common = common_id_dtype(dtypes)
        wide = common in (pl.Int128(), pl.UInt128())
        target = _TEXT if wide else meta(pl.Schema({column: common}))[column].dtype
        left, right = (f.astype({column: target}) for f in (left, right))
    return left, right


#: Document ids as text (:func:`_wide_ids`).
_TEXT = pd.ArrowDtype(pa.string())


def _wide_ids(run: pl.DataType, reference: pl.DataType) -> bool:
    """Whether one machine lines the two sides' document ids (of these dtypes; a list's
    elements) up as 128-bit integers
    (:func:`~polars_irmetrics.ground.validate.common_id_dtype`), which a Dask merge
    cannot hold: the coverage counts merge them as text.

    >>> _wide_ids(pl.UInt64(), pl.List(pl.Int32())), _wide_ids(pl.UInt64(), pl.UInt32())
    (True, False)
    """
    dtypes = [d.inner if isinstance(d, pl.List | pl.Array) else d for d in (run, reference)]
    common = common_id_dtype([d() if isinstance(d, type) else d for d in dtypes])
    return common in (pl.Int128(), pl.UInt128())


def _as_list(dtype: pl.DataType) -> pl.DataType:
    """``dtype``, an ``Array`` as the ``List`` of its values."""
    return pl.List(dtype.inner) if isinstance(dtype, pl.Array) else dtype


def _warn(
    job: AgreementJob,
    _done: bool,
    total: int,
    matched: int,
    docs: int,
    held_docs: int,
    system_queries: pd.DataFrame | None = None,
    system_docs: pd.DataFrame | None = None,
    *,
    references: list[object],
    ids: list[pd.DataFrame] | None = None,
) -> bool:
    counts = (int(total), int(matched), int(docs), int(held_docs))
    by_system = None
    if system_queries is not None and system_docs is not None:
        names = {"size": "total", "count": "held"}
        by_system = (
            as_polars_frame(to_table(system_queries.rename(columns=names))),
            as_polars_frame(to_table(system_docs.rename(columns=names))),
        )

    def frame(counted: object) -> pl.DataFrame:
        if isinstance(counted, pd.DataFrame):
            return as_polars_frame(to_table(counted)).with_columns(pl.col("n").cast(pl.Int64))
        return pl.DataFrame({"n": [int(counted)]}, schema={"n": pl.Int64})  # type: ignore[call-overload]

    found = frame(references[0])
    every = frame(references[1]) if len(references) > 1 else None
    hint = None
    if ids is not None:
        lacking, missed = (as_polars_frame(to_table(f)).lazy() for f in ids)
        query_id = job.options.query_id
        hint = lambda: missed_hint(lacking, missed, query_id)  # noqa: E731
    return warned_to(
        lambda: warn_on_reference(job, *counts, by_system, references=(found, every), hint=hint),
        emitter(),
    )
