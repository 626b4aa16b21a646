"""Fairness of exposure: expected exposure of a (stochastic) ranking policy, and AWRF.

``awrf`` and ``awrf_ndcg`` (TREC Fair 2022's task-1 score, ``wptrec/metrics/awrf.py``)
compare the ranking's attention-weighted group distribution with a target
(``target=``, a table ``group, target``, or ``query_id, group, target`` for one per
query; by default the query's relevant documents' group distribution) by 1 -
Jensen-Shannon divergence; ``groups=`` with several group columns gives intersectional
groups (the product of the dimensions, as wptrec's task 1): see
:mod:`polars_irmetrics.exposure.awrf` and the fairness guide.

``irm.evaluate(run, ["ee_loss", "ee_disparity", "ee_relevance"], qrels=qrels)`` computes
Diaz et al.'s expected-exposure measures (CIKM 2020, "Evaluating Stochastic Rankings with
Expected Exposure"; reference code ``diazf/expeval``), unnormalised, in the retrieval
setting (expeval without ``-C``, ``-U``). The plan is in
:mod:`polars_irmetrics.exposure`; ``compute`` here only raises an error naming that
entry point.

A run with a ``sample`` column (another name with ``sample_id=``) is a stochastic policy:
each ``(query_id, sample)`` is one
sampled ranking, and a document's exposure is averaged over the query's samples (as
expeval does); a run without it is one deterministic ranking.

* Browsing models (``browsing=``, ``patience=`` ``p``, expeval's ``-u`` and ``-p``): ``'rbp'``
  exposes position ``i`` (0-based) by ``p^i``; ``'geometric'`` (expeval's cascade model
  ``gerr``, utility ``u = 0.5``) by ``p^i (1-u)^r``, ``r`` the relevant documents above.
* Target exposure ``ε*``: the relevant documents (relevance > 0) of each grade ``g``
  share the positions ``b..b+m-1`` after the ``b`` documents of higher grades:
  ``ε*_d = (q^b - q^(b+m)) / (m (1-q))``, ``q = p`` (rbp) or ``p (1-u)`` (geometric).
* ``ee_disparity = Σ_d ε_d²``, ``ee_relevance = Σ_d ε*_d ε_d``,
  ``ee_loss = Σ_d (ε*_d - ε_d)² = disparity - 2 relevance + Σ ε*²``.

Queries: those with at least one relevant document; a run's query without one is left
out (expeval prints nothing for it). A judged query the run lacks has no exposure:
``ee_loss = Σ ε*²``, ``ee_relevance = 0`` and ``ee_disparity = 0`` (expeval prints its
normalisation bound ``1/(1-p²)`` there, a value of no ranking: see the fairness guide).
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Input, Metric, Param, Params, ParamValue

__all__ = [
    "AWRF",
    "AWRF_LENGTH",
    "EXPECTED_EXPOSURE",
    "FAIRNESS_METRICS",
    "SEGREGATION",
    "SEGREGATION_LENGTH",
    "UTILITY",
]

_READS: tuple[Input, ...] = ("run", "judgments", "groups")
#: expeval's ``-r``: the probability a relevant document satisfies the user (gerr).
UTILITY = 0.5
_EXPEVAL = "expeval (diazf/expeval @69ab070)"
_YANG = "Yang & Stoyanovich 2017, Measuring fairness in ranked outputs (SSDBM)"
_WPTREC = "TREC Fair 2022 (fair-trec/trec2022-fair-public @227e284, wptrec/metrics/awrf.py)"
_AWRF_READS: tuple[Input, ...] = ("run", "judgments", "groups", "target")
_SEGREGATION_READS: tuple[Input, ...] = ("run", "groups")
#: wptrec's ``target_len``: the longest ranking AWRFMetric scores (it refuses longer ones).
AWRF_LENGTH = 500
#: The longest ranking rND and rRD score exactly; a longer one is refused, naming it.
#: ``rnd``'s terms ``|k N - P i| / (i N)`` are whole numbers up to ``N**2``, exact in
#: Float64 while ``N**2 <= 2**53`` (``N <= 94,906,265``); ``rrd``'s normaliser adds
#: its dynamic programme's sums as whole 2**-64 units in two int64 parts (sums below
#: 2**31), and every ranking of up to 500,000 documents keeps its sums below that
#: (each term is at most ``N - 1``, weighted ``1/log2(i)``: under 1.5e9 in all),
#: where one of about 900,000 could overflow them. ``rkl`` forms no such product.
SEGREGATION_LENGTH: dict[str, int] = {"rrd": 500_000, "rnd": 94_906_265}


def _needs_door(s: Scope, p: Params) -> pl.Expr:
    raise MetricParameterError(
        "expected exposure reads a whole (stochastic) ranking per query, not one query's "
        "judged rows; compute it with irm.evaluate(run, ['ee_loss'], qrels=qrels)"
    )


def _patience(value: ParamValue) -> ParamValue:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1:
        return float(value)
    raise ValueError(
        f"patience must be a number strictly between 0 and 1 (expeval's -p), got {value!r}"
    )


def _protected(value: ParamValue) -> ParamValue:
    if value is None or (isinstance(value, str | int) and not isinstance(value, bool)):
        return value
    raise ValueError(f"protected must name a group (a string or an integer), got {value!r}")


_PARAMS = (
    Param(
        "browsing",
        "geometric",
        ("geometric", "rbp"),
        "the user model: geometric (expeval's gerr cascade, utility 0.5) or rbp",
    ),
    Param(
        "patience", 0.5, doc="the probability of going on to the next position", check=_patience
    ),
)

#: rND's and rKL's Z, their maximum over rankings.
_SEGREGATED = (
    "the larger value of the two most segregated rankings (the protected group all at the "
    "bottom, all at the top), which is the maximum over rankings"
)

_PROTECTED = Param(
    "protected",
    None,
    doc="the protected group (a value of groups= 'group'); default: the ranking's minority group",
    check=_protected,
)

FAIRNESS_METRICS: tuple[Metric, ...] = (
    Metric(
        "ee_loss",
        "expected-exposure loss: squared distance of the run's exposure from the target",
        _needs_door,
        cutoff="none",
        params=_PARAMS,
        higher_is_better=False,
        binary=False,
        reads=_READS,
        matches={_EXPEVAL: "difference with -U: equal to 1e-9 (tests/test_fairness_peers.py)"},
        latex=r"\sum_d (\epsilon^*_d - \epsilon_d)^2",
        formula="The squared Euclidean distance between the target exposure of each "
        "relevant document and the expected exposure the run gives every document it "
        "ranks (averaged over the query's samples).",
    ),
    Metric(
        "ee_disparity",
        "expected-exposure disparity: how unequally the run spreads exposure",
        _needs_door,
        cutoff="none",
        params=_PARAMS,
        higher_is_better=False,
        binary=False,
        reads=_READS,
        matches={_EXPEVAL: "disparity with -U: equal to 1e-9 (tests/test_fairness_peers.py)"},
        latex=r"\sum_d \epsilon_d^2",
        formula="The squared norm of the run's expected exposure vector; 0 for a query "
        "the run lacks.",
    ),
    Metric(
        "ee_relevance",
        "expected-exposure relevance: exposure given where the target puts it",
        _needs_door,
        cutoff="none",
        params=_PARAMS,
        binary=False,
        reads=_READS,
        matches={_EXPEVAL: "relevance with -U: equal to 1e-9 (tests/test_fairness_peers.py)"},
        latex=r"\sum_d \epsilon^*_d \epsilon_d",
        formula="The dot product of the target and the run's expected exposure.",
    ),
    Metric(
        "awrf",
        "attention-weighted rank fairness: 1 - the Jensen-Shannon divergence of the run's "
        "group exposure from the target distribution",
        _needs_door,
        cutoff="none",
        binary=False,
        reads=_AWRF_READS,
        matches={
            _WPTREC: "AWRF: equal to 1e-6 (float32), with one target, a target per query "
            "and intersectional groups (tests/test_awrf.py, tests/test_awrf_targets.py)"
        },
        latex=r"1 - \mathrm{JSD}(\bar a, t),\ \bar a_g = \frac{\sum_i w_i a_{d_i g}}"
        r"{\sum_i w_i},\ w_i = \frac{1}{\log_2 \max(i, 2)}",
        formula="The exposure-weighted group distribution of the ranking (position i "
        "weighted 1/log2(max(i, 2)), a document in k groups counting 1/k for each, "
        "documents in no group left out) against the target distribution (target=, or the "
        "query's relevant documents' groups): 1 minus their Jensen-Shannon divergence "
        "(natural log, scipy's jensenshannon squared). target= with the query column holds "
        "one distribution per query; groups= with several group columns (and no 'group') "
        "gives intersectional groups: a document's alignment to a cell is the product of "
        "its alignments in each dimension, as wptrec's task 1.",
    ),
    Metric(
        "awrf_ndcg",
        "TREC Fair 2022's task-1 score: awrf times wptrec's binary nDCG",
        _needs_door,
        cutoff="none",
        binary=False,
        reads=_AWRF_READS,
        matches={
            _WPTREC: "Score: equal to 1e-6 (float32) (tests/test_awrf.py, "
            "tests/test_awrf_targets.py)"
        },
        latex=r"\mathrm{awrf} \cdot \frac{\sum_{i=1}^{n} \mathrm{rel}_i w_i}"
        r"{\sum_{i=1}^{\min(500, R)} w_i}",
        formula="awrf times wptrec's nDCG: binary gain (relevance > 0), discount "
        "1/log2(max(i, 2)), the ideal over min(500, R) relevant documents; a ranking of "
        "more than 500 documents is refused, as wptrec does.",
    ),
    *(
        Metric(
            name,
            description,
            _needs_door,
            cutoff="none",
            params=(_PROTECTED,),
            higher_is_better=False,
            binary=False,
            reads=_SEGREGATION_READS,
            matches={_YANG: proof},
            latex=latex,
            formula=formula
            + " At the cut-offs i = 10, 20, ... <= N, weighted 1/log2(i), divided by Z, "
            + normaliser
            + "; NaN with 10 documents or fewer or no or only protected ones.",
        )
        for name, description, latex, formula, normaliser, proof in (
            (
                "rnd",
                "normalised discounted difference: the protected share of each top-i "
                "against its share of the ranking",
                r"\frac{1}{Z} \sum_{i=10,20,\dots}^{N} \frac{1}{\log_2 i} "
                r"\left|\frac{|S^+_{1..i}|}{i} - \frac{|S^+|}{N}\right|",
                "The protected share of the top i against its share of all N documents.",
                _SEGREGATED,
                "the paper's definitions: worked examples (tests/test_rnd.py)",
            ),
            (
                "rkl",
                "normalised discounted KL divergence of each top-i's group mix from the ranking's",
                r"\frac{1}{Z} \sum_{i=10,20,\dots}^{N} \frac{1}{\log_2 i} "
                r"D_{KL}(P_i \| Q)",
                "The KL divergence (log base 2) of the top i's protected/unprotected mix "
                "from the whole ranking's.",
                _SEGREGATED,
                "the paper's definitions: worked examples (tests/test_rnd.py)",
            ),
            (
                "rrd",
                "normalised discounted ratio difference: protected per unprotected in each "
                "top-i against the ranking's",
                r"\frac{1}{Z} \sum_{i=10,20,\dots}^{N} \frac{1}{\log_2 i} "
                r"\left|\frac{|S^+_{1..i}|}{|S^-_{1..i}|} - \frac{|S^+|}{|S^-|}\right|",
                "The ratio of protected to unprotected documents in the top i (0 when the "
                "top i holds no unprotected one) against the whole ranking's.",
                "the maximum of the same sum over every ranking of N documents with P "
                "protected (a dynamic programme over the protected counts at the "
                "cut-offs; the two most segregated rankings fall short of it, e.g. one "
                "unprotected document on top of the protected ones), so rrd lies in [0, 1]",
                "the paper's definitions; Z against every ranking enumerated for N <= 22 "
                "(tests/test_rrd_exact.py, tests/test_rnd.py)",
            ),
        )
    ),
)

#: The expected-exposure measures (ee_loss, ee_disparity, ee_relevance): the ones that
#: read the run, the judgments and the groups (no target), read once from their
#: declarations above. They score only the queries with a relevant document in groups=,
#: and a judged query a group did not retrieve.
EXPECTED_EXPOSURE = frozenset(m.name for m in FAIRNESS_METRICS if m.reads == _READS)
#: awrf and awrf_ndcg: the measures that read a target group distribution (target=),
#: NaN on a ranking with no document in groups=
#: (:func:`~polars_irmetrics.exposure.rnd.warn_ungrouped`), read once from their
#: declarations above.
AWRF = frozenset(m.name for m in FAIRNESS_METRICS if m.reads == _AWRF_READS)
#: The segregation measures (rnd, rkl, rrd): the ones that read the run and the groups
#: alone (no judgments), undefined (NaN) on some rankings
#: (:func:`~polars_irmetrics.exposure.rnd.warn_undefined`), read once from their
#: declarations above.
SEGREGATION = frozenset(m.name for m in FAIRNESS_METRICS if m.reads == _SEGREGATION_READS)
