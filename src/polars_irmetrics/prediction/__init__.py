"""Prediction quality of a click or rating model: AUC, group AUC, log loss, normalised
entropy, calibration, rating errors.

* :mod:`.expressions`: the public expressions (``irm.auc(label=..., prediction=...)``),
  one aggregation each, usable in any ``group_by``.
* :mod:`.evaluate`: :func:`~.evaluate.build_prediction_plan`, the lazy plan
  :func:`polars_irmetrics.evaluate` runs for metrics that read ``"predictions"``: checks,
  per-query values, group AUC, and the two-table form (predictions and labels joined on
  ``query_id`` and ``doc_id``).
* :mod:`.ranges`: ``auc`` and ``pr_auc`` out of core (``buckets=``), exactly, by score
  ranges written to disk and read one at a time.
* :mod:`.parts`: per-part sums and score histograms that merge into the means (the
  Spark and Dask engines).
"""

from __future__ import annotations
