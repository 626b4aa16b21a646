"""The small side tables the Spark and Dask engines hand whole to every part.

The exposure measures (``ee_*``, ``awrf``, ``awrf_ndcg``, ``rnd``, ``rkl``, ``rrd``) are a
value per query, read from that query's rankings and judgments and from two small
tables keyed by document or group: ``groups=`` (one row per document and group) and
``target=`` (one row per group). An engine splits the run and the judgments by query as
it does for every per-query metric, and these tables are collected once on the driver
(:func:`side_tables`) and travel with the :class:`~polars_irmetrics.engines._partition.Job`
to every task (a broadcast), where the one plan reads them whole. The means are taken
over every query's values sorted by query, in one task: the same bits as
:func:`polars_irmetrics.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

import pyarrow as pa

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MetricParameterError
from polars_irmetrics.metrics.rectools import CATALOGUE_FORMULAS
from polars_irmetrics.metrics.registry import INPUTS, labels_by_route, parse_metric_list

__all__ = ["CATALOGUE_METRICS", "SIDE_TABLES", "check_sides", "side_tables"]

#: The side tables an engine broadcasts, and the metrics that read them (in messages).
SIDE_TABLES: Mapping[str, str] = {
    "groups": "the exposure measures (ee_loss, ee_disparity, ee_relevance, awrf, awrf_ndcg, "
    "rnd, rkl, rrd)",
    "target": "awrf and awrf_ndcg",
    "interactions": "mcc@k and reco_accuracy@k (the catalogue's size)",
}

#: The metrics of ``interactions=`` an engine evaluates: they read one global aggregate
#: of the history, the catalogue (its distinct items), which the engine computes and
#: broadcasts instead of the history.
CATALOGUE_METRICS = frozenset(CATALOGUE_FORMULAS)

Frame = TypeVar("Frame")

#: The tables a metric may read that the engines do not take (one machine only).
_NOT_TAKEN = ("interactions", "item_features", "reference")


def check_sides(engine: str, metrics: str | Iterable[str], given: Mapping[str, object]) -> None:
    """Refuse by name a metric an engine cannot evaluate (a metric of the whole
    recommendation table, one reading ``interactions=``, ``item_features=`` or
    ``reference=``), a side table no metric asked for reads, and the exposure measures
    beside metrics of another route: one machine puts them side by side with
    ``num_q_exposure`` (:func:`polars_irmetrics.evaluate`), an engine evaluates them in
    a call of their own.

    Examples
    --------
    >>> check_sides("Spark", ["ndcg@10"], {"groups": object()})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: groups= is read by the exposure ...
    >>> check_sides("Dask", ["ndcg@10", "rnd"], {})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: on Dask the exposure measures ('rnd') ...

    A metric of the whole recommendation table is one value over every user's rows,
    which the engines do not merge from parts (the parts give per-query values):

    >>> check_sides("Spark", ["sufficient_reco@10"], {})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: metric 'sufficient_reco@10' describes the ...
    """
    requests = parse_metric_list(metrics)
    for label, request in requests:
        if request.route == "recsys":
            raise InvalidValueError(
                f"metric {label!r} describes the whole recommendation table (one value "
                f"over every user's rows), which {engine} does not merge from its parts: "
                "evaluate it with polars_irmetrics.evaluate"
            )
        unread = [name for name in request.metric.reads if name in _NOT_TAKEN]
        if unread == ["interactions"] and request.metric.name in CATALOGUE_METRICS:
            continue
        if unread[:1] == ["interactions"]:
            raise InvalidValueError(
                f"metric {label!r} reads the history in interactions= (item popularity or "
                f"each user's history), which {engine} does not take: it takes "
                "interactions= for mcc@k and reco_accuracy@k (the catalogue) only; "
                "evaluate it with polars_irmetrics.evaluate"
            )
        if unread:
            keyword = INPUTS[unread[0]][1]
            raise InvalidValueError(
                f"metric {label!r} reads {keyword}=, which {engine} does not take (one "
                "machine only): evaluate it with polars_irmetrics.evaluate"
            )
    routes = labels_by_route(requests)
    exposure = routes.get("exposure")
    if exposure is not None and len(routes) > 1:
        other = next(labels[0] for route, labels in routes.items() if route != "exposure")
        shown = ", ".join(repr(label) for label in exposure)
        raise InvalidValueError(
            f"on {engine} the exposure measures ({shown}) are evaluated in a call of "
            f"their own, not beside {other!r} (polars_irmetrics.evaluate puts them side by "
            "side, with num_q_exposure): make two calls with the same run"
        )
    catalogue = any(r.metric.name in CATALOGUE_METRICS for _, r in requests)
    for name, frame in given.items():
        if frame is not None and not (catalogue if name == "interactions" else exposure):
            raise MetricParameterError(
                f"{name}= is read by {SIDE_TABLES[name]}, and no metric asked for reads "
                f"it: drop {name}=, or ask for one of them"
            )


def side_tables(
    engine: str,
    metrics: str | Iterable[str],
    given: Mapping[str, Frame | None],
    collect: Callable[[str, Frame, tuple[str, ...]], pa.Table],
    doc_id: str,
) -> tuple[tuple[str, pa.Table], ...]:
    """The side tables given, checked (:func:`check_sides`) and collected to Arrow on
    the driver (``collect(keyword, frame)``, which checks the frame's kind), as
    ``(keyword, table)`` pairs for :func:`~polars_irmetrics.engines._partition.prepare`.

    ``groups=`` and ``target=`` are small and go whole; of ``interactions=`` only the
    catalogue travels, its distinct ``doc_id`` values (``collect``'s third argument: the
    columns whose distinct rows to keep), which gives each part's plan the catalogue's
    size of the whole history (an item's count of users or interactions is not read by
    the metrics an engine takes)."""
    check_sides(engine, metrics, given)
    tables: list[tuple[str, pa.Table]] = []
    for name, frame in given.items():
        if frame is None:
            continue
        columns: tuple[str, ...] = ()
        if name == "interactions":
            columns = (doc_id,)
            names = list(getattr(frame, "columns", ()))
            if doc_id not in names:
                raise ColumnNotFoundError(
                    f"column {doc_id!r} not found in interactions (columns: {names}); the "
                    "catalogue is its distinct items: name the column with doc_id="
                )
        tables.append((name, collect(name, frame, columns)))
    return tuple(tables)
