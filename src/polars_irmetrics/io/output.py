"""Every file the library and the ``irm`` command write: one dispatch, atomic writes.

:func:`write_table` picks the format from the file's suffix (``.parquet``, ``.csv``,
``.json``, ``.md``, ``.tex``) unless ``format=`` names one, renders the frame
and writes it *atomically*: to a temporary file in the target folder, renamed into
place with :func:`os.replace`, so a reader (or a second writer) never sees half a file.
:func:`write_atomic` is the same guarantee for any writer (TREC runs, reports).

New formats plug in with :func:`register_format` (a name, a renderer from a frame to
bytes, the suffixes that name it); a caller with its own rendering of a format (the
comparison report's LaTeX with significance markers) passes ``renderers=``.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

import polars as pl

from polars_irmetrics.errors import InvalidValueError, MissingFileError

__all__ = [
    "Renderer",
    "format_of",
    "register_format",
    "render_table",
    "resolve_format",
    "write_atomic",
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


def markdown(frame: pl.DataFrame) -> str:
    """A GitHub Markdown table, numbers right-aligned, floats with 4 decimals."""
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    out = ["| " + " | ".join(frame.columns) + " |"]
    out.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    for row in frame.iter_rows():
        out.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(out) + "\n"


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def latex(frame: pl.DataFrame) -> str:
    """A booktabs LaTeX tabular, numbers right-aligned, floats with 4 decimals."""
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    out = ["\\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}"]
    out.append("\\toprule")
    out.append(" & ".join(_latex_escape(c) for c in frame.columns) + " \\\\")
    out.append("\\midrule")
    for row in frame.iter_rows():
        out.append(" & ".join(_latex_escape(_cell(v)) for v in row) + " \\\\")
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


_RENDERERS: dict[str, Renderer] = {
    "table": lambda frame: aligned(frame).encode(),
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
}
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


def format_of(path: str | os.PathLike[str]) -> str | None:
    """The format a path's suffix names (``None`` for a suffix no format claims).

    Examples
    --------
    >>> from polars_irmetrics.io.output import format_of
    >>> format_of("results/ndcg.TEX"), format_of("out.parquet"), format_of("fused.run")
    ('latex', 'parquet', None)
    """
    return _SUFFIXES.get(Path(os.fspath(path)).suffix.lower())


def _known_suffixes() -> str:
    return ", ".join(sorted(_SUFFIXES))


def resolve_format(
    path: str | os.PathLike[str] | None,
    format: str | None = None,
    *,
    default: str | None = None,
    flag: str = "format",
    renderers: Mapping[str, Renderer] | None = None,
) -> str:
    """The format to write: ``format`` when given, else the one ``path``'s suffix names,
    else ``default``; an unknown name or suffix is refused naming the choices."""
    if format is not None:
        known = [*_RENDERERS, *(n for n in renderers or {} if n not in _RENDERERS)]
        if format not in known:
            raise InvalidValueError(
                f"{flag} {format!r} is not a known output format; choose one of {', '.join(known)}"
            )
        return format
    found = None if path is None else format_of(path)
    if found is not None:
        return found
    if default is not None:
        return default
    raise InvalidValueError(
        f"{path}: the suffix names no output format; use one of {_known_suffixes()}, "
        f"or name the format ({flag} csv)"
    )


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


def _writable_folder(target: Path) -> Path:
    folder = target.parent
    if target.is_dir():
        raise InvalidValueError(f"{target}: is a folder; name the file to write")
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


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> None:
    """Call ``write`` on a temporary file in ``path``'s folder, then rename it to ``path``.

    Readers see the old file or the whole new one, never a half-written file; two
    writers racing for the same path leave one of their outputs whole. On any error
    the temporary file is removed and ``path`` is left as it was.

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
    target = Path(os.fspath(path))
    folder = _writable_folder(target)
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=folder
        )
    except OSError as error:
        raise InvalidValueError(
            f"{target}: cannot write: {error.strerror or error}; choose another path"
        ) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
        with contextlib.suppress(OSError):
            os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise InvalidValueError(
                f"{target}: cannot write: {error.strerror or error}; choose another path"
            ) from None
        raise


def _umask() -> int:
    current = os.umask(0)
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
) -> None:
    """Write ``frame`` to ``path`` in the format its suffix names (``format`` overrides).

    Parameters
    ----------
    frame
        The table to write.
    path
        The file; ``None`` writes a text format to standard output.
    format
        ``"parquet"``, ``"csv"``, ``"json"``, ``"markdown"``, ``"latex"``, ``"table"``
        (aligned text) or a registered one; ``None`` takes it from the suffix
        (``.parquet``, ``.csv``, ``.json``, ``.md``, ``.tex``).
    renderers
        Renderers that replace the built-in ones for this call (by format name).
    default
        The format when ``format`` is ``None`` and the suffix names none (else refused).

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
    chosen = resolve_format(path, format, default=default, renderers=renderers)
    if path is None:
        if chosen in _BINARY:
            raise InvalidValueError(f"format {chosen!r} writes a binary file: name the file")
        sys.stdout.write(render_table(frame, chosen, renderers=renderers).decode())
        return
    data = render_table(frame, chosen, renderers=renderers)
    write_atomic(path, lambda handle: handle.write(data))
