"""What the checks of every route read of each ranking: one group-by of the run.

Each wing checks the run it is given before it scores it (a document listed twice, a
rank held twice, a null or NaN rank) and some read its rankings' lengths and whether
their ranks run 1 to the length. Those are counts per ranking, a hash set of the
documents and one of the ranks each: on a large run the dearest part of a check.
:func:`ranking_facts` is the one formulation of them, cached: where two wings of one
call (the accuracy metrics and the exposure measures) ask it of the same rows with
the same keys, the door builds them once (:class:`SharedFacts`) and hands the one
cached frame to both, and polars computes one group-by with the columns either reads
(the projections of a cache's readers are joined). Left to polars' common-subplan
elimination, two such group-bys built apart stayed two once each sat inside its
route's own cached frames.

Examples
--------
A ranking's duplicates are counts: the rows less the distinct documents (the ranks
likewise); whether its ranks are 1 to its length reads four of the columns:

>>> import polars as pl
>>> run = pl.LazyFrame({"q": [1, 1, 1, 2, 2], "doc": [7, 8, 7, 7, 8], "rank": [1, 2, 3, 1, 3]})
>>> facts = ranking_facts(run, ["q"], pl.col("doc"), "rank").sort("q").collect()
>>> facts.select("q", (pl.col(LENGTH) - pl.col(DOCS)).alias("listed twice")).rows()
[(1, 1), (2, 0)]
>>> facts.select("q", whole_ranks().alias("ranked 1..n")).rows()
[(1, True), (2, False)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import polars as pl

__all__ = [
    "ABOVE",
    "AGAINST",
    "BELOW",
    "DOCS",
    "HIGH",
    "ID_ROWS",
    "ITEM_USERS",
    "LENGTH",
    "LOW",
    "NAN",
    "NANS",
    "NULL_DOCS",
    "ORDERED",
    "PART",
    "RANKS",
    "SAMPLES",
    "WIDE_INTEGERS",
    "SharedFacts",
    "SharedIds",
    "against_value",
    "disagreements",
    "id_rows",
    "judged_join",
    "ranking_facts",
    "score_order",
    "shared_frame",
    "whole_ranks",
]

_P = "__irm_facts_"
#: The ranking's rows.
LENGTH = f"{_P}length"
#: Its distinct documents (of the document expression given: the ids, or a hash).
DOCS = f"{_P}docs"
#: Its rows with an order value (rank or score) that is not null.
ORDERED = f"{_P}ordered"
#: Its distinct order values, nulls left out.
RANKS = f"{_P}ranks"
#: The least and the greatest order value.
LOW, HIGH = f"{_P}low", f"{_P}high"
#: Whether an order value is NaN (float columns; ``False`` otherwise).
NAN = f"{_P}nan"
#: Whether an order value has a fractional part (float columns; ``False`` otherwise).
PART = f"{_P}part"
#: Its rows with a null document (of the document expression given).
NULL_DOCS = f"{_P}null_docs"
#: Its order values below 1 (a rank below the top one).
BELOW = f"{_P}below"
#: Its NaN order values (float columns; 0 otherwise).
NANS = f"{_P}nans"
#: Its order values of 2**63 or more (the :data:`WIDE_INTEGERS` columns; 0 otherwise).
ABOVE = f"{_P}above"
#: Its distinct values of a sample column (null one of them), where the caller names one.
SAMPLES = f"{_P}samples"
#: Its rows that score below a row at a later rank (where the caller names a score
#: column to check the ranks against: :func:`disagreements`).
AGAINST = f"{_P}against"
_INT64_MAX = 2**63 - 1
#: The integer dtypes whose values go beyond Int64, where a rank is cast to Int64: a
#: rank of 2**63 or more there is refused, never read as null (a rank never held).
WIDE_INTEGERS: tuple[type[pl.DataType], ...] = (pl.UInt64, pl.Int128, pl.UInt128)


def score_order(column: str, dtype: pl.DataType) -> pl.Expr:
    """The value a ranking sorts column ``column`` (of ``dtype``) by, score descending:
    integers and decimals as they are, exactly, as ``evaluate`` ranks them (as Float64,
    integers beyond 2**53 such as nanosecond timestamps, and decimals of more than 15
    digits, tie with their neighbours); a float or a Boolean as Float64 (exact).

    >>> import polars as pl
    >>> frame = pl.DataFrame({"s": [2**62 + 1, 2**62]})
    >>> frame.select(score_order("s", frame.schema["s"]).rank("ordinal"))["s"].to_list()
    [2, 1]
    """
    if dtype.is_integer() or isinstance(dtype, pl.Decimal):
        return pl.col(column)
    return pl.col(column).cast(pl.Float64)


def disagreements(rank: str, score: pl.Expr, *, ties: bool = False) -> pl.Expr:
    """In a group-by of one ranking per group: its rows whose ``score`` (an expression,
    :func:`against_value`) is below that of a row at a later (greater) ``rank``, where
    the rank and the score order the ranking differently (a null score, or a row without
    a rank, is compared with nothing). ``ties``: ranks may repeat
    (duplicate checks off), so rows of one rank are sorted by score, highest first, and
    are not counted against one another; without it a repeated rank is refused before
    this count is read, and one sort key is cheaper (measured on 10M rows: 0.5 s against
    0.9 s beside the other facts).

    >>> frame = pl.DataFrame({"q": [1, 1, 1, 2, 2], "rank": [1, 2, 3, 1, 2],
    ...                       "score": [9.0, 5.0, 6.0, 2.0, 2.0]})
    >>> frame.group_by("q").agg(disagreements("rank", pl.col("score"))).sort("q").rows()
    [(1, 1), (2, 0)]

    Tied scores are no disagreement: the ranks break the tie.
    """
    score = pl.when(pl.col(rank).is_not_null()).then(score)  # a row without a rank: none
    if ties:
        by_rank = score.sort_by([pl.col(rank), score], descending=[False, True], nulls_last=True)
    else:
        by_rank = score.sort_by(rank)
    # the greatest score at each later rank (a null skipped: the next one's)
    later = by_rank.cum_max(reverse=True).fill_null(strategy="backward").shift(-1)
    return (by_rank < later).sum()


def against_value(column: str, dtype: pl.DataType) -> pl.Expr:
    """A score column as :func:`disagreements` compares it with the ranks: as
    :func:`score_order` reads it (integers and decimals exactly), a float rounded to 12
    significant digits (sums of the same terms added in another order differ beyond
    them, and :func:`~polars_irmetrics.fuse` ranks its fused scores so: such scores
    tie, and the ranks break the tie), a NaN as null (compared with nothing: its order
    is unknown, and the ranks stand).

    >>> frame = pl.DataFrame({"s": [7.2, 7.199999999999999, float("nan")]})
    >>> frame.select(against_value("s", pl.Float64()))["s"].to_list()
    [7.2, 7.2, None]
    """
    value = score_order(column, dtype)
    if not dtype.is_float():
        return value
    return value.fill_nan(None).round_sig_figs(12)


def ranking_facts(
    run: pl.LazyFrame,
    keys: Sequence[str],
    doc: pl.Expr,
    order: str | None,
    *,
    sample: str | None = None,
    against: str | None = None,
    ties: bool = False,
) -> pl.LazyFrame:
    """One row per ranking (the ``keys``) of ``run``: the columns above, cached.

    ``doc``: the expression whose distinct values are counted (a document id, or its
    hash where the caller recounts a flagged ranking exactly); ``order``: the rank or
    score column, as the run holds it (a float's NaN and fractions are read here, not
    after a cast), or ``None`` for a table without one (then only :data:`LENGTH`,
    :data:`DOCS` and :data:`NULL_DOCS`). ``sample``: a column whose distinct values
    are counted too (:data:`SAMPLES`; a stochastic policy's sampled rankings, which a
    route reading one ranking per query refuses). ``against``: a score column the ranks
    (``order``) are checked against (:data:`AGAINST`: :func:`disagreements`, ``ties``
    as there), where ``order='auto'`` reads the ranks of a run that has both. Only the
    columns some reader selects are computed.
    """
    counts = [
        pl.len().alias(LENGTH),
        doc.n_unique().alias(DOCS),
        doc.null_count().alias(NULL_DOCS),
    ]
    if order is not None:
        value = pl.col(order)
        dtype = run.collect_schema()[order]
        floating = dtype.is_float()
        counts += [
            value.count().alias(ORDERED),
            value.drop_nulls().n_unique().alias(RANKS),
            value.min().alias(LOW),
            value.max().alias(HIGH),
            (value.is_nan().any() if floating else pl.lit(False)).alias(NAN),
            ((value != value.floor()).any() if floating else pl.lit(False)).alias(PART),
            (value < 1).sum().alias(BELOW),
            (value.is_nan().sum() if floating else pl.lit(0, pl.UInt32)).alias(NANS),
            # the dtypes whose values go beyond Int64, where a rank is cast
            ((value > _INT64_MAX).sum() if dtype in WIDE_INTEGERS else pl.lit(0, pl.UInt32)).alias(
                ABOVE
            ),
        ]
    if sample is not None:
        counts.append(pl.col(sample).n_unique().alias(SAMPLES))
    if against is not None and order is not None:
        score = against_value(against, run.collect_schema()[against])
        counts.append(disagreements(order, score, ties=ties).alias(AGAINST))
    return run.group_by(list(keys)).agg(counts).cache()


def whole_ranks() -> pl.Expr:
    """On :func:`ranking_facts`' rows: whether the ranking's ranks are 1 to its length,
    each once (no null, NaN or fraction among them)."""
    length = pl.col(LENGTH)
    return (
        (pl.col(ORDERED) == length)
        & (pl.col(RANKS) == length)
        & (pl.col(LOW) == 1)
        & (pl.col(HIGH) == length)
        & ~pl.col(NAN)
        & ~pl.col(PART)
    )


def judged_join(rows: pl.LazyFrame, judgments: pl.LazyFrame, on: list[str]) -> pl.LazyFrame:
    """``rows`` (a run's) inner-joined with ``judgments`` on ``on``, the hash table
    built on the judgments (the small side). The no-op filter is a hint: polars 2.1's
    streaming engine adds a runtime filter on the probe side (the run's keys, tested
    against the judged ones before the rest of a row is decoded) only when the build
    side is a filtered scan. Measured from Parquet, 10M run rows: the join 0.45 s ->
    0.29 s, and peak memory 530 -> 200 MiB. Results never depend on it.

    >>> run = pl.LazyFrame({"q": [1, 1], "doc": [5, 6]})
    >>> qrels = pl.LazyFrame({"q": [1], "doc": [6], "rel": [2]})
    >>> judged_join(run, qrels, ["q", "doc"]).collect().rows()
    [(1, 6, 2)]
    """
    return rows.join(
        judgments.filter(pl.lit(True)),
        on=on,
        how="inner",
        nulls_equal=False,
        build_side="prefer_right",
    )


@dataclass(frozen=True)
class SharedFacts:
    """:func:`ranking_facts` of the run as the door holds it, one ranking per query
    (``keys``: the query column), the distinct documents counted by id and the order
    read from ``order``: built once for every route of one call that checks the run.

    A route reads it through :meth:`frame` where its own rows and checks are these
    (the same keys and order column, ids not hashed); the ids may have been cast to
    match another table since (an integer widened), which changes no count, and
    :meth:`frame` casts the keys to the route's dtypes. ``against``: the score column
    the ranks are checked against (:func:`ranking_facts`' ``against``; its ``ties`` are
    the call's ``check_duplicates``, one for every route), or ``None``.
    """

    table: pl.LazyFrame
    keys: tuple[str, ...]
    order: str
    against: str | None = None
    #: The run's rows inner-joined with the judgments (:meth:`with_judged`), or ``None``.
    judged: pl.LazyFrame | None = field(default=None, compare=False, repr=False)
    #: The judgments table :attr:`judged` was joined with, as the door holds it.
    judgments: pl.LazyFrame | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        run: pl.LazyFrame,
        query_id: str,
        doc_id: str,
        order: str,
        against: str | None = None,
        *,
        ties: bool = False,
    ) -> SharedFacts:
        """The facts of ``run``'s rankings, one per query."""
        table = ranking_facts(run, [query_id], pl.col(doc_id), order, against=against, ties=ties)
        return cls(table, (query_id,), order, against)

    def frame(
        self,
        keys: Sequence[str],
        order: str,
        schema: pl.Schema,
        against: str | None = None,
    ) -> pl.LazyFrame | None:
        """The shared frame for a route whose rankings are ``keys`` and whose order
        column is ``order``, and which reads :data:`AGAINST` where it checks its ranks
        ``against`` a score (``None``: a reader of the other columns, which any shared
        frame serves); ``schema``: the route's run, whose key dtypes the frame takes.
        ``None`` where they differ (the route computes its own)."""
        if tuple(keys) != self.keys or order != self.order:
            return None
        if against is not None and against != self.against:
            return None
        return self.table.with_columns(pl.col(key).cast(schema[key]) for key in self.keys)

    # -- the judged rows: the run's rows with a judgment, one join for the routes --

    def with_judged(
        self, run: pl.LazyFrame, qrels: pl.LazyFrame, doc_id: str, relevance: str
    ) -> SharedFacts:
        """These facts with :attr:`judged`: ``run``'s rows (the key, ``doc_id`` and the
        order column, as the run holds them) inner-joined with ``qrels``' (the key,
        ``doc_id`` and ``relevance``) on the query and the document, cached: the join
        the accuracy metrics make and the expected-exposure measures' relevant rows
        are read from (one join of the run for both, :func:`judged_join`). Where a
        route reads ``qrels`` itself
        (the very object) and ranks by :attr:`order`, :meth:`judged_frame` serves it.

        >>> run = pl.LazyFrame({"q": [1, 1, 2], "doc": [5, 6, 5], "rank": [1, 2, 1]})
        >>> qrels = pl.LazyFrame({"q": [1, 2], "doc": [6, 7], "rel": [2, 1]})
        >>> facts = SharedFacts.of(run, "q", "doc", "rank").with_judged(run, qrels, "doc", "rel")
        >>> facts.judged_frame(qrels, "rank", run.collect_schema(), "doc").collect().rows()
        [(1, 6, 2, 2)]
        """
        keys = list(self.keys)
        judged = judged_join(
            run.select(*keys, doc_id, self.order),
            qrels.select(*keys, doc_id, relevance),
            [*keys, doc_id],
        ).cache()
        return replace(self, judged=judged, judgments=qrels)

    def judged_frame(
        self, qrels: pl.LazyFrame | None, order: str, schema: pl.Schema, doc_id: str
    ) -> pl.LazyFrame | None:
        """:attr:`judged` for a route that joins ``qrels`` (the door's very table, not
        one filtered or re-weighted since) with the run ranked by ``order``, its ids
        (the key and ``doc_id``) cast to the route's run (``schema``: an id widened to
        match another table changes no match); ``None`` where it is another table or
        order (the route joins its own)."""
        if self.judged is None or qrels is None or qrels is not self.judgments:
            return None
        if order != self.order:
            return None
        ids = [*self.keys, doc_id]
        return self.judged.with_columns(pl.col(c).cast(schema[c]) for c in ids)


@dataclass(frozen=True)
class SharedIds:
    """The distinct document ids and the distinct query ids of the run as the door holds
    it, each one cached frame (one column, named as the run names it): what every
    route's coverage tally counts (how groups=, interactions=, item_features= or
    Elliot's clusters line up with the run's documents or users) and Elliot's users
    read, so that one pass of the run gives them all. A tally casts the ids to its
    other table's dtype after: a cast of distinct ids keeps them distinct.

    Examples
    --------
    >>> run = pl.LazyFrame({"q": [1, 1, 2], "doc": ["a", "b", "a"]})
    >>> ids = SharedIds.of(run, "q", "doc")
    >>> sorted(ids.docs.collect()["doc"]), sorted(ids.queries.collect()["q"])
    (['a', 'b'], [1, 2])
    """

    docs: pl.LazyFrame
    queries: pl.LazyFrame
    #: The side tables' frames the routes of the call share (:meth:`shared`).
    held: dict[tuple[object, ...], tuple[pl.LazyFrame, pl.LazyFrame]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, run: pl.LazyFrame, query_id: str, doc_id: str) -> SharedIds:
        """The distinct ids of ``run``'s ``doc_id`` and ``query_id`` columns."""
        return cls(run.select(doc_id).unique().cache(), run.select(query_id).unique().cache())

    def shared(self, source: pl.LazyFrame, kind: str, built: pl.LazyFrame) -> pl.LazyFrame:
        """``built`` cached, or the frame a route of this call cached for the same pass
        (``kind``) over the same side table (``source``, the very object the door
        was given) with the same columns and dtypes: two routes' caches of one pass,
        built apart, are two passes (polars' elimination of common subplans does not
        merge the plans inside two caches). The routes that call this build ``kind``
        the same way from ``source``: ``'pairs'``, its distinct rows of the keys and
        the (user, item) ids; ``'item_users'``, those pairs counted per keys and item
        in a Float64 column :data:`ITEM_USERS`; ``'id_rows'``, :func:`id_rows`.

        >>> interactions = pl.LazyFrame({"user": [1, 1, 2], "item": [5, 5, 5]})
        >>> ids = SharedIds.of(pl.LazyFrame({"q": [1], "doc": [5]}), "q", "doc")
        >>> one = ids.shared(interactions, "pairs", interactions.unique())
        >>> ids.shared(interactions, "pairs", interactions.unique()) is one
        True
        >>> ids.shared(interactions.clone(), "pairs", interactions.unique()) is one
        False
        """
        key = (id(source), kind, tuple(built.collect_schema().items()))
        held = self.held.get(key)
        if held is not None and held[0] is source:
            return held[1]
        frame = built.cache()
        self.held[key] = (source, frame)
        return frame


#: :meth:`SharedIds.shared`'s ``'item_users'`` count: an item's distinct users.
ITEM_USERS = f"{_P}item_users"


#: :func:`id_rows`' count: an id's rows in the side table.
ID_ROWS = f"{_P}id_rows"


def id_rows(
    ids: SharedIds | None,
    source: pl.LazyFrame,
    frame: pl.LazyFrame,
    keys: Sequence[str],
    column: str,
) -> pl.LazyFrame:
    """``frame``'s rows (``source``, the side table the door was given, its ids cast as
    the route casts them) counted per ``keys`` and id ``column``, in an Int64 column
    :data:`ID_ROWS`: the items' popularity and their number (the catalogue's size), or
    the users with a history, and the distinct ids every coverage tally counts; one
    group-by for every route of the call that reads them (:meth:`SharedIds.shared`).
    A null id is one id, as ``n_unique`` counts it.

    >>> history = pl.LazyFrame({"user": [1, 2, 2], "item": ["a", "a", None]})
    >>> id_rows(None, history, history, [], "item").sort("item").collect().rows()
    [(None, 1), ('a', 2)]
    """
    built = frame.group_by([*keys, column]).agg(pl.len().cast(pl.Int64).alias(ID_ROWS))
    return shared_frame(ids, source, "id_rows", built)


def shared_frame(
    ids: SharedIds | None, source: pl.LazyFrame, kind: str, built: pl.LazyFrame
) -> pl.LazyFrame:
    """:meth:`SharedIds.shared` where the door shares frames (``ids`` given), else
    ``built`` cached."""
    return built.cache() if ids is None else ids.shared(source, kind, built)
