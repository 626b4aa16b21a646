"""An option that none of the requested metrics reads is refused, never ignored: every
option × every route of the door, from the one table that says which route reads which
option (``ground/options.READ_BY``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.ground.options import (
    READ_BY,
    ROUTE_METRICS,
    EvalOptions,
    check_read,
    option_names,
)
from polars_irmetrics.ground.options import ROUTES as OPTION_ROUTES
from polars_irmetrics.metrics.elliot import ELLIOT
from polars_irmetrics.metrics.mad import MAD
from polars_irmetrics.metrics.spec import Route

from .helpers import irm_in_process

#: one metric of each route of the door
ROUTES = {
    "offline": "ndcg@10",
    "recsys": "catalog_coverage",
    "online": "ctr@10",
    "prefs": "prefs_simp",
    "jg": "map_avgjg",
    "prediction": "auc",
    "neighbors": "neighbor_recall@10",
    "ope": "ips",
    "reference": "rbo",
    "propensity": "ps_ndcg@10",
    "exposure": "ee_loss",
}

#: a value other than the default for each option of the table
VALUES: dict[str, object] = {
    "per_query": True,
    "query_id": "qid",
    "doc_id": "did",
    "order": "score",
    "rank": "r",
    "score": "s",
    "relevance": "rel",
    "relevance_level": 2,
    "depth": 5,
    "judged_only": True,
    "unjudged": "zero",
    "unretrieved": "drop",
    "check_duplicates": False,
    "debias": irm.Debias(),  # RecTools' DebiasConfig (tests/test_rectools_more.py)
    "buckets": 2,
    "spill_dir": str(Path.cwd()),
    "progress": False,
    "memory_limit": "1GiB",
    "explain": True,
    "partitioned_by": "part",
    "clicked": "click",
    "dwell": "dwell_s",
    "converted": "buy",
    "timestamp": "ts",
    "label": "y",
    "prediction": "p",
    "sample_weight": "w",
    "positive_label": 2,
    "unmatched": "drop",
    "unseen_items": "drop",
    "features": "vector",
    "serendipity_relevance": "weight",
    "jg": "group",
    "sample_id": "draw",
    "round_id": "round",
    "action": "item",
    "reward": "click",
    "propensity": "ps",
    "position": "slot",
    "ci": 0.9,
    "ci_method": "normal",
    "n_bootstrap": 50,
    "seed": 7,
}

TABLE = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})


def test_every_option_has_a_row_and_a_value() -> None:
    # the keyword arguments: not the fields the door sets inside (INTERNAL_OPTIONS)
    fields = set(option_names()) - {"by", "systems"}
    assert set(READ_BY) == fields
    assert set(VALUES) == fields
    assert {route for readers in READ_BY.values() for route in readers} == set(ROUTES)


CASES = [
    pytest.param(option, route, id=f"{option}-{route}") for option in VALUES for route in ROUTES
]


@pytest.mark.parametrize(("option", "route"), CASES)
def test_an_option_no_metric_reads_is_refused(frame_kind: str, option: str, route: str) -> None:
    metric = ROUTES[route]
    table = TABLE.lazy() if frame_kind == "LazyFrame" else TABLE
    kwargs: dict[str, object] = {option: VALUES[option]}
    value = VALUES[option]
    readers = READ_BY[option]
    if option == "spill_dir" and route in readers:
        kwargs["buckets"] = 2  # spill_dir is read out of core
    if route in readers:
        # read: the door's check passes it on (labels=: the two-table form of unmatched)
        check_read(EvalOptions.build(**kwargs), {route: [metric]}, labels=True)
        return
    by = " and ".join(ROUTE_METRICS[r] for r in sorted(readers))
    message = (
        f"{option}={value!r} is not read by metric {metric!r}: only {by} read it; drop "
        f"{option}= (an option no metric reads would change nothing), or evaluate a metric "
        "that reads it"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, [metric], **kwargs)  # type: ignore[arg-type]


def test_the_issue_case_sample_weight_with_a_ranking_metric(frame_kind: str) -> None:
    run = pl.DataFrame(
        {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0], "w": [1.0, 9.0]}
    )
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
    table = run.lazy() if frame_kind == "LazyFrame" else run
    message = (
        "sample_weight='w' is not read by metric 'ndcg_score@10': only the prediction "
        "metrics (auc, logloss, rmse...) read it; drop sample_weight="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, ["ndcg_score@10"], qrels=qrels, sample_weight="w")


def test_several_metrics_are_named_and_any_reader_suffices() -> None:
    message = "features='vector' is not read by metrics 'ndcg@10', 'map': only the beyond"
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(TABLE, ["ndcg@10", "map"], features="vector")


def test_defaults_passed_explicitly_are_not_given() -> None:
    options = EvalOptions.build(sample_weight=None, label="label", per_query=False, depth=None)
    assert options.given() == ()
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    out = irm.evaluate(TABLE, ["P@1"], qrels=qrels, sample_weight=None, label="label")
    assert out.rows() == [(1, 1.0)]


def test_spill_dir_without_buckets(frame_kind: str) -> None:
    table = TABLE.lazy() if frame_kind == "LazyFrame" else TABLE
    folder = str(Path.cwd())
    message = (
        f"spill_dir={folder!r} is the folder of the out-of-core buckets, and buckets=None "
        "evaluates in one plan, which writes none: drop spill_dir=, or pass buckets=N, "
        "'auto' or 'auto-memory'"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, ["ndcg@10"], buckets=None, spill_dir=folder)


@pytest.mark.parametrize(("option", "value"), [("memory_limit", "1GiB"), ("explain", True)])
def test_auto_memory_options_without_auto_memory(
    frame_kind: str, option: str, value: object
) -> None:
    table = TABLE.lazy() if frame_kind == "LazyFrame" else TABLE
    message = (
        f"{option}={value!r} is read only by buckets='auto-memory' (which chooses one plan "
        f"or out of core), and buckets=4 chooses for itself: drop {option}=, or pass "
        "buckets='auto-memory'"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, ["ndcg@10"], buckets=4, **{option: value})  # type: ignore[arg-type]


def test_unmatched_without_labels(frame_kind: str) -> None:
    log = pl.DataFrame({"label": [0, 1], "prediction": [0.2, 0.7]})
    table = log.lazy() if frame_kind == "LazyFrame" else log
    message = (
        "unmatched='drop' says what a prediction without a label does when the labels "
        "come in a table of their own (labels=...), and none was given: drop unmatched=, "
        "or pass labels="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, ["auc"], unmatched="drop")


def test_compare_refuses_what_evaluate_refuses() -> None:
    run = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    message = (
        "sample_weight='w' is not read by metric 'ndcg@10': only the prediction metrics "
        "(auc, logloss, rmse...) read it; drop sample_weight="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.compare({"a": run, "b": run}, "ndcg@10", qrels=qrels, sample_weight="w")
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.tukey_hsd({"a": run, "b": run, "c": run}, "ndcg@10", qrels=qrels, sample_weight="w")


@pytest.mark.parametrize(
    ("name", "metric", "why"),
    [
        ("ctr(agg='std')", "ctr", "its online route computes one summary of its own"),
        ("auc(agg='median')", "auc", "its prediction route computes one summary of its own"),
        ("ips(agg='max')", "ips", "its ope route computes one summary of its own"),
    ],
)
def test_an_aggregate_a_route_would_ignore_is_refused(name: str, metric: str, why: str) -> None:
    """``agg=`` summarizes per-query values; a metric summarized by its own route refuses
    it rather than ignore it (``ctr(agg='std')`` once gave ``ctr``'s mean in silence)."""
    agg = name.split("'")[1]
    message = (
        f"metric {name!r}: agg={agg!r} summarizes per-query values; {metric} has none to "
        f"summarize ({why}), so agg= would be ignored: drop agg={agg!r}"
    )
    with pytest.raises(irm.MetricParameterError, match=re.escape(message)):
        irm.parse_metric(name)
    assert irm.parse_metric(name.replace(agg, "mean")).aggregate is None


def test_the_option_table_knows_every_route() -> None:
    """ground/options.py writes the routes out (it sits below the registry's ``Route``);
    the two lists must stay equal."""
    assert set(get_args(Route)) == OPTION_ROUTES


@pytest.mark.parametrize(
    ("table", "metric", "what"),
    [
        ("prefs", "map", "the preference judgments the prefs_* measures read"),
        ("qrels_jg", "map", "the judgment groups the *_avgjg measures read"),
        ("qrels_jg", "prefs_simp", "the judgment groups the *_avgjg measures read"),
        ("prefs", "map_avgjg", "the preference judgments the prefs_* measures read"),
    ],
)
def test_an_unread_judgment_table_is_refused(
    frame_kind: str, table: str, metric: str, what: str
) -> None:
    # prefs= and qrels_jg= beside metrics that read neither were once ignored
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
    prefs = pl.DataFrame(
        {"query_id": ["q1"], "jg": ["u"], "jsg": ["s"], "doc_id": ["a"], "rel_level": [1.0]}
    )
    tables = {"qrels": qrels, "prefs": prefs, "qrels_jg": qrels.with_columns(jg=pl.lit("u"))}
    given = {"qrels": tables["qrels"]} if metric == "map" else {}
    if metric == "prefs_simp":
        given = {"prefs": prefs}
    if metric == "map_avgjg":
        given = {"qrels_jg": tables["qrels_jg"]}
    given[table] = tables[table]
    kind = {k: v.lazy() if frame_kind == "LazyFrame" else v for k, v in given.items()}
    message = (
        f"{table}= holds {what}, and no metric asked for reads it: drop {table}=, or ask "
        "for one of them (in a call of its own)"
    )
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        irm.evaluate(run.lazy() if frame_kind == "LazyFrame" else run, [metric], **kind)


def test_a_relevance_level_no_graded_metric_reads_is_refused(
    frame_kind: str, tmp_path: Path
) -> None:
    # nDCG and ERR weigh each judged document by its label (trec_eval's ndcg ignores
    # -l): a level beside them alone would change nothing, so it is refused; beside a
    # binary metric it is read (P@1 of a top document judged 1: 1 at level 1, 0 at 2)
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 2]})
    table = run.lazy() if frame_kind == "LazyFrame" else run
    message = (
        "relevance_level=2 is not read by metrics 'ndcg@10', 'err': a graded metric weighs "
        "each judged document by its label (its gain), a metric with a level of its own "
        "(P(rel=2)@5) reads that one, and only binary metrics (P, recall, map, mrr...) read "
        "a relevance level; drop relevance_level= (it would change nothing), or evaluate a "
        "binary metric"
    )
    with pytest.raises(InvalidValueError) as info:
        irm.evaluate(table, ["ndcg@10", "err"], qrels=qrels, relevance_level=2)
    assert str(info.value) == message
    levels = [
        irm.evaluate(run, ["ndcg@10", "P@1"], qrels=qrels, relevance_level=level).row(0)
        for level in (1, 2)
    ]
    assert levels[0][1] == levels[1][1]  # ndcg@10 alike
    assert (levels[0][2], levels[1][2]) == (1.0, 0.0)
    # trec_eval takes -l beside any measure: so does the command that speaks its language
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 2\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    done = [
        irm_in_process("trec-eval", *level, "-m", "ndcg", "qrels", "run", cwd=tmp_path)
        for level in ((), ("-l", "2"))
    ]
    assert done[0].returncode == done[1].returncode == 0, done[1].stderr
    assert done[0].stdout == done[1].stdout


def test_the_metrics_that_threshold_on_the_calls_level_read_it() -> None:
    # Elliot's metrics, the MAD metrics and RecTools' Serendipity weigh the labels and
    # count a relevant item at the call's relevance_level (Elliot's rel_threshold): the
    # level is theirs to read (not refused), and rel= of their own is refused, saying so
    thresholded = {m.name for m in irm.list_metrics() if m.threshold}
    assert thresholded == {*ELLIOT, *MAD, "serendipity"}
    message = (
        "metric 'pop_rsp(rel=2)@5': pop_rsp takes no relevance level 'rel' of its own: it "
        "weighs the labels, and where it counts relevant items (Elliot's rel_threshold, "
        "RecTools' Serendipity) it reads the call's: pass relevance_level= to irm.evaluate "
        "instead"
    )
    with pytest.raises(MetricParameterError) as info:
        irm.parse_metric("pop_rsp(rel=2)@5")
    assert str(info.value) == message
    run = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "a", "a"], "rank": [1, 2, 1]}
    )
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "a"], "relevance": [1, 2]})
    history = pl.DataFrame({"query_id": ["q3", "q3", "q4"], "doc_id": ["a", "b", "a"]})
    for metric in ("epc@2", "serendipity(kind='kotkov')@2"):
        one, two = (
            irm.evaluate(run, [metric], qrels=qrels, interactions=history, relevance_level=level)
            for level in (1, 2)
        )
        assert not one.equals(two), metric  # q1's top item b is relevant at level 1 only
