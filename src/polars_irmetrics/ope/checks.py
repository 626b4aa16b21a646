"""The data checks of an off-policy evaluation: counted in the plan's pass, raised when it
is collected (naming the table, the column and the first round that fails)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    IrmWarning,
    SupportWarning,
)
from polars_irmetrics.ground.known_schema import mapped, schema_of, without
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import (
    FLOAT64_EXACT,
    INTERNAL,
    check_numeric,
    id_kind,
    is_text,
    null_ids_count,
    null_ids_error,
    warn_from_plan,
    wide_numbers,
)
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics.ope import SLATE_COLUMNS, ope_parameter
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.ope.scale import FLOOR, SCALE, SUBNORMAL

__all__ = [
    "BELOW_1_FIX",
    "WHERE",
    "Check",
    "action_shift",
    "by_null_checks",
    "check_interval_read",
    "check_keys",
    "check_position",
    "id_column",
    "in_logged_rounds",
    "infinite_reward_check",
    "listed_slots",
    "log_id_checks",
    "null_check",
    "null_id_checks",
    "policy_below_check",
    "raising",
    "round_hint",
    "scaled_tiny",
    "shift_text",
    "slate_columns",
    "slate_unsupported_text",
    "split_round_checks",
    "split_round_flags",
    "subnormal_reward_check",
    "tiny_reward_check",
    "unshrunk_labels",
    "warn_unshrunk",
    "warning_unsupported",
    "where_text",
    "wide_id_dtype",
    "with_null_ids",
    "with_policy_below",
    "with_wide_ids",
    "with_wide_q_hat",
    "with_wide_reward_check",
]

#: The column holding each row's round (and position) as text, for the messages.
WHERE = f"{INTERNAL}where"
_UNSUPPORTED = f"{INTERNAL}unsupported"
_EXAMPLE = f"{INTERNAL}example"


def where_text(keys: tuple[str, ...], rows: pl.Expr | None = None) -> pl.Expr:
    """The round (and position) as text, ``"round_id=7, position=2"``; only of ``rows``
    (a mask) when given, so that a plan whose checks pass writes no text at all.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"round_id": [10, 9, 8], "bad": [True, True, False]})
    >>> frame.select(where_text(("round_id",), pl.col("bad")).min()).item()
    'round_id=10'
    """
    columns = [pl.col(k) if rows is None else pl.col(k).filter(rows) for k in keys]
    # a null id as "null" (refused, and named: ``"round_id=3, position=null"``)
    text = (c.cast(pl.String).fill_null("null") for c in columns)
    return pl.format(", ".join(f"{k}={{}}" for k in keys), *text)


@dataclass(frozen=True)
class Check:
    """One data check: a row condition, counted, with the first round that fails."""

    name: str
    bad: pl.Expr
    error: type[Exception]
    template: str
    #: The key columns the round is written from (``"k=v, ..."``), only on the failing
    #: rows; empty: read it from the rows' :data:`WHERE` column.
    keys: tuple[str, ...] = ()
    #: Text written after the round on the failing rows (``"reward=1e-20"``: the value),
    #: so that the first failing row's is named; none: the round alone.
    detail: pl.Expr | None = None
    #: Text written in place of the round: a fact of a whole table that names no round
    #: (the count of a side table's null ids, the same on every row).
    text: pl.Expr | None = None
    #: A sentence read only where the check fails, written after its message (ids of the
    #: log that another table spells apart: :func:`round_hint`); ``None`` where it has
    #: nothing to say.
    hint: Callable[[], str | None] | None = None

    def _text(self, rows: pl.Expr | None = None) -> pl.Expr:
        """The round (and :attr:`detail`) as text, only of ``rows`` (a mask) if given."""
        if self.text is not None:
            return self.text if rows is None else self.text.filter(rows)
        if self.keys:
            where = where_text(self.keys, rows)
        else:
            where = pl.col(WHERE) if rows is None else pl.col(WHERE).filter(rows)
        if self.detail is None:
            return where
        detail = self.detail if rows is None else self.detail.filter(rows)
        return pl.format("{}, {}", where, detail)

    @property
    def count(self) -> str:
        return f"{INTERNAL}n_{self.name}"

    @property
    def first(self) -> str:
        return f"{INTERNAL}e_{self.name}"

    def aggs(self) -> list[pl.Expr]:
        return [
            self.bad.sum().cast(pl.Int64).alias(self.count),
            self._text(self.bad).min().alias(self.first),
        ]

    def rows(self) -> list[pl.Expr]:
        return [
            self.bad.cast(pl.Int64).alias(self.count),
            pl.when(self.bad).then(self._text()).alias(self.first),
        ]


#: The slate propensity columns of a fixed shape per round: ``"slate"``, one value per
#: round (the whole slate's probability: obp's ``pscore``, "unique in each slate");
#: ``"falling"``, never rising down the slate (the top-l prefix's: obp's
#: ``pscore_cascade``, "non-increasing sequence in each slate").
SHAPES = {"pscore": "slate", "pscore_cascade": "falling"}

_SHAPE_TEXT = {
    "slate": (
        "takes more than one value in a round",
        "it is the probability of the whole slate, one value per round (obp: 'unique in "
        "each slate'): give each round's rows the slate's probability",
    ),
    "falling": (
        "rises from one position to the next in a round",
        "it is the probability of the slate's top positions up to this one, which cannot "
        "rise further down the slate (obp: 'non-increasing sequence in each slate'): check "
        "the positions and the products",
    ),
}


def broken_shape(kind: str, value: pl.Expr, rounds: Sequence[str], position: str) -> pl.Expr:
    """Per row, whether its round breaks the shape ``kind`` (:data:`SHAPES`) of
    ``value``: ``"slate"``, more than one value in the round; ``"falling"``, above the
    value at the position before it (``rounds``: the columns that tell a round apart;
    the rows in any order)."""
    if kind == "slate":
        return value.n_unique().over(rounds) > 1
    return (value > value.shift(1).over(rounds, order_by=position)).fill_null(False)


def shape_check(
    column: str, table: str, flag: pl.Expr, keys: tuple[str, ...] = (), kind: str = ""
) -> Check:
    """A slate propensity ``column`` of the ``table`` (``"log"``, ``"policy table"``)
    whose rounds break its shape (``kind``, else the column's in :data:`SHAPES`):
    ``flag`` marks their rows. Either shape broken makes an estimator read one slot's
    value as the slate's, or a weight no policy gives: refused, as obp refuses it, the
    values compared exactly."""
    broken, fix = _SHAPE_TEXT[kind or SHAPES[column]]
    return Check(
        f"shape_{table.replace(' ', '_')}_{column}",
        flag,
        InvalidValueError,
        f"column {column!r} of the {table} {broken} on {{n}} row(s) (first: {{first}}): {fix}",
        keys=keys,
    )


def null_check(column: str) -> Check:
    """A null in the log's ``column`` (an id: a round, a position, an action)."""
    return Check(
        f"null_{column}",
        pl.col(column).is_null(),
        InvalidValueError,
        f"column {column!r} of the log has {{n}} null value(s) (first: {{first}}): every "
        f"logged row needs its {column}: drop those rows, e.g. .drop_nulls({column!r})",
    )


def _null_ids_column(keyword: str) -> str:
    return f"{INTERNAL}null_ids_{keyword}"


def with_null_ids(
    rows: pl.LazyFrame, tables: dict[str, pl.LazyFrame | None], keys: Sequence[str]
) -> pl.LazyFrame:
    """``rows`` with, on every row, the count of each table's rows (``policy=``,
    ``reward_model=``; ``None``: none given) whose round (or position) is null (null
    where none), read by :func:`null_id_checks`: such a row meets no log row, so its
    probability or ``q_hat`` would be dropped in silence, and a round whose own row was
    nulled read as a round that does not sum to 1. Read from those rows alone (a filter
    of the keys): one row, joined to every row."""
    counts = [
        table.filter(pl.any_horizontal(pl.col(k).is_null() for k in keys)).select(
            null_ids_count(keys).alias(_null_ids_column(name))
        )
        for name, table in tables.items()
        if table is not None
    ]
    return rows.join(pl.concat(counts, how="horizontal"), how="cross", maintain_order="left")


def null_id_checks(keys: Sequence[str], rows: dict[str, str]) -> list[Check]:
    """The refusal of a null round (or position) in each side table of ``rows`` (its
    keyword: what each of its rows is), by the argument and the columns, in the words of
    every side table's (``null_ids_error``): the count read from :func:`with_null_ids`.

    >>> print(null_id_checks(["round_id"], {"policy": "each row gives ..."})[0].template)
    ... # doctest: +NORMALIZE_WHITESPACE
    policy= has {first} row(s) with a null 'round_id': each row gives ..., and a null id
    names none; fill or drop them, e.g. policy.drop_nulls(['round_id'])
    """
    return [
        Check(
            f"null_ids_{name}",
            pl.col(_null_ids_column(name)).is_not_null(),
            InvalidValueError,
            str(null_ids_error(name, "{first}", keys, row)),
            text=pl.col(_null_ids_column(name)).cast(pl.String),
        )
        for name, row in rows.items()
    ]


def _split_flag(key: str) -> str:
    return f"{INTERNAL}split_{key}"


def split_round_flags(by: Sequence[str], round_id: str) -> list[pl.Expr]:
    """Per row, for each ``by`` key, whether the row's round holds more than one value of
    it (order-free: any of the round's rows differing from its first), a column for
    :func:`split_round_checks` (a window: computed on the rows, before any aggregation).
    """
    return [
        (
            pl.col(key).ne_missing(pl.col(key).first()).any().over(round_id)
            & pl.col(round_id).is_not_null()  # a null round: refused as such
        ).alias(_split_flag(key))
        for key in by
    ]


def split_round_checks(by: Sequence[str], keys: Sequence[str], estimators: str) -> list[Check]:
    """A ``by`` key that varies within a round of a slate log (``estimators``, their
    words): the round would be split across groups, each part summed as a whole round
    (the estimates are sums of the slots' values per round) and counted as a round of
    its own; refused, as the click metrics refuse a key that varies within a session,
    naming the round and its slot (``keys``), after the null keys' check.

    >>> print(split_round_checks(["day"], ["round_id", "position"], "the slate "
    ...       "estimators")[0].template)  # doctest: +NORMALIZE_WHITESPACE
    by=['day']: {n} log row(s) are in a round that holds more than one value of 'day'
    (first: {first}); the slate estimators sum each round's slots, and a key that varies
    within a round would split it into rounds of each group: give every row of a round
    its round's value, or group by a column fixed within each round
    """
    keys_text = _escaped(repr(list(by)))
    checks = []
    for key in by:
        message = (
            f"by={keys_text}: {{n}} log row(s) are in a round that holds more than one "
            f"value of {_escaped(repr(key))} (first: {{first}}); {estimators} sum each "
            "round's slots, and a key that varies within a round would split it into "
            "rounds of each group: give every row of a round its round's value, or group "
            "by a column fixed within each round"
        )
        checks.append(
            Check(
                f"split_{key}",
                pl.col(_split_flag(key)),
                InvalidValueError,
                message,
                keys=tuple(keys),
            )
        )
    return checks


def _escaped(text: str) -> str:
    """``text`` (a name the caller gave) as a part of a check's template, formatted by
    :func:`raising`: its braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def by_null_checks(by: Sequence[str]) -> list[Check]:
    """A null in a ``by`` column of the log: refused, as every other route refuses it
    (a null key would otherwise form a group of its own). In the words of the online
    metrics' check, raised before the other checks.

    >>> print(by_null_checks(["segment"])[0].template)  # doctest: +NORMALIZE_WHITESPACE
    column 'segment' of the log has null values; every impression needs a segment: fill
    or drop them, e.g. .drop_nulls('segment')
    """
    checks = []
    for key in by:
        article = "an" if key[:1].lower() in "aeio" else "a"
        message = (
            f"column {key!r} of the log has null values; every impression needs {article} "
            f"{key}: fill or drop them, e.g. .drop_nulls({key!r})"
        )
        checks.append(
            Check(
                f"by_null_{key}",
                pl.col(key).is_null(),
                InvalidValueError,
                message.replace("{", "{{").replace("}", "}}"),  # formatted by raising()
                keys=(key,),  # the row's text read from the column itself, not WHERE
            )
        )
    return checks


def scaled_tiny(value: pl.Expr) -> pl.Expr:
    """Per row: ``value`` (a reward or ``q_hat``, times the rewards' scale: the rows'
    :data:`~polars_irmetrics.ope.scale.SCALE`) is other than 0 and of magnitude below
    :data:`~polars_irmetrics.ope.scale.FLOOR` (2**-30): in units of 2**-64 it would keep
    fewer than 34 bits. Null where ``value`` is (the caller's to read as it needs).

    >>> frame = pl.DataFrame({"v": [0.0, -0.0, 1.0, 2.0**-30, 2.0**-31, -1e-300]})
    >>> frame.select(scaled_tiny(pl.col("v")))["v"].to_list()
    [False, False, False, False, True, True]
    """
    return (value.abs() < FLOOR) & (value != 0.0)


def tiny_reward_check(reward: str) -> Check:
    """A reward other than 0 whose magnitude times the log's scale (the rows'
    :data:`~polars_irmetrics.ope.scale.SCALE`: the power of two that brings the largest
    reward magnitude to ``[1, 2)`` where it is below 0.5, else 1) is below 2**-30: the
    exact sums count whole units of 2**-64 (:mod:`polars_irmetrics.ope.sums`), so such a
    reward, about 2**30 times smaller than the log's largest or more, would lose digits
    (1e-20 beside 1 would count 0) and every estimate of a group or round of such
    rewards would be silently off. A log whose rewards are all small is read at their
    own scale, exactly: only a reward small beside the others is refused. Per row, from
    the rows' scale, which every part of a split log reads alike (the whole log's): so
    refused on every path alike; the first failing row named with its value and the
    smallest magnitude kept.

    >>> check = tiny_reward_check("reward")
    >>> rewards = [0.0, -0.0, 1.0, 2.0**-30, 1e-12, -1e-300, None]
    >>> frame = pl.DataFrame({"reward": rewards, SCALE: 1.0})  # its largest: 1.0
    >>> frame.select(check.bad)["reward"].to_list()
    [False, False, False, False, True, True, False]
    >>> small = pl.DataFrame({"reward": [1e-12, 3e-13], SCALE: 2.0**40})  # all small
    >>> small.select(check.bad)["reward"].to_list()
    [False, False]
    """
    value = pl.col(reward).cast(pl.Float64)
    return Check(
        "reward_tiny",
        scaled_tiny(value * pl.col(SCALE)).fill_null(False),
        InvalidValueError,
        f"column {reward!r} of the log has {{n}} value(s) other than 0 too small beside "
        "its largest reward (first: {first}): the exact sums count units of 2**-64 of the "
        "rewards read at the log's scale (times the power of two that brings the largest "
        "to [1, 2) where it is below 0.5), in which a reward below 2**-30, about 2**30 "
        "times smaller than the largest or more, would lose its digits (1e-20 beside 1.0 "
        "would count 0); set the rewards below the smallest kept to 0, negligible beside "
        f"the largest (pl.when(pl.col({reward!r}).abs() < kept).then(0.0).otherwise("
        f"{reward!r})), or evaluate them apart (a log whose rewards are all small is read "
        "at their own scale, exactly)",
        detail=pl.format(
            f"{reward}={{}}, below the smallest kept, {{}}", value, FLOOR / pl.col(SCALE)
        ),
    )


def infinite_reward_check(reward: str) -> Check:
    """A reward that is infinite, refused as a null or NaN one is, whichever estimators
    read the rewards (the direct method does not: the log would pass for it and be
    refused by the others' sums).

    >>> check = infinite_reward_check("reward")
    >>> frame = pl.DataFrame({"reward": [float("-inf"), 1e308, None]})
    >>> frame.select(check.bad).to_series().to_list()
    [True, False, False]
    """
    return Check(
        "reward_infinite",
        pl.col(reward).cast(pl.Float64).is_infinite().fill_null(False),
        InvalidValueError,
        f"column {reward!r} of the log has {{n}} infinite value(s) (first: {{first}}); "
        "every logged reward must be finite: drop those rows, or cap the rewards, e.g. "
        f"pl.col({reward!r}).clip(-1e300, 1e300)",
    )


def with_wide_reward_check(checks: list[Check], reward: str, dtype: pl.DataType) -> list[Check]:
    """``checks`` with, after the null or NaN reward's check (named ``"reward"``), the
    refusal of an integer reward of magnitude 2**53 or more where the log's ``reward``
    column's ``dtype`` can hold one (:func:`~polars_irmetrics.ground.validate.wide_numbers`):
    the estimates read the rewards as Float64 numbers, which merge such an integer with
    its neighbours (2**53 + 1 reads as 2**53), as the prediction metrics refuse such
    labels. Any other dtype (a float, a narrower integer) is read exactly: nothing is
    added.

    >>> checks = with_wide_reward_check([], "reward", pl.Int64())
    >>> frame = pl.DataFrame({"reward": [2**53, -(2**53) + 1, 1, None]})
    >>> frame.select(checks[0].bad).to_series().to_list()
    [True, False, False, False]
    >>> with_wide_reward_check([], "reward", pl.Float64())
    []
    """
    if not wide_numbers(dtype):
        return checks
    value = pl.col(reward).cast(pl.Float64)
    wide = Check(
        "reward_wide",
        (value.abs() >= FLOAT64_EXACT).fill_null(False),
        InvalidValueError,
        f"column {reward!r} of the log ({dtype}) has {{n}} value(s) of magnitude 2**53 or "
        "more (first: {first}); the estimates read the rewards as Float64 numbers, which "
        "hold such values to a few units only (2**53 + 1 reads as 2**53): rescale the "
        "rewards and 'q_hat' by one factor (every estimate scales with them), e.g. "
        f"pl.col({reward!r}) / 1000, or cast the column to Float64 to read it so rounded, "
        f"pl.col({reward!r}).cast(pl.Float64)",
        detail=pl.format(f"{reward}={{}}", pl.col(reward)),
    )
    at = next((i + 1 for i, check in enumerate(checks) if check.name == "reward"), len(checks))
    if at:  # its round written as the null reward's is (its keys, or the rows' WHERE)
        wide = replace(wide, keys=checks[at - 1].keys)
    return [*checks[:at], wide, *checks[at:]]


#: The column of :func:`with_wide_q_hat`: its count and first row, as text.
_WIDE_Q = f"{INTERNAL}wide_q_hat"


def with_wide_q_hat(
    rows: pl.LazyFrame,
    checks: list[Check],
    reward_model: pl.LazyFrame | None,
    keys: Sequence[str],
    action: str,
    dtype: pl.DataType | None = None,
) -> tuple[pl.LazyFrame, list[Check]]:
    """``rows`` and ``checks`` with, after the check of a missing ``q_hat`` (named
    ``"q_large"``, else last), the refusal of an integer ``q_hat`` of magnitude 2**53 or
    more where the reward model's ``q_hat`` dtype can hold one
    (:func:`~polars_irmetrics.ground.validate.wide_numbers`; a list of them in the list
    shape, its item's index named as the ``action``): the estimates read it as
    a Float64 number, which merges such an integer with its neighbours (2**53 + 1 reads
    as 2**53), as the rewards' check (:func:`with_wide_reward_check`) refuses them in
    the log. Read from the reward model alone (a filter of its rows, named by ``keys``
    and ``action``): one row, ``"<n> value(s) ... (first: ...)"``, joined to every row,
    as :func:`with_null_ids` counts its null ids. ``dtype``: the reward model's ``q_hat``
    dtype where the caller has read it (else read here).

    >>> model = pl.LazyFrame({"round_id": [2, 1], "action": [0, 1], "q_hat": [2**53 + 1, 3]})
    >>> rows, checks = with_wide_q_hat(pl.LazyFrame({"x": [1]}), [], model, ["round_id"], "action")
    >>> rows.select(checks[0].text).collect().item()
    '1 value(s) of magnitude 2**53 or more (first: round_id=2, action=0, q_hat=9007199254740993)'
    >>> with_wide_q_hat(rows, [], model.with_columns(pl.col("q_hat") / 2), [], "action")[1]
    []
    """
    if reward_model is None:
        return rows, checks
    if dtype is None:
        dtype = reward_model.collect_schema()["q_hat"]
    listed = isinstance(dtype, pl.List | pl.Array)
    inner = dtype.inner if isinstance(dtype, pl.List | pl.Array) else dtype
    if inner is None or not wide_numbers(inner):
        return rows, checks
    ids = [*keys, action]
    if listed:  # an item's index is its action
        index = pl.int_ranges(pl.col("q_hat").list.len()).alias(action)
        model = reward_model.select(*keys, pl.col("q_hat").cast(pl.List(inner)), index)
        model = model.explode(["q_hat", action])
    else:
        model = reward_model.select(*ids, "q_hat")
    wide = pl.col("q_hat").cast(pl.Float64).abs() >= FLOAT64_EXACT
    found = (
        model.filter(wide.fill_null(False))
        .sort([*ids, "q_hat"], nulls_last=True)
        .select(
            pl.format(
                "{} value(s) of magnitude 2**53 or more (first: {})",
                pl.len(),
                where_text((*ids, "q_hat")).first(),
            ).alias(_WIDE_Q)  # null where none (a null first row)
        )
    )
    rows = rows.join(found, how="cross", maintain_order="left")
    check = Check(
        "q_wide",
        pl.col(_WIDE_Q).is_not_null(),
        InvalidValueError,
        f"column 'q_hat' of the reward_model table ({dtype}) has {{first}}; the estimates "
        "read q_hat as Float64 numbers, which hold such values to a few units only "
        "(2**53 + 1 reads as 2**53): rescale the rewards and 'q_hat' by one factor (every "
        "estimate scales with them), e.g. pl.col('q_hat') / 1000, or cast the column to "
        "Float64 to read it so rounded, pl.col('q_hat').cast(pl.Float64)",
        text=pl.col(_WIDE_Q),
    )
    at = next((i + 1 for i, c in enumerate(checks) if c.name == "q_large"), len(checks))
    return rows, [*checks[:at], check, *checks[at:]]


def subnormal_reward_check(reward: str) -> Check:
    """The rewards of a log whose largest reward magnitude is subnormal (below 2**-1022,
    the smallest normal float64), whose rows' scale is
    :data:`~polars_irmetrics.ope.scale.SUBNORMAL`: no power of two within float64's range
    brings them to ``[1, 2)``, they hold fewer digits than a float64, and estimates that
    small would be rounded to units of 2**-1074 when divided back: refused, each reward
    other than 0 counted (the rows' scale is the whole log's: on every path alike).

    >>> check = subnormal_reward_check("reward")
    >>> frame = pl.DataFrame({"reward": [5e-324, 0.0, None], SCALE: SUBNORMAL})
    >>> frame.select(check.bad).to_series().to_list()
    [True, False, False]
    """
    value = pl.col(reward).cast(pl.Float64)
    return Check(
        "reward_subnormal",
        ((pl.col(SCALE) == SUBNORMAL) & (value != 0.0)).fill_null(False),
        InvalidValueError,
        f"column {reward!r} of the log has {{n}} value(s) other than 0, all subnormal "
        "(below 2**-1022 = 2.2250738585072014e-308 in magnitude, the smallest normal "
        "float64; first: {first}): such rewards hold fewer digits than a float64, no "
        "power of two within its range brings them to [1, 2) for the exact sums, and "
        "estimates that small would be rounded to units of 2**-1074; multiply the "
        "rewards and 'q_hat' by one power of two, e.g. "
        f"pl.col({reward!r}) * 2.0**600, and read the estimates at that unit",
        detail=pl.format(f"{reward}={{}}", value),
    )


#: How a position below 1 is fixed (the propensity tables' words), before the column.
BELOW_1_FIX = "positions start at 1 for the top: add 1 to 0-based positions, e.g. "


def policy_below_check(position: str, flag: str) -> Check:
    """A position of the policy table below 1 in a round the log has (``flag``: a column
    of the log's rows, :func:`with_policy_below`): 0-based positions would meet the
    log's slots one lower, in silence where the table covers them."""
    return Check(
        "policy_below",
        pl.col(flag),
        InvalidValueError,
        f"column {position!r} of the policy table has a position below 1 in a logged "
        f"round (first: {{first}}, {{n}} log row(s) in all); {BELOW_1_FIX}"
        f"pl.col({position!r}) + 1",
    )


def with_policy_below(
    rows: pl.LazyFrame, policy: pl.LazyFrame, keys: Sequence[str], schema: pl.Schema, flag: str
) -> pl.LazyFrame:
    """``rows`` (the log's) with ``flag`` true on the rows of a round to which the
    policy gives a position below 1: read from those rows alone (a filter of the
    policy's position), joined with the log's rows by round (few or none)."""
    round_id, position = keys
    below = (
        policy.filter(pl.col(position) < 1)
        .select(id_column(schema, round_id))
        .unique()
        .with_columns(pl.lit(True).alias(flag))
    )
    return rows.join(below, on=round_id, how="left").with_columns(pl.col(flag).fill_null(False))


def log_id_checks(keys: Sequence[str]) -> list[Check]:
    """The checks of the log's keys (``round_id[, position]``), raised first: a null id
    (read as a round the policy lacks otherwise) and a position below 1."""
    checks = [null_check(key) for key in keys]
    if len(keys) > 1:
        position = keys[1]
        checks.append(
            Check(
                "position_below",
                (pl.col(position) < 1).fill_null(False),
                InvalidValueError,
                f"column {position!r} of the log has {{n}} position(s) below 1 (first: "
                f"{{first}}); {BELOW_1_FIX}pl.col({position!r}) + 1",
            )
        )
    return checks


def raising(result: pl.LazyFrame, checks: list[Check], options: EvalOptions) -> pl.LazyFrame:
    """``result`` without its check columns, raising the first problem they count when
    it is collected."""
    flags = [c for check in checks for c in (check.count, check.first)]
    schema = without(schema_of(result), flags)
    fields = {
        "propensity": options.propensity,
        "reward": options.reward,
        "action": options.action,
    }

    def raise_first(frame: pl.DataFrame) -> pl.DataFrame:
        for check in checks:
            total = int(frame[check.count].sum() or 0)
            if total:
                first = frame[check.first].drop_nulls().min()
                text = check.template.format(n=total, first=first, **fields)
                said = check.hint() if check.hint is not None else None
                raise check.error(f"{text}. {said}" if said else text)
        return frame.drop(flags)

    return mapped(result, raise_first, schema)


def round_hint(
    log: pl.LazyFrame, table: pl.LazyFrame, round_id: str, name: str
) -> Callable[[], str | None] | None:
    """The hint of a check that refuses logged rounds the ``name`` table (``"policy="``)
    lacks: a sentence (read only where the check fails: a join of the two tables'
    distinct text round ids) where some of them match one of the table's once their
    spelling is ignored (``'R1'`` beside ``'r1'``, ``' r1'``, ``'r_1'``; :func:`~polars_\
irmetrics.ground.spelling.spelling_hint`, the words of the action ids' hint), naming how
    many, the first pair and the fix; ``None`` where the round ids are not text (the
    log's ``round_id`` and the table's are of one kind: :func:`check_keys`).

    Examples
    --------
    >>> log = pl.LazyFrame({"round_id": ["R1", "R2"]})
    >>> hint = round_hint(log, pl.LazyFrame({"round_id": ["r1", "R2"]}), "round_id", "policy=")
    >>> print(hint())  # doctest: +NORMALIZE_WHITESPACE
    1 round id(s) of the log match an id of policy= only when case is ignored ('R1' against
    'r1'): ids are compared exactly; give the log and policy= the same spelling, e.g.
    pl.col('round_id').str.to_lowercase() on each.
    """
    schema = log.collect_schema()
    if round_id not in schema or not is_text(schema[round_id]):
        return None
    sides = Sides("the log", name, f"the log and {name}")
    return lambda: spelling_hint(
        log.select(round_id),
        table.select(round_id),
        round_id,
        within=None,
        noun="round",
        sides=sides,
    )


def check_keys(
    log_schema: pl.Schema, schema: pl.Schema, keys: Sequence[str], name: str, position: str
) -> None:
    """Refuse a join key of ``keys`` (``round_id``, ``position``, ``action``) that the log
    and the ``name`` table (``"policy"``, ``"reward_model"``) hold in two kinds (text
    beside integers, which would match no row), naming both dtypes and a cast. The slot
    column ``position`` must be an integer in both, checked first: its fix is an
    integer cast (a cast to text, the fix of the other keys, would leave the log's
    positions refused as no integers). One kind in two widths (Int32 beside Int64) is
    read in one dtype (:func:`id_column`).

    Examples
    --------
    >>> log = pl.Schema({"round_id": pl.Int64, "position": pl.Int64})
    >>> check_keys(log, pl.Schema({"round_id": pl.Int32, "position": pl.String}),
    ...            ["round_id", "position"], "policy", "position")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 'position' in the policy table has dtype \
String; it must be an integer: cast it, e.g. pl.col('position').cast(pl.Int64)
    """
    for key in keys:
        if key == position:
            check_numeric(log_schema, key, "log", integer=True)
            check_numeric(schema, key, f"{name} table", integer=True)
        elif id_kind(schema, key, f"{name} table") != id_kind(log_schema, key, "log"):
            raise ColumnTypeError(
                f"column {key!r} has dtype {schema[key]} in the {name} table but "
                f"{log_schema[key]} in the log; the ids must match: cast one side, e.g. "
                f"pl.col({key!r}).cast(pl.String)"
            )


def id_column(schema: pl.Schema, column: str) -> pl.Expr:
    """``column`` (an id of the log, the policy or the reward model) in the dtype every
    table's copy is read in, from ``schema`` (the log's, read by :func:`with_wide_ids`):
    integers as Int64, or Int128 where the log holds UInt64 (a round or action id beyond
    2**63 kept whole) or another table does, text as String.

    >>> id_column(pl.Schema({"round_id": pl.UInt64}), "round_id").meta.output_name()
    'round_id'
    """
    dtype = schema[column]
    if not dtype.is_integer():
        return pl.col(column).cast(pl.String)
    return pl.col(column).cast(pl.Int128 if dtype in (pl.UInt64, pl.Int128) else pl.Int64)


def wide_id_dtype(schemas: Iterable[pl.Schema], column: str) -> pl.DataType | None:
    """The dtype :func:`id_column` reads ``column`` in where the tables' ``schemas``
    (those holding it) differ: String for text, Int128 where one holds UInt64 (kept
    whole beside signed ids), else Int64; ``None`` where no table holds it.

    >>> wide_id_dtype([pl.Schema({"a": pl.Int64}), pl.Schema({"a": pl.UInt64})], "a")
    Int128
    """
    dtypes = [schema[column] for schema in schemas if column in schema]
    if not dtypes:
        return None
    if not all(dtype.is_integer() for dtype in dtypes):
        return pl.String()
    wide = any(dtype in (pl.UInt64, pl.Int128) for dtype in dtypes)
    return pl.Int128() if wide else pl.Int64()


def with_wide_ids(
    log: pl.LazyFrame, others: Iterable[pl.LazyFrame | None], columns: Iterable[str]
) -> pl.LazyFrame:
    """``log`` with each integer id column of ``columns`` read as Int128 where another
    table (the policy, the reward model) holds it as UInt64 and the log does not: every
    table's ids are read in the log's dtype (:func:`id_column`), and a UInt64 id beyond
    2**63 does not fit an Int64."""
    schema = log.collect_schema()
    theirs = [other.collect_schema() for other in others if other is not None]
    wide = [
        column
        for column in columns
        if column in schema
        and schema[column].is_integer()
        and wide_id_dtype([schema, *theirs], column) == pl.Int128
    ]
    return log.with_columns(pl.col(c).cast(pl.Int128) for c in wide) if wide else log


def warning_unsupported(
    result: pl.LazyFrame,
    unsupported: pl.LazyFrame,
    slot: list[str],
    message: Callable[[int, str], str],
    overlap: pl.LazyFrame | None = None,
    hint: Callable[[pl.Series | None], str | None] | None = None,
    shift: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """``result``, warning (:class:`~polars_irmetrics.errors.SupportWarning`) when it is
    collected if ``unsupported`` (the ``slot`` ids the policy puts mass on and the log
    never shows) has rows: ``message(count, first slot)``. ``overlap``: one row, the
    log's distinct slots and those of them the policy puts mass on; where it puts mass
    on none, every importance weight is 0, and the warning says so with the likely fix
    if the two tables' ids were meant to line up (the data cannot tell a policy of
    unlogged actions from two spellings of the same ones), and ``hint(None)``'s sentence
    (read on that path only: ids that match once their spelling is ignored, with the
    fix). Where it puts mass on some of them, ``hint(ids)``'s, of the distinct unlogged
    ``slot[0]`` ids (gathered by the same pass as the count): those that match a logged
    one once their spelling is ignored (their rounds' weights read as 0 in silence
    before). ``shift``: one row, :func:`action_shift`'s, whose sentence (integer actions
    numbered from 0 in one table and from 1 in the other) ends the warning."""
    example = pl.format(", ".join(f"{c}={{}}" for c in slot), *(pl.col(c) for c in slot))
    # the unlogged ids for the hint, in the count's pass (few: actions never logged)
    ids = [pl.col(slot[0]).unique().implode().alias(_IDS)] if hint is not None else []
    counted = unsupported.select(
        pl.len().cast(pl.Int64).alias(_UNSUPPORTED), example.min().alias(_EXAMPLE), *ids
    )
    if overlap is not None:
        counted = pl.concat([counted, overlap], how="horizontal")
    if shift is not None:
        counted = pl.concat([counted, shift], how="horizontal")
    schema_out = schema_of(result)
    things = "actions" if len(slot) == 1 else f"({', '.join(slot)}) slots"

    def warn(frame: pl.DataFrame) -> pl.DataFrame:
        n = int(frame[_UNSUPPORTED][0]) if frame.height else 0
        logged = int(frame[_LOGGED][0] or 0) if _LOGGED in frame.columns and frame.height else 0
        if n:
            text = message(n, frame[_EXAMPLE][0])
            if logged and not frame[_TAKEN][0]:  # no weight above 0: maybe two id spellings
                text += (
                    f". It takes none of the log's {logged} {things} (column "
                    f"{slot[0]!r}), so every importance weight is 0 (ips 0, the "
                    "self-normalised estimators NaN): if its ids are meant to be the "
                    "log's, ids that do not line up are the likely cause: give policy= and "
                    f"the log the same {slot[0]!r} values (same spelling, same collection)"
                )
                said = hint(None) if hint is not None else None
                text += f". {said}" if said else ""
            elif hint is not None and (said := hint(frame[_IDS][0])):
                # some ids line up and others are spelt apart: those rounds' weights are 0
                text += (
                    ". Some of them may be logged actions spelt apart, whose rows then "
                    "read the logged action's probability as 0 (an importance weight of "
                    f"0): {said}"
                )
            moved = frame[_SHIFT][0] if _SHIFT in frame.columns else None
            if moved:
                text += shift_text(slot[0], moved)
            warn_from_plan(text, SupportWarning)
        return frame.drop(_UNSUPPORTED, _EXAMPLE, _LOGGED, _TAKEN, _IDS, _SHIFT, strict=False)

    joined = result.join(counted, how="cross", maintain_order="left")
    return mapped(joined, warns_in_order(warn), schema_out)


_LOGGED, _TAKEN = f"{INTERNAL}logged_slots", f"{INTERNAL}taken_slots"
_IDS = f"{INTERNAL}unlogged_ids"
_SHIFT = f"{INTERNAL}action_shift"


def action_shift(taken: pl.LazyFrame, shown: pl.LazyFrame, action: str) -> pl.LazyFrame:
    """One row for :func:`warning_unsupported`: ``1`` where the integer actions the
    log shows (``shown``) start at 0, and those the policy takes (``taken``) at 1 and
    hold every logged action plus one (a policy numbered from 1 beside a log numbered
    from 0), ``-1`` the other way round (the log's from 1, the policy's from 0, holding
    every logged action minus one), else 0 (Int8). Read from the two tables' distinct
    actions (an engine's driver holds those alone).

    >>> log = pl.LazyFrame({"action": [0, 1, 1]})
    >>> action_shift(pl.LazyFrame({"action": [1, 2]}), log, "action").collect().item()
    1
    >>> action_shift(pl.LazyFrame({"action": [0, 2]}), log, "action").collect().item()
    0
    """
    # Int128: a UInt64 id plus one, or an Int64 one minus one, stays exact
    policy = taken.select(pl.col(action).cast(pl.Int128)).unique()
    log = shown.select(pl.col(action).cast(pl.Int128)).drop_nulls().unique()
    lows = pl.concat(
        [
            log.select(pl.col(action).min().alias("lo")),
            policy.select(pl.col(action).min().alias("p_lo")),
        ],
        how="horizontal",
    )
    parts = []
    for step in (1, -1):
        moved = log.select(pl.col(action) + step)
        missing = moved.join(policy, on=action, how="anti").select(pl.len().alias("n"))
        fits = pl.concat([missing, lows], how="horizontal").select(
            (
                (pl.col("n") == 0)
                & (pl.col("lo") == (0 if step == 1 else 1))
                & (pl.col("p_lo") == pl.col("lo") + step)
            ).fill_null(False)
        )
        parts.append(fits.select(pl.when(pl.first()).then(step).otherwise(0).alias(str(step))))
    both = pl.concat(parts, how="horizontal")
    return both.select(pl.sum_horizontal(pl.all()).cast(pl.Int8).alias(_SHIFT))


def shift_text(action: str, shift: int) -> str:
    """The sentence of :func:`action_shift`'s ``shift`` (1: the policy's actions are
    the log's plus one; -1: minus one), after a support warning.

    >>> print(shift_text("action", 1))  # doctest: +NORMALIZE_WHITESPACE
    . The actions the policy takes hold every logged action plus one, from the log's
    lowest plus one: ids numbered from 0 in the log and from 1 in policy= (0-based
    against 1-based)? If both number the same actions, give policy= (and reward_model=)
    the log's numbering, e.g. pl.col('action') - 1 in each
    """
    sign, first, then, fix = ("plus", 0, 1, "- 1") if shift > 0 else ("minus", 1, 0, "+ 1")
    return (
        f". The actions the policy takes hold every logged action {sign} one, from the "
        f"log's lowest {sign} one: ids numbered from {first} in the log and from {then} in "
        f"policy= ({first}-based against {then}-based)? If both number the same actions, "
        "give policy= (and reward_model=) the log's numbering, e.g. "
        f"pl.col({action!r}) {fix} in each"
    )


def slot_overlap(taken: pl.LazyFrame, shown: pl.LazyFrame, slot: list[str]) -> pl.LazyFrame:
    """One row for :func:`warning_unsupported`: the distinct ``slot`` ids of the log
    (``shown``) and those of them the policy puts mass on (``taken``)."""
    hit = shown.join(taken.select(slot).unique(), on=slot, how="semi", nulls_equal=True)
    return pl.concat(
        [
            shown.select(pl.len().cast(pl.Int64).alias(_LOGGED)),
            hit.select(pl.len().cast(pl.Int64).alias(_TAKEN)),
        ],
        how="horizontal",
    )


def in_logged_rounds(
    candidates: pl.LazyFrame, taken: pl.LazyFrame, log_rounds: pl.LazyFrame, round_id: str
) -> pl.LazyFrame:
    """The ``candidates`` (slots the policy takes that the log never shows: the columns
    of ``candidates``) that ``taken`` (the policy's round and slot wherever it puts
    mass) takes in a round the log has (``log_rounds``: its ``round_id`` column, in
    the same dtype): a policy may cover rounds beyond the log's, and what it takes there
    no estimate reads. Only the candidates' rows are joined with the log's rounds (few
    or none: the log supports most policies).

    >>> taken = pl.LazyFrame({"round_id": [1, 1, 4], "action": [0, 2, 3]})
    >>> candidates = pl.LazyFrame({"action": [2, 3]})  # neither is ever logged
    >>> log = pl.LazyFrame({"round_id": [1, 2]})  # round 4 is not logged
    >>> in_logged_rounds(candidates, taken, log, "round_id").collect()["action"].to_list()
    [2]
    """
    slot = candidates.collect_schema().names()
    rows = taken.join(candidates, on=slot, how="semi", nulls_equal=True)
    logged = log_rounds.join(rows.select(round_id).unique(), on=round_id, how="semi")
    return rows.join(logged.unique(), on=round_id, how="semi").select(slot).unique()


def slate_columns(requests: Sequence[tuple[str, MetricRequest]]) -> list[str]:
    """The propensity columns the slate estimators of ``requests`` read (none: no
    slate estimator), whose positive values are the mass the support warning reads."""
    return sorted(
        {SLATE_COLUMNS[r.metric.name][0] for _, r in requests if r.metric.name in SLATE_COLUMNS}
    )


def slate_unsupported_text(count: int, example: str) -> str:
    """The support warning of ``count`` slots of logged rounds' slates the log never
    shows (``example``: the first, ``"round_id=3, position=2"``), on every path.

    >>> slate_unsupported_text(1, "round_id=3, position=2")[:62]
    'the policy puts mass on 1 slot(s) of slates the log never show'
    """
    return (
        f"the policy puts mass on {count} slot(s) of slates the log never shows (e.g. "
        f"{example}): the logging policy never showed them, so the log cannot support "
        "this policy and every slate estimate of it is biased"
    )


_POSITIVE = f"{INTERNAL}positive"


def listed_slots(
    policy: pl.LazyFrame, positions: list[pl.Expr], action: str, prob: str = "prob"
) -> pl.LazyFrame:
    """The distinct slots to which a policy in obp's list shape (one list of
    probabilities per round, and per position where the log has one) gives a positive
    probability: the list's indexes as ``action`` (Int64), after the ``positions``
    columns (expressions naming their output). For the support warning, on one machine
    and in each part of an engine.

    Examples
    --------
    >>> policy = pl.LazyFrame({"round_id": [1, 2], "prob": [[0.0, 1.0], [0.5, 0.5]]})
    >>> listed_slots(policy, [], "action").sort("action").collect()["action"].to_list()
    [0, 1]
    """
    listed = pl.col(prob).cast(pl.List(pl.Float64))
    return (
        policy.select(
            *positions, listed.alias(_POSITIVE), pl.int_ranges(listed.list.len()).alias(action)
        )
        .explode(_POSITIVE, action)
        .filter(pl.col(_POSITIVE) > 0)
        .drop(_POSITIVE)
        .unique()
    )


def _asked(labels: Sequence[str]) -> str:
    """The metrics asked for, as :func:`~polars_irmetrics.ground.options.check_read`'s
    messages name them: ``metric 'ips'``, ``metrics 'ips', 'dr'``."""
    shown = ", ".join(repr(label) for label in labels[:3]) + (" ..." if len(labels) > 3 else "")
    return f"metric {shown}" if len(labels) == 1 else f"metrics {shown}"


#: What each option of the intervals sets, in the refusals.
_SETS = {
    "ci_method": "how an interval is computed",
    "n_bootstrap": "the bootstrap interval's resamples",
    "seed": "the bootstrap interval's draws",
}


def check_interval_read(options: EvalOptions, labels: Sequence[str]) -> None:
    """Refuse an option of the intervals given (a value other than its default) where it
    reads nothing: ``ci_method=``, ``n_bootstrap=`` or ``seed=`` without ``ci=`` (no
    interval is computed), ``n_bootstrap=`` or ``seed=`` with ``ci_method="normal"`` (a
    closed form: nothing is resampled). An option no metric reads is refused, never
    ignored; ``labels`` are the metrics asked for, named in the message.

    Examples
    --------
    >>> check_interval_read(EvalOptions(ci=0.9, n_bootstrap=50), ["ips"])  # read
    >>> check_interval_read(EvalOptions(n_bootstrap=50), ["ips"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: n_bootstrap=50 is not read by metric 'ips' ...
    >>> check_interval_read(EvalOptions(ci=0.9, ci_method="normal", seed=7), ["ips", "dr"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: seed=7 is not read by metrics 'ips', 'dr' ...
    """
    given = options.given()
    metrics = _asked(labels)
    if options.ci is None:
        for name in ("ci_method", "n_bootstrap", "seed"):
            if name in given:
                what = _SETS[name]
                raise InvalidValueError(
                    f"{name}={getattr(options, name)!r} is not read by {metrics} without "
                    f"ci=: it sets {what}, and no interval is asked for; drop {name}= (an "
                    "option no metric reads would change nothing), or pass ci= (e.g. "
                    "ci=0.95 for a 95% interval)"
                )
        return
    if options.ci_method == "normal":
        for name in ("n_bootstrap", "seed"):
            if name in given:
                raise InvalidValueError(
                    f"{name}={getattr(options, name)!r} is not read by {metrics} with "
                    "ci_method='normal': the normal interval is a closed form, nothing is "
                    f"resampled; drop {name}= (an option no metric reads would change "
                    "nothing), or pass ci_method='bootstrap' (the default)"
                )


def check_position(options: EvalOptions, schema: pl.Schema) -> None:
    """Refuse a ``position=`` given (not the default ``"position"``) that names no
    column of the log (``schema``): a log without that column is read as one action per
    round, so the name would be ignored (the default name, absent, says just that).

    >>> check_position(EvalOptions(position="slot"), pl.Schema({"round_id": pl.Int64}))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnNotFoundError: position='slot' names no column of the log ...
    """
    if "position" not in options.given() or options.position in schema:
        return
    raise ColumnNotFoundError(
        f"position={options.position!r} names no column of the log (its columns: "
        f"{', '.join(repr(c) for c in schema.names())}); position= names the log's slot "
        "column (several logged actions per round): name the column the log has, or drop "
        "position= for a log of one action per round"
    )


#: The estimators whose shrunk weight is 0 / 0 at a weight of 0 for one ``lambda``:
#: that ``lambda``, the shrunk weight's formula, the words of that ``lambda`` and the
#: ``lambda`` the fix gives.
_UNSHRUNK = {
    "dr_os": (
        0.0,
        "lambda w / (w^2 + lambda)",
        "lambda=0 (obp's default)",
        "a positive value, e.g. dr_os(lambda=1)",
    ),
    "sg_ips": (
        1.0,
        "w / (1 - lambda + lambda w)",
        "lambda=1",
        "a value below 1, e.g. sg_ips(lambda=0.5)",
    ),
    "sg_dr": (
        1.0,
        "w / (1 - lambda + lambda w)",
        "lambda=1",
        "a value below 1, e.g. sg_dr(lambda=0.5)",
    ),
}


def unshrunk_labels(requests: Sequence[tuple[str, MetricRequest]]) -> list[str]:
    """The labels of ``dr_os`` asked for with ``lambda=0`` (obp's default: ``dr_os``
    without ``lambda=``), whose shrunk weight ``lambda w / (w^2 + lambda)`` is 0 / 0,
    NaN, at a weight of 0, and of ``sg_ips`` and ``sg_dr`` with ``lambda=1``, whose
    ``w / (1 - lambda + lambda w)`` is too (:func:`warn_unshrunk`)."""
    return [
        label
        for label, request in requests
        if request.metric.name in _UNSHRUNK
        and ope_parameter("lambda", request.params(1.0), label)
        == _UNSHRUNK[request.metric.name][0]
    ]


def warn_unshrunk(
    result: pl.LazyFrame, requests: Sequence[tuple[str, MetricRequest]], by: list[str]
) -> pl.LazyFrame:
    """``result`` (the means: one row per ``by`` group), warning when it is collected
    (:class:`~polars_irmetrics.errors.IrmWarning`) where a ``dr_os(lambda=0)``,
    ``sg_ips(lambda=1)`` or ``sg_dr(lambda=1)`` estimate (:func:`unshrunk_labels`) is
    NaN: a logged action the policy gives probability 0 (any deterministic policy's) is
    a weight of 0, whose shrunk weight is 0 / 0, as obp's is; the warning says why and
    the fix, a positive ``lambda`` (``sg_*``: one below 1). Only where it
    happens: a NaN estimate has no other cause (a NaN ``q_hat`` or reward is refused).

    Examples
    --------
    >>> import warnings
    >>> from polars_irmetrics.metrics.registry import parse_metric
    >>> means = pl.LazyFrame({"num_rows": [2], "dr_os": [float("nan")]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = warn_unshrunk(means, [("dr_os", parse_metric("dr_os"))], []).collect()
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    metric 'dr_os' is NaN in the log: with lambda=0 (obp's default) ...
    """
    names = {label: request.metric.name for label, request in requests}
    schema = schema_of(result)
    labels = [label for label in unshrunk_labels(requests) if label in schema]
    if not labels:
        return result

    def warning(frame: pl.DataFrame) -> pl.DataFrame:
        for label in labels:
            nan = frame.filter(pl.col(label).is_nan())
            if not nan.height:
                continue
            first = ", ".join(f"{k}={nan[k][0]}" for k in by)
            where = f"in {nan.height} by group(s) (first: {first})" if by else "in the log"
            _, formula, lam, fix = _UNSHRUNK[names[label]]
            warn_from_plan(
                f"metric {label!r} is NaN {where}: with {lam} its shrunk weight {formula} "
                "is 0 / 0 where the policy gives the logged action probability 0 (a weight "
                "w of 0, as any deterministic policy gives), as obp's is, and so is "
                f"{label}_ess; give lambda {fix} (a weight of 0 then counts 0)",
                IrmWarning,
            )
        return frame

    return mapped(result, warns_in_order(warning), schema)
