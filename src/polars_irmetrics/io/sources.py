"""The bytes behind a run or judgments source: files, compressed files, standard input.

polars reads plain, gzip and zstd files itself (from their content, whatever their
name). This module adds what it does not: bzip2 and xz files (decompressed in memory
with the standard library), ``-`` for standard input and paths of pipes (read once per
process), a clear
:class:`~polars_irmetrics.errors.MissingFileError` for a path that does not exist, and a
:class:`~polars_irmetrics.errors.FileFormatError` for binary data, naming the file and
what was expected, before polars would say ``invalid utf8`` without a name. It also
tells whether the text starts with a UTF-8 byte-order mark, which readers strip.
"""

from __future__ import annotations

import bz2
import functools
import glob
import gzip
import io
import lzma
import os
import sys
import typing
import zlib
from dataclasses import dataclass
from pathlib import Path

from polars_irmetrics.errors import FileFormatError, MissingFileError

__all__ = [
    "STDIN",
    "Text",
    "check_reachable",
    "display_name",
    "excerpt",
    "first_undecodable_line",
    "is_glob",
    "is_local_path",
    "literal_path",
    "open_text",
    "raw_bytes",
    "stream_bytes",
    "text_lines",
    "undecodable_error",
    "unreadable",
    "whole_text",
]

#: The name that stands for standard input.
STDIN = "-"
_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"
_BZIP2 = b"BZh"
_XZ = b"\xfd7zXZ\x00"
_BOM = b"\xef\xbb\xbf"
#: How much of the text is looked at for binary data.
_HEAD = 1 << 16
#: How much decompressed text a check of a whole gzip or zstd stream holds at once.
_CHUNK = 1 << 20
#: A compressed stream that cannot be read to its end (zlib's error is no OSError).
_STREAM_ERRORS = (OSError, EOFError, ValueError, zlib.error)


@dataclass(frozen=True)
class Text:
    """A source ready for polars: ``data`` is the path itself, or the bytes to read."""

    name: str
    data: str | bytes
    head: bytes

    @property
    def bom(self) -> bool:
        """Whether the text starts with a UTF-8 byte-order mark."""
        return self.head.startswith(_BOM)


#: How much of a line or field an error message shows.
EXCERPT = 80


def excerpt(value: str | bytes, limit: int = EXCERPT) -> str:
    """``repr(value)``, cut to ``limit`` characters (or bytes) with the full length said:
    an error names the line at fault without echoing a 30 MB line whole.

    Examples
    --------
    >>> from polars_irmetrics.io.sources import excerpt
    >>> excerpt("q1 Q0 d1 1 x")
    "'q1 Q0 d1 1 x'"
    >>> excerpt("x" * 1000, limit=5)
    "'xxxxx'... (1000 characters)"
    """
    if len(value) <= limit:
        return repr(value)
    unit = "bytes" if isinstance(value, bytes) else "characters"
    return f"{value[:limit]!r}... ({len(value)} {unit})"


def display_name(source: str) -> str:
    """How messages name a source: ``<stdin>`` for ``-``, else the path."""
    return "<stdin>" if source == STDIN else source


@functools.cache
def stream_bytes(source: str) -> bytes:
    """All of standard input (``-``), or of a pipe or device named by its path (a
    shell's ``<(zcat run.gz)``), read once per process: neither can be read twice."""
    if source == STDIN:
        return sys.stdin.buffer.read()
    with open(source, "rb") as handle:
        return handle.read()


def raw_bytes(source: str) -> bytes | None:
    """The whole input of standard input or of a pipe, else None (polars reads a
    regular file by its path)."""
    if source == STDIN:
        return stream_bytes(source)
    path = Path(source)
    if path.exists() and not path.is_file() and not path.is_dir():
        return stream_bytes(source)
    return None


def unreadable(name: str, what: str | None, kind: str = "file") -> FileFormatError:
    """The error for a file or folder this process may not read (permission denied).

    ``kind`` says what cannot be read: ``"file"``, ``"folder"`` (its files cannot be
    listed) or ``"path"`` (a folder on the path may not be searched, so the path cannot
    be looked at); ``what`` (what it should hold) is said where given.

    Examples
    --------
    >>> from polars_irmetrics.io.sources import unreadable
    >>> str(unreadable("runs", "a run", "folder")).split(": make")[0]
    'runs: permission denied, the folder cannot be read; expected a run'
    """
    expected = "" if what is None else f"; expected {what}"
    if kind == "folder":
        return FileFormatError(
            f"{name}: permission denied, the folder cannot be read{expected}: make it "
            "readable by this user (e.g. chmod u+rx) or read a copy that is"
        )
    if kind == "path":
        return FileFormatError(
            f"{name}: permission denied, it cannot be read (a folder on its path may not "
            f"be searched){expected}: make that folder searchable by this user (e.g. "
            "chmod u+x) or read a copy that is"
        )
    return FileFormatError(
        f"{name}: permission denied, the file cannot be read{expected}: make it "
        "readable by this user (e.g. chmod u+r) or read a copy that is"
    )


def check_reachable(source: str, what: str) -> None:
    """Refuse a local path that this process may not look at (a folder on its path
    without search permission): Python's ``Path.exists()`` and ``is_file()`` raise
    ``PermissionError`` there. A missing path, standard input and URLs pass: their
    readers name them."""
    if source == STDIN or "://" in source:
        return
    try:
        os.stat(source)
    except PermissionError:
        raise unreadable(source, what, "path") from None
    except (OSError, ValueError):  # missing, or a name the system refuses: named later
        return


def _read_head(source: str, data: bytes | None, name: str, what: str) -> bytes:
    if data is not None:
        return data[:_HEAD]
    try:
        with open(source, "rb") as handle:
            return handle.read(_HEAD)
    except PermissionError:
        raise unreadable(name, what) from None


def _decompress_head(name: str, head: bytes, stream: io.BufferedIOBase | None) -> bytes:
    """The first bytes of the text inside a gzip or zstd ``head``."""
    try:
        if head.startswith(_GZIP):
            with gzip.GzipFile(fileobj=stream or io.BytesIO(head)) as unzipped:
                return unzipped.read(_HEAD)
        import pyarrow as pa  # a dependency; imported only for zstd files

        reader = pa.BufferReader(head) if stream is None else pa.PythonFile(stream, mode="r")
        with pa.CompressedInputStream(reader, "zstd") as unzipped:
            return bytes(unzipped.read(_HEAD))
    except _STREAM_ERRORS as error:  # pyarrow's ArrowInvalid is a ValueError
        raise FileFormatError(f"{name}: not a readable compressed file ({error})") from error


def _check_stream(name: str, source: str, data: bytes | None) -> None:
    """Refuse a gzip or zstd stream that cannot be read to its end (damaged past its
    head, or truncated), naming the file: polars would fail as it reads the text, with
    an ``OSError`` that names no file (``unexpected end of file``). A file is read
    through once per process while its size and time are unchanged."""
    if data is None:
        stat = os.stat(source)
        failure = _file_failure(source, stat.st_size, stat.st_mtime_ns)
    else:
        failure = _read_through(io.BytesIO(data))
    if failure is not None:
        raise FileFormatError(f"{name}: not a readable compressed file ({failure})")


@functools.lru_cache(maxsize=64)
def _file_failure(path: str, size: int, mtime_ns: int) -> str | None:
    """:func:`_read_through` of a file, kept for its size and modification time."""
    with open(path, "rb") as handle:
        return _read_through(handle)


def _read_through(handle: io.BufferedIOBase) -> str | None:
    """Decompress a gzip or zstd stream to its end, ``_CHUNK`` bytes at a time: why it
    cannot be read (the error's text), or ``None``."""
    zipped = handle.read(len(_GZIP)) == _GZIP
    handle.seek(0)
    try:
        if zipped:
            with gzip.GzipFile(fileobj=handle) as unzipped:
                while unzipped.read(_CHUNK):
                    pass
            return None
        import pyarrow as pa  # a dependency; imported only for zstd files

        with pa.CompressedInputStream(pa.PythonFile(handle, mode="r"), "zstd") as unzipped:
            while unzipped.read(_CHUNK):
                pass
    except _STREAM_ERRORS as error:
        return str(error) or type(error).__name__
    return None


def open_text(source: str, what: str, line_error: type[FileFormatError] = FileFormatError) -> Text:
    """``source`` (a path or ``-``) as polars can read it, checked to be text.

    Parameters
    ----------
    source
        A file path, or ``-`` for standard input.
    what
        What the file should hold, for messages: ``"a TREC run (query_id Q0 doc_id rank
        score run_id)"``.
    line_error
        The class raised for a line that is not UTF-8 (a TREC reader's own).

    Raises
    ------
    MissingFileError
        The path does not exist.
    FileFormatError
        The (decompressed) text has a NUL byte in its first 64 KiB (binary data), or a
        compressed stream is corrupt or truncated anywhere (a gzip or zstd file is read
        through once, as polars would fail on it without naming it); ``line_error`` for
        a line there that is not UTF-8.

    Examples
    --------
    >>> import bz2, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.bz2"
    ...     _ = path.write_bytes(bz2.compress("\\ufeffq1 Q0 d1 1 2.0 r\\n".encode()))
    ...     text = open_text(str(path), "a TREC run")
    >>> text.data, text.bom
    (b'\\xef\\xbb\\xbfq1 Q0 d1 1 2.0 r\\n', True)
    >>> open_text("no/such/run.txt", "a TREC run")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MissingFileError: no/such/run.txt: no such file; expected a TREC run
    """
    text = _unchecked_text(source, what)
    if "://" in source:  # an object-store URL: polars reads it, nothing to look at here
        return text
    _check_text(text.name, text.head, what, line_error)
    _check_line_endings(text.name, text.head, what, line_error)
    return text


def _unchecked_text(source: str, what: str) -> Text:
    """:func:`open_text` less its checks of the text (binary data, UTF-8, line endings)."""
    name = display_name(source)
    if "://" in source:
        return Text(name=name, data=source, head=b"")
    check_reachable(source, what)
    data = raw_bytes(source)
    if data is None and not Path(source).is_file():
        if Path(source).exists():
            raise FileFormatError(f"{name}: not a file; expected {what}")
        raise MissingFileError(f"{name}: no such file; expected {what}")
    head = _read_head(source, data, name, what)
    try:
        if head.startswith(_BZIP2) or head.startswith(_XZ):
            whole = data if data is not None else Path(source).read_bytes()
            unpack = bz2.decompress if head.startswith(_BZIP2) else lzma.decompress
            data = unpack(whole)
            head = data[:_HEAD]
    except (*_STREAM_ERRORS, lzma.LZMAError) as error:
        raise FileFormatError(f"{name}: not a readable compressed file ({error})") from error
    if head.startswith((_GZIP, _ZSTD)):
        if data is None:
            with open(source, "rb") as handle:
                head = _decompress_head(name, head, handle)
        else:
            head = _decompress_head(name, head, None)
        _check_stream(name, source, data)
    return Text(name=name, data=source if data is None else data, head=head)


def _check_text(name: str, head: bytes, what: str, error: type[FileFormatError]) -> None:
    binary = head.find(b"\x00")
    if binary >= 0:
        raise FileFormatError(
            f"{name}: binary data, not text (a NUL byte at byte {binary + 1}); expected "
            f"{what}, as plain UTF-8 text or compressed with gzip, bzip2, xz or zstd"
        )
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as bad:
        if len(head) == _HEAD and bad.start >= len(head) - 3:
            return  # a character cut by the end of the head
        number = head.count(b"\n", 0, bad.start) + 1
        start = head.rfind(b"\n", 0, bad.start) + 1
        end = head.find(b"\n", bad.start)
        raw = head[start : end if end >= 0 else len(head)].rstrip(b"\r")
        raise error(
            f"{name}, line {number}: not valid UTF-8: {excerpt(raw)}{_REENCODE}; expected {what}"
        ) from None


def _check_line_endings(name: str, head: bytes, what: str, error: type[FileFormatError]) -> None:
    """Refuse text whose lines end in a lone carriage return (old Mac line endings).

    polars splits lines on ``\\n`` only, and ``\\r`` is whitespace within a line: such a
    file would read as one long line, its first record kept and the rest dropped.
    Looked for in the first 64 KiB only: clean files pay one search of the head.
    """
    if b"\n" in head or b"\r" not in head.rstrip(b" \t\r\x0b\x0c"):
        return
    first = head[: head.find(b"\r")].decode("utf-8", errors="replace").removeprefix("\ufeff")
    raise error(
        f"{name}, line 1: lines end in carriage returns (\\r) without line feeds (\\n), so "
        f"the whole file would read as one line, starting {excerpt(first)}; expected "
        f"{what}: convert the line endings to \\n (e.g. tr '\\r' '\\n' < old > new)"
    )


def _decompressed(data: str | bytes) -> io.BufferedIOBase:
    """:func:`open_text`'s ``data`` as a binary stream of its text: a local path
    decompressed as it is read where it holds gzip or zstd (polars reads those itself,
    so ``data`` is the path), bytes as they are (gzip decompressed). The caller closes
    it."""
    if isinstance(data, bytes):
        return io.BytesIO(gzip.decompress(data) if data.startswith(_GZIP) else data)
    with open(data, "rb") as probe:
        magic = probe.read(4)
    if magic.startswith(_ZSTD):
        import pyarrow as pa  # a dependency; imported only for zstd files

        # a pyarrow stream reads as a binary file does (the typing says not)
        return typing.cast("io.BufferedIOBase", pa.CompressedInputStream(pa.OSFile(data), "zstd"))
    if magic.startswith(_GZIP):
        return gzip.GzipFile(data, "rb")
    return open(data, "rb")


def text_lines(data: str | bytes, newline: str | None = None) -> io.TextIOWrapper:
    """:func:`open_text`'s ``data`` as text to read line by line (UTF-8, a byte-order
    mark dropped, undecodable bytes replaced), decompressed (:func:`_decompressed`).
    For the error paths that name a line; the caller closes it. ``newline`` is
    :class:`io.TextIOWrapper`'s (``""`` for the csv module).

    >>> import gzip, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.csv.gz"
    ...     _ = path.write_bytes(gzip.compress("\\ufeffa,b\\n1,2\\n".encode()))
    ...     with text_lines(str(path)) as lines:
    ...         list(lines)
    ['a,b\\n', '1,2\\n']
    """
    stream = typing.cast("io.BufferedReader", _decompressed(data))
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline=newline)


def whole_text(data: str | bytes) -> bytes:
    """The whole text of :func:`open_text`'s ``data`` (a local path, or the bytes of
    standard input, a pipe or a bzip2/xz file, decompressed), gzip or zstd decompressed
    (:func:`_decompressed`): for the error paths that name a line, which read the file
    again.

    >>> import gzip
    >>> whole_text(gzip.compress(b"q1 Q0 d1 1 2.0 r\\n"))
    b'q1 Q0 d1 1 2.0 r\\n'
    """
    with _decompressed(data) as stream:
        return bytes(stream.read())


def first_undecodable_line(source: str) -> tuple[int, bytes] | None:
    """The first line of ``source``'s text that is not UTF-8 (an error path only):
    ``None`` where there is none, or ``source`` is no local text file (a URL, a glob,
    a missing or binary file)."""
    if "://" in source or is_glob(source):
        return None
    try:
        text = _unchecked_text(source, "text")
    except (FileFormatError, OSError):  # MissingFileError is an OSError
        return None
    if b"\x00" in text.head:  # binary data (Parquet): no lines
        return None
    for number, raw in enumerate(io.BytesIO(whole_text(text.data)), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return number, raw.rstrip(b"\r\n")
    return None


#: How a text file that is not UTF-8 is mended (trec_eval compares ids as bytes; here
#: ids are text, so every file is re-encoded alike for its ids to match).
_REENCODE = (
    " (text files are read as UTF-8: re-encode it, e.g. iconv -f latin1 -t utf-8, and the "
    "files whose ids it must match alike)"
)


def undecodable_error(
    source: str, what: str | None = None, error: type[FileFormatError] = FileFormatError
) -> FileFormatError | None:
    """The error naming the file and the first line of ``source`` that is not UTF-8
    (polars' own message names neither), ``None`` where there is none: the one text of
    this error for every reader and the ``irm`` command. ``what`` (what the file should
    hold) ends the message where given.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from polars_irmetrics.io.sources import undecodable_error
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.txt"
    ...     _ = path.write_bytes(b"q1 Q0 d1 1 2.0 r\\nq1 Q0 caf\\xe9 2 1.0 r\\n")
    ...     print(str(undecodable_error(str(path), "a run")).replace(tmp, "TMP"))
    ... # doctest: +NORMALIZE_WHITESPACE
    TMP/run.txt, line 2: not valid UTF-8: b'q1 Q0 caf\\xe9 2 1.0 r' (text files are read
    as UTF-8: re-encode it, e.g. iconv -f latin1 -t utf-8, and the files whose ids it
    must match alike); expected a run
    """
    found = first_undecodable_line(source)
    if found is None:
        return None
    number, raw = found
    tail = "" if what is None else f"; expected {what}"
    return error(
        f"{display_name(source)}, line {number}: not valid UTF-8: {excerpt(raw)}{_REENCODE}{tail}"
    )


def is_glob(source: str) -> bool:
    """Whether ``source`` is a pattern of local files (``runs/*.parquet``): it has ``*``,
    ``?`` or ``[`` and names no existing path itself (``runs/[2024].txt`` may be a file)."""
    if source == STDIN or "://" in source or not any(c in source for c in "*?["):
        return False
    return not Path(source).exists()


def is_local_path(source: str) -> bool:
    """Whether ``source`` names one local file (not a glob, a URL or standard input)."""
    return source != STDIN and "://" not in source and not is_glob(source)


def literal_path(data: str | bytes) -> str | bytes:
    """A file's path as a polars reader that expands every path as a pattern
    (``pl.scan_ndjson``, which has no ``glob=False``) reads that file alone: its ``*``,
    ``?`` and ``[`` escaped (``run[1].jsonl`` as ``run[[]1].jsonl``); bytes unchanged.

    Examples
    --------
    >>> from polars_irmetrics.io.sources import literal_path
    >>> literal_path("runs/run*.jsonl"), literal_path(b"{}")
    ('runs/run[*].jsonl', b'{}')
    """
    return glob.escape(data) if isinstance(data, str) else data
