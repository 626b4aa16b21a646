"""The exposure measures with ``by=`` (segments) and ``systems=`` (several systems in
one run), alone and beside ``ndcg@10`` and the other accuracy metrics (issue 42): each
group's values are those of the run filtered to the group and evaluated alone, bit for
bit (Hypothesis over random runs, DataFrame and LazyFrame); a system is scored on every
judged query, a segment counts the judged queries the judgments or ``queries=``
place in it (a key of the run alone: tests/test_exposure_by_round12.py);
``irm.compare`` takes ``groups=``/``target=`` and reads each measure's declared
direction."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError, QuerySetError

from .helpers import irm_in_process

EXPOSURE = [
    "ee_loss",
    "ee_disparity(browsing='rbp')",
    "ee_relevance(patience=0.8)",
    "awrf",
    "awrf_ndcg",
    "rnd",
    "rkl",
    "rrd",
]
MIXED = [*EXPOSURE[:4], "ndcg@10", "P@5", "map"]

#: DataFrame and LazyFrame (as the frame_kind fixture, which Hypothesis cannot reset
#: between examples): both calls of an example are checked against one reference (each
#: system's or segment's calls alone, computed once per example)
FRAME_KINDS = ("DataFrame", "LazyFrame")

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")


def _tables(seed: int, *, sampled: bool = False) -> dict[str, pl.DataFrame]:
    """Two systems and two segments (a segment per query) over 6 queries, rankings of
    up to 24 of 30 documents (rnd needs more than 10), some queries unretrieved by a
    system, judgments graded 0-2 (a query unjudged), 3 groups (some documents in two)."""
    rng = np.random.default_rng(seed)
    rows = []
    for system in ("s0", "s1"):
        for query in range(6):
            if rng.random() < 0.2:  # this system did not retrieve the query
                continue
            for sample in range(2 if sampled else 1):
                docs = rng.choice(30, size=int(rng.integers(1, 25)), replace=False)
                rows += [
                    (system, f"q{query}", sample, f"d{d}", rank) for rank, d in enumerate(docs, 1)
                ]
    run = pl.DataFrame(
        rows, schema=["system", "query_id", "sample", "doc_id", "rank"], orient="row"
    ).with_columns(segment=pl.col("query_id").str.slice(1).cast(pl.Int64).mod(2).cast(pl.String))
    if not sampled:
        run = run.drop("sample")
    pairs = [(f"q{q}", f"d{d}") for q in range(5) for d in rng.choice(30, 8, replace=False)]
    qrels = pl.DataFrame(pairs, schema=["query_id", "doc_id"], orient="row").with_columns(
        relevance=pl.Series(rng.integers(0, 3, len(pairs)), dtype=pl.Int64)
    )
    docs = [f"d{i}" for i in range(30)]
    groups = pl.concat(
        [
            pl.DataFrame({"doc_id": docs, "group": [f"g{g}" for g in rng.integers(0, 3, 30)]}),
            pl.DataFrame({"doc_id": ["d0", "d1", "d3"], "group": ["g9"] * 3}),
        ]
    )
    return {"run": run, "qrels": qrels, "groups": groups}


def _call(frame_kind: str, run: pl.DataFrame, metrics: list[str], **kw: Any) -> pl.DataFrame:
    if frame_kind == "LazyFrame":
        lazy = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in kw.items()}
        out = irm.evaluate(run.lazy(), metrics, **lazy)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(run, metrics, **kw)
    assert isinstance(result, pl.DataFrame)
    return result


def _equal_on_both_kinds(
    want: pl.DataFrame, run: pl.DataFrame, metrics: list[str], **kw: Any
) -> None:
    """The call on a DataFrame and on LazyFrames gives ``want``, to the bit."""
    for kind in FRAME_KINDS:
        assert_frame_equal(_call(kind, run, metrics, **kw), want, check_exact=True)


Parts = list[tuple[dict[str, str], pl.DataFrame, pl.DataFrame]]


def _alone(
    parts: Parts,
    metrics: list[str],
    *,
    per_query: bool,
    **kw: Any,
) -> pl.DataFrame:
    """Each group's call on its own rows, its key values put in front, stacked."""
    frames = []
    for values, run, qrels in parts:
        out = irm.evaluate(run, metrics, qrels=qrels, per_query=per_query, **kw)
        keys = [pl.lit(v, pl.String).alias(k) for k, v in values.items()]
        frames.append(out.select(*keys, pl.all()))
    return pl.concat(frames)


def _by_segment(t: dict[str, pl.DataFrame]) -> Parts:
    """The run filtered to each segment, and the judgments of the queries it places
    there."""
    parts = []
    for value in sorted(t["run"]["segment"].unique().to_list()):
        run = t["run"].filter(pl.col("segment") == value)
        qrels = t["qrels"].join(run.select("query_id").unique(), on="query_id", how="semi")
        parts.append(({"segment": value}, run.drop("segment"), qrels))
    return parts


def _by_system(t: dict[str, pl.DataFrame]) -> Parts:
    """The run filtered to each system, scored against every judgment."""
    return [
        ({"system": value}, t["run"].filter(pl.col("system") == value).drop("system"), t["qrels"])
        for value in sorted(t["run"]["system"].unique().to_list())
    ]


@pytest.mark.parametrize("per_query", [True, False], ids=["per_query", "means"])
@pytest.mark.parametrize("metrics", [EXPOSURE, MIXED], ids=["exposure", "mixed"])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_systems_equal_each_system_alone(metrics: list[str], per_query: bool, seed: int) -> None:
    t = _tables(seed)
    parts = [(v, run.drop("segment"), q) for v, run, q in _by_system(t)]
    want = _alone(parts, metrics, per_query=per_query, groups=t["groups"])
    _equal_on_both_kinds(
        want,
        t["run"].drop("segment"),
        metrics,
        qrels=t["qrels"],
        groups=t["groups"],
        systems="system",
        per_query=per_query,
    )


@pytest.mark.parametrize("per_query", [True, False], ids=["per_query", "means"])
@pytest.mark.parametrize("metrics", [EXPOSURE, MIXED], ids=["exposure", "mixed"])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_by_equals_each_segment_alone(metrics: list[str], per_query: bool, seed: int) -> None:
    # one system: a segment holds the queries the run gives it; the judgments lack the
    # segment, so beside the accuracy metrics unretrieved='drop' scores each segment on
    # the queries it retrieved, and the exposure measures alone (which do not read it)
    # are told each query's segment by queries= and given the retrieved queries'
    # judgments (without either, a judged query a segment lacks is refused:
    # tests/test_exposure_by_round12.py)
    t = _tables(seed)
    t["run"] = t["run"].filter(pl.col("system") == "s0").drop("system")
    want = _alone(
        _by_segment(t),
        metrics,
        per_query=per_query,
        groups=t["groups"],
        **({"unretrieved": "drop"} if metrics is MIXED else {}),
    )
    extra: dict[str, Any] = {"unretrieved": "drop", "qrels": t["qrels"]}
    if metrics is EXPOSURE:
        placed = t["run"].select("query_id", "segment").unique()
        qrels = t["qrels"].join(placed, on="query_id", how="semi")
        extra = {"queries": placed, "qrels": qrels}
    _equal_on_both_kinds(
        want,
        t["run"],
        metrics,
        groups=t["groups"],
        by="segment",
        per_query=per_query,
        **extra,
    )


@pytest.mark.parametrize("per_query", [True, False], ids=["per_query", "means"])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_systems_and_segments_of_sampled_rankings(per_query: bool, seed: int) -> None:
    # a stochastic run (two sampled rankings per query) of two systems in two segments:
    # each (system, segment) its own call; a system is scored on every judged query the
    # run places in a segment (retrieved by either system), one it did not retrieve an
    # empty ranking, as its empty run of that segment alone (queries= tells each
    # query's segment, the judgments lacking it)
    t = _tables(seed, sampled=True)
    pairs = t["run"].select("segment", "query_id").unique()
    parts = []
    for system in ("s0", "s1"):
        for segment in ("0", "1"):
            run = t["run"].filter((pl.col("system") == system) & (pl.col("segment") == segment))
            queries = pairs.filter(pl.col("segment") == segment)
            qrels = t["qrels"].join(queries, on="query_id", how="semi")
            keys = {"system": system, "segment": segment}
            parts.append((keys, run.drop("system", "segment"), qrels))
    want = _alone(parts, EXPOSURE, per_query=per_query, groups=t["groups"])
    _equal_on_both_kinds(
        want,
        t["run"],
        EXPOSURE,
        qrels=t["qrels"].join(pairs, on="query_id", how="semi"),
        queries=pairs,
        groups=t["groups"],
        systems="system",
        by="segment",
        per_query=per_query,
    )


def test_a_segment_of_the_judgments_counts_its_unretrieved_queries(frame_kind: str) -> None:
    # the judgments carry the segment: q2 (judged in segment 'b', retrieved by none)
    # counts there as an empty ranking: ee_loss = the sum of its targets squared
    run = pl.DataFrame(
        {"segment": ["a", "a"], "query_id": ["q1", "q1"], "doc_id": ["x", "y"], "rank": [1, 2]}
    )
    qrels = pl.DataFrame(
        {
            "segment": ["a", "b"],
            "query_id": ["q1", "q2"],
            "doc_id": ["x", "z"],
            "relevance": [1, 1],
        }
    )
    metric = "ee_loss(browsing='rbp')"
    got = _call(frame_kind, run, [metric], qrels=qrels, by="segment", per_query=True)
    # q1: x at position 0 (exposure 1, target 1), y unjudged at 1 (0.5): 0.5²;
    # q2: z's target 1, no exposure: 1²
    assert got.rows() == [("a", "q1", 0.25), ("b", "q2", 1.0)]
    # the same values as the queries= table placing each query
    queries = pl.DataFrame({"query_id": ["q1", "q2"], "segment": ["a", "b"]})
    placed = _call(
        frame_kind, run.drop("segment"), [metric], qrels=qrels.drop("segment"),
        queries=queries, by="segment", per_query=True,
    )  # fmt: skip
    assert_frame_equal(placed, got)


def test_a_system_that_retrieved_no_judged_query(frame_kind: str) -> None:
    # s1 retrieved only an unjudged query: its awrf has no query (num_q 0, null mean)
    # and its ee_loss counts the judged query as an empty ranking, as alone
    run = pl.DataFrame(
        {
            "system": ["s0", "s0", "s1"],
            "query_id": ["q1", "q1", "q9"],
            "doc_id": ["x", "y", "x"],
            "rank": [1, 2, 1],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["x"], "relevance": [1]})
    groups = pl.DataFrame({"doc_id": ["x", "y"], "group": ["g1", "g2"]})
    got = _call(frame_kind, run, ["awrf"], qrels=qrels, groups=groups, systems="system")
    s1 = run.filter(pl.col("system") == "s1")
    alone = irm.evaluate(s1, ["awrf"], qrels=qrels, groups=groups)
    assert got.row(1) == ("s1", *alone.row(0)) == ("s1", 0, None)
    loss = _call(frame_kind, run, ["ee_loss(browsing='rbp')"], qrels=qrels, systems="system")
    assert loss.rows() == [("s0", 1, 0.25), ("s1", 1, 1.0)]


def test_the_mixed_summary_counts_each_route_per_group(frame_kind: str) -> None:
    t = _tables(7)
    got = _call(
        frame_kind, t["run"].drop("segment"), ["ndcg@10", "awrf"], qrels=t["qrels"],
        groups=t["groups"], systems="system",
    )  # fmt: skip
    assert got.columns == ["system", "num_q", "num_q_exposure", "ndcg@10", "awrf"]
    for system in ("s0", "s1"):
        run = t["run"].filter(pl.col("system") == system).drop("system", "segment")
        alone = irm.evaluate(run, ["ndcg@10", "awrf"], qrels=t["qrels"], groups=t["groups"])
        assert got.filter(pl.col("system") == system).drop("system").row(0) == alone.row(0)


def _refusal_run() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": ["a", None],
            "query_id": ["q", "q"],
            "doc_id": ["x", "y"],
            "rank": [1, 2],
        }
    )


QRELS = pl.DataFrame({"query_id": ["q"], "doc_id": ["x"], "relevance": [1]})

REFUSED = [
    (
        "null key",
        {"systems": "system"},
        InvalidValueError,
        "column 'system' of the run has null values; every row needs a system: drop them, "
        "e.g. .drop_nulls('system')",
    ),
    (
        "key is the rank column",
        {"by": "rank"},
        InvalidValueError,
        "by=['rank'] names 'rank', which is the rank column; group by another column, or "
        "pass the rank column's name as rank=",
    ),
    (
        "key is a column of the result",
        {"by": "num_q"},
        InvalidValueError,
        "by=['num_q'] names 'num_q', which is also a column of the result; rename the key "
        "first, e.g. run.rename({'num_q': 'num_q_key'}), and pass by='num_q_key'",
    ),
    (
        "key not in the run",
        {"by": "day"},
        irm.errors.ColumnNotFoundError,
        "'day'",
    ),
]


@pytest.mark.parametrize(("case", "kw", "error", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals(case: str, kw: dict[str, str], error: type[Exception], message: str) -> None:
    run = _refusal_run()
    if case != "null key":
        run = run.with_columns(pl.col("system").fill_null("b"), num_q=pl.lit(1))
    with pytest.raises(error, match=re.escape(message)):
        irm.evaluate(run.lazy(), ["ee_loss"], qrels=QRELS, **kw).collect()  # type: ignore[arg-type]


def test_a_key_of_another_dtype_in_the_judgments_is_refused() -> None:
    run = _refusal_run().with_columns(pl.col("system").fill_null("b"))
    qrels = QRELS.with_columns(system=pl.lit(1))
    with pytest.raises(
        ColumnTypeError,
        match=re.escape(
            "column 'system' has dtype String in the run but Int32 in the judgments; cast "
            "one side to match"
        ),
    ):
        irm.evaluate(run, ["ee_loss"], qrels=qrels, systems="system")


# irm.compare with the exposure tables


def _compare_runs(seed: int) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    t = _tables(seed)
    runs = {
        s: t["run"].filter(pl.col("system") == s).drop("system", "segment") for s in ("s0", "s1")
    }
    return runs, t


def test_compare_takes_groups_and_reads_each_direction() -> None:
    runs, t = _compare_runs(3)
    metrics = ["awrf", "ndcg@10", "ee_loss", "ee_disparity"]
    out = irm.compare(
        runs, metrics, qrels=t["qrels"], groups=t["groups"], baseline="s0", query_set="common"
    )
    assert out["metric"].to_list() == metrics
    # the declared directions: ee_loss and ee_disparity lower is better
    assert out["higher_is_better"].to_list() == [True, True, False, False]
    per_query = irm.compare(
        runs, metrics, qrels=t["qrels"], groups=t["groups"], baseline="s0",
        query_set="common", per_query=True,
    )  # fmt: skip
    # the paired values are each system's per-query values alone, on the queries both
    # systems have a value for
    for system in ("s0", "s1"):
        alone = irm.evaluate(
            runs[system], metrics, qrels=t["qrels"], groups=t["groups"], per_query=True
        )
        column = "value" if system == "s1" else "baseline_value"
        for metric in metrics:
            rows = per_query.filter(pl.col("metric") == metric).select("query_id", column)
            joined = rows.join(alone.select("query_id", metric), on="query_id")
            assert joined.height == rows.height
            assert joined[column].to_list() == joined[metric].to_list()
    # a win of ee_loss is a lower value
    loss = per_query.filter(pl.col("metric") == "ee_loss")
    wins = int((loss["value"] < loss["baseline_value"]).sum())
    assert out.filter(pl.col("metric") == "ee_loss")["wins"].item() == wins


def test_compare_names_query_set_when_a_system_missed_a_query() -> None:
    run = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["x", "x"], "rank": [1, 1]})
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["x", "x"], "relevance": [1, 1]})
    groups = pl.DataFrame({"doc_id": ["x"], "group": ["g"]})
    runs = {"a": run, "b": run.filter(pl.col("query_id") == "q1")}
    with pytest.raises(
        QuerySetError,
        match=re.escape(
            "system 'b' has no value for query 'q2' (1 of 2 queries are missing from some "
            "system); awrf, awrf_ndcg, rnd, rkl and rrd score only the queries a system "
            "retrieved: pass query_set='common' to keep the queries every system has"
        ),
    ):
        irm.compare(runs, ["awrf"], qrels=qrels, groups=groups)


def test_compare_refuses_groups_without_an_exposure_measure() -> None:
    runs, t = _compare_runs(1)
    with pytest.raises(
        irm.errors.MetricParameterError,
        match=re.escape("groups= holds the document groups the exposure measures"),
    ):
        irm.compare(runs, ["ndcg@10"], qrels=t["qrels"], groups=t["groups"])


def test_cli_compare_takes_groups_and_target(tmp_path: Path) -> None:
    runs, t = _compare_runs(3)
    for name, run in runs.items():
        run.write_parquet(tmp_path / f"{name}.parquet")
    t["qrels"].write_parquet(tmp_path / "qrels.parquet")
    t["groups"].write_parquet(tmp_path / "groups.parquet")
    target = pl.DataFrame({"group": ["g0", "g1", "g2", "g9"], "target": [0.4, 0.3, 0.2, 0.1]})
    target.write_csv(tmp_path / "target.csv")
    metrics = ["awrf", "ee_loss"]
    done = irm_in_process(
        "compare", "s0.parquet", "s1.parquet",
        "--qrels", "qrels.parquet", "--groups", "groups.parquet", "--target", "target.csv",
        "--baseline", "s0", "--query-set", "common", "-m", metrics[0], "-m", metrics[1],
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    want = irm.compare(
        runs, metrics, qrels=t["qrels"], groups=t["groups"], target=target, baseline="s0",
        query_set="common",
    )  # fmt: skip
    assert [(r["metric"], r["higher_is_better"]) for r in got] == [
        ("awrf", True),
        ("ee_loss", False),
    ]
    assert [r["delta"] for r in got] == pytest.approx(want["delta"].to_list(), abs=1e-12)


@pytest.mark.parametrize("buckets", [1, 3])
@pytest.mark.parametrize("per_query", [True, False], ids=["per_query", "means"])
def test_by_in_buckets_equals_the_one_plan(buckets: int, per_query: bool) -> None:
    """buckets= splits by query hash; each bucket keys its rankings by segment as the
    one plan does, and the means are taken per segment over every bucket's values
    (queries= places each judged query: the judgments lack the segment)."""
    t = _tables(5)
    run = t["run"].filter(pl.col("system") == "s0").drop("system")
    placed = run.select("query_id", "segment").unique()
    qrels = t["qrels"].join(placed, on="query_id", how="semi")
    kw: dict[str, Any] = {"qrels": qrels, "groups": t["groups"], "by": "segment"}
    kw["queries"] = placed
    one = irm.evaluate(run, EXPOSURE, per_query=per_query, **kw)
    got = irm.evaluate(run, EXPOSURE, per_query=per_query, buckets=buckets, **kw)
    assert_frame_equal(got, one, check_exact=True)


def test_systems_in_buckets_are_refused() -> None:
    t = _tables(5)
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "systems= with the exposure measures runs in one plan, not in buckets: drop "
            "buckets=, or evaluate each system's rows in a call of its own with buckets="
        ),
    ):
        irm.evaluate(
            t["run"].drop("segment"),
            ["ee_loss"],
            qrels=t["qrels"],
            groups=t["groups"],
            systems="system",
            buckets=2,
        )


def test_a_per_query_target_is_refused_with_by() -> None:
    t = _tables(5)
    run = t["run"].filter(pl.col("system") == "s0").drop("system")
    groups = t["groups"].filter(pl.col("group") != "g9")
    target = pl.DataFrame(
        {
            "query_id": [f"q{q}" for q in range(6) for _ in range(3)],
            "group": ["g0", "g1", "g2"] * 6,
            "target": [0.5, 0.25, 0.25] * 6,
        }
    )
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "a per-query target (target= with the column 'query_id') is not available with "
            "by= or systems=: give one target for every query (no 'query_id' column), or "
            "evaluate each segment's rows in a call of its own"
        ),
    ):
        irm.evaluate(run, ["awrf"], qrels=t["qrels"], groups=groups, target=target, by="segment")
