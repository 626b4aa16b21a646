"""One call, one reading of each option: in a call that mixes the ranking metrics with
the beyond-accuracy metrics or the exposure measures, an option the ranking metrics read
and the others do not is refused (before: applied to some of the call's values and not
to the others, in silence), or applied to every metric where that is exact
(``unretrieved='drop'`` beside the exposure measures, without ``systems=``); a run of
sampled rankings beside metrics of one ranking per query is refused."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal, assert_series_equal

import polars_irmetrics as irm
from polars_irmetrics.door.evaluate import check_mixed_read
from polars_irmetrics.engines._partition import check_options_read
from polars_irmetrics.errors import InvalidValueError, QuerySetError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import parse_metric_list

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

#: q1 and q2 judged and retrieved, q3 retrieved and not judged, q4 judged and not
#: retrieved; every item in the interactions and in a group
RUN = pl.DataFrame(
    {
        "system": ["s0"] * 7 + ["s1"] * 2,
        "query_id": ["q1"] * 4 + ["q2"] * 3 + ["q3"] * 2,
        "doc_id": ["a", "b", "c", "d", "a", "e", "f", "b", "g"],
        "score": [4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q4"],
        "doc_id": ["b", "d", "a", "f", "a"],
        "relevance": [1, 2, 1, 1, 1],
    }
)
INTERACTIONS = pl.DataFrame({"query_id": ["u1"] * 7, "doc_id": list("abcdefg")})
GROUPS = pl.DataFrame({"doc_id": list("abcdefg"), "group": ["x", "y", "x", "y", "x", "y", "x"]})

BESIDE = "so one call would apply it to some of its metrics and not to the others"


def _mixed(option: str, read: str, unread: str, why: str, them: str) -> str:
    return (
        f"{option} is read by {read} and not by {unread} ({why}), {BESIDE}: evaluate "
        f"{them} in a separate call, without {option.split('=')[0]}=, or drop "
        f"{option.split('=')[0]}="
    )


def _tables(metrics: list[str]) -> dict[str, pl.DataFrame]:
    """The tables the metrics read: judgments for the ranking and exposure metrics,
    interactions for the beyond-accuracy ones, groups for the exposure ones."""
    tables: dict[str, pl.DataFrame] = {}
    if any(not m.startswith(("catalog", "novelty", "rnd")) for m in metrics):
        tables["qrels"] = QRELS
    if any(m.startswith(("catalog", "novelty")) for m in metrics):
        tables["interactions"] = INTERACTIONS
    if any(m.startswith(("ee_", "awrf", "rnd")) for m in metrics):
        tables["groups"] = GROUPS
    return tables


def _evaluate(frame_kind: str, run: pl.DataFrame, metrics: list[str], **kw: Any) -> pl.DataFrame:
    tables = _tables(metrics)
    if frame_kind == "LazyFrame":
        lazy = {name: table.lazy() for name, table in tables.items()}
        out = irm.evaluate(run.lazy(), metrics, **lazy, **kw)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    return irm.evaluate(run, metrics, **tables, **kw)


REFUSED = [
    # before: ndcg@10 0.284 (its rankings cut at 2), catalog_coverage@2 over every row
    pytest.param(
        ["ndcg@10", "catalog_coverage@2"],
        {"depth": 2},
        _mixed(
            "depth=2",
            "metric 'ndcg@10'",
            "metric 'catalog_coverage@2'",
            "the beyond-accuracy metrics read each ranking whole",
            "'catalog_coverage@2'",
        ),
        id="depth-coverage",
    ),
    pytest.param(
        ["P@2", "novelty@10"],
        {"judged_only": True},
        _mixed(
            "judged_only=True",
            "metric 'P@2'",
            "metric 'novelty@10'",
            "the beyond-accuracy metrics read the unjudged documents of each ranking too",
            "'novelty@10'",
        ),
        id="judged-only-novelty",
    ),
    # before: ndcg@10 0.284, ee_loss 0.621 as without depth=
    pytest.param(
        ["ndcg@10", "ee_loss"],
        {"depth": 2},
        _mixed(
            "depth=2",
            "metric 'ndcg@10'",
            "metric 'ee_loss'",
            "the exposure measures read each ranking whole",
            "'ee_loss'",
        ),
        id="depth-ee",
    ),
    pytest.param(
        ["ndcg@10", "ee_loss"],
        {"judged_only": True},
        _mixed(
            "judged_only=True",
            "metric 'ndcg@10'",
            "metric 'ee_loss'",
            "the exposure measures read the unjudged documents of each ranking too",
            "'ee_loss'",
        ),
        id="judged-only-ee",
    ),
    # before: ndcg@10 over 4 queries (q3 scoring 0), ee_loss over 3 (q3 left out)
    pytest.param(
        ["ndcg@10", "ee_loss"],
        {"unjudged": "zero"},
        _mixed(
            "unjudged='zero'",
            "metric 'ndcg@10'",
            "metric 'ee_loss'",
            "the exposure measures leave out a query the judgments lack",
            "'ee_loss'",
        ),
        id="unjudged-ee",
    ),
    # before: P@2 0.0 (relevant at 2), awrf's target from every label above 0
    pytest.param(
        ["P@2", "awrf"],
        {"relevance_level": 2},
        _mixed(
            "relevance_level=2",
            "metric 'P@2'",
            "metric 'awrf'",
            "the exposure measures count a document relevant at any relevance above 0",
            "'awrf'",
        ),
        id="level-awrf",
    ),
    pytest.param(
        ["ndcg@10", "ee_loss"],
        {"debias": irm.Debias()},
        _mixed(
            "debias=Debias(iqr_coef=1.5, random_state=0)",
            "metric 'ndcg@10'",
            "metric 'ee_loss'",
            "the exposure measures read the judgments as given",
            "'ee_loss'",
        ),
        id="debias-ee",
    ),
    pytest.param(
        ["ndcg@10", "ee_loss", "map", "catalog_coverage@2"],
        {"depth": 2},
        _mixed(
            "depth=2",
            "metrics 'ndcg@10', 'map'",
            "metrics 'ee_loss', 'catalog_coverage@2'",
            "the beyond-accuracy metrics and the exposure measures read each ranking whole",
            "'ee_loss', 'catalog_coverage@2'",
        ),
        id="depth-both",
    ),
    # before: P@2 left out each system's unretrieved judged queries, ee_loss scored them 1.0
    pytest.param(
        ["P@2", "ee_loss"],
        {"systems": "system", "unretrieved": "drop"},
        _mixed(
            "unretrieved='drop'",
            "metric 'P@2'",
            "metric 'ee_loss'",
            "the exposure measures score each system on every judged query, one it did not "
            "retrieve as an empty ranking",
            "'ee_loss'",
        ),
        id="drop-systems-ee",
    ),
]


@pytest.mark.parametrize(("metrics", "options", "message"), REFUSED)
def test_an_option_some_metrics_of_the_call_do_not_read_is_refused(
    frame_kind: str, metrics: list[str], options: dict[str, Any], message: str
) -> None:
    run = RUN if "systems" in options else RUN.drop("system")
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _evaluate(frame_kind, run, metrics, **options)


def test_every_door_that_checks_options_refuses_it_alike() -> None:
    message = _mixed(
        "depth=2", "metric 'ndcg@10'", "metric 'catalog_coverage@2'",
        "the beyond-accuracy metrics read each ranking whole", "'catalog_coverage@2'",
    )  # fmt: skip
    options = EvalOptions.build(depth=2)
    metrics = ["ndcg@10", "catalog_coverage@2"]
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        check_mixed_read(options, parse_metric_list(metrics))
    # the engines' driver check (Spark, Dask)
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        check_options_read(options, metrics, labels=False)
    drop = _mixed(
        "unretrieved='drop'", "metric 'P@2'", "metric 'ee_loss'",
        "the exposure measures score each system on every judged query, one it did not "
        "retrieve as an empty ranking",
        "'ee_loss'",
    )  # fmt: skip
    by_system = EvalOptions.build(systems="system", unretrieved="drop")
    with pytest.raises(InvalidValueError, match=re.escape(drop)):
        check_options_read(by_system, ["P@2", "ee_loss"], labels=False)
    # the comparison (which takes groups=, not interactions=)
    beside = _mixed(
        "depth=2", "metric 'ndcg@10'", "metric 'ee_loss'",
        "the exposure measures read each ranking whole", "'ee_loss'",
    )  # fmt: skip
    runs = {"a": RUN.drop("system"), "b": RUN.drop("system")}
    with pytest.raises(InvalidValueError, match=re.escape(beside)):
        irm.compare(runs, ["ndcg@10", "ee_loss"], qrels=QRELS, groups=GROUPS, depth=2)


SAMPLED = pl.DataFrame(
    {
        # two sampled rankings of q1 with documents and scores that never collide: the
        # ranking metrics read them as one ranking of 5 documents
        "query_id": ["q1"] * 5,
        "sample": [0, 0, 0, 1, 1],
        "doc_id": ["a", "b", "c", "d", "e"],
        "score": [3.0, 2.0, 1.0, 2.5, 1.5],
    }
)


@pytest.mark.parametrize(
    ("metrics", "column", "options"),
    [
        (["ndcg@10", "ee_loss"], "sample", {}),
        (["ee_loss", "catalog_coverage@2"], "sample", {}),
        (["ndcg@10", "ee_loss"], "draw", {"sample_id": "draw"}),
    ],
    ids=["ndcg", "coverage", "named"],
)
def test_sampled_rankings_beside_one_ranking_per_query_are_refused(
    frame_kind: str, metrics: list[str], column: str, options: dict[str, Any]
) -> None:
    # before: ndcg@10 of the two samples pooled (q1: 0.670), beside ee_loss of each sample
    exposure = [m for m in metrics if m == "ee_loss"]
    others = ", ".join(repr(m) for m in metrics if m != "ee_loss")
    message = (
        f"the run's column {column!r} (sample_id=) holds sampled rankings, each a ranking "
        f"of its own for the exposure measures ({exposure[0]!r}); the other metrics of the "
        f"call ({others}) read one ranking per query, and would read every sample's "
        f"documents as one ranking: evaluate {others} in a separate call, on one ranking "
        f"per query (e.g. run.filter(pl.col({column!r}) == 0).drop({column!r}))"
    )
    run = SAMPLED.rename({"sample": column})
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _evaluate(frame_kind, run, metrics, **options)


def _alone(run: pl.DataFrame, metric: str, **kw: Any) -> pl.DataFrame:
    return irm.evaluate(run, [metric], **_tables([metric]), **kw)


@pytest.mark.parametrize(
    ("metrics", "options", "unread"),
    [
        # read by every route of the call
        (["ndcg@10", "catalog_coverage@2"], {"order": "score"}, ()),
        (["ndcg@10", "ee_loss"], {"order": "score"}, ()),
        (["ndcg@10", "catalog_coverage@2"], {"check_duplicates": False}, ()),
        # about the judgments, which the beyond-accuracy metrics and rnd do not read
        (["P@2", "novelty@10"], {"unjudged": "zero"}, ("novelty@10",)),
        (["P@2", "novelty@10"], {"unretrieved": "drop"}, ("novelty@10",)),
        (["P@2", "novelty@10"], {"relevance_level": 2}, ("novelty@10",)),
        (["P@2", "novelty@10"], {"debias": irm.Debias()}, ("novelty@10",)),
        (["P@2", "rnd"], {"relevance_level": 2}, ("rnd",)),
        (["P@2", "rnd"], {"unjudged": "zero"}, ("rnd",)),
        # one route: read by every metric
        (["ndcg@10", "map"], {"depth": 2, "judged_only": True}, ()),
    ],
    ids=[
        "order-coverage",
        "order-ee",
        "duplicates-coverage",
        "unjudged-novelty",
        "drop-novelty",
        "level-novelty",
        "debias-novelty",
        "level-rnd",
        "unjudged-rnd",
        "one-route",
    ],
)
def test_accepted_mixes_give_each_metrics_own_value(
    frame_kind: str, metrics: list[str], options: dict[str, Any], unread: tuple[str, ...]
) -> None:
    run = RUN.drop("system")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _evaluate(frame_kind, run, metrics, **options)
        for metric in metrics:
            kw = {} if metric in unread else options
            want = _alone(run, metric, **kw)
            assert_series_equal(got[metric], want[metric])  # rnd: NaN, a ranking of < 10


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"unjudged": "error"}, "1 query is in the run but not in the judgments: 'q3'"),
        ({"unretrieved": "error"}, "1 query is in the judgments but not in the run: 'q4'"),
    ],
    ids=["unjudged", "unretrieved"],
)
def test_error_policies_beside_the_exposure_measures_refuse_the_whole_call(
    frame_kind: str, options: dict[str, str], error: str
) -> None:
    with pytest.raises(QuerySetError, match=re.escape(error)):
        _evaluate(frame_kind, RUN.drop("system"), ["ndcg@10", "ee_loss"], **options)


def test_zero_beside_the_exposure_measures_is_their_own_reading(frame_kind: str) -> None:
    # unretrieved='zero' given by name: q4 scored as an empty ranking by both, as by default
    run = RUN.drop("system")
    got = _evaluate(frame_kind, run, ["P@2", "ee_loss"], unretrieved="zero", per_query=True)
    assert got.filter(pl.col("query_id") == "q4").rows() == [("q4", 0.0, 1.0)]
    assert got.equals(_evaluate(frame_kind, run, ["P@2", "ee_loss"], per_query=True))


def test_drop_leaves_the_unretrieved_queries_out_of_the_exposure_measures_too(
    frame_kind: str,
) -> None:
    # before: ee_loss 0.621 over q1, q2 and q4 (q4, not retrieved, an empty ranking:
    # 1.0), num_q_exposure 3, beside P@2 over q1 and q2
    run = RUN.drop("system")
    got = _evaluate(frame_kind, run, ["P@2", "ee_loss"], unretrieved="drop")
    retrieved = QRELS.filter(pl.col("query_id") != "q4")
    alone = irm.evaluate(run, ["ee_loss"], qrels=retrieved, groups=GROUPS)
    assert got.columns == ["num_q", "num_q_exposure", "P@2", "ee_loss"]
    assert got.row(0)[:3] == (2, 2, 0.5)
    assert got["ee_loss"].item() == alone["ee_loss"].item()
    per_query = _evaluate(frame_kind, run, ["P@2", "ee_loss"], unretrieved="drop", per_query=True)
    assert per_query["query_id"].to_list() == ["q1", "q2"]
    # the default scores q4 in both, as before
    zero = _evaluate(frame_kind, run, ["P@2", "ee_loss"], per_query=True)
    assert zero.filter(pl.col("query_id") == "q4").rows() == [("q4", 0.0, 1.0)]


def test_drop_matches_the_by_keys_the_judgments_hold_as_the_ranking_metrics_do() -> None:
    # q1 is judged in market n too, where the run did not retrieve it: left out of both
    run = RUN.drop("system").filter(pl.col("query_id") != "q3")
    run = run.with_columns(
        market=pl.when(pl.col("query_id") == "q1").then(pl.lit("m")).otherwise(pl.lit("n"))
    )
    qrels = pl.concat(
        [
            QRELS.with_columns(market=pl.lit("m")),
            pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1], "market": ["n"]}),
        ],
        how="vertical_relaxed",
    ).with_columns(
        market=pl.when(pl.col("query_id") == "q2").then(pl.lit("n")).otherwise("market")
    )
    got = irm.evaluate(
        run, ["P@2", "ee_loss"], qrels=qrels, groups=GROUPS, by="market", per_query=True,
        unretrieved="drop",
    )  # fmt: skip
    assert got.select("market", "query_id").rows() == [("m", "q1"), ("n", "q2")]
    assert got["ee_loss"].null_count() == 0


def test_drop_lines_up_ids_of_one_kind_in_two_dtypes() -> None:
    run = RUN.drop("system").with_columns(pl.col("query_id").str.slice(1).cast(pl.Int32))
    qrels = QRELS.with_columns(pl.col("query_id").str.slice(1).cast(pl.Int64))
    got = irm.evaluate(
        run, ["P@2", "ee_loss"], qrels=qrels, groups=GROUPS, unretrieved="drop", per_query=True
    )
    alone = irm.evaluate(run, ["ee_loss"], qrels=qrels, groups=GROUPS, per_query=True)
    assert got["query_id"].to_list() == [1, 2]
    assert_frame_equal(
        got.select("query_id", "ee_loss"),
        alone.filter(pl.col("query_id") != 4),
        check_dtypes=False,
    )
