"""Exposure measures, round 15: a ``target=`` row with a null group (one ``group``
column, an intersectional dimension, or a per-query target's query id) gave its share
to no group: a single target warned that ids do not line up (``first: None``) and
scored against a target no ranking can meet; a per-query target's null query id was
dropped in silence. Each is refused, naming the columns."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

QRELS = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": 1})
RUN = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3]})
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c"], "group": ["big", "big", "small"]})
PEOPLE = pl.DataFrame(
    {"doc_id": ["a", "b", "c"], "team": ["big", "big", "small"], "site": ["x", "y", "x"]}
)


def _message(columns: list[str], rows: int = 1) -> str:
    named = [repr(c) for c in columns]
    return (
        f"the target (target=) has {rows} row(s) with a null {' or '.join(named)}: each row "
        "is one group's share of a target distribution, and a null names none; fill or "
        f"drop them, e.g. target.drop_nulls([{', '.join(named)}])"
    )


@pytest.mark.parametrize(
    ("groups", "target", "message"),
    [
        (  # was a CoverageWarning (first: None) and awrf 0.9631
            GROUPS,
            pl.DataFrame({"group": ["big", "small", None], "target": [0.5, 0.5, 0.0]}),
            _message(["group"]),
        ),
        (
            GROUPS,
            pl.DataFrame({"group": ["big", None], "target": [0.5, 0.5]}),
            _message(["group"]),
        ),
        (  # the null query's rows were dropped in silence
            GROUPS,
            pl.DataFrame(
                {
                    "query_id": ["q", "q", None],
                    "group": ["big", "small", "big"],
                    "target": [0.5, 0.5, 1.0],
                }
            ),
            _message(["query_id", "group"]),
        ),
        (
            GROUPS,
            pl.DataFrame({"query_id": ["q", "q"], "group": ["big", None], "target": [0.5, 0.5]}),
            _message(["query_id", "group"]),
        ),
        (  # an intersectional cell with a null dimension
            PEOPLE,
            pl.DataFrame(
                {
                    "team": ["big", "big", "small", None, None],
                    "site": ["x", "y", "x", "y", None],
                    "target": [0.25] * 4 + [0.0],
                }
            ),
            _message(["team", "site"], rows=2),
        ),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_a_null_group_in_the_target_is_refused(
    groups: pl.DataFrame, target: pl.DataFrame, message: str, lazy: bool
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(
            RUN.lazy() if lazy else RUN,
            ["awrf"],
            qrels=QRELS.lazy() if lazy else QRELS,
            groups=groups.lazy() if lazy else groups,
            target=target.lazy() if lazy else target,
        ).lazy().collect()


def test_a_target_without_nulls_still_scores() -> None:
    even = pl.DataFrame({"group": ["big", "small"], "target": [0.5, 0.5]})
    out = irm.evaluate(RUN, ["awrf"], qrels=QRELS, groups=GROUPS, target=even)
    assert out["awrf"][0] == pytest.approx(0.9630996655395252, abs=1e-12)
