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
ignored (:func:`~polars_irmetrics.ground.spelling.spelling_hint`); then one
:class:`~polars_irmetrics.errors.CoverageWarning` names the pairs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_irmetrics.errors import CoverageWarning
from polars_irmetrics.fusion.methods import RUN
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import warn_from_plan

__all__ = ["KIND", "Overlap"]

#: On the count rows: ``True`` (null on the fused rows, which is how they are told apart).
KIND = "__irmf_ov_kind"
_COUNT = "__irmf_ov_count"
_MASK = "__irmf_ov_mask"
#: Runs per mask word: bits 0..61 of an Int64, so that every OR stays positive.
_BITS = 62
#: Pairs of runs named in the warning; the others are counted.
_SHOWN = 3

#: Runs x runs counts.
Matrix = np.ndarray[Any, np.dtype[np.int64]]


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
            "with warnings.filterwarnings('ignore', category=irm.CoverageWarning).",
            CoverageWarning,
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
