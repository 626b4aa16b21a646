"""Per-query values of several systems: one plan, then a queries × systems matrix.

Several runs (a dict of frames, or one long frame with a system column) become long
LazyFrames with a system column (``pl.concat``, lazily), evaluated by the door's plan
(:func:`~polars_irmetrics.door.evaluate.evaluate_plan`) with ``systems=<system>`` and
``per_query=True``. The runs of a dict are stacked only where their columns and dtypes
are the same (:func:`stack_runs`): runs of another schema (Int64 scores beside Float64
ones, Categorical ids beside Int64 ones, a rank-only run beside score-only runs) are
each schema's own plan, the plans stacked lazily and collected once, so that nothing is
cast and every system's values are those :func:`~polars_irmetrics.evaluate` gives its
run alone, to the bit; a run it refuses alone is refused with its error, the system
named (``system 'B': ...``). Judgments without the system column serve every system,
so under the default query set (``"judged"``) a judged query that a system did not
retrieve scores as an empty ranking, as :func:`~polars_irmetrics.evaluate` does by
default. Prediction metrics (``auc``, ``gauc``, ``logloss``...) are routed by the same
plan to the prediction wing, per system and query (user), each system's table holding
the ``label`` and ``prediction`` columns; a query with an undefined value (the AUC of a
user with one class) is left out of the tests, with a warning.
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

from polars_irmetrics.comparison.caller import comparison_keywords, warn_at_caller
from polars_irmetrics.comparison.options import QuerySet
from polars_irmetrics.door.evaluate import Parsed, evaluate_plan
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CoverageWarning,
    InvalidValueError,
    IrmError,
    IrmWarning,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.exposure.rnd import nan_cause, warn_left_out
from polars_irmetrics.ground.calls import named_as
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.lists import long_judgments, long_run, ranked_by
from polars_irmetrics.ground.options import (
    EvalOptions,
    check_named_columns,
    refuse_working_name,
)
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import ListOrder, is_text, kind_of
from polars_irmetrics.metrics.fairness import EXPECTED_EXPOSURE
from polars_irmetrics.metrics.mad import MAD
from polars_irmetrics.metrics.registry import (
    INPUTS,
    MetricRequest,
    parse_metric_list,
    split_routes,
)
from polars_irmetrics.metrics.requests import refuse_summaries
from polars_irmetrics.metrics.spec import ROUTE_TABLES
from polars_irmetrics.offline.coverage import Coverage, CoverageSink

__all__ = [
    "PerQuery",
    "Runs",
    "Stacked",
    "check_system_role",
    "evaluate_runs",
    "per_query_values",
    "schema_groups",
    "stack_runs",
]

#: A dict of runs (any table :func:`~polars_irmetrics.evaluate` takes), or one long
#: table with a system column.
Runs = Union[Mapping[str, FrameInput], FrameInput]  # noqa: UP007 - FrameInput is a string


@dataclass(frozen=True)
class PerQuery:
    """Paired per-query values: ``values[m, q, s]`` is metric m of system s on query q.

    ``higher_is_better[m]`` is metric m's declared direction
    (:attr:`~polars_irmetrics.metrics.requests.MetricRequest.higher_is_better`, from
    the requests parsed once at the door, a parameter's own included; ``None`` for a
    metric with no better direction). Required,
    one per metric: no direction is assumed (higher-is-better by default would count a
    lower-is-better metric's losses as wins).
    """

    metrics: list[str]
    systems: list[str]
    queries: pl.Series
    values: npt.NDArray[np.float64]
    dropped: int
    higher_is_better: list[bool | None]

    def directions(self) -> list[bool | None]:
        """``higher_is_better`` of every metric, in order."""
        return list(self.higher_is_better)


@dataclass(frozen=True)
class Stacked:
    """The runs as long LazyFrames with a String system column, stacked without a cast.

    ``parts``: one long frame per schema (the runs of a dict whose columns and dtypes are
    the same, in dict order of their first run; or the one long frame given), each
    evaluated as :func:`~polars_irmetrics.evaluate` evaluates it with ``systems=``, which
    gives each system what it gives the system's run alone. ``names``: every system in
    order (``None`` for one long frame, whose systems are known after the plan runs);
    ``alone`` and ``schemas``: each run of a dict as given (without the system column)
    and its schema, for its own errors and its empty evaluation.
    """

    parts: tuple[pl.LazyFrame, ...]
    names: list[str] | None
    alone: Mapping[str, pl.LazyFrame]
    schemas: Mapping[str, pl.Schema]


def stack_runs(runs: Runs, system: str) -> Stacked:
    """The runs stacked by schema (:class:`Stacked`): runs with the same columns and
    dtypes in one long frame, others in frames of their own, so that no value is cast
    (a stack of Int64 and Float64 scores would rank nanosecond timestamps as floats,
    Categorical beside Int64 ids would not stack at all) and each run keeps its own
    order column (a rank-only run beside score-only runs is ranked by its ranks).
    ``system``: the system column of one long frame; a dict names each system by its
    key, so another name than the default is refused with it, never ignored."""
    if not isinstance(runs, Mapping):
        runs = as_polars(runs, "runs")
    if isinstance(runs, pl.DataFrame | pl.LazyFrame):
        lazy = runs.lazy()
        schema = lazy.collect_schema()
        if system not in schema:
            raise ColumnNotFoundError(
                f"column {system!r} (the system of each row) is not in the runs; "
                "pass system='<your system column>' or a dict of runs"
            )
        kind = schema[system]
        if kind.is_nested():  # read as text: polars' cast error, or a struct's "{1}"
            raise ColumnTypeError(
                f"column {system!r} of the runs has dtype {kind}; each row needs one system "
                "name (a string or an integer): give each row its system's name, e.g. "
                f"pl.col({system!r}).list.first() for a list of one name"
            )
        return Stacked((lazy.with_columns(pl.col(system).cast(pl.String)),), None, {}, {})
    if not isinstance(runs, Mapping):
        raise InvalidValueError(
            f"runs must be a dict of frames or one frame with a system column, "
            f"got {type(runs).__name__}"
        )
    if system != "system":  # (it was ignored: a misspelt or stale name passed silently)
        raise InvalidValueError(
            f"system={system!r} is not read with a dict of runs: it names the system "
            "column of one long frame, and a dict names each system by its key; drop "
            "system=, or pass one long frame whose system column names the systems"
        )
    for name in runs:
        if not isinstance(name, str):
            raise InvalidValueError(f"system name {name!r} is not a string; name runs by text")
    alone = {name: as_polars(frame, f"run {name!r}").lazy() for name, frame in runs.items()}
    schemas = {name: frame.collect_schema() for name, frame in alone.items()}
    labelled = {name: run.with_columns(pl.lit(name).alias(system)) for name, run in alone.items()}
    parts = tuple(
        pl.concat([labelled[name] for name in names], how="diagonal")  # nothing is cast
        for names in schema_groups(labelled)
    )
    return Stacked(parts, list(alone), alone, schemas)


def check_system_role(runs: Runs, system: str, options: EvalOptions) -> None:
    """Refuse a long frame's ``system=`` that names a column the evaluation reads as
    something else (the query or document id, the rank, the score, the relevance): the
    refusal names ``system=``, the keyword given, where the plan's would name the
    ``systems=`` it is passed as.

    >>> frame = pl.LazyFrame({"query_id": ["q"], "doc_id": ["d"], "rank": [1]})
    >>> check_system_role(frame, "query_id", EvalOptions.build())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: system='query_id' names the query_id column...
    """
    if isinstance(runs, Mapping):
        return  # a dict names each system by its key (another system= is refused)
    refuse_working_name("system", system, table="runs")
    roles = ("query_id", "doc_id", "rank", "score", "relevance")
    for role in roles:
        if getattr(options, role) == system:
            raise InvalidValueError(
                f"system={system!r} names the {role} column; system= names the column of "
                f"each row's system: pass that column's name as system=, or the {role} "
                f"column's name as {role}="
            )


def schema_groups(frames: Mapping[str, pl.LazyFrame]) -> list[list[str]]:
    """The names of ``frames`` grouped by schema (the same columns and dtypes, in order),
    the groups in the order of their first frame: the frames each stack holds without a
    cast (:func:`stack_runs`, and :mod:`.reproducibility`'s runs).

    >>> frames = {"a": pl.LazyFrame({"s": [1.0]}), "b": pl.LazyFrame({"s": [1]}),
    ...           "c": pl.LazyFrame({"s": [2.0]})}
    >>> schema_groups(frames)
    [['a', 'c'], ['b']]
    """
    groups: list[tuple[pl.Schema, list[str]]] = []
    for name, frame in frames.items():
        schema = frame.collect_schema()
        group = next((names for seen, names in groups if seen == schema), None)
        if group is None:
            groups.append((schema, [name]))
        else:
            group.append(name)
    return [names for _, names in groups]


def evaluate_runs(
    stacked: Stacked,
    requests: list[tuple[str, MetricRequest]],
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
) -> pl.LazyFrame:
    """The per-query values of every system (``options.systems`` their column), lazily:
    one plan per part of ``stacked`` (:func:`evaluate_plan`), stacked in part order (one
    after the other, so that a data error is the first part's wherever two parts have
    one). A run :func:`~polars_irmetrics.evaluate` refuses alone is refused with its
    error, the system named (:func:`_named`); systems whose query ids are strings in
    some runs and integers in others are refused (their queries cannot be paired)."""
    # several parts of ranking metrics: each hands its coverage tally, added up and
    # warned of once, as one plan warns (a part of empty runs alone is no "empty
    # judgments", and empty judgments are said once, not once per part)
    handed: list[Coverage] = []
    ranking = len(stacked.parts) > 1 and all(r.route == "offline" for _, r in requests)
    warn: bool | CoverageSink = handed.append if ranking else True
    plans = []
    for part in stacked.parts:
        try:
            plans.append(evaluate_plan(part, requests, dict(tables), options, warn=warn))
        except IrmError as error:
            raise _named(error, stacked, requests, tables, options) from None
    if len(plans) == 1:
        return plans[0]
    query_id = options.query_id
    _check_query_kinds(stacked, query_id)
    dtypes = [plan.collect_schema()[query_id] for plan in plans]
    if any(is_text(dtype) for dtype in dtypes):  # Categorical, Enum beside String
        plans = [plan.with_columns(pl.col(query_id).cast(pl.String)) for plan in plans]
    # integers of any width: their common supertype holds every id (Int128 beside
    # UInt64); the metric columns are the same dtypes in every part
    every = pl.concat(plans, how="vertical_relaxed", parallel=False)
    if not ranking:
        return every
    systems = options.system_keys

    def warn_once(frame: pl.DataFrame) -> pl.DataFrame:
        merged = Coverage.merged(list(handed), systems)
        handed.clear()  # (each collect hands its parts again)
        if merged is not None:
            merged.warn(systems)
        return frame

    return every.map_batches(warn_once, schema=every.collect_schema())


def _named(
    error: IrmError,
    stacked: Stacked,
    requests: list[tuple[str, MetricRequest]],
    tables: Mapping[str, pl.LazyFrame | None],
    options: EvalOptions,
) -> Exception:
    """``error`` (raised building a part's plan) as :func:`~polars_irmetrics.evaluate`
    raises it for each run alone: the first run (in dict order) it refuses, with the
    system prefixed (``system 'B': ...``; ``systems 'B', 'C': ...`` where several are
    refused alike), or the text alone where every run is refused alike (the judgments'
    fault, or every run's). ``error`` itself for one long frame, or where no run alone
    is refused (the system column's own fault)."""
    if not stacked.alone:
        return error
    alone = options.replace(systems=None, buckets=None, explain=False)
    refused: dict[str, IrmError] = {}
    for name, run in stacked.alone.items():
        try:
            evaluate_plan(run, requests, dict(tables), alone, warn=False)
        except IrmError as own:
            refused[name] = own
    if not refused:
        return error
    first = next(iter(refused.values()))
    alike = [n for n, e in refused.items() if type(e) is type(first) and str(e) == str(first)]
    if len(alike) == len(stacked.alone):
        return first
    shown = ", ".join(repr(name) for name in alike)
    return type(first)(f"system{'s' if len(alike) > 1 else ''} {shown}: {first}")


def _check_query_kinds(stacked: Stacked, query_id: str) -> None:
    """Refuse query ids that are strings in some runs and integers in others (each run
    taken alone: without judgments, or for prediction metrics): the systems are paired
    by query, and ``1`` is not ``'1'``."""
    dtypes = {
        name: schema[query_id]
        for name, schema in stacked.schemas.items()
        if query_id in schema and kind_of(schema[query_id]) is not None
    }
    if len({kind_of(dtype) for dtype in dtypes.values()}) > 1:
        shown = ", ".join(f"{name!r}: {dtype}" for name, dtype in dtypes.items())
        raise ColumnTypeError(
            f"column {query_id!r} holds strings in some runs and integers in others "
            f"({shown}); the systems are paired by query id: cast it to one type in every "
            f"run, e.g. pl.col({query_id!r}).cast(pl.String)"
        )


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
    """Evaluate every system in one plan and pair their per-query values
    (:func:`_paired_values`), its warnings given once the values are paired: where
    ``rnd`` (``rkl``, ``rrd``, ``awrf``...) is NaN on a paired query, the comparison
    refuses it with the measure's cause and fix (``_check_values``), so the plan's
    warning of the same NaN (:func:`~polars_irmetrics.exposure.rnd.nan_cause`) is not
    given too; every other warning is, in order, as it was given."""
    requests = metrics.requests if isinstance(metrics, Parsed) else parse_metric_list(metrics)
    values: PerQuery | None = None
    held: list[warnings.WarningMessage] = []
    try:
        # a fix "pass groups=... to irm.evaluate" names the function called (calls)
        with (
            warnings.catch_warnings(record=True) as caught,
            named_as(calls, comparison_keywords()),
        ):
            warnings.simplefilter("always")
            held = caught
            values = _paired_values(
                runs,
                Parsed(requests),
                qrels,
                system=system,
                query_set=query_set,
                options=options,
                groups=groups,
                target=target,
                calls=calls,
            )
        return values
    finally:  # an error raised after a warning: the warning given too, before it
        causes = _refused_causes(values, requests, options.query_id)
        for warning in held:
            if not any(str(warning.message).endswith(cause) for cause in causes):
                warnings.warn_explicit(
                    warning.message,
                    warning.category,
                    warning.filename,
                    warning.lineno,
                    source=warning.source,
                )


def _refused_causes(
    values: PerQuery | None, requests: list[tuple[str, MetricRequest]], query_id: str
) -> list[str]:
    """The texts ending the warnings of a measure NaN on a paired query, which the
    comparison refuses (``_check_values``: two paired queries or more, a NaN among
    them) with the same cause: not warned too. None where ``values`` is none (an
    error raised first)."""
    if values is None or values.values.shape[1] < 2:
        return []
    names = dict(requests)
    causes = []
    for m, label in enumerate(values.metrics):
        cause = nan_cause(names[label].metric.name, query_id) if label in names else None
        if cause is not None and np.isnan(values.values[m]).any():
            causes.append(f"{cause[0]}; {cause[1]}")
    return causes


def _paired_values(
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
    differ. Under both, a system's values are those of its run alone with
    ``unretrieved='drop'``: a judged query it did not retrieve is no value of it, in the
    exposure measures that would score it as an empty ranking (``ee_loss``...) too
    (:func:`_retrieved_only`). ``groups``, ``target``: the exposure measures' tables
    (:func:`~polars_irmetrics.evaluate`'s); a query where an exposure measure has no
    value for a system (``awrf``, ``rnd``... of a query it did not retrieve) is a query
    that system has no value for, and so is one beside them the ranking metrics leave
    out (``rnd`` of an unjudged query). ``calls``: the entry point, named where a metric's
    ``agg=`` is refused (the per-query values are paired, never summarized).
    """
    requests = metrics.requests if isinstance(metrics, Parsed) else parse_metric_list(metrics)
    labels = [label for label, _ in requests]
    predictions = _reads_predictions(requests, qrels, calls)
    refuse_summaries(requests, calls=calls)
    whole = [(label, r.metric.name) for label, r in requests if r.metric.name in MAD]
    if whole:  # (the wing's own refusal names evaluate's per_query=, which calls sets)
        label, name = whole[0]
        clusters = "user_groups" if name == "user_mad" else "groups"
        raise MetricParameterError(
            f"metric {label!r} (Elliot's MAD) has no per-query value: it compares "
            f"clusters of the whole recommendation table, and {calls} pairs per-query "
            f"values; evaluate it for each system with irm.evaluate(run, [{label!r}], "
            f"qrels=..., {clusters}=..., systems=...)"
        )
    exposure = {
        name: as_polars(table, name).lazy()
        for name, table in (("groups", groups), ("target", target))
        if table is not None
    }
    check_system_role(runs, system, options)
    options = _lists_marked(runs, options)
    stacked = stack_runs(_from_lists(runs, options), system)
    # a rank=, score= or sample_id= that names a column of no run (each run is ordered
    # by its own order column: a dict may mix rank and score runs)
    held = {
        c: t for part in stacked.parts for c, t in part.collect_schema().items() if c != system
    }
    check_named_columns(options, pl.Schema(held), "runs")
    names = stacked.names
    judgments = None
    listed: pl.DataFrame | None = None
    if qrels is not None:  # (judgments listing each query's relevant documents: long)
        judgments = long_judgments(
            as_polars(qrels, "qrels").lazy(),
            query_id=options.query_id,
            doc_id=options.doc_id,
            relevance=options.relevance,
        )
    if names is not None and len(names) < 2:
        _too_few(names)
    given = [*(["qrels"] if qrels is not None else []), *exposure]  # the side tables
    unretrieved = "zero" if query_set == "judged" else "drop"
    plan_options = options.replace(systems=system, per_query=True, unretrieved=unretrieved)
    query_id = options.query_id
    if predictions:
        per_system = options.replace(systems=system, per_query=True)
        plan = evaluate_runs(stacked, requests, dict(exposure), per_system)  # refuses groups=
        frame = _defined(plan.collect(), labels, options)
    else:
        tables = {"qrels": judgments, **exposure}
        plan = evaluate_runs(stacked, requests, tables, plan_options)
        if judgments is not None and query_set == "judged":
            # the queries each system listed, read in the same collect: whether the
            # systems retrieved mostly different judged queries (_warn_apart)
            frame, listed = pl.collect_all([plan, _listed(stacked, system, query_id)])
        else:
            frame = plan.collect()
    if frame.height == 0 and _holds_rows(stacked):  # not an empty run: no value at all
        _nothing_scored(frame, requests, options, given, calls)
    if names is not None and judgments is not None and query_set == "judged":
        frame = _with_empty_systems(
            frame, stacked, requests, {"qrels": judgments, **exposure}, system, plan_options
        )
    if judgments is not None and query_set == "judged" and not predictions:
        # the exposure measures too: an empty ranking's ee_disparity is 0, its best
        directed = [
            (label, r.higher_is_better)
            for label, r in requests
            if r.route in ("offline", "exposure") and r.higher_is_better is not None
        ]
        if directed:
            read = {"qrels": judgments, **exposure}
            empty = _empty_scores(stacked.parts[0], requests, read, plan_options, system)
            _warn_flattered(frame, stacked, directed, empty, system, query_id)
    unscored = [label for label, r in requests if r.route == "exposure"]
    if unscored and query_set != "judged":  # the queries each system retrieved alone
        frame = _retrieved_only(frame, stacked, system, query_id)
    if unscored:  # a query an exposure measure did not score: no value of that system
        # the expected exposure's nulls drop queries the measures beside score: said
        beside = [
            label
            for label, r in requests
            if r.route == "exposure" and r.metric.name not in EXPECTED_EXPOSURE
        ]
        warn_left_out(
            frame.filter(pl.any_horizontal(pl.col(beside).is_not_null())) if beside else frame,
            requests,
            [system],
            query_id,
            emit=lambda text: warn_at_caller(text, IrmWarning),
            paired=True,
        )
        scored = frame
        frame = frame.filter(pl.all_horizontal(pl.col(unscored).is_not_null()))
        if frame.height == 0 and scored.height:
            _nothing_scored(scored, requests, options, given, calls)
    ranked = [label for label, r in requests if r.route != "exposure"]
    if unscored and ranked:  # (joined on the query) a query the ranking metrics left out
        frame = frame.filter(pl.any_horizontal(pl.col(ranked).is_not_null()))
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
    if listed is not None:  # query_set='judged': each system's missed queries score 0
        scored = _pairs(frame, system, query_id)
        retrieved = scored.join(listed, on=[system, _QUERY_TEXT], how="semi")
        _warn_apart(retrieved, systems, query_id, judged=n_q)
    elif query_set == "common" and 2 * (n_q - dropped) < n_q:
        _warn_apart(_pairs(frame, system, query_id), systems, query_id, common=True)
    if dropped and query_set != "common":
        qi, si = np.argwhere(~present)[0]
        hint = (
            "pass query_set='common' to keep the queries every system has"
            if query_set == "error"
            else "systems were scored on different queries (each system's own: those "
            "its judgments hold, its predictions' users, or those where a metric is "
            "defined); pass query_set='common' to keep the queries every system has"
        )
        if unscored and query_set != "error":
            hint = (
                f"{_EXPOSURE_UNSCORED} score only the queries a system retrieved: pass "
                "query_set='common' to keep the queries every system has"
            )
        spelt = _spelt_apart(_pairs(frame, system, query_id), systems, query_id)
        raise QuerySetError(
            f"system {systems[si]!r} has no value for query {queries[int(qi)]!r} "
            f"({dropped} of {n_q} queries are missing from some system); "
            # ids spelt apart: query_set='common' would pair none of them
            + (hint if spelt is None else spelt)
        )
    if dropped:
        values = values[:, complete, :]
        queries = queries.filter(pl.Series(complete))
    higher = [request.higher_is_better for _, request in requests]
    return PerQuery(labels, list(systems), queries, values, dropped, higher)


def _retrieved_only(
    frame: pl.DataFrame, stacked: Stacked, system: str, query_id: str
) -> pl.DataFrame:
    """The rows of ``frame`` (per system and query) whose system retrieved the query:
    under ``query_set='common'`` and ``'error'`` the plan runs with
    ``unretrieved='drop'`` and ``systems=``, which leaves such a query out of the ranking
    metrics, while ``ee_loss``, ``ee_disparity`` and ``ee_relevance`` score every judged
    query, one a system did not retrieve as an empty ranking. Each query's values are its
    own, so the rows kept are those :func:`~polars_irmetrics.evaluate` gives each run
    alone with ``unretrieved='drop'``. Ids are matched as text (the parts' dtypes may
    differ from the collected frame's: Int32 beside Int64, Categorical beside String)."""
    text = pl.col(query_id).cast(pl.String).alias(_QUERY_TEXT)
    listed = pl.concat(
        [part.select(pl.col(system).cast(pl.String), text) for part in stacked.parts],
        how="vertical",
    ).unique()
    kept = frame.with_columns(text).join(
        listed.collect(), on=[system, _QUERY_TEXT], how="semi", nulls_equal=True
    )
    return kept.drop(_QUERY_TEXT)


#: The query ids as text, :func:`_retrieved_only`'s key.
_QUERY_TEXT = "__irm_query_text"


def _listed(stacked: Stacked, system: str, query_id: str) -> pl.LazyFrame:
    """The (system, query) pairs the runs list, the system as text and the query id as
    text (``_QUERY_TEXT``), once each."""
    text = pl.col(query_id).cast(pl.String).alias(_QUERY_TEXT)
    return pl.concat(
        # each part's distinct pairs first: the cast to text reads them, not every row
        [part.select(system, query_id).unique().select(system, text) for part in stacked.parts],
        how="vertical",
    ).unique()


def _pairs(frame: pl.DataFrame, system: str, query_id: str) -> pl.DataFrame:
    """The (system, query) pairs of the per-query values, as :func:`_listed` gives
    them."""
    return frame.select(
        pl.col(system).cast(pl.String), pl.col(query_id).cast(pl.String).alias(_QUERY_TEXT)
    ).unique()


def _warn_apart(
    pairs: pl.DataFrame,
    systems: list[str],
    query_id: str,
    *,
    judged: int = 0,
    common: bool = False,
) -> None:
    """A :class:`~polars_irmetrics.errors.CoverageWarning` where the queries every
    system has are fewer than half of those some system has (``pairs``: the system and
    query text of each), so the test sets systems that were scored on mostly different
    queries side by side: under ``query_set='judged'`` (``pairs``: the judged queries
    each system retrieved) a query a system missed scores as an empty ranking against
    another's list of it; under ``'common'`` (``common``: the queries each system has a
    value for) the others are left out of every test, the means included. A refusal
    where fewer than two queries are common (``common``). The counts of each system,
    and a hint where the systems' ids match once their spelling is ignored. Under
    ``'judged'`` (``judged``: how many judged queries are paired), not where a system
    misses most judged queries or retrieved none (its own CoverageWarning, or an empty
    run's warning, says so)."""
    system = pairs.columns[0]
    held = set(pairs.get_column(system).to_list())
    counted = [s for s in systems if s in held or common]
    if len(counted) < 2:
        return
    shared = pairs.group_by(_QUERY_TEXT).agg(pl.col(system).n_unique().alias("n"))
    union = shared.height
    both = int((shared.get_column("n") == len(counted)).sum())
    if union == 0 or 2 * both >= union:
        return
    sizes = dict(pairs.group_by(system).len().iter_rows())
    if not common and any(2 * sizes[s] < judged for s in counted):
        return  # a system that misses most judged queries: its CoverageWarning says so
    each = ", ".join(f"{s!r} {sizes.get(s, 0)}" for s in counted)
    spelt = _spelt_apart(pairs, counted, query_id)
    check = (
        spelt
        if spelt is not None
        else "Check that every run names the same queries (same collection, same id spelling)."
    )
    if common:
        kept = (
            f"query_set='common' keeps {both} of the {union} queries the systems are scored "
            f"on (each system's count: {each})"
        )
        if both < 2:
            raise QuerySetError(
                f"{both} paired quer{'y' if both == 1 else 'ies'}: a paired test needs at "
                f"least two queries that every system is scored on, and {kept}. {check}"
            )
        warn_at_caller(
            f"the systems were scored on mostly different queries: {kept}, and leaves the "
            f"{union - both} others out of every test, the means included. {check}",
            CoverageWarning,
        )
        return
    warn_at_caller(
        f"the systems retrieved mostly different judged queries: {both} of the {union} "
        f"judged queries some system retrieved are retrieved by every system (each "
        f"system's count: {each}); query_set='judged' scores a query a system did not "
        "retrieve as an empty ranking (0 in ndcg, map, precision, recall and the like), "
        f"so {union - both} of the paired queries set one system's ranking against "
        f"another's empty one. {check} Pass query_set='common' to pair only the queries "
        "every system retrieved",
        CoverageWarning,
    )


def _spelt_apart(pairs: pl.DataFrame, systems: list[str], query_id: str) -> str | None:
    """The hint where the query ids of a system match those of the first system in
    ``systems`` only once their spelling is ignored
    (:func:`~polars_irmetrics.ground.spelling.spelling_hint`); ``None`` where no
    system's do. ``pairs``: the system and query text of each value."""
    system = pairs.columns[0]

    def ids(name: str) -> pl.LazyFrame:
        chosen = pairs.filter(pl.col(system) == name)
        return chosen.lazy().select(pl.col(_QUERY_TEXT).alias(query_id))

    first = systems[0]
    for name in systems[1:]:
        sides = Sides(f"run {name!r}", f"run {first!r}", "both runs")
        hint = spelling_hint(
            ids(name), ids(first), query_id, within=None, noun="query", sides=sides
        )
        if hint is not None:
            return hint
    return None


#: The exposure measures that have no value for a query a system did not retrieve.
_EXPOSURE_UNSCORED = "awrf, awrf_ndcg, rnd, rkl and rrd"


def _reads_predictions(
    requests: list[tuple[str, MetricRequest]], qrels: object, calls: str
) -> bool:
    """Whether the metrics are prediction metrics (per-query values per user: each
    system's table holds the ``label`` and ``prediction`` columns); a mix is refused, and
    so is a metric of another route (a table ``calls``, the entry point, does not take)."""
    refuse_other_tables(requests, calls)
    routes = split_routes(requests, calls="compare")
    predictions = "prediction" in routes
    if predictions and qrels is not None:
        raise InvalidValueError(
            "prediction metrics (auc, gauc, logloss, rmse...) read the label= and "
            "prediction= columns of each system's table, not judgments: drop qrels= "
            "(join the true labels onto each system's predictions first)"
        )
    return predictions


def refuse_other_tables(requests: list[tuple[str, MetricRequest]], calls: str) -> None:
    """Refuse a metric read from a table ``calls`` (``"irm.compare"``,
    ``"irm.tukey_hsd"``) does not take: one of another route, or a ranking metric of the
    interaction history. The ``usable=`` check of the comparison's parse
    (:func:`~polars_irmetrics.metrics.registry.parse_metric_list`): it comes before a
    missing cutoff's refusal, whose fix would be refused here next."""
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
                f"metric {label!r} is computed from {ROUTE_TABLES[route]}, which {calls} "
                "does not take (it pairs the per-query values of runs and judgments, or of "
                f"predictions): evaluate it with irm.evaluate({table}) for each system"
            )
    # a ranking metric of the history (Elliot's pop_rsp, epc...; RecTools' mcc): compare
    # takes no interactions= to give it (it was told to pass one, then refused it as an
    # unknown option)
    historied = [label for label, r in routes.get("offline", []) if "interactions" in r.reads]
    if historied:
        raise MetricParameterError(
            f"metric {historied[0]!r} is computed from a run, judgments and the interaction "
            f"history, which {calls} does not take (it pairs the per-query values of "
            "runs and judgments, or of predictions): evaluate it with irm.evaluate(table, "
            "qrels=..., interactions=...) for each system"
        )


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
    warn_at_caller(
        f"{left_out.len()} of {total} queries ({query_id!r}, e.g. {left_out[0]!r}) have an "
        "undefined value (null: an AUC of a query with one class, ne with a base rate of 0 "
        "or 1, r2 with constant labels) in some system and are left out of every paired "
        "test",
        IrmWarning,
    )
    return frame.filter(~pl.col(query_id).is_in(left_out.implode()))


def _lists_marked(runs: Runs, options: EvalOptions) -> EvalOptions:
    """``options`` with the rank column's name marked where every run is list-shaped
    with no list of ranks (:func:`~polars_irmetrics.ground.lists.ranked_by`): their
    ranks are the lists' positions (:func:`_from_lists`), and a refusal of them names
    the lists' order, as evaluate's does, not a column the caller never wrote."""
    frames = (
        [runs]
        if isinstance(runs, pl.DataFrame | pl.LazyFrame)
        else [f for f in runs.values() if isinstance(f, pl.DataFrame | pl.LazyFrame)]
        if isinstance(runs, Mapping)
        else []
    )
    ranks = [
        ranked_by(frame.collect_schema(), doc_id=options.doc_id, rank=options.rank)
        for frame in frames
    ]
    if ranks and all(isinstance(rank, ListOrder) for rank in ranks):
        return options.replace(rank=ranks[0])
    return options


def _from_lists(runs: Runs, options: EvalOptions) -> Runs:
    """``runs`` with list-shaped runs (one row per query) in the long form."""
    names = {
        "query_id": options.query_id,
        "doc_id": options.doc_id,
        "rank": options.rank,
        "score": options.score,
        "relevance": options.relevance,
    }
    # a query in two rows of one (system, group) is refused as evaluate refuses it
    keys = [*options.system_keys, *options.by_keys]
    if isinstance(runs, pl.DataFrame | pl.LazyFrame):
        return long_run(runs, **names, keys=keys)
    if not isinstance(runs, Mapping):
        return runs  # stack_runs says what it takes
    return {
        name: long_run(frame, **names, keys=keys)
        if isinstance(frame, pl.DataFrame | pl.LazyFrame)
        else frame
        for name, frame in runs.items()
    }


def _with_empty_systems(
    frame: pl.DataFrame,
    stacked: Stacked,
    requests: list[tuple[str, MetricRequest]],
    tables: dict[str, pl.LazyFrame],
    system: str,
    options: EvalOptions,
) -> pl.DataFrame:
    """A system whose run is empty retrieved nothing: every judged query is scored as an
    empty ranking (0 for the ranking metrics), as a judged query it missed is, and as
    :func:`~polars_irmetrics.evaluate` scores that run alone; said in a warning, since an
    empty run is more often a mistake than a result."""
    found = set(frame.get_column(system).to_list())
    empty = [name for name in stacked.names or () if name not in found]
    if not empty:
        return frame
    added = []
    for name in empty:
        warn_at_caller(
            f"system {name!r} has an empty run: it is scored as retrieving nothing on every "
            "judged query (0 for the ranking metrics); check its file or frame",
            IrmWarning,
        )
        scored = _empty_scores(stacked.alone[name], requests, tables, options, system)
        if system in scored.columns:  # judgments per system: this system's judged queries
            scored = scored.filter(pl.col(system).cast(pl.String) == name)
        added.append(scored.with_columns(pl.lit(name).alias(system)).select(frame.columns))
    return pl.concat([frame, *added], how="vertical_relaxed")


def _empty_scores(
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    tables: Mapping[str, pl.LazyFrame],
    options: EvalOptions,
    system: str,
) -> pl.DataFrame:
    """The per-query values of an empty ranking of every judged query (a run of
    ``run``'s columns and no row), as a judged query a system missed is scored. Where
    the judgments have the ``system`` column (each system judged apart, as
    :func:`~polars_irmetrics.evaluate` reads them with ``systems=``), one row per
    (system, judged query), with that column; otherwise one per judged query."""
    nothing = run.filter(pl.lit(False))
    if system in nothing.collect_schema():
        nothing = nothing.drop(system)
    qrels = tables.get("qrels")
    judged = None if qrels is None else qrels.collect_schema().get(system)
    if judged is not None:
        nothing = nothing.with_columns(pl.lit(None, judged).alias(system))
        apart = options.replace(systems=system)
        return evaluate_plan(nothing, requests, dict(tables), apart, warn=False).collect()
    alone = options.replace(systems=None)
    return evaluate_plan(nothing, requests, dict(tables), alone, warn=False).collect()


def _warn_flattered(
    frame: pl.DataFrame,
    stacked: Stacked,
    directed: list[tuple[str, bool]],
    empty: pl.DataFrame,
    system: str,
    query_id: str,
) -> None:
    """Warn where a judged query a system did not retrieve, scored as an empty ranking
    (``query_set='judged'``; ``empty``: those values, :func:`_empty_scores`), scores
    *better* than another system's list of it in a metric of ``directed`` (label,
    higher is better): an empty ranking has no cost (``utility`` 0 above a negative
    one) and no exposure
    (``ee_disparity`` 0, lower is better), so missing the query counts as a win. The
    value is the metric's own and trec_eval's (``-c``); whether a missed query is a loss
    or no evidence is the user's assumption to make, so it is said, with the way to
    compare only the queries every system retrieved. The runs' (system, query) pairs are
    read only where some list is worse than an empty ranking."""
    kind = frame.schema[query_id]
    keys = [system, query_id] if system in empty.columns else [query_id]
    empty = empty.select(
        *(pl.col(key).cast(frame.schema[key]) for key in keys),
        *(pl.col(label).cast(pl.Float64).alias(f"{_EMPTY}{label}") for label, _ in directed),
    )
    paired = frame.join(empty, on=keys, how="left")

    def worse(label: str, higher: bool) -> pl.Expr:  # a row worse than an empty ranking
        value, nothing = pl.col(label).cast(pl.Float64), pl.col(f"{_EMPTY}{label}")
        return value < nothing if higher else value > nothing

    beaten = [(label, h) for label, h in directed if paired.select(worse(label, h).any()).item()]
    if not beaten:
        return
    listed = pl.concat(
        [
            part.select(pl.col(system).cast(pl.String), pl.col(query_id).cast(kind))
            for part in stacked.parts
        ],
        how="vertical_relaxed",
    ).unique()
    missed = paired.join(
        listed.collect().with_columns(pl.lit(True).alias(_LISTED)),
        on=[system, query_id],
        how="left",
    ).with_columns(pl.col(_LISTED).fill_null(False))
    for label, higher in beaten:
        lost = worse(label, higher).any().over(query_id)  # another system's list is worse
        flattered = missed.filter(~pl.col(_LISTED) & lost)
        if flattered.height == 0:
            continue
        first = flattered.row(0, named=True)
        direction = "higher" if higher else "lower"
        many = flattered.height
        warn_at_caller(
            f"{label}: {many} judged quer{'y' if many == 1 else 'ies'} a system did not "
            f"retrieve (e.g. system {first[system]!r}, query {first[query_id]!r}) "
            f"{'scores' if many == 1 else 'score'} better as an empty ranking "
            f"({first[label]!r}, {direction} is better) than another system's list, and "
            f"count{'s' if many == 1 else ''} as that system's wins (query_set='judged' "
            "scores a missed query as an empty ranking); pass query_set='common' to "
            "compare only the queries every system retrieved",
            IrmWarning,
        )


#: The columns :func:`_warn_flattered` adds: a metric's value for an empty ranking, and
#: whether the system's run lists the query.
_EMPTY = "__irm_empty_"
_LISTED = "__irm_listed"


def _holds_rows(stacked: Stacked) -> bool:
    """Whether a run of ``stacked`` holds a row (else every run is empty, which the
    empty-run warnings and the count of systems speak of)."""
    return any(part.select(pl.len()).collect().item() for part in stacked.parts)


def _nothing_scored(
    frame: pl.DataFrame,
    requests: list[tuple[str, MetricRequest]],
    options: EvalOptions,
    given: list[str],
    calls: str,
) -> None:
    """Raise where no query has a value of a metric for any system although the runs
    hold rows: the side tables the metric reads match none of the runs' ids (or are
    empty), which the coverage warnings given by the plan name; not a count of systems
    (the values' frame holds none). ``frame``: the per-query values, the metrics without
    a value those whose column holds none (every metric where it has no row);
    ``given``: the keywords of the side tables the call was given."""
    empty = [
        (label, r)
        for label, r in requests
        if frame.height == 0 or frame.get_column(label).is_null().all()
    ]
    names = ", ".join(repr(label) for label, _ in empty)
    read = [
        f"{keyword}="
        for keyword in given
        if any(INPUTS.get(table, ("", ""))[1] == keyword for _, r in empty for table in r.reads)
    ]
    tables = " and ".join(read) if read else "the side tables"
    held = (
        "is empty or holds none of the runs' ids"
        if len(read) == 1
        else "are empty or hold none of the runs' ids"
    )
    raise QuerySetError(
        f"no query has a value of {names} for any system, so {calls} has nothing to pair: "
        f"{tables} {held} (where the ids do not line up, the CoverageWarning above names "
        f"the table and its counts); give {tables} the runs' {options.query_id!r} and "
        f"{options.doc_id!r} values (same spelling, same collection)"
    )


def _too_few(systems: list[str]) -> None:
    shown = ", ".join(repr(s) for s in systems) or "none"
    raise InvalidValueError(
        f"compare needs at least two systems; got {len(systems)} ({shown}): "
        "pass more runs, or a frame whose system column holds two or more values"
    )
