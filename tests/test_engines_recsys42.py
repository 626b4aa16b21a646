"""Issue 42 out of core and on the engines: the exposure measures (``ee_*``, ``awrf``,
``awrf_ndcg``, ``rnd``, ``rkl``, ``rrd``) with ``buckets=``, on Spark and on Dask, the
same bits as :func:`polars_irmetrics.evaluate` in one plan; ``groups=`` and ``target=``
read whole by every part."""

from __future__ import annotations

import random
import re
import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CoverageWarning,
    InvalidValueError,
    IrmError,
    MetricParameterError,
)

from .conftest import Evaluate
from .helpers import at_once, engine_io


def _tables(seed: int = 7, queries: int = 24, samples: int = 3) -> dict[str, pl.DataFrame]:
    """A stochastic run (``sample`` rankings per query), judgments with grades 0-2,
    documents in one or two of three groups, and a target over the groups."""
    rng = random.Random(seed)
    rows, judged = [], []
    for q in range(queries):
        pool = rng.sample(range(40), 12)
        for s in range(samples):
            ranking = rng.sample(pool, 8)
            rows += [(f"q{q:02d}", s, f"d{d}", r + 1) for r, d in enumerate(ranking)]
        judged += [(f"q{q:02d}", f"d{d}", rng.randint(0, 2)) for d in rng.sample(pool, 6)]
    run = pl.DataFrame(rows, schema=["query_id", "sample", "doc_id", "rank"], orient="row")
    qrels = pl.DataFrame(judged, schema=["query_id", "doc_id", "relevance"], orient="row")
    memberships = [(f"d{d}", f"g{d % 3}") for d in range(40)]
    memberships += [(f"d{d}", f"g{(d + 1) % 3}") for d in range(0, 40, 5)]  # two groups
    groups = pl.DataFrame(memberships, schema=["doc_id", "group"], orient="row")
    target = pl.DataFrame({"group": ["g0", "g1", "g2"], "target": [0.5, 0.25, 0.25]})
    return {"run": run, "qrels": qrels, "groups": groups, "target": target}


TABLES = _tables()
DETERMINISTIC = {
    **TABLES,
    "run": TABLES["run"].filter(pl.col("sample") == 0).drop("sample"),
}

# (id, metrics, tables read beside the run, the run's tables)
EXPOSURE_CASES: list[tuple[str, list[str], tuple[str, ...], dict[str, pl.DataFrame]]] = [
    (
        "ee-groups-sampled",
        ["ee_loss", "ee_disparity", "ee_relevance(browsing='geometric', patience=0.8)"],
        ("qrels", "groups"),
        TABLES,
    ),
    ("ee-documents", ["ee_loss", "ee_disparity"], ("qrels",), TABLES),
    ("awrf-target", ["awrf", "awrf_ndcg"], ("qrels", "groups", "target"), DETERMINISTIC),
    ("awrf-uniform", ["awrf_ndcg"], ("qrels", "groups"), DETERMINISTIC),
    ("segregation", ["rnd", "rkl", "rrd"], ("groups",), DETERMINISTIC),
    ("mixed", ["ndcg@5", "ee_loss", "P@3"], ("qrels", "groups"), DETERMINISTIC),
]


def _one_plan(
    tables: dict[str, pl.DataFrame], metrics: list[str], reads: tuple[str, ...], **options: Any
) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        return irm.evaluate(  # type: ignore[return-value]
            tables["run"], metrics, **{name: tables[name] for name in reads}, **options
        )


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize(
    ("metrics", "reads", "tables"),
    [c[1:] for c in EXPOSURE_CASES],
    ids=[c[0] for c in EXPOSURE_CASES],
)
def test_exposure_in_buckets_gives_the_one_plans_bits(
    frame_kind: str,
    metrics: list[str],
    reads: tuple[str, ...],
    tables: dict[str, pl.DataFrame],
    per_query: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    whole = _one_plan(tables, metrics, reads, per_query=per_query)
    given = {name: tables[name] for name in ("run", *reads)}
    if frame_kind == "LazyFrame":
        given = {name: frame.lazy() for name, frame in given.items()}  # type: ignore[misc]
    out = irm.evaluate(
        given.pop("run"),
        metrics,
        **given,  # type: ignore[arg-type]
        per_query=per_query,
        buckets=3,
        progress=True,
    )
    if frame_kind == "LazyFrame":
        assert isinstance(out, pl.LazyFrame)
        out = out.collect()
    assert isinstance(out, pl.DataFrame)
    assert out.equals(whole)
    assert whole.height > (12 if per_query else 0)
    assert "3/3" in capsys.readouterr().err  # the three buckets were evaluated


def test_exposure_spill_dir_needs_buckets() -> None:
    message = (
        "spill_dir='.' is the folder of the out-of-core buckets, and the exposure measures "
        "evaluate in one plan unless buckets= is a number or 'auto': pass buckets=, or drop "
        "spill_dir="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(DETERMINISTIC["run"], ["rnd"], groups=DETERMINISTIC["groups"], spill_dir=".")


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
def test_exposure_in_buckets_writes_in_spill_dir(tmp_path: Any) -> None:
    out = irm.evaluate(
        TABLES["run"],
        ["ee_loss"],
        qrels=TABLES["qrels"],
        groups=TABLES["groups"],
        buckets="auto",
        spill_dir=tmp_path,
    )
    assert out.equals(_one_plan(TABLES, ["ee_loss"], ("qrels", "groups")))
    assert list(tmp_path.iterdir()) == []  # the buckets' folder is gone


#: the engines' parts in these tests: two, more than one so that every merge of the parts'
#: values runs, and as many as the Spark session's two cores and the Dask cluster's two
#: workers run at once (three parts took two rounds of tasks: a quarter of each call)
PARTS = 2


def _engine(name: str, request: pytest.FixtureRequest) -> tuple[Any, Any, Any]:
    """The engine's evaluate, a converter to its frames and one back (helpers.engine_io)."""
    return engine_io(name, request)


class _Computed:
    """A computed Dask result, handed to helpers.engine_io's converter back to polars."""

    def __init__(self, frame: Any) -> None:
        self.frame = frame

    def compute(self) -> Any:
        return self.frame


def results(engine: str, calls: list[Callable[[], Any]], back: Any) -> list[pl.DataFrame]:
    """The results of several calls of the engine's evaluate (each a function making
    one) as polars frames (``back``: the engine's converter): Spark's calls made from a
    few threads at once (helpers.at_once: calls that raise nothing, their warnings
    unread), Dask's lazy results in one ``dask.compute`` of them all (one graph, one
    round of tasks: the per-compute cost of the cluster paid once), each converted back
    as alone."""
    if engine != "dask":
        return at_once([lambda call=call: back(call()) for call in calls])
    import dask

    return [back(_Computed(frame)) for frame in dask.compute(*(call() for call in calls))]


# the training history: users (some without recommendations) and 35 of the 40 items
HISTORY = pl.DataFrame(
    [(f"q{u:02d}", f"d{(u * 7 + i) % 35}") for u in range(30) for i in range(5)],
    schema=["query_id", "doc_id"],
    orient="row",
)

# the exposure measures, alone and beside accuracy metrics (two calls, joined), and
# RecTools' catalogue metrics beside ndcg (interactions=: only the catalogue travels).
# Not awrf-uniform: it hands the engine the side tables of ee-groups-sampled (judgments
# and groups, broadcast whole to each part's one plan), and its values are checked in
# buckets above; the target's absence changes the plan only
ENGINE_CASES = [
    *(c for c in EXPOSURE_CASES if c[0] != "awrf-uniform"),
    (  # rnd reads no judgments: its call takes none, the other call does
        "mixed-sides",
        ["rnd", "mcc@5", "awrf"],
        ("qrels", "groups", "target", "interactions"),
        {**DETERMINISTIC, "interactions": HISTORY},
    ),
    (
        "catalogue",
        ["mcc@5", "ndcg@5", "reco_accuracy@3"],
        ("qrels", "interactions"),
        {**DETERMINISTIC, "interactions": HISTORY},
    ),
]


# A covering design (an engine call costs seconds) in place of every case on every
# engine: each engine evaluates every family of measures (ee_*, awrf with target=, the
# segregation measures, the catalogue's metrics), the exposure measures beside accuracy
# metrics (two calls joined), their means and per-query values. Spark: ee_* of groups=,
# beside accuracy metrics with an exposure call that reads no judgments (mixed-sides),
# per query alone; Dask: ee_* of each document, beside ndcg with an exposure call that
# reads them (mixed), per query beside. Every case runs on an engine
# (test_the_engine_cases_are_covered).
ENGINE_COVER = {
    # engine: (the cases of its means, the case of its per-query values too)
    "spark": (
        ("ee-groups-sampled", "awrf-target", "segregation", "mixed-sides", "catalogue"),
        "ee-groups-sampled",
    ),
    "dask": (("ee-documents", "awrf-target", "segregation", "mixed", "catalogue"), "mixed"),
}


def test_the_engine_cases_are_covered() -> None:
    cases = {case[0] for case in ENGINE_CASES}
    for engine, (means, per_query) in ENGINE_COVER.items():
        assert per_query in means, engine
        assert set(means) <= cases, engine
    assert set().union(*(means for means, _ in ENGINE_COVER.values())) == cases
    # the group ids' warnings: every case on one engine
    assert sorted(i for given in GROUP_ID_COVER.values() for i in given) == [0, 1, 2, 3, 4]
    # by segment: each case's means and per-query values, on one engine each
    assert sorted(zip(*_BY_SEGMENT_COVER.values(), strict=True)) == [(False, True), (True, False)]


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_exposure_on_engines_gives_the_one_plans_bits(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = _engine(engine, request)
    means, per_query_case = ENGINE_COVER[engine]
    calls, outs = [], []
    for case, metrics, reads, tables in ENGINE_CASES:
        if case not in means:
            continue
        frames = {name: frame(tables[name]) for name in ("run", *reads)}
        # the means of the engine's cases; the per-query values (the same parts) of one
        for per_query in (False, True)[: 2 if case == per_query_case else 1]:
            whole = _one_plan(tables, metrics, reads, per_query=per_query)
            calls.append((case, per_query, whole))
            outs.append(
                lambda metrics=metrics, reads=reads, frames=frames, per_query=per_query: evaluate(
                    frames["run"],
                    metrics,
                    **{name: frames[name] for name in reads},
                    per_query=per_query,
                    partitions=PARTS,
                )
            )
    assert len(calls) == 6
    for (case, per_query, whole), got in zip(calls, results(engine, outs, back), strict=True):
        if per_query:  # Dask gives the rows in task order
            got = got.sort("query_id")
        assert got.columns == whole.columns, case
        assert got.cast(whole.schema).equals(whole), (case, per_query)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_side_tables_no_metric_reads(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, _ = _engine(engine, request)
    name = "Spark" if engine == "spark" else "Dask"
    run, groups = frame(DETERMINISTIC["run"]), frame(DETERMINISTIC["groups"])
    qrels = frame(DETERMINISTIC["qrels"])
    unread = (
        "groups= is read by the exposure measures (ee_loss, ee_disparity, ee_relevance, awrf, "
        "awrf_ndcg, rnd, rkl, rrd), and no metric asked for reads it: drop groups=, or ask "
        "for one of them"
    )
    with pytest.raises(MetricParameterError, match=re.escape(unread)):
        evaluate(run, ["ndcg@5"], qrels=qrels, groups=groups)
    with pytest.raises(MetricParameterError, match=re.escape(unread)):
        evaluate(run, ["ips"], groups=groups)  # before the off-policy route takes the call
    apart = (  # as one machine refuses it (beside accuracy metrics, two calls joined)
        "metrics 'auc' and 'ee_loss' are computed from different tables (prediction: labels "
        "and predictions; exposure: a (stochastic) run, judgments and optionally document "
        "groups): evaluate them in two calls"
    )
    with pytest.raises(MetricParameterError, match=re.escape(apart)):
        evaluate(run, ["auc", "ee_loss"], qrels=qrels, groups=groups)
    with pytest.raises(MetricParameterError, match=re.escape(apart)):
        irm.evaluate(DETERMINISTIC["run"], ["auc", "ee_loss"], groups=DETERMINISTIC["groups"])
    # beside accuracy metrics (two calls): a table neither call reads is refused, not lost
    with pytest.raises(IrmError, match="labels="):
        evaluate(run, ["ndcg@5", "ee_loss"], qrels=qrels, groups=groups, labels=qrels)
    kind = f"groups must be a {name} DataFrame, got DataFrame"
    with pytest.raises(ColumnTypeError, match=re.escape(kind)):
        evaluate(run, ["rnd"], groups=DETERMINISTIC["groups"])
    target = (
        "target= holds the target group distribution awrf and awrf_ndcg read, and no metric "
        "asked for reads it: drop target=, or ask for awrf or awrf_ndcg"
    )
    with pytest.raises(MetricParameterError, match=re.escape(target)):
        evaluate(run, ["ee_loss"], qrels=qrels, target=frame(DETERMINISTIC["target"]))
    # metrics of a recommendation table whose parts give rows of different kinds: by
    # name, not a failed task (a metric of the whole table crashed in the means before)
    mixed = (
        "metrics \"novelty(kind='replay')@5\" and 'gini_index@5' merge from different "
        f"parts on {name} (\"novelty(kind='replay')@5\" from the history's users, "
        "'gini_index@5' from the items' counts of every part): evaluate them in two calls"
    )
    with pytest.raises(InvalidValueError, match=re.escape(mixed)):
        evaluate(run, ["novelty(kind='replay')@5", "gini_index@5"], interactions=frame(HISTORY))
    # (intersection@5 and the other metrics of reference= run there: see
    # tests/test_engines_agreement.py)
    history = (
        f"metrics 'pop_rsp@5' and 'ndcg@5' merge from different parts on {name} "
        "('pop_rsp@5' from each user's counts against the whole history, 'ndcg@5' from "
        "each query's values): evaluate them in two calls"
    )
    interactions = frame(HISTORY)
    with pytest.raises(InvalidValueError, match=re.escape(history)):
        evaluate(run, ["ndcg@5", "pop_rsp@5"], qrels=qrels, interactions=interactions)
    unread_history = (
        "interactions= is read by mcc@k, reco_accuracy@k (the catalogue's size), "
        "serendipity(kind='kotkov')@k, Elliot's metrics (pop_rsp@k, epc@k...), the "
        "means of per-user values that read the history (surprisal@k, average_popularity@k, "
        "long_tail_share@k, serendipity@k, intra_list_diversity@k by co-occurrence) and the "
        "metrics of the items' counts that read it (catalog_coverage@k, gini_index@k, "
        "novelty@k), and no metric asked for reads it: drop interactions=, or ask for one of "
        "them"
    )
    with pytest.raises(MetricParameterError, match=re.escape(unread_history)):
        evaluate(run, ["ndcg@5"], qrels=qrels, interactions=interactions)
    no_item = (
        "column 'doc_id' not found in interactions (columns: ['query_id']); the catalogue "
        "is its distinct items: name the column with doc_id="
    )
    with pytest.raises(ColumnNotFoundError, match=re.escape(no_item)):
        evaluate(run, ["mcc@5"], qrels=qrels, interactions=frame(HISTORY.select("query_id")))


@st.composite
def _stochastic(draw: st.DrawFn) -> dict[str, pl.DataFrame]:
    """A small random stochastic run, judgments and groups (a document in 1-2 groups)."""
    seed = draw(st.integers(0, 10_000))
    queries = draw(st.integers(1, 8))
    samples = draw(st.integers(1, 3))
    tables = _tables(seed=seed, queries=queries, samples=samples)
    rng = random.Random(seed)
    groups = pl.DataFrame(
        [(f"d{d}", g) for d in range(40) for g in rng.sample(["a", "b", "c"], rng.randint(1, 2))],
        schema=["doc_id", "group"],
        orient="row",
    )
    return {**tables, "groups": groups}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@settings(max_examples=8, deadline=None)
@given(
    tables=_stochastic(),
    buckets=st.integers(1, 5),
    metrics=st.lists(
        st.sampled_from(
            [
                "ee_loss",
                "ee_disparity(browsing='geometric')",
                "ee_relevance(patience=0.9)",
                "ee_loss(patience=0.3)",
            ]
        ),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    with_groups=st.booleans(),
    per_query=st.booleans(),
)
def test_exposure_in_buckets_on_random_inputs(
    tables: dict[str, pl.DataFrame],
    buckets: int,
    metrics: list[str],
    with_groups: bool,
    per_query: bool,
) -> None:
    reads = ("qrels", "groups") if with_groups else ("qrels",)
    whole = _one_plan(tables, metrics, reads, per_query=per_query)
    split = _one_plan(tables, metrics, reads, per_query=per_query, buckets=buckets)
    assert split.equals(whole)


def _warned(call: Any) -> list[str]:
    """The library's warnings a call gives, as sorted texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return sorted({str(w.message) for w in caught if issubclass(w.category, CoverageWarning)})


# groups= whose ids mostly miss the run's documents (upper case: 30 of the 40 missed)
_MISSED = DETERMINISTIC["groups"].with_columns(
    pl.when(pl.col("doc_id").str.slice(1).cast(pl.Int64) < 30)
    .then(pl.col("doc_id").str.to_uppercase())
    .otherwise(pl.col("doc_id"))
)
GROUP_ID_CASES = [
    (["rnd"], ("groups",), {"groups": _MISSED}, False),
    (["rnd"], ("groups",), {"groups": _MISSED}, True),
    (["ndcg@5", "ee_loss"], ("qrels", "groups"), {"groups": _MISSED}, False),
    (["awrf"], ("qrels", "groups", "target"), {"groups": _MISSED}, True),
    (["ee_disparity"], ("qrels", "groups"), {"groups": _MISSED}, True),
]
# a covering design: each engine warns of rnd (the means on Spark, per query on Dask)
# and of a call that reads the judgments too, the other way round (awrf with target=
# per query on Spark; ee_loss beside ndcg, two calls joined, the means on Dask), and of
# the relevant judged documents groups= lacks (ee_*: per query on Spark, the means on
# Dask)
GROUP_ID_COVER = {"spark": (0, 3, 4), "dask": (1, 2)}


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_warn_of_group_ids_as_one_machine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # counted over the whole run's documents (a part holds some of them: it does not warn)
    evaluate, frame, back = _engine(engine, request)
    for index in GROUP_ID_COVER[engine]:
        metrics, reads, changed, per_query = GROUP_ID_CASES[index]
        tables = {**DETERMINISTIC, **changed}
        given = {name: tables[name] for name in reads}
        expected = _warned(lambda: irm.evaluate(tables["run"], metrics, **given))  # noqa: B023
        assert any(" holds only " in text for text in expected), metrics
        if any(name.startswith("ee_") for name in metrics):  # their relevant documents too
            assert any(" relevant documents of the judgments " in t for t in expected)
        frames = {name: frame(table) for name, table in given.items()}
        run = frame(tables["run"])

        def call() -> None:
            back(evaluate(run, metrics, **frames, per_query=per_query, partitions=PARTS))  # noqa: B023

        assert _warned(call) == expected, (metrics, per_query)


@pytest.mark.parametrize("per_query", [False, True])
def test_buckets_warn_of_group_ids_once_over_the_whole_run(
    evaluate: Evaluate, per_query: bool
) -> None:
    run, groups = DETERMINISTIC["run"], _MISSED.lazy()  # LazyFrame runs warn at collect
    one = _warned(lambda: evaluate(run, ["rnd"], groups=groups, per_query=per_query))
    split = _warned(lambda: evaluate(run, ["rnd"], groups=groups, per_query=per_query, buckets=3))
    assert split == one
    assert one == [
        "groups= holds only 10 of the 40 documents of the run (column 'doc_id'): a document "
        "without a group is unprotected in rnd (counted in the ranking's N, not in its "
        "protected P; with none grouped no document is protected and the values are NaN). "
        "Ids that do not line up are the likely cause: give groups= and the run the same "
        "'doc_id' values (same spelling, same collection)."
    ]


#: per engine, the per_query= of each case of the test below (a covering design)
_BY_SEGMENT_COVER = {"spark": (False, True), "dask": (True, False)}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_exposure_by_segment_on_engines_gives_the_one_plans_bits(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # by= a key of the run and the judgments: each segment's rankings and the means per
    # segment, alone and beside ndcg (two calls, joined on the segment and the query)
    evaluate, frame, back = _engine(engine, request)
    segment = pl.col("query_id").str.slice(-1).cast(pl.Int64) % 2
    run = DETERMINISTIC["run"].with_columns(segment=segment)
    tables = {
        "qrels": DETERMINISTIC["qrels"].with_columns(segment=segment),
        "groups": DETERMINISTIC["groups"],
        "target": DETERMINISTIC["target"],
    }
    # a covering design: each engine evaluates both cases, one for the means and the
    # other per query (Spark: rnd and rkl's means, ndcg, ee_loss and awrf per query;
    # Dask the other way round)
    cases = [(["rnd", "rkl"], ("groups",)), (["ndcg@5", "ee_loss", "awrf"], tuple(tables))]
    wholes, outs = [], []
    for (metrics, reads), per_query in zip(cases, _BY_SEGMENT_COVER[engine], strict=True):
        given = {name: tables[name] for name in reads}
        frames = {name: frame(table) for name, table in given.items()}
        wholes.append(irm.evaluate(run, metrics, **given, by="segment", per_query=per_query))
        outs.append(
            lambda metrics=metrics, frames=frames, per_query=per_query: evaluate(
                frame(run), metrics, **frames, by="segment", per_query=per_query
            )
        )
    for whole, got, per_query in zip(
        wholes, results(engine, outs, back), _BY_SEGMENT_COVER[engine], strict=True
    ):
        if per_query:  # Dask gives the rows in task order
            got = got.sort("segment", "query_id")
        assert got.columns == whole.columns
        assert got.cast(whole.schema).equals(whole), (whole.columns, per_query)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_negative_true_negatives_as_one_machine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # a catalogue of 2 items beside k = 5: RecTools' tn = n - k - fn below 0 for every
    # user (an accuracy below 0, an MCC below -1 once); each part refuses it alike
    # (the means on Spark, the per-query values on Dask: a part's refusal costs a task
    # and its Python worker; one machine refuses both)
    evaluate, frame, back = _engine(engine, request)
    two = HISTORY.filter(pl.col("doc_id").is_in(["d0", "d1"]))
    refusals = []
    for per_query in (False, True):
        with pytest.raises(InvalidValueError) as one:
            irm.evaluate(
                DETERMINISTIC["run"],
                ["reco_accuracy@5"],
                qrels=DETERMINISTIC["qrels"],
                interactions=two,
                per_query=per_query,
            )
        assert "would be negative" in str(one.value)
        refusals.append(str(one.value))
    per_query = engine == "dask"
    tables = {"qrels": frame(DETERMINISTIC["qrels"]), "interactions": frame(two)}
    run = frame(DETERMINISTIC["run"])
    with pytest.raises(InvalidValueError, match=f"^{re.escape(refusals[per_query])}$"):
        back(evaluate(run, ["reco_accuracy@5"], **tables, per_query=per_query, partitions=PARTS))


# judgments whose ids match none of the run's documents (upper case): the exposure
# measures warn as the ranking metrics warn of such a run (before, they scored it in
# silence: ee_relevance 0, ee_loss the loss of an empty target); beside the ranking
# metrics, theirs is the one warning
_UNMATCHED = DETERMINISTIC["qrels"].with_columns(pl.col("doc_id").str.to_uppercase())
_NO_JUDGED = "the run retrieves no judged document (0 of "
_UNGROUPED = "groups= holds none of the 37 relevant documents of the judgments (column 'doc_id')"


@pytest.mark.parametrize("buckets", [None, 3])
def test_the_exposure_measures_warn_of_a_run_that_misses_the_judgments(
    evaluate: Evaluate, buckets: int | None
) -> None:
    run, groups = DETERMINISTIC["run"], DETERMINISTIC["groups"]
    tables = {"qrels": _UNMATCHED, "groups": groups, "buckets": buckets}
    # the judged documents' ids match neither the run's nor groups=': each joint warns
    # (ee_relevance reads the relevant documents' groups)
    said = _warned(lambda: evaluate(run, ["ee_relevance", "awrf_ndcg"], **tables))
    ungrouped = [text for text in said if text.startswith(_UNGROUPED)]
    alone = [text for text in said if not text.startswith(_UNGROUPED)]
    assert len(ungrouped) == 1, said
    assert len(alone) == 1, said
    assert alone[0].startswith(_NO_JUDGED), alone
    beside = _warned(lambda: evaluate(run, ["ndcg@5", "ee_loss"], **tables))
    ranking = _warned(lambda: evaluate(run, ["ndcg@5"], qrels=_UNMATCHED, buckets=buckets))
    assert beside == sorted([*ranking, *ungrouped])
    assert len(ranking) == 1
    assert ranking[0].startswith(_NO_JUDGED)
    # alone, the ranking metrics' hint (the ids match once case is ignored; before, the
    # generic advice), after what the exposure measures score (not every one 0, as the
    # ranking metrics' words said); their tally does not count listed queries
    hint = ranking[0].split("as trec_eval scores such a run. ")[1]
    assert alone[0].endswith(f"(ee_relevance 0; not 0 for ee_loss and ee_disparity). {hint}")
    assert "match a judgment only when case is ignored" in alone[0]
    clean = {**tables, "qrels": DETERMINISTIC["qrels"]}
    assert _warned(lambda: evaluate(run, ["ee_relevance", "awrf_ndcg"], **clean)) == []


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_warn_of_a_run_that_misses_the_judgments_as_one_machine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # (a Dask worker's warning of an earlier test may reach this process late: only this
    # warning's texts are compared)
    evaluate, frame, back = _engine(engine, request)
    given = {"qrels": _UNMATCHED, "groups": DETERMINISTIC["groups"]}
    metrics = ["ee_relevance", "awrf_ndcg"]

    def judged(call: Any) -> list[str]:
        return [text for text in _warned(call) if text.startswith(_NO_JUDGED)]

    expected = judged(lambda: irm.evaluate(DETERMINISTIC["run"], metrics, **given))
    assert len(expected) == 1
    assert "match a judgment only when case is ignored" in expected[0]
    frames = {name: frame(table) for name, table in given.items()}
    run = frame(DETERMINISTIC["run"])
    per_query = engine == "dask"  # the means on Spark, the per-query values on Dask
    got = judged(
        lambda: back(evaluate(run, metrics, **frames, per_query=per_query, partitions=PARTS))
    )
    assert got == expected, per_query
