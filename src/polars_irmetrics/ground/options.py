"""The options of one evaluation, carried as one object from the entry points to the plan.

:func:`~polars_irmetrics.evaluate` (and every engine and capability built on it:
comparison, fusion, Spark, Dask) takes its options as keyword arguments and packs them
into one :class:`EvalOptions`, which :func:`~polars_irmetrics.offline.plan.build_plan`
reads. Values are checked when the plan is built, not here, so that a bad value gets
the same error from every entry point.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from polars_irmetrics.ground.buckets import Buckets
from polars_irmetrics.ground.validate import Policy

__all__ = ["EvalOptions", "Order", "Unmatched"]

Order = Literal["auto", "rank", "score"]
Unmatched = Literal["error", "drop"]


@dataclass(frozen=True)
class EvalOptions:
    """Everything :func:`~polars_irmetrics.evaluate` takes besides the run, the metrics
    and the judgments; the fields and defaults are its keyword arguments'.

    Examples
    --------
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> options = EvalOptions(by="system", query_id="qid")
    >>> options.by_keys, options.replace(per_query=True).per_query
    (('system',), True)
    """

    by: str | Sequence[str] | None = None
    per_query: bool = False
    order: Order = "auto"
    relevance_level: float = 1
    depth: int | None = None
    unjudged: Policy = "drop"
    unretrieved: Policy = "zero"
    check_duplicates: bool = True
    buckets: Buckets = "auto-memory"
    spill_dir: str | Path | None = None
    memory_limit: int | str | None = None
    explain: bool = False
    partitioned_by: str | None = None
    query_id: str = "query_id"
    doc_id: str = "doc_id"
    rank: str = "rank"
    score: str = "score"
    relevance: str = "relevance"
    label: str = "label"
    prediction: str = "prediction"
    sample_weight: str | None = None
    positive_label: int | float | str = 1
    unmatched: Unmatched = "error"

    @property
    def by_keys(self) -> tuple[str, ...]:
        """``by`` as a tuple of column names (empty without ``by``)."""
        by = self.by
        return (by,) if isinstance(by, str) else tuple(by or ())

    def replace(self, **changes: Any) -> EvalOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)
