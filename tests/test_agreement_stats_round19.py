"""Agreement and comparison statistics, round 19: nulls and untestable results said.

* :func:`~polars_irmetrics.system_agreement` left its correlation null (one result's
  system means all equal; ``tau_ap`` with ``ties='a'`` against tied means in ``a``)
  and Spearman's p-value of two systems null, in silence: an
  :class:`~polars_irmetrics.errors.IrmWarning` now names the cause and the fix.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]


def _systems(values: dict[str, list[float]], column: str = "ndcg") -> pl.DataFrame:
    rows = [(s, f"q{q}", v) for s, vs in values.items() for q, v in enumerate(vs)]
    return pl.DataFrame(rows, schema=["system", "query_id", column], orient="row")


# means: x 0.85, y 0.45, z 0.15 (0.9 and 0.8, 0.5 and 0.4, 0.1 and 0.2)
SPREAD = _systems({"x": [0.9, 0.8], "y": [0.5, 0.4], "z": [0.1, 0.2]})
# x and y tie at 0.85
TIED = _systems({"x": [0.9, 0.8], "y": [0.9, 0.8], "z": [0.1, 0.2]})
# every mean 0.5
FLAT = _systems({"x": [0.5, 0.5], "y": [0.5, 0.5], "z": [0.5, 0.5]})

CONSTANT = (
    "correlation is null: every system's mean {column!r} in {side} is {value} (3 systems), "
    "so {side} orders no system and {method!r} has nothing to correlate; compare results "
    "that separate the systems (another metric, more queries or judgments)"
)
TRUTH_TIED = (
    "correlation is null: systems 'x' and 'y' have the same mean 'ndcg' in a (0.85), and "
    "method='tau_ap' with ties='a' (the default) reads a as the truth, which has no ties; "
    "pass ties='b', which reads ties on both sides"
)

# (a, b, keywords, correlation, p_value, the warning or None)
AGREEMENT: list[tuple[pl.DataFrame, pl.DataFrame, dict[str, Any], Any, Any, str | None]] = [
    *[
        (
            SPREAD,
            FLAT,
            {"method": method},
            None,
            None,
            CONSTANT.format(column="ndcg", side="b", value="0.5", method=method),
        )
        for method in ("kendall", "tau_ap", "spearman", "pearson")
    ],
    # a's means all equal; logloss is lower-is-better: the mean shown as read, 0.5
    (
        _systems({"x": [0.5, 0.5], "y": [0.5, 0.5], "z": [0.5, 0.5]}, "logloss"),
        SPREAD,
        {"metric": "logloss", "metric_b": "ndcg"},
        None,
        None,
        CONSTANT.format(column="logloss", side="a", value="0.5", method="kendall"),
    ),
    (TIED, SPREAD, {"method": "tau_ap"}, None, None, TRUTH_TIED),
    # ties='b' reads a's tie. C(i), the systems above i on both sides (strictly): x 0,
    # y 0 (x ties it in a), z 2. b's direction: first ranks x 1, y 2, z 3, so
    # 2/2 (0/1 + 2/2) - 1 = 0; a's: x and y both first, z 3: 2/1 (2/2) - 1 = 1;
    # the mean (0 + 1) / 2 = 0.5
    (TIED, SPREAD, {"method": "tau_ap", "ties": "b"}, 0.5, None, None),
    # tau_ap has no p-value at all: null without a warning where the correlation stands.
    # b's x and y tied (group p 1, t 2; a untied): W(1, 2) = (1/4)(1/1) each, 0.5 in
    # all; z: p 3, C 2, S(3, 1) = 1/2: 1; 2/2 (0.5 + 1) - 1 = 0.5
    (SPREAD, TIED, {"method": "tau_ap"}, pytest.approx(0.5), None, None),
]


@pytest.mark.parametrize(("a", "b", "keywords", "correlation", "p_value", "expected"), AGREEMENT)
def test_system_agreement_null_is_warned(
    a: pl.DataFrame,
    b: pl.DataFrame,
    keywords: dict[str, Any],
    correlation: Any,
    p_value: Any,
    expected: str | None,
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.system_agreement(a, b, **keywords).row(0, named=True)
    assert out["correlation"] == correlation
    assert out["p_value"] == p_value
    assert _said(caught) == ([] if expected is None else [expected])
    if expected is not None:  # shown at the caller's line, not the library's
        assert caught[0].filename == __file__


def test_spearman_of_two_systems_has_no_p_value_and_says_so() -> None:
    # two systems: rho = 1 (scipy's 0.9999999999999999), and scipy's p-value NaN
    two = SPREAD.filter(pl.col("system") != "z")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.system_agreement(two, two, "spearman").row(0, named=True)
    assert out["correlation"] == pytest.approx(1.0, abs=1e-15)
    assert out["p_value"] is None
    assert _said(caught) == [
        "p_value is null: scipy's spearman test of 2 systems gives no p-value (NaN); the "
        "correlation stands, but a test needs three systems or more"
    ]
    # kendall's and pearson's of two systems have scipy's p-value (1.0): nothing to say
    for method in ("kendall", "pearson"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = irm.system_agreement(two, two, method).row(0, named=True)
        assert (out["correlation"], out["p_value"]) == (pytest.approx(1.0), 1.0)
        assert _said(caught) == []
