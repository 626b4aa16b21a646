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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics._common import divide, power
from polars_irmetrics.metrics.scope import fixed_sum

__all__ = ["RboSpec", "rbo_values"]

# per-document columns the caller gives: positions of each side (null: not retrieved)
TA, BA, TB, BB = (f"{INTERNAL}ta", f"{INTERNAL}ba", f"{INTERNAL}tb", f"{INTERNAL}bb")
# per-query columns the caller gives: the two lengths
NA, NB = f"{INTERNAL}na", f"{INTERNAL}nb"

_TS, _BS, _TL, _BL = (f"{INTERNAL}ts", f"{INTERNAL}bs", f"{INTERNAL}tl", f"{INTERNAL}bl")
_S, _L, _C, _J, _D = (f"{INTERNAL}{n}" for n in ("s", "l", "c", "j", "d"))
_STEPS = ("xw", "xa", "ws", "wl", "qs", "ql", "nu", "ula", "mxw", "mxa")
_RAMPS = ("xa", "qs", "ql", "ula", "mxa")


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

    With ``F(m) = sum_{D<=m} p^D / D`` and ``P(m) = sum_{D<=m} p^D``, a shared document
    first in both prefixes at 0-based depth ``m`` adds ``F(l) - F(m)`` to the agreements'
    weighted sum; the j-th document only L holds adds ``F(l) - F(u)`` to the upper
    bound's from ``u = max(t, s + j)``; the extrapolated and tail terms are closed forms
    of ``s``, ``l``, the shared count ``C`` and the shared count at depth ``s``.
    """
    docs = _docs(items, queries, keys, ())
    shared = pl.col(_TS).is_not_null() & pl.col(_TL).is_not_null()
    l_only = pl.col(_TL).is_not_null() & pl.col(_TS).is_null()
    first = pl.when(shared).then(pl.max_horizontal(_TS, _TL))
    unseen = pl.when(l_only).then(pl.max_horizontal(pl.col(_TL), pl.col(_S) + pl.col(_J)))
    docs = docs.select(*keys, _S, _L, _C, first.alias("__m"), unseen.alias("__u"))
    longest = queries.select((pl.col(NA) + pl.col(NB)).max().alias("__M"))
    outs = []
    for spec in specs:
        p = float(spec.value)  # type: ignore[arg-type]
        table = longest.select(
            pl.int_range(0, pl.col("__M").fill_null(0).first() + 1, dtype=pl.Int64).alias("__i")
        ).with_columns(
            pl.when(pl.col("__i") > 0)
            .then(power(p, pl.col("__i").cast(pl.Float64)) / pl.col("__i"))
            .otherwise(0.0)
            .cum_sum()
            .alias("__F")
        )
        per_doc = (
            docs.join(table.rename({"__i": "__m", "__F": "__Fm"}), on="__m", how="left")
            .join(table.rename({"__i": "__u", "__F": "__Fu"}), on="__u", how="left")
            .group_by(keys)
            .agg(
                pl.col(_S).first(),
                pl.col(_L).first(),
                pl.col(_C).first(),
                # fixed-point sums: the joins' row order leaves no trace in the bits
                fixed_sum(pl.col("__Fm")).alias("__sum_fm"),
                (pl.col("__m") <= pl.col(_S) - 1).sum().alias("__cs"),
                fixed_sum(pl.col("__Fu").filter(pl.col("__u") < pl.col(_L))).alias("__sum_fu"),
                (pl.col("__u") < pl.col(_L)).sum().alias("__nu"),
            )
            .with_columns((pl.col(_L) + pl.col(_S) - pl.col(_C)).alias("__f"))
        )
        for column in (_S, _L, "__f"):
            per_doc = per_doc.join(
                table.rename({"__i": column, "__F": f"__F{column}"}), on=column, how="left"
            )
        s, l_, c, f = (pl.col(n).cast(pl.Float64) for n in (_S, _L, _C, "__f"))
        f_s, f_l, f_f = pl.col(f"__F{_S}"), pl.col(f"__F{_L}"), pl.col("__F__f")

        def big_p(m: pl.Expr, p: float = p) -> pl.Expr:
            return divide(p * (1.0 - power(p, m)), 1.0 - p)

        seen = c * f_l - pl.col("__sum_fm")
        scale = (1.0 - p) / p
        lowest = scale * (seen + c * (-np.log1p(-p) - f_l))
        highest = scale * (
            seen
            + pl.col("__nu") * f_l
            - pl.col("__sum_fu")
            + 2.0 * (big_p(f) - big_p(l_))
            - (l_ + s - c) * (f_f - f_l)
            + divide(power(p, f + 1.0), 1.0 - p)
        )
        last = pl.col("__cs") / s
        extrapolated = scale * (
            seen
            + last * (big_p(l_) - big_p(s) - s * (f_l - f_s))
            + divide((c + (l_ - s) * last) / l_ * power(p, l_ + 1.0), 1.0 - p)
        )
        value = {
            "ext": extrapolated,
            "min": lowest,
            "max": highest,
            "res": highest - lowest,
        }[spec.kind]
        outs.append(per_doc.select(*keys, value.alias(spec.label)))
    out = outs[0]
    for other in outs[1:]:
        out = out.join(other, on=keys, nulls_equal=True)
    return out


def _grid_values(
    items: pl.LazyFrame,
    queries: pl.LazyFrame,
    keys: Sequence[str],
    specs: Sequence[RboSpec],
    carry: Sequence[str] = (),
) -> pl.LazyFrame:
    """RBO by the per-depth plan (any ties; ``p`` an expression)."""
    keys = list(keys)
    need_max = any(spec.kind in ("max", "res") for spec in specs)
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
    length = pl.col(_L) + pl.col(_S) - pl.col(_C) if need_max else pl.col(_L)
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
    summed = (
        pl.concat([grid, steps, *ramp_frames], how="diagonal")
        .group_by([*group, _D])
        .agg(
            *(pl.col(_step(n)).sum() for n in steps_needed),
            *(pl.col(_ramp(n)).sum() for n in ramps_needed),
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
    return sums.group_by(keys).agg(*(_one(spec, list(carry)).alias(spec.label) for spec in specs))


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
    """The per-depth sums the specs read (each a step, and for a/b a ramp too)."""
    needed: set[str] = set()
    for spec in specs:
        bound = spec.kind in ("max", "res")
        if spec.ties == "w":
            needed |= {"xw", "ws", "wl"} | ({"mxw"} if bound else set())
        else:
            needed |= {"xa", "nu", "ula"} | ({"qs", "ql"} if spec.ties == "b" else set())
            needed |= {"mxa"} if bound else set()
    return needed


def _one(spec: RboSpec, carry: list[str]) -> pl.Expr:
    """One RBO value of a query, inside the per-query aggregation of the depth rows."""
    p, ties = spec.p, spec.ties
    depth = pl.col("__D")
    d, s, long, c = pl.col(_D), pl.col(_S).first(), pl.col(_L).first(), pl.col(_C).first()
    s_row, l_row, c_row = pl.col(_S), pl.col(_L), pl.col(_C)
    p_first = p.first() if carry else p  # a per-query p: the exactness tests' cases
    # one kernel for every group and engine (exp and log, not pow, whose scalar path
    # multiplies), and divisions by a column (polars divides a column by a scalar as a
    # multiplication by its reciprocal): the same bits however many queries the plan has
    weight = (depth * p.log()).exp()
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
    head = fixed_sum((first * weight).filter(section1))
    last = first.filter(d == s_row - 1).first()
    seen = fixed_sum((x / den * weight).filter(section2))
    scale = (1.0 - p_first) / p_first
    lf = long.cast(pl.Float64)

    def minimum() -> pl.Expr:
        harmonic = fixed_sum((weight / depth).filter(d < l_row))
        tail = c * ((1.0 / (1.0 - p_first)).log() - harmonic)
        return scale * (head + seen + tail)

    def maximum() -> pl.Expr:
        found_sum = fixed_sum(((x + found) / den * weight).filter(section2))
        f = long + s - c
        beyond = d >= l_row
        tail = fixed_sum(((2.0 * depth - l_row - s_row + c_row) / depth * weight).filter(beyond))
        tail = tail + divide(((f + 1) * p_first.log()).exp(), 1.0 - p_first)
        return scale * (head + found_sum + tail)

    if spec.kind == "min":
        return minimum()
    if spec.kind == "max":
        return maximum()
    if spec.kind == "res":
        return maximum() - minimum()
    extrapolated = fixed_sum(
        ((d - s_row + 1).cast(pl.Float64) * unseen / den * weight).filter(section2)
    )
    tail = divide((c + (long - s) * last) / lf * ((long + 1) * p_first.log()).exp(), 1.0 - p_first)
    return scale * (head + seen + last * extrapolated + tail)
