"""Round 14: comparison's readers of "better" and tukey_hsd's means."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import scipy.stats

import polars_irmetrics as irm
from polars_irmetrics.comparison.options import CompareOptions, found_above
from polars_irmetrics.comparison.report import render_report


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


USERS = [f"u{i:02d}" for i in range(20)]
MAE_A = pl.DataFrame({"user": USERS, "y": [0] * 20, "p": [0.5] * 20})
MAE_B = pl.DataFrame({"user": USERS, "y": [0] * 20, "p": [0.4] * 19 + [5.5]})
MAE = {"label": "y", "prediction": "p", "query_id": "user"}
DISAGREE = (
    "the markers follow the test, which found B below A on mae (better), though its "
    "mean is above A's (the table's numbers are the means)"
)


def _wilcoxon(alternative: str) -> pl.DataFrame:
    return irm.compare(
        {"A": MAE_A, "B": MAE_B},
        "mae",
        baseline="A",
        test="wilcoxon",
        alternative=alternative,
        **MAE,
    )


@pytest.mark.parametrize(
    ("alternative", "markers", "cell", "p_value"),
    [
        ("less", "daggers", "| B | 0.6550† |", 0.00019649651320744046),
        ("two-sided", "daggers", "| B | 0.6550† |", 0.0003929930264148809),
        ("less", "letters", "| B | 0.6550ᵃ |", 0.00019649651320744046),
        ("two-sided", "letters", "| B | 0.6550ᵃ |", 0.0003929930264148809),
    ],
)
def test_wilcoxon_marker_follows_the_test(
    alternative: str, markers: str, cell: str, p_value: float
) -> None:
    result = _wilcoxon(alternative)
    assert result.get_column("delta")[0] > 0
    assert result.get_column("p_value")[0] == pytest.approx(p_value, rel=1e-12)
    assert result.get_column("statistic")[0] == -170.0  # r+ - r- = 20 - 190
    text = irm.report(result, markers=markers).to_markdown()
    assert cell in text.split("\n")
    assert DISAGREE in text.split("\n\n")


def test_wilcoxon_greater_marks_nothing() -> None:
    text = irm.report(_wilcoxon("greater"), markers="daggers").to_markdown()
    assert "| B | 0.6550 |" in text.split("\n")
    assert "the markers follow the test" not in text


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_mean_tests_statistic_and_no_disagreement(test: str) -> None:
    a = pl.DataFrame({"user": USERS, "y": [0] * 20, "p": [0.5] * 20})
    b = pl.DataFrame({"user": USERS, "y": [0] * 20, "p": [0.4 + 0.001 * i for i in range(20)]})
    resamples = {} if test == "t" else {"n_resamples": 999}
    result = irm.compare({"A": a, "B": b}, "mae", baseline="A", test=test, **resamples, **MAE)
    delta, statistic = result.row(0, named=True)["delta"], result.row(0, named=True)["statistic"]
    if test == "t":
        d = np.array([0.4 + 0.001 * i for i in range(20)]) - 0.5
        assert statistic == pytest.approx(scipy.stats.ttest_rel(d + 0.5, np.full(20, 0.5))[0])
    else:
        assert statistic == delta
    text = irm.report(result, markers="daggers").to_markdown()
    assert "| B | **0.4095**† |" in text.split("\n")
    assert "the markers follow the test" not in text


def test_terminal_report_marks_by_the_test() -> None:
    # the renderer irm compare writes its terminal, markdown and latex reports with
    rendered = render_report(_wilcoxon("two-sided"), "terminal", markers="daggers")
    assert "0.6550†" in rendered
    assert DISAGREE in rendered.split("\n")


@pytest.mark.parametrize(
    ("delta", "statistic", "alternative", "expected"),
    [
        (0.155, -170.0, "two-sided", False),
        (0.155, None, "two-sided", True),
        (0.155, float("nan"), "two-sided", True),
        (0.155, 3.0, "less", False),
        (-0.1, -3.0, "greater", True),
        (0.0, 0.0, "two-sided", None),
    ],
)
def test_found_above(
    delta: float, statistic: float | None, alternative: str, expected: bool | None
) -> None:
    options = CompareOptions(alternative=alternative)  # type: ignore[arg-type]
    assert found_above(delta, statistic, options) is expected
