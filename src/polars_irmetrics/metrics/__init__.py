"""Every metric, declared once: its formula, parameters, aliases and conventions.

One module per family; each declares a tuple of :class:`~polars_irmetrics.metrics.spec.Metric`
and this package joins them into :data:`METRICS`, which the registry reads:

* :mod:`.core`: precision, recall, F1, R-precision, hit rate, MRR, MAP, nDCG, DCG,
  IDCG, CG, bpref and the counts.
* :mod:`.beyond`: metrics trec_eval lacks: ERR, RBP and its residual, ARHR, MAR,
  FCP, Judged.
* :mod:`.trec`: the rest of trec_eval's catalogue: gm_map, gm_bpref, iprec_at_recall,
  11pt_avg, relative_P, Rprec_mult, infAP, set_map, ndcg_rel, Rndcg, binG, G,
  trec_eval's rbp and rbp_resid, unj, utility, num_nonrel_judged_ret.
* :mod:`.online`: click metrics of an impression log (``reads=("run", "clicks")``):
  CTR, session CTR, clicks per session, abandonment, click MRR, click positions, time
  to first click, satisfied-click rate, conversion rate, click nDCG and precision.
* :mod:`.recsys`: beyond accuracy for recommenders: catalogue coverage, distributional
  coverage, Gini index, novelty, intra-list diversity, serendipity, popularity bias.
  Their formulas describe a whole recommendation table (:mod:`.collection`), not one
  query.
* :mod:`.preference`: trec_eval's preference measures (``reads=("run", "prefs")``:
  prefs_simp, prefs_pair, prefs_avgjg, ...) and judgment-group measures
  (``reads=("run", "judgment_groups")``: map_avgjg, P_avgjg, Rprec_mult_avgjg),
  computed by :func:`polars_irmetrics.evaluate_prefs` and
  :func:`polars_irmetrics.evaluate_jg`.
* :mod:`.prediction`: prediction quality of a click or rating model
  (``reads=("predictions",)``: a label and a prediction per row): AUC, PR AUC, group
  AUC, log loss, normalised entropy, Brier score, calibration, ECE, RMSE, MAE, MSE, R²
  and explained variance, computed by :func:`polars_irmetrics.evaluate` with
  ``label=`` and ``prediction=`` and by their expression functions.

* :mod:`.rectools`: RecTools' classification metrics over recommendations: f1_beta,
  reco_accuracy and mcc (the last two read the catalogue, ``interactions=``).
* :mod:`.listwise`: cornac's ``ncrr`` and RePlay's ``rocauc`` (its ``RocAuc@K``).
* :mod:`.neighbors`: the recall of approximate nearest neighbours against an exact run
  (``reads=("run", "neighbors")``: ``neighbor_recall``, ``neighbor_recall_rel``),
  computed by ``irm.evaluate(approx_run, metrics, neighbors=exact_run)``.

* :mod:`.ope`: off-policy estimators (``reads=("run", "policy"[, "reward_model"])``:
  ``ips``, ``snips``, ``dm``, ``dr``, ``sndr``, ``switch_dr``, ``dr_os``, ``sg_ips``,
  ``sg_dr``), computed by ``irm.evaluate(log, metrics, policy=..., reward_model=...)``.
* :mod:`.agreement`: rank similarity between a run and a reference run
  (``reads=("run", "reference")``: ``rbo``, ``rbo_repro_eval``, ``jaccard``, ``overlap``,
  ``kendall_tau``, ``tau_ap``, ``ktu``), computed by ``irm.evaluate(run, metrics,
  reference=other_run)``.
* :mod:`.propensity`: propensity-scored ``ps_precision@k`` and ``ps_ndcg@k`` (pyxclib's),
  ``reads=("run", "judgments", "propensities")``, computed by ``irm.evaluate(run,
  metrics, qrels=..., propensities=...)``.

* :mod:`.fairness`: expected exposure of a (stochastic) ranking policy
  (``reads=("run", "judgments", "groups")``, the groups optional: ``ee_loss``,
  ``ee_disparity``, ``ee_relevance``), computed by ``irm.evaluate(run, metrics,
  qrels=qrels, groups=doc_groups)``.

Each formula is one polars aggregation over the judged rows of one query (see
:class:`polars_irmetrics.metrics.scope.Scope`); shared building blocks live in
:mod:`._common`.
"""

from __future__ import annotations

from polars_irmetrics.metrics.agreement import AGREEMENT_METRICS
from polars_irmetrics.metrics.beyond import BEYOND_METRICS
from polars_irmetrics.metrics.core import CORE_METRICS
from polars_irmetrics.metrics.elliot import ELLIOT_METRICS
from polars_irmetrics.metrics.fairness import FAIRNESS_METRICS
from polars_irmetrics.metrics.listwise import LISTWISE_METRICS
from polars_irmetrics.metrics.mad import MAD_METRICS
from polars_irmetrics.metrics.neighbors import NEIGHBOR_METRICS
from polars_irmetrics.metrics.online import ONLINE_METRICS
from polars_irmetrics.metrics.ope import OPE_METRICS
from polars_irmetrics.metrics.prediction import PREDICTION_METRICS
from polars_irmetrics.metrics.preference import PREFERENCE_METRICS
from polars_irmetrics.metrics.propensity import PROPENSITY_METRICS
from polars_irmetrics.metrics.recsys import RECSYS_METRICS
from polars_irmetrics.metrics.rectools import RECTOOLS_METRICS
from polars_irmetrics.metrics.replay import REPLAY_METRICS
from polars_irmetrics.metrics.spec import Metric
from polars_irmetrics.metrics.trec import TREC_METRICS

__all__ = ["METRICS"]

METRICS: tuple[Metric, ...] = (
    *CORE_METRICS,
    *BEYOND_METRICS,
    *TREC_METRICS,
    *ONLINE_METRICS,
    *RECSYS_METRICS,
    *REPLAY_METRICS,  # the same family (their compute is recsys.collection_only)
    *PREFERENCE_METRICS,
    *PREDICTION_METRICS,
    *NEIGHBOR_METRICS,
    *OPE_METRICS,
    *AGREEMENT_METRICS,
    *RECTOOLS_METRICS,
    *LISTWISE_METRICS,
    *PROPENSITY_METRICS,
    *FAIRNESS_METRICS,
    *ELLIOT_METRICS,
    *MAD_METRICS,
)
