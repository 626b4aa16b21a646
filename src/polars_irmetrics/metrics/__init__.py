"""Every metric, declared once: its formula, parameters, aliases and conventions.

One module per family; each declares a tuple of :class:`~polars_irmetrics.spec.Metric`
and this package joins them into :data:`METRICS`, which the registry reads:

* :mod:`.core`: precision, recall, F1, R-precision, hit rate, MRR, MAP, nDCG, DCG,
  IDCG, CG, bpref and the counts.

Each formula is one polars aggregation over the judged rows of one query (see
:class:`polars_irmetrics.scope.Scope`); shared building blocks live in
:mod:`._common`.
"""

from __future__ import annotations

from polars_irmetrics.spec import Metric

from .core import CORE_METRICS

__all__ = ["METRICS"]

METRICS: tuple[Metric, ...] = (*CORE_METRICS,)
