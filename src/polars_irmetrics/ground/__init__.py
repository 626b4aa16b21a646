"""The ground every part stands on: input tables, validation, the options of an
evaluation, out-of-core buckets and partitions, and progress.

* :mod:`.inputs`: any table (polars, pandas, pyarrow, Arrow PyCapsule) as polars.
* :mod:`.validate`: the input checks, which run inside a plan and raise when it runs.
* :mod:`.options`: :class:`~polars_irmetrics.ground.options.EvalOptions`, every option
  of an evaluation as one object, from the entry points to the plans.
* :mod:`.buckets`, :mod:`.partitions`, :mod:`.auto`: out of core, one hash bucket or
  partition of queries at a time, and the choice between one plan and buckets.
* :mod:`.progress`: the progress bar of long evaluations.
"""
