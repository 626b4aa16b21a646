"""BEIR (and MTEB retrieval) folders: corpus, queries and judgments as LazyFrames.

The layout of every BEIR dataset (``scifact/``, ``nfcorpus/``, ...)::

    corpus.jsonl      {"_id": "d1", "title": "...", "text": "...", "metadata": {...}}
    queries.jsonl     {"_id": "q1", "text": "...", "metadata": {...}}
    qrels/test.tsv    query-id <tab> corpus-id <tab> score   (with that header)

:func:`read_beir` checks every line of the three files when it is called (one pass of
polars' parser over each, reading only the ids; a line polars refuses, or one without
an id, is then looked for line by line, so that the error names the file and the line)
and returns lazy scans (``pl.scan_ndjson``, ``pl.scan_csv``), read again when
collected. Ids are read as strings (BEIR's ids are text, some of them digits).
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import NamedTuple

import polars as pl

from polars_irmetrics.errors import FileFormatError, MissingFileError
from polars_irmetrics.io.sources import literal_path, open_text

__all__ = ["BeirDataset", "read_beir"]

_QRELS_HEADER = ("query-id", "corpus-id", "score")
_BOM = b"\xef\xbb\xbf"
_INTEGER = re.compile(r" *[+-]?[0-9]+")  # what polars reads as an Int64
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class BeirDataset(NamedTuple):
    """A BEIR folder's three tables (LazyFrames); unpack it as
    ``corpus, queries, judgments = irm.read_beir(folder)``."""

    corpus: pl.LazyFrame
    queries: pl.LazyFrame
    judgments: pl.LazyFrame


def read_beir(
    folder: str | os.PathLike[str],
    split: str = "test",
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    relevance: str = "relevance",
) -> BeirDataset:
    """Corpus, queries and judgments of a BEIR folder, as LazyFrames.

    Parameters
    ----------
    folder
        The dataset's folder, holding ``corpus.jsonl``, ``queries.jsonl`` and
        ``qrels/<split>.tsv``.
    split
        Which judgments: ``"test"`` (default), ``"dev"`` or ``"train"``.
    query_id, doc_id, relevance
        Column names of the result (BEIR's ``_id``, ``query-id``, ``corpus-id`` and
        ``score`` are renamed to them).

    Returns
    -------
    BeirDataset
        ``corpus`` (``doc_id``, ``title``, ``text``: String), ``queries``
        (``query_id``, ``text``: String) and ``judgments`` (``query_id``, ``doc_id``:
        String, ``relevance``: Int64), each a LazyFrame; the judgments are ready for
        :func:`~polars_irmetrics.evaluate`'s ``qrels=``.

    Raises
    ------
    MissingFileError
        The folder or one of the three files does not exist (the message lists the
        splits that do).
    FileFormatError
        A line that is not what BEIR writes (the message names the file and the line):
        in the JSON lines files, a JSON object with an ``_id``; in the qrels, the header
        ``query-id corpus-id score`` (exactly: no space around a name) and then three
        tab-separated fields, two ids and an integer score (digits, no space after
        them, within the 64-bit range).

    See Also
    --------
    polars_irmetrics.knn : exact nearest neighbours of query and document embeddings.
    polars_irmetrics.evaluate : evaluate a run against the judgments.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> import polars_irmetrics as irm
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> doc = {"_id": "d1", "title": "Cats", "text": "Cats purr."}
    >>> _ = (root / "corpus.jsonl").write_text(json.dumps(doc) + "\\n")
    >>> _ = (root / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "cat"}) + "\\n")
    >>> (root / "qrels").mkdir()
    >>> qrels = "query-id\\tcorpus-id\\tscore\\n1\\td1\\t1\\n"
    >>> _ = (root / "qrels" / "test.tsv").write_text(qrels)
    >>> corpus, queries, judgments = irm.read_beir(root)
    >>> judgments.collect().rows(), corpus.collect().columns
    ([('1', 'd1', 1)], ['doc_id', 'title', 'text'])

    Query id ``1`` stays the string ``'1'``. Every line is checked, and the error names
    the line:

    >>> _ = (root / "qrels" / "dev.tsv").write_text(qrels + "2\\td1\\n")
    >>> irm.read_beir(root, split="dev")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.FileFormatError: ...dev.tsv, line 3: 2 tab-separated field(s) ...

    A split that is not there:

    >>> irm.read_beir(root, split="train")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MissingFileError: ...train.tsv: no such file; ... here: dev, test
    """
    root = Path(folder)
    if not root.is_dir():
        raise MissingFileError(
            f"{root}: no such folder; expected a BEIR dataset (corpus.jsonl, queries.jsonl, "
            "qrels/<split>.tsv)"
        )
    corpus_data = _check_jsonl(root / "corpus.jsonl", "the BEIR corpus")
    queries_data = _check_jsonl(root / "queries.jsonl", "the BEIR queries")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        found = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        raise MissingFileError(
            f"{qrels_path}: no such file; expected BEIR judgments (query-id, corpus-id, "
            f"score); the splits here: {', '.join(found) or 'none'}"
        )
    _check_qrels(qrels_path)
    corpus = pl.scan_ndjson(
        literal_path(corpus_data), schema={"_id": pl.String, "title": pl.String, "text": pl.String}
    ).rename({"_id": doc_id})
    queries = pl.scan_ndjson(
        literal_path(queries_data), schema={"_id": pl.String, "text": pl.String}
    ).rename({"_id": query_id})
    judgments = _scan_qrels(qrels_path).rename(
        {"query-id": query_id, "corpus-id": doc_id, "score": relevance}
    )
    return BeirDataset(corpus, queries, judgments)


def _scan_qrels(path: Path) -> pl.LazyFrame:
    # no quoting: a BEIR id may hold a quote character
    return pl.scan_csv(
        path,
        separator="\t",
        quote_char=None,
        glob=False,
        schema={"query-id": pl.String, "corpus-id": pl.String, "score": pl.Int64},
    )


def _check_jsonl(path: Path, what: str) -> str | bytes:
    """Every line of ``path`` a JSON object with a non-null ``_id``: one pass of polars'
    parser over the ids; where it fails, the first bad line is found line by line. The
    text polars is to read: the path, or the bytes after a UTF-8 byte-order mark (which
    polars' JSON reader refuses); a file that cannot be read, or is binary, is named
    (:func:`~polars_irmetrics.io.sources.open_text`)."""
    if not path.is_file():
        raise MissingFileError(f"{path}: no such file; expected {what} (JSON lines)")
    text = open_text(str(path), f"{what} (JSON lines)")
    data = text.data
    if text.bom:
        data = (data if isinstance(data, bytes) else path.read_bytes())[len(_BOM) :]
    try:
        ids = pl.scan_ndjson(literal_path(data), schema={"_id": pl.String}).select(pl.col("_id"))
        clean = not ids.select(pl.col("_id").is_null().any()).collect().item()
    except pl.exceptions.PolarsError as error:
        clean, reason = False, str(error).strip().splitlines()[0] if str(error).strip() else ""
    else:
        reason = "a line without an '_id'"
    if not clean:
        raise _bad_line(
            path,
            _first_bad_jsonl_line(data),
            reason,
            f"{what}, one JSON object with an '_id' per line",
        )
    return data


def _first_bad_jsonl_line(data: str | bytes) -> tuple[int, str] | None:
    with open(data, "rb") if isinstance(data, str) else io.BytesIO(data) as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue  # polars skips blank lines
            try:
                row = json.loads(raw)
            except UnicodeDecodeError:
                return number, "not valid UTF-8"
            except ValueError:
                return number, f"not valid JSON: {_shown(raw)}"
            if not isinstance(row, dict):
                return number, f"not a JSON object: {_shown(raw)}"
            if row.get("_id") is None:
                return number, f"no '_id' (or a null one): {_shown(raw)}"
    return None


def _check_qrels(path: Path) -> None:
    """The header, then three tab-separated fields per line (two ids, an integer)."""
    expected = "BEIR judgments: query-id<TAB>corpus-id<TAB>score (an integer) per line"
    open_text(str(path), expected)  # a file that cannot be read, or is binary: named
    with path.open(encoding="utf-8-sig", errors="replace") as handle:  # a BOM stripped
        # only the line end stripped: polars reads "score " as a column named "score "
        header = tuple(handle.readline().rstrip("\r\n").split("\t"))
    if header != _QRELS_HEADER:
        raise FileFormatError(
            f"{path}, line 1: {header!r} is not BEIR's qrels header "
            "'query-id<TAB>corpus-id<TAB>score'"
        )
    try:
        nulls = _scan_qrels(path).select(pl.any_horizontal(pl.all().is_null()).any())
        clean = not nulls.collect().item()
    except pl.exceptions.PolarsError as error:
        clean, reason = False, str(error).strip().splitlines()[0] if str(error).strip() else ""
    else:
        reason = "an empty field"
    if not clean:
        raise _bad_line(path, _first_bad_qrels_line(path), reason, expected)


def _first_bad_qrels_line(path: Path) -> tuple[int, str] | None:
    with path.open("rb") as handle:
        handle.readline()  # the header, checked
        for number, raw in enumerate(handle, start=2):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                return number, "not valid UTF-8"
            fields = line.split("\t")
            if len(fields) != 3:
                return number, f"{len(fields)} tab-separated field(s) {_shown(raw)}, not 3"
            if not fields[0] or not fields[1]:
                return number, f"an empty id: {_shown(raw)}"
            # polars' Int64: ASCII digits, a sign, leading spaces, nothing after them
            if _INTEGER.fullmatch(fields[2]) is None:
                return number, f"score {fields[2]!r} is not an integer"
            if not _INT64_MIN <= int(fields[2]) <= _INT64_MAX:
                return number, (
                    f"score {fields[2]!r} is out of the range of a 64-bit integer; "
                    "write a score within it"
                )
    return None


def _bad_line(
    path: Path, found: tuple[int, str] | None, reason: str, expected: str
) -> FileFormatError:
    if found is None:  # polars refused the file, and no line is wrong to Python's eyes
        return FileFormatError(f"{path}: {reason}; expected {expected}")
    number, what = found
    return FileFormatError(f"{path}, line {number}: {what}; expected {expected}")


def _shown(raw: bytes) -> str:
    return repr(raw[:60].decode("utf-8", errors="replace").strip())
