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


# ------------------------------------------------ ids that do not line up are named
_SCORES = pl.DataFrame(
    {"system": ["A", "A", "B", "B"], "query_id": ["q1", "q2"] * 2, "ndcg": [0.1, 0.2, 0.3, 0.4]}
)


@pytest.mark.parametrize(
    ("names_b", "hint"),
    [
        (
            ["a", "a", "b", "b"],
            "2 system id(s) of column 'system' of a match an id of b only when case is "
            "ignored ('A' against 'a'): ids are compared exactly; give a and b the same "
            "spelling, e.g. pl.col('system').str.to_lowercase() on each.",
        ),
        (
            ["A", "A", " B", " B"],
            "1 system id(s) of column 'system' of a match an id of b only when the spaces "
            "around the ids are ignored ('B' against ' B'): ids are compared exactly; give "
            "a and b the same spelling, e.g. pl.col('system').str.strip_chars() on each.",
        ),
    ],
)
def test_system_agreement_says_system_ids_spelt_apart(names_b: list[str], hint: str) -> None:
    b = _SCORES.with_columns(system=pl.Series(names_b))
    first = "A" if names_b[0] != "A" else "B"
    message = (
        f"system {first!r} is in one result and not the other; a and b must evaluate the "
        f"same systems. {hint}"
    )
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(_SCORES, b, metric="ndcg")


# both runs list q1's a then b (and q2's a); mapfuse's table is each run's MAP
_LONG = pl.DataFrame(
    {
        "system": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
        "query_id": ["q1", "q1", "q2"] * 2,
        "doc_id": ["a", "b", "a"] * 2,
        "score": [2.0, 1.0, 1.0] * 2,
    }
)
_JUDGED = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
_NUMBERS = (
    "; the runs' column 'system' ({dtype}) names them {ran} and fitted's column 'run' "
    "{held}: the same numbers, but run names are matched by their text, and fitted was "
    "fit on another dtype of the column: give it one dtype in fit_fusion and in fuse, e.g. "
    "pl.col('system').cast(pl.Int64) on the runs of both"
)


@pytest.mark.parametrize(
    ("fit_dtype", "fuse_dtype", "message"),
    [
        (
            pl.Int64,
            pl.Float64,
            "fitted has no parameters for run '1.0'; fit them on the same runs (fitted "
            "runs: '1', '2')"
            + _NUMBERS.format(dtype="Float64", ran="'1.0', '2.0'", held="'1', '2'"),
        ),
        (
            pl.Float64,
            pl.Int64,
            "fitted has no parameters for run '1'; fit them on the same runs (fitted "
            "runs: '1.0', '2.0')"
            + _NUMBERS.format(dtype="Int64", ran="'1', '2'", held="'1.0', '2.0'"),
        ),
    ],
)
def test_fuse_names_the_dtypes_of_fitted_runs_apart(
    fit_dtype: pl.DataType, fuse_dtype: pl.DataType, message: str
) -> None:
    fitted = irm.fit_fusion(
        _LONG.with_columns(pl.col("system").cast(fit_dtype)),
        "mapfuse",
        qrels=_JUDGED,
        system="system",
    )
    runs = _LONG.with_columns(pl.col("system").cast(fuse_dtype))
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.fuse(runs, "mapfuse", fitted=fitted, system="system")
    # a run column that is no text (1.0 beside the runs' '1.0') is refused as such
    numbers = fitted.with_columns(pl.col("run").cast(pl.Float64))
    refused = (
        "fitted's column 'run' has dtype Float64; fit_fusion writes each run's name as "
        "text (String), which fuse matches to the runs' names: pass the table it "
        "returned, or cast the column, e.g. fitted.with_columns(pl.col('run')"
        ".cast(pl.String))"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(refused)}$"):
        irm.fuse(runs, "mapfuse", fitted=numbers, system="system")


def test_fuse_says_fitted_run_names_spelt_apart() -> None:
    runs = {"bm25": _LONG.filter(system=1.0).drop("system")}
    runs["dense"] = _LONG.filter(system=2.0).drop("system")
    fitted = irm.fit_fusion(runs, "mapfuse", qrels=_JUDGED)
    shouted = {name.upper(): frame for name, frame in runs.items()}
    message = (
        "fitted has no parameters for run 'BM25'; fit them on the same runs (fitted runs: "
        "'bm25', 'dense'); 2 name(s) in the dict's keys match one of fitted's only when "
        "case is ignored ('BM25' against 'bm25'): run names are matched exactly; give the "
        "runs and fitted the same spelling, e.g. pl.col('run').str.to_lowercase() on "
        "fitted and the same change to the dict's keys"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.fuse(shouted, "mapfuse", fitted=fitted)
