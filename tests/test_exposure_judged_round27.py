"""The exposure measures alone (no ranking metric beside): their relevant rows and the
door's tally of the judged documents the run retrieves read one join of the run with
the judgments (round 27), with the values, warnings and errors of the two joins they
made before."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ground.facts import judged_join
from polars_irmetrics.ground.validate import judged_tally

RUN = pl.DataFrame(
    {
        "query_id": [1] * 12 + [2] * 12,
        "doc_id": list(range(12)) + list(range(5, 17)),
        "rank": list(range(1, 13)) * 2,
    }
)
QRELS = pl.DataFrame(
    {"query_id": [1, 1, 2, 2, 3], "doc_id": [0, 3, 5, 9, 1], "relevance": [1, 2, 1, 0, 1]}
)
GROUPS = pl.DataFrame({"doc_id": list(range(20)), "group": [i % 3 for i in range(20)]})
TARGET = pl.DataFrame({"group": [0, 1, 2], "target": [0.3, 0.3, 0.4]})
KEYS = ["query_id", "doc_id"]

# (case, run, judgments, the found rows handed over, the tally)
TALLIES: list[tuple[str, pl.DataFrame, pl.DataFrame, pl.DataFrame | None, tuple[Any, ...]]] = [
    ("some found", RUN, QRELS, None, (3, 2, 5, 4, None)),
    ("none found", RUN, QRELS.with_columns(pl.col("doc_id") + 100), None, (3, 0, 5, 0, None)),
    ("a judgment twice", RUN, pl.concat([QRELS, QRELS.head(1)]), None, (3, 2, 5, 4, None)),
    (
        "a null document in the run",
        RUN.with_columns(
            pl.when(pl.col("doc_id") == 0).then(None).otherwise("doc_id").alias("doc_id")
        ),
        QRELS,
        None,
        (3, 2, 5, 3, None),
    ),
    # the rows handed over are read (no second join): none found where they hold none
    ("found rows read", RUN, QRELS, RUN.head(0), (3, 0, 5, 0, None)),
]


@pytest.mark.parametrize(
    ("case", "run", "qrels", "given", "expected"), TALLIES, ids=[c[0] for c in TALLIES]
)
def test_the_judged_tally_reads_the_found_rows_it_is_handed(
    case: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    given: pl.DataFrame | None,
    expected: tuple[Any, ...],
) -> None:
    joined = judged_join(run.lazy(), qrels.lazy(), KEYS) if given is None else given.lazy()
    found = judged_tally(run.lazy(), qrels.lazy(), *KEYS, found=joined).collect().row(0)
    assert found == expected
    if given is None:  # as the semi-join of the run counts them
        assert judged_tally(run.lazy(), qrels.lazy(), *KEYS).collect().row(0) == found


def _plan(run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str]) -> str:
    extra: dict[str, Any] = {"groups": GROUPS.lazy()}
    if any(m.startswith("awrf") for m in metrics):
        extra["target"] = TARGET.lazy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate(run.lazy(), metrics, qrels=qrels.lazy(), **extra).explain()


_SEMI = re.compile(r"SEMI JOIN:\s*LEFT PLAN ON: \[col\(\"query_id\"\), col\(\"doc_id\"\)\]")

# (case, run, judgments, metrics, semi-joins of the run with the judgments)
PLANS: list[tuple[str, pl.DataFrame, pl.DataFrame, list[str], int]] = [
    ("ee_loss", RUN, QRELS, ["ee_loss"], 0),
    ("the exposure family", RUN, QRELS, ["ee_loss", "awrf", "awrf_ndcg", "rnd"], 0),
    # ids of two dtypes: cast by each reader, not shared (the tally's own semi-join)
    (
        "ids of two dtypes",
        RUN,
        QRELS.with_columns(pl.col("query_id").cast(pl.Int32)),
        ["ee_loss"],
        1,
    ),
    # ordered by score: the door shares no judged rows, the tally joins its own
    (
        "no rank column",
        RUN.with_columns(score=-pl.col("rank")).drop("rank"),
        QRELS,
        ["ee_loss"],
        1,
    ),
]


@pytest.mark.parametrize(
    ("case", "run", "qrels", "metrics", "semi"), PLANS, ids=[c[0] for c in PLANS]
)
def test_the_exposure_measures_alone_join_the_run_with_the_judgments_once(
    case: str, run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str], semi: int
) -> None:
    assert len(_SEMI.findall(_plan(run, qrels, metrics))) == semi


def _evaluated(
    run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str], per_query: bool
) -> tuple[pl.DataFrame | str, list[str]]:
    extra: dict[str, Any] = {"groups": GROUPS.lazy(), "per_query": per_query}
    if any(m.startswith("awrf") for m in metrics):
        extra["target"] = TARGET.lazy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got: pl.DataFrame | str = irm.evaluate(
                run.lazy(), metrics, qrels=qrels.lazy(), **extra
            ).collect()
        except irm.IrmError as error:
            got = f"{type(error).__name__}: {error}"
    return got, [str(w.message) for w in caught]


def _doubled(qrels: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([qrels, qrels.head(1)])


# (case, judgments): each evaluated with the judged rows shared (ids of one dtype) and
# not (the judgments' query ids Int32: each reader casts and joins its own)
EQUAL: list[tuple[str, pl.DataFrame]] = [
    ("some relevant found", QRELS),
    ("no judged document found", QRELS.with_columns(pl.col("doc_id") + 100)),
    ("a judged query the run lacks", QRELS.filter(pl.col("query_id") != 2)),
    ("non-relevant judgments found", QRELS.with_columns(pl.col("relevance") - 1)),
    ("a judgment twice: refused", _doubled(QRELS)),
]


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per query"])
@pytest.mark.parametrize(
    "metrics", [["ee_loss", "ee_relevance"], ["ee_disparity", "awrf_ndcg", "rnd", "rrd"]]
)
@pytest.mark.parametrize(("case", "qrels"), EQUAL, ids=[c[0] for c in EQUAL])
def test_the_shared_judged_rows_give_what_two_joins_gave(
    case: str, qrels: pl.DataFrame, metrics: list[str], per_query: bool
) -> None:
    shared = _evaluated(RUN, qrels, metrics, per_query)
    apart = _evaluated(
        RUN, qrels.with_columns(pl.col("query_id").cast(pl.Int32)), metrics, per_query
    )
    if isinstance(shared[0], pl.DataFrame) and isinstance(apart[0], pl.DataFrame):
        assert shared[0].equals(apart[0])
        assert shared[1] == apart[1]
    else:
        assert (shared[0], shared[1]) == (apart[0], apart[1])
    if case == "no judged document found":  # the tally's warning, said once
        assert sum("retrieves no judged document" in w for w in shared[1]) == 1
    if case.endswith("refused"):
        assert isinstance(shared[0], str)
        assert shared[0].startswith("DuplicateError")
