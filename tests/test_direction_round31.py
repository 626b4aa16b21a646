"""Round 31: a quantity that is no quality is never ordered as one.

RBO's residual ``rbo(kind='res')`` (``max - min``: how much the depths beyond the
rankings could still change the overlap, its uncertainty, as ``rbp_residual`` is RBP's,
which round 29 declared of no direction) was declared lower-is-better, and its upper
bound ``rbo(kind='max')`` (the overlap were every unseen depth to agree) higher-is-better.
Both grow with what is unseen, not with the distance to the reference, so
``system_agreement`` and ``plot_swaps`` ordered a run disjoint from the reference to
depth 20 above one equal to it to depth 3 (the residual), and a disjoint run of one
document above one that shares the reference's first (the upper bound). Neither has a
better direction now: the orderings refuse them unless told which way to read them.

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

RES, MAX = "rbo(kind='res')@20", "rbo(kind='max')@20"
#: one ranking of 20 documents per query
_REFERENCE = pl.DataFrame(
    {"query_id": ["q1"] * 20 + ["q2"] * 20, "doc_id": [f"d{i}" for i in range(20)] * 2}
).with_columns(rank=pl.int_range(1, 21).over("query_id"))
_X = [f"x{i}" for i in range(20)]  # documents the reference does not hold
_DOCS = {
    "near": ["d0", "d1", "d2"],  # the reference's first three
    "far": _X,  # 20 others
    "short": _X[:1],  # one other
    "top": ["d0", *_X[:19]],  # the reference's first, then 19 others
}


def _per_query() -> pl.DataFrame:
    runs = pl.concat(
        pl.DataFrame(
            {"query_id": ["q1"] * len(docs) + ["q2"] * len(docs), "doc_id": docs * 2}
        ).with_columns(system=pl.lit(name), rank=pl.int_range(1, len(docs) + 1).over("query_id"))
        for name, docs in _DOCS.items()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # far and short share nothing
        return irm.evaluate(
            runs, ["rbo@20", RES, MAX], reference=_REFERENCE, systems="system", per_query=True
        )


def test_the_residual_and_the_upper_bound_are_no_overlap() -> None:
    means = {
        row[0]: row[1:]
        for row in _per_query().group_by("system").agg(pl.col("rbo@20", RES, MAX).mean()).rows()
    }
    rbo = {name: values[0] for name, values in means.items()}
    assert rbo["near"] == 1.0
    assert rbo["far"] == rbo["short"] == 0.0
    assert 0.0 < rbo["top"] < 1.0
    # the nearer run has the larger residual, and the lower upper bound
    assert means["far"][1] < means["near"][1]
    assert means["short"][2] > means["top"][2]
    for name in (RES, MAX):
        assert irm.parse_metric(name).higher_is_better is None, name
    for name in ("rbo@20", "rbo(kind='ext')@20", "rbo(kind='min')@20"):
        assert irm.parse_metric(name).higher_is_better is True, name


@pytest.mark.parametrize("column", [RES, MAX])
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_the_orderings_refuse_them_untold(column: str, lazy: bool) -> None:
    per_query = _per_query()
    a = per_query.select("system", "query_id", "rbo@20")
    b = per_query.select("system", "query_id", column)
    a_in, b_in = (a.lazy(), b.lazy()) if lazy else (a, b)
    message = (
        f"metric {column!r} of b has no better direction (neither a higher nor a lower "
        "value is better), so the systems have no best-first order: say which way to "
        "order them with higher_is_better_b=True or higher_is_better_b=False"
    )
    for method in ("kendall", "tau_ap"):
        with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.system_agreement(a_in, b_in, method)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        plot_swaps(a_in, b_in)
