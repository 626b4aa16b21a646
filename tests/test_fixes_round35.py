"""Round 35 (fix35-h): a refusal's fix never leads to another refusal.

* ``optimize_fusion(..., metric="pop_rsp")`` said "needs a cutoff, e.g.
  'pop_rsp@10'", and ``'pop_rsp@10'`` was then refused for reading the interaction
  history, which optimize_fusion does not take (compare, tukey_hsd and reproducibility
  alike): a metric the function cannot use at all is now refused first, whatever its
  spelling, in the words of the second refusal. A metric it can use still hears of its
  missing cutoff.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import MetricParameterError

_RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "b"], "score": [2.0, 1.0] * 2}
)
_OTHER = _RUN.with_columns(score=-pl.col("score"))
_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})

_HISTORY = "the interaction history (where item popularity, the catalogue and each user's history come from)"  # noqa: E501
_GROUPS = "document groups (one row per document and group: doc_id, group)"


def _compare(metric: str, frame: Callable[[pl.DataFrame], Any]) -> object:
    return irm.compare({"a": frame(_RUN), "b": frame(_OTHER)}, metric, qrels=_QRELS)


def _tukey(metric: str, frame: Callable[[pl.DataFrame], Any]) -> object:
    runs = {"a": frame(_RUN), "b": frame(_OTHER), "c": frame(_RUN)}
    return irm.tukey_hsd(runs, metric, qrels=_QRELS)


def _reproducibility(metric: str, frame: Callable[[pl.DataFrame], Any]) -> object:
    return irm.reproducibility(
        {"baseline": frame(_RUN)}, {"baseline": frame(_OTHER)}, metric, qrels=_QRELS
    )


def _optimize(metric: str, frame: Callable[[pl.DataFrame], Any]) -> object:
    return irm.optimize_fusion([frame(_RUN), frame(_OTHER)], metric, qrels=_QRELS)


def _compared(calls: str) -> str:
    return (
        "metric 'pop_rsp' is computed from a run, judgments and the interaction history, "
        f"which {calls} does not take (it pairs the per-query values of runs and judgments, "
        "or of predictions): evaluate it with irm.evaluate(table, qrels=..., "
        "interactions=...) for each system"
    )


def _reproduced(metric: str, what: str, keyword: str) -> str:
    return (
        f"metric {metric!r} reads {what}, which irm.reproducibility does not take (it "
        "compares the per-topic values of runs and their judgments): evaluate it with "
        f"irm.evaluate(run, [{metric!r}], {keyword}=...) for each run"
    )


def _optimized(metric: str, what: str) -> str:
    return (
        f"metric={metric!r} reads {what}, which optimize_fusion does not take: it scores "
        "each fused ranking against qrels= alone, with a ranking metric of a run and "
        "judgments (e.g. metric='ndcg@10')"
    )


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("call", "metric", "message"),
    [
        (_compare, "pop_rsp", _compared("irm.compare")),
        (_tukey, "pop_rsp", _compared("irm.tukey_hsd")),
        (_reproducibility, "pop_rsp", _reproduced("pop_rsp", _HISTORY, "interactions")),
        (_reproducibility, "item_mad", _reproduced("item_mad", _GROUPS, "groups")),
        (_optimize, "pop_rsp", _optimized("pop_rsp", _HISTORY)),
        (_optimize, "item_mad", _optimized("item_mad", _GROUPS)),
        # a metric the call can use: its missing cutoff is still what is said
        (_compare, "mar", "metric 'mar': mar needs a cutoff, e.g. 'mar@10'"),
        (_optimize, "mar", "metric 'mar': mar needs a cutoff, e.g. 'mar@10'"),
    ],
    ids=["compare", "tukey", "repro-history", "repro-groups", "optimize-history",
         "optimize-groups", "compare-cutoff", "optimize-cutoff"],
)  # fmt: skip
def test_a_metric_the_call_cannot_use_is_refused_before_its_cutoff(
    lazy: bool, call: Callable[..., object], metric: str, message: str
) -> None:
    def frame(f: pl.DataFrame) -> Any:
        return f.lazy() if lazy else f

    with pytest.raises(MetricParameterError) as caught:
        call(metric, frame)
    assert str(caught.value) == message
