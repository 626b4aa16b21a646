"""Group keys listed twice, or naming a column an evaluation reads as its data, are
refused with the library's own error at every door that takes keys: ``evaluate`` (click
logs, prediction tables, runs), ``evaluate_online``, ``ab_test``, ``interleaving_test``
and the ``irm ab`` command; never polars' "duplicate output name", never a value
computed over keys that split each query."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

from .helpers import irm_in_process

#: a DataFrame or a LazyFrame (the doors' overloads take one or the other)
Frame = Any


def _log() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "arm": ["A"] * 8 + ["B"] * 8,
            "user_id": [f"u{i // 2}" for i in range(16)],
            "session_id": [f"s{i // 2}" for i in range(16)],
            "position": [1, 2] * 8,
            "clicked": [True, False, False, True, True, True, False, False] * 2,
            "day": (["d1"] * 4 + ["d2"] * 4) * 2,
        }
    )


def _interleaved() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "session_id": ["s1", "s1", "s2", "s2", "s3", "s3"],
            "position": [1, 2] * 3,
            "team": ["A", "B"] * 3,
            "clicked": [1, 0, 0, 1, 1, 0],
            "day": ["d1"] * 6,
        }
    )


def _predictions() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "label": [1, 0, 1, 0] * 2,
            "prediction": [0.9, 0.1, 0.2, 0.8] * 2,
            "day": ["d1"] * 4 + ["d2"] * 4,
            "s": ["x", "x", "y", "y"] * 2,
        }
    )


def _run() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["a", "b", "c", "d"],
            "score": [2.0, 1.0, 2.0, 1.0],
            "relevance": [1, 0, 1, 0],
            "day": ["d1", "d1", "d2", "d2"],
        }
    )


_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "d"], "relevance": [1, 1]})
_TWICE = "by lists 'day' twice; list each key once, e.g. by=['day']"
_VARIES = "; a key holds one value per query (session), and {key!r} varies within one: "
_SEGMENT = "; a segment key holds one value per session, and {key!r} varies within one: "


def _role(name: str, key: str, role: str, metric: str, example: str = "by='day'") -> str:
    return (
        f"{name}=[{key!r}] names {key!r}, which is the column of {role} (read by metric "
        f"{metric!r})" + _VARIES.format(key=key) + f"group by another column, e.g. {example}"
    )


def _segment(key: str, role: str) -> str:
    return (
        f"by=[{key!r}] names {key!r}, which is the column of {role}"
        + _SEGMENT.format(key=key)
        + "segment by another column, e.g. by='day'"
    )


_BAD_BY = "by must be a column name or a list of column names, got {!r}; pass e.g. by='day' or "

CASES: list[tuple[str, Callable[[], pl.DataFrame], Callable[[Frame], Any], str]] = [
    # -- keys listed twice
    ("ab twice", _log, lambda f: irm.ab_test(f, "ctr", by=["day", "day"], unit="user_id"), _TWICE),
    ("interleaving twice", _interleaved, lambda f: irm.interleaving_test(f, by=["day", "day"]),
     _TWICE),
    ("online twice", _log, lambda f: irm.evaluate_online(f, "ctr", by=["day", "day"]), _TWICE),
    ("prediction twice", _predictions, lambda f: irm.evaluate(f, ["auc"], by=["day", "day"]),
     _TWICE),
    ("prediction systems twice", _predictions,
     lambda f: irm.evaluate(f, ["auc"], systems=["s", "s"]),
     "systems lists 's' twice; list each key once, e.g. systems=['s']"),
    ("offline twice", _run,
     lambda f: irm.evaluate(f, ["ndcg@10"], qrels=_QRELS, by=["day", "day"]), _TWICE),
    ("offline twice among others", _run,
     lambda f: irm.evaluate(f, ["ndcg@10"], qrels=_QRELS, by=["day", "s", "day"]),
     "by lists 'day' twice; list each key once, e.g. by=['day', 's']"),
    # -- keys naming a column the evaluation reads as its data
    ("ab by position", _log, lambda f: irm.ab_test(f, "ctr", by="position", unit="user_id"),
     _segment("position", "the impressions' positions")),
    ("ab by clicked", _log, lambda f: irm.ab_test(f, "ctr", by=["clicked"], unit="user_id"),
     _segment("clicked", "the clicks")),
    ("interleaving by position", _interleaved,
     lambda f: irm.interleaving_test(f, by="position"),
     _segment("position", "the impressions' positions")),
    ("interleaving by clicked", _interleaved, lambda f: irm.interleaving_test(f, by="clicked"),
     _segment("clicked", "the clicks")),
    ("online by position", _log, lambda f: irm.evaluate_online(f, "ctr", by="position"),
     _role("by", "position", "the impressions' positions", "ctr")),
    ("online by clicked", _log, lambda f: irm.evaluate_online(f, "ctr", by="clicked"),
     _role("by", "clicked", "the clicks", "ctr")),
    ("evaluate log by position", _log,
     lambda f: irm.evaluate(f, ["ctr"], by="position", query_id="session_id", rank="position"),
     _role("by", "position", "the impressions' positions", "ctr")),
    ("prediction by label", _predictions, lambda f: irm.evaluate(f, ["auc"], by="label"),
     _role("by", "label", "the labels", "auc")),
    ("prediction by prediction", _predictions,
     lambda f: irm.evaluate(f, ["auc"], by=["prediction"]),
     _role("by", "prediction", "the predictions", "auc")),
    ("prediction systems=label", _predictions,
     lambda f: irm.evaluate(f, ["auc"], systems="label"),
     _role("systems", "label", "the labels", "auc", "systems='system'")),
    ("offline by relevance", _run,
     lambda f: irm.evaluate(f, ["ndcg@10"], qrels=_QRELS, by="relevance"),
     _role("by", "relevance", "the relevance labels", "ndcg@10")),
    # -- keys that are not names
    ("ab by a number", _log, lambda f: irm.ab_test(f, "ctr", by=5, unit="user_id"),  # type: ignore[arg-type]
     _BAD_BY.format(5)),
    ("interleaving by a list of numbers", _interleaved,
     lambda f: irm.interleaving_test(f, by=[5]),  # type: ignore[list-item]
     _BAD_BY.format([5])),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("make", "call", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_bad_key_is_refused_with_our_error(
    make: Callable[[], pl.DataFrame], call: Callable[[Frame], Any], message: str, lazy: bool
) -> None:
    frame: Frame = make().lazy() if lazy else make()
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _to_the_end(call, frame)


def _to_the_end(call: Callable[[Frame], Any], frame: Frame) -> object:
    """The call's result, a lazy one collected (a refusal may come at either step)."""
    out = call(frame)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def test_a_segment_key_still_segments() -> None:
    out = irm.ab_test(_log(), "ctr", by="day", unit="user_id")
    assert out["day"].to_list() == ["d1", "d2"]
    out = irm.interleaving_test(_interleaved(), by=["day"])
    assert out["day"].to_list() == ["d1"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--by", "day", "--by", "day"),
            "by lists 'day' twice; list each key once, e.g. --by day",
        ),
        (
            ("--by", "clicked"),
            "--by clicked names 'clicked', which is the column of the clicks; a segment key "
            "holds one value per session, and 'clicked' varies within one: segment by another "
            "column, e.g. --by day",
        ),
    ],
    ids=["twice", "clicked"],
)
def test_cli_ab_refuses_a_bad_key(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    _log().write_csv(tmp_path / "log.csv")
    done = irm_in_process("ab", "log.csv", "-m", "ctr", "--unit", "user_id", *args, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, f"irm: error: log.csv: {message}\n")
