"""One call's warnings come in one order, on every path (round 31).

The checks of ``irm.evaluate`` warn from inside its plan, each when its branch runs,
and polars chooses which branch runs first: a DataFrame (collected by the in-memory
engine) and a LazyFrame (collected by the user, or by the streaming engine) gave the
same warnings in other orders (the run ``(u9, 7, 1)``, the judgments ``(u1, 1, 1)``,
the history ``(u1, 1), (u2, 7)`` and ``epc@3``: a DataFrame said "'epc@3' is null"
first, a LazyFrame "the run retrieves no judged document"), and beside the exposure
measures one call's order changed from one run to the next. The plan's warnings are
now held while it runs and given, when its last step runs, in the order the plan
declares its checks (:mod:`polars_irmetrics.ground.warning_order`); a call whose
collect is refused gives none of them, whichever branch ran before the refusal.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, IrmWarning
from tests.helpers import warned

RUN = pl.DataFrame({"query_id": ["u9", "u9"], "doc_id": [7, 8], "rank": [1, 2]})
QRELS = pl.DataFrame({"query_id": ["u1"], "doc_id": [1], "relevance": [1]})
HISTORY = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": [1, 7]})
GROUPS = pl.DataFrame({"doc_id": [1, 2], "group": ["a", "b"]})
FEATURES = pl.DataFrame({"doc_id": [1, 2], "features": [[1.0, 0.0], [0.0, 1.0]]})

NO_JUDGED = (
    "the run retrieves no judged document (0 of 1 judged documents, in 0 of 1 judged "
    "queries; it lists 0 of the 1 judged queries): every judged query scores as a ranking "
    "of no judged document does (0 in ndcg, map, precision, recall and the like), as "
    "trec_eval scores such a run. Check that the run and the judgments name the same "
    "queries and documents (same collection, same id spelling)."
)
EPC_NULL = (
    "'epc@3' is null: Elliot's mean over the users of the run with a relevant test item "
    "(qrels=, relevance >= relevance_level=1), and no user of the run has one. Check that "
    "the run's users and the judgments' queries line up, and relevance_level="
)


def _cold_users(owner: str, reader: str) -> str:
    return (
        f"interactions= holds none of the 1 users of the {owner} (column 'query_id'): no "
        f"metric asked reads a user's own history ({reader} reads the items' popularity or "
        "the catalogue alone), so the values do not change, but users that do not line up "
        "are a likely sign that the items do not either. Ids that do not line up are the "
        f"likely cause: give interactions= and the {owner} the same 'query_id' values (same "
        "spelling, same collection)."
    )


UNGROUPED = (
    "groups= holds none of the 2 documents of the run (column 'doc_id'): in awrf a "
    "document without a group counts in no group, so its exposure and relevance are left "
    "out of every group's (with none grouped, the values are null or NaN); and it is "
    "unprotected in rnd (counted in the ranking's N, not in its protected P; with none "
    "grouped no document is protected and the values are NaN). Ids that do not line up "
    "are the likely cause: give groups= and the run the same 'doc_id' values (same "
    "spelling, same collection)."
)
AWRF_NONE = (
    "'awrf' scores no query (its mean is null): the exposure measures that read the "
    "judgments score only the queries with a relevant judgment (relevance > 0; with "
    "groups=, one whose document has a group), and the judgments hold none for the run's "
    "queries (every grade 0 or less, no relevant document in groups=, or judgments of "
    "other queries). Check that relevance= names the judgments' grade column, that the "
    "run and the judgments name the same queries and documents (same id spelling), and "
    "that groups= holds the relevant documents"
)
RND_NAN = (
    "'rnd' is NaN on 1 of the 1 queries (first: query_id='u9'): Yang & Stoyanovich's sum "
    "runs over the cut-offs 10, 20, ... up to the ranking's length and is divided by its "
    "largest value, so a ranking of 10 documents or fewer, or with no or only protected "
    "documents, has none (0 / 0), and the mean over the queries is NaN too (ir_measures' "
    "rND, rKL and rRD sum at every position and give 0 where the largest value is 0: "
    "another definition); rank more than 10 documents of both groups, or leave those "
    "queries out (the short rankings: run.filter(pl.len().over('query_id') > 10))"
)
NO_FEATURES = (
    "item_features= holds none of the 2 items of the recommendations (column 'doc_id'): "
    "the recommendations of an item without a feature vector are left out "
    "(unseen_items='drop'), so the metrics read few of the lists' items. Ids that do not "
    "line up are the likely cause: give item_features= and the recommendations the same "
    "'doc_id' values (same spelling, same collection)."
)

# (metrics, tables and options, the warnings in order): the plan's checks in the order
# it declares them, the run's judged documents first
CASES: list[tuple[list[str], dict[str, Any], list[str]]] = [
    (
        ["epc@3"],
        {"qrels": QRELS, "interactions": HISTORY},
        [NO_JUDGED, EPC_NULL, _cold_users("run", "epc@3")],
    ),
    (
        ["rnd", "awrf", "epc@3"],
        {"qrels": QRELS, "groups": GROUPS, "interactions": HISTORY},
        [NO_JUDGED, UNGROUPED, AWRF_NONE, RND_NAN, EPC_NULL, _cold_users("run", "epc@3")],
    ),
    (
        ["novelty@2", "intra_list_diversity@2", "P@2"],
        {
            "qrels": QRELS,
            "interactions": HISTORY,
            "item_features": FEATURES,
            "unseen_items": "drop",
        },
        [NO_JUDGED, NO_FEATURES, _cold_users("recommendations", "novelty@2")],
    ),
]


@pytest.mark.parametrize(("metrics", "given", "expected"), CASES)
def test_one_order_on_every_path(
    metrics: list[str], given: dict[str, Any], expected: list[str]
) -> None:
    """The DataFrame's, the LazyFrame's (collected by the user, on the default and the
    streaming engine) warnings: the one list, in the one order, call after call."""
    paths = {
        "DataFrame": lambda: irm.evaluate(RUN, metrics, **given),
        "LazyFrame": lambda: irm.evaluate(RUN.lazy(), metrics, **given),
        "LazyFrame, streaming": lambda: irm.evaluate(RUN.lazy(), metrics, **given).collect(
            engine="streaming"
        ),
    }
    for path, call in paths.items():
        for _ in range(3):
            _, said = warned(call)
            assert said == expected, path


def _collected(got: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return got.collect() if isinstance(got, pl.LazyFrame) else got


def test_a_refused_run_warns_of_nothing() -> None:
    """A run refused (a document listed twice) beside judgments, ``groups=`` and a
    history it does not line up with: the refusal alone, on every path, whichever of the
    plan's checks ran before it (a DataFrame gave the warnings of some, at times)."""
    run = pl.DataFrame({"query_id": ["u9", "u9"], "doc_id": [7, 7], "rank": [1, 2]})
    given = {"qrels": QRELS, "groups": GROUPS, "interactions": HISTORY}
    # a DataFrame's collect warned in some calls, not in others: asked a dozen times
    for table, times in ((run, 12), (run.lazy(), 2)):
        for _ in range(times):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with pytest.raises(DuplicateError, match="doc_id"):
                    _collected(irm.evaluate(table, ["rnd", "awrf", "epc@3"], **given))
            assert [str(w.message) for w in caught if issubclass(w.category, IrmWarning)] == []
