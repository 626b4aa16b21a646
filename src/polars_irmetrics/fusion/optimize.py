"""``irm.optimize_fusion``: search ranx's grid of fusion parameters in one plan.

The normalised runs are pivoted to one row per (query, document) with a column per
run, cross-joined with the grid (one row per weight vector, or per ``k``/``phi``/
``gamma``/``sigma``), fused, ranked per (grid point, query) and evaluated with the
grid point as one more group key: one polars plan, collected once, whatever the
grid's size. The per-query scores (grid points x queries) then give the best point
and, with ``folds``, a cross-validated estimate in numpy.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.errors import InvalidValueError, MetricParameterError, UnknownMetricError
from polars_irmetrics.fusion.frame import (
    BAD,
    DUP,
    RAW,
    Counts,
    Runs,
    checked,
    flags_for,
    gather,
    overflow_error,
    positions,
    said_flags,
)
from polars_irmetrics.fusion.fuse import (
    RANK_KEY,
    _present,
    check_positions_norm,
    check_system,
    needs_score,
    prepare,
    rank_key,
)
from polars_irmetrics.fusion.judged import (
    judged_counts,
    judged_hints,
    quiet,
    spelt_docs,
    spelt_partly,
    warn_on_training,
)
from polars_irmetrics.fusion.methods import POS, RUN, VALUE, get_fusion_method
from polars_irmetrics.fusion.norms import resolve_norm
from polars_irmetrics.fusion.options import FusionOptions
from polars_irmetrics.fusion.overlap import KIND, Overlap
from polars_irmetrics.fusion.train import _judgments
from polars_irmetrics.ground.buckets import (
    Buckets,
    check_buckets,
    check_spill_dir,
    evaluate_in_buckets,
    refuse_spill_without_buckets,
)
from polars_irmetrics.ground.calls import named_as
from polars_irmetrics.ground.options import ROUTE_METRICS, check_relevance_level
from polars_irmetrics.ground.progress import check_progress
from polars_irmetrics.ground.validate import is_text
from polars_irmetrics.metrics._common import power
from polars_irmetrics.metrics.registry import (
    INPUTS,
    MetricRequest,
    parse_metric,
    parse_metric_list,
)
from polars_irmetrics.metrics.requests import refuse_summaries
from polars_irmetrics.metrics.scope import (
    exact_sum,
    exact_sum_horizontal,
    wide_sum,
    wide_sum_horizontal,
)

__all__ = ["grid_points", "optimize_fusion"]

GRID = "__irmf_grid"
_PARAM = "__irmf_param"
_CNT = "__irmf_cnt"
_SUM = "__irmf_sum"
_RANK = "__irmf_rank"
_QCODE = "__irmf_qcode"
_KEY = "__irmf_key2"
_SCORE = "__irmf_score"
_OVER = "__irmf_over"

#: Methods whose fused score is a convex combination of the runs' values (weights on
#: the simplex), so that it lies between a document's lowest and highest value.
CONVEX = ("wsum", "w_bordafuse")

#: Metrics whose value at cutoff k reads only the top k of the ranking (and the
#: judgments): the grid's rankings can be cut at k before evaluating.
_TOP_K_METRICS = (
    "precision", "recall", "f1", "hit_rate", "mrr", "map", "ndcg", "dcg",
    "num_rel_ret", "arhr", "mar", "err",
)  # fmt: skip


def top_k_cutoff(metric: str | MetricRequest) -> int | None:
    """The cutoff k of a metric that reads only the top k, else ``None``.

    Examples
    --------
    >>> from polars_irmetrics.fusion.optimize import top_k_cutoff
    >>> top_k_cutoff("ndcg@10"), top_k_cutoff("map"), top_k_cutoff("bpref")
    (10, None, None)

    With ``judged_only=True`` the top k are the top k judged documents, which may sit
    anywhere in the ranking:

    >>> top_k_cutoff("P(judged_only=True)@2") is None
    True
    """
    request = parse_metric(metric) if isinstance(metric, str) else metric
    if request.k is None or request.metric.name not in _TOP_K_METRICS:
        return None
    if request.judged_only:  # the unjudged documents leave first: k counts judged ones
        return None
    if dict(request.options).get("ideal", "judgments") != "judgments":
        return None
    return int(request.k)


def _prune(wide: pl.LazyFrame, n: int, q: str, k: int) -> pl.LazyFrame:
    """Drop documents that no weight vector can bring into the top ``k``.

    For a convex combination a document scores between its lowest and highest value
    over the runs (an unretrieved one counting 0). When ``k`` documents of the query
    have a lowest value above a document's highest (by a margin of 1e-9, far above the
    rounding of the ranking key), ``k`` documents outscore it at every grid point.
    """
    values = [pl.col(f"__irmf_v{i}").fill_null(0.0) for i in range(n)]
    low, high = pl.min_horizontal(values), pl.max_horizontal(values)
    kth_low = pl.when(pl.len().over(q) > k).then(low.top_k(k).min().over(q))
    margin = 1e-9 * pl.max_horizontal(pl.lit(1.0), kth_low.abs())
    return wide.filter((high + margin >= kth_low).fill_null(True))


#: Methods ``optimize_fusion`` searches, and the parameter it varies.
SEARCHED = {
    "wsum": "weights",
    "wmnz": "weights",
    "mixed": "weights",
    "w_bordafuse": "weights",
    "rrf": "k",
    "rbc": "phi",
    "gmnz": "gamma",
    "logn_isr": "sigma",
}


def _digits(step: float) -> int:
    return str(step)[::-1].find(".")


#: the most weight vectors grid_points enumerates, some seconds of work (3 runs at step
#: 0.01: 101**3 = 1,030,301; 7 runs at 0.1: 11**7 = 19,487,171; 4 runs at 0.01 would be
#: 104 million, minutes before the first fusion)
MAX_WEIGHT_CANDIDATES = 20_000_000


def grid_points(param: str, n_runs: int, step: float | None) -> list[Any]:
    """ranx's grid (``ranx.fusion_optimization``): weight vectors on the simplex whose
    float sum is exactly 1, ``k`` in 10..100, or 0.01..1 for ``phi``/``gamma``/``sigma``
    (``phi`` below 1: ``rbc`` at ``phi=1`` scores every document 0, which ``fuse``
    refuses).

    Examples
    --------
    Like ranx's, the weight grid keeps only vectors whose float sum is exactly 1: for
    three runs at step 0.1 that is 62 of the simplex's 66 points ((0.1, 0.2, 0.7) sums
    to 1.0000000000000002 and is left out, as in ranx).

    >>> from polars_irmetrics.fusion.optimize import grid_points
    >>> len(grid_points("weights", 3, 0.1)), grid_points("k", 2, None)[:3]
    (62, [10, 20, 30])
    >>> grid_points("weights", 2, 0.5)
    [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]

    A step is a finite number > 0 (an integer for ``k``); a step whose grid would be
    made up by ranx's rounding (its digits after the point: none in ``1e-05``, so every
    point rounds to 0.0), holds a ``phi`` or ``sigma`` outside [0, 1] (which fuse
    refuses) or has no weight vector at all (ranx's search would return
    ``{"weights": []}``) is refused. An integer step is the float's (ranx rounds ``1``
    to tens).

    >>> grid_points("phi", 2, 0.05)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: step=0.05 puts phi=1.01 in the grid ...
    >>> grid_points("weights", 2, 0.3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: step=0.3 gives no weights of the 2 runs ...

    A weight grid whose every combination of values would take hours to enumerate (more
    than twenty million: 4 runs at step 0.01) is refused:

    >>> grid_points("weights", 4, 0.01)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: step=0.01 for 4 runs makes 104,060,401 weight ...
    """
    if step is not None and (
        isinstance(step, bool)
        or not isinstance(step, int | float)
        or not math.isfinite(step)
        or step <= 0
    ):
        raise MetricParameterError(f"step={step!r} is not valid; it must be a finite number > 0")
    if param == "k":
        if step is not None and not float(step).is_integer():
            raise MetricParameterError(
                f"step={step!r} is not valid for rrf's k (whole numbers from 10 to 100, "
                "ranx's grid): it must be an integer >= 1, e.g. step=10"
            )
        return list(range(10, 101, int(step or 10)))
    given = step
    step = (0.1 if param == "weights" else 0.01) if step is None else float(step)
    digits = _digits(step)
    if digits < 0:
        raise MetricParameterError(
            f"step={given!r} is not valid: ranx's grid rounds its points to the step's digits "
            f"after the decimal point, and {str(step)!r} is written with none, so every "
            "point would round to 0.0; pass a step of 0.0001 or more, e.g. step=0.01"
        )
    if param == "weights":
        values = [round(float(x), digits) for x in np.arange(0, 1 + step, step)]
        candidates = len(values) ** n_runs
        if candidates > MAX_WEIGHT_CANDIDATES:  # ranx's product would run for hours
            fits = [
                s
                for s in (0.1, 0.2, 0.25, 0.5)
                if (round(1 / s) + 1) ** n_runs <= MAX_WEIGHT_CANDIDATES
            ]
            fix = f"pass a larger step, e.g. step={fits[0]}" if fits else "fuse fewer runs"
            raise MetricParameterError(
                f"step={given!r} for {n_runs} runs makes {candidates:,} weight vectors to "
                f"try ({len(values)} values per run, every combination, as ranx's grid "
                f"enumerates them; at most {MAX_WEIGHT_CANDIDATES:,}): {fix}"
            )
        weights = [seq for seq in itertools.product(*[values] * n_runs) if sum(seq) == 1.0]
        if not weights:  # ranx's search would return {"weights": []}
            raise MetricParameterError(
                f"step={given!r} gives no weights of the {n_runs} runs that sum to 1 (each "
                "weight a multiple of the step from 0 to 1, their float sum exactly 1.0, as "
                "in ranx's grid): pass a step that divides 1, e.g. step=0.1 or step=0.25"
            )
        return weights
    points = [round(float(x), digits) for x in np.arange(0.01, 1.0 + step, step)]
    if param == "phi":  # phi=1 fuses every score to 0, phi=0 (0.01 rounded) all but
        # each run's first: their orders are the tie-break's, not searched
        points = [x for x in points if x not in (0.0, 1.0)]
    outside = [x for x in points if not 0 <= x <= 1] if param in ("phi", "sigma") else []
    if outside:
        raise MetricParameterError(
            f"step={given!r} puts {param}={outside[0]!r} in the grid (ranx's points 0.01, "
            f"0.01 + step, ... below 1 + step, rounded to the step's digits), outside "
            f"{param}'s range [0, 1], which fuse refuses: pass a step whose grid ends at 1, "
            "e.g. step=0.01, 0.1 or 0.2"
        )
    return points


def _fused_score(method: str, n: int, *, wide: bool) -> pl.Expr:
    v = [pl.col(f"__irmf_v{i}") for i in range(n)]
    w = [pl.col(f"__irmf_w{i}") for i in range(n)]
    p = pl.col(_PARAM)
    filled = [x.fill_null(0.0) for x in v]
    # exact sums, the bits of fuse's (metrics.scope.exact_sum over a document's runs,
    # or wide_sum where fuse adds scores of any size: ``wide``)
    total = wide_sum_horizontal if wide else exact_sum_horizontal
    if method in ("wsum", "w_bordafuse"):
        return total([wi * vi for wi, vi in zip(w, filled, strict=True)])
    if method == "wmnz":
        present = [wi * vi.is_not_null().cast(pl.Float64) for wi, vi in zip(w, v, strict=True)]
        return total(filled) * total(present)
    if method == "mixed":
        weighted = total([wi * vi for wi, vi in zip(w, filled, strict=True)])
        return weighted * pl.col(_CNT).sqrt()
    if method == "rrf":
        return total([(1.0 / (p + x)).fill_null(0.0) for x in v])
    if method == "rbc":
        # fuse's kernel (metrics._common.power), the grid's phi a column
        return total([((1.0 - p) * power(p, x - 1.0)).fill_null(0.0) for x in v])
    if method == "gmnz":
        return pl.col(_SUM) * pl.col(_CNT).pow(p)
    return pl.col(_SUM) * (pl.col(_CNT) + p).log()  # logn_isr


def optimize_fusion(
    runs: Runs,
    metric: str = "ndcg@10",
    *,
    qrels: pl.DataFrame | pl.LazyFrame,
    method: str = "wsum",
    norm: str | None = "auto",
    step: float | None = None,
    return_grid: bool = False,
    folds: int | None = None,
    seed: int = 0,
    buckets: Buckets = "auto",
    spill_dir: str | Path | None = None,
    progress: bool | None = None,
    system: str | None = None,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    score: str = "score",
    rank: str = "rank",
    relevance: str = "relevance",
    relevance_level: float = 1,
) -> dict[str, Any] | tuple[Any, ...]:
    """Find a fusion's best parameters on judged queries, over ranx's grid.

    Searches the grid of ``ranx.optimize_fusion`` (weights on the simplex in steps of
    ``step`` for ``wsum``, ``wmnz``, ``mixed``, ``w_bordafuse``; ``k`` for ``rrf``;
    ``phi``, ``gamma``, ``sigma`` for ``rbc``, ``gmnz``, ``logn_isr``), evaluating
    every grid point in one polars plan, and returns the point with the best mean
    ``metric`` (among equals, the last, as ranx): the highest mean, or the lowest for
    a metric whose declaration says lower is better.

    Parameters
    ----------
    runs
        As in :func:`~polars_irmetrics.fuse`.
    qrels
        Judgments (``query_id``, ``doc_id``, ``relevance``).
    method, norm
        The fusion and normalisation. ``norm="auto"`` (default) is ranx's default
        ``min-max`` for a method that reads scores (``wsum``, ``wmnz``, ``mixed``,
        ``gmnz``) and no normalisation for one that reads positions alone (``rrf``,
        ``rbc``, ``logn_isr``, ``w_bordafuse``), where ``min-max`` would change nothing.
        A normalisation given by name is applied as :func:`~polars_irmetrics.fuse`
        applies it, and refused where fuse refuses it: ``norm="min-max"`` (or ``max``,
        ``sum``, ``zmuv``, ``rank``: each keeps every run's order) with a method of
        positions. ``None`` (or ``"none"``): no normalisation, as ranx's ``norm=None``.
    metric
        One metric name, as in :func:`~polars_irmetrics.evaluate`; its mean over the
        queries is maximised, or minimised where lower is better (the request's
        direction); a metric with no better direction is refused (``num_ret``, and the
        judgments' completeness: ``judged@10``, ``unjudged@10``, ``rbp_residual``).
        ``agg=`` is refused: the search
        reads the per-query values, whose mean ``agg=`` would not change, and so is a
        metric summarized otherwise (``gm_map``: the mean of its per-query AP is
        ``map``).
    step
        The grid's step (ranx's defaults: 0.1 for weights, 10 for ``k``, 0.01 else).
        A weight grid enumerates every combination of the step's values, one per run:
        more than 20 million (4 runs at 0.01) is refused, with a step that fits.
    return_grid
        Also return every grid point's mean score.
    folds
        Cross-validate over ``folds`` random query folds (``seed``): for each fold,
        the best point on the other folds and its score on this one.
    seed
        Seed of the random assignment of queries to folds (the same seed, the same
        folds); read with ``folds`` alone, and refused without it.
    buckets, spill_dir
        The grid multiplies the rows: ``"auto"`` (default) evaluates queries in hash
        buckets of about 30 million (grid point, document) rows, one after the other
        (:func:`~polars_irmetrics.evaluate`'s out-of-core path, under ``spill_dir``);
        ``N`` sets the number of buckets, ``None`` runs one plan. Same result.
    progress
        A bar of the grid's buckets evaluated (with more than one bucket; one plan has
        no steps to count): ``None`` (default) in a terminal or a notebook only,
        ``True`` on any stream, ``False`` never (:mod:`polars_irmetrics.ground.progress`).
    system, query_id, doc_id, score, rank, relevance
        Column names.
    relevance_level
        The lowest label a binary metric counts as relevant, as
        :func:`~polars_irmetrics.evaluate` reads it (refused beside a metric that reads
        none: a graded one, or one with a level of its own).

    Returns
    -------
    dict or tuple
        ``{"weights": [...]}`` (or ``{"k": ...}``...) as ranx; with ``return_grid``,
        ``(best, grid)``; with ``folds``, the fold table last: ``(best, folds)`` or
        ``(best, grid, folds)``. ``grid``: the parameter and the metric's mean, one
        row per point; ``folds``: ``fold``, ``queries``, the parameter, ``train`` and
        ``test`` (the held-out score).

    Raises
    ------
    MetricParameterError
        A method without a search grid, a bad ``step`` (not a finite number > 0; not
        an integer for ``k``; a weight grid with no point, or a ``phi``/``sigma`` grid
        with one outside [0, 1]) or ``folds``, a ``seed`` without ``folds`` or that is
        not an integer >= 0, more than one metric (a cutoff range), a metric that is
        no ranking metric of a run and judgments (``logloss``, ``ctr@10``, ``rbo``) or
        reads another table besides them (``pop_rsp@10``, ``item_mad@10``), a
        metric with no better direction (``num_ret``, ``unjudged@10``), a metric with ``agg=``
        (``"P(agg='std')@1"``) or summarized its own way (``gm_map``),
        a ``norm`` that changes nothing in a method of positions (``method="rrf",
        norm="min-max"``).
    UnknownMetricError
        An unknown ``norm``.
    InvalidValueError
        A ``system=`` naming the query ids', document ids', scores' or ranks' column
        (``system='query_id'``), as :func:`~polars_irmetrics.fuse` refuses it.

    Examples
    --------
    ``bm25`` ranks the relevant ``a`` first, ``dense`` ranks it last. After min-max,
    ``a`` scores ``w_bm25`` and ``b`` ``0.5 w_bm25 + w_dense``: ``a`` is first once
    ``bm25`` weighs more than 2/3 (weights 0.75 and 1.0); ties go to the last point.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> docs = {"query_id": "q1", "doc_id": ["a", "b", "c"]}
    >>> bm25 = pl.DataFrame({**docs, "score": [3.0, 2.0, 1.0]})
    >>> dense = pl.DataFrame({**docs, "score": [0.1, 0.9, 0.5]})
    >>> qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    >>> best, grid = irm.optimize_fusion({"bm25": bm25, "dense": dense}, "mrr", qrels=qrels,
    ...                                  step=0.25, return_grid=True)
    >>> best
    {'weights': [1.0, 0.0]}
    >>> grid["mrr"].to_list()
    [0.3333333333333333, 0.3333333333333333, 0.5, 1.0, 1.0]
    """
    # a system= naming the ids', scores' or ranks' column: before any other check
    check_system(
        runs,
        FusionOptions(system=system, query_id=query_id, doc_id=doc_id, score=score, rank=rank),
    )
    request = _objective(metric)
    fusion = get_fusion_method(method)
    if norm == "auto":  # ranx's default min-max, where the method reads scores
        normalised = "min-max" if needs_score(fusion, None) else None
    else:
        try:
            normalised = resolve_norm(norm)
        except UnknownMetricError as error:
            raise UnknownMetricError(
                f"{error}, or 'auto' (the default: min-max for a method that reads scores, "
                "none for one that reads positions)"
            ) from None
        check_positions_norm(fusion, norm, normalised)  # a no-op norm: as fuse refuses it
    param = SEARCHED.get(fusion.name)
    if param is None:
        raise MetricParameterError(
            f"optimize_fusion searches {', '.join(SEARCHED)}; {fusion.name} has no grid "
            "(trained methods are fitted with fit_fusion)"
        )
    relevance_level = check_relevance_level(relevance_level)
    buckets = check_buckets(buckets)
    refuse_spill_without_buckets(spill_dir, buckets, "searches")  # as fuse refuses it
    check_spill_dir(spill_dir)
    check_progress(progress)
    if not isinstance(return_grid, bool):
        raise InvalidValueError(
            f"return_grid must be True or False, got {return_grid!r}: pass return_grid=True "
            "to also return every grid point's mean, or return_grid=False"
        )
    if folds is not None and (isinstance(folds, bool) or not isinstance(folds, int) or folds < 2):
        raise MetricParameterError(f"folds={folds!r} is not valid; it must be an integer >= 2")
    if folds is not None and (
        isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0
    ):
        raise MetricParameterError(
            f"seed={seed!r} is not valid; it must be an integer >= 0 (it seeds the "
            "assignment of the queries to the folds), e.g. seed=0"
        )
    if folds is None and (seed != 0 or isinstance(seed, bool)):
        raise MetricParameterError(
            f"seed={seed!r} is not read without folds=: it seeds the assignment of the "
            "queries to the cross-validation folds, and the search over every judged query "
            "draws nothing; drop seed= (it would change nothing), or pass folds= with it "
            "(e.g. folds=5)"
        )
    options = FusionOptions(
        method=fusion.name,
        norm=normalised,
        system=system,
        query_id=query_id,
        doc_id=doc_id,
        score=score,
        rank=rank,
    )
    gathered = gather(runs, options)
    names = gathered.names
    n = len(names)
    points = grid_points(param, n, step)
    q, d = query_id, doc_id
    # where a run ordered by its ranks gives one rank to several documents: warned
    tie = said_flags(gathered, options)
    tied = [flag.meta.output_name() for flag in tie]
    long = prepare(gathered, fusion, normalised, None, options).with_columns(tie)
    present = _present(long)
    if param == "weights":
        row = fusion.contribution({})
    elif param in ("k", "phi"):
        row = pl.col(POS).cast(pl.Float64)
    else:
        row = fusion.contribution({})
    long = long.with_columns(row.alias(VALUE))
    # fuse adds scores of any size with wide_sum (raw scores, or max's quotients)
    wide_sums = needs_score(fusion, None) and normalised in (None, "max")
    per_run = [
        pl.col(VALUE).filter(pl.col(RUN) == i).first().alias(f"__irmf_v{i}") for i in range(n)
    ]
    # the runs of each document and query counted, as by fuse (fusion.overlap): where no
    # run holds every query, and under norm='max' the runs whose scores a query's top
    # score below the floor divided by 1e-9, named in a warning
    overlap = Overlap(
        names=names,
        query_id=q,
        doc_id=d,
        text_ids=(is_text(gathered.id_dtypes[0]), is_text(gathered.id_dtypes[1])),
        runs=gathered.frame.select(RUN, q, d),
        floor=normalised == "max",
    )
    wide = long.group_by(q, d).agg(
        *per_run,
        pl.len().cast(pl.Float64).alias(_CNT),
        # the same bits in any row order, and as fuse's (scores of any size: wide)
        (wide_sum if wide_sums else exact_sum)(pl.col(VALUE)).alias(_SUM),
        *flags_for(names, present),
        *[pl.col(name).any().alias(name) for name in tied],
        *overlap.words(None if present is None else pl.col(RAW).is_not_null()),
    )
    words = [*overlap.masks, *overlap.floor_masks]
    wide_schema = pl.Schema(
        {k: v for k, v in wide.collect_schema().items() if k not in (BAD, DUP, *tied, *words)}
    )
    wide = wide.cache()  # read twice: the scores, and counted by the runs of each
    tally = overlap.tally(wide)
    wide = pl.concat([wide.drop(words), tally], how="diagonal")
    # read after the grid (whose coverage warnings are left unsaid: fusion.judged)
    count_rows: list[pl.DataFrame] = []
    counted = Counts(KIND, overlap.columns, count_rows.append)
    wide = checked(wide, gathered, options, wide_schema, counted)
    if param == "weights":
        grid = pl.LazyFrame(
            {
                GRID: list(range(len(points))),
                **{f"__irmf_w{i}": [float(p[i]) for p in points] for i in range(n)},
            },
            schema={GRID: pl.Int32, **{f"__irmf_w{i}": pl.Float64 for i in range(n)}},
        )
    else:
        grid = pl.LazyFrame(
            {GRID: list(range(len(points))), _PARAM: [float(p) for p in points]},
            schema={GRID: pl.Int32, _PARAM: pl.Float64},
        )
    cutoff = top_k_cutoff(request)
    if cutoff is not None and fusion.name in CONVEX:
        wide = _prune(wide, n, q, cutoff)
    judged = _judgments(qrels, q, d, relevance, gathered.id_dtypes)

    def evaluate_grid(
        part: pl.LazyFrame, judged_part: pl.LazyFrame | None, _groups: pl.LazyFrame | None
    ) -> pl.LazyFrame:
        """Per (grid point, query) scores of the queries in ``part`` (the wide table)."""
        # one integer group key for (grid point, query): cheaper windows than two keys
        part = part.with_columns(pl.col(q).rank("dense").cast(pl.Int64).alias(_QCODE))
        fused = (
            part.join(grid, how="cross")
            .select(
                GRID,
                q,
                d,
                (pl.col(GRID).cast(pl.Int64) * 2**32 + pl.col(_QCODE)).alias(_KEY),
                _fused_score(fusion.name, n, wide=wide_sums).alias(_SCORE),
            )
            .cache()  # read by the ranking and by the overflow's flag
        )
        # a fused score beyond float64's range (finite scores whose sum or product
        # overflows; 0 * inf is NaN): each (point, query)'s first, refused as fuse
        # refuses it, where it was ranked as infinite, tied with every other such one
        over = (
            fused.filter(~pl.col(_SCORE).is_finite())
            .group_by(GRID, q)
            .agg(pl.col(d, _SCORE).sort_by(d).first())
            .select(GRID, q, pl.struct(d, _SCORE).alias(_OVER))
        )
        keyed = fused.with_columns(rank_key(_SCORE))
        if cutoff is not None:
            # only rows scoring at least the group's k-th best can be in its top k, and
            # every row above a kept row is kept, so positions among the kept rows are
            # their positions in the whole list: rank a few rows per group, not all
            kth = pl.col(RANK_KEY).top_k(cutoff).min().over(_KEY)
            keyed = keyed.filter(pl.col(RANK_KEY) >= kth)
        ranked = positions(keyed, [_KEY], RANK_KEY, d, _RANK)
        if cutoff is not None:
            ranked = ranked.filter(pl.col(_RANK) <= cutoff)
        scores = evaluate(
            ranked.select(GRID, q, d, _RANK).cache(),
            metric,
            qrels=judged_part,
            systems=GRID,
            per_query=True,
            order="rank",
            # one row per (grid point, document) by construction, each run's
            # duplicates refused when ``wide`` was checked
            check_duplicates=False,
            query_id=q,
            doc_id=d,
            rank=_RANK,
            relevance=relevance,
            relevance_level=relevance_level,
        )
        return scores.join(over, on=[GRID, q], how="left", maintain_order="left")

    count = _bucket_count(gathered.frame, len(points), buckets)
    with quiet():  # the grid's points are no systems to warn of (fusion.judged)
        if count == 1:
            per_query = evaluate_grid(wide, judged, None).collect()
        else:
            per_query = evaluate_in_buckets(
                wide,
                judged,
                None,
                query_id=q,
                buckets=count,
                spill_dir=spill_dir,
                evaluate_part=evaluate_grid,
                schema=evaluate_grid(wide, judged, None).collect_schema(),
                progress=progress,
            ).collect()
    if count_rows:
        overlap.read_queries(pl.concat(count_rows, how="vertical"))
    _refuse_overflow(per_query, points, param, options)
    label = next(c for c in per_query.columns if c not in (GRID, q, _OVER))
    # the judged queries, and the runs' judged documents counted with them: warned of
    # once per run (and once for the runs together missing most judged queries)
    judged_queries, counts = pl.collect_all(
        [
            judged.select(pl.col(q).unique().sort()),
            judged_counts(gathered.frame, judged, names, q, d),
        ]
    )
    warn_on_training(
        counts,
        caller="optimize_fusion",
        missed=True,
        hints=judged_hints(gathered.frame, judged, q, d),
        docs=spelt_docs(gathered.frame, judged, names, q, d),
        partly=spelt_partly(gathered.frame, judged, names, q, d),
    )
    queries = judged_queries[q].to_list()
    matrix = _matrix(per_query, label, len(points), q, queries)
    means = matrix.mean(axis=1) if matrix.shape[1] else np.zeros(len(points))
    higher = bool(request.higher_is_better)  # None is refused by _objective
    best_index = _last_best(means, higher)

    def as_value(point: Any) -> Any:
        return [float(x) for x in point] if param == "weights" else point

    best = {param: as_value(points[best_index])}
    out: list[Any] = [best]
    if return_grid:
        column = pl.Series(param, [as_value(p) for p in points])
        out.append(pl.DataFrame([column, pl.Series(label, means.tolist(), dtype=pl.Float64)]))
    if folds is not None:
        out.append(_cross_validate(matrix, folds, seed, points, param, as_value, higher))
    return best if len(out) == 1 else tuple(out)


def _refuse_overflow(
    per_query: pl.DataFrame, points: list[Any], param: str, options: FusionOptions
) -> None:
    """Refuse the grid's first (by point, query and document) fused score that is not
    finite, in fuse's words, naming the point."""
    q = options.query_id
    over = per_query.filter(pl.col(_OVER).is_not_null()).sort(GRID, q).head(1)
    if not over.height:
        return
    row = over.row(0, named=True)
    first = row[_OVER]
    point = points[row[GRID]]
    shown = [float(x) for x in point] if param == "weights" else point
    at = f" at {param}={shown} (a point of the grid)"
    raise overflow_error(row[q], first[options.doc_id], first[_SCORE], options, at)


def _matrix(
    per_query: pl.DataFrame, label: str, n_points: int, q: str, queries: list[Any]
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Grid points x judged queries; a query the plan has no row for scores 0 (it
    retrieved nothing, as ``evaluate``'s ``unretrieved='zero'``)."""
    index = {v: i for i, v in enumerate(queries)}
    matrix = np.zeros((n_points, len(queries)))
    cols = np.array([index[v] for v in per_query[q].to_list()], dtype=np.int64)
    rows = per_query[GRID].to_numpy().astype(np.int64)
    matrix[rows, cols] = per_query[label].to_numpy()
    return matrix


#: ``buckets="auto"``: about this many (grid point, document) rows per bucket.
ROWS_PER_BUCKET = 30_000_000


def _bucket_count(long: pl.LazyFrame, n_points: int, buckets: Buckets) -> int:
    if buckets is None:
        return 1
    if buckets != "auto":
        return int(buckets)
    rows: int = long.select(pl.len()).collect().item()
    return max(1, math.ceil(rows * n_points / ROWS_PER_BUCKET))


#: The keywords of irm.evaluate that optimize_fusion takes too: an evaluation's fix
#: "pass relevance_level= to irm.evaluate" names optimize_fusion instead
#: (:func:`~polars_irmetrics.ground.calls.named_as`).
_EVALUATE_KEYWORDS = frozenset(
    {"qrels", "query_id", "doc_id", "score", "rank", "relevance", "relevance_level"}
)


def _objective(metric: object) -> MetricRequest:
    """The one metric ``optimize_fusion`` optimises, parsed once."""
    if not isinstance(metric, str):
        raise MetricParameterError(
            f"metric={metric!r} is not valid; optimize_fusion optimises one metric, "
            "given by name (e.g. metric='ndcg@10')"
        )

    def usable(requests: list[tuple[str, MetricRequest]]) -> None:
        # before the options of its evaluation are built: they would name an option the
        # caller never gave (order='rank' beside logloss), not the metric; and before a
        # missing cutoff, whose fix ('pop_rsp@10') would be refused here next
        for _, request in requests:
            if request.route != "offline":  # auc, ctr, ips, rbo, ps_ndcg, coverage...
                raise MetricParameterError(
                    f"metric={metric!r} is one of {ROUTE_METRICS[request.route]}, not a "
                    "ranking metric of a run and judgments: optimize_fusion scores each "
                    "fused ranking against qrels= alone, with one such metric (e.g. "
                    "metric='ndcg@10', 'map')"
                )
            extra = [n for n in request.reads if n in INPUTS and n != "judgments"]
            if extra:  # pop_rsp, item_mad...: the door's refusal names a keyword not taken
                raise MetricParameterError(
                    f"metric={metric!r} reads {INPUTS[extra[0]][0]}, which optimize_fusion "
                    "does not take: it scores each fused ranking against qrels= alone, "
                    "with a ranking metric of a run and judgments (e.g. metric='ndcg@10')"
                )

    with named_as("irm.optimize_fusion", _EVALUATE_KEYWORDS):  # a fix names this call
        requests = parse_metric_list(metric, usable=usable)
    if len(requests) != 1:
        raise MetricParameterError(
            f"metric={metric!r} names {len(requests)} metrics; optimize_fusion optimises "
            "one (e.g. metric='ndcg@10')"
        )
    request = requests[0][1]
    refuse_summaries(requests, calls="irm.optimize_fusion")  # it maximises the mean
    if request.higher_is_better is None:
        raise MetricParameterError(
            f"metric={metric!r} has no better direction (neither a higher nor a lower "
            "value is better), so there is no best weight to find; optimize_fusion "
            "maximises or minimises one metric (e.g. metric='ndcg@10')"
        )
    return request


def _last_best(values: np.ndarray[Any, np.dtype[np.float64]], higher: bool) -> int:
    """The last index of the highest value (the lowest, where lower is better)."""
    flipped = values[::-1]
    return int(len(values) - 1 - (np.argmax(flipped) if higher else np.argmin(flipped)))


def _cross_validate(
    matrix: np.ndarray[Any, np.dtype[np.float64]],
    folds: int,
    seed: int,
    points: Sequence[Any],
    param: str,
    as_value: Any,
    higher: bool,
) -> pl.DataFrame:
    n_queries = matrix.shape[1]
    if n_queries < folds:
        raise MetricParameterError(
            f"folds={folds} needs at least {folds} evaluated queries; there are {n_queries}"
        )
    order = np.random.default_rng(seed).permutation(n_queries)
    fold_of = np.empty(n_queries, dtype=np.int64)
    fold_of[order] = np.arange(n_queries) % folds
    rows: dict[str, list[Any]] = {"fold": [], "queries": [], param: [], "train": [], "test": []}
    for fold in range(folds):
        test = fold_of == fold
        train_means = matrix[:, ~test].mean(axis=1)
        chosen = _last_best(train_means, higher)
        rows["fold"].append(fold + 1)
        rows["queries"].append(int(test.sum()))
        rows[param].append(as_value(points[chosen]))
        rows["train"].append(float(train_means[chosen]))
        rows["test"].append(float(matrix[chosen, test].mean()))
    return pl.DataFrame(rows)
