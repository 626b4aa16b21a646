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

Padding: faiss fills a list shorter than ``k`` (fewer vectors than ``k``, or an index
that found fewer) with the id -1 and the distance ``±3.4028235e38`` (float32's largest),
a finite score. Such rows (document id -1, score of that magnitude or infinite), in the
run or in ``neighbors=``, are left out with an :class:`~polars_irmetrics.errors.IrmWarning`
that counts them (:func:`_without_padding`): a missed neighbour in the run, as its -inf;
in ``neighbors=``, a query with ``n < k`` true neighbours. Read as documents, a padding
row of ``neighbors=`` made its distance the ``k``-th true one (every document of the run
found) and counted in ``min(k, n)``.

Scores: where every score of the exact run is at most 0 (negated distances) or at most
1 (cosine similarities), an approximate score above that bound beyond rounding cannot be
of that kind (no document scores above a query's best) and is refused
(:func:`_above_bound`): positive distances against knn's ``l2`` run were read as
distances below 0, every document found.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    InvalidValueError,
    IrmWarning,
    MetricParameterError,
)
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    CheckSpec,
    check_numeric,
    common_id_dtype,
    describe_query,
    flag,
    held_tally,
    id_kind,
    key_dtype_error,
    numeric_cast_fix,
    raise_on_bad_rows,
    require_columns,
    sampled_error,
    systems_column,
    systems_named,
    warn_from_plan,
    warn_on_joint,
    with_tally,
)
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics.neighbors import neighbor_distance, neighbor_epsilon
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.spec import Params

__all__ = ["build_neighbors_plan"]

_POS = f"{INTERNAL}pos"
_BAD = f"{INTERNAL}bad_score"
_TBAD = f"{INTERNAL}bad_truth"
_N = f"{INTERNAL}n_true"
_NEG = f"{INTERNAL}neg_scores"
_SCALE = f"{INTERNAL}truth_scale"
_OVER = f"{INTERNAL}over_bound"
_JUDGED = f"{INTERNAL}judged"
_RETRIEVED = f"{INTERNAL}retrieved"
_CHECK = f"{INTERNAL}check_row"
_TRUTH_FLAG = f"{INTERNAL}tv_"
#: A query's count of the distinct values of the run's ``sample_id=`` column.
_SAMPLES = f"{INTERNAL}samples"
_SCORE = "score"  # the internal name of the score column (metrics.neighbors reads it)


def _listed(k: int) -> str:
    """The column of a query's count of the run's documents at positions ``<= k``."""
    return f"{INTERNAL}listed{k}"


def _threshold_name(i: int, reading: str = "") -> str:
    return f"{INTERNAL}t{i}{reading}"


#: The reading of distance='auto' computed beside it (:func:`_warn_on_reading`).
_COSINE = "one_minus_score"
#: Whether every score of neighbors= is at least -1 (a cosine similarity's range too).
_RANGE = f"{INTERNAL}cosine_range"
#: The rounding a cosine similarity may be below -1 by.
_COSINE_SLACK = 1e-6


def _as_cosine(label: str) -> str:
    """The column of ``label``'s value with the scores read as cosine similarities."""
    return f"{INTERNAL}cosine_{label}"


def _is_auto(request: MetricRequest) -> bool:
    return (
        request.metric.name == "neighbor_recall_rel"
        and _params(request).options["distance"] == "auto"
    )


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
        # the ids are matched by equality, as every route's: strings or integers
        id_kind(schema, query_id, what)
        id_kind(schema, options.doc_id, what)
        if not schema[score].is_numeric():
            raise ColumnTypeError(
                f"column {score!r} in the {what} has dtype {schema[score]}; neighbour "
                f"recall reads distances from scores: {numeric_cast_fix(score, schema[score])}"
            )
    run, neighbors = _common_ids(
        run, neighbors, run_schema, truth_schema, [query_id, *by], options.doc_id
    )
    # faiss' padding (id -1, distance 3.4e38) is no document: counted, left out, said
    padding = _padding_tally(run, neighbors, query_id, options.doc_id, score)
    run, neighbors = (_without_padding(frame, options.doc_id, score) for frame in (run, neighbors))
    cutoffs = [_cutoff(label, request) for label, request in requests]
    deepest = max(cutoffs)
    use_rank = options.order == "rank" or (options.order == "auto" and options.rank in run_schema)
    if use_rank:  # the run's ranks, checked as a ranking metric checks them
        require_columns(run_schema, [options.rank], "run", hint)
        check_numeric(run_schema, options.rank, "run", integer=True)
    position = (
        pl.col(options.rank).cast(pl.Int64)
        if use_rank
        else pl.col(score).rank("ordinal", descending=True).over(keys).cast(pl.Int64)
    )
    # +inf: a document closer than any (distance -inf), found whatever the threshold;
    # -inf is a document never found (faiss pads a short list with it), a miss
    as_float = pl.col(score).cast(pl.Float64)
    bad = pl.col(score).is_null() | as_float.is_nan() | (as_float == float("inf"))
    approx = run.select(
        *keys,
        pl.col(score).cast(pl.Float64).alias(_SCORE),
        bad.alias(_BAD),
        position.alias(_POS),
    ).filter((pl.col(_POS) <= deepest) | pl.col(_BAD))
    shared = [key for key in by if key in truth_schema]
    truth_keys = [*shared, query_id]
    thresholds = []
    # distance='auto' of neighbor_recall_rel: also computed as cosine similarities
    # where it reads the scores as negated distances (_warn_on_reading)
    auto = {i for i, (_, request) in enumerate(requests) if _is_auto(request)}
    for i, ((_, request), k) in enumerate(zip(requests, cutoffs, strict=True)):
        distance = _distance(request)
        thresholds.append(distance.bottom_k(k).max().alias(_threshold_name(i)))
        if i in auto:
            cosine = _distance(request, _COSINE)
            thresholds.append(cosine.bottom_k(k).max().alias(_threshold_name(i, _COSINE)))
    doc = options.doc_id
    truth = (
        neighbors.select(*truth_keys, doc, pl.col(score).cast(pl.Float64).alias(_SCORE))
        # knn's l2 runs score -distance (every score <= 0); its cosine runs similarity
        .with_columns(
            _score_kind(pl.col(_SCORE).max()).alias(_NEG),
            # every score within a cosine similarity's range too
            (pl.col(_SCORE).min() >= -1.0 - _COSINE_SLACK).fill_null(False).alias(_RANGE),
        )
        .group_by(truth_keys)
        .agg(
            *thresholds,
            pl.len().alias(_N),
            (pl.col(_SCORE).is_null() | ~pl.col(_SCORE).is_finite()).sum().alias(_TBAD),
            pl.col(_NEG).first(),
            pl.col(_RANGE).first(),
            pl.col(_SCORE).abs().max().alias(_SCALE),
            *_flags(pl.col(doc), None, options.check_duplicates, _TRUTH_FLAG),
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
        within = (pl.col(_POS) <= k) & (_distance(request) <= limit)
        denominator = pl.min_horizontal(pl.lit(k, dtype=pl.Int64), pl.col(_N).first())
        counts.append((within.sum() / denominator).cast(pl.Float64).alias(label))
        if i in auto:
            cosine_limit = pl.col(_threshold_name(i, _COSINE)) * (1.0 + epsilon)
            found = (pl.col(_POS) <= k) & (_distance(request, _COSINE) <= cosine_limit)
            value = (found.sum() / denominator).cast(pl.Float64)
            counts.append(value.alias(_as_cosine(label)))
    truth_flags = [c for c in truth.collect_schema().names() if c.startswith(_TRUTH_FLAG)]
    per_query = (
        truth.join(approx, on=keys, how="left", nulls_equal=False)
        .group_by(keys)
        .agg(
            *counts,
            pl.col(_BAD).any().alias(_BAD),
            pl.col(_TBAD).first().alias(_TBAD),
            pl.col(_NEG).first(),
            pl.col(_RANGE).first(),
            pl.col(_SCORE).filter(_above_bound()).max().alias(_OVER),
            pl.col(_N).first(),
            # the run's documents within each cutoff (not faiss' -inf padding): more
            # than neighbors= holds of a query show its list cut shorter than the corpus
            # (_warn_on_short)
            *(
                ((pl.col(_POS) <= k) & (pl.col(_SCORE) > float("-inf"))).sum().alias(_listed(k))
                for k in sorted(set(cutoffs))
            ),
            *(pl.col(c).first() for c in truth_flags),
        )
        .with_columns(pl.lit(True).alias(_JUDGED))
    )
    rank = options.rank if use_rank else None
    # a query's sampled rankings (the sample_id= column), read as one here: refused first
    sample = options.sample_id if options.sample_id in run_schema else None
    samples = [] if sample is None else [pl.col(sample).n_unique().cast(pl.Int64).alias(_SAMPLES)]
    run_flags = (
        run.group_by(keys)
        .agg(*_flags(pl.col(options.doc_id), rank, options.check_duplicates, flag("")), *samples)
        .with_columns(pl.lit(True).alias(_RETRIEVED))
    )
    combined = per_query.join(
        run_flags, on=keys, how="full", coalesce=True, nulls_equal=False
    ).with_columns(pl.col(_JUDGED, _RETRIEVED).fill_null(False), pl.lit(False).alias(_CHECK))
    combined = combined.cache()  # read by the values and by the tally of the queries
    labels = [label for label, _ in requests]
    spec = CheckSpec(
        keys=tuple(keys),
        query_id=query_id,
        doc_id=options.doc_id,
        rank=options.rank,
        score=score,
        relevance=options.relevance,
        judged_table=False,
        unjudged=options.unjudged,
        unretrieved=options.unretrieved,
        check_duplicates=options.check_duplicates,
        frames=("run", "neighbors"),
        # by= keys (attributes of the query) neighbors= lacks: a query of neighbors=
        # that some group did not retrieve cannot be placed (refused, as the judgments')
        unplaced=tuple(k for k in missing if k in options.attribute_keys),
    )
    auto_labels = [labels[i] for i in sorted(auto)]
    checked = combined.map_batches(
        warns_in_order(lambda frame: _checked(frame, spec, labels, auto_labels, sample, cutoffs)),
        schema=combined.select(*keys, *labels).collect_schema(),
    )
    # how the run's queries line up with those of neighbors= (a run that matches none
    # would score 0 everywhere in silence)
    both = pl.col(_RETRIEVED) & pl.col(_JUDGED)
    tally = combined.select(
        pl.col(_RETRIEVED).sum().cast(pl.Int64).alias(_RUN_QUERIES),
        pl.col(_JUDGED).sum().cast(pl.Int64).alias(_TRUTH_QUERIES),
        both.sum().cast(pl.Int64).alias(_BOTH),
    )
    systems = [k for k in options.system_keys if k in keys]
    if systems:  # each system's queries too: one neighbors= lacks, named
        retrieved = combined.filter(pl.col(_RETRIEVED)).select(keys)
        held = combined.filter(both).select(keys)
        per_system = held_tally(
            retrieved, held, keys, f"{_RUN_QUERIES}|all", _BOTH, distinct=True, systems=systems
        )
        tally = pl.concat([tally, per_system.select(systems_column(_BOTH))], how="horizontal")
    # and how its documents line up with those of neighbors= (the values read distances
    # only: ids of another id space would go unnoticed)
    tally = tally.join(_doc_tally(run, neighbors, doc), how="cross").join(padding, how="cross")

    def say(row: Mapping[str, Any]) -> None:
        _warn_on_padding(row, doc, score)
        _warn_on_queries(row, query_id, options)
        _warn_on_documents(row, doc)

    checked = with_tally(checked, tally, say)
    if options.per_query:
        return checked.sort(keys).select(*keys, *labels)
    # the per-query values in query order (the means add them from the least, in any
    # order), as the full join and the checks leave them in none
    checked = checked.sort(keys)
    means = [request.summarize(label) for label, request in requests]
    if by:
        return (
            checked.group_by(by)
            .agg(pl.len().cast(pl.Int64).alias("num_q"), *means)
            .sort(by)
            .select(*by, "num_q", *labels)
        )
    return checked.select(pl.len().cast(pl.Int64).alias("num_q"), *means)


_RUN_QUERIES, _TRUTH_QUERIES = f"{INTERNAL}run_queries", f"{INTERNAL}truth_queries"
_BOTH = f"{INTERNAL}both_queries"


def _warn_on_queries(row: Mapping[str, Any], query_id: str, options: EvalOptions) -> None:
    """Queries that do not line up (``row``: the run's queries, those of neighbors=, and
    those in both): warned about where neighbors= holds fewer than half of the run's,
    or the run lists fewer than half of those of neighbors=, with what the query-set
    policies then do."""
    run, truth, both = row[_RUN_QUERIES], row[_TRUTH_QUERIES], row[_BOTH]
    fate = "are left out" if options.unjudged == "drop" else "each score 0"
    lacked = "are left out" if options.unretrieved == "drop" else "each score 0"
    if not run or not truth:  # a table of no row: no ids to line up
        _warn_on_empty(run, truth, fate, lacked, options)
        return

    def effect(matched: int, total: int) -> str:
        """The run's (or a system's) queries neighbors= lacks; the whole run's words
        name too the queries of neighbors= it lacks."""
        whole = (matched, total) == (both, run) and truth > both
        return f"the {total - matched} it lacks {fate} (unjudged={options.unjudged!r})" + (
            f", and the {truth - both} of its own the run lacks {lacked} "
            f"(unretrieved={options.unretrieved!r})"
            if whole
            else ""
        )

    warn_on_joint(
        table="neighbors",
        column=query_id,
        matched=both,
        total=run,
        things="queries",
        owner="run",
        effect=effect,
        by_system=systems_named(row, _BOTH, options.system_keys),
    )
    if 2 * both < truth and 2 * both >= run:  # (the first warning says it otherwise)
        warn_from_plan(
            f"the run lists {'none' if both == 0 else f'only {both}'} of the {truth} "
            f"queries of neighbors= (column {query_id!r}): the {truth - both} it lacks "
            f"{lacked} (unretrieved={options.unretrieved!r}). Check that the run searched "
            "the queries neighbors= holds (same query ids, same spelling).",
        )


def _warn_on_empty(run: int, truth: int, fate: str, lacked: str, options: EvalOptions) -> None:
    """The run or neighbors= holds no row (``run``, ``truth``: their query counts):
    what the values then hold, said as such (not as ids that do not line up)."""
    if not run and not truth:
        said = "the run and neighbors= hold no row: there is no query to score"
    elif not truth:
        said = (
            f"neighbors= holds no row (no exact neighbours): the run's {run} queries "
            f"{fate} (unjudged={options.unjudged!r})"
        )
    else:
        said = (
            f"the run holds no row: the {truth} queries of neighbors= {lacked} "
            f"(unretrieved={options.unretrieved!r})"
        )
    warn_from_plan(
        f"{said}; a filter that kept nothing, an empty file, or knn over an empty table?"
    )


_RUN_DOCS, _TRUTH_DOCS = f"{INTERNAL}run_docs", f"{INTERNAL}truth_docs"
_BOTH_DOCS = f"{INTERNAL}both_docs"


#: float32's largest value, as float64: faiss' distance of a missing neighbour (with
#: the id -1), ``+`` for l2, ``-`` for the inner product.
FAISS_PAD = 3.4028234663852886e38
_PADS = f"{INTERNAL}pads_"
_PAD_QUERY = f"{INTERNAL}pad_query_"


def _is_padding(doc: str, score: str) -> pl.Expr:
    """A row of faiss' padding: document id -1 and a score of float32's largest
    magnitude (or an infinite one)."""
    return (pl.col(doc).cast(pl.String) == "-1") & (
        pl.col(score).cast(pl.Float64).abs() >= FAISS_PAD
    )


def _without_padding(frame: pl.LazyFrame, doc: str, score: str) -> pl.LazyFrame:
    """``frame`` without faiss' padding rows (:func:`_is_padding`).

    Examples
    --------
    >>> import polars as pl
    >>> faiss = pl.LazyFrame({"doc_id": [4, -1], "score": [-0.5, -3.4028234663852886e38]})
    >>> _without_padding(faiss, "doc_id", "score").collect()["doc_id"].to_list()
    [4]
    """
    pad = _is_padding(doc, score)
    return frame.filter(~pad | pad.is_null())


def _padding_tally(
    run: pl.LazyFrame, neighbors: pl.LazyFrame, query_id: str, doc: str, score: str
) -> pl.LazyFrame:
    """One row: each table's count of faiss' padding rows and its first query with one."""
    pad = _is_padding(doc, score).fill_null(False)

    def count(frame: pl.LazyFrame, what: str) -> pl.LazyFrame:
        return frame.select(
            pad.sum().cast(pl.Int64).alias(_PADS + what),
            pl.col(query_id).filter(pad).cast(pl.String).min().alias(_PAD_QUERY + what),
        )

    return count(run, "the run").join(count(neighbors, "neighbors="), how="cross")


def _warn_on_padding(row: Mapping[str, Any], doc: str, score: str) -> None:
    """The padding rows :func:`_without_padding` left out (``row``: the tally of
    :func:`_padding_tally`), warned about per table."""
    fate = {
        "the run": "each is a neighbour the index did not return, a miss (as a score of -inf)",
        "neighbors=": "the query's n < k true neighbours stand for k (the n-th distance for "
        "the k-th), as for a corpus of fewer than k documents; read as documents, their "
        "distance was the k-th true one and every document of the run counted as found",
    }
    for what, said in fate.items():
        n = row[_PADS + what]
        if not n:
            continue
        warnings.warn(
            f"{n} row(s) of {what} have {doc} -1 and a {score} of magnitude "
            f"3.4028235e+38 (float32's largest) or infinite (e.g. query "
            f"{row[_PAD_QUERY + what]!r}): faiss' padding of a list shorter than k, no "
            f"document; they are left out: {said}. Drop them first to silence this, e.g. "
            f".filter(pl.col({doc!r}) != -1)",
            IrmWarning,
            stacklevel=2,
        )


def _doc_tally(run: pl.LazyFrame, neighbors: pl.LazyFrame, doc: str) -> pl.LazyFrame:
    """One row: the distinct document ids of the run, those of neighbors=, and the run's
    that neighbors= holds (lazy, a part of the plan; the ids of one dtype already; a
    null id is refused by the plan's checks)."""
    truth = neighbors.select(doc).unique()
    return held_tally(run.select(doc), truth, [doc], _RUN_DOCS, _BOTH_DOCS, distinct=True).join(
        truth.select(pl.len().cast(pl.Int64).alias(_TRUTH_DOCS)), how="cross"
    )


def _warn_on_documents(row: Mapping[str, Any], doc: str) -> None:
    """A run none of whose document ids neighbors= holds (``row``: the tally of
    :func:`_doc_tally`): warned about, as the values read distances only and come out
    the same whatever the ids (row positions against external ids)."""
    if row[_BOTH_DOCS] or not row[_TRUTH_DOCS]:
        return
    warn_on_joint(
        table="neighbors",
        column=doc,
        matched=0,
        total=row[_RUN_DOCS],
        things="documents",
        owner="run",
        effect="neighbour recall reads distances only (the run's scores against the k-th "
        "true distance), so its values, computed all the same, assume the run's scores "
        "are true distances to the same corpus",
    )


def _params(request: MetricRequest) -> Params:
    return request.params(1.0)  # the relevance level plays no part


def _distance(request: MetricRequest, reading: str | None = None) -> pl.Expr:
    """The distance of a row from its score (:func:`neighbor_distance`); for
    ``neighbor_recall_rel``, at least 0. A distance is never below 0: one below it is
    rounding (a cosine similarity computed past 1, ``1 - score``; a squared distance
    computed below 0, ``-score``), and counted as 0, as knn clips its own, since the
    relative threshold ``(1 + epsilon) t_k`` of a ``t_k`` below 0 falls below ``t_k``
    itself (a run measured 0.65 against itself). NaN stays NaN (refused). ``reading``:
    the ``distance`` parameter read in place of the request's."""
    params = _params(request)
    if reading is not None:
        params = replace(params, options={**params.options, "distance": reading})
    distance = neighbor_distance(params, pl.col(_NEG) == 0)
    if request.metric.name != "neighbor_recall_rel":
        return distance  # an absolute threshold: -score of a dot run may be below 0
    return pl.when(distance < 0).then(pl.lit(0.0)).otherwise(distance)


def _cutoff(label: str, request: MetricRequest) -> int:
    if request.k is None:  # pragma: no cover - the registry requires @k
        raise MetricParameterError(f"metric {label!r} needs a cutoff, e.g. @10")
    return request.k


def _common_ids(
    run: pl.LazyFrame,
    neighbors: pl.LazyFrame,
    run_schema: pl.Schema,
    truth_schema: pl.Schema,
    keys: list[str],
    doc: str,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The two tables with their shared keys and the document ids ``doc`` of one dtype:
    integers of different widths as one that holds both
    (:func:`~polars_irmetrics.ground.validate.common_id_dtype`); strings beside integers
    refused, naming both tables."""
    ids = {keys[0]: "queries", doc: "documents"}
    for key in [*keys, doc]:
        if key not in truth_schema:
            continue
        left, right = run_schema[key], truth_schema[key]
        if left == right:
            continue
        kinds = (
            id_kind(run_schema, key, "run") if key in ids else None,
            id_kind(truth_schema, key, "neighbors") if key in ids else None,
        )
        if kinds[0] == kinds[1] == "integer" or (left.is_integer() and right.is_integer()):
            # a dtype that holds both sides' values (UInt64 ids beyond Int64 included)
            common = common_id_dtype([left, right])
            run = run.with_columns(pl.col(key).cast(common))
            neighbors = neighbors.with_columns(pl.col(key).cast(common))
            continue
        if kinds[0] == kinds[1] == "string":
            run = run.with_columns(pl.col(key).cast(pl.String))
            neighbors = neighbors.with_columns(pl.col(key).cast(pl.String))
            continue
        if key not in ids:  # a by=/systems= key of two kinds (the door lines up one's)
            raise key_dtype_error(key, left, "the run", right, "the neighbors")
        raise ColumnTypeError(
            f"column {key!r} is {left} in the run and {right} in the neighbors; the "
            f"approximate run's {ids.get(key, 'queries')} are matched with the exact run's "
            "by their ids, which "
            f"must be of one kind: cast one of them, e.g. pl.col({key!r}).cast(pl.String) "
            "(the ids of a TREC file are read as text)"
        )
    return run, neighbors


def _flags(doc: pl.Expr, rank: str | None, duplicates: bool, prefix: str) -> list[pl.Expr]:
    """Per query, the data checks of a run (ground.validate's RUN_FLAGS): null document
    ids, documents listed twice, null, non-positive or repeated ranks."""
    kinds = {"null_doc": doc.is_null().sum()}
    if duplicates:
        kinds["dup_doc"] = pl.len() - doc.n_unique()
    if rank is not None:
        r = pl.col(rank)
        kinds["null_rank"] = r.is_null().sum()
        kinds["bad_rank"] = (r < 1).sum()
        if duplicates:
            kinds["dup_rank"] = r.count() - r.drop_nulls().n_unique()
    return [expr.cast(pl.Int64).alias(f"{prefix}{kind}") for kind, expr in kinds.items()]


def _score_kind(top: pl.Expr) -> pl.Expr:
    """What the exact run's largest score says its scores are: 0 every score <= 0 (knn's
    ``l2``: -distance), 1 every score <= 1 (a cosine similarity), 2 neither."""
    return (
        pl.when(top.is_null() | (top <= 0))
        .then(pl.lit(0, pl.Int8))
        .when(top <= 1)
        .then(pl.lit(1, pl.Int8))
        .otherwise(pl.lit(2, pl.Int8))
    )


#: The rounding an approximate run's score may exceed the bound of the exact run's kind
#: by (:func:`_above_bound`), times the larger of 1 and the query's largest |score|.
SLACK = 1e-3


def _above_bound() -> pl.Expr:
    """Whether an approximate run's score exceeds, beyond rounding, what any score of
    the query can be, as the exact run's scores show their kind (:func:`_score_kind`):
    where every one of them is at most 0 (negated distances), or at most 1 (cosine
    similarities), no document scores above that bound: a negated distance is never
    above 0, a cosine never above 1, and whatever the score (a dot product included),
    none exceeds the query's best, which the exact run holds (at most the bound). A
    score above it is of another kind (positive distances against negated ones, dot
    products against cosines), read as distances below 0: every such document counted
    as found. Rounding (a negated squared distance just above 0, a cosine just past 1)
    is allowed up to :data:`SLACK` times the larger of 1 and the query's largest
    |score| in the exact run. Exact scores above 1 (a dot product) bound nothing."""
    kind = pl.col(_NEG)
    bound = pl.when(kind == 0).then(pl.lit(0.0)).when(kind == 1).then(pl.lit(1.0))
    slack = SLACK * pl.max_horizontal(pl.lit(1.0), pl.col(_SCALE))
    return pl.col(_SCORE) > bound + slack


def _raise_above_bound(frame: pl.DataFrame, query_id: str, score: str) -> None:
    """Refuse an approximate score of another kind than the exact run's (:func:`_above_bound`),
    naming the first query (in id order) and its largest such score."""
    above = frame.filter(pl.col(_OVER).is_not_null()).sort(query_id)
    if not above.height:
        return
    row = above.row(0, named=True)
    value, query = row[_OVER], row[query_id]
    if row[_NEG] == 0:
        bound, kind = 0, "negated distances, as knn's l2 runs score"
        fix = f"if they are distances, negate them, e.g. pl.col({score!r}).neg()"
        never = "a negated distance is never above 0"
    else:
        bound, kind = 1, "similarities, as knn's cosine runs score"
        fix = f"cosine similarities; from cosine distances, 1 - pl.col({score!r})"
        never = "a cosine similarity is never above 1"
    raise InvalidValueError(
        f"column {score!r} of the run holds {value!r} in query {query!r}, above {bound} "
        f"beyond rounding, where every score of neighbors= is at most {bound} ({kind}): "
        f"{never}, and no document scores above a query's best, which neighbors= holds; "
        "neighbour recall reads both tables' scores as one kind of distance: give the "
        f"run scores of the exact run's kind ({fix})"
    )


def _checked(
    frame: pl.DataFrame,
    spec: CheckSpec,
    labels: list[str],
    auto: list[str],
    sample: str | None = None,
    cutoffs: list[int] | None = None,
) -> pl.DataFrame:
    """The per-query values after every data check (the run's, then the neighbors',
    with ground.validate's messages) and the query-set policies (``unjudged``: queries
    only in the run; ``unretrieved``: queries of the neighbors the run lacks).
    ``sample``: the run's sample column, whose queries under more than one of its
    values (sampled rankings) are refused first. ``cutoffs``: each label's ``k``, whose
    queries with fewer neighbours are said (:func:`_warn_on_short`)."""
    if sample is not None:
        known = pl.all_horizontal(pl.col(key).is_not_null() for key in spec.keys)
        many = frame.filter(known & (pl.col(_SAMPLES) > 1)).sort(spec.keys)
        if many.height:
            row = many.row(0, named=True)
            raise sampled_error(sample, describe_query(row, spec), row[_SAMPLES])
        frame = frame.drop(_SAMPLES)
    frame = _raise_on_bad_scores(frame, spec.query_id, spec.score or "score")
    _raise_above_bound(frame, spec.query_id, spec.score or "score")
    if auto and (frame.get_column(_NEG) == 2).any():
        raise MetricParameterError(
            f"metric {auto[0]!r} needs a distance that is 0 for the query itself, and the "
            f"scores of the neighbors exceed 1: neither -score (knn's l2 runs, every score "
            "<= 0) nor 1 - score (cosine similarities) is one (a dot product has no such "
            "distance); pass distance=neg_score or distance=one_minus_score if one is "
            "meant, or measure neighbor_recall@k"
        )
    _warn_on_reading(frame, auto, spec.query_id)
    frame = frame.drop(_as_cosine(label) for label in auto)
    truth = [c for c in frame.columns if c.startswith(_TRUTH_FLAG)]
    checked = raise_on_bad_rows(frame.drop(truth), spec, check_rows=_CHECK)
    judged = frame.filter(pl.col(_JUDGED)).select(
        *spec.keys,
        _JUDGED,
        _RETRIEVED,
        _CHECK,
        *(pl.col(c).alias(flag(c.removeprefix(_TRUTH_FLAG))) for c in truth),
    )
    as_neighbors = replace(
        spec, frames=("neighbors", "neighbors"), unjudged="drop", unretrieved="zero", unplaced=()
    )
    raise_on_bad_rows(judged, as_neighbors, check_rows=_CHECK)
    _raise_above_one(checked, spec, labels)
    _warn_on_short(frame, labels, cutoffs or [], spec.query_id)
    keep = pl.col(_JUDGED) if spec.unjudged != "zero" else pl.lit(True)
    if spec.unretrieved == "drop":
        keep = keep & pl.col(_RETRIEVED)
    return checked.filter(keep).select(
        *spec.keys, *(pl.col(label).fill_null(0.0) for label in labels)
    )


def _warn_on_reading(frame: pl.DataFrame, auto: list[str], query_id: str) -> None:
    """Say what ``distance='auto'`` assumed where the data cannot settle it and the
    value depends on it: every score of neighbors= at most 0 is read as negated
    distances (``-score``, knn's ``l2`` runs), but every one is also at least -1, as
    cosine similarities of vectors pointing apart are, and read so (``1 - score``) a
    query's value differs (the first such label and query, in query order)."""
    if not auto:
        return
    read = frame.filter((pl.col(_NEG) == 0) & pl.col(_RANGE))
    for label in auto:
        other = pl.col(_as_cosine(label))
        differ = read.filter(pl.col(label).ne_missing(other)).sort(query_id)
        if not differ.height:
            continue
        row = differ.row(0, named=True)
        warn_from_plan(
            f"metric {label!r} (distance='auto') read the scores of neighbors= as negated "
            "distances (distance -score, as knn's l2 runs score: every score is <= 0); "
            "every one is also >= -1, as cosine similarities can be, and read as such "
            f"(distance 1 - score) its value differs (query {row[query_id]!r}: "
            f"{row[label]!r}, else {row[_as_cosine(label)]!r}): say which they are with "
            "distance=neg_score (negated distances) or distance=one_minus_score (cosine "
            "similarities), e.g. neighbor_recall_rel(distance=neg_score)@k",
            IrmWarning,
        )
        return


def _warn_on_short(
    frame: pl.DataFrame, labels: list[str], cutoffs: list[int], query_id: str
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` for each label whose ``k`` is
    above the ``n`` neighbours neighbors= holds of a query whose first ``k`` documents
    of the run number more than ``n``: the corpus holds more documents than that list,
    so it was cut shorter than ``k`` (``knn(k=10)`` measured at ``@100``), and the
    recall, which reads ``n`` and the ``n``-th true distance for ``k`` and the ``k``-th
    (right for a corpus of fewer than ``k`` documents), is of another depth there,
    inflated in silence."""
    judged = frame.filter(pl.col(_JUDGED))
    for label, k in zip(labels, cutoffs, strict=True):
        listed = pl.col(_listed(k))
        short = judged.filter((pl.col(_N) < k) & (listed > pl.col(_N))).sort(query_id)
        if not short.height:
            continue
        row = short.row(0, named=True)
        held = int(judged[_N].min())  # type: ignore[arg-type]
        warn_from_plan(
            f"metric {label!r}: neighbors= holds fewer than {k} neighbours of "
            f"{short.height} of its {judged.height} queries whose first {k} documents of "
            f"the run are more (first: {row[query_id]!r}, {row[_N]} neighbours, "
            f"{row[_listed(k)]} documents of the run): the corpus holds more than "
            f"neighbors= lists, so it was cut shorter than {k}, and there the recall reads "
            "those n and the n-th true distance for k and the k-th (over min(k, n)), a "
            f"recall at depth n, not {k}: compute neighbors= with k >= {k} "
            f"(knn(..., k={k})), or ask for a cutoff every query has (@{held} or less)",
            IrmWarning,
        )


def _raise_above_one(frame: pl.DataFrame, spec: CheckSpec, labels: list[str]) -> None:
    """Refuse a recall above 1: where neighbors= holds ``n < k`` neighbours of a query,
    ``n`` and the largest of their distances stand for ``k`` and the ``k``-th, and the
    run's first ``k`` documents can hold more than ``n`` within that distance only if
    neighbors= lacks some documents within it, or the two tables' scores are not the
    same distances."""
    for label in labels:
        above = frame.filter(pl.col(label) > 1.0).sort(spec.keys)
        if above.height:
            query = above.row(0, named=True)[spec.query_id]
            raise InvalidValueError(
                f"metric {label!r} would be {above[label][0]!r} (above 1) for query "
                f"{query!r}: neighbors= holds fewer than k neighbours of it, and the run's "
                "first k documents hold more documents within the largest of their "
                "distances than neighbors= lists; give neighbors= every document within "
                "that distance (k neighbours per query), and scores of the same kind in "
                "both tables (knn's: -distance or a similarity)"
            )


#: What each table's score check refuses, and why (:func:`_raise_on_bad_scores`).
_BAD_SCORES = (
    (
        _BAD,
        "run",
        "null, NaN or +inf",
        "neighbour recall reads distances from scores (+inf: a document closer than "
        "any, found whatever the true distances; -inf, a document never found, is "
        "read as a miss)",
    ),
    (
        _TBAD,
        "neighbors",
        "null, NaN or infinite",
        "neighbour recall reads the k-th true distance from them (an infinite one "
        "would count every document of the run as found, or none)",
    ),
)


def _raise_on_bad_scores(frame: pl.DataFrame, query_id: str, score: str) -> pl.DataFrame:
    for column, what, values, why in _BAD_SCORES:
        bad = frame.filter(pl.col(column).cast(pl.Boolean).fill_null(False)).sort(query_id)
        if bad.height:
            raise InvalidValueError(
                f"column {score!r} of the {what} has {values} values in query "
                f"{bad[query_id][0]!r}; {why}: fill or drop those rows"
            )
    return frame
