"""Beyond accuracy for recommenders: coverage, novelty, diversity, serendipity and
popularity bias of a recommendation table, in one lazy polars plan.

* :mod:`.evaluate`: :func:`~polars_irmetrics.beyond_accuracy`, and the hook that puts
  these metrics next to accuracy metrics in :func:`~polars_irmetrics.evaluate`.
* :mod:`.plan`: the plan (popularity joins, per-user vector sums for pairwise and
  history similarity, two group-bys).
* :mod:`.vectors`: per-group vector sums, and pairwise similarity from them.
* :mod:`.checks`: the input checks, raised when the plan runs.
* :mod:`.options`: the options and tables of one evaluation, as two objects.

The metrics themselves are declared in the one registry,
:mod:`polars_irmetrics.metrics.recsys`.
"""
