"""A malformed line of a gzip or zstd CSV/TSV or JSON lines file is named by its line,
as in the plain file: the line-naming error paths read the decompressed text (they read
the compressed bytes as text, found no line and said only that polars could not read
the file)."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from .helpers import irm_in_process, zstd_compress

QRELS = "q1 0 d1 1\n"


PACKINGS: dict[str, Callable[[bytes], bytes]] = {
    "": lambda data: data,
    ".gz": gzip.compress,
    ".zst": zstd_compress,
}

CASES = [
    # (file name, text, the message after "irm: error: NAME, ")
    (
        "run.csv",
        "query_id,doc_id,rank\nq1,d1,1\nq1,d2,2,9\nq2,d1,1\n",
        "line 3: 4 fields where the header has 3; fix or drop the line (a separator inside "
        "a value needs quotes)",
    ),
    (
        "run.tsv",
        "query_id\tdoc_id\trank\nq1\td1\t1\n\nq1\td2\t2\n",
        "line 3: a blank line where the header has 3 fields; drop the line",
    ),
    (
        "run.jsonl",
        '{"query_id": "q1", "doc_id": "d1", "rank": 1}\n{"query_id":\n',
        "line 2: not a JSON object: '{\"query_id\":'; fix or drop the line",
    ),
]


@pytest.mark.parametrize("packing", sorted(PACKINGS))
@pytest.mark.parametrize(("name", "text", "message"), CASES)
def test_the_command_names_the_line_of_a_compressed_file(
    tmp_path: Path, packing: str, name: str, text: str, message: str
) -> None:
    path = tmp_path / f"{name}{packing}"
    path.write_bytes(PACKINGS[packing](text.encode()))
    (tmp_path / "qrels.txt").write_text(QRELS)
    done = irm_in_process(
        "evaluate", path.name, "--qrels", "qrels.txt", "-m", "ndcg", cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {path.name}, {message}\n"
