"""``irm compare``: paired significance tests of several runs from the shell.

    irm compare --qrels qrels.txt bm25.txt dense.txt --baseline bm25 -m ndcg@10 -m map \\
        --test randomization --correction holm --format latex -o table.tex --plot deltas.png

Systems are named by file stem (the path when two stems clash). Errors print one line
on stderr (``irm: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_irmetrics.cli.flags import (
    add_column_flags,
    add_ids_flag,
    add_ranking_flags,
    ids_as_text,
    non_negative_int,
    ranking_options,
    refuse_repeated_runs,
    refuse_trec_columns,
    refuse_unread_formats,
)
from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.api import compare, recorded_per_query
from polars_irmetrics.comparison.frame import stack_runs
from polars_irmetrics.comparison.options import ALTERNATIVES, TESTS
from polars_irmetrics.comparison.publish import report
from polars_irmetrics.comparison.report import (
    REPORT_FORMATS,
    Markers,
    report_renderers,
    with_std,
)
from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.io.files import FORMATS, scan_qrels, scan_run
from polars_irmetrics.io.output import check_output, render_table, write_atomic, write_stdout
from polars_irmetrics.io.sources import STDIN
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

-o FILE picks the format by its suffix (.html .tex .md .txt .csv .json .parquet, as
irm evaluate; another suffix is refused) unless --format is given; every output
(-o, --plot) is checked before anything is computed, and written whole or not at
all. The .html report is one self-contained page: the table, the
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
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="two or more run files ('-' reads standard input, for one of them)",
    )
    p.add_argument(
        "--qrels",
        metavar="QRELS",
        help="judgments file; needed where a metric asked for reads the judgments "
        "(rnd, rkl and rrd read the runs and --groups only)",
    )
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
    p.add_argument(
        "--ci",
        choices=["t", "bootstrap"],
        help="interval method (default: t, or bootstrap after --test bootstrap)",
    )
    p.add_argument("--n-resamples", type=int, default=10_000, help="resamples (10000)")
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="random seed of the resampling tests (default 0)",
    )
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
        help="(default: the one -o FILE's suffix names, .parquet .csv .json .md .tex "
        ".html .txt, another suffix is refused; terminal on stdout)",
    )
    p.add_argument(
        "--markers",
        choices=["letters", "daggers"],
        default=None,
        help="the significance markers of a report (terminal, markdown, latex, html; "
        "default letters); refused for csv, json and parquet, which have none",
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
        "(each system's over the paired queries, population ddof=0, as ranx's "
        "return_std=True; the footnote still names the test; columns std and "
        "baseline_std in csv, json and parquet)",
    )
    add_column_flags(p)
    add_ranking_flags(p)
    p.add_argument("--plot", metavar="FILE", help="save a plot (PNG or SVG)")
    p.add_argument("--run-format", choices=FORMATS, default="auto", help="(auto)")
    p.add_argument("--qrels-format", choices=FORMATS, default="auto", help="(auto)")
    p.add_argument(
        "--groups",
        metavar="FILE",
        help="exposure metrics (ee_loss, awrf, rnd...): the document groups, one row per "
        "(document, group) with 'doc_id' and 'group'",
    )
    p.add_argument(
        "--target",
        metavar="FILE",
        help="awrf, awrf_ndcg: the target group distribution, 'group' and 'target'",
    )
    add_ids_flag(p, " (and the group names of --groups and --target)")


#: What --groups and --target hold, in messages.
_GROUPS = "document groups: Parquet, CSV, TSV or JSON lines with doc ids and a 'group' column"
_TARGET = "a target distribution: Parquet, CSV, TSV or JSON lines with 'group' and 'target'"


def _names(paths: Sequence[str]) -> list[str]:
    stems = [Path(p.rstrip("/")).name.split(".")[0] or p for p in paths]
    return stems if len(set(stems)) == len(stems) else list(paths)


def _curves(
    runs: dict[str, pl.LazyFrame],
    metrics: list[str],
    qrels: pl.LazyFrame | None,
    options: dict[str, Any] | None = None,
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
    names = [f"{family}@1..{k}" for family, k in ranges.items()]
    # the runs of one schema in one plan, of another in their own (compare's stacking:
    # nothing cast, each run ranked as it is alone), collected together
    parts = stack_runs(runs, "system").parts
    means = [
        evaluate(part, names, qrels=qrels, systems="system", **(options or {})) for part in parts
    ]
    frame = pl.concat([m.lazy() for m in means], how="vertical_relaxed").collect()
    order = pl.Enum(list(runs))
    return frame.sort(pl.col("system").cast(order))


#: The formats of the tidy result, without a report's markers.
_TIDY = ("csv", "json", "parquet")


def _check_outputs(args: argparse.Namespace) -> tuple[str, str | None]:
    """The report's format and the plot's, every output checked before anything is
    computed or written (a suffix that names no format, a folder, a missing or
    read-only folder, one file named twice): both are written, or neither."""
    fmt = check_output(
        args.output,
        args.format,
        default="terminal",
        flag="--format",
        renderers={**report_renderers(), "html": _no_page},
    )
    if args.output is None and fmt == "parquet":
        raise InvalidValueError(
            "--format parquet writes a binary file: name it with -o FILE.parquet"
        )
    if args.markers is not None and fmt in _TIDY:
        given = f"--format {fmt}" if args.format is not None else f"-o {args.output}"
        raise InvalidValueError(
            f"--markers {args.markers} marks the cells of a report (terminal, markdown, "
            f"latex, html), and {given} writes the tidy table, which has no markers: drop "
            "--markers, or write a report (e.g. --format markdown)"
        )
    plot_format = None if args.plot is None else plot.check_plot_path(args.plot)
    same = args.output is not None and args.plot is not None
    if same and Path(args.output).resolve() == Path(args.plot).resolve():
        raise InvalidValueError(
            f"-o {args.output} and --plot {args.plot} name the same file; name two files"
        )
    return fmt, plot_format


def _no_page(result: pl.DataFrame) -> bytes:  # pragma: no cover - replaced in run()
    raise InvalidValueError("the HTML page needs the runs")


def run(args: argparse.Namespace) -> int:
    """Run ``irm compare``; returns the exit status."""
    paths: list[str] = list(args.runs)
    if len(paths) < 2:
        raise InvalidValueError(f"irm compare needs two or more runs; got only {paths[0]}")
    refuse_repeated_runs(paths)
    refuse_unread_formats(args, args.qrels)
    fmt, plot_format = _check_outputs(args)
    names = _names(paths)
    for path in [*paths, *(p for p in (args.qrels, args.groups, args.target) if p)]:
        local = path != STDIN and "*" not in path and "://" not in path
        if local and not Path(path).exists():  # '-': standard input
            raise InvalidValueError(f"{path}: no such file")
    baseline = args.baseline
    if baseline is not None and baseline in paths:
        baseline = names[paths.index(baseline)]
    options = ranking_options(args)
    ids = {"query_id": args.query_id, "doc_id": args.doc_id}
    refuse_trec_columns(  # --groups and --target name their own columns
        args,
        [(path, args.run_format, "run") for path in paths]
        + ([] if args.qrels is None else [(args.qrels, args.qrels_format, "qrels")]),
    )
    runs: dict[str, pl.LazyFrame] = {
        name: scan_run(path, args.run_format, rank=args.rank, score=args.score, **ids)
        for name, path in zip(names, paths, strict=True)
    }
    qrels = (  # none: the metrics read no judgments (compare says so where one does)
        None
        if args.qrels is None
        else scan_qrels(args.qrels, args.qrels_format, relevance=args.relevance, **ids)
    )
    as_text = args.ids == "str"
    if as_text:  # every id as text, as irm evaluate --ids str reads them
        runs = {name: ids_as_text(run, list(ids.values())) for name, run in runs.items()}
        qrels = None if qrels is None else ids_as_text(qrels, list(ids.values()))
    kwargs = {
        **options,
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
    if args.groups is not None:
        groups = scan_run(args.groups, what=_GROUPS, required={"doc_id": "doc_id"})
        # the documents and the group names (every column) as text, with --ids str
        kwargs["groups"] = (
            ids_as_text(groups, groups.collect_schema().names()) if as_text else groups
        )
    if args.target is not None:
        target = scan_run(args.target, what=_TARGET, required={})
        names = [c for c in target.collect_schema().names() if c != "target"]
        kwargs["target"] = ids_as_text(target, names) if as_text else target
    metrics = list(args.metrics or _DEFAULT_METRICS)
    result = compare(runs, metrics, **kwargs)
    per_query = recorded_per_query(result)  # the per-query values, not evaluated again
    if args.std and per_query is not None:
        result = with_std(result, per_query)  # keeps compare's record: the same footnote
    markers: Markers = args.markers or "letters"
    renderers = report_renderers(markers=markers)
    if fmt == "html":
        page = report(
            result,
            per_query=per_query,
            curves=_curves(runs, metrics, qrels, options),
            markers=markers,
        )
        html = page.to_html().encode()
        renderers["html"] = lambda _: html
    # every output rendered in memory first, then each written whole (atomically)
    text = render_table(result, fmt, renderers=renderers)
    image = None
    if args.plot is not None and plot_format is not None:
        if baseline is None:
            figure = plot.plot_significance_matrix(result)
        else:
            figure = plot.plot_deltas(per_query if per_query is not None else result)
        image = plot.figure_bytes(figure, plot_format)
    if args.output is None:
        write_stdout(text)
    else:
        write_atomic(args.output, lambda handle: handle.write(text))
    if image is not None:
        write_atomic(args.plot, lambda handle: handle.write(image))
    return 0
