"""Out-of-core evaluation in hash buckets: the same results as one plan, to the last bit."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.ground.buckets import bucket_count

from .conftest import Evaluate
from .test_conventions import QRELS, RUN, _synthetic

buckets_module = sys.modules["polars_irmetrics.ground.buckets"]


#: the one plan's result of test_buckets_give_identical_results, by frame kind and
#: per_query: the reference of its four bucket counts, computed once for them
_WHOLE: dict[tuple[str, bool], pl.DataFrame] = {}


@pytest.mark.parametrize("buckets", [1, 3, 7, "auto"])
def test_buckets_give_identical_results(
    evaluate: Evaluate, frame_kind: str, buckets: int | str, tmp_path: Path
) -> None:
    from polars_irmetrics.io.files import sample_paths

    runs, qrels_path = sample_paths()
    # Three systems in one long table: 'system' is a by key the judgments lack, and the
    # sample has a query missing from one run and a run query without judgments.
    run = pl.concat([pl.read_parquet(p).with_columns(system=pl.lit(p.stem)) for p in runs])
    qrels = pl.read_parquet(qrels_path)
    names = [*irm.DEFAULT_METRICS, "gm_map", "err@10"]
    for per_query in (True, False):
        kwargs = {"qrels": qrels, "systems": "system", "per_query": per_query, "unjudged": "zero"}
        if (frame_kind, per_query) not in _WHOLE:
            _WHOLE[frame_kind, per_query] = evaluate(run, names, **kwargs)
        whole = _WHOLE[frame_kind, per_query]
        split = evaluate(run, names, buckets=buckets, spill_dir=tmp_path, **kwargs)
        assert split.equals(whole)
    assert list(tmp_path.iterdir()) == []  # the temporary files are gone


def test_buckets_of_a_judged_table(evaluate: Evaluate) -> None:
    table = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2", "q2", "q3"],
            "doc_id": ["a", "b", "c", "a", "b", "z"],
            "rank": [1, 2, None, 1, None, None],
            "relevance": [0, 1, 2, 1, 0, 1],
        }
    )
    names = ["ndcg@10", "map", "num_ret", "rbp_residual"]
    whole = evaluate(table, names, per_query=True)
    for buckets in (1, 2, 5):
        assert evaluate(table, names, per_query=True, buckets=buckets).equals(whole)


def test_buckets_spill_only_when_collected(tmp_path: Path) -> None:
    plan = irm.evaluate(RUN.lazy(), ["map"], qrels=QRELS, buckets=2, spill_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert plan.collect().equals(irm.evaluate(RUN, ["map"], qrels=QRELS))
    assert list(tmp_path.iterdir()) == []


def test_buckets_raise_the_same_data_errors(evaluate: Evaluate, tmp_path: Path) -> None:
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "a"], "rank": [1, 2]})
    with pytest.raises(irm.DuplicateError) as whole:
        evaluate(run, ["map"], qrels=QRELS)
    with pytest.raises(irm.DuplicateError) as split:
        evaluate(run, ["map"], qrels=QRELS, buckets=3, spill_dir=tmp_path)
    assert str(split.value) == str(whole.value)
    assert "query 'q1' has 1 repeated listing(s)" in str(split.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("buckets", [0, -1, True, 2.0, "8"])
def test_buckets_must_be_a_positive_integer_or_auto(evaluate: Evaluate, buckets: object) -> None:
    message = f"buckets must be a positive integer, 'auto', 'auto-memory' or None, got {buckets!r}"
    with pytest.raises(irm.InvalidValueError, match=re.escape(message)):
        evaluate(RUN, ["map"], qrels=QRELS, buckets=buckets)


def test_auto_makes_one_bucket_per_rows_per_bucket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(buckets_module, "ROWS_PER_BUCKET", 100)
    assert bucket_count(pl.LazyFrame({"a": range(250)}), "auto") == 3  # ceil(250 / 100)
    assert bucket_count(pl.LazyFrame({"a": range(100)}), "auto") == 1
    assert bucket_count(pl.LazyFrame({"a": []}), "auto") == 1
    assert bucket_count(pl.LazyFrame({"a": range(250)}), 7) == 7


def test_auto_buckets_on_a_larger_run(
    evaluate: Evaluate, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # 400 queries, ~24,000 rows: 'auto' makes 24 buckets of about 1,000 rows.
    monkeypatch.setattr(buckets_module, "ROWS_PER_BUCKET", 1_000)
    run, qrels = _synthetic(400, 60)
    names = [*irm.DEFAULT_METRICS, "err@10", "infAP", "Rndcg"]
    kwargs = {"qrels": qrels, "per_query": True, "unjudged": "zero"}
    whole = evaluate(run, names, **kwargs)
    assert evaluate(run, names, buckets="auto", spill_dir=tmp_path, **kwargs).equals(whole)
    assert list(tmp_path.iterdir()) == []
