"""The input checks of a beyond-accuracy plan, raised when the plan runs.

Each check is a count of bad rows and one example, computed inside the lazy plan as
two columns beside the metric values (:func:`flag`); :func:`raise_on_flags` runs on the
small result frame, raises the first check that counted anything, with its message,
and drops the check columns. Nothing is dropped silently: an item the interactions or
the item features lack is an error naming the fix, never a row left out, unless the
caller chose a policy for them (``unseen_items='drop'`` or ``'recommenders'``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from polars_irmetrics.errors import DuplicateError, InvalidValueError, IrmError
from polars_irmetrics.ground.validate import (
    INTERNAL,
    flag_error,
    is_text,
    null_key_error,
    sampled_error,
)

__all__ = [
    "CHECKS",
    "Check",
    "Shown",
    "Words",
    "flag",
    "flag_columns",
    "raise_on_flags",
    "refused_check",
    "sampled_lists_error",
    "shown",
]


@dataclass(frozen=True)
class Check:
    """One input check: its error class and message.

    The message is formatted with ``count`` (the bad rows) and ``example`` (text built
    in the plan, the first bad row).
    """

    name: str
    error: type[IrmError]
    message: str
    #: The ranking metrics' check of a run this is (a name of
    #: :data:`~polars_irmetrics.ground.validate.RUN_FLAGS`, or ``"null_user"``: a null
    #: query id), raised in their words with :class:`Words`; ``None``: ``message``.
    run_flag: str | None = None


@dataclass(frozen=True)
class Words:
    """What a run check's message names: the recommendations' columns by role
    (``doc_id``, ``rank``, ``score``), the user column, the table (``"run"`` through
    :func:`~polars_irmetrics.evaluate`, ``"recommendations"`` through
    :func:`~polars_irmetrics.beyond_accuracy`) and the ``by`` keys (a user's group,
    shown beside it as the ranking metrics show a query's)."""

    columns: Mapping[str, str | None]
    user: str
    frame: str
    by: tuple[str, ...] = ()
    #: The sample column the ``"sampled"`` check read (``sample_id=`` of
    #: :func:`~polars_irmetrics.evaluate`; ``'sample'`` for
    #: :func:`~polars_irmetrics.beyond_accuracy`, :func:`sampled_lists_error`).
    sample: str | None = None
    #: A sentence read only where the check of that name fails, written after its
    #: message (the recommendations' ids that the interactions spell apart:
    #: :func:`~polars_irmetrics.recsys.plan.spelling_hints`); ``None``: nothing to say.
    hints: Mapping[str, Callable[[], str | None]] = field(default_factory=dict)


#: Every check, in the order they are reported (the first that fails raises).
CHECKS: tuple[Check, ...] = (
    # a row without an item id is no item's (the interactions' null ids are refused
    # alike: ground.validate.warn_on_interactions)
    Check(
        "null_feature_ids",
        InvalidValueError,
        "the item features have {count} row(s) with a null {example}: each row is one "
        "item's features; fill or drop them, e.g. item_features.drop_nulls([{example}])",
    ),
    Check(
        "null_features",
        InvalidValueError,
        "item {example} has a null feature vector in item_features "
        "({count} items): give every item a vector, or drop the item",
    ),
    Check(
        "empty_features",
        InvalidValueError,
        "item {example} has an empty (zero-length) feature vector in item_features "
        "({count} items): give every item a vector of the same length",
    ),
    Check(
        "nan_features",
        InvalidValueError,
        "item {example} has a NaN, infinite or null value in its feature vector in "
        "item_features ({count} items): fix the vector, or drop the item",
    ),
    Check(
        "zero_features",
        InvalidValueError,
        "item {example} has a zero feature vector in item_features ({count} items): it "
        "has no direction, so its cosine similarity is undefined; give it a nonzero "
        "vector, or drop the item",
    ),
    Check(
        "ragged_features",
        InvalidValueError,
        "the feature vectors in item_features differ in length ({example}): give every "
        "item a vector of the same length",
    ),
    Check(
        "dup_features",
        DuplicateError,
        "item {example} has more than one row in item_features ({count} extra rows): "
        "keep one feature vector per item",
    ),
    Check(
        "dup_category",
        DuplicateError,
        "item {example} has more than one row in item_features ({count} extra rows): "
        "categorical_diversity reads one category per item; keep one row per item",
    ),
    Check(
        "nan_category",
        InvalidValueError,
        "item {example} of item_features ({count} item(s) have one): "
        "categorical_diversity counts the categories of each list, and NaN is none; give "
        "the item a category (e.g. .fill_nan(-1.0) for a category of its own), or drop it "
        "from item_features and the recommendations",
    ),
    Check(
        "empty_catalog",
        InvalidValueError,
        "the interactions table has no rows{example}: the catalogue and the items' "
        "popularity come from it; pass the interactions the recommender learned from "
        "as interactions=...",
    ),
    # the recommendations as the ranking metrics check a run, in their words
    # (ground.validate's RUN_FLAGS): the example is the first user failing, the count
    # that user's
    *(
        Check(name, IrmError, "", run_flag=name)
        for name in (
            "sampled",
            "null_user",
            "null_doc",
            "dup_doc",
            "null_rank",
            "bad_rank",
            "big_rank",
            "dup_rank",
            "null_score",
            "nan_score",
            "two_orders",
        )
    ),
    Check(
        "bad_weight",
        InvalidValueError,
        "column {example} ({count} recommendation(s) have one): serendipity weighs each "
        "recommended item by it (serendipity_relevance=); give every row a finite weight, "
        "e.g. .fill_null(0.0) for an item of no relevance, or drop those rows",
    ),
    Check(
        "no_popularity",
        InvalidValueError,
        "item {example} never occurs in the interactions, so it has no popularity "
        "({count} recommendations name such items): add its interactions to "
        "interactions=..., or drop it from the recommendations",
    ),
    Check(
        "no_cooccurrence",
        InvalidValueError,
        "item {example} never occurs in the interactions, so its co-occurrence "
        "similarity to any item is undefined ({count} recommendations name such items): "
        "add its interactions to interactions=..., drop it from the recommendations "
        "(unseen_items='drop'), or count it similar 0 to every item as Microsoft "
        "Recommenders does (unseen_items='recommenders')",
    ),
    Check(
        "no_category",
        InvalidValueError,
        "item {example} has no row, or a null category, in item_features ({count} "
        "recommendations name such items): categorical_diversity counts the categories "
        "of each list; give the item a category in item_features=..., or drop it from "
        "the recommendations",
    ),
    Check(
        "no_features",
        InvalidValueError,
        "item {example} has no row in item_features ({count} recommendations name such "
        "items): add its feature vector to item_features=..., or drop it from the "
        "recommendations",
    ),
    Check(
        "no_history_features",
        InvalidValueError,
        "item {example} has no row in item_features ({count} interactions name such "
        "items): serendipity compares each recommendation with every item of the "
        "user's history; add its feature vector to item_features=...",
    ),
    Check(
        "no_history",
        InvalidValueError,
        "user {example} has recommendations but no row in the interactions ({count} "
        "recommendations of such users): serendipity compares each recommendation with "
        "the user's history; add the user's interactions to interactions=..., or drop "
        "the user from the recommendations",
    ),
)
_BY_NAME = {check.name: check for check in CHECKS}


def _count(name: str) -> str:
    return f"{INTERNAL}flag_{name}"


def _example(name: str) -> str:
    return f"{INTERNAL}eg_{name}"


def shown(value: pl.Expr, dtype: pl.DataType | None) -> pl.Expr:
    """``value`` as text for a message: quoted when it is a string id (as ``repr`` does)."""
    text = value.cast(pl.String).fill_null("null")
    if dtype is not None and is_text(dtype):
        return pl.concat_str(pl.lit("'"), text, pl.lit("'"))
    return text


#: A value shown in a message: an expression and its id dtype (``None``: not an id).
Shown = tuple[pl.Expr, "pl.DataType | None"]


def flag(
    name: str,
    bad: pl.Expr,
    template: str = "",
    values: Sequence[Shown] = (),
    *,
    count: pl.Expr | None = None,
    example: pl.Expr | None = None,
) -> list[pl.Expr]:
    """The two aggregation expressions of check ``name``: how many rows are ``bad`` (or
    ``count``), and the example text: ``template`` filled with ``values`` from the bad
    row whose values sort first (one row whatever order the plan's joins left the rows
    in), or the aggregation ``example``. Only the picked values become text: on clean
    data no string is built."""
    if name not in _BY_NAME:  # pragma: no cover - a declaration error
        raise KeyError(name)
    number = bad.sum() if count is None else count
    if example is None:
        order = [value.filter(bad) for value, _ in values]
        picked = [
            shown(value.filter(bad).sort_by(order).first(), dtype) for value, dtype in values
        ]
        example = pl.format(template, *picked) if picked else pl.lit(template)
    return [
        number.cast(pl.Int64).alias(_count(name)),
        example.cast(pl.String).alias(_example(name)),
    ]


def flag_columns(schema: Sequence[str]) -> list[str]:
    """The check columns among ``schema``'s names."""
    return [c for c in schema if c.startswith((f"{INTERNAL}flag_", f"{INTERNAL}eg_"))]


def sampled_lists_error(column: str, user: str, n: int) -> InvalidValueError:
    """:func:`~polars_irmetrics.beyond_accuracy`'s refusal of recommendations whose
    ``user`` (as text, with its group) has rows under ``n`` (more than one) values of
    the column ``column`` (the library's sample column, ``'sample'``): a stochastic
    policy's sampled rankings, which its metrics would read as one list. That function
    has no ``sample_id=``: the fix is one sample, or the column dropped or renamed.

    >>> sampled_lists_error("sample", "1", 2)  # doctest: +ELLIPSIS
    InvalidValueError("the recommendations' column 'sample' holds sampled rankings: ...")
    """
    return InvalidValueError(
        f"the recommendations' column {column!r} holds sampled rankings: user {user} has "
        f"rows under {n} of its values, and the beyond-accuracy metrics read one list per "
        f"user, so they would read every sample's items as one list (a column named "
        f"{column!r} is read as a stochastic policy's samples): evaluate them on one "
        f"sample, e.g. .filter(pl.col({column!r}) == 0), or drop or rename the column if "
        f"it holds no samples"
    )


def refused_check(error: IrmError) -> str | None:
    """The name of the check of :data:`CHECKS` whose message ``error`` is (not one of the
    run checks, raised in the ranking metrics' words), or ``None``.

    >>> refused_check(InvalidValueError(_BY_NAME["no_popularity"].message.format(
    ...     count=2, example="'z' (recommended to user 'u')")))
    'no_popularity'
    >>> refused_check(InvalidValueError("something else"))
    """
    for check in CHECKS:
        if check.run_flag is not None or type(error) is not check.error:
            continue
        parts = re.split(r"\{(?:count|example)\}", check.message)
        if re.fullmatch("(.+)".join(re.escape(part) for part in parts), str(error), re.S):
            return check.name
    return None


def raise_on_flags(frame: pl.DataFrame, words: Words) -> pl.DataFrame:
    """Raise the first failed check of ``frame``; else ``frame`` without check columns."""
    for key in words.by:  # a null by= or systems= key, as the ranking metrics refuse it
        if key in frame.columns and frame.get_column(key).null_count():
            raise null_key_error(key, words.frame)
    for check in CHECKS:
        count = _count(check.name)
        if count not in frame.columns:
            continue
        failed = frame.filter(pl.col(count) > 0)
        if check.run_flag is not None and failed.height:
            # the ranking metrics' order: the first group, then its first user
            row = failed.sort([*words.by, _example(check.name)], nulls_last=True).row(
                0, named=True
            )
            if check.run_flag == "null_user":
                raise null_key_error(words.user, words.frame)
            group = ", ".join(f"{key}={row[key]!r}" for key in words.by)
            user = row[_example(check.name)] + (f" ({group})" if group else "")
            if check.run_flag == "sampled" and words.frame == "recommendations":
                raise sampled_lists_error(str(words.sample), user, row[count])
            if check.run_flag == "sampled":
                raise sampled_error(str(words.sample), user, row[count], frame=words.frame)
            raise flag_error(
                check.run_flag, words.columns, None, row[count], frame=words.frame, shown=user
            )
        # the example that sorts first, whatever order the by groups came in
        failed = failed.sort(_example(check.name), nulls_last=True)
        if failed.height:
            total, example = int(failed[count].sum()), failed[_example(check.name)][0]
            text = check.message.format(count=total, example=example)
            hint = words.hints.get(check.name)
            said = hint() if hint is not None else None
            raise check.error(f"{text}. {said}" if said else text)
    return frame.drop(flag_columns(frame.columns))
