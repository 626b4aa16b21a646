"""reproducibility, round 9: ER and ΔRI that are not numbers (a division by an original
mean improvement of 0, or by a baseline mean of 0) are kept as repro_eval gives them
(inf, nan) and now named in a warning, not left for the reader to find."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "a", "b"],
        "score": [2.0, 1.0, 2.0, 1.0],
    }
)  # P_1: q1 1, q2 0 -> 0.5
AGAIN = RUN.with_columns(pl.col("score").reverse().over("query_id"))  # P_1: 0, 1 -> 0.5
NONE = RUN.with_columns(doc_id=pl.Series(["x", "y", "x", "y"]))  # P_1 0


def _effects(out: pl.DataFrame) -> dict[str, float]:
    rows = out.filter(pl.col("measure").is_in(["er", "delta_ri"]))
    return dict(zip(rows["measure"], rows["value"], strict=True))


def test_er_of_an_original_without_improvement_warned() -> None:
    # the original advanced run equals its baseline (0.5 - 0.5 = 0): ER = 0 / 0
    message = (
        "metric 'P_1': er is nan (the original advanced run's mean equals its baseline's, "
        "0.5: no improvement to set the reproduced one against; read the reproduced runs' "
        "mean improvement itself)"
    )
    with pytest.warns(IrmWarning, match=re.escape(message)):
        out = irm.reproducibility(
            {"baseline": RUN, "advanced": RUN},
            {"baseline": AGAIN, "advanced": RUN},
            ["P_1"],
            qrels=QRELS,
        )
    values = _effects(out)
    assert math.isnan(values["er"])
    assert values["delta_ri"] == 0.0


# (the baselines retrieve no judged document: a CoverageWarning says so too)
@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
def test_delta_ri_of_baselines_scoring_zero_warned() -> None:
    message = "metric 'P_1': er is inf (the original advanced run's mean equals its baseline's"
    delta = (
        "delta_ri is nan (the original and the reproduced baselines' means are 0: a relative "
        "improvement divides by it; read the mean improvements themselves)"
    )
    with pytest.warns(IrmWarning, match=re.escape(delta)) as said:
        out = irm.reproducibility(
            {"baseline": NONE, "advanced": RUN},
            {"baseline": NONE, "advanced": AGAIN},
            ["P_1"],
            qrels=QRELS,
        )
    assert not any(message in str(w.message) for w in said)  # ER is 0.5 / 0.5 = 1
    values = _effects(out)
    assert values["er"] == 1.0
    assert math.isnan(values["delta_ri"])


def test_finite_effects_warn_nothing(recwarn: pytest.WarningsRecorder) -> None:
    better = RUN.with_columns(doc_id=pl.Series(["a", "x", "b", "x"]))  # P_1 1.0
    out = irm.reproducibility(
        {"baseline": RUN, "advanced": better},
        {"baseline": RUN, "advanced": better},
        ["P_1"],
        qrels=QRELS,
    )
    assert _effects(out) == {"er": 1.0, "delta_ri": 0.0}
    assert not [w for w in recwarn if issubclass(w.category, IrmWarning)]
