"""Elliot's popularity-bias and novelty metrics (issue 42): pop_rsp, pop_reo, aclt, epc, efd.

Expected values come from Elliot's own formula code (commit fc27efe), vendored in
``tests/fixtures/elliot/make_fixtures.py`` and run in a side environment (Elliot pins a
TensorFlow stack): ``tests/fixtures/elliot/elliot.json``. The same vendored functions
(numpy only) are the oracle for the Hypothesis-random inputs. Elliot's recommendations
are the run (users as queries), its test set the judgments, its training set
``interactions=``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from tests.helpers import irm_in_process, property_settings, script

FIXTURES = Path(__file__).parent / "fixtures" / "elliot"
CASES = json.loads((FIXTURES / "elliot.json").read_text())["cases"]
TOL = 1e-9
NAMES = ("pop_rsp", "pop_reo", "aclt", "epc", "efd")
#: the frame kinds met in turn along a peer's fixture cases (a covering design of
#: frame kind x case: every case compared once, both kinds met many times; the eager and
#: lazy paths giving the same values is the point of other tests, not of each case's)
KINDS = ("DataFrame", "LazyFrame")
HEADED = ("pop_rsp", "pop_reo", "aclt")
# random runs often retrieve no relevant document: the door warns, as it should
pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")


ELLIOT = script("tests/fixtures/elliot/make_fixtures.py")


#: added to the fixtures' item ids (0 to 31): the short head's ties go by the item id
#: compared as text here, by the integer order in Elliot's set of ids; ids with as many
#: digits order alike both ways, and only the ids' order reaches the metrics
_SHIFT = 1_000_000


def _tables(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    schema = {"query_id": pl.Int64, "doc_id": pl.Int64}
    reco = pl.DataFrame(case["reco"], schema={**schema, "score": pl.Float64}, orient="row")
    qrels = pl.DataFrame(case["test"], schema={**schema, "relevance": pl.Int64}, orient="row")
    train = pl.DataFrame(case["train"], schema=schema, orient="row")
    shift = pl.col("doc_id") + _SHIFT
    return reco.with_columns(shift), qrels.with_columns(shift), train.with_columns(shift)


def _label(name: str, k: int, ratio: float) -> str:
    return f"{name}(pop_ratio={ratio})@{k}" if name in HEADED else f"{name}@{k}"


def _same(ours: float | None, theirs: float | None) -> bool:
    """Equal to 1e-9; Elliot's nan (0/0, written null in the fixtures) is a NaN or a
    null here."""
    if theirs is None or (isinstance(theirs, float) and math.isnan(theirs)):
        return ours is None or math.isnan(ours)
    return ours is not None and math.isclose(ours, theirs, rel_tol=TOL, abs_tol=TOL)


def _ours(frame_kind: str, case: dict[str, Any], labels: list[str]) -> dict[str, float | None]:
    reco, qrels, train = _tables(case)
    if frame_kind == "LazyFrame":
        out = irm.evaluate(reco.lazy(), labels, qrels=qrels.lazy(), interactions=train.lazy())
        assert isinstance(out, pl.LazyFrame)
        result = out.collect()
    else:
        got = irm.evaluate(reco, labels, qrels=qrels, interactions=train)
        assert isinstance(got, pl.DataFrame)
        result = got
    return result.row(0, named=True)


@pytest.mark.parametrize(("frame_kind", "case"), [(KINDS[c % 2], c) for c in range(len(CASES))])
def test_equal_to_elliot_fixtures(frame_kind: str, case: int) -> None:
    data = CASES[case]
    wanted = {
        _label(name, v["k"], v["pop_ratio"]): v[name] for v in data["values"] for name in NAMES
    }
    ours = _ours(frame_kind, data, list(wanted))
    wrong = {k: (ours[k], v) for k, v in wanted.items() if not _same(ours[k], v)}
    assert not wrong


def test_worked_example_as_arithmetic(evaluate: Any) -> None:
    # train: item 10 has 3 users, 12 has 2, 11 and 13 one each: T = 7 pairs, 4 users.
    # pop_ratio 0.8: limit 5.6; 10 (before: 0) and 12 (before: 3) are the short head,
    # 11 (before 5 < 5.6) too; 13 (before 6) is the long tail.
    reco, qrels, train = _tables(ELLIOT.WORKED)
    got = evaluate(
        reco,
        ["aclt@3", "pop_rsp@3", "pop_reo@3", "epc@3", "efd@3"],
        qrels=qrels,
        interactions=train,
    ).row(0, named=True)
    assert got["aclt@3"] == (0 + 1) / 2  # user 2's item 13
    # rates: head 4 recommended / (3 + 3 - |{10,12}| - |{10,12}|) = 4/2; tail 1 / (1 + 1)
    a, b = 4 / 2, 1 / 2
    assert math.isclose(got["pop_rsp@3"], (abs(a - b) / 2) / ((a + b) / 2), rel_tol=1e-12)
    # pop_reo: user 1 finds 11 (head) of {11 (head), 13 (tail)}; user 2 finds 14 (no
    # training item, in neither group): head 1/1, tail 0/1
    a, b = 1.0, 0.0
    assert math.isclose(got["pop_reo@3"], (abs(a - b) / 2) / ((a + b) / 2), rel_tol=1e-12)
    disc = [1.0, 1 / math.log2(3), 0.5]
    # epc: user 1: 11 at place 2, 1 - 1/4; user 2: 14 at place 3, unseen: 1
    epc = ((disc[1] * 0.75) / sum(disc) + (disc[2] * 1.0) / sum(disc)) / 2
    assert math.isclose(got["epc@3"], epc, rel_tol=1e-12)
    # efd: -log2(1/7) for 11; 14 unseen counts as the least popular, -log2(1/7)
    efd = ((disc[1] * math.log2(7)) / sum(disc) + (disc[2] * math.log2(7)) / sum(disc)) / 2
    assert math.isclose(got["efd@3"], efd, rel_tol=1e-12)


_ids = st.integers(0, 6)


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    train = draw(st.lists(st.tuples(_ids, _ids), min_size=1, max_size=25, unique=True))
    test = draw(st.dictionaries(st.tuples(_ids, _ids), st.sampled_from([0, 1, 2]), max_size=15))
    lists = draw(
        st.dictionaries(_ids, st.lists(_ids, min_size=1, max_size=6, unique=True), min_size=1)
    )
    reco = [
        [u, i, float(len(items) - n)] for u, items in lists.items() for n, i in enumerate(items)
    ]
    return {
        "reco": reco,
        "test": [[u, i, r] for (u, i), r in test.items()],
        "train": [list(p) for p in train],
    }


@property_settings(30)
@given(case=_cases(), k=st.integers(1, 6), ratio=st.sampled_from([0.2, 0.5, 0.8, 0.95]))
def test_equal_to_elliot_on_random_inputs(case: dict[str, Any], k: int, ratio: float) -> None:
    theirs = ELLIOT.elliot_values(case, k, ratio)
    ours = _ours("DataFrame", case, [_label(n, k, ratio) for n in NAMES])
    for name in NAMES:
        assert _same(ours[_label(name, k, ratio)], theirs[name]), name


def test_by_groups_equal_each_group_alone(evaluate: Any) -> None:
    first, second = CASES[1], CASES[2]
    frames = []
    for system, case in (("a", first), ("b", second)):
        reco, _, _ = _tables(case)
        frames.append(reco.with_columns(system=pl.lit(system)))
    labels = ["pop_rsp@5", "pop_reo(pop_ratio=0.5)@3", "aclt@5", "epc@5", "efd@3"]
    # the two systems share the judgments and training data of the first case
    _, qrels, train = _tables(first)
    both = evaluate(pl.concat(frames), labels, qrels=qrels, interactions=train, systems="system")
    for system, frame in zip(("a", "b"), frames, strict=True):
        alone = evaluate(frame.drop("system"), labels, qrels=qrels, interactions=train)
        row = both.filter(pl.col("system") == system).row(0, named=True)
        for label in labels:
            assert _same(row[label], alone[label][0]), (system, label)


def test_beside_accuracy_metrics(evaluate: Any) -> None:
    reco, qrels, train = _tables(CASES[3])
    both = evaluate(reco, ["ndcg@5", "epc@5", "recall@5"], qrels=qrels, interactions=train)
    alone = evaluate(reco, ["ndcg@5", "recall@5"], qrels=qrels)
    assert both.columns == ["num_q", "ndcg@5", "epc@5", "recall@5"]
    assert both.drop("epc@5").equals(alone)


def test_checks_still_run_when_only_elliot_is_asked() -> None:
    reco, qrels, train = _tables(ELLIOT.WORKED)
    twice = pl.concat([reco, reco.head(1)])
    message = "column 'doc_id' of the run: query 1 has 1 repeated listing(s)"
    with pytest.raises(DuplicateError, match=re.escape(message)):
        irm.evaluate(twice, ["aclt@3"], qrels=qrels, interactions=train)


ERRORS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    (
        "pop_rsp@10",
        {"interactions": None},
        MetricParameterError,
        "metric 'pop_rsp@10' reads the interaction history (where item popularity, the "
        "catalogue and each user's history come from): pass interactions=... to irm.evaluate",
    ),
    (
        "aclt@10",
        {"per_query": True},
        MetricParameterError,
        "metric 'aclt@10' (Elliot's) describes the whole recommendation table against the "
        "training popularity: evaluate it with per_query=False",
    ),
    (
        "pop_reo(pop_ratio=1.5)@10",
        {},
        MetricParameterError,
        "pop_ratio must be a number between 0 and 1 (exclusive)",
    ),
    (
        "epc",
        {},
        MetricParameterError,
        "metric 'epc': epc needs a cutoff, e.g. 'epc@10'",
    ),
    (
        "efd@5",
        {"interactions": pl.DataFrame({"user": [1], "doc_id": [10]})},
        ColumnNotFoundError,
        "column 'query_id' not found in the interactions (its columns: 'user', 'doc_id')",
    ),
    (
        "efd@5",
        {"interactions": pl.DataFrame({"query_id": [1], "doc_id": ["10"]})},
        ColumnTypeError,
        "column 'doc_id' holds integers in the run (Int64) but strings in the interactions",
    ),
]


ERRORS += [
    (
        "epc@5",
        {option: value},
        InvalidValueError,
        f"{option}={value!r} is not read by Elliot's metrics ('epc@5'): they read each "
        "user's top k of the recommendations as given, over the users of the "
        f"recommendations; drop {option}=",
    )
    for option, value in [
        ("depth", 100),
        ("judged_only", True),
        ("unjudged", "zero"),
        ("unretrieved", "drop"),
    ]
]
# out of core: refused beside the ranking metrics too (tests/test_buckets_round14.py)
ERRORS.append(
    (
        "epc@5",
        {"buckets": 4},
        InvalidValueError,
        "buckets=4 bounds the memory of an out-of-core evaluation (buckets of queries), and "
        "Elliot's metrics ('epc@5') compare the whole recommendation table in one plan, which "
        "no bucket bounds: drop buckets= (evaluate them in a call of their own where the "
        "other metrics need it)",
    )
)


# pop_rsp and aclt count the top k against the training popularity: no relevant test
# item, so the options that choose those are read by none of them (epc reads them)
ERRORS += [
    (
        metric,
        {option: value},
        InvalidValueError,
        f"{option}={value!r} is not read by {metric!r}: they count each user's top k "
        "against the training popularity, and no relevant test item (only pop_reo, epc and "
        f"efd read those); drop {option}=",
    )
    for metric in ("pop_rsp@5", "aclt@5")
    for option, value in [("relevance_level", 2), ("debias", irm.Debias())]
]


def test_an_option_of_another_metric_is_still_read(evaluate: Any) -> None:
    reco, qrels, train = _tables(CASES[5])
    deep = evaluate(reco, ["ndcg", "epc@5"], qrels=qrels, interactions=train, depth=3)
    alone = evaluate(reco, ["epc@5"], qrels=qrels, interactions=train)
    # the sums are exact (fixed point): the same bits whatever the plan around them
    assert deep["epc@5"][0] == alone["epc@5"][0]
    assert deep["ndcg"].equals(evaluate(reco, ["ndcg@3"], qrels=qrels)["ndcg@3"].alias("ndcg"))


@pytest.mark.parametrize(("metric", "changes", "error", "message"), ERRORS)
def test_bad_inputs_are_refused(
    metric: str, changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    reco, qrels, train = _tables(ELLIOT.WORKED)
    kwargs: dict[str, Any] = {"qrels": qrels, "interactions": train, **changes}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    with pytest.raises(error, match=re.escape(message)):
        irm.evaluate(reco, [metric], **kwargs)


def test_ranks_are_positions_as_everywhere_in_evaluate(evaluate: Any) -> None:
    # ranks 1, 2, 3... are Elliot's list order, the same as ordering by the scores
    reco, qrels, train = _tables(CASES[4])
    place = pl.col("score").rank("ordinal", descending=True).over("query_id")
    labels = ["pop_rsp@3", "pop_reo@3", "aclt@3", "epc@3", "efd@3"]
    scored = evaluate(reco, labels, qrels=qrels, interactions=train)
    ranked = evaluate(
        reco.with_columns(place.alias("rank")).drop("score"),
        labels,
        qrels=qrels,
        interactions=train,
    )
    for label in labels:
        assert _same(ranked[label][0], scored[label][0]), label
    # ranks 2 and 4: the top 3 holds one item, at position 2 (discount 1 / log2(3))
    run = pl.DataFrame({"query_id": [1, 1], "doc_id": [10, 11], "rank": [2, 4]})
    judged = pl.DataFrame({"query_id": [1], "doc_id": [10], "relevance": [1]})
    history = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": [10, 10, 11]})
    got = evaluate(run, ["epc@3", "aclt@3", "epc@1"], qrels=judged, interactions=history)
    # item 10: 2 of the 3 training users, novelty 1 - 2/3; alone in the top 3
    assert math.isclose(got["epc@3"][0], 1 - 2 / 3, rel_tol=1e-12)
    assert got["epc@1"][0] == 0.0  # nothing at rank 1: the user still counts, with 0
    # T = 3; head of 0.8 (limit 2.4): 10 (before 0), 11 (before 2 < 2.4): no tail
    assert got["aclt@3"][0] == 0.0


def test_the_cli_computes_them(tmp_path: Path) -> None:
    reco, qrels, train = _tables(ELLIOT.WORKED)
    paths = {name: tmp_path / f"{name}.parquet" for name in ("run", "qrels", "train")}
    for name, frame in zip(paths, (reco, qrels, train), strict=True):
        frame.write_parquet(paths[name])
    command = ["evaluate", str(paths["run"])]
    command += ["--qrels", str(paths["qrels"]), "--interactions", str(paths["train"])]
    command += ["-m", "aclt@3", "-m", "pop_rsp@3", "--format", "json"]
    done = irm_in_process(*command)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)[0]
    assert (row["aclt@3"], row["pop_rsp@3"]) == (0.5, 0.6)  # the worked example's


@pytest.mark.parametrize("case", [6, 7, 8])
def test_string_ids_equal_elliot(frame_kind: str, case: int) -> None:
    # the short head's ties go by the id ascending, as text for text ids ("10" < "9"),
    # as Elliot's sorted item list of text ids would
    data = CASES[case]
    text = {
        "reco": [[str(u), str(i), s] for u, i, s in data["reco"]],
        "test": [[str(u), str(i), r] for u, i, r in data["test"]],
        "train": [[str(u), str(i)] for u, i in data["train"]],
    }
    schema = {"query_id": pl.String, "doc_id": pl.String}
    reco = pl.DataFrame(text["reco"], schema={**schema, "score": pl.Float64}, orient="row")
    qrels = pl.DataFrame(text["test"], schema={**schema, "relevance": pl.Int64}, orient="row")
    train = pl.DataFrame(text["train"], schema=schema, orient="row")
    labels = [_label(name, 5, 0.5) for name in NAMES]
    kind = (lambda f: f.lazy()) if frame_kind == "LazyFrame" else (lambda f: f)
    out = irm.evaluate(kind(reco), labels, qrels=kind(qrels), interactions=kind(train))
    row = (out.collect() if isinstance(out, pl.LazyFrame) else out).row(0, named=True)
    theirs = ELLIOT.elliot_values(text, 5, 0.5)
    for name in NAMES:
        assert _same(row[_label(name, 5, 0.5)], theirs[name]), name
