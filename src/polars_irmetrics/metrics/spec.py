"""The types a metric is declared with: parameters, the metric itself, and its scope.

A metric is declared once (in :mod:`polars_irmetrics.metrics`) as a :class:`Metric`:
its name, its parameters with defaults, its aliases, whether higher is better, and a
``compute`` function. ``compute`` returns one polars aggregation expression over the
*judged rows of one query* (see :class:`polars_irmetrics.metrics.scope.Scope`); the same
expression serves the public
expression API (``df.group_by("query_id").agg(irm.ndcg(k=10))``) and the evaluator's
single query plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.stats.normal import two_sided_z

if TYPE_CHECKING:
    from polars_irmetrics.metrics.collection import CollectionFormula, CollectionScope
    from polars_irmetrics.metrics.scope import Scope

__all__ = [
    "AGGREGATES",
    "CI_LEVEL",
    "JOINABLE",
    "ROUTE_TABLES",
    "SUMMARIZED_ROUTES",
    "Alias",
    "Level",
    "Metric",
    "Param",
    "Params",
    "Route",
]

ParamValue = int | float | str | None
#: Whether ``@k`` is optional, required or refused; ``"dropped"``: accepted and without
#: effect, for a peer's spelling whose ``@k`` means nothing there (ir_measures' ``SetP@5``
#: is its ``SetP``: its providers score the whole retrieved set; the request's canonical
#: name then has no cutoff, so it says what is computed).
CutoffRule = Literal["optional", "required", "none", "dropped"]
Aggregate = Literal[
    "mean", "geometric", "sum", "median", "min", "max", "std", "median_low", "ci_halfwidth"
]
#: Every way of summarizing per-query values, for ``agg=`` in a metric name.
AGGREGATES: tuple[Aggregate, ...] = (
    "mean",
    "geometric",
    "sum",
    "median",
    "min",
    "max",
    "std",
    "median_low",
    "ci_halfwidth",
)
#: The confidence level of ``agg='ci_halfwidth'`` where the name gives no ``ci_level=``:
#: RePlay's ``ConfidenceInterval(alpha=0.95)`` (RePlay's ``alpha`` is the level).
CI_LEVEL = 0.95
#: The tables a metric reads: a ranked list (``"run"``: a run, recommendations or an
#: impression log), relevance judgments (``"judgments"``), interaction history
#: (``"interactions"``: popularity, what a user saw before), clicks and dwell of an
#: impression log (``"clicks"``), item embeddings or features (``"item_features"``),
#: preference judgments (``"prefs"``: trec_eval's ``-R prefs``) and relevance judgments
#: with a judgment-group column (``"judgment_groups"``: trec_eval's ``-R qrels_jg``), and
#: a model's predictions with their labels (``"predictions"``: a label and a prediction
#: per row, in one table or two joined on keys; :mod:`polars_irmetrics.metrics.prediction`).
#: an exact nearest-neighbour run (``"neighbors"``: the truth an approximate index is
#: measured against), and an off-policy evaluation's evaluation policy (``"policy"``) and
#: reward model (``"reward_model"``), read beside a log of logged feedback
#: (:mod:`polars_irmetrics.metrics.ope`).
#: measured against), and a reference run (``"reference"``: the ranking a run's is
#: compared with by the rank-similarity metrics, :mod:`polars_irmetrics.metrics.agreement`),
#: propensities (``"propensities"``: per document or per position, read by the
#: propensity-scored metrics, :mod:`polars_irmetrics.metrics.propensity`),
#: and document groups (``"groups"``: one row per (document, group), optional, read by
#: the expected-exposure measures, :mod:`polars_irmetrics.metrics.fairness`), and a
#: target group distribution (``"target"``: ``group, target``, optional, read by awrf),
#: and user clusters (``"user_groups"``: one row per user, read by Elliot's ``user_mad``).
Input = Literal[
    "run",
    "judgments",
    "interactions",
    "clicks",
    "item_features",
    "prefs",
    "judgment_groups",
    "predictions",
    "neighbors",
    "policy",
    "reward_model",
    "reference",
    "propensities",
    "groups",
    "target",
    "user_groups",
]
#: Where a metric's value comes from: one value per query (``"query"``, a formula over
#: the judged rows of one query, averaged over queries), or one value per recommendation
#: table (``"collection"``: catalogue coverage, novelty, diversity; see
#: :mod:`polars_irmetrics.metrics.collection`).
Level = Literal["query", "collection"]
#: The wing that computes a metric (:attr:`Metric.route`), decided once from what it
#: reads: a run and judgments (``"offline"``), a whole recommendation table
#: (``"recsys"``), an impression log's clicks (``"online"``), preference judgments
#: (``"prefs"``), judgment groups (``"jg"``), labels and predictions (``"prediction"``)
#: or an approximate run and the exact neighbours (``"neighbors"``).
Route = Literal[
    "offline",
    "recsys",
    "online",
    "prefs",
    "jg",
    "prediction",
    "neighbors",
    "ope",
    "reference",
    "propensity",
    "exposure",
]
#: What each route computes from, for the messages that refuse a mix of routes.
ROUTE_TABLES: Mapping[Route, str] = {
    "offline": "a run and judgments",
    "recsys": "a recommendation table",
    "online": "an impression log",
    "prefs": "a run and preference judgments",
    "jg": "a run and judgment groups",
    "prediction": "labels and predictions",
    "neighbors": "an approximate run and the exact neighbours",
    "ope": "a log of logged feedback and an evaluation policy",
    "reference": "a run and a reference run",
    "propensity": "a run, judgments and propensities",
    "exposure": "a (stochastic) run, judgments and optionally document groups",
}
#: The routes whose per-query values :meth:`Metric.summarize` turns into one number, so
#: whose metrics take an ``agg=`` other than their own; the others compute their own
#: summary (a click metric over sessions, an AUC over all rows, an estimator over the
#: log) and refuse one, except the recommendation table's metrics, whose plan takes
#: ``agg=`` for those averaged over users and refuses it for those of all rows at once.
SUMMARIZED_ROUTES: frozenset[Route] = frozenset(
    {"offline", "prefs", "jg", "neighbors", "reference"}
)
#: Routes whose results can be put side by side in one call (one row per query or group):
#: each reads the run and tables keyed by its queries or documents (the exposure
#: measures: groups= and target= beside the judgments).
JOINABLE: frozenset[Route] = frozenset({"offline", "recsys", "exposure"})

#: The first table of this list that a per-query metric reads names its route.
_READ_ROUTES: tuple[tuple[Input, Route], ...] = (
    ("clicks", "online"),
    ("prefs", "prefs"),
    ("judgment_groups", "jg"),
    ("predictions", "prediction"),
    ("neighbors", "neighbors"),
    ("policy", "ope"),
    ("reference", "reference"),
    ("propensities", "propensity"),
    ("groups", "exposure"),
    ("target", "exposure"),
)

#: Floor of a per-query value in a geometric mean (trec_eval's MIN_GEO_MEAN).
MIN_GEO_MEAN = 0.00001


def _ordered_sum(values: pl.Expr) -> pl.Expr:
    """The sum of ``values`` added one by one from the least: the same bits for the
    same values in any row order (a running sum in row order moved in the last bit
    with the queries' order, so the mean of the same per-query values differed between
    Int64 and String query ids, and between two systems that hold them in another
    order). :func:`ordered_mean` divides it.

    Examples
    --------
    >>> frame = pl.DataFrame({"x": [0.3, 0.2, 0.1], "y": [0.1, 0.2, 0.3]})
    >>> frame.select(pl.col("x").cum_sum().last(), pl.col("y").cum_sum().last()).row(0)
    (0.6, 0.6000000000000001)
    >>> frame.select(_ordered_sum(pl.col("x")), _ordered_sum(pl.col("y"))).row(0)
    (0.6000000000000001, 0.6000000000000001)
    """
    return values.sort().cum_sum().last()


def ordered_mean(values: pl.Expr) -> pl.Expr:
    """The mean of the non-null Float64 ``values``: :func:`_ordered_sum` divided by the
    count; where that sum of finite values goes beyond Float64, the values scaled by
    2**-64 (exact), the mean scaled back. The one formula of every mean of per-query
    values: :meth:`Metric.summarize`'s and
    :func:`polars_irmetrics.comparison.paired.exact_means`'.

    Examples
    --------
    >>> pl.DataFrame({"x": [1e308, 1e308, 1.0]}).select(ordered_mean(pl.col("x"))).item()
    6.666666666666666e+307
    """
    total = _ordered_sum(values)
    scaled = _ordered_sum(values * 2.0**-64) / values.count() * 2.0**64
    finite = values.is_finite().all()
    return pl.when(total.is_infinite() & finite).then(scaled).otherwise(total / values.count())


@dataclass(frozen=True)
class Param:
    """One named parameter of a metric.

    Attributes
    ----------
    name
        Keyword used in metric names (``recall(denominator='capped')@10``) and in the
        expression functions.
    default
        Value used when the parameter is not given. Defaults are never printed in
        canonical names.
    choices
        Allowed values for a string parameter, or ``None`` for a number.
    doc
        One line for the docs and error messages.
    check
        The parser's check of a given value, and its canonical form
        (``iprec(recall=1)`` is ``iprec(recall=1.0)``): raises ``ValueError`` with the
        message to show, so a formula never raises on a parameter. ``None``: the
        choices alone.
    directions
        The values of a string parameter that turn the metric's direction
        (:attr:`Metric.higher_is_better`), each to the direction it has instead:
        ``rbo(kind='res')`` is the residual ``max - min``, the uncertainty of the
        overlap, and ``rbo(kind='max')`` the overlap were every unseen depth to agree,
        so neither way is better for either (``{"max": None, "res": None}``: each
        grows with the unseen depths, however far the run is from the reference) where
        the estimate and the lower bound are overlaps, higher is better. The one place
        a direction depends on a parameter;
        :attr:`MetricRequest.higher_is_better
        <polars_irmetrics.metrics.requests.MetricRequest.higher_is_better>` reads it.
    with_cutoff
        The values that read the cutoff ``@k``: ``recall(denominator='capped')`` divides
        by ``min(k, R)``, ``precision(adaptive_k=True)`` by ``min(k, n)``; without a
        cutoff such a value computes what the default does, so the parser refuses it
        (never ignores it) where the request has no ``@k``.
    histories
        The values of this parameter that make the metric read each user's own history
        in the interactions (:attr:`Metric.histories`), where the metric itself does
        not: ``novelty(kind='replay')`` is the share of each user's top k the user never
        interacted with, while ``novelty``'s default is the items' popularity
        (``("replay",)``). :attr:`MetricRequest.reads_histories
        <polars_irmetrics.metrics.requests.MetricRequest.reads_histories>` reads it.
    """

    name: str
    default: ParamValue
    choices: tuple[str, ...] | None = None
    doc: str = ""
    check: Callable[[ParamValue], ParamValue] | None = field(
        default=None, compare=False, repr=False
    )
    directions: Mapping[str, bool | None] = field(default_factory=dict, compare=False)
    with_cutoff: tuple[ParamValue, ...] = ()
    histories: tuple[ParamValue, ...] = ()

    def __post_init__(self) -> None:
        """Refuse a direction that could never be read: :attr:`directions` keyed by a
        value that is none of :attr:`choices` (a misspelt ``'RES'`` would leave
        ``rbo(kind='res')`` higher-is-better without a word), or mapped to anything
        but ``True``, ``False`` or ``None`` (``"lower"`` is truthy: read higher).

        Examples
        --------
        >>> Param("kind", "ext", ("ext", "res"), directions={"RES": False})
        Traceback (most recent call last):
        ...
        polars_irmetrics.errors.MetricParameterError: parameter 'kind': directions names 'RES', which is not one of its choices ('ext', 'res'); a direction is declared for a value the parameter takes: name one of its choices
        """  # noqa: E501
        for value, direction in self.directions.items():
            if self.choices is None or value not in self.choices:
                shown = "none" if self.choices is None else ", ".join(map(repr, self.choices))
                raise MetricParameterError(
                    f"parameter {self.name!r}: directions names {value!r}, which is not one "
                    f"of its choices ({shown}); a direction is declared for a value the "
                    "parameter takes: name one of its choices"
                )
            if direction is not None and not isinstance(direction, bool):
                raise MetricParameterError(
                    f"parameter {self.name!r}: directions gives {value!r} the direction "
                    f"{direction!r}; it must be True (higher is better), False (lower is "
                    "better) or None (neither)"
                )


@dataclass(frozen=True)
class Alias:
    """Another name for a metric, with parameter values it implies.

    ``Alias("ndcg_burges", {"gain": "exponential"})`` makes ``ndcg_burges@10`` mean
    ``ndcg(gain='exponential')@10``. ``cutoff`` says whether the alias needs ``@k``
    (trec_eval's ``P_10`` family), refuses it (``recip_rank``) or drops it as its tool
    does (``"dropped"``: ir_measures' ``SetP(rel=2)@5``). ``aggregate`` is how
    the alias's tool summarizes per-query values when it differs from the metric's own
    (ir_measures sums its counts, ``NumRet``: ``num_ret(agg='sum')``).
    """

    name: str
    fixed: Mapping[str, ParamValue] = field(default_factory=dict)
    cutoff: CutoffRule | None = None
    aggregate: Aggregate | None = None


@dataclass(frozen=True)
class Params:
    """The resolved parameters of one metric request.

    ``k`` is the cutoff (``None``: the whole ranking), ``level`` the relevance level
    (a judged document with relevance >= level is relevant), and ``options`` the
    metric's own parameters, every one filled in (defaults included).
    """

    k: int | None
    level: float
    options: Mapping[str, ParamValue]

    def choice(self, name: str) -> str:
        """The string parameter ``name`` (a typed accessor for metric formulas)."""
        value = self.options[name]
        if not isinstance(value, str):  # pragma: no cover - guarded by the parser
            raise TypeError(f"parameter {name!r} is not a string: {value!r}")
        return value

    def number(self, name: str) -> float:
        """The number parameter ``name``, as a float (its ``Param.check`` made sure)."""
        value = self.options[name]
        if isinstance(value, bool) or not isinstance(value, int | float):  # pragma: no cover
            raise TypeError(f"parameter {name!r} is not a number: {value!r}")
        return float(value)


@dataclass(frozen=True)
class Metric:
    """One metric, declared once.

    Attributes
    ----------
    name
        Canonical lowercase name (``"ndcg"``).
    summary
        One line saying what it measures.
    compute
        ``compute(scope, params) -> pl.Expr``: the per-query aggregation.
    cutoff
        Whether ``@k`` is ``"optional"``, ``"required"`` or not allowed (``"none"``).
    params
        The metric's own parameters (the cutoff and relevance level are common to all).
    aliases
        Other names (ir_measures, trec_eval, ranx) and the parameters they imply.
    higher_is_better
        The metric's direction: ``True`` where a higher value is better (the
        default), ``False`` where a lower one is (an error such as ``logloss``),
        ``None`` where neither is: a value with a target in the middle
        (``calibration``, 1 when calibrated), a count that describes the input rather
        than its quality (``num_ret``, ``num_rel``, ``idcg``), or a measure of the
        judgments' completeness (``judged``, ``unjudged``, ``rbp_residual``: a system
        is no better for having more of its documents judged).
        :func:`~polars_irmetrics.compare` reads it for wins and losses (null for
        ``None``), :func:`~polars_irmetrics.report` for its markers and bold (none for
        ``None``), :func:`~polars_irmetrics.system_agreement` for its orderings, and
        :func:`~polars_irmetrics.optimize_fusion` for its objective (``None`` is
        refused), each through the request
        (:attr:`MetricRequest.higher_is_better
        <polars_irmetrics.metrics.requests.MetricRequest.higher_is_better>`), where a
        parameter value may turn it (:attr:`Param.directions`: ``rbo(kind='res')``).
    binary
        Whether the metric uses the relevance level (binary relevance). Graded
        metrics (nDCG, DCG) ignore it, as trec_eval does.
    threshold
        Whether a graded metric reads the call's relevance level (``relevance_level=``)
        as its relevant items' threshold, with no ``rel=`` of its own: Elliot's metrics
        (their ``rel_threshold``), the MAD metrics, RecTools' Serendipity
        (``kind='kotkov'``).
    ranking
        Whether the metric reads the run's ranking as ``depth=`` cuts it and
        ``judged_only=`` closes it up (where its route reads those options at all,
        :data:`~polars_irmetrics.ground.options.READ_BY`). ``False``: a count of the
        judgments or of the queries (``num_rel``, ``idcg``, ``num_q``,
        ``prefs_num_prefs_poss``) or a metric of the whole run's ranks (RecTools'
        ``covered_users``), beside which alone the two options are refused
        (:func:`~polars_irmetrics.door.evaluate.check_ranking_read`).
    unjudged
        Whether, without a cutoff ``@k``, the value reads where the run's unjudged
        documents stand. ``False``: it reads which judged documents the run retrieved
        (``recall``, ``num_rel_ret``, ``hit_rate``, ``cg``, ``num_nonrel_judged_ret``) or
        their order among themselves (``bpref``, ``gm_bpref``, ``fcp``), so ``judged_only``
        (which removes the unjudged documents) changes nothing there and is refused beside
        it alone (:meth:`reads_judged_only`); with a cutoff it cuts another top k.
    integer
        Whether the per-query value is a count (printed without decimals).
    aggregate
        How per-query values become one number by default: ``"mean"``, or
        ``"geometric"``: ``exp(mean(log(max(value, 0.00001))))`` (trec_eval's gm_map,
        gm_bpref; NaN where a per-query value is below 0, which has no logarithm: the
        floor is for values in [0, 1], and ``mcc(agg='geometric')`` of 1 and -1 read
        0.0032 before), or ``"sum"`` (a count of queries). A request may override it with
        ``agg=`` (:data:`AGGREGATES`: also ``"median"``, ``"min"``, ``"max"``, and
        ``"median_low"``, the lower middle value, as torchmetrics'
        ``aggregation="median"`` (``torch.median``), ``"std"``, the population
        standard deviation as ranx's ``return_std``, and ``"ci_halfwidth"``, the
        half-width of the normal confidence interval of the mean, RePlay's
        ``ConfidenceInterval``).
    formula
        The formula and its source, for the docs.
    latex
        The formula in LaTeX (no delimiters), rendered by the metric catalogue.
    reads
        The tables the metric reads (:data:`Input`), for the docs and for entry points
        that must say which table is missing.
    matches
        Reference implementations the values are tested against, each with the name
        there and the agreement (``{"trec_eval": "ndcg_cut_k, to 1e-9"}``), for the docs.
    collection
        For a metric of a whole recommendation table (:attr:`level` ``"collection"``):
        ``collection(scope, params) -> CollectionFormula``, the formula over the
        recommendations of one ``by`` group; ``compute`` then only raises an error that
        names the entry points that compute it. ``None`` for per-query metrics.
    kinds
        Values of the metric's ``kind`` parameter that another route computes, from
        other tables: ``kind -> (route, reads)``. ``serendipity(kind='kotkov')``
        (RecTools' Kotkov serendipity) reads the judgments beside the run and the
        interactions, so goes the ``"offline"`` route while ``serendipity`` is a
        beyond-accuracy (``"recsys"``) metric; :attr:`MetricRequest.route
        <polars_irmetrics.metrics.requests.MetricRequest.route>` reads it.
    wing
        The route that computes the metric where :attr:`reads` alone would name another
        one, or ``None``: Elliot's ``item_mad`` reads ``groups=`` as the exposure
        measures do, but is one value of the whole table, computed beside Elliot's other
        metrics (``"offline"``).
    whole
        Why ``agg=`` is refused where the route takes it: the metric is one value of
        the whole table (a ratio of sums, a difference of cluster means), with no
        per-query values to summarize (Elliot's ``pop_rsp``, ``pop_reo``, ``item_mad``,
        ``user_mad``); the parser's message gives it. ``None``: the route decides
        (:data:`SUMMARIZED_ROUTES`).
    histories
        Whether the metric reads each user's own history in the interactions (whether
        the user saw an item, the similarity of a list to the user's history, each
        user's training items left out), not only the items' popularity or the
        catalogue: RePlay's and Microsoft Recommenders' ``serendipity`` (and RecTools'
        ``serendipity(kind='kotkov')``), Elliot's ``pop_rsp`` and ``pop_reo``. A
        parameter value may make a metric read them where the metric does not
        (:attr:`Param.histories`: ``novelty(kind='replay')``). Read through the request
        (:attr:`MetricRequest.reads_histories
        <polars_irmetrics.metrics.requests.MetricRequest.reads_histories>`), whose
        :attr:`reads` must hold ``"interactions"``: the one warning of a history that
        lacks the recommendations' users names these metrics
        (:func:`~polars_irmetrics.ground.validate.warn_on_interactions`).
    check_params
        The parser's check across parameters and the cutoff,
        ``check_params(name, k, options)``: raises ``ValueError`` with the message to
        show (each parameter's own check is its :attr:`Param.check`), so the formula
        never raises on a parameter. ``None``: none.
    """

    name: str
    summary: str
    compute: Callable[[Scope, Params], pl.Expr]
    cutoff: CutoffRule = "optional"
    params: tuple[Param, ...] = ()
    aliases: tuple[Alias, ...] = ()
    higher_is_better: bool | None = True
    binary: bool = True
    threshold: bool = False
    ranking: bool = True
    unjudged: bool = True
    integer: bool = False
    aggregate: Aggregate = "mean"
    formula: str = ""
    latex: str = ""
    reads: tuple[Input, ...] = ("run", "judgments")
    matches: Mapping[str, str] = field(default_factory=dict)
    collection: Callable[[CollectionScope, Params], CollectionFormula] | None = None
    check_params: Callable[[str, int | None, Mapping[str, ParamValue]], None] | None = None
    kinds: Mapping[str, tuple[Route, tuple[Input, ...]]] = field(default_factory=dict)
    wing: Route | None = None
    whole: str | None = None
    histories: bool = False

    def __post_init__(self) -> None:
        """Refuse a direction that is not ``True``, ``False`` or ``None``: every reader
        of "better" tests it as a truth value or against ``None``, so ``"lower"`` (or
        ``1``) would be read higher-is-better and ``0`` lower, without a word.

        Examples
        --------
        >>> from polars_irmetrics.metrics.registry import get_metric
        >>> import dataclasses
        >>> dataclasses.replace(get_metric("logloss"), higher_is_better="lower")
        Traceback (most recent call last):
        ...
        polars_irmetrics.errors.MetricParameterError: metric 'logloss': higher_is_better='lower' is not a direction; it must be True (higher is better), False (lower is better) or None (neither)
        """  # noqa: E501
        if self.higher_is_better is not None and not isinstance(self.higher_is_better, bool):
            raise MetricParameterError(
                f"metric {self.name!r}: higher_is_better={self.higher_is_better!r} is not a "
                "direction; it must be True (higher is better), False (lower is better) or "
                "None (neither)"
            )

    @property
    def level(self) -> Level:
        """``"collection"`` for a metric of a whole recommendation table, else ``"query"``."""
        return "query" if self.collection is None else "collection"

    @property
    def route(self) -> Route:
        """The wing that computes this metric (:data:`Route`), from :attr:`level` and
        :attr:`reads`: the one rule every entry point, the comparison, the engines and
        the docs ask.

        Examples
        --------
        >>> from polars_irmetrics.metrics.registry import get_metric
        >>> [get_metric(n).route for n in ("ndcg", "coverage", "ctr", "auc", "map_avgjg")]
        ['offline', 'recsys', 'online', 'prediction', 'jg']
        """
        if self.wing is not None:
            return self.wing
        if self.level == "collection":
            return "recsys"
        for needed, route in _READ_ROUTES:
            if needed in self.reads:
                return route
        return "offline"

    def reads_judged_only(self, k: int | None) -> bool:
        """Whether ``judged_only`` (the run's unjudged documents removed) can change the
        metric's value at cutoff ``k``: it reads a ranking (:attr:`ranking`), and the
        unjudged documents' places (:attr:`unjudged`) or a top k they would share.

        >>> from polars_irmetrics.metrics.registry import get_metric
        >>> recall = get_metric("recall")
        >>> get_metric("bpref").reads_judged_only(None), recall.reads_judged_only(None)
        (False, False)
        >>> recall.reads_judged_only(5), get_metric("ndcg").reads_judged_only(None)
        (True, True)
        """
        return self.ranking and (self.unjudged or k is not None)

    def summarize(
        self, column: str, how: Aggregate | None = None, ci_level: float = CI_LEVEL
    ) -> pl.Expr:
        """The expression that summarizes the per-query values in ``column``.

        ``how`` overrides :attr:`aggregate`. Sums add the values one by one from the
        least (:func:`_ordered_sum`), so a mean comes out the same to the last bit
        whatever the order of the queries and however the engine splits the rows into
        batches. ``"std"`` is the population standard deviation (``ddof=0``, numpy's and
        ranx's); ``"median"`` averages the two middle values of an even count and
        ``"median_low"`` takes the lower one (``torch.median``, so torchmetrics'
        ``aggregation="median"``; Python's ``statistics.median_low``).
        ``"ci_halfwidth"`` is the half-width of the normal confidence interval of the
        mean at ``ci_level``, ``z * s / sqrt(n)`` with ``z`` the normal quantile of
        ``(1 + ci_level) / 2`` and ``s`` the sample standard deviation (``ddof=1``), 0
        for one value: RePlay's ``ConfidenceInterval(alpha=ci_level)`` on polars frames
        (the interval is the mean plus or minus it). With no query, a sum is 0 and
        every other summary null.

        Examples
        --------
        RePlay's descriptor test: per-user precision@5 of 1, 1 and 0.6, at its
        ``alpha=0.05`` (a 5% interval):

        >>> import polars as pl
        >>> from polars_irmetrics.metrics.registry import get_metric
        >>> values = pl.DataFrame({"p": [1.0, 1.0, 0.6]})
        >>> half = get_metric("precision").summarize("p", "ci_halfwidth", ci_level=0.05)
        >>> round(values.select(half).item(), 12)
        0.008360903726

        One value has no spread: its half-width is 0, as RePlay's (not NaN):

        >>> pl.DataFrame({"p": [0.5]}).select(half).item()
        0.0

        A geometric mean floors 0 at 0.00001 (trec_eval's gm_map), but a value below 0
        has no logarithm: NaN, not a number that reads as a mean (MCC of 1 and -1):

        >>> geo = get_metric("precision").summarize("m", "geometric")
        >>> pl.DataFrame({"m": [1.0, 0.0]}).select(geo).item()
        0.003162277660168379
        >>> pl.DataFrame({"m": [1.0, -1.0]}).select(geo).item()
        nan
        """
        how = self.aggregate if how is None else how
        values = pl.col(column).cast(pl.Float64).drop_nulls()
        if how == "geometric":  # a value below 0 has no logarithm: NaN, not the floor's
            floored = values.clip(lower_bound=MIN_GEO_MEAN).log()
            values = pl.when(values >= 0).then(floored).otherwise(float("nan"))
        total = _ordered_sum(values)
        mean = ordered_mean(values)
        # the spread from the same sums (polars' std adds in an order of its own, so an
        # engine's partitions could change its last bit): std's and ci_halfwidth's
        n = values.count().cast(pl.Float64)
        squares = _ordered_sum((values - mean).pow(2))
        if how == "sum":
            out = total.fill_null(0.0)
        elif how == "median":
            out = values.median()
        elif how == "median_low":  # torch.median: the lower of the two middle values
            out = values.quantile(0.5, interpolation="lower")
        elif how == "min":
            out = values.min()
        elif how == "max":
            out = values.max()
        elif how == "std":  # the population deviation
            out = pl.when(n > 0).then((squares / n).sqrt())
        elif how == "ci_halfwidth":  # from the sample variance
            z = two_sided_z(ci_level)
            spread = pl.when(n > 1).then((squares / (n - 1.0)).sqrt()).otherwise(0.0)
            out = pl.when(n > 0).then(z * spread / n.sqrt())
        elif how == "geometric":
            out = mean.exp()
        else:
            out = mean
        return out.alias(column)

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or ``None``."""
        for p in self.params:
            if p.name == name:
                return p
        return None
