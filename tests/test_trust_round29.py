"""Round 29: trust at every joint.

* The judgments' completeness is no system's quality: ``judged@k``, ``unjudged@k`` and
  the RBP residuals (``rbp_residual``, ``trec_rbp_resid``: the weight of the positions
  whose relevance is unknown) declared a direction, so ``compare`` counted wins for
  more judged documents (and for an empty ranking's 0 in ``unjudged@k`` and
  ``trec_rbp_resid``), the report marked and bolded them, ``optimize_fusion`` tuned on
  them and ``system_agreement`` ordered systems by them. They declare none now, as
  ``num_nonrel_judged_ret`` does: their values stay, nothing reads "better" from them.
"""

from __future__ import annotations

import re
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm

#: the judgments' completeness, what the pool judged of a ranking (the shares at k = 2)
REQUESTS = ["judged@2", "unjudged@2", "rbp_residual", "trec_rbp_resid"]

# q1, q2 judge r (relevant) and j (not); x and y are unjudged. ``full`` lists r, j on
# both; ``new`` lists r, then the unjudged x on q1 (more unjudged, the same P@1);
# ``part`` lists r, j on q1 and misses q2 (an empty ranking there).
_QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["r", "j"] * 2, "relevance": [1, 0] * 2}
)
_RUNS = pl.DataFrame(
    {
        "system": ["full"] * 4 + ["new"] * 4 + ["part"] * 2,
        "query_id": ["q1", "q1", "q2", "q2"] * 2 + ["q1", "q1"],
        "doc_id": ["r", "j", "r", "j", "r", "x", "r", "j", "r", "j"],
        "rank": [1, 2] * 5,
    }
)


def test_compare_counts_no_win_for_judged_documents_nor_for_a_missed_query() -> None:
    """new against full: judged@2 1/2 below 1 on q1 (b's x), the residuals above; part
    against full misses q2, an empty ranking: unjudged@2 0 and trec_rbp_resid 0 there,
    their lowest, which counted as part's win (with a warning). Now no wins, ties or
    losses, no warning of a flattering empty ranking, and the report marks nothing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.compare(_RUNS, [*REQUESTS, "P@1"], qrels=_QRELS, baseline="full")
    said = [str(w.message) for w in caught if "as an empty ranking" in str(w.message)]
    assert said == []
    rows = out.filter(pl.col("metric") != "P@1")
    assert rows.select("wins", "ties", "losses", "higher_is_better").unique().rows() == [
        (None, None, None, None)
    ]
    # the values stay: part's unjudged@2 and trec_rbp_resid are 0 on q1 (no unjudged
    # document) and on the missed q2 (trec_eval's 0 for an empty ranking)
    means = {(r["metric"], r["system"]): r["mean"] for r in rows.iter_rows(named=True)}
    assert means[("judged@2", "new")] == pytest.approx(0.75)
    assert means[("unjudged@2", "part")] == 0.0
    assert means[("trec_rbp_resid", "part")] == 0.0
    markdown = irm.report(out, markers="daggers").to_markdown().splitlines()
    assert markdown[2:5] == [
        "| full | 1.0000 | 0.0000 | 0.6400 | 0.0000 | **1.0000** |",
        "| new | 0.7500 | 0.2500 | 0.7200 | 0.4500 | **1.0000** |",
        "| part | 0.5000 | 0.0000 | 0.8200 | 0.0000 | 0.5000 |",
    ]
    legend = (
        "no better direction for judged@2, unjudged@2, rbp_residual, trec_rbp_resid: "
        "nothing marked or bold"
    )
    assert legend in markdown


@pytest.mark.parametrize("name", REQUESTS)
def test_optimize_fusion_and_system_agreement_read_no_direction(name: str) -> None:
    runs = {"a": _RUNS.filter(system="full"), "b": _RUNS.filter(system="new")}
    message = (
        f"metric={name!r} has no better direction (neither a higher nor a lower value is "
        "better), so there is no best weight to find; optimize_fusion maximises or "
        "minimises one metric (e.g. metric='ndcg@10')"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.optimize_fusion(runs, name, qrels=_QRELS, step=0.5)
    values = irm.evaluate(_RUNS, ["P@1", name], qrels=_QRELS, systems="system", per_query=True)
    message = (
        f"metric {name!r} of b has no better direction (neither a higher nor a lower value "
        "is better), so the systems have no best-first order: say which way to order them "
        "with higher_is_better_b=True or higher_is_better_b=False"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(values, values, metric="P@1", metric_b=name)
