"""The ``.irm`` namespace on ``pl.DataFrame`` and ``pl.LazyFrame``.

Thin, explicit classes: ``df.irm.evaluate(...)`` calls :func:`polars_irmetrics.evaluate`,
and each metric method (``df.irm.ndcg(k=10, qrels=qrels)``) returns the mean over
queries as a Python float (``nan`` when no query is evaluated). Registered when
``polars_irmetrics`` is imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal, TypedDict

import polars as pl

from .evaluate import Order, evaluate
from .registry import request
from .spec import ParamValue
from .validate import Policy

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["IrmFrameNamespace", "IrmLazyFrameNamespace"]


class EvaluateOptions(TypedDict, total=False):
    """Keyword arguments shared with :func:`polars_irmetrics.evaluate`."""

    qrels: pl.DataFrame | pl.LazyFrame | None
    order: Order
    depth: int | None
    unjudged: Policy
    unretrieved: Policy
    query_id: str
    doc_id: str
    rank: str
    score: str
    relevance: str


class _Namespace:
    def __init__(self, frame: pl.DataFrame | pl.LazyFrame) -> None:
        self._frame = frame

    def _plan(
        self,
        metrics: str | Iterable[str],
        by: str | Sequence[str] | None,
        per_query: bool,
        relevance_level: float,
        options: EvaluateOptions,
    ) -> pl.LazyFrame:
        return evaluate(
            self._frame.lazy(),
            metrics,
            by=by,
            per_query=per_query,
            relevance_level=relevance_level,
            **options,
        )

    def _mean(
        self,
        metric: str,
        k: int | None,
        relevance_level: float,
        options: EvaluateOptions,
        **params: ParamValue,
    ) -> float:
        name = request(metric, k=k, options=params).name
        value = self._plan([name], None, False, relevance_level, options).collect()[name][0]
        return float("nan") if value is None else float(value)

    def precision(
        self,
        k: int | None = None,
        *,
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean precision@k over queries; see :func:`polars_irmetrics.precision`."""
        return self._mean("precision", k, relevance_level, options)

    def recall(
        self,
        k: int | None = None,
        *,
        denominator: Literal["relevant", "capped"] = "relevant",
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean recall@k over queries; see :func:`polars_irmetrics.recall`."""
        return self._mean("recall", k, relevance_level, options, denominator=denominator)

    def f1(
        self,
        k: int | None = None,
        *,
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean F1@k over queries; see :func:`polars_irmetrics.f1`."""
        return self._mean("f1", k, relevance_level, options)

    def r_precision(
        self, *, relevance_level: float = 1, **options: Unpack[EvaluateOptions]
    ) -> float:
        """Mean R-precision over queries; see :func:`polars_irmetrics.r_precision`."""
        return self._mean("r_precision", None, relevance_level, options)

    def hit_rate(
        self,
        k: int | None = None,
        *,
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean hit rate@k (success@k); see :func:`polars_irmetrics.hit_rate`."""
        return self._mean("hit_rate", k, relevance_level, options)

    def mrr(
        self,
        k: int | None = None,
        *,
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
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
        return self._mean("mrr", k, relevance_level, options)

    def map(
        self,
        k: int | None = None,
        *,
        denominator: Literal["relevant", "capped", "retrieved"] = "relevant",
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean average precision (MAP@k); see :func:`polars_irmetrics.map`."""
        return self._mean("map", k, relevance_level, options, denominator=denominator)

    def ndcg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        ideal: Literal["judgments", "retrieved"] = "judgments",
        **options: Unpack[EvaluateOptions],
    ) -> float:
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
        return self._mean("ndcg", k, 1, options, gain=gain, ideal=ideal)

    def dcg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean DCG@k over queries; see :func:`polars_irmetrics.dcg`."""
        return self._mean("dcg", k, 1, options, gain=gain)

    def idcg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        ideal: Literal["judgments", "retrieved"] = "judgments",
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean ideal DCG@k over queries; see :func:`polars_irmetrics.idcg`."""
        return self._mean("idcg", k, 1, options, gain=gain, ideal=ideal)

    def cg(
        self,
        k: int | None = None,
        *,
        gain: Literal["linear", "exponential"] = "linear",
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean cumulative gain@k over queries; see :func:`polars_irmetrics.cg`."""
        return self._mean("cg", k, 1, options, gain=gain)

    def bpref(self, *, relevance_level: float = 1, **options: Unpack[EvaluateOptions]) -> float:
        """Mean bpref over queries; see :func:`polars_irmetrics.bpref`."""
        return self._mean("bpref", None, relevance_level, options)

    def num_ret(self, **options: Unpack[EvaluateOptions]) -> float:
        """Mean number of retrieved documents per query."""
        return self._mean("num_ret", None, 1, options)

    def num_rel(self, *, relevance_level: float = 1, **options: Unpack[EvaluateOptions]) -> float:
        """Mean number of relevant documents per query."""
        return self._mean("num_rel", None, relevance_level, options)

    def num_rel_ret(
        self,
        k: int | None = None,
        *,
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean number of relevant documents retrieved (in the top k) per query."""
        return self._mean("num_rel_ret", k, relevance_level, options)


@pl.api.register_dataframe_namespace("irm")
class IrmFrameNamespace(_Namespace):
    """``df.irm``: evaluate a run (or judged table) held in a DataFrame."""

    def __init__(self, df: pl.DataFrame) -> None:
        super().__init__(df)

    def evaluate(
        self,
        metrics: str | Iterable[str],
        *,
        by: str | Sequence[str] | None = None,
        per_query: bool = False,
        relevance_level: float = 1,
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
        return self._plan(metrics, by, per_query, relevance_level, options).collect()


@pl.api.register_lazyframe_namespace("irm")
class IrmLazyFrameNamespace(_Namespace):
    """``lf.irm``: evaluate a run held in a LazyFrame (e.g. ``pl.scan_parquet``)."""

    def __init__(self, lf: pl.LazyFrame) -> None:
        super().__init__(lf)

    def evaluate(
        self,
        metrics: str | Iterable[str],
        *,
        by: str | Sequence[str] | None = None,
        per_query: bool = False,
        relevance_level: float = 1,
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
        return self._plan(metrics, by, per_query, relevance_level, options)
