"""The door: :func:`evaluate`, every metric of the library through one call.

The metric list is parsed once (:func:`~polars_irmetrics.metrics.registry.parse_metric_list`)
and each metric is routed by the tables it reads (``Metric.reads``, ``Metric.level``) to
the wing that computes it: the offline plan of a run and judgments
(:mod:`polars_irmetrics.offline`), beyond-accuracy metrics of a recommendation table
(:mod:`polars_irmetrics.recsys`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import overload

import polars as pl

from polars_irmetrics.ground.buckets import Buckets, collect_guarded
from polars_irmetrics.ground.inputs import ArrowStreamExportable, FrameInput, as_polars
from polars_irmetrics.ground.options import EvalOptions, Order
from polars_irmetrics.ground.validate import Policy
from polars_irmetrics.offline.plan import build_plan
from polars_irmetrics.recsys.evaluate import split_metrics, with_beyond_accuracy

__all__ = ["evaluate"]


@overload
def evaluate(
    run: pl.DataFrame,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = ...,
    interactions: FrameInput | None = ...,
    item_features: FrameInput | None = ...,
    by: str | Sequence[str] | None = ...,
    per_query: bool = ...,
    order: Order = ...,
    relevance_level: float = ...,
    depth: int | None = ...,
    unjudged: Policy = ...,
    unretrieved: Policy = ...,
    check_duplicates: bool = ...,
    buckets: Buckets = ...,
    spill_dir: str | Path | None = ...,
    memory_limit: int | str | None = ...,
    explain: bool = ...,
    partitioned_by: str | None = ...,
    query_id: str = ...,
    doc_id: str = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str = ...,
) -> pl.DataFrame: ...


@overload
def evaluate(
    run: pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = ...,
    interactions: FrameInput | None = ...,
    item_features: FrameInput | None = ...,
    by: str | Sequence[str] | None = ...,
    per_query: bool = ...,
    order: Order = ...,
    relevance_level: float = ...,
    depth: int | None = ...,
    unjudged: Policy = ...,
    unretrieved: Policy = ...,
    check_duplicates: bool = ...,
    buckets: Buckets = ...,
    spill_dir: str | Path | None = ...,
    memory_limit: int | str | None = ...,
    explain: bool = ...,
    partitioned_by: str | None = ...,
    query_id: str = ...,
    doc_id: str = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str = ...,
) -> pl.LazyFrame: ...


@overload
def evaluate(
    run: ArrowStreamExportable,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = ...,
    interactions: FrameInput | None = ...,
    item_features: FrameInput | None = ...,
    by: str | Sequence[str] | None = ...,
    per_query: bool = ...,
    order: Order = ...,
    relevance_level: float = ...,
    depth: int | None = ...,
    unjudged: Policy = ...,
    unretrieved: Policy = ...,
    check_duplicates: bool = ...,
    buckets: Buckets = ...,
    spill_dir: str | Path | None = ...,
    memory_limit: int | str | None = ...,
    explain: bool = ...,
    partitioned_by: str | None = ...,
    query_id: str = ...,
    doc_id: str = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str = ...,
) -> pl.DataFrame: ...


def evaluate(
    run: FrameInput,
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput | None = None,
    interactions: FrameInput | None = None,
    item_features: FrameInput | None = None,
    by: str | Sequence[str] | None = None,
    per_query: bool = False,
    order: Order = "auto",
    relevance_level: float = 1,
    depth: int | None = None,
    unjudged: Policy = "drop",
    unretrieved: Policy = "zero",
    check_duplicates: bool = True,
    buckets: Buckets = "auto-memory",
    spill_dir: str | Path | None = None,
    memory_limit: int | str | None = None,
    explain: bool = False,
    partitioned_by: str | None = None,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    rank: str = "rank",
    score: str = "score",
    relevance: str = "relevance",
) -> pl.DataFrame | pl.LazyFrame:
    """Evaluate a run against judgments: per-query values or means, in one plan.

    Parameters
    ----------
    run
        One row per retrieved document: ``query_id``, ``doc_id`` and ``rank`` (1 = top)
        and/or ``score``. A polars DataFrame or LazyFrame; a pandas DataFrame, a pyarrow
        Table or RecordBatch, or any table with the Arrow PyCapsule interface
        (``__arrow_c_stream__``) is converted to a polars DataFrame first. With
        ``qrels=None`` it must be a *judged table* that also carries ``relevance``: its
        rows are then the judgments, documents not in the table are unknown, and a row
        with a null ``rank`` is a judged document that was not retrieved.
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
    interactions, item_features
        For beyond-accuracy metrics (``catalog_coverage``, ``novelty``,
        ``intra_list_diversity``, ``serendipity``...): the history the recommender
        learned from and the items' feature vectors, with the run's queries as users and
        its documents as items (see :func:`~polars_irmetrics.beyond_accuracy`). Their
        values are joined beside the means (``per_query=False`` only).
    by
        Extra keys (system, day, market): each combination is evaluated separately.
    per_query
        ``True``: one row per query (and ``by`` group) and one column per metric.
        ``False`` (default): one row of means per ``by`` group, with ``num_q``, the
        number of queries averaged.
    order
        ``"rank"``: the ``rank`` column gives positions (1 = top; gaps are allowed and
        are positions holding no document). ``"score"``: ``score`` descending, ties
        broken by ``doc_id`` descending compared as text, as trec_eval does.
        ``"auto"`` (default): ``"rank"`` when the run has a ``rank`` column, else
        ``"score"``. Input row order is never used.
    relevance_level
        A judged document is relevant when its relevance is ``>= relevance_level``
        (trec_eval ``-l``; default 1). Graded metrics (nDCG, DCG) use the relevance
        values themselves. Negative relevance means "in the pool but not judged"
        (trec_eval's convention): neither relevant nor non-relevant, which matters
        for bpref.
    depth
        Keep only ranks ``1..depth`` of each query (trec_eval ``-M``).
    unjudged
        Queries in the run but not in the judgments: ``"drop"`` (default, as
        trec_eval), ``"zero"`` (scored as a query with no relevant document: 0 for
        every quality metric; counted in the mean) or ``"error"``.
    unretrieved
        Queries in the judgments but not in the run: ``"zero"`` (default, as
        trec_eval ``-c`` and ir_measures: scored as an empty ranking, which is 0 for
        every metric but ``rbp_residual`` (1) and ``fcp`` (1/2); counted in the
        mean), ``"drop"`` or ``"error"``.
    check_duplicates
        ``True`` (default): refuse a document listed twice in one query of the run, and two
        documents at one rank, as trec_eval does. These checks keep a set of every
        document id's hash (and rank) per query, about 40 % of the plan's time and of
        its memory on large logs with ranks given (benchmarks/results.md); a query they
        flag is recounted exactly before an error is raised. ``False`` skips
        them for runs known to be clean (straight from a retriever): duplicates among
        *judged* documents, which would change metric values, are still refused; an
        unjudged document listed twice is then counted twice in ``num_ret`` (and, ranked
        by score, pushes the documents below it down).
    buckets
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
    spill_dir
        Folder for the buckets' temporary files (default: the system's temporary
        folder, ``TMPDIR``); they need up to twice the run's Parquet size on disk
        (written uncompressed, for speed) and are removed when the evaluation ends.
        Ignored without ``buckets``.
    memory_limit
        The memory ``buckets="auto-memory"`` may plan for: bytes, or a size such as
        ``"4GiB"``; default half the machine's (or the container's) memory.
    explain
        ``True``: print which plan ``buckets="auto-memory"`` chose and why (it is
        logged at INFO level on the ``polars_irmetrics`` logger in any case).
    partitioned_by
        A column of the run (a hive partition column, such as a hash of the query) whose
        partitions each hold whole queries: out of core, they are then evaluated one
        after the other, each read alone (file pruning), instead of re-writing the run in
        buckets (:mod:`polars_irmetrics.ground.partitions`).
    query_id, doc_id, rank, score, relevance
        Column names in ``run`` and ``qrels``.

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
    run = as_polars(run, "run")
    qrels = None if qrels is None else as_polars(qrels, "qrels")
    interactions = None if interactions is None else as_polars(interactions, "interactions")
    item_features = None if item_features is None else as_polars(item_features, "item_features")
    eager = isinstance(run, pl.DataFrame)
    options = EvalOptions(
        by=by,
        per_query=per_query,
        order=order,
        relevance_level=relevance_level,
        depth=depth,
        unjudged=unjudged,
        unretrieved=unretrieved,
        check_duplicates=check_duplicates,
        buckets=buckets,
        spill_dir=spill_dir,
        memory_limit=memory_limit,
        explain=explain,
        partitioned_by=partitioned_by,
        query_id=query_id,
        doc_id=doc_id,
        rank=rank,
        score=score,
        relevance=relevance,
    )
    accuracy, beyond = split_metrics(metrics)  # beyond accuracy: polars_irmetrics.recsys
    judgments = None if qrels is None else qrels.lazy()
    if beyond:
        means = build_plan(run.lazy(), accuracy, judgments, options) if accuracy else None
        plan = with_beyond_accuracy(
            means, run.lazy(), beyond, interactions, item_features, options
        )
    else:
        plan = build_plan(run.lazy(), accuracy, judgments, options)
    return collect_guarded(plan) if eager else plan
