"""Fusion: combine runs (RRF, CombSUM/MNZ, weighted sums, Borda, Condorcet, trained
fusions) in one lazy plan, and tune their weights against judgments.

Modules by job: :mod:`.norms` (per-query normalisations), :mod:`.methods` (the
registry of methods and their formulas), :mod:`.frame` (runs in, run out, checks),
:mod:`.fuse` (:func:`fuse`), :mod:`.train` (:func:`fit_fusion`), :mod:`.optimize`
(:func:`optimize_fusion`).
"""

from __future__ import annotations

from polars_irmetrics.fusion.fuse import fuse
from polars_irmetrics.fusion.methods import get_fusion_method, list_fusion_methods
from polars_irmetrics.fusion.norms import NORMS
from polars_irmetrics.fusion.options import FusionOptions

__all__ = ["NORMS", "FusionOptions", "fuse", "get_fusion_method", "list_fusion_methods"]
