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

import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.exposure.awrf import awrf_values, exact_sum, target_flags
from polars_irmetrics.exposure.rnd import segregation_values
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import check_numeric, id_kind, require_columns
from polars_irmetrics.metrics.fairness import AWRF_LENGTH, UTILITY
from polars_irmetrics.metrics.registry import MetricRequest

__all__ = ["build_exposure_plan", "exposure_means"]

Requests = list[tuple[str, MetricRequest]]

_S, _POS, _REL, _T, _E, _G, _BAD = "__s", "__pos", "__rel", "__t", "__e", "__g", "__bad"
_KINDS = {"ee_disparity": "disparity", "ee_relevance": "relevance", "ee_loss": "loss"}
_AWRF = frozenset({"awrf", "awrf_ndcg"})
_SEGREGATION = frozenset({"rnd", "rkl", "rrd"})


def build_exposure_plan(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    requests: Requests,
    options: EvalOptions,
    target: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Per-query expected-exposure values (``options.per_query``), keyed by
    ``query_id``, or their means with ``num_q``; lazy, nothing collected.

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
    if options.by_keys:
        raise InvalidValueError(
            "by= and systems= are not available for the expected-exposure measures; "
            "evaluate each system's run in a call of its own"
        )
    if qrels is None:  # rnd, rkl, rrd alone read no judgments: an empty table stands in
        qrels = run.select(query_id, doc_id, pl.lit(1.0).alias(options.relevance)).head(0)
    run_schema, qrels_schema = run.collect_schema(), qrels.collect_schema()
    hint = "name the columns with query_id=, doc_id=, rank=, score=, relevance="
    require_columns(run_schema, [query_id, doc_id], "run", hint)
    require_columns(qrels_schema, [query_id, doc_id, options.relevance], "judgments", hint)
    use_rank = options.order == "rank" or (options.order == "auto" and options.rank in run_schema)
    order = options.rank if use_rank else options.score
    require_columns(run_schema, [order], "run", hint)
    check_numeric(run_schema, order, "run", integer=False)
    check_numeric(qrels_schema, options.relevance, "judgments", integer=False)
    for column in (query_id, doc_id):
        _same_kind(run_schema, qrels_schema, column, "judgments")
    if groups is not None:
        group_schema = groups.collect_schema()
        require_columns(group_schema, [doc_id, "group"], "groups", "one row per (document, group)")
        _same_kind(run_schema, group_schema, doc_id, "groups")
    fair = [(label, r) for label, r in requests if r.metric.name in _AWRF]
    segregation = [(label, r) for label, r in requests if r.metric.name in _SEGREGATION]
    if (fair or segregation) and groups is None:
        first = (fair or segregation)[0][0]
        raise MetricParameterError(
            f"metric {first!r} reads document groups: pass groups=... (one row per "
            "(document, group)) to irm.evaluate"
        )
    if target is not None:
        target_schema = target.collect_schema()
        require_columns(target_schema, ["group", "target"], "target", "one row per group")
        id_kind(target_schema, "group", "target")
        check_numeric(target_schema, "target", "target", integer=False)
    sampled = options.sample_id in run_schema
    sample = pl.col(options.sample_id) if sampled else pl.lit(0)
    ranked = run.select(
        pl.col(query_id),
        sample.alias(_S),
        pl.col(doc_id),
        pl.col(order).cast(pl.Float64).alias(order),
    )
    relevant = qrels.select(
        query_id, doc_id, pl.col(options.relevance).cast(pl.Float64).alias(_REL)
    ).filter(pl.col(_REL) > 0)
    checks = _checks(ranked, groups, query_id, doc_id, order, sampled, longest=bool(fair))
    if target is not None:
        checks = pl.concat([checks, target_flags(target)], how="horizontal")
    values: pl.LazyFrame | None = None
    # one sort: each ranking in order with the relevance of its documents (joined
    # first: cheaper than a join that keeps the order after the sort), its positions
    # (0-based) over all its documents
    ordered = (
        ranked.join(
            relevant.select(query_id, doc_id, _REL),
            on=[query_id, doc_id],
            how="left",
            coalesce=True,
        )
        .sort([query_id, _S, order, doc_id], descending=[False, False, not use_rank, True])
        .with_columns(_positions(query_id).alias(_POS))
        .cache()
    )
    if segregation and groups is not None:
        values = segregation_values(ordered, groups, query_id, doc_id, segregation)
    # the judged queries' rankings, still in order (the positions stay those of the
    # whole ranking: a query is kept or left out whole)
    ranked = ordered.join(
        relevant.select(query_id).unique(), on=query_id, how="semi", maintain_order="left"
    ).cache()
    if fair and groups is not None:
        fair_values = awrf_values(ranked, relevant, groups, target, query_id, doc_id, fair)
        values = (
            fair_values
            if values is None
            else values.join(fair_values, on=query_id, how="full", coalesce=True)
        )
    exposure_requests = [
        (label, r) for label, r in requests if r.metric.name not in _AWRF | _SEGREGATION
    ]
    for (browsing, patience), labels in _by_model(exposure_requests).items():
        per_query = _model_values(
            ranked, relevant, groups, query_id, doc_id, browsing, patience, sampled=sampled
        ).select(
            query_id,
            *(pl.col(_KINDS[requests_name]).alias(label) for label, requests_name in labels),
        )
        values = (
            per_query
            if values is None
            else values.join(per_query, on=query_id, how="full", coalesce=True)
        )
    if values is None:  # pragma: no cover - the door routes only requested metrics here
        raise InvalidValueError("no expected-exposure metric requested")
    schema = values.collect_schema()
    checked = (
        values.join(checks, how="cross")
        .map_batches(lambda frame: _raise_on_bad(frame, options.sample_id), schema=schema)
        .select(schema.names())
    )
    # sorted by query before the means too: their running sums in one order
    checked = checked.sort(query_id)
    if options.per_query:
        return checked
    return exposure_means(checked, requests)


def exposure_means(per_query: pl.LazyFrame, requests: Requests) -> pl.LazyFrame:
    """``num_q`` and each measure's summary of per-query values sorted by query (a
    running sum in that order: the same bits from one plan or from parts merged)."""
    return per_query.select(
        pl.len().cast(pl.Int64).alias("num_q"),
        *(request.summarize(label) for label, request in requests),
    )


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


def _same_kind(left: pl.Schema, right: pl.Schema, column: str, what: str) -> None:
    kinds = id_kind(left, column, "run"), id_kind(right, column, what)
    if kinds[0] != kinds[1]:
        raise ColumnTypeError(
            f"column {column!r} is {left[column]} in the run and {right[column]} in the "
            f"{what}; the ids must be of one kind to match: cast one, e.g. "
            f"pl.col({column!r}).cast(pl.String)"
        )


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
                (pl.lit(decay).pow(pl.col("b")) - pl.lit(decay).pow(pl.col("b") + pl.col("m")))
                / (pl.col("m") * (1.0 - decay))
            ).alias(_T)
        )
    )
    target = relevant.join(levels.select(query_id, _REL, _T), on=[query_id, _REL]).select(
        query_id, doc_id, _T
    )
    # the run: exposure per position, averaged over the query's samples
    exposure = pl.lit(patience).pow(pl.col(_POS))
    if browsing == "geometric":
        relevant_flag = pl.col(_REL).is_not_null().cast(pl.Int64)
        above = relevant_flag.cum_sum().over(query_id, _S) - relevant_flag
        exposure = exposure * pl.lit(1.0 - UTILITY).pow(above)
    scored = ranked.with_columns(exposure.alias(_E))
    if sampled:
        scored = scored.with_columns(pl.col(_S).n_unique().over(query_id).alias("n"))
    if groups is not None:  # only the relevant documents' exposure counts
        scored = scored.filter(pl.col(_REL).is_not_null())
    if sampled:
        expected = scored.group_by(query_id, doc_id).agg(
            (exact_sum(pl.col(_E)) / pl.col("n").first()).alias(_E)
        )
    else:  # one ranking per query, a document once in it: its exposure as it is
        expected = scored.select(query_id, doc_id, _E)
    if groups is None:
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


def _checks(
    ranked: pl.LazyFrame,
    groups: pl.LazyFrame | None,
    query_id: str,
    doc_id: str,
    order: str,
    sampled: bool,
    *,
    longest: bool = False,
) -> pl.LazyFrame:
    """One row of first offenders (null when none), raised by :func:`_raise_on_bad`."""
    query = pl.col(query_id).cast(pl.String)
    per_ranking = ranked.group_by(query_id, _S).agg(
        (pl.col(doc_id).n_unique() < pl.len()).alias("dup"),
        (pl.col(order).is_null() | pl.col(order).is_nan()).any().alias("bad"),
        (pl.len() > AWRF_LENGTH).alias("long"),
    )
    flags = [
        query.filter(pl.col("dup")).min().alias(f"{_BAD}|duplicate doc"),
        query.filter(pl.col("bad")).min().alias(f"{_BAD}|bad value|{order}"),
    ]
    if sampled:
        flags.append(query.filter(pl.col(_S).is_null()).min().alias(f"{_BAD}|null sample"))
    if longest:
        flags.append(query.filter(pl.col("long")).min().alias(f"{_BAD}|long ranking"))
    rows = [per_ranking.select(flags)]
    if groups is not None:
        doubled = groups.group_by(doc_id, "group").agg(pl.len().alias("n")).filter(pl.col("n") > 1)
        rows.append(
            doubled.select(pl.col(doc_id).cast(pl.String).min().alias(f"{_BAD}|duplicate group"))
        )
    return pl.concat(rows, how="horizontal")


def _raise_on_bad(frame: pl.DataFrame, sample: str) -> pl.DataFrame:
    flags = [name for name in frame.columns if name.startswith(f"{_BAD}|")]
    first = frame.select(flags).row(0) if frame.height else (None,) * len(flags)
    for name, value in zip(flags, first, strict=True):
        if value is None:
            continue
        _, kind, *column = name.split("|")
        if kind == "duplicate doc":
            raise DuplicateError(
                f"the run lists a document twice in one ranking of query {value!r}; a "
                f"ranking (one query and {sample!r}) holds each document once: drop the "
                "duplicates"
            )
        if kind == "null sample":
            raise InvalidValueError(
                f"column {sample!r} of the run has null values in query {value!r}; each "
                "row belongs to one sampled ranking: fill or drop those rows"
            )
        if kind == "long ranking":
            raise InvalidValueError(
                f"a ranking of query {value!r} holds more than {AWRF_LENGTH} documents; "
                f"awrf and awrf_ndcg score rankings of at most {AWRF_LENGTH} (wptrec's "
                "target_len): cut the run, e.g. keep the top 500 of each query"
            )
        if kind == "bad target":
            raise InvalidValueError(
                f"the target (target=) gives group {value!r} a negative, null or NaN value "
                "in column 'target'; a target is a distribution over groups: give every "
                "group a value >= 0"
            )
        if kind == "target sum":
            raise InvalidValueError(
                f"the target (target=) sums to {value} in column 'target'; a target is a "
                "distribution over groups: divide each value by the sum so they sum to 1"
            )
        if kind == "duplicate target":
            raise DuplicateError(
                f"the target (target=) lists group {value!r} twice in column 'group'; one "
                "row per group: drop or add up the duplicates"
            )
        if kind == "duplicate group":
            raise DuplicateError(
                f"the groups table (groups=) lists document {value!r} twice in one group "
                "(column 'group'); one row per (document, group): drop the duplicates, "
                "e.g. .unique()"
            )
        raise InvalidValueError(
            f"column {column[0]!r} of the run has null or NaN values in query {value!r}; "
            "rankings are read from it: fill or drop those rows"
        )
    return frame.drop(flags)
