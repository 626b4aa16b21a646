"""cornac parity (issue 42): ``ncrr@k`` is cornac's ``NCRR``.

Reference values come from cornac 3.0.1 (``tests/fixtures/cornac/ncrr.json``, written by
``tests/fixtures/cornac/make_fixtures.py`` in a side environment: cornac is a compiled
package with its own stack, not a test dependency), on cornac's own test inputs (their
``test_ranking.py::test_ncrr``) and on random ones. cornac's test items are the
judgments here (every row relevant), its ``pd_rank`` the run's ranks; a test user
without a list scores 0, as cornac's ``compute`` on an empty ranking.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import MetricParameterError
from tests.conftest import Evaluate

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "cornac" / "ncrr.json").read_text())
CASES = FIXTURE["cases"]
TOL = 1e-9


def cornac_ncrr(k: int | None, gt_pos: list[Any], pd_rank: list[Any]) -> float:
    """cornac's ``NCRR(k).compute`` (cornac/metrics/ranking.py), line by line in Python."""
    truncated = pd_rank if k is None else pd_rank[:k]
    positive = set(gt_pos)
    rec_rank = [i + 1 for i, item in enumerate(truncated) if item in positive]
    if not rec_rank:
        return 0.0
    crr = sum(1.0 / r for r in rec_rank)
    max_nb_pos = min(len(gt_pos), len(truncated))
    icrr = sum(1.0 / (i + 1) for i in range(max_nb_pos))
    return crr / icrr


def _tables(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame(
        case["run"], schema={"query_id": pl.Int64, "doc_id": pl.Int64, "rank": pl.Int64}
    )
    qrels = pl.DataFrame(case["qrels"], schema={"query_id": pl.Int64, "doc_id": pl.Int64})
    return run, qrels.with_columns(relevance=pl.lit(1))


def _label(k: int | None) -> str:
    return "ncrr" if k is None else f"ncrr@{k}"


def assert_peer_values(
    evaluate: Evaluate, run: pl.DataFrame, qrels: pl.DataFrame, expected: dict[str, Any]
) -> None:
    """Per metric label, the peer's ``per_user`` values (users as strings) and ``mean``
    equal this library's per-query values and mean, to :data:`TOL`."""
    per_user = evaluate(run, list(expected), qrels=qrels, per_query=True)
    means = evaluate(run, list(expected), qrels=qrels)
    for label, theirs in expected.items():
        ours = {str(q): v for q, v in per_user.select("query_id", label).iter_rows()}
        assert sorted(ours) == sorted(theirs["per_user"]), label
        for user, value in theirs["per_user"].items():
            assert math.isclose(ours[user], value, rel_tol=0.0, abs_tol=TOL), (label, user)
        assert math.isclose(means[label].item(), theirs["mean"], rel_tol=0.0, abs_tol=TOL)


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c["name"] for c in CASES])
def test_ncrr_equals_cornac(evaluate: Evaluate, case: int) -> None:
    data = CASES[case]
    run, qrels = _tables(data)
    assert_peer_values(evaluate, run, qrels, {_label(v["k"]): v for v in data["values"]})


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c["name"] for c in CASES])
def test_the_port_used_below_equals_cornac(case: int) -> None:
    # the port the random tests compare with is cornac's value on every fixture
    data = CASES[case]
    users: dict[str, tuple[list[int], list[int]]] = {}
    for q, d in zip(data["qrels"]["query_id"], data["qrels"]["doc_id"], strict=True):
        users.setdefault(str(q), ([], []))[0].append(d)
    for q, d in zip(data["run"]["query_id"], data["run"]["doc_id"], strict=True):
        users.setdefault(str(q), ([], []))[1].append(d)  # the fixture lists ranks 1, 2, ...
    for values in data["values"]:
        for user, theirs in values["per_user"].items():
            gt, pd = users[user]
            assert math.isclose(cornac_ncrr(values["k"], gt, pd), theirs, abs_tol=1e-15)


def test_ncrr_by_hand(evaluate: Evaluate) -> None:
    # relevant: a, c, e (and d judged non-relevant); the list b, a, d, c
    run = pl.DataFrame({"query_id": 1, "doc_id": ["b", "a", "d", "c"], "rank": [1, 2, 3, 4]})
    qrels = pl.DataFrame(
        {"query_id": 1, "doc_id": ["a", "c", "d", "e"], "relevance": [1, 2, 0, 1]}
    )
    got = evaluate(run, ["ncrr@3", "ncrr@4", "ncrr", "ncrr@10", "ncrr@1"], qrels=qrels)
    at_3 = (1 / 2) / (1 + 1 / 2 + 1 / 3)  # a at 2; ideal: 3 relevant in 3 places
    at_4 = (1 / 2 + 1 / 4) / (1 + 1 / 2 + 1 / 3)  # min(R = 3, L = 4) ideal places
    assert got.row(0)[1:] == pytest.approx((at_3, at_4, at_4, at_4, 0.0), abs=1e-15)


def test_a_short_list_shortens_the_ideal_one(evaluate: Evaluate) -> None:
    # cornac truncates its ranking to k: a list of 2 holds at most 2 relevant documents
    run = pl.DataFrame({"query_id": 1, "doc_id": ["a", "b"], "rank": [1, 2]})
    qrels = pl.DataFrame({"query_id": 1, "doc_id": ["a", "b", "c"], "relevance": 1})
    got = evaluate(run, ["ncrr@5"], qrels=qrels)
    assert got["ncrr@5"].item() == cornac_ncrr(5, ["a", "b", "c"], ["a", "b"]) == 1.0


def test_cornac_ranking_eval_skips_users_without_a_positive(evaluate: Evaluate) -> None:
    # cornac's ranking_eval averages the users with a test item at its threshold; here
    # a judged query without one scores 0, unless empty_target_action='skip'
    run = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]})
    qrels = pl.DataFrame({"query_id": [1, 2], "doc_id": ["b", "a"], "relevance": [1, 0]})
    got = evaluate(run, ["ncrr@2", "ncrr(empty_target_action='skip')@2"], qrels=qrels)
    assert got.row(0) == (2, 0.5 / 2, 0.5)  # num_q, then the two means


#: Random users: each a ranking, its relevant items and judged non-relevant items.
USER_LISTS = st.lists(
    st.tuples(
        st.lists(st.integers(0, 12), max_size=10, unique=True),
        st.lists(st.integers(0, 12), min_size=1, max_size=6, unique=True),
        st.lists(st.integers(0, 12), max_size=3, unique=True),
    ),
    min_size=1,
    max_size=7,
)
UserLists = list[tuple[list[int], list[int], list[int]]]


def random_tables(lists: UserLists) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The run (ranks 1, 2, ...) and the judgments of :data:`USER_LISTS`, user i the
    query i."""
    run_rows, qrels_rows = [], []
    for user, (ranking, positives, negatives) in enumerate(lists):
        run_rows += [(user, d, r) for r, d in enumerate(ranking, start=1)]
        qrels_rows += [(user, d, 1) for d in positives]
        qrels_rows += [(user, d, 0) for d in negatives if d not in positives]
    run = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "rank"], orient="row")
    run = run.cast({"query_id": pl.Int64, "doc_id": pl.Int64, "rank": pl.Int64})
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    return run, qrels


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@settings(max_examples=60, deadline=None)
@given(lists=USER_LISTS, k=st.one_of(st.none(), st.integers(1, 12)), lazy=st.booleans())
def test_ncrr_equals_cornac_on_random_lists(lists: UserLists, k: int | None, lazy: bool) -> None:
    run, qrels = random_tables(lists)
    label = _label(k)
    got = irm.evaluate(run.lazy() if lazy else run, [label], qrels=qrels, per_query=True)
    table = got.collect() if isinstance(got, pl.LazyFrame) else got
    ours = dict(table.select("query_id", label).iter_rows())
    for user, (ranking, positives, _) in enumerate(lists):
        theirs = cornac_ncrr(k, positives, ranking)
        assert math.isclose(ours[user], theirs, rel_tol=0.0, abs_tol=TOL), (user, ours, theirs)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("ncrr(p=0.5)@5", "metric 'ncrr(p=0.5)@5': unknown parameter 'p'; ncrr takes rel, agg"),
        ("ncrr@0", "metric 'ncrr@0'"),
    ],
)
def test_refusals(metric: str, message: str) -> None:
    run, qrels = _tables(CASES[0])
    with pytest.raises(MetricParameterError, match="^" + re.escape(message)):
        irm.evaluate(run, [metric], qrels=qrels)
