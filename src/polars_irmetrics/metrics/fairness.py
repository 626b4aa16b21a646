"""Fairness of exposure: expected exposure of a (stochastic) ranking policy.

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

__all__ = ["FAIRNESS_METRICS", "UTILITY"]

_READS: tuple[Input, ...] = ("run", "judgments", "groups")
#: expeval's ``-r``: the probability a relevant document satisfies the user (gerr).
UTILITY = 0.5
_EXPEVAL = "expeval (diazf/expeval @69ab070)"


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
)
