"""Off-policy evaluation: the value of a new policy estimated from a logged policy's log.

* :mod:`.evaluate`: :func:`~.evaluate.build_ope_plan`, the lazy plan
  :func:`polars_irmetrics.evaluate` runs for the metrics that read ``"policy"``
  (:mod:`polars_irmetrics.metrics.ope`: ``ips``, ``snips``, ``dm``, ``dr``, ``sndr``,
  ``switch_dr``, ``dr_os``, ``sg_ips``, ``sg_dr``): the log joined with the evaluation
  policy and the reward model, the data checks, and one aggregation.
* :mod:`.sums`: the estimates as exact sums (integers), so that they add up across
  parts of the log to the same bits.
* :mod:`.scale`: the rewards (and ``q_hat``) read times one power of two from the log's
  largest reward, so that small rewards lose no digit in those sums.
* :mod:`.parts`: out of core (``buckets=``) and the hook of the Spark and Dask engines
  (:mod:`polars_irmetrics.engines._ope`): sums per part of the rounds, merged.
"""

from __future__ import annotations
