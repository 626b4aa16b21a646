"""rND, rKL and rRD (Yang & Stoyanovich 2017, "Measuring fairness in ranked outputs") as
one lazy plan.

For a ranking of ``N`` documents, ``P`` of them in the protected group, and ``k_i`` the
protected documents among the top ``i``, at the cut-offs ``i = 10, 20, ... <= N``:

* ``rnd``: ``|k_i/i - P/N|``;
* ``rkl``: the KL divergence (log base 2, ``0 log 0 = 0``) of ``(k_i/i, 1 - k_i/i)``
  from ``(P/N, 1 - P/N)``;
* ``rrd``: ``|k_i/(i-k_i) - P/(N-P)|``, the ratio 0 where ``i = k_i``;

each weighted ``1/log2(i)``, summed, and divided by ``Z``, the maximum of the same sum
over every ranking of ``N`` documents with ``P`` protected. For ``rnd`` and ``rkl`` that
is the larger value of the two most segregated rankings (the protected documents all at
the bottom, ``k_i = max(0, i-(N-P))``, and all at the top, ``k_i = min(i, P)``); for
``rrd`` it is not (one unprotected document on top of the protected ones gives the ratio
``i - 1``), so :func:`rrd_normaliser` finds it by a dynamic programme over the prefix
counts. Each term is rounded once (the differences of fractions over their common
denominator, whole numbers, exact), the sums are fixed-point and ``Z`` is the largest of
the rankings' own sums added the same way, so the most unfair ranking scores 1.0
exactly and none above. See :mod:`polars_irmetrics.metrics.fairness`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from polars_irmetrics.errors import InvalidValueError, IrmWarning
from polars_irmetrics.exposure.awrf import exact_mean
from polars_irmetrics.ground.validate import warn_from_plan
from polars_irmetrics.metrics._common import divide
from polars_irmetrics.metrics.fairness import (
    AWRF,
    EXPECTED_EXPOSURE,
    SEGREGATION,
    SEGREGATION_LENGTH,
)
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import beyond_fixed, fixed_sum64

__all__ = [
    "CUT",
    "SEGREGATION",
    "nan_cause",
    "rrd_normaliser",
    "segregation_values",
    "undefined_part",
    "warn_left_out",
    "warn_undefined",
    "warn_undefined_parts",
    "warn_unscored_groups",
    "warn_values",
]

Requests = list[tuple[str, MetricRequest]]


def exact_sum(value: pl.Expr) -> pl.Expr:
    """Group context: :func:`~polars_irmetrics.exposure.awrf.exact_sum` in units of
    2**-64 alone (:func:`~polars_irmetrics.metrics.scope.fixed_sum64`): the segregation
    metrics' sums and normalisers, whose bits :func:`rrd_normaliser`'s dynamic programme
    reproduces in whole units of 2**-64 (so the most segregated ranking scores 1.0
    exactly); a term below 2**-11 loses its bits below 2**-64 here."""
    return pl.when(beyond_fixed(value).any()).then(value.sum()).otherwise(fixed_sum64(value))


#: The paper's cut-offs: every 10 positions.
CUT = 10
_S, _POS, _G = "__s", "__pos", "__g"
_I, _K, _N, _P = "__i", "__k", "__n", "__p"
_NB, _START, _X, _Y, _U = "__nb", "__start", "__x", "__y", "__u"


# Every quotient by ``divide``: polars divides by a value it holds as one scalar (a
# ranking's N and P in a group of one row, a folded bound, a column joined from one
# row) as a product with the reciprocal in its in-memory engine, which moved rkl's
# last bit (0.31681969333661086 alone in-memory against ...60864 on the streaming
# engine and beside other segments) and rrd's (2/3 as 0.6666666666666664 by segment).


def _nd(k: pl.Expr, i: pl.Expr, n: pl.Expr, p: pl.Expr) -> pl.Expr:
    # |k/i - p/n| as |k n - p i| / (i n): whole numbers, exact, then one rounding, so
    # the ranking and its mirror (the groups swapped: k -> i - k, p -> n - p) give the
    # same bits, as they give the same value (at P = N/2 the two most segregated
    # rankings, the normaliser's two candidates, are such a pair)
    return divide((k * n - p * i).abs(), i * n)


def _xlog2(x: pl.Expr, y: pl.Expr) -> pl.Expr:
    return pl.when(x > 0).then(x * divide(x, y).log(2)).otherwise(0.0)


def _kl(k: pl.Expr, i: pl.Expr, n: pl.Expr, p: pl.Expr) -> pl.Expr:
    # 1 - k/i as (i - k)/i (and 1 - p/n as (n - p)/n), each one rounding: the mirror
    # ranking's two terms are this one's, swapped (the same sum, the same bits)
    return _xlog2(divide(k, i), divide(p, n)) + _xlog2(divide(i - k, i), divide(n - p, n))


def _rd(k: pl.Expr, i: pl.Expr, n: pl.Expr, p: pl.Expr) -> pl.Expr:
    # |k/(i-k) - p/(n-p)| as |k (n-p) - p (i-k)| / ((i-k) (n-p)): one rounding, so two
    # prefixes of the same value give the same bits (n = 11, p = 5: k = 5 and k = 4 at
    # i = 10 both give 1/6, which 1 - 5/6 and 5/6 - 4/6 round apart)
    exact = divide((k * (n - p) - p * (i - k)).abs(), (i - k) * (n - p))
    return pl.when(i > k).then(exact).otherwise(divide(p, n - p))


_TERMS: dict[str, Callable[[pl.Expr, pl.Expr, pl.Expr, pl.Expr], pl.Expr]] = {
    "rnd": _nd,
    "rkl": _kl,
    "rrd": _rd,
}


def _weighted(name: str, k: pl.Expr) -> pl.Expr:
    """The measure ``name``'s term at the cut-off ``__i`` of a ranking of ``__n``
    documents, ``__p`` protected, ``k`` of them in the top ``__i``, weighted
    ``1/log2(i)``: the one expression of the rankings' sums and their normalisers', so
    the maximally segregated ranking's sum and ``Z`` are the same bits (1.0 exactly)."""
    i = pl.col(_I)
    return (1.0 / i.log(2)) * _TERMS[name](k, i, pl.col(_N), pl.col(_P))


def _shifted_max(
    sums: tuple[np.ndarray, np.ndarray, np.ndarray], shift: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row and column ``u``, the larger of the sums at ``u`` and ``u - shift`` (a
    sum: ``high * 2**32 + low``, where ``alive``), as :func:`rrd_normaliser` holds
    them."""
    high, low, alive = (part.copy() for part in sums)
    c_high, c_low, c_alive = (part[:, :-shift] for part in sums)
    h, lo, a = sums[0][:, shift:], sums[1][:, shift:], sums[2][:, shift:]
    better = c_alive & (~a | (c_high > h) | ((c_high == h) & (c_low > lo)))
    high[:, shift:] = np.where(better, c_high, h)
    low[:, shift:] = np.where(better, c_low, lo)
    alive[:, shift:] = a | c_alive
    return high, low, alive


def rrd_normaliser(n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """rRD's ``Z`` for rankings of ``n`` documents, ``p`` of them protected: the maximum
    over every ranking of ``sum_i |k_i/(i-k_i) - p/(n-p)| / log2(i)`` at the cut-offs
    ``i = 10, 20, ... <= n`` (the ratio 0 where ``k_i = i``); NaN where ``p`` is 0 or
    ``n``.

    The sum reads a ranking only through ``u_i = i - k_i``, the unprotected documents in
    the top ``i``; the sequences a ranking can give are exactly those with ``max(0, i -
    p) <= u_i <= min(i, n - p)`` and ``0 <= u_i - u_(i-10) <= 10``. A dynamic programme
    over the cut-offs keeps, for each ``u``, the best sum of a feasible sequence ending
    there (all the ``(n, p)`` pairs at once, one step per cut-off). Each term is the
    rankings' own (the plan's expression, evaluated by polars) and the sums are the
    rankings' fixed-point sums (whole numbers of 2**-64, added exactly), so the
    maximum is the exact largest of the rankings' sums: the ranking that reaches it
    scores 1.0 exactly, and none scores above 1. Its int64 parts hold sums below
    2**31, which every ``n`` up to ``SEGREGATION_LENGTH['rrd']`` (500,000) keeps: a
    longer ranking is refused (:class:`~polars_irmetrics.errors.InvalidValueError`),
    as the plan's checks refuse it.

    Examples
    --------
    ``n = 20``, ``p = 5``: at ``i = 20`` every ranking has the ratio ``5/15``; at
    ``i = 10`` the ratio ``k/(10-k)`` is largest at ``k = 5`` (``|1 - 1/3|``):

    >>> import math
    >>> import numpy as np
    >>> z = rrd_normaliser(np.array([20.0]), np.array([5.0]))
    >>> bool(abs(z[0] - (2 / 3) / math.log2(10)) < 1e-15)
    True

    ``n = 30``, ``p = 12``: one unprotected document before nine protected ones gives
    the ratio 9 at ``i = 10``, then all 12 protected and 8 unprotected at ``i = 20``
    (ratio 1.5), a value no segregated ranking reaches:

    >>> w = [1 / math.log2(i) for i in (10, 20)]
    >>> want = w[0] * (9 - 12 / 18) + w[1] * (12 / 8 - 12 / 18)
    >>> bool(abs(rrd_normaliser(np.array([30.0]), np.array([12.0]))[0] - want) < 1e-12)
    True
    """
    n = np.asarray(n, dtype=np.int64)
    p = np.asarray(p, dtype=np.int64)
    limit = SEGREGATION_LENGTH["rrd"]
    if n.size and int(n.max()) > limit:
        raise InvalidValueError(
            f"rrd_normaliser scores rankings of at most {limit:,} documents exactly (its "
            f"sums' 64-bit parts could overflow beyond), got n={int(n.max()):,}: cut the "
            "ranking, e.g. keep its top 500,000"
        )
    out = np.full(n.shape, np.nan)
    ok = (p > 0) & (p < n) & (n >= CUT)
    if not ok.any():
        return out
    n_ok, p_ok = n[ok], p[ok]
    width = int((n_ok - p_ok).max()) + 1
    u = np.arange(width)[None, :]
    rows = (len(n_ok), width)
    # each sum a whole number of 2**-64 (exact_sum's fixed point), held as high * 2**32
    # + low with 0 <= low < 2**32 (int64 each; numpy has no 128-bit integer)
    high = np.zeros(rows, dtype=np.int64)
    low = np.zeros(rows, dtype=np.int64)
    alive = np.broadcast_to(u == 0, rows).copy()  # a feasible sequence ends at u
    table = pl.DataFrame(
        {
            _N: np.repeat(n_ok.astype(np.float64), width),
            _P: np.repeat(p_ok.astype(np.float64), width),
            _U: np.tile(np.arange(width, dtype=np.float64), len(n_ok)),
        }
    )
    steps = int(n_ok.max()) // CUT
    for step in range(1, steps + 1):
        i = step * CUT
        # the best of the previous cut-off's u - 10 .. u (u never decreases): windows
        # of 1, 2, 4, 8, then 11 positions, each the larger of two shifted
        reach = (high, low, alive)
        for shift in (1, 2, 4, 3):
            reach = _shifted_max(reach, shift)
        r_high, r_low, r_alive = reach
        feasible = (u >= np.maximum(0, i - p_ok)[:, None]) & (
            u <= np.minimum(i, n_ok - p_ok)[:, None]
        )
        term = (
            table.with_columns(  # a column of i, as the rankings' rows hold it
                pl.Series(_I, np.full(table.height, float(i))),
                pl.Series("__f", feasible.ravel()),
            )
            .select(
                pl.when(pl.col("__f"))
                .then(_weighted("rrd", pl.col(_I) - pl.col(_U)))
                .otherwise(0.0)
            )
            .to_series()
            .to_numpy()
            .reshape(rows)
        )
        # the term in whole 2**-64 units, as fixed_sum floors it (exact: a power of two
        # scales, and the low part is a whole number below 2**32)
        t_high = np.floor(term * 2.0**32)
        t_low = (np.floor(term * 2.0**64) - t_high * 2.0**32).astype(np.int64)
        s_low = r_low + t_low
        s_high = r_high + t_high.astype(np.int64) + (s_low >> 32)
        active = (i <= n_ok)[:, None]  # a ranking shorter than i keeps its last step
        high = np.where(active, s_high, high)
        low = np.where(active, s_low & 0xFFFFFFFF, low)
        alive = np.where(active, r_alive & feasible, alive)
    # the largest sum per pair (high first, then low), as the plan's fixed_sum turns
    # its 128-bit total into a float
    top = np.where(alive, high, np.iinfo(np.int64).min).max(axis=1)
    bottom = np.where(alive & (high == top[:, None]), low, -1).max(axis=1)
    total = pl.select(
        (
            pl.lit(pl.Series(top, dtype=pl.Int128)) * pl.lit(2**32, dtype=pl.Int128)
            + pl.lit(pl.Series(bottom, dtype=pl.Int128))
        ).cast(pl.Float64)
        / 2.0**64
    ).to_series()
    out[ok] = total.to_numpy()
    return out


def _segregated(pairs: pl.LazyFrame, names: list[str]) -> pl.LazyFrame:
    """``__n, __p`` and each of ``names``' (``rnd``, ``rkl``) normaliser ``__z_<name>``:
    the larger sum of the two most segregated rankings of ``N`` documents, ``P`` of them
    protected (all at the bottom, ``k_i = max(0, i-(N-P))``, and all at the top, ``k_i =
    min(i, P)``), one row per distinct ``(N, P)`` of ``pairs`` (the same terms, so the
    same fixed-point sums, as summed per ranking)."""
    cuts = (
        pairs.with_columns(pl.int_ranges(1, pl.col(_N).cast(pl.Int64) // CUT + 1).alias("__b"))
        .explode("__b")
        .with_columns((pl.col("__b") * CUT).cast(pl.Float64).alias(_I))
    )
    i, n, p = pl.col(_I), pl.col(_N), pl.col(_P)
    low = pl.max_horizontal(pl.lit(0.0), i - (n - p))
    high = pl.min_horizontal(i, p)
    return cuts.group_by(_N, _P).agg(
        pl.max_horizontal(exact_sum(_weighted(name, low)), exact_sum(_weighted(name, high))).alias(
            f"__z_{name}"
        )
        for name in names
    )


def _with_rrd_normaliser(frame: pl.DataFrame) -> pl.DataFrame:
    # a ranking longer than rrd scores exactly: NaN here, refused by the plan's checks
    # (read in the same collect), never run through the programme
    n = frame[_N].to_numpy()
    fits = n <= SEGREGATION_LENGTH["rrd"]
    z = np.full(n.shape, np.nan)
    z[fits] = rrd_normaliser(n[fits], frame[_P].to_numpy()[fits])
    return frame.with_columns(pl.Series("__z", z, dtype=pl.Float64))


def segregation_values(
    ordered: pl.LazyFrame,
    groups: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    requests: Requests,
    *,
    sizes: pl.LazyFrame | None = None,
    members: pl.LazyFrame | None = None,
    totals: pl.LazyFrame | None = None,
    sampled: bool = True,
) -> pl.LazyFrame:
    """One row per query of the run: each requested ``rnd``/``rkl``/``rrd`` label, the
    mean over the query's sampled rankings (NaN where undefined: 10 or fewer
    documents, or none or every one protected).

    ``ordered``: ``query_id, __s, doc_id, __pos`` (0-based positions), in any row
    order: the protected documents are counted per block of positions from their own
    rows, and the blocks of each ranking come from its length (``sizes``: ``query_id,
    __s, __l``, each ranking's length; ``members``: ``query_id, __s, doc_id, __pos,
    __g``, each ranked document's rows with its groups, as groups= holds them;
    ``totals``: ``query_id, __s, __g, __c``, each ranking's count of documents per
    group; each where the caller has it). ``sampled=False``: each query holds one
    ranking (``__s`` 0 on every row), told apart by the query alone.
    """
    keys = [query_id, _S]
    ranking = keys if sampled else [query_id]  # the columns that tell a ranking apart
    # each document's groups, with its position (a document in several groups: a row
    # each); the groups as groups= holds them, named (as text) only where compared with
    # a name or ordered by one, on the few rows of a table per ranking
    if members is None:
        members = ordered.select(*keys, doc_id, _POS).join(
            groups.select(doc_id, pl.col("group").alias(_G)), on=doc_id
        )
    members = members.cache()
    name = pl.col(_G).cast(pl.String)
    # each ranking's length N; the cut-offs i = 10, 20, ... <= N (its full blocks)
    if sizes is None:
        sizes = ordered.group_by(keys).agg(pl.len().alias("__l"))
    sizes = sizes.cache()
    rankings = sizes.select(keys)
    # the rankings with a cut-off, their full blocks numbered in one run over them all
    # (block b of a ranking is __x = __start + b; in this table's row order, so the
    # blocks' rows below, each ranking's exploded in turn, are in order of __x)
    blocks = (pl.col("__l") // CUT).cast(pl.Int64)
    spans = (
        sizes.filter(pl.col("__l") >= CUT)
        .with_columns(blocks.alias(_NB), (blocks.cum_sum() - blocks).alias(_START))
        .cache()
    )
    by_protected: dict[str | None, Requests] = {}
    for label, request in requests:
        value = dict(request.options)["protected"]
        by_protected.setdefault(None if value is None else str(value), []).append((label, request))
    values = rankings.select(query_id).unique()  # the few rows of the sizes
    for protected, labels in by_protected.items():
        place = spans.select(*ranking, _START, _NB)
        if protected is None:  # the ranking's minority group (ties: the smallest name)
            if totals is None:
                totals = members.group_by(*keys, _G).agg(pl.len().alias("__c"))
            totals = totals.cache()  # read by the names' order and the choice
            # each distinct group's name ranked once (a few rows), not every (ranking,
            # group) row cast to text for a sort of them all: per ranking the least
            # count, ties broken by the smallest name (a null group first, as sorted)
            order = totals.select(_G).unique().with_columns(name.rank("dense").alias("__o"))
            chosen = (
                totals.join(order, on=_G, nulls_equal=True)
                .group_by(keys)
                .agg(pl.col(_G).sort_by("__c", "__o").first(), pl.col("__c").min())
                .cache()
            )
            # P, the ranking's protected documents: its minority group's count
            protected_n = chosen.select(*keys, pl.col("__c").cast(pl.Float64).alias(_P))
            # each query one ranking (unsampled): matched on the query alone
            place = place.join(chosen.select(*ranking, _G), on=ranking)
            protected_rows = members.join(place, on=[*ranking, _G])
        else:
            named = members.filter(name == protected)
            protected_n = named.group_by(keys).agg(pl.len().cast(pl.Float64).alias(_P))
            protected_rows = named.join(place, on=ranking)
        # one group per ranking, a (document, group) pair once in groups=: each
        # document of a ranking at most once (a ranking listing one twice is refused).
        # k_i at the cut-off i = (b+1)*CUT: the protected documents in the ranking's
        # blocks 0 .. b (block b holds positions b*CUT .. b*CUT+CUT-1), P over the whole
        # ranking. The protected rows of the full blocks, their __x in order, each
        # numbered (__u: the rows up to it); the last row at or before a block's __x
        # holds the protected documents of every block up to it, less those before the
        # ranking's first block (counts: whole numbers, exact)
        block = pl.col(_POS).cast(pl.Int64) // CUT
        upto = (
            protected_rows.filter(block < pl.col(_NB))
            .select((pl.col(_START) + block).alias(_Y))
            .sort(_Y)
            .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias(_U))
            .cache()
        )
        # per ranking with a cut-off: its length N and protected count P, and the
        # protected rows before its first block (in the order of __x)
        edges = (
            spans.join(protected_n, on=keys, how="left", maintain_order="left")
            .with_columns(pl.col(_P).fill_null(0.0), (pl.col(_START) - 1).alias(_X))
            .join_asof(upto, left_on=_X, right_on=_Y, strategy="backward")
            .select(
                *keys,
                "__l",
                _START,
                _NB,
                pl.col("__l").cast(pl.Float64).alias(_N),
                _P,
                pl.col(_U).fill_null(0).alias("__before"),
            )
            .cache()
        )
        marked = (
            edges.select(
                *keys, _START, _N, _P, "__before", pl.int_ranges(0, pl.col(_NB)).alias("__b")
            )
            .explode("__b")
            .with_columns((pl.col(_START) + pl.col("__b")).alias(_X))
            .join_asof(upto, left_on=_X, right_on=_Y, strategy="backward")
            .select(
                *keys,
                ((pl.col("__b") + 1) * CUT).cast(pl.Float64).alias(_I),
                (pl.col(_U).fill_null(0) - pl.col("__before")).cast(pl.Float64).alias(_K),
                _N,
                _P,
            )
        )
        asked = {r.metric.name for _, r in labels}
        bounded: list[str] = [name for name in ("rnd", "rkl") if name in asked]
        sums = marked.group_by(keys).agg(
            *(exact_sum(_weighted(name, pl.col(_K))).alias(name) for name in bounded),
            *([exact_sum(_weighted("rrd", pl.col(_K))).alias("rrd")] if "rrd" in asked else []),
        )
        # each measure's Z, the maximum over every ranking of N documents, P protected:
        # one per distinct (N, P), joined to the rankings (read apart from the sums
        # above: a wider aggregation there changed rnd's and rkl's last bits)
        pairs = edges.select(_N, _P).unique()
        normalisers = _segregated(pairs, bounded) if bounded else pairs
        if "rrd" in asked:  # no closed form: a dynamic programme over the (N, P) pairs
            exact = pairs.map_batches(
                _with_rrd_normaliser,
                schema={_N: pl.Float64, _P: pl.Float64, "__z": pl.Float64},
            ).rename({"__z": "__z_rrd"})
            normalisers = normalisers.join(exact, on=[_N, _P], how="left")
        measured = [*bounded, *(["rrd"] if "rrd" in asked else [])]
        z = edges.join(normalisers, on=[_N, _P], how="left").select(
            *keys, *(f"__z_{name}" for name in measured)
        )
        sums = (
            sums.join(z, on=keys, how="left", nulls_equal=True)
            .with_columns(
                divide(pl.col(name), pl.col(f"__z_{name}")).alias(name) for name in measured
            )
            .select(*keys, *measured)
        )
        defined = (pl.col(_P) > 0) & (pl.col(_P) < pl.col(_N))
        per_ranking = (
            rankings.join(sums, on=keys, how="left")
            .join(edges.select(*keys, defined.alias("__ok")), on=keys, how="left")
            .with_columns(
                pl.when(pl.col("__ok").fill_null(False))
                .then(pl.col(name))
                .otherwise(float("nan"))
                .alias(name)
                for name in _TERMS
                if any(r.metric.name == name for _, r in labels)
            )
        )
        per_query = per_ranking.group_by(query_id).agg(
            exact_mean(pl.col(request.metric.name)).alias(label) for label, request in labels
        )
        values = values.join(per_query, on=query_id, how="left")
    return values


def _say(text: str, emit: Callable[[str], None] | None) -> None:
    """``text`` warned as an :class:`~polars_irmetrics.errors.IrmWarning` from the plan,
    or handed to ``emit`` (an engine's relay) where one is given."""
    if emit is None:
        warn_from_plan(text, IrmWarning)
    else:
        emit(text)


def _first_place(rows: pl.DataFrame, keys: list[str], query_id: str) -> str:
    """The keys and query of the first of ``rows`` (``a='x', query_id='q1'``), as the
    warnings name the first query they count."""
    first = rows.row(0, named=True)
    return ", ".join(f"{k}={first[k]!r}" for k in [*keys, query_id])


def _warn_nan(
    frame: pl.DataFrame,
    labels: list[str],
    keys: list[str],
    query_id: str,
    cause: str,
    *,
    total: int | None,
    emit: Callable[[str], None] | None,
) -> None:
    """The warning of :func:`warn_undefined` and :func:`warn_ungrouped`: which of
    ``labels`` are NaN on how many of the queries, the first of them, then ``cause``
    (why, and the fix)."""
    nan = [label for label in labels if frame[label].is_nan().any()]
    if not nan:
        return
    undefined = frame.filter(pl.any_horizontal(pl.col(nan).is_nan()))
    place = _first_place(undefined, keys, query_id)
    named = ", ".join(repr(label) for label in nan)
    verb = "is" if len(nan) == 1 else "are"
    counted = frame.height if total is None else total
    text = (
        f"{named} {verb} NaN on {undefined.height} of the {counted} queries (first: "
        f"{place}): {cause}"
    )
    _say(text, emit)


def warn_undefined(
    frame: pl.DataFrame,
    labels: list[str],
    keys: list[str],
    query_id: str,
    *,
    total: int | None = None,
    emit: Callable[[str], None] | None = None,
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where a ``rnd``/``rkl``/``rrd``
    label of the per-query ``frame`` is NaN: the paper's sum runs over the cut-offs
    ``10, 20, ... <= N`` and is divided by its maximum, so a ranking of 10 documents or
    fewer (no cut-off below its length: every term 0) or with no or only protected
    documents has none (0 / 0), and the mean over the queries is NaN with it.
    ``total``: the queries of the run where ``frame`` holds some of them (an engine's
    undefined rows, :func:`warn_undefined_parts`; default its height); ``emit``: where
    the text goes (default: warned here, from the plan).

    >>> import warnings
    >>> frame = pl.DataFrame({"query_id": ["q1", "q2"], "rnd": [float("nan"), 0.5]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_undefined(frame, ["rnd"], [], "query_id")
    >>> str(caught[0].message)[:53]
    "'rnd' is NaN on 1 of the 2 queries (first: query_id='"
    """
    why, fix = nan_cause("rnd", query_id) or ("", "")
    _warn_nan(frame, labels, keys, query_id, f"{why}; {fix}", total=total, emit=emit)


def nan_cause(name: str, query_id: str = "query_id") -> tuple[str, str] | None:
    """Why the exposure measure ``name`` is NaN on a query, and the fix, as
    :func:`warn_undefined` (``rnd``, ``rkl``, ``rrd``) and :func:`warn_ungrouped`
    (``awrf``, ``awrf_ndcg``) say them (their warning is ``why; fix``) and
    :func:`~polars_irmetrics.compare` refuses the NaN it cannot pair; ``None`` for
    another metric.

    >>> nan_cause("rkl")[1]
    "rank more than 10 documents of both groups, or leave those queries out (the short rankings: run.filter(pl.len().over('query_id') > 10))"
    >>> nan_cause("ndcg") is None
    True
    """  # noqa: E501
    if name in SEGREGATION:
        return (
            "Yang & Stoyanovich's sum runs over the cut-offs 10, 20, ... up to "
            "the ranking's length and is divided by its largest value, so a ranking of 10 "
            "documents or fewer, or with no or only protected documents, has none (0 / 0), "
            "and the mean over the queries is NaN too (ir_measures' rND, rKL and rRD sum at "
            "every position and give 0 where the largest value is 0: another definition)",
            "rank more than 10 documents of both groups, or leave those queries out (the "
            f"short rankings: run.filter(pl.len().over({query_id!r}) > 10))",
        )
    if name in AWRF:
        return (
            "none of the ranking's documents has a group in groups=, so the "
            "ranking has no group distribution to compare with the target, or (without "
            "target=) none of the query's relevant documents has one, so the target has "
            "none (wptrec drops the pages without an alignment and gives NaN too), and the "
            "mean over the queries is NaN with it",
            "give the run's documents and the relevant "
            "judged ones their groups in groups= (ids spelt as the run spells them), or leave "
            "those queries out",
        )
    return None


def undefined_part(
    frame: pl.DataFrame, requests: Requests, keys: list[str], query_id: str
) -> tuple[pl.DataFrame, int]:
    """What one part of an engine's per-query values tells :func:`warn_undefined_parts`:
    its rows where an asked ``rnd``/``rkl``/``rrd``/``awrf``/``awrf_ndcg`` is NaN, or a
    measure that reads the judgments is null (:func:`judged_labels`: a query it leaves
    out, or none scored) (the keys, the query id and those labels; a few rows) and its
    count of rows."""
    labels = [label for label, r in requests if r.metric.name in SEGREGATION | AWRF]
    judged = judged_labels(requests)
    if not labels and not judged:
        return pl.DataFrame(), frame.height
    bad = pl.any_horizontal(
        *(pl.col(label).is_nan() for label in labels),
        *(pl.col(label).is_null() for label in judged),
    )
    kept = [*labels, *(label for label in judged if label not in labels)]
    return frame.filter(bad).select(*keys, query_id, *kept), frame.height


def warn_undefined_parts(
    parts: list[tuple[pl.DataFrame, int]],
    requests: Requests,
    keys: list[str],
    query_id: str,
    emit: Callable[[str], None] | None = None,
    *,
    summary: bool = True,
) -> None:
    """The one plan's :func:`warn_undefined` and :func:`warn_left_out` (where
    ``summary``: the means asked for, not the per-query values), from the parts of an
    engine's per-query values (:func:`undefined_part` each): the parts' rows in the
    keys' order, over the whole run's count of queries."""
    found = [rows for rows, _ in parts if rows.height]
    total = sum(count for _, count in parts)
    if not found:  # no row undefined or left out; none at all: no query scored
        if not total:
            warn_unscored(pl.DataFrame(), requests, total=0, emit=emit)
        return
    rows = pl.concat(found, how="vertical_relaxed").sort([*keys, query_id])
    warn_values(rows, requests, keys, query_id, total=total, emit=emit, summary=summary)


def warn_values(
    frame: pl.DataFrame,
    requests: Requests,
    keys: list[str],
    query_id: str,
    *,
    total: int | None = None,
    emit: Callable[[str], None] | None = None,
    summary: bool = True,
) -> None:
    """The warnings of the exposure measures' per-query ``frame``, in one order on every
    path (the one plan's, the buckets', an engine's parts'): a measure that reads the
    judgments scoring no query (:func:`warn_unscored`), awrf NaN
    (:func:`warn_ungrouped`), rND/rKL/rRD NaN (:func:`warn_undefined`) and, where
    ``summary`` (the means asked for), an expected-exposure measure leaving out a query
    the measures beside score (:func:`warn_left_out`). ``total`` and ``emit`` as
    :func:`warn_undefined`'s."""
    warn_unscored(frame, requests, total=total, emit=emit)
    fair = [label for label, r in requests if r.metric.name in AWRF]
    if fair:
        warn_ungrouped(frame, fair, keys, query_id, total=total, emit=emit)
    labels = [label for label, r in requests if r.metric.name in SEGREGATION]
    if labels:
        warn_undefined(frame, labels, keys, query_id, total=total, emit=emit)
    if summary:
        warn_left_out(frame, requests, keys, query_id, total=total, emit=emit)


def warn_ungrouped(
    frame: pl.DataFrame,
    labels: list[str],
    keys: list[str],
    query_id: str,
    *,
    total: int | None = None,
    emit: Callable[[str], None] | None = None,
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where an ``awrf``/``awrf_ndcg``
    label of the per-query ``frame`` is NaN: a ranking none of whose documents has a
    group in groups= has no group distribution, and without ``target=`` a query none of
    whose relevant documents has a group has no target (wptrec drops the pages without
    an alignment), so its value is NaN, and the mean over the queries is NaN with it.
    ``total`` and ``emit`` as :func:`warn_undefined`'s.

    >>> import warnings
    >>> frame = pl.DataFrame({"query_id": ["q1", "q2"], "awrf": [float("nan"), 0.9]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_ungrouped(frame, ["awrf"], [], "query_id")
    >>> str(caught[0].message)[:54]
    "'awrf' is NaN on 1 of the 2 queries (first: query_id='"
    """
    why, fix = nan_cause("awrf") or ("", "")
    _warn_nan(frame, labels, keys, query_id, f"{why}; {fix}", total=total, emit=emit)


#: The exposure measures that read the judgments: they score only the queries with a
#: relevant judgment (:func:`warn_unscored`).
JUDGED = EXPECTED_EXPOSURE | AWRF


def judged_labels(requests: Requests) -> list[str]:
    """The labels of ``requests`` of the exposure measures that read the judgments
    (:data:`JUDGED`): null on a query without a relevant judgment."""
    return [label for label, r in requests if r.metric.name in JUDGED]


def warn_unscored(
    frame: pl.DataFrame,
    requests: Requests,
    *,
    total: int | None = None,
    emit: Callable[[str], None] | None = None,
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where an exposure measure that
    reads the judgments (:data:`JUDGED`) scores no query of the per-query ``frame``
    (null on every row, or no row at all): the judgments hold no relevant document
    (relevance > 0) with a group for any query of the run, so its mean is null, said
    rather than silent. ``total``: the count of the run's per-query rows where
    ``frame`` holds some of them (an engine's rows that are null or NaN,
    :func:`warn_undefined_parts`; default its height); ``emit`` as
    :func:`warn_undefined`'s.

    >>> import warnings
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> frame = pl.DataFrame({"query_id": ["q1"], "ee_loss": [None]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unscored(frame, parse_metric_list(["ee_loss"]))
    >>> str(caught[0].message)[:50]
    "'ee_loss' scores no query (its mean is null): the "
    """
    counted = frame.height if total is None else total
    none = [
        label
        for label in judged_labels(requests)
        if label not in frame.columns or frame[label].null_count() >= counted
    ]
    if not none:
        return
    named = ", ".join(repr(label) for label in none)
    plural = len(none) > 1
    means = "their means are" if plural else "its mean is"
    text = (
        f"{named} {'score' if plural else 'scores'} no query ({means} null): the "
        "exposure measures that read the judgments score only the queries with a relevant "
        "judgment (relevance > 0; with groups=, one whose document has a group), and the "
        "judgments hold none for the run's queries (every grade 0 or less, no relevant "
        "document in groups=, or judgments of other queries). Check that relevance= names "
        "the judgments' grade column, that the run and the judgments name the same "
        "queries and documents (same id spelling), and that groups= holds the relevant "
        "documents"
    )
    _say(text, emit)


def warn_unscored_groups(
    frame: pl.DataFrame,
    keys: list[str],
    labels: list[str],
    emit: Callable[[str], None] | None = None,
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where some groups of ``frame``
    (the summaries of each group of the ``by``/``systems`` ``keys``, in their order),
    not all (all: the measures' own warnings say it), hold no query the exposure
    measures (``labels``) score: ``num_q`` 0 and null values there, named rather than
    silent. One text for the one plan, the buckets and an engine's means; ``emit`` as
    :func:`warn_undefined`'s.

    >>> import warnings
    >>> frame = pl.DataFrame({"seg": ["s", "t"], "num_q": [1, 0]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unscored_groups(frame, ["seg"], ["ee_loss"])
    >>> str(caught[0].message)[:60]
    "'ee_loss' scores no query in 1 of the 2 groups of 'seg' (fir"
    """
    none = frame.filter(pl.col("num_q") == 0)
    if none.height == 0 or none.height == frame.height:
        return
    first = none.row(0, named=True)
    place = ", ".join(f"{k}={first[k]!r}" for k in keys)
    _say(
        f"{', '.join(repr(label) for label in labels)} "
        f"score{'' if len(labels) > 1 else 's'} no query in {none.height} of "
        f"the {frame.height} groups of {', '.join(repr(k) for k in keys)} (first: "
        f"{place}): num_q is 0 and the values are null there (the group's queries have "
        "no relevant judgment the measures read, or it retrieved no judged query). Check "
        "that group's judgments (and their groups in groups=), or filter it out of the run",
        emit,
    )


def left_out_labels(requests: Requests) -> list[str]:
    """The expected-exposure labels of ``requests`` where an exposure measure of another
    kind (awrf, awrf_ndcg, rnd, rkl, rrd) is asked beside: those score queries the
    expected exposure leaves out (null), and the summary's count is of the queries any
    of them scores (:func:`warn_left_out`)."""
    expected = [label for label, r in requests if r.metric.name in EXPECTED_EXPOSURE]
    if len(expected) == len(requests):
        return []
    return expected


def warn_left_out(
    frame: pl.DataFrame,
    requests: Requests,
    keys: list[str],
    query_id: str,
    *,
    total: int | None = None,
    emit: Callable[[str], None] | None = None,
    paired: bool = False,
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where an expected-exposure
    measure of the per-query ``frame`` is null on a query that an exposure measure
    beside scores (:func:`left_out_labels`): the expected exposure scores only the
    queries with a relevant document in groups=, awrf and rND every query they rank (or
    judged), so one summary's count (``num_q``) is not the count of the queries its
    mean is over. ``total`` and ``emit`` as :func:`warn_undefined`'s. ``paired``:
    ``frame`` holds the per-query values ``irm.compare`` pairs, which leaves such a
    query out of every measure's pairs (the measures beside are compared on fewer
    queries than they score), and the warning says that instead.

    >>> import warnings
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> frame = pl.DataFrame({"query_id": [1, 2], "ee_loss": [0.5, None], "awrf": [0.9, 0.4]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_left_out(frame, parse_metric_list(["ee_loss", "awrf"]), [], "query_id")
    >>> str(caught[0].message)[:64]
    "'ee_loss' is null on 1 of the 2 queries (first: query_id=2), whi"
    """
    counted = frame.height if total is None else total
    # null on every query: scores none, which warn_unscored says (not said twice)
    fewer = [
        label for label in left_out_labels(requests) if 0 < frame[label].null_count() < counted
    ]
    if not fewer:
        return
    out = frame.filter(pl.any_horizontal(pl.col(fewer).is_null()))
    place = _first_place(out, keys, query_id)
    named = ", ".join(repr(label) for label in fewer)
    others = ", ".join(
        repr(label) for label, r in requests if r.metric.name not in EXPECTED_EXPOSURE
    )
    plural = len(fewer) > 1
    cause = (
        f"{named} {'are' if plural else 'is'} null on {out.height} of the {counted} "
        f"queries (first: {place}), which {others} beside score: the expected-exposure "
        "measures score only the queries with a relevant document in groups= (a query "
        "without relevant judgments, or none of whose relevant documents has a group, is "
        "left out), so "
    )
    if paired:
        text = cause + (
            "compare leaves those queries out of every measure's pairs, and "
            f"{others} {'are' if ',' in others else 'is'} compared on fewer queries than "
            f"{'they score' if ',' in others else 'it scores'} (n). Compare {named} in a "
            f"call of {'their' if plural else 'its'} own to keep those queries in the "
            "others' pairs (or give those relevant documents a group)"
        )
    else:
        text = cause + (
            f"{'their means are' if plural else 'its mean is'} over fewer "
            "queries than the exposure measures' count (num_q; num_q_exposure beside the "
            "accuracy metrics) says. Evaluate "
            f"{named} in a call of {'their' if plural else 'its'} own for the count of the "
            "queries it is over (or give those relevant documents a group)"
        )
    _say(text, emit)
