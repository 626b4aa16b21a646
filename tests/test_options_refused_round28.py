"""Round 28's audit of two rules at every door: which checks run never depends on which
metrics were asked for (the same bad tables give the same error, whichever family of
metrics reads them), and an option nothing reads is refused, never ignored (here: the
command line's format flags that name no file read)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError

from .helpers import irm_in_process

#: integer document ids in the run; every other table holds them as text
RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": [1, 2, 1, 3], "rank": [1, 2, 1, 2]}
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q1"], "doc_id": ["1", "1", "3"], "relevance": [1, 2, 0]}
)
GROUPS = pl.DataFrame({"doc_id": ["1", "2", "3"], "group": ["x", "y", "x"]})
HISTORY = pl.DataFrame({"query_id": ["u9", "u9", "u8"], "doc_id": ["1", "2", "3"]})
USERS = pl.DataFrame({"query_id": ["q1", "q2"], "group": ["m", "f"]})


def _kinds(table: str) -> str:
    """The one refusal of the run's integer documents beside ``table``'s text ones."""
    return (
        f"column 'doc_id' holds integers in the run (Int64) but strings in {table} (String); "
        "cast one side, e.g. pl.col('doc_id').cast(pl.String) on both"
    )


#: (metric, its tables, the refusal): the same pair of tables is refused in the same
#: words by every family that reads it (ee_loss once said "is Int64 in the run and
#: String in the judgments; the ids must be of one kind", epc and
#: serendipity(kind='kotkov') put the interactions first, item_mad and rnd named
#: groups= two ways)
KINDS: list[tuple[str, dict[str, pl.DataFrame], str]] = [
    ("ndcg@10", {"qrels": QRELS}, _kinds("the judgments")),
    ("bpref", {"qrels": QRELS}, _kinds("the judgments")),
    ("ee_loss", {"qrels": QRELS, "groups": GROUPS}, _kinds("the judgments")),
    ("awrf", {"qrels": QRELS, "groups": GROUPS}, _kinds("the judgments")),
    ("item_mad@10", {"qrels": QRELS, "groups": GROUPS}, _kinds("the judgments")),
    ("user_mad@10", {"qrels": QRELS, "user_groups": USERS}, _kinds("the judgments")),
    (
        "ps_ndcg@10",
        {"qrels": QRELS, "propensities": GROUPS.select("doc_id", propensity=pl.lit(0.5))},
        _kinds("the judgments"),
    ),
    ("catalog_coverage@10", {"interactions": HISTORY}, _kinds("the interactions")),
    ("novelty@10", {"interactions": HISTORY}, _kinds("the interactions")),
    (
        "epc@10",
        {
            "qrels": QRELS.with_columns(doc_id=pl.col("doc_id").cast(pl.Int64)),
            "interactions": HISTORY,
        },
        _kinds("the interactions"),
    ),
    (
        "serendipity(kind='kotkov')@2",
        {
            "qrels": QRELS.with_columns(doc_id=pl.col("doc_id").cast(pl.Int64)),
            "interactions": HISTORY,
        },
        _kinds("the interactions"),
    ),
    ("rnd", {"groups": GROUPS}, _kinds("groups=")),
    (
        "item_mad@10",
        {"qrels": QRELS.with_columns(doc_id=pl.col("doc_id").cast(pl.Int64)), "groups": GROUPS},
        _kinds("groups="),
    ),
    (
        "ee_loss",
        {"qrels": QRELS.with_columns(doc_id=pl.col("doc_id").cast(pl.Int64)), "groups": GROUPS},
        _kinds("groups="),
    ),
    (
        "rbo",
        {"reference": RUN.with_columns(doc_id=pl.col("doc_id").cast(pl.String))},
        _kinds("the reference"),
    ),
    ("map_avgjg", {"qrels_jg": QRELS.with_columns(jg=pl.lit("u"))}, _kinds("the qrels_jg")),
]


@pytest.mark.parametrize(
    ("metric", "tables", "message"),
    [pytest.param(*case, id=f"{case[0]}-{'-'.join(case[1])}") for case in KINDS],
)
def test_ids_of_two_kinds_are_refused_alike_by_every_family(
    frame_kind: str, metric: str, tables: dict[str, pl.DataFrame], message: str
) -> None:
    lazy = frame_kind == "LazyFrame"
    given: dict[str, Any] = {k: t.lazy() if lazy else t for k, t in tables.items()}
    with pytest.raises(ColumnTypeError) as info:
        irm.evaluate(RUN.lazy() if lazy else RUN, [metric], **given).lazy().collect()
    assert str(info.value) == message


def test_the_target_and_the_groups_are_named_as_their_keywords() -> None:
    target = pl.DataFrame({"group": [1, 2], "target": [0.5, 0.5]})
    run = RUN.with_columns(doc_id=pl.col("doc_id").cast(pl.String))
    message = (
        "column 'group' holds strings in groups= (String) but integers in target= (Int64); "
        "cast one side, e.g. pl.col('group').cast(pl.String) on both"
    )
    with pytest.raises(ColumnTypeError, match=re.escape(message)):
        irm.evaluate(run, ["awrf"], qrels=QRELS, groups=GROUPS, target=target)
    per_query = pl.DataFrame({"query_id": [1], "group": ["x"], "target": [1.0]})
    message = (
        "column 'query_id' holds strings in the run (String) but integers in target= "
        "(Int64); cast one side, e.g. pl.col('query_id').cast(pl.String) on both"
    )
    with pytest.raises(ColumnTypeError, match=re.escape(message)):
        irm.evaluate(run, ["awrf"], qrels=QRELS, groups=GROUPS, target=per_query)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 2\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    (tmp_path / "other").write_text("q1 Q0 b 1 2.0 s\nq1 Q0 a 2 1.0 s\n")
    return tmp_path


_NO_QRELS = (
    "irm: error: --qrels-format trec is the format of the judgments file (--qrels), and "
    "none is given, so it would change nothing: drop --qrels-format, or pass --qrels FILE\n"
)


def _sample(flag: str, value: str) -> str:
    return (
        f"irm: error: {flag} {value} is the format of a file named on the command line, and "
        "the bundled sample's runs and judgments are Parquet files, read as such: drop "
        f"{flag} (it would change nothing), or name your files\n"
    )


#: a format flag no file is read in was ignored (--qrels-format without --qrels), or
#: failed on the sample's Parquet as "binary data, not text" (--sample --run-format trec)
UNREAD_FORMATS = [
    (["evaluate", "run", "-m", "rbo", "--reference", "other", "--qrels-format", "trec"],
     _NO_QRELS),
    (["compare", "run", "other", "-m", "rbo", "--qrels-format", "trec"], _NO_QRELS),
    (["evaluate", "--sample", "-m", "ndcg@10", "--run-format", "trec"],
     _sample("--run-format", "trec")),
    (["evaluate", "--sample", "-m", "ndcg@10", "--qrels-format", "trec"],
     _sample("--qrels-format", "trec")),
    (["demo", "--qrels-format", "parquet"], _sample("--qrels-format", "parquet")),
]  # fmt: skip


@pytest.mark.parametrize(("args", "stderr"), UNREAD_FORMATS, ids=lambda v: str(v)[:40])
def test_a_format_flag_no_file_is_read_in_is_refused(
    files: Path, args: list[str], stderr: str
) -> None:
    done = irm_in_process(*args, cwd=files)
    assert (done.returncode, done.stderr) == (2, stderr)


def test_a_format_flag_of_a_file_read_is_taken(files: Path) -> None:
    args = ["evaluate", "run", "--qrels", "qrels", "--qrels-format", "trec", "-m", "P@1"]
    done = irm_in_process(*args, "--run-format", "trec", "--format", "csv", cwd=files)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "num_q,P@1\n1,1.0\n"


# ------------------------------------------ one bad run: one error, whichever family
BASE = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "c"], "rank": [1, 2, 1, 2]}
)
TEXT_QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q1"], "doc_id": ["a", "a", "c"], "relevance": [1, 2, 0]}
)
TEXT_GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c"], "group": ["x", "y", "x"]})
#: one metric of each family that reads a ranked run, with the tables it reads
FAMILIES: dict[str, dict[str, pl.DataFrame]] = {
    "ndcg@10": {"qrels": TEXT_QRELS},
    "catalog_coverage@10": {"interactions": HISTORY.with_columns(doc_id=pl.lit("a"))},
    "ee_loss": {"qrels": TEXT_QRELS, "groups": TEXT_GROUPS},
    "item_mad@10": {"qrels": TEXT_QRELS, "groups": TEXT_GROUPS},
    "ps_ndcg@10": {
        "qrels": TEXT_QRELS,
        "propensities": TEXT_GROUPS.select("doc_id", propensity=pl.lit(0.5)),
    },
    "rbo": {"reference": BASE.with_columns(pl.col("rank").cast(pl.Int64))},
    "kendall_tau@10": {"reference": BASE.with_columns(pl.col("rank").cast(pl.Int64))},
}
_WHEN_C = pl.col("doc_id") == "c"
_SCORED = BASE.drop("rank").with_columns(score=pl.Series([1.0, 2.0, 1.0, 0.5]))
#: (fault, the run, the one error): the rank-similarity metrics once worded each in
#: their own words ("the run lists a document twice in query 'q1'", "column 'score' of
#: the run has null or NaN values") and raised a rank below 1 before a duplicate
RUN_FAULTS: list[tuple[str, pl.DataFrame, type[Exception], str]] = [
    (
        "null document",
        BASE.with_columns(doc_id=pl.when(_WHEN_C).then(None).otherwise("doc_id")),
        irm.InvalidValueError,
        "column 'doc_id' of the run has 1 null value(s) in query 'q2'; every row needs a "
        "document id: drop them, e.g. .drop_nulls('doc_id')",
    ),
    (
        "document twice",
        pl.concat([BASE, BASE.head(1).with_columns(rank=pl.lit(3, pl.Int64))]),
        irm.DuplicateError,
        "column 'doc_id' of the run: query 'q1' has 1 repeated listing(s) (each of a "
        "document listed before in the query); each (query, document) pair may appear once "
        "(trec_eval refuses such runs too): keep one row per document, e.g. "
        ".unique(['query_id', 'doc_id'])",
    ),
    (
        "document twice beside a rank below 1",
        pl.concat(
            [
                BASE.with_columns(rank=pl.when(_WHEN_C).then(0).otherwise("rank")),
                BASE.head(1).with_columns(rank=pl.lit(3, pl.Int64)),
            ]
        ),
        irm.DuplicateError,
        "column 'doc_id' of the run: query 'q1' has 1 repeated listing(s) (each of a "
        "document listed before in the query); each (query, document) pair may appear once "
        "(trec_eval refuses such runs too): keep one row per document, e.g. "
        ".unique(['query_id', 'doc_id'])",
    ),
    (
        "null rank",
        BASE.with_columns(rank=pl.when(_WHEN_C).then(None).otherwise("rank")),
        irm.InvalidValueError,
        "column 'rank' of the run has 1 null value(s) in query 'q2'; every retrieved "
        "document needs a rank: fill or drop them, or rank by score with order='score'",
    ),
    (
        "two documents at one rank",
        BASE.with_columns(rank=pl.lit(1, pl.Int64)),
        irm.DuplicateError,
        "column 'rank' of the run: query 'q1' has 1 duplicate rank(s); each rank may hold "
        "one document: break the ties, or rank by score with order='score'",
    ),
    (
        "NaN score",
        _SCORED.with_columns(score=pl.when(_WHEN_C).then(float("nan")).otherwise("score")),
        irm.InvalidValueError,
        "column 'score' of the run has 1 NaN value(s) in query 'q2'; NaN cannot be ranked: "
        "replace them, e.g. pl.col('score').fill_nan(float('-inf'))",
    ),
    (
        "null score",
        _SCORED.with_columns(score=pl.when(_WHEN_C).then(None).otherwise("score")),
        irm.InvalidValueError,
        "column 'score' of the run has 1 null value(s) in query 'q2'; every document needs "
        "a score to be ranked: fill or drop them, e.g. .drop_nulls('score')",
    ),
]


@pytest.mark.parametrize("metric", list(FAMILIES))
@pytest.mark.parametrize(
    ("run", "error", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in RUN_FAULTS],
)
def test_one_bad_run_is_refused_alike_by_every_family(
    frame_kind: str, metric: str, run: pl.DataFrame, error: type[Exception], message: str
) -> None:
    lazy = frame_kind == "LazyFrame"
    given: dict[str, Any] = {k: t.lazy() if lazy else t for k, t in FAMILIES[metric].items()}
    if "score" in run.columns and "reference" in given:  # one order on both sides
        given["reference"] = given["reference"].drop("rank").with_columns(score=pl.lit(1.0))
    table = run.lazy() if lazy else run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the families' coverage notes
        with pytest.raises(error) as info:
            irm.evaluate(table, [metric], **given).lazy().collect()
    assert str(info.value) == message


def test_a_bad_reference_is_named_with_its_keyword() -> None:
    reference = BASE.with_columns(doc_id=pl.when(_WHEN_C).then(None).otherwise("doc_id"))
    message = (
        "column 'doc_id' of the reference (reference=) has 1 null value(s) in query 'q2'; "
        "every row needs a document id: drop them, e.g. .drop_nulls('doc_id')"
    )
    with pytest.raises(irm.InvalidValueError) as info:
        irm.evaluate(BASE, ["rbo"], reference=reference)
    assert str(info.value) == message


#: a table beside the run that holds no row: the ranking metrics checked the run, the
#: rank-similarity metrics and the exposure measures (whose checks rode on a cross join
#: with the values, empty here) accepted a bad run in silence
EMPTY_BESIDE: dict[str, dict[str, pl.DataFrame]] = {
    "ndcg@10": {"qrels": TEXT_QRELS.clear()},
    "rbo": {"reference": BASE.clear().with_columns(pl.col("rank").cast(pl.Int64))},
    "ee_loss": {"qrels": TEXT_QRELS.clear(), "groups": TEXT_GROUPS},
    "awrf": {"qrels": TEXT_QRELS.clear(), "groups": TEXT_GROUPS},
}


@pytest.mark.parametrize("buckets", [None, 2])
@pytest.mark.parametrize("metric", list(EMPTY_BESIDE))
def test_a_bad_run_beside_an_empty_table_is_refused(
    frame_kind: str, metric: str, buckets: int | None
) -> None:
    lazy = frame_kind == "LazyFrame"
    run = RUN_FAULTS[0][1]  # a null document in q2
    given: dict[str, Any] = {k: t.lazy() if lazy else t for k, t in EMPTY_BESIDE[metric].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coverage notes: no query in common
        with pytest.raises(irm.InvalidValueError) as info:
            irm.evaluate(
                run.lazy() if lazy else run, [metric], buckets=buckets, **given
            ).lazy().collect()
        assert str(info.value) == RUN_FAULTS[0][3]
        good = run.drop_nulls()  # and a sound run beside it is evaluated
        out = irm.evaluate(good, [metric], buckets=buckets, **EMPTY_BESIDE[metric])
    assert isinstance(out, pl.DataFrame)
    assert out["num_q"].to_list() == [0]
