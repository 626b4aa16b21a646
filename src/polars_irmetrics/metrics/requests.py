"""The registry's store and request model: every metric by every name, a parsed
request (:class:`MetricRequest`), and the checks of the tables a list of requests reads.

Strings become requests in :mod:`polars_irmetrics.metrics.parser`;
:mod:`polars_irmetrics.metrics.registry` is the one import of both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics import METRICS
from polars_irmetrics.metrics._common import relevant
from polars_irmetrics.metrics.collection import CollectionFormula, CollectionScope
from polars_irmetrics.metrics.scope import Scope, exact_mean
from polars_irmetrics.metrics.spec import (
    CI_LEVEL,
    JOINABLE,
    ROUTE_TABLES,
    Aggregate,
    Alias,
    Input,
    Metric,
    Params,
    ParamValue,
    Route,
)

__all__ = [
    "BY_NAME",
    "DEFAULT_METRICS",
    "EMPTY_TARGET_ACTIONS",
    "INPUTS",
    "SPREADS",
    "MetricRequest",
    "averages_over_history",
    "check_inputs",
    "labels_by_route",
    "list_metrics",
    "means",
    "merges_from_counts",
    "merges_from_users",
    "refuse_own_summaries",
    "refuse_summaries",
    "split_routes",
    "user_mean",
]

#: torchmetrics' ``empty_target_action``: the value of a query without a relevant
#: document. ``'skip'``: none (null per query, left out of the mean, which is 0 when
#: every query is left out); ``'neg'``: 0; ``'pos'``: 1; ``'error'``: refused.
EMPTY_TARGET_ACTIONS: tuple[str, ...] = ("skip", "neg", "pos", "error")

#: Every metric by its canonical name and every alias: name -> (metric, alias or None).
BY_NAME: dict[str, tuple[Metric, Alias | None]] = {}
for _m in METRICS:
    if _m.name in BY_NAME:  # pragma: no cover - a declaration error
        raise RuntimeError(f"metric name {_m.name!r} declared twice")
    BY_NAME[_m.name] = (_m, None)
    for _a in _m.aliases:
        if _a.name in BY_NAME:  # pragma: no cover - a declaration error
            raise RuntimeError(f"metric alias {_a.name!r} declared twice")
        BY_NAME[_a.name] = (_m, _a)

#: Every core metric at its usual cutoffs; ``evaluate(run, DEFAULT_METRICS, ...)``.
DEFAULT_METRICS: tuple[str, ...] = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "map@10",
    "map@100",
    "r_precision",
    "mrr",
    "mrr@10",
    "bpref",
    "ndcg",
    "ndcg@5",
    "ndcg@10",
    "ndcg@20",
    "ndcg@100",
    "precision@5",
    "precision@10",
    "precision@20",
    "precision@100",
    "recall@5",
    "recall@10",
    "recall@20",
    "recall@100",
    "f1@10",
    "hit_rate@1",
    "hit_rate@5",
    "hit_rate@10",
)


#: The ``agg=`` summaries that are a spread of the per-query values, not a value of
#: them: no better direction (:attr:`MetricRequest.higher_is_better`).
SPREADS: frozenset[str] = frozenset({"std", "ci_halfwidth"})


@dataclass(frozen=True)
class MetricRequest:
    """A metric with every parameter resolved: what one result column computes.

    Made by :func:`parse_metric`; its :attr:`name` is the canonical spelling, which
    parses back to an equal request.

    Parameters
    ----------
    metric
        The registry entry.
    k
        Cutoff, or ``None`` for the whole ranking.
    level
        Relevance level set by the request (``AP(rel=2)``), or ``None`` to use the
        evaluation's ``relevance_level``.
    options
        The metric's own parameters as ``(name, value)`` pairs, defaults included.
    aggregate
        How per-query values are summarized (``agg=`` in the name), or ``None`` for the
        metric's own :attr:`Metric.aggregate`.
    ci_level
        The confidence level of ``agg='ci_halfwidth'`` (``ci_level=`` in the name), or
        ``None`` for :data:`~polars_irmetrics.metrics.spec.CI_LEVEL`.
    empty
        torchmetrics' ``empty_target_action`` (:data:`EMPTY_TARGET_ACTIONS`): the value
        of a query without a relevant document (at the relevance level; for a graded
        metric, without a positive label), or ``None``: the formula's own (0 for most).
    judged_only
        ir_measures' ``judged_only=True`` (trec_eval ``-J``): the run's unjudged
        documents are removed before the positions are given. An option of the whole
        evaluation (``irm.evaluate(..., judged_only=True)``); in a metric name, every
        metric of the list must say it alike.
    given
        The string as the user gave it (set by :func:`parse_metric_list`; not compared):
        see :attr:`label`.

    Examples
    --------
    Defaults are filled in but never printed in the canonical name:

    >>> import polars_irmetrics as irm
    >>> request = irm.parse_metric("R@100")
    >>> request.name, request.k, dict(request.options)["denominator"]
    ('recall@100', 100, 'relevant')
    >>> irm.parse_metric(request.name) == request
    True

    ir_measures sums its counts over queries, so its spelling carries ``agg='sum'``:

    >>> irm.parse_metric("NumRet(rel=2)").name
    "num_rel_ret(rel=2, agg='sum')"
    """

    metric: Metric
    k: int | None
    level: float | None
    options: tuple[tuple[str, ParamValue], ...]
    aggregate: Aggregate | None = None
    judged_only: bool = False
    empty: str | None = None
    ci_level: float | None = None
    given: str | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """The result column's name: the string as given, else the canonical :attr:`name`."""
        return self.name if self.given is None else self.given

    @property
    def route(self) -> Route:
        """The wing that computes this request (:attr:`Metric.route`, or the route of
        its ``kind`` where :attr:`Metric.kinds` names one)."""
        kind = self._kind
        return self.metric.route if kind is None else kind[0]

    @property
    def _kind(self) -> tuple[Route, tuple[Input, ...]] | None:
        """The route and reads of this request's ``kind`` where another route computes it."""
        if not self.metric.kinds:
            return None
        return self.metric.kinds.get(str(dict(self.options).get("kind")))

    @property
    def higher_is_better(self) -> bool | None:
        """The direction of this request: ``None`` where ``agg=`` summarizes the
        per-query values by their spread (:data:`SPREADS`: ``'std'``, ``'ci_halfwidth'``),
        which is neither better higher nor lower; else that of a parameter value that
        declares its own (:attr:`Param.directions
        <polars_irmetrics.metrics.spec.Param.directions>`), else the metric's
        (:attr:`Metric.higher_is_better`). Whatever reads "better" (wins, markers, bold,
        orderings, objectives) reads it here.

        Examples
        --------
        The residual of RBO is its uncertainty, not an overlap: no better direction.

        >>> import polars_irmetrics as irm
        >>> irm.parse_metric("rbo@4").higher_is_better
        True
        >>> irm.parse_metric("rbo(kind='res')@4").higher_is_better is None
        True

        A spread of the per-query values has no better direction; a median keeps it:

        >>> irm.parse_metric("P(agg='std')@5").higher_is_better is None
        True
        >>> irm.parse_metric("P(agg='median')@5").higher_is_better
        True
        """
        if self.aggregate in SPREADS:
            return None
        options = dict(self.options)
        for param in self.metric.params:
            value = options.get(param.name)
            if isinstance(value, str) and value in param.directions:
                return param.directions[value]
        return self.metric.higher_is_better

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``"recall(denominator='capped')@10"``."""
        parts = [
            f"{key}={value!r}"
            for key, value in self.options
            if value != _default(self.metric, key)
        ]
        if self.level is not None:
            parts.append(f"rel={_number(self.level)}")
        if self.aggregate is not None and self.aggregate != self.metric.aggregate:
            parts.append(f"agg={self.aggregate!r}")
        if self.ci_level is not None:
            parts.append(f"ci_level={self.ci_level!r}")
        if self.empty is not None:
            parts.append(f"empty_target_action={self.empty!r}")
        if self.judged_only:
            parts.append("judged_only=True")
        text = self.metric.name
        if parts:
            text += "(" + ", ".join(parts) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text

    @property
    def reads(self) -> tuple[Input, ...]:
        """The tables this request reads: its metric's (or its ``kind``'s,
        :attr:`Metric.kinds`), except that an item similarity
        from co-occurrence (``item_sim_measure='item_cooccurrence_count'``) reads the
        interactions instead of the item features."""
        kind = self._kind
        reads = self.metric.reads if kind is None else kind[1]
        if dict(self.options).get("item_sim_measure") == "item_cooccurrence_count":
            reads = (*(r for r in reads if r != "item_features"), "interactions")
        return tuple(dict.fromkeys(reads))

    @property
    def reads_histories(self) -> bool:
        """Whether this request reads each user's own history in the interactions, not
        only the items' popularity or the catalogue: it reads the interactions
        (:attr:`reads`) and its metric declares it (:attr:`Metric.histories
        <polars_irmetrics.metrics.spec.Metric.histories>`: RePlay's ``serendipity``,
        RecTools' ``serendipity(kind='kotkov')``, Elliot's ``pop_rsp`` and ``pop_reo``),
        or one of its parameter values does (:attr:`Param.histories
        <polars_irmetrics.metrics.spec.Param.histories>`: RePlay's
        ``novelty(kind='replay')``).

        >>> from polars_irmetrics.metrics.registry import parse_metric
        >>> parse_metric("novelty(kind='replay')@5").reads_histories
        True
        >>> parse_metric("novelty@5").reads_histories, parse_metric("mcc@5").reads_histories
        (False, False)
        """
        if "interactions" not in self.reads:
            return False
        if self.metric.histories:
            return True
        options = dict(self.options)
        return any(
            param.name in options and options[param.name] in param.histories
            for param in self.metric.params
        )

    def params(self, default_level: float) -> Params:
        """The :class:`Params` a formula sees, with ``default_level`` filled in."""
        level = default_level if self.level is None else self.level
        return Params(k=self.k, level=level, options=dict(self.options))

    def expr(self, scope: Scope, default_level: float) -> pl.Expr:
        """The per-query aggregation expression over ``scope``.

        With :attr:`empty` ``'skip'``, ``'neg'`` or ``'pos'``, a query without a
        relevant document (:meth:`no_relevant`) is null, 0 or 1; ``'error'`` is the
        plan's to raise.
        """
        value = self.metric.compute(scope, self.params(default_level))
        if self.empty is None or self.empty == "error":
            return value
        fill = {"skip": None, "neg": 0.0, "pos": 1.0}[self.empty]
        return (
            pl.when(self.no_relevant(scope, default_level))
            .then(pl.lit(fill, pl.Float64))
            .otherwise(value)
        )

    def no_relevant(self, scope: Scope, default_level: float) -> pl.Expr:
        """Per query: whether it has no relevant document (torchmetrics' "no positive
        target"): none at the relevance level, or for a graded metric none with a
        positive label."""
        if self.metric.binary:
            found = relevant(scope, self.params(default_level))
        else:
            found = scope.rel > 0
        return found.sum() == 0

    def summarize(self, column: str) -> pl.Expr:
        """The expression that summarizes the per-query values in ``column`` (``agg``)."""
        level = CI_LEVEL if self.ci_level is None else self.ci_level
        out = self.metric.summarize(column, self.aggregate, level)
        if self.empty == "skip":  # torchmetrics: 0 when every query was left out
            out = out.fill_null(0.0)
        return out


def _default(metric: Metric, key: str) -> ParamValue:
    param = metric.param(key)
    return None if param is None else param.default


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def list_metrics() -> list[Metric]:
    """Every metric in the registry, in declaration order.

    Returns
    -------
    list of Metric
        The declarations: name, summary, parameters, aliases, formula.

    Examples
    --------
    >>> import polars_irmetrics as irm
    >>> [m.name for m in irm.list_metrics()][:4]
    ['precision', 'recall', 'f1', 'r_precision']
    """
    return list(METRICS)


def split_routes(
    requests: Sequence[tuple[str, MetricRequest]], *, calls: str = "evaluate"
) -> dict[Route, list[tuple[str, MetricRequest]]]:
    """The requests by route (:attr:`Metric.route`), in the order given; the one
    refusal of metrics that one call cannot put side by side (computed from different
    tables). ``calls`` is the verb of the message's fix.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> list(split_routes(parse_metric_list(["ndcg@10", "coverage"])))
    ['offline', 'recsys']
    >>> split_routes(parse_metric_list(["auc", "ndcg@10"]), calls="compare")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metrics 'auc' and 'ndcg@10' are computed
    from different tables (prediction: labels and predictions; offline: a run and
    judgments): compare them in two calls
    """
    routes: dict[Route, list[tuple[str, MetricRequest]]] = {}
    for label, request in requests:
        routes.setdefault(request.route, []).append((label, request))
    kinds = list(routes)
    if len(kinds) > 1 and not set(kinds) <= JOINABLE:
        a, b = kinds[0], kinds[1]
        raise MetricParameterError(
            f"metrics {routes[a][0][0]!r} and {routes[b][0][0]!r} are computed from "
            f"different tables ({a}: {ROUTE_TABLES[a]}; {b}: {ROUTE_TABLES[b]}): {calls} "
            "them in two calls"
        )
    return routes


def refuse_summaries(requests: Sequence[tuple[str, MetricRequest]], *, calls: str) -> None:
    """Refuse a request that summarizes its per-query values its own way (``agg=``, or
    a name that implies it, as ir_measures' ``NumRet`` sums) where ``calls`` compares
    the per-query values themselves (paired query by query, or their means), which
    ``agg=`` does not change: it would be ignored. ``calls`` is the entry point the message names.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> refuse_summaries(parse_metric_list(["P@1"]), calls="irm.compare")
    >>> refuse_summaries(parse_metric_list(["P(agg='std')@1"]), calls="irm.compare")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric "P(agg='std')@1" summarizes
    its per-query values with agg='std', but irm.compare compares the per-query values
    themselves, which agg= does not change, so agg= would be ignored: drop agg= (e.g.
    'precision@1'), or take the summary from irm.evaluate

    A metric summarized its own way (:attr:`Metric.aggregate
    <polars_irmetrics.metrics.spec.Metric.aggregate>`: ``gm_map``'s geometric mean of
    the per-query AP, ``num_q``'s sum) is refused alike: the mean of its per-query
    values is another metric's (``map``'s), which ``calls`` would show, test and rank
    the systems by under its name:

    >>> refuse_summaries(parse_metric_list(["gm_map"]), calls="irm.compare")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'gm_map' is summarized over
    queries by the geometric mean of its per-query values (gm_map's own summary), but
    irm.compare reads the per-query values by their arithmetic mean, which is not
    gm_map: its means, wins and best system would be another metric's under the name
    'gm_map'; take 'gm_map' from irm.evaluate, or pass a metric summarized by the mean
    of its per-query values

    ``agg='mean'`` asks for that mean, which is what ``calls`` reads:

    >>> refuse_summaries(parse_metric_list(["gm_map(agg='mean')"]), calls="irm.compare")
    """
    for label, request in requests:
        if request.aggregate is None:
            refuse_own_summaries([(label, request)], calls=calls)
            continue
        if request.aggregate == "mean":  # the mean the caller reads: gm_map(agg='mean')
            continue
        plain = replace(request, aggregate=None, ci_level=None).name
        raise MetricParameterError(
            f"metric {label!r} summarizes its per-query values with "
            f"agg={request.aggregate!r}, but {calls} compares the per-query values "
            "themselves, which agg= does not change, so agg= would be ignored: drop agg= "
            f"(e.g. {plain!r}), or take the summary from irm.evaluate"
        )


def refuse_own_summaries(requests: Sequence[tuple[str, MetricRequest]], *, calls: str) -> None:
    """Refuse a request summarized over queries its own way (:attr:`Metric.aggregate
    <polars_irmetrics.metrics.spec.Metric.aggregate>` other than the mean, no ``agg=``)
    where ``calls`` reads its per-query values by their arithmetic mean: the part of
    :func:`refuse_summaries` that a column of per-query values named after the metric
    (``irm.evaluate(..., per_query=True)``'s ``gm_map``) meets too.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> refuse_own_summaries(parse_metric_list(["map", "P(agg='std')@1"]), calls="f")
    >>> refuse_own_summaries(parse_metric_list(["num_q"]), calls="f")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'num_q' is summarized over
    queries by the sum of its per-query values (num_q's own summary), but f reads the
    per-query values by their arithmetic mean, which is not num_q: its means, wins and
    best system would be another metric's under the name 'num_q'; take 'num_q' from
    irm.evaluate, or pass a metric summarized by the mean of its per-query values
    """
    for label, request in requests:
        own = request.metric.aggregate
        if request.aggregate is not None or own == "mean":
            continue
        name = request.metric.name
        raise MetricParameterError(
            f"metric {label!r} is summarized over queries by the "
            f"{_SUMMARY_WORDS.get(own, repr(own))} of its per-query values ({name}'s "
            f"own summary), but {calls} reads the per-query values by their arithmetic "
            f"mean, which is not {name}: its means, wins and best system would be "
            f"another metric's under the name {label!r}; take {label!r} from "
            "irm.evaluate, or pass a metric summarized by the mean of its per-query "
            "values"
        )


#: A metric's own summary (:attr:`Metric.aggregate`) in words, for
#: :func:`refuse_summaries`.
_SUMMARY_WORDS: dict[str, str] = {"geometric": "geometric mean", "sum": "sum"}


def labels_by_route(
    requests: Sequence[tuple[str, MetricRequest]], route: Route | None = None
) -> dict[str, list[str]]:
    """The labels of the requests by the route that computes them (every one by
    ``route`` when it is given: a door of one wing), as
    :func:`~polars_irmetrics.ground.options.check_read` reads them.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> labels_by_route(parse_metric_list(["ndcg@10", "auc", "P@5"]))
    {'offline': ['ndcg@10', 'P@5'], 'prediction': ['auc']}
    """
    routes: dict[str, list[str]] = {}
    for label, request in requests:
        routes.setdefault(route or request.route, []).append(label)
    return routes


#: What each input a metric reads is, and the keyword of the entry points that takes it
#: (``run`` and ``clicks`` are the table itself).
INPUTS: Mapping[str, tuple[str, str]] = {
    "judgments": ("relevance judgments", "qrels"),
    "interactions": (
        "the interaction history (where item popularity, the catalogue and each user's "
        "history come from)",
        "interactions",
    ),
    "item_features": (
        "the items' feature vectors (one row per item: its id and a list or array of numbers"
        "; or its category, for categorical_diversity)",
        "item_features",
    ),
    "prefs": ("preference judgments", "prefs"),
    "judgment_groups": ("judgments with a judgment-group column", "qrels_jg"),
    "neighbors": (
        "the exact nearest neighbours (e.g. irm.knn(queries, corpus, k=...))",
        "neighbors",
    ),
    "policy": (
        "an evaluation policy (one row per round and action with its probability 'prob')",
        "policy",
    ),
    "reward_model": (
        "a reward model (one row per round and action with its estimated reward 'q_hat')",
        "reward_model",
    ),
    "reference": ("a reference run (the ranking each query's is compared with)", "reference"),
    "propensities": (
        "propensities (one row per document, or per position, with its 'propensity')",
        "propensities",
    ),
    "groups": ("document groups (one row per document and group: doc_id, group)", "groups"),
    "target": (
        "a target group distribution (one row per group: group, target; or per query and group)",
        "target",
    ),
    "user_groups": (
        "user clusters (one row per user: the query id column and group)",
        "user_groups",
    ),
}


def check_inputs(
    requests: Sequence[tuple[str, MetricRequest]],
    given: Mapping[str, object],
    caller: str = "irm.evaluate",
) -> None:
    """Refuse the first metric that reads a table which was not given.

    ``given`` maps an input of :data:`INPUTS` to its table (``None``: not given);
    ``caller`` is the entry point named in the message. Relevance judgments are not
    checked: without them the run is a judged table.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> check_inputs(parse_metric_list(["prefs_simp"]), {"prefs": None})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'prefs_simp' reads preference
    judgments: pass prefs=... to irm.evaluate
    """
    for label, request in requests:
        for needed in request.reads:
            if needed not in INPUTS or needed == "judgments":
                continue
            what, keyword = INPUTS[needed]
            if needed in given and given[needed] is None:
                raise MetricParameterError(
                    f"metric {label!r} reads {what}: pass {keyword}=... to {caller}"
                )


def means(requests: Sequence[tuple[str, MetricRequest]]) -> list[pl.Expr]:
    """The aggregations that turn per-query values into means: ``num_q``, the queries
    averaged, then each metric's summary (the values added from the least, so every
    engine gives the same bits, in any order of the queries). A metric labelled
    ``num_q`` (NumQ's canonical name) is that column."""
    return [
        pl.len().cast(pl.Int64).alias("num_q"),
        *(request.summarize(label) for label, request in requests if label != "num_q"),
    ]


#: What a recommendation-table formula reads beyond its users' own rows and the items'
#: features: the interaction history (popularity, users of items, a user's history).
_HISTORY_NEEDS = frozenset(
    {"popularity", "item_users", "seen", "history", "history_cooc", "cooccurrence"}
)


def merges_from_users(request: MetricRequest, *, history: bool = False) -> bool:
    """Whether a metric of a recommendation table (the ``recsys`` route) is the mean of
    per-user values over the users of the recommendations, each read from the user's
    own rows (and the items' features) alone: then a part of the users gives their
    values, and the mean of every part's values (:func:`user_mean`) is the one plan's.
    ``history``: each part reads the whole interaction history too (one machine's
    buckets), so a user's value may read it (popularity, the user's own history).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> names = ["sufficient_reco@5", "surprisal@5", "novelty@5", "catalog_coverage@5"]
    >>> [merges_from_users(parse_metric(n)) for n in names]
    [True, False, False, False]
    >>> [merges_from_users(parse_metric(n), history=True) for n in names]
    [True, True, False, False]
    """
    found = _collection_formula(request)
    if found is None:
        return False
    scope, formula = found
    merged = formula.over == "users" and formula.absent is None
    return merged and (history or not scope.needs & _HISTORY_NEEDS)


def _collection_formula(
    request: MetricRequest,
) -> tuple[CollectionScope, CollectionFormula] | None:
    """A recommendation-table metric's formula and the scope it registered its needs
    in; ``None`` for any other metric."""
    collection = request.metric.collection
    if request.route != "recsys" or collection is None:
        return None
    scope = CollectionScope(item=pl.col("item"))
    return scope, collection(scope, request.params(1.0))


def merges_from_counts(request: MetricRequest) -> bool:
    """Whether a metric of a recommendation table (the ``recsys`` route) is one
    aggregation over every row that reads only how often each item is recommended
    (within its cutoff) and the item's own columns (its popularity, the catalogue's
    size): then the parts of a split table give their items' counts, and the counts
    added up give the one plan's value (:attr:`CollectionFormula.counted
    <polars_irmetrics.metrics.collection.CollectionFormula.counted>`).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> names = ["catalog_coverage@5", "gini_index", "novelty@5", "surprisal@5",
    ...          "novelty(kind='replay')@5"]
    >>> [merges_from_counts(parse_metric(n)) for n in names]
    [True, True, True, False, False]
    """
    found = _collection_formula(request)
    return found is not None and found[1].over == "rows" and found[1].counted is not None


def averages_over_history(request: MetricRequest) -> bool:
    """Whether a metric of a recommendation table is the mean of per-user values over
    the users of the history, a user without recommendations counting a fixed value
    (RePlay's ``novelty(kind='replay')``:
    :attr:`CollectionFormula.absent
    <polars_irmetrics.metrics.collection.CollectionFormula.absent>`).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> [averages_over_history(parse_metric(n))
    ...  for n in ["novelty(kind='replay')@5", "novelty@5", "surprisal@5"]]
    [True, False, False]
    """
    found = _collection_formula(request)
    return found is not None and found[1].over == "users" and found[1].absent is not None


def user_mean(label: str, request: MetricRequest) -> pl.Expr:
    """The mean of a recommendation-table metric's per-user values in column ``label``
    over the users of the recommendations (nulls left out): an exact fixed-point mean,
    the same bits in any order and from any split of the users; with ``agg=``, the
    metric's ``summarize`` (the values added from the least)."""
    if request.aggregate is not None:
        return request.metric.summarize(label, request.aggregate)
    return exact_mean(pl.col(label))
