"""Rank agreement, round 17: ``tau_ap`` where either side ties every shared document.

Equal scores are one tie group: there is no order to compare, and ``kendall_tau`` is
null there (scipy's τ-b is NaN). ``tau_ap`` read the positions of the tie-break order
instead (``doc_id`` descending as text), so a run scoring its documents alike read as
exactly reversed (-1.0) against a reference ordered ``a > b > c`` and as identical
(+1.0) against ``c > b > a``: a number the data cannot support, decided by the ids'
spelling. It is null now, per query and left out of the mean, as
:func:`~polars_irmetrics.system_agreement`'s τ_AP of means all equal is. A side with
some order (a partial tie) keeps its value, the ties broken by id as documented.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm


def _ranking(docs: str, scores: list[float], query: str = "q") -> pl.DataFrame:
    return pl.DataFrame({"query_id": [query] * len(docs), "doc_id": list(docs), "score": scores})


TIED = [1.0, 1.0, 1.0]
ORDERED = [3.0, 2.0, 1.0]

CASES: list[tuple[str, pl.DataFrame, pl.DataFrame, str, float | None]] = [
    # tie-break c b a against a b c: -1.0 before
    ("run tied, ids reversed", _ranking("abc", TIED), _ranking("abc", ORDERED), "tau_ap", None),
    # tie-break c b a against c b a: +1.0 before
    ("run tied, ids in order", _ranking("abc", TIED), _ranking("cba", ORDERED), "tau_ap", None),
    # the truth tied: its tie-break c b a is no order either (-1.0 before)
    ("reference tied", _ranking("abc", ORDERED), _ranking("abc", TIED), "tau_ap", None),
    ("both tied", _ranking("abc", TIED), _ranking("abc", TIED), "tau_ap", None),
    # kendall_tau was already null on each
    ("kendall_tau alike", _ranking("abc", TIED), _ranking("abc", ORDERED), "kendall_tau", None),
    # the run's top 2 tied (b, c), its third apart; the reference b > c > a: @2 both
    # sides hold b and c, which the run ties (-1.0 before: its tie-break is c b)
    ("tied top 2 at @2", _ranking("abc", [1.0, 2.0, 2.0]), _ranking("bca", ORDERED), "tau_ap@2",
     None),
    # @3 the run has an order: c b a (by score, then id); truth b c a: b has c above it,
    # below b in the truth (0/1), a has c and b above it, both above a there (2/2):
    # 2/2 * (0 + 1) - 1 = 0
    ("tied top 2 at @3", _ranking("abc", [1.0, 2.0, 2.0]), _ranking("bca", ORDERED), "tau_ap@3",
     0.0),
    # a partial tie keeps its value: run a (2), then b and c tied, broken c b by id;
    # truth a b c: c has a above it (1/1), b has a above it but not c (1/2):
    # 2/2 * (1 + 1/2) - 1 = 0.5
    ("partial tie", _ranking("abc", [2.0, 1.0, 1.0]), _ranking("abc", ORDERED), "tau_ap", 0.5),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("name", "run", "reference", "metric", "want"), CASES, ids=[c[0] for c in CASES]
)
def test_a_side_tied_throughout_has_no_tau_ap(
    name: str,
    run: pl.DataFrame,
    reference: pl.DataFrame,
    metric: str,
    want: float | None,
    lazy: bool,
) -> None:
    given: Any = (run.lazy(), reference.lazy()) if lazy else (run, reference)
    out = irm.evaluate(given[0], [metric], reference=given[1], per_query=True)
    out = out.collect() if lazy else out
    got = out[metric].item()
    if want is None:
        assert got is None
    else:
        assert got == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("options", [{}, {"buckets": 2}], ids=["one_plan", "buckets"])
def test_a_tied_query_is_left_out_of_the_mean(options: dict[str, Any]) -> None:
    # q1 tied (its tie-break c b a is the reference's c b a: +1.0 before); q2 reversed
    run = pl.concat([_ranking("abc", TIED, "q1"), _ranking("def", [1.0, 2.0, 3.0], "q2")])
    reference = pl.concat([_ranking("cba", ORDERED, "q1"), _ranking("def", ORDERED, "q2")])
    out = irm.evaluate(run, ["tau_ap", "kendall_tau"], reference=reference, **options)
    # the mean of q2 alone, -1.0 (it was (1.0 + -1.0) / 2 = 0.0), as kendall_tau's
    assert out.select("num_q", "tau_ap", "kendall_tau").row(0) == (2, -1.0, -1.0)
