"""BEIR (and MTEB retrieval) folders: corpus, queries and judgments as LazyFrames.

The layout of every BEIR dataset (``scifact/``, ``nfcorpus/``, ...)::

    corpus.jsonl      {"_id": "d1", "title": "...", "text": "...", "metadata": {...}}
    queries.jsonl     {"_id": "q1", "text": "...", "metadata": {...}}
    qrels/test.tsv    query-id <tab> corpus-id <tab> score   (with that header)

:func:`read_beir` scans the three (``pl.scan_ndjson``, ``pl.scan_csv``): nothing is read
but the first line of each file, checked so that a missing or malformed part is
reported naming the file when the call is made. Ids are read as strings (BEIR's ids
are text, some of them digits).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

import polars as pl

from polars_irmetrics.errors import FileFormatError, MissingFileError

__all__ = ["BeirDataset", "read_beir"]

_QRELS_HEADER = ("query-id", "corpus-id", "score")


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
        A file whose first line is not what BEIR writes: a JSON object with ``_id``, or
        the qrels header ``query-id corpus-id score``.

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

    Query id ``1`` stays the string ``'1'``. A split that is not there:

    >>> irm.read_beir(root, split="dev")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MissingFileError: ...dev.tsv: no such file; ... the splits here: test
    """
    root = Path(folder)
    if not root.is_dir():
        raise MissingFileError(
            f"{root}: no such folder; expected a BEIR dataset (corpus.jsonl, queries.jsonl, "
            "qrels/<split>.tsv)"
        )
    corpus_path = _check_jsonl(root / "corpus.jsonl", "the BEIR corpus")
    queries_path = _check_jsonl(root / "queries.jsonl", "the BEIR queries")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        found = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        raise MissingFileError(
            f"{qrels_path}: no such file; expected BEIR judgments (query-id, corpus-id, "
            f"score); the splits here: {', '.join(found) or 'none'}"
        )
    with qrels_path.open(encoding="utf-8", errors="replace") as handle:
        header = tuple(handle.readline().strip().split("\t"))
    if header != _QRELS_HEADER:
        raise FileFormatError(
            f"{qrels_path}: first line {header!r} is not BEIR's qrels header "
            "'query-id<TAB>corpus-id<TAB>score'"
        )
    corpus = pl.scan_ndjson(
        corpus_path, schema={"_id": pl.String, "title": pl.String, "text": pl.String}
    ).rename({"_id": doc_id})
    queries = pl.scan_ndjson(queries_path, schema={"_id": pl.String, "text": pl.String}).rename(
        {"_id": query_id}
    )
    judgments = pl.scan_csv(
        qrels_path,
        separator="\t",
        schema={"query-id": pl.String, "corpus-id": pl.String, "score": pl.Int64},
    ).rename({"query-id": query_id, "corpus-id": doc_id, "score": relevance})
    return BeirDataset(corpus, queries, judgments)


def _check_jsonl(path: Path, what: str) -> Path:
    if not path.is_file():
        raise MissingFileError(f"{path}: no such file; expected {what} (JSON lines)")
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        row = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        row = None
    if not isinstance(row, dict) or "_id" not in row:
        shown = first[:60].decode("utf-8", errors="replace").strip()
        raise FileFormatError(
            f"{path}: first line {shown!r} is not a JSON object with an '_id'; expected "
            f"{what}, one JSON object per line"
        )
    return path
