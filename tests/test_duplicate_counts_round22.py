"""Duplicate judgments, round 22: the count in the message and its words agree.

The judgments' duplicate check counts, per query, the judgments past a document's first
(``judgment_flags``' ``q_dup_doc``: a reduction of the metric group-by, which streams),
but its message said the query "judges N document(s) more than once": one document
judged three times read "judges 2 document(s)". It now says "has N repeated
judgment(s)", what is counted. With ``check_duplicates=False`` the count is of the
query's judgments joined to its run rows (a run's repeat of a judged document shows
there too); its message, which said "N judged document(s) listed more than once" (one
document judged twice and listed twice read 3), now says "N repeated row(s) once its
judgments are joined to its run rows". A count of the distinct documents judged twice
(``is_duplicated`` in the aggregation) would make polars' streaming group-by fall back
to its non-partitioned hash aggregation (measured: "not partitionable" in its log).
The command line still names the file's line that repeats the judgment.

The run's duplicate check had the same fault: it counts, per query, the rows past a
document's first listing (``pl.len() - n_unique()``, or the tally's rows less its
documents), but said the query "lists N document(s) more than once": one document
listed three times read "lists 2 document(s)". It now says "has N repeated listing(s)
(each of a document listed before in the query)", on every route (one template,
``RUN_FLAGS``' ``dup_doc``), and the command line still names the line that repeats one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError

from .helpers import engine_io, irm_in_process

RUN = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"], "score": [3.0, 2.0, 1.0]}
)


def _judged(docs: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": ["q1"] * len(docs), "doc_id": docs, "relevance": [1] * len(docs)}
    )


def _checked(n: int) -> str:
    return (
        f"column 'doc_id' of the judgments: query 'q1' has {n} repeated judgment(s) (each of "
        "a document judged before in the query); keep one judgment per document, e.g. "
        ".unique(['query_id', 'doc_id'])"
    )


def _unchecked(n: int) -> str:
    return (
        "column 'doc_id': query 'q1' has judged document(s) listed more than once, in the "
        f"run or in the judgments: {n} repeated row(s) once its judgments are joined to its "
        "run rows (the run's own duplicate checks are off: check_duplicates=False); keep "
        "one row per document, e.g. .unique(['query_id', 'doc_id'])"
    )


#: (id, run, judged documents of q1, check_duplicates, message): counted by hand.
CASES: list[tuple[str, pl.DataFrame, list[str], bool, str]] = [
    # d1 judged three times: two repeats (it read "judges 2 document(s)")
    ("d1 judged 3 times", RUN, ["d1", "d1", "d1", "d2"], True, _checked(2)),
    # d1 and d2 judged twice each: one repeat each
    ("d1 and d2 judged twice", RUN, ["d1", "d1", "d2", "d2"], True, _checked(2)),
    # a document judged twice and not retrieved is a repeat too
    ("d4 judged twice, unretrieved", RUN, ["d1", "d4", "d4"], True, _checked(1)),
    ("d1 judged 3 times, checks off", RUN, ["d1", "d1", "d1", "d2"], False, _unchecked(2)),
    ("d1 and d2 judged twice, checks off", RUN, ["d1", "d1", "d2", "d2"], False, _unchecked(2)),
    # the run lists d1 twice too: its two judgments joined to its two rows are four rows
    # (3 repeated), d2's two judgments (unretrieved) one more
    (
        "d1 listed and judged twice, d2 judged twice, checks off",
        RUN.with_columns(doc_id=pl.Series(["d1", "d1", "d3"])),
        ["d1", "d1", "d2", "d2"],
        False,
        _unchecked(4),
    ),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(
    ("run", "docs", "checked", "message"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_evaluate_says_what_it_counts(
    run: pl.DataFrame, docs: list[str], checked: bool, message: str, lazy: bool
) -> None:
    with pytest.raises(DuplicateError, match=f"^{re.escape(message)}$"):
        _evaluate(run, _judged(docs), checked, lazy)


def _evaluate(run: pl.DataFrame, qrels: pl.DataFrame, checked: bool, lazy: bool) -> object:
    """irm.evaluate of ``ndcg@3`` on DataFrames, or on LazyFrames and collected."""
    if not lazy:
        return irm.evaluate(run, ["ndcg@3"], qrels=qrels, check_duplicates=checked)
    plan = irm.evaluate(run.lazy(), ["ndcg@3"], qrels=qrels.lazy(), check_duplicates=checked)
    return plan.collect()


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    ("run", "docs", "checked", "message"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_the_engines_say_it_alike(
    run: pl.DataFrame,
    docs: list[str],
    checked: bool,
    message: str,
    engine: str,
    request: pytest.FixtureRequest,
) -> None:
    evaluate, to_engine, from_engine = engine_io(engine, request)
    run_in, qrels_in = to_engine(run), to_engine(_judged(docs))
    with pytest.raises(DuplicateError, match=f"^{re.escape(message)}$"):
        from_engine(evaluate(run_in, ["ndcg@3"], qrels=qrels_in, check_duplicates=checked))


_TREC_RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.0 r\n"

#: (id, the qrels file, irm's error line): the line named is the query's first repeat.
TREC_CASES = [
    (
        "d1 judged 3 times",
        "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 1\nq1 0 d1 0\n",
        "qrels.txt, line 3: query 'q1' has 2 repeated judgment(s) (document 'd1' again, "
        "first on line 1); keep one judgment per query and document: drop or merge the "
        "repeated line",
    ),
    (
        "d1 and d2 judged twice",
        "q1 0 d1 1\nq1 0 d2 0\nq1 0 d2 1\nq1 0 d1 0\n",
        "qrels.txt, line 3: query 'q1' has 2 repeated judgment(s) (document 'd2' again, "
        "first on line 2); keep one judgment per query and document: drop or merge the "
        "repeated line",
    ),
]


@pytest.mark.parametrize(
    ("qrels", "message"), [case[1:] for case in TREC_CASES], ids=[case[0] for case in TREC_CASES]
)
def test_the_command_line_names_the_repeated_line(
    tmp_path: Path, qrels: str, message: str
) -> None:
    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "run.txt").write_text(_TREC_RUN)
    done = irm_in_process("evaluate", "run.txt", "--qrels", "qrels.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_the_command_line_with_the_checks_off_says_what_it_counts(tmp_path: Path) -> None:
    # d1 judged three times, the run's checks off: the joined count, the file's fix
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d1 1\nq1 0 d1 0\n")
    (tmp_path / "run.txt").write_text(_TREC_RUN)
    args = ("--qrels", "qrels.txt", "--no-duplicate-check")
    done = irm_in_process("evaluate", "run.txt", *args, cwd=tmp_path)
    message = (
        "run.txt, qrels.txt: column 'doc_id': query 'q1' has judged document(s) listed more "
        "than once, in the run or in the judgments: 2 repeated row(s) once its judgments are "
        "joined to its run rows (the run's own duplicate checks are off: "
        "--no-duplicate-check); keep one row per document: drop or merge the repeated rows"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# -- the run's duplicates ---------------------------------------------------------------


def _listed(docs: list[str]) -> pl.DataFrame:
    """Query q1's run listing ``docs`` in that order, scored from the top."""
    return pl.DataFrame(
        {
            "query_id": ["q1"] * len(docs),
            "doc_id": docs,
            "score": [float(len(docs) - i) for i in range(len(docs))],
        }
    )


def _listing(n: int, frame: str = "run", unique: str = "['query_id', 'doc_id']") -> str:
    column = "item_id" if frame == "recommendations" else "doc_id"
    query = "1" if frame == "recommendations" else "'q1'"
    return (
        f"column {column!r} of the {frame}: query {query} has {n} repeated listing(s) (each "
        "of a document listed before in the query); each (query, document) pair may appear "
        f"once (trec_eval refuses such runs too): keep one row per document, e.g. "
        f".unique({unique})"
    )


#: (id, q1's listed documents, repeated listings): counted by hand.
LISTED: list[tuple[str, list[str], int]] = [
    # d1 listed three times: two repeats (it read "lists 2 document(s)")
    ("d1 listed 3 times", ["d1", "d2", "d1", "d1"], 2),
    # d1 and d2 listed twice each: one repeat each
    ("d1 and d2 listed twice", ["d1", "d2", "d1", "d2"], 2),
    ("d1 listed twice", ["d1", "d2", "d1"], 1),
]
_LISTED_IDS = [case[0] for case in LISTED]
_LISTED_ARGS = [case[1:] for case in LISTED]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("docs", "n"), _LISTED_ARGS, ids=_LISTED_IDS)
def test_the_run_says_what_it_counts(docs: list[str], n: int, lazy: bool) -> None:
    with pytest.raises(DuplicateError, match=f"^{re.escape(_listing(n))}$"):
        _evaluate(_listed(docs), _judged(["d1", "d2"]), True, lazy)


def _exposure(run: pl.DataFrame, lazy: bool) -> object:
    """ee_loss (the exposure measures' plan), whose checks count the tally's rows."""
    qrels = _judged(["d1", "d2"])
    if not lazy:
        return irm.evaluate(run, ["ee_loss"], qrels=qrels)
    return irm.evaluate(run.lazy(), ["ee_loss"], qrels=qrels.lazy()).collect()


def _catalog(run: pl.DataFrame, lazy: bool) -> object:
    """catalog_coverage alone (the recommendation-table plan counts the rows itself)."""
    ranked = run.drop("score").with_row_index("rank", offset=1)
    history = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d3"]})
    if not lazy:
        return irm.evaluate(ranked, ["catalog_coverage@10"], interactions=history)
    plan = irm.evaluate(ranked.lazy(), ["catalog_coverage@10"], interactions=history.lazy())
    return plan.collect()


def _coverage(run: pl.DataFrame, lazy: bool) -> object:
    """irm.beyond_accuracy's coverage on users' recommendations (its own checks)."""
    recs = pl.DataFrame(
        {
            "user_id": [1] * run.height,
            "item_id": run["doc_id"],
            "rank": range(1, run.height + 1),
        }
    )
    history = pl.DataFrame({"user_id": [1, 2], "item_id": ["d1", "d3"]})
    if not lazy:
        return irm.beyond_accuracy(recs, ["coverage"], interactions=history)
    return irm.beyond_accuracy(recs.lazy(), ["coverage"], interactions=history.lazy()).collect()


#: (id, the route, the frame its message names, its fix's columns).
ROUTES = [
    ("exposure", _exposure, "run", "['query_id', 'doc_id']"),
    ("catalog_coverage", _catalog, "run", "['query_id', 'doc_id']"),
    ("beyond_accuracy", _coverage, "recommendations", "['user_id', 'item_id']"),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize(("docs", "n"), _LISTED_ARGS, ids=_LISTED_IDS)
@pytest.mark.parametrize(
    ("route", "frame", "unique"), [r[1:] for r in ROUTES], ids=[r[0] for r in ROUTES]
)
def test_the_other_routes_say_it_alike(
    route: Any, frame: str, unique: str, docs: list[str], n: int, lazy: bool
) -> None:
    with pytest.raises(DuplicateError, match=f"^{re.escape(_listing(n, frame, unique))}$"):
        route(_listed(docs), lazy)


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(("docs", "n"), _LISTED_ARGS, ids=_LISTED_IDS)
def test_the_engines_say_the_runs_alike(
    docs: list[str], n: int, engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, from_engine = engine_io(engine, request)
    run_in, qrels_in = to_engine(_listed(docs)), to_engine(_judged(["d1", "d2"]))
    with pytest.raises(DuplicateError, match=f"^{re.escape(_listing(n))}$"):
        from_engine(evaluate(run_in, ["ndcg@3"], qrels=qrels_in))


#: (id, the run file, irm's error line): the line named is the query's first repeat.
TREC_RUNS = [
    (
        "d1 listed 3 times",
        "q1 Q0 d1 1 4.0 r\nq1 Q0 d2 2 3.0 r\nq1 Q0 d1 3 2.0 r\nq1 Q0 d1 4 1.0 r\n",
        "run.txt, line 3: query 'q1' has 2 repeated listing(s) (document 'd1' again, first "
        "on line 1); each (query, document) pair may appear once (trec_eval refuses such "
        "runs too): drop the repeated line",
    ),
    (
        "d1 and d2 listed twice",
        "q1 Q0 d1 1 4.0 r\nq1 Q0 d2 2 3.0 r\nq1 Q0 d2 3 2.0 r\nq1 Q0 d1 4 1.0 r\n",
        "run.txt, line 3: query 'q1' has 2 repeated listing(s) (document 'd2' again, first "
        "on line 2); each (query, document) pair may appear once (trec_eval refuses such "
        "runs too): drop the repeated line",
    ),
]


@pytest.mark.parametrize(
    ("run", "message"), [case[1:] for case in TREC_RUNS], ids=[case[0] for case in TREC_RUNS]
)
def test_the_command_line_names_the_runs_repeated_line(
    tmp_path: Path, run: str, message: str
) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "run.txt").write_text(run)
    done = irm_in_process("evaluate", "run.txt", "--qrels", "qrels.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")
