"""The fifth trust pass: options the chosen statistics or fusion do not read are refused,
bad seeds and paths get the library's own errors, and fusion's tie rule holds for the
candidates a run does not retrieve."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError


def _predictions(values: list[float]) -> pl.DataFrame:
    """Per-query values through the prediction route: mae of label 0 is the value."""
    return pl.DataFrame(
        {
            "query_id": [f"q{i}" for i in range(len(values))],
            "label": [0.0] * len(values),
            "prediction": values,
        }
    )


RUNS = {
    "a": _predictions([0.1, 0.5, 0.3, 0.9]),
    "b": _predictions([0.2, 0.1, 0.35, 0.4]),
    "c": _predictions([0.3, 0.2, 0.1, 0.5]),
}

SEED = "must be a whole number >= 0 (e.g. seed=0) or None (a fresh random draw each call)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"test": "bootstrap", "seed": "abc"}, f"seed='abc' {SEED}"),
        ({"test": "bootstrap", "seed": -1}, f"seed=-1 {SEED}"),
        ({"test": "bootstrap", "seed": 1.5}, f"seed=1.5 {SEED}"),
        ({"test": "randomization", "seed": True}, f"seed=True {SEED}"),
        (
            {"test": "t", "n_resamples": 500},
            "n_resamples=500 is read by the resampling statistics (test='randomization' or "
            "'bootstrap', ci='bootstrap'), and test='t' with ci='t' reads none: drop "
            "n_resamples=, or choose one of them",
        ),
        (
            {"test": "wilcoxon", "seed": 5},
            "seed=5 is read by the resampling statistics (test='randomization' or "
            "'bootstrap', ci='bootstrap'), and test='wilcoxon' with ci='t' reads none: drop "
            "seed=, or choose one of them",
        ),
        (
            {"correction": None, "correction_scope": "metric"},
            "correction_scope='metric' says which p-values a correction adjusts together, "
            "and correction=None adjusts none: drop correction_scope=, or choose a "
            "correction (e.g. correction='holm')",
        ),
        (
            {"baseline": "b", "mode": "pairs"},
            "baseline='b' is not read by mode='pairs', which compares every pair of systems "
            "(the earlier of each pair in the baseline column): drop baseline=, or use "
            "mode='baseline'",
        ),
    ],
)
def test_compare_refuses_an_option_it_does_not_read(options: dict[str, Any], message: str) -> None:
    # before: a bad seed reached numpy (TypeError: SeedSequence expects int...), and
    # n_resamples=, seed=, correction_scope= and baseline= were silently ignored
    with pytest.raises(InvalidValueError) as caught:
        irm.compare(RUNS, "mae", **options)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "options",
    [
        {"test": "bootstrap", "seed": None, "n_resamples": 200},
        {"test": "randomization", "seed": 3, "n_resamples": 200},
        {"test": "t", "ci": "bootstrap", "seed": 3, "n_resamples": 200},
        {"test": "t", "seed": 0, "n_resamples": 10_000},  # the defaults, given explicitly
        {"correction": None},
        {"baseline": "b", "mode": "baseline"},
    ],
)
def test_compare_takes_the_options_it_reads(options: dict[str, Any]) -> None:
    out = irm.compare(RUNS, "mae", **options)
    assert out.height in (2, 3)


def test_system_agreement_refuses_a_bad_seed_too() -> None:
    a = pl.DataFrame({"system": ["x", "y", "z"], "ndcg": [0.1, 0.2, 0.3]})
    with pytest.raises(InvalidValueError, match=r"^seed=-2 must be a whole number >= 0"):
        irm.system_agreement(a, a, metric="ndcg", seed=-2)


NULL_GROUP = (
    "column 'system' has {n} null value(s); every row needs its group (by= and systems= "
    "group the rows by it): drop them, e.g. .drop_nulls('system'), or fill them, e.g. "
    "pl.col('system').fill_null(...)"
)


@pytest.mark.parametrize(
    "options",
    [
        {"systems": "system"},
        {"by": "system"},
        {"by": "system", "buckets": 2},
        {"by": "system", "per_query": True},
    ],
)
def test_a_null_group_of_predictions_is_refused_as_the_ranking_metrics_refuse_it(
    options: dict[str, Any],
) -> None:
    # before: the rows without a system were scored as a system named null (and
    # irm.report of a comparison of them failed on its None name)
    table = pl.DataFrame(
        {
            "query_id": ["q1", "q2", "q1"],
            "label": [0.0, 1.0, 0.0],
            "prediction": [0.1, 0.2, 0.3],
            "system": [None, "x", "y"],
        }
    )
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(table, ["mae", "auc"], **options)
    assert str(caught.value) == NULL_GROUP.format(n=1)


def test_compare_refuses_a_long_frame_row_without_a_system() -> None:
    named = RUNS["b"].with_columns(system=pl.lit("b"))
    unnamed = RUNS["a"].with_columns(system=pl.lit(None, pl.String))
    with pytest.raises(InvalidValueError) as caught:
        irm.compare(pl.concat([unnamed, named]), "mae")
    assert str(caught.value) == NULL_GROUP.format(n=4)
