"""The plan of Elliot's popularity-bias and novelty metrics
(:mod:`polars_irmetrics.metrics.elliot`): ``pop_rsp``, ``pop_reo``, ``aclt``, ``epc``,
``efd``, from the run (users as queries, items as documents), the judgments (the test
interactions) and the training interactions.

One lazy query, nothing collected:

1. **Popularity**: the distinct (user, item) pairs of the interactions, one group-by
   per item (its training users ``n_i``), ``T`` their sum and ``|U|`` the distinct
   training users. The short head of each ``pop_ratio`` is a cumulative sum over the
   items sorted by ``n_i`` descending (the item id ascending compared as text among
   ties, whatever the id dtype: ``"10"`` before ``"9"``): an item is in it when those
   before hold less than ``pop_ratio x T``. Where the interactions carry
   a ``by`` key of the run, each group reads its own rows (the group's values are those
   of the group evaluated alone); else the popularity is that of the whole interactions
   table, the same for every ``by`` group (as Elliot's training set is one for every
   recommender it compares).
2. **Top k**: each user's position (by rank, or by score descending with ties broken
   by the item id descending compared as text, as :func:`~polars_irmetrics.evaluate`
   orders), the rows at positions ``<= k`` (:func:`top_rows`: one filter of the run
   for the MAD metrics of the call too) with whether the judgments hold them relevant
   (:func:`judged_top`: one join for the MAD metrics and RecTools' ``serendipity``
   of the call too) and their item's popularity and head flag (left joins).
3. **Per user** then **per ``by`` group**: the counts and sums each formula needs.
   PopRSP's and PopREO's denominators, the group items a user did not interact with,
   are ``|U_g| x |SH|`` less the user's training pairs in the head (a semi-join of the
   interactions on the users), and the relevant test items outside the user's
   training pairs (an anti-join). EPC's and EFD's float sums are exact fixed-point
   sums (:func:`~polars_irmetrics.metrics.scope.fixed_sum`): the same bits in any
   row order; the other metrics add whole counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

from polars_irmetrics.errors import (
    InvalidValueError,
    IrmWarning,
    MetricParameterError,
)
from polars_irmetrics.ground.facts import ITEM_USERS, SharedIds, id_rows, shared_frame
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    common_id_dtype,
    id_kind,
    id_kinds_error,
    interactions_by_keys,
    require_columns,
    side_ids_hint,
    warn_from_plan,
    with_history_check,
    with_null_id_check,
)
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics._common import exact_level
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import fixed_sum

__all__ = [
    "build_elliot_plan",
    "elliot_means",
    "judged_top",
    "refuse_out_of_core",
    "top_rows",
]

Requests = Sequence[tuple[str, MetricRequest]]

_POS = f"{INTERNAL}elliot_pos"
_POP = f"{INTERNAL}elliot_pop"
_TOTAL = f"{INTERNAL}elliot_total"
_USERS = f"{INTERNAL}elliot_users"
_MIN = f"{INTERNAL}elliot_min"
_REL = f"{INTERNAL}elliot_rel"
_HAS_REL = f"{INTERNAL}elliot_has_rel"
_BEFORE = f"{INTERNAL}elliot_before"
_ONE = f"{INTERNAL}elliot_one"
#: :func:`judged_top`'s columns: whether the judgments hold the row relevant, its gain.
TOP_REL = f"{INTERNAL}top_rel"
TOP_GAIN = f"{INTERNAL}top_gain"


def _head(ratio: float) -> str:
    return f"{INTERNAL}elliot_head_{ratio!r}"


def _ratio(request: MetricRequest) -> float:
    return request.params(1.0).number("pop_ratio")


def _cut(request: MetricRequest) -> int:
    if request.k is None:  # pragma: no cover - the parser requires the cutoff
        raise MetricParameterError(f"metric {request.metric.name!r} needs a cutoff")
    return request.k


def _checked_interactions(
    interactions: pl.LazyFrame,
    run: pl.LazyFrame,
    user: str,
    item: str,
    target: dict[str, pl.DataType],
    keys: list[str],
) -> pl.LazyFrame:
    """The interactions' ``keys`` (the ``by`` keys they carry) and (user, item) columns,
    the ids in the dtypes ``target`` (those of the run and judgments too)."""
    schema, run_schema = interactions.collect_schema(), run.collect_schema()
    require_columns(
        schema,
        [user, item],
        "interactions",
        side_ids_hint("run", [user, item]),
    )
    casts = [
        run_kind(schema, run_schema, column, "interactions", "interactions", target[column])
        for column in (user, item)
    ]
    return interactions.select(*keys, *casts)


def run_kind(
    schema: pl.Schema,
    run_schema: pl.Schema,
    column: str,
    frame: str,
    where: str,
    target: pl.DataType | None = None,
) -> pl.Expr:
    """``column`` of a side table (``frame`` in messages of its dtype, ``where`` in those
    of its kind) cast to ``target``, by default the dtype that holds both its and the
    run's ids (:func:`~polars_irmetrics.ground.validate.common_id_dtype`; the run is cast
    to it too); a side of the other kind is refused."""
    kind = id_kind(schema, column, frame)
    theirs = id_kind(run_schema, column, "run")
    if kind != theirs:  # worded as every route words it, the run first
        raise id_kinds_error(column, run_schema, "run", schema, where)
    if target is None:
        target = common_id_dtype([schema[column], run_schema[column]])
    return pl.col(column).cast(target)


def _positions(run: pl.LazyFrame, keys: list[str], options: EvalOptions) -> pl.LazyFrame:
    """The run with each row's position in its user's list (1 = top). By rank, the
    position is the rank, as everywhere in :func:`~polars_irmetrics.evaluate` (Elliot's
    list index plus one when the ranks run 1, 2, 3...; ranks 2, 4, 6 keep one row in the
    top 3). By score: descending, ties broken by the item id descending compared as
    text, as :func:`~polars_irmetrics.evaluate` orders."""
    names = run.collect_schema().names()
    if options.order == "rank" or (options.order == "auto" and options.rank in names):
        return run.with_columns(pl.col(options.rank).cast(pl.Int64, strict=False).alias(_POS))
    doc = pl.col(options.doc_id).cast(pl.String)
    ranked = run.sort(
        [*keys, pl.col(options.score), doc], descending=[False] * len(keys) + [True, True]
    )
    return ranked.with_columns((pl.int_range(pl.len()).over(keys) + 1).alias(_POS))


def top_rows(
    run: pl.LazyFrame,
    keys: list[str],
    options: EvalOptions,
    cut: int,
    shared: SharedIds | None = None,
) -> pl.LazyFrame:
    """The rows of ``run`` (the ids as the run holds them) at :func:`_positions` ``<=
    cut`` in their user's list, with the position and the order columns: one filter of
    the run for Elliot's metrics and the MAD metrics of one call (``shared``: the door's
    frames, :meth:`SharedIds.shared <polars_irmetrics.ground.facts.SharedIds.shared>`,
    where both ask for the same ``cut``). A cast of the ids to a wider dtype after, as
    each plan casts them, moves no row in or out: the positions read the ids as text.
    """
    names = run.collect_schema().names()
    columns = [*keys, options.doc_id, *_order_columns(names, options)]
    built = _positions(run.select(columns), keys, options).filter(pl.col(_POS) <= cut)
    return shared_frame(shared, run, f"top_rows|{cut}|{options.order}", built)


def judged_top(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    keys: list[str],
    options: EvalOptions,
    cut: int,
    shared: SharedIds | None = None,
) -> pl.LazyFrame:
    """:func:`top_rows` (``keys``: the run's ``by`` keys and the user) left joined with
    the relevant judgments (``relevance >= relevance_level``) on the judgments' keys
    and the item, the ids cast to the dtype that holds the run's and the judgments'
    (each plan casts them on to its own after: a cast to a wider dtype keeps them
    apart): :data:`TOP_REL`, whether the row is relevant, and :data:`TOP_GAIN`, its
    gain ``2 ** (relevance - level + 1) - 1`` (Elliot's discounted relevance, which the
    MAD metrics read; ``0.0`` where the row is not relevant). One join for Elliot's
    metrics and the MAD metrics of one call (``shared``: the door's frames, where both
    ask for the same cut of the same run and judgments). A document of the run judged
    twice in its query would meet both judgments; the judgments are refused then,
    whatever ``check_duplicates=`` says. A null key meets a null key, as in the MAD
    metrics' joins (the run's null ids and ``by`` keys are refused before: no input
    reaches the join with one)."""
    user, item = options.query_id, options.doc_id
    run_schema, q_schema = run.collect_schema(), qrels.collect_schema()
    target = {c: common_id_dtype([run_schema[c], q_schema[c]]) for c in (user, item)}
    q_keys = [k for k in keys if k in q_schema.names()]
    level = float(options.relevance_level)
    rel = pl.col(options.relevance).cast(pl.Float64)
    relevant = qrels.filter(pl.col(options.relevance) >= exact_level(level)).select(
        *(pl.col(c).cast(target[c]) if c in target else pl.col(c) for c in q_keys),
        pl.col(item).cast(target[item]),
        (2.0 ** (rel - level + 1.0) - 1.0).alias(TOP_GAIN),
        pl.lit(True).alias(TOP_REL),
    )
    built = (
        top_rows(run, keys, options, cut, shared)
        .select(
            *(pl.col(c).cast(target[c]) if c in target else pl.col(c) for c in keys),
            pl.col(item).cast(target[item]),
            _POS,
            *_order_columns(run_schema.names(), options),
        )
        .join(relevant, on=[*q_keys, item], how="left", nulls_equal=True)
        .with_columns(pl.col(TOP_REL).fill_null(False), pl.col(TOP_GAIN).fill_null(0.0))
    )
    kind = f"judged_top|{cut}|{options.order}|{level}|{id(qrels)}|{'|'.join(q_keys)}"
    return shared_frame(shared, run, kind, built)


def build_elliot_plan(
    run: pl.LazyFrame,
    requests: Requests,
    qrels: pl.LazyFrame | None,
    interactions: pl.LazyFrame,
    options: EvalOptions,
    *,
    alone: bool = True,
    per_user: bool = False,
    users: pl.LazyFrame | None = None,
    shared: SharedIds | None = None,
) -> pl.LazyFrame:
    """One row per ``by`` group (the ``by`` keys of the run, then one column per label)
    of Elliot's metrics in ``requests``; see the module docstring. ``alone``: no other
    metric of the call reads the ranking plan's options (``depth``, ``judged_only``,
    ``unjudged``, ``unretrieved``, out of core), which Elliot's do not read: refused.
    ``users``: the run's distinct users, where the door has them (no ``by`` keys).
    ``shared``: the door's frames shared by the routes of the call, where it has them
    (the distinct pairs of the interactions, their count per item and the users with
    a history, which the beyond-accuracy metrics beside and the interactions'
    coverage tally read too: :meth:`SharedIds.shared
    <polars_irmetrics.ground.facts.SharedIds.shared>`).
    ``per_user``: instead, one row per user of the run with the counts and sums each
    formula reads (step 3's first half): a part of the users' share, which
    :func:`elliot_means` turns into the metrics (each part reading the whole history).

    Examples
    --------
    An item the training data lacks (``c``) is in neither the short head nor the long
    tail: ACLT does not count it, and EFD scores it as the least popular item.

    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> run = pl.LazyFrame({"query_id": ["u"] * 2, "doc_id": ["b", "c"], "rank": [1, 2]})
    >>> test = pl.LazyFrame({"query_id": ["u"], "doc_id": ["c"], "relevance": [1]})
    >>> train = pl.LazyFrame({"query_id": ["u", "v", "v"], "doc_id": ["a", "a", "b"]})
    >>> names = ["aclt(pop_ratio=0.5)@2", "efd@2"]  # T = 3; the head: a (2 of 3 pairs)
    >>> wanted = [(name, parse_metric(name)) for name in names]
    >>> plan = build_elliot_plan(run, wanted, test, train, EvalOptions.build())
    >>> plan.collect().rows()  # b is the tail; c (rank 2): -log2(1/3) / log2(3) / 1.63
    [(1.0, 0.6131...)]
    """
    if options.per_query and not per_user:
        raise MetricParameterError(
            f"metric {requests[0][0]!r} (Elliot's) describes the whole recommendation "
            "table against the training popularity: evaluate it with per_query=False"
        )
    if qrels is None:
        raise MetricParameterError(
            f"metric {requests[0][0]!r} reads the test interactions as judgments: pass "
            "them as qrels=... (a judged run has no test items the list missed)"
        )
    refuse_out_of_core(requests, options, "Elliot's metrics")
    if alone:  # an option of the ranking plan that no metric asked for would read
        asked = ", ".join(repr(label) for label, _ in requests)
        for name in _NOT_READ:
            if name in options.given():
                raise InvalidValueError(
                    f"{name}={getattr(options, name)!r} is not read by Elliot's metrics "
                    f"({asked}): they read each user's top k of the recommendations as "
                    f"given, over the users of the recommendations; drop {name}="
                )
        if not any(r.metric.name in _RELEVANT_READERS for _, r in requests):
            for name in ("relevance_level", "debias"):
                if name in options.given():
                    raise InvalidValueError(
                        f"{name}={getattr(options, name)!r} is not read by {asked}: they "
                        "count each user's top k against the training popularity, and no "
                        "relevant test item (only pop_reo, epc and efd read those); drop "
                        f"{name}="
                    )
    user, item = options.query_id, options.doc_id
    run_names = run.collect_schema().names()
    by = [k for k in options.by_keys if k in run_names]
    keys = [*by, user]
    # the by keys the interactions carry: each group's popularity from its own rows
    ib = interactions_by_keys(run.collect_schema(), interactions.collect_schema(), by)
    # one dtype per id in the run, the judgments and the interactions (UInt64 ids
    # beyond Int64 kept whole; the kinds are checked with the interactions)
    schemas = [run.collect_schema(), qrels.collect_schema(), interactions.collect_schema()]
    target = {
        c: common_id_dtype([schema[c] for schema in schemas if c in schema]) for c in (user, item)
    }
    # read by the popularity, the heads and the per-user sums: one pass, cached (polars
    # computed the distinct pairs once per reader)
    checked = _checked_interactions(interactions, run, user, item, target, ib)
    train = shared_frame(shared, interactions, "pairs", checked.unique())
    cutoffs = sorted({_cut(r) for _, r in requests})
    # each user's top k, whether the judgments hold each row relevant (one join, shared
    # with the MAD metrics beside)
    within = judged_top(run, qrels, keys, options, max(cutoffs), shared)
    run = run.with_columns(pl.col(c).cast(t) for c, t in target.items())
    qrels_names = qrels.collect_schema().names()
    q_keys = [k for k in keys if k in qrels_names]
    judged = qrels.with_columns(pl.col(c).cast(t) for c, t in target.items())
    relevant = (
        judged.filter(pl.col(options.relevance) >= exact_level(float(options.relevance_level)))
        .select(*q_keys, item)
        .unique()
        .cache()  # read by the users with a test item and the fresh heads
    )

    # 1. popularity and the short heads
    ratios = sorted({_ratio(r) for _, r in requests if r.metric.name in _HEADED})
    per_item = train.group_by([*ib, item]).agg(pl.len().cast(pl.Float64).alias(ITEM_USERS))
    counts = shared_frame(shared, interactions, "item_users", per_item).rename({ITEM_USERS: _POP})
    totals = _per_group(train, ib, [pl.len().cast(pl.Float64).alias(_TOTAL)])
    if any(r.metric.name == "epc" for _, r in requests):
        # the distinct users of the interactions (EPC's novelty): one row per user in
        # the users with a history, the group-by the beyond-accuracy route beside
        # reads too (id_rows: one pass for both where the door shares it), not a
        # distinct count of the pairs' users of its own
        history = id_rows(shared, interactions, checked.select(*ib, user), ib, user)
        known = _per_group(history, ib, [pl.len().cast(pl.Float64).alias(_USERS)])
        totals = _beside(totals, known, ib)
    before = pl.col(_POP).cum_sum() - pl.col(_POP)
    # ties by the item id compared as text: one head whatever the ids' dtype
    pop = (
        counts.sort(
            [*ib, pl.col(_POP), pl.col(item).cast(pl.String)],
            descending=[False] * len(ib) + [True, False],
        )
        .with_columns((before.over(ib) if ib else before).alias(_BEFORE))
        .pipe(_beside, totals, ib)
        .with_columns((pl.col(_BEFORE) < r * pl.col(_TOTAL)).alias(_head(r)) for r in ratios)
        .select(*ib, item, _POP, *(_head(r) for r in ratios))
        .cache()
    )
    scalars = _beside(totals, _per_group(counts, ib, [pl.col(_POP).min().alias(_MIN)]), ib)

    # 2. the top k of each user, and the users
    rows = (
        within.select(
            *by,
            *(pl.col(c).cast(target[c]) for c in (user, item)),
            _POS,
            pl.col(TOP_REL).alias(_REL),
        )
        .join(pop, on=[*ib, item], how="left", nulls_equal=True)
        .pipe(_beside, scalars, ib, how="left")
    )
    # a user with no row within k counts too (``users``: the run's distinct users, where
    # the door has them and there are no by keys)
    if users is None:
        users = run.select(keys).unique()
    else:  # cast as the run is (a cast of distinct ids keeps them distinct)
        users = users.select(pl.col(user).cast(target[user]))
    has_rel = relevant.select(q_keys).unique().with_columns(pl.lit(True).alias(_HAS_REL))
    users = users.join(has_rel, on=q_keys, how="left", nulls_equal=True).with_columns(
        pl.col(_HAS_REL).fill_null(False)
    )

    # 3. per user (the users of the run), then per group
    user_aggs: list[pl.Expr] = []
    train_heads: list[pl.Expr] = []
    fresh_heads: list[pl.Expr] = []
    sizes: list[pl.Expr] = []
    for label, request in requests:
        name, k = request.metric.name, _cut(request)
        top, rel = pl.col(_POS) <= k, pl.col(_REL)
        value = f"{label}{_ONE}"
        if name in ("epc", "efd"):
            disc = 1.0 / (pl.col(_POS).cast(pl.Float64) + 1.0).log(2)
            if name == "epc":
                novelty = (1.0 - pl.col(_POP) / pl.col(_USERS)).fill_null(1.0)
            else:  # an item the training data lacks counts as the least popular one
                floor = -(pl.col(_MIN) / pl.col(_TOTAL)).log(2)
                novelty = (-(pl.col(_POP) / pl.col(_TOTAL)).log(2)).fill_null(floor)
            # exact sums (fixed point): the same bits in any row order, as elsewhere
            gain = fixed_sum(pl.when(top & rel).then(disc * novelty))
            norm = fixed_sum(pl.when(top).then(disc))
            user_aggs.append(pl.when(norm > 0).then(gain / norm).otherwise(gain).alias(value))
            continue
        ratio = _ratio(request)
        head = pl.col(_head(ratio))
        tail = ~head  # an item the training data lacks (null) is in neither
        if name == "aclt":
            user_aggs.append((top & tail).sum().cast(pl.Float64).alias(value))
            continue
        reo = name == "pop_reo"
        hit = (top & rel) if reo else top
        user_aggs.append((hit & head).sum().cast(pl.Float64).alias(f"{value}h"))
        user_aggs.append((hit & tail).sum().cast(pl.Float64).alias(f"{value}t"))
        if reo:  # the relevant test items outside the user's training pairs
            fresh_heads.append(head.sum().cast(pl.Float64).alias(f"{value}dh"))
            fresh_heads.append(tail.sum().cast(pl.Float64).alias(f"{value}dt"))
        else:  # the head and tail less the user's training pairs
            train_heads.append(head.sum().cast(pl.Float64).alias(f"{value}th"))
            train_heads.append(tail.sum().cast(pl.Float64).alias(f"{value}tt"))
            sizes.append(head.sum().cast(pl.Float64).alias(f"{value}sh"))
            sizes.append(tail.sum().cast(pl.Float64).alias(f"{value}st"))
    users_rows = users.join(
        rows.group_by(keys).agg(user_aggs), on=keys, how="left", nulls_equal=True
    )
    if train_heads:
        in_head = (
            train.join(pop, on=[*ib, item], how="inner", nulls_equal=True)
            .group_by([*ib, user])
            .agg(train_heads)
        )
        users_rows = users_rows.join(in_head, on=[*ib, user], how="left", nulls_equal=True).pipe(
            _beside, _per_group(pop, ib, sizes), ib, how="left"
        )
    if fresh_heads:
        # each user's relevant test items, in the user's by groups where the
        # interactions carry a key (the judgments may lack it)
        fresh_keys = keys if ib else q_keys
        if ib:
            relevant = users.select(keys).join(relevant, on=q_keys, nulls_equal=True)
        fresh = (
            relevant.join(train, on=[*ib, user, item], how="anti", nulls_equal=True)
            .join(pop, on=[*ib, item], how="left", nulls_equal=True)
            .group_by(fresh_keys)
            .agg(fresh_heads)
        )
        users_rows = users_rows.join(fresh, on=fresh_keys, how="left", nulls_equal=True)
    # an empty history (or a group's, where the interactions carry its keys): refused
    checked = with_history_check(users_rows, run, counts, ib)  # the shared counts
    if per_user:
        return checked
    # the bad inputs refused before the means, whose NaN warnings (_warn_nan) would
    # otherwise come first: the history's check, and its null ids (also refused around
    # the whole plan, for every metric: ground.validate.warn_on_interactions)
    gated = with_null_id_check(checked, interactions, [user, item], shared)
    return elliot_means(gated, requests, options)


def elliot_means(users: pl.LazyFrame, requests: Requests, options: EvalOptions) -> pl.LazyFrame:
    """The metrics per ``by`` group from the rows of :func:`build_elliot_plan` with
    ``per_user=True`` (one machine's, or every part's stacked: each user in one part):
    whole counts and exact fixed-point sums, so the same bits in any order and split.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> run = pl.LazyFrame({"query_id": ["u", "u", "w"], "doc_id": ["a", "b", "b"],
    ...                     "rank": [1, 2, 1]})
    >>> test = pl.LazyFrame({"query_id": ["u", "w"], "doc_id": ["b", "b"],
    ...                      "relevance": [1, 1]})
    >>> train = pl.LazyFrame({"query_id": ["u", "v", "v"], "doc_id": ["a", "a", "b"]})
    >>> wanted = [(n, parse_metric(n)) for n in ["pop_rsp(pop_ratio=0.5)@2", "epc@2"]]
    >>> options = EvalOptions.build()
    >>> one = build_elliot_plan(run, wanted, test, train, options).collect()
    >>> parts = [build_elliot_plan(run.filter(pl.col("query_id") == u), wanted,
    ...                            test.filter(pl.col("query_id") == u), train, options,
    ...                            per_user=True) for u in "uw"]
    >>> elliot_means(pl.concat(parts), wanted, options).collect().equals(one)
    True
    """
    has = pl.col(_HAS_REL)
    finals: list[pl.Expr] = []
    summarized: list[pl.Expr] = []  # each user's value where agg= summarizes them
    for label, request in requests:
        name, value = request.metric.name, f"{label}{_ONE}"
        if request.aggregate is not None:  # epc, efd, aclt: means of per-user values
            # (the parser refuses agg= for pop_rsp and pop_reo: Metric.whole); a user
            # with no row within k counts 0, as in the means below
            one = pl.col(value).fill_null(0.0)
            summarized.append((pl.when(has).then(one) if name != "aclt" else one).alias(value))
            finals.append(request.summarize(value).alias(label))
        elif name in ("epc", "efd"):
            users_with = has.sum()
            mean = fixed_sum(pl.when(has).then(pl.col(value))) / users_with.cast(pl.Float64)
            finals.append(pl.when(users_with > 0).then(mean).alias(label))
        elif name == "aclt":  # a mean of whole numbers: exact in any order
            finals.append(pl.col(value).fill_null(0.0).mean().alias(label))
        else:
            finals.append(_disparity(value, name == "pop_reo").alias(label))
            # the two rates' denominators, read by the warning of a NaN (then dropped)
            finals.extend(
                d.alias(f"{label}{_ONE}{side}")
                for side, d in zip("ht", _denominators(value, name == "pop_reo"), strict=True)
            )
    names = users.collect_schema().names()
    by = [k for k in options.by_keys if k in names]
    if summarized:
        users = users.with_columns(summarized)
    means = users.group_by(by).agg(finals).sort(by) if by else users.select(finals)
    disparities = [(label, r) for label, r in requests if r.metric.name in ("pop_rsp", "pop_reo")]
    # EPC's and EFD's means over the users with a relevant test item: null where none
    expected = [
        label for label, r in requests if r.metric.name in ("epc", "efd") and r.aggregate is None
    ]
    if not disparities and not expected:
        return means
    schema = means.collect_schema()
    kept = [
        c
        for c in schema.names()
        if not c.startswith(tuple(f"{lb}{_ONE}" for lb, _ in disparities))
    ]

    def warned(frame: pl.DataFrame) -> pl.DataFrame:
        _warn_no_relevant(expected, by, options, frame)
        return _warn_nan(disparities, by, frame)

    return means.map_batches(
        warns_in_order(warned), schema=pl.Schema({c: schema[c] for c in kept})
    )


def _warn_no_relevant(
    labels: Sequence[str], by: list[str], options: EvalOptions, frame: pl.DataFrame
) -> None:
    """Warn of each EPC or EFD (``labels``) that is null: a mean over the users of the
    run with a relevant test item, of whom there is none (Elliot's mean of no user)."""
    for label in labels:
        undefined = frame.filter(pl.col(label).is_null())
        if undefined.height == 0:
            continue
        where = ""
        if by:
            row = undefined.row(0, named=True)
            first = ", ".join(f"{k}={row[k]!r}" for k in by)
            where = f" in {undefined.height} of the {frame.height} groups (first: {first})"
        warn_from_plan(
            f"{label!r} is null{where}: Elliot's mean over the users of the run with a "
            "relevant test item (qrels=, relevance >= "
            f"relevance_level={options.relevance_level!r}), and no user of the run has "
            "one. Check that the run's users and the judgments' queries line up, and "
            "relevance_level=",
            IrmWarning,
        )


def _warn_nan(
    disparities: Sequence[tuple[str, MetricRequest]], by: list[str], frame: pl.DataFrame
) -> pl.DataFrame:
    """Warn of each PopRSP or PopREO that is NaN (0 / 0, as Elliot's): a rate whose
    denominator is 0 (no item of the short head or the long tail to recommend, or
    relevant), or both rates 0 (no item of the top k counted); the frame without the
    denominators' columns."""
    for label, request in disparities:
        undefined = frame.filter(pl.col(label).is_nan())
        if undefined.height == 0:
            continue
        row = undefined.row(0, named=True)
        where = ""
        if by:
            first = ", ".join(f"{k}={row[k]!r}" for k in by)
            where = f" in {undefined.height} of the {frame.height} groups (first: {first})"
        reo = request.metric.name == "pop_reo"
        ratio = _ratio(request)
        empty = [
            g
            for g, side in (("short head", "h"), ("long tail", "t"))
            if not row[f"{label}{_ONE}{side}"]
        ]
        if empty:
            one = len(empty) == 1
            what = (
                "relevant test item of a user outside the user's training items"
                if reo
                else "training item a user of the run has not interacted with"
            )
            why = (
                f"the {' and the '.join(empty)} of pop_ratio={ratio!r} "
                f"{'holds' if one else 'hold'} no {what}, so "
                f"{'its rate is' if one else 'their rates are'} 0 / 0"
            )
            fix = (
                "PopREO reads the relevant test items (qrels=, relevance >= "
                "relevance_level) that are training items (interactions=) the user has not "
                "interacted with: check that the two tables' items line up"
                if reo
                else "a head or tail with no item comes from a history of few items or a "
                "pop_ratio near 0 or 1: give interactions= the whole training history, or "
                "another pop_ratio="
            )
        else:
            why = (
                "no user's top k holds an item of the short head or the long tail"
                + (" that is relevant" if reo else "")
                + ", so both rates are 0 and std / mean is 0 / 0"
            )
            fix = "check that the ids of the run and of the tables line up, or use a larger k"
        warn_from_plan(
            f"{label!r} is NaN{where}: Elliot's std / mean of the short head's and the long "
            f"tail's rates, and {why} (Elliot's nan). {fix[0].upper()}{fix[1:]}",
            IrmWarning,
        )
    return frame.drop(
        [c for c in frame.columns if any(c.startswith(f"{lb}{_ONE}") for lb, _ in disparities)]
    )


def _denominators(value: str, reo: bool) -> tuple[pl.Expr, pl.Expr]:
    """The short head's and the long tail's denominators of PopRSP (PopREO: ``reo``)."""
    if reo:
        has = pl.col(_HAS_REL)
        return (
            pl.col(f"{value}dh").fill_null(0.0).filter(has).sum(),
            pl.col(f"{value}dt").fill_null(0.0).filter(has).sum(),
        )
    return (
        (pl.col(f"{value}sh") - pl.col(f"{value}th").fill_null(0.0)).sum(),
        (pl.col(f"{value}st") - pl.col(f"{value}tt").fill_null(0.0)).sum(),
    )


def _per_group(frame: pl.LazyFrame, keys: list[str], exprs: list[pl.Expr]) -> pl.LazyFrame:
    """``exprs`` over ``frame`` per group of ``keys`` (one row without keys)."""
    return frame.group_by(keys).agg(exprs) if keys else frame.select(exprs)


def _beside(
    frame: pl.LazyFrame,
    other: pl.LazyFrame,
    keys: list[str],
    how: Literal["inner", "left"] = "inner",
) -> pl.LazyFrame:
    """``frame`` with the columns of ``other`` (one row per group of ``keys``): joined on
    the keys (``how``), or across without them (one row)."""
    if not keys:
        return frame.join(other, how="cross")
    return frame.join(other, on=keys, how=how, nulls_equal=True)


def _disparity(value: str, reo: bool) -> pl.Expr:
    """Elliot's std / mean (numpy, population) of the head's and the tail's rates."""
    num_h = pl.col(f"{value}h").fill_null(0.0)
    num_t = pl.col(f"{value}t").fill_null(0.0)
    if reo:
        has = pl.col(_HAS_REL)
        num_h, num_t = num_h.filter(has), num_t.filter(has)
    den_h, den_t = _denominators(value, reo)
    a, b = num_h.sum() / den_h, num_t.sum() / den_t
    mean = (a + b) / 2.0
    std = (((a - mean) ** 2 + (b - mean) ** 2) / 2.0).sqrt()
    return std / mean


_HEADED = frozenset({"pop_rsp", "pop_reo", "aclt"})
#: Elliot's metrics that read the relevant test items (relevance_level=, debias=).
_RELEVANT_READERS = frozenset({"pop_reo", "epc", "efd"})
#: The offline route's options that Elliot's metrics do not read: refused where no other
#: metric of the call reads them (an option that would change nothing).
_NOT_READ = (
    "depth",
    "judged_only",
    "unjudged",
    "unretrieved",
    "buckets",
    "spill_dir",
    "memory_limit",
    "partitioned_by",
)


def refuse_out_of_core(requests: Requests, options: EvalOptions, whose: str) -> None:
    """Refuse an out-of-core evaluation (``buckets=N`` or ``"auto"``, ``memory_limit=``,
    ``spill_dir=``) beside Elliot's metrics (``whose``: how the message names them),
    whatever else the call asks for: they compare the whole recommendation table with
    the training popularity (or the clusters) in one plan, which no bucket of queries
    bounds. Beside the ranking metrics, too, the call would hold the whole table in
    memory, which these options promise it does not; ``buckets=None`` and the default
    ``"auto-memory"`` (no promise) are refused only where no metric reads them.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> refuse_out_of_core(parse_metric_list(["epc@5"]), EvalOptions.build(), "x")
    >>> refuse_out_of_core(
    ...     parse_metric_list(["epc@5"]), EvalOptions.build(buckets=2), "Elliot's metrics"
    ... )
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: buckets=2 bounds the memory of an out-of-core ...
    """
    given = options.given()
    for name in ("buckets", "memory_limit", "spill_dir"):
        value = getattr(options, name)
        if name not in given or value is None or value == "auto-memory":
            continue
        asked = ", ".join(repr(label) for label, _ in requests)
        raise InvalidValueError(
            f"{name}={value!r} bounds the memory of an out-of-core evaluation (buckets of "
            f"queries), and {whose} ({asked}) compare the whole recommendation table in "
            f"one plan, which no bucket bounds: drop {name}= (evaluate them in a call of "
            "their own where the other metrics need it)"
        )


def _order_columns(names: list[str], options: EvalOptions) -> list[str]:
    return [c for c in (options.rank, options.score) if c in names]
