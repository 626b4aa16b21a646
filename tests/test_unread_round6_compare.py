"""Comparison and fusion: an option the metrics or the method do not read is refused,
never ignored, and one they read reaches them.

compare and tukey_hsd refuse ``relevance_level=`` beside graded metrics alone, as
evaluate does; reproducibility refuses ``p=`` and ``cutoff=`` with ``qrels_reproduced=``
and hands the metrics' own options (``relevance_level=``, ``depth=``, ``judged_only=``)
to the metrics rather than to its rank similarity; fit_fusion refuses a score norm for
segfuse (its table is fitted on positions); optimize_fusion refuses ``seed=`` without
``folds=``; the fusions refuse ``system=`` with a dict of runs and a ``rank=`` or
``score=`` that names no column of the runs.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MetricParameterError
from tests.fusion_data import random_qrels, random_runs

# ----------------------------------------------------- 1. compare's relevance_level

QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["a", "b", "b", "c", "a", "c"],
        "relevance": [2, 1, 1, 2, 2, 1],
    }
)


def _run(*orders: list[str]) -> pl.DataFrame:
    rows = [(f"q{i + 1}", doc, 3.0 - j) for i, order in enumerate(orders) for j, doc in
            enumerate(order)]  # fmt: skip
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")


SYSTEMS = {
    "A": _run(["a", "b", "c"], ["a", "b", "c"], ["c", "b", "a"]),
    "B": _run(["b", "a", "c"], ["c", "a", "b"], ["a", "c", "b"]),
    "C": _run(["c", "a", "b"], ["b", "c", "a"], ["b", "a", "c"]),
}
LONG = pl.concat([run.with_columns(system=pl.lit(name)) for name, run in SYSTEMS.items()])


def _evaluate_message(metrics: list[str]) -> str:
    with pytest.raises(InvalidValueError) as raised:
        irm.evaluate(SYSTEMS["A"], metrics, qrels=QRELS, relevance_level=2)
    return str(raised.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: irm.compare(SYSTEMS, m, qrels=QRELS, relevance_level=2),
        lambda m: irm.tukey_hsd(SYSTEMS, m, qrels=QRELS, relevance_level=2),
        lambda m: LONG.irm.compare(m, qrels=QRELS, relevance_level=2),
    ],
    ids=["compare", "tukey_hsd", "df.irm.compare"],
)
@pytest.mark.parametrize("metrics", [["ndcg@10"], ["ndcg@2", "err"]])
def test_compare_refuses_relevance_level_as_evaluate_does(call: Any, metrics: list[str]) -> None:
    # fails on the old code: the graded metrics' values came back as if it were not given
    with pytest.raises(InvalidValueError) as raised:
        call(metrics)
    assert str(raised.value) == _evaluate_message(metrics)
    assert str(raised.value).startswith("relevance_level=2 is not read by metric")


def test_compare_hands_relevance_level_to_a_binary_metric() -> None:
    # pin (right before): a binary metric reads it, and its values change with it
    one = irm.compare(SYSTEMS, ["ndcg@2", "P@2"], qrels=QRELS, relevance_level=2)
    plain = irm.compare(SYSTEMS, ["ndcg@2", "P@2"], qrels=QRELS)
    assert one.filter(metric="ndcg@2")["mean"].equals(plain.filter(metric="ndcg@2")["mean"])
    assert not one.filter(metric="P@2")["mean"].equals(plain.filter(metric="P@2")["mean"])


# ------------------------------------------------------------ 2. and 3. reproducibility

ORIGINAL = {"baseline": SYSTEMS["A"], "advanced": SYSTEMS["B"]}
REPRODUCED = {"baseline": SYSTEMS["B"], "advanced": SYSTEMS["C"]}


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"p": 0.5}, "p=0.5 is"),
        ({"cutoff": 2}, "cutoff=2 is"),
        ({"p": 0.5, "cutoff": 2}, "p=0.5 and cutoff=2 are"),
    ],
)
def test_replicability_refuses_p_and_cutoff(given: dict[str, Any], named: str) -> None:
    # fails on the old code: no document order is compared there, and they were ignored
    message = f"{named} not read with qrels_reproduced= (replicability"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}"):
        irm.reproducibility(
            ORIGINAL, REPRODUCED, ["P@2"], qrels=QRELS, qrels_reproduced=QRELS, **given
        )


def test_replicability_takes_the_default_p_and_cutoff_and_reproducibility_reads_them() -> None:
    # pin (right before): the defaults written out change nothing, and without
    # qrels_reproduced= p= and cutoff= set the document orders' RBO and KTU
    plain = irm.reproducibility(ORIGINAL, REPRODUCED, ["P@2"], qrels=QRELS, qrels_reproduced=QRELS)
    same = irm.reproducibility(
        ORIGINAL, REPRODUCED, ["P@2"], qrels=QRELS, qrels_reproduced=QRELS, p=0.95, cutoff=1000
    )
    assert same.equals(plain)
    paired = irm.reproducibility(ORIGINAL, REPRODUCED, ["P@2"], qrels=QRELS)
    shallow = irm.reproducibility(ORIGINAL, REPRODUCED, ["P@2"], qrels=QRELS, p=0.5, cutoff=2)
    orders = pl.col("measure").is_in(["ktu", "rbo"])
    assert not shallow.filter(orders)["value"].equals(paired.filter(orders)["value"])


def _per_topic_rmse(options: dict[str, Any]) -> list[float]:
    """The RMSE of P@2 per run, from evaluate's per-query values with ``options``."""
    out = []
    for side in ("baseline", "advanced"):
        values = [
            irm.evaluate(runs[side], ["P@2"], qrels=QRELS, per_query=True, **options)
            .sort("query_id")["P@2"]
            .to_numpy()
            for runs in (ORIGINAL, REPRODUCED)
        ]
        out.append(float(((values[0] - values[1]) ** 2).mean() ** 0.5))
    return out


@pytest.mark.parametrize(
    "options", [{"relevance_level": 2}, {"depth": 1}, {"judged_only": True}], ids=str
)
def test_reproducibility_hands_the_metrics_options_to_the_metrics(options: dict[str, Any]) -> None:
    # fails on the old code: refused, naming 'ktu@1000' and 'rbo_repro_eval(p=0.95)@1000'
    # (the rank similarity inside), which the caller never asked for
    out = irm.reproducibility(ORIGINAL, REPRODUCED, ["P@2"], qrels=QRELS, **options)
    rmse = out.filter(measure="rmse").sort(pl.col("run") == "advanced")["value"].to_list()
    assert rmse == pytest.approx(_per_topic_rmse(options))
    # the document orders read none of them
    orders = pl.col("measure").is_in(["ktu", "rbo"])
    plain = irm.reproducibility(ORIGINAL, REPRODUCED, ["P@2"], qrels=QRELS)
    assert out.filter(orders).equals(plain.filter(orders))


def test_reproducibility_refuses_an_option_no_metric_reads_naming_the_callers_metrics() -> None:
    # pin (right before): an option none of the caller's metrics reads is refused by
    # the per-topic evaluation first, in the caller's metrics' words
    with pytest.raises(InvalidValueError) as raised:
        irm.reproducibility(ORIGINAL, REPRODUCED, ["ndcg@2"], qrels=QRELS, relevance_level=2)
    assert str(raised.value) == _evaluate_message(["ndcg@2"])
    assert "ktu" not in str(raised.value)


# --------------------------------------------------------------- 4. borda with positions

#: Runs that retrieve different documents: borda gives each run the others' too.
APART = {
    "A": pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}),
    "B": pl.DataFrame({"query_id": "q1", "doc_id": ["d", "e", "a"], "score": [3.0, 2.0, 1.0]}),
    "C": pl.DataFrame({"query_id": "q1", "doc_id": ["e", "a", "f"], "score": [3.0, 2.0, 1.0]}),
}


@pytest.mark.parametrize("method", ["rrf", "isr", "bordafuse", "condorcet"])
def test_borda_changes_a_fusion_of_positions_where_a_run_lacks_a_candidate(method: str) -> None:
    # pin (right before): norm='borda' places each run's unretrieved candidates after its
    # list, so it is read by a method of positions (and kept, not refused)
    borda = irm.fuse(APART, method, norm="borda")
    plain = irm.fuse(APART, method)
    assert not borda.equals(plain)


# ------------------------------------------------------------------ 5. segfuse's fit


@pytest.mark.parametrize("norm", ["min-max", "zmuv", "max", "sum"])
def test_fit_fusion_refuses_a_score_norm_for_segfuse(norm: str) -> None:
    # fails on the old code: the table is fitted on positions, and came back the same
    runs, qrels = random_runs(3, n_queries=4), random_qrels(4, n_queries=4)
    message = (
        f"norm={norm!r} changes nothing in fit_fusion's segfuse table, which is fitted on "
        "each run's positions and not its scores"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}"):
        irm.fit_fusion(runs, "segfuse", qrels=qrels, norm=norm)


def test_segfuse_takes_its_score_norm_in_fuse_and_position_norms_in_the_fit() -> None:
    # pin (right before): fuse reads segfuse's normalised scores; a norm that changes
    # the positions changes the fitted table
    runs, qrels = random_runs(3, n_queries=4), random_qrels(4, n_queries=4)
    fitted = irm.fit_fusion(runs, "segfuse", qrels=qrels)
    plain = irm.fuse(runs, "segfuse", fitted=fitted)
    assert not irm.fuse(runs, "segfuse", fitted=fitted, norm="min-max").equals(plain)
    inverted = irm.fit_fusion(runs, "segfuse", qrels=qrels, norm="min-max-inverted")
    assert not inverted.equals(fitted)


# ------------------------------------------------------------ 6. optimize_fusion's seed


def test_optimize_fusion_refuses_seed_without_folds() -> None:
    # fails on the old code: nothing is drawn without folds, and seed= was ignored
    runs, qrels = random_runs(3, n_queries=6), random_qrels(4, n_queries=6)
    message = "seed=5 is not read without folds=:"
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}"):
        irm.optimize_fusion(runs, "ndcg@10", qrels=qrels, step=0.5, seed=5)


def test_optimize_fusion_reads_seed_with_folds() -> None:
    # pin (right before): with folds= it is read, and the default needs no folds
    runs, qrels = random_runs(3, n_queries=6), random_qrels(4, n_queries=6)
    irm.optimize_fusion(runs, "ndcg@10", qrels=qrels, step=0.5, seed=0)
    _, table = irm.optimize_fusion(runs, "ndcg@10", qrels=qrels, step=0.5, folds=2, seed=5)
    assert table.height == 2


# ------------------------------------------------------- 7. system= with a dict of runs

RUNS, FIT_QRELS = random_runs(3, n_queries=4), random_qrels(4, n_queries=4)


@pytest.mark.parametrize(
    "call",
    [
        lambda **kw: irm.fuse(RUNS, "rrf", **kw),
        lambda **kw: irm.fit_fusion(RUNS, "posfuse", qrels=FIT_QRELS, **kw),
        lambda **kw: irm.optimize_fusion(RUNS, "ndcg@10", qrels=FIT_QRELS, step=0.5, **kw),
    ],
    ids=["fuse", "fit_fusion", "optimize_fusion"],
)
def test_a_dict_of_runs_refuses_system(call: Any) -> None:
    # fails on the old code: system= names a long frame's run column, and was ignored
    message = "system='nonexistent' is not read with a dict of runs"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}"):
        call(system="nonexistent")


# ------------------------------------------------------ 8. rank= and score= of no column


def _long(runs: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return pl.concat([run.with_columns(system=pl.lit(name)) for name, run in runs.items()])


def _ranked(runs: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    return {
        name: run.with_columns(
            pl.col("score").rank("ordinal", descending=True).over("query_id").alias("rank")
        ).drop("score")
        for name, run in runs.items()
    }


@pytest.mark.parametrize(
    "call",
    [
        lambda runs, **kw: irm.fuse(runs, "rrf", **kw),
        lambda runs, **kw: irm.fit_fusion(runs, "posfuse", qrels=FIT_QRELS, **kw),
        lambda runs, **kw: irm.optimize_fusion(runs, "ndcg@10", qrels=FIT_QRELS, step=0.5, **kw),
        lambda runs, **kw: irm.fuse(_long(runs), "rrf", system="system", **kw),
        lambda runs, **kw: _long(runs).irm.fuse("rrf", system="system", **kw),
    ],
    ids=["fuse", "fit_fusion", "optimize_fusion", "fuse-long", "df.irm.fuse"],
)
@pytest.mark.parametrize(
    ("name", "ranked", "by"), [("rank", False, "score"), ("score", True, "rank")]
)
def test_an_order_column_of_no_run_is_refused(call: Any, name: str, ranked: bool, by: str) -> None:
    # fails on the old code: a run is ordered by its score column where it has one, else
    # by its rank column (fuse's documented rule), so the other name was ignored
    runs = _ranked(RUNS) if ranked else RUNS
    message = f"{name}='r' names no column of the runs (their columns: "
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}") as raised:
        call(runs, **{name: "r"})
    # the door's words (ground.options.check_named_columns), fusion's twin check retired;
    # every run here is ordered by its ``by`` column
    role = {"rank": "ranks (1 = top)", "score": "scores"}[name]
    assert str(raised.value).endswith(
        f"name the column of their {role} with {name}=..., or drop {name}= (without the "
        "column the values would be computed otherwise, in silence)"
    )


def test_a_rank_column_of_some_runs_is_read() -> None:
    # pin (right before): runs with scores beside runs with ranks named by rank=
    ranked = _ranked(RUNS)
    mixed = {"run0": RUNS["run0"], "run1": ranked["run1"].rename({"rank": "r"})}
    fused = irm.fuse(mixed, "rrf", rank="r").rename({"r": "rank"})  # named as rank=
    assert fused.equals(irm.fuse({"run0": RUNS["run0"], "run1": ranked["run1"]}, "rrf"))
