"""Round 13 of the comparison: ``irm compare`` without ``--qrels`` where no metric
asked for reads the judgments (rnd, rkl, rrd), the tidy formats of a report refusing
the report options they would ignore, and tukey_hsd's refusals naming tukey_hsd and
its own options."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.report import render_report, write_report
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.io.files import sample_paths
from tests.helpers import irm_in_process


def _run(query: str, docs: list[str], hits: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": [query] * len(docs),
            "doc_id": docs,
            "rank": list(range(1, len(docs) + 1)),
            "relevance": hits,
        }
    )


@pytest.fixture(scope="module")
def runs() -> dict[str, pl.DataFrame]:
    """Three judged runs (relevance in the run) of four queries."""
    docs = ["d1", "d2", "d3"]
    patterns = {"a": [0, 0, 1], "b": [0, 1, 0], "c": [1, 0, 0]}
    return {
        name: pl.concat([_run(f"q{q}", docs, hits[q:] + hits[:q]) for q in range(4)])
        for name, hits in patterns.items()
    }


# --- irm compare: --qrels only where a metric reads the judgments ---


@pytest.fixture(scope="module")
def sample_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    """The sample runs and a groups file of their documents (every third one 'f')."""
    paths, _ = sample_paths()
    docs = pl.concat([pl.read_parquet(p).select("doc_id") for p in paths]).unique().sort("doc_id")
    groups = docs.with_columns(
        group=pl.when(pl.int_range(pl.len()) % 3 == 0).then(pl.lit("f")).otherwise(pl.lit("m"))
    )
    path = tmp_path_factory.mktemp("groups") / "groups.csv"
    groups.write_csv(path)
    return list(paths), path


def test_compare_cli_rnd_without_qrels(sample_files: tuple[list[Path], Path]) -> None:
    """rnd reads the runs and --groups only: no --qrels asked for (argparse required
    it, and with it the library refused --qrels: a circle)."""
    paths, groups = sample_files
    args = ["compare", *map(str, paths), "--groups", str(groups), "-m", "rnd", "-m", "rkl"]
    args += ["--query-set", "common"]  # the sample runs retrieve 29, 30 and 31 queries
    done = irm_in_process(*args, "--baseline", "run_bm25", "--format", "csv")
    assert (done.returncode, done.stderr) == (0, "")
    runs = {p.stem: pl.read_parquet(p) for p in paths}
    expected = irm.compare(
        runs, ["rnd", "rkl"], groups=pl.read_csv(groups), baseline="run_bm25", query_set="common"
    ).write_csv()
    assert done.stdout == expected


def test_compare_cli_judgments_still_needed(sample_files: tuple[list[Path], Path]) -> None:
    """A metric that reads the judgments, --qrels left out: one line naming --qrels."""
    paths, _ = sample_files
    done = irm_in_process("compare", *map(str, paths), "-m", "ndcg@10")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"irm: error: {', '.join(map(str, paths))}: irm compare needs the judgments "
        "(--qrels QRELS) to compute these metrics, and none was given: the runs hold no "
        "column 'relevance' (their columns: 'query_id', 'doc_id', 'score'); pass --qrels "
        "FILE (e.g. --qrels qrels.txt), or add the relevance column to every run (name it "
        "with --relevance COL)"
    ]
    _, qrels = sample_paths()
    fixed = irm_in_process("compare", *map(str, paths), "-m", "ndcg@10", "--qrels", str(qrels))
    assert (fixed.returncode, fixed.stderr) == (0, "")


# --- render_report / write_report: the tidy formats refuse the report options ---


def _refusal(option: str, named: str, fix: str) -> str:
    given, does, lacks = {
        "markers": ("markers='daggers'", "marks the cells", "has no markers"),
        "digits": ("digits=1", "rounds the means", "keeps every decimal"),
        "options": ("options=...", "names the test in the footnote", "has no footnote"),
    }[option]
    return (
        f"{given} {does} of a report (terminal, markdown, latex), and {named} writes the "
        f"tidy table, which {lacks}: drop {option}=, or write a report (e.g. {fix})"
    )


_GIVEN: dict[str, dict[str, Any]] = {
    "markers": {"markers": "daggers"},
    "digits": {"digits": 1},
    "options": {"options": CompareOptions(test="wilcoxon")},
}


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("option", ["markers", "digits", "options"])
def test_render_report_tidy_refuses_report_options(
    runs: dict[str, pl.DataFrame], fmt: str, option: str
) -> None:
    pairs = irm.compare(runs, "P@1")  # every pair: daggers are refused by markdown too
    message = _refusal(option, f"fmt={fmt!r}", "fmt='markdown'")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        render_report(pairs, fmt, **_GIVEN[option])  # type: ignore[arg-type]
    fixed = {k: v for k, v in _GIVEN[option].items() if k != "markers"}
    if option == "markers":  # the fix, 'drop markers=', gives the tidy table
        assert render_report(pairs, fmt) == render_report(pairs, fmt, **fixed)  # type: ignore[arg-type]
    else:  # the other fix: a report, which reads the option
        with_baseline = irm.compare(runs, "P@1", baseline="a")
        assert render_report(with_baseline, "markdown", **fixed)


@pytest.mark.parametrize(
    ("suffix", "fmt", "named", "fix"),
    [
        (".csv", None, "report file '{path}'", "a .md file"),
        (".parquet", None, "report file '{path}'", "a .md file"),
        (".json", None, "report file '{path}'", "a .md file"),
        (".txt", "csv", "fmt='csv'", "fmt='markdown'"),
        (".txt", "parquet", "fmt='parquet'", "fmt='markdown'"),
    ],
)
@pytest.mark.parametrize("option", ["markers", "digits", "options"])
def test_write_report_tidy_refuses_report_options(
    runs: dict[str, pl.DataFrame],
    tmp_path: Path,
    suffix: str,
    fmt: str | None,
    named: str,
    fix: str,
    option: str,
) -> None:
    result = irm.compare(runs, "P@1", baseline="a")
    path = tmp_path / f"out{suffix}"
    message = _refusal(option, named.format(path=path), fix)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        write_report(result, path, fmt, **_GIVEN[option])  # type: ignore[arg-type]
    assert not path.exists()
    report_path = tmp_path / "out.md"
    write_report(result, report_path, **_GIVEN[option])  # the fix: a report
    assert report_path.read_text()
    write_report(result, path, fmt)  # or the defaults
    assert path.exists()


def test_tidy_defaults_still_accepted(runs: dict[str, pl.DataFrame]) -> None:
    pairs = irm.compare(runs, "P@1")
    plain = render_report(pairs, "csv")
    assert render_report(pairs, "csv", markers="letters", digits=4, options=None) == plain


# --- tukey_hsd: its own options, its own name ---

_TUKEY_OPTIONS = (
    "action, alpha, buckets, check_duplicates, ci, ci_method, clicked, confidence, "
    "converted, debias, depth, doc_id, dwell, explain, features, groups, jg, judged_only, "
    "label, memory_limit, n_bootstrap, order, partitioned_by, position, positive_label, "
    "prediction, progress, propensity, qrels, query_id, query_set, rank, relevance, "
    "relevance_level, reward, round_id, sample_id, sample_weight, score, seed, "
    "serendipity_relevance, spill_dir, system, target, timestamp, unjudged, unmatched, "
    "unseen_items"
)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"test": "t"}, f"unknown option test=...; the options are {_TUKEY_OPTIONS}"),
        ({"baseline": "a"}, f"unknown option baseline=...; the options are {_TUKEY_OPTIONS}"),
        ({"correction": None},
         f"unknown option correction=...; the options are {_TUKEY_OPTIONS}"),
        ({"bogus": 1}, f"unknown option bogus=...; the options are {_TUKEY_OPTIONS}"),
        ({"per_query": True},
         "tukey_hsd sets per_query= itself (the systems are its groups, and query_set= "
         "chooses the queries); drop per_query=..."),
        ({"by": "query_id"},
         "tukey_hsd sets by= itself (the systems are its groups, and query_set= "
         "chooses the queries); drop by=..."),
    ],
)  # fmt: skip
def test_tukey_refusals_name_tukey_and_its_options(
    runs: dict[str, pl.DataFrame], given: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.tukey_hsd(runs, "P@1", **given)
    assert irm.tukey_hsd(runs, "P@1").height == 3  # the fix: drop it


def test_compare_refusals_unchanged(runs: dict[str, pl.DataFrame]) -> None:
    message = (
        "compare sets by= itself (the systems are its groups, and query_set= "
        "chooses the queries); drop by=..."
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare(runs, "P@1", by="x")
