"""Agreement between rankings: the plans of the rank-similarity metrics.

``irm.evaluate(run, ["rbo(p=0.9)", "jaccard@10", "kendall_tau@10"], reference=other)``
routes here (:func:`~polars_irmetrics.agreement.plan.build_agreement_plan`); the
metrics are declared in :mod:`polars_irmetrics.metrics.agreement`, RBO with tie groups
is :mod:`polars_irmetrics.agreement.rbo`.
"""

from __future__ import annotations

from polars_irmetrics.agreement.plan import build_agreement_plan

__all__ = ["build_agreement_plan"]
