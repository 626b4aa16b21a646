"""The door: :func:`evaluate`, every metric of the library through one call.

The metric list is parsed once (:func:`~polars_irmetrics.metrics.registry.parse_metric_list`)
and each metric is routed by the tables it reads (``Metric.reads``, ``Metric.level``), as
ir_measures routes a measure to the provider that computes it:

* ``offline``: a run and judgments, or a judged table (:mod:`polars_irmetrics.offline`);
* ``recsys``: a whole recommendation table (``level`` ``"collection"``), with the
  interactions and item features (:mod:`polars_irmetrics.recsys`);
* ``online``: an impression log's clicks (:mod:`polars_irmetrics.online`);
* ``prefs``: preference judgments (:mod:`polars_irmetrics.offline.prefs`);
* ``jg``: judgments with judgment groups (:mod:`polars_irmetrics.door.jg`);
* ``prediction``: a label and a prediction per row, or predictions beside ``labels=``
  (:mod:`polars_irmetrics.prediction`);
* ``neighbors``: an approximate nearest-neighbour run against the exact one
  (:mod:`polars_irmetrics.vectors`).

A run or judgments whose ``doc_id`` is a ``List`` (one row per query) are turned into
the long form first (:mod:`polars_irmetrics.ground.lists`), inside the plan.

A metric whose table was not given is refused by one message, written once
(:func:`~polars_irmetrics.metrics.registry.check_inputs`), naming the keyword to pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, overload

import polars as pl

from polars_irmetrics.door.jg import build_jg_plan
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.ground.buckets import collect_guarded
from polars_irmetrics.ground.inputs import ArrowStreamExportable, FrameInput, as_polars
from polars_irmetrics.ground.lists import long_judgments, long_run
from polars_irmetrics.ground.options import EvalKwargs, EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.rectools import CATALOGUE_FORMULAS, COVERED_USERS
from polars_irmetrics.metrics.registry import (
    MetricRequest,
    check_inputs,
    get_metric,
    means,
    parse_metric_list,
)
from polars_irmetrics.metrics.spec import Metric
from polars_irmetrics.offline.plan import build_plan
from polars_irmetrics.offline.prefs import build_prefs_plan
from polars_irmetrics.online.columns import LogColumns
from polars_irmetrics.online.evaluate import build_online_plan
from polars_irmetrics.prediction.evaluate import build_prediction_plan
from polars_irmetrics.recsys.evaluate import with_beyond_accuracy
from polars_irmetrics.vectors.neighbors import build_neighbors_plan

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Route", "evaluate", "evaluate_plan", "route"]

Requests = list[tuple[str, MetricRequest]]

_CATALOGUE = f"{INTERNAL}catalogue"
_NUM_REL_RET, _NUM_REL = get_metric("num_rel_ret"), get_metric("num_rel")
Route = Literal["offline", "recsys", "online", "prefs", "jg", "prediction", "neighbors"]

#: Routes whose results can be put side by side (one row per query or group).
_JOINABLE: frozenset[Route] = frozenset({"offline", "recsys"})


def route(metric: Metric) -> Route:
    """The wing that computes ``metric``, from what it reads."""
    if metric.level == "collection":
        return "recsys"
    if "clicks" in metric.reads:
        return "online"
    if "prefs" in metric.reads:
        return "prefs"
    if "judgment_groups" in metric.reads:
        return "jg"
    if "predictions" in metric.reads:
        return "prediction"
    if "neighbors" in metric.reads:
        return "neighbors"
    return "offline"


def _routes(requests: Requests) -> dict[Route, Requests]:
    routes: dict[Route, Requests] = {}
    for label, request in requests:
        routes.setdefault(route(request.metric), []).append((label, request))
    kinds = list(routes)
    if len(kinds) > 1 and not set(kinds) <= _JOINABLE:
        (a, *_), (b, *_) = routes[kinds[0]][0], routes[kinds[1]][0]
        raise MetricParameterError(
            f"metrics {a!r} and {b!r} are computed from different tables ({kinds[0]}: "
            f"{_TABLES[kinds[0]]}; {kinds[1]}: {_TABLES[kinds[1]]}): evaluate them in two "
            "calls"
        )
    return routes


_TABLES: Mapping[Route, str] = {
    "offline": "a run and judgments",
    "recsys": "a recommendation table",
    "online": "an impression log",
    "prefs": "a run and preference judgments",
    "jg": "a run and judgment groups",
    "prediction": "labels and predictions",
    "neighbors": "an approximate run and the exact neighbours",
}


@overload
def evaluate(
    table: pl.DataFrame | ArrowStreamExportable,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = ...,
    queries: FrameInput | None = ...,
    interactions: FrameInput | None = ...,
    item_features: FrameInput | None = ...,
    prefs: FrameInput | None = ...,
    qrels_jg: FrameInput | None = ...,
    labels: FrameInput | None = ...,
    neighbors: FrameInput | None = ...,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame: ...


@overload
def evaluate(
    table: pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = ...,
    queries: FrameInput | None = ...,
    interactions: FrameInput | None = ...,
    item_features: FrameInput | None = ...,
    prefs: FrameInput | None = ...,
    qrels_jg: FrameInput | None = ...,
    labels: FrameInput | None = ...,
    neighbors: FrameInput | None = ...,
    **options: Unpack[EvalKwargs],
) -> pl.LazyFrame: ...


def evaluate(
    table: FrameInput,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = None,
    queries: FrameInput | None = None,
    interactions: FrameInput | None = None,
    item_features: FrameInput | None = None,
    prefs: FrameInput | None = None,
    qrels_jg: FrameInput | None = None,
    labels: FrameInput | None = None,
    neighbors: FrameInput | None = None,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame | pl.LazyFrame:
    """Evaluate every metric the library has: per-query values or means, in one plan.

    The metric list is parsed once and each metric is routed by the tables it reads
    (:attr:`Metric.reads <polars_irmetrics.metrics.spec.Metric.reads>`): a run and
    judgments (``qrels``, or a judged table), a recommendation table with
    ``interactions`` and ``item_features`` (beyond-accuracy metrics), an impression log
    (click metrics: the table is the log, its sessions the queries), preference
    judgments (``prefs``) or judgments with a judgment-group column (``qrels_jg``). A
    metric whose table is missing is refused with the keyword to pass.

    Parameters
    ----------
    table
        The run: one row per retrieved document: ``query_id``, ``doc_id`` and ``rank`` (1 = top)
        and/or ``score``. A polars DataFrame or LazyFrame; a pandas DataFrame, a pyarrow
        Table or RecordBatch, or any table with the Arrow PyCapsule interface
        (``__arrow_c_stream__``) is converted to a polars DataFrame first. With
        ``qrels=None`` it must be a *judged table* that also carries ``relevance``: its
        rows are then the judgments, documents not in the table are unknown, and a row
        with a null ``rank`` (ranked by score: a null ``score``) is a judged document
        that was not retrieved. A ``doc_id`` of ``List`` dtype holds one query's ranking
        per row (rank = 1-based position; a parallel ``List`` in ``score`` is kept), and
        judgments with a ``List`` ``doc_id`` list each query's relevant documents
        (:mod:`polars_irmetrics.ground.lists`).
    metrics
        Metric names, e.g. ``["ndcg@10", "map", "P_10", "recall(denominator='capped')@100"]``
        (canonical, ir_measures, trec_eval and ranx spellings; see
        :func:`parse_metric`). Result columns are named by the strings as given; a
        cutoff range (``"recall@1..100"``, ``"P@10..100:10"``) gives one column per
        cutoff, all computed in the same pass.
    qrels
        Judgments: ``query_id``, ``doc_id``, ``relevance`` (integer or float), in any
        of the kinds of table ``run`` may be. A
        ``by`` key present in the judgments is matched too; otherwise the same
        judgments serve every ``by`` group.
    queries
        Attributes of the queries (``query_id`` and ``by`` keys such as day, market or
        segment): each judged query is counted in the group its own value names,
        whether the run retrieved it or not (see ``by``). A query with several rows
        counts in each of their groups.
    prefs
        Preference judgments for the ``prefs_*`` measures (trec_eval ``-R prefs``):
        ``query_id``, ``jg``, ``jsg``, ``doc_id``, ``rel_level``
        (:func:`~polars_irmetrics.read_trec_prefs`).
    qrels_jg
        Judgments with a judgment-group column ``jg``, for the ``*_avgjg`` measures
        (trec_eval ``-R qrels_jg``; :func:`~polars_irmetrics.read_trec_qrels_jg`).
    neighbors
        For the neighbour-recall metrics (``neighbor_recall@k``,
        ``neighbor_recall_rel@k``): the exact nearest neighbours (e.g.
        :func:`~polars_irmetrics.knn`'s run), against which ``table`` (an approximate
        index's, with true scores) is measured (:mod:`polars_irmetrics.vectors.neighbors`).
    labels
        Prediction metrics (``auc``, ``gauc``, ``logloss``, ``rmse``...: every metric that
        reads ``"predictions"``; see :mod:`polars_irmetrics.prediction`), two-table
        form: the true labels, one row per ``(query_id, doc_id)`` (user, item) with the
        ``label`` column, joined to ``table`` (the predictions) on those keys, as
        Microsoft Recommenders joins ``rating_true`` and ``rating_pred``. Without it,
        ``table`` holds both the ``label`` and the ``prediction`` columns.
    interactions, item_features
        For beyond-accuracy metrics (``catalog_coverage``, ``novelty``,
        ``intra_list_diversity``, ``serendipity``...): the history the recommender
        learned from and the items' feature vectors, with the run's queries as users and
        its documents as items (see :func:`~polars_irmetrics.beyond_accuracy`). Their
        values are joined beside the means (``per_query=False`` only).
    **options
        The options of the evaluation, the same keywords at every door (typed once
        as :class:`~polars_irmetrics.ground.options.EvalKwargs`, checked once into
        :class:`~polars_irmetrics.EvalOptions`):

        ``by``
            Attributes of the query (day, market, segment, query length): each combination
            is evaluated apart, and a judged query counts in the group its own value names.
            That value comes from the judgments when they carry the key, else from
            ``queries``, else from the run; a judged query the run did not retrieve then has
            no value, and a group that did not retrieve a judged query is refused unless
            ``unretrieved='drop'`` (the numbers would depend on what the key means).

        ``systems``
            Keys naming systems or runs (``"system"``, ``"run"``): each group is scored on
            every judged query, a judged query it did not retrieve counting 0 (as
            :func:`~polars_irmetrics.compare` does). Output columns: ``systems``' keys, then
            ``by``'s.

        ``per_query``
            ``True``: one row per query (and ``by`` group) and one column per metric.
            ``False`` (default): one row of means per ``by`` group, with ``num_q``, the
            number of queries averaged.

        ``order``
            ``"rank"``: the ``rank`` column gives positions (1 = top; gaps are allowed and
            are positions holding no document). ``"score"``: ``score`` descending, ties
            broken by ``doc_id`` descending compared as text, as trec_eval does.
            ``"auto"`` (default): ``"rank"`` when the run has a ``rank`` column, else
            ``"score"``. Input row order is never used.

        ``relevance_level``
            A judged document is relevant when its relevance is ``>= relevance_level``
            (trec_eval ``-l``; default 1). Graded metrics (nDCG, DCG) use the relevance
            values themselves. Negative relevance means "in the pool but not judged"
            (trec_eval's convention): neither relevant nor non-relevant, which matters
            for bpref.

        ``depth``
            Keep only ranks ``1..depth`` of each query (trec_eval ``-M``).

        ``judged_only``
            ``True``: remove the run's unjudged documents (no judgment, or a negative
            one) before the positions are given, so the judged ones close up and
            ``num_ret`` counts them (ir_measures' ``judged_only=True``, trec_eval
            ``-J``); default ``False``. A metric name may say it instead,
            ``AP(judged_only=True)``, when every metric of the list does.

        ``unjudged``
            Queries in the run but not in the judgments: ``"drop"`` (default, as
            trec_eval), ``"zero"`` (scored as a query with no relevant document: 0 for
            every quality metric; counted in the mean) or ``"error"``.

        ``unretrieved``
            Queries in the judgments but not in the run: ``"zero"`` (default, as
            trec_eval ``-c`` and ir_measures: scored as an empty ranking, which is 0 for
            every metric but ``rbp_residual`` (1) and ``fcp`` (1/2); counted in the
            mean), ``"drop"`` or ``"error"``.

        ``check_duplicates``
            ``True`` (default): refuse a document listed twice in one query of the run, and two
            documents at one rank, as trec_eval does. These checks keep a set of every
            document id's hash (and rank) per query, about 40 % of the plan's time and of
            its memory on large logs with ranks given (benchmarks/results.md); a query they
            flag is recounted exactly before an error is raised. ``False`` skips
            them for runs known to be clean (straight from a retriever): duplicates among
            *judged* documents, which would change metric values, are still refused; an
            unjudged document listed twice is then counted twice in ``num_ret`` (and, ranked
            by score, pushes the documents below it down).

        ``buckets``
            ``"auto-memory"`` (default): one plan or out of core, chosen from the run's size
            (free for Parquet and DataFrames; other sources run in one plan) and
            ``memory_limit`` (:mod:`polars_irmetrics.ground.auto`). ``None``: one plan over the
            whole input, the fastest path while the log fits in memory (polars streams the
            scan, the join and the counts; the judged rows are held in memory). ``N`` or
            ``"auto"``: out of core, for logs larger than memory
            (:mod:`polars_irmetrics.ground.buckets`): when collected, one streaming pass writes
            the run and the judgments to Parquet in N buckets by a hash of ``query_id``, then
            the buckets are evaluated one after the other by the same plan. Peak memory is
            about one bucket's; every row is read twice; the results are identical to
            ``None``'s. ``"auto"`` makes one bucket per 2 million run rows (counting them is
            free for Parquet, one extra pass otherwise).

        ``spill_dir``
            Folder for the buckets' temporary files (default: the system's temporary
            folder, ``TMPDIR``); they need up to twice the run's Parquet size on disk
            (written uncompressed, for speed) and are removed when the evaluation ends.
            Ignored without ``buckets``.

        ``memory_limit``
            The memory ``buckets="auto-memory"`` may plan for: bytes, or a size such as
            ``"4GiB"``; default half the machine's (or the container's) memory.

        ``explain``
            ``True``: print which plan ``buckets="auto-memory"`` chose and why (it is
            logged at INFO level on the ``polars_irmetrics`` logger in any case).

        ``partitioned_by``
            A column of the run (a hive partition column, such as a hash of the query) whose
            partitions each hold whole queries: out of core, they are then evaluated one
            after the other, each read alone (file pruning), instead of re-writing the run in
            buckets (:mod:`polars_irmetrics.ground.partitions`).

        ``progress``
            A bar of the out-of-core steps (buckets, partitions; for an impression log,
            buckets of sessions) when the result is collected: ``None`` (default) in a
            terminal or a notebook (a Jupyter kernel) only, silent in a pipeline or a
            log; ``True`` on any stream; ``False`` never
            (:mod:`polars_irmetrics.ground.progress`; tqdm's bar with the ``progress``
            extra). One plan has no steps, so it draws nothing.

        ``query_id``, ``doc_id``, ``rank``, ``score``, ``relevance``
            Column names in ``table`` and ``qrels`` (for an impression log, ``query_id`` is
            its session and ``rank`` its position).

        ``label``, ``prediction``, ``sample_weight``
            Prediction metrics: the columns of the label (0/1, the positive label, or a
            rating), the prediction (a probability or score, or a rating) and optional
            non-negative row weights. ``query_id`` groups rows into queries (users) for
            ``gauc`` and ``per_query=True``.

        ``positive_label``
            Prediction metrics: the label value of a positive row (default 1); other labels
            must be 0 (a text label: one other value).

        ``unmatched``
            Prediction metrics with ``labels``: a pair with a prediction but no label, or a
            label but no prediction, is an error (``"error"``, default; the message counts
            them on each side) or left out (``"drop"``, Recommenders' inner merge).

        ``clicked``, ``dwell``, ``converted``, ``timestamp``
            Column names of an impression log, for the click metrics
            (:func:`~polars_irmetrics.evaluate_online`).

        ``unseen_items``, ``features``
            Beyond-accuracy metrics: what a recommended item the interactions (or
            ``item_features``) never saw does (``"error"``, default; ``"drop"``; or
            ``"recommenders"``, Microsoft Recommenders' convention), and the item
            features' vector column; as :func:`~polars_irmetrics.beyond_accuracy` takes them.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        A LazyFrame for a LazyFrame ``run``, with nothing computed before
        ``collect()``; a DataFrame for any other kind of table. With
        ``buckets="auto-memory"``, the run's rows are counted only where that is free
        (Parquet footers, in-memory frames).

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError
        A missing column or one of the wrong dtype (found when the plan is built); a
        ``run`` or ``qrels`` that is not a table of a kind listed above.
    InvalidValueError, DuplicateError
        Null ids or relevance, NaN or null scores, ranks below 1, duplicate ranks, a
        document twice in one query, a NaN or infinite label or one of magnitude 2**32
        or more, whatever the metrics asked for; a label whose metric terms reach 2**32
        (32 or more with ``gain='exponential'``: more than the exact fixed-point sums
        hold), for the metrics that sum such terms (found when the plan runs). Scores
        of ``inf`` and ``-inf`` are ranked as they are, as trec_eval does.
    QuerySetError
        Queries on one side only, under an ``"error"`` policy.
    UnknownMetricError, MetricParameterError
        A metric name the registry does not know, or a bad cutoff.

    Examples
    --------
    Two queries; ``q2`` has no relevant document, so its metrics are 0 and count in
    the mean:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> run = pl.DataFrame({
    ...     "query_id": ["q1", "q1", "q1", "q2", "q2"],
    ...     "doc_id": ["a", "b", "c", "a", "d"],
    ...     "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    ... })
    >>> qrels = pl.DataFrame({
    ...     "query_id": ["q1", "q1", "q2"],
    ...     "doc_id": ["b", "x", "d"],
    ...     "relevance": [1, 2, 0],
    ... })
    >>> irm.evaluate(run, ["P@2", "recall@3", "mrr"], qrels=qrels, per_query=True)
    shape: (2, 4)
    ┌──────────┬─────┬──────────┬─────┐
    │ query_id ┆ P@2 ┆ recall@3 ┆ mrr │
    │ ---      ┆ --- ┆ ---      ┆ --- │
    │ str      ┆ f64 ┆ f64      ┆ f64 │
    ╞══════════╪═════╪══════════╪═════╡
    │ q1       ┆ 0.5 ┆ 0.5      ┆ 0.5 │
    │ q2       ┆ 0.0 ┆ 0.0      ┆ 0.0 │
    └──────────┴─────┴──────────┴─────┘
    >>> irm.evaluate(run, ["P@2", "mrr"], qrels=qrels)
    shape: (1, 3)
    ┌───────┬──────┬──────┐
    │ num_q ┆ P@2  ┆ mrr  │
    │ ---   ┆ ---  ┆ ---  │
    │ i64   ┆ f64  ┆ f64  │
    ╞═══════╪══════╪══════╡
    │ 2     ┆ 0.25 ┆ 0.25 │
    └───────┴──────┴──────┘
    """
    frame = as_polars(table, "run")
    eager = isinstance(frame, pl.DataFrame)
    tables = {
        name: None if t is None else as_polars(t, name).lazy()
        for name, t in (
            ("qrels", qrels),
            ("queries", queries),
            ("interactions", interactions),
            ("item_features", item_features),
            ("prefs", prefs),
            ("qrels_jg", qrels_jg),
            ("labels", labels),
            ("neighbors", neighbors),
        )
    }
    built = EvalOptions.build(**options)
    plan = evaluate_plan(frame.lazy(), parse_metric_list(metrics), tables, built)
    return collect_guarded(plan) if eager else plan


def evaluate_plan(
    table: pl.LazyFrame,
    requests: Requests,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
) -> pl.LazyFrame:
    """:func:`evaluate`'s lazy plan from parsed metrics, tables and checked options."""
    columns = {
        "query_id": options.query_id,
        "doc_id": options.doc_id,
        "rank": options.rank,
        "score": options.score,
    }
    # list-shaped run and judgments (one row per query) in the long form
    table = long_run(table, **columns, relevance=options.relevance)
    tables = dict(tables)
    listed = tables.get("qrels")
    if listed is not None:
        tables["qrels"] = long_judgments(
            listed,
            query_id=options.query_id,
            doc_id=options.doc_id,
            relevance=options.relevance,
        )
    check_inputs(
        requests,
        {
            "interactions": tables.get("interactions"),
            "item_features": tables.get("item_features"),
            "prefs": tables.get("prefs"),
            "judgment_groups": tables.get("qrels_jg"),
            "neighbors": tables.get("neighbors"),
        },
    )
    routes = _routes(requests)
    qrels, queries = tables.get("qrels"), tables.get("queries")
    if "neighbors" in routes:
        exact = tables.get("neighbors")
        if exact is None:  # refused by check_inputs above, with the metric's name
            raise MetricParameterError("neighbour recall needs neighbors=...")
        exact = long_run(exact, **columns)
        return build_neighbors_plan(table, exact, routes["neighbors"], options)
    if tables.get("neighbors") is not None:
        raise MetricParameterError(
            "neighbors= holds the exact nearest neighbours of neighbor_recall@k and "
            "neighbor_recall_rel@k, and no metric asked for reads them: drop neighbors=, or "
            "ask for one of them (in a call of its own)"
        )
    if "prediction" in routes:
        for name, given in tables.items():
            if given is not None and name != "labels":  # nothing ignored silently
                raise InvalidValueError(
                    f"{name}= is not read by prediction metrics (auc, logloss, rmse...): the "
                    "table holds the label= and prediction= columns, or labels= the true "
                    f"labels; drop {name}="
                )
        return build_prediction_plan(table, routes["prediction"], options, tables.get("labels"))
    if tables.get("labels") is not None:
        raise MetricParameterError(
            "labels= holds the true labels of prediction metrics (auc, logloss, rmse...), "
            "and no metric asked for reads them: drop labels=, or use qrels= for judgments"
        )
    if "online" in routes:
        return _online(table, routes["online"], options)
    if "prefs" in routes or "jg" in routes:
        if options.by_keys:
            raise InvalidValueError(
                "by= and systems= are not available for the preference and judgment-group "
                "measures; evaluate each group's rows in a call of its own"
            )
        if "prefs" in routes:
            per_query = build_prefs_plan(table, routes["prefs"], tables["prefs"], options)
        else:
            per_query = build_jg_plan(table, routes["jg"], tables["qrels_jg"], options)
        if options.per_query:
            return per_query
        return _means(per_query, routes.get("prefs") or routes["jg"])
    interactions = tables.get("interactions")
    if "recsys" not in routes:
        return _offline(table, routes["offline"], qrels, options, queries, interactions)
    accuracy = routes.get("offline")
    means = _offline(table, accuracy, qrels, options, queries, interactions) if accuracy else None
    return with_beyond_accuracy(
        means,
        table,
        routes["recsys"],
        interactions,
        tables.get("item_features"),
        options,
    )


def _offline(
    table: pl.LazyFrame,
    requests: Requests,
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    queries: pl.LazyFrame | None,
    interactions: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """The offline plan; with RecTools' catalogue metrics (``reco_accuracy``, ``mcc``:
    :data:`~polars_irmetrics.metrics.rectools.CATALOGUE_FORMULAS`), each user's tp
    (``num_rel_ret@k``) and liked (``num_rel``) come from the per-query plan, and the
    formula reads them beside the catalogue size, the distinct items of the
    interactions (a one-row frame joined across: nothing collected). RecTools'
    ``covered_users@k`` reads whether the run ranks a document of the query at or above
    ``k``, unjudged ones too, which the judged rows of the per-query plan do not show:
    a group-by of the run, joined on the query keys."""
    special = set(CATALOGUE_FORMULAS) | {COVERED_USERS}
    wanted = [(label, r) for label, r in requests if r.metric.name in special]
    if not wanted or (
        interactions is None and any(r.metric.name != COVERED_USERS for _, r in wanted)
    ):
        # (mcc or reco_accuracy without interactions: check_inputs has refused them)
        return build_plan(table, requests, qrels, options, queries=queries)
    helpers: Requests = []
    formulas: list[pl.Expr] = []
    covered: list[tuple[str, int]] = []
    catalogue = pl.col(_CATALOGUE).cast(pl.Float64)
    for i, (label, request) in enumerate(wanted):
        k = request.k if request.k is not None else 0  # the parser requires k
        if request.metric.name == COVERED_USERS:
            covered.append((f"{INTERNAL}covered{i}", k))
            formulas.append(pl.col(covered[-1][0]).fill_null(False).cast(pl.Float64).alias(label))
            continue
        tp, liked = f"{INTERNAL}tp{i}", f"{INTERNAL}liked{i}"
        helpers.append((tp, replace(request, metric=_NUM_REL_RET, options=(), aggregate=None)))
        helpers.append(
            (liked, replace(request, metric=_NUM_REL, options=(), k=None, aggregate=None))
        )
        formula = CATALOGUE_FORMULAS[request.metric.name]
        value = formula(pl.col(tp).cast(pl.Float64), pl.col(liked).cast(pl.Float64), k, catalogue)
        formulas.append(value.alias(label))
    rest = [(label, r) for label, r in requests if r.metric.name not in special]
    if not rest and not helpers:  # the plan still needs one metric to give the queries
        helpers.append(
            (
                f"{INTERNAL}num_rel",
                replace(wanted[0][1], metric=_NUM_REL, k=None, options=(), aggregate=None),
            )
        )
    per_query = build_plan(
        table, [*rest, *helpers], qrels, options.replace(per_query=True), queries=queries
    )
    labels = [label for label, _ in requests]
    schema = per_query.collect_schema()
    keys = [c for c in schema.names() if c not in {h for h, _ in helpers} and c not in labels]
    if interactions is not None and any(r.metric.name in CATALOGUE_FORMULAS for _, r in wanted):
        items = interactions.select(pl.col(options.doc_id).n_unique().alias(_CATALOGUE))
        per_query = per_query.join(items, how="cross", maintain_order="left_right")
    if covered:
        on = [c for c in keys if c in table.collect_schema().names()]
        per_query = per_query.join(
            _covered(table, covered, on, schema, options),
            on=on,
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
    values = per_query.with_columns(formulas).select(*keys, *labels)
    if options.per_query:
        return values
    by = [c for c in keys if c != options.query_id]
    if by:
        return values.group_by(by, maintain_order=True).agg(means(requests))
    return values.select(means(requests))


def _covered(
    run: pl.LazyFrame,
    covered: list[tuple[str, int]],
    on: list[str],
    schema: pl.Schema,
    options: EvalOptions,
) -> pl.LazyFrame:
    """Per query (its keys ``on``, those the run has): whether a document is ranked at or
    above each ``k``. Ordered by score, positions run 1..n, so any document is; by
    rank, the smallest rank decides."""
    by_rank = options.rank in run.collect_schema().names() and options.order != "score"
    top = pl.col(options.rank).min() if by_rank else pl.lit(1)
    flags = [(top <= k).alias(column) for column, k in covered]
    return (
        run.select(on + ([options.rank] if by_rank else []))
        .with_columns(pl.col(c).cast(schema[c]) for c in on)
        .group_by(on)
        .agg(flags)
    )


def _online(log: pl.LazyFrame, requests: Requests, options: EvalOptions) -> pl.LazyFrame:
    """Click metrics: the table is an impression log, its sessions the queries."""
    if options.systems is not None:
        raise InvalidValueError(
            "systems= is not available for click metrics: an impression log's arms or "
            "systems are segments, by=..."
        )
    columns = LogColumns(
        session_id=options.query_id,
        position=options.rank,
        clicked=options.clicked,
        dwell=options.dwell,
        converted=options.converted,
        timestamp=options.timestamp,
    )
    buckets = options.buckets
    return build_online_plan(
        log,
        requests,
        columns,
        options.attribute_keys,
        per_session=options.per_query,
        buckets=None if buckets == "auto-memory" else buckets,
        spill_dir=options.spill_dir,
        progress=options.progress,
        hint="an impression log's sessions are the queries: name your columns, e.g. "
        "query_id='session_id', rank='position', clicked='click'",
    )


def _means(per_query: pl.LazyFrame, requests: Requests) -> pl.LazyFrame:
    """``num_q`` and each metric's mean over the per-query values."""
    return per_query.select(means(requests))
