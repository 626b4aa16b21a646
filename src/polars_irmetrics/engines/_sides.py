"""The small side tables the Spark and Dask engines hand whole to every part.

The exposure measures (``ee_*``, ``awrf``, ``awrf_ndcg``, ``rnd``, ``rkl``, ``rrd``) are a
value per query, read from that query's rankings and judgments and from two small
tables keyed by document or group: ``groups=`` (one row per document and group) and
``target=`` (one row per group). An engine splits the run and the judgments by query as
it does for every per-query metric, and these tables are collected once on the driver
(:func:`side_tables`) and travel with the :class:`~polars_irmetrics.engines._partition.Job`
to every task (a broadcast), where the one plan reads them whole. The means are taken
over every query's values sorted by query, in one task: the same bits as
:func:`polars_irmetrics.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import polars as pl
import pyarrow as pa

from polars_irmetrics.door.evaluate import refuse_keys_beside_recsys
from polars_irmetrics.engines._partition import (
    as_polars_frame,
    engine_options,
    refuse_split_call,
    warned_to,
)
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.exposure.coverage import (
    groups_tally,
    reads_relevant_groups,
    warn_on_groups,
)
from polars_irmetrics.ground.options import READ_BY, EvalOptions, check_read
from polars_irmetrics.ground.validate import (
    features_tally,
    interactions_tally,
    refuse_null_ids,
    warn_empty_table,
    warn_on_catalogue,
    warn_on_features,
    warn_on_interactions,
    warns_of_features,
)
from polars_irmetrics.metrics.elliot import ELLIOT
from polars_irmetrics.metrics.rectools import CATALOGUE_FORMULAS, SERENDIPITY
from polars_irmetrics.metrics.registry import (
    INPUTS,
    MetricRequest,
    averages_over_history,
    labels_by_route,
    merges_from_counts,
    merges_from_users,
    parse_metric_list,
    split_routes,
)

__all__ = [
    "CATALOGUE_METRICS",
    "EXPOSURE_COUNT",
    "SIDE_TABLES",
    "Beside",
    "check_sides",
    "reads_history",
    "reads_relevant_group_ids",
    "refuse_click_means",
    "refuse_history_nulls",
    "refuse_item_clusters",
    "refuse_placed_keys",
    "side_tables",
    "split_beside",
    "split_front",
    "two_calls",
    "warn_on_group_ids",
    "warn_on_history",
    "warns_on_features",
]

#: The side tables an engine broadcasts, and the metrics that read them (in messages).
SIDE_TABLES: Mapping[str, str] = {
    "groups": "the exposure measures (ee_loss, ee_disparity, ee_relevance, awrf, awrf_ndcg, "
    "rnd, rkl, rrd)",
    "target": "awrf and awrf_ndcg",
    "interactions": "mcc@k, reco_accuracy@k (the catalogue's size), "
    "serendipity(kind='kotkov')@k, Elliot's metrics (pop_rsp@k, epc@k...), the means of "
    "per-user values that read the history (surprisal@k, average_popularity@k, "
    "long_tail_share@k, serendipity@k, intra_list_diversity@k by co-occurrence) and the "
    "metrics of the items' counts that read it (catalog_coverage@k, gini_index@k, "
    "novelty@k)",
    "item_features": "categorical_diversity@k and intra_list_diversity@k (the items' "
    "categories and feature vectors)",
}

#: The accuracy metrics of ``interactions=`` an engine evaluates: they read one global
#: aggregate of the history, the catalogue (its distinct items), which the engine computes
#: and broadcasts instead of the history.
CATALOGUE_METRICS = frozenset(CATALOGUE_FORMULAS)

#: The accuracy metrics of ``interactions=`` that read the history's rows, which every
#: part then reads whole: RecTools' ``serendipity(kind='kotkov')@k`` (a value per query
#: from each item's popularity rank, so each query's value is one machine's) and
#: Elliot's (``pop_rsp@k``, ``epc@k``...: each user's counts and sums, merged by
#: :mod:`polars_irmetrics.engines._recsys`).
HISTORY_ROWS = frozenset({SERENDIPITY, *ELLIOT})

Frame = TypeVar("Frame")

#: The tables a metric may read that the engines take for some metrics only: the history
#: (its catalogue, for mcc@k and reco_accuracy@k; its rows, for the means of per-user
#: values: :func:`~polars_irmetrics.metrics.registry.merges_from_users`) and the items'
#: features (for the means of per-user values).
_NOT_TAKEN = ("interactions", "item_features")


#: Beside accuracy metrics, the exposure measures' own count of queries (as
#: :func:`polars_irmetrics.evaluate` names it).
EXPOSURE_COUNT = "num_q_exposure"


@dataclass(frozen=True)
class Beside:
    """A call asking for the exposure measures beside other metrics (accuracy metrics,
    or the beyond-accuracy metrics of a recommendation table), as two calls:
    ``exposure`` and ``rest`` (the labels of each, in the order given), ``labels`` (every
    label, in that order), ``judged`` (whether an exposure measure reads the judgments,
    which its call then takes) and ``rest_judged`` (whether one of the rest does: the
    beyond-accuracy metrics read none, and their call does not take them)."""

    exposure: list[str]
    rest: list[str]
    labels: list[str]
    judged: bool
    rest_judged: bool = True


def split_beside(metrics: str | Iterable[str]) -> Beside | None:
    """The two calls of a call that asks for the exposure measures beside other metrics
    (accuracy metrics, the offline route, or beyond-accuracy ones, the recsys route),
    else None. An engine evaluates each, then puts their values side by side as
    :func:`polars_irmetrics.evaluate` does: per query joined on the query keys, or the
    means with ``num_q`` (and ``num_q_exposure`` where the rest count their own queries:
    the beyond-accuracy metrics count none, and ``num_q`` is the exposure measures').

    Examples
    --------
    >>> split_beside(["ndcg@5", "rnd", "P@3"])  # doctest: +NORMALIZE_WHITESPACE
    Beside(exposure=['rnd'], rest=['ndcg@5', 'P@3'], labels=['ndcg@5', 'rnd', 'P@3'],
           judged=False, rest_judged=True)
    >>> split_beside(["surprisal@5", "awrf"])  # doctest: +NORMALIZE_WHITESPACE
    Beside(exposure=['awrf'], rest=['surprisal@5'], labels=['surprisal@5', 'awrf'],
           judged=True, rest_judged=False)
    >>> split_beside(["rnd", "awrf"]) is None  # the exposure measures alone: one call
    True
    """
    requests = parse_metric_list(metrics)
    routes = labels_by_route(requests)
    if "exposure" not in routes or len(routes) < 2 or set(routes) - _BESIDE:
        return None
    rest = [(label, r) for label, r in requests if r.route != "exposure"]
    return Beside(
        exposure=routes["exposure"],
        rest=[label for label, _ in rest],
        labels=[label for label, _ in requests],
        judged=any("judgments" in r.metric.reads for _, r in requests if r.route == "exposure"),
        rest_judged=any("judgments" in r.reads for _, r in rest),
    )


#: The routes of the metrics an engine puts beside the exposure measures (two calls):
#: accuracy metrics and the beyond-accuracy metrics of a recommendation table (one call
#: of both is refused by the latter's call, as a call of both alone is).
_BESIDE = frozenset({"exposure", "offline", "recsys"})


#: The tables of the exposure measures' call (the others go to the accuracy metrics').
_EXPOSURE_TABLES = ("groups", "target")


def two_calls(
    evaluate: Callable[..., Frame],
    run: Frame,
    beside: Beside,
    tables: Mapping[str, Frame | None],
    partitions: int | None,
    options: Mapping[str, object],
    built: EvalOptions,
) -> tuple[Frame, Frame]:
    """The other metrics' and the exposure measures' results of a call that asks for
    both (:func:`split_beside`), by an engine's ``evaluate``: the exposure measures take
    ``groups=``, ``target=``, ``queries=`` (the ``by`` keys of each query, which both
    calls read) and (when one of them reads it) ``qrels=``; the others every other
    table given (``qrels=`` where one of them reads it), which they refuse when none of
    them reads it, as one machine refuses a table no metric reads. An option none of
    the call's metrics reads is refused first, in one machine's words (``built``: the
    call's options); each call takes the options its metrics read
    (:data:`~polars_irmetrics.ground.options.READ_BY`: ``unseen_items=`` goes to the
    beyond-accuracy metrics alone) and every other (``by=``, ``systems=``...)."""
    check_read(built, labels_by_route(parse_metric_list(beside.labels)), labels=False)

    def read(labels: list[str]) -> dict[str, object]:
        routes = set(labels_by_route(parse_metric_list(labels)))
        return {k: v for k, v in options.items() if k not in READ_BY or READ_BY[k] & routes}

    if beside.judged and options.get("unretrieved") == "drop":
        # one machine reads the retrieved queries' judgments alone in the exposure
        # measures beside the ranking metrics; an engine's two calls do not
        raise InvalidValueError(
            f"unretrieved='drop' beside the exposure measures that read the judgments "
            f"({', '.join(map(repr, beside.exposure))}) is evaluated on one machine "
            "(irm.evaluate), not on Spark or Dask, whose exposure measures score a judged "
            "query the run did not retrieve as an empty ranking: evaluate "
            f"{', '.join(map(repr, beside.exposure))} in a separate call without "
            "unretrieved=, or use irm.evaluate"
        )
    qrels = tables.get("qrels")
    # unretrieved= is the ranking metrics' (one machine's check_read reads the whole
    # call, as above): the exposure measures' call would refuse it as an option none of
    # them reads, as the beyond-accuracy metrics' call would refuse relevance=
    exposure = evaluate(
        run,
        beside.exposure,
        # read by none of the others either: refused by the exposure measures' call,
        # in one machine's words (rnd beside surprisal@k: "drop qrels=")
        qrels=qrels if beside.judged or not beside.rest_judged else None,
        # the by keys of each query, which the exposure measures read as the others do
        queries=tables.get("queries"),
        **{name: tables.get(name) for name in _EXPOSURE_TABLES},
        partitions=partitions,
        **read(beside.exposure),
    )
    # qrels= where one of the others reads the judgments (one machine's split: the
    # beyond-accuracy metrics read none, and would refuse it as unread)
    unread = (*_EXPOSURE_TABLES, *(() if beside.rest_judged else ("qrels",)))
    others = {k: v for k, v in tables.items() if k not in unread}
    rest = evaluate(run, beside.rest, **others, partitions=partitions, **read(beside.rest))
    return rest, exposure


class _Framed(Protocol):
    """An engine's frame (Spark's, Dask's): it names its columns."""

    @property
    def columns(self) -> Any: ...


Framed = TypeVar("Framed", bound=_Framed)


def split_front(
    engine: str,
    evaluate: Callable[..., Framed],
    run: Framed,
    metrics: str | Iterable[str],
    tables: Mapping[str, Framed | None],
    partitions: int | None,
    options: Mapping[str, object],
    *,
    ensure_frame: Callable[[object, str], None],
    schema: Callable[[Framed], pa.Schema],
    checks: Callable[[EvalOptions], None] | None = None,
) -> tuple[EvalOptions, tuple[Beside, Framed, Framed] | None]:
    """The front of an engine's ``evaluate`` (``engine``: ``"Spark"``, ``"Dask"``), one
    for both: the run and the judgments checked to be the engine's frames
    (``ensure_frame``), the options read (:func:`engine_options`), Elliot's
    ``item_mad@k`` refused, the engine's own ``checks`` of the options, then a ``by`` key
    that ``queries=`` places beside the beyond-accuracy metrics refused (before any
    route is read, as one machine refuses it: the split below would send them a
    ``queries=`` they refuse); a call that asks for the exposure measures beside other
    metrics (:func:`split_beside`) is refused as a whole where each half would not see it
    (a sampled run, a ``by`` key of the run alone:
    :func:`~polars_irmetrics.engines._partition.refuse_split_call`, from the frames'
    Arrow ``schema``) and evaluated as two calls of ``evaluate`` (:func:`two_calls`).

    ``tables``: every table keyword of the call (``qrels``, ``queries``, ``groups``...).
    Returns the options and, for a split call, its two results (the other metrics', the
    exposure measures') and how they split, which the engine puts side by side as one
    machine does; ``None`` for a call of one piece, which the engine routes itself."""
    qrels, queries = tables.get("qrels"), tables.get("queries")
    ensure_frame(run, "run")
    if qrels is not None:
        ensure_frame(qrels, "qrels")
    built = engine_options(options, engine)
    refuse_item_clusters(engine, metrics)  # Elliot's item_mad: no part holds an item's users
    if checks is not None:
        checks(built)
    if queries is not None:  # a by= key it places, beside the beyond-accuracy metrics
        ensure_frame(queries, "queries")
        refuse_placed_keys(metrics, run.columns, queries.columns, built, judged=qrels is not None)
    beside = split_beside(metrics)
    if beside is None:
        return built, None
    # a sampled run, a by key of the run alone: refused as the whole call's (each call
    # sees its half)
    refuse_split_call(
        schema(run),
        None if qrels is None else schema(qrels),
        metrics,
        built,
        None if queries is None else schema(queries),
    )
    rest, exposure = two_calls(evaluate, run, beside, tables, partitions, options, built)
    return built, (beside, rest, exposure)


def refuse_click_means(engine: str, metrics: str | Iterable[str], options: EvalOptions) -> None:
    """Refuse the means of click metrics (an impression log's, ``ctr``, ``abandonment``...)
    on ``engine``: their means are not means of per-session values (``ctr`` is the
    clicks over the impressions of every session), which the engines' summary of
    per-query rows cannot give, so it raised a raw schema error (Dask) or a type error
    (Spark). Their per-session values (``per_query=True``) are computed there as on one
    machine.

    >>> refuse_click_means("Dask", ["ctr"], EvalOptions())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: the means of click metrics (ctr) are not ...
    >>> refuse_click_means("Dask", ["ctr"], EvalOptions(per_query=True))
    """
    if options.per_query:
        return
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    clicks = labels_by_route(parse_metric_list(names)).get("online")
    if clicks:
        raise InvalidValueError(
            f"the means of click metrics ({', '.join(clicks)}) are not computed on "
            f"{engine} (their means count sessions, and ctr is the clicks over every "
            "session's impressions, not a mean of per-session values); pass "
            "per_query=True for each session's values, or "
            "evaluate the log with polars_irmetrics.evaluate_online (a LazyFrame of the "
            "Parquet logs, out of core with buckets=)"
        )


def refuse_placed_keys(
    metrics: str | Iterable[str],
    run: Iterable[str],
    queries: Iterable[str] | None,
    options: EvalOptions,
    *,
    judged: bool = False,
) -> None:
    """Refuse a ``by`` key that ``queries=`` places (``run`` and ``queries``: the columns
    of each; ``judged``: whether ``qrels=`` was given) beside the beyond-accuracy metrics and the ranking metrics or the exposure
    measures, with one machine's words
    (:func:`~polars_irmetrics.door.evaluate.refuse_keys_beside_recsys`), before the
    engine's refusal of a call that mixes them (:func:`check_sides`), which would send
    the caller to a call of the beyond-accuracy metrics that refuses ``queries=``.

    >>> refuse_placed_keys(["novelty@2", "ndcg@2"], ["query_id", "doc_id"],
    ...                    ["query_id", "day"], EvalOptions.build(by="day"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by='day' is a column of queries=, not of the run: ...
    """  # noqa: E501
    if queries is None:
        return
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    refuse_keys_beside_recsys(
        parse_metric_list(names), list(run), list(queries), options, judged=judged
    )


def refuse_item_clusters(engine: str, metrics: str | Iterable[str]) -> None:
    """Refuse Elliot's ``item_mad@k`` on ``engine``, before any other check: it compares
    the clusters of items in ``groups=`` by each item's mean gain over every user whose
    list holds it, a mean across the parts' queries that no part holds and the engines
    do not merge (it was refused with a false reason: ``groups=`` read by no metric,
    or ``groups=`` missing).

    >>> refuse_item_clusters("Spark", ["ndcg@10", "user_mad@10"])
    >>> refuse_item_clusters("Dask", ["item_mad@10"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: metric 'item_mad@10' compares the clusters ...
    """
    for label, request in parse_metric_list(metrics):
        if request.metric.name == "item_mad":
            raise InvalidValueError(
                f"metric {label!r} compares the clusters of items in groups= by each "
                "item's mean gain over every user whose list holds it, which "
                f"{engine} does not compute from its parts: evaluate those metrics with "
                "polars_irmetrics.evaluate (a LazyFrame of the Parquet files runs out of "
                "core on one machine)"
            )


def check_sides(engine: str, metrics: str | Iterable[str], given: Mapping[str, object]) -> None:
    """Refuse by name a metric an engine cannot evaluate (a metric of the whole
    recommendation table, one reading ``interactions=``, ``item_features=`` or
    ``reference=``), a side table no metric asked for reads, and metrics one call cannot
    put side by side (:func:`~polars_irmetrics.metrics.registry.split_routes`). The
    exposure measures beside accuracy metrics, or beside the beyond-accuracy metrics of
    a recommendation table, are two calls (:func:`split_beside`).

    Examples
    --------
    >>> check_sides("Spark", ["ndcg@10"], {"groups": object()})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: groups= is read by the exposure ...
    >>> check_sides("Dask", ["auc", "rnd"], {})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metrics 'auc' and 'rnd' are computed ...

    A metric of the whole recommendation table is one value over every user's rows,
    which the engines do not merge from parts, unless it is the mean of per-user values
    read from each user's own rows (and the items' features, and the whole history,
    which every part reads): the parts give those, and the mean of all of them is the
    one plan's; or a metric of the items' counts (coverage, Gini, ``novelty``), which
    the parts' counts add up to; or RePlay's novelty, a mean over the history's users.
    Every metric of a recommendation table merges so now.

    >>> check_sides("Spark", ["sufficient_reco@10", "categorical_diversity@5"], {})
    >>> check_sides("Dask", ["surprisal@10", "long_tail_share@10"], {})
    >>> check_sides("Spark", ["novelty(kind='replay')@10", "gini_index@10"], {})
    """
    requests = parse_metric_list(metrics)
    users = [label for label, r in requests if _merges(r)]
    for label, request in requests:
        if users and request.route != "recsys":
            raise InvalidValueError(
                f"metrics {users[0]!r} and {label!r} are computed from different tables "
                f"({users[0]!r} describes the recommendation table, {label!r} the run "
                f"against its other tables): on {engine}, evaluate them in two calls"
            )
        if request.route == "recsys" and label not in users:  # pragma: no cover - none now
            raise InvalidValueError(
                f"metric {label!r} describes the whole recommendation table, which "
                f"{engine} does not merge from its parts: evaluate it with "
                "polars_irmetrics.evaluate"
            )
        if label in users:
            continue
        unread = [name for name in request.reads if name in _NOT_TAKEN]
        if unread == ["interactions"] and request.metric.name in CATALOGUE_METRICS:
            continue
        if unread == ["interactions"] and _offline_history(request):
            continue
        if unread[:1] == ["interactions"]:
            raise InvalidValueError(
                f"metric {label!r} reads the history in interactions= (item popularity or "
                f"each user's history), which {engine} takes for mcc@k and reco_accuracy@k "
                "(the catalogue), serendipity(kind='kotkov')@k, Elliot's metrics (pop_rsp@k, "
                "epc@k...) and the metrics of a recommendation table that merge from its "
                "parts (surprisal@k, novelty@k...) only: evaluate it with "
                "polars_irmetrics.evaluate"
            )
        if unread:
            keyword = INPUTS[unread[0]][1]
            raise InvalidValueError(
                f"metric {label!r} reads {keyword}=, which {engine} does not take (one "
                "machine only): evaluate it with polars_irmetrics.evaluate"
            )
    exposure = split_routes(requests).get("exposure")  # one machine's refusal of a mix
    catalogue = any(r.metric.name in CATALOGUE_METRICS for _, r in requests)
    features = any("item_features" in r.reads for label, r in requests if label in users)
    history = any("interactions" in r.reads for label, r in requests if label in users)
    history = history or any(_offline_history(r) for _, r in requests)
    reads = {"interactions": catalogue or history, "item_features": features}
    for name, frame in given.items():
        if frame is not None and not reads.get(name, exposure):
            raise MetricParameterError(
                f"{name}= is read by {SIDE_TABLES[name]}, and no metric asked for reads "
                f"it: drop {name}=, or ask for one of them"
            )


def side_tables(
    engine: str,
    metrics: str | Iterable[str],
    given: Mapping[str, Frame | None],
    collect: Callable[[str, Frame, tuple[str, ...], bool], pa.Table],
    options: EvalOptions,
) -> tuple[tuple[str, pa.Table], ...]:
    """The side tables given, checked (:func:`check_sides`) and collected to Arrow on
    the driver (``collect(keyword, frame, columns, distinct)``, which checks the frame's
    kind: ``columns`` the columns to keep, every one when empty; ``distinct`` whether to
    keep their distinct rows only), as ``(keyword, table)`` pairs for
    :func:`~polars_irmetrics.engines._partition.prepare`.

    ``groups=``, ``target=`` and ``item_features=`` go whole. Of ``interactions=``, where
    a metric reads the history (:func:`reads_history`: item popularity, each user's
    history), its rows go whole with the columns the plan reads (the ``by`` keys it
    carries, the user and item ids), so every part's plan counts the whole history;
    otherwise only the catalogue travels, its distinct ``doc_id`` values (per ``by``
    group where it carries the keys), which gives each part's plan the catalogue's size
    of the whole history (of each group's)."""
    check_sides(engine, metrics, given)
    history = reads_history(metrics)
    tables: list[tuple[str, pa.Table]] = []
    for name, frame in given.items():
        if frame is None:
            continue
        columns: tuple[str, ...] = ()
        if name == "interactions":
            doc_id, names = options.doc_id, list(getattr(frame, "columns", ()))
            if doc_id not in names:
                read = "history's items" if history else "catalogue is its distinct items"
                raise ColumnNotFoundError(
                    f"column {doc_id!r} not found in interactions (columns: {names}); the "
                    f"{read}: name the column with doc_id="
                )
            # the by keys it carries either way: each by group's history, or catalogue
            keys = (*options.by_keys, options.query_id) if history else options.by_keys
            columns = (*(k for k in keys if k in names), doc_id)
        tables.append(
            (name, collect(name, frame, columns, name == "interactions" and not history))
        )
    return tuple(tables)


def reads_history(metrics: str | Iterable[str]) -> bool:
    """Whether a metric an engine takes reads the interaction history's rows (a metric
    of a recommendation table that reads item popularity or each user's history, or
    :data:`HISTORY_ROWS`), not only its catalogue.

    Examples
    --------
    >>> reads_history(["surprisal@5"]), reads_history(["mcc@5", "sufficient_reco@5"])
    (True, False)
    >>> reads_history(["serendipity(kind='kotkov')@5"])
    True
    """
    return any(
        _offline_history(r) or ("interactions" in r.reads and _merges(r))
        for _, r in parse_metric_list(metrics)
    )


def _offline_history(request: MetricRequest) -> bool:
    """Whether an accuracy metric reads the history's rows (:data:`HISTORY_ROWS`)."""
    return request.route == "offline" and request.metric.name in HISTORY_ROWS


def _merges(request: MetricRequest) -> bool:
    """Whether an engine merges a metric of a recommendation table from its parts: the
    mean of per-user values (:func:`~polars_irmetrics.metrics.registry.merges_from_users`,
    the whole history read by every part), or a metric of the items' counts
    (:func:`~polars_irmetrics.metrics.registry.merges_from_counts`), or a mean over the
    history's users (:func:`~polars_irmetrics.metrics.registry.averages_over_history`),
    whose users without recommendations the merge adds."""
    return (
        merges_from_users(request, history=True)
        or merges_from_counts(request)
        or averages_over_history(request)
    )


def warn_on_history(
    users: pa.Table,
    items: pa.Table,
    sides: Iterable[tuple[str, pa.Table]],
    metrics: str | Iterable[str],
    options: EvalOptions,
    emit: Callable[[str], None] | None = None,
    *,
    held_users: pa.Table | None = None,
    null_rows: int | None = None,
    system_ids: Mapping[str, pa.Table] | None = None,
    emit_table: Callable[[str], None] | None = None,
) -> bool:
    """The warning one machine gives when the history mostly lacks the run's items (or
    holds none of its users), and its refusal of a history row with a null id, from the
    whole run's distinct ``users`` and ``items`` (the parts do not warn: each holds some
    of the users; with ``unseen_items='drop'`` too, the ids as given, before the drop).
    Also one machine's warning when the item features hold few of those items and their
    recommendations are scored or left out (:func:`warns_on_features`), whatever the
    history. Where the history's rows travelled (:func:`reads_history`),
    they are read; where only its catalogue did (``mcc@k``, ``reco_accuracy@k``), the
    engine also passes the history's distinct users (``held_users``, where it has the
    user column) and its count of rows with a null id (``null_rows``). With
    ``systems=``, ``system_ids``: the run's distinct system keys with each id column
    (by the column), so that a system whose items the history lacks is named, as one
    machine names it. Nothing where no metric reads the history. ``emit``: where a
    warning goes from a Dask worker; by default, here (``emit_table``: where the
    :class:`~polars_irmetrics.errors.IrmWarning` of a table of no row goes, the
    others being coverage warnings). True when done (a task's output).

    Examples
    --------
    >>> import warnings
    >>> users = pa.table({"query_id": ["u1", "u2"]})
    >>> items = pa.table({"doc_id": ["a", "b", "c"]})
    >>> history = pa.table({"query_id": ["u1", "u9"], "doc_id": ["a", "z"]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_history(users, items, [("interactions", history)], ["surprisal@2"],
    ...                     EvalOptions())
    True
    >>> str(caught[0].message)[:58]
    'interactions= holds only 1 of the 3 items of the recommend'

    The catalogue alone, with the history's users and null rows counted by the engine:

    >>> catalogue = pa.table({"doc_id": ["a", None]})
    >>> warn_on_history(users, items, [("interactions", catalogue)], ["mcc@2"],
    ...                 EvalOptions(), held_users=history.select(["query_id"]), null_rows=4)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: the interactions have 4 row(s) with a null ...
    """
    named = dict(sides)
    history = named.get("interactions")
    whole = reads_history(metrics)
    requests = [r for _, r in parse_metric_list(metrics)]
    catalogue = any(r.metric.name in CATALOGUE_METRICS for r in requests)
    user, item = options.query_id, options.doc_id
    recommendations = any(_merges(r) for r in requests)
    run = "recommendations" if recommendations else "run"
    if history is not None and (whole or catalogue):  # refused before any warning
        held = [item, *([] if held_users is None else [user])]
        refuse_history_nulls(sides, metrics, options, null_rows=null_rows, held=held)
    if recommendations and not users.num_rows:  # one machine's one warning of no row
        return warned_to(lambda: warn_empty_table("the recommendation table"), emit_table)
    features = named.get("item_features")
    if features is not None and warns_of_features(options.unseen_items):
        tally = features_tally(
            as_polars_frame(items).lazy(), as_polars_frame(features).lazy(), item=item
        )
        counted = tally.collect().row(0, named=True)
        unseen = options.unseen_items
        warned_to(lambda: warn_on_features(counted, item=item, run=run, unseen_items=unseen), emit)
    if history is None or not (whole or catalogue):
        return True
    tally = interactions_tally(
        as_polars_frame(items).lazy(),
        as_polars_frame(history).lazy(),
        user=user,
        item=item,
        users=as_polars_frame(users).lazy(),
        held_users=None if held_users is None else as_polars_frame(held_users).lazy(),
        null_rows=null_rows,
        systems=options.system_keys if system_ids else (),
        system_rows={k: as_polars_frame(t).lazy() for k, t in (system_ids or {}).items()},
    )
    row = tally.collect().row(0, named=True)
    dropped = options.unseen_items == "drop"
    asked = parse_metric_list(metrics)
    labels = [label for label, r in asked if r.metric.name in CATALOGUE_METRICS]
    readers = [label for label, r in asked if "interactions" in r.reads]

    def say() -> None:
        systems = options.system_keys if system_ids else ()
        warn_on_interactions(
            row,
            user=user,
            item=item,
            run=run,
            dropped=dropped,
            systems=systems,
            readers=readers,
            history_readers=[label for label, r in asked if r.reads_histories],
        )
        warn_on_catalogue(row, item=item, labels=labels)

    return warned_to(say, emit)


def refuse_history_nulls(
    sides: Iterable[tuple[str, pa.Table]],
    metrics: str | Iterable[str],
    options: EvalOptions,
    *,
    null_rows: int | None = None,
    held: Iterable[str] = (),
) -> bool:
    """One machine's refusal of a history row with a null id
    (:func:`~polars_irmetrics.ground.validate.refuse_null_ids`), for an engine to give
    once the values are computed and before the ranking metrics' coverage warning (one
    machine refuses it before that plan warns: a refused input warns of nothing);
    :func:`warn_on_history` refuses it again, later, with the same count. Where the
    history's rows travelled (:func:`reads_history`) they are counted here; where only
    its catalogue did (``mcc@k``, ``reco_accuracy@k``), the engine's count
    ``null_rows`` of the history's id columns among ``held`` (its columns). Nothing where
    no metric reads the history. True when done (a task's output).

    >>> refuse_history_nulls([("interactions", pa.table({"doc_id": ["a"]}))], ["mcc@2"],
    ...                      EvalOptions(), null_rows=2, held=["query_id", "doc_id"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: the interactions have 2 row(s) with a null 'query_id' or 'doc_id': ...
    """  # noqa: E501
    history = dict(sides).get("interactions")
    if history is None:
        return True
    user, item = options.query_id, options.doc_id
    if reads_history(metrics):
        frame = as_polars_frame(history)
        columns = [c for c in (user, item) if c in frame.columns]
        nulls = pl.any_horizontal(pl.col(c).is_null() for c in columns).sum()
        refuse_null_ids(int(frame.select(nulls).item()), columns)
    elif null_rows is not None:
        refuse_null_ids(int(null_rows), [c for c in (user, item) if c in set(held)])
    return True


def warns_on_features(sides: Iterable[tuple[str, pa.Table]], options: EvalOptions) -> bool:
    """Whether :func:`warn_on_history` counts the item features' items: where they were
    given and a recommendation of an item they lack is scored or left out
    (``unseen_items='recommenders'`` or ``'drop'``) instead of refused."""
    return warns_of_features(options.unseen_items) and "item_features" in dict(sides)


def reads_relevant_group_ids(
    sides: Iterable[tuple[str, pa.Table]], metrics: str | Iterable[str]
) -> bool:
    """Whether :func:`warn_on_group_ids` counts the judgments' relevant documents: an
    exposure measure asked reads their groups (the expected-exposure measures; awrf
    without ``target=``), so the engine gathers them (one distinct pass of the
    judgments) only then.

    >>> groups = pa.table({"doc_id": ["a"], "group": ["x"]})
    >>> reads_relevant_group_ids([("groups", groups)], ["ee_loss"])
    True
    >>> target = pa.table({"group": ["x"], "target": [1.0]})
    >>> reads_relevant_group_ids([("groups", groups), ("target", target)], ["awrf"])
    False
    """
    held = dict(sides)
    exposure = [(label, r) for label, r in parse_metric_list(metrics) if r.route == "exposure"]
    return reads_relevant_groups(exposure, held.get("target"))


def warn_on_group_ids(
    docs: pa.Table,
    sides: Iterable[tuple[str, pa.Table]],
    metrics: str | Iterable[str],
    options: EvalOptions,
    emit: Callable[[str], None] | None = None,
    relevant: pa.Table | None = None,
    queries: pa.Table | None = None,
) -> bool:
    """The warnings one machine gives when ``groups=`` (or ``target=``) mostly lacks the
    run's documents, from the whole run's distinct documents ``docs`` (the parts do
    not warn: each holds some of them), the side tables and the metrics (their
    exposure measures read the groups); ``relevant``: the judgments' relevant documents
    (their distinct ``query_id`` and ``doc_id`` pairs, or ``doc_id`` alone), whose
    groups the expected-exposure measures read: those without a group in the run's
    queries (``queries``, the run's distinct ``query_id``) are named however few, as
    one machine names them
    (:func:`~polars_irmetrics.exposure.coverage.groups_tally`). ``emit``: where a
    warning goes from a Dask worker (``distributed.warn``); by default, here. True
    when done (a task's output).

    Examples
    --------
    >>> import warnings
    >>> docs = pa.table({"doc_id": ["a", "b", "c"]})
    >>> groups = pa.table({"doc_id": ["A", "B", "c"], "group": ["x", "x", "y"]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_group_ids(docs, [("groups", groups)], ["rnd"], EvalOptions())
    True
    >>> str(caught[0].message)[:50]
    'groups= holds only 1 of the 3 documents of the run'
    """
    held = dict(sides)
    groups = held.get("groups")
    exposure = [(label, r) for label, r in parse_metric_list(metrics) if r.route == "exposure"]
    if groups is None or not exposure:
        return True
    target = held.get("target")
    tally = groups_tally(
        as_polars_frame(docs).lazy(),
        as_polars_frame(groups).lazy(),
        None if target is None else as_polars_frame(target).lazy(),
        exposure,
        options,
        None if relevant is None else as_polars_frame(relevant).lazy(),
        queries=None if queries is None else as_polars_frame(queries).lazy(),
    )
    row = tally.collect().row(0, named=True)
    return warned_to(lambda: warn_on_groups(row, options, requests=exposure), emit)
