"""``irm metrics [PATTERN]``: the metric names the other commands accept.

irm metrics                 # every metric: name, aliases, what it reads, its direction, summary
irm metrics ndcg            # names, aliases or summaries containing 'ndcg'
irm metrics 'P_*'           # a shell-style pattern over names and aliases
"""

from __future__ import annotations

import argparse
import fnmatch

import polars as pl

from polars_irmetrics.errors import UnknownMetricError
from polars_irmetrics.io.report import OUTPUT_FORMATS, OutputFormat, write_output
from polars_irmetrics.metrics.registry import list_metrics
from polars_irmetrics.metrics.spec import Metric

__all__ = ["add_parser", "metrics_table", "run"]

_EPILOG = """\
examples:
  irm metrics
  irm metrics ndcg
  irm metrics 'ndcg*'
  irm metrics --format markdown -o metrics.md

a name is used as NAME, NAME@K or NAME(param=value)@K, e.g. -m ndcg@10 -m map
-m "recall(denominator='capped')@10".
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``metrics`` subcommand."""
    p = sub.add_parser(
        "metrics",
        help="list the metric names, their aliases and what each measures",
        description="List the metrics: canonical name, aliases (ir_measures, trec_eval, "
        "ranx spellings), the tables each reads, which way is better (higher, lower, or "
        "'-' for neither, as compare and report read it), and a one-line summary.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=run)
    p.add_argument(
        "pattern",
        nargs="?",
        metavar="PATTERN",
        help="keep metrics whose name, an alias or the summary contains PATTERN (any case), "
        "or whose name or an alias matches it as a shell pattern ('ndcg*')",
    )
    p.add_argument(
        "--format",
        choices=[f for f in OUTPUT_FORMATS if f != "trec"],
        default=None,
        help="output format (default: the one -o FILE's suffix names, .parquet .csv .json "
        ".md .tex .html .txt, another suffix is refused; table on stdout)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (atomically), not stdout; its suffix picks the format",
    )


def _matches(metric: Metric, pattern: str) -> bool:
    names = [metric.name, *(alias.name for alias in metric.aliases)]
    lowered = pattern.lower()
    if any(c in pattern for c in "*?["):
        return any(fnmatch.fnmatchcase(n.lower(), lowered) for n in names)
    return any(lowered in text.lower() for text in [*names, metric.summary])


def metrics_table(pattern: str | None = None) -> pl.DataFrame:
    """One row per metric: ``name``, ``aliases``, ``reads``, ``better`` (its declared
    direction: ``higher``, ``lower`` or ``-`` where neither is, as
    :func:`~polars_irmetrics.compare` and :func:`~polars_irmetrics.report` read it) and
    ``summary`` (all String).

    Examples
    --------
    >>> from polars_irmetrics.cli.metrics import metrics_table
    >>> metrics_table("recip_rank").select("name", "reads", "better").row(0)
    ('mrr', 'run, judgments', 'higher')
    >>> metrics_table("logloss").select("name", "better").row(0)
    ('logloss', 'lower')
    """
    chosen = [m for m in list_metrics() if pattern is None or _matches(m, pattern)]
    if not chosen:
        raise UnknownMetricError(
            f"no metric matches {pattern!r}; run 'irm metrics' for every metric"
        )
    return pl.DataFrame(
        {
            "name": [m.name for m in chosen],
            "aliases": [", ".join(a.name for a in m.aliases) for m in chosen],
            "reads": [", ".join(m.reads) for m in chosen],
            "better": [_better(m) for m in chosen],
            "summary": [m.summary.strip().splitlines()[0] for m in chosen],
        },
        schema=dict.fromkeys(("name", "aliases", "reads", "better", "summary"), pl.String),
    )


def _direction(higher_is_better: bool | None) -> str:
    return "-" if higher_is_better is None else "higher" if higher_is_better else "lower"


def _better(metric: Metric) -> str:
    """The metric's direction, with each parameter value that turns it (as compare and
    report read it: ``rbo``'s upper bound ``kind='max'`` and its uncertainty
    ``kind='res'`` have none).

    >>> from polars_irmetrics.metrics.registry import get_metric
    >>> _better(get_metric("rbo"))
    "higher (kind='max': -; kind='res': -)"
    """
    turned = [
        f"{param.name}={value!r}: {_direction(direction)}"
        for param in metric.params
        for value, direction in param.directions.items()
        if direction != metric.higher_is_better
    ]
    plain = _direction(metric.higher_is_better)
    return f"{plain} ({'; '.join(turned)})" if turned else plain


def run(args: argparse.Namespace) -> int:
    """Run ``irm metrics``."""
    fmt: OutputFormat | None = args.format
    write_output(metrics_table(args.pattern), fmt, args.output)
    return 0
