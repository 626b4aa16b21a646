"""RecTools' debiased evaluation: the judgments' popular items down-sampled (``debias=``).

RecTools' ``DebiasConfig(iqr_coef, random_state)`` (``rectools/metrics/debias.py``)
evaluates against test interactions whose most popular items are cut down to the
others' level: for each item, ``u_i`` the distinct users (queries) that interacted with
it; ``q1`` and ``q3`` the quartiles of ``u_i`` over the items (linear interpolation, as
pandas); ``border = int(q3 + iqr_coef (q3 - q1))``; every item with ``u_i > border``
keeps ``border`` of its rows, drawn at random, and every other row is kept. RecTools'
interactions are its positives: where the judgments also hold rows judged non-relevant,
only the relevant rows (``relevance >= relevance_level``) are counted and drawn, and the
others are kept.

Randomness. RecTools draws the kept rows with pandas' ``sample(random_state=...)``
(numpy's Mersenne Twister over the rows in their input order); a lazy plan cannot
replay that generator, so the draw here is a seeded hash: an over-border item keeps its
``border`` rows with the smallest ``hash((query_id, doc_id), seed=random_state)``. It
is deterministic (the same rows for the same data, seed and polars version, whatever the
row order or the engine), the same in distribution as a uniform draw without
replacement, and keeps exactly as many rows of exactly the same items as RecTools; the
particular rows differ from RecTools' draw, so a debiased metric equals RecTools' in
expectation over draws, not draw by draw (``tests/test_rectools_more.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.validate import INTERNAL

__all__ = ["Debias", "debiased"]

_USERS = f"{INTERNAL}users"
_BORDER = f"{INTERNAL}border"
#: The largest ``random_state``: polars' ``hash(seed=)`` takes an unsigned 64-bit integer.
_MAX_SEED = 2**64 - 1


@dataclass(frozen=True)
class Debias:
    """RecTools' ``DebiasConfig``: down-sample the judgments' popular items.

    Parameters
    ----------
    iqr_coef
        How far above the third quartile of the items' user counts an item may go:
        ``border = int(q3 + iqr_coef * (q3 - q1))`` (RecTools' default 1.5).
    random_state
        The seed of the draw of the rows an over-border item keeps (an integer from 0
        to 2**64 - 1, the hash's 64-bit seed;
        RecTools' ``None``, a fresh draw each time, is not offered: see
        :mod:`polars_irmetrics.ground.debias`).

    Examples
    --------
    >>> from polars_irmetrics.ground.debias import Debias
    >>> Debias(iqr_coef=0.5, random_state=7)
    Debias(iqr_coef=0.5, random_state=7)
    >>> Debias(iqr_coef=-1).check()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: debias=Debias(iqr_coef=-1, ...): iqr_coef must
    be a finite number >= 0 (RecTools' DebiasConfig.iqr_coef, e.g. 1.5), got -1
    """

    iqr_coef: float = 1.5
    random_state: int = 0

    def check(self) -> None:
        """Refuse an ``iqr_coef`` below 0 or not finite, and a seed that is not an
        integer >= 0."""
        coef, seed = self.iqr_coef, self.random_state
        if (
            isinstance(coef, bool)
            or not isinstance(coef, int | float)
            or not (math.isfinite(coef) and coef >= 0)
        ):
            raise InvalidValueError(
                f"debias=Debias(iqr_coef={coef!r}, ...): iqr_coef must be a finite number "
                f">= 0 (RecTools' DebiasConfig.iqr_coef, e.g. 1.5), got {coef!r}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InvalidValueError(
                f"debias=Debias(..., random_state={seed!r}): random_state must be an integer "
                f">= 0, the seed of the draw of the rows kept, got {seed!r}"
            )
        if seed > _MAX_SEED:  # polars' hash takes a 64-bit seed
            raise InvalidValueError(
                f"debias=Debias(..., random_state={seed!r}): random_state must be at most "
                f"2**64 - 1 ({_MAX_SEED}), the 64-bit seed of the hash that draws the rows "
                "kept: pass random_state % 2**64"
            )


def debiased(
    judgments: pl.LazyFrame,
    config: Debias,
    query_id: str,
    doc_id: str,
    relevant: pl.Expr | None = None,
) -> pl.LazyFrame:
    """The judgments with the rows of their over-border items down-sampled (lazy).

    ``relevant``: which rows are interactions (``relevance >= relevance_level``), where
    the judgments also hold judged non-relevant rows. RecTools' interactions are its
    positives alone, so only those rows count toward an item's users, and only those
    are down-sampled: a non-relevant row (a relevance 0) is kept as it is, a judgment
    that is no interaction (counted, it would raise the quartiles and cut an item that
    RecTools, given the same positives, leaves whole). ``None``: every row is one.

    Examples
    --------
    Item ``a`` has 5 users, ``b`` to ``e`` one each: the quartiles of (5, 1, 1, 1, 1)
    are 1 and 1, the border ``int(1 + 1.5 * 0) = 1``, so ``a`` keeps one row:

    >>> import polars as pl
    >>> qrels = pl.LazyFrame({"query_id": [1, 2, 3, 4, 5, 1, 2, 3, 4],
    ...                       "doc_id": ["a"] * 5 + ["b", "c", "d", "e"]})
    >>> kept = debiased(qrels, Debias(), "query_id", "doc_id").collect()
    >>> kept.group_by("doc_id").len().sort("doc_id").rows()
    [('a', 1), ('b', 1), ('c', 1), ('d', 1), ('e', 1)]

    With four of ``a``'s rows judged non-relevant, ``a`` has one user, as each other
    item: no item is over the border, and every row is kept.

    >>> graded = qrels.with_columns(relevance=pl.Series([1, 0, 0, 0, 0, 1, 1, 1, 1]))
    >>> debiased(graded, Debias(), "query_id", "doc_id", pl.col("relevance") >= 1).collect().height
    9
    """
    interactions = judgments if relevant is None else judgments.filter(relevant)
    users = interactions.group_by(doc_id).agg(pl.col(query_id).n_unique().alias(_USERS))
    q1 = pl.col(_USERS).cast(pl.Float64).quantile(0.25, interpolation="linear")
    q3 = pl.col(_USERS).cast(pl.Float64).quantile(0.75, interpolation="linear")
    # int() of a number >= 0 is its floor
    border = users.select((q3 + config.iqr_coef * (q3 - q1)).floor().alias(_BORDER))
    draw = pl.struct(query_id, doc_id).hash(seed=config.random_state)
    if relevant is not None:  # drawn among the interactions alone (null: not drawn)
        draw = pl.when(relevant).then(draw)
    order = draw.rank("ordinal").over(doc_id)
    kept = (pl.col(_USERS) <= pl.col(_BORDER)) | (order <= pl.col(_BORDER))
    if relevant is not None:  # a judgment that is no interaction is kept
        kept = ~relevant.fill_null(False) | kept
    return (
        judgments.join(users, on=doc_id, how="left", nulls_equal=True)
        .join(border, how="cross")
        .filter(kept)
        .drop(_USERS, _BORDER)
    )
