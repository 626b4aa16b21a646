"""The coverage warning of the offline plan, in parts that add up.

One machine warns over its whole per-query frame at once
(:func:`~polars_irmetrics.ground.validate.warn_on_coverage`, the hints read the run and
the judgments again on the warning's path only). An engine (Spark, Dask) evaluates
whole queries per part: each part gives a :class:`Coverage`, its tally per system and,
where its tally may take part in a warning
(:func:`~polars_irmetrics.ground.validate.suspect`), the data of the hints computed on
its own rows (the pairs that match only once their spelling is ignored,
:func:`~polars_irmetrics.ground.spelling.spelling_matches`, counted, with the first;
the query ids of the run the judgments lack, and the judged ones; the run's documents
that match judged ones of the same query once their spelling is ignored, in the judged
queries where it retrieves no judged document: :func:`docs_hint`; and those that no
judgment names, in the judged queries where it retrieves some judged documents but not
all: :func:`partly_hint`). The engine adds the
parts up on the driver (:meth:`Coverage.merged`) and warns with the same text
(:meth:`Coverage.warn`): the tallies are exact; a hint counts what the suspect parts hold
(every part where a run retrieves no judged document); the document hints of such queries
are exact (each part holds whole queries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.spelling import (
    FOLDS,
    spelling_change,
    spelling_digits,
    spelling_fold,
    spelling_matches,
)
from polars_irmetrics.ground.validate import (
    FOUND_DOCS,
    INTERNAL,
    JUDGED_DOCS,
    LISTED,
    ODD_DOCS,
    TALLY,
    DocsHint,
    Hint,
    Policy,
    QueryHint,
    absent_groups_row,
    blind_queries,
    common_id_dtype,
    coverage_counts,
    is_text,
    merge_counts,
    partly_queries,
    suspect,
    warn_on_absent_groups,
    warn_on_counts,
)
from polars_irmetrics.offline.setup import Setup

__all__ = [
    "SPELT",
    "Coverage",
    "CoverageSink",
    "docs_hint",
    "id_hints",
    "judged_coverage",
    "judged_docs",
    "judged_hints",
    "judged_partly",
    "odd_docs",
    "part_coverage",
    "partly_hint",
    "spelt_hint",
    "spelt_partly",
    "spelt_queries",
    "spelt_tally",
    "with_groups",
]


@dataclass(frozen=True)
class Coverage:
    """One part's coverage (module doc): ``counts`` the tally
    (:func:`~polars_irmetrics.ground.validate.coverage_counts`); ``case`` the first pair
    of the run that matches a judgment only once its spelling is ignored (query, run document,
    judged document) and ``case_count`` how many do; ``ran`` the run's query ids (text)
    the judgments lack (in every part where the queries are text: the judged query one
    of them matches may be in a suspect part of its own) and ``judged`` the judged query
    ids (text); ``blind`` the document hint's data of the judged queries where a run
    retrieves no judged document (:func:`docs_hint`: per system, the queries and pairs
    that match once their spelling is ignored, and the first). A hint's data is ``None``
    where it was not computed (it does not apply, or the part is not suspect, or holds
    no such query).
    """

    counts: pl.DataFrame
    unretrieved: Policy
    case: pl.DataFrame | None = None
    case_count: int = 0
    ran: pl.DataFrame | None = None
    judged: pl.DataFrame | None = None
    blind: pl.DataFrame | None = None
    doc_id: str = field(default="doc_id")
    query_id: str = field(default="query_id")
    #: What the metrics score where a run retrieves no judged document, where not 0
    #: (:func:`~polars_irmetrics.ground.validate.warn_on_counts`' ``scores``).
    scores: str | None = None
    #: What they score on a judged query where it retrieves none, where not 0
    #: (:func:`~polars_irmetrics.ground.validate.warn_on_counts`' ``blind_scores``).
    blind_scores: str | None = None
    #: Where the judgments carry ``by=``/``systems=`` keys (judgments per group): the
    #: keys, the distinct groups of the part's run and of its judgments, and what the
    #: warning of a group one side lacks reads
    #: (:func:`~polars_irmetrics.ground.validate.warn_on_absent_groups`).
    group_keys: tuple[str, ...] = ()
    ran_groups: pl.DataFrame | None = None
    judged_groups: pl.DataFrame | None = None
    unjudged: Policy = "drop"
    #: What a judged query of a group the run lacks scores, where the route says
    #: otherwise than an empty ranking (the exposure measures').
    group_fate: str | None = None
    #: Where each system is scored on every judged query whether its run lists it or
    #: not (the exposure measures' tally by system, :func:`judged_coverage`): the
    #: part's judged queries and documents (one row, ``queries`` and ``docs``), which
    #: :meth:`merged` adds up over every part for each system (a system absent from a
    #: part has no row of that part's tally).
    totals: pl.DataFrame | None = None
    #: The document hint's data of the judged queries where a run retrieves some judged
    #: documents but not all (:func:`partly_hint`: per system, the queries and the
    #: unjudged documents there that match a judged one once their spelling is ignored,
    #: and the first); ``None`` where none does.
    partly: pl.DataFrame | None = None

    @staticmethod
    def merged(parts: Sequence[Coverage], systems: Sequence[str]) -> Coverage | None:
        """The parts added up (``None`` for no part): tallies per system, hint counts
        summed, the first pair kept, the query ids gathered."""
        if not parts:
            return None
        first = parts[0]
        cases = [p.case for p in parts if p.case is not None]
        rans = [p.ran for p in parts if p.ran is not None]
        judged = [p.judged for p in parts if p.judged is not None]
        blind = [p.blind for p in parts if p.blind is not None]
        partly = [p.partly for p in parts if p.partly is not None]
        pairs = [first.query_id, first.doc_id]
        counts = merge_counts([p.counts for p in parts], systems=systems)
        totals = [p.totals for p in parts if p.totals is not None]
        return Coverage(
            counts=_with_totals(counts, totals, systems) if totals else counts,
            unretrieved=first.unretrieved,
            case=pl.concat(cases, how="vertical_relaxed").sort(pairs).head(1) if cases else None,
            case_count=sum(p.case_count for p in parts),
            ran=pl.concat(rans).unique() if rans else None,
            judged=pl.concat(judged).unique() if judged else None,
            blind=_blind_merged(blind, systems, first.query_id, first.doc_id) if blind else None,
            doc_id=first.doc_id,
            query_id=first.query_id,
            scores=first.scores,
            blind_scores=first.blind_scores,
            group_keys=next((p.group_keys for p in parts if p.group_keys), ()),
            ran_groups=_gathered([p.ran_groups for p in parts]),
            judged_groups=_gathered([p.judged_groups for p in parts]),
            unjudged=next((p.unjudged for p in parts if p.group_keys), first.unjudged),
            group_fate=next((p.group_fate for p in parts if p.group_keys), None),
            totals=pl.concat(totals).sum() if totals else None,
            partly=_blind_merged(partly, systems, first.query_id, first.doc_id)
            if partly
            else None,
        )

    def hints(self) -> tuple[Hint, ...]:
        """The warning's hints from the data the parts gave."""
        hints: list[Hint] = []
        if self.case is not None:
            case, count, doc_id = self.case, self.case_count, self.doc_id
            hints.append(lambda: _case_text(case, count, doc_id))
        if self.ran is not None and self.judged is not None:
            ran, judged, query_id = self.ran.lazy(), self.judged.lazy(), self.query_id
            hints.append(QueryHint(lambda: _query_text(ran, judged, query_id)))
        return tuple(hints)

    def warn(self, systems: Sequence[str], emit: Callable[[str], None] | None = None) -> None:
        """The warnings one machine gives on the same queries
        (:func:`~polars_irmetrics.ground.validate.warn_on_counts`; ``emit`` as there)."""
        blind, query_id, doc_id = self.blind, self.query_id, self.doc_id
        partly = self.partly
        warn_on_counts(
            self.counts,
            systems=systems,
            unretrieved=self.unretrieved,
            hints=self.hints(),
            emit=emit,
            scores=self.scores,
            docs=None if blind is None else lambda: _blind_texts(blind, systems, query_id, doc_id),
            blind_scores=self.blind_scores,
            partly=None
            if partly is None
            else lambda: _partly_texts(partly, systems, query_id, doc_id),
        )
        if self.group_keys and self.ran_groups is not None and self.judged_groups is not None:
            keys = list(self.group_keys)
            row = absent_groups_row(self.ran_groups.lazy(), self.judged_groups.lazy(), keys)
            warn_on_absent_groups(
                row.collect().row(0, named=True),
                keys,
                system_keys=systems,
                unjudged=self.unjudged,
                unretrieved=self.unretrieved,
                judged_fate=self.group_fate,
                emit=emit,
            )


def _with_totals(
    counts: pl.DataFrame, totals: Sequence[pl.DataFrame], systems: Sequence[str]
) -> pl.DataFrame:
    """``counts`` (the parts' tallies by system, added up) with each system's judged
    queries and documents those of every part (:attr:`Coverage.totals`), as one
    machine counts them; the systems with a judged query kept."""
    whole = pl.concat(totals, how="vertical_relaxed").select(
        pl.col("queries", "docs").sum().cast(pl.Int64)
    )
    tally = counts.drop("queries", "docs").join(whole, how="cross")
    return tally.select(*systems, *TALLY).filter(pl.col("queries") > 0)


def _gathered(frames: Sequence[pl.DataFrame | None]) -> pl.DataFrame | None:
    """The distinct rows of the parts' ``frames`` (``None`` where no part gave one)."""
    given = [f for f in frames if f is not None]
    return pl.concat(given, how="vertical_relaxed").unique() if given else None


#: Where a part of an engine's evaluation hands its :class:`Coverage` (the ``warn=`` of
#: :func:`polars_irmetrics.door.evaluate.evaluate_plan`).
CoverageSink = Callable[[Coverage], None]

#: The run's rows the metrics read, from the rows of some of its whole queries (with
#: ``depth=``: those ranked within it; the plan gives it): what the document hints
#: read of the run, so that a document below the depth is not named. ``None``: every
#: row.
Cut = Callable[[pl.LazyFrame], pl.LazyFrame] | None


def _cut(run: pl.LazyFrame, cut: Cut) -> pl.LazyFrame:
    return run if cut is None else cut(run)


def part_coverage(
    frame: pl.DataFrame,
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    setup: Setup,
    options: EvalOptions,
    cut: Cut = None,
) -> Coverage:
    """The :class:`Coverage` of one part: ``frame`` its checked per-query frame, ``run``
    and ``qrels`` its rows (ids cast as the plan casts them), read again for the hints'
    data only where the tally is suspect (``cut``: :data:`Cut`)."""
    counts = coverage_counts(frame, systems=options.system_keys, listed=LISTED)
    query_id, doc_id = setup.check.query_id, setup.doc_id
    if qrels is None:
        return Coverage(counts, setup.check.unretrieved, doc_id=doc_id, query_id=query_id)
    texts = (setup.doc_is_string, _query_hint_applies(run, setup))
    unretrieved = setup.check.unretrieved
    part = _part(counts, _cut(run, cut), qrels, query_id, doc_id, unretrieved, texts)
    names, systems = _blind_keys(setup), options.system_keys
    blind = blind_queries(frame, LISTED) if setup.doc_is_string else None
    if blind is not None and blind.height:  # whole queries per part: exact
        part = replace(part, blind=_blind_cases(run, qrels, blind, names, systems, cut))
    partly = partly_queries(frame) if setup.doc_is_string else None
    if partly is not None and partly.height:  # whole queries per part: exact
        part = replace(part, partly=_partly_cases(run, qrels, partly, names, systems, cut))
    return with_groups(part, run, qrels, setup.check.judged_keys, setup.check.unjudged)


def with_groups(
    part: Coverage,
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    keys: Sequence[str],
    unjudged: Policy,
    fate: str | None = None,
) -> Coverage:
    """``part`` with the part's distinct groups of each side, where the judgments carry
    ``by=``/``systems=`` ``keys`` (judgments per group), which the engine gathers to warn
    of a group one side lacks as one machine does
    (:func:`~polars_irmetrics.ground.validate.warn_on_absent_groups`; ``fate``: what a
    judged query of a group the run lacks scores, where not an empty ranking's values)."""
    if not keys:
        return part
    keys = list(keys)
    ran, judged = pl.collect_all([run.select(keys).unique(), qrels.select(keys).unique()])
    return replace(
        part,
        group_keys=tuple(keys),
        ran_groups=ran,
        judged_groups=judged,
        unjudged=unjudged,
        group_fate=fate,
    )


def id_hints(
    run: pl.LazyFrame, qrels: pl.LazyFrame, setup: Setup, cut: Cut = None
) -> tuple[Hint, ...]:
    """The coverage warning's hints: documents and queries of the run that match the
    judgments' only once their spelling is ignored (case, the spaces around them,
    separators, a prefix, leading zeros:
    :func:`~polars_irmetrics.ground.spelling.spelling_matches`), with the fix. Each
    reads the run and the judgments again (the run's rows ``cut`` gives:
    :data:`Cut`), on the warning's path only."""
    texts = (setup.doc_is_string, _query_hint_applies(run, setup))
    return _hints(_cut(run, cut), qrels, setup.check.query_id, setup.doc_id, texts)


def docs_hint(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    setup: Setup,
    systems: Sequence[str],
    cut: Cut = None,
) -> Callable[[pl.DataFrame], Mapping[tuple[Any, ...], tuple[int, str]]] | None:
    """The coverage warning's hint of the judged queries where a run retrieves no judged
    document (``None`` where the documents are not text): given those rows of the
    per-query frame (:func:`~polars_irmetrics.ground.validate.blind_queries`), the
    run's documents there that match a judged document of the same query once their
    spelling is ignored, per system (each value of the ``systems`` keys): how many
    queries, and a sentence naming the first
    (:data:`~polars_irmetrics.ground.validate.DocsHint`). Reads the run again (its
    query ids, and the documents of those queries, those ``cut`` keeps: :data:`Cut`),
    only where there are such queries (the warning's path)."""
    if not setup.doc_is_string:
        return None
    query_id, doc_id = setup.check.query_id, setup.doc_id

    def read(blind: pl.DataFrame) -> Mapping[tuple[Any, ...], tuple[int, str]]:
        cases = _blind_cases(run, qrels, blind, _blind_keys(setup), systems, cut)
        return _blind_texts(cases, systems, query_id, doc_id)

    return read


def odd_docs(run: pl.LazyFrame, keys: Sequence[str], doc_id: str) -> pl.LazyFrame:
    """Per query of ``run`` (its ``keys``) with one, how many of its rows hold a
    document id (text) that is not its own fold
    (:func:`~polars_irmetrics.ground.spelling.spelling_fold`), in column
    :data:`~polars_irmetrics.ground.validate.ODD_DOCS`: a check frame of the plan (one
    regex test per row, read beside its other checks), which :func:`partly_hint` reads
    to read the run again only for those queries (none where the ids are lowercase
    letters and digits).

    >>> run = pl.LazyFrame({"q": ["a", "a", "b"], "d": ["D1", "d2", "d3"]})
    >>> odd_docs(run, ["q"], "d").collect().rows()
    [('a', 1)]
    """
    odd = pl.col(doc_id).cast(pl.String).str.contains(FOLDS).alias(ODD_DOCS)
    counted = pl.len().cast(pl.Int64).alias(ODD_DOCS)
    # a filter on a column of its own: not pushed into ``run``'s plan (a fused run's
    # overlap tally, counted there, would read the filtered rows alone)
    marked = run.select(*keys, odd).filter(pl.col(ODD_DOCS))
    return marked.group_by(list(keys)).agg(counted)


def partly_hint(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    setup: Setup,
    systems: Sequence[str],
    cut: Cut = None,
) -> Callable[[pl.DataFrame], Mapping[tuple[Any, ...], tuple[int, str]]] | None:
    """The coverage warning's hint of the judged queries where a run retrieves some
    judged documents but not all (``None`` where the documents are not text): given
    those rows of the per-query frame
    (:func:`~polars_irmetrics.ground.validate.partly_queries`), the run's documents
    there that no judgment names and that match a judged document of the same query
    once the spaces around them, case and separators are ignored (``'D3'`` beside a
    judged ``'d3'``; :func:`_partly_cases`), per system (each value of the ``systems``
    keys): how many queries, and a sentence naming the first
    (:data:`~polars_irmetrics.ground.validate.DocsHint`). Reads the run's documents
    again, filtered to those that are not their own fold (none where the ids are
    lowercase letters and digits) before anything else, those ``cut`` keeps of their
    queries (:data:`Cut`: a document below ``depth=`` is not named)."""
    if not setup.doc_is_string:
        return None
    query_id, doc_id = setup.check.query_id, setup.doc_id

    def read(queries: pl.DataFrame) -> Mapping[tuple[Any, ...], tuple[int, str]]:
        if not queries.height:
            return {}
        cases = _partly_cases(run, qrels, queries, _blind_keys(setup), systems, cut)
        return {} if cases is None else _partly_texts(cases, systems, query_id, doc_id)

    return read


def judged_hints(
    run: pl.LazyFrame, qrels: pl.LazyFrame, query_id: str, doc_id: str
) -> tuple[Hint, ...]:
    """:func:`id_hints` for a route that reads the judgments beside its own rows (the
    exposure measures: their warning is
    :func:`~polars_irmetrics.ground.validate.warn_on_judged`'s): each id of both tables
    cast to one dtype first, as the tally casts them; the case hint where the documents
    are text, the prefix hint where the queries are."""
    run, qrels, texts = _common_ids(run, qrels, query_id, doc_id)
    return _hints(run, qrels, query_id, doc_id, texts)


def judged_docs(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    systems: Sequence[str] = (),
) -> DocsHint | None:
    """:func:`docs_hint` for such a route (:func:`judged_hints`), which counts nothing
    per query itself: the judged queries where a system (each value of the ``systems``
    keys) lists documents and retrieves no judged one are found here, then the run's
    documents there that match a judged one of the same query once their spelling is
    ignored. Read by :func:`~polars_irmetrics.ground.validate.warn_on_counts` only
    where a system retrieves no judged document in some judged query (the warning's
    path: a run without such a query reads nothing more); ``None`` where the documents
    are not text."""
    return _docs_reader(run, qrels, query_id, doc_id, systems, _judged_blind, _blind_texts)


def judged_partly(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    systems: Sequence[str] = (),
) -> DocsHint | None:
    """:func:`partly_hint` for such a route (:func:`judged_hints`), which counts nothing
    per query itself: the judged queries where a system (each value of the ``systems``
    keys) retrieves some judged documents but not all, its documents there that no
    judgment of the query names and that match a judged one once the spaces around them,
    case and separators are ignored (``'D3'`` beside a judged ``'d3'``: read as unjudged).
    Read by :func:`~polars_irmetrics.ground.validate.warn_on_counts` wherever a system
    retrieves a judged document; reads first the run's and the judgments' ids that are
    not their own fold (a regex test of each id: none where the ids are lowercase letters
    and digits, and then nothing more), and only those queries after. ``None`` where the
    documents are not text."""
    return _docs_reader(run, qrels, query_id, doc_id, systems, _judged_partly, _partly_texts)


#: :func:`_judged_blind` or :func:`_judged_partly`: the cases of a hint, ``None`` for none
_CasesOf = Callable[[pl.LazyFrame, pl.LazyFrame, str, str, Sequence[str]], pl.DataFrame | None]
#: :func:`_blind_texts` or :func:`_partly_texts`: the hint's sentences from its cases
_TextsOf = Callable[
    [pl.DataFrame, Sequence[str], str, str], dict[tuple[Any, ...], tuple[int, str]]
]


def _docs_reader(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    systems: Sequence[str],
    cases_of: _CasesOf,
    texts_of: _TextsOf,
) -> DocsHint | None:
    """The document hint of :func:`judged_docs` and :func:`judged_partly`: both tables'
    ids cast to one dtype (:func:`_common_ids`), then, when the warning reads it, the
    cases (``cases_of``) written as sentences (``texts_of``); ``None`` where the
    documents are not text."""
    run, qrels, texts = _common_ids(run, qrels, query_id, doc_id, keep=systems)
    if not texts[0]:
        return None

    def read() -> Mapping[tuple[Any, ...], tuple[int, str]]:
        cases = cases_of(run, qrels, query_id, doc_id, systems)
        return {} if cases is None else texts_of(cases, systems, query_id, doc_id)

    return read


#: The columns of :func:`spelt_queries`, after the query id: how many (query, document)
#: pairs of the run match a judged one of the query once their spelling is ignored, and
#: the first (the run's document, the judged one).
SPELT = (f"{INTERNAL}spelt_query_pairs", f"{INTERNAL}spelt_doc", f"{INTERNAL}spelt_judged")
#: The first pair of :func:`spelt_tally`: its query, run document and judged document.
_FIRST = (
    f"{INTERNAL}spelt_first_query",
    f"{INTERNAL}spelt_first_doc",
    f"{INTERNAL}spelt_first_judged",
)
#: The columns of :func:`spelt_tally` with ``partly=True`` (:func:`spelt_partly`'
#: rows): its queries, its pairs and its first pair.
_PARTLY_TALLY = tuple(
    f"{INTERNAL}partly_{c.removeprefix(f'{INTERNAL}spelt_')}"
    for c in (f"{INTERNAL}spelt_queries", f"{INTERNAL}spelt_pairs", *_FIRST)
)


def spelt_queries(
    run: pl.LazyFrame, qrels: pl.LazyFrame, queries: pl.DataFrame, query_id: str, doc_id: str
) -> pl.DataFrame:
    """The document hint's data (:func:`judged_docs`) of the judged ``queries`` (a
    frame of their ids) where a run retrieves no judged document, one row per query
    whose documents match judged ones once their spelling is ignored: the query id and
    the :data:`SPELT` columns. ``run`` and ``qrels``: ids of one dtype, the rows of
    whole queries (an engine's part, whose finish has no run: :func:`spelt_tally`
    adds the parts' rows up, :func:`spelt_hint` gives the hint of their sum). Reads the
    run's rows of those queries only."""
    alias = f"{INTERNAL}spelt_query"  # each query a "system" of _blind_cases: one row each
    blind = queries.select(pl.col(query_id).alias(alias), query_id)
    keys = [alias, query_id]
    ran = run.select(pl.col(query_id).alias(alias), query_id, doc_id)
    cases = _blind_cases(
        ran, qrels.select(query_id, doc_id), blind, (keys, [query_id], query_id, doc_id), [alias]
    )
    pairs, ran_doc, judged_doc = SPELT
    return cases.select(
        query_id,
        pl.col(_PAIRS).cast(pl.Int64).alias(pairs),
        pl.col(doc_id).alias(ran_doc),
        pl.col(f"{doc_id}_right").alias(judged_doc),
    )


def spelt_partly(
    run: pl.LazyFrame, qrels: pl.LazyFrame, queries: pl.DataFrame, query_id: str, doc_id: str
) -> pl.DataFrame:
    """:func:`spelt_queries` of the judged ``queries`` where a run retrieves some judged
    documents but not all: one row per query where a document of the run that no
    judgment of the query names matches a judged one once the spaces around it, case and
    separators are ignored (:func:`_partly_cases`, :func:`judged_partly`'s data), the
    query id and the :data:`SPELT` columns (:func:`spelt_tally` with ``partly=True``
    adds an engine's parts' rows up). Reads the run's rows of those queries whose
    documents are not their own fold only (none where the ids are lowercase letters and
    digits), and the judgments'."""
    alias = f"{INTERNAL}spelt_query"  # each query a "system" of _partly_cases: one row each
    partly = queries.select(pl.col(query_id).alias(alias), query_id)
    keys = [alias, query_id]
    ran = run.select(pl.col(query_id).alias(alias), query_id, doc_id)
    held = qrels.select(query_id, doc_id)
    cases = _partly_cases(ran, held, partly, (keys, [query_id], query_id, doc_id), [alias])
    pairs, ran_doc, judged_doc = SPELT
    if cases is None:  # the documents as _partly_cases gives them: text
        kinds = (pl.Int64(), pl.String(), pl.String())
        spelt = dict(zip(SPELT, kinds, strict=True))
        return pl.DataFrame(schema={query_id: queries.schema[query_id], **spelt})
    return cases.select(
        query_id,
        pl.col(_PAIRS).cast(pl.Int64).alias(pairs),
        pl.col(doc_id).alias(ran_doc),
        pl.col(f"{doc_id}_right").alias(judged_doc),
    )


def spelt_tally(query_id: str, *, partly: bool = False) -> list[pl.Expr]:
    """The sums of :func:`spelt_queries`' rows, where each judged query has one row (the
    :data:`SPELT` columns null where it has none): the queries, the pairs and the first
    pair (by query, run document, judged document), in :func:`_blind_cases`' columns
    (:func:`spelt_hint` reads them). ``partly``: those of :func:`spelt_partly`'s rows
    instead (the queries where the run retrieves a judged document, column
    :data:`~polars_irmetrics.ground.validate.FOUND_DOCS` above 0; the others' where not),
    in columns of their own (:func:`spelt_hint` with ``partly=True`` reads them)."""
    pairs, ran_doc, judged_doc = SPELT
    found = pl.col(FOUND_DOCS) > 0
    spelt = pl.col(pairs).is_not_null() & (found if partly else ~found)
    order = [pl.col(c).filter(spelt) for c in (query_id, ran_doc, judged_doc)]
    names = _PARTLY_TALLY if partly else (_QUERIES, _PAIRS, *_FIRST)
    return [
        spelt.sum().cast(pl.Int64).alias(names[0]),
        pl.col(pairs).filter(spelt).sum().cast(pl.Int64).alias(names[1]),
        *(
            pl.col(c).filter(spelt).sort_by(order).first().alias(first)
            for c, first in zip((query_id, ran_doc, judged_doc), names[2:], strict=True)
        ),
    ]


def spelt_hint(
    row: Mapping[str, Any], query_id: str, doc_id: str, *, partly: bool = False
) -> DocsHint | None:
    """The document hint (:data:`~polars_irmetrics.ground.validate.DocsHint`) of the
    sums :func:`spelt_tally` gives (the columns of ``row``); ``None`` where no query
    holds such documents. ``partly``: the hint of the queries where the run retrieves
    some judged documents but not all (:func:`judged_partly`'s words), from the sums
    :func:`spelt_tally` with ``partly=True`` gives."""
    queries, pairs, first_query, first_doc, first_judged = (
        _PARTLY_TALLY if partly else (_QUERIES, _PAIRS, *_FIRST)
    )
    if not row[queries]:
        return None
    cases = pl.DataFrame(
        {
            _QUERIES: [row[queries]],
            _PAIRS: [row[pairs]],
            query_id: [row[first_query]],
            doc_id: [row[first_doc]],
            f"{doc_id}_right": [row[first_judged]],
        }
    )
    said = _partly_texts if partly else _blind_texts
    texts = said(cases, (), query_id, doc_id)
    return lambda: texts


def judged_coverage(
    counts: pl.DataFrame,
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    unretrieved: Policy,
    scores: str | None = None,
    blind_scores: str | None = None,
    *,
    systems: Sequence[str] = (),
    totals: pl.DataFrame | None = None,
) -> Coverage:
    """The :class:`Coverage` of one engine part of such a route (:func:`judged_hints`):
    ``counts`` its tally, the hints' data computed on its rows where the tally is
    suspect, as :func:`part_coverage` computes them for the ranking metrics, and the
    document hint's (:func:`judged_docs`; each part holds whole queries) where a system
    retrieves a judged document in fewer of the part's judged queries than it has (in
    none of them too: it may retrieve one in another part); ``scores`` and
    ``blind_scores``: what its measures score on a run that retrieves no judged
    document, and on such a query, where not 0. ``systems``: ``counts`` holds one row
    per system of the part (each value of those keys of ``run``), and ``totals`` the
    part's judged queries and documents (:attr:`Coverage.totals`)."""
    ran, qrels, texts = _common_ids(run, qrels, query_id, doc_id, keep=systems)
    run = ran.drop(systems) if systems else ran
    part = _part(counts, run, qrels, query_id, doc_id, unretrieved, texts)
    part = replace(part, scores=scores, blind_scores=blind_scores, totals=totals)
    if not texts[0]:
        return part
    # the judged queries where a system retrieves some judged documents but not all
    # (each part holds whole queries: exact), read where an id is not its own fold
    part = replace(part, partly=_judged_partly(ran, qrels, query_id, doc_id, systems))
    blind = pl.col("found_queries") < pl.col("queries")
    if not counts.select(blind.any()).item():
        return part
    return replace(part, blind=_judged_blind(ran, qrels, query_id, doc_id, systems))


def _hints(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    texts: tuple[bool, bool],
) -> tuple[Hint, ...]:
    """The hints that apply (``texts``: the documents, the queries are text)."""
    hints: list[Hint] = []
    if texts[0]:

        def case_hint() -> str | None:
            return _case_text(*_case_pairs(run, qrels, query_id, doc_id), doc_id)

        hints.append(case_hint)
    if texts[1]:

        def query_hint() -> str | None:
            return _query_text(*_query_ids(run, qrels, query_id), query_id)

        hints.append(QueryHint(query_hint))
    return tuple(hints)


def _part(
    counts: pl.DataFrame,
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    unretrieved: Policy,
    texts: tuple[bool, bool],
) -> Coverage:
    """A part's :class:`Coverage`: its tally, and the hints' data (``texts`` as in
    :func:`_hints`) where the tally is suspect."""
    suspected = suspect(counts)
    if not suspected and not texts[1]:
        return Coverage(counts, unretrieved, doc_id=doc_id, query_id=query_id)
    case, case_count, ran, judged = None, 0, None, None
    if texts[0] and suspected:
        case, case_count = _case_pairs(run, qrels, query_id, doc_id)
    if texts[1]:
        # the run's query ids the judgments lack, in every part: the judged query they
        # may match (spelt apart) can be in another part, the one its miss makes suspect
        ran, judged = pl.collect_all(_query_ids(run, qrels, query_id))
        ran = ran.join(judged, on=query_id, how="anti")
        judged = judged if suspected else None
    return Coverage(
        counts,
        unretrieved,
        case=case,
        case_count=case_count,
        ran=ran,
        judged=judged,
        doc_id=doc_id,
        query_id=query_id,
    )


def _common_ids(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    keep: Sequence[str] = (),
) -> tuple[pl.LazyFrame, pl.LazyFrame, tuple[bool, bool]]:
    """The ids of ``run`` and ``qrels`` in one dtype each (the tally's), and whether
    the documents and the queries are text (``keep``: the run's columns kept too)."""
    ran, held = run.collect_schema(), qrels.collect_schema()
    keys = (query_id, doc_id)
    dtypes = {k: common_id_dtype([ran[k], held[k]]) for k in keys}
    cast = [pl.col(k).cast(dtypes[k]) for k in keys]
    texts = (is_text(dtypes[doc_id]), is_text(dtypes[query_id]))
    return run.select(*keep, *cast), qrels.select(cast), texts


def _judged_blind(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    systems: Sequence[str],
) -> pl.DataFrame | None:
    """:func:`_blind_cases` of the judged queries where a system retrieves no judged
    document (``None`` where its documents match none once their spelling is ignored),
    from ``run`` and ``qrels`` (ids of one dtype: :func:`_common_ids`): the (system,
    query) pairs that hold a judged document (one semi-join of the run), each judged
    query of each system but those; :func:`_blind_cases` reads the run's rows of
    those queries only (a query the run does not list holds none)."""
    keys = [*systems, query_id]
    judged = qrels.select(query_id, doc_id).unique()
    found = run.join(judged, on=[query_id, doc_id], how="semi").select(keys).unique()
    every = judged.select(query_id).unique()
    if systems:
        every = run.select(systems).unique().join(every, how="cross")
    blind = every.join(found, on=keys, how="anti", nulls_equal=True).collect()
    if not blind.height:
        return None
    cases = _blind_cases(run, qrels, blind, (keys, [query_id], query_id, doc_id), systems)
    return cases if cases.height else None


def _judged_partly(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    systems: Sequence[str],
) -> pl.DataFrame | None:
    """:func:`_partly_cases` of the judged queries where a system retrieves some judged
    documents but not all, from ``run`` and ``qrels`` (ids of one dtype:
    :func:`_common_ids`; ``None`` where no document matches). Only the queries where an
    id of either side is not its own fold are read (two ids that match once spelling is
    ignored differ, so one of them is not): found first (one regex test per id), then
    each system's judged documents found there, against the judged ones of the query."""
    keys = [*systems, query_id]
    odd = pl.col(doc_id).cast(pl.String).str.contains(FOLDS)
    judged = qrels.select(query_id, doc_id).unique()
    marked = pl.concat(
        [run.filter(odd).select(query_id), judged.filter(odd).select(query_id)]
    ).unique()
    queries = marked.collect()
    if not queries.height:
        return None
    among = pl.col(query_id).is_in(queries.get_column(query_id).implode())
    ran, held = run.filter(among), judged.filter(among)
    found = (
        ran.select(*keys, doc_id)
        .join(held, on=[query_id, doc_id], how="semi")
        .unique()
        .group_by(keys)
        .agg(pl.len().alias(FOUND_DOCS))
    )
    every = held.group_by(query_id).agg(pl.len().alias(JUDGED_DOCS))
    partly = (
        found.join(every, on=query_id)
        .filter(pl.col(FOUND_DOCS) < pl.col(JUDGED_DOCS))
        .select(keys)
        .collect()
    )
    if not partly.height:
        return None
    return _partly_cases(ran, held, partly, (keys, [query_id], query_id, doc_id), systems)


def _case_pairs(
    run: pl.LazyFrame, qrels: pl.LazyFrame, query_id: str, doc_id: str
) -> tuple[pl.DataFrame, int]:
    """The first (query, run document, judged document) that matches only when its
    spelling is ignored (case, the spaces around an id, separators, a prefix, leading
    zeros: :func:`~polars_irmetrics.ground.spelling.spelling_matches`, as fusion's
    hints match them), and how many pairs of the run do."""
    pairs = [query_id, doc_id]
    matched = spelling_matches(run, qrels, doc_id, within=query_id)
    sample, count = pl.collect_all(
        [
            matched.sort([*pairs, f"{doc_id}_right"]).head(1),
            matched.select(pairs).unique().select(pl.len()),
        ]
    )
    return sample, int(count.item())


def _case_text(sample: pl.DataFrame, count: int, doc_id: str) -> str | None:
    if not sample.height:
        return None
    ran_id, judged_id = sample.get_column(doc_id)[0], sample.get_column(f"{doc_id}_right")[0]
    what, fix = spelling_change(ran_id, judged_id)
    return (
        f"{count} (query, document) pair(s) of the run match a judgment only when "
        f"{what} (run {ran_id!r}, judgments {judged_id!r}): ids are compared "
        "exactly, as trec_eval compares them; give both the same spelling, e.g. "
        f"pl.col({doc_id!r}){fix} on the run and the judgments."
    )


#: The counts of the document hint's data (:attr:`Coverage.blind`), after the systems'
#: keys and before the first pair (query, run document, judged document): the queries
#: and the (query, document) pairs that match once their spelling is ignored.
_QUERIES, _PAIRS = f"{INTERNAL}spelt_queries", f"{INTERNAL}spelt_pairs"
#: The digits of a document id (:func:`~polars_irmetrics.ground.spelling.spelling_digits`).
_DIGITS = f"{INTERNAL}spelt_digits"


def _blind_keys(setup: Setup) -> tuple[list[str], list[str], str, str]:
    """What :func:`_blind_cases` reads of the plan's ``setup``: the keys of a ranking,
    those of the judgments, the query and the document columns."""
    return list(setup.keys), list(setup.qrels_keys), setup.check.query_id, setup.doc_id


def _blind_cases(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    blind: pl.DataFrame,
    names: tuple[list[str], list[str], str, str],
    systems: Sequence[str],
    cut: Cut = None,
) -> pl.DataFrame:
    """The document hint's data of the per-query rows ``blind`` (judged queries where
    the run retrieves no judged document): per system with a match, how many of those
    queries hold a document of the run that matches a judged one of the same query once
    its spelling is ignored (:func:`~polars_irmetrics.ground.spelling.spelling_matches`),
    how many (query, document) pairs do, and the first (query, run document, judged
    document). ``names``: :func:`_blind_keys`; ``cut``: the rows of those queries
    the metrics read (:data:`Cut`)."""
    keys, shared, query_id, doc_id = names
    # the rows of those queries: a filter on the query id first (a scan of a file
    # reads the other columns of those rows only), then on every key
    among = pl.col(query_id).is_in(blind.get_column(query_id).unique().implode())
    wanted = blind.lazy().select(keys)
    ran = _cut(run.filter(among), cut).select(*keys, doc_id)
    held = qrels.filter(among)
    if len(keys) > 1:
        ran = ran.join(wanted, on=keys, how="semi")
    if len(shared) > 1:
        held = held.join(wanted.select(shared).unique(), on=shared, how="semi")
    # only the pairs of a run and a judged document of the query with the same digits
    # (a shallow run's seldom have any): the match's several passes over those alone;
    # each side read once (the run's rows of those queries, a few)
    with_digits = spelling_digits(pl.col(doc_id)).alias(_DIGITS)
    ran_rows, held_rows = pl.collect_all(
        [ran.with_columns(with_digits), held.select(*shared, doc_id, with_digits)]
    )
    both = ran_rows.join(held_rows, on=[*shared, _DIGITS]).lazy()
    ran = both.select(*keys, doc_id)
    held = both.select(*shared, pl.col(f"{doc_id}_right").alias(doc_id))
    pairs = spelling_matches(ran, held, doc_id, within=shared)
    matched = ran.join(pairs, on=[*shared, doc_id])
    order = [query_id, doc_id, f"{doc_id}_right"]
    aggs = [
        pl.struct(keys).n_unique().alias(_QUERIES),
        pl.struct(*keys, doc_id).n_unique().alias(_PAIRS),
        *(pl.col(c).sort_by(order).first() for c in order),
    ]
    per = matched.group_by(list(systems)).agg(aggs) if systems else matched.select(aggs)
    return per.filter(pl.col(_PAIRS) > 0).collect()


#: A document id once its spelling is ignored
#: (:func:`~polars_irmetrics.ground.spelling.spelling_fold`).
_FOLD = f"{INTERNAL}spelt_fold"


def _partly_cases(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    queries: pl.DataFrame,
    names: tuple[list[str], list[str], str, str],
    systems: Sequence[str],
    cut: Cut = None,
) -> pl.DataFrame | None:
    """The document hint's data of the per-query rows ``queries`` (judged queries where
    the run retrieves some judged documents but not all), in :func:`_blind_cases`'
    columns: per system with a match, how many of those queries hold a document of the
    run that no judgment of the query names and that matches a judged one once the
    spaces around it, case and separators are ignored
    (:func:`~polars_irmetrics.ground.spelling.spelling_fold`; a prefix and leading
    zeros kept: ``'d01'`` and ``'d1'`` may be two documents of one collection), how many
    (query, document) pairs do, and the first; ``None`` where none does. Two ids that
    match so differ, so one of them is not its own fold: the run's documents that are
    not (a regex test, no copy: none where the ids are lowercase letters and digits),
    matched with the judged ones of their queries, and the judged ones that are not,
    matched with the run's documents of their queries. ``names``: :func:`_blind_keys`;
    ``cut``: the rows of those queries the metrics read (:data:`Cut`), applied once the
    run is filtered to them."""
    keys, shared, query_id, doc_id = names
    right = f"{doc_id}_right"
    text = pl.col(doc_id).cast(pl.String)
    odd = text.str.contains(FOLDS)
    fold = spelling_fold(pl.col(doc_id)).alias(_FOLD)
    wanted = queries.lazy().select(keys).unique()
    ran = run
    if ODD_DOCS in queries.columns:  # the plan counted them: the run read for those alone
        marked = queries.filter(pl.col(ODD_DOCS) > 0).get_column(query_id).unique()
        if marked.len():
            ran = ran.filter(pl.col(query_id).is_in(marked.implode()))
        else:  # none: the run not read at all
            ran = pl.LazyFrame(schema=ran.collect_schema())
    ran = _cut(ran, cut).select(*keys, text)
    ran_odd, held_odd = pl.collect_all(
        [
            ran.filter(odd).join(wanted, on=keys, how="semi", nulls_equal=True),
            qrels.select(*shared, text)
            .filter(odd)
            .with_columns(fold)
            .filter(pl.col(_FOLD) != pl.col(doc_id))
            .join(wanted.select(shared).unique(), on=shared, how="semi", nulls_equal=True),
        ]
    )
    if not ran_odd.height and not held_odd.height:
        return None
    found: list[pl.LazyFrame] = []
    if ran_odd.height:  # the run's documents that are not their own fold: every judged one
        among = pl.col(query_id).is_in(ran_odd.get_column(query_id).unique().implode())
        held = qrels.filter(among).select(*shared, text.alias(right))
        found.append(
            ran_odd.lazy()
            .with_columns(fold)
            .join(
                held.with_columns(spelling_fold(pl.col(right)).alias(_FOLD)), on=[*shared, _FOLD]
            )
            .select(*keys, doc_id, right)
        )
    if held_odd.height:  # the judged ones that are not: the run's documents, their fold
        among = pl.col(query_id).is_in(held_odd.get_column(query_id).unique().implode())
        folded = held_odd.lazy().select(
            *shared, pl.col(_FOLD).alias(doc_id), pl.col(doc_id).alias(right)
        )
        found.append(
            _cut(run.filter(among), cut)
            .select(*keys, text)
            .join(wanted, on=keys, how="semi", nulls_equal=True)
            .join(folded, on=[*shared, doc_id])
            .select(*keys, doc_id, right)
        )
    pairs = pl.concat(found).filter(pl.col(doc_id) != pl.col(right)).unique().collect()
    if not pairs.height:
        return None
    # a run's document that a judgment of its query names is judged, whatever it matches
    among = pl.col(query_id).is_in(pairs.get_column(query_id).unique().implode())
    judged = qrels.filter(among).select(*shared, text)
    unjudged = pairs.lazy().join(judged, on=[*shared, doc_id], how="anti")
    order = [query_id, doc_id, right]
    aggs = [
        pl.struct(keys).n_unique().alias(_QUERIES),
        pl.struct(*keys, doc_id).n_unique().alias(_PAIRS),
        *(pl.col(c).sort_by(order).first() for c in order),
    ]
    per = unjudged.group_by(list(systems)).agg(aggs) if systems else unjudged.select(aggs)
    cases = per.filter(pl.col(_PAIRS) > 0).collect()
    return cases if cases.height else None


def _partly_texts(
    cases: pl.DataFrame, systems: Sequence[str], query_id: str, doc_id: str
) -> dict[tuple[Any, ...], tuple[int, str]]:
    """The document hint (:data:`~polars_irmetrics.ground.validate.DocsHint`) of the
    data :func:`_partly_cases` gives."""
    return _pair_texts(
        cases,
        (systems, query_id, doc_id),
        "there match a judgment of the query",
        " and are scored as unjudged documents",
    )


def _blind_merged(
    parts: Sequence[pl.DataFrame], systems: Sequence[str], query_id: str, doc_id: str
) -> pl.DataFrame:
    """The parts' :func:`_blind_cases` added up per system (each part holds whole
    queries): the counts summed, the first pair kept."""
    every = pl.concat(parts, how="vertical_relaxed")
    order = [query_id, doc_id, f"{doc_id}_right"]
    aggs = [pl.col(_QUERIES, _PAIRS).sum(), *(pl.col(c).sort_by(order).first() for c in order)]
    if not systems:
        return every.select(aggs) if every.height else every
    return every.group_by(list(systems)).agg(aggs)


def _blind_texts(
    cases: pl.DataFrame, systems: Sequence[str], query_id: str, doc_id: str
) -> dict[tuple[Any, ...], tuple[int, str]]:
    """The document hint (:data:`~polars_irmetrics.ground.validate.DocsHint`) of the
    data :func:`_blind_cases` gives."""
    return _pair_texts(cases, (systems, query_id, doc_id), "in such queries match a judgment", "")


def _pair_texts(
    cases: pl.DataFrame, names: tuple[Sequence[str], str, str], matched: str, scored: str
) -> dict[tuple[Any, ...], tuple[int, str]]:
    """Per system (``names``: the systems' keys, the query and document columns): how
    many queries, and the sentence naming the first pair of ``cases`` (a run's id and
    the judged one it matches once spelling is ignored)."""
    systems, query_id, doc_id = names
    texts: dict[tuple[Any, ...], tuple[int, str]] = {}
    for row in cases.iter_rows(named=True):
        ran_id, judged_id = row[doc_id], row[f"{doc_id}_right"]
        what, fix = spelling_change(ran_id, judged_id)
        texts[tuple(row[k] for k in systems)] = (
            row[_QUERIES],
            f"{row[_PAIRS]} (query, document) pair(s) of the run {matched} only when {what} "
            f"(query {row[query_id]!r}: run {ran_id!r}, judgments {judged_id!r}){scored}: "
            "ids are compared exactly, as trec_eval compares them; give both the same "
            f"spelling, e.g. pl.col({doc_id!r}){fix} on the run and the judgments.",
        )
    return texts


def _query_hint_applies(run: pl.LazyFrame, setup: Setup) -> bool:
    query_id = setup.check.query_id
    if setup.cast_ids.get(query_id, pl.String()) != pl.String():
        return False
    dtype = run.collect_schema()[query_id]
    return is_text(dtype)


def _query_ids(
    run: pl.LazyFrame, qrels: pl.LazyFrame, query_id: str
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The distinct query ids of the run and of the judgments, as text."""
    ran = run.select(pl.col(query_id).cast(pl.String)).unique()
    judged = qrels.select(pl.col(query_id).cast(pl.String)).unique()
    return ran, judged


def _query_text(ran: pl.LazyFrame, judged: pl.LazyFrame, query_id: str) -> str | None:
    """The query hint: the run's query ids that match a judged one only when their
    spelling is ignored (:func:`~polars_irmetrics.ground.spelling.spelling_matches`),
    how many, the first pair and the fix that gives both one spelling."""
    matched = spelling_matches(ran, judged, query_id, within=None)
    right = f"{query_id}_right"
    sample, count = pl.collect_all(
        [matched.sort(query_id, right).head(1), matched.select(query_id).unique().select(pl.len())]
    )
    if not sample.height:
        return None
    ran_id, judged_id = sample.row(0)
    what, fix = spelling_change(ran_id, judged_id)
    return (
        f"{count.item()} query id(s) of the run match a judged query only once {what} "
        f"(run {ran_id!r}, judgments {judged_id!r}): ids are compared exactly, as "
        "trec_eval compares them; give both the same spelling, e.g. "
        f"pl.col({query_id!r}){fix} on the run and the judgments."
    )
