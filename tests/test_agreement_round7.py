"""Round 7 of the rank similarities, ``reproducibility`` and ``system_agreement``.

1. Tied scores are broken by the document id as text whatever its dtype (integer ids 9
   and 10 tied: 9 first, as trec_eval, repro_eval's ``break_ties`` and the ranking
   metrics), and KTU sorts the union as text: integer and string ids give the same
   values, on every path and engine, equal to the references.
2. ``reproducibility``'s t-tests run run by run, as repro_eval's ``statistics.ttest``
   (``tests/data/agreement/round7_ttest.json``, made by ``make_round7_ttest.py`` there
   with repro_eval and pytrec_eval).
3. ``reproducibility`` refuses runs it cannot pair topic by topic, and empty runs, in
   its own words (no numpy or polars error).
4. ``system_agreement`` refuses null system names and query ids, a non-numeric value
   column and a result of one query.
5. RBO with ties: the same bits on every call and path (eager, lazy, buckets).
"""

from __future__ import annotations

import functools
import json
import math
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    CoverageWarning,
    InvalidValueError,
    QuerySetError,
)

from .test_engines_recsys42 import PARTS, _engine

LAZY = pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])


def _per_query(
    run: pl.DataFrame, reference: pl.DataFrame, metrics: list[str], lazy: bool = False, **kw: Any
) -> pl.DataFrame:
    given: tuple[Any, Any] = (run.lazy(), reference.lazy()) if lazy else (run, reference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        out = irm.evaluate(given[0], metrics, reference=given[1], per_query=True, **kw)
    frame = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert isinstance(frame, pl.DataFrame)
    return frame.sort("query_id")


# ------------------------------------------------------------- 1. ties broken as text


def _rows(ids: list[Any], values: list[float], column: str = "score") -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q"] * len(ids), "doc_id": ids, column: values})


TIE_CASES = [
    # run [9, 10] tied, reference [9]: 9 first (as text), so the top 1 is shared
    (
        "tied 9 and 10",
        ([9, 10], [1.0, 1.0], "score"),
        ([9], [1.0], "score"),
        {"jaccard@1": 1.0, "overlap@1": 1.0, "rbo_repro_eval(p=0.8)@1": 1.0},
    ),
    # run 9, 100, 10 tied (text order, descending): the top 2 is {9, 100}, the
    # reference's [100, 9]; KTU's union sorted as text: ['100', '9']. rbo@2 reads the
    # run's tie group whole (it crosses position 2; round 18): Corsi & Urbano's
    # rbo([{9, 10, 100}], [100, 9], 0.9), ext: A_1 = 1/3, A_2 = (2/3 + 2/3)/2 = 2/3,
    # A_3 = (2 + (3 - 2) 2/3)/3 = 8/9 and its tail 8/9 p^4/(1 - p): (1/9)(0.3 + 0.54 +
    # 0.648 + 5.832) = 7.32/9 (it was 0.95, rbo([{9, 100}], [100, 9]): the ids chose
    # which two of the three the cut kept). (tau_ap@2 was -1.0 here, the ids'
    # tie-break order read as a reversal, tests/test_agreement_round17.py)
    (
        "tied 9, 10 and 100",
        ([9, 10, 100], [1.0, 1.0, 1.0], "score"),
        ([100, 9, 10], [3.0, 2.0, 1.0], "score"),
        {
            "jaccard@2": 1.0,
            "overlap@2": 1.0,
            "rbo(p=0.9)@2": 7.32 / 9,
            "rbo_repro_eval(p=0.9)@2": 0.9 / 1.9,
            "ktu@2": -1.0,
        },
    ),
    # by rank, KTU's union sorted as text ['10', '2', '9']: repro_eval's _KTU gives -1
    (
        "ktu union",
        ([10, 9, 2], [1, 2, 3], "rank"),
        ([9, 10, 2], [1, 2, 3], "rank"),
        {"ktu@3": -1.0},
    ),
]


@LAZY
@pytest.mark.parametrize(
    ("name", "run", "reference", "want"), TIE_CASES, ids=[c[0] for c in TIE_CASES]
)
def test_integer_ids_break_ties_as_text(
    name: str,
    run: tuple[list[Any], list[float], str],
    reference: tuple[list[Any], list[float], str],
    want: dict[str, float],
    lazy: bool,
) -> None:
    metrics = list(want)
    got = {}
    for cast in (int, str):
        frames = [
            _rows([cast(i) for i in ids], values, column)
            for ids, values, column in (run, reference)
        ]
        got[cast] = _per_query(frames[0], frames[1], metrics, lazy)
    assert got[int].equals(got[str])
    row = got[int].row(0, named=True)
    for metric, value in want.items():
        assert row[metric] == pytest.approx(value, rel=1e-15), metric


def _text_order(pairs: list[tuple[Any, float]]) -> list[Any]:
    """repro_eval's break_ties: score descending, equal scores by the id descending as text."""
    by_id = sorted(pairs, key=lambda x: str(x[0]), reverse=True)
    return [d for d, _ in sorted(by_id, key=lambda x: -x[1])]


def _clarke_rbo(run: list[Any], ideal: list[Any], p: float, depth: int) -> float:
    """repro_eval's ``_rbo`` (Clarke et al.), as written there."""
    run_set, ideal_set = set(), set()
    score = normalizer = 0.0
    weight = 1.0
    for i in range(depth):
        if i < len(run):
            run_set.add(run[i])
        if i < len(ideal):
            ideal_set.add(ideal[i])
        score += weight * len(ideal_set & run_set) / (i + 1)
        normalizer += weight
        weight *= p
    return score / normalizer


def _ktu(orig: list[Any], rep: list[Any]) -> float | None:
    """repro_eval's ``_KTU`` of one topic: positions in the union sorted as text."""
    union = sorted({str(d) for d in orig + rep})
    tau = stats.kendalltau([union.index(str(d)) for d in orig], [union.index(str(d)) for d in rep])
    return None if math.isnan(tau.statistic) else round(float(tau.statistic), 14)


def _tied_runs(seed: int, ids: Callable[[int], Any]) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """A run and a reference of 25 queries, ids 0..19 (9 beside 10 and 11...) with tied
    integer scores, the two rankings of a query equally long (repro_eval's KTU pairs
    them whole)."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list[tuple[str, Any, float]]] = {"run": [], "reference": []}
    lists = {}
    for q in range(25):
        n = int(rng.integers(1, 15))
        for side in rows:
            docs = rng.choice(20, n, replace=False)
            scores = rng.integers(0, 4, n).astype(float)
            rows[side] += [
                (f"q{q:02d}", ids(int(d)), float(s)) for d, s in zip(docs, scores, strict=True)
            ]
            lists[(q, side)] = _text_order(list(zip(docs.tolist(), scores.tolist(), strict=True)))
    schema = ["query_id", "doc_id", "score"]
    run, reference = (pl.DataFrame(rows[s], schema=schema, orient="row") for s in rows)
    return run, reference, lists


SIMILARITIES = [
    "rbo",
    "rbo(p=0.8, kind='res', ties='b')@10",
    "rbo(ties='w', kind='min')@6",
    "jaccard@5",
    "overlap@5",
    "kendall_tau@10",
    "tau_ap@10",
    "ktu@8",
    "rbo_repro_eval(p=0.9)@8",
]


SEEDS = [0, 1, 2]


@functools.cache
def _tied_values(lazy: bool) -> dict[str, pl.DataFrame]:
    """The per-query values of every seed's runs (:func:`_tied_runs`), with integer
    ("int") and string ("str") doc ids, each from ONE evaluation of the seeds' queries
    together, their ids prefixed by the seed ("2|q07"): a query's values depend on its
    own rows only, and an evaluation's cost is its plan, not these few rows."""
    out: dict[str, pl.DataFrame] = {}
    for name, ids in (("int", int), ("str", lambda d: str(d))):
        runs, references = [], []
        for seed in SEEDS:
            run, reference, _ = _tied_runs(seed, ids)
            tag = (pl.lit(f"{seed}|") + pl.col("query_id")).alias("query_id")
            runs.append(run.with_columns(tag))
            references.append(reference.with_columns(tag))
        out[name] = _per_query(pl.concat(runs), pl.concat(references), SIMILARITIES, lazy)
    return out


def _of_seed(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """The rows of one seed's queries in :func:`_tied_values`, with their own query ids."""
    prefix = f"{seed}|"
    own = frame.filter(pl.col("query_id").str.starts_with(prefix))
    return own.with_columns(pl.col("query_id").str.strip_prefix(prefix)).sort("query_id")


@LAZY
@pytest.mark.parametrize("seed", SEEDS)
def test_integer_and_string_ids_give_the_same_bits_and_the_references(
    seed: int, lazy: bool
) -> None:
    _, _, lists = _tied_runs(seed, int)
    ints = _of_seed(_tied_values(lazy)["int"], seed)
    assert ints["query_id"].to_list() == [f"q{q:02d}" for q in range(25)]
    assert ints.equals(_of_seed(_tied_values(lazy)["str"], seed))
    for row in ints.iter_rows(named=True):
        q = int(row["query_id"][1:])
        run, ref = lists[(q, "run")], lists[(q, "reference")]
        want_ktu = _ktu(ref[:8], run[:8])
        assert (row["ktu@8"] is None) == (want_ktu is None), q
        if want_ktu is not None:
            assert row["ktu@8"] == pytest.approx(want_ktu, abs=1e-12), q
        clarke = _clarke_rbo(run[:8], ref[:8], 0.9, 8)
        assert row["rbo_repro_eval(p=0.9)@8"] == pytest.approx(clarke, rel=1e-12), q
        shared = len(set(run[:5]) & set(ref[:5]))
        assert row["jaccard@5"] == pytest.approx(shared / len(set(run[:5]) | set(ref[:5])))
        assert row["overlap@5"] == pytest.approx(shared / 5)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_break_integer_ties_as_text(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, frame, back = _engine(engine, request)
    run, reference, _ = _tied_runs(3, int)
    run_s, ref_s, _ = _tied_runs(3, lambda d: str(d))
    want = _per_query(run_s, ref_s, SIMILARITIES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        got = back(
            evaluate(
                frame(run),
                SIMILARITIES,
                reference=frame(reference),
                per_query=True,
                partitions=PARTS,
            )
        ).sort("query_id")
    assert got.cast(want.schema).equals(want)


# ------------------------------------------------- 2. the t-tests, run by run (repro_eval)

PEERS = json.loads(
    (Path(__file__).parent / "data" / "agreement" / "round7_ttest.json").read_text()
)
TTEST_CASES = [case for case in PEERS if case != "qrels"]


def _frame(rows: list[list[Any]], lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
    frame = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    return frame.lazy() if lazy else frame


@LAZY
@pytest.mark.parametrize("case", TTEST_CASES)
def test_t_tests_are_repro_evals_run_by_run(case: str, lazy: bool) -> None:
    runs = PEERS[case]["runs"]
    qrels = pl.DataFrame(PEERS["qrels"], schema=["query_id", "doc_id", "relevance"], orient="row")
    out = irm.reproducibility(
        {"baseline": _frame(runs["ob"], lazy), "advanced": _frame(runs["oa"], lazy)},
        {"baseline": _frame(runs["rb"], lazy), "advanced": _frame(runs["ra"], lazy)},
        ["P_1", "P_3"],
        qrels=qrels.lazy() if lazy else qrels,
    )
    tests = out.filter(pl.col("measure").str.starts_with("p_"))
    got = {f"{m}|{r}|{metric}": v for m, metric, r, v in tests.rows()}
    assert sorted(got) == sorted(PEERS[case]["p"])
    for key, want in PEERS[case]["p"].items():
        if want is None:
            assert math.isnan(got[key]), key
        else:
            assert got[key] == pytest.approx(want, rel=1e-12, abs=1e-15), key


def test_a_baseline_reproduced_exactly_has_p_one_whatever_the_advanced_run() -> None:
    # the probe's case: the whole matrix of both runs was not identical, so the
    # baseline's p_paired was NaN; repro_eval tests each run alone: 1
    p = PEERS["baseline_exact"]["p"]
    assert p["p_paired|baseline|P_1"] == p["p_paired|baseline|P_3"] == 1.0
    assert p["p_paired|advanced|P_3"] is not None
    assert p["p_paired|advanced|P_3"] < 1.0


# ------------------------------------------------- 3. reproducibility: what it refuses

QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2", "q3"], "doc_id": ["a", "b", "a", "c", "b"],
     "relevance": [1, 0, 1, 1, 1]}
)  # fmt: skip
RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2", "q3", "q3"], "doc_id": ["a", "b", "a", "c", "b", "a"],
     "score": [2.0, 1.0, 1.0, 2.0, 2.0, 1.0]}
)  # fmt: skip
NO_Q3 = RUN.filter(pl.col("query_id") != "q3")
FLIPPED = RUN.with_columns(
    pl.when(pl.col("query_id") == "q2").then(-pl.col("score")).otherwise(pl.col("score"))
)
_DROPPED = " (unretrieved='drop' leaves out a judged topic a run did not retrieve)"
_FIX = (
    "pass unretrieved='zero' (the default: a judged topic a run did not retrieve scores 0), "
    "or give both runs the same topics"
)
_PAIRS = (
    "the two runs topic by topic, as repro_eval does, and a topic one of them lacks has no pair"
)
_PAIRED = f"rmse, nrmse and p_paired pair {_PAIRS}"
_ER = f"er pairs {_PAIRS}"


def _unpaired(topic: str, has: str, lacks: str, why: str, measures: str) -> str:
    return f"topic {topic!r} has a value for {has} and not for {lacks}{why}; {measures}: {_FIX}"


_OB, _OA, _RB = "original['baseline']", "original['advanced']", "reproduced['baseline']"

REFUSED = [
    (
        "reproduction lacks a topic",
        {"baseline": RUN},
        {"baseline": NO_Q3},
        {"unretrieved": "drop"},
        _unpaired("q3", _OB, _RB, _DROPPED, _PAIRED),
    ),
    (
        "original lacks a topic",
        {"baseline": NO_Q3},
        {"baseline": RUN},
        {"unretrieved": "drop"},
        _unpaired("q3", _RB, _OB, _DROPPED, _PAIRED),
    ),
    (
        "advanced lacks a topic the baseline has",
        {"baseline": RUN, "advanced": NO_Q3},
        {"baseline": FLIPPED, "advanced": NO_Q3},
        {"unretrieved": "drop"},
        _unpaired("q3", _OB, _OA, _DROPPED, _ER),
    ),
    (
        "topics differ by unjudged='zero'",
        {"baseline": RUN},
        {
            "baseline": RUN.vstack(
                pl.DataFrame({"query_id": ["q9"], "doc_id": ["a"], "score": [1.0]})
            )
        },
        {"unjudged": "zero"},
        _unpaired("q9", _RB, _OB, "", _PAIRED),
    ),
    (
        "empty reproduction",
        {"baseline": RUN},
        {"baseline": RUN.clear()},
        {},
        "reproduced['baseline'] has no per-topic value: the run is empty, or qrels= judges "
        "none of its topics; give the run's rankings of the judged topics",
    ),
    (
        "empty original advanced run",
        {"baseline": RUN, "advanced": RUN.clear()},
        {"baseline": RUN, "advanced": FLIPPED},
        {},
        "original['advanced'] has no per-topic value: the run is empty, or qrels= judges "
        "none of its topics; give the run's rankings of the judged topics",
    ),
    (
        "empty replication",
        {"baseline": RUN, "advanced": FLIPPED},
        {"baseline": RUN, "advanced": RUN.clear()},
        {"qrels_reproduced": QRELS},
        "reproduced['advanced'] has no per-topic value: the run is empty, or "
        "qrels_reproduced= judges none of its topics; give the run's rankings of the "
        "judged topics",
    ),
]


@LAZY
@pytest.mark.parametrize(
    ("name", "original", "reproduced", "options", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_reproducibility_refuses_runs_it_cannot_pair(
    name: str,
    original: dict[str, pl.DataFrame],
    reproduced: dict[str, pl.DataFrame],
    options: dict[str, Any],
    message: str,
    lazy: bool,
) -> None:
    def given(runs: dict[str, pl.DataFrame]) -> dict[str, Any]:
        return {k: v.lazy() if lazy else v for k, v in runs.items()}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
            irm.reproducibility(
                given(original), given(reproduced), ["P_1"], qrels=QRELS, **options
            )


def _value(out: pl.DataFrame, measure: str, run: str | None) -> float:
    rows = out.filter(
        (pl.col("measure") == measure)
        & (pl.col("run").is_null() if run is None else pl.col("run") == run)
    )
    assert rows.height == 1
    value: float = rows["value"][0]
    return value


def test_a_topic_missing_by_default_is_scored_zero_as_before() -> None:
    # unretrieved='zero' (the default): q3 scores 0 in the reproduction, paired as before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        out = irm.reproducibility({"baseline": RUN}, {"baseline": NO_Q3}, ["P_1"], qrels=QRELS)
    original, reproduced = np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.0])
    assert _value(out, "p_paired", "baseline") == stats.ttest_rel(original, reproduced).pvalue
    assert _value(out, "p_unpaired", "baseline") == stats.ttest_ind(original, reproduced).pvalue
    assert _value(out, "rmse", "baseline") == pytest.approx(math.sqrt(1 / 3), rel=1e-15)


def test_replicability_tests_each_run_on_its_own_topics() -> None:
    # another collection judges q1 and q2 only: each run's unpaired test reads its own
    # topics (3 original, 2 replicated), the baseline's and the advanced run's apart
    other = QRELS.filter(pl.col("query_id") != "q3").with_columns(
        pl.when(pl.col("doc_id") == "c").then(0).otherwise(pl.col("relevance")).alias("relevance")
    )
    out = irm.reproducibility(
        {"baseline": RUN, "advanced": FLIPPED},
        {"baseline": FLIPPED, "advanced": RUN},
        ["P_1"],
        qrels=QRELS,
        qrels_reproduced=other,
        unretrieved="drop",
    )
    scores = {
        (name, side): irm.evaluate(frame, ["P_1"], qrels=q, per_query=True).sort("query_id")["P_1"]
        for name, q, runs in (
            ("original", QRELS, {"baseline": RUN, "advanced": FLIPPED}),
            ("reproduced", other, {"baseline": FLIPPED, "advanced": RUN}),
        )
        for side, frame in runs.items()
    }
    for side in ("baseline", "advanced"):
        o, r = scores[("original", side)].to_numpy(), scores[("reproduced", side)].to_numpy()
        assert (len(o), len(r)) == (3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = stats.ttest_ind(o, r).pvalue
        got = _value(out, "p_unpaired", side)
        assert (math.isnan(got) and math.isnan(want)) or got == want, side


# ------------------------------------------------------- 4. system_agreement: refusals

A = pl.DataFrame(
    {"system": ["x", "y", "z"] * 2, "query_id": ["q1"] * 3 + ["q2"] * 3,
     "ndcg": [0.5, 0.4, 0.3, 0.6, 0.2, 0.1]}
)  # fmt: skip
NULL_SYSTEM = A.with_columns(
    pl.when(pl.col("system") == "z").then(None).otherwise(pl.col("system")).alias("system")
)
NULL_QUERY = A.with_columns(
    pl.when(pl.col("query_id") == "q2").then(None).otherwise(pl.col("query_id")).alias("query_id")
)
ONE_QUERY = A.filter(pl.col("query_id") == "q1")
_ONE = (
    "holds 1 query ('q1'): each pair of systems is compared by a paired test over the "
    "queries, which needs at least two queries that every system is scored on; evaluate "
    "the systems on more queries"
)

SA_REFUSED: list[tuple[str, pl.DataFrame, pl.DataFrame, dict[str, Any], type, str]] = [
    (
        "null system",
        NULL_SYSTEM,
        A,
        {},
        InvalidValueError,
        "column 'system' of a has 2 null values; every row needs a system name: fill or "
        "drop those rows",
    ),
    (
        "null query",
        A,
        NULL_QUERY,
        {},
        InvalidValueError,
        "column 'query_id' of b has 3 null values; every row needs a query id: fill or drop "
        "those rows",
    ),
    (
        "one null query",
        A.with_columns(
            pl.when(pl.int_range(pl.len()) == 0)
            .then(None)
            .otherwise(pl.col("query_id"))
            .alias("query_id")
        ),
        A,
        {},
        InvalidValueError,
        "column 'query_id' of a has 1 null value; every row needs a query id: fill or drop "
        "those rows",
    ),
    (
        "string values",
        A.with_columns(pl.col("ndcg").cast(pl.String)),
        A,
        {},
        ColumnTypeError,
        "column 'ndcg' of a has dtype String; its values are averaged and tested as "
        "numbers: cast it, e.g. pl.col('ndcg').cast(pl.Float64)",
    ),
    (
        "string values of b",
        A,
        A.rename({"ndcg": "P@5"}).with_columns(pl.col("P@5").cast(pl.String)),
        {"metric": "ndcg", "metric_b": "P@5"},
        ColumnTypeError,
        "column 'P@5' of b has dtype String; its values are averaged and tested as "
        "numbers: cast it, e.g. pl.col('P@5').cast(pl.Float64)",
    ),
    *[
        (f"one query, test={t}", ONE_QUERY, ONE_QUERY, {"test": t}, QuerySetError, f"a {_ONE}")
        for t in ("t", "wilcoxon", "randomization", "bootstrap")
    ],
    ("one query in b", A, ONE_QUERY, {}, QuerySetError, f"b {_ONE}"),
    ("one query, per pair", ONE_QUERY, A, {"per_pair": True}, QuerySetError, f"a {_ONE}"),
]


@LAZY
@pytest.mark.parametrize(
    ("name", "a", "b", "options", "error", "message"), SA_REFUSED, ids=[c[0] for c in SA_REFUSED]
)
def test_system_agreement_refuses_in_its_own_words(
    name: str,
    a: pl.DataFrame,
    b: pl.DataFrame,
    options: dict[str, Any],
    error: type,
    message: str,
    lazy: bool,
) -> None:
    given = (a.lazy(), b.lazy()) if lazy else (a, b)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        irm.system_agreement(*given, higher_is_better=True, **options)


@pytest.mark.parametrize("dtype", [pl.Int64, pl.Int8, pl.UInt32, pl.Float32, pl.Boolean])
def test_system_agreement_reads_every_numeric_column_as_before(dtype: pl.DataType) -> None:
    values = A.with_columns(
        (pl.col("ndcg") * 10).round() >= 4
        if dtype == pl.Boolean
        else (pl.col("ndcg") * 10).round()
    )
    typed = values.with_columns(pl.col("ndcg").cast(dtype))
    want = irm.system_agreement(values.with_columns(pl.col("ndcg").cast(pl.Float64)), A)
    assert irm.system_agreement(typed, A).equals(want)


def test_two_queries_and_the_swap_plot_of_one_query_are_accepted() -> None:
    out = irm.system_agreement(A, A.with_columns(-pl.col("ndcg")), higher_is_better=True)
    assert out.select("systems", "pairs", "swaps").row(0) == (3, 3, 3)
    pytest.importorskip("matplotlib")
    from polars_irmetrics.comparison import plot

    figure = plot.plot_swaps(
        ONE_QUERY,
        ONE_QUERY.with_columns(-pl.col("ndcg")),
        metric="ndcg",
        higher_is_better=True,
        higher_is_better_b=True,
    )
    assert figure.axes[0].get_title() == "system orderings: 3 of 3 pairs swapped"


# ---------------------------------------------------------- 5. RBO: the same bits


def _probe_runs() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The probe's seed-6 runs (/tmp/probe_agree/nondet.py): two systems, tied scores; its
    query q12 of system B gave two values 1 ulp apart on repeated lazy calls."""
    rng = np.random.default_rng(6)
    r: list[tuple[str, str, str, float]] = []
    f: list[tuple[str, str, float]] = []
    for system in ("A", "B"):
        for q in range(30):
            n = int(rng.integers(1, 15))
            d, s = rng.choice(20, n, replace=False), rng.integers(0, 4, n)
            r += [(system, f"q{q:02d}", f"d{x}", float(y)) for x, y in zip(d, s, strict=True)]
    for q in range(32):
        n = int(rng.integers(1, 15))
        d, s = rng.choice(20, n, replace=False), rng.integers(0, 4, n)
        f += [(f"q{q:02d}", f"d{x}", float(y)) for x, y in zip(d, s, strict=True)]
    run = pl.DataFrame(r, schema=["system", "query_id", "doc_id", "score"], orient="row")
    return run, pl.DataFrame(f, schema=["query_id", "doc_id", "score"], orient="row")


RBO_TIED = ["rbo", "rbo(p=0.7, kind='res', ties='b')", "rbo(ties='w', kind='max')@7"]


@pytest.mark.parametrize("per_query", [True, False], ids=["per_query", "means"])
def test_rbo_with_ties_has_the_same_bits_on_every_call_and_path(per_query: bool) -> None:
    run, reference = _probe_runs()
    lazy = run.lazy(), reference.lazy()
    eager = run, reference
    given: dict[str, tuple[tuple[Any, Any], dict[str, Any]]] = {
        "eager": (eager, {}),
        "lazy": (lazy, {}),
        "buckets=2": (eager, {"buckets": 2}),
        "buckets='auto'": (eager, {"buckets": "auto"}),
    }
    first: pl.DataFrame | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        for _ in range(4):
            for name, ((r, f), extra) in given.items():
                out = irm.evaluate(
                    r, RBO_TIED, reference=f, systems="system", per_query=per_query, **extra
                )
                out = out.collect() if isinstance(out, pl.LazyFrame) else out
                out = out.sort("system", "query_id") if per_query else out.sort("system")
                first = out if first is None else first
                assert out.equals(first), name
    if per_query:
        assert first is not None
        q12 = first.filter((pl.col("system") == "B") & (pl.col("query_id") == "q12")).row(
            0, named=True
        )
        # Corsi & Urbano's rbo.py (ties='a', p=0.9, ext) of that query: 0.4755964600024997
        assert q12["rbo"] == pytest.approx(0.4755964600024997, rel=1e-15)
