"""Round 10 of the rank similarities' plots, ``reproducibility`` and ``system_agreement``.

1. ``reproducibility`` reads numpy's numbers as ``cutoff=`` and ``p=`` (they were
   refused as no depth and no persistence), as ``irm.evaluate`` reads ``depth=``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm

# 1. numpy numbers as reproducibility's cutoff= and p=

QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "a", "b"],
        "score": [2.0, 1.0, 2.0, 1.0],
    }
)
AGAIN = RUN.with_columns(pl.col("score").reverse().over("query_id"))


@pytest.mark.parametrize(
    ("given", "plain"),
    [
        ({"cutoff": np.int64(10)}, {"cutoff": 10}),
        ({"cutoff": np.int32(10)}, {"cutoff": 10}),
        ({"p": np.float64(0.9)}, {"p": 0.9}),
        ({"p": np.float32(0.5)}, {"p": 0.5}),
    ],
)
def test_reproducibility_numpy_depth_options(given: dict[str, Any], plain: dict[str, Any]) -> None:
    def run(options: dict[str, Any]) -> pl.DataFrame:
        return irm.reproducibility(
            {"baseline": RUN}, {"baseline": AGAIN}, ["P_1"], qrels=QRELS, **options
        )

    assert run(given).equals(run(plain))


def test_reproducibility_numpy_cutoff_zero_refused() -> None:
    message = (
        "cutoff=0 is not a depth: it must be a whole number >= 1 (of the KTU and RBO of "
        "the document orders, repro_eval's RBO_DEPTH), e.g. cutoff=1000"
    )
    with pytest.raises(irm.errors.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.reproducibility(
            {"baseline": RUN}, {"baseline": AGAIN}, ["P_1"], qrels=QRELS, cutoff=np.int64(0)
        )
