"""``irm ab``: an A/B test of an impression log from the shell.

    irm ab --sample                                   # the bundled A/B log
    irm ab 'logs/*.parquet' --arm variant --unit user_id --control control -m ctr@10

Errors print one line on stderr naming the log (``irm: error: LOG: ...``), exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import cast

import polars as pl

from polars_irmetrics.cli.keywords import as_flags, flags_of
from polars_irmetrics.errors import FileFormatError, InvalidValueError, IrmError
from polars_irmetrics.io.files import (
    LogLines,
    damaged_json_line,
    log_lines,
    refuse_log_text,
    sample_interactions_path,
    scan_logs,
)
from polars_irmetrics.io.report import (
    OUTPUT_FORMATS,
    OutputFormat,
    check_output_args,
    write_output,
)
from polars_irmetrics.io.text import decimal
from polars_irmetrics.metrics.registry import parse_metric_list
from polars_irmetrics.online.ab import ab_test, check_ab_metrics, check_ab_options
from polars_irmetrics.online.sessions import optional_columns
from polars_irmetrics.stats.multitest import CORRECTIONS

__all__ = ["add_parser", "run"]

#: Metrics ``irm ab`` compares when no ``-m`` is given.
AB_DEFAULTS: tuple[str, ...] = ("ctr@10", "abandonment", "click_mrr", "sat_click_rate")

#: The columns ``irm ab`` prints in its table (every column in csv, json, parquet).
#: The absolute difference and the relative lift each beside its own interval.
_SHOWN = (
    "metric", "arm", "method", "units", "control_mean", "mean",
    "delta", "ci_low", "ci_high", "relative", "relative_ci_low", "relative_ci_high",
    "p_value", "p_adjusted", "significant", "higher_is_better", "srm_p_value",
)  # fmt: skip

_EPILOG = """\
examples:
  irm ab --sample
  irm ab --sample -m ctr@10 -m abandonment --by day
  irm ab 'logs/*.parquet' --arm variant --unit user_id --control control -m ctr@10 -m click_mrr
  irm ab log.csv --split A=0.9 --split B=0.1 --format csv -o ab.csv

the log: one row per impression with the arm, the unit (user), session_id, position
(1 = top), clicked, and dwell / converted / timestamp where a metric reads them.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``ab`` subcommand."""
    p = sub.add_parser(
        "ab",
        help="A/B test of an impression log: click metrics per arm, at the user level",
        description="Compare the arms of an A/B test on click metrics, with the statistics "
        "at the randomization unit (Welch's t-test, delta method), a sample-ratio-mismatch "
        "check and a multiple-testing correction.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=run)
    p.add_argument(
        "log",
        nargs="*",
        metavar="LOG",
        help="impression log: Parquet (a file, a glob, a folder), CSV, TSV or JSON lines; "
        "several files (e.g. one per day, as an unquoted shell glob gives them) are read "
        "as one log, and must have the same columns and types",
    )
    p.add_argument(
        "--sample", action="store_true", help="use the bundled sample log (600 users, 2 arms)"
    )
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help=f"click metric, repeatable (default: {' '.join(AB_DEFAULTS)}, less those "
        "reading a column the log lacks)",
    )
    p.add_argument("--arm", default="arm", metavar="COL", help="arm column (default: arm)")
    p.add_argument(
        "--unit", default="user_id", metavar="COL", help="randomization unit (default: user_id)"
    )
    p.add_argument(
        "--control", default="A", metavar="ARM", help="the control arm's value (default: A)"
    )
    p.add_argument(
        "--split",
        action="append",
        default=[],
        metavar="ARM=SHARE",
        help="intended share of an arm, repeatable, one per arm (e.g. --split A=0.9 "
        "--split B=0.1): positive weights, divided by their sum (A=9 B=1 is the same "
        "split; A=0.9 B=0.9 is 50/50); default: equal shares",
    )
    p.add_argument(
        "--by", action="append", default=[], metavar="COL", help="segment key, repeatable"
    )
    p.add_argument("--alpha", type=float, default=0.05, help="test level (default: 0.05)")
    p.add_argument(
        "--correction",
        choices=(*CORRECTIONS, "none"),
        default="holm",
        help="multiple-testing correction across metrics (default: holm)",
    )
    p.add_argument(
        "--strict", action="store_true", help="a unit in two arms is an error, not a warning"
    )
    for column in ("session_id", "position", "clicked", "dwell", "converted", "timestamp"):
        p.add_argument(
            f"--{column.replace('_', '-')}",
            dest=column,
            default=column,
            metavar="COL",
            help=f"{column} column (default: {column})",
        )
    p.add_argument(
        "--format",
        choices=[f for f in OUTPUT_FORMATS if f != "trec"],
        default=None,
        help="output format (default: the one -o FILE's suffix names, .parquet .csv .json "
        ".md .tex .html .txt, another suffix is refused; table on stdout; table, markdown "
        "and latex show a subset of the columns, csv/json/parquet all)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (atomically), not stdout; its suffix picks the format",
    )


def _split(items: list[str]) -> dict[str, float] | None:
    """``--split ARM=SHARE``, one per arm: positive weights (ab_test divides them by
    their sum); an arm given twice, or a share that is no finite number, is refused."""
    if not items:
        return None
    out: dict[str, float] = {}
    for item in items:
        arm, sep, share = item.partition("=")
        if not sep or not arm:
            raise InvalidValueError(f"--split {item!r}: write ARM=SHARE, e.g. --split A=0.5")
        value = decimal(share.strip())
        if value is None or value <= 0:
            raise InvalidValueError(
                f"--split {item!r}: the share must be a decimal number > 0, e.g. --split {arm}=0.5"
            )
        if arm in out:
            raise InvalidValueError(
                f"--split {item!r}: arm {arm!r} is given twice ({arm}={out[arm]:g} before); "
                "give each arm one share"
            )
        out[arm] = value
    return out


def _unreadable(source: str) -> FileFormatError:
    """A log whose columns polars cannot read: its first damaged JSON line named where
    there is one (polars' own text names neither the file nor the line)."""
    damaged = damaged_json_line(source, "an impression log")
    return damaged or FileFormatError(f"{source}: its columns cannot be read")


def _feedable_defaults(
    log: pl.LazyFrame, args: argparse.Namespace, source: str, notes: list[str]
) -> list[str]:
    """The default metrics the log can feed; each left out is named in ``notes`` (the
    warnings printed when the command succeeds: a failing one prints its error alone)
    with the column it reads (with -m, a metric whose column is missing is an error)."""
    try:
        have = set(log.collect_schema().names())
    except pl.exceptions.PolarsError:
        raise _unreadable(source) from None
    kept = []
    for label, roles in optional_columns(parse_metric_list(AB_DEFAULTS)).items():
        missing = [
            getattr(args, role) for role in sorted(roles) if getattr(args, role) not in have
        ]
        if missing:
            flags = ", ".join(f"--{r.replace('_', '-')} COL" for r in sorted(roles))
            notes.append(
                f"{label} left out: it reads column {', '.join(repr(c) for c in missing)}, "
                f"which the log lacks (name yours with {flags})"
            )
        else:
            kept.append(label)
    return kept


#: The log's columns only some click metrics read (the flag's destination each).
_OPTIONAL = ("dwell", "converted", "timestamp")


def _read_columns(
    log: pl.LazyFrame,
    args: argparse.Namespace,
    metrics: list[str],
    source: str,
    lines: LogLines,
) -> pl.LazyFrame:
    """The log as the metrics read it: an optional column (dwell, converted,
    timestamp) that no asked metric reads is left out, so that its type does not
    matter (a CSV's timestamp is text); a timestamp read as text is parsed."""
    try:
        reads = optional_columns(parse_metric_list(metrics))
    except IrmError:
        return log  # an unknown or non-click metric: ab_test names it
    used = set().union(*reads.values()) if reads else set()
    try:
        schema = log.collect_schema()
    except pl.exceptions.PolarsError:
        raise _unreadable(source) from None
    kept = {args.arm, args.unit, args.session_id, args.position, args.clicked, *args.by}
    unread = [
        getattr(args, role)
        for role in _OPTIONAL
        if role not in used and getattr(args, role) in schema and getattr(args, role) not in kept
    ]
    log = log.drop(unread)
    # a text column that should hold numbers or clicks (a bad value in a CSV or JSON
    # lines file): its line
    numbers = [args.position] + [args.dwell] * ("dwell" in used)
    flags = [args.clicked] + [args.converted] * ("converted" in used)
    refuse_log_text(log, source, lines, numbers=numbers, flags=flags)
    if "timestamp" in used and schema.get(args.timestamp) == pl.String:
        log = log.with_columns(_timestamps(log, args.timestamp, source, lines))
    return log


def _timestamps(log: pl.LazyFrame, column: str, source: str, lines: LogLines) -> pl.Series:
    """A text timestamp column (a CSV's) parsed as datetimes, or an error naming the
    first value that is none (and its line, for a single CSV/TSV or JSON lines file)."""
    values = log.select(pl.col(column)).collect().to_series()
    try:
        return values.str.to_datetime()
    except pl.exceptions.PolarsError:
        pass
    try:
        parsed = values.str.to_datetime(strict=False)
    except pl.exceptions.PolarsError:  # no format inferred: the first value is none
        parsed = pl.Series(column, [None] * values.len(), pl.Datetime)
    bad = (values.is_not_null() & parsed.is_null()).arg_true()
    if bad.len() == 0:  # polars inferred another format from the first values
        raise InvalidValueError(
            f"{source}: column {column!r} holds timestamps in more than one format; write "
            "them in one ISO 8601 format, e.g. 2026-03-02T10:01:41"
        )
    row = int(bad[0])
    where = lines.where(source, row)
    raise InvalidValueError(
        f"{where}: column {column!r} holds {values[row]!r}, not a timestamp; "
        "write it as ISO 8601, e.g. 2026-03-02T10:01:41, or name another column with "
        "--timestamp COL"
    )


def _ab_flags() -> dict[str, argparse.Action]:
    """The flags of ``irm ab`` by their destination."""
    sub = argparse.ArgumentParser().add_subparsers()
    add_parser(sub)
    return flags_of(sub.choices["ab"])


def run(args: argparse.Namespace) -> int:
    """Run ``irm ab``; errors name the log."""
    if args.sample and args.log:  # one source of the log: never one ignored
        raise InvalidValueError(
            "--sample tests the bundled sample log, and a log file was named too: drop "
            "--sample, or the file"
        )
    logs: list[str] = list(args.log) or ([str(sample_interactions_path())] if args.sample else [])
    if not logs:
        raise InvalidValueError("no log given: name an impression log, or pass --sample")
    # every output checked before the log is read (its suffix, its folder, no binary
    # format on standard output), as every command's
    fmt = check_output_args(args.format, args.output)
    split = _split(args.split)  # an option's error, before the log is read
    # the options' errors name no file: checked before the log is read
    check_ab_options(args.alpha, None, args.strict, args.arm, args.unit, args.control)
    correction = None if args.correction == "none" else args.correction
    if args.metrics:  # a metric's error names no file: checked before the log is read
        check_ab_metrics(parse_metric_list(list(args.metrics)), correction)
    source = logs[0] if len(logs) == 1 else f"{logs[0]} (and {len(logs) - 1} more files)"
    log = scan_logs(logs)  # several files: the same columns and types, as one log
    left_out: list[str] = []
    metrics = list(args.metrics or ()) or _feedable_defaults(log, args, source, left_out)
    # a line number only where the rows are one CSV/TSV or JSON lines file's, in order
    log = _read_columns(log, args, metrics, source, log_lines(logs))
    try:
        result = ab_test(
            log,
            metrics,
            arm=args.arm,
            unit=args.unit,
            control=args.control,
            split=split,
            by=list(args.by) or None,
            alpha=args.alpha,
            correction=correction,
            strict=args.strict,
            session_id=args.session_id,
            position=args.position,
            clicked=args.clicked,
            dwell=args.dwell,
            converted=args.converted,
            timestamp=args.timestamp,
        )
    except (IrmError, OSError, pl.exceptions.PolarsError) as error:
        # the command writes the message's keyword suggestions as its flags, and
        # leaves its places in the data, such as (arm='A', user_id='u1'), as they are
        text = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise type(error)(f"{source}: {text}") from None
    notes = sorted({note for row in result["warnings"].to_list() for note in row})
    flags = _ab_flags() if notes else {}
    for note in [*left_out, *(as_flags(note, flags) for note in notes)]:
        # ab_test's notes with their keywords as the command's flags, as main() writes
        print(f"irm: warning: {source}: {note}", file=sys.stderr)
    if fmt in ("table", "markdown", "latex"):
        shown = result.select(*args.by, *_SHOWN)
    elif fmt == "csv":
        shown = result.with_columns(pl.col("warnings").list.join("; "))
    else:
        shown = result
    write_output(shown, cast(OutputFormat, fmt), args.output)
    return 0
