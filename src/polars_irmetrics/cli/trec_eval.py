"""``irm trec-eval``: trec_eval's command line and output, computed with polars.

    irm trec-eval qrels.txt run.txt                      # trec_eval's 'official' measures
    irm trec-eval -q -c -m ndcg_cut.10 -m P.5,10 qrels.txt run.txt
    irm trec-eval -m all_trec -l 2 -M 100 qrels.txt run.parquet

The flags, the measure syntax and the output follow trec_eval 10.0 (usnistgov
``trec_eval.c``, ``measures.c``, ``meas_init.c``, ``meas_print_*.c``), or 9.0.8 with
``--trec-eval-version 9``; the output is byte-identical to each version's on its own
``make quicktest``. What the versions change:

* iprec_at_recall and 11pt_avg turn a recall level x into c = lround(x * R) relevant
  documents in 10.0, c = (long) (x * R + 0.9) in 9.0.8 (the metrics' ``rounding``
  parameter, ``'lround'`` or ``'truncate'``; Rprec_mult keeps + 0.9 in both);
* 10.0's table adds dcg, ideal_dcg, rbp, rbp_resid and unj (all_trec: unj, rbp,
  rbp_resid); 9.0.8 refuses them;
* with ``-c``, 10.0 evaluates and prints (``-q``) the judged queries without results;
  9.0.8 only counts them in the summary's denominator;
* without ``-c``, 10.0 stops with exit status 4 at a judged query without results and
  9.0.8 skips it silently: both skip it here, and name it on standard error.

``-R prefs`` and ``-R qrels_prefs`` read preferences (``-m all_prefs``, the measures
of :mod:`polars_irmetrics.offline.prefs`), ``-R qrels_jg`` judgment groups (``-m
qrels_jg``: map_avgjg, P_avgjg, Rprec_mult_avgjg, :mod:`polars_irmetrics.offline.jg`).
``-Z FILE`` prints z-scores, ``(value - mean) / stddev`` with the mean and standard
deviation of each query and measure read from FILE (:mod:`polars_irmetrics.io.zscores`):
names get a ``Z`` prefix, every value 4 decimals, counts summed; a query or measure
missing from FILE is an error (trec_eval prints -1000000), except gm_map and gm_bpref,
which trec_eval's files never list (their summary is then 0.0000, as in trec_eval); a
standard deviation of 0 with a value other than the mean prints -1000000, as in
trec_eval, and is named on standard error. gm_map and gm_bpref convert
log(max(value, 0.00001)), the value trec_eval holds for them, and their summary is exp
of the mean z-score; with ``-c`` the summary num_rel is the count of judgments above 0,
as without ``-Z``.

* ``-m NAME[.PARAMS]`` marks a measure, a family with parameters (``P.5,10`` gives
  ``P_5`` and ``P_10``; cutoffs are sorted, duplicates and cutoffs below 1 are errors)
  or a nickname (``official``, the default; ``all_trec``; ``set``; ...). The first
  parameters given for a family are the ones used, as in trec_eval.
* Measures print in trec_eval's table order, not the ``-m`` order: ``runid`` and
  ``num_q`` only in the summary, and only when marked (every nickname marks them).
* Summary (``all``) lines give the mean over queries, except the counts (``num_ret``,
  ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``: sums), ``num_q`` (the number
  of queries) and ``gm_map``/``gm_bpref``: the geometric mean of max(value, 0.00001),
  which trec_eval prints only in the summary, never per query.
* Queries: those in both files, in query id order (compared as text); with ``-c`` every
  query of the judgments, a query with no results scoring 0 (``num_rel`` keeps its
  count), as trec_eval 10 does (it also prints such a query with ``-q``; trec_eval
  9.0.x printed only queries with results). With ``-c`` both versions' summary
  ``num_rel`` counts every judgment with relevance > 0, whatever ``-l`` says.
  trec_eval 10 evaluates such
  a query on a one-document ranking of an unjudged document, then resets ``num_ret``,
  ``utility``, ``unj`` and ``rbp_resid``: every measure comes out 0 but ``num_rel``
  and ``ideal_dcg`` (its judgments' ideal DCG), which in the geometric means counts
  as 0.00001; 9.0.8 adds 0 for it. Here too it scores 0 on every measure but
  ``num_rel`` and ``ideal_dcg`` (``utility`` included, whatever its coefficients for
  missed documents). With ``--trec-eval-version 9``, files that share no query are
  refused, as 9.0.8 refuses them.
* ``-N NUM``: the documents in the collection (default 0, as in trec_eval), read by
  utility's fourth coefficient (``utility.1,-1,0,0.5``: 0.5 per non-relevant document
  not retrieved, NUM + relevant retrieved - retrieved - relevant of them).
* Relevance is read as trec_eval reads it, with C's ``atol``: the sign and the
  leading digits (``1.9`` is 1, ``1e1`` is 1, ``.5e1`` is 0); a label that is no
  number is refused. Documents are ordered by score, ties by document id
  descending; the rank field of a run file is ignored. A score is held as each
  version holds it: a C ``double`` in 10.0, a ``float`` (32 bits) in 9.0.8, where
  ``1.00000001`` and ``1.0`` are a tie and ``1e-300`` is 0.

Every measure of ``-m all_trec`` is printed. Parameters follow trec_eval: cutoffs
(``P.5,10``, ``iprec_at_recall.0.1,0.5``, ``Rprec_mult.0.5``), recall levels of
``11pt_avg`` (``11pt_avg..25,.5,.75``, in increasing order), ``utility.a,b,c,d``,
``set_F.0.5`` (the weight of recall, a number >= 0), ``rbp.p=0.95``,
``rbp_resid.p=0.95``, ``relstring.20`` and gain tables for ``ndcg``, ``ndcg_rel``,
``Rndcg`` and ``G`` (``ndcg.1=3,2=9``: labels not listed gain their own value). Two
deliberate differences, both documented in the metrics' formulas
(:mod:`polars_irmetrics.metrics.trec`):

* trec_eval sorts a gain table with ``(int) (gain1 - gain2)``, so gains less than 1
  apart (3.5 and 3.0) compare equal and its ideal ranking may put them out of order;
  they are sorted exactly here, which is the value trec_eval means to print;
* trec_eval's ``rbp`` scales gains with a minimum and maximum it never initialises
  (``m_rbp.c``, undefined behaviour); the value printed is the one it gives when they
  start at 0: gains divided by the query's largest label when that exceeds 1, binary
  judgments unscaled.

``relstring`` (``m_relstring.c``) is a string, printed only per query (``-q``) and never
in the summary, in single quotes (``'21-.>0'``): one character for each of the first N
documents retrieved (default 10; ``-m relstring.20`` prints ``relstring_20``, N being
its first parameter truncated), in trec_eval's order and within ``-M``: the label if 0
to 9, ``>`` above 9, ``-`` for a document not in the judgments and ``.`` for one judged
with a negative label (trec_eval's "in the pool, unjudged"). With ``-c`` a judged query
with no results prints ``''`` as ``relstring``, but ``'-'`` under a parameterised name:
trec_eval 10 computes it on its one-document stand-in ranking (``ceci_nest_pas_un_docno``,
not in the judgments) and clears only a measure named exactly ``relstring``.

Measures or parameters it does not compute are named once on standard error and never
printed: ``yaap``, ``11pt_avg`` levels not in increasing order (trec_eval skips
levels then), parameters of ``dcg`` and ``ideal_dcg``, a gain for a negative
label (it would apply to unjudged documents), gains for ``rbp``, a
persistence outside [0, 1], and ``Rndcg`` at a relevance level below 1 (trec_eval prints
``nan`` for a query whose judged documents at that level have no positive gain, which
makes its summary ``nan``) or with a non-positive gain for a relevant label. Where it
prints another number on purpose (``-c`` with parameterised ``utility`` and
``rbp_resid``, ``-J`` on a query of unjudged documents, ``-l -1``, a blank line in the
judgments): the trec_eval guide's table.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from polars_irmetrics.cli.flags import non_negative_int
from polars_irmetrics.cli.trec_eval_measures import (
    _DEFAULT_MEASURES,
    _JG_FAMILIES,
    _MIN_GEO_MEAN,
    ALL_TREC,
    ALL_TREC_9,
    MEASURE_ORDER,
    NICKNAMES,
    OFFICIAL,
    REL_FORMATS,
    Version,
    _Column,
    _select_measures,
    _Selection,
)
from polars_irmetrics.door.evaluate import evaluate, reads_level
from polars_irmetrics.door.jg import evaluate_jg
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    IrmError,
    QuerySetError,
    UnknownMetricError,
)
from polars_irmetrics.expressions import rank_by_score
from polars_irmetrics.ground.options import Order
from polars_irmetrics.ground.validate import Policy, check_numeric
from polars_irmetrics.io.files import check_not_empty, look_swapped, scan_qrels, scan_run
from polars_irmetrics.io.output import format_of, write_stdout, write_table, write_text
from polars_irmetrics.io.prefs import read_trec_prefs, read_trec_qrels_jg, read_trec_qrels_prefs
from polars_irmetrics.io.report import trec_line
from polars_irmetrics.io.zscores import ZScores, read_trec_zscores
from polars_irmetrics.metrics.registry import parse_metric_list
from polars_irmetrics.offline.prefs import PREFS_MEASURES, prefs_measures

__all__ = [
    "ALL_TREC",
    "ALL_TREC_9",
    "MEASURE_ORDER",
    "NICKNAMES",
    "OFFICIAL",
    "REL_FORMATS",
    "add_parser",
    "run",
]

_EPILOG = """\
examples:
  irm trec-eval qrels.txt run.txt
  irm trec-eval -q -m map -m ndcg_cut.10 -m P.5,10 qrels.txt run.txt
  irm trec-eval -c -m all_trec -l 2 -M 1000 qrels.txt run.parquet

measures (-m), in trec_eval's syntax: every measure of all_trec, e.g.
map, gm_map, Rprec, bpref, gm_bpref, recip_rank, infAP, ndcg, ndcg_rel, Rndcg, binG,
G, 11pt_avg, utility, rbp, rbp_resid, set_P, set_recall, set_relative_P, set_map, set_F,
relstring (per query only, -q; relstring.20 for 20 documents), the counts, and the
families P, recall, ndcg_cut, map_cut, relative_P (default cutoffs
5,10,15,20,30,100,200,500,1000), success (1,5,10), unj (5,10,20), iprec_at_recall
(0.0,0.1,...,1.0) and Rprec_mult (0.2,0.4,...,2.0), e.g. P.5,10; parameters as in
trec_eval (ndcg.1=3,2=9, rbp.p=0.95, utility.2,-1,0,0, 11pt_avg..25,.5,.75); nicknames
official (the default), all_trec, set; with -R prefs or -R qrels_prefs all_prefs and
prefs, with -R qrels_jg qrels_jg. Measures not computed are named on stderr.

versions: trec_eval 10.0 by default; --trec-eval-version 9 for 9.0.8 (pytrec_eval's
version). They differ in iprec_at_recall and 11pt_avg (10.0: lround(x*R) relevant
documents; 9.0.8: (long)(x*R + 0.9)), all_trec (10.0 adds unj, rbp, rbp_resid) and -c -q
(10.0 prints the judged queries without results). A judged query without results is
skipped with a warning unless -c is given (trec_eval 10.0 exits with status 4 there).
"""


class _PrintVersion(argparse.Action):
    """``-v``/``--version``: as trec_eval, the version on standard error, exit status 0
    (the files are not needed)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(
            "trec_eval version 10.0 (irm trec-eval; --trec-eval-version 9 for 9.0.8)",
            file=sys.stderr,
        )
        parser.exit(0)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``trec-eval`` subcommand."""
    p = sub.add_parser(
        "trec-eval",
        help="trec_eval's command line: same flags, same output",
        description="Evaluate a run against judgments with trec_eval's flags and output "
        "format (measures computed by polars_irmetrics).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=run)
    p.add_argument(
        "-v",
        "--version",
        action=_PrintVersion,
        nargs=0,
        help="print the trec_eval version followed on standard error and exit",
    )
    p.add_argument(
        "-q",
        "--query_eval_wanted",
        dest="query_eval",
        action="store_true",
        help="also print the measures of each query",
    )
    p.add_argument(
        "-c",
        "--complete_rel_info_wanted",
        dest="complete",
        action="store_true",
        help="average over every query in the judgments (a query with no results "
        "scores 0), not only the queries in both files",
    )
    p.add_argument(
        "-n",
        "--nosummary",
        dest="no_summary",
        action="store_true",
        help="no summary ('all') lines",
    )
    p.add_argument(
        "-l",
        "--level_for_rel",
        dest="level",
        type=int,
        default=1,
        metavar="LEVEL",
        help="relevance >= LEVEL counts as relevant (default 1; e.g. -l 2)",
    )
    p.add_argument(
        "-M",
        "--Max_retrieved_per_topic",
        dest="max_docs",
        type=int,
        metavar="DEPTH",
        help="evaluate only the top DEPTH documents of each query (e.g. -M 1000)",
    )
    p.add_argument(
        "-N",
        "--Number_docs_in_coll",
        dest="num_docs",
        type=non_negative_int,
        default=0,
        metavar="NUM",
        help="number of documents in the collection, an integer >= 0 (default 0, as in "
        "trec_eval): "
        "utility's fourth coefficient counts the non-relevant documents not retrieved, "
        "NUM + relevant retrieved - retrieved - relevant (e.g. -N 1000 -m "
        "utility.1,-1,0,0.5)",
    )
    p.add_argument(
        "-J",
        "--Judged_docs_only",
        dest="judged_only",
        action="store_true",
        help="evaluate only the judged documents: unjudged ones are removed from each "
        "ranking before any measure (trec_eval -J; ir_measures' judged_only=True)",
    )
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="measure, family with parameters or nickname, repeatable "
        "(e.g. -m map -m P.5,10 -m all_trec); default: official",
    )
    p.add_argument(
        "-R",
        "--Rel_info_format",
        dest="rel_format",
        default="qrels",
        metavar="FORMAT",
        help="format of the judgments file: qrels (default), prefs (preferences: "
        "query_id jg jsg doc_id rel_level), qrels_prefs (qrels read as preferences) or "
        "qrels_jg (qrels whose second field is a judgment group)",
    )
    p.add_argument(
        "-T",
        "--Results_format",
        dest="results_format",
        choices=("trec_results",),
        default="trec_results",
        help="format of the run file: trec_results, the only one trec_eval reads (a "
        "table, Parquet, CSV or TSV, is read by its suffix)",
    )
    p.add_argument(
        "-D",
        "--Debug_level",
        dest="debug",
        metavar="LEVEL",
        help="trec_eval's debug output: only -D 0 (none), the default, is accepted",
    )
    p.add_argument(
        "-Z",
        "--Zscore",
        dest="zscores",
        metavar="ZMEAN_FILE",
        help="print z-scores, (value - mean) / stddev, with the mean and standard "
        "deviation of each query and measure read from ZMEAN_FILE (lines of "
        "query_id measure mean stddev)",
    )
    p.add_argument(
        "--trec-eval-version",
        dest="trec_eval_version",
        type=int,
        choices=(9, 10),
        default=10,
        help="behave as trec_eval 10.0 (10, the default) or 9.0.8 (9): 10.0 rounds "
        "iprec_at_recall's and 11pt_avg's recall levels with lround(x*R) where 9.0.8 "
        "truncated x*R+0.9, adds unj, rbp and rbp_resid to all_trec, and with -c -q "
        "prints the judged queries without results",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (atomically), not stdout: trec_eval's lines, or with a .parquet, "
        ".csv, .json, .md or .tex suffix a table of measure, query_id, value, text "
        "(runid's tag and relstring's string)",
    )
    p.add_argument(
        "--format",
        choices=("trec", "parquet", "csv", "json", "markdown", "latex"),
        default=None,
        help="format of -o FILE (default: from the suffix, else trec); a suffix that names "
        "another format is refused",
    )
    p.add_argument("qrels", metavar="QRELS", help="judgments: TREC qrels, Parquet, CSV or TSV")
    p.add_argument("run", metavar="RUN", help="run: TREC run, Parquet, CSV or TSV")


# --------------------------------------------------------------------------- data
def _run_tag(frame: pl.DataFrame, source: str) -> str:
    """trec_eval's ``runid``: the tag on the run's last line, else the file's stem."""
    if "run_id" in frame.columns:
        tags = frame.get_column("run_id").drop_nulls()
        if len(tags):
            return str(tags[-1])
    return Path(source.rstrip("/")).name.split(".")[0] or source


def _read_run(source: str, version: Version) -> pl.DataFrame:
    lazy = scan_run(source)  # "-": standard input (trec_eval 10.0 reads results there)
    schema = lazy.collect_schema()
    names = schema.names()
    if "score" in names:  # a table's (Parquet) text scores: named, not polars' failed cast
        check_numeric(schema, "score", "run", integer=False)
    keep = [c for c in ("query_id", "doc_id", "score", "rank", "run_id") if c in names]
    held = (*_as_text(schema, "run"), *_as_held(names, version))
    return lazy.select(keep).with_columns(*held).collect()


#: A table's missing column, and the Python keyword its message suggests naming it with.
_NAME_IT = re.compile(r"no column (?P<column>'[^']*')(?P<mid>.*); name the (?P<what>[a-z ]+) "
                      r"column with [a-z_]+=\.\.\.$")  # fmt: skip


def _fixed_names(error: IrmError, *, advice: bool = True) -> IrmError:
    """A table's missing column, named as ``irm trec-eval`` reads it: by its default
    name, which no flag changes (not the Python keyword the library's message
    suggests, which the command does not take); ``advice=False``: the column alone
    (the files look swapped, which is said instead)."""
    found = _NAME_IT.search(str(error))
    if not isinstance(error, ColumnNotFoundError) or found is None:
        return error
    said = str(error)[: found.start()] + f"no column {found['column']}{found['mid']}"
    if not advice:
        return type(error)(said)
    return type(error)(
        f"{said}; irm trec-eval reads the {found['what']} from a column of that name (no "
        "flag names another, as trec_eval's fields are fixed): rename the file's column "
        f"to {found['column']}"
    )


def _read_error(error: IrmError, qrels: str, run: str) -> IrmError:
    """A reading ``error`` of the run or the judgments as the command says it: the
    files named as swapped where they look so (:func:`_swapped`), else a missing
    column named as the command reads it (:func:`_fixed_names`)."""
    bare = _fixed_names(error, advice=False)
    hinted = _swapped(bare, qrels, run)
    return _fixed_names(error) if hinted is bare else hinted


def _swapped(error: IrmError, qrels: str, run: str) -> IrmError:
    """A reading ``error`` of the run or the judgments, with a hint where the two files
    look swapped (the run shaped as judgments, the judgments as a run: TREC lines or
    a table's columns): trec_eval's order is the judgments first, then the run."""
    if not look_swapped(run, qrels):
        return error
    return type(error)(
        f"{error}; the two files look swapped: {run} holds judgments and {qrels} a run: "
        f"give the judgments first, then the run, as trec_eval takes them ({run} before "
        f"{qrels})"
    )


def _within_depth(
    run_frame: pl.DataFrame, order: Order, depth: int | None, rel_format: str
) -> pl.DataFrame:
    """trec_eval's ``-M DEPTH``: each query's first DEPTH documents, in its ranking (score
    descending, ties by document id descending, or the rank column; with ``-R prefs``
    and ``-R qrels_prefs`` ties by document id ascending, as form_prefs_counts.c sorts),
    cut before anything reads the run. trec_eval cuts first (form_res_rels.c and the
    others) and refuses a document listed twice only within the cut: a copy below it is
    no duplicate (run ``a`` 5, ``b`` 4, ``c`` 3, ``b`` 2 with ``-M 3``: map over a, b,
    c). A row that cannot be ranked (a null or NaN score, a null rank) is kept, for the
    checks that name it."""
    if depth is None:
        return run_frame
    if rel_format in ("prefs", "qrels_prefs"):
        if "score" not in run_frame.columns:  # refused by the preferences' own checks
            return run_frame
        ranked = run_frame.sort(
            ["query_id", "score", "doc_id"], descending=[False, True, False], nulls_last=True
        )
        position = pl.int_range(pl.len()).over("query_id")
        score = pl.col("score")
        return ranked.filter((position < depth) | score.is_null() | score.is_nan())
    rank = pl.col("rank") if order == "rank" else rank_by_score("score", "doc_id").over("query_id")
    return run_frame.filter((rank <= depth) | (rank < 1) | rank.is_null())


def _as_held(names: list[str], version: Version) -> list[pl.Expr]:
    """Each score as trec_eval holds it (``TEXT_RESULTS.sim``, read with ``atof``): a C
    ``double`` in 10.0 (integers beyond 2**53 tie there, as they do here), a ``float``
    in 9.0.8, where scores that differ only beyond 32-bit precision (``1.00000001`` and
    ``1.0``) tie and 1e-300 is 0, each tie broken by document id: rounded to Float32
    for ``--trec-eval-version 9`` likewise."""
    if "score" not in names:
        return []
    score = pl.col("score").cast(pl.Float64)
    return [score.cast(pl.Float32).cast(pl.Float64) if version == 9 else score]


def _as_text(schema: pl.Schema, frame: str) -> list[pl.Expr]:
    """trec_eval reads every id as text: a Parquet run's integer query ids meet a TREC
    qrels file's text ones (``7`` and ``"7"`` are the same query). A list or a struct
    per row (a Parquet table's) has no text: refused by name, as ``irm evaluate``
    refuses it, not polars' failed cast."""
    ids = [c for c in ("query_id", "doc_id") if c in schema]
    for column in ids:
        if schema[column].is_nested():
            raise ColumnTypeError(
                f"column {column!r} in the {frame} has dtype {schema[column]}; trec_eval "
                "reads one id per row, as text: write the file again with column "
                f"{column!r} as strings or integers, one id per row"
            )
    return [pl.col(c).cast(pl.String) for c in ids]


def _read_qrels(source: str) -> pl.LazyFrame:
    lazy = scan_qrels(source, atol_labels=True)
    lazy = lazy.with_columns(_as_text(lazy.collect_schema(), "judgments"))
    schema = lazy.collect_schema()
    if "relevance" in schema and schema["relevance"].is_float():
        # a table's (Parquet, CSV) labels; a TREC file's are read as atol reads them
        # (scan_qrels' atol_labels): a fractional label is truncated
        relevance = pl.col("relevance")
        as_int = relevance.cast(pl.Int64, strict=False)
        # a label the cast makes null (NaN, infinite, beyond Int64) is named, not
        # reported later as a missing label
        lost = lazy.filter(relevance.is_not_null() & as_int.is_null()).select(relevance)
        found = lost.head(1).collect().get_column("relevance")
        if found.len():
            raise InvalidValueError(_label_problem(source, found.item()))
        lazy = lazy.with_columns(as_int)
    return lazy


def _label_problem(source: str, value: float) -> str:
    """Why a table's relevance label cannot be read as trec_eval's integer labels."""
    name = "<stdin>" if source == "-" else source
    if math.isfinite(value):
        why = "beyond the range of a 64-bit integer"
        fix = "write a label from -2**63 to 2**63 - 1"
    else:
        why, fix = "not a finite number", "write a finite label"
    return (
        f"{name}: column 'relevance' of the judgments holds {value!r}, {why}; trec_eval "
        f"reads a relevance label as an integer: {fix} or drop the judgment"
    )


# --------------------------------------------------------------------------- command
def run(args: argparse.Namespace) -> int:
    """Run ``irm trec-eval``: print trec_eval's lines on standard output."""
    version: Version = args.trec_eval_version
    if args.rel_format not in REL_FORMATS:
        raise InvalidValueError(
            f"-R {args.rel_format!r}: unknown relevance format; choose one of "
            + ", ".join(REL_FORMATS)
        )
    if args.debug is not None and args.debug.strip() != "0":
        raise InvalidValueError(
            f"-D {args.debug!r}: trec_eval's debug output (and -D LEVEL.QUERY's one query) "
            "is not reproduced; drop -D, or give -D 0 (no debug output)"
        )
    default = _DEFAULT_MEASURES[args.rel_format]
    selection, notes = _select_measures(
        args.measures or [default], args.level, version, args.num_docs
    )
    if args.max_docs is not None and args.max_docs < 1:
        raise InvalidValueError(f"-M must be a positive number of documents, got {args.max_docs}")
    for note in notes:
        print(f"irm trec-eval: {note}", file=sys.stderr)
    if selection.unsupported:
        print(
            "irm trec-eval: not supported yet, not printed: " + ", ".join(selection.unsupported),
            file=sys.stderr,
        )
    if not (selection.columns or selection.runid or selection.num_q):
        raise UnknownMetricError(
            "none of the requested measures is computed (they are named on the line "
            "above); choose among the measures of -m all_trec, which are computed with "
            "their default parameters (Rndcg from -l 1 up)"
        )
    zscores = None
    if args.zscores:
        check_not_empty(args.zscores, "trec", "z-scores (query_id measure mean stddev)")
        zscores = read_trec_zscores(args.zscores)

    _check_format_measures(args.rel_format, selection)
    if args.judged_only and args.rel_format in ("prefs", "qrels_prefs"):
        raise InvalidValueError(
            f"-J (judged documents only) is not available with -R {args.rel_format}: the "
            "preference measures count judged documents themselves; drop -J"
        )
    try:
        run_frame = _read_run(args.run, version)
    except IrmError as error:
        raise _read_error(error, args.qrels, args.run) from None
    # num_ret is always computed: with no measure to print it still gives the query set.
    computed = [c for c in selection.columns if c.relstring is None]
    metrics = list(dict.fromkeys([*(c.metric for c in computed), "num_ret"]))
    order: Order = (
        "score" if "score" in run_frame.columns or "rank" not in run_frame.columns else "rank"
    )
    run_tag = _run_tag(run_frame, args.run)  # the last line's tag, cut at -M or not
    run_frame = _within_depth(run_frame, order, args.max_docs, args.rel_format)
    unretrieved: Policy = "zero" if args.complete else "drop"
    if args.rel_format in ("prefs", "qrels_prefs"):
        reader = read_trec_prefs if args.rel_format == "prefs" else read_trec_qrels_prefs
        check_not_empty(args.qrels, "trec", f"judgments in the -R {args.rel_format} format")
        prefs = reader(args.qrels)
        qrels = prefs.select("query_id").lazy()
        judged = sorted(set(prefs.get_column("query_id").to_list()))
        per_query = prefs_measures(
            run_frame, prefs, depth=args.max_docs, queries=judged if args.complete else None
        )
        if args.complete and version == 9:  # 9.0.8: a query without results adds 0
            has_results = pl.col("query_id").is_in(run_frame.get_column("query_id").implode())
            per_query = per_query.with_columns(
                pl.when(has_results).then(pl.col(m)).otherwise(0).alias(m) for m in PREFS_MEASURES
            )
    elif args.rel_format == "qrels_jg":
        check_not_empty(args.qrels, "trec", "judgments in the -R qrels_jg format")
        judgments = read_trec_qrels_jg(args.qrels)
        qrels = judgments.drop("jg").lazy()
        per_query = evaluate_jg(
            run_frame,
            metrics,
            qrels_jg=judgments,
            relevance_level=args.level,
            depth=args.max_docs,
            unretrieved=unretrieved,
            order=order,
            judged_only=args.judged_only,
        )
    else:
        try:
            qrels = _read_qrels(args.qrels)
        except IrmError as error:
            raise _read_error(error, args.qrels, args.run) from None
        # trec_eval takes -l beside any measure; irm.evaluate refuses a level only
        # graded measures would read (it changes none of them): passed where one reads it
        level = args.level if reads_level(parse_metric_list(metrics)) else 1
        per_query = evaluate(
            run_frame,
            metrics,
            qrels=qrels,
            per_query=True,
            order=order,
            relevance_level=level,
            depth=args.max_docs,
            unjudged="drop",
            unretrieved=unretrieved,
            judged_only=args.judged_only,
        )
    if args.complete and args.rel_format in ("qrels", "qrels_jg"):
        per_query = _zero_without_results(per_query, run_frame, metrics)
    judged_ids = _query_ids(qrels)
    retrieved = set(run_frame.get_column("query_id").cast(pl.String).to_list())
    # trec_eval 9.0.8 evaluates only the queries in both files, with -c too: none is
    # an error there (10.0 with -c scores every judged query)
    nothing_shared = args.complete and version == 9 and not judged_ids & retrieved
    if per_query.height == 0 or nothing_shared:
        raise QuerySetError(
            "no queries with both results and relevance info: the run and the judgments "
            "share no query id (compare the first field of both files)"
        )
    query_ids = [str(q) for q in per_query.get_column("query_id").to_list()]
    if not args.complete:
        _warn_unretrieved(judged_ids - retrieved, args.run)
    values = {c.printed: per_query.get_column(c.metric).to_list() for c in computed}
    printed_ids = query_ids
    if args.complete and version == 9:
        # 9.0.8 evaluates (and prints with -q) only the queries with results; the
        # summary divides by every judged query, and num_rel counts every judgment > 0
        printed_ids = [q for q in query_ids if q in retrieved]
    order_idx = sorted(range(len(query_ids)), key=query_ids.__getitem__)
    shown = set(printed_ids)
    strings: dict[str, dict[str, str]] = {}
    if args.query_eval:
        strings = {
            c.printed: _relstrings(
                run_frame,
                qrels,
                query_ids,
                order,
                args.max_docs,
                c.relstring,
                c.printed,
                judged_only=args.judged_only,
            )
            for c in selection.columns
            if c.relstring is not None
        }
    summary_override: dict[str, int | float] = {}
    if args.complete and any(c.printed == "num_rel" for c in computed):
        # m_num_rel.c, both versions: with -c the summary counts every judgment > 0
        summary_override["num_rel"] = _count_positive(qrels)
    table = _Table(
        query_ids=query_ids,
        order=[i for i in order_idx if query_ids[i] in shown],
        all_order=order_idx,
        values=values,
        strings=strings,
        run_tag=run_tag,
        summary_override=summary_override,
    )
    text = _render(args, selection, table, zscores)
    fmt = args.format or (None if args.output is None else format_of(args.output)) or "trec"
    if fmt == "trec":
        if args.output is None:
            write_stdout(text.encode())
        else:
            write_text(args.output, text)
    else:
        write_table(_lines_table(text), args.output, fmt)
    return 0


def _zero_without_results(
    per_query: pl.DataFrame, run_frame: pl.DataFrame, metrics: Sequence[str]
) -> pl.DataFrame:
    """With ``-c``, a judged query without results scores 0 on every measure but
    ``num_rel`` (its count of relevant judgments) and 10.0's ``ideal_dcg`` (its
    judgments' ideal DCG).

    trec_eval 9.0.8 adds nothing for such a query (the summary divides by every judged
    query); 10.0 evaluates it on a one-document stand-in ranking, where every measure is
    0 or reset to 0. The library's empty ranking is another thing for utility, whose
    missed-document coefficients are worth something without results
    (``utility.1,-1,-1,0``: -R; with ``-N``, the non-relevant documents missed).
    """
    has_results = pl.col("query_id").is_in(
        run_frame.get_column("query_id").cast(pl.String).implode()
    )
    # num_rel and ideal_dcg read the judgments alone: 10.0 prints the query's own
    # (its ideal DCG is computed on the stand-in ranking and never reset)
    zeroed = [m for m in dict.fromkeys(metrics) if m not in ("num_rel", "idcg")]
    return per_query.with_columns(
        pl.when(has_results).then(pl.col(m)).otherwise(pl.lit(0).cast(per_query.schema[m]))
        for m in zeroed
    )


def _lines_table(text: str) -> pl.DataFrame:
    """trec_eval's lines as a table: measure, query_id, value (Float64) and text (String):
    a number in ``value`` (``text`` null), runid's tag and relstring's string (without
    its quotes) in ``text`` (``value`` null)."""
    rows = [line.split("\t") for line in text.splitlines() if line]
    frame = pl.DataFrame(
        {
            "measure": [r[0].strip() for r in rows],
            "query_id": [r[1] for r in rows],
            "text": [r[2] for r in rows],
        },
        schema={"measure": pl.String, "query_id": pl.String, "text": pl.String},
    )
    measure, printed = pl.col("measure"), pl.col("text")
    relstring = measure.str.starts_with("relstring")
    is_text = (measure == "runid") | relstring
    shown = pl.when(relstring).then(printed.str.slice(1, printed.str.len_chars() - 2))
    return frame.select(
        "measure",
        "query_id",
        pl.when(~is_text).then(printed.str.strip_chars(" ").cast(pl.Float64)).alias("value"),
        pl.when(is_text).then(shown.otherwise(printed)).alias("text"),
    )


@dataclass(frozen=True)
class _Table:
    """Per-query values of the printed columns, ready to print."""

    query_ids: list[str]
    order: list[int]  # indexes of the queries printed with -q, in query id order
    all_order: list[int]  # indexes of the queries averaged in the summary
    values: dict[str, list[Any]]
    strings: dict[str, dict[str, str]]
    run_tag: str
    summary_override: dict[str, int | float]


def _render(
    args: argparse.Namespace,
    selection: _Selection,
    table: _Table,
    zscores: ZScores | None,
) -> str:
    """trec_eval's output: per-query lines with -q, then the summary (unless -n)."""
    computed = [c for c in selection.columns if c.relstring is None]
    values = table.values
    if zscores is not None:
        undefined: list[str] = []
        values = {c.printed: _z_values(zscores, table, values, c, undefined) for c in computed}
        for note in undefined:
            print(
                f"irm trec-eval: warning: z-score undefined, printed -1000000: {note}",
                file=sys.stderr,
            )
    line = _z_line if zscores is not None else trec_line
    out: list[str] = []
    if args.query_eval:
        for i in table.order:
            qid = table.query_ids[i]
            for column in selection.columns:
                if column.relstring is not None:
                    text = f"'{table.strings[column.printed][qid]}'"
                    out.append(trec_line(column.printed, qid, text))
                elif column.per_query:
                    value = values[column.printed][i]
                    shown = float(value) if zscores is not None else _value(value, column)
                    out.append(line(column.printed, qid, shown))
    if not args.no_summary:
        if selection.runid:
            out.append(trec_line("runid", "all", table.run_tag))
        if selection.num_q:
            out.append(line("num_q", "all", len(table.all_order)))
        for column in computed:
            if not column.summary:
                continue
            if column.printed in table.summary_override:
                # m_num_rel.c with -c: the count of judgments > 0, z-scores or not
                total: int | float = table.summary_override[column.printed]
            elif zscores is not None:
                evaluated = [values[column.printed][i] for i in table.order]
                total = _z_summary(evaluated, len(table.all_order), column)
            else:
                evaluated = [values[column.printed][i] for i in table.order]
                total = _summary(evaluated, len(table.all_order), column)
            out.append(line(column.printed, "all", total))
    return "".join(out)


def _z_values(
    zscores: ZScores,
    table: _Table,
    values: dict[str, list[Any]],
    column: _Column,
    undefined: list[str],
) -> list[float]:
    """The z-scores of ``column`` for the queries trec_eval evaluates (``table.order``;
    9.0.8 with ``-c`` leaves out those without results: 0.0 here, never printed).

    gm_map and gm_bpref convert the logarithm of max(value, 0.00001), the per-query
    value trec_eval holds for them (m_gm_map.c, m_gm_bpref.c).
    """
    ids = [table.query_ids[i] for i in table.order]
    raw = [values[column.printed][i] for i in table.order]
    if column.geometric:
        raw = [math.log(max(float(v), _MIN_GEO_MEAN)) for v in raw]
    converted = zscores.convert(
        column.printed, ids, raw, missing_ok=column.geometric, undefined=undefined
    )
    out = [0.0] * len(table.query_ids)
    for i, z in zip(table.order, converted, strict=True):
        out[i] = z
    return out


def _z_summary(evaluated: Sequence[float], num_queries: int, column: _Column) -> float:
    """trec_eval's summary of z-scores (meas_avg.c): a count's z-scores summed, the
    others' averaged over ``num_queries``, every judged query with ``-c``; one without
    results adds 0 (9.0.8 evaluates none), or log(0.00001) to gm_map and gm_bpref,
    whose summary is exp of the mean."""
    total = 0.0
    for z in evaluated:  # in query order, as trec_eval accumulates
        total += float(z)
    if column.integer:
        return total
    if not column.geometric:
        return total / num_queries
    total += (num_queries - len(evaluated)) * math.log(_MIN_GEO_MEAN)
    try:
        return math.exp(total / num_queries)
    except OverflowError:  # C's exp gives inf, printed as inf
        return math.inf


def _z_line(measure: str, query: str, value: object) -> str:
    """A line of ``-Z`` output: ``Z`` before the name, every value with 4 decimals."""
    return f"Z{measure:<22}\t{query}\t{float(value):6.4f}\n"  # type: ignore[arg-type]


def _query_ids(qrels: pl.LazyFrame) -> set[str]:
    ids = qrels.select(pl.col("query_id").cast(pl.String).unique()).collect()
    return set(ids.get_column("query_id").to_list())


def _count_positive(qrels: pl.LazyFrame) -> int:
    """trec_eval's ``-c`` summary num_rel: every judgment above 0, whatever ``-l`` says."""
    found = qrels.select((pl.col("relevance") > 0).sum()).collect().item()
    return int(found or 0)


def _warn_unretrieved(missing: set[str], source: str) -> None:
    """Name, on standard error, the judged queries that have no results (without -c).

    trec_eval 9.0.8 skips them silently; trec_eval 10.0 stops with exit status 4
    ("result qid ... not found in qrels"). They are skipped here, and said so.
    """
    if not missing:
        return
    ids = sorted(missing)
    shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    print(
        f"irm trec-eval: warning: {len(ids)} judged "
        f"{'query has' if len(ids) == 1 else 'queries have'} no results in {source} and "
        f"{'is' if len(ids) == 1 else 'are'} left out (trec_eval 10.0 stops there with exit "
        f"status 4; -c scores them 0): {shown}",
        file=sys.stderr,
    )


def _check_format_measures(rel_format: str, selection: _Selection) -> None:
    """Refuse a measure that the judgments format of ``-R`` cannot give."""
    for column in selection.columns:
        jg = any(column.printed.startswith(name) for name in _JG_FAMILIES)
        if rel_format == "qrels_jg" and not jg:
            raise InvalidValueError(
                f"measure {column.printed} needs -R qrels; -R qrels_jg gives map_avgjg, "
                "P_avgjg and Rprec_mult_avgjg (-m qrels_jg)"
            )
        if rel_format == "qrels" and jg:
            raise InvalidValueError(f"measure {column.printed} needs judgment groups: -R qrels_jg")
        prefs = column.printed.startswith("prefs_")
        if rel_format in ("prefs", "qrels_prefs") and not prefs:
            raise InvalidValueError(
                f"measure {column.printed} needs -R qrels; -R {rel_format} gives the "
                "preference measures (-m all_prefs)"
            )
        if rel_format in ("qrels", "qrels_jg") and prefs:
            raise InvalidValueError(
                f"measure {column.printed} needs preferences: -R prefs or -R qrels_prefs"
            )


#: The document trec_eval 10 ranks alone for a judged query with no results (with -c).
_STAND_IN_DOC = "ceci_nest_pas_un_docno"


def _relstrings(
    run_frame: pl.DataFrame,
    qrels: pl.LazyFrame,
    query_ids: Sequence[str],
    order: Order,
    depth: int | None,
    length: int,
    printed: str,
    *,
    judged_only: bool = False,
) -> dict[str, str]:
    """relstring of each query of ``query_ids`` (m_relstring.c), keyed by query id.

    Ranks each query's documents as the other measures do (score descending, ties by
    document id descending as text, or the rank column), keeps ranks 1..depth (-M),
    then the first ``length``, and left-joins the judgments: a label 0..9 prints as
    itself, above 9 as ``>``, a document not judged as ``-``, a negative label as ``.``.
    A judged query with no results (-c) is ranked as trec_eval 10 ranks it: its stand-in
    document alone; and a measure named exactly ``relstring`` is then cleared to ``''``.
    ``judged_only`` (-J): after the cut at ``depth``, only the documents judged 0 or more
    remain, in their order (form_res_rels.c's ranked list under -J), so no ``-`` or
    ``.`` is printed and a query without a judged document prints ``''``.
    """
    wanted = pl.Series("query_id", query_ids, dtype=pl.String)
    ids = [pl.col("query_id").cast(pl.String), pl.col("doc_id").cast(pl.String)]
    key = pl.col("rank") if order == "rank" else pl.col("score")
    run = (
        run_frame.lazy()
        .select(*ids, key.cast(pl.Float64).alias("_key"))
        .filter(pl.col("query_id").is_in(wanted.implode()))
    )
    missing = (
        wanted.to_frame()
        .lazy()
        .join(run.select("query_id").unique(), on="query_id", how="anti")
        .with_columns(pl.lit(_STAND_IN_DOC).alias("doc_id"), pl.lit(1.0).alias("_key"))
    )
    run = pl.concat([run, missing], how="vertical")
    if order == "rank":
        ranked = run.with_columns(pl.col("_key").alias("_rank"))
    else:
        ranked = run.with_columns(
            rank_by_score("_key", "doc_id").over("query_id").cast(pl.Float64).alias("_rank")
        )
    if depth is not None:
        ranked = ranked.filter(pl.col("_rank") <= depth)
    judged = qrels.select(*ids, pl.col("relevance").alias("_rel"), pl.lit(True).alias("_in"))
    rel = pl.col("_rel")
    char = (
        pl.when(pl.col("_in").is_null())
        .then(pl.lit("-"))
        .when(rel < 0)
        .then(pl.lit("."))
        .when(rel > 9)
        .then(pl.lit(">"))
        .otherwise(rel.cast(pl.Int64).cast(pl.String))
    )
    labelled = ranked.join(judged, on=["query_id", "doc_id"], how="left")
    if judged_only:
        labelled = labelled.filter(rel >= 0)
    strings = (
        labelled.group_by("query_id")
        .agg(char.sort_by("_rank").head(length).str.join("").alias("_string"))
        .collect()
    )
    out = dict.fromkeys(query_ids, "")  # a rank column may leave a query nothing within -M
    out.update(zip(strings["query_id"].to_list(), strings["_string"].to_list(), strict=True))
    if printed == "relstring":  # trec_eval.c: clear_relstr() for the stand-in ranking
        cleared = missing.select("query_id").collect().get_column("query_id").to_list()
        out.update(dict.fromkeys(cleared, ""))
    return out


def _value(value: Any, column: _Column) -> int | float:
    return int(value) if column.integer else float(value)


def _summary(evaluated: Sequence[Any], num_queries: int, column: _Column) -> int | float:
    """trec_eval's summary (meas_avg.c): a sum for counts, else the mean over
    ``num_queries``, the values of the queries it evaluates (``evaluated``, in query id
    order) added one by one in doubles, as trec_eval accumulates them.

    gm_map and gm_bpref: exp of the mean of log(max(value, 0.00001)); a judged query
    that 9.0.8 does not evaluate (``-c``, no results) adds log(0.00001) after the
    others, as its te_calc_avg_meas_s_gm patches the sum (10.0 evaluates it in its
    place, where its value 0 adds the same). A query without results adds 0 to the
    others, which leaves a sum's bits unchanged.
    """
    if column.integer:
        return sum(int(v) for v in evaluated)
    total = 0.0
    for v in evaluated:  # in query id order, as trec_eval accumulates
        total += math.log(max(float(v), _MIN_GEO_MEAN)) if column.geometric else float(v)
    if not column.geometric:
        return total / num_queries
    total += (num_queries - len(evaluated)) * math.log(_MIN_GEO_MEAN)
    return math.exp(total / num_queries)
