"""The sums every off-policy estimate is made of, exact, so that they add up across parts.

Each estimate is a function of a few sums over the log's rows (the contributions, the
weights and their squares; :func:`~polars_irmetrics.metrics.ope.components`), a count
(the rows, or the rounds of a slate) and maxima (the largest weight). The plan computes
them in two steps, on one machine as out of core (``buckets=``) and on Spark and Dask:

1. :meth:`Summary.part`: one row per ``by`` group of a part of the log (on one machine,
   the whole log is one part) with each sum kept *exactly*, as two integers (Int128):
   whole numbers and units of 2**-64, each term ``floor(v 2**64)`` units (exact to
   2**-64 per term, negative ones too, whatever its size below 2**96;
   :func:`_exact_terms`);
2. :meth:`Summary.merge`: the parts' rows of each group added (integers: in any order,
   the same total), then each estimate computed from the totals by the same float
   operations.

So the estimates are the same to the last bit however the log is split, read or ordered,
which a float sum (added in the engine's order) is not. :func:`exact_sum` is the one
exact sum of the off-policy plans (the row terms, the bootstrap's buckets, the lists of
the list shape: :func:`exact_list_sum`). The sums that hold weights (not the direct
method's; ``per_query=True``'s rows of the slate estimators and ``cascade_dr`` at a
power of two of each round's own: docs/guides/ope.md) are read at a power of two of their own
(:mod:`polars_irmetrics.ope.scale`: 1 for terms of ordinary size, otherwise the one
bringing the whole log's largest term to [1, 2)), so that tiny or huge weights keep
their digits; a term no scale keeps (subnormal, infinite, or an overflowing product) is
refused naming the row or the metric, the column and the cause
(:class:`~polars_irmetrics.errors.InvalidValueError`), never a NaN or a float sum. A sum
read unscaled holds terms below 2**96 in magnitude; :meth:`Summary.merge` refuses one
that reaches it. A NaN term (an estimator's own 0 / 0, such as ``dr_os(lambda=0)`` at a
weight of 0, which obp's is too) makes the estimate NaN. The data checks
(:class:`~polars_irmetrics.ope.checks.Check`) are carried the same way: counts added,
the first failing round the least over the parts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.known_schema import mapped, schema_of, without
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.ope.checks import Check, raising
from polars_irmetrics.ope.scale import SQUARE_HIGH, SUM_HIGH, sum_scale, unscaled

__all__ = [
    "BOUND",
    "EXACT_LIMIT",
    "PartsPlan",
    "Summary",
    "beyond_range",
    "bounded_columns",
    "bounded_list_columns",
    "effective_sample_size",
    "exact_added",
    "exact_columns",
    "exact_list_columns",
    "exact_list_sum",
    "exact_mean",
    "exact_sum",
    "exact_total",
    "exact_total_over",
    "scale_column",
    "unscaled_total",
    "with_exact_totals",
]

#: Terms at or above this magnitude (or not finite) are not summed exactly: the
#: estimates that read them are NaN.
EXACT_LIMIT = 2.0**96
_UNIT = 2.0**64
_WHOLE = pl.lit(2**64, dtype=pl.Int128)
#: Totals below this many whole units are rounded to a double in one step.
_ONCE = pl.lit(2**62, dtype=pl.Int128)


def _hi(name: str) -> str:
    return f"{INTERNAL}{name}#whole"


def _lo(name: str) -> str:
    return f"{INTERNAL}{name}#units"


def _bad(name: str) -> str:
    return f"{INTERNAL}{name}#inexact"


def _pk(name: str) -> str:
    return f"{INTERNAL}{name}#peak"


def _sc(name: str) -> str:
    return f"{INTERNAL}{name}#scale"


@functools.lru_cache(maxsize=512)
def exact_total(name: str) -> pl.Expr:
    """The float value of the exact sum ``name`` (its whole and fraction columns), NaN
    where a term was not summed exactly. Built once per name and kept (an expression
    is a value: each metric of each call read the same one, some 30 expressions built
    anew every time).

    Examples
    --------
    0.1 + 0.2 + 0.3 added left to right is 0.6000000000000001; the exact sum of the three
    doubles rounds to 0.6, in any order:

    >>> import polars as pl
    >>> s = Summary(count="n", count_expr=pl.len(), sums={"v": pl.col("v")})
    >>> frame = pl.LazyFrame({"v": [0.1, 0.2, 0.3]})
    >>> s.part(frame, []).select(exact_total("v")).collect().item()
    0.6
    """
    return _as_float(pl.col(_hi(name)), pl.col(_lo(name)), pl.col(_bad(name)))


def scale_column(name: str) -> pl.Expr:
    """The column of the scale of sum ``name`` of a scaled :class:`Summary`."""
    return pl.col(_sc(name))


@functools.lru_cache(maxsize=512)
def unscaled_total(name: str, *, square: bool = False) -> pl.Expr:
    """:func:`exact_total` of a sum of a scaled :class:`Summary` divided by its scale
    (exact: a power of two), the sum of its terms as given; ``square``: a sum of
    squares (:attr:`Summary.squares`), divided by its base's scale twice.

    >>> s = Summary(count="n", count_expr=pl.len(), sums={"v": pl.col("v")}, scaled=True)
    >>> frame = pl.LazyFrame({"v": [1e-30, 3e-30]})
    >>> s.part(frame, []).select(unscaled_total("v")).collect().item()
    4e-30
    """
    scale = pl.col(_sc(name))
    total = exact_total(name) / scale
    return total / scale if square else total


@functools.lru_cache(maxsize=512)
def effective_sample_size(weights: str, squares: str, *, scaled: bool = False) -> pl.Expr:
    """Kish's effective sample size of an estimator's weights, ``(sum w)^2 / sum w^2``,
    from the exact sums ``weights`` and ``squares``; 0 where every weight is 0 (no row
    carries weight: ``ips(clip=0)``, a policy that takes none of the logged actions).
    That 0 / 0 was NaN, which polars orders above every number: a filter
    ``pl.col("ips_ess") > 100`` kept such a group. ``scaled`` (a scaled
    :class:`Summary`, ``squares`` the squares of ``weights``): the ratio read at the
    squares' scale, where it holds whatever the weights' magnitude (the sum of weights
    times the ratio of the two scales, a power of two: exact).

    >>> s = Summary(count="n", count_expr=pl.len(), sums={"w": pl.col("w"),
    ...                                                   "w2": pl.col("w") ** 2})
    >>> frame = pl.LazyFrame({"w": [0.0, 0.0], "g": [1, 2]})
    >>> s.part(frame, []).select(effective_sample_size("w", "w2")).collect().item()
    0.0
    """
    w, w2 = exact_total(weights), exact_total(squares)
    if scaled:
        w = w * (pl.col(_sc(squares)) / pl.col(_sc(weights)))
    return pl.when(w2 == 0.0).then(pl.lit(0.0)).otherwise(w**2 / w2)


def exact_total_over(name: str, keys: list[str]) -> pl.Expr:
    """The float of the exact sum ``name`` added over the rows of each group of ``keys``
    (all the rows without keys), broadcast to every row: the integers added, so the same
    bits as one exact sum over the group's terms.

    >>> s = Summary(count="n", count_expr=pl.len(), sums={"v": pl.col("v")})
    >>> frame = pl.LazyFrame({"g": [1, 1, 2], "v": [0.1, 0.2, 0.3]})
    >>> parts = s.part(frame, ["g"]).sort("g")
    >>> parts.select("g", exact_total_over("v", [])).collect()["v"].to_list()
    [0.6, 0.6]
    """
    hi, lo, bad = pl.col(_hi(name)).sum(), pl.col(_lo(name)).sum(), pl.col(_bad(name)).max()
    if keys:
        hi, lo, bad = hi.over(keys), lo.over(keys), bad.over(keys)
    return _as_float(hi, lo, bad).alias(name)


#: A sum's flag: its terms summed exactly; one is NaN (the sum is NaN, as the
#: estimator's own 0 / 0 is, obp's too); one is too large (an infinity, or 2**96 or more
#: in magnitude: refused).
_EXACT, _NAN, _TOO_LARGE = 0, 1, 2
#: Terms below this magnitude are summed as units of 2**-64 (:func:`_exact_terms`).
_SMALL = 2.0**32


def _exact_terms(value: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Per term, two Int128 whose sums give the exact sum: a term below 2**32 in
    magnitude as a whole number of 2**-64, ``floor(v 2**64)`` (one product by a power of
    2, exact; negative terms too), in the second; a larger one (below
    :data:`EXACT_LIMIT`) as its whole part in the first and its fraction's units of
    2**-64 in the second (``v - floor(v)`` is exact for ``|v| >= 1``). Null terms add
    0; NaN, infinities and terms from :data:`EXACT_LIMIT` up add nothing exact, and the
    sum's flag tells (:func:`_sum_flag`). Below 2**32, the units stay below 2**96, so that
    2**31 terms add up within Int128.

    Written with masks rather than nulls: a non-strict cast of a column with nulls to
    Int128 is several times slower, inside ``list.eval`` above all."""
    v = value.cast(pl.Float64).fill_null(0.0)
    large = _large(v)
    whole = v.floor()
    units = pl.when(large).then(v - whole).otherwise(v) * _UNIT
    return (
        (whole * large.cast(pl.Float64)).cast(pl.Int128, strict=False),
        units.floor().cast(pl.Int128, strict=False),
    )


def _large(v: pl.Expr) -> pl.Expr:
    """Per term (nulls filled): summed as a whole part and units (:func:`_exact_terms`).
    A term too large for an exact sum, or NaN (which polars orders above every number),
    counts as large too: what it adds is never read (the sum's flag says so,
    :func:`_sum_flag`), and one comparison is cheaper than two."""
    return v.abs() >= _SMALL


def _too_large(v: pl.Expr) -> pl.Expr:
    """Per term: infinite, or :data:`EXACT_LIMIT` or more in magnitude (not NaN, which
    polars orders above every number)."""
    return (v.abs() >= EXACT_LIMIT) & v.is_not_nan()


def _flag(too_large: pl.Expr, nan: pl.Expr) -> pl.Expr:
    """The flag (:data:`_EXACT`, :data:`_NAN` or :data:`_TOO_LARGE`) of a term, or of a
    sum from whether one of its terms is too large (:func:`_too_large`) and whether one
    is NaN: a sum's flag is the largest of its terms' flags."""
    return (
        pl.when(too_large)
        .then(pl.lit(_TOO_LARGE, pl.Int8))
        .when(nan)
        .then(pl.lit(_NAN, pl.Int8))
        .otherwise(pl.lit(_EXACT, pl.Int8))
    )


def _exact_aggs(value: pl.Expr, *, grouped: bool = True) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """The sum of ``value`` as two Int128 sums, whole numbers and units of 2**-64
    (:func:`_exact_terms`), and its flag (Int8, :func:`_sum_flag`); nulls count as 0.

    ``grouped=False`` (a ``select`` over all the rows, no ``group_by``): the whole
    numbers of only the large terms, filtered, are cast and added: the same sum, and
    cheaper than casting every row's 0 (in a ``group_by`` a filter costs more)."""
    v = value.cast(pl.Float64)
    whole, units = _exact_terms(v)
    if not grouped:
        term = v.fill_null(0.0)
        whole = term.filter(_large(term)).floor().cast(pl.Int128, strict=False)
    return whole.sum(), units.sum(), _sum_flag(v)


def _sum_flag(v: pl.Expr) -> pl.Expr:
    """Group context: the flag of the sum of the Float64 terms ``v``, the largest of
    their flags (:func:`_flag`), from two reductions rather than a flag per term: the
    largest magnitude (polars' ``max`` skips NaN, unless every term is NaN) reaches
    :data:`EXACT_LIMIT` (an infinity too) where a term is too large; otherwise the float
    sum is NaN exactly where a term is NaN (terms below 2**96, fewer than 2**31 of
    them, never overflow, and the one other NaN, an infinity minus an infinity, is too
    large first).

    >>> nan, inf = float("nan"), float("inf")
    >>> v = [1.0, nan, nan, inf, 2.0**96, -1.0, nan]
    >>> frame = pl.DataFrame({"g": [1, 1, 2, 2, 3, 3, 4], "v": v})
    >>> flag = _sum_flag(pl.col("v")).alias("flag")
    >>> frame.group_by("g").agg(flag).sort("g")["flag"].to_list()
    [1, 2, 2, 1]
    """
    size = v.abs().max()
    return _flag(size.is_not_nan() & (size >= EXACT_LIMIT), v.sum().is_nan())


def exact_columns(name: str, value: pl.Expr) -> list[pl.Expr]:
    """The aggregations of the exact sum of ``value`` as the columns of ``name``
    (its whole numbers, units of 2**-64 and flag), which :func:`exact_added` adds across parts
    and :func:`exact_total` reads."""
    hi, lo, bad = _exact_aggs(value)
    return [hi.alias(_hi(name)), lo.alias(_lo(name)), bad.alias(_bad(name))]


#: A bounded sum's terms and total stay below this in magnitude (:func:`bounded_columns`).
BOUND = 2.0**62


def bounded_columns(name: str, value: pl.Expr, *, nan: pl.Expr | None = None) -> list[pl.Expr]:
    """:func:`exact_columns` of terms whose total is known to stay below :data:`BOUND`
    in magnitude, each term too: each term's units of 2**-64 (below 2**126) added in
    one Int128 sum, the whole numbers' column 0. The same integer total, so the same
    float, as :func:`exact_columns` for such terms, at about half the cost.

    The caller refuses the inputs that break the bound (the off-policy plan: a policy's
    probabilities, in [0, 1] and adding up to 1, times ``q_hat`` below :data:`BOUND`);
    a NaN term makes the sum NaN, as there: the flag reads the terms' float sum, or
    ``nan`` where given, an expression of the aggregated frame telling whether a term
    is NaN (the flag is then computed after the aggregation, where the caller puts it:
    the off-policy rows read it from a byte of facts OR-ed over each round's rows).

    >>> frame = pl.DataFrame({"v": [0.1, 0.2, 2.0**40 + 0.3]})
    >>> def total(columns):
    ...     return frame.select(columns).select(exact_total("x")).item()
    >>> total(bounded_columns("x", pl.col("v"))) == total(exact_columns("x", pl.col("v")))
    True
    """
    # NaN exactly where a term is: the terms stay below 2**62 (an infinity is refused)
    some_nan = value.cast(pl.Float64).sum().is_nan() if nan is None else nan
    return [
        pl.lit(0, pl.Int128).alias(_hi(name)),
        _units(value).sum().alias(_lo(name)),
        _flag(pl.lit(False), some_nan).alias(_bad(name)),
    ]


def bounded_list_columns(name: str, items: pl.Expr) -> list[pl.Expr]:
    """Row-wise: :func:`bounded_columns` of each list's items, the same integers as
    :func:`exact_list_columns` gives for such items."""
    nan = items.list.eval(pl.element().cast(pl.Float64)).list.sum().is_nan()
    return [
        pl.lit(0, pl.Int128).alias(_hi(name)),
        items.list.eval(_units(pl.element())).list.sum().alias(_lo(name)),
        _flag(pl.lit(False), nan).alias(_bad(name)),
    ]


def _units(value: pl.Expr) -> pl.Expr:
    """Per term of a bounded sum: ``floor(v 2**64)`` as an Int128 (nulls 0; NaN null)."""
    return (value.cast(pl.Float64).fill_null(0.0) * _UNIT).floor().cast(pl.Int128, strict=False)


def with_exact_totals(frame: pl.LazyFrame, names: Sequence[str]) -> pl.LazyFrame:
    """``frame`` with the float of each exact sum in ``names`` (:func:`exact_total` of
    its columns, :func:`exact_columns` or :func:`exact_list_columns`) in a column of
    that name, in place of its integer columns."""
    return frame.with_columns(exact_total(name).alias(name) for name in names).drop(
        column for name in names for column in (_hi(name), _lo(name), _bad(name))
    )


def exact_added(name: str) -> list[pl.Expr]:
    """The aggregations adding the exact sum ``name`` of several rows (parts of it:
    :func:`exact_columns`), exactly: the integers added, the flags' largest kept."""
    return [pl.col(_hi(name)).sum(), pl.col(_lo(name)).sum(), pl.col(_bad(name)).max()]


def _as_float(hi: pl.Expr, lo: pl.Expr, bad: pl.Expr) -> pl.Expr:
    """The float of an exact sum's columns (:func:`_exact_aggs`): the total ``hi 2**64 +
    lo`` units of 2**-64 rounded once to the nearest double. Below 2**62 in magnitude,
    the total's integer is cast (the division by 2**64 is exact); above, the whole part
    is, with the fraction as a last half unit ``2 whole + 1`` (an odd integer of 64 bits
    or more is never halfway between two doubles, and lies on the same side as the
    total)."""
    carry = lo // _WHOLE
    whole = hi + carry
    fraction = lo - carry * _WHOLE  # in [0, 2**64)
    small = whole.abs() < _ONCE
    once = (pl.when(small).then(whole).otherwise(0) * _WHOLE + fraction).cast(pl.Float64) / _UNIT
    apart = (whole * 2 + (fraction > 0).cast(pl.Int128)).cast(pl.Float64) / 2.0
    value = pl.when(small).then(once).otherwise(apart)
    return pl.when(bad > _EXACT).then(float("nan")).otherwise(value)


def exact_sum(value: pl.Expr) -> pl.Expr:
    """``value.sum()`` (an aggregation) computed exactly (the terms as integers of
    2**-64), so the same bits in any row order, nulls skipped; NaN where a term is NaN
    (an estimator's own 0 / 0, as obp's) or too large to be summed exactly (infinite, or
    :data:`EXACT_LIMIT` or more in magnitude), which :meth:`Summary.merge` refuses. Its
    float reads each integer sum several times: in a plan over many rows,
    :func:`exact_columns` then :func:`exact_total` sums them once.

    Examples
    --------
    >>> frame = pl.DataFrame({"v": [0.1, 0.2, 0.3, None]})
    >>> frame.select(exact_sum(pl.col("v"))).item(), frame["v"].sum()
    (0.6, 0.6000000000000001)
    """
    return _as_float(*_exact_aggs(value))


def exact_mean(value: pl.Expr) -> pl.Expr:
    """Group context: the mean of the non-null values, from :func:`exact_sum`."""
    return exact_sum(value) / value.count()


def exact_list_sum(items: pl.Expr) -> pl.Expr:
    """Each list's :func:`exact_sum` (a row-wise expression of a List column): the same
    integers added, so the same bits as :func:`exact_sum` over the items as rows. In a
    plan, :func:`exact_list_columns` then :func:`exact_total` computes each list's
    integers once.

    >>> frame = pl.DataFrame({"v": [[0.1, 0.2, 0.3], [1e300, 1.0], [-0.1, 0.1], []]})
    >>> frame.select(exact_list_sum(pl.col("v")).alias("sum"))["sum"].to_list()
    [0.6, nan, 0.0, 0.0]
    """
    return _as_float(*_exact_list_parts(items))


def exact_list_columns(name: str, items: pl.Expr) -> list[pl.Expr]:
    """Row-wise: the columns of ``name`` holding each list's exact sum of ``items``
    (:func:`exact_list_sum`), which :func:`exact_total` reads in a later step."""
    large, units, flag = _exact_list_parts(items)
    return [large.alias(_hi(name)), units.alias(_lo(name)), flag.alias(_bad(name))]


def _exact_list_parts(items: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    whole, units = _exact_terms(pl.element())
    item = pl.element().cast(pl.Float64)
    too_large = items.list.eval(_too_large(item)).list.any()
    nan = items.list.eval(item.is_nan()).list.any()
    return (
        items.list.eval(whole).list.sum(),
        items.list.eval(units).list.sum(),
        _flag(too_large, nan),
    )


def _first_of_each(exprs: dict[str, pl.Expr]) -> dict[str, str]:
    """Each name -> the first name whose expression is the same (``meta.eq``)."""
    first: dict[str, str] = {}
    seen: list[tuple[str, pl.Expr]] = []
    for name, value in exprs.items():
        same = next((n for n, v in seen if v.meta.eq(value)), None)
        if same is None:
            seen.append((name, value))
        first[name] = same or name
    return first


@dataclass(frozen=True)
class Summary:
    """The sums, maxima and checks of an estimate, and the result computed from them.

    ``count``/``count_expr``: the count column (``num_rows``, ``num_rounds``) and its
    expression over a part's rows (a part holds whole rounds, so counts add up);
    ``sums``/``maxima``: name -> the row expression summed (exactly) or maximised;
    ``outputs``: the result's columns after the count, each an expression of the
    count column, :func:`exact_total` of the sums and the maxima's columns.

    ``within`` (a column, the slates' ``position``): the parts keep one row per ``by``
    group and value of it; ``within_outputs`` are computed per value (from its exact
    sums), then added over the values in their order (a running sum) into columns of
    those names, which ``outputs`` read beside the sums over every value (the integers
    added, exactly): what a slate estimator normalised within each position needs.

    ``scale`` (a column of the rows, the rewards' scale: :mod:`polars_irmetrics.ope.scale`,
    one value for the whole log): kept as a maximum through the parts, and in the result
    beside the outputs, which the caller divides by it last
    (:func:`~polars_irmetrics.ope.scale.unscaled`).

    ``scaled``: each sum is read times a power of two of its own
    (:func:`~polars_irmetrics.ope.scale.sum_scale` of its terms' largest magnitude over
    the whole log: 1 from 0.5 up to 2**96, the same bits as unscaled), so that terms
    all tiny (the importance weights of a small ``clip=``, or of a policy that gives
    every logged action a tiny probability) or all huge (tiny propensities) keep their
    digits; ``outputs`` read :func:`unscaled_total`. ``squares``: a sum of squares ->
    the sum it squares, its terms ``(term * s)**2`` with ``s`` from the base's largest
    magnitude, bounded by 2**48 (so that the squares stay below 2**96). The scales are
    columns of :meth:`part`'s rows, with the terms' largest magnitudes (``#peak``), kept
    through the merge: a split log's parts take the whole log's largest magnitudes from
    a first pass (:meth:`rescaled`).
    """

    count: str
    count_expr: pl.Expr
    sums: dict[str, pl.Expr] = field(default_factory=dict)
    maxima: dict[str, pl.Expr] = field(default_factory=dict)
    outputs: list[pl.Expr] = field(default_factory=list)
    checks: Sequence[Check] = ()
    within: str | None = None
    within_outputs: dict[str, pl.Expr] = field(default_factory=dict)
    scale: str | None = None
    scaled: bool = False
    squares: dict[str, str] = field(default_factory=dict)
    #: Sums of a scaled summary read at scale 1 all the same (terms that hold no weight,
    #: such as the direct method's: the same bits as before, and no second pass), their
    #: squares too.
    fixed: set[str] = field(default_factory=set)
    #: A sum of squares' terms squared where they are not its base sum's (of
    #: :attr:`squares`): the rounds' values of a slate or cascade estimate (the normal
    #: interval), whose sum is that of its rows' values.
    roots: dict[str, pl.Expr] = field(default_factory=dict)
    #: The terms whose largest magnitude gives a sum of squares' scale where they are
    #: not its terms squared (:attr:`roots`): a bound of the rounds' values, the same on
    #: every pass of a split log (the rounds' values are summed at their rows' values'
    #: scale, 1 on a first pass).
    root_peaks: dict[str, pl.Expr] = field(default_factory=dict)
    #: What a scaled summary's refusal of a term beyond float64's range says of the
    #: terms (:func:`_refusing_inexact`), ``{label}`` the metric; ``None``: the
    #: single-action estimators' importance weights and rewards.
    refusal: str | None = None

    def _part_aggs(
        self, first: dict[str, str], first_max: dict[str, str], *, grouped: bool, split: bool
    ) -> list[pl.Expr]:
        aggs = [self.count_expr.cast(pl.Int64).alias(self.count)]
        for name, value in self.sums.items():
            if first[name] == name:
                hi, lo, bad = _exact_aggs(self._term(name, value), grouped=grouped)
                aggs += [hi.alias(_hi(name)), lo.alias(_lo(name)), bad.alias(_bad(name))]
                if self.scaled:  # the part's largest terms: a split log's (rescaled)
                    peak = self._base(name).cast(pl.Float64).abs().max()
                    peak = peak if split else pl.lit(None, pl.Float64)
                    aggs += [peak.alias(_pk(name)), pl.col(_sc(name)).max()]
        aggs += [
            value.max().alias(name)
            for name, value in self.maxima.items()
            if first_max[name] == name
        ]
        aggs += self._scale()
        return aggs + [e for check in self.checks for e in check.aggs()]

    def _base(self, name: str) -> pl.Expr:
        """The terms whose largest magnitude gives the scale of sum ``name``: its own, or
        those it squares (its :attr:`root_peaks` or :attr:`roots` where given)."""
        if name in self.root_peaks:
            return self.root_peaks[name]
        if name in self.roots:
            return self.roots[name]
        return self.sums[self.squares.get(name, name)]

    def _term(self, name: str, value: pl.Expr) -> pl.Expr:
        """A row's term of sum ``name`` as summed: times its scale (a scaled summary),
        a square's base scaled before it is squared (so that no square of a huge term
        overflows float64)."""
        if not self.scaled or self.squares.get(name, name) in self.fixed:
            return value
        if name in self.squares:
            root = self.roots.get(name, self.sums[self.squares[name]])
            base = root.cast(pl.Float64) * pl.col(_sc(name))
            return base * base
        return value.cast(pl.Float64) * pl.col(_sc(name))

    def _scales(self, peaks: dict[str, float | None] | None, names: list[str]) -> list[pl.Expr]:
        """The scale of each sum of ``names``, a column of the rows: from its terms'
        largest magnitude over these rows (``peaks`` ``None``: the rows are the whole
        log), or from ``peaks`` (the whole log's, a first pass's; a name without one: 1)."""
        columns = []
        for name in names:
            if peaks is None:
                peak = self._base(name).cast(pl.Float64).abs().max()
            else:
                peak = pl.lit(peaks.get(name), pl.Float64)
            columns.append(self._implied(name, peak).alias(_sc(name)))
        return columns

    def sum_scale(self, name: str, peaks: dict[str, float | None] | None) -> pl.Expr:
        """The scale of sum ``name`` as :meth:`part` reads it (a scaled summary), an
        expression of the rows: from its terms' largest magnitude over the rows
        (``peaks`` ``None``: the rows are the whole log) or from ``peaks`` (the whole
        log's, :meth:`rescaled`; ``{}``: 1). Other sums of the same terms (the
        bootstrap's buckets: :func:`~polars_irmetrics.ope.intervals.bootstrap_part`)
        read them at it, so that they keep the point estimate's digits.

        >>> s = Summary(count="n", count_expr=pl.len(), sums={"v": pl.col("v")}, scaled=True)
        >>> frame = pl.LazyFrame({"v": [1e-30, 3e-30]})
        >>> frame.select(s.sum_scale("v", None)).collect().item() == 2.0**99
        True
        >>> frame.select(s.sum_scale("v", {})).collect().item()
        1.0
        """
        (scale,) = self._scales(peaks, [name])
        return scale

    def _implied(self, name: str, peak: pl.Expr) -> pl.Expr:
        """The scale of sum ``name`` from its terms' largest magnitude ``peak``: 1 for a
        fixed one (:attr:`fixed`)."""
        if self.squares.get(name, name) in self.fixed:
            return pl.lit(1.0)
        return sum_scale(peak, SQUARE_HIGH if name in self.squares else SUM_HIGH)

    def rescaled(self, parts: pl.DataFrame) -> dict[str, float | None] | None:
        """The whole log's largest magnitude of each sum's terms, from ``parts`` (every
        part's :meth:`part`), where the scales they give differ from those the parts
        were read at (the parts are then read again with them: :meth:`part`'s
        ``peaks``); ``None`` where they are the same (or the summary is not scaled):
        the parts' sums stand.

        >>> s = Summary(count="n", count_expr=pl.len(), sums={"v": pl.col("v")}, scaled=True)
        >>> frame = pl.LazyFrame({"v": [1e-30, 3e-30]})
        >>> s.rescaled(s.part(frame, [], peaks={}).collect())
        {'v': 3e-30}
        >>> s.rescaled(s.part(frame, [], peaks={"v": 3e-30}).collect()) is None
        True
        """
        if not self.scaled:
            return None
        names = list(self.sums)
        frame = parts.lazy()
        found = frame.select(
            *(pl.col(_pk(name)).max().alias(name) for name in names),
            *(
                (
                    self._implied(name, pl.col(_pk(name)).max())
                    != pl.col(_sc(name)).max().fill_null(1.0)
                ).alias(f"{name}#differs")
                for name in names
            ),
        ).collect()
        if not any(found[f"{name}#differs"].fill_null(False).item() for name in names):
            return None
        return {name: found[name].item() for name in names}

    def _scale(self) -> list[pl.Expr]:
        """The scale's column over several rows (each the same, or null: a part without
        rows), as a maximum."""
        return [] if self.scale is None else [pl.col(self.scale).max()]

    def part(
        self,
        rows: pl.LazyFrame,
        by: list[str],
        peaks: dict[str, float | None] | None = None,
    ) -> pl.LazyFrame:
        """One row per ``by`` group of ``rows`` (one row without ``by``, even for no
        rows): the count, the exact sums, the maxima and the checks' columns; a sum or
        maximum of the same expression as an earlier one is computed once. A scaled
        summary's sums are read at the scales of ``peaks`` (the whole log's largest
        magnitude of each sum's terms; ``{}``: every scale 1, a split log's first pass)
        or, ``None``, of ``rows`` (the whole log)."""
        # estimators share sums (the weights of ips, snips and dr are one): each once
        first, first_max = _first_of_each(self.sums), _first_of_each(self.maxima)
        if self.scaled:
            # a sum of squares shares only another square's columns (its terms are scaled
            # at its base's scale before they are squared)
            first = {
                name: same if (same in self.squares) == (name in self.squares) else name
                for name, same in first.items()
            }
            rows = rows.with_columns(self._scales(peaks, [n for n, f in first.items() if n == f]))
        keys = [*by, *([self.within] if self.within else [])]
        aggs = self._part_aggs(first, first_max, grouped=bool(keys), split=peaks is not None)
        part = rows.group_by(keys).agg(aggs) if keys else rows.select(aggs)
        columns = (_hi, _lo, _bad, _pk, _sc) if self.scaled else (_hi, _lo, _bad)
        copies = [
            pl.col(column(same)).alias(column(name))
            for name, same in first.items()
            if same != name
            for column in columns
        ]
        copies += [pl.col(same).alias(name) for name, same in first_max.items() if same != name]
        return part.with_columns(copies) if copies else part

    def _merge_aggs(self) -> list[pl.Expr]:
        """Each column of :meth:`part` over several rows: counts and integers added,
        maxima and first rounds kept."""
        aggs = [pl.col(self.count).sum()]
        for name in self.sums:
            aggs += [
                pl.col(_hi(name)).sum(),
                pl.col(_lo(name)).sum(),
                pl.col(_bad(name)).max(),
            ]
            if self.scaled:
                aggs += [pl.col(_pk(name)).max(), pl.col(_sc(name)).max()]
        aggs += [pl.col(name).max() for name in self.maxima]
        aggs += self._scale()
        for check in self.checks:
            aggs += [pl.col(check.count).sum(), pl.col(check.first).min()]
        return aggs

    def merge(self, parts: pl.LazyFrame, by: list[str], options: EvalOptions) -> pl.LazyFrame:
        """The result, one row per ``by`` group (sorted by the keys), from the rows of
        :meth:`part` over any split of the log; the checks raise when it is collected.
        Without a ``by`` key an empty log still gives one row: its count 0 and every
        output null."""
        aggs = self._merge_aggs()
        if self.within is not None:
            per_value = parts.group_by([*by, self.within]).agg(aggs)
            per_value = per_value.with_columns(
                value.alias(name) for name, value in self.within_outputs.items()
            )
            aggs = self._merge_aggs() + [
                pl.col(name).sort_by(self.within).cum_sum().last() for name in self.within_outputs
            ]
            parts = per_value
        merged = (
            parts.group_by(by).agg(aggs).sort(by, nulls_last=True) if by else parts.select(aggs)
        )
        flags = [c for check in self.checks for c in (check.count, check.first)]
        inexact = [_bad(name) for name in self.sums]
        # no row (an empty log): every value null, as a ratio's 0/0 is elsewhere (the
        # weights' effective sample size, sum w squared over sum w^2, would be NaN)
        rows = pl.col(self.count) > 0
        outputs = [pl.when(rows).then(e).alias(e.meta.output_name()) for e in self.outputs]
        scale = [] if self.scale is None else [self.scale]
        result = merged.select(*by, pl.col(self.count), *outputs, *scale, *flags, *inexact)
        return _refusing_inexact(raising(result, list(self.checks), options), self, options)


def beyond_range(label: str, options: EvalOptions) -> str:
    """The refusal of a single-action estimator ``label`` one of whose terms (or
    ``per_query=True``'s rows) is beyond float64's range.

    >>> beyond_range("ips", EvalOptions())[:60]
    "metric 'ips' cannot be summed: a term of its sums is beyond "
    """
    return (
        f"metric {label!r} cannot be summed: a term of its sums is beyond "
        "float64's range (the product of a huge importance weight pi / "
        f"{options.propensity!r} and a huge {options.reward!r} or 'q_hat'): "
        "read the rewards and q_hat at a larger unit (e.g. "
        f"pl.col({options.reward!r}) * 2.0**-600, the estimates then at that "
        "unit), or cap the weights (e.g. ips(clip=1e300))"
    )


def _refusing_inexact(
    result: pl.LazyFrame, summary: Summary, options: EvalOptions
) -> pl.LazyFrame:
    """``result`` without the sums' inexact flags, raising (when it is collected) for the
    first metric one of whose sums had a term that is not finite or reaches 2**96."""
    names = list(summary.sums)
    flags = [_bad(name) for name in names]
    schema = without(schema_of(result), flags)

    def refuse(frame: pl.DataFrame) -> pl.DataFrame:
        for name, flag in zip(names, flags, strict=True):
            if (frame[flag] == _TOO_LARGE).any():
                label = name.rsplit(":", 1)[0].removeprefix(INTERNAL)
                if summary.scaled and summary.refusal is not None:
                    raise InvalidValueError(summary.refusal.replace("{label}", repr(label)))
                if summary.scaled:  # each sum at its own scale: a term not finite
                    raise InvalidValueError(beyond_range(label, options))
                raise InvalidValueError(
                    f"metric {label!r} cannot be summed exactly: a term of its sums is not "
                    "finite or reaches 2**96 in magnitude, beyond the exact sums' range (the "
                    f"importance weight pi / {options.propensity!r} squared does for a "
                    f"column {options.propensity!r} below about 3.6e-15, or a huge "
                    f"{options.reward!r} or 'q_hat'): drop those rows, or cap the weights "
                    "(e.g. ips(clip=1000))"
                )
        return frame.drop(flags)

    return mapped(result, refuse, schema)


@dataclass(frozen=True)
class PartsPlan:
    """One part's sums (``frame``: :meth:`Summary.part` of its rows), the
    :class:`Summary` that merges the parts, and the ``by`` keys."""

    frame: pl.LazyFrame
    summary: Summary
    by: list[str]
    #: Rows of other merges in ``frame`` beside the sums (the bootstrap's buckets:
    #: :mod:`polars_irmetrics.ope.intervals`), each ``(marker, finish)``: its rows are
    #: those whose column ``marker`` is set, and ``finish(result, their rows from every
    #: part)`` gives the result with theirs.
    beside: tuple[tuple[str, Callable[[pl.LazyFrame, pl.LazyFrame], pl.LazyFrame]], ...] = ()
    #: The estimates' labels, divided with their intervals by the rewards' scale last
    #: (where the summary carries one: :func:`~polars_irmetrics.ope.scale.unscaled`).
    labels: tuple[str, ...] = ()

    def merge(self, parts: pl.LazyFrame, options: EvalOptions) -> pl.LazyFrame:
        """The result from the sums of every part (:meth:`Summary.merge`)."""
        if not self.beside:
            return unscaled(self.summary.merge(parts, self.by, options), self.labels)
        mine = parts.filter(pl.all_horizontal(pl.col(m).is_null() for m, _ in self.beside))
        result = self.summary.merge(mine, self.by, options)
        for marker, finish in self.beside:
            result = finish(result, parts.filter(pl.col(marker).is_not_null()))
        return unscaled(result, self.labels)
