"""Elliot's popularity-bias and novelty metrics (``pop_rsp@k``, ``pop_reo@k``,
``aclt@k``, ``epc@k``, ``efd@k``) on Spark and Dask: every row of a user (run and test
interactions) in one part, the whole training history read by each part; each part
gives its users' counts and sums and the queries its ranking plan evaluates, one task
merges them: one machine's bits, ``num_q`` and warnings."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, MetricParameterError
from tests.test_engines_recsys42 import _engine
from tests.test_engines_recsys_history import TABLES, _warned, covering, one_and_engine

ELLIOT = [
    "pop_rsp@5",
    "pop_rsp(pop_ratio=0.5)@10",
    "pop_reo@5",
    "aclt@5",
    "aclt(pop_ratio=0.3)@2",
    "epc@10",
    "efd@5",
]
_RUN = TABLES["run"].with_columns(score=1.0 / pl.col("rank"))
# the test interactions: every third recommendation, and items the run does not list;
# users u35 to u39 have none (pop_reo, epc and efd leave them out); u90 and u91 are
# judged but not recommended to (counted in num_q, not by Elliot's metrics)
_STRANGERS = pl.DataFrame(
    {"query_id": ["u90", "u91"], "doc_id": ["i1", "i2"], "segment": ["s0", "s1"]}
)
_TEST = (
    pl.concat(
        [
            _RUN.filter(pl.col("rank") % 3 == 1).select("query_id", "doc_id", "segment"),
            _RUN.select("query_id", "segment").unique().with_columns(doc_id=pl.lit("i7")),
        ],
        how="diagonal",
    )
    .filter(pl.col("query_id") < "u35")
    .unique()
    .vstack(_STRANGERS)
    .with_columns(relevance=pl.lit(1))
)
_HISTORY = TABLES["interactions"].drop("segment")

CASES = [
    ("means", {}),
    ("by-score", {"by": "segment", "order": "score"}),
    ("relevance-level", {"relevance_level": 2}),
]
# a covering design: each engine evaluates without by= and by segment (ordered by score);
# relevance_level= on Dask
CASES_COVER = {"spark": ("means", "by-score"), "dask": ("by-score", "relevance-level")}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize(("engine", "case", "options"), covering(CASES, CASES_COVER))
def test_elliot_equals_one_machine(
    engine: str, case: str, options: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    qrels = _TEST
    if case == "relevance-level":  # a few items graded 2, the others not relevant
        qrels = qrels.with_columns(relevance=1 + (pl.col("doc_id") == "i7").cast(pl.Int64))
    tables = {"qrels": qrels, "interactions": _HISTORY}
    one, got = one_and_engine(_engine(engine, request), _RUN, ELLIOT, tables, options)
    assert one.columns[: len(one.columns) - len(ELLIOT)][-1] == "num_q"
    assert got.equals(one), case


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_elliot_warns_and_refuses_as_one_machine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = _engine(engine, request)
    metrics = ["pop_rsp@5", "epc@5"]
    # test interactions whose ids miss the run's: the run retrieves no judged document
    missed = _TEST.with_columns(pl.col("doc_id").str.to_uppercase())
    one = _warned(lambda: irm.evaluate(_RUN, metrics, qrels=missed, interactions=_HISTORY))
    assert any("retrieves no judged document" in text for text in one), one
    got = _warned(
        lambda: back(
            evaluate(frame(_RUN), metrics, qrels=frame(missed), interactions=frame(_HISTORY))
        )
    )
    assert got == one
    # a user lists an item twice: the run's check, in the part that holds the user
    twice = pl.concat([_RUN, _RUN.head(1)])
    with pytest.raises(DuplicateError) as expected:
        irm.evaluate(twice, metrics, qrels=_TEST, interactions=_HISTORY)
    with pytest.raises(DuplicateError, match=f"^{re.escape(str(expected.value))}$"):
        back(evaluate(frame(twice), metrics, qrels=frame(_TEST), interactions=frame(_HISTORY)))
    per_query = (
        "metric 'pop_rsp@5' (Elliot's) describes the whole recommendation table against the "
        "training popularity: evaluate it with per_query=False"
    )
    with pytest.raises(MetricParameterError, match=re.escape(per_query)):
        evaluate(
            frame(_RUN),
            metrics,
            qrels=frame(_TEST),
            interactions=frame(_HISTORY),
            per_query=True,
        )
    no_judgments = "metric 'pop_rsp@5' reads the test interactions as judgments"
    with pytest.raises(MetricParameterError, match=re.escape(no_judgments)):
        evaluate(frame(_RUN), metrics, interactions=frame(_HISTORY))
