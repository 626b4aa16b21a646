"""The means of per-user values that read the interaction history (``surprisal@k``,
``average_popularity@k``, ``long_tail_share@k``, ``serendipity@k``, co-occurrence
``intra_list_diversity@k``) on Spark and Dask: the history's rows are handed whole to
every part, each part gives its users' values, the mean over every user is the one
plan's exact mean (the same bits); the history's warning and its refusal of null ids
are the whole table's, given once by the engine."""

from __future__ import annotations

import random
import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, InvalidValueError, MetricParameterError
from tests.test_engines_recsys42 import PARTS, _engine


def _tables() -> dict[str, pl.DataFrame]:
    """40 users in two segments with lists of 2 to 12 of 60 items; a history of 55 users
    (15 without recommendations) over
    every item in each segment, with repeated interactions; each item's feature
    vector."""
    rng = random.Random(11)
    rows = []
    for u in range(40):
        items = rng.sample(range(60), rng.randint(2, 12))
        rows += [(f"u{u:02d}", f"i{i}", r + 1, f"s{u % 2}") for r, i in enumerate(items)]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "segment"], orient="row")
    history = [
        (f"u{u:02d}", f"i{rng.randrange(60)}", f"s{u % 2}")
        for u in range(55)
        for _ in range(rng.randint(1, 15))
    ]
    # every item in each segment's history (an item without popularity is refused)
    history += [(f"u{50 + s}", f"i{i}", f"s{s}") for s in (0, 1) for i in range(60)]
    features = pl.DataFrame(
        {
            "doc_id": [f"i{i}" for i in range(60)],
            "features": [[rng.gauss(0, 1) for _ in range(4)] for _ in range(60)],
        }
    )
    return {
        "run": run,
        "interactions": pl.DataFrame(
            history, schema=["query_id", "doc_id", "segment"], orient="row"
        ),
        "item_features": features,
    }


TABLES = _tables()
POPULARITY = [
    "surprisal@5",
    "average_popularity@10",
    "long_tail_share@5",
    "long_tail_share(head=0.5)@10",
    "intra_list_diversity(item_sim_measure='item_cooccurrence_count')@5",
    "serendipity(item_sim_measure='item_cooccurrence_count')@10",
]
FEATURES = ["serendipity@5", "intra_list_diversity@5", "serendipity"]


def history_for(options: dict[str, Any]) -> pl.DataFrame:
    """The history a case reads: per segment with ``by=`` (popularity per segment),
    whole otherwise; without i55 to i59 where unseen items are dropped or kept."""
    history = TABLES["interactions"]
    if options.get("by") is None:
        history = history.drop("segment")
    if options.get("unseen_items") in ("drop", "recommenders"):
        history = history.filter(pl.col("doc_id").str.slice(1).cast(pl.Int64) < 55)
    return history


def one_and_engine(
    engine: tuple[Any, Any, Any],
    run: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    options: dict[str, Any],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One machine's result and the engine's (in ``PARTS`` parts; per user sorted as one
    machine sorts them), in one machine's dtypes."""
    evaluate, frame, back = engine
    one = irm.evaluate(run, metrics, **tables, **options)
    given = {name: frame(table) for name, table in tables.items()}
    got = back(evaluate(frame(run), metrics, **given, partitions=PARTS, **options))
    if options.get("per_query"):  # Dask gives the users' rows part by part
        got = got.sort([*([options["by"]] if options.get("by") else []), "query_id"])
    assert got.columns == one.columns
    return one, got.cast(one.schema)


def covering(cases: list[Any], cover: dict[str, tuple[str, ...]]) -> list[Any]:
    """``(engine, *case)`` parameters (ids ``case-engine``) of the cases (their first
    item an id) that ``cover`` gives each engine: a covering design in place of every
    case on every engine (an engine call costs seconds); every case on one engine at
    least."""
    ids = {case[0] for case in cases}
    assert set().union(*cover.values()) == ids, "a case on no engine"
    return [
        pytest.param(engine, *case, id=f"{case[0]}-{engine}")
        for case in cases
        for engine, given in cover.items()
        if case[0] in given
    ]


CASES = [
    ("means", [*POPULARITY, *FEATURES], {}),
    ("by-per-user", POPULARITY, {"by": "segment", "per_query": True}),
    ("by-means", [*POPULARITY[:3], *FEATURES], {"by": "segment"}),
    ("unseen-dropped", POPULARITY[:4], {"unseen_items": "drop"}),
]
# each engine: the means without by=, the means by segment and the per-user values by
# segment; the popularity measures and those of the feature vectors; unseen_items='drop'
# on Dask, the feature vectors without by= on Spark
CASES_COVER = {
    "spark": ("means", "by-per-user", "by-means"),
    "dask": ("by-per-user", "by-means", "unseen-dropped"),
}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize(("engine", "case", "metrics", "options"), covering(CASES, CASES_COVER))
def test_history_metrics_equal_one_machine(
    engine: str,
    case: str,
    metrics: list[str],
    options: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    tables = {"interactions": history_for(options)}
    if case in ("means", "by-means"):  # serendipity and diversity by feature vectors
        tables["item_features"] = TABLES["item_features"]
    one, got = one_and_engine(_engine(engine, request), TABLES["run"], metrics, tables, options)
    assert got.equals(one), case


def _warned(call: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]


_HISTORY = TABLES["interactions"].drop("segment")
_NUMBER = pl.col("doc_id").str.slice(1).cast(pl.Int64)
# the history names its items in upper case but for i0 to i9: it lacks most of the
# recommendations' items, counted over every user's (a part would count its own)
_UPPER = _HISTORY.with_columns(
    pl.when(_NUMBER >= 10).then(pl.col("doc_id").str.to_uppercase()).otherwise(pl.col("doc_id"))
)
# none of the recommendations' users has a history (other ids), and u00's items are not in
# it: with unseen_items='drop' their recommendations are left out, and the users are
# counted as given, before the drop (40; the 39 left after it were counted before)
_STRANGERS = _HISTORY.with_columns(pl.format("x{}", "query_id").alias("query_id"))
_FIRST = TABLES["run"].filter(pl.col("query_id") == "u00")["doc_id"]
WARNING_CASES = [
    (
        "items",
        ["intra_list_diversity(item_sim_measure='item_cooccurrence_count')@5"],
        _UPPER,
        {"unseen_items": "recommenders"},
    ),
    ("users", ["surprisal@5", "average_popularity@5"], _STRANGERS, {}),
    (
        "users-kept",
        ["surprisal@5"],
        _STRANGERS.filter(~pl.col("doc_id").is_in(_FIRST.implode())),
        {"unseen_items": "drop"},
    ),
]


# a covering design: each engine warns of the history's items and of its users (the
# users counted before unseen_items='drop' leaves some out: Dask)
WARNING_COVER = {"spark": ("items", "users"), "dask": ("items", "users-kept")}


@pytest.mark.parametrize(
    ("engine", "case", "metrics", "history", "options"), covering(WARNING_CASES, WARNING_COVER)
)
def test_the_history_warning_is_the_whole_tables_once(
    engine: str,
    case: str,
    metrics: list[str],
    history: pl.DataFrame,
    options: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame, back = _engine(engine, request)
    run = TABLES["run"]
    one = _warned(lambda: irm.evaluate(run, metrics, interactions=history, **options))
    assert len(one) == 1, case
    assert one[0].startswith("interactions= holds "), one
    if case == "users-kept":
        assert " of the 40 users " in one[0], one
    engine_run, lacking = frame(run), frame(history)
    got = _warned(
        lambda: back(
            evaluate(engine_run, metrics, interactions=lacking, partitions=PARTS, **options)
        )
    )
    assert got == one, case


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_a_null_id_in_the_history_is_refused_as_one_machine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = _engine(engine, request)
    history = TABLES["interactions"].drop("segment")
    history = history.with_columns(
        pl.when(pl.int_range(pl.len()) % 20 == 3)
        .then(None)
        .otherwise(pl.col("doc_id"))
        .alias("doc_id")
    )
    with pytest.raises(InvalidValueError) as one:
        irm.evaluate(TABLES["run"], ["surprisal@5"], interactions=history)
    assert str(one.value).startswith("the interactions have ")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(str(one.value))}$"):
        back(
            evaluate(
                frame(TABLES["run"]),
                ["surprisal@5"],
                interactions=frame(history),
                partitions=PARTS,
            )
        )


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_history_metrics_refuse_what_the_parts_cannot_merge(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, _ = _engine(engine, request)
    name = "Spark" if engine == "spark" else "Dask"
    run, history = frame(TABLES["run"]), frame(TABLES["interactions"].drop("segment"))
    elliot = (
        f"metrics 'epc@5' and 'ndcg@5' merge from different parts on {name} ('epc@5' from "
        "each user's counts against the whole history, 'ndcg@5' from each query's values): "
        "evaluate them in two calls"
    )
    qrels = frame(TABLES["run"].select("query_id", "doc_id", relevance=pl.lit(1)))
    with pytest.raises(InvalidValueError, match=re.escape(elliot)):
        evaluate(run, ["epc@5", "ndcg@5"], qrels=qrels, interactions=history)
    unread = "interactions= is read by mcc@k, reco_accuracy@k (the catalogue's size)"
    with pytest.raises(MetricParameterError, match=re.escape(unread)):
        evaluate(run, ["sufficient_reco@5"], interactions=history)
    missing = (
        "column 'doc_id' not found in interactions (columns: ['query_id', 'item']); the "
        "history's items: name the column with doc_id="
    )
    renamed = frame(TABLES["interactions"].drop("segment").rename({"doc_id": "item"}))
    with pytest.raises(Exception, match=re.escape(missing)):
        evaluate(run, ["surprisal@5"], interactions=renamed)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_catalogues_warning_and_null_ids_are_one_machines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # mcc@k and reco_accuracy@k: only the catalogue travels to the parts, and the engine
    # counts the history's null ids and users itself (a part's catalogue once counted a
    # null item as 1 row, and its warning never reached the driver)
    evaluate, frame, back = _engine(engine, request)
    run = TABLES["run"]
    qrels = run.filter(pl.col("rank") % 3 == 1).select("query_id", "doc_id", relevance=pl.lit(1))
    metrics = ["mcc@5", "reco_accuracy@3"]
    nulls = _HISTORY.with_columns(
        pl.when(pl.int_range(pl.len()) % 20 == 3)
        .then(None)
        .otherwise(pl.col("doc_id"))
        .alias("doc_id"),
        pl.when(pl.int_range(pl.len()) % 30 == 7)
        .then(None)
        .otherwise(pl.col("query_id"))
        .alias("query_id"),
    )
    with pytest.raises(InvalidValueError) as one:
        irm.evaluate(run, metrics, qrels=qrels, interactions=nulls)
    assert str(one.value).startswith("the interactions have "), one.value
    with pytest.raises(InvalidValueError, match=f"^{re.escape(str(one.value))}$"):
        back(
            evaluate(
                frame(run),
                metrics,
                qrels=frame(qrels),
                interactions=frame(nulls),
                partitions=PARTS,
            )
        )
    # most items unknown; none of the users known: both warnings on one machine, one on
    # each engine (a covering design: the same count of the history on the driver)
    expected = {}
    for case, history in (("items", _UPPER), ("users", _STRANGERS)):
        expected[case] = _warned(
            lambda given=history: irm.evaluate(run, metrics, qrels=qrels, interactions=given)
        )
        assert len(expected[case]) == 1, expected
    assert expected["items"] != expected["users"]
    case, history = ("items", _UPPER) if engine == "spark" else ("users", _STRANGERS)
    engine_history = frame(history)

    def on_the_engine() -> None:
        back(evaluate(frame(run), metrics, qrels=frame(qrels), interactions=engine_history))

    assert _warned(on_the_engine) == expected[case]


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_a_catalogue_lacking_a_few_items_is_one_machines_warning(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # mcc@k and reco_accuracy@k: a catalogue without some of the run's items (too few
    # for the history's own warning) gave RecTools' tn too small, in silence before
    evaluate, frame, back = _engine(engine, request)
    run = TABLES["run"]
    qrels = run.filter(pl.col("rank") % 3 == 1).select("query_id", "doc_id", relevance=pl.lit(1))
    items = run.select("doc_id").unique().sort("doc_id")["doc_id"].to_list()
    lacking = _HISTORY.vstack(
        pl.DataFrame({"query_id": ["u00"] * len(items), "doc_id": items})
    ).filter(pl.col("doc_id") != items[0])
    metrics = ["mcc@5", "reco_accuracy@3"]
    expected = _warned(lambda: irm.evaluate(run, metrics, qrels=qrels, interactions=lacking))
    assert expected == [
        "interactions= (the catalogue whose size mcc@5, reco_accuracy@3 read) lacks 1 of "
        f"the {len(items)} items of the run (column 'doc_id'): RecTools' tn = n - k - fn "
        "takes its n items to hold every list's items, so the true negatives and the values "
        "come out too small; give interactions= every item a user may be recommended or "
        "find relevant"
    ]

    def on_the_engine() -> None:
        back(evaluate(frame(run), metrics, qrels=frame(qrels), interactions=frame(lacking)))

    assert _warned(on_the_engine) == expected


# a covering design: the means on Spark, the per-user values on Dask (each engine's
# per-user values of the history's metrics: test_history_metrics_equal_one_machine)
@pytest.mark.parametrize(
    ("engine", "per_query"), [("spark", False), ("dask", True)], ids=["False-spark", "True-dask"]
)
def test_kotkov_serendipity_reads_the_whole_history(
    engine: str, per_query: bool, request: pytest.FixtureRequest
) -> None:
    # RecTools' Serendipity is a value per user from the items' popularity ranks over
    # the whole history, which every part reads: one machine's bits, beside accuracy
    # metrics and the catalogue's metrics
    evaluate, frame, back = _engine(engine, request)
    run = TABLES["run"]
    qrels = run.filter(pl.col("rank") % 3 == 1).select("query_id", "doc_id", relevance=pl.lit(1))
    metrics = ["serendipity(kind='kotkov')@5", "ndcg@5", "mcc@3", "serendipity(kind='kotkov')@2"]
    one = irm.evaluate(run, metrics, qrels=qrels, interactions=_HISTORY, per_query=per_query)
    got = back(
        evaluate(
            frame(run),
            metrics,
            qrels=frame(qrels),
            interactions=frame(_HISTORY),
            per_query=per_query,
            partitions=PARTS,
        )
    )
    if per_query:  # Dask gives the queries' rows part by part
        got = got.sort("query_id")
    assert got.cast(one.schema).equals(one)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_propensity_metrics_warning_is_one_machines(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # ps_ndcg over judgments whose documents the run never retrieves: the one plan's
    # CoverageWarning, once, from the engines too (Dask: from a worker to the client)
    run = pl.DataFrame(
        {"query_id": ["q1"] * 3 + ["q2"] * 2, "doc_id": ["a", "b", "c", "a", "d"],
         "rank": [1, 2, 3, 1, 2]}
    )  # fmt: skip
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["x", "y"], "relevance": [1, 1]})
    props = pl.DataFrame({"doc_id": ["x", "y"], "propensity": [0.5, 0.25]})
    metrics = ["ps_ndcg@2"]
    one = _warned(lambda: irm.evaluate(run, metrics, qrels=qrels, propensities=props))
    assert len(one) == 1
    assert one[0].startswith("the run retrieves no judged document (0 of 2 judged documents")
    evaluate, frame, back = _engine(engine, request)
    got = _warned(
        lambda: back(evaluate(frame(run), metrics, qrels=frame(qrels), propensities=frame(props)))
    )
    assert got == one


# item features under other ids (upper case): none of the recommendations' items has a
# vector; a history in other ids too, for unseen_items='drop'
_FEATURES_UPPER = TABLES["item_features"].with_columns(pl.col("doc_id").str.to_uppercase())
_HISTORY_UPPER = _HISTORY.with_columns(pl.col("doc_id").str.to_uppercase())
LACKING_CASES = [
    # similar 0 to every item: every list as diverse as can be (1.0), in silence before
    ("features-recommenders", ["intra_list_diversity@5"], {"unseen_items": "recommenders"}),
    # every recommendation left out: null, in silence before
    ("features-drop", ["intra_list_diversity@5"], {"unseen_items": "drop"}),
    ("history-drop", ["surprisal@5"], {"unseen_items": "drop"}),
]


# each engine warns of the feature vectors and of the history: the feature vectors under
# unseen_items='recommenders' on Spark, under 'drop' on Dask
LACKING_COVER = {
    "spark": ("features-recommenders", "history-drop"),
    "dask": ("features-drop", "history-drop"),
}


@pytest.mark.parametrize(
    ("engine", "case", "metrics", "options"), covering(LACKING_CASES, LACKING_COVER)
)
def test_a_side_table_holding_none_of_the_items_is_warned_of_as_one_machine(
    engine: str,
    case: str,
    metrics: list[str],
    options: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame, back = _engine(engine, request)
    side = (
        {"interactions": _HISTORY_UPPER}
        if case.startswith("history")
        else {"item_features": _FEATURES_UPPER}
    )
    one = _warned(lambda: irm.evaluate(TABLES["run"], metrics, **side, **options))
    table = next(iter(side))
    assert one == [
        f"{table}= holds none of the {TABLES['run']['doc_id'].n_unique()} items of the "
        "recommendations (column 'doc_id'): "
        + {
            "features-recommenders": "an item without a feature vector counts as similar 0 "
            "to every other item (unseen_items='recommenders', Microsoft Recommenders' "
            "fillna(0)), so a list of such items reads as diverse and serendipitous as a "
            "list can be",
            "features-drop": "the recommendations of an item without a feature vector are "
            "left out (unseen_items='drop'), so the metrics read few of the lists' items",
            "history-drop": "the recommendations of an item the interactions lack are left "
            "out (unseen_items='drop'), so the metrics read few of the lists' items",
        }[case]
        + f". Ids that do not line up are the likely cause: give {table}= and the "
        "recommendations the same 'doc_id' values (same spelling, same collection)."
    ]
    sides = {name: frame(t) for name, t in side.items()}
    got = _warned(
        lambda: back(evaluate(frame(TABLES["run"]), metrics, **sides, partitions=PARTS, **options))
    )
    assert got == one, case
