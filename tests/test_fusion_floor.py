"""``norm='max'`` on a query whose top score is below ranx's ``1e-9`` floor.

``max`` divides a run's scores for a query by the top score, floored at ``1e-9`` as
ranx does (:mod:`polars_irmetrics.fusion.norms`). Where the top score is 0 or below
(distances, log-probabilities) the scores become ``s / 1e-9``, of order ``-1e9``, and
swamp every other run: the values stay ranx's, and :func:`irm.fuse` and
:func:`irm.optimize_fusion` name the runs in an :class:`~polars_irmetrics.errors.IrmWarning`
(the other normalisations' floors only meet a query whose scores all tie, which map
to 0: never warned of).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning
from tests.fusion_data import assert_same_scores, our_scores, ranx_scores, to_ranx_run

ranx = pytest.importorskip("ranx")


def _run(scores: list[float]) -> pl.DataFrame:
    """Two queries of two documents: ``q1``'s scores, then ``q2``'s."""
    return pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["d1", "d2", "d1", "d3"],
            "score": scores,
        }
    )


#: Run 'dist' scores q2 by negative distances (top score -1), q1 by positive ones.
DIST = _run([2.0, 1.0, -1.0, -2.0])
SIM = _run([0.9, 0.8, 0.5, 0.4])
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d3"], "relevance": [1, 1]})


def _message(named: str) -> str:
    return (
        "norm='max' divides each run's scores for a query by its top score, floored at "
        f"1e-09 as ranx does; {named} scored queries whose top score is below 1e-09, so "
        "those scores were divided by 1e-09: a top score of 0 or below (distances, "
        "log-probabilities) makes them of order -1e9, which swamps every other run in the "
        "fusion. Use norm='min-max' (or 'zmuv') for scores that can be 0 or negative."
    )


def _fuse(runs: dict[str, Any], norm: str, **kw: Any) -> Any:
    out = irm.fuse(runs, "sum", norm=norm, **kw)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _optimize(runs: dict[str, Any], norm: str, **kw: Any) -> Any:
    return irm.optimize_fusion(runs, "ndcg", qrels=QRELS, method="wsum", norm=norm, **kw)


CALLS: dict[str, Callable[..., Any]] = {
    "fuse": _fuse,
    "fuse lazy": lambda runs, norm: _fuse({k: v.lazy() for k, v in runs.items()}, norm),
    "fuse buckets": lambda runs, norm: _fuse(runs, norm, buckets=2),
    "optimize_fusion": _optimize,
    "optimize_fusion buckets": lambda runs, norm: _optimize(runs, norm, buckets=2),
}

CASES = [
    # runs, norm, the warning's runs (None: no warning)
    ({"dist": DIST, "sim": SIM}, "max", "run 'dist' (2 documents)"),
    # a top score of exactly 0, and a tiny positive one: both below the floor
    ({"a": _run([0.0, -1.0, 3.0, 1.0]), "b": _run([1e-12, 5e-13, 1.0, 0.5])}, "max",
     "run 'a' (2 documents), run 'b' (2 documents)"),
    ({"dist": DIST, "sim": SIM}, "min-max", None),
    ({"dist": DIST, "sim": SIM}, "zmuv", None),
    ({"dist": SIM, "sim": SIM}, "max", None),
    # all scores tie in a query: min-max's floor, 0 for each (not warned of)
    ({"a": _run([1.0, 1.0, -3.0, -3.0]), "b": SIM}, "min-max", None),
]  # fmt: skip


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize(("runs", "norm", "named"), CASES)
def test_max_below_the_floor_is_named(
    call: str, runs: dict[str, pl.DataFrame], norm: str, named: str | None
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CALLS[call](runs, norm)
    mine = [w for w in caught if issubclass(w.category, IrmWarning)]
    assert [str(w.message) for w in mine] == ([] if named is None else [_message(named)])
    assert all(w.category is IrmWarning for w in mine)


def test_the_values_stay_ranx() -> None:
    """The warning changes no value: the fused scores are ranx's (q2's of order -1e9)."""
    with pytest.warns(IrmWarning, match="norm='max'"):
        ours = irm.fuse({"dist": DIST, "sim": SIM}, "sum", norm="max")
    theirs = ranx.fuse(
        [to_ranx_run(DIST, "dist"), to_ranx_run(SIM, "sim")], norm="max", method="sum"
    )
    assert_same_scores(our_scores(ours), ranx_scores(theirs))
    # explicit arithmetic: d1 of q2 is -1 / 1e-9 + 0.5 / 0.5, d3 is -2 / 1e-9 + 0.4 / 0.5
    assert our_scores(ours)[("q2", "d1")] == -1.0 / 1e-9 + 1.0
    assert our_scores(ours)[("q2", "d3")] == -2.0 / 1e-9 + 0.8
