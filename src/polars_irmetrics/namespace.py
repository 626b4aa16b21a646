"""The ``.irm`` namespace on ``pl.DataFrame`` and ``pl.LazyFrame``.

Thin, explicit classes: ``df.irm.evaluate(...)`` calls :func:`polars_irmetrics.evaluate`,
and each metric method (``df.irm.ndcg(k=10, qrels=qrels)``) returns the mean over
queries as a Python float (``nan`` when no query is evaluated). Registered when
``polars_irmetrics`` is imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

import polars as pl

from polars_irmetrics.comparison.api import compare
from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.fusion.fuse import fuse
from polars_irmetrics.ground.buckets import Buckets
from polars_irmetrics.ground.inputs import FrameInput
from polars_irmetrics.ground.options import Order
from polars_irmetrics.ground.validate import Policy
from polars_irmetrics.metrics.registry import request
from polars_irmetrics.metrics.spec import ParamValue

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["IrmFrameNamespace", "IrmLazyFrameNamespace"]


class EvaluateOptions(TypedDict, total=False):
    """Keyword arguments shared with :func:`polars_irmetrics.evaluate`."""

    qrels: FrameInput | None
    neighbors: FrameInput | None
    order: Order
    depth: int | None
    unjudged: Policy
    unretrieved: Policy
    check_duplicates: bool
    buckets: Buckets
    spill_dir: str | Path | None
    memory_limit: int | str | None
    explain: bool
    partitioned_by: str | None
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

    def err(
        self,
        k: int | None = None,
        *,
        max_grade: float = 4,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean expected reciprocal rank@k; see :func:`polars_irmetrics.err`."""
        return self._mean("err", k, 1, options, max_grade=max_grade)

    def rbp(
        self,
        k: int | None = None,
        *,
        p: float = 0.8,
        gain: Literal["binary", "linear"] = "binary",
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean rank-biased precision; see :func:`polars_irmetrics.rbp`."""
        return self._mean("rbp", k, relevance_level, options, p=p, gain=gain)

    def rbp_residual(
        self, k: int | None = None, *, p: float = 0.8, **options: Unpack[EvaluateOptions]
    ) -> float:
        """Mean RBP residual; see :func:`polars_irmetrics.rbp_residual`."""
        return self._mean("rbp_residual", k, 1, options, p=p)

    def arhr(
        self,
        k: int | None = None,
        *,
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Average reciprocal hit rank@k; see :func:`polars_irmetrics.arhr`."""
        return self._mean("arhr", k, relevance_level, options)

    def mar(
        self, k: int, *, relevance_level: float = 1, **options: Unpack[EvaluateOptions]
    ) -> float:
        """Mean average recall@k; see :func:`polars_irmetrics.mar`."""
        return self._mean("mar", k, relevance_level, options)

    def fcp(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> float:
        """Mean fraction of concordant pairs; see :func:`polars_irmetrics.fcp`."""
        return self._mean("fcp", k, 1, options)

    def judged(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> float:
        """Mean share of the top k that is judged; see :func:`polars_irmetrics.judged`."""
        return self._mean("judged", k, 1, options)

    def trec_ndcg(
        self,
        k: int | None = None,
        *,
        gains: str | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean nDCG@k with a gain per label; see :func:`polars_irmetrics.trec_ndcg`."""
        return self._mean("trec_ndcg", k, 1, options, gains=gains)

    def iprec(
        self, recall: float, *, relevance_level: float = 1, **options: Unpack[EvaluateOptions]
    ) -> float:
        """Mean interpolated precision at a recall level; see :func:`polars_irmetrics.iprec`."""
        return self._mean("iprec", None, relevance_level, options, recall=recall)

    def relative_precision(
        self,
        k: int | None = None,
        *,
        relevance_level: float = 1,
        **options: Unpack[EvaluateOptions],
    ) -> float:
        """Mean relative precision@k; see :func:`polars_irmetrics.relative_precision`."""
        return self._mean("relative_precision", k, relevance_level, options)

    def rprec_mult(
        self, multiple: float, *, relevance_level: float = 1, **options: Unpack[EvaluateOptions]
    ) -> float:
        """Mean precision at a multiple of R; see :func:`polars_irmetrics.rprec_mult`."""
        return self._mean("rprec_mult", None, relevance_level, options, multiple=multiple)

    def infap(self, *, relevance_level: float = 1, **options: Unpack[EvaluateOptions]) -> float:
        """Mean inferred AP; see :func:`polars_irmetrics.infap`."""
        return self._mean("infap", None, relevance_level, options)

    def unjudged(self, k: int | None = None, **options: Unpack[EvaluateOptions]) -> float:
        """Mean share of the top k without a judgment; see :func:`polars_irmetrics.unjudged`."""
        return self._mean("unjudged", k, 1, options)


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
        >>> judged.lazy().irm.compare("P@1", qrels=None, system="run")["delta"].item()
        0.5
        """
        return compare(self._frame, metrics, system=system, **options)

    def fuse(self, method: str = "rrf", *, system: str, **options: Any) -> pl.LazyFrame:
        """Fuse the runs of this long LazyFrame; lazy in, lazy out. See
        :func:`polars_irmetrics.fuse`."""
        out = fuse(self._frame, method, system=system, **options)
        return out.lazy()
