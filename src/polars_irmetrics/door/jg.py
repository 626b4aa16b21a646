"""``evaluate_jg``: any metric averaged over each query's judgment groups, a thin door
over :func:`~polars_irmetrics.evaluate` with ``qrels_jg=`` (the plan:
:mod:`polars_irmetrics.offline.jg`) and trec_eval's defaults."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, overload

import polars as pl

from polars_irmetrics.door.evaluate import evaluate_tables
from polars_irmetrics.ground.inputs import FrameInput

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from polars_irmetrics.ground.options import EvalKwargs

__all__ = ["evaluate_jg"]


@overload
def evaluate_jg(
    run: pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    qrels_jg: FrameInput,
    **options: Unpack[EvalKwargs],
) -> pl.LazyFrame: ...


@overload
def evaluate_jg(
    run: pl.DataFrame,
    metrics: str | Iterable[str],
    *,
    qrels_jg: FrameInput,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame: ...


def evaluate_jg(
    run: pl.DataFrame | pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    qrels_jg: FrameInput,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame | pl.LazyFrame:
    """Per-query values of ``metrics``, each averaged over the query's judgment groups.

    Parameters
    ----------
    run
        ``query_id``, ``doc_id`` and ``score`` and/or ``rank``, as for
        :func:`polars_irmetrics.evaluate`.
    metrics
        Metric names of the registry (``map``, ``P_10``, ``rprec_mult@0.2``) or
        trec_eval's judgment-group names (``map_avgjg``, ``P_avgjg_10``); the output
        columns keep the names given.
    qrels_jg
        Keyword only: ``query_id``, ``jg`` (the judgment group), ``doc_id`` and ``relevance``
        (:func:`polars_irmetrics.io.prefs.read_trec_qrels_jg` reads trec_eval's file).
    **options
        :func:`polars_irmetrics.evaluate`'s options (``per_query``: default ``True``
        here, one row per query; ``relevance_level``, ``depth``,
        ``order``, ``unretrieved``: ``'zero'`` scores a judged query with no results 0
        in each group, trec_eval's ``-c``; default here ``'drop'``, as trec_eval;
        ``jg``: the judgment-group column of ``qrels_jg``, default ``"jg"``). This is
        :func:`polars_irmetrics.evaluate` with ``qrels_jg=`` and every metric averaged
        over the judgment groups, so it refuses what that refuses (``by=`` and
        ``systems=``: evaluate each group's rows in a call of its own).

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        As the run came: ``query_id`` and one Float64 column per metric, sorted by
        ``query_id``; with ``per_query=False``, ``num_q`` (Int64) and the Float64 means
        of the per-query values, summed from the least as
        :func:`polars_irmetrics.evaluate` sums them.

    Raises
    ------
    ColumnNotFoundError
        ``qrels_jg`` has no ``jg`` column.
    InvalidValueError
        ``by=`` or ``systems=`` (as :func:`polars_irmetrics.evaluate` refuses them with
        ``qrels_jg=``).

    Examples
    --------
    Two users judged q1: for alice d1 is relevant (AP 1), for bob d2 (AP 1/2). The
    query's map_avgjg is their mean, 0.75:

    >>> import polars as pl
    >>> run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"],
    ...                     "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["q1"] * 4, "jg": ["alice", "alice", "bob", "bob"],
    ...                       "doc_id": ["d1", "d2", "d1", "d2"], "relevance": [1, 0, 0, 1]})
    >>> evaluate_jg(run, ["map_avgjg", "P_avgjg_1"], qrels_jg=qrels).rows()
    [('q1', 0.75, 0.5)]

    A LazyFrame in gives a LazyFrame out, nothing computed:

    >>> evaluate_jg(run.lazy(), "map", qrels_jg=qrels, per_query=False).collect().rows()
    [(1, 0.75)]
    """
    chosen = {"unretrieved": "drop", "per_query": True, **options}
    return evaluate_tables(run, metrics, {"qrels_jg": qrels_jg}, chosen, route="jg")
