"""The ``.irm`` namespace on ``pl.DataFrame`` and ``pl.LazyFrame``.

Thin forwarding to the public functions: ``df.irm.evaluate(...)`` is
:func:`polars_irmetrics.evaluate`, ``df.irm.compare(...)`` :func:`polars_irmetrics.compare`
and ``df.irm.fuse(...)`` :func:`polars_irmetrics.fuse`, on the frame. Each metric method
(``df.irm.ndcg(k=10, qrels=qrels)``) evaluates the metric that the expression function
of the same name (:func:`polars_irmetrics.ndcg`) names, averaged over queries. The
frame's kind is kept:

* on a DataFrame, a metric method returns the mean as a Python float (``nan`` when no
  query is evaluated), and the others a DataFrame;
* on a LazyFrame, every method returns a LazyFrame and runs nothing: a metric method
  gives one row with one column named by the metric (null when no query is evaluated),
  computed when it is collected. Arguments are checked, and a missing column refused,
  when the method is called.

With ``per_query=True``, ``by=`` or ``systems=`` there is a value per query or per
group, not one number: a metric method then returns the frame of them (the keys and
the metric's column, as :func:`~polars_irmetrics.evaluate` gives them, without
``num_q``), a DataFrame on a DataFrame and a LazyFrame on a LazyFrame. The prediction
methods (``auc``, ``logloss``, ``rmse``...) take the columns they read and no such
option: they give the value of the whole frame; per group, use
:func:`~polars_irmetrics.evaluate` with ``by=`` or the expression in a ``group_by``.

Registered when ``polars_irmetrics`` is imported.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict, TypeVar, cast

import polars as pl

from polars_irmetrics.comparison.api import check_compare, compare
from polars_irmetrics.door.evaluate import Parsed, evaluate, evaluate_tables
from polars_irmetrics.errors import IrmError
from polars_irmetrics.expressions import _gains_text
from polars_irmetrics.fusion.fuse import fuse
from polars_irmetrics.ground.calls import checked_call
from polars_irmetrics.ground.inputs import FrameInput
from polars_irmetrics.ground.options import EvalKwargs
from polars_irmetrics.metrics.registry import MetricRequest, request
from polars_irmetrics.metrics.spec import ParamValue

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["IrmFrameNamespace", "IrmLazyFrameNamespace"]

#: What a metric method returns: a float on a DataFrame (a DataFrame of the values per
#: query or group with ``per_query``, ``by`` or ``systems``), a LazyFrame on a LazyFrame.
Mean = TypeVar("Mean", float | pl.DataFrame, pl.LazyFrame)


def _grouped(options: EvaluateOptions) -> bool:
    """Whether the evaluation gives a value per query or per group, not one number."""
    return bool(options.get("per_query") or options.get("by") or options.get("systems"))


#: :func:`polars_irmetrics.evaluate`'s tables: its keyword-only arguments.
_TABLES = tuple(
    name
    for name, parameter in inspect.signature(evaluate).parameters.items()
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY
)


def _metric(name: str, k: int | None = None, **params: ParamValue) -> MetricRequest:
    """The request of a metric method, built once from its keywords (as the expression
    function of the same name builds it); nothing parses its name again."""
    return request(name, k=k, options=params)


def _evaluate(
    frame: pl.DataFrame | pl.LazyFrame, metric: MetricRequest, options: EvaluateOptions
) -> pl.DataFrame | pl.LazyFrame:
    """:func:`polars_irmetrics.evaluate` of one built request: the tables of ``options``
    by keyword, the rest its options."""
    rest: dict[str, object] = dict(options)
    tables = {name: cast("FrameInput | None", rest.pop(name)) for name in _TABLES if name in rest}
    return evaluate_tables(frame, Parsed([(metric.name, metric)]), tables, rest)


class _Tables(TypedDict, total=False):
    qrels: FrameInput | None
    queries: FrameInput | None
    interactions: FrameInput | None
    item_features: FrameInput | None
    prefs: FrameInput | None
    qrels_jg: FrameInput | None
    labels: FrameInput | None
    neighbors: FrameInput | None


class EvaluateOptions(EvalKwargs, _Tables, total=False):
    """:func:`polars_irmetrics.evaluate`'s keyword arguments: its tables and its options
    (:class:`~polars_irmetrics.ground.options.EvalKwargs`, typed once)."""


class _Namespace(ABC, Generic[Mean]):
    """The metric methods, shared by both namespaces; :meth:`_mean` keeps the kind."""

    @abstractmethod
    def _mean(self, metric: MetricRequest, options: EvaluateOptions) -> Mean:
        """The mean over queries of ``metric``."""

    def precision(
        self,
        k: int | None = None,
        *,
        adaptive_k: bool = False,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean precision@k over queries; see :func:`polars_irmetrics.precision`."""
        return self._mean(_metric("precision", k, adaptive_k=adaptive_k), options)

    def recall(
        self,
        k: int | None = None,
        *,
        denominator: Literal["relevant", "capped"] = "relevant",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean recall@k over queries; see :func:`polars_irmetrics.recall`."""
        return self._mean(_metric("recall", k, denominator=denominator), options)

    def f1(
        self,
        k: int | None = None,
        *,
        beta: float = 1.0,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean F1@k (F-beta@k) over queries; see :func:`polars_irmetrics.f1`."""
        return self._mean(_metric("f1", k, beta=beta), options)

    def r_precision(
        self,
        k: int | None = None,
        *,
        denominator: Literal["relevant", "capped"] = "relevant",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean R-precision over queries (with ``k``, Microsoft Recommenders'
        ``r_precision_at_k``); see :func:`polars_irmetrics.r_precision`."""
        return self._mean(_metric("r_precision", k, denominator=denominator), options)

    def hit_rate(
        self,
        k: int | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean hit rate@k (success@k); see :func:`polars_irmetrics.hit_rate`."""
        return self._mean(_metric("hit_rate", k), options)

    def mrr(
        self,
        k: int | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean reciprocal rank (within the top k); see :func:`polars_irmetrics.mrr`.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> run = pl.DataFrame({"query_id": [1, 1, 2, 2], "doc_id": [1, 2, 3, 4],
        ...                     "rank": [1, 2, 1, 2], "relevance": [0, 1, 1, 0]})
        >>> run.irm.mrr()  # (1/2 + 1) / 2
        0.75
        """
        return self._mean(_metric("mrr", k), options)

    def map(
        self,
        k: int | None = None,
        *,
        denominator: Literal["relevant", "capped", "retrieved"] = "relevant",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean average precision (MAP@k); see :func:`polars_irmetrics.map`."""
        return self._mean(_metric("map", k, denominator=denominator), options)

    def ndcg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        ideal: Literal["judgments", "retrieved"] = "judgments",
        ties: Literal["break", "average"] = "break",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean nDCG@k over queries; see :func:`polars_irmetrics.ndcg`.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> run = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"],
        ...                     "score": [0.9, 0.8, 0.1]})
        >>> qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
        >>> run.irm.ndcg(k=10, qrels=qrels)
        1.0
        """
        return self._mean(_metric("ndcg", k, gain=gain, ideal=ideal, ties=ties), options)

    def dcg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        ties: Literal["break", "average"] = "break",
        log_base: float = 2,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean DCG@k over queries; see :func:`polars_irmetrics.dcg`."""
        return self._mean(_metric("dcg", k, gain=gain, ties=ties, log_base=log_base), options)

    def idcg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        ideal: Literal["judgments", "retrieved"] = "judgments",
        log_base: float = 2,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean ideal DCG@k over queries; see :func:`polars_irmetrics.idcg`."""
        return self._mean(_metric("idcg", k, gain=gain, ideal=ideal, log_base=log_base), options)

    def cg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean cumulative gain@k over queries; see :func:`polars_irmetrics.cg`."""
        return self._mean(_metric("cg", k, gain=gain), options)

    def bpref(self, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean bpref over queries; see :func:`polars_irmetrics.bpref`."""
        return self._mean(_metric("bpref"), options)

    def num_ret(self, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean number of retrieved documents per query."""
        return self._mean(_metric("num_ret"), options)

    def num_rel(self, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean number of relevant documents per query."""
        return self._mean(_metric("num_rel"), options)

    def num_rel_ret(
        self,
        k: int | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean number of relevant documents retrieved (in the top k) per query."""
        return self._mean(_metric("num_rel_ret", k), options)

    def err(
        self,
        k: int | None = None,
        *,
        max_grade: float = 4,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean expected reciprocal rank@k; see :func:`polars_irmetrics.err`."""
        return self._mean(_metric("err", k, max_grade=max_grade), options)

    def rbp(
        self,
        k: int | None = None,
        *,
        p: float = 0.8,
        gain: Literal["binary", "linear"] = "binary",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean rank-biased precision; see :func:`polars_irmetrics.rbp`."""
        return self._mean(_metric("rbp", k, p=p, gain=gain), options)

    def rbp_residual(
        self, k: int | None = None, *, p: float = 0.8, **options: Unpack[EvaluateOptions]
    ) -> Mean:
        """Mean RBP residual; see :func:`polars_irmetrics.rbp_residual`."""
        return self._mean(_metric("rbp_residual", k, p=p), options)

    def arhr(
        self,
        k: int | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Average reciprocal hit rank@k; see :func:`polars_irmetrics.arhr`."""
        return self._mean(_metric("arhr", k), options)

    def mar(self, k: int, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean average recall@k; see :func:`polars_irmetrics.mar`."""
        return self._mean(_metric("mar", k), options)

    def fcp(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean fraction of concordant pairs; see :func:`polars_irmetrics.fcp`."""
        return self._mean(_metric("fcp", k), options)

    def judged(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean share of the top k that is judged; see :func:`polars_irmetrics.judged`."""
        return self._mean(_metric("judged", k), options)

    def trec_ndcg(
        self,
        k: int | None = None,
        *,
        gains: str | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean nDCG@k with a gain per label; see :func:`polars_irmetrics.trec_ndcg`."""
        return self._mean(_metric("trec_ndcg", k, gains=_gains_text(gains)), options)

    def iprec(
        self,
        recall: float,
        *,
        rounding: Literal["truncate", "lround"] = "truncate",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean interpolated precision at a recall level; see :func:`polars_irmetrics.iprec`."""
        return self._mean(_metric("iprec", recall=recall, rounding=rounding), options)

    def relative_precision(
        self,
        k: int | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean relative precision@k; see :func:`polars_irmetrics.relative_precision`."""
        return self._mean(_metric("relative_precision", k), options)

    def rprec_mult(self, multiple: float, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean precision at a multiple of R; see :func:`polars_irmetrics.rprec_mult`."""
        return self._mean(_metric("rprec_mult", multiple=multiple), options)

    def infap(self, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean inferred AP; see :func:`polars_irmetrics.infap`."""
        return self._mean(_metric("infap"), options)

    def unjudged(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean share of the top k without a judgment; see :func:`polars_irmetrics.unjudged`."""
        return self._mean(_metric("unjudged", k), options)

    # ------------------------------------------------ the recommender libraries' (issue 42)
    def f1_beta(self, k: int, *, beta: float = 1.0, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean F-beta@k, beta squared (RecTools' F1Beta); see
        :func:`polars_irmetrics.f1_beta`."""
        return self._mean(_metric("f1_beta", k, beta=beta), options)

    def partial_auc(
        self,
        k: int,
        *,
        insufficient_handling: Literal["ignore", "exclude"] = "ignore",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean pAUC@k (RecTools' PartialAUC); see :func:`polars_irmetrics.partial_auc`."""
        metric = _metric("partial_auc", k, insufficient_handling=insufficient_handling)
        return self._mean(metric, options)

    def pap(
        self,
        k: int,
        *,
        insufficient_handling: Literal["ignore", "exclude"] = "ignore",
        **options: Unpack[EvaluateOptions],
    ) -> Mean:
        """Mean pAp@k (RecTools' PAP); see :func:`polars_irmetrics.pap`."""
        return self._mean(_metric("pap", k, insufficient_handling=insufficient_handling), options)

    def ncrr(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean NCRR@k (cornac's); see :func:`polars_irmetrics.ncrr`."""
        return self._mean(_metric("ncrr", k), options)

    def rocauc(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> Mean:
        """Mean RocAuc@k (RePlay's); see :func:`polars_irmetrics.rocauc`."""
        return self._mean(_metric("rocauc", k), options)

    # ------------------------------------------------------------ prediction quality
    def _prediction(
        self,
        metric: str,
        label: str,
        prediction: str,
        sample_weight: str | None,
        positive_label: float | str = 1,
        query_id: str = "query_id",
        k: int | None = None,
        **params: ParamValue,
    ) -> Mean:
        built = _metric(metric, k, **params)
        options: EvaluateOptions = {
            "label": label,
            "prediction": prediction,
            "sample_weight": sample_weight,
            "positive_label": positive_label,
            "query_id": query_id,
        }
        return self._mean(built, options)

    def auc(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """ROC AUC of the rows (checked); see :func:`polars_irmetrics.auc`.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> log = pl.DataFrame({"clicked": [1, 0, 1, 0], "p": [0.9, 0.4, 0.4, 0.1]})
        >>> log.irm.auc("clicked", "p")  # one tie: 3.5 of 4 pairs
        0.875
        """
        return self._prediction("auc", label, prediction, sample_weight, positive_label)

    def pr_auc(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """Average precision of the rows; see :func:`polars_irmetrics.pr_auc`."""
        return self._prediction("pr_auc", label, prediction, sample_weight, positive_label)

    def gauc(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        query_id: str = "query_id",
        weighting: Literal["rows", "uniform"] = "rows",
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """Group AUC over the queries (users); see :func:`polars_irmetrics.gauc`."""
        return self._prediction(
            "gauc", label, prediction, sample_weight, positive_label, query_id, weighting=weighting
        )

    def logloss(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """Log loss of the rows; see :func:`polars_irmetrics.logloss`."""
        return self._prediction("logloss", label, prediction, sample_weight, positive_label)

    def ne(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """Normalised entropy of the rows; see :func:`polars_irmetrics.ne`."""
        return self._prediction("ne", label, prediction, sample_weight, positive_label)

    def brier(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """Brier score of the rows; see :func:`polars_irmetrics.brier`."""
        return self._prediction("brier", label, prediction, sample_weight, positive_label)

    def calibration(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """Predicted over observed positives; see :func:`polars_irmetrics.calibration`."""
        return self._prediction("calibration", label, prediction, sample_weight, positive_label)

    def ece(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        bins: int = 10,
        sample_weight: str | None = None,
        positive_label: float | str = 1,
    ) -> Mean:
        """Expected calibration error in equal-width bins; see :func:`polars_irmetrics.ece`."""
        return self._prediction("ece", label, prediction, sample_weight, positive_label, k=bins)

    def rmse(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
    ) -> Mean:
        """Root mean squared error; see :func:`polars_irmetrics.rmse`."""
        return self._prediction("rmse", label, prediction, sample_weight)

    def mse(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
    ) -> Mean:
        """Mean squared error; see :func:`polars_irmetrics.mse`."""
        return self._prediction("mse", label, prediction, sample_weight)

    def mae(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
    ) -> Mean:
        """Mean absolute error; see :func:`polars_irmetrics.mae`."""
        return self._prediction("mae", label, prediction, sample_weight)

    def r2(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
    ) -> Mean:
        """Coefficient of determination; see :func:`polars_irmetrics.r2`."""
        return self._prediction("r2", label, prediction, sample_weight)

    def explained_variance(
        self,
        label: str = "label",
        prediction: str = "prediction",
        *,
        sample_weight: str | None = None,
    ) -> Mean:
        """Explained variance; see :func:`polars_irmetrics.explained_variance`."""
        return self._prediction("explained_variance", label, prediction, sample_weight)


@pl.api.register_dataframe_namespace("irm")
class IrmFrameNamespace(_Namespace[float | pl.DataFrame]):
    """``df.irm``: evaluate a run (or judged table) held in a DataFrame.

    Metric methods return the mean over queries as a float (``nan`` when no query is
    evaluated); the other methods return DataFrames.
    """

    def __init__(self, df: pl.DataFrame) -> None:
        self._frame = df

    def _mean(self, metric: MetricRequest, options: EvaluateOptions) -> float | pl.DataFrame:
        name = metric.name
        value = cast("pl.DataFrame", _evaluate(self._frame, metric, options))
        if _grouped(options):  # a value per query or group: the keys and the values
            return value.drop("num_q", strict=False)
        mean = value[name].item()
        return float("nan") if mean is None else float(mean)

    def evaluate(
        self,
        metrics: str | Iterable[str],
        **options: Unpack[EvaluateOptions],
    ) -> pl.DataFrame:
        """Evaluate this frame; see :func:`polars_irmetrics.evaluate`.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> judged = pl.DataFrame({"query_id": ["a", "a", "b"], "doc_id": [1, 2, 1],
        ...                        "rank": [1, 2, 1], "relevance": [0, 1, 1]})
        >>> judged.irm.evaluate(["P@1", "mrr"], per_query=True)
        shape: (2, 3)
        ┌──────────┬─────┬─────┐
        │ query_id ┆ P@1 ┆ mrr │
        │ ---      ┆ --- ┆ --- │
        │ str      ┆ f64 ┆ f64 │
        ╞══════════╪═════╪═════╡
        │ a        ┆ 0.0 ┆ 0.5 │
        │ b        ┆ 1.0 ┆ 1.0 │
        └──────────┴─────┴─────┘
        """
        return evaluate(self._frame, metrics, **options)

    def compare(
        self, metrics: str | Iterable[str], *, system: str = "system", **options: Any
    ) -> pl.DataFrame:
        """Compare the systems of this long frame; see :func:`polars_irmetrics.compare`.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> judged = pl.DataFrame({"run": ["a", "a", "b", "b"], "query_id": [1, 2, 1, 2],
        ...                        "doc_id": [1, 1, 1, 1], "rank": [1, 1, 1, 1],
        ...                        "relevance": [1, 0, 1, 1]})
        >>> judged.irm.compare("P@1", qrels=None, system="run")["delta"].item()
        0.5
        """
        return compare(self._frame, metrics, system=system, **options)

    def fuse(self, method: str = "rrf", *, system: str, **options: Any) -> pl.DataFrame:
        """Fuse the runs of this long frame (one run per ``system`` value); see
        :func:`polars_irmetrics.fuse`.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> runs = pl.DataFrame({"run": ["a", "a", "b"], "query_id": "q",
        ...                      "doc_id": ["x", "y", "y"],
        ...                      "score": [2.0, 1.0, 5.0]})
        >>> runs.irm.fuse("sum", system="run")["doc_id"].to_list()
        ['y', 'x']
        """
        return cast(pl.DataFrame, fuse(self._frame, method, system=system, **options))


@pl.api.register_lazyframe_namespace("irm")
class IrmLazyFrameNamespace(_Namespace[pl.LazyFrame]):
    """``lf.irm``: evaluate a run held in a LazyFrame (e.g. ``pl.scan_parquet``).

    Lazy in, lazy out: every method returns a LazyFrame and nothing runs before it is
    collected. A metric method gives one row with the mean over queries in one column
    named by the metric (null when no query is evaluated).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> run = pl.LazyFrame({"query_id": [1, 1, 2], "doc_id": [7, 8, 7],
    ...                     "rank": [1, 2, 1], "relevance": [0, 1, 1]})
    >>> mean = run.irm.mrr()  # a plan: nothing has run yet
    >>> mean.collect()
    shape: (1, 1)
    ┌──────┐
    │ mrr  │
    │ ---  │
    │ f64  │
    ╞══════╡
    │ 0.75 │
    └──────┘
    >>> import math
    >>> value = run.irm.ndcg(k=10).collect().item()
    >>> math.isclose(value, (1 / math.log2(3) + 1) / 2)  # q1 finds its document at rank 2
    True
    """

    def __init__(self, lf: pl.LazyFrame) -> None:
        self._frame = lf

    def _mean(self, metric: MetricRequest, options: EvaluateOptions) -> pl.LazyFrame:
        name = metric.name
        plan = cast("pl.LazyFrame", _evaluate(self._frame, metric, options))
        if _grouped(options):  # a value per query or group: the keys and the values
            return plan.drop("num_q", strict=False)
        return plan.select(name)

    def evaluate(
        self,
        metrics: str | Iterable[str],
        **options: Unpack[EvaluateOptions],
    ) -> pl.LazyFrame:
        """Evaluate this LazyFrame; lazy in, lazy out. See :func:`polars_irmetrics.evaluate`.

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> lf = pl.LazyFrame({"query_id": [1, 1], "doc_id": [7, 8], "rank": [1, 2],
        ...                    "relevance": [0, 1]})
        >>> lf.irm.evaluate(["P@2"]).collect()["P@2"].item()
        0.5
        """
        return evaluate(self._frame, metrics, **options)

    def compare(
        self, metrics: str | Iterable[str], *, system: str = "system", **options: Any
    ) -> pl.LazyFrame:
        """Compare the systems of this long LazyFrame; see :func:`polars_irmetrics.compare`.

        Lazy in, lazy out: the comparison runs (once) when the result is collected, or
        when its schema is asked for. The arguments are checked when this is called;
        an error of the rows (a run :func:`~polars_irmetrics.evaluate` refuses) is
        raised by ``collect()`` (a schema asked for first is then empty).

        Examples
        --------
        >>> import polars as pl
        >>> import polars_irmetrics as irm
        >>> judged = pl.LazyFrame({"run": ["a", "a", "b", "b"], "query_id": [1, 2, 1, 2],
        ...                        "doc_id": [1, 1, 1, 1], "rank": [1, 1, 1, 1],
        ...                        "relevance": [1, 0, 1, 1]})
        >>> judged.irm.compare("P@1", qrels=None, system="run").collect()["delta"].item()
        0.5
        """
        check_compare(self._frame, metrics, system=system, **options)
        once = _Once(lambda: compare(self._frame, metrics, system=system, **options))
        return pl.defer(once, schema=once.schema)

    def fuse(self, method: str = "rrf", *, system: str, **options: Any) -> pl.LazyFrame:
        """Fuse the runs of this long LazyFrame; lazy in, lazy out. See
        :func:`polars_irmetrics.fuse`.

        The fused run is a plan; only the ``system`` column's distinct values are read
        when this is called (they order the runs, as ``weights`` does).
        """
        return cast(pl.LazyFrame, fuse(self._frame, method, system=system, **options))


@dataclass
class _Once:
    """A frame made on first use and kept: :func:`polars.defer` asks for the schema
    and then for the frame, and both come from one run."""

    make: Callable[[], pl.DataFrame]
    made: list[pl.DataFrame] = field(default_factory=list)
    failed: list[IrmError] = field(default_factory=list)

    def __call__(self) -> pl.DataFrame:
        if self.failed:  # raised here, where polars passes the error on as it is
            raise self.failed[0]
        if not self.made:
            self.made.append(self.make())
        return self.made[0]

    def schema(self) -> pl.Schema:
        """The frame's schema; where making it fails, none (polars wraps an error
        raised here in its own): the error is raised when the frame is asked for."""
        try:
            return self().schema
        except IrmError as error:
            self.failed.append(error)
            return pl.Schema()


# every public method, its arguments checked against its declaration as the exported
# functions' are (polars_irmetrics/__init__.py, ground.calls): df.irm.ndcg(10, 20) is an
# ArgumentError naming the method, never Python's own TypeError
for _space, _shown in ((IrmFrameNamespace, "df.irm"), (IrmLazyFrameNamespace, "lf.irm")):
    for _name, _method in inspect.getmembers(_space, inspect.isfunction):
        if not _name.startswith("_"):
            _checked = checked_call(_method, f"{_shown}.{_name}")
            _checked.__qualname__ = f"{_space.__qualname__}.{_name}"  # pickle finds it
            setattr(_space, _name, _checked)
del _space, _shown, _name, _method, _checked
