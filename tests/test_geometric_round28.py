"""``agg='geometric'`` of a metric whose per-query values may be below 0 (round 28).

trec_eval's geometric mean floors each value at 0.00001 (``gm_map``), which is right
for values in [0, 1]; a value below 0 was floored too, so ``mcc(agg='geometric')@1`` of
a query at 1 and one at -0.5 read 0.0032 (the same as 1 and 0) and ``utility`` of 0 and
-2 read 0.00001: numbers that read as means. A value below 0 has no logarithm: NaN.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import polars_irmetrics as irm

RUN = pl.DataFrame(
    {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "y"], "rank": [1, 2, 1, 2]}
)
#: a: x relevant at rank 1 (utility 1 - 1 = 0; MCC@1 over the catalogue x, y, z:
#: tp 1, fp 0, fn 0, tn 3 - 1 - 0 = 2, (1 * 2 - 0) / sqrt(1 * 1 * 2 * 2) = 1); b: nothing
#: relevant retrieved (utility 0 - 2 = -2; tp 0, fp 1, fn 1, tn 1: -1 / sqrt(1 * 1 * 2 * 2))
QRELS = pl.DataFrame({"query_id": ["a", "b"], "doc_id": ["x", "z"], "relevance": [1, 1]})
HISTORY = pl.DataFrame({"query_id": ["a", "b", "c"], "doc_id": ["x", "y", "z"]})

CASES = [
    # (metric, per-query values by hand, the geometric mean by hand)
    ("utility(agg='geometric')", [0.0, -2.0], math.nan),
    ("mcc(agg='geometric')@1", [1.0, -0.5], math.nan),
    # values in [0, 1]: the floor as trec_eval's gm_map, exp((log 1 + log 1e-5) / 2)
    ("precision(agg='geometric')@1", [1.0, 0.0], math.sqrt(1e-5)),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize("buckets", [None, 2])
@pytest.mark.parametrize(("metric", "values", "mean"), CASES, ids=[c[0] for c in CASES])
def test_geometric_mean_of_negative_values_is_nan(
    metric: str, values: list[float], mean: float, buckets: int | None, lazy: bool
) -> None:
    run, qrels, history = (t.lazy() if lazy else t for t in (RUN, QRELS, HISTORY))
    kw: dict[str, object] = {"buckets": buckets} if buckets else {}
    if metric.startswith("mcc"):  # RecTools' catalogue: the history's items
        kw["interactions"] = history
    plain = metric.replace("(agg='geometric')", "")
    per_query = irm.evaluate(
        run,
        [plain],
        qrels=qrels,
        per_query=True,
        **{k: v for k, v in kw.items() if k != "buckets"},
    )
    out = irm.evaluate(run, [metric], qrels=qrels, **kw)
    if lazy:
        per_query, out = per_query.collect(), out.collect()
    assert per_query.sort("query_id")[plain].to_list() == values
    got = out[metric].item()
    if math.isnan(mean):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(mean, rel=1e-15)
