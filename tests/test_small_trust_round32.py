"""Round 32's small trust defects: each a refusal, a warning or a label that was missing."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import irm_in_process, warned

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-N", "-2"],
         "irm trec-eval: error: argument -N/--Number_docs_in_coll: expected an integer >= 0, "
         "got '-2' (see 'irm trec-eval --help')"),
        (["-N", "1.5"],
         "irm trec-eval: error: argument -N/--Number_docs_in_coll: expected an integer >= 0, "
         "got '1.5' (see 'irm trec-eval --help')"),
    ],
)  # fmt: skip
def test_trec_eval_number_of_documents_is_a_non_negative_integer(
    files: Path, args: list[str], message: str
) -> None:
    done = irm_in_process("trec-eval", *args, "qrels", "run", cwd=files)
    assert (done.returncode, done.stdout, done.stderr.strip().splitlines()[-1]) == (2, "", message)
    # -N 0 is trec_eval's default
    assert irm_in_process("trec-eval", "-N", "0", "qrels", "run", cwd=files).returncode == 0


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [("--n-bootstrap", "-3", "an integer > 0"), ("--seed", "-1", "an integer >= 0")],
)
def test_the_bootstrap_flags_are_refused_by_the_parser(
    files: Path, flag: str, value: str, expected: str
) -> None:
    # refused before the log is read (it was the keyword's words: n_bootstrap must be ...)
    done = irm_in_process("evaluate", "log.parquet", "-m", "ips", "--ci", "0.95", flag, value,
                          cwd=files)  # fmt: skip
    message = (
        f"irm evaluate: error: argument {flag}: expected {expected}, got '{value}' (see 'irm "
        "evaluate --help')"
    )
    assert (done.returncode, done.stdout, done.stderr.strip().splitlines()[-1]) == (2, "", message)


def test_compare_seed_is_refused_by_the_parser(files: Path) -> None:
    # it was the keyword's words, after reading the files: "--seed -1 must be a whole
    # number >= 0 (e.g. --seed 0) or None (a fresh random draw each call)": no None on
    # a command line
    done = irm_in_process("compare", "run", "run", "--qrels", "qrels", "--seed", "-1", cwd=files)
    message = (
        "irm compare: error: argument --seed: expected an integer >= 0, got '-1' (see 'irm "
        "compare --help')"
    )
    assert (done.returncode, done.stdout, done.stderr.strip().splitlines()[-1]) == (2, "", message)


@pytest.mark.parametrize(
    ("args", "fmt", "output", "named", "example"),
    [
        (["fuse", "run", "run2"], "csv", "out.parquet", "parquet", "out.csv"),
        (["fuse", "run", "run2"], "trec", "out.csv", "csv", "out.txt"),
        (["trec-eval", "qrels", "run"], "csv", "out.parquet", "parquet", "out.csv"),
        (["evaluate", "run", "--qrels", "qrels", "-m", "map"], "json", "out.csv.gz", "csv",
         "out.json.gz"),
        (["compare", "run", "run2", "--qrels", "qrels"], "markdown", "out.tex", "latex",
         "out.md"),
        (["metrics"], "csv", "out.json", "json", "out.csv"),
    ],
)  # fmt: skip
def test_a_format_that_contradicts_the_output_suffix_is_refused(
    files: Path, args: list[str], fmt: str, output: str, named: str, example: str
) -> None:
    (files / "run2").write_text(RUN.replace("r\n", "s\n"))
    done = irm_in_process(*args, "--format", fmt, "-o", output, cwd=files)
    message = (
        f"irm: error: --format {fmt} contradicts -o {output}, whose suffix names {named}: "
        f"drop --format to write {named}, or name the file for {fmt} (e.g. -o {example})"
    )
    assert (done.returncode, done.stdout, done.stderr.strip()) == (2, "", message)
    assert not (files / output).exists()


NO_CLICK = (
    "column 'click' of the impression log has no click: every impression of its 2 session(s) "
    "(one per 'session_id') is unclicked, and is scored so (a click rate 0, every session "
    "abandoned, no click position or dwell); a log without a click most often comes from a "
    "join of the clicks onto the impressions that matched nothing (ids or dtypes that "
    "differ): check the join, or ignore this warning if no one clicked"
)
LOG = pl.DataFrame(
    {"session_id": ["s1", "s1", "s2"], "position": [1, 2, 1], "click": [0, 0, 0],
     "day": [1, 1, 2]}
)  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("metrics", "options", "first"),
    [
        (["ctr", "abandonment"], {}, (2, 0.0, 1.0)),
        (["abandonment"], {"per_session": True}, ("s1", 1.0)),
        (["ctr@1"], {"by": "day"}, (1, 1, 0.0)),
        (["ctr"], {"buckets": 2}, (2, 0.0)),
    ],
)
def test_a_log_without_a_click_is_warned(
    lazy: bool, metrics: list[str], options: dict[str, object], first: tuple[object, ...]
) -> None:
    log = LOG.lazy() if lazy else LOG
    got, said = warned(lambda: irm.evaluate_online(log, metrics, clicked="click", **options))
    assert (got.row(0), said) == (first, [NO_CLICK])
    # one click: silent; no row: the empty log's warning alone
    clicked = LOG.with_columns(click=pl.Series([0, 1, 0]))
    assert warned(lambda: irm.evaluate_online(clicked, metrics, clicked="click"))[1] == []
    _, said = warned(lambda: irm.evaluate_online(LOG.clear(), metrics, clicked="click"))
    assert [s[:30] for s in said] == ["the impression log holds no ro"]


WIDE = 2**53


@pytest.mark.parametrize("metric", ["mse", "rmse", "mae", "r2", "explained_variance"])
@pytest.mark.parametrize(
    ("label", "prediction"),
    [(pl.Int64, pl.Int64), (pl.Float64, pl.UInt64), (pl.Decimal(20, 0), pl.Float64)],
)
def test_a_rating_expression_gives_nan_for_a_wide_integer(
    metric: str, label: pl.DataType, prediction: pl.DataType
) -> None:
    # group 1 holds 2**53 in the integer column (refused by irm.evaluate): NaN; group 2
    # is valid and keeps its value; a Float64 2**53 is a float, read as it is
    frame = pl.DataFrame(
        {"g": [1, 1, 2, 2], "label": [WIDE, WIDE + 1, 3, 1], "prediction": [WIDE + 1, WIDE, 1, 2]}
    ).with_columns(pl.col("label").cast(label), pl.col("prediction").cast(prediction))
    got = frame.lazy().group_by("g").agg(getattr(irm, metric)()).sort("g").collect()
    expected = irm.evaluate(frame.filter(pl.col("g") == 2), [metric], label="label",
                            prediction="prediction")[metric].item()  # fmt: skip
    assert math.isnan(got[metric][0])
    assert got[metric][1] == expected
    with pytest.raises(irm.InvalidValueError, match=r"magnitude 2\*\*53 or more"):
        irm.evaluate(frame, [metric], label="label", prediction="prediction")


@pytest.mark.parametrize(
    ("metric", "expr"),
    [
        ("ndcg(gain='exponential')@10", irm.ndcg(10, gain="exponential")),
        ("dcg(gain='exponential')@1", irm.dcg(1, gain="exponential")),
        ("ndcg(gain='exponential')@1", irm.ndcg(1, gain="exponential")),
    ],
)
@pytest.mark.parametrize("label", [32, 33, 60000])
@pytest.mark.parametrize("rank", [1, 2, None])
def test_an_exponential_gain_evaluate_refuses_is_null_in_the_expression(
    metric: str, expr: pl.Expr, label: int, rank: int | None
) -> None:
    # the label at rank 1, at rank 2 (beyond dcg@1's cutoff) or judged, not retrieved
    ranks = {1: [1, 2, None], 2: [2, 1, None], None: [None, 1, 2]}[rank]
    judged = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c"], "rank": ranks, "relevance": [label, 1, 0]}
    )
    got = judged.lazy().group_by("query_id").agg(expr).collect()[metric].item()
    # 2**33 - 1 is beyond the exact sums; dcg@1 reads rank 1 alone
    if label > 32 and (rank == 1 or metric.startswith("ndcg")):
        with pytest.raises(irm.InvalidValueError, match=r"a metric term of 2\*\*32 or more"):
            irm.evaluate(judged, [metric])
        assert got is None
    else:
        assert got == irm.evaluate(judged, [metric])[metric].item()


def test_the_curves_say_the_direction_on_the_y_axis() -> None:
    from polars_irmetrics.comparison.plot import plot_metric_curves

    means = pl.DataFrame(
        {"system": ["a", "b"], "num_q": [2, 2], "gini@1": [0.5, 1.0], "gini@2": [0.5, 0.75],
         "P@1": [0.1, 0.2], "P@2": [0.3, 0.2]}
    )  # fmt: skip
    labels = [panel.get_ylabel() for panel in plot_metric_curves(means).axes]
    assert labels == ["gini@k (lower is better)", "P@k"]
