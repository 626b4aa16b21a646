"""Off-policy evaluation: the value of a new policy estimated from a logged policy's log.

* :mod:`.evaluate`: :func:`~.evaluate.build_ope_plan`, the lazy plan
  :func:`polars_irmetrics.evaluate` runs for the metrics that read ``"policy"``
  (:mod:`polars_irmetrics.metrics.ope`: ``ips``, ``snips``, ``dm``, ``dr``, ``sndr``,
  ``switch_dr``, ``dr_os``, ``sg_ips``, ``sg_dr``): the log joined with the evaluation
  policy and the reward model, the data checks, and one aggregation.
"""

from __future__ import annotations
