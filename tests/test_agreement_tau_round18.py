"""Rank agreement, round 18: the correlations null for their ties are warned of.

``tau_ap`` (``ties='a'``, the default: the reference is the truth, without ties) is null
on a query where the reference ties shared documents, and ``kendall_tau`` and
``tau_ap(ties='b')`` where a side ties every shared document: such a query is left out
of the mean, and a reference tied on every query gave a null mean, in silence. One
:class:`~polars_irmetrics.errors.IrmWarning` per call now names each metric, how many
queries, the first, and the fix for ``tau_ap``: the same on every path (a DataFrame, a
LazyFrame, buckets=, Spark, Dask), once (not once per bucket or part).
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

from .helpers import engine_io

# q1: the run a > b > c, the reference a = b > c: the reference ties shared documents
# q2: both a > b > c: every correlation 1
# q3: the run a > b, the reference a = b: the reference ties every shared document
# q4: the run a = b, the reference a > b: the run ties every shared document
RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 2 + ["q4"] * 2,
        "doc_id": ["a", "b", "c", "a", "b", "c", "a", "b", "a", "b"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 2.0, 1.0, 1.0, 1.0],
    }
)
REFERENCE = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 2 + ["q4"] * 2,
        "doc_id": ["a", "b", "c", "a", "b", "c", "a", "b", "a", "b"],
        "score": [1.0, 1.0, 0.5, 3.0, 2.0, 1.0, 1.0, 1.0, 2.0, 1.0],
    }
)

HEAD = (
    "rank correlations are null where tie groups leave no order to compare, and those "
    "queries are left out of the mean (num_q still counts them): "
)
TAU_AP = (
    "{label!r} on {n} of the {total} queries (first: {first}), where the reference ties "
    "shared documents (equal scores): ties='a' (the default) reads the reference as the "
    "truth, which has no ties; pass {fix}, which reads ties on both sides"
)
SIDE = (
    "{label!r} on {n} of the {total} queries (first: {first}), where the run or the "
    "reference ties every shared document (one score)"
)

# (metrics, options, the per-query values, the warning or None)
CASES: list[tuple[list[str], dict[str, Any], dict[str, list[Any]], str | None]] = [
    (
        # tau_ap: null on q1 and q3 (the reference ties a and b); q2 1, q4 0 (the run's
        # tie averaged over its two orders: (1 + -1) / 2); the mean (1 + 0) / 2 = 0.5
        ["tau_ap"],
        {},
        {"tau_ap": [None, 1.0, None, 0.0]},
        HEAD + TAU_AP.format(label="tau_ap", n=2, total=4, first="'q1'", fix="tau_ap(ties='b')"),
    ),
    (
        # beside kendall_tau@10 (null on q3 and q4, a side tied throughout): one warning
        # naming both, the cutoff kept in the fix. kendall_tau of q1: the pairs (a, b)
        # tied in the reference, (a, c) and (b, c) concordant: 2 / sqrt(3 * 2)
        ["tau_ap@10", "kendall_tau@10"],
        {},
        {
            "tau_ap@10": [None, 1.0, None, 0.0],
            "kendall_tau@10": [2.0 / 6.0**0.5, 1.0, None, None],
        },
        HEAD
        + TAU_AP.format(label="tau_ap@10", n=2, total=4, first="'q1'", fix="tau_ap(ties='b')@10")
        + "; "
        + SIDE.format(label="kendall_tau@10", n=2, total=4, first="'q3'"),
    ),
    (
        # ties='b' reads q1 (0.5: tests/test_agreement_round18.py's worked value), null
        # where a side ties both documents (q3, q4)
        ["tau_ap(ties='b')"],
        {},
        {"tau_ap(ties='b')": [0.5, 1.0, None, None]},
        HEAD + SIDE.format(label="tau_ap(ties='b')", n=2, total=4, first="'q3'"),
    ),
    (
        # by rank there are no ties (the ties broken a before b on both sides: every
        # query's two orders alike): no null, no warning
        ["tau_ap", "kendall_tau"],
        {"order": "rank"},
        {"tau_ap": [1.0, 1.0, 1.0, 1.0], "kendall_tau": [1.0, 1.0, 1.0, 1.0]},
        None,
    ),
]


def _ranked(frame: pl.DataFrame) -> pl.DataFrame:
    """Ranks from the scores, equal scores ranked in the rows' order (a before b)."""
    return frame.with_columns(
        pl.col("score").rank("ordinal", descending=True).over("query_id").cast(pl.Int64)
        .alias("rank")
    )  # fmt: skip


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, IrmWarning) and str(w.message).startswith(HEAD)
    ]


@pytest.mark.parametrize("path", ["frame", "lazy", "buckets"])
@pytest.mark.parametrize(("metrics", "options", "values", "expected"), CASES)
def test_ties_null_warned_once_on_every_path(
    path: str,
    metrics: list[str],
    options: dict[str, Any],
    values: dict[str, list[Any]],
    expected: str | None,
) -> None:
    run, reference = RUN, REFERENCE
    if options.get("order") == "rank":
        run, reference = _ranked(RUN), _ranked(REFERENCE)
    given: dict[str, Any] = dict(options)
    if path == "buckets":
        given["buckets"] = 2
    for per_query in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = irm.evaluate(
                run if path == "frame" else run.lazy(),
                metrics,
                reference=reference if path == "frame" else reference.lazy(),
                per_query=per_query,
                **given,
            )
            if isinstance(out, pl.LazyFrame):
                out = out.collect()
        assert _said(caught) == ([] if expected is None else [expected]), (path, per_query)
        if per_query:
            want = pl.DataFrame({"query_id": ["q1", "q2", "q3", "q4"], **values})
            assert out.sort("query_id").equals(want.cast(out.schema)), out
        else:
            assert out["num_q"].to_list() == [4]


def test_a_reference_tied_on_every_query_gives_a_null_mean_and_says_why() -> None:
    # q1 and q3 only: the reference ties a and b in both, so tau_ap's mean is null
    run = RUN.filter(pl.col("query_id").is_in(["q1", "q3"]))
    reference = REFERENCE.filter(pl.col("query_id").is_in(["q1", "q3"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(run, ["tau_ap"], reference=reference)
    assert out.rows() == [(2, None)]
    assert _said(caught) == [
        HEAD + TAU_AP.format(label="tau_ap", n=2, total=2, first="'q1'", fix="tau_ap(ties='b')")
    ]


def test_the_first_query_is_named_with_its_group() -> None:
    # two systems against one reference: the rows are (system, query); system B's q3
    # comes after system A's q1 and q3 in the keys' order, so the first is A's q1
    run = pl.concat(
        [RUN.with_columns(pl.lit(s).alias("system")) for s in ("B", "A")], how="vertical"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(run, ["tau_ap"], reference=REFERENCE, systems="system")
    assert out.sort("system")["tau_ap"].to_list() == [0.5, 0.5]
    assert _said(caught) == [
        HEAD
        + TAU_AP.format(
            label="tau_ap",
            n=4,
            total=8,
            first="'q1' (system='A')",
            fix="tau_ap(ties='b')",
        )
    ]


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_warn_of_ties_once_for_the_whole_run(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # two parts: the queries of the warning are counted over both, one warning per call,
    # the words of one machine's
    evaluate, frame, back = engine_io(engine, request)
    metrics, _, values, expected = CASES[1]
    for per_query in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = back(
                evaluate(
                    frame(RUN),
                    metrics,
                    reference=frame(REFERENCE),
                    partitions=2,
                    per_query=per_query,
                )
            )
        assert _said(caught) == [expected], per_query
        if per_query:
            want = pl.DataFrame({"query_id": ["q1", "q2", "q3", "q4"], **values})
            assert got.sort("query_id").equals(want.cast(got.schema))
        else:
            whole = irm.evaluate(RUN, metrics, reference=REFERENCE)
            assert got.cast(whole.schema).equals(whole)
