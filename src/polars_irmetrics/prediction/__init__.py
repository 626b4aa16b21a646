"""Prediction quality of a click or rating model: AUC, group AUC, log loss, normalised
entropy, calibration, rating errors.

* :mod:`.expressions`: the public expressions (``irm.auc(label=..., prediction=...)``),
  one aggregation each, usable in any ``group_by``.
* :mod:`.evaluate`: :func:`~.evaluate.build_prediction_plan`, the lazy plan
  :func:`polars_irmetrics.evaluate` runs for metrics that read ``"predictions"``: checks,
  per-query values, group AUC, and the two-table form (predictions and labels joined on
  ``query_id`` and ``doc_id``).
"""

from __future__ import annotations
