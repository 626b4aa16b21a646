"""Rank agreement, round 17: ``tau_ap`` where either side ties every shared document.

Equal scores are one tie group: there is no order to compare, and ``kendall_tau`` is
null there (scipy's τ-b is NaN). ``tau_ap`` read the positions of the tie-break order
instead (``doc_id`` descending as text), so a run scoring its documents alike read as
exactly reversed (-1.0) against a reference ordered ``a > b > c`` and as identical
(+1.0) against ``c > b > a``: a number the data cannot support, decided by the ids'
spelling. It was made null here; round 18 reads ties as Urbano & Marrero's τ_AP_a
(``ircor``'s ``tauAP_a``: the run's ties averaged over their orders, the reference the
untied truth): a run tied throughout scores 0 (every order alike), a reference with
ties has no value, and a partial tie is no longer broken by id
(tests/test_agreement_round18.py).
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
    # tie-break c b a against a b c: -1.0 before, then null; tau_AP_a (round 18): each
    # member of the group (p = 1, t = 3) W(1, 3) = (1/6)(1/1 + 2/2) = 1/3: 2/2 * 1 - 1 = 0
    ("run tied, ids reversed", _ranking("abc", TIED), _ranking("abc", ORDERED), "tau_ap", 0.0),
    # tie-break c b a against c b a: +1.0 before, then null, now 0.0 alike
    ("run tied, ids in order", _ranking("abc", TIED), _ranking("cba", ORDERED), "tau_ap", 0.0),
    # the truth tied: its tie-break c b a is no order either (-1.0 before)
    ("reference tied", _ranking("abc", ORDERED), _ranking("abc", TIED), "tau_ap", None),
    ("both tied", _ranking("abc", TIED), _ranking("abc", TIED), "tau_ap", None),
    # kendall_tau was already null on each
    ("kendall_tau alike", _ranking("abc", TIED), _ranking("abc", ORDERED), "kendall_tau", None),
    # the run's top 2 tied (b, c), its third apart; the reference b > c > a: @2 both
    # sides hold b and c, which the run ties (-1.0 before: its tie-break is c b; then
    # null): W(1, 2) = (1/4)(1/1) for each: 2/1 * 1/2 - 1 = 0
    ("tied top 2 at @2", _ranking("abc", [1.0, 2.0, 2.0]), _ranking("bca", ORDERED), "tau_ap@2",
     0.0),
    # @3: the run's groups (b c), a; truth b c a: a has b and c above it on both sides,
    # S(3, 1) = 1/2: 2 * 1/2 = 1; the group: 2 * W(1, 2) = 1/2: 2/2 * 1.5 - 1 = 0.5 (0
    # before: the tie broken c b by id)
    ("tied top 2 at @3", _ranking("abc", [1.0, 2.0, 2.0]), _ranking("bca", ORDERED), "tau_ap@3",
     0.5),
    # a partial tie: run a (2), then b and c tied; truth a b c: the mean of the orders
    # b c (1.0) and c b (0.5), 0.75 (0.5 before: broken c b by id)
    ("partial tie", _ranking("abc", [2.0, 1.0, 1.0]), _ranking("abc", ORDERED), "tau_ap", 0.75),
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
    # q1's reference tied (its tie-break c b a read as an order before); q2 reversed
    run = pl.concat([_ranking("cba", ORDERED, "q1"), _ranking("def", [1.0, 2.0, 3.0], "q2")])
    reference = pl.concat([_ranking("abc", TIED, "q1"), _ranking("def", ORDERED, "q2")])
    out = irm.evaluate(run, ["tau_ap", "kendall_tau"], reference=reference, **options)
    # the mean of q2 alone, -1.0 (tau_AP_a has no value against a tied truth), as
    # kendall_tau's (null where a side ties every shared document)
    assert out.select("num_q", "tau_ap", "kendall_tau").row(0) == (2, -1.0, -1.0)
