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

import csv
import fnmatch
import glob
import io
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    FileFormatError,
    InvalidValueError,
    IrmError,
    MissingFileError,
    TrecFormatError,
)
from polars_irmetrics.ground.validate import FLOAT64_EXACT
from polars_irmetrics.io.sources import (
    STDIN,
    check_reachable,
    display_name,
    excerpt,
    is_glob,
    is_local_path,
    literal_path,
    open_text,
    raw_bytes,
    text_lines,
    undecodable_error,
    unreadable,
    whole_text,
)
from polars_irmetrics.io.trec import (
    first_repeat,
    read_trec_eval_qrels,
    read_trec_qrels,
    repeated_pair,
    scan_trec_run,
)

__all__ = [
    "FileFormat",
    "Flag",
    "check_not_empty",
    "damaged_json_line",
    "detect_format",
    "flagged_line",
    "located_error",
    "look_swapped",
    "parquet_files",
    "ragged_error",
    "ragged_line",
    "refuse_log_text",
    "repeated_line",
    "sample_interactions_path",
    "sample_interleaving_path",
    "sample_paths",
    "scan_log",
    "scan_logs",
    "scan_qrels",
    "scan_queries",
    "scan_run",
    "source_files",
    "trec_shape",
]

_BEYOND = (
    "a float beyond 2**53, which no reader holds exactly: write the rank as an integer "
    "(without a decimal point)"
)
_NOT_WHOLE = (
    "not a whole number; a rank is a position 1, 2, 3, ... in its query's list: fix or drop "
    "the line"
)
FileFormat = Literal["auto", "parquet", "trec", "csv", "tsv", "jsonl"]
FORMATS: tuple[str, ...] = ("auto", "parquet", "trec", "csv", "tsv", "jsonl")
_RUN = "a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or JSON lines"
_QRELS = (
    "judgments: Parquet, TREC qrels (query_id iteration doc_id relevance), CSV, TSV or JSON lines"
)
_QUERIES = "query attributes: Parquet, CSV or TSV with a header"
_LOG = "an impression log: Parquet, CSV or TSV with a header"


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
    expected; a path or folder this process may not read (permission denied) raises
    :class:`~polars_irmetrics.errors.FileFormatError` too.
    """
    text = os.fspath(source)
    check_reachable(text, what)
    lower = text.lower()
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        lower = lower.removesuffix(suffix)
    if is_glob(text):
        return _glob_format(text, what)
    if lower.endswith((".parquet", ".pq")) or "://" in text:
        return "parquet"
    if text != STDIN and Path(text).is_dir():
        return "parquet"
    raw = raw_bytes(text)  # standard input or a pipe, read whole once
    if raw is not None:
        if raw.startswith(b"PAR1"):
            return "parquet"
    elif Path(text).is_file():
        try:
            with Path(text).open("rb") as handle:
                magic = handle.read(4)
        except PermissionError:
            raise unreadable(text, what) from None
        if magic == b"PAR1":
            return "parquet"
    head = open_text(text, what).head  # raises for a missing or binary file
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".tsv"):
        return "tsv"
    first = _first_line(head)
    if _looks_like_trec(first):  # before the comma: a TREC doc id may hold one
        return "trec"
    _refuse_decimal_comma(text, head, first)  # not CSV: TREC text with a decimal comma
    if lower.endswith((".jsonl", ".ndjson")) or first.startswith("{"):
        return "jsonl"
    if "," in first:
        return "csv"
    if "\t" in first and not _looks_like_trec(first):
        return "tsv"
    return "trec"


def _glob_format(pattern: str, what: str) -> Literal["parquet", "csv", "tsv", "jsonl"]:
    """The format of the files a glob matches (that of the first); refused when it
    matches none, or TREC text (name TREC files one by one)."""
    matches = _glob_files(pattern, what)
    if not matches:
        raise MissingFileError(f"{pattern}: the pattern matches no file; expected {what}")
    found = detect_format(matches[0], what)  # a file that exists: read as named
    if found == "trec":
        raise FileFormatError(
            f"{pattern}: matches TREC text files ({matches[0]}); a pattern reads Parquet, "
            "CSV or TSV: name the TREC files one by one"
        )
    return found


def source_files(source: str, what: str | None = None) -> list[str]:
    """The local files a source names: a glob's matches or a folder's files (in name
    order), else the source itself (a file, a URL, ``-``).

    A folder that the glob or the folder's tree holds but that cannot be listed
    (permission denied) raises :class:`~polars_irmetrics.errors.FileFormatError` naming
    it (``what``, what the files should hold, said where given), rather than its files
    being left out.

    Examples
    --------
    >>> from polars_irmetrics.io.files import source_files
    >>> source_files("-"), source_files("no/such/*.parquet")
    (['-'], [])
    """
    if is_glob(source):
        return _glob_files(source, what)
    # os.path.isdir: False, not PermissionError, for a path in a folder that may not be
    # searched (its reader names it)
    if source != STDIN and "://" not in source and os.path.isdir(source):
        return [str(p) for p in _folder_files(source, what)]
    return [source]


def _glob_files(pattern: str, what: str | None) -> list[str]:
    """The files a glob matches, in name order. Python's glob (and polars', which
    expands the pattern again when it reads) passes over a folder it cannot list
    (permission denied) with no word, leaving its files out: every folder the pattern
    looks into is listed first, and one that cannot be is refused, naming it."""
    _check_listed(pattern, what)
    files = []
    for match in sorted(glob.glob(pattern, recursive=True)):
        try:
            found = Path(match).is_file()
        except PermissionError:  # its folder listed but not searchable (no x)
            raise unreadable(os.path.dirname(match), what, "folder") from None
        if found:
            files.append(match)
    return files


def _check_listed(pattern: str, what: str | None) -> list[str]:
    """The folders ``pattern`` matches, once every folder it looks into has been
    listed (or searched, for a plain part); one that cannot be (permission denied) is
    refused, naming it. Hidden folders are looked into too: polars' glob, which reads
    the files, matches them where Python's does not."""
    head, tail = os.path.split(pattern)
    if not tail:  # 'runs/*/': the folders of runs/*
        return _check_listed(head, what) if head and head != pattern else [pattern]
    parents = _check_listed(head, what) if glob.has_magic(head) else [head]
    found: list[str] = []
    for parent in parents:
        if tail == "**":
            found.extend(_tree(parent, what, set()))
        elif glob.has_magic(tail):
            found.extend(
                os.path.join(parent, entry.name)
                for entry in _listing(parent, what)
                if fnmatch.fnmatch(entry.name, tail) and _is_folder(entry)
            )
        else:
            path = os.path.join(parent, tail)
            try:
                os.lstat(path)
            except PermissionError:
                raise unreadable(parent or os.curdir, what, "folder") from None
            except (OSError, ValueError):  # missing: the pattern matches no file there
                continue
            if os.path.isdir(path):
                found.append(path)
    return found


def _listing(folder: str, what: str | None) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` (``""``: the working folder), or the error naming it
    where it cannot be listed; a folder that is not there (or no folder) has none."""
    try:
        with os.scandir(folder or os.curdir) as entries:
            return list(entries)
    except PermissionError:
        raise unreadable(folder or os.curdir, what, "folder") from None
    except (OSError, ValueError):
        return []


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _tree(folder: str, what: str | None, seen: set[str]) -> list[str]:
    """``folder`` and every folder below it, each listed (a ``**`` part; links to
    folders followed once, as glob follows them)."""
    real = os.path.realpath(folder or os.curdir)
    if real in seen:
        return []
    seen.add(real)
    found = [folder]
    for entry in _listing(folder, what):
        if _is_folder(entry):
            found.extend(_tree(os.path.join(folder, entry.name), what, seen))
    return found


def _folder_files(folder: str, what: str | None) -> list[Path]:
    """The files of ``folder`` and its subfolders, in name order, less hidden ones
    (``.crc``, ``_SUCCESS``); a folder that cannot be read (permission denied) is
    refused, naming it, rather than listed as empty. Links to folders are not followed.
    """

    def refuse(error: OSError) -> None:
        if isinstance(error, PermissionError):
            raise unreadable(os.fsdecode(error.filename or folder), what, "folder") from None

    files = []
    for parent, _, names in os.walk(folder, onerror=refuse):
        for name in names:
            path = Path(parent) / name
            try:
                found = path.is_file()
            except PermissionError:  # a folder listed but not searchable (no x)
                raise unreadable(parent, what, "folder") from None
            if name.startswith((".", "_")):
                continue
            if found:
                files.append(path)
            elif path.is_symlink():  # a broken link, which polars reads as the folder's
                # file ("No such file or directory (os error 2)", naming no file)
                raise MissingFileError(
                    f"{path}: a broken link (to {os.readlink(path)}, which is not there) in "
                    f"the folder {folder}, read as one dataset; fix the link or remove it"
                    + (f"; expected {what}" if what else "")
                )
    return sorted(files)


def _first_line(head: bytes) -> str:
    for line in head.decode("utf-8", errors="replace").removeprefix("\ufeff").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return ""


def _refuse_decimal_comma(source: str, head: bytes, first: str) -> None:
    """Refuse a first line that is TREC text once its decimal commas are points
    (``q1 Q0 d1 1 0,5 sys``, a score written by a locale that uses them): read as CSV
    for its comma, it named no such column, or held an empty table, or a blank line.

    >>> _refuse_decimal_comma("run.txt", b"# run\\n\\nq1 Q0 d1 1 0,5 sys\\n", "q1 Q0 d1 1 0,5 sys")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.TrecFormatError: run.txt, line 3: field 5 (score) holds '0,5', ...
    """
    fields = first.split()
    at = 4 if len(fields) >= 6 else 3 if len(fields) == 4 else None
    if at is None or "," not in fields[at]:
        return
    points = [field.replace(",", ".") if i == at else field for i, field in enumerate(fields)]
    if not _looks_like_trec(" ".join(points)):
        return
    lines = head.decode("utf-8", errors="replace").removeprefix("\ufeff").splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if line.strip() == first)
    name = "score" if at == 4 else "relevance"
    raise TrecFormatError(
        f"{display_name(source)}, line {number}: field {at + 1} ({name}) holds "
        f"{fields[at]!r}, a number with a decimal comma; TREC text is whitespace-separated "
        f"and its numbers have a decimal point: write {points[at]}"
    )


def trec_shape(source: str | os.PathLike[str]) -> Literal["run", "qrels"] | None:
    """What a file is shaped as: TREC text by its first data line, ``"run"`` (6 fields
    or more, the 4th and 5th numbers) or ``"qrels"`` (4 fields, the 4th a number); a
    table by its columns under their default names, ``"qrels"`` (``relevance``, no
    ``score`` nor ``rank``) or ``"run"`` (``score`` or ``rank``, no ``relevance``); or
    None (standard input, a file that cannot be read, other columns: nothing to tell).
    For messages only, on an error path (``irm trec-eval QRELS RUN`` with the files
    swapped).

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("# judged\\nq1 0 d1 1\\n")
    ...     table = pathlib.Path(tmp) / "run.csv"
    ...     _ = table.write_text("query_id,doc_id,score\\nq1,d1,0.5\\n")
    ...     print(trec_shape(path), trec_shape(table))
    qrels run
    """
    text = os.fspath(source)
    try:
        if text == STDIN:
            return None
        fmt = detect_format(text)
        if fmt == "trec":
            fields = _first_line(open_text(text, _RUN).head).split()
            if not _looks_like_trec(" ".join(fields)):
                return None
            return "qrels" if len(fields) == 4 else "run"
        names = set(_columns_of(text, fmt))
    except (IrmError, OSError, ValueError, pl.exceptions.PolarsError):
        return None
    ranked = bool(names & {"score", "rank"})
    if "relevance" in names and not ranked:
        return "qrels"
    return "run" if ranked and "relevance" not in names else None


def _columns_of(source: str, fmt: str) -> list[str]:
    """The column names of a table file (:func:`trec_shape`'s; an error path only)."""
    if fmt == "parquet":
        return pl.scan_parquet(source).collect_schema().names()
    head = open_text(source, _RUN).head.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if fmt == "jsonl":
        row = json.loads(_first_line(head.encode()))
        return list(row) if isinstance(row, dict) else []
    return next(csv.reader(io.StringIO(head), delimiter="," if fmt == "csv" else "\t"), [])


def look_swapped(run: str | os.PathLike[str], qrels: str | os.PathLike[str]) -> bool:
    """Whether a run and judgments given to a command look swapped: the run shaped as
    judgments, the judgments as a run (:func:`trec_shape`). For messages only."""
    return trec_shape(run) == "qrels" and trec_shape(qrels) == "run"


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


def _parquet_files(source: str, what: str) -> list[Path]:
    """The local Parquet files behind ``source`` (a file, a glob or a folder), each
    checked to end with Parquet's footer; a folder or glob with none is refused.

    A file of a folder or glob that is not Parquet (a TREC run, a README) is refused
    saying that the folder or pattern reads Parquet only (its ``what`` lists the text
    formats a file named alone may have, which no folder reads).
    """
    holder: str | None = None
    if is_glob(source):
        files = [Path(p) for p in _glob_files(source, what)]
        if not files:
            raise MissingFileError(f"{source}: the pattern matches no file; expected {what}")
        holder = f"the pattern {source} matches it: a pattern of Parquet files"
    elif Path(source).is_dir():
        files = _folder_files(source, what)
        if not files:
            raise MissingFileError(f"{source}: the folder holds no file; expected {what}")
        holder = f"the folder {source} holds it: a folder"
    elif Path(source).exists():
        files = [Path(source)]
    else:
        raise MissingFileError(f"{source}: no such file or folder; expected {what}")
    for path in files:
        _check_parquet_footer(path, what, holder)
    return files


def parquet_files(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], what: str
) -> list[Path]:
    """The local Parquet files behind ``source`` (a file, a glob or a folder, whose files
    are taken in name order, or a list of them, in the list's order), each checked to
    start and end as Parquet and to have a readable footer, and all with the same
    columns.

    A missing path, or a glob or folder without files, raises
    :class:`~polars_irmetrics.errors.MissingFileError`; anything else
    :class:`~polars_irmetrics.errors.FileFormatError`, naming the file and ``what`` was
    expected.

    >>> parquet_files(["no/such/corpus.parquet"], "a corpus")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MissingFileError: no/such/corpus.parquet: no such file or ...
    """
    items = [source] if isinstance(source, str | os.PathLike) else list(source)
    files = [path for item in items for path in _parquet_files(os.fspath(item), what)]
    _parquet_schema(files, what)
    return files


def _check_parquet_footer(path: Path, what: str, holder: str | None = None) -> None:
    """Refuse a file that does not start and end as Parquet; ``holder``: the folder or
    pattern that named it, whose files are all read as one Parquet dataset."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 4))
            tail = handle.read(4)
    except PermissionError:
        raise unreadable(str(path), what) from None
    if head != b"PAR1" and holder is not None:  # a TREC run or a note in a runs/ folder
        raise FileFormatError(
            f"{path}: not a Parquet file (it does not start with PAR1), and {holder} is "
            f"read as one Parquet dataset ({what.split(':')[0]}): move the other files "
            "out, or name the files one by one"
        )
    if head != b"PAR1":
        raise FileFormatError(f"{path}: not a Parquet file (it does not start with PAR1); "
                              f"expected {what}")  # fmt: skip
    if size < 12 or tail != b"PAR1":
        raise FileFormatError(
            f"{path}: a truncated Parquet file (it does not end with Parquet's footer, "
            f"{size} bytes); write it again, or copy it whole; expected {what}"
        )


def _parquet_schema(files: list[Path], what: str) -> None:
    """Every file's footer read, and their columns the same (a glob or folder)."""
    first: tuple[Path, pl.Schema] | None = None
    for path in files:
        try:
            with path.open("rb") as handle:  # a handle: '[' in a name is no pattern
                schema = pl.read_parquet_schema(handle)
        except PermissionError:
            raise unreadable(str(path), what) from None
        except (pl.exceptions.PolarsError, OSError):
            raise FileFormatError(
                f"{path}: a damaged Parquet file (its footer cannot be read); write it "
                f"again; expected {what}"
            ) from None
        if first is None:
            first = (path, pl.Schema(schema))
            continue
        # polars' SchemaError named no file
        _refuse_other_columns(
            (str(first[0]), first[1]), (str(path), pl.Schema(schema)), what.split(":")[0]
        )


def _refuse_other_columns(
    first: tuple[str, pl.Schema],
    other: tuple[str, pl.Schema],
    what: str,
    *,
    widen: bool = False,
    fix: str = "",
) -> None:
    """Refuse ``other`` (a file's name and columns) where its columns are not those of
    ``first``, the first file of the same ``what`` (a glob's, a folder's or a command's
    files, read as one table): a column one lacks, or held in another type (``widen``:
    two numeric types meet, as floats); ``fix``: said after a missing column."""
    (first_name, first_schema), (name, schema) = first, other
    for column in [*first_schema.names(), *[c for c in schema.names() if c not in first_schema]]:
        if column not in schema or column not in first_schema:
            missing, holder = (name, first_name) if column not in schema else (first_name, name)
            raise FileFormatError(
                f"{missing}: no column {column!r}, which {holder} has; every file of {what} "
                f"needs the same columns{fix}"
            )
        one, two = first_schema[column], schema[column]
        if one != two and not (widen and one.is_numeric() and two.is_numeric()):
            example = "" if one.is_nested() else f", e.g. pl.col({column!r}).cast(pl.{one})"
            raise FileFormatError(
                f"{name}: column {column!r} is {two}, but {first_name} has it as {one}; every "
                f"file of {what} needs the same column types: write the files again with one "
                f"type{example}"
            )


def _scan_table(
    source: str,
    fmt: str,
    ids: Sequence[str],
    what: str,
    numbers: Sequence[str] = (),
    rank: str | None = None,
) -> pl.LazyFrame:
    """One table file (or a folder or pattern of them), the ids as text where the format
    types its own; ``numbers``: the columns that must hold numbers, under the names the
    caller gives them (besides :data:`_NUMBERS`), a line holding another value named."""
    numbers = tuple(dict.fromkeys([*_NUMBERS, *numbers]))
    if fmt == "parquet":
        raw = None if not is_local_path(source) and source != STDIN else raw_bytes(source)
        if raw is not None:
            return pl.scan_parquet(io.BytesIO(raw))
        if "://" in source:
            return pl.scan_parquet(source)
        files = _parquet_files(source, what)
        _parquet_schema(files, what)
        # the files checked above: a folder's hidden ones (Spark's .crc, _SUCCESS) left
        # out, as Spark and Hive leave them out
        return pl.scan_parquet(
            source, glob=is_glob(source) or Path(source).is_dir(), hidden_file_prefix=[".", "_"]
        )
    if fmt == "jsonl":
        # every line types the columns (polars' default reads 100): a bad score after
        # line 100 would fail at the collect with polars' text, naming no file or line
        if is_glob(source):  # polars expands the pattern; each file checked as one is
            schemas: list[tuple[str, pl.Schema]] = []
            for path in source_files(source, what):
                check_not_empty(path, fmt, what)
                data = open_text(path, what).data
                lazy = pl.scan_ndjson(literal_path(data), infer_schema_length=None)
                lazy = _check_json_numbers(lazy, path, data, numbers)
                schemas.append((path, _json_schema(lazy, path, what)))
                _check_json_ranks(lazy, path, data, rank)
            # polars types a pattern's columns by its first file alone (a score of 2.5
            # in another file after 1 in the first: "cannot parse '2.5' (f64) as
            # Int64"); typed here as one file holding every line would be
            table = pl.scan_ndjson(source, schema=_json_union(schemas), infer_schema_length=None)
            return _json_whole_ranks(table, rank)
        data = open_text(source, what).data
        lazy = pl.scan_ndjson(literal_path(data), infer_schema_length=None)
        lazy = _check_json_numbers(lazy, source, data, numbers)
        _check_json_ranks(lazy, source, data, rank)
        return _json_whole_ranks(lazy, rank)
    separator = "," if fmt == "csv" else "\t"
    if is_glob(source):  # polars expands the pattern; every file is typed as a whole
        first: tuple[str, pl.Schema] | None = None
        texts: set[str] = set()  # the columns some file holds as numbers in text
        floats: set[str] = set()  # the columns some file holds as floats (or in text)
        for path in source_files(source, what):  # each file's faults named as a file's are
            text = open_text(path, what)
            data = text.data
            _check_header(path, text.head, separator)
            _check_fields(path, data, fmt, what)
            check_not_empty(path, fmt, what)
            lazy = _scan_text(data, separator, ids)
            casts = _number_casts(lazy, path, fmt, what, numbers, rank)
            texts.update(casts)
            read = {**lazy.collect_schema(), **casts}
            floats.update(c for c, dtype in read.items() if dtype.is_float())
            # the files' headers alike, in one order (polars' own error names no file);
            # their types are polars' to unify (a bad value is named where it is read)
            names = list(read)
            schema = (display_name(path), pl.Schema(dict.fromkeys(names, pl.String)))
            if first is None:
                first = schema
                continue
            _refuse_other_columns(first, schema, what.split(":")[0])
            if first[1].names() != schema[1].names():
                raise FileFormatError(
                    f"{schema[0]}: its columns are in another order "
                    f"({', '.join(schema[1].names())}) than {first[0]}'s "
                    f"({', '.join(first[1].names())}); every file of a pattern needs the "
                    "columns in one order: write them again in one order"
                )
        # a column some file holds as floats is Float64 (a rank is whole: checked)
        whole = {c: pl.Float64() if c in floats and c != rank else pl.Int64() for c in texts}
        table = pl.scan_csv(
            source,
            separator=separator,
            schema_overrides={**dict.fromkeys(ids, pl.String), **dict.fromkeys(whole, pl.String)},
            infer_schema_length=None,
        )
        return table.with_columns(_as_numbers(whole)) if whole else table
    text = open_text(source, what)
    data = text.data
    _check_header(source, text.head, separator)
    _check_fields(source, data, fmt, what)
    return _check_numbers(_scan_text(data, separator, ids), source, fmt, what, numbers, rank)


def _scan_text(data: str | bytes, separator: str, ids: Sequence[str]) -> pl.LazyFrame:
    """One CSV/TSV file (its path, or its bytes), the ids as text."""
    return pl.scan_csv(
        data,
        separator=separator,
        schema_overrides=dict.fromkeys(ids, pl.String),
        infer_schema_length=None,  # a fractional label or a bad score after row 100
        glob=False,  # runs/[2024].csv is a file
    )


def _check_header(source: str, head: bytes, separator: str) -> None:
    """Refuse a CSV/TSV header that names a column twice: polars renames the second
    ``score_duplicated_0`` and the first is read, whichever the file meant.

    >>> _check_header("run.csv", b"query_id,doc_id,score,score\\nq1,d1,3,1\\n", ",")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.FileFormatError: run.csv, line 1: the header names column ...
    """
    text = head.decode("utf-8", errors="replace").removeprefix("\ufeff")
    header = next(csv.reader(io.StringIO(text), delimiter=separator), [])
    if len(header) == 1 and separator != ";" and len(header[0].split(";")) > 1:
        # a locale's CSV (semicolons, decimal commas): one column, then 'line 2: 2
        # fields where the header has 1' at its first decimal comma
        kind = "CSV" if separator == "," else "TSV"
        raise FileFormatError(
            f"{display_name(source)}, line 1: the header {excerpt(header[0])} is separated "
            f"by semicolons; a {kind} file's fields are separated by "
            f"{'commas' if separator == ',' else 'tabs'} and its numbers have a decimal "
            "point: convert it, e.g. pl.read_csv(path, separator=';', decimal_comma=True)"
            ".write_csv(new_path)"
        )
    seen: dict[str, int] = {}
    for number, name in enumerate(header, start=1):
        if name in seen:
            raise FileFormatError(
                f"{display_name(source)}, line 1: the header names column {name!r} twice "
                f"(fields {seen[name]} and {number}), and only one would be read: rename "
                "or drop one"
            )
        seen[name] = number


def _check_fields(source: str, data: str | bytes, fmt: str, what: str) -> None:
    """Every line of a CSV/TSV file as many fields as its header, when the scan is
    built: polars reads a line with fewer (a blank line too) as nulls, which would be
    refused later without a line, and drops a line's extra fields where only some
    columns are read. One pass of polars over the text; a file it refuses, or whose
    last column holds a null, is then read line by line to name the line."""
    text = pl.scan_csv(
        data, separator="," if fmt == "csv" else "\t", infer_schema=False, glob=False
    )
    try:  # every field of every line parsed: a line with a field too many fails
        nulls = text.select(pl.all().null_count()).collect()
    except pl.exceptions.PolarsError:
        raise located_error(source, what, fmt=fmt) or ragged_error(source, what) from None
    if nulls.width and nulls.row(0)[-1]:  # a short line has its last field null
        found = ragged_line(source, what, fmt=fmt)
        if found is not None:
            raise ragged_error(source, what, fmt=fmt)


#: Columns that must hold numbers when a table has them (under their default names).
_NUMBERS = ("rank", "score", "relevance")


def _check_numbers(
    lazy: pl.LazyFrame,
    source: str,
    fmt: str,
    what: str,
    numbers: Sequence[str] = _NUMBERS,
    rank: str | None = None,
) -> pl.LazyFrame:
    """A CSV/TSV column meant to hold numbers (``numbers``) that came out as text: the
    first line whose value is not a number, named with the file (and the line its
    record starts on: :func:`_record_of`); where every value is one that polars'
    reader leaves as text (``nan``, ``Infinity``, `` 1.5``, ``+2``), the column read as
    those numbers (:func:`_number_casts`)."""
    casts = _number_casts(lazy, source, fmt, what, numbers, rank)
    return lazy.with_columns(_as_numbers(casts)) if casts else lazy


def _as_numbers(casts: Mapping[str, pl.DataType]) -> list[pl.Expr]:
    """The text columns of ``casts`` read as their numbers (spaces around them left
    out), exactly: polars parses text to a number as its CSV reader does."""
    exprs = []
    for column, dtype in casts.items():
        text = pl.col(column).cast(pl.String).str.strip_chars()
        if dtype == pl.Int64:  # a rank written 3.0 too: whole, checked where read
            exprs.append(
                pl.coalesce(
                    text.cast(pl.Int64, strict=False), text.cast(pl.Float64).cast(pl.Int64)
                ).alias(column)
            )
        else:
            exprs.append(text.cast(dtype))
    return exprs


def _number_casts(
    lazy: pl.LazyFrame,
    source: str,
    fmt: str,
    what: str,
    numbers: Sequence[str] = _NUMBERS,
    rank: str | None = None,
) -> dict[str, pl.DataType]:
    """:func:`_check_numbers`' refusal of a value that is no number, or the dtype each
    text column of ``numbers`` holding only numbers is read as: Int64 where every
    value is a whole number written as one (``+2``, `` 3``), else Float64 (``nan``,
    ``Infinity``, `` 1.5``). The ``rank`` column (a run's, where given) is Int64 too
    where its whole numbers are written as floats (``3.0``: a spreadsheet's or
    pandas' export of a column with a gap); a rank that is no whole number (``2.5``,
    ``NaN``) is refused naming its line.

    >>> import polars as pl
    >>> lazy = pl.LazyFrame({"rank": [" 1", "+2"], "score": ["nan", "Infinity"]})
    >>> casts = _number_casts(lazy, "run.csv", "csv", "a run")
    >>> casts, lazy.with_columns(_as_numbers(casts)).collect().rows()
    ({'rank': Int64, 'score': Float64}, [(1, nan), (2, inf)])
    >>> floats = pl.LazyFrame({"rank": [1.0, 2.0]})
    >>> casts = _number_casts(floats, "run.csv", "csv", "a run", rank="rank")
    >>> casts, floats.with_columns(_as_numbers(casts)).collect()["rank"].to_list()
    ({'rank': Int64}, [1, 2])
    """
    try:
        schema = lazy.collect_schema()
    except pl.exceptions.PolarsError:
        raise ragged_error(source, what, fmt=fmt) from None
    casts: dict[str, pl.DataType] = {}
    for column in numbers:
        if column not in schema or schema[column] != pl.String:
            continue
        value = pl.col(column)
        text = value.str.strip_chars()
        bad = value.is_not_null() & text.cast(pl.Float64, strict=False).is_null()
        found = lazy.select(value).with_row_index("row").filter(bad).head(1).collect()
        if found.height:
            row, shown = found.row(0)
            raise FileFormatError(
                f"{_record_of(source, fmt, what, row, (column, shown))}: column {column!r} "
                f"holds {excerpt(shown)}, not a number; fix or drop the line"
            )
        fraction = (value.is_not_null() & text.cast(pl.Int64, strict=False).is_null()).any()
        casts[column] = pl.Float64() if lazy.select(fraction).collect().item() else pl.Int64()
    if (
        rank is not None
        and rank in schema
        and (schema[rank].is_float() or casts.get(rank) == pl.Float64)
    ):
        # ranks written as floats (3.0: a spreadsheet's or pandas' export of a column
        # with a gap): whole numbers read as the integers they are, any other refused
        text = pl.col(rank).cast(pl.String).str.strip_chars()
        value = text.cast(pl.Float64)
        whole = value == value.floor()
        # a float beyond 2**53 is not exact (9007199254740993.0 reads as ...992.0)
        exact = (value.abs() < FLOAT64_EXACT) | text.cast(pl.Int64, strict=False).is_not_null()
        found = (
            lazy.select(pl.col(rank).cast(pl.String), whole.alias("whole"))
            .with_row_index("row")
            .filter(value.is_not_null() & ~(whole & exact))
            .head(1)
            .collect()
        )
        if found.height:
            row, shown, is_whole = found.row(0)
            if schema[rank].is_float():  # polars' float: shown as the file writes it
                separator = "," if fmt == "csv" else "\t"
                text_column = _scan_text(open_text(source, what).data, separator, [rank])
                shown = text_column.select(rank).slice(row, 1).collect().item()
            where = _record_of(source, fmt, what, row, (rank, shown))
            raise FileFormatError(
                f"{where}: column {rank!r} holds {excerpt(shown)}, {_BEYOND}"
                if is_whole
                else f"{where}: column {rank!r} holds {excerpt(shown)}, {_NOT_WHOLE}"
            )
        casts[rank] = pl.Int64()
    return casts


def _record_of(
    source: str, fmt: str, what: str, row: int, value: tuple[str, str] | None = None
) -> str:
    """The file and the line where row ``row`` (polars' index, from 0) of a CSV/TSV
    file starts (:func:`record_where`), where the csv module reads as many records as
    polars and, given ``value`` (a column and its text), that value there; else its
    record, counted from 1 after the header. An error path only."""
    separator = "," if fmt == "csv" else "\t"
    located = record_lines(open_text(source, what).data, separator, [row])
    if located is not None and value is not None:
        header, records = located
        fields = records[row][1]
        column, text = value
        if (
            column not in header
            or len(fields) != len(header)
            or fields[header.index(column)] != text
        ):
            located = None
    return record_where(display_name(source), None if located is None else located[1][row], row)


def _check_json_numbers(
    lazy: pl.LazyFrame, source: str, data: str | bytes, numbers: Sequence[str] = _NUMBERS
) -> pl.LazyFrame:
    """A JSON lines column meant to hold numbers (``numbers``) with a value that is
    not one (text, which makes the column text, or a Boolean, which polars fails to
    read as a number when the plan runs, naming no file): the first line whose value is
    neither a JSON number nor null, named with the file. The columns are read once
    here; a fault is looked for line by line, an error path only.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = str(pathlib.Path(tmp) / "run.jsonl")
    ...     _ = pathlib.Path(path).write_text('{"score": 2}\\n\\n{"score": "n/a"}\\n')
    ...     try:
    ...         _check_json_numbers(pl.scan_ndjson(path, infer_schema_length=None), path, path)
    ...     except FileFormatError as error:
    ...         print(str(error).replace(path, "run.jsonl"))
    run.jsonl, line 3: column 'score' holds 'n/a', not a number; fix or drop the line
    """
    try:
        schema = lazy.collect_schema()
        columns = [c for c in numbers if c in schema]
        if not columns or (
            all(schema[c] != pl.String for c in columns)
            and lazy.select(columns).collect().width  # every value read as a number
        ):
            return lazy
    except pl.exceptions.PolarsError:
        pass  # a value that cannot be read as its column's number, or a damaged line
    for number, line in enumerate(io.BytesIO(whole_text(data)), start=1):
        try:
            row = json.loads(line.decode("utf-8-sig", errors="replace")) if line.strip() else {}
        except ValueError:
            return lazy  # a damaged line: named when the columns are read (_with_columns)
        for column in [c for c in numbers if isinstance(row, dict) and c in row]:
            value = row[column]
            if isinstance(value, str | bool):  # a list: a list-shaped run's, not looked at
                shown = value if isinstance(value, str) else json.dumps(value)
                raise FileFormatError(
                    f"{display_name(source)}, line {number}: column {column!r} holds "
                    f"{excerpt(shown)}, not a number; fix or drop the line"
                )
    return lazy


def _check_json_ranks(
    lazy: pl.LazyFrame, source: str, data: str | bytes, rank: str | None
) -> None:
    """A JSON lines run's ``rank`` column written as floats (``3.0``: pandas'
    ``to_json`` of an integer column with a gap): the first line whose rank is no
    whole number (``2.5``), or one beyond 2**53 (not exact as a float), refused with
    the file and the line; whole ones are read as integers by
    :func:`_json_whole_ranks`, as a CSV file's are. An error path reads the lines.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = str(pathlib.Path(tmp) / "run.jsonl")
    ...     _ = pathlib.Path(path).write_text('{"rank": 1.0}\\n{"rank": 2.5}\\n')
    ...     try:
    ...         _check_json_ranks(pl.scan_ndjson(path), path, path, "rank")
    ...     except FileFormatError as error:
    ...         print(str(error).replace(path, "run.jsonl"))
    run.jsonl, line 2: column 'rank' holds 2.5, not a whole number; a rank is a \
position 1, 2, 3, ... in its query's list: fix or drop the line
    """
    if rank is None or not _json_dtype(lazy, rank).is_float():
        return
    value = pl.col(rank)
    whole = (value == value.floor()) & (value.abs() < FLOAT64_EXACT)
    if not lazy.select((value.is_not_null() & ~whole).any()).collect().item():
        return
    for number, line in enumerate(io.BytesIO(whole_text(data)), start=1):
        row = json.loads(line.decode("utf-8-sig", errors="replace")) if line.strip() else {}
        held = row.get(rank) if isinstance(row, dict) else None
        if not isinstance(held, float):
            continue
        if not math.isfinite(held) or not held.is_integer():
            why = _NOT_WHOLE
        elif abs(held) >= FLOAT64_EXACT:
            why = _BEYOND
        else:
            continue
        raise FileFormatError(
            f"{display_name(source)}, line {number}: column {rank!r} holds "
            f"{json.dumps(held)}, {why}"
        )


def _json_dtype(lazy: pl.LazyFrame, column: str) -> pl.DataType:
    """``column``'s dtype in ``lazy`` (Null where it has no such column, or its columns
    cannot be read: a damaged line, named where the columns are read)."""
    try:
        return lazy.collect_schema().get(column, pl.Null())
    except pl.exceptions.PolarsError:
        return pl.Null()


def _json_whole_ranks(lazy: pl.LazyFrame, rank: str | None) -> pl.LazyFrame:
    """``lazy`` with a ``rank`` column of floats read as the integers they are
    (:func:`_check_json_ranks` refused any other)."""
    if rank is None or not _json_dtype(lazy, rank).is_float():
        return lazy
    return lazy.with_columns(pl.col(rank).cast(pl.Int64))


def _json_schema(lazy: pl.LazyFrame, source: str, what: str) -> pl.Schema:
    """One JSON lines file's columns, or its first damaged line named."""
    try:
        return lazy.collect_schema()
    except pl.exceptions.PolarsError:
        damaged = damaged_json_line(source, what)
        if damaged is not None:
            raise damaged from None
        raise FileFormatError(
            f"{display_name(source)}: its columns cannot be read (a damaged file)"
        ) from None


def _json_union(schemas: Sequence[tuple[str, pl.Schema]]) -> dict[str, pl.DataType]:
    """The columns of a pattern of JSON lines files (``(path, schema)`` each) typed as
    one file holding all their lines would be (polars' supertype: an integer and a
    float a float, a number and text text; a column some file lacks is null there), in
    the order the files first hold them (where every file types them alike, their
    schema: the pattern's scan does not infer it again from the first file). A
    column that is a list (or an object) in one file and not in another is refused
    naming the two files (one file's reader would read the lists as their text).

    >>> _json_union([("a", pl.Schema({"s": pl.Int64})), ("b", pl.Schema({"s": pl.Float64}))])
    {'s': Float64}
    """
    if all(schema == schemas[0][1] for _, schema in schemas):
        return dict(schemas[0][1])
    seen: dict[str, list[tuple[str, pl.DataType]]] = {}
    for path, schema in schemas:
        for column, dtype in schema.items():
            seen.setdefault(column, []).append((path, dtype))
    union: dict[str, pl.DataType] = {}
    for column, held in seen.items():
        nested = [isinstance(dtype, pl.List | pl.Array | pl.Struct) for _, dtype in held]
        try:
            if any(nested) and not all(nested):
                raise pl.exceptions.SchemaError(column)
            frames = [pl.LazyFrame(schema={column: dtype}) for _, dtype in held]
            union[column] = pl.concat(frames, how="diagonal_relaxed").collect_schema()[column]
        except pl.exceptions.PolarsError:
            (first, one), (other, two) = held[0], next(h for h in held if h[1] != held[0][1])
            raise FileFormatError(
                f"{display_name(other)}: column {column!r} holds {two} where "
                f"{display_name(first)}'s holds {one}; the files of a pattern are read as "
                "one table: write the column one way in every file"
            ) from None
    return union


def _parquet_rows(source: str, what: str) -> int | None:
    """The rows of a Parquet source from its footers (None for a URL: not looked at)."""
    import pyarrow as pa  # a dependency; imported only to count rows
    import pyarrow.parquet as pq

    raw = raw_bytes(source) if source == STDIN or is_local_path(source) else None
    if "://" in source and raw is None:
        return None
    files = [] if raw is not None else _parquet_files(source, what)
    if raw is None:
        _parquet_schema(files, what)  # each footer readable, the same columns
    total = 0
    for path in files or [Path(display_name(source))]:
        try:
            if raw is not None:
                total += int(pq.read_metadata(io.BytesIO(raw)).num_rows)
                break
            with path.open("rb") as handle:
                total += int(pq.read_metadata(handle).num_rows)
        except PermissionError:
            raise unreadable(str(path), what) from None
        except (pa.ArrowException, OSError, ValueError):
            raise FileFormatError(
                f"{path}: a damaged Parquet file (its footer cannot be read); write it "
                f"again; expected {what}"
            ) from None
    return total


def _has_data_line(head: bytes, fmt: str) -> bool:
    """Whether a text's first bytes hold a line of data (after a header for CSV/TSV)."""
    text = head.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = [line for line in text.splitlines() if line.strip()]
    if fmt == "trec":
        lines = [line for line in lines if not line.lstrip().startswith("#")]
    return len(lines) > (1 if fmt in ("csv", "tsv") else 0)


def check_not_empty(source: str | os.PathLike[str], fmt: str, what: str) -> None:
    """Refuse a run, judgments or log file without a row of data, naming it: an empty
    file would be scored as retrieving nothing (or judging nothing), zeros with no word.

    ``fmt`` is the file's resolved format; a Parquet source's rows are counted from its
    footers, a text file's first 64 KiB are looked at (a file longer than that holds a
    line). Globs of text files and URLs are not looked at.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from polars_irmetrics.io.files import check_not_empty
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.csv"
    ...     _ = path.write_text("query_id,doc_id,score\\n")
    ...     check_not_empty(str(path), "csv", "a run")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.FileFormatError: .../run.csv: an empty file (a header, no ...
    """
    text = os.fspath(source)
    name = display_name(text)
    check_reachable(text, what)
    if fmt == "parquet":
        rows = _parquet_rows(text, what)
        if rows == 0:
            raise FileFormatError(f"{name}: an empty Parquet file (no rows); expected {what}")
        return
    if is_glob(text) or "://" in text:
        return
    head = open_text(text, what).head
    if len(head) < (1 << 16) and not _has_data_line(head, fmt):
        kind = "a header, no rows" if head.strip() and fmt in ("csv", "tsv") else "no line of data"
        raise FileFormatError(f"{name}: an empty file ({kind}); expected {what}")


def _with_columns(table: pl.LazyFrame, source: str, needed: dict[str, str]) -> pl.LazyFrame:
    """``table``, or :class:`ColumnNotFoundError` naming the file and the argument that
    names the column it lacks."""
    try:
        schema = table.collect_schema()
    except pl.exceptions.PolarsError:
        damaged = damaged_json_line(source)  # polars' text names neither file nor line
        if damaged is not None:
            raise damaged from None
        raise FileFormatError(
            f"{display_name(source)}: its columns cannot be read (a damaged file, or files "
            "of a pattern or folder that disagree)"
        ) from None
    have = schema.names()
    doc_id = needed.get("doc_id")
    listed = doc_id is not None and isinstance(schema.get(doc_id), pl.List | pl.Array)
    for keyword, column in needed.items():
        if keyword == "relevance" and listed:
            continue  # judgments listing each query's relevant documents (relevance 1)
        if column not in have:
            shown = ", ".join(repr(c) for c in have) or "none"
            raise ColumnNotFoundError(
                f"{display_name(source)}: no column {column!r} (its columns: {shown}); name "
                f"the {keyword.replace('_', ' ')} column with {keyword}=..."
            )
    return table


def scan_run(
    source: str | os.PathLike[str],
    fmt: FileFormat = "auto",
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    rank: str = "rank",
    score: str = "score",
    numbers: Sequence[str] = (),
    required: Mapping[str, str] | None = None,
    what: str = _RUN,
) -> pl.LazyFrame:
    """A run from a file or Parquet source, as a LazyFrame.

    TREC run files give ``query_id``, ``doc_id``, ``score``, ``run_id`` (their rank
    column is ignored, as trec_eval does); tables keep their own columns, with ids read
    as strings from CSV/TSV. ``required`` maps keywords to the columns the table must
    have (default: ``query_id`` and ``doc_id``; a prediction log needs ``label`` and
    ``prediction`` instead); a missing one is named with the file and the keyword. A
    file without a row of data is refused (:func:`check_not_empty`). ``what`` says
    what the file should hold, in messages (another table read as runs are). A CSV, TSV
    or JSON lines value of the ``rank`` or ``score`` column, of the other ``numbers``
    (a prediction column), or of ``rank``, ``score`` or ``relevance``, that is not a
    number is refused naming its line.

    A Parquet source's files are checked when the scan is built, each read to its
    footer: one that is not Parquet (a text file named ``.parquet``), is truncated, or
    whose footer cannot be read raises :class:`~polars_irmetrics.errors.FileFormatError`
    naming it. A file whose footer reads but whose data pages are damaged fails when
    collected, with polars' message (finding it here would read the whole file); the
    ``irm`` command names that file and its column
    (:func:`located_error`).
    """
    _check_format(fmt, "run")
    text = os.fspath(source)
    resolved = detect_format(text, what) if fmt == "auto" else fmt
    check_not_empty(text, resolved, what)
    if resolved == "trec":
        frame = scan_trec_run(text)
        return frame.rename({"query_id": query_id, "doc_id": doc_id})
    table = _scan_table(text, resolved, (query_id, doc_id), what, (rank, score, *numbers), rank)
    needed = {"query_id": query_id, "doc_id": doc_id} if required is None else dict(required)
    return _with_columns(table, text, needed)


def scan_qrels(
    source: str | os.PathLike[str],
    fmt: FileFormat = "auto",
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    relevance: str = "relevance",
    required: Mapping[str, str] | None = None,
    what: str = _QRELS,
    atol_labels: bool = False,
) -> pl.LazyFrame:
    """Judgments from a file or Parquet source, as a LazyFrame.

    TREC qrels files give ``query_id``, ``doc_id``, ``relevance`` (Int64 when every
    label is a whole number, else Float64; fractional labels are kept; with
    ``atol_labels``, Int64 read as trec_eval reads them, :func:`read_trec_eval_qrels`).
    A file without a row of data is refused (:func:`check_not_empty`); ``required`` and
    ``what`` as :func:`scan_run` takes them (default: the ids and the relevance).
    Parquet files are checked as :func:`scan_run` checks them: a damaged footer is
    named when the scan is built, damaged data pages only when it is collected, with
    polars' message.
    """
    _check_format(fmt, "qrels")
    text = os.fspath(source)
    resolved = detect_format(text, what) if fmt == "auto" else fmt
    check_not_empty(text, resolved, what)
    if resolved == "trec":
        frame = (read_trec_eval_qrels(text) if atol_labels else read_trec_qrels(text)).lazy()
        return frame.rename({"query_id": query_id, "doc_id": doc_id, "relevance": relevance})
    table = _scan_table(text, resolved, (query_id, doc_id), what, (relevance,))
    names = {"query_id": query_id, "doc_id": doc_id, "relevance": relevance}
    return _with_columns(table, text, names if required is None else dict(required))


def scan_queries(source: str | os.PathLike[str], *, query_id: str = "query_id") -> pl.LazyFrame:
    """A table of query attributes (``query_id`` and group keys) from a file, lazily."""
    text = os.fspath(source)
    resolved = detect_format(text, _QUERIES)
    if resolved == "trec":
        raise FileFormatError(
            f"{display_name(text)}: not a table with a header; query attributes are read from "
            "Parquet, CSV or TSV with columns such as query_id,day"
        )
    check_not_empty(text, resolved, _QUERIES)
    return _scan_table(text, resolved, (query_id, query_id), _QUERIES)


def scan_log(source: str | os.PathLike[str]) -> pl.LazyFrame:
    """An impression log (or any table with a header) from a file, lazily: Parquet,
    CSV or TSV, read as runs are (globs, folders, compressed text, ``-``); a file that
    is no table, or holds no row, is refused naming it, and so is a CSV/TSV line with
    more or fewer fields than the header (polars would drop the extra fields of a line
    where only some columns are read, and count the row; it reads missing fields, and
    a blank line, as nulls)."""
    text = os.fspath(source)
    resolved = detect_format(text, _LOG)
    check_not_empty(text, resolved, _LOG)
    if resolved == "trec":
        raise FileFormatError(f"{display_name(text)}: not a table with a header; expected {_LOG}")
    return _scan_table(text, resolved, (), _LOG)


#: The texts a CSV's click or conversion column may hold (polars reads them so).
_FLAGS = ("true", "false", "0", "1")


@dataclass(frozen=True)
class LogLines:
    """Where an impression log's rows lie in its file (:func:`log_lines`): row ``r``
    (from 0) of one CSV/TSV file (``table``: its path; ``separator``: its field
    separator) is the line its ``r``-th record starts on, found by reading the file
    again (a quoted field may hold line breaks: :func:`record_lines`), or, where that
    reading and polars' disagree, the record counted from 1; of one JSON lines file
    (``json``: its path), the ``r``-th of its lines that are not blank (polars skips
    blank lines), found by reading the file again (an error path only); a row of one
    Parquet file (``rows``) is named by its index, from 0; rows of several files, a
    glob or a folder have no line.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "log.csv"
    ...     _ = path.write_text('user,title\\nu1,"a\\nb"\\nu2,c\\n')
    ...     LogLines(table=str(path)).where("log.csv", 1)
    'log.csv, line 4'
    >>> LogLines(rows=True).where("log.parquet", 3)
    'log.parquet, row 3 (counted from 0)'
    >>> LogLines().where("logs/", 3)
    'logs/'
    """

    table: str | None = None
    separator: str = ","
    json: str | None = None
    rows: bool = False

    @property
    def unit(self) -> str:
        """What a fault's fix drops: a Parquet file's ``row``, a text file's ``line``."""
        return "row" if self.rows else "line"

    def line(self, row: int) -> int | None:
        """The line of row ``row`` (from 0); None where the rows have no line."""
        if self.table is not None:
            data = open_text(self.table, _LOG).data
            located = record_lines(data, self.separator, [row])
            return None if located is None else located[1][row][0]
        if self.json is None:
            return None
        found = -1
        for number, text in enumerate(io.BytesIO(whole_text(open_text(self.json, _LOG).data))):
            found += bool(text.strip())
            if found == row:
                return number + 1
        return None

    def where(self, source: str, row: int) -> str:
        """``source`` (standard input as ``<stdin>``), and the line of row ``row`` where
        it has one (its row index, from 0, in one Parquet file)."""
        source = display_name(source)
        if self.rows:
            return f"{source}, row {row} (counted from 0)"
        line = self.line(row)
        if self.table is not None and line is None:
            return record_where(source, None, row)
        return source if line is None else f"{source}, line {line}"


def _table_records(data: str | bytes, separator: str) -> Iterator[tuple[int, list[str]]]:
    """The records of a CSV/TSV text (:func:`open_text`'s ``data``) as Python's csv
    module reads them, the header first: each record's first line (from 1; a quoted
    field may hold line breaks, so a record may span several lines; lines end at line
    feeds, as the package counts a text file's lines elsewhere) and its fields. A
    blank line is a record of no field (polars reads it as a row of nulls). An error
    path only: the text is read again."""
    whole = io.BytesIO(whole_text(data))
    lines = (
        raw.decode("utf-8-sig" if at == 0 else "utf-8", "replace") for at, raw in enumerate(whole)
    )
    reader = csv.reader(lines, delimiter=separator)
    start = 1
    for fields in reader:
        yield start, fields
        start = reader.line_num + 1


def record_lines(
    data: str | bytes, separator: str, rows: Sequence[int]
) -> tuple[list[str], dict[int, tuple[int, list[str]]]] | None:
    """The header of a CSV/TSV text (:func:`open_text`'s ``data``) and, for each row
    of ``rows`` (polars' row index, from 0, the header not counted), the line its record
    starts on and its fields (:func:`_table_records`); ``None`` where the csv module
    and polars do not read as many records (a quote one reads and the other does not:
    no line can be named then), or where the text cannot be read. An error path
    only: the text is read twice."""
    wanted = set(rows)
    header: list[str] | None = None
    found: dict[int, tuple[int, list[str]]] = {}
    count = -1
    try:
        for count, (line, fields) in enumerate(_table_records(data, separator), start=-1):
            if count < 0:
                header = fields
            elif count in wanted:
                found[count] = (line, fields)
        polars = pl.scan_csv(data, separator=separator, infer_schema=False, glob=False)
        rows_read = polars.select(pl.len()).collect().item()
    except (csv.Error, OSError, IrmError, pl.exceptions.PolarsError):
        return None
    if header is None or rows_read != count + 1 or len(found) != len(wanted):
        return None
    return header, found


def record_where(source: str, lines: tuple[int, list[str]] | None, row: int) -> str:
    """``source`` and where row ``row`` (polars' index, from 0) of a CSV/TSV file lies:
    the line its record starts on where :func:`record_lines` found it, else its record
    counted from 1 after the header (a line would be a guess).

    >>> record_where("log.csv", (5, ["q1", "d1"]), 2), record_where("log.csv", None, 2)
    ('log.csv, line 5', 'log.csv, record 3 (counted from 1 after the header)')
    """
    if lines is None:
        return f"{source}, record {row + 1} (counted from 1 after the header)"
    return f"{source}, line {lines[0]}"


def log_lines(sources: Sequence[str | os.PathLike[str]]) -> LogLines:
    """Where a log's rows lie (:class:`LogLines`) where they are one CSV/TSV file's, in
    order (the header is line 1; a record may span several lines), or one JSON lines
    file's; the row index of one Parquet file's rows; no line for anything else
    (several files, a glob, a folder, a URL, standard input)."""
    text = os.fspath(sources[0]) if len(sources) == 1 else ""
    if not text or is_glob(text) or "://" in text or Path(text).is_dir():
        return LogLines()
    fmt = detect_format(text, _LOG)
    if fmt == "jsonl":
        return LogLines(json=text)
    if fmt == "parquet":
        return LogLines(rows=True)
    if fmt in ("csv", "tsv"):
        return LogLines(table=text, separator="," if fmt == "csv" else "\t")
    return LogLines()


def _text_fits(column: str, *, flag: bool) -> pl.Expr:
    """Whether each value of the text ``column`` reads as a click (``flag``: true/false
    or 1/0, any case, spaces around) or as a number; read beside ``is_not_null()``
    (a null value is no bad value here: :func:`refuse_log_text` refuses an empty click
    apart)."""
    value = pl.col(column).str.strip_chars()
    if flag:
        return value.str.to_lowercase().is_in(_FLAGS)
    return value.cast(pl.Float64, strict=False).is_not_null()


def refuse_log_text(
    log: pl.LazyFrame,
    source: str,
    lines: LogLines,
    *,
    numbers: Sequence[str] = (),
    flags: Sequence[str] = (),
) -> None:
    """Columns of an impression log read as text that should hold numbers (a
    position, a dwell: ``numbers``) or clicks (``flags``: true/false or 1/0): the
    first value that is none, named with ``source`` and, where ``lines`` gives one
    (:func:`log_lines`), its line, as the ``irm`` commands that read logs name it
    (the metrics would refuse the column's type, naming neither the file nor the line).

    Examples
    --------
    >>> log = pl.LazyFrame({"clicked": ["1", "0", "yes"]})
    >>> try:
    ...     refuse_log_text(log, "log.parquet", LogLines(rows=True), flags=["clicked"])
    ... except InvalidValueError as error:
    ...     print(error)  # doctest: +ELLIPSIS
    log.parquet, row 2 (counted from 0): column 'clicked' holds 'yes', not a click, ...
    """
    try:
        schema = log.collect_schema()
    except pl.exceptions.PolarsError:
        return  # columns that cannot be read: named where the log is read
    kinds = [(c, False) for c in numbers] + [(c, True) for c in flags]
    for column, flag in dict(kinds).items():
        dtype = schema.get(column)
        if dtype == pl.String:
            ok = _text_fits(column, flag=flag)
        elif flag and dtype is not None and dtype.is_numeric():
            # clicks as numbers (a Parquet file's, a CSV's): 0 or 1, as the text's (a
            # float column of 0.0/1.0 only is refused by its type, where it is read)
            ok = (pl.col(column) == 0) | (pl.col(column) == 1)
        elif flag and dtype == pl.Boolean:
            ok = pl.lit(value=True)
        else:
            continue
        bad = pl.col(column).is_not_null() & ok.not_()
        if flag:  # every impression is clicked or not (converted or not): no empty one
            bad = bad | pl.col(column).is_null()
        found = log.select(pl.col(column)).with_row_index("row").filter(bad).head(1).collect()
        if not found.height:
            continue
        row, text = found.row(0)
        where = lines.where(source, row)
        expected = "a click, true/false or 1/0" if flag else "a number"
        shown = excerpt(text) if isinstance(text, str) else "no value" if text is None else text
        raise InvalidValueError(
            f"{where}: column {column!r} holds {shown}, not {expected}; fix or "
            f"drop the {lines.unit}"
        )


def scan_logs(sources: Sequence[str | os.PathLike[str]]) -> pl.LazyFrame:
    """Several files of one impression log (one per day, as a shell's glob names them),
    each read by :func:`scan_log`, as one log.

    Every file must have the same columns, with the same types where a type is not a
    number's (a file's integer counts meet another's fractional ones as floats): a
    column one file lacks would be null in its rows, and a user id that is text in one
    file and an integer in another would count ``'u0003'`` and ``3`` as two users, both
    refused naming the two files, the column and the fix.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     one, two = pathlib.Path(tmp) / "day1.csv", pathlib.Path(tmp) / "day2.csv"
    ...     _ = one.write_text("user_id,clicked\\nu1,true\\n")
    ...     _ = two.write_text("user_id,clicked\\n7,false\\n")
    ...     try:
    ...         scan_logs([one, two])
    ...     except FileFormatError as error:
    ...         print(str(error).replace(tmp + "/", "").split(";")[0])
    day2.csv: column 'user_id' is Int64, but day1.csv has it as String
    """
    frames = [(os.fspath(s), scan_log(s)) for s in sources]
    what = _LOG.split(":")[0]

    def schema_of(source: str, frame: pl.LazyFrame) -> pl.Schema:
        # a JSON lines file's columns are read here: a damaged line named, not polars'
        # text (which names neither the file nor the line)
        try:
            return frame.collect_schema()
        except pl.exceptions.PolarsError:
            damaged = damaged_json_line(source, _LOG)
            raise damaged or FileFormatError(
                f"{display_name(source)}: its columns cannot be read; expected {_LOG}"
            ) from None

    if len(frames) == 1:
        return frames[0][1]
    first = (display_name(frames[0][0]), schema_of(*frames[0]))
    for source, frame in frames[1:]:
        other = (display_name(source), schema_of(source, frame))
        # a column that is text in one file only: its first value that is not of the
        # other's type, with its file and line (a bad click, not a file written apart)
        for (_, schema), (at, text), (holder, kind) in (
            (other, (source, frame), first),
            (first, frames[0], other),
        ):
            for column, dtype in schema.items():
                if dtype == pl.String and kind.get(column) not in (None, pl.String):
                    where = (display_name(at), log_lines([at]))
                    _refuse_other_value(text, where, column, kind[column], holder)
        # numbers of two widths meet as floats, as in one file holding both
        _refuse_other_columns(
            first, other, what, widen=True, fix=": add it, or read the files apart"
        )
    return pl.concat([frame for _, frame in frames], how="diagonal_relaxed")


def _refuse_other_value(
    frame: pl.LazyFrame,
    source: tuple[str, LogLines],
    column: str,
    dtype: pl.DataType,
    holder: str,
) -> None:
    """The first value of a log file's text ``column`` that is not of ``dtype`` (the
    column's type in the file ``holder``: a number, or a Boolean's true/false or 1/0),
    where others are (a bad value among clicks), refused with the file and, where it
    has one, the line (``source``: its name and :class:`LogLines`); nothing where every
    value is one, or none is (ids that are text in one file: the two files' types are
    compared as such).

    >>> log = pl.LazyFrame({"clicked": ["1", "yes"]})
    >>> _refuse_other_value(log, ("b.parquet", LogLines(rows=True)), "clicked", pl.Int64(), "a")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.FileFormatError: b.parquet, row 1 (counted from 0): column ...
    """
    if dtype != pl.Boolean and not dtype.is_numeric():
        return
    fits = _text_fits(column, flag=dtype == pl.Boolean)
    bad = pl.col(column).is_not_null() & fits.not_()
    rows = frame.select(column).with_row_index("row")
    found = rows.filter(bad).head(1).collect()
    if not found.height or not rows.filter(fits).head(1).collect().height:
        return
    row, text = found.row(0)
    where = source[1].where(source[0], row)
    raise FileFormatError(
        f"{where}: column {column!r} holds {excerpt(text)}, where {holder} holds {dtype} "
        "values; fix or drop the line"
    )


def ragged_line(
    source: str | os.PathLike[str], what: str = _RUN, *, fmt: str | None = None
) -> tuple[int, int, int] | None:
    """The first line of a CSV or TSV file with more or fewer fields than its header
    (a blank line has none): its number (from 1, the header's line included), its
    fields and the header's; ``None`` where there is none, or the source is no local
    CSV/TSV file (a glob, a URL). ``fmt`` (``"csv"`` or ``"tsv"``) is the file's
    format where it is known, else it is detected.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from polars_irmetrics.io.files import ragged_line
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "log.csv"
    ...     _ = path.write_text('a,b\\n1,"x,y"\\n2,3,4\\n')
    ...     _ = (pathlib.Path(tmp) / "short.csv").write_text("a,b,c\\n1,2,3\\n4,5\\n")
    ...     ragged_line(str(path)), ragged_line(str(pathlib.Path(tmp) / "short.csv"))
    ((3, 3, 2), (3, 2, 3))
    """
    text = os.fspath(source)
    if is_glob(text) or "://" in text:
        return None
    try:
        fmt = fmt or detect_format(text, what)
        data = open_text(text, what).data
    except (IrmError, OSError):
        return None
    if fmt not in ("csv", "tsv"):
        return None
    with text_lines(data, newline="") as handle:
        reader = csv.reader(handle, delimiter="," if fmt == "csv" else "\t")
        header = next(reader, None)
        if header is None:
            return None
        for row in reader:
            if len(row) != len(header):
                return reader.line_num, len(row), len(header)
    return None


def damaged_json_line(source: str, what: str = _RUN) -> FileFormatError | None:
    """The first line of a local JSON lines file that is not a JSON object (a line cut
    short, a missing comma), as an error naming the file and the line, where polars'
    own text names neither; ``None`` where every line is one, or the source is no local
    JSON lines file (a glob, a URL, another format). An error path only: the file is
    read again.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from polars_irmetrics.io.files import damaged_json_line
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.jsonl"
    ...     _ = path.write_text('{"query_id": "q1"}\\n\\n{"query_id":\\n')
    ...     print(str(damaged_json_line(str(path))).replace(str(path), "run.jsonl"))
    run.jsonl, line 3: not a JSON object: '{"query_id":'; fix or drop the line
    """
    text = os.fspath(source)
    if is_glob(text) or "://" in text:
        return None
    try:
        if detect_format(text, what) != "jsonl":
            return None
        data = open_text(text, what).data
    except (IrmError, OSError):
        return None
    with text_lines(data) as handle:
        for number, line in enumerate(handle, start=1):
            stripped = line.strip()
            if not stripped:
                continue
            try:
                value = json.loads(stripped)
            except ValueError:
                value = None
            if not isinstance(value, dict):
                return FileFormatError(
                    f"{display_name(text)}, line {number}: not a JSON object: "
                    f"{excerpt(stripped)}; fix or drop the line"
                )
    return None


def ragged_error(source: str, what: str = _RUN, *, fmt: str | None = None) -> FileFormatError:
    """polars' error about a CSV/TSV line with too many fields (its text names neither
    the file nor the line), or the nulls it reads a line with too few as, as an error
    naming both, and the fix (:func:`ragged_line`)."""
    name = display_name(source)
    found = ragged_line(source, what, fmt=fmt)
    if found is None:
        return FileFormatError(
            f"{name}: not a table polars can read as CSV/TSV (a line with a different "
            "number of fields, or an unclosed quote); check the separator and the quoting"
        )
    line, fields, header = found
    if fields > header:
        return FileFormatError(
            f"{name}, line {line}: {fields} fields where the header has {header}; fix or "
            "drop the line (a separator inside a value needs quotes)"
        )
    if fields == 0:
        return FileFormatError(
            f"{name}, line {line}: a blank line where the header has {header} fields; drop "
            "the line"
        )
    return FileFormatError(
        f"{name}, line {line}: {fields} field{'s' if fields > 1 else ''} where the header "
        f"has {header}; fix or drop the line (a missing value is an empty field, e.g. a,,c)"
    )


def repeated_line(
    source: str | os.PathLike[str],
    query: str | None = None,
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
) -> tuple[int, int, str, str] | None:
    """Where one file repeats a document of a query (of ``query`` where one is given):
    ``(line, earlier line, doc_id, unit)``, for a duplicate the checks refused (their
    message names the query and the count, not the file nor the line). A TREC text
    file's lines count from 1 as the file's (:func:`repeated_pair`); a CSV/TSV file's
    too, its header line 1, each record named by the line it starts on (a quoted field
    may hold line breaks: :func:`record_lines`), or, where the csv module and polars
    read its records apart, by its record, counted from 1 after the header (``unit``
    ``'record'``); a JSON lines file's as :class:`LogLines` counts them; a
    Parquet file's rows from 0 (``unit`` ``'row'``, else ``'line'``); ``query_id`` and
    ``doc_id`` name a table's columns. None for a glob, a folder, standard input or a
    URL, or where no line repeats one. An error path only.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("q1 0 d1 1\\nq1 0 d2 0\\nq1 0 d1 2\\n")
    ...     table = pathlib.Path(tmp) / "qrels.csv"
    ...     _ = table.write_text("query_id,doc_id,relevance\\nq1,d1,1\\nq1,d1,0\\n")
    ...     repeated_line(path, "q1"), repeated_line(table, "q1")
    ((3, 1, 'd1', 'line'), (3, 2, 'd1', 'line'))
    """
    text = os.fspath(source)
    if raw_bytes(text) is None and (is_glob(text) or "://" in text or not Path(text).is_file()):
        return None  # standard input or a pipe: its bytes, kept when it was read
    try:
        fmt = detect_format(text)
        if fmt == "trec":
            found = repeated_pair(text, query)
            return None if found is None else (*found, "line")
        return _repeated_row(text, fmt, query, query_id, doc_id)
    except (IrmError, OSError, pl.exceptions.PolarsError):
        return None


def _line_table(source: str, fmt: str) -> tuple[pl.LazyFrame, str | bytes, str]:
    """One table file as the line-naming error paths read it (a CSV/TSV file's fields
    as text, as written), with the text polars reads (its path, or its bytes) and the
    CSV/TSV separator (``""`` for Parquet and JSON lines)."""
    if fmt == "parquet":
        raw = raw_bytes(source)  # standard input or a pipe: the bytes kept when read
        return pl.scan_parquet(source if raw is None else io.BytesIO(raw)), source, ""
    data = open_text(source, _RUN).data
    if fmt == "jsonl":
        return pl.scan_ndjson(literal_path(data), infer_schema_length=None), data, ""
    separator = "," if fmt == "csv" else "\t"
    table = pl.scan_csv(data, separator=separator, infer_schema=False, glob=False)
    return table, data, separator


def _repeated_row(
    source: str, fmt: str, query: str | None, query_id: str, doc_id: str
) -> tuple[int, int, str, str] | None:
    """:func:`repeated_line` of one table file (CSV, TSV, JSON lines, Parquet)."""
    table, data, separator = _line_table(source, fmt)
    ids = [pl.col(c).cast(pl.String).alias(a) for c, a in ((query_id, "q"), (doc_id, "d"))]
    found = first_repeat(table.select(ids).with_row_index("n"), query)
    if found is None:
        return None
    row, earlier, doc = found
    if fmt == "parquet":
        return row, earlier, doc, "row"
    if fmt == "jsonl":
        lines = LogLines(json=source)
        line, before = lines.line(row), lines.line(earlier)
        return None if line is None or before is None else (line, before, doc, "line")
    # a quoted field may hold line breaks: the lines the two records start on, where
    # the csv module reads the ids polars read there (else the records, counted from 1)
    located = record_lines(data, separator, [earlier, row])
    if located is not None and query_id in located[0] and doc_id in located[0]:
        header, records = located
        at = (header.index(query_id), header.index(doc_id))
        read = [
            (fields[at[0]], fields[at[1]])
            for fields in (records[earlier][1], records[row][1])
            if len(fields) == len(header)
        ]
        if (
            len(read) == 2
            and read[0] == read[1]
            and read[0][1] == doc
            and query in (None, read[0][0])
        ):
            return records[row][0], records[earlier][0], doc, "line"
    return row + 1, earlier + 1, doc, "record"


#: What :func:`flagged_line` looks for in a column: its value read as text.
Flag = Literal["null", "nan", "below", "label"]


def _flagged(value: pl.Expr, flag: Flag) -> pl.Expr:
    """Whether ``value`` (a column as text) is empty, NaN, a number below 1, or a
    relevance label the checks refuse (NaN, infinite, of magnitude 2**32 or more or
    below 2**-30 other than 0, or between -1 and 0: ground.validate's ``q_bad_rel``)."""
    if flag == "null":
        return value.is_null()
    number = value.str.strip_chars().cast(pl.Float64, strict=False)
    if flag == "nan":
        return number.is_nan()
    if flag == "below":
        return number < 1
    size = number.abs()
    return (
        ~number.is_finite()
        | (size >= 2.0**32)
        | ((size < 2.0**-30) & (number != 0))
        | ((number > -1) & (number < 0))
    )


def flagged_line(
    source: str | os.PathLike[str],
    column: str,
    flag: Flag,
    query: str | None = None,
    *,
    query_id: str = "query_id",
    trec_field: int | None = None,
) -> tuple[int, str] | None:
    """Where one file holds the first value of ``column`` that the checks refused
    (``flag``: ``'null'``, ``'nan'``, ``'below'``, a number below 1, or ``'label'``, a
    relevance label out of range: :func:`_flagged`), in ``query``
    where one is given: ``(line, unit)``, counted as :func:`repeated_line` counts (a
    CSV/TSV file's physical line, its header line 1, or its record counted from 1
    after the header, ``unit`` ``'record'``; a JSON lines file's line; a Parquet
    file's row from 0, ``unit`` ``'row'``). A TREC text file's line where
    ``trec_field`` (the field, from 0, that holds the column) is given (standard
    input's too: its bytes, kept when it was read). None for a glob, a folder or a URL,
    or where no line has one. An error path only: the file is read again.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table = pathlib.Path(tmp) / "run.csv"
    ...     _ = table.write_text('query_id,doc_id,score\\nq1,d1,1\\nq2,,nan\\nq2,d3,NaN\\n')
    ...     trec = pathlib.Path(tmp) / "run.txt"
    ...     _ = trec.write_text("q1 Q0 d1 1 2.5 r\\nq1 Q0 d2 2 nan r\\n")
    ...     (flagged_line(table, "doc_id", "null", "q2"), flagged_line(table, "score", "nan"),
    ...      flagged_line(trec, "score", "nan", "q1", trec_field=4))
    ((3, 'line'), (3, 'line'), (2, 'line'))
    """
    text = os.fspath(source)
    if raw_bytes(text) is None and (is_glob(text) or "://" in text or not Path(text).is_file()):
        return None  # standard input or a pipe: its bytes, kept when it was read
    try:
        fmt = detect_format(text)
        if fmt == "trec":
            return None if trec_field is None else _flagged_trec(text, trec_field, flag, query)
        return _flagged_row(text, fmt, column, flag, query, query_id)
    except (IrmError, OSError, pl.exceptions.PolarsError):
        return None


def _flagged_trec(
    source: str, field: int, flag: Flag, query: str | None
) -> tuple[int, str] | None:
    """:func:`flagged_line` of a TREC text file (whitespace-separated fields): the
    query's values of the field gathered :data:`_TREC_BLOCK` lines at a time and
    tested by :func:`_flagged` at once (one polars call per block, not per line)."""
    numbers: list[int] = []
    values: list[str] = []
    with text_lines(open_text(source, _RUN).data) as lines:
        for number, line in enumerate(lines, start=1):
            fields = line.split()
            if len(fields) > field and query in (None, fields[0]):
                numbers.append(number)
                values.append(fields[field])
            if len(values) == _TREC_BLOCK:
                found = _first_flagged(numbers, values, flag)
                if found is not None:
                    return found, "line"
                numbers, values = [], []
    found = _first_flagged(numbers, values, flag)
    return None if found is None else (found, "line")


#: How many lines of a TREC file :func:`_flagged_trec` tests at once.
_TREC_BLOCK = 1 << 16


def _first_flagged(numbers: list[int], values: list[str], flag: Flag) -> int | None:
    """The first of ``numbers`` whose value (of ``values``) :func:`_flagged` flags."""
    block = pl.DataFrame({"n": numbers, "v": values}, schema={"n": pl.Int64, "v": pl.String})
    hits = block.filter(_flagged(pl.col("v"), flag))["n"]
    return int(hits[0]) if len(hits) else None


def _flagged_row(
    source: str, fmt: str, column: str, flag: Flag, query: str | None, query_id: str
) -> tuple[int, str] | None:
    """:func:`flagged_line` of one table file (CSV, TSV, JSON lines, Parquet)."""
    table, data, separator = _line_table(source, fmt)
    value = pl.col(column).cast(pl.String)
    hit = _flagged(value, flag)
    if query is not None:
        hit = hit & (pl.col(query_id).cast(pl.String) == query)
    found = table.with_row_index("n").filter(hit).select("n", value).head(1).collect()
    if not found.height:
        return None
    row, shown = found.row(0)
    if fmt == "parquet":
        return row, "row"
    if fmt == "jsonl":
        line = LogLines(json=source).line(row)
        return None if line is None else (line, "line")
    # a quoted field may hold line breaks: the line the record starts on, where the
    # csv module reads there the value polars read (else the record, counted from 1)
    located = record_lines(data, separator, [row])
    if located is not None and column in located[0]:
        header, records = located
        fields = records[row][1]
        if len(fields) == len(header) and (fields[header.index(column)] or None) == shown:
            return records[row][0], "line"
    return row + 1, "record"


def located_error(
    source: str, what: str | None = None, *, fmt: str | None = None
) -> FileFormatError | None:
    """The error naming the file and the line of a local text file that polars refused
    or misread, where its own message names neither: the first line that is not UTF-8
    or, in a CSV/TSV file, the first with more or fewer fields than its header;
    ``None`` where there is none (an error path only: the file is read again); in
    Parquet (a file, a glob or a folder), the first file with a column that cannot be
    decoded (polars names none: ``parquet: File out of specification: ...``). The one
    look-up of the readers and the ``irm`` command (``what`` ends the UTF-8 and Parquet
    messages where given)."""
    damaged = _damaged_parquet(source, what)
    if damaged is not None:
        return damaged
    found = undecodable_error(source, what)
    if found is not None:
        return found
    if ragged_line(source, what or _RUN, fmt=fmt) is None:
        return None
    return ragged_error(source, what or _RUN, fmt=fmt)


def _damaged_parquet(source: str, what: str | None) -> FileFormatError | None:
    """The first local Parquet file of ``source`` (in name order) with a column that
    cannot be decoded, each row group read a column at a time (an error path only),
    as an error naming the file and the column; ``None`` where every file reads, or
    ``source`` is no local Parquet source (standard input, a URL, text)."""
    import pyarrow as pa  # a dependency; imported only on this error path
    import pyarrow.parquet as pq

    if source == STDIN or "://" in source:
        return None
    for path in source_files(source):
        try:
            with open(path, "rb") as handle:
                if handle.read(4) != b"PAR1":
                    continue
                handle.seek(0)
                parquet = pq.ParquetFile(handle)
                names = parquet.schema_arrow.names
                for group in range(parquet.num_row_groups):
                    for column in names:
                        try:
                            parquet.read_row_group(group, columns=[column])
                        except (pa.ArrowException, OSError, ValueError):
                            tail = "" if what is None else f"; expected {what}"
                            return FileFormatError(
                                f"{path}: a damaged Parquet file (column {column!r} cannot "
                                f"be decoded); write it again{tail}"
                            )
        except (pa.ArrowException, OSError, ValueError):
            continue  # no such file, a footer that cannot be read: told apart before
    return None
