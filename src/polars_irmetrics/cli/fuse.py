"""``irm fuse``: fuse run files into one, or tune a fusion against judgments.

Runs are named by their paths, so an error about a run names its file (one line on
stderr, exit status 2, as every ``irm`` command).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, cast

import polars as pl

from polars_irmetrics.cli.flags import (
    add_column_flags,
    add_ids_flag,
    add_relevance_level_flag,
    ids_as_text,
    positive_int,
    refuse_repeated_runs,
    refuse_trec_columns,
)
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, IrmError
from polars_irmetrics.fusion.fuse import fuse
from polars_irmetrics.fusion.methods import get_fusion_method
from polars_irmetrics.fusion.optimize import SEARCHED, grid_points, optimize_fusion
from polars_irmetrics.io.files import scan_qrels, scan_run
from polars_irmetrics.io.output import (
    check_output,
    check_target,
    format_of,
    write_stdout,
    write_table,
)
from polars_irmetrics.io.sources import STDIN
from polars_irmetrics.io.trec import write_trec_run
from polars_irmetrics.metrics.registry import parse_metric

__all__ = ["add_parser", "run"]

_FORMATS = ("trec", "parquet", "csv", "json", "markdown", "latex")

_EPILOG = """examples:
  irm fuse bm25.run dense.run --method rrf -o fused.run
  irm fuse bm25.run dense.run --method wsum --norm min-max --weights 0.6,0.4 -o fused.parquet
  irm fuse bm25.run dense.run --optimize --qrels qrels.txt --metric ndcg@10 --folds 5
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``fuse`` subcommand."""
    p = sub.add_parser(
        "fuse",
        help="fuse runs (RRF, CombSUM/MNZ, weighted sums...) or tune a fusion",
        description="Fuse two or more runs (TREC, Parquet, CSV/TSV) into one, or, with "
        "--optimize, search the fusion's parameters against judgments.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=run)
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="run files (two or more; '-' reads standard input, for one of them)",
    )
    p.add_argument(
        "--method", default=None, help="fusion method (default rrf; wsum with --optimize)"
    )
    p.add_argument(
        "--norm",
        default=None,
        help="normalisation (min-max, zmuv, ...; default none, and with --optimize ranx's "
        "'auto': min-max for a method that reads scores)",
    )
    p.add_argument("--weights", default=None, help="comma-separated weights, one per run")
    p.add_argument("-k", type=_rrf_k, default=None, help="rrf's k, a number >= 0 (default 60)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another method parameter, e.g. phi=0.8 (rbc), gamma=0.5 (gmnz), sigma=0.01",
    )
    # refused by the parser as irm evaluate's --depth is (irm.fuse's own message
    # offers the keyword's None, which a command line cannot give)
    p.add_argument(
        "--depth",
        type=positive_int,
        default=None,
        metavar="N",
        help="keep the top N fused documents per query, N > 0 (default: all)",
    )
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="output file, checked before fusing and written atomically, in the format its "
        "suffix names (.parquet, .csv, .json, .md, .tex, .html), else a TREC run",
    )
    p.add_argument(
        "--format",
        choices=_FORMATS,
        default=None,
        help="output format (default: from -o FILE, else trec); a suffix that names "
        "another format is refused",
    )
    p.add_argument("--run-id", default=None, help="run name in the TREC output (default fused)")
    p.add_argument("--optimize", action="store_true", help="search the parameters (needs --qrels)")
    p.add_argument("--qrels", default=None, help="judgments, for --optimize")
    p.add_argument(
        "--metric",
        default=None,
        help="metric to optimise: maximised, or minimised where lower is better (default ndcg@10)",
    )
    p.add_argument(
        "--step",
        type=_step,
        default=None,
        help="grid step, a number > 0 (ranx's default: 0.1 for weights, 10 for rrf's k, "
        "0.01 else)",
    )
    p.add_argument("--folds", type=int, default=None, help="cross-validate over N query folds")
    # the runs' columns (fusion reads the scores) and, for --optimize, the judgments'
    add_column_flags(p, only=("query_id", "doc_id", "rank", "score", "relevance"))
    add_ids_flag(p)
    add_relevance_level_flag(
        p, "with --optimize: relevance >= L counts as relevant for a binary metric (default 1)"
    )


def _rrf_k(text: str) -> float:
    """``-k``: rrf's k, a finite number >= 0, the range :func:`~polars_irmetrics.fuse`
    declares (every document's term is 1 / (k + rank), rank from 1: k = 0 is 1 / rank)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a number >= 0 (rrf's k, e.g. -k 60), got {text!r}"
        )
    return value


def _step(text: str) -> int | float:
    """``--step``: a number, an integer kept as one (``5``, not ``5.0``), so that a
    refusal of :func:`~polars_irmetrics.fusion.optimize.grid_points` names the step as
    written (``--step 5 gives no weights...``); its range is grid_points' to check."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number (the grid's step, e.g. --step 0.1), got {text!r}"
        ) from None


#: The flags of one mode only (destination, flag): fusing, or tuning (--optimize).
_FUSE_ONLY = (
    ("k", "-k"), ("weights", "--weights"), ("param", "--param"), ("depth", "--depth"),
    ("output", "-o"), ("format", "--format"), ("run_id", "--run-id"),
)  # fmt: skip
_OPTIMIZE_ONLY = (("qrels", "--qrels"), ("metric", "--metric"), ("step", "--step"),
                  ("folds", "--folds"))  # fmt: skip


def _check_mode(args: argparse.Namespace) -> None:
    """A flag the mode does not read is refused, never ignored."""
    for dest, flag in _FUSE_ONLY if args.optimize else _OPTIMIZE_ONLY:
        if getattr(args, dest) not in (None, []):
            if args.optimize:
                raise InvalidValueError(
                    f"{flag} is not used with --optimize, which searches the parameters and "
                    f"prints the best: drop {flag}, or drop --optimize to fuse with it"
                )
            raise InvalidValueError(
                f"{flag} is only used with --optimize (the judgments and the metric to tune "
                f"on): add --optimize, or drop {flag}"
            )


def _weights(text: str | None, runs: int) -> list[float] | None:
    """The weights of ``--weights`` (one per run: ``runs``); twice as many integers as
    runs are decimal commas (``0,6,0,4``), refused with the list they meant.

    >>> _weights("0,6,0,4", 2)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: --weights '0,6,0,4' gives 4 numbers for 2 runs: ...
    """
    if text is None:
        return None
    pieces = text.split(",")
    try:
        weights = [float(x) for x in pieces]
    except ValueError:
        raise InvalidValueError(
            f"--weights {text!r} is not a comma-separated list of numbers, e.g. 0.6,0.4"
        ) from None
    if len(pieces) == 2 * runs and all(p.strip().isdigit() for p in pieces):
        pairs = zip(pieces[::2], pieces[1::2], strict=True)
        meant = ",".join(f"{a.strip()}.{b.strip()}" for a, b in pairs)
        raise InvalidValueError(
            f"--weights {text!r} gives {len(pieces)} numbers for {runs} runs: decimal "
            "commas? the weights are separated by commas and written with a decimal "
            f"point, e.g. --weights {meant}"
        )
    return weights


#: How irm.fuse's refusals of its ``weights`` start (a negative weight, too few).
_WEIGHT_REFUSALS = ("weight ", "weights ")


def _params(given: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for text in given:
        name, _, value = text.partition("=")
        try:
            number = float(value)
        except ValueError:
            raise InvalidValueError(
                f"--param {text!r} is not NAME=NUMBER, e.g. --param phi=0.8"
            ) from None
        if name.strip() in out:
            before = f"{name.strip()}={out[name.strip()]:g}"
            raise InvalidValueError(
                f"--param {text!r}: parameter {name.strip()!r} is given twice (--param "
                f"{before!r} before); give each parameter once"
            )
        out[name.strip()] = number
    return out


def _check_step(step: float | None, method: str, n_runs: int) -> None:
    """``--step``: refused before any work where :func:`grid_points` refuses it (its
    message's ``step=`` written as ``--step`` by the command's error handler)."""
    if step is None:
        return
    try:
        param = SEARCHED.get(get_fusion_method(method).name)
    except IrmError:
        return  # an unknown method: optimize_fusion names the choices
    if param is not None:  # a method without a grid: optimize_fusion says so
        grid_points(param, n_runs, step)


def run(args: argparse.Namespace) -> int:
    """Run ``irm fuse``."""
    _check_mode(args)
    if len(args.runs) < 2:  # as irm compare: the files, not irm.fuse's dict of runs
        raise InvalidValueError(f"irm fuse needs two or more run files; got only {args.runs[0]}")
    refuse_repeated_runs(args.runs)
    ids = {"query_id": args.query_id, "doc_id": args.doc_id}
    runs: dict[str, pl.LazyFrame] = {}
    for path in args.runs:
        if path != STDIN and not Path(path).exists():  # '-': standard input
            raise InvalidValueError(f"{path}: no such run file")
        # the columns under the names fusion and its output give them (each checked
        # first, by file and flag: a TREC file's are fixed, a table's its own)
        scanned = scan_run(path, rank=args.rank, score=args.score, **ids)
        have = scanned.collect_schema().names()
        shown = ", ".join(repr(c) for c in have)
        for flag, column in (("--query-id", args.query_id), ("--doc-id", args.doc_id)):
            if column not in have:
                raise ColumnNotFoundError(
                    f"{path}: no column {column!r} (its columns: {shown}); name it with {flag} COL"
                )
        # the scores, or where a table has none its ranks (irm.fuse's rank-based
        # methods read either; a method that reads scores refuses a run without them)
        if args.score in have:
            order = pl.col(args.score).alias("score")
        elif args.rank in have:
            order = pl.col(args.rank).alias("rank")
        else:
            raise ColumnNotFoundError(
                f"{path}: no column {args.score!r} nor {args.rank!r} (its columns: {shown}); "
                "name the scores with --score COL, or the ranks with --rank COL"
            )
        runs[path] = scanned.select(
            pl.col(args.query_id).alias("query_id"), pl.col(args.doc_id).alias("doc_id"), order
        )
        if args.ids == "str":  # every id as text, as irm evaluate --ids str reads them
            runs[path] = ids_as_text(runs[path], ["query_id", "doc_id"])
    if args.relevance != "relevance" and not args.optimize:
        raise InvalidValueError(
            f"--relevance {args.relevance} names the judgments' column, which only "
            "--optimize reads: drop --relevance, or pass --optimize --qrels QRELS"
        )
    if args.relevance_level != 1 and not args.optimize:
        raise InvalidValueError(
            f"--relevance-level {args.relevance_level:g} is read by the judged metric "
            "--optimize searches with, and no fusion reads it: drop --relevance-level, or "
            "pass --optimize --qrels QRELS"
        )
    judged = [] if args.qrels is None or not args.optimize else [(args.qrels, "auto", "qrels")]
    refuse_trec_columns(args, [*((path, "auto", "run") for path in args.runs), *judged])
    if args.optimize:
        if args.qrels is None:
            raise InvalidValueError("--optimize needs --qrels QRELS (the judgments to tune on)")
        method = args.method or "wsum"
        _check_step(args.step, method, len(runs))
        qrels = scan_qrels(args.qrels, relevance=args.relevance, **ids).select(
            pl.col(args.query_id).alias("query_id"),
            pl.col(args.doc_id).alias("doc_id"),
            pl.col(args.relevance).alias("relevance"),
        )
        if args.ids == "str":
            qrels = ids_as_text(qrels, ["query_id", "doc_id"])
        metric = args.metric or "ndcg@10"
        result = cast(
            tuple[Any, ...],
            optimize_fusion(
                runs,
                metric,
                qrels=qrels,
                method=method,
                norm=args.norm if args.norm is not None else "auto",
                step=args.step,
                return_grid=True,
                folds=args.folds,
                relevance_level=args.relevance_level,
            ),
        )
        best, grid = result[0], result[1]
        higher = parse_metric(metric).higher_is_better
        scores = grid[metric]
        value = scores.max() if higher else scores.min()
        direction = "" if higher else " (lower is better)"
        lines = [f"best {metric}{direction}: {value:.4f} with {best}"]
        if args.folds is not None:
            table = result[2]
            with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, fmt_table_cell_list_len=-1):
                lines.append(str(table))
            lines.append(
                f"cross-validated {metric}: {table['test'].mean():.4f} (mean of held-out folds)"
            )
        write_stdout("".join(f"{line}\n" for line in lines).encode())
        return 0
    if args.output is None:
        raise InvalidValueError(
            "irm fuse needs -o FILE (.parquet, else a TREC run), or --optimize"
        )
    fmt = args.format or format_of(args.output) or "trec"
    if fmt != "trec" and args.run_id is not None:
        raise InvalidValueError(
            f"--run-id names the run of a TREC output; -o {args.output} writes a {fmt} table "
            "(its run is not named): drop --run-id, or write a TREC run (e.g. -o fused.run)"
        )
    # a folder, a missing or read-only folder, a compression not written: before fusing
    if fmt == "trec":
        check_target(args.output)
    else:
        check_output(args.output, fmt)
    params = _params(args.param)
    if args.k is not None:
        if "k" in params:
            raise InvalidValueError(
                f"-k {args.k:g} and --param 'k={params['k']:g}' both give rrf's k: give "
                "it once, with -k"
            )
        params["k"] = args.k
    try:
        fused = fuse(
            runs,
            args.method or "rrf",
            norm=args.norm,
            weights=_weights(args.weights, len(runs)),
            depth=args.depth,
            **params,
        )
    except InvalidValueError as error:
        # irm.fuse's refusal of a weight (negative, not finite, one per run, all zero)
        # names its keyword's value: led by the flag as it was typed
        if args.weights is None or not str(error).startswith(_WEIGHT_REFUSALS):
            raise
        raise InvalidValueError(f"--weights {args.weights}: {error}") from None
    frame = fused.collect() if isinstance(fused, pl.LazyFrame) else fused
    if fmt == "trec":
        tag = "fused" if args.run_id is None else args.run_id
        write_trec_run(frame, args.output, run_id=tag, rank="rank", score="score")
    else:
        write_table(frame, args.output, fmt)
    return 0
