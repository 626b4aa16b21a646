"""The flags of the ranking evaluation that ``irm evaluate`` and ``irm compare`` share:
the run's and the judgments' column names and the plan's options, each declared once
here (as irm.evaluate and irm.compare take them, one flag per keyword)."""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Sequence
from typing import Any

import polars as pl

from polars_irmetrics.errors import InvalidValueError, IrmError
from polars_irmetrics.ground.lists import is_list_column
from polars_irmetrics.io.files import detect_format
from polars_irmetrics.io.sources import STDIN, display_name, is_glob

__all__ = [
    "COLUMN_FLAGS",
    "add_column_flags",
    "add_ranking_flags",
    "add_relevance_level_flag",
    "positive_int",
    "ranking_options",
    "refuse_repeated_runs",
    "refuse_trec_columns",
    "refuse_unread_formats",
]

#: (flag, keyword and default) of the run's and the judgments' columns.
COLUMN_FLAGS: tuple[tuple[str, str], ...] = (
    ("query-id", "query_id"),
    ("doc-id", "doc_id"),
    ("rank", "rank"),
    ("score", "score"),
    ("relevance", "relevance"),
)

#: The plan's options these flags set, by keyword (read back by :func:`ranking_options`).
_OPTIONS = ("order", "relevance_level", "depth", "unjudged")


def add_ids_flag(p: argparse.ArgumentParser, also: str = "") -> None:
    """``--ids {keep,str}``: every file's query and document ids read as text (``also``:
    what else the command casts), so that integer ids (Parquet, JSON lines) meet a TREC
    file's; a message's Python cast of the ids is then written as this flag."""
    p.add_argument(
        "--ids",
        choices=("keep", "str"),
        default="keep",
        help=f"'str': read the query and document ids of every file{also} as text, so that "
        "integer ids (Parquet, JSON lines) meet a TREC file's (default: keep, as read)",
    )


def ids_as_text(frame: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """``--ids str``: the id columns of ``frame`` as text (a list of ids as a list of
    texts), so integer ids meet a TREC file's."""
    schema = frame.collect_schema()
    casts = [
        pl.col(c).cast(pl.List(pl.String) if is_list_column(schema, c) else pl.String)
        for c in dict.fromkeys(columns)
        if c in schema
    ]
    return frame.with_columns(casts) if casts else frame


def add_column_flags(p: argparse.ArgumentParser, only: tuple[str, ...] = ()) -> None:
    """``--query-id COL`` ... ``--relevance COL``: the columns' names (``only``: those
    of these keywords, where a command reads no other)."""
    for flag, default in COLUMN_FLAGS:
        if only and default not in only:
            continue
        p.add_argument(
            f"--{flag}",
            default=default,
            metavar="COL",
            help=f"name of the {flag.replace('-', ' ')} column (default: {default})",
        )


#: The fixed columns of a TREC file, by kind, as its reader names them.
_TREC_COLUMNS = {
    "run": "query id, Q0, doc id, rank, score, run id",
    "qrels": "query id, iteration, doc id, relevance",
}

#: The column flags a TREC file's reader takes as the names to give its columns, and
#: so would take in silence where no table reads them (--rank and --score are checked
#: against the run's columns by the evaluation itself).
_NAMING = ("query_id", "doc_id", "relevance")


def refuse_trec_columns(args: argparse.Namespace, inputs: Sequence[tuple[str, str, str]]) -> None:
    """Refuse ``--query-id``, ``--doc-id`` or ``--relevance`` given (other than its
    default) where every file the command reads (``inputs``: path, format flag's value,
    ``"run"``, ``"qrels"`` or another kind) is TREC text: its columns are fixed, so the
    flag names no column and would change nothing. A table among the inputs reads it;
    a file whose format cannot be told is left to its reader to name.

    >>> args = argparse.Namespace(query_id="query_id", doc_id="x", relevance="relevance")
    >>> refuse_trec_columns(args, [])
    """
    given = [key for key in _NAMING if getattr(args, key, key) != key]
    if not given or not inputs:
        return
    for path, fmt, _ in inputs:
        try:
            if (detect_format(path) if fmt == "auto" else fmt) != "trec":
                return
        except IrmError:
            return
    key = given[0]
    named = inputs[0]  # the first run, or for --relevance the judgments where given
    if key == "relevance":
        named = next((one for one in inputs if one[2] == "qrels"), named)
    path, _, kind = named
    flag = "--" + key.replace("_", "-")
    value = shlex.quote(getattr(args, key))
    fixed = _TREC_COLUMNS.get(kind, _TREC_COLUMNS["run"])
    raise InvalidValueError(
        f"{display_name(path)}: {flag} {value} names no column of a TREC file (its columns "
        f"are fixed: {fixed}); drop {flag}"
    )


def add_ranking_flags(p: argparse.ArgumentParser) -> None:
    """``--order``, ``--relevance-level``, ``--depth`` and ``--unjudged``."""
    p.add_argument(
        "--order",
        choices=("auto", "rank", "score"),
        default="auto",
        help="rank column, or score descending with trec_eval's tie-break "
        "(default: auto, the rank column when present)",
    )
    add_relevance_level_flag(p)
    p.add_argument(
        "--depth",
        type=positive_int,
        metavar="N",
        help="keep ranks 1..N per query, N > 0 (trec_eval -M)",
    )
    p.add_argument(
        "--unjudged",
        choices=("drop", "zero", "error"),
        default="drop",
        help="queries in a run but not in the judgments (default: drop)",
    )


def positive_int(text: str) -> int:
    """A flag's integer > 0 (``--depth N``), refused by the parser naming the flag.

    >>> positive_int("10")
    10
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer > 0, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """A flag's integer >= 0 (``irm trec-eval -N NUM``), refused by the parser naming the flag.

    >>> non_negative_int("0")
    0
    """
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def add_relevance_level_flag(
    p: argparse.ArgumentParser,
    what: str = "relevance >= L counts as relevant (default 1; e.g. --relevance-level 2)",
) -> None:
    """``--relevance-level L`` (``what``: its help, where a command reads it otherwise)."""
    p.add_argument("--relevance-level", type=float, default=1, metavar="L", help=what)


def ranking_options(args: argparse.Namespace) -> dict[str, Any]:
    """The columns' names and the plan's options the flags gave, as keywords (a flag
    left at its default gives the keyword's default, which changes nothing)."""
    given: dict[str, Any] = {keyword: getattr(args, keyword) for _, keyword in COLUMN_FLAGS}
    given.update({name: getattr(args, name) for name in _OPTIONS})
    return given


def refuse_unread_formats(
    args: argparse.Namespace, qrels: str | None, *, sample: bool = False
) -> None:
    """Refuse ``--qrels-format`` given (not ``auto``) where no judgments file is read
    (``qrels``: the file, or ``None``), and ``--run-format`` or ``--qrels-format`` beside
    the bundled sample (``sample``: ``irm evaluate --sample``, ``irm demo``), whose
    files are Parquet and detected as such: a format no file is read in would change
    nothing (the flag that maps to nothing is refused, as an option no metric reads).

    >>> refuse_unread_formats(argparse.Namespace(qrels_format="trec"), None)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: --qrels-format trec is the format of the ...
    """
    if sample:
        for flag in ("run_format", "qrels_format"):
            value = getattr(args, flag)
            if value != "auto":
                name = "--" + flag.replace("_", "-")
                raise InvalidValueError(
                    f"{name} {value} is the format of a file named on the command line, and "
                    "the bundled sample's runs and judgments are Parquet files, read as "
                    f"such: drop {name} (it would change nothing), or name your files"
                )
    if qrels is None and args.qrels_format != "auto":
        raise InvalidValueError(
            f"--qrels-format {args.qrels_format} is the format of the judgments file "
            "(--qrels), and none is given, so it would change nothing: drop --qrels-format, "
            "or pass --qrels FILE"
        )


def refuse_repeated_runs(paths: Sequence[str]) -> None:
    """Refuse a run file named twice among a command's runs (``irm evaluate``, ``irm
    compare``, ``irm fuse``), by the same text or by two spellings of one file
    (``run.txt`` and ``./run.txt``, a link): read twice, it was two systems of
    identical scores, a run whose every document is listed twice, or "needs at least
    two systems; got 1". Standard input, globs and URLs are left to their own checks.

    >>> refuse_repeated_runs(["a.txt", "b.txt", "a.txt"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: a.txt: the same run file is given twice; ...
    """
    seen: list[str] = []
    for path in paths:
        for earlier in seen:
            if path == earlier or _same_file(path, earlier):
                also = "" if path == earlier else f" (as {earlier} and {path})"
                raise InvalidValueError(
                    f"{path}: the same run file is given twice{also}; name each run once "
                    "(two systems are two different files)"
                )
        seen.append(path)


def _same_file(one: str, two: str) -> bool:
    """Whether two local paths name one file (False where either is no local file)."""
    if STDIN in (one, two) or is_glob(one) or is_glob(two) or "://" in one + two:
        return False
    try:
        return os.path.samefile(one, two)
    except OSError:
        return False
