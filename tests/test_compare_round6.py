"""Comparison and fusion, round 6: optimize_fusion refuses a normalisation given by name
that changes nothing (as fuse does) and keeps ranx's min-max as its default where it
matters; a one-sided test's footnote says what it tests in the metric's direction; the
bootstrap's warning points at the user's line from every entry point; Tukey's report
names Tukey's HSD; the id-spelling hint and the judged counts live in ground, once."""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import CompareOptions
from polars_irmetrics.comparison.publish import Report
from polars_irmetrics.comparison.report import render_report
from polars_irmetrics.errors import (
    InvalidValueError,
    IrmWarning,
    MetricParameterError,
    UnknownMetricError,
)
from tests.fusion_data import random_qrels, random_runs

# ------------------------------------------------------------- 1. optimize_fusion's norm

RUNS, QRELS = random_runs(3, n_queries=6), random_qrels(4, n_queries=6)

#: The methods optimize_fusion searches that read positions alone, with their grid's step.
_POSITIONAL = [("rrf", None), ("rbc", 0.25), ("logn_isr", 0.25), ("w_bordafuse", 0.5)]


def _fuse_message(method: str, norm: str) -> str:
    params = {"phi": 0.8} if method == "rbc" else {}
    with pytest.raises(MetricParameterError) as raised:
        irm.fuse(RUNS, method, norm=norm, **params)
    return str(raised.value)


@pytest.mark.parametrize(("method", "step"), _POSITIONAL)
@pytest.mark.parametrize("norm", ["min-max", "min_max", "minmax"])
def test_optimize_fusion_refuses_a_min_max_given_to_a_method_of_positions(
    method: str, step: float | None, norm: str
) -> None:
    # fails on the old code: an explicit min-max was taken for the default and dropped
    with pytest.raises(MetricParameterError) as raised:
        irm.optimize_fusion(RUNS, "ndcg@10", qrels=QRELS, method=method, norm=norm, step=step)
    assert str(raised.value) == _fuse_message(method, norm)
    assert str(raised.value).startswith(f"norm={norm!r} changes nothing in {method}")


@pytest.mark.parametrize(("method", "step"), [("rrf", None), ("w_bordafuse", 0.5)])
def test_optimize_fusion_auto_is_no_normalisation_for_a_method_of_positions(
    method: str, step: float | None
) -> None:
    # fails on the old code: norm='auto' was an unknown normalisation
    kw: dict[str, Any] = {"qrels": QRELS, "method": method, "step": step, "return_grid": True}
    default = irm.optimize_fusion(RUNS, "ndcg@10", **kw)
    auto = irm.optimize_fusion(RUNS, "ndcg@10", norm="auto", **kw)
    none = irm.optimize_fusion(RUNS, "ndcg@10", norm=None, **kw)
    for got in (auto, none):
        assert got[0] == default[0]
        assert got[1].equals(default[1])


def test_optimize_fusion_auto_is_min_max_for_a_method_of_scores() -> None:
    # fails on the old code: norm='auto' was an unknown normalisation
    kw: dict[str, Any] = {"qrels": QRELS, "method": "wsum", "step": 0.5, "return_grid": True}
    default = irm.optimize_fusion(RUNS, "ndcg@10", **kw)
    auto = irm.optimize_fusion(RUNS, "ndcg@10", norm="auto", **kw)
    min_max = irm.optimize_fusion(RUNS, "ndcg@10", norm="min-max", **kw)
    none = irm.optimize_fusion(RUNS, "ndcg@10", norm=None, **kw)
    assert default[1].equals(auto[1])
    assert default[1].equals(min_max[1])
    assert not default[1].equals(none[1])  # None: the raw scores, as ranx's norm=None


def test_optimize_fusion_names_auto_among_the_normalisations() -> None:
    # fails on the old code: the message did not name optimize_fusion's own default
    with pytest.raises(UnknownMetricError) as raised:
        irm.optimize_fusion(RUNS, "ndcg@10", qrels=QRELS, norm="l2")
    assert str(raised.value) == (
        "unknown normalisation 'l2'; choose one of min-max, min-max-inverted, max, sum, "
        "zmuv, rank, borda, or None, or 'auto' (the default: min-max for a method that "
        "reads scores, none for one that reads positions)"
    )


# ------------------------------------------------------------ 2. a one-sided footnote


def _predictions(values: list[float], system: str | None = None) -> pl.DataFrame:
    """Per-query values through the prediction route: mae of label 0 is the value."""
    frame = pl.DataFrame(
        {
            "query_id": [f"q{i}" for i in range(len(values))],
            "label": [0.0] * len(values),
            "prediction": values,
        }
    )
    return frame if system is None else frame.with_columns(system=pl.lit(system))


ERRORS = {"a": _predictions([0.1, 0.5, 0.3, 0.9]), "b": _predictions([0.2, 0.1, 0.35, 0.4])}


def _footnote(result: pl.DataFrame) -> str:
    return render_report(result).strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("alternative", "said"),
    [
        (
            "greater",
            "One-sided paired t-test (alternative='greater': the system's mean above the "
            "baseline's, worse for this lower-is-better metric)",
        ),
        (
            "less",
            "One-sided paired t-test (alternative='less': the system's mean below the "
            "baseline's, better for this metric)",
        ),
    ],
)
def test_a_one_sided_footnote_says_what_it_tests_in_the_metric_direction(
    alternative: str, said: str
) -> None:
    # fails on the old code: "Greater paired t-test", the same for every direction
    result = irm.compare(ERRORS, "mae", baseline="a", alternative=alternative)
    assert _footnote(result).startswith(said + ", Holm correction over 1 comparison")


def test_a_one_sided_footnote_of_metrics_of_both_directions_names_each() -> None:
    # fails on the old code (as above); resamples and the alternative share the brackets
    users = [f"u{i}" for i in range(1, 11) for _ in range(2)]
    truth = {"user": users, "clicked": [1, 0] * 10}
    models = {
        "A": pl.DataFrame({**truth, "p": [0.6, 0.4] * 10}),
        "B": pl.DataFrame({**truth, "p": [0.9, 0.1] * 9 + [0.5, 0.5]}),
    }
    result = irm.compare(
        models,
        ["rmse", "auc"],
        baseline="A",
        alternative="less",
        test="randomization",
        label="clicked",
        prediction="p",
        query_id="user",
    )
    assert _footnote(result).startswith(
        # 10 users: 2**10 sign vectors, all enumerated (round 10: it said 10000 resamples)
        "One-sided randomization (sign-flip) test (exact: all 2**n sign vectors enumerated, "
        "no resample drawn; "
        "alternative='less': the system's mean below the baseline's, better for rmse; "
        "worse for higher-is-better auc), Holm correction over 2 comparisons"
    )


def test_a_two_sided_footnote_is_as_before() -> None:
    # passes on the old code too: pins the two-sided sentence, which was right
    result = irm.compare(ERRORS, "mae", baseline="a")
    assert _footnote(result).startswith("Two-sided paired t-test, Holm correction")


# ------------------------------------------------- 3. the warnings point at the user's line

#: Two queries: the bootstrap's p-value is its floor, below what a sign-flip test allows.
FEW = {"a": _predictions([0.1, 0.2]), "b": _predictions([0.3, 0.7])}
LONG = pl.concat([_predictions([0.1, 0.2], "a"), _predictions([0.3, 0.7], "b")])
PER_QUERY = pl.DataFrame(
    {
        "system": ["x", "x", "y", "y", "z", "z"],
        "query_id": [1, 2] * 3,
        "ndcg": [0.1, 0.2, 0.5, 0.7, 0.3, 0.35],
    }
)


def _bootstrap_warnings(call: Any) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    said = [w for w in caught if "test='bootstrap' gave" in str(w.message)]
    assert said, [str(w.message) for w in caught]
    return said


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(
            lambda: irm.compare(FEW, "mae", baseline="a", test="bootstrap"), id="compare"
        ),
        pytest.param(lambda: LONG.irm.compare("mae", baseline="a", test="bootstrap"), id="df.irm"),
        pytest.param(
            lambda: LONG.lazy().irm.compare("mae", baseline="a", test="bootstrap").collect(),
            id="lf.irm",
        ),
        pytest.param(
            lambda: irm.system_agreement(PER_QUERY, PER_QUERY, test="bootstrap"),
            id="system_agreement",
        ),
    ],
)
def test_the_bootstrap_warning_points_at_the_callers_line(entry: Any) -> None:
    # fails on the old code for df.irm, lf.irm and system_agreement (a fixed stacklevel
    # named namespace.py, polars, or a line below the call); irm.compare passes on both
    # (pinned)
    for said in _bootstrap_warnings(entry):
        assert said.category is IrmWarning
        assert (said.filename, said.lineno) == (__file__, entry.__code__.co_firstlineno)


def test_an_undefined_value_warning_points_at_the_callers_line() -> None:
    # fails on the old code: a fixed stacklevel named namespace.py
    users = {"query_id": ["u1", "u1", "u2", "u2", "u3", "u3"], "label": [1, 0, 1, 0, 1, 1]}
    long = pl.concat(
        [
            pl.DataFrame({**users, "prediction": [0.9, 0.1, 0.8, 0.3, 0.5, 0.4]}).with_columns(
                system=pl.lit(s)
            )
            for s in ("a", "b")
        ]
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        long.irm.compare("auc", baseline="a")
    said = [w for w in caught if "undefined value" in str(w.message)]
    assert [(w.category, w.filename) for w in said] == [(IrmWarning, __file__)]


# ------------------------------------------------------------- 5. Tukey's footnote


def _ranked(hits: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": [1, 2, 3, 4], "doc_id": [1] * 4, "rank": [1] * 4, "relevance": hits}
    )


TUKEY_RUNS = {"a": _ranked([0, 0, 0, 0]), "b": _ranked([1, 0, 1, 0]), "c": _ranked([1, 1, 1, 1])}


def test_the_report_of_tukey_hsd_names_tukey_s_hsd() -> None:
    # fails on the old code: "Test, correction and alpha not recorded (pass
    # options=CompareOptions(...))", which no CompareOptions could fix
    result = irm.tukey_hsd(TUKEY_RUNS, "P@1", qrels=None, alpha=0.1)
    expected = (
        "Tukey's HSD test (p-values adjusted over every pair of systems of each metric by "
        "the studentized range; no further correction), significant at p ≤ 0.1; 4 queries; "
        "every pair of systems compared."
    )
    assert _footnote(result) == expected
    assert irm.report(result).note == expected


def test_the_report_of_tukey_hsd_refuses_options_and_has_the_per_query_deltas() -> None:
    # fails on the old code: options= was read as the test of a compare call, and the
    # report had no per-query values to plot
    result = irm.tukey_hsd(TUKEY_RUNS, "P@1", qrels=None)
    message = (
        "options= names the test of an irm.compare call, and this frame is irm.tukey_hsd's, "
        "whose footnote names Tukey's HSD and the alpha it was given: drop options="
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        Report(result, options=CompareOptions(test="wilcoxon"))
    per_query = irm.report(result).per_query
    assert per_query is not None
    expected = irm.compare(TUKEY_RUNS, "P@1", qrels=None, per_query=True)
    assert per_query.equals(expected)


# ------------------------------------------------------------------- 4. the twins


def test_the_spelling_hint_is_ground_s_and_fusion_uses_it() -> None:
    # fails on the old code: the hint lived in fusion.overlap, above the wings that
    # give the same kind of hint
    spelling = importlib.import_module("polars_irmetrics.ground.spelling")
    judged = importlib.import_module("polars_irmetrics.fusion.judged")
    overlap = importlib.import_module("polars_irmetrics.fusion.overlap")
    assert judged.spelling_hint is spelling.spelling_hint
    assert overlap.spelling_hint is spelling.spelling_hint
    runs = pl.LazyFrame({"query_id": ["q01", "q02"]})
    qrels = pl.LazyFrame({"query_id": ["1", "2"]})
    sides = spelling.Sides("the runs", "the judgments", "the runs and the judgments")
    hint = spelling.spelling_hint(runs, qrels, "query_id", within=None, noun="query", sides=sides)
    assert hint is not None
    assert hint.startswith("2 query id(s) of the runs match an id")


def test_fusion_s_judged_counts_are_ground_s_judged_tally_per_run() -> None:
    # fails on the old code: judged_tally counted one run, and fusion counted its own
    from polars_irmetrics.fusion.judged import judged_counts
    from polars_irmetrics.fusion.methods import RUN
    from polars_irmetrics.ground.validate import TALLY, judged_tally

    runs = random_runs(5, n_queries=5, query_sets=True)
    qrels = random_qrels(6, n_queries=7).lazy()
    long = pl.concat(
        [
            f.select("query_id", "doc_id").with_columns(pl.lit(i, pl.Int32).alias(RUN))
            for i, f in enumerate(runs.values())
        ]
    ).lazy()
    counts = judged_counts(long, qrels, list(runs), "query_id", "doc_id").collect()
    per_run = judged_tally(long, qrels, "query_id", "doc_id", by=RUN, listed=True).collect()
    for i, name in enumerate(runs):
        alone = judged_tally(long.filter(pl.col(RUN) == i), qrels, "query_id", "doc_id")
        row = counts.filter(pl.col("run") == name).select(TALLY).row(0)
        assert row[:4] == alone.collect().row(0)[:4]
        assert row == per_run.filter(pl.col(RUN) == i).select(TALLY).row(0)
    listed = long.select("query_id").unique().join(qrels, on="query_id", how="semi")
    together = counts.filter(pl.col("run").is_null()).select(TALLY).row(0)
    assert together[:4] == judged_tally(long, qrels, "query_id", "doc_id").collect().row(0)[:4]
    assert together[4] == listed.collect().height


# -- a missed judged query scored better as an empty ranking is said ---------------

_Q = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q3"],
        "doc_id": ["a", "b", "a", "c", "a"],
        "relevance": [1, 0, 1, 0, 1],
    }
)
# every list holds one unjudged document (x, y, z) below a relevant one
_LISTS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["a", "x", "a", "y", "a", "z"],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    }
)


def _flattered(label: str, many: int, system: str, query: str) -> str:
    counts = "counts" if many == 1 else "count"
    queries = "query" if many == 1 else "queries"
    scores = "scores" if many == 1 else "score"
    return (
        f"{label}: {many} judged {queries} a system did not retrieve (e.g. system "
        f"{system!r}, query {query!r}) {scores} better as an empty ranking (0.0, lower is "
        f"better) than another system's list, and {counts} as that system's wins "
        "(query_set='judged' scores a missed query as an empty ranking); pass "
        "query_set='common' to compare only the queries every system retrieved"
    )


def _irm_warnings(call: Callable[[], object]) -> list[tuple[type[Warning], str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


def test_a_missed_query_is_no_win_in_a_metric_of_no_direction() -> None:
    # unjudged@2 of an empty ranking is 0 (trec_eval's unj, and -c's zero), the
    # rbp residuals' 1 and 0: the run missing q3 would "win" the first against a list
    # with an unjudged document, but the judgments' completeness has no direction
    # (round 29), so compare counts no win and has nothing to warn of
    part = _LISTS.filter(pl.col("query_id") != "q3")
    said = _irm_warnings(
        lambda: irm.compare(
            {"full": _LISTS, "part": part},
            ["unjudged@2", "ndcg@10", "rbp_residual", "trec_rbp_resid"],
            qrels=_Q,
            baseline="full",
        )
    )
    assert said == []


def test_an_empty_run_is_said_with_every_flattered_metric() -> None:
    said = _irm_warnings(
        lambda: irm.compare(
            {"full": _LISTS, "empty": _LISTS.clear()},
            ["unjudged@2", "trec_rbp_resid", "P@2"],
            qrels=_Q,
            baseline="full",
        )
    )
    # every metric's deltas are one value on every query (round 29's warning of deltas
    # without spread names them; round 17's names identical systems); unjudged@2 and
    # trec_rbp_resid score the empty run 0 (their lowest), which is no win: they have
    # no direction (round 29), so only the empty run is said
    said = [w for w in said if not w[1].startswith("every per-query delta is ")]
    assert [category for category, _ in said] == [IrmWarning]
    assert said[0][1].startswith("system 'empty' has an empty run")


def test_no_flattery_no_warning() -> None:
    # higher-is-better metrics an empty ranking cannot beat, the common queries, and
    # every system retrieving every query: nothing said
    part = _LISTS.filter(pl.col("query_id") != "q3")
    for runs, metrics, query_set in (
        ({"full": _LISTS, "part": part}, ["ndcg@10", "P@2", "rbp_residual"], "judged"),
        ({"full": _LISTS, "part": part}, ["unjudged@2"], "common"),
        ({"full": _LISTS, "same": _LISTS}, ["unjudged@2"], "judged"),
    ):
        said = _irm_warnings(
            lambda runs=runs, metrics=metrics, query_set=query_set: irm.compare(
                runs, metrics, qrels=_Q, baseline="full", query_set=query_set
            )
        )
        # the systems identical on the common queries: that warning alone (round 17)
        flattery = [w for w in said if not w[1].startswith("every per-query delta is 0")]
        assert flattery == [], (metrics, query_set)


def test_a_missed_query_that_wins_utility_is_said() -> None:
    # utility (higher is better) of an empty ranking is 0, above a list of one
    # non-relevant document (-1)
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 0]})
    run = pl.DataFrame(
        {"query_id": ["q1", "q2", "q2"], "doc_id": ["a", "a", "b"], "score": [1.0, 2.0, 1.0]}
    )
    part = run.filter(pl.col("query_id") == "q1")
    said = _irm_warnings(
        lambda: irm.compare({"full": run, "part": part}, ["utility"], qrels=qrels, baseline="full")
    )
    expected = _flattered("utility", 1, "part", "q2").replace("lower is", "higher is")
    assert said == [(IrmWarning, expected)]
