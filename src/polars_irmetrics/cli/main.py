"""The ``irm`` command: evaluate Parquet, TREC, CSV or TSV logs from the shell.

    irm evaluate run.parquet --qrels qrels.txt -m ndcg@10 -m map
    irm evaluate --sample                     # the bundled sample data
    irm trec-eval -q -m ndcg_cut.10 qrels.txt run.txt
    irm ab --sample                           # an A/B test of an impression log
    irm compare --qrels qrels.txt bm25.txt dense.txt --baseline bm25 -m ndcg@10
    irm metrics ndcg                          # metric names, aliases, summaries

Errors print one line on stderr (``irm: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import polars as pl

from polars_irmetrics.cli import ab as ab_cmd
from polars_irmetrics.cli import compare as compare_cmd
from polars_irmetrics.cli import fuse as fuse_cmd
from polars_irmetrics.cli import metrics as metrics_cmd
from polars_irmetrics.cli import trec_eval as trec_eval_cmd
from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.errors import InvalidValueError, IrmError
from polars_irmetrics.ground.buckets import spill_guard
from polars_irmetrics.io.files import FORMATS, sample_paths, scan_qrels, scan_queries, scan_run
from polars_irmetrics.io.report import OUTPUT_FORMATS, check_output_args, write_output
from polars_irmetrics.io.sources import STDIN, display_name, excerpt, first_undecodable_line
from polars_irmetrics.metrics.registry import DEFAULT_METRICS

__all__ = ["main"]

#: Metrics ``irm evaluate`` reports when no ``-m`` is given.
EVALUATE_DEFAULTS: tuple[str, ...] = ("ndcg@10", "map", "mrr", "precision@10", "recall@100")

_EVALUATE_EPILOG = """\
examples:
  irm evaluate --sample
  irm evaluate runs/bm25.parquet runs/dense.parquet --qrels qrels.txt -m ndcg@10 -m map
  irm evaluate 'logs/*.parquet' --qrels qrels.parquet --by day --queries days.csv -m map
  irm evaluate run.txt --qrels qrels.txt -m P_10 -m ndcg_cut_10 --per-query --format csv -o out.csv
  irm evaluate judged.parquet -m ndcg@10          # a judged table: relevance in the run itself
  irm evaluate hnsw.parquet --neighbors exact.parquet -m neighbor_recall@10   # ANN recall

metric names: canonical (ndcg@10, map, mrr@10, recall@100), ir_measures (nDCG@10, AP, P@10,
RR@10), trec_eval (ndcg_cut_10, P_10, recip_rank, Rprec) or ranx (ndcg_burges@10, hits@10).
"""


def _evaluate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, helptext in (
        ("evaluate", "evaluate runs against judgments"),
        ("demo", "evaluate the bundled sample data (same as: irm evaluate --sample)"),
    ):
        p = sub.add_parser(
            name,
            help=helptext,
            description=helptext[0].upper() + helptext[1:] + ".",
            epilog=_EVALUATE_EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(func=_run_evaluate, sample=name == "demo")
        p.add_argument(
            "runs",
            nargs="*",
            metavar="RUN",
            help="run files: Parquet (file, glob, hive folder, URL), TREC, CSV, TSV or JSON "
            "lines (list-shaped runs: one row per query), plain or compressed (gzip, bzip2, "
            "xz, zstd); '-' reads standard input; "
            "several runs give one row each, named by file (e.g. runs/bm25.parquet)",
        )
        p.add_argument(
            "--qrels",
            metavar="QRELS",
            help="judgments file (e.g. --qrels qrels.txt; '-' reads standard input); omit "
            "for a judged table whose rows carry a relevance column",
        )
        p.add_argument(
            "-m",
            "--metric",
            action="append",
            dest="metrics",
            metavar="METRIC",
            help=f"metric to report, repeatable (e.g. -m ndcg@10 -m map); default: "
            f"{' '.join(EVALUATE_DEFAULTS)}; '-m default' gives every core metric",
        )
        p.add_argument(
            "--per-query", action="store_true", help="one row per query instead of the means"
        )
        p.add_argument(
            "--by",
            action="append",
            default=[],
            metavar="COL",
            help="attribute of the query to group by, repeatable (e.g. --by day --by market): "
            "a judged query counts in the group its own value names (from the judgments, "
            "--queries, or the run)",
        )
        p.add_argument(
            "--systems",
            action="append",
            default=[],
            metavar="COL",
            help="column naming systems or runs, repeatable: each is scored on every judged "
            "query (several run files are told apart by a 'run' column of this kind)",
        )
        p.add_argument(
            "--neighbors",
            metavar="FILE",
            help="the exact nearest neighbours of each query (a run file: query id, doc id, "
            "score = similarity or negative distance, e.g. from irm.knn), against which the "
            "runs are measured by neighbor_recall@k and neighbor_recall_rel@k (e.g. "
            "--neighbors exact.parquet -m neighbor_recall@10); read as the runs are",
        )
        p.add_argument(
            "--queries",
            metavar="FILE",
            help="table of query attributes (query id and --by columns; Parquet, CSV, JSON "
            "lines) placing each judged query in its group",
        )
        p.add_argument(
            "--format",
            choices=OUTPUT_FORMATS,
            default=None,
            help="output format (default: the one -o FILE's suffix names, .parquet .csv "
            ".json .md .tex .html .txt, another suffix is refused; table on stdout; e.g. "
            "--format csv)",
        )
        p.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            help="write to FILE (atomically), not stdout; its suffix picks the format "
            "(checked before anything is evaluated)",
        )
        p.add_argument(
            "--sample",
            action="store_true",
            default=name == "demo",
            help="evaluate the bundled sample (three systems, 30 queries)",
        )
        p.add_argument(
            "--run-format",
            choices=FORMATS,
            default="auto",
            help="run file format (default: auto, detected from the content)",
        )
        p.add_argument(
            "--qrels-format",
            choices=FORMATS,
            default="auto",
            help="judgments file format (default: auto)",
        )
        p.add_argument(
            "--order",
            choices=("auto", "rank", "score"),
            default="auto",
            help="rank column, or score descending with trec_eval's tie-break "
            "(default: auto, the rank column when present)",
        )
        p.add_argument(
            "--relevance-level",
            type=float,
            default=1,
            metavar="L",
            help="relevance >= L counts as relevant (default 1; e.g. --relevance-level 2)",
        )
        p.add_argument(
            "--depth", type=int, metavar="N", help="keep ranks 1..N per query (trec_eval -M)"
        )
        p.add_argument(
            "--unjudged",
            choices=("drop", "zero", "error"),
            default="drop",
            help="queries in a run but not in the judgments (default: drop)",
        )
        p.add_argument(
            "--unretrieved",
            choices=("zero", "drop", "error"),
            default="zero",
            help="queries judged but not in a run: score 0 (default), drop or error",
        )
        p.add_argument(
            "--buckets",
            type=_buckets,
            metavar="N|auto",
            help="out of core: split the queries into N hash buckets on disk and evaluate "
            "them one at a time ('auto': one per 2M run rows); peak memory is about one "
            "bucket's, every row is read twice, the results are the same (default: one "
            "plan, or buckets when a Parquet run is larger than half the memory)",
        )
        p.add_argument(
            "--spill-dir",
            metavar="DIR",
            help="folder for the buckets' temporary files (default: the system's temporary "
            "folder)",
        )
        p.add_argument(
            "--progress",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="a progress bar of the buckets evaluated out of core, on standard error "
            "(default: when it is a terminal, with the elapsed time of an in-memory plan; "
            "--no-progress: nothing)",
        )
        p.add_argument(
            "--no-duplicate-check",
            dest="check_duplicates",
            action="store_false",
            help="skip the run's per-query duplicate checks (faster on large clean logs; "
            "duplicates among judged documents are still refused)",
        )
        for flag, default in (
            ("query-id", "query_id"),
            ("doc-id", "doc_id"),
            ("rank", "rank"),
            ("score", "score"),
            ("relevance", "relevance"),
        ):
            p.add_argument(
                f"--{flag}",
                default=default,
                metavar="COL",
                help=f"name of the {flag.replace('-', ' ')} column (default: {default})",
            )


def _buckets(text: str) -> int | str:
    """``--buckets``: a positive integer or ``auto``."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}")
    return value


def _run_names(paths: Sequence[str]) -> list[str]:
    stems = [Path(p.rstrip("/")).name.split(".")[0] or p for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    return list(paths)


def _run_evaluate(args: argparse.Namespace) -> int:
    runs: list[str] = list(args.runs)
    qrels_source: str | None = args.qrels
    if args.sample:
        sample_runs, sample_qrels = sample_paths()
        runs = runs or [str(p) for p in sample_runs]
        qrels_source = qrels_source or str(sample_qrels)
    if not runs:
        raise InvalidValueError("no run given: name one or more run files, or pass --sample")
    check_output_args(args.format, args.output)  # before any work: -o's suffix and folder
    metrics = list(args.metrics or EVALUATE_DEFAULTS)
    if metrics == ["default"]:
        metrics = list(DEFAULT_METRICS)
    ids = {"query_id": args.query_id, "doc_id": args.doc_id}
    frames = [scan_run(path, args.run_format, **ids) for path in runs]
    by, systems = list(args.by), list(args.systems)
    if len(runs) > 1:
        names = _run_names(runs)
        frames = [
            frame.with_columns(pl.lit(name).alias("run"))
            for frame, name in zip(frames, names, strict=True)
        ]
        systems = ["run", *systems]
    run = pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]
    qrels = (
        None
        if qrels_source is None
        else scan_qrels(qrels_source, args.qrels_format, relevance=args.relevance, **ids)
    )
    queries = None if args.queries is None else scan_queries(args.queries, query_id=args.query_id)
    neighbors = (
        None if args.neighbors is None else scan_run(args.neighbors, args.run_format, **ids)
    )
    plan = evaluate(
        run,
        metrics,
        qrels=qrels,
        queries=queries,
        neighbors=neighbors,
        by=by or None,
        systems=systems or None,
        per_query=args.per_query,
        order=args.order,
        relevance_level=args.relevance_level,
        depth=args.depth,
        unjudged=args.unjudged,
        unretrieved=args.unretrieved,
        check_duplicates=args.check_duplicates,
        buckets="auto-memory" if args.buckets is None else args.buckets,
        spill_dir=args.spill_dir,
        progress=args.progress,
        rank=args.rank,
        score=args.score,
        relevance=args.relevance,
        **ids,
    )
    # the elapsed-time line only where no bar was asked for or refused
    with _Elapsed(sys.stderr) if args.progress is None else contextlib.nullcontext():
        result = plan.collect()
    keys = [*systems, *by, args.query_id] if args.per_query else [*systems, *by]
    write_output(result, args.format, args.output, keys=keys, metrics=metrics)
    return 0


class _Elapsed:
    """Elapsed time on stderr, only when it is a terminal and the work takes over a second."""

    def __init__(self, stream: TextIO, delay: float = 1.0) -> None:
        self._stream = stream
        self._delay = delay
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._shown = False

    def __enter__(self) -> _Elapsed:
        self._start = time.perf_counter()
        if self._stream.isatty():
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        if self._done.wait(self._delay):
            return
        while not self._done.wait(0.5):
            self._shown = True
            self._stream.write(f"\revaluating... {time.perf_counter() - self._start:.1f} s")
            self._stream.flush()

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            self._stream.write(f"\rdone in {time.perf_counter() - self._start:.1f} s    \n")
            self._stream.flush()


def _input_files(args: argparse.Namespace) -> list[str]:
    """The run and judgments files a command reads (any subcommand's arguments)."""
    named = [*(getattr(args, "runs", None) or []), getattr(args, "run", None)]
    named.append(getattr(args, "qrels", None))
    named.append(getattr(args, "neighbors", None))
    return [source for source in named if isinstance(source, str)]


def _stdin_once(args: argparse.Namespace) -> None:
    if _input_files(args).count(STDIN) > 1:
        raise InvalidValueError(
            "standard input ('-') can only be read once: name one file '-' and the others "
            "by their paths"
        )


def _undecodable(args: argparse.Namespace) -> str | None:
    """The file and line polars could not decode (its own message names neither)."""
    for source in _input_files(args):
        found = first_undecodable_line(source)
        if found is not None:
            number, raw = found
            return f"{display_name(source)}, line {number}: not valid UTF-8: {excerpt(raw)}"
    return None


def build_parser() -> argparse.ArgumentParser:
    """The ``irm`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="irm",
        description="Evaluate search and recommendation runs with polars_irmetrics.",
        epilog="run 'irm COMMAND --help' for a command's flags and examples",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _evaluate_parser(sub)
    trec_eval_cmd.add_parser(sub)
    ab_cmd.add_parser(sub)
    compare_cmd.add_parser(sub)
    fuse_cmd.add_parser(sub)
    metrics_cmd.add_parser(sub)
    return parser


#: Python keyword arguments whose flag has another name in some command.
_KEYWORD_DESTS: dict[str, tuple[str, ...]] = {
    "relevance_level": ("level",),
    "depth": ("max_docs",),
    "metric": ("metrics",),
}
_KEYWORD = re.compile(
    r"(?<![\w,.-])(?<!\w\()(?P<name>[a-z_]+)=(?P<value>'[^']*'|\"[^\"]*\"|\.\.\.|[\w.\-]+)?"
)
#: The longest message printed; longer ones (a whole malformed line) are cut.
_MAX_MESSAGE = 400


def _flags(parser: argparse.ArgumentParser, command: str | None) -> dict[str, argparse.Action]:
    """The flags of ``command`` (``irm COMMAND``) by their destination."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            sub = action.choices[command]
            for inner in sub._actions:
                if inner.option_strings and inner.dest != "help":
                    found.setdefault(inner.dest, inner)
    return found


def as_flags(message: str, flags: dict[str, argparse.Action]) -> str:
    """``message`` with the Python keyword arguments it suggests (``relevance='label'``)
    written as the command's flags (``--relevance label``).

    Examples
    --------
    >>> from polars_irmetrics.cli.main import as_flags, build_parser, _flags
    >>> flags = _flags(build_parser(), "evaluate")
    >>> as_flags("pass the column names, e.g. relevance='label' or rank=...", flags)
    'pass the column names, e.g. --relevance label or --rank COL'
    >>> print(as_flags("pass check_duplicates=False, or ndcg(gain='exponential')", flags))
    pass --no-duplicate-check, or ndcg(gain='exponential')
    """

    def flag(match: re.Match[str]) -> str:
        name, value = match.group("name"), match.group("value")
        action = flags.get(name)
        for dest in _KEYWORD_DESTS.get(name, ()):
            action = action or flags.get(dest)
        if action is None:
            return match.group(0)
        option = max(action.option_strings, key=len)
        if action.nargs == 0:  # a switch: store_true / store_false
            return option
        if value is None:
            return option
        if value == "...":
            return f"{option} {action.metavar or 'VALUE'}"
        return f"{option} {value.strip(chr(39)).strip(chr(34))}"

    return _KEYWORD.sub(flag, message)


def _one_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) > _MAX_MESSAGE:
        line = line[: _MAX_MESSAGE - 1] + "…"
    return line


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``irm`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _stdin_once(args)
        with spill_guard():  # SIGTERM removes the out-of-core spill folders, as Ctrl-C
            status: int = args.func(args)
    except (IrmError, OSError, pl.exceptions.PolarsError) as error:
        message = _one_line(str(error)) or repr(error)
        if isinstance(error, pl.exceptions.PolarsError) and "utf8" in message.lower():
            message = _undecodable(args) or message
        message = as_flags(message, _flags(parser, args.command))
        print(f"irm: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("irm: interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
