"""Round 13 of the agreement and reproduction fixes.

1. ``system_agreement`` (and ``plot_swaps``, the same reading): ``b``'s column of
   ``a``'s name takes ``higher_is_better`` unless ``higher_is_better_b`` is given,
   whether or not the name is a metric's. A column named after a metric of a direction
   took that metric's own direction on ``b``'s side, so
   ``system_agreement(a, a, higher_is_better=False)`` of a column ``ndcg`` read ``a``
   lower-is-better and ``b`` higher-is-better: correlation -1 and every pair swapped.
2. ``reproducibility`` read the per-topic values of a metric with ``agg=`` (or
   ``NumRet``, a sum) and ignored the summary without a word; it is refused, as
   ``irm.compare`` and ``irm.optimize_fusion`` refuse it.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.agreement import orientation
from polars_irmetrics.errors import InvalidValueError, MetricParameterError

# ---------------------------------------------------- 1. b inherits a's stated direction


def _results(column: str) -> pl.DataFrame:
    """Three systems on two queries, x best, then y, then z, in ``column``."""
    return pl.DataFrame(
        {
            "system": ["x"] * 2 + ["y"] * 2 + ["z"] * 2,
            "query_id": ["q1", "q2"] * 3,
            column: [0.9, 0.8, 0.5, 0.4, 0.1, 0.2],
        }
    )


# (column_a, column_b, higher_is_better, higher_is_better_b, top, signs of a and b)
SIGNS: list[tuple[str, str, bool | None, bool | None, bool, tuple[float, float]]] = [
    # the same metric's name on both sides: b takes a's stated direction
    ("ndcg", "ndcg", False, None, False, (-1.0, -1.0)),
    ("ndcg", "ndcg", False, None, True, (-1.0, -1.0)),
    ("tau_ap", "tau_ap", False, None, True, (-1.0, -1.0)),
    ("logloss", "logloss", True, None, True, (1.0, 1.0)),
    ("num_ret", "num_ret", False, None, True, (-1.0, -1.0)),
    # nothing stated: each metric's declared direction
    ("logloss", "logloss", None, None, True, (-1.0, -1.0)),
    ("ndcg", "ndcg", None, None, True, (1.0, 1.0)),
    # b's own stated direction wins over a's, inherited or declared
    ("ndcg", "ndcg", False, True, False, (-1.0, 1.0)),
    ("ndcg", "ndcg", None, False, False, (1.0, -1.0)),
    ("logloss", "logloss", True, False, True, (1.0, -1.0)),
    # columns of other names: b keeps its metric's direction, or states its own
    ("logloss", "auc", True, None, False, (1.0, 1.0)),
    ("ndcg", "logloss", False, None, False, (-1.0, -1.0)),
    ("ndcg", "value", False, True, False, (-1.0, 1.0)),
    ("value", "ndcg", False, None, False, (-1.0, 1.0)),
    # a column of no known direction, the same on both sides: stated once
    ("value", "value", False, None, True, (-1.0, -1.0)),
]


@pytest.mark.parametrize(
    ("column_a", "column_b", "higher", "higher_b", "top", "signs"),
    SIGNS,
    ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{'top' if c[4] else 'any'}" for c in SIGNS],
)
def test_b_takes_the_direction_stated_for_a_column_of_its_name(
    column_a: str,
    column_b: str,
    higher: bool | None,
    higher_b: bool | None,
    top: bool,
    signs: tuple[float, float],
) -> None:
    assert orientation(column_a, column_b, higher, higher_b, top=top) == signs


@pytest.mark.parametrize("column", ["ndcg", "tau_ap", "logloss", "value"])
@pytest.mark.parametrize("method", ["kendall", "tau_ap", "spearman", "pearson"])
@pytest.mark.parametrize("higher", [True, False])
def test_one_result_against_itself_agrees_whichever_way_it_is_stated(
    column: str, method: str, higher: bool
) -> None:
    a = _results(column)
    out = irm.system_agreement(a, a, method, higher_is_better=higher)  # type: ignore[arg-type]
    assert out.select("correlation", "swaps").row(0) == (pytest.approx(1.0), 0)
    stated = irm.system_agreement(
        a,
        a,
        method,  # type: ignore[arg-type]
        higher_is_better=higher,
        higher_is_better_b=higher,
    )
    assert out.equals(stated)


def test_the_swap_plot_reads_the_inherited_direction_alike() -> None:
    pytest.importorskip("matplotlib")
    from polars_irmetrics.comparison import plot

    a = _results("ndcg")
    figure = plot.plot_swaps(a, a, higher_is_better=False)
    assert figure.axes[0].get_title() == "system orderings: 0 of 3 pairs swapped"


def test_a_column_of_another_name_still_needs_its_own_direction() -> None:
    message = (
        "column 'value' of b names no metric (unknown metric 'value'. Did you mean: mae, "
        "auc? See irm.list_metrics() for every metric and its aliases.), so which way is "
        "better is unknown: say it with higher_is_better_b=True (higher values are better) "
        "or higher_is_better_b=False"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(_results("ndcg"), _results("value"), higher_is_better=False)


# ------------------------------------------ 2. reproducibility refuses a metric's agg=


def _run(seed: int) -> pl.DataFrame:
    rows = [
        (f"q{q}", f"d{d}", float((seed * 7 + q * 3 + d * 5) % 11))
        for q in range(3)
        for d in range(6)
    ]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")


QRELS = pl.DataFrame(
    {
        "query_id": ["q0", "q0", "q1", "q1", "q2", "q2"],
        "doc_id": ["d0", "d3", "d1", "d4", "d2", "d5"],
        "relevance": [1, 2, 1, 1, 2, 1],
    }
)
ORIGINAL = {"baseline": _run(1), "advanced": _run(2)}
REPRODUCED = {"baseline": _run(3), "advanced": _run(4)}


def _summarizes(label: str, agg: str, plain: str) -> str:
    return (
        f"metric {label!r} summarizes its per-query values with agg={agg!r}, but "
        "irm.reproducibility compares the per-query values themselves, which agg= does "
        f"not change, so agg= would be ignored: drop agg= (e.g. {plain!r}), or take the "
        "summary from irm.evaluate"
    )


# (name, metrics, options, message)
SUMMARIES: list[tuple[str, Any, dict[str, Any], str]] = [
    (
        "agg",
        ["P(agg='std')@5"],
        {},
        _summarizes("P(agg='std')@5", "std", "precision@5"),
    ),
    (
        "agg beside a plain metric",
        ["map", "P(agg='std')@5"],
        {},
        _summarizes("P(agg='std')@5", "std", "precision@5"),
    ),
    ("one name", "P(agg='std')@5", {}, _summarizes("P(agg='std')@5", "std", "precision@5")),
    ("NumRet, a sum", ["NumRet"], {}, _summarizes("NumRet", "sum", "num_ret")),
    (
        "replicability",
        ["P(agg='std')@5"],
        {"qrels_reproduced": QRELS},
        _summarizes("P(agg='std')@5", "std", "precision@5"),
    ),
]


@pytest.mark.parametrize(
    ("name", "metrics", "options", "message"), SUMMARIES, ids=[c[0] for c in SUMMARIES]
)
def test_reproducibility_refuses_a_summary_it_would_ignore(
    name: str, metrics: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.reproducibility(ORIGINAL, REPRODUCED, metrics, qrels=QRELS, **options)


def test_reproducibility_of_the_plain_metric_is_unchanged() -> None:
    out = irm.reproducibility(ORIGINAL, REPRODUCED, ["P@5"], qrels=QRELS)
    assert out["metric"].drop_nulls().unique().to_list() == ["P@5"]
    assert out.height > 0
