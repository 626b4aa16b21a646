"""The same data gives the same bits on every engine: worked examples of the sums and
quotients that once followed the engine or the order rows arrived in.

Two hazards, each shown by a tiny input: polars divides a column by a value that is
the same on every row (a literal, or a mean joined on) as a product with its
reciprocal in the in-memory engine, a unit in the last place off the quotient the
streaming engine gives (``metrics._common.divide`` divides row by row); and a float
sum over rows that arrive in no fixed order (the groups of a query, the units of an
arm) has a last bit that follows the order (``metrics.scope.exact_sum`` is exact).
Each expected value below is Python's correctly rounded arithmetic.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from datetime import datetime

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import SupportWarning
from tests.test_conventions import _synthetic
from tests.test_exposure_by import _by_segment, _tables

ENGINES = ("streaming", "in-memory")


def _both(plan: pl.LazyFrame) -> pl.DataFrame:
    """``plan`` collected on each engine: the same frame, which is returned."""
    streaming, in_memory = (plan.collect(engine=engine) for engine in ENGINES)
    assert streaming.equals(in_memory), (streaming, in_memory)
    return streaming


# snips and sndr per round: r w / mean(w), with the mean weight on every row
LOG = pl.DataFrame(
    {"round_id": [1, 2, 3], "action": ["a"] * 3, "reward": [1.0, 1.0, 0.25],
     "pscore": [0.6, 0.1, 0.1]}
)  # fmt: skip
POLICY = pl.DataFrame(
    {"round_id": [1, 1, 2, 2, 3, 3], "action": ["a", "b"] * 3,
     "prob": [0.7, 0.3, 0.7, 0.3, 0.3, 0.7]}
)  # fmt: skip
Q_HAT = POLICY.select("round_id", "action", q_hat=pl.Series([0.5, 0.25] * 3))
WEIGHTS = [0.7 / 0.6, 0.7 / 0.1, 0.3 / 0.1]
MEAN_WEIGHT = math.fsum(WEIGHTS) / 3  # 3.722222222222222


def test_snips_and_sndr_per_round_are_quotients_on_every_engine() -> None:
    plan = irm.evaluate(
        LOG.lazy(),
        ["snips", "sndr"],
        policy=POLICY.lazy(),
        reward_model=Q_HAT.lazy(),
        per_query=True,
    )
    with pytest.warns(SupportWarning):  # the log never shows action b
        out = _both(plan)
    rewards = LOG["reward"].to_list()
    # r w / mean: 0.3134328358208956 (times the reciprocal: 0.31343283582089554)
    snips = [r * w / MEAN_WEIGHT for r, w in zip(rewards, WEIGHTS, strict=True)]
    assert out["snips"].to_list() == snips
    # sndr: the direct method (sum_a prob q_hat) plus w (r - q_hat(a)) / mean
    dm = [0.7 * 0.5 + 0.3 * 0.25] * 2 + [0.3 * 0.5 + 0.7 * 0.25]
    sndr = [d + w * (r - 0.5) / MEAN_WEIGHT for d, r, w in zip(dm, rewards, WEIGHTS, strict=True)]
    assert out["sndr"].to_list() == sndr


def test_slate_snips_per_round_is_a_quotient_on_every_engine() -> None:
    log = pl.DataFrame(
        {"round_id": [1, 1, 2, 3], "position": [1, 2, 1, 1], "reward": [1.0, 1.0, 1.0, 0.5],
         "pscore": [0.6, 0.6, 0.1, 0.1]}
    )  # fmt: skip
    policy = log.select("round_id", "position", pscore=pl.Series([0.7, 0.7, 0.7, 0.3]))
    weights = [0.7 / 0.6, 0.7 / 0.6, 0.7 / 0.1, 0.3 / 0.1]
    mean = math.fsum(weights) / 4  # 3.083333333333333
    out = _both(irm.evaluate(log.lazy(), ["slate_snips"], policy=policy.lazy(), per_query=True))
    terms = [r * w / mean for r, w in zip(log["reward"], weights, strict=True)]
    # a round's value: the sum of its slots' terms; round 1: 0.7567567567567569
    # (the reciprocal's 0.7567567567567568)
    assert out["slate_snips"].to_list() == [terms[0] + terms[1], terms[2], terms[3]]


def test_ps_precision_per_query_is_a_quotient_on_every_engine() -> None:
    # each query's inverse-propensity share divided by the mean share over queries:
    # q1 and q3 (one relevant document b, propensity 0.7, within @2) alike
    run = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2", "q3"], "doc_id": ["a", "b", "a", "c", "b"],
         "rank": [1, 2, 1, 2, 1]}
    )  # fmt: skip
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q2", "q2", "q3"], "doc_id": ["b", "a", "c", "b"],
         "relevance": [1] * 4}
    )  # fmt: skip
    propensities = pl.DataFrame({"doc_id": ["a", "b", "c"], "propensity": [0.3, 0.7, 0.1]})
    plan = irm.evaluate(
        run.lazy(), ["ps_precision@2"], qrels=qrels, propensities=propensities, per_query=True
    )
    out = _both(plan)
    shares = [1 / 0.7 / 2, (1 / 0.3 + 1 / 0.1) / 2, 1 / 0.7 / 2]  # hits / propensity / k
    assert out["ps_precision@2"][0] == out["ps_precision@2"][2]
    mean = math.fsum(shares) / 3
    assert out["ps_precision@2"].to_list() == pytest.approx([s / mean for s in shares], 1e-15)


def _identical_queries() -> pl.DataFrame:
    """A run of forty identical queries, ten documents each, by score."""
    docs = [f"d{i}" for i in range(10)]
    queries = [f"q{q:02d}" for q in range(40)]
    return pl.DataFrame(
        {
            "query_id": [q for q in queries for _ in docs],
            "doc_id": docs * 40,
            "score": [10.0 - i for i in range(10)] * 40,
        }
    )


#: A query's three judgment groups (or preference groups) score 1/10, 1/10 and 4/10:
#: their mean is 0.20000000000000004 added in that order and 0.19999999999999998 as
#: 0.4 + 0.1 + 0.1; the exact sum's is the first.
GROUP_MEAN = math.fsum([0.1, 0.1, 0.4]) / 3


def test_judgment_group_means_are_exact_on_every_engine() -> None:
    run = _identical_queries()
    relevant = {"a": ["d0"], "b": ["d5"], "c": ["d1", "d3", "d6", "d9"]}  # P@10 .1 .1 .4
    qrels = pl.DataFrame(
        [(q, g, d, 1) for q in run["query_id"].unique() for g, ds in relevant.items() for d in ds],
        schema=["query_id", "jg", "doc_id", "relevance"],
        orient="row",
    )
    out = _both(irm.evaluate_jg(run.lazy(), ["P_avgjg_10"], qrels_jg=qrels.lazy()))
    assert out["P_avgjg_10"].to_list() == [GROUP_MEAN] * 40
    # the mean over queries: the same values added one after another, divided once
    total = 0.0
    for _ in range(40):
        total += GROUP_MEAN
    mean = _both(irm.evaluate(run.lazy(), ["P_avgjg_10"], qrels_jg=qrels.lazy()))
    assert mean["P_avgjg_10"].item() == total / 40  # 0.20000000000000012


def test_preference_group_means_are_exact_in_every_build() -> None:
    # prefs_avgjg: each group's fulfilled over possible preferences, averaged over the
    # query's groups (1/10, 1/10, 4/10); computed when the plan is built, so each build
    # must give the same bits, not only each engine
    run = _identical_queries()
    groups = {  # (relevant, not relevant)
        "a": (["d4", "d6"], ["d0", "d1", "d2", "d3", "d5"]),
        "b": (["d4", "d6"], ["d0", "d1", "d2", "d3", "d5"]),
        "c": (["d1", "d6"], ["d0", "d2", "d3", "d4", "d5"]),
    }
    rows = [
        (q, g, "s", d, level)
        for q in run["query_id"].unique()
        for g, (rel, non) in groups.items()
        for level, ds in ((1.0, rel), (0.0, non))
        for d in ds
    ]
    prefs = pl.DataFrame(
        rows, schema=["query_id", "jg", "jsg", "doc_id", "rel_level"], orient="row"
    )
    for _ in range(3):
        out = _both(irm.evaluate_prefs(run.lazy(), ["prefs_avgjg"], prefs=prefs.lazy()))
        assert out["prefs_avgjg"].to_list() == [GROUP_MEAN] * 40
        pairs = _both(irm.evaluate_prefs(run.lazy(), ["prefs_pair_ret"], prefs=prefs.lazy()))
        assert pairs["prefs_pair_ret"].n_unique() == 1


def _click_log() -> pl.DataFrame:
    """250 sessions of 1 to 11 impressions, two arms by user (three sessions each),
    clicks at random, shuffled."""
    rng = np.random.default_rng(1)
    rows = []
    for s in range(250):
        for r in range(1, int(rng.integers(1, 12)) + 1):
            rows.append(
                (f"s{s:05d}", f"u{s // 3:04d}", "A" if (s // 3) % 2 == 0 else "B", r,
                 bool(rng.random() < 0.5 / r))
            )  # fmt: skip
    log = pl.DataFrame(
        rows, schema=["session_id", "user_id", "arm", "position", "clicked"], orient="row"
    )
    start = datetime(2026, 3, 2, 10)
    return log.with_columns(timestamp=pl.lit(start)).sample(fraction=1.0, shuffle=True, seed=1)


def test_ab_test_gives_the_same_bits_on_every_engine() -> None:
    # an arm's moments (mean, variances, covariance of the per-unit ratios) are sums
    # over units the streaming engine adds in no fixed order, however they are sorted
    log = _click_log()
    results = []
    for engine in ENGINES:
        with pl.Config(engine_affinity=engine):
            results.append(irm.ab_test(log, ["ctr@10", "abandonment", "click_mrr"]))
    assert results[0].equals(results[1]), results


def test_overlap_and_unexpectedness_divide_by_k() -> None:
    # 3 and 2 of 5 shared: 3 / 5 is 0.6 (3 * (1 / 5) is 0.6000000000000001), and
    # RePlay's unexpectedness 1 - 0.6 (a query alone divides either way: two here)
    run = pl.DataFrame(
        {"query_id": [1] * 5 + [2] * 5, "doc_id": [*range(1, 6)] * 2, "rank": [*range(1, 6)] * 2}
    )
    reference = run.with_columns(pl.Series("doc_id", [1, 2, 3, 8, 9, 1, 2, 7, 8, 9]))
    plan = irm.evaluate(
        run.lazy(), ["overlap@5", "unexpectedness@5"], reference=reference.lazy(), per_query=True
    )
    out = _both(plan)
    assert out["overlap@5"].to_list() == [3 / 5, 2 / 5]
    assert out["unexpectedness@5"].to_list() == [1.0 - 3 / 5, 1.0 - 2 / 5]


def test_catalogue_quotients_per_system_on_every_engine() -> None:
    # ten history users, each saw item 0; the catalogue is items 0..9. System a
    # recommends item 0 to users 0..6, system b items 3, 4, 5 to users 0..2: coverage
    # 1 / 10 and 3 / 10; RePlay's novelty: a's users saw their item (0), the three
    # users without a list count 1: 3 / 10; b's nine of ten users: 9 / 10
    history = pl.DataFrame(
        {"query_id": list(range(10)) + [0] * 9, "doc_id": [0] * 10 + list(range(1, 10))}
    )
    recommendations = pl.DataFrame(
        {
            "system": ["a"] * 7 + ["b"] * 3,
            "query_id": [*range(7), 0, 1, 2],
            "doc_id": [0] * 7 + [3, 4, 5],
            "rank": [1] * 10,
        }
    )
    metrics = ["catalog_coverage@1", "gini_index@1", "novelty(kind='replay')@1"]
    plan = irm.evaluate(
        recommendations.lazy(), metrics, interactions=history.lazy(), systems="system"
    )
    out = _both(plan)
    assert out["catalog_coverage@1"].to_list() == [1 / 10, 3 / 10]
    assert out["novelty(kind='replay')@1"].to_list() == [3 / 10, 9 / 10]
    # b: three items once each of ten; sum_i (2 i - n - 1) x_i / (n - 1) / sum x
    weighted = sum((2.0 * place - 10 - 1.0) for place in (8, 9, 10)) / 3
    assert out["gini_index@1"].to_list() == [1.0, weighted / 9.0]


def _running(values: list[float]) -> tuple[float, float]:
    """The mean and the population deviation as the summaries add: one value after
    another from the least (whatever the queries' order), divided once."""
    total = 0.0
    for value in sorted(values):
        total += value
    mean = total / len(values)
    squares = 0.0
    for square in sorted((value - mean) ** 2 for value in values):
        squares += square
    return mean, math.sqrt(squares / len(values))


def test_agg_std_is_summed_from_the_least_on_every_engine() -> None:
    run, qrels = _synthetic(400, 60)
    per_query = _both(irm.evaluate(run.lazy(), ["ndcg@10"], qrels=qrels.lazy(), per_query=True))
    _, std = _running(per_query.sort("query_id")["ndcg@10"].to_list())
    out = _both(irm.evaluate(run.lazy(), ["ndcg(agg='std')@10"], qrels=qrels.lazy()))
    assert out["ndcg(agg='std')@10"].item() == std


def test_neighbour_means_are_summed_from_the_least() -> None:
    # the exact neighbours, 30 per query, and an approximate search that finds 20 of
    # them (scores a little off) and 5 others; the mean over queries adds them from
    # the least, however the plan's join leaves the rows
    rng = np.random.default_rng(3)
    exact, approx = [], []
    for q in range(300):
        distance = np.sort(rng.random(30)) * 10
        docs = rng.permutation(1000)[:30]
        exact += [(q, int(d), float(-x)) for d, x in zip(docs, distance, strict=True)]
        for i in rng.permutation(30)[:20]:
            approx.append((q, int(docs[i]), float(-distance[i] * (1 + rng.normal() * 1e-3))))
        approx += [(q, 1000 + j, float(-rng.random() * 10)) for j in range(5)]
    schema = ["query_id", "doc_id", "score"]
    exact_frame = pl.DataFrame(exact, schema=schema, orient="row")
    approx_frame = pl.DataFrame(approx, schema=schema, orient="row")
    metrics = ["neighbor_recall(epsilon=0)@10", "neighbor_recall_rel(epsilon=0.1)@7"]
    given = {"neighbors": exact_frame.lazy()}
    per_query = _both(irm.evaluate(approx_frame.lazy(), metrics, **given, per_query=True))
    means = _both(irm.evaluate(approx_frame.lazy(), metrics, **given))
    for metric in metrics:
        mean, _ = _running(per_query.sort("query_id")[metric].to_list())
        assert means[metric].item() == mean, metric


def _in_one_row_batches(script: str) -> str:
    """``script``'s output, run in a process of its own whose polars streams one-row
    batches (POLARS_IDEAL_MORSEL_SIZE is read when polars starts)."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "POLARS_IDEAL_MORSEL_SIZE": "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_reference_measures_do_not_depend_on_the_batch_size() -> None:
    # With one-row batches (a process of its own): rbo_repro_eval's weights p^d once
    # came from polars' power of a constant, which is repeated multiplication on a
    # one-row batch (0.9 ** 4: 0.6561000000000001 there, 0.6561 elsewhere), and its
    # normaliser and overlap's k divided as reciprocals
    script = textwrap.dedent(
        """
        import polars as pl, polars_irmetrics as irm
        run = pl.DataFrame({"query_id": [1] * 5 + [2] * 5,
                            "doc_id": [0, 5, 1, 2, 3, 12, 13, 14, 15, 16],
                            "rank": [1, 2, 3, 4, 5] * 2})
        ref = pl.DataFrame({"query_id": [1] * 5 + [2] * 5,
                            "doc_id": [30, 31, 32, 33, 5, 12, 34, 13, 35, 36],
                            "rank": [1, 2, 3, 4, 5] * 2})
        metrics = ["rbo_repro_eval@5", "rbo_repro_eval(p=0.8)@5", "rbo_repro_eval(p=0.99)@3",
                   "overlap@5", "unexpectedness@5"]
        plan = irm.evaluate(run.lazy(), metrics, reference=ref.lazy(), per_query=True)
        streaming = plan.collect(engine="streaming")
        in_memory = plan.collect(engine="in-memory")
        print("differ:", [c for c in metrics if not streaming[c].equals(in_memory[c])])
        print("overlap:", streaming["overlap@5"].to_list())
        """
    )
    out = _in_one_row_batches(script)
    assert "differ: []" in out, out
    assert "overlap: [0.2, 0.4]" in out, out


def test_rank_biased_centroid_fusion_does_not_depend_on_the_batch_size() -> None:
    # rbc's weight (1 - phi) phi^(p - 1) once came from polars' power of a constant,
    # repeated multiplication on a one-row batch: 0.8 ** 4 = 0.40960000000000013 there,
    # 0.4096000000000001 elsewhere (a process of its own, one-row batches)
    script = textwrap.dedent(
        """
        import polars as pl, polars_irmetrics as irm
        docs = [f"d{i:02d}" for i in range(12)]
        a = pl.LazyFrame({"query_id": "q", "doc_id": docs, "score": [12.0 - i for i in range(12)]})
        b = pl.LazyFrame({"query_id": "q", "doc_id": docs[:1], "score": [1.0]})
        plan = irm.fuse({"a": a, "b": b}, "rbc", phi=0.8)
        print("equal:", plan.collect(engine="in-memory").equals(plan.collect(engine="streaming")))
        """
    )
    out = _in_one_row_batches(script)
    assert "equal: True" in out, out


@pytest.mark.parametrize("seed", [3, 93])
def test_segregation_measures_alone_and_by_segment_on_every_engine(seed: int) -> None:
    # rND/rKL/rRD's quotients once multiplied by a reciprocal where polars held the
    # divisor as one scalar (a ranking of one row per cut-off group, a normaliser joined
    # from one row): in-memory, rkl of one ranking alone was 0.31681969333661086 where
    # the streaming engine and the call by segment gave ...60864 (seed 3), and rrd by
    # segment 0.6666666666666664 where alone it was ...665 (seed 93)
    tables = _tables(seed)
    run = tables["run"].filter(pl.col("system") == "s0").drop("system")
    groups = tables["groups"].lazy()
    measures = ["rnd", "rkl", "rrd"]
    by = _both(irm.evaluate(run.lazy(), measures, groups=groups, by="segment", per_query=True))
    for values, part, _ in _by_segment({**tables, "run": run}):
        alone = _both(irm.evaluate(part.lazy(), measures, groups=groups, per_query=True))
        mine = by.filter(pl.col("segment") == values["segment"]).drop("segment")
        assert mine.sort("query_id").equals(alone.sort("query_id")), values
