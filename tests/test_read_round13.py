"""Round 13: an empty feature vector of a recommended item is refused by serendipity as
by intra_list_diversity (no polars error), on one machine and on Dask; ``depth=`` and
``judged_only=`` are refused where no metric asked for reads a ranking (num_rel, idcg,
num_q, covered_users@k, prefs_num_prefs_poss), on every door that checks its options."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.engines._partition import check_options_read
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.options import EvalOptions
from tests.helpers import engine_io

RECS = pl.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2]})
HISTORY = pl.DataFrame({"user_id": [1, 1], "item_id": [1, 3]})
#: item 1, recommended and in the history, has an empty vector
FEATURES = pl.DataFrame(
    {"item_id": [1, 2, 3], "features": [[], [0.0, 1.0], [1.0, 1.0]]},
    schema={"item_id": pl.Int64, "features": pl.List(pl.Float64)},
)
#: the same tables in the ranking metrics' column names (irm.evaluate, the engines)
RUN = RECS.rename({"user_id": "query_id", "item_id": "doc_id"})
RUN_HISTORY = HISTORY.rename({"user_id": "query_id", "item_id": "doc_id"})
RUN_FEATURES = FEATURES.rename({"item_id": "doc_id"})
EMPTY = (
    "item 1 has an empty (zero-length) feature vector in item_features (1 items): give "
    "every item a vector of the same length"
)

EMPTY_VECTOR_CASES: list[tuple[str, Callable[[], Any]]] = [
    (
        "diversity",
        lambda: irm.beyond_accuracy(RECS, ["intra_list_diversity"], item_features=FEATURES),
    ),
    (
        "serendipity",
        lambda: irm.beyond_accuracy(
            RECS, ["serendipity"], interactions=HISTORY, item_features=FEATURES
        ),
    ),
    (
        "serendipity-cut",
        lambda: irm.beyond_accuracy(
            RECS, ["serendipity@1"], interactions=HISTORY, item_features=FEATURES
        ),
    ),
    (
        "serendipity-and-diversity",
        lambda: irm.beyond_accuracy(
            RECS,
            ["serendipity", "intra_list_diversity"],
            interactions=HISTORY,
            item_features=FEATURES,
        ),
    ),
    (
        "serendipity-lazy",
        lambda: irm.beyond_accuracy(
            RECS.lazy(), ["serendipity"], interactions=HISTORY, item_features=FEATURES
        ).collect(),
    ),
    (
        "evaluate",
        lambda: irm.evaluate(
            RUN, ["serendipity@2"], interactions=RUN_HISTORY, item_features=RUN_FEATURES
        ),
    ),
]


@pytest.mark.parametrize(
    "call", [pytest.param(call, id=name) for name, call in EMPTY_VECTOR_CASES]
)
def test_an_empty_vector_of_a_recommended_item_is_refused(call: Callable[[], Any]) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(EMPTY)}$"):
        call()


def test_an_empty_vector_of_a_recommended_item_is_refused_on_dask(
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame, back = engine_io("dask", request)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(EMPTY)}$"):
        back(
            evaluate(
                frame(RUN),
                ["serendipity@2"],
                interactions=frame(RUN_HISTORY),
                item_features=frame(RUN_FEATURES),
                partitions=2,
            )
        )


JUDGED_RUN = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
)
QRELS = pl.DataFrame({"query_id": ["q1"] * 2, "doc_id": ["c", "x"], "relevance": [1, 2]})
PREFS = pl.DataFrame(
    {
        "query_id": ["q1"] * 2,
        "jg": ["u"] * 2,
        "jsg": ["s"] * 2,
        "doc_id": ["a", "b"],
        "rel_level": [2.0, 1.0],
    }
)


def _unread(option: str, metrics: str, what: str) -> str:
    return (
        f"{option} is not read by {metrics}: a count of the judgments or of the queries "
        "(num_rel, idcg, num_q, prefs_num_prefs_poss) reads no ranking, RecTools' "
        "covered_users@k reads the whole run, and only the metrics of a ranking (P, ndcg, "
        f"map, num_ret...) read {what}; drop {option.split('=')[0]}= (it would change "
        "nothing), or evaluate a metric of the ranking"
    )


DEPTH = "the documents within depth="
JUDGED = "the ranking closed up on its judged documents"

UNREAD_RANKING_CASES: list[tuple[str, list[str], dict[str, Any], str]] = [
    (
        "num_rel-idcg-depth",
        ["num_rel", "idcg"],
        {"depth": 1},
        _unread("depth=1", "metrics 'num_rel', 'idcg'", DEPTH),
    ),
    (
        "num_rel-idcg-judged_only",
        ["num_rel", "idcg@2"],
        {"judged_only": True},
        _unread("judged_only=True", "metrics 'num_rel', 'idcg@2'", JUDGED),
    ),
    ("num_q-depth", ["num_q"], {"depth": 2}, _unread("depth=2", "metric 'num_q'", DEPTH)),
    (
        "num_q-judged_only",
        ["num_q"],
        {"judged_only": True},
        _unread("judged_only=True", "metric 'num_q'", JUDGED),
    ),
    (
        "covered_users-depth",
        ["covered_users@2"],
        {"depth": 1},
        _unread("depth=1", "metric 'covered_users@2'", DEPTH),
    ),
    (
        "covered_users-judged_only",
        ["covered_users@2"],
        {"judged_only": True},
        _unread("judged_only=True", "metric 'covered_users@2'", JUDGED),
    ),
    (
        "prefs-depth",
        ["prefs_num_prefs_poss"],
        {"depth": 1},
        _unread("depth=1", "metric 'prefs_num_prefs_poss'", DEPTH),
    ),
    # beside a beyond-accuracy metric, which reads no ranking cut either: the same
    # refusal, not the refusal of an option some of the metrics read
    (
        "num_rel-catalog_coverage-depth",
        ["num_rel", "catalog_coverage@2"],
        {"depth": 1},
        _unread("depth=1", "metrics 'num_rel', 'catalog_coverage@2'", DEPTH),
    ),
]


def _tables(metrics: list[str]) -> dict[str, pl.DataFrame]:
    return {"prefs": PREFS} if metrics[0].startswith("prefs_") else {"qrels": QRELS}


@pytest.mark.parametrize(
    ("metrics", "options", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in UNREAD_RANKING_CASES],
)
def test_a_ranking_option_no_metric_reads_is_refused(
    metrics: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(JUDGED_RUN, metrics, **_tables(metrics), **options)


@pytest.mark.parametrize(
    ("metrics", "options", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in UNREAD_RANKING_CASES[:2]],
)
def test_the_comparison_and_the_engines_refuse_it_alike(
    metrics: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare({"a": JUDGED_RUN, "b": JUDGED_RUN}, metrics, qrels=QRELS, **options)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        check_options_read(EvalOptions.build(**options), metrics, labels=False)


@pytest.mark.parametrize(
    ("metrics", "options", "expected"),
    [
        # beside a metric that reads the ranking, the option is taken (num_rel unchanged);
        # the defaults passed explicitly are no option given
        (["ndcg", "num_rel"], {"depth": 1}, (1, 0.0, 2.0)),
        (["P@1", "num_rel", "idcg"], {"judged_only": True}, (1, 1.0, 2.0, 2.6309297535714573)),
        (["num_q", "num_rel"], {"depth": None, "judged_only": False}, (1, 2.0)),
    ],
)
def test_a_ranking_option_beside_a_metric_that_reads_it_is_taken(
    metrics: list[str], options: dict[str, Any], expected: tuple[float, ...]
) -> None:
    got = irm.evaluate(JUDGED_RUN, metrics, qrels=QRELS, **options)
    assert got.row(0) == pytest.approx(expected)
