"""RePlay parity (issue 42): ``rocauc@k`` is RePlay's ``RocAuc``, and
``agg='ci_halfwidth'`` its ``ConfidenceInterval`` aggregation.

Reference values come from RePlay 0.22.0 (``tests/fixtures/replay/auc_ci.json``,
written by ``tests/fixtures/replay/make_fixtures_auc_ci.py`` in a side environment:
RePlay pins polars < 2), on RePlay's own test inputs (their ``tests/metrics``
``conftest.py`` tables and descriptor test) and on random ones. RePlay's test
interactions are the judgments here (every row relevant) and its order of the
recommendations (score, then item id, descending) the fixture's ``rank``; its users are
the test users, one without recommendations scoring 0.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import MetricParameterError
from tests.conftest import Evaluate
from tests.test_cornac_ncrr import USER_LISTS, UserLists, assert_peer_values, random_tables

from .helpers import irm_in_process

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "replay" / "auc_ci.json").read_text())
CASES = FIXTURE["cases"]
ALPHAS = FIXTURE["alphas"]
TOL = 1e-9


def replay_rocauc(k: int, ground_truth: list[Any], pred: list[Any]) -> float:
    """RePlay's ``RocAuc._get_metric_value_by_user`` for one ``k``, line by line."""
    if not ground_truth or not pred:
        return 0.0
    set_gt = set(ground_truth)
    length = min(k, len(pred))
    fp_cur = 0
    fp_cum = 0
    for item in pred[:length]:
        if item in set_gt:
            fp_cum += fp_cur
        else:
            fp_cur += 1
    if fp_cur == length:
        return 0.0
    if fp_cum == 0:
        return 1.0
    return 1 - fp_cum / (fp_cur * (length - fp_cur))


def replay_ci(values: list[float], alpha: float) -> float:
    """RePlay's ``ConfidenceInterval(alpha)._polars``: z * std(ddof=1) / sqrt(n), the
    standard deviation 0 for one value."""
    quantile = statistics.NormalDist().inv_cdf((1 + alpha) / 2)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return quantile * std / len(values) ** 0.5


def _tables(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    recs = case["recommendations"]
    run = pl.DataFrame(
        {"query_id": recs["query_id"], "doc_id": recs["item_id"], "rank": recs["rank"]},
        schema={"query_id": pl.Int64, "doc_id": pl.Int64, "rank": pl.Int64},
    )
    test = pl.DataFrame(
        {"query_id": case["test"]["query_id"], "doc_id": case["test"]["item_id"]},
        schema={"query_id": pl.Int64, "doc_id": pl.Int64},
    )
    return run, test.unique().with_columns(relevance=pl.lit(1))


def _ci_label(name: str, alpha: float) -> str:
    metric, k = name.split("@")
    return f"{metric}(agg='ci_halfwidth', ci_level={alpha})@{k}"


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c["name"] for c in CASES])
def test_rocauc_and_its_neighbours_equal_replay_per_user(evaluate: Evaluate, case: int) -> None:
    data = CASES[case]
    run, test = _tables(data)
    assert_peer_values(evaluate, run, test, data["values"])


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c["name"] for c in CASES])
def test_ci_halfwidth_equals_replay_confidence_interval(evaluate: Evaluate, case: int) -> None:
    data = CASES[case]
    run, test = _tables(data)
    labels = {(name, a): _ci_label(name, a) for name in data["values"] for a in ALPHAS}
    got = evaluate(run, list(labels.values()), qrels=test)
    for (name, alpha), label in labels.items():
        theirs = data["values"][name][f"ci_{alpha}"]
        assert math.isclose(got[label].item(), theirs, rel_tol=0.0, abs_tol=TOL), label


def test_the_ports_used_below_equal_replay() -> None:
    for data in CASES:
        run, test = _tables(data)
        truth = {q: list(d) for q, d in test.group_by("query_id").agg("doc_id").iter_rows()}
        lists = {q: list(d) for q, d in run.sort("rank").group_by("query_id").agg("doc_id").rows()}
        for name, theirs in data["values"].items():
            metric, k = name.split("@")
            if metric == "rocauc":
                for user, value in theirs["per_user"].items():
                    mine = replay_rocauc(int(k), truth[int(user)], lists.get(int(user), []))
                    assert math.isclose(mine, value, abs_tol=1e-15), (name, user)
            values = list(theirs["per_user"].values())
            for alpha in ALPHAS:
                expected = theirs[f"ci_{alpha}"]
                assert math.isclose(replay_ci(values, alpha), expected, abs_tol=1e-12)


def test_replay_docstring_example_by_hand(evaluate: Evaluate) -> None:
    # RePlay's RocAuc docstring: RocAuc(2) is 0, 0, 1 for users 1, 2, 3
    run, test = _tables(CASES[0])
    labels = ["rocauc@2", "rocauc(agg='ci_halfwidth')@2", "rocauc(agg='median')@2"]
    got = evaluate(run, labels, qrels=test)
    # user 1: 3 then 7 (relevant): one other item above 7, tp = fp = 1: 1 - 1 / (1 * 1)
    # user 3: 4 (relevant) then 9: nothing above the relevant item: 1
    mean, std = 1 / 3, math.sqrt(((0 - 1 / 3) ** 2 * 2 + (1 - 1 / 3) ** 2) / 2)
    z = 1.959963984540054  # the normal quantile of 0.975: RePlay's alpha=0.95
    assert got.row(0)[1:] == pytest.approx((mean, z * std / math.sqrt(3), 0.0), abs=1e-15)
    assert got["rocauc(agg='ci_halfwidth')@2"].item() == pytest.approx(0.6533213281800181)


def test_a_list_of_relevant_items_only_scores_1_and_none_0(evaluate: Evaluate) -> None:
    run = pl.DataFrame({"query_id": [1, 1, 2, 2], "doc_id": [1, 2, 3, 4], "rank": [1, 2, 1, 2]})
    test = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [1, 2, 9], "relevance": 1})
    got = evaluate(run, ["rocauc@5"], qrels=test, per_query=True)
    assert got.rows() == [(1, 1.0), (2, 0.0)]


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@settings(max_examples=35, deadline=None)
@given(
    lists=USER_LISTS,
    k=st.integers(1, 12),
    alpha=st.sampled_from([0.05, 0.5, 0.9, 0.95, 0.99]),
    lazy=st.booleans(),
)
def test_rocauc_and_ci_equal_replay_on_random_lists(
    lists: UserLists, k: int, alpha: float, lazy: bool
) -> None:
    # RePlay's ground truth is the relevant items; the judged non-relevant ones are
    # other items to it, as unjudged ones
    run, test = random_tables(lists)
    expected = [replay_rocauc(k, positives, ranking) for ranking, positives, _ in lists]
    labels = [f"rocauc@{k}", _ci_label(f"rocauc@{k}", alpha)]
    frame = run.lazy() if lazy else run
    per_user = irm.evaluate(frame, labels[:1], qrels=test, per_query=True)
    means = irm.evaluate(frame, labels, qrels=test)
    if isinstance(per_user, pl.LazyFrame):
        assert isinstance(means, pl.LazyFrame)
        per_user, means = per_user.collect(), means.collect()
    assert isinstance(per_user, pl.DataFrame)
    assert isinstance(means, pl.DataFrame)
    ours = dict(per_user.iter_rows())
    for user, theirs in enumerate(expected):
        assert math.isclose(ours[user], theirs, rel_tol=0.0, abs_tol=TOL), (user, theirs)
    ci = means[labels[1]].item()
    assert math.isclose(ci, replay_ci(expected, alpha), rel_tol=0.0, abs_tol=TOL)


def test_ci_halfwidth_of_no_query_is_null() -> None:
    values = pl.DataFrame({"v": []}, schema={"v": pl.Float64})
    half = irm.get_metric("ndcg").summarize("v", "ci_halfwidth")
    assert values.select(half).item() is None


def test_canonical_names_round_trip() -> None:
    for name, canonical in [
        ("RocAuc(agg='ci_halfwidth')@10", "rocauc(agg='ci_halfwidth')@10"),
        ("ndcg(agg='ci_halfwidth', ci_level=0.95)@10", "ndcg(agg='ci_halfwidth')@10"),
        ("NCRR(agg='ci_halfwidth', ci_level=0.9)@5", "ncrr(agg='ci_halfwidth', ci_level=0.9)@5"),
    ]:
        request = irm.parse_metric(name)
        assert request.name == canonical
        assert irm.parse_metric(canonical) == request


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        (
            "ndcg(ci_level=0.9)@10",
            "metric 'ndcg(ci_level=0.9)@10': ci_level is the confidence level of "
            "agg='ci_halfwidth', and this name summarizes with agg='mean'; add "
            "agg='ci_halfwidth' or drop ci_level",
        ),
        (
            "ndcg(agg='ci_halfwidth', ci_level=95)@10",
            "metric \"ndcg(agg='ci_halfwidth', ci_level=95)@10\": ci_level=95 is not a "
            "confidence level; give a number between 0 and 1 (exclusive), e.g. "
            "ci_level=0.95 for a 95% interval",
        ),
        (
            "auc(agg='ci_halfwidth')",
            "metric \"auc(agg='ci_halfwidth')\": agg='ci_halfwidth' is the confidence "
            "interval of the mean of per-query values; auc has none to summarize (its "
            "prediction route computes one summary of its own): drop agg='ci_halfwidth' (it "
            "summarizes per-query metrics such as ndcg@10 or rocauc@10)",
        ),
        (
            "ndcg(agg='ci')@10",
            "metric \"ndcg(agg='ci')@10\": agg='ci' is not allowed; choose one of 'mean', "
            "'geometric', 'sum', 'median', 'min', 'max', 'std', 'median_low', 'ci_halfwidth'",
        ),
    ],
)
def test_refusals(metric: str, message: str) -> None:
    run, test = _tables(CASES[0])
    with pytest.raises(MetricParameterError, match="^" + re.escape(message) + "$"):
        irm.evaluate(run, [metric], qrels=test)


ENGINE_METRICS = [
    "rocauc@5",
    "ncrr@5",
    "rocauc(agg='ci_halfwidth')@5",
    "ndcg(agg='ci_halfwidth', ci_level=0.9)@10",
    "P(agg='ci_halfwidth', ci_level=0.05)@5",
]


def _random_case() -> tuple[pl.DataFrame, pl.DataFrame]:
    run, test = _tables(CASES[-1])  # RePlay's values, 60 users (random #2)
    return run, test


def test_spark_equals_evaluate(spark: Any) -> None:
    import polars_irmetrics.spark as irm_spark

    run, test = _random_case()
    expected = irm.evaluate(run, ENGINE_METRICS, qrels=test)
    got = irm_spark.evaluate(
        spark.createDataFrame(run.to_arrow()),
        ENGINE_METRICS,
        qrels=spark.createDataFrame(test.to_arrow()),
    )
    result = pl.from_arrow(got.toArrow())
    assert isinstance(result, pl.DataFrame)
    assert result.rows() == expected.rows()  # the same bits
    theirs = CASES[-1]["values"]["rocauc@5"]["ci_0.95"]
    assert math.isclose(result["rocauc(agg='ci_halfwidth')@5"].item(), theirs, abs_tol=TOL)


def test_dask_equals_evaluate(client: Any) -> None:
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa

    import polars_irmetrics.dask as irm_dask

    def parts(frame: pl.DataFrame, n: int) -> Any:
        return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=n)

    run, test = _random_case()
    expected = irm.evaluate(run, ENGINE_METRICS, qrels=test)
    got = irm_dask.evaluate(parts(run, 3), ENGINE_METRICS, qrels=parts(test, 2))
    result = pl.from_arrow(pa.Table.from_pandas(got.compute(), preserve_index=False))
    assert isinstance(result, pl.DataFrame)
    assert result.rows() == expected.rows()  # the same bits


def test_the_command_line_prints_rocauc_and_its_interval(tmp_path: Path) -> None:
    run, test = _tables(CASES[0])
    run.write_parquet(tmp_path / "run.parquet")
    test.write_parquet(tmp_path / "test.parquet")
    labels = ["rocauc@5", "rocauc(agg='ci_halfwidth', ci_level=0.9)@5", "ncrr@5"]
    flags = [part for label in labels for part in ("-m", label)]
    command = ["evaluate", "run.parquet"]
    done = irm_in_process(
        *command, "--qrels", "test.parquet", *flags, "--format", "json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    row = printed[0] if isinstance(printed, list) else printed
    theirs = CASES[0]["values"]["rocauc@5"]
    assert math.isclose(row["rocauc@5"], theirs["mean"], abs_tol=TOL)
    assert math.isclose(row[labels[1]], theirs["ci_0.9"], abs_tol=TOL)
