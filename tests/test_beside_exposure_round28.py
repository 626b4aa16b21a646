"""A beyond-accuracy metric beside the exposure measures that read the judgments
(round 28).

The door splits the exposure measures off and evaluates the rest as a call of its own;
with only beyond-accuracy metrics left, that call found ``qrels=`` read by none of them
and refused it ("no metric asked for reads them (surprisal@2)"), though ``awrf`` and
``ee_loss`` beside read them. Each metric now gives its value alone.
"""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm

RUN = pl.DataFrame(
    {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "y"], "rank": [1, 2, 1, 2]}
)
HISTORY = pl.DataFrame({"query_id": ["a", "b", "c"], "doc_id": ["x", "y", "x"]})
QRELS = HISTORY.with_columns(relevance=pl.lit(1))
GROUPS = pl.DataFrame({"doc_id": ["x", "y"], "group": ["1", "2"]})
READS = {"interactions": HISTORY, "qrels": QRELS, "groups": GROUPS}
#: (the call's metrics, the tables each reads alone)
CASES = {
    "surprisal@2": ("interactions",),
    "novelty@2": ("interactions",),
    "awrf": ("qrels", "groups"),
    "ee_loss": ("qrels", "groups"),  # groups= makes it a group-level measure
    "rnd": ("groups",),
}
CALLS = [
    ["surprisal@2", "awrf"],
    ["surprisal@2", "novelty@2", "ee_loss", "awrf"],
    ["novelty@2", "ee_loss", "rnd"],
]


def _bits(values: pl.Series) -> list[object]:
    return [v if v == v else "NaN" for v in values.to_list()]  # NaN: rnd of one group


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize("metrics", CALLS, ids=[", ".join(c) for c in CALLS])
def test_beyond_accuracy_beside_judged_exposure(metrics: list[str], lazy: bool) -> None:
    def tables(names: set[str]) -> dict[str, pl.DataFrame | pl.LazyFrame]:
        return {n: (READS[n].lazy() if lazy else READS[n]) for n in names}

    run = RUN.lazy() if lazy else RUN
    needed = {name for m in metrics for name in CASES[m]}
    out = irm.evaluate(run, metrics, **tables(needed))  # type: ignore[arg-type]
    got = out.collect() if isinstance(out, pl.LazyFrame) else out
    for metric in metrics:
        alone = irm.evaluate(run, [metric], **tables(set(CASES[metric])))  # type: ignore[arg-type]
        value = (alone.collect() if isinstance(alone, pl.LazyFrame) else alone)[metric]
        assert _bits(got[metric]) == _bits(value)
