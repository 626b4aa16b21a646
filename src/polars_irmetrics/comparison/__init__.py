"""Comparing systems: paired significance tests, corrections, intervals, reports, plots.

* :func:`compare` (``irm.compare``): one row per metric and comparison
  (:mod:`~polars_irmetrics.comparison.api`), from per-query values evaluated in one plan
  (:mod:`~polars_irmetrics.comparison.frame`) and statistics vectorised over every
  comparison at once (:mod:`~polars_irmetrics.comparison.paired`).
* :func:`system_agreement` (``irm.system_agreement``): whether two evaluations order the
  systems alike: correlation of the means, swaps and significant swaps
  (:mod:`~polars_irmetrics.comparison.agreement`).
* :func:`reproducibility` (``irm.reproducibility``): repro_eval's measures of an
  original and a reproduced pair of runs
  (:mod:`~polars_irmetrics.comparison.reproducibility`).
* :func:`tukey_hsd` (``irm.tukey_hsd``): Tukey's HSD over all systems
  (:mod:`~polars_irmetrics.comparison.tukey`).
* :mod:`~polars_irmetrics.comparison.record`: the options and per-query values
  ``compare`` remembers for the frame it returns (for reports).
* :mod:`~polars_irmetrics.comparison.report`: terminal, Markdown, LaTeX tables.
* :mod:`~polars_irmetrics.comparison.publish`: ``irm.report``, the great_tables HTML
  table and the self-contained HTML page with the plots (the ``report`` extra).
* :mod:`~polars_irmetrics.comparison.plot`: matplotlib figures (the ``plot`` extra).

The folder is ``comparison`` rather than ``compare`` so that the function
``irm.compare`` does not shadow a subpackage of the same name.
"""

from __future__ import annotations

from polars_irmetrics.comparison.agreement import system_agreement
from polars_irmetrics.comparison.api import compare
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.reproducibility import reproducibility
from polars_irmetrics.comparison.tukey import tukey_hsd

__all__ = ["CompareOptions", "compare", "reproducibility", "system_agreement", "tukey_hsd"]
