"""irm.position_bias(log, method="swap"): examination propensities from swap interventions
(Joachims et al. 2017; Wang et al. 2018), on simulated logs with known propensities and a
worked example; and the refusal of the parameters one method does not read."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, ColumnTypeError, InvalidValueError

TRUE = np.array([1.0, 0.7, 0.5, 0.35, 0.25])  # examination of ranks 1..5 (p_1 = 1)


def _simulated(n: int, seed: int, examination: np.ndarray = TRUE) -> pl.DataFrame:
    """``n`` impressions of 5 results; half shown as ranked, half with rank 1 swapped with
    a rank k drawn from 2..5; a click is examination x relevance (the PBM)."""
    rng = np.random.default_rng(seed)
    depth = len(examination)
    # the ranker puts more relevant documents higher: relevance by original rank
    relevance = rng.random((n, depth)) < np.linspace(0.8, 0.2, depth)
    k = np.where(rng.random(n) < 0.5, 0, rng.integers(2, depth + 1, n))
    shown = np.tile(np.arange(depth), (n, 1))  # original rank (0-based) shown at each rank
    rows = np.arange(n)[k > 0]
    shown[rows, 0] = k[k > 0] - 1
    shown[rows, k[k > 0] - 1] = 0
    rel = np.take_along_axis(relevance, shown, axis=1)
    clicks = rng.random((n, depth)) < examination[None, :] * rel
    return pl.DataFrame(
        {
            "query_id": np.repeat(np.arange(n), depth),
            "rank": np.tile(np.arange(1, depth + 1), n),
            "clicked": clicks.ravel().astype(np.int8),
            "swap": np.repeat(k, depth),
        }
    ).with_columns(pl.col("swap").replace(0, None))  # null: shown as ranked


@pytest.mark.parametrize("seed", [0, 1])
def test_swap_estimate_converges_to_the_true_propensities(seed: int, frame_kind: str) -> None:
    errors = []
    for n in (2_000, 200_000):
        log = _simulated(n, seed)
        out = irm.position_bias(log.lazy() if frame_kind == "LazyFrame" else log, method="swap")
        assert out["position"].to_list() == [1, 2, 3, 4, 5]
        assert out["propensity"][0] == 1.0
        errors.append(np.abs(out["propensity"].to_numpy() - TRUE).max())
    # 200,000 impressions: each ratio within 0.02 (its standard error is about 0.006)
    assert errors[1] < 0.02
    assert errors[1] < errors[0]


def test_swap_estimate_is_not_fooled_by_relevance_where_naive_ctr_is() -> None:
    """The click-through rate by rank mixes examination and the ranker's relevance; the
    swap estimate separates them."""
    log = _simulated(100_000, 3)
    plain = log.filter(pl.col("swap").is_null())
    ctr = plain.group_by("rank").agg(pl.col("clicked").mean()).sort("rank")["clicked"]
    naive = (ctr / ctr[0]).to_numpy()
    swapped = irm.position_bias(log, method="swap")["propensity"].to_numpy()
    assert np.abs(naive - TRUE)[1:].min() > 0.1  # the naive ratio is far off
    assert np.abs(swapped - TRUE).max() < 0.03


def test_worked_example_with_explicit_arithmetic() -> None:
    # impressions 1-4 as ranked: clicks at rank 1 in 1 and 3 (CTR 2/4); rank 2's click
    # in impression 1 does not count. Impressions 5-7 swap ranks 1 and 2: the ranker's top
    # document, now at rank 2, is clicked in 5 (CTR 1/3). Impressions 8-9 swap 1 and 4:
    # clicked at rank 4 in both (CTR 2/2); the click at rank 1 of 8 does not count.
    log = pl.DataFrame(
        {
            "impression": [1, 1, 2, 3, 4, 5, 5, 6, 7, 8, 8, 9],
            "pos": [1, 2, 1, 1, 1, 1, 2, 2, 2, 1, 4, 4],
            "click": [True, True, False, True, False, False, True, False, False, True, True, True],
            "intervention": [None, None, None, None, None, 2, 2, 2, 2, 4, 4, 4],
        }
    )
    out = irm.position_bias(
        log, method="swap", query_id="impression", rank="pos", clicked="click", swap="intervention"
    )
    assert out.columns == ["position", "examination", "propensity", "impressions"]
    assert out["position"].to_list() == [1, 2, 4]
    assert out["impressions"].to_list() == [4, 3, 2]
    assert out["propensity"].to_list() == pytest.approx(
        [1.0, (1 / 3) / (2 / 4), (2 / 2) / (2 / 4)]
    )
    assert out["examination"].null_count() == 3


def test_swap_table_feeds_the_position_propensities() -> None:
    """The table is what ps metrics read by position: the run is the logged ranking."""
    bias = irm.position_bias(_simulated(50_000, 4), method="swap")
    run = pl.DataFrame({"query_id": ["s"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    clicks = pl.DataFrame({"query_id": ["s"], "doc_id": ["c"], "relevance": [1]})
    out = irm.evaluate(run, ["ps_precision@3"], qrels=clicks, propensities=bias)
    assert out["ps_precision@3"].item() == 1.0  # one click: its own ideal


BASE = pl.DataFrame(
    {"query_id": [1, 1, 2], "rank": [1, 2, 1], "clicked": [1, 0, 1], "swap": [None, None, 2]},
    schema_overrides={"swap": pl.Int64},
)


@pytest.mark.parametrize(
    ("log", "kwargs", "error", "message"),
    [
        (
            BASE,
            {"method": "swap", "max_iter": 5},
            InvalidValueError,
            "max_iter=5 is read by method='em' only: swap interventions read the impression, "
            "its rank, its click and its swap; drop max_iter=",
        ),
        (BASE, {"method": "swap", "tol": 0.1}, InvalidValueError, "tol=0.1 is read by method="),
        (
            BASE,
            {"method": "swap", "doc_id": "d"},
            InvalidValueError,
            "doc_id='d' is read by method='em' and method='harvest' only: swap interventions "
            "read the impression, its rank, its click and its swap; drop doc_id=",
        ),
        (
            BASE,
            {"swap": "swap"},
            InvalidValueError,
            "swap='swap' is read by method='swap' only (a log of swap interventions); drop "
            "swap=, or pass method='swap'",
        ),
        (
            BASE,
            {"method": "random"},
            InvalidValueError,
            "method='random' is not a method; choose 'em' (the position-based model fitted by "
            "EM), 'swap' (from swap interventions in the log) or 'harvest' (intervention "
            "harvesting from the logs of several rankers)",
        ),
        (
            BASE.drop("swap"),
            {"method": "swap"},
            ColumnNotFoundError,
            "column 'swap' not found in the log (its columns: 'query_id', 'rank', 'clicked')",
        ),
        (
            BASE.with_columns(pl.col("swap").cast(pl.String)),
            {"method": "swap"},
            ColumnTypeError,
            "column 'swap' in the log has dtype String; it must be an integer",
        ),
        (
            BASE.with_columns(pl.Series("swap", [None, 2, 2])),
            {"method": "swap"},
            InvalidValueError,
            "impression 1 of the log: its rows carry different 'swap' values: one "
            "intervention per impression",
        ),
        (
            BASE.with_columns(pl.Series("swap", [None, None, 0])),
            {"method": "swap"},
            InvalidValueError,
            "impression 2 of the log: 'swap' is 0: the rank swapped with rank 1 is 2 or more",
        ),
        (
            BASE.with_columns(pl.Series("clicked", [2, 0, 1])),
            {"method": "swap"},
            InvalidValueError,
            "impression 1 of the log: a null rank, a rank below 1, or a 'clicked' that is "
            "neither 0 nor 1",
        ),
        (
            BASE.with_columns(pl.Series("clicked", [0, 1, 1]), pl.Series("rank", [1, 2, 2])),
            {"method": "swap"},
            InvalidValueError,
            "the log has 1 impression(s) without intervention ('swap' null) and 0 click(s) at "
            "their rank 1: p_k / p_1 divides by the top's click-through rate",
        ),
    ],
)
def test_bad_swap_logs_and_unread_parameters_are_refused(
    log: pl.DataFrame, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        irm.position_bias(log, **kwargs)


def test_em_still_reads_its_defaults() -> None:
    log = pl.DataFrame(
        {
            "query_id": ["q"] * 4,
            "doc_id": ["a", "b", "b", "a"],
            "rank": [1, 2, 1, 2],
            "clicked": [1, 1, 1, 0],
        }
    )
    assert irm.position_bias(log, tol=0.1).equals(
        irm.position_bias(log, method="em", max_iter=100, tol=0.1)
    )


def test_em_through_a_position_that_is_always_clicked() -> None:
    """Position 1 and document ``b`` are always clicked, so EM reaches ``gamma_1 =
    alpha_b = 1``, where the unclicked posterior ``a (1 - g) / (1 - a g)`` reads 0/0 for
    a statistic with no unclicked impression; it once turned every value into NaN from
    the second iteration. At the fixed point ``alpha_a = gamma_2 = g`` with ``g - 2 g^3 +
    2 g^2 - 1 = -(g - 1)(2 g^2 - 1) = 0``, so ``gamma_2 = 1 / sqrt(2)``."""
    log = pl.DataFrame(
        {
            "query_id": ["q"] * 4,
            "doc_id": ["a", "b", "b", "a"],
            "rank": [1, 2, 1, 2],
            "clicked": [1, 1, 1, 0],
        }
    )
    got = irm.position_bias(log).select("position", "examination").rows()
    assert got[0] == (1, 1.0)
    assert got[1][0] == 2
    assert abs(got[1][1] - 1 / math.sqrt(2)) < 1e-8
