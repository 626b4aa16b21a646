"""Every file the library and the ``irm`` command write: one dispatch, atomic writes.

:func:`write_table` picks the format from the file's suffix (``.parquet``, ``.csv``,
``.json``, ``.md``, ``.tex``, ``.html``, ``.txt``) unless ``format=`` names one (a
suffix that names no format is refused, never guessed), renders the frame and writes
it *atomically*: to a temporary file in the target folder, renamed into place with
:func:`os.replace`, so a reader (or a second writer) never sees half a file. A name
that ends in ``.gz``, ``.bz2`` or ``.xz`` after its format's suffix (``means.csv.gz``)
is written compressed so (:data:`COMPRESSIONS`), as the readers read it; another
compression suffix (``.zst``, ``.zip``...) is refused, never written as plain text.
:func:`write_atomic` is the same guarantee for any writer (TREC runs, fused runs,
reports, plots): the one writer of every file the library writes.
:func:`check_output` checks a target (its format, its folder) before anything is
computed or written, so a command with two outputs writes both or neither.
:func:`latex_escape` and :func:`markdown_cell` are the one escaping of text in every
LaTeX and Markdown output.

New formats plug in with :func:`register_format` (a name, a renderer from a frame to
bytes, the suffixes that name it); a caller with its own rendering of a format (the
comparison report's LaTeX with significance markers) passes ``renderers=``.
"""

from __future__ import annotations

import bz2
import contextlib
import functools
import gzip
import html
import io
import lzma
import math
import os
import re
import stat
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, cast

import polars as pl

from polars_irmetrics.errors import InvalidValueError, MissingFileError
from polars_irmetrics.ground.buckets import interrupted, removed_on_stop, spill_guard

__all__ = [
    "COMPRESSIONS",
    "STDOUT",
    "SUFFIXES_ACCEPTED",
    "Renderer",
    "check_output",
    "check_target",
    "compression_of",
    "format_of",
    "is_stream",
    "latex_escape",
    "markdown_cell",
    "register_format",
    "render_table",
    "resolve_format",
    "write_atomic",
    "write_stdout",
    "write_table",
    "write_text",
]

#: A format's renderer: the frame in, the file's bytes out.
Renderer = Callable[[pl.DataFrame], bytes]


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    if isinstance(value, list):
        return "; ".join(_cell(v) for v in value)
    return str(value)


def aligned(frame: pl.DataFrame) -> str:
    """An aligned text table: numbers right-aligned, floats with 4 decimals."""
    header = frame.columns
    rows = [[_cell(v) for v in row] for row in frame.iter_rows()]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out) + "\n"


def markdown_cell(text: str) -> str:
    r"""``text`` as the content of a Markdown table cell: a ``|`` (which would end the
    cell and shift every later value under the wrong column) and a backslash (which
    would escape it) are escaped, a line break becomes a space.

    Examples
    --------
    >>> from polars_irmetrics.io.output import markdown_cell
    >>> print(markdown_cell("bm25|rm3"), markdown_cell("a\\b"))
    bm25\|rm3 a\\b
    """
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", " ").replace("\n", " ")


def markdown(frame: pl.DataFrame) -> str:
    """A GitHub Markdown table, numbers right-aligned, floats with 4 decimals."""
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    out = ["| " + " | ".join(markdown_cell(c) for c in frame.columns) + " |"]
    out.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    for row in frame.iter_rows():
        out.append("| " + " | ".join(markdown_cell(_cell(v)) for v in row) + " |")
    return "\n".join(out) + "\n"


#: LaTeX's special characters in text mode, each as a command that prints it (the
#: ``{}`` ends a command name without eating the next space).
_LATEX_SPECIAL = {
    "\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "$": "\\$", "&": "\\&",
    "#": "\\#", "^": "\\textasciicircum{}", "_": "\\_", "~": "\\textasciitilde{}",
    "%": "\\%", "<": "\\textless{}", ">": "\\textgreater{}", "|": "\\textbar{}",
    "≤": "$\\leq$", "≥": "$\\geq$", "†": "$\\dagger$", "‡": "$\\ddagger$",
    "×": "$\\times$", "±": "$\\pm$", "−": "$-$", "–": "--", "—": "---",
}  # fmt: skip
#: Combining accents as LaTeX's accent commands (``Š`` is ``\v{S}``, ``á`` ``\'{a}``).
_LATEX_ACCENTS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=",
    "\u0306": "u", "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H",
    "\u030c": "v", "\u0327": "c", "\u0328": "k",
}  # fmt: skip


def latex_escape(text: str) -> str:
    r"""``text`` for LaTeX's text mode, in one pass (a character is never escaped
    twice): ``\ { } $ & # ^ _ ~ % < > |`` as the commands that print them, the
    symbols the reports use (``≤ † ‡ × ±``) in math mode, and accented Latin letters as
    accent commands, so that pdflatex compiles it with its default fonts. The one
    escaper of every LaTeX output (reports, ``irm ... -o x.tex``).

    Examples
    --------
    >>> from polars_irmetrics.io.output import latex_escape
    >>> print(latex_escape("run_1 \\ {a} <= 5% ~ Šidák"))
    run\_1 \textbackslash{} \{a\} \textless{}= 5\% \textasciitilde{} \v{S}id\'{a}k
    """
    out = []
    for char in text:
        if char in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[char])
            continue
        decomposed = unicodedata.normalize("NFD", char)
        base, marks = decomposed[0], decomposed[1:]
        if marks and base.isascii() and all(m in _LATEX_ACCENTS for m in marks):
            for mark in marks:
                base = f"\\{_LATEX_ACCENTS[mark]}{{{base}}}"
        else:
            base = char
        out.append(base)
    return "".join(out)


def latex(frame: pl.DataFrame) -> str:
    """A booktabs LaTeX tabular, numbers right-aligned, floats with 4 decimals."""
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    out = ["\\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}"]
    out.append("\\toprule")
    out.append(" & ".join(latex_escape(c) for c in frame.columns) + " \\\\")
    out.append("\\midrule")
    for row in frame.iter_rows():
        out.append(" & ".join(latex_escape(_cell(v)) for v in row) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(out) + "\n"


def _csv(frame: pl.DataFrame) -> bytes:
    nested = [n for n, d in frame.schema.items() if isinstance(d, pl.List)]
    flat = frame.with_columns(pl.col(n).list.join("; ") for n in nested) if nested else frame
    return flat.write_csv().encode()


def _json(frame: pl.DataFrame) -> bytes:
    buffer = io.StringIO()
    frame.write_json(buffer)
    return (buffer.getvalue() + "\n").encode()


def _parquet(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def html_page(frame: pl.DataFrame, title: str = "polars_irmetrics") -> str:
    """One self-contained HTML document holding ``frame`` as a table (numbers
    right-aligned with tabular figures, floats with 4 decimals, every text escaped).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.io.output import html_page
    >>> page = html_page(pl.DataFrame({"run": ["<b>"], "map": [0.25]}))
    >>> page.splitlines()[-4:-2]
    ['<tbody>', '<tr><td>&lt;b&gt;</td><td class="num">0.2500</td></tr>']
    """
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]

    def cell(tag: str, text: str, number: bool) -> str:
        return f'<{tag} class="num">{text}</{tag}>' if number else f"<{tag}>{text}</{tag}>"

    head = "".join(
        cell("th", html.escape(c), n) for c, n in zip(frame.columns, numeric, strict=True)
    )
    rows = [
        "<tr>"
        + "".join(cell("td", html.escape(_cell(v)), n) for v, n in zip(row, numeric, strict=True))
        + "</tr>"
        for row in frame.iter_rows()
    ]
    style = (
        "body { font-family: system-ui, sans-serif; margin: 2rem; } "
        "table { border-collapse: collapse; } "
        "th, td { padding: 0.25rem 0.75rem; border-bottom: 1px solid #ccc; text-align: left; } "
        ".num { text-align: right; font-variant-numeric: tabular-nums; }"
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            f'<head><meta charset="utf-8"><title>{html.escape(title)}</title>',
            f"<style>{style}</style></head>",
            "<body>",
            "<table>",
            f"<thead><tr>{head}</tr></thead>",
            "<tbody>",
            *rows,
            "</tbody></table>",
            "</body></html>",
            "",
        ]
    )


_RENDERERS: dict[str, Renderer] = {
    "table": lambda frame: aligned(frame).encode(),
    "html": lambda frame: html_page(frame).encode(),
    "csv": _csv,
    "json": _json,
    "markdown": lambda frame: markdown(frame).encode(),
    "latex": lambda frame: latex(frame).encode(),
    "parquet": _parquet,
}
_SUFFIXES: dict[str, str] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".tex": "latex",
    ".html": "html",
    ".htm": "html",
}
#: Suffixes of the text table, for the commands that write tables (``evaluate``,
#: ``compare``, ``ab``, ``metrics``) but not in :func:`format_of`: a ``.txt`` file of
#: ``irm trec-eval`` or ``irm fuse`` is trec_eval's lines or a TREC run.
_TABLE_SUFFIXES: dict[str, str] = {".txt": "table"}
#: Formats that are not text (never written to a terminal).
_BINARY: set[str] = {"parquet"}


def register_format(
    name: str, renderer: Renderer, suffixes: Sequence[str] = (), *, binary: bool = False
) -> None:
    """Add (or replace) an output format: ``renderer`` turns a frame into the file's
    bytes, ``suffixes`` (with the dot, e.g. ``".html"``) name it in a path."""
    _RENDERERS[name] = renderer
    for suffix in suffixes:
        _SUFFIXES[suffix.lower()] = name
    if binary:
        _BINARY.add(name)
    else:
        _BINARY.discard(name)


#: The compressions a written file's name asks for, by its last suffix: every writer
#: (:func:`write_atomic`) compresses a file so named, with the standard library, and
#: reads its format from the suffix before (``means.csv.gz`` is gzip-compressed CSV).
COMPRESSIONS: Mapping[str, str] = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}
#: Compression suffixes no writer compresses with: a file so named is refused.
_UNWRITTEN = (".zst", ".zstd", ".lz4", ".lzma", ".zip", ".7z", ".br", ".z", ".tgz")


def compression_of(path: str | os.PathLike[str]) -> str | None:
    """The compression ``path``'s name asks for (``"gzip"``, ``"bzip2"``, ``"xz"``),
    ``None`` for none; a compression suffix the writers do not write is refused.

    Examples
    --------
    >>> from polars_irmetrics.io.output import compression_of
    >>> compression_of("fused.run.GZ"), compression_of("means.csv")
    ('gzip', None)
    >>> compression_of("means.csv.zst")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: means.csv.zst: .zst files are not written; ...
    """
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix in _UNWRITTEN:
        raise InvalidValueError(
            f"{os.fspath(path)}: {suffix} files are not written; end the name in .gz, "
            f".bz2 or .xz to compress it (e.g. means.csv.gz), or drop {suffix}"
        )
    return COMPRESSIONS.get(suffix)


def _format_suffix(path: str | os.PathLike[str]) -> str:
    """The suffix that names ``path``'s format: the last, or the one before a
    compression suffix (``.csv`` of ``means.csv.gz``), lower case."""
    name = Path(os.fspath(path))
    if name.suffix.lower() in COMPRESSIONS:
        name = name.with_suffix("")
    return name.suffix.lower()


def format_of(path: str | os.PathLike[str]) -> str | None:
    """The format a path's suffix names (``None`` for a suffix no format claims); a
    compression suffix after it (:data:`COMPRESSIONS`) is looked past.

    Examples
    --------
    >>> from polars_irmetrics.io.output import format_of
    >>> format_of("results/ndcg.TEX"), format_of("out.parquet"), format_of("fused.run")
    ('latex', 'parquet', None)
    >>> format_of("means.csv.gz"), format_of("fused.run.bz2")
    ('csv', None)
    """
    return _SUFFIXES.get(_format_suffix(path))


def _known_suffixes() -> str:
    return ", ".join(sorted({*_SUFFIXES, *_TABLE_SUFFIXES}))


#: The suffixes :func:`write_table` (every ``irm ... -o FILE`` that writes a table)
#: accepts, each with the format it names.
SUFFIXES_ACCEPTED: Mapping[str, str] = {**_SUFFIXES, **_TABLE_SUFFIXES}


def resolve_format(
    path: str | os.PathLike[str] | None,
    format: str | None = None,
    *,
    default: str | None = None,
    flag: str = "format",
    renderers: Mapping[str, Renderer] | None = None,
) -> str:
    """The format to write: ``format`` when given, else the one ``path``'s suffix names
    (:data:`SUFFIXES_ACCEPTED`); ``default`` is standard output's (``path`` is
    ``None``). An unknown name, or a file whose suffix names no format, is refused
    naming the choices: a file is never written in a format its name does not say.

    Examples
    --------
    >>> from polars_irmetrics.io.output import resolve_format
    >>> resolve_format("means.txt"), resolve_format(None, default="table")
    ('table', 'table')
    >>> resolve_format("means.out", flag="--format")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: means.out: the suffix names no output format; ...
    """
    if format is not None:
        known = [*_RENDERERS, *(n for n in renderers or {} if n not in _RENDERERS)]
        if format not in known:
            raise InvalidValueError(
                f"{flag} {format!r} is not a known output format; choose one of {', '.join(known)}"
            )
        return format
    if path is None or _is_stdout(path):
        if default is not None:
            return default
        raise InvalidValueError(f"name the output format ({flag} csv) or a file to write")
    compression_of(path)  # a compression no writer writes: named as such
    found = SUFFIXES_ACCEPTED.get(_format_suffix(path))
    if found is not None:
        return found
    packed = Path(os.fspath(path)).suffix
    if packed.lower() in COMPRESSIONS and not _format_suffix(path):
        raise InvalidValueError(
            f"{path}: {packed} names a compression, not an output format; put the format's "
            f"suffix before it (e.g. results.csv{packed}), or name the format ({flag} csv)"
        )
    raise InvalidValueError(
        f"{path}: the suffix names no output format; use one of {_known_suffixes()}, "
        f"or name the format ({flag} csv)"
    )


def check_output(
    path: str | os.PathLike[str] | None,
    format: str | None = None,
    *,
    default: str | None = None,
    flag: str = "format",
    renderers: Mapping[str, Renderer] | None = None,
) -> str:
    """:func:`resolve_format`, and for a file the checks :func:`write_atomic` makes
    (not a folder, its folder exists and is writable), before anything is computed or
    written: the format to write.

    Raises
    ------
    InvalidValueError
        An unknown format or suffix, a binary format to standard output, a folder, or
        a folder that cannot be written.
    MissingFileError
        The folder of ``path`` does not exist.
    """
    chosen = resolve_format(path, format, default=default, flag=flag, renderers=renderers)
    if (path is None or _is_stdout(path)) and chosen in _BINARY:
        raise InvalidValueError(f"format {chosen!r} writes a binary file: name the file")
    if path is not None and not _is_stdout(path):
        check_target(path)
        packed = Path(os.fspath(path)).suffix
        if chosen in _BINARY and compression_of(path) is not None:
            raise InvalidValueError(
                f"{path}: a {chosen} file is not written compressed ({packed}): it "
                f"compresses its own columns; drop {packed} from the name"
            )
    return chosen


def render_table(
    frame: pl.DataFrame, format: str, *, renderers: Mapping[str, Renderer] | None = None
) -> bytes:
    """The bytes of ``frame`` in ``format`` (``renderers`` override the built-in ones)."""
    chosen = (renderers or {}).get(format) or _RENDERERS.get(format)
    if chosen is None:
        raise InvalidValueError(
            f"format {format!r} is not a known output format; choose one of "
            f"{', '.join(sorted({*_RENDERERS, *(renderers or {})}))}"
        )
    return chosen(frame)


#: Paths that name a stream of this process, not a file: written to directly.
_STREAM_PATH = re.compile(r"^/(?:dev/(?:stdout|stderr|fd/\d+)|proc/(?:self|\d+)/fd/\d+)$")

#: The path that means standard output (``-o -``), as ``-`` means standard input.
STDOUT = "-"


def _is_stdout(path: str | os.PathLike[str] | None) -> bool:
    return path is not None and os.fspath(path) == STDOUT


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is written to directly, not through a temporary file renamed
    into place: ``-`` (standard output), an existing path that is not a regular file
    (a character device such as ``/dev/null``, a FIFO, a socket) or a stream of this
    process (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``). Renaming a file onto
    one of them would replace the device, pipe or link with a file."""
    text = os.fspath(path)
    if text == STDOUT or _STREAM_PATH.match(os.path.abspath(text)):
        return True
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return False  # no such file (or a dangling link): a new file
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _resolved(target: Path) -> Path:
    """``target`` with its symbolic links followed: a link is written through, its
    target replaced (the temporary file in the target's folder), the link kept."""
    if not target.is_symlink():
        return target
    return Path(os.path.realpath(target))


def check_target(path: str | os.PathLike[str]) -> Path:
    """The folder ``path`` will be written in, after checking that ``path`` is not a
    folder and that its folder exists and is writable (the library's errors, naming
    the path and the fix). A symbolic link is checked as its target is (the file
    written); a stream (:func:`is_stream`: ``-``, a device, a FIFO) needs no folder.

    Examples
    --------
    >>> import tempfile
    >>> from polars_irmetrics.io.output import check_target
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     check_target(folder)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: ...: is a folder, not a file; name a file in it ...
    """
    text = os.fspath(path)
    target = Path(text)
    if text.endswith(("/", os.sep)) and not target.is_dir():  # Path drops the slash
        raise InvalidValueError(
            f"{text}: ends with a slash, which names a folder, and there is none; name a "
            f"file (e.g. {target})"
        )
    if target.is_dir():
        example = target / ("results" + (target.suffix or ".csv"))
        raise InvalidValueError(
            f"{target}: is a folder, not a file; name a file in it (e.g. {example})"
        )
    compression_of(target)  # a compression no writer writes: refused
    if is_stream(target):
        return target.parent
    folder = _resolved(target).parent
    if not folder.is_dir():
        raise MissingFileError(
            f"{target}: cannot write, the folder {str(folder)!r} does not exist; create it first"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidValueError(
            f"{target}: cannot write, the folder {str(folder)!r} is not writable; choose "
            "another path"
        )
    return folder


def write_stdout(data: bytes) -> None:
    """Write ``data`` to standard output and flush it; a failure (a full disk, a closed
    pipe) is an :class:`InvalidValueError` naming standard output and the cause; after
    a Ctrl-C (:func:`_refuse_interrupted`) nothing is written."""
    _refuse_interrupted()
    try:
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:  # a text stream without bytes (a test's capture)
            sys.stdout.write(data.decode())
            sys.stdout.flush()
    except OSError as error:
        _discard_stdout()
        raise InvalidValueError(
            f"standard output: cannot write: {_os_text(error)}; write to a file instead (-o FILE)"
        ) from None


def _discard_stdout() -> None:
    """After a failed write, standard output pointed at the null device, so that
    Python's flush at exit neither fails again nor prints a second message."""
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> None:
    """Call ``write`` on a temporary file in ``path``'s folder, then rename it to ``path``.

    Readers see the old file or the whole new one, never a half-written file; two
    writers racing for the same path leave one of their outputs whole. On any error
    the temporary file is removed and ``path`` is left as it was. The new file has
    the permissions a plain ``open(path, "w")`` would give it: those of the file it
    replaces, else the default ones less the umask. The one writer of every file the
    library writes (tables, reports, plots, TREC and fused runs).

    A name ending in ``.gz``, ``.bz2`` or ``.xz`` (:data:`COMPRESSIONS`) is written
    compressed so: ``write`` writes the text, the file holds it compressed; another
    compression suffix (``.zst``) is refused (:func:`compression_of`).

    A symbolic link is written through: its target is replaced (the temporary file in
    the target's folder), the link kept. ``-`` writes to standard output, and a path
    that is not a regular file (a device such as ``/dev/null``, a FIFO,
    ``/dev/stdout``: :func:`is_stream`) is written directly, streamed, never replaced.

    A stop leaves no temporary file and the old ``path`` as it was: a SIGTERM removes
    the temporary file (:func:`~polars_irmetrics.ground.buckets.removed_on_stop`, with
    the handler of :func:`~polars_irmetrics.ground.buckets.spill_guard`, in place while
    this writes from the main thread, or the caller's), and so does a Ctrl-C, which
    reaches the work run beside the main thread
    (:func:`~polars_irmetrics.ground.buckets.beside_main`) as a flag: once it is up,
    nothing is written or renamed into place (a ``KeyboardInterrupt`` is raised).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from polars_irmetrics.io.output import write_atomic
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = pathlib.Path(folder) / "out.txt"
    ...     write_atomic(target, lambda handle: handle.write(b"whole"))
    ...     print(target.read_text(), sorted(p.name for p in pathlib.Path(folder).iterdir()))
    whole ['out.txt']
    """
    _refuse_interrupted()
    if _is_stdout(path):
        buffer = io.BytesIO()
        write(buffer)
        write_stdout(buffer.getvalue())
        return
    given = Path(os.fspath(path))
    folder = check_target(path)  # the name as given: a trailing slash kept
    write = _compressing(write, compression_of(given))
    if is_stream(given):
        _write_directly(given, write)
        return
    target = _resolved(given)
    try:
        mode = target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask()
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=folder
        )
    except OSError as error:
        raise InvalidValueError(
            f"{given}: cannot write: {_os_text(error)}; choose another path"
        ) from None
    try:
        with spill_guard(), removed_on_stop(temporary):  # SIGTERM removes it
            with os.fdopen(descriptor, "wb") as handle:
                write(handle)
            with contextlib.suppress(OSError):  # mkstemp's file is private (0600)
                os.chmod(temporary, mode)
            _refuse_interrupted()  # a Ctrl-C while it was written: the old file stays
            os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise InvalidValueError(
                f"{given}: cannot write: {_os_text(error)}; choose another path"
            ) from None
        raise


#: A writable stream compressing into a handle, by compression (:data:`COMPRESSIONS`).
_COMPRESSORS: dict[str, Callable[[IO[bytes]], io.BufferedIOBase]] = {
    "gzip": lambda handle: gzip.GzipFile(filename="", fileobj=handle, mode="wb", mtime=0),
    "bzip2": functools.partial(bz2.BZ2File, mode="wb"),
    "xz": functools.partial(lzma.LZMAFile, mode="wb"),
}


def _refuse_interrupted() -> None:
    """A ``KeyboardInterrupt`` where a Ctrl-C interrupted the work this thread runs
    (:func:`~polars_irmetrics.ground.buckets.interrupted`): it writes no output."""
    if interrupted():
        raise KeyboardInterrupt


def _compressing(
    write: Callable[[IO[bytes]], object], kind: str | None
) -> Callable[[IO[bytes]], object]:
    """``write``, its bytes compressed with ``kind`` (:data:`COMPRESSIONS`) on their
    way to the handle (no name or time in a gzip header: the same text, the same file)."""
    if kind is None:
        return write

    def packed(handle: IO[bytes]) -> None:
        with _COMPRESSORS[kind](handle) as opened:  # closing it ends the stream only
            write(cast(IO[bytes], opened))

    return packed


def _write_directly(target: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Stream to a device, a FIFO or a stream of this process (:func:`is_stream`)."""
    try:
        with open(target, "wb") as handle:
            write(handle)
    except OSError as error:
        raise InvalidValueError(
            f"{target}: cannot write: {_os_text(error)}; choose another path"
        ) from None


def _os_text(error: OSError) -> str:
    """The operating system's words for ``error``, without the `` (os error 28)`` that
    polars' own writers add (Rust's text of an OS error).

    >>> _os_text(OSError("No space left on device (os error 28)"))
    'No space left on device'
    >>> _os_text(OSError(13, "Permission denied"))
    'Permission denied'
    """
    return re.sub(r"\s*\(os error \d+\)", "", error.strerror or str(error)).strip()


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    data = text.encode()
    write_atomic(path, lambda handle: handle.write(data))


def write_table(
    frame: pl.DataFrame,
    path: str | os.PathLike[str] | None,
    format: str | None = None,
    *,
    renderers: Mapping[str, Renderer] | None = None,
    default: str | None = None,
    flag: str = "format",
) -> None:
    """Write ``frame`` to ``path`` in the format its suffix names (``format`` overrides).

    Parameters
    ----------
    frame
        The table to write.
    path
        The file; ``None`` (or ``"-"``) writes a text format to standard output.
    format
        ``"parquet"``, ``"csv"``, ``"json"``, ``"markdown"``, ``"latex"``, ``"html"``,
        ``"table"`` (aligned text) or a registered one; ``None`` takes it from the
        suffix (:data:`SUFFIXES_ACCEPTED`: ``.parquet``, ``.csv``, ``.json``, ``.md``,
        ``.tex``, ``.html``, ``.txt``).
    renderers
        Renderers that replace the built-in ones for this call (by format name).
    default
        The format on standard output (``path`` ``None``) when ``format`` is ``None``;
        a file whose suffix names no format is refused.
    flag
        How the format is named in an error (``"--format"`` for the ``irm`` command).

    Raises
    ------
    InvalidValueError
        An unknown format or suffix, a binary format to standard output, or a folder
        that cannot be written.
    MissingFileError
        The folder of ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, pathlib, polars as pl
    >>> from polars_irmetrics.io.output import write_table
    >>> frame = pl.DataFrame({"run": ["bm25"], "map": [0.25]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_table(frame, pathlib.Path(folder) / "means.md")
    ...     print((pathlib.Path(folder) / "means.md").read_text(), end="")
    | run | map |
    |---|---:|
    | bm25 | 0.2500 |
    """
    chosen = check_output(path, format, default=default, flag=flag, renderers=renderers)
    data = render_table(frame, chosen, renderers=renderers)
    if path is None or _is_stdout(path):
        write_stdout(data)
        return
    write_atomic(path, lambda handle: handle.write(data))
