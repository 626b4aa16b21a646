"""An off-policy call reads its plan's schema once: each step that declares the schema
of the frame it returns (a check's or a warning's ``map_batches``) keeps it for the next
step (:mod:`polars_irmetrics.ground.known_schema`), where every step resolved the whole
plan built so far again (six resolutions of the result in a ``by=`` call, 25 ms each
at 240 rows)."""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ground.known_schema import dropped, mapped, schema_of, without

LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3, 4],
        "action": ["a", "a", "b", "a"],
        "reward": [1.0, 0.0, 1.0, 0.5],
        "pscore": [0.5, 0.5, 0.25, 0.5],
        "segment": [0, 1, 0, 1],
    }
)
POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3, 4, 4],
        "action": ["a", "b"] * 4,
        "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9, 0.3, 0.7],
    }
)
MODEL = POLICY.rename({"prob": "q_hat"})
MEANS = ["ips", "ips(clip=2)", "dm", "dr", "switch_dr(tau=2)", "dr_os(lambda=5)"]


def _counted(kind: str, **kw: Any) -> tuple[pl.DataFrame, int]:
    """The call's result and how many times it resolved a plan's schema."""
    lazy = kind == "LazyFrame"
    frames = [f.lazy() if lazy else f for f in (LOG, POLICY, MODEL)]
    counts: Counter[str] = Counter()
    original = pl.LazyFrame.collect_schema

    def counting(self: pl.LazyFrame) -> pl.Schema:
        counts["n"] += 1
        return original(self)

    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        warnings.simplefilter("ignore")
        patch.setattr(pl.LazyFrame, "collect_schema", counting)
        out = irm.evaluate(frames[0], MEANS, policy=frames[1], reward_model=frames[2], **kw)
        n = counts["n"]  # the plan's building (the collect's own reads are polars')
        return (out.collect() if lazy else out), n


# (options, the most schema resolutions while the call builds its plan: each input's
# and the result's own; before round 34 27, 28 and 28, the result resolved 3-6 times)
CASES = [
    ({"ci": 0.9, "ci_method": "normal"}, 23),
    ({"ci": 0.9, "ci_method": "normal", "by": "segment"}, 23),
    ({"by": "segment"}, 23),
]


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("options", "most"), CASES)
def test_an_off_policy_call_resolves_its_result_once(
    kind: str, options: dict[str, Any], most: int
) -> None:
    out, n = _counted(kind, **options)
    assert n <= most, n
    # the same values as the call without the count
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = irm.evaluate(LOG, MEANS, policy=POLICY, reward_model=MODEL, **options)
    assert out.equals(again)


def test_a_declared_schema_is_read_back_without_resolving() -> None:
    frame = pl.LazyFrame({"a": [1, 2]})
    out = mapped(frame, lambda f: f.with_columns(b=pl.col("a") * 2), {"a": pl.Int64})
    # declared (not resolved: the function would give "b" too), as polars reads it
    assert schema_of(out) == pl.Schema({"a": pl.Int64}) == out.collect_schema()
    assert without(schema_of(frame), ["a"]) == pl.Schema()
    assert schema_of(dropped(out, ["a"])) == pl.Schema() == out.drop("a").collect_schema()
    assert schema_of(frame.with_columns(c=pl.lit(1.5))) == pl.Schema(
        {"a": pl.Int64, "c": pl.Float64}
    )
