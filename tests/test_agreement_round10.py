"""Round 10 of the rank similarities' plots, ``reproducibility`` and ``system_agreement``.

1. ``reproducibility`` reads numpy's numbers as ``cutoff=`` and ``p=`` (they were
   refused as no depth and no persistence), as ``irm.evaluate`` reads ``depth=``.
2. A system named like the query-id column is refused by name before the pivot (polars'
   ``DuplicateError`` reached the caller), by ``system_agreement`` and ``plot_swaps``.
3. ``plot_swaps`` reads the directions as ``system_agreement`` does (one function): ``b``'s
   column of ``a``'s name takes ``higher_is_better``.
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


def _titles(figure: Any) -> list[str]:
    return [panel.get_title() for panel in figure.axes]


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


# 3. plot_swaps reads the directions as system_agreement does

VALUE_A = pl.DataFrame(
    {
        "system": ["x", "y", "z"] * 2,
        "query_id": ["q1"] * 3 + ["q2"] * 3,
        "value": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3],
    }
)
VALUE_B = VALUE_A.with_columns(pl.Series("value", [0.2, 0.1, 0.3, 0.2, 0.1, 0.3]))


def test_plot_swaps_b_inherits_higher_is_better() -> None:
    agreement = irm.system_agreement(VALUE_A, VALUE_B, higher_is_better=False)
    figure = plot.plot_swaps(VALUE_A, VALUE_B, higher_is_better=False)
    swaps = int(agreement["swaps"][0])
    assert swaps == 1
    assert _titles(figure) == [f"system orderings: {swaps} of 3 pairs swapped"]
    # lower is better: the lowest mean on top (height 0), x in a and y in b
    texts = [(text.get_text(), text.get_position()) for text in figure.axes[0].texts]
    left = {name: y for name, (x, y) in texts if x < 0}
    right = {name: y for name, (x, y) in texts if x > 0}
    assert (left, right) == ({"x": 0, "y": 1, "z": 2}, {"y": 0, "x": 1, "z": 2})


def test_plot_swaps_value_without_direction_still_refused() -> None:
    # the best system is drawn on top: a column of no known direction needs one
    message = (
        "column 'value' of a names no metric (unknown metric 'value'. Did you mean: mae, auc? See "
        "irm.list_metrics() for every metric and its aliases.), so which way is better "
        "is unknown: say it with higher_is_better=True (higher values are better) or "
        "higher_is_better=False"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_swaps(VALUE_A, VALUE_B)
