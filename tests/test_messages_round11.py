"""Round 11 messages: BEIR scores and headers, unreadable folders, qrels relevance
beyond Int64, and evaluate_online's keyword in its column errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import FileFormatError

_EXPECTED_QRELS = "expected BEIR judgments: query-id<TAB>corpus-id<TAB>score (an integer) per line"


def _beir(root: Path, qrels: str) -> Path:
    (root / "qrels").mkdir()
    (root / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "x"}) + "\n")
    (root / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "x"}) + "\n")
    (root / "qrels" / "test.tsv").write_text(qrels)
    return root


@pytest.mark.parametrize(
    ("qrels", "where"),
    [
        (
            "query-id\tcorpus-id\tscore\n1\td1\t1 \n",
            f"line 2: score '1 ' is not an integer; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t 2\n1\td1\t2 \n",
            f"line 3: score '2 ' is not an integer; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t1_0\n",
            f"line 2: score '1_0' is not an integer; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t99999999999999999999\n",
            "line 2: score '99999999999999999999' is out of the range of a 64-bit integer; "
            f"write a score within it; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t-9223372036854775809\n",
            "line 2: score '-9223372036854775809' is out of the range of a 64-bit integer; "
            f"write a score within it; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore \n1\td1\t1\n",
            "line 1: ('query-id', 'corpus-id', 'score ') is not BEIR's qrels header "
            "'query-id<TAB>corpus-id<TAB>score'",
        ),
        (
            " query-id\tcorpus-id\tscore\n1\td1\t1\n",
            "line 1: (' query-id', 'corpus-id', 'score') is not BEIR's qrels header "
            "'query-id<TAB>corpus-id<TAB>score'",
        ),
    ],
)
def test_beir_qrels_scores_and_header_name_the_line(
    tmp_path: Path, qrels: str, where: str
) -> None:
    root = _beir(tmp_path, qrels)
    message = f"{root / 'qrels' / 'test.tsv'}, {where}"
    with pytest.raises(FileFormatError, match=f"^{re.escape(message)}$"):
        irm.read_beir(root)


@pytest.mark.parametrize(
    ("score", "value"),
    [
        ("+1", 1),
        ("  2", 2),
        ("007", 7),
        ("-9223372036854775808", -(2**63)),
        ("9223372036854775807", 2**63 - 1),
    ],
)
def test_beir_qrels_scores_polars_reads_are_kept(tmp_path: Path, score: str, value: int) -> None:
    root = _beir(tmp_path, f"query-id\tcorpus-id\tscore\r\n1\td1\t{score}\r\n")
    assert irm.read_beir(root).judgments.collect().rows() == [("1", "d1", value)]
