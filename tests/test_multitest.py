"""Multiple-testing corrections equal statsmodels' ``multipletests`` exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_irmetrics import InvalidValueError
from polars_irmetrics.stats.multitest import CORRECTIONS, adjust

from .helpers import multipletests

p_value = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, 1.0, 0.05, 1e-300])


def _equals_statsmodels(correction: str, values: list[float]) -> None:
    expected = multipletests(np.array(values), alpha=0.05, method=correction)[1]
    assert adjust(values, correction).tolist() == expected.tolist()  # type: ignore[arg-type]


@pytest.mark.parametrize("correction", [c for c in CORRECTIONS if c != "holm"])
@settings(max_examples=200, deadline=None)
@given(values=st.lists(p_value, min_size=1, max_size=40))
def test_equals_statsmodels(correction: str, values: list[float]) -> None:
    _equals_statsmodels(correction, values)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(p_value, min_size=1, max_size=40))
def test_holm_equals_statsmodels(values: list[float]) -> None:
    # apart: statsmodels' holm runs gc.collect() (0.4 s in a test process), which
    # helpers.multipletests makes a no-op, so holm gets its siblings' 200 examples
    _equals_statsmodels("holm", values)


def test_none_keeps_the_p_values() -> None:
    assert adjust([0.2, 0.01], None).tolist() == [0.2, 0.01]


def test_worked_example_holm_and_bh() -> None:
    # sorted: 0.01 x 3 = 0.03, 0.02 x 2 = 0.04, 0.03 x 1 = 0.03 -> raised to 0.04
    assert adjust([0.02, 0.03, 0.01], "holm").tolist() == [0.04, 0.04, 0.03]
    assert adjust([0.02, 0.03, 0.01], "bonferroni").tolist() == [0.06, 0.09, 0.03]
    assert adjust([0.02, 0.03, 0.01], "fdr_bh").tolist() == [0.03, 0.03, 0.03]


@pytest.mark.parametrize(
    ("values", "correction", "message"),
    [
        (
            [0.1],
            "sidak",
            "correction='sidak' is not a correction; choose 'bonferroni', 'holm', "
            "'holm-sidak', 'fdr_bh', 'fdr_by' or None",
        ),
        ([float("nan")], "holm", "p-value nan is not in [0, 1]"),
        ([1.5], "holm", "p-value 1.5 is not in [0, 1]"),
    ],
)
def test_bad_input(values: list[float], correction: str, message: str) -> None:
    with pytest.raises(InvalidValueError) as info:
        adjust(values, correction)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)
