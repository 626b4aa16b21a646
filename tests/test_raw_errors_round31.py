"""A call that does not fit a public function, or a value of another kind than the one
declared, is the library's :class:`~polars_irmetrics.errors.ArgumentError` naming the
function, the argument and the fix (also a ``TypeError``, as Python's refusal is), never
Python's or polars' own words (``ndcg() got an unexpected keyword argument 'cutof'``,
``the truth value of an Expr is ambiguous``, ``'int' object has no attribute 'strip'``);
so are a rank expression's missing column, a list of ids under ``rank_by_score`` and
``fuse``'s list-typed ``system`` column; and ``irm trec-eval`` names a Parquet file's
text scores and list ids in one line."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ArgumentError,
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
)

from .helpers import irm_in_process

RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
LOG = pl.DataFrame({"session_id": [1, 1], "position": [1, 2], "clicked": [1, 0]})

CALLS: list[tuple[str, Callable[[], Any], str]] = [
    (
        "unknown keyword",
        lambda: irm.ndcg(cutof=10),
        "irm.ndcg takes no option cutof= (got 10); its options are k, gain, ideal, ties, "
        "relevance, rank, score, doc_id",
    ),
    (
        "misspelt keyword",
        lambda: irm.rank_by_score(scroe="s"),
        "irm.rank_by_score takes no option scroe= (got 's') (did you mean score=?); its "
        "options are score, doc_id",
    ),
    (
        "prediction keyword",
        lambda: irm.auc(lable="y"),
        "irm.auc takes no option lable= (got 'y') (did you mean label=?); its options are "
        "label, prediction, sample_weight, positive_label",
    ),
    (
        "online keyword",
        lambda: irm.click_metric("ctr", foo=1),
        "irm.click_metric takes no option foo= (got 1); its options are name, position, "
        "clicked, dwell, converted, timestamp",
    ),
    (
        "class keyword",
        lambda: irm.Debias(iqr=1.5),
        "irm.Debias takes no option iqr= (got 1.5); its options are iqr_coef, random_state",
    ),
    (
        "no options",
        lambda: irm.list_metrics(kind="ranking"),
        "irm.list_metrics takes no option kind= (got 'ranking'); it takes none",
    ),
    (
        "too many by position",
        lambda: irm.ndcg(10, 20),
        "irm.ndcg takes at most 1 argument by position (k), got 2 (10, 20); pass the "
        "others by name, e.g. irm.ndcg(..., gain=...)",
    ),
    (
        "none by position",
        lambda: irm.bpref(5),
        "irm.bpref takes no argument by position, got 1 (5); pass each by name, e.g. "
        "irm.bpref(relevance_level=...)",
    ),
    (
        "given twice",
        lambda: irm.ndcg(10, k=5),
        "irm.ndcg got k= twice: 10 by position and 5 by name; pass it once",
    ),
    (
        "missing",
        lambda: irm.f1_beta(),
        "irm.f1_beta is missing its argument k=; pass it, e.g. irm.f1_beta(k=...)",
    ),
    (
        "two missing",
        lambda: irm.ab_test(),
        "irm.ab_test is missing its arguments log= and metrics=; pass them, e.g. "
        "irm.ab_test(log=..., metrics=...)",
    ),
    (
        "DataFrame method",
        lambda: RUN.irm.ndcg(10, 20),
        "df.irm.ndcg takes at most 1 argument by position (k), got 2 (10, 20); pass the "
        "others by name, e.g. df.irm.ndcg(..., gain=...)",
    ),
    (
        "LazyFrame method",
        lambda: RUN.lazy().irm.mar(),
        "lf.irm.mar is missing its argument k=; pass it, e.g. lf.irm.mar(k=...)",
    ),
    (
        "expression for a choice",
        lambda: irm.ndcg(gain=pl.col("g")),
        "irm.ndcg: gain must be a str, got a polars expression; pass one, e.g. gain='linear'",
    ),
    (
        "frame for an option",
        lambda: irm.fuse({"a": RUN, "b": RUN}, buckets=pl.DataFrame()),
        "irm.fuse: buckets must be one of the values help(irm.fuse) lists, got a polars "
        "DataFrame; pass one",
    ),
    (
        "number for a name",
        lambda: irm.get_metric(3),
        "irm.get_metric: name must be a str, got 3; pass one",
    ),
    (
        "None for a path",
        lambda: irm.read_trec_prefs(None),
        "irm.read_trec_prefs: source must be a str or a path, got None; pass one",
    ),
    (
        "text for a frame",
        lambda: irm.write_trec_run("x", "out.trec"),
        "irm.write_trec_run: frame must be a polars DataFrame or a polars LazyFrame, got "
        "'x'; pass one",
    ),
    (
        "number for a tag",
        lambda: irm.write_trec_run(RUN, "out.trec", run_id=3),
        "irm.write_trec_run: run_id must be a str or None, got 3; pass one",
    ),
    (
        "text for a level",
        lambda: irm.label_propensity(QRELS, relevance_level="x"),
        "irm.label_propensity: relevance_level must be a number, got 'x'; pass one, e.g. "
        "relevance_level=1",
    ),
    (
        "list for a column",
        lambda: irm.evaluate_online(LOG, "ctr", session_id=["s"]),
        "irm.evaluate_online: session_id must be a str, got ['s']; pass one, e.g. "
        "session_id='session_id'",
    ),
]


@pytest.mark.parametrize(("call", "message"), [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_a_call_that_does_not_fit_is_an_argument_error(
    call: Callable[[], Any], message: str
) -> None:
    with pytest.raises(ArgumentError, match=f"^{re.escape(message)}$") as raised:
        call()
    assert isinstance(raised.value, TypeError | ValueError)  # either family catches it


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: irm.ndcg(rank=pl.DataFrame()),
            "rank must be a column name (a str) or a polars expression, got a polars "
            "DataFrame; pass one name, e.g. rank='rank', or an expression, e.g. "
            "rank=irm.rank_by_score()",
        ),
        (
            lambda: irm.auc(label=pl.Series([1])),
            "label must be a column name (a str), got a polars Series; pass one name, e.g. "
            "label='label'",
        ),
    ],
    ids=["frame for rank", "series for label"],
)
def test_a_table_for_a_column_name_is_named_by_its_kind(
    call: Callable[[], Any], message: str
) -> None:
    # its print-out (a box of the frame's rows) was the message's "got ..."
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call()


JUDGED = pl.DataFrame({"doc_id": ["a", "b"], "rank": [1, 2], "relevance": [1, 0]})


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("frame", "expr", "error", "message"),
    [
        (
            JUDGED,
            lambda: irm.ndcg(rank=pl.col("x").cast(pl.Int64)),
            ColumnNotFoundError,
            "column 'x' not found in the frame: the metric reads its ranks (1 = top) from "
            "it; the rank= expression reads it: name a column of the frame in it, or rank "
            "by score with rank=irm.rank_by_score()",
        ),
        (
            JUDGED.with_columns(pl.concat_list("doc_id"), score=pl.lit(1.0)),
            lambda: irm.mrr(rank=irm.rank_by_score()),
            ColumnTypeError,
            "column 'doc_id' has dtype List(String); the metric reads its ids from it, one "
            "per row, where it holds a list per row: take one, e.g. "
            "pl.col('doc_id').list.first()",
        ),
    ],
    ids=["rank expression's column", "list ids ranked by score"],
)
def test_a_rank_expressions_column_is_named(
    frame: pl.DataFrame,
    expr: Callable[[], pl.Expr],
    error: type[Exception],
    message: str,
    lazy: bool,
) -> None:
    table = frame.lazy() if lazy else frame
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        table.select(expr()).lazy().collect()


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_fuse_refuses_a_list_typed_system_column(lazy: bool) -> None:
    runs = RUN.with_columns(system=pl.concat_list(pl.lit("a")))
    message = (
        "column 'system' of the runs has dtype List(String); each row needs one run name (a "
        "string or an integer): give each row its run's name, e.g. "
        "pl.col('system').list.first() for a list of one name"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.fuse(runs.lazy() if lazy else runs, system="system")


def test_fuse_names_the_run_whose_list_shape_it_refuses() -> None:
    # "column 'score' of the run holds ...": which of the runs (irm fuse's files) untold
    listed = pl.DataFrame({"query_id": ["q1"], "doc_id": [["a", "b"]], "score": [1.0]})
    message = (
        "column 'score' of the run 'b' holds one value per row beside the lists of 'doc_id': "
        "a list-shaped run's ranks are the list positions (1 = first), or a parallel list of "
        "one score per document in 'score'; drop the column, e.g. .drop('score'), or make "
        "it such a list"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse({"a": RUN, "b": listed})


@pytest.mark.parametrize(
    ("qrels", "run", "message"),
    [
        (
            QRELS,
            RUN.with_columns(pl.col("score").cast(pl.String)),
            "run.parquet: column 'score' in the run has dtype String; it must be numeric: "
            "write the file again with column 'score' as numbers (not String)",
        ),
        (
            QRELS,
            RUN.with_columns(pl.concat_list("doc_id")),
            "run.parquet: column 'doc_id' in the run has dtype List(String); trec_eval reads "
            "one id per row, as text: write the file again with column 'doc_id' as strings "
            "or integers, one id per row",
        ),
        (
            QRELS.with_columns(pl.struct("query_id").alias("query_id")),
            RUN,
            "qrels.parquet: column 'query_id' in the judgments has dtype Struct({'query_id': "
            "String}); trec_eval reads one id per row, as text: write the file again with "
            "column 'query_id' as strings or integers, one id per row",
        ),
    ],
    ids=["text scores", "list ids", "struct query ids"],
)
def test_trec_eval_names_a_parquet_files_column(
    tmp_path: Path, qrels: pl.DataFrame, run: pl.DataFrame, message: str
) -> None:
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    done = irm_in_process("trec-eval", "qrels.parquet", "run.parquet", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"
