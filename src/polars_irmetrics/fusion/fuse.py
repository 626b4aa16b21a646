"""``irm.fuse``: combine runs into one, in one lazy plan.

The plan: the runs as one long frame (:mod:`.frame`), each run's positions and
normalised scores per query as windows (:mod:`.norms`), each document's contribution
per run and their combination per (query, document) as one group-by (:mod:`.methods`),
then the fused run's ranks. Condorcet instead counts pairwise votes in a self-join of
each query's candidates, and the trained methods first join their fitted tables
(:mod:`.train`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, overload

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MetricParameterError
from polars_irmetrics.fusion.fitted import apply_fitted, check_fitted
from polars_irmetrics.fusion.frame import (
    BAD,
    DUP,
    RAW,
    Counts,
    Gathered,
    Runs,
    checked,
    expand,
    flags_for,
    gather,
    positions,
    resolve_weights,
    said_flags,
)
from polars_irmetrics.fusion.methods import (
    CANDIDATES,
    LEN,
    POS,
    PRESENT,
    RUN,
    SCORE,
    VALUE,
    WEIGHT,
    WIDE,
    FusionMethod,
    get_fusion_method,
    resolve_params,
)
from polars_irmetrics.fusion.norms import (
    FLOORED,
    POSITION_NORMS,
    SCORE_NORMS,
    floored,
    normalise,
    resolve_norm,
)
from polars_irmetrics.fusion.options import FusionOptions, Weights
from polars_irmetrics.fusion.overlap import KIND, Overlap
from polars_irmetrics.ground.auto import choose
from polars_irmetrics.ground.buckets import (
    Buckets,
    check_buckets,
    check_spill_dir,
    evaluate_in_buckets,
    refuse_spill_without_buckets,
)
from polars_irmetrics.ground.progress import check_progress
from polars_irmetrics.ground.validate import is_text
from polars_irmetrics.metrics.scope import exact_sum

__all__ = ["build_fusion", "check_system", "fuse", "prepare"]

_X, _Y = "__irmf_x", "__irmf_y"
_PX, _PY = "__irmf_px", "__irmf_py"
_WINS = "__irmf_wins"


RANK_KEY = "__irmf_key"


def rank_key(score: str) -> pl.Expr:
    """The fused score rounded to 12 significant digits, which the fused run is ranked by:
    sums of the same terms in another order (``fuse`` and ``optimize_fusion`` add them
    differently) then rank the same way, ties included."""
    return pl.col(score).round_sig_figs(12).alias(RANK_KEY)


def needs_score(method: FusionMethod, norm: str | None) -> bool:
    """Whether the fusion reads scores (not only positions)."""
    return method.uses == "score" or method.name == "segfuse" or norm in SCORE_NORMS


def check_positions_norm(
    method: FusionMethod, given: str | None, norm: str | None, *, fit: bool = False
) -> None:
    """Refuse a normalisation that cannot change a fusion reading positions alone.

    A method that reads each run's positions and not its scores (RRF, ISR, RBC, Borda,
    Condorcet, the trained methods but SegFuse) gives the same fusion with every
    normalisation that keeps each run's order (``min-max``, ``max``, ``sum``,
    ``zmuv``, ``rank``) as with none: such a ``norm`` is refused, not ignored. Only
    :data:`~polars_irmetrics.fusion.norms.POSITION_NORMS` change the positions.
    ``given`` is the name as passed, ``norm`` its canonical name. ``fit``: the norm of
    :func:`~polars_irmetrics.fit_fusion`, whose tables every trained method (SegFuse
    too: its segments' hit rates) fits on the positions alone.

    Examples
    --------
    >>> from polars_irmetrics.fusion.fuse import check_positions_norm
    >>> from polars_irmetrics.fusion.methods import get_fusion_method
    >>> check_positions_norm(get_fusion_method("rrf"), "borda", "borda")
    >>> check_positions_norm(get_fusion_method("rrf"), "zmuv", "zmuv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: norm='zmuv' changes nothing in rrf, ...
    """
    if norm is None or norm in POSITION_NORMS:
        return
    changing = " or ".join(repr(n) for n in POSITION_NORMS)
    if needs_score(method, None):
        if not fit:
            return
        raise MetricParameterError(
            f"norm={given!r} changes nothing in fit_fusion's {method.name} table, which is "
            f"fitted on each run's positions and not its scores: {norm!r} keeps every run's "
            f"order, so the table would be the one of norm=None. Drop norm= here and pass it "
            f"to fuse, which reads the scores (fuse(runs, {method.name!r}, fitted=fitted, "
            f"norm={given!r})), or pass a normalisation that changes the positions ({changing})"
        )
    raise MetricParameterError(
        f"norm={given!r} changes nothing in {method.name}, which reads each run's "
        f"positions and not its scores: {norm!r} keeps every run's order, so the fusion "
        f"would be the one of norm=None. Drop norm=, or pass a normalisation that changes "
        f"the positions ({changing}), or use a method that reads scores (e.g. 'sum')"
    )


def prepare(
    gathered: Gathered,
    method: FusionMethod,
    norm: str | None,
    weights: tuple[float, ...] | None,
    options: FusionOptions,
) -> pl.LazyFrame:
    """The long frame with ``SCORE`` normalised and, where the method reads them,
    ``POS``/``LEN`` (and ``PRESENT``/``CANDIDATES`` for Borda and Condorcet).
    """
    q, d = options.query_id, options.doc_id
    if needs_score(method, norm) and not gathered.has_score:
        name = gathered.names[gathered.order_columns.index(options.rank)]
        what = f"normalisation {norm!r}" if norm in SCORE_NORMS else f"method {method.name!r}"
        raise ColumnNotFoundError(
            f"run {name!r} has no {options.score!r} column, and {what} reads scores: give "
            f"every run a score column (name it with score=...), or use a rank-based "
            f"method such as 'rrf' with norm=None or 'borda'"
        )
    if gathered.parts is None:
        long = _per_run(gathered.frame, [RUN, q], method, norm, options)
    else:  # each run alone: its windows group by the query only
        long = pl.concat(
            [_per_run(part, [q], method, norm, options) for part in gathered.parts],
            how="vertical",
        )
    if norm == "borda":
        long = expand(long, q, d)
        c, n = pl.col(CANDIDATES).cast(pl.Float64), pl.col(LEN).cast(pl.Float64)
        # a run's unretrieved candidates all tie: placed after its list by the rule of
        # every tie (frame.positions), the document id descending, compared as text
        absent_order = (
            pl.col(d)
            .cast(pl.String)
            .rank("ordinal", descending=True)
            .over([RUN, q, PRESENT])
            .cast(pl.Int64)
        )
        long = long.with_columns(
            pl.when(pl.col(PRESENT))
            .then(1.0 - (pl.col(POS) - 1).cast(pl.Float64) / c)
            .otherwise(0.5 - (n - 1.0) / (2.0 * c))
            .alias(SCORE),
            pl.when(pl.col(PRESENT))
            .then(pl.col(POS))
            .otherwise(pl.col(LEN) + absent_order)
            .alias(POS),
        ).with_columns(
            pl.col(CANDIDATES).alias(LEN),
            pl.lit(True).alias("__irmf_retrieved"),
        )
        # after Borda normalisation every candidate is in every run (as in ranx)
        long = long.with_columns(pl.col("__irmf_retrieved").alias(PRESENT)).drop(
            "__irmf_retrieved"
        )
    elif method.uses in ("borda", "condorcet"):
        long = expand(long, q, d)
    if weights is not None:
        long = long.with_columns(
            pl.col(RUN)
            .replace_strict(dict(enumerate(weights)), return_dtype=pl.Float64)
            .alias(WEIGHT)
        )
    return long


def _per_run(
    long: pl.LazyFrame,
    by: list[str],
    method: FusionMethod,
    norm: str | None,
    options: FusionOptions,
) -> pl.LazyFrame:
    """The per-(run, query) columns: ``POS``, ``LEN`` and the normalised ``SCORE``,
    as windows over ``by`` (the run and the query, or the query of one run's rows)."""
    d = options.doc_id
    inverted = norm == "min-max-inverted"
    needs_positions = method.needs_positions or norm in ("rank", "borda")
    if needs_positions:
        order = "__irmf_order"
        long = positions(
            long.with_columns((-pl.col(RAW) if inverted else pl.col(RAW)).alias(order)),
            by,
            order,
            d,
            POS,
        ).drop(order)
        if norm == "rank" or method.name in ("probfuse", "slidefuse"):
            long = long.with_columns(pl.len().over(by).cast(pl.Int64).alias(LEN))
    if norm is None:
        long = long.with_columns(pl.col(RAW).alias(SCORE))
    elif norm in SCORE_NORMS:
        long = normalise(norm, long, RAW, by, SCORE)
        flag = floored(norm, pl.col(RAW), by)
        if flag is not None:  # counted beside the overlap (fusion.overlap)
            long = long.with_columns(flag.alias(FLOORED))
    elif norm == "rank":
        long = long.with_columns(
            (1.0 - (pl.col(POS) - 1).cast(pl.Float64) / pl.col(LEN)).alias(SCORE)
        )
    return long


def _present(long: pl.LazyFrame) -> pl.Expr | None:
    return pl.col(PRESENT) if PRESENT in long.collect_schema() else None


def _condorcet(long: pl.LazyFrame, weighted: bool, q: str, d: str) -> pl.LazyFrame:
    """Score ``c - i`` for the ``i``-th candidate (from 0) by pairwise wins (Copeland).

    Run ``r`` votes for ``x`` over ``y`` when it ranks ``x`` higher (a retrieved document
    above one it did not retrieve); ``x`` beats ``y`` with more votes (weighted by the
    runs' weights), a draw counts half; a run that retrieves neither casts no vote on
    the pair. When the majority relation is a strict order and every run retrieves at
    least one document of each pair this is ranx's order; ranx breaks cycles and draws
    by its sort's comparisons, and counts a run that retrieves neither document as a
    vote for the one its sort compares second (its order then follows the set order,
    hence ``PYTHONHASHSEED``).
    """
    weight = pl.col(WEIGHT) if weighted else pl.lit(1.0)
    side = long.select(RUN, q, d, POS, weight.alias(WEIGHT))
    pairs = side.rename({d: _X, POS: _PX}).join(
        side.select(RUN, q, pl.col(d).alias(_Y), pl.col(POS).alias(_PY)), on=[RUN, q]
    )
    px, py = pl.col(_PX), pl.col(_PY)
    x_vote = px.is_not_null() & (py.is_null() | (px < py))
    y_vote = py.is_not_null() & (px.is_null() | (py < px))
    votes = (
        pairs.filter(pl.col(_X) != pl.col(_Y))
        .group_by(q, _X, _Y)
        .agg(
            exact_sum(x_vote.cast(pl.Float64) * pl.col(WEIGHT)).alias("__irmf_vx"),
            exact_sum(y_vote.cast(pl.Float64) * pl.col(WEIGHT)).alias("__irmf_vy"),
        )
        .group_by(q, _X)
        .agg(
            (
                (pl.col("__irmf_vx") > pl.col("__irmf_vy")).cast(pl.Float64)
                + 0.5 * (pl.col("__irmf_vx") == pl.col("__irmf_vy")).cast(pl.Float64)
            )
            .sum()
            .alias(_WINS)
        )
        .rename({_X: d})
    )
    candidates = long.select(q, d, CANDIDATES).unique()
    scored = candidates.join(votes, on=[q, d], how="left").with_columns(
        pl.col(_WINS).fill_null(0.0)
    )
    placed = positions(scored, [q], _WINS, d, "__irmf_place")
    return placed.select(
        q,
        d,
        (pl.col(CANDIDATES) - pl.col("__irmf_place") + 1).cast(pl.Float64).alias(VALUE),
    )


#: The columns fusion reads from a long frame of runs as its data, by option.
_DATA_COLUMNS = {
    "query_id": "query ids",
    "doc_id": "document ids",
    "score": "scores",
    "rank": "ranks",
}


def check_system(runs: object, options: FusionOptions) -> None:
    """Refuse a ``system=`` that names one of the columns fusion reads as data (the
    query ids, the document ids, the scores or the ranks) of one long frame of runs:
    its values would be taken for run names (``system='query_id'``: one run per query,
    each listing its documents, refused as duplicates or fused as unrelated runs).

    A dict of runs (which ``gather`` refuses ``system=`` with) and a ``system=`` that
    is no text (refused there, named) are left to :func:`~.frame.gather`.

    >>> check_system(pl.DataFrame(), FusionOptions(system="query_id"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: system='query_id' names the column of the ...
    """
    system = options.system
    if not isinstance(runs, pl.DataFrame | pl.LazyFrame) or not isinstance(system, str):
        return
    for name, role in _DATA_COLUMNS.items():
        if getattr(options, name) == system:
            raise InvalidValueError(
                f"system={system!r} names the column of the {role} ({name}={system!r}), "
                "one of the columns fusion reads as data, not as run names: pass as system= "
                "the column that tells the runs apart (a run name on every row), e.g. "
                "system='run'"
            )


def build_fusion(runs: Runs, options: FusionOptions) -> tuple[pl.LazyFrame, bool]:
    """The lazy plan behind :func:`fuse`, and whether its input was eager."""
    check_system(runs, options)
    if isinstance(options.score, str) and options.score == options.rank:  # names: gather
        # the fused run gives its scores under score= and its ranks under rank=: one
        # name for both made polars' own duplicate-name error at collect
        raise InvalidValueError(
            f"score={options.score!r} and rank={options.rank!r} name one column, but the "
            "fused run gives its scores and its ranks in two columns named by them: leave "
            "score= out (a run without a score column is ordered by its rank column, "
            "lowest first), or rename the runs' rank column and pass its new name as score="
        )
    method = get_fusion_method(options.method)
    norm = resolve_norm(options.norm)
    params = resolve_params(method, options.params)
    if options.depth is not None and (
        isinstance(options.depth, bool) or not isinstance(options.depth, int) or options.depth < 1
    ):
        raise MetricParameterError(
            f"depth={options.depth!r} is not valid; it must be an integer >= 1 (the number "
            "of fused documents kept per query), or None for all"
        )
    check_positions_norm(method, options.norm, norm)
    if not isinstance(options.sort, bool):
        raise InvalidValueError(
            f"sort must be True or False, got {options.sort!r}: pass sort=True to sort the "
            "fused run by query and rank, or sort=False to leave its rows unsorted"
        )
    given = check_buckets(options.buckets)
    refuse_spill_without_buckets(options.spill_dir, given, "fuses")
    check_spill_dir(options.spill_dir)
    check_progress(options.progress)
    gathered = gather(runs, options)
    weights = resolve_weights(method, options.weights, gathered.names)
    # scores as given (no normalisation, or max's quotient) are of any size: their sums
    # keep the same bits in any row order from 2**32 too (methods.WIDE)
    summing = (
        {**params, WIDE: 1.0} if needs_score(method, None) and norm in (None, "max") else params
    )
    q, d = options.query_id, options.doc_id
    # "auto-memory": one plan or buckets, chosen from the runs' size (plan.auto)
    buckets = choose(gathered.frame).buckets if given == "auto-memory" else given
    fitted_table: pl.LazyFrame | None = None
    if method.trained:
        fitted_table = check_fitted(
            method, options.fitted, gathered.names, system=gathered.system_column
        )
    elif options.fitted is not None:
        raise MetricParameterError(
            f"{method.name} is not a trained method; drop fitted=, or use one of "
            "probfuse, segfuse, slidefuse, posfuse, bayesfuse, mapfuse"
        )

    # the runs' overlap, counted beside the fused rows of each part (fusion.overlap)
    overlap = Overlap(
        names=gathered.names,
        query_id=q,
        doc_id=d,
        text_ids=(is_text(gathered.id_dtypes[0]), is_text(gathered.id_dtypes[1])),
        runs=gathered.frame.select(RUN, q, d),
        floor=norm == "max",
    )
    # what is warned of (frame.said_flags): a run ordered by its ranks that gives one
    # rank to several documents, a rank column beside the scores that orders otherwise
    tie = said_flags(gathered, options)
    tied = [flag.meta.output_name() for flag in tie]
    tied_any = [pl.col(name).any().alias(name) for name in tied]

    def fuse_part(part: pl.LazyFrame) -> pl.LazyFrame:
        """The fused and ranked rows (with check flags) of the queries in ``part``, and
        the count rows of the runs' overlap there."""
        # a bucket's rows are not the runs' frames: its windows group by run and query
        own = gathered if part is gathered.frame else replace(gathered, frame=part, parts=None)
        long = prepare(own, method, norm, weights, options).with_columns(tie)
        present = _present(long)
        # the runs that retrieve each document, beside the checks: the candidates a run
        # did not retrieve (Borda, Condorcet) have no value of their own
        runs_of = overlap.words(None if present is None else pl.col(RAW).is_not_null())
        if method.uses == "condorcet":
            values = _condorcet(long, method.weighted, q, d)
            checks = long.group_by(q, d).agg(
                *flags_for(gathered.names, present), *tied_any, *runs_of
            )
            checks = checks.cache()  # read twice: by the fused rows and the counts
            counts = overlap.tally(checks)
            fused = values.join(checks, on=[q, d], how="left").rename({VALUE: options.score})
        else:
            if fitted_table is not None:
                long = apply_fitted(method, long, fitted_table, params, options)
            fused = (
                long.group_by(q, d)
                .agg(
                    method.combine(method.contribution(params), summing).alias(options.score),
                    *flags_for(gathered.names, present),
                    *tied_any,
                    *runs_of,
                )
                .cache()
            )  # read twice: ranked, and counted by the runs that retrieve each
            counts = overlap.tally(fused)
        ranked = positions(
            fused.with_columns(rank_key(options.score)), [q], RANK_KEY, d, options.rank
        ).drop(RANK_KEY)
        if options.depth is not None:
            keep = (pl.col(options.rank) <= options.depth) | pl.col(BAD) | pl.col(DUP)
            ranked = ranked.filter(keep)
        fused_rows = ranked.select(q, d, options.score, options.rank, BAD, DUP, *tied)
        return pl.concat([fused_rows, counts], how="diagonal")

    rank = options.rank
    if buckets is None:
        ranked = fuse_part(gathered.frame)
    else:
        ranked = evaluate_in_buckets(
            gathered.frame,
            None,
            None,
            query_id=q,
            buckets=buckets,
            spill_dir=options.spill_dir,
            evaluate_part=lambda part, _qrels, _groups: fuse_part(part),
            schema=fuse_part(gathered.frame).collect_schema(),
            progress=options.progress,
        )
    ranked = ranked.select(q, d, options.score, rank, BAD, DUP, *tied, *overlap.columns)
    if options.sort:
        ranked = ranked.sort(q, rank)
    schema = pl.Schema(
        {
            q: gathered.id_dtypes[0],
            d: gathered.id_dtypes[1],
            options.score: pl.Float64(),
            rank: pl.Int64(),
        }
    )
    counts = Counts(KIND, overlap.columns, overlap.warn)
    return checked(ranked, gathered, options, schema, counts, score=options.score), gathered.eager


@overload
def fuse(
    runs: Mapping[str, pl.DataFrame] | pl.DataFrame,
    method: str = ...,
    *,
    norm: str | None = ...,
    weights: Weights | None = ...,
    depth: int | None = ...,
    fitted: pl.DataFrame | pl.LazyFrame | None = ...,
    sort: bool = ...,
    buckets: Buckets = ...,
    spill_dir: str | Path | None = ...,
    progress: bool | None = ...,
    system: str | None = ...,
    query_id: str = ...,
    doc_id: str = ...,
    score: str = ...,
    rank: str = ...,
    **params: Any,
) -> pl.DataFrame: ...


@overload
def fuse(
    runs: Runs,
    method: str = ...,
    *,
    norm: str | None = ...,
    weights: Weights | None = ...,
    depth: int | None = ...,
    fitted: pl.DataFrame | pl.LazyFrame | None = ...,
    sort: bool = ...,
    buckets: Buckets = ...,
    spill_dir: str | Path | None = ...,
    progress: bool | None = ...,
    system: str | None = ...,
    query_id: str = ...,
    doc_id: str = ...,
    score: str = ...,
    rank: str = ...,
    **params: Any,
) -> pl.DataFrame | pl.LazyFrame: ...


def fuse(
    runs: Runs,
    method: str = "rrf",
    *,
    norm: str | None = None,
    weights: Weights | None = None,
    depth: int | None = None,
    fitted: pl.DataFrame | pl.LazyFrame | None = None,
    sort: bool = True,
    buckets: Buckets = None,
    spill_dir: str | Path | None = None,
    progress: bool | None = None,
    system: str | None = None,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    score: str = "score",
    rank: str = "rank",
    **params: Any,
) -> pl.DataFrame | pl.LazyFrame:
    """Fuse several runs into one run (RRF, CombSUM/MNZ, weighted sums, Borda, ...).

    Each run's scores are normalised per query (``norm``), each document gets a value
    per run from the method's formula, and the values are combined per (query,
    document), in one lazy plan. The result is a run ready for
    :func:`~polars_irmetrics.evaluate` and the TREC writer. Method and normalisation
    names are ranx's (``ranx.fuse``), and fused scores equal ranx's to rounding; see
    :mod:`polars_irmetrics.fusion.methods` for every formula and its paper.

    Parameters
    ----------
    runs
        A dict of run name to DataFrame/LazyFrame (each with ``query_id``, ``doc_id``
        and ``score`` or ``rank``), or one long frame whose ``system`` column names the
        run (runs are then ordered by name, which is the order of ``weights``). A pandas
        DataFrame or an Arrow table is converted, and a list-shaped run (a ``List`` of
        document ids per query) read in the long form, as :func:`~polars_irmetrics.evaluate`
        reads them.
    method
        ``rrf`` (``k``, default 60), ``isr``, ``log_isr``, ``logn_isr`` (``sigma``,
        default 0.01), ``rbc`` (``phi``), ``bordafuse``, ``w_bordafuse``,
        ``condorcet``, ``w_condorcet``, ``sum``, ``mnz``, ``max``, ``min``, ``med``,
        ``anz``, ``gmnz`` (``gamma``), ``wsum``, ``wmnz``, ``mixed``; trained (with
        ``fitted=``): ``probfuse``, ``segfuse``, ``slidefuse`` (``w``), ``posfuse``,
        ``bayesfuse``, ``mapfuse``. Aliases such as ``combsum`` or ``reciprocal_rank``
        are accepted.
    norm
        Per-(run, query) normalisation: ``min-max``, ``min-max-inverted``, ``max``,
        ``sum``, ``zmuv``, ``rank``, ``borda``, or ``None`` (default: raw scores).
        Unlike ``ranx.fuse`` (which defaults to ``min-max``), nothing is normalised
        unless asked. ``borda`` gives each run every candidate of the query (the
        documents any run retrieved): those it did not retrieve all tie, and are placed
        after its list by document id, descending compared as text (integer ids too).
        A method that reads positions alone (``rrf``, ``isr``, ``log_isr``,
        ``logn_isr``, ``rbc``, Borda, Condorcet, the trained methods but ``segfuse``)
        takes only ``min-max-inverted`` or ``borda``: the others keep every run's
        order, would change nothing, and are refused (ranx applies them, to no effect).
    weights
        Weighted methods: one weight per run (finite, >= 0, not all zero), as a list
        in the runs' order or a dict by run name (a string is refused).
    depth
        Keep the top ``depth`` fused documents per query (default: all).
    fitted
        Trained methods: the table :func:`~polars_irmetrics.fit_fusion` returned.
    sort
        Sort the result by query and rank (``True``, default). ``False`` leaves the rows in no
        particular order and skips that sort, the plan's costliest step after the
        group-by: :func:`~polars_irmetrics.evaluate` and the TREC writer do not need it.
    buckets, spill_dir
        Out of core, as in :func:`~polars_irmetrics.evaluate`: ``N`` or ``"auto"``
        splits the runs by a hash of the query into ``N`` Parquet buckets under
        ``spill_dir`` (an existing folder; default: the system's temporary folder)
        and fuses one bucket at a time (every step is per query, so the result is the
        same); ``None`` (default) fuses in one plan, and refuses a ``spill_dir``.
    progress
        Out of core, a bar of the buckets fused: ``None`` (default) in a terminal or
        a notebook only, ``True`` on any stream, ``False`` never
        (:mod:`polars_irmetrics.ground.progress`).
    system, query_id, doc_id, score, rank
        Column names. A run is ordered by its ``score`` column, as ranx orders runs; a
        run without one by its ``rank`` column (a ``rank`` column beside the scores that
        orders a query otherwise, which :func:`~polars_irmetrics.evaluate` would read,
        is named in an :class:`~polars_irmetrics.errors.IrmWarning`). So a ``rank=``
        given that names a column of a run that has a score column is refused (its
        ranks would be ignored), and so is a ``score=`` or ``rank=`` given that names no
        column of the runs. Ranks are
        read as an order alone, lowest first: 0, negative or with gaps, they order the
        run as their values do, and two documents of one rank tie (broken by the
        document id, descending, as tied scores are), where
        :func:`~polars_irmetrics.evaluate` refuses such ranks: an
        :class:`~polars_irmetrics.errors.IrmWarning` names the run, its queries and
        the first tie, as the fused scores depend on that assumed order.
    **params
        The method's parameters (``k``, ``sigma``, ``phi``, ``gamma``, ``w``).

    Returns
    -------
    DataFrame or LazyFrame
        ``query_id``, ``doc_id``, ``score``, ``rank`` (sorted by query and rank unless
        ``sort=False``); lazy when any run is lazy.

    Raises
    ------
    InvalidValueError
        Fewer than two runs, or two named alike (``1`` and ``'1'``); bad ``weights``;
        a NaN, infinite or null score or id; a ``sort`` that is not a bool; a
        ``spill_dir`` without ``buckets``, or that is not an existing folder's path; a
        ``rank=`` naming a column of a run ordered by its scores; ``score=`` and
        ``rank=`` naming one column (the fused run has both); a ``system=`` naming
        the query ids', document ids', scores' or ranks' column (``system='query_id'``);
        a ``fitted`` table that is not fit_fusion's (an index twice, missing or moved,
        a value not finite).
    UnknownMetricError
        An unknown method or normalisation (the message lists the valid names).
    MetricParameterError
        A missing or invalid parameter; a trained method without ``fitted``; a
        ``norm`` that changes nothing in a method reading positions alone.
    DuplicateError
        A run listing a document twice in one query.
    ColumnNotFoundError, ColumnTypeError
        A missing or mistyped column.

    Notes
    -----
    Positions (for rank-based methods and the fused run's ranks) follow the score,
    descending (the fused run by its score rounded to 12 significant digits, so that
    sums in a different order rank alike); ties are broken by document id,
    descending compared as text, in every method, as
    :func:`~polars_irmetrics.evaluate` and trec_eval break them (so a fused run
    evaluated by its ranks scores as it would by its scores, but where two scores are
    equal to 12 significant digits and not in their last digits: ``0.1 + 0.2`` beside
    ``0.3`` tie in its ranks; ``evaluate``'s ``order='auto'`` reads the ranks, and
    its check of them against the scores rounds float scores alike). A document a run did not
    retrieve contributes nothing to that run's term (Borda: the average of the
    remaining points; BayesFuse: ranx's ``log(0.001/0.999)``); after ``norm="borda"``
    each run holds every candidate, those it did not retrieve after its list, in the
    same tie order. Ids come back as String (string-like ids) or Int64 (integer
    ids). A query missing from some runs is fused from the
    runs that have it (ranx refuses such runs). Condorcet is exactly ranx's when the
    runs' pairwise majorities form a strict order and every run retrieves at least
    one document of each pair; otherwise a draw counts half a win (Copeland), where
    ranx's result depends on its sort's comparison order, and a run that retrieves
    neither document of a pair casts no vote on it, where ranx counts it as a vote
    for whichever document its sort compares second (so that its order can change
    with ``PYTHONHASHSEED``: ``a = {d1: 1}``, ``b = {d1: 2, d2: 1}``, ``c = {d3: 1}``,
    weights 0.5, 0.3, 0.2 fuse by ``w_condorcet`` here to d1, d2, d3, and in ranx to
    d1, d3, d2 under some seeds).

    Examples
    --------
    RRF with ``k=60``: ``a`` is first in ``bm25`` and second in ``dense``, so it scores
    ``1/61 + 1/62``; ``c`` only appears in ``dense``, at position 1: ``1/61``.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> bm25 = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b"], "score": [12.0, 9.5]})
    >>> dense = pl.DataFrame({"query_id": "q1", "doc_id": ["c", "a"], "score": [0.9, 0.8]})
    >>> fused = irm.fuse({"bm25": bm25, "dense": dense}, "rrf")
    >>> fused.with_columns(pl.col("score").round(6))
    shape: (3, 4)
    ┌──────────┬────────┬──────────┬──────┐
    │ query_id ┆ doc_id ┆ score    ┆ rank │
    │ ---      ┆ ---    ┆ ---      ┆ ---  │
    │ str      ┆ str    ┆ f64      ┆ i64  │
    ╞══════════╪════════╪══════════╪══════╡
    │ q1       ┆ a      ┆ 0.032522 ┆ 1    │
    │ q1       ┆ c      ┆ 0.016393 ┆ 2    │
    │ q1       ┆ b      ┆ 0.016129 ┆ 3    │
    └──────────┴────────┴──────────┴──────┘

    Weighted sum of min-max normalised scores: ``a`` scores ``0.5 * 1 + 0.5 * 0`` and
    ``c`` ``0.5 * 1``; the tie is broken by document id, descending (trec_eval's
    rule, and :func:`~polars_irmetrics.evaluate`'s): ``c`` first.

    >>> irm.fuse({"bm25": bm25, "dense": dense}, "wsum", norm="min-max", weights=[0.5, 0.5])
    shape: (3, 4)
    ┌──────────┬────────┬───────┬──────┐
    │ query_id ┆ doc_id ┆ score ┆ rank │
    │ ---      ┆ ---    ┆ ---   ┆ ---  │
    │ str      ┆ str    ┆ f64   ┆ i64  │
    ╞══════════╪════════╪═══════╪══════╡
    │ q1       ┆ c      ┆ 0.5   ┆ 1    │
    │ q1       ┆ a      ┆ 0.5   ┆ 2    │
    │ q1       ┆ b      ┆ 0.0   ┆ 3    │
    └──────────┴────────┴───────┴──────┘
    """
    options = FusionOptions(
        method=method,
        norm=norm,
        weights=weights,
        params=params,
        depth=depth,
        fitted=fitted,
        sort=sort,
        buckets=buckets,
        spill_dir=spill_dir,
        progress=progress,
        system=system,
        query_id=query_id,
        doc_id=doc_id,
        score=score,
        rank=rank,
    )
    plan, eager = build_fusion(runs, options)
    return plan.collect() if eager else plan
