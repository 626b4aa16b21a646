"""Runs and judgments from files: Parquet, TREC text, CSV or TSV, told apart by content.

:func:`scan_run` and :func:`scan_qrels` return LazyFrames with the library's column
names, whatever the file format, so every path from a file to a metric is one plan.
Parquet sources are anything ``pl.scan_parquet`` reads: a file, a glob, a
hive-partitioned folder (partition columns become ordinary columns, usable as ``by``
keys) or an object-store URL.
"""

from __future__ import annotations

import gzip
import os
from importlib import resources
from pathlib import Path
from typing import Literal

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.io.trec import read_trec_qrels, scan_trec_run

__all__ = ["FileFormat", "detect_format", "sample_paths", "scan_qrels", "scan_run"]

FileFormat = Literal["auto", "parquet", "trec", "csv", "tsv"]
FORMATS: tuple[str, ...] = ("auto", "parquet", "trec", "csv", "tsv")
_GZIP_MAGIC = b"\x1f\x8b"


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


def detect_format(source: str | os.PathLike[str]) -> Literal["parquet", "trec", "csv", "tsv"]:
    """Tell a file's format from its name and first bytes.

    Parquet: a folder, a glob, a URL, a ``.parquet`` name or the ``PAR1`` magic bytes.
    CSV/TSV: a ``.csv``/``.tsv`` name, or a first line with commas (CSV) or tabs and a
    header (TSV). Anything else is read as TREC text (whitespace-separated fields).
    """
    text = os.fspath(source)
    lower = text.lower().removesuffix(".gz")
    if lower.endswith((".parquet", ".pq")) or "://" in text or any(c in text for c in "*?["):
        return "parquet"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".tsv"):
        return "tsv"
    path = Path(text)
    if path.is_dir():
        return "parquet"
    with path.open("rb") as handle:
        head = handle.read(4)
    if head == b"PAR1":
        return "parquet"
    first = _first_line(path)
    if "," in first:
        return "csv"
    if "\t" in first and not _looks_like_trec(first):
        return "tsv"
    return "trec"


def _first_line(path: Path) -> str:
    with path.open("rb") as raw:
        zipped = raw.read(2) == _GZIP_MAGIC
    opener = gzip.open if zipped else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for line in handle:
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


def _scan_table(source: str, fmt: str, ids: tuple[str, str]) -> pl.LazyFrame:
    if fmt == "parquet":
        return pl.scan_parquet(source)
    separator = "," if fmt == "csv" else "\t"
    return pl.scan_csv(source, separator=separator, schema_overrides=dict.fromkeys(ids, pl.String))


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
    resolved = detect_format(text) if fmt == "auto" else fmt
    if resolved == "trec":
        frame = scan_trec_run(text)
        return frame.rename({"query_id": query_id, "doc_id": doc_id})
    return _scan_table(text, resolved, (query_id, doc_id))


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
    resolved = detect_format(text) if fmt == "auto" else fmt
    if resolved == "trec":
        frame = read_trec_qrels(text).lazy()
        return frame.rename({"query_id": query_id, "doc_id": doc_id, "relevance": relevance})
    return _scan_table(text, resolved, (query_id, doc_id))
