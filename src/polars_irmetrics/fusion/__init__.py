"""Fusion: combine runs (RRF, CombSUM/MNZ, weighted sums, Borda, Condorcet, trained
fusions) in one lazy plan, and tune their parameters against judgments.

Modules by job: :mod:`.norms` (per-query normalisations), :mod:`.methods` (the
registry of methods, their formulas and papers), :mod:`.frame` (runs in, run out,
data checks), :mod:`.fuse` (:func:`fuse`), :mod:`.train` (:func:`fit_fusion`),
:mod:`.optimize` (:func:`optimize_fusion`), :mod:`.options` (:class:`FusionOptions`).
"""

from __future__ import annotations

from polars_irmetrics.fusion.fuse import fuse
from polars_irmetrics.fusion.methods import (
    describe_fusion_methods,
    get_fusion_method,
    list_fusion_methods,
)
from polars_irmetrics.fusion.norms import NORMS
from polars_irmetrics.fusion.optimize import optimize_fusion
from polars_irmetrics.fusion.options import FusionOptions
from polars_irmetrics.fusion.train import fit_fusion

__all__ = [
    "NORMS",
    "FusionOptions",
    "describe_fusion_methods",
    "fit_fusion",
    "fuse",
    "get_fusion_method",
    "list_fusion_methods",
    "optimize_fusion",
]
