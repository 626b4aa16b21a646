"""Fusion, round 8: ``irm fuse --step`` refused by optimize_fusion's own grid check
(``grid_points``, its ``step=`` written as ``--step``) before any work, grid_points
refusing a weight grid with no point itself, and a ``system=`` that names a column
fusion reads as data (the query ids, document ids, scores or ranks) refused up front."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.fusion.optimize import grid_points
from polars_irmetrics.io.files import sample_paths

from .helpers import irm_in_process

ranx = pytest.importorskip("ranx")
from ranx.fusion_optimization.optimize_weights import (  # noqa: E402
    get_possible_weights,
    get_trial_configs,
)

# -- 1. irm fuse --step: grid_points' refusals, as the command's flags ------------------

RUN_PATHS, QRELS_PATH = sample_paths()
BM25, DENSE, HYBRID = (str(p) for p in RUN_PATHS)

_NO_WEIGHTS = (
    "gives no weights of the {n} runs that sum to 1 (each weight a multiple of the step from "
    "0 to 1, their float sum exactly 1.0, as in ranx's grid): pass a step that divides 1, "
    "e.g. --step 0.1 or --step 0.25"
)
_NOT_POSITIVE = "is not valid; it must be a finite number > 0"
_RRF = (
    "is not valid for rrf's k (whole numbers from 10 to 100, ranx's grid): it must be an "
    "integer >= 1, e.g. --step 10"
)
_OUTSIDE = (
    "in the grid (ranx's points 0.01, 0.01 + step, ... below 1 + step, rounded to the "
    "step's digits), outside {p}'s range [0, 1], which fuse refuses: pass a step whose grid "
    "ends at 1, e.g. --step 0.01, 0.1 or 0.2"
)


@pytest.mark.parametrize(
    ("runs", "args", "message"),
    [
        # before: "--step 0.7 gives no weights ... (each weight a multiple of the step from
        # 0 to 1); use a step that divides 1", the CLI's own twin of the library's check
        ([BM25, DENSE], ["--step", "0.7"], f"--step 0.7 {_NO_WEIGHTS.format(n=2)}"),
        ([BM25, DENSE, HYBRID], ["--step", "0.7"], f"--step 0.7 {_NO_WEIGHTS.format(n=3)}"),
        # the step as written: an integer is no "5.0"
        ([BM25, DENSE], ["--step", "5"], f"--step 5 {_NO_WEIGHTS.format(n=2)}"),
        ([BM25, DENSE], ["--step", "5.0"], f"--step 5.0 {_NO_WEIGHTS.format(n=2)}"),
        # before: "--step nan is not a valid grid step: it must be a number > 0, ..."
        ([BM25, DENSE], ["--step", "nan"], f"--step nan {_NOT_POSITIVE}"),
        ([BM25, DENSE], ["--step", "inf"], f"--step inf {_NOT_POSITIVE}"),
        ([BM25, DENSE], ["--step", "0"], f"--step 0 {_NOT_POSITIVE}"),
        ([BM25, DENSE], ["--step", "-1"], f"--step -1 {_NOT_POSITIVE}"),
        ([BM25, DENSE], ["--method", "rrf", "--step", "inf"], f"--step inf {_NOT_POSITIVE}"),
        # before: "--step 0.5 is too small for rrf's k ...; 2.5 was let through to the library
        ([BM25, DENSE], ["--method", "rrf", "--step", "0.5"], f"--step 0.5 {_RRF}"),
        ([BM25, DENSE], ["--method", "rrf", "--step", "2.5"], f"--step 2.5 {_RRF}"),
        # before: not checked by the CLI, refused by optimize_fusion after reading the runs
        (
            [BM25, DENSE],
            ["--step", "1e-5"],
            "--step 1e-05 is not valid: ranx's grid rounds its points to the step's digits "
            "after the decimal point, and '1e-05' is written with none, so every point would "
            "round to 0.0; pass a step of 0.0001 or more, e.g. --step 0.01",
        ),
        (
            [BM25, DENSE],
            ["--method", "rbc", "--step", "0.05"],
            f"--step 0.05 puts phi=1.01 {_OUTSIDE.format(p='phi')}",
        ),
        (
            [BM25, DENSE],
            ["--method", "logn_isr", "--step", "0.7"],
            f"--step 0.7 puts sigma=1.4 {_OUTSIDE.format(p='sigma')}",
        ),
    ],
    ids=["no-weights", "no-weights-3", "int", "float", "nan", "inf", "zero", "negative",
         "rrf-inf", "rrf-half", "rrf-fraction", "exponent", "phi", "sigma"],
)  # fmt: skip
def test_fuse_step_is_refused_by_grid_points_before_any_work(
    tmp_path: Path, runs: list[str], args: list[str], message: str
) -> None:
    # the judgments are not there: the step is refused before they are read
    missing = str(tmp_path / "missing.parquet")
    done = irm_in_process("fuse", *runs, "--optimize", "--qrels", missing, *args, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"


def test_fuse_step_not_a_number_is_a_usage_error(tmp_path: Path) -> None:
    done = irm_in_process("fuse", BM25, DENSE, "--optimize", "--qrels", str(QRELS_PATH),
                          "--step", "abc", cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm fuse: error: argument --step: expected a number (the grid's step, e.g. --step "
        "0.1), got 'abc' (see 'irm fuse --help')\n"
    )


@pytest.mark.parametrize(
    ("method", "as_int", "as_float"),
    [("wsum", "1", "1.0"), ("rrf", "1", "1.0"), ("rrf", "10", "10.0")],
)
def test_fuse_integer_step_searches_the_floats_grid(
    tmp_path: Path, method: str, as_int: str, as_float: str
) -> None:
    # --step 5 is passed on as the integer 5 (named as written in a refusal): the
    # search is the float's, as grid_points documents
    out = []
    for step in (as_int, as_float):
        done = irm_in_process("fuse", BM25, DENSE, "--optimize", "--qrels", str(QRELS_PATH),
                              "--method", method, "--step", step, cwd=tmp_path)  # fmt: skip
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        out.append(done.stdout)
    assert out[0] == out[1]
    assert out[0].startswith("best ndcg@10: ")


# -- 2. grid_points refuses a weight grid with no point (ranx: {"weights": []}) ---------


@pytest.mark.parametrize(
    ("n_runs", "step"),
    [(2, 0.3), (2, 0.7), (3, 0.7), (2, 1.5), (3, 0.4), (4, 0.3), (2, 0.6),
     (2, 0.5), (3, 0.25), (2, 0.1), (3, 0.1), (2, 1.0)],
)  # fmt: skip
def test_grid_points_weights_match_ranx_or_refuse_an_empty_grid(n_runs: int, step: float) -> None:
    expected = get_trial_configs(get_possible_weights(step), n_runs)
    if expected:
        assert grid_points("weights", n_runs, step) == expected
        return
    # before: grid_points returned [] and only optimize_fusion refused it
    message = (
        f"step={step!r} gives no weights of the {n_runs} runs that sum to 1 (each weight a "
        "multiple of the step from 0 to 1, their float sum exactly 1.0, as in ranx's grid): "
        "pass a step that divides 1, e.g. step=0.1 or step=0.25"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        grid_points("weights", n_runs, step)


@pytest.mark.parametrize(
    ("n_runs", "step", "candidates", "fix"),
    [
        (4, 0.01, "104,060,401", "pass a larger step, e.g. step=0.1"),
        (3, 0.001, "1,003,003,001", "pass a larger step, e.g. step=0.1"),
        (8, 0.1, "214,358,881", "pass a larger step, e.g. step=0.2"),
        (16, 0.25, "152,587,890,625", "fuse fewer runs"),
    ],
)
def test_a_weight_grid_too_large_to_enumerate_is_refused(
    n_runs: int, step: float, candidates: str, fix: str
) -> None:
    # before: grid_points("weights", 4, 0.01) ran ranx's product of 101**4 vectors (minutes
    # of CPU and memory before the first fusion); ranx's own search does the same
    values = round(1 / step) + 1
    message = (
        f"step={step!r} for {n_runs} runs makes {candidates} weight vectors to try "
        f"({values} values per run, every combination, as ranx's grid enumerates them; at "
        f"most 20,000,000): {fix}"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        grid_points("weights", n_runs, step)


def test_a_weight_grid_below_the_bound_is_ranx_s() -> None:
    # grids below the bound are still searched (3 runs at 0.01: 101**3 vectors tried; 7
    # runs at 0.1, 11**7, are too, some seconds of work, not repeated here)
    assert len(grid_points("weights", 3, 0.01)) == len(
        get_trial_configs(get_possible_weights(0.01), 3)
    )


# -- 3. system= naming a column fusion reads as data ------------------------------------

# one long frame of two runs 'a' and 'b' (both a score and a rank column)
LONG = pl.DataFrame(
    {
        "run": ["a", "a", "b", "b"],
        "query_id": ["q1", "q2", "q1", "q2"],
        "doc_id": ["d1", "d1", "d2", "d1"],
        "score": [1.0, 2.0, 3.0, 4.0],
        "rank": [1, 1, 1, 1],
    }
)
QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
RENAMED = {"query_id": "qid", "doc_id": "docno", "score": "s", "rank": "r"}

Call = Callable[..., Any]
# the check comes first: the judgments' columns (query_id, doc_id) are never read
CALLS: list[tuple[str, Call]] = [
    ("fuse", lambda runs, **kw: irm.fuse(runs, "rrf", **kw)),
    ("fuse-lazy", lambda runs, **kw: irm.fuse(runs.lazy(), "rrf", **kw)),
    ("optimize", lambda runs, **kw: irm.optimize_fusion(runs, "mrr", qrels=QRELS, **kw)),
]

_SYSTEM = (
    "system={v!r} names the column of the {role} ({name}={v!r}), one of the columns fusion "
    "reads as data, not as run names: pass as system= the column that tells the runs apart "
    "(a run name on every row), e.g. system='run'"
)
ROLES = {"query_id": "query ids", "doc_id": "document ids", "score": "scores", "rank": "ranks"}


@pytest.mark.parametrize("call", [c[1] for c in CALLS], ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("renamed", [False, True], ids=["default", "renamed"])
@pytest.mark.parametrize("name", list(ROLES))
def test_system_naming_a_data_column_is_refused(call: Call, renamed: bool, name: str) -> None:
    # before: system='query_id' / 'doc_id': DuplicateError "run 'q2' lists document 'd1'
    # 2 times in query 'q2'"; 'score': fused the scores as run names; 'rank': "fusion
    # needs at least two runs; got 1 ('1')"
    columns = RENAMED if renamed else {k: k for k in ROLES}
    frame = LONG.rename({k: v for k, v in columns.items() if k != v})
    keywords = {k: v for k, v in columns.items() if renamed}
    value = columns[name]
    message = _SYSTEM.format(v=value, role=ROLES[name], name=name)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call(frame, system=value, **keywords)


def test_system_not_read_as_data_is_a_run_column() -> None:
    # guard: 'score' holds the run names where score= names another column
    frame = LONG.rename({"score": "pts", "run": "score"}).drop("rank")
    fused = irm.fuse(frame, "wsum", weights=[0.5, 0.5], system="score", score="pts")
    runs = {n: LONG.filter(pl.col("run") == n).select("query_id", "doc_id", "score") for n in "ab"}
    assert fused.equals(irm.fuse(runs, "wsum", weights=[0.5, 0.5]).rename({"score": "pts"}))
    assert fused["pts"].to_list() == [0.5 * 3.0, 0.5 * 1.0, 0.5 * 2.0 + 0.5 * 4.0]


def test_system_with_a_dict_of_runs_keeps_its_own_message() -> None:
    runs = {n: LONG.filter(pl.col("run") == n).drop("run") for n in "ab"}
    message = (
        "system='query_id' is not read with a dict of runs: it names the run column of one "
        "long frame, and a dict names each run by its key; drop system=, or pass one long "
        "frame whose system column names the runs"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse(runs, system="query_id")


@pytest.mark.filterwarnings("ignore")
def test_fit_fusion_refuses_system_naming_the_scores() -> None:
    message = _SYSTEM.format(v="score", role="scores", name="score")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fit_fusion(LONG, "posfuse", qrels=QRELS, system="score")
