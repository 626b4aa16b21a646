"""Every fusion method, declared once: its name, aliases, parameters and formula.

A method is two polars expressions over the long frame of normalised runs (one row
per run, query and retrieved document, with the columns named below): a per-row
*contribution* (a document's value in one run: its score, ``1 / (k + p)`` for RRF...)
and a *combination*, the aggregation of the contributions of one (query, document)
over the runs. Names are ranx's (``ranx.fuse(method=...)``), so that a ranx user
finds them; the usual long names are aliases. :func:`get_fusion_method` resolves a
name or alias and lists the valid ones on a miss.

In the formulas, ``s_r`` is a document's (normalised) score in run ``r``, ``p_r`` its
position (1 = top; ties in score broken by document id, descending compared as text, as
:func:`~polars_irmetrics.evaluate` and trec_eval break them), ``w_r`` the run's
weight, ``n`` the number of runs that retrieved the document, and sums run over those
runs (a run that did not retrieve a document adds nothing, as in ranx).

Every method, its formula and its paper (:func:`describe_fusion_methods` prints this
list from the registry):

- ``rrf`` (k=60): ``sum_r 1 / (k + p_r)``; Cormack, Clarke & Buettcher, Reciprocal rank
  fusion outperforms Condorcet and individual rank learning methods, SIGIR 2009.
- ``isr``: ``n * sum_r 1 / p_r^2``; Mourão, Martins & Magalhães, Multimodal medical
  information retrieval with unsupervised rank fusion, Computerized Medical Imaging and
  Graphics 2015.
- ``log_isr``: ``ln(n) * sum_r 1 / p_r^2``; Mourão, Martins & Magalhães, Multimodal
  medical information retrieval with unsupervised rank fusion, Computerized Medical
  Imaging and Graphics 2015.
- ``logn_isr`` (sigma=0.01): ``ln(n + sigma) * sum_r 1 / p_r^2``; Mourão, Martins &
  Magalhães, Multimodal medical information retrieval with unsupervised rank fusion,
  Computerized Medical Imaging and Graphics 2015.
- ``rbc`` (phi): ``sum_r (1 - phi) * phi^(p_r - 1)``; Bailey, Moffat, Scholer & Thomas,
  Retrieval consistency in the presence of query variations, SIGIR 2017.
- ``bordafuse``: ``sum_r (c - p_r + 1), a run's unretrieved candidate scoring (c - n_r +
  1) / 2``; Aslam & Montague, Models for metasearch, SIGIR 2001.
- ``w_bordafuse`` [weights]: ``sum_r w_r * borda points_r``; Aslam & Montague, Models
  for metasearch, SIGIR 2001.
- ``condorcet``: ``c - i for the i-th document (from 0) by pairwise majority wins``;
  Montague & Aslam, Condorcet fusion for improved retrieval, CIKM 2002.
- ``w_condorcet`` [weights]: ``condorcet with run r's vote weighing w_r``; Montague &
  Aslam, Condorcet fusion for improved retrieval, CIKM 2002.
- ``sum``: ``sum_r s_r``; Fox & Shaw, Combination of multiple searches, TREC-2 (1994).
- ``mnz``: ``n * sum_r s_r``; Fox & Shaw, Combination of multiple searches, TREC-2
  (1994).
- ``max``: ``max_r s_r``; Fox & Shaw, Combination of multiple searches, TREC-2 (1994).
- ``min``: ``min_r s_r``; Fox & Shaw, Combination of multiple searches, TREC-2 (1994).
- ``med``: ``median_r s_r``; Fox & Shaw, Combination of multiple searches, TREC-2
  (1994).
- ``anz``: ``sum_r s_r / n``; Fox & Shaw, Combination of multiple searches, TREC-2
  (1994).
- ``gmnz`` (gamma): ``n^gamma * sum_r s_r``; Joon Ho Lee, Analyses of multiple evidence
  combination, SIGIR 1997.
- ``wsum`` [weights]: ``sum_r w_r * s_r``; Fox & Shaw, Combination of multiple searches,
  TREC-2 (1994), weighted.
- ``wmnz`` [weights]: ``(sum_r w_r) * sum_r s_r``; Wu, Data fusion in information
  retrieval, Springer 2012.
- ``mixed`` [weights]: ``sqrt(n) * sum_r w_r * s_r``; Wu, Crestani & Bi, Evaluating
  score normalization methods in data fusion, AIRS 2006.
- ``probfuse`` [fitted]: ``sum_r P_r(segment of p_r) / (segment + 1)``; Lillis, Toolan,
  Collier & Dunnion, ProbFuse: a probabilistic approach to data fusion, SIGIR 2006.
- ``segfuse`` [fitted]: ``sum_r P_r(segment of p_r) * (s_r + 1)``; Shokouhi,
  Segmentation of search engine results for effective data-fusion, ECIR 2007.
- ``slidefuse`` (w) [fitted]: ``sum_r mean of P_r over positions p_r - w .. p_r + w``;
  Lillis, Toolan, Collier & Dunnion, Extending probabilistic data fusion using sliding
  windows, ECIR 2008.
- ``posfuse`` [fitted]: ``sum_r P_r(p_r)``; Lillis et al., Estimating probabilities for
  effective data fusion, SIGIR 2010.
- ``bayesfuse`` [fitted]: ``sum_r log-odds_r(segment of p_r), an unretrieved document
  scoring log(0.001/0.999)``; Aslam & Montague, Models for metasearch, SIGIR 2001.
- ``mapfuse`` [fitted]: ``sum_r MAP_r / p_r``; Lillis, Zhang, Toolan, Collier, Leonard &
  Dunnion, Estimating probabilities for effective data fusion, SIGIR 2010.
"""

from __future__ import annotations

import math
import numbers
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_irmetrics.errors import MetricParameterError, UnknownMetricError
from polars_irmetrics.metrics._common import power
from polars_irmetrics.metrics.scope import exact_sum, wide_sum

__all__ = [
    "FUSION_METHODS",
    "FusionMethod",
    "FusionParam",
    "describe_fusion_methods",
    "get_fusion_method",
    "list_fusion_methods",
]

# Internal columns of the long frame (see fusion.fuse); none reaches the user.
RUN = "__irmf_run"
SCORE = "__irmf_s"
POS = "__irmf_p"
LEN = "__irmf_n"
CANDIDATES = "__irmf_c"
PRESENT = "__irmf_present"
WEIGHT = "__irmf_w"
FITTED = "__irmf_f"
RUNS_OF_QUERY = "__irmf_m"
VALUE = "__irmf_v"

#: ranx's log-odds of a document a run did not retrieve, in BayesFuse.
MIN_LOG_ODDS = math.log(0.001 / 0.999)

Params = Mapping[str, float]
Uses = Literal["score", "rank", "borda", "condorcet", "fitted"]


@dataclass(frozen=True)
class FusionParam:
    """One numeric parameter of a method: its default (``None``: required) and range."""

    name: str
    default: float | None
    low: float
    high: float = math.inf
    integer: bool = False
    #: Why ``high`` itself is refused, where it is (``rbc``'s ``phi=1`` weights every
    #: document 0); empty: the range is closed.
    open_high: str = ""
    #: Why ``low`` itself is refused, where it is (``rbc``'s ``phi=0`` weights every
    #: document but each run's first 0); empty: the range is closed there.
    open_low: str = ""

    def check(self, method: str, value: object) -> float:
        """The value as a number, or :class:`MetricParameterError` naming the range.

        An infinite value is refused where the range has no upper end (``rrf``'s
        ``k=inf`` would score every document 0, ``gmnz``'s ``gamma=inf`` infinitely).

        >>> from polars_irmetrics.fusion.methods import FusionParam
        >>> FusionParam("gamma", None, -math.inf).check("gmnz", math.inf)
        Traceback (most recent call last):
        ...
        polars_irmetrics.errors.MetricParameterError: gmnz: gamma=inf is not valid; it must be a finite number
        """  # noqa: E501
        kind = "an integer" if self.integer else "a number"
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if ok and self.integer and not float(value).is_integer():  # type: ignore[arg-type]
            ok = False
        if ok and not math.isfinite(float(value)):  # type: ignore[arg-type]
            ok = False
        at_high = ok and bool(self.open_high) and float(value) == self.high  # type: ignore[arg-type]
        at_low = ok and bool(self.open_low) and float(value) == self.low  # type: ignore[arg-type]
        if at_high or at_low or not ok or not (self.low <= float(value) <= self.high):  # type: ignore[arg-type]
            if self.open_high and self.open_low:
                bounds = f" in ({self.low:g}, {self.high:g}) ({self.open_low}; {self.open_high})"
            elif self.open_high:
                bounds = f" in [{self.low:g}, {self.high:g}) ({self.open_high})"
            elif self.high != math.inf:
                bounds = f" in [{self.low:g}, {self.high:g}]"
            else:  # an integer is finite: only a number's kind says so
                kind = kind if self.integer else "a finite number"
                bounds = "" if self.low == -math.inf else f" >= {self.low:g}"
            raise MetricParameterError(
                f"{method}: {self.name}={value!r} is not valid; it must be {kind}{bounds}"
            )
        return float(value)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FusionMethod:
    """A fusion method: how a document's runs contribute and how they combine."""

    name: str
    formula: str
    paper: str
    uses: Uses
    contribution: Callable[[Params], pl.Expr]
    combine: Callable[[pl.Expr, Params], pl.Expr]
    aliases: tuple[str, ...] = ()
    params: tuple[FusionParam, ...] = ()
    weighted: bool = False

    @property
    def trained(self) -> bool:
        """Whether the method applies parameters fitted on judgments."""
        return self.uses == "fitted"

    @property
    def needs_positions(self) -> bool:
        """Whether the method reads positions (rank-based, Borda, Condorcet, trained)."""
        return self.uses != "score"


def _col(name: str) -> pl.Expr:
    return pl.col(name)


def _score(_: Params) -> pl.Expr:
    return _col(SCORE)


def _pos() -> pl.Expr:
    return _col(POS).cast(pl.Float64)


def _isr(_: Params) -> pl.Expr:
    return 1.0 / _pos().pow(2)


def _fitted(_: Params) -> pl.Expr:
    return _col(FITTED)


def _borda_points(_: Params) -> pl.Expr:
    c = _col(CANDIDATES).cast(pl.Float64)
    n = _col(LEN).cast(pl.Float64)
    return pl.when(_col(PRESENT)).then(c - _pos() + 1.0).otherwise((c - n + 1.0) / 2.0)


#: The parameter :func:`~polars_irmetrics.fusion.fuse.fuse` sets to 1 where a method's
#: sums add scores nothing bounds (a score method without a normalisation, or with
#: ``max``): they are then :func:`~polars_irmetrics.metrics.scope.wide_sum`'s, the
#: same bits in any row order for scores of 2**32 and more too (a third dearer).
WIDE = "__wide_sums"


def _sum(v: pl.Expr, p: Params) -> pl.Expr:
    """A method's sum of contributions: exact in any row order (:data:`WIDE`)."""
    return wide_sum(v) if p.get(WIDE) else exact_sum(v)


def _count() -> pl.Expr:
    return pl.len().cast(pl.Float64)


def _wsum(v: pl.Expr, p: Params) -> pl.Expr:
    return _sum(v * _col(WEIGHT), p)


_PAPERS = {
    "fox": "Fox & Shaw, Combination of multiple searches, TREC-2 (1994)",
    "joon": "Joon Ho Lee, Analyses of multiple evidence combination, SIGIR 1997",
    "rrf": "Cormack, Clarke & Buettcher, Reciprocal rank fusion outperforms Condorcet "
    "and individual rank learning methods, SIGIR 2009",
    "isr": "Mourão, Martins & Magalhães, Multimodal medical information retrieval "
    "with unsupervised rank fusion, Computerized Medical Imaging and Graphics 2015",
    "rbc": "Bailey, Moffat, Scholer & Thomas, Retrieval consistency in the presence of "
    "query variations, SIGIR 2017",
    "borda": "Aslam & Montague, Models for metasearch, SIGIR 2001",
    "condorcet": "Montague & Aslam, Condorcet fusion for improved retrieval, CIKM 2002",
    "wmnz": "Wu, Data fusion in information retrieval, Springer 2012",
    "mixed": "Wu, Crestani & Bi, Evaluating score normalization methods in data fusion, AIRS 2006",
    "probfuse": "Lillis, Toolan, Collier & Dunnion, ProbFuse: a probabilistic approach "
    "to data fusion, SIGIR 2006",
    "segfuse": "Shokouhi, Segmentation of search engine results for effective "
    "data-fusion, ECIR 2007",
    "slidefuse": "Lillis, Toolan, Collier & Dunnion, Extending probabilistic data "
    "fusion using sliding windows, ECIR 2008",
    "posfuse": "Lillis et al., Estimating probabilities for effective data fusion, SIGIR 2010",
    "bayesfuse": "Aslam & Montague, Models for metasearch, SIGIR 2001",
    "mapfuse": "Lillis, Zhang, Toolan, Collier, Leonard & Dunnion, Estimating "
    "probabilities for effective data fusion, SIGIR 2010",
}

_K = FusionParam("k", 60, 0)
_SIGMA = FusionParam("sigma", 0.01, 0, 1)
_PHI = FusionParam(
    "phi",
    None,
    0,
    1,
    open_high="phi=1 weights every document (1 - 1) * 1 = 0, a fused run "
    "of ties ordered by the tie-break alone",
    open_low="phi=0 weights every document but each run's first 0 ** (rank - 1) = 0, "
    "their order the tie-break's",
)
_GAMMA = FusionParam("gamma", None, -math.inf)
_W = FusionParam("w", None, 0, integer=True)
_SEGMENTS = FusionParam("n_segments", None, 1, integer=True)

_METHODS: tuple[FusionMethod, ...] = (
    FusionMethod(
        "rrf",
        "sum_r 1 / (k + p_r)",
        _PAPERS["rrf"],
        "rank",
        lambda p: 1.0 / (p["k"] + _pos()),
        _sum,
        aliases=("reciprocal_rank", "reciprocal_rank_fusion"),
        params=(_K,),
    ),
    FusionMethod(
        "isr",
        "n * sum_r 1 / p_r^2",
        _PAPERS["isr"],
        "rank",
        _isr,
        lambda v, p: _sum(v, p) * _count(),
        aliases=("inverse_square_rank",),
    ),
    FusionMethod(
        "log_isr",
        "ln(n) * sum_r 1 / p_r^2",
        _PAPERS["isr"],
        "rank",
        _isr,
        lambda v, p: _sum(v, p) * _count().log(),
    ),
    FusionMethod(
        "logn_isr",
        "ln(n + sigma) * sum_r 1 / p_r^2",
        _PAPERS["isr"],
        "rank",
        _isr,
        lambda v, p: _sum(v, p) * (_count() + p["sigma"]).log(),
        params=(_SIGMA,),
    ),
    FusionMethod(
        "rbc",
        "sum_r (1 - phi) * phi^(p_r - 1)",
        _PAPERS["rbc"],
        "rank",
        # power: polars raises a constant to a one-row column's power by repeated
        # multiplication (0.8 ** 4 = 0.40960000000000013), to a longer one's by powf
        lambda p: (1.0 - p["phi"]) * power(p["phi"], _pos() - 1.0),
        _sum,
        aliases=("rank_biased_centroid",),
        params=(_PHI,),
    ),
    FusionMethod(
        "bordafuse",
        "sum_r (c - p_r + 1), a run's unretrieved candidate scoring (c - n_r + 1) / 2",
        _PAPERS["borda"],
        "borda",
        _borda_points,
        _sum,
        aliases=("borda", "borda_fuse"),
    ),
    FusionMethod(
        "w_bordafuse",
        "sum_r w_r * borda points_r",
        _PAPERS["borda"],
        "borda",
        _borda_points,
        _wsum,
        aliases=("weighted_bordafuse", "weighted_borda"),
        weighted=True,
    ),
    FusionMethod(
        "condorcet",
        "c - i for the i-th document (from 0) by pairwise majority wins",
        _PAPERS["condorcet"],
        "condorcet",
        _score,
        _sum,
        aliases=("condorcet_fuse",),
    ),
    FusionMethod(
        "w_condorcet",
        "condorcet with run r's vote weighing w_r",
        _PAPERS["condorcet"],
        "condorcet",
        _score,
        _sum,
        aliases=("weighted_condorcet",),
        weighted=True,
    ),
    FusionMethod(
        "sum", "sum_r s_r", _PAPERS["fox"], "score", _score, _sum, aliases=("combsum", "comb_sum")
    ),
    FusionMethod(
        "mnz",
        "n * sum_r s_r",
        _PAPERS["fox"],
        "score",
        _score,
        lambda v, p: _sum(v, p) * _count(),
        aliases=("combmnz", "comb_mnz"),
    ),
    FusionMethod(
        "max",
        "max_r s_r",
        _PAPERS["fox"],
        "score",
        _score,
        lambda v, _: v.max(),
        aliases=("combmax", "comb_max"),
    ),
    FusionMethod(
        "min",
        "min_r s_r",
        _PAPERS["fox"],
        "score",
        _score,
        lambda v, _: v.min(),
        aliases=("combmin", "comb_min"),
    ),
    FusionMethod(
        "med",
        "median_r s_r",
        _PAPERS["fox"],
        "score",
        _score,
        lambda v, _: v.median(),
        aliases=("combmed", "comb_med"),
    ),
    FusionMethod(
        "anz",
        "sum_r s_r / n",
        _PAPERS["fox"],
        "score",
        _score,
        lambda v, p: _sum(v, p) / _count(),
        aliases=("combanz", "comb_anz"),
    ),
    FusionMethod(
        "gmnz",
        "n^gamma * sum_r s_r",
        _PAPERS["joon"],
        "score",
        _score,
        lambda v, p: _sum(v, p) * _count().pow(p["gamma"]),
        aliases=("combgmnz", "comb_gmnz"),
        params=(_GAMMA,),
    ),
    FusionMethod(
        "wsum",
        "sum_r w_r * s_r",
        _PAPERS["fox"] + ", weighted",
        "score",
        _score,
        _wsum,
        aliases=("weighted_sum",),
        weighted=True,
    ),
    FusionMethod(
        "wmnz",
        "(sum_r w_r) * sum_r s_r",
        _PAPERS["wmnz"],
        "score",
        _score,
        lambda v, p: _sum(v, p) * _sum(_col(WEIGHT), p),
        aliases=("weighted_mnz",),
        weighted=True,
    ),
    FusionMethod(
        "mixed",
        "sqrt(n) * sum_r w_r * s_r",
        _PAPERS["mixed"],
        "score",
        _score,
        lambda v, p: _sum(v * _col(WEIGHT), p) * _count().sqrt(),
        weighted=True,
    ),
    FusionMethod(
        "probfuse",
        "sum_r P_r(segment of p_r) / (segment + 1)",
        _PAPERS["probfuse"],
        "fitted",
        _fitted,
        _sum,
        aliases=("prob_fuse",),
    ),
    FusionMethod(
        "segfuse",
        "sum_r P_r(segment of p_r) * (s_r + 1)",
        _PAPERS["segfuse"],
        "fitted",
        _fitted,
        _sum,
        aliases=("seg_fuse",),
    ),
    FusionMethod(
        "slidefuse",
        "sum_r mean of P_r over positions p_r - w .. p_r + w",
        _PAPERS["slidefuse"],
        "fitted",
        _fitted,
        _sum,
        aliases=("slide_fuse",),
        params=(_W,),
    ),
    FusionMethod(
        "posfuse",
        "sum_r P_r(p_r)",
        _PAPERS["posfuse"],
        "fitted",
        _fitted,
        _sum,
        aliases=("pos_fuse",),
    ),
    FusionMethod(
        "bayesfuse",
        "sum_r log-odds_r(segment of p_r), an unretrieved document scoring log(0.001/0.999)",
        _PAPERS["bayesfuse"],
        "fitted",
        _fitted,
        lambda v, p: _sum(v, p) + (_col(RUNS_OF_QUERY).first() - _count()) * MIN_LOG_ODDS,
        aliases=("bayes_fuse",),
    ),
    FusionMethod(
        "mapfuse",
        "sum_r MAP_r / p_r",
        _PAPERS["mapfuse"],
        "fitted",
        _fitted,
        _sum,
        aliases=("map_fuse",),
    ),
)

#: Every method by canonical name.
FUSION_METHODS: dict[str, FusionMethod] = {m.name: m for m in _METHODS}
_BY_ALIAS: dict[str, FusionMethod] = {
    **{a: m for m in _METHODS for a in m.aliases},
    **FUSION_METHODS,
}

#: Parameters of ``fit_fusion`` only (they shape the fitted table, not ``fuse``).
FIT_PARAMS: dict[str, tuple[FusionParam, ...]] = {"probfuse": (_SEGMENTS,)}


def list_fusion_methods() -> list[str]:
    """The canonical names of every fusion method, in the registry's order.

    Examples
    --------
    >>> from polars_irmetrics.fusion.methods import list_fusion_methods
    >>> list_fusion_methods()[:4]
    ['rrf', 'isr', 'log_isr', 'logn_isr']
    """
    return [m.name for m in _METHODS]


def describe_fusion_methods() -> str:
    """Every method as one line: name, parameters, formula and paper.

    Examples
    --------
    The module docstring's list is this text, so the two cannot drift apart:

    >>> from polars_irmetrics.fusion import methods
    >>> methods.describe_fusion_methods() in methods.__doc__
    True
    >>> print(methods.describe_fusion_methods().split("- ``isr``")[0])
    - ``rrf`` (k=60): ``sum_r 1 / (k + p_r)``; Cormack, Clarke & Buettcher, Reciprocal rank
      fusion outperforms Condorcet and individual rank learning methods, SIGIR 2009.
    <BLANKLINE>
    """
    lines = []
    for m in _METHODS:
        params = ", ".join(
            p.name + ("" if p.default is None else f"={p.default:g}") for p in m.params
        )
        line = (
            f"- ``{m.name}``{' (' + params + ')' if params else ''}"
            f"{' [weights]' if m.weighted else ''}{' [fitted]' if m.trained else ''}: "
            f"``{m.formula}``; {m.paper}."
        )
        lines.append(textwrap.fill(line, 88, subsequent_indent="  ", break_long_words=False))
    return "\n".join(lines)


def get_fusion_method(name: str) -> FusionMethod:
    """A method by canonical name or alias; unknown names list the valid ones.

    Examples
    --------
    >>> from polars_irmetrics.fusion.methods import get_fusion_method
    >>> get_fusion_method("combmnz").name
    'mnz'
    >>> get_fusion_method("rff")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.UnknownMetricError: unknown fusion method 'rff'; choose one of rrf, ...
    """
    method = _BY_ALIAS.get(name) if isinstance(name, str) else None
    if method is None:
        raise UnknownMetricError(
            f"unknown fusion method {name!r}; choose one of {', '.join(list_fusion_methods())}"
        )
    return method


def resolve_params(method: FusionMethod, given: Mapping[str, object]) -> dict[str, float]:
    """The method's parameter values: given ones checked, defaults filled in.

    Examples
    --------
    >>> from polars_irmetrics.fusion.methods import get_fusion_method, resolve_params
    >>> resolve_params(get_fusion_method("rrf"), {})
    {'k': 60.0}
    >>> resolve_params(get_fusion_method("gmnz"), {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: gmnz needs the parameter gamma: pass it, ...
    """
    known = {p.name: p for p in method.params}
    for name in given:
        if name not in known:
            accepted = ", ".join(known) or "none"
            raise MetricParameterError(
                f"{method.name} has no parameter {name!r} (its parameters: {accepted})"
            )
    out: dict[str, float] = {}
    for param in method.params:
        value = given.get(param.name, param.default)
        if value is None:
            raise MetricParameterError(
                f"{method.name} needs the parameter {param.name}: pass it, e.g. "
                f"fuse(runs, method={method.name!r}, {param.name}=...)"
            )
        out[param.name] = param.check(method.name, value)
    return out
