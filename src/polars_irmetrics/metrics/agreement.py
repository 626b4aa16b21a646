"""How similar two rankings are: metrics that read a run and a reference run.

``irm.evaluate(run, ["rbo(p=0.9)", "jaccard@10", "kendall_tau@10"], reference=other)``
compares each query's ranking in ``run`` with the same query's ranking in the
*reference* (``reads=("run", "reference")``), as a per-query similarity averaged over
queries. The plans are in :mod:`polars_irmetrics.agreement`; ``compute`` here only
raises an error naming that entry point.

Rankings. Each side is ordered as the run is elsewhere (``rank``, else ``score``
descending with ties broken by ``doc_id`` descending, as trec_eval), then cut at ``@k``
(positions ``1..k``). Documents with equal ``score`` (ranked by score) form a **tie
group** for ``rbo`` (Corsi & Urbano's treatments ``ties=``), ``tau_ap`` (Urbano &
Marrero's ``ties=``) and ``kendall_tau`` (τ-b counts equal scores as ties); for these
three, ``@k`` keeps every tie group that starts within the first k positions whole (which
of a crossing group's documents fall within k is the ids' order, not the data's). Every
other measure reads the positions.

* ``rbo(p, kind, ties)@k``: rank-biased overlap, Webber et al. (2010) with Corsi &
  Urbano's tie treatments (SIGIR 2024; their reference implementation
  ``julian-urbano/sigir2024-rbo``): ``kind='ext'`` the extrapolated point estimate
  (Webber's eq. 32), ``'min'``/``'max'`` the bounds, ``'res'`` the residual ``max -
  min`` (the overlap's uncertainty, so lower is better: every entry point that
  reads "better" orders it so); ``ties='a'`` (the expected RBO over
  random tie breaking, the reference implementation's default), ``'w'`` (ties as equal
  ranks), ``'b'`` (corrected for the information lost to ties; ``rbo_b(X, X) = 1``).
  Symmetric in the two rankings.
* ``rbo_repro_eval(p)@k``: repro_eval's finite, normalised RBO (Clarke et al.'s
  ``Compatibility`` code): ``sum_{d<k} p^d |A_{:d+1} ∩ B_{:d+1}| / (d+1) / sum_{d<k}
  p^d``; ``@k`` is repro_eval's ``depth`` (1000 there).
* ``jaccard@k``: ``|A ∩ B| / |A ∪ B|`` of the two top-k sets.
* ``overlap@k``: ``|A ∩ B| / k``.
* ``kendall_tau@k``: Kendall's τ-b (scipy's ``kendalltau``) of the two rankings over the
  documents *both* retrieved in their top k; documents only one side retrieved are left
  out; fewer than two shared documents (or every one tied) give null.
* ``tau_ap(ties)@k``: Yilmaz et al.'s AP correlation over the shared documents, the
  reference as the truth and the run's order compared with it (trectools'
  ``tau_ap(list1=run, list2=reference)`` without ties), equal scores tie groups as
  Urbano & Marrero treat them (ICTIR 2017, ``ircor``'s ``tauAP_a``/``tauAP_b``; no tie
  is broken by document id): ``ties='a'`` the run's ties averaged over their orders,
  the reference untied (null where it ties shared documents), ``'b'`` ties on both
  sides, symmetric (null where either side ties every shared document); null below two
  shared documents.
* ``intersection(ref_k)@k``: RecTools' ``Intersection``: the share of the run's top k
  that the reference's top ``ref_k`` (``k`` by default) holds, ``|A_k ∩ B_ref_k| /
  |A_k|``; by ``rank``, the top k are the rows ranked ``<= k`` (RecTools' cut; a rank
  may be skipped), by score the first k positions.
* ``unexpectedness@k``: RePlay's ``Unexpectedness``: ``1 - |A_k ∩ B_k| / k``, the
  share of the k positions whose documents the reference's top k (the base model's
  recommendations) lacks; 0 where either side has no ranking.
* ``ktu@k``: repro_eval's Kendall's τ Union: the i-th document of each side is replaced
  by its position in the sorted union of both top-k lists and τ-b is taken of the two
  position lists, pair i with pair i (over the first ``min(|A|, |B|)`` positions where
  the lengths differ, which repro_eval refuses).

Directions. The similarities (``rbo``, ``jaccard``, ``overlap``, ``kendall_tau``,
``tau_ap``, ``ktu``, ``rbo_repro_eval``) read the reference as the truth (the exact
search, the original run of a reproduction): higher is better. ``rbo(kind='res')``, the
residual ``max - min``, is how much the unseen depths could still change the overlap
(RBO's uncertainty, as ``rbp_residual`` is RBP's), not how near the run is: a run
disjoint from the reference to depth 20 has a smaller residual than one equal to it to
depth 3, so it has no better direction; nor has ``rbo(kind='max')``, the overlap were
every unseen depth to agree, which grows with what is unseen (an empty run's is 1, the
reference's own). The lower bound ``rbo(kind='min')`` assumes nothing unseen agrees:
higher is better. ``intersection`` and ``unexpectedness`` read the
reference as another model to compare with (RecTools, RePlay): how far the run strays
from it is no quality, and ``unexpectedness@k`` is ``1 - overlap@k``, so neither has a
better direction.

Queries: the reference plays the judgments' part: a query of the run that the reference
lacks follows ``unjudged`` (``"drop"`` by default, ``"zero"``, ``"error"``), a query
of the reference that the run lacks follows ``unretrieved`` (``"zero"`` by default:
similarity 0 to an empty ranking, whose residual and upper bound are 1: nothing of it
is seen; ``kendall_tau`` and ``tau_ap`` null, as below two shared documents, so left
out of the mean; ``"drop"``, ``"error"``).
"""

from __future__ import annotations

import math

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Input, Metric, Param, Params

__all__ = ["AGREEMENT_METRICS", "REPRO_EVAL_DEPTHS", "rbo_p", "repro_eval_depths"]

_READS: tuple[Input, ...] = ("run", "reference")


def _needs_reference(s: Scope, p: Params) -> pl.Expr:
    raise MetricParameterError(
        "rank similarity compares a run with a reference run, not with judgments; compute "
        "it with irm.evaluate(run, ['rbo(p=0.9)', 'jaccard@10'], reference=other_run)"
    )


def _ref_k(value: object) -> object:
    """``intersection``'s ``ref_k``: ``None`` (the request's k) or a whole number >= 1."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    if isinstance(value, float) and value.is_integer() and value >= 1:
        return int(value)
    raise ValueError(
        f"ref_k must be a whole number >= 1, the reference's cutoff (RecTools' ref_k; "
        f"by default the request's k), got {value!r}"
    )


def rbo_p(p: Params, metric: str) -> float:
    """The persistence ``p`` of an RBO request, checked (``0 < p < 1``)."""
    value = p.options["p"]
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1:
        return float(value)
    raise MetricParameterError(
        f"metric {metric!r}: p must be a number strictly between 0 and 1 (the persistence, "
        f"e.g. p=0.9), got {value!r}"
    )


#: The most depths whose weights ``rbo_repro_eval`` adds one by one (a table of that many
#: rows, built in Python): about 3 s and 0.2 GB; a cutoff of 10**9 built a billion.
REPRO_EVAL_DEPTHS = 10_000_000


def repro_eval_depths(p: float, cutoff: int, shown: str) -> int:
    """The depths ``0 .. L - 1`` whose weights ``p**d`` (and ``p**d / (d + 1)``)
    ``rbo_repro_eval(p)@cutoff`` adds: ``L = cutoff``, or fewer where ``p**d`` is 0.0
    from a depth ``L`` below it on (its true value below 2**-1100, which float64 rounds
    to 0: the sums over ``0 .. cutoff - 1`` added in order are the same bits without
    those zeros). More than :data:`REPRO_EVAL_DEPTHS` is refused, naming ``shown`` (the
    metric, or the options it was built from): a loop of ``cutoff`` steps in Python and
    a table of ``cutoff`` rows, which a cutoff of 10**20 never finished building.

    Examples
    --------
    >>> repro_eval_depths(0.9, 1000, "m")
    1000
    >>> repro_eval_depths(0.5, 10**20, "m")
    1100
    >>> repro_eval_depths(0.9999999, 10**9, "metric 'x'")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'x': repro_eval's RBO adds ...
    """
    # p**d < 2**-1100 from d = 1100 / -log2(p) on
    vanish = math.ceil(1100.0 / -math.log2(p))
    depths = min(cutoff, vanish)
    if depths > REPRO_EVAL_DEPTHS:
        raise MetricParameterError(
            f"{shown}: repro_eval's RBO adds the weights p**d of the depths 1 to {cutoff} "
            f"one by one, and at p={p!r} the first {depths} of them are not 0, more than "
            f"{REPRO_EVAL_DEPTHS:_} (the most it adds); cut the rankings at the depth they "
            f"reach, at most {REPRO_EVAL_DEPTHS:_}, or give a smaller p"
        )
    return depths


_URBANO = "sigir2024-rbo (julian-urbano, rbo/Python/rbo.py)"

AGREEMENT_METRICS: tuple[Metric, ...] = (
    Metric(
        "rbo",
        "rank-biased overlap of the run with the reference run, ties treated as tie groups",
        _needs_reference,
        params=(
            Param("p", 0.9, doc="persistence: the weight of depth d is (1-p) p^(d-1)"),
            Param(
                "kind",
                "ext",
                ("ext", "min", "max", "res"),
                "extrapolated (Webber et al. eq. 32), lower bound, upper bound (the unseen "
                "depths all agreeing: no better direction), or residual max - min (the "
                "uncertainty: no better direction)",
                # the residual is the overlap's uncertainty, as rbp_residual is rbp's: how
                # much of the rankings is unseen, not how near the run is to the reference
                # (a run disjoint from it to depth 20 has a smaller one than a run equal
                # to it to depth 3), so neither way is better, as for rbp_residual; the
                # upper bound grows with what is unseen: an empty run's is 1, the
                # reference's own, and against a reference of 3 documents a disjoint run
                # of 1 document's is 0.828, above a disjoint run of 3's 0.679, so higher
                # is no better either
                directions={"max": None, "res": None},
            ),
            Param(
                "ties",
                "a",
                ("a", "w", "b"),
                "Corsi & Urbano's treatment of tied scores: a (expected over random tie "
                "breaking), w (ties are equal ranks), b (corrected for the lost information)",
            ),
        ),
        binary=False,
        reads=_READS,
        matches={
            _URBANO: "rbo(x, y, p, ties, score): every row of rbo/test.csv to 1e-9 "
            "(tests/test_agreement.py)",
        },
        latex=(
            r"\frac{1-p}{p}\Big(\sum_{d=1}^{l} A_d\, p^d + \text{tail}\Big),\quad "
            r"A_d = \frac{X_d}{d}\ \text{(no ties)},\ X_d = |S_{:d} \cap L_{:d}|"
        ),
        formula="Webber et al.'s rank-biased overlap between the run's and the reference's "
        "rankings of a query, as Corsi & Urbano compute it: the agreement A_d at every "
        "depth d up to the longer ranking's length l (S is the shorter ranking, L the "
        "longer), then a tail for the depths beyond l: extrapolated (kind='ext'), none "
        "(kind='min'), or as much as possible (kind='max', no better direction: it grows with "
        "the unseen depths); kind='res' is max - min, the "
        "uncertainty left by the unseen depths (no better direction: a deeper run has less of "
        "it, however far from the reference). With "
        "ties, each document of a tie group spanning positions t..b contributes (d - t + "
        "1) / (b - t + 1) at depth d (ties='a', 'b') or 1 from depth t (ties='w'), and A_d "
        "is normalised by d (a), by the two contribution norms (b) or by the mean of the "
        "two sets' sizes (w). Without @k the whole rankings are compared; @k cuts each "
        "after its last tie group that starts within the first k positions (a group "
        "crossing position k is kept whole: which of its documents fall within k is the "
        "ids' order, not the data's).",
    ),
    Metric(
        "rbo_repro_eval",
        "repro_eval's finite normalised rank-biased overlap (Clarke et al.'s code)",
        _needs_reference,
        cutoff="required",
        params=(Param("p", 0.95, doc="persistence (repro_eval's RBO_P, 0.95)"),),
        binary=False,
        reads=_READS,
        matches={
            "repro_eval": "measure.document_order._rbo(run, ideal, p, depth): equal to "
            "1e-12 (tests/test_agreement.py)",
        },
        latex=(
            r"\frac{\sum_{d=1}^{k} p^{d-1}\, |A_{:d} \cap B_{:d}| / d}{\sum_{d=1}^{k} p^{d-1}}"
        ),
        formula="The overlap of the two top-d lists over d, weighted by p^(d-1) and "
        "normalised by the weights' sum, over the depths 1..k (repro_eval's depth, 1000 "
        "there; past a ranking's end its set stops growing). Rankings in trec_eval's "
        "order, no tie groups (repro_eval's break_ties).",
    ),
    Metric(
        "jaccard",
        "Jaccard similarity of the run's and the reference's top-k document sets",
        _needs_reference,
        binary=False,
        reads=_READS,
        latex=r"\frac{|A_{:k} \cap B_{:k}|}{|A_{:k} \cup B_{:k}|}",
        formula="The documents both top-k lists hold over the documents either holds.",
    ),
    Metric(
        "overlap",
        "share of the k positions whose documents both top-k lists hold",
        _needs_reference,
        cutoff="required",
        binary=False,
        reads=_READS,
        latex=r"\frac{|A_{:k} \cap B_{:k}|}{k}",
        formula="The documents both top-k lists hold, over k (not over the lists' sizes: "
        "a list shorter than k lowers it).",
    ),
    Metric(
        "kendall_tau",
        "Kendall's tau-b between the run's and the reference's orders of the shared documents",
        _needs_reference,
        binary=False,
        reads=_READS,
        matches={"scipy": "stats.kendalltau (tau-b): equal to 1e-12 (tests/test_agreement.py)"},
        latex=r"\frac{n_c - n_d}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}",
        formula="Kendall's tau-b over the documents both top-k lists hold (the others are "
        "left out): concordant minus discordant pairs over the square root of the pairs "
        "untied in each ranking; equal scores are ties (@k keeps a tie group crossing "
        "position k whole). Null with fewer than two shared "
        "documents or when one side ties them all (scipy's nan), left out of the mean.",
    ),
    Metric(
        "tau_ap",
        "Yilmaz et al.'s AP rank correlation of the run against the reference as the truth",
        _needs_reference,
        params=(
            Param(
                "ties",
                "a",
                ("a", "b"),
                "Urbano & Marrero's treatment of tied scores: a (the reference is the "
                "truth, without ties; the run's ties averaged over their orders), b (ties "
                "on both sides; symmetric: the mean of the two directions)",
            ),
        ),
        binary=False,
        reads=_READS,
        matches={
            "trectools": "misc.get_correlation(reference, run, 'tau_ap'): equal to 1e-12 "
            "without ties (tests/test_agreement.py)",
            "ircor": "tauAP_a(reference, run) and tauAP_b (julian-urbano/ircor, R): the "
            "worked values of tests/test_agreement_round18.py",
        },
        latex=(r"\frac{2}{N-1}\sum_{i=2}^{N} \frac{C(i)}{i-1} - 1"),
        formula="Over the N documents both top-k lists hold, in the run's order: C(i) is "
        "the number of documents above position i that the reference also ranks above "
        "the document at i. Not symmetric: the reference is the truth. Equal scores are "
        "tie groups, never broken by document id (Urbano & Marrero, ICTIR 2017): with "
        "ties='a' (the default) the run's ties are averaged over their orders (a run that "
        "ties all N scores 0, the expected value) and a reference that ties shared "
        "documents gives null (the truth has no ties); ties='b' reads ties on both sides "
        "and is the mean of the two directions (null where either side ties all N). Null "
        "for N < 2.",
    ),
    Metric(
        "intersection",
        "RecTools' Intersection: share of the run's top k the reference's top k also holds",
        _needs_reference,
        cutoff="required",
        params=(
            Param(
                "ref_k",
                None,
                doc="the reference's cutoff (RecTools' ref_k); by default the request's k",
                check=_ref_k,  # type: ignore[arg-type]
            ),
        ),
        binary=False,
        # an overlap with another model's lists, not a quality: neither way is better
        higher_is_better=None,
        reads=_READS,
        matches={
            "rectools": "Intersection(k, ref_k), per user and mean, to 1e-9, with "
            "unjudged='zero' and unretrieved='drop' (tests/test_rectools_more.py)"
        },
        latex=r"\frac{|A_{:k} \cap B_{:k'}|}{|A_{:k}|}",
        formula="The run's documents ranked <= k (by score: its first k) that the "
        "reference ranks <= ref_k (k by default), over the run's documents ranked <= k; "
        "a query with none of its documents ranked <= k has no value (left out of the "
        "mean). RecTools' users are the run's: a query the reference lacks scores 0 "
        "(unjudged='zero'; the route's default 'drop' leaves it out) and one the run "
        "lacks has no value (unretrieved='drop'; the default 'zero' scores it 0). A "
        "similarity to another model, not a quality (RecTools reads it as how far a new "
        "model strays from the current one): neither a higher nor a lower value is "
        "better (higher_is_better=None: system_agreement orders systems by it only as "
        "told, higher_is_better=).",
    ),
    Metric(
        "unexpectedness",
        "RePlay's Unexpectedness: share of the k positions the reference's top k lacks",
        _needs_reference,
        cutoff="required",
        binary=False,
        # 1 - overlap@k against another model's lists: overlap@k reads the reference as
        # the truth (higher is better), so this complement of it cannot be better higher
        # too; as intersection, a distance from another model, not a quality
        higher_is_better=None,
        reads=_READS,
        matches={
            "replay": "Unexpectedness(k) (RePlay 0.22, a side environment), per user and "
            "mean, to 1e-9, with unjudged='zero' and unretrieved='drop' "
            "(tests/test_rectools_more.py)"
        },
        latex=r"1 - \frac{|A_{:k} \cap B_{:k}|}{k}",
        formula="1 - overlap@k: one minus the documents both top-k lists hold over k (a "
        "list shorter than k raises it). RePlay's users are the run's: a query the "
        "reference lacks scores 0 there as here (unjudged='zero'; the route's default "
        "'drop' leaves it out) and one the run lacks has no value (unretrieved='drop'). "
        "How far the run strays from another model, as intersection: neither a higher "
        "nor a lower value is better (higher_is_better=None; overlap@k, whose complement "
        "it is, reads the reference as the truth, higher is better), so system_agreement "
        "orders systems by it only as told (higher_is_better=).",
    ),
    Metric(
        "ktu",
        "repro_eval's Kendall's tau Union of the run's and the reference's top-k lists",
        _needs_reference,
        binary=False,
        reads=_READS,
        matches={
            "repro_eval": "measure.document_order._KTU (trim_thresh=k): equal to 1e-12 "
            "(tests/test_agreement.py)"
        },
        latex=r"\tau_b\big((u(a_i))_i, (u(b_i))_i\big)",
        formula="u(x) is a document's position in the sorted union of both top-k lists; "
        "tau-b of the two position sequences, the i-th document of the run paired with "
        "the i-th of the reference (repro_eval's KTU). Lists of unequal length are "
        "compared over the shorter one's positions (repro_eval raises). Null with fewer "
        "than two positions to pair (an empty or one-document ranking on either side), "
        "left out of the mean.",
    ),
)
