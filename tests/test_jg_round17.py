"""Judgment groups, round 17: ``evaluate_jg`` gives per-query values by default
(``per_query=True`` is its default, not the caller's), so a metric that sets ``agg=``
is refused with the fix that works there: pass ``per_query=False``. The refusal said
"drop per_query=True for the summary", which the caller never passed; the same words
now serve ``evaluate``, where per_query=True was given."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import MetricParameterError

RUN = pl.DataFrame(
    {"query_id": ["q1"] * 2 + ["q2"] * 2, "doc_id": ["d1", "d2"] * 2, "score": [2.0, 1.0] * 2}
)
# q1: alice's AP 1, bob's AP 1/2, their mean 0.75; q2: one group, AP 1/2
QRELS_JG = pl.DataFrame(
    {
        "query_id": ["q1"] * 4 + ["q2"] * 2,
        "jg": ["alice", "alice", "bob", "bob", "a", "a"],
        "doc_id": ["d1", "d2", "d1", "d2", "d1", "d2"],
        "relevance": [1, 0, 0, 1, 0, 1],
    }
)
REFUSED = (
    "metric \"map(agg='median')\" summarizes its per-query values with agg='median', but "
    "per_query=True gives the per-query values themselves, which agg= does not change, so "
    "agg= would be ignored: drop agg= (e.g. 'map'), or pass per_query=False for the summary"
)


def test_evaluate_jg_tells_the_fix_that_works_with_its_default() -> None:
    with pytest.raises(MetricParameterError) as caught:
        irm.evaluate_jg(RUN, ["map(agg='median')"], qrels_jg=QRELS_JG)
    assert str(caught.value) == REFUSED
    # the fix: the median of 0.75 and 0.5, 0.625; the max 0.75
    out = irm.evaluate_jg(
        RUN, ["map(agg='median')", "map(agg='max')"], qrels_jg=QRELS_JG, per_query=False
    )
    assert out.row(0) == (2, 0.625, 0.75)


def test_evaluate_with_per_query_true_is_refused_in_the_same_words() -> None:
    qrels = QRELS_JG.filter(pl.col("jg") != "bob").drop("jg")
    with pytest.raises(MetricParameterError) as caught:
        irm.evaluate(RUN, ["map(agg='median')"], qrels=qrels, per_query=True)
    assert str(caught.value) == REFUSED


@pytest.mark.parametrize(
    ("option", "hint"),
    [
        (
            {"agg": "median"},
            "agg=...: agg= is a parameter of each metric, written in its name, e.g. "
            "\"map(agg='median')\" (with per_query=False: the per-query values themselves "
            "have no summary)",
        ),
        ({"k": 10}, "k=...: the cutoff is written in the metric's name, e.g. 'ndcg@10'"),
    ],
    ids=["agg", "k"],
)
def test_a_metric_parameter_given_as_an_option_is_pointed_to_the_name(
    option: dict[str, object], hint: str
) -> None:
    # the options' list follows the hint, as for every unknown option
    for call in (irm.evaluate_jg, irm.evaluate):
        tables = {"qrels_jg": QRELS_JG} if call is irm.evaluate_jg else {"qrels": QRELS_JG}
        with pytest.raises(irm.InvalidValueError) as caught:
            call(RUN, ["map"], **tables, **option)
        assert str(caught.value).startswith(f"unknown option {hint}; the options are action, ")
