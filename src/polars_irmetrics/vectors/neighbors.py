"""The plan of the neighbour-recall metrics: an approximate run against the exact one.

``irm.evaluate(approx_run, ["neighbor_recall@10"], neighbors=exact_run)`` comes here
(:func:`build_neighbors_plan`). One lazy plan: the exact run's ``k``-th smallest
distance per query (one group-by, every requested ``k`` at once), joined with the
approximate run's first ``k`` rows of each query, counted per query in one more
group-by; means per ``by`` group on top. The formulas are in
:mod:`polars_irmetrics.metrics.neighbors`.

Rows: the queries of the exact run (a query the approximate run lacks scores 0; one
only in the approximate run has no truth and is left out). ``by`` keys the exact run
also has are matched; otherwise its neighbours serve every ``by`` group of the
approximate run (an index per shard or per setting against one exact run).
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import ColumnTypeError, InvalidValueError, MetricParameterError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL, id_kind, require_columns
from polars_irmetrics.metrics.neighbors import neighbor_distance, neighbor_epsilon
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.spec import Params

__all__ = ["build_neighbors_plan"]

_POS = f"{INTERNAL}pos"
_BAD = f"{INTERNAL}bad_score"
_TBAD = f"{INTERNAL}bad_truth"
_N = f"{INTERNAL}n_true"
_SCORE = "score"  # the internal name of the score column (metrics.neighbors reads it)


def _threshold_name(i: int) -> str:
    return f"{INTERNAL}t{i}"


def build_neighbors_plan(
    run: pl.LazyFrame,
    neighbors: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    options: EvalOptions,
) -> pl.LazyFrame:
    """Per-query neighbour recall (``options.per_query``), keyed by ``(by..., query_id)``,
    or its means per ``by`` group with ``num_q``; lazy, nothing collected.

    Examples
    --------
    The approximate run found d1 and d3; the true two nearest are d1 (distance 0.1) and
    d2 (0.2); d3 (0.2005) is within 1e-3 of the second true distance, so it counts under
    the default epsilon and not under ``epsilon=0``:

    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> exact = pl.LazyFrame({
    ...     "query_id": ["q"] * 3, "doc_id": ["d1", "d2", "d3"],
    ...     "score": [-0.1, -0.2, -0.2005],
    ... })
    >>> approx = pl.LazyFrame({"query_id": ["q", "q"], "doc_id": ["d1", "d3"],
    ...                        "score": [-0.1, -0.2005]})
    >>> requests = parse_metric_list(["neighbor_recall@2", "neighbor_recall(epsilon=0)@2"])
    >>> build_neighbors_plan(approx, exact, requests, EvalOptions()).collect().row(0)
    (1, 1.0, 0.5)
    """
    query_id, score = options.query_id, options.score
    by = list(options.by_keys)
    keys = [*by, query_id]
    run_schema = run.collect_schema()
    truth_schema = neighbors.collect_schema()
    hint = "name the columns with query_id=, doc_id=, score= and by="
    require_columns(run_schema, [*keys, options.doc_id, score], "run", hint)
    require_columns(truth_schema, [query_id, options.doc_id, score], "neighbors", hint)
    for schema, what in ((run_schema, "run"), (truth_schema, "neighbors")):
        id_kind(schema, query_id, what)
        if not schema[score].is_numeric():
            raise ColumnTypeError(
                f"column {score!r} in the {what} has dtype {schema[score]}; neighbour "
                f"recall reads distances from scores: cast it, e.g. pl.col({score!r})"
                ".cast(pl.Float64)"
            )
    cutoffs = [_cutoff(label, request) for label, request in requests]
    deepest = max(cutoffs)
    use_rank = options.order == "rank" or (options.order == "auto" and options.rank in run_schema)
    position = (
        pl.col(options.rank).cast(pl.Int64)
        if use_rank
        else pl.col(score).rank("ordinal", descending=True).over(keys).cast(pl.Int64)
    )
    bad = pl.col(score).is_null() | pl.col(score).cast(pl.Float64).is_nan()
    approx = run.select(
        *keys,
        pl.col(score).cast(pl.Float64).alias(_SCORE),
        bad.alias(_BAD),
        position.alias(_POS),
    ).filter((pl.col(_POS) <= deepest) | pl.col(_BAD))
    shared = [key for key in by if key in truth_schema]
    truth_keys = [*shared, query_id]
    thresholds = []
    for i, ((_, request), k) in enumerate(zip(requests, cutoffs, strict=True)):
        distance = neighbor_distance(_params(request))
        thresholds.append(distance.bottom_k(k).max().alias(_threshold_name(i)))
    truth = (
        neighbors.select(*truth_keys, pl.col(score).cast(pl.Float64).alias(_SCORE))
        .group_by(truth_keys)
        .agg(
            *thresholds,
            pl.len().alias(_N),
            (pl.col(_SCORE).is_null() | pl.col(_SCORE).is_nan()).sum().alias(_TBAD),
        )
    )
    missing = [key for key in by if key not in truth_schema]
    if missing:  # one exact run for every by group of the approximate run
        truth = truth.join(run.select(missing).unique(), how="cross")
    counts = []
    for i, ((label, request), k) in enumerate(zip(requests, cutoffs, strict=True)):
        params = _params(request)
        epsilon = neighbor_epsilon(params)
        threshold = pl.col(_threshold_name(i))
        limit = (
            threshold + epsilon
            if request.metric.name == "neighbor_recall"
            else threshold * (1.0 + epsilon)
        )
        within = (pl.col(_POS) <= k) & (neighbor_distance(params) <= limit)
        denominator = pl.min_horizontal(pl.lit(k, dtype=pl.Int64), pl.col(_N).first())
        counts.append((within.sum() / denominator).cast(pl.Float64).alias(label))
    per_query = (
        truth.join(approx, on=keys, how="left", nulls_equal=False)
        .group_by(keys)
        .agg(*counts, pl.col(_BAD).any().alias(_BAD), pl.col(_TBAD).first().alias(_TBAD))
    )
    labels = [label for label, _ in requests]
    checked = per_query.map_batches(
        lambda frame: _raise_on_bad_scores(frame, query_id, score),
        schema=per_query.collect_schema(),
    ).drop(_BAD, _TBAD)
    if options.per_query:
        return checked.sort(keys).select(*keys, *labels)
    means = [request.summarize(label) for label, request in requests]
    if by:
        return (
            checked.group_by(by)
            .agg(pl.len().cast(pl.Int64).alias("num_q"), *means)
            .sort(by)
            .select(*by, "num_q", *labels)
        )
    return checked.select(pl.len().cast(pl.Int64).alias("num_q"), *means)


def _params(request: MetricRequest) -> Params:
    return request.params(1.0)  # the relevance level plays no part


def _cutoff(label: str, request: MetricRequest) -> int:
    if request.k is None:  # pragma: no cover - the registry requires @k
        raise MetricParameterError(f"metric {label!r} needs a cutoff, e.g. @10")
    return request.k


def _raise_on_bad_scores(frame: pl.DataFrame, query_id: str, score: str) -> pl.DataFrame:
    for flag, what in ((_BAD, "run"), (_TBAD, "neighbors")):
        bad = frame.filter(pl.col(flag).cast(pl.Boolean).fill_null(False)).sort(query_id)
        if bad.height:
            raise InvalidValueError(
                f"column {score!r} of the {what} has null or NaN values in query "
                f"{bad[query_id][0]!r}; neighbour recall reads distances from scores: "
                "fill or drop those rows"
            )
    return frame
