"""Round 29's audit of the wings with tiny inputs: vectors (neighbour recall), online
(click metrics), stats/comparison. Each case failed on the code before it: a silent
value where the input's ids, scale or spread did not support it."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, IrmWarning

INF = float("inf")


def _irm_warnings(call: Any) -> list[str]:
    """The texts of the :class:`IrmWarning` that ``call()`` gives (not its subclass
    :class:`CoverageWarning`'s: a run of no judged document is said so too)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if w.category is IrmWarning]


#: each one-machine case on a DataFrame and on a LazyFrame (collected: where the plan
#: runs, its refusals and warnings come)
LAZY = pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])


def _given(frame: pl.DataFrame, lazy: bool) -> pl.DataFrame | pl.LazyFrame:
    return frame.lazy() if lazy else frame


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


# --------------------------------------------------------------- neighbour recall
_EXACT = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [5.0, 3.0, 2.0]}
)
_APPROX = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "x", "c"], "score": [5.0, 1.0, 2.0]}
)
_RUN_BAD = (
    "column 'score' of the run has null, NaN or +inf values in query 'q1'; neighbour "
    "recall reads distances from scores (+inf: a document closer than any, found "
    "whatever the true distances; -inf, a document never found, is read as a miss): "
    "fill or drop those rows"
)
_TRUTH_BAD = (
    "column 'score' of the neighbors has null, NaN or infinite values in query 'q1'; "
    "neighbour recall reads the k-th true distance from them (an infinite one would "
    "count every document of the run as found, or none): fill or drop those rows"
)


@pytest.mark.parametrize(
    ("run_scores", "truth_scores", "message"),
    [
        # inner products (scores above 1): the run's +inf counted as found, 1.0
        ([5.0, INF, 2.0], [5.0, 3.0, 2.0], _RUN_BAD),
        # the k-th true distance infinite: every document found, 1.0
        ([5.0, 1.0, 2.0], [5.0, -INF, 2.0], _TRUTH_BAD),
        ([5.0, 1.0, 2.0], [INF, 3.0, 2.0], _TRUTH_BAD),
    ],
)
@LAZY
def test_infinite_scores_of_neighbour_recall_are_refused(
    run_scores: list[float], truth_scores: list[float], message: str, lazy: bool
) -> None:
    run = _given(_APPROX.with_columns(score=pl.Series(run_scores)), lazy)
    exact = _given(_EXACT.with_columns(score=pl.Series(truth_scores)), lazy)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collected(irm.evaluate(run, ["neighbor_recall@2"], neighbors=exact))


def test_a_minus_inf_score_of_the_run_is_a_miss() -> None:
    # faiss pads a short list with -inf (inner product): a document never found
    run = _APPROX.with_columns(score=pl.Series([5.0, -INF, 2.0]))
    got = irm.evaluate(run, ["neighbor_recall@2"], neighbors=_EXACT, per_query=True)
    assert got["neighbor_recall@2"].to_list() == [0.5, 1.0]


def _short(k: int) -> str:
    return (
        f"metric 'neighbor_recall@{k}': neighbors= holds fewer than {k} neighbours of 1 of "
        f"its 2 queries whose first {k} documents of the run are more (first: 'q1', 2 "
        f"neighbours, 3 documents of the run): the corpus holds more than neighbors= lists, "
        f"so it was cut shorter than {k}, and there the recall reads those n and the n-th "
        f"true distance for k and the k-th (over min(k, n)), a recall at depth n, not {k}: "
        f"compute neighbors= with k >= {k} (knn(..., k={k})), or ask for a cutoff every "
        "query has (@1 or less)"
    )


@pytest.mark.parametrize(
    ("run_rows", "metrics", "said"),
    [
        # the run lists a third document of q1: neighbors= (two of it) was cut short
        (3, ["neighbor_recall@3", "neighbor_recall@2"], [_short(3)]),
        (3, ["neighbor_recall@4"], [_short(4)]),
        # the run lists no more than neighbors= holds: a corpus that small, nothing said
        (2, ["neighbor_recall@3"], []),
    ],
)
@LAZY
def test_neighbors_cut_shorter_than_k_are_said(
    run_rows: int, metrics: list[str], said: list[str], lazy: bool
) -> None:
    exact = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [-0.1, -0.2, -0.3]}
    )
    run = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2"],
            "doc_id": ["a", "b", "x", "c"],
            "score": [-0.1, -0.2, -0.25, -0.3],
        }
    ).filter((pl.col("query_id") != "q1") | (pl.int_range(pl.len()).over("query_id") < run_rows))
    got = _irm_warnings(
        lambda: _collected(irm.evaluate(_given(run, lazy), metrics, neighbors=_given(exact, lazy)))
    )
    assert got == said


# --------------------------------------------------------------- click positions
_CLICKS = pl.DataFrame({"session_id": ["s1", "s1", "s2"], "clicked": [True, True, True]})


@pytest.mark.parametrize(
    ("dtype", "low"),
    [
        (pl.Int32, 2**31 - 2),  # was -1.5
        (pl.UInt32, 2**32 - 2),  # was 2.1e9
        (pl.Int64, 2**62),  # was -4.6e18
        (pl.UInt64, 2**64 - 2),  # was 9.2e18
    ],
)
def test_mean_click_position_does_not_wrap_around(dtype: pl.DataType, low: int) -> None:
    log = _CLICKS.with_columns(position=pl.Series([low, low + 1, low], dtype=dtype))
    per_session = irm.evaluate_online(log, ["mean_click_position"], per_session=True)
    expected = [(2 * low + 1) / 2, float(low)]
    assert per_session["mean_click_position"].to_list() == expected
    mean = irm.evaluate_online(log, ["mean_click_position"])["mean_click_position"].item()
    assert mean == float(3 * low + 1) / 3
    expr = log.group_by("session_id").agg(irm.click_metric("mean_click_position"))
    assert expr.sort("session_id")["mean_click_position"].to_list() == expected


# --------------------------------------------------------------- null click metrics
def _null_text(label: str, where: str, sessions: str) -> str:
    return (
        f"{label!r} is null{where}: {sessions} gives it a value (a rate over the top k has "
        "no impression at positions <= k, a rate or a position over the clicks no click), "
        "never a made-up 0: check the log's positions (1 = top) and clicks, or leave the "
        "metric out"
    )


_LOG = pl.DataFrame(
    {
        "day": [1, 1, 2, 2],
        "session_id": ["s1", "s1", "s2", "s3"],
        "position": [6, 7, 6, 6],
        "clicked": [True, False, False, False],
    }
)


@pytest.mark.parametrize(
    ("metrics", "options", "said"),
    [
        # no impression at positions <= 5
        (["ctr@5", "ctr"], {}, [_null_text("ctr@5", "", "none of the 3 sessions")]),
        (
            ["mean_click_position", "median_click_position"],
            {"by": "day"},
            [
                _null_text(
                    label,
                    " in 1 segment(s) (first: day=2, 2 sessions)",
                    "none of its sessions",
                )
                for label in ("mean_click_position", "median_click_position")
            ],
        ),
        # out of core: the same words
        (
            ["mean_click_position"],
            {"by": "day", "buckets": 2},
            [
                _null_text(
                    "mean_click_position",
                    " in 1 segment(s) (first: day=2, 2 sessions)",
                    "none of its sessions",
                )
            ],
        ),
        # a session's own null (no click) is its documented value: nothing said
        (["mean_click_position"], {"per_session": True}, []),
    ],
)
@LAZY
def test_a_click_metric_no_session_values_is_said(
    metrics: list[str], options: dict[str, Any], said: list[str], lazy: bool
) -> None:
    log = _given(_LOG, lazy)
    assert _irm_warnings(lambda: _collected(irm.evaluate_online(log, metrics, **options))) == said


# --------------------------------------------------------------- paired tests
_QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "z"], "relevance": [1, 1, 1]}
)


def _run(docs: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": docs, "score": [1.0] * 3})


def _no_spread(tail: str, interval: str = "is the delta itself") -> str:
    return (
        "every per-query delta is -1.0 in 'P@1', system 'b' against 'a', on all 3 paired "
        "queries: the deltas have no spread, so effect_size is NaN (Cohen's d_z divides "
        f"the mean delta by their standard deviation, 0), the interval {interval}{tail}"
    )


_EXACT_P = (
    ": resting on no spread, not on evidence; test='randomization' gives the exact "
    "p-value of the sign flips (0.25 two-sided, for 3 queries), or compare on more queries"
)
_MORE = ": resting on no spread, not on evidence; compare on more queries before reading them"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (
            {"test": "t"},
            _no_spread(
                ", and test='t' reads the difference as certain (p_value 0.0: scipy's "
                "ttest_rel divides by that 0 spread)" + _EXACT_P
            ),
        ),
        ({"test": "wilcoxon"}, _no_spread(_MORE)),
        ({"test": "randomization", "alternative": "less"}, _no_spread(_MORE, "ends at the delta")),
    ],
)
def test_deltas_without_spread_are_said(options: dict[str, Any], said: str) -> None:
    runs = {"a": _run(["x", "y", "z"]), "b": _run(["n", "n", "n"])}
    got = _irm_warnings(lambda: irm.compare(runs, ["P@1"], qrels=_QRELS, **options))
    assert got == [said]


# --------------------------------------------------------------- reproducibility
def test_reproducibility_names_its_run_not_its_internal_column() -> None:
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    run = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["a", "b", "a", "b"],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )
    # the reproduction's query ids end in a space: no document in common with the original
    again = run.with_columns(pl.col("query_id") + " ")
    said = _irm_warnings(
        lambda: irm.reproducibility({"baseline": run}, {"baseline": again}, ["P_1"], qrels=qrels)
    )
    assert said == [
        "rank correlations are null where the run and the reference share fewer than two "
        "documents (one pair is the least a correlation reads; none where one side has no "
        "ranking of the query), and those queries are left out of the mean (num_q still "
        "counts them): 'ktu@1000' on 2 of the 2 queries (first: 'q1' (run='baseline')); "
        "compare deeper rankings (a larger @k), and check that the two sides' doc ids match"
    ]
