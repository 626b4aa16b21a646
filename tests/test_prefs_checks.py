"""The preference measures (``prefs=``) check the run as the ranking metrics check it.

The route once read the run's ``score`` column as it came: a run whose ids matched none
of the preferences' scored 0 without a word, a String score sorted as text, a null or
NaN score was ranked, a run with ranks and no score raised polars' own error, and
``query_id=``, ``doc_id=`` and ``score=`` were refused or unread. Now each bad run gets
``irm.evaluate(run, ["map"], qrels=...)``'s error and message, a run that misses the
preferences gets its ``CoverageWarning`` (naming ``prefs=``), a run with ranks is
ordered by them, and the column options name the columns.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CoverageWarning,
    InvalidValueError,
    IrmError,
    QuerySetError,
)
from polars_irmetrics.ground.options import READ_BY, EvalOptions
from polars_irmetrics.metrics.registry import parse_metric_list
from polars_irmetrics.offline.prefs import PREFS_MEASURES, build_prefs_plan

from .bad_inputs import BAD_INPUTS, BadInput, qrels_frame, run_frame
from .conftest import Evaluate
from .helpers import irm_in_process

#: The judgments of tests/bad_inputs.py (q1: b 1, x 2; q2: d 0) as one user's
#: preferences, each query with one more document (level 0) the run retrieves.
PREFS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "jg": ["u"] * 5,
        "jsg": ["s"] * 5,
        "doc_id": ["b", "x", "a", "d", "a"],
        "rel_level": [1.0, 2.0, 0.0, 1.0, 0.0],
    }
)
#: The preferences' (query, document) pairs as judgments, for the ranking metrics.
QRELS = PREFS.select("query_id", "doc_id", relevance=pl.col("rel_level"))
#: Two users' preferences that tests/bad_inputs.py's run fulfils in part, in an order
#: that the run's ranking decides (the values of the tests of ranks and of the options).
VALUED = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 3 + ["q1"] * 2,
        "jg": ["u"] * 6 + ["v"] * 2,
        "jsg": ["s"] * 8,
        "doc_id": ["c", "a", "b", "x", "a", "d", "b", "c"],
        "rel_level": [2.0, 1.0, 0.0, 2.0, 1.0, 0.0, 1.0, 0.0],
    }
)


def _raised(call: Any) -> tuple[type[Exception], str]:
    with pytest.raises(IrmError) as info:
        call()
    return type(info.value), str(info.value)


def _warnings(call: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]


def _in_prefs_words(text: str) -> str:
    """The ranking metrics' coverage warning, naming the preferences."""
    text = text.replace("the judgments", "the preferences (prefs=)")
    return text.replace(", judgments '", ", preferences '")


# --- coverage: a run that matches none of the preferences is warned about ------------

_UPPER = (
    "the run retrieves no judged document (0 of 5 judged documents, in 0 of 2 judged "
    "queries; it lists 2 of the 2 judged queries): every judged query scores as a ranking of no "
    "judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval scores "
    "such a run. 4 (query, document) pair(s) of the run match "
    "a judgment only when case is ignored (run 'a', preferences 'A'): ids are compared "
    "exactly, as trec_eval compares them; give both the same spelling, e.g. "
    "pl.col('doc_id').str.to_lowercase() on the run and the preferences (prefs=)."
)
_SHIFTED = (
    "the run retrieves no judged document (0 of 5 judged documents, in 0 of 2 judged "
    "queries; it lists 0 of the 2 judged queries): every judged query scores as a ranking of no "
    "judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval scores "
    "such a run. 2 query id(s) of the run match a judged query "
    "only once leading zeros are ignored (run 'q1', preferences 'q01'): ids are compared "
    "exactly, as trec_eval compares them; give both the same spelling, e.g. "
    "pl.col('query_id').str.replace('^([^0-9]*)0+([0-9])', '${1}${2}') on the run and the "
    "preferences (prefs=)."
)
_CASES = {
    "doc ids upper-cased": (pl.col("doc_id").str.to_uppercase(), "doc_id", _UPPER),
    "query ids shifted": (pl.col("query_id").str.replace("q", "q0"), "query_id", _SHIFTED),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_a_run_that_matches_no_preference_is_warned_about(frame_kind: str, case: str) -> None:
    changed, column, message = _CASES[case]
    prefs = PREFS.with_columns(changed.alias(column))
    run = run_frame()
    metrics = ["prefs_simp", "prefs_pair"]
    if frame_kind == "LazyFrame":  # when the plan runs
        got = _warnings(irm.evaluate(run.lazy(), metrics, prefs=prefs.lazy()).collect)
    else:
        got = _warnings(lambda: irm.evaluate(run, metrics, prefs=prefs))
    assert got == [message]
    # the values are unchanged (trec_eval's 0), and so is the warning under 'drop'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        values = irm.evaluate(run, ["prefs_simp", "prefs_pair"], prefs=prefs)
    assert values.rows() == [(2, 0.0, 0.0)]
    dropped = _warnings(lambda: irm.evaluate(run, ["prefs_simp"], prefs=prefs, unretrieved="drop"))
    if "it lists 0 of" in message:  # under 'drop' no query is left: num_q 0, said so
        message_dropped = message.replace(
            "every judged query scores as a ranking of no judged document does (0 in ndcg, map, "
            "precision, recall and the like), as trec_eval scores such a run",
            "no judged query is left to score (unretrieved='drop' leaves out those it does "
            "not list): every mean is over 0 queries (num_q 0)",
        )
        assert dropped == [message_dropped]
    else:
        assert dropped == [message]
    # the ranking metrics' warning of the same ids beside qrels=, in the same words
    qrels = QRELS.with_columns(changed.alias(column))
    ranking = _warnings(lambda: irm.evaluate(run, ["map"], qrels=qrels))
    assert [_in_prefs_words(text) for text in ranking] == [message]


def test_a_lazy_run_is_warned_about_when_the_plan_runs() -> None:
    prefs = PREFS.with_columns(pl.col("doc_id").str.to_uppercase())
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        plan = irm.evaluate(run_frame().lazy(), ["prefs_simp"], prefs=prefs.lazy())
    assert _warnings(plan.collect) == [_UPPER]


def test_a_run_that_matches_the_preferences_is_not_warned_about() -> None:
    assert _warnings(lambda: irm.evaluate(run_frame(), ["prefs_simp"], prefs=PREFS)) == []
    # one query of two missed: not most of them
    half = PREFS.with_columns(pl.col("query_id").replace("q2", "q9"))
    assert _warnings(lambda: irm.evaluate(run_frame(), ["prefs_simp"], prefs=half)) == []


def test_empty_preferences_are_warned_about() -> None:
    got = _warnings(lambda: irm.evaluate(run_frame(), ["prefs_simp"], prefs=PREFS.clear()))
    assert got == [
        "no judged query to evaluate: the preferences (prefs=) are empty, so every mean is "
        "over 0 queries (num_q 0; with unjudged='zero', over the run's queries, each "
        "scoring 0); check the preferences' file or frame (trec_eval refuses "
        "such an evaluation: 'No queries with both results and relevance info')"
    ]


def test_the_command_shows_the_warning(tmp_path: Path) -> None:
    (tmp_path / "run.trec").write_text(
        "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq2 Q0 a 1 2.0 r\nq2 Q0 d 2 1.0 r\n"
    )
    (tmp_path / "upper.txt").write_text("q1 u s A 2\nq1 u s B 1\nq2 u s D 1\nq2 u s A 0\n")
    (tmp_path / "ok.txt").write_text("q1 u s a 2\nq1 u s b 1\nq2 u s d 1\nq2 u s a 0\n")
    args = ("evaluate", "run.trec", "-m", "prefs_simp", "--prefs")
    done = irm_in_process(*args, "upper.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == ["2", "0.0000"]
    assert done.stderr.startswith(
        "irm: warning: the run retrieves no judged document (0 of 4 judged documents, in 0 "
        "of 2 judged queries; it lists 2 of the 2 judged queries): every judged query scores as a"
        " ranking of no judged document does (0 in ndcg, map, precision, recall and the like), as"
        " trec_eval scores such a run. 4 (query, document) pair(s) of "
        "the run match a judgment only when case is ignored (run 'a', preferences 'A')"
    )
    assert len(done.stderr.splitlines()) == 1
    clean = irm_in_process(*args, "ok.txt", cwd=tmp_path)
    assert (clean.returncode, clean.stderr) == (0, "")
    assert clean.stdout.splitlines()[-1].split() == ["2", "0.5000"]


# --- the run's checks: map's error for each bad run ----------------------------------

#: The bad inputs whose problem is the run's (tests/test_same_error_every_route.py).
RUN_ONLY = [
    bad
    for bad in BAD_INPUTS
    if "qrels" in bad.build()[1] and "judg" not in bad.name and "label" not in bad.name
]


@pytest.mark.parametrize("bad", RUN_ONLY, ids=[b.name for b in RUN_ONLY])
def test_a_bad_run_gets_the_ranking_metrics_error(evaluate: Evaluate, bad: BadInput) -> None:
    run, _ = bad.build()
    expected = _raised(lambda: evaluate(run, ["map"], qrels=qrels_frame()))
    assert expected[0] is bad.error
    assert expected[1].startswith(bad.message)
    for metric in ("prefs_simp", "prefs_avgjg_Rnonrel"):
        assert _raised(lambda m=metric: evaluate(run, [m], prefs=PREFS)) == expected, metric


_NAN = float("nan")
#: More bad runs, each with map's error (exact messages).
MORE_BAD = {
    "String score (sorted as text: '10' < '9')": (
        run_frame(score=["3", "2", "10", "9", "1"]),
        ColumnTypeError,
        "column 'score' in the run has dtype String; it must be numeric: cast it, e.g. "
        "pl.col('score').cast(pl.Float64)",
    ),
    "NaN score of a query the preferences lack": (
        run_frame(query_id=["q1", "q1", "q1", "q7", "q7"], score=[3.0, 2.0, 1.0, _NAN, 1.0]),
        InvalidValueError,
        "column 'score' of the run has 1 NaN value(s) in query 'q7'; NaN cannot be ranked: "
        "replace them, e.g. pl.col('score').fill_nan(float('-inf'))",
    ),
    "neither rank nor score": (
        run_frame().drop("score"),
        ColumnNotFoundError,
        "the run has neither a 'rank' nor a 'score' column to order its documents (its "
        "columns: 'query_id', 'doc_id'); name yours with rank=... or score=...",
    ),
    "no doc_id": (
        run_frame().drop("doc_id"),
        ColumnNotFoundError,
        "column 'doc_id' not found in the run (its columns: 'query_id', 'score'); pass the "
        "column names, e.g. query_id='qid', doc_id='docno'",
    ),
    "float ranks": (
        run_frame(rank=[1.0, 2.0, 3.0, 1.0, 2.0]).drop("score"),
        ColumnTypeError,
        "column 'rank' in the run has dtype Float64; it must be an integer: where every "
        "value is a whole number, cast it, e.g. pl.col('rank').cast(pl.Int64) (a cast drops a "
        "fraction: 1.5 becomes 1; check (pl.col('rank') % 1 == 0).all() first)",
    ),
    "a rank beyond Int64": (
        run_frame(rank=pl.Series([1, 2, 2**63 + 1, 1, 2], dtype=pl.UInt64)).drop("score"),
        InvalidValueError,
        "column 'rank' of the run has 1 rank(s) of 2**63 or more in query 'q1'; a rank "
        "counts positions in one list: renumber them 1, 2, 3, ..., e.g. "
        "pl.col('rank').rank('ordinal').over(query_id)",
    ),
}


@pytest.mark.parametrize("case", list(MORE_BAD))
def test_more_bad_runs_get_the_ranking_metrics_error(evaluate: Evaluate, case: str) -> None:
    run, error, message = MORE_BAD[case]
    expected = (error, message)
    assert _raised(lambda: evaluate(run, ["map"], qrels=qrels_frame())) == expected
    assert _raised(lambda: evaluate(run, ["prefs_simp"], prefs=PREFS)) == expected


def test_a_query_of_the_preferences_the_run_lacks_is_refused_under_error() -> None:
    # unretrieved='error' once left such a query out in silence, as 'drop' does
    q3 = pl.col("query_id").replace("q1", "q3")
    prefs = pl.concat([PREFS, PREFS.filter(pl.col("query_id") == "q1").with_columns(q3)])
    message = (
        "1 query is in the judgments but not in the run: 'q3'; pass unretrieved='zero' to "
        "score them 0 or unretrieved='drop' to leave them out"
    )
    qrels = pl.concat([QRELS, QRELS.filter(pl.col("query_id") == "q1").with_columns(q3)])
    expected = (QuerySetError, message)
    run = run_frame()
    assert (
        _raised(lambda: irm.evaluate(run, ["map"], qrels=qrels, unretrieved="error")) == expected
    )
    assert (
        _raised(lambda: irm.evaluate(run, ["prefs_simp"], prefs=prefs, unretrieved="error"))
        == expected
    )
    kept = irm.evaluate(run, ["prefs_simp"], prefs=PREFS, per_query=True, unretrieved="error")
    assert kept["query_id"].to_list() == ["q1", "q2"]


def test_a_null_query_of_the_preferences_is_refused() -> None:
    prefs = PREFS.with_columns(query_id=pl.Series(["q1", None, "q1", "q2", "q2"]))
    assert _raised(lambda: irm.evaluate(run_frame(), ["prefs_simp"], prefs=prefs)) == (
        InvalidValueError,
        "column 'query_id' of the preferences has null values; every row needs a query_id: "
        "drop them, e.g. .drop_nulls('query_id')",
    )


# --- the preferences' columns -------------------------------------------------------

_PREFS_HINT = (
    "prefs= holds trec_eval's preference rows, query_id jg jsg doc_id rel_level "
    "(irm.read_trec_prefs reads such a file)"
)


@pytest.mark.parametrize("column", ["query_id", "jg", "jsg", "doc_id", "rel_level"])
def test_a_missing_column_of_the_preferences_is_named(column: str) -> None:
    prefs = PREFS.drop(column)
    have = ", ".join(repr(c) for c in prefs.columns)
    assert _raised(lambda: irm.evaluate(run_frame(), ["prefs_simp"], prefs=prefs)) == (
        ColumnNotFoundError,
        f"column {column!r} not found in the preferences (its columns: {have}); {_PREFS_HINT}",
    )


def test_a_text_level_is_refused() -> None:
    prefs = PREFS.with_columns(pl.col("rel_level").cast(pl.String))
    assert _raised(lambda: irm.evaluate(run_frame(), ["prefs_simp"], prefs=prefs)) == (
        ColumnTypeError,
        "column 'rel_level' in the preferences has dtype String; it must be numeric: cast "
        "it, e.g. pl.col('rel_level').cast(pl.Float64)",
    )


# --- ranks, and the column options --------------------------------------------------


def _ranked(run: pl.DataFrame) -> pl.DataFrame:
    """``run`` with the ranks its scores give (no ties) in place of the scores."""
    rank = pl.col("score").rank("ordinal", descending=True).over("query_id").cast(pl.Int64)
    return run.with_columns(rank.alias("rank")).drop("score")


def test_a_run_with_ranks_is_ordered_by_them(evaluate: Evaluate) -> None:
    # a run with ranks and no score raised polars' ColumnNotFoundError
    run = run_frame()
    every = list(PREFS_MEASURES)
    by_score = evaluate(run, every, prefs=VALUED, per_query=True)
    assert by_score.select("prefs_simp").to_series().to_list() == [0.5, 1 / 3]  # 2 of 4, 1 of 3
    assert evaluate(_ranked(run), every, prefs=VALUED, per_query=True).equals(by_score)
    # the ranks where the run has both and order='rank' says so (as map); under
    # order='auto' scores that contradict them are refused, as map refuses them
    contrary = _ranked(run).with_columns(score=pl.col("rank").cast(pl.Float64))
    chosen = evaluate(contrary, every, prefs=VALUED, per_query=True, order="rank")
    assert chosen.equals(by_score)
    with pytest.raises(irm.InvalidValueError, match=r"^columns 'rank' and 'score' of the run"):
        evaluate(contrary, every, prefs=VALUED, per_query=True)
    reversed_order = evaluate(contrary.drop("rank"), every, prefs=VALUED, per_query=True)
    assert not reversed_order.equals(by_score)
    # depth keeps the ranks 1..depth, as the ranking metrics keep them: here the top one
    gaps = _ranked(run).with_columns(pl.col("rank") * 2)
    cut = evaluate(gaps, every, prefs=VALUED, per_query=True, depth=2)
    assert cut.equals(evaluate(run, every, prefs=VALUED, per_query=True, depth=1))
    assert not cut.equals(by_score)


def test_query_id_and_doc_id_name_both_tables(evaluate: Evaluate) -> None:
    # they were refused: the route read columns named query_id and doc_id
    names = {"query_id": "qid", "doc_id": "docno"}
    plain = evaluate(run_frame(), ["prefs_simp", "prefs_pair"], prefs=VALUED, per_query=True)
    renamed = evaluate(
        run_frame().rename(names),
        ["prefs_simp", "prefs_pair"],
        prefs=VALUED.rename(names),
        per_query=True,
        **names,
    )
    assert renamed.equals(plain.rename({"query_id": "qid"}))
    # preferences with trec_eval's names beside a renamed run: named, with the fix
    message = (
        "column 'qid' not found in the preferences (its columns: 'query_id', 'jg', 'jsg', "
        f"'doc_id', 'rel_level'); {_PREFS_HINT}; query_id= and doc_id= name the ids of the "
        "run and of the preferences alike: rename the preferences', e.g. "
        "prefs.rename({'query_id': 'qid', 'doc_id': 'docno'})"
    )
    run = run_frame().rename(names)
    assert _raised(lambda: evaluate(run, ["prefs_simp"], prefs=PREFS, **names)) == (
        ColumnNotFoundError,
        message,
    )
    own = run_frame().rename({"doc_id": "jg"})
    assert _raised(lambda: evaluate(own, ["prefs_simp"], prefs=PREFS, doc_id="jg")) == (
        InvalidValueError,
        "doc_id='jg' names one of the preferences' own columns (query_id, jg, jsg, doc_id, "
        "rel_level); the ids need other names: rename the doc_id column of the run and of "
        "the preferences, e.g. .rename({'jg': 'doc_id'}), and drop doc_id=",
    )


def test_the_route_reads_the_score_column_score_names() -> None:
    # the plan read a column named 'score' whatever score= said
    requests = parse_metric_list(["prefs_simp", "prefs_pair"])
    options = EvalOptions.build(per_query=True)
    plain = build_prefs_plan(run_frame().lazy(), requests, VALUED.lazy(), options).collect()
    # a column named score beside it, in the contrary order
    sim = run_frame().rename({"score": "sim"}).with_columns(score=-pl.col("sim"))
    named = EvalOptions.build(per_query=True, score="sim")
    assert build_prefs_plan(sim.lazy(), requests, VALUED.lazy(), named).collect().equals(plain)
    ranked = EvalOptions.build(per_query=True, rank="pos")
    by_pos = _ranked(run_frame()).rename({"rank": "pos"}).lazy()
    assert build_prefs_plan(by_pos, requests, VALUED.lazy(), ranked).collect().equals(plain)


@pytest.mark.skipif(
    "prefs" not in READ_BY["score"],
    reason="irm.evaluate refuses score= for the preference measures until "
    "ground/options.READ_BY lists 'prefs' as a reader of score, rank and order",
)
def test_evaluate_honours_score_and_rank_for_preferences(evaluate: Evaluate) -> None:
    plain = evaluate(run_frame(), ["prefs_simp"], prefs=VALUED)
    sim = run_frame().rename({"score": "sim"})
    assert evaluate(sim, ["prefs_simp"], prefs=VALUED, score="sim").equals(plain)
    by_pos = _ranked(run_frame()).rename({"rank": "pos"})
    assert evaluate(by_pos, ["prefs_simp"], prefs=VALUED, rank="pos").equals(plain)
    contrary = _ranked(run_frame()).with_columns(score=pl.col("rank").cast(pl.Float64))
    by_score = evaluate(contrary, ["prefs_simp"], prefs=VALUED, order="score")
    assert by_score.equals(evaluate(contrary.drop("rank"), ["prefs_simp"], prefs=VALUED))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("doc_id", None, "column 'doc_id' of the preferences (prefs=) has 1 null value(s); "
         "every preference row needs its doc_id: fill or drop them, e.g. .drop_nulls('doc_id')"),
        ("jg", None, "column 'jg' of the preferences (prefs=) has 1 null value(s); every "
         "preference row needs its jg: fill or drop them, e.g. .drop_nulls('jg')"),
        ("rel_level", None, "column 'rel_level' of the preferences (prefs=) has 1 null "
         "value(s); every preference row needs its rel_level: fill or drop them, e.g. "
         ".drop_nulls('rel_level')"),
        ("rel_level", float("nan"), "column 'rel_level' of the preferences (prefs=) has 1 "
         "NaN value(s); a level is a number that orders the documents of a sub-group: "
         "replace or drop them"),
    ],
)  # fmt: skip
def test_a_preference_row_without_its_fields_is_refused(
    column: str, value: object, message: str
) -> None:
    # before: the row's preferences vanished from every count (prefs_simp of the rest)
    run = pl.DataFrame({"query_id": [1, 1, 1], "doc_id": ["a", "b", "c"], "score": [3.0, 2, 1]})
    prefs = pl.DataFrame({"query_id": [1, 1, 1], "jg": [0] * 3, "jsg": [0] * 3,
                          "doc_id": ["a", "b", "c"], "rel_level": [2.0, 1, 0]})  # fmt: skip
    first = pl.int_range(pl.len()) == 0
    bad = prefs.with_columns(
        pl.when(first)
        .then(pl.lit(value, prefs.schema[column]))
        .otherwise(pl.col(column))
        .alias(column)
    )
    with pytest.raises(InvalidValueError) as info:
        irm.evaluate(run, ["prefs_simp"], prefs=bad)
    assert str(info.value) == message
