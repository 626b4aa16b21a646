"""The options of one evaluation, built once at the door and carried inward as one object.

:func:`~polars_irmetrics.evaluate` and every door built on it (comparison, fusion,
Spark, Dask, the namespace, the command line) take the same keyword arguments,
typed once as :class:`EvalKwargs`; :meth:`EvalOptions.build` turns them into one
checked :class:`EvalOptions`, which the wings' plans read. A value that needs no data
to be judged (a policy, a depth, a key listed twice) is refused here, whatever the
metrics; what needs the tables' schemas is checked when a plan is built.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from polars_irmetrics.ground.buckets import (
    Buckets,
    check_buckets,
    check_spill_dir,
    refuse_spill_without_buckets,
)
from polars_irmetrics.ground.calls import is_data, shown_value
from polars_irmetrics.ground.debias import Debias
from polars_irmetrics.ground.progress import check_progress
from polars_irmetrics.ground.validate import Policy, check_policy

__all__ = [
    "INTERNAL_OPTIONS",
    "LIBRARY_KEYS",
    "READ_BY",
    "ROUTE_METRICS",
    "UNSEEN_POLICIES",
    "WORKING_PREFIX",
    "CiMethod",
    "EvalKwargs",
    "EvalOptions",
    "Keys",
    "Order",
    "PlanKwargs",
    "Unmatched",
    "UnseenItems",
    "check_key_roles",
    "check_read",
    "check_unseen_items",
    "key_keyword",
    "key_names",
    "log_key_error",
    "option_names",
    "refuse_repeated_key",
    "refuse_result_keys",
    "refuse_working_name",
]

Order = Literal["auto", "rank", "score"]
Unmatched = Literal["error", "drop"]
#: What a beyond-accuracy evaluation does with a recommended item it has no data for
#: (:func:`~polars_irmetrics.beyond_accuracy`'s ``unseen_items``).
UnseenItems = Literal["error", "drop", "recommenders"]
UNSEEN_POLICIES: tuple[UnseenItems, ...] = ("error", "drop", "recommenders")
Keys = str | Sequence[str] | None
#: How an off-policy estimate's interval is computed (``ci_method=``).
CiMethod = Literal["bootstrap", "normal"]


class PlanKwargs(TypedDict, total=False):
    """The keyword arguments of an evaluation that a door built on it passes through
    unchanged (:func:`~polars_irmetrics.compare` sets the groups and the query set)."""

    order: Order
    relevance_level: float
    depth: int | None
    judged_only: bool
    unjudged: Policy
    check_duplicates: bool
    debias: Debias | None
    buckets: Buckets
    spill_dir: str | Path | None
    memory_limit: int | str | None
    explain: bool
    partitioned_by: str | None
    progress: bool | None
    query_id: str
    doc_id: str
    rank: str
    score: str
    relevance: str
    clicked: str
    dwell: str
    converted: str
    timestamp: str
    label: str
    prediction: str
    sample_weight: str | None
    positive_label: int | float | str
    unmatched: Unmatched
    unseen_items: UnseenItems
    features: str
    serendipity_relevance: str | None
    jg: str
    sample_id: str
    round_id: str
    action: str
    reward: str
    propensity: str
    position: str


class EvalKwargs(PlanKwargs, total=False):
    """The keyword arguments every evaluating door takes (see :class:`EvalOptions`).

    Typed once here, so that :func:`~polars_irmetrics.evaluate`'s overloads, the
    namespace and the engines carry them with ``**options: Unpack[EvalKwargs]``.
    """

    by: Keys
    systems: Keys
    per_query: bool
    unretrieved: Policy
    ci: float | None
    ci_method: CiMethod
    n_bootstrap: int
    seed: int


#: Which route of the door (:func:`~polars_irmetrics.door.evaluate.route`: the wing that
#: computes a metric, from the tables it reads) reads each option of
#: :class:`EvalKwargs`. An option given (a value other than its default) that no route
#: of the requested metrics reads is refused (:func:`check_read`), never ignored.
#: ``by`` and ``systems`` have refusals of their own (the preference, judgment-group and
#: click routes say how to evaluate groups), so they are not in this table.
_RANKED = frozenset(
    {"offline", "recsys", "neighbors", "jg", "prefs", "reference", "propensity", "exposure"}
)
_JUDGED = frozenset({"offline", "jg"})
#: the routes with out-of-core steps
_STEPPED = frozenset(
    {"offline", "online", "prediction", "ope", "propensity", "exposure", "reference", "recsys"}
)
#: Every route (the door's :data:`~polars_irmetrics.metrics.spec.Route`, which this
#: layer cannot import; tests/test_unread_options.py holds the two equal).
ROUTES = frozenset(
    {
        "offline",
        "recsys",
        "online",
        "prefs",
        "jg",
        "prediction",
        "neighbors",
        "ope",
        "reference",
        "propensity",
        "exposure",
    }
)
READ_BY: Mapping[str, frozenset[str]] = {
    "per_query": ROUTES,
    "query_id": ROUTES - {"ope"},  # a log's rounds are round_id=
    "doc_id": ROUTES - {"online", "ope"},  # reference: the run's and reference='s
    "order": _RANKED,
    "rank": _RANKED | {"online"},  # an impression log's position
    "score": _RANKED,
    "relevance": _JUDGED | {"propensity", "exposure"},
    "relevance_level": _JUDGED | {"propensity"},
    "depth": _JUDGED | {"prefs"},
    "judged_only": _JUDGED,
    # jg: the judgment groups' plan reads the judged queries alone
    "unjudged": frozenset({"offline", "neighbors", "reference"}),
    "unretrieved": _JUDGED | {"prefs", "neighbors", "reference"},
    "check_duplicates": _JUDGED | {"recsys", "prefs"},  # recsys: unrepeated_reco
    "debias": frozenset({"offline"}),  # RecTools' DebiasConfig: the judgments down-sampled
    "buckets": _STEPPED,
    "spill_dir": _STEPPED,
    "progress": _STEPPED,
    "memory_limit": frozenset({"offline"}),
    "explain": frozenset({"offline"}),
    "partitioned_by": frozenset({"offline"}),
    "clicked": frozenset({"online"}),
    "dwell": frozenset({"online"}),
    "converted": frozenset({"online"}),
    "timestamp": frozenset({"online"}),
    "label": frozenset({"prediction"}),
    "prediction": frozenset({"prediction"}),
    "sample_weight": frozenset({"prediction"}),
    "positive_label": frozenset({"prediction"}),
    "unmatched": frozenset({"prediction"}),
    "unseen_items": frozenset({"recsys"}),
    "features": frozenset({"recsys"}),
    "serendipity_relevance": frozenset({"recsys"}),
    "jg": frozenset({"jg"}),
    "sample_id": frozenset({"exposure"}),
    "round_id": frozenset({"ope"}),
    "action": frozenset({"ope"}),
    "reward": frozenset({"ope"}),
    "propensity": frozenset({"ope"}),
    "position": frozenset({"ope"}),
    "ci": frozenset({"ope"}),
    "ci_method": frozenset({"ope"}),
    "n_bootstrap": frozenset({"ope"}),
    "seed": frozenset({"ope"}),
}

#: The metrics of each route, as the messages name them.
ROUTE_METRICS: Mapping[str, str] = {
    "offline": "the ranking metrics of a run and judgments (ndcg, map, recall...)",
    "recsys": "the beyond-accuracy metrics (novelty, catalog_coverage, serendipity...)",
    "online": "the click metrics of an impression log (ctr, session_ctr...)",
    "prefs": "the preference measures (prefs_*)",
    "jg": "the judgment-group measures (*_avgjg)",
    "prediction": "the prediction metrics (auc, logloss, rmse...)",
    "neighbors": "neighbour recall (neighbor_recall@k, neighbor_recall_rel@k)",
    "ope": "the off-policy estimators (ips, snips, dr...)",
    "reference": "the rank-similarity metrics (rbo, jaccard, kendall_tau...)",
    "propensity": "the propensity-scored metrics (ps_precision@k, ps_ndcg@k)",
    "exposure": "the exposure measures (ee_loss, ee_disparity, ee_relevance, awrf, rnd...)",
}


def metrics_named(asked: Sequence[str]) -> str:
    """The asked metrics as a refusal names them: ``metric 'P@5'``, or ``metrics 'a',
    'b', 'c' ...`` (the first three).

    >>> metrics_named(["P@5"]), metrics_named(["a", "b", "c", "d"])
    ("metric 'P@5'", "metrics 'a', 'b', 'c' ...")
    """
    shown = ", ".join(repr(label) for label in asked[:3]) + (" ..." if len(asked) > 3 else "")
    return f"metric {shown}" if len(asked) == 1 else f"metrics {shown}"


def check_read(
    options: EvalOptions,
    routes: Mapping[str, Collection[str]],
    *,
    labels: bool = False,
) -> None:
    """Refuse an option given (see :meth:`EvalOptions.given`) that none of ``routes``
    (route -> the labels of the metrics it computes) reads (:data:`READ_BY`), and an
    option that only matters beside another one: ``spill_dir`` without buckets,
    ``memory_limit`` and ``explain`` without ``buckets="auto-memory"``, ``unmatched``
    without ``labels`` (the two-table prediction form)."""
    given = options.given()
    asked = [label for route in routes for label in routes[route]]
    metrics = metrics_named(asked)
    for name in given:
        readers = READ_BY.get(name)
        if readers is None or readers & set(routes):
            continue
        value = getattr(options, name)
        by = " and ".join(ROUTE_METRICS[r] for r in sorted(readers))
        raise InvalidValueError(
            f"{name}={value!r} is not read by {metrics}: only {by} read it; drop {name}= "
            "(an option no metric reads would change nothing), or evaluate a metric that "
            "reads it"
        )
    check_key_roles(options, routes, metrics)
    if "spill_dir" in given:
        refuse_spill_without_buckets(options.spill_dir, options.buckets, "evaluates")
        # buckets='auto-memory' splits the ranking metrics' run only: the prediction and
        # click metrics stay in one plan there, which writes nothing to the folder (the
        # other routes refuse it in their own words)
        if options.buckets == "auto-memory" and set(routes) <= {"prediction", "online"}:
            raise InvalidValueError(
                f"spill_dir={str(options.spill_dir)!r} is the folder of the out-of-core "
                f"buckets, and {metrics} evaluate{'s' if metrics.startswith('metric ') else ''} "
                "in one plan unless buckets= is a number or 'auto': pass buckets=, or drop "
                "spill_dir="
            )
    for name in ("memory_limit", "explain"):
        if name in given and options.buckets != "auto-memory":
            raise InvalidValueError(
                f"{name}={getattr(options, name)!r} is read only by buckets='auto-memory' "
                f"(which chooses one plan or out of core), and buckets={options.buckets!r} "
                f"chooses for itself: drop {name}=, or pass buckets='auto-memory'"
            )
    if "unmatched" in given and not labels:
        raise InvalidValueError(
            f"unmatched={options.unmatched!r} says what a prediction without a label does "
            "when the labels come in a table of their own (labels=...), and none was given: "
            "drop unmatched=, or pass labels="
        )


#: The columns each route reads as its data, by option, that a group key (``by=``,
#: ``systems=``) may not name: a key holds one value per query (per session of a log),
#: and these vary within one, so a key on them would split each query and its values
#: would be computed in silence. Each is ``(what the column holds, read by every metric
#: of the route)``: a column only some metrics read (an impression log's dwell,
#: conversions and timestamps) is refused where the wing says an asked metric reads it
#: (:func:`check_key_roles`' ``reads``), and is a key like any other column elsewhere
#: (a log's column named so may hold one value per session). The query and document ids
#: are refused for every route (:meth:`EvalOptions.check`); the offline, beyond-accuracy
#: and exposure plans refuse their own order and item columns (offline.setup,
#: recsys.plan, exposure.plan). The off-policy log's own columns (its rounds, actions,
#: rewards, propensities and positions) are the estimators' data, never a key: the slate
#: plans refuse their other propensity columns (``pscore_item_position``,
#: ``pscore_cascade``) where the log has them.
_KEY_ROLES: Mapping[str, Mapping[str, tuple[str, bool]]] = {
    "offline": {"relevance": ("the relevance labels", True)},
    "online": {
        "rank": ("the impressions' positions", True),
        "clicked": ("the clicks", True),
        "dwell": ("the dwell times", False),
        "converted": ("the conversions", False),
        "timestamp": ("the impressions' timestamps", False),
    },
    "prediction": {
        "label": ("the labels", True),
        "prediction": ("the predictions", True),
        "sample_weight": ("the sample weights", True),
    },
    "ope": {
        "round_id": ("the rounds' ids", True),
        "action": ("the logged actions", True),
        "reward": ("the rewards", True),
        "propensity": ("the logging policy's propensities", True),
        "position": ("the slates' positions", True),
    },
}


def check_key_roles(
    options: EvalOptions,
    routes: Collection[str],
    metrics: str = "the metrics",
    *,
    reads: Mapping[str, Sequence[str]] | None = None,
    segments: bool = False,
) -> None:
    """Refuse a ``by=`` or ``systems=`` key that names a column one of ``routes`` reads
    as its data (:data:`_KEY_ROLES`): a click log's positions or clicks (and its dwell
    times, conversions or timestamps where an asked metric reads them), a prediction
    table's labels, predictions or weights, an off-policy log's rounds, actions, rewards,
    propensities and positions (``by=`` only, :func:`log_key_error`: the off-policy plan
    refuses ``systems=`` itself).

    Parameters
    ----------
    options
        The keys (``by``, ``systems``) and the columns' names.
    routes
        The routes of the asked metrics.
    metrics
        The asked metrics, as a message names them (:func:`metrics_named`).
    reads
        The options of the columns only some metrics of a route read (``dwell``,
        ``converted``, ``timestamp``), each with the labels of the asked metrics that
        read it (the online wing knows them); a column left out is not refused.
        ``None``: only the columns every metric of a route reads are checked.
    segments
        Word the refusal as a segment key of a test (:func:`~polars_irmetrics.ab_test`,
        :func:`~polars_irmetrics.interleaving_test`: one value per session), not as a
        group key of an evaluation.

    Examples
    --------
    >>> check_key_roles(EvalOptions.build(by="clicked"), ["online"], "metric 'ctr'")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['clicked'] names 'clicked', which is ...
    >>> options = EvalOptions.build(by="converted")
    >>> check_key_roles(options, ["online"], "metric 'ctr'")  # ctr reads no conversion
    >>> check_key_roles(options, ["online"], reads={"converted": ["conversion_rate"]})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['converted'] names 'converted', which is ...
    """
    read = reads or {}
    roles: dict[str, tuple[str, str, str, str]] = {}  # role, readers, route, option
    for route in routes:
        for name, (role, every) in _KEY_ROLES.get(route, {}).items():
            column = getattr(options, name)
            if column is None or not (every or name in read):
                continue
            readers = metrics if every else metrics_named(read[name])
            roles[column] = (role, readers, route, name)
    for name, keys in (("systems", options.system_keys), ("by", options.attribute_keys)):
        for key in keys:
            if key not in roles:
                continue
            role, readers, route, option = roles[key]
            if route == "ope":
                if name == "systems":  # the off-policy plan refuses systems= itself
                    continue
                rounds = option == "round_id"
                raise log_key_error(keys, key, f"{role} ({option}=)", rounds=rounds)
            if segments:
                raise InvalidValueError(
                    f"{name}={list(keys)!r} names {key!r}, which is the column of {role}; a "
                    f"segment key holds one value per session, and {key!r} varies within "
                    "one: segment by another column, e.g. by='day'"
                )
            example = "by='day'" if name == "by" else "systems='system'"
            raise InvalidValueError(
                f"{name}={list(keys)!r} names {key!r}, which is the column of {role} (read "
                f"by {readers}); a key holds one value per query (session), and {key!r} "
                f"varies within one: group by another column, e.g. {example}"
            )


def log_key_error(
    keys: Sequence[str], key: str, role: str, *, rounds: bool = False
) -> InvalidValueError:
    """The refusal of a ``by=`` key (of ``keys``) that names ``key``, the off-policy log's
    column of ``role`` (``"the logged actions (action=)"``): the log's own columns are
    the estimators' data, and a key segments the rounds by another column (an action, a
    reward or a propensity as a key would group the rounds by the data they are
    estimated from; a slate's positions and actions vary within its round).
    ``rounds``: ``key`` is the rounds' ids (each round's value is ``per_query=True``).

    >>> raise log_key_error(["action"], "action", "the logged actions (action=)")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['action'] names 'action', which is ...
    """
    tail = " (each round's contribution: per_query=True)" if rounds else ""
    return InvalidValueError(
        f"by={list(keys)!r} names {key!r}, which is the log's column of {role}; the log's "
        "rounds, actions, rewards, propensities and positions are the estimators' data, "
        f"not a segment of the rounds: group by another column, e.g. by='day'{tail}"
    )


#: The options that name a column of the run whose absence changes what is computed
#: rather than failing: ``rank=`` (``order='auto'`` ranks by ``score=`` without it),
#: ``score=`` (ignored where a rank column ranks), ``sample_id=`` (one deterministic
#: ranking without it). The column a caller names must be there.
_NAMED_RUN_COLUMNS = {
    "rank": "ranks (1 = top)",
    "score": "scores",
    "sample_id": "sampled rankings' ids",
}


def check_named_columns(
    options: EvalOptions,
    schema: pl.Schema,
    table: str = "run",
    keywords: Mapping[str, tuple[str, str]] | None = None,
) -> None:
    """Refuse a ``rank=``, ``score=`` or ``sample_id=`` a caller gave (not the default)
    that names no column of ``table`` (``schema``: its long form): where the column is
    missing, the run is ranked by the other order column, or read as one deterministic
    ranking, so a misspelt name would change the values in silence. ``keywords``: a
    door's own keyword for one of them and what its column holds (``{"rank":
    ("position", "positions (1 = top)")}``, :func:`~polars_irmetrics.evaluate_online`'s,
    whose log needs the column): the message names that keyword.

    >>> schema = pl.Schema({"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
    >>> check_named_columns(EvalOptions.build(rank="r"), schema)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnNotFoundError: rank='r' names no column of the run ...
    """
    given = options.given()
    for name, role in _NAMED_RUN_COLUMNS.items():
        column = getattr(options, name)
        if name not in given or column in schema:
            continue
        held = ", ".join(repr(c) for c in schema.names())
        its = "their" if table.endswith("s") else "its"  # the runs of a comparison
        if keywords is not None and name in keywords:
            keyword, holds = keywords[name]
            raise ColumnNotFoundError(
                f"{keyword}={column!r} names no column of the {table} ({its} columns: "
                f"{held}); name the column of {its} {holds} with {keyword}=..."
            )
        raise ColumnNotFoundError(
            f"{name}={column!r} names no column of the {table} ({its} columns: {held}); "
            f"name the column of {its} {role} with {name}=..., or drop {name}= (without "
            "the column the values would be computed otherwise, in silence)"
        )


def check_unseen_items(value: object) -> None:
    """Refuse an ``unseen_items`` that is not one of :data:`UNSEEN_POLICIES`."""
    if value not in UNSEEN_POLICIES:
        raise InvalidValueError(
            f"unseen_items={value!r} is not a policy; choose 'error' (refuse a "
            "recommended item the interactions or item_features lack), 'drop' (leave "
            "such recommendations out) or 'recommenders' (Microsoft Recommenders' "
            "convention: such an item counts 0 novelty and 0 similarity)"
        )


def _same(value: object, default: object) -> bool:
    # 1 and True are equal in Python, but a bool given for a number is a value of its own
    return isinstance(value, bool) == isinstance(default, bool) and value == default


def key_names(name: str, value: object, *, fix: str = "") -> tuple[str, ...]:
    """The group keys of option ``name`` (``by=``, ``systems=``: a column name, a list
    of names or ``None``) as a tuple; anything else refused (``fix``: a sentence the
    message ends with). Used by :class:`EvalOptions` and by the online tests' ``by=``."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(k, str) for k in value):
        return tuple(value)
    raise InvalidValueError(
        f"{name} must be a column name or a list of column names, got {value!r}{fix}"
    )


def key_keyword(options: EvalOptions, key: str) -> tuple[str, list[str]]:
    """The keyword a group key was given by and its keys, as a refusal names them:
    ``("systems", [...])`` for a key of ``systems=``, else ``("by", [...])``.

    >>> key_keyword(EvalOptions.build(systems="run", by="day"), "run")
    ('systems', ['run'])
    >>> key_keyword(EvalOptions.build(systems="run", by="day"), "day")
    ('by', ['day'])
    """
    if key in options.system_keys:
        return "systems", list(options.system_keys)
    return "by", list(options.attribute_keys)


#: The prefix of the library's working columns (``__irm_...``, fusion's ``__irmf_...``,
#: the plans' ``__s``, ``__m``, ``__D``...): a group key or an id column named so could
#: meet one inside a plan (polars' duplicate-name or missing-column error, or a value
#: overwritten), so :func:`refuse_working_name` refuses it.
WORKING_PREFIX = "__"
#: The systems keys the library's own doors evaluate under (comparison.reproducibility's
#: runs, fusion's trained runs and grid points): named with the prefix so that no column
#: of a caller's meets them, so not refused (tests/test_shapes_round16.py holds them equal
#: to the modules' constants).
LIBRARY_KEYS = frozenset({"__irm_run", "__irmf_run", "__irmf_grid"})


def refuse_working_name(
    name: str, column: str, keys: Sequence[str] | None = None, table: str = "run"
) -> None:
    """Refuse a column named by option ``name`` (a key of ``keys``, for ``by=`` and
    ``systems=``; ``None``: one column, ``query_id=``, ``doc_id=``, compare's
    ``system=``) that begins with :data:`WORKING_PREFIX`, the library's working columns'
    prefix; the fix renames it in ``table``.

    >>> refuse_working_name("by", "day", ["day"])
    >>> refuse_working_name("by", "__s", ["__s"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['__s'] names '__s', and a name that ...
    """
    if not column.startswith(WORKING_PREFIX) or (keys is not None and column in LIBRARY_KEYS):
        return
    shown = repr(column) if keys is None else repr(list(keys))
    fixed = column.lstrip("_") or "key"
    raise InvalidValueError(
        f"{name}={shown} names {column!r}, and a name that begins with '__' is kept for the "
        f"library's working columns (a plan could hold one of that name beside it); rename "
        f"the column first, e.g. {table}.rename({{{column!r}: {fixed!r}}}), and pass "
        f"{name}={fixed!r}"
    )


def refuse_repeated_key(name: str, key: str, keys: Sequence[str]) -> None:
    """Refuse ``key`` listed more than once in the group keys ``keys`` of option
    ``name``, with the keys listed once as the fix."""
    if keys.count(key) > 1:
        once = list(dict.fromkeys(keys))
        raise InvalidValueError(
            f"{name} lists {key!r} twice; list each key once, e.g. {name}={once!r}"
        )


def refuse_result_keys(
    name: str,
    keys: Sequence[str],
    taken: Sequence[str],
    table: str = "run",
    *,
    most: int | None = 4,
    also: str = "",
) -> None:
    """Refuse a group key of option ``name`` (``by``, ``systems``) that is also a column
    of the result (``taken``: ``num_q``, a metric's column, ``p_value``...), which the
    result would hold twice (polars' duplicate-name error) or overwrite with the value
    (the segments lost in silence); the fix renames the key in ``table`` (``also``: a
    clause after the rename, where another table holds the key too). The message lists
    the first ``most`` columns of the result (``None``: all of them; ``0``: none).

    >>> refuse_result_keys("by", ["day", "ctr"], ["num_sessions", "ctr"], "log")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['day', 'ctr'] names 'ctr', which is also ...
    """
    listed = taken if most is None else taken[:most]
    more = ", ..." if most is not None and len(taken) > most else ""
    shown = f" ({', '.join(repr(c) for c in listed)}{more})" if most != 0 else ""
    for key in keys:
        if key in taken:
            raise InvalidValueError(
                f"{name}={list(keys)!r} names {key!r}, which is also a column of the "
                f"result{shown}; rename the key first, e.g. "
                f"{table}.rename({{{key!r}: {key + '_key'!r}}}){also}, and pass "
                f"{name}={key + '_key'!r}"
            )


#: The options that name one column of a table (a text; ``None`` too where optional).
_COLUMN_NAMES = (
    "query_id", "doc_id", "rank", "score", "relevance", "clicked", "dwell", "converted",
    "timestamp", "label", "prediction", "sample_weight", "features",
    "serendipity_relevance", "jg", "sample_id", "round_id", "action", "reward",
    "propensity", "position", "partitioned_by",
)  # fmt: skip
_OPTIONAL_COLUMNS = ("sample_weight", "serendipity_relevance", "partitioned_by")
#: The options naming a column of values (never an id): refused naming the query or
#: document id column (``rank='position'`` beside ``query_id='position'``).
_VALUE_COLUMNS = (
    "rank", "score", "relevance", "clicked", "dwell", "converted", "timestamp", "label",
    "prediction", "sample_weight", "position", "reward", "propensity", "features",
    "serendipity_relevance",
)  # fmt: skip
#: The largest bootstrap ``seed``: the intervals hash the rounds with it, and polars'
#: ``hash(seed=)`` takes an unsigned 64-bit integer.
_MAX_SEED = 2**64 - 1
#: The most resamples of an off-policy interval (``n_bootstrap``): each ``by`` group's
#: resamples are held in memory, at least 3 floats each (a sum, the units drawn, the
#: estimate: 24 bytes), and drawn in time in proportion.
MAX_N_BOOTSTRAP = 10_000_000


def plain_number(value: Any) -> Any:
    """A numpy number (``np.int64(3)``, ``np.float64(0.5)``) as the Python int or float it
    equals; anything else (a bool, a Python number, a text, ``None``) as it is. The options
    that take a Python number take numpy's alike, and a metric's name shows ``10``, not
    ``np.float64(10.0)``, which :func:`~polars_irmetrics.evaluate` could not read back.

    >>> import numpy as np
    >>> plain_number(np.int64(3)), plain_number(np.float64(0.5)), plain_number(True)
    (3, 0.5, True)
    >>> type(plain_number(np.float64(0.5))), plain_number("3")
    (<class 'float'>, '3')
    """
    if type(value) in (bool, int, float) or not isinstance(value, numbers.Real):
        return value
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def check_relevance_level(level: object) -> float:
    """``relevance_level`` as a Python number (a numpy one as the number it equals), or
    refused where it is not a finite number, by that name (the evaluate options and the
    metric expressions alike).

    >>> check_relevance_level(2)
    2
    >>> check_relevance_level("2")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: relevance_level must be a number, got '2'
    """
    level = plain_number(level)
    if isinstance(level, bool) or not isinstance(level, int | float):
        raise InvalidValueError(f"relevance_level must be a number, got {level!r}")
    if not math.isfinite(level):
        raise InvalidValueError(
            f"relevance_level={level!r} is not a finite number: no label would count as "
            "relevant (or every one would); pass the lowest relevant label, e.g. "
            "relevance_level=1"
        )
    return level


def checked_positive_label(value: object) -> int | float | str:
    """``positive_label`` as the prediction metrics read it: one label value, a number or
    a string (a numpy number as the Python number it equals); anything else refused.

    >>> import numpy as np
    >>> checked_positive_label(np.int64(1)), checked_positive_label("click")
    (1, 'click')
    >>> checked_positive_label(None)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: positive_label must be one label value, ...
    """
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Real) and math.isfinite(value):
        if isinstance(value, int | float):  # bool too: True is the label True (1)
            return value
        return int(value) if isinstance(value, numbers.Integral) else float(value)
    raise InvalidValueError(
        f"positive_label must be one label value, a number or a string, got {value!r}: "
        "name the label that counts as positive, e.g. positive_label=1 (the default) or "
        "positive_label='click'"
    )


def refuse_zero_positive(positive: object, label: object) -> None:
    """Refuse a numeric ``positive_label`` of 0 (a ``bool`` is a label of its own): a
    numeric label is negative where it is 0, so every row would be read as both. The
    one message of :func:`polars_irmetrics.evaluate` and the expressions
    (``irm.auc(..., positive_label=0)``).

    >>> refuse_zero_positive(1, "y")
    >>> refuse_zero_positive(0.0, "y")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: positive_label=0.0 names the negative label: ...
    """
    if isinstance(positive, bool) or not isinstance(positive, int | float) or positive != 0:
        return
    raise InvalidValueError(
        f"positive_label={positive!r} names the negative label: a numeric label is "
        f"positive where it equals positive_label and negative where it is 0; to score "
        f"0 as the positive class, flip the labels, e.g. "
        f"(pl.col({label!r}) == 0).cast(pl.Int8), and the predictions (1 - p)"
    )


def shared_column_error(first: str, second: str, column: object) -> InvalidValueError:
    """The error of two column roles (options) naming one column: ``second`` is told to
    name its own.

    >>> for part in str(shared_column_error("query_id", "doc_id", "id")).split("; "):
    ...     print(part)
    query_id='id' and doc_id='id' name the same column
    each needs its own column: pass doc_id= with the name of the doc_id column
    """
    return InvalidValueError(
        f"{first}={column!r} and {second}={column!r} name the same column; each needs its "
        f"own column: pass {second}= with the name of the {second} column"
    )


def check_column_name(
    name: str, value: object, *, optional: bool = False, expression: str | None = None
) -> None:
    """Refuse a column-name option that is not one name (a list, a ``pl.col``, a number).

    ``expression``: the option takes a polars expression too (``rank=`` of a metric
    expression, ``dwell=`` of ``click_metric``); the text is an example of one, shown in
    the fix.

    >>> check_column_name("doc_id", "docno")
    >>> check_column_name("doc_id", None)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: doc_id must be a column name (a str), got None; ...
    >>> check_column_name("rank", pl.col("r"), expression="irm.rank_by_score()")
    >>> check_column_name("rank", 5, expression="irm.rank_by_score()")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: rank must be a column name (a str) or a ...
    """
    if expression is None:
        _check_column_name(name, value, optional=optional)
    elif not isinstance(value, str | pl.Expr) and not (optional and value is None):
        none = ", a polars expression or None" if optional else " or a polars expression"
        raise InvalidValueError(
            f"{name} must be a column name (a str){none}, got {_shown(value)}; pass one name, "
            f"e.g. {name}={name!r}, or an expression, e.g. {name}={expression}"
        )


def _check_column_name(name: str, value: object, *, optional: bool) -> None:
    """Refuse a column-name option that is not one name (a list, a ``pl.col``)."""
    if isinstance(value, str) or (optional and value is None):
        return
    if isinstance(value, pl.Expr):
        fix = f"the column's name, e.g. {name}={name!r}; compute a column first with .with_columns"
    elif isinstance(value, list | tuple) and len(value) == 1 and isinstance(value[0], str):
        fix = f"one name, e.g. {name}={value[0]!r}"
    else:
        fix = f"one name, e.g. {name}={name!r}" if name not in _OPTIONAL_COLUMNS else "a name"
    none = " or None" if optional else ""
    raise InvalidValueError(
        f"{name} must be a column name (a str{none}), got {_shown(value)}; pass {fix}"
    )


def _shown(value: object) -> str:
    """``value`` in a message: an expression or a table by its kind, not its whole tree
    or print-out (a DataFrame's box drawing, a pandas frame's rows)."""
    return shown_value(value) if is_data(value) else repr(value)


#: The hint of an unknown option that is a metric's parameter: it is written in the
#: metric's name, so that one call may ask for several (``map`` and
#: ``map(agg='median')``).
_METRIC_PARAMETERS = {
    "agg": (
        ": agg= is a parameter of each metric, written in its name, e.g. "
        "\"map(agg='median')\" (with per_query=False: the per-query values themselves "
        "have no summary)"
    ),
    "k": ": the cutoff is written in the metric's name, e.g. 'ndcg@10'",
}

#: The hint of an unknown option that is Open Bandit Pipeline's name (its estimators'
#: and ``estimate_interval``'s arguments) for one of the off-policy estimators' options.
_OBP_NAMES = {
    "alpha": (
        ": an interval is asked for by its confidence level, ci=1 - alpha (ci=0.95 for "
        "obp's alpha=0.05)"
    ),
    "n_bootstrap_samples": ": obp's n_bootstrap_samples is n_bootstrap= here (with ci=)",
    "random_state": ": obp's random_state of the bootstrap is seed= here (with ci=)",
    "lambda_": (
        ": obp's lambda_ is written in the estimator's name, e.g. 'ips(clip=10)', "
        "'dr(clip=10)', 'switch_dr(tau=10)', 'dr_os(lambda=10)', 'sg_ips(lambda=0.1)'"
    ),
    **dict.fromkeys(
        ("estimated_pscore", "use_estimated_pscore"),
        ": the propensities read are the log's column named by propensity= (e.g. "
        "propensity='estimated_pscore')",
    ),
}


@dataclass(frozen=True)
class EvalOptions:
    """Everything an evaluation takes besides its tables and metrics; the fields and
    defaults are :func:`~polars_irmetrics.evaluate`'s keyword arguments.

    Build it with :meth:`build` (checked) from the keyword arguments of a door.

    Parameters
    ----------
    by, systems, per_query, order, relevance_level, depth, judged_only, unjudged, unretrieved
        The groups and the conventions, as :func:`~polars_irmetrics.evaluate` takes
        them.
    check_duplicates, buckets, spill_dir, memory_limit, explain, partitioned_by
        The checks and the out-of-core plan, likewise.
    debias
        RecTools' ``DebiasConfig``: the judgments' popular items down-sampled before
        the ranking metrics are computed (:mod:`polars_irmetrics.ground.debias`), or
        ``None``.
    progress
        A bar of the steps of a long evaluation (out-of-core buckets and partitions,
        Spark's tasks, Dask's, ``compare``'s resamples, fusion grids): ``None``
        (default) in a terminal or a notebook only, ``True`` on any stream, ``False``
        never (:mod:`polars_irmetrics.ground.progress`).
    query_id, doc_id, rank, score, relevance, clicked, dwell, converted, timestamp
        Column names, likewise.
    label, prediction, sample_weight, positive_label, unmatched
        The prediction metrics' columns and policy, likewise.
    unseen_items, features, serendipity_relevance
        The beyond-accuracy metrics' policy for cold items, the item features' column
        and the column weighting each item's serendipity, likewise.
    jg
        The judgment-group column of ``qrels_jg``, likewise.
    sample_id
        The run's column naming each sampled ranking of a stochastic policy, read by
        the expected-exposure measures (:mod:`polars_irmetrics.metrics.fairness`); a
        run without it is one deterministic ranking.
    unseen_items, features
        The beyond-accuracy metrics' policy for cold items and the item features'
        column, likewise.
    round_id, action, reward, propensity, position
        The columns of a log of logged feedback for the off-policy estimators, likewise.
    ci, ci_method, n_bootstrap, seed
        The off-policy estimators' intervals (level, method, resamples, seed), likewise.
    offers_drop
        No keyword (:data:`INTERNAL_OPTIONS`): whether a refusal of a ``by`` key of the
        run alone may offer ``unretrieved='drop'``. The door sets it to ``False`` where
        the whole call refuses that option (``systems=`` and the ranking metrics beside
        an exposure measure that reads the judgments), for the ranking metrics' plan,
        which sees its own metrics alone.
    reference_lists
        No keyword (:data:`INTERNAL_OPTIONS`): whether the rank-similarity metrics'
        ``reference=`` was list-shaped, its ranks the lists' positions, so that a refusal
        of its ranks names the lists' order (as
        :class:`~polars_irmetrics.ground.validate.ListOrder` marks the run's). Set by the
        door where it puts the reference in the long form.
    prediction_systems
        No keyword (:data:`INTERNAL_OPTIONS`): the predictions' distinct ``systems=``
        keys (one tuple each), set by the Spark and Dask doors where every system is
        scored against every label of ``labels=`` under ``unmatched='error'``: a part
        of the table may hold no prediction of a system whose labels it holds (one
        machine reads them from the predictions).
    reference_groups
        No keyword (:data:`INTERNAL_OPTIONS`): the rank-similarity metrics' whole
        ``reference=``'s distinct values of the ``by``/``systems`` keys it shares with
        the run (one tuple each, in the order of those keys), set by the buckets route
        and the Spark and Dask doors: a part of the run may hold a group whose
        reference rows sit in other parts (its queries are split), so it refuses a
        group of the run only where the whole reference lacks it, as one machine does.
    run_groups
        No keyword (:data:`INTERNAL_OPTIONS`): the rank-similarity metrics' whole run's
        distinct values of the ``by``/``systems`` keys ``reference=`` lacks (one tuple
        each, in the order of those keys), set by the Spark and Dask doors: one
        reference serves every such group of the run, and a part of a split run may
        hold none of a group's queries, so it scores the reference's queries it lacks
        for every group of the whole run, as one machine does.

    Examples
    --------
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> options = EvalOptions.build(systems="system", by="day", query_id="qid")
    >>> options.by_keys, options.replace(per_query=True).per_query
    (('system', 'day'), True)
    >>> EvalOptions.build(by=["day", "day"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by lists 'day' twice; list each key once, e.g. ...

    ``progress`` is a switch, not a stream or a label:

    >>> EvalOptions.build(progress="tqdm")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: progress must be True, False or None, got ...
    """

    by: Keys = None
    systems: Keys = None
    per_query: bool = False
    order: Order = "auto"
    relevance_level: float = 1
    depth: int | None = None
    judged_only: bool = False
    unjudged: Policy = "drop"
    unretrieved: Policy = "zero"
    check_duplicates: bool = True
    debias: Debias | None = None
    buckets: Buckets = "auto-memory"
    spill_dir: str | Path | None = None
    memory_limit: int | str | None = None
    explain: bool = False
    partitioned_by: str | None = None
    progress: bool | None = None
    query_id: str = "query_id"
    doc_id: str = "doc_id"
    rank: str = "rank"
    score: str = "score"
    relevance: str = "relevance"
    clicked: str = "clicked"
    dwell: str = "dwell"
    converted: str = "converted"
    timestamp: str = "timestamp"
    label: str = "label"
    prediction: str = "prediction"
    sample_weight: str | None = None
    positive_label: int | float | str = 1
    unmatched: Unmatched = "error"
    unseen_items: UnseenItems = "error"
    features: str = "features"
    serendipity_relevance: str | None = None
    jg: str = "jg"
    sample_id: str = "sample"
    round_id: str = "round_id"
    action: str = "action"
    reward: str = "reward"
    propensity: str = "pscore"
    position: str = "position"
    ci: float | None = None
    ci_method: CiMethod = "bootstrap"
    n_bootstrap: int = 1000
    seed: int = 0
    offers_drop: bool = dataclasses.field(default=True, repr=False)
    reference_lists: bool = dataclasses.field(default=False, repr=False)
    prediction_systems: tuple[tuple[Any, ...], ...] | None = dataclasses.field(
        default=None, repr=False
    )
    reference_groups: tuple[tuple[Any, ...], ...] | None = dataclasses.field(
        default=None, repr=False
    )
    run_groups: tuple[tuple[Any, ...], ...] | None = dataclasses.field(default=None, repr=False)

    @classmethod
    def build(cls, **options: Any) -> EvalOptions:
        """The options of one evaluation from a door's keyword arguments, checked.

        An unknown keyword is refused with the list of those accepted.
        """
        fields = option_names()
        for name in options:
            if name not in fields:
                raise InvalidValueError(
                    f"unknown option {name}=..."
                    f"{_METRIC_PARAMETERS.get(name) or _OBP_NAMES.get(name, '')}; the "
                    f"options are {', '.join(sorted(fields))}"
                )
        # a numpy number (np.int64(1) for relevance_level, depth, n_bootstrap) as the
        # Python number it equals: refused as no number before, or named as np.int64(1)
        options = {name: plain_number(value) for name, value in options.items()}
        if "positive_label" in options:
            options["positive_label"] = checked_positive_label(options["positive_label"])
        built = cls(**options)
        built.check()
        return built

    def check(self) -> None:
        """Refuse a value that is wrong whatever the data (see the module)."""
        for name in _COLUMN_NAMES:
            _check_column_name(name, getattr(self, name), optional=name in _OPTIONAL_COLUMNS)
        by = key_names("by", self.by)
        systems = key_names("systems", self.systems)
        for name, keys in (("by", by), ("systems", systems)):
            for key in keys:
                refuse_repeated_key(name, key, keys)
                refuse_working_name(name, key, keys)
                if key in (self.query_id, self.doc_id):
                    raise InvalidValueError(
                        f"{name}={list(keys)!r} names {key!r}, which is already the query or "
                        "document id; list only extra keys such as 'system' or 'day'"
                    )
        for key in by:
            if key in systems:
                raise InvalidValueError(
                    f"{key!r} is in both systems= and by=; a key names systems (systems=) or "
                    "an attribute of the query (by=), not both"
                )
        refuse_working_name("query_id", self.query_id)
        refuse_working_name("doc_id", self.doc_id)
        if self.query_id == self.doc_id:
            raise shared_column_error("query_id", "doc_id", self.query_id)
        ids = {self.query_id: "query_id", self.doc_id: "doc_id"}
        for name in self.given():  # a column of values given as an id column
            value = getattr(self, name)
            if name in _VALUE_COLUMNS and value in ids:
                raise shared_column_error(ids[value], name, value)
        check_relevance_level(self.relevance_level)
        checked_positive_label(self.positive_label)
        depth = self.depth
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 1
        ):
            raise InvalidValueError(f"depth must be a positive integer or None, got {depth!r}")
        check_policy("unjudged", self.unjudged)
        check_policy("unretrieved", self.unretrieved)
        for name in ("per_query", "check_duplicates", "explain", "judged_only"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise InvalidValueError(f"{name} must be True or False, got {value!r}")
        check_progress(self.progress)
        if self.debias is not None:
            if not isinstance(self.debias, Debias):
                raise InvalidValueError(
                    f"debias must be irm.Debias(iqr_coef=..., random_state=...) or None, got "
                    f"{self.debias!r}"
                )
            self.debias.check()
        self._check_interval()
        check_unseen_items(self.unseen_items)
        check_buckets(self.buckets)
        check_spill_dir(self.spill_dir)
        if self.order not in ("auto", "rank", "score"):
            raise InvalidValueError(
                f"order={self.order!r} is not an order; choose 'auto', 'rank' or 'score'"
            )
        if self.unmatched not in ("error", "drop"):
            raise InvalidValueError(
                f"unmatched={self.unmatched!r} is not a policy; choose 'error' (a prediction "
                "without a label, or a label without a prediction, is refused) or 'drop' "
                "(such rows are left out)"
            )

    def _check_interval(self) -> None:
        ci = self.ci
        if ci is not None and (
            isinstance(ci, bool) or not isinstance(ci, int | float) or not 0.0 < ci < 1.0
        ):
            raise InvalidValueError(
                f"ci must be a level between 0 and 1 (exclusive) or None, got {ci!r}: e.g. "
                "ci=0.95 for a 95% interval"
            )
        if self.ci_method not in ("bootstrap", "normal"):
            raise InvalidValueError(
                f"ci_method={self.ci_method!r} is not a method; choose 'bootstrap' (percentile "
                "bootstrap over the log's rows) or 'normal' (mean +- z standard errors)"
            )
        for name, low in (("n_bootstrap", 1), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if self.n_bootstrap > MAX_N_BOOTSTRAP:
            held = 24 * self.n_bootstrap / 2**30
            raise InvalidValueError(
                f"n_bootstrap={self.n_bootstrap!r} is above {MAX_N_BOOTSTRAP:_}, the most "
                "resamples an off-policy interval draws: it holds each by group's resamples "
                f"in memory, at least 24 bytes each (about {held:.1f} GiB per group and "
                f"estimator here). Pass n_bootstrap={MAX_N_BOOTSTRAP:_} or fewer: the "
                "default 1000, or 10_000, is plenty for a 95% interval"
            )
        if self.seed > _MAX_SEED:  # polars' hash takes a 64-bit seed
            raise InvalidValueError(
                f"seed must be an integer from 0 to 2**64 - 1 ({_MAX_SEED}), the bootstrap "
                f"interval's 64-bit seed, got {self.seed!r}: pass seed % 2**64"
            )

    @property
    def system_keys(self) -> tuple[str, ...]:
        """The keys that name systems or runs (``systems``)."""
        return key_names("systems", self.systems)

    @property
    def attribute_keys(self) -> tuple[str, ...]:
        """The keys that are attributes of the query (``by``)."""
        return key_names("by", self.by)

    @property
    def by_keys(self) -> tuple[str, ...]:
        """Every group key: the systems' first, then the query attributes."""
        return (*self.system_keys, *self.attribute_keys)

    def given(self) -> tuple[str, ...]:
        """The options whose value is not the default: those a caller gave (a default
        passed explicitly changes nothing, and is not counted).

        >>> EvalOptions.build(sample_weight="w", per_query=False).given()
        ('sample_weight',)
        """
        return tuple(
            name for name, default in _OPTION_DEFAULTS if not _same(getattr(self, name), default)
        )

    def replace(self, **changes: Any) -> EvalOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


#: The fields of :class:`EvalOptions` no door takes as a keyword: set inside, where the
#: whole call is known, for a plan that sees a part of it (never given, never listed).
INTERNAL_OPTIONS = frozenset(
    {"offers_drop", "reference_lists", "prediction_systems", "reference_groups", "run_groups"}
)

_DEFAULTS = {f.name: f.default for f in dataclasses.fields(EvalOptions)}


def option_names() -> tuple[str, ...]:
    """The keyword arguments :meth:`EvalOptions.build` takes: its fields, in order,
    less :data:`INTERNAL_OPTIONS`.

    >>> "depth" in option_names(), "offers_drop" in option_names()
    (True, False)
    """
    return _OPTION_NAMES


# made once: the plan's steps ask for them several times a call (given() 8 times in a
# small evaluate)
_OPTION_NAMES = tuple(name for name in _DEFAULTS if name not in INTERNAL_OPTIONS)
_OPTION_DEFAULTS = tuple((name, _DEFAULTS[name]) for name in _OPTION_NAMES)
