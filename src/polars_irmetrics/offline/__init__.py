"""The offline wing: a run and relevance judgments to per-query metric values.

* :mod:`.plan`: the one lazy polars plan (the judged rows, positions, one group-by).
* :mod:`.prefs`: trec_eval's preference measures (``-R prefs``).
"""
