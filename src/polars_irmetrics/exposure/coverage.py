"""How the ids of ``groups=`` and ``target=`` line up with a run's documents: the
counts the exposure measures warn from (:class:`~polars_irmetrics.errors.CoverageWarning`),
and the group dimensions ``groups=`` gives.

:func:`~polars_irmetrics.exposure.plan.build_exposure_plan` counts the documents of the
run it is given; a run evaluated in parts (buckets, an engine's partitions) is counted
whole, once, by :func:`groups_tally`, and its parts do not warn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.spelling import FOLDS, spelling_change, spelling_fold
from polars_irmetrics.ground.validate import (
    INTERNAL,
    is_text,
    lacks_most,
    systems_named,
    systems_tally,
    warn_from_plan,
    warn_on_joint,
    with_common_ids,
)
from polars_irmetrics.metrics.fairness import AWRF, EXPECTED_EXPOSURE, SEGREGATION
from polars_irmetrics.metrics.registry import MetricRequest

__all__ = [
    "AWRF_MEASURES",
    "dimensions_of",
    "groups_tally",
    "refuse_unread_group_columns",
    "warn_on_groups",
]

Requests = list[tuple[str, MetricRequest]]

#: The measures that read intersectional groups (several group columns): awrf and
#: awrf_ndcg (:data:`~polars_irmetrics.metrics.fairness.AWRF`, declared once).
AWRF_MEASURES = AWRF


def dimensions_of(schema: pl.Schema, doc_id: str, grouped: list[str]) -> list[str]:
    """The group dimensions of groups=: ``group``, or (intersectional groups, read by
    awrf and awrf_ndcg only) every column but ``doc_id`` where there is no ``group`` and
    two or more others. ``grouped``: the labels of the other measures asked for, which
    read the one column ``group``."""
    if "group" in schema:
        return ["group"]
    others = [c for c in schema.names() if c != doc_id]
    have = ", ".join(repr(c) for c in schema.names())
    if len(others) < 2:
        raise ColumnNotFoundError(
            f"column 'group' not found in the groups (its columns: {have}); one row per "
            "(document, group), or for awrf's intersectional groups doc_id and two or more "
            "group columns"
        )
    if grouped:
        raise ColumnNotFoundError(
            f"column 'group' not found in the groups (its columns: {have}); {grouped[0]} "
            "reads one group per row from column 'group' (the group columns "
            f"{', '.join(repr(c) for c in others)} are intersectional groups, which only "
            "awrf and awrf_ndcg read): ask for it in a call of its own with a groups "
            "table doc_id, group"
        )
    return others


def refuse_unread_group_columns(schema: pl.Schema, doc_id: str) -> None:
    """Refuse a column of groups= beside ``doc_id`` and ``group`` (a label, a weight, a
    second group column), which no measure reads: with a ``group`` column each row puts
    one document in the group it names, and another column would be dropped without a
    word (a second dimension meant as awrf's intersectional groups read as one). Without
    ``group`` every other column is a dimension of intersectional groups
    (:func:`dimensions_of`).

    >>> refuse_unread_group_columns(pl.Schema({"doc_id": pl.String, "group": pl.String,
    ...     "region": pl.String}), "doc_id")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'region' of groups= is not read: ...
    """
    unread = [name for name in schema.names() if name not in (doc_id, "group")]
    if "group" in schema and unread:
        raise InvalidValueError(
            f"column {unread[0]!r} of groups= is not read: with a 'group' column each row "
            f"puts one document ({doc_id!r}) in the group it names, and no measure reads "
            f"another column; drop it, e.g. groups.select({doc_id!r}, 'group'), or for "
            "awrf's intersectional groups give one column per dimension and none named "
            "'group'"
        )


_DOCS, _GROUPED = f"{INTERNAL}docs", f"{INTERNAL}grouped"
_GROUPS, _TARGETED = f"{INTERNAL}groups", f"{INTERNAL}targeted"
_STRAY, _STRAY_FIRST = f"{INTERNAL}stray", f"{INTERNAL}stray_first"
#: The group columns of groups= and target= (``group``, or intersectional groups'
#: dimensions), a list in the tally's row: the target's warning names them.
_DIMENSIONS = f"{INTERNAL}dimensions"
_RELEVANT, _RELEVANT_GROUPED = f"{INTERNAL}relevant", f"{INTERNAL}relevant_grouped"
_LOST, _LOST_QUERIES = f"{INTERNAL}lost", f"{INTERNAL}lost_queries"
_LOST_DOC, _LOST_QUERY = f"{INTERNAL}lost_doc", f"{INTERNAL}lost_query"
#: The run's documents groups= gives no group that match one of its documents once the
#: spaces around them, case and separators are ignored: how many, and the first pair.
_SPELT, _SPELT_RUN, _SPELT_HELD = (
    f"{INTERNAL}groups_spelt",
    f"{INTERNAL}groups_spelt_run",
    f"{INTERNAL}groups_spelt_held",
)
_FOLD = f"{INTERNAL}groups_fold"


def _spelt_apart(flagged: pl.LazyFrame, grouped: pl.LazyFrame, doc_id: str) -> pl.LazyFrame:
    """One row: the run's distinct documents without a group (``flagged``: each with
    its flag, null without) that match a document of groups= (``grouped``) once the
    spaces around them, case and separators are ignored
    (:func:`~polars_irmetrics.ground.spelling.spelling_fold`; a prefix and leading zeros
    kept: ``'d01'`` and ``'d1'`` may be two documents), how many, and the first pair.
    Two ids that match so differ, so one of them is not its own fold: only those are
    folded (one regex test of each id first), the others matched as they are."""
    text = pl.col(doc_id).cast(pl.String)
    odd = text.str.contains(FOLDS)

    def folded(ids: pl.LazyFrame) -> pl.LazyFrame:
        ids = ids.select(text.alias(doc_id))
        return pl.concat(
            [
                ids.filter(odd).with_columns(spelling_fold(pl.col(doc_id)).alias(_FOLD)),
                ids.filter(~odd).with_columns(pl.col(doc_id).alias(_FOLD)),
            ]
        )

    lacking = folded(flagged.filter(pl.col(_GROUPED).is_null() & pl.col(doc_id).is_not_null()))
    held = folded(grouped.select(doc_id).filter(pl.col(doc_id).is_not_null()))
    right = f"{doc_id}_right"
    pairs = (
        lacking.join(held, on=_FOLD).filter(pl.col(doc_id) != pl.col(right)).sort(doc_id, right)
    )
    return pairs.select(
        pl.col(doc_id).n_unique().cast(pl.Int64).alias(_SPELT),
        pl.col(doc_id).first().alias(_SPELT_RUN),
        pl.col(right).first().alias(_SPELT_HELD),
    )


def reads_relevant_groups(requests: Requests, target: object | None) -> bool:
    """Whether a measure of ``requests`` reads the groups of the relevant judged
    documents: the expected-exposure measures (their targets,
    :data:`~polars_irmetrics.metrics.fairness.EXPECTED_EXPOSURE`), and awrf and
    awrf_ndcg without ``target`` (their default target is the relevant documents' group
    distribution)."""
    return any(_reads_their_groups(r.metric.name, target is not None) for _, r in requests)


def _reads_their_groups(name: str, targeted: bool) -> bool:
    """Whether the measure ``name`` reads the groups of the relevant judged documents
    (``targeted``: target= is given, which awrf and awrf_ndcg then read instead)."""
    return name in EXPECTED_EXPOSURE or (not targeted and name in AWRF_MEASURES)


def _tally(
    run: pl.LazyFrame,
    groups: pl.LazyFrame,
    target: pl.LazyFrame | None,
    doc_id: str,
    dimensions: list[str],
    relevant: pl.LazyFrame | None = None,
    system_rows: pl.LazyFrame | None = None,
    systems: Sequence[str] = (),
    query_id: str | None = None,
    queries: pl.LazyFrame | None = None,
    grouped_docs: pl.LazyFrame | None = None,
    *,
    distinct: bool = False,
) -> pl.LazyFrame:
    """One row: the run's documents and those groups= gives a group (``grouped_docs``:
    the distinct documents of groups=, where the caller has them; ``distinct``: the
    run's documents, ``run``, are distinct already); with ``relevant``
    (the relevant judged documents), those and the grouped ones among them; with
    target=, the groups of groups= (the cells of the group columns ``dimensions``) and
    those the target names; with ``systems`` (keys of ``system_rows``, the run's
    documents with its systems), each system whose documents groups= mostly lacks."""
    # read by the run's count and the relevant documents' (one pass of groups=)
    if grouped_docs is None:
        grouped_docs = groups.select(doc_id).unique()
    grouped = grouped_docs.with_columns(pl.lit(True).alias(_GROUPED)).cache()

    def flags(ids: pl.LazyFrame) -> pl.LazyFrame:
        """The distinct documents of ``ids``, each with its flag (null: no group)."""
        return ids.unique().join(grouped, on=doc_id, how="left")

    def counted(flagged: pl.LazyFrame, total: str, matched: str) -> pl.LazyFrame:
        """The distinct documents of ``flagged`` (:func:`flags`' frame), and those
        groups= gives a group."""
        return flagged.select(
            pl.len().cast(pl.Int64).alias(total),
            pl.col(_GROUPED).count().cast(pl.Int64).alias(matched),
        )

    # the run's documents with their flags; made distinct once (not again where they
    # are: the door's distinct documents, a hash of each of them saved)
    run_flags = run.join(grouped, on=doc_id, how="left") if distinct else flags(run)
    docs = counted(run_flags, _DOCS, _GROUPED)
    if is_text(run.collect_schema()[doc_id]):  # the run's documents spelt apart from its
        spelt = _spelt_apart(run_flags, grouped_docs, doc_id)
        docs = pl.concat([docs, spelt], how="horizontal")
    if systems and system_rows is not None:  # each system's own documents too
        per_system = systems_tally(system_rows, grouped, doc_id, _GROUPED, systems, distinct=True)
        docs = pl.concat([docs, per_system], how="horizontal")
    # the relevant documents, each once, with their flag: counted, and (below) those
    # without a group, the few rows the pairs of the lost ones are matched with
    flagged = None if relevant is None else flags(relevant.select(doc_id)).cache()
    if flagged is not None:
        judged = counted(flagged, _RELEVANT, _RELEVANT_GROUPED)
        docs = pl.concat([docs, judged], how="horizontal")
    if flagged is not None and relevant is not None and query_id is not None:
        # the relevant ones without a group (a null document too, as no group holds
        # it; each pair read as often as listed: the counts below are of distinct ids,
        # the first after a sort)
        ungrouped = flagged.filter(pl.col(_GROUPED).is_null()).select(doc_id)
        pairs = relevant.select(query_id, doc_id).join(
            ungrouped, on=doc_id, how="semi", nulls_equal=True
        )
        if queries is not None:  # of the run's queries only
            pairs = pairs.join(queries, on=query_id, how="semi")
        lost = pairs.sort(query_id, doc_id).select(
            pl.col(doc_id).n_unique().cast(pl.Int64).alias(_LOST),
            pl.col(query_id).n_unique().cast(pl.Int64).alias(_LOST_QUERIES),
            pl.col(doc_id).first().cast(pl.String).alias(_LOST_DOC),
            pl.col(query_id).first().cast(pl.String).alias(_LOST_QUERY),
        )
        docs = pl.concat([docs, lost], how="horizontal")
    if target is None:
        return docs
    cells = [pl.col(c).cast(pl.String) for c in dimensions]
    named = target.select(cells).unique()
    # each distinct cell of groups= named once (ids are integers or text: the text of
    # distinct ids is distinct), not every row of groups= before the distinct ones
    held = groups.select(dimensions).unique().select(cells).cache()  # read by both below
    targeted = held.join(
        named.with_columns(pl.lit(True).alias(_TARGETED)),
        on=dimensions,
        how="left",
        nulls_equal=True,
    ).select(
        pl.len().cast(pl.Int64).alias(_GROUPS),
        pl.col(_TARGETED).count().cast(pl.Int64).alias(_TARGETED),
        pl.lit(pl.Series(_DIMENSIONS, [dimensions], dtype=pl.List(pl.String))),
    )
    # the target's groups that groups= never holds: their share goes to no document
    stray = named.join(held, on=dimensions, how="anti", nulls_equal=True).select(
        pl.len().cast(pl.Int64).alias(_STRAY),
        pl.concat_str(cells, separator=", ").sort().first().alias(_STRAY_FIRST),
    )
    return pl.concat([docs, targeted, stray], how="horizontal")


def groups_tally(
    docs: pl.LazyFrame,
    groups: pl.LazyFrame,
    target: pl.LazyFrame | None,
    requests: Requests,
    options: EvalOptions,
    relevant: pl.LazyFrame | None = None,
    system_rows: pl.LazyFrame | None = None,
    queries: pl.LazyFrame | None = None,
    grouped_docs: pl.LazyFrame | None = None,
    *,
    distinct: bool = False,
) -> pl.LazyFrame:
    """One row: the counts :func:`warn_on_groups` reads, of how the ids of groups= (and
    target=) line up with the documents of a whole run (``docs``: its ``doc_id`` column,
    the distinct values enough; ``system_rows``: with ``systems=``, the run's documents
    with its system keys, each system counted too), as
    :func:`~polars_irmetrics.exposure.plan.build_exposure_plan` counts them; for a run
    evaluated in parts (buckets, an engine's partitions), whose parts do not warn.
    ``relevant``: the relevant judged documents (``doc_id``, relevance above 0), counted
    too where a measure asked reads their groups (:func:`reads_relevant_groups`); where
    it holds ``query_id`` too (the judgments of the run's queries), those without a
    group are counted with their queries (those of ``queries``, the run's ``query_id``
    column, where given), and named even when they are few. ``grouped_docs``: the
    distinct documents of groups= (``doc_id``), where the caller has them from a pass of
    its own (one pass of groups= for both). ``distinct``: ``docs`` holds each document
    once (the door's distinct documents of the run), not made distinct again. Where the
    documents are text, the run's documents without a group that match one of groups=
    once their spelling is ignored are counted too, with the first pair
    (:func:`_spelt_apart`).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> docs = pl.LazyFrame({"doc_id": ["a", "b", "c"]})
    >>> groups = pl.LazyFrame({"doc_id": ["A", "B", "c"], "group": ["x", "x", "y"]})
    >>> row = groups_tally(docs, groups, None, parse_metric_list(["rnd"]), EvalOptions())
    >>> row.collect().row(0)  # 3 documents, 1 grouped, 2 spelt apart ('a' beside 'A')
    (3, 1, 2, 'a', 'A')
    """
    doc_id = options.doc_id
    grouped = [label for label, r in requests if r.metric.name not in AWRF_MEASURES]
    dimensions = dimensions_of(groups.collect_schema(), doc_id, grouped)
    if relevant is not None and not reads_relevant_groups(requests, target):
        relevant = None
    systems = list(options.system_keys)
    relevant_schema = None if relevant is None else relevant.collect_schema()
    lost_read = relevant_schema is not None and options.query_id in relevant_schema
    relevant_query_type = (
        relevant_schema[options.query_id]
        if relevant_schema is not None and lost_read
        else pl.String()
    )
    columns = {
        doc_id: ["run", "groups", "relevant", "systems", "grouped"],
        **{c: ["groups", "target"] for c in dimensions},
    }
    tables = {
        "run": docs.select(doc_id),
        "groups": groups,
        "target": target,
        "relevant": None
        if relevant is None
        else relevant.select(*([options.query_id] if lost_read else []), doc_id),
        "systems": None
        if system_rows is None or not systems
        else system_rows.select(*systems, doc_id),
        "grouped": None if grouped_docs is None else grouped_docs.select(doc_id),
    }
    cast = with_common_ids({k: t for k, t in tables.items() if t is not None}, columns)
    return _tally(
        cast["run"],
        cast["groups"],
        cast.get("target"),
        doc_id,
        dimensions,
        cast.get("relevant"),
        cast.get("systems"),
        systems,
        options.query_id if lost_read else None,
        None
        if queries is None or not lost_read
        else queries.select(pl.col(options.query_id).cast(relevant_query_type)).unique(),
        cast.get("grouped"),
        distinct=distinct,
    )


def warn_on_groups(
    row: Mapping[str, Any],
    options: EvalOptions,
    clustered: Sequence[str] = (),
    requests: Sequence[tuple[str, MetricRequest]] = (),
) -> None:
    """The warning of :func:`~polars_irmetrics.exposure.plan.build_exposure_plan`, from a
    row of :func:`groups_tally`. ``clustered``: the labels of Elliot's ``item_mad@k``
    asked beside, which read the same groups= as item clusters: the one warning of the
    run's documents groups= lacks names their effect too (their plan does not warn of
    it again). ``requests``: the exposure measures asked, whose effect it names: a
    document without a group is in no group of the expected exposure and awrf, and an
    unprotected one of ``rnd``, ``rkl`` and ``rrd``.

    Examples
    --------
    >>> import warnings
    >>> row = {_DOCS: 3, _GROUPED: 0}
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_groups(row, EvalOptions(), ["item_mad@3"])
    >>> len(caught), "and item_mad@3 reads it in no cluster's mean" in str(caught[0].message)
    (1, True)
    """
    _warn_on_group_row(row, options.doc_id, clustered, options.system_keys, requests)


def _ungrouped_effect(requests: Sequence[tuple[str, MetricRequest]]) -> str:
    """What a document without a group is to the measures of ``requests``: in no group
    (the expected exposure, awrf: left out of every group's), or unprotected (``rnd``,
    ``rkl``, ``rrd``: counted in the ranking's size, not its protected count)."""
    segregation = [label for label, r in requests if r.metric.name in SEGREGATION]
    others = [label for label, r in requests if r.metric.name not in SEGREGATION]
    effects = []
    if others or not requests:
        where = f"in {', '.join(others)} " if segregation else ""
        effects.append(
            f"{where}a document without a group counts in no group, so its exposure and "
            "relevance are left out of every group's (with none grouped, the values are "
            "null or NaN)"
        )
    if segregation:
        subject = "it" if effects else "a document without a group"
        effects.append(
            f"{subject} is unprotected in {', '.join(segregation)} (counted in the "
            "ranking's N, not in its protected P; with none grouped no document is "
            "protected and the values are NaN)"
        )
    return "; and ".join(effects)


def _warn_on_lost(
    row: Mapping[str, Any],
    requests: Sequence[tuple[str, MetricRequest]],
    doc_id: str,
    targeted: bool,
) -> None:
    """The relevant judged documents of the run's queries that groups= gives no group
    (``row``'s counts, however few): the measures that read their groups (the
    expected-exposure measures; awrf and awrf_ndcg where target= is not ``targeted``)
    named."""
    readers = [label for label, r in requests if _reads_their_groups(r.metric.name, targeted)]
    named = ", ".join(readers) if readers else "the expected-exposure measures"
    queries = row[_LOST_QUERIES]
    warn_from_plan(
        f"groups= gives no group to {row[_LOST]} relevant judged document(s) in "
        f"{queries} quer{'y' if queries == 1 else 'ies'} of the run (first: "
        f"{row[_LOST_DOC]!r} of query {row[_LOST_QUERY]!r}): {named} leave them out "
        "(a relevant document without a group counts in no group: the expected-exposure "
        "targets leave its exposure out, and awrf's target, the relevant documents' "
        "groups, does not count it). Give each relevant document its group in groups= "
        f"(same {doc_id!r} spelling), or drop it from the judgments where it is meant to "
        "count in no group"
    )


def _warn_on_spelt(row: Mapping[str, Any], doc_id: str, effect: str) -> None:
    """The run's documents groups= gives no group that match one of its documents once
    their spelling is ignored (``row``'s counts, however few), with what a document
    without a group is to the measures (``effect``) and the fix."""
    ran_id, held_id = row[_SPELT_RUN], row[_SPELT_HELD]
    what, fix = spelling_change(ran_id, held_id)
    warn_from_plan(
        f"groups= gives no group to {row[_SPELT]} document(s) of the run that match one of "
        f"its documents only when {what} (run {ran_id!r}, groups= {held_id!r}): ids are "
        f"compared exactly, and {effect}. Give both the same spelling, e.g. "
        f"pl.col({doc_id!r}){fix} on the run and groups=."
    )


def _warn_on_group_row(
    row: Mapping[str, Any],
    doc_id: str,
    clustered: Sequence[str],
    systems: Sequence[str] = (),
    requests: Sequence[tuple[str, MetricRequest]] = (),
) -> None:
    """Documents groups= mostly lacks (the whole run's, or a system's), and groups
    target= mostly lacks: warned about."""
    mad = (
        f", and {', '.join(clustered)} read{'s' if len(clustered) == 1 else ''} it in no "
        "cluster's mean (with none clustered, MAD is null)"
        if clustered
        else ""
    )
    warn_on_joint(
        table="groups",
        column=doc_id,
        matched=row[_GROUPED],
        total=row[_DOCS],
        things="documents",
        owner="run",
        effect=f"{_ungrouped_effect(requests)}{mad}",
        by_system=systems_named(row, _GROUPED, systems),
    )
    if _RELEVANT in row:  # the relevant judged documents, where their groups are read
        warn_on_joint(
            table="groups",
            column=doc_id,
            matched=row[_RELEVANT_GROUPED],
            total=row[_RELEVANT],
            things="relevant documents",
            owner="judgments",
            effect="a relevant document without a group counts in no group: the "
            "expected-exposure measures leave its exposure out (a query none of whose "
            "relevant documents has a group is left out of them), and awrf's target (the "
            "relevant documents' groups, where target= is not given) does not count it",
        )
    # a few relevant documents without a group, where the warnings above are silent
    # (they speak of groups= lacking most documents: the same cause, said once)
    run_said = lacks_most(row[_GROUPED], row[_DOCS])
    run_said = run_said or bool(systems_named(row, _GROUPED, systems))
    if row.get(_SPELT) and not run_said:  # a few, spelt apart from its documents
        _warn_on_spelt(row, doc_id, f"{_ungrouped_effect(requests)}{mad}")
    if row.get(_LOST) and not run_said and not lacks_most(row[_RELEVANT_GROUPED], row[_RELEVANT]):
        _warn_on_lost(row, requests, doc_id, targeted=_GROUPS in row)
    if _GROUPS in row:
        warn_on_joint(
            table="target",
            column=row.get(_DIMENSIONS) or "group",
            matched=row[_TARGETED],
            total=row[_GROUPS],
            things="groups",
            owner="groups= table",
            effect="a group the target lacks has a target share of 0 in awrf, so awrf "
            "measures the distance to a target that none of the ranked groups can meet",
        )
    # the target's names groups= never holds, where the warning above is silent (it
    # speaks of a target holding few of the groups: most likely the same names)
    if row.get(_STRAY) and 2 * row[_TARGETED] >= row[_GROUPS]:
        warn_from_plan(
            f"target= names {row[_STRAY]} group(s) that groups= never holds (first: "
            f"{row[_STRAY_FIRST]!r}): no document can be in them, so their target share "
            "goes to no document and awrf measures the distance to a target no ranking "
            "can meet. Ids that do not line up are the likely cause: give target= and "
            "groups= the same group names (same spelling); a group with no document at "
            "all may be dropped from the target (and the rest renormalised)"
        )
