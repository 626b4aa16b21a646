"""The door: :func:`evaluate`, every metric of the library through one call.

The metric list is parsed once (:func:`~polars_irmetrics.metrics.registry.parse_metric_list`)
and each metric is routed by the tables it reads (``Metric.route``, decided once from
``Metric.reads`` and ``Metric.level``), as ir_measures routes a measure to the provider
that computes it:

* ``offline``: a run and judgments, or a judged table (:mod:`polars_irmetrics.offline`);
* ``recsys``: a whole recommendation table (``level`` ``"collection"``), with the
  interactions and item features (:mod:`polars_irmetrics.recsys`);
* ``online``: an impression log's clicks (:mod:`polars_irmetrics.online`);
* ``prefs``: preference judgments (:mod:`polars_irmetrics.offline.prefs`);
* ``jg``: judgments with judgment groups (:mod:`polars_irmetrics.offline.jg`);
* ``prediction``: a label and a prediction per row, or predictions beside ``labels=``
  (:mod:`polars_irmetrics.prediction`);
* ``neighbors``: an approximate nearest-neighbour run against the exact one
  (:mod:`polars_irmetrics.vectors`);
* ``ope``: off-policy estimators, a log of logged feedback with the evaluation
  ``policy=`` and a ``reward_model=`` (:mod:`polars_irmetrics.ope`).
* ``exposure``: a (stochastic) run's expected exposure against judgments and optional
  document groups (:mod:`polars_irmetrics.exposure`);
* ``reference``: a run against a reference run, rank similarity
  (:mod:`polars_irmetrics.agreement`).
* ``propensity``: propensity-scored metrics (``ps_precision@k``, ``ps_ndcg@k``), a run
  and judgments with ``propensities=`` (:mod:`polars_irmetrics.offline.propensity`;
  out of core: :mod:`polars_irmetrics.offline.ps_parts`).

A run or judgments whose ``doc_id`` is a ``List`` (one row per query) are turned into
the long form first (:mod:`polars_irmetrics.ground.lists`), inside the plan.

A metric whose table was not given is refused by one message, written once
(:func:`~polars_irmetrics.metrics.registry.check_inputs`), naming the keyword to pass.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

import polars as pl

from polars_irmetrics.agreement.parts import build_agreement
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.exposure.coverage import AWRF_MEASURES, refuse_unread_group_columns
from polars_irmetrics.exposure.parts import exposure_in_buckets, split_exposure
from polars_irmetrics.exposure.plan import build_exposure_plan, refuse_unplaced
from polars_irmetrics.ground.buckets import collect_guarded, eager_engine
from polars_irmetrics.ground.facts import SharedFacts, SharedIds
from polars_irmetrics.ground.inputs import ArrowStreamExportable, FrameInput, as_polars
from polars_irmetrics.ground.lists import long_judgments, long_run, ranked_by
from polars_irmetrics.ground.options import (
    READ_BY,
    EvalKwargs,
    EvalOptions,
    check_named_columns,
    check_read,
    metrics_named,
    refuse_result_keys,
)
from polars_irmetrics.ground.validate import (
    SYSTEM_TALLIES,
    judged_tally,
    rank_against,
    system_tallies,
    tally_counts,
    warn_on_judged,
    with_common_keys,
    with_group_check,
    with_tally,
)
from polars_irmetrics.ground.warning_order import HeldWarnings, flushed, holding
from polars_irmetrics.metrics.parser import writes_aggregate
from polars_irmetrics.metrics.rectools import CATALOGUE_FORMULAS
from polars_irmetrics.metrics.registry import (
    INPUTS,
    MetricRequest,
    check_inputs,
    labels_by_route,
    means,
    parse_metric_list,
    split_routes,
)
from polars_irmetrics.metrics.spec import JOINABLE, Route
from polars_irmetrics.offline.attributes import with_query_attributes
from polars_irmetrics.offline.catalogue import build_offline_plan, reads_run_facts
from polars_irmetrics.offline.coverage import (
    CoverageSink,
    judged_coverage,
    judged_docs,
    judged_hints,
    judged_partly,
    with_groups,
)
from polars_irmetrics.offline.jg import build_jg_plan
from polars_irmetrics.offline.prefs import build_prefs_plan
from polars_irmetrics.offline.ps_parts import propensity_plan
from polars_irmetrics.online.columns import LogColumns
from polars_irmetrics.online.evaluate import build_online_plan
from polars_irmetrics.online.sessions import ensure_click_metrics
from polars_irmetrics.ope.evaluate import build_ope_plan
from polars_irmetrics.ope.parts import OpeTables, in_buckets, ope_in_buckets
from polars_irmetrics.prediction.evaluate import build_prediction_plan, check_keys_read
from polars_irmetrics.recsys.evaluate import with_beyond_accuracy
from polars_irmetrics.vectors.neighbors import build_neighbors_plan

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "Parsed",
    "evaluate",
    "evaluate_plan",
    "evaluate_tables",
    "refuse_keys_beside_recsys",
]

Requests = list[tuple[str, MetricRequest]]


@dataclass(frozen=True)
class Parsed:
    """Metrics a door has parsed already (its ``(label, request)`` pairs): given to
    :func:`evaluate_tables` in place of the strings, so that nothing parses them again."""

    requests: Requests


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
    policy: FrameInput | None = ...,
    reward_model: FrameInput | None = ...,
    reference: FrameInput | None = ...,
    propensities: FrameInput | None = ...,
    groups: FrameInput | None = ...,
    target: FrameInput | None = ...,
    user_groups: FrameInput | None = ...,
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
    policy: FrameInput | None = ...,
    reward_model: FrameInput | None = ...,
    reference: FrameInput | None = ...,
    propensities: FrameInput | None = ...,
    groups: FrameInput | None = ...,
    target: FrameInput | None = ...,
    user_groups: FrameInput | None = ...,
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
    policy: FrameInput | None = None,
    reward_model: FrameInput | None = None,
    reference: FrameInput | None = None,
    propensities: FrameInput | None = None,
    groups: FrameInput | None = None,
    target: FrameInput | None = None,
    user_groups: FrameInput | None = None,
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
        counts in each of their groups. Read with ``by`` alone; a key the judgments (or
        the judged table) carry themselves is refused, as it would not be read.
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
    reference
        For the rank-similarity metrics (``rbo``, ``jaccard@k``, ``overlap@k``,
        ``kendall_tau@k``, ``tau_ap@k``, ``ktu@k``, ``rbo_repro_eval@k``): the run each
        query's ranking is compared with (:mod:`polars_irmetrics.metrics.agreement`);
        ``by``/``systems`` keys it lacks make it serve every group of ``table``.
    propensities
        For the propensity-scored metrics (``ps_precision@k``, ``ps_ndcg@k``, pyxclib's):
        one row per document (the ``doc_id`` column, e.g.
        :func:`~polars_irmetrics.label_propensity`) or per ``position`` (e.g.
        :func:`~polars_irmetrics.position_bias`: the run is then the logged ranking and
        ``qrels`` its clicks), with its ``propensity`` in (0, 1]
        (:mod:`polars_irmetrics.offline.propensity`).
    groups
        For the expected-exposure measures (``ee_loss``, ``ee_disparity``,
        ``ee_relevance``; :mod:`polars_irmetrics.metrics.fairness`): one row per
        (document, group), the ``doc_id`` column and a ``group`` column (a document may
        be in several groups; any other column is refused, read by no measure); without
        it the measures are per document. ``awrf``,
        ``awrf_ndcg`` and ``rnd``, ``rkl``, ``rrd`` (which read no judgments) need it.
        Elliot's ``item_mad@k`` reads it as its item clusters: one row per item (an item
        in two groups is refused; an item without a row is left out, as Elliot does).
        With ``by``/``systems`` each group's values are those of the run filtered to the
        group alone (a system scored on every judged query; see the fairness guide).
        For ``awrf`` and ``awrf_ndcg`` alone it may instead hold several group columns
        (no ``group``): intersectional groups, one dimension per column.
    target
        For ``awrf`` and ``awrf_ndcg``: the target distribution over groups, one row per
        group (``group``, ``target``; non-negative, summing to 1), or with the query
        column too one distribution per query; with intersectional groups the group
        columns of ``groups``. Without it each query's target is its relevant
        documents' group distribution. A target per query is refused beside ``by``
        and ``systems``.
    user_groups
        For Elliot's ``user_mad@k`` (:mod:`polars_irmetrics.metrics.mad`): the user
        clusters, one row per user, the ``query_id`` column and a ``group`` column (a user
        in two groups is refused; a user without a row is left out, as Elliot does).
    labels
        Prediction metrics (``auc``, ``gauc``, ``logloss``, ``rmse``...: every metric that
        reads ``"predictions"``; see :mod:`polars_irmetrics.prediction`), two-table
        form: the true labels, one row per ``(query_id, doc_id)`` (user, item) with the
        ``label`` column, joined to ``table`` (the predictions) on those keys, as
        Microsoft Recommenders joins ``rating_true`` and ``rating_pred``. Without it,
        ``table`` holds both the ``label`` and the ``prediction`` columns.
    policy, reward_model
        Off-policy estimators (:mod:`polars_irmetrics.metrics.ope`): the evaluation policy,
        one row per ``(round_id[, position], action)`` with its probability in ``prob``
        (summing to 1 over a round's actions), and the reward model, the same keys with
        the estimated expected reward in ``q_hat`` (for ``dm`` and the doubly robust
        estimators). ``table`` is then the log of logged feedback.
    interactions, item_features
        For beyond-accuracy metrics (``catalog_coverage``, ``novelty``,
        ``intra_list_diversity``, ``serendipity``...): the history the recommender
        learned from and the items' feature vectors, with the run's queries as users and
        its documents as items (see :func:`~polars_irmetrics.beyond_accuracy`). Their
        values are joined beside the means; with ``per_query=True``, each user's value
        of the metrics averaged over users beside the query's (the metrics of all rows
        at once, such as coverage, refuse it). A ``by`` key of the run present in
        ``interactions`` is matched too, by every metric that reads them (the
        beyond-accuracy metrics, Elliot's, ``mcc``, ``reco_accuracy``,
        ``serendipity(kind='kotkov')``): each group's values are those of the group
        evaluated alone; otherwise they serve every ``by`` group.
    **options
        The options of the evaluation, the same keywords at every door (typed once
        as :class:`~polars_irmetrics.ground.options.EvalKwargs`, checked once into
        :class:`~polars_irmetrics.EvalOptions`). An option given (a value other than
        its default) that none of the metrics asked for reads is refused, never ignored
        (``sample_weight=`` with a ranking metric, ``features=`` without a
        beyond-accuracy metric...): the table of which metrics read which option is
        :data:`~polars_irmetrics.ground.options.READ_BY`. In a call that mixes the ranking
        metrics with beyond-accuracy metrics or exposure measures, an option the ranking
        metrics read and the others do not is refused too (``depth=``, ``judged_only=``;
        beside the exposure measures that read judgments, ``unjudged='zero'``,
        ``relevance_level=``, ``debias=``, and ``unretrieved='drop'`` with ``systems=``):
        evaluate them in separate calls.

        ``by``
            Attributes of the query (day, market, segment, query length): each combination
            is evaluated apart, and a judged query counts in the group its own value names.
            That value comes from the judgments when they carry the key (the run must
            carry it too: a key of the judgments alone is refused; pass it as
            ``queries``), else from ``queries``, else from the run; a judged query the
            run did not retrieve then has no value, and a group that did not retrieve a
            judged query is refused unless ``unretrieved='drop'`` (the numbers would
            depend on what the key means; with ``systems=`` beside an exposure measure
            that reads the judgments the call refuses ``'drop'``: give each judged
            query its key with ``queries``). A key (of ``by`` or ``systems``) named as a
            column of the result (``num_q``, ``num_rows``, ``num_sessions``, a metric's
            column such as ``'auc'``) is refused: rename it in the table first; so is a
            key, ``query_id=`` or ``doc_id=`` that begins with ``'__'``, the prefix of the
            library's working columns.

        ``systems``
            Keys naming systems or runs (``"system"``, ``"run"``): each group is scored on
            every judged query, a judged query it did not retrieve counting 0 (as
            :func:`~polars_irmetrics.compare` does). Output columns: ``systems``' keys, then
            ``by``'s.

        ``per_query``
            ``True``: one row per query (and ``by`` group) and one column per metric.
            ``False`` (default): one row of means per ``by`` group, with ``num_q``, the
            number of queries averaged. A metric that sets ``agg=`` (``"P(agg='std')@5"``)
            is refused with ``per_query=True``: the per-query values are not summarized.

        ``order``
            ``"rank"``: the ``rank`` column gives positions (1 = top; gaps are allowed and
            are positions holding no document). ``"score"``: ``score`` descending, ties
            broken by ``doc_id`` descending compared as text, as trec_eval does.
            ``"auto"`` (default): ``"rank"`` when the run has a ``rank`` column, else
            ``"score"``. Where the run has both and they order a query differently (a
            document scores lower than one ranked below it), which is meant the data
            cannot say: refused, naming the query; pass ``"rank"`` or ``"score"``
            (which also skips that check, a sort of each query's scores). Input row
            order is never used.

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
            ``AP(judged_only=True)``, when every metric of the list does. With
            ``depth``, the ranking is cut to ``depth`` first and the judged documents
            of that top are kept, as trec_eval ``-J -M`` does: ``depth=2`` over
            unjudged, judged, judged keeps one document.

        ``unjudged``
            Queries in the run but not in the judgments: ``"drop"`` (default, as
            trec_eval), ``"zero"`` (scored as a query with no relevant document: 0 for
            every quality metric; counted in the mean) or ``"error"``.

        ``unretrieved``
            Queries in the judgments but not in the run: ``"zero"`` (default, as
            trec_eval ``-c`` and ir_measures: scored as an empty ranking, which is 0 for
            every metric but ``rbp_residual``, ``rbo(kind='max')`` and
            ``rbo(kind='res')`` (1) and ``fcp`` (1/2); counted in the mean),
            ``"drop"`` or ``"error"``. Beside the ranking metrics, ``"drop"`` leaves such
            queries out of the exposure measures too (which alone score them as empty
            rankings); with ``systems=`` it is refused there (and on Spark and Dask).

        ``check_duplicates``
            ``True`` (default): refuse a document listed twice in one query of the run, and two
            documents at one rank, as trec_eval does. These checks keep a set of every
            document id's hash (and rank) per query, about 40 % of the plan's time and of
            its memory on large logs with ranks given (benchmarks/results.md); a query they
            flag is recounted exactly before an error is raised. ``False`` skips
            them for runs known to be clean (straight from a retriever): duplicates among
            *judged* documents, which would change metric values, are still refused; an
            unjudged document listed twice is then counted twice in ``num_ret`` (and, ranked
            by score, pushes the documents below it down). The beyond-accuracy metrics
            refuse an item listed twice for one user likewise; ``False`` keeps such rows
            there, for RecTools' ``unrepeated_reco``, which measures them.

        ``debias``
            ``None`` (default), or ``irm.Debias(iqr_coef=1.5, random_state=0)``: RecTools'
            ``DebiasConfig``, the judgments' popular items down-sampled before the ranking
            metrics read them: an item whose users (queries) exceed ``int(q3 + iqr_coef
            (q3 - q1))``, the quartiles of the items' user counts, keeps that many of its
            rows, drawn by a hash seeded with ``random_state`` (deterministic; RecTools'
            draw is numpy's, so values equal RecTools' in distribution, not draw by draw:
            :mod:`polars_irmetrics.ground.debias`). RecTools' interactions are its
            positives, so only the relevant rows (``relevance >= relevance_level``) are
            counted and drawn; a judged non-relevant row is kept. Read by the ranking
            metrics of a run and judgments (``qrels=``; a judged table refuses it);
            refused beside any other.

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
            free for Parquet, one extra pass otherwise). Off-policy estimators: the log, the
            policy and the reward model by a hash of ``round_id``, each bucket's exact sums
            merged, the same bits as one plan (``"auto"``: one bucket per 2 million rows of
            the largest table; ``"auto-memory"``: one plan; :mod:`polars_irmetrics.ope.parts`).
            Rank similarity (``reference=``): the run and the reference by a hash of
            ``query_id``, the means over every query's values, the same bits
            (``"auto-memory"``: one plan; :mod:`polars_irmetrics.agreement.parts`). The
            means of per-user values of a recommendation table (``sufficient_reco@k``,
            ``categorical_diversity@k``, ``intra_list_diversity@k``, ``surprisal@k``,
            ``serendipity@k``...): the recommendations by a hash of the user, the
            interactions and item features read whole by each bucket, the same bits;
            so too ``catalog_coverage@k``, ``distributional_coverage@k``,
            ``gini_index@k`` and ``novelty@k``, from each bucket's item counts added up,
            and RePlay's ``novelty(kind='replay')``, the history's users without
            recommendations added once (:mod:`polars_irmetrics.recsys.parts`).

        ``spill_dir``
            Folder for the buckets' temporary files (default: the system's temporary
            folder, ``TMPDIR``); they need up to twice the run's Parquet size on disk
            (written uncompressed, for speed) and are removed when the evaluation ends.
            Refused with ``buckets=None``, which writes none.

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
            buckets (:mod:`polars_irmetrics.ground.partitions`). A query with rows under two
            of its values (in the run, or in the run and the judgments where they carry
            the column) is refused when the plan runs, in one plan as out of core.

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
            them on each side) or left out (``"drop"``, Recommenders' inner merge; a
            :class:`~polars_irmetrics.errors.CoverageWarning` when the pairs on both sides
            are fewer than half of either table's rows: ids that do not line up).

        ``clicked``, ``dwell``, ``converted``, ``timestamp``
            Column names of an impression log, for the click metrics
            (:func:`~polars_irmetrics.evaluate_online`).

        ``unseen_items``, ``features``, ``serendipity_relevance``
            Beyond-accuracy metrics: what a recommended item the interactions (or
            ``item_features``) never saw does (``"error"``, default; ``"drop"``: its
            recommendations are left out of the beyond-accuracy metrics, not of the
            accuracy ones; or ``"recommenders"``, Microsoft Recommenders' convention), the
            item features' vector column, and a column of the run weighting each item's
            serendipity (``None``, default: 1 each; refused without a beyond-accuracy
            metric); as :func:`~polars_irmetrics.beyond_accuracy` takes them (its
            ``relevance``).

        ``jg``
            The judgment-group column of ``qrels_jg`` (default ``"jg"``).

        ``round_id``, ``action``, ``reward``, ``propensity``, ``position``
            Off-policy estimators (``ips``, ``dr``...: every metric that reads
            ``"policy"``; :mod:`polars_irmetrics.ope`): the columns of the log of logged
            feedback (defaults ``round_id``, ``action``, ``reward``, ``pscore``,
            ``position``; the log is position-wise when it has the ``position`` column).

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
        (above 32 with ``gain='exponential'``: more than the exact fixed-point sums
        hold), for the metrics that sum such terms (found when the plan runs). Scores
        of ``inf`` and ``-inf`` are ranked as they are, as trec_eval does. A table
        that none of the metrics asked for reads (``qrels=`` or ``queries=`` beside the
        click metrics, say), refused, never ignored.
    QuerySetError
        Queries on one side only, under an ``"error"`` policy.
    UnknownMetricError, MetricParameterError
        A metric name the registry does not know, or a bad cutoff.

    Warns
    -----
    CoverageWarning
        When the plan is collected, once per run (each system of ``systems``): a run
        that retrieves no judged document, or lists fewer than half of the judged
        queries, with the counts (judged queries, those listed, judged documents
        retrieved) and a hint where the ids match the judgments' only once their
        spelling is ignored (case, spaces, separators, a prefix, leading zeros: ``1``
        against ``q001``), with the fix. Empty judgments are warned about too. The
        values stay trec_eval's (0 for what was not retrieved); an empty run is scored
        (0 on every judged query) and warned about, where trec_eval and ``irm
        evaluate`` refuse an empty file: a step of a pipeline may be empty on purpose.

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
    given = {
        "qrels": qrels,
        "queries": queries,
        "interactions": interactions,
        "item_features": item_features,
        "prefs": prefs,
        "qrels_jg": qrels_jg,
        "labels": labels,
        "neighbors": neighbors,
        "policy": policy,
        "reward_model": reward_model,
        "reference": reference,
        "propensities": propensities,
        "groups": groups,
        "target": target,
        "user_groups": user_groups,
    }
    return evaluate_tables(table, metrics, given, options)


def evaluate_tables(
    table: FrameInput,
    metrics: str | Iterable[str] | Parsed,
    tables: Mapping[str, FrameInput | None],
    options: Mapping[str, Any],
    *,
    route: Route | None = None,
    caller: str = "irm.evaluate",
    table_name: str = "run",
    keywords: Mapping[str, tuple[str, str]] | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """:func:`evaluate` from its tables by keyword (``qrels``, ``interactions``...) and
    its options as a mapping: the one body of every evaluating door
    (:func:`~polars_irmetrics.evaluate_online`, :func:`~polars_irmetrics.beyond_accuracy`,
    :func:`~polars_irmetrics.evaluate_jg`, :func:`~polars_irmetrics.evaluate_prefs`
    translate their keywords and call it). ``metrics``: the strings, parsed here once,
    or a door's :class:`Parsed` requests. ``route`` and ``caller``: see
    :func:`evaluate_plan`; ``table_name``: the first argument's name, in messages;
    ``keywords``: the door's own keywords for ``rank=`` (and ``score=``,
    ``sample_id=``), as :func:`~polars_irmetrics.ground.options.check_named_columns`
    takes them."""
    frame = as_polars(table, table_name)
    given = {name: None if t is None else as_polars(t, name) for name, t in tables.items()}
    lazy = {name: None if t is None else t.lazy() for name, t in given.items()}
    built = EvalOptions.build(**options)
    requests = metrics.requests if isinstance(metrics, Parsed) else parse_metric_list(metrics)
    # an option none of the metrics reads is refused, never ignored
    routes = labels_by_route(requests, route)
    check_read(built, routes, labels=lazy.get("labels") is not None)
    check_ids_read(built, requests, routes, labels=lazy.get("labels") is not None)
    check_level_read(built, requests, route=route)
    _check_key_names(built, [label for label, _ in requests], table_name)
    long = long_run(
        frame.lazy(),
        query_id=built.query_id,
        doc_id=built.doc_id,
        rank=built.rank,
        score=built.score,
        relevance=built.relevance,
    )
    check_named_columns(built, long.collect_schema(), table_name, keywords)
    check_item_options(built, {name for name, table in lazy.items() if table is not None})
    # the plan's warnings held until its end, given in the order its checks are declared
    # (the branches of the plan run in polars' order, which the engines do not share)
    said = HeldWarnings()
    with holding(said):
        plan = evaluate_plan(frame.lazy(), requests, lazy, built, route=route, caller=caller)
    plan = flushed(plan, said)
    if isinstance(frame, pl.LazyFrame):
        return plan
    # a refusal ends the plan before its last step: what it held is not given (which
    # checks ran before the refusal is polars' choice), as on a LazyFrame
    return collect_guarded(plan, eager_engine([frame, *given.values()]))


def check_item_options(options: EvalOptions, tables: Collection[str]) -> None:
    """Refuse the beyond-accuracy options that read a table not given (``tables``: the
    keywords of the tables given): ``unseen_items=`` without ``interactions=`` or
    ``item_features=`` (what it decides is about items they lack), ``features=``
    without ``item_features=`` (the column it names); evaluate's doors and the engines'
    alike.

    >>> check_item_options(EvalOptions.build(unseen_items="drop"), {"qrels"})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: unseen_items='drop' says what becomes of ...
    """
    given = options.given()
    if "unseen_items" in given and not {"interactions", "item_features"} & set(tables):
        raise InvalidValueError(
            f"unseen_items={options.unseen_items!r} says what becomes of a recommended item "
            "that interactions= or item_features= lack, and neither is given, so it would "
            "change nothing: drop unseen_items=, or pass the table that knows the items"
        )
    if "features" in given and "item_features" not in tables:
        raise InvalidValueError(
            f"features={options.features!r} names the vector column of item_features=, and "
            "no item_features= is given: pass item_features=... (one row per item, with "
            "that column), or drop features="
        )


def _check_key_names(options: EvalOptions, labels: list[str], table: str) -> None:
    """Refuse a query id column named as a metric's column (per query, one column would
    hold the query ids and the values at once; the means are computed from that table).

    >>> _check_key_names(EvalOptions.build(query_id="map"), ["map"], "run")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: query_id='map' names the column 'map', ...
    """
    key = options.query_id
    if key in labels:
        raise InvalidValueError(
            f"query_id={key!r} names the column {key!r}, which is also a metric's column of "
            f"the result; rename the key first, e.g. {table}.rename({{{key!r}: "
            f"{key + '_id'!r}}}) (and the other tables alike), and pass query_id={key + '_id'!r}"
        )


#: The routes whose binary metrics read ``relevance_level``.
_LEVELLED = frozenset({"offline", "jg", "propensity"})


def reads_level(requests: Requests) -> bool:
    """Whether a request reads ``relevance_level``: a binary metric (P, recall, map...)
    of a judged route, or a graded one that thresholds on it
    (:attr:`~polars_irmetrics.metrics.spec.Metric.threshold`: Elliot's); a graded one
    (ndcg, dcg, err...) weighs each label as its gain, and one with a level of its own
    (``P(rel=2)@5``) reads that.

    >>> reads_level(parse_metric_list(["ndcg@10", "err"])), reads_level(parse_metric_list(["P@5"]))
    (False, True)
    >>> reads_level(parse_metric_list(["P(rel=2)@5"]))
    False
    """
    return any(
        r.route in _LEVELLED and (r.metric.binary or r.metric.threshold) and r.level is None
        for _, r in requests
    )


def check_ids_read(
    options: EvalOptions,
    requests: Requests,
    routes: Mapping[str, Sequence[str]],
    *,
    labels: bool,
    takes_labels: bool = True,
) -> None:
    """Where every metric asked for is a prediction metric (``routes``: the labels by
    route), refuse ``query_id=`` and ``doc_id=`` that none of them reads
    (:func:`~polars_irmetrics.prediction.evaluate.check_keys_read`): evaluate's check,
    and compare's (which pairs queries by ``query_id``: it passes ``per_query``, and
    takes no ``labels=``, ``takes_labels=False``)."""
    if set(routes) == {"prediction"}:  # which of them read the ids: by metric
        check_keys_read(options, requests, labels=labels, takes_labels=takes_labels)


def check_level_read(
    options: EvalOptions, requests: Requests, *, route: Route | None = None
) -> None:
    """Refuse ``relevance_level=`` where only graded metrics are asked for: the routes
    that read it (:func:`~polars_irmetrics.ground.options.check_read`) read it in their
    binary metrics alone, so it would change nothing; and ``depth=`` and
    ``judged_only=`` where no metric asked for reads a ranking
    (:func:`check_ranking_read`), and ``agg=`` where ``per_query=True`` gives the
    per-query values (:func:`check_summaries_read`). In a call that mixes routes
    (``route``: ``None``, each metric by its own), refuse too an option that some of its
    metrics read and others not (:func:`check_mixed_read`): every door that checks its
    options here (evaluate's, the comparison's, the engines') refuses it alike."""
    check_summaries_read(options, requests)
    if route is None:
        check_mixed_read(options, requests)
    if "relevance_level" in options.given() and not reads_level(requests):
        metrics = metrics_named([label for label, _ in requests])
        raise InvalidValueError(
            f"relevance_level={options.relevance_level!r} is not read by {metrics}: a "
            "graded metric weighs each judged document by its label (its gain), a metric "
            "with a level of its own (P(rel=2)@5) reads that one, and only binary metrics "
            "(P, recall, map, mrr...) read a relevance level; drop relevance_level= (it "
            "would change nothing), or evaluate a binary metric"
        )
    judged = any({"judgments", "judgment_groups"} & set(r.reads) for _, r in requests)
    if "relevance" in options.given() and not judged:  # rnd, rkl, rrd alone
        # the exposure route reads relevance= (check_read) in its measures that read
        # the judgments; rND's family reads none
        metrics = metrics_named([label for label, _ in requests])
        raise InvalidValueError(
            f"relevance={options.relevance!r} names the judgments' relevance column, and "
            f"{metrics} read{'s' if metrics.startswith('metric ') else ''} no judgments "
            "(rnd, rkl and rrd read the run and groups= only): drop relevance= (it would "
            "change nothing), or evaluate a metric that reads judgments"
        )
    check_ranking_read(options, requests)


def check_summaries_read(options: EvalOptions, requests: Requests) -> None:
    """Refuse a metric whose name sets ``agg=`` (``"P(agg='std')@5"``) with
    ``per_query=True``: the per-query values are given as they are, which ``agg=`` does
    not change, so it would be ignored (and the column, named for a summary, would hold
    the values it summarizes). A name that implies a summary (``NumRet``, whose per-query
    values are its counts) is no ``agg=`` of the caller's.

    >>> check_summaries_read(
    ...     EvalOptions.build(per_query=True), parse_metric_list(["P(agg='std')@1"])
    ... )
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric "P(agg='std')@1" summarizes ...
    >>> check_summaries_read(EvalOptions.build(per_query=True), parse_metric_list(["NumRet"]))
    """
    if not options.per_query:
        return
    for label, request in requests:
        if request.aggregate is None or not writes_aggregate(label):
            continue
        plain = replace(request, aggregate=None, ci_level=None).name
        raise MetricParameterError(
            f"metric {label!r} summarizes its per-query values with "
            f"agg={request.aggregate!r}, but per_query=True gives the per-query values "
            "themselves, which agg= does not change, so agg= would be ignored: drop agg= "
            f"(e.g. {plain!r}), or pass per_query=False for the summary"
        )


#: What ``depth=`` and ``judged_only=`` change, which only a metric of a ranking reads
#: (:func:`check_ranking_read`), in a refusal's words.
_RANKING_OPTIONS: Mapping[str, str] = {
    "depth": "the documents within depth=",
    "judged_only": "the ranking closed up on its judged documents",
}


def reads_ranking(requests: Requests, name: str) -> bool:
    """Whether a request reads ``depth=`` or ``judged_only=`` (``name``): a metric of a
    route that reads the option (:data:`~polars_irmetrics.ground.options.READ_BY`)
    that reads the run's ranking
    (:attr:`~polars_irmetrics.metrics.spec.Metric.ranking`), not a count of the
    judgments alone.

    >>> reads_ranking(parse_metric_list(["num_rel", "idcg@10"]), "depth")
    False
    >>> reads_ranking(parse_metric_list(["num_rel", "ndcg@10"]), "judged_only")
    True
    """
    if name == "judged_only":  # without @k, recall or bpref is the same on judged docs
        return any(
            r.route in READ_BY[name] and r.metric.reads_judged_only(r.k) for _, r in requests
        )
    return any(r.route in READ_BY[name] and r.metric.ranking for _, r in requests)


def check_ranking_read(options: EvalOptions, requests: Requests) -> None:
    """Refuse ``depth=`` and ``judged_only=`` where no metric asked for reads a ranking
    (:func:`reads_ranking`): the counts of the judgments or of the queries (num_rel,
    idcg, num_q) and RecTools' covered_users@k are the same with them or without, so
    they would change nothing. Beside one metric that reads them they are taken.

    >>> check_ranking_read(EvalOptions.build(depth=5), parse_metric_list(["ndcg", "num_rel"]))
    >>> check_ranking_read(EvalOptions.build(depth=5), parse_metric_list(["num_rel"]))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: depth=5 is not read by metric 'num_rel': ...
    """
    given = options.given()
    for name, what in _RANKING_OPTIONS.items():
        if name not in given or reads_ranking(requests, name):
            continue
        metrics = metrics_named([label for label, _ in requests])
        if name == "judged_only" and any(r.metric.ranking for _, r in requests):
            raise InvalidValueError(
                f"judged_only={options.judged_only!r} is not read by {metrics}: without a "
                "cutoff @k a metric of the judged documents retrieved (recall, num_rel_ret, "
                "hit_rate, cg) or of their order (bpref, fcp) is the same with the unjudged "
                "documents removed, and a count of the judgments or of the queries (num_rel, "
                "num_q) reads no ranking; only the metrics of a ranking's places (P, ndcg, "
                "map, num_ret, recall@k...) read the ranking closed up on its judged "
                "documents; drop judged_only= (it would change nothing), or evaluate such a "
                "metric"
            )
        raise InvalidValueError(
            f"{name}={getattr(options, name)!r} is not read by {metrics}: a count of the "
            "judgments or of the queries (num_rel, idcg, num_q, prefs_num_prefs_poss) "
            "reads no ranking, RecTools' covered_users@k reads the whole run, and only "
            f"the metrics of a ranking (P, ndcg, map, num_ret...) read {what}; drop "
            f"{name}= (it would change nothing), or evaluate a metric of the ranking"
        )


#: Whether a request reads an option (or leaves it unread), for :data:`_MIXED_UNREAD`.
_Reads = Callable[[MetricRequest], bool]


def _whole_rankings(request: MetricRequest) -> bool:
    """A beyond-accuracy metric or an exposure measure: it reads each ranking whole."""
    return request.route in ("recsys", "exposure")


def _judged_exposure(request: MetricRequest) -> bool:
    """An exposure measure that reads the judgments (not rnd, rkl, rrd)."""
    return request.route == "exposure" and "judgments" in request.reads


def _ranked(request: MetricRequest) -> bool:
    """A ranking metric of a run and judgments (the offline route)."""
    return request.route == "offline"


def _cut(request: MetricRequest) -> bool:
    """A ranking metric of a run and judgments that reads the ranking (not num_rel:
    :func:`reads_ranking`)."""
    return _ranked(request) and request.metric.ranking


def _closed_up(request: MetricRequest) -> bool:
    """A ranking metric that reads ``judged_only`` (not bpref, nor recall without @k:
    :meth:`~polars_irmetrics.metrics.spec.Metric.reads_judged_only`)."""
    return _ranked(request) and request.metric.reads_judged_only(request.k)


def _levelled(request: MetricRequest) -> bool:
    """A ranking metric that reads ``relevance_level`` (:func:`reads_level`)."""
    return reads_level([("", request)])


#: The options that, in a call mixing the ranking metrics with the beyond-accuracy
#: metrics or the exposure measures (the routes one call joins,
#: :data:`~polars_irmetrics.metrics.spec.JOINABLE`), the ranking metrics read and the
#: others do not: each option's readers, the metrics that leave it unread, and why, in
#: a refusal's words (:func:`check_mixed_read`). The options about the judgments alone
#: (``unjudged``, ``unretrieved``, ``relevance_level``, ``debias``) concern only the
#: measures that read judgments; the beyond-accuracy metrics read none.
_MIXED_UNREAD: Mapping[str, tuple[_Reads, _Reads, str]] = {
    "depth": (_cut, _whole_rankings, "read each ranking whole"),
    "judged_only": (
        _closed_up,
        _whole_rankings,
        "read the unjudged documents of each ranking too",
    ),
    "unjudged": (_ranked, _judged_exposure, "leave out a query the judgments lack"),
    "relevance_level": (
        _levelled,
        _judged_exposure,
        "count a document relevant at any relevance above 0",
    ),
    "debias": (_ranked, _judged_exposure, "read the judgments as given"),
}

#: The metrics of a route that leave an option unread, as :func:`_refuse_mixed` names them.
_UNREAD_BY = {"recsys": "the beyond-accuracy metrics", "exposure": "the exposure measures"}


def _refuse_mixed(
    name: str, value: object, requests: Requests, readers: _Reads, unread: _Reads, why: str
) -> None:
    """Refuse ``name=value`` where some of ``requests`` read it (``readers``) and some
    leave it unread (``unread``, for the reason ``why``); nothing where either is none."""
    read = [label for label, r in requests if readers(r)]
    others = [(label, r) for label, r in requests if unread(r)]
    if not read or not others:
        return
    routes = sorted({r.route for _, r in others}, key=list(_UNREAD_BY).index)
    them = ", ".join(repr(label) for label, _ in others)
    raise InvalidValueError(
        f"{name}={value!r} is read by {metrics_named(read)} and not by "
        f"{metrics_named([label for label, _ in others])} "
        f"({' and '.join(_UNREAD_BY[r] for r in routes)} {why}), so one call would apply "
        f"it to some of its metrics and not to the others: evaluate {them} in a separate "
        f"call, without {name}=, or drop {name}="
    )


def check_mixed_read(options: EvalOptions, requests: Requests) -> None:
    """Refuse an option given that, in a call mixing routes, the ranking metrics read
    and the beyond-accuracy metrics or the exposure measures beside them do not
    (:data:`_MIXED_UNREAD`): ``depth=`` would cut ndcg's ranking and not
    catalog_coverage's, ``judged_only=`` close up ndcg's and not ee_loss's. Each
    metric alone refuses what it does not read
    (:func:`~polars_irmetrics.ground.options.check_read`); beside a metric that reads
    it the option was applied to some of the values of one call and not to the others,
    in silence. An ``"error"`` policy is not refused: the whole call refuses what it
    refuses. ``unretrieved='drop'`` is read by the exposure measures beside the ranking
    metrics, except with ``systems=`` (:func:`_check_drop_beside_exposure`).

    >>> check_mixed_read(EvalOptions.build(depth=5), parse_metric_list(["ndcg@10", "map"]))
    >>> check_mixed_read(
    ...     EvalOptions.build(depth=5), parse_metric_list(["ndcg@10", "catalog_coverage@10"])
    ... )
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: depth=5 is read by metric 'ndcg@10' and not ...
    """
    given = options.given()
    for name, (readers, unread, why) in _MIXED_UNREAD.items():
        value = getattr(options, name)
        if name in given and value != "error":
            _refuse_mixed(name, value, requests, readers, unread, why)
    _check_drop_beside_exposure(options, requests)


def refuse_samples_beside(
    columns: Collection[str], requests: Requests, options: EvalOptions
) -> None:
    """Refuse a run of sampled rankings (its ``sample_id=`` column, among the run's
    ``columns``) where the exposure measures share the call with metrics of another
    route: those read one ranking per query, so they would read every sample's documents
    as one ranking (in silence where the samples' documents or scores do not collide).
    Decided on the call's metrics and the run's columns alone: the engines, which split
    such a call in two, give it before splitting it."""
    column = options.sample_id
    if column not in columns:
        return
    exposure = ", ".join(repr(label) for label, r in requests if r.route == "exposure")
    others = ", ".join(repr(label) for label, r in requests if r.route != "exposure")
    raise InvalidValueError(
        f"the run's column {column!r} (sample_id=) holds sampled rankings, each a ranking "
        f"of its own for the exposure measures ({exposure}); the other metrics of the call "
        f"({others}) read one ranking per query, and would read every sample's documents "
        f"as one ranking: evaluate {others} in a separate call, on one ranking per query "
        f"(e.g. run.filter(pl.col({column!r}) == 0).drop({column!r}))"
    )


def _retrieved_judgments(
    run: pl.LazyFrame, tables: Mapping[str, pl.LazyFrame | None], options: EvalOptions
) -> Mapping[str, pl.LazyFrame | None]:
    """``tables`` with the judgments of the queries ``run`` retrieved alone, matched on
    the query and the ``by`` keys both hold, as the ranking metrics match them:
    ``unretrieved='drop'`` for the exposure measures beside the ranking metrics, which
    leave the other judged queries out (the exposure measures alone score such a query
    as an empty ranking). Ids of two dtypes are matched as text, the exposure measures'
    own check then refusing ids of two kinds with its message."""
    qrels = tables.get("qrels")
    if qrels is None or options.system_keys:
        return tables
    run_schema, qrels_schema = run.collect_schema(), qrels.collect_schema()
    keys = [options.query_id]
    keys += [k for k in options.attribute_keys if k in run_schema and k in qrels_schema]
    if any(k not in run_schema or k not in qrels_schema for k in keys):
        return tables  # refused by the exposure measures' checks, with their message
    if all(run_schema[k] == qrels_schema[k] for k in keys):
        retrieved = qrels.join(run.select(keys).unique(), on=keys, how="semi")
    else:
        text = [f"__retrieved_{i}" for i in range(len(keys))]
        cast = [pl.col(k).cast(pl.String).alias(t) for k, t in zip(keys, text, strict=True)]
        ran = run.select(cast).unique()
        retrieved = qrels.with_columns(cast).join(ran, on=text, how="semi").drop(text)
    return {**tables, "qrels": retrieved}


def _check_drop_beside_exposure(options: EvalOptions, requests: Requests) -> None:
    """Refuse ``unretrieved='drop'`` with ``systems=`` beside an exposure measure that
    reads the judgments: it scores each system on every judged query (one it did not
    retrieve as an empty ranking, where the judgments or another system's rows place
    it), and the ranking metrics leave such a query out of that system's values. Without
    ``systems=`` the exposure measures read the retrieved queries' judgments alone
    (:func:`_retrieved_judgments`)."""
    if options.unretrieved != "drop" or not options.system_keys:
        return
    why = "score each system on every judged query, one it did not retrieve as an empty ranking"
    _refuse_mixed("unretrieved", "drop", requests, _ranked, _judged_exposure, why)


def _dropped_offer(options: EvalOptions, requests: Requests) -> EvalOptions:
    """``options`` for the ranking metrics' plan beside the exposure measures of
    ``requests``: with :attr:`~polars_irmetrics.ground.options.EvalOptions.offers_drop`
    ``False`` where :func:`_check_drop_beside_exposure` refuses ``unretrieved='drop'``
    (``systems=`` beside an exposure measure that reads the judgments), so that their
    refusal of a ``by`` key of the run alone does not offer it; that plan sees its own
    metrics alone."""
    if options.system_keys and any(_judged_exposure(r) for _, r in requests):
        return options.replace(offers_drop=False)
    return options


def evaluate_plan(
    table: pl.LazyFrame,
    requests: Requests,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    *,
    route: Route | None = None,
    caller: str = "irm.evaluate",
    warn: bool | CoverageSink = True,
    facts: SharedFacts | None = None,
    ids: SharedIds | None = None,
    counted: frozenset[str] = frozenset(),
) -> pl.LazyFrame:
    """:func:`evaluate`'s lazy plan from parsed metrics, tables and checked options: the
    one plan builder behind every door (the comparison and the engines call it too).

    ``route``: ``None`` routes each metric by :attr:`Metric.route
    <polars_irmetrics.metrics.spec.Metric.route>`; a route sends every metric to that
    wing, which refuses the metrics it does not compute (the doors of one wing:
    ``"online"``, ``"recsys"``), and ``"jg"`` averages any metric over the judgment
    groups (:func:`~polars_irmetrics.evaluate_jg`). ``caller``: the entry point the
    messages name. ``warn``: ``False`` for a part of a larger evaluation (an engine's
    partition, a comparison's empty system), whose coverage is warned about once, by
    the whole; a function to hand an engine's part's coverage to the engine, which adds
    the parts up and warns as one machine does
    (:class:`~polars_irmetrics.offline.coverage.Coverage`; the click metrics' part
    keeps each session's count of clicks instead, a column
    :data:`~polars_irmetrics.online.sessions.CLICKS` the engine takes off and adds up).
    ``facts``: set by this
    function where two routes of one call check the same run (the exposure measures
    beside the accuracy metrics), for the second (its own call, below), and where
    RecTools' metrics beside the ranking plan read its counts per ranking; ``ids``
    likewise, the run's distinct ids every coverage tally counts (:func:`_shared_ids`).
    ``counted``: the side tables whose coverage of the run another route of the call
    warns of (groups=, by the exposure measures beside Elliot's item_mad), which this
    plan does not warn of again: one warning per table per call.
    """
    columns = {
        "query_id": options.query_id,
        "doc_id": options.doc_id,
        "rank": options.rank,
        "score": options.score,
    }
    # list-shaped run and judgments (one row per query) in the long form; a query in two
    # rows of one (system, group) refused by its name
    long = long_run(table, **columns, relevance=options.relevance, keys=options.by_keys)
    if long is not table:  # list-shaped: its ranks may be the lists' positions, said so
        rank = ranked_by(table.collect_schema(), doc_id=options.doc_id, rank=options.rank)
        options = options.replace(rank=rank)
    table = long
    tables = dict(tables)
    listed = tables.get("qrels")
    if listed is not None:
        tables["qrels"] = long_judgments(
            listed,
            query_id=options.query_id,
            doc_id=options.doc_id,
            relevance=options.relevance,
        )
    # a by=/systems= key of one kind in two dtypes (Int32 beside Int64, Categorical
    # beside String) in the run and a table matched on it: one dtype on both, as the ids
    # (two kinds are refused by each route, naming the cast)
    table, tables = with_common_keys(table, tables, options.by_keys)
    if ids is None:
        ids = _shared_ids(table, options, tables, warn)
    if route == "online":  # a door of impression logs: what a metric reads, not its table
        ensure_click_metrics(requests)
    check_inputs(
        requests,
        {
            "interactions": tables.get("interactions"),
            "item_features": tables.get("item_features"),
            "prefs": tables.get("prefs"),
            "judgment_groups": tables.get("qrels_jg"),
            "neighbors": tables.get("neighbors"),
            "policy": tables.get("policy"),
            "reward_model": tables.get("reward_model"),
            "reference": tables.get("reference"),
            "propensities": tables.get("propensities"),
            "user_groups": tables.get("user_groups"),
        },
        caller,
    )
    # the routes that share a call (JOINABLE) read these tables by metric; the others
    # refuse every table they do not read, below
    joinable = all(r.route in JOINABLE for _, r in requests)
    for name in ("interactions", "item_features"):
        unread = not any(name in r.reads for _, r in requests)
        if joinable and unread and tables.get(name) is not None:
            raise MetricParameterError(
                f"{name}= holds {INPUTS[name][0]}, and no metric asked for reads it: drop "
                f"{name}=, or ask for a metric that does (irm.list_metrics() says which)"
            )
    # judgments beside metrics that read none (coverage, data quality): refused, as
    # every other table no metric reads (the exposure route names its own measures)
    exposed = any(r.route == "exposure" for _, r in requests)
    reads_judgments = any("judgments" in r.reads for _, r in requests)
    if joinable and not exposed and not reads_judgments and tables.get("qrels") is not None:
        raise MetricParameterError(
            "qrels= holds the relevance judgments, and no metric asked for reads them ("
            + ", ".join(label for label, _ in requests)
            + "): drop qrels=, or ask for a metric that does (irm.list_metrics() says which)"
        )
    grouped = tables.get("groups")
    if grouped is not None:  # read whole by every measure that reads it
        refuse_unread_group_columns(grouped.collect_schema(), options.doc_id)
    routes = split_routes(requests) if route is None else {route: list(requests)}
    qrels, queries = tables.get("qrels"), tables.get("queries")
    if "recsys" in routes and queries is not None:  # a by= key queries= places: one call?
        refuse_keys_beside_recsys(
            requests,
            table.collect_schema().names(),
            queries.collect_schema().names(),
            options,
            judged=qrels is not None,
        )
    if "ope" in routes:
        return _ope(table, routes["ope"], tables, options)
    if "propensity" in routes:
        return _propensity(table, routes["propensity"], tables, options)
    if tables.get("propensities") is not None:
        raise MetricParameterError(
            "propensities= is read by the propensity-scored metrics (ps_precision@k, "
            "ps_ndcg@k), and no metric asked for reads it: drop propensities=, or ask for "
            "them (in a call of their own)"
        )
    for name in ("policy", "reward_model"):
        if tables.get(name) is not None:
            raise MetricParameterError(
                f"{name}= is read by the off-policy estimators (ips, snips, dm, dr...), "
                f"and no metric asked for reads it: drop {name}=, or ask for them"
            )
    if "neighbors" in routes:
        exact = tables.get("neighbors")
        if exact is None:  # refused by check_inputs above, with the metric's name
            raise MetricParameterError("neighbour recall needs neighbors=...")
        _refuse_other_tables(
            tables,
            ("neighbors",),
            "neighbour recall (neighbor_recall@k, neighbor_recall_rel@k)",
            "it compares the run with the exact neighbours, neighbors=...",
        )
        exact = long_run(exact, **columns, frame="neighbors (neighbors=)")
        asked = routes["neighbors"]
        _refuse_result_keys(options, [*_counted(options, "num_q"), *_labels(asked)], "run")
        return build_neighbors_plan(table, exact, asked, options)
    if tables.get("neighbors") is not None:
        raise MetricParameterError(
            "neighbors= holds the exact nearest neighbours of neighbor_recall@k and "
            "neighbor_recall_rel@k, and no metric asked for reads them: drop neighbors=, or "
            "ask for one of them (in a call of its own)"
        )
    if "exposure" in routes:
        asked = routes.pop("exposure")
        if routes:  # the others read one ranking per query
            refuse_samples_beside(table.collect_schema().names(), requests, options)
        # beside the offline metrics, the counts per ranking both routes' checks read:
        # one group-by of the run for the two
        facts = _shared_facts(table, options, tables) if "offline" in routes else None
        facts = _shared_judged(facts, table, tables, options, asked)
        if facts is not None and ids is not None:  # the run's queries: the facts' rows
            ids = replace(ids, queries=facts.table.select(options.query_id))
        # without them, the exposure measures' own relevant rows and the tally of the
        # judged documents the run retrieves (_judged_coverage): one join of the run
        own = None if "offline" in routes else _own_judged(table, tables, options, asked, warn)
        # unretrieved='drop' beside the ranking metrics: the exposure measures too read
        # the judged queries the run retrieved alone (with systems=, refused at the door)
        dropped = "offline" in routes and options.unretrieved == "drop"
        judged = _retrieved_judgments(table, tables, options) if dropped else tables
        # groups= read by Elliot's item_mad beside too: the exposure measures' warning of
        # the run's documents it lacks is the call's one (it names item_mad's effect)
        clustered = [
            label for label, r in requests if r.route != "exposure" and "groups" in r.reads
        ]
        exposure = _exposure(
            table,
            asked,
            judged,
            options,
            requests,
            warn=warn is True,
            facts=facts if own is None else own,
            ids=ids,
            clustered=clustered,
            own_checks=own is not None,
        )
        if "offline" not in routes:  # the ranking metrics beside warn of it themselves
            exposure = _judged_coverage(
                exposure,
                table,
                asked,
                tables,
                options,
                warn,
                found=None if own is None else own.judged,
            )
        if not routes:
            return exposure
        # the other metrics (offline, recsys) from their own tables, joined by query
        others = [(label, r) for label, r in requests if r.route != "exposure"]
        # groups= stays for the others where Elliot's item_mad reads it, qrels= where
        # one of them reads the judgments (the exposure measures read them here: a
        # beyond-accuracy metric beside, which reads none, refused them as unread)
        only = (
            "target",
            *(() if any("groups" in r.reads for _, r in others) else ("groups",)),
            *(() if any("judgments" in r.reads for _, r in others) else ("qrels",)),
        )
        rest = evaluate_plan(
            table,
            others,
            {k: v for k, v in tables.items() if k not in only},
            _dropped_offer(options, asked),
            caller=caller,
            warn=warn,
            facts=facts,
            ids=ids,
            counted=frozenset({"groups"}) if clustered else frozenset(),
        )
        return _beside(rest, exposure, [label for label, _ in requests], options)
    if tables.get("target") is not None:
        raise MetricParameterError(
            "target= holds the target group distribution awrf and awrf_ndcg read, and "
            "no metric asked for reads it: drop target=, or ask for awrf or awrf_ndcg"
        )
    clusters = any("groups" in r.reads for _, r in requests)  # Elliot's item_mad
    if tables.get("groups") is not None and not clusters:
        raise MetricParameterError(
            "groups= holds the document groups the exposure measures (ee_loss, "
            "ee_disparity, ee_relevance, awrf, awrf_ndcg, rnd, rkl, rrd) and Elliot's "
            "item_mad@k read, and no metric asked for reads them: drop groups=, or ask for "
            "one of them"
        )
    if tables.get("user_groups") is not None and not any(
        "user_groups" in r.reads for _, r in requests
    ):
        raise MetricParameterError(
            "user_groups= holds the user clusters Elliot's user_mad@k reads, and no metric "
            "asked for reads them: drop user_groups=, or ask for user_mad@k"
        )
    if "reference" in routes:
        given = tables.get("reference")
        if given is None:  # refused by check_inputs above, with the metric's name
            raise MetricParameterError("rank similarity needs reference=...")
        _refuse_other_tables(
            tables,
            ("reference",),
            "the rank-similarity metrics (rbo, jaccard@k, kendall_tau@k...)",
            "they compare the run with reference=...",
        )
        ranks = ranked_by(given.collect_schema(), doc_id=options.doc_id, rank=options.rank)
        if ranks is not options.rank:  # its ranks are its lists' positions: said so
            options = options.replace(reference_lists=True)
        # a list-shaped reference in the long form, its messages naming reference=; a
        # query in two rows of one group refused by its name, as the run's
        reference = long_run(
            given, **columns, keys=options.by_keys, frame="reference (reference=)"
        )
        return build_agreement(
            table, reference, routes["reference"], options, warn=warn is not False
        )
    if tables.get("reference") is not None:
        raise MetricParameterError(
            "reference= holds the run that rank-similarity metrics (rbo, jaccard@k, "
            "kendall_tau@k...) compare with, and no metric asked for reads it: drop "
            "reference=, or ask for one of them (in a call of its own)"
        )
    if "prediction" in routes:
        _refuse_other_tables(
            tables,
            ("labels",),
            "prediction metrics (auc, logloss, rmse...)",
            "the table holds the label= and prediction= columns, or labels= the true labels",
        )
        asked = routes["prediction"]
        outputs = ["num_rows"]  # per query too
        for label, request in asked:
            outputs.append(label)
            if request.metric.name == "gauc" and not options.per_query:
                outputs.append(f"{label}_one_class")
        _refuse_result_keys(options, outputs, "predictions")
        key = options.query_id
        if options.per_query and key == "num_rows":  # a metric's label: _check_key_names
            raise InvalidValueError(
                f"query_id={key!r} names the column {key!r}, which is also a column of the "
                "result per query (its rows); rename the key first, e.g. predictions.rename("
                f"{{{key!r}: {key + '_id'!r}}}) (and labels= alike), and pass "
                f"query_id={key + '_id'!r}"
            )
        return build_prediction_plan(
            table, asked, options, tables.get("labels"), warn=warn is True
        )
    if tables.get("labels") is not None:
        raise MetricParameterError(
            "labels= holds the true labels of prediction metrics (auc, logloss, rmse...), "
            "and no metric asked for reads them: drop labels=, or use qrels= for judgments"
        )
    if "online" in routes:
        _refuse_other_tables(
            tables,
            (),
            "click metrics (ctr, click_mrr, abandonment...)",
            "they read the impression log alone, its sessions the queries and its own "
            "columns the by= segments",
        )
        parted = not isinstance(warn, bool)  # an engine's part: its clicks counted there
        return _online(table, routes["online"], options, warn=warn is True, clicks=parted)
    for keyword, route, what in (
        ("prefs", "prefs", "the preference judgments the prefs_* measures"),
        ("qrels_jg", "jg", "the judgment groups the *_avgjg measures"),
    ):
        if tables.get(keyword) is not None and route not in routes:
            raise MetricParameterError(
                f"{keyword}= holds {what} read, and no metric asked for reads it: drop "
                f"{keyword}=, or ask for one of them (in a call of its own)"
            )
    if "prefs" in routes or "jg" in routes:
        _refuse_other_tables(
            tables,
            ("prefs", "qrels_jg"),  # the one another metric reads is refused above
            "the preference and judgment-group measures (prefs_*, *_avgjg)",
            "they read the run and prefs= or qrels_jg=",
        )
        if options.by_keys:
            raise InvalidValueError(
                "by= and systems= are not available for the preference and judgment-group "
                "measures; evaluate each group's rows in a call of its own"
            )
        if "prefs" in routes:
            per_query = build_prefs_plan(table, routes["prefs"], tables["prefs"], options)
        else:
            per_query = build_jg_plan(
                table, routes["jg"], tables["qrels_jg"], options, jg=options.jg
            )
        if options.per_query:
            return per_query
        return _means(per_query, routes.get("prefs") or routes["jg"])
    interactions = tables.get("interactions")
    if facts is None and reads_run_facts(routes.get("offline") or []):
        # RecTools' metrics beside the ranking plan read the counts per ranking too
        # (covered_users, pAUC's last position, Serendipity's users): one group-by of
        # the run for that plan's checks and theirs, whose queries the tallies read
        facts = _shared_facts(table, options, tables)
        if facts is not None and ids is not None:
            ids = replace(ids, queries=facts.table.select(options.query_id))

    def offline(asked: Requests, *, tally: bool = True) -> pl.LazyFrame:
        return build_offline_plan(
            table,
            asked,
            qrels,
            options,
            queries,
            interactions,
            warn=warn,
            groups=tables.get("groups"),
            user_groups=tables.get("user_groups"),
            facts=facts,
            ids=ids,
            tally=tally,
            counted=counted,
        )

    if "recsys" not in routes:
        if options.serendipity_relevance is not None:
            raise InvalidValueError(
                "serendipity_relevance= weights the items of a recommendation table in "
                "serendipity, and no metric asked for is a beyond-accuracy metric: drop "
                "serendipity_relevance="
            )
        return offline(routes["offline"])
    # interactions= is counted (and warned of) once for the call, by the beyond-accuracy
    # plan, for the accuracy metrics beside that read the catalogue's size too
    accuracy = routes.get("offline")
    if not accuracy:  # the ranking metrics read queries= (by= keys), these do not
        check_queries_read(list(routes), queries is not None)
    means = offline(accuracy, tally=False) if accuracy else None
    catalogue = [label for label, r in accuracy or () if r.metric.name in CATALOGUE_FORMULAS]
    # every metric of the plan that reads interactions= (the beyond-accuracy ones, the
    # accuracy ones beside), named by its one warning in the order they were asked
    planned = {label for label, _ in [*routes["recsys"], *(accuracy or ())]}
    ordered = [(label, r) for label, r in requests if label in planned]
    return with_beyond_accuracy(
        means,
        table,
        routes["recsys"],
        interactions,
        tables.get("item_features"),
        options,
        caller=caller,
        tally=warn is True,
        ids=ids,
        catalogue=catalogue,
        readers=[label for label, r in ordered if "interactions" in r.reads],
        history_readers=[label for label, r in ordered if r.reads_histories],
    )


def _counted(options: EvalOptions, count: str) -> list[str]:
    """The result's count column (``num_q``...): none per query, where each row is one."""
    return [] if options.per_query else [count]


def _labels(requests: Requests) -> list[str]:
    return [label for label, _ in requests]


def _refuse_result_keys(options: EvalOptions, taken: Sequence[str], table: str) -> None:
    """Refuse a ``systems=`` or ``by=`` key naming a column of the result (``taken``),
    as the ranking metrics' plan does (:mod:`polars_irmetrics.offline.setup`): polars'
    duplicate-name error otherwise, or the key's values overwritten."""
    refuse_result_keys("systems", options.system_keys, taken, table)
    refuse_result_keys("by", options.attribute_keys, taken, table)


def _online(
    log: pl.LazyFrame,
    requests: Requests,
    options: EvalOptions,
    *,
    warn: bool = True,
    clicks: bool = False,
) -> pl.LazyFrame:
    """Click metrics: the table is an impression log, its sessions the queries;
    ``warn``: whether an empty log, or one of no click, is warned about (not in an
    engine's part, which may hold no session or no click of a log that has some: the
    engine warns for the whole log); ``clicks``: each session's count of clicks kept
    (:data:`~polars_irmetrics.online.sessions.CLICKS`: an engine's part, which hands
    the sum on)."""
    if options.systems is not None:
        raise InvalidValueError(
            "systems= is not available for click metrics: an impression log's arms or "
            "systems are segments, by=..."
        )
    _refuse_result_keys(options, [*_counted(options, "num_sessions"), *_labels(requests)], "log")
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
        warn=warn,
        clicks=clicks,
        hint="an impression log's sessions are the queries: name your columns, e.g. "
        "query_id='session_id', rank='position', clicked='click' ("
        "irm.evaluate_online(log, metrics, session_id=..., position=...) for the first two)",
    )


def _ope(
    log: pl.LazyFrame,
    requests: Requests,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
) -> pl.LazyFrame:
    """Off-policy estimators: the table is a log of logged feedback."""
    _refuse_other_tables(
        tables,
        ("policy", "reward_model"),
        "the off-policy estimators (ips, snips, dm, dr...)",
        "they read the log, policy= and reward_model=",
    )
    policy = tables.get("policy")
    if policy is None:  # refused by check_inputs, with the metric's name
        raise MetricParameterError("off-policy estimators need policy=...")
    if in_buckets(options):  # out of core
        given = OpeTables(log, policy, tables.get("reward_model"))
        return ope_in_buckets(given, requests, options)
    return build_ope_plan(log, requests, policy, tables.get("reward_model"), options)


def _propensity(
    run: pl.LazyFrame,
    requests: Requests,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
) -> pl.LazyFrame:
    """Propensity-scored metrics: a run, its judgments and the propensities."""
    _refuse_other_tables(
        tables,
        ("qrels", "propensities"),
        "the propensity-scored metrics (ps_precision@k, ps_ndcg@k)",
        "they read the run, qrels= and propensities=",
    )
    propensities = tables.get("propensities")
    if propensities is None:  # refused by check_inputs, with the metric's name
        raise MetricParameterError("propensity-scored metrics need propensities=...")
    return propensity_plan(run, requests, tables.get("qrels"), propensities, options)


def _exposure(
    run: pl.LazyFrame,
    exposure: Requests,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    requests: Requests,
    *,
    warn: bool = True,
    facts: SharedFacts | None = None,
    ids: SharedIds | None = None,
    clustered: Sequence[str] = (),
    own_checks: bool = False,
) -> pl.LazyFrame:
    """The exposure measures' plan; ``requests``: every metric of the call (the others'
    tables are theirs to check, the judgments read by any of them are not refused).
    ``warn``: whether it warns of groups= ids the run's documents lack (an engine's part
    does not: the engine tallies the whole run); ``facts``: :func:`_shared_facts`', or
    (``own_checks``) :func:`_own_judged`'; ``ids``: :func:`_shared_ids`'; ``clustered``:
    the labels of item_mad beside, which read groups= too (the warning names them)."""
    mixed = len(exposure) < len(requests)
    attributes = ("queries",) if options.attribute_keys else ()
    _refuse_other_tables(
        tables,
        ("qrels", "groups", "target", *(_JOINED_TABLES if mixed else attributes)),
        "the exposure measures (ee_loss, ee_disparity, ee_relevance, awrf, awrf_ndcg)",
        "they read the run, qrels=, groups= and (awrf) target=",
    )
    qrels = tables.get("qrels")
    queries = tables.get("queries")
    from_queries: tuple[str, ...] = ()
    placed: tuple[str, ...] = ()  # the keys the run takes from queries=
    if queries is not None and options.attribute_keys:  # the by= keys of each query
        given = run.collect_schema()
        run, qrels, from_queries = with_query_attributes(run, qrels, queries, options)
        placed = tuple(k for k in from_queries if k not in given)
    judged = any("judgments" in r.reads for _, r in exposure)
    if qrels is not None and not any("judgments" in r.reads for _, r in requests):
        raise MetricParameterError(
            "rnd, rkl and rrd read the run and groups= only, and no metric asked for "
            "reads the judgments: drop qrels="
        )
    if qrels is None and judged:
        raise MetricParameterError(
            "the expected-exposure measures read relevance judgments: pass qrels=..."
        )
    if tables.get("target") is not None and not any(
        r.metric.name in AWRF_MEASURES for _, r in exposure
    ):
        raise MetricParameterError(
            "target= holds the target group distribution awrf and awrf_ndcg read, and "
            "no metric asked for reads it: drop target=, or ask for awrf or awrf_ndcg"
        )
    # a query queries= lacks, and a judged query some group lacks with a by= key of the
    # run alone: refused, as the ranking metrics refuse them (not put in a group of no
    # key, nor left out of the group it may belong to); the ranking metrics beside
    # refuse the latter themselves, counting every judged query (here: the relevant's).
    # Read by the plan before its warnings: a refused input warns of nothing
    beside = any(r.route == "offline" for _, r in requests)
    refuse = functools.partial(
        refuse_unplaced,
        run=run,
        qrels=qrels if judged else None,
        requests=exposure,
        options=options,
        from_queries=from_queries,
        drop=None if beside else False,
    )
    # in buckets, each bucket counts its own rankings: the shared counts are not read
    build = (
        exposure_in_buckets
        if split_exposure(options)
        else functools.partial(build_exposure_plan, facts=facts, ids=ids, own_checks=own_checks)
    )
    return build(
        run,
        qrels if judged else None,
        tables.get("groups"),
        exposure,
        options,
        target=tables.get("target"),
        warn=warn,
        clustered=clustered,
        placed=placed,
        refuse=refuse,
    )


#: What the exposure measures score where a run retrieves no judged document: not 0.
_EXPOSED = (
    "no relevant document is exposed on any judged query, and the exposure measures "
    "score each as a ranking without one (ee_relevance 0; not 0 for ee_loss and "
    "ee_disparity)"
)


#: What the exposure measures score on a judged query where the run retrieves no judged
#: document (its documents there spelt apart from the judged ones: _judged_coverage).
_BLIND_EXPOSED = (
    "as a ranking that exposes no relevant document does (ee_relevance 0, awrf_ndcg 0; "
    "not 0 for ee_loss)"
)


#: What the exposure measures score on a judged query of a group the run lacks.
_GROUP_EXPOSED = (
    "is a ranking of no document: the expected-exposure measures score it as one that "
    "exposes no relevant document (ee_relevance 0; not 0 for ee_loss and ee_disparity), "
    "and awrf and awrf_ndcg give it no value"
)


def _judged_coverage(
    plan: pl.LazyFrame,
    run: pl.LazyFrame,
    exposure: Requests,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    warn: bool | CoverageSink,
    *,
    found: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """``plan`` (the exposure measures') warning, as the ranking metrics warn, of a run
    that retrieves no judged document (the judgments read by a measure): here, or
    handed to an engine's ``warn`` sink as the part's coverage, which the engine adds
    up (:func:`~polars_irmetrics.ground.validate.judged_tally`, counted over the whole
    run: every bucket's). With ``systems=``, one tally per system, each named.
    ``found``: the run's rows joined with the judgments (:func:`_own_judged`), which
    the tally reads the documents found from, where the plan reads them too."""
    qrels = tables.get("qrels")
    judged = any("judgments" in r.reads for _, r in exposure)
    systems = list(options.system_keys)
    if qrels is None or not judged or warn is False:
        return plan
    query_id, doc_id = options.query_id, options.doc_id
    unretrieved = options.unretrieved
    grouped = [k for k in options.by_keys if k in qrels.collect_schema()]
    if grouped and warn is True:  # judgments per group: a group one side lacks, named
        plan = with_group_check(
            plan,
            run,
            qrels,
            grouped,
            system_keys=systems,
            unjudged=options.unjudged,
            unretrieved=unretrieved,
            judged_fate=_GROUP_EXPOSED,
        )
    if systems and warn is True:  # each system's tally, in one row; the ranking metrics' hints
        hints = judged_hints(run, qrels, query_id, doc_id)
        docs = judged_docs(run, qrels, query_id, doc_id, systems)
        partly = judged_partly(run, qrels, query_id, doc_id, systems)
        counts = system_tallies(judged_tally(run, qrels, query_id, doc_id, by=systems))

        def say(row: Mapping[str, Any]) -> None:
            warn_on_judged(
                row,
                unretrieved,
                hints,
                systems=systems,
                scores=_EXPOSED,
                docs=docs,
                blind_scores=_BLIND_EXPOSED,
                partly=partly,
            )

        return with_tally(plan, counts, say)
    if systems and not isinstance(warn, bool):  # an engine's part, handed to its sink
        return _judged_parts(plan, run, qrels, options, warn, grouped)
    counts = judged_tally(run, qrels, query_id, doc_id, found=found)
    if warn is True:  # with the ranking metrics' hints (case, a prefix), on its path only
        hints = judged_hints(run, qrels, query_id, doc_id)
        # and the judged queries where it retrieves no judged document, their documents
        # spelt apart: read only where such a query is
        docs = judged_docs(run, qrels, query_id, doc_id)
        # and the judged queries where it retrieves some judged documents but not all,
        # its other documents there spelt apart
        partly = judged_partly(run, qrels, query_id, doc_id)

        def tell(row: Mapping[str, Any]) -> None:
            warn_on_judged(
                row,
                unretrieved,
                hints,
                scores=_EXPOSED,
                docs=docs,
                blind_scores=_BLIND_EXPOSED,
                partly=partly,
            )

        return with_tally(plan, counts, tell)
    sink = warn

    def hand(row: Mapping[str, Any]) -> None:
        part = judged_coverage(
            tally_counts(row),
            run,
            qrels,
            query_id,
            doc_id,
            unretrieved,
            _EXPOSED,
            _BLIND_EXPOSED,
        )
        # judgments per group: the part's groups, gathered by the engine (as one machine)
        sink(with_groups(part, run, qrels, grouped, options.unjudged, _GROUP_EXPOSED))

    return with_tally(plan, counts, hand)


def _judged_parts(
    plan: pl.LazyFrame,
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    options: EvalOptions,
    sink: CoverageSink,
    grouped: Sequence[str],
) -> pl.LazyFrame:
    """:func:`_judged_coverage` of an engine's part with ``systems=``: each system's
    tally of the part's judged queries (those of its systems), and the part's judged
    queries and documents apart (``totals``), which the engine adds up over every part
    for each system (one machine scores each system on every judged query; a system
    absent from some parts would count fewer); the hints' data per system."""
    query_id, doc_id = options.query_id, options.doc_id
    systems = list(options.system_keys)
    tally = judged_tally(run, qrels, query_id, doc_id, by=systems)
    schema = tally.collect_schema()
    # the judgments' totals: the tally of a run of no row (no semi-join of the run)
    totals = judged_tally(run.clear(), qrels, query_id, doc_id).select("queries", "docs")
    row = pl.concat([system_tallies(tally), totals], how="horizontal")

    def hand(row: Mapping[str, Any]) -> None:
        counts = pl.DataFrame(row[SYSTEM_TALLIES], schema=schema)
        part = judged_coverage(
            counts,
            run,
            qrels,
            query_id,
            doc_id,
            options.unretrieved,
            _EXPOSED,
            _BLIND_EXPOSED,
            systems=systems,
            totals=pl.DataFrame({"queries": [row["queries"]], "docs": [row["docs"]]}),
        )
        sink(with_groups(part, run, qrels, grouped, options.unjudged, _GROUP_EXPOSED))

    return with_tally(plan, row, hand)


def _shared_facts(
    run: pl.LazyFrame, options: EvalOptions, tables: Mapping[str, pl.LazyFrame | None]
) -> SharedFacts | None:
    """The counts per ranking of ``run`` the offline metrics' and the exposure
    measures' checks both read (:class:`~polars_irmetrics.ground.facts.SharedFacts`),
    where both read the run whole, one ranking per query: no sample column, no
    segments, no query attributes, not in partitions; ``None`` elsewhere (each route
    counts its own). A route that evaluates in buckets (its own choice, from the run's
    size) counts its own in each bucket and leaves these unread."""
    schema = run.collect_schema()
    use_rank = options.order == "rank" or (options.order == "auto" and options.rank in schema)
    order = options.rank if use_rank else options.score
    whole = (
        options.sample_id not in schema
        and not options.by_keys
        and tables.get("queries") is None
        and options.partitioned_by is None
        and all(c in schema for c in (options.query_id, options.doc_id, order))
    )
    if not whole:
        return None
    # order='auto' reading the ranks beside a score column: the check of the two
    against = rank_against(schema, options.order, options.rank, options.score)
    ties = not options.check_duplicates
    return SharedFacts.of(run, options.query_id, options.doc_id, order, against, ties=ties)


def _shared_judged(
    facts: SharedFacts | None,
    run: pl.LazyFrame,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    exposure: Requests,
) -> SharedFacts | None:
    """``facts`` with the run's rows joined with the judgments
    (:meth:`~polars_irmetrics.ground.facts.SharedFacts.with_judged`), where the
    accuracy metrics' judged rows and the expected-exposure measures' relevant rows
    are one join (measured on 10M rows: a join of the whole run, 0.3-0.5 s, made
    once): an exposure measure that reads the judgments (``exposure``), a run ranked
    by its rank column, the ids of one dtype in the run and the judgments (no cast
    either route would make first); ``facts`` as they are elsewhere."""
    qrels = tables.get("qrels")
    if facts is None or qrels is None:
        return facts
    if not any("judgments" in r.reads for _, r in exposure):
        return facts
    schema, judged = run.collect_schema(), qrels.collect_schema()
    if options.order == "score" or facts.order != options.rank:
        return facts
    ids = (options.query_id, options.doc_id)
    if options.relevance not in judged or any(
        c not in judged or c not in schema or judged[c] != schema[c] for c in ids
    ):
        return facts
    return facts.with_judged(run, qrels, options.doc_id, options.relevance)


def _own_judged(
    run: pl.LazyFrame,
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
    exposure: Requests,
    warn: bool | CoverageSink,
) -> SharedFacts | None:
    """The exposure measures' counts per ranking with the run's rows joined with the
    judgments (:func:`_shared_facts`, :func:`_shared_judged`) where no ranking metric
    is beside and the call warns of the judged documents the run retrieves
    (:func:`_judged_coverage`, no ``systems=``): the plan's relevant rows and that
    tally's documents found are then one join of the run, not a join and a semi-join
    (measured on 10M rows: 0.25-0.3 CPU s fewer); ``None`` elsewhere, or where the
    judged rows are not shared (the plan and the tally each read their own)."""
    if warn is not True or options.system_keys:
        return None
    own = _shared_judged(_shared_facts(run, options, tables), run, tables, options, exposure)
    return None if own is None or own.judged is None else own


def _shared_ids(
    run: pl.LazyFrame,
    options: EvalOptions,
    tables: Mapping[str, pl.LazyFrame | None],
    warn: bool | CoverageSink,
) -> SharedIds | None:
    """The run's distinct document and query ids
    (:class:`~polars_irmetrics.ground.facts.SharedIds`), which the coverage tallies of
    every route count (groups=, interactions=, item_features=, Elliot's clusters): one
    pass of the run for them all. Where the call warns (not an engine's part, whose
    engine tallies the whole run), reads the run as given (no queries= attributes) and
    in one piece; ``None`` elsewhere (each tally reads the run)."""
    schema = run.collect_schema()
    if (
        warn is not True
        or tables.get("queries") is not None
        or options.partitioned_by is not None
        or options.query_id not in schema
        or options.doc_id not in schema
    ):
        return None
    return SharedIds.of(run, options.query_id, options.doc_id)


#: The tables of the routes the exposure measures share a call with (offline, recsys).
_JOINED_TABLES = ("queries", "interactions", "item_features", "user_groups")


#: In a call that mixes the exposure measures with accuracy metrics, the exposure
#: measures' own count of queries (:func:`_beside`).
EXPOSURE_COUNT = "num_q_exposure"


def _beside(
    rest: pl.LazyFrame, exposure: pl.LazyFrame, labels: list[str], options: EvalOptions
) -> pl.LazyFrame:
    """The exposure measures' values beside the other routes' (one plan): per query
    joined on the query keys, or the summaries side by side, the metrics in the order
    given. ``num_q`` is the other routes' count of judged queries; beside it,
    ``num_q_exposure`` is the exposure measures' own (their means are over those
    queries, which can be fewer: a judged query the exposure measures cannot score); with
    no accuracy metric, the exposure measures' count is ``num_q``."""
    names = rest.collect_schema().names()
    if options.per_query:
        keys = [*options.by_keys, options.query_id]
        joined = rest.join(
            exposure,
            on=keys,
            how="full",
            coalesce=True,
            nulls_equal=True,
            maintain_order="left_right",
        )
        return joined.select(*keys, *labels)
    both = "num_q" in names
    if both:
        exposure = exposure.rename({"num_q": EXPOSURE_COUNT})
    by = list(options.by_keys)
    if not by:
        joined = pl.concat([rest, exposure], how="horizontal")
    else:  # a group one side has and the other not counts 0 queries there
        joined = rest.join(exposure, on=by, how="full", coalesce=True, nulls_equal=True).sort(by)
    found = joined.collect_schema().names()
    counts = [pl.col(c).fill_null(0) for c in ("num_q", EXPOSURE_COUNT) if c in found]
    return joined.select(*by, *counts, *labels)


def check_queries_read(routes: Collection[str], queries: bool) -> None:
    """Refuse ``queries=`` (``queries``: whether it was given) beside the
    beyond-accuracy metrics with no ranking metric (``routes``: the routes of the
    metrics asked for): they take their ``by=`` keys from the recommendation table's own
    columns. The Spark and Dask engines refuse it with the same words (they accepted it
    and placed the keys).

    Examples
    --------
    >>> check_queries_read(["recsys"], queries=False)
    >>> check_queries_read(["recsys", "offline"], queries=True)
    >>> check_queries_read(["recsys"], queries=True)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: queries= is not read by the beyond-accuracy metrics (novelty@k, catalog_coverage@k, intra_list_diversity@k...): they read the recommendation table, interactions= and item_features=, and the by= keys from its own columns; drop queries=
    """  # noqa: E501
    if queries and "recsys" in routes and "offline" not in routes:
        _refuse_other_tables(
            {"queries": pl.LazyFrame()},
            (),
            "the beyond-accuracy metrics (novelty@k, catalog_coverage@k, "
            "intra_list_diversity@k...)",
            "they read the recommendation table, interactions= and item_features=, and "
            "the by= keys from its own columns",
        )


def refuse_keys_beside_recsys(
    requests: Requests,
    run: Collection[str],
    queries: Collection[str] | None,
    options: EvalOptions,
    *,
    judged: bool = False,
) -> None:
    """Refuse a ``by`` key that ``queries=`` places (a column of ``queries``, not of
    ``run``: the columns of each; ``judged``: whether judgments were given, which the
    fix names too) in a call that asks for the beyond-accuracy metrics
    beside the ranking metrics or the exposure measures: those read the key from
    ``queries=``, the beyond-accuracy metrics from the recommendation table's own columns
    (alone they refuse ``queries=``: :func:`check_queries_read`), so one call could not
    group both by it (the beyond-accuracy part raised a missing column, or refused
    ``queries=`` that the others read). The Spark and Dask engines refuse it with the
    same words.

    Examples
    --------
    >>> asked = parse_metric_list(["surprisal@2", "ndcg@2"])
    >>> options = EvalOptions.build(by="day")
    >>> refuse_keys_beside_recsys(asked, ["query_id", "doc_id", "day"], None, options)
    >>> refuse_keys_beside_recsys(asked, ["query_id", "doc_id"], ["query_id", "day"], options)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by='day' is a column of queries=, not of the run: ...
    """  # noqa: E501
    if queries is None:
        return
    placed = [k for k in options.attribute_keys if k not in run and k in queries]
    beyond = [label for label, r in requests if r.route == "recsys"]
    readers = [label for label, r in requests if r.route in ("offline", "exposure")]
    if not placed or not beyond or not readers:
        return
    key = placed[0]
    them = ", ".join(repr(label) for label in beyond)
    raise InvalidValueError(
        f"by={key!r} is a column of queries=, not of the run: {metrics_named(readers)} "
        f"{'reads' if len(readers) == 1 else 'read'} the by= keys from queries=, and the "
        f"beyond-accuracy metrics ({them}) do not "
        "(they read them from the recommendation table's own columns), so one call cannot "
        f"group both by it: put the key in the run{' and the judgments' if judged else ''} "
        f"first, e.g. run.join(queries, on={options.query_id!r}, how='left')"
        f"{' (and qrels= alike)' if judged else ''}, and drop queries=, or evaluate {them} "
        f"in a separate call without by={key!r}"
    )


def _refuse_other_tables(
    tables: Mapping[str, pl.LazyFrame | None], reads: tuple[str, ...], metrics: str, why: str
) -> None:
    """Refuse a table given beside a route that reads only ``reads`` (nothing ignored
    silently): ``metrics`` names the route's metrics, ``why`` what they read instead."""
    for name, given in tables.items():
        if given is not None and name not in reads:
            raise InvalidValueError(f"{name}= is not read by {metrics}: {why}; drop {name}=")


def _means(per_query: pl.LazyFrame, requests: Requests) -> pl.LazyFrame:
    """``num_q`` and each metric's mean over the per-query values."""
    return per_query.select(means(requests))
