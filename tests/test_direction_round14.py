"""Round 14: a direction, or a summary, read where it does not apply.

* ``irm.compare`` (``query_set='judged'``) warns where a judged query a system did not
  retrieve, scored as an empty ranking, is better than another system's list of it: the
  exposure measures too (``ee_disparity`` is 0 for no exposure, its best value), not the
  accuracy metrics alone. ``ee_loss`` and ``ee_relevance`` score it at their worst.
* ``irm.evaluate(..., per_query=True)`` (and the engines') refuses a metric that sets
  ``agg=``: the per-query values are given as they are, so ``agg=`` was ignored under a
  column named for the summary. A spread (``agg='std'``, ``'ci_halfwidth'``) has no
  better direction, so ``tau_ap`` and ``plot_swaps`` ask for one rather than order it
  as higher-is-better.
"""

from __future__ import annotations

import re
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.plot import plot_swaps
from polars_irmetrics.errors import InvalidValueError, IrmWarning, MetricParameterError

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
        # unjudged@4 has no direction: its empty ranking's 0 is no win to warn of
        (["ee_disparity", "unjudged@4"], [_flattered("ee_disparity")]),
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
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.compare(
            {"a": a, "b": b}, "ee_disparity", qrels=QRELS, groups=GROUPS, baseline="a",
            query_set="common",
        )  # fmt: skip
    # no flattery; the systems are identical on the common queries, which round 17's
    # warning of identical systems says (and it alone)
    said = [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]
    assert [text.split(":")[0] for text in said] == [
        "every per-query delta is 0 in 'ee_disparity', system 'b' against 'a'"
    ]
    assert out.select("wins", "ties", "losses").row(0) == (0, 2, 0)


def test_the_win_is_counted_as_warned() -> None:
    a, b = _run(["q1", "q2", "q3"]), _run(["q1", "q2"])
    with pytest.warns(IrmWarning, match=f"^{re.escape(_flattered('ee_disparity'))}$"):
        out = irm.compare(
            {"a": a, "b": b}, "ee_disparity", qrels=QRELS, groups=GROUPS, baseline="a"
        )
    assert out.select("wins", "ties", "losses").row(0) == (1, 2, 0)


# ------------------------------------------------- agg= with per_query=True: refused
def _summary_refused(label: str, agg: str, plain: str) -> str:
    return (
        f"metric {label!r} summarizes its per-query values with agg={agg!r}, but "
        "per_query=True gives the per-query values themselves, which agg= does not "
        f"change, so agg= would be ignored: drop agg= (e.g. {plain!r}), or pass "
        "per_query=False for the summary"
    )


RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "b"], "score": [2.0, 1.0, 1.0]}
)
JUDGED = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 1]}
)


@pytest.mark.parametrize(
    ("label", "agg", "plain"),
    [
        ("precision(agg='std')@1", "std", "precision@1"),
        ("P(agg='median')@1", "median", "precision@1"),
        ("P(agg='ci_halfwidth', ci_level=0.9)@1", "ci_halfwidth", "precision@1"),
        ("map(agg='sum')", "sum", "map"),
        ("NumRet(agg='sum')", "sum", "num_ret"),  # written: ignored per query, as any agg=
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_per_query_refuses_agg(label: str, agg: str, plain: str, lazy: bool) -> None:
    run, qrels = (RUN.lazy(), JUDGED.lazy()) if lazy else (RUN, JUDGED)
    message = _summary_refused(label, agg, plain)
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["ndcg@2", label], qrels=qrels, per_query=True)


@pytest.mark.parametrize("name", ["NumRet", "num_ret", "P(agg='mean')@1", "P@1"])
def test_per_query_keeps_a_name_without_a_summary_of_its_own(name: str) -> None:
    # NumRet's sum is its name's (ir_measures'): per query, its counts; agg='mean' is
    # the default, no summary of another kind
    per_query = irm.evaluate(RUN, [name], qrels=JUDGED, per_query=True)
    assert per_query.columns == ["query_id", name]
    assert per_query.height == 2


def test_the_summary_itself_is_kept() -> None:
    out = irm.evaluate(RUN, ["P@1", "P(agg='std')@1"], qrels=JUDGED)
    assert out.row(0) == (2, 0.5, 0.5)


def test_dask_refuses_agg_per_query_alike() -> None:
    dd = pytest.importorskip("dask.dataframe")
    irm_dask = pytest.importorskip("polars_irmetrics.dask")
    message = _summary_refused("P(agg='std')@1", "std", "precision@1")
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm_dask.evaluate(
            dd.from_pandas(RUN.to_pandas(), npartitions=1),
            ["P(agg='std')@1"],
            qrels=dd.from_pandas(JUDGED.to_pandas(), npartitions=1),
            per_query=True,
        )


# -------------------------------------------------- a spread has no better direction
@pytest.mark.parametrize(
    ("name", "direction"),
    [
        ("P(agg='std')@5", None),
        ("P(agg='ci_halfwidth')@5", None),
        ("unjudged(agg='std')@5", None),
        ("P(agg='median')@5", True),
        ("P(agg='max')@5", True),
        ("unjudged(agg='median')@5", None),  # the judgments' completeness: no direction
        ("P@5", True),
    ],
)
def test_a_spread_has_no_direction(name: str, direction: bool | None) -> None:
    assert irm.parse_metric(name).higher_is_better is direction


SPREAD = "P(agg='std')@5"
SPREAD_A = pl.DataFrame(
    {
        "system": ["x"] * 3 + ["y"] * 3 + ["z"] * 3,
        "query_id": [1, 2, 3] * 3,
        SPREAD: [0.1, 0.5, 0.3, 0.4, 0.2, 0.9, 0.8, 0.7, 0.6],
    }
)
SPREAD_B = SPREAD_A.with_columns(pl.col(SPREAD).reverse())
NO_DIRECTION = (
    f"metric {SPREAD!r} of a has no better direction (neither a higher nor a lower value "
    "is better), so the systems have no best-first order: say which way to order them "
    "with higher_is_better=True or higher_is_better=False"
)


@pytest.mark.parametrize(
    "call",
    [
        lambda: irm.system_agreement(SPREAD_A, SPREAD_B, "tau_ap"),
        lambda: plot_swaps(SPREAD_A, SPREAD_B),
    ],
    ids=["tau_ap", "plot_swaps"],
)
def test_a_spread_column_is_not_ordered_as_higher_is_better(call: object) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(NO_DIRECTION)}$"):
        call()  # type: ignore[operator]


def test_a_spread_column_ordered_as_told() -> None:
    out = irm.system_agreement(SPREAD_A, SPREAD_B, "tau_ap", higher_is_better=False)
    assert out.height == 1
