"""``irm.reproducibility``: repro_eval 0.5.0's measures, from ``peers_repro.json``
(made by ``tests/data/agreement/make_peers.py`` with repro_eval and pytrec_eval)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

PEERS = json.loads((Path(__file__).parent / "data" / "agreement" / "peers_repro.json").read_text())
METRICS = ["ndcg_cut_10", "P_10", "map"]


def _run(name: str, lazy: bool) -> pl.DataFrame | pl.LazyFrame:
    frame = pl.DataFrame(PEERS["runs"][name], schema=["query_id", "doc_id", "score"], orient="row")
    return frame.lazy() if lazy else frame


@pytest.fixture(scope="module", params=[False, True], ids=["DataFrame", "LazyFrame"])
def result(request: pytest.FixtureRequest) -> pl.DataFrame:
    lazy = request.param
    qrels = pl.DataFrame(PEERS["qrels"], schema=["query_id", "doc_id", "relevance"], orient="row")
    return irm.reproducibility(
        {"baseline": _run("orig_b", lazy), "advanced": _run("orig_a", lazy)},
        {"baseline": _run("rep_b", lazy), "advanced": _run("rep_a", lazy)},
        METRICS,
        qrels=qrels,
    )


def _value(result: pl.DataFrame, measure: str, metric: str | None, run: str | None) -> float:
    rows = result.filter(
        (pl.col("measure") == measure)
        & (pl.col("metric").is_null() if metric is None else pl.col("metric") == metric)
        & (pl.col("run").is_null() if run is None else pl.col("run") == run)
    )
    assert rows.height == 1, (measure, metric, run)
    value: float = rows["value"][0]
    return value


CASES = [
    (key.split("|")[0], metric, key.split("|")[1] or None, value)
    for key, values in PEERS["values"].items()
    for metric, value in (values.items() if isinstance(values, dict) else [(None, values)])
]


@pytest.mark.parametrize(("measure", "metric", "run", "want"), CASES)
def test_equal_to_repro_eval(
    result: pl.DataFrame, measure: str, metric: str | None, run: str | None, want: float
) -> None:
    assert _value(result, measure, metric, run) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_one_tidy_frame(result: pl.DataFrame) -> None:
    assert result.columns == ["measure", "metric", "run", "value"]
    assert result.height == len(CASES)
    assert result["measure"].unique(maintain_order=True).to_list() == [
        "ktu",
        "rbo",
        "rmse",
        "nrmse",
        "er",
        "delta_ri",
        "p_paired",
        "p_unpaired",
    ]


def test_replicability_has_the_unpaired_measures_only() -> None:
    qrels = pl.DataFrame(PEERS["qrels"], schema=["query_id", "doc_id", "relevance"], orient="row")
    out = irm.reproducibility(
        {"baseline": _run("orig_b", False), "advanced": _run("orig_a", False)},
        {"baseline": _run("rep_b", False), "advanced": _run("rep_a", False)},
        METRICS,
        qrels=qrels,
        qrels_reproduced=qrels,
    )
    assert out["measure"].unique(maintain_order=True).to_list() == ["er", "delta_ri", "p_unpaired"]


@pytest.mark.parametrize(
    ("original", "reproduced", "message"),
    [
        (
            {"base": 1},
            {"baseline": 1},
            "original= maps 'baseline' (and optionally 'advanced') to runs, got keys ['base']",
        ),
        (
            {"baseline": 1, "advanced": 1},
            {"baseline": 1},
            "original= has ['advanced', 'baseline'] and reproduced= ['baseline']",
        ),
    ],
)
def test_bad_keys(original: Any, reproduced: Any, message: str) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.reproducibility(original, reproduced, ["map"], qrels=pl.DataFrame())


def test_grouping_options_are_refused() -> None:
    with pytest.raises(
        InvalidValueError, match=re.escape("systems= is not an option of reproducibility")
    ):
        irm.reproducibility(
            {"baseline": 1}, {"baseline": 1}, ["map"], qrels=pl.DataFrame(), systems="s"
        )  # type: ignore[arg-type]
