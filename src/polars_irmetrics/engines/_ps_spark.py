"""The propensity-scored metrics on Spark (:mod:`polars_irmetrics.engines._ps`).

The run and the judgments (their columns the metrics read) are paired by query hash
(:func:`~polars_irmetrics.engines._spark_pairs.paired_map`: ``repartition`` on the
engine's part number, one ``mapInArrow`` task per partition), each task giving its
queries' sums with the propensities shipped in the job; the parts' rows go to one
partition, where one task finishes them into the result.
:mod:`polars_irmetrics.engines.spark` computes it at the call, as for the other metrics,
and passes its own part number and schema functions (this module does not import it).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from functools import partial

import polars as pl
import pyarrow as pa
from pyspark import Accumulator
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)
from pyspark.sql.types import StructType

from polars_irmetrics.engines._partition import as_polars_frame, judgments_given
from polars_irmetrics.engines._ps import prepare_ps, ps_finish, ps_part
from polars_irmetrics.engines._spark_arrow import arrow_of
from polars_irmetrics.engines._spark_coverage import keyed_parts, task_key
from polars_irmetrics.engines._spark_pairs import PartOf, carrying, finished_in_one, paired_map
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import FOUND_DOCS, INTERNAL, warn_on_judged
from polars_irmetrics.offline.coverage import SPELT, spelt_hint, spelt_tally

__all__ = ["ps_frame"]

#: ``(schema, keys) -> Spark schema`` with the non-key columns renamed (the engine's).
SparkSchema = Callable[[pl.Schema, tuple[str, ...]], StructType]


def ps_frame(
    run: DataFrame,
    metrics: Iterable[str],
    *,
    qrels: DataFrame | None,
    propensities: DataFrame,
    count: int,
    options: EvalOptions,
    part: PartOf,
    spark_schema: SparkSchema,
) -> tuple[DataFrame, Callable[[], None]]:
    """:func:`polars_irmetrics.spark.evaluate`'s result for the propensity-scored
    metrics, not yet computed (module doc), and the function that gives the coverage
    warning once it is (a run the parts refuse warns of nothing, as on one machine);
    the propensities are gathered now."""
    table = propensities.toArrow()
    job = prepare_ps(
        arrow_of(run),
        None if qrels is None else arrow_of(qrels),
        table,
        metrics,
        options,
        "polars_irmetrics.spark.evaluate",
    )
    query_id = job.options.query_id
    parts_schema = spark_schema(job.part_schema, (query_id,))
    qrels_given = judgments_given(qrels, "the propensity-scored metrics")

    # each part's judged queries whose documents are spelt apart (a few rows, where
    # there are such queries: those that retrieve no judged document and those that
    # retrieve some, told apart by their judged documents found), by task: the driver's
    # warning reads them
    spelt = keyed_parts(run.sparkSession.sparkContext)
    pairs = SPELT[0]

    def evaluate(runs: pa.Table, judged: pa.Table | None) -> pa.Table:
        rows = carrying(ps_part, job, runs, judged)
        if rows.column(pairs).null_count < rows.num_rows:
            found = as_polars_frame(rows).filter(pl.col(pairs).is_not_null())
            spelt.add({task_key("ps"): found.select(query_id, FOUND_DOCS, *SPELT)})
        return rows

    parts = paired_map(
        run.select(*job.run_schema.names()),
        qrels_given.select(*job.qrels_schema.names()),
        evaluate,
        query_id=query_id,
        count=count,
        part=part,
        schema=parts_schema,
        prefix="q",
    )
    result = finished_in_one(
        parts,
        job.part_schema,
        job.result_schema,
        partial(ps_finish, job),
        spark_schema,
        (query_id,),
    )
    return result, partial(_warn_on_judged, run, qrels_given, job.options, spelt)


def _warn_on_judged(
    run: DataFrame,
    qrels: DataFrame,
    options: EvalOptions,
    spelt: Accumulator[dict[Hashable, pl.DataFrame]],
) -> None:
    """The one plan's coverage warning (a run that retrieves no judged document), from
    counts taken here on the driver: the finish runs in an executor, whose warnings
    stay there; and of the judged queries whose documents are spelt apart (where the
    run retrieves no judged document, and where it retrieves some but not all), from
    what the parts gave ``spelt``
    (:meth:`~polars_irmetrics.offline.propensity.PsPlan.spelt`)."""
    q, d = options.query_id, options.doc_id
    hit = f"{INTERNAL}hit"
    ran = run.select(q, d).distinct().withColumn(hit, F.lit(1))
    judged = qrels.select(q, d).join(ran, on=[q, d], how="left")
    found = F.col(hit).isNotNull()
    counts = judged.agg(  # one job: every judgment, and whether the run retrieves it
        F.countDistinct(q).alias("queries"),
        F.countDistinct(F.when(found, F.col(q))).alias("found_queries"),
        F.count(F.lit(1)).alias("docs"),
        F.count(hit).alias("found"),
    ).collect()[0]
    given = list(spelt.value.values())
    docs = partly = None
    if given:  # the parts' rows added up, as the one plan's finish adds them
        rows = pl.concat(given, how="vertical_relaxed")
        tally = rows.select(*spelt_tally(q), *spelt_tally(q, partly=True)).row(0, named=True)
        docs, partly = spelt_hint(tally, q, d), spelt_hint(tally, q, d, partly=True)
    warn_on_judged(
        {**counts.asDict(), "listed": None}, options.unretrieved, docs=docs, partly=partly
    )
