"""Runs and judgments from files: Parquet, TREC text, CSV, TSV or JSON lines, told apart
by content.

JSON lines (``.jsonl``/``.ndjson``, or text whose first line starts with ``{``) are
read by ``pl.scan_ndjson``: one object per line, such as a list-shaped run
``{"query_id": "q1", "doc_id": [11, 1, 17], "score": [0.9, 0.8, 0.7]}`` (see
:mod:`polars_irmetrics.ground.lists`); Parquet files may hold list columns too.

:func:`scan_run` and :func:`scan_qrels` return LazyFrames with the library's column
names, whatever the file format, so every path from a file to a metric is one plan.
Parquet sources are anything ``pl.scan_parquet`` reads: a file, a glob, a
hive-partitioned folder (partition columns become ordinary columns, usable as ``by``
keys) or an object-store URL. Text files (TREC, CSV, TSV) may be compressed with gzip,
zstd, bzip2 or xz, and ``-`` reads standard input (:mod:`polars_irmetrics.io.sources`):
a missing path raises :class:`~polars_irmetrics.errors.MissingFileError` and a binary
file :class:`~polars_irmetrics.errors.FileFormatError`, naming the file and what was
expected, when the scan is built.
"""

from __future__ import annotations

import io
import os
from importlib import resources
from pathlib import Path
from typing import Literal

import polars as pl

from polars_irmetrics.errors import FileFormatError, InvalidValueError, MissingFileError
from polars_irmetrics.io.sources import STDIN, display_name, is_local_path, open_text, raw_bytes
from polars_irmetrics.io.trec import read_trec_qrels, scan_trec_run

__all__ = [
    "FileFormat",
    "detect_format",
    "sample_interactions_path",
    "sample_interleaving_path",
    "sample_paths",
    "scan_qrels",
    "scan_queries",
    "scan_run",
]

FileFormat = Literal["auto", "parquet", "trec", "csv", "tsv", "jsonl"]
FORMATS: tuple[str, ...] = ("auto", "parquet", "trec", "csv", "tsv", "jsonl")
_RUN = "a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or JSON lines"
_QRELS = (
    "judgments: Parquet, TREC qrels (query_id iteration doc_id relevance), CSV, TSV or JSON lines"
)
_QUERIES = "query attributes: Parquet, CSV or TSV with a header"


def sample_paths() -> tuple[list[Path], Path]:
    """The bundled sample: three systems' runs and their judgments (Parquet).

    Examples
    --------
    >>> from polars_irmetrics.io.files import sample_paths
    >>> runs, qrels = sample_paths()
    >>> [p.name for p in runs], qrels.name
    (['run_bm25.parquet', 'run_dense.parquet', 'run_hybrid.parquet'], 'qrels.parquet')
    """
    data = Path(str(resources.files("polars_irmetrics") / "data"))
    runs = [data / f"run_{name}.parquet" for name in ("bm25", "dense", "hybrid")]
    return runs, data / "qrels.parquet"


def sample_interactions_path() -> Path:
    """The bundled A/B test impression log (Parquet; ``scripts/make_interactions_sample.py``).

    Examples
    --------
    >>> from polars_irmetrics.io.files import sample_interactions_path
    >>> sample_interactions_path().name
    'interactions.parquet'
    """
    return Path(str(resources.files("polars_irmetrics") / "data")) / "interactions.parquet"


def sample_interleaving_path() -> Path:
    """The bundled team-draft interleaving log (Parquet).

    Examples
    --------
    >>> from polars_irmetrics.io.files import sample_interleaving_path
    >>> sample_interleaving_path().name
    'interleaving.parquet'
    """
    return Path(str(resources.files("polars_irmetrics") / "data")) / "interleaving.parquet"


def detect_format(
    source: str | os.PathLike[str], what: str = "a run or judgments file"
) -> Literal["parquet", "trec", "csv", "tsv", "jsonl"]:
    """Tell a file's format from its name and first bytes.

    Parquet: a folder, a glob, a URL, a ``.parquet`` name or the ``PAR1`` magic bytes.
    CSV/TSV: a ``.csv``/``.tsv`` name, or a first line with commas (CSV) or tabs and a
    header (TSV). JSON lines: a ``.jsonl``/``.ndjson`` name or a first line starting
    with ``{``. Anything else is read as TREC text (whitespace-separated fields).
    ``-`` is standard input, told apart by its content. Text may be compressed (gzip,
    zstd, bzip2, xz); binary data that is not Parquet raises
    :class:`~polars_irmetrics.errors.FileFormatError`, and a missing path
    :class:`~polars_irmetrics.errors.MissingFileError`, both naming ``what`` was
    expected.
    """
    text = os.fspath(source)
    lower = text.lower()
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        lower = lower.removesuffix(suffix)
    if lower.endswith((".parquet", ".pq")) or "://" in text or any(c in text for c in "*?["):
        return "parquet"
    if text != STDIN and Path(text).is_dir():
        return "parquet"
    raw = raw_bytes(text)  # standard input or a pipe, read whole once
    if raw is not None:
        if raw.startswith(b"PAR1"):
            return "parquet"
    elif Path(text).is_file():
        with Path(text).open("rb") as handle:
            if handle.read(4) == b"PAR1":
                return "parquet"
    head = open_text(text, what).head  # raises for a missing or binary file
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".tsv"):
        return "tsv"
    first = _first_line(head)
    if lower.endswith((".jsonl", ".ndjson")) or first.startswith("{"):
        return "jsonl"
    if "," in first:
        return "csv"
    if "\t" in first and not _looks_like_trec(first):
        return "tsv"
    return "trec"


def _first_line(head: bytes) -> str:
    for line in head.decode("utf-8", errors="replace").removeprefix("\ufeff").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return ""


def _looks_like_trec(line: str) -> bool:
    fields = line.split()
    if len(fields) >= 6:  # trec_eval ignores fields after the run tag
        return _is_number(fields[3]) and _is_number(fields[4])
    return len(fields) == 4 and _is_number(fields[3])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_format(fmt: str, what: str) -> None:
    if fmt not in FORMATS:
        raise InvalidValueError(
            f"{what} format {fmt!r} is not known; choose one of {', '.join(FORMATS)}"
        )


def _scan_table(source: str, fmt: str, ids: tuple[str, str], what: str) -> pl.LazyFrame:
    if fmt == "parquet":
        raw = None if not is_local_path(source) and source != STDIN else raw_bytes(source)
        if raw is not None:
            return pl.scan_parquet(io.BytesIO(raw))
        if is_local_path(source) and not Path(source).exists():
            raise MissingFileError(f"{source}: no such file or folder; expected {what}")
        return pl.scan_parquet(source)
    if fmt == "jsonl":
        return pl.scan_ndjson(open_text(source, what).data)
    separator = "," if fmt == "csv" else "\t"
    # the path, or the bytes to read; a glob is polars' to expand
    data = source if any(c in source for c in "*?[") else open_text(source, what).data
    return pl.scan_csv(data, separator=separator, schema_overrides=dict.fromkeys(ids, pl.String))


def scan_run(
    source: str | os.PathLike[str],
    fmt: FileFormat = "auto",
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
) -> pl.LazyFrame:
    """A run from a file or Parquet source, as a LazyFrame.

    TREC run files give ``query_id``, ``doc_id``, ``score``, ``run_id`` (their rank
    column is ignored, as trec_eval does); tables keep their own columns, with ids read
    as strings from CSV/TSV.
    """
    _check_format(fmt, "run")
    text = os.fspath(source)
    resolved = detect_format(text, _RUN) if fmt == "auto" else fmt
    if resolved == "trec":
        frame = scan_trec_run(text)
        return frame.rename({"query_id": query_id, "doc_id": doc_id})
    return _scan_table(text, resolved, (query_id, doc_id), _RUN)


def scan_qrels(
    source: str | os.PathLike[str],
    fmt: FileFormat = "auto",
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    relevance: str = "relevance",
) -> pl.LazyFrame:
    """Judgments from a file or Parquet source, as a LazyFrame.

    TREC qrels files give ``query_id``, ``doc_id``, ``relevance`` (Int64 when every
    label is a whole number, else Float64; fractional labels are kept).
    """
    _check_format(fmt, "qrels")
    text = os.fspath(source)
    resolved = detect_format(text, _QRELS) if fmt == "auto" else fmt
    if resolved == "trec":
        frame = read_trec_qrels(text).lazy()
        return frame.rename({"query_id": query_id, "doc_id": doc_id, "relevance": relevance})
    return _scan_table(text, resolved, (query_id, doc_id), _QRELS)


def scan_queries(source: str | os.PathLike[str], *, query_id: str = "query_id") -> pl.LazyFrame:
    """A table of query attributes (``query_id`` and group keys) from a file, lazily."""
    text = os.fspath(source)
    resolved = detect_format(text, _QUERIES)
    if resolved == "trec":
        raise FileFormatError(
            f"{display_name(text)}: not a table with a header; query attributes are read from "
            "Parquet, CSV or TSV with columns such as query_id,day"
        )
    return _scan_table(text, resolved, (query_id, query_id), _QUERIES)
