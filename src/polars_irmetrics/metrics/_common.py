"""Building blocks shared by the metric formulas (relevance tests, cutoffs, gains, DCG).

Conventions (trec_eval 9/10): a judged document is *relevant* when ``rel >= level``
and ``rel >= 0``; a negative relevance means "in the pool but not judged"; a ratio
whose denominator is zero is 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import polars as pl

from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Param, Params, ParamValue

GAIN = Param(
    "gain",
    "linear",
    ("linear", "exponential"),
    "gain of a document with relevance g: g (linear, trec_eval) or 2**g - 1 (exponential)",
)
IDEAL = Param(
    "ideal",
    "judgments",
    ("judgments", "retrieved"),
    "ideal ranking from all judged documents (trec_eval) or from the retrieved ones only",
)

TIES = Param(
    "ties",
    "break",
    ("break", "average"),
    "documents with the same score: ranked one by one, ties broken by doc_id descending "
    "(trec_eval, the default), or 'average': each shares the mean gain of its tie group "
    "over the group's positions (scikit-learn's dcg_score / ndcg_score default, "
    "ignore_ties=False; McSherry & Najork 2008); needs the scores",
)
LOG_BASE = Param(
    "log_base",
    2,
    None,
    "base b of the discount 1 / log_b(r + 1) (scikit-learn's dcg_score log_base); "
    "nDCG does not depend on it",
    check=lambda value: check_log_base(value),
)


#: Microsoft Recommenders' ``relevancy_method`` and ``threshold`` (their
#: ``merge_ranking_true_pred``): which of a user's recommendations count as
#: recommended. ``'top_k'``: the top k; ``'by_threshold'``: the top ``threshold``,
#: while the formula's k (precision's divisor, map's min(k, R), the ideal DCG's
#: length) stays k. Their code cuts each list with pandas ``head(threshold)``: a count
#: of items, not a bound on the predicted score.
RELEVANCY = (
    Param(
        "relevancy_method",
        "top_k",
        ("top_k", "by_threshold"),
        "which recommendations count (Microsoft Recommenders' relevancy_method): the "
        "top k ('top_k'), or the top `threshold` while the formula keeps dividing by "
        "k ('by_threshold'; a count of items, not a score bound)",
    ),
    Param(
        "threshold",
        None,
        None,
        "with relevancy_method='by_threshold': how many of each list's top items count "
        "(a positive whole number, Recommenders' threshold)",
    ),
)


def check_relevancy(metric: str, k: int | None, options: Mapping[str, ParamValue]) -> None:
    """The parser's check of :data:`RELEVANCY` (:attr:`Metric.check_params
    <polars_irmetrics.metrics.spec.Metric.check_params>`): ``threshold`` only with
    ``relevancy_method='by_threshold'``, which needs it (a positive whole number) and a
    cutoff k."""
    method = options.get("relevancy_method", "top_k")
    threshold = options.get("threshold")
    if method == "top_k":
        if threshold is not None:
            raise ValueError(
                f"threshold={threshold!r} applies only with relevancy_method='by_threshold'; "
                f"add it, e.g. {metric}(relevancy_method='by_threshold',threshold="
                f"{threshold!r})@10, or drop threshold"
            )
        return
    if k is None:
        raise ValueError(
            "relevancy_method='by_threshold' needs a cutoff k (the divisor Microsoft "
            f"Recommenders keeps), e.g. {metric}(relevancy_method='by_threshold',"
            "threshold=5)@10"
        )
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        raise ValueError(
            "relevancy_method='by_threshold' needs threshold, a positive whole number of "
            f"top items per user, got {threshold!r}. Microsoft Recommenders' by_threshold "
            "keeps each user's top `threshold` items (pandas head), not the items scored "
            "above a threshold: to count only recommendations scored above t, filter the "
            "run first, run.filter(pl.col('score') > t)"
        )


def list_cutoff(p: Params) -> int | None:
    """The rank cutoff of the recommendations that count: ``k``, or ``threshold`` under
    ``relevancy_method='by_threshold'`` (:data:`RELEVANCY`; checked by
    :func:`check_relevancy` when the name was parsed)."""
    if p.options.get("relevancy_method", "top_k") == "top_k":
        return p.k
    threshold = p.options["threshold"]
    if isinstance(threshold, bool) or not isinstance(threshold, int):  # pragma: no cover
        raise TypeError(f"threshold is not a whole number: {threshold!r}")
    return threshold


def exact_level(level: float) -> float | int:
    """The relevance level as a label column is compared with it: a whole level (below
    2**53) as a Python int, which polars compares with a Decimal label exactly (a float
    compares it as Float64, where 0.99999999999999999999 reads as 1.0: relevant at
    level 1), and with every other dtype as the float was (a Float32 label in Float32,
    an integer label as an integer).

    >>> import decimal
    >>> label = pl.Series("rel", [decimal.Decimal("0.99999999999999999999")])
    >>> rel = pl.col("rel")
    >>> pl.select(label).select(rel >= 1.0, (rel >= exact_level(1.0)).alias("exact")).row(0)
    (True, False)
    """
    if isinstance(level, float) and level.is_integer() and abs(level) < 2**53:
        return int(level)
    return level


def relevant(s: Scope, p: Params) -> pl.Expr:
    return (s.rel >= exact_level(p.level)) & (s.rel >= 0)


def ranked(s: Scope, k: int | None) -> pl.Expr:
    """Retrieved at rank 1..k (any rank when ``k`` is None)."""
    return s.rank.is_not_null() if k is None else (s.rank <= k)


def num_rel(s: Scope, p: Params) -> pl.Expr:
    return relevant(s, p).sum().cast(pl.Float64)


def list_positions(s: Scope) -> pl.Expr:
    """The positions of the query's list, a Float64 per group: the documents retrieved,
    and at least the last rank given, as ranks are positions (a list whose ranks skip
    some, such as a judged table of the judged documents only, holds unknown, not
    relevant documents at the missing positions, as the other metrics read it)."""
    last = s.rank.max().cast(pl.Float64).fill_null(0.0)
    return pl.max_horizontal(s.num_ret.cast(pl.Float64), last)


def rel_ret(s: Scope, p: Params, k: int | None) -> pl.Expr:
    return (relevant(s, p) & ranked(s, k)).sum().cast(pl.Float64)


def fsum(s: Scope, term: pl.Expr, where: pl.Expr | None = None) -> pl.Expr:
    """The sum of a float ``term`` over the rows meeting ``where``.

    Every float sum of a formula goes through here, :func:`fsum_ranked` (:meth:`Scope.sum`,
    exact in any order) or, where trec_eval adds the terms along the ranking,
    :meth:`Scope.sum_in_order`, so a metric is the same to the last bit on any input
    layout, engine or number of buckets.
    """
    return s.sum(term, where)


def fsum_ranked(s: Scope, term: pl.Expr, where: pl.Expr, k: int | None) -> pl.Expr:
    """The sum of ``term`` over the rows ranked 1..k (any rank if ``k`` is None) meeting
    ``where``."""
    return fsum(s, term, where & ranked(s, k))


def divide(num: pl.Expr, den: float | pl.Expr) -> pl.Expr:
    """``num / den`` for a constant ``den`` (or a scalar expression: an aggregate, a
    literal), correctly rounded.

    polars divides a column of floats by a constant as a multiplication by the
    constant's reciprocal, which can be off by one unit in the last place (6 / 10 gives
    0.6000000000000001, not trec_eval's 0.6); dividing by a column of the same length
    divides each value.
    """
    return num / (num * 0.0 + den)


def power(base: float | pl.Expr, exponent: pl.Expr) -> pl.Expr:
    """``base ** exponent`` for a constant ``base`` in [0, 1] (or a column of such bases,
    as a fusion grid's), the same bits on any engine.

    polars raises a constant to a column's powers with ``powf``, except where the
    column holds one value, which it treats as a scalar and, for a whole number, raises
    by repeated multiplication (``0.8 ** 4`` gives 0.40960000000000013 there and
    0.4096000000000001 elsewhere). The streaming engine's batches can hold one row, so
    the same document's term could differ by a unit in the last place from one run to
    the next. ``exp(exponent * ln(base))`` has one kernel; it is within a few units in
    the last place of ``powf`` for the exponents of a ranking (and exactly 1 at 0).
    """
    if isinstance(base, pl.Expr):  # ln 0 = -inf: exp(-inf) = 0, as for a constant 0
        value = (exponent * base.log()).exp()
    elif not 0.0 <= base <= 1.0:  # pragma: no cover - the registry bounds the parameters
        raise ValueError(f"power() takes a base in [0, 1], got {base!r}")
    else:
        value = (exponent * math.log(base)).exp() if base > 0.0 else pl.lit(0.0)
    return pl.when(exponent == 0.0).then(1.0).otherwise(value)


def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den``, and 0 where ``den`` is 0."""
    return pl.when(den > 0).then(num / den).otherwise(0.0)


def gain_of(label: pl.Expr, p: Params) -> pl.Expr:
    """The gain of a label: itself or 2**label - 1 (``gain``); 0 unless positive."""
    rel = label.cast(pl.Float64)
    gain = rel if p.choice("gain") == "linear" else (pl.lit(2.0).pow(rel) - 1.0)
    return pl.when(rel > 0).then(gain).otherwise(0.0)


def gain(s: Scope, p: Params) -> pl.Expr:
    return gain_of(s.rel, p)


def log_base(p: Params) -> float:
    """The base of the discount's logarithm (2 unless ``log_base`` says otherwise)."""
    value = p.options.get("log_base", 2)
    return 2.0 if not isinstance(value, int | float) else float(value)


def _log(position: pl.Expr, base: float) -> pl.Expr:
    """``log_base(position)``: polars' ``log``, ``ln(x) / ln(base)``. For base 2 it differs
    from C's ``log2`` (trec_eval's) in the last bit at some positions (``log2(3)``:
    1.5849625007211563 against 1.584962500721156; 507 of the positions 2..2000), so a
    discounted sum may differ from trec_eval's in its last bit (1e-16 relative), never
    in the printed digits."""
    return position.log(2) if base == 2.0 else position.log(base)


def dcg(s: Scope, p: Params) -> pl.Expr:
    """DCG@k; with ``ties='average'`` scikit-learn's tie-averaged DCG.

    Tie-averaged (McSherry & Najork 2008, scikit-learn's ``_tie_averaged_dcg``): the
    documents of a tie group at positions low..high share the group's mean gain, and
    the group counts at each of its positions within the top k. Only judged documents
    gain, so the group's gain sum is the sum over its judged rows: each adds
    ``gain / (high - low + 1) * sum_{r = low}^{min(high, k)} 1 / log_b(r + 1)``.
    """
    base = log_base(p)
    if p.options.get("ties") == "average":
        low, high = s.tied()
        top = high if p.k is None else pl.min_horizontal(high, pl.lit(p.k, pl.Int64))
        positions = pl.int_ranges(low, top + 1, dtype=pl.Int64)
        discounts = positions.list.eval(1.0 / _log(pl.element().cast(pl.Float64) + 1.0, base))
        size = (high - low + 1).cast(pl.Float64)
        term = gain(s, p) / size * discounts.list.sum()
        return fsum(s, term, (s.rel > 0) & low.is_not_null())
    discount = _log(s.rank.cast(pl.Float64) + 1.0, base)
    # added in rank order, as trec_eval's m_ndcg.c and m_ndcg_cut.c add them
    return s.sum_in_order(gain(s, p) / discount, (s.rel > 0) & s.rank.is_not_null(), p.k)


def idcg(s: Scope, p: Params) -> pl.Expr:
    """DCG of the ideal ranking: the judged documents' gains, largest first.

    The candidates' gains sorted largest first are laid over the query's rows
    (:meth:`Scope.sorted_desc`): row i holds the gain of ideal position i+1. There are
    never more candidates than rows, so the ideal DCG@k is the sum over rows 0..k-1,
    added in that order (:meth:`Scope.sum_in_order`).
    """
    retrieved_only = p.choice("ideal") == "retrieved"
    keep = s.rel > 0
    if retrieved_only:
        keep = keep & s.rank.is_not_null()
    ideal = s.sorted_desc(pl.when(keep).then(s.rel))
    position = s.row_index().cast(pl.Float64) + 1.0
    term = gain_of(ideal, p) / _log(position + 1.0, log_base(p))
    # added position by position, as trec_eval's ideal loop adds them
    return s.sum_in_order(term, k=p.k, by=s.row_index() + 1)


def precision_at(s: Scope, p: Params, metric: str = "precision") -> pl.Expr:
    """rel_ret@cut / k (``cut``: :func:`list_cutoff`); without k, rel_ret / num_ret."""
    cut = list_cutoff(p)
    if p.k is None:
        return ratio(rel_ret(s, p, None), s.num_ret.cast(pl.Float64))
    if p.options.get("adaptive_k"):  # torchmetrics: P@min(k, n), n documents retrieved
        shown = pl.min_horizontal(s.num_ret.cast(pl.Float64), pl.lit(float(p.k)))
        return ratio(rel_ret(s, p, cut), shown)
    return divide(rel_ret(s, p, cut), float(p.k))


def recall_at(s: Scope, p: Params, metric: str = "recall") -> pl.Expr:
    """rel_ret@cut / R, or / min(k, R) (``denominator='capped'``)."""
    cut = list_cutoff(p)
    den = num_rel(s, p)
    if p.options.get("denominator") == "capped" and p.k is not None:
        den = pl.min_horizontal(den, pl.lit(float(p.k)))
    return ratio(rel_ret(s, p, cut), den)


# --------------------------------------------------------------------------- parameter checks
def check_real(
    metric: str, param: str, trec: str, *, at_most_one: bool = False, multiple: bool = False
) -> Callable[[ParamValue], ParamValue]:
    """The parser's check of a real-valued parameter (:attr:`Param.check
    <polars_irmetrics.metrics.spec.Param.check>`); ``at_most_one``: a recall level, in
    [0, 1]; ``multiple``: a multiple of R, above 0 (the precision at rank 0 or below is
    no precision: it was 0.0)."""
    example = f"{metric}({param}=0.2), {metric}@0.2 or {trec}_0.20"

    def check(value: ParamValue) -> ParamValue:
        if value is None:
            raise ValueError(f"{metric} needs its {param}, e.g. {example}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{param} must be a number, e.g. {example}; got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{param} must be a finite number, got {value!r}")
        if at_most_one and not 0.0 <= value <= 1.0:
            whole = f"'P@{int(value)}'" if float(value).is_integer() and value > 1 else "'P@k'"
            raise ValueError(
                f"{param} must be a recall level between 0 and 1, got {float(value)!r}: "
                f"the number after '@' in {metric}@x (ir_measures' IPrec@x) and {trec}_x "
                f"is the recall level, not a rank cutoff, e.g. {example}; for the precision "
                f"of the top documents use {whole}"
            )
        if multiple and not value > 0.0:
            raise ValueError(
                f"{param} must be a number above 0 (the precision is taken at rank "
                f"{param} * R, R the relevant documents), got {float(value)!r}, e.g. {example}"
            )
        return float(value)

    return check


def check_log_base(value: ParamValue) -> ParamValue:
    """The parser's check of ``log_base``: a number above 1."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 1.0:  # type: ignore[arg-type]
        raise ValueError(
            f"log_base must be a number above 1 (the discount is 1 / log_b(r + 1)), "
            f"got {value!r}, e.g. log_base=10"
        )
    return value


def check_flag(value: ParamValue) -> ParamValue:
    """The parser's check of a flag written in a metric name: ``True``/``False``/1/0."""
    text = str(value).lower()
    if text not in ("true", "false", "1", "0"):
        raise ValueError(f"adaptive_k must be True or False, got {value!r}")
    return text in ("true", "1")


def check_number(
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    exclusive: bool = False,
    what: str = "a number",
    hint: str = "",
) -> Callable[[ParamValue], ParamValue]:
    """The parser's check of a number parameter: finite and within ``[low, high]``
    (``exclusive``: ``(low, high)``). ``what`` is how the message names the allowed
    values, ``hint`` an example after it."""

    def check(value: ParamValue) -> ParamValue:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        x = float(value) if ok else math.nan  # type: ignore[arg-type]
        if ok and math.isfinite(x):
            below = low is not None and (x <= low if exclusive else x < low)
            above = high is not None and (x >= high if exclusive else x > high)
            if not below and not above:
                return value
        tail = f", {hint}" if hint else ""
        raise ValueError(f"{name} must be {what}, got {value!r}{tail}")

    return check
