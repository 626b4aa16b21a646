"""Per-query values of several systems: one plan, then a queries × systems matrix.

Several runs (a dict of frames, or one long frame with a system column) become one
long LazyFrame with a system column (``pl.concat``, lazily), evaluated by the door's
one plan (:func:`~polars_irmetrics.door.evaluate.evaluate_plan`) with
``systems=<system>`` and ``per_query=True``. Judgments without the system column
serve every system, so under the default query set (``"judged"``) a judged query that
a system did not retrieve scores as an empty ranking, as
:func:`~polars_irmetrics.evaluate` does by default. Prediction metrics (``auc``,
``gauc``, ``logloss``...) are routed by the same plan to the prediction wing, per
system and query (user), each system's table holding the ``label`` and ``prediction``
columns; a query with an undefined value (the AUC of a user with one class) is left
out of the tests, with a warning.
The collected frame is scattered into a ``metrics × queries × systems`` array
(vectorised: each row's query and system indices), which the statistics read.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Union

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.comparison.options import QuerySet
from polars_irmetrics.door.evaluate import Parsed, evaluate_plan
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.lists import long_judgments, long_run
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import MetricRequest, parse_metric_list, split_routes
from polars_irmetrics.metrics.requests import refuse_summaries
from polars_irmetrics.metrics.spec import ROUTE_TABLES

__all__ = ["PerQuery", "Runs", "long_runs", "per_query_values"]

#: A dict of runs (any table :func:`~polars_irmetrics.evaluate` takes), or one long
#: table with a system column.
Runs = Union[Mapping[str, FrameInput], FrameInput]  # noqa: UP007 - FrameInput is a string


@dataclass(frozen=True)
class PerQuery:
    """Paired per-query values: ``values[m, q, s]`` is metric m of system s on query q.

    ``higher_is_better[m]`` is metric m's declared direction
    (:attr:`~polars_irmetrics.metrics.requests.MetricRequest.higher_is_better`, from
    the requests parsed once at the door, a parameter's own included:
    ``rbo(kind='res')``; ``None`` for a metric with no better direction);
    ``None`` for the whole list: higher is better for every metric.
    """

    metrics: list[str]
    systems: list[str]
    queries: pl.Series
    values: npt.NDArray[np.float64]
    dropped: int
    higher_is_better: list[bool | None] | None = None

    def directions(self) -> list[bool | None]:
        """``higher_is_better`` of every metric, in order."""
        if self.higher_is_better is None:
            return [True] * len(self.metrics)
        return list(self.higher_is_better)


def long_runs(
    runs: Runs, system: str, order_columns: tuple[str, str] | None = None
) -> tuple[pl.LazyFrame, list[str] | None]:
    """One long LazyFrame with a String ``system`` column, and the systems in order.

    A dict gives its keys in insertion order; a frame gives ``None`` (its systems, in
    sorted order, are known after the plan runs). With ``order_columns`` (``(rank,
    score)``, for ``order="auto"``), when some runs of a dict have a ``rank`` column and
    others do not (a fused run beside the score-only runs it came from), every run is
    ranked by ``score``, as each of them has one: one long table orders all its rows
    one way.
    """
    if not isinstance(runs, Mapping):
        runs = as_polars(runs, "runs")
    if isinstance(runs, pl.DataFrame | pl.LazyFrame):
        if system not in runs.lazy().collect_schema():
            raise ColumnNotFoundError(
                f"column {system!r} (the system of each row) is not in the runs; "
                "pass system='<your system column>' or a dict of runs"
            )
        return runs.lazy().with_columns(pl.col(system).cast(pl.String)), None
    if not isinstance(runs, Mapping):
        raise InvalidValueError(
            f"runs must be a dict of frames or one frame with a system column, "
            f"got {type(runs).__name__}"
        )
    names = list(runs)
    for name in runs:
        if not isinstance(name, str):
            raise InvalidValueError(f"system name {name!r} is not a string; name runs by text")
    frames = [
        as_polars(frame, f"run {name!r}").lazy().with_columns(pl.lit(name).alias(system))
        for name, frame in runs.items()
    ]
    if order_columns is not None:
        frames = _one_order(frames, *order_columns)
    if not frames:
        return pl.LazyFrame(), names
    return pl.concat(frames, how="diagonal_relaxed"), names


def _one_order(frames: list[pl.LazyFrame], rank: str, score: str) -> list[pl.LazyFrame]:
    schemas = [frame.collect_schema() for frame in frames]
    ranked = [rank in schema for schema in schemas]
    if all(ranked) or not any(ranked) or not all(score in schema for schema in schemas):
        return frames
    return [frame.drop(rank) if has else frame for frame, has in zip(frames, ranked, strict=True)]


def per_query_values(
    runs: Runs,
    metrics: str | Iterable[str] | Parsed,
    qrels: FrameInput | None,
    *,
    system: str,
    query_set: QuerySet,
    options: EvalOptions,
    groups: FrameInput | None = None,
    target: FrameInput | None = None,
    calls: str = "irm.compare",
) -> PerQuery:
    """Evaluate every system in one plan and pair their per-query values.

    ``query_set``: ``"judged"`` scores a judged query a system missed as an empty
    ranking; ``"common"`` keeps the queries every system has a value for (the count
    left out is ``dropped``); ``"error"`` raises :class:`QuerySetError` when systems
    differ. ``groups``, ``target``: the exposure measures' tables
    (:func:`~polars_irmetrics.evaluate`'s); a query where an exposure measure has no
    value for a system (``awrf``, ``rnd``... of a query it did not retrieve) is a query
    that system has no value for. ``calls``: the entry point, named where a metric's
    ``agg=`` is refused (the per-query values are paired, never summarized).
    """
    requests = metrics.requests if isinstance(metrics, Parsed) else parse_metric_list(metrics)
    labels = [label for label, _ in requests]
    predictions = _reads_predictions(requests, qrels)
    refuse_summaries(requests, calls=calls)
    exposure = {
        name: as_polars(table, name).lazy()
        for name, table in (("groups", groups), ("target", target))
        if table is not None
    }
    auto = (options.rank, options.score) if options.order == "auto" and not predictions else None
    run, names = long_runs(_from_lists(runs, options), system, auto)
    judgments = None
    if qrels is not None:  # (judgments listing each query's relevant documents: long)
        judgments = long_judgments(
            as_polars(qrels, "qrels").lazy(),
            query_id=options.query_id,
            doc_id=options.doc_id,
            relevance=options.relevance,
        )
    if names is not None and len(names) < 2:
        _too_few(names)
    unretrieved = "zero" if query_set == "judged" else "drop"
    plan_options = options.replace(systems=system, per_query=True, unretrieved=unretrieved)
    query_id = options.query_id
    if predictions:
        per_system = options.replace(systems=system, per_query=True)
        plan = evaluate_plan(run, requests, dict(exposure), per_system)  # refuses groups=
        frame = _defined(plan.collect(), labels, options)
    else:
        tables = {"qrels": judgments, **exposure}
        frame = evaluate_plan(run, requests, tables, plan_options).collect()
    if names is not None and judgments is not None and query_set == "judged":
        frame = _with_empty_systems(
            frame, run, names, requests, {"qrels": judgments, **exposure}, system, plan_options
        )
    unscored = [label for label, r in requests if r.route == "exposure"]
    if unscored:  # a query an exposure measure did not score: no value of that system
        frame = frame.filter(pl.all_horizontal(pl.col(unscored).is_not_null()))
    found = frame.get_column(system).unique().sort().to_list()
    systems = names if names is not None else found
    if len(systems) < 2:
        _too_few(systems)
    index = frame.select(
        pl.col(query_id).rank("dense").cast(pl.Int64).sub(1).alias("q"),
        pl.col(system).replace_strict(systems, list(range(len(systems))), default=None).alias("s"),
    )
    queries = frame.get_column(query_id).unique().sort()
    n_q, n_s = len(queries), len(systems)
    q = index.get_column("q").to_numpy()
    s = index.get_column("s").fill_null(-1).to_numpy()
    present = np.zeros((n_q, n_s), dtype=bool)
    present[q, s] = True
    values = np.full((len(labels), n_q, n_s), np.nan)
    for m, label in enumerate(labels):  # one scatter per metric column, not per query
        values[m, q, s] = frame.get_column(label).cast(pl.Float64).to_numpy()
    complete = present.all(axis=1)
    dropped = int((~complete).sum())
    if dropped and query_set != "common":
        qi, si = np.argwhere(~present)[0]
        hint = (
            "pass query_set='common' to keep the queries every system has"
            if query_set == "error"
            else "systems were scored on different queries (unjudged='zero'?); "
            "pass query_set='common' to keep the queries every system has"
        )
        if unscored and query_set != "error":
            hint = (
                f"{_EXPOSURE_UNSCORED} score only the queries a system retrieved: pass "
                "query_set='common' to keep the queries every system has"
            )
        raise QuerySetError(
            f"system {systems[si]!r} has no value for query {queries[int(qi)]!r} "
            f"({dropped} of {n_q} queries are missing from some system); {hint}"
        )
    if dropped:
        values = values[:, complete, :]
        queries = queries.filter(pl.Series(complete))
    higher = [request.higher_is_better for _, request in requests]
    return PerQuery(labels, list(systems), queries, values, dropped, higher)


#: The exposure measures that have no value for a query a system did not retrieve.
_EXPOSURE_UNSCORED = "awrf, awrf_ndcg, rnd, rkl and rrd"


def _reads_predictions(requests: list[tuple[str, MetricRequest]], qrels: object) -> bool:
    """Whether the metrics are prediction metrics (per-query values per user: each
    system's table holds the ``label`` and ``prediction`` columns); a mix is refused, and
    so is a metric of another route (a table ``compare`` does not take)."""
    routes = split_routes(requests, calls="compare")
    for route, found in routes.items():
        if route not in ("offline", "prediction", "exposure"):
            label = found[0][0]
            keyword = {
                "neighbors": "neighbors",
                "prefs": "prefs",
                "jg": "qrels_jg",
                "propensity": "propensities",
            }.get(route)
            table = "table" if keyword is None else f"table, {keyword}=..."
            raise MetricParameterError(
                f"metric {label!r} is computed from {ROUTE_TABLES[route]}, which irm.compare "
                "does not take (it pairs the per-query values of runs and judgments, or of "
                f"predictions): evaluate it with irm.evaluate({table}) for each system"
            )
    predictions = "prediction" in routes
    if predictions and qrels is not None:
        raise InvalidValueError(
            "prediction metrics (auc, gauc, logloss, rmse...) read the label= and "
            "prediction= columns of each system's table, not judgments: drop qrels= "
            "(join the true labels onto each system's predictions first)"
        )
    return predictions


def _defined(frame: pl.DataFrame, labels: list[str], options: EvalOptions) -> pl.DataFrame:
    """The per-query values of prediction metrics without the queries that have an
    undefined (null) value in some system and metric, e.g. the AUC of a user with one
    class: they cannot be paired, so they are left out of every test, said in a
    warning."""
    query_id = options.query_id
    undefined = pl.any_horizontal(pl.col(labels).is_null())
    left_out = frame.filter(undefined).get_column(query_id).unique().sort()
    if left_out.len() == 0:
        return frame
    total = frame.get_column(query_id).n_unique()
    warnings.warn(
        f"{left_out.len()} of {total} queries ({query_id!r}, e.g. {left_out[0]!r}) have an "
        "undefined value (null: an AUC of a query with one class, ne with a base rate of 0 "
        "or 1, r2 with constant labels) in some system and are left out of every paired "
        "test",
        UserWarning,
        stacklevel=4,
    )
    return frame.filter(~pl.col(query_id).is_in(left_out.implode()))


def _from_lists(runs: Runs, options: EvalOptions) -> Runs:
    """``runs`` with list-shaped runs (one row per query) in the long form."""
    names = {
        "query_id": options.query_id,
        "doc_id": options.doc_id,
        "rank": options.rank,
        "score": options.score,
        "relevance": options.relevance,
    }
    if isinstance(runs, pl.DataFrame | pl.LazyFrame):
        return long_run(runs, **names)
    if not isinstance(runs, Mapping):
        return runs  # long_runs says what it takes
    return {
        name: long_run(frame, **names) if isinstance(frame, pl.DataFrame | pl.LazyFrame) else frame
        for name, frame in runs.items()
    }


def _with_empty_systems(
    frame: pl.DataFrame,
    run: pl.LazyFrame,
    names: list[str],
    requests: list[tuple[str, MetricRequest]],
    tables: dict[str, pl.LazyFrame],
    system: str,
    options: EvalOptions,
) -> pl.DataFrame:
    """A system whose run is empty retrieved nothing: every judged query is scored as an
    empty ranking (0 for the ranking metrics), as a judged query it missed is; said in a
    warning, since an empty run is more often a mistake than a result."""
    found = set(frame.get_column(system).to_list())
    empty = [name for name in names if name not in found]
    if not empty:
        return frame
    nothing = run.filter(pl.lit(False)).drop(system)
    alone = options.replace(systems=None)
    scored = evaluate_plan(nothing, requests, dict(tables), alone, warn=False).collect()
    for name in empty:
        warnings.warn(
            f"system {name!r} has an empty run: it is scored as retrieving nothing on every "
            "judged query (0 for the ranking metrics); check its file or frame",
            UserWarning,
            stacklevel=4,
        )
    added = [scored.with_columns(pl.lit(name).alias(system)) for name in empty]
    return pl.concat([frame, *(f.select(frame.columns) for f in added)], how="vertical_relaxed")


def _too_few(systems: list[str]) -> None:
    shown = ", ".join(repr(s) for s in systems) or "none"
    raise InvalidValueError(
        f"compare needs at least two systems; got {len(systems)} ({shown}): "
        "pass more runs, or a frame whose system column holds two or more values"
    )
