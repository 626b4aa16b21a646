"""How a metric formula sees the judged rows of one query, in two settings.

A formula (:mod:`polars_irmetrics.metrics`) is one aggregation expression over the
judged rows of a query. It may ask its :class:`Scope` for a few per-row quantities
that depend on the other rows of the query (counts, products and sums over the rows
ranked above, the ideal ranking's gains), which the two settings compute differently:

* :class:`TableScope`: inside a user's ``df.group_by("query_id").agg(irm.ndcg(k=10))``.
  Every per-row expression is put in rank order inside the group, and the
  order-dependent quantities are cumulative sums, products and ranks within the group.
  A group that is not one ranking (a rank held twice or below 1, a document listed
  twice) has no value: :meth:`TableScope.when_one_ranking` makes it null.
* :class:`PlanScope`: inside :func:`polars_irmetrics.evaluate`. The plan sorts the
  judged rows once by (query, rank) and computes each order-dependent quantity as a
  column *before* the group-by (vectorised over the sorted rows, or a window on the
  query number), so the group-by itself is made of plain counts, minima and sums
  (cheap, and streamable).

A float sum of a formula is either a fixed-point sum (:meth:`Scope.sum`), the same to
the last bit in any row order, or, where trec_eval defines the metric and adds its terms
one by one along the ranking, that sum in rank order (:meth:`Scope.sum_in_order`: a
running sum within the query, the same bits on every engine given the ranking), so that
the value is trec_eval's double and ``irm trec-eval`` prints trec_eval's digits on a
rounding boundary.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import polars as pl

from polars_irmetrics.errors import MetricParameterError

__all__ = [
    "FIXED_FLOOR",
    "FIXED_LIMIT",
    "JUDGMENT_FLAGS",
    "PlanScope",
    "Scope",
    "TableScope",
    "beyond_fixed",
    "exact_mean",
    "exact_sum",
    "exact_sum_horizontal",
    "fixed_float",
    "fixed_sum",
    "fixed_sum64",
    "fixed_units",
    "fixed_weighted_mean",
    "judgment_flags",
    "read_once",
    "unfit_label",
]


class Scope(ABC):
    """The judged rows of one query, as a formula sees them.

    Attributes
    ----------
    rank
        Position of the document in the ranking, 1 = top; null when it was not
        retrieved.
    rel
        The judged relevance. Negative means "in the pool but not judged" (trec_eval):
        neither relevant nor non-relevant.
    num_ret
        Number of documents retrieved for the query (a scalar per group).
    """

    rank: pl.Expr
    rel: pl.Expr

    @property
    @abstractmethod
    def num_ret(self) -> pl.Expr:
        """Number of documents retrieved for the query (a scalar per group)."""

    @abstractmethod
    def ranked_count(self, condition: pl.Expr) -> pl.Expr:
        """Per row: how many rows meeting ``condition`` are ranked at or above it.

        Rows are in rank order, unretrieved rows last (their values are not meaningful).
        ``condition`` must be built from :attr:`rank` and :attr:`rel`.
        """

    @abstractmethod
    def product_above(self, value: pl.Expr) -> pl.Expr:
        """Per row: the product of ``value`` over the rows ranked strictly above it.

        1.0 for the top row. Rows are in rank order, unretrieved rows last (their
        values are not meaningful). ``value`` must be a float built from :attr:`rank`
        and :attr:`rel`, never null (ERR's probability of reaching a row).
        """

    @abstractmethod
    def greater_above(self, value: pl.Expr) -> pl.Expr:
        """Per row: how many rows ranked strictly above it have a strictly greater ``value``.

        Null values never count, and a null ``value`` gives 0. Rows are in rank order,
        unretrieved rows last (their values are not meaningful). Quadratic in the
        number of judged rows of a query (a pairwise count, for fcp).
        """

    @abstractmethod
    def count_greater(self, value: pl.Expr) -> pl.Expr:
        """Per row: how many rows of the query have a strictly greater ``value``.

        Independent of the order; null values never count, and a null ``value`` gives
        null.
        """

    @abstractmethod
    def sum(self, term: pl.Expr, where: pl.Expr | None = None) -> pl.Expr:
        """The sum of a float ``term`` over the query's rows meeting ``where``, exactly.

        A fixed-point sum (:func:`fixed_sum`): the same to the last bit in any row
        order, so a metric does not depend on the input layout, the engine (a streaming
        group-by adds per-batch partial sums) or the number of buckets. ``term`` is
        one value per row, computed row by row: it may read the row's columns and the
        other primitives, and a per-query aggregate only through :meth:`window`. Nulls
        count as 0.
        """

    @abstractmethod
    def sum_in_order(
        self,
        term: pl.Expr,
        where: pl.Expr | None = None,
        k: int | None = None,
        by: pl.Expr | None = None,
    ) -> pl.Expr:
        """The sum of a float ``term`` over the query's rows meeting ``where`` (and, with
        ``k``, whose ``by`` is at most ``k``: :attr:`rank` unless given, or a position
        that rises along the rows, such as :meth:`row_index` + 1), added one by one in
        rank order (unretrieved rows last), starting from 0.0, in doubles.

        trec_eval's sum (``sum += term`` in its loop over the ranking): the same bits
        as trec_eval where a metric transcribes its loop, which an exact sum is not
        (0.5 + 0.4 + 0.375 + 0.4 is 1.6749999999999998 in rank order, 1.675 exactly;
        divided by 20, trec_eval prints ``0.0837`` and the exact sum ``0.0838``).
        Sequential within the query, given its ranking, so the same bits on every engine
        and input layout: the rows of a query are in rank order, and rows that tie on
        (rank, label) carry the same terms. ``term`` as for :meth:`sum`; nulls count
        as 0. The running sum is one per term and ``where``, whatever ``k``: the sum at
        ``k`` is its value on the last row within ``k`` (a range of cutoffs shares it).
        """

    @abstractmethod
    def sorted_desc(self, value: pl.Expr) -> pl.Expr:
        """Per row i of the query: the (i+1)-th largest ``value`` of the query, nulls last.

        Not aligned with the rows' own values: the query's values sorted, laid over its
        rows (the ideal ranking's gains, position by position).
        """

    @abstractmethod
    def row_index(self) -> pl.Expr:
        """Per row: its 0-based index among the query's rows (in rank order)."""

    @abstractmethod
    def tied(self) -> tuple[pl.Expr, pl.Expr]:
        """Per row: the first and last position of the row's tie group, ``(low, high)``.

        A tie group is the documents of the query's ranking with the same score (all of
        the ranking's documents, judged or not); ``low`` is 1 + the documents with a
        higher score and ``high`` that + the other documents with the same score. Null
        where the row was not retrieved. Read by the tie-averaged gains of
        scikit-learn's ``dcg_score`` (``ties='average'``); it needs the scores, and
        raises :class:`~polars_irmetrics.errors.MetricParameterError` where the rows
        were ranked without them.
        """

    @abstractmethod
    def window(self, expr: pl.Expr) -> pl.Expr:
        """Per row: ``expr``, evaluated over all the rows of the query at once.

        ``expr`` is a group-level expression built from :attr:`rank` and :attr:`rel`
        (cumulative sums, sorts, ``gather`` by position, ``search_sorted`` on the
        ranks) that returns one value per row; the rows are in rank order, unretrieved
        rows last. The general form of the primitives above, for trec_eval's measures
        that look a rank up in the ideal ranking (ndcg_rel, Rndcg, G). An aggregate
        (R, a maximum) comes out broadcast to every row: that is how a formula compares
        rows with a per-query value, which inside the aggregation itself would keep
        the plan's streaming group-by from partitioning.
        """


#: Fixed point of :func:`fixed_sum`: terms are counted in units of 2**-64.
_SCALE = 2.0**64
#: The terms of a fixed-point sum stay below this: the total, in units of 2**-64, then
#: fits in 128 bits for up to 2**31 terms.
FIXED_LIMIT = 2.0**32


def beyond_fixed(value: pl.Expr) -> pl.Expr:
    """Per row: whether ``value`` is too large for :func:`fixed_sum`, or not finite
    (null where ``value`` is null)."""
    return ~(value.abs() < FIXED_LIMIT)


#: The smallest magnitude, other than 0, of a relevance label or a sample weight: a
#: value in ``[FIXED_FLOOR, FIXED_LIMIT)`` keeps its 53 bits in :func:`fixed_sum` (units
#: of 2**-64 and 2**-128), and so do the gains and terms made of it down to 2**-76; a
#: gain of 1e-30 would keep 29 bits, one of 1e-40 count 0.
FIXED_FLOOR = 2.0**-30


def unfit_label(label: pl.Expr) -> pl.Expr:
    """Per row (null where ``label`` is null): a relevance label (Float64) the metrics
    cannot read exactly and unambiguously, whatever the metrics: NaN (which polars
    orders above every number), infinite or of magnitude 2**32 or more (beyond the exact
    sums), of magnitude below :data:`FIXED_FLOOR` other than 0 (its gains would lose
    digits), or between -1 and 0 (unjudged here, as every negative label, but judged
    non-relevant by trec_eval, which truncates it to 0).

    >>> frame = pl.DataFrame({"rel": [0.0, -0.0, 1.5, -1.0, -0.5, 1e-30, 2.0**32, None]})
    >>> frame.select(unfit_label(pl.col("rel")))["rel"].to_list()
    [False, False, False, False, True, True, True, None]
    """
    size = label.abs()
    tiny = (size < FIXED_FLOOR) & (label != 0)
    return ~(size < FIXED_LIMIT) | tiny | ((label < 0) & (label > -1))


#: The judgments' checks among :data:`~polars_irmetrics.ground.validate.RUN_FLAGS`, in
#: their order (what :func:`judgment_flags` counts).
JUDGMENT_FLAGS: tuple[str, ...] = ("q_null_doc", "q_null_rel", "q_bad_rel", "q_dup_doc")


def judgment_flags(
    doc: pl.Expr, label: pl.Expr, mask: pl.Expr | None = None
) -> dict[str, pl.Expr]:
    """The judgments' checks of :data:`~polars_irmetrics.ground.validate.RUN_FLAGS`, as
    counts over a group's rows.

    Every route that reads judgments counts their problems per query with these, so
    that each refuses the same rows in the same words
    (:func:`~polars_irmetrics.ground.validate.flag_error`,
    :func:`~polars_irmetrics.ground.validate.raise_on_bad_rows`).

    Parameters
    ----------
    doc : pl.Expr
        The judged document's id.
    label : pl.Expr
        The relevance label, of a numeric dtype (read as Float64).
    mask : pl.Expr or None
        Boolean, true on the rows that are judgments (the evaluation plan's judgments
        beside the run's rows); ``None``: every row is one. Applied with ``when``, not
        ``filter``, which would keep a streaming group-by from partitioning the
        aggregation.

    Returns
    -------
    dict of str to pl.Expr
        Keyed by :data:`JUDGMENT_FLAGS`' names, in their order (the order they are
        raised), unaliased aggregations (UInt32) for a group-by or a select:

        * ``q_null_doc``: the judgments with a null document id;
        * ``q_null_rel``: the judgments with a null label;
        * ``q_bad_rel``: the non-null labels :func:`unfit_label`
          refuses (NaN, infinite, of magnitude 2**32 or more or below 2**-30 other
          than 0, or between -1 and 0);
        * ``q_dup_doc``: the judgments of a document judged before in the group: each
          row past a document's first (the messages' "repeated judgment(s)", not a
          count of documents, which would need a non-streaming ``is_duplicated``); a
          null id is the ``q_null_doc`` check's, never a duplicate (two null ids are
          not one document judged twice).

    Examples
    --------
    A label of -0.5 is unfit, -1 is not; "a" judged three times counts twice, the two
    null ids not at all; the masked-out row (the run's) counts nowhere:

    >>> judged = pl.DataFrame(
    ...     {
    ...         "doc": ["a", "a", "a", None, None, "b", "a"],
    ...         "rel": [1.0, -0.5, -1.0, None, float("nan"), 2.0, None],
    ...         "is_judgment": [True] * 6 + [False],
    ...     }
    ... )
    >>> flags = judgment_flags(pl.col("doc"), pl.col("rel"), pl.col("is_judgment"))
    >>> judged.select(**flags).row(0, named=True)
    {'q_null_doc': 2, 'q_null_rel': 1, 'q_bad_rel': 2, 'q_dup_doc': 2}
    """
    rows = pl.lit(True) if mask is None else mask
    listed = (doc if mask is None else pl.when(mask).then(doc)).drop_nulls()
    # unfit_label is null where the label is: the sum skips those rows
    return {
        "q_null_doc": (doc.is_null() & rows).sum(),
        "q_null_rel": (label.is_null() & rows).sum(),
        "q_bad_rel": (unfit_label(label.cast(pl.Float64)) & rows).sum(),
        "q_dup_doc": listed.len() - listed.n_unique(),
    }


def _within(where: pl.Expr | None, position: pl.Expr, k: int | None) -> pl.Expr | None:
    """``where`` and, with a cutoff ``k``, ``position <= k`` (the rows
    :meth:`Scope.sum_in_order` adds up to ``k``)."""
    if k is None:
        return where
    within = position <= k
    return within if where is None else where & within


def _in_order(term: pl.Expr, where: pl.Expr | None) -> pl.Expr:
    """Per row: the Float64 ``term`` where ``where`` holds, else 0.0 (which a running
    sum adds without changing a bit)."""
    value = term.cast(pl.Float64)
    if where is not None:
        value = pl.when(where).then(value).otherwise(0.0)
    return value.fill_null(0.0)


def fixed_sum(value: pl.Expr) -> pl.Expr:
    """Group context: the sum of float ``value`` (nulls as 0), independent of row order.

    Each value becomes a whole number of 2**-64 and what is left of it a whole number
    of 2**-128 (:func:`fixed_units`: exact for any value of 2**-76 or more in
    magnitude), the two counts are added as 128-bit integers, which is exact in any
    order, and the total becomes a float once (:func:`fixed_float`). trec_eval adds its
    terms one by one, so its last bit may differ: 0.1 + 0.2 + 0.3 is 0.6000000000000001
    there and 0.6 here. Plain reductions, so a group-by of such sums streams. Every
    value must be below :data:`FIXED_LIMIT` in magnitude.

    Examples
    --------
    Small terms keep their digits (rbp(p=0.9)'s term of a relevant document at rank
    300; in units of 2**-64 alone it read 2.0821018520411627e-15):

    >>> import math
    >>> import polars as pl
    >>> term = 0.1 * 0.9**299
    >>> pl.DataFrame({"x": [term]}).select(fixed_sum(pl.col("x"))).item() == term
    True
    >>> terms = [1e-7, 1e-7, 1e-7, 2.0**-70]
    >>> pl.DataFrame({"x": terms}).select(fixed_sum(pl.col("x"))).item() == math.fsum(terms)
    True
    """
    high, low = fixed_units(value.fill_null(0.0))
    return fixed_float(high.sum(), low.sum())


def fixed_sum64(value: pl.Expr) -> pl.Expr:
    """Group context: :func:`fixed_sum` in units of 2**-64 alone (each value floored to
    a whole number of them: a value below 2**-11 loses its bits below 2**-64), the
    same bits as :func:`fixed_sum` where every value is a whole number of 2**-64 (every
    value of 2**-11 or more). For the sums whose bits a hand-written mirror reproduces
    (:func:`~polars_irmetrics.exposure.rnd.rrd_normaliser`'s dynamic programme, in
    numpy: its most segregated ranking scores 1.0 exactly).

    >>> import polars as pl
    >>> pl.DataFrame({"x": [0.1 * 0.9**299]}).select(fixed_sum64(pl.col("x"))).item()
    2.0821018520411627e-15
    """
    counts = (value.fill_null(0.0) * _SCALE).floor().cast(pl.Int128, strict=False)
    return counts.sum().cast(pl.Float64) / _SCALE


def fixed_units(value: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Per Float64 term ``v`` (no null; below :data:`FIXED_LIMIT` in magnitude): its
    whole units of 2**-64, ``floor(v 2**64)``, and the whole units of 2**-128 of the
    rest, ``floor((v 2**64 - floor(v 2**64)) 2**64)``, in ``[0, 2**64)``, both Int128
    (null where ``v`` is not finite), whose sums :func:`fixed_float` makes one float. A
    product by a power of two and the fraction of a double of magnitude 1 or more are
    exact, so the two units hold ``v`` exactly down to 2**-128 where ``v`` is 2**-64 or
    more in magnitude, or positive; the rest of a negative term above -2**-64 is rounded
    to a double (by at most 2**-118). Where ``v 2**64`` is a whole number (``v`` of
    2**-11 or more in magnitude, and every multiple of 2**-64) the second is 0. Floored
    first: a float-to-integer cast of a value with a fractional part rounds one way in
    one engine and the other way in another."""
    scaled = value * _SCALE
    # scaled % 1.0 is scaled - floor(scaled) (polars' float modulo takes the sign of
    # the divisor, on either engine), written so that ``value`` is read twice, not
    # three times: inside a group-by polars computes an expression as often as it is
    # written
    return (
        scaled.floor().cast(pl.Int128, strict=False),
        ((scaled % 1.0) * _SCALE).floor().cast(pl.Int128, strict=False),
    )


def fixed_float(high: pl.Expr, low: pl.Expr) -> pl.Expr:
    """The float of ``high 2**-64 + low 2**-128``, from Int128 sums of
    :func:`fixed_units`' two units (in any order: the same integers, the same bits):
    each made a double and added, ``float(high) 2**-64 + float(low) 2**-128``. Where
    ``low`` is 0 (no term has digits below 2**-64), the double nearest to ``high
    2**-64``, as a sum in units of 2**-64 alone gave; where ``high`` is below 2**53 (a
    total below 2**-11), the double nearest to the total (but within 2**-117 of a tie);
    else within one unit in the last place of it (``high`` rounded, then the rest
    added). Each sum is read once and nothing is written twice: inside a ``select``
    beside per-row columns, polars computes a subexpression written twice once, as a
    column broadcast to every row, and a column divided by a scalar is a product by
    its reciprocal, off by a unit in the last place (the propensity-scored metrics'
    ``N_q / mean I_q`` of ``per_query=True`` differed so between one plan and buckets).

    >>> import polars as pl
    >>> i128 = pl.Int128
    >>> frame = pl.DataFrame({"h": [3, -1, 2**70], "l": [2**63, 2**63, 1]},
    ...                      schema={"h": i128, "l": i128})
    >>> frame.select(fixed_float(pl.col("h"), pl.col("l")) * 2.0**64)["h"].to_list()
    [3.5, -0.5, 1.1805916207174113e+21]
    """
    return high.cast(pl.Float64) * 2.0**-64 + low.cast(pl.Float64) * 2.0**-128


def exact_sum(value: pl.Expr) -> pl.Expr:
    """Group context: the sum of ``value`` (nulls as 0), the same bits in any row order.

    A :func:`fixed_sum`, unless a value is too large for it or not finite
    (:func:`beyond_fixed`): then a float sum, which keeps a NaN or an infinity (its
    last bit may then depend on the order; such a value is refused or documented
    wherever one can arise, and :func:`wide_sum` adds user scores of any size).

    Examples
    --------
    A float sum depends on the order of its terms; this one does not:

    >>> import polars as pl
    >>> terms = [0.1, 0.7, 0.2, 0.3]
    >>> frame = pl.DataFrame({"x": terms + terms[::-1], "g": [0] * 4 + [1] * 4})
    >>> frame.group_by("g").agg(pl.col("x").sum()).sort("g")["x"].to_list()
    [1.2999999999999998, 1.3]
    >>> frame.group_by("g").agg(exact_sum(pl.col("x"))).sort("g")["x"].to_list()
    [1.3, 1.3]
    """
    value = value.cast(pl.Float64)
    return pl.when(beyond_fixed(value).any()).then(value.sum()).otherwise(fixed_sum(value))


#: :func:`wide_sum` adds terms below this magnitude exactly (whole parts as Int128).
WIDE_LIMIT = 2.0**96
#: A group whose largest magnitude is at least this (and below :data:`WIDE_LIMIT`) is
#: added as it is by :func:`wide_sum`; a smaller or larger one at :func:`power_scale`.
_WIDE_LOW = 2.0**-1


def power_scale(peak: pl.Expr) -> pl.Expr:
    """The power of two by which :func:`wide_sum` multiplies a group's terms, from their
    largest magnitude ``peak``: 1 where ``peak`` is in ``[2**-1, 2**96)`` (scores of
    ordinary size, added as they are), 0, not finite or null; else the one that brings
    ``peak`` near ``[1, 2)``, between ``2**-1022`` and ``2**1022`` (a subnormal peak is
    brought to ``2**-52`` or more: every subnormal is then a whole number of ``2**-64``).
    A product by a power of two only moves the exponent: exact, and so is the division
    that undoes it (but where the result is subnormal, or beyond float64's range).

    >>> import polars as pl
    >>> peaks = pl.DataFrame({"p": [3.0, 1e-300, 1e300, 5e-324, 0.0]})
    >>> [x * s for x, s in peaks.select("p", power_scale(pl.col("p")).alias("s")).rows()]
    [3.0, 1.3393857589828342, 1.4932217896051503, 2.220446049250313e-16, 0.0]
    """
    exponent = peak.log(2).floor().clip(-1022, 1022)
    plain = (peak >= _WIDE_LOW) & (peak < WIDE_LIMIT) | ~(peak > 0) | ~peak.is_finite()
    return pl.when(plain.fill_null(True)).then(1.0).otherwise(pl.lit(2.0).pow(-exponent))


def wide_sum(value: pl.Expr) -> pl.Expr:
    """Group context: the sum of float ``value`` (nulls as 0) with the same bits in any
    row order, for terms of any size: each term's whole part (terms of 2**32 and more)
    and its units of 2**-64 (the rest; exact for terms of 2**-11 and more) added as two
    Int128 sums, exact in any order, then made one float. A group whose largest
    magnitude is below ``2**-1`` or of ``2**96`` or more is first multiplied by the
    power of two that brings it near 1 (:func:`power_scale`), and the sum divided by it
    last: scores of ``1e-20`` or ``1e300`` keep their digits (in units of 2**-64 alone,
    terms near ``1e-10`` kept 31 bits, ``1e-20`` none). A term that is NaN or infinite
    gives the float sum (NaN or infinite from the terms whatever their order); a sum
    beyond float64's range is infinite. Plain reductions of per-row values, so a
    group-by of them streams. It costs a third more than :func:`exact_sum` (a second
    Int128 sum, and the largest magnitude): for sums of user scores, whose size nothing
    bounds (fusion's ``zmuv`` and ``sum`` normalisations).

    Examples
    --------
    Terms of 2**60, whose float sum moves with the order of its terms (1.5 is lost
    beside 2**60, a float's unit there being 256):

    >>> import polars as pl
    >>> terms = [2.0**60, 1.5, -(2.0**60), 0.25]
    >>> frame = pl.DataFrame({"x": terms + terms[::-1], "g": [0] * 4 + [1] * 4})
    >>> frame.group_by("g").agg(pl.col("x").sum()).sort("g")["x"].to_list()
    [0.25, 0.0]
    >>> frame.group_by("g").agg(wide_sum(pl.col("x"))).sort("g")["x"].to_list()
    [1.75, 1.75]

    Small terms keep their digits (1e-20 is below a unit of 2**-64, where the sum
    was 0.0); here the float sum's bits, ``1e-20 + 2e-20``:

    >>> tiny = pl.DataFrame({"x": [1e-20, 2e-20]})
    >>> tiny.select(wide_sum(pl.col("x"))).item()
    2.9999999999999997e-20
    """
    raw = value.cast(pl.Float64).fill_null(0.0)
    scale = power_scale(raw.abs().max())
    wholes, units = _wide_parts(raw * scale)
    total = _wide_total(wholes.sum(), units.sum(), scale)
    special = ~raw.is_finite().all()  # NaN or an infinity
    return pl.when(special).then(raw.sum()).otherwise(total)


def _wide_parts(v: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Per term of :func:`wide_sum` (already scaled): its whole part where it is of
    2**32 or more (else 0) and the rest in units of 2**-64, both Int128."""
    large = ~(v.abs() < FIXED_LIMIT)  # NaN too: its terms are never read
    whole = v.floor()
    wholes = (whole * large.cast(pl.Float64)).cast(pl.Int128, strict=False)
    rest = pl.when(large).then(v - whole).otherwise(v)  # exact: v - floor(v) for |v| >= 1
    return wholes, (rest * _SCALE).floor().cast(pl.Int128, strict=False)


def _wide_total(wholes: pl.Expr, units: pl.Expr, scale: pl.Expr) -> pl.Expr:
    return (wholes.cast(pl.Float64) + units.cast(pl.Float64) / _SCALE) / scale


def wide_sum_horizontal(terms: list[pl.Expr]) -> pl.Expr:
    """Per row: the sum of ``terms`` (nulls as 0) with the bits :func:`wide_sum` gives
    the same values as rows of a group (the same scale, from the largest magnitude,
    and the same integer sums), for scores of any size.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"a": [1e-20, 0.1], "b": [2e-20, 0.7], "c": [None, 0.2]})
    >>> frame.select(wide_sum_horizontal([pl.col(c) for c in "abc"]))["a"].to_list()
    [2.9999999999999997e-20, 1.0]
    >>> long = pl.DataFrame({"g": [0, 0, 1, 1, 1], "x": [1e-20, 2e-20, 0.1, 0.7, 0.2]})
    >>> long.group_by("g").agg(wide_sum(pl.col("x"))).sort("g")["x"].to_list()
    [2.9999999999999997e-20, 1.0]
    """
    values = [term.cast(pl.Float64).fill_null(0.0) for term in terms]
    scale = power_scale(pl.max_horizontal([value.abs() for value in values]))
    parts = [_wide_parts(value * scale) for value in values]
    wholes = pl.sum_horizontal([whole for whole, _ in parts])
    units = pl.sum_horizontal([unit for _, unit in parts])
    special = ~pl.all_horizontal([value.is_finite() for value in values])
    return (
        pl.when(special)
        .then(pl.sum_horizontal(values))
        .otherwise(_wide_total(wholes, units, scale))
    )


def exact_sum_horizontal(terms: list[pl.Expr]) -> pl.Expr:
    """Per row: the sum of ``terms`` (nulls as 0) with the bits :func:`exact_sum` gives
    the same values as rows of a group (a fixed-point sum, or a float sum, in the order
    given, where a term is too large for it or not finite).

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"a": [0.1], "b": [0.7], "c": [0.2], "d": [0.3]})
    >>> frame.select(pl.sum_horizontal("a", "b", "c", "d")).item()  # in column order
    1.2999999999999998
    >>> frame.select(exact_sum_horizontal([pl.col(c) for c in "abcd"])).item()
    1.3
    """
    values = [term.cast(pl.Float64).fill_null(0.0) for term in terms]
    units = [fixed_units(value) for value in values]
    high = pl.sum_horizontal([h for h, _ in units])
    fixed = fixed_float(high, pl.sum_horizontal([low for _, low in units]))
    beyond = pl.any_horizontal([beyond_fixed(value) for value in values])
    return pl.when(beyond).then(pl.sum_horizontal(values)).otherwise(fixed)


def exact_mean(value: pl.Expr, *, bounded: bool = False, wide: bool = False) -> pl.Expr:
    """Group context: the mean of the non-null values of ``value``, the same bits in
    any row order and however many groups the aggregation holds (:func:`exact_sum`
    divided by the count; null when there is no value). ``bounded``: every value is
    finite and below :data:`FIXED_LIMIT` by construction, so the sum is a
    :func:`fixed_sum` without the check (cheaper). ``wide``: values of any size (user
    scores), summed by :func:`wide_sum`.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"x": [0.1, 0.2, None, 0.3]})
    >>> frame.select(exact_mean(pl.col("x"))).item()  # (0.1 + 0.2 + 0.3) / 3
    0.19999999999999998
    >>> frame.head(0).select(exact_mean(pl.col("x"))).item() is None
    True
    """
    count = value.count()
    total = fixed_sum(value) if bounded else wide_sum(value) if wide else exact_sum(value)
    return pl.when(count > 0).then(total / count.cast(pl.Float64))


def fixed_weighted_mean(value: pl.Expr, weight: pl.Expr) -> pl.Expr:
    """Group context: :func:`exact_mean` with ``bounded=True`` of a column in which each
    value stands for ``weight`` rows (a non-negative integer count; a null value counts
    0, as rows filled with 0 do): the same integers added (each value's multiple), so
    the same bits as the mean over the rows themselves. Null when the weights add up to
    0.

    Examples
    --------
    >>> import polars as pl
    >>> rows = pl.DataFrame({"x": [0.1, 0.1, 0.1, 0.7]})
    >>> counted = pl.DataFrame({"x": [0.7, 0.1], "n": [1, 3]})
    >>> rows.select(exact_mean(pl.col("x"), bounded=True)).item()
    0.25
    >>> counted.select(fixed_weighted_mean(pl.col("x"), pl.col("n"))).item()
    0.25
    """
    high, low = fixed_units(value.fill_null(0.0))
    times = weight.cast(pl.Int128)
    total = fixed_float((high * times).sum(), (low * times).sum())
    count = weight.sum()
    return pl.when(count > 0).then(total / count.cast(pl.Float64))


def read_once(value: pl.Expr, reduce: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
    """Group context: ``reduce(value)``, ``value`` computed once.

    Inside a group-by's aggregation polars computes an expression as often as it is
    written: :func:`exact_sum` reads its terms four times (the check for huge terms,
    the float sum that keeps a NaN, and the two units of :func:`fixed_units`), and a
    metric's term in a user's group-by is a chain of sorts and powers. Here the
    group's values are gathered once into a list and ``reduce`` runs on its elements
    (the same values, so the same bits: the integer sums do not depend on the order).

    >>> import polars as pl
    >>> frame = pl.DataFrame({"g": [1, 1, 1, 2], "x": [0.1, 0.2, 0.3, 0.25]})
    >>> sorted_x = pl.col("x").sort(descending=True)
    >>> out = frame.group_by("g").agg(read_once(sorted_x, exact_sum)).sort("g")
    >>> out["x"].to_list()
    [0.6, 0.25]
    """
    return value.implode().list.eval(reduce(pl.element())).list.first()


def _product_above(value: pl.Expr) -> pl.Expr:
    return value.cast(pl.Float64).cum_prod().shift(1, fill_value=1.0)


def _greater_above(value: pl.Expr) -> pl.Expr:
    above = pl.element() > pl.element().last()
    return value.cumulative_eval(above.sum()).fill_null(0).cast(pl.Int64)


def _count_greater(value: pl.Expr) -> pl.Expr:
    return (value.rank("min", descending=True) - 1).cast(pl.Int64)


class TableScope(Scope):
    """A judged table's rows inside a user's group-by (one group per query).

    Parameters
    ----------
    relevance, rank
        The label and the rank (1 = top; null: judged, not retrieved), as column names
        or expressions.
    distinct_documents
        A group-level boolean: whether the group's document ids are all present and
        distinct (``None``: not checked). Read by :meth:`one_ranking`.
    """

    def __init__(
        self,
        relevance: str | pl.Expr,
        rank: str | pl.Expr,
        distinct_documents: pl.Expr | None = None,
        score: pl.Expr | None = None,
    ) -> None:
        position = pl.col(rank) if isinstance(rank, str) else rank
        label = pl.col(relevance) if isinstance(relevance, str) else relevance
        self.rank = position.sort(nulls_last=True)  # = sorted by itself, read once
        self.rel = label.sort_by(position, nulls_last=True, maintain_order=True)
        self._num_ret = position.count()
        self._position = position
        self._distinct_documents = distinct_documents
        self._score = score
        #: Every value a sum adds (null where it adds nothing), for :meth:`terms_fit`.
        self.summed: list[pl.Expr] = []

    def one_ranking(self) -> pl.Expr:
        """Group-level: whether the group's rows are one ranking of one query.

        No rank is held twice and none is below 1, and (where the scope was given
        ``distinct_documents``) no document is listed twice or without an id: the
        judged tables :func:`polars_irmetrics.evaluate` accepts. A group that fails
        this (several queries in one group, a broken rank column) has no ranking to
        measure. Null ranks (judged, not retrieved) may repeat. Where the scope reads
        scores (the tie groups of ``ties='average'``), the ranks must also order them
        from the highest down (no NaN): a tie group's positions come from the scores,
        and ranks that disagree with them leave no one ranking to measure.
        """
        ranks = self._position.drop_nulls()
        ok = (ranks.n_unique() == ranks.len()) & (ranks.min().fill_null(1) >= 1)
        if self._distinct_documents is not None:
            ok = ok & self._distinct_documents
        if self._score is not None:
            retrieved = self._position.is_not_null()
            scores = self._score.cast(pl.Float64).filter(retrieved)
            ordered = scores.sort_by(self._position.filter(retrieved), maintain_order=True)
            rising = (ordered.diff() > 0).any() | ordered.is_nan().any()
            ok = ok & ~rising
        return ok

    def when_one_ranking(self, value: pl.Expr) -> pl.Expr:
        """Group-level: ``value`` where the rows are :meth:`one_ranking`, else null."""
        return pl.when(self.one_ranking()).then(value)

    @property
    def num_ret(self) -> pl.Expr:
        return self._num_ret

    def ranked_count(self, condition: pl.Expr) -> pl.Expr:
        return condition.cast(pl.Int64).cum_sum()

    def product_above(self, value: pl.Expr) -> pl.Expr:
        return _product_above(value)

    def greater_above(self, value: pl.Expr) -> pl.Expr:
        return _greater_above(value)

    def count_greater(self, value: pl.Expr) -> pl.Expr:
        return _count_greater(value)

    def terms_fit(self) -> pl.Expr:
        """Group-level: whether every term the sums add is finite and below
        :data:`FIXED_LIMIT`: the terms :class:`PlanScope`'s plan refuses (a label above 32
        with ``gain='exponential'``), where a value read by the user has no check
        to raise."""
        if not self.summed:
            return pl.lit(True)
        too_big = pl.any_horizontal(*(beyond_fixed(value) for value in self.summed))
        return ~too_big.fill_null(False).any()

    def sum(self, term: pl.Expr, where: pl.Expr | None = None) -> pl.Expr:
        value = term.cast(pl.Float64)
        if where is not None:
            value = pl.when(where).then(value)
        self.summed.append(value)
        # a float sum where a term is huge or NaN (which keeps a NaN); read with
        # terms_fit where the value must be one evaluate gives
        return read_once(value, exact_sum)

    def sum_in_order(
        self,
        term: pl.Expr,
        where: pl.Expr | None = None,
        k: int | None = None,
        by: pl.Expr | None = None,
    ) -> pl.Expr:
        kept = _within(where, self.rank if by is None else by, k)
        value = term.cast(pl.Float64)
        self.summed.append(value if kept is None else pl.when(kept).then(value))
        return _in_order(term, kept).cum_sum().last()

    def sorted_desc(self, value: pl.Expr) -> pl.Expr:
        return value.sort(descending=True, nulls_last=True)

    def row_index(self) -> pl.Expr:
        return pl.int_range(pl.len(), dtype=pl.Int64)

    def tied(self) -> tuple[pl.Expr, pl.Expr]:
        if self._score is None:
            raise MetricParameterError(
                "ties='average' averages the gains of documents with the same score: pass "
                "the score column, score='score'"
            )
        # the scores of the retrieved rows only (a judged row without a rank has none)
        score = pl.when(self._position.is_not_null()).then(self._score)
        low, high = (
            score.rank(method, descending=True)
            .cast(pl.Int64)
            .sort_by(self._position, nulls_last=True, maintain_order=True)
            for method in ("min", "max")
        )
        return low, high

    def window(self, expr: pl.Expr) -> pl.Expr:
        return expr


class PlanScope(Scope):
    """The evaluator's judged rows: ``rank`` and ``rel`` columns, sorted by (keys, rank).

    The plan numbers the queries in that order (``group``: 1, 2, ... in row order) and
    marks each query's first row (``first``, with its row number in ``start``), so
    running counts and row indexes are plain vectorised passes over the sorted rows
    (a global cumulative sum less its value before the query's first row: exact for
    integers), and windows partition on one integer column instead of the keys.

    Order-dependent quantities are registered as window columns in :attr:`derived`
    (name -> expression), which the plan adds before its group-by; asking twice for
    the same quantity reuses one column. The terms of float sums (:meth:`sum`) may
    read those columns, so they are registered apart, in :attr:`terms`, added after
    them: each computed once, however many cutoffs sum it. The plan
    refuses a query where a term reaches :data:`FIXED_LIMIT` (labels of 2**32 or more,
    or exponential gains of labels above 32), so the fixed-point sums never
    overflow.
    """

    def __init__(
        self,
        rank: str,
        rel: str,
        num_ret: str,
        *,
        group: str,
        first: str,
        start: str,
        tied: tuple[str, str] | None = None,
    ) -> None:
        self.rank = pl.col(rank)
        self.rel = pl.col(rel)
        self._num_ret = pl.col(num_ret).max().fill_null(0)
        #: Whether a formula read :attr:`num_ret`: only then does the plan count the
        #: documents of every query of the run (a group-by over the whole run).
        self.reads_num_ret = False
        self._group = group
        self._first = pl.col(first)
        self._start = pl.col(start)
        self.derived: dict[str, pl.Expr] = {}
        self.terms: dict[str, pl.Expr] = {}
        #: The running sums of :meth:`sum_in_order` and the units of :meth:`sum`'s terms
        #: (:func:`fixed_units`), which read the terms: added after them.
        self.running: dict[str, pl.Expr] = {}
        #: Every value a fixed-point sum adds (null where it adds nothing), once each,
        #: for the plan's check that none is :func:`beyond_fixed`.
        self.summed: dict[bytes, pl.Expr] = {}
        self._names: dict[bytes, str] = {}
        #: Whether a formula read :meth:`tied`: only then does the plan carry each
        #: judged row's tie group (which needs the scores).
        self.reads_ties = False
        self._tied = tied

    @property
    def num_ret(self) -> pl.Expr:
        self.reads_num_ret = True
        return self._num_ret

    def _register(
        self, expr: pl.Expr, stage: dict[str, pl.Expr] | None = None, *, window: bool = True
    ) -> pl.Expr:
        key = expr.meta.serialize() + bytes([window])  # never a shortened display
        name = self._names.get(key)
        if name is None:
            name = f"__irm_d{len(self._names)}"
            self._names[key] = name
            column = expr.over(self._group) if window else expr
            (self.derived if stage is None else stage)[name] = column.alias(name)
        return pl.col(name)

    def ranked_count(self, condition: pl.Expr) -> pl.Expr:
        flag = condition.cast(pl.Int64).fill_null(0)
        total = flag.cum_sum()
        before = pl.when(self._first).then(total - flag).forward_fill()
        return self._register(total - before, window=False)

    def sum(self, term: pl.Expr, where: pl.Expr | None = None) -> pl.Expr:
        # The term is a column, computed once for all the reductions that read it (the
        # sums at every cutoff), row by row: the formulas build terms from kernels that
        # give the same bits whatever the length of the batch they run on
        # (``_common.power``, ``_common.divide``), so no window is needed to make the
        # streaming and in-memory engines agree. The plan refuses terms of
        # FIXED_LIMIT or more.
        value = self._register(term.cast(pl.Float64), self.terms, window=False)
        # its two units (fixed_units) likewise, columns after the terms' (null where the
        # term is): each sum of the group-by then adds integers, once per cutoff
        units = fixed_units(value)
        high, low = (self._register(u, self.running, window=False) for u in units)
        if where is not None:
            value = pl.when(where).then(value)
            high, low = pl.when(where).then(high), pl.when(where).then(low)
        self.summed.setdefault(value.meta.serialize(), value)
        return fixed_float(high.sum(), low.sum())

    def sum_in_order(
        self,
        term: pl.Expr,
        where: pl.Expr | None = None,
        k: int | None = None,
        by: pl.Expr | None = None,
    ) -> pl.Expr:
        # A running sum within the query (a window on its number: a global running sum
        # less its value before the query would not give the same bits), one per term and
        # ``where``, read on one row of the query (its last, or the last within k), so
        # the group-by takes one value, in any row order, with a plain reduction.
        value = self._register(term.cast(pl.Float64), self.terms, window=False)
        position = self.rank if by is None else by
        kept = _within(where, position, k)
        # the plan refuses the same terms as for Scope.sum (2**32 or more, not finite):
        # the checks do not depend on how a metric adds its terms
        added = value if kept is None else pl.when(kept).then(value)
        self.summed.setdefault(added.meta.serialize(), added)
        running = _in_order(value, where).cum_sum().over(self._group)
        running = self._register(running, self.running, window=False)
        last = self._first.shift(-1, fill_value=True)  # the query's last row
        if k is None:
            return pl.when(self._register(last, self.running, window=False)).then(running).max()
        following = pl.when(last).then(None).otherwise(position.shift(-1))
        following = self._register(following, self.running, window=False)
        at_k = (position <= k) & ~(following <= k).fill_null(False)
        return pl.when(at_k).then(running).max().fill_null(0.0)

    def sorted_desc(self, value: pl.Expr) -> pl.Expr:
        # One global sort by (query number, value): each query keeps its block of rows.
        group = pl.col(self._group)
        ordered = value.sort_by([group, value], descending=[False, True], nulls_last=True)
        return self._register(ordered, window=False)

    def row_index(self) -> pl.Expr:
        index = pl.int_range(pl.len(), dtype=pl.Int64) - self._start
        return self._register(index, window=False)

    def product_above(self, value: pl.Expr) -> pl.Expr:
        return self._register(_product_above(value))

    def greater_above(self, value: pl.Expr) -> pl.Expr:
        return self._register(_greater_above(value))

    def count_greater(self, value: pl.Expr) -> pl.Expr:
        return self._register(_count_greater(value))

    def tied(self) -> tuple[pl.Expr, pl.Expr]:
        if self._tied is None:  # pragma: no cover - the plan always names the columns
            raise MetricParameterError("ties='average' needs the scores")
        self.reads_ties = True
        return pl.col(self._tied[0]), pl.col(self._tied[1])

    def window(self, expr: pl.Expr) -> pl.Expr:
        return self._register(expr)
