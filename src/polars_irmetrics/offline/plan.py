"""``evaluate()``: every requested metric for every query, in one lazy polars plan.

The plan, for a run and judgments (qrels):

1. **Check the run** as given: rows with a null id, a bad rank or a bad score pass a
   filter into a small group-by (on clean data nothing does, and Parquet row groups
   are skipped by their statistics); the duplicate checks (a document twice in a
   query, a rank held twice) are a group-by per query, skipped with
   ``check_duplicates=False``. The count of documents per query (``num_ret``) joins
   that group-by only where a metric or a query-set policy reads it: with the default
   policies the queries evaluated are the judged ones.
2. **Judged rows**: the run inner-joined with the judgments (the hash table is built on
   the judgments), plus the judged documents it missed (an anti-join), so each judged
   document carries its position (null when not retrieved). Only judged rows take
   part in the metrics; unjudged retrieved documents only count in ``num_ret``.
3. **Positions**: the ``rank`` column as given, or ``score`` descending with ties
   broken by ``doc_id`` descending compared as text (trec_eval's rule), computed from
   a min and max rank of the scores per query and, for the judged rows that tie, a
   count of the tied documents with a greater id; ``depth`` keeps positions
   1..depth (trec_eval ``-M``).
4. **One group-by** over the judged rows (and one marker row per run query where
   ``num_ret`` is needed) computes every metric of every cutoff at once
   (:mod:`polars_irmetrics.metrics`). The rows
   are sorted by (query, rank) first and the queries numbered in that order, so the
   order-dependent columns (running counts, the ideal gains) are vectorised passes or
   windows on one integer. Every float sum is a fixed-point sum (exact in any order,
   :meth:`Scope.sum <polars_irmetrics.metrics.scope.Scope.sum>`), so the group-by is made of
   plain reductions and gives the same bits on any input layout, engine or number of
   buckets.
5. The data checks raise, the query-set policies apply, and ``per_query=False``
   averages per ``by`` group.

Nothing is collected before the caller's ``collect()`` (but the row count that
``buckets="auto-memory"`` reads from Parquet footers or an in-memory plan when the plan
is built); a DataFrame input is collected once at the end.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polars_irmetrics.errors import MetricParameterError, QuerySetError
from polars_irmetrics.ground.auto import resolve_buckets
from polars_irmetrics.ground.buckets import evaluate_in_buckets
from polars_irmetrics.ground.facts import SharedFacts, judged_join
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.partitions import (
    check_partition_column,
    evaluate_in_partitions,
    spanning_error,
)
from polars_irmetrics.ground.validate import (
    FOUND_DOCS,
    INTERNAL,
    JUDGED_DOCS,
    LISTED,
    ODD_DOCS,
    flag,
    raise_on_bad_rows,
    warn_on_coverage,
    with_group_check,
)
from polars_irmetrics.metrics.registry import MetricRequest, means
from polars_irmetrics.metrics.scope import PlanScope, judgment_flags
from polars_irmetrics.offline.attributes import with_query_attributes
from polars_irmetrics.offline.checks import (
    bad_rows,
    duplicate_checks,
    duplicate_counts,
    judged_rank_check,
    order_counts,
    raise_on_samples,
    recount,
    run_facts,
    sampled_rows,
    term_check,
)
from polars_irmetrics.offline.columns import (
    CHECK,
    FIRST,
    GROUP,
    HIGH,
    JUDGED,
    LOW,
    NUM_RET,
    RANK,
    REL,
    RETRIEVED,
    SRC,
    START,
)
from polars_irmetrics.offline.coverage import (
    Coverage,
    CoverageSink,
    docs_hint,
    id_hints,
    odd_docs,
    part_coverage,
    partly_hint,
)
from polars_irmetrics.offline.setup import Setup, resolve

__all__ = ["build_plan", "depth_cut"]

#: A judged table's ranked row without a label (a retrieved, unjudged document).
_UNJUDGED = f"{INTERNAL}unjudged"
#: The check row of a query under more than one value of ``partitioned_by=``
#: (:func:`_spanning`).
_SPANS = f"{INTERNAL}spans"


def build_plan(
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    *,
    queries: pl.LazyFrame | None = None,
    warn: bool | CoverageSink = True,
    facts: SharedFacts | None = None,
    gate: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None,
) -> pl.LazyFrame:
    """The offline wing's lazy plan: ``requests`` (parsed metrics, all of them per-query
    metrics of a run and judgments) over ``run`` and ``qrels`` (see the module
    docstring), ``options`` checked (:meth:`EvalOptions.build
    <polars_irmetrics.ground.options.EvalOptions.build>`), and the attributes of the
    queries in ``queries`` (:mod:`polars_irmetrics.offline.attributes`).

    ``warn``: when the plan is collected, a run (each system) that retrieves no judged
    document or misses most judged queries is warned about
    (:func:`~polars_irmetrics.ground.validate.warn_on_coverage`); ``False`` where a
    caller evaluates a part of the queries (an engine's partition) or warns itself; a
    function where an engine's part hands its coverage to the engine, which adds the
    parts up and warns once (:mod:`polars_irmetrics.offline.coverage`). ``facts``: the
    door's counts per ranking of the run, where another route of the call reads them
    too (:class:`~polars_irmetrics.ground.facts.SharedFacts`; the one-plan path only).
    ``gate``: the refusals of another table the call reads (the interactions' null ids,
    :func:`~polars_irmetrics.ground.validate.with_null_id_check`), put on the per-query
    values before this plan's warnings read them: a refused input warns of nothing."""
    options = _judged_only_option(requests, options)
    given = qrels  # the door's table, which its shared judged rows were joined with
    from_queries: tuple[str, ...] = ()
    if queries is not None:
        run, qrels, from_queries = with_query_attributes(run, qrels, queries, options)
    setup = resolve(run, qrels, options, from_queries, outputs=[label for label, _ in requests])
    buckets = options.buckets
    if buckets == "auto-memory":  # one plan or out of core, from the run's size
        buckets = resolve_buckets(run, options)
    query_id, doc_id = options.query_id, options.doc_id
    keys = list(setup.keys)
    run = run.with_columns(pl.col(c).cast(t) for c, t in setup.cast_ids.items())
    if qrels is not None:
        qrels = qrels.with_columns(
            pl.col(c).cast(t) for c, t in setup.cast_ids.items() if c in (query_id, doc_id)
        )

    groups = (
        run.select(setup.run_only_by).unique() if qrels is not None and setup.run_only_by else None
    )
    check_partition_column(run.collect_schema().names(), options.partitioned_by)
    sampled = options.sample_id
    if buckets is None:
        result = _per_query(
            run,
            qrels,
            groups,
            setup,
            requests,
            facts=facts,
            judged=_shared_judged(facts, given, run, setup),
            partitioned_by=options.partitioned_by,
            sample_id=options.sample_id,
        )
    elif options.partitioned_by is not None:  # whole queries per partition: no re-writing
        result = evaluate_in_partitions(
            run,
            qrels,
            groups,
            query_id=query_id,
            column=options.partitioned_by,
            evaluate_part=lambda r, q, g: _per_query(r, q, g, setup, requests, sample_id=sampled),
            schema=_per_query(run, qrels, groups, setup, requests).collect_schema(),
            progress=options.progress,
        )
    else:

        def evaluate_part(
            run: pl.LazyFrame, qrels: pl.LazyFrame | None, groups: pl.LazyFrame | None
        ) -> pl.LazyFrame:
            return _per_query(run, qrels, groups, setup, requests, sample_id=sampled)

        result = evaluate_in_buckets(
            run,
            qrels,
            groups,
            query_id=query_id,
            buckets=buckets,
            spill_dir=options.spill_dir,
            evaluate_part=evaluate_part,
            schema=evaluate_part(run, qrels, groups).collect_schema(),
            progress=options.progress,
        )
    if gate is not None:  # the call's other refusals before the warnings below
        result = gate(result)
    if callable(warn):  # an engine's part: its coverage, added up by the engine
        sink, judged, cut = warn, qrels, depth_cut(setup)
        result = result.map_batches(
            lambda frame: _handed(
                frame, sink, part_coverage(frame, run, judged, setup, options, cut)
            ),
            schema=result.collect_schema(),
        )
    elif warn:  # over every bucket's queries at once: one warning per run
        # the hints read the run's rows within depth= (a document below is not read)
        cut, systems = depth_cut(setup), options.system_keys
        hints = () if qrels is None else id_hints(run, qrels, setup, cut)
        docs = None if qrels is None else docs_hint(run, qrels, setup, systems, cut)
        partly = None if qrels is None else partly_hint(run, qrels, setup, systems, cut)
        result = result.map_batches(
            lambda frame: warn_on_coverage(
                frame,
                systems=options.system_keys,
                listed=LISTED,
                unretrieved=setup.check.unretrieved,
                hints=hints,
                docs=docs,
                partly=partly,
            ),
            schema=result.collect_schema(),
        )
        if qrels is not None and setup.check.judged_keys:  # judgments per group
            result = with_group_check(
                result,
                run,
                qrels,
                setup.check.judged_keys,
                system_keys=options.system_keys,
                unjudged=setup.check.unjudged,
                unretrieved=setup.check.unretrieved,
            )
    result = _kept(result, setup, requests)
    result = result.sort(keys)  # query order fixes the sums of the means
    labels = [label for label, _ in requests]
    if options.per_query:
        return result.select(*keys, *labels)
    summaries = means(requests)
    if setup.by:
        return result.group_by(list(setup.by), maintain_order=True).agg(summaries)
    return result.select(summaries)


def _shared_judged(
    facts: SharedFacts | None, qrels: pl.LazyFrame | None, run: pl.LazyFrame, setup: Setup
) -> pl.LazyFrame | None:
    """The door's run joined with the judgments
    (:meth:`~polars_irmetrics.ground.facts.SharedFacts.judged_frame`), where it is the
    join :func:`_per_query` makes: ranked by rank, one ranking per query, the run's
    documents all kept (not ``judged_only``), ``qrels`` the door's table as given;
    ``None`` elsewhere (the plan joins its own)."""
    if facts is None or setup.order != "rank" or setup.judged_only:
        return None
    query_id = setup.check.query_id
    if list(setup.keys) != [query_id] or list(setup.qrels_keys) != [query_id]:
        return None
    return facts.judged_frame(qrels, setup.rank, run.collect_schema(), setup.doc_id)


def depth_cut(setup: Setup) -> Callable[[pl.LazyFrame], pl.LazyFrame] | None:
    """With ``depth``, the rows of a run ranked within it (their positions as the plan
    gives them: :func:`_with_positions`), which the coverage hints read
    (:data:`~polars_irmetrics.offline.coverage.Cut`); ``None`` without."""
    depth = setup.depth
    if depth is None:
        return None

    def cut(rows: pl.LazyFrame) -> pl.LazyFrame:
        placed = _with_positions(rows, setup, lambda kept: kept)
        return placed.filter(pl.col(RANK) <= depth).drop(RANK)

    return cut


def _handed(frame: pl.DataFrame, sink: CoverageSink, coverage: Coverage) -> pl.DataFrame:
    sink(coverage)
    return frame


def _judged_only_option(
    requests: list[tuple[str, MetricRequest]], options: EvalOptions
) -> EvalOptions:
    """``options`` with ``judged_only`` set where the metric names say it
    (``AP(judged_only=True)``): every metric alike, since it changes the ranking."""
    flagged = [label for label, request in requests if request.judged_only]
    if not flagged or options.judged_only:
        return options
    if len(flagged) < len(requests):
        other = next(label for label, request in requests if not request.judged_only)
        raise MetricParameterError(
            f"metric {flagged[0]!r} says judged_only=True and {other!r} does not: it removes "
            "the unjudged documents from the run, for every metric of one evaluation; pass "
            "judged_only=True to irm.evaluate, or evaluate the two lists apart"
        )
    return options.replace(judged_only=True)


def _empty_checks(
    requests: list[tuple[str, MetricRequest]],
) -> dict[str, tuple[str, MetricRequest]]:
    """torchmetrics' empty_target_action='error': whether each query has a relevant
    document, per such metric (an internal column each), checked once the query set is
    known."""
    return {
        f"{INTERNAL}empty{i}": (label, request)
        for i, (label, request) in enumerate(requests)
        if request.empty == "error"
    }


def _kept(
    checked: pl.LazyFrame, setup: Setup, requests: list[tuple[str, MetricRequest]]
) -> pl.LazyFrame:
    """The checked per-query values of the queries the policies keep (``unjudged``,
    ``unretrieved``), the queries without a relevant document refused where a metric
    says so, and the coverage counts dropped."""
    check = setup.check
    keep = pl.lit(True)
    if check.unjudged == "drop":
        keep = keep & pl.col(JUDGED)
    if check.unretrieved == "drop":
        keep = keep & pl.col(RETRIEVED)
    kept = checked.filter(keep).drop(JUDGED_DOCS, FOUND_DOCS, LISTED, ODD_DOCS, strict=False)
    empty_checks = _empty_checks(requests)
    if not empty_checks:
        return kept
    schema = {c: t for c, t in kept.collect_schema().items() if c not in empty_checks}
    keys = list(setup.keys)
    return kept.map_batches(
        lambda frame: _raise_on_empty(frame, empty_checks, keys), schema=schema
    )


def _per_query(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    setup: Setup,
    requests: list[tuple[str, MetricRequest]],
    *,
    facts: SharedFacts | None = None,
    judged: pl.LazyFrame | None = None,
    partitioned_by: str | None = None,
    sample_id: str | None = None,
) -> pl.LazyFrame:
    """Checked per-query metric values of ``run`` (steps 1 to 5 of the module docstring;
    ``facts``: :func:`build_plan`'s; ``judged``: the run's rows joined with the
    judgments where the door made that join for every route, :func:`_shared_judged`).
    ``partitioned_by``: the one plan over a run said to keep each query whole in one
    value of that column; a query under two values (of
    the run, or of the run and the judgments where they carry the column) is refused
    when the plan runs (:func:`_spanning`), as the partitions' path and the engines
    refuse it. ``sample_id``: the column of a stochastic policy's sampled rankings
    (:attr:`~polars_irmetrics.ground.options.EvalOptions.sample_id`); where the run has
    it, a query under more than one of its values is refused when the plan runs
    (:func:`~polars_irmetrics.offline.checks.sampled_rows`): the metrics here read one
    ranking per query."""
    keys = list(setup.keys)
    doc_id, relevance = setup.doc_id, setup.relevance
    scope = PlanScope(RANK, REL, NUM_RET, group=GROUP, first=FIRST, start=START, tied=(LOW, HIGH))
    # Built first: they tell whether any formula reads num_ret or the tie groups.
    metric_exprs = [
        request.expr(scope, setup.relevance_level).alias(label) for label, request in requests
    ]
    empty_checks = _empty_checks(requests)
    ties = [LOW, HIGH] if scope.reads_ties else []
    if ties and setup.depth is not None:
        label = next(label for label, r in requests if dict(r.options).get("ties") == "average")
        raise MetricParameterError(
            f"metric {label!r}: ties='average' shares the gain of a tie group over its "
            f"positions, and depth={setup.depth} would cut a group in two; use a cutoff, "
            f"'{label.split('@')[0]}@{setup.depth}', instead of depth"
        )
    if ties and setup.order == "rank":
        label = next(label for label, r in requests if dict(r.options).get("ties") == "average")
        raise MetricParameterError(
            f"metric {label!r}: ties='average' shares the gain of documents with the same "
            f"score, and the {'judged table' if qrels is None else 'run'} is ordered by its "
            f"rank column {setup.rank!r}; evaluate by score: order='score' (and score=... "
            "to name the score column)"
        )
    # The checks and the counts read the run as given: only the join needs positions,
    # and ranking by score (a window over every row) is done once, for it alone.
    check = setup.check
    check_frames = [bad_rows(run, setup)]
    if partitioned_by is not None:
        check_frames.append(_spanning(run, qrels, check.query_id, partitioned_by))
    if sample_id is not None and sample_id in run.collect_schema():
        check_frames.append(sampled_rows(run, keys, sample_id))
    odd = qrels is not None and setup.doc_is_string
    if odd:  # the run's ids that are not their own fold, per query (partly_hint reads them)
        check_frames.append(odd_docs(run, keys, doc_id))
    # One row per query of the run (its num_ret), only where something needs it: a
    # formula, a query-set policy that looks at the run's queries, or a judged table.
    # With the defaults (unjudged='drop', unretrieved='zero') the queries evaluated are
    # the judged ones, whatever the run holds, so the run is not grouped for them.
    markers_needed = (
        qrels is None
        or scope.reads_num_ret
        or check.unjudged != "drop"
        or check.unretrieved != "zero"
        or bool(check.unplaced)  # which judged queries each group retrieved
    )
    markers = None
    if markers_needed:  # read whole by the counts and by the join: cached, read once
        run = run.cache()
    ranked_run = run  # the documents that are ranked (judged_only: the judged ones)
    # one group-by per ranking for the duplicate counts and the ranks' check against
    # the scores (order='auto' with both columns), where either is read
    counted = run_facts(run, setup, facts)
    against = order_counts(counted, setup)
    if against is not None:
        check_frames.append(against)
    if markers_needed:
        if setup.judged_only:
            ranked_run = _judged_only(run, qrels, setup)
            if check.check_duplicates:  # the run as given, unjudged documents too
                check_frames.append(duplicate_counts(counted, setup))
        if setup.judged_only or setup.depth is not None:
            markers = ranked_run.group_by(keys).agg(
                _num_ret(setup).alias(NUM_RET), *duplicate_checks(setup)
            )
        else:  # num_ret is every row with a rank (score): the checks' counts give it
            markers = duplicate_counts(counted, setup, num_ret=NUM_RET)
        if setup.judged_only:
            # a query of the run whose documents are all unjudged is still one of its
            # queries, with nothing retrieved (trec_eval -J: num_ret 0, every measure 0)
            markers = (
                run.select(keys)
                .unique()
                .join(markers, on=keys, how="left", nulls_equal=True)
                .with_columns(pl.exclude(keys).fill_null(0))
            )
    else:
        if setup.judged_only:
            ranked_run = _judged_only(run, qrels, setup)
        if check.check_duplicates:  # one row per query of the run: its query list too
            check_frames.append(
                duplicate_counts(counted, setup).with_columns(pl.lit(True).alias(LISTED))
            )

    within = pl.col(RANK) <= setup.depth if setup.depth is not None else None
    if qrels is None:  # a judged table: its own rows are the judgments
        ranked = _with_positions(ranked_run, setup, lambda rows: rows, keep_ties=bool(ties))
        # a ranked row without a label is a retrieved document nobody judged (a left
        # join of the run with the judgments): no judgment, as the run and qrels= give
        # it, its place in the ranking kept (a row with neither is refused)
        ranked = ranked.filter(pl.col(relevance).is_not_null() | pl.col(RANK).is_null())
        rank_col = pl.col(RANK) if within is None else pl.when(within).then(pl.col(RANK))
        judged = ranked.select(
            *keys, doc_id, pl.col(relevance).alias(REL), rank_col.alias(RANK), *ties
        )
    else:
        judgments = qrels.select(*setup.qrels_keys, doc_id, pl.col(relevance).alias(REL))
        # The join matches the run on the judgments' own keys: with ``by`` keys the
        # judgments lack (several systems judged by one set of qrels), one hash table
        # of the judgments serves every group, and the runtime filter below still
        # applies. Only the judged documents a group missed need the judgments
        # crossed with the groups.
        joined_on = [*setup.qrels_keys, doc_id]
        per_group = judgments if groups is None else groups.join(judgments, how="cross")
        carried = [RANK] if setup.order == "rank" else [setup.score, LOW, HIGH]

        def join_judgments(rows: pl.LazyFrame) -> pl.LazyFrame:
            if judged is not None:  # the door's join, read by the exposure measures too
                rank = pl.col(setup.rank).cast(pl.Int64, strict=False)
                return judged.select(*keys, doc_id, rank.alias(RANK), pl.col(relevance).alias(REL))
            return judged_join(rows.select(*keys, doc_id, *carried), judgments, joined_on)

        found = _with_positions(ranked_run, setup, join_judgments, keep_ties=bool(ties)).select(
            *keys, doc_id, RANK, REL, *ties
        )
        if within is not None:
            found = found.filter(within)
        # read twice (below): one join, where polars' own common-plan elimination
        # missed it beside the catalogue's metrics (two joins of the whole run)
        found = found.cache()
        # the judged documents that were not retrieved (rank null)
        missed = per_group.join(
            found.select(*keys, doc_id), on=[*keys, doc_id], how="anti", nulls_equal=False
        )
        judged = pl.concat([found, missed], how="diagonal_relaxed")
    rows = judged.with_columns(pl.lit(1, pl.Int8).alias(SRC))
    if markers is not None:
        rows = pl.concat(
            [rows, markers.with_columns(pl.lit(0, pl.Int8).alias(SRC))],
            how="diagonal_relaxed",
        )
    # Ordering each query's rows by (rank, label) makes the window columns and every
    # floating-point sum the same from one run to the next: rows that tie on both carry
    # the same values, so their order cannot change a result.
    rows = rows.sort(
        [*keys, RANK, REL], descending=[False] * len(keys) + [False, True], nulls_last=True
    )
    # Queries numbered 1, 2, ... in that order, and each one's first row and its number.
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    first = pl.any_horizontal(pl.col(k).ne_missing(pl.col(k).shift()) for k in keys) | (row == 0)
    rows = rows.with_columns(first.alias(FIRST)).with_columns(
        pl.col(FIRST).cum_sum().alias(GROUP),
        pl.when(pl.col(FIRST)).then(row).forward_fill().alias(START),
    )
    if scope.derived:  # order-dependent per-row quantities, as window columns
        rows = rows.with_columns(scope.derived.values())
    if scope.terms:  # the terms of the float sums, which may read the columns above
        rows = rows.with_columns(scope.terms.values())
    if scope.running:  # the running sums of Scope.sum_in_order, which read the terms
        rows = rows.with_columns(scope.running.values())
    is_judgment = pl.col(SRC) == 1
    # the duplicate counts ride on the marker rows where there are any
    marker_flags = (
        [e.meta.output_name() for e in duplicate_checks(setup)] if markers is not None else []
    )
    per_query_frame = (
        rows.group_by(GROUP)
        .agg(
            *(pl.col(key).first() for key in keys),
            *metric_exprs,
            is_judgment.any().alias(JUDGED),
            (~is_judgment).any().alias(RETRIEVED),
            is_judgment.sum().cast(pl.Int64).alias(JUDGED_DOCS),
            (is_judgment & pl.col(RANK).is_not_null()).sum().cast(pl.Int64).alias(FOUND_DOCS),
            *(pl.col(name).max() for name in marker_flags),
            # the judgments' rows alone (not the markers'); a label whatever the
            # metrics: NaN (which polars orders above every number, so ``NaN >= level``
            # would hold), infinite, beyond or below the exact sums, or between -1 and 0
            *(
                count.alias(flag(name))
                for name, count in judgment_flags(pl.col(doc_id), pl.col(REL), is_judgment).items()
            ),
            *judged_rank_check(setup),
            *term_check(scope),
            *(
                request.no_relevant(scope, setup.relevance_level).alias(name)
                for name, (_, request) in empty_checks.items()
            ),
        )
        .drop(GROUP)
    )
    # The run's own checks are small frames of their own (one row per query with a bad
    # row, or per query of the run for the duplicate checks), checked beside the
    # per-query values and then dropped: a query of the run that no judgment names is
    # checked too.
    seen = [pl.lit(True).alias(c) for c in (CHECK, JUDGED, RETRIEVED)]
    combined = pl.concat(
        [
            per_query_frame.with_columns(pl.lit(False).alias(CHECK)),
            *(frame.with_columns(seen) for frame in check_frames),
        ],
        how="diagonal_relaxed",
    )

    run_schema = run.collect_schema()
    checked_schema = {
        **{key: run_schema[key] for key in keys},
        **{label: _dtype(req) for label, req in requests},
        JUDGED: pl.Boolean(),
        RETRIEVED: pl.Boolean(),
        JUDGED_DOCS: pl.Int64(),
        FOUND_DOCS: pl.Int64(),
        **{name: pl.Boolean() for name in empty_checks},
    }
    if odd:
        checked_schema[ODD_DOCS] = pl.Int64()
    listed_from_checks = markers is None and check.check_duplicates
    if listed_from_checks:
        checked_schema[LISTED] = pl.Boolean()
    recounts = recount(run, setup)

    def raising(frame: pl.DataFrame) -> pl.DataFrame:
        frame = raise_on_samples(frame, check, sample_id)
        spanning = frame.get_column(_SPANS, default=None)
        if spanning is None:
            return raise_on_bad_rows(frame, check, check_rows=CHECK, recount=recounts)
        spans = spanning.fill_null(False)
        queries = frame.filter(spans).get_column(check.query_id).sort()
        frame = frame.filter(~spans).drop(_SPANS)
        checked = raise_on_bad_rows(frame, check, check_rows=CHECK, recount=recounts)
        if queries.len() and partitioned_by is not None:  # as the partitions' path: last
            raise spanning_error(partitioned_by, check.query_id, queries[0])
        return checked

    checked = combined.map_batches(raising, schema=checked_schema)
    if listed_from_checks:
        return checked
    # the run's query list: its markers where the plan has them, else unknown (null)
    listed = pl.col(RETRIEVED) if markers is not None else pl.lit(None, pl.Boolean)
    return checked.with_columns(listed.alias(LISTED))


def _spanning(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, query_id: str, column: str
) -> pl.LazyFrame:
    """The queries (one row each, ``_SPANS`` true) found under more than one value of
    ``column`` (null a value of its own) in the run, and in the judgments where they
    carry the column too: a count of the distinct values of each query, read beside
    the plan's other checks (one small group-by of two columns).

    >>> run = pl.LazyFrame({"query_id": ["q1", "q1", "q2"], "part": [0, 1, 1]})
    >>> _spanning(run, None, "query_id", "part").collect().rows()
    [('q1', True)]
    """
    placed = [run.select(query_id, column)]
    if qrels is not None and column in qrels.collect_schema():
        placed.append(qrels.select(query_id, column))
    values = pl.concat(placed, how="vertical_relaxed").filter(pl.col(query_id).is_not_null())
    counted = values.group_by(query_id).agg(pl.col(column).n_unique().alias(_SPANS))
    return counted.filter(pl.col(_SPANS) > 1).select(query_id, pl.lit(True).alias(_SPANS))


def _raise_on_empty(
    frame: pl.DataFrame, checks: dict[str, tuple[str, MetricRequest]], keys: list[str]
) -> pl.DataFrame:
    """Refuse a query without a relevant document for a metric that says
    ``empty_target_action='error'`` (torchmetrics' ``ValueError``), else drop the checks."""
    for name, (label, _) in checks.items():
        empty = frame.filter(pl.col(name)).sort(keys)
        if empty.height:
            row = empty.row(0, named=True)
            query = row[keys[-1]]
            # the system and by keys of the query, where the table has them
            where = "".join(f", {key}={row[key]!r}" for key in keys[:-1])
            raise QuerySetError(
                f"metric {label!r}: query {query!r}{where} has no relevant document, and "
                "empty_target_action='error' refuses such a query (as torchmetrics' "
                f"empty_target_action does; queries without one: {empty.height}). Choose "
                "empty_target_action='skip' (left out of the mean), 'neg' (0) or 'pos' (1)"
            )
    return frame.drop(list(checks))


def _judged_only(run: pl.LazyFrame, qrels: pl.LazyFrame | None, setup: Setup) -> pl.LazyFrame:
    """The run without its unjudged documents (ir_measures' ``judged_only=True``,
    trec_eval ``-J``): those with no judgment, or a negative one (trec_eval's "in the
    pool, not judged"), are removed before the positions are given, so the positions
    close up (by rank: 1, 2, ... in the order of the given ranks) and ``num_ret``
    counts the judged documents. A judged table keeps its rows
    with a label of 0 or more; a ranked row without a label is unjudged and removed
    (one with neither a rank nor a label stays, for the checks to refuse).

    With ``depth``, the run is cut to its top ``depth`` documents first, and the judged
    ones among them are kept (trec_eval's form_res_rels.c truncates the sorted results
    to ``-M`` before it drops the unjudged ones): ``depth=2`` over unjudged, judged,
    judged keeps one document, not two. A judged table's rows are its judgments too:
    those below the depth stay, without a score (rank), judged and not retrieved."""
    label = pl.col(setup.relevance)
    order = setup.score if setup.order == "score" else setup.rank
    if qrels is None:  # a ranked row without a label is unjudged: removed (below)
        run = run.with_columns((label.is_null() & pl.col(order).is_not_null()).alias(_UNJUDGED))
    if setup.depth is not None:
        within = pl.col(RANK) <= setup.depth
        placed = _with_positions(run, setup, lambda rows: rows)
        if qrels is None:
            run = placed.with_columns(pl.when(within).then(pl.col(order)).alias(order))
        else:
            run = placed.filter(within)
        run = run.drop(RANK)
    if qrels is None:
        kept = run.filter(~pl.col(_UNJUDGED) & (label.is_null() | (label >= 0))).drop(_UNJUDGED)
    else:
        judged = qrels.filter(label >= 0).select(*setup.qrels_keys, setup.doc_id).unique()
        on = [*setup.qrels_keys, setup.doc_id]
        kept = run.join(judged, on=on, how="semi", nulls_equal=False)
    if setup.order == "score":  # positions are given from the scores of the kept rows
        return kept
    # the ranks close up: 1, 2, ... in the order of the given ranks
    rank = pl.col(setup.rank)
    return kept.with_columns(
        rank.rank("min").over(list(setup.keys)).cast(pl.Int64).alias(setup.rank)
    )


def _dtype(request: MetricRequest) -> pl.DataType:
    return pl.Int64() if request.metric.integer else pl.Float64()


def _with_positions(
    run: pl.LazyFrame,
    setup: Setup,
    keep: Callable[[pl.LazyFrame], pl.LazyFrame],
    *,
    keep_ties: bool = False,
) -> pl.LazyFrame:
    """The rows ``keep`` takes from the run, with their position in ``RANK`` (1 = top).

    ``keep_ties`` (by score only) keeps each row's tie group, its first and last
    position (``LOW``, ``HIGH``), for the tie-averaged gains (``ties='average'``).

    ``keep`` (a join with the judgments, or all rows of a judged table) must keep the
    key, id and order columns. By rank, the position is the rank. By score, it is 1 +
    the documents of the query with a higher score + those with the same score and a
    greater id compared as text (trec_eval). The first two terms are a ``rank("min")``
    of the scores within the query, and a ``rank("max")`` beside it (sharing the
    window's grouping) tells which documents tie: only the kept rows that tie are then
    matched with the query's other tied documents to count those with a greater id.
    A window ordered by (score, id) would sort every query's whole list by two keys,
    at several times the cost, to place documents that are mostly never read.
    """
    if setup.order == "rank":
        # not strict: a rank beyond Int64 (a UInt64 at 2**63 or more) is refused by the
        # data checks (big_rank), not by polars' cast
        rank = pl.col(setup.rank).cast(pl.Int64, strict=False)
        return keep(run.with_columns(rank.alias(RANK)))
    keys = list(setup.keys)
    score = setup.score
    doc = pl.col(setup.doc_id)
    text = doc if setup.doc_is_string else doc.cast(pl.String)
    low, high = pl.col(LOW), pl.col(HIGH)
    other, above = f"{INTERNAL}other", f"{INTERNAL}above"
    # cached, as is ``rows``: each is read twice (the tied rows are matched against it)
    windowed = run.with_columns(
        pl.col(score).rank("min", descending=True).over(keys).cast(pl.Int64).alias(LOW),
        pl.col(score).rank("max", descending=True).over(keys).cast(pl.Int64).alias(HIGH),
    ).cache()
    tied = (low != high).fill_null(False)
    rows = keep(windowed).cache()
    place = [*keys, setup.doc_id, score]
    ties = windowed.filter(tied).select(*keys, score, text.alias(other))
    ahead = (
        rows.filter(tied)
        .select(place)
        .unique()
        .join(ties, on=[*keys, score], how="inner", nulls_equal=False)
        .group_by(place)
        .agg((pl.col(other) > text).sum().cast(pl.Int64).alias(above))
    )
    return (
        rows.join(ahead, on=place, how="left", nulls_equal=False)
        .with_columns((low + pl.col(above).fill_null(0)).alias(RANK))
        .drop(above if keep_ties else [LOW, HIGH, above])
    )


def _num_ret(setup: Setup) -> pl.Expr:
    """Documents retrieved for a query, within ``depth``, from the run as given.

    Ranked by score, the positions are 1..n over the n documents with a score, so
    ``depth`` keeps min(n, depth) of them.
    """
    if setup.order == "rank":
        rank = pl.col(setup.rank)
        kept = rank.count() if setup.depth is None else (rank <= setup.depth).sum()
    else:
        kept = pl.col(setup.score).count()
        if setup.depth is not None:
            kept = pl.min_horizontal(kept, pl.lit(setup.depth))
    return kept.cast(pl.Int64)
