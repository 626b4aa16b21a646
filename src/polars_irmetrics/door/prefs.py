"""``evaluate_prefs``: trec_eval's preference measures, a thin door over
:func:`~polars_irmetrics.evaluate` with ``prefs=`` and trec_eval's defaults."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, overload

import polars as pl

from polars_irmetrics.door.evaluate import Parsed, evaluate_tables
from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.ground.inputs import FrameInput
from polars_irmetrics.metrics.registry import parse_metric_list
from polars_irmetrics.offline.prefs import PREFS_MEASURES

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from polars_irmetrics.ground.options import EvalKwargs

__all__ = ["evaluate_prefs"]


@overload
def evaluate_prefs(
    run: pl.LazyFrame,
    metrics: str | Iterable[str] = ...,
    *,
    prefs: FrameInput,
    **options: Unpack[EvalKwargs],
) -> pl.LazyFrame: ...


@overload
def evaluate_prefs(
    run: pl.DataFrame,
    metrics: str | Iterable[str] = ...,
    *,
    prefs: FrameInput,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame: ...


def evaluate_prefs(
    run: pl.DataFrame | pl.LazyFrame,
    metrics: str | Iterable[str] = PREFS_MEASURES,
    *,
    prefs: FrameInput,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame | pl.LazyFrame:
    """The preference measures ``metrics`` of every query: :func:`polars_irmetrics.evaluate`
    with ``prefs=``, with trec_eval's defaults (one row per query; the queries in both
    the run and the preferences).

    Parameters
    ----------
    run
        ``query_id``, ``doc_id`` and ``score`` (a higher score ranks first; ties by
        document id ascending, as trec_eval orders them for preferences), or ``rank``
        (1 = top) in place of ``score``: ``order='auto'`` reads ``rank`` where the run
        has it, as the ranking metrics do. The run is checked as they check it, with
        their messages (a null id or score, a NaN score, a non-numeric score, a
        document listed twice, a rank below 1 or held twice).
    metrics
        Preference measure names (default: every one of trec_eval's, in its print order).
    prefs
        The preference judgments (:func:`~polars_irmetrics.read_trec_prefs`): rows
        ``query_id``, ``jg``, ``jsg``, ``doc_id``, ``rel_level``; ``query_id=`` and
        ``doc_id=`` name the ids of the run and of the preferences alike.
    **options
        :func:`polars_irmetrics.evaluate`'s options; the defaults here are
        ``per_query=True`` and ``unretrieved='drop'`` (``'zero'``: a query of ``prefs``
        with no results is evaluated on an empty ranking, trec_eval 10.0's ``-c``).
        ``depth`` keeps the top ``depth`` documents (trec_eval ``-M``); ``query_id``,
        ``doc_id``, ``score`` and ``rank`` name the columns.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        As the run came: ``query_id`` and one column per metric (Int64 counts, Float64
        ratios), sorted by ``query_id``; with ``per_query=False``, ``num_q`` and the
        Float64 means. The query ids keep their dtype, as the ranking metrics keep it
        (integers stay integers, in their order; text comes back String), and the
        messages name the columns ``query_id=`` and ``doc_id=`` name.

    Raises
    ------
    MetricParameterError
        A metric is not a preference measure.
    ColumnNotFoundError, ColumnTypeError
        A column of the run or of the preferences missing, or of a wrong dtype.
    InvalidValueError, DuplicateError
        A bad row of the run (as :func:`polars_irmetrics.evaluate` refuses it for the
        ranking metrics), or preferences that contradict each other.
    QuerySetError
        ``unretrieved='error'`` and a query of the preferences the run lacks.

    Warns
    -----
    CoverageWarning
        A run that retrieves none of the preferences' documents, or misses most of
        their queries (ids that do not line up, most likely), as the ranking metrics
        warn of one beside ``qrels=``; the values are unchanged.

    See Also
    --------
    polars_irmetrics.evaluate_jg : trec_eval's judgment-group measures.

    Examples
    --------
    >>> import polars as pl
    >>> prefs = pl.DataFrame({"query_id": ["q1"] * 3, "jg": ["u"] * 3, "jsg": ["s"] * 3,
    ...                       "doc_id": ["a", "b", "c"], "rel_level": [2.0, 1.0, 0.0]})
    >>> run = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["b", "a", "c"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> evaluate_prefs(run, ["prefs_simp", "prefs_num_prefs_ful"], prefs=prefs).rows()
    [('q1', 0.6666666666666666, 2)]

    A query of the preferences that the run did not retrieve counts only with
    ``unretrieved='zero'``:

    >>> more = pl.concat([prefs, prefs.with_columns(query_id=pl.lit("q2"))])
    >>> evaluate_prefs(run, "prefs_simp", prefs=more, unretrieved="zero").rows()
    [('q1', 0.6666666666666666), ('q2', 0.0)]
    """
    requests = parse_metric_list(metrics)  # parsed once: the door below receives them
    for label, request in requests:
        if "prefs" not in request.metric.reads:
            raise MetricParameterError(
                f"metric {label!r} is not a preference measure; evaluate it with "
                "irm.evaluate(run, metrics, qrels=...)"
            )
    chosen: EvalKwargs = {"per_query": True, "unretrieved": "drop", **options}
    return evaluate_tables(run, Parsed(requests), {"prefs": prefs}, chosen)
