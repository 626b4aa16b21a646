"""A metric string is parsed once, at the door: every entry point parses each metric it
is given exactly once per call (the plan below it receives the parsed requests), and a
namespace method builds its one request from its keywords, never parsing it again."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.metrics import parser

QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]}
)
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a"],
        "score": [2.0, 1.0, 2.0, 1.0],
    }
)
PREFS = pl.DataFrame(
    {
        "query_id": ["q1"] * 3,
        "jg": ["u"] * 3,
        "jsg": ["s"] * 3,
        "doc_id": ["a", "b", "c"],
        "rel_level": [2.0, 1.0, 0.0],
    }
)
QRELS_JG = pl.DataFrame(
    {
        "query_id": ["q1"] * 4,
        "jg": ["alice", "alice", "bob", "bob"],
        "doc_id": ["a", "b", "a", "b"],
        "relevance": [1, 0, 0, 1],
    }
)
LOG = pl.DataFrame(
    {
        "session_id": ["s1"] * 3 + ["s2"] * 3,
        "position": [1, 2, 3] * 2,
        "clicked": [False, True, False, True, False, False],
    }
)
RECS = pl.DataFrame({"user_id": [1, 1, 2], "item_id": ["a", "b", "a"]})
HISTORY = pl.DataFrame({"user_id": [1, 2, 2, 3], "item_id": ["c", "a", "b", "a"]})
SYSTEM_B = RUN.with_columns(pl.col("score").reverse().over("query_id"))
PREDICTIONS = pl.DataFrame({"label": [0, 1, 1, 0], "prediction": [0.1, 0.8, 0.4, 0.3]})


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every string given to the parser (``parse_metric``, wherever it was imported)
    and every request built from keywords (``request``, as ``request:<metric>``)."""
    calls: Counter[str] = Counter()
    original_parse, original_request = parser.parse_metric, parser.request

    def parse_metric(text: str) -> Any:
        calls[text] += 1
        return original_parse(text)

    def request(metric: str, *args: Any, **kwargs: Any) -> Any:
        calls[f"request:{metric}"] += 1
        return original_request(metric, *args, **kwargs)

    for name, module in list(sys.modules.items()):
        if not name.startswith("polars_irmetrics"):
            continue
        if getattr(module, "parse_metric", None) is original_parse:
            monkeypatch.setattr(module, "parse_metric", parse_metric)
        if getattr(module, "request", None) is original_request:
            monkeypatch.setattr(module, "request", request)
    return calls


def _collected(frame: Any) -> Any:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


STRING_DOORS: dict[str, tuple[Callable[[pl.DataFrame | pl.LazyFrame], Any], list[str]]] = {
    "evaluate": (
        lambda kind: irm.evaluate(kind(RUN), ["P@1", "ndcg@10", "mrr"], qrels=QRELS),
        ["P@1", "ndcg@10", "mrr"],
    ),
    "evaluate_prefs": (
        lambda kind: irm.evaluate_prefs(
            kind(RUN), ["prefs_simp", "prefs_num_prefs_ful"], prefs=PREFS
        ),
        ["prefs_simp", "prefs_num_prefs_ful"],
    ),
    "evaluate_prefs_default": (
        lambda kind: irm.evaluate_prefs(kind(RUN), prefs=PREFS),
        list(irm.offline.prefs.PREFS_MEASURES),
    ),
    "evaluate_jg": (
        lambda kind: irm.evaluate_jg(kind(RUN), ["map", "P@1"], qrels_jg=QRELS_JG),
        ["map", "P@1"],
    ),
    "evaluate_online": (
        lambda kind: irm.evaluate_online(kind(LOG), ["ctr@3", "click_mrr"]),
        ["ctr@3", "click_mrr"],
    ),
    "beyond_accuracy": (
        lambda kind: irm.beyond_accuracy(
            kind(RECS), ["coverage", "novelty"], interactions=HISTORY
        ),
        ["coverage", "novelty"],
    ),
    "compare": (
        lambda kind: irm.compare(
            {"a": RUN, "b": SYSTEM_B}, ["P@1", "mrr"], qrels=QRELS, baseline="a"
        ),
        ["P@1", "mrr"],
    ),
}


@pytest.mark.parametrize("kind", [pl.DataFrame.lazy, lambda frame: frame], ids=["lazy", "eager"])
@pytest.mark.parametrize("door", sorted(STRING_DOORS))
def test_each_metric_string_is_parsed_once_per_call(
    door: str, kind: Callable[[pl.DataFrame], Any], parsed: Counter[str]
) -> None:
    call, metrics = STRING_DOORS[door]
    _collected(call(kind))
    assert parsed == Counter(metrics)


NAMESPACE: dict[str, tuple[Callable[[Any], Any], str]] = {
    "precision": (lambda ns: ns.precision(1, qrels=QRELS), "precision"),
    "ndcg": (lambda ns: ns.ndcg(10, gain="exponential", qrels=QRELS), "ndcg"),
    "map": (lambda ns: ns.map(qrels=QRELS, per_query=True), "map"),
    "auc": (lambda ns: ns.auc(), "auc"),
    "evaluate": (lambda ns: ns.evaluate(["P@1", "mrr"], qrels=QRELS), ""),
}


@pytest.mark.parametrize("lazy", [False, True], ids=["df", "lf"])
@pytest.mark.parametrize("method", sorted(NAMESPACE))
def test_a_namespace_method_builds_its_request_once(
    method: str, lazy: bool, parsed: Counter[str]
) -> None:
    call, metric = NAMESPACE[method]
    frame = PREDICTIONS if metric == "auc" else RUN
    _collected(call(frame.lazy().irm if lazy else frame.irm))
    expected = Counter({f"request:{metric}": 1}) if metric else Counter(["P@1", "mrr"])
    assert parsed == expected


def test_the_cli_parses_each_metric_once(
    tmp_path: Any, parsed: Counter[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # the CLI is a door: it parses the list once (the route says which columns a run
    # file must have) and hands the parsed requests to the door's one body
    from polars_irmetrics.cli.main import main

    RUN.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    args = ["evaluate", str(tmp_path / "run.parquet"), "--qrels", str(tmp_path / "qrels.parquet"),
            "-m", "P@1", "-m", "mrr"]  # fmt: skip
    assert main(args) == 0
    assert "mrr" in capsys.readouterr().out
    assert parsed == Counter(["P@1", "mrr"])
