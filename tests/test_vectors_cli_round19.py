"""Round 19, vectors, the command line and the file readers: a long message keeps its
advice (cut in the middle), a log's JSON line is named, a decimal comma in TREC text,
swapped or repeated files, and empty tables under knn and neighbour recall are said."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, IrmWarning, TrecFormatError
from polars_irmetrics.io.files import detect_format

from .helpers import irm_in_process


def test_a_long_warning_keeps_its_start_and_its_advice(tmp_path: Path) -> None:
    """Three runs of 96-character names, no two sharing a document id for a query:
    fuse's warning names the pairs by their files (over 600 characters); the command
    cut it at 400, dropping the advice ('... silence this with ...')."""
    names = []
    for i, tag in enumerate("abc"):
        name = f"{tag}_" + "x" * 90 + ".txt"
        (tmp_path / name).write_text(f"q{i} Q0 d1 1 0.5 {tag}\nq{i + 1} Q0 d1 1 0.5 {tag}\n")
        names.append(name)
    done = irm_in_process("fuse", *names, "-o", "out.txt", cwd=tmp_path)
    assert done.returncode == 0
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"irm: warning: runs {names[0]!r} and")
    assert " … " in line
    assert line.endswith(
        "If the runs are meant to be disjoint, the fused run is as documented: silence this "
        "with warnings.filterwarnings('ignore', category=irm.CoverageWarning)."
    )
    assert len(line) <= len("irm: warning: ") + 600


def _json_log(clicks: list[str]) -> str:
    """A JSON lines impression log, one session per click, a blank line after the first
    row (polars skips it): row i is line i + 1 for i = 0, line i + 2 after."""
    rows = [
        f'{{"arm": "{"AB"[i % 2]}", "user_id": "u{i}", "session_id": "s{i}", '
        f'"position": 1, "clicked": {click}}}'
        for i, click in enumerate(clicks)
    ]
    return "\n".join([rows[0], "", *rows[1:]]) + "\n"


@pytest.mark.parametrize(
    "command",
    [
        ["ab", "-m", "ctr"],
        ["evaluate", "-m", "ctr", "--query-id", "session_id", "--rank", "position"],
    ],
)
def test_a_bad_click_in_a_json_lines_log_names_its_line(
    tmp_path: Path, command: list[str]
) -> None:
    """Row 2 (from 0) holds "yes": line 4 (line 1 row 0, line 2 blank, line 3 row 1);
    the command named the file alone ('log.jsonl: column ...'), as a CSV names its line."""
    (tmp_path / "log.jsonl").write_text(_json_log(["1", "0", '"yes"', "1"]))
    done = irm_in_process(command[0], "log.jsonl", *command[1:], cwd=tmp_path)
    message = (
        "log.jsonl, line 4: column 'clicked' holds 'yes', not a click, true/false or 1/0; "
        "fix or drop the line"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_a_bad_timestamp_in_a_json_lines_log_names_its_line(tmp_path: Path) -> None:
    """Row 1 (from 0) holds 'yesterday': line 3 (line 2 is blank)."""
    rows = [
        '{"arm": "A", "user_id": "u0", "session_id": "s0", "position": 1, "clicked": 1, '
        '"timestamp": "2026-03-02T10:01:41"}',
        "",
        '{"arm": "B", "user_id": "u1", "session_id": "s1", "position": 1, "clicked": 1, '
        '"timestamp": "yesterday"}',
    ]
    (tmp_path / "log.jsonl").write_text("\n".join(rows) + "\n")
    done = irm_in_process("ab", "log.jsonl", "-m", "time_to_first_click", cwd=tmp_path)
    message = (
        "log.jsonl, line 3: column 'timestamp' holds 'yesterday', not a timestamp; write it "
        "as ISO 8601, e.g. 2026-03-02T10:01:41, or name another column with --timestamp COL"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


_COMMA = "a number with a decimal comma; TREC text is whitespace-separated and its numbers "
# (file, its text, the message): a TREC line with a decimal comma was sniffed as CSV for
# its comma: "no column 'query_id' (its columns: 'q1 Q0 d1 1 0', '5 sys')", "line 2: a
# blank line where the header has 1 fields", "an empty file (a header, no rows)"
_DECIMAL_COMMAS = [
    (
        "run.txt",
        "q1 Q0 d1 1 0,5 sys\nq1 Q0 d2 2 0,4 sys\n",
        f"run.txt, line 1: field 5 (score) holds '0,5', {_COMMA}have a decimal point: write 0.5",
    ),
    (
        "run.txt",
        "# a comment\n\nq1 Q0 d1 1 -12,75 sys\n",
        f"run.txt, line 3: field 5 (score) holds '-12,75', {_COMMA}have a decimal point: "
        "write -12.75",
    ),
    (
        "qrels.txt",
        "q1 0 d1 0,5\n",
        f"qrels.txt, line 1: field 4 (relevance) holds '0,5', {_COMMA}have a decimal point: "
        "write 0.5",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), _DECIMAL_COMMAS)
def test_a_trec_line_with_a_decimal_comma_is_refused_naming_its_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 0.5 sys\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / name).write_text(text)
    done = irm_in_process("evaluate", "run.txt", "--qrels", "qrels.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")
    with pytest.raises(TrecFormatError) as caught:
        detect_format(tmp_path / name)
    assert str(caught.value) == str(tmp_path / message)


def test_a_csv_with_decimal_commas_in_quotes_is_still_csv(tmp_path: Path) -> None:
    """A CSV whose first line is a header is CSV, whatever its fields hold."""
    (tmp_path / "run.csv.txt").write_text('query_id,doc_id,score\nq1,d1,"0,5"\n')
    assert detect_format(tmp_path / "run.csv.txt") == "csv"


_RUN_TEXT = "q1 Q0 d1 1 0.5 sys\nq2 Q0 d1 1 0.9 sys\n"
_QRELS_TEXT = "q1 0 d1 1\nq2 0 d1 1\n"
_EXPECT_6 = "expected 6 whitespace-separated fields (query_id Q0 doc_id rank score run_id), got 4"
_EXPECT_4 = "expected 4 whitespace-separated fields (query_id iteration doc_id relevance), got 6"
_ORDER = "give the judgments first, then the run, as trec_eval takes them"
_FLAG = "name the run first and the judgments with --qrels"


# (command, its file arguments, the message): the judgments and the run given in each
# other's place; the command named the line or column it failed on, with no word of the
# order
_SWAPPED = [
    (
        ["trec-eval", "run.txt", "qrels.txt"],
        f"qrels.txt, line 1: {_EXPECT_6}: 'q1 0 d1 1'; the two files look swapped: qrels.txt "
        f"holds judgments and run.txt a run: {_ORDER} (qrels.txt before run.txt)",
    ),
    (
        ["evaluate", "qrels.txt", "--qrels", "run.txt"],
        f"run.txt, line 1: {_EXPECT_4}: 'q1 Q0 d1 1 0.5 sys'; the files look swapped: "
        f"qrels.txt holds judgments and run.txt a run: {_FLAG} (irm evaluate run.txt "
        "--qrels qrels.txt)",
    ),
    (  # tables: by their columns (relevance; score)
        ["trec-eval", "run.csv", "qrels.csv"],
        "run.csv: no column 'relevance' (its columns: 'query_id', 'doc_id', 'score'); the "
        f"two files look swapped: qrels.csv holds judgments and run.csv a run: {_ORDER} "
        "(qrels.csv before run.csv)",
    ),
    (
        ["evaluate", "qrels.csv", "--qrels", "run.csv"],
        "run.csv: no column 'relevance' (its columns: 'query_id', 'doc_id', 'score'); name "
        "the relevance column with --relevance COL; the files look swapped: qrels.csv "
        f"holds judgments and run.csv a run: {_FLAG} (irm evaluate run.csv --qrels "
        "qrels.csv)",
    ),
]


@pytest.mark.parametrize(
    ("args", "message"),
    _SWAPPED,
    ids=["trec-eval", "evaluate", "trec-eval-tables", "evaluate-tables"],
)
def test_swapped_run_and_judgments_are_named_as_swapped(
    tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "run.txt").write_text(_RUN_TEXT)
    (tmp_path / "qrels.txt").write_text(_QRELS_TEXT)
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,0.5\n")
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\n")
    done = irm_in_process(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_a_bad_run_beside_good_judgments_is_not_called_swapped(tmp_path: Path) -> None:
    """A run line of 4 fields beside judgments that are judgments: no swap."""
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1\n")
    (tmp_path / "qrels.txt").write_text(_QRELS_TEXT)
    done = irm_in_process("trec-eval", "qrels.txt", "run.txt", cwd=tmp_path)
    message = f"run.txt, line 1: {_EXPECT_6}: 'q1 Q0 d1 1'"
    assert (done.returncode, done.stderr) == (2, f"irm: error: {message}\n")


_TWICE = "the same run file is given twice"
_ONCE = "name each run once (two systems are two different files)"
_COMPARE = ["compare", "--qrels", "qrels.txt"]


# (command, the runs, the message): compare said "compare needs at least two systems;
# got 1", or compared a file with itself under two spellings (every delta 0); evaluate
# said "query 'q1' (run='run.txt') lists 2 document(s) more than once"
@pytest.mark.parametrize(
    ("command", "runs", "message"),
    [
        (_COMPARE, ["run.txt", "run.txt"], f"run.txt: {_TWICE}; {_ONCE}"),
        (
            _COMPARE,
            ["run.txt", "./run.txt"],
            f"./run.txt: {_TWICE} (as run.txt and ./run.txt); {_ONCE}",
        ),
        (
            _COMPARE,
            ["run.txt", "link.txt"],
            f"link.txt: {_TWICE} (as run.txt and link.txt); {_ONCE}",
        ),
        (["evaluate", "--qrels", "qrels.txt"], ["run.txt", "run.txt"],
         f"run.txt: {_TWICE}; {_ONCE}"),
        (["fuse", "-o", "out.txt"], ["other.txt", "run.txt", "./run.txt"],
         f"./run.txt: {_TWICE} (as run.txt and ./run.txt); {_ONCE}"),
    ],
)  # fmt: skip
def test_a_run_file_named_twice_is_refused(
    tmp_path: Path, command: list[str], runs: list[str], message: str
) -> None:
    (tmp_path / "run.txt").write_text(_RUN_TEXT)
    (tmp_path / "other.txt").write_text(_RUN_TEXT.replace("d1", "d2"))
    (tmp_path / "link.txt").symlink_to(tmp_path / "run.txt")
    (tmp_path / "qrels.txt").write_text(_QRELS_TEXT)
    done = irm_in_process(command[0], *runs, *command[1:], cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


_KNN_QUERIES = pl.DataFrame({"query_id": ["q1"], "embedding": [[1.0, 0.0]]})
_KNN_CORPUS = pl.DataFrame({"doc_id": ["a"], "embedding": [[1.0, 0.0]]})
_NO_ROW = (
    "so knn returns an empty run (no query has a neighbour): a filter that kept nothing, "
    "or an empty file?"
)


# (queries, corpus, the warning): knn returned an empty run in silence
@pytest.mark.parametrize(
    ("queries", "corpus", "message"),
    [
        (_KNN_QUERIES, _KNN_CORPUS.clear(), f"corpus= holds no row, {_NO_ROW}"),
        (np.ones((2, 3)), np.ones((0, 3)), f"corpus= holds no row, {_NO_ROW}"),
        (_KNN_QUERIES.clear(), _KNN_CORPUS, f"queries= holds no row, {_NO_ROW}"),
        (
            _KNN_QUERIES.clear(),
            _KNN_CORPUS.clear(),
            f"queries= and corpus= hold no row, {_NO_ROW}",
        ),
    ],
    ids=["corpus", "numpy-corpus", "queries", "both"],
)
def test_knn_over_an_empty_table_warns(queries: object, corpus: object, message: str) -> None:
    with pytest.warns(IrmWarning) as caught:
        run = irm.knn(queries, corpus, k=2)  # type: ignore[arg-type]
    assert run.height == 0
    assert [str(w.message) for w in caught] == [message]


def test_knn_over_a_corpus_with_rows_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert irm.knn(_KNN_QUERIES, _KNN_CORPUS, k=2).height == 1


_APPROX = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [-0.1, -0.2, -0.3]}
)
_EMPTY_TAIL = "; a filter that kept nothing, an empty file, or knn over an empty table?"


# (run, neighbors=, the value, the warning): an empty table was warned of as ids that
# do not line up ("neighbors= holds none of the 2 queries of the run ... Ids that do not
# line up are the likely cause")
@pytest.mark.parametrize("metric", ["neighbor_recall@2", "neighbor_recall_rel@2"])
@pytest.mark.parametrize(
    ("run", "exact", "num_q", "value", "message"),
    [
        (
            _APPROX,
            _APPROX.clear(),
            0,
            None,
            "neighbors= holds no row (no exact neighbours): the run's 2 queries are left out "
            f"(unjudged='drop'){_EMPTY_TAIL}",
        ),
        (  # the 2 queries of neighbors= each score 0: mean 0.0
            _APPROX.clear(),
            _APPROX,
            2,
            0.0,
            "the run holds no row: the 2 queries of neighbors= each score 0 "
            f"(unretrieved='zero'){_EMPTY_TAIL}",
        ),
        (
            _APPROX.clear(),
            _APPROX.clear(),
            0,
            None,
            f"the run and neighbors= hold no row: there is no query to score{_EMPTY_TAIL}",
        ),
    ],
    ids=["empty-neighbors", "empty-run", "both"],
)
def test_neighbor_recall_over_an_empty_table_says_so(
    metric: str,
    run: pl.DataFrame,
    exact: pl.DataFrame,
    num_q: int,
    value: float | None,
    message: str,
) -> None:
    with pytest.warns(CoverageWarning) as caught:
        result = irm.evaluate(run, [metric], neighbors=exact)
    assert result.rows() == [(num_q, value)]
    assert [str(w.message) for w in caught] == [message]


_EXACT_LOW = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "score": [-0.1, -0.2]})
_APPROX_LOW = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "c"], "score": [-0.1, -0.205]})
_AUTO = "neighbor_recall_rel@2"


def test_auto_distance_says_what_it_assumed_where_the_value_depends_on_it() -> None:
    """Every exact score in [-1, 0]: negated distances (auto's reading) or cosine
    similarities. As -score: t_2 = 0.2, limit 0.2 * 1.01 = 0.202; c at 0.205 is out:
    1 / 2 = 0.5. As 1 - score: t_2 = 1.2, limit 1.212; c at 1.205 is in: 2 / 2 = 1.0.
    The value was 0.5 in silence."""
    with pytest.warns(IrmWarning) as caught:
        result = irm.evaluate(_APPROX_LOW, [_AUTO], neighbors=_EXACT_LOW)
    assert result.rows() == [(1, 0.5)]
    assert [str(w.message) for w in caught] == [
        f"metric {_AUTO!r} (distance='auto') read the scores of neighbors= as negated "
        "distances (distance -score, as knn's l2 runs score: every score is <= 0); every one "
        "is also >= -1, as cosine similarities can be, and read as such (distance 1 - "
        "score) its value differs (query 'q': 0.5, else 1.0): say which they are with "
        "distance=neg_score (negated distances) or distance=one_minus_score (cosine "
        "similarities), e.g. neighbor_recall_rel(distance=neg_score)@k"
    ]


# (run, neighbors=, metric, value): the reading is settled, or does not change the value
@pytest.mark.parametrize(
    ("run", "exact", "metric", "value"),
    [
        # a score below -1: no cosine similarity, negated distances: 0.5 as above
        (_APPROX_LOW, _EXACT_LOW.vstack(_EXACT_LOW.head(1).with_columns(
            doc_id=pl.lit("z"), score=pl.lit(-3.0))), _AUTO, 0.5),
        # the run is the exact run: 1.0 under either reading
        (_EXACT_LOW, _EXACT_LOW, _AUTO, 1.0),
        # the reading given
        (_APPROX_LOW, _EXACT_LOW, "neighbor_recall_rel(distance=neg_score)@2", 0.5),
        (_APPROX_LOW, _EXACT_LOW, "neighbor_recall_rel(distance=one_minus_score)@2", 1.0),
        # scores in (0, 1]: cosine similarities (1 - score: exact 0.9, 0.8, t_2 = 0.9,
        # limit 0.909; the run's 0.9 and 0.795 are in: 2 / 2)
        (_APPROX_LOW.with_columns(score=-pl.col("score")),
         _EXACT_LOW.with_columns(score=-pl.col("score")), _AUTO, 1.0),
    ],
    ids=["below-minus-one", "same-run", "neg_score", "one_minus_score", "positive"],
)  # fmt: skip
def test_auto_distance_is_quiet_where_the_reading_does_not_matter(
    run: pl.DataFrame, exact: pl.DataFrame, metric: str, value: float
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = irm.evaluate(run, [metric], neighbors=exact)
    assert result.rows() == [(1, value)]


_SEMICOLONS = (
    "is separated by semicolons; a CSV file's fields are separated by commas and its "
    "numbers have a decimal point: save the file again so (e.g. export it from the "
    "spreadsheet with that field separator and '.' as the decimal separator)"
)


# (file, its text, the message): a locale's CSV was read as one column, and refused at
# its first decimal comma as "line 2: 2 fields where the header has 1"
@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "run.csv",
            "query_id;doc_id;score\nq1;d1;0,5\n",
            f"run.csv, line 1: the header 'query_id;doc_id;score' {_SEMICOLONS}",
        ),
        (
            "qrels.csv",
            "\ufeffquery_id;doc_id;relevance\nq1;d1;1\n",
            f"qrels.csv, line 1: the header 'query_id;doc_id;relevance' {_SEMICOLONS}",
        ),
    ],
)
def test_a_semicolon_separated_csv_is_named_as_such(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / "run.csv").write_text("query_id,doc_id,score\nq1,d1,0.5\n")
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\n")
    (tmp_path / name).write_text(text)
    done = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.csv", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# (the second file's header, the message): a pattern of CSV files whose headers differ
# was refused as "runs/*.csv: its columns cannot be read (a damaged file, or files of a
# pattern or folder that disagree)", naming neither file nor column
@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            "doc_id,query_id,score",
            "runs/b.csv: its columns are in another order (doc_id, query_id, score) than "
            "runs/a.csv's (query_id, doc_id, score); every file of a pattern needs the "
            "columns in one order: write them again in one order",
        ),
        (
            "query_id,doc_id,rank",
            "runs/b.csv: no column 'score', which runs/a.csv has; every file of a run needs "
            "the same columns",
        ),
    ],
    ids=["order", "column"],
)
def test_a_pattern_of_csv_files_whose_headers_differ_names_the_file(
    tmp_path: Path, header: str, message: str
) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.csv").write_text("query_id,doc_id,score\nq1,d1,0.5\n")
    values = {"query_id": "q2", "doc_id": "d2", "score": "0.4", "rank": "1"}
    row = ",".join(values[name] for name in header.split(","))
    (tmp_path / "runs" / "b.csv").write_text(f"{header}\n{row}\n")
    (tmp_path / "qrels.txt").write_text(_QRELS_TEXT)
    done = irm_in_process("evaluate", "runs/*.csv", "--qrels", "qrels.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_a_pattern_of_csv_files_of_integer_and_fractional_scores_is_read(tmp_path: Path) -> None:
    """Scores 1 (Int64) in one file and 0.4 (Float64) in the other meet as floats:
    q1's d1 is relevant at rank 1 (ndcg 1), q2's d1 unretrieved (0): mean 0.5."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.csv").write_text("query_id,doc_id,score\nq1,d1,1\n")
    (tmp_path / "runs" / "b.csv").write_text("query_id,doc_id,score\nq2,d2,0.4\n")
    (tmp_path / "qrels.txt").write_text(_QRELS_TEXT)
    done = irm_in_process(
        "evaluate", "runs/*.csv", "--qrels", "qrels.txt", "-m", "ndcg", "--format", "csv",
        cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "num_q,ndcg\n2,0.5\n")


# (weights, the message): '0,6,0,4' (decimal commas) was read as 4 weights for 2 runs,
# "weights has 4 value(s) for 2 runs"; 3 numbers are no decimal commas: the library's
@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (
            "0,6,0,4",
            "--weights '0,6,0,4' gives 4 numbers for 2 runs: decimal commas? the weights are "
            "separated by commas and written with a decimal point, e.g. --weights 0.6,0.4",
        ),
        (
            "0.6,0.4,0.2",
            "--weights 0.6,0.4,0.2: weights has 3 value(s) for 2 runs ('a.txt', 'b.txt'); "
            "give one weight per run, in the runs' order",
        ),
    ],
    ids=["decimal-commas", "three"],
)
def test_fuse_weights_with_decimal_commas_are_named(
    tmp_path: Path, weights: str, message: str
) -> None:
    (tmp_path / "a.txt").write_text(_RUN_TEXT)
    (tmp_path / "b.txt").write_text(_RUN_TEXT.replace("d1", "d2"))
    done = irm_in_process(
        "fuse", "a.txt", "b.txt", "--method", "wsum", "--weights", weights, "-o", "out.txt",
        cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


_DAY1 = "user_id,arm,session_id,position,clicked\nu1,A,s1,1,1\nu2,B,s2,1,0\n"


# (the second file's name, its text, the message): a bad click in the second of two
# logs made its column text, refused as the files' types ("day2.csv: column 'clicked'
# is String, but day1.csv has it as Int64; ... write the files again with one type")
@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "day2.csv",
            "user_id,arm,session_id,position,clicked\nu3,A,s3,1,1\nu4,B,s4,1,yes\n",
            "day2.csv, line 3: column 'clicked' holds 'yes', where day1.csv holds Int64 "
            "values; fix or drop the line",
        ),
        (  # line 2 blank: the second row is line 3
            "day2.jsonl",
            '{"user_id": "u3", "arm": "A", "session_id": "s3", "position": 1, "clicked": 1}'
            '\n\n{"user_id": "u4", "arm": "B", "session_id": "s4", "position": 1, '
            '"clicked": "oui"}\n',
            "day2.jsonl, line 3: column 'clicked' holds 'oui', where day1.csv holds Int64 "
            "values; fix or drop the line",
        ),
        (  # ids that are text in one file and integers in the other: the types' message
            "day2.csv",
            "user_id,arm,session_id,position,clicked\n7,A,s3,1,1\n",
            "day2.csv: column 'user_id' is Int64, but day1.csv has it as String; every file "
            "of an impression log needs the same column types: write the files again with "
            "one type, e.g. pl.col('user_id').cast(pl.String)",
        ),
    ],
    ids=["csv", "jsonl", "ids"],
)
def test_a_bad_click_in_one_of_several_logs_names_its_file_and_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / "day1.csv").write_text(_DAY1)
    (tmp_path / name).write_text(text)
    done = irm_in_process("ab", "day1.csv", name, "-m", "ctr", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_cosine_similarity_of_vectors_of_two_lengths_says_no_polars_context() -> None:
    """polars appended "\\n\\nThis error occurred in the following expression:\\n\\t
    col("a").python_udf([col("b")])" to the library's message."""
    frame = pl.DataFrame({"a": [[1.0, 0.0]], "b": [[1.0, 0.0, 0.0]]})
    with pytest.raises(irm.errors.InvalidValueError) as caught:
        frame.select(irm.cosine_similarity("a", "b"))
    assert str(caught.value) == (
        "cosine_similarity: columns 'a' and 'b' hold vectors of different lengths in the "
        "same row (2 and 3); embeddings must have equal lengths"
    )


_FIXED = "(no flag names another, as trec_eval's fields are fixed): rename the file's column to"


# (the judgments' text, the run's text, the message): the command suggested the Python
# keyword "name the query id column with query_id=...", which irm trec-eval does not take
@pytest.mark.parametrize(
    ("qrels", "run", "message"),
    [
        (
            _QRELS_TEXT,
            "qid,docno,score\nq1,d1,0.5\n",
            "run.csv: no column 'query_id' (its columns: 'qid', 'docno', 'score'); irm "
            f"trec-eval reads the query id from a column of that name {_FIXED} 'query_id'",
        ),
        (
            "query_id,doc_id,rel\nq1,d1,1\n",
            _RUN_TEXT,
            "qrels.csv: no column 'relevance' (its columns: 'query_id', 'doc_id', 'rel'); irm "
            f"trec-eval reads the relevance from a column of that name {_FIXED} 'relevance'",
        ),
    ],
    ids=["run", "judgments"],
)
def test_trec_eval_names_a_missing_column_as_it_reads_it(
    tmp_path: Path, qrels: str, run: str, message: str
) -> None:
    qrels_name = "qrels.txt" if qrels == _QRELS_TEXT else "qrels.csv"
    run_name = "run.txt" if run == _RUN_TEXT else "run.csv"
    (tmp_path / qrels_name).write_text(qrels)
    (tmp_path / run_name).write_text(run)
    done = irm_in_process("trec-eval", qrels_name, run_name, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


@pytest.mark.parametrize("method", ["wsum", "mixed"])
def test_fuse_without_weights_names_the_flag(tmp_path: Path, method: str) -> None:
    """The library's 'e.g. weights=[0.5, 0.5]' (a Python list) was printed as such."""
    (tmp_path / "a.txt").write_text(_RUN_TEXT)
    (tmp_path / "b.txt").write_text(_RUN_TEXT.replace("d1", "d2"))
    done = irm_in_process("fuse", "a.txt", "b.txt", "--method", method, "-o", "out.txt",
                          cwd=tmp_path)  # fmt: skip
    message = (
        f"{method} needs weights, one per run ('a.txt', 'b.txt'): pass them, e.g. "
        "--weights 0.5,0.5"
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")
