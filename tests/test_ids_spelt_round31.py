"""Routes that read the judgments beside their rows: a run spelt apart in a query (round 31).

Round 30 warned of a run whose document ids match the judged ones of a query only once
their spelling is ignored (``'D1'``, ``'D2'`` in the run, ``'d1'``, ``'d2'`` judged, in
``q2`` alone), for the ranking metrics; the exposure measures asked alone scored that
query 0 (ee_relevance) in silence. They give the same warning now (their own words for
what such a query scores), on one machine, in buckets and on the engines; a shallow run
(no document spelt apart) is still said nothing of. So do the other routes that read
judgments beside their own rows and scored such a query in silence: preference
judgments (``prefs=``), judgment groups (``qrels_jg=``), the propensity-scored metrics,
and fusion's training (``fit_fusion``, ``optimize_fusion``), each in its own words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io, warned
from tests.test_docs_spelt_apart_round30 import QRELS, SPELT, SYSTEMS  # round 30's tables
from tests.test_engines_round13 import ENGINES

EXPOSED = (
    "{name} retrieves no judged document in 1 judged query where its documents match "
    "judged ones once their spelling is ignored (3 of 5 judged documents, in 3 of 4 judged "
    "queries): it scores as a ranking that exposes no relevant document does (ee_relevance "
    "0, awrf_ndcg 0; not 0 for ee_loss). 2 (query, document) pair(s) of the run in such "
    "queries match a judgment only when case is ignored (query 'q2': run 'D1', judgments "
    "'d1'): ids are compared exactly, as trec_eval compares them; give both the same "
    "spelling, e.g. pl.col('doc_id').str.to_lowercase() on the run and the judgments."
)
EE = ["ee_relevance", "ee_loss"]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "options", "said"),
    [
        (SPELT, {}, [EXPOSED.format(name="the run")]),
        (SPELT, {"buckets": 2}, [EXPOSED.format(name="the run")]),
        (SYSTEMS, {"systems": "system"}, [EXPOSED.format(name="system 'a'")]),
    ],
    ids=["spelt apart", "buckets", "systems"],
)
def test_exposure_measures_alone_warn_of_a_query_spelt_apart(
    run: pl.DataFrame, options: dict[str, Any], said: list[str], lazy: bool
) -> None:
    def call(frame: pl.DataFrame) -> pl.DataFrame:
        if lazy:
            got = irm.evaluate(frame.lazy(), EE, qrels=QRELS.lazy(), per_query=True, **options)
            return got.collect()
        return irm.evaluate(frame, EE, qrels=QRELS, per_query=True, **options)

    out, given = warned(lambda: call(run))
    assert given == said
    # a shallow run (q2's documents judged nowhere) is said nothing of, and scores alike
    shallow = run.with_columns(pl.col("doc_id").replace({"D1": "x", "D2": "y"}))
    alike, quiet = warned(lambda: call(shallow))
    assert quiet == []
    keys = ["system", "query_id"] if "systems" in options else ["query_id"]
    assert out.sort(keys).equals(alike.sort(keys))
    assert set(out.filter(pl.col("query_id") == "q2")["ee_relevance"]) == {0.0}


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("engine", ENGINES)
def test_engines_warn_of_it_as_one_machine(
    engine: str, partitions: int, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = engine_io(engine, request)
    expected = warned(lambda: irm.evaluate(SPELT, EE, qrels=QRELS, per_query=True))
    assert expected[1] == [EXPOSED.format(name="the run")]
    got = warned(
        lambda: back(
            evaluate(
                to_engine(SPELT),
                EE,
                qrels=to_engine(QRELS),
                per_query=True,
                partitions=partitions,
            )
        )
    )
    assert got[1] == expected[1]
    assert got[0].sort("query_id").equals(expected[0].sort("query_id"))


#: The ranking metrics' words, the tally and what such a query scores given
SAID = (
    "{name} retrieves no judged document in 1 judged query where its documents match "
    "judged ones once their spelling is ignored ({tally}): it scores {scores}. 2 (query, "
    "document) pair(s) of the run in such queries match a judgment only when case is "
    "ignored (query 'q2': run 'D1', {judged} 'd1'): ids are compared exactly, as trec_eval "
    "compares them; give both the same spelling, e.g. pl.col('doc_id').str.to_lowercase() "
    "on the run and the {tables}."
)
ZERO = "as a ranking of no judged document does (0 in ndcg, map, precision, recall and the like)"
TALLY = "3 of 5 judged documents, in 3 of 4 judged queries"
LISTS = "; it lists 4 of the 4 judged queries"
#: q2 of the preferences holds one more document, judged below the others
PREFS = pl.concat(
    [
        QRELS.select("query_id", jg=pl.lit("0"), jsg=pl.lit("0"), doc_id="doc_id", rel_level=1.0),
        pl.DataFrame({"query_id": "q2", "jg": "0", "jsg": "0", "doc_id": "z", "rel_level": 0.0}),
    ]
)
PROPENSITIES = pl.DataFrame({"doc_id": ["a", "b", "c", "d1", "d2"], "propensity": 0.5})
FIT = (
    "fit_fusion learns each run's table from these judgments: such a query of that run's is "
    "learnt as one of no hit."
)
TUNE = (
    "optimize_fusion tunes the fusion on these judgments: no grid point can score that run's "
    "documents in such a query."
)
Call = Callable[[Callable[[pl.DataFrame], Any], Callable[[pl.DataFrame], Any]], Any]
FUSED = (
    "1 query held by several runs shares no document between them, and 2 document id(s) of "
    "run 'y' match an id of run 'x' only when case is ignored ('d1' against 'D1'): ids are "
    "compared exactly; give both runs the same spelling, e.g. "
    "pl.col('doc_id').str.to_lowercase() on each. Each such document is fused as two, one "
    "scored by each run. If the runs' documents there are meant to differ, the fused run is "
    "as documented: silence this with "
    "warnings.filterwarnings('ignore', category=irm.CoverageWarning)."
)


def _runs(run: Any) -> dict[str, Any]:
    """Two runs to fuse: ``run`` and one whose q2 retrieves the judged 'd1', 'd2'."""
    other = SPELT.with_columns(pl.col("doc_id").str.to_lowercase())
    return {"x": run, "y": other.lazy() if isinstance(run, pl.LazyFrame) else other}


ROUTES: list[tuple[str, Call, str | list[str]]] = [
    (
        "prefs",
        lambda f, t: irm.evaluate(f(SPELT), ["prefs_simp"], prefs=t(PREFS), per_query=True),
        SAID.format(
            name="the run",
            tally="3 of 6 judged documents, in 3 of 4 judged queries" + LISTS,
            scores="as a ranking of none of the preferences' documents does (0 in every prefs_* "
            "measure but prefs_num_prefs_poss)",
            judged="preferences",
            tables="preferences (prefs=)",
        ),
    ),
    (
        "qrels_jg",
        lambda f, t: irm.evaluate(
            f(SPELT), ["map_avgjg"], qrels_jg=t(QRELS.with_columns(jg=pl.lit("0"))), per_query=True
        ),
        SAID.format(
            name="the run",
            tally=TALLY + LISTS,
            scores=ZERO,
            judged="judgments",
            tables="judgments",
        ),
    ),
    (
        "propensities",
        lambda f, t: irm.evaluate(
            f(SPELT), ["ps_ndcg@2"], qrels=t(QRELS), propensities=t(PROPENSITIES), per_query=True
        ),
        SAID.format(
            name="the run", tally=TALLY, scores=ZERO, judged="judgments", tables="judgments"
        ),
    ),
    (
        "propensities in buckets",
        lambda f, t: irm.evaluate(
            f(SPELT),
            ["ps_ndcg@2"],
            qrels=t(QRELS),
            propensities=t(PROPENSITIES),
            per_query=True,
            buckets=2,
        ),
        SAID.format(
            name="the run", tally=TALLY, scores=ZERO, judged="judgments", tables="judgments"
        ),
    ),
    (
        "fit_fusion",
        lambda f, t: irm.fit_fusion(_runs(f(SPELT)), "mapfuse", qrels=t(QRELS), score="rank"),
        SAID.format(
            name="run 'x'", tally=TALLY, scores=ZERO, judged="judgments", tables="judgments"
        )
        + " "
        + FIT,
    ),
    (
        "optimize_fusion",
        lambda f, t: irm.optimize_fusion(
            _runs(f(SPELT)), "ndcg@2", qrels=t(QRELS), step=0.5, score="rank"
        ),
        # the runs' own spelling apart in q2 first (fusion's warning: 'y' spells the
        # judgments' way), then the judgments'
        [
            FUSED,
            SAID.format(
                name="run 'x'", tally=TALLY, scores=ZERO, judged="judgments", tables="judgments"
            )
            + " "
            + TUNE,
        ],
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("call", "said"), [c[1:] for c in ROUTES], ids=[c[0] for c in ROUTES])
def test_other_routes_that_read_judgments_warn_of_it(
    call: Call, said: str | list[str], lazy: bool
) -> None:
    def frame(f: pl.DataFrame) -> Any:
        return f.lazy() if lazy else f

    out, given = warned(lambda: call(frame, frame))
    assert given == ([said] if isinstance(said, str) else said)
    # the shallow run (q2's documents judged nowhere): nothing said, the same values
    shallow = {"D1": "x", "D2": "y"}
    alike, quiet = warned(
        lambda: call(lambda f: frame(f.with_columns(pl.col("doc_id").replace(shallow))), frame)
    )
    assert quiet == []
    assert (alike == out) if isinstance(out, dict) else alike.equals(out)
