"""Round 17: comparison statistics and silent NaN / null outputs.

* ``irm.compare`` of two systems identical on every paired query (every delta 0):
  p 1 and statistic 0 from every test (scipy's ``ttest_rel`` gives NaN for both; its
  ``wilcoxon`` and ``permutation_test`` give 1), effect size NaN (0 / 0), now with a
  warning that names the comparison (it was silent).
* A NaN per-query value (``rnd`` of a ranking of 10 documents or fewer) is refused
  with the metric's own words for when it is NaN and the filter that drops the query
  (it said "fix or drop that query in every system", with no cause).
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
import scipy.stats

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "z"], "relevance": [1, 1, 1]}
)
RUN = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["x", "y", "n"], "rank": [1, 1, 1]})

IDENTICAL = (
    "every per-query delta is 0 in 'P@1', system 'b' against 'a': the systems score the "
    "same on all 3 paired queries (the same run passed twice?); effect_size is NaN "
    "(Cohen's d_z, the mean delta over the deltas' standard deviation, is 0 / 0), "
    "p_value 1 and statistic 0 (scipy's ttest_rel gives NaN for both; 1 is the p-value "
    "of every sign flip of zero deltas, so nothing identical reads as significant)"
)


def _irm_warnings(call):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    return out, [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization", "bootstrap"])
def test_identical_systems_get_p_one_and_a_warning(test: str) -> None:
    # P@1 per query: 1, 1, 0 for both systems, so every delta is 0
    out, said = _irm_warnings(
        lambda: irm.compare({"a": RUN, "b": RUN}, "P@1", qrels=QRELS, baseline="a", test=test)
    )
    row = out.row(0, named=True)
    assert (row["delta"], row["p_value"], row["statistic"]) == (0.0, 1.0, 0.0)
    assert np.isnan(row["effect_size"])
    assert (row["ci_low"], row["ci_high"], row["ties"]) == (0.0, 0.0, 3)
    assert said == [IDENTICAL]


def test_identical_systems_against_scipy() -> None:
    # the one place compare departs from scipy: ttest_rel of zero deltas is NaN/NaN
    x = np.array([1.0, 1.0, 0.0])
    t = scipy.stats.ttest_rel(x, x)
    assert np.isnan(t.statistic)
    assert np.isnan(t.pvalue)
    # Wilcoxon (scipy warns of its 0/0 z, and gives 1) and the sign-flip test agree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert scipy.stats.wilcoxon(x, x).pvalue == 1.0
    flips = scipy.stats.permutation_test((x - x,), np.mean, permutation_type="samples")
    assert flips.pvalue == 1.0


def test_two_identical_comparisons_are_counted_in_one_warning() -> None:
    _, said = _irm_warnings(
        lambda: irm.compare({"a": RUN, "b": RUN, "c": RUN}, "P@1", qrels=QRELS, baseline="a")
    )
    assert said == [
        IDENTICAL.replace(
            "in 'P@1', system 'b' against 'a'",
            "in 2 comparisons (first: 'P@1', system 'b' against 'a')",
        )
    ]


def test_different_systems_are_not_warned() -> None:
    other = RUN.with_columns(doc_id=pl.Series(["n", "y", "z"]))  # P@1: 0, 1, 1
    out, said = _irm_warnings(
        lambda: irm.compare({"a": RUN, "b": other}, "P@1", qrels=QRELS, baseline="a")
    )
    assert said == []
    assert out["delta"][0] == 0.0  # (0 + 0 + 1) / 3 - (1 + 1 + 0) / 3


def _fair_run(sizes: dict[str, int]) -> pl.DataFrame:
    return pl.concat(
        pl.DataFrame(
            {"query_id": [q] * n, "doc_id": [f"d{i}" for i in range(n)], "rank": range(1, n + 1)}
        )
        for q, n in sizes.items()
    )


GROUPS = pl.DataFrame({"doc_id": [f"d{i}" for i in range(12)], "group": ["p", "u"] * 6})


def test_nan_per_query_value_is_refused_with_its_cause() -> None:
    run = _fair_run({"q1": 8, "q2": 12, "q3": 12})
    flipped = run.with_columns(rank=pl.col("rank").reverse().over("query_id"))
    with pytest.raises(irm.InvalidValueError) as info:
        irm.compare({"a": run, "b": flipped}, "rnd", groups=GROUPS, baseline="a")
    # the measure's own why and fix (irm.evaluate's warning of it), said once: round 22
    assert str(info.value) == (
        "per-query value of 'rnd' for system 'a' on query 'q1' is NaN: Yang & "
        "Stoyanovich's sum runs over the cut-offs 10, 20, ... up to the ranking's length "
        "and is divided by its largest value, so a ranking of 10 documents or fewer, or "
        "with no or only protected documents, has none (0 / 0), and the mean over the "
        "queries is NaN too (ir_measures' rND, rKL and rRD sum at every position and give "
        "0 where the largest value is 0: another definition); NaN cannot be paired: rank "
        "more than 10 documents of both groups, or leave those queries out (the short "
        "rankings: run.filter(pl.len().over('query_id') > 10)), in every system's run, or "
        "compare a metric defined there"
    )


# rnd / rkl / rrd of a ranking of 10 documents or fewer: NaN, now warned
_RND_WARNING = (
    "{named} {verb} NaN on {count} of the {total} queries (first: {place}): Yang & "
    "Stoyanovich's sum runs over the cut-offs 10, 20, ... up to the ranking's length and "
    "is divided by its largest value, so a ranking of 10 documents or fewer, or with no "
    "or only protected documents, has none (0 / 0), and the mean over the queries is NaN "
    "too (ir_measures' rND, rKL and rRD sum at every position and give 0 where the "
    "largest value is 0: another definition); rank more than 10 documents of both "
    "groups, or leave those queries out (the short rankings: "
    "run.filter(pl.len().over('query_id') > 10))"
)


@pytest.mark.parametrize(
    ("metrics", "sizes", "named", "count", "first"),
    [
        # 8 documents: no cut-off below the length; 10: the one cut-off i = N, 0 / 0
        (["rnd", "rkl", "rrd"], {"q1": 8, "q2": 12}, "'rnd', 'rkl', 'rrd'", 1, "q1"),
        (["rnd"], {"q1": 12, "q2": 10, "q3": 9}, "'rnd'", 2, "q2"),
        (["rrd"], {"q1": 11}, None, 0, None),  # 11 documents: defined, nothing said
    ],
)
@pytest.mark.parametrize("per_query", [False, True])
def test_undefined_segregation_is_warned(
    metrics: list[str],
    sizes: dict[str, int],
    named: str | None,
    count: int,
    first: str | None,
    per_query: bool,
) -> None:
    out, said = _irm_warnings(
        lambda: irm.evaluate(_fair_run(sizes), metrics, groups=GROUPS, per_query=per_query)
    )
    if named is None:
        assert said == []
        assert not out[metrics[0]].is_nan().any()
        return
    verb = "are" if "," in named else "is"
    assert said == [
        _RND_WARNING.format(
            named=named, verb=verb, count=count, total=len(sizes), place=f"query_id={first!r}"
        )
    ]
    if not per_query:  # the mean over the queries is NaN with them
        assert out[metrics[0]].is_nan().all()


# an empty table: every route says so in one sentence (ground.validate.warn_empty_table)
_EMPTY = (
    "{table} holds no row, so every metric is null: nothing was scored (a filter that "
    "kept nothing, or an empty file?)"
)
_LOG = pl.DataFrame({"session_id": ["s1"], "position": [1], "clicked": [1], "arm": ["A"]}).clear()
_RECS = pl.DataFrame({"user_id": ["u1"], "item_id": ["a"], "rank": [1]}).clear()
_HISTORY = pl.DataFrame({"user_id": ["u1", "u2"], "item_id": ["a", "c"]})
_PREDICTIONS = pl.DataFrame({"query_id": ["q"], "label": [1], "prediction": [0.5]}).clear()


@pytest.mark.parametrize(
    ("table", "call"),
    [
        (
            "the table",
            lambda: irm.evaluate(
                _PREDICTIONS, ["logloss", "auc"], label="label", prediction="prediction"
            ),
        ),
        (
            "the recommendation table",
            lambda: irm.evaluate(
                _RECS,
                ["catalog_coverage", "novelty"],
                interactions=_HISTORY,
                query_id="user_id",
                doc_id="item_id",
            ),
        ),
        (
            "the recommendation table",
            lambda: irm.beyond_accuracy(_RECS, ["catalog_coverage"], interactions=_HISTORY),
        ),
        ("the impression log", lambda: irm.evaluate_online(_LOG, ["ctr@10", "abandonment"])),
        ("the impression log", lambda: irm.evaluate_online(_LOG, ["ctr@10"], by="arm")),
        ("the impression log", lambda: irm.evaluate_online(_LOG, ["ctr@10"], per_session=True)),
        (
            "the impression log",
            lambda: irm.evaluate(_LOG, ["ctr@10"], query_id="session_id", rank="position"),
        ),
    ],
)
def test_every_route_says_its_table_is_empty(table: str, call) -> None:  # type: ignore[no-untyped-def]
    out, said = _irm_warnings(call)
    assert said == [_EMPTY.format(table=table)]
    numbers = out.select(pl.exclude("num_sessions", "num_rows", "arm", "session_id"))
    assert numbers.height == 0 or numbers.null_count().row(0) == (1,) * numbers.width


def test_a_table_with_rows_is_not_said_empty() -> None:
    recs = pl.DataFrame({"user_id": ["u1"], "item_id": ["a"], "rank": [1]})
    out, said = _irm_warnings(
        lambda: irm.beyond_accuracy(recs, ["catalog_coverage"], interactions=_HISTORY)
    )
    assert said == []
    assert out["catalog_coverage"][0] == 0.5  # 1 of the history's 2 items recommended
    log = pl.DataFrame({"session_id": ["s1"], "position": [1], "clicked": [1]})
    out, said = _irm_warnings(lambda: irm.evaluate_online(log, ["ctr@10"]))
    assert said == []
    assert out["ctr@10"][0] == 1.0


# irm.reproducibility: a NaN p-value and an nrmse of an unbounded metric, now said
_RQRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "b", "a"], "relevance": [1, 1, 2]}
)
_ORIGINAL = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["a", "b"] * 3,
        "score": [2.0, 1.0, 2.0, 1.0, 1.0, 2.0],
    }
)
_REVERSED = _ORIGINAL.with_columns(pl.col("score").reverse().over("query_id"))


def test_reproducibility_says_why_a_p_value_is_nan() -> None:
    # num_ret is 2 on every topic of both runs: the paired deltas are all 0 and both
    # samples constant, so scipy's two t statistics are 0 / 0; P_1 differs (1, 1, 0
    # against 0, 0, 1) and its p-values are numbers
    out, said = _irm_warnings(
        lambda: irm.reproducibility(
            {"baseline": _ORIGINAL}, {"baseline": _REVERSED}, ["P_1", "num_ret"], qrels=_RQRELS
        )
    )
    tail = " (scipy and repro_eval give NaN too; nothing tells the reproduction from the original there)"  # noqa: E501
    assert said[1:] == [
        "p_paired of 'num_ret' (run 'baseline') is NaN: the reproduced per-topic values "
        "equal the original's on every topic, so the paired t statistic is 0 / 0" + tail,
        "p_unpaired of 'num_ret' (run 'baseline') is NaN: the original and reproduced "
        "per-topic values are all 2.0, so the unpaired t statistic is 0 / 0" + tail,
    ]
    tests = out.filter(pl.col("measure").str.starts_with("p_"))
    assert tests.filter(pl.col("metric") == "num_ret")["value"].is_nan().all()
    assert not tests.filter(pl.col("metric") == "P_1")["value"].is_nan().any()


def test_reproducibility_names_the_metrics_nrmse_does_not_fit() -> None:
    # dcg of both runs runs from 1/log2(3) = 0.63.. (a relevant document at rank 2) to
    # 2/log2(2) = 2 (q3's relevance-2 document at rank 1 in the reproduction): above 1,
    # so max(o, 1 - o) is no largest error; num_ret is a count (declared integer)
    _, said = _irm_warnings(
        lambda: irm.reproducibility(
            {"baseline": _ORIGINAL},
            {"baseline": _REVERSED},
            ["P_1", "num_ret", "dcg"],
            qrels=_RQRELS,
        )
    )
    assert said[0] == (
        "nrmse assumes per-topic values in [0, 1]: it divides the RMSE by "
        "sqrt(mean(max(o, 1 - o)^2)), the largest error such values allow; 'num_ret' is "
        "a count; 'dcg' has per-topic values from 0.6309297535714574 to 2.0, so their "
        "nrmse are no share of a largest error: read the rmse"
    )
    # P_1 alone, in [0, 1]: nothing said
    _, said = _irm_warnings(
        lambda: irm.reproducibility(
            {"baseline": _ORIGINAL}, {"baseline": _REVERSED}, ["P_1"], qrels=_RQRELS
        )
    )
    assert said == []


# tukey_hsd where no system's per-query values vary: p 1 or 0 and a point interval, said
def _judged_run(hits: list[int]) -> pl.DataFrame:
    n = len(hits)
    return pl.DataFrame(
        {"query_id": range(1, n + 1), "doc_id": [1] * n, "rank": [1] * n, "relevance": hits}
    )


_NO_SPREAD = (
    "tukey_hsd of 'P@1': no system's per-query values vary (each system has one value on "
    "all 4 queries: {shown}), so there is no variance to test against; each pair's "
    "p_value is 1 where the means are equal (scipy's tukey_hsd gives NaN) and 0 where "
    "they differ (as scipy's), and its interval the delta itself, resting on no spread, "
    "not on evidence: compare on more queries before reading it"
)


@pytest.mark.parametrize(
    ("a", "b", "row", "shown", "scipy_p"),
    [
        ([1, 1, 1, 1], [1, 1, 1, 1], (0.0, 0.0, 0.0, 1.0), "1, 1", float("nan")),
        ([0, 0, 0, 0], [1, 1, 1, 1], (1.0, 1.0, 1.0, 0.0), "0, 1", 0.0),
        ([1, 0, 1, 0], [1, 0, 1, 0], None, None, 1.0),  # spread: scipy's numbers, silence
    ],
)
def test_tukey_without_spread_is_said(
    a: list[int],
    b: list[int],
    row: tuple[float, ...] | None,
    shown: str | None,
    scipy_p: float,
) -> None:
    runs = {"a": _judged_run(a), "b": _judged_run(b)}
    out, said = _irm_warnings(lambda: irm.tukey_hsd(runs, "P@1", qrels=None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        reference = scipy.stats.tukey_hsd(np.array(b, float), np.array(a, float)).pvalue[0, 1]
    np.testing.assert_equal(reference, scipy_p)
    if row is None:
        assert said == []
        assert out["p_value"][0] == pytest.approx(scipy_p, rel=1e-12)
        return
    assert said == [_NO_SPREAD.format(shown=shown)]
    assert out.select("delta", "ci_low", "ci_high", "p_value").row(0) == row


def test_a_count_of_the_judgments_is_not_said_identical() -> None:
    # num_rel (no better direction) is the judgments' count: the same in every system by
    # design; P@1 of the same two runs is identical and said, num_rel is not
    _, said = _irm_warnings(
        lambda: irm.compare({"a": RUN, "b": RUN}, ["P@1", "num_rel"], qrels=QRELS, baseline="a")
    )
    assert said == [IDENTICAL]
    other = RUN.with_columns(doc_id=pl.Series(["n", "y", "z"]))
    _, said = _irm_warnings(
        lambda: irm.compare({"a": RUN, "b": other}, ["P@1", "num_rel"], qrels=QRELS, baseline="a")
    )
    assert said == []


# interleaving_test of sessions without any click: null preference, p 1, now said
_NO_CLICK = (
    "no session of the log{where} has a click ({n} sessions, all counted in no_click): "
    "nothing tells the teams apart, so preference is null and p_value 1 (scipy's "
    "binomtest refuses 0 trials); check the 'clicked' column (clicked=...), or log more "
    "sessions"
)


@pytest.mark.parametrize("lazy", [False, True])
def test_interleaving_without_a_click_is_said(lazy: bool) -> None:
    log = pl.DataFrame(
        {
            "session_id": ["s1", "s1", "s2", "s2", "s3", "s3"],
            "position": [1, 2] * 3,
            "team": ["A", "B", "B", "A", "A", "B"],
            "clicked": [0, 0, 0, 0, 1, 0],
            "day": ["d1", "d1", "d1", "d1", "d2", "d2"],
        }
    )
    given = log.lazy() if lazy else log

    def run() -> pl.DataFrame:
        out = irm.interleaving_test(given, by="day")
        return out.collect() if isinstance(out, pl.LazyFrame) else out

    out, said = _irm_warnings(run)
    # d1: two sessions, no click; d2: one session, A's item clicked (1 win of 1: p 1)
    assert said == [_NO_CLICK.format(where=" (day='d1')", n=2)]
    assert out.select("day", "preference", "p_value").rows() == [
        ("d1", None, 1.0),
        ("d2", 0.5, 1.0),
    ]
    with_clicks = log.with_columns(clicked=pl.Series([1, 0, 1, 0, 1, 0]))
    _, said = _irm_warnings(lambda: irm.interleaving_test(with_clicks, by="day"))
    assert said == []


# compare on huge values beside ordinary deltas: the t-test read a variance of 0
_USERS = ["u1", "u1", "u2", "u2", "u3", "u3"]
_HUGE_A = pl.DataFrame(
    {"user": _USERS, "y": [1.0, 0, 1, 0, 1, 0], "p": [1e200, 0.1, 0.8, 0.2, 0.7, 0.3]}
)
_HUGE_B = _HUGE_A.with_columns(p=pl.Series([1e200, 0.2, 0.8, 0.1, 0.7, 0.5]))


@pytest.mark.parametrize("metric", ["rmse", "mae"])
def test_huge_values_beside_ordinary_deltas_are_tested_as_scipy(metric: str) -> None:
    # u1's error is 1e200 in both systems (delta 0); u2 and u3 differ by a few tenths.
    # Scaled to the values' 1e200, those deltas were 1e-201, whose squares vanish: the
    # t-test's variance was 0, p 0 and the effect size NaN
    kw = {"label": "y", "prediction": "p", "query_id": "user"}
    out = irm.compare({"A": _HUGE_A, "B": _HUGE_B}, metric, baseline="A", **kw)
    per_user = [
        irm.evaluate(run, [metric], per_query=True, **kw).sort("user")[metric].to_numpy()
        for run in (_HUGE_A, _HUGE_B)
    ]
    reference = scipy.stats.ttest_rel(per_user[1], per_user[0])
    d = per_user[1] - per_user[0]
    row = out.row(0, named=True)
    assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-12)
    assert row["statistic"] == pytest.approx(reference.statistic, rel=1e-12)
    assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    low, high = reference.confidence_interval(0.95)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))


def test_an_infinite_per_query_value_is_refused() -> None:
    # mse of u1: ((1e200 - 1)^2 + 0.1^2) / 2 = 5e399, beyond float64: inf in both
    # systems, whose delta inf - inf is NaN (p NaN reached the correction's own check)
    with pytest.raises(irm.InvalidValueError) as info:
        irm.compare(
            {"A": _HUGE_A, "B": _HUGE_B},
            "mse",
            baseline="A",
            label="y",
            prediction="p",
            query_id="user",
        )
    assert str(info.value) == (
        "per-query value of 'mse' for system 'A' on query 'u1' is inf: its true value is "
        "beyond float64's range (about 1.8e308), and an infinite value cannot be paired "
        "(inf - inf is NaN): rescale the labels and predictions (e.g. divide both by "
        "1e150; an error metric scales with them), or compare a metric whose values "
        "float64 holds"
    )


def test_tukey_on_huge_values_has_a_finite_interval() -> None:
    # the rmse per user, 7.07e199 on u1 in both systems: scipy's variances of such
    # values overflow (the interval was [-inf, inf], with numpy's overflow warnings);
    # the test is scale-free, so it equals scipy's on the values divided by 2**663
    kw = {"label": "y", "prediction": "p", "query_id": "user"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = irm.tukey_hsd({"A": _HUGE_A, "B": _HUGE_B}, "rmse", **kw)
    per_user = [
        irm.evaluate(run, ["rmse"], per_query=True, **kw).sort("user")["rmse"].to_numpy()
        for run in (_HUGE_A, _HUGE_B)
    ]
    scale = 2.0**-663  # 7.07e199 = 1.85 * 2**663
    reference = scipy.stats.tukey_hsd(*(v * scale for v in per_user))
    interval = reference.confidence_interval(0.95)
    row = out.row(0, named=True)
    assert row["ci_low"] == interval.low[1, 0] / scale
    assert row["ci_high"] == interval.high[1, 0] / scale
    assert np.isfinite(row["ci_low"])
    assert row["p_value"] == reference.pvalue[1, 0]
