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
pair of runs shares, in numpy. The count rows are also split by the runs of each
query (:attr:`Overlap.query_masks`, the OR of its documents' masks, a window by query)
and count the queries they open, so the queries each pair shares are read there too.
Only on a warning's path are the runs read again (:meth:`Overlap.warn`): for the
queries' names and a hint where the ids match once case, the spaces around them,
separators, a prefix or leading zeros are ignored
(:func:`~polars_irmetrics.ground.spelling.spelling_hint`). One
:class:`~polars_irmetrics.errors.CoverageWarning` names the pairs that share no
document; where every pair shares one but no run holds every query of the fused run
(query sets that are not nested: ranx refuses runs whose queries differ), another
names each run's missing queries (:meth:`Overlap.warn_missing`). The count rows also
count the queries several runs hold whose documents are each retrieved by one run
alone (a window by query over the documents' masks); where there are such queries,
the runs' documents are read for a match once their spelling is ignored, named in a
third warning where one is found (:meth:`Overlap.warn_spelt_apart`: ``'D1'`` beside
``'d1'`` in query ``q1`` while the other queries share their documents). The count
rows also count the queries several runs hold, with a shared document, where a document
one run alone retrieves is not its own fold (a character other than a-z0-9); where there
are such queries, the runs' documents there are matched once the spaces around them,
case and separators are ignored, named in a fourth warning where one is found
(:meth:`Overlap.warn_partly_spelt`: ``'D3'`` beside ``'d3'`` in query ``q1`` while both
runs retrieve ``'d1'``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_irmetrics.errors import CoverageWarning, IrmWarning
from polars_irmetrics.fusion.methods import RUN
from polars_irmetrics.fusion.norms import FLOOR, FLOORED
from polars_irmetrics.ground.spelling import (
    FOLDS,
    Sides,
    spelling_change,
    spelling_fold,
    spelling_hint,
)
from polars_irmetrics.ground.validate import warn_from_plan

__all__ = ["KIND", "Overlap"]

#: On the count rows: ``True`` (null on the fused rows, which is how they are told apart).
KIND = "__irmf_ov_kind"
_COUNT = "__irmf_ov_count"
_MASK = "__irmf_ov_mask"
_FLOOR_MASK = "__irmf_ov_floor"
#: On the count rows: the runs that retrieve any document of the query (the OR of its
#: documents' masks), and how many queries each count row's documents open.
_QUERY_MASK = "__irmf_ov_qmask"
_QUERIES = "__irmf_ov_queries"
#: On the count rows: how many queries they open that several runs hold and whose
#: documents are each retrieved by one run alone (no document shared there).
_APART = "__irmf_ov_apart"
#: On the count rows: how many queries they open that several runs hold, where some
#: document is shared and some document retrieved by one run alone has a character
#: other than a-z0-9 (:data:`~polars_irmetrics.ground.spelling.FOLDS`): those that
#: :meth:`Overlap.warn_partly_spelt` reads again.
_PARTLY = "__irmf_ov_partly"
#: A document id once the spaces around it, case and separators are ignored.
_FOLD = "__irmf_ov_fold"
_LONE = "__irmf_ov_lone"
#: Runs per mask word: bits 0..61 of an Int64, so that every OR stays positive.
_BITS = 62
#: Pairs of runs named in the warning; the others are counted.
_SHOWN = 3
#: Pairs of runs :meth:`Overlap.warn_spelt_apart` reads at most.
_PAIRS = 6

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
    #: Under ``norm='max'``: the long frame holds :data:`~.norms.FLOORED`, and the
    #: count rows also count each run's documents whose (run, query) top score was
    #: below the floor (:meth:`warn`'s second warning).
    floor: bool = False

    @property
    def masks(self) -> list[str]:
        """The mask words' columns: one per 62 runs."""
        return [f"{_MASK}{w}" for w in range(-(-len(self.names) // _BITS))]

    @property
    def floor_masks(self) -> list[str]:
        """Under :attr:`floor`, the words of the runs whose top score for the query was
        floored (as :attr:`masks`); none otherwise."""
        return [f"{_FLOOR_MASK}{w}" for w in range(len(self.masks))] if self.floor else []

    @property
    def query_masks(self) -> list[str]:
        """The words of the runs that retrieve any document of the query (as
        :attr:`masks`)."""
        return [f"{_QUERY_MASK}{w}" for w in range(len(self.masks))]

    @property
    def columns(self) -> list[str]:
        """Every column the count rows add to the fused frame."""
        return [
            KIND,
            *self.masks,
            *self.floor_masks,
            *self.query_masks,
            _COUNT,
            _QUERIES,
            _APART,
            _PARTLY,
        ]

    def words(self, retrieved: pl.Expr | None = None) -> list[pl.Expr]:
        """Aggregates of a group-by of the long frame by (query, document): the runs
        that retrieve the document, as mask words (bit ``i`` of word ``w``: run ``62 w +
        i``); ``retrieved`` where the frame holds rows of runs that did not retrieve it
        (Borda's and Condorcet's candidates). Under :attr:`floor`, the floored runs'
        words too."""
        words = self._words(self.masks, retrieved)
        if self.floor:
            words += self._words(self.floor_masks, pl.col(FLOORED))
        return words

    @staticmethod
    def _words(names: list[str], given_too: pl.Expr | None) -> list[pl.Expr]:
        run = pl.col(RUN)
        bit = pl.lit(2, pl.Int64).pow(run % _BITS)
        words = []
        for w, name in enumerate(names):
            given = [] if len(names) == 1 else [run // _BITS == w]
            if given_too is not None:
                given.append(given_too)
            # elementwise, then one OR per group: the group-by's fast path
            word = pl.when(*given).then(bit).otherwise(0) if given else bit
            words.append(word.bitwise_or().fill_null(0).alias(name))
        return words

    def tally(self, fused: pl.LazyFrame, *, floor: bool = True) -> pl.LazyFrame:
        """The count rows of ``fused`` (one row per (query, document), with the
        :meth:`words`): the documents of each set of runs (and, under :attr:`floor`,
        of floored runs; ``floor=False`` where ``fused`` has no such words), by the
        set of runs that retrieve any document of the query (:attr:`query_masks`),
        with the queries they open (``_QUERIES``: each query counted on the row of
        its first document)."""
        masks = [*self.masks, *(self.floor_masks if floor else [])]
        q = self.query_id
        of_query = [
            pl.col(m).bitwise_or().over(q).alias(qm)
            for m, qm in zip(self.masks, self.query_masks, strict=True)
        ]
        # a query several runs hold where no document is retrieved by two of them
        shared = (_runs_of(self.masks) >= 2).any().over(q)
        several = _runs_of(self.query_masks) >= 2
        apart = several & ~shared
        first = pl.col(q).is_first_distinct()
        if self.text_ids[1]:
            # a document one run alone retrieves, not its own fold ('D3'): maybe spelt
            # apart from another run's ('d3') in a query whose other documents line up
            odd = pl.col(self.doc_id).cast(pl.String).str.contains(FOLDS)
            lone = ((_runs_of(self.masks) == 1) & odd).any().over(q)
            partly = first & several & shared & lone
        else:
            partly = pl.lit(False)
        return (
            fused.with_columns(*of_query)
            .with_columns(
                first.alias(_QUERIES), (first & apart).alias(_APART), partly.alias(_PARTLY)
            )
            .group_by(*masks, *self.query_masks)
            .agg(
                pl.len().cast(pl.Int64).alias(_COUNT),
                pl.col(_QUERIES).sum().cast(pl.Int64),
                pl.col(_APART).sum().cast(pl.Int64),
                pl.col(_PARTLY).sum().cast(pl.Int64),
            )
            .select(
                pl.lit(True).alias(KIND),
                *masks,
                *self.query_masks,
                _COUNT,
                _QUERIES,
                _APART,
                _PARTLY,
            )
        )

    @property
    def floor_columns(self) -> list[str]:
        """The columns of :meth:`floor_tally`'s count rows."""
        return [KIND, *self.floor_masks, _COUNT]

    def floor_words(self) -> list[pl.Expr]:
        """The floored runs' words alone (:meth:`words`), for a plan that counts no
        overlap (:func:`~polars_irmetrics.optimize_fusion`)."""
        return self._words(self.floor_masks, pl.col(FLOORED))

    def floor_tally(self, fused: pl.LazyFrame) -> pl.LazyFrame:
        """The count rows of :meth:`floor_words` alone."""
        masks = self.floor_masks
        return (
            fused.group_by(masks)
            .agg(pl.len().cast(pl.Int64).alias(_COUNT))
            .select(pl.lit(True).alias(KIND), *masks, _COUNT)
        )

    def read_floored(self, rows: pl.DataFrame) -> None:
        """:meth:`warn_floored` of :meth:`floor_tally`'s count rows (of every part)."""
        self.warn_floored(self.floored_counts(rows))

    def floored_counts(self, rows: pl.DataFrame) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Summed over ``rows`` (count rows): per run, its documents whose (run, query)
        top score was floored."""
        summed = self._bits_by_count(rows, self.floor_masks).sum(axis=0)
        return np.asarray(summed, dtype=np.int64)

    def _bits_by_count(
        self, rows: pl.DataFrame, masks: list[str]
    ) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Summed ``rows`` grouped by ``masks``: one row per mask, a column per run
        (the run's bit times the documents counted)."""
        n = len(self.names)
        summed = rows.group_by(masks).agg(pl.col(_COUNT).sum())
        words = summed.select(masks).to_numpy().astype(np.int64)
        words = words.reshape(summed.height, len(masks))
        shifts = np.arange(_BITS, dtype=np.int64)
        bits = ((words[:, :, None] >> shifts) & 1).reshape(summed.height, len(masks) * _BITS)
        counts = summed.get_column(_COUNT).to_numpy().astype(np.int64)
        return np.asarray(bits[:, :n] * counts[:, None], dtype=np.int64)

    def shared(self, rows: pl.DataFrame, *, queries: bool = False) -> Matrix:
        """Summed over ``rows`` (count rows: a mask and a count): the documents each
        pair of runs shares, a runs x runs matrix (the diagonal: each run's own);
        ``queries``: the queries each pair shares (by :attr:`query_masks`)."""
        n = len(self.names)
        masks, count = (self.query_masks, _QUERIES) if queries else (self.masks, _COUNT)
        summed = rows.group_by(masks).agg(pl.col(count).sum())
        words = summed.select(masks).to_numpy().astype(np.int64)
        words = words.reshape(summed.height, len(masks))
        shifts = np.arange(_BITS, dtype=np.int64)
        bits = ((words[:, :, None] >> shifts) & 1).reshape(summed.height, len(masks) * _BITS)
        bits = bits[:, :n]
        counts = summed.get_column(count).to_numpy().astype(np.int64)
        return np.asarray(bits.T @ (bits * counts[:, None]), dtype=np.int64)

    def warn(self, rows: pl.DataFrame) -> None:
        """The warning of the count rows ``rows`` (of every part): given once, naming the
        pairs of runs that share no document (module doc); nothing where every pair
        shares one. Under :attr:`floor`, first the runs whose scores were divided by
        the floor (:meth:`warn_floored`)."""
        if self.floor:
            self.read_floored(rows)
        docs = self.shared(rows)
        queries = self.shared(rows, queries=True)
        n = len(self.names)
        apart = [(i, j) for i, j in itertools.combinations(range(n), 2) if docs[i, j] == 0]
        if not apart:
            self.warn_missing(queries, int(rows.get_column(_QUERIES).sum()))
            self.warn_spelt_apart(rows, queries)
            self.warn_partly_spelt(rows)
            return
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
        self.warn_partly_spelt(rows)

    def read_queries(self, rows: pl.DataFrame) -> None:
        """The query sets' warning alone (:meth:`warn_missing`) of the count rows ``rows``
        (:meth:`tally`'s, of every part; under :attr:`floor`, first the floored runs'),
        for :func:`~polars_irmetrics.optimize_fusion`, whose runs ranx refuses alike."""
        if self.floor:
            self.read_floored(rows)
        queries = self.shared(rows, queries=True)
        self.warn_missing(queries, int(rows.get_column(_QUERIES).sum()))
        self.warn_spelt_apart(rows, queries)
        self.warn_partly_spelt(rows)

    def warn_spelt_apart(self, rows: pl.DataFrame, queries: Matrix) -> None:
        """Where every pair of runs shares a document but some queries that several
        runs hold share none (``_APART``), one warning where a pair's documents match
        within a query once their spelling is ignored (``'D1'`` in one run, ``'d1'`` in
        the other): each is fused as two documents there. The runs are read again only
        where such queries are (text document ids), a pair at a time (the first
        :data:`_PAIRS` pairs that share a query), until one matches."""
        apart = int(rows.get_column(_APART).sum())
        if not apart or not self.text_ids[1]:
            return
        n = len(self.names)
        pairs = [(i, j) for i, j in itertools.combinations(range(n), 2) if queries[i, j]]
        for i, j in pairs[:_PAIRS]:
            hint = self._hint(j, i, shared_queries=True)
            if hint is None:
                continue
            shares = "shares" if apart == 1 else "share"
            warn_from_plan(
                f"{_count(apart, 'query')} held by several runs {shares} no document "
                f"between them, and {hint} Each such document is fused as two, one "
                "scored by each run. If the runs' documents there are meant to differ, "
                "the fused run is as documented: silence this with "
                "warnings.filterwarnings('ignore', category=irm.CoverageWarning).",
                CoverageWarning,
            )
            return

    def warn_partly_spelt(self, rows: pl.DataFrame) -> None:
        """Where some queries that several runs hold share a document and have one,
        retrieved by one run alone, with a character other than a-z0-9 (``_PARTLY``),
        one warning where such a document matches another run's document of the query
        once the spaces around them, case and separators are ignored
        (:func:`~polars_irmetrics.ground.spelling.spelling_fold`; a prefix and leading
        zeros kept: ``'d01'`` and ``'d1'`` may be two documents): ``'D3'`` beside
        ``'d3'`` in query ``q1`` while both runs retrieve ``'d1'``, fused as two
        documents. The runs are read again only where the count rows hold such queries,
        for the queries with such a document."""
        partly = int(rows.get_column(_PARTLY).sum()) if _PARTLY in rows.columns else 0
        if not partly or not self.text_ids[1]:
            return
        q, d = self.query_id, self.doc_id
        text = pl.col(d).cast(pl.String)
        runs = self.runs.select(RUN, q, text).unique()
        retrieved_by = pl.len().over(q, d)
        # each pair once: one document retrieved by one run alone and not its own fold,
        # another run's document of the query (not retrieved by the first run) with the
        # same fold; the other document is taken as found only where it is not also such
        # a document spelt before it (two odd spellings: 'D-3' beside 'D_3')
        within = (
            runs.join(runs.filter(text.str.contains(FOLDS)).select(q).unique(), on=q)
            .with_columns(
                spelling_fold(text).alias(_FOLD),
                ((retrieved_by == 1) & text.str.contains(FOLDS)).alias(_LONE),
            )
            .cache()
        )
        right, run_right = f"{d}_right", f"{RUN}_right"
        pairs = (
            within.filter(pl.col(_LONE))
            .join(within, on=[q, _FOLD])
            .filter(
                (pl.col(RUN) != pl.col(run_right))
                & (pl.col(d) != pl.col(right))
                & ~(pl.col(f"{_LONE}_right") & (pl.col(right) < pl.col(d)))
            )
            .join(
                within.select(q, RUN, pl.col(d).alias(right)),
                on=[q, RUN, right],
                how="anti",
            )
        )
        sample, count = pl.collect_all(
            [
                pairs.sort(q, RUN, d, run_right, right)
                .head(1)
                .select(q, RUN, d, run_right, right),
                pairs.select(pl.len().alias("pairs"), pl.col(q).n_unique().alias("queries")),
            ]
        )
        if not sample.height:
            return
        query, left, ran_id, other, held_id = sample.row(0)
        what, fix = spelling_change(ran_id, held_id)
        n, k = count.row(0)
        warn_from_plan(
            f"{n} pair(s) of documents of two runs in {_count(k, 'query')} held by several "
            "runs, beside documents the runs share, match only when "
            f"{what} (query {query!r}: run {self.names[left]!r} {ran_id!r}, run "
            f"{self.names[other]!r} {held_id!r}): ids are compared exactly, so each such "
            "pair is fused as two different documents, one scored by each run. Give the "
            "runs the same spelling, e.g. "
            f"pl.col({d!r}){fix} on each; if those documents are meant to differ, the "
            "fused run is as documented: silence this with "
            "warnings.filterwarnings('ignore', category=irm.CoverageWarning).",
            CoverageWarning,
        )

    def warn_missing(self, queries: Matrix, total: int) -> None:
        """One warning where no run holds every one of the fused run's ``total`` queries
        (``queries``: the queries each pair of runs shares), naming each run's first
        missing queries (the runs read again) and a hint where ids match once their
        spelling is ignored; nothing where one run holds them all (the others retrieved
        nothing for some: the sample's dense run has no row for ``q017``). ``ranx.fuse``
        refuses runs whose queries differ; the fusion scores each query from the runs
        that have it."""
        held_by = np.diagonal(queries)
        if (held_by == total).any():
            return
        q = self.query_id
        lacking = np.flatnonzero(held_by < total).tolist()
        held = self.runs.select(RUN, q).unique()
        wanted = pl.LazyFrame({RUN: lacking[:_SHOWN]}, schema={RUN: pl.Int32})
        missing = (
            held.select(q)
            .unique()
            .join(wanted, how="cross")
            .join(held, on=[RUN, q], how="anti", nulls_equal=True)
            .sort(RUN, q)
            .group_by(RUN, maintain_order=True)
            .agg(pl.col(q).head(_SHOWN))
            .collect()
        )
        first = dict(missing.select(RUN, q).iter_rows())
        named = []
        for i in lacking[:_SHOWN]:
            absent = total - int(held_by[i])
            shown = ", ".join(repr(v) for v in first.get(i, []))
            more = ", ..." if absent > _SHOWN else ""
            named.append(f"run {self.names[i]!r} has no row for {absent} ({shown}{more})")
        if len(lacking) > _SHOWN:
            named.append(f"and {len(lacking) - _SHOWN} more runs miss some")
        hint = self._hint(lacking[0], lacking[1], shared_queries=False)
        warn_from_plan(
            f"no run holds every one of the fused run's {_count(total, 'query')}: "
            f"{'; '.join(named)}. Each such query is fused from the runs that have it "
            "alone, as if the others retrieved nothing for it (ranx.fuse refuses runs "
            "whose queries differ). "
            + (f"Ids that do not line up may be the cause: {hint} " if hint else "")
            + "Check that the runs are of the same topics, with the same query id "
            "spelling; if those runs did retrieve nothing for those queries, the fused run "
            "is as documented: silence this with warnings.filterwarnings('ignore', "
            "category=irm.CoverageWarning).",
            CoverageWarning,
        )

    def warn_floored(self, counts: np.ndarray[Any, np.dtype[np.int64]]) -> None:
        """One warning naming the runs with floored documents (``counts``, per run);
        nothing where there are none."""
        named = [
            f"run {name!r} ({_count(n, 'document')})"
            for name, n in zip(self.names, counts.tolist(), strict=True)
            if n
        ]
        if not named:
            return
        warn_from_plan(
            f"norm='max' divides each run's scores for a query by its top score, floored "
            f"at {FLOOR:g} as ranx does; {', '.join(named)} scored queries whose top "
            f"score is below {FLOOR:g}, so those scores were divided by {FLOOR:g}: a top "
            "score of 0 or below (distances, log-probabilities) makes them of order "
            "-1e9, which swamps every other run in the fusion. Use norm='min-max' (or "
            "'zmuv') for scores that can be 0 or negative.",
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


def _runs_of(words: list[str]) -> pl.Expr:
    """How many runs a set of mask words names (the bits set in them)."""
    return pl.sum_horizontal([pl.col(w).bitwise_count_ones() for w in words])


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
