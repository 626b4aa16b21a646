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
import ast
import contextlib
import difflib
import os
import re
import shlex
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TextIO, cast

import polars as pl

from polars_irmetrics import errors
from polars_irmetrics.cli import ab as ab_cmd
from polars_irmetrics.cli import compare as compare_cmd
from polars_irmetrics.cli import fuse as fuse_cmd
from polars_irmetrics.cli import metrics as metrics_cmd
from polars_irmetrics.cli import trec_eval as trec_eval_cmd
from polars_irmetrics.cli.flags import (
    add_column_flags,
    add_ids_flag,
    add_ranking_flags,
    ids_as_text,
    non_negative_int,
    positive_int,
    refuse_repeated_runs,
    refuse_trec_columns,
    refuse_unread_formats,
)
from polars_irmetrics.cli.keywords import as_flags, flags_of
from polars_irmetrics.door.evaluate import Parsed, evaluate_tables
from polars_irmetrics.errors import DuplicateError, InvalidValueError, IrmError
from polars_irmetrics.expressions import rank_by_score
from polars_irmetrics.ground.buckets import beside_main, spill_guard
from polars_irmetrics.ground.debias import Debias
from polars_irmetrics.ground.lists import long_run, ranked_by
from polars_irmetrics.ground.options import EvalKwargs
from polars_irmetrics.ground.validate import ListOrder
from polars_irmetrics.io.files import (
    FORMATS,
    Flag,
    check_not_empty,
    detect_format,
    flagged_line,
    located_error,
    log_lines,
    look_swapped,
    refuse_log_text,
    repeated_line,
    sample_paths,
    scan_qrels,
    scan_queries,
    scan_run,
    source_files,
)
from polars_irmetrics.io.output import COMPRESSIONS, SUFFIXES_ACCEPTED, format_of
from polars_irmetrics.io.prefs import read_trec_prefs, read_trec_qrels_jg
from polars_irmetrics.io.report import OUTPUT_FORMATS, check_output_args, write_output
from polars_irmetrics.io.sources import STDIN, display_name
from polars_irmetrics.metrics.registry import DEFAULT_METRICS, MetricRequest, parse_metric_list
from polars_irmetrics.online.sessions import optional_columns

__all__ = ["main"]

Requests = list[tuple[str, MetricRequest]]

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
            "a judged query counts in the group its own value names (from the judgments "
            "and the run, --queries, or the run)",
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
        add_ranking_flags(p)
        p.add_argument(
            "--unretrieved",
            choices=("zero", "drop", "error"),
            default="zero",
            help="queries judged but not in a run: scored as an empty ranking, 0 in most "
            "metrics (default), drop or error",
        )
        p.add_argument(
            "--buckets",
            type=_buckets,
            metavar="N|auto|auto-memory",
            help="out of core: split the queries into N hash buckets on disk and evaluate "
            "them one at a time ('auto': one per 2M run rows); peak memory is about one "
            "bucket's, every row is read twice, the results are the same (default: "
            "auto-memory, one plan, or buckets when a Parquet run is larger than "
            "--memory-limit, half the memory)",
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
        p.add_argument(
            "--debias",
            type=_debias,
            metavar="IQR_COEF[:SEED]",
            help="RecTools' DebiasConfig: down-sample the judgments' popular items before "
            "the ranking metrics, e.g. 1.5 or 1.5:7 (iqr_coef, random_state; default seed 0)",
        )
        add_column_flags(p)
        _input_flags(p)


#: The columns ``irm evaluate`` names by flag (``--label y``), as irm.evaluate's keywords.
_COLUMN_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("clicked", "clicked", "an impression log's click column (click metrics)"),
    ("dwell", "dwell", "an impression log's dwell-time column"),
    ("converted", "converted", "an impression log's conversion column"),
    ("timestamp", "timestamp", "an impression log's click-time column"),
    ("label", "label", "prediction metrics (auc, logloss, rmse...): the label column"),
    ("prediction", "prediction", "prediction metrics: the prediction (probability, score) column"),
    ("features", "features", "beyond-accuracy metrics: the item features' vector column"),
)


def _input_flags(p: argparse.ArgumentParser) -> None:
    """The flags of irm.evaluate's other keywords: prediction, click and beyond-accuracy
    columns and tables, and the plan's options (one flag per keyword, named as it)."""
    for flag, default, text in _COLUMN_FLAGS:
        p.add_argument(
            f"--{flag}", default=default, metavar="COL", help=f"{text} (default: {default})"
        )
    p.add_argument(
        "--sample-weight",
        metavar="COL",
        help="prediction metrics: a column of non-negative row weights (default: none)",
    )
    p.add_argument(
        "--positive-label",
        type=_label_value,
        default=1,
        metavar="VALUE",
        help="prediction metrics: the label of a positive row (default 1; e.g. "
        "--positive-label yes; a number is read as a number)",
    )
    p.add_argument(
        "--labels",
        metavar="FILE",
        help="prediction metrics, two-table form: the true labels (query id, doc id and "
        "--label columns), joined to the run's predictions on the ids; read as runs are",
    )
    p.add_argument(
        "--unmatched",
        choices=("error", "drop"),
        default="error",
        help="with --labels: a prediction without a label, or a label without a "
        "prediction, is an error (default) or left out",
    )
    p.add_argument(
        "--interactions",
        metavar="FILE",
        help="beyond-accuracy metrics (novelty, catalog_coverage...): the interaction "
        "history, users as query ids and items as doc ids",
    )
    p.add_argument(
        "--item-features",
        metavar="FILE",
        help="beyond-accuracy metrics (intra_list_diversity...): the items' feature vectors",
    )
    p.add_argument(
        "--unseen-items",
        choices=("error", "drop", "recommenders"),
        default="error",
        help="beyond-accuracy metrics: a recommended item the interactions never saw is "
        "an error (default), left out, or counted as Microsoft Recommenders does",
    )
    p.add_argument(
        "--policy",
        metavar="FILE",
        help="off-policy estimators (ips, snips, dr...): the evaluation policy, one row per "
        "round and action (and position) with its probability 'prob', or (Parquet) one row "
        "per round (and position) with 'prob' a list indexed by action, as obp's",
    )
    p.add_argument(
        "--reward-model",
        metavar="FILE",
        help="off-policy estimators (dm, dr...): the reward model, one row per round and "
        "action (and position) with its estimated reward 'q_hat', or a list of them per "
        "round, in the policy's shape",
    )
    for flag, default, what in (
        ("--round-id", "round_id", "the round of a log of logged feedback"),
        ("--action", "action", "the logged action"),
        ("--reward", "reward", "the observed reward"),
        ("--propensity", "pscore", "the logging policy's probability of the logged action"),
        ("--position", "position", "the slot of a logged action (several per round)"),
    ):
        p.add_argument(
            flag,
            default=default,
            metavar="COLUMN",
            help=f"off-policy estimators: the column of {what} (default {default})",
        )
    p.add_argument(
        "--ci",
        type=float,
        metavar="LEVEL",
        help="off-policy estimators: add each estimate's interval at this level, e.g. 0.95",
    )
    p.add_argument(
        "--ci-method",
        choices=("bootstrap", "normal"),
        default="bootstrap",
        help="off-policy estimators: a percentile bootstrap (default) or a normal interval",
    )
    p.add_argument(
        "--n-bootstrap",
        type=positive_int,
        default=1000,
        metavar="N",
        help="off-policy estimators: the bootstrap's resamples (default 1000)",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="off-policy estimators: the bootstrap's seed (default 0)",
    )
    p.add_argument(
        "--reference",
        metavar="FILE",
        help="rank-similarity metrics (rbo, jaccard@k, kendall_tau@k...): the reference run "
        "each run is compared with; read as the runs are",
    )
    p.add_argument(
        "--propensities",
        metavar="FILE",
        help="propensity-scored metrics (ps_precision@k, ps_ndcg@k): one row per document "
        "(doc id) or per 'position', with its 'propensity' in (0, 1]",
    )
    p.add_argument(
        "--groups",
        metavar="FILE",
        help="exposure metrics (ee_loss, ee_disparity, ee_relevance, awrf, awrf_ndcg): the "
        "document groups, one row per (document, group) with the doc id column and 'group'",
    )
    p.add_argument(
        "--user-groups",
        metavar="FILE",
        help="user_mad@k (Elliot's UserMAD): the user clusters, one row per user with the "
        "query id column and 'group'",
    )
    p.add_argument(
        "--target",
        metavar="FILE",
        help="awrf, awrf_ndcg: the target group distribution, one row per group with "
        "'group' and 'target' (non-negative, summing to 1)",
    )
    p.add_argument(
        "--serendipity-relevance",
        metavar="COLUMN",
        help="beyond-accuracy metrics: the column of the interactions weighting each "
        "item's serendipity (default: every item relevant)",
    )
    p.add_argument(
        "--sample-id",
        default="sample",
        metavar="COLUMN",
        help="expected-exposure metrics: the run's column naming each sampled ranking of a "
        "stochastic policy (default sample; a run without it is one ranking)",
    )
    p.add_argument(
        "--jg",
        default="jg",
        metavar="COLUMN",
        help="the judgment-group column of --qrels-jg (default jg)",
    )
    p.add_argument(
        "--prefs",
        metavar="FILE",
        help="preference judgments for the prefs_* metrics (trec_eval -R prefs format)",
    )
    p.add_argument(
        "--qrels-jg",
        metavar="FILE",
        help="judgments with a judgment-group column for the *_avgjg metrics (trec_eval "
        "-R qrels_jg format)",
    )
    p.add_argument(
        "--judged-only",
        action="store_true",
        help="remove the run's unjudged documents before ranking (trec_eval -J)",
    )
    p.add_argument(
        "--memory-limit",
        type=_memory,
        metavar="SIZE",
        help="the memory the automatic plan may use: bytes or a size such as 4GiB "
        "(default: half the machine's)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="say on stderr which plan (one, or out of core) was chosen and why",
    )
    p.add_argument(
        "--partitioned-by",
        metavar="COL",
        help="a hive partition column of the run whose partitions hold whole queries: "
        "out of core, each partition is evaluated alone",
    )
    add_ids_flag(p, " (and the group names of --groups, --user-groups and --target)")


def _label_value(text: str) -> int | float | str:
    """``--positive-label``: an integer, else a number, else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _memory(text: str) -> int | str:
    """``--memory-limit``: bytes, or a size irm.evaluate reads (``4GiB``)."""
    return int(text) if text.isdigit() else text


def _debias(text: str) -> Debias:
    """``--debias``: ``IQR_COEF`` or ``IQR_COEF:SEED`` (checked by irm.evaluate).

    >>> _debias("1.5:7")
    Debias(iqr_coef=1.5, random_state=7)
    """
    coef, _, seed = text.partition(":")
    try:
        given = Debias(float(coef), int(seed) if seed else 0)
        given.check()  # its range, as the flag's: not irm.evaluate's debias=Debias(...)
    except (ValueError, InvalidValueError):
        raise argparse.ArgumentTypeError(
            "expected IQR_COEF or IQR_COEF:SEED, a finite number >= 0 and an integer seed "
            f">= 0, e.g. 1.5 or 1.5:7, got {text!r}"
        ) from None
    return given


def _buckets(text: str) -> int | str:
    """``--buckets``: a positive integer, ``auto`` or ``auto-memory`` (the default,
    which --memory-limit and --explain read), as irm.evaluate's ``buckets=``."""
    if text in ("auto", "auto-memory"):
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer, 'auto' or 'auto-memory', got {text!r}"
        )
    return value


def _run_names(paths: Sequence[str]) -> list[str]:
    stems = [Path(p.rstrip("/")).name.split(".")[0] or p for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    return list(paths)


#: irm.evaluate's keyword arguments, each a flag of ``irm evaluate`` of the same name.
_EVAL_KEYWORDS: tuple[str, ...] = tuple(
    sorted(EvalKwargs.__required_keys__ | EvalKwargs.__optional_keys__)
)


def _run_columns(args: argparse.Namespace, requests: Requests) -> dict[str, str]:
    """The columns a run file must have for the metrics' route (keyword: column): a
    prediction log needs its label and prediction, not a doc id."""
    routes = {request.route for _, request in requests}
    if routes == {"prediction"}:
        if args.labels is not None:
            return {
                "query_id": args.query_id,
                "doc_id": args.doc_id,
                "prediction": args.prediction,
            }
        one = {"label": args.label, "prediction": args.prediction}
        weight = {} if args.sample_weight is None else {"sample_weight": args.sample_weight}
        return {**one, **weight}
    if routes == {"online"}:  # an impression log: its sessions are the queries
        return {"query_id": args.query_id}
    if routes == {"ope"}:  # a log of logged feedback: rounds, actions, rewards
        return {"round_id": args.round_id, "action": args.action, "reward": args.reward}
    return {"query_id": args.query_id, "doc_id": args.doc_id}


def _one_order(frames: list[pl.LazyFrame], args: argparse.Namespace) -> list[pl.LazyFrame]:
    """Runs put together ranked one way: where some have a rank column (a list-shaped
    run: its positions) and others only scores (a TREC run), the latter get the ranks
    their scores give under trec_eval's tie-break, so that each run is scored as it
    would be alone (``--order auto``)."""
    ranked = [args.rank in frame.collect_schema() for frame in frames]
    if all(ranked) or not any(ranked):
        return frames
    rank = rank_by_score(args.score, args.doc_id).over(args.query_id).alias(args.rank)
    return [
        frame if has_rank or args.score not in frame.collect_schema() else frame.with_columns(rank)
        for frame, has_rank in zip(frames, ranked, strict=True)
    ]


def _swapped(error: IrmError, runs: list[str], qrels: str) -> IrmError:
    """The judgments' reading ``error``, with a hint where a run and the judgments look
    swapped (:func:`~polars_irmetrics.io.files.look_swapped`)."""
    run = next((run for run in runs if look_swapped(run, qrels)), None)
    if run is None:
        return error
    return type(error)(
        f"{error}; the files look swapped: {run} holds judgments and {qrels} a run: name "
        f"the run first and the judgments with --qrels (irm evaluate {qrels} --qrels {run})"
    )


def _read_inputs(
    args: argparse.Namespace, runs: list[str], qrels_source: str | None, requests: Requests
) -> tuple[pl.LazyFrame, dict[str, pl.LazyFrame | None]]:
    """The run (every file in the long form, one ``run`` per file when there are
    several) and the other tables irm.evaluate reads, from the flags."""
    ids = {"query_id": args.query_id, "doc_id": args.doc_id}
    formats = {"runs": args.run_format, "neighbors": args.run_format}
    formats |= {"reference": args.run_format, "qrels": args.qrels_format}
    others = [(source, formats.get(dest, "auto"), dest) for dest, source in _inputs(args)]
    refuse_trec_columns(
        args,
        [(path, args.run_format, "run") for path in runs]
        + ([] if qrels_source is None else [(qrels_source, args.qrels_format, "qrels")])
        + [one for one in others if one[2] not in ("runs", "qrels")],
    )
    needed = _run_columns(args, requests)
    columns = {**ids, "rank": args.rank, "score": args.score, "relevance": args.relevance}
    # each run in the long form first: a list-shaped run meets a long one
    # a text value's line is named (a label may be text: --positive-label yes)
    scores = {"rank": args.rank, "score": args.score}
    predicted = [c for c in (args.prediction, args.sample_weight) if c is not None]
    scanned = [
        scan_run(path, args.run_format, **ids, **scores, numbers=predicted, required=needed)
        for path in runs
    ]
    if {request.route for _, request in requests} == {"online"}:
        # an impression log's clicks (and the dwell, conversions a metric reads) that
        # came out as text: the first value that is none, with its file and line
        used = set().union(*optional_columns(requests).values())
        dwell = [args.dwell] * ("dwell" in used)
        flags = [args.clicked] + [args.converted] * ("converted" in used)
        for path, frame in zip(runs, scanned, strict=True):
            where = display_name(path)
            refuse_log_text(frame, where, log_lines([path]), numbers=dwell, flags=flags)
    ranks = [ranked_by(f.collect_schema(), doc_id=args.doc_id, rank=args.rank) for f in scanned]
    if all(isinstance(rank, ListOrder) for rank in ranks):  # list-shaped runs: their
        args.rank = ranks[0]  # ranks are the lists' positions, and messages say so
    frames = [long_run(frame, **columns) for frame in scanned]
    if len(runs) > 1:
        if args.order == "auto":
            frames = _one_order(frames, args)
        names = _run_names(runs)
        frames = [
            frame.with_columns(pl.lit(name).alias("run"))
            for frame, name in zip(frames, names, strict=True)
        ]
    tables: dict[str, pl.LazyFrame | None] = dict.fromkeys(
        (
            "qrels",
            "queries",
            "labels",
            "neighbors",
            "interactions",
            "item_features",
            "policy",
            "reward_model",
            "reference",
            "propensities",
            "groups",
            "target",
            "user_groups",
        )
    )
    if qrels_source is not None:
        try:
            tables["qrels"] = scan_qrels(
                qrels_source, args.qrels_format, relevance=args.relevance, **ids
            )
        except IrmError as error:
            raise _swapped(error, runs, qrels_source) from None
    if args.queries is not None:
        tables["queries"] = scan_queries(args.queries, query_id=args.query_id)
    if args.labels is not None:
        tables["labels"] = scan_qrels(
            args.labels, required={"query_id": args.query_id, "doc_id": args.doc_id,
                                   "label": args.label}, what=_LABELS, **ids,
        )  # fmt: skip
    if args.neighbors is not None:
        tables["neighbors"] = scan_run(args.neighbors, args.run_format, **ids, **scores)
    if args.reference is not None:
        reference = scan_run(args.reference, args.run_format, **ids, **scores)
        resolved = args.run_format
        if resolved == "auto":
            resolved = detect_format(args.reference, "a reference run")
        if resolved == "trec":  # one run: its tag names no system (--systems run_id)
            reference = reference.drop("run_id")
        tables["reference"] = reference
    if args.groups is not None:
        tables["groups"] = scan_run(
            args.groups, what=_GROUPS, required={"doc_id": args.doc_id}, **ids
        )
    if args.target is not None:
        tables["target"] = scan_run(args.target, what=_TARGET, required={}, **ids)
    if args.user_groups is not None:
        tables["user_groups"] = scan_run(
            args.user_groups, what=_USER_GROUPS, required={"query_id": args.query_id}, **ids
        )
    # the action column only in the long shape ('prob' a list indexed by action has none)
    rounds = {"round_id": args.round_id}
    if args.policy is not None:
        tables["policy"] = scan_run(args.policy, required=rounds, what=_POLICY)
    if args.reward_model is not None:
        tables["reward_model"] = scan_run(args.reward_model, required=rounds, what=_REWARD_MODEL)
    if args.propensities is not None:
        tables["propensities"] = scan_run(
            args.propensities, required={"propensity": "propensity"}, what=_PROPENSITIES
        )
    if args.interactions is not None:
        tables["interactions"] = scan_run(args.interactions, what=_INTERACTIONS, **ids)
    if args.item_features is not None:
        # the vector column (--features) or a category column: the metrics say which
        tables["item_features"] = scan_run(
            args.item_features, what=_ITEM_FEATURES, required={"doc_id": args.doc_id}, **ids,
        )  # fmt: skip
    if args.ids == "str":
        frames = [ids_as_text(frame, list(ids.values())) for frame in frames]
        tables = {
            name: None if table is None else ids_as_text(table, list(ids.values()))
            for name, table in tables.items()
        }
        # the group names too (every column of --groups and --user-groups, each of
        # --target but its shares), which the tables' kind checks name --ids str to match
        for name, numbers in (("groups", ()), ("user_groups", ()), ("target", ("target",))):
            table = tables[name]
            if table is not None:
                names = [c for c in table.collect_schema().names() if c not in numbers]
                tables[name] = ids_as_text(table, names)
    run = pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]
    judgments: dict[str, pl.LazyFrame | None] = {"prefs": None, "qrels_jg": None}
    for name, source in (("prefs", args.prefs), ("qrels_jg", args.qrels_jg)):
        if source is not None:
            check_not_empty(source, "trec", _PREFS if name == "prefs" else _QRELS_JG)
            reader = read_trec_prefs if name == "prefs" else read_trec_qrels_jg
            judgments[name] = reader(source).lazy().rename(ids)
    return run, {**tables, **judgments}


_LABELS = "labels: Parquet, CSV, TSV or JSON lines with the ids and the label"
_POLICY = (
    "an evaluation policy: Parquet, CSV, TSV or JSON lines with round_id, action, prob (or "
    "Parquet with round_id and prob a list indexed by action)"
)
_REWARD_MODEL = (
    "a reward model: Parquet, CSV, TSV or JSON lines with round_id, action, q_hat (or "
    "Parquet with round_id and q_hat a list indexed by action)"
)
_PROPENSITIES = (
    "propensities: Parquet, CSV, TSV or JSON lines with the doc id or 'position', and 'propensity'"
)
_INTERACTIONS = "interactions: Parquet, CSV, TSV or JSON lines with user and item ids"
_ITEM_FEATURES = "item features: Parquet with the item id and a vector or category column"
_TARGET = (
    "a target distribution: Parquet, CSV, TSV or JSON lines with 'group' and 'target' "
    "(and the query column for one per query)"
)
_GROUPS = "document groups: Parquet, CSV, TSV or JSON lines with doc ids and a 'group' column"
_USER_GROUPS = "user clusters: Parquet, CSV, TSV or JSON lines with query ids and a 'group' column"
_PREFS = "preference judgments (query_id jg jsg doc_id rel_level)"
_QRELS_JG = "judgments with groups (query_id jg doc_id relevance)"


def _options(args: argparse.Namespace, systems: list[str]) -> EvalKwargs:
    """irm.evaluate's keyword arguments from the flags, each under its own name."""
    given = {key: getattr(args, key) for key in _EVAL_KEYWORDS}
    given["by"] = list(args.by) or None
    given["systems"] = systems or None
    if args.buckets is None:
        given["buckets"] = "auto-memory"
    return cast(EvalKwargs, given)


def _run_evaluate(args: argparse.Namespace) -> int:
    runs: list[str] = list(args.runs)
    qrels_source: str | None = args.qrels
    if args.sample:
        if runs or qrels_source is not None:  # one source of runs: never one ignored
            named = "a run file" if runs else "--qrels"
            demo = args.command == "demo"
            raise InvalidValueError(
                f"{'irm demo' if demo else '--sample'} evaluates the bundled sample's runs "
                f"and judgments, and {named} was named too: "
                + (
                    "drop it, or use irm evaluate with run files and --qrels"
                    if demo
                    else "drop --sample, or the files"
                )
            )
        sample_runs, sample_qrels = sample_paths()
        runs = [str(p) for p in sample_runs]
        qrels_source = str(sample_qrels)
    if not runs:
        raise InvalidValueError("no run given: name one or more run files, or pass --sample")
    refuse_repeated_runs(runs)
    refuse_unread_formats(args, qrels_source, sample=args.sample)
    if args.queries is not None and not args.by:
        raise InvalidValueError(
            f"--queries {args.queries} places each query in its --by groups, and no --by "
            "was given: add --by COL (a column of the queries' table), or drop --queries"
        )
    check_output_args(args.format, args.output)  # before any work: -o's suffix and folder
    metrics = list(args.metrics or EVALUATE_DEFAULTS)
    if metrics == ["default"]:
        metrics = list(DEFAULT_METRICS)
    requests = parse_metric_list(metrics)  # once: the route picks the columns to read
    run, tables = _read_inputs(args, runs, qrels_source, requests)
    if len(runs) > 1 and "run" in args.systems:
        raise InvalidValueError(
            f"--systems run: the {len(runs)} run files are told apart by a 'run' column "
            "the command adds (each file's name), which is a system key already: drop "
            "--systems run"
        )
    systems = ["run", *args.systems] if len(runs) > 1 else list(args.systems)
    by = list(args.by)
    try:
        # --explain: the plan's choice, which irm.evaluate prints, on stderr in flags
        with (
            _Explained(_flags(build_parser(), args.command))
            if args.explain
            else (contextlib.nullcontext())
        ):
            plan = evaluate_tables(run, Parsed(requests), tables, _options(args, systems))
            plan = plan.lazy()
            # the elapsed-time line only where no bar was asked for or refused
            with _Elapsed(sys.stderr) if args.progress is None else contextlib.nullcontext():
                result = plan.collect()
    except DuplicateError as error:
        raise _read_as_one_run(error, runs) from None
    keys = [*systems, *by]
    if args.per_query:  # the row's id: a query, or an off-policy log's round (and slot)
        rounds = [c for c in (args.round_id, args.position) if c in result.columns]
        keys += [args.query_id] if args.query_id in result.columns else rounds
    write_output(result, args.format, args.output, keys=keys, metrics=metrics)
    return 0


_UNIQUE_HINT = re.compile(
    r"[:;,]? (?:keep one (?:row|judgment) per document, )?e\.g\. \.unique\(.*$"
)


def _read_as_one_run(error: DuplicateError, runs: list[str]) -> DuplicateError:
    """A duplicate in a run read from several files (a quoted glob, a folder): say that
    the files were read as one run, and how to pass them as systems, where the
    message's ``.unique(...)`` would merge them."""
    message = _one_line(str(error))
    if "the run" not in message:  # the judgments' own duplicates
        return error
    for source in runs:
        files = source_files(source)
        if len(files) > 1:
            text = _UNIQUE_HINT.sub("", message)
            return DuplicateError(
                f"{text}; {source} names {len(files)} files ({files[0]}, {files[1]}, ...), "
                "read as one run: to score each file as a system, name them one by one "
                "(an unquoted shell glob does), or pass --systems COL with a column that "
                "tells them apart"
            )
    return error


#: How irm.evaluate's ``explain=True`` line starts, and how the command writes it.
_EXPLAINED = ("polars_irmetrics.evaluate: ", "irm: explain: ")


class _Explained:
    """``--explain``: what irm.evaluate prints while the plan is built and run (its
    ``explain=True`` line: which plan was chosen and why) goes to standard error, line
    by line as it comes, with its keywords written as the command's flags (``pass
    --buckets auto``, ``over --memory-limit 1.0 GiB``), never among the results on
    standard output."""

    def __init__(self, flags: dict[str, argparse.Action]) -> None:
        self._flags = flags
        self._pending = ""
        self._redirect = contextlib.redirect_stdout(cast(TextIO, self))

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            prefix, ours = _EXPLAINED
            if line.startswith(prefix):
                line = ours + line[len(prefix) :].replace("memory_limit ", "--memory-limit ")
            print(as_flags(line, self._flags), file=sys.stderr)
        return len(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def __enter__(self) -> _Explained:
        self._redirect.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._redirect.__exit__(None, None, None)
        if self._pending:
            self.write("\n")


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


#: Every flag (by destination) of a file a command reads, in every subcommand: the one
#: list that standard input read once and an output that would replace an input are
#: checked against (a new input flag is added here, else tests/test_cli_round11.py fails).
INPUT_FLAGS: tuple[str, ...] = (
    "runs", "run", "log", "qrels", "neighbors", "queries", "labels", "reference",
    "interactions", "item_features", "policy", "reward_model", "propensities", "groups",
    "user_groups", "target", "prefs", "qrels_jg", "zscores",
)  # fmt: skip


def _inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The files a command reads (any subcommand's arguments), each with its flag's
    destination, in the order of :data:`INPUT_FLAGS` (a positional list one by one)."""
    found: list[tuple[str, str]] = []
    for dest in INPUT_FLAGS:
        given = getattr(args, dest, None)
        for source in given if isinstance(given, list) else [given]:
            if isinstance(source, str):
                found.append((dest, source))
    return found


#: How a data error names the table it found the fault in (the file is the command's).
_SIDES = (
    # an impression log given as the run names itself 'the log' (click metrics)
    ("run", re.compile(r"\b(?:of|in|from) the (?:run|log)\b|\bthe run (?:lists|has|holds)\b")),
    ("qrels", re.compile(r"\b(?:of|in|from) the judgments\b|\bthe judgments (?:list|have)\b")),
    ("judged", re.compile(r"\b(?:of|in|from) the judged table\b")),
    ("neighbors", re.compile(r"\b(?:of|in|from) the neighbors\b")),
    ("queries", re.compile(r"\bnot found in the queries\b")),  # --queries' missing column
    ("reference", re.compile(r"\b(?:of|in|from) the reference\b")),
)


#: An option refused because no metric asked for reads it (``depth=5 is not read by
#: metric 'num_rel': ...``, ``memory_limit='1GB' is read only by buckets=...``): the
#: fault is the flag's, not a file's, though the reason may name the run or the judgments.
_UNREAD = re.compile(r"[A-Za-z_]\w*=[^:]*? is (?:not read|read only) by ")


#: The words by which messages name a table (``of the run``, ``a run file``), not a file.
_TABLE_WORDS = re.compile(r"\b(?:the|a|an) (?:run|log|judgments|judged table|neighbors)\b")


def _names_file(message: str, name: str) -> bool:
    """Whether ``message`` names the file ``name`` already: among the names that lead it
    (``run, line 3: ...``, ``run.txt, qrels.txt: ...``), or elsewhere as a word of its
    own. A bare name such as trec_eval's ``run`` is also a word of the messages
    themselves (``column 'doc_id' of the run: ...``), which does not count.

    >>> _names_file("column 'doc_id' of the run: query 'q1' has 1 repeated listing(s)", "run")
    False
    >>> _names_file("run, line 3: score 'x' is not a number", "run")
    True
    >>> _names_file("b.parquet: no column 'x', which a.parquet has", "a.parquet")
    True
    """
    leading = message.split(": ", 1)[0]
    if name in (part.strip() for part in leading.split(",")):
        return True
    pattern = rf"(?<![\w.\-/]){re.escape(name)}(?![\w\-/]|\.\w)"
    return re.search(pattern, _TABLE_WORDS.sub("", message)) is not None


def _with_source(message: str, args: argparse.Namespace) -> str:
    """A data error found while the command ran (``column 'doc_id' of the run: query
    'q1' has ...``), led by the file behind the table it names, where the command
    read one run file (several: each a system, named by the message) and the message
    does not name the file already.

    >>> import argparse
    >>> args = argparse.Namespace(runs=["run.txt"], qrels="qrels.txt")
    >>> _with_source("column 'doc_id' of the run: query 'q1' has 1 repeated listing(s)", args)
    "run.txt: column 'doc_id' of the run: query 'q1' has 1 repeated listing(s)"
    >>> _with_source("column 'q' is Int64 in the run and String in the judgments", args)
    "run.txt, qrels.txt: column 'q' is Int64 in the run and String in the judgments"
    >>> _with_source("column 'doc_id' of the run: query 'q1' has 1 repeated listing(s)",
    ...     argparse.Namespace(run="run", qrels="qrels"))
    "run: column 'doc_id' of the run: query 'q1' has 1 repeated listing(s)"
    >>> _with_source("unknown metric 'x'", args)
    "unknown metric 'x'"

    An option refused as unread is no fault of a file, whatever table its reason names:

    >>> _with_source("depth=5 is not read by metric 'num_rel': a count of the judgments", args)
    "depth=5 is not read by metric 'num_rel': a count of the judgments"
    """
    if _UNREAD.match(message):
        return message
    runs = _run_files(args)
    files = {
        "run": runs[0] if len(runs) == 1 else None,
        "qrels": getattr(args, "qrels", None),
        "neighbors": getattr(args, "neighbors", None),
        "queries": getattr(args, "queries", None),
        "reference": getattr(args, "reference", None),
    }
    if any(isinstance(f, str) and _names_file(message, f) for f in files.values()):
        return message
    if files["qrels"] is None:  # a judged table: the run's own rows carry the labels
        files["judged"] = files["run"]
    named = [
        str(files[side])
        for side, pattern in _SIDES
        if isinstance(files.get(side), str) and files[side] != STDIN and pattern.search(message)
    ]
    if not named:  # the prediction metrics name a column alone: the file that holds it
        named = [f for f in [_prediction_file(message, args, files["run"])] if f is not None]
    return f"{', '.join(named)}: {message}" if named else message


#: The relevance column a run read as a judged table lacks (no --qrels was given).
_NO_RELEVANCE = re.compile(
    r"^column (?P<column>'[^']*') not found in the judged table"
    r"(?: \(its columns: (?P<columns>[^)]*)\))?"
)


def _without_qrels(message: str, args: argparse.Namespace) -> str | None:
    """The refusal of runs without judgments (no ``--qrels``), read as judged tables
    that lack the relevance column, where several run files were given (the message
    names none): the files given, and the flag the command needs; None otherwise.

    >>> args = argparse.Namespace(command="compare", runs=["a.run", "b.run"], qrels=None)
    >>> print(_without_qrels("column 'relevance' not found in the judged table (its "
    ...     "columns: 'query_id', 'doc_id', 'score'); pass --qrels QRELS ...", args))
    ... # doctest: +NORMALIZE_WHITESPACE
    a.run, b.run: irm compare needs the judgments (--qrels QRELS) to compute these
    metrics, and none was given: the runs hold no column 'relevance' (their columns:
    'query_id', 'doc_id', 'score'); pass --qrels FILE (e.g. --qrels qrels.txt), or add
    the relevance column to every run (name it with --relevance COL)
    """
    found = _NO_RELEVANCE.match(message)
    runs = _run_files(args)
    if found is None or getattr(args, "qrels", None) is not None or len(runs) < 2:
        return None
    columns = f" (their columns: {found['columns']})" if found["columns"] else ""
    return (
        f"{', '.join(runs)}: irm {args.command} needs the judgments (--qrels QRELS) to "
        f"compute these metrics, and none was given: the runs hold no column "
        f"{found['column']}{columns}; pass --qrels FILE (e.g. --qrels qrels.txt), or add the "
        "relevance column to every run (name it with --relevance COL)"
    )


def _prediction_file(message: str, args: argparse.Namespace, run: str | None) -> str | None:
    """The file behind a prediction metric's message about its label, prediction or
    weight column (``column 'prediction' has dtype String; ...``), which names no
    table: the labels of ``--labels`` where given, else the run.

    >>> args = argparse.Namespace(label="label", prediction="p", sample_weight=None,
    ...                           labels="labels.csv")
    >>> _prediction_file("column 'label' holds strings, and rmse ...", args, "run.csv")
    'labels.csv'
    >>> _prediction_file("column 'p' has dtype String; ...", args, "run.csv")
    'run.csv'
    >>> _prediction_file("column 'x' has dtype String", args, "run.csv") is None
    True
    """
    label, labels = getattr(args, "label", None), getattr(args, "labels", None)
    owners = {
        getattr(args, "prediction", None): run,
        getattr(args, "sample_weight", None): run,
        label: labels if labels is not None else run,
    }
    for column, owner in owners.items():
        ours = column is not None and message.startswith(f"column {column!r} ")
        if ours and owner not in (None, STDIN):
            return owner
    return None


def _stdin_once(args: argparse.Namespace) -> None:
    if [source for _, source in _inputs(args)].count(STDIN) > 1:
        raise InvalidValueError(
            "standard input ('-') can only be read once: name one file '-' and the others "
            "by their paths"
        )


#: The flags of a command's outputs (by destination), each with the flag it is given by.
_OUTPUT_FLAGS = (("output", "-o"), ("plot", "--plot"))
#: How an input is named in the message of an output that would replace it.
_INPUT_ROLES = {"runs": "the run", "run": "the run", "log": "the log", "qrels": "the judgments"}


def _same_file(output: str, source: str) -> bool:
    """Whether writing ``output`` would replace the input file ``source`` (the same
    file, by its links, or the same path where neither exists yet)."""
    try:
        if os.path.exists(output) and os.path.exists(source):
            return os.path.samefile(output, source)
    except OSError:
        return False
    return os.path.realpath(output) == os.path.realpath(source)


def _input_flag(role: str, flags: dict[str, argparse.Action]) -> str:
    """How a message names the input of destination ``role``: ``the run``, ``the
    judgments``..., else its flag as the command spells it (``--Zscore`` for
    trec-eval's ``zscores``, whose destination is no flag's name)."""
    if role in _INPUT_ROLES:
        return _INPUT_ROLES[role]
    action = flags.get(role)
    spelled = [] if action is None else list(action.option_strings)
    long = [flag for flag in spelled if flag.startswith("--")]
    return (long or spelled or [f"--{role.replace('_', '-')}"])[0]


def _outputs_not_inputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """An output (-o, --plot) naming a file the command reads is refused before
    anything is read or computed: writing it would replace the input (an output that
    is no regular file, such as /dev/stdout, is streamed, not replaced)."""
    flags = _flags(parser, args.command)
    for dest, flag in _OUTPUT_FLAGS:
        output = getattr(args, dest, None)
        if not isinstance(output, str) or output == STDIN:
            continue
        if os.path.exists(output) and not os.path.isfile(output):
            continue
        for role, source in _inputs(args):
            if source == STDIN or "://" in source:
                continue
            try:
                files = source_files(source)
            except IrmError:  # a folder that cannot be listed: its reader names it
                continue
            for path in files:
                if _same_file(output, path):
                    named = _input_flag(role, flags)
                    shown = source if path == source else f"{path}, of {source}"
                    raise InvalidValueError(
                        f"{flag} {output} names an input too ({named} {shown}), which "
                        "writing it would replace: name another output file"
                    )


def _format_as_named(args: argparse.Namespace) -> None:
    """``--format`` that contradicts the format ``-o FILE``'s suffix names is refused
    before anything is read (``--format csv -o out.parquet`` wrote CSV text under a
    Parquet name): ``--format`` names the format of a file whose suffix names none
    (``-o means.out``, ``.txt``), it never writes a file its name misnames."""
    fmt, output = getattr(args, "format", None), getattr(args, "output", None)
    if not isinstance(fmt, str) or not isinstance(output, str) or output == STDIN:
        return
    named = format_of(output)
    if named is None or named == fmt:
        return
    path = Path(output)
    packed = path.suffix if path.suffix.lower() in COMPRESSIONS and fmt != "parquet" else ""
    base = path.with_suffix("") if path.suffix.lower() in COMPRESSIONS else path
    suffix = next((s for s, f in SUFFIXES_ACCEPTED.items() if f == fmt), ".txt")
    example = f"{base.with_suffix(suffix)}{packed}"
    raise InvalidValueError(
        f"--format {fmt} contradicts -o {output}, whose suffix names {named}: drop "
        f"--format to write {named}, or name the file for {fmt} (e.g. -o {example})"
    )


#: A duplicate the checks refused: its table, its query (text quoted, a number bare)
#: and what it says of it, up to its note on what is counted (``column 'doc_id' of the
#: judgments: query 'q1' has 1 repeated judgment(s) (each of a document judged before
#: in the query); keep one ...``; the run's ``has 1 repeated listing(s) (each of a
#: document listed before in the query); ...``).
_DUPLICATE = re.compile(
    r"^column '[^']*' of the (?P<side>run|judgments): query "
    r"(?:'(?P<text>[^']*)'|(?P<number>-?\d+))(?P<said>(?: \([^)]*\))? has \d+ "
    r"repeated (?:listing|judgment)\(s\))"
)


#: The system a message of several run files names: irm evaluate's ``run='x'``, irm
#: compare's ``system='x'`` (each file's stem, or its path where two stems clash).
_SYSTEM = re.compile(r"\((?:run|system)='([^']*)'")


#: irm.fuse's refusal of a run listing a document twice: the run's name (a file given),
#: the document and the query (text quoted, a number bare).
_FUSED_TWICE = re.compile(
    r"^run '(?P<run>[^']*)' lists document '(?P<doc>[^']*)' \d+ times in query "
    r"(?:'(?P<text>[^']*)'|(?P<number>-?\d+)); "
)


def _fused_twice(found: re.Match[str], args: argparse.Namespace) -> str | None:
    """:data:`_FUSED_TWICE`'s run file and the line (row) that repeats the document,
    with a file's fix; None where the run is no one file given or no line repeats."""
    sources = [r for r in _run_files(args) if found["run"] in (r, display_name(r))]
    if len(sources) != 1:
        return None
    repeat = _repeat_in(sources[0], found, args)
    if repeat is None or repeat.doc != found["doc"]:
        return None
    return (
        f"{repeat.place}: query {repeat.query} lists document {repeat.doc!r} again (first "
        f"on {repeat.first}); a run may list a document once per query: drop the repeated "
        f"{repeat.unit}"
    )


class _Repeat(NamedTuple):
    """Where one file repeats a query's document (:func:`_repeat_in`), as messages say
    it: the file and line (or row), the query (text quoted, a number bare), the
    document, the line (row) of its first listing, and the unit (``line``, ``row``)."""

    place: str
    query: str
    doc: str
    first: str
    unit: str


def _side_file(side: str, said: str, args: argparse.Namespace) -> str | None:
    """The file behind the table a message names (``side``: ``'run'`` or
    ``'judgments'``): the judgments file, the one run file, or among several the run
    file of the system ``said`` names (``(run='bm25')``, by its stem); None where none
    is known."""
    runs = _run_files(args)
    source = getattr(args, "qrels", None) if side == "judgments" else None
    if side == "run" and len(runs) == 1:
        source = runs[0]
    system = _SYSTEM.search(said)
    if side == "run" and len(runs) > 1 and system is not None:
        # several run files: the system the message names is a file's (by its stem)
        names = _run_names(runs)
        source = runs[names.index(system[1])] if system[1] in names else None
    return source if isinstance(source, str) else None


def _place(source: str, unit: str, number: int) -> str:
    """Where in ``source`` a message points: ``run.csv, line 3``, ``qrels.parquet, row 2
    (counted from 0)``, ``run.csv, record 3 (counted from 1 after the header)``."""
    counted = {"row": " (counted from 0)", "record": " (counted from 1 after the header)"}
    return f"{display_name(source)}, {unit} {number}{counted.get(unit, '')}"


def _repeat_in(source: str, found: re.Match[str], args: argparse.Namespace) -> _Repeat | None:
    """The line (row) of ``source`` that repeats a document of the query ``found``
    names (its ``text`` or ``number`` group), read with the command's id columns
    (:func:`~polars_irmetrics.io.files.repeated_line`); None where none repeats."""
    query = found["text"] if found["text"] is not None else found["number"]
    columns = {
        "query_id": getattr(args, "query_id", None) or "query_id",
        "doc_id": getattr(args, "doc_id", None) or "doc_id",
    }
    where = repeated_line(source, query, **columns)
    if where is None:
        return None
    line, first, doc, unit = where
    return _Repeat(
        place=_place(source, unit, line),
        query=repr(query) if found["text"] is not None else query,
        doc=doc,
        first=f"{unit} {first}",
        unit=unit,
    )


def _run_files(args: argparse.Namespace) -> list[str]:
    """The run files a command was given (``runs``, or trec-eval's one ``run``)."""
    given = [*(getattr(args, "runs", None) or []), getattr(args, "run", None)]
    return [r for r in given if isinstance(r, str)]


def _repeated(message: str, args: argparse.Namespace) -> str | None:
    """A duplicate the checks refused in a TREC text file the command read (the
    judgments, or the run file of the system it names), as the file and the line that
    repeats the pair (:func:`repeated_line`), and the fix as a file's (not the Python
    ``.unique(...)`` of the library's message); None where the file is a table or no
    line of the query repeats one.

    >>> import argparse, pathlib, tempfile
    >>> message = ("column 'doc_id' of the judgments: query 'q1' has 1 repeated judgment(s) "
    ...     "(each of a document judged before in the query); keep one judgment per "
    ...     "document, e.g. .unique(['query_id', 'doc_id'])")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("q1 0 d1 1\\nq1 0 d1 0\\n")
    ...     found = _repeated(message, argparse.Namespace(runs=["run.txt"], qrels=str(path)))
    >>> print(found.replace(tmp + "/", ""))  # doctest: +NORMALIZE_WHITESPACE
    qrels.txt, line 2: query 'q1' has 1 repeated judgment(s) (document 'd1' again, first
    on line 1); keep one judgment per query and document: drop or merge the repeated line

    The run's, by the line of the query's first repeated listing:

    >>> message = ("column 'doc_id' of the run: query 'q1' has 2 repeated listing(s) (each "
    ...     "of a document listed before in the query); each (query, document) pair may "
    ...     "appear once (trec_eval refuses such runs too): keep one row per document, e.g. "
    ...     ".unique(['query_id', 'doc_id'])")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.txt"
    ...     _ = path.write_text("q1 Q0 d1 1 3 r\\nq1 Q0 d2 2 2 r\\nq1 Q0 d1 3 1 r\\n"
    ...         "q1 Q0 d1 4 0 r\\n")
    ...     found = _repeated(message, argparse.Namespace(runs=[str(path)], qrels=None))
    >>> print(found.replace(tmp + "/", ""))  # doctest: +NORMALIZE_WHITESPACE
    run.txt, line 3: query 'q1' has 2 repeated listing(s) (document 'd1' again, first on
    line 1); each (query, document) pair may appear once (trec_eval refuses such runs
    too): drop the repeated line
    """
    fused = _FUSED_TWICE.match(message)
    if fused is not None:
        return _fused_twice(fused, args)
    found = _DUPLICATE.match(message)
    if found is None:
        return None
    source = _side_file(found["side"], found["said"], args)
    if source is None:
        return None
    repeat = _repeat_in(source, found, args)
    if repeat is None:
        return None
    fix = (
        f"keep one judgment per query and document: drop or merge the repeated {repeat.unit}"
        if found["side"] == "judgments"
        else "each (query, document) pair may appear once (trec_eval refuses such runs "
        f"too): drop the repeated {repeat.unit}"
    )
    return (
        f"{repeat.place}: query {repeat.query}{found['said']} (document {repeat.doc!r} "
        f"again, first on {repeat.first}); {fix}"
    )


#: The checks' refusal of a value of one query (ground.validate.RUN_FLAGS: a null id,
#: rank, score or label, a NaN score, a rank below 1), whose fix is Python's.
_FLAGGED = re.compile(
    r"^(?P<said>column '(?P<column>[^']*)' of the (?P<side>run|judgments) has \d+ "
    r"(?:(?P<kind>null|NaN) value\(s\)|rank\(s\) below 1|(?P<label>label\(s\)) that are "
    r"NaN, infinite, [^;]*?) in query "
    r"(?:'(?P<text>[^']*)'|(?P<number>-?\d+))(?P<system> \([^)]*\))?); "
    r"(?P<why>[^:]*): (?P<fix>.*)$"
)
#: The same refusal of a null query id (ground.validate.null_key_error).
_NULL_KEY = re.compile(
    r"^(?P<said>column '(?P<column>[^']*)' of the (?P<side>run) has null values); "
    r"(?P<why>[^:]*): (?P<fix>.*)$"
)
#: What :func:`~polars_irmetrics.io.files.flagged_line` looks for, by the refusal.
_FLAG_OF: dict[str, Flag] = {"null": "null", "NaN": "nan", "below": "below", "label(s)": "label"}
#: The field (from 0) of a TREC run's or qrels' line that holds a column.
_TREC_FIELDS = {("run", "score"): 4, ("judgments", "relevance"): 3}
#: Each refusal's fix as a file's user makes it (the library's is Python's).
_FLAG_FIXES = {
    "null": "fill it in or drop the line",
    "NaN": "write a number there (-inf ranks the document last) or drop the line",
    "below": "number the ranks from 1 (add 1 to 0-based ranks)",
    "label(s)": "fix or drop the line, or rescale the file's labels",
}


def _flagged_message(message: str, args: argparse.Namespace) -> str | None:
    """A value of one query the checks refused in a file the command read (a null id,
    rank, score or label, a NaN score, a rank below 1, a label out of range), as the
    file and the first line holding one
    (:func:`~polars_irmetrics.io.files.flagged_line`), with the fix as a file's (not
    the library's Python), in the first file of a pattern or folder that holds one;
    None where the file is not known (a URL) or no line holds one: the library's
    message is kept then. Standard input's lines are named as a file's (``<stdin>,
    line 3``: its bytes are kept when it is read).

    >>> import argparse, pathlib, tempfile
    >>> message = ("column 'score' of the run has 1 NaN value(s) in query 'q1'; NaN cannot "
    ...     "be ranked: replace them, e.g. pl.col('score').fill_nan(float('-inf'))")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.csv"
    ...     _ = path.write_text("query_id,doc_id,score\\nq1,d1,1\\nq1,d2,NaN\\n")
    ...     found = _flagged_message(message, argparse.Namespace(runs=[str(path)]))
    >>> print(found.replace(tmp + "/", ""))  # doctest: +NORMALIZE_WHITESPACE
    run.csv, line 3: column 'score' of the run has 1 NaN value(s) in query 'q1'; NaN
    cannot be ranked: write a number there (-inf ranks the document last) or drop the line
    """
    found = _FLAGGED.match(message)
    match = found or _NULL_KEY.match(message)
    if match is None:
        return None
    column, side = match["column"], match["side"]
    source = _side_file(side, "" if found is None else found["system"] or "", args)
    if source is None:
        return None
    kind = "null" if found is None else found["kind"] or found["label"] or "below"
    query = None
    if found is not None:
        query = found["text"] if found["text"] is not None else found["number"]
    # a pattern or folder of files: the first file (in name order) holding one
    for path in source_files(source):
        where = flagged_line(
            path,
            column,
            _FLAG_OF[kind],
            query,
            query_id=getattr(args, "query_id", None) or "query_id",
            trec_field=_TREC_FIELDS.get((side, column)),
        )
        if where is not None:
            source = path
            break
    else:
        return None
    line, unit = where
    fix = _FLAG_FIXES[kind].replace("the line", f"the {unit}")  # a Parquet file's row
    return f"{_place(source, unit, line)}: {match['said']}; {match['why']}: {fix}"


def _located(args: argparse.Namespace) -> str | None:
    """The file and line behind polars' error about a line it could not decode or with
    more fields than its header, or the file and column of a Parquet page it could not
    decode (its own message names neither): the first of the command's inputs with
    such a fault (:func:`~polars_irmetrics.io.files.located_error`)."""
    for source in dict.fromkeys(source for _, source in _inputs(args)):
        found = located_error(source)
        if found is not None:
            return str(found)
    return None


#: A value that starts with a minus sign and is no flag: a number, or a comma-separated
#: list of numbers (no flag of ``irm`` starts with a digit or ``-.``).
_NEGATIVE_NUMBERS = re.compile(r"^-\.?\d[\d.,eE+\-]*$")


#: argparse's refusal of a flag's value of the wrong type (``invalid int value:
#: 'abc'``), said as what the flag takes (``expected an integer, got 'abc'``).
_ARGPARSE_TYPE = re.compile(r"invalid (?P<type>int|float) value: (?P<value>'.*')$")
_TYPE_WORDS = {"int": "an integer", "float": "a number"}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, exit status 2:
    ``irm evaluate: error: argument --seed: expected an integer, got 'abc'``, and where to
    read the flags, without the usage block. Its subcommands' parsers are of this class
    too (``add_subparsers`` makes them of the parser's own class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # a flag's value that starts with a minus sign and is a number, or a list of
        # them (--weights -1,2, --relevance-level -1e-3), is the flag's value, as
        # argparse reads -1 or -0.5: its own pattern would take it for an unknown flag
        # and refuse the flag as "expected one argument"
        self._negative_number_matcher = _NEGATIVE_NUMBERS

    def error(self, message: str) -> NoReturn:
        line = _ARGPARSE_TYPE.sub(
            lambda found: f"expected {_TYPE_WORDS[found['type']]}, got {found['value']}",
            _one_line(message),
        )
        self.exit(2, f"{self.prog}: error: {line} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``irm`` argument parser."""
    parser = _Parser(
        prog="irm",
        description="Evaluate search and recommendation runs with polars_irmetrics.",
        epilog="run 'irm COMMAND --help' for a command's flags and examples",
    )
    # its parsers are _Parser's (the parser's own class): one-line usage errors
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", required=True),
    )
    _evaluate_parser(sub)
    trec_eval_cmd.add_parser(sub)
    ab_cmd.add_parser(sub)
    compare_cmd.add_parser(sub)
    fuse_cmd.add_parser(sub)
    metrics_cmd.add_parser(sub)
    return parser


#: The longest message printed; longer ones (a whole malformed line, a long list of
#: ids) are cut in the middle (:func:`_one_line`).
_MAX_MESSAGE = 600
#: The characters kept of a cut message's start (the file, the subject); the rest of
#: :data:`_MAX_MESSAGE` is kept of its end (the fix or the advice).
_MESSAGE_HEAD = 200


def _command_parser(
    parser: argparse.ArgumentParser, command: str | None
) -> argparse.ArgumentParser:
    """The parser of ``irm COMMAND`` (``parser`` itself where there is none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            found: argparse.ArgumentParser = action.choices[command]
            return found
    return parser


def _flags(parser: argparse.ArgumentParser, command: str | None) -> dict[str, argparse.Action]:
    """The flags of ``command`` (``irm COMMAND``) by their destination."""
    found = _command_parser(parser, command)
    return {} if found is parser else flags_of(found)


def _one_line(text: str) -> str:
    """The first line of ``text``; one longer than :data:`_MAX_MESSAGE` cut in the
    middle, at spaces where there are some, so that its start (the file, the line, the
    subject) and its end (the fix, the advice) are both printed: a warning that lists
    many ids ends with what to do about them.

    >>> cut = _one_line("start " + "id " * 400 + "the fix")
    >>> cut.startswith("start id "), cut.endswith(" id the fix"), " … " in cut
    (True, True, True)
    >>> len(cut) <= _MAX_MESSAGE
    True
    """
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) <= _MAX_MESSAGE:
        return line
    head, tail = line[:_MESSAGE_HEAD], line[_MESSAGE_HEAD - _MAX_MESSAGE + 3 :]
    # whole words: the head up to its last space, the tail from its first
    head = head[: head.rfind(" ")] if " " in head else head
    tail = tail[tail.find(" ") + 1 :] if " " in tail else tail
    return f"{head} … {tail}"


#: A Python cast of the ids in a message, where the command has ``--ids str``.
_ID_CAST = re.compile(
    r"e\.g\. pl\.col\((['\"])(?P<column>[^'\"]*)\1\)\.cast\(pl\.String\)(?: on both)?"
)


#: The library's Python calls a message suggests, as the commands that do the same.
_LIST_METRICS = "irm.list_metrics()"
_EVALUATE_CALL = re.compile(
    r"irm\.evaluate\((?P<table>[a-z_]+), (?P<metrics>\[[^\]]*\])"
    r"(?P<keywords>(?:, [a-z_]+=\.\.\.)*)\)"
)


_FUSE_CALL = re.compile(r"\bfuse\(runs, method='(?P<method>[\w-]+)', (?P<param>\w+)=\.\.\.\)")


def _fuse_command(found: re.Match[str]) -> str:
    """``fuse(runs, method='rbc', phi=...)`` as ``irm fuse`` is typed."""
    method, param = found.group("method"), found.group("param")
    return f"irm fuse RUN RUN --method {method} --param {param}=..."


def _evaluate_command(found: re.Match[str]) -> str:
    """``irm.evaluate(run, ['ndcg@10'], qrels=...)`` as ``irm evaluate`` is typed
    (``irm evaluate RUN --qrels QRELS -m ndcg@10``; ``irm.evaluate(log, ['ips'],
    policy=...)``: ``irm evaluate LOG --policy FILE -m ips``), each keyword as the flag
    of ``irm evaluate`` that sets it; left as written where one has no flag."""
    try:
        metrics = ast.literal_eval(found.group("metrics"))
    except (ValueError, SyntaxError):
        return found.group(0)
    flags = _flags(build_parser(), "evaluate")
    given = []
    for keyword in re.findall(r"([a-z_]+)=", found.group("keywords")):
        action = flags.get(keyword)
        if action is None:
            return found.group(0)
        given.append(f" {action.option_strings[-1]} {action.metavar or keyword.upper()}")
    asked = "".join(f" -m {m}" for m in metrics if isinstance(m, str))
    return f"irm evaluate {found.group('table').upper()}{''.join(given)}{asked}"


def _keys(args: argparse.Namespace) -> list[str]:
    """The command's ``--by`` keys (none where it takes no ``--by``)."""
    return [str(key) for key in getattr(args, "by", None) or []]


def _in_words(
    message: str, parser: argparse.ArgumentParser, command: str | None, keys: Sequence[str] = ()
) -> str:
    """An error's or a warning's message as the command's user reads it: its Python
    keywords written as the command's flags, and the library's calls it suggests as
    the commands that do the same (``irm metrics``, ``irm evaluate``). A cast of a
    column is ``--ids str`` where that flag casts it: not for the ``--by`` ``keys``,
    which it leaves as they are."""
    flags = _flags(parser, command)
    if "ids" in flags:

        def as_flag(found: re.Match[str]) -> str:
            if found.group("column") in keys:  # --ids str casts no segment key
                return found.group(0)
            return "e.g. --ids str (every id of every file read as text)"

        message = _ID_CAST.sub(as_flag, message)
    message = message.replace(_LIST_METRICS, "'irm metrics'")
    message = _SEMICOLON_FIX.sub(_SEMICOLON_WORDS, message)
    message = _FLAG_CAST.sub(_flag_words, message)
    message = _COLUMN_CAST.sub(_column_words, message)
    message = _SPELLING_CALL.sub(r" in the files' column \g<column>.", message)
    message = _UNIQUE_CALL.sub(": drop or merge the repeated rows", message)
    message = _ONLINE_CALL.sub("", message)
    message = _SHORT_RANKINGS.sub(_SHORT_WORDS, message)
    message = _EVALUATE_CALL.sub(_evaluate_command, message)
    message = _FUSE_CALL.sub(_fuse_command, message)
    if "norm" in flags:  # irm fuse --norm: its value, and 'none' as typed, not None
        message = _NORM_NONE.sub(
            lambda found: f"--norm {found['value']}: {found['text']}, or none", message
        )
    if "weights" in flags:  # a list of weights: the flag's comma-separated numbers
        message = _WEIGHTS_LIST.sub(
            lambda found: "--weights " + found["values"].replace(", ", ","), message
        )
    return as_flags(message, flags)


#: The Python fix of a semicolon-separated CSV/TSV file (io.files._check_header), and
#: the same fix as a command line's user makes it: the file saved again.
_SEMICOLON_FIX = re.compile(
    r"convert it, e\.g\. pl\.read_csv\(path, separator=';', decimal_comma=True\)"
    r"\.write_csv\(new_path\)"
)
_SEMICOLON_WORDS = (
    "save the file again so (e.g. export it from the spreadsheet with that field "
    "separator and '.' as the decimal separator)"
)


#: The Python fix of a duplicate (``keep one row per document, e.g. .unique(['query_id',
#: 'doc_id'])``): on a command line, the file's rows to drop or merge.
_UNIQUE_CALL = re.compile(r", e\.g\. \.unique\(\[[^\]]*\]\)")


#: The Python filter rND/rKL/rRD's NaN names (exposure.rnd.nan_cause): on a command
#: line, the rows of those queries to leave out of the run files.
_SHORT_RANKINGS = re.compile(
    r"\(the short rankings: run\.filter\(pl\.len\(\)\.over\([^()]*\) > (?P<depth>\d+)\)\)"
)
_SHORT_WORDS = r"(the queries ranking \g<depth> documents or fewer: their rows in the run files)"


#: irm.evaluate's aside on a log's columns, the Python call that names two of them
#: otherwise: a command line has only the flags the hint names before it.
_ONLINE_CALL = re.compile(r" \(irm\.evaluate_online\([^()]*\) for the first two\)")


#: The Python fix of a click (conversion) column of another type than Boolean or
#: integers 0/1 (online.sessions, online.interleaving): a Parquet or JSON lines log's
#: floats 0.0/1.0, which the library refuses as clicks.
_FLAG_CAST = re.compile(
    r"(?P<said>column '(?P<column>[^']*)' of the log has dtype (?P<dtype>[^;]+); [^;]* must "
    r"be Boolean or integers 0/1): cast it, e\.g\. pl\.col\('[^']*'\)\.cast\(pl\.Boolean\)"
)


def _flag_words(found: re.Match[str]) -> str:
    """:data:`_FLAG_CAST`'s fix as a command line's user makes it: the file saved again.

    >>> print(_FLAG_CAST.sub(_flag_words, "log.parquet: column 'clicked' of the log has "
    ...     "dtype Float64; a click must be Boolean or integers 0/1: cast it, e.g. "
    ...     "pl.col('clicked').cast(pl.Boolean)"))  # doctest: +NORMALIZE_WHITESPACE
    log.parquet: column 'clicked' of the log has dtype Float64; a click must be Boolean
    or integers 0/1: write the log again with column 'clicked' as true/false or as
    integers 0/1 (not Float64)
    """
    return (
        f"{found['said']}: write the log again with column {found['column']!r} as "
        f"true/false or as integers 0/1 (not {found['dtype']})"
    )


#: The Python cast a column of another dtype is refused with (ground.validate's
#: check_numeric: a Parquet or JSON lines file's text scores, float ranks): on a command
#: line, the file written again.
_COLUMN_CAST = re.compile(
    r"(?P<said>column '(?P<column>[^']*)' in the [^;]*? has dtype (?P<dtype>[^;]+); it must "
    r"be (?P<want>an integer|numeric)): (?:where every value is a whole number, )?cast it, "
    r"e\.g\. pl\.col\('[^']*'\)\.cast\(pl\.(?:Int64|Float64)\)(?: \(a cast drops a "
    r"fraction: 1\.5 becomes 1; check \(pl\.col\('[^']*'\) % 1 == 0\)\.all\(\) first\))?"
)


#: The Python call an id-spelling hint gives (ground.spelling, offline.coverage: ", e.g.
#: pl.col('query_id').str.strip_prefix('q') on the run and the judgments."): on a command
#: line, the files' column to write one way ("give both the same spelling in the files'
#: column 'query_id'.").
_SPELLING_CALL = re.compile(
    r", e\.g\. pl\.col\((?P<column>'[^']*')\)(?:\.[\w.]+\((?:[^()]|\([^()]*\))*\))+ on "
    r"(?:the run and the judgments|each)\."
)


def _column_words(found: re.Match[str]) -> str:
    """:data:`_COLUMN_CAST`'s fix as a command line's user makes it: the file saved
    again with the column's values as numbers (whole ones, for an integer).

    >>> print(_COLUMN_CAST.sub(_column_words, "run.parquet: column 'rank' in the run has "
    ...     "dtype Float64; it must be an integer: where every value is a whole number, cast "
    ...     "it, e.g. pl.col('rank').cast(pl.Int64) (a cast drops a fraction: 1.5 becomes 1; "
    ...     "check (pl.col('rank') % 1 == 0).all() first)"))  # doctest: +NORMALIZE_WHITESPACE
    run.parquet: column 'rank' in the run has dtype Float64; it must be an integer: write
    the file again with column 'rank' as integers (not Float64)
    """
    kind = "integers" if found["want"] == "an integer" else "numbers"
    return (
        f"{found['said']}: write the file again with column {found['column']!r} as {kind} "
        f"(not {found['dtype']})"
    )


#: irm.fuse's refusal of an unknown normalisation, which offers the keyword's None:
#: ``--norm none`` on a command line.
_NORM_NONE = re.compile(
    r"^(?P<text>unknown normalisation '(?P<value>[^']*)'; choose one of [^;]*?), or None\b"
)


#: ``weights=[0.5, 0.5]`` in a message: irm fuse's ``--weights 0.5,0.5``.
_WEIGHTS_LIST = re.compile(r"\bweights=\[(?P<values>[-+0-9.e]+(?:, [-+0-9.e]+)*)\]")


#: The hint of a column a table lacks, suggesting the ids' flags (not the one given).
_COLUMN_HINT = re.compile(r"; (?:pass the column names|name your columns), e\.g\. [^;]*$")


def _key_flag_hint(message: str, args: argparse.Namespace) -> str:
    """A message of a column a table lacks, where the column is a --by or --systems
    key given: the hint names that flag, not the ids' flags (``--query-id qid``)."""
    for flag in ("by", "systems"):
        for key in getattr(args, flag, None) or []:
            if f"column {key!r} not found in the " not in message:
                continue
            more = (
                ", or give each query's group with --queries FILE"
                if (flag == "by" and args.command in ("evaluate", "demo"))
                else ""
            )
            return _COLUMN_HINT.sub(
                f"; --{flag} {shlex.quote(key)} names none of its columns: name one it has" + more,
                message,
            )
    return message


#: The hint a warning about a run's coverage gets where several run files were given to
#: a command that scores each as a system (:data:`_SYSTEMS_OF_FILES`): not ``irm fuse``,
#: which fuses them into one run.
_SEVERAL_FILES = (
    " (several run files were given: each is scored as a system on every judged query, "
    "as an unquoted shell glob gives them; if they are parts of one run, such as one file "
    "per day, quote the glob, e.g. 'logs/*.parquet', to read them as one run)"
)
#: The commands that score each run file as a system of its own.
_SYSTEMS_OF_FILES = ("evaluate", "demo", "compare")


def _show_warning(
    parser: argparse.ArgumentParser, args: argparse.Namespace, shown: list[str]
) -> Callable[..., None]:
    """``warnings.showwarning`` for the command: each warning as one line, kept in
    ``shown`` to be printed on stderr when the command succeeds (a command that fails
    prints its one error line alone)."""

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        text = _in_words(
            _one_line(str(message)) or category.__name__, parser, args.command, _keys(args)
        )
        runs = getattr(args, "runs", None) or []
        several = len(runs) > 1 and args.command in _SYSTEMS_OF_FILES
        if issubclass(category, errors.CoverageWarning) and several:
            text += _SEVERAL_FILES
        shown.append(f"irm: warning: {text}")

    return show


#: polars' text for an error of the operating system: ``Not a directory (os error 20): x``.
_POLARS_OS_ERROR = re.compile(r"^(?P<text>[^(]+) \(os error \d+\): (?P<path>.+)$")


def _os_message(error: Exception) -> str | None:
    """An error of the operating system (Python's or polars' text) as ``FILE: what``,
    where the library's own message does not already say it."""
    if isinstance(error, IrmError):
        return None
    if isinstance(error, OSError) and error.filename is not None:
        text = error.strerror or type(error).__name__
        return f"{os.fsdecode(error.filename)}: {text[:1].lower()}{text[1:]}"
    found = _POLARS_OS_ERROR.match(_one_line(str(error)))
    if found is None:
        return None
    text = found.group("text")
    return f"{found.group('path')}: {text[:1].lower()}{text[1:]}"


def _flag_hint(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """The command's flag that an unknown one is likely a misspelling of (``--metrics``:
    ``--metric``), as ``; did you mean --metric?``; empty where none is close.

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("-m", "--metric")
    >>> _flag_hint(p, ["--metrics", "ndcg"]), _flag_hint(p, ["--bogus"])
    ('; did you mean --metric?', '')
    """
    flags = [flag for action in parser._actions for flag in action.option_strings]
    for extra in extras:
        if not extra.startswith("--"):
            continue
        close = difflib.get_close_matches(extra.split("=", 1)[0], flags, n=2, cutoff=0.8)
        if close:
            return f"; did you mean {' or '.join(close)}?"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``irm`` console script; returns the exit status."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # named by the command that does not know them, as its other errors
        command = _command_parser(parser, args.command)
        hint = _flag_hint(command, extras)
        command.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
    try:
        _stdin_once(args)
        _outputs_not_inputs(args, parser)  # before anything is read or computed
        _format_as_named(args)
        shown: list[str] = []
        with warnings.catch_warnings():  # Python's filters: each warning once per place
            warnings.showwarning = _show_warning(parser, args, shown)
            with spill_guard():  # SIGTERM removes the out-of-core spill folders, as Ctrl-C
                # beside the main thread, where the SIGTERM handler runs at once
                status: int = beside_main(lambda: args.func(args))
        for line in shown:
            print(line, file=sys.stderr)
    except (IrmError, OSError, pl.exceptions.PolarsError) as error:
        message = _os_message(error) or _one_line(str(error)) or repr(error)
        polars = isinstance(error, pl.exceptions.PolarsError)
        lower = message.lower()
        located = ("utf8" in lower.replace("-", ""), "more fields" in lower, "parquet" in lower)
        if polars and any(located):
            message = _located(args) or message
        if isinstance(error, DuplicateError):
            message = _repeated(message, args) or message
        if isinstance(error, IrmError):
            message = (
                _flagged_message(message, args)
                or _without_qrels(message, args)
                or _with_source(message, args)
            )
        message = _in_words(_key_flag_hint(message, args), parser, args.command, _keys(args))
        print(f"irm: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("irm: interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
