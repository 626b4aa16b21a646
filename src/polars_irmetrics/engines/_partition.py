"""What the Spark and Dask engines share: one part of an evaluation, through Arrow.

An engine splits both sides by :func:`part_of` a query (a hash of ``query_id``), so
every row of a query, in the run and in the judgments, reaches the same task. There
:func:`evaluate_part` runs the ordinary one-machine plan on the part's rows and
returns its per-query values; :func:`summarize_part` turns the per-query values of
one ``by`` group (all of them, in one place) into the row of means that
:func:`~polars_irmetrics.evaluate` gives: sorted by the keys, then the metrics' own
``summarize`` expressions, a running sum in query order, so the means are equal to
the last bit.

Before any task runs, :func:`prepare` builds that same plan on empty frames of the
inputs' schemas: a missing column, a wrong dtype, an unknown metric or a bad option
is then raised on the driver, by the library, with its usual message. A data error
found inside a task (a duplicate document, a null id) is carried back in the text of
the engine's own exception (:func:`carry_error`) and raised again on the driver as
the library's exception with its message (:func:`raise_carried`).

Each part checks its own queries in one machine's order; where several parts are at
fault, each hands its error on rather than failing its task (:func:`held_part`) and the
engine raises the least of them (the check first in that order, then the first query
in key order): one machine's error, whichever task comes first. A ``QuerySetError``
(an ``"error"`` policy) counts and names the queries of its part only.
"""

from __future__ import annotations

import base64
import functools
import re
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, Protocol, TypeVar, cast

import polars as pl
import pyarrow as pa

from polars_irmetrics import errors
from polars_irmetrics.door.evaluate import (
    check_ids_read,
    check_item_options,
    check_level_read,
    check_queries_read,
    evaluate_plan,
    refuse_samples_beside,
)
from polars_irmetrics.errors import InvalidValueError, IrmError, IrmWarning, MetricParameterError
from polars_irmetrics.exposure.rnd import (
    SEGREGATION,
    judged_labels,
    undefined_part,
    warn_undefined_parts,
    warn_unscored_groups,
)
from polars_irmetrics.ground.lists import long_run
from polars_irmetrics.ground.options import (
    READ_BY,
    EvalOptions,
    check_named_columns,
    check_read,
)
from polars_irmetrics.ground.partitions import spanning_error
from polars_irmetrics.ground.validate import (
    INTERNAL,
    empty_table_text,
    order_of,
    warn_from_plan,
    with_common_keys,
)
from polars_irmetrics.metrics.fairness import EXPECTED_EXPOSURE
from polars_irmetrics.metrics.registry import (
    labels_by_route,
    means,
    merges_from_users,
    parse_metric_list,
    user_mean,
)
from polars_irmetrics.offline.attributes import with_query_attributes
from polars_irmetrics.offline.coverage import Coverage
from polars_irmetrics.online.sessions import CLICKS, warn_on_no_click

if TYPE_CHECKING:
    from polars_irmetrics.metrics.registry import MetricRequest

__all__ = [
    "PART",
    "CarriedError",
    "Clicks",
    "Covered",
    "Job",
    "ParsedJob",
    "PartSink",
    "Refusal",
    "Relay",
    "Withheld",
    "arrow_schema",
    "as_polars_frame",
    "attribute_columns",
    "carry_error",
    "check_options_read",
    "check_run_columns",
    "clicks_of",
    "engine_options",
    "evaluate_lazy",
    "evaluate_part",
    "give_warnings",
    "held_part",
    "judgments_given",
    "prepare",
    "raise_carried",
    "raise_least",
    "refuse_run_only_by",
    "refuse_split_call",
    "spanning_error",
    "summarize_part",
    "summarized_segments",
    "tells_segments",
    "tells_values",
    "values_tally",
    "warn_coverage",
    "warn_on_values",
    "warned_to",
]

#: The column that holds a row's part (a hash of its query id modulo the part count).
PART = f"{INTERNAL}part"

_MARK = "IRM-ERROR"
_CARRIED = re.compile(rf"{_MARK}\[(\w+)\]\[([A-Za-z0-9+/=]*)\]")


class CarriedError(RuntimeError):
    """A library error raised inside a task, its class and message in its text."""


@dataclass(frozen=True)
class Clicks:
    """A part's count of clicks in its impression log (the click metrics'), which the
    engine adds up over every part: a log of sessions and no click at all is warned of
    as one machine warns (:func:`warn_on_values`)."""

    count: int


#: Where a part hands what the engine adds up (:func:`evaluate_part`'s ``sink``): its
#: coverage, or its count of clicks.
PartSink = Callable[[Coverage | Clicks], None]


@dataclass(frozen=True)
class Refusal:
    """A part's data error that one plan over the whole input chooses between others by
    a fixed order (:func:`~polars_irmetrics.ground.validate.ordered`: the check's rank,
    then the first failing query's keys), kept rather than raised by the part
    (:func:`held_part`), so that the engine raises the least of its parts' refusals: one
    machine's error, whichever part holds it and whichever task fails first. ``kind``:
    the error's class in :mod:`polars_irmetrics.errors`."""

    order: Any
    kind: str
    message: str

    def error(self) -> IrmError:
        """The error, of its own class, with its own message."""
        cls = getattr(errors, self.kind, None)
        if not (isinstance(cls, type) and issubclass(cls, IrmError)):  # pragma: no cover
            cls = IrmError
        return cls(self.message)


#: What a part hands its engine where it refuses its rows (:func:`held_part`).
RefusalSink = Callable[[Refusal], None]


def held_part(
    schema: pl.Schema, sink: RefusalSink, function: Callable[..., pa.Table], *args: Any
) -> pa.Table:
    """``function(*args)`` (a part's :func:`evaluate_part` or :func:`evaluate_lazy`, whose
    values are of ``schema``: :attr:`Job.per_query_schema`); a data error marked with its
    place among one plan's (:class:`Refusal`) is handed to ``sink`` and the part gives no
    values (the engine raises the least of its parts' refusals: :func:`raise_least`);
    any other error is raised as it is.

    >>> from polars_irmetrics.ground.validate import ordered
    >>> def refusing():
    ...     raise ordered(errors.DuplicateError("query 'q2' lists 'a' twice"), 1, 1, ["q2"])
    >>> kept = []
    >>> held_part(pl.Schema({"query_id": pl.String}), kept.append, refusing).num_rows
    0
    >>> kept[0].kind, kept[0].message
    ('DuplicateError', "query 'q2' lists 'a' twice")
    """
    try:
        return function(*args)
    except IrmError as exc:
        order = order_of(exc)
        if order is None:
            raise
        sink(Refusal(order, type(exc).__name__, str(exc)))
        return arrow_schema(schema).empty_table()


def raise_least(found: Iterable[object]) -> None:
    """Raise the least of the :class:`Refusal` among ``found`` (what the parts handed
    their sinks, on the driver or in the task that gathers them), the error one plan
    over their rows raises; nothing where no part refused.

    >>> raise_least([Clicks(1)])
    >>> raise_least([Refusal((1, 5), "DuplicateError", "b"), Refusal((1, 0), "InvalidValueError", "a")])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: a
    """  # noqa: E501
    refusals = [f for f in found if isinstance(f, Refusal)]
    if refusals:
        raise min(refusals, key=lambda r: r.order).error() from None


def clicks_of(told: Iterable[object]) -> int | None:
    """The clicks of every part (the :class:`Clicks` among ``told``, what the parts
    handed their sinks), ``None`` where no part handed any (not the click metrics).

    >>> clicks_of([Clicks(0), "a coverage", Clicks(2)]), clicks_of([])
    (2, None)
    """
    counts = [t.count for t in told if isinstance(t, Clicks)]
    return sum(counts) if counts else None


class ParsedJob:
    """What every engine job shares: it travels to the workers as metric names
    (``metrics``), and :attr:`requests` is parsed once per process. The cached
    attributes named in ``_CACHED`` stay behind when the job is pickled."""

    metrics: tuple[str, ...]
    _CACHED: ClassVar[tuple[str, ...]] = ("requests",)

    def __getstate__(self) -> dict[str, object]:
        """The job as it travels: its cached attributes stay behind (made again once)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._CACHED}

    @functools.cached_property
    def requests(self) -> list[tuple[str, MetricRequest]]:
        """``(label, request)`` for each metric column, in the result's order: parsed once
        per process."""
        return parse_metric_list(self.metrics)


@dataclass(frozen=True)
class Job(ParsedJob):
    """One evaluation, resolved on the driver and shipped to every task (it pickles).

    ``run_only_by`` are the ``by`` keys the judgments lack: each of their groups is
    matched with all the judgments, so the engines give every part the judgments
    crossed with the groups found in the whole run (as the one-machine plan does).
    """

    metrics: tuple[str, ...]
    options: EvalOptions
    keys: tuple[str, ...]
    by: tuple[str, ...]
    run_only_by: tuple[str, ...]
    per_query_schema: pl.Schema
    means_schema: pl.Schema
    #: The coverage of no query (the engine adds its parts' to it), ``None`` where the
    #: metrics' plan gives no coverage warning (:func:`warn_coverage`).
    coverage: Coverage | None = None
    #: The small side tables (``groups=``, ``target=``) every part reads whole: they
    #: travel with the job (:mod:`polars_irmetrics.engines._sides`).
    sides: tuple[tuple[str, pa.Table], ...] = ()
    #: The ``systems=`` / ``by=`` keys the caller's frame holds as an Enum, with its
    #: categories (the parts read them as text): the coverage warnings name the
    #: systems in the Enum's order, as one machine does (:func:`warn_coverage`).
    enums: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def tables(self, qrels: pl.LazyFrame | None) -> dict[str, pl.LazyFrame | None]:
        """The tables of one part's plan: its judgments and the side tables, whole."""
        return {"qrels": qrels, **{name: _frame(table).lazy() for name, table in self.sides}}


#: The options of the one-machine out-of-core plan, which an engine divides otherwise.
ONE_MACHINE = ("buckets", "spill_dir", "memory_limit", "explain")


#: The tables of :func:`~polars_irmetrics.evaluate` the engines do not take, and what
#: reads them (named as such, not as an unknown option).
_ONE_MACHINE_TABLES = {
    "user_groups": "user_mad's groups of users",
    "prefs": "the preference judgments",
    "qrels_jg": "the judgment groups",
    "neighbors": "neighbour recall's exact neighbours",
}


def engine_options(options: Mapping[str, object], engine: str) -> EvalOptions:
    """An engine's keyword arguments (:class:`~polars_irmetrics.ground.options.EvalKwargs`)
    as one checked :class:`~polars_irmetrics.ground.options.EvalOptions`.

    The options of the one-machine out-of-core plan are refused by name: an engine
    divides the work by its own partitions.

    Examples
    --------
    >>> engine_options({"by": "day", "query_id": "qid"}, "Spark").by_keys
    ('day',)
    >>> engine_options({"buckets": 16}, "Spark")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: buckets= is an option of the one-machine ...

    RecTools' ``debias=`` reads the judgments of every query at once, which no part holds:

    >>> from polars_irmetrics.ground.debias import Debias
    >>> engine_options({"debias": Debias()}, "Dask")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: debias= reads the quartiles of every item's ...
    """
    for name in ONE_MACHINE:
        if name in options:
            raise InvalidValueError(
                f"{name}= is an option of the one-machine out-of-core plan "
                f"(polars_irmetrics.evaluate); on {engine} the work divides into "
                f"partitions= parts (or by partitioned_by=): drop {name}="
            )
    for name, what in _ONE_MACHINE_TABLES.items():
        if name in options:
            raise InvalidValueError(
                f"{name}= is a table polars_irmetrics.evaluate reads ({what}), which "
                f"{engine} does not take: evaluate those metrics with "
                "polars_irmetrics.evaluate (a LazyFrame of the Parquet files runs out of "
                "core on one machine)"
            )
    if options.get("debias") is not None:
        # the border is a statistic of every query's judgments, which no part holds
        raise InvalidValueError(
            f"debias= reads the quartiles of every item's users over all the judgments, "
            f"and on {engine} each part holds some queries only: down-sample the judgments "
            "first (polars_irmetrics.ground.debias.debiased) or evaluate with "
            "polars_irmetrics.evaluate"
        )
    return EvalOptions.build(**options)


def check_options_read(
    options: EvalOptions,
    metrics: str | Iterable[str],
    *,
    labels: bool,
    tables: Collection[str] | None = None,
    run: pa.Schema | None = None,
) -> None:
    """Refuse an option none of ``metrics`` reads, with the message of
    :func:`~polars_irmetrics.evaluate` (the door's checks,
    :func:`~polars_irmetrics.ground.options.check_read`,
    :func:`~polars_irmetrics.door.evaluate.check_ids_read` (``query_id=`` and ``doc_id=``
    that no prediction metric reads: the engines then split the table without them),
    :func:`~polars_irmetrics.door.evaluate.check_level_read`, with ``run`` (the run's
    schema) :func:`check_run_columns` and, with ``tables`` (the keywords of the tables
    given), :func:`~polars_irmetrics.door.evaluate.check_item_options`, in the door's
    order); ``labels``: whether a ``labels=`` table was given.

    Examples
    --------
    >>> check_options_read(EvalOptions.build(sample_weight="w"), ["ndcg@10"], labels=False)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: sample_weight='w' is not read by metric ...
    """
    requests = parse_metric_list(metrics)
    routes = labels_by_route(requests)
    check_read(options, routes, labels=labels)
    check_ids_read(options, requests, routes, labels=labels)
    check_level_read(options, requests)  # beside graded metrics alone, as evaluate
    if run is not None:  # rank=, score=, sample_id= naming no column of the run
        check_run_columns(options, run)
    if tables is not None:  # the beyond-accuracy options that read a table not given
        check_item_options(options, tables)
        check_queries_read(list(routes), "queries" in tables)


def check_run_columns(options: EvalOptions, run: pa.Schema) -> None:
    """Refuse a ``rank=``, ``score=`` or ``sample_id=`` given that names no column of
    the run (``run``: its schema), with :func:`~polars_irmetrics.evaluate`'s exception
    and message: the door's own check
    (:func:`~polars_irmetrics.ground.options.check_named_columns`), on the columns of the
    run's long form, which the door reads them from (a list-shaped run's positions are
    the column ``rank=`` names: :func:`~polars_irmetrics.ground.lists.long_run` on an
    empty frame of the schema). Without it an engine would rank by the other order
    column, or read one deterministic ranking, in silence.

    Examples
    --------
    >>> scored = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                     ("score", pa.float64())])
    >>> check_run_columns(EvalOptions.build(rank="r"), scored)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnNotFoundError: rank='r' names no column of the run ...

    A list per query (one row each): its positions are the ``rank=`` column.

    >>> listed = pa.schema([("query_id", pa.string()), ("doc_id", pa.list_(pa.string()))])
    >>> check_run_columns(EvalOptions.build(rank="position"), listed)
    """
    long = long_run(
        _empty(run).lazy(),
        query_id=options.query_id,
        doc_id=options.doc_id,
        rank=options.rank,
        score=options.score,
        relevance=options.relevance,
    )
    check_named_columns(options, long.collect_schema(), "run")


def attribute_columns(
    run_schema: pa.Schema,
    qrels_schema: pa.Schema | None,
    queries_schema: pa.Schema,
    options: EvalOptions,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``by`` keys a ``queries=`` table gives, and those of them the run lacks.

    Checked on the driver as one machine checks them
    (:func:`~polars_irmetrics.offline.attributes.with_query_attributes`, on empty frames
    of the schemas): the engine then joins ``queries`` onto the judgments (or the judged
    table) and onto the run where it lacks a key, so that each judged query counts in
    the group its own value names.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("rank", pa.int64())])
    >>> qrels = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                    ("relevance", pa.int64())])
    >>> queries = pa.schema([("query_id", pa.string()), ("day", pa.string())])
    >>> attribute_columns(run, qrels, queries, EvalOptions(by="day"))
    (('day',), ('day',))
    """
    # a key of one kind in two dtypes is lined up, as the door lines it up
    queries = _empty(queries_schema).lazy()
    run, tables = with_common_keys(
        _empty(run_schema).lazy(),
        {
            "qrels": None if qrels_schema is None else _empty(qrels_schema).lazy(),
            "queries": queries,
        },
        options.by_keys,
    )
    lined = tables["queries"]
    _, _, keys = with_query_attributes(
        run, tables["qrels"], queries if lined is None else lined, options
    )
    return keys, tuple(k for k in keys if k not in run_schema.names)


def prepare(
    run_schema: pa.Schema,
    qrels_schema: pa.Schema | None,
    metrics: str | Iterable[str],
    options: EvalOptions,
    sides: tuple[tuple[str, pa.Table], ...] = (),
) -> Job:
    """Check everything that can be checked without the data, on the driver.

    The one-machine plan is built on empty frames of the two schemas: it raises
    the library's errors for columns, dtypes, metric names and options, and gives the
    schemas of the per-query values and of the means.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                  ("rank", pa.int32()), ("system", pa.string())])
    >>> qrels = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                    ("relevance", pa.int64())])
    >>> job = prepare(run, qrels, ["map", "P@5"], EvalOptions(systems="system"))
    >>> job.keys, job.run_only_by, list(job.means_schema)
    (('system', 'query_id'), ('system',), ['system', 'num_q', 'map', 'P@5'])
    >>> prepare(run, qrels, ["ndcg@ten"], EvalOptions())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: ...

    A ``by`` key the judgments lack is refused here, where one machine refuses it only
    when a group missed a judged query: each part sees its own queries only.

    >>> prepare(run, qrels, ["map"], EvalOptions(by="system"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.QuerySetError: by key 'system' is in the run but not in the ...
    """
    given = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    requests = parse_metric_list(given)
    refuse_run_only_by(run_schema, qrels_schema, given, options)
    placing = any(_scores_unretrieved(r) for _, r in requests)
    options = options.replace(buckets=None, partitioned_by=None)
    run = _empty(run_schema).lazy()
    qrels = None if qrels_schema is None else _empty(qrels_schema).lazy()
    tables = {"qrels": qrels, **{name: _frame(table).lazy() for name, table in sides}}
    per_query = evaluate_plan(run, requests, tables, options.replace(per_query=True))
    averaged = evaluate_plan(run, requests, tables, options.replace(per_query=False))
    by = options.by_keys
    found: list[Coverage] = []
    evaluate_plan(
        run, requests, tables, options.replace(per_query=True), warn=found.append
    ).collect()
    return Job(
        metrics=given,
        options=options.replace(per_query=True),
        keys=(*by, options.query_id),
        by=by,
        run_only_by=()
        if qrels_schema is None or not placing
        else tuple(k for k in by if k not in qrels_schema.names),
        per_query_schema=per_query.collect_schema(),
        means_schema=averaged.collect_schema(),
        coverage=found[0] if found else None,
        sides=sides,
    )


def refuse_run_only_by(
    run_schema: pa.Schema,
    qrels_schema: pa.Schema | None,
    metrics: str | Iterable[str],
    options: EvalOptions,
    queries_schema: pa.Schema | None = None,
) -> None:
    """Refuse a ``by`` key of the run alone beside the judgments (and not in
    ``queries=``, which gives it to them) where a metric of the call may score a judged
    query a group did not retrieve: each part sees its own queries, so it cannot place
    such a query. ``awrf``, ``awrf_ndcg`` and rND's family score no such query: a part
    holds every row of its queries, and its plan scores them as one machine does.
    Called on a whole call's ``metrics`` before an engine splits it in two
    (:func:`~polars_irmetrics.engines._sides.two_calls`), so that the message offers
    the fixes that work for the whole call.

    >>> import pyarrow as pa
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                  ("rank", pa.int32()), ("day", pa.string())])
    >>> qrels = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                    ("relevance", pa.int64())])
    >>> refuse_run_only_by(run, qrels, ["awrf"], EvalOptions(by="day"))
    >>> refuse_run_only_by(run, qrels, ["map"], EvalOptions(by="day"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.QuerySetError: by key 'day' is in the run but not in the ...

    A key of neither the run nor ``queries=`` is left to the plan, whose
    ``ColumnNotFoundError`` is one machine's:

    >>> refuse_run_only_by(run, qrels, ["map"], EvalOptions(by="nope"))
    """
    if qrels_schema is None or options.unretrieved == "drop":
        return
    given = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    requests = parse_metric_list(given)
    attributes = () if queries_schema is None else queries_schema.names
    if any(k not in {*run_schema.names, *attributes} for k in options.attribute_keys):
        # a key of no table: one machine's ColumnNotFoundError, raised by the plan each
        # engine builds on empty tables before any job (not a run-only key's refusal)
        return
    placed = {*qrels_schema.names, *attributes}
    unplaced = [k for k in options.attribute_keys if k not in placed]
    if unplaced and any(_scores_unretrieved(r) for _, r in requests):
        _refuse_unplaced(unplaced[0], requests)


def refuse_split_call(
    run_schema: pa.Schema,
    qrels_schema: pa.Schema | None,
    metrics: str | Iterable[str],
    options: EvalOptions,
    queries_schema: pa.Schema | None = None,
) -> None:
    """The refusals of a call that asks for the exposure measures beside the ranking
    metrics, decided on the whole call before an engine splits it in two
    (:func:`~polars_irmetrics.engines._sides.two_calls`), where each half would not
    see them: a run of sampled rankings (one machine's refusal, from the call's metrics
    and the run's columns; the ranking metrics' half alone would refuse it only where a
    query holds two samples, with another message), then a ``by`` key of the run alone
    (:func:`refuse_run_only_by`).

    >>> import pyarrow as pa
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                  ("rank", pa.int32()), ("sample", pa.int64())])
    >>> refuse_split_call(run, None, ["ndcg@2", "ee_loss"], EvalOptions())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: the run's column 'sample' (sample_id=) ...
    """
    given = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    refuse_samples_beside(run_schema.names, parse_metric_list(given), options)
    refuse_run_only_by(run_schema, qrels_schema, given, options, queries_schema)


def _scores_unretrieved(request: MetricRequest) -> bool:
    """Whether ``request`` may score a judged query a group did not retrieve, which a
    ``by`` key of the run alone cannot place: a metric of the judgments other than the
    exposure measures that read the rankings alone: only the expected-exposure ones
    (:data:`~polars_irmetrics.metrics.fairness.EXPECTED_EXPOSURE`) score a judged query
    a group did not retrieve (an empty ranking); awrf, awrf_ndcg, rnd, rkl and rrd score
    the rankings the run holds; the beyond-accuracy metrics read no judgments."""
    if request.route == "recsys":
        return False
    if request.route == "exposure":
        return request.metric.name in EXPECTED_EXPOSURE
    return True


def _refuse_unplaced(key: str, requests: list[tuple[str, MetricRequest]]) -> NoReturn:
    """Refuse a ``by`` key of the run alone (``key``) beside the judgments: each part
    sees its own queries, so a judged query that some group did not retrieve cannot be
    placed. ``unretrieved='drop'`` is offered where it is a way out for ``requests``:
    a metric asked for reads it (:data:`~polars_irmetrics.ground.options.READ_BY`) and
    no exposure measure that reads the judgments is asked for (they refuse it alone,
    and beside the ranking metrics on Spark and Dask), as one machine offers it."""
    routes = {r.route for _, r in requests}
    drop = bool(routes & READ_BY["unretrieved"]) and not any(
        r.route == "exposure" and "judgments" in r.metric.reads for _, r in requests
    )
    raise errors.QuerySetError(
        f"by key {key!r} is in the run but not in the judgments: on Spark and Dask each "
        f"part sees its own queries, so a judged query that some {key!r} group did not "
        "retrieve cannot be placed. If it names systems or runs (each scored on every "
        f"judged query), pass systems={key!r} instead of by=; if it is an attribute of "
        f"the query (day, market, segment), give each judged query its {key!r}: with "
        f"queries= (a table of query ids and {key!r}), or in a {key!r} column of the "
        "judgments"
        + (
            "; or pass unretrieved='drop' to score each group on the queries it retrieved"
            if drop
            else ""
        )
    )


def evaluate_part(
    job: Job, run: pa.Table, qrels: pa.Table | None, sink: PartSink | None = None
) -> pa.Table:
    """The per-query values of one part: every row of its queries, from both sides.

    A data error is the library's own exception, raised as the one-machine plan
    raises it (Spark carries it back with :func:`carry_error`). ``sink`` is handed the
    part's :class:`~polars_irmetrics.offline.coverage.Coverage`, which the engine adds
    up (:func:`warn_coverage`); for the click metrics, the part's :class:`Clicks`
    (:func:`warn_on_values`).
    """
    qrels_frame = None if qrels is None else _frame(qrels).lazy()
    plan = evaluate_plan(
        _frame(run).lazy(), job.requests, job.tables(qrels_frame), job.options, warn=sink or False
    )
    return _to_arrow(_handed_clicks(plan.collect(), sink), job.per_query_schema)


def _handed_clicks(frame: pl.DataFrame, sink: PartSink | None) -> pl.DataFrame:
    """A part's values without the sessions' counts of clicks the click metrics' plan
    keeps for a part (:data:`~polars_irmetrics.online.sessions.CLICKS`), their sum
    handed to ``sink``; other values as they are."""
    if sink is None or CLICKS not in frame.columns:
        return frame
    sink(Clicks(int(frame[CLICKS].sum())))
    return frame.drop(CLICKS)


def evaluate_lazy(
    job: Job, run: pl.LazyFrame, qrels: pl.LazyFrame | None, sink: PartSink | None = None
) -> pa.Table:
    """:func:`evaluate_part` of lazy frames (files not read yet), collected by polars'
    streaming engine: the rows are read, joined and aggregated in batches, so a task's
    memory holds a part of its rows at a time (the metrics' sums are exact in any
    batching: :func:`~polars_irmetrics.metrics.scope.fixed_sum`)."""
    judged = None if qrels is None else qrels.drop(PART, strict=False)
    plan = evaluate_plan(
        run.drop(PART, strict=False),
        job.requests,
        job.tables(judged),
        job.options,
        warn=sink or False,
    )
    values = _handed_clicks(plan.collect(engine="streaming"), sink)
    return _to_arrow(values, job.per_query_schema)


def summarize_part(job: Job, per_query: pa.Table) -> pa.Table:
    """The means of per-query values, as :func:`~polars_irmetrics.evaluate` computes them.

    ``per_query`` holds every per-query row of one or more whole ``by`` groups (every
    row, without ``by``): they are sorted by the keys and averaged by each metric's
    ``summarize`` expression, a running sum in query order.

    Examples
    --------
    Without ``by``, no query at all still gives one row, with ``num_q`` 0:

    >>> import pyarrow as pa
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> schema = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                     ("rank", pa.int64()), ("relevance", pa.int64())])
    >>> job = prepare(schema, None, ["map"], EvalOptions())
    >>> summarize_part(job, pa.table({"query_id": ["q2", "q1"], "map": [0.25, 0.5]}))
    pyarrow.Table
    num_q: int64
    map: double
    ----
    num_q: [[2]]
    map: [[0.375]]
    >>> summarize_part(job, pa.table({"query_id": pa.array([], pa.string()),
    ...                               "map": pa.array([], pa.float64())}))["num_q"]
    <pyarrow.lib.ChunkedArray object at ...>
    [
      [
        0
      ]
    ]
    """
    frame = _frame(per_query).sort(list(job.keys))
    summaries = _summaries(job)
    if job.by:
        out = frame.group_by(list(job.by), maintain_order=True).agg(summaries)
    else:
        out = frame.select(summaries)
    return _to_arrow(out, job.means_schema)


def tells_segments(job: Job) -> bool:
    """Whether the means of ``job`` hold a row for every ``by`` group of the run, those
    its measures score no query of too (:func:`summarized_segments`): the exposure
    measures asked alone, with ``by`` keys, as one machine gives them (a query they do
    not score has no per-query row, so the parts' values lack such a group)."""
    return bool(job.by) and all(r.route == "exposure" for _, r in job.requests)


def summarized_segments(
    job: Job,
    means: pl.DataFrame,
    segments: pl.DataFrame,
    emit: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """``means`` (one row per ``by`` group the values hold, :func:`summarize_part`'s)
    and a row for each group of ``segments`` (the run's distinct ``by`` keys) they
    lack, with the summary of no query (``num_q`` 0), sorted by the keys; the groups
    scored on no query named, in the one plan's words
    (:func:`~polars_irmetrics.exposure.rnd.warn_unscored_groups`). ``emit`` as
    :func:`warn_coverage`'s.

    Examples
    --------
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> schema = pa.schema([("seg", pa.string()), ("query_id", pa.string()),
    ...                     ("doc_id", pa.string()), ("score", pa.float64())])
    >>> groups = pa.table({"doc_id": ["a"], "group": ["x"]})
    >>> job = prepare(schema, None, ["rnd"], EvalOptions(by="seg"), (("groups", groups),))
    >>> means = pl.DataFrame({"seg": ["s"], "num_q": [1], "rnd": [0.5]})
    >>> segments = pl.DataFrame({"seg": ["t", "s"]})
    >>> whole = summarized_segments(job, means, segments, print)  # doctest: +ELLIPSIS
    'rnd' scores no query in 1 of the 2 groups of 'seg' (first: seg='t'): num_q is 0 ...
    >>> whole.rows()
    [('s', 1, 0.5), ('t', 0, None)]
    """
    keys = list(job.by)
    found = means.select(job.means_schema.names())
    empty = pl.DataFrame(schema=job.per_query_schema).select(_summaries(job))
    lacking = (
        segments.select(keys)
        .unique()
        .cast(found.select(keys).schema)
        .join(found.select(keys), on=keys, how="anti", nulls_equal=True)
        .join(empty, how="cross")
    )
    whole = pl.concat([found, lacking.select(found.columns)], how="vertical_relaxed")
    whole = whole.sort(keys).cast(found.schema)
    warn_unscored_groups(whole, keys, [label for label, _ in job.requests], emit)
    return whole


class Covered(Protocol):
    """A job whose parts give their coverage: the coverage of no query (``None`` where
    its plan gives no coverage warning) and its options."""

    @property
    def coverage(self) -> Coverage | None: ...

    @property
    def options(self) -> EvalOptions: ...


def warn_coverage(
    job: Covered, parts: Iterable[Coverage], emit: Callable[[str], None] | None = None
) -> None:
    """Warn as :func:`~polars_irmetrics.evaluate` warns on the same data: the coverage
    of every part (:func:`evaluate_part`'s ``sink``) added up, once per run or system
    (:class:`~polars_irmetrics.errors.CoverageWarning`); nothing where the metrics' plan
    gives no such warning. ``emit``: where each text goes (default: warned here).

    Examples
    --------
    A run whose ids match none of the judgments', in two parts:

    >>> import warnings
    >>> import pyarrow as pa
    >>> run = pa.table({"query_id": ["q1", "q2"], "doc_id": ["A", "b"], "rank": [1, 1]})
    >>> qrels = pa.table({"query_id": ["q1", "q2"], "doc_id": ["a", "c"],
    ...                   "relevance": [1, 1]})
    >>> job = prepare(run.schema, qrels.schema, ["mrr"], EvalOptions())
    >>> parts: list[Coverage] = []
    >>> for i in (0, 1):
    ...     _ = evaluate_part(job, run.slice(i, 1), qrels.slice(i, 1), parts.append)
    >>> warn_coverage(job, parts, emit=print)  # doctest: +NORMALIZE_WHITESPACE
    the run retrieves no judged document (0 of 2 judged documents, in 0 of 2 judged
    queries; it lists 2 of the 2 judged queries): every judged query scores as a ranking
    of no judged document does (0 in ndcg, map, precision, recall and the like), as
    trec_eval scores such a run. 1 (query, document) pair(s) of the run match
    a judgment only when case is ignored (run 'A', judgments 'a'): ids are compared
    exactly, as trec_eval compares them; give both the same spelling, e.g.
    pl.col('doc_id').str.to_lowercase() on the run and the judgments.
    """
    if job.coverage is None:
        return
    merged = Coverage.merged([job.coverage, *parts], job.options.system_keys)
    if merged is not None:
        enums = {k: pl.Enum(list(c)) for k, c in getattr(job, "enums", ())}
        if enums:  # the systems warned of in the Enum's order, one machine's
            merged = _as_enums(merged, enums)
        merged.warn(job.options.system_keys, emit)


def _as_enums(coverage: Coverage, enums: Mapping[str, pl.Enum]) -> Coverage:
    """``coverage`` with its per-system tallies' text keys cast to their Enums."""

    def typed(frame: pl.DataFrame | None) -> pl.DataFrame | None:
        if frame is None:
            return None
        given = [(k, e) for k, e in enums.items() if k in frame.columns]
        return frame.with_columns(pl.col(k).cast(pl.String).cast(e) for k, e in given)

    counts = typed(coverage.counts)
    return replace(
        coverage,
        counts=coverage.counts if counts is None else counts,
        blind=typed(coverage.blind),
        partly=typed(coverage.partly),
    )


def values_tally(job: Job, per_query: pa.Table) -> tuple[pl.DataFrame, int]:
    """What a part's per-query values tell :func:`warn_on_values`: its rows where an
    asked ``rnd``, ``rkl`` or ``rrd`` is undefined, or an expected-exposure measure
    leaves out a query (:func:`~polars_irmetrics.exposure.rnd.undefined_part`), and its
    count of rows."""
    options = job.options
    frame = _frame(per_query)
    return undefined_part(frame, list(job.requests), list(options.by_keys), options.query_id)


def tells_values(job: Job) -> bool:
    """Whether :func:`warn_on_values` may say something of ``job``'s values: a
    ``rnd``, ``rkl`` or ``rrd`` is asked for, an expected-exposure measure beside
    another exposure measure (a query it leaves out), or click metrics (an empty log)."""
    return bool(judged_labels(list(job.requests))) or any(
        r.metric.name in SEGREGATION or r.route == "online" for _, r in job.requests
    )


def warn_on_values(
    job: Job,
    parts: Iterable[tuple[pl.DataFrame, int]],
    emit: Callable[[str], None] | None = None,
    *,
    summary: bool = False,
    clicks: int | None = None,
) -> None:
    """Warn as :func:`~polars_irmetrics.evaluate` warns on the whole run's per-query
    values, from every part's :func:`values_tally`: a ``rnd``, ``rkl`` or ``rrd``
    asked for NaN on some queries (the one plan's text, over the whole run's queries),
    or an impression log of no session (a part may hold none of a log that has some,
    so the parts do not warn: :func:`~polars_irmetrics.ground.validate.warn_empty_table`
    once here), or of sessions and no click at all (``clicks``, every part's
    :class:`Clicks` added up, :func:`clicks_of`: a part may hold no click of a log
    that has some, so this is warned here, once:
    :func:`~polars_irmetrics.online.sessions.warn_on_no_click`, its class kept through
    ``emit``), or, where the result is the means (``summary``; a job's own options
    are per query), an expected-exposure measure that leaves out queries the exposure
    measures beside score. ``emit`` as :func:`warn_coverage`'s.

    >>> schema = pa.schema([("session_id", pa.string()), ("position", pa.int64()),
    ...                     ("clicked", pa.bool_())])
    >>> job = prepare(schema, None, ["ctr"], EvalOptions(query_id="session_id",
    ...                                                 rank="position"))
    >>> parts = [(pl.DataFrame(), 2), (pl.DataFrame(), 1)]
    >>> warn_on_values(job, parts, emit=print, clicks=0)  # doctest: +ELLIPSIS
    column 'clicked' of the impression log has no click: every impression of its 3 ...
    >>> warn_on_values(job, parts, emit=print, clicks=1)
    """
    options, found = job.options, list(parts)
    online = any(r.route == "online" for _, r in job.requests)
    sessions = sum(count for _, count in found)
    if online and not sessions:
        text = empty_table_text("the impression log")
        if emit is None:
            warn_from_plan(text, IrmWarning)
        else:
            emit(text)
        return
    if online and clicks == 0:  # the one machine's words, and its class
        warned_to(lambda: warn_on_no_click(options.clicked, sessions, [options.query_id]), emit)
    warn_undefined_parts(
        found,
        list(job.requests),
        list(options.by_keys),
        options.query_id,
        emit,
        summary=summary,
    )


def carry_error(exc: IrmError) -> CarriedError:
    """A :class:`CarriedError` whose text names ``exc``'s class and holds its message.

    The message is base64-encoded, so that no engine's formatting of its exceptions
    can change it.

    Examples
    --------
    >>> from polars_irmetrics.errors import DuplicateError
    >>> carried = carry_error(DuplicateError("query 'q1' lists 'a' twice"))
    >>> raise_carried(RuntimeError(f"Java said: {carried}"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.DuplicateError: query 'q1' lists 'a' twice
    """
    text = base64.b64encode(str(exc).encode()).decode("ascii")
    return CarriedError(f"{_MARK}[{type(exc).__name__}][{text}]")


def raise_carried(exc: BaseException) -> NoReturn:
    """Raise the library error carried in ``exc``'s text, or ``exc`` itself if none is."""
    found = _CARRIED.search(str(exc))
    if found is not None:
        cls = getattr(errors, found.group(1), None)
        if isinstance(cls, type) and issubclass(cls, IrmError):
            raise cls(base64.b64decode(found.group(2)).decode()) from None
    raise exc


def arrow_schema(schema: pl.Schema) -> pa.Schema:
    """``schema`` in Arrow, with the plain (32-bit offset) string and binary types."""
    table = pl.DataFrame(schema=schema).to_arrow(compat_level=pl.CompatLevel.oldest())
    small = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    return pa.schema(pa.field(f.name, small.get(f.type, f.type)) for f in table.schema)


def _empty(schema: pa.Schema) -> pl.DataFrame:
    return _frame(schema.empty_table())


_Frame = TypeVar("_Frame")


def judgments_given(qrels: _Frame | None, metrics: str, reads: str = "the judgments") -> _Frame:
    """``qrels`` of metrics that read judgments (any frame: Spark's, Dask's, polars'),
    typed as given. The job's preparation (one machine's plan on empty frames) has
    refused the metrics without them, naming the metric; this raises the same kind of
    error for a caller that skipped that step: ``{metrics} read {reads}: pass
    qrels=...``."""
    if qrels is None:
        raise MetricParameterError(f"{metrics} read {reads}: pass qrels=...")
    return qrels


def as_polars_frame(table: pa.Table) -> pl.DataFrame:
    """An Arrow table as a polars DataFrame (typed as one: a Table always converts to a
    DataFrame, where ``pl.from_arrow`` is typed for a Series too)."""
    return cast(pl.DataFrame, pl.from_arrow(table))


def _summaries(job: Job) -> list[pl.Expr]:
    """``num_q`` and each metric's summary of its per-query values."""
    requests = job.requests
    if requests and all(merges_from_users(r, history=True) for _, r in requests):
        # a recommendation table's means of per-user values, as the one plan takes them
        return [user_mean(label, r) for label, r in requests]
    return means(requests)


def _frame(table: pa.Table) -> pl.DataFrame:
    return as_polars_frame(table).drop(PART, strict=False)


def _to_arrow(frame: pl.DataFrame, schema: pl.Schema) -> pa.Table:
    table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
    return table.cast(arrow_schema(schema))


@dataclass(frozen=True)
class Relay:
    """Where a task's warnings go from a Dask worker: ``send`` hands a text and its
    warning class on (``distributed.warn``'s event, which the client warns with), as
    ``category`` where a caller names none (an ``emit`` of one text);
    :func:`warned_to` gives each caught warning's own class, so a warning relayed has
    the class it has on one machine."""

    send: Callable[[str, type[Warning]], None]
    category: type[Warning]

    def __call__(self, text: str, category: type[Warning] | None = None) -> None:
        self.send(text, self.category if category is None else category)


def warned_to(give: Callable[[], object], emit: Callable[[str], None] | None) -> bool:
    """Run ``give``, which may warn: its warnings are given here, or handed as texts to
    ``emit`` (from a Dask worker, a :class:`Relay` to ``distributed.warn``, which shows
    them on the client, each as its own class). True: a task's output, which the
    values' release waits for.

    Examples
    --------
    >>> warned_to(lambda: warnings.warn("half the ids"), emit=print)
    half the ids
    True
    >>> relay = Relay(lambda text, kind: print(kind.__name__, text), errors.CoverageWarning)
    >>> warned_to(lambda: warnings.warn("a NaN", IrmWarning), emit=relay)
    IrmWarning a NaN
    True
    """
    if emit is None:
        give()
        return True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        give()
    for warning in caught:
        if isinstance(emit, Relay):  # the warning's own class, not the relay's default
            emit(str(warning.message), warning.category)
        else:
            emit(str(warning.message))
    return True


@dataclass(frozen=True)
class Withheld:
    """Warnings counted now and given later: :meth:`count` runs a function that may warn
    and keeps each warning's text and class (``category`` where a relayed text names
    none), :meth:`give` gives them in that order, once the values they describe are
    known not to be refused (a refused input warns of nothing, as on one machine).

    >>> held = Withheld(IrmWarning)
    >>> held.count(lambda: warnings.warn("a NaN", errors.CoverageWarning))
    >>> [(text, kind.__name__) for text, kind in held.texts]
    [('a NaN', 'CoverageWarning')]
    >>> held.give(emit=lambda text, kind: print(kind.__name__, text))
    CoverageWarning a NaN
    """

    category: type[Warning]
    texts: list[tuple[str, type[Warning]]] = field(default_factory=list)

    def count(self, give: Callable[[], object]) -> None:
        """Run ``give``, keeping its warnings (:func:`warned_to`) to be given later."""
        warned_to(give, Relay(self._keep, self.category))

    def give(self, emit: Callable[[str, type[Warning]], None] | None = None) -> None:
        """Give the kept warnings, in the order counted (:func:`give_warnings`)."""
        give_warnings(self.texts, emit)

    def _keep(self, text: str, kind: type[Warning]) -> None:
        self.texts.append((text, kind))


def give_warnings(
    texts: Iterable[tuple[str, type[Warning]]],
    emit: Callable[[str, type[Warning]], None] | None = None,
) -> None:
    """Give each ``(text, class)`` of ``texts`` in order: here, as the plan gives its own
    (:func:`~polars_irmetrics.ground.validate.warn_from_plan`), or handed to ``emit``
    (a Dask worker's relay to the client)."""
    for text, kind in texts:
        if emit is None:
            warn_from_plan(text, kind)
        else:
            emit(text, kind)
