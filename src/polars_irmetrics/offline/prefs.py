"""Preference measures: how many of the users' document preferences a ranking fulfils.

trec_eval's ``-R prefs`` judgments (:func:`polars_irmetrics.io.prefs.read_trec_prefs`)
are rows ``query_id jg jsg doc_id rel_level``. Within a judgment sub-group (``jsg``)
of a judgment group (``jg``: one user) a document with a higher level is preferred
to one with a lower level. A group with one sub-group is a total order by level; a
group with several sub-groups is a partial order: the union of its sub-groups'
preferences and their transitive closure (``a > b`` and ``b > c`` give ``a > c``).
A level of 0 means "not relevant" (``rel_level > 0``: relevant). ``-R qrels_prefs``
reads a qrels file the same way: ``jg`` is the iteration field, one sub-group.

Every preference ``a > b`` of a group falls in one of three cases, with the ranking
of the run (score descending, ties by document id ascending, as trec_eval's
form_prefs_counts.c orders it, or the run's ranks where :func:`build_prefs_plan` reads
them; ``-M`` keeps the top ``depth``):

* *ret*: both retrieved; fulfilled when ``a`` ranks above ``b``;
* *imp*: exactly one retrieved; fulfilled when it is ``a`` (implied: ``b`` is below);
* *notoccur*: neither retrieved; never fulfilled.

With ``ful_x``/``poss_x`` the fulfilled/possible preferences of case ``x``, summed
over a query's groups, and ``G`` the number of groups:

* ``prefs_num_prefs_poss`` = poss_ret + poss_imp + poss_notoccur;
  ``prefs_num_prefs_ful`` = ful_ret + ful_imp; ``prefs_num_prefs_ful_ret`` = ful_ret;
* ``prefs_simp`` = (ful_ret + ful_imp) / (poss_ret + poss_imp + poss_notoccur);
  ``prefs_simp_ret`` = ful_ret / poss_ret; ``prefs_simp_imp`` = (ful_ret + ful_imp) /
  (poss_ret + poss_imp); 0 when the denominator is 0;
* ``prefs_avgjg``, ``prefs_avgjg_ret``, ``prefs_avgjg_imp``: the same ratios computed
  per group (a group with no possible preference adds 0) and averaged over the G groups;
* ``prefs_pair``: for each pair of documents {x, y} that some group orders, with x
  ranked above y (or retrieved while y is not), the fraction of the groups ordering
  them that prefer x; averaged over the pairs, a pair of documents neither retrieved
  counting 0. ``prefs_pair_ret``: only pairs of retrieved documents;
  ``prefs_pair_imp``: pairs with at least one retrieved;
* ``prefs_avgjg_Rnonrel``: per group, with R relevant and N non-relevant documents,
  if R >= N, (ful_ret + ful_imp + R_ret * (R - N)) / (poss + R * (R - N)) (as if
  R - N more non-relevant documents were ranked below every retrieved relevant one);
  if R < N, the preferences recounted with only the first R non-relevant documents
  (in ranking order, then document id); averaged over the groups.
  ``prefs_avgjg_Rnonrel_ret``: the same over retrieved documents only (R and N the
  retrieved relevant and non-relevant documents).

Two details are kept exactly as trec_eval 9.0.8 and 10.0 compute them (m_prefs_*.c):
in a group with one sub-group, a preference listed twice counts twice; and in
``prefs_avgjg_Rnonrel``'s recount for a one-sub-group group, the first R
non-relevant documents are also compared with every non-relevant document (itself
included), each such pair possible and fulfilled when the other one is retrieved
above it. A query's ``*_avgjg`` value is 0 when every group adds 0, and the
``*_Rnonrel`` ones are 0 when a group has no possible preference (trec_eval divides
0 by 0 there). One case differs: with negative levels (which the format does not
allow, but ``-R qrels_prefs`` reads from a qrels file's -1 labels) a group's lowest
level may hold fewer than R documents while N > R; trec_eval's recount then reads
past the end of that level's list (undefined behaviour), and here it takes the
documents the level holds.

:func:`prefs_measures` computes them all for every query, in polars; the transitive
closure of a partial order repeats one join until no preference is added (as many
rounds as the longest chain of preferences).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from polars_irmetrics.errors import DuplicateError, InvalidValueError, MetricParameterError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    INTERNAL,
    RUN_COLUMNS_HINT,
    TALLY,
    DocsHint,
    Hint,
    Policy,
    check_id_kinds,
    check_numeric,
    raise_on_bad_rows,
    require_columns,
    tally_counts,
    warn_from_plan,
    warn_on_counts,
    with_tally,
)
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import exact_sum
from polars_irmetrics.offline.checks import (
    bad_rows,
    duplicate_counts,
    order_counts,
    raise_on_samples,
    recount,
    run_facts,
    sampled_rows,
)
from polars_irmetrics.offline.columns import CHECK, JUDGED, RETRIEVED
from polars_irmetrics.offline.coverage import id_hints, judged_docs, judged_partly
from polars_irmetrics.offline.setup import resolve

__all__ = [
    "PREFS_MEASURES",
    "build_prefs_plan",
    "prefs_from_qrels",
    "prefs_measures",
]

#: Every preference measure, in trec_eval's print order.
PREFS_MEASURES: tuple[str, ...] = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
#: The counts among them (integers; summed, not averaged, over queries).
PREFS_COUNTS = frozenset(
    {"prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"}
)

_Q, _JG = "query_id", "jg"


def prefs_from_qrels(qrels: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Judgments read as preferences (trec_eval's ``-R qrels_prefs``).

    ``query_id``, ``iteration`` (the judgment group; ``"0"`` when absent), ``doc_id``
    and ``relevance`` become ``query_id``, ``jg``, ``jsg`` (``"0"``), ``doc_id`` and
    ``rel_level`` (the label as a float, not truncated).

    Examples
    --------
    >>> qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
    ...                       "relevance": [2, 0]})
    >>> prefs_from_qrels(qrels).collect().rows()
    [('q1', '0', '0', 'a', 2.0), ('q1', '0', '0', 'b', 0.0)]
    """
    lazy = qrels.lazy()
    names = lazy.collect_schema().names()
    jg = pl.col("iteration").cast(pl.String) if "iteration" in names else pl.lit("0")
    return lazy.select(
        pl.col(_Q).cast(pl.String),
        jg.alias(_JG),
        pl.lit("0").alias("jsg"),
        pl.col("doc_id").cast(pl.String),
        pl.col("relevance").cast(pl.Float64).alias("rel_level"),
    )


def _docids(run: pl.LazyFrame, prefs: pl.LazyFrame, depth: int | None) -> pl.LazyFrame:
    """Each judged document's position: retrieved ones by rank, then the rest by id.

    Returns ``query_id``, ``doc_id``, ``docid`` (0-based) and ``njr`` (the number of
    judged documents retrieved within ``depth``).
    """
    ranked = run.sort([_Q, "score", "doc_id"], descending=[False, True, False]).with_columns(
        pl.int_range(pl.len()).over(_Q).alias("_rank")
    )
    if depth is not None:
        ranked = ranked.filter(pl.col("_rank") < depth)
    judged = prefs.select(_Q, "doc_id").unique()
    docs = judged.join(ranked.select(_Q, "doc_id", "_rank"), on=[_Q, "doc_id"], how="left")
    return (
        docs.sort([_Q, "_rank", "doc_id"], nulls_last=True)
        .with_columns(
            pl.int_range(pl.len()).over(_Q).alias("docid"),
            pl.col("_rank").count().over(_Q).alias("njr"),
        )
        .drop("_rank")
    )


def _closure(pairs: pl.DataFrame) -> pl.DataFrame:
    """The transitive closure of ``pairs`` (query_id, jg, a, b): a > b."""
    keys = [_Q, _JG]
    current = pairs.unique()
    while True:
        step = current.join(
            current.rename({"a": "b", "b": "c"}), on=[*keys, "b"], how="inner"
        ).select(*keys, "a", pl.col("c").alias("b"))
        grown = pl.concat([current, step]).unique()
        if grown.height == current.height:
            return current
        current = grown


def _check_consistent(pairs: pl.DataFrame, docs: pl.DataFrame) -> None:
    """Refuse a group that prefers a document to itself or two documents both ways."""
    both = pairs.join(
        pairs.rename({"a": "b", "b": "a"}), on=[_Q, _JG, "a", "b"], how="semi"
    ).filter(pl.col("a") <= pl.col("b"))
    if both.height:  # a pair of documents first; a document preferred to itself else
        first = both.sort(pl.col("a") == pl.col("b"), _Q, _JG, "a", "b")
        q, jg, a, b = first.select(_Q, _JG, "a", "b").row(0)
        names = docs.filter((pl.col(_Q) == q) & pl.col("docid").is_in([a, b]))
        ids = sorted(names.get_column("doc_id").to_list())
        what = (
            f"{ids[0]!r} and {ids[1]!r} are each preferred to the other"
            if len(ids) == 2
            else f"{ids[0]!r} is preferred to itself"
        )
        raise InvalidValueError(
            f"preferences of query {q}, judgment group {jg} are inconsistent: {what} "
            "(directly or through other documents); a judgment group must be one "
            "consistent order: put conflicting judgments in different groups"
        )


def prefs_measures(
    run: pl.DataFrame | pl.LazyFrame,
    prefs: pl.DataFrame | pl.LazyFrame,
    *,
    depth: int | None = None,
    queries: list[str] | None = None,
    names: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """Every preference measure of every query (see the module for the formulas).

    Parameters
    ----------
    run
        ``query_id``, ``doc_id`` and ``score`` (a higher score ranks first; ties by
        document id ascending, as trec_eval orders them for preferences).
    prefs
        ``query_id``, ``jg``, ``jsg``, ``doc_id`` and ``rel_level``
        (:func:`polars_irmetrics.io.prefs.read_trec_prefs`, or
        :func:`prefs_from_qrels` for judgments).
    depth
        Keep only the top ``depth`` documents of each query (trec_eval ``-M``).
    queries
        The queries to evaluate (a query of ``prefs`` with no results is evaluated on
        an empty ranking, trec_eval 10.0's ``-c``); default: the queries in both.
    names
        The names the messages give ``query_id`` and ``doc_id``: the user's columns
        (``query_id=``, ``doc_id=``) where the caller renamed them to these.

    Returns
    -------
    polars.DataFrame
        ``query_id`` and one column per name of :data:`PREFS_MEASURES` (Int64 counts,
        Float64 ratios), sorted by ``query_id``.

    Raises
    ------
    DuplicateError
        A document retrieved twice for a query.
    InvalidValueError
        A judgment group whose preferences contradict each other, a document given
        two levels in one sub-group, or a level of 0 and another level in one group.

    Examples
    --------
    One user prefers a to b to c (levels 2, 1, 0); the run ranks b, a, c. Of the 3
    preferences 2 are fulfilled (a > c and b > c), so prefs_simp is 2/3:

    >>> import polars as pl
    >>> prefs = pl.DataFrame({"query_id": ["q1"] * 3, "jg": ["u"] * 3, "jsg": ["s"] * 3,
    ...                       "doc_id": ["a", "b", "c"], "rel_level": [2.0, 1.0, 0.0]})
    >>> run = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["b", "a", "c"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> out = prefs_measures(run, prefs)
    >>> out.select("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_simp").row(0)
    (3, 2, 0.6666666666666666)
    """
    run_lazy = run.lazy().select(
        pl.col(_Q).cast(pl.String), pl.col("doc_id").cast(pl.String), pl.col("score")
    )
    p = prefs.lazy().select(
        pl.col(_Q).cast(pl.String),
        pl.col(_JG).cast(pl.String),
        pl.col("jsg").cast(pl.String),
        pl.col("doc_id").cast(pl.String),
        pl.col("rel_level").cast(pl.Float64),
    )
    named = {_Q: _Q, "doc_id": "doc_id", **(names or {})}
    _check_rows(p, named)
    if queries is None:
        wanted = p.select(_Q).unique().join(run_lazy.select(_Q).unique(), on=_Q)
    else:
        wanted = pl.LazyFrame({_Q: queries}, schema={_Q: pl.String})
    p = p.join(wanted, on=_Q, how="semi")
    run_lazy = run_lazy.join(wanted, on=_Q, how="semi")
    dup = run_lazy.group_by(_Q, "doc_id").len().filter(pl.col("len") > 1).collect()
    if dup.height:
        q, d, _ = dup.sort(_Q, "doc_id").row(0)
        ids = [named[_Q], named["doc_id"]]
        raise DuplicateError(
            f"run: document {d!r} is retrieved twice for query {q}; keep one row per "
            f"({', '.join(ids)}), e.g. .unique({ids!r})"
        )
    docs = _docids(run_lazy, p, depth).collect()
    rows = p.join(docs.lazy(), on=[_Q, "doc_id"]).collect()
    return _measures(rows, docs, wanted.collect().get_column(_Q).to_list())


def build_prefs_plan(
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    prefs: pl.LazyFrame | None,
    options: EvalOptions,
) -> pl.LazyFrame:
    """The per-query values of the preference measures in ``requests``: the query
    column (``query_id=``, in the ids' dtype as the ranking metrics give it back: the
    run's and the preferences' common one, sorted) and one column per request.

    The run is checked as the ranking metrics check it (:mod:`.setup` resolves its
    columns, :mod:`.checks` counts its bad rows, with the same messages): ``query_id=``
    and ``doc_id=`` name the ids of the run and of the preferences alike, and the run
    is ordered as theirs (``order='auto'``: by ``rank=`` where the run has that column,
    else by ``score=``, descending, ties by document id ascending as trec_eval orders
    them for preferences). A run that retrieves none of the preferences' documents, or
    misses most of their queries, is warned about as the ranking metrics warn of one
    beside ``qrels=`` (:func:`~polars_irmetrics.ground.validate.warn_on_counts`), when
    the plan runs.

    The checks and the measures are computed eagerly (the transitive closure repeats a
    join until no preference is added); the result is returned lazily.
    """
    if prefs is None:  # guarded by the door's input check
        raise MetricParameterError("preference measures need prefs=...")
    q, d = options.query_id, options.doc_id
    labels = [label for label, _ in requests]
    run_schema, prefs_schema = run.collect_schema(), prefs.collect_schema()
    require_columns(run_schema, [q, d], "run", RUN_COLUMNS_HINT)
    _check_prefs_schema(prefs_schema, q, d)
    # the ids are compared as text: of one kind on both sides, or 1 and '1' would match
    check_id_kinds(run_schema, "run", prefs_schema, "preferences", [q, d])
    judgments = prefs.select(q, d)
    # the run's columns and order as the ranking metrics resolve them (the relevance
    # column an internal name: the preferences' levels are read below, not by it)
    with_level = judgments.with_columns(pl.lit(0.0).alias(_REL))
    setup = resolve(run, with_level, options.replace(relevance=_REL), outputs=labels)
    spec = replace(setup.check, frames=("run", "preferences"))
    casts = [pl.col(c).cast(t) for c, t in setup.cast_ids.items()]
    run = run.with_columns(casts)
    judgments = judgments.with_columns(casts)
    by_rank = setup.order == "rank"
    order = pl.col(setup.rank) if by_rank else pl.col(setup.score)
    # ranked by score descending: a rank as its negation (the checks refuse a rank
    # that is not an integer from 1 to 2**63 - 1 held once)
    ranked = run.select(
        pl.col(q).cast(pl.String).alias(_Q),
        pl.col(d).cast(pl.String).alias("doc_id"),
        (-order.cast(pl.Int64, strict=False) if by_rank else order).alias("score"),
    )
    p = prefs.select(
        pl.col(q).cast(pl.String).alias(_Q),
        pl.col(_JG).cast(pl.String),
        pl.col("jsg").cast(pl.String),
        pl.col(d).cast(pl.String).alias("doc_id"),
        pl.col("rel_level").cast(pl.Float64),
    )
    depth = options.depth
    if by_rank and depth is not None:  # the given ranks 1..depth, as the ranking metrics
        ranked, depth = ranked.filter(pl.col("score") >= -depth), None
    listed = run.select(q).unique().with_columns(pl.lit(True).alias(RETRIEVED))
    per_query = (
        judgments.select(q)
        .unique()
        .join(listed, on=q, how="left", nulls_equal=True)
        .with_columns(
            pl.col(RETRIEVED).fill_null(False),
            pl.lit(True).alias(JUDGED),
            pl.lit(False).alias(CHECK),
        )
    )
    seen = [pl.lit(True).alias(c) for c in (CHECK, JUDGED, RETRIEVED)]
    checks = [bad_rows(run, setup)]
    # a query's sampled rankings (the sample_id= column), read as one here: refused first
    sample = options.sample_id if options.sample_id in run_schema else None
    if sample is not None:
        checks.append(sampled_rows(run, list(spec.keys), sample))
    counted = run_facts(run, setup)  # one group-by per ranking for both checks below
    if spec.check_duplicates:
        checks.append(duplicate_counts(counted, setup))
    against = order_counts(counted, setup)  # order='auto' beside a score column
    if against is not None:
        checks.append(against)
    flagged = pl.concat(
        [per_query, *(frame.with_columns(seen) for frame in checks)], how="diagonal_relaxed"
    )
    # the run's checks raise before the measures read it (they are computed here)
    queries = raise_on_bad_rows(
        raise_on_samples(flagged.collect(), spec, sample),
        spec,
        check_rows=CHECK,
        recount=recount(run, setup),
    )
    if options.unretrieved != "zero":  # the queries of both ('error': every one, or raised)
        queries = queries.filter(pl.col(RETRIEVED))
    wanted = queries.get_column(q).cast(pl.String).sort().to_list()
    values = prefs_measures(ranked, p, depth=depth, queries=wanted, names={_Q: q, "doc_id": d})
    column = {name.lower(): name for name in PREFS_MEASURES}  # the registry's are lowercase
    # the ids as the ranking metrics give them back (the run's and the preferences'
    # common dtype: integers stay integers, in their order), not as the text the
    # measures compare: an id's text casts back to it
    key = pl.col(_Q).cast(judgments.collect_schema()[q]).alias(q)
    measures = (pl.col(column[r.metric.name]).alias(label) for label, r in requests)
    result = values.lazy().select(key, *measures).sort(q)
    hints = id_hints(run, judgments, setup)
    # the queries where the run retrieves none of the preferences' documents, its
    # documents there spelt apart from theirs: read only where such a query is
    # (the run's documents within depth=, as the measures read them)
    shown = _within_depth(run, q, d, order, by_rank, options.depth)
    docs = judged_docs(shown, judgments, q, d)
    # and those where it retrieves some of their documents but not all, its other
    # documents there spelt apart from theirs
    partly = judged_partly(shown, judgments, q, d)
    unretrieved = options.unretrieved
    # the coverage counts are read when the plan runs, and warned about then
    tally = _tally(ranked, p, depth)

    def say(row: Mapping[str, Any]) -> None:
        _warn_on_coverage(row, unretrieved, hints, docs, partly)

    return with_tally(result, tally, say)


#: The relevance column :func:`build_prefs_plan` names for the run's setup (never read).
_REL = f"{INTERNAL}prefs_rel"
#: The coverage counts of :func:`_tally`, as :data:`~polars_irmetrics.ground.validate.TALLY`
#: names them, internal: beside the values until the plan runs.
_COUNTS = {name: f"{INTERNAL}prefs_{name}" for name in TALLY}
#: The preferences' columns other than the ids.
_OWN = frozenset({_JG, "jsg", "rel_level"})


def _check_prefs_schema(schema: pl.Schema, q: str, d: str) -> None:
    """The preferences hold the ids, named as the run's (``query_id=``, ``doc_id=``),
    and ``jg``, ``jsg`` and ``rel_level`` (a number)."""
    for role, column in (("query_id", q), ("doc_id", d)):
        if column in _OWN:
            raise InvalidValueError(
                f"{role}={column!r} names one of the preferences' own columns (query_id, "
                f"jg, jsg, doc_id, rel_level); the ids need other names: rename the {role} "
                f"column of the run and of the preferences, e.g. .rename({{{column!r}: "
                f"{role!r}}}), and drop {role}="
            )
    columns = [q, _JG, "jsg", d, "rel_level"]
    hint = (
        "prefs= holds trec_eval's preference rows, query_id jg jsg doc_id rel_level "
        "(irm.read_trec_prefs reads such a file)"
    )
    renamed = {role: column for role, column in (("query_id", q), ("doc_id", d)) if role != column}
    missing = [c for c in columns if c not in schema]
    if missing and missing[0] in renamed.values():  # query_id=, doc_id= name both tables'
        hint += (
            "; query_id= and doc_id= name the ids of the run and of the preferences "
            f"alike: rename the preferences', e.g. prefs.rename({renamed!r})"
        )
    require_columns(schema, columns, "preferences", hint)
    check_numeric(schema, "rel_level", "preferences", integer=False)


def _tally(ranked: pl.LazyFrame, prefs: pl.LazyFrame, depth: int | None) -> pl.LazyFrame:
    """One row: the coverage counts of the run (``query_id``, ``doc_id``, ``score``)
    beside the preferences, as the ranking metrics count them beside judgments (the
    :data:`~polars_irmetrics.ground.validate.TALLY` columns, internal names): the
    preferences' queries, those with a document retrieved (within ``depth``), their
    (query, document) pairs, those retrieved, and the queries the run lists."""
    docs = _docids(ranked, prefs, depth)
    found = pl.col("njr").first()
    listed = ranked.select(_Q).unique().with_columns(pl.lit(True).alias("_listed"))
    per_query = (
        docs.group_by(_Q)
        .agg(pl.len().alias("_docs"), found.alias("_found"))
        .join(listed, on=_Q, how="left", nulls_equal=True)
    )
    return per_query.select(
        pl.len().cast(pl.Int64).alias(_COUNTS["queries"]),
        (pl.col("_found") > 0).sum().cast(pl.Int64).alias(_COUNTS["found_queries"]),
        pl.col("_docs").sum().cast(pl.Int64).alias(_COUNTS["docs"]),
        pl.col("_found").sum().cast(pl.Int64).alias(_COUNTS["found"]),
        pl.col("_listed").count().cast(pl.Int64).alias(_COUNTS["listed"]),
    )


#: What a query where the run retrieves none of the preferences' documents scores.
_BLIND = (
    "as a ranking of none of the preferences' documents does (0 in every prefs_* measure "
    "but prefs_num_prefs_poss)"
)


def _warn_on_coverage(
    row: Mapping[str, Any],
    unretrieved: Policy,
    hints: Sequence[Hint],
    docs: DocsHint | None = None,
    partly: DocsHint | None = None,
) -> None:
    """The ranking metrics' coverage warning (:func:`warn_on_counts`) of :func:`_tally`'s
    row, naming the preferences (``prefs=``) where theirs names the judgments; ``docs``:
    the queries where the run retrieves none of their documents, its documents there
    spelt apart from theirs (:func:`~polars_irmetrics.offline.coverage.judged_docs`);
    ``partly``: those where it retrieves some of them but not all, its other documents
    there spelt apart from theirs
    (:func:`~polars_irmetrics.offline.coverage.judged_partly`)."""
    warn_on_counts(
        tally_counts(row, _COUNTS),
        systems=(),
        unretrieved=unretrieved,
        hints=hints,
        emit=lambda text: warn_from_plan(_in_prefs_words(text)),
        docs=docs,
        blind_scores=_BLIND,
        partly=partly,
    )


def _within_depth(
    run: pl.LazyFrame, q: str, d: str, order: pl.Expr, by_rank: bool, depth: int | None
) -> pl.LazyFrame:
    """The run's ids (``q``, ``d``) within ``depth`` as the measures read them (by the
    given ranks 1..depth, or the top ``depth`` by score, ties by document id ascending:
    :func:`_docids`), for the coverage hints; the run's ids whole without ``depth``."""
    ids = run.select(q, d)
    if depth is None:
        return ids
    if by_rank:
        return run.filter(order.cast(pl.Int64, strict=False) <= depth).select(q, d)
    place = pl.int_range(pl.len()).over(q)
    ordered = run.sort([q, order, pl.col(d).cast(pl.String)], descending=[False, True, False])
    return ordered.filter(place < depth).select(q, d)


def _in_prefs_words(text: str) -> str:
    """A coverage warning's text, written of the judgments (``qrels=``), of the
    preferences (``prefs=``).

    >>> _in_prefs_words("Check that the run and the judgments name the same queries")
    'Check that the run and the preferences (prefs=) name the same queries'
    >>> _in_prefs_words("(run 'a', judgments 'A'); check the judgments' file")
    "(run 'a', preferences 'A'); check the preferences' file"
    """
    text = text.replace("the judgments'", "the preferences'")
    text = text.replace("the judgments", "the preferences (prefs=)")
    return re.sub(r", judgments (?=['\"])", ", preferences ", text)


def _measures(rows: pl.DataFrame, docs: pl.DataFrame, queries: list[str]) -> pl.DataFrame:
    keys = [_Q, _JG]
    mode = rows.group_by(keys).agg((pl.col("jsg").n_unique() == 1).alias("ec"))
    rows = rows.join(mode, on=keys)
    _check_levels(rows)
    b_side = rows.select(*keys, "jsg", pl.col("docid").alias("b"), pl.col("rel_level").alias("lb"))
    raw = (
        rows.join(b_side, on=[*keys, "jsg"])
        .filter(pl.col("rel_level") > pl.col("lb"))
        .select(*keys, pl.col("docid").alias("a"), "b", "ec", "njr", "lb")
    )
    ec_pairs = raw.filter(pl.col("ec"))
    pa_pairs = _closure(raw.filter(~pl.col("ec")).select(*keys, "a", "b"))
    _check_consistent(pa_pairs, docs)
    njr = docs.select(_Q, "njr").unique()
    pairs = pl.concat(
        [
            ec_pairs.select(*keys, "a", "b"),
            pa_pairs.join(njr, on=_Q).select(*keys, "a", "b"),
        ]
    ).join(njr, on=_Q)
    counted = _pair_flags(pairs)
    per_jg = counted.group_by(keys).agg(
        *(pl.col(c).sum() for c in ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"))
    )
    groups = rows.select(*keys, "ec").unique()
    per_jg = groups.join(per_jg, on=keys, how="left").fill_null(0)
    per_jg = per_jg.join(_jg_docs(rows), on=keys, how="left")
    per_jg = per_jg.join(_rnonrel(rows, raw, pa_pairs, njr), on=keys, how="left")

    ful = pl.col("ful_ret") + pl.col("ful_imp")
    poss = pl.col("poss_ret") + pl.col("poss_imp") + pl.col("notoccur")
    poss_imp = pl.col("poss_ret") + pl.col("poss_imp")

    def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
        return pl.when(den > 0).then(num / den).otherwise(0.0)

    # the sums over a query's judgment groups are exact (fixed point): the groups come
    # in no fixed order, and a float sum's last bit would follow it
    def avgjg(num: pl.Expr, den: pl.Expr) -> pl.Expr:
        total = exact_sum(ratio(num, den))
        return pl.when(total > 0.0).then(total / pl.len()).otherwise(0.0)

    def avgjg_nan(value: pl.Expr) -> pl.Expr:  # a 0/0 group makes trec_eval's sum nan
        total = exact_sum(value)  # (a NaN kept: a float sum then)
        ok = value.is_not_nan().all() & (total > 0.0)
        return pl.when(ok).then(total / pl.len()).otherwise(0.0)

    per_query = per_jg.group_by(_Q).agg(
        poss.sum().alias("prefs_num_prefs_poss"),
        ful.sum().alias("prefs_num_prefs_ful"),
        pl.col("ful_ret").sum().alias("prefs_num_prefs_ful_ret"),
        ratio(ful.sum(), poss.sum()).alias("prefs_simp"),
        avgjg(ful, poss).alias("prefs_avgjg"),
        avgjg_nan(pl.col("_rnonrel")).alias("prefs_avgjg_Rnonrel"),
        ratio(pl.col("ful_ret").sum(), pl.col("poss_ret").sum()).alias("prefs_simp_ret"),
        avgjg(pl.col("ful_ret"), pl.col("poss_ret")).alias("prefs_avgjg_ret"),
        avgjg_nan(pl.col("_rnonrel_ret")).alias("prefs_avgjg_Rnonrel_ret"),
        ratio(ful.sum(), poss_imp.sum()).alias("prefs_simp_imp"),
        avgjg(ful, poss_imp).alias("prefs_avgjg_imp"),
    )
    out = (
        pl.DataFrame({_Q: queries}, schema={_Q: pl.String})
        .join(per_query, on=_Q, how="left")
        .join(_pair_measures(pairs), on=_Q, how="left")
    )
    filled = [
        pl.col(m).fill_null(0).cast(pl.Int64 if m in PREFS_COUNTS else pl.Float64)
        for m in PREFS_MEASURES
    ]
    return out.select(_Q, *filled).sort(_Q)


def _check_rows(prefs: pl.LazyFrame, names: Mapping[str, str]) -> None:
    """Every preference row names its query, judgment group, sub-group and document and
    gives a level that is a number (a null one, or NaN, would compare as nothing: its
    preferences would vanish from every count in silence). ``names``: the user's names
    of the columns (``query_id=``, ``doc_id=``), for the messages."""
    columns = (_Q, _JG, "jsg", "doc_id", "rel_level")
    level = pl.col("rel_level")
    counts = prefs.select(
        *(pl.col(c).null_count().alias(c) for c in columns),
        level.is_nan().sum().alias("nan"),
    ).collect()
    for own in columns:
        n = counts.item(0, own)
        column = names.get(own, own)
        if n:
            raise InvalidValueError(
                f"column {column!r} of the preferences (prefs=) has {n} null value(s); "
                f"every preference row needs its {column}: fill or drop them, e.g. "
                f".drop_nulls({column!r})"
            )
    if counts.item(0, "nan"):
        raise InvalidValueError(
            f"column 'rel_level' of the preferences (prefs=) has {counts.item(0, 'nan')} NaN "
            "value(s); a level is a number that orders the documents of a sub-group: "
            "replace or drop them"
        )


def _check_levels(rows: pl.DataFrame) -> None:
    """A document has one level per sub-group, and is relevant or not in its group."""
    twice = rows.group_by(_Q, _JG, "jsg", "doc_id").agg(pl.col("rel_level").n_unique())
    bad = twice.filter(pl.col("rel_level") > 1)
    if bad.height:
        q, jg, jsg, doc, _ = bad.sort(_Q, _JG, "jsg", "doc_id").row(0)
        raise InvalidValueError(
            f"preferences of query {q}, judgment group {jg}, sub-group {jsg}: document "
            f"{doc!r} is given two rel_levels; give each document one level per sub-group"
        )
    mixed = (
        rows.filter(~pl.col("ec"))
        .group_by(_Q, _JG, "doc_id")
        .agg(((pl.col("rel_level") == 0).any() & (pl.col("rel_level") > 0).any()).alias("m"))
        .filter(pl.col("m"))
    )
    if mixed.height:
        q, jg, doc, _ = mixed.sort(_Q, _JG, "doc_id").row(0)
        raise InvalidValueError(
            f"preferences of query {q}, judgment group {jg}: document {doc!r} has rel_level "
            "0 (not relevant) in one sub-group and a level above 0 in another"
        )


def _pair_flags(pairs: pl.DataFrame) -> pl.DataFrame:
    """Per preference a > b: which case it falls in, and whether it is fulfilled."""
    ret_a = pl.col("a") < pl.col("njr")
    ret_b = pl.col("b") < pl.col("njr")
    return pairs.with_columns(
        ((pl.col("a") < pl.col("b")) & ret_b).cast(pl.Int64).alias("ful_ret"),
        (ret_a & ret_b).cast(pl.Int64).alias("poss_ret"),
        (ret_a & ~ret_b).cast(pl.Int64).alias("ful_imp"),
        (ret_a ^ ret_b).cast(pl.Int64).alias("poss_imp"),
        (~ret_a & ~ret_b).cast(pl.Int64).alias("notoccur"),
    )


def _jg_docs(rows: pl.DataFrame) -> pl.DataFrame:
    """R, N (relevant, non-relevant) and R_ret, N_ret of each group.

    A one-sub-group group counts rows (a document listed twice counts twice), a
    partial order counts documents, as trec_eval does.
    """
    keys = [_Q, _JG]
    ordered = rows.sort(
        [*keys, "jsg", "rel_level", "docid"], descending=[False, False, False, True, False]
    )
    docs = ordered.group_by([*keys, "doc_id"], maintain_order=True).agg(
        pl.col("rel_level").last(), pl.col("docid").first(), pl.col("njr").first()
    )
    ec_rows = rows.filter(pl.col("ec"))
    pa_docs = docs.join(rows.filter(~pl.col("ec")).select(*keys).unique(), on=keys)

    def counts(frame: pl.DataFrame, rel: pl.Expr, nonrel: pl.Expr) -> pl.DataFrame:
        ret = pl.col("docid") < pl.col("njr")
        return frame.group_by(keys).agg(
            rel.sum().alias("R"),
            nonrel.sum().alias("N"),
            (rel & ret).sum().alias("R_ret"),
            (nonrel & ret).sum().alias("N_ret"),
        )

    level = pl.col("rel_level")
    return pl.concat(
        [counts(ec_rows, level > 0, level <= 0), counts(pa_docs, level > 0, level == 0)]
    )


def _rnonrel(
    rows: pl.DataFrame, raw: pl.DataFrame, pa_pairs: pl.DataFrame, njr: pl.DataFrame
) -> pl.DataFrame:
    """Per group: prefs_avgjg_Rnonrel's and prefs_avgjg_Rnonrel_ret's ratios."""
    keys = [_Q, _JG]
    stats = _jg_docs(rows)
    flags = _pair_flags(
        pl.concat(
            [
                raw.filter(pl.col("ec")).select(*keys, "a", "b"),
                pa_pairs.select(*keys, "a", "b"),
            ]
        ).join(njr, on=_Q)
    )
    sums = flags.group_by(keys).agg(
        *(pl.col(c).sum() for c in ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"))
    )
    frame = stats.join(sums, on=keys, how="left").fill_null(0)
    r, n = pl.col("R"), pl.col("N")
    r_ret, n_ret = pl.col("R_ret"), pl.col("N_ret")
    extra = (r - n).cast(pl.Float64)
    extra_ret = (r_ret - n_ret).cast(pl.Float64)
    full = (pl.col("ful_ret") + pl.col("ful_imp") + r_ret * extra) / (
        pl.col("poss_ret") + pl.col("poss_imp") + pl.col("notoccur") + r * extra
    )
    full_ret = (pl.col("ful_ret") + r_ret * extra_ret) / (pl.col("poss_ret") + r * extra_ret)
    recount = _recount(rows, pa_pairs, stats)
    frame = frame.join(recount, on=keys, how="left")
    return frame.select(
        *keys,
        pl.when(r >= n).then(full).otherwise(pl.col("_rc") / pl.col("_rc_poss")).alias("_rnonrel"),
        pl.when(r_ret >= n_ret)
        .then(full_ret)
        .otherwise(pl.col("_rc_ret") / pl.col("_rc_ret_poss"))
        .alias("_rnonrel_ret"),
    )


def _recount(rows: pl.DataFrame, pa_pairs: pl.DataFrame, stats: pl.DataFrame) -> pl.DataFrame:
    """The R < N recounts (m_prefs_avgjg_Rnonrel.c, m_prefs_avgjg_Rnonrel_ret.c)."""
    ec = _recount_ec(rows.filter(pl.col("ec")), stats)
    pa = _recount_pa(rows.filter(~pl.col("ec")), pa_pairs, stats)
    return pl.concat([ec, pa], how="vertical")


def _recount_ec(rows: pl.DataFrame, stats: pl.DataFrame) -> pl.DataFrame:
    keys = [_Q, _JG]
    rows = rows.join(stats, on=keys).with_columns(
        pl.col("rel_level").min().over(keys).alias("_low"),
        (pl.col("docid") < pl.col("njr")).alias("_ret"),
    )
    low = rows.filter(pl.col("rel_level") == pl.col("_low")).sort([*keys, "docid"])
    low = low.with_columns(pl.int_range(pl.len()).over(keys).alias("_i"))
    out = []
    for name, limit, only_ret in (("_rc", "R", False), ("_rc_ret", "R_ret", True)):
        side = rows.filter(pl.col("_ret")) if only_ret else rows
        first = low.filter(pl.col("_i") < pl.col(limit))
        if only_ret:
            first = first.filter(pl.col("_ret"))
        a = side.select(*keys, pl.col("docid").alias("a"), pl.col("rel_level").alias("la"), "njr")
        rel_b = side.filter(pl.col("rel_level") > pl.col("_low")).select(
            *keys, pl.col("docid").alias("b"), pl.col("rel_level").alias("lb")
        )
        ful_cond = (pl.col("a") < pl.col("b")) & (pl.col("a") < pl.col("njr"))
        relrel = (
            a.join(rel_b, on=keys)
            .filter(pl.col("la") > pl.col("lb"))
            .group_by(keys)
            .agg(ful_cond.sum().alias("f1"), pl.len().alias("t1"))
        )
        cross = (
            a.join(first.select(*keys, pl.col("docid").alias("b")), on=keys)
            .group_by(keys)
            .agg(ful_cond.sum().alias("f2"), pl.len().alias("t2"))
        )
        frame = (
            rows.select(*keys)
            .unique()
            .join(relrel, on=keys, how="left")
            .join(cross, on=keys, how="left")
            .fill_null(0)
        )
        out.append(
            frame.select(
                *keys,
                (pl.col("f1") + pl.col("f2")).cast(pl.Float64).alias(name),
                (pl.col("t1") + pl.col("t2")).cast(pl.Float64).alias(f"{name}_poss"),
            )
        )
    return out[0].join(out[1], on=keys)


def _recount_pa(rows: pl.DataFrame, pairs: pl.DataFrame, stats: pl.DataFrame) -> pl.DataFrame:
    keys = [_Q, _JG]
    level = (
        rows.sort(
            [*keys, "jsg", "rel_level", "docid"], descending=[False, False, False, True, False]
        )
        .group_by([*keys, "docid"], maintain_order=True)
        .agg(pl.col("rel_level").last(), pl.col("njr").first())
        .join(stats.select(*keys, "R"), on=keys)
        .sort([*keys, "docid"])
    )
    nonrel = pl.col("rel_level") == 0
    ret = pl.col("docid") < pl.col("njr")
    seen = nonrel.cast(pl.Int64).cum_sum().over(keys)
    seen_ret = (nonrel & ret).cast(pl.Int64).cum_sum().over(keys)
    level = level.with_columns(
        (~nonrel | (seen <= pl.col("R"))).alias("_keep"),
        (ret & (~nonrel | (seen_ret <= pl.col("R")))).alias("_keep_ret"),
    )
    out = []
    for name, keep in (("_rc", "_keep"), ("_rc_ret", "_keep_ret")):
        kept = level.filter(pl.col(keep)).select(*keys, "docid")
        inside = pairs.join(kept.rename({"docid": "a"}), on=[*keys, "a"], how="semi").join(
            kept.rename({"docid": "b"}), on=[*keys, "b"], how="semi"
        )
        flags = _pair_flags(inside.join(level.select(_Q, "njr").unique(), on=_Q))
        ful = pl.col("ful_ret") + (pl.col("ful_imp") if name == "_rc" else 0)
        frame = flags.group_by(keys).agg(
            ful.sum().cast(pl.Float64).alias(name),
            pl.len().cast(pl.Float64).alias(f"{name}_poss"),
        )
        out.append(rows.select(*keys).unique().join(frame, on=keys, how="left").fill_null(0.0))
    return out[0].join(out[1], on=keys)


def _pair_measures(pairs: pl.DataFrame) -> pl.DataFrame:
    """prefs_pair, prefs_pair_ret and prefs_pair_imp from the counts of every group."""
    lo = pl.min_horizontal("a", "b")
    hi = pl.max_horizontal("a", "b")
    counts = (
        pairs.with_columns(lo.alias("lo"), hi.alias("hi"))
        .group_by(_Q, "lo", "hi")
        .agg(
            (pl.col("a") < pl.col("b")).sum().alias("f"),
            pl.len().alias("t"),
            pl.col("njr").first(),
        )
    )
    term = pl.col("f").cast(pl.Float64) / pl.col("t").cast(pl.Float64)
    both = pl.col("hi") < pl.col("njr")
    mixed = (pl.col("lo") < pl.col("njr")) & ~both
    # exact sums (fixed point): the pairs come in no fixed order
    agg = counts.group_by(_Q).agg(
        exact_sum(pl.when(both).then(term).otherwise(0.0)).alias("s_both"),
        exact_sum(pl.when(mixed).then(term).otherwise(0.0)).alias("s_mixed"),
        exact_sum(pl.when(both | mixed).then(term).otherwise(0.0)).alias("s_imp"),
        both.sum().alias("n_both"),
        mixed.sum().alias("n_mixed"),
        pl.len().alias("n_all"),
    )

    def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
        return pl.when(den > 0).then(num / den).otherwise(0.0)

    s_imp = pl.col("s_imp")
    return agg.select(
        _Q,
        ratio(s_imp, pl.col("n_all")).alias("prefs_pair"),
        ratio(pl.col("s_both"), pl.col("n_both")).alias("prefs_pair_ret"),
        ratio(s_imp, pl.col("n_both") + pl.col("n_mixed")).alias("prefs_pair_imp"),
    )
