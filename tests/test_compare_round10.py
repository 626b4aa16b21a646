"""Comparison, round 10: judgments per system under the default query set.

``irm.compare`` reads judgments with a ``system`` column as
:func:`~polars_irmetrics.evaluate` reads them with ``systems=``: each system judged
apart. Under ``query_set='judged'`` (the default) it also scores an empty ranking of
every judged query (for a system with an empty run, and for the warning of a missed
query that scores better than a list); that evaluation dropped the systems and read
every system's judgments as one query's, refusing the call with "query 'q1' judges 1
document(s) more than once" and a fix (``.unique(...)``) that would drop one system's
judgments in silence. It now scores the empty ranking per system.
"""

from __future__ import annotations

import re
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm

pytestmark = pytest.mark.filterwarnings(
    "ignore::polars_irmetrics.errors.CoverageWarning", "ignore::polars_irmetrics.IrmWarning"
)

RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b"] * 2, "score": [2.0, 1.0] * 2}
)
RUNS = {"bm25": RUN, "dense": RUN.with_columns(score=-pl.col("score"))}
#: each system's own judgments: a is relevant to bm25 in q1 and q2, to dense in q2 alone
QRELS = pl.DataFrame(
    {
        "system": ["bm25", "bm25", "dense", "dense"],
        "query_id": ["q1", "q2"] * 2,
        "doc_id": ["a"] * 4,
        "relevance": [1, 1, 0, 1],
    }
)


def _alone(name: str, metric: str) -> list[float]:
    """The system's per-query values from its run and its judgments alone."""
    qrels = QRELS.filter(pl.col("system") == name).drop("system")
    out = irm.evaluate(RUNS[name], [metric], qrels=qrels, per_query=True)
    assert isinstance(out, pl.DataFrame)
    return out.sort("query_id").get_column(metric).to_list()


@pytest.mark.parametrize("query_set", ["judged", "common", "error"])
def test_judgments_per_system(query_set: str) -> None:
    out = irm.compare(RUNS, ["map"], qrels=QRELS, query_set=query_set, per_query=True)  # type: ignore[arg-type]
    rows = out.sort("query_id")
    # bm25 ranks a first (AP 1); dense ranks it second, relevant in q2 alone (AP 0.5)
    assert rows.get_column("baseline_value").to_list() == _alone("bm25", "map") == [1.0, 1.0]
    assert rows.get_column("value").to_list() == _alone("dense", "map") == [0.0, 0.5]
    means = irm.compare(RUNS, ["map"], qrels=QRELS, query_set=query_set)  # type: ignore[arg-type]
    assert means.select("system", "mean", "baseline_mean").rows() == [("dense", 0.25, 1.0)]


def test_an_empty_run_judged_per_system() -> None:
    """A system with an empty run scores 0 on each of its own judged queries. unjudged@1
    of an empty ranking is 0, which is no win: the judgments' completeness has no
    better direction (round 29), so no missed-query warning is due."""
    runs = {**RUNS, "empty": RUN.head(0)}
    qrels = pl.concat([QRELS, QRELS.filter(system="bm25").with_columns(system=pl.lit("empty"))])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.compare(runs, ["map", "unjudged@1"], qrels=qrels, per_query=True)
    empty = out.filter(system="empty", baseline="bm25").sort("metric", "query_id")
    assert empty.select("metric", "query_id", "value").rows() == [
        ("map", "q1", 0.0),
        ("map", "q2", 0.0),
        ("unjudged@1", "q1", 0.0),
        ("unjudged@1", "q2", 0.0),
    ]
    said = [
        str(w.message)
        for w in caught
        if "scores better as an empty ranking" in str(w.message)
        or "score better as an empty ranking" in str(w.message)
    ]
    assert said == []
    assert empty.filter(metric="unjudged@1")["higher_is_better"].to_list() == [None] * 2


# ------------------------------------------- per_query=True reads no statistics option

JUDGED = pl.DataFrame(
    {"query_id": ["a", "b", "c"], "doc_id": ["x"] * 3, "rank": [1] * 3, "relevance": [1, 0, 1]}
)
OTHER = JUDGED.with_columns(relevance=pl.Series([0, 1, 1]))
LONG = pl.concat([JUDGED.with_columns(system=pl.lit("a")), OTHER.with_columns(system=pl.lit("b"))])


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("test", "wilcoxon"),
        ("alternative", "greater"),
        ("correction", "bonferroni"),
        ("correction_scope", "metric"),
        ("alpha", 0.5),
        ("confidence", 0.5),
        ("ci", "t"),
        ("n_resamples", 100),
        ("seed", 3),
    ],
)
def test_per_query_refuses_the_statistics_options(name: str, value: object) -> None:
    """Before, compare(per_query=True, test='wilcoxon', alpha=0.5, ...) returned the
    frame the plain call returns: every statistics option ignored in silence."""
    message = (
        f"{name}={value!r} is read by the tests and intervals of the summary, and "
        "per_query=True lists the paired per-query values, with no test: drop "
        f"{name}=, or drop per_query=True"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare({"a": JUDGED, "b": OTHER}, "P@1", qrels=None, per_query=True, **{name: value})
    # the defaults, given, are no choice: accepted
    default = irm.compare({"a": JUDGED, "b": OTHER}, "P@1", qrels=None, per_query=True)
    assert default.height == 3


# ---------------------------------- lf.irm.compare raises the library's own classes


@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        (
            {"test": "nope"},
            irm.InvalidValueError,
            "test='nope' is not valid; choose one of 't', 'wilcoxon', 'randomization', "
            "'bootstrap'",
        ),
        (
            {"system": "nope"},
            irm.ColumnNotFoundError,
            "column 'nope' (the system of each row) is not in the runs; pass "
            "system='<your system column>' or a dict of runs",
        ),
        (
            {"alpha": 2.0},
            irm.InvalidValueError,
            "alpha=2.0 must be strictly between 0 and 1 (e.g. alpha=0.05)",
        ),
    ],
)
def test_lazy_compare_checks_its_arguments_when_called(
    given: dict[str, object], error: type[Exception], message: str
) -> None:
    """Before, the lazy namespace's compare raised polars' ComputeError ("schema
    callable failed: InvalidValueError: ...") on collect() and collect_schema()."""
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        LONG.lazy().irm.compare("P@1", qrels=None, **given)  # type: ignore[arg-type]


def test_lazy_compare_raises_an_error_of_the_rows_on_collect() -> None:
    doubled = pl.concat([LONG, LONG.head(1)]).lazy().irm.compare("P@1", qrels=None)
    with pytest.raises(irm.DuplicateError, match="has 1 repeated listing\\(s\\)"):
        doubled.collect()
    out = LONG.lazy().irm.compare("P@1", qrels=None)
    assert out.collect_schema() == out.collect().schema
    assert out.collect().equals(LONG.irm.compare("P@1", qrels=None))


def test_systems_judged_on_other_queries_are_named_without_a_guess() -> None:
    """The hint guessed "(unjudged='zero'?)", an option the user had not passed (nor
    could, for prediction metrics); it now names what gives each system its queries."""
    runs = {**RUNS, "empty": RUN.head(0)}
    qrels = pl.concat(
        [QRELS, QRELS.filter(system="bm25", query_id="q1").with_columns(system=pl.lit("empty"))]
    )
    message = (
        "system 'empty' has no value for query 'q2' (1 of 2 queries are missing from some "
        "system); systems were scored on different queries (each system's own: those its "
        "judgments hold, its predictions' users, or those where a metric is defined); pass "
        "query_set='common' to keep the queries every system has"
    )
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        irm.compare(runs, ["map"], qrels=qrels)


def test_an_unknown_keyword_lists_compare_s_options() -> None:
    """A misspelt alpha= was refused with evaluate's option list: without compare's own
    statistics options (alpha, test...), with the four it sets itself (by, systems...)."""
    with pytest.raises(irm.InvalidValueError) as raised:
        irm.compare({"a": JUDGED, "b": OTHER}, "P@1", qrels=None, alph=0.1)  # type: ignore[call-arg]
    text = str(raised.value)
    assert text.startswith("unknown option alph=...; the options are action, alpha, alternative,")
    listed = text.split("the options are ")[1].split(", ")
    assert {"alpha", "test", "baseline", "query_set", "per_query", "relevance_level"} <= set(
        listed
    )
    assert not {"by", "systems", "unretrieved", "runs", "metrics"} & set(listed)


def test_a_whole_table_metric_has_no_pairs() -> None:
    """item_mad@k compared was refused with "evaluate it with per_query=False", a choice
    compare does not give (it pairs per-query values)."""
    groups = pl.DataFrame({"doc_id": ["a", "b"], "group": [0, 1]})
    message = (
        "metric 'item_mad@2' (Elliot's MAD) has no per-query value: it compares clusters of "
        "the whole recommendation table, and irm.compare pairs per-query values; evaluate it "
        "for each system with irm.evaluate(run, ['item_mad@2'], qrels=..., groups=..., "
        "systems=...)"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.compare(RUNS, ["item_mad@2"], qrels=QRELS.drop("system"), groups=groups)
