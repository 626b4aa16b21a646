"""Evaluate on Dask: :func:`evaluate` takes Dask DataFrames and returns a lazy one.

Needs the ``dask`` extra (``pip install 'polars_irmetrics[dask]'``); without it,
importing this module raises :class:`~polars_irmetrics.errors.MissingDependencyError`.
How the work divides: :mod:`polars_irmetrics.engines.dask`.
"""

from __future__ import annotations

from polars_irmetrics.engines.dask import evaluate

__all__ = ["evaluate"]
