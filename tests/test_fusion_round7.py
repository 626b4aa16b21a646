"""Fusion, round 7: ``rank=`` beside a score column is refused (never half-applied), the
door's check of order columns naming no column, and fusion's joints under small
adversarial inputs: fit_fusion's rows and judgments checked as fuse's and evaluate's,
fitted tables, the grid's steps, seeds, infinite parameters, run names."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.fusion.optimize import grid_points
from tests.fusion_data import (
    assert_same_scores,
    our_scores,
    random_qrels,
    random_runs,
    ranx_scores,
    to_ranx_qrels,
    to_ranx_run,
)

ranx = pytest.importorskip("ranx")
from ranx.fusion import posfuse_train  # noqa: E402

A = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
B = pl.DataFrame({"query_id": "q1", "doc_id": ["c", "d"], "score": [2.0, 1.0]})
RUNS = {"A": A, "B": B}
QRELS = pl.DataFrame({"query_id": "q1", "doc_id": ["a"], "relevance": [1]})
# the same runs with a rank column that disagrees with the scores (reversed)
RANKED = {
    "A": A.with_columns(pos=pl.Series([3, 2, 1])),
    "B": B.with_columns(pos=pl.Series([2, 1])),
}

Call = Callable[..., Any]


def _lazy(runs: dict[str, pl.DataFrame], lazy: bool) -> dict[str, Any]:
    return {n: f.lazy() for n, f in runs.items()} if lazy else dict(runs)


def _long(runs: dict[str, Any]) -> Any:
    return pl.concat([f.with_columns(system=pl.lit(n)) for n, f in runs.items()])


def _collect(out: Any) -> Any:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


CALLS: list[tuple[str, Call]] = [
    ("fuse", lambda runs, **kw: irm.fuse(runs, "rrf", **kw)),
    ("fit_fusion", lambda runs, **kw: irm.fit_fusion(runs, "posfuse", qrels=QRELS, **kw)),
    (
        "optimize_fusion",
        lambda runs, **kw: irm.optimize_fusion(runs, "mrr", qrels=QRELS, step=0.5, **kw),
    ),
]

# -- 1. rank= beside a score column ------------------------------------------------------

RANK_BESIDE_SCORES = (
    "rank='pos' names a column of run 'A', which is ordered by its 'score' column: fusion "
    "orders a run by its scores where it has a score column (as ranx does) and by its ranks "
    "only without one, so rank= would be ignored; drop rank= to fuse the scores, or drop "
    "the 'score' column to fuse the ranks in 'pos', e.g. runs['A'].drop('score')"
)
RANK_BESIDE_SCORES_LONG = (
    "rank='pos' names a column of the runs, which are ordered by their 'score' column: "
    "fusion orders a run by its scores where it has a score column (as ranx does) and by "
    "its ranks only without one, so rank= would be ignored; drop rank= to fuse the scores, "
    "or drop the 'score' column to fuse the ranks in 'pos', e.g. frame.drop('score')"
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("label", "call"), CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize(
    ("runs", "message"),
    [
        # before: fuse ordered both runs by score and only named its output 'pos';
        # fit_fusion and optimize_fusion ignored rank= altogether
        (RANKED, RANK_BESIDE_SCORES),
        # before: A by its scores, B by its ranks, A's 'pos' ignored
        ({"A": RANKED["A"], "B": RANKED["B"].drop("score")}, RANK_BESIDE_SCORES),
    ],
    ids=["both-scored", "one-scored"],
)
def test_rank_beside_a_score_column_is_refused(
    lazy: bool, label: str, call: Call, runs: dict[str, pl.DataFrame], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call(_lazy(runs, lazy), rank="pos")


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_rank_beside_a_score_column_of_a_long_frame_is_refused(lazy: bool) -> None:
    frame = _long(_lazy(RANKED, lazy))
    with pytest.raises(InvalidValueError, match=f"^{re.escape(RANK_BESIDE_SCORES_LONG)}$"):
        irm.fuse(frame, "rrf", system="system", rank="pos")


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_ranks_alone_are_read_and_equal_ranx_on_their_order(lazy: bool) -> None:
    # guard: without the score column rank= orders the runs, as ranx orders runs scored
    # -rank; beside it, the default rank= (not given) keeps fusing the scores
    ranks_only = {n: f.drop("score") for n, f in RANKED.items()}
    fused = _collect(irm.fuse(_lazy(ranks_only, lazy), "rrf", rank="pos"))
    as_scores = {
        n: f.with_columns(score=-pl.col("pos").cast(pl.Float64)) for n, f in RANKED.items()
    }
    theirs = ranx.fuse([to_ranx_run(f, n) for n, f in as_scores.items()], norm=None, method="rrf")
    assert_same_scores(our_scores(fused.rename({"pos": "rank"})), ranx_scores(theirs))
    by_scores = _collect(irm.fuse(_lazy(RANKED, lazy), "rrf"))
    theirs = ranx.fuse([to_ranx_run(f, n) for n, f in RANKED.items()], norm=None, method="rrf")
    assert_same_scores(our_scores(by_scores), ranx_scores(theirs))


# -- 2. the door's check of a named order column no run has --------------------------------


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("label", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_an_order_column_no_run_has_is_refused_in_the_doors_words(
    lazy: bool, label: str, call: Call
) -> None:
    message = (
        "rank='r' names no column of the runs (their columns: 'query_id', 'doc_id', "
        "'score'); name the column of their ranks (1 = top) with rank=..., or drop rank= "
        "(without the column the values would be computed otherwise, in silence)"
    )
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        call(_lazy(RUNS, lazy), rank="r")


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        # before: TypeError: unhashable type: 'Expr' / 'list'
        (
            {"score": pl.col("score")},
            "score must be a column name (a str), got a polars expression; pass the column's "
            "name, e.g. score='score'; compute a column first with .with_columns",
        ),
        (
            {"rank": ["pos"]},
            "rank must be a column name (a str), got ['pos']; pass one name, e.g. rank='pos'",
        ),
        (
            {"query_id": "doc_id"},
            "query_id='doc_id' and doc_id='doc_id' name the same column; each needs its own "
            "column: pass doc_id= with the name of the doc_id column",
        ),
    ],
    ids=["score-expr", "rank-list", "same-ids"],
)
@pytest.mark.parametrize(("label", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_column_names_are_names(
    label: str, call: Call, keywords: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call(RUNS, **keywords)


def test_system_is_a_name() -> None:
    # before: TypeError: unhashable type: 'list'
    message = (
        "system must be a column name (a str), got ['system']: pass the name of the column "
        "that names the runs, e.g. system='run'"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse(_long(RUNS), "rrf", system=["system"])  # type: ignore[arg-type]


# -- 3. fit_fusion's runs: the rows fuse refuses ------------------------------------------


def _bad_score(value: float | None) -> dict[str, pl.DataFrame]:
    return {"A": A.with_columns(score=pl.Series([3.0, value, 1.0])), "B": B}


_NON_FINITE = (
    "column 'score' of run 'A' has a NaN, infinite or null value (query 'q1', document "
    "'b'); fusion needs a finite value on every row: fix or drop such rows, e.g. "
    ".filter(pl.col('score').is_finite())"
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("runs", "error", "message"),
    [
        # before: each accepted, its table fitted on made-up positions (NaN first)
        (_bad_score(math.nan), InvalidValueError, _NON_FINITE),
        (_bad_score(math.inf), InvalidValueError, _NON_FINITE),
        (_bad_score(None), InvalidValueError, _NON_FINITE),
        (
            {"A": A.with_columns(query_id=pl.Series(["q1", None, "q1"])), "B": B},
            InvalidValueError,
            "column 'query_id' of run 'A' has null values; every row needs a query_id: "
            "drop them, e.g. .drop_nulls('query_id')",
        ),
        (
            {"A": A.with_columns(doc_id=pl.Series(["a", None, "c"])), "B": B},
            InvalidValueError,
            "column 'doc_id' of run 'A' has null values; every row needs a doc_id: drop "
            "them, e.g. .drop_nulls('doc_id')",
        ),
        (
            # before: posfuse's position 1 a hit, from the document listed twice
            {"A": pl.concat([A, A.head(1)]), "B": B},
            DuplicateError,
            "run 'A' lists document 'a' 2 times in query 'q1'; a run may list a document "
            "once per query: keep one row per document, e.g. .unique(['query_id', 'doc_id'])",
        ),
        (
            {"A": A.with_columns(score=pl.Series([2**60, 2**60 + 1, 3])), "B": B},
            InvalidValueError,
            "column 'score' of run 'A' holds an integer beyond 2**53 (query 'q1', document "
            "'a'): fusion computes in Float64, where such integers tie with their neighbours "
            "(timestamps in nanoseconds); give the run an order that is exact there, e.g. "
            "pl.col('score').rank('dense').over('query_id')",
        ),
    ],
    ids=["nan", "inf", "null", "null-query", "null-doc", "duplicate", "wide-int"],
)
@pytest.mark.parametrize("method", ["posfuse", "mapfuse"])
def test_fit_fusion_refuses_the_rows_fuse_refuses(
    lazy: bool, runs: dict[str, pl.DataFrame], error: type[Exception], message: str, method: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        irm.fit_fusion(_lazy(runs, lazy), method, qrels=QRELS)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):  # as fuse does
        _collect(irm.fuse(_lazy(runs, lazy), "rrf"))


# -- 4. the judgments of fit_fusion and optimize_fusion: evaluate's checks ----------------

FIT_AND_OPTIMIZE: list[tuple[str, Call]] = [
    ("fit_fusion", lambda qrels, **kw: irm.fit_fusion(RUNS, "posfuse", qrels=qrels, **kw)),
    (
        "optimize_fusion",
        lambda qrels, **kw: irm.optimize_fusion(RUNS, "mrr", qrels=qrels, step=0.5, **kw),
    ),
]
_BAD_LABEL = (
    "column 'relevance' of the judgments has 1 label(s) that are NaN, infinite, of magnitude "
    "2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in query 'q1'; a "
    "relevance label must be 0 or a finite number of magnitude in [2**-30, 2**32) (what "
    "evaluate's exact sums hold), and not between -1 and 0 (unjudged here, judged "
    "non-relevant by trec_eval, which truncates it to 0): replace or drop them, or rescale "
    "the labels"
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("label", "call"), FIT_AND_OPTIMIZE, ids=[c[0] for c in FIT_AND_OPTIMIZE])
@pytest.mark.parametrize(
    ("qrels", "error", "message"),
    [
        (
            # before: fit_fusion: polars' ComputeError (cannot compare string with numeric)
            QRELS.with_columns(pl.col("relevance").cast(pl.String)),
            ColumnTypeError,
            "column 'relevance' in the judgments has dtype String; it must be numeric: cast "
            "it, e.g. pl.col('relevance').cast(pl.Float64)",
        ),
        # before: fit_fusion counted a NaN label as a hit (NaN >= 1 in polars)
        (QRELS.with_columns(relevance=pl.lit(math.nan)), InvalidValueError, _BAD_LABEL),
        (QRELS.with_columns(relevance=pl.lit(math.inf)), InvalidValueError, _BAD_LABEL),
        (
            # before: fit_fusion counted it a miss; optimize_fusion named '__irmf_grid=0'
            QRELS.with_columns(relevance=pl.lit(None, pl.Int64)),
            InvalidValueError,
            "column 'relevance' of the judgments has 1 null value(s) in query 'q1'; every "
            "judged document needs a relevance label: fill them (e.g. .fill_null(0)) or "
            "drop them",
        ),
        (
            # before: fit_fusion returned an empty table
            QRELS.with_columns(query_id=pl.lit(None, pl.String)),
            InvalidValueError,
            "column 'query_id' of the judgments has null values; every row needs a "
            "query_id: drop them, e.g. .drop_nulls('query_id')",
        ),
        (
            # before: fit_fusion counted the hit twice; optimize_fusion's error named its
            # internal '__irmf_rank' column
            pl.concat([QRELS, QRELS]),
            DuplicateError,
            "column 'doc_id' of the judgments: query 'q1' has 1 repeated judgment(s) (each "
            "of a document judged before in the query); keep one judgment per document, e.g. "
            ".unique(['query_id', 'doc_id'])",
        ),
    ],
    ids=["string-label", "nan-label", "inf-label", "null-label", "null-query", "duplicate"],
)
def test_judgments_are_checked_as_evaluate_checks_them(
    lazy: bool, label: str, call: Call, qrels: pl.DataFrame, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call(qrels.lazy() if lazy else qrels)


@pytest.mark.parametrize(
    ("level", "message"),
    [
        # before: '1' raised polars' ComputeError; nan, inf and True were accepted
        ("1", "relevance_level must be a number, got '1'"),
        (True, "relevance_level must be a number, got True"),
        (
            math.nan,
            "relevance_level=nan is not a finite number: no label would count as relevant "
            "(or every one would); pass the lowest relevant label, e.g. relevance_level=1",
        ),
        (
            math.inf,
            "relevance_level=inf is not a finite number: no label would count as relevant "
            "(or every one would); pass the lowest relevant label, e.g. relevance_level=1",
        ),
    ],
    ids=["str", "bool", "nan", "inf"],
)
def test_fit_fusion_relevance_level_is_a_finite_number(level: object, message: str) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fit_fusion(RUNS, "posfuse", qrels=QRELS, relevance_level=level)  # type: ignore[arg-type]


def test_fit_fusion_accepted_judgments_keep_ranx_values() -> None:
    # guard: judgments that pass the new checks fit ranx's table (graded labels, float)
    runs, qrels = random_runs(11, n_queries=8), random_qrels(12, n_queries=8)
    qrels = qrels.with_columns(pl.col("relevance").cast(pl.Float64))
    rx = [to_ranx_run(f, n) for n, f in runs.items()]
    theirs = posfuse_train(to_ranx_qrels(qrels), rx)
    for lazy in (False, True):
        fitted = irm.fit_fusion(
            _lazy(runs, lazy), "posfuse", qrels=qrels.lazy() if lazy else qrels
        )
        for i, expected in enumerate(theirs):
            got = fitted.filter(run=f"run{i}").sort("index")["value"].to_numpy()
            np.testing.assert_allclose(got, np.asarray(expected, dtype=float), rtol=0, atol=1e-12)


# -- 5. fitted tables ---------------------------------------------------------------------


def _fitted(method: str, **kw: Any) -> pl.DataFrame:
    return irm.fit_fusion(RUNS, method, qrels=QRELS, **kw)


_POSFUSE = _fitted("posfuse")
_ROWS = (
    "(a row duplicated, dropped or moved would change the fusion): pass the table "
    "fit_fusion returned"
)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("method", "fitted", "params", "error", "message"),
    [
        (
            # before: polars' OutOfBoundsError (the duplicated documents then looked for
            # in the runs)
            "posfuse",
            pl.concat([_POSFUSE, _POSFUSE.head(1)]),
            {},
            InvalidValueError,
            "fitted holds the indices 0, 0, 1, 2 for run 'A'; a posfuse table has one row per "
            f"index 0 to n - 1 without gaps, each once {_ROWS}",
        ),
        (
            "mapfuse",
            pl.concat([_fitted("mapfuse"), _fitted("mapfuse").head(1)]),
            {},
            InvalidValueError,
            f"fitted holds the indices 0, 0 for run 'A'; a mapfuse table has one row per run, "
            f"of index 0 {_ROWS}",
        ),
        (
            # before: accepted, segment 9's documents scored 0
            "segfuse",
            _fitted("segfuse").filter(pl.col("index") < 9),
            {},
            InvalidValueError,
            "fitted holds the indices 0, 1, 2, 3, 4, 5, 6, 7, 8 for run 'A'; a segfuse table "
            f"has one row per index 0 to 9, each once {_ROWS}",
        ),
        (
            # before: accepted, every list cut into one segment fewer
            "probfuse",
            _fitted("probfuse", n_segments=2).filter(pl.col("index") != 0),
            {},
            InvalidValueError,
            "fitted holds the indices 1 for run 'A'; a probfuse table has one row per index 0 "
            f"to n - 1 without gaps, each once {_ROWS}",
        ),
        (
            # before: accepted, every fused score NaN
            "posfuse",
            _POSFUSE.with_columns(value=pl.lit(math.nan)),
            {},
            InvalidValueError,
            "fitted holds a null or non-finite row for run 'A' (index 0, value nan); "
            "fit_fusion writes a finite value at every index: pass the table it returned",
        ),
        (
            # before: polars' InvalidOperationError (strict cast)
            "slidefuse",
            _fitted("slidefuse").with_columns(value=pl.lit("x")),
            {"w": 1},
            ColumnTypeError,
            "column 'value' in the fitted table has dtype String; it must be numeric: cast "
            "it, e.g. pl.col('value').cast(pl.Float64)",
        ),
        (
            "posfuse",
            _POSFUSE.with_columns(index=pl.col("index").cast(pl.String)),
            {},
            ColumnTypeError,
            "column 'index' in the fitted table has dtype String; it must be an integer: "
            "cast it, e.g. pl.col('index').cast(pl.Int64)",
        ),
    ],
    ids=["posfuse-dup", "mapfuse-dup", "segfuse-short", "probfuse-gap", "nan", "str-value",
         "str-index"],
)  # fmt: skip
def test_a_fitted_table_not_fit_fusions_is_refused(
    lazy: bool,
    method: str,
    fitted: pl.DataFrame,
    params: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _collect(
            irm.fuse(_lazy(RUNS, lazy), method, fitted=fitted.lazy() if lazy else fitted, **params)
        )


# -- 6. optimize_fusion's grid, seed and return_grid --------------------------------------

_NO_WEIGHTS = (
    "gives no weights of the 2 runs that sum to 1 (each weight a multiple of the step from 0 "
    "to 1, their float sum exactly 1.0, as in ranx's grid): pass a step that divides 1, e.g. "
    "step=0.1 or step=0.25"
)


@pytest.mark.parametrize(
    ("method", "step", "message"),
    [
        # before: numpy's ValueError (arange: cannot compute length)
        ("wsum", math.nan, "step=nan is not valid; it must be a finite number > 0"),
        ("rbc", math.inf, "step=inf is not valid; it must be a finite number > 0"),
        # before: numpy's ValueError (argmax of an empty sequence); ranx: {'weights': []}
        ("wsum", 0.3, f"step=0.3 {_NO_WEIGHTS}"),
        ("wmnz", 1.5, f"step=1.5 {_NO_WEIGHTS}"),
        # before: range() arg 3 must not be zero; 2.5 searched k by steps of 2
        (
            "rrf",
            0.5,
            "step=0.5 is not valid for rrf's k (whole numbers from 10 to 100, ranx's grid): "
            "it must be an integer >= 1, e.g. step=10",
        ),
        (
            "rrf",
            2.5,
            "step=2.5 is not valid for rrf's k (whole numbers from 10 to 100, ranx's grid): "
            "it must be an integer >= 1, e.g. step=10",
        ),
        # before: 99,001 grid points, every one phi=0.0 (ranx's rounding of '1e-05')
        (
            "rbc",
            1e-05,
            "step=1e-05 is not valid: ranx's grid rounds its points to the step's digits after "
            "the decimal point, and '1e-05' is written with none, so every point would round "
            "to 0.0; pass a step of 0.0001 or more, e.g. step=0.01",
        ),
        # before: phi=1.01 searched (fuse refuses it), and could be returned as the best
        (
            "rbc",
            0.05,
            "step=0.05 puts phi=1.01 in the grid (ranx's points 0.01, 0.01 + step, ... below "
            "1 + step, rounded to the step's digits), outside phi's range [0, 1], which fuse "
            "refuses: pass a step whose grid ends at 1, e.g. step=0.01, 0.1 or 0.2",
        ),
        (
            "logn_isr",
            0.7,
            "step=0.7 puts sigma=1.4 in the grid (ranx's points 0.01, 0.01 + step, ... below "
            "1 + step, rounded to the step's digits), outside sigma's range [0, 1], which fuse "
            "refuses: pass a step whose grid ends at 1, e.g. step=0.01, 0.1 or 0.2",
        ),
    ],
    ids=["nan", "inf", "no-weights", "no-weights-wmnz", "k-half", "k-fraction", "exponent",
         "phi-above-1", "sigma-above-1"],
)  # fmt: skip
def test_a_step_without_a_valid_grid_is_refused(method: str, step: float, message: str) -> None:
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.optimize_fusion(RUNS, "mrr", qrels=QRELS, method=method, step=step)


def test_accepted_steps_keep_ranx_grid() -> None:
    # guard: an integer step is the float's (ranx's grid of 1.0; ranx rounds 1 to tens)
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    assert grid_points("weights", 2, 1) == get_trial_configs(get_possible_weights(1.0), 2)
    assert grid_points("weights", 3, 0.25) == get_trial_configs(get_possible_weights(0.25), 3)
    assert get_trial_configs(get_possible_weights(0.3), 2) == []  # refused above
    # ranx's phi grid but its ends, 0.0 (0.01 rounded) and 1.0 (rbc at phi=1 scores every
    # document 0, at phi=0 every one but each run's first: the tie-break's orders)
    assert grid_points("phi", 2, 0.1) == [round(x, 1) for x in np.arange(0.01, 1.1, 0.1)][1:-1]
    assert grid_points("k", 2, 10.0) == list(range(10, 101, 10))


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        # before: numpy's TypeError / ValueError; True seeded as 1
        (
            {"folds": 2, "seed": "a"},
            MetricParameterError,
            "seed='a' is not valid; it must be an integer >= 0 (it seeds the assignment of the "
            "queries to the folds), e.g. seed=0",
        ),
        (
            {"folds": 2, "seed": -1},
            MetricParameterError,
            "seed=-1 is not valid; it must be an integer >= 0 (it seeds the assignment of the "
            "queries to the folds), e.g. seed=0",
        ),
        (
            {"folds": 2, "seed": True},
            MetricParameterError,
            "seed=True is not valid; it must be an integer >= 0 (it seeds the assignment of "
            "the queries to the folds), e.g. seed=0",
        ),
        # before: accepted as True
        (
            {"return_grid": "yes"},
            InvalidValueError,
            "return_grid must be True or False, got 'yes': pass return_grid=True to also "
            "return every grid point's mean, or return_grid=False",
        ),
    ],
    ids=["seed-str", "seed-negative", "seed-bool", "return-grid-str"],
)
def test_seed_and_return_grid_are_checked(
    keywords: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        irm.optimize_fusion(RUNS, "mrr", qrels=QRELS, step=0.5, **keywords)


def test_a_numpy_seed_is_read() -> None:
    runs, qrels = random_runs(3, n_queries=6), random_qrels(4, n_queries=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = irm.optimize_fusion(runs, "mrr", qrels=qrels, step=0.5, folds=2, seed=np.int64(7))
        two = irm.optimize_fusion(runs, "mrr", qrels=qrels, step=0.5, folds=2, seed=7)
    assert isinstance(one, tuple)
    assert isinstance(two, tuple)
    assert one[1].equals(two[1])


# -- 7. infinite parameters, run names, weights by name -----------------------------------


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        # before: every document scored 0.0 (k=inf) or inf (gamma=inf)
        ("rrf", {"k": math.inf}, "rrf: k=inf is not valid; it must be a finite number >= 0"),
        ("gmnz", {"gamma": math.inf}, "gmnz: gamma=inf is not valid; it must be a finite number"),
        (
            "gmnz",
            {"gamma": -math.inf},
            "gmnz: gamma=-inf is not valid; it must be a finite number",
        ),
        ("gmnz", {"gamma": math.nan}, "gmnz: gamma=nan is not valid; it must be a finite number"),
        (
            "rbc",
            {"phi": 2},
            "rbc: phi=2 is not valid; it must be a number in (0, 1) (phi=0 weights every document "
            "but each run's first 0 ** (rank - 1) = 0, their order the tie-break's; phi=1 "
            "weights every document (1 - 1) * 1 = 0, a fused run of ties ordered by the "
            "tie-break alone)",
        ),
    ],
    ids=["k-inf", "gamma-inf", "gamma-minus-inf", "gamma-nan", "phi-2"],
)
def test_infinite_parameters_are_refused(
    method: str, params: dict[str, float], message: str
) -> None:
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.fuse(RUNS, method, **params)


def test_runs_named_alike_are_refused() -> None:
    # before: fused as two runs both named '1' (a fitted table's rows then matched one)
    message = (
        "runs 1 and '1' are both named '1' (a run's name is its key as text, which its weight "
        "and its fitted table are found by): give each run a name of its own, e.g. string keys"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse({1: A, "1": B}, "rrf")  # type: ignore[dict-item]


def test_weights_by_name_read_keys_as_the_runs_names() -> None:
    # before: refused, "missing: '1', '2'; unknown: '1', '2'"
    runs: Any = {1: A, 2: B}
    by_key = irm.fuse(runs, "wsum", weights={1: 0.7, 2: 0.3})
    assert by_key.equals(irm.fuse(runs, "wsum", weights=[0.7, 0.3]))
    theirs = ranx.fuse(
        [to_ranx_run(A, "1"), to_ranx_run(B, "2")],
        norm=None,
        method="wsum",
        params={"weights": [0.7, 0.3]},
    )
    assert_same_scores(our_scores(by_key), ranx_scores(theirs))
    message = (
        "weights names run '1' twice (a key is read as text, as the runs' keys are); give one "
        "weight per run ('1', '2')"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse(runs, "wsum", weights={1: 0.5, "1": 0.2, 2: 0.5})


# -- 8. other joints, as they stand (pins) -------------------------------------------------


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("runs", "call", "error", "message"),
    [
        (
            {"A": A.with_columns(query_id=pl.lit(1)), "B": B},
            lambda runs: irm.fuse(runs, "rrf"),
            ColumnTypeError,
            "column 'query_id' holds strings in some runs and integers in others ('A': "
            "Int32, 'B': String); cast it to one type in every run, e.g. "
            "pl.col('query_id').cast(pl.String)",
        ),
        (
            {"A": A},
            lambda runs: irm.fit_fusion(runs, "posfuse", qrels=QRELS),
            InvalidValueError,
            "fusion needs at least two runs; got 1 ('A'): pass a dict of two or more runs, or "
            "one frame whose system column names two or more runs",
        ),
        (
            RUNS,
            lambda runs: irm.fuse(runs, "wsum", weights=[0.5, -0.5]),
            InvalidValueError,
            "weight -0.5 of run 'B' is not valid; weights must be finite numbers >= 0",
        ),
        (
            RUNS,
            lambda runs: irm.fuse(runs, "wsum", weights=[0.5]),
            InvalidValueError,
            "weights has 1 value(s) for 2 runs ('A', 'B'); give one weight per run, in the "
            "runs' order",
        ),
        (
            RUNS,
            lambda runs: irm.fuse(runs, "sum", norm="minmx"),
            irm.errors.UnknownMetricError,
            "unknown normalisation 'minmx'; choose one of min-max, min-max-inverted, max, "
            "sum, zmuv, rank, borda, or None",
        ),
        (
            RUNS,
            lambda runs: irm.fuse(runs, "rrf", depth=0),
            MetricParameterError,
            "depth=0 is not valid; it must be an integer >= 1 (the number of fused documents "
            "kept per query), or None for all",
        ),
    ],
    ids=["query-dtypes", "one-run", "negative-weight", "short-weights", "norm-typo", "depth-0"],
)
def test_other_joints_refuse_with_our_errors(
    lazy: bool, runs: dict[str, pl.DataFrame], call: Call, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _collect(call(_lazy(runs, lazy)))


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_an_empty_run_is_fused_as_absent(lazy: bool) -> None:
    # ranx has no empty run; fusing an empty run equals fusing the other alone, as a run
    # that retrieves nothing adds nothing (rrf: 1/(60 + p) of B's positions)
    fused = _collect(irm.fuse(_lazy({"A": A.clear(), "B": B}, lazy), "rrf"))
    assert fused.rows() == [("q1", "c", 1 / 61, 1), ("q1", "d", 1 / 62, 2)]
