"""The plan of the door's ``offline`` route: the one plan of a run and judgments
(:func:`~polars_irmetrics.offline.plan.build_plan`), and beside it RecTools' metrics
that read more than a query's judged rows: the catalogue classification metrics
(``reco_accuracy@k``, ``mcc@k``: the catalogue's size from the interactions) and
``covered_users@k`` (whether the run ranks any document of the query within ``k``,
unjudged ones too).
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.elliot import ELLIOT
from polars_irmetrics.metrics.rectools import CATALOGUE_FORMULAS, COVERED_USERS
from polars_irmetrics.metrics.registry import MetricRequest, get_metric, means
from polars_irmetrics.offline.elliot import build_elliot_plan
from polars_irmetrics.offline.plan import build_plan

__all__ = ["build_offline_plan"]

Requests = list[tuple[str, MetricRequest]]

_CATALOGUE = f"{INTERNAL}catalogue"
_NUM_REL_RET, _NUM_REL = get_metric("num_rel_ret"), get_metric("num_rel")


def build_offline_plan(
    table: pl.LazyFrame,
    requests: Requests,
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    queries: pl.LazyFrame | None,
    interactions: pl.LazyFrame | None,
    *,
    warn: bool = True,
) -> pl.LazyFrame:
    """The offline plan; with RecTools' catalogue metrics (``reco_accuracy``, ``mcc``:
    :data:`~polars_irmetrics.metrics.rectools.CATALOGUE_FORMULAS`), each user's tp
    (``num_rel_ret@k``) and liked (``num_rel``) come from the per-query plan, and the
    formula reads them beside the catalogue size, the distinct items of the
    interactions (a one-row frame joined across: nothing collected). RecTools'
    ``covered_users@k`` reads whether the run ranks a document of the query at or above
    ``k``, unjudged ones too, which the judged rows of the per-query plan do not show:
    a group-by of the run, joined on the query keys."""
    elliot = [(label, r) for label, r in requests if r.metric.name in ELLIOT]
    if elliot and interactions is not None:
        return _with_elliot(table, requests, qrels, options, queries, interactions, warn=warn)
    special = set(CATALOGUE_FORMULAS) | {COVERED_USERS}
    wanted = [(label, r) for label, r in requests if r.metric.name in special]
    if not wanted or (
        interactions is None and any(r.metric.name != COVERED_USERS for _, r in wanted)
    ):
        # (mcc or reco_accuracy without interactions: check_inputs has refused them)
        return build_plan(table, requests, qrels, options, queries=queries, warn=warn)
    helpers: Requests = []
    formulas: list[pl.Expr] = []
    covered: list[tuple[str, int]] = []
    catalogue = pl.col(_CATALOGUE).cast(pl.Float64)
    for i, (label, request) in enumerate(wanted):
        k = request.k if request.k is not None else 0  # the parser requires k
        if request.metric.name == COVERED_USERS:
            covered.append((f"{INTERNAL}covered{i}", k))
            formulas.append(pl.col(covered[-1][0]).fill_null(False).cast(pl.Float64).alias(label))
            continue
        tp, liked = f"{INTERNAL}tp{i}", f"{INTERNAL}liked{i}"
        helpers.append((tp, replace(request, metric=_NUM_REL_RET, options=(), aggregate=None)))
        helpers.append(
            (liked, replace(request, metric=_NUM_REL, options=(), k=None, aggregate=None))
        )
        formula = CATALOGUE_FORMULAS[request.metric.name]
        value = formula(pl.col(tp).cast(pl.Float64), pl.col(liked).cast(pl.Float64), k, catalogue)
        formulas.append(value.alias(label))
    rest = [(label, r) for label, r in requests if r.metric.name not in special]
    if not rest and not helpers:  # the plan still needs one metric to give the queries
        helpers.append(
            (
                f"{INTERNAL}num_rel",
                replace(wanted[0][1], metric=_NUM_REL, k=None, options=(), aggregate=None),
            )
        )
    per_query = build_plan(
        table,
        [*rest, *helpers],
        qrels,
        options.replace(per_query=True),
        queries=queries,
        warn=warn,
    )
    labels = [label for label, _ in requests]
    schema = per_query.collect_schema()
    keys = [c for c in schema.names() if c not in {h for h, _ in helpers} and c not in labels]
    if interactions is not None and any(r.metric.name in CATALOGUE_FORMULAS for _, r in wanted):
        items = interactions.select(pl.col(options.doc_id).n_unique().alias(_CATALOGUE))
        per_query = per_query.join(items, how="cross", maintain_order="left_right")
    if covered:
        on = [c for c in keys if c in table.collect_schema().names()]
        per_query = per_query.join(
            _covered(table, covered, on, schema, options),
            on=on,
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
    values = per_query.with_columns(formulas).select(*keys, *labels)
    if options.per_query:
        return values
    by = [c for c in keys if c != options.query_id]
    if by:
        return values.group_by(by, maintain_order=True).agg(means(requests))
    return values.select(means(requests))


def _with_elliot(
    table: pl.LazyFrame,
    requests: Requests,
    qrels: pl.LazyFrame | None,
    options: EvalOptions,
    queries: pl.LazyFrame | None,
    interactions: pl.LazyFrame,
    *,
    warn: bool,
) -> pl.LazyFrame:
    """The offline plan of the other metrics (which checks the run and judgments as
    always; a helper ``num_rel`` where Elliot's are all that was asked for) beside
    Elliot's (:func:`~polars_irmetrics.offline.elliot.build_elliot_plan`), joined on
    the ``by`` keys (side by side without them)."""
    elliot = [(label, r) for label, r in requests if r.metric.name in ELLIOT]
    rest = [(label, r) for label, r in requests if r.metric.name not in ELLIOT]
    alone = not rest
    if alone:
        helper = replace(elliot[0][1], metric=_NUM_REL, k=None, options=(), aggregate=None)
        rest = [(f"{INTERNAL}num_rel", helper)]
    values = build_elliot_plan(table, elliot, qrels, interactions, options, alone=alone)
    base = build_offline_plan(table, rest, qrels, options, queries, interactions, warn=warn)
    labels = [label for label, _ in requests]
    helpers = {f"{INTERNAL}num_rel"}
    by = [c for c in values.collect_schema().names() if c not in labels]
    keys = [c for c in base.collect_schema().names() if c not in labels and c not in helpers]
    if by:
        both = base.join(values, on=by, how="left", nulls_equal=True, maintain_order="left")
    else:
        both = pl.concat([base, values], how="horizontal")
    return both.select(*keys, *labels)


def _covered(
    run: pl.LazyFrame,
    covered: list[tuple[str, int]],
    on: list[str],
    schema: pl.Schema,
    options: EvalOptions,
) -> pl.LazyFrame:
    """Per query (its keys ``on``, those the run has): whether a document is ranked at or
    above each ``k``. Ordered by score, positions run 1..n, so any document is; by
    rank, the smallest rank decides."""
    by_rank = options.rank in run.collect_schema().names() and options.order != "score"
    top = pl.col(options.rank).min() if by_rank else pl.lit(1)
    flags = [(top <= k).alias(column) for column, k in covered]
    return (
        run.select(on + ([options.rank] if by_rank else []))
        .with_columns(pl.col(c).cast(schema[c]) for c in on)
        .group_by(on)
        .agg(flags)
    )
