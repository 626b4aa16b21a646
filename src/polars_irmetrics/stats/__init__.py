"""Statistics shared by comparison (:mod:`polars_irmetrics.compare`) and A/B tests
(:mod:`polars_irmetrics.online`): vectorised in numpy over per-query or per-unit
matrices, never a Python loop per query, system or resample.

* :mod:`.multitest`: multiple-testing corrections (statsmodels' names and arithmetic).
* :mod:`.normal`: the normal quantile of a two-sided interval, for every level in (0, 1).
"""
