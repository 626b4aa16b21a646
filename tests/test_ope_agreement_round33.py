"""Round 33: the off-policy estimators and the ranking agreement against their references
(obp 0.5.7, Corsi & Urbano's rbo.py, ircor's tauAP_a/tauAP_b, scipy): the few
disagreements found, each on a tiny input worked by hand."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import warned


def _systems(means: dict[str, float], column: str = "ndcg") -> pl.DataFrame:
    """Two queries per system, each system's mean the given one."""
    names = list(means)
    return pl.DataFrame(
        {
            "system": [s for s in names for _ in range(2)],
            "query_id": [1, 2] * len(names),
            column: [means[s] + d for s in names for d in (0.125, -0.125)],
        }
    )


SPREAD = _systems({"x": 0.75, "y": 0.5, "z": 0.25})
FLAT = _systems({"x": 0.5, "y": 0.5, "z": 0.5})
TIED_A = _systems({"x": 0.75, "y": 0.75, "z": 0.25})

# (a, b, keywords, correlation, the warnings' starts)
TAU_AP: list[tuple[pl.DataFrame, pl.DataFrame, dict[str, Any], float | None, list[str]]] = [
    # ircor's tauAP_a(x = a's means, y = b's): b's one tie group (p 1, t 3) gives each
    # system W(1, 3) = (1/1 + 2/2) / (2 * 3) = 1/3, 1 in all: 2/(3-1) * 1 - 1 = 0, the
    # expected tau_AP over b's orders (tau_ap@k of a run tying every shared document);
    # null with a warning that b orders no system before
    (SPREAD, FLAT, {"method": "tau_ap"}, 0.0, []),
    # ties='b' reads b's side as its own direction: no document below b's first group
    (
        SPREAD,
        FLAT,
        {"method": "tau_ap", "ties": "b"},
        None,
        ["correlation is null: every system's mean 'ndcg' in b is 0.5 (3 systems)"],
    ),
    # a (the truth) tied and b constant: null for a's tie, and the warning names it
    (
        TIED_A,
        FLAT,
        {"method": "tau_ap"},
        None,
        ["correlation is null: systems 'x' and 'y' have the same mean 'ndcg' in a (0.75)"],
    ),
    # Kendall's tau-b of a constant side: scipy's nan, null
    (
        SPREAD,
        FLAT,
        {"method": "kendall"},
        None,
        ["correlation is null: every system's mean 'ndcg' in b is 0.5 (3 systems)"],
    ),
]


@pytest.mark.parametrize(("a", "b", "keywords", "correlation", "words"), TAU_AP)
def test_system_tau_ap_of_a_constant_b_is_ircors_zero(
    a: pl.DataFrame,
    b: pl.DataFrame,
    keywords: dict[str, Any],
    correlation: float | None,
    words: list[str],
) -> None:
    out, caught = warned(lambda: irm.system_agreement(a, b, **keywords))
    got = out["correlation"].item()
    if correlation is None:
        assert got is None
    else:
        assert got == pytest.approx(correlation, abs=1e-15)
    assert out["p_value"].item() is None
    assert len(caught) == len(words)
    for message, start in zip(caught, words, strict=True):
        assert message.startswith(start)


LOG = pl.DataFrame(
    {"round_id": [1, 2], "action": [0, 1], "reward": [1.0, 0.0], "pscore": [0.5, 0.5]}
)
POLICY = pl.DataFrame({"round_id": [1, 1, 2, 2], "action": [0, 1] * 2, "prob": [0.5] * 4})
MODEL = POLICY.select("round_id", "action", q_hat=pl.lit(0.5))


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("metric", "message"),
    [
        # obp's lambda_ of DoublyRobustWithShrinkage: inf leaves the weights as they are
        # (dr), not a threshold; the message said "inf: no threshold"
        (
            "dr_os(lambda=-1)",
            "metric 'dr_os(lambda=-1)': lambda must be a number >= 0 (inf: no shrinkage, "
            "dr's estimate), got -1",
        ),
        (
            "switch_dr(tau=nan)",
            "metric 'switch_dr(tau=nan)': tau must be a number >= 0 (inf: no threshold), got nan",
        ),
        (
            "sg_dr(lambda=1.5)",
            "metric 'sg_dr(lambda=1.5)': lambda must be a number in [0, 1], got 1.5",
        ),
    ],
)
def test_a_bad_ope_parameter_names_its_meaning(metric: str, message: str, lazy: bool) -> None:
    log = LOG.lazy() if lazy else LOG
    with pytest.raises(irm.errors.MetricParameterError) as caught:
        irm.evaluate(log, [metric], policy=POLICY, reward_model=MODEL)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("option", "hint"),
    [
        # obp's estimate_interval(alpha=0.05, n_bootstrap_samples=, random_state=) and
        # its estimators' lambda_ and estimated_pscore: refused, naming irm's spelling
        (
            "alpha",
            ": an interval is asked for by its confidence level, ci=1 - alpha (ci=0.95 for "
            "obp's alpha=0.05); the options are ",
        ),
        ("n_bootstrap_samples", ": obp's n_bootstrap_samples is n_bootstrap= here (with ci=);"),
        ("random_state", ": obp's random_state of the bootstrap is seed= here (with ci=);"),
        ("lambda_", ": obp's lambda_ is written in the estimator's name, e.g. 'ips(clip=10)', "),
        ("use_estimated_pscore", ": the propensities read are the log's column named by "),
    ],
)
def test_obps_names_are_refused_with_irms(option: str, hint: str) -> None:
    with pytest.raises(irm.errors.InvalidValueError) as caught:
        irm.evaluate(LOG, ["ips"], policy=POLICY, ci=0.95, **{option: 1})
    assert str(caught.value).startswith(f"unknown option {option}=...{hint}")


# obp's edge cases (obp 0.5's estimate_policy_value on these arrays; the first and
# last by hand): four rounds, three actions, the policy 0.5, 0.25, 0.25 in every round
# and the reward model 0.5, 0.25, 1.0 (dm 0.5625); logged (action, pscore): (0, 1.0),
# (1, 1e-12), (0, 0.5), (1, 0.25), so the weights are 0.5, 2.5e11, 1, 1, and action 2
# is never logged. "edge": rewards 1, 0, 1, 1 (ips (0.5 + 0 + 1 + 1) / 4 = 0.625);
# "zero": every reward 0; "one": the first round alone (dr 0.5625 + 0.5 (1 - 0.5)).
EDGE_METRICS = ["ips", "snips", "dm", "dr", "sndr", "switch_dr(tau=2)", "dr_os(lambda=1)"]
EDGE_METRICS.append("sg_dr(lambda=0.1)")
EDGE_CASES = {
    "edge": (
        [1.0, 0.0, 1.0, 1.0],
        4,
        [
            0.625,
            9.9999999999e-12,
            0.5625,
            -15624999999.0625,
            0.3125000000085,
            0.9375,
            0.76874999999975,
            0.3157894737067105,
        ],
    ),
    "zero": (
        [0.0] * 4,
        4,
        [
            0.0,
            0.0,
            0.5625,
            -15624999999.6875,
            0.3124999999985,
            0.3125,
            0.41874999999975,
            -0.3157894736617105,
        ],
    ),
    "one": (
        [1.0, 0.0, 1.0, 1.0],
        1,
        [0.5, 1.0, 0.5625, 0.8125, 1.0625, 0.8125, 0.7625, 0.825657894736842],
    ),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_obps_edge_cases(case: str) -> None:
    rewards, rounds, expected = EDGE_CASES[case]
    log = pl.DataFrame(
        {
            "round_id": [1, 2, 3, 4],
            "action": [0, 1, 0, 1],
            "reward": rewards,
            "pscore": [1.0, 1e-12, 0.5, 0.25],
        }
    ).head(rounds)
    keys = {"round_id": [r for r in range(1, 5) for _ in range(3)], "action": [0, 1, 2] * 4}
    policy = pl.DataFrame({**keys, "prob": [0.5, 0.25, 0.25] * 4})
    model = pl.DataFrame({**keys, "q_hat": [0.5, 0.25, 1.0] * 4})
    out, caught = warned(
        lambda: irm.evaluate(log, EDGE_METRICS, policy=policy, reward_model=model)
    )
    assert out.select(EDGE_METRICS).row(0) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    # action 2, which the policy takes, is never logged
    assert len(caught) == 1
    assert "never" in caught[0]
