"""plot_ci of a frame without ``higher_is_better`` reads the metric's declared
direction: it took every such metric as higher-is-better (an rmse delta's axis said
nothing of its direction, where a frame with the column said "lower is better")."""

from __future__ import annotations

import re

import polars as pl
import pytest

from polars_irmetrics.comparison.plot import plot_ci
from polars_irmetrics.errors import ColumnNotFoundError


def _result(metric: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "metric": [metric],
            "system": ["b"],
            "baseline": ["a"],
            "delta": [0.1],
            "ci_low": [0.02],
            "ci_high": [0.2],
        }
    )


@pytest.mark.parametrize(
    ("metric", "label"),
    [
        ("rmse", "delta of rmse (lower is better)"),
        ("ee_loss", "delta of ee_loss (lower is better)"),
        ("rbo(kind='res')@4", "delta of rbo(kind='res')@4 (no better direction)"),
        ("num_ret", "delta of num_ret (no better direction)"),
        ("map", "delta of map"),
    ],
)
def test_the_declared_direction_labels_the_axis(metric: str, label: str) -> None:
    assert plot_ci(_result(metric)).axes[0].get_xlabel() == label
    # the same as the frame with the column compare gives
    higher = {"rmse": False, "ee_loss": False, "num_ret": None, "map": True}.get(metric)
    given = _result(metric).with_columns(pl.lit(higher).alias("higher_is_better"))
    assert plot_ci(given).axes[0].get_xlabel() == label


def test_a_name_without_a_direction_to_read_is_refused() -> None:
    message = (
        "column 'higher_is_better' is not in the frame and 'my_score' is not a metric name "
        "whose direction could be read: pass the result of irm.compare, or add the column "
        "(True where higher is better, False where lower is, null for neither)"
    )
    with pytest.raises(ColumnNotFoundError, match=re.escape(message)):
        plot_ci(_result("my_score"))
    # with the column, any name
    given = _result("my_score").with_columns(higher_is_better=pl.lit(False))
    assert plot_ci(given).axes[0].get_xlabel() == "delta of my_score (lower is better)"
