"""A document spelt apart beside judged ones, on every route that reads judgments (round 33).

Round 32 warned of ``q1: d1, D3, d4`` beside the judged ``d1, d3, d4`` (``'D3'`` read as
unjudged) on the ranking metrics' path only. The routes that read the judgments beside
their own rows still warned only where a query found no judged document: the exposure
measures (``qrels=``, beside ``groups=`` too), ``prefs=``, ``qrels_jg=``, the
propensity-scored metrics, and fusion's training (whose inner evaluations read no hint)
scored ``'D3'`` as unjudged in silence. Each now says the ranking metrics' sentence; the
engines (Spark, Dask) add up their parts' as for the ranking metrics. With ``depth=``, a
document spelt apart below the depth is not read by the metrics, and is no longer named.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io, warned
from tests.test_engines_round13 import ENGINES

QRELS = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["d1", "d3", "d4"], "relevance": [1, 1, 0]}
)
PREFS = pl.DataFrame(
    {
        "query_id": ["q1"] * 3,
        "jg": ["1"] * 3,
        "jsg": ["1"] * 3,
        "doc_id": ["d1", "d3", "d4"],
        "rel_level": [2.0, 1.0, 0.0],
    }
)
QRELS_JG = QRELS.with_columns(jg=pl.lit("1"))
PROPENSITIES = pl.DataFrame({"doc_id": ["d1", "d3", "d4"], "propensity": [0.5, 0.5, 0.5]})
GROUPS = pl.DataFrame({"doc_id": ["d1", "d3", "d4"], "group": ["a", "b", "a"]})


def _run(*docs: str) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q1"] * len(docs), "doc_id": list(docs), "rank": [1, 2, 3]})


#: 'D3' (the judged 'd3') at rank 2, and at rank 3
SPELT, LOW = _run("d1", "D3", "d4"), _run("d1", "d4", "D3")
#: two systems: 'a' spells 'd3' apart, 'b' retrieves the judged ones
SYSTEMS = pl.concat(
    [
        SPELT.with_columns(system=pl.lit("a")),
        _run("d1", "d3", "d4").with_columns(system=pl.lit("b")),
    ]
)


def said(
    found: int = 2, *, name: str = "the run", listed: bool = False, judgments: str = "judgments"
) -> str:
    lists = "; it lists 1 of the 1 judged queries" if listed else ""
    return (
        f"{name} retrieves documents spelt apart from judged ones in 1 judged query where "
        f"it retrieves other judged documents ({found} of 3 judged documents, in 1 of 1 "
        f"judged queries{lists}): 1 (query, document) pair(s) of the run there match a "
        "judgment of the query only when case is ignored (query 'q1': run 'D3', "
        f"{judgments} 'd3') and are scored as unjudged documents: ids are compared exactly, "
        "as trec_eval compares them; give both the same spelling, e.g. "
        "pl.col('doc_id').str.to_lowercase() on the run and the "
        + ("judgments." if judgments == "judgments" else "preferences (prefs=).")
    )


#: 'D4' judged as the run spells it, groups= spelling it 'd4': in no group, said
UNGROUPED = _run("d1", "d3", "D4")
GROUPS_SAID = (
    "groups= gives no group to 1 document(s) of the run that match one of its documents "
    "only when case is ignored (run 'D4', groups= 'd4'): ids are compared exactly, and a "
    "document without a group counts in no group, so its exposure and relevance are left "
    "out of every group's (with none grouped, the values are null or NaN). Give both the "
    "same spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and groups=."
)
UNGROUPED_QRELS = QRELS.with_columns(doc_id=pl.Series(["d1", "d3", "D4"]))

CASES: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], list[str]]] = [
    (
        "groups= spelt apart",
        UNGROUPED,
        ["ee_relevance", "awrf"],
        {"qrels": UNGROUPED_QRELS, "groups": GROUPS},
        [GROUPS_SAID],
    ),
    # 'x9' in no group, and like none of its documents: nothing said
    (
        "groups= lacks one",
        _run("d1", "d3", "x9"),
        ["ee_relevance"],
        {"qrels": QRELS, "groups": GROUPS},
        [],
    ),
    ("exposure", SPELT, ["ee_relevance", "ee_loss"], {"qrels": QRELS}, [said()]),
    ("exposure in buckets", SPELT, ["ee_relevance"], {"qrels": QRELS, "buckets": 2}, [said()]),
    # 'D3' spelt apart from groups= too: both said
    (
        "awrf, groups=",
        SPELT,
        ["awrf"],
        {"qrels": QRELS, "groups": GROUPS},
        [GROUPS_SAID.replace("'D4'", "'D3'").replace("'d4'", "'d3'"), said()],
    ),
    (
        "exposure by system",
        SYSTEMS,
        ["ee_relevance"],
        {"qrels": QRELS, "systems": "system"},
        [said(name="system 'a'")],
    ),
    (
        "prefs",
        SPELT,
        ["prefs_simp"],
        {"prefs": PREFS},
        [said(listed=True, judgments="preferences")],
    ),
    ("qrels_jg", SPELT, ["map_avgjg"], {"qrels_jg": QRELS_JG}, [said(listed=True)]),
    (
        "propensities",
        SPELT,
        ["ps_precision@3"],
        {"qrels": QRELS, "propensities": PROPENSITIES},
        [said()],
    ),
    # depth=: 'D3' below it is not read by the metrics, and not named
    ("depth, below", LOW, ["P@3"], {"qrels": QRELS, "depth": 2}, []),
    (
        "depth, by score",
        LOW.with_columns(score=pl.Series([3.0, 2.0, 1.0])).drop("rank"),
        ["P@3"],
        {"qrels": QRELS, "depth": 2},
        [],
    ),
    ("depth, within", LOW, ["P@3"], {"qrels": QRELS, "depth": 3}, [said(listed=True)]),
    ("qrels_jg, depth", LOW, ["map_avgjg"], {"qrels_jg": QRELS_JG, "depth": 2}, []),
    ("prefs, depth", LOW, ["prefs_simp"], {"prefs": PREFS, "depth": 2}, []),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "metrics", "options", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_document_spelt_apart_beside_judged_ones_is_warned_on_every_route(
    run: pl.DataFrame,
    metrics: list[str],
    options: dict[str, Any],
    expected: list[str],
    lazy: bool,
) -> None:
    def call() -> pl.DataFrame:
        if not lazy:
            return irm.evaluate(run, metrics, **options)
        tables = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in options.items()}
        return irm.evaluate(run.lazy(), metrics, **tables).collect()

    _, given = warned(call)
    assert given == expected


#: fit_fusion's and optimize_fusion's own check of the judgments (their inner
#: evaluations read no hint): said once, of run 'x'
TRAINING = {
    "fit_fusion": "fit_fusion learns each run's table from these judgments: such documents "
    "of that run's are learnt as unjudged ones.",
    "optimize_fusion": "optimize_fusion tunes the fusion on these judgments: no grid point "
    "can score such documents of that run's.",
}


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("caller", ["fit_fusion", "optimize_fusion"])
def test_fusion_training_says_it_once(caller: str, lazy: bool) -> None:
    # 'y' has no 'D3' to fuse with: no overlap warning, the training's alone
    x = SPELT.with_columns(score=pl.Series([3.0, 2.0, 1.0])).drop("rank")
    y = x.with_columns(doc_id=pl.Series(["d1", "d4", "e9"]))
    runs = {"x": x.lazy() if lazy else x, "y": y}
    qrels = QRELS.lazy() if lazy else QRELS
    if caller == "fit_fusion":
        _, given = warned(lambda: irm.fit_fusion(runs, "mapfuse", qrels=qrels))
    else:
        _, given = warned(lambda: irm.optimize_fusion(runs, "ndcg", qrels=qrels, method="wsum"))
    assert given == [said(name="run 'x'") + " " + TRAINING[caller]]


ENGINE_CASES: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], list[str]]] = [
    ("exposure", SPELT, ["ee_relevance"], {}, [said()]),
    (
        "exposure by system",
        SYSTEMS,
        ["ee_relevance"],
        {"systems": "system"},
        [said(name="system 'a'")],
    ),
    ("depth, below", LOW, ["P@3"], {"depth": 2}, []),
    ("depth, within", LOW, ["P@3"], {"depth": 3}, [said(listed=True)]),
    ("groups=", UNGROUPED, ["ee_relevance", "awrf"], {"groups": GROUPS}, [GROUPS_SAID]),
]


@pytest.mark.parametrize(
    ("run", "metrics", "options", "said_here"),
    [case[1:] for case in ENGINE_CASES],
    ids=[case[0] for case in ENGINE_CASES],
)
@pytest.mark.parametrize("engine", ENGINES)
def test_engines_say_it_as_one_machine(
    engine: str,
    run: pl.DataFrame,
    metrics: list[str],
    options: dict[str, Any],
    said_here: list[str],
    request: pytest.FixtureRequest,
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    qrels = UNGROUPED_QRELS if "groups" in options else QRELS
    expected = warned(lambda: irm.evaluate(run, metrics, qrels=qrels, **options))
    assert expected[1] == said_here
    tables = {k: to_engine(v) if isinstance(v, pl.DataFrame) else v for k, v in options.items()}
    got = warned(lambda: back(evaluate(to_engine(run), metrics, qrels=to_engine(qrels), **tables)))
    assert got[1] == expected[1]
    assert got[0].equals(expected[0])
