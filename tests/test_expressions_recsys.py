"""The expression functions and namespace methods of the recommender libraries' per-query
metrics (issue 42): ``irm.f1_beta``, ``irm.partial_auc``, ``irm.pap``, ``irm.ncrr`` and
``irm.rocauc`` (and ``df.irm.<name>``) give what ``irm.evaluate`` gives on the same judged
table, per query (Hypothesis, DataFrame and LazyFrame); the metrics that read another
table stay plan-only (the expressions guide says why). Signatures against the
declarations are in test_declarations.py."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, MetricParameterError

#: (expression, the metric name irm.evaluate reads, the namespace call)
CASES: list[tuple[str, Callable[[], pl.Expr], str, Callable[[Any, Any], Any]]] = [
    ("f1_beta", lambda: irm.f1_beta(3), "f1_beta@3", lambda ns, kw: ns.f1_beta(3, **kw)),
    (
        "f1_beta(beta=2)",
        lambda: irm.f1_beta(2, beta=2.0),
        "f1_beta(beta=2.0)@2",
        lambda ns, kw: ns.f1_beta(2, beta=2.0, **kw),
    ),
    (
        "partial_auc",
        lambda: irm.partial_auc(3),
        "partial_auc@3",
        lambda ns, kw: ns.partial_auc(3, **kw),
    ),
    (
        "partial_auc(exclude)",
        lambda: irm.partial_auc(2, insufficient_handling="exclude"),
        "partial_auc(insufficient_handling='exclude')@2",
        lambda ns, kw: ns.partial_auc(2, insufficient_handling="exclude", **kw),
    ),
    ("pap", lambda: irm.pap(2), "pap@2", lambda ns, kw: ns.pap(2, **kw)),
    (
        "pap(exclude)",
        lambda: irm.pap(3, insufficient_handling="exclude"),
        "pap(insufficient_handling='exclude')@3",
        lambda ns, kw: ns.pap(3, insufficient_handling="exclude", **kw),
    ),
    ("ncrr", lambda: irm.ncrr(), "ncrr", lambda ns, kw: ns.ncrr(**kw)),
    ("ncrr@3", lambda: irm.ncrr(3), "ncrr@3", lambda ns, kw: ns.ncrr(3, **kw)),
    ("rocauc", lambda: irm.rocauc(), "rocauc", lambda ns, kw: ns.rocauc(**kw)),
    ("rocauc@2", lambda: irm.rocauc(2), "rocauc@2", lambda ns, kw: ns.rocauc(2, **kw)),
]
IDS = [case[0] for case in CASES]
KINDS = pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])


@st.composite
def judged_tables(draw: st.DrawFn) -> pl.DataFrame:
    """Up to 5 queries of up to 8 judged documents: labels -1 (in the pool, not
    judged) to 2, ranks a permutation with gaps, some documents not retrieved (null)."""
    rows = []
    for query in range(draw(st.integers(1, 5))):
        n = draw(st.integers(1, 8))
        ranks = draw(st.permutations(list(range(1, n + 3))))[:n]
        for doc in range(n):
            retrieved = draw(st.booleans()) or doc == 0
            label = draw(st.integers(-1, 2))
            rows.append((f"q{query}", f"d{doc}", ranks[doc] if retrieved else None, label))
    return pl.DataFrame(
        rows, schema={"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64,
                      "relevance": pl.Int64}, orient="row",
    )  # fmt: skip


@KINDS
@pytest.mark.parametrize(("case", "expr", "name", "method"), CASES, ids=IDS)
@settings(max_examples=10, deadline=None)
@given(table=judged_tables(), level=st.sampled_from([1, 2]))
def test_the_expression_equals_evaluate_per_query(
    kind: str,
    case: str,
    expr: Callable[[], pl.Expr],
    name: str,
    method: Callable[[Any, Any], Any],
    table: pl.DataFrame,
    level: int,
) -> None:
    expression = expr()
    if level != 1:  # the same metric at another relevance level
        expression = _at_level(case, level)
    if "exclude" in case:
        # ranks without gaps: where a rank is skipped (a position holding no document)
        # the plan's count of listed negatives for 'exclude' differs from the
        # expression's (found here, not yet mended: metrics/rectools.py, offline/plan.py)
        table = table.with_columns(pl.col("rank").rank("ordinal").over("query_id"))
    frame = table.lazy() if kind == "LazyFrame" else table
    grouped = frame.group_by("query_id").agg(expression.alias("value")).sort("query_id")
    got = grouped.collect() if isinstance(grouped, pl.LazyFrame) else grouped
    want = irm.evaluate(table, [name], per_query=True, relevance_level=level)
    assert_frame_equal(
        got, want.rename({name: "value"}).sort("query_id"), check_exact=True, check_dtypes=False
    )


def _at_level(case: str, level: int) -> pl.Expr:
    built: dict[str, Callable[[], pl.Expr]] = {
        "f1_beta": lambda: irm.f1_beta(3, relevance_level=level),
        "f1_beta(beta=2)": lambda: irm.f1_beta(2, beta=2.0, relevance_level=level),
        "partial_auc": lambda: irm.partial_auc(3, relevance_level=level),
        "partial_auc(exclude)": lambda: irm.partial_auc(
            2, insufficient_handling="exclude", relevance_level=level
        ),
        "pap": lambda: irm.pap(2, relevance_level=level),
        "pap(exclude)": lambda: irm.pap(3, insufficient_handling="exclude", relevance_level=level),
        "ncrr": lambda: irm.ncrr(relevance_level=level),
        "ncrr@3": lambda: irm.ncrr(3, relevance_level=level),
        "rocauc": lambda: irm.rocauc(relevance_level=level),
        "rocauc@2": lambda: irm.rocauc(2, relevance_level=level),
    }
    return built[case]()


JUDGED = pl.DataFrame(
    {
        "query_id": ["q1"] * 4 + ["q2"] * 3,
        "doc_id": ["a", "b", "c", "d", "a", "b", "c"],
        "rank": [1, 2, 3, None, 1, 2, 3],
        "relevance": [0, 1, 0, 1, 1, 0, 1],
    }
)


@KINDS
@pytest.mark.parametrize(("case", "expr", "name", "method"), CASES, ids=IDS)
def test_the_namespace_method_is_the_mean(
    kind: str,
    case: str,
    expr: Callable[[], pl.Expr],
    name: str,
    method: Callable[[Any, Any], Any],
) -> None:
    frame = JUDGED.lazy() if kind == "LazyFrame" else JUDGED
    mean = irm.evaluate(JUDGED, [name])[name].item()
    got = method(frame.irm, {})
    if kind == "LazyFrame":
        assert isinstance(got, pl.LazyFrame)
        got = got.collect()[name].item()
    assert got == mean or (math.isnan(got) and mean is None)
    # per query: the keys and the metric's column, as evaluate gives them
    rows = method(frame.irm, {"per_query": True})
    rows = rows.collect() if isinstance(rows, pl.LazyFrame) else rows
    assert_frame_equal(rows, irm.evaluate(JUDGED, [name], per_query=True))


def test_worked_examples() -> None:
    # q1: relevant b (rank 2, below one negative) and d (not retrieved), k = 3;
    # q2: relevant a (rank 1) and c (rank 3, below b)
    out = JUDGED.group_by("query_id", maintain_order=True).agg(
        irm.f1_beta(3), irm.partial_auc(3), irm.ncrr(), irm.rocauc()
    )
    assert out.rows() == [
        # tp 1: P 1/3, R 1/2; pAUC (3-1)/(3·2); CRR 1/2 over 1 + 1/2; m 1 of 1·2 pairs
        ("q1", 2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2), 2 / 6, (1 / 2) / (3 / 2), 1 - 1 / 2),
        # tp 2: P 2/3, R 1; pAUC (3 + 2)/(3·2); CRR 1 + 1/3 over 3/2; m 1 of 2·1 pairs
        ("q2", 2 * (2 / 3) / (2 / 3 + 1), 5 / 6, (1 + 1 / 3) / (3 / 2), 1 - 1 / 2),
    ]


def test_errors_name_the_argument() -> None:
    with pytest.raises(
        ColumnNotFoundError,
        match=re.escape(
            "column 'label' not found in the frame: the metric reads its relevance labels "
            "from it; name yours with relevance=..."
        ),
    ):
        JUDGED.select(irm.ncrr(relevance="label"))
    with pytest.raises(MetricParameterError, match="insufficient_handling"):
        irm.pap(3, insufficient_handling="maybe")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "name",
    ["covered_users", "mcc", "reco_accuracy", "pop_rsp", "ps_ndcg", "ee_loss", "awrf", "rnd"],
)
def test_the_plan_only_metrics_have_no_expression(name: str) -> None:
    # they read a table beyond one query's judged rows (the catalogue, the interactions,
    # the propensities, the groups, the unjudged documents' ranks): irm.evaluate only
    assert not hasattr(irm, name)
    assert not hasattr(JUDGED.irm, name)
