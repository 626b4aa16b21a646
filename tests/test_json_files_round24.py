"""JSON lines runs read as their CSV twins are: ranks written as floats (``3.0``) read as
the whole numbers they are, a rank that is none (``2.5``) or that no float holds exactly
(beyond 2**53) refused at its line; the files of a pattern typed as one file holding all
their lines would be (polars types a pattern by its first file: an integer score there
and ``2.5`` in another file failed with polars' "cannot parse '2.5' (f64) as Int64").
A CSV rank written as a float beyond 2**53 is refused as the JSON one is (it read
``9007199254740993.0`` as rank ``9007199254740992``, and called ``1e19`` "not a whole
number")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polars_irmetrics.io.files import scan_run

from .helpers import irm_in_process

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"


def _lines(*rows: dict[str, object]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _irm(tmp_path: Path, run: str, *flags: str) -> tuple[int, str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process("evaluate", run, "--qrels", "qrels.txt", "-m", "ndcg", "-m", "map",
                          "--per-query", "--format", "csv", *flags, cwd=tmp_path)  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def _scores(tmp_path: Path, run: str, *flags: str) -> str:
    code, out, err = _irm(tmp_path, run, *flags)
    assert code == 0, err
    return out


INT_RANKS = _lines(
    {"query_id": "q1", "doc_id": "d2", "rank": 1},
    {"query_id": "q1", "doc_id": "d1", "rank": 2},
    {"query_id": "q2", "doc_id": "d2", "rank": 1},
)


@pytest.mark.parametrize(
    "text",
    [
        INT_RANKS.replace('"rank": 1}', '"rank": 1.0}').replace('"rank": 2}', '"rank": 2.0}'),
        INT_RANKS.replace('"rank": 2}', '"rank": 2.0}'),  # one float makes the column float
        INT_RANKS.replace('"rank": 2}', '"rank": 2e0}'),
    ],
)
def test_whole_float_ranks_read_as_the_integers_they_are(tmp_path: Path, text: str) -> None:
    (tmp_path / "run.jsonl").write_text(text)
    (tmp_path / "ints.jsonl").write_text(INT_RANKS)
    got = _scores(tmp_path, "run.jsonl")
    assert got == _scores(tmp_path, "ints.jsonl")
    assert "q1,0.6309" in got  # d1 judged at rank 2: 1 / log2(3)


RANK_FIX = "a rank is a position 1, 2, 3, ... in its query's list: fix or drop the line"


@pytest.mark.parametrize(
    ("held", "message"),
    [
        ("2.5", f"run.jsonl, line 3: column 'rank' holds 2.5, not a whole number; {RANK_FIX}"),
        ("-1.5", f"run.jsonl, line 3: column 'rank' holds -1.5, not a whole number; {RANK_FIX}"),
        (
            "9007199254740993.0",
            "run.jsonl, line 3: column 'rank' holds 9007199254740992.0, a float beyond 2**53, "
            "which no reader holds exactly: write the rank as an integer (without a decimal "
            "point)",
        ),
    ],
)
def test_a_rank_that_is_no_exact_whole_number_is_named_by_its_line(
    tmp_path: Path, held: str, message: str
) -> None:
    text = _lines({"query_id": "q1", "doc_id": "d1", "rank": 1.0}) + "\n"  # a blank line
    text += '{"query_id": "q1", "doc_id": "d2", "rank": ' + held + "}\n"
    (tmp_path / "run.jsonl").write_text(text)
    code, out, err = _irm(tmp_path, "run.jsonl")
    assert (code, out) == (2, "")
    assert err == f"irm: error: {message}\n"


# (the files of a pattern, the one file holding their lines, a value its output shows)
PATTERNS = [
    (  # an integer score in the first file, a fraction in the second
        [
            _lines(
                {"query_id": "q1", "doc_id": "d1", "score": 1},
                {"query_id": "q1", "doc_id": "d2", "score": 2},
            ),
            _lines({"query_id": "q2", "doc_id": "d2", "score": 2.5}),
        ],
        "q1,0.6309",
    ),
    (  # float ranks in the second file only
        [
            _lines(
                {"query_id": "q1", "doc_id": "d2", "rank": 1},
                {"query_id": "q1", "doc_id": "d1", "rank": 2},
            ),
            _lines({"query_id": "q2", "doc_id": "d2", "rank": 1.0}),
        ],
        "q1,0.6309",
    ),
    (  # integer ids in one file, text in the other: text, as in one file
        [
            _lines(
                {"query_id": "q1", "doc_id": 7, "score": 1},
                {"query_id": "q1", "doc_id": "d1", "score": 2},
            ),
            _lines({"query_id": "q2", "doc_id": "d2", "score": 1}),
        ],
        "q1,1.0",
    ),
]


@pytest.mark.parametrize(("parts", "shown"), PATTERNS)
def test_a_pattern_of_files_reads_as_one_file_holding_their_lines(
    tmp_path: Path, parts: list[str], shown: str
) -> None:
    (tmp_path / "runs").mkdir()
    for number, part in enumerate(parts):
        (tmp_path / "runs" / f"part{number}.jsonl").write_text(part)
    (tmp_path / "one.jsonl").write_text("".join(parts))
    got = _scores(tmp_path, "runs/*.jsonl")
    assert got == _scores(tmp_path, "one.jsonl")
    assert shown in got


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            '{"query_id": "q2", "doc_id": ["d2"], "score": 1}\n',
            "runs/b.jsonl: column 'doc_id' holds List(String) where runs/a.jsonl's holds "
            "String; the files of a pattern are read as one table: write the column one way "
            "in every file",
        ),
        (
            '{"query_id": "q2", "doc_id": "d2", "score": 1.0}\n{"query_id": "q2",\n',
            'runs/b.jsonl, line 2: not a JSON object: \'{"query_id": "q2",\'; fix or drop '
            "the line",
        ),
        (
            '{"query_id": "q2", "doc_id": "d2", "rank": 2.5}\n',
            f"runs/b.jsonl, line 1: column 'rank' holds 2.5, not a whole number; {RANK_FIX}",
        ),
    ],
)
def test_a_pattern_of_files_names_the_file_it_cannot_read_with_the_others(
    tmp_path: Path, second: str, message: str
) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.jsonl").write_text(
        _lines({"query_id": "q1", "doc_id": "d1", "rank": 1})
    )
    (tmp_path / "runs" / "b.jsonl").write_text(second)
    code, out, err = _irm(tmp_path, "runs/*.jsonl")
    assert (code, out) == (2, "")
    assert err == f"irm: error: {message}\n"


BEYOND = (
    "a float beyond 2**53, which no reader holds exactly: write the rank as an integer "
    "(without a decimal point)"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "query_id,doc_id,rank\nq1,d1,1.0\nq1,d2,9007199254740993.0\n",
            f"run.csv, line 3: column 'rank' holds '9007199254740993.0', {BEYOND}",
        ),
        (
            "query_id,doc_id,rank\nq1,d1,1.0\nq1,d2,1e19\n",
            f"run.csv, line 3: column 'rank' holds '1e19', {BEYOND}",
        ),
        (  # text (a space): read as numbers, the float refused as in a column of floats
            "query_id,doc_id,rank\nq1,d1, 1\nq1,d2, 9007199254740993.0\n",
            f"run.csv, line 3: column 'rank' holds ' 9007199254740993.0', {BEYOND}",
        ),
    ],
)
def test_a_csv_rank_written_as_a_float_beyond_2_53_is_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "run.csv").write_text(text)
    code, out, err = _irm(tmp_path, "run.csv")
    assert (code, out) == (2, "")
    assert err == f"irm: error: {message}\n"


@pytest.mark.parametrize(
    "text",
    [
        "query_id,doc_id,rank\nq1,d1, 1\nq1,d2,9007199254740993\n",
        "query_id,doc_id,rank\nq1,d1,1.0\nq1,d2, 9007199254740993\n",
    ],
)
def test_a_csv_rank_written_as_an_integer_beyond_2_53_stays_exact(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / "run.csv").write_text(text)
    ranks = scan_run(str(tmp_path / "run.csv")).collect()["rank"].to_list()
    assert ranks == [1, 9007199254740993]
