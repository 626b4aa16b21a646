"""A log column named for two roles, or a role given anything but one name, is refused
by name on every online entry point (irm.ab_test, irm.evaluate_online,
irm.interleaving_test).

``ab_test(log, 'session_ctr', session_id='position')`` grouped the impressions by their
position and gave another mean in silence (0.25 where the sessions give 0.5);
``evaluate_online`` refused it with a duplicate-position error naming neither option;
``ab_test(log, 'ctr', clicked=pl.col('clicked'))`` raised Python's ``TypeError:
unhashable type: 'Expr'``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

LOG = pl.DataFrame(
    {
        "user_id": ["u1", "u1", "u2", "u3", "u4", "u4"],
        "arm": ["A", "A", "A", "B", "B", "B"],
        "session_id": ["s1", "s1", "s2", "s3", "s4", "s4"],
        "team": ["x", "y", "x", "y", "x", "y"],
        "position": [1, 2, 1, 1, 1, 2],
        "clicked": [True, False, False, True, True, False],
    }
)

CALLS: dict[str, Callable[..., Any]] = {
    "ab_test": lambda **kw: irm.ab_test(LOG, ["session_ctr"], **kw),
    "evaluate_online": lambda **kw: irm.evaluate_online(LOG, ["session_ctr"], **kw),
    "interleaving_test": lambda **kw: irm.interleaving_test(LOG, **kw),
}
SAME = (
    "session_id='position' and position='position' name the same column; each needs its "
    "own column: pass position= with the name of the position column"
)
EXPR = (
    "clicked must be a column name (a str), got a polars expression; pass the column's "
    "name, e.g. clicked='clicked'; compute a column first with .with_columns"
)


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize(
    ("options", "message"),
    [({"session_id": "position"}, SAME), ({"clicked": pl.col("clicked")}, EXPR)],
    ids=["two roles", "an expression"],
)
def test_roles_are_refused_alike(call: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        CALLS[call](**options)


def test_ab_test_refuses_a_list_for_the_arm() -> None:
    message = "arm must be a column name (a str), got ['arm']; pass one name, e.g. arm='arm'"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.ab_test(LOG, ["ctr"], arm=["arm"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"query_id": "position", "rank": "position"},
            "query_id='position' and rank='position' name the same column; each needs its "
            "own column: pass rank= with the name of the rank column",
        ),
        (
            {"doc_id": "clicked", "relevance": "clicked"},
            "doc_id='clicked' and relevance='clicked' name the same column; each needs its "
            "own column: pass relevance= with the name of the relevance column",
        ),
    ],
)
def test_evaluate_refuses_a_value_column_named_as_an_id(
    options: dict[str, str], message: str
) -> None:
    """A duplicate-position error (suggesting .unique(['position', 'position'])) named
    neither option."""
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(LOG, ["ndcg@10"], **options)  # type: ignore[arg-type]
