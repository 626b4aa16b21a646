"""A run one machine refuses warns of nothing on Spark and Dask (round 28).

One machine collects a run's values before it counts how the side tables line up with
the run (the history, ``groups=``, ``item_features=``, ``reference=``): a run it
refuses (a document listed twice, a null id, two documents at one rank) is refused
before anything is warned about. The engines gave those warnings from tasks of their
own, beside the parts that refuse the run:

* Dask: the tasks that warn of the history's, ``groups=``'s and the item features'
  coverage, and of the reference's queries, ran beside the parts, so a refused run
  warned too (at times after ``compute()`` had raised, on the client's event-loop
  thread); they now wait for every part's values. The history's warning came before
  the parts' coverage warning on a run that is not refused, where one machine gives it
  after; it is the last now.
* Spark: the reference's warning was given at the call, before the parts refused the
  run; it is given once the result is computed now.
* Both: the off-policy estimators' support warning (the policy takes an action the log
  never shows) was given at the call, before a part or the merge refused the log (a
  bad propensity, a round the policy lacks); it is counted at the call still, and given
  once the result is computed (Spark) or by the merge's task (Dask).
* Spark: the propensity-scored metrics' coverage warning (a run that retrieves no
  judged document) was counted and given at the call, before the parts refused the run;
  it is given once the result is computed now.
* The rank-similarity metrics' checks of a run were read through its per-query values:
  a part whose queries the reference lacks (on Spark and Dask) had none and took a
  null query id, a document twice, ... as good rows. They are read whatever values the
  part holds now, so a reference with no row refuses such a run on one machine too.

Each case: one machine's exception (class, message) and warnings (class, text, in
order), which the engines give alike.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import dask_idle, docs_hook, engine_io
from tests.test_engines_round13 import ENGINES
from tests.test_engines_round14 import HISTORY, RUN


def _nulled(frame: pl.DataFrame, column: str, row: int) -> pl.DataFrame:
    """``frame`` with ``column`` null in its row ``row``."""
    at = pl.int_range(pl.len()) == row
    return frame.with_columns(pl.when(at).then(None).otherwise(pl.col(column)).alias(column))


#: 12 users, two recommendations each; the history holds 7 of the 19 items
TWICE = pl.concat([RUN, RUN.head(1)])  # user u0 lists item i0 twice
NULL_ITEM = _nulled(RUN, "doc_id", 3)  # user u1's second item
ONE_RANK = RUN.with_columns(  # user u0's two items at rank 1
    pl.when(pl.int_range(pl.len()) == 1).then(1).otherwise(pl.col("rank")).alias("rank")
)
QRELS = RUN.select("query_id", "doc_id").with_columns(relevance=pl.lit(1))
#: judgments of documents no user is recommended: the run retrieves no judged document
UNRETRIEVED = QRELS.with_columns(doc_id=pl.lit("j") + pl.int_range(pl.len()).cast(pl.String))
GROUPS = pl.DataFrame({"doc_id": ["i0", "i3"], "group": ["p", "u"]})  # 2 of the 19 items
FEATURES = pl.DataFrame({"doc_id": ["i0", "i3"], "vector": [[1.0, 0.0], [0.0, 1.0]]})
#: 5 queries of 3 documents; the reference holds q0 alone
RANKED = pl.DataFrame(
    {
        "query_id": [f"q{i}" for i in range(5) for _ in range(3)],
        "doc_id": [f"d{j}" for _ in range(5) for j in range(3)],
        "rank": [1, 2, 3] * 5,
    }
)
REFERENCE = RANKED.filter(pl.col("query_id") == "q0")

#: a log whose logger chose 'a' in each of its 3 rounds; the policy takes 'b' too
ALL_A = docs_hook("catalogue").EXAMPLE_OPE_LOG.with_columns(action=pl.lit("a"))
POLICY = docs_hook("catalogue").EXAMPLE_OPE_POLICY.drop("q_hat")

#: a run that retrieves none of the judged documents
UNJUDGED = pl.DataFrame(
    {"query_id": ["q1"] * 3 + ["q2"] * 2, "doc_id": ["a", "b", "c", "a", "d"],
     "rank": [1, 2, 3, 1, 2]}
)  # fmt: skip
FAR = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["x", "y"], "relevance": [1, 1]})
PROPENSITIES = pl.DataFrame({"doc_id": ["x", "y"], "propensity": [0.5, 0.25]})

#: (id, run, metrics, side tables, options)
CASES: list[tuple[str, pl.DataFrame, list[str], dict[str, pl.DataFrame], dict[str, Any]]] = [
    # the history's warning (a metric of each user's values; of the items' counts; Elliot's)
    ("history, twice", TWICE, ["surprisal@2"], {"interactions": HISTORY}, {}),
    ("history, null item", NULL_ITEM, ["surprisal@2"], {"interactions": HISTORY}, {}),
    ("history, counts, twice", TWICE, ["novelty@2"], {"interactions": HISTORY},
     {"unseen_items": "drop"}),
    ("history, elliot, null item", NULL_ITEM, ["epc@2"],
     {"interactions": HISTORY, "qrels": QRELS}, {}),
    # groups='s warnings (of the run's documents; of the judgments' relevant ones)
    ("groups, one rank", ONE_RANK, ["rnd"], {"groups": GROUPS}, {}),
    ("groups, per query, twice", TWICE, ["rnd"], {"groups": GROUPS}, {"per_query": True}),
    ("groups, judged, null item", NULL_ITEM, ["awrf"], {"groups": GROUPS, "qrels": QRELS}, {}),
    # the item features' warning
    ("features, twice", TWICE, ["ild@2"], {"item_features": FEATURES},
     {"unseen_items": "recommenders", "features": "vector"}),
    # not refused: the parts' coverage warning, then the history's (one machine's order)
    ("coverage, then history", RUN, ["mcc@2"],
     {"interactions": HISTORY, "qrels": UNRETRIEVED}, {}),
    ("coverage, then history, per query", RUN, ["mcc@2"],
     {"interactions": HISTORY, "qrels": UNRETRIEVED}, {"per_query": True}),
    # the reference's warning (a part that holds no query of the reference, too)
    ("reference, twice", pl.concat([RANKED, RANKED.slice(4, 1)]), ["rbo"],
     {"reference": REFERENCE}, {}),
    ("reference, per query, null document", _nulled(RANKED, "doc_id", 4), ["rbo"],
     {"reference": REFERENCE}, {"per_query": True}),
    ("reference, null query", _nulled(RANKED, "query_id", 4), ["rbo"],
     {"reference": REFERENCE}, {}),
    ("reference, per query, one rank", RANKED.with_columns(
        pl.when(pl.int_range(pl.len()) == 4).then(1).otherwise(pl.col("rank")).alias("rank")
    ), ["rbo"], {"reference": REFERENCE}, {"per_query": True}),
    # the support warning (the policy takes an action the log never shows), refused in
    # a part (a bad propensity), in the merge (a round the policy lacks), or not
    ("support, bad pscore", ALL_A.with_columns(pscore=pl.Series([0.5, 0.0, 0.5])), ["ips"],
     {"policy": POLICY}, {}),
    ("support, per query, null reward", ALL_A.with_columns(reward=pl.Series([1.0, None, 1.0])),
     ["ips"], {"policy": POLICY}, {"per_query": True}),
    ("support, round lacking", ALL_A, ["ips"],
     {"policy": POLICY.filter(pl.col("round_id") != 3)}, {}),
    ("support, not refused", ALL_A, ["ips"], {"policy": POLICY}, {}),
    # the propensity-scored metrics' coverage warning (Spark: counted on the driver)
    ("propensities, twice", pl.concat([UNJUDGED, UNJUDGED.head(1)]), ["ps_ndcg@2"],
     {"qrels": FAR, "propensities": PROPENSITIES}, {}),
    ("propensities, not refused", UNJUDGED, ["ps_ndcg@2"],
     {"qrels": FAR, "propensities": PROPENSITIES}, {}),
]  # fmt: skip


def _outcome(call: Callable[[], object], settle: Callable[[], None]) -> tuple[Any, ...]:
    """``call``'s exception (class name, message; ``None`` where it returns) and the
    library's warnings it gives (class name, text), in order, recorded until ``settle``
    has returned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
            raised = None
        except irm.IrmError as exc:
            raised = (type(exc).__name__, str(exc))
        settle()
    said = [
        (w.category.__name__, str(w.message))
        for w in caught
        if issubclass(w.category, irm.IrmWarning)
    ]
    return raised, said


#: every case in three parts (a part that holds none of a side table's queries, the
#: merge's refusals); in one part too the cases one machine does not refuse (the order
#: of the parts' warnings and the side tables' in one part)
SPLITS = [
    pytest.param(*case, partitions, id=f"{case[0]}-{partitions}")
    for case in CASES
    for partitions in ((1, 3) if "not refused" in case[0] or "then" in case[0] else (3,))
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("case", "run", "metrics", "tables", "options", "partitions"), SPLITS)
def test_engines_refuse_and_warn_as_one_machine(
    case: str,
    run: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    options: dict[str, Any],
    partitions: int,
    engine: str,
    request: pytest.FixtureRequest,
) -> None:
    expected = _outcome(lambda: irm.evaluate(run, metrics, **tables, **options), lambda: None)
    refused, said = expected
    # a refused run warns of nothing; the others warn
    assert (refused is None) == bool(said), case
    evaluate, to_engine, back = engine_io(engine, request)
    settle: Callable[[], None] = lambda: None  # noqa: E731
    if engine == "dask":
        client = request.getfixturevalue("client")
        settle = lambda: dask_idle(client)  # noqa: E731
    given = {name: to_engine(table) for name, table in tables.items()}

    def call() -> None:
        back(evaluate(to_engine(run), metrics, **given, **options, partitions=partitions))

    assert _outcome(call, settle) == expected


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (_nulled(RANKED, "query_id", 4), "column 'query_id' of the run has null values"),
        (
            pl.concat([RANKED, RANKED.slice(4, 1)]),
            "column 'doc_id' of the run: query 'q1' has 1 repeated listing(s)",
        ),
        (
            _nulled(RANKED, "doc_id", 4),
            "column 'doc_id' of the run has 1 null value(s) in query 'q1'",
        ),
    ],
    ids=["null query", "twice", "null document"],
)
def test_a_reference_of_no_row_refuses_a_bad_run(run: pl.DataFrame, message: str) -> None:
    """The run's checks are read whatever values there are: a reference of no row (no
    per-query value) refuses the run's bad rows too, as one that shares no query."""
    for reference in (REFERENCE.clear(), REFERENCE.with_columns(query_id=pl.lit("q9"))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing is warned about first
            with pytest.raises(irm.IrmError, match=f"^{re.escape(message)}"):
                irm.evaluate(run, ["rbo"], reference=reference)
