"""The rank-similarity metrics out of core: ``irm.evaluate(run, ["rbo"], reference=...,
buckets=N)``.

Every rank-similarity metric (``rbo``, ``jaccard@k``, ``kendall_tau@k``, ``tau_ap@k``,
``intersection@k``, ``unexpectedness@k``...) is a value per query, read from that
query's ranking in the run and in the reference. So both tables are split into hash
buckets of queries (:func:`~polars_irmetrics.ground.buckets.evaluate_in_buckets`: the
reference goes where the judgments go for the ranking metrics), each bucket gives its
queries' values by the one plan
(:func:`~polars_irmetrics.agreement.plan.build_agreement_plan`), and the means are taken
over every query's values sorted by the keys, as the one plan takes them
(:func:`~polars_irmetrics.agreement.plan.agreement_means`): the same bits. A reference
without the run's ``by`` keys serves every group of the whole run (not only the groups
of a bucket), and the warnings of a reference that lacks most of the run's queries, or
every one of its documents, count the whole run's (as the one plan's: given once), as
does the warning of the correlations null for their ties (each bucket's per-query values
carry their marks: :mod:`polars_irmetrics.agreement.ties`). A group of the run that
the reference lacks is one the whole reference lacks: a bucket holds some of a group's
queries, whose reference rows may sit in other buckets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from polars_irmetrics.agreement.coverage import (
    documents_tally,
    queries_hint,
    queries_tally,
    warn_on_queries,
)
from polars_irmetrics.agreement.keys import check_result_keys, reference_group_keys
from polars_irmetrics.agreement.plan import (
    agreement_means,
    build_agreement_plan,
    reference_queries,
)
from polars_irmetrics.agreement.ties import with_ties_warning
from polars_irmetrics.ground.buckets import evaluate_in_buckets, splits_in_buckets
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import with_tally
from polars_irmetrics.metrics.registry import MetricRequest

__all__ = ["agreement_in_buckets", "build_agreement"]

Requests = list[tuple[str, MetricRequest]]

#: How the rank-similarity metrics are named in messages.
_MEASURES = "the rank-similarity metrics"


def build_agreement(
    run: pl.LazyFrame,
    reference: pl.LazyFrame,
    requests: Requests,
    options: EvalOptions,
    *,
    warn: bool = True,
) -> pl.LazyFrame:
    """The one plan, or the buckets when ``buckets=`` is a number or ``"auto"``.
    ``warn``: ``False`` for a part of a larger evaluation (an engine's), which warns of
    nothing and whose per-query values carry the ties' mark columns
    (:func:`~polars_irmetrics.agreement.plan.build_agreement_plan`)."""
    check_result_keys(requests, options)  # as asked (the buckets read per-query values)
    if splits_in_buckets(options.buckets, options.spill_dir, _MEASURES):
        return agreement_in_buckets(run, reference, requests, options, warn=warn)
    return build_agreement_plan(run, reference, requests, options, warn=warn)


def agreement_in_buckets(
    run: pl.LazyFrame,
    reference: pl.LazyFrame,
    requests: Requests,
    options: EvalOptions,
    *,
    warn: bool = True,
) -> pl.LazyFrame:
    """The rank-similarity plan over hash buckets of queries (module doc): the per-query
    values (``options.per_query``) or their means, lazy; ``warn``: as
    :func:`build_agreement`'s.

    Examples
    --------
    Three queries in two buckets give the one plan's numbers:

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["q1", "q1", "q2", "q2", "q3"],
    ...                     "doc_id": ["a", "b", "a", "c", "b"], "rank": [1, 2, 1, 2, 1]})
    >>> ref = run.with_columns(pl.col("rank").reverse().over("query_id"))
    >>> requests = parse_metric_list(["rbo", "jaccard@1"])
    >>> split = agreement_in_buckets(run, ref, requests, EvalOptions(buckets=2)).collect()
    >>> split.equals(build_agreement_plan(run, ref, requests, EvalOptions()).collect())
    True
    """
    per_query = options.replace(per_query=True)
    query_id, by = options.query_id, list(options.by_keys)
    keys = [*by, query_id]

    # a bucket holds some of a group's queries, whose reference rows may sit in other
    # buckets: the whole reference's groups, found once (when the first bucket runs),
    # decide which group of the run it lacks, as the one plan decides
    shared = reference_group_keys(options, reference.collect_schema().names())
    found: list[EvalOptions] = []

    def evaluate_part(
        part: pl.LazyFrame, ref_part: pl.LazyFrame | None, groups: pl.LazyFrame | None
    ) -> pl.LazyFrame:
        side = reference.clear() if ref_part is None else ref_part
        if shared and not found:
            rows = reference.select(shared).unique().collect().rows()
            found.append(per_query.replace(reference_groups=tuple(rows)))
        part_options = found[0] if found else per_query
        return build_agreement_plan(part, side, requests, part_options, warn=False, groups=groups)

    schema = build_agreement_plan(run, reference, requests, per_query, warn=False)
    buckets = options.buckets
    if buckets is None or buckets == "auto-memory":  # pragma: no cover - build_agreement
        return build_agreement_plan(run, reference, requests, options, warn=warn)
    missing = [key for key in by if key not in reference.collect_schema()]
    every = run.select(missing).unique() if missing else None  # groups a reference serves
    values = evaluate_in_buckets(
        run,
        reference,
        every,
        query_id=query_id,
        buckets=buckets,
        spill_dir=options.spill_dir,
        evaluate_part=evaluate_part,
        schema=schema.collect_schema(),
        progress=options.progress,
    ).sort(keys)
    if warn:
        systems = list(options.system_keys)
        held = reference_queries(reference, keys, every)
        queries = queries_tally(run.select(keys), held, keys, systems)
        doc_id = options.doc_id
        docs = documents_tally(run.select(*systems, doc_id), reference, doc_id, systems)
        tally = pl.concat([queries, docs], how="horizontal")
        hint = queries_hint(run, held, query_id)

        def say(row: Mapping[str, Any]) -> None:
            warn_on_queries(row, query_id, options, requests, hint)

        values = with_tally(values, tally, say)
        # the buckets' marks of the correlations null for their ties: counted once
        values = with_ties_warning(values, requests, keys)
    if options.per_query:
        return values
    return agreement_means(values, requests, by)
