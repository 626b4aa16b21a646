"""Round 31: a quantity that is no quality is never ordered as one.

``rbo(kind='res')`` is RBO's residual, ``max - min``: how much the depths beyond the
rankings could still change the overlap (its uncertainty, as ``rbp_residual`` is RBP's,
which round 29 declared of no direction). It was declared lower-is-better
(``Param.directions={"res": False}``), so ``system_agreement`` and ``plot_swaps`` ordered
a run disjoint from the reference to depth 20 (overlap 0, residual 0.066) above a run
equal to it to depth 3 (overlap 1, residual 0.477): the deeper run is the more certain
one, not the nearer. It now has no better direction: the orderings refuse it unless
told which way to read it.

The registry's every metric and every parameter value is held to an audited direction
by ``tests/test_direction_round24.py`` (with ``tests/test_directions.py``) and
``tests/test_direction_round28.py``; the readers of "better" by round 28's tests.
"""

from __future__ import annotations

import re
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.plot import plot_swaps
from polars_irmetrics.errors import CoverageWarning

RESIDUAL = "rbo(kind='res')@20"
#: one ranking of 20 documents per query
_REFERENCE = pl.DataFrame(
    {"query_id": ["q1"] * 20 + ["q2"] * 20, "doc_id": [f"d{i}" for i in range(20)] * 2}
).with_columns(rank=pl.int_range(1, 21).over("query_id"))
#: near: the reference's first 3 documents; far: 20 documents it does not hold; same:
#: the reference itself
_DOCS = {
    "near": ["d0", "d1", "d2"],
    "far": [f"x{i}" for i in range(20)],
    "same": [f"d{i}" for i in range(20)],
}


def _per_query() -> pl.DataFrame:
    runs = pl.concat(
        pl.DataFrame(
            {"query_id": ["q1"] * len(docs) + ["q2"] * len(docs), "doc_id": docs * 2}
        ).with_columns(system=pl.lit(name), rank=pl.int_range(1, len(docs) + 1).over("query_id"))
        for name, docs in _DOCS.items()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # far shares no document
        return irm.evaluate(
            runs, ["rbo@20", RESIDUAL], reference=_REFERENCE, systems="system", per_query=True
        )


def test_the_residual_is_no_overlap() -> None:
    rows = {
        system: (rbo, residual)
        for system, rbo, residual in _per_query()
        .group_by("system")
        .agg(pl.col("rbo@20", RESIDUAL).mean())
        .iter_rows()
    }
    # near overlaps the reference wholly, far not at all; far's residual is the smaller
    assert rows["near"][0] == 1.0
    assert rows["far"][0] == 0.0
    assert rows["far"][1] < rows["near"][1]
    assert irm.parse_metric(RESIDUAL).higher_is_better is None
    assert irm.parse_metric("rbo@20").higher_is_better is True


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_the_orderings_refuse_the_residual_untold(lazy: bool) -> None:
    per_query = _per_query()
    a = per_query.select("system", "query_id", "rbo@20")
    b = per_query.select("system", "query_id", RESIDUAL)
    a_in, b_in = (a.lazy(), b.lazy()) if lazy else (a, b)
    message = (
        f"metric {RESIDUAL!r} of b has no better direction (neither a higher nor a lower "
        "value is better), so the systems have no best-first order: say which way to "
        "order them with higher_is_better_b=True or higher_is_better_b=False"
    )
    for method in ("kendall", "tau_ap"):
        with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.system_agreement(a_in, b_in, method)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        plot_swaps(a_in, b_in)
    # told, it is read as told: the residual smallest first puts far above near
    told = irm.system_agreement(a_in, b_in, "kendall", higher_is_better_b=False)
    assert told.select("pairs", "swaps").row(0) == (3, 1)
