"""Evaluate on Apache Spark: :func:`evaluate` takes and returns Spark DataFrames.

Needs the ``spark`` extra (``pip install 'polars_irmetrics[spark]'``); without it,
importing this module raises :class:`~polars_irmetrics.errors.MissingDependencyError`.
How the work divides: :mod:`polars_irmetrics.engines.spark`.
"""

from __future__ import annotations

from polars_irmetrics.engines.spark import evaluate

__all__ = ["evaluate"]
