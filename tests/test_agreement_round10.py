"""Round 10 of the rank similarities' plots, ``reproducibility`` and ``system_agreement``.

1. ``reproducibility`` reads numpy's numbers as ``cutoff=`` and ``p=`` (they were
   refused as no depth and no persistence), as ``irm.evaluate`` reads ``depth=``.
2. A system named like the query-id column is refused by name before the pivot (polars'
   ``DuplicateError`` reached the caller), by ``system_agreement`` and ``plot_swaps``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.errors import InvalidValueError

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


# 2. a system named like the query-id column

_RNG = np.random.default_rng(1)
CLASH = pl.DataFrame(
    {
        "system": np.repeat(["query_id", "b", "c"], 4),
        "query_id": np.tile(np.arange(4), 3),
        "map": _RNG.random(12),
    }
)
CLASH_MESSAGE = (
    "system 'query_id' of a is named like its query-id column; rename that system, e.g. "
    "pl.col('system').replace('query_id', 'query_id_system')"
)
TOPIC = CLASH.rename({"query_id": "topic"}).with_columns(
    pl.col("system").replace("query_id", "topic")
)
CLASHES: list[tuple[str, Callable[[], Any], str]] = [
    ("system_agreement", lambda: irm.system_agreement(CLASH, CLASH), CLASH_MESSAGE),
    ("plot_swaps", lambda: plot.plot_swaps(CLASH, CLASH), CLASH_MESSAGE),
    (
        "clash in b alone",
        lambda: irm.system_agreement(
            CLASH.with_columns(pl.col("system").replace("query_id", "a")), CLASH
        ),
        CLASH_MESSAGE.replace("of a", "of b"),
    ),
    (
        "query_id= named",
        lambda: irm.system_agreement(TOPIC, TOPIC, query_id="topic"),
        "system 'topic' of a is named like its query-id column; rename that system, e.g. "
        "pl.col('system').replace('topic', 'topic_system')",
    ),
]


@pytest.mark.parametrize(
    ("call", "message"), [case[1:] for case in CLASHES], ids=[case[0] for case in CLASHES]
)
def test_system_named_like_the_query_id_column(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call()
