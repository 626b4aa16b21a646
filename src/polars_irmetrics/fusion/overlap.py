"""Whether the runs :func:`~polars_irmetrics.fuse` combines line up, counted in its plan.

Two runs that share no query, or share queries but no document, fuse into their lists
side by side: each document scored by one run alone, as a concatenation would. That
is valid (disjoint runs fuse as documented) but more often ids that do not line up
(``'01'`` beside ``'1'``, ``'doc1'`` beside ``'1'``, case). The fusion's own group-by
of each (query, document) also gives the set of runs that retrieve it, as a bit mask
of the runs' indexes (:meth:`Overlap.words`, one more aggregate); the plan counts the
documents of each set of runs (:meth:`Overlap.tally`: a group-by of the fused rows by
that mask, a few rows). The counts travel as extra rows of the fused frame (through
the out-of-core buckets too, whose queries are disjoint: their counts add up) and are
read where the fused frame is checked (:func:`~.frame.checked`): the documents each
pair of runs shares, in numpy. Only where a pair shares none are the runs read again
(:meth:`Overlap.warn`, the warning's path): the queries each pair shares, and a hint
where the ids match once case, the spaces around them, a prefix or leading zeros are
ignored (:func:`spelling_hint`); then one
:class:`~polars_irmetrics.errors.IrmWarning` names the pairs.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.fusion.methods import RUN
from polars_irmetrics.ground.validate import warn_from_plan

__all__ = ["KIND", "Overlap", "Sides", "spelling_hint"]

#: On the count rows: ``True`` (null on the fused rows, which is how they are told apart).
KIND = "__irmf_ov_kind"
_COUNT = "__irmf_ov_count"
_MASK = "__irmf_ov_mask"
#: Runs per mask word: bits 0..61 of an Int64, so that every OR stays positive.
_BITS = 62
#: Pairs of runs named in the warning; the others are counted.
_SHOWN = 3

_KEY, _PREFIX = "__irmf_ov_key", "__irmf_ov_prefix"

#: Runs x runs counts.
Matrix = np.ndarray[Any, np.dtype[np.int64]]


@dataclass(frozen=True)
class Sides:
    """How a hint names the two tables whose ids it compares: ``left`` and ``right``
    (``"run 'b'"``, ``"the judgments"``), and ``both`` (``"both runs"``)."""

    left: str
    right: str
    both: str


@dataclass(frozen=True)
class Overlap:
    """The overlap check of one fusion: the runs' ``names`` (in their order), their id
    columns, whether each id is text (a hint applies to text ids only) and ``runs``,
    the gathered long frame (``RUN``, the ids), read again on the warning's path."""

    names: tuple[str, ...]
    query_id: str
    doc_id: str
    text_ids: tuple[bool, bool]
    runs: pl.LazyFrame

    @property
    def masks(self) -> list[str]:
        """The mask words' columns: one per 62 runs."""
        return [f"{_MASK}{w}" for w in range(-(-len(self.names) // _BITS))]

    @property
    def columns(self) -> list[str]:
        """Every column the count rows add to the fused frame."""
        return [KIND, *self.masks, _COUNT]

    def words(self, retrieved: pl.Expr | None = None) -> list[pl.Expr]:
        """Aggregates of a group-by of the long frame by (query, document): the runs
        that retrieve the document, as mask words (bit ``i`` of word ``w``: run ``62 w +
        i``); ``retrieved`` where the frame holds rows of runs that did not retrieve it
        (Borda's and Condorcet's candidates)."""
        run = pl.col(RUN)
        bit = pl.lit(2, pl.Int64).pow(run % _BITS)
        masks = self.masks
        words = []
        for w, name in enumerate(masks):
            given = [] if len(masks) == 1 else [run // _BITS == w]
            if retrieved is not None:
                given.append(retrieved)
            # elementwise, then one OR per group: the group-by's fast path
            word = pl.when(*given).then(bit).otherwise(0) if given else bit
            words.append(word.bitwise_or().fill_null(0).alias(name))
        return words

    def tally(self, fused: pl.LazyFrame) -> pl.LazyFrame:
        """The count rows of ``fused`` (one row per (query, document), with the
        :meth:`words`): the documents of each set of runs."""
        masks = self.masks
        return (
            fused.group_by(masks)
            .agg(pl.len().cast(pl.Int64).alias(_COUNT))
            .select(pl.lit(True).alias(KIND), *masks, _COUNT)
        )

    def shared(self, rows: pl.DataFrame) -> Matrix:
        """Summed over ``rows`` (count rows: a mask and a count): the count each pair
        of runs shares, a runs x runs matrix (the diagonal: each run's own)."""
        n, masks = len(self.names), self.masks
        summed = rows.group_by(masks).agg(pl.col(_COUNT).sum())
        words = summed.select(masks).to_numpy().astype(np.int64)
        words = words.reshape(summed.height, len(masks))
        shifts = np.arange(_BITS, dtype=np.int64)
        bits = ((words[:, :, None] >> shifts) & 1).reshape(summed.height, len(masks) * _BITS)
        bits = bits[:, :n]
        counts = summed.get_column(_COUNT).to_numpy().astype(np.int64)
        return np.asarray(bits.T @ (bits * counts[:, None]), dtype=np.int64)

    def query_counts(self) -> pl.DataFrame:
        """The runs read again: the queries of each set of runs, as count rows."""
        q = self.query_id
        listed = self.runs.select(RUN, q).unique().group_by(q).agg(self.words())
        return self.tally(listed).collect()

    def warn(self, rows: pl.DataFrame) -> None:
        """The warning of the count rows ``rows`` (of every part): given once, naming the
        pairs of runs that share no document (module doc); nothing where every pair
        shares one."""
        docs = self.shared(rows)
        n = len(self.names)
        apart = [(i, j) for i, j in itertools.combinations(range(n), 2) if docs[i, j] == 0]
        if not apart:
            return
        queries = self.shared(self.query_counts())
        clauses = [self._clause(i, j, queries, docs) for i, j in apart[:_SHOWN]]
        if len(apart) > _SHOWN:
            clauses.append(f"and {len(apart) - _SHOWN} more pairs of runs that share no document")
        scored = "both" if len(apart) == 1 else "both runs of such a pair"
        first = apart[0]
        hint = self._hint(first[1], first[0], shared_queries=bool(queries[first]))
        cause = "Ids that do not line up are the likely cause: " + (
            hint
            or "check that the runs name the same queries and documents (same collection, "
            "same id spelling)."
        )
        warn_from_plan(
            f"{'; '.join(clauses)}: no document of the fused run is scored by {scored}, so "
            f"it holds their lists side by side, as a concatenation would. {cause} If the "
            "runs are meant to be disjoint, the fused run is as documented: silence this "
            "with warnings.filterwarnings('ignore', category=irm.errors.IrmWarning).",
            IrmWarning,
        )

    def _clause(self, i: int, j: int, queries: Matrix, docs: Matrix) -> str:
        a, b = self.names[i], self.names[j]
        runs = f"runs {a!r} and {b!r}"
        if not queries[i, j]:
            return f"{runs} share no query ({_each(queries[i, i], queries[j, j], 'query')})"
        return (
            f"{runs} share {_count(queries[i, j], 'query')} but no document "
            f"({_each(docs[i, i], docs[j, j], 'document')}, none in both)"
        )

    def _hint(self, left: int, right: int, *, shared_queries: bool) -> str | None:
        """The hint of a pair: run ``left``'s query ids against run ``right``'s where
        they share no query, else its (query, document) pairs."""
        q, d = self.query_id, self.doc_id
        column, within = (d, q) if shared_queries else (q, None)
        if not self.text_ids[1 if column == d else 0]:
            return None
        keys = [column] if within is None else [within, column]
        ran = self.runs.filter(pl.col(RUN) == left).select(keys)
        held = self.runs.filter(pl.col(RUN) == right).select(keys)
        a, b = self.names[left], self.names[right]
        sides = Sides(f"run {a!r}", f"run {b!r}", "both runs")
        noun = "document" if column == d else "query"
        return spelling_hint(ran, held, column, within=within, noun=noun, sides=sides)


def _count(n: int | np.integer[Any], noun: str) -> str:
    """``n`` ``noun``(s): ``1 query``, ``2 queries``."""
    return f"{n} {noun if n == 1 else _plural(noun)}"


def _each(a: int | np.integer[Any], b: int | np.integer[Any], noun: str) -> str:
    """Two runs' counts: ``2 queries each``, ``2 and 1 queries``."""
    if a == b:
        return f"{_count(a, noun)} each"
    return f"{a} and {b} {_plural(noun)}"


def _plural(noun: str) -> str:
    return {"query": "queries"}.get(noun, f"{noun}s")


# ------------------------------------------------------------------------------ the hint

#: A change of spelling: its name in the text, the change in Python, whether the name
#: is plural.
Change = tuple[str, Callable[[str], str], bool]

#: The changes of spelling a hint tries, in this order.
_CHANGES: tuple[Change, ...] = (
    ("the spaces around the ids", str.strip, True),
    ("case", str.lower, False),
    ("a prefix", lambda s: re.sub(r"^[^0-9]*", "", s) if re.search(r"[0-9]", s) else s, False),
    ("leading zeros", lambda s: re.sub(r"^([^0-9]*)0+([0-9])", r"\1\2", s), True),
)


def _keyed(ids: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """An id's key once case, the spaces around it, a prefix and leading zeros are
    ignored, and its prefix (the letters before its first digit; empty without one)."""
    folded = ids.str.strip_chars().str.to_lowercase()
    bare = folded.str.replace(r"^[^0-9]*", "").str.replace(r"^0+([0-9])", "${1}")
    digits = bare != ""
    key = pl.when(digits).then(bare).otherwise(folded)
    prefix = pl.when(digits).then(folded.str.extract(r"^([^0-9]*)", 1)).otherwise(pl.lit(""))
    return key, prefix


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
    ``right``'s once case, the spaces around them, a prefix (on one side only, or the
    same prefix in another case) or leading zeros are ignored (within the same
    ``within`` id where given: documents within a query): how many, the first pair,
    what to ignore and a fix. ``None`` where none does. Reads both tables (a join of
    their distinct ids and a count).

    Examples
    --------
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
    text = pl.col(column).cast(pl.String)
    ran = left.select(*keys[:-1], text).unique()
    held = right.select(*keys[:-1], text).unique()
    key, prefix = _keyed(pl.col(column))
    other = f"{column}_right"
    matched = (
        ran.join(held, on=keys, how="anti", nulls_equal=True)
        .with_columns(key.alias(_KEY), prefix.alias(_PREFIX))
        .join(held.with_columns(key.alias(_KEY), prefix.alias(_PREFIX)), on=[*keys[:-1], _KEY])
        .filter(
            (pl.col(_PREFIX) == pl.col(f"{_PREFIX}_right"))
            | (pl.col(_PREFIX) == "")
            | (pl.col(f"{_PREFIX}_right") == "")
        )
    )
    sample, count = pl.collect_all(
        [
            matched.sort([*keys, other]).head(1).select(column, other),
            matched.select(keys).unique().select(pl.len()),
        ]
    )
    if not sample.height:
        return None
    ran_id, held_id = sample.row(0)
    # where no set of Python's changes makes the two equal (some text the plan folds
    # otherwise), every change is named
    changes = _changes(ran_id, held_id) or _CHANGES
    names = [name for name, _, _ in changes]
    what = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    plural = len(changes) != 1 or changes[0][2]
    fix = _fix(ran_id, held_id, changes)
    return (
        f"{count.item()} {noun} id(s) of {sides.left} match an id of {sides.right} only "
        f"when {what} {'are' if plural else 'is'} ignored ({ran_id!r} against {held_id!r}): "
        f"ids are compared exactly; give {sides.both} the same spelling, e.g. "
        f"pl.col({column!r}){fix} on each."
    )


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
            before = [c for c in chosen if c[0] in ("the spaces around the ids", "case")]
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
    before = [c for c in changes if c[0] in ("the spaces around the ids", "case")]
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
