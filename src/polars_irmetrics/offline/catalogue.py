"""The plan of the door's ``offline`` route: the one plan of a run and judgments
(:func:`~polars_irmetrics.offline.plan.build_plan`), and beside it RecTools' metrics
that read more than a query's judged rows: the catalogue classification metrics
(``reco_accuracy@k``, ``mcc@k``: the catalogue's size from the interactions) and
``covered_users@k`` (whether the run ranks any document of the query within ``k``,
unjudged ones too).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.ground.debias import Debias, debiased
from polars_irmetrics.ground.facts import (
    HIGH,
    ID_ROWS,
    LOW,
    ORDERED,
    SharedFacts,
    SharedIds,
    id_rows,
    ranking_facts,
    score_order,
)
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    check_id_kinds,
    interactions_by_keys,
    require_columns,
    side_ids_hint,
    with_history_check,
    with_interactions_tally,
    with_null_id_check,
    with_tally,
)
from polars_irmetrics.metrics._common import exact_level
from polars_irmetrics.metrics.elliot import ELLIOT
from polars_irmetrics.metrics.mad import MAD
from polars_irmetrics.metrics.rectools import (
    CATALOGUE_FORMULAS,
    COVERED_USERS,
    SERENDIPITY,
    kotkov_gain,
)
from polars_irmetrics.metrics.registry import MetricRequest, get_metric, means
from polars_irmetrics.metrics.scope import exact_sum
from polars_irmetrics.offline.coverage import CoverageSink
from polars_irmetrics.offline.elliot import TOP_REL, build_elliot_plan, judged_top
from polars_irmetrics.offline.mad import build_mad_plan
from polars_irmetrics.offline.plan import build_plan

__all__ = ["build_offline_plan", "reads_run_facts"]

Requests = list[tuple[str, MetricRequest]]
#: A refusal put on a plan's values before its warnings (:func:`build_offline_plan`).
Gate = Callable[[pl.LazyFrame], pl.LazyFrame]

_CATALOGUE = f"{INTERNAL}catalogue"
_AT = f"{INTERNAL}catalogue_at"
_LISTED = f"{INTERNAL}listed"
_LEAST_TN = f"{INTERNAL}least_tn"
_MAX_RANK = f"{INTERNAL}max_rank"
#: RecTools' pAUC and pAp: with insufficient_handling='exclude', computed beside the plan.
_AUC = ("partial_auc", "pap")
_POSITION, _RELEVANT, _POPULAR = (f"{INTERNAL}{n}" for n in ("position", "relevant", "popular"))
_POS = f"{INTERNAL}elliot_pos"  # the position column of judged_top's rows
_NUM_REL_RET, _NUM_REL = get_metric("num_rel_ret"), get_metric("num_rel")


def build_offline_plan(
    table: pl.LazyFrame,
    requests: Requests,
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    queries: pl.LazyFrame | None,
    interactions: pl.LazyFrame | None,
    *,
    warn: bool | CoverageSink = True,
    groups: pl.LazyFrame | None = None,
    user_groups: pl.LazyFrame | None = None,
    facts: SharedFacts | None = None,
    ids: SharedIds | None = None,
    tally: bool = True,
    counted: frozenset[str] = frozenset(),
) -> pl.LazyFrame:
    """:func:`_offline_plan`; with interactions, their ids checked against the run's
    (one kind, strings or integers) and a warning when they hold few of the run's items
    or users (:func:`~polars_irmetrics.ground.validate.warn_on_interactions`), whatever
    metric reads them; not for a part of a larger evaluation (``warn`` not ``True``: an
    engine's part holds some of the users, and the engine warns once). ``ids``: the
    door's distinct ids of the run (:class:`~polars_irmetrics.ground.facts.SharedIds`),
    which the tallies count and Elliot's metrics read as the users. ``tally``: whether
    this plan counts the interactions (and warns) where a metric of ``requests`` reads
    them; ``False`` where the beyond-accuracy metrics beside read the same table and
    count it, once for the call. ``counted``: the side tables whose coverage of the run
    another route of the call warns of (Elliot's item_mad does not warn of groups=
    again)."""
    if (
        options.debias is not None
        and qrels is None
        and options.relevance in table.collect_schema()  # else: refused as no judgments
    ):
        raise InvalidValueError(
            f"debias={options.debias!r} down-samples the judgments of qrels=, and without "
            "qrels= the table is a judged table, whose rows are the ranking and the "
            "judgments at once: a row drawn out would leave the ranking too, so it is not "
            "read. Pass the judgments as qrels= (e.g. the table's rows with a relevance) "
            "and the ranking as the table, or drop debias="
        )
    if interactions is None:
        return _offline_plan(
            table,
            requests,
            qrels,
            options,
            queries,
            None,
            warn,
            groups,
            user_groups,
            facts,
            ids,
            counted=counted,
        )
    query_id, doc_id = options.query_id, options.doc_id
    run_schema = table.collect_schema()
    if query_id in run_schema and doc_id in run_schema:  # else refused by the run's check
        # the items (the catalogue); the users where a metric reads their histories
        users = any(r.metric.name in (SERENDIPITY, *ELLIOT) for _, r in requests)
        needed = [query_id, doc_id] if users else [doc_id]
        require_columns(
            interactions.collect_schema(), needed, "interactions", side_ids_hint("run", needed)
        )
    # the run first, as every route words ids of two kinds (the recommendations' metrics)
    check_id_kinds(
        run_schema, "run", interactions.collect_schema(), "interactions", [query_id, doc_id]
    )
    gate = None
    if warn is True:  # the history's null ids refused before the judgments' warnings
        held = interactions.collect_schema()
        named = [c for c in (query_id, doc_id) if c in held]
        gate = functools.partial(
            with_null_id_check, interactions=interactions, columns=named, shared=ids
        )
    plan = _offline_plan(
        table,
        requests,
        qrels,
        options,
        queries,
        interactions,
        warn,
        groups,
        user_groups,
        facts,
        ids,
        counted=counted,
        gate=gate,
    )
    reads = any("interactions" in r.reads for _, r in requests)
    # refused by name; a part's plan (an engine tallies the whole table, once); no
    # metric here reads the table, or the beyond-accuracy metrics beside count it
    if doc_id not in run_schema or warn is not True or not (tally and reads):
        return plan
    return with_interactions_tally(
        plan,
        table if ids is None else ids.docs,
        interactions,
        user=query_id,
        item=doc_id,
        name="run",
        users=None if ids is None else ids.queries,
        catalogue=[label for label, r in requests if r.metric.name in CATALOGUE_FORMULAS],
        shared=ids,
        systems=options.system_keys,
        system_rows=table,
        readers=[label for label, r in requests if "interactions" in r.reads],
        history_readers=[label for label, r in requests if r.reads_histories],
    )


def _debiased(qrels: pl.LazyFrame, debias: Debias, options: EvalOptions) -> pl.LazyFrame:
    """The judgments down-sampled as RecTools' ``DebiasConfig`` does its interactions
    (:func:`~polars_irmetrics.ground.debias.debiased`): its interactions are the
    positives, so only the relevant rows (``relevance >= relevance_level``) count and
    are drawn; a judged non-relevant row is kept as it is."""
    relevant = None
    if options.relevance in qrels.collect_schema():  # else refused by the judgments' check
        relevant = pl.col(options.relevance) >= exact_level(float(options.relevance_level))
    return debiased(qrels, debias, options.query_id, options.doc_id, relevant)


def _offline_plan(
    table: pl.LazyFrame,
    requests: Requests,
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    queries: pl.LazyFrame | None,
    interactions: pl.LazyFrame | None,
    warn: bool | CoverageSink = True,
    groups: pl.LazyFrame | None = None,
    user_groups: pl.LazyFrame | None = None,
    facts: SharedFacts | None = None,
    ids: SharedIds | None = None,
    *,
    counted: frozenset[str] = frozenset(),
    gate: Gate | None = None,
) -> pl.LazyFrame:
    """The offline plan; with RecTools' catalogue metrics (``reco_accuracy``, ``mcc``:
    :data:`~polars_irmetrics.metrics.rectools.CATALOGUE_FORMULAS`), each user's tp
    (``num_rel_ret@k``) and liked (``num_rel``) come from the per-query plan, and the
    formula reads them beside the catalogue size, the distinct items of the
    interactions (a one-row frame joined across: nothing collected). RecTools'
    ``covered_users@k`` reads whether the run ranks a document of the query at or above
    ``k``, unjudged ones too, which the judged rows of the per-query plan do not show:
    a group-by of the run, joined on the query keys. ``gate``: the refusals of the
    interactions, read before the ranking plan's warnings
    (:func:`~polars_irmetrics.offline.plan.build_plan`'s)."""
    whole = _WholeTable(
        table, requests, qrels, options, queries, interactions, warn, facts, ids, gate
    )
    users = None if ids is None or options.by_keys else ids.queries
    if any(r.metric.name in MAD for _, r in requests):  # Elliot's MAD, from the clusters
        return whole.beside(
            MAD,
            lambda asked, judged, alone: build_mad_plan(
                table,
                asked,
                judged,
                groups,
                user_groups,
                options,
                alone=alone,
                ids=ids,
                counted=counted,
            ),
        )
    elliot = [(label, r) for label, r in requests if r.metric.name in ELLIOT]
    if elliot and interactions is not None:  # debias= applies inside, once per plan
        return whole.beside(
            ELLIOT,
            lambda asked, judged, alone: build_elliot_plan(
                table,
                asked,
                judged,
                interactions,
                options,
                alone=alone,
                users=users,
                shared=ids,
            ),
        )
    if options.debias is not None and qrels is not None:  # RecTools' DebiasConfig
        qrels = _debiased(qrels, options.debias, options)
    wanted = [(label, r) for label, r in requests if _special(r)]
    reads_interactions = (*CATALOGUE_FORMULAS, SERENDIPITY)
    if not wanted or (
        interactions is None and any(r.metric.name in reads_interactions for _, r in wanted)
    ):
        # (mcc, reco_accuracy or serendipity(kind='kotkov') without interactions:
        # check_inputs has refused them)
        return build_plan(
            table, requests, qrels, options, queries=queries, warn=warn, facts=facts, gate=gate
        )
    helpers: Requests = []
    formulas: list[pl.Expr] = []
    covered: list[tuple[str, int]] = []
    kotkov: list[tuple[str, MetricRequest]] = []
    max_rank = False
    confusions: list[tuple[str, int, str, str]] = []  # label, k, tp and liked columns
    catalogue = pl.col(_CATALOGUE).cast(pl.Float64)
    for i, (label, request) in enumerate(wanted):
        k = request.k if request.k is not None else 0  # the parser requires k
        if request.metric.name == SERENDIPITY:
            kotkov.append((f"{INTERNAL}kotkov{i}", request))
            # a query the run lacks (unretrieved='zero'): an empty ranking, 0; one whose
            # rows are all ranked below k: none (RecTools leaves the user out)
            listed = pl.col(_LISTED).is_not_null()
            formulas.append(
                pl.when(listed).then(pl.col(kotkov[-1][0])).otherwise(0.0).alias(label)
            )
            continue
        if request.metric.name in _AUC:
            # RecTools' insufficient users, from the run's largest rank (a skipped rank
            # is a non-relevant position there), which the judged rows do not show
            auc, found, liked = (f"{INTERNAL}{n}{i}" for n in ("auc", "found", "liked"))
            ignore = tuple(
                (n, "ignore" if n == "insufficient_handling" else v) for n, v in request.options
            )
            helpers.append((auc, replace(request, options=ignore, aggregate=None)))
            helpers.append(
                (found, replace(request, metric=_NUM_REL_RET, options=(), k=None, aggregate=None))
            )
            helpers.append(
                (liked, replace(request, metric=_NUM_REL, options=(), k=None, aggregate=None))
            )
            negatives = pl.col(_MAX_RANK).fill_null(0) - pl.col(found)
            insufficient = (pl.col(liked) > pl.col(found)) & (negatives < k)
            formulas.append(pl.when(~insufficient).then(pl.col(auc)).alias(label))
            max_rank = True
            continue
        if request.metric.name == COVERED_USERS:
            covered.append((f"{INTERNAL}covered{i}", k))
            formulas.append(pl.col(covered[-1][0]).fill_null(False).cast(pl.Float64).alias(label))
            continue
        tp, liked = f"{INTERNAL}tp{i}", f"{INTERNAL}liked{i}"
        confusions.append((label, k, tp, liked))
        helpers.append((tp, replace(request, metric=_NUM_REL_RET, options=(), aggregate=None)))
        helpers.append(
            (liked, replace(request, metric=_NUM_REL, options=(), k=None, aggregate=None))
        )
        formula = CATALOGUE_FORMULAS[request.metric.name]
        value = formula(pl.col(tp).cast(pl.Float64), pl.col(liked).cast(pl.Float64), k, catalogue)
        formulas.append(value.alias(label))
    rest = [(label, r) for label, r in requests if not _special(r)]
    if not rest and not helpers:  # the plan still needs one metric to give the queries
        helpers.append(
            (
                f"{INTERNAL}num_rel",
                replace(wanted[0][1], metric=_NUM_REL, k=None, options=(), aggregate=None),
            )
        )
    per_query = build_plan(
        table,
        [*rest, *helpers],
        qrels,
        options.replace(per_query=True),
        queries=queries,
        warn=warn,
        facts=facts,
        gate=gate,
    )
    labels = [label for label, _ in requests]
    schema = per_query.collect_schema()
    keys = [c for c in schema.names() if c not in {h for h, _ in helpers} and c not in labels]
    if interactions is not None and any(r.metric.name in CATALOGUE_FORMULAS for _, r in wanted):
        # each by group's catalogue where the interactions carry its keys (the group's
        # values those of the group alone: a group they lack has a catalogue of 0)
        by = [c for c in keys if c != options.query_id]
        ib = interactions_by_keys(schema, interactions.collect_schema(), by)
        # the distinct items: one group-by of the interactions for every reader
        held = id_rows(ids, interactions, interactions, ib, options.doc_id)
        size = pl.len().alias(_CATALOGUE)
        if ib:
            items = held.group_by(ib).agg(size)
            per_query = per_query.join(
                items, on=ib, how="left", nulls_equal=True, maintain_order="left"
            ).with_columns(pl.col(_CATALOGUE).fill_null(0))
        else:
            items = held.select(size)
            per_query = per_query.join(items, how="cross", maintain_order="left_right")
    if covered or max_rank:  # one group-by of the run for both
        on = [c for c in keys if c in table.collect_schema().names()]
        per_query = per_query.join(
            _run_facts(table, covered, max_rank, on, schema, options, facts),
            on=on,
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
    if kotkov and interactions is not None:
        on = [c for c in keys if c in table.collect_schema().names()]
        judged = table if qrels is None else qrels  # without qrels= the run is judged
        per_query = per_query.join(
            _kotkov(table, judged, interactions, kotkov, on, schema, options, facts, ids),
            on=on,
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
    if confusions:  # read by the values and by their check of the true negatives
        per_query = per_query.cache()
    values = per_query.with_columns(formulas).select(*keys, *labels)
    if options.per_query:
        return _refuse_negatives(values, per_query, confusions)
    by = [c for c in keys if c != options.query_id]
    if by:
        values = values.group_by(by, maintain_order=True).agg(means(requests))
    else:
        values = values.select(means(requests))
    return _refuse_negatives(values, per_query, confusions)


def _refuse_negatives(
    values: pl.LazyFrame, per_query: pl.LazyFrame, confusions: list[tuple[str, int, str, str]]
) -> pl.LazyFrame:
    """``values``, refused when the plan runs where a user's true negatives would be
    negative (RecTools' ``tn = n - k - fn``: a catalogue of fewer items than a user's
    ``k`` recommendations and unrecommended relevant items), which gives an accuracy
    below 0 or an MCC of no meaning; the least ``tn`` of each of ``confusions`` (label,
    ``k``, the tp and liked columns of ``per_query``)."""
    if not confusions:
        return values
    n = pl.col(_CATALOGUE).cast(pl.Int64)
    tns = [n - k - (pl.col(liked) - pl.col(tp)) for _, k, tp, liked in confusions]
    least = per_query.select(
        *(tn.min().alias(f"{_LEAST_TN}{i}") for i, tn in enumerate(tns)),
        # the catalogue of that user (its by group's, where each group has its own)
        *(n.sort_by(tn).first().alias(f"{_CATALOGUE}{i}") for i, tn in enumerate(tns)),
    )

    def refuse(row: Mapping[str, Any]) -> None:
        for i, (label, k, _, _) in enumerate(confusions):
            tn = row[f"{_LEAST_TN}{i}"]
            if tn is not None and tn < 0:
                raise InvalidValueError(
                    f"metric {label!r}: a user's k = {k} recommendations and the relevant "
                    f"items left out of them outnumber the catalogue's {row[f'{_CATALOGUE}{i}']} "
                    "items (the distinct items of interactions=), so its true negatives "
                    "(RecTools' tn = n - k - fn) would be negative and its value has no "
                    "meaning: give interactions= every item a user may be recommended or "
                    "find relevant"
                )

    return with_tally(values, least, refuse)


def reads_run_facts(requests: Requests) -> bool:
    """Whether a metric of ``requests`` (the offline route's) reads the counts per
    ranking of the run beside the ranking plan (:func:`_run_facts`, :func:`_kotkov`'s
    queries): the door then shares one group-by of the run between that plan's checks
    and these (:class:`~polars_irmetrics.ground.facts.SharedFacts`)."""
    readers = (COVERED_USERS, SERENDIPITY, *_AUC)
    return any(_special(r) and r.metric.name in readers for _, r in requests)


def _special(request: MetricRequest) -> bool:
    """Whether the request is one of RecTools' metrics computed beside the plan."""
    name = request.metric.name
    if name in _AUC:
        return dict(request.options)["insufficient_handling"] == "exclude"
    if name == SERENDIPITY:  # kind='kotkov' (the other kind is not routed here)
        return request.route == "offline"
    return name in CATALOGUE_FORMULAS or name == COVERED_USERS


#: Elliot's plans: the values of the requests asked (one row per ``by`` group) from the
#: judgments as the other metrics read them, and whether nothing else was asked for.
WholeValues = Callable[[Requests, pl.LazyFrame | None, bool], pl.LazyFrame]


@dataclass(frozen=True)
class _WholeTable:
    """The arguments of :func:`build_offline_plan`, for metrics of the whole table
    (Elliot's) computed beside the others."""

    table: pl.LazyFrame
    requests: Requests
    qrels: pl.LazyFrame | None
    options: EvalOptions
    queries: pl.LazyFrame | None
    interactions: pl.LazyFrame | None
    warn: bool | CoverageSink
    facts: SharedFacts | None = None
    ids: SharedIds | None = None
    gate: Gate | None = None

    def beside(self, names: frozenset[str], values_of: WholeValues) -> pl.LazyFrame:
        """The offline plan of the other metrics (which checks the run and judgments as
        always; a helper ``num_rel`` where the metrics ``names`` are all that was asked
        for) beside theirs (``values_of``), joined on the ``by`` keys (side by side
        without them), in the order asked."""
        requests, qrels, options = self.requests, self.qrels, self.options
        mine = [(label, r) for label, r in requests if r.metric.name in names]
        rest = [(label, r) for label, r in requests if r.metric.name not in names]
        alone = not rest
        if alone:
            helper = replace(mine[0][1], metric=_NUM_REL, k=None, options=(), aggregate=None)
            rest = [(_HELPER, helper)]
        judged = qrels
        if options.debias is not None and qrels is not None:  # as the other metrics read them
            judged = _debiased(qrels, options.debias, options)
        # without judgments, theirs first: it names the table they read (qrels=); else
        # the others' plan first: the run's and the judgments' checks raise as always
        values = values_of(mine, judged, alone) if qrels is None else None
        base = _offline_plan(
            self.table,
            rest,
            qrels,
            options,
            self.queries,
            self.interactions,
            self.warn,
            facts=self.facts,
            ids=self.ids,
            gate=self.gate,
        )
        if values is None:
            values = values_of(mine, judged, alone)
        labels = [label for label, _ in requests]
        by = [c for c in values.collect_schema().names() if c not in labels]
        keys = [c for c in base.collect_schema().names() if c not in labels and c != _HELPER]
        if not by:
            return pl.concat([base, values], how="horizontal").select(*keys, *labels)
        # a full join: a group of the run with no judged query still shows its values
        # (those of the group alone: Elliot's of its users, null where they read the
        # relevant test items), over 0 judged queries, as the beyond-accuracy and the
        # exposure measures beside the accuracy metrics
        both = base.join(
            values, on=by, how="full", coalesce=True, nulls_equal=True, maintain_order="left_right"
        )
        counts = [pl.col(c).fill_null(0) for c in keys if c == "num_q"]
        return both.select(*(k for k in keys if k != "num_q"), *counts, *labels).sort(by)


_HELPER = f"{INTERNAL}num_rel"


def _run_facts(
    run: pl.LazyFrame,
    covered: list[tuple[str, int]],
    max_rank: bool,
    on: list[str],
    schema: pl.Schema,
    options: EvalOptions,
    shared: SharedFacts | None = None,
) -> pl.LazyFrame:
    """Per query (its keys ``on``, those the run has), from one group-by of the run:
    whether a document is ranked at or above each ``k`` of ``covered`` (ordered by
    score, positions run 1..n, so any document is; by rank, the smallest rank decides);
    with ``max_rank``, the largest rank (ordered by score, the number of documents
    with a score),
    RecTools' last position of the list. From the door's ``shared`` counts per ranking
    where they are the run's by these keys and order (the same least and greatest
    rank, the same length)."""
    by_rank = options.rank in run.collect_schema().names() and options.order != "score"
    order = options.rank if by_rank else options.score
    frame = None if shared is None else shared.frame(on, order, schema)
    if frame is None:
        cast = run.with_columns(pl.col(c).cast(schema[c]) for c in on)
        frame = ranking_facts(cast, on, pl.col(options.doc_id), order)
    # by score, the documents with a score (a judged table's rows without one are
    # judged, not retrieved: they are neither a position nor a listed document)
    low = pl.col(LOW) if by_rank else pl.when(pl.col(ORDERED) > 0).then(pl.lit(1))
    high = pl.col(HIGH) if by_rank else pl.col(ORDERED)
    read = [(low <= k).alias(column) for column, k in covered]
    if max_rank:
        read.append(high.cast(pl.Float64).alias(_MAX_RANK))
    return frame.select(*on, *read)


def _kotkov(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    interactions: pl.LazyFrame,
    wanted: list[tuple[str, MetricRequest]],
    on: list[str],
    schema: pl.Schema,
    options: EvalOptions,
    shared: SharedFacts | None = None,
    ids: SharedIds | None = None,
) -> pl.LazyFrame:
    """RecTools' ``Serendipity`` per query of the run (its keys ``on``): for each
    request (its column, the request), the mean over the rows ranked ``<= k`` of
    :func:`~polars_irmetrics.metrics.rectools.kotkov_gain`, null where no row is; and
    ``_LISTED``. The row's rank: ``rank``, or by score the position (score descending,
    ties broken by the document id descending compared as text, as the plan orders).
    Only the rows within the largest ``k`` are joined with the judgments and the
    popularity; each mean's sum is exact (fixed point: the same bits in any row order,
    which the joins leave open). Every query of the run from the door's ``shared`` counts
    per ranking where they are the run's by these keys and order (one row per query);
    the items' popularity from the door's ``ids`` (:func:`id_rows
    <polars_irmetrics.ground.facts.id_rows>`), one group-by for every route."""
    doc = options.doc_id
    names = run.collect_schema().names()
    by_rank = options.rank in names and options.order != "score"
    position = (
        pl.col(options.rank).cast(pl.Float64)
        if by_rank
        else pl.struct(
            score_order(options.score, run.collect_schema()[options.score]),
            pl.col(doc).cast(pl.String),
        )
        .rank("ordinal", descending=True)
        .over(on)
        .cast(pl.Float64)
    )
    doc_type = run.collect_schema()[doc]
    rows = run.select(*on, doc, position.alias(_POSITION)).with_columns(
        pl.col(c).cast(schema[c]) for c in on
    )
    # every query of the run, its rows within k or not
    order = options.rank if by_rank else options.score
    counted = None if shared is None else shared.frame(on, order, schema)
    queries = rows.select(on).unique() if counted is None else counted.select(on)
    cuts = [math.inf if request.k is None else float(request.k) for _, request in wanted]
    level = options.relevance_level
    judged = [c for c in on if c in qrels.collect_schema().names()]
    # by rank (whole ranks), the rows within the largest k and whether each is relevant:
    # the top k that Elliot's and the MAD metrics beside join with the judgments too
    # (one filter, one join; a null id is refused in the run, a document judged twice
    # in the judgments, so only a by key of theirs, which may be null, would tell it
    # from the join below)
    top = None
    keys = [*(c for c in options.by_keys if c in names), options.query_id]
    if by_rank and math.isfinite(max(cuts)) and judged == [options.query_id] and keys == on:
        top = judged_top(run, qrels, keys, options, int(max(cuts)), ids)
    if top is not None:
        rows = top.select(
            *(pl.col(c).cast(schema[c]) for c in on),
            pl.col(doc).cast(doc_type),
            pl.col(_POS).cast(pl.Float64).alias(_POSITION),
            pl.col(TOP_REL).alias(_RELEVANT),
        )
    elif math.isfinite(max(cuts)):
        rows = rows.filter(pl.col(_POSITION) <= max(cuts))
    hits = (
        qrels.filter(pl.col(options.relevance) >= exact_level(level))
        .select(*judged, pl.col(doc).cast(doc_type), pl.lit(True).alias(_RELEVANT))
        .with_columns(pl.col(c).cast(schema[c]) for c in judged)
        .unique()
    )
    # each by group's popularity and catalogue where the interactions carry its keys
    by = [c for c in on if c != options.query_id]
    ib = interactions_by_keys(schema, interactions.collect_schema(), by)
    counts = id_rows(ids, interactions, interactions, ib, doc)
    ranked = pl.col(ID_ROWS).rank("dense", descending=True)
    popularity = counts.select(
        *ib,
        pl.col(doc).cast(doc_type),
        (ranked.over(ib) if ib else ranked).cast(pl.Float64).alias(_POPULAR),
    )
    size = pl.len().cast(pl.Float64).alias(_CATALOGUE)
    if top is None:
        rows = rows.join(hits, on=[*judged, doc], how="left", nulls_equal=True)
    rows = rows.join(popularity, on=[*ib, doc], how="left", nulls_equal=True)
    catalogue = counts.group_by(ib).agg(size) if ib else counts.select(size)
    if ib:  # a group the interactions lack: a catalogue of none, as alone
        rows = rows.join(catalogue, on=ib, how="left", nulls_equal=True).with_columns(
            pl.col(_CATALOGUE).fill_null(0.0)
        )
    else:
        rows = rows.join(catalogue, how="cross")
    values = []
    for (column, request), k in zip(wanted, cuts, strict=True):
        given = dict(request.options)["n_items"]
        n = pl.col(_CATALOGUE) if given is None else pl.lit(float(given))
        within = pl.col(_POSITION) <= k
        gain = kotkov_gain(pl.col(_POSITION), pl.col(_POPULAR), n)
        relevant = pl.col(_RELEVANT).fill_null(False)
        total = exact_sum(pl.when(relevant & within).then(gain).otherwise(0.0))
        listed = within.sum()
        values.append(pl.when(listed > 0).then(total / listed).alias(column))
    per_query = rows.group_by(on).agg(*values)
    scored = queries.join(per_query, on=on, how="left", nulls_equal=True).with_columns(
        pl.lit(True).alias(_LISTED)
    )
    sized = [
        (request.label, dict(request.options)["n_items"])
        for _, request in wanted
        if dict(request.options)["n_items"] is not None
    ]
    # an empty history (or a group's): no popularity rank and a catalogue of 0, refused
    checked = with_history_check(scored, queries, counts, ib)  # the shared counts: no pass
    if not sized:
        return checked
    # n_items below the interactions' items: refused, from the sizes joined above
    return _with_catalogue_check(checked, catalogue, ib, sized)


def _with_catalogue_check(
    values: pl.LazyFrame,
    catalogue: pl.LazyFrame,
    keys: list[str],
    given: list[tuple[str, Any]],
) -> pl.LazyFrame:
    """``values``, refused when the plan runs (:class:`MetricParameterError`) where a
    ``serendipity(kind='kotkov', n_items=...)`` of ``given`` (its label, its
    ``n_items``) names a catalogue smaller than the distinct items of the interactions
    (of a ``by`` group of ``keys``, the largest: ``catalogue``, the sizes the gains
    read): the catalogue holds at least every item the users interacted with, so
    RecTools' chances ``(n + 1 - rank) / n`` would read a catalogue that cannot be and
    the values mean nothing (RecTools does not check it: ``n_items=1`` with 4 items
    gives 0.33 where the catalogue's 4 give 0.083).

    >>> values = pl.LazyFrame({"q": ["u1"], "v": [0.5]})
    >>> catalogue = pl.LazyFrame({"c": [4.0]}).select(pl.col("c").alias(_CATALOGUE))
    >>> label = "serendipity(kind='kotkov', n_items=1)@3"
    >>> _with_catalogue_check(values, catalogue, [], [(label, 1)]).collect()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric "serendipity(kind='kotkov', n_items=1)@3": n_items=1 is ...
    """  # noqa: E501
    if keys:  # the largest group's (ties: the first in the keys' order)
        order = [pl.col(_CATALOGUE), *(pl.col(k) for k in keys)]
        tally = (
            catalogue.sort(order, descending=[True, *(False for _ in keys)], nulls_last=True)
            .head(1)
            .select(
                _CATALOGUE,
                *(pl.col(k).cast(pl.String).alias(f"{_AT}{i}") for i, k in enumerate(keys)),
            )
        )
    else:
        tally = catalogue

    def refuse(row: Mapping[str, Any]) -> None:
        items = int(row[_CATALOGUE] or 0)
        small = [(label, n) for label, n in given if n < items]
        if not small:
            return
        label, n = small[0]
        where = ", ".join(f"{k}={row[f'{_AT}{i}']}" for i, k in enumerate(keys))
        raise MetricParameterError(
            f"metric {label!r}: n_items={n!r} is below the {items} distinct items of "
            f"interactions={f' (for {where})' if where else ''}, and the catalogue holds "
            "at least every item the users interacted with: RecTools' chances (n + 1 - "
            "rank) / n would read a catalogue that cannot be, and the value means nothing "
            f"(RecTools does not check it); pass n_items={items} or more (RecTools' "
            "len(catalog): every item that can be recommended), or leave n_items out to "
            f"take the interactions' {items} items"
        )

    return with_tally(values, tally, refuse)
