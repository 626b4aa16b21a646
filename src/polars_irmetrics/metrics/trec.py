"""The rest of trec_eval's catalogue (``-m all_trec``), each measure as trec_eval computes it.

Geometric means (gm_map, gm_bpref), interpolated precision (iprec_at_recall, 11pt_avg),
relative precision (relative_P, set_relative_P), precision at multiples of R
(Rprec_mult), inferred AP (infAP), set_map, num_nonrel_judged_ret, the gain-based
experimental measures (ndcg_rel, Rndcg, binG, G), trec_eval's rank-biased precision
and its residual (rbp, rbp_resid), the unjudged fraction (unj) and utility, and nDCG
with trec_eval's custom gains (``ndcg.1=3,2=9``): ``trec_ndcg(gains='1=3,2=9')``.

Each formula reproduces trec_eval 9/10's C code (usnistgov/trec_eval, ``m_*.c``; the
versions pytrec-eval-terrier bundles), checked per query against it in
``tests/test_trec_measures.py``. Conventions are the library's (see
:mod:`polars_irmetrics.metrics.core`), which are trec_eval's: ``R`` is the number of
relevant judged documents (``rel >= level``), ``n`` the number retrieved, a negative
label means "in the pool but not judged". Two notes apply to every measure here:

* *unjudged retrieved documents*: the evaluator's rows are the judged documents, so a
  retrieved document missing from the judgments is only counted, never placed. The
  measures that need its position (unj, rbp_resid) take the retrieved documents to
  hold ranks 1..n, which is how trec_eval ranks them (rank gaps make them inexact);
* *gains*: trec_eval's gain of a judged document is its label (``gains`` overrides
  labels, ``'1=3,2=9'``; a label not listed keeps gain = label); negative labels and
  documents missing from the judgments gain 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import polars as pl

from polars_irmetrics.metrics._common import (
    check_number,
    check_real,
    divide,
    exact_level,
    num_rel,
    power,
    ranked,
    ratio,
    rel_ret,
    relevant,
)
from polars_irmetrics.metrics.core import CORE_METRICS
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Alias, Metric, Param, Params, ParamValue

__all__ = [
    "ELEVEN_POINTS",
    "GAINS",
    "INFAP_EPSILON",
    "REAL_CUTOFFS",
    "TREC_METRICS",
    "parse_gains",
]

#: trec_eval's INFAP_EPSILON (trec_eval.h).
INFAP_EPSILON = 0.00001
#: trec_eval's rbp persistence when none is given (m_rbp.c).
TREC_RBP_P = 0.9
#: The recall levels of 11pt_avg (and trec_eval's default iprec_at_recall cutoffs).
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: Metrics whose real-valued "cutoff" is a parameter: ``iprec_at_recall_0.10``,
#: ``IPrec@0.1`` and ``iprec(recall=0.1)`` are one metric (the registry reads these).
#: (``rprec_mult_avgjg`` is :mod:`.preference`'s judgment-group average of rprec_mult.)
REAL_CUTOFFS: dict[str, str] = {
    "iprec": "recall",
    "rprec_mult": "multiple",
    "rprec_mult_avgjg": "multiple",
}

ROUNDING = Param(
    "rounding",
    "truncate",
    choices=("truncate", "lround"),
    doc="how a recall level x becomes a number of relevant documents: 'truncate', "
    "floor(x * R + 0.9) (trec_eval 9.0.x, pytrec_eval), or 'lround', x * R rounded "
    "(trec_eval 10.0)",
)

GAINS = Param(
    "gains",
    None,
    doc="gain per relevance label, 'label=gain,...' (trec_eval's ndcg.1=3,2=9); labels "
    "not listed keep their usual gain",
    check=lambda value: _normalize_gains(value),
)


# --------------------------------------------------------------------------- parameters
def _format_number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def parse_gains(text: str) -> dict[int, float]:
    """``'1=3,2=9.5'`` -> ``{1: 3.0, 2: 9.5}``: integer labels >= 0, finite gains.

    Raises
    ------
    ValueError
        For an item that is not ``label=gain``, a negative or non-integer label, a
        label listed twice or a gain that is not a finite number.

    Examples
    --------
    >>> parse_gains("2=9, 1=3.5")
    {2: 9.0, 1: 3.5}
    """
    pairs: dict[int, float] = {}
    for item in text.split(","):
        label_text, equals, gain_text = item.partition("=")
        try:
            label = int(label_text.strip())
            gain = float(gain_text.strip())
        except ValueError:
            label, gain = -1, math.nan
        if not equals or label < 0 or not math.isfinite(gain):
            raise ValueError(
                f"gains={text!r}: cannot read {item.strip()!r}; write label=gain pairs with "
                "integer labels >= 0, e.g. gains='1=3,2=9'"
            )
        if label in pairs:
            raise ValueError(f"gains={text!r}: label {label} is listed twice")
        pairs[label] = gain
    return pairs


def _normalize_gains(value: ParamValue) -> ParamValue:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"gains must be a string such as '1=3,2=9', got {value!r}")
    pairs = parse_gains(value)
    return ",".join(f"{label}={_format_number(g)}" for label, g in sorted(pairs.items()))


def parse_recalls(text: str) -> tuple[float, ...]:
    """``'.25,.5,.75'`` -> ``(0.25, 0.5, 0.75)``: distinct finite recall levels, sorted.

    Raises
    ------
    ValueError
        For an item that is not a number, or a level listed twice.

    Examples
    --------
    A level may be written as trec_eval's command line writes it (``.5``); the levels
    come out sorted, as trec_eval sorts them:

    >>> parse_recalls(".75,.25,0.5")
    (0.25, 0.5, 0.75)
    """
    levels: list[float] = []
    for item in text.split(","):
        try:
            level = float(item.strip())
        except ValueError:
            level = math.nan
        if not math.isfinite(level):
            raise ValueError(
                f"recalls={text!r}: cannot read {item.strip()!r}; write recall levels "
                "separated by commas, e.g. recalls='0.25,0.5,0.75'"
            )
        if level in levels:
            raise ValueError(f"recalls={text!r}: recall level {level!r} is listed twice")
        levels.append(level)
    return tuple(sorted(levels))


def _normalize_recalls(value: ParamValue) -> ParamValue:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"recalls must be a string such as '0.25,0.5,0.75', got {value!r}")
    return ",".join(repr(level) for level in parse_recalls(value))


# --------------------------------------------------------------------------- building blocks
def _f(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Float64)


def _judged(s: Scope) -> pl.Expr:
    """A judgment (label >= 0); negative labels are "in the pool, not judged"."""
    return s.rel >= 0


def _nonrelevant(s: Scope, p: Params) -> pl.Expr:
    return _judged(s) & (s.rel < exact_level(p.level))


def _retrieved(s: Scope) -> pl.Expr:
    return s.rank.is_not_null()


def _label_gain(s: Scope, p: Params) -> pl.Expr:
    """Per row: the gain of the document, trec_eval's ``get_gain``.

    A label listed in ``gains`` (``l >= 0``) gains its listed value, which may be 0 or
    negative; any other label gains itself when positive, else 0 (negative labels and
    the plan's marker row included).
    """
    rel = _f(s.rel)
    gain = pl.when(rel > 0).then(rel).otherwise(0.0)
    text = p.options.get("gains")
    if isinstance(text, str):
        for label, value in sorted(parse_gains(text).items(), reverse=True):
            gain = pl.when(rel == float(label)).then(pl.lit(value)).otherwise(gain)
    return gain


def _positions() -> pl.Expr:
    """Group context: 1..L, the positions of the query's rows."""
    return pl.int_range(1, pl.len() + 1, dtype=pl.Int64)


def _discount(position: pl.Expr) -> pl.Expr:
    return (_f(position) + 1.0).log(2)


def _ideal_gains(gain: pl.Expr, candidate: pl.Expr) -> pl.Expr:
    """Group context: the positive gains of the candidates, largest first, then zeros.

    trec_eval's ideal ranking (``setup_gains`` + the ideal loop of m_ndcg.c): every
    judged document whose gain is positive, sorted by gain. trec_eval sorts the gain
    levels with ``(int) (gain1 - gain2)``, which calls two gains less than 1 apart
    equal and may leave them out of order; here they are sorted exactly.
    """
    return pl.when(candidate & (gain > 0)).then(gain).otherwise(0.0).sort(descending=True)


def _at_position(values: pl.Expr, at: pl.Expr) -> pl.Expr:
    """Group context: per row, ``values[at]`` (1-based), ``at`` capped at the last row.

    Null where ``at`` is null.
    """
    last = pl.len().cast(pl.Int64)
    index = pl.when(at > last).then(last).otherwise(at) - 1
    return values.gather(index)


def _persistence_powers(persistence: float, length: pl.Expr) -> pl.Expr:
    """Group context: ``p**0, p**1, ..., p**(length - 1)`` as trec_eval's rbp loops make
    them (``cur_p = cur_p * p`` once a position: m_rbp.c, m_rbp_resid.c); a null
    ``length`` counts as 0.

    Repeated products, not ``pow``: ``0.95**k`` by ``k`` products is not always the
    correctly rounded power (nor ``exp(k ln p)``), and the sums that read them print
    trec_eval's digits only with its weights.
    """
    n = length.fill_null(0).clip(lower_bound=0)
    return pl.repeat(pl.lit(persistence, pl.Float64), n).cum_prod().shift(1, fill_value=1.0)


def _persistence_weight(s: Scope, persistence: float) -> pl.Expr:
    """Per row: ``p**(rank - 1)``, trec_eval's weight of a rank (null for a row not
    retrieved): the repeated products of :func:`_persistence_powers` for the ranks
    1..num_ret (trec_eval's positions; the table is no longer than the query's list),
    ``pow`` past them (a rank gap: trec_eval has none)."""
    top = pl.min_horizontal(s.rank.max(), s.num_ret).fill_null(0).cast(pl.Int64)
    table = _persistence_powers(persistence, top)
    index = (s.rank.cast(pl.Int64) - 1).clip(0, pl.max_horizontal(top - 1, 0))
    products = s.window(table.gather(pl.when(s.rank <= top).then(index)))
    far = power(persistence, _f(s.rank) - 1.0)
    return pl.when(s.rank <= s.window(top)).then(products).otherwise(far)


def _cumulative_by_rank(values: pl.Expr) -> pl.Expr:
    """Group context, rows in rank order: the running sum of ``values`` (nulls as 0)."""
    return values.fill_null(0.0).cum_sum()


# --------------------------------------------------------------------------- formulas
def _core(name: str) -> Callable[[Scope, Params], pl.Expr]:
    return next(m.compute for m in CORE_METRICS if m.name == name)


def _gm_map(s: Scope, p: Params) -> pl.Expr:
    ap = _core("map")
    return ap(s, Params(k=None, level=p.level, options={"denominator": "relevant"}))


def _gm_bpref(s: Scope, p: Params) -> pl.Expr:
    return _core("bpref")(s, Params(k=None, level=p.level, options={}))


def _recall_cut(recall: float, r: pl.Expr, rounding: str) -> pl.Expr:
    """Relevant documents to reach for recall level ``recall`` with R = ``r``.

    ``'truncate'``: ``(long) (x * R + 0.9)`` (trec_eval 9.0.x, pytrec_eval);
    ``'lround'``: ``lround(x * R)``, halves away from zero (trec_eval 10.0).
    """
    if rounding == "lround":
        return (recall * r).round(0, mode="half_away_from_zero")
    return (recall * r + 0.9).floor()


def _iprec_at(s: Scope, p: Params, recall: float) -> pl.Expr:
    """Interpolated precision at one recall level (m_iprec_at_recall.c)."""
    r = num_rel(s, p)
    cut = _recall_cut(recall, r, p.choice("rounding"))  # relevant documents to reach
    is_rel = relevant(s, p) & _retrieved(s)
    found = _f(s.ranked_count(relevant(s, p)))
    precision = found / _f(s.rank)
    # ``when``, not ``filter``, and the cut beside every row through Scope.window: the
    # plan's group-by then streams (a filter, or a row compared with a per-query value,
    # inside the aggregation keeps it from partitioning)
    reached = found >= s.window(pl.max_horizontal(cut, pl.lit(1.0)))
    best = pl.when(is_rel & reached).then(precision).max()
    return pl.when(cut > rel_ret(s, p, None)).then(0.0).otherwise(best.fill_null(0.0))


def _iprec(s: Scope, p: Params) -> pl.Expr:
    return _iprec_at(s, p, p.number("recall"))


def _eleven_pt_avg(s: Scope, p: Params) -> pl.Expr:
    text = p.options.get("recalls")
    levels = parse_recalls(text) if isinstance(text, str) else ELEVEN_POINTS
    total = pl.lit(0.0)
    for recall in reversed(levels):  # trec_eval adds them from the highest down
        total = total + _iprec_at(s, p, recall)
    return divide(total, float(len(levels)))


def _relative_precision(s: Scope, p: Params) -> pl.Expr:
    r = num_rel(s, p)
    if p.k is None:
        n = _f(s.num_ret)
        den = pl.min_horizontal(n, r)
        return pl.when(n > 0).then(ratio(rel_ret(s, p, None), den)).otherwise(0.0)
    return ratio(rel_ret(s, p, p.k), pl.min_horizontal(pl.lit(float(p.k)), r))


def _rprec_mult(s: Scope, p: Params) -> pl.Expr:
    multiple = p.number("multiple")
    cut = (multiple * num_rel(s, p) + 0.9).floor()
    found = _f((relevant(s, p) & (_f(s.rank) <= s.window(cut))).sum())  # see _iprec_at
    return pl.when(cut >= 1.0).then(found / cut).otherwise(0.0)


def _infap(s: Scope, p: Params) -> pl.Expr:
    is_rel = relevant(s, p)
    j = _f(s.rank) - 1.0  # documents above, judged or not
    rel_above = _f(s.ranked_count(is_rel)) - 1.0
    nonrel_above = _f(s.ranked_count(_nonrelevant(s, p)))
    pooled_above = _f(s.ranked_count(s.rel < 0))  # in the pool, not judged
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_above + nonrel_above + pooled_above) / j) * (
        (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2.0 * INFAP_EPSILON)
    )
    term = pl.when(j == 0.0).then(1.0).otherwise(term)
    total = s.sum_in_order(term, is_rel & _retrieved(s))  # in rank order, as m_infap.c
    r = num_rel(s, p)
    return pl.when(r > 0).then(total / r).otherwise(total)


def _set_map(s: Scope, p: Params) -> pl.Expr:
    found, n, r = rel_ret(s, p, None), _f(s.num_ret), num_rel(s, p)
    return pl.when((n > 0) & (r > 0)).then((found * found) / (n * r)).otherwise(0.0)


def _num_nonrel_judged_ret(s: Scope, p: Params) -> pl.Expr:
    return (_nonrelevant(s, p) & ranked(s, p.k)).sum().cast(pl.Int64)


def _ndcg_rel(s: Scope, p: Params) -> pl.Expr:
    gain = _label_gain(s, p)
    retrieved = _retrieved(s)
    term = gain / _discount(s.rank)
    dcg_here = s.window(_cumulative_by_rank(term))
    ideal = _ideal_gains(gain, _judged(s))
    ideal_terms = ideal / _discount(_positions())
    idcg_here = s.window(_at_position(ideal_terms.cum_sum(), s.rank))
    # every sum in rank (position) order, as m_ndcg_rel.c adds them
    at_relevant = s.sum_in_order(dcg_here / idcg_here, retrieved & (gain > 0))
    positive = _f((_judged(s) & (gain > 0)).sum())
    positive_ret = _f((retrieved & (gain > 0)).sum())
    dcg = s.sum_in_order(term, retrieved)
    idcg = s.sum_in_order(s.window(ideal_terms))
    missed = pl.when(idcg > 0).then((positive - positive_ret) * dcg / idcg).otherwise(0.0)
    total = at_relevant + missed
    return pl.when(total > 0).then(total / positive).otherwise(0.0)


def _rndcg(s: Scope, p: Params) -> pl.Expr:
    gain = _label_gain(s, p)
    retrieved = _retrieved(s)
    term = gain / _discount(s.rank)
    ideal = _ideal_gains(gain, _judged(s))
    position = _positions()
    idcg_cum = (ideal / _discount(position)).cum_sum()
    # a change of ideal gain after position c: nDCG@c is one of the points averaged
    change = (ideal > 0) & (ideal != ideal.shift(-1, fill_value=0.0))
    # DCG of the ranks 1..c: the running DCG of the judged rows ranked at or above c
    ranks = s.rank.fill_null(pl.lit(2**62, pl.Int64))
    above = ranks.search_sorted(position, side="right").cast(pl.Int64)
    dcg_cum = _cumulative_by_rank(term)
    dcg_cum_at = dcg_cum.gather((above - 1).clip(lower_bound=0))
    dcg_at = pl.when(above >= 1).then(dcg_cum_at).otherwise(0.0)
    points = s.window(pl.when(change).then(dcg_at / idcg_cum).otherwise(0.0))
    changes = _f(s.window(change.cast(pl.Int64)).sum())
    # and nDCG at the end of the ranking, when it runs 2 or more past the ideal one
    positive = _f((_judged(s) & (gain > 0)).sum())
    # every sum in rank (position) order, as m_Rndcg.c adds them: the points, then the
    # end of the ranking's
    dcg = s.sum_in_order(term, retrieved)
    idcg = s.sum_in_order(s.window(ideal / _discount(position)))
    last = (_f(s.num_ret) >= positive + 2.0) & (idcg > 0)
    total = s.sum_in_order(points) + pl.when(last).then(dcg / idcg).otherwise(0.0)
    count = changes + _f(last.cast(pl.Int64))
    return pl.when(num_rel(s, p) == 0).then(0.0).otherwise(ratio(total, count))


def _bin_g(s: Scope, p: Params) -> pl.Expr:
    is_rel = relevant(s, p)
    nonrel_above = _f(s.rank) - _f(s.ranked_count(is_rel))  # every non-relevant doc
    term = 1.0 / (2.0 + nonrel_above).log(2)
    # added in rank order, as m_binG.c adds them
    return ratio(s.sum_in_order(term, is_rel & _retrieved(s)), num_rel(s, p))


def _g(s: Scope, p: Params) -> pl.Expr:
    gain = _label_gain(s, p)
    retrieved = _retrieved(s)
    ideal = _ideal_gains(gain, _judged(s))
    # the cost of ranks 1..r: the ideal gains, each at least 1 (trec_eval's min_cost)
    cost_cum = ideal.clip(lower_bound=1.0).cum_sum()
    rank = s.rank.cast(pl.Int64)
    past = pl.when(rank > pl.len()).then(rank - pl.len()).otherwise(0)
    cost = s.window(_at_position(cost_cum, rank) + _f(past))
    gained = s.window(_cumulative_by_rank(pl.when(retrieved).then(gain)))
    term = gain / ((2.0 + cost - gained).log(2))
    # both sums as m_G.c adds them: the results' in rank order, the ideal gains from
    # the largest down
    total = s.sum_in_order(term, retrieved & (gain != 0))
    ideal_total = s.sum_in_order(s.window(ideal))
    return ratio(total, ideal_total)


def _trec_rbp(s: Scope, p: Params) -> pl.Expr:
    persistence = p.number("p")
    rel = _f(s.rel)
    gain = pl.when(rel > 0).then(rel).otherwise(0.0)
    # gains are scaled to [0, 1] when one exceeds 1; a per-query value inside a term
    top = s.window(rel.filter(rel >= 0).max())
    scaled = pl.when(top > 1.0).then(divide(gain, top)).otherwise(gain)
    weight = _persistence_weight(s, persistence)
    # added in rank order, each weight a repeated product, as m_rbp.c does
    total = s.sum_in_order(scaled * weight, _retrieved(s) & (scaled != 0.0))
    return (1.0 - persistence) * total


def _trec_rbp_resid(s: Scope, p: Params) -> pl.Expr:
    persistence = p.number("p")
    judged_ret = _judged(s) & _retrieved(s)
    num_ret = s.num_ret.cast(pl.Int64)
    # m_rbp_resid.c: over positions 0..num_ret-1 (ranks 1..num_ret assumed), the sum in
    # rank order of p**i where the document is unjudged, then p**num_ret + (1 - p) * sum
    powers = _persistence_powers(persistence, num_ret + 1)
    position = pl.int_range(1, powers.len(), dtype=pl.Int64)
    judged_ranks = s.rank.filter(judged_ret).cast(pl.Int64)
    # a position is judged where a judged retrieved row holds its rank (sorted ranks)
    is_judged = judged_ranks.search_sorted(position, side="right") > judged_ranks.search_sorted(
        position, side="left"
    )
    unjudged_powers = pl.when(is_judged).then(0.0).otherwise(powers.head(powers.len() - 1))
    unjudged_sum = s.window(unjudged_powers.cum_sum().last())
    unjudged = s.window(num_ret - judged_ret.sum())
    value = s.window(powers.last()) + (1.0 - persistence) * unjudged_sum
    return pl.when(unjudged.max() > 0).then(value.max()).otherwise(0.0)


def _unjudged(s: Scope, p: Params) -> pl.Expr:
    n = _f(s.num_ret)
    judged = _f((_judged(s) & ranked(s, p.k)).sum())
    if p.k is None:
        return ratio(n - judged, n)
    k = float(p.k)
    return divide(pl.min_horizontal(n, pl.lit(k)) - judged, k)


def _utility(s: Scope, p: Params) -> pl.Expr:
    coef = {
        name: p.number(name)
        for name in ("rel_ret", "nonrel_ret", "rel_missed", "nonrel_missed", "collection")
    }
    found, n, r = rel_ret(s, p, None), _f(s.num_ret), num_rel(s, p)
    return (
        coef["rel_ret"] * found
        + coef["nonrel_ret"] * (n - found)
        + coef["rel_missed"] * (r - found)
        + coef["nonrel_missed"] * (coef["collection"] + found - n - r)
    )


def _trec_ndcg(s: Scope, p: Params) -> pl.Expr:
    """nDCG@k with the labels' gains overridden by ``gains`` (trec_eval ``ndcg.1=3,2=9``).

    DCG adds every retrieved document's gain (negative gains too); the ideal ranking is
    the judged documents with a positive gain, largest first.
    """
    gain = _label_gain(s, p)
    # both sums in rank (position) order, as m_ndcg.c and m_ndcg_cut.c add them
    dcg = s.sum_in_order(gain / _discount(s.rank), s.rank.is_not_null(), p.k)
    candidate = _judged(s)
    position = _positions()
    terms = _ideal_gains(gain, candidate) / _discount(position)
    if p.k is not None:
        terms = pl.when(position <= p.k).then(terms).otherwise(0.0)
    return ratio(dcg, s.sum_in_order(s.window(terms)))


# --------------------------------------------------------------------------- registry
_P = Param(
    "p",
    TREC_RBP_P,
    doc="persistence: the probability of going on to the next rank",
    check=check_number("p", low=0.0, high=1.0, what="a probability between 0 and 1"),
)

TREC_METRICS: tuple[Metric, ...] = (
    Metric(
        "trec_ndcg",
        "nDCG with trec_eval's gain table: a gain per relevance label",
        _trec_ndcg,
        matches={
            "trec_eval": "ndcg.1=3,2=9 (a gains table): a transcription of m_ndcg.c, to 1e-9"
        },
        latex=(
            r"\mathrm{nDCG@}k = \frac{\sum_{r=1}^{k} g(\ell_r) / \log_2(r+1)}{\sum_{r=1}^{k}"
            r" g(\ell^{*}_r) / \log_2(r+1)}, \quad g = \text{the gains table}"
        ),
        params=(GAINS,),
        binary=False,
        formula="DCG@k / IDCG@k as ndcg, with gain(label) = the gain listed for the label "
        "in gains='1=3,2=9', else the label (trec_eval ndcg.1=3,2=9). Any judged label "
        ">= 0, 0 included, may be given any gain, negative too; DCG adds every retrieved "
        "gain and the ideal ranking holds the judged documents with a positive gain, "
        "largest first. trec_eval sorts the gains with an integer comparison, (int) "
        "(g1 - g2), so two gains less than 1 apart (3.5 and 3) compare equal and may be "
        "misordered in its ideal ranking; here they are sorted exactly. Without gains it "
        "is ndcg. 0 when IDCG is 0.",
    ),
    Metric(
        "gm_map",
        "average precision, averaged over queries with a geometric mean",
        _gm_map,
        matches={"trec_eval (through pytrec_eval)": "gm_map: to 1e-9"},
        latex=(
            r"\mathrm{GM\_MAP} = \exp\Big(\frac{1}{|Q|}\sum_{q \in Q} \log"
            r" \max(\mathrm{AP}_q, 10^{-5})\Big)"
        ),
        cutoff="none",
        aliases=(Alias("gm_ap"),),
        aggregate="geometric",
        formula="per query, AP (trec_eval map); over queries exp(mean(log(max(AP, "
        "0.00001)))) (trec_eval gm_map, MIN_GEO_MEAN = 0.00001), so a query with AP 0 "
        "(or, with unretrieved='zero' / trec_eval -c, one with no results) counts as "
        "0.00001. trec_eval prints it only in the summary, never per query.",
    ),
    Metric(
        "gm_bpref",
        "bpref, averaged over queries with a geometric mean",
        _gm_bpref,
        matches={"trec_eval (through pytrec_eval)": "gm_bpref: to 1e-9"},
        latex=(
            r"\mathrm{GM\_bpref} = \exp\Big(\frac{1}{|Q|}\sum_{q \in Q} \log"
            r" \max(\mathrm{bpref}_q, 10^{-5})\Big)"
        ),
        cutoff="none",
        aggregate="geometric",
        formula="per query, bpref; over queries exp(mean(log(max(bpref, 0.00001)))) "
        "(trec_eval gm_bpref). Summary only in trec_eval's output.",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
    Metric(
        "iprec",
        "interpolated precision at a recall level",
        _iprec,
        matches={"trec_eval (through pytrec_eval)": "iprec_at_recall_x: to 1e-9"},
        latex=(
            r"\mathrm{iprec}(x) = \max_{r \ge r_c} \mathrm{P@}r, \quad c = \lfloor xR + 0.9"
            r" \rfloor, \ r_c = \text{rank of the } c\text{-th relevant retrieved}"
        ),
        cutoff="none",
        params=(
            Param(
                "recall",
                None,
                doc="the recall level x, e.g. 0.1",
                check=check_real("iprec", "recall", "iprec_at_recall", at_most_one=True),
            ),
            ROUNDING,
        ),
        aliases=(Alias("iprec_at_recall"),),
        formula="max over ranks r at or below the c-th relevant document of precision@r, "
        "with c relevant documents to reach: c = floor(x * R + 0.9) with "
        "rounding='truncate' (the default: trec_eval 9.0.x, pytrec_eval, ir_measures and "
        "most published numbers), c = lround(x * R) (x * R rounded, halves up) with "
        "rounding='lround' (trec_eval 10.0, irm trec-eval's default); 0 when fewer than "
        "c relevant documents are retrieved; c <= 1 gives the best precision at any "
        "relevant rank. Spelled iprec(recall=0.1), IPrec@0.1 (ir_measures) or "
        "iprec_at_recall_0.10.",
    ),
    Metric(
        "11pt_avg",
        "interpolated precision averaged over the recall levels 0.0, 0.1, ..., 1.0",
        _eleven_pt_avg,
        matches={"trec_eval (through pytrec_eval)": "11pt_avg: to 1e-9"},
        latex=r"\frac{1}{11}\sum_{x \in \{0, 0.1, \dots, 1\}} \mathrm{iprec}(x)",
        cutoff="none",
        params=(
            Param(
                "recalls",
                None,
                doc="recall levels to average, e.g. '0.25,0.5,0.75' (trec_eval "
                "11pt_avg..25,.5,.75); default 0.0, 0.1, ..., 1.0",
                check=_normalize_recalls,
            ),
            ROUNDING,
        ),
        aliases=(Alias("11-pt_avg"),),
        formula="(1/n) * sum over the n recall levels x (0.0, 0.1, ..., 1.0 unless "
        "recalls is given) of iprec(recall=x, rounding=...) (trec_eval 11pt_avg, "
        "11pt_avg_.25,.5,.75); rounding as for iprec: 'truncate' (trec_eval 9.0.x, the "
        "default) or 'lround' (trec_eval 10.0).",
    ),
    Metric(
        "relative_precision",
        "precision@k relative to the best possible: rel_ret@k / min(k, R)",
        _relative_precision,
        matches={"trec_eval (through pytrec_eval)": "relative_P_k, set_relative_P: to 1e-9"},
        latex=r"\frac{\mathrm{rel\_ret@}k}{\min(k, R)}",
        aliases=(
            Alias("relative_p", cutoff="required"),
            Alias("set_relative_p", cutoff="none"),
            Alias("setrelp", cutoff="none"),
        ),
        formula="rel_ret@k / min(k, R) (trec_eval relative_P_k): precision up to R, recall "
        "after; without k, rel_ret / min(num_ret, R) (trec_eval set_relative_P). 0 when "
        "R = 0 or nothing is retrieved.",
    ),
    Metric(
        "rprec_mult",
        "precision at a multiple of R",
        _rprec_mult,
        matches={"trec_eval (through pytrec_eval)": "Rprec_mult_m: to 1e-9"},
        latex=r"\frac{\mathrm{rel\_ret@}c}{c}, \quad c = \lfloor mR + 0.9 \rfloor",
        cutoff="none",
        params=(
            Param(
                "multiple",
                None,
                doc="the multiple m of R, e.g. 0.2",
                check=check_real("rprec_mult", "multiple", "Rprec_mult", multiple=True),
            ),
        ),
        formula="rel_ret@c / c with c = floor(m * R + 0.9) (trec_eval Rprec_mult_m, the "
        "same in 9.0.x and 10.0: its rounding change left Rprec_mult alone; past "
        "the end of the ranking still divided by c); 0 when c = 0 (R = 0). "
        "rprec_mult(multiple=1.0) is r_precision. Spelled rprec_mult(multiple=0.2), "
        "rprec_mult@0.2 or Rprec_mult_0.20.",
    ),
    Metric(
        "infap",
        "inferred AP: AP estimated from a sample of the pool",
        _infap,
        matches={"trec_eval (through pytrec_eval)": "infAP: to 1e-9"},
        latex=(
            r"\mathrm{infAP} = \frac{1}{R}\sum_{d \text{ rel. at rank } j+1} \begin{cases} 1"
            r" & j = 0 \\ \frac{1}{j+1} +"
            r" \frac{j}{j+1}\cdot\frac{r+n+u}{j}\cdot\frac{r+\epsilon}{r+n+2\epsilon} & j > 0"
            r" \end{cases}"
        ),
        cutoff="none",
        formula="(1/R) * sum over retrieved relevant d at rank j+1 of 1 if j = 0, else "
        "1/(j+1) + j/(j+1) * ((r + n + u)/j) * ((r + e)/(r + n + 2e)), with r, n, u the "
        "relevant, judged non-relevant and pooled-unjudged (negative label) documents "
        "above d and e = 0.00001 (Yilmaz & Aslam 2006, trec_eval infAP). Documents "
        "missing from the judgments count in j only.",
    ),
    Metric(
        "set_map",
        "unranked AP: set precision times set recall",
        _set_map,
        matches={"trec_eval (through pytrec_eval)": "set_map: to 1e-9"},
        latex=r"\mathrm{SetAP} = \frac{\mathrm{rel\_ret}^2}{\mathrm{num\_ret} \cdot R}",
        cutoff="none",
        aliases=(Alias("setap"),),
        formula="rel_ret^2 / (num_ret * R) (trec_eval set_map, ir_measures SetAP); 0 when "
        "R = 0 or nothing is retrieved.",
    ),
    Metric(
        "num_nonrel_judged_ret",
        "number of judged non-relevant documents retrieved (in the top k)",
        _num_nonrel_judged_ret,
        matches={"trec_eval (through pytrec_eval)": "num_nonrel_judged_ret: exactly"},
        latex=r"\sum_{r=1}^{k} \mathbb{1}[0 \le \ell_r < \lambda]",
        # a count of the judging, as num_ret is of the run: fewer judged non-relevant
        # documents at the same depth means more unjudged ones, not a better system
        higher_is_better=None,
        integer=True,
        formula="judged documents with 0 <= rel < level at ranks 1..k (trec_eval "
        "num_nonrel_judged_ret, summed in its summary).",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
    Metric(
        "ndcg_rel",
        "nDCG averaged over the relevant documents",
        _ndcg_rel,
        matches={"trec_eval (through pytrec_eval)": "ndcg_rel: to 1e-9"},
        latex=(
            r"\frac{1}{G}\Big(\sum_{d:\, g_d > 0 \text{ at } r}"
            r" \frac{\mathrm{DCG@}r}{\mathrm{IDCG@}\min(r, G)} + (G -"
            r" m)\,\frac{\mathrm{DCG@}n}{\mathrm{IDCG}}\Big)"
        ),
        cutoff="none",
        params=(GAINS,),
        binary=False,
        formula="(1/G) * (sum over retrieved d with gain > 0 at rank r of DCG@r / "
        "IDCG@min(r, G) + (G - those d) * DCG@n / IDCG), G = judged documents with "
        "gain > 0 (trec_eval ndcg_rel); 0 when that sum is not positive.",
    ),
    Metric(
        "rndcg",
        "nDCG averaged at the ideal ranking's gain changes",
        _rndcg,
        matches={"trec_eval (through pytrec_eval)": "Rndcg: to 1e-9"},
        latex=(
            r"\operatorname{mean}_{c \in C} \frac{\mathrm{DCG@}c}{\mathrm{IDCG@}c}, \quad C ="
            r" \text{the ends of the ideal gain levels}"
        ),
        cutoff="none",
        params=(GAINS,),
        formula="mean of DCG@c / IDCG@c over the positions c where the ideal gain drops "
        "(the end of each gain level, the last one included), plus DCG@n / IDCG when "
        "num_ret >= G + 2, G = judged documents with gain > 0 (trec_eval Rndcg). 0 when "
        "R = 0 (the relevance level matters only there) or G = 0 (trec_eval: 0/0).",
    ),
    Metric(
        "bin_g",
        "binary G: 1 / log2(2 + non-relevant documents above), averaged over R",
        _bin_g,
        matches={"trec_eval (through pytrec_eval)": "binG: to 1e-9"},
        latex=(
            r"\mathrm{binG} = \frac{1}{R}\sum_{d \text{ relevant, retrieved}}"
            r" \frac{1}{\log_2(2 + \text{non-relevant above } d)}"
        ),
        cutoff="none",
        aliases=(Alias("bing"),),
        formula="(1/R) * sum over retrieved relevant d of 1 / log2(2 + documents above d "
        "that are not relevant, judged or not) (trec_eval binG).",
    ),
    Metric(
        "g",
        "normalised gain G: each gain discounted by the gain still missing",
        _g,
        matches={"trec_eval (through pytrec_eval)": "G: to 1e-9"},
        latex=(
            r"G = \frac{1}{\sum g^{+}}\sum_{r:\, g_r \ne 0} \frac{g_r}{\log_2\big(2 +"
            r" \mathrm{cost}(r) - \mathrm{gained}(r)\big)}"
        ),
        cutoff="none",
        params=(GAINS,),
        binary=False,
        formula="(1/sum of positive gains) * sum over retrieved d at rank r with gain != 0 "
        "of gain(d) / log2(2 + cost(r) - gained(r)), cost(r) = sum over ideal positions "
        "1..r of max(ideal gain, 1), gained(r) = gains at ranks 1..r (trec_eval G).",
    ),
    Metric(
        "trec_rbp",
        "trec_eval's rank-biased precision: graded, scaled gains, p = 0.9",
        _trec_rbp,
        matches={"trec_eval": "rbp: a transcription of m_rbp.c, exactly"},
        latex=r"(1-p)\sum_{r} g_r\, p^{r-1}, \quad g_r = \ell_r / \max(1, \max_d \ell_d)",
        cutoff="none",
        params=(_P,),
        binary=False,
        formula="(1 - p) * sum over retrieved d at rank r of g(d) * p^(r-1), g = label / "
        "max label of the query's judgments when that exceeds 1, else the label "
        "(trec_eval rbp; labels <= 0 gain 0; the relevance level is not used), p^(r-1) "
        "made by r - 1 products by p and the terms added in rank order, as m_rbp.c does "
        "(a rank past the number retrieved: pow). trec_eval "
        "scales with a min and max it never initialises (m_rbp.c); this is its value "
        "when they start at 0. Not the library's rbp (binary, p = 0.8).",
    ),
    Metric(
        "trec_rbp_resid",
        "trec_eval's rbp residual: what unjudged retrieved documents could add",
        _trec_rbp_resid,
        matches={"trec_eval": "rbp_resid: a transcription of m_rbp_resid.c, exactly"},
        latex=r"1 - (1-p)\sum_{r:\, d_r \text{ judged}} p^{r-1}",
        cutoff="none",
        params=(_P,),
        aliases=(Alias("rbp_resid"),),
        binary=False,
        higher_is_better=None,  # the uncertainty the judgments leave, as rbp_residual
        formula="p^n + (1 - p) * sum over unjudged retrieved documents at rank r of "
        "p^(r-1) = 1 - (1 - p) * sum over judged retrieved r of p^(r-1), and 0 when no "
        "retrieved document is unjudged (trec_eval rbp_resid; ranks 1..n assumed), "
        "computed as m_rbp_resid.c computes it: the first form, each p^i made by i "
        "products by p, the unjudged terms added in rank order.",
    ),
    Metric(
        "unjudged",
        "share of the top k without a judgment",
        _unjudged,
        matches={"trec_eval": "unj_k: a transcription of m_unj.c, to 1e-9"},
        latex=(
            r"\mathrm{unj@}k = \frac{\min(k, \mathrm{num\_ret}) - |\{r \le k : d_r \text{"
            r" judged}\}|}{k}"
        ),
        aliases=(Alias("unj", cutoff="required"),),
        binary=False,
        higher_is_better=None,  # of the judgments' completeness, as judged: neither way
        formula="(min(k, num_ret) - judged documents at ranks 1..k) / k (trec_eval unj_k: "
        "past the end of the ranking still divided by k); without k, divided by num_ret. "
        "A negative label counts as unjudged; ranks 1..num_ret are assumed.",
    ),
    Metric(
        "utility",
        "set utility: a weighted sum of the retrieval contingency table",
        _utility,
        matches={"trec_eval (through pytrec_eval)": "utility: to 1e-9"},
        latex=(
            r"a\,c_{rr} + (\mathrm{num\_ret} - a)\,c_{nr} + (R - a)\,c_{rm} + (C + a -"
            r" \mathrm{num\_ret} - R)\,c_{nm}"
        ),
        cutoff="none",
        params=(
            Param(
                "rel_ret",
                1.0,
                doc="worth of a relevant retrieved document",
                check=check_number("rel_ret"),
            ),
            Param(
                "nonrel_ret",
                -1.0,
                doc="worth of a non-relevant retrieved document",
                check=check_number("nonrel_ret"),
            ),
            Param(
                "rel_missed",
                0.0,
                doc="worth of a relevant document not retrieved",
                check=check_number("rel_missed"),
            ),
            Param(
                "nonrel_missed",
                0.0,
                doc="worth of a non-relevant document not retrieved",
                check=check_number("nonrel_missed"),
            ),
            Param(
                "collection",
                0,
                doc="documents in the collection (trec_eval -N)",
                check=check_number("collection"),
            ),
        ),
        formula="rel_ret * a + nonrel_ret * (num_ret - a) + rel_missed * (R - a) + "
        "nonrel_missed * (collection + a - num_ret - R), a = relevant retrieved "
        "(trec_eval utility, default coefficients 1, -1, 0, 0; unjudged retrieved "
        "documents count as non-relevant).",
    ),
)
