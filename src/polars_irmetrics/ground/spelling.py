"""Ids that match only once their spelling is ignored: the hint of a warning.

Two tables whose ids should line up (two runs fused, runs beside judgments) but do
not are more often spelt apart than truly disjoint: ``'01'`` beside ``'1'``,
``'doc1'`` beside ``'1'``, ``'Q1'`` beside ``'q1'``, ``' q1'`` beside ``'q1'``,
``'doc-1'`` beside ``'doc_1'``. :func:`spelling_hint` reads both tables (on a warning's
path only) and says how many ids of one match an id of the other once case, the spaces
around them, separators, a prefix or leading zeros are ignored, the first pair, what to
ignore and the polars fix. Its parts are shared: :func:`spelling_matches` (the ids that
match so) and :func:`spelling_change` (what two ids differ in, and the fix), read by
fusion's warnings (:mod:`polars_irmetrics.fusion.overlap`,
:mod:`polars_irmetrics.fusion.judged`) and by the ranking metrics' coverage hints
(:mod:`polars_irmetrics.offline.coverage`): one rule of which ids are spelt apart, and
one fix, whatever route warns.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from polars_irmetrics.ground.validate import INTERNAL

__all__ = [
    "FOLDS",
    "Sides",
    "round_key",
    "spelling_change",
    "spelling_digits",
    "spelling_fold",
    "spelling_folded",
    "spelling_hint",
    "spelling_matches",
]

_KEY, _PREFIX = f"{INTERNAL}spelling_key", f"{INTERNAL}spelling_prefix"


@dataclass(frozen=True)
class Sides:
    """How a hint names the two tables whose ids it compares: ``left`` and ``right``
    (``"run 'b'"``, ``"the judgments"``), and ``both`` (``"both runs"``)."""

    left: str
    right: str
    both: str


#: A change of spelling: its name in the text, the change in Python, whether the name
#: is plural.
Change = tuple[str, Callable[[str], str], bool]

#: The characters read as separators inside an id (``'doc-1'``, ``'doc_1'``, ``'doc.1'``).
_SEPARATORS = "[-_.: ]"

#: The changes of spelling a hint tries, in this order.
_CHANGES: tuple[Change, ...] = (
    ("the spaces around the ids", str.strip, True),
    ("case", str.lower, False),
    ("separators", lambda s: re.sub(_SEPARATORS, "", s), True),
    ("a prefix", lambda s: re.sub(r"^[^0-9]*", "", s) if re.search(r"[0-9]", s) else s, False),
    ("leading zeros", lambda s: re.sub(r"^([^0-9]*)0+([0-9])", r"\1\2", s), True),
)


def spelling_folded(text: str) -> str:
    """``text`` once the spaces around it, case and separators are ignored (the first
    three changes of :data:`_CHANGES`, in their order; a prefix and leading zeros kept:
    ``'A1'`` and ``'B1'`` stay two names).

    >>> spelling_folded(" Arm_B ")
    'armb'
    """
    return _apply(text, _CHANGES[:3])


def spelling_fold(ids: pl.Expr) -> pl.Expr:
    """:func:`spelling_folded` in a plan: each id (text) once the spaces around it, case
    and separators are ignored. An id of lowercase ASCII letters and digits alone is
    its own fold (:data:`FOLDS`, a cheap filter before it).

    Examples
    --------
    >>> ids = pl.Series([" Doc-7", "doc_7", "d7"])
    >>> pl.select(spelling_fold(pl.lit(ids))).to_series().to_list()
    ['doc7', 'doc7', 'd7']
    """
    return ids.str.strip_chars().str.to_lowercase().str.replace_all(_SEPARATORS, "")


#: A pattern that every id :func:`spelling_fold` changes contains (a character other
#: than a lowercase ASCII letter or a digit): the ids without one are their own fold.
FOLDS = "[^a-z0-9]"


def _keyed(ids: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """An id's key once case, the spaces around it, separators, a prefix and leading
    zeros are ignored, and its prefix (the letters before its first digit, separators
    left out; empty without one)."""
    folded = ids.str.strip_chars().str.to_lowercase().str.replace_all(_SEPARATORS, "")
    bare = folded.str.replace(r"^[^0-9]*", "").str.replace(r"^0+([0-9])", "${1}")
    digits = bare != ""
    key = pl.when(digits).then(bare).otherwise(folded)
    prefix = pl.when(digits).then(folded.str.extract(r"^([^0-9]*)", 1)).otherwise(pl.lit(""))
    return key, prefix


def spelling_digits(ids: pl.Expr) -> pl.Expr:
    """The digits of each id, leading zeros left out: equal for two ids that
    :func:`spelling_matches` pairs (case, spaces, separators and a prefix change no
    digit, and its key drops leading zeros only), so a cheap filter before it (one
    pass over the ids where the match takes several).

    Examples
    --------
    >>> ids = pl.Series(["Doc-007", "doc_7", "x70", "abc"])
    >>> pl.select(spelling_digits(pl.lit(ids))).to_series().to_list()
    ['7', '7', '70', '']
    """
    return ids.cast(pl.String).str.replace_all("[^0-9]", "").str.strip_chars_start("0")


def round_key(ids: pl.Expr) -> pl.Expr:
    """A key equal for two round ids that :func:`~polars_irmetrics.ope.checks.round_hint`
    may find spelt apart (its digits, leading zeros left out, for ids with a digit; else
    its lowercase letters and digits): an engine joins the log's unmatched rounds and the
    policy's on it, so that only the few that may match come to the driver, where the
    hint reads them.

    Examples
    --------
    >>> ids = pl.Series(["R-007", "r7", " Ab_c", "x0"])
    >>> pl.select(round_key(pl.lit(ids))).to_series().to_list()
    ['7', '7', 'abc', '0']
    """
    text = ids.cast(pl.String)
    digits = text.str.replace_all("[^0-9]", "").str.replace("^0+([0-9])", "${1}")
    loose = text.str.to_lowercase().str.replace_all("[^a-z0-9]", "")
    return pl.when(digits != "").then(digits).otherwise(loose)


def spelling_matches(
    left: pl.LazyFrame,
    right: pl.LazyFrame,
    column: str,
    *,
    within: str | Sequence[str] | None,
) -> pl.LazyFrame:
    """The ids of ``column`` in ``left`` (as text) that ``right`` lacks and that match
    one of ``right``'s once case, the spaces around them, separators, a prefix (on one
    side only, or the same prefix in another case) or leading zeros are ignored (within
    the same ``within`` id, or ids, where given: documents within a query): one row per
    pair, ``within`` (where given), ``column`` and ``{column}_right``. Lazy: a join of
    the two tables' distinct ids.

    Examples
    --------
    >>> runs = pl.LazyFrame({"doc_id": ["doc-1", "x9", "7"]})
    >>> qrels = pl.LazyFrame({"doc_id": ["doc_1", "img9", "007"]})
    >>> spelling_matches(runs, qrels, "doc_id", within=None).sort("doc_id").collect().rows()
    [('7', '007'), ('doc-1', 'doc_1')]
    """
    keys = [*_within(within), column]
    text = pl.col(column).cast(pl.String)
    ran = left.select(*keys[:-1], text).unique()
    held = right.select(*keys[:-1], text).unique()
    key, prefix = _keyed(pl.col(column))
    return (
        ran.join(held, on=keys, how="anti", nulls_equal=True)
        .with_columns(key.alias(_KEY), prefix.alias(_PREFIX))
        .join(held.with_columns(key.alias(_KEY), prefix.alias(_PREFIX)), on=[*keys[:-1], _KEY])
        .filter(
            (pl.col(_PREFIX) == pl.col(f"{_PREFIX}_right"))
            | (pl.col(_PREFIX) == "")
            | (pl.col(f"{_PREFIX}_right") == "")
        )
        .select(*keys, f"{column}_right")
    )


def _within(within: str | Sequence[str] | None) -> list[str]:
    if within is None:
        return []
    return [within] if isinstance(within, str) else list(within)


def spelling_change(ran_id: str, held_id: str) -> tuple[str, str]:
    """What two ids that :func:`spelling_matches` pairs differ in, as the clause of a
    hint (``"case is ignored"``, ``"a prefix and leading zeros are ignored"``), and the
    polars methods that give both the same spelling (applied to each).

    Examples
    --------
    >>> spelling_change("1", "q001")
    ('a prefix and leading zeros are ignored', ".str.strip_prefix('q').str.strip_chars_start('0')")
    >>> spelling_change("doc-1", "DOC_1")
    ('case and separators are ignored', ".str.to_lowercase().str.replace_all('[-_.: ]', '')")
    """
    # where no set of Python's changes makes the two equal (some text the plan folds
    # otherwise), every change is named
    changes = _changes(ran_id, held_id) or _CHANGES
    names = [name for name, _, _ in changes]
    what = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    plural = len(changes) != 1 or changes[0][2]
    return f"{what} {'are' if plural else 'is'} ignored", _fix(ran_id, held_id, changes)


def spelling_hint(
    left: pl.LazyFrame,
    right: pl.LazyFrame,
    column: str,
    *,
    within: str | None,
    noun: str,
    sides: Sides,
) -> str | None:
    """A sentence where ids of ``column`` in ``left`` that ``right`` lacks match one of
    ``right``'s once their spelling is ignored (:func:`spelling_matches`): how many,
    the first pair, what to ignore and a fix (:func:`spelling_change`). ``None`` where
    none does. Reads both tables (a join of their distinct ids and a count).

    Examples
    --------
    >>> from polars_irmetrics.ground.spelling import Sides, spelling_hint
    >>> runs = pl.LazyFrame({"query_id": ["01", "02", "x"]})
    >>> qrels = pl.LazyFrame({"query_id": ["1", "2"]})
    >>> sides = Sides("the runs", "the judgments", "the runs and the judgments")
    >>> print(spelling_hint(runs, qrels, "query_id", within=None, noun="query", sides=sides))
    ... # doctest: +NORMALIZE_WHITESPACE
    2 query id(s) of the runs match an id of the judgments only when leading zeros are
    ignored ('01' against '1'): ids are compared exactly; give the runs and the judgments
    the same spelling, e.g. pl.col('query_id').str.strip_chars_start('0') on each.
    """
    keys = [column] if within is None else [within, column]
    matched = spelling_matches(left, right, column, within=within)
    other = f"{column}_right"
    sample, count = pl.collect_all(
        [
            matched.sort([*keys, other]).head(1).select(column, other),
            matched.select(keys).unique().select(pl.len()),
        ]
    )
    if not sample.height:
        return None
    ran_id, held_id = sample.row(0)
    what, fix = spelling_change(ran_id, held_id)
    return (
        f"{count.item()} {noun} id(s) of {sides.left} match an id of {sides.right} only "
        f"when {what} ({ran_id!r} against {held_id!r}): ids are compared exactly; give "
        f"{sides.both} the same spelling, e.g. pl.col({column!r}){fix} on each."
    )


#: The changes applied before an id's prefix is read.
_BEFORE_PREFIX = ("the spaces around the ids", "case", "separators")


def _apply(text: str, changes: Sequence[Change]) -> str:
    for _, change, _ in changes:
        text = change(text)
    return text


def _changes(ran_id: str, held_id: str) -> tuple[Change, ...]:
    """The fewest changes of :data:`_CHANGES` (in their order) under which the two ids
    are equal; none where no set of them makes them so (the plan's and Python's
    changes differ on some text)."""
    for size in range(1, len(_CHANGES) + 1):
        for chosen in itertools.combinations(_CHANGES, size):
            if _apply(ran_id, chosen) != _apply(held_id, chosen):
                continue
            # as the plan matches: a prefix on one side only (two prefixes that differ
            # are two names, not one name spelt twice)
            names = [name for name, _, _ in chosen]
            before = [c for c in chosen if c[0] in _BEFORE_PREFIX]
            prefixes = [_prefix(_apply(s, before)) for s in (ran_id, held_id)]
            if "a prefix" in names and all(prefixes):
                continue
            return chosen
    return ()


def _prefix(text: str) -> str:
    """The letters before the first digit of ``text`` (all of it without one)."""
    found = re.match(r"[^0-9]*", text)
    return found.group(0) if found else ""


def _fix(ran_id: str, held_id: str, changes: Sequence[Change]) -> str:
    """The polars methods that make both ids equal, in the order of ``changes``."""
    names = [name for name, _, _ in changes]
    steps = []
    if "the spaces around the ids" in names:
        steps.append(".str.strip_chars()")
    if "case" in names:
        steps.append(".str.to_lowercase()")
    if "separators" in names:
        steps.append(f".str.replace_all({_SEPARATORS!r}, '')")
    before = [c for c in changes if c[0] in _BEFORE_PREFIX]
    prefixes = [_prefix(_apply(s, before)) for s in (ran_id, held_id)]
    stripped = False
    if "a prefix" in names:
        given = [p for p in prefixes if p]
        if len(given) == 1:
            steps.append(f".str.strip_prefix({given[0]!r})")
        else:
            steps.append(".str.replace('^[^0-9]+', '')")
        stripped = True
    if "leading zeros" in names:
        if stripped or not any(prefixes):
            steps.append(".str.strip_chars_start('0')")
        else:
            steps.append(".str.replace('^([^0-9]*)0+([0-9])', '${1}${2}')")
    return "".join(steps)
