"""Round 32 engines: an impression log of sessions and no click at all is warned of on
Spark and Dask too, in one machine's words, and by ``ab_test``.

One machine warns (a CoverageWarning naming the clicked column) of a log whose every
impression is unclicked, the usual sign of a clicks-to-impressions join that matched
nothing; the engines' parts return per-session values only, so Spark and Dask said
nothing. Each part now hands its count of clicks beside its values, added up on the
driver. ``ab_test`` reads the same sessions and gave only its "without variance" note.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io

#: two sessions, none clicked (s1 and s2 fall in different parts)
NO_CLICK = pl.DataFrame(
    {"session_id": ["s1", "s1", "s2"], "position": [1, 2, 1], "clicked": [False] * 3}
)
SOME_CLICK = NO_CLICK.with_columns(clicked=pl.Series([False, False, True]))


#: one machine's words for NO_CLICK (2 sessions)
WORDS = (
    "column 'clicked' of the impression log has no click: every impression of its 2 "
    "session(s) (one per 'session_id') is unclicked, and is scored so (a click rate 0, "
    "every session abandoned, no click position or dwell); a log without a click most "
    "often comes from a join of the clicks onto the impressions that matched nothing (ids "
    "or dtypes that differ): check the join, or ignore this warning if no one clicked"
)


def _said(call: Any) -> tuple[Any, list[tuple[str, str]]]:
    """``call``'s result and the library's warnings it gives: (class, text) each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call()
    return got, [
        (w.category.__name__, str(w.message))
        for w in caught
        if issubclass(w.category, irm.IrmWarning)
    ]


_CASES = [("spark", NO_CLICK), ("dask", NO_CLICK), ("dask", SOME_CLICK)]


@pytest.mark.parametrize(("engine", "log"), _CASES, ids=["spark", "dask", "dask clicked"])
def test_a_log_without_a_click_is_warned_on_engines(
    engine: str, log: pl.DataFrame, request: pytest.FixtureRequest
) -> None:
    columns: dict[str, Any] = {"query_id": "session_id", "rank": "position", "per_query": True}
    one, said = _said(lambda: irm.evaluate(log, ["ctr"], **columns))
    # one machine: the warning where no impression is clicked, else none
    assert said == ([("CoverageWarning", WORDS)] if log["clicked"].sum() == 0 else [])
    evaluate, to_engine, back = engine_io(engine, request)
    values, given = _said(lambda: back(evaluate(to_engine(log), ["ctr"], partitions=3, **columns)))
    # Dask's per-query rows come in partition order (engines/dask.py): sorted to compare
    ordered = values.sort("session_id").to_dicts()
    assert (given, ordered) == (said, one.sort("session_id").to_dicts())


def test_ab_test_warns_of_a_log_without_a_click() -> None:
    log = pl.DataFrame(
        {
            "arm": ["A", "A", "A", "B", "B", "B"],
            "user_id": ["a1", "a1", "a2", "b1", "b1", "b2"],
            "session_id": ["s1", "s1", "s2", "s3", "s3", "s4"],
            "position": [1, 2, 1, 1, 2, 1],
            "clicked": [0] * 6,
        }
    )
    _, one = _said(lambda: irm.evaluate_online(log, ["ctr"]))
    got, said = _said(lambda: irm.ab_test(log, ["ctr"]))
    # one machine's warning of the same log (4 sessions, its own keys named), and the
    # test still run
    keys = "(one per 'arm', 'user_id' and 'session_id')"
    words = WORDS.replace("its 2 session", "its 4 session")
    assert one == [("CoverageWarning", words)]
    ab_words = words.replace("(one per 'session_id')", keys)
    assert (said, got["mean"].to_list()) == ([("CoverageWarning", ab_words)], [0.0])
