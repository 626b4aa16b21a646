"""Round 14: comparison's readers of "better" and tukey_hsd's means."""

from __future__ import annotations

import numpy as np
import polars as pl
import scipy.stats

import polars_irmetrics as irm


def _run(hits: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"query_id": f"q{q}", "doc_id": f"d{r}", "rank": r + 1, "relevance": int(r < h)}
            for q, h in enumerate(hits)
            for r in range(10)
        ]
    )


TIED_RUNS = {"A": _run([1, 2, 3]), "B": _run([3, 2, 1]), "C": _run([0, 1, 0])}


def test_tukey_means_are_evaluates_bits() -> None:
    tukey = irm.tukey_hsd(TIED_RUNS, "P@10", qrels=None)
    compared = irm.compare(TIED_RUNS, "P@10", qrels=None)
    evaluated = {
        name: irm.evaluate(run, "P@10", qrels=None, per_query=False)
        for name, run in TIED_RUNS.items()
    }
    means = {}
    for system, baseline, mean, baseline_mean in tukey.select(
        "system", "baseline", "mean", "baseline_mean"
    ).iter_rows():
        means[system], means[baseline] = mean, baseline_mean
    assert means["A"] == means["B"]
    for name in TIED_RUNS:
        frame = evaluated[name]
        assert means[name] == frame.get_column(frame.columns[-1])[0]
    by_compare = dict(compared.select("system", "mean").iter_rows())
    assert means["B"] == by_compare["B"]
    assert means["C"] == by_compare["C"]
    table = irm.report(tukey).to_markdown().split("\n\n")[0]
    assert table.count("**") == 4  # A and B both bold


def test_tukey_statistics_stay_scipys() -> None:
    tukey = irm.tukey_hsd(TIED_RUNS, "P@10", qrels=None)
    samples = [np.array([h / 10 for h in hits]) for hits in ([1, 2, 3], [3, 2, 1], [0, 1, 0])]
    scipy_result = scipy.stats.tukey_hsd(*samples)
    names = list(TIED_RUNS)
    for system, baseline, delta, p in tukey.select(
        "system", "baseline", "delta", "p_value"
    ).iter_rows():
        i, j = names.index(baseline), names.index(system)
        assert delta == scipy_result.statistic[j, i]
        assert p == scipy_result.pvalue[j, i]
