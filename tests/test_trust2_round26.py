"""Trust at every joint, round 26 (second part).

1. ``systems=`` with ``labels=``: the predictions of several systems over the same
   (query, doc) pairs were refused as duplicates, so several systems could not share one
   labels table. Each system's predictions are now scored against the one labels table:
   a pair is a duplicate where one system predicts it twice (refused naming the system)
   or where ``labels=`` holds it twice; the values are those of each system scored
   alone, bit for bit, on one machine (DataFrame, LazyFrame, out of core with
   ``buckets=``), Spark and Dask alike.
2. A list-shaped run (doc_id lists, parallel score lists, no list of ranks) whose scores
   rise along a list is refused under ``order='auto'`` in words of the lists' order
   where evaluate refused it so, and now also by ``irm.compare``, by the ``irm``
   command line (its ``--order`` flags, one line on stderr naming the file, exit 2) and
   for a list-shaped ``reference=``; a reference in the long form keeps its columns'
   words.
3. Query ids of two kinds in ``queries=`` and the run are refused naming ``queries=``
   (the pinned texts: tests/test_trust_round26.py, tests/test_joints.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io, irm_in_process, lists_refused

# --- 1. systems= sharing one labels table ----------------------------------------------

LABELS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [10, 11, 12, 10, 13, 11, 12, 14],
        "label": [1, 0, 1, 0, 1, 0, 1, 0],
    }
)
#: three systems' predictions of every labelled pair (rows in no set order)
SYSTEMS = pl.DataFrame(
    {
        "system": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
        "user": [1, 1, 1, 2, 2, 3, 3, 3] * 3,
        "item": [10, 11, 12, 10, 13, 11, 12, 14] * 3,
        "prediction": [
            *[0.9, 0.2, 0.6, 0.4, 0.7, 0.3, 0.8, 0.1],
            *[0.1, 0.5, 0.5, 0.3, 0.2, 0.9, 0.6, 0.7],
            *[0.6, 0.6, 0.6, 0.25, 0.75, 0.05, 0.95, 0.5],
        ],
        "day": (["mon"] * 4 + ["tue"] * 4) * 3,
    }
).sample(fraction=1.0, shuffle=True, seed=7)
PAIRS = {"query_id": "user", "doc_id": "item"}
METRICS = ["auc", "gauc", "logloss", "rmse"]
LOCAL = ["frame", "lazy", "buckets"]
ENGINES = ["spark", "dask"]

#: case: predictions, labels, options beside PAIRS
CASES: dict[str, tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]] = {
    "every pair": (SYSTEMS, LABELS, {}),
    "with by=": (SYSTEMS, LABELS, {"by": "day"}),
    "per_query": (SYSTEMS, LABELS, {"per_query": True}),
    "unmatched='drop'": (
        SYSTEMS.filter(~((pl.col("system") == "b") & (pl.col("user") == 3))),
        LABELS.filter(pl.col("item") != 14),
        {"unmatched": "drop"},
    ),
}


def _evaluate(
    route: str, request: Any, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any
) -> pl.DataFrame:
    if route in ENGINES:
        evaluate, to_engine, back = engine_io(route, request)
        return back(evaluate(to_engine(predictions), METRICS, labels=to_engine(labels), **kw))
    if route == "lazy":
        return irm.evaluate(predictions.lazy(), METRICS, labels=labels.lazy(), **kw).collect()
    extra = {"buckets": 4} if route == "buckets" else {}
    return irm.evaluate(predictions, METRICS, labels=labels, **extra, **kw)


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in ("system", "day", "user") if c in frame.columns]
    return frame.sort(keys)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.IrmWarning")
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_systems_share_one_labels_table_as_each_alone(
    route: str, case: str, request: pytest.FixtureRequest
) -> None:
    predictions, labels, kw = CASES[case]
    got = _sorted(_evaluate(route, request, predictions, labels, systems="system", **PAIRS, **kw))
    # On an engine, each system alone is scored on one machine: an engine's bits are one
    # machine's (tests/test_same_bits_every_engine.py), and three engine jobs more per
    # case would hold seconds of the suite's time each.
    single = "frame" if route in ENGINES else route
    alone = []
    for system in ("a", "b", "c"):
        own = predictions.filter(pl.col("system") == system).drop("system")
        out = _evaluate(single, request, own, labels, **PAIRS, **kw)
        alone.append(out.select(pl.lit(system).alias("system"), pl.all()))
    want = _sorted(pl.concat(alone))
    assert got.columns == want.columns
    assert got.rows() == want.rows()
    assert got["system"].unique().sort().to_list() == ["a", "b", "c"]


#: case: predictions, labels, the message
DUPLICATES = {
    "one system's pair twice": (
        pl.concat([SYSTEMS, SYSTEMS.filter((pl.col("system") == "b") & (pl.col("item") == 13))]),
        LABELS,
        "2 prediction(s) share a (user, item) pair with another prediction of the same "
        "system (first in the group system='b') (e.g. (2, 13)); keep one prediction per "
        "system and pair, e.g. .unique(['system', 'user', 'item'])",
    ),
    "a pair twice in labels=": (
        SYSTEMS,
        pl.concat([LABELS, LABELS.filter(pl.col("item") == 14)]),
        "labels= holds a (user, item) pair more than once: 6 row(s) share one with "
        "another label, counted once per system whose predictions it is scored against (e.g. "
        "(3, 14)); "
        "every system's predictions are scored against one label per pair: keep one, "
        "e.g. labels.unique(['user', 'item'])",
    ),
}


@pytest.mark.parametrize("case", list(DUPLICATES))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_a_duplicate_within_one_system_or_the_labels_is_refused(
    route: str, case: str, request: pytest.FixtureRequest
) -> None:
    predictions, labels, message = DUPLICATES[case]
    with pytest.raises(irm.DuplicateError, match=f"^{re.escape(message)}$"):
        _evaluate(route, request, predictions, labels, systems="system", **PAIRS)


def test_without_systems_two_predictions_of_a_pair_are_still_refused() -> None:
    with pytest.raises(
        irm.DuplicateError,
        match=re.escape(
            "9 row(s) share a (user, item) pair with another row on the same side (e.g. "
            "(1, 10)); keep one prediction and one label per pair, e.g. "
            ".unique(['user', 'item'])"
        ),
    ):
        irm.evaluate(SYSTEMS.filter(pl.col("user") == 1), METRICS, labels=LABELS, **PAIRS)


# --- 2. the lists' order on compare, the command line and reference= ------------------

#: scores that fall along each list, and a run whose scores rise along q2's
GOOD = pl.DataFrame(
    {
        "query_id": ["q1", "q2"],
        "doc_id": [["a", "b"], ["c", "d"]],
        "score": [[0.9, 0.1], [0.8, 0.2]],
    }
)
RISING = GOOD.with_columns(pl.Series("score", [[0.8, 0.2], [0.1, 0.9]]))
JUDGMENTS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "c"], "relevance": [1, 1]})
#: a long reference whose own rank column and scores disagree in q1
LONG_REFERENCE = pl.DataFrame(
    {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "rank": [1, 2], "score": [0.1, 0.9]}
)


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _lazy(frame: pl.DataFrame, route: str) -> Any:
    return frame.lazy() if route == "lazy" else frame


@pytest.mark.parametrize(
    ("runs", "system"),
    [
        ({"x": GOOD, "y": RISING}, "y"),
        ({"x": RISING, "y": GOOD}, "x"),
    ],
    ids=["second system", "first system"],
)
@pytest.mark.parametrize("route", ["frame", "lazy"])
def test_compare_names_the_lists_order(
    route: str, runs: dict[str, pl.DataFrame], system: str
) -> None:
    message = lists_refused("run", f"'q2' (system={system!r})")
    given = {name: _lazy(frame, route) for name, frame in runs.items()}
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare(given, ["ndcg@2"], qrels=JUDGMENTS)


@pytest.mark.parametrize("route", ["frame", "lazy", "buckets"])
def test_list_shaped_reference_names_the_lists_order(route: str) -> None:
    extra = {"buckets": 2} if route == "buckets" else {}
    message = lists_refused("reference (reference=)", "'q2'")
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        _collected(
            irm.evaluate(_lazy(GOOD, route), ["rbo@2"], reference=_lazy(RISING, route), **extra)
        )


@pytest.mark.parametrize("run", ["lists", "long"])
def test_long_reference_keeps_its_columns_words(run: str) -> None:
    given = GOOD if run == "lists" else GOOD.explode("doc_id", "score")
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            "columns 'rank' and 'score' of the reference (reference=) order query 'q1' "
            "differently: 1 document(s) score lower than a document ranked below them"
        ),
    ):
        irm.evaluate(given, ["rbo@2"], reference=LONG_REFERENCE, order="auto")


def _cli_refused(frame: str, query: str) -> str:
    return (
        lists_refused(frame, query)
        .replace("order='auto'", "--order auto")
        .replace("order='rank'", "--order rank")
        .replace("order='score'", "--order score")
    )


def _jsonl(path: Path, frame: pl.DataFrame) -> None:
    frame.write_ndjson(path)


@pytest.mark.parametrize(
    ("args", "lead", "frame", "query"),
    [
        (
            ["rising.jsonl", "--qrels", "qrels.txt", "-m", "ndcg@2"],
            "rising.jsonl: ",
            "run",
            "'q2'",
        ),
        (
            ["good.jsonl", "rising.jsonl", "--qrels", "qrels.txt", "-m", "ndcg@2"],
            "",
            "run",
            "'q2' (run='rising')",
        ),
        (
            ["good.jsonl", "--reference", "rising.jsonl", "-m", "rbo@2"],
            "rising.jsonl: ",
            "reference (--reference)",
            "'q2'",
        ),
    ],
    ids=["one run", "two runs", "reference"],
)
def test_command_line_names_the_lists_order(
    tmp_path: Path, args: list[str], lead: str, frame: str, query: str
) -> None:
    _jsonl(tmp_path / "good.jsonl", GOOD)
    _jsonl(tmp_path / "rising.jsonl", RISING)
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 c 1\n")
    done = irm_in_process("evaluate", *args, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {lead}{_cli_refused(frame, query)}\n"
