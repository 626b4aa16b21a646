"""The evaluation plan: one lazy polars query from a run and judgments to metric values.

* :mod:`.options`: :class:`~polars_irmetrics.plan.options.EvalOptions`, every option of
  an evaluation as one object, from the entry points to the plan.
* :mod:`.evaluate`: :func:`~polars_irmetrics.evaluate` and the plan it builds.
* :mod:`.validate`: the input checks, which run inside the plan and raise when it runs.
* :mod:`.buckets`: the out-of-core path, one hash bucket of queries at a time.
"""
