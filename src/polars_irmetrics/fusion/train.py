"""Trained fusions: ``irm.fit_fusion`` learns per-run tables from judgments, and
:func:`apply_fitted` joins them onto the long frame inside ``fuse``'s plan.

A fitted table is a DataFrame with one row per (run, index): ``method``, ``run``,
``index`` (a 0-based position or segment) and ``value``. What the index and value
are, per method (ranx's ``*_train`` functions, hit = judged relevance >= 1):

=============  ================================================================
``posfuse``    position ``i``: the share of training queries with a hit at ``i``,
               among those whose list reaches ``i`` (also ``slidefuse``'s table)
``probfuse``   segment ``k`` of ``n_segments`` equal parts of each list: the mean
               over training queries of the hit rate within the segment
``segfuse``    segment ``k`` of the boundaries 0, 5, 15, 35, ..., 5115: the mean
               hit rate within the segment
``bayesfuse``  segment ``k`` of the cut-offs 0, 5, 10, 15, 20, 30, 100, 200, 500,
               1000: the log-odds ``log(p / (1 - p))`` of its mean precision ``p``
               (0 and 1 moved to 0.001 and 0.999 as in ranx); ``fuse`` gives a
               document ranked below 1000 the log-odds of an unretrieved one (ranx
               reads past its table there: no value of its own to follow)
``mapfuse``    index 0: the run's MAP over every judged query (a query the run does
               not list scores 0, as with trec_eval ``-c``; the others' rates are
               over the judged queries each run lists)
=============  ================================================================
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import polars as pl

from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.fusion.fitted import BAYES_CUTOFFS, SEGFUSE_BOUNDS, segment
from polars_irmetrics.fusion.frame import Runs, check_rows, gather, warn_said
from polars_irmetrics.fusion.fuse import check_positions_norm, check_system, prepare
from polars_irmetrics.fusion.judged import (
    judged_counts,
    judged_hints,
    quiet,
    spelt_docs,
    spelt_partly,
    warn_on_training,
)
from polars_irmetrics.fusion.methods import (
    FIT_PARAMS,
    LEN,
    POS,
    RUN,
    get_fusion_method,
)
from polars_irmetrics.fusion.norms import resolve_norm
from polars_irmetrics.fusion.options import FusionOptions
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    check_id_kinds,
    check_numeric,
    flag_error,
    null_key_error,
)
from polars_irmetrics.metrics._common import exact_level
from polars_irmetrics.metrics.scope import JUDGMENT_FLAGS, fixed_sum, judgment_flags

__all__ = ["fit_fusion"]

_HIT = "__irmf_hit"
_SEG = "__irmf_seg"
_INDEX = "__irmf_index"


def fit_fusion(
    runs: Runs,
    method: str,
    *,
    qrels: pl.DataFrame | pl.LazyFrame,
    norm: str | None = None,
    n_segments: int | None = None,
    relevance_level: float = 1,
    system: str | None = None,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    score: str = "score",
    rank: str = "rank",
    relevance: str = "relevance",
) -> pl.DataFrame:
    """Fit a trained fusion's per-run tables on judged (training) queries.

    The tables are ranx's (``ranx.fusion.*_train``): per-position or per-segment hit
    rates and log-odds estimated on the judged queries each run lists, MAP over
    every judged query (module doc). Pass the result to
    :func:`~polars_irmetrics.fuse` as ``fitted=``, usually on other (test) queries.

    Parameters
    ----------
    runs
        As in :func:`~polars_irmetrics.fuse`.
    qrels
        Judgments: ``query_id``, ``doc_id``, ``relevance``.
    method
        ``probfuse``, ``segfuse``, ``slidefuse``, ``posfuse``, ``bayesfuse`` or
        ``mapfuse`` (or an alias).
    norm
        The normalisation ``fuse`` will use, where it sets the positions
        (``min-max-inverted``, ``borda``; default none). Every table is fitted on the
        positions alone, so a normalisation that keeps each run's order (``min-max``,
        ``max``, ``sum``, ``zmuv``, ``rank``) is refused, ``segfuse``'s too: pass it to
        ``fuse``, which reads ``segfuse``'s normalised scores.
    n_segments
        ``probfuse``: the number of segments each list is cut into (required).
    relevance_level
        The lowest relevance that counts as a hit (ranx: 1).
    system, query_id, doc_id, score, rank, relevance
        Column names.

    Returns
    -------
    DataFrame
        ``method``, ``run``, ``index``, ``value`` (see the module docstring).

    Raises
    ------
    MetricParameterError
        An untrained method, a missing ``n_segments`` for ``probfuse``, or a ``norm``
        that keeps each run's order (the table would be the one of no normalisation).
    InvalidValueError, DuplicateError
        The runs' rows :func:`~polars_irmetrics.fuse` refuses (a null id, a NaN,
        infinite or null score, a document twice in a query); the judgments'
        rows :func:`~polars_irmetrics.evaluate` refuses (a null id or label, a NaN or
        infinite label, a document judged twice); a ``relevance_level`` that is not a
        finite number.
    QuerySetError
        A run that lists no judged query (its table would have no row, which
        :func:`~polars_irmetrics.fuse` refuses), warned of first.

    Examples
    --------
    Two queries, each run lists two documents; ``d1`` is the only relevant one. In
    ``a`` it is first in q1 and second in q2, so positions 0 and 1 are hits half of
    the time; ``b`` never retrieves it.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> a = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d1", "d2", "d3", "d1"],
    ...                   "score": [2.0, 1.0, 2.0, 1.0]})
    >>> b = a.with_columns(pl.Series("doc_id", ["d4", "d5", "d6", "d7"]))
    >>> qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": "d1", "relevance": 1})
    >>> irm.fit_fusion({"a": a, "b": b}, "posfuse", qrels=qrels)
    shape: (4, 4)
    ┌─────────┬─────┬───────┬───────┐
    │ method  ┆ run ┆ index ┆ value │
    │ ---     ┆ --- ┆ ---   ┆ ---   │
    │ str     ┆ str ┆ i64   ┆ f64   │
    ╞═════════╪═════╪═══════╪═══════╡
    │ posfuse ┆ a   ┆ 0     ┆ 0.5   │
    │ posfuse ┆ a   ┆ 1     ┆ 0.5   │
    │ posfuse ┆ b   ┆ 0     ┆ 0.0   │
    │ posfuse ┆ b   ┆ 1     ┆ 0.0   │
    └─────────┴─────┴───────┴───────┘
    """
    fusion = get_fusion_method(method)
    if not fusion.trained:
        raise MetricParameterError(
            f"{fusion.name} is not a trained method; fit_fusion fits probfuse, segfuse, "
            "slidefuse, posfuse, bayesfuse or mapfuse"
        )
    segments = 0  # probfuse's n_segments, checked
    if fusion.name == "probfuse":
        if n_segments is None:
            raise MetricParameterError(
                "probfuse needs the parameter n_segments: pass it, e.g. "
                "fit_fusion(runs, 'probfuse', qrels=qrels, n_segments=10)"
            )
        segments = int(FIT_PARAMS["probfuse"][0].check("probfuse", n_segments))
    elif n_segments is not None:
        raise MetricParameterError(f"{fusion.name} has no parameter 'n_segments'")
    # as fuse will refuse it, and a score norm segfuse's fit (positions alone) does not read
    check_positions_norm(fusion, norm, resolve_norm(norm), fit=True)
    EvalOptions.build(relevance_level=relevance_level)  # a finite number, as evaluate's
    options = FusionOptions(
        method=fusion.name,
        norm=norm,
        system=system,
        query_id=query_id,
        doc_id=doc_id,
        score=score,
        rank=rank,
    )
    check_system(runs, options)  # as fuse and optimize_fusion
    gathered = gather(runs, options)
    # the rows fuse refuses (null ids, NaN or infinite scores, a document twice in a
    # query): the tables would be fitted on positions such rows make up
    check_rows(gathered, options)
    warn_said(gathered, options)  # positions the runs did not give
    q, d = query_id, doc_id
    long = prepare(gathered, fusion, resolve_norm(norm), None, options)
    judged = _judgments(qrels, q, d, relevance, gathered.id_dtypes)
    training = long.join(judged.select(q).unique(), on=q, how="semi")
    hits = training.join(judged, on=[q, d], how="left").with_columns(
        (pl.col(relevance) >= exact_level(relevance_level))
        .fill_null(False)
        .cast(pl.Float64)
        .alias(_HIT)
    )
    queries = training.group_by(RUN).agg(pl.col(q).n_unique().cast(pl.Float64).alias("__irmf_nq"))
    name = fusion.name
    if name in ("posfuse", "slidefuse"):
        table = hits.group_by(RUN, (pl.col(POS) - 1).alias(_INDEX)).agg(
            pl.col(_HIT).mean().alias("value")
        )
    elif name == "mapfuse":
        table = _map_table(hits, judged, gathered.names, q, d, relevance, relevance_level)
    else:
        if name == "probfuse":
            size = (pl.col(LEN) / segments).ceil().cast(pl.Int64)
            seg = (pl.col(POS) - 1) // size
            sizes = None
            count = segments
        else:
            bounds = SEGFUSE_BOUNDS if name == "segfuse" else BAYES_CUTOFFS
            seg = segment(pl.col(POS) - 1, bounds)
            sizes = [b - a for a, b in itertools.pairwise(bounds)]
            count = len(sizes)
        per_query = hits.with_columns(seg.alias(_SEG)).filter(pl.col(_SEG) < count)
        if sizes is None:
            rate = pl.col(_HIT).mean()
        else:
            rate = (
                pl.col(_HIT).sum()
                / pl.col(_SEG)
                .replace_strict(dict(enumerate(sizes)), return_dtype=pl.Float64)
                .first()
            )
        sums = (
            per_query.group_by(RUN, q, _SEG)
            .agg(rate.alias("__irmf_rate"))
            .group_by(RUN, _SEG)
            .agg(fixed_sum(pl.col("__irmf_rate")))  # rates in [0, 1], in any order
        )
        grid = queries.join(
            pl.LazyFrame({_SEG: list(range(count))}, schema={_SEG: pl.Int64}), how="cross"
        )
        table = (
            grid.join(sums, on=[RUN, _SEG], how="left")
            .with_columns(
                (pl.col("__irmf_rate").fill_null(0.0) / pl.col("__irmf_nq")).alias("value")
            )
            .rename({_SEG: _INDEX})
        )
        if name == "bayesfuse":
            p = pl.col("value")
            p = pl.when(p == 0).then(0.001).otherwise(p)
            neg = 1.0 - p
            neg = pl.when(neg == 0).then(0.001).otherwise(neg)
            table = table.with_columns((p / neg).log().alias("value"))
    out = table.select(
        pl.lit(name).alias("method"),
        pl.col(RUN)
        .replace_strict(dict(enumerate(gathered.names)), return_dtype=pl.String)
        .alias("run"),
        pl.col(_INDEX).cast(pl.Int64).alias("index"),
        pl.col("value").cast(pl.Float64),
    ).sort("run", "index")
    # the runs' judged documents, counted with the fit (fusion.judged): warned of once
    # per run, the evaluation inside (mapfuse's MAP) quiet
    counted = judged_counts(gathered.frame, judged, gathered.names, q, d)
    with quiet():
        fitted, counts = pl.collect_all([out, counted])
    warn_on_training(
        counts,
        caller="fit_fusion",
        missed=name == "mapfuse",
        hints=judged_hints(gathered.frame, judged, q, d),
        docs=spelt_docs(gathered.frame, judged, gathered.names, q, d),
        partly=spelt_partly(gathered.frame, judged, gathered.names, q, d),
    )
    # a run with no judged query has no table: fuse would refuse the fitted table for
    # these very runs ("fit them on the same runs"), so the cause is named here
    unfitted = [run for run in gathered.names if run not in set(fitted["run"].to_list())]
    if unfitted:
        several = len(unfitted) > 1
        named = ("runs " if several else "run ") + ", ".join(repr(r) for r in unfitted)
        them = "them" if several else "it"
        raise QuerySetError(
            f"{named} list{'' if several else 's'} no judged query, so {name}'s table "
            f"cannot be estimated for {them} (fuse reads a table for every run): pass "
            f"judgments of {'their' if several else 'its'} queries, or fit and fuse "
            f"without {them}"
        )
    return fitted


def _judgments(
    qrels: pl.DataFrame | pl.LazyFrame,
    q: str,
    d: str,
    relevance: str,
    dtypes: tuple[pl.DataType, pl.DataType],
) -> pl.LazyFrame:
    if not isinstance(qrels, pl.DataFrame | pl.LazyFrame):
        raise InvalidValueError(
            f"qrels must be a polars DataFrame or LazyFrame; got {type(qrels).__name__}"
        )
    lazy = qrels.lazy()
    schema = lazy.collect_schema()
    for column in (q, d, relevance):
        if column not in schema:
            have = ", ".join(repr(c) for c in schema.names()) or "none"
            raise ColumnNotFoundError(
                f"column {column!r} not found in the judgments (its columns: {have}); name "
                "the columns with query_id=..., doc_id=... and relevance=..."
            )
    # ids of one kind on both sides (strings or integers, float ids refused by id_kind):
    # a cast across kinds would match '01' to 1, or 1.5 to 1
    runs = pl.Schema({q: dtypes[0], d: dtypes[1]})
    check_id_kinds(runs, "runs", schema, "judgments", [q, d])
    check_numeric(schema, relevance, "judgments", integer=False)
    judged = lazy.select(pl.col(q).cast(dtypes[0]), pl.col(d).cast(dtypes[1]), pl.col(relevance))
    _check_judgments(judged, q, d, relevance)
    return judged


def _check_judgments(judged: pl.LazyFrame, q: str, d: str, relevance: str) -> None:
    """Refuse the judgments evaluate refuses, in its words: a null id or label, a label
    it cannot read (NaN, infinite...: ``unfit_label``), a document judged twice in a
    query (:func:`~polars_irmetrics.metrics.scope.judgment_flags`). A fitted table
    would otherwise count a NaN label as a hit (polars orders NaN above every number), a
    null one as a miss, and a document judged twice twice."""
    counts = judgment_flags(pl.col(d), pl.col(relevance))
    flags = judged.group_by(q).agg(count.alias(name) for name, count in counts.items())
    failing = pl.col(q).is_null() | pl.any_horizontal([pl.col(f) > 0 for f in JUDGMENT_FLAGS])
    bad = flags.filter(failing).sort(q, nulls_last=False).collect()
    if not bad.height:
        return
    if bad[q].null_count():
        raise null_key_error(q, "judgments")
    columns = {"query_id": q, "doc_id": d, "relevance": relevance}
    for name in JUDGMENT_FLAGS:
        rows = bad.filter(pl.col(name) > 0)
        if rows.height:
            raise flag_error(name, columns, rows[q][0], rows[name][0])


def _map_table(
    hits: pl.LazyFrame,
    judged: pl.LazyFrame,
    names: Sequence[str],
    q: str,
    d: str,
    relevance: str,
    relevance_level: float,
) -> pl.LazyFrame:
    run = hits.select(RUN, q, d, pl.col(POS).alias("__irmf_rank"))
    means = evaluate(
        run,
        "map",
        qrels=judged,
        systems=RUN,
        order="rank",
        relevance_level=relevance_level,
        query_id=q,
        doc_id=d,
        rank="__irmf_rank",
        relevance=relevance,
    )
    return means.select(RUN, pl.lit(0, pl.Int64).alias(_INDEX), pl.col("map").alias("value"))
