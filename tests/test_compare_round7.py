"""Comparison, round 7: the query sets of the exposure measures beside the ranking metrics.

``compare(query_set='common' | 'error')`` evaluates with ``unretrieved='drop'`` and
``systems=``, which leaves a judged query a system did not retrieve out of the ranking
metrics; ``ee_loss``, ``ee_disparity`` and ``ee_relevance`` score every judged query, one
a system did not retrieve as an empty ranking. Before: ``query_set='common'`` kept that
query in ``ee_loss`` alone (q3, which B never retrieved, paired at 1.0625 against A's
0.3125), ``'error'`` accepted the systems' different query sets, and beside ``ndcg@10``
both refused the call (``per-query value of 'ndcg@10' for system 'B' on query 'q3' is
NaN``), a refusal the user could not avoid; beside ``rnd`` an unjudged query both systems
retrieved was refused alike. Each system's values are now those of
:func:`~polars_irmetrics.evaluate` of its run alone on the queries of the query set,
computed here independently (each run and the judgments filtered to those queries).
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.options import QuerySet
from polars_irmetrics.errors import InvalidValueError, QuerySetError

pytestmark = pytest.mark.filterwarnings(
    "ignore::polars_irmetrics.errors.CoverageWarning", "ignore::polars_irmetrics.IrmWarning"
)

#: A retrieves the judged q1, q2, q3; B retrieves q1, q2 and the unjudged q4, not the
#: judged q3; C retrieves q1, q2, q3 and the unjudged q5.
A = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 2 + ["q3"] * 2,
        "doc_id": ["a", "b", "c", "a", "e", "f", "g"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    }
)
B = pl.DataFrame(
    {
        "query_id": ["q1"] * 2 + ["q2"] * 3 + ["q4"] * 2,
        "doc_id": ["b", "a", "e", "f", "a", "a", "b"],
        "score": [2.0, 1.0, 3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
C = pl.DataFrame(
    {
        "query_id": ["q1"] * 2 + ["q2"] * 2 + ["q3"] * 3 + ["q5"],
        "doc_id": ["c", "b", "f", "a", "b", "g", "f", "a"],
        "score": [2.0, 1.0, 2.0, 1.0, 3.0, 2.0, 1.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["b", "c", "a", "f", "g", "b"],
        "relevance": [1, 2, 1, 1, 2, 1],
    }
)
GROUPS = pl.DataFrame({"doc_id": list("abcdefg"), "group": ["x", "y", "x", "y", "x", "y", "x"]})
RUNS = {"A": A, "B": B, "C": C}
JUDGED = ["q1", "q2", "q3"]

RANKING = ["ndcg@10", "P@2"]
EXPOSURE = ["ee_loss", "ee_disparity", "ee_relevance"]
MIXED = ["ndcg@10", "ee_loss"]
MIXED_ALL = ["P@2", "ee_relevance", "ee_disparity", "awrf", "awrf_ndcg"]

MISSING = "system 'B' has no value for query 'q3' (1 of 3 queries are missing from some system)"
COMMON_HINT = "pass query_set='common' to keep the queries every system has"
AWRF_HINT = (
    "awrf, awrf_ndcg, rnd, rkl and rrd score only the queries a system retrieved: " + COMMON_HINT
)


def _retrieved(run: pl.DataFrame) -> set[str]:
    return set(run.get_column("query_id").to_list())


def _query_set(runs: dict[str, pl.DataFrame], query_set: str) -> list[str]:
    """The documented query set: every judged query, or those every system retrieved."""
    if query_set == "judged":
        return JUDGED
    common = set(JUDGED)
    for run in runs.values():
        common &= _retrieved(run)
    return sorted(common)


#: _alone's values by (the run's rows, metric, queries, query set): the reference of a
#: run is the same for every input kind (and test) that compares with it, computed once
_ALONE: dict[tuple[Any, ...], list[float]] = {}


def _alone(run: pl.DataFrame, metric: str, queries: list[str], query_set: str) -> list[float]:
    """``evaluate`` of one run alone, one metric, on the queries of the query set: under
    'judged' with its defaults (a missed judged query an empty ranking), else the run
    and the judgments filtered to those queries first (once per distinct input)."""
    key = (tuple(run.rows()), tuple(run.columns), metric, tuple(queries), query_set)
    if key not in _ALONE:
        _ALONE[key] = _alone_once(run, metric, queries, query_set)
    return list(_ALONE[key])


def _alone_once(run: pl.DataFrame, metric: str, queries: list[str], query_set: str) -> list[float]:
    keep = pl.col("query_id").is_in(queries)
    tables: dict[str, Any] = {"qrels": QRELS}
    if metric.startswith(("ee_", "awrf")):
        tables["groups"] = GROUPS
    if query_set != "judged":
        run, tables["qrels"] = run.filter(keep), QRELS.filter(keep)
    out = irm.evaluate(run, [metric], **tables, per_query=True)
    assert isinstance(out, pl.DataFrame)
    out = out.filter(keep).sort("query_id")
    assert out.get_column("query_id").to_list() == queries
    return out.get_column(metric).to_list()


def _as(kind: str, frame: pl.DataFrame) -> Any:
    return frame.lazy() if kind == "LazyFrame" else frame


def _compare(
    kind: str, runs: dict[str, pl.DataFrame], metrics: list[str], query_set: QuerySet, **kw: Any
) -> pl.DataFrame:
    tables: dict[str, Any] = {"qrels": _as(kind, QRELS)}
    if any(m.startswith(("ee_", "awrf")) for m in metrics):
        tables["groups"] = _as(kind, GROUPS)
    given: Any = {name: _as(kind, run) for name, run in runs.items()}
    if kind == "long":  # one frame with a system column
        given = pl.concat([run.with_columns(system=pl.lit(n)) for n, run in runs.items()])
    return irm.compare(
        given, metrics, **tables, baseline="A", query_set=query_set, per_query=True, **kw
    )


def _check_values(
    out: pl.DataFrame, runs: dict[str, pl.DataFrame], metrics: list[str], query_set: str
) -> None:
    queries = _query_set(runs, query_set)
    for metric in metrics:
        for name in runs:
            if name == "A":
                continue
            rows = out.filter(metric=metric, system=name).sort("query_id")
            assert rows.get_column("query_id").to_list() == queries, (metric, name)
            got = rows.get_column("value").to_list()
            assert got == _alone(runs[name], metric, queries, query_set), (metric, name)
            base = rows.get_column("baseline_value").to_list()
            assert base == _alone(runs["A"], metric, queries, query_set), (metric, "A")


KINDS = ["DataFrame", "LazyFrame", "long"]

#: (metrics, query_set, the refusal or None): A, B and C differ in the judged queries
#: they retrieved (B missed q3), so 'error' refuses; 'judged' refuses the measures with
#: no value for a missed query (awrf, awrf_ndcg).
CASES: list[tuple[list[str], QuerySet, str | None]] = [
    (RANKING, "judged", None),
    (RANKING, "common", None),
    (RANKING, "error", f"{MISSING}; {COMMON_HINT}"),
    (EXPOSURE, "judged", None),
    # before: q3 kept, B's ee_loss 1.0625 (an empty ranking) paired with A's 0.3125
    (EXPOSURE, "common", None),
    # before: accepted, the systems' different query sets unseen
    (EXPOSURE, "error", f"{MISSING}; {COMMON_HINT}"),
    (["awrf"], "judged", f"{MISSING}; {AWRF_HINT}"),
    (["awrf"], "common", None),
    (["awrf"], "error", f"{MISSING}; {COMMON_HINT}"),
    (MIXED, "judged", None),
    # before: "per-query value of 'ndcg@10' for system 'B' on query 'q3' is NaN"
    (MIXED, "common", None),
    (MIXED, "error", f"{MISSING}; {COMMON_HINT}"),
    (MIXED_ALL, "judged", f"{MISSING}; {AWRF_HINT}"),
    (MIXED_ALL, "common", None),
    (MIXED_ALL, "error", f"{MISSING}; {COMMON_HINT}"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("metrics", "query_set", "refused"),
    CASES,
    ids=[f"{'+'.join(m)}-{q}" for m, q, _ in CASES],
)
def test_each_system_is_scored_as_evaluate_scores_its_run_alone_on_the_query_set(
    kind: str, metrics: list[str], query_set: QuerySet, refused: str | None
) -> None:
    if refused is not None:
        with pytest.raises(QuerySetError, match=f"^{re.escape(refused)}$"):
            _compare(kind, RUNS, metrics, query_set)
        return
    out = _compare(kind, RUNS, metrics, query_set)
    _check_values(out, RUNS, metrics, query_set)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("metrics", [RANKING, EXPOSURE, MIXED, MIXED_ALL])
def test_error_accepts_systems_that_retrieved_the_same_judged_queries(
    kind: str, metrics: list[str]
) -> None:
    # B retrieves q3 too (and still the unjudged q4, which no judged measure scores)
    extra = pl.DataFrame({"query_id": ["q3", "q3"], "doc_id": ["g", "a"], "score": [2.0, 1.0]})
    runs = {"A": A, "B": pl.concat([B, extra]), "C": C}
    out = _compare(kind, runs, metrics, "error")
    _check_values(out, runs, metrics, "judged")
    _check_values(out, runs, metrics, "common")


def test_the_tests_pair_the_common_queries_alone() -> None:
    out = irm.compare(RUNS, MIXED, qrels=QRELS, groups=GROUPS, baseline="A", query_set="common")
    assert out.get_column("n").to_list() == [2, 2, 2, 2]
    ee = out.filter(metric="ee_loss", system="B").row(0, named=True)
    b = _alone(B, "ee_loss", ["q1", "q2"], "common")
    a = _alone(A, "ee_loss", ["q1", "q2"], "common")
    assert ee["mean"] == pytest.approx(sum(b) / 2, rel=1e-15)
    assert ee["baseline_mean"] == pytest.approx(sum(a) / 2, rel=1e-15)
    assert (ee["wins"], ee["ties"], ee["losses"]) == (1, 0, 1)


def test_ids_of_two_integer_widths_are_matched_by_value() -> None:
    # two parts (Int32 and Int64 query ids): the retrieved queries matched by value
    def ints(run: pl.DataFrame, dtype: type[pl.DataType]) -> pl.DataFrame:
        return run.with_columns(pl.col("query_id").str.slice(1).cast(dtype))

    runs = {"A": ints(A, pl.Int32), "B": ints(B, pl.Int64), "C": ints(C, pl.Int64)}
    qrels = ints(QRELS, pl.Int64)
    out = irm.compare(
        runs, MIXED, qrels=qrels, groups=GROUPS, baseline="A", query_set="common", per_query=True
    )
    assert sorted(set(out.get_column("query_id").to_list())) == [1, 2]
    got = out.filter(metric="ee_loss", system="B").sort("query_id").get_column("value")
    assert got.to_list() == _alone(B, "ee_loss", ["q1", "q2"], "common")


# ------------------------------------------------- rnd beside the ranking metrics

_DOCS = [f"d{i}" for i in range(12)]  # rnd reads rankings of 10 documents and more
_GROUPS12 = pl.DataFrame(
    {"doc_id": _DOCS, "group": ["x" if i % 3 == 0 else "y" for i in range(12)]}
)
_QRELS12 = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q3"],
        "doc_id": ["d0", "d4", "d2", "d5"],
        "relevance": [1, 2, 1, 1],
    }
)


def _rotated(queries: list[str], shift: int) -> pl.DataFrame:
    rows = []
    for j, query in enumerate(queries):
        order = _DOCS[shift + j :] + _DOCS[: shift + j]
        rows += [(query, doc, float(12 - i)) for i, doc in enumerate(order)]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
def test_an_unjudged_query_every_system_retrieved_is_left_out_beside_rnd(kind: str) -> None:
    # both retrieve the unjudged q5, which rnd scores and ndcg@10 does not; before:
    # "per-query value of 'ndcg@10' for system 'A' on query 'q5' is NaN"
    a, b = _rotated(["q1", "q2", "q3", "q5"], 0), _rotated(["q1", "q2", "q4", "q5"], 3)
    out = irm.compare(
        {"A": _as(kind, a), "B": _as(kind, b)},
        ["ndcg@10", "rnd"],
        qrels=_as(kind, _QRELS12),
        groups=_as(kind, _GROUPS12),
        query_set="common",
        per_query=True,
    )
    keep = pl.col("query_id").is_in(["q1", "q2"])
    for metric in ("ndcg@10", "rnd"):
        rows = out.filter(metric=metric).sort("query_id")
        assert rows.get_column("query_id").to_list() == ["q1", "q2"]
        for column, run in (("value", b), ("baseline_value", a)):
            tables: dict[str, Any] = {"groups": _GROUPS12} if metric == "rnd" else {}
            if metric != "rnd":
                tables["qrels"] = _QRELS12.filter(keep)
            alone = irm.evaluate(run.filter(keep), [metric], **tables, per_query=True)
            assert isinstance(alone, pl.DataFrame)
            expected = alone.sort("query_id").get_column(metric).to_list()
            assert rows.get_column(column).to_list() == expected, (metric, column)
    with pytest.raises(QuerySetError, match=f"^{re.escape(f'{MISSING}; {AWRF_HINT}')}$"):
        irm.compare({"A": a, "B": b}, ["ndcg@10", "rnd"], qrels=_QRELS12, groups=_GROUPS12)


# ------------------------------------------------------------- what is still refused


@pytest.mark.parametrize("query_set", ["judged", "common", "error"])
def test_unretrieved_is_compare_s_own(query_set: QuerySet) -> None:
    message = (
        "compare sets unretrieved= itself (the systems are its groups, and query_set= "
        "chooses the queries); drop unretrieved=..."
    )
    given: dict[str, Any] = {"unretrieved": "drop"}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare(RUNS, MIXED, qrels=QRELS, groups=GROUPS, query_set=query_set, **given)
