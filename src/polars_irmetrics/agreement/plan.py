"""The plan of the rank-similarity metrics: a run against a reference run.

``irm.evaluate(run, ["rbo", "jaccard@10"], reference=other_run)`` comes here
(:func:`build_agreement_plan`). One lazy plan: each side ordered and cut once per
cutoff, joined document by document per query, and each metric's per-query value
computed by group-bys (RBO: :mod:`polars_irmetrics.agreement.rbo`; the τ measures: one
row per pair of shared documents of a query, so their cost grows with ``k²``); means
per ``by`` group on top. The formulas are declared in
:mod:`polars_irmetrics.metrics.agreement`.

Rows: the queries of the run and of the reference, under the query-set policies (the
reference plays the judgments' part): ``unjudged`` for a query the reference lacks,
``unretrieved`` for one the run lacks (``"zero"``: the value against an empty ranking,
:func:`empty_value`: 0, but 1 for RBO's upper bound and residual, null for the
correlations). ``by`` and ``systems``
keys the reference also has are matched; otherwise the reference serves every group of
the run (many systems against one reference); a ``by`` key (an attribute of the query)
the reference lacks is refused where a query of the reference some group did not
retrieve cannot be placed (:func:`~polars_irmetrics.ground.validate.raise_unplaced`),
unless ``unretrieved='drop'``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from polars_irmetrics.agreement.coverage import (
    documents_tally,
    empty_value,
    queries_hint,
    queries_tally,
    warn_on_queries,
)
from polars_irmetrics.agreement.keys import check_result_keys
from polars_irmetrics.agreement.rbo import BA, BB, NA, NB, TA, TB, RboSpec, rbo_values
from polars_irmetrics.agreement.ties import tied_column, tied_columns, with_ties_warning
from polars_irmetrics.errors import (
    ColumnTypeError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.ground.facts import (
    WIDE_INTEGERS,
    against_value,
    disagreements,
    score_order,
)
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import (
    INTERNAL,
    ListOrder,
    check_numeric,
    flag_error,
    id_kind,
    id_kinds_error,
    is_text,
    key_dtype_error,
    kind_of,
    null_key_error,
    numeric_cast_fix,
    ordered,
    raise_unplaced,
    rank_against,
    require_columns,
    sampled_error,
    with_common_ids,
    with_tally,
    with_tally_and_values,
)
from polars_irmetrics.metrics._common import divide
from polars_irmetrics.metrics.agreement import rbo_p, repro_eval_depths
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import fixed_sum

__all__ = [
    "agreement_means",
    "build_agreement_plan",
    "empty_value",
    "reference_queries",
]

_DOC, _POS, _T, _B = (f"{INTERNAL}doc", f"{INTERNAL}pos", f"{INTERNAL}t", f"{INTERNAL}b")
_PA, _PB = f"{INTERNAL}pa", f"{INTERNAL}pb"
_TEXT = f"{INTERNAL}doc_text"
_INTERSECTION = "intersection"  # RecTools': cut by rank value, the two sides apart
_BAD = f"{INTERNAL}bad"
Requests = list[tuple[str, MetricRequest]]
#: The tables as the rank checks name them (the ranking metrics' words, RUN_FLAGS).
_FRAMES = {"run": "run", "reference": "reference (reference=)"}


def build_agreement_plan(
    run: pl.LazyFrame,
    reference: pl.LazyFrame,
    requests: Requests,
    options: EvalOptions,
    *,
    warn: bool = True,
    groups: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Per-query similarity (``options.per_query``), keyed by ``(by..., query_id)``, or
    its means per ``by`` group with ``num_q``; lazy, nothing collected. ``warn``: the
    warnings of a reference that lacks most of the run's queries and of the correlations
    null for their ties (:mod:`polars_irmetrics.agreement.ties`). A part of a split run
    does not give them (it holds some of the queries): its per-query values carry the
    ties' mark columns instead, which the whole counts and warns of once. ``groups``:
    the ``by`` groups a reference without those keys serves (default: the run's; a part
    of a split run is given the whole run's, so that a query only the reference holds is
    scored for every group).

    Examples
    --------
    The run swaps the reference's first two documents and replaces its third:

    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> ref = pl.LazyFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> run = pl.LazyFrame({"query_id": ["q"] * 3, "doc_id": ["b", "a", "x"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> requests = parse_metric_list(["jaccard@3", "overlap@3", "kendall_tau@3"])
    >>> build_agreement_plan(run, ref, requests, EvalOptions()).collect().row(0)
    (1, 0.5, 0.6666666666666666, -1.0)
    """
    query_id, doc_id, score = options.query_id, options.doc_id, options.score
    by = list(options.by_keys)
    check_result_keys(requests, options)
    keys = [*by, query_id]
    run_schema, ref_schema = run.collect_schema(), reference.collect_schema()
    hint = "name the columns with query_id=, doc_id=, rank=, score= and by= or systems="
    sides = []
    againsts: list[str | None] = []  # order='auto' reading ranks beside a score column
    for schema, what, need in ((run_schema, "run", keys), (ref_schema, "reference", [query_id])):
        require_columns(schema, [*need, doc_id], what, hint)
        use_rank = options.order == "rank" or (options.order == "auto" and options.rank in schema)
        order = options.rank if use_rank else score
        chosen = (
            f"; order={options.order!r} reads column {order!r} of the run and the reference: "
            f"name it with {'rank' if use_rank else 'score'}=, or choose order="
            if options.order != "auto"
            else ""
        )
        require_columns(schema, [order], what, hint + chosen)
        if use_rank:  # as a ranking metric checks a run's ranks (intersection cuts by them)
            check_numeric(schema, order, _FRAMES[what], integer=True)
        if not (schema[order].is_numeric() or schema[order] == pl.Boolean):  # as evaluate's
            raise ColumnTypeError(
                f"column {order!r} in the {what} has dtype {schema[order]}; rankings are "
                f"read from it: {numeric_cast_fix(order, schema[order])}"
            )
        sides.append((use_rank, order))
        againsts.append(rank_against(schema, options.order, options.rank, options.score))
    for column in (query_id, doc_id):
        kinds = id_kind(run_schema, column, "run"), id_kind(ref_schema, column, "reference")
        if kinds[0] != kinds[1]:  # worded as every route words it
            raise id_kinds_error(column, run_schema, "run", ref_schema, "reference")
    # a by key both sides carry: of one dtype, or ids of one kind cast to one (a join of
    # Int64 with String is polars' error)
    cast_keys = []
    for key in by:
        if key not in ref_schema or run_schema[key] == ref_schema[key]:
            continue
        kind = kind_of(run_schema[key])
        if kind is None or kind != kind_of(ref_schema[key]):
            raise key_dtype_error(
                key, run_schema[key], "the run", ref_schema[key], "the reference"
            )
        cast_keys.append(key)
    # one dtype per id column on both sides, so that the joins match by value
    id_tables = {c: ["run", "reference"] for c in (query_id, doc_id, *cast_keys)}
    cast = with_common_ids({"run": run, "reference": reference}, id_tables)
    run, reference = cast["run"], cast["reference"]
    shared = [key for key in by if key in ref_schema]
    ref_keys = [*shared, query_id]
    run_side = _ordered(run, keys, doc_id, *sides[0])
    ref_side = _ordered(reference, ref_keys, doc_id, *sides[1])
    missing = [key for key in by if key not in ref_schema]
    if groups is None and missing and options.run_groups is not None:
        groups = _given_groups(options.run_groups, missing, run_schema)  # the whole run's
    every = run.select(missing).unique() if groups is None else groups.select(missing).unique()
    if missing:  # one reference for every group of the run
        ref_side = ref_side.join(every, how="cross")
    # a side's sampled rankings (its sample_id= column), refused: read one per query here
    samples = [
        options.sample_id if options.sample_id in schema else None
        for schema in (run_schema, ref_schema)
    ]
    checks = _checks(
        run,
        reference,
        keys,
        ref_keys,
        query_id,
        doc_id,
        sides,
        samples,
        againsts=againsts,
        reference_lists=options.reference_lists,
    )
    # the reference's groups: the whole reference's where this is a part of a split run
    # (its queries split, a group's reference rows may sit in other parts)
    held = _held_groups(reference, shared, options)
    if shared:  # a reference per group: a group of the run it lacks is refused by name
        absent = run.select(shared).unique().join(held, on=shared, how="anti", nulls_equal=True)
        first = pl.struct(shared).sort().first().alias(f"{_BAD}|run|absent group")
        checks = pl.concat([checks, absent.select(first)], how="horizontal")
    labels = [label for label, _ in requests]
    raw_ref = reference_queries(reference, keys, every if missing else None)
    per_query = _query_set(run.select(keys), raw_ref, keys, options)
    cut = [(label, r) for label, r in requests if r.metric.name != _INTERSECTION]
    for cutoff, group in _by_cutoff(cut).items():
        values = _values(run_side, ref_side, keys, cutoff, group)
        per_query = per_query.join(values, on=keys, how="left", nulls_equal=True)
    for label, request in requests:
        if request.metric.name == _INTERSECTION:
            values = _intersection(run_side, ref_side, keys, sides, label, request)
            per_query = per_query.join(values, on=keys, how="left", nulls_equal=True)
    both = pl.col(NA).is_not_null() & pl.col(NB).is_not_null()
    per_query = per_query.with_columns(
        pl.when(both)
        .then(pl.col(label))
        .otherwise(pl.lit(empty_value(request), pl.Float64))
        .alias(label)
        for label, request in requests
    )
    # by= keys (attributes of the query) the reference lacks: a query of the reference
    # that some group did not retrieve cannot be placed (refused, as the judgments' are)
    unplaced = tuple(k for k in missing if k in options.attribute_keys)
    if options.unretrieved == "drop":
        unplaced = ()
    placed = [
        pl.col(NB).is_not_null().alias(_IN_REFERENCE),
        pl.col(NA).is_not_null().alias(f"{INTERNAL}retrieved"),
    ]
    # the queries a correlation is null on for its ties (False where it is not)
    marks = tied_columns(requests)
    if marks:
        per_query = per_query.with_columns(pl.col(marks).fill_null(False))
    result = per_query.select(*keys, *labels, *marks, f"{_BAD}_set", *(placed if unplaced else []))
    out_schema = result.select(*keys, *labels, *marks).collect_schema()
    # the checks' row read whatever rows the values hold: a part of a split run whose
    # queries the reference lacks (and a reference of no row) has none, and its bad rows
    # are refused all the same
    groups_hint = _groups_hint(held, shared, options)  # read on the error's path only
    checked = with_tally_and_values(
        result,
        checks,
        lambda flags, values: _raise_on_bad(values, flags, query_id, keys, unplaced, groups_hint),
    ).select(out_schema.names())
    if warn:
        systems = list(options.system_keys)
        queries = queries_tally(run.select(keys), raw_ref, keys, systems)
        docs = documents_tally(run.select(*systems, doc_id), reference, doc_id, systems)
        tally = pl.concat([queries, docs], how="horizontal")
        spelt = queries_hint(run, raw_ref, query_id)

        def say(row: Mapping[str, Any]) -> None:
            warn_on_queries(row, query_id, options, requests, spelt)

        checked = with_tally(checked, tally, say)
        checked = with_ties_warning(checked, requests, keys)
    # one row order (the joins' is the engine's), so the means' running sums have one order
    checked = checked.sort(keys)
    if options.per_query:
        return checked
    return agreement_means(checked, requests, by)


def reference_queries(
    reference: pl.LazyFrame, keys: list[str], every: pl.LazyFrame | None
) -> pl.LazyFrame:
    """The query keys of ``reference``: those of the run's ``keys`` (``by`` keys, then the
    query id) it has, crossed with ``every`` group of the run whose ``by`` keys it lacks
    (``None``: it lacks none), as each of those groups is scored against it."""
    names = reference.collect_schema().names()
    queries = reference.select(key for key in keys if key in names)
    return queries if every is None else queries.join(every, how="cross")


def agreement_means(values: pl.LazyFrame, requests: Requests, by: list[str]) -> pl.LazyFrame:
    """The means of per-query ``values`` sorted by ``(by..., query_id)``: per ``by``
    group (sorted) ``num_q`` and each metric's ``summarize`` (a running sum in query
    order: the same bits however the values were split)."""
    labels = [label for label, _ in requests]
    means = [request.summarize(label) for label, request in requests]
    if by:
        return (
            values.group_by(by)
            .agg(pl.len().cast(pl.Int64).alias("num_q"), *means)
            .sort(by)
            .select(*by, "num_q", *labels)
        )
    return values.select(pl.len().cast(pl.Int64).alias("num_q"), *means)


def _ordered(
    frame: pl.LazyFrame, keys: list[str], doc_id: str, use_rank: bool, order: str
) -> pl.LazyFrame:
    """Each query's documents with their 0-based position and tie group (``_T``, ``_B``).

    By rank: the rank's order (no ties: duplicate ranks are refused). By score: score
    descending, ties broken by ``doc_id`` descending compared as text (trec_eval), and
    equal scores one tie group.
    """
    # exact for integers beyond 2**53 too: as Float64, 2**62 + 1 and 2**62 + 2 were
    # one tie group (kendall_tau and tau_ap null: no order to compare)
    value = score_order(order, frame.collect_schema()[order])
    # the tie key is the id as text whatever its dtype (trec_eval, repro_eval's
    # break_ties and the ranking metrics): integer ids 9 and 10 tied order 9 first
    text = pl.col(doc_id).cast(pl.String).alias(_TEXT)
    ordered = (
        frame.select(*keys, pl.col(doc_id).alias(_DOC), value.alias(order), text)
        .sort(
            [*keys, order, _TEXT],
            descending=[False] * len(keys) + [not use_rank, True],
            nulls_last=True,
        )
        .drop(_TEXT)
    )
    ordered = ordered.with_columns(pl.int_range(pl.len()).over(keys).cast(pl.Int64).alias(_POS))
    if use_rank:
        return ordered.with_columns(pl.col(_POS).alias(_T), pl.col(_POS).alias(_B))
    # tie groups are runs of equal scores in the sorted rows: a group starts where the
    # query or the score changes (first position carried down) and ends where the next
    # row's does (last position carried up); no hash of (query, score)
    same = [pl.col(c).eq_missing(pl.col(c).shift(1)) for c in (*keys, order)]
    after = [pl.col(c).eq_missing(pl.col(c).shift(-1)) for c in (*keys, order)]
    starts = ~pl.all_horizontal(same)
    ends = ~pl.all_horizontal(after)
    return ordered.with_columns(
        pl.when(starts).then(pl.col(_POS)).forward_fill().alias(_T),
        pl.when(ends).then(pl.col(_POS)).backward_fill().alias(_B),
    )


def _query_set(
    run: pl.LazyFrame, reference: pl.LazyFrame, keys: list[str], options: EvalOptions
) -> pl.LazyFrame:
    """The queries evaluated, under ``unjudged`` and ``unretrieved``, with a flag for a
    query refused by an ``"error"`` policy (raised when the plan runs)."""
    counts = (
        run.group_by(keys)
        .agg(pl.len().alias(NA))
        .join(
            reference.group_by(keys).agg(pl.len().alias(NB)),
            on=keys,
            how="full",
            coalesce=True,
            nulls_equal=True,
        )
    )
    only_run, only_ref = pl.col(NB).is_null(), pl.col(NA).is_null()
    for policy, where in ((options.unjudged, only_run), (options.unretrieved, only_ref)):
        if policy == "drop":
            counts = counts.filter(~where)
    flag = pl.lit(None, dtype=pl.String)
    if options.unjudged == "error":
        flag = pl.when(only_run).then(pl.lit("unjudged")).otherwise(flag)
    if options.unretrieved == "error":
        flag = pl.when(only_ref).then(pl.lit("unretrieved")).otherwise(flag)
    return counts.with_columns(flag.alias(f"{_BAD}_set"))


def _by_cutoff(requests: Requests) -> dict[int | None, Requests]:
    groups: dict[int | None, Requests] = {}
    for label, request in requests:
        groups.setdefault(request.k, []).append((label, request))
    return groups


def _values(
    run: pl.LazyFrame,
    reference: pl.LazyFrame,
    keys: list[str],
    cutoff: int | None,
    requests: Requests,
) -> pl.LazyFrame:
    """Every metric of one cutoff, per query that both sides hold.

    The tie-aware measures (:data:`_WHOLE_GROUPS`) read each side cut after its last
    tie group that starts within ``k`` (a group that crosses position ``k`` is kept
    whole); the others read positions ``0..k-1``, ties broken by id (trec_eval's
    order). Cutting inside a tie group kept the documents the ids put first: ``rbo@2``
    of the scores ``a=2, b=1, c=1`` was 0.55 against ``[a, b]`` and 1.0 against ``[a,
    c]``, a number that depended on the ids alone."""
    run_k, ref_k = _cut(run, cutoff), _cut(reference, cutoff)
    whole = any(request.metric.name in _WHOLE_GROUPS for _, request in requests)
    grouped = _joined(_cut(run, cutoff, whole=whole), _cut(reference, cutoff, whole=whole), keys)
    if cutoff is None or not whole:  # the positions alone (no group read whole)
        items = grouped
    else:  # the positions within k of the same join (one join for both readings)
        within = {side: pl.col(side) < cutoff for side in (_PA, _PB)}
        items = _with_lengths(
            grouped.select(
                *keys,
                _DOC,
                *(
                    pl.when(within[pos]).then(pl.col(name)).alias(name)
                    for pos, names in ((_PA, (_PA, TA)), (_PB, (_PB, TB)))
                    for name in names
                ),
                *(
                    pl.when(within[pos]).then(pl.col(b).clip(upper_bound=cutoff - 1)).alias(b)
                    for pos, b in ((_PA, BA), (_PB, BB))
                ),
            ).filter(pl.col(_PA).is_not_null() | pl.col(_PB).is_not_null()),
            keys,
        ).cache()
    lengths = items.group_by(keys).agg(pl.col(NA).first(), pl.col(NB).first())
    group_lengths = grouped.group_by(keys).agg(pl.col(NA).first(), pl.col(NB).first())
    common = pl.col(_PA).is_not_null() & pl.col(_PB).is_not_null()
    simple = []
    specs = []
    pairs: dict[str, tuple[str, MetricRequest]] = {}
    for label, request in requests:
        name = request.metric.name
        params = request.params(1.0)
        if name == "rbo":
            persistence = rbo_p(params, label)
            p = pl.lit(persistence, dtype=pl.Float64)
            kind, ties = params.choice("kind"), params.choice("ties")
            specs.append(RboSpec(label, p, kind, ties, persistence))
        elif name == "jaccard":
            union = pl.len()
            simple.append((common.sum() / union).cast(pl.Float64).alias(label))
        elif name in ("overlap", "unexpectedness"):  # RePlay's unexpectedness: 1 - overlap
            # divide: 3 / 5 is 0.6, not 3 * (1 / 5) = 0.6000000000000001 (the registry
            # requires their @k)
            k = pl.lit(cutoff, pl.Float64)
            overlap = divide(common.sum().cast(pl.Float64), k)
            simple.append((overlap if name == "overlap" else 1.0 - overlap).alias(label))
        else:  # one plan of its own each
            pairs[label] = (label, request)
    out = lengths.select(keys)
    if simple:
        out = out.join(items.group_by(keys).agg(*simple), on=keys, nulls_equal=True)
    if specs:
        out = out.join(
            rbo_values(grouped, group_lengths, keys, specs), on=keys, how="left", nulls_equal=True
        )
    for label, request in pairs.values():
        name = request.metric.name
        if name == "rbo_repro_eval":
            value = _rbo_repro_eval(items, keys, label, request, cutoff)
        elif name == "kendall_tau":
            value = _tau_b(grouped.filter(common), keys, TA, TB, label, marked=True)
        elif name == "tau_ap":
            ties = request.params(1.0).choice("ties")
            value = _tau_ap(grouped.filter(common), keys, label, ties)
        elif name == "ktu":
            value = _ktu(run_k, ref_k, keys, label)
        else:  # pragma: no cover - every agreement metric is routed above
            raise MetricParameterError(f"metric {label!r} is not a rank-similarity metric")
        out = out.join(value, on=keys, how="left", nulls_equal=True)
        if name == "rbo_repro_eval":  # no shared document: no row, overlap 0
            out = out.with_columns(pl.col(label).fill_null(0.0))
    return out


def _intersection(
    run: pl.LazyFrame,
    reference: pl.LazyFrame,
    keys: list[str],
    sides: Sequence[tuple[bool, str]],
    label: str,
    request: MetricRequest,
) -> pl.LazyFrame:
    """RecTools' ``Intersection``: per query with a run document within ``k``, the share
    of those the reference holds within ``ref_k``. By rank, "within k" reads the rank
    (``rank <= k``, as RecTools cuts); by score, the position."""
    k = request.k if request.k is not None else 0  # the parser requires k
    ref_k = request.params(1.0).options["ref_k"]
    within = []
    for (use_rank, order), cutoff in zip(sides, (k, k if ref_k is None else ref_k), strict=True):
        within.append(pl.col(order) <= cutoff if use_rank else pl.col(_POS) < cutoff)
    held = f"{INTERNAL}held"
    top = reference.filter(within[1]).select(*keys, _DOC, pl.lit(True).alias(held))
    return (
        run.filter(within[0])
        .select(*keys, _DOC)
        .join(top, on=[*keys, _DOC], how="left", nulls_equal=True)
        .group_by(keys)
        .agg((pl.col(held).fill_null(False).sum() / pl.len()).cast(pl.Float64).alias(label))
    )


#: The measures that read tie groups, so a cutoff keeps a group that crosses it whole
#: (:func:`_values`).
_WHOLE_GROUPS = ("rbo", "kendall_tau", "tau_ap")


def _cut(side: pl.LazyFrame, cutoff: int | None, *, whole: bool = False) -> pl.LazyFrame:
    """Positions ``0..cutoff-1``, tie groups clipped to the kept positions; ``whole``:
    every tie group that starts within ``cutoff``, whole (its documents past the
    cutoff too: which of them fall within it is the ids' order, not the data's)."""
    if cutoff is None:
        return side
    if whole:
        return side.filter(pl.col(_T) < cutoff)
    return side.filter(pl.col(_POS) < cutoff).with_columns(pl.col(_B).clip(upper_bound=cutoff - 1))


def _joined(run_k: pl.LazyFrame, ref_k: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """The two cut sides joined document by document (positions, tie groups of each;
    null where a side lacks the document), with each side's length per query, only the
    queries both sides rank."""
    items = run_k.select(
        *keys, _DOC, pl.col(_POS).alias(_PA), pl.col(_T).alias(TA), pl.col(_B).alias(BA)
    ).join(
        ref_k.select(
            *keys, _DOC, pl.col(_POS).alias(_PB), pl.col(_T).alias(TB), pl.col(_B).alias(BB)
        ),
        on=[*keys, _DOC],
        how="full",
        coalesce=True,
        nulls_equal=True,
    )
    # the joined documents are the one source of every reader (the lengths too): one
    # subplan, which polars computes once; a second source (the lengths counted before
    # the filter) made it order and join both sides again for each reader
    return _with_lengths(items, keys).cache()


def _with_lengths(items: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """``items`` with each side's length per query (``NA``, ``NB``), only the queries
    both sides rank."""
    return items.with_columns(
        pl.col(_PA).is_not_null().sum().over(keys).alias(NA),
        pl.col(_PB).is_not_null().sum().over(keys).alias(NB),
    ).filter((pl.col(NA) > 0) & (pl.col(NB) > 0))


def _rbo_repro_eval(
    items: pl.LazyFrame, keys: list[str], label: str, request: MetricRequest, cutoff: int | None
) -> pl.LazyFrame:
    """``sum_d p^d |A_{:d+1} ∩ B_{:d+1}| / (d+1) / sum_d p^d``: a shared document counts
    from depth ``max(pos_a, pos_b)`` on, so it adds the tail sum ``H(m) = sum_{d >= m}
    p^d / (d + 1)`` of a table of ``k`` rows."""
    if cutoff is None:  # pragma: no cover - the registry requires @k
        raise MetricParameterError(f"metric {label!r} needs a cutoff, e.g. @1000")
    p = rbo_p(request.params(1.0), label)
    # the weights from depth m on, sum_{d >= m} p^d / (d + 1), in Python: k numbers,
    # the same bits on every engine (polars raises a constant to a one-row column's
    # power otherwise than to a longer one's); only the depths whose p^d is not 0.0
    # (the zeros beyond add nothing), and one row of 0.0 for the depths from there on
    depths = repro_eval_depths(p, cutoff, f"metric {label!r}")
    heads, running = [], 0.0
    for d in reversed(range(depths)):
        running += p**d / (d + 1)
        heads.append(running)
    tail = pl.LazyFrame(
        {"__m": list(range(depths + 1)), "__h": [*heads[::-1], 0.0]},
        schema={"__m": pl.Int64, "__h": pl.Float64},
    )
    normaliser = sum(p**i for i in range(depths))
    common = items.filter(pl.col(_PA).is_not_null() & pl.col(_PB).is_not_null())
    return (
        common.with_columns(pl.min_horizontal(pl.max_horizontal(_PA, _PB), depths).alias("__m"))
        .join(tail, on="__m")
        .group_by(keys)
        .agg(divide(fixed_sum(pl.col("__h")), normaliser).alias(label))
    )


def _pairs(frame: pl.LazyFrame, keys: list[str], index: str) -> pl.LazyFrame:
    """Every pair of rows of a query, once (``index`` orders them: left before right)."""
    return frame.join(frame, on=keys, suffix="__r", nulls_equal=True).filter(
        pl.col(index) < pl.col(f"{index}__r")
    )


def _tau_b(
    frame: pl.LazyFrame, keys: list[str], x: str, y: str, label: str, *, marked: bool = False
) -> pl.LazyFrame:
    """Kendall's τ-b of ``x`` and ``y`` per query (scipy's ``kendalltau``), null when
    undefined (fewer than two rows, or one side tied throughout); ``marked``: with the
    column :func:`~polars_irmetrics.agreement.ties.tied_column` of ``label``, True
    where a side ties every row (two rows or more)."""
    indexed = frame.select(*keys, pl.col(x, y).cast(pl.Float64)).with_columns(
        pl.int_range(pl.len()).over(keys).alias("__i")
    )
    sx = (pl.col(x) - pl.col(f"{x}__r")).sign()
    sy = (pl.col(y) - pl.col(f"{y}__r")).sign()
    pairs = (
        _pairs(indexed, keys, "__i")
        .group_by(keys)
        .agg(
            (sx * sy).sum().cast(pl.Float64).alias("__s"),
            (sx != 0).sum().cast(pl.Float64).alias("__nx"),
            (sy != 0).sum().cast(pl.Float64).alias("__ny"),
        )
    )
    tau = pl.col("__s") / (pl.col("__nx") * pl.col("__ny")).sqrt()
    undefined = (pl.col("__nx") == 0) | (pl.col("__ny") == 0)
    marks = [undefined.fill_null(False).alias(tied_column(label))] if marked else []
    return (
        frame.select(keys)
        .unique()
        .join(pairs, on=keys, how="left", nulls_equal=True)
        .select(
            *keys,
            pl.when(undefined).then(None).otherwise(tau.clip(-1.0, 1.0)).alias(label),
            *marks,
        )
    )


def _tau_ap(shared: pl.LazyFrame, keys: list[str], label: str, ties: str) -> pl.LazyFrame:
    """Yilmaz et al.'s τ_AP of the run's order against the reference's over the shared
    documents, with Urbano & Marrero's treatments of tie groups (ICTIR 2017, their
    ``ircor`` package's ``tauAP_a`` and ``tauAP_b``): no tie is broken by document id.

    Within the shared documents, ``p`` is a document's tie group's first rank (1-based:
    one plus the shared documents in groups above it) and ``t`` the group's size, on
    each side. A pair *above* is a document in a group strictly above the other's on
    both sides.

    * ``ties='a'`` (the reference is the truth, without ties): ``2/(n-1) (sum_i
      C(i) S(p_i, t_i) + sum_i W(p_i, t_i)) - 1``, ``C(i)`` the documents in the run's
      groups above ``i``'s that the reference also ranks above it, ``S(p, t) = (1/t)
      sum_{m=1}^{t} 1/(p + m - 2)`` (``i``'s expected ``1/(rank - 1)`` over its group's
      orders) and ``W(p, t) = 1/(2t) sum_{k=1}^{t-1} k/(p + k - 1)`` (the pairs within
      the group, each concordant in half of its orders): the expected τ_AP over every
      order of the run's ties (Yilmaz's τ_AP, trectools', where there are none; 0 for
      a run that ties every shared document). Null where the reference ties shared
      documents (the truth has no ties: ``ircor`` refuses them; ``ties='b'`` reads them).
    * ``ties='b'`` (ties on both sides, symmetric): the mean of the two directions, each
      ``2/N' sum_{i: p_i > 1} C'(i)/(p_i - 1) - 1`` over the documents below the side's
      first group (``N'`` of them), ``C'(i)`` the pairs above ending at ``i``. Null
      where either side ties every shared document (no document below a first group).

    Null below two shared documents. Sums by :func:`fixed_sum` (the same bits in any row
    order). With the column :func:`~polars_irmetrics.agreement.ties.tied_column` of
    ``label``: True where the value is null for the ties (two shared documents or more),
    which the plan warns of."""
    ranked = shared.select(*keys, _PA, TA, TB).with_columns(
        pl.col(side).rank("min").over(keys).cast(pl.Int64).alias(f"__p{side}") for side in (TA, TB)
    )
    ranked = ranked.with_columns(
        *(pl.len().over([*keys, side]).cast(pl.Int64).alias(f"__t{side}") for side in (TA, TB)),
        pl.len().over(keys).cast(pl.Int64).alias("__n"),
    )
    p_run, t_run = pl.col(f"__p{TA}"), pl.col(f"__t{TA}")
    if ties == "a":
        # S(p, t): 1/m over m = p - 1 .. p + t - 2 (p > 1), over t; W(p, t)
        weights = (
            pl.when(p_run > 1)
            .then(
                pl.int_ranges(p_run - 1, p_run + t_run - 1)
                .list.eval(1.0 / pl.element().cast(pl.Float64))
                .list.sum()
                / t_run.cast(pl.Float64)
            )
            .otherwise(0.0)
            .alias("__w")
        )
        ranked = ranked.with_columns(weights)
        # sum_i W(p_i, t_i) = sum over the run's groups of (1/2) sum_{k=1}^{t-1} k/(p+k-1)
        k = pl.col("__k").cast(pl.Float64)
        within = (
            ranked.group_by([*keys, TA])
            .agg(p_run.first(), t_run.first())
            .with_columns(pl.int_ranges(1, t_run).alias("__k"))
            .explode("__k")
            .filter(pl.col("__k").is_not_null())
            .group_by(keys)
            .agg(fixed_sum(k / (k + p_run.cast(pl.Float64) - 1.0) / 2.0).alias("__in"))
        )
    else:
        ranked = ranked.with_columns(
            (1.0 / (pl.col(f"__p{side}") - 1).cast(pl.Float64)).alias(f"__w{side}")
            for side in (TA, TB)
        )
    # every ordered pair (left above right on both sides, strictly)
    above = ranked.join(ranked, on=keys, suffix="__r", nulls_equal=True).filter(
        (pl.col(TA) < pl.col(f"{TA}__r")) & (pl.col(TB) < pl.col(f"{TB}__r"))
    )
    n = pl.col("__n").first().cast(pl.Float64)
    if ties == "a":
        pairs = above.group_by(keys).agg(fixed_sum(pl.col("__w__r")).alias("__c"))
        per_query = ranked.group_by(keys).agg(
            n.alias("__nn"), (pl.col(f"__t{TB}") > 1).any().alias("__tied")
        )
        joined = per_query.join(pairs, on=keys, how="left", nulls_equal=True).join(
            within, on=keys, how="left", nulls_equal=True
        )
        total = pl.col("__c").fill_null(0.0) + pl.col("__in").fill_null(0.0)
        tau = 2.0 * total / (pl.col("__nn") - 1.0) - 1.0
        value = pl.when((pl.col("__nn") >= 2) & ~pl.col("__tied")).then(tau.clip(-1.0, 1.0))
        tied = (pl.col("__nn") >= 2) & pl.col("__tied")
    else:
        pairs = above.group_by(keys).agg(
            fixed_sum(pl.col(f"__w{side}__r")).alias(f"__c{side}") for side in (TA, TB)
        )
        per_query = ranked.group_by(keys).agg(
            *(
                (pl.col(f"__p{side}") > 1).sum().cast(pl.Float64).alias(f"__below{side}")
                for side in (TA, TB)
            ),
            pl.len().alias("__nn"),
        )
        joined = per_query.join(pairs, on=keys, how="left", nulls_equal=True)
        halves = [
            2.0 * pl.col(f"__c{side}").fill_null(0.0) / pl.col(f"__below{side}") - 1.0
            for side in (TA, TB)
        ]
        defined = (pl.col(f"__below{TA}") > 0) & (pl.col(f"__below{TB}") > 0)
        value = pl.when(defined).then(((halves[0] + halves[1]) / 2.0).clip(-1.0, 1.0))
        tied = (pl.col("__nn") >= 2) & ~defined
    return (
        shared.select(keys)
        .unique()
        .join(joined, on=keys, how="left", nulls_equal=True)
        .select(*keys, value.alias(label), tied.fill_null(False).alias(tied_column(label)))
    )


def _ktu(run: pl.LazyFrame, reference: pl.LazyFrame, keys: list[str], label: str) -> pl.LazyFrame:
    """repro_eval's KTU: positions in the sorted union of both lists (the ids sorted as
    text, as Python sorts repro_eval's string ids), paired by position."""
    union = (
        pl.concat([run.select(*keys, _DOC), reference.select(*keys, _DOC)])
        .unique()
        .with_columns(pl.col(_DOC).cast(pl.String).rank("dense").over(keys).alias("__u"))
    )
    x = run.select(*keys, _DOC, _POS).join(union, on=[*keys, _DOC], nulls_equal=True)
    y = reference.select(*keys, _DOC, _POS).join(union, on=[*keys, _DOC], nulls_equal=True)
    paired = x.select(*keys, _POS, pl.col("__u").alias("__x")).join(
        y.select(*keys, _POS, pl.col("__u").alias("__y")), on=[*keys, _POS], nulls_equal=True
    )
    return _tau_b(paired, keys, "__x", "__y", label)


def _checks(
    run: pl.LazyFrame,
    reference: pl.LazyFrame,
    keys: list[str],
    ref_keys: list[str],
    query_id: str,
    doc_id: str,
    sides: Sequence[tuple[bool, str]],
    samples: Sequence[str | None] = (None, None),
    *,
    againsts: Sequence[str | None] = (None, None),
    reference_lists: bool = False,
) -> pl.LazyFrame:
    """One row: for each side, the first query (by its keys) under more than one value
    of its ``samples`` column (the ``sample_id=`` column, where the side has it: sampled
    rankings, each side read as one ranking per query), whether a query id is null, and
    the first query with a null document id, a document twice, two documents at one
    rank, or a null or NaN ranking value, then one whose ranks and scores order it
    differently (``againsts``: each side's score column, where ``order='auto'`` reads
    its ranks beside one; ``reference_lists``: the reference's ranks are its lists'
    positions, as a :class:`~polars_irmetrics.ground.validate.ListOrder` marks the
    run's) (raised by :func:`_raise_on_bad` when the plan runs)."""
    rows = []
    for frame, what, group, (use_rank, order), sample, against in (
        (run, "run", keys, sides[0], samples[0], againsts[0]),
        (reference, "reference", ref_keys, sides[1], samples[1], againsts[1]),
    ):
        # each query's count of each fault, named as RUN_FLAGS names it: the ranking
        # metrics' checks, in their words and order (which checks run, and how they
        # read, never depends on which metrics were asked for)
        value = pl.col(order).cast(pl.Float64)
        per_query = [
            pl.col(doc_id).null_count().alias("null_doc"),
            (pl.len() - pl.col(doc_id).n_unique()).alias("dup_doc"),
        ]
        if use_rank:
            # ranks of 2**63 or more (UInt64, Int128...), refused as the ranking
            # metrics refuse them (RUN_FLAGS' big_rank); 0 where the dtype holds none
            wide = frame.collect_schema()[order] in WIDE_INTEGERS
            big = (pl.col(order) > _INT64_MAX).sum() if wide else pl.lit(0, pl.UInt32)
            per_query += [
                pl.col(order).null_count().alias("null_rank"),
                (pl.col(order) < 1).sum().alias("bad rank"),
                big.alias("big rank"),
                (pl.len() - pl.col(order).n_unique()).alias("dup_rank"),
            ]
        else:
            per_query += [
                value.null_count().alias("null_score"),
                value.is_nan().sum().alias("nan_score"),
            ]
        if sample is not None:  # null a value of its own
            per_query.append(pl.col(sample).n_unique().cast(pl.Int64).alias("samples"))
        if against is not None:  # repeated ranks are refused before it is read
            score = against_value(against, frame.collect_schema()[against])
            per_query.append(disagreements(order, score).alias("two orders"))
        grouped = frame.group_by(group).agg(per_query)
        # a null by= or systems= key, refused as the ranking metrics refuse it
        flags = []
        if sample is not None:  # first: a sample's documents recur in the others
            many = (pl.col("samples") > 1) & pl.all_horizontal(
                pl.col(key).is_not_null() for key in group
            )
            first = pl.struct(*group, "samples").filter(many)
            flags.append(
                first.sort_by(*(pl.col(key).filter(many) for key in group))
                .first()
                .alias(f"{_BAD}|{what}|sampled|{sample}")
            )
        flags += [
            pl.col(key).is_null().any().alias(f"{_BAD}|{what}|null key|{key}")
            for key in group
            if key != query_id
        ]
        flags.append(pl.col(query_id).is_null().any().alias(f"{_BAD}|{what}|null query"))
        counted = ["null_doc", "dup_doc"]
        counted += ["null_rank", "bad rank", "big rank", "dup_rank"] if use_rank else _SCORE_FLAGS
        for kind in counted:  # the first query (in order) and its count
            column = doc_id if kind in ("null_doc", "dup_doc") else order
            flags.append(_first_counted(query_id, kind, f"{_BAD}|{what}|{kind}|{column}"))
        if against is not None:  # the first query, as a bad rank's
            name = f"{_BAD}|{what}|two orders|{order}|{against}"
            listed = isinstance(order, ListOrder) if what == "run" else reference_lists
            if listed:  # the ranks are the lists' positions
                name += f"|{_LISTS}"
            flags.append(_first_counted(query_id, "two orders", name))
        rows.append(grouped.select(flags))
    return pl.concat(rows, how="horizontal")


#: The checks of a side ranked by its scores (:func:`_checks`), as RUN_FLAGS names them.
_SCORE_FLAGS = ["null_score", "nan_score"]
#: The checks :func:`_checks` counts per query, raised by
#: :func:`~polars_irmetrics.ground.validate.flag_error` in the ranking metrics' words.
_COUNTED = (
    "null_doc",
    "dup_doc",
    "null_rank",
    "bad rank",
    "big rank",
    "dup_rank",
    *_SCORE_FLAGS,
)
#: The largest Int64, below a rank of 2**63 or more (``big rank``).
_INT64_MAX = 2**63 - 1


def _first_counted(query_id: str, count: str, name: str) -> pl.Expr:
    """On :func:`_checks`' per-query rows: the first query (as text, in order) whose
    ``count`` is above 0 and that count, a struct (``query``, ``n``) named ``name``
    (null fields where none is)."""
    first = pl.col(query_id).filter(pl.col(count) > 0).sort().first()
    n = pl.col(count).filter(pl.col(query_id) == first).first()
    return pl.struct(first.alias("query"), n.alias("n")).alias(name)


_IN_REFERENCE = f"{INTERNAL}in_reference"
#: The last field of a ``two orders`` flag's name where the run's ranks are its lists'
#: positions (:class:`~polars_irmetrics.ground.validate.ListOrder`: a name loses the mark).
_LISTS = "lists"


def _held_groups(reference: pl.LazyFrame, shared: list[str], options: EvalOptions) -> pl.LazyFrame:
    """The distinct values of the ``shared`` keys of the reference: those of
    :attr:`~polars_irmetrics.ground.options.EvalOptions.reference_groups` (the whole
    reference's, set for a part of a split run) in ``reference``'s dtypes, else
    ``reference``'s own."""
    given = options.reference_groups
    if given is None or not shared:
        return reference.select(shared).unique()
    schema = reference.collect_schema()
    return pl.LazyFrame(
        [list(row) for row in given], schema={key: schema[key] for key in shared}, orient="row"
    )


def _given_groups(
    rows: tuple[tuple[Any, ...], ...], keys: list[str], schema: pl.Schema
) -> pl.LazyFrame:
    """The groups of :attr:`~polars_irmetrics.ground.options.EvalOptions.run_groups`
    (the whole run's distinct values of the ``keys`` the reference lacks, set for a part
    of a split run) in the run's dtypes (``schema``)."""
    return pl.LazyFrame(
        [list(row) for row in rows], schema={key: schema[key] for key in keys}, orient="row"
    )


def _groups_hint(
    reference: pl.LazyFrame, shared: list[str], options: EvalOptions
) -> Callable[[Mapping[str, Any]], str | None]:
    """The hint of the refusal of a group of the run that the reference lacks (its
    values of the ``shared`` ``by``/``systems`` keys both sides have): the first text key
    whose value the reference lacks and that matches one of the reference's ids once
    its spelling is ignored (:func:`~polars_irmetrics.ground.spelling.spelling_hint`, as
    ``system_agreement`` hints two results' systems), read on the error's path only
    (the reference's distinct ids of the key); ``None`` where none does. The refused
    group's own ids, so that a part of a split run (buckets, Spark, Dask) that refuses
    it gives one machine's words."""
    schema = reference.collect_schema()

    def read(group: Mapping[str, Any]) -> str | None:
        for key in shared:
            if not is_text(schema[key]) or not isinstance(group.get(key), str):
                continue
            ran = pl.LazyFrame({key: [group[key]]}, schema={key: pl.String})
            held = reference.select(pl.col(key).cast(pl.String)).unique()
            sides = Sides(f"column {key!r} of the run", "reference=", "the run and reference=")
            noun = "system" if key in options.system_keys else "group"
            hint = spelling_hint(ran, held, key, within=None, noun=noun, sides=sides)
            if hint is not None:
                return hint
        return None

    return read


def _raise_on_bad(
    frame: pl.DataFrame,
    checks: Mapping[str, Any],
    query_id: str,
    keys: list[str] | None = None,
    unplaced: tuple[str, ...] = (),
    groups_hint: Callable[[Mapping[str, Any]], str | None] | None = None,
) -> None:
    """Raise the first of the ``checks`` (the one row of :func:`_checks`) that fails,
    then the queries of ``frame`` (the per-query values) that the query set refuses.
    ``groups_hint``: the spelling hint of a group of the run the reference lacks
    (:func:`_groups_hint`), read where that group is refused."""
    flags = [name for name in checks if name.startswith(f"{_BAD}|")]
    first = [checks[name] for name in flags]
    for index, (name, value) in enumerate(zip(flags, first, strict=True)):
        if value is None or value is False:
            continue
        _, what, kind, *column = name.split("|")
        if kind in (*_COUNTED, "two orders") and value["query"] is None:
            continue
        # one plan raises the first flag, at its first query; a split evaluation
        # (buckets) the least of its parts' (ordered): the same
        place: object = value
        if kind == "sampled":
            place = [value[key] for key in value if key != "samples"]
        elif kind in (*_COUNTED, "two orders"):
            place = value["query"]
        elif value is True:
            place = ()
        error = _flag_error(what, kind, column, value, query_id)
        spelt = groups_hint(value) if kind == "absent group" and groups_hint else None
        if spelt is not None:  # ids spelt apart, the likely cause
            error = InvalidValueError(f"{error}. {spelt}")
        raise ordered(error, 1, index, place)
    if unplaced and keys:  # the reference's queries, each group's retrieved or not
        judged = frame.filter(pl.col(_IN_REFERENCE)).select(*keys, f"{INTERNAL}retrieved")
        raise_unplaced(judged, keys, unplaced, query_id, side="reference")
    bad = frame.filter(pl.col(f"{_BAD}_set").is_not_null()).sort(query_id)
    if bad.height:
        what = bad[f"{_BAD}_set"][0]
        where = (
            "the run but not the reference"
            if what == "unjudged"
            else "the reference but not the run"
        )
        error = QuerySetError(
            f"query {bad[query_id][0]!r} is in {where} and {what}='error'; pass "
            f"{what}='drop' or {what}='zero'"
        )
        raise ordered(error, 3, bad[query_id][0])


def _flag_error(what: str, kind: str, column: list[str], value: Any, query_id: str) -> Exception:
    """The error of the check ``kind`` of side ``what`` (:func:`_checks`), at its first
    failing ``value``."""
    if kind == "sampled":
        shown = repr(value[query_id])
        keyed = [f"{key}={value[key]!r}" for key in value if key not in (query_id, "samples")]
        shown += f" ({', '.join(keyed)})" if keyed else ""
        return sampled_error(column[0], shown, value["samples"], frame=what)
    if kind in _COUNTED and kind not in ("bad rank", "big rank"):  # RUN_FLAGS' of one column
        roles = {"doc_id": column[0], "rank": column[0], "score": column[0]}
        return flag_error(
            kind, {**roles, "query_id": query_id}, value["query"], value["n"], frame=_FRAMES[what]
        )
    if kind in ("bad rank", "big rank", "two orders"):  # RUN_FLAGS' bad_rank, big_rank...
        lists = column[-1] == _LISTS  # a list-shaped run's positions (_checks)
        column = column[:-1] if lists else column
        rank = ListOrder(column[0]) if lists else column[0]
        roles = {"rank": rank, "against": column[-1], "query_id": query_id}
        name = kind.replace(" ", "_")
        return flag_error(name, roles, value["query"], value["n"], frame=_FRAMES[what])
    if kind == "absent group":
        group = ", ".join(f"{key}={shown!r}" for key, shown in value.items())
        names = ", ".join(repr(key) for key in value)
        return InvalidValueError(
            f"the group {group} of the run has no rows in reference=, which holds the "
            f"by= key column{'s' if len(value) > 1 else ''} {names} (a reference per "
            "group): give the reference that group's rankings, or drop those columns "
            "from the reference to compare every group with one reference"
        )
    if kind == "null key":
        return null_key_error(column[0], what)
    return null_key_error(query_id, what)  # "null query", in the ranking metrics' words
