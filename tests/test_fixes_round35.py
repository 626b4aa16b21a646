"""Round 35 (fix35-h): a refusal's fix never leads to another refusal, and the
significance matrix reads the means it is given.

* ``optimize_fusion(..., metric="pop_rsp")`` said "needs a cutoff, e.g.
  'pop_rsp@10'", and ``'pop_rsp@10'`` was then refused for reading the interaction
  history, which optimize_fusion does not take (compare, tukey_hsd and reproducibility
  alike): a metric the function cannot use at all is now refused first, whatever its
  spelling, in the words of the second refusal. A metric it can use still hears of its
  missing cutoff.
* ``plot_significance_matrix``'s note "the arrows follow the test ... though its mean is
  below ..." read the sign of ``delta``, not the means; it reads ``mean`` and
  ``baseline_mean`` where the frame has them (as the report's legend), and a system given
  two different means of one metric is refused as the report refuses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.errors import InvalidValueError, MetricParameterError

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


_RULE = "* significant; ▲ row's system better than column's, ▼ worse"
_ROW = {
    "metric": ["map"], "system": ["b"], "baseline": ["a"], "delta": [0.1],
    "statistic": [None], "p_adjusted": [0.01], "significant": [True],
    "higher_is_better": [True],
}  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("changes", "title"),
    [
        # the test (delta's sign, no statistic) above, the means below: said
        ({"mean": [0.2], "baseline_mean": [0.3]},
         f"map: adjusted p-values\n{_RULE}\nthe arrows follow the test, which found b above "
         "a though its mean is below a's"),
        # Wilcoxon's ranks below, the means below too (delta edited above): nothing to say
        ({"statistic": [-170.0], "mean": [0.2], "baseline_mean": [0.3]},
         f"map: adjusted p-values\n{_RULE}"),
        # the means equal
        ({"mean": [0.3], "baseline_mean": [0.3]},
         f"map: adjusted p-values\n{_RULE}\nthe arrows follow the test, which found b above "
         "a though its mean is equal to a's"),
    ],
    ids=["means-below", "means-agree", "means-equal"],
)  # fmt: skip
def test_significance_matrix_reads_the_means(
    lazy: bool, changes: dict[str, list[float]], title: str
) -> None:
    result = pl.DataFrame({**_ROW, **changes}, schema_overrides={"statistic": pl.Float64})
    figure = plot.plot_significance_matrix(result.lazy() if lazy else result)
    assert figure.axes[0].get_title() == title


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("rows", "message"),
    [
        # a twice: 0.3 beside b, 0.35 beside c
        ({"metric": ["map"] * 2, "system": ["b", "c"], "baseline": ["a", "a"],
          "mean": [0.4, 0.5], "baseline_mean": [0.3, 0.35]},
         "system 'a' has mean 0.3 on metric 'map' in one row (baseline_mean of b against a) "
         "and 0.35 in another (baseline_mean of c against a): irm.compare pairs every system "
         "on the same queries, so each has one mean per metric, and the matrix would read "
         "one of them without a word; pass the frame irm.compare returned"),
        ({"metric": ["map"], "system": ["b"], "baseline": ["a"], "mean": [None],
          "baseline_mean": [0.3]},
         "column 'mean' of result is null or NaN on 1 row(s) (first: metric 'map', system "
         "'b', baseline 'a'): a significant "
         "difference beside no mean has no side of the means to say; pass the result of "
         "irm.compare, or drop those rows"),
    ],
    ids=["two-means", "null-mean"],
)  # fmt: skip
def test_significance_matrix_refuses_means_it_cannot_read(
    lazy: bool, rows: dict[str, list[Any]], message: str
) -> None:
    n = len(rows["system"])
    result = pl.DataFrame(
        {**rows, "delta": [0.1] * n, "p_adjusted": [0.01] * n, "significant": [True] * n},
        schema_overrides={"mean": pl.Float64},
    )
    with pytest.raises(InvalidValueError) as caught:
        plot.plot_significance_matrix(result.lazy() if lazy else result)
    assert str(caught.value) == message
