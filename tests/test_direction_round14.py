"""Round 14: a direction, or a summary, read where it does not apply.

* ``irm.compare`` (``query_set='judged'``) warns where a judged query a system did not
  retrieve, scored as an empty ranking, is better than another system's list of it: the
  exposure measures too (``ee_disparity`` is 0 for no exposure, its best value), not the
  accuracy metrics alone. ``ee_loss`` and ``ee_relevance`` score it at their worst.
"""

from __future__ import annotations

import re
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

QRELS = pl.DataFrame(
    {
        "query_id": ["q1"] * 2 + ["q2"] * 2 + ["q3"] * 2,
        "doc_id": ["a", "b"] * 3,
        "relevance": [1, 0] * 3,
    }
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["g1", "g2", "g1", "g2"]})


def _run(queries: list[str]) -> pl.DataFrame:
    rows = [(q, d, float(10 - i)) for q in queries for i, d in enumerate("abcd")]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")


def _flattered(label: str) -> str:
    return (
        f"{label}: 1 judged query a system did not retrieve (e.g. system 'b', query 'q3') "
        "scores better as an empty ranking (0.0, lower is better) than another system's "
        "list, and counts as that system's wins (query_set='judged' scores a missed query "
        "as an empty ranking); pass query_set='common' to compare only the queries every "
        "system retrieved"
    )


# ------------------------------------ an exposure measure's empty ranking as a free win
@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        (["ee_disparity"], [_flattered("ee_disparity")]),
        (["ee_disparity(browsing='rbp')"], [_flattered("ee_disparity(browsing='rbp')")]),
        (["ee_disparity", "unjudged@4"], [_flattered("ee_disparity"), _flattered("unjudged@4")]),
        (["ee_loss"], []),  # an empty ranking is its worst: a loss, no warning
        (["ee_relevance"], []),
        (["ee_loss", "ee_relevance", "ndcg@4"], []),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_a_missed_query_winning_an_exposure_measure_is_said(
    metrics: list[str], expected: list[str], lazy: bool
) -> None:
    a, b = _run(["q1", "q2", "q3"]), _run(["q1", "q2"])  # identical lists; b misses q3
    runs = {"a": a.lazy(), "b": b.lazy()} if lazy else {"a": a, "b": b}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.compare(runs, metrics, qrels=QRELS, groups=GROUPS, baseline="a")
    said = [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]
    assert said == expected  # the exact texts, in order


def test_the_common_queries_say_nothing_and_lose_the_win() -> None:
    a, b = _run(["q1", "q2", "q3"]), _run(["q1", "q2"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrmWarning)
        out = irm.compare(
            {"a": a, "b": b}, "ee_disparity", qrels=QRELS, groups=GROUPS, baseline="a",
            query_set="common",
        )  # fmt: skip
    assert out.select("wins", "ties", "losses").row(0) == (0, 2, 0)


def test_the_win_is_counted_as_warned() -> None:
    a, b = _run(["q1", "q2", "q3"]), _run(["q1", "q2"])
    with pytest.warns(IrmWarning, match=f"^{re.escape(_flattered('ee_disparity'))}$"):
        out = irm.compare(
            {"a": a, "b": b}, "ee_disparity", qrels=QRELS, groups=GROUPS, baseline="a"
        )
    assert out.select("wins", "ties", "losses").row(0) == (1, 2, 0)
