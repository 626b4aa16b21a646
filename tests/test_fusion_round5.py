"""Fusion, round 5: Borda-normalised runs place their unretrieved candidates by the
documented tie rule, and fuse refuses options it would not read or cannot use."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.fusion.methods import get_fusion_method
from tests.fusion_data import random_qrels, random_runs

# Run A retrieves a, b, c; run B retrieves c, d. Four candidates. After Borda
# normalisation A places its unretrieved d 4th, and B its unretrieved a and b after
# its list, ordered by document id descending compared as text: b 3rd, a 4th.
#   positions:  a: A 1, B 4   b: A 2, B 3   c: A 3, B 1   d: A 4, B 2
A = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
B = pl.DataFrame({"query_id": "q1", "doc_id": ["c", "d"], "score": [2.0, 1.0]})
RUNS = {"A": A, "B": B}


def _scores(fused: pl.DataFrame) -> dict[str, float]:
    return dict(zip(fused["doc_id"], fused["score"], strict=True))


def _check(fused: pl.DataFrame, expected: dict[str, float]) -> None:
    """Every score as computed by hand, and the ranks by score (ties by id, descending)."""
    got = _scores(fused)
    assert got.keys() == expected.keys()
    for doc, value in expected.items():
        assert got[doc] == pytest.approx(value, rel=1e-12, abs=0), doc
    order = sorted(expected, key=lambda doc: (-round(expected[doc], 12), [-ord(c) for c in doc]))
    assert fused.sort("rank")["doc_id"].to_list() == order
    assert fused["rank"].sort().to_list() == list(range(1, len(expected) + 1))


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        (
            "rrf",
            {},
            {
                "a": 1 / 61 + 1 / 64,
                "b": 1 / 62 + 1 / 63,
                "c": 1 / 63 + 1 / 61,
                "d": 1 / 64 + 1 / 62,
            },
        ),
        (
            "isr",  # every candidate is in both Borda-normalised runs: n = 2
            {},
            {
                "a": 2 * (1 / 1 + 1 / 16),
                "b": 2 * (1 / 4 + 1 / 9),
                "c": 2 * (1 / 9 + 1 / 1),
                "d": 2 * (1 / 16 + 1 / 4),
            },
        ),
        (
            "log_isr",
            {},
            {
                "a": math.log(2) * (1 / 1 + 1 / 16),
                "b": math.log(2) * (1 / 4 + 1 / 9),
                "c": math.log(2) * (1 / 9 + 1 / 1),
                "d": math.log(2) * (1 / 16 + 1 / 4),
            },
        ),
        (
            "rbc",  # (1 - 0.5) * 0.5 ** (p - 1) = 0.5 ** p
            {"phi": 0.5},
            {
                "a": 0.5**1 + 0.5**4,
                "b": 0.5**2 + 0.5**3,
                "c": 0.5**3 + 0.5**1,
                "d": 0.5**4 + 0.5**2,
            },
        ),
        (
            "bordafuse",  # c - p + 1 points, c = 4, every candidate now ranked in each run
            {},
            {"a": 4 + 1, "b": 3 + 2, "c": 2 + 4, "d": 1 + 3},
        ),
        (
            "w_bordafuse",
            {"weights": [0.75, 0.25]},
            {
                "a": 0.75 * 4 + 0.25 * 1,
                "b": 0.75 * 3 + 0.25 * 2,
                "c": 0.75 * 2 + 0.25 * 4,
                "d": 0.75 * 1 + 0.25 * 3,
            },
        ),
        (
            # A: a > b > c > d, B: c > d > b > a. Only c-d is won by both runs (c);
            # every other pair is a draw, half a win each: c 2.5, a 1.5, b 1.5, d 0.5
            # wins; a and b tie, broken by id descending: c 4, b 3, a 2, d 1
            "condorcet",
            {},
            {"c": 4.0, "b": 3.0, "a": 2.0, "d": 1.0},
        ),
        (
            "w_condorcet",
            {"weights": [0.5, 0.5]},
            {"c": 4.0, "b": 3.0, "a": 2.0, "d": 1.0},
        ),
    ],
)
def test_borda_places_unretrieved_candidates_by_id_descending_as_text(
    method: str, params: dict[str, Any], expected: dict[str, float]
) -> None:
    fused = irm.fuse(RUNS, method, norm="borda", **params)
    _check(fused, expected)
    # the same in one long frame with system=, lazily, and in buckets
    long = pl.concat([A.with_columns(run=pl.lit("A")), B.with_columns(run=pl.lit("B"))])
    _check(irm.fuse(long, method, norm="borda", system="run", **params), expected)
    lazy = irm.fuse({k: v.lazy() for k, v in RUNS.items()}, method, norm="borda", **params)
    assert isinstance(lazy, pl.LazyFrame)
    _check(lazy.collect(), expected)
    _check(irm.fuse(RUNS, method, norm="borda", buckets=2, **params), expected)


def test_borda_integer_ids_compared_as_text() -> None:
    # B leaves 10, 9 and 100 unretrieved: as text, descending, "9" > "100" > "10", so
    # they come 3rd, 4th and 5th (not 9, 10, 100 by number, nor 100, 10, 9)
    a = pl.DataFrame({"query_id": 1, "doc_id": [10, 9, 100, 7], "score": [4.0, 3.0, 2.0, 1.0]})
    b = pl.DataFrame({"query_id": 1, "doc_id": [7, 5], "score": [2.0, 1.0]})
    fused = irm.fuse({"a": a, "b": b}, "rrf", norm="borda")
    assert fused.schema["doc_id"] == pl.Int64
    expected = {
        10: 1 / 61 + 1 / 65,
        9: 1 / 62 + 1 / 63,
        100: 1 / 63 + 1 / 64,
        7: 1 / 64 + 1 / 61,
        5: 1 / 65 + 1 / 62,  # A's unretrieved candidate, 5th in A
    }
    got = dict(zip(fused["doc_id"], fused["score"], strict=True))
    assert got.keys() == expected.keys()
    for doc, value in expected.items():
        assert got[doc] == pytest.approx(value, rel=1e-12, abs=0), doc
    assert fused["doc_id"].to_list() == [7, 9, 10, 5, 100]
    assert fused["rank"].to_list() == [1, 2, 3, 4, 5]
    # bordafuse: c = 5 points for the top; B's 9, 100, 10 get 3, 2, 1
    borda = irm.fuse({"a": a, "b": b}, "bordafuse", norm="borda")
    assert dict(zip(borda["doc_id"], borda["score"], strict=True)) == {
        10: 5.0 + 1.0,
        9: 4.0 + 3.0,
        100: 3.0 + 2.0,
        7: 2.0 + 5.0,
        5: 1.0 + 4.0,
    }
    # without norm=, bordafuse gives each unretrieved candidate the average of the
    # remaining points, whatever its id: B's three get (5 - 2 + 1) / 2 = 2, A's one 1
    plain = irm.fuse({"a": a, "b": b}, "bordafuse")
    assert dict(zip(plain["doc_id"], plain["score"], strict=True)) == {
        10: 5.0 + 2.0,
        9: 4.0 + 2.0,
        100: 3.0 + 2.0,
        7: 2.0 + 5.0,
        5: 1.0 + 4.0,
    }


def test_spill_dir_without_buckets_is_refused(tmp_path: Path) -> None:
    message = (
        f"spill_dir={str(tmp_path)!r} is the folder of the out-of-core buckets, and "
        "buckets=None fuses in one plan, which writes none: drop spill_dir=, or pass "
        "buckets=N, 'auto' or 'auto-memory'"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse(RUNS, "rrf", spill_dir=str(tmp_path))
    # with buckets, the folder is used
    spilled = irm.fuse(RUNS, "rrf", buckets=2, spill_dir=str(tmp_path))
    assert spilled.equals(irm.fuse(RUNS, "rrf"))


#: A spill_dir of no path type (typed Any: the point is to pass what the signature refuses).
NOT_A_PATH: Any = 123


def test_spill_dir_that_is_not_a_path_is_refused() -> None:
    message = (
        "spill_dir=123 is not a folder's path: pass the path of an existing folder as a "
        "str or pathlib.Path, e.g. spill_dir='/tmp', or spill_dir=None for the system's "
        "temporary folder"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse(RUNS, "rrf", buckets=2, spill_dir=NOT_A_PATH)
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(A, "ndcg", qrels=qrels, buckets=2, spill_dir=NOT_A_PATH)


@pytest.mark.parametrize("sort", ["yes", 1, None])
def test_sort_must_be_a_bool(sort: Any) -> None:
    message = (
        f"sort must be True or False, got {sort!r}: pass sort=True to sort the fused run "
        "by query and rank, or sort=False to leave its rows unsorted"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse(RUNS, "rrf", sort=sort)


@pytest.mark.parametrize("weights", ["0.5,0.5", b"05", 0.5])
def test_weights_must_be_a_list_or_dict_of_numbers(weights: Any) -> None:
    message = (
        f"weights={weights!r} is not a list or dict of numbers; weights must be a list of "
        "numbers, one per run in the runs' order ('A', 'B'), e.g. weights=[0.5, 0.5], or a "
        "dict of run name to number, e.g. weights={'A': 0.5, 'B': 0.5}"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse(RUNS, "wsum", weights=weights)


#: Every method that reads positions alone, with a normalisation that keeps each
#: run's order (each of them in turn), and the parameters it needs.
_POSITIONAL = [
    ("rrf", "min-max", {}),
    ("isr", "max", {}),
    ("log_isr", "sum", {}),
    ("logn_isr", "zmuv", {}),
    ("rbc", "rank", {"phi": 0.8}),
    ("bordafuse", "min-max", {}),
    ("w_bordafuse", "max", {}),
    ("condorcet", "sum", {}),
    ("w_condorcet", "zmuv", {}),
    ("probfuse", "rank", {}),
    ("slidefuse", "min-max", {"w": 1}),
    ("posfuse", "max", {}),
    ("bayesfuse", "sum", {}),
    ("mapfuse", "zmuv", {}),
    ("reciprocal_rank", "min_max", {}),  # an alias of each: named as given
]


def _norm_message(norm: str, name: str, canonical: str) -> str:
    return (
        f"norm={norm!r} changes nothing in {name}, which reads each run's positions and "
        f"not its scores: {canonical!r} keeps every run's order, so the fusion would be "
        "the one of norm=None. Drop norm=, or pass a normalisation that changes the "
        "positions ('min-max-inverted' or 'borda'), or use a method that reads scores "
        "(e.g. 'sum')"
    )


@pytest.mark.parametrize(("method", "norm", "params"), _POSITIONAL)
def test_norm_that_keeps_positions_is_refused_by_a_positional_method(
    method: str, norm: str, params: dict[str, Any]
) -> None:
    name = get_fusion_method(method).name
    canonical = "min-max" if norm == "min_max" else norm
    message = _norm_message(norm, name, canonical)
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.fuse(RUNS, method, norm=norm, **params)


def test_norms_that_change_positions_are_accepted_and_read() -> None:
    # min-max-inverted reverses each run: A is c, b, a and B is d, c
    _check(
        irm.fuse(RUNS, "rrf", norm="min-max-inverted"),
        {"a": 1 / 63, "b": 1 / 62, "c": 1 / 61 + 1 / 62, "d": 1 / 61},
    )
    # segfuse and the score methods read scores: every normalisation is theirs
    for norm in ("min-max", "max", "sum", "zmuv", "rank"):
        irm.fuse(RUNS, "sum", norm=norm)
    message = _norm_message("rank", "rrf", "rank")
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.fuse(RUNS, "rrf", norm="rank")


def test_fit_fusion_refuses_the_norm_fuse_refuses() -> None:
    # a table fitted with norm='min-max' for posfuse could only be used by a fuse call
    # that refuses that norm (it reads positions alone)
    runs, qrels = random_runs(3, n_queries=4), random_qrels(4, n_queries=4)
    with pytest.raises(MetricParameterError, match=r"^norm='min-max' changes nothing in posfuse"):
        irm.fit_fusion(runs, "posfuse", qrels=qrels, norm="min-max")


def test_optimize_fusion_refuses_a_norm_fuse_refuses_and_skips_its_default() -> None:
    runs, qrels = random_runs(3, n_queries=6), random_qrels(4, n_queries=6)
    # the default min-max (ranx's) keeps each run's order: rrf's search is norm=None's
    default = irm.optimize_fusion(runs, "ndcg@10", qrels=qrels, method="rrf", return_grid=True)
    none = irm.optimize_fusion(
        runs, "ndcg@10", qrels=qrels, method="rrf", norm=None, return_grid=True
    )
    assert default[0] == none[0]
    assert default[1].equals(none[1])
    with pytest.raises(MetricParameterError, match=r"^norm='zmuv' changes nothing in rrf"):
        irm.optimize_fusion(runs, "ndcg@10", qrels=qrels, method="rrf", norm="zmuv")
