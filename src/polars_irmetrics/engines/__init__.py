"""Distributed engines: the same evaluation plan run on Apache Spark or on Dask.

Every query's rows are independent of every other query's, so an evaluation divides
by a hash of ``query_id``: each task runs the door's polars plan
(:func:`~polars_irmetrics.door.evaluate.evaluate_plan`) on the rows of its queries, from
both sides, and only per-query values travel back. Means are then computed in one
place per ``by`` group, over the per-query values sorted by the keys, by the same
polars expression as on one machine, so they are equal to the last bit.

* :mod:`._partition`: what both engines share (the checks on the driver, one part's
  evaluation through Arrow, the means, and carrying the library's errors back).
* :mod:`.spark`: :func:`polars_irmetrics.spark.evaluate`; :mod:`._spark_partitions`
  (hive partitions that keep queries whole, ``partitioned_by=``: one task per value
  reads its files with polars, no shuffle).
* :mod:`._prediction`: prediction metrics (``auc``, ``gauc``, ``logloss``...), per query
  in each part, and means from per-part sums and score histograms merged exactly
  (:mod:`._prediction_spark`, :mod:`._prediction_dask`).
* :mod:`.dask`: :func:`polars_irmetrics.dask.evaluate`; :mod:`._dask_partitions` (a run
  already partitioned by query, ``partitioned_by=``), :mod:`._dask_progress`
  (``progress=True``) and :mod:`._dask_frames` (what they share).
"""
