"""Round 22: irm.compare of an exposure measure that is NaN on a paired query (rnd,
rkl, rrd of a ranking of 10 documents or fewer; awrf of a ranking with no grouped
document) says it once.

The plan warned "'rnd' is NaN on 4 of the 4 queries ...: <why>; <fix>" and the
comparison then raised "per-query value of 'rnd' ... is NaN ...: the metric is
undefined there ...": a warning and an error for one cause. NaN cannot be paired, so
compare refuses it, as before, in one error naming the metric, the measure's own cause
and its fix, and the plan's warning of the same NaN is not given too. irm.evaluate
still warns once and returns NaN (a mean, not a paired test); a NaN on a query the
comparison does not pair (query_set='common' leaves it out) is warned, not refused.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import irm_in_process


def _run(sizes: dict[str, int], *, reverse: bool = False) -> pl.DataFrame:
    """A ranking of ``n`` documents d0, d1, ... per query (reversed: the last first)."""
    run = pl.concat(
        pl.DataFrame(
            {"query_id": [q] * n, "doc_id": [f"d{i}" for i in range(n)], "rank": range(1, n + 1)}
        )
        for q, n in sizes.items()
    )
    return run.with_columns(pl.col("rank").reverse().over("query_id")) if reverse else run


GROUPS = pl.DataFrame({"doc_id": [f"d{i}" for i in range(12)], "group": ["p", "u"] * 6})

_SEGREGATION_WHY = (
    "Yang & Stoyanovich's sum runs over the cut-offs 10, 20, ... up to the ranking's "
    "length and is divided by its largest value, so a ranking of 10 documents or fewer, "
    "or with no or only protected documents, has none (0 / 0), and the mean over the "
    "queries is NaN too (ir_measures' rND, rKL and rRD sum at every position and give 0 "
    "where the largest value is 0: another definition)"
)
_SEGREGATION_FIX = (
    "rank more than 10 documents of both groups, or leave those queries out (the short "
    "rankings: run.filter(pl.len().over('query_id') > 10))"
)
#: The same fix as the command line says it (the rows to leave out of the run files)
_SEGREGATION_CLI_FIX = (
    "rank more than 10 documents of both groups, or leave those queries out (the queries "
    "ranking 10 documents or fewer: their rows in the run files)"
)
_AWRF_WHY = (
    "none of the ranking's documents has a group in groups=, so the ranking has no group "
    "distribution to compare with the target, or (without target=) none of the query's "
    "relevant documents has one, so the target has none (wptrec drops the pages without "
    "an alignment and gives NaN too), and the mean over the queries is NaN with it"
)
_AWRF_FIX = (
    "give the run's documents and the relevant judged ones their groups in groups= (ids "
    "spelt as the run spells them), or leave those queries out"
)


def _refusal(label: str, others: str, why: str, fix: str) -> str:
    return (
        f"per-query value of {label!r} for system 'a' on query 'q1' is NaN{others}: {why}; "
        f"NaN cannot be paired: {fix}, in every system's run, or compare a metric defined "
        "there"
    )


def _caught(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """``call``'s result (or the error it raised) and the texts of every warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = call()
        except irm.InvalidValueError as error:
            got = error
    return got, [str(w.message) for w in caught]


_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d0", "d1"], "relevance": [1, 1]})
_NO_GROUP = pl.DataFrame({"doc_id": ["zz"], "group": ["p"]})
_TARGET = pl.DataFrame({"group": ["p"], "target": [1.0]})
_GROUPS_NONE = (
    "groups= holds none of the 3 documents of the run (column 'doc_id'): a document "
    "without a group counts in no group"
)

# (metric, the tables, the runs' sizes, the error, the warnings left: their beginnings)
_CASES = [
    (  # every query NaN: 5 documents each
        "rnd",
        {"groups": GROUPS},
        {"q1": 5, "q2": 5},
        _refusal("rnd", " (and on 1 other query)", _SEGREGATION_WHY, _SEGREGATION_FIX),
        [],
    ),
    (  # one query NaN (8 documents), one defined (12)
        "rkl",
        {"groups": GROUPS},
        {"q1": 8, "q2": 12},
        _refusal("rkl", "", _SEGREGATION_WHY, _SEGREGATION_FIX),
        [],
    ),
    (  # no document of the run in groups=: the coverage warning stays, not the NaN one
        "awrf",
        {"qrels": _QRELS, "groups": _NO_GROUP, "target": _TARGET},
        {"q1": 3, "q2": 3},
        _refusal("awrf", " (and on 1 other query)", _AWRF_WHY, _AWRF_FIX),
        [_GROUPS_NONE],
    ),
]


@pytest.mark.parametrize(
    ("metric", "tables", "sizes", "message", "left"), _CASES, ids=["rnd", "rkl", "awrf"]
)
def test_compare_refuses_a_nan_once(
    metric: str,
    tables: dict[str, pl.DataFrame],
    sizes: dict[str, int],
    message: str,
    left: list[str],
) -> None:
    runs = {"a": _run(sizes), "b": _run(sizes, reverse=True)}
    got, said = _caught(lambda: irm.compare(runs, metric, baseline="a", **tables))
    assert isinstance(got, irm.InvalidValueError)
    assert str(got) == message
    assert [text for text in said if " is NaN " in text] == []
    assert [text[: len(start)] for text, start in zip(said, left, strict=False)] == left
    assert len(said) == len(left)


@pytest.mark.parametrize(
    ("metric", "tables", "sizes", "message", "left"), _CASES, ids=["rnd", "rkl", "awrf"]
)
def test_evaluate_warns_once_and_gives_nan(
    metric: str,
    tables: dict[str, pl.DataFrame],
    sizes: dict[str, int],
    message: str,
    left: list[str],
) -> None:
    """The same input in irm.evaluate: one warning of the NaN (the same why and fix as
    compare's error), the mean NaN."""
    got, said = _caught(lambda: irm.evaluate(_run(sizes), [metric], **tables))
    nan = [text for text in said if " is NaN on " in text]
    assert len(nan) == 1
    why, fix = (_AWRF_WHY, _AWRF_FIX) if metric == "awrf" else (_SEGREGATION_WHY, _SEGREGATION_FIX)
    assert nan[0].startswith(f"{metric!r} is NaN on ")
    assert nan[0].endswith(f"): {why}; {fix}")
    assert got[metric].is_nan().all()


def test_nan_on_a_query_compare_leaves_out_is_warned_not_refused() -> None:
    """query_set='common': q2, which only system a ranks (5 documents: rnd NaN), is no
    paired query; the comparison of q1 and q3 stands, and the NaN is warned once."""
    runs = {"a": _run({"q1": 12, "q2": 5, "q3": 12}), "b": _run({"q1": 12, "q3": 12})}
    got, said = _caught(
        lambda: irm.compare(runs, "rnd", groups=GROUPS, baseline="a", query_set="common")
    )
    assert isinstance(got, pl.DataFrame)
    assert got["n"].to_list() == [2]
    nan = [text for text in said if " is NaN on " in text]
    assert nan == [
        "'rnd' is NaN on 1 of the 5 queries (first: system='a', query_id='q2'): "
        f"{_SEGREGATION_WHY}; {_SEGREGATION_FIX}"
    ]


def test_compare_cli_says_the_nan_once(tmp_path: Path) -> None:
    for name, reverse in (("a", False), ("b", True)):
        _run({"q1": 5, "q2": 5}, reverse=reverse).write_csv(tmp_path / f"{name}.csv")
    GROUPS.write_csv(tmp_path / "groups.csv")
    args = ["compare", "a.csv", "b.csv", "--groups", "groups.csv", "-m", "rnd"]
    done = irm_in_process(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert re.fullmatch(
        re.escape("irm: error: per-query value of 'rnd' for system 'a' on query 'q1' is NaN ")
        + r".*"
        + re.escape(f"NaN cannot be paired: {_SEGREGATION_CLI_FIX}, in every system's run, ")
        + re.escape("or compare a metric defined there"),
        lines[0],
    )
