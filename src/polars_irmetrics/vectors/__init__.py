"""Vector search: exact nearest neighbours from embedding columns, and the recall of an
approximate index against them.

:func:`~polars_irmetrics.vectors.knn.knn` is a numpy kernel over blocks of the corpus
(a run to evaluate); :mod:`polars_irmetrics.vectors.neighbors` builds the plan of the
``neighbors`` metrics (``neighbor_recall@k``).
"""

from __future__ import annotations

from polars_irmetrics.vectors.knn import knn

__all__ = ["knn"]
