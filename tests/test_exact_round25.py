"""Float64's largest exact integer, round 25: one public constant.

``2**53`` was a private constant in four modules (fusion's order values, the TREC
reader's scores, the file readers' float ranks, the agreement table's integer
values); it is now :data:`polars_irmetrics.ground.validate.FLOAT64_EXACT`, read by all.
"""

from __future__ import annotations

import pytest

from polars_irmetrics.comparison import agreement
from polars_irmetrics.fusion import frame
from polars_irmetrics.ground.validate import FLOAT64_EXACT
from polars_irmetrics.io import files, trec
from polars_irmetrics.prediction import evaluate


def test_the_constant_is_float64s_largest_exact_integer() -> None:
    assert FLOAT64_EXACT == 2**53
    assert int(float(FLOAT64_EXACT - 1)) == FLOAT64_EXACT - 1  # every integer below: exact
    assert int(float(FLOAT64_EXACT + 1)) == FLOAT64_EXACT  # the next reads as it


@pytest.mark.parametrize("module", [frame, trec, files, agreement, evaluate], ids=str)
def test_no_module_keeps_a_private_copy(module: object) -> None:
    copies = [
        name
        for name, value in vars(module).items()
        if name.startswith("_") and isinstance(value, int | float) and value == 2**53
    ]
    assert copies == []
    assert vars(module)["FLOAT64_EXACT"] is FLOAT64_EXACT
