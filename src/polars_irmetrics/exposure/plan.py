"""Expected exposure (Diaz et al., CIKM 2020) as one lazy plan, equal to expeval.

Each ``(query, sample)`` ranking gives position ``i`` (0-based) the exposure ``p^i``
(rbp) or ``p^i (1-u)^r`` (geometric, ``r`` relevant documents above); a document's
expected exposure is the sum over the query's samples divided by their number. The
target gives each relevant grade's documents the mean exposure of the positions they
would share in an ideal ranking. With ``groups=`` both are summed over each group's
relevant documents (a document counts in full for each of its groups). See
:mod:`polars_irmetrics.metrics.fairness`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from polars_irmetrics.errors import (
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.exposure.awrf import (
    CELL_COUNT,
    SEP,
    alignments,
    awrf_values,
    cell_totals,
    exact_sum,
    target_flags,
)
from polars_irmetrics.exposure.coverage import (
    AWRF_MEASURES,
    dimensions_of,
    groups_tally,
    warn_on_groups,
)
from polars_irmetrics.exposure.rnd import (
    SEGREGATION,
    judged_labels,
    left_out_labels,
    segregation_values,
    warn_unscored_groups,
    warn_values,
)
from polars_irmetrics.ground.facts import (
    ABOVE,
    AGAINST,
    BELOW,
    DOCS,
    LENGTH,
    NAN,
    NANS,
    NULL_DOCS,
    ORDERED,
    RANKS,
    SharedFacts,
    SharedIds,
    ranking_facts,
    score_order,
    whole_ranks,
)
from polars_irmetrics.ground.options import EvalOptions, key_keyword, refuse_result_keys
from polars_irmetrics.ground.validate import (
    INTERNAL,
    JUDGMENT_COLUMNS_HINT,
    RUN_COLUMNS_HINT,
    check_id_kinds,
    check_numeric,
    doubled_group_error,
    flag_error,
    id_kind,
    id_kinds_error,
    key_dtype_error,
    neither_order,
    null_ids_count,
    null_ids_error,
    null_key_error,
    raise_unplaced,
    rank_against,
    require_columns,
    unplaced_query_error,
    with_common_ids,
    with_tally,
    with_tally_and_values,
)
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics.fairness import AWRF_LENGTH, SEGREGATION_LENGTH, UTILITY
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import JUDGMENT_FLAGS, judgment_flags

__all__ = ["build_exposure_plan", "exposure_means", "refuse_unplaced"]

Requests = list[tuple[str, MetricRequest]]

_S, _POS, _REL, _T, _E, _G, _BAD = "__s", "__pos", "__rel", "__t", "__e", "__g", "__bad"
_LENGTH, _WHOLE, _EVERY = "__length", "__whole", "__every"
_KINDS = {"ee_disparity": "disparity", "ee_relevance": "relevance", "ee_loss": "loss"}
_SEGREGATION = SEGREGATION


def warned_undefined(
    values: pl.LazyFrame,
    requests: Requests,
    keys: Sequence[str],
    query_id: str,
    *,
    summary: bool = True,
) -> pl.LazyFrame:
    """``values`` (every per-query row of the run) that warn, when collected, of the
    measures' undefined or unscored queries
    (:func:`~polars_irmetrics.exposure.rnd.warn_values`; ``summary``: the means asked
    for, where an expected-exposure measure leaving out a query the measures beside
    score is said too): the one plan's and the buckets' (over every bucket's rows, so
    the counts are the whole run's)."""
    labels = [label for label, r in requests if r.metric.name in _SEGREGATION]
    left = summary and bool(left_out_labels(requests))
    judged = bool(judged_labels(requests))
    if not labels and not left and not judged:
        return values

    def undefined(frame: pl.DataFrame) -> pl.DataFrame:
        warn_values(frame, requests, list(keys), query_id, summary=left)
        return frame

    return values.map_batches(warns_in_order(undefined), schema=values.collect_schema())


def build_exposure_plan(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    requests: Requests,
    options: EvalOptions,
    target: pl.LazyFrame | None = None,
    *,
    warn: bool = True,
    facts: SharedFacts | None = None,
    ids: SharedIds | None = None,
    clustered: Sequence[str] = (),
    placed: Sequence[str] = (),
    own_checks: bool = False,
    refuse: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None,
) -> pl.LazyFrame:
    """Per-query expected-exposure values (``options.per_query``), keyed by
    ``query_id``, or their means with ``num_q``; lazy, nothing collected.

    ``warn``: whether the plan warns when groups= (or target=) mostly lacks the run's
    documents (the run's groups); ``False`` for a part of a larger run (a bucket, an
    engine's partition), whose whole run is tallied once
    (:func:`~polars_irmetrics.exposure.coverage.groups_tally`). ``facts``: the door's
    counts per ranking of the run where another route of the call checks it too
    (:class:`~polars_irmetrics.ground.facts.SharedFacts`), read where each query holds
    one ranking. ``ids``: the door's distinct ids of the run
    (:class:`~polars_irmetrics.ground.facts.SharedIds`), whose documents the groups=
    tally counts (every route's tally reads the one pass). ``clustered``: the labels
    of Elliot's ``item_mad@k`` asked beside, which read groups= as item clusters: the
    warning names them too, the one warning of the table in the call
    (:func:`~polars_irmetrics.exposure.coverage.warn_on_groups`). ``placed``: the ``by``
    keys the run took from ``queries=``, whose nulls (a query ``queries=`` lacks) the
    door refuses in ``queries=``' words (:func:`refuse_unplaced`), not as the run's.
    ``own_checks``: ``facts`` are this route's alone (no other route of the call checks
    the run or the judgments; the door's judged rows, which its tally of the judged
    documents the run retrieves reads too): the run and the judgments are checked here
    as without them. ``refuse``: the door's refusals of queries the ``by`` keys do not
    place (:func:`refuse_unplaced`), put on the checked values before the plan's
    warnings read them: a refused input warns of nothing.

    Examples
    --------
    One deterministic ranking, rbp with patience 0.5: b (relevant) at position 0, a
    (relevant) at 1, x at 2. The target gives a and b (0.5^0 + 0.5^1) / 2 = 0.75 each;
    the run gives b 1, a 0.5, x 0.25: loss (0.75-1)² + (0.75-0.5)² + 0.25² = 0.1875.

    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["q"] * 3, "doc_id": ["b", "a", "x"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.LazyFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"],
    ...                       "relevance": [1, 1]})
    >>> requests = parse_metric_list(["ee_loss(browsing='rbp')",
    ...                               "ee_disparity(browsing='rbp')"])
    >>> options = EvalOptions(per_query=True)
    >>> build_exposure_plan(run, qrels, None, requests, options).collect().row(0)
    ('q', 0.1875, 1.3125)
    """
    query_id, doc_id = options.query_id, options.doc_id
    keys = list(options.by_keys)
    given = qrels  # the door's table, which its shared judged rows were joined with
    # the run's and the judgments' columns, as the accuracy metrics check them
    run_schema = run.collect_schema()
    require_columns(run_schema, [query_id, doc_id], "run", RUN_COLUMNS_HINT)
    # the judgments' own checks where no other route of the call makes them
    checked_qrels = None if qrels is None or (facts is not None and not own_checks) else qrels
    if qrels is None:  # rnd, rkl, rrd alone read no judgments: an empty table stands in
        qrels = run.select(query_id, doc_id, pl.lit(1.0).alias(options.relevance)).head(0)
    qrels_schema = qrels.collect_schema()
    require_columns(
        qrels_schema, [query_id, doc_id, options.relevance], "judgments", JUDGMENT_COLUMNS_HINT
    )
    use_rank = options.order == "rank" or (options.order == "auto" and options.rank in run_schema)
    order = options.rank if use_rank else options.score
    if options.order == "auto" and order not in run_schema:
        raise neither_order(run_schema, options.rank, options.score, "run")
    require_columns(
        run_schema,
        [order],
        "run",
        f"pass rank=... or score=... to name it, or choose order= (now {options.order!r})",
    )
    check_numeric(run_schema, order, "run", integer=use_rank)
    check_numeric(qrels_schema, options.relevance, "judgments", integer=False)
    # order='auto' reading the ranks beside a score column: the two checked alike
    against = rank_against(run_schema, options.order, options.rank, options.score)
    for column in (query_id, doc_id):
        _same_kind(run_schema, qrels_schema, column, "judgments", "judgments")
    fair = [(label, r) for label, r in requests if r.metric.name in AWRF_MEASURES]
    segregation = [(label, r) for label, r in requests if r.metric.name in _SEGREGATION]
    dimensions: list[str] = ["group"]
    if groups is not None:
        group_schema = groups.collect_schema()
        require_columns(group_schema, [doc_id], "groups", "one row per (document, group)")
        grouped = [label for label, r in requests if r.metric.name not in AWRF_MEASURES]
        dimensions = dimensions_of(group_schema, doc_id, grouped)
        for column in dimensions:
            id_kind(group_schema, column, "groups")
        _same_kind(run_schema, group_schema, doc_id, "groups", "groups=")
        if dimensions == ["group"]:
            # a null group is no group (the document is in none), as a null dimension
            # of intersectional groups leaves the document out: not a group of its own
            # (awrf, the expected exposure) nor rND's minority group
            groups = groups.filter(pl.col("group").is_not_null())
    if (fair or segregation) and groups is None:
        first = (fair or segregation)[0][0]
        raise MetricParameterError(
            f"metric {first!r} reads document groups: pass groups=... (one row per "
            "(document, group)) to irm.evaluate"
        )
    per_query_target = False
    if target is not None:
        target_schema = target.collect_schema()
        per_query_target = query_id in target_schema
        shape = "one row per group" if dimensions == ["group"] else "one row per cell"
        if per_query_target:
            shape = f"{shape} and query ({query_id!r})"
        require_columns(target_schema, [*dimensions, "target"], "target", shape)
        _refuse_unread_target_columns(target_schema, dimensions, query_id)
        for column in dimensions:
            id_kind(target_schema, column, "target")
        check_numeric(target_schema, "target", "target", integer=False)
        if groups is not None:
            group_schema = groups.collect_schema()
            check_id_kinds(group_schema, "groups=", target_schema, "target=", dimensions)
        if per_query_target:
            _same_kind(run_schema, target_schema, query_id, "target", "target=")
            if keys:
                raise InvalidValueError(
                    f"a per-query target (target= with the column {query_id!r}) is not "
                    "available with by= or systems=: give one target for every query (no "
                    f"{query_id!r} column), or evaluate each segment's rows in a call of "
                    "its own"
                )
    run, qrels, groups, target = _same_ids(
        run, qrels, groups, target, query_id, doc_id, dimensions
    )
    # one group-by of groups= per document, read by its check of a (document, group)
    # listed twice and the coverage tally's grouped documents (one pass for both)
    per_doc = None if groups is None or dimensions != ["group"] else _per_document(groups, doc_id)
    # each system's documents, for the warning of a system groups= mostly lacks
    system_rows = run.select(*options.system_keys, doc_id)
    native = pl.col(query_id)
    shown = native.cast(pl.String)
    segments: pl.LazyFrame | None = None
    if keys:  # each (group, query) a query of its own: a struct of the keys
        _check_keys(run_schema, qrels_schema, keys, options, order, requests)
        segments = run.select(keys).unique()
        # a null key the run took from queries= is a query queries= lacks: the door's
        key_flags = run.select(
            pl.when(pl.col(key).is_null().any()).then(pl.lit(key)).alias(f"{_BAD}|null key|{key}")
            for key in keys
            if key not in placed
        )
        run, qrels = _keyed(run, qrels, options, run.collect_schema(), qrels.collect_schema())
        native = pl.col(query_id).struct.field(query_id)
        shown = native.cast(pl.String)
    sampled = options.sample_id in run_schema
    sample = pl.col(options.sample_id) if sampled else pl.lit(0)
    # scores exact (ground.facts.score_order): as Float64, integer scores beyond 2**53
    # tied, and the ranking was the ids' order; ranks (integers, checked) as given, for
    # the same reason
    value = pl.col(order) if use_rank else score_order(order, run_schema[order])
    ranked = run.select(
        pl.col(query_id),
        sample.alias(_S),
        pl.col(doc_id),
        value.alias(order),
        *([] if against is None else [pl.col(against)]),
    )
    relevant = qrels.select(
        query_id, doc_id, pl.col(options.relevance).cast(pl.Float64).alias(_REL)
    ).filter(pl.col(_REL) > 0)
    exposure_requests = [
        (label, r) for label, r in requests if r.metric.name not in AWRF_MEASURES | _SEGREGATION
    ]
    # document-level exposure under the geometric model reads every ranking in order
    in_order = groups is None and any(m == "geometric" for m, _ in _by_model(exposure_requests))
    from_ranks = use_rank and not in_order  # positions from the ranks where they run 1..n
    counted = None
    ties = not options.check_duplicates
    if sampled or keys:  # rankings of (query, sample), or queries keyed by segment
        counted = ranking_facts(
            ranked, [query_id, _S], pl.col(doc_id), order, against=against, ties=ties
        )
    elif facts is not None:  # one ranking per query: the counts other routes read too
        counted = facts.frame([query_id], order, run.collect_schema(), against)
    if counted is None:
        counted = ranking_facts(run, [query_id], pl.col(doc_id), order, against=against, ties=ties)
    per_ranking = _per_ranking(counted, query_id, from_ranks, use_rank)
    checks = _checks(
        per_ranking,
        groups,
        query_id,
        doc_id,
        order,
        sampled,
        longest=bool(fair),
        segregation=[r.metric.name for _, r in segregation],
        query=shown,
        native=native,
        dimensions=dimensions,
        own=facts is None or own_checks,
        order_is_rank=use_rank,
        doubles_checked=options.check_duplicates,
        per_doc=per_doc,
        keyed=bool(keys),
    )
    if checked_qrels is not None:
        # judgments with by= keys (judged per system or segment) are checked per key
        judged_keys = [key for key in keys if key in qrels_schema]
        judged_checks = _judgment_checks(
            checked_qrels, [*judged_keys, query_id], doc_id, options.relevance
        )
        checks = pl.concat([checks, judged_checks], how="horizontal")
    if keys and key_flags.collect_schema():
        checks = pl.concat([checks, key_flags], how="horizontal")
    if target is not None:
        flags = target_flags(target, dimensions, query_id if per_query_target else None)
        checks = pl.concat([checks, flags], how="horizontal")
    if segregation and groups is not None:
        unknown = _unknown_protected(groups, segregation)
        if unknown is not None:
            checks = pl.concat([checks, unknown], how="horizontal")
    values: pl.LazyFrame | None = None
    # rND and awrf read every ranked row with its group: one join of the rows with the
    # groups for both (below)
    shared_groups = bool(fair and segregation and groups is not None and dimensions == ["group"])
    # Grouped, unsampled, with awrf's group rows at hand and one target: each measure
    # below reads only the relevant documents' rows (all of judged queries).
    whole_rows = groups is None or sampled or (fair and (not shared_groups or per_query_target))
    rel_rows = relevant.select(query_id, doc_id, _REL)
    # each ranking's rows with their positions (0-based) over all its documents, and
    # where every row is read, the relevance of their documents (null: not relevant)
    rows = ranked
    if whole_rows:
        rows = ranked.join(rel_rows, on=[query_id, doc_id], how="left", coalesce=True)
    relevant_rows: pl.LazyFrame | None = None  # the relevant rows with their positions
    # where every ranking may be whole: the rows, the run's flag and the sorted rest
    parts: tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame] | None = None
    if from_ranks and not whole_rows:  # the relevant rows apart (below): a few rows
        every = per_ranking.select(pl.col(_WHOLE).all().alias(_EVERY)).cache()
        rows = rows.cache()  # read by the positions and the relevant rows' own join
        fast, rest = _ranked_parts(rows, every, query_id, doc_id, order)
        rest = rest.cache()  # no row where every ranking is whole
        parts = rows, every, rest
        ordered = pl.concat([fast, rest]).cache()
        shared = None
        if facts is not None and not keys and not sampled:
            shared = facts.judged_frame(given, order, run.collect_schema(), doc_id)
        relevant_rows = _relevant_positions(
            rows
            if shared is None
            else shared.select(
                query_id,
                sample.alias(_S),
                doc_id,
                value.alias(order),
                pl.col(options.relevance).cast(pl.Float64).alias(_REL),
            ).filter(pl.col(_REL) > 0),
            None if shared is not None else rel_rows,
            every,
            rest,
            rel_rows,
            query_id,
            doc_id,
            order,
        )
    elif from_ranks:  # the rankings ranked 1..n: positions from the ranks
        ordered = _ranked_positions(rows, per_ranking, query_id, doc_id, order).cache()
    else:  # one sort: each ranking in order
        ordered = _sorted_positions(rows, query_id, doc_id, order, use_rank).cache()
    in_groups: pl.LazyFrame | None = None
    totals: pl.LazyFrame | None = None
    if shared_groups and groups is not None:
        # every ranked row with its group (as groups= holds it: named on the cells), read
        # by rND's counts and awrf's distributions alike: one join of the rows with the
        # groups, and one group-by per (ranking, group) for rND's minority group and
        # awrf's attention
        align = alignments(groups, doc_id, dimensions, named=False)
        if parts is None:
            in_groups = ordered.join(align, on=doc_id)
        else:  # the run's flag put on the few rows of groups=, not on every ranked row
            in_groups = _grouped_positions(*parts, align, query_id, doc_id, order)
        in_groups = in_groups.cache()
        totals = cell_totals(in_groups, query_id, sampled=sampled).cache()
    if segregation and groups is not None:
        sizes = per_ranking.select(query_id, _S, pl.col(_LENGTH).alias("__l"))
        members = counted = None
        if in_groups is not None and totals is not None:
            cell = pl.col(f"{_G}0").alias(_G)
            members = in_groups.select(query_id, _S, doc_id, _POS, cell)
            counted = totals.select(query_id, _S, cell, CELL_COUNT)
        values = segregation_values(
            ordered,
            groups,
            query_id,
            doc_id,
            segregation,
            sizes=sizes,
            members=members,
            totals=counted,
            sampled=sampled,
        )
    # the judged queries' rankings (the positions stay those of the whole ranking: a
    # query is kept or left out whole; in order where the positions came from the sort)
    judged = relevant.select(query_id).unique().cache()  # read by each measure below
    if groups is None:  # the expected exposure alone: every ranked row, its values
        # kept for the judged queries once per query (below), not row by row
        ranked = ordered
    elif whole_rows:
        ranked = ordered.join(judged, on=query_id, how="semi", maintain_order="left").cache()
    elif relevant_rows is not None:  # the relevant rows, positioned apart (above)
        ranked = relevant_rows
    else:  # the relevant rows alone, with their positions in the whole ranking
        ranked = ordered.join(rel_rows, on=[query_id, doc_id], how="inner", coalesce=True)
    if fair and groups is not None:
        fair_values = awrf_values(
            ranked,
            relevant,
            groups,
            target,
            query_id,
            doc_id,
            fair,
            dimensions=dimensions,
            per_query_target=per_query_target,
            rankings=per_ranking.select(query_id, _S).join(judged, on=query_id, how="semi"),
            totals=totals,
        )
        if target is not None and per_query_target:
            checks = pl.concat(
                [checks, _per_query_flags(ranked, groups, target, query_id, dimensions)],
                how="horizontal",
            )
        values = (
            fair_values
            if values is None
            else values.join(fair_values, on=query_id, how="full", coalesce=True)
        )
    for (browsing, patience), labels in _by_model(exposure_requests).items():
        per_query = _model_values(
            ranked, relevant, groups, query_id, doc_id, browsing, patience, sampled=sampled
        ).select(
            query_id,
            *(pl.col(_KINDS[requests_name]).alias(label) for label, requests_name in labels),
        )
        if groups is None:  # the judged queries' values (every query's rows were read)
            per_query = per_query.join(judged, on=query_id, how="semi")
        values = (
            per_query
            if values is None
            else values.join(per_query, on=query_id, how="full", coalesce=True)
        )
    if values is None:  # pragma: no cover - the door routes only requested metrics here
        raise InvalidValueError("no expected-exposure metric requested")
    # the checks' row read whatever rows the values hold: a bad run beside empty
    # judgments (no value computed) is refused all the same, as the ranking metrics' is
    checked = with_tally_and_values(
        values,
        checks,
        lambda flags, _values: _raise_on_bad(
            flags,
            options.sample_id,
            query_id=query_id,
            target_columns=[*([query_id] if per_query_target else []), *dimensions],
            columns={
                "doc_id": doc_id,
                "rank": order,
                "score": order,
                "against": against or order,
                "relevance": options.relevance,
                "query_id": query_id,
            },
            judged_keys=[key for key in keys if key in qrels_schema],
            run_keys=[key for key in keys if key in run_schema],
        ),
    )
    if refuse is not None:  # the door's refusals, before the warnings below
        checked = refuse(checked)
    if keys:  # the struct's fields: the keys, then the query id
        checked = checked.unnest(query_id)
    # sorted by query before the means too: their running sums in one order
    checked = checked.sort([*keys, query_id])
    if groups is not None and warn:  # how the ids of groups= (and target=) line up
        docs = run if ids is None else ids.docs
        counts = groups_tally(
            docs,
            groups,
            target,
            requests,
            options,
            relevant.select(native, doc_id),
            system_rows=system_rows,
            # the run's queries: the door's distinct ones where it holds them (one pass)
            queries=run.select(native) if ids is None or keys else ids.queries,
            grouped_docs=None if per_doc is None else per_doc.select(doc_id),
            distinct=ids is not None,
        )
        checked = with_tally(
            checked, counts, lambda row: warn_on_groups(row, options, clustered, requests)
        )
    if warn:  # rnd, rkl, rrd undefined on a query: said, not silent
        checked = warned_undefined(
            checked, requests, keys, query_id, summary=not options.per_query
        )
    if options.per_query:  # the measures in the order asked (computed grouped by kind)
        return checked.select(*keys, query_id, *(label for label, _ in requests))
    return exposure_means(checked, requests, keys, segments, warn=warn)


def exposure_means(
    per_query: pl.LazyFrame,
    requests: Requests,
    keys: list[str] | None = None,
    segments: pl.LazyFrame | None = None,
    *,
    warn: bool = True,
) -> pl.LazyFrame:
    """``num_q`` and each measure's summary of per-query values sorted by query (a
    running sum in that order: the same bits from one plan or from parts merged); per
    group of the ``by``/``systems`` keys where ``segments`` (every group of the run)
    is given, a group with no scored query having the summary of none (and, where
    ``warn``, named in a warning when some groups are scored)."""
    keys = keys or []
    summaries = [
        pl.len().cast(pl.Int64).alias("num_q"),
        *(request.summarize(label) for label, request in requests),
    ]
    if segments is None:
        return per_query.select(summaries)
    # each group as alone: a group of the run with no judged query it retrieved has
    # the summary of no query (num_q 0)
    # read twice below, computed once (its checks warn once: the buckets' values too)
    found = per_query.group_by(keys, maintain_order=True).agg(summaries).cache()
    empty = segments.join(found.select(keys), on=keys, how="anti", nulls_equal=True).join(
        per_query.head(0).select(summaries), how="cross"
    )
    labels = [label for label, _ in requests]
    said = pl.concat([found, empty]).sort(keys)
    if not warn:
        return said
    return said.map_batches(
        warns_in_order(lambda frame: _warn_unscored_groups(frame, keys, labels)),
        schema=said.collect_schema(),
    )


def _warn_unscored_groups(frame: pl.DataFrame, keys: list[str], labels: list[str]) -> pl.DataFrame:
    """``frame`` (the summaries of each group of the ``by``/``systems`` keys), unchanged,
    with :func:`~polars_irmetrics.exposure.rnd.warn_unscored_groups`'s warning."""
    warn_unscored_groups(frame, keys, labels)
    return frame


def refuse_unplaced(
    plan: pl.LazyFrame,
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    requests: Requests,
    options: EvalOptions,
    *,
    from_queries: Sequence[str] = (),
    drop: bool | None = True,
) -> pl.LazyFrame:
    """``plan`` (the exposure measures' values), refusing when it runs a query the
    ``by`` keys do not place, in the accuracy metrics' words: lazy, read when the plan
    runs. ``run`` and ``qrels``: as the plan reads them (``queries=``' keys joined).

    * ``from_queries``: the ``by`` keys ``queries=`` gives; a query of the run or the
      judgments it has no row for has a null key
      (:func:`~polars_irmetrics.ground.validate.unplaced_query_error`).
    * a ``by`` key in the run alone, and a judged query (one with a relevant document)
      that some group of the run did not retrieve: the judgments do not say which group
      the query belongs to, and an expected-exposure measure scores a judged query a
      group lacks (an empty ranking), so whether it counts there depends on what the
      key means (:func:`~polars_irmetrics.ground.validate.raise_unplaced`; ``drop``:
      whether the message offers ``unretrieved='drop'``, which the exposure measures
      alone do not read; ``None``: not checked, the ranking metrics beside refusing it
      themselves). ``awrf``, ``awrf_ndcg`` and rND's family have no value for a query a
      group did not retrieve, whatever the key means: nothing to refuse.

    >>> import polars as pl
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"],
    ...                     "score": [1.0, 1.0], "day": ["mon", "tue"]})
    >>> qrels = pl.LazyFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"],
    ...                       "relevance": [1, 1]})
    >>> requests = parse_metric_list(["ee_loss"])
    >>> options = EvalOptions.build(by="day")
    >>> plan = build_exposure_plan(run, qrels, None, requests, options)
    >>> refuse_unplaced(plan, run, qrels, requests, options).collect()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.QuerySetError: by key 'day' is in the run but not in the ...
    """
    query_id, keys = options.query_id, list(options.by_keys)
    rows: list[pl.LazyFrame] = []
    if from_queries:  # the queries of the run and the judgments queries= has no row for
        sides = [run] if qrels is None else [run, qrels]
        nulls = [
            side.select(query_id, *from_queries).filter(
                pl.any_horizontal(pl.col(k).is_null() for k in from_queries)
            )
            for side in sides
        ]
        if (
            qrels is not None
            and qrels.collect_schema()[query_id] != run.collect_schema()[query_id]
        ):
            nulls[1] = nulls[1].with_columns(pl.col(query_id).cast(run.collect_schema()[query_id]))
        rows.append(pl.concat(nulls).select(pl.struct(pl.all()).alias(_LACKED), _marked(_LACKED)))
    exposed = any(r.metric.name in _KINDS for _, r in requests)
    if qrels is not None and exposed and drop is not None and options.unretrieved != "drop":
        pairs = _placements(run, qrels, options)
        if pairs is not None:
            rows.append(pairs.select(pl.struct(pl.all()).alias(_PLACEMENT), _marked(_PLACEMENT)))
    if not rows:
        return plan
    unplaced = tuple(
        k for k in options.attribute_keys if qrels is not None and k not in qrels.collect_schema()
    )
    schema = plan.collect_schema()

    def read(frame: pl.DataFrame) -> pl.DataFrame:
        for name in (_LACKED, _PLACEMENT):
            if name not in frame.columns:
                continue
            carried = frame.filter(pl.col(_MARK) == name).get_column(name).struct.unnest()
            if name == _LACKED:
                for key in [k for k in keys if k in from_queries]:
                    queries = carried.filter(pl.col(key).is_null()).get_column(query_id)
                    if queries.len():
                        raise unplaced_query_error(key, queries.sort()[0], queries.n_unique())
            else:
                raise_unplaced(carried, [*keys, query_id], unplaced, query_id, drop=bool(drop))
        return frame.filter(pl.col(_MARK).is_null()).select(schema.names())

    both = pl.concat([plan, *rows], how="diagonal_relaxed")
    return both.map_batches(read, schema=schema)


#: The rows :func:`refuse_unplaced` carries through the plan: each a struct column of
#: its own (no name the values hold), marked by the name of its column.
_LACKED, _PLACEMENT, _MARK = (
    f"{INTERNAL}lacked",
    f"{INTERNAL}placement",
    f"{INTERNAL}placement_row",
)


def _marked(name: str) -> pl.Expr:
    return pl.lit(name).alias(_MARK)


def _placements(
    run: pl.LazyFrame, qrels: pl.LazyFrame, options: EvalOptions
) -> pl.LazyFrame | None:
    """One row per (group of the run, judged query with a relevant document) the group
    could hold, and whether the group's run lists it (``__irm_retrieved``), where a
    ``by`` key is an attribute of the query the judgments lack (``None`` elsewhere)."""
    query_id, keys = options.query_id, list(options.by_keys)
    qrels_schema, run_schema = qrels.collect_schema(), run.collect_schema()
    if not any(k not in qrels_schema for k in options.attribute_keys):
        return None
    judged_keys = [k for k in keys if k in qrels_schema]
    if qrels_schema[query_id] != run_schema[query_id]:  # of one kind: checked by the plan
        qrels = qrels.with_columns(pl.col(query_id).cast(run_schema[query_id]))
    judged = (
        qrels.filter(pl.col(options.relevance).cast(pl.Float64) > 0)
        .select(*judged_keys, query_id)
        .unique()
    )
    groups = run.select(keys).unique()
    if judged_keys:  # a judgment holding a key serves its own group only
        pairs = groups.join(judged, on=judged_keys, how="inner", nulls_equal=True)
    else:
        pairs = groups.join(judged, how="cross")
    retrieved = f"{INTERNAL}retrieved"
    listed = run.select(*keys, query_id).unique().with_columns(pl.lit(True).alias(retrieved))
    return pairs.join(listed, on=[*keys, query_id], how="left", nulls_equal=True).select(
        *keys, query_id, pl.col(retrieved).fill_null(False)
    )


def _check_keys(
    run: pl.Schema,
    qrels: pl.Schema,
    keys: list[str],
    options: EvalOptions,
    order: str,
    requests: Requests,
) -> None:
    """The ``by``/``systems`` keys: columns of the run, none of them a column the
    measures read or a column of the result, of one dtype where the judgments hold them
    too (there, a judgment serves its own group only)."""
    roles = {
        options.query_id: "query_id",
        options.doc_id: "doc_id",
        order: "rank" if order == options.rank else "score",
        options.sample_id: "sample_id",
    }
    taken = [label for label, _ in requests] + ([] if options.per_query else ["num_q"])
    for key in keys:
        given, named = key_keyword(options, key)  # the keyword the key was given by
        if key in roles:
            raise InvalidValueError(
                f"{given}={named!r} names {key!r}, which is the {roles[key]} column; group "
                f"by another column, or pass the {roles[key]} column's name as {roles[key]}="
            )
        if key in taken:  # the first of its keyword's keys the result holds
            refuse_result_keys(given, named, taken, "run", most=0)
    require_columns(
        run, keys, "run", "by= and systems= name columns of the run (or of queries=, by=)"
    )
    for key in keys:
        if key in qrels and run[key] != qrels[key]:
            raise key_dtype_error(key, run[key], "the run", qrels[key], "the judgments")


def _keyed(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    options: EvalOptions,
    run_schema: pl.Schema,
    qrels_schema: pl.Schema,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The run and the judgments with the query column a struct of the keys and the
    query id: each group's rankings apart, as if the run were filtered to the group.

    A judgment holding a key serves its own group only. Otherwise, as
    :func:`~polars_irmetrics.evaluate` places a judged query: each system is scored on
    every judged query (one it did not retrieve is an empty ranking, as it is for the
    system's run alone), and a query attribute (``by``) is the value the run gives the
    query: a judged query some group did not retrieve is refused by the door where an
    expected-exposure measure scores it (:func:`refuse_unplaced`); ``awrf``,
    ``awrf_ndcg`` and rND's family, which score no query a group did not retrieve,
    read the attribute as the run gives it."""
    query_id = options.query_id
    key = pl.struct(*options.by_keys, query_id).alias(query_id)
    if qrels_schema[query_id] != run_schema[query_id]:  # of one kind: checked above
        qrels = qrels.with_columns(pl.col(query_id).cast(run_schema[query_id]))
    attributes = [k for k in options.attribute_keys if k not in qrels_schema]
    if attributes:
        pairs = run.select(*attributes, query_id).unique()
        qrels = qrels.join(pairs, on=query_id, how="inner")
    systems = [k for k in options.system_keys if k not in qrels_schema]
    if systems:
        qrels = qrels.join(run.select(systems).unique(), how="cross")
    return run.with_columns(key), qrels.with_columns(key)


def _per_query_flags(
    ranked: pl.LazyFrame,
    groups: pl.LazyFrame,
    target: pl.LazyFrame,
    query_id: str,
    dimensions: list[str],
) -> pl.LazyFrame:
    """A per-query target's first offenders: a scored query (judged, in the run) with no
    target row, and per group column a target group no document of groups= is in."""
    missing = (
        ranked.select(query_id)
        .unique()
        .join(target.select(query_id).unique(), on=query_id, how="anti")
        .select(pl.col(query_id).cast(pl.String).min().alias(f"{_BAD}|missing target"))
    )
    rows = [missing]
    for column in dimensions:
        name = pl.col(column).cast(pl.String)
        known = groups.select(name).unique()
        rows.append(
            target.select(pl.col(query_id).cast(pl.String), name)
            .join(known, on=column, how="anti", nulls_equal=True)
            .select(
                pl.concat_str([pl.col(query_id), pl.col(column).fill_null("null")], separator=SEP)
                .min()
                .alias(f"{_BAD}|unknown group|{column}")
            )
        )
    return pl.concat(rows, how="horizontal")


def _sorted_positions(
    rows: pl.LazyFrame, query_id: str, doc_id: str, order: str, use_rank: bool
) -> pl.LazyFrame:
    """``rows`` sorted into their rankings' order (by ``order``: rank ascending or score
    descending, ties broken by the document id descending compared as text, as the
    ranking and recommender metrics break them: trec_eval's rule), with each row's
    position (:func:`_positions`)."""
    text = pl.col(doc_id).cast(pl.String)
    return rows.sort(
        [pl.col(query_id), pl.col(_S), pl.col(order), text],
        descending=[False, False, not use_rank, True],
    ).with_columns(_positions(query_id).alias(_POS))


def _ranked_parts(
    rows: pl.LazyFrame, every: pl.LazyFrame, query_id: str, doc_id: str, rank: str
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """:func:`_ranked_positions`' two parts: ``rows`` with the ranks less one where
    every ranking is whole (``every``: one row, ``__every``), and ``rows`` sorted
    (:func:`_sorted_positions`) where not; one of them keeps no row."""
    flagged = rows.join(every, how="cross")
    rest = flagged.filter(~pl.col(_EVERY)).drop(_EVERY)
    return _whole_positions(flagged, rank), _sorted_positions(rest, query_id, doc_id, rank, True)


def _whole_positions(flagged: pl.LazyFrame, rank: str) -> pl.LazyFrame:
    """The rows of ``flagged`` (each with the whole run's ``__every`` flag) where every
    ranking is whole, each with its position: its rank less one (none elsewhere), in
    the ranks' own integer dtype (checked an integer; at least 1 in a whole ranking),
    not through a float (10M rows: 0.04 CPU s against 0.01)."""
    return (
        flagged.filter(pl.col(_EVERY))
        .drop(_EVERY)
        .with_columns((pl.col(rank) - 1).cast(pl.Int64).alias(_POS))
    )


def _grouped_positions(
    rows: pl.LazyFrame,
    every: pl.LazyFrame,
    rest: pl.LazyFrame,
    align: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    rank: str,
) -> pl.LazyFrame:
    """``query_id, __s, doc_id, __pos, __g0, __a``: the ranked rows with their
    positions (:func:`_ranked_parts`' ``rows``, ``every`` and sorted ``rest``) joined
    with their groups (``align``, :func:`~polars_irmetrics.exposure.awrf.alignments`):
    the rows of whole rankings joined with ``align`` crossed with the run's flag (a
    cross join of the few rows of groups=, not of every ranked row), each position its
    rank less one; the sorted rest joined with ``align``."""
    columns = [query_id, _S, doc_id, _POS, f"{_G}0", "__a"]
    align = align.cache()  # read by both parts: one pass of groups=
    flagged = rows.join(align.join(every, how="cross"), on=doc_id)
    whole = _whole_positions(flagged, rank).select(columns)
    return pl.concat([whole, rest.join(align, on=doc_id).select(columns)])


def _relevant_positions(
    rows: pl.LazyFrame,
    relevant: pl.LazyFrame | None,
    every: pl.LazyFrame,
    rest: pl.LazyFrame,
    rel_rows: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    rank: str,
) -> pl.LazyFrame:
    """The ranked rows of relevant documents (``query_id, __s, doc_id, __pos, __rel``)
    with their positions in the whole ranking, as ``rest`` and the rows of whole
    rankings (:func:`_ranked_parts`) joined with ``rel_rows`` give them, without a join
    of every ranked row: where every ranking is whole (``every``), ``rows``' (each a
    row of the run, with ``__rel`` where ``relevant`` is ``None``: the door's join of
    the run with the judgments, which the accuracy metrics read too; else joined with
    ``relevant`` here) with the ranks less one; otherwise ``rest`` (the sorted rows)
    joined with ``rel_rows``."""
    if relevant is not None:
        rows = rows.join(relevant, on=[query_id, doc_id], how="inner", coalesce=True)
    columns = [query_id, _S, doc_id, _POS, _REL]
    fast = _whole_positions(rows.join(every, how="cross"), rank).select(columns)
    slow = rest.join(rel_rows, on=[query_id, doc_id], how="inner", coalesce=True).select(columns)
    return pl.concat([fast, slow])


def _ranked_positions(
    rows: pl.LazyFrame, per_ranking: pl.LazyFrame, query_id: str, doc_id: str, rank: str
) -> pl.LazyFrame:
    """``rows`` with each row's position, ordered by ``rank``: where every ranking's
    ranks are 1 to its length, each once (as a log of recommendations usually is; told
    by :func:`_per_ranking`), the positions are the ranks less one, the rows unsorted
    (in any order); otherwise every ranking is sorted (:func:`_sorted_positions`, which
    gives a whole ranking the same positions). One flag for the whole run, not one per
    ranking: a join of every row with its ranking's flag cost more than the sort saves
    where a few rankings are not whole (a sort of 10M rows is a second)."""
    rows = rows.cache()  # read by both branches; one of them keeps no row
    every = per_ranking.select(pl.col(_WHOLE).all().alias(_EVERY))
    return pl.concat(_ranked_parts(rows, every, query_id, doc_id, rank))


def _positions(query_id: str) -> pl.Expr:
    """Each row's 0-based position in its ranking, on rows sorted by ranking: the row
    number less that of the ranking's first row (no window: a ranking starts where the
    query or the sample changes)."""
    row = pl.int_range(pl.len())
    first = (
        (row == 0)
        | pl.col(query_id).ne_missing(pl.col(query_id).shift(1))
        | pl.col(_S).ne_missing(pl.col(_S).shift(1))
    )
    return row - pl.when(first).then(row).otherwise(None).forward_fill()


def _same_ids(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    groups: pl.LazyFrame | None,
    target: pl.LazyFrame | None,
    query_id: str,
    doc_id: str,
    dimensions: list[str],
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame | None, pl.LazyFrame | None]:
    """The tables with each id column of one dtype everywhere (:func:`with_common_ids`):
    the query and document ids, and each group column (``dimensions``) of groups= and
    target=; the kinds are checked before."""
    columns = {query_id: ["run", "qrels", "target"], doc_id: ["run", "qrels", "groups"]}
    columns.update({column: ["groups", "target"] for column in dimensions})
    tables = {"run": run, "qrels": qrels, "groups": groups, "target": target}
    cast = with_common_ids({k: t for k, t in tables.items() if t is not None}, columns)
    return cast["run"], cast["qrels"], cast.get("groups"), cast.get("target")


def _refuse_unread_target_columns(
    schema: pl.Schema, dimensions: Sequence[str], query_id: str
) -> None:
    """Refuse a column of target= that no measure reads (a weight, a label, a query
    column named otherwise than the run's): the target is read from its groups'
    columns (``dimensions``), ``target`` and, for a per-query target, the query id;
    another column would be dropped without a word.

    >>> _refuse_unread_target_columns(pl.Schema({"group": pl.String, "target": pl.Float64,
    ...     "qid": pl.String}), ["group"], "query_id")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'qid' of the target (target=) is ...
    """
    read = {*dimensions, "target", query_id}
    unread = [name for name in schema.names() if name not in read]
    if unread:
        cells = ", ".join(repr(c) for c in (*dimensions, "target"))
        raise InvalidValueError(
            f"column {unread[0]!r} of the target (target=) is not read: a target holds "
            f"{cells} (and {query_id!r}, the run's query column, for a target per query); "
            "drop the column, or name a query column as the run names it"
        )


def _same_kind(left: pl.Schema, right: pl.Schema, column: str, what: str, named: str) -> None:
    """Refuse ids of two kinds in the run and the table ``what`` (named ``named`` in the
    refusal, as every route names it: :func:`id_kinds_error`)."""
    kinds = id_kind(left, column, "run"), id_kind(right, column, what)
    if kinds[0] != kinds[1]:
        raise id_kinds_error(column, left, "run", right, named)


def _by_model(requests: Requests) -> dict[tuple[str, float], list[tuple[str, str]]]:
    models: dict[tuple[str, float], list[tuple[str, str]]] = {}
    for label, request in requests:
        options = dict(request.options)
        browsing, patience = str(options["browsing"]), options["patience"]
        if not isinstance(patience, int | float):  # pragma: no cover - checked by the parser
            raise InvalidValueError(f"patience must be a number, got {patience!r}")
        models.setdefault((browsing, float(patience)), []).append((label, request.metric.name))
    return models


def _model_values(
    ranked: pl.LazyFrame,
    relevant: pl.LazyFrame,
    groups: pl.LazyFrame | None,
    query_id: str,
    doc_id: str,
    browsing: str,
    patience: float,
    *,
    sampled: bool = True,
) -> pl.LazyFrame:
    """One row per query: ``disparity``, ``relevance`` and ``loss`` for one user model
    (``sampled``: whether a query may hold several rankings)."""
    decay = patience if browsing == "rbp" else patience * (1.0 - UTILITY)
    # the target: each grade's documents share the positions after the higher grades'
    levels = (
        relevant.group_by(query_id, _REL)
        .agg(pl.len().cast(pl.Float64).alias("m"))
        .sort([query_id, _REL], descending=[False, True])
        .with_columns((pl.col("m").cum_sum().over(query_id) - pl.col("m")).alias("b"))
        .with_columns(
            (
                (_power(decay, pl.col("b")) - _power(decay, pl.col("b") + pl.col("m")))
                / (pl.col("m") * (1.0 - decay))
            ).alias(_T)
        )
    )
    target = relevant.join(levels.select(query_id, _REL, _T), on=[query_id, _REL]).select(
        query_id, doc_id, _T
    )
    # the run: exposure per position, averaged over the query's samples
    exposure = _power(patience, pl.col(_POS))
    scored = ranked
    geometric = browsing == "geometric"
    if geometric and groups is None:  # the relevant documents above each row, a
        # column of its own (inside _power's expression polars computed it once per
        # bit): the running count of the rows before it less that before its ranking's
        # first row (position 0; here the rankings are whole and in order)
        relevant_flag = pl.col(_REL).is_not_null().cast(pl.Int64)
        before = relevant_flag.cum_sum() - relevant_flag
        above = before - pl.when(pl.col(_POS) == 0).then(before).forward_fill()
        scored = scored.with_columns(above.alias("__above"))
    if sampled:  # the query's samples, counted before any row is left out
        scored = scored.with_columns(pl.col(_S).n_unique().over(query_id).alias("n"))
    if groups is not None:  # only the relevant documents' exposure counts
        scored = scored.filter(pl.col(_REL).is_not_null())
        if geometric:  # the relevant documents above one: the relevant rows before
            # it in its ranking, once those few rows are in order (in any order before)
            scored = scored.sort([query_id, _S, _POS]).with_columns(
                _positions(query_id).alias("__above")
            )
    if geometric:
        exposure = exposure * _power(1.0 - UTILITY, pl.col("__above"))
    scored = scored.with_columns(exposure.alias(_E))
    if sampled:
        expected = scored.group_by(query_id, doc_id).agg(
            (exact_sum(pl.col(_E)) / pl.col("n").first()).alias(_E)
        )
    else:  # one ranking per query, a document once in it: its exposure as it is
        expected = scored.select(query_id, doc_id, _E)
    if groups is None and not sampled:
        # each ranked document once: the relevant ones beside their targets (a target
        # not ranked has exposure 0), the others with target 0, the rows a full join of
        # the targets with every ranked row would give, without that join
        exposed = scored.select(query_id, doc_id, _REL, _E).cache()
        judged_docs = exposed.filter(pl.col(_REL).is_not_null()).select(query_id, doc_id, _E)
        others = exposed.filter(pl.col(_REL).is_null()).select(query_id, pl.lit(0.0).alias(_T), _E)
        matched = (
            target.join(judged_docs, on=[query_id, doc_id], how="full", coalesce=True)
            .with_columns(pl.col(_T).fill_null(0.0), pl.col(_E).fill_null(0.0))
            .select(query_id, _T, _E)
        )
        docs = pl.concat([matched, others])
    elif groups is None:
        docs = target.join(
            expected, on=[query_id, doc_id], how="full", coalesce=True
        ).with_columns(pl.col(_T).fill_null(0.0), pl.col(_E).fill_null(0.0))
    else:
        docs = (
            target.filter(pl.col(_T) > 0)
            .join(expected, on=[query_id, doc_id], how="left")
            .with_columns(pl.col(_E).fill_null(0.0))
            .join(groups.select(doc_id, pl.col("group").alias(_G)), on=doc_id)
            .group_by(query_id, _G)
            .agg(exact_sum(pl.col(_T)).alias(_T), exact_sum(pl.col(_E)).alias(_E))
        )
    # every sum exact: the same value to the last bit whatever order a join leaves
    return docs.group_by(query_id).agg(
        exact_sum(pl.col(_E) * pl.col(_E)).alias("disparity"),
        exact_sum(pl.col(_T) * pl.col(_E)).alias("relevance"),
        exact_sum((pl.col(_T) - pl.col(_E)) ** 2).alias("loss"),
    )


#: The bits of a whole exponent :func:`_power` reads (positions below 2**48).
_POWER_BITS = 48


def _power(base: float, exponent: pl.Expr) -> pl.Expr:
    """``base ** exponent`` for a whole ``exponent >= 0``, the same bits in every engine.

    polars' ``pow`` of a column gives a one-row batch (the streaming engine's) the
    product of repeated squares and a longer one the C library's ``pow``, which can
    differ in the last bit; here always the product of the squares ``base**(2**b)``
    of the exponent's set bits, in increasing order (as ``powi`` multiplies them).

    >>> import polars as pl
    >>> frame = pl.DataFrame({"i": [4]})
    >>> frame.select(_power(0.8, pl.col("i"))).item() == 0.8 * 0.8 * (0.8 * 0.8)
    True
    """
    whole = exponent.cast(pl.Int64)
    result = pl.lit(1.0)
    square = float(base)
    for bit in range(_POWER_BITS):
        if square == 0.0:  # every higher set bit multiplies by 0
            return pl.when(whole >= 2**bit).then(0.0).otherwise(result)
        if square == 1.0:  # every higher factor is 1
            return result
        result = result * pl.when((whole // 2**bit) % 2 == 1).then(square).otherwise(1.0)
        square *= square
    return result


def _per_ranking(
    facts: pl.LazyFrame, query_id: str, from_ranks: bool, use_rank: bool = False
) -> pl.LazyFrame:
    """One row per ranking (``query_id, __s``) from
    :func:`~polars_irmetrics.ground.facts.ranking_facts` of the rankings (by query and
    sample, or by query alone where each holds one: the door's, where the accuracy
    metrics' checks read them in the same call): its length, whether it lists a
    document twice or has a null or NaN order value, and (``from_ranks``: where the
    positions may come from the ranks) whether its ranks are 1 to its length, each once
    (:func:`_ranked_positions`); read by the checks, the positions and rND's blocks.
    Also its null documents, and (``use_rank``: ordered by rank) its ranks below 1, of
    2**63 or more and held twice: the counts the accuracy metrics' checks report."""
    schema = facts.collect_schema()
    sample = _S if _S in schema else pl.lit(0).alias(_S)
    no = pl.lit(0, pl.UInt32)
    return facts.select(
        query_id,
        sample,
        pl.col(LENGTH).alias(_LENGTH),
        (pl.col(DOCS) < pl.col(LENGTH)).alias("dup"),
        ((pl.col(ORDERED) < pl.col(LENGTH)) | pl.col(NAN)).alias("bad"),
        (whole_ranks() if from_ranks else pl.lit(False)).alias(_WHOLE),
        pl.col(NULL_DOCS).cast(pl.UInt32).alias("null_doc"),
        (pl.col(LENGTH) - pl.col(DOCS)).cast(pl.UInt32).alias("dup_doc"),
        (pl.col(LENGTH) - pl.col(ORDERED)).cast(pl.UInt32).alias("null_order"),
        (pl.col(BELOW).cast(pl.UInt32) if use_rank else no).alias("bad_rank"),
        (pl.col(ABOVE).cast(pl.UInt32) if use_rank else no).alias("big_rank"),
        ((pl.col(ORDERED) - pl.col(RANKS)).cast(pl.UInt32) if use_rank else no).alias("dup_rank"),
        pl.col(NANS).cast(pl.UInt32).alias("nan_order"),
        # ranks that order the ranking otherwise than the scores (order='auto' with both)
        (pl.col(AGAINST).cast(pl.UInt32) if AGAINST in schema else no).alias("two_orders"),
    )


def _checks(
    per_ranking: pl.LazyFrame,
    groups: pl.LazyFrame | None,
    query_id: str,
    doc_id: str,
    order: str,
    sampled: bool,
    *,
    longest: bool = False,
    segregation: Sequence[str] = (),
    query: pl.Expr | None = None,
    native: pl.Expr | None = None,
    dimensions: list[str] | None = None,
    own: bool = True,
    order_is_rank: bool = False,
    doubles_checked: bool = True,
    per_doc: pl.LazyFrame | None = None,
    keyed: bool = False,
) -> pl.LazyFrame:
    """One row of first offenders (null when none), raised by :func:`_raise_on_bad`
    (``per_ranking``: :func:`_per_ranking`'s; ``query``: the query id as text, and
    ``native`` as the run holds it, where the query column is a struct of keys;
    ``keyed``: it is, and the accuracy metrics' checks name the first offender with its
    keys, ``'q1' (system='B')``, as theirs do).
    ``own``: whether the run's null queries and documents and its ranks are checked
    here as the accuracy metrics check them (no other route of the call checks the run),
    a run of one ranking per query in their words (``order_is_rank``: ordered by
    rank; ``doubles_checked``: whether the accuracy metrics beside check its duplicate
    documents; ``per_doc``: :func:`_per_document` of the groups, where the caller has
    it). ``segregation``: the rND measures asked (``rnd``, ``rkl``, ``rrd``), a ranking
    longer than one scores exactly (:data:`SEGREGATION_LENGTH`) refused."""
    if query is None:
        query = pl.col(query_id).cast(pl.String)
    if native is None:
        native = pl.col(query_id)
    per_ranking = per_ranking.with_columns((pl.col(_LENGTH) > AWRF_LENGTH).alias("long"))
    flags = []
    if own:  # as the accuracy metrics' checks: a null query, then the counts per query
        flags.append(
            pl.when(native.is_null().any()).then(pl.lit(query_id)).alias(f"{_BAD}|null key")
        )
    if sampled:  # before the rankings' own checks: a null (or NaN) sample is no ranking
        unknown = pl.col(_S).is_null()
        if per_ranking.collect_schema()[_S].is_float():
            unknown = unknown | pl.col(_S).is_nan()
        flags.append(query.filter(unknown).min().alias(f"{_BAD}|null sample"))
    if own:
        counts = [("null_doc", "null_doc")]
        if not sampled:  # one ranking per query: its duplicates and nulls as theirs
            counts.append(("dup_doc", "dup_doc"))
            counts.append(("null_rank" if order_is_rank else "null_score", "null_order"))
        if order_is_rank:
            counts += [
                ("bad_rank", "bad_rank"),
                ("big_rank", "big_rank"),
                ("dup_rank", "dup_rank"),
            ]
            counts.append(("two_orders", "two_orders"))  # 0 unless checked against scores
        elif not sampled:
            counts.append(("nan_score", "nan_order"))
        first_of = pl.col(query_id) if keyed else native  # the struct: its keys too
        fields = per_ranking.collect_schema()[query_id] if keyed else None
        flags += _first_counts(
            first_of,
            [(name, pl.col(column)) for name, column in counts],
            fields=[f.name for f in fields.fields] if isinstance(fields, pl.Struct) else None,
        )
    # a sampled run's rankings in their own words; one ranking per query is checked
    # above, or by the accuracy metrics beside (its duplicates here where they skip
    # them: check_duplicates=False)
    if sampled or (not own and not doubles_checked):
        flags.append(query.filter(pl.col("dup")).min().alias(f"{_BAD}|duplicate doc"))
    if sampled:
        flags.append(query.filter(pl.col("bad")).min().alias(f"{_BAD}|bad value|{order}"))
    if longest:
        flags.append(query.filter(pl.col("long")).min().alias(f"{_BAD}|long ranking"))
    # the shortest limit first: the measure a ranking exceeds first is named
    for name, limit in sorted(SEGREGATION_LENGTH.items(), key=lambda item: item[1]):
        if name in segregation:
            where = pl.concat_str(query, pl.lit(SEP), pl.col(_LENGTH).cast(pl.String))
            over = pl.col(_LENGTH) > limit
            flags.append(where.filter(over).min().alias(f"{_BAD}|too long|{name}"))
    if not flags:  # every check made by the routes beside: still one row, of no offender
        # (a frame of no column has no row, and the values' cross join with it none)
        flags.append(pl.lit(None, pl.String).alias(f"{_BAD}|none"))
    rows = [per_ranking.select(flags)]
    if groups is not None:  # a row of no document: refused, as every table's null id
        rows.append(groups.select(null_ids_count([doc_id]).alias(f"{_BAD}|null group doc")))
    if groups is not None and dimensions in (None, ["group"]):
        if per_doc is None:
            per_doc = _per_document(groups, doc_id)
        doubled = per_doc.filter(pl.col(_ROWS) > pl.col(_DISTINCT))
        rows.append(
            doubled.select(pl.col(doc_id).cast(pl.String).min().alias(f"{_BAD}|duplicate group"))
        )
    return pl.concat(rows, how="horizontal")


_COUNT = "__badn"
_ROWS, _DISTINCT = "__rows", "__distinct"


def _per_document(groups: pl.LazyFrame, doc_id: str) -> pl.LazyFrame:
    """One row per document of groups= (one group column, ``group``, no null in it):
    its rows and its distinct groups (more rows than groups: a (document, group) pair
    listed twice), cached."""
    return (
        groups.group_by(doc_id)
        .agg(pl.len().alias(_ROWS), pl.col("group").n_unique().alias(_DISTINCT))
        .cache()
    )


def _first_counts(
    query: pl.Expr, counts: list[tuple[str, pl.Expr]], *, fields: list[str] | None = None
) -> list[pl.Expr]:
    """For each ``(name, count)`` (a count per row of one query): the first query (in
    order) with a count above 0 (``__bad|flag|name``) and its count summed over the
    query's rows (``__badn|name``), as :data:`RUN_FLAGS`' templates report them.
    ``fields``: ``query`` is a struct of these (the ``by`` keys and the query id), the
    first in their order (a struct has no ``min``), compared field by field."""
    out = []
    for name, count in counts:
        found = query.filter(count > 0)
        first = found.sort().first() if fields else found.min()
        same = (
            pl.all_horizontal(
                query.struct.field(f).eq_missing(first.struct.field(f)) for f in fields
            )
            if fields
            else query == first
        )
        out.append(first.alias(f"{_BAD}|flag|{name}"))
        out.append(count.filter(same).sum().alias(f"{_COUNT}|{name}"))
    return out


def _judgment_checks(
    qrels: pl.LazyFrame, judged: list[str], doc_id: str, relevance: str
) -> pl.LazyFrame:
    """One row of the judgments' first offenders, as the accuracy metrics' checks find
    them (:data:`RUN_FLAGS`): a null query, then per query a null document, a null
    label, a label that is NaN, infinite or of magnitude 2**32 or more, a document
    judged twice (:func:`judgment_flags`, counted per query). ``judged``: the keys of
    one query's judgments, the query id last (before it, the ``by`` keys the judgments
    carry: a system's own judgments, a segment's)."""
    query_id = judged[-1]
    query = pl.col(query_id)
    counts = judgment_flags(pl.col(doc_id), pl.col(relevance))
    per_query = qrels.group_by(judged).agg(
        count.alias(f"{_COUNT}|{name}") for name, count in counts.items()
    )
    # with keys, the first offender is named with them, as the ranking metrics name it
    first_of, fields = (pl.struct(judged), judged) if len(judged) > 1 else (query, None)
    flags = [
        pl.when(query.is_null().any()).then(pl.lit(query_id)).alias(f"{_BAD}|null judged key"),
        *_first_counts(
            first_of, [(name, pl.col(f"{_COUNT}|{name}")) for name in counts], fields=fields
        ),
    ]
    return per_query.select(flags)


def _unknown_protected(groups: pl.LazyFrame, segregation: Requests) -> pl.LazyFrame | None:
    """One row: the first ``protected=`` name of rND's family that no row of groups=
    holds, with the groups it holds (up to five, as text), ``SEP`` between (null: every
    name is there); ``None`` where no request names one."""
    given = (dict(r.options).get("protected") for _, r in segregation)
    names = sorted({str(value) for value in given if value is not None})
    if not names:
        return None
    group = pl.col("group").cast(pl.String)
    held = group.drop_nulls().unique().sort()
    shown = pl.concat_str(pl.lit("'"), held.head(5), pl.lit("'")).str.join(", ")
    shown = pl.when(held.len() > 5).then(pl.concat_str(shown, pl.lit(", ..."))).otherwise(shown)
    missing = [pl.when(~(group == name).any()).then(pl.lit(name)) for name in names]
    first = pl.coalesce(missing)
    return groups.select(
        pl.when(first.is_not_null())
        .then(pl.concat_str(first, pl.lit(SEP), shown))
        .alias(f"{_BAD}|unknown protected")
    )


def _split_query(value: object) -> tuple[str, object]:
    """A per-query target's flag ``query SEP group`` as (`` for query 'q'``, group)."""
    if isinstance(value, str) and SEP in value:
        query, rest = value.split(SEP, 1)
        return f" for query {query!r}", rest
    return "", value


#: Why each measure of :data:`SEGREGATION_LENGTH` scores no longer ranking exactly.
_TOO_LONG = {
    "rnd": "its terms |k N - P i| / (i N) hold whole numbers up to N**2, exact in Float64 "
    "only up to 2**53",
    "rrd": "its normaliser's dynamic programme adds its sums in 64-bit parts, which a "
    "longer ranking could overflow",
}


def too_long_error(name: str, query: str, length: str) -> InvalidValueError:
    """The refusal of a ranking (of query ``query``, ``length`` documents) longer than
    the measure ``name`` scores exactly (:data:`SEGREGATION_LENGTH`).

    >>> print(str(too_long_error("rrd", "q1", "500001"))[:72])
    a ranking of query 'q1' holds 500,001 documents, more than the 500,000 r
    """
    limit = SEGREGATION_LENGTH[name]
    return InvalidValueError(
        f"a ranking of query {query!r} holds {int(length):,} documents, more than the "
        f"{limit:,} {name} scores exactly ({_TOO_LONG[name]}): cut the run, e.g. keep the "
        f"top {limit:,} of each query (a cutoff), or leave {name} out"
    )


def _raise_on_bad(
    row: Mapping[str, Any],
    sample: str,
    *,
    query_id: str = "query_id",
    target_columns: list[str] | None = None,
    columns: dict[str, str] | None = None,
    judged_keys: list[str] | None = None,
    run_keys: list[str] | None = None,
) -> None:
    target_columns = target_columns or ["group"]
    for name, value in row.items():
        if value is None or not name.startswith(f"{_BAD}|"):
            continue
        _, kind, *column = name.split("|")
        if kind == "flag":  # the accuracy metrics' check, in their words
            count = row[f"{_COUNT}|{column[0]}"]
            judged = column[0] in JUDGMENT_FLAGS
            keys = (judged_keys if judged else run_keys) or ()
            shown = None
            if isinstance(value, dict):  # the run's keyed query: with its keys
                parts = ", ".join(f"{k}={v!r}" for k, v in value.items() if k != query_id)
                value, shown = value[query_id], f"{value[query_id]!r} ({parts})"
            raise flag_error(column[0], columns or {}, value, count, shown=shown, keys=keys)
        if kind in ("null key", "null judged key") and not column:
            side = "run" if kind == "null key" else "judgments"
            raise null_key_error(value, side)
        if kind == "duplicate doc":
            raise DuplicateError(
                f"the run lists a document twice in one ranking of query {value!r}; a "
                f"ranking (one query and {sample!r}) holds each document once: drop the "
                "duplicates"
            )
        if kind == "null sample":
            raise InvalidValueError(
                f"column {sample!r} of the run has null (or NaN) values in query {value!r}; "
                "each row belongs to one sampled ranking: fill or drop those rows"
            )
        if kind == "long ranking":
            raise InvalidValueError(
                f"a ranking of query {value!r} holds more than {AWRF_LENGTH} documents; "
                f"awrf and awrf_ndcg score rankings of at most {AWRF_LENGTH} (wptrec's "
                "target_len): cut the run, e.g. keep the top 500 of each query"
            )
        if kind == "null key":
            raise null_key_error(column[0])
        if kind == "too long":
            raise too_long_error(column[0], *str(value).split(SEP, 1))
        if kind == "unknown protected":
            name, held = str(value).split(SEP, 1)
            raise InvalidValueError(
                f"protected={name!r} names no group of groups= (column 'group' holds "
                f"{held}): rnd, rkl and rrd would find no protected document in any "
                "ranking (every value NaN); name one of its groups, or drop protected= "
                "to take each ranking's minority group"
            )
        if kind == "null target":
            named = [repr(c) for c in column]
            raise InvalidValueError(
                f"the target (target=) has {value} row(s) with a null {' or '.join(named)}: "
                "each row is one group's share of a target distribution, and a null names "
                f"none; fill or drop them, e.g. target.drop_nulls([{', '.join(named)}])"
            )
        query, value = _split_query(value)
        if kind == "bad target":
            raise InvalidValueError(
                f"the target (target=) gives group {value!r}{query} a negative, null or NaN "
                "value in column 'target'; a target is a distribution over groups: give "
                "every group a value >= 0"
            )
        if kind == "target sum":
            per = " per query" if query else ""
            raise InvalidValueError(
                f"the target (target=) sums to {value}{query} in column 'target'; a target "
                f"is a distribution over groups{per}: divide each value by the sum so they "
                "sum to 1"
            )
        if kind == "duplicate target":
            where = ", ".join(repr(c) for c in target_columns)
            shape = "(query, group)" if query else "group"
            raise DuplicateError(
                f"the target (target=) lists group {value!r}{query} twice in "
                f"column{'s' if len(target_columns) > 1 else ''} {where}; one row per "
                f"{shape}: drop or add up the duplicates"
            )
        if kind == "missing target":
            raise InvalidValueError(
                f"the target (target=) has no row for query {value!r} of the run (column "
                f"{query_id!r}); a per-query target gives each judged query of the run its "
                "distribution over groups: add its rows, or filter the run to the queries "
                "the target covers"
            )
        if kind == "unknown group":
            raise InvalidValueError(
                f"the target (target=) names group {value!r}{query} in column "
                f"{column[0]!r}, and no document of the groups table (groups=) is in it; a "
                "per-query target is over the groups of groups=: correct the name (and its "
                "type), or drop the row"
            )
        if kind == "null group doc":
            doc = (columns or {}).get("doc_id", "doc_id")
            raise null_ids_error(
                "groups", int(str(value)), [doc], "each row puts one document in a group"
            )
        if kind == "duplicate group":
            raise doubled_group_error(value)
        raise InvalidValueError(
            f"column {column[0]!r} of the run has null or NaN values in query {value!r}; "
            "rankings are read from it: fill or drop those rows"
        )
