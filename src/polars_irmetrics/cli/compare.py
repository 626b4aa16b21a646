"""``irm compare``: paired significance tests of several runs from the shell.

    irm compare --qrels qrels.txt bm25.txt dense.txt --baseline bm25 -m ndcg@10 -m map \\
        --test randomization --correction holm --format latex -o table.tex --plot deltas.png

Systems are named by file stem (the path when two stems clash). Errors print one line
on stderr (``irm: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import polars as pl

from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.api import compare
from polars_irmetrics.comparison.frame import long_runs
from polars_irmetrics.comparison.options import ALTERNATIVES, TESTS
from polars_irmetrics.comparison.publish import report, write_atomic
from polars_irmetrics.comparison.report import (
    REPORT_FORMATS,
    ReportFormat,
    with_std,
    write_report,
)
from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.io.files import FORMATS, scan_qrels, scan_run
from polars_irmetrics.metrics.registry import parse_metric
from polars_irmetrics.stats.multitest import CORRECTIONS

__all__ = ["add_parser", "run"]

_EPILOG = """\
examples:
  irm compare --qrels qrels.txt bm25.txt dense.txt hybrid.txt --baseline bm25 -m ndcg@10 -m map
  irm compare --qrels qrels.parquet runs/*.parquet --test randomization --n-resamples 10000 \\
      --seed 1 --correction holm --format latex -o table.tex --plot deltas.png
  irm compare --qrels qrels.txt a.txt b.txt c.txt --format csv -o pairs.csv   # every pair
  irm compare --qrels qrels.txt bm25.txt dense.txt --baseline bm25 -o report.html

-o FILE picks the format by its suffix (.html .tex .md .csv .json .parquet) unless
--format is given. The .html report is one self-contained page: the table, the
per-query deltas, metric@k curves (k = 1 .. each metric's cutoff), the significance
matrices and confidence intervals, as inline SVG (no external URL).

--plot draws the per-query deltas against the baseline (with --baseline) or the
system x system significance matrix (every pair); PNG or SVG by suffix.
"""

_DEFAULT_METRICS = ("ndcg@10", "map")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``compare`` subcommand."""
    p = sub.add_parser(
        "compare",
        help="compare runs: paired significance tests, corrections, intervals",
        description="Compare runs on the same judged queries: paired tests, "
        "multiple-testing correction, confidence intervals, wins/ties/losses.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=run)
    p.add_argument("runs", nargs="+", metavar="RUN", help="two or more run files")
    p.add_argument("--qrels", required=True, metavar="QRELS", help="judgments file")
    p.add_argument(
        "--baseline",
        metavar="RUN",
        help="the run the others are compared with (its name or path); default: every pair",
    )
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help=f"metric, repeatable (default: {' '.join(_DEFAULT_METRICS)})",
    )
    p.add_argument("--test", choices=TESTS, default="t", help="paired test (default: t)")
    p.add_argument(
        "--alternative", choices=ALTERNATIVES, default="two-sided", help="(default: two-sided)"
    )
    p.add_argument(
        "--correction",
        choices=[*CORRECTIONS, "none"],
        default="holm",
        help="multiple-testing correction (default: holm)",
    )
    p.add_argument(
        "--correction-scope",
        choices=["all", "metric"],
        default="all",
        help="correct all comparisons x metrics together, or each metric (default: all)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (0.95)")
    p.add_argument("--ci", choices=["t", "bootstrap"], help="interval method (default: t)")
    p.add_argument("--n-resamples", type=int, default=10_000, help="resamples (10000)")
    p.add_argument("--seed", type=int, help="random seed of the resampling tests")
    p.add_argument(
        "--query-set",
        choices=["judged", "common", "error"],
        default="judged",
        help="paired queries: every judged one (default), those every run has, or refuse",
    )
    p.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        default=None,
        help="(default: the one -o FILE's suffix names, .parquet .csv .json .md .tex, "
        "else terminal)",
    )
    p.add_argument(
        "--markers", choices=["letters", "daggers"], default="letters", help="(letters)"
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE (atomically); its suffix picks the format",
    )
    p.add_argument(
        "--std",
        action="store_true",
        help="show the standard deviation of the per-query values beside each mean "
        "(population, ranx's return_std=True; columns std and baseline_std in csv, json "
        "and parquet)",
    )
    p.add_argument("--plot", metavar="FILE", help="save a plot (PNG or SVG)")
    p.add_argument("--run-format", choices=FORMATS, default="auto", help="(auto)")
    p.add_argument("--qrels-format", choices=FORMATS, default="auto", help="(auto)")


def _names(paths: Sequence[str]) -> list[str]:
    stems = [Path(p.rstrip("/")).name.split(".")[0] or p for p in paths]
    return stems if len(set(stems)) == len(stems) else list(paths)


_SUFFIX_FORMATS = {
    ".html": "html", ".htm": "html", ".tex": "latex", ".md": "markdown", ".csv": "csv",
    ".json": "json", ".parquet": "parquet",
}  # fmt: skip


def _curves(
    runs: dict[str, pl.LazyFrame], metrics: list[str], qrels: pl.LazyFrame
) -> pl.DataFrame | None:
    """Mean metric@1..k per system for each metric with a cutoff k >= 2 (None if none)."""
    ranges: dict[str, int] = {}
    for metric in metrics:
        k = parse_metric(metric).k
        if k is not None and k >= 2 and "@" in metric:
            family = metric.rsplit("@", 1)[0]
            ranges[family] = max(ranges.get(family, 0), k)
    if not ranges:
        return None
    long, _ = long_runs(runs, "system")
    names = [f"{family}@1..{k}" for family, k in ranges.items()]
    means = evaluate(long, names, qrels=qrels, systems="system")
    frame = means.collect() if isinstance(means, pl.LazyFrame) else means
    order = pl.Enum(list(runs))
    return frame.sort(pl.col("system").cast(order))


def run(args: argparse.Namespace) -> int:
    """Run ``irm compare``; returns the exit status."""
    paths: list[str] = list(args.runs)
    if len(paths) < 2:
        raise InvalidValueError(f"irm compare needs two or more runs; got only {paths[0]}")
    names = _names(paths)
    for path in [*paths, args.qrels]:
        if "*" not in path and "://" not in path and not Path(path).exists():
            raise InvalidValueError(f"{path}: no such file")
    baseline = args.baseline
    if baseline is not None and baseline in paths:
        baseline = names[paths.index(baseline)]
    runs: dict[str, pl.LazyFrame] = {
        name: scan_run(path, args.run_format) for name, path in zip(names, paths, strict=True)
    }
    qrels = scan_qrels(args.qrels, args.qrels_format)
    kwargs = {
        "qrels": qrels,
        "baseline": baseline,
        "test": args.test,
        "alternative": args.alternative,
        "correction": None if args.correction == "none" else args.correction,
        "correction_scope": args.correction_scope,
        "alpha": args.alpha,
        "confidence": args.confidence,
        "ci": args.ci,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "query_set": args.query_set,
    }
    metrics = list(args.metrics or _DEFAULT_METRICS)
    result = compare(runs, metrics, **kwargs)
    if args.std:
        result = with_std(result, compare(runs, metrics, per_query=True, **kwargs))
    suffix = Path(args.output or "").suffix.lower()
    fmt = cast(ReportFormat, args.format or _SUFFIX_FORMATS.get(suffix, "terminal"))
    if fmt == "html":
        page = report(result, curves=_curves(runs, metrics, qrels), markers=args.markers)
        if args.output is None:
            sys.stdout.write(page.to_html())
        else:
            write_atomic(Path(args.output), page.to_html())
    else:
        write_report(result, args.output, fmt, markers=args.markers)
    if args.plot is not None:
        if baseline is None:
            plot.plot_significance_matrix(result, path=args.plot)
        else:
            deltas = compare(runs, metrics, per_query=True, **kwargs)
            plot.plot_deltas(deltas, path=args.plot)
    return 0
