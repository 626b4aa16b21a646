"""The plan of Elliot's MAD metrics (:mod:`polars_irmetrics.metrics.mad`): ``item_mad``
and ``user_mad``, from the run (users as queries, items as documents), the judgments
(the test interactions) and the clusters (``groups=`` for items, ``user_groups=`` for
users).

One lazy query per metric requested, nothing collected:

1. **Top k**: each user's position (as Elliot's other metrics,
   :func:`~polars_irmetrics.offline.elliot._positions`), the rows at positions ``<= k``
   (:func:`~polars_irmetrics.offline.elliot.top_rows`: one filter of the run for
   Elliot's other metrics of the call too) of the users with a relevant test item,
   with the item's gain (Elliot's discounted
   relevance, or the run's score of a relevant item for ``kind='rating'``): the top
   rows joined with the judgments once for Elliot's other metrics too
   (:func:`~polars_irmetrics.offline.elliot.judged_top`).
2. **Values**: per item (its mean gain over the users listing it) or per user (its
   nDCG@k, or the mean score of its top ``k``), joined on the clusters (an id the
   table lacks is left out, as Elliot does).
3. **Clusters**: each cluster's mean per ``by`` group, over every cluster of the table
   (a cluster with nothing to average is null); the mean absolute difference over the
   pairs of clusters, null where a cluster is null or there is no pair.

Float sums are exact fixed-point sums (:func:`~polars_irmetrics.metrics.scope.fixed_sum`):
the same bits in any row order. A cluster table that gives an id two clusters is
refused when the plan runs (a one-row check joined across, read from the one group-by of
the table per id that the joins read too); a row of a null cluster puts its id in none,
as if it were not there (as ``groups=`` reads for every measure).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_irmetrics.errors import (
    DuplicateError,
    InvalidValueError,
    IrmWarning,
    MetricParameterError,
)
from polars_irmetrics.ground.facts import SharedIds
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    common_id_dtype,
    doubled_group_error,
    id_kind,
    null_ids_count,
    null_ids_error,
    require_columns,
    systems_named,
    systems_tally,
    warn_from_plan,
    warn_on_joint,
    with_tally,
)
from polars_irmetrics.metrics._common import exact_level
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import fixed_sum
from polars_irmetrics.offline.elliot import (
    _NOT_READ,
    TOP_GAIN,
    TOP_REL,
    judged_top,
    refuse_out_of_core,
    run_kind,
    top_rows,
)

__all__ = ["build_mad_plan"]

Requests = Sequence[tuple[str, MetricRequest]]

_POS = f"{INTERNAL}elliot_pos"  # the column _positions writes
_GAIN = f"{INTERNAL}mad_gain"
_REL = f"{INTERNAL}mad_rel"
_VALUE = f"{INTERNAL}mad_value"
_CLUSTER = f"{INTERNAL}mad_cluster"
_AVG = f"{INTERNAL}mad_avg"
_BAD = f"{INTERNAL}mad_bad"
_GROUP = "group"
#: An id's distinct clusters in the cluster table (its rows of a null cluster left out).
_KINDS = f"{INTERNAL}mad_kinds"
_ROWS = f"{INTERNAL}mad_rows"


def _clusters(
    table: pl.LazyFrame,
    column: str,
    run_schema: pl.Schema,
    keyword: str,
    what: str,
    target: pl.DataType,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The cluster table's (id, cluster as text) pairs in the id dtype ``target`` (the
    run's and judgments' too), and a one-row frame of its first offenders (a null id, an
    id in two clusters; a row of a null cluster puts its id in none)."""
    schema = table.collect_schema()
    require_columns(schema, [column, _GROUP], keyword, f"one row per {what}: {column}, group")
    ids = run_kind(schema, run_schema, column, keyword, f"{keyword}=", target)
    id_kind(schema, _GROUP, keyword)
    # read by the checks and the plan's joins: one group-by of the table for all, each
    # id's distinct clusters and its least as text (its one, where
    # the table is sound: else the checks refuse it). The clusters are counted as the
    # table holds them (integers or text: distinct as text too), and the one value cast.
    # A row of a null cluster puts its id in none, as if it were not there (groups='s
    # reading for every measure: the exposure measures' too)
    cluster = pl.col(_GROUP)
    per_id = (
        table.select(ids, _GROUP)
        .filter(cluster.is_not_null())
        .group_by(column)
        .agg(
            cluster.n_unique().alias(_KINDS),
            cluster.min().cast(pl.String).alias(_CLUSTER),
            pl.len().alias(_ROWS),
        )
        .cache()
    )
    text = pl.col(column).cast(pl.String)
    # groups= listing a (document, group) pair twice: refused, as the exposure measures
    # refuse the same table (whichever measure reads it, the same checks)
    doubled = (
        [
            text.filter(pl.col(_ROWS) > pl.col(_KINDS))
            .min()
            .alias(f"{_BAD}|{keyword}|doubled|{column}")
        ]
        if keyword == "groups"
        else []
    )
    bad = pl.concat(
        [
            # a row of no id: refused, as every table's null id (its count, as text)
            table.select(null_ids_count([column]).cast(pl.String).alias(
                f"{_BAD}|{keyword}|nullid|{column}"
            )),
            per_id.select(
                *doubled,
                text.filter(pl.col(_KINDS) > 1).min().alias(f"{_BAD}|{keyword}|twice|{column}"),
            ),
        ],
        how="horizontal",
    )  # fmt: skip
    return per_id.select(column, _CLUSTER).drop_nulls(_CLUSTER), bad


def _raise_on_bad(frame: pl.DataFrame) -> pl.DataFrame:
    for name in [c for c in frame.columns if c.startswith(f"{_BAD}|")]:
        value = frame[name][0] if frame.height else None
        if value is None:
            continue
        _, keyword, kind, column = name.split("|")
        if kind == "nullid":
            # in the words of the exposure measures' refusal of the same groups=
            what = "document" if keyword == "groups" else "user"
            row = f"each row puts one {what} in a group"
            raise null_ids_error(keyword, int(value), [column], row)
        if kind == "doubled":  # in the exposure measures' words
            raise doubled_group_error(value)
        raise DuplicateError(  # kind "twice"
            f"{keyword}= gives {column} {value!r} more than one group; Elliot's MAD "
            f"metrics put each id in one cluster: keep one row per {column}, e.g. "
            f".unique({column!r})"
        )
    return frame.drop([c for c in frame.columns if c.startswith(f"{_BAD}|")])


def _pairs(
    avg: pl.LazyFrame, by: list[str], groups: pl.LazyFrame | None, label: str
) -> pl.LazyFrame:
    """The mean absolute difference of the cluster means ``avg`` (``by``, cluster,
    mean; every cluster of every group, null where it has nothing) over the pairs of
    clusters, per ``by`` group (``groups``: every group of the run)."""
    left = avg.rename({_CLUSTER: "a", _AVG: "va"})
    right = avg.rename({_CLUSTER: "b", _AVG: "vb"})
    both = left.join(right, on=by) if by else left.join(right, how="cross")
    both = both.filter(pl.col("a") < pl.col("b"))
    diff = (pl.col("va") - pl.col("vb")).abs()
    pairs = pl.len()
    value = (
        pl.when((pairs > 0) & diff.is_not_null().all())
        .then(fixed_sum(diff) / pairs.cast(pl.Float64))
        .alias(label)
    )
    if not by or groups is None:
        return both.select(value)
    return groups.join(both.group_by(by).agg(value), on=by, how="left", nulls_equal=True)


def build_mad_plan(
    run: pl.LazyFrame,
    requests: Requests,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    user_groups: pl.LazyFrame | None,
    options: EvalOptions,
    *,
    alone: bool = True,
    ids: SharedIds | None = None,
    counted: frozenset[str] = frozenset(),
) -> pl.LazyFrame:
    """One row per ``by`` group (the ``by`` keys of the run, then one column per label)
    of Elliot's MAD metrics in ``requests``; see the module docstring. ``alone``: no
    other metric of the call reads the ranking plan's options (``depth``,
    ``judged_only``...), which these do not read: refused. ``ids``: the run's distinct
    ids where the door has them (:class:`~polars_irmetrics.ground.facts.SharedIds`),
    which the clusters' tallies count. ``counted``: the cluster tables (``"groups"``)
    whose coverage of the run another route of the call warns of (the exposure measures
    beside): of those, only a cluster left empty is warned of here.

    Examples
    --------
    Two item clusters; user ``u`` finds ``a`` (gain 1) and not ``b``; user ``v`` has
    no relevant test item and is left out. Cluster 0 (``a``) averages 1, cluster 1
    (``b``) 0: MAD 1.

    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> run = pl.LazyFrame({"query_id": ["u", "u", "v"], "doc_id": ["a", "b", "b"],
    ...                     "rank": [1, 2, 1]})
    >>> test = pl.LazyFrame({"query_id": ["u"], "doc_id": ["a"], "relevance": [1]})
    >>> items = pl.LazyFrame({"doc_id": ["a", "b"], "group": [0, 1]})
    >>> wanted = [("item_mad@2", parse_metric("item_mad@2"))]
    >>> build_mad_plan(run, wanted, test, items, None, EvalOptions.build()).collect().rows()
    [(1.0,)]

    With a single cluster there is no pair to compare: null (Elliot's nan).

    >>> one = items.with_columns(pl.lit(0).alias("group"))
    >>> build_mad_plan(run, wanted, test, one, None, EvalOptions.build()).collect().rows()
    [(None,)]
    """
    first = requests[0][0]
    for name, table, keyword, noun, column in (
        ("item_mad", groups, "groups", "item", options.doc_id),
        ("user_mad", user_groups, "user_groups", "user", options.query_id),
    ):
        asked = [label for label, r in requests if r.metric.name == name]
        if asked and table is None:  # (user_mad: refused by check_inputs first)
            raise MetricParameterError(
                f"metric {asked[0]!r} reads the {noun} clusters: pass {keyword}=... (one "
                f"row per {noun}: {column}, group) to irm.evaluate"
            )
    if options.per_query:
        raise MetricParameterError(
            f"metric {first!r} (Elliot's MAD) compares clusters of the whole recommendation "
            "table: evaluate it with per_query=False"
        )
    if qrels is None:
        raise MetricParameterError(
            f"metric {first!r} reads the test interactions as judgments: pass them as qrels=..."
        )
    refuse_out_of_core(requests, options, "Elliot's MAD metrics")
    if alone:  # an option of the ranking plan that no metric asked for would read
        for name in _NOT_READ:
            if name in options.given():
                raise InvalidValueError(
                    f"{name}={getattr(options, name)!r} is not read by Elliot's MAD metrics "
                    f"({', '.join(repr(label) for label, _ in requests)}): they read each "
                    "user's top k of the recommendations as given; drop "
                    f"{name}="
                )
    user, item = options.query_id, options.doc_id
    run_schema = run.collect_schema()
    run_names = run_schema.names()
    by = [k for k in options.by_keys if k in run_names]
    keys = [*by, user]
    rating = any(dict(r.options).get("kind") == "rating" for _, r in requests)
    if rating:
        label = next(lb for lb, r in requests if dict(r.options).get("kind") == "rating")
        require_columns(
            run_schema,
            [options.score],
            "run",
            f"metric {label!r} (kind='rating') reads the score of each recommendation, "
            "as Elliot's ItemMADrating and UserMADrating do; name it with score=",
        )
    # one dtype per id over the run, the judgments and the clusters (UInt64 ids beyond
    # Int64 kept whole; each side's kind is checked against the run's)
    schemas = [run_schema, qrels.collect_schema()]
    schemas += [t.collect_schema() for t in (groups, user_groups) if t is not None]
    target = {
        c: common_id_dtype([schema[c] for schema in schemas if c in schema]) for c in (user, item)
    }
    checks: list[pl.LazyFrame] = []
    items = users = None
    if groups is not None and any(r.metric.name == "item_mad" for _, r in requests):
        items, bad = _clusters(groups, item, run_schema, "groups", "item", target[item])
        checks.append(bad)
    if user_groups is not None and any(r.metric.name == "user_mad" for _, r in requests):
        users, bad = _clusters(user_groups, user, run_schema, "user_groups", "user", target[user])
        checks.append(bad)
    original = run  # the frame the door's shared frames are keyed on
    run = run.with_columns(pl.col(c).cast(t) for c, t in target.items())
    q_keys = [k for k in keys if k in qrels.collect_schema().names()]
    level = float(options.relevance_level)
    rel = pl.col(options.relevance).cast(pl.Float64)
    relevant = (
        qrels.with_columns(pl.col(c).cast(t) for c, t in target.items())
        .filter(pl.col(options.relevance) >= exact_level(level))
        .select(*q_keys, item, (2.0 ** (rel - level + 1.0) - 1.0).alias(_GAIN))
        .cache()  # read by the rows, the users with a test item and the ideal lists
    )
    with_rel = relevant.select(q_keys).unique()
    scored = [options.score] if rating else []
    # each metric reads its own top k: the deepest cut, joined once and kept for them all
    # (the run's rows within it, filtered once for Elliot's metrics beside too)
    deepest = max(r.k if r.k is not None else 0 for _, r in requests)
    if q_keys == [user]:
        # the top k joined with the relevant judgments once for Elliot's metrics beside
        # too (both joins match a null key to a null key, as every join of the by keys
        # here does; the run's null ids and by keys are refused before either is read)
        rows = (
            judged_top(original, qrels, keys, options, deepest, ids)
            .select(
                *by,
                *(pl.col(c).cast(t) for c, t in target.items()),
                _POS,
                *(pl.col(c).cast(pl.Float64) for c in scored),
                pl.col(TOP_GAIN).alias(_GAIN),
                pl.col(TOP_REL).alias(_REL),
            )
            .join(with_rel, on=q_keys, how="semi", nulls_equal=True)
            .cache()
        )
    else:
        rows = (
            top_rows(original, keys, options, deepest, ids)
            .select(
                *by,
                *(pl.col(c).cast(t) for c, t in target.items()),
                _POS,
                *(pl.col(c).cast(pl.Float64) for c in scored),
            )
            .join(with_rel, on=q_keys, how="semi", nulls_equal=True)
            .join(
                relevant.with_columns(pl.lit(True).alias(_REL)),
                on=[*q_keys, item],
                how="left",
                nulls_equal=True,
            )
            .with_columns(pl.col(_REL).fill_null(False), pl.col(_GAIN).fill_null(0.0))
            .cache()
        )
    every = run.select(by).unique() if by else None
    clusters_of = {"item_mad": items, "user_mad": users}

    values: pl.LazyFrame | None = None
    for label, request in requests:
        k = request.k if request.k is not None else 0  # the parser requires the cutoff
        ranking = dict(request.options).get("kind") != "rating"
        top = rows.filter(pl.col(_POS) <= k)
        if request.metric.name == "item_mad":
            gain = pl.col(_GAIN) if ranking else pl.when(pl.col(_REL)).then(options.score)
            per = top.group_by(*by, item).agg(
                (fixed_sum(gain) / pl.len().cast(pl.Float64)).alias(_VALUE)
            )
            on = item
        else:
            if ranking:
                disc = 1.0 / (pl.col(_POS).cast(pl.Float64) + 1.0).log(2)
                dcg = top.group_by(keys).agg(fixed_sum(pl.col(_GAIN) * disc).alias("dcg"))
                place = pl.col(_GAIN).rank("ordinal", descending=True).over(q_keys)
                ideal = (
                    relevant.with_columns(place.alias("place"))
                    .filter(pl.col("place") <= k)
                    .group_by(q_keys)
                    .agg(
                        fixed_sum(
                            pl.col(_GAIN) / (pl.col("place").cast(pl.Float64) + 1.0).log(2)
                        ).alias("idcg")
                    )
                )
                # every user of the run with a test item (the door's distinct users,
                # cast as the run is here, where it has them and there are no by keys)
                if by or ids is None:
                    listed = run.select(keys).unique()
                else:
                    listed = ids.queries.select(pl.col(user).cast(target[user]))
                listed = listed.join(with_rel, on=q_keys, how="semi", nulls_equal=True)
                per = (
                    listed.join(dcg, on=keys, how="left", nulls_equal=True)
                    .join(ideal, on=q_keys, how="left", nulls_equal=True)
                    .select(
                        *keys,
                        pl.when(pl.col("dcg") > 0)
                        .then(pl.col("dcg") / pl.col("idcg"))
                        .otherwise(0.0)
                        .alias(_VALUE),
                    )
                )
            else:
                per = top.group_by(keys).agg(
                    (fixed_sum(pl.col(options.score)) / pl.len().cast(pl.Float64)).alias(_VALUE)
                )
            on = user
        clusters = clusters_of[request.metric.name]
        if clusters is None:  # pragma: no cover - checked above
            raise MetricParameterError(f"metric {label!r} needs its clusters")
        member = per.join(clusters, on=on, how="inner")
        sums = member.group_by(*by, _CLUSTER).agg(
            (fixed_sum(pl.col(_VALUE)) / pl.col(_VALUE).count().cast(pl.Float64)).alias(_AVG)
        )
        grid = clusters.select(_CLUSTER).unique()
        if every is not None:
            grid = every.join(grid, how="cross")
        # read twice by the pairs of clusters (each side of the cross join)
        avg = grid.join(sums, on=[*by, _CLUSTER], how="left", nulls_equal=True).cache()
        one = _pairs(avg, by, every, label)
        if values is None:
            values = one
        elif by:
            values = values.join(one, on=by, how="left", nulls_equal=True)
        else:
            values = pl.concat([values, one], how="horizontal")
    if values is None:  # pragma: no cover - the door routes only requested metrics here
        raise InvalidValueError("no MAD metric requested")
    schema = values.collect_schema()
    checked = (
        values.join(pl.concat(checks, how="horizontal"), how="cross")
        .map_batches(_raise_on_bad, schema=schema)
        .select(schema.names())
    )
    # how the run's items (users) line up with the clusters: one that matches none would
    # leave every cluster empty and the value null in silence
    for name, clusters, keyword, column, things in (
        ("item_mad", items, "groups", item, "items"),
        ("user_mad", users, "user_groups", user, "users"),
    ):
        if clusters is not None and any(r.metric.name == name for _, r in requests):
            distinct = None if ids is None else ids.docs if column == item else ids.queries
            listed = run.select(column).unique()
            if distinct is not None:  # as the run's ids are cast here (distinct still)
                listed = distinct.select(pl.col(column).cast(run.collect_schema()[column]))
            # the run's distinct ids with their cluster (each id of the table once): one
            # join for the tally and the clusters the run reaches
            rows = listed.join(clusters, on=column, how="left", nulls_equal=True).cache()
            tally = rows.select(
                pl.len().cast(pl.Int64).alias(_RUN_IDS),
                pl.col(_CLUSTER).count().cast(pl.Int64).alias(_CLUSTERED),
            )
            # and a cluster none of whose ids the run holds: no mean, MAD null in silence
            empty = _empty_clusters(clusters, rows, column)
            parts = [tally, empty]
            systems = [k for k in options.system_keys if k in run_names]
            if systems:  # each system's own ids too: one that matches none, by name
                parts.append(systems_tally(run, clusters, column, _CLUSTERED, systems))
            both = pl.concat(parts, how="horizontal")
            joint = keyword not in counted
            say = functools.partial(
                _warn, keyword, column, things, name, joint=joint, systems=systems
            )
            checked = with_tally(checked, both, say)
    return checked.sort(by) if by else checked


_RUN_IDS, _CLUSTERED = f"{INTERNAL}run_ids", f"{INTERNAL}clustered"
_ALL, _HELD, _FIRST = f"{INTERNAL}clusters", f"{INTERNAL}held", f"{INTERNAL}first_empty"


def _empty_clusters(clusters: pl.LazyFrame, rows: pl.LazyFrame, column: str) -> pl.LazyFrame:
    """One row: the clusters, those holding an id of the run (``rows``: its distinct ids
    with their cluster, null where the table lacks the id), and the first (by name)
    that holds none. A null id reaches no cluster."""
    every = clusters.select(_CLUSTER).unique()
    held = (
        rows.filter(pl.col(column).is_not_null())
        .select(pl.col(_CLUSTER).drop_nulls())
        .unique()
        .with_columns(pl.lit(True).alias(_HELD))
    )
    counted = every.join(held, on=_CLUSTER, how="left")
    return counted.select(
        pl.len().cast(pl.Int64).alias(_ALL),
        pl.col(_HELD).count().cast(pl.Int64).alias(_HELD),
        pl.col(_CLUSTER).filter(pl.col(_HELD).is_null()).sort().first().alias(_FIRST),
    )


def _warn_empty(keyword: str, things: str, name: str, row: Mapping[str, Any]) -> None:
    """The warning of a cluster that holds none of the run's ids (``row``:
    :func:`_empty_clusters`'): its mean is undefined, so is the metric."""
    if row[_FIRST] is None or not row[_HELD]:
        return
    warn_from_plan(
        f"{keyword}= has {row[_ALL] - row[_HELD]} of its {row[_ALL]} clusters holding none "
        f"of the run's {things} (first: {row[_FIRST]!r}): such a cluster has no mean, so "
        f"{name}, the mean absolute difference over every pair of clusters, is null. Ids "
        f"that do not line up are the likely cause: give {keyword}= and the run the same "
        "ids; or drop the clusters the run does not reach"
    )


def _warn(
    keyword: str,
    column: str,
    things: str,
    name: str,
    row: Mapping[str, Any],
    *,
    joint: bool,
    systems: Sequence[str] = (),
) -> None:
    """The coverage warning of clusters that hold few of the run's ids (``row``: the
    run's distinct ids and those the clusters hold, as
    :func:`~polars_irmetrics.ground.validate.held_tally` counts them), or else of a
    cluster that holds none of them (:func:`_empty_clusters`'). ``joint``: ``False`` where another
    route of the call warns of the ids the clusters lack (the cluster left empty is
    still warned of here). ``systems``: the run's system keys, where ``row`` counts each
    system's ids too (a system whose ids the clusters mostly lack is named)."""
    if row[_ALL] == 1:  # one cluster: no pair to compare, null whatever the run holds
        warn_from_plan(
            f"{keyword}= holds one cluster only: {name} is the mean absolute difference "
            "over the pairs of clusters, and one cluster makes no pair, so it is null "
            f"(Elliot's nan). Give {keyword}= two clusters or more (its 'group' column)",
            IrmWarning,
        )
    elif 2 * row[_CLUSTERED] >= row[_RUN_IDS]:  # most ids line up: a cluster left empty?
        _warn_empty(keyword, things, name, row)
    if not joint:
        return
    warn_on_joint(
        table=keyword,
        column=column,
        matched=row[_CLUSTERED],
        total=row[_RUN_IDS],
        things=things,
        owner="run",
        effect=(
            f"{'an' if things == 'items' else 'a'} {things[:-1]} without a cluster counts in "
            "no cluster's mean (with none clustered, MAD is null)"
        ),
        by_system=systems_named(row, _CLUSTERED, systems),
    )
