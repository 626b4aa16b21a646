"""Joints, round 9: time_to_first_click from Datetimes exact to their unit (the
timestamps were floats of seconds since 1970, whose step today is 2.4e-7 s: 12.9 s read
12.900000095367432); ``--sample`` beside a named file refused (the sample or the file
was ignored); interleaving's null team or click names the session and the fix; knn
takes a numpy integer ``k`` and exclude_self's integer ids of two widths."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.errors import ColumnTypeError, CoverageWarning, InvalidValueError
from polars_irmetrics.io.files import sample_paths

START = dt.datetime(2026, 3, 3, 18, 31, 45)
WAITS = {"A": [12.9, 3.3], "B": [7.1, 0.7]}


def _log(unit: str) -> pl.DataFrame:
    rows = []
    for arm, waits in WAITS.items():
        for i, wait in enumerate(waits):
            session = f"{arm}{i}"
            for position, clicked, at in (
                (1, False, START),
                (2, True, START + dt.timedelta(seconds=wait)),
            ):
                rows.append(
                    {
                        "session_id": session,
                        "user_id": session,
                        "arm": arm,
                        "position": position,
                        "clicked": clicked,
                        "timestamp": at,
                    }
                )
    return pl.DataFrame(rows).with_columns(pl.col("timestamp").dt.cast_time_unit(unit))  # type: ignore[arg-type]


@pytest.mark.parametrize("unit", ["ns", "us", "ms"])
@pytest.mark.parametrize("lazy", [False, True])
def test_time_to_first_click_exact(unit: str, lazy: bool) -> None:
    log = _log(unit).filter(pl.col("arm") == "A")
    out = irm.evaluate_online(
        log.lazy() if lazy else log, ["time_to_first_click"], per_session=True
    )
    frame = out.collect() if isinstance(out, pl.LazyFrame) else out
    # before: 12.900000095367432 and 3.2999999523162842
    assert frame.sort("session_id")["time_to_first_click"].to_list() == [12.9, 3.3]


def test_time_to_first_click_of_an_ab_test_exact() -> None:
    out = irm.ab_test(_log("us"), ["time_to_first_click"])
    assert out["control_mean"].item() == (12.9 + 3.3) / 2
    assert out["mean"].item() == (7.1 + 0.7) / 2


def test_time_to_first_click_of_dates_and_numbers() -> None:
    log = _log("us").filter(pl.col("arm") == "A")
    days = log.with_columns(pl.col("timestamp").dt.date())
    assert irm.evaluate_online(days, ["time_to_first_click"])["time_to_first_click"].item() == 0.0
    seconds = log.with_columns(pl.col("timestamp").dt.epoch("ms") / 1000 - 1.7e9)
    value = irm.evaluate_online(seconds, ["time_to_first_click"])["time_to_first_click"].item()
    assert value == pytest.approx((12.9 + 3.3) / 2, abs=1e-6)  # the user's floats, as given


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["evaluate", "RUN", "--sample", "-m", "ndcg@10"],
            "irm: error: --sample evaluates the bundled sample's runs and judgments, and a run "
            "file was named too: drop --sample, or the files",
        ),
        (
            ["evaluate", "--qrels", "QRELS", "--sample", "-m", "ndcg@10"],
            "irm: error: --sample evaluates the bundled sample's runs and judgments, and "
            "--qrels was named too: drop --sample, or the files",
        ),
        (
            ["demo", "RUN"],
            "irm: error: irm demo evaluates the bundled sample's runs and judgments, and a run "
            "file was named too: drop it, or use irm evaluate with run files and --qrels",
        ),
        (
            ["ab", "LOG", "--sample", "-m", "ctr"],
            "irm: error: --sample tests the bundled sample log, and a log file was named too: "
            "drop --sample, or the file",
        ),
    ],
)
def test_sample_beside_a_named_file_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, qrels = sample_paths()
    names = {"RUN": str(runs[0]), "QRELS": str(qrels), "LOG": str(runs[0])}
    assert main([names.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err == message + "\n"


def test_interleaving_null_click_and_team_name_the_session() -> None:
    log = pl.DataFrame(
        {
            "session_id": ["s1", "s1", "s2", "s2"],
            "position": [1, 2, 1, 2],
            "team": ["A", "B", "B", "A"],
            "clicked": [1, 0, None, 1],
        }
    )
    clicked = (
        "column 'clicked' of the log has 1 null value(s), e.g. in session 's2'; every "
        "impression is clicked or not: fill them, e.g. pl.col('clicked').fill_null(False)"
    )
    with pytest.raises(InvalidValueError, match=re.escape(clicked)):
        irm.interleaving_test(log)
    team = (
        "column 'team' of the log has 1 null value(s), e.g. in session 's1'; every shown "
        "item needs the team that contributed it: fill it from the interleaving's "
        "assignment, or drop those sessions, e.g. "
        ".filter(pl.col('team').is_not_null().all().over('session_id'))"
    )
    no_team = log.with_columns(team=pl.Series(["A", None, "B", "A"]), clicked=pl.lit(1))
    with pytest.raises(InvalidValueError, match=re.escape(team)):
        irm.interleaving_test(no_team)


E = np.array([[1.0, 0.0], [0.8, 0.2], [0.0, 1.0]])


@pytest.mark.parametrize("k", [np.int64(2), np.int32(2), np.uint8(2)])
def test_knn_numpy_integer_k(k: object) -> None:
    assert irm.knn(E, E, k=k).equals(irm.knn(E, E, k=2))  # type: ignore[arg-type]
    assert irm.knn(E, E, k=2, block_size=np.int64(1)).equals(irm.knn(E, E, k=2))  # type: ignore[arg-type]


def test_knn_exclude_self_integer_ids_of_two_widths() -> None:
    # numpy queries (Int64 ids 0, 1, 2) beside a corpus numbered by with_row_index (UInt32)
    corpus = pl.DataFrame({"embedding": E}).with_row_index("doc_id")
    run = irm.knn(E, corpus, k=2, exclude_self=True)
    want = irm.knn(E, E, k=2, exclude_self=True)
    assert run.with_columns(pl.col("doc_id").cast(pl.Int64)).equals(want)
    assert (run["query_id"] != run["doc_id"].cast(pl.Int64)).all()


def test_click_metric_expression_datetime_hint_gives_seconds() -> None:
    # before: the fix offered was pl.col('timestamp').cast(pl.Float64): microseconds
    log = _log("us").filter(pl.col("session_id") == "A0")
    message = (
        "column 'timestamp' has dtype Datetime(time_unit='us', time_zone=None); the metric "
        "reads its impression times in seconds from it as numbers: pass seconds from the "
        "session's start, e.g. (pl.col('timestamp') - pl.col('timestamp').min()"
        ".over('session_id')).dt.total_microseconds() / 1e6, or evaluate the log with "
        "irm.evaluate_online, which reads a Datetime"
    )
    with pytest.raises(ColumnTypeError, match=re.escape(message)):
        log.group_by("session_id").agg(irm.click_metric("time_to_first_click"))
    start = pl.col("timestamp").min().over("session_id")
    told = log.with_columns((pl.col("timestamp") - start).dt.total_microseconds() / 1e6)
    value = told.group_by("session_id").agg(irm.click_metric("time_to_first_click"))
    # within a unit in the last place (polars divides by a constant as a product by its
    # reciprocal: 12.899999999999999); irm.evaluate_online's is exact
    assert value["time_to_first_click"].item() == pytest.approx(12.9, rel=2e-16, abs=0)


@pytest.mark.parametrize(
    "ids", [{"query_id": "doc_id"}, {"query_id": "x", "doc_id": "x"}], ids=["default", "both"]
)
def test_knn_one_column_for_both_ids_refused(ids: dict[str, str]) -> None:
    # before: polars' "projections contained duplicate output name" text
    name = ids.get("doc_id", "doc_id")
    message = (
        f"query_id={name!r} and doc_id={name!r} name the same column; each needs its own "
        "column: pass doc_id= with the name of the doc_id column"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.knn(E, E, k=2, **ids)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("table", "metrics", "keywords", "named"),
    [
        (
            pl.DataFrame({"label": [1, 0, 1], "prediction": [0.2, 0.3, 0.1]}),
            ["auc", "logloss"],
            {},
            "metrics 'auc', 'logloss' evaluate",
        ),
        (
            pl.DataFrame({"query_id": ["s1", "s1"], "rank": [1, 2], "clicked": [True, False]}),
            ["ctr@2"],
            {},
            "metric 'ctr@2' evaluates",
        ),
    ],
    ids=["prediction", "online"],
)
def test_spill_dir_under_auto_memory_refused_where_nothing_splits(
    table: pl.DataFrame, metrics: list[str], keywords: dict[str, Any], named: str, tmp_path: Path
) -> None:
    # before: accepted and never used (these routes stay in one plan under auto-memory)
    message = (
        f"spill_dir={str(tmp_path)!r} is the folder of the out-of-core buckets, and {named} "
        "in one plan unless buckets= is a number or 'auto': pass buckets=, or drop spill_dir="
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(table, metrics, spill_dir=tmp_path, buckets="auto-memory", **keywords)
    split = irm.evaluate(table, metrics, spill_dir=tmp_path, buckets=2, **keywords)
    assert split.equals(irm.evaluate(table, metrics, **keywords))


@pytest.mark.parametrize(
    ("listed", "fate"),
    [
        (
            "zz",
            "no judged query is left to score (unretrieved='drop' leaves out those it does not "
            "list): every mean is over 0 queries (num_q 0)",
        ),
        (
            "q1",
            "the judged queries it lists score as a ranking of no judged document does (0 in "
            "ndcg, map, precision, recall and the like), the others left out "
            "(unretrieved='drop')",
        ),
    ],
    ids=["none-listed", "one-listed"],
)
def test_no_judged_document_under_unretrieved_drop_says_what_is_scored(
    listed: str, fate: str
) -> None:
    # before: "every metric scores 0 on every judged query", where the mean was over no
    # query (NaN, num_q 0) or over the listed queries alone
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    run = pl.DataFrame({"query_id": [listed], "doc_id": ["x"], "rank": [1]})
    with pytest.warns(CoverageWarning) as said:
        out = irm.evaluate(run, ["map"], qrels=qrels, unretrieved="drop")
    assert [fate in str(w.message) for w in said] == [True]
    assert out["num_q"].item() == (0 if listed == "zz" else 1)
