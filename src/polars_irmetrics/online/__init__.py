"""Online evaluation of an impression log: click metrics, A/B tests, interleaving.

* :mod:`.evaluate`: the per-segment plan of click metrics behind
  :func:`~polars_irmetrics.evaluate_online` (:mod:`polars_irmetrics.door.online`).
* :mod:`.expressions`: :func:`click_metric`, one click metric as a polars expression.
* :mod:`.ab`: :func:`ab_test`, arms compared at the randomization unit.
* :mod:`.interleaving`: :func:`interleaving_test`, team-draft interleaving credit.
* :mod:`.sessions`: the per-session plan and data checks they share.
* :mod:`.columns`: :class:`LogColumns`, the log's column names as one object.
"""

from __future__ import annotations

from polars_irmetrics.online.columns import LogColumns

__all__ = ["LogColumns"]
