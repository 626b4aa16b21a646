"""Whatever reads "better" reads the metric's declared direction
(``Metric.higher_is_better``): each metric added with the fairness, recommender-library
and off-policy wings, held to the reading of the peer that defines it. ``intersection``
(RecTools: the overlap with a reference model's top k) is a similarity to another model,
not a quality: neither way is better, as for the counts; RePlay's ``unexpectedness``
(``1 - overlap@k`` against a base model) is the distance from one: no direction either."""

from __future__ import annotations

import pytest

import polars_irmetrics as irm
from polars_irmetrics.metrics import (
    AGREEMENT_METRICS,
    ELLIOT_METRICS,
    FAIRNESS_METRICS,
    MAD_METRICS,
    OPE_METRICS,
    PROPENSITY_METRICS,
    RECTOOLS_METRICS,
    REPLAY_METRICS,
)

#: (metric, direction, the peer's reading that fixes it)
DIRECTIONS: list[tuple[str, bool | None, str]] = [
    # expeval (Diaz et al. 2020): EE-L is a loss, EE-D a disparity, EE-R a relevance
    ("ee_loss", False, "expeval: the distance to the ideal exposure, a loss"),
    ("ee_disparity", False, "expeval: the exposure's inequality"),
    ("ee_relevance", True, "expeval: the exposure relevant documents get"),
    ("awrf", True, "TREC Fair 2022: 1 - the distance to the target, 1 is fair"),
    ("awrf_ndcg", True, "TREC Fair 2022: the task score, awrf times nDCG"),
    ("rnd", False, "Yang & Stoyanovich: a normalised difference, 0 is fair"),
    ("rkl", False, "Yang & Stoyanovich: a KL divergence, 0 is fair"),
    ("rrd", False, "Yang & Stoyanovich: a ratio difference, 0 is fair"),
    # Elliot: popularity bias (lower is less biased) and novelty
    ("pop_rsp", False, "Elliot: the spread of the popular/long-tail shares"),
    ("pop_reo", False, "Elliot: the spread of the true-positive rates"),
    ("aclt", True, "Elliot: long-tail items recommended"),
    ("epc", True, "Elliot: expected popularity complement (novelty)"),
    ("efd", True, "Elliot: expected free discovery (novelty)"),
    ("item_mad", False, "Elliot: ItemMAD, the clusters' spread, 0 is fair"),
    ("user_mad", False, "Elliot: UserMAD, the clusters' spread, 0 is fair"),
    # RecTools: accuracy and data quality, higher is better
    ("f1_beta", True, "RecTools: F1Beta"),
    ("reco_accuracy", True, "RecTools: Accuracy"),
    ("mcc", True, "RecTools: MCC"),
    ("partial_auc", True, "RecTools: PartialAUC"),
    ("pap", True, "RecTools: PAP"),
    ("covered_users", True, "RecTools: CoveredUsers, the users with a hit"),
    ("sufficient_reco", True, "RecTools: SufficientReco, full lists"),
    ("unrepeated_reco", True, "RecTools: UnrepeatedReco, lists without repeats"),
    ("intersection", None, "RecTools: Intersection, the overlap with another model"),
    # RePlay
    ("surprisal", True, "RePlay: Surprisal, higher is more surprising"),
    ("categorical_diversity", True, "RePlay: CategoricalDiversity"),
    # 1 - overlap@k, whose reference is the truth: a distance from another model
    ("unexpectedness", None, "RePlay: Unexpectedness, how far from a base model's lists"),
    # propensity-scored metrics (extreme classification): accuracy
    ("ps_precision", True, "pyxclib: psp@k"),
    ("ps_ndcg", True, "pyxclib: psndcg@k"),
    # obp: each estimator estimates the policy's value, the expected reward
    *(
        (name, True, "obp: the estimated policy value")
        for name in (
            "ips",
            "snips",
            "dm",
            "dr",
            "sndr",
            "switch_dr",
            "dr_os",
            "sg_ips",
            "sg_dr",
            "slate_ips",
            "slate_iips",
            "slate_rips",
            "slate_snips",
            "slate_sniips",
            "slate_snrips",
            "cascade_dr",
        )
    ),
]


@pytest.mark.parametrize(("name", "direction", "why"), DIRECTIONS, ids=[d[0] for d in DIRECTIONS])
def test_direction_is_the_peers(name: str, direction: bool | None, why: str) -> None:
    assert irm.get_metric(name).higher_is_better is direction, why


def test_every_metric_of_the_new_wings_has_its_direction_held() -> None:
    """No metric of these modules escapes the table above."""
    held = {name for name, _, _ in DIRECTIONS}
    added = [
        FAIRNESS_METRICS,
        ELLIOT_METRICS,
        MAD_METRICS,
        OPE_METRICS,
        PROPENSITY_METRICS,
        RECTOOLS_METRICS,
        REPLAY_METRICS,
    ]
    names = {m.name for metrics in added for m in _metrics(metrics)}
    names |= {"intersection", "unexpectedness"} & {m.name for m in _metrics(AGREEMENT_METRICS)}
    assert names - held == set()


def _metrics(metrics: object) -> list[irm.Metric]:
    values = metrics.values() if isinstance(metrics, dict) else metrics
    return list(values)  # type: ignore[call-overload]
