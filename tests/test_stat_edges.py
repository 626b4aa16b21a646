"""Issue 28's statistics edges: an empty system run, constant systems in Tukey's HSD,
an A/B log with one arm, ``irm ab`` on a log without a dwell column."""

from __future__ import annotations

import re
import subprocess
import warnings
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.io.files import sample_interactions_path

from .helpers import irm_in_process

QRELS = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "b", "c"],
                      "relevance": [1, 1, 1]})  # fmt: skip
RUN = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "x", "c"], "rank": [1, 1, 1]})


def _kind(frame: pl.DataFrame, kind: str) -> pl.DataFrame | pl.LazyFrame:
    return frame.lazy() if kind == "LazyFrame" else frame


def test_compare_scores_an_empty_run_zero_with_a_warning(frame_kind: str) -> None:
    runs = {"a": _kind(RUN, frame_kind), "e": _kind(RUN.clear(), frame_kind)}
    with pytest.warns(UserWarning, match=re.escape(
        "system 'e' has an empty run: it is scored as retrieving nothing on every judged "
        "query (0 for the ranking metrics); check its file or frame"
    )):  # fmt: skip
        out = irm.compare(runs, ["map"], qrels=_kind(QRELS, frame_kind), baseline="a")
    # a: AP 1, 0, 1 -> 2/3; e: 0 everywhere
    assert out.select("system", "mean", "baseline_mean").row(0) == ("e", 0.0, 2 / 3)


def test_tukey_hsd_of_identical_constant_systems_gives_p_1(frame_kind: str) -> None:
    same = _kind(RUN, frame_kind)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing leaks from scipy
        out = irm.tukey_hsd({"a": same, "b": same, "c": same}, ["P_1"], qrels=QRELS)
    # P@1 per query: 1, 0, 1 in every system... not constant: use a constant metric too
    assert out["p_value"].to_list() == pytest.approx([1.0, 1.0, 1.0])
    constant = RUN.with_columns(pl.Series("doc_id", ["a", "b", "c"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # nothing leaks from scipy
        # the library's own word on it (round 17): no spread to test against
        with pytest.warns(irm.errors.IrmWarning, match="no system's per-query values vary"):
            out = irm.tukey_hsd(
                {"a": _kind(constant, frame_kind), "b": _kind(constant, frame_kind)},
                ["map"],
                qrels=QRELS,
            )
    assert out.select("delta", "ci_low", "ci_high", "p_value", "significant").row(0) == (
        0.0, 0.0, 0.0, 1.0, False
    )  # fmt: skip


def test_ab_test_with_one_arm_is_refused(frame_kind: str, tmp_path: Path) -> None:
    log = pl.read_parquet(sample_interactions_path()).filter(pl.col("arm") == "A")
    message = (
        "column 'arm' of the log holds one arm ('A'); an A/B test needs a control and at "
        "least one treatment: check the arm column (arm=...) or the log"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.ab_test(_kind(log, frame_kind), ["ctr@10"])
    log.write_parquet(tmp_path / "one.parquet")
    log.drop("dwell").filter(pl.lit(True)).write_parquet(tmp_path / "nodwell.parquet")
    pl.read_parquet(sample_interactions_path()).drop("dwell").write_parquet(tmp_path / "b.parquet")

    def irm_ab(*args: str) -> subprocess.CompletedProcess[str]:
        return irm_in_process("ab", *args, cwd=tmp_path)

    done = irm_ab("one.parquet")
    assert (done.returncode, done.stderr) == (
        2, "irm: error: one.parquet: " + message.replace("arm=...", "--arm COL") + "\n"
    )  # fmt: skip
    done = irm_ab("b.parquet")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "irm: warning: b.parquet: sat_click_rate left out: it reads column 'dwell', which "
        "the log lacks (name yours with --dwell COL)\n"
    )
    header, _, *rows = done.stdout.splitlines()
    assert [r.split()[0] for r in rows] == ["ctr@10", "abandonment", "click_mrr"]
    columns = header.split()
    for lift in ("delta", "relative"):  # each beside its own interval
        at = columns.index(lift)
        assert columns[at + 1 : at + 3] in (
            ["ci_low", "ci_high"], ["relative_ci_low", "relative_ci_high"]
        )  # fmt: skip
    full = irm.ab_test(pl.read_parquet(tmp_path / "b.parquet"), ["ctr@10"])
    first = rows[0].split()
    relative = full.select("relative", "relative_ci_low", "relative_ci_high").row(0)
    assert first[at : at + 3] == [f"{v:.4f}" for v in relative]
    done = irm_ab("b.parquet", "-m", "sat_click_rate")
    assert done.returncode == 2
    assert "'sat_click_rate' reads the dwell: add it, name yours with --dwell COL" in done.stderr


# ------------------------------------------------------------------ cold items
def test_unseen_items_drop_policy_against_the_formula(frame_kind: str) -> None:
    recs = pl.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["a", "z", "a", "b"]})
    history = pl.DataFrame({"user_id": [1, 2, 2, 3], "item_id": ["c", "a", "b", "a"]})
    with pytest.raises(InvalidValueError, match=re.escape("item 'z' (recommended to user 1)")):
        irm.beyond_accuracy(recs.lazy(), ["novelty"], interactions=history).collect()
    out = irm.beyond_accuracy(
        _kind(recs, frame_kind), ["coverage", "novelty"], interactions=history,
        unseen_items="drop",
    )  # fmt: skip
    got = out.collect() if isinstance(out, pl.LazyFrame) else out
    # z left out: recommended a, a, b of the catalogue a, b, c -> coverage 2/3; novelty
    # is the mean of -log2(pop/4) over the kept rows: a (2/4), a (2/4), b (1/4) -> 4/3
    assert got.row(0) == pytest.approx((2 / 3, (1 + 1 + 2) / 3))
    with pytest.raises(InvalidValueError, match=re.escape(
        "unseen_items='zero' is not a policy; choose 'error' (refuse a recommended item the "
        "interactions or item_features lack), 'drop' (leave such recommendations out) or "
        "'recommenders' (Microsoft Recommenders' convention: such an item counts 0 novelty "
        "and 0 similarity)"
    )):  # fmt: skip
        irm.beyond_accuracy(recs, ["novelty"], interactions=history, unseen_items="zero")  # type: ignore[arg-type]
