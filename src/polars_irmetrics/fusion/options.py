"""The options of one fusion, carried as one object from the entry points to the plan."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

__all__ = ["FusionOptions", "Weights"]

#: Run weights: one per run in the runs' order, or by run name.
Weights = Sequence[float] | Mapping[str, float]


@dataclass(frozen=True)
class FusionOptions:
    """Everything :func:`~polars_irmetrics.fuse` takes besides the runs.

    Examples
    --------
    >>> from polars_irmetrics.fusion.options import FusionOptions
    >>> options = FusionOptions(method="wsum", norm="min-max", weights=(0.7, 0.3))
    >>> options.replace(method="mnz").method, options.params
    ('mnz', {})
    """

    method: str = "rrf"
    norm: str | None = None
    weights: Weights | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    depth: int | None = None
    fitted: pl.DataFrame | pl.LazyFrame | None = None
    sort: bool = True
    buckets: int | str | None = None
    spill_dir: str | Path | None = None
    progress: bool | None = None
    system: str | None = None
    query_id: str = "query_id"
    doc_id: str = "doc_id"
    score: str = "score"
    rank: str = "rank"

    def replace(self, **changes: Any) -> FusionOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)
