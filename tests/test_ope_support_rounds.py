"""The support warning reads the rounds the log has: a policy table may cover rounds
beyond the log's (a policy scored on every round of a day, a log sampled from it), and
an action it takes only there is read by no estimate, so it is no reason to warn. The
same action taken in a logged round still is. One machine (every estimator shape, in one
plan and in buckets) and the engines alike."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import SupportWarning
from tests.test_ope_slates_extra import CASCADE_LOG

# ---------------------------------------------------------------- single action, rows
LOG = pl.DataFrame(
    {"round_id": [1, 2, 3], "action": [0, 0, 1], "reward": [1.0, 0.0, 1.0], "pscore": [0.5] * 3}
)
#: Rounds 1-3 (logged) take actions 0 and 1; round 4 (not logged) takes action 2 only.
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
        "action": [0, 1, 2] * 4,
        "prob": [0.9, 0.1, 0.0, 0.5, 0.5, 0.0, 0.1, 0.9, 0.0, 0.0, 0.0, 1.0],
    }
)
#: The same, and round 2 (logged) gives action 2 some mass too.
IN_A_LOGGED_ROUND = POLICY.with_columns(
    prob=pl.when((pl.col("round_id") == 2) & (pl.col("action") > 0))
    .then(0.25)
    .otherwise(pl.col("prob"))
)
#: obp's list shape of the same policies (one list per round).
LISTED = POLICY.group_by("round_id", maintain_order=True).agg("prob")
LISTED_IN_A_LOGGED_ROUND = IN_A_LOGGED_ROUND.group_by("round_id", maintain_order=True).agg("prob")
NEVER_LOGGED = (
    "the policy gives a positive probability to 1 action(s) never logged (e.g. action=2)"
)

# ------------------------------------------------------------------------- cascade
#: Rounds 1 and 2 (logged) take a and b; round 3 (not logged) takes c, never logged.
CASCADE = pl.DataFrame(
    {
        "round_id": [1] * 6 + [2] * 6 + [3] * 6,
        "position": [1, 1, 1, 2, 2, 2] * 3,
        "action": ["a", "b", "c"] * 6,
        "prob": [0.5, 0.5, 0, 0.2, 0.8, 0, 0.4, 0.6, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1],
        "q_hat": [0.5] * 18,
    }
)

# -------------------------------------------------------------------------- slates
SLATE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "reward": [1.0, 0.0, 0.0, 1.0],
        "pscore": [0.25, 0.25, 0.5, 0.5],
    }
)
#: Round 9 (not logged) shows a slate of its own.
SLATES = pl.concat(
    [
        SLATE_LOG.select("round_id", "position", pscore=pl.lit(0.4)),
        pl.DataFrame({"round_id": [9, 9], "position": [1, 2], "pscore": [0.3, 0.3]}),
    ]
)


#: The same, and two slots of logged rounds the log never shows (round 2, positions 3 and 4).
WIDER_SLATES = pl.concat(
    [SLATES, pl.DataFrame({"round_id": [2, 2], "position": [4, 3], "pscore": [0.3, 0.3]})]
)


#: Each shape with a slot the log never shows in a logged round and another only in a
#: round the log lacks: one warning, of the first only (one evaluation per shape on the
#: engines, which gave none for cascade_dr and the slates, and warned of both for ips).
MIXED = (
    pl.concat(
        [
            POLICY,
            pl.DataFrame(
                {"round_id": [1, 2, 3, 4], "action": [3] * 4, "prob": [0.0, 0.25, 0.0, 0.0]}
            ),
        ]
    )
    .with_columns(
        prob=pl.when((pl.col("round_id") == 2) & (pl.col("action") == 1))
        .then(0.25)
        .otherwise(pl.col("prob"))
    )
    .sort("round_id", "action")
)
CASCADE_MIXED = (
    pl.concat(
        [
            CASCADE,
            CASCADE.filter(pl.col("action") == "a").with_columns(action=pl.lit("d"), prob=0.0),
        ]
    )
    .with_columns(
        prob=pl.when((pl.col("round_id") == 1) & (pl.col("position") == 1))
        .then(pl.col("action").replace_strict({"a": 0.3, "b": 0.5, "c": 0.0, "d": 0.2}))
        .otherwise(pl.col("prob"))
    )
    .sort("round_id", "position", "action")
)
GIVES = "the policy gives a positive probability to 1 action(s) never logged (e.g. "
MIXED_CASES: list[tuple[pl.DataFrame, list[str], dict[str, pl.DataFrame], str]] = [
    (LOG, ["ips"], {"policy": MIXED}, GIVES + "action=3)"),
    (
        LOG,
        ["ips"],
        {"policy": MIXED.group_by("round_id", maintain_order=True).agg("prob")},
        GIVES + "action=3)",
    ),
    (
        CASCADE_LOG,
        ["cascade_dr"],
        {"policy": CASCADE_MIXED.drop("q_hat"), "reward_model": CASCADE_MIXED.drop("prob")},
        GIVES + "action=d, position=1)",
    ),
    (
        SLATE_LOG,
        ["slate_ips", "slate_snips"],
        {"policy": pl.concat([SLATES, WIDER_SLATES.tail(1)])},
        "the policy puts mass on 1 slot(s) of slates the log never shows (e.g. round_id=2, "
        "position=3)",
    ),
]


def _said(call: Callable[[], Any]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
        if isinstance(out, pl.LazyFrame):
            out.collect()
    return [str(w.message) for w in caught if issubclass(w.category, SupportWarning)]


@pytest.mark.parametrize("options", [{}, {"buckets": 2}], ids=["one-plan", "buckets"])
@pytest.mark.parametrize(
    ("log", "metrics", "tables"),
    [
        (LOG, ["ips", "snips"], {"policy": POLICY}),
        (LOG, ["ips"], {"policy": LISTED}),
        (
            CASCADE_LOG,
            ["cascade_dr"],
            {"policy": CASCADE.drop("q_hat"), "reward_model": CASCADE.drop("prob")},
        ),
        (SLATE_LOG, ["slate_ips"], {"policy": SLATES}),
    ],
    ids=["rows", "lists", "cascade", "slates"],
)
def test_what_the_policy_takes_in_rounds_the_log_lacks_is_no_warning(
    frame_kind: str,
    log: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    options: dict[str, Any],
) -> None:
    def call() -> Any:
        if frame_kind == "LazyFrame":
            lazy = {name: frame.lazy() for name, frame in tables.items()}
            return irm.evaluate(log.lazy(), metrics, **lazy, **options)
        return irm.evaluate(log, metrics, **tables, **options)

    assert _said(call) == []  # it warned of action 2 (c, round 9's slots) before


@pytest.mark.parametrize("options", [{}, {"buckets": 2}], ids=["one-plan", "buckets"])
@pytest.mark.parametrize(
    "policy", [IN_A_LOGGED_ROUND, LISTED_IN_A_LOGGED_ROUND], ids=["rows", "lists"]
)
def test_the_same_action_in_a_logged_round_is_still_warned_of(
    policy: pl.DataFrame, options: dict[str, Any]
) -> None:
    said = _said(lambda: irm.evaluate(LOG, ["ips"], policy=policy, **options))
    assert len(said) == 1
    assert said[0].startswith(NEVER_LOGGED)


@pytest.mark.parametrize("options", [{}, {"buckets": 2}], ids=["one-plan", "buckets"])
def test_a_slot_of_a_logged_round_is_still_warned_of(options: dict[str, Any]) -> None:
    """Out of core too: it warned in one plan only (the buckets read no slate's or
    cascade's support)."""
    wider = pl.concat([SLATES, pl.DataFrame({"round_id": [2], "position": [3], "pscore": [0.3]})])
    said = _said(lambda: irm.evaluate(SLATE_LOG, ["slate_ips"], policy=wider, **options))
    assert len(said) == 1
    assert said[0].startswith(
        "the policy puts mass on 1 slot(s) of slates the log never shows (e.g. round_id=2, "
        "position=3)"
    )
    # cascade_dr: round 1 (logged) gives c, never logged, mass at position 1
    cascade = CASCADE.with_columns(
        prob=pl.when(pl.col("round_id") == 1).then(1 / 3).otherwise(pl.col("prob"))
    )
    said = _said(
        lambda: irm.evaluate(
            CASCADE_LOG,
            ["cascade_dr"],
            policy=cascade.drop("q_hat"),
            reward_model=cascade.drop("prob"),
            **options,
        )
    )
    assert len(said) == 1
    assert said[0].startswith(
        "the policy gives a positive probability to 2 action(s) never logged (e.g. "
        "action=c, position=1)"
    )


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_read_the_logged_rounds_as_one_machine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    if engine == "spark":
        import polars_irmetrics.spark as irm_spark

        spark = request.getfixturevalue("spark")

        def frame(table: pl.DataFrame) -> Any:
            return spark.createDataFrame(table.to_arrow())

        def evaluate(*args: Any, **kw: Any) -> Any:
            return irm_spark.evaluate(*args, **kw)
    else:
        import dask.dataframe as dd
        import pandas as pd

        import polars_irmetrics.dask as irm_dask

        request.getfixturevalue("client")

        def frame(table: pl.DataFrame) -> Any:
            # pyarrow-backed: the list shape stays a list (module doc of the engine)
            return dd.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)

        def evaluate(*args: Any, **kw: Any) -> Any:
            return irm_dask.evaluate(*args, **kw).compute()

    for log, metrics, tables, first in MIXED_CASES:
        said = _said(
            lambda log=log, m=metrics, t=tables: evaluate(
                frame(log), m, **{name: frame(table) for name, table in t.items()}, partitions=2
            )
        )
        assert said == _said(lambda log=log, m=metrics, t=tables: irm.evaluate(log, m, **t))
        assert len(said) == 1, said
        assert said[0].startswith(first)
