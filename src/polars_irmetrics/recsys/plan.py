"""The lazy plan behind :func:`~polars_irmetrics.beyond_accuracy`.

From the recommendations (and, where a metric reads them, the interactions and the
item features), one lazy polars query:

1. **Rows**: the recommendations with the columns the requested formulas asked for
   (:class:`~polars_irmetrics.metrics.collection.CollectionScope`): the position in
   the user's list (``rank``, or ``score`` descending with ties broken by the item id
   descending compared as text, as :func:`~polars_irmetrics.evaluate` does); the
   item's popularity, the interactions total and the catalogue size (left joins with
   one group-by of the interactions); the popularity head; whether the item has a
   feature vector. The vectors themselves only join slim branches (ids, positions),
   which return one number per user or per row. Where every formula reads the rows
   within a cutoff and none a whole list's similarities, only the rows within the
   largest cutoff are joined (and one row per user beyond it, so that a list with
   nothing within the cutoff keeps its user); the checks read every row, what the
   joins tell of an item from one row per (group, item) with its number of rows.
2. **Pairwise similarity per user list**, without pairs
   (:mod:`polars_irmetrics.recsys.vectors`): for unit vectors ``u_i = v_i / |v_i|``,
   ``sum_{i != j} cos(v_i, v_j) = |sum_i u_i|^2 - sum_i |u_i|^2``, exact up to float
   rounding. The vector sum of each user's list is one group-by (per position of an
   ``Array`` column, or of a ``List`` column's exploded entries), linear in the list
   length instead of the ``m^2`` pairs of a self-join, and no pair of catalogue items
   is ever formed (``benchmarks/results_recsys.md`` measures both).
3. **Similarity to the user's history** the same way: ``mean_h cos(v_i, v_h) =
   u_i . (sum_h u_h) / |H|``, one vector sum per user of the history.
   With ``item_sim_measure='item_cooccurrence_count'`` (Microsoft Recommenders'
   default) the similarity of two items is the number of users who interacted with
   both over ``sqrt(|U_i| |U_j|)``: a self-join of the distinct (user, item) pairs of
   the interactions on the user, its left side cut to the recommended items, counted
   per item pair; each user's list (or list and history) is then a self-join on the
   user, looked up in it (0 for a pair no user shares).
4. **Two group-bys**: per ``by`` group over the rows (coverage, entropy, Gini,
   novelty, and the checks' counts), and per (``by``, user) then per ``by`` group (the
   per-user metrics' means), joined on the ``by`` keys. Every float sum and mean is a
   fixed-point sum (:func:`~polars_irmetrics.metrics.scope.exact_sum`) and every
   division by a constant divides each value
   (:func:`~polars_irmetrics.metrics._common.divide`): a group's value has the same
   bits in any row order and beside any other groups (a float sum in the order the
   joins left the rows moved the last bits from one run to the next).
5. The checks raise (:mod:`.checks`) when the plan runs; nothing is collected before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.ground.facts import (
    ABOVE,
    AGAINST,
    BELOW,
    DOCS,
    ID_ROWS,
    LENGTH,
    NANS,
    NULL_DOCS,
    ORDERED,
    RANKS,
    SAMPLES,
    SharedIds,
    id_rows,
    ranking_facts,
    score_order,
    shared_frame,
)
from polars_irmetrics.ground.facts import ITEM_USERS as FACT_USERS
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import (
    INTERNAL,
    check_id_kinds,
    check_numeric,
    common_id_dtype,
    features_tally,
    id_kind,
    is_text,
    rank_against,
    require_columns,
    side_ids_hint,
    warn_empty_table,
    warn_on_features,
    warns_of_features,
    with_common_key_frames,
    with_interactions_tally,
    with_null_id_check,
    with_tally,
)
from polars_irmetrics.metrics._common import divide
from polars_irmetrics.metrics.collection import (
    CATALOG,
    COOCCURRENCE,
    FEATURES,
    HAS_HISTORY,
    HISTORY_SIM,
    ITEM_USERS,
    POPULARITY,
    POSITION,
    RELEVANCE,
    SEEN,
    TOTAL,
    USERS,
    CollectionFormula,
    CollectionScope,
)
from polars_irmetrics.metrics.registry import MetricRequest, check_inputs, user_mean
from polars_irmetrics.metrics.scope import exact_mean, exact_sum, fixed_sum
from polars_irmetrics.recsys.checks import Words, flag, flag_columns, raise_on_flags, shown
from polars_irmetrics.recsys.options import RecsysOptions, Tables, check_by_keys
from polars_irmetrics.recsys.vectors import pair_similarity_by_sums, vector_sums

__all__ = [
    "build_recsys_plan",
    "merge_counts",
    "merge_unseen_items",
    "merge_users",
    "raise_on_unseen_items",
    "tallied",
    "unseen_item_check",
    "unseen_items",
]

_UNIT = f"{INTERNAL}unit"
_HISTORY = f"{INTERNAL}history"
_HISTORY_N = f"{INTERNAL}history_n"
_MASS = f"{INTERNAL}mass"
_ABOVE = f"{INTERNAL}above"
_KNOWN = f"{INTERNAL}known"
_OTHER = f"{INTERNAL}other"
_SIM = f"{INTERNAL}sim"
_USERS = f"{INTERNAL}users"
_USERS_OTHER = f"{INTERNAL}users_other"
_HISTORY_COOC = f"{HISTORY_SIM}_cooc"

#: Metrics Microsoft Recommenders does not have, so has no convention for unseen items.
_NOT_RECOMMENDERS = (
    "gini_index",
    "average_popularity",
    "long_tail_share",
    "surprisal",
    "categorical_diversity",
)
#: The vector column's name unless features= names another.
_DEFAULT_FEATURES = RecsysOptions().features
_USERS_OF = f"{INTERNAL}users_of"
_KNOWN_USER = f"{INTERNAL}known_user"
_PASSED = f"{INTERNAL}passed"
_ROWS = f"{INTERNAL}rows"


def build_recsys_plan(
    tables: Tables,
    requests: Sequence[tuple[str, MetricRequest]],
    options: RecsysOptions,
    *,
    tally: bool = True,
    counts: bool = False,
    users: bool = False,
) -> pl.LazyFrame:
    """One row per ``by`` group: the ``by`` keys, then one column per request label.
    ``tally``: the warning (and refusal of null ids) of interactions that mostly lack the
    recommendations' items or users (a bucket of users does not give it: it holds some
    of them; :func:`tallied` gives it once for the whole table). ``counts``: instead,
    one row per (``by`` group, recommended item) with the item's count within each
    cutoff the formulas read (:meth:`CollectionScope.count
    <polars_irmetrics.metrics.collection.CollectionScope.count>`), once the checks pass:
    a part of the users' share, which :func:`merge_counts` adds up into the metrics
    (:func:`~polars_irmetrics.metrics.registry.merges_from_counts`). ``users``: the
    values of the recommendations' users only, each row with its group's count of
    history users: a part's share of a metric averaged over the history's users
    (RePlay's ``novelty``), which :func:`merge_users` completes with the history's
    users without recommendations."""
    scope = CollectionScope(item=pl.col(options.item_id))
    given = {"interactions": tables.interactions, "item_features": tables.item_features}
    check_inputs(requests, given, options.caller)
    formulas: list[tuple[str, CollectionFormula]] = []
    for label, request in requests:
        metric = request.metric
        if metric.collection is None:
            raise MetricParameterError(
                f"metric {label!r} is an accuracy metric, one value per query against "
                "judgments: compute it with irm.evaluate(run, metrics, qrels=...)"
            )
        params = request.params(1.0)
        kind = params.options.get("kind", "recommenders")
        called = metric.name if kind == "recommenders" else f"{metric.name}(kind={kind!r})"
        theirs = metric.name not in _NOT_RECOMMENDERS and kind == "recommenders"
        if options.unseen_items == "recommenders" and not theirs:
            raise MetricParameterError(
                f"metric {label!r}: unseen_items='recommenders' is Microsoft Recommenders' "
                "convention for their metrics (catalog_coverage, distributional_coverage, "
                f"novelty, intra_list_diversity, serendipity); they have no {called}, "
                "so it has none: use unseen_items='error' or 'drop'"
            )
        formula = metric.collection(scope, params)
        if counts and formula.counted is None:
            raise MetricParameterError(  # pragma: no cover - the callers route by it
                f"metric {label!r} is not merged from item counts"
            )
        if options.per_user and formula.over == "rows":
            raise MetricParameterError(
                f"metric {label!r} describes a whole recommendation table, not one query: "
                "evaluate it with per_query=False"
            )
        if request.aggregate is not None and (formula.over == "rows" or formula.absent):
            raise MetricParameterError(
                f"metric {label!r}: agg={request.aggregate!r} summarizes per-user values, "
                f"and {metric.name} is "
                + (
                    "one value over every recommendation"
                    if formula.over == "rows"
                    else "a mean over the users of the interactions"
                )
                + ": drop agg="
            )
        formulas.append((label, formula))
    if options.relevance is not None and "relevance" not in scope.needs:
        # read by Microsoft Recommenders' serendipity alone (each item's surprise weighed)
        shown = ", ".join(repr(label) for label, _ in formulas[:3])
        raise InvalidValueError(
            f"serendipity_relevance={options.relevance!r} weighs each recommended item in "
            f"serendipity, and no metric asked for reads it ({shown}): drop "
            "serendipity_relevance= (it would change nothing), or ask for serendipity@k"
        )
    vectors = any(m == FEATURES for _, m in scope.pair_cutoffs) or "history" in scope.needs
    if options.features != _DEFAULT_FEATURES and not vectors:
        # item_features= read for its categories alone (categorical_diversity)
        shown = ", ".join(repr(label) for label, _ in formulas[:3])
        raise InvalidValueError(
            f"features={options.features!r} names the feature vector column of "
            f"item_features=, and no metric asked for reads the vectors ({shown}; "
            "categorical_diversity reads each item's category): drop features= (it would "
            "change nothing), or ask for a metric that reads them (intra_list_diversity@k, "
            "serendipity@k)"
        )

    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    kinds = _check_schemas(tables, scope, options)
    words = _words(options)
    if tables.interactions is not None:  # ids the interactions spell apart: a hint
        words = replace(words, hints=spelling_hints(tables, options))
    whole = rows = _rows(tables.recommendations, scope, options, kinds)
    checks: list[pl.LazyFrame] = []
    interactions, item_features = tables.interactions, tables.item_features
    by_features = {k for k, measure in scope.pair_cutoffs if measure == FEATURES}
    by_cooccurrence = {k for k, measure in scope.pair_cutoffs if measure == COOCCURRENCE}
    named: pl.LazyFrame | None = None
    if scope.categories and item_features is not None:
        named, category_checks = _categories(item_features, scope, options, kinds, tables.ids)
        checks.append(category_checks)

    joins: list[Callable[[pl.LazyFrame, bool], pl.LazyFrame]] = []
    if scope.needs & {"popularity", "cooccurrence"} and interactions is not None:
        joins.append(_popularity(interactions, scope, options, kinds, tables.ids))
    if scope.needs & {"item_users", "seen"} and interactions is not None:
        joins.append(_history_users(interactions, scope, options, kinds, tables.ids))

    def joined(frame: pl.LazyFrame, checks: bool = False) -> pl.LazyFrame:
        """``frame``'s rows with what the formulas read of their item and user: its
        popularity, its users in the history, whether the user saw it, its categories.
        ``checks``: only what :func:`_item_checks` reads (the popularity, the catalogue
        and history sizes, the categories): the joins left out give each row one match
        at most, so the rows are the same."""
        for join in joins:
            frame = join(frame, checks)
        if named is not None:
            frame = frame.join(named, on=item, how="left", nulls_equal=False)
        return frame

    cut = None if counts else _cut(scope)
    if cut is not None:
        # The formulas read only the rows within the largest cutoff (10 of a list of
        # 100, say): those, and one row per user outside every cutoff (no item, no
        # position) so that each user keeps its values, are all that is joined. The
        # checks still read every row (below).
        whole = whole.cache()  # read by the checks, the cut and the users
        listed = whole.select(*by, user).unique()
        rows = pl.concat([whole.filter(pl.col(POSITION) <= cut), listed], how="diagonal_relaxed")
    rows = joined(rows)
    features, width = None, _width(item_features, options)
    if (by_features or "history" in scope.needs) and item_features is not None:
        features, feature_checks = _unit_vectors(item_features, options, kinds)
        checks.append(feature_checks)
        # The rows carry only whether the item has a vector: the vectors join slim
        # branches (item ids and positions), which give back one number per user or row.
        known = features.select(item, pl.lit(True).alias(_KNOWN))
        rows = rows.join(known, on=item, how="left", nulls_equal=False)
    slim = rows.select(*by, user, item, *([POSITION] if "position" in scope.needs else []))
    for k in sorted(by_features, key=lambda c: -1 if c is None else c):
        if features is None:
            break
        kept = slim if k is None else slim.filter(pl.col(POSITION) <= k)
        kept = kept.join(features, on=item, how="inner", nulls_equal=False)
        pairs = pair_similarity_by_sums(kept, [*by, user], _UNIT, width)
        column = scope.pair_column(k, FEATURES)
        rows = rows.join(
            pairs.rename({"pair_similarity_sum": column}),
            on=[*by, user],
            how="left",
            nulls_equal=True,
        ).with_columns(
            # a list none of whose items has a vector (unseen_items='recommenders' only;
            # refused otherwise): every pair has similarity 0, as Recommenders' fillna(0)
            pl.col(column).fill_null(0.0)
        )
    cooccurrence = None
    if "cooccurrence" in scope.needs and interactions is not None:
        cooccurrence = _cooccurrence(interactions, slim, options, kinds, tables.ids)
    for k in sorted(by_cooccurrence, key=lambda c: -1 if c is None else c):
        if cooccurrence is None:
            break
        kept = slim if k is None else slim.filter(pl.col(POSITION) <= k)
        column = scope.pair_column(k, COOCCURRENCE)
        pairs = _pair_cooccurrence(kept, cooccurrence, options, interactions).rename(
            {_SIM: column}
        )
        rows = rows.join(pairs, on=[*by, user], how="left", nulls_equal=True)
    if scope.needs & {"history", "history_cooc"} and interactions is not None:
        keys = [*_interaction_keys(interactions, options), user]
        sizes = (
            _cast_ids(interactions.select(keys), kinds)
            .group_by(keys)
            .agg(pl.len().cast(pl.Float64).alias(_HISTORY_N))
        )
        rows = rows.join(sizes, on=keys, how="left", nulls_equal=True)
    if "history" in scope.needs and interactions is not None and features is not None:
        similarity, history_checks = _with_history(
            slim, interactions, features, options, kinds, width
        )
        rows = rows.join(similarity, on=[*by, user, item], how="left", nulls_equal=True)
        if options.unseen_items != "recommenders":
            checks.append(history_checks)
    if "history_cooc" in scope.needs and interactions is not None and cooccurrence is not None:
        similarity = _history_cooccurrence(slim, interactions, cooccurrence, options, kinds)
        rows = rows.join(similarity, on=[*by, user, item], how="left", nulls_equal=True)

    row_exprs = [f.expr.alias(label) for label, f in formulas if f.over == "rows" and not counts]
    keys = [] if interactions is None else _interaction_keys(interactions, options)
    if cut is None:
        row_exprs += _item_checks(scope, options, kinds, keys)
        per_group = _aggregate(rows, by, row_exprs)
    else:
        # Every row checked (below); what the joins tell of its item from one row per
        # (group, item), its first user and its number of rows (the same counts and
        # examples).
        items = whole.group_by([*by, item]).agg(
            pl.col(user).min(), pl.len().cast(pl.Int64).alias(_ROWS)
        )
        item_checks = _item_checks(scope, options, kinds, keys, rows=pl.col(_ROWS))
        per_group = _aggregate(joined(items, checks=True), by, item_checks)
        if row_exprs:
            per_group = _join(per_group, _aggregate(rows, by, row_exprs), by)
    if options.check_run:  # the run's ids, order and duplicates, from the rows as given
        per_group = _join(per_group, _run_checks(whole, scope, options, kinds), by)
    if counts:
        for frame in checks:
            per_group = per_group.join(frame, how="cross")
        return _checked_per_user(_item_counts(rows, scope, options), per_group, by, words)
    user_exprs = [f.expr.alias(label) for label, f in formulas if f.over == "users"]
    if options.per_user:
        for frame in checks:
            per_group = per_group.join(frame, how="cross")
        if users:  # a part's share: the history's other users are the merge's
            values = rows.group_by([*by, user]).agg(
                *user_exprs, pl.col(USERS).first().alias(_USERS_OF)
            )
        else:
            values = _per_user(rows, user_exprs, formulas, interactions, options, kinds)
        checked = _checked_per_user(values, per_group, by, words)
        return (tallied(checked, tables, options) if tally else checked).sort([*by, user])
    if user_exprs:
        if any(f.absent is not None for _, f in formulas):
            user_exprs.append(pl.col(USERS).first().alias(_USERS_OF))
        per_user = rows.group_by([*by, user]).agg(user_exprs)
        if any(r.aggregate is not None for _, r in requests):
            # running sums (agg=): in the users' order, not the group-by's
            per_user = per_user.sort([*by, user])
        request_of = dict(requests)
        means = [  # the means the engines and the buckets take too (user_mean)
            _absent_mean(label, f)
            if f.absent is not None
            else user_mean(label, request_of[label]).alias(label)
            for label, f in formulas
            if f.over == "users"
        ]
        per_group = _join(per_group, _aggregate(per_user, by, means), by)
    for frame in checks:
        per_group = per_group.join(frame, how="cross")
    labels = [label for label, _ in formulas]
    result = per_group.select(*by, *labels, *flag_columns(per_group.collect_schema().names()))
    schema = result.collect_schema()
    out_schema = pl.Schema({name: schema[name] for name in [*by, *labels]})
    checked = result.map_batches(lambda frame: raise_on_flags(frame, words), schema=out_schema)
    checked = tallied(checked, tables, options) if tally else checked
    return checked.sort(by) if by else checked


def _item_counts(
    rows: pl.LazyFrame, scope: CollectionScope, options: RecsysOptions
) -> pl.LazyFrame:
    """One row per (``by`` group, recommended item): its count within each cutoff of
    ``scope.count_cutoffs`` (Int64; 0 below every cutoff: the group still has its row,
    as in the one plan)."""
    by, item = list(options.by_keys), options.item_id
    cuts = sorted(scope.count_cutoffs, key=lambda k: -1 if k is None else k)
    names = [scope.count_column(k) for k in cuts]
    return rows.group_by([*by, item]).agg(
        scope.top(k).sum().cast(pl.Int64).alias(name) for k, name in zip(cuts, names, strict=True)
    )


def merge_counts(
    counts: pl.LazyFrame,
    tables: Tables,
    requests: Sequence[tuple[str, MetricRequest]],
    options: RecsysOptions,
) -> pl.LazyFrame:
    """The metrics of :func:`build_recsys_plan` from the item counts of its parts
    (``counts=True``; the rows of several parts, each a share of the users, stacked):
    the counts added per (``by`` group, item), the items' popularity and the
    catalogue's size read from ``tables.interactions`` as the one plan reads them, and
    each formula's :attr:`~polars_irmetrics.metrics.collection.CollectionFormula.counted`
    aggregation per ``by`` group. The same bits as the one plan on the whole table
    (the counts are whole numbers; the formulas' sums are exact in any order).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> recs = pl.LazyFrame({"user_id": ["a", "a", "b", "c", "c"],
    ...                      "item_id": [1, 2, 1, 3, 1], "rank": [1, 2, 1, 1, 2]})
    >>> history = pl.LazyFrame({"user_id": ["a", "b", "d", "d"], "item_id": [1, 2, 3, 4]})
    >>> requests = parse_metric_list(["distributional_coverage@2", "gini_index@1"])
    >>> one = build_recsys_plan(Tables(recs, history), requests, RecsysOptions(),
    ...                         ).collect()
    >>> parts = [build_recsys_plan(Tables(part, history), requests, RecsysOptions(),
    ...                            counts=True, tally=False)
    ...          for part in (recs.head(3), recs.tail(2))]
    >>> merged = merge_counts(pl.concat(parts), Tables(recs, history), requests,
    ...                       RecsysOptions()).collect()
    >>> merged.equals(one), merged.row(0)
    (True, (1.3709505944546687, 0.7777777777777778))
    """
    scope, formulas, kinds = _merged_formulas(tables, requests, options)
    by, item = list(options.by_keys), options.item_id
    names = [scope.count_column(k) for k in scope.count_cutoffs]
    rows = _cast_ids(counts, kinds).group_by([*by, item]).agg(pl.col(n).sum() for n in names)
    if "popularity" in scope.needs and tables.interactions is not None:
        rows = _with_popularity(rows, tables.interactions, scope, options, kinds)
    exprs = [
        (pl.lit(None) if f.counted is None else f.counted).alias(label) for label, f in formulas
    ]
    merged = _aggregate(rows, by, exprs).select(*by, *(label for label, _ in formulas))
    return merged.sort(by) if by else merged


def _merged_formulas(
    tables: Tables, requests: Sequence[tuple[str, MetricRequest]], options: RecsysOptions
) -> tuple[CollectionScope, list[tuple[str, CollectionFormula]], dict[str, pl.DataType]]:
    """A merge's formulas, the scope they registered their needs in, and the ids' dtypes
    (:func:`_check_schemas` of the whole table's schemas)."""
    scope = CollectionScope(item=pl.col(options.item_id))
    formulas: list[tuple[str, CollectionFormula]] = []
    for label, request in requests:
        collection = request.metric.collection
        if collection is None:  # pragma: no cover - the callers route by the formulas
            raise MetricParameterError(f"metric {label!r} is not a metric of the table")
        formulas.append((label, collection(scope, request.params(1.0))))
    return scope, formulas, _check_schemas(tables, scope, options)


def merge_users(
    values: pl.LazyFrame,
    tables: Tables,
    requests: Sequence[tuple[str, MetricRequest]],
    options: RecsysOptions,
) -> pl.LazyFrame:
    """The metrics of :func:`build_recsys_plan` from the users' values of its parts
    (``users=True``, with ``options.per_user``; every part's rows stacked, each user in
    one part): with ``options.per_user``, the users' rows and the history's users
    without recommendations (valued ``absent``), as the one plan gives them; else each
    metric per ``by`` group, averaged over the history's users by the one plan's exact
    means. The same bits as the one plan on the whole table.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> recs = pl.LazyFrame({"user_id": ["a", "a", "b"], "item_id": [1, 2, 1],
    ...                      "rank": [1, 2, 1]})
    >>> history = pl.LazyFrame({"user_id": ["a", "b", "c"], "item_id": [1, 2, 3]})
    >>> requests = parse_metric_list(["novelty(kind='replay')@2"])
    >>> one = build_recsys_plan(Tables(recs, history), requests, RecsysOptions()).collect()
    >>> mode = RecsysOptions(per_user=True)
    >>> parts = [build_recsys_plan(Tables(recs.filter(pl.col("user_id") == u), history),
    ...                            requests, mode, tally=False, users=True) for u in "ab"]
    >>> merged = merge_users(pl.concat(parts), Tables(recs, history), requests,
    ...                      RecsysOptions()).collect()
    >>> merged.equals(one), merged.item()  # a: 1 - 1/2, b: 1, c (no list): 1
    (True, 0.8333333333333334)
    """
    _, formulas, kinds = _merged_formulas(tables, requests, options)
    by, user = list(options.by_keys), options.user_id
    values = _cast_ids(values, kinds)
    labels = [label for label, _ in formulas]
    if options.per_user:
        rows = values.select(*by, user, *labels)
        groups = values.select(by).unique()
        filled = _with_absent(rows, groups, formulas, tables.interactions, options, kinds)
        return filled.sort([*by, user])
    request_of = dict(requests)
    means = [
        _absent_mean(label, f) if f.absent is not None else user_mean(label, request_of[label])
        for label, f in formulas
    ]
    merged = _aggregate(
        values, by, [m.alias(label) for m, label in zip(means, labels, strict=True)]
    )
    return merged.select(*by, *labels).sort(by) if by else merged.select(labels)


_ROWS_GIVEN = "__irm_rows_given"


def _warn_if_empty(row: Mapping[str, Any]) -> None:
    if row[_ROWS_GIVEN] == 0:
        warn_empty_table("the recommendation table")


def tallied(values: pl.LazyFrame, tables: Tables, options: RecsysOptions) -> pl.LazyFrame:
    """``values``, and a warning when the interactions hold few of the recommendations'
    items or users (whatever metric reads them: :func:`warn_on_interactions`), or the
    item features few of their items where those are scored or left out instead of
    refused (:func:`warn_on_features`); with ``unseen_items='drop'``, of the
    recommendations as given, before the drop. The interactions' null ids are refused
    before any of these warnings (a refused input warns of nothing)."""
    run = tables.recommendations if tables.given is None else tables.given
    item = options.item_id
    if tables.interactions is not None:  # its null ids refused before the warnings below
        held = tables.interactions.collect_schema()
        named = [c for c in (options.user_id, item) if c in held]
        values = with_null_id_check(values, tables.interactions, named, tables.ids)
    # the distinct items (and users) alone where the door has them for every route
    items = run if tables.ids is None else tables.ids.docs
    # no recommendation: every metric null, said as the other routes say it
    values = with_tally(values, items.select(pl.len().alias(_ROWS_GIVEN)), _warn_if_empty)
    if tables.item_features is not None and warns_of_features(options.unseen_items):
        tally = features_tally(items, tables.item_features, item=item, shared=tables.ids)
        unseen = options.unseen_items
        values = with_tally(
            values,
            tally,
            lambda row: warn_on_features(
                row, item=item, run="recommendations", unseen_items=unseen
            ),
        )
    if tables.interactions is None:
        return values
    return with_interactions_tally(
        values,
        items,
        tables.interactions,
        user=options.user_id,
        item=item,
        name="recommendations",
        dropped=options.unseen_items == "drop",
        systems=options.systems,
        system_rows=run,
        users=None if tables.ids is None else tables.ids.queries,
        catalogue=options.catalogue,
        shared=tables.ids,
        readers=options.readers,
        history_readers=options.history_readers,
    )


def _per_user(
    rows: pl.LazyFrame,
    user_exprs: list[pl.Expr],
    formulas: list[tuple[str, CollectionFormula]],
    interactions: pl.LazyFrame | None,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
) -> pl.LazyFrame:
    """Each user's values, one row per (``by`` group, user); with a formula averaged
    over the users of the interactions (``absent``), those users without
    recommendations too, valued ``absent``."""
    user, by = options.user_id, list(options.by_keys)
    values = rows.group_by([*by, user]).agg(user_exprs)
    return _with_absent(values, rows.select(by).unique(), formulas, interactions, options, kinds)


def _with_absent(
    values: pl.LazyFrame,
    groups: pl.LazyFrame,
    formulas: list[tuple[str, CollectionFormula]],
    interactions: pl.LazyFrame | None,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
) -> pl.LazyFrame:
    """The users' ``values`` and, with a formula averaged over the users of the
    interactions (``absent``), those users without recommendations too, valued
    ``absent``, in each of the ``by`` ``groups``."""
    user, by = options.user_id, list(options.by_keys)
    absent = {label: f.absent for label, f in formulas if f.absent is not None}
    if not absent or interactions is None:
        return values
    keys = _interaction_keys(interactions, options)
    known = (
        _cast_ids(interactions.select(*keys, user), kinds)
        .unique()
        .with_columns(pl.lit(True).alias(_KNOWN_USER))
    )
    if by:
        known = (
            groups.join(known, on=keys, nulls_equal=True)
            if keys
            else groups.join(known, how="cross")
        )
    filled = (
        pl.when(pl.col(_KNOWN_USER)).then(pl.col(label).fill_null(value)).alias(label)
        for label, value in absent.items()
    )
    return (
        values.join(known, on=[*by, user], how="full", coalesce=True, nulls_equal=True)
        .with_columns(filled)
        .drop(_KNOWN_USER)
    )


def _checked_per_user(
    values: pl.LazyFrame, per_group: pl.LazyFrame, by: list[str], words: Words
) -> pl.LazyFrame:
    """``values`` once the checks of ``per_group`` (one row per ``by`` group) pass."""
    flags = flag_columns(per_group.collect_schema().names())
    passed = per_group.select(*by, *flags, pl.lit(True).alias(_PASSED))
    schema = passed.collect_schema()
    out_schema = pl.Schema({name: schema[name] for name in [*by, _PASSED]})
    ok = passed.map_batches(lambda frame: raise_on_flags(frame, words), schema=out_schema)
    joined = values.join(ok, on=by, nulls_equal=True) if by else values.join(ok, how="cross")
    return joined.drop(_PASSED)


def _absent_mean(label: str, formula: CollectionFormula) -> pl.Expr:
    """The mean of the users' values of a formula with ``absent``: over the users of the
    interactions, those without recommendations counting ``absent`` (the others:
    :func:`~polars_irmetrics.metrics.registry.user_mean`)."""
    users = pl.col(_USERS_OF).first()
    total = exact_sum(pl.col(label)) + (users - pl.col(label).count()) * formula.absent
    return divide(total, users)  # users: one value for every group (metrics._common)


def _aggregate(frame: pl.LazyFrame, by: list[str], exprs: list[pl.Expr]) -> pl.LazyFrame:
    """``exprs`` per ``by`` group; without ``by``, over the whole frame as one group (a
    group-by on a constant: polars 2.1's ``select`` refuses aggregations whose inner
    filters differ in length, such as an entropy beside a count), one row even when the
    frame is empty."""
    if by:
        return frame.group_by(by).agg(exprs)
    one = f"{INTERNAL}one"
    grouped = frame.with_columns(pl.lit(0).alias(one)).group_by(one).agg(exprs)
    # an empty table is one group too: one row, each value null (no user, no row)
    return pl.LazyFrame({one: [0]}).join(grouped, on=one, how="left").drop(one)


def _check_schemas(
    tables: Tables, scope: CollectionScope, options: RecsysOptions
) -> dict[str, pl.DataType]:
    """Check every column the plan reads; the dtype ids are cast to, by id column."""
    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    for key in by:
        if key in (user, item):
            raise InvalidValueError(
                f"by={by!r} names {key!r}, which is already the user or item id; list "
                "only extra keys such as 'system'"
            )
    if options.caller == "irm.beyond_accuracy":
        hint = "pass the column names, e.g. user_id='uid', item_id='iid'"
    else:  # irm.evaluate's keywords
        hint = "pass the column names, e.g. query_id='uid', doc_id='iid'"
    called = _frame(options)
    schema = tables.recommendations.collect_schema()
    require_columns(schema, [user, item, *by], called, hint)
    for column in (user, item):  # strings or integers (any other dtype refused, named)
        id_kind(schema, column, called)
    dtypes = {c: [schema[c]] for c in (user, item)}
    order = _order(schema, options)
    if order is None and "position" in scope.needs:
        verb = "have" if called == "recommendations" else "has"
        raise ColumnNotFoundError(
            f"the {called} {verb} neither a {options.rank!r} nor a {options.score!r} "
            "column to order each user's list, which a cutoff (@k) needs; name yours "
            "with rank=... or score=..."
        )
    if order is not None and ("position" in scope.needs or options.check_run):
        # checked as a ranking metric checks it, whether or not a metric reads it
        column = options.rank if order == "rank" else options.score
        require_columns(schema, [column], called, "name it with rank=... or score=...")
        check_numeric(schema, column, called, integer=order == "rank")
        scope.needs.add(f"check:{order}")
        if "position" in scope.needs:
            scope.needs.add(f"order:{order}")
    if options.relevance is not None:
        require_columns(schema, [options.relevance], called, "name it with relevance=...")
        check_numeric(schema, options.relevance, called, integer=False)
    others = [("interactions", tables.interactions, [item])]
    if scope.needs & {"history", "history_cooc", "cooccurrence", "item_users", "seen"}:
        others[0] = ("interactions", tables.interactions, [user, item])
    vectors = any(m == FEATURES for _, m in scope.pair_cutoffs) or "history" in scope.needs
    described = [options.features] if vectors or not scope.categories else []
    others.append(("item_features", tables.item_features, [item, *described]))
    for name, frame, columns in others:
        if frame is None:
            continue
        other = frame.collect_schema()
        ids = [c for c in columns if c != options.features]
        require_columns(other, ids, name, side_ids_hint(called, ids))
        if name == "item_features":
            vector_hint = "name the feature vector column with features=..."
            require_columns(other, columns, name, vector_hint)
            require_columns(
                other,
                sorted(scope.categories),
                name,
                "name the category column with categorical_diversity(category='...')",
            )
            for category in sorted(scope.categories):
                _check_category(other[category], category)
        for column in columns:
            if column == options.features:
                _check_vector(other[column], column)
                continue
            check_id_kinds(schema, called, other, name, [column])
            dtypes[column].append(other[column])
        if name == "interactions" and user not in columns and user in other:
            # not read by the metrics asked for, but by the tally of the run's users
            # with a history, whatever the metrics: ids of another kind (or a list)
            # refused as where a metric reads them
            check_id_kinds(schema, called, other, name, [user])
        if name == "interactions":
            check_by_keys(schema, other, [key for key in by if key in other], name)
    # one dtype per id in every table (UInt64 ids beyond Int64 kept whole)
    return {c: common_id_dtype(dtypes[c]) for c in (user, item)}


def _check_vector(dtype: pl.DataType, column: str) -> None:
    inner = dtype.inner if isinstance(dtype, pl.List | pl.Array) else None
    if inner is None or not inner.is_numeric():
        raise ColumnTypeError(
            f"column {column!r} in the item_features has dtype {dtype}; it must hold one "
            "feature vector per item, a list or array of numbers: e.g. "
            f"pl.col({column!r}).cast(pl.List(pl.Float64)), or name the vector column "
            "with features=..."
        )


def _check_category(dtype: pl.DataType, column: str) -> None:
    """Refuse a category column that holds no single label per item: a multi-label
    (List, Array), nested (Struct) or Object column. RePlay's CategoricalDiversity reads
    one category per item; a list counted as one category would give ``[a, b]``, ``[b]``,
    ``[a]`` three categories. Boolean labels are two categories."""
    if isinstance(dtype, pl.List):
        fix = f"pl.col({column!r}).list.first()"
    elif isinstance(dtype, pl.Array):
        fix = f"pl.col({column!r}).arr.first()"
    elif isinstance(dtype, pl.Struct):
        field = dtype.fields[0].name if dtype.fields else "..."
        fix = f"pl.col({column!r}).struct.field({field!r})"
    elif isinstance(dtype, pl.Object):
        fix = "labels built as strings"
    else:
        return
    raise ColumnTypeError(
        f"column {column!r} in the item_features has dtype {dtype}; categorical_diversity "
        "reads one category per item (RePlay's CategoricalDiversity), a single label, "
        f"not a multi-label or nested value: pick one label per item, e.g. {fix} "
        "(exploding the column gives an item more than one row, which is refused too)"
    )


def _width(item_features: pl.LazyFrame | None, options: RecsysOptions) -> int | None:
    """The feature vectors' length where the schema tells it (an ``Array`` column)."""
    if item_features is None:
        return None
    dtype = item_features.collect_schema().get(options.features)
    return dtype.size if isinstance(dtype, pl.Array) else None


def _cast_ids(frame: pl.LazyFrame, kinds: dict[str, pl.DataType]) -> pl.LazyFrame:
    names = frame.collect_schema().names()
    return frame.with_columns(pl.col(c).cast(t) for c, t in kinds.items() if c in names)


def _rows(
    recommendations: pl.LazyFrame,
    scope: CollectionScope,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
) -> pl.LazyFrame:
    """The recommendation rows with their position and relevance weight, if needed."""
    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    keep = [*by, user, item]
    if "check:rank" in scope.needs:
        keep.append(options.rank)
    if "check:score" in scope.needs or _against(recommendations, scope, options):
        keep.append(options.score)
    if options.relevance is not None:
        keep.append(options.relevance)
    if _sampled(recommendations, options):
        keep.append(str(options.sample_id))
    rows = _cast_ids(recommendations.select(list(dict.fromkeys(keep))), kinds)
    if "order:rank" in scope.needs:
        # a rank beyond Int64 (UInt64) null here, refused by the checks
        rank = pl.col(options.rank).cast(pl.Int64, strict=False)
        rows = rows.with_columns(rank.alias(POSITION))
    elif "order:score" in scope.needs:
        text = pl.col(item).cast(pl.String)
        # exact for integer scores beyond 2**53 too (ground.facts.score_order)
        score = score_order(options.score, recommendations.collect_schema()[options.score])
        tie_broken = pl.struct(score, text)
        rows = rows.with_columns(
            tie_broken.rank("ordinal", descending=True)
            .over([*by, user])
            .cast(pl.Int64)
            .alias(POSITION)
        )
    weight = pl.lit(1.0) if options.relevance is None else pl.col(options.relevance)
    return rows.with_columns(weight.cast(pl.Float64).alias(RELEVANCE))


def _sampled(rows: pl.LazyFrame, options: RecsysOptions) -> bool:
    """Whether the run checks read the recommendations' sample column
    (:attr:`~polars_irmetrics.recsys.options.RecsysOptions.sample_id`): the plan checks
    the run, and it has the column."""
    sample = options.sample_id
    return options.check_run and sample is not None and sample in rows.collect_schema()


def _interaction_keys(interactions: pl.LazyFrame, options: RecsysOptions) -> list[str]:
    """The ``by`` keys the interactions carry: popularity is counted per those groups."""
    names = interactions.collect_schema().names()
    return [key for key in options.by_keys if key in names]


def _join(left: pl.LazyFrame, right: pl.LazyFrame, on: list[str]) -> pl.LazyFrame:
    if not on:
        return left.join(right, how="cross")
    return left.join(right, on=on, how="left", nulls_equal=True)


def _with_popularity(
    rows: pl.LazyFrame,
    interactions: pl.LazyFrame,
    scope: CollectionScope,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
) -> pl.LazyFrame:
    """Each row's item popularity, the interactions total and catalogue size, and the
    popularity head for each share asked for."""
    return _popularity(interactions, scope, options, kinds)(rows, False)


def _popularity(
    interactions: pl.LazyFrame,
    scope: CollectionScope,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
    shared: SharedIds | None = None,
) -> Callable[[pl.LazyFrame, bool], pl.LazyFrame]:
    """:func:`_with_popularity`'s joins, the interactions' tables built once (cached)
    for every frame they are joined to; with ``True``, no popularity head (which the
    item checks do not read)."""
    item = options.item_id
    keys = _interaction_keys(interactions, options)
    history = _cast_ids(interactions.select(*keys, item), kinds)
    # one group-by of the interactions, shared with the other routes of the call
    held = id_rows(shared, interactions, history, keys, item)
    counts = held.select(*keys, item, pl.col(ID_ROWS).cast(pl.Float64).alias(POPULARITY))
    totals = [pl.col(ID_ROWS).sum().alias(TOTAL), pl.len().cast(pl.Int64).alias(CATALOG)]
    sizes = (held.group_by(keys).agg(totals) if keys else held.select(totals)).cache()
    levels = None
    if scope.head_shares:
        # Interactions held by the items strictly more popular than each popularity.
        running = pl.col(_MASS).cum_sum()
        above = (running.over(keys) if keys else running) - pl.col(_MASS)
        levels = (
            counts.group_by([*keys, POPULARITY])
            .agg(pl.col(POPULARITY).sum().alias(_MASS))
            .sort([*keys, POPULARITY], descending=[False] * len(keys) + [True])
            .select(*keys, POPULARITY, above.alias(_ABOVE))
            .cache()
        )

    def join(rows: pl.LazyFrame, checks: bool = False) -> pl.LazyFrame:
        rows = rows.join(counts, on=[*keys, item], how="left", nulls_equal=False)
        rows = _join(rows, sizes, keys)
        if levels is None or checks:
            return rows
        return rows.join(
            levels, on=[*keys, POPULARITY], how="left", nulls_equal=False
        ).with_columns(
            (pl.col(_ABOVE) < share * pl.col(TOTAL)).alias(scope.head_column(share))
            for share in scope.head_shares
        )

    return join


def _history_users(
    interactions: pl.LazyFrame,
    scope: CollectionScope,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
    shared: SharedIds | None,
) -> Callable[[pl.LazyFrame, bool], pl.LazyFrame]:
    """Joins giving each row the distinct users of its item in the interactions and the
    distinct users of the interactions (RePlay's surprisal); whether the user interacted
    with the item, and has any interaction (RePlay's novelty); with ``True``, the
    distinct users of the interactions alone (what the item checks read). The interactions' tables
    are built once (cached) for every frame they are joined to; the distinct pairs and
    their count per item once for every route of the call where the door shares them
    (``shared``: Elliot's metrics read them too)."""
    user, item = options.user_id, options.item_id
    keys = _interaction_keys(interactions, options)
    pairs = _cast_ids(interactions.select(*keys, user, item), kinds)
    # the users with a history: one group-by of the interactions for every route
    history = id_rows(shared, interactions, pairs.select(*keys, user), keys, user)
    count = pl.len().cast(pl.Float64).alias(USERS)
    users = (history.group_by(keys).agg(count) if keys else history.select(count)).cache()
    per_item = seen = known = None
    # each (user, item) pair once: an item's distinct users are its pairs (one
    # hash of the pairs for both joins, not a distinct count per item beside it)
    distinct_pairs = shared_frame(shared, interactions, "pairs", pairs.unique())
    if "item_users" in scope.needs:
        per_item = _item_users(distinct_pairs, keys, item, interactions, shared, ITEM_USERS)
    if "seen" in scope.needs:
        seen = distinct_pairs.with_columns(pl.lit(True).alias(SEEN)).cache()
        known = history.select(*keys, user, pl.lit(True).alias(HAS_HISTORY))

    def join(rows: pl.LazyFrame, checks: bool = False) -> pl.LazyFrame:
        rows = _join(rows, users, keys)
        if checks:
            return rows
        if per_item is not None:
            rows = rows.join(per_item, on=[*keys, item], how="left", nulls_equal=False)
        if seen is not None and known is not None:
            rows = (
                rows.join(seen, on=[*keys, user, item], how="left", nulls_equal=False)
                .join(known, on=[*keys, user], how="left", nulls_equal=False)
                .with_columns(pl.col(SEEN).fill_null(False), pl.col(HAS_HISTORY).fill_null(False))
            )
        return rows

    return join


def _categories(
    item_features: pl.LazyFrame,
    scope: CollectionScope,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
    shared: SharedIds | None = None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Each item's category in each category column asked for (joined to the rows on
    the item); the one-row frame of the check that the item features list an item
    once, counted from each item's rows (:func:`~polars_irmetrics.ground.facts.id_rows`:
    one group-by of the table, which the coverage tally and ``unseen_items='drop'``
    read too where the door shares it, ``shared``)."""
    item, columns = options.item_id, sorted(scope.categories)
    table = _cast_ids(item_features.select(item, *columns), kinds)
    rows = id_rows(shared, item_features, table.select(item), [], item)
    doubled = rows.select(
        *flag(
            "dup_category",
            pl.col(ID_ROWS) > 1,
            "{}",
            [(pl.col(item), kinds[item])],
            count=(pl.col(ID_ROWS) - 1).sum(),
        )
    )
    checks = table.select(
        *flag("null_feature_ids", pl.col(item).is_null(), example=pl.lit(repr(item))),
        *_nan_categories(table, item, columns, kinds),
    )
    checks = pl.concat([checks, doubled], how="horizontal")
    # joined to the rows within the cutoffs and to every user's rows: one scan for both
    named = table.select(
        item, *(pl.col(c).alias(scope.category_column(c)) for c in columns)
    ).cache()
    return named, checks


def _nan_categories(
    table: pl.LazyFrame, item: str, columns: Sequence[str], kinds: dict[str, pl.DataType]
) -> list[pl.Expr]:
    """The check that no float category is NaN (a null is refused where a recommended
    item has one; NaN, equal to itself in a group-by, would count as a category): the
    item rows with one, and the first item with the first such column."""
    schema = table.collect_schema()
    floats = [c for c in columns if schema[c].is_float()]
    if not floats:
        return []
    nan = [pl.col(c).is_nan().fill_null(False) for c in floats]
    where = pl.coalesce(pl.when(bad).then(pl.lit(c)) for bad, c in zip(nan, floats, strict=True))
    return flag(
        "nan_category",
        pl.any_horizontal(nan),
        "{} has a NaN category in column '{}'",
        [(pl.col(item), kinds[item]), (where, None)],
    )


#: Vectors whose largest component lies within [1 / _SAFE, _SAFE] square and sum
#: without overflow or underflow (to about 1e-300 for a thousand components).
_SAFE = 1e100


def _unit_vectors(
    item_features: pl.LazyFrame, options: RecsysOptions, kinds: dict[str, pl.DataType]
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Each item's unit vector ``v / |v|``, and the one-row frame of the table's checks."""
    item, column = options.item_id, options.features
    vector = pl.col(column).cast(pl.List(pl.Float64))
    table = _cast_ids(item_features.select(item, vector.alias(column)), kinds)
    length = pl.col(column).list.len()
    squares = (pl.col(column) * pl.col(column)).list.sum()
    finite = pl.col(column).list.eval(pl.element().is_finite().fill_null(False).all()).list.first()
    name = [(pl.col(item), kinds[item])]
    null = pl.col(column).is_null()
    empty = ~null & (length == 0)
    bad_value = ~null & ~empty & ~finite
    # every component 0 (not a sum of squares that underflows: 1e-170 is a direction)
    nonzero = pl.col(column).list.eval(pl.element() != 0).list.any()
    zero = ~null & ~empty & finite & ~nonzero
    lengths = length.filter(~null & ~empty)
    ragged = ~null & ~empty & (length != lengths.min())
    checks = table.select(
        *flag("null_feature_ids", pl.col(item).is_null(), example=pl.lit(repr(item))),
        *flag("null_features", null, "{}", name),
        *flag("empty_features", empty, "{}", name),
        *flag("nan_features", bad_value, "{}", name),
        *flag("zero_features", zero, "{}", name),
        *flag(
            "ragged_features",
            ragged,
            example=pl.format("{} and {}", lengths.min(), length.filter(ragged).first()),
        ),
        *flag(
            "dup_features",
            pl.col(item).is_duplicated(),
            "{}",
            name,
            count=pl.len() - pl.col(item).n_unique(),
        ),
    )
    # |v| without overflow or underflow: where the largest component is far from 1
    # (1e155 squares to inf, 1e-170 to 0), v is scaled by it first (the other vectors
    # keep their bits)
    top = pl.col(column).list.eval(pl.element().abs()).list.max()
    scaled = pl.col(column) / top
    wide = (top > _SAFE) | (top < 1 / _SAFE)
    unit = (
        pl.when(wide)
        .then(scaled / (scaled * scaled).list.sum().sqrt())
        .otherwise(pl.col(column) / squares.sqrt())
    )
    # an empty or ragged vector is refused by the checks; null here, so that no dot
    # product of two lengths (a recommended item's with its user's history, or with
    # another item's) fails in polars before they run
    units = table.select(item, pl.when(empty | ragged).then(None).otherwise(unit).alias(_UNIT))
    return units, checks


def _with_history(
    rows: pl.LazyFrame,
    interactions: pl.LazyFrame,
    features: pl.LazyFrame,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
    width: int | None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per recommendation (``by`` keys, user, item): the mean cosine similarity of the
    item to the user's history and the size of that history (null: no history); and
    the checks of the history's items."""
    user, item = options.user_id, options.item_id
    keys = [*_interaction_keys(interactions, options), user]
    history = _cast_ids(interactions.select(*keys, item), kinds).join(
        features, on=item, how="left", nulls_equal=False
    )
    missing = pl.col(_UNIT).is_null()
    checks = history.select(
        *flag(
            "no_history_features",
            missing,
            "{} (in the history of user {})",
            [(pl.col(item), kinds[item]), (pl.col(user), kinds[user])],
        )
    )
    known = history.filter(~missing)
    sums = vector_sums(known, keys, _UNIT, width).rename({_UNIT: _HISTORY})
    sizes = history.group_by(keys).agg(pl.len().cast(pl.Float64).alias(_HISTORY_N))
    dot = (pl.col(_UNIT) * pl.col(_HISTORY)).list.sum() / pl.col(_HISTORY_N)
    # A recommended item without a vector, or a history none of whose items has one,
    # reaches here only under unseen_items='recommenders' (refused otherwise): its
    # similarity to every item of the history is 0, as Recommenders' fillna(0); the
    # mean still divides by the whole history. Null only for a user without history.
    similarity = pl.when(pl.col(_HISTORY_N).is_not_null()).then(dot.fill_null(0.0))
    by = list(options.by_keys)
    per_row = (
        rows.select(*by, user, item)
        .join(features, on=item, how="left", nulls_equal=False)
        .join(sizes, on=keys, how="left", nulls_equal=True)
        .join(sums, on=keys, how="left", nulls_equal=True)
        .select(*by, user, item, similarity.alias(HISTORY_SIM))
    )
    return per_row, checks


def _item_users(
    pairs: pl.LazyFrame,
    keys: list[str],
    item: str,
    interactions: pl.LazyFrame,
    shared: SharedIds | None,
    name: str,
) -> pl.LazyFrame:
    """The distinct ``pairs``' count per keys and item (an item's distinct users), in a
    Float64 column ``name``: one pass for every reader of the call (``shared``)."""
    per_item = pairs.group_by([*keys, item]).agg(pl.len().cast(pl.Float64).alias(FACT_USERS))
    return shared_frame(shared, interactions, "item_users", per_item).rename({FACT_USERS: name})


def _cooccurrence(
    interactions: pl.LazyFrame,
    recommended: pl.LazyFrame,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
    shared: SharedIds | None,
) -> pl.LazyFrame:
    """Microsoft Recommenders' co-occurrence similarity of every recommended item
    ``i`` with every other item ``j`` that shares a user with it, per interaction key:
    ``|U_i & U_j| / sqrt(|U_i| |U_j|)`` (columns: the interaction keys, the item id,
    ``_OTHER``, ``_SIM``). A pair no user shares has no row (similarity 0)."""
    user, item = options.user_id, options.item_id
    keys = _interaction_keys(interactions, options)
    distinct = _cast_ids(interactions.select(*keys, user, item), kinds).unique()
    pairs = shared_frame(shared, interactions, "pairs", distinct)
    users = _item_users(pairs, keys, item, interactions, shared, _USERS)
    wanted = recommended.select(*keys, item).unique()
    left = pairs.join(wanted, on=[*keys, item], how="semi", nulls_equal=True)
    right = pairs.rename({item: _OTHER})
    counts = (
        left.join(right, on=[*keys, user], how="inner", nulls_equal=True)
        .filter(pl.col(item) != pl.col(_OTHER))
        .group_by([*keys, item, _OTHER])
        .agg(pl.len().cast(pl.Float64).alias(_SIM))
    )
    other_users = users.rename({item: _OTHER, _USERS: _USERS_OTHER})
    norm = pl.col(_USERS).sqrt() * pl.col(_USERS_OTHER).sqrt()
    return (
        counts.join(users, on=[*keys, item], how="inner", nulls_equal=True)
        .join(other_users, on=[*keys, _OTHER], how="inner", nulls_equal=True)
        .select(*keys, item, _OTHER, (pl.col(_SIM) / norm).alias(_SIM))
    )


def _pair_cooccurrence(
    kept: pl.LazyFrame,
    cooccurrence: pl.LazyFrame,
    options: RecsysOptions,
    interactions: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """Per (``by``, user): the sum of the co-occurrence similarity over the ordered
    pairs of different items of the user's list ``kept`` (column ``_SIM``)."""
    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    keys = [] if interactions is None else _interaction_keys(interactions, options)
    listed = kept.select(*by, user, item)
    pairs = listed.join(
        listed.rename({item: _OTHER}), on=[*by, user], how="inner", nulls_equal=True
    ).filter(pl.col(item) != pl.col(_OTHER))
    return (
        pairs.join(cooccurrence, on=[*keys, item, _OTHER], how="left", nulls_equal=True)
        .group_by([*by, user])
        .agg(fixed_sum(pl.col(_SIM)))  # each in [0, 1]
    )


def _history_cooccurrence(
    rows: pl.LazyFrame,
    interactions: pl.LazyFrame,
    cooccurrence: pl.LazyFrame,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
) -> pl.LazyFrame:
    """Per recommendation (``by`` keys, user, item): the mean co-occurrence similarity
    of the item to the items of the user's history, every interaction counted (an item
    is similar 1 to itself, 0 to an item no user shares with it); no row for a user
    without history."""
    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    keys = _interaction_keys(interactions, options)
    history = _cast_ids(interactions.select(*keys, user, item), kinds).rename({item: _OTHER})
    similarity = (
        pl.when(pl.col(item) == pl.col(_OTHER)).then(1.0).otherwise(pl.col(_SIM).fill_null(0.0))
    )
    return (
        rows.select(*by, user, item)
        .join(history, on=[*keys, user], how="inner", nulls_equal=True)
        .join(cooccurrence, on=[*keys, item, _OTHER], how="left", nulls_equal=True)
        .group_by([*by, user, item])
        .agg(exact_mean(similarity, bounded=True).alias(_HISTORY_COOC))
    )


def _cut(scope: CollectionScope) -> int | None:
    """The largest cutoff of the formulas where each reads the rows within a cutoff
    (:attr:`CollectionScope.cutoffs <polars_irmetrics.metrics.collection.CollectionScope>`)
    and nothing the plan joins per user's whole list (similarities, co-occurrence);
    else ``None``: every row is joined."""
    if not scope.cutoffs or None in scope.cutoffs or scope.pair_cutoffs:
        return None
    if scope.needs & {"history", "history_cooc", "cooccurrence"}:
        return None
    return max(k for k in scope.cutoffs if k is not None)


def _order(schema: pl.Schema, options: RecsysOptions) -> Literal["rank", "score"] | None:
    """The column ordering each user's list, as the ranking metrics choose it: ``rank``
    where the table has one (``order='auto'``), else ``score``; ``None``: neither."""
    order = options.order
    if order not in ("auto", "rank", "score"):
        raise InvalidValueError(
            f"order={order!r} is not an order; choose 'auto', 'rank' or 'score'"
        )
    if order != "auto":
        return order
    if options.rank in schema:
        return "rank"
    return "score" if options.score in schema else None


def _against(rows: pl.LazyFrame, scope: CollectionScope, options: RecsysOptions) -> str | None:
    """The score column the ranks are checked against, where the plan checks the
    ranks and ``order='auto'`` reads them beside a numeric score column
    (:func:`~polars_irmetrics.ground.validate.rank_against`); else ``None``."""
    if "check:rank" not in scope.needs:
        return None
    return rank_against(rows.collect_schema(), options.order, options.rank, options.score)


def _frame(options: RecsysOptions) -> str:
    """The recommendations' name in messages: as the caller named its argument."""
    return "recommendations" if options.caller == "irm.beyond_accuracy" else "run"


def spelling_hints(tables: Tables, options: RecsysOptions) -> dict[str, Callable[[], str | None]]:
    """The hints of :class:`~polars_irmetrics.recsys.checks.Words` for the checks that
    refuse a recommended item the interactions lack: where the item ids are text in
    both, those of the recommendations that match an id of the interactions once their
    spelling is ignored (``'a'`` beside ``'A'``), as the ranking metrics' hints say
    (:func:`~polars_irmetrics.ground.spelling.spelling_hint`). Read only where such a
    check fails."""
    if tables.interactions is None:  # pragma: no cover - called with interactions
        return {}
    item = _spelt_hint(tables.recommendations, tables.interactions, options.item_id, options)
    return {"no_popularity": item, "no_cooccurrence": item}


def _spelt_hint(
    recs: pl.LazyFrame, held: pl.LazyFrame, column: str, options: RecsysOptions
) -> Callable[[], str | None]:
    """:func:`spelling_hints`' hint of the item ``column`` of ``recs`` (the
    recommendations, or the items of theirs the interactions lack) against ``held``
    (the interactions): ``None`` where the ids are not text in both. Everything read
    when it is called (where a check fails), nothing while the plan is built."""

    def hint() -> str | None:
        ran, kept = recs.collect_schema(), held.collect_schema()
        if column not in ran or column not in kept:
            return None
        if not (is_text(ran[column]) and is_text(kept[column])):
            return None
        frame = _frame(options)
        sides = Sides(f"the {frame}", "the interactions", f"the {frame} and the interactions")
        return spelling_hint(
            recs.select(column), held.select(column), column, within=None, noun="item", sides=sides
        )

    return hint


def _words(options: RecsysOptions) -> Words:
    """What the run checks' messages name (:class:`~polars_irmetrics.recsys.checks.Words`)."""
    return Words(
        {
            "doc_id": options.item_id,
            "rank": options.rank,
            "score": options.score,
            "query_id": options.user_id,
        },
        options.user_id,
        _frame(options),
        tuple(options.by_keys),
        options.sample_id,
    )


#: The run checks read from each user's :func:`ranking_facts`, in
#: :data:`~polars_irmetrics.ground.validate.RUN_FLAGS`' order; ``dup`` ones only with
#: ``check_duplicates``.
_FACTS: dict[str, pl.Expr] = {
    "null_doc": pl.col(NULL_DOCS),
    "dup_doc": pl.col(LENGTH) - pl.col(DOCS),
}
_RANK_FACTS: dict[str, pl.Expr] = {
    "null_rank": pl.col(LENGTH) - pl.col(ORDERED),
    "bad_rank": pl.col(BELOW),
    "big_rank": pl.col(ABOVE),
    "dup_rank": pl.col(ORDERED) - pl.col(RANKS),
}
_SCORE_FACTS: dict[str, pl.Expr] = {
    "null_score": pl.col(LENGTH) - pl.col(ORDERED),
    "nan_score": pl.col(NANS),
}


def _run_checks(
    rows: pl.LazyFrame,
    scope: CollectionScope,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
) -> pl.LazyFrame:
    """One row per ``by`` group: the checks of the recommendations as given, as the
    ranking metrics check a run (a null user, then per user a null item, an item twice,
    a null, low, huge or shared rank, a null or NaN score), each the first user failing
    and that user's count, from one group-by per user
    (:func:`~polars_irmetrics.ground.facts.ranking_facts`)."""
    by, user, item = list(options.by_keys), options.user_id, options.item_id
    order, checks = None, dict(_FACTS)
    if "check:rank" in scope.needs:
        order, checks = options.rank, checks | _RANK_FACTS
    elif "check:score" in scope.needs:
        order, checks = options.score, checks | _SCORE_FACTS
    if not options.check_duplicates:  # False: kept, for unrepeated_reco to measure
        checks = {k: v for k, v in checks.items() if not k.startswith("dup_")}
    sample = options.sample_id if _sampled(rows, options) else None
    if sample is not None:  # a user's sampled rankings, read as one list: refused first
        many = pl.col(SAMPLES)
        checks = {"sampled": pl.when(many > 1).then(many).otherwise(0), **checks}
    against = _against(rows, scope, options)
    if against is not None:  # the ranks and the scores order a list alike, or refused
        checks["two_orders"] = pl.col(AGAINST)
    facts = ranking_facts(
        rows,
        [*by, user],
        pl.col(item),
        order,
        sample=sample,
        against=against,
        ties=not options.check_duplicates,
    )
    known = pl.col(user).is_not_null()
    if options.relevance is not None:  # serendipity's weights: null, NaN or infinite
        weight = pl.col(RELEVANCE)
        bad = known & (weight.is_null() | ~weight.is_finite())
        template = (
            f"{options.relevance!r} has a null, NaN or infinite weight (user {{}}, item {{}})"
        )
        weights = _aggregate(
            rows,
            by,
            flag(
                "bad_weight",
                bad,
                template,
                [(pl.col(user), kinds[user]), (pl.col(item), kinds[item])],
            ),
        )
    else:
        weights = None
    exprs = flag(
        "null_user",
        ~known,
        count=pl.col(LENGTH).filter(~known).sum(),
        example=pl.lit(""),
    )
    for name, count in checks.items():
        failing = pl.col(user).filter(known & (count > 0))
        first = failing.min()
        exprs += flag(
            name,
            known,
            count=count.filter(known & (pl.col(user) == first)).sum(),
            example=shown(first, kinds[user]),
        )
    checked = _aggregate(facts, by, exprs)
    return checked if weights is None else _join(checked, weights, by)


def _item_checks(
    scope: CollectionScope,
    options: RecsysOptions,
    kinds: dict[str, pl.DataType],
    interaction_keys: list[str],
    *,
    rows: pl.Expr | None = None,
) -> list[pl.Expr]:
    """The checks of what the joins gave each row: an empty history, an item without
    popularity, category or vector, a user without history. ``rows``: read from one
    row per (group, item) holding its first user and (``rows``) its number of rows,
    which the counts add up (the plan asks so only when no check reads the user's
    history)."""
    user, item = pl.col(options.user_id), pl.col(options.item_id)
    ids = [(user, kinds[options.user_id]), (item, kinds[options.item_id])]
    named = ("{} (recommended to user {})", ids[::-1])

    def counted(bad: pl.Expr) -> pl.Expr | None:
        return None if rows is None else rows.filter(bad).sum()

    template = " for " + ", ".join(f"{key}={{}}" for key in interaction_keys)
    shown_keys = [(pl.col(key), None) for key in interaction_keys]
    out: list[pl.Expr] = []
    # an empty history: no item (popularity) or no user (RePlay's metrics) in it
    size = None
    if scope.needs & {"popularity", "cooccurrence"}:
        size = pl.col(CATALOG).fill_null(0)
    elif scope.needs & {"item_users", "seen"}:
        size = pl.col(USERS).fill_null(0)
    if size is not None:
        out += flag(
            "empty_catalog",
            size == 0,
            template if interaction_keys else "",
            shown_keys,
            count=(size == 0).any().cast(pl.Int64),
        )
    if scope.categories:
        nameless = pl.any_horizontal(
            pl.col(scope.category_column(c)).is_null() for c in sorted(scope.categories)
        )
        out += flag("no_category", nameless, *named, count=counted(nameless))
    if scope.needs & {"popularity", "cooccurrence"}:
        catalog = pl.col(CATALOG).fill_null(0)
        unseen = (catalog > 0) & pl.col(POPULARITY).is_null()
        if options.unseen_items == "recommenders":
            pass  # counted as Microsoft Recommenders counts them
        elif "popularity" in scope.needs:
            out += flag("no_popularity", unseen, *named, count=counted(unseen))
        else:
            out += flag("no_cooccurrence", unseen, *named, count=counted(unseen))
    if options.unseen_items == "recommenders":
        return out  # unseen items and users without history: Recommenders' convention
    if any(m == FEATURES for _, m in scope.pair_cutoffs) or "history" in scope.needs:
        out += flag("no_features", pl.col(_KNOWN).is_null(), *named)
    if scope.needs & {"history", "history_cooc"}:
        no_history = pl.col(_HISTORY_N).is_null()
        out += flag("no_history", no_history, "{}", ids[:1])
    return out


def unseen_item_check(
    requests: Sequence[tuple[str, MetricRequest]], options: RecsysOptions
) -> str | None:
    """The check (a name of :data:`~polars_irmetrics.recsys.checks.CHECKS`) by which
    :func:`build_recsys_plan` refuses a recommended item the interactions lack, for the
    metrics of a recommendation table among ``requests``: ``"no_popularity"`` where one
    reads the items' popularity, ``"no_cooccurrence"`` where one reads their
    co-occurrence; ``None`` where none reads either, or ``unseen_items`` scores or drops
    such items. An engine whose parts each check some of the users counts such items
    over the whole run instead (:func:`unseen_items`, :func:`raise_on_unseen_items`).

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> unseen_item_check(parse_metric_list(["novelty@5"]), RecsysOptions())
    'no_popularity'
    >>> unseen_item_check(parse_metric_list(["intra_list_diversity@5"]), RecsysOptions())
    """
    if options.unseen_items != "error":
        return None
    scope = CollectionScope(item=pl.col(options.item_id))
    for _, request in requests:
        if request.metric.collection is not None:
            request.metric.collection(scope, request.params(1.0))
    if "popularity" in scope.needs:
        return "no_popularity"
    return "no_cooccurrence" if "cooccurrence" in scope.needs else None


def _unseen_kinds(
    recommendations: pl.LazyFrame, interactions: pl.LazyFrame, options: RecsysOptions
) -> dict[str, pl.DataType]:
    """The dtype each id is compared in, as :func:`build_recsys_plan` compares them."""
    run, held = recommendations.collect_schema(), interactions.collect_schema()
    return {
        c: common_id_dtype([run[c], *([held[c]] if c in held else [])])
        for c in (options.user_id, options.item_id)
    }


def unseen_items(
    recommendations: pl.LazyFrame, interactions: pl.LazyFrame, options: RecsysOptions
) -> pl.LazyFrame:
    """One row per (``by`` group, item) of ``recommendations`` (any share of the users)
    whose item the interactions (of the same group, where they carry the ``by`` keys)
    lack: the ``by`` keys, the item, its first user and its number of rows, which
    :func:`merge_unseen_items` adds up over the shares and
    :func:`raise_on_unseen_items` refuses as :func:`build_recsys_plan` does."""
    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    # a by= key of one kind in two dtypes lined up, as the door lines it up
    recommendations, interactions = with_common_key_frames(by, recommendations, interactions)
    kinds = _unseen_kinds(recommendations, interactions, options)
    keys = _interaction_keys(interactions, options)
    held = _cast_ids(interactions.select(*keys, item), kinds).unique()
    rows = _cast_ids(recommendations.select(*by, user, item), kinds)
    items = rows.group_by([*by, item]).agg(
        pl.col(user).min(), pl.len().cast(pl.Int64).alias(_ROWS)
    )
    return items.join(held, on=[*keys, item], how="anti", nulls_equal=False)


def merge_unseen_items(rows: pl.LazyFrame, options: RecsysOptions) -> pl.LazyFrame:
    """:func:`unseen_items`' rows of every share added up: per (``by`` group, item) the
    first user and the number of rows."""
    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    return rows.group_by([*by, item]).agg(pl.col(user).min(), pl.col(_ROWS).sum())


def raise_on_unseen_items(
    rows: pl.LazyFrame,
    recommendations: pl.LazyFrame,
    interactions: pl.LazyFrame,
    check: str,
    options: RecsysOptions,
) -> None:
    """Refuse, as :func:`build_recsys_plan` does (check ``check``, from
    :func:`unseen_item_check`), the recommended items the interactions lack, from the
    whole run's :func:`merge_unseen_items` rows: the count and the example of the whole
    run, not of a share of its users; nothing where none is refused (a group whose
    interactions hold no item is refused as empty instead). ``recommendations``: a frame
    of the run's schema (its id dtypes)."""
    user, item, by = options.user_id, options.item_id, list(options.by_keys)
    rows, interactions = with_common_key_frames(by, rows, interactions)
    kinds = _unseen_kinds(recommendations, interactions, options)
    scope = CollectionScope(item=pl.col(item))
    joined = _popularity(interactions, scope, options, kinds)(_cast_ids(rows, kinds), False)
    unseen = (pl.col(CATALOG).fill_null(0) > 0) & pl.col(POPULARITY).is_null()
    ids = [(pl.col(item), kinds[item]), (pl.col(user), kinds[user])]
    exprs = flag(
        check,
        unseen,
        "{} (recommended to user {})",
        ids,
        count=pl.col(_ROWS).filter(unseen).sum(),
    )
    # the hint of items spelt apart, from every unseen item (those the interactions lack)
    hint = _spelt_hint(rows, interactions, item, options)
    words = replace(_words(options), hints={check: hint})
    raise_on_flags(_aggregate(joined, by, exprs).collect(), words)
