"""Rank-biased overlap with tie groups, as one lazy plan over every query at once.

Corsi & Urbano's algorithm (SIGIR 2024, ``julian-urbano/sigir2024-rbo``, ``rbo.py``)
without its per-query loops. The shorter ranking is S (length s), the longer L (length
l; S is the reference when they are equally long, as there: the value is symmetric). A
document of a tie group spanning the 0-based positions ``t..b`` contributes to the
depth-``d`` prefix (0-based ``d``)::

    w: c(d) = [d >= t]        a, b: c(d) = clip((d - t + 1) / (b - t + 1), 0, 1)

Every sum the algorithm needs at depth ``d`` is a sum over documents of such a function:
the overlap ``X(d) = sum c_S c_L`` over shared documents, the sizes ``sum c`` and norms
``sum c^2`` of each side, and the L-only documents' contributions for the bounds. Each
is a *step* (0 before a position, 1 from it on: counted once at that position and
summed cumulatively over depths) plus, for a document in a tie group of the a/b
treatments, a *ramp* (its fractional values at the depths inside the group: one row per
depth there, none for an untied document). So the plan is: one row per step and per
ramp depth, one row per (query, depth) for the grid, a group-by of their sums, a
cumulative sum per query, and one aggregation per query: no loop over queries, and
rows in proportion to the rankings' lengths plus the squares of their tie groups.

Numerics (exact to rounding at any ``p`` in (0, 1)). RBO is ``(1 - p) sum_{d >= 1}
p^(d-1) A_d``; Corsi & Urbano write it ``(1 - p)/p (sum_d A_d p^d + tail)`` with the
tails as differences (``ln(1/(1-p)) - sum_{d <= l} p^d / d``, ``P(l) - P(s)``), which
cancel to nothing for a small ``p`` (at ``p = 1e-20`` the value came out 4). Here every
piece is a sum of terms that are not negative, with the weight ``p^(d-1)``:

* the lower bound ``min = (1 - p) (sum_{d <= l} A_d p^(d-1) + X_l T(l))``, where
  ``T(i) = sum_{d > i} p^(d-1) / d`` is read from a table (:func:`tail_table`: its
  terms added from the smallest, the same bits whatever the data);
* the residual ``res = max - min`` directly, as the sum of what the upper bound adds
  (``(1 - p) (sum_d found_d p^(d-1) + sum_{l < d <= f} (2d - l - s)/d p^(d-1)) + p^f -
  (1 - p) X_l T(f)``), not as a difference of two nearly equal bounds;
* ``ext - min`` likewise (the extrapolated agreement and ``X_l (p^l / l - (1 - p)
  T(l))``), so that ``ext = min + (ext - min)`` and ``max = min + res``.

Each sum over depths or documents is :func:`relative_sum`'s: fixed point relative to the
group's largest term (the same bits in any row order, to ``n 2^-63`` of the sum however
small it is), where a plain fixed point of ``2^-64`` units lost every digit of the
``1e-20`` scale (and one of ``2^-128`` units, every digit of the ``1e-40`` scale). The
few closed forms left subtract quantities apart by at most a factor of the rankings'
lengths (at most a few digits). Last, rounding-level excursions are
clipped: ``0 <= min <= 1``, ``0 <= res <= 1 - min``, ``max = min + res`` (at most 1)
and ``min <= ext <= max``, so that the bounds are in order to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics._common import divide, power
from polars_irmetrics.metrics.scope import fixed_sum

scipy_special = LazyModule("scipy.special")

__all__ = ["TABLE_DEPTH", "RboSpec", "rbo_values", "relative_sum", "tail_table"]

# per-document columns the caller gives: positions of each side (null: not retrieved)
TA, BA, TB, BB = (f"{INTERNAL}ta", f"{INTERNAL}ba", f"{INTERNAL}tb", f"{INTERNAL}bb")
# per-query columns the caller gives: the two lengths
NA, NB = f"{INTERNAL}na", f"{INTERNAL}nb"

_TS, _BS, _TL, _BL = (f"{INTERNAL}ts", f"{INTERNAL}bs", f"{INTERNAL}tl", f"{INTERNAL}bl")
_S, _L, _C, _J, _D = (f"{INTERNAL}{n}" for n in ("s", "l", "c", "j", "d"))
_STEPS = ("xw", "xa", "ws", "wl", "qs", "ql", "nu", "ula", "mxw", "mxa")
_RAMPS = ("xa", "qs", "ql", "ula", "mxa")
#: The tail table's depth and value columns.
_I, _T = f"{INTERNAL}i", f"{INTERNAL}T"
#: The tail table stops where ``p^(d-1)`` underflows to 0, or at this depth (``p`` above
#: about 0.9943), with the rest beyond it in closed form (:func:`_tail_beyond`).
TABLE_DEPTH = 2**17


def _step(name: str) -> str:
    return f"{INTERNAL}step_{name}"


def _ramp(name: str) -> str:
    return f"{INTERNAL}ramp_{name}"


@dataclass(frozen=True)
class RboSpec:
    """One RBO request: its output column, persistence, kind and tie treatment."""

    label: str
    p: pl.Expr
    kind: str
    ties: str
    value: float | None = None  # p as a number: queries without ties skip the grid


def _contribution(d: pl.Expr, t: str, b: str) -> pl.Expr:
    """A document's a/b contribution at 0-based depth ``d``."""
    return ((d - pl.col(t) + 1) / (pl.col(b) - pl.col(t) + 1)).clip(0.0, 1.0)


def relative_sum(value: pl.Expr) -> pl.Expr:
    """Group context: the sum of ``value`` (not negative; nulls as 0), the same bits in any
    row order, exact to ``n 2^-63`` of the sum (``n`` terms) however small the terms.

    :func:`~polars_irmetrics.metrics.scope.fixed_sum` of the terms scaled by the power of
    two at or above the largest (exact: a scaling by a power of two), scaled back: a
    fixed point relative to the group's largest term, where ``fixed_sum``'s own units of
    ``2^-128`` floor a term of ``1e-40`` to 0.

    >>> frame = pl.DataFrame({"x": [3e-41, 1e-40, 7e-61, 0.0]})
    >>> frame.select(relative_sum(pl.col("x"))).item()
    1.2999999999999999e-40
    >>> frame.select(fixed_sum(pl.col("x"))).item()
    0.0
    """
    value = value.fill_null(0.0)
    top = value.max()
    exponent = pl.when(top > 0.0).then(top.log(2.0).ceil()).otherwise(0.0)
    # times 2**-exponent in two exact steps: polars divides by a scalar as a product with
    # its reciprocal, which overflows for a unit below 2**-1023 (a subnormal largest
    # term, at p = 1e-155: every term inf or NaN, the sum 0.0)
    half = (-exponent / 2.0).floor()
    scaled = value * pl.lit(2.0).pow(half) * pl.lit(2.0).pow(-exponent - half)
    return fixed_sum(scaled) * pl.lit(2.0).pow(exponent)


def _tail_beyond(p: float, depth: int) -> float:
    """``sum_{d > depth} p^(d-1) / d`` for ``p`` near 1 and a deep ``depth`` (``-ln p`` and
    ``1 / depth`` below 0.01): Euler-Maclaurin with ``f(x) = exp(-lambda x) / x``,
    ``sum_{x >= n} f(x) = E1(lambda n) + f(n)/2 - f'(n)/12 + f'''(n)/720 -
    f^(5)(n)/30240``, ``n = depth + 1``; each further term is below ``1e-18`` of the
    sum."""
    lam, n = -math.log(p), depth + 1

    def derivative(order: int) -> float:
        terms = (
            math.comb(order, j)
            * (-lam) ** (order - j)
            * (-1) ** j
            * math.factorial(j)
            / n ** (j + 1)
            for j in range(order + 1)
        )
        return math.exp(-lam * n) * math.fsum(terms)

    integral = float(scipy_special.exp1(lam * n))
    corrections = derivative(0) / 2 - derivative(1) / 12 + derivative(3) / 720
    return (integral + corrections - derivative(5) / 30240) / p


def tail_table(p: float, longest: pl.LazyFrame) -> pl.LazyFrame:
    """``T(i) = sum_{d > i} p^(d-1) / d`` for ``i = 0, 1, ...`` (columns ``_I``, ``_T``):
    what a document shared from depth ``i + 1`` on adds to the lower bound's sum.

    The terms up to the depth where ``p^(d-1)`` underflows (or :data:`TABLE_DEPTH`) are
    added from the smallest, in numpy, once: every ``T(i)`` has the same bits whatever
    the data (a query's value does not depend on the other queries). Beyond the table:
    0 where the terms underflow; past :data:`TABLE_DEPTH` (``p`` above about 0.9943 and
    two rankings whose lengths add up past 2**17) the table's last tail less the terms,
    computed to an absolute ``1e-16`` only. ``longest``: one row, ``__M``, the longest sum of two
    rankings' lengths (the table covers ``0..__M + 1``).

    >>> table = tail_table(0.5, pl.LazyFrame({"__M": [3]})).collect()
    >>> [(i, round(t, 15)) for i, t in table.head(3).rows()]  # 2 ln 2, less 1, less 1/4
    [(0, 1.386294361119891), (1, 0.386294361119891), (2, 0.136294361119891)]
    """
    log_p = math.log(p)
    underflow = int(746.0 / -log_p) + 2  # p^(d-1) is 0 from there on
    end = min(underflow, TABLE_DEPTH)
    depth = np.arange(1, end + 1, dtype=np.float64)
    terms = np.exp((depth - 1.0) * log_p) / depth
    rest = _tail_beyond(p, end) if end < underflow else 0.0
    # T(i), i = 0..end - 1: the terms of depths i + 1..end, the smallest first
    tails = np.cumsum(terms[::-1])[::-1] + rest
    table = pl.LazyFrame(
        {_I: np.arange(end + 1, dtype=np.int64), _T: np.append(tails, rest)},
        schema={_I: pl.Int64, _T: pl.Float64},
    )
    # only the depths the data reaches (the values are the table's, whatever is kept)
    reached = pl.col(_I) <= pl.col("__M").fill_null(0) + 1
    table = table.join(longest.select("__M"), how="cross").filter(reached).drop("__M")
    if end == underflow:
        return table  # beyond: 0 (the readers fill a missing depth with 0)
    index = pl.col(_I).cast(pl.Float64)
    beyond = longest.select(
        pl.int_range(end + 1, pl.max_horizontal(pl.col("__M").first() + 2, end + 1))
        .cast(pl.Int64)
        .alias(_I)
    ).with_columns(
        (rest - ((index - 1.0) * log_p).exp().truediv(index).cum_sum())
        .clip(lower_bound=0.0)
        .alias(_T)
    )
    return pl.concat([table, beyond])


def _with_tail(
    frame: pl.LazyFrame, table: pl.LazyFrame, on: str | pl.Expr, name: str
) -> pl.LazyFrame:
    """``frame`` with ``T(on)`` as ``name`` (0 past the table; ``on``: an Int64 column's
    name, or an expression)."""
    if isinstance(on, str):
        tails = table.rename({_I: on, _T: name})
        return frame.join(tails, on=on, how="left").with_columns(pl.col(name).fill_null(0.0))
    depth = f"{INTERNAL}on_{name}"
    return (
        frame.with_columns(on.cast(pl.Int64).alias(depth))
        .join(table.rename({_I: depth, _T: name}), on=depth, how="left")
        .with_columns(pl.col(name).fill_null(0.0))
        .drop(depth)
    )


def _log(p: float | pl.Expr) -> float | pl.Expr:
    return math.log(p) if isinstance(p, float) else p.log()


def _over(num: pl.Expr, den: float | pl.Expr) -> pl.Expr:
    """``num / den``, correctly rounded also for a constant ``den`` (:func:`divide`)."""
    return divide(num, den) if isinstance(den, float) else num / den


def _one_minus_power(p: float | pl.Expr, k: pl.Expr) -> pl.Expr:
    """``1 - p^k`` for ``k >= 0`` without cancellation: ``-expm1(k ln p)``, by Kahan's
    ``expm1(x) = (u - 1) x / ln u`` with ``u = e^x`` where ``x > -1/2`` (within 2 ulps
    of the exact value from ``x = -1e-300`` to ``-1/2``, as the Taylor series it
    replaces within 1: a seventeenfold nested expression, whose conversion was most of
    a small call's time); ``1 - e^x`` below.

    >>> frame = pl.DataFrame({"k": [0, 1, 10**6]})  # as math.expm1: no digit lost
    >>> frame.select(_one_minus_power(1 - 1e-12, pl.col("k"))).to_series().to_list()
    [0.0, 9.999778782798785e-13, 9.999773783026665e-07]
    """
    x = k.cast(pl.Float64) * _log(p)
    u = x.exp()
    # u == 1: x rounds away against 1 (|x| < 2^-53), and 1 - e^x = -x to rounding
    small = pl.when(u == 1.0).then(-x).otherwise((1.0 - u) * x / u.log())
    return pl.when(x > -0.5).then(small).otherwise(1.0 - u) + 0.0  # 0, not -0


def _geometric(p: float | pl.Expr, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``sum_{d = a+1}^{b} p^(d-1) = p^a (1 - p^(b-a)) / (1 - p)`` for ``b >= a``."""
    return _over(power(p, a) * _one_minus_power(p, b - a), 1.0 - p)


@dataclass(frozen=True)
class _Pieces:
    """One (persistence, ties) group's per-query sums, as expressions of the per-query
    frame: everything the four kinds read."""

    low: pl.Expr  # sum_{d <= l} A_d p^(d-1) + X_l T(l): the lower bound's sum
    found: pl.Expr  # what the upper bound adds at depths s+1..f
    extra: pl.Expr  # sum_{d=s+1}^{l} (d - s) unseen_d / den_d p^(d-1) (ext's extrapolation)
    last: pl.Expr  # A_s, the agreement at depth s
    tail_l: pl.Expr  # T(l)
    tail_f: pl.Expr  # T(f), f = l + s - X_l


_FIELDS = ("low", "found", "extra", "last", "tail_l", "tail_f")


def _with_kinds(
    frame: pl.LazyFrame, groups: Sequence[tuple[int, _Pieces, float | pl.Expr]]
) -> pl.LazyFrame:
    """``frame`` with each group's four kinds as columns ``__min{g}``, ``__max{g}``,
    ``__res{g}``, ``__ext{g}`` (module doc): min, res and ext - min as sums of terms
    that are not negative, clipped to their ranges at rounding level.

    The pieces, then each stage, are columns of their own: ext reads res, which reads
    min, and each piece is an expression of its own, so one nested expression per kind
    repeated them (a plan some 80 KB long for one ``rbo``, whose conversion was most of
    a small call's time). The arithmetic is the same, so are the bits."""
    s, l_, c = (pl.col(n).cast(pl.Float64) for n in (_S, _L, _C))
    f = l_ + s - c
    frame = frame.with_columns(
        getattr(pieces, name).alias(f"__{name}{g}") for g, pieces, _ in groups for name in _FIELDS
    )
    stage = []
    for g, _, p in groups:
        low, found, extra, last, tail_l, tail_f = (pl.col(f"__{n}{g}") for n in _FIELDS)
        weight = 1.0 - p
        at_l = power(p, l_)
        # the upper bound's extra: found (its unseen documents), then p^f - (1 - p) X_l
        # T(f) = (1 - p) sum_{d > f} (1 - X_l / d) p^(d-1)
        residual = weight * found + (power(p, f) - weight * c * tail_f).clip(lower_bound=0.0)
        # ext - min: the extrapolated agreement at depths s+1..l, the extrapolated tail
        # less the lower bound's, X_l (p^l / l - (1 - p) T(l)) = X_l (1 - p) sum_{d > l}
        # (1/l - 1/d) p^(d-1), and (l - s) A_s / l p^l
        above = (
            weight * last * extra
            + (l_ - s) * last / l_ * at_l
            + c * (at_l / l_ - weight * tail_l).clip(lower_bound=0.0)
        )
        stage += [
            (weight * low).clip(0.0, 1.0).alias(f"__min{g}"),
            residual.alias(f"__rs{g}"),
            above.alias(f"__ab{g}"),
        ]
    frame = frame.with_columns(stage)
    frame = frame.with_columns(
        pl.col(f"__rs{g}")
        .clip(lower_bound=0.0, upper_bound=1.0 - pl.col(f"__min{g}"))
        .alias(f"__res{g}")
        for g, _, _ in groups
    )
    frame = frame.with_columns(
        (pl.col(f"__min{g}") + pl.col(f"__res{g}")).clip(upper_bound=1.0).alias(f"__max{g}")
        for g, _, _ in groups
    )
    return frame.with_columns(
        (
            pl.col(f"__min{g}")
            + pl.col(f"__ab{g}").clip(lower_bound=0.0, upper_bound=pl.col(f"__res{g}"))
        )
        .clip(pl.col(f"__min{g}"), pl.col(f"__max{g}"))
        .alias(f"__ext{g}")
        for g, _, _ in groups
    )


def _persistence(spec: RboSpec) -> float | pl.Expr:
    return spec.p if spec.value is None else float(spec.value)


def rbo_values(
    items: pl.LazyFrame,
    queries: pl.LazyFrame,
    keys: Sequence[str],
    specs: Sequence[RboSpec],
    carry: Sequence[str] = (),
) -> pl.LazyFrame:
    """RBO of each query, one column per spec, keyed by ``keys``.

    Queries without a tie on either side take :func:`_untied_values` (sums per shared
    document of a fixed table, no per-depth rows) when every spec's ``p`` is a number;
    the others the per-depth plan. Both compute the same formulas (to rounding).

    ``items``: ``keys`` and, per document of either ranking, its tie group's first and
    last 0-based positions in the run (``TA``, ``BA``) and in the reference (``TB``,
    ``BB``), null on the side that lacks it. ``queries``: ``keys``, the two lengths
    (``NA``, ``NB``, both at least 1) and ``carry`` (per-query columns a spec's ``p``
    may read). Lazy; nothing collected.

    Examples
    --------
    Two rankings of three documents, ``a`` and ``b`` swapped at the top; without ties
    every treatment gives the same value. ``ext``: the agreements 0, 1, 1 at depths 1..3
    and the last one extrapolated, ``0.1/0.9 (0.9^2 + 0.9^3 + 0.9^4/0.1) = 0.9``;
    ``min`` assumes no overlap below depth 3 (the reference implementation's
    ``rbo(['a','b','c'], ['b','a','c'], 0.9)``):

    >>> import polars as pl
    >>> items = pl.LazyFrame({"q": [1, 1, 1], TA: [0, 1, 2], BA: [0, 1, 2],
    ...                       TB: [1, 0, 2], BB: [1, 0, 2]})
    >>> queries = pl.LazyFrame({"q": [1], NA: [3], NB: [3]})
    >>> specs = [RboSpec(f"{k}_{t}", pl.lit(0.9), k, t) for k in ("ext", "min") for t in "wa"]
    >>> [round(v, 9) for v in rbo_values(items, queries, ["q"], specs).collect().row(0)[1:]]
    [0.9, 0.9, 0.422528364, 0.422528364]
    """
    keys = list(keys)
    if carry or any(spec.value is None for spec in specs):
        return _grid_values(items, queries, keys, specs, carry)
    tied = ((pl.col(TA) != pl.col(BA)) | (pl.col(TB) != pl.col(BB))).fill_null(False)
    marked = items.with_columns(tied.any().over(keys).alias("__tied")).cache()
    with_ties = marked.filter(pl.col("__tied")).drop("__tied")
    without = marked.filter(~pl.col("__tied")).drop("__tied")
    tied_queries = queries.join(with_ties.select(keys).unique(), on=keys, nulls_equal=True)
    plain_queries = queries.join(without.select(keys).unique(), on=keys, nulls_equal=True)
    return pl.concat(
        [
            _grid_values(with_ties, tied_queries, keys, specs, carry),
            _untied_values(without, plain_queries, keys, specs),
        ]
    )


def _untied_values(
    items: pl.LazyFrame, queries: pl.LazyFrame, keys: list[str], specs: Sequence[RboSpec]
) -> pl.LazyFrame:
    """RBO of queries without ties: every sum over depths is a sum over documents.

    With ``T(m) = sum_{d > m} p^(d-1) / d`` (:func:`tail_table`), a shared document first
    in both prefixes at 0-based depth ``m`` adds ``T(m)`` to the lower bound's sum (from
    depth ``m + 1`` on, the tail beyond ``l`` included); the j-th document only L holds
    adds ``T(u) - T(l)`` to the upper bound's from ``u = max(t, s + j)``; the rest are
    closed forms of ``s``, ``l``, the shared count ``C``, the shared count at depth
    ``s`` and ``T`` at ``s``, ``l`` and ``f = l + s - C`` (module doc).
    """
    longest = queries.select((pl.col(NA) + pl.col(NB)).max().alias("__M"))
    persistences = sorted({float(spec.value) for spec in specs})  # type: ignore[arg-type]
    tables = [tail_table(p, longest) for p in persistences]
    # T(l) of each persistence as a per-query column, carried to the documents by the
    # one join of _docs
    longer = pl.max_horizontal(NA, NB)
    for index, table in enumerate(tables):
        queries = _with_tail(queries, table, longer, f"__Tl{index}")
    carried = [f"__Tl{index}" for index in range(len(tables))]
    docs = _docs(items, queries, keys, carried)
    shared = pl.col(_TS).is_not_null() & pl.col(_TL).is_not_null()
    l_only = pl.col(_TL).is_not_null() & pl.col(_TS).is_null()
    first = pl.when(shared).then(pl.max_horizontal(_TS, _TL))
    unseen = pl.when(l_only).then(pl.max_horizontal(pl.col(_TL), pl.col(_S) + pl.col(_J)))
    docs = docs.select(*keys, *carried, _S, _L, _C, first.alias("__m"), unseen.alias("__u"))
    s, l_ = pl.col(_S).cast(pl.Float64), pl.col(_L).cast(pl.Float64)
    outs = []
    for index, (p, table) in enumerate(zip(persistences, tables, strict=True)):
        per_doc = _with_tail(docs, table, "__m", "__Tm")
        per_doc = _with_tail(per_doc, table, "__u", "__Tu")
        tail_l = pl.col(f"__Tl{index}")
        per_query = per_doc.group_by(keys).agg(
            pl.col(_S).first(),
            pl.col(_L).first(),
            pl.col(_C).first(),
            tail_l.first().alias("__Tl"),
            relative_sum(pl.col("__Tm").filter(pl.col("__m").is_not_null())).alias("__low"),
            relative_sum(
                (pl.col("__Tu") - tail_l).clip(lower_bound=0.0).filter(pl.col("__u") < pl.col(_L))
            ).alias("__U"),
            (pl.col("__m") <= pl.col(_S) - 1).sum().alias("__cs"),
        )
        per_query = _with_tail(per_query, table, _S, "__Ts")
        per_query = _with_tail(per_query, table, pl.col(_L) + pl.col(_S) - pl.col(_C), "__Tf")
        t_s, t_l, t_f = pl.col("__Ts"), pl.col("__Tl"), pl.col("__Tf")
        # sum_{d=s+1}^{l} (d - s)/d p^(d-1): each term at least 1/(s+1) of its geometric part
        extra = (_geometric(p, s, l_) - s * (t_s - t_l)).clip(lower_bound=0.0)
        pieces = _Pieces(
            low=pl.col("__low"),
            found=pl.col("__U") + _beyond(p, t_l, t_f),
            extra=extra,
            last=pl.col("__cs") / s,
            tail_l=t_l,
            tail_f=t_f,
        )
        kinds = _with_kinds(per_query, [(0, pieces, p)])
        mine = [spec for spec in specs if spec.value == p]
        outs.append(kinds.select(*keys, *(pl.col(f"__{sp.kind}0").alias(sp.label) for sp in mine)))
    out = outs[0]
    for other in outs[1:]:
        out = out.join(other, on=keys, nulls_equal=True)
    return out.select(*keys, *(spec.label for spec in specs))


def _grid_values(
    items: pl.LazyFrame,
    queries: pl.LazyFrame,
    keys: Sequence[str],
    specs: Sequence[RboSpec],
    carry: Sequence[str] = (),
) -> pl.LazyFrame:
    """RBO by the per-depth plan (any ties; ``p`` an expression)."""
    keys = list(keys)
    needed = _needed(specs)
    docs = _docs(items, queries, keys, carry)
    shared = pl.col(_TS).is_not_null() & pl.col(_TL).is_not_null()
    l_only = pl.col(_TL).is_not_null() & pl.col(_TS).is_null()
    group = [*keys, *carry, _S, _L, _C]
    start = pl.col(_S) + pl.col(_J)
    positions = {
        "xw": pl.when(shared).then(pl.max_horizontal(_TS, _TL)),
        "xa": pl.when(shared).then(pl.max_horizontal(_BS, _BL)),
        "ws": pl.col(_TS),
        "qs": pl.col(_BS),
        "wl": pl.col(_TL),
        "ql": pl.col(_BL),
        "nu": pl.when(l_only).then(pl.col(_TL)),
        "ula": pl.when(l_only).then(pl.col(_BL)),
        "mxw": pl.when(l_only).then(pl.max_horizontal(pl.col(_TL), start)),
        "mxa": pl.when(l_only).then(pl.max_horizontal(pl.col(_BL), start)),
    }
    steps_needed = [n for n in _STEPS if n in needed]
    ramps_needed = [n for n in _RAMPS if n in needed]
    steps = (
        docs.select(*group, *(positions[n].cast(pl.Int64).alias(n) for n in steps_needed))
        .unpivot(on=steps_needed, index=group, variable_name="__what", value_name=_D)
        .filter(pl.col(_D).is_not_null() & (pl.col(_D) < pl.col(_L)))
        .select(
            *group,
            _D,
            *(pl.col("__what").eq(n).cast(pl.Float64).alias(_step(n)) for n in steps_needed),
        )
    )
    d = pl.col(_D)
    c_s, c_l = _contribution(d, _TS, _BS), _contribution(d, _TL, _BL)
    s_ramp = (
        docs.filter((pl.col(_BS) > pl.col(_TS)) & pl.lit("qs" in needed))
        .with_columns(pl.int_ranges(_TS, _BS).alias(_D))
        .explode(_D)
        .select(*group, _D, (c_s * c_s).alias(_ramp("qs")))
    )
    l_ramp = (
        docs.filter((pl.col(_BL) > pl.col(_TL)) & pl.lit(bool({"ql", "ula", "mxa"} & needed)))
        .with_columns(pl.int_ranges(_TL, _BL).alias(_D))
        .explode(_D)
        .select(
            *group,
            _D,
            (c_l * c_l).alias(_ramp("ql")),
            pl.when(l_only).then(c_l).alias(_ramp("ula")),
            pl.when(l_only & (d >= start)).then(c_l).alias(_ramp("mxa")),
        )
    )
    top = pl.max_horizontal(_TS, _TL)
    bottom = pl.max_horizontal(_BS, _BL)
    x_ramp = (
        docs.filter(shared & (bottom > top) & pl.lit("xa" in needed))
        .with_columns(pl.int_ranges(top, bottom).alias(_D))
        .explode(_D)
        .select(*group, _D, (c_s * c_l).alias(_ramp("xa")))
    )
    # the upper bound's depths l+1..f (every kind reads the bound: ext and min are
    # clipped to it) as rows only for a p given as an expression; for a number, a closed
    # form of the tail table (:func:`_beyond`)
    extend = any(spec.value is None for spec in specs)
    length = pl.col(_L) + pl.col(_S) - pl.col(_C) if extend else pl.col(_L)
    grid = docs.group_by(group).agg().with_columns(pl.int_ranges(0, length).alias(_D)).explode(_D)
    ramp_frames = [
        frame.select(*group, _D, *(_ramp(n) for n in ramps_needed if _ramp(n) in columns))
        for frame, columns in (
            (s_ramp, {_ramp("qs")}),
            (l_ramp, {_ramp("ql"), _ramp("ula"), _ramp("mxa")}),
            (x_ramp, {_ramp("xa")}),
        )
        if any(_ramp(n) in columns for n in ramps_needed)
    ]
    # the steps are 0 or 1 (a float sum of them is exact in any order); the ramps are
    # fractions in [0, 1], added by fixed_sum (exact to 2^-64 each): a plain sum's last
    # bit followed the row order, which the engine's group-by varies from call to call,
    # and a sort before it is not enough (polars' kernels add a group's slice in blocks
    # that differ by path); relative_sum, for terms of any size, took 2.5x the whole
    # rbo@100 plan over its 2M depths
    summed = (
        pl.concat([grid, steps, *ramp_frames], how="diagonal")
        .group_by([*group, _D])
        .agg(
            *(pl.col(_step(n)).sum() for n in steps_needed),
            *(fixed_sum(pl.col(_ramp(n))).alias(_ramp(n)) for n in ramps_needed),
        )
        .sort([*keys, _D])
    )
    names = {
        "xw": "__Xw", "xa": "__Xa", "ws": "__WS", "wl": "__WL", "qs": "__QS", "ql": "__QL",
        "nu": "__NU", "ula": "__ULa", "mxw": "__MXw", "mxa": "__MXa",
    }  # fmt: skip
    values = []
    for n in steps_needed:
        value = pl.col(_step(n)).cum_sum().over(keys)
        if n in ramps_needed:
            value = value + pl.col(_ramp(n))
        values.append(value.alias(names[n]))
    sums = summed.with_columns((d + 1).cast(pl.Float64).alias("__D"), *values)
    groups: dict[tuple[str, str], RboSpec] = {}
    for spec in specs:  # one set of sums per persistence and tie treatment
        groups.setdefault((_key(spec), spec.ties), spec)
    aggs = [pl.col(_S).first(), pl.col(_L).first(), pl.col(_C).first()]
    aggs += [pl.col(name).first() for name in carry]
    for index, spec in enumerate(groups.values()):
        aggs += _grid_sums(spec, index, bool(carry))
    per_query = sums.group_by(keys).agg(*aggs)
    longest = queries.select((pl.col(NA) + pl.col(NB)).max().alias("__M"))
    tables: dict[float, pl.LazyFrame] = {}
    for index, spec in enumerate(groups.values()):
        if spec.value is None:
            continue
        table = tables.setdefault(float(spec.value), tail_table(float(spec.value), longest))
        per_query = _with_tail(per_query, table, _L, f"__Tl{index}")
        length = pl.col(_L) + pl.col(_S) - pl.col(_C)
        per_query = _with_tail(per_query, table, length, f"__Tf{index}")
    every: list[tuple[int, _Pieces, float | pl.Expr]] = []
    for index, spec in enumerate(groups.values()):
        tail_l = pl.col(f"__Tl{index}")
        found = pl.col(f"__fd{index}")
        if spec.value is not None:
            found = found + _beyond(float(spec.value), tail_l, pl.col(f"__Tf{index}"))
        pieces = _Pieces(
            low=pl.col(f"__hs{index}") + pl.col(_C).cast(pl.Float64) * tail_l,
            found=found,
            extra=pl.col(f"__ex{index}"),
            last=pl.col(f"__la{index}"),
            tail_l=tail_l,
            tail_f=pl.col(f"__Tf{index}"),
        )
        every.append((index, pieces, _persistence(spec)))
    outputs = []
    for spec in specs:
        index = list(groups).index((_key(spec), spec.ties))
        outputs.append(pl.col(f"__{spec.kind}{index}").alias(spec.label))
    return _with_kinds(per_query, every).select(*keys, *outputs)


def _beyond(p: float, tail_l: pl.Expr, tail_f: pl.Expr) -> pl.Expr:
    """``sum_{d=l+1}^{f} (2d - l - s)/d p^(d-1)`` (the upper bound's depths past the
    longer ranking, ``f = l + s - C``) from the tails ``T(l)``, ``T(f)``: ``2 (p^l -
    p^f)/(1 - p) - (l + s)(T(l) - T(f))``, each term at least ``1/(l+1)`` of its
    geometric part (at most the digits of ``l + 1`` lost)."""
    s, l_, c = (pl.col(n).cast(pl.Float64) for n in (_S, _L, _C))
    f = l_ + s - c
    return (2.0 * _geometric(p, l_, f) - (l_ + s) * (tail_l - tail_f)).clip(lower_bound=0.0)


def _key(spec: RboSpec) -> str:
    """A spec's persistence as a key: its number, or its expression's text."""
    return repr(float(spec.value)) if spec.value is not None else str(spec.p)


def _grid_sums(spec: RboSpec, index: int, per_query_p: bool) -> list[pl.Expr]:
    """One (persistence, ties) group's sums over a query's depth rows (inside the
    per-query aggregation), as ``__hs``, ``__fd``, ``__ex``, ``__la`` (and the tails
    ``__Tl``, ``__Tf`` for a ``p`` given as an expression) with the group's index."""
    ties = spec.ties
    depth = pl.col("__D")
    d, s_row, l_row = pl.col(_D), pl.col(_S), pl.col(_L)
    # one kernel for every group and engine (exp and log, not pow, whose scalar path
    # multiplies), and divisions by a column (polars divides a column by a scalar as a
    # multiplication by its reciprocal): the same bits however many queries the plan has
    log_p = math.log(spec.value) if spec.value is not None else spec.p.log()
    weight = ((depth - 1.0) * log_p).exp()  # p^(d-1), 1-based d
    if ties == "w":
        x, first = pl.col("__Xw"), 2.0 * pl.col("__Xw") / (pl.col("__WS") + pl.col("__WL"))
        den = (depth + pl.col("__WL")) / 2.0
        unseen, found = pl.lit(1.0), pl.col("__MXw")
    elif ties == "a":
        x, first = pl.col("__Xa"), pl.col("__Xa") / depth
        den = depth
        unseen, found = pl.col("__ULa") / pl.col("__NU"), pl.col("__MXa")
    else:
        x = pl.col("__Xa")
        first = x / (pl.col("__QS") * pl.col("__QL")).sqrt()
        den = (depth * pl.col("__QL")).sqrt()
        unseen, found = pl.col("__ULa") / pl.col("__NU"), pl.col("__MXa")
    section1 = d < s_row
    section2 = (d >= s_row) & (d < l_row)
    beyond = d >= l_row
    head_seen = relative_sum((first * weight).filter(section1)) + relative_sum(
        (x / den * weight).filter(section2)
    )
    found_sum = relative_sum((found / den * weight).filter(section2))
    if spec.value is None:  # the depths l+1..f are rows (a number: _beyond)
        found_sum = found_sum + relative_sum(
            ((2.0 * depth - l_row - s_row) / depth * weight).filter(beyond)
        )
    extra = relative_sum(
        ((d - s_row + 1).cast(pl.Float64) * unseen / den * weight).filter(section2)
    )
    sums = [
        head_seen.alias(f"__hs{index}"),
        found_sum.alias(f"__fd{index}"),
        extra.alias(f"__ex{index}"),
        first.filter(d == s_row - 1).first().alias(f"__la{index}"),
    ]
    if spec.value is None:
        p = spec.p.first() if per_query_p else spec.p
        s, l_, c = (pl.col(n).first().cast(pl.Float64) for n in (_S, _L, _C))
        for name, bound in (("__Tl", l_), ("__Tf", l_ + s - c)):
            prefix = relative_sum((weight / depth).filter(depth <= bound))
            sums.append(_tail_expression(p, bound, prefix).alias(f"{name}{index}"))
    return sums


def _tail_expression(p: pl.Expr, a: pl.Expr, prefix: pl.Expr) -> pl.Expr:
    """``T(a) = sum_{d > a} p^(d-1) / d`` for a ``p`` given as an expression: its first
    64 terms where ``p <= 1/2`` (the rest below ``2^-64`` of them); above, the closed
    form ``-ln(1 - p)/p - sum_{d <= a} p^(d-1)/d`` (``prefix``: that sum over the depth
    rows), which loses the digits of ``p^a`` against ``ln(1/(1 - p))``: the path of the
    exactness tests (``p`` of 0.9 to 0.99, rankings of 15). :func:`rbo_values` reads
    :func:`tail_table` wherever ``p`` is a number. Group context (``p`` and ``a`` one
    value per group: the 64 depths are a range beside them, not 64 expressions)."""
    k = pl.int_range(0, 64, dtype=pl.Int64).cast(pl.Float64)
    series = (power(p, a + k) / (a + k + 1.0)).sum()
    closed = (-(-p).log1p()) / p - prefix
    return pl.when(p <= 0.5).then(series).otherwise(closed.clip(lower_bound=0.0))


def _docs(
    items: pl.LazyFrame, queries: pl.LazyFrame, keys: list[str], carry: Sequence[str]
) -> pl.LazyFrame:
    """Each document with its positions in the shorter (S) and longer (L) ranking, the
    lengths ``s`` and ``l``, the shared count ``C`` and, for one only L holds, its index
    ``j`` among those in L's order."""
    a_short = pl.col(NA) < pl.col(NB)
    per_query = queries.select(
        *keys,
        *carry,
        pl.min_horizontal(NA, NB).cast(pl.Int64).alias(_S),
        pl.max_horizontal(NA, NB).cast(pl.Int64).alias(_L),
        a_short.alias("__short_a"),
    )
    short = pl.col("__short_a")
    docs = items.join(per_query, on=keys, how="inner").select(
        *keys,
        *carry,
        _S,
        _L,
        pl.when(short).then(TA).otherwise(TB).alias(_TS),
        pl.when(short).then(BA).otherwise(BB).alias(_BS),
        pl.when(short).then(TB).otherwise(TA).alias(_TL),
        pl.when(short).then(BB).otherwise(BA).alias(_BL),
    )
    shared = pl.col(_TS).is_not_null() & pl.col(_TL).is_not_null()
    l_only = pl.col(_TL).is_not_null() & pl.col(_TS).is_null()
    return docs.with_columns(
        shared.sum().over(keys).alias(_C),
        # the j-th document only L holds, in L's order (within a tie group any order:
        # its documents contribute alike)
        # (rank leaves the others null and ranks among the non-null: one window on keys)
        (pl.when(l_only).then(pl.col(_TL)).rank("ordinal").over(keys) - 1).alias(_J),
    )


def _needed(specs: Sequence[RboSpec]) -> set[str]:
    """The per-depth sums the specs read (each a step, and for a/b a ramp too): the upper
    bound's for every kind (ext and min are clipped to it)."""
    needed: set[str] = set()
    for spec in specs:
        if spec.ties == "w":
            needed |= {"xw", "ws", "wl", "mxw"}
        else:
            needed |= {"xa", "nu", "ula", "mxa"} | ({"qs", "ql"} if spec.ties == "b" else set())
    return needed
