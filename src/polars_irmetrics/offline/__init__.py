"""The offline wing: a run and relevance judgments to per-query metric values.

* :mod:`.plan`: the one lazy polars plan (the judged rows, positions, one group-by).
* :mod:`.setup`: the arguments resolved against the tables' schemas.
* :mod:`.checks`: the data checks, counted inside the plan.
* :mod:`.columns`: the plan's internal column names.
* :mod:`.attributes`: attributes of the query from ``queries=``.
* :mod:`.prefs`: trec_eval's preference measures (``-R prefs``).
"""
