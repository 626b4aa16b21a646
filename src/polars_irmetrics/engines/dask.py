"""``polars_irmetrics.dask.evaluate``: the evaluation plan on Dask DataFrames.

How the work divides (see also :mod:`polars_irmetrics.engines`):

1. **At the call**, on the client: the one-machine plan is built on empty frames of
   the two frames' schemas (:func:`~polars_irmetrics.engines._partition.prepare`):
   a missing column, a wrong dtype, an unknown metric or a bad option raises the
   library's own error before any task is built.
2. **Shuffled by query hash**: each row of the run and of the judgments gets a part
   number (a polars hash of ``query_id``, integers as 64-bit, modulo ``partitions``)
   and both frames are shuffled on it into ``partitions`` partitions: partition *i*
   of the run and of the judgments then hold every row of the same queries. Each
   pair of partitions is turned into Arrow, then polars, and evaluated by the
   ordinary plan (``map_partitions``); one row per query comes back. With ``by`` keys
   the judgments lack, the judgments are crossed with the run's distinct ``by``
   groups first, as the one-machine plan does.
   With ``partitioned_by=`` (a column no query spans two values of, e.g. the hive
   column of ``dd.read_parquet("run/")``), the run is **not shuffled**: its own
   partitions are grouped into tasks by that column's values (from the files' paths
   for a hive column of a plain ``dd.read_parquet``, else found by a small pass over
   that one column at the call); a plain read of local files is read by each task
   itself, with polars, from its files, and only the judgments that are not such a
   read travel to the tasks (:mod:`~polars_irmetrics.engines._dask_partitions`); a
   query found in two tasks raises :class:`~polars_irmetrics.errors.InvalidValueError`
   rather than a wrong value.
3. **Means**: the per-query values are gathered in one partition, sorted by the keys
   and averaged by the same polars expression as on one machine, so they equal
   :func:`polars_irmetrics.evaluate`'s to the last bit.
4. **Progress**: with ``progress=True`` the result is persisted at the call (on the
   connected ``distributed.Client``'s cluster, else by the local scheduler) while a
   bar of the tasks done is drawn on standard error
   (:mod:`~polars_irmetrics.engines._dask_progress`).

The result is a lazy Dask DataFrame with pyarrow-backed columns (no NaN stands for a
null); a data error found in a task (a duplicate document, a null id) is raised by
``compute()`` as the library's own exception with its message. Per-query rows come
in partition order; sort them if the order matters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from polars_irmetrics.engines._agreement import agreement_route
from polars_irmetrics.engines._agreement_dask import agreement_frame
from polars_irmetrics.engines._dask_coverage import (
    carried,
    carrier_meta,
    emitter,
    refusals_in,
    released,
    summarized,
)
from polars_irmetrics.engines._dask_frames import (
    after,
    arrow_of,
    computed,
    meta,
    to_pandas,
    to_table,
    with_groups,
)
from polars_irmetrics.engines._dask_lists import dask_long_form, named_columns
from polars_irmetrics.engines._dask_partitions import per_query_in_partitions
from polars_irmetrics.engines._dask_progress import persist
from polars_irmetrics.engines._ope import ope_route
from polars_irmetrics.engines._ope_dask import ope_frame
from polars_irmetrics.engines._partition import (
    PART,
    Clicks,
    Job,
    Refusal,
    as_polars_frame,
    attribute_columns,
    check_options_read,
    evaluate_part,
    held_part,
    prepare,
    tells_segments,
)
from polars_irmetrics.engines._prediction import prediction_route, shared_systems
from polars_irmetrics.engines._prediction_dask import prediction_frame
from polars_irmetrics.engines._ps import ps_route
from polars_irmetrics.engines._ps_dask import ps_frame
from polars_irmetrics.engines._recsys import counts_route, elliot_route
from polars_irmetrics.engines._recsys_dask import counts_frame, elliot_frame, unseen_gated
from polars_irmetrics.engines._sides import (
    EXPOSURE_COUNT,
    Beside,
    check_sides,
    reads_history,
    reads_relevant_group_ids,
    refuse_click_means,
    refuse_history_nulls,
    side_tables,
    split_front,
    warn_on_group_ids,
    warn_on_history,
    warns_on_features,
)
from polars_irmetrics.engines.params import engine_doc
from polars_irmetrics.errors import (
    ColumnTypeError,
    InvalidValueError,
    IrmError,
    IrmWarning,
    MissingDependencyError,
)
from polars_irmetrics.ground.options import EvalKwargs, EvalOptions, key_names
from polars_irmetrics.ground.validate import (
    KEYED_TABLES,
    common_id_dtype,
    unplaced_query_error,
)
from polars_irmetrics.metrics.registry import (
    averages_over_history,
    merges_from_counts,
    parse_metric_list,
)
from polars_irmetrics.offline.coverage import Coverage

try:
    import dask.dataframe as dd
    import pandas as pd
    from dask.delayed import Delayed, delayed
except ImportError as exc:  # pragma: no cover - the test environment has dask
    raise MissingDependencyError(
        "polars_irmetrics.dask needs Dask's dataframe package: "
        "pip install 'polars_irmetrics[dask]'"
    ) from exc

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["evaluate"]


@engine_doc("Dask")
def evaluate(
    run: dd.DataFrame,
    metrics: str | Iterable[str],
    *,
    qrels: dd.DataFrame | None = None,
    queries: dd.DataFrame | None = None,
    labels: dd.DataFrame | None = None,
    policy: dd.DataFrame | None = None,
    reward_model: dd.DataFrame | None = None,
    propensities: dd.DataFrame | None = None,
    groups: dd.DataFrame | None = None,
    target: dd.DataFrame | None = None,
    interactions: dd.DataFrame | None = None,
    item_features: dd.DataFrame | None = None,
    reference: dd.DataFrame | None = None,
    partitions: int | None = None,
    **options: Unpack[EvalKwargs],
) -> dd.DataFrame:
    """Evaluate a run held in a Dask DataFrame against judgments (lazily).

    The arguments, defaults, metric names, policies, errors and values are those of
    :func:`polars_irmetrics.evaluate` (see there); only the frames are Dask's.

    Parameters
    ----------
    run, qrels
        Dask DataFrames with the columns :func:`polars_irmetrics.evaluate` reads. A
        list-shaped side (``doc_id`` of Arrow lists, or the ``object`` column of arrays
        that ``dd.read_parquet`` gives: one row per query) is put in the long form first
        by :func:`polars_irmetrics.evaluate`'s own conversion, per partition (not with
        ``partitioned_by``, whose files must hold the long form).
    metrics
        As in :func:`polars_irmetrics.evaluate`.
    queries
        Attributes of the queries (``query_id`` and ``by`` keys), a Dask DataFrame, as
        in :func:`polars_irmetrics.evaluate`: joined onto the judgments (and onto the
        run where it lacks a key), so that each judged query counts in the group its
        own value names.
    labels
        Prediction metrics (``auc``, ``gauc``, ``logloss``, ``rmse``...), two-table form:
        the true labels, joined to ``run`` (the predictions) on ``query_id`` and
        ``doc_id``, as in :func:`polars_irmetrics.evaluate`. With prediction metrics,
        ``run`` is the table of predictions (with its ``label`` column in the one-table
        form); each part gives its per-query values or, for the means, sums and score
        histograms merged exactly in one partition
        (:mod:`polars_irmetrics.engines._prediction`).
    policy, reward_model
        Off-policy estimators (``ips``, ``snips``, ``dr``, ``slate_ips``, ``cascade_dr``...):
        ``run`` is the log of logged feedback and these are the evaluation policy and the
        reward model, Dask DataFrames, as in :func:`polars_irmetrics.evaluate`. The three
        are split by a hash of ``round_id``; each part gives exact sums per ``by`` group,
        merged in one task into the estimates, equal to one machine's to the last bit
        (:mod:`polars_irmetrics.engines._ope`). ``ci=`` (bootstrap and normal) and
        ``per_query=True`` give the same bits too, as does obp's list shape (``prob``
        and ``q_hat`` a list per round: an Arrow list column, ``pd.ArrowDtype``; a list
        of pandas objects, which Dask turns into text, is refused).
    propensities
        Propensity-scored metrics (``ps_precision@k``, ``ps_ndcg@k``): one row per
        document or per ``position`` with its ``propensity``, a small Dask DataFrame,
        computed at the call and shipped to every task; the run and ``qrels`` are
        shuffled by query hash and the parts' sums finished in one partition, equal to
        one machine's to the last bit (:mod:`polars_irmetrics.engines._ps`).
    groups, target
        %(groups)s
    interactions
        %(interactions)s
    item_features
        %(item_features)s
    reference
        %(reference)s
    partitions
        How many parts the queries are hashed into (each part is one task's work):
        default the run's number of partitions. A part's rows are held in one worker's
        memory: aim at a few million run rows per part. Not with ``partitioned_by``.
    **options
        The keyword arguments of :func:`polars_irmetrics.evaluate` (``by``,
        ``systems``, ``per_query``, ``order``, ``relevance_level``, ``depth``,
        ``unjudged``, ``unretrieved``, ``check_duplicates`` and the column names), with
        their defaults and meaning, and ``partitioned_by`` and ``progress`` as below.
        Those of the one-machine out-of-core plan (``buckets``, ``spill_dir``,
        ``memory_limit``, ``explain``) are refused: the work divides by ``partitions``.

        ``partitioned_by``
            A column of the run (a hive partition column such as ``bucket`` of
            ``run/bucket=07/part-0.parquet``) that keeps each query whole: no query has
            rows under two of its values, in the run or, when they carry it, in the
            judgments. Then the run is not shuffled: partitions sharing a value make one
            task (the values from the paths of a hive column, else from a pass over the
            column at the call). A plain ``dd.read_parquet`` of local files is read by
            each task from its own files, with polars (no pandas partition held by a
            worker); judgments so read and hive-partitioned by the column too are read
            the same way, other judgments are moved (shuffled by task when they carry
            the column, otherwise gathered in one partition and semi-joined by each
            task; the judged queries no task retrieves are evaluated once against an
            empty run). As in :func:`polars_irmetrics.evaluate`. Default ``None``:
            shuffle by query hash.

        ``progress``
            ``True``: persist the result now (on the connected ``distributed.Client``'s
            cluster, else with the local scheduler) and draw the tasks done on standard
            error until it is finished. ``None`` (default) and ``False``: return the lazy
            frame at once, drawing nothing (a bar needs the work to run in this call, and
            whether it runs now must not depend on the terminal: Dask's own
            ``dask.diagnostics.ProgressBar`` draws a later ``compute()``).

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy (persisted with ``progress=True``; the off-policy estimators compute their
        parts' sums in this call, and merge them lazily; the prediction metrics with
        ``systems=`` and one ``labels=`` for every system, under
        ``unmatched='error'``, read the predictions' distinct systems in this call, so
        that every part checks every system); ``compute()`` gives a pandas
        DataFrame with pyarrow-backed columns and the columns and values of
        :func:`polars_irmetrics.evaluate`'s result (per-query rows in partition (or
        task) order, means sorted by the ``by`` keys). A ``by`` or ``systems`` key
        given as a polars Enum (an ordered Arrow dictionary of its categories) comes
        back as that dictionary, the rows and the systems' coverage warnings in the
        Enum's order, as on one machine (where the frame's meta holds no categories,
        ``dd.read_parquet``'s, those the parts hold; as text where a table matched on
        the key holds it in another dtype, as one machine reads it).

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError, UnknownMetricError, MetricParameterError
        Raised by this call, before any task is built (``partitioned_by`` not a column
        of the run included).
    InvalidValueError, DuplicateError, QuerySetError
        Found in the data by a task and raised by ``compute()`` (by this call with
        ``progress=True``), with the message :func:`polars_irmetrics.evaluate` gives;
        with ``partitioned_by``, an ``InvalidValueError`` names a query found under two
        of the column's values.

    Warns
    -----
    CoverageWarning
        As :func:`polars_irmetrics.evaluate` warns on the same data (the same text and
        counts, once per run or system), by ``compute()`` (by this call with
        ``progress=True``): each part's tally travels beside its values and is added
        up in one task (:mod:`polars_irmetrics.engines._dask_coverage`); as
        :func:`polars_irmetrics.evaluate_online` warns of an impression log of no click
        (each part's count of clicks, added up there).

    Examples
    --------
    On a cluster's logs (a sketch, not run by the tests, which use a LocalCluster)::

        import dask.dataframe as dd
        import polars_irmetrics.dask as irm_dask
        run = dd.read_parquet("logs/run/")
        qrels = dd.read_parquet("logs/qrels.parquet")
        irm_dask.evaluate(run, ["ndcg@10"], qrels=qrels, by="day").compute()

    A run hive-partitioned by a hash of the query (``logs/run/bucket=07/...``) is
    evaluated where it lies, with a progress bar::

        run = dd.read_parquet("logs/run/")
        means = irm_dask.evaluate(
            run, ["ndcg@10"], qrels=qrels, partitioned_by="bucket", progress=True
        )
    """
    tables = {
        "qrels": qrels,
        "queries": queries,
        "labels": labels,
        "policy": policy,
        "reward_model": reward_model,
        "propensities": propensities,
        "groups": groups,
        "target": target,
        "interactions": interactions,
        "item_features": item_features,
        "reference": reference,
    }
    # Arrow dictionary columns (polars' Categorical and Enum) fail Dask's P2P shuffle:
    # read as their values' text, the run's group keys given back in their own dtype
    # where one machine keeps it (every keyed table holds the key as the run does)
    found = _dictionary_columns(run)
    keys = (*key_names("systems", options.get("systems")), *key_names("by", options.get("by")))
    keyed = {n: t for n, t in tables.items() if n in KEYED_TABLES and isinstance(t, dd.DataFrame)}
    kept = [k for k in dict.fromkeys(keys) if k in found and _kept(run, keyed, k)]
    enums = _enum_keys(run, found, tuple(kept))
    unknown = {k: found[k] for k in kept if _ordered(found[k]) and k not in dict(enums)}
    told = _told_enums(run, keyed, tuple(unknown)) if unknown else None
    text = {name: _as_values(table, keys, name) for name, table in tables.items()}
    values = _evaluate(
        _as_values(run, keys, "run"),
        metrics,
        qrels=text["qrels"],
        queries=text["queries"],
        labels=text["labels"],
        policy=text["policy"],
        reward_model=text["reward_model"],
        propensities=text["propensities"],
        groups=text["groups"],
        target=text["target"],
        interactions=text["interactions"],
        item_features=text["item_features"],
        reference=text["reference"],
        partitions=partitions,
        enums=enums,
        told_enums=told,
        **options,
    )
    back = {c: found[c] for c in values.columns if c in kept and not _ordered(found[c])}
    values = values.astype(back) if back else values
    if not any(c in values.columns for c in [*dict(enums), *unknown]):
        return values
    # an Enum key given back as that Enum (its every category, in order), the rows in
    # its order: one machine's dtype and rows
    order = [c for c in keys if c in values.columns]
    return values.map_partitions(
        _with_enums,
        enums,
        order,
        unknown,
        told,
        meta=_with_enums(values._meta, enums, order, unknown, ()),
    )


#: A table as the engine's refusals name it (the tables a ``by`` key is matched in).
_NAMED = {"run": "the run", "qrels": "the judgments", "reference": "reference="}


def _ordered(dtype: Any) -> bool:
    """Whether ``dtype`` (an Arrow dictionary) is ordered: how a polars Enum reaches
    pandas (a Categorical is an unordered one)."""
    return bool(dtype.pyarrow_dtype.ordered)


def _words(frame: pd.DataFrame, key: str) -> tuple[str, ...]:
    """The dictionary of the Arrow dictionary column ``key`` of ``frame`` (a part, or a
    Dask frame's meta): an Enum's categories, in order (none where its chunks differ)."""
    chunks = to_table(frame[[key]]).column(key).chunks
    words = {tuple(c.dictionary.to_pylist()) for c in chunks}
    return words.pop() if len(words) == 1 else ()


def _kept(run: Any, keyed: dict[str, Any], key: str) -> bool:
    """Whether one machine keeps the run's dtype of the dictionary key ``key``: every
    keyed table that holds it (the judgments, ``queries=``...) holds it in that dtype (a
    Categorical beside a Categorical, an Enum beside the same Enum); else it reads the
    key as text (:func:`~polars_irmetrics.ground.validate.with_common_keys`)."""
    dtype = run.dtypes[key]
    for table in keyed.values():
        if key not in table.columns:
            continue
        other = table.dtypes[key]
        if not _is_dictionary(other) or _ordered(other) != _ordered(dtype):
            return False
        words = (_words(table._meta, key), _words(run._meta, key))
        if _ordered(dtype) and all(words) and words[0] != words[1]:
            return False  # a meta with no categories leaves them to the parts
    return True


def _enum_keys(
    run: Any, found: dict[str, Any], keys: tuple[str, ...]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The ``systems=`` / ``by=`` keys of ``run`` that came from a polars Enum (an
    ordered Arrow dictionary, whose dictionary ``meta`` holds: the Enum's categories,
    in order), with those categories. A meta with no categories (that of
    ``dd.read_parquet``) leaves them to the parts (:func:`_told_enums`)."""
    enums = []
    for key in dict.fromkeys(keys):
        dtype = found.get(key)
        if dtype is None or not _ordered(dtype):
            continue
        words = _words(run._meta, key)
        if words:  # else no Enum's categories to restore
            enums.append((key, words))
    return tuple(enums)


def _told_enums(run: Any, keyed: dict[str, Any], keys: tuple[str, ...]) -> Delayed:
    """A task that gives the categories of each ordered dictionary key of ``keys`` whose
    meta holds none (that of ``dd.read_parquet``), read from the parts of the run and
    of the keyed tables that hold it: ``(key, categories)`` where every part with rows
    holds the same dictionary (each parquet part of an Enum holds its categories); a
    key whose parts hold several is left out (given back as an ordered dictionary of
    the values seen)."""
    frames = [run, *(t for t in keyed.values() if any(k in t.columns for k in keys))]
    parts = []
    for frame in frames:
        held = [k for k in keys if k in frame.columns]
        parts += [delayed(_part_words)(part, held) for part in frame[held].to_delayed()]
    return delayed(_agreed_words)(keys, *parts)


def _part_words(frame: pd.DataFrame, keys: list[str]) -> dict[str, tuple[str, ...]]:
    """The dictionary of each key of ``keys`` in one part (none for a part with no rows)."""
    return {k: _words(frame, k) for k in keys} if len(frame) else {}


def _agreed_words(
    keys: tuple[str, ...], *parts: dict[str, tuple[str, ...]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The keys whose parts all hold one non-empty dictionary, with it."""
    agreed = []
    for key in keys:
        words = {p[key] for p in parts if key in p}
        if len(words) == 1 and all(words):
            agreed.append((key, words.pop()))
    return tuple(agreed)


def _with_enums(
    frame: pd.DataFrame,
    enums: tuple[tuple[str, tuple[str, ...]], ...],
    order: list[str],
    unknown: dict[str, Any],
    told: tuple[tuple[str, tuple[str, ...]], ...] | None,
) -> pd.DataFrame:
    """``frame`` with each key of ``enums`` and ``told`` (the categories the parts
    gave where the meta had none) cast from its text to its Enum and its rows sorted by
    ``order`` (stably: a part's queries keep their order within a key); a key of
    ``unknown`` the parts gave no one Enum of is cast to its dtype there."""
    applied = dict((*enums, *(told or ())))
    polars = as_polars_frame(to_table(frame))
    given = [(k, pl.Enum(list(c))) for k, c in applied.items() if k in polars.columns]
    polars = polars.with_columns(pl.col(k).cast(pl.String).cast(e) for k, e in given)
    if given:
        polars = polars.sort(order, maintain_order=True)
    out = to_pandas(polars.to_arrow(compat_level=pl.CompatLevel.oldest()))
    rest = {k: d for k, d in unknown.items() if k in out.columns and k not in applied}
    return out.astype(rest) if rest else out


def _dictionary_columns(frame: Any) -> dict[str, Any]:
    """The Arrow dictionary columns (Categorical, Enum) of ``frame`` and their dtypes
    (none where it is no Dask frame: the door refuses it)."""
    if not isinstance(frame, dd.DataFrame):
        return {}
    return {str(c): dtype for c, dtype in frame.dtypes.items() if _is_dictionary(dtype)}


def _is_dictionary(dtype: Any) -> bool:
    return isinstance(dtype, pd.ArrowDtype) and pa.types.is_dictionary(dtype.pyarrow_dtype)


def _as_values(frame: Any, keys: tuple[str, ...] = (), name: str = "run") -> Any:
    """``frame`` (a Dask frame; anything else as it is, for the door to refuse) with
    each Arrow dictionary column as its values (text: an id's or a group's text, which
    is how every table's Categorical and String ids meet). A ``systems=`` / ``by=`` key
    of ``keys`` it holds as an Enum whose categories its meta holds, where a part holds
    a value outside them, is refused there (:func:`_as_text`): one frame's Enum holds
    no such value. ``name``: the table's (``"qrels"``...), for the refusal's words."""
    if not isinstance(frame, dd.DataFrame):
        return frame
    cast = {
        column: pd.ArrowDtype(dtype.pyarrow_dtype.value_type)
        for column, dtype in frame.dtypes.items()
        if _is_dictionary(dtype)
    }
    enums = ((k, _words(frame._meta, k)) for k in dict.fromkeys(keys) if k in cast)
    checked = tuple((k, c) for k, c in enums if c and _ordered(frame.dtypes[k]))
    if not checked:
        return frame.astype(cast) if cast else frame
    return frame.map_partitions(_as_text, cast, checked, name, meta=frame._meta.astype(cast))


def _as_text(
    frame: pd.DataFrame,
    cast: dict[str, Any],
    enums: tuple[tuple[str, tuple[str, ...]], ...],
    name: str,
) -> pd.DataFrame:
    """A part with its dictionary columns as text, refused where a key of ``enums``
    holds a value that is none of its meta's categories (a hand-built frame whose
    parts hold other Enums than its meta's)."""
    text = frame.astype(cast)
    for key, words in enums:
        column = text[key]
        outside = column.notna() & ~column.isin(words)
        if outside.any():
            value = column[outside].iloc[0]
            table = _NAMED.get(name, f"{name}=")
            raise InvalidValueError(
                f"column {key!r} of {table} holds {value!r}, which is none of the "
                f"categories of its Enum in the Dask frame's meta ({list(words)!r}): one "
                "frame's Enum cannot hold it (a part holds another Enum than the meta's); "
                "give the meta and every part one Enum of every value, e.g. "
                f"pl.Enum({[*words, value]!r}), or cast the column to text (pl.String) "
                "on every part"
            )
    return text


def _evaluate(
    run: dd.DataFrame,
    metrics: str | Iterable[str],
    *,
    qrels: dd.DataFrame | None = None,
    queries: dd.DataFrame | None = None,
    labels: dd.DataFrame | None = None,
    policy: dd.DataFrame | None = None,
    reward_model: dd.DataFrame | None = None,
    propensities: dd.DataFrame | None = None,
    groups: dd.DataFrame | None = None,
    target: dd.DataFrame | None = None,
    interactions: dd.DataFrame | None = None,
    item_features: dd.DataFrame | None = None,
    reference: dd.DataFrame | None = None,
    partitions: int | None = None,
    enums: tuple[tuple[str, tuple[str, ...]], ...] = (),
    told_enums: Delayed | None = None,
    **options: Unpack[EvalKwargs],
) -> dd.DataFrame:
    """:func:`evaluate` on frames without Arrow dictionary columns (``enums``: the
    keys that were a polars Enum, with its categories, for the coverage warnings'
    order: :attr:`~polars_irmetrics.engines._partition.Job.enums`; ``told_enums``: a
    task giving more of them, read from the parts, where the meta holds none)."""
    named = {"qrels": qrels, "queries": queries, "labels": labels, "policy": policy}
    named |= {"reward_model": reward_model, "propensities": propensities, "groups": groups}
    named |= {"interactions": interactions, "item_features": item_features}
    named |= {"reference": reference}

    def wide_ids(built: EvalOptions) -> None:  # before queries= is read, as ever
        _refuse_wide_ids(run, named, built, metrics)

    built, halves = split_front(
        "Dask",
        evaluate,
        run,
        metrics,
        {**named, "target": target},
        partitions,
        options,
        ensure_frame=_ensure_frame,
        schema=arrow_of,
        checks=wide_ids,
    )
    if halves is not None:  # two calls, side by side as one machine puts them
        beside, rest, exposure = halves
        both = _beside(rest, exposure, beside, built)
        return persist(both) if built.progress else both
    given = {"groups": groups, "target": target, "interactions": interactions}
    given |= {"item_features": item_features}
    for name, table in given.items():
        if table is not None:
            _ensure_frame(table, name)
    every = {"qrels": qrels, "queries": queries, "labels": labels, "policy": policy}
    every |= {"reward_model": reward_model, "propensities": propensities, **given}
    # the run's columns, which rank=, score= and sample_id= must name, as evaluate checks
    columns = named_columns(run, built)
    names, agreement = agreement_route(
        "Dask", metrics, built, {**every, "reference": reference}, run=columns
    )
    if agreement and reference is not None:
        _ensure_frame(reference, "reference")
        values = agreement_frame(
            run,
            names,
            reference=reference,
            count=_partitions(run, partitions),
            options=built,
            tag=_tag,
        )
        return persist(values) if built.progress else values
    if any(table is not None for table in given.values()):  # before the other routes
        check_sides("Dask", metrics, given)
    others = {"queries": queries, "labels": labels, "policy": policy, "reward_model": reward_model}
    names, ps = ps_route(
        "Dask", metrics, built, {**others, "propensities": propensities}, run=columns
    )
    if ps and propensities is not None:
        _ensure_frame(propensities, "propensities")
        values = ps_frame(
            run,
            names,
            qrels=qrels,
            propensities=propensities,
            count=_partitions(run, partitions),
            options=built,
            tag=_tag,
        )
        return persist(values) if built.progress else values
    tables = {"policy": policy, "reward_model": reward_model, "qrels": qrels}
    names, ope = ope_route(
        "Dask", metrics, built, {**tables, "queries": queries, "labels": labels}
    )
    if ope and policy is not None:
        _ensure_frame(policy, "policy")
        if reward_model is not None:
            _ensure_frame(reward_model, "reward_model")
        values = ope_frame(
            run,
            names,
            policy=policy,
            reward_model=reward_model,
            count=_partitions(run, partitions),
            options=built,
            tag=_tag,
        )
        return persist(values) if built.progress else values
    metrics = names
    metrics, predictions = prediction_route(
        "Dask", metrics, built, qrels=qrels, queries=queries, labels=labels
    )
    # an option none of the metrics reads, or a column named that the run lacks, is
    # refused, as irm.evaluate refuses it
    given_tables = {
        k for k, t in {**given, "qrels": qrels, "queries": queries}.items() if t is not None
    }
    check_options_read(built, metrics, labels=labels is not None, tables=given_tables, run=columns)
    refuse_click_means("Dask", metrics, built)  # their means are not the summary's
    sides = side_tables("Dask", metrics, given, _gather, built)
    if predictions:
        if labels is not None:
            _ensure_frame(labels, "labels")
        shared = [] if labels is None else shared_systems(built, run.columns, labels.columns)
        if shared:  # every system against every label: each part reads every system
            systems = [k for k in built.system_keys if k in run.columns]
            systems = [k for k in systems if k not in (built.query_id, built.doc_id)]
            distinct = run[systems].drop_duplicates().compute()
            table = pa.Table.from_pandas(distinct, preserve_index=False)
            rows = pl.from_arrow(table).rows()  # type: ignore[union-attr]
            built = built.replace(prediction_systems=tuple(rows))
        values = prediction_frame(
            run,
            metrics,
            labels=labels,
            count=_partitions(run, partitions),
            options=built,
            tag=_tag,
        )
        return persist(values) if built.progress else values
    partitioned_by = built.partitioned_by
    if partitioned_by is None:  # list-shaped sides (one row per query) in the long form
        run, qrels, built = dask_long_form(run, qrels, built)
    placed = None
    if queries is not None:
        _ensure_frame(queries, "queries")
        run, qrels, placed = _with_attributes(run, qrels, queries, built)
    names, kind = counts_route("Dask", metrics, built)
    if kind is not None:  # coverage, Gini, novelty: the items' counts; RePlay's novelty
        count = _partitions(run, partitions)
        # the history's warning waits for the refusal of unseen items, as on one machine
        # (a refused run warns of nothing, not later from a task that outran the refusal)
        run = unseen_gated(run, sides, metrics, built)
        values = counts_frame(
            run,
            names,
            kind=kind,
            sides=sides,
            count=count,
            options=built,
            tag=_tag,
        )
        values = _after(_after_history(values, run, interactions, sides, metrics, built), placed)
        return persist(values) if built.progress else values
    names, elliot = elliot_route("Dask", metrics)
    if elliot:  # Elliot's: each user's counts against the whole history, merged
        count = _partitions(run, partitions)
        values = elliot_frame(run, qrels, names, sides=sides, count=count, options=built, tag=_tag)
        values = _after(_after_history(values, run, interactions, sides, metrics, built), placed)
        return persist(values) if built.progress else values
    job = prepare(arrow_of(run), None if qrels is None else arrow_of(qrels), metrics, built, sides)
    job = replace(job, enums=enums)
    # the warnings' tasks read the Enums the parts give too (a Job, once they are read)
    told = job if told_enums is None else delayed(_with_told)(job, told_enums)
    if partitioned_by is not None:
        if partitions is not None:
            raise InvalidValueError(
                f"partitions={partitions!r} and partitioned_by={partitioned_by!r} exclude "
                "each other: with partitioned_by the run's own partitions make the tasks; "
                "drop partitions="
            )
        values = per_query_in_partitions(run, qrels, job, partitioned_by)
    else:
        # the whole run's unseen items refused before any part refuses its share, and
        # before groups= or the history warns (the warnings' tasks read the gated run)
        run = unseen_gated(run, sides, metrics, built)
        values = _per_query_shuffled(run, qrels, job, _partitions(run, partitions))
    warned = refused = None
    if interactions is not None and any(name == "interactions" for name, _ in sides):
        # the history's null ids refused once every part has computed its values (a run
        # a part refuses is refused first) and before the parts' and groups='s warnings,
        # as one machine refuses them before its plan warns
        values, done = computed(values, refusals_in)
        refused = delayed(_refuse_history_nulls)(
            done,
            _null_rows(interactions, metrics, built),
            sides,
            metrics,
            built,
            list(interactions.columns),
        )
    if any(name == "groups" for name, _ in sides):  # groups= against the whole run's ids
        # once every part has computed its values: a run a part refuses warns of nothing
        # (one machine refuses it before it counts groups='s ids)
        if refused is None:
            values, done = computed(values, refusals_in)
        else:
            done = refused
        (docs,) = run[[built.doc_id]].drop_duplicates(split_out=1).to_delayed()
        relevant = queried = None
        if qrels is not None and reads_relevant_group_ids(sides, metrics):  # ee_*, awrf
            # the relevant (query, document) pairs and the run's queries: those
            # without a group in the run's queries are named, as one machine names them
            judged = qrels[qrels[built.relevance] > 0][[built.query_id, built.doc_id]]
            (relevant,) = judged.drop_duplicates(split_out=1).to_delayed()
            (queried,) = run[[built.query_id]].drop_duplicates(split_out=1).to_delayed()
        warned = delayed(_warn_on_group_ids)(done, docs, sides, metrics, built, relevant, queried)
    # the parts' coverage rows, added up and warned about by compute() (_dask_coverage),
    # after groups='s warnings (one machine's order)
    warned = refused if warned is None else warned
    if built.per_query:
        values = released(values, job, before=warned, told=told)
    else:
        segments = None
        if tells_segments(job):  # by= groups the exposure measures score no query of
            (segments,) = run[list(job.by)].drop_duplicates(split_out=1).to_delayed()
        values = summarized(values, job, segments, before=warned, told=told)
    values = _after(_after_history(values, run, interactions, sides, metrics, built), placed)
    return persist(values) if built.progress else values


def _with_told(job: Job, told: tuple[tuple[str, tuple[str, ...]], ...]) -> Job:
    """``job`` with the Enums the parts gave (:func:`_told_enums`) among its own."""
    return replace(job, enums=(*job.enums, *told))


def _after(values: dd.DataFrame, task: Delayed | None) -> dd.DataFrame:
    """``values``, released once ``task`` has run (unchanged without one)."""
    return values if task is None else values.map_partitions(after, task, meta=values._meta)


def _after_history(
    values: dd.DataFrame,
    run: dd.DataFrame,
    interactions: dd.DataFrame | None,
    sides: tuple[tuple[str, pa.Table], ...],
    metrics: str | Iterable[str],
    options: EvalOptions,
) -> dd.DataFrame:
    """``values``, released once the history's warning (and refusal of null ids) has
    been given against the whole run's users and items, where a metric reads the history
    (with ``unseen_items='drop'`` too, the ids as given, before the drop), and the item
    features' warning where their items' recommendations are scored or left out
    (:func:`~polars_irmetrics.engines._sides.warns_on_features`). Where only the
    catalogue travelled, the history's distinct users and rows with a null id are
    counted by tasks too."""
    history = interactions is not None and any(name == "interactions" for name, _ in sides)
    if not (history or warns_on_features(sides, options)):
        return values
    ids = [
        run[[key]].drop_duplicates(split_out=1).to_delayed()[0]
        for key in (options.query_id, options.doc_id)
    ]
    # with systems=, each system's distinct ids too: a system the history lacks is named
    systems = list(options.system_keys)
    by_system = [
        run[[*systems, key]].drop_duplicates(split_out=1).to_delayed()[0] if systems else None
        for key in (options.query_id, options.doc_id)
    ]
    held_users, null_rows = None, None
    if history and interactions is not None and not reads_history(metrics):  # catalogue only
        columns = [c for c in (options.doc_id, options.query_id) if c in interactions.columns]
        null_rows = _null_rows(interactions, metrics, options)
        if options.query_id in columns:
            held = interactions[[options.query_id]].drop_duplicates(split_out=1)
            held_users = held.to_delayed()[0]
    # once the values are computed (and their warnings given): a run a part refuses
    # warns of nothing, and the history's warning comes after the others, one machine's
    # order (it counts the history's ids once the values are collected)
    values, done = computed(values)
    warned = delayed(_warn_on_history)(
        done, *ids, held_users, null_rows, sides, metrics, options, *by_system
    )
    return values.map_partitions(after, warned, meta=values._meta)


def _null_rows(
    interactions: dd.DataFrame, metrics: str | Iterable[str], options: EvalOptions
) -> Delayed | None:
    """The task that counts the history's rows with a null id, where only its catalogue
    travels (``mcc@k``, ``reco_accuracy@k``: :func:`reads_history` false; the same
    task, by its key, for the refusal and the warning); ``None`` elsewhere."""
    if reads_history(metrics):
        return None
    columns = [c for c in (options.doc_id, options.query_id) if c in interactions.columns]
    return interactions[columns].isna().any(axis=1).sum().to_delayed()


def _refuse_history_nulls(
    _computed: bool,
    null_rows: Any,
    sides: Any,
    metrics: Any,
    options: EvalOptions,
    held: list[str],
) -> bool:
    """The task that refuses the history's rows with a null id
    (:func:`~polars_irmetrics.engines._sides.refuse_history_nulls`) once the values are
    computed (``_computed``), before the parts' warnings."""
    count = None if null_rows is None else int(null_rows)
    return refuse_history_nulls(sides, metrics, options, null_rows=count, held=held)


def _warn_on_history(
    _computed: bool,
    users: pd.DataFrame,
    items: pd.DataFrame,
    held_users: pd.DataFrame | None,
    null_rows: Any,
    sides: Any,
    metrics: Any,
    options: EvalOptions,
    system_users: pd.DataFrame | None = None,
    system_items: pd.DataFrame | None = None,
) -> bool:
    """The task that warns when the history mostly lacks the run's items (or holds none
    of its users), and refuses its null ids, on the client that computes the result,
    once the values are computed (``_computed``); with systems=, each system's distinct
    users and items name a system it lacks."""
    found = {options.query_id: system_users, options.doc_id: system_items}
    system_ids = {k: to_table(f) for k, f in found.items() if f is not None}
    return warn_on_history(
        to_table(users),
        to_table(items),
        sides,
        metrics,
        options,
        emit=emitter(),
        held_users=None if held_users is None else to_table(held_users),
        null_rows=None if null_rows is None else int(null_rows),
        system_ids=system_ids or None,
        emit_table=emitter(IrmWarning),
    )


def _warn_on_group_ids(
    _computed: bool,
    docs: pd.DataFrame,
    sides: Any,
    metrics: Any,
    options: EvalOptions,
    relevant: pd.DataFrame | None = None,
    queries: pd.DataFrame | None = None,
) -> bool:
    """The task that warns when groups= mostly lacks the run's documents (its distinct
    ``doc_id`` values) or the judgments' relevant ones (their distinct ``query_id`` and
    ``doc_id`` pairs; ``queries``: the run's distinct ``query_id``), on the client that
    computes the result, once every part has computed its values (``_computed``)."""
    return warn_on_group_ids(
        to_table(docs),
        sides,
        metrics,
        options,
        emit=emitter(),
        relevant=None if relevant is None else to_table(relevant),
        queries=None if queries is None else to_table(queries),
    )


def _beside(
    rest: dd.DataFrame, exposure: dd.DataFrame, beside: Beside, options: EvalOptions
) -> dd.DataFrame:
    """The exposure measures' values beside the other metrics', as
    :func:`polars_irmetrics.evaluate` puts them: per query an outer merge on the query
    keys (rows in task order), the metrics in the order given; or the means side by
    side in one partition, with the exposure measures' ``num_q_exposure`` after the
    accuracy metrics' ``num_q`` (a ``by`` group one call lacks counts 0 queries there;
    beside the beyond-accuracy metrics, which count none, theirs is ``num_q``), sorted by
    the groups. Each call's coverage warning is given by ``compute()``, as each alone."""
    if options.per_query:
        keys = [*options.by_keys, options.query_id]
        joined = rest.merge(exposure, on=keys, how="outer")
        return joined[[*keys, *beside.labels]]
    by = list(options.by_keys)
    counts = ["num_q", EXPOSURE_COUNT] if "num_q" in rest.columns else ["num_q"]
    exposure = exposure.rename(columns={"num_q": counts[-1]})
    if not by:  # one row each
        one = f"{PART}_one"
        joined = rest.assign(**{one: 1}).merge(exposure.assign(**{one: 1}), on=one)
    else:
        joined = rest.merge(exposure, on=by, how="outer")
    joined = joined.repartition(npartitions=1)
    return joined.map_partitions(
        _side_by_side,
        by,
        counts,
        [*by, *counts, *beside.labels],
        meta=joined._meta[[*by, *counts, *beside.labels]],
    )


def _side_by_side(
    frame: pd.DataFrame, by: list[str], counts: list[str], columns: list[str]
) -> pd.DataFrame:
    """The means of both calls in one partition: a group's missing count is 0, the rows
    sorted by the groups."""
    frame = frame.fillna(dict.fromkeys(counts, 0))
    if by:
        frame = frame.sort_values(by, kind="stable", ignore_index=True)
    return frame[columns].reset_index(drop=True)


def _with_attributes(
    run: dd.DataFrame, qrels: dd.DataFrame | None, queries: dd.DataFrame, options: EvalOptions
) -> tuple[dd.DataFrame, dd.DataFrame | None, Delayed]:
    """``run`` and ``qrels`` with the ``by`` keys that ``queries`` holds, and the task
    that raises one machine's error where a query of either has no key there.

    The rows with a null key are left out of the parts (a part would refuse its own
    null key alone, in other words) and the result waits for that task, which looks
    for them across the parts. The judgments' query ids are cast to the ids' common
    dtype for the merge where theirs differs from the run's (as the plan casts them).
    """
    query_id = options.query_id
    keys, missing = attribute_columns(
        arrow_of(run), None if qrels is None else arrow_of(qrels), arrow_of(queries), options
    )
    # matched in the dtype that holds every table's ids (Int64 ids of queries= beside
    # an Int32 run: Int64), never cast to the run's (which failed with Arrow's text)
    frames = [f for f in (run, qrels, queries) if f is not None]
    ids = [as_polars_frame(arrow_of(f).empty_table())[query_id].dtype for f in frames]
    common = meta(pl.Schema({query_id: common_id_dtype(ids)}))[query_id].dtype
    attributes = queries[[query_id, *keys]].drop_duplicates()
    if attributes[query_id].dtype != common:
        attributes[query_id] = attributes[query_id].astype(common)
    if qrels is not None:
        if qrels[query_id].dtype != run[query_id].dtype:  # as the plan casts them
            dtypes = [
                as_polars_frame(arrow_of(f).empty_table())[query_id].dtype for f in (run, qrels)
            ]
            judged = meta(pl.Schema({query_id: common_id_dtype(dtypes)}))[query_id].dtype
            qrels = qrels.assign(**{query_id: qrels[query_id].astype(judged)})
        qrels = _merged_on_query(qrels, attributes, query_id, common)
    if missing:
        run = _merged_on_query(run, attributes[[query_id, *missing]], query_id, common)
    nulls = [
        (key, side[side[key].isna()][[query_id]].drop_duplicates(split_out=1).to_delayed()[0])
        for key in keys
        for side in (run, qrels)
        if side is not None and key in side.columns
    ]
    placed = delayed(_placed)(nulls)
    run = run[run[[k for k in keys if k in run.columns]].notnull().all(axis=1)]
    if qrels is not None:
        qrels = qrels[qrels[list(keys)].notnull().all(axis=1)]
    return run, qrels, placed


def _merged_on_query(
    frame: dd.DataFrame, attributes: dd.DataFrame, query_id: str, common: Any
) -> dd.DataFrame:
    """``frame`` left-merged with ``attributes`` (their ids of dtype ``common``) on the
    query id compared as ``common``; ``frame``'s id column cast back to its own dtype
    (its own values, so exactly)."""
    own = frame[query_id].dtype
    if own == common:
        return frame.merge(attributes, on=query_id, how="left")
    merged = frame.assign(**{query_id: frame[query_id].astype(common)}).merge(
        attributes, on=query_id, how="left"
    )
    return merged.assign(**{query_id: merged[query_id].astype(own)})


def _placed(nulls: list[tuple[str, pd.DataFrame]]) -> bool:
    """Raise one machine's error for the first ``by`` key (of ``queries=``, in their
    order) some query of the run or of the judgments has no value of: ``nulls`` pairs
    each key with the ids of a side's queries whose key is null."""
    for key in dict.fromkeys(k for k, _ in nulls):
        ids = pl.concat(
            [as_polars_frame(to_table(f)) for k, f in nulls if k == key], how="vertical_relaxed"
        ).to_series(0)
        ids = ids.drop_nulls()
        if ids.len():
            raise unplaced_query_error(key, ids.sort()[0], ids.n_unique())
    return True


def _per_query_shuffled(
    run: dd.DataFrame, qrels: dd.DataFrame | None, job: Job, count: int
) -> dd.DataFrame:
    """The per-query values, both sides shuffled by query hash into ``count`` parts."""
    runs = _shuffled(run, job, count)
    values_meta = carrier_meta(job)
    if qrels is None:
        return runs.map_partitions(_one_side, job, meta=values_meta, enforce_metadata=False)
    judged = _shuffled(with_groups(run, qrels, job), job, count)
    return dd.map_partitions(
        _both_sides,
        runs,
        judged,
        job,
        meta=values_meta,
        enforce_metadata=False,
        align_dataframes=False,
    )


def _shuffled(frame: dd.DataFrame, job: Job, count: int) -> dd.DataFrame:
    """``frame`` with its part column, shuffled on it into ``count`` partitions."""
    tagged_meta = frame._meta.assign(**{PART: pd.Series([], dtype="int64")})
    tagged = frame.map_partitions(_tag, job.options.query_id, count, meta=tagged_meta)
    return tagged.shuffle(on=PART, npartitions=count, ignore_index=True)


def _tag(frame: pd.DataFrame, query_id: str, count: int) -> pd.DataFrame:
    ids = as_polars_frame(to_table(frame[[query_id]]))
    # an id's text is the same in every integer dtype (5 as Int32, Int64 or UInt64; a
    # UInt64 beyond 2**63, which a cast to Int64 refused): both sides' rows of a query
    # land in one part
    column = pl.col(query_id).cast(pl.String)
    parts = ids.select((column.hash(seed=0x1E1A) % count).cast(pl.Int64))
    return frame.assign(**{PART: parts.to_series().to_numpy()})


def _refuse_wide_ids(
    run: dd.DataFrame,
    tables: dict[str, dd.DataFrame | None],
    options: EvalOptions,
    metrics: str | Iterable[str],
) -> None:
    """Refuse ids that one machine holds as 128-bit integers (a UInt64 column beside a
    signed one: :func:`~polars_irmetrics.ground.validate.common_id_dtype`) where the
    Arrow tables the tasks exchange would carry them: the query ids of the per-query
    values, and the document ids of the routes whose parts give rows per item (the
    items' counts, RePlay's novelty) or that are not checked with them (the other
    routes). The document ids of the ranking metrics, the exposure measures, the means
    of per-user values and rank similarity (``metrics``) stay within each part, whose
    plan lines them up as one machine does (as Int128; rank similarity's count of the
    documents the reference lists joins them in polars too): those are taken."""
    frames = {"run": run, **{k: t for k, t in tables.items() if isinstance(t, dd.DataFrame)}}
    schemas = {
        name: as_polars_frame(arrow_of(f).empty_table()).schema for name, f in frames.items()
    }
    for column in (options.query_id, options.doc_id):
        if column == options.doc_id and _docs_in_parts(metrics):
            continue
        found = {name: s[column] for name, s in schemas.items() if column in s}
        common = common_id_dtype(list(found.values())) if found else pl.Int64()
        if common in (pl.Int128(), pl.UInt128()):
            held = ", ".join(f"{dtype} in the {name}" for name, dtype in found.items())
            raise ColumnTypeError(
                f"column {column!r} is {held}: one machine matches them as {common}, which "
                "the Arrow tables of Dask's tasks cannot carry; cast every table's "
                f"{column!r} to one dtype first, e.g. .astype({{{column!r}: 'int64'}}) "
                "where every id is below 2**63, or to strings"
            )


def _docs_in_parts(metrics: str | Iterable[str]) -> bool:
    """Whether every metric of ``metrics`` reads the document ids within each part
    alone (:func:`_refuse_wide_ids`): a ranking metric, an exposure measure, a rank
    similarity, or a mean of per-user values of a recommendation table (not the items'
    counts nor RePlay's novelty, whose parts give rows per item or per history user).
    Unknown metrics are left to the routes' own refusal."""
    try:
        requests = parse_metric_list(metrics)
    except IrmError:
        return False
    return all(
        r.route in ("offline", "exposure", "reference")
        or (r.route == "recsys" and not merges_from_counts(r) and not averages_over_history(r))
        for _, r in requests
    )


def _one_side(run: pd.DataFrame, job: Job) -> pd.DataFrame:
    return _both_sides(run, None, job)


def _both_sides(run: pd.DataFrame, qrels: pd.DataFrame | None, job: Job) -> pd.DataFrame:
    """A part's values and, beside them, its coverage; a data error one plan orders is
    carried there too, the part giving no values (the task that gathers the parts
    raises the least of their refusals: one machine's, whichever part holds it)."""
    found: list[Coverage | Clicks | Refusal] = []
    judged = None if qrels is None else to_table(qrels)
    schema = job.per_query_schema
    values = held_part(
        schema, found.append, evaluate_part, job, to_table(run), judged, found.append
    )
    return carried(job, values, found)


def _gather(
    name: str, frame: dd.DataFrame, columns: tuple[str, ...], distinct: bool = False
) -> pa.Table:
    """A side table (``groups=``, ``target=``, the history) computed on the client, as
    Arrow: ``columns`` only (every one when empty), their distinct rows with
    ``distinct`` (the catalogue)."""
    if columns:
        frame = frame[list(columns)]
    if distinct:
        frame = frame.drop_duplicates()
    return to_table(frame.compute())


def _partitions(run: dd.DataFrame, partitions: int | None) -> int:
    if partitions is None:
        return int(run.npartitions)
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise InvalidValueError(
            f"partitions must be a positive integer or None, got {partitions!r}"
        )
    return partitions


def _ensure_frame(frame: Any, name: str) -> None:
    if not isinstance(frame, dd.DataFrame):
        raise ColumnTypeError(
            f"{name} must be a Dask DataFrame, got {type(frame).__name__}; for polars "
            "frames use polars_irmetrics.evaluate, or convert, e.g. "
            "dd.from_pandas(frame.to_pandas(), npartitions=4)"
        )
