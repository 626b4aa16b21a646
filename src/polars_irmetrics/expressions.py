"""Metric expressions: ``df.group_by("query_id").agg(irm.ndcg(k=10))``.

Each function returns a ``pl.Expr`` that aggregates the rows of one query of a
*judged table*: one row per document with its ``relevance`` and its ``rank``
(1 = top; a null rank means judged but not retrieved). The judgments are the table's
own rows, so ``R`` (the number of relevant documents) and the ideal DCG come from
the table; documents not in it are unknown. To evaluate a run against separate
judgments, use :func:`polars_irmetrics.evaluate`, which builds the judged rows for you.

To rank by score instead of a rank column, pass ``rank=irm.rank_by_score()``
(score descending, ties broken by doc_id descending as text, as trec_eval does; a
null score, like a null rank, is a judged document that was not retrieved). On the
same judged table, every expression gives what :func:`polars_irmetrics.evaluate`
with ``qrels=None`` gives per query.

**One group, one ranking.** A group whose rows are not one ranking of one query has
no value: the expression is null for a group where a rank is held twice or is below
1, where (when the frame has a ``query_id`` column) the rows hold more than one query
or a null query id, where (when the frame has the ``doc_id`` column, named by
``doc_id=``) a document is listed twice or has no id, or where a relevance label is
NaN, infinite, of magnitude 2**32 or more or below 2**-30 (other than 0), or between
-1 and 0, or where a term the metric adds is 2**32 or more (``gain='exponential'``'s
2**label - 1 of a label above 32 that the metric reads: ``irm.ndcg(10,
gain='exponential')`` of a label 60000 is null, never NaN or infinite) — each where
``evaluate`` refuses the
table — and for no rows at all (a frame with none: no ranking, where ``evaluate``
gives no row). A null relevance is a retrieved document without a judgment (a run
left-joined with its judgments gives one), read as not relevant, as trec_eval reads
an unjudged document; ``evaluate`` refuses a null label in ``qrels=``, where it can
only be a damaged judgment. A group whose every label is null holds no judgment (a
query the judgments lack, or spell otherwise: ``'q1 '`` for ``'q1'``): its value is
null, where ``evaluate`` leaves the query out as trec_eval does, never a 0 that would
weigh in a mean over the queries. A ``doc_id=`` other than ``'doc_id'`` names a column the
frame must have (a misspelt name would leave the duplicate check unmade). Grouping
by anything coarser than the query (a segment, a day) gives nulls,
never a number; to average per segment, group by the segment and the query, then
average the per-query values per segment. Only a frame without a ``query_id`` column
whose ranks and documents never repeat across its queries (one document each, say)
cannot be told from one query, so group by the query:

>>> import polars as pl
>>> import polars_irmetrics as irm
>>> judged = pl.DataFrame({
...     "segment": ["web"] * 4,
...     "query_id": ["q1", "q1", "q2", "q2"],
...     "doc_id": ["a", "b", "a", "c"],
...     "rank": [1, 2, 1, 2],
...     "relevance": [1, 0, 0, 1],
... })
>>> judged.group_by("segment").agg(irm.ndcg(k=10), irm.map())
shape: (1, 3)
┌─────────┬─────────┬──────┐
│ segment ┆ ndcg@10 ┆ map  │
│ ---     ┆ ---     ┆ ---  │
│ str     ┆ f64     ┆ f64  │
╞═════════╪═════════╪══════╡
│ web     ┆ null    ┆ null │
└─────────┴─────────┴──────┘
>>> per_query = judged.group_by("segment", "query_id").agg(irm.map())
>>> per_query.group_by("segment").agg(pl.col("map").mean()).item(0, "map")
0.75

A frame of no rows holds no ranking, with or without its id columns:

>>> judged.clear().select(irm.ndcg(k=10), irm.mrr(), irm.rbp_residual()).rows()
[(None, None, None)]

A frame without the rank column is not ranked by its scores silently: when the query is
planned (``collect()``, or the eager ``agg``), a missing rank, relevance or score
column raises :class:`~polars_irmetrics.errors.ColumnNotFoundError` naming it and the
argument that names it, and a rank or relevance column that is not numeric (a rank
column that is not of an integer dtype, as :func:`~polars_irmetrics.evaluate` refuses
it) a :class:`~polars_irmetrics.errors.ColumnTypeError`. A ``rank=`` expression is read as
such a column: its dtype, known only when the query is planned, must be an integer (a
``ColumnTypeError`` at ``collect()`` otherwise), and it gives one rank per row, so a
literal is the rank of every row (``rank=pl.lit(1)`` holds rank 1 twice where the group
has two rows: null, as the same column would give). An argument that names no column
(``rank=5``, ``doc_id=None``, ``relevance=pl.col("relevance")``: only ``rank=`` takes an
expression) is refused at the call with
:class:`~polars_irmetrics.errors.InvalidValueError`. A numpy number is read as the
Python number it equals (``k=np.int64(10)`` is ``k=10``, and names the column ``ndcg@10``).

>>> q1 = judged.filter(pl.col("query_id") == "q1")
>>> q1.select(irm.precision(k=1, rank=pl.lit(1))).item() is None  # rank 1 held twice
True
>>> q1.select(irm.mrr(rank=pl.col("rank").cast(pl.Float64)))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
polars_irmetrics.errors.ColumnTypeError: the rank= expression has dtype Float64; ...

The formulas live in :mod:`polars_irmetrics.metrics`; these functions only bind
arguments. The result column is named by the metric's canonical name
(``ndcg@10``; ``precision(rel=2)@3`` with ``relevance_level=2``, as
:func:`~polars_irmetrics.evaluate` names it); rename it with ``.alias(...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

import polars as pl
import polars.selectors as cs

from polars_irmetrics.errors import ColumnNotFoundError, MetricParameterError
from polars_irmetrics.ground.deferred import (
    PROBE,
    Need,
    checked_column,
    checked_columns,
    integer_rows,
)
from polars_irmetrics.ground.docstrings import fill_shared
from polars_irmetrics.ground.options import check_column_name, check_relevance_level
from polars_irmetrics.metrics.registry import request
from polars_irmetrics.metrics.scope import TableScope, unfit_label
from polars_irmetrics.metrics.spec import ParamValue

__all__ = [
    "arhr",
    "bpref",
    "cg",
    "dcg",
    "err",
    "f1",
    "f1_beta",
    "fcp",
    "hit_rate",
    "idcg",
    "infap",
    "iprec",
    "judged",
    "map",
    "mar",
    "mrr",
    "ncrr",
    "ndcg",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "pap",
    "partial_auc",
    "precision",
    "r_precision",
    "rank_by_score",
    "rbp",
    "rbp_residual",
    "recall",
    "relative_precision",
    "rocauc",
    "rprec_mult",
    "trec_ndcg",
    "unjudged",
]

RankSpec = str | pl.Expr
Gain = Literal["linear", "exponential"]
Ideal = Literal["judgments", "retrieved"]
Ties = Literal["break", "average"]

#: The parameter paragraphs the metric functions share, written once: a docstring's
#: parameter whose description is the line ``%(name)s`` gets this text
#: (:func:`_shared_doc`, at import), so help(), numpydoc and the API reference read it.
SHARED_PARAMS: dict[str, str] = {
    "relevance": "The relevance label column.",
    "rank": "The rank column (1 = top; null = judged but not retrieved), or an expression "
    "such\nas :func:`rank_by_score`, read as that column would be: of an integer dtype "
    "(a\n``ColumnTypeError`` when the query is planned otherwise), one rank per row (a "
    "literal\nis every row's rank).",
    "doc_id": "The document id column, when the frame has one: a group that lists a "
    "document\ntwice, or one without an id, is not one ranking (the value is null). A "
    "name other\nthan ``'doc_id'`` must name a column of the frame.",
    "k": "Cutoff: only ranks 1..k count; ``None`` for the whole list.",
    "relevance_level": "A document is relevant when its label is at or above this "
    "(trec_eval ``-l``).",
    "gain": "``'linear'``: the label itself; ``'exponential'``: 2^label \u2212 1 (a label "
    "above 32\nthat the metric reads makes the value null, as ``evaluate`` refuses it: "
    "2^label\nis beyond its exact sums).",
    "ideal": "``'judgments'``: the ideal ranking of every judged document; ``'retrieved'``: "
    "of\nthe retrieved ones only.",
    "score": "The score column, read only with ``ties='average'`` (the tie groups: name "
    "the column ``rank=irm.rank_by_score(...)`` ranks by); another name with "
    "``ties='break'`` is refused.",
    "log_base": "Base b of the discount's logarithm (scikit-learn's ``log_base``), above 1.",
    "p": "Persistence: the probability of going on to the next rank.",
}

_F = TypeVar("_F", bound=Callable[..., pl.Expr])


def _shared_doc(function: _F) -> _F:
    """Fill ``function``'s ``%(name)s`` lines with :data:`SHARED_PARAMS`
    (:func:`~polars_irmetrics.ground.docstrings.fill_shared`): a name that is not shared,
    or not a parameter of ``function``, fails at import."""
    return fill_shared(function, SHARED_PARAMS)


def rank_by_score(score: str = "score", doc_id: str = "doc_id") -> pl.Expr:
    """Rank within the group by ``score`` descending, ties by ``doc_id`` descending.

    This is trec_eval's ordering (document ids compared as text), the one
    :func:`polars_irmetrics.evaluate` gives a table with scores. Use it as the
    ``rank=`` argument of any metric expression.

    A null score is a judged document the system did not retrieve (a full join of a
    run with its judgments leaves one): its rank is null, as in a judged table's rank
    column, and the other documents are ranked 1, 2, ... among themselves. A NaN score
    cannot be ranked: its rank is 0, which no metric expression accepts (the group's
    value is null, where ``evaluate`` refuses the table).

    The ranks are distinct, so a group holding several queries is told by its
    documents: the metric's ``doc_id=`` column (``doc_id`` by default) must name the
    same column as this ``doc_id``.

    Parameters
    ----------
    score
        The score column (higher is better; null: not retrieved).
    doc_id
        The document id column: ties are broken by it, descending, compared as text.

    Returns
    -------
    pl.Expr
        Int64 ranks named ``rank``: 1 = top, null where the score is null, 0 where it
        is NaN.

    See Also
    --------
    polars_irmetrics.evaluate : ranks a table with scores the same way.

    Examples
    --------
    Documents ``b`` and ``c`` tie on score; ``c`` sorts above ``b`` (descending id).
    ``d`` has no score: it was judged but not retrieved.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "score": [1.0, 2.0, 2.0, None]})
    >>> df.select(irm.rank_by_score())["rank"].to_list()
    [3, 2, 1, None]

    Two queries in one group list document ``a`` twice: not one ranking, so the
    metric is null (it reads the ``doc_id`` column too):

    >>> two = pl.DataFrame({"doc_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0],
    ...                     "relevance": [1, 0, 1]})
    >>> two.select(irm.rank_by_score())["rank"].to_list()
    [1, 2, 3]
    >>> two.select(irm.ndcg(k=10, rank=irm.rank_by_score())).item() is None
    True
    """
    check_column_name("score", score)
    check_column_name("doc_id", doc_id)
    fix = "name yours with irm.rank_by_score(score=..., doc_id=...)"
    needs = (
        Need(score, "scores", fix, numeric=True),
        Need(doc_id, "ids", fix, numeric=False, flat=True),
    )
    return checked_columns(needs, _rank_by_score).alias("rank")


def _rank_by_score(score: pl.Expr, doc_id: pl.Expr) -> pl.Expr:
    """:func:`rank_by_score` of columns known to exist (built once the plan is).

    Kept small: a metric reads its rank a few hundred times. Repeated documents are
    the metric's check (once per group), not this expression's (once per read).
    """
    order = pl.arg_sort_by(
        [score, doc_id.cast(pl.String)], descending=[True, True], nulls_last=True
    ).arg_sort()
    nan = score.cast(pl.Float64).is_nan()
    rank = order.cast(pl.Int64) + 1
    return pl.when(nan).then(pl.lit(0, pl.Int64)).when(score.is_not_null()).then(rank)


#: The query column a group of a metric expression must hold one value of, where the
#: frame has it: a group of several queries is not one ranking.
QUERY_ID = "query_id"

#: The document column read where the frame has it; a ``doc_id=`` naming any other
#: column must name one the frame has.
DOC_ID = "doc_id"


@dataclass(frozen=True)
class _DistinctDocuments:
    """Group-level: the ids of column ``name`` are all present and distinct, and the
    group holds one query (one value of :data:`QUERY_ID`); each check true when the
    frame has no such column (deferred as :func:`_column` is)."""

    name: str

    def __call__(self, inputs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
        ((_, dtype),) = inputs
        names = {field.name for field in getattr(dtype, "fields", [])}
        if self.name not in names and self.name != DOC_ID:
            # a column named by doc_id= is read, not skipped: a misspelt name would
            # leave the check of a document listed twice unmade
            raise ColumnNotFoundError(
                f"column {self.name!r} not found in the frame: the metric reads its "
                f"document ids from it (doc_id={self.name!r}); name yours with "
                "doc_id=..., or leave doc_id= out where the frame has no id column"
            )
        ok = pl.len() > 0  # no rows, no ranking: null, as evaluate gives no row
        if self.name in names:
            doc = pl.col(self.name)
            # and-ed with the row count: a frame with a doc_id column and no rows was
            # 0.0 (1.0 for rbp_residual), as if it were a ranking that found nothing
            ok = ok & (doc.null_count() == 0) & (doc.n_unique() == doc.len())
        if QUERY_ID in names and self.name != QUERY_ID:
            # one query: every id equal to the first (no hashing, any dtype)
            query = pl.col(QUERY_ID)
            ok = ok & (query.null_count() == 0) & (query == query.first()).all()
        return ok


def _distinct_documents(name: str) -> pl.Expr:
    probe = pl.struct(pl.lit(0).alias(PROBE), cs.by_name(name, QUERY_ID, require_all=False))
    return pl.pipe_with_dtype([probe], _DistinctDocuments(name))


def _judged_query(rel: pl.Expr) -> pl.Expr:
    """Group-level: the group holds a judgment (a label that is not null). A group whose
    every label is null is a query nobody judged (a run left-joined with judgments that
    lack the query, or whose ids are spelt otherwise): :func:`~polars_irmetrics.evaluate`
    leaves such a query out (``unjudged='drop'``, as trec_eval), so its value is null,
    never a 0 that would weigh in a mean over the queries."""
    return rel.is_not_null().any()


def _finite_labels(rel: pl.Expr) -> pl.Expr:
    """Group-level: no label is one :func:`~polars_irmetrics.evaluate` refuses
    (:func:`~polars_irmetrics.metrics.scope.unfit_label`: NaN, which would count as
    relevant since polars orders it above every number; infinite; of magnitude 2**32
    or more, or below 2**-30 other than 0; between -1 and 0)."""
    return ~unfit_label(rel.cast(pl.Float64)).fill_null(False).any()


def _tie_scores(score: str, ties: str) -> str | None:
    """The score column the tie groups read (``ties='average'``), else ``None``; a
    ``score=`` other than the default is refused with ``ties='break'``, which reads the
    ranks alone (it was ignored, and a misspelt column passed silently).

    >>> _tie_scores("s2", "average"), _tie_scores("score", "break")
    ('s2', None)
    >>> _tie_scores("s2", "break")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: score='s2' is read only with ...
    """
    check_column_name("score", score)
    if ties == "average":
        return score
    if score != "score":
        raise MetricParameterError(
            f"score={score!r} is read only with ties='average' (the tie groups); with "
            "ties='break' the order comes from rank= alone: drop score=, or pass ties='average'"
        )
    return None


def _expr(
    metric: str,
    *,
    k: int | None,
    relevance: str,
    rank: RankSpec,
    doc_id: str,
    level: float,
    score: str | None = None,
    **options: ParamValue,
) -> pl.Expr:
    # a level other than the default is in the name (precision(rel=2)@3, as evaluate
    # names it) and checked as evaluate checks it (a NaN, a string), in its own name
    level = check_relevance_level(level)  # a number, not a bool (numpy's as Python's)
    # a column option that is no name was polars' own error (invalid name: 3) or an
    # AttributeError of the rank (5 .sort), before any frame
    check_column_name("relevance", relevance)
    check_column_name("rank", rank, expression="irm.rank_by_score()")
    check_column_name("doc_id", doc_id)
    default = level == 1
    req = request(metric, k=k, level=None if default else level, options=options)
    rel = checked_column(
        relevance, "relevance labels", "name yours with relevance=...", numeric=True
    )
    if isinstance(rank, str):
        rank = checked_column(
            rank,
            "ranks (1 = top)",
            "name yours with rank=..., or rank by score with rank=irm.rank_by_score()",
            numeric=True,
            integer=True,
        )
    else:
        # an expression as a column: of an integer dtype, and one rank per row (a
        # pl.lit(1) was one rank for the group, never held twice: precision 2.0)
        fix = ", or rank by score with rank=irm.rank_by_score()"
        rank = integer_rows(rank, "rank", "ranks (1 = top)", fix)
    scores = None
    if score is not None:
        scores = checked_column(score, "scores", "name yours with score=...", numeric=True)
    one_ranking = _distinct_documents(doc_id) & _finite_labels(rel) & _judged_query(rel)
    scope = TableScope(rel, rank, one_ranking, scores)
    value = req.expr(scope, float(level))
    # a term evaluate refuses (2**label - 1 of a label above 32): no value
    return scope.when_one_ranking(pl.when(scope.terms_fit()).then(value)).alias(req.name)


@_shared_doc
def precision(
    k: int | None = None,
    *,
    adaptive_k: bool = False,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Precision@k: the share of the top k that is relevant.

    ``rel_ret@k / k`` (trec_eval ``P_k``): always divided by ``k``, even when fewer
    than ``k`` documents were retrieved. Without ``k``: relevant retrieved / retrieved
    (trec_eval ``set_P``).

    Parameters
    ----------
    k
        %(k)s
    adaptive_k
        Divide by ``min(k, n)``, n the documents retrieved, instead of ``k``
        (torchmetrics' ``RetrievalPrecision(adaptive_k=True)``).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    The cutoff past the end of the list still divides by k:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, 0, 1]})
    >>> df.select(irm.precision(k=2), irm.precision(k=10), irm.precision())
    shape: (1, 3)
    ┌─────────────┬──────────────┬───────────┐
    │ precision@2 ┆ precision@10 ┆ precision │
    │ ---         ┆ ---          ┆ ---       │
    │ f64         ┆ f64          ┆ f64       │
    ╞═════════════╪══════════════╪═══════════╡
    │ 0.5         ┆ 0.2          ┆ 0.666667  │
    └─────────────┴──────────────┴───────────┘

    torchmetrics' ``adaptive_k``: three documents, so P@10 divides by 3:

    >>> df.select(irm.precision(k=10, adaptive_k=True)).item() == 2 / 3
    True
    """
    return _expr(
        "precision",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        adaptive_k=adaptive_k,
    )


@_shared_doc
def recall(
    k: int | None = None,
    *,
    denominator: Literal["relevant", "capped"] = "relevant",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Recall@k: the share of the relevant documents found in the top k.

    ``rel_ret@k / R`` (trec_eval ``recall_k``), or ``rel_ret@k / min(k, R)`` with
    ``denominator="capped"`` (BEIR's R_cap). 0 for a query with no relevant document.

    Parameters
    ----------
    k
        %(k)s
    denominator
        ``'relevant'``: divide by R (trec_eval); ``'capped'``: by min(k, R) (BEIR).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 1, 0, 1]})
    >>> df.select(irm.recall(k=2), irm.recall(k=2, denominator="capped"))
    shape: (1, 2)
    ┌──────────┬────────────────────────────────┐
    │ recall@2 ┆ recall(denominator='capped')@2 │
    │ ---      ┆ ---                            │
    │ f64      ┆ f64                            │
    ╞══════════╪════════════════════════════════╡
    │ 0.666667 ┆ 1.0                            │
    └──────────┴────────────────────────────────┘
    """
    return _expr(
        "recall",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        denominator=denominator,
    )


@_shared_doc
def f1(
    k: int | None = None,
    *,
    beta: float = 1.0,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """F1@k: harmonic mean of precision@k and recall@k (0 when both are 0).

    Parameters
    ----------
    k
        %(k)s
    beta
        Weight b of recall against precision, (1 + b) P R / (b P + R), as trec_eval's
        ``set_F`` and ir_measures' ``SetF(beta=b)``: b is not squared (scikit-learn's
        ``fbeta_score(beta=x)`` is ``beta=x**2``).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 0, 0, 1]})
    >>> df.select(irm.f1(k=2)).item()  # P = 1/2, R = 1/2
    0.5
    >>> df.select(irm.f1(k=3, beta=2.0)).item()  # P = 1/3, R = 1/2: (3 P R) / (2 P + R)
    0.4285714285714286
    """
    return _expr(
        "f1", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level, beta=beta
    )


@_shared_doc
def r_precision(
    k: int | None = None,
    *,
    denominator: Literal["relevant", "capped"] = "relevant",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """R-precision: precision at rank R, R the number of relevant documents.

    ``rel_ret@R / R`` (trec_eval ``Rprec``). With a cutoff ``k``, Microsoft
    Recommenders' ``r_precision_at_k``: the relevant documents among the top
    ``min(k, R)``, over ``R`` (or over ``min(k, R)`` with ``denominator="capped"``).

    Parameters
    ----------
    k
        Only the top k count (``None``: R-precision as trec_eval has it).
    denominator
        With ``k``: divide by ``R`` (``"relevant"``, Recommenders' code) or by
        ``min(k, R)`` (``"capped"``, precision@k once R >= k, as their docstring says).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [0, 1, 1, 0]})
    >>> df.select(irm.r_precision()).item()  # R = 2, one relevant in the top 2
    0.5

    With ``k = 1`` below R, only the top 1 counts, and the divisor stays R (Recommenders'
    ``r_precision_at_k``), unless capped at k:

    >>> capped = irm.r_precision(1, denominator="capped")
    >>> df.select(irm.r_precision(1)).item(), df.select(capped).item()
    (0.0, 0.0)
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, 0, 1]})
    >>> df.select(irm.r_precision(1)).item(), df.select(capped).item()
    (0.5, 1.0)
    """
    return _expr(
        "r_precision",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        denominator=denominator,
    )


@_shared_doc
def hit_rate(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Hit rate@k (success@k): 1 when a relevant document is in the top k, else 0.

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 0, 1]})
    >>> df.select(irm.hit_rate(k=2), irm.hit_rate(k=3)).row(0)
    (0.0, 1.0)
    """
    return _expr(
        "hit_rate", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level
    )


@_shared_doc
def mrr(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Reciprocal rank of the first relevant document (within the top k); 0 if none.

    Averaged over queries (as :func:`polars_irmetrics.evaluate` does) this is MRR.

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    A query with no relevant document scores 0:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({
    ...     "query_id": [1, 1, 1, 2, 2],
    ...     "rank": [1, 2, 3, 1, 2],
    ...     "relevance": [0, 0, 1, 0, 0],
    ... })
    >>> df.group_by("query_id").agg(irm.mrr(), irm.mrr(k=2)).sort("query_id")
    shape: (2, 3)
    ┌──────────┬──────────┬───────┐
    │ query_id ┆ mrr      ┆ mrr@2 │
    │ ---      ┆ ---      ┆ ---   │
    │ i64      ┆ f64      ┆ f64   │
    ╞══════════╪══════════╪═══════╡
    │ 1        ┆ 0.333333 ┆ 0.0   │
    │ 2        ┆ 0.0      ┆ 0.0   │
    └──────────┴──────────┴───────┘
    """
    return _expr("mrr", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level)


@_shared_doc
def map(
    k: int | None = None,
    *,
    denominator: Literal["relevant", "capped", "retrieved"] = "relevant",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Average precision (AP@k); averaged over queries it is MAP.

    Sum of precision@r over the relevant documents at ranks r <= k, divided by R
    (trec_eval ``map`` / ``map_cut_k``, the default), by ``min(k, R)``
    (``denominator="capped"``: Spark, Microsoft Recommenders), or by the number of
    relevant documents found in the top k (``denominator="retrieved"``: torchmetrics).

    Parameters
    ----------
    k
        %(k)s
    denominator
        ``'relevant'``: divide by R (trec_eval); ``'capped'``: by min(k, R) (Spark);
        ``'retrieved'``: by the relevant documents retrieved in the top k (torchmetrics).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Relevant at ranks 2 and 4, R = 3 (one relevant document was not retrieved):

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4, None], "relevance": [0, 1, 0, 1, 1]})
    >>> df.select(irm.map()).item() == (1/2 + 2/4) / 3
    True
    >>> df.select(irm.map(denominator="retrieved")).item() == (1/2 + 2/4) / 2
    True
    """
    return _expr(
        "map",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        denominator=denominator,
    )


@_shared_doc
def ndcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    ideal: Ideal = "judgments",
    ties: Ties = "break",
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    score: str = "score",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Normalised discounted cumulative gain (nDCG@k).

    ``DCG@k / IDCG@k`` with ``DCG@k = sum_{r <= k} gain(rel_r) / log2(r + 1)``.
    ``gain="linear"`` uses the relevance value (trec_eval), ``"exponential"`` uses
    ``2**rel - 1`` (Burges et al.; ranx ``ndcg_burges``). Only positive relevance
    gains. ``ideal="judgments"`` builds the ideal ranking from every judged document
    (trec_eval); ``"retrieved"`` from the retrieved documents only (scikit-learn).
    0 when the ideal DCG is 0 (no relevant document).

    Parameters
    ----------
    k
        %(k)s
    gain
        %(gain)s
    ideal
        %(ideal)s
    ties
        ``'break'``: documents with the same score are ranked one by one, as ``rank``
        orders them; ``'average'``: each document of a tie group gets the group's mean
        gain over the group's positions (scikit-learn's ``ndcg_score`` default,
        ``ignore_ties=False``), read from the ``score`` column; the ranks must order
        the scores from the highest down, as ``rank_by_score`` does (the value is null
        where they do not).
    relevance
        %(relevance)s
    rank
        %(rank)s
    score
        %(score)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        Float64 per query, named by the metric's canonical name (e.g. ``ndcg@10``).

    See Also
    --------
    dcg : the numerator, with scikit-learn's ``log_base``.
    idcg : the denominator.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 2, 1]})
    >>> import math
    >>> dcg = 2 / math.log2(3) + 1 / math.log2(4)
    >>> idcg = 2 / math.log2(2) + 1 / math.log2(3)
    >>> math.isclose(df.select(irm.ndcg(k=3)).item(), dcg / idcg, rel_tol=1e-12)
    True

    scikit-learn's ``ndcg_score(k=1)``: the top two documents tie on score, so each
    gets half of the relevant one's gain at rank 1, and the ideal is 1 (the ideal of
    the retrieved documents):

    >>> tied = pl.DataFrame({"relevance": [1, 0, 0], "score": [0.9, 0.9, 0.2]})
    >>> tied = tied.with_columns(rank=pl.int_range(1, 4))
    >>> tied.select(irm.ndcg(k=1, ties="average", ideal="retrieved")).item()
    0.5
    """
    return _expr(
        "ndcg",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=1,
        score=_tie_scores(score, ties),
        gain=gain,
        ideal=ideal,
        ties=ties,
    )


@_shared_doc
def dcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    ties: Ties = "break",
    log_base: float = 2,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    score: str = "score",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Discounted cumulative gain: ``sum_{r <= k} gain(rel_r) / log_b(r + 1)``.

    Parameters
    ----------
    k
        %(k)s
    gain
        %(gain)s
    ties
        ``'break'``: documents with the same score are ranked one by one, as ``rank``
        orders them; ``'average'``: each document of a tie group gets the group's mean
        gain over the group's positions (scikit-learn's ``dcg_score`` default,
        ``ignore_ties=False``), read from the ``score`` column; the ranks must order
        the scores from the highest down, as ``rank_by_score`` does (the value is null
        where they do not).
    log_base
        %(log_base)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    score
        %(score)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 4, 1]})
    >>> import math
    >>> math.isclose(df.select(irm.dcg(k=2)).item(), 4 / math.log2(3), rel_tol=1e-12)
    True

    Base 10, as ``sklearn.metrics.dcg_score(..., log_base=10)``:

    >>> math.isclose(
    ...     df.select(irm.dcg(k=2, log_base=10)).item(), 4 / math.log10(3), rel_tol=1e-12
    ... )
    True
    """
    return _expr(
        "dcg",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=1,
        score=_tie_scores(score, ties),
        gain=gain,
        ties=ties,
        log_base=log_base,
    )


@_shared_doc
def idcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    ideal: Ideal = "judgments",
    log_base: float = 2,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Ideal DCG@k: the DCG@k of the judged documents sorted by gain, descending.

    Parameters
    ----------
    k
        %(k)s
    gain
        %(gain)s
    ideal
        %(ideal)s
    log_base
        %(log_base)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 2, 1]})
    >>> import math
    >>> math.isclose(df.select(irm.idcg(k=2)).item(), 2 + 1 / math.log2(3), rel_tol=1e-12)
    True
    """
    return _expr(
        "idcg",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=1,
        gain=gain,
        ideal=ideal,
        log_base=log_base,
    )


@_shared_doc
def cg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Cumulative gain: the sum of the gains of the top k.

    Parameters
    ----------
    k
        %(k)s
    gain
        %(gain)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 4, 1]})
    >>> df.select(irm.cg(k=2)).item()
    4.0
    """
    return _expr("cg", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=1, gain=gain)


@_shared_doc
def bpref(
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Binary preference (Buckley & Voorhees 2004), as trec_eval computes it.

    ``(1/R) * sum over retrieved relevant d of (1 - min(n_d, R) / min(N, R))``, where
    ``n_d`` counts judged non-relevant documents ranked above ``d`` and ``N`` all
    judged non-relevant documents. Unjudged documents (negative relevance, or not in
    the judgments) do not count.

    Parameters
    ----------
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [0, 1, -1, 1]})
    >>> df.select(irm.bpref()).item()  # R = 2, N = 1: (1 - 1/1) + (1 - 1/1)
    0.0
    """
    return _expr(
        "bpref", k=None, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level
    )


@_shared_doc
def num_ret(
    *, relevance: str = "relevance", rank: RankSpec = "rank", doc_id: str = "doc_id"
) -> pl.Expr:
    """Number of retrieved documents (rows with a rank).

    Parameters
    ----------
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> pl.DataFrame({"rank": [1, 2, None], "relevance": [1, 0, 1]}).select(irm.num_ret()).item()
    2
    """
    return _expr("num_ret", k=None, relevance=relevance, rank=rank, doc_id=doc_id, level=1)


@_shared_doc
def num_rel(
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Number of relevant documents among the judged rows (R).

    Parameters
    ----------
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> pl.DataFrame({"rank": [1, 2, None], "relevance": [1, 0, 2]}).select(irm.num_rel()).item()
    2
    """
    return _expr(
        "num_rel", k=None, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level
    )


@_shared_doc
def num_rel_ret(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Number of relevant documents retrieved (in the top k): ranx's ``hits@k``.

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, None], "relevance": [1, 1, 2]})
    >>> df.select(irm.num_rel_ret(), irm.num_rel_ret(k=1)).row(0)
    (2, 1)
    """
    return _expr(
        "num_rel_ret", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level
    )


# ------------------------------------------------------------- beyond trec_eval
# A row whose relevance is null is a retrieved document without a judgment: it counts
# in num_ret (and in judged's denominator) and is never relevant.


@_shared_doc
def err(
    k: int | None = None,
    *,
    max_grade: float = 4,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Expected reciprocal rank (Chapelle et al. 2009), graded.

    ``sum_{r <= k} R_r / r * prod_{i < r} (1 - R_i)`` with
    ``R = (2**g - 1) / 2**max_grade`` for a document of grade ``g > 0`` (0 otherwise).
    ``max_grade`` is a fixed 4 by default, as in gdeval, which ir_measures' ``ERR@k``
    runs; grades above it count as ``max_grade``. Not normalised.

    Parameters
    ----------
    k
        %(k)s
    max_grade
        The highest grade, a positive number.
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Grades 4 and 2 at ranks 2 and 3; a query with no relevant document scores 0:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({
    ...     "query_id": [1, 1, 1, 2],
    ...     "rank": [1, 2, 3, 1],
    ...     "relevance": [0, 4, 2, 0],
    ... })
    >>> out = df.group_by("query_id").agg(irm.err(), irm.err(k=2)).sort("query_id")
    >>> out.rows() == [(1, 15/16 / 2 + (1 - 15/16) * 3/16 / 3, 15/16 / 2), (2, 0.0, 0.0)]
    True
    """
    return _expr(
        "err", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=1, max_grade=max_grade
    )


@_shared_doc
def rbp(
    k: int | None = None,
    *,
    p: float = 0.8,
    gain: Literal["binary", "linear"] = "binary",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Rank-biased precision (Moffat & Zobel 2008) with persistence ``p``.

    ``(1 - p) * sum over relevant documents at ranks r <= k of gain * p**(r - 1)``; the
    gain is 1 (``gain="binary"``, ir_measures ``RBP(rel=1)``) or the label
    (``"linear"``, ir_measures ``RBP`` without ``rel``). Positions past the end of the
    list add nothing; :func:`rbp_residual` says how much the unknown positions could
    add. trec_eval's own ``rbp`` (p = 0.9, scaled gains) is ``trec_rbp``.

    Parameters
    ----------
    k
        %(k)s
    p
        %(p)s
    gain
        The gain of a relevant document: ``'binary'`` (default): 1, as Moffat & Zobel;
        ``'linear'``: its label (trectools, ir_measures' ``RBP`` without ``rel``).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, 0, 1]})
    >>> df.select(irm.rbp(p=0.5)).item() == 0.5 * (1 + 0.5**2)
    True
    >>> df.select(irm.rbp(k=2, p=0.5)).item()  # the relevant document at rank 3 is past k
    0.5
    """
    return _expr(
        "rbp",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        p=p,
        gain=gain,
    )


@_shared_doc
def rbp_residual(
    k: int | None = None,
    *,
    p: float = 0.8,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """RBP's residual: the weight of every position whose relevance is unknown.

    ``1 - (1 - p) * sum over judged documents at ranks r <= k of p**(r - 1)``:
    unjudged retrieved documents, empty positions and everything past the end of the
    list or past ``k``. Binary RBP lies between ``rbp`` and ``rbp + rbp_residual``.

    Parameters
    ----------
    k
        %(k)s
    p
        %(p)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Every retrieved document judged: the residual is the tail past the list, ``p**3``.
    A null relevance marks a retrieved document without a judgment:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, 0, 1]})
    >>> df.select(irm.rbp_residual(p=0.5)).item()
    0.125
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, None, 1]})
    >>> df.select(irm.rbp_residual(p=0.5)).item() == 0.5 * 0.5 + 0.5**3
    True
    """
    return _expr("rbp_residual", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=1, p=p)


@_shared_doc
def arhr(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Average reciprocal hit rank (Deshpande & Karypis 2004): sum of 1/rank over hits.

    Every relevant document in the top k adds ``1 / rank``, so unlike :func:`mrr` it
    can exceed 1; averaged over queries it is ARHR.

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 1, 1]})
    >>> df.select(irm.arhr()).item() == 1/2 + 1/3
    True
    >>> df.select(irm.arhr(k=1)).item()  # no hit in the top 1
    0.0
    """
    return _expr("arhr", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level)


@_shared_doc
def mar(
    k: int,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Mean average recall@k: ``(1/k) * sum_{j=1..k} recall@j``.

    Equal to ``sum over relevant documents at ranks r <= k of (k - r + 1) / (k * R)``;
    0 when there is no relevant document. ``k`` is required.

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    R = 2 (one relevant document was not retrieved); recall@1..3 = 0, 1/2, 1/2:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, None], "relevance": [0, 1, 1]})
    >>> df.select(irm.mar(k=3)).item() == (0 + 1/2 + 1/2) / 3
    True
    """
    return _expr("mar", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level)


@_shared_doc
def fcp(
    k: int | None = None,
    *,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Fraction of concordant pairs: judged pairs that the ranking orders by label.

    Over pairs of judged documents (labels >= 0) with different labels,
    ``(concordant + tied / 2) / pairs``. A pair is concordant when the higher label is
    ranked higher. Documents past ``k`` or not retrieved rank below every retrieved
    one and tie with each other (a tied pair counts one half). 0 when no pair has
    different labels. Quadratic in the judged documents of a query.

    Parameters
    ----------
    k
        %(k)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Labels 0, 2 at ranks 1, 2 and a label 1 not retrieved: of the three pairs only
    (2, 1) is in order. With a single label there is no pair:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, None], "relevance": [0, 2, 1]})
    >>> df.select(irm.fcp()).item() == 1 / 3
    True
    >>> df.select(irm.fcp(k=1)).item() == (0 + 1/2) / 3  # ranks 2 and "none" tie
    True
    >>> pl.DataFrame({"rank": [1, 2], "relevance": [1, 1]}).select(irm.fcp()).item()
    0.0
    """
    return _expr("fcp", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=1)


@_shared_doc
def judged(
    k: int | None = None,
    *,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Judged@k: the share of the top k that has a judgment (label >= 0).

    Divided by ``min(k, num_ret)`` as ir_measures' ``Judged@k`` does. In a judged
    table, a retrieved row with a null relevance is a document without a judgment;
    a negative label also means "not judged" (ir_measures counts it as judged).

    Parameters
    ----------
    k
        %(k)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Three documents retrieved, so ``k=10`` divides by 3, not 10:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, None, 0]})
    >>> df.select(irm.judged(k=1), irm.judged(k=2), irm.judged(k=10)).row(0) == (1.0, 1/2, 2/3)
    True
    """
    return _expr("judged", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=1)


def _gains_text(gains: object) -> str | None:
    """``gains=`` of :func:`trec_ndcg` as the metric's text (``{1: 3}`` is ``'1=3'``)."""
    if gains is None or isinstance(gains, str):
        return gains
    if not isinstance(gains, Mapping):
        raise MetricParameterError(
            f"metric 'irm.trec_ndcg(...)': gains must be a mapping of label to gain or a "
            f"string of label=gain pairs, got {gains!r}; pass e.g. gains={{1: 3, 2: 9}} "
            "or gains='1=3,2=9'"
        )
    return ",".join(f"{label}={gain}" for label, gain in gains.items())


@_shared_doc
def trec_ndcg(
    k: int | None = None,
    *,
    gains: str | Mapping[int, float] | None = None,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """nDCG@k with a gain per relevance label: trec_eval's ``-m ndcg.1=3,2=9``.

    ``gains`` maps labels to gains (``{1: 3, 2: 9}`` or ``"1=3,2=9"``); a label not
    listed gains its own value, as in :func:`ndcg`. Any label >= 0, 0 included, may be
    given any gain, negative too. The ideal ranking holds the judged documents with a
    positive gain, largest first (sorted exactly, where trec_eval may misorder two
    gains less than 1 apart).

    Parameters
    ----------
    k
        %(k)s
    gains
        Gain per label, ``'1=3,2=9'`` (trec_eval's ``-m ndcg.1=3,2=9``); labels not
        listed keep their label as gain.
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Label 1 worth 3 and label 2 worth 9: the label-2 document should come first.

    >>> import math
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2], "relevance": [1, 2]})
    >>> dcg, ideal = 3 + 9 / math.log2(3), 9 + 3 / math.log2(3)
    >>> math.isclose(df.select(irm.trec_ndcg(gains={1: 3, 2: 9})).item(), dcg / ideal)
    True
    >>> df.select(irm.trec_ndcg(gains="2=9,1=3")).columns
    ["trec_ndcg(gains='1=3,2=9')"]
    """
    return _expr(
        "trec_ndcg",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=1,
        gains=_gains_text(gains),
    )


@_shared_doc
def iprec(
    recall: float,
    *,
    rounding: Literal["truncate", "lround"] = "truncate",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Interpolated precision at a recall level (trec_eval ``iprec_at_recall_x``).

    The best precision at or below the rank where c relevant documents have been
    found; 0 when the ranking never finds that many. ``rounding`` says how the recall
    level becomes c:

    * ``'truncate'`` (default): ``c = floor(recall * R + 0.9)``, trec_eval 9.0.x's
      ``(long) (x * R + 0.9)``, as pytrec_eval, ir_measures and most published numbers
      compute it;
    * ``'lround'``: ``c = lround(recall * R)``, ``recall * R`` rounded, halves away
      from zero: trec_eval 10.0 (``irm trec-eval``'s default).

    Parameters
    ----------
    recall
        The recall level x, between 0 and 1.
    rounding
        How the recall level becomes the count c of relevant documents:
        ``'truncate'`` (trec_eval 9.0.x, the default) or ``'lround'`` (trec_eval 10.0).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Relevant at ranks 1 and 4, R = 2: at recall 0.5 the best precision from rank 1 on
    is 1; at recall 1.0, from rank 4 on, 2/4.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 0, 0, 1]})
    >>> df.select(irm.iprec(0.5), irm.iprec(1.0)).row(0)
    (1.0, 0.5)

    The two roundings part at recall 0.6: 0.6 * 2 + 0.9 = 2.1 truncates to 2 relevant
    documents (best precision from rank 4 on, 2/4), 1.2 rounds to 1 (from rank 1 on):

    >>> df.select(irm.iprec(0.6), irm.iprec(0.6, rounding="lround")).row(0)
    (0.5, 1.0)
    """
    return _expr(
        "iprec",
        k=None,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        recall=recall,
        rounding=rounding,
    )


@_shared_doc
def relative_precision(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Relative precision@k: ``rel_ret@k / min(k, R)`` (trec_eval ``relative_P_k``).

    Precision while k <= R, recall after. Without ``k``: ``rel_ret / min(num_ret, R)``
    (trec_eval ``set_relative_P``). 0 when R = 0.

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, None], "relevance": [1, 0, 1, 1]})
    >>> df.select(irm.relative_precision(k=2), irm.relative_precision(k=10)).row(0)
    (0.5, 0.6666666666666666)
    """
    return _expr(
        "relative_precision",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
    )


@_shared_doc
def rprec_mult(
    multiple: float,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Precision at a multiple of R (trec_eval ``Rprec_mult_x``).

    ``rel_ret@c / c`` with ``c = floor(multiple * R + 0.9)``; 0 when ``c`` is 0.
    ``rprec_mult(1.0)`` is :func:`r_precision`.

    Parameters
    ----------
    multiple
        The multiple m of R, above 0 (0 or a negative multiple is refused:
        ``MetricParameterError``).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    R = 2: multiple 0.5 looks at the top 1, multiple 2 at the top 4.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 0, 0, 1]})
    >>> df.select(irm.rprec_mult(0.5), irm.rprec_mult(2.0)).row(0)
    (1.0, 0.5)
    """
    return _expr(
        "rprec_mult",
        k=None,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        multiple=multiple,
    )


@_shared_doc
def infap(
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """Inferred AP (Yilmaz & Aslam 2006), as trec_eval's ``infAP`` computes it.

    AP estimated when only a sample of the pool was judged: a negative label marks a
    pooled document left unjudged, counted as relevant in the proportion of the judged
    ones above it. With every document judged it is AP.

    Parameters
    ----------
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, 0, 1]})
    >>> round(df.select(irm.infap()).item(), 6) == round((1 + 2 / 3) / 2, 6)
    True
    """
    return _expr(
        "infap", k=None, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level
    )


@_shared_doc
def unjudged(
    k: int | None = None,
    *,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """The share of the top k without a judgment (trec_eval ``unj_k``).

    ``(min(k, num_ret) - judged in the top k) / k``: past the end of the ranking the
    missing positions count as judged. A negative label means "not judged". Without
    ``k``, divided by the number retrieved.

    Parameters
    ----------
    k
        %(k)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, -1, 0]})
    >>> df.select(irm.unjudged(k=2), irm.unjudged(k=10)).row(0)
    (0.5, 0.1)
    """
    return _expr("unjudged", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=1)


# The recommender libraries' per-query metrics (issue 42): RecTools' F1Beta, PartialAUC
# and PAP, cornac's NCRR and RePlay's RocAuc. The other metrics added with them read a
# table beyond one query's judged rows, and are computed by irm.evaluate only (the
# expressions guide lists them, with the table each reads).

InsufficientHandling = Literal["ignore", "exclude"]


@_shared_doc
def f1_beta(
    k: int,
    *,
    beta: float = 1.0,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """RecTools' F-beta@k: ``(1 + b²) P R / (b² P + R)``, ``P`` precision@k, ``R``
    recall@k.

    ``beta`` is squared, as RecTools' ``F1Beta`` does (``f1(beta=beta**2)`` is the same
    value: trec_eval's F weighs recall by its ``beta`` unsquared); 0 when ``P = R = 0``.
    ``k`` is required.

    Parameters
    ----------
    k
        %(k)s
    beta
        The weight of recall, squared (1: the harmonic mean of P and R).
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Three relevant documents, two of them in the top 2: P = 1, R = 2/3, and with
    ``beta=2`` recall weighs four times: 5 (2/3) / (4 + 2/3) = 5/7:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, None], "relevance": [1, 1, 1]})
    >>> df.select(irm.f1_beta(2), irm.f1_beta(2, beta=2)).row(0)
    (0.8, 0.7142857142857142)
    """
    return _expr(
        "f1_beta",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        beta=beta,
    )


@_shared_doc
def partial_auc(
    k: int,
    *,
    insufficient_handling: InsufficientHandling = "ignore",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """RecTools' pAUC@k: the ROC AUC of every relevant document against the top ``k``
    non-relevant ones.

    ``sum over retrieved relevant d with m_d < k of (k - m_d) / (k n+)``: ``m_d`` the
    positions above ``d`` that hold no relevant document (non-relevant or unjudged),
    ``n+`` the relevant documents; 0 when there is none. ``insufficient_handling``:
    ``"ignore"`` (a relevant document the ranking lacks ranks below every negative) or
    ``"exclude"`` (a query with such a document and fewer than ``k`` non-relevant ones
    listed has no value: null, left out of the mean).

    Parameters
    ----------
    k
        %(k)s
    insufficient_handling
        ``"ignore"`` or ``"exclude"``, RecTools' ``insufficient_handling``.
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Two relevant documents: one at rank 2 below one negative, one not retrieved:
    (2 - 1) / (2 · 2) at k = 2. At k = 3 two negatives are listed, fewer than 3, and
    ``"exclude"`` leaves the query out:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, None], "relevance": [0, 1, 0, 1]})
    >>> df.select(
    ...     irm.partial_auc(2), irm.partial_auc(3, insufficient_handling="exclude")
    ... ).row(0)
    (0.25, None)
    """
    return _expr(
        "partial_auc",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        insufficient_handling=insufficient_handling,
    )


@_shared_doc
def pap(
    k: int,
    *,
    insufficient_handling: InsufficientHandling = "ignore",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """RecTools' pAp@k: the AUC of the top ``min(k, n+)`` relevant documents against the
    top ``k`` non-relevant ones (Hiranandani et al. 2020).

    ``sum over the first min(k, n+) retrieved relevant d with m_d < k of (k - m_d) /
    (k min(n+, k))``, ``m_d`` and ``n+`` as in :func:`partial_auc`: like precision@k
    when ``n+ >= k``, like pAUC below; ``insufficient_handling`` as there.

    Parameters
    ----------
    k
        %(k)s
    insufficient_handling
        ``"ignore"`` or ``"exclude"``, RecTools' ``insufficient_handling``.
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Three relevant documents at ranks 1, 3 and 4, k = 2: pAp counts the first two,
    (2 - 0) / 4 + (2 - 1) / 4; pAUC all three over 2 · 3:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 0, 1, 1]})
    >>> df.select(irm.pap(2), irm.partial_auc(2)).row(0) == (3 / 4, (2 + 1 + 1) / 6)
    True
    """
    return _expr(
        "pap",
        k=k,
        relevance=relevance,
        rank=rank,
        doc_id=doc_id,
        level=relevance_level,
        insufficient_handling=insufficient_handling,
    )


@_shared_doc
def ncrr(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """cornac's normalized cumulative reciprocal rank: ``CRR / ICRR``.

    ``CRR``: the sum of ``1 / rank`` over the relevant documents ranked ``<= k``;
    ``ICRR``: ``sum_{i=1}^{min(R, L)} 1 / i``, ``R`` the relevant documents and ``L =
    min(k, n)`` the documents listed in the top ``k``; 0 when none is found. Without
    ``k`` the whole ranking (cornac's ``k=-1``).

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Relevant documents at ranks 2 and 3: (1/2 + 1/3) / (1 + 1/2); in the top 2 only
    rank 2 counts, against the same ideal:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 1, 1]})
    >>> df.select(irm.ncrr(), irm.ncrr(2)).row(0) == ((1/2 + 1/3) / (3/2), (1/2) / (3/2))
    True
    """
    return _expr("ncrr", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level)


@_shared_doc
def rocauc(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
    doc_id: str = "doc_id",
) -> pl.Expr:
    """RePlay's RocAuc@k: the ROC AUC of the top ``k`` against the query's relevant
    documents.

    Among the first ``L = min(k, n)`` listed documents, ``tp`` are relevant and ``fp =
    L - tp`` are not; ``m`` counts the (relevant, other) pairs of the top ``k`` where the
    other document ranks above: 0 when ``tp = 0``, 1 when ``m = 0``, else ``1 - m /
    (tp fp)``. Named as RePlay spells it (``auc`` is scikit-learn's ROC AUC of
    predictions).

    Parameters
    ----------
    k
        %(k)s
    relevance_level
        %(relevance_level)s
    relevance
        %(relevance)s
    rank
        %(rank)s
    doc_id
        %(doc_id)s

    Returns
    -------
    pl.Expr
        The per-query value, named by the metric's canonical name (e.g. ``ndcg@10``).

    Examples
    --------
    Relevant at ranks 1 and 3, a negative at 2: one of the two pairs is out of order,
    1 - 1/2; in the top 2 no pair is:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, 0, 1]})
    >>> df.select(irm.rocauc(), irm.rocauc(2)).row(0)
    (0.5, 1.0)
    """
    return _expr(
        "rocauc", k=k, relevance=relevance, rank=rank, doc_id=doc_id, level=relevance_level
    )
