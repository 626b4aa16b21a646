"""Fusion, round 17: ``optimize_fusion``'s grid refuses a fused score beyond float64's
range, as ``fuse`` refuses it at the same parameters, naming the grid point. Finite
scores whose weighted sum (times sqrt(count) for ``mixed``, times the count of runs
for ``wmnz`` and ``gmnz``) overflows were ranked as infinite, tied with every other such
document, and the grid's means read those ties in silence."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

# d1: 1.5e308 in both runs; d2: 1.4e308 and 1.6e308; the judged d2 relevant
IDS = {"query_id": ["q"] * 3, "doc_id": ["d1", "d2", "d3"]}
A = pl.DataFrame({**IDS, "score": [1.5e308, 1.4e308, 1.0]})
B = A.with_columns(score=pl.Series([1.5e308, 1.6e308, 1.0]))
QRELS = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["d2", "d3"], "relevance": [1, 0]})


def _message(method: str, at: str) -> str:
    return (
        f"the fused score of query 'q', document 'd1' is inf in {method!r} at {at} (a point "
        "of the grid): the runs' scores are finite, but their combination is beyond "
        "float64's range (about 1.8e308), so such documents would tie; divide the scores by "
        "a large number first, e.g. pl.col('score') / 1e300, or pass norm='max'"
    )


CASES = [
    # the grid's first point: weights [0, 1]; mixed: (0 + 1.5e308) * sqrt(2) = 2.1e308
    ("mixed", {}, "weights=[0.0, 1.0]", {"weights": [0.0, 1.0]}),
    # wmnz: (1.5e308 + 1.5e308) * (0 + 1) overflows
    ("wmnz", {}, "weights=[0.0, 1.0]", {"weights": [0.0, 1.0]}),
    # gmnz: the sum 3e308 overflows at every gamma
    ("gmnz", {}, "gamma=0.01", {"gamma": 0.01}),
    ("mixed", {"buckets": 2}, "weights=[0.0, 1.0]", {"weights": [0.0, 1.0]}),
]


@pytest.mark.parametrize(("method", "options", "at", "params"), CASES)
def test_the_grid_refuses_an_infinite_fused_score_as_fuse_does(
    method: str, options: dict[str, Any], at: str, params: dict[str, Any]
) -> None:
    runs = {"a": A, "b": B}
    with pytest.raises(InvalidValueError) as caught:
        irm.optimize_fusion(runs, "ndcg@3", qrels=QRELS, method=method, norm=None, **options)
    assert str(caught.value) == _message(method, at)
    with pytest.raises(InvalidValueError) as fused:
        irm.fuse(runs, method=method, **params)
    assert str(fused.value) == _message(method, at).replace(f" at {at} (a point of the grid)", "")


def test_a_grid_whose_sums_are_finite_is_read_as_before() -> None:
    # wsum's weighted sums stay below 1.6e308: at weights [w, 1 - w], d2 (1.4e308 w +
    # 1.6e308 (1 - w)) leads d1 (1.5e308) while w < 0.5, and they tie at 0.5, where the
    # later document id leads (d2): ndcg@3 1 up to w = 0.5, then 1 / log2(3) = 0.6309
    grid = irm.optimize_fusion(
        {"a": A, "b": B}, "ndcg@3", qrels=QRELS, method="wsum", norm=None, return_grid=True
    )[1]
    assert grid["ndcg@3"].to_list() == pytest.approx([1.0] * 6 + [0.6309297535714574] * 5)
