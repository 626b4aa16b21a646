"""Every door is ``irm.evaluate``: the same input gives the same numbers, or the same
refusal, through each entry point (``evaluate_online``, ``beyond_accuracy``,
``evaluate_jg``, ``evaluate_prefs``) and through ``irm.evaluate`` with the door's own
keywords. Each row names a door call and the ``evaluate`` call it translates to."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, IrmError, MetricParameterError

LOG = pl.DataFrame(
    {
        "session_id": ["s1"] * 4 + ["s2"] * 4,
        "position": [1, 2, 3, 4] * 2,
        "clicked": [False, True, True, False] + [False] * 4,
        "arm": ["a"] * 4 + ["b"] * 4,
    }
)
RECS = pl.DataFrame({"user_id": [1, 1, 2], "item_id": ["a", "z", "a"], "rank": [1, 2, 1]})
HISTORY = pl.DataFrame({"user_id": [1, 2, 2, 3], "item_id": ["c", "a", "b", "a"]})
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["d1", "d2", "d1"],
        "score": [2.0, 1.0, 1.0],
        "day": [1, 1, 2],
    }
)
QRELS_JG = pl.DataFrame(
    {
        "query_id": ["q1"] * 4 + ["q2"],
        "jg": ["alice", "alice", "bob", "bob", "alice"],
        "doc_id": ["d1", "d2", "d1", "d2", "d1"],
        "relevance": [1, 0, 0, 1, 1],
    }
)
PREFS = pl.DataFrame(
    {
        "query_id": ["q1"] * 3,
        "jg": ["u"] * 3,
        "jsg": ["s"] * 3,
        "doc_id": ["d1", "d2", "d3"],
        "rel_level": [2.0, 1.0, 0.0],
    }
)

Call = Callable[[Callable[[pl.DataFrame], Any]], Any]
ONLINE = {"query_id": "session_id", "rank": "position"}
RECSYS = {"query_id": "user_id", "doc_id": "item_id"}

#: (case, the door's call, the same evaluation through irm.evaluate); ``kind`` makes the
#: table a DataFrame or a LazyFrame.
SAME: list[tuple[str, Call, Call]] = [
    (
        "online means",
        lambda kind: irm.evaluate_online(kind(LOG), ["ctr@4", "click_mrr", "abandonment"]),
        lambda kind: irm.evaluate(kind(LOG), ["ctr@4", "click_mrr", "abandonment"], **ONLINE),
    ),
    (
        "online per session and segment",
        lambda kind: irm.evaluate_online(kind(LOG), ["ctr"], by="arm", per_session=True),
        lambda kind: irm.evaluate(kind(LOG), ["ctr"], by="arm", per_query=True, **ONLINE),
    ),
    (
        "online out of core",
        lambda kind: irm.evaluate_online(kind(LOG), ["ctr"], buckets=2),
        lambda kind: irm.evaluate(kind(LOG), ["ctr"], buckets=2, **ONLINE),
    ),
    (
        "online auto-memory is one plan",
        lambda kind: irm.evaluate_online(kind(LOG), ["ctr"], buckets="auto-memory"),
        lambda kind: irm.evaluate(kind(LOG), ["ctr"], buckets=None, **ONLINE),
    ),
    (
        "recsys, a cold item dropped",
        lambda kind: irm.beyond_accuracy(
            kind(RECS), ["coverage", "novelty"], interactions=HISTORY, unseen_items="drop"
        ),
        lambda kind: irm.evaluate(
            kind(RECS),
            ["coverage", "novelty"],
            interactions=HISTORY,
            unseen_items="drop",
            **RECSYS,
        ),
    ),
    (
        "recsys, Recommenders' convention",
        lambda kind: irm.beyond_accuracy(
            kind(RECS), ["novelty"], interactions=HISTORY, unseen_items="recommenders"
        ),
        lambda kind: irm.evaluate(
            kind(RECS),
            ["novelty"],
            interactions=HISTORY,
            unseen_items="recommenders",
            **RECSYS,
        ),
    ),
    (
        "judgment groups per query",
        lambda kind: irm.evaluate_jg(kind(RUN), ["map_avgjg", "P_avgjg_1"], qrels_jg=QRELS_JG),
        lambda kind: irm.evaluate(
            kind(RUN),
            ["map_avgjg", "P_avgjg_1"],
            qrels_jg=QRELS_JG,
            per_query=True,
            unretrieved="drop",
        ),
    ),
    (
        "judgment groups, means",
        lambda kind: irm.evaluate_jg(kind(RUN), "map_avgjg", qrels_jg=QRELS_JG, per_query=False),
        lambda kind: irm.evaluate(kind(RUN), "map_avgjg", qrels_jg=QRELS_JG, unretrieved="drop"),
    ),
    (
        "preferences",
        lambda kind: irm.evaluate_prefs(kind(RUN), ["prefs_simp"], prefs=PREFS),
        lambda kind: irm.evaluate(
            kind(RUN), ["prefs_simp"], prefs=PREFS, per_query=True, unretrieved="drop"
        ),
    ),
]

#: (case, the door's call, the same evaluation through irm.evaluate, error, message).
REFUSED: list[tuple[str, Call, Call, type[IrmError], str]] = [
    (
        "judgment groups by a key",
        lambda kind: irm.evaluate_jg(kind(RUN), "map_avgjg", qrels_jg=QRELS_JG, by="day"),
        lambda kind: irm.evaluate(kind(RUN), "map_avgjg", qrels_jg=QRELS_JG, by="day"),
        InvalidValueError,
        "by= and systems= are not available for the preference and judgment-group "
        "measures; evaluate each group's rows in a call of its own",
    ),
    (
        "online bad buckets",
        lambda kind: irm.evaluate_online(kind(LOG), ["ctr"], buckets=0),
        lambda kind: irm.evaluate(kind(LOG), ["ctr"], buckets=0, **ONLINE),
        InvalidValueError,
        "buckets must be a positive integer, 'auto', 'auto-memory' or None, got 0",
    ),
    (
        "online by the session id",
        lambda kind: irm.evaluate_online(kind(LOG), ["ctr"], by="session_id"),
        lambda kind: irm.evaluate(kind(LOG), ["ctr"], by="session_id", **ONLINE),
        InvalidValueError,
        "by=['session_id'] names 'session_id', which is already the query or document id; "
        "list only extra keys such as 'system' or 'day'",
    ),
]


def _kind(frame_kind: str) -> Callable[[pl.DataFrame], Any]:
    return (lambda f: f.lazy()) if frame_kind == "LazyFrame" else (lambda f: f)


def _collected(out: Any, frame_kind: str) -> pl.DataFrame:
    assert isinstance(out, pl.LazyFrame if frame_kind == "LazyFrame" else pl.DataFrame)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize(("case", "door", "evaluate"), SAME, ids=[c[0] for c in SAME])
def test_every_door_gives_the_same_numbers(
    frame_kind: str, case: str, door: Call, evaluate: Call
) -> None:
    kind = _kind(frame_kind)
    expected = _collected(evaluate(kind), frame_kind)
    assert expected.height > 0, case
    assert _collected(door(kind), frame_kind).equals(expected), case


@pytest.mark.parametrize(
    ("case", "door", "evaluate", "error", "message"),
    REFUSED,
    ids=[c[0] for c in REFUSED],
)
def test_every_door_gives_the_same_refusal(
    frame_kind: str, case: str, door: Call, evaluate: Call, error: type[IrmError], message: str
) -> None:
    kind = _kind(frame_kind)
    for call in (door, evaluate):
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            _collected(call(kind), frame_kind)


def test_a_dropped_cold_item_is_left_out_of_beyond_accuracy_only() -> None:
    """``unseen_items='drop'``: item ``z`` (no interactions) is left out, as if not
    recommended: coverage is {a} of the catalogue {a, b, c}, 1/3; novelty is the mean of
    ``-log2(2/4)`` over the two recommendations of ``a``, 1."""
    out = irm.beyond_accuracy(
        RECS, ["coverage", "novelty"], interactions=HISTORY, unseen_items="drop"
    )
    assert out.rows() == [(1 / 3, 1.0)]


def test_a_door_names_its_own_keywords() -> None:
    """The door's messages name the entry point called and its table."""
    with pytest.raises(
        MetricParameterError,
        match=re.escape("metric 'novelty' reads the interaction history"),
    ) as info:
        irm.beyond_accuracy(RECS, ["novelty"])
    assert str(info.value).endswith("pass interactions=... to irm.beyond_accuracy")
