"""Fairness of exposure: the plan of the expected-exposure measures and AWRF
(:mod:`polars_irmetrics.metrics.fairness`), reached through :func:`irm.evaluate`."""

from __future__ import annotations

from polars_irmetrics.exposure.plan import build_exposure_plan

__all__ = ["build_exposure_plan"]
