"""The refusals of a ``by=`` key of the run alone, round 12.

1. One machine's refusal (``ground.validate.raise_unplaced``) gave as its example the
   groups the run lists a judged query under, one row per system with ``systems=``:
   ``segment='s', segment='s'``. Each group is now named once.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

from polars_irmetrics.errors import QuerySetError

from .conftest import Evaluate

pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")

# q1 under segment 's', q2 under 't', q3 judged and retrieved by no segment
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["a", "b", "c"],
        "score": [2.0, 1.0, 1.0],
        "segment": ["s", "s", "t"],
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "c", "d"], "relevance": [1, 1, 1]}
)
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})

DROP = "; or pass unretrieved='drop' to score each group on the queries it retrieved"


def _one_machine(example: str, *, drop: bool) -> str:
    """One machine's refusal of the three judged queries some segment lacks."""
    return (
        "by key 'segment' is in the run but not in the judgments: the judgments do not say "
        "which 'segment' each judged query belongs to, so 3 judged queries that some of "
        "the 2 groups did not retrieve cannot be placed (e.g. query 'q1': the run lists it "
        f"under {example}, and the judgments cannot tell whether it belongs to the other "
        "groups too). If 'segment' is an attribute of the query (day, market, segment), "
        "give each judged query its 'segment': with queries= (a table of query ids and "
        "'segment', e.g. queries=run.select('query_id', 'segment').unique()), or in a "
        "'segment' column of the judgments; if it names systems or runs (each scored on "
        "every judged query), pass systems='segment' instead of by=" + (DROP if drop else "")
    )


# systems A and B both list q1 under segment 's'
SAME = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q1"],
        "doc_id": ["a", "b", "c", "a"],
        "score": [2.0, 1.0, 1.0, 1.0],
        "segment": ["s", "s", "t", "s"],
        "system": ["A", "A", "A", "B"],
    }
)
# A lists q1 under 's', B under 't'
APART = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q1"],
        "doc_id": ["a", "c", "a"],
        "score": [2.0, 1.0, 1.0],
        "segment": ["s", "t", "t"],
        "system": ["A", "A", "B"],
    }
)

# (id, run, metrics, message)
ONE_MACHINE: list[tuple[str, pl.DataFrame, list[str], str]] = [
    ("one group, map", SAME, ["map"], _one_machine("segment='s'", drop=True)),
    ("one group, ee_loss", SAME, ["ee_loss"], _one_machine("segment='s'", drop=False)),
    ("two groups, map", APART, ["map"], _one_machine("segment='s', segment='t'", drop=True)),
    (
        "two groups, ee_loss",
        APART,
        ["ee_loss"],
        _one_machine("segment='s', segment='t'", drop=False),
    ),
    ("no systems=", RUN, ["map"], _one_machine("segment='s'", drop=True)),
]


@pytest.mark.parametrize(
    ("run", "metrics", "message"),
    [case[1:] for case in ONE_MACHINE],
    ids=[case[0] for case in ONE_MACHINE],
)
def test_one_machine_names_each_group_once(
    evaluate: Evaluate, run: pl.DataFrame, metrics: list[str], message: str
) -> None:
    options: dict[str, Any] = {"by": "segment"}
    if "system" in run.columns:
        options["systems"] = "system"
    with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
        evaluate(run, metrics, qrels=QRELS, **options)
