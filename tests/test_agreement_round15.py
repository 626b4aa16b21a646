"""Rank agreement, round 15: repro_eval's ``ktu`` of a query one side has no ranking of
(``unretrieved='zero'``, ``unjudged='zero'``) is null, as ``kendall_tau`` and ``tau_ap``
are there and as ``ktu`` itself is for a ranking of one document (fewer than two pairs:
undefined). It was 0, "uncorrelated", which raised the mean above that of a ranking in
reverse (-1) for retrieving nothing, and above that of retrieving one document (null,
left out of the mean)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

from .helpers import irm_in_process

REFERENCE = pl.DataFrame(
    {"query_id": ["q1"] * 3 + ["q2"] * 3, "doc_id": list("abcdef"), "score": [3.0, 2.0, 1.0] * 2}
)
#: q1 in reverse (ktu -1); q2 not retrieved
REVERSED = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["c", "b", "a"], "score": [3.0, 2.0, 1.0]}
)
#: q2 retrieved with one document: one pair of positions, undefined
ONE = pl.concat([REVERSED, pl.DataFrame({"query_id": ["q2"], "doc_id": ["d"], "score": [3.0]})])


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("metric", ["ktu", "ktu@3"])
def test_ktu_of_an_unretrieved_query_is_null(metric: str, lazy: bool) -> None:
    run: Any = REVERSED.lazy() if lazy else REVERSED
    per_query = irm.evaluate(run, [metric], reference=REFERENCE, per_query=True)
    per_query = per_query.collect() if lazy else per_query
    assert dict(per_query.select("query_id", metric).iter_rows()) == {"q1": -1.0, "q2": None}
    means = irm.evaluate(run, [metric], reference=REFERENCE)
    means = means.collect() if lazy else means
    # retrieving nothing scores as retrieving one document: left out of the mean
    one = irm.evaluate(ONE, [metric], reference=REFERENCE)
    assert means[metric].item() == one[metric].item() == -1.0


def test_ktu_of_a_query_the_reference_lacks_is_null_with_unjudged_zero() -> None:
    run = pl.concat(
        [
            REVERSED,
            pl.DataFrame({"query_id": ["q3"] * 2, "doc_id": ["x", "y"], "score": [2.0, 1.0]}),
        ]
    )
    reference = REFERENCE.filter(pl.col("query_id") == "q1")
    out = irm.evaluate(
        run, ["ktu", "kendall_tau"], reference=reference, unjudged="zero", per_query=True
    )
    assert out.sort("query_id").rows() == [("q1", -1.0, -1.0), ("q3", None, None)]


def _named(key: str, taken: list[str]) -> str:
    columns = ", ".join(repr(c) for c in taken)
    return (
        f"by=[{key!r}] names {key!r}, which is also a column of the result ({columns}); "
        f"rename the key first, e.g. run.rename({{{key!r}: {key + '_key'!r}}}) (and the "
        f"reference's, where it has it), and pass by={key + '_key'!r}"
    )


@pytest.mark.parametrize(
    ("key", "options", "taken"),
    [
        ("num_q", {}, ["num_q", "rbo", "ktu@3"]),
        ("rbo", {}, ["num_q", "rbo", "ktu@3"]),
        ("ktu@3", {"per_query": True}, ["rbo", "ktu@3"]),
        ("rbo", {"buckets": 2}, ["num_q", "rbo", "ktu@3"]),
    ],
    ids=["num_q", "label", "per_query", "buckets"],
)
@pytest.mark.parametrize("in_reference", [False, True], ids=["run", "both"])
def test_a_by_key_named_like_a_result_column_is_refused(
    key: str, options: dict[str, Any], taken: list[str], in_reference: bool
) -> None:
    # it was polars' DuplicateError from the plan
    run = REVERSED.with_columns(pl.lit("x").alias(key))
    reference = REFERENCE.with_columns(pl.lit("x").alias(key)) if in_reference else REFERENCE
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_named(key, taken))}$"):
        irm.evaluate(run, ["rbo", "ktu@3"], reference=reference, by=key, **options)


# irm.reproducibility with a metric reading another table told to "pass reference=...
# to irm.evaluate" (the door's words), which reproducibility does not take: the fix
# now names the call that does
@pytest.mark.parametrize(
    ("metric", "what", "keyword"),
    [
        ("rbo", "a reference run (the ranking each query's is compared with)", "reference"),
        (
            "epc@3",
            "the interaction history (where item popularity, the catalogue and each user's "
            "history come from)",
            "interactions",
        ),
    ],
)
def test_reproducibility_refuses_a_metric_of_another_table(
    metric: str, what: str, keyword: str
) -> None:
    run = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "rank": [1]})
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    message = (
        f"metric {metric!r} reads {what}, which irm.reproducibility does not take (it "
        "compares the per-topic values of runs and their judgments): evaluate it with "
        f"irm.evaluate(run, [{metric!r}], {keyword}=...) for each run"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.reproducibility({"baseline": run}, {"baseline": run}, ["P@1", metric], qrels=qrels)


# the command line wrote the door's "pass reference=... to irm.evaluate" as "pass
# --reference FILE to irm.evaluate": a flag is given to the command
@pytest.mark.parametrize(("metric", "flag"), [("rbo", "--reference"), ("epc@3", "--interactions")])
def test_the_command_line_names_the_flag_not_a_python_call(
    tmp_path: Path, metric: str, flag: str
) -> None:
    path = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "rank": [1]}).write_parquet(path)
    done = irm_in_process("evaluate", str(path), "-m", metric)
    assert done.returncode == 2
    assert done.stderr.endswith(f": pass {flag} FILE\n")
    assert done.stderr.count("\n") == 1


# a run of no rows beside reference= scored every reference query 0 with no word
@pytest.mark.parametrize(
    ("unretrieved", "fate", "num_q"),
    [
        (
            "zero",
            "each query of the reference scores as an empty ranking does (unretrieved='zero': 0)",
            2,
        ),
        (
            "drop",
            "no query is left to score (unretrieved='drop' leaves out the reference's "
            "queries the run lacks): every mean is over 0 queries (num_q 0)",
            0,
        ),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_an_empty_run_beside_a_reference_is_named(
    unretrieved: str, fate: str, num_q: int, lazy: bool
) -> None:
    run = pl.DataFrame(
        {"query_id": ["q1"], "doc_id": ["a"], "rank": [1]}, schema_overrides={"rank": pl.Int64}
    ).head(0)
    reference = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "rank": [1, 1]})
    message = f"the run has no rows: {fate}; check the run's file or frame"

    def evaluated() -> pl.DataFrame:  # the lazy plan warns when collected
        out = irm.evaluate(
            run.lazy() if lazy else run,
            ["intersection@3"],
            reference=reference,
            unretrieved=unretrieved,  # type: ignore[arg-type]
        )
        return out.collect() if isinstance(out, pl.LazyFrame) else out

    with pytest.warns(irm.CoverageWarning, match=f"^{re.escape(message)}$"):
        out = evaluated()
    assert out["num_q"].to_list() == [num_q]


# a by= key of two dtypes in the run and the reference raised polars' SchemaError
# ("datatypes of join keys don't match"); ids of one kind (Int64 and Int32, String and
# Categorical) are cast to one, as the id columns are
def test_a_by_key_of_two_kinds_in_the_reference_is_refused() -> None:
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "rank": [1, 2]})
    run = run.with_columns(day=pl.lit(1, pl.Int64))
    message = (
        "column 'day' has dtype Int64 in the run but String in the reference; cast one "
        "side to match, e.g. pl.col('day').cast(pl.String) on both"
    )
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["rbo"], reference=run.with_columns(day=pl.lit("1")), by="day")
    narrow = run.with_columns(pl.col("day").cast(pl.Int32))
    out = irm.evaluate(run, ["rbo"], reference=narrow, by="day")
    assert out.rows() == [(1, 1, 1.0)]


# the command line wrote a by key's cast as "--ids str", which casts the ids, not a key
def test_the_command_line_keeps_a_by_keys_cast_as_python(tmp_path: Path) -> None:
    rows = {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [0.9, 0.5]}
    pl.DataFrame({**rows, "day": [1, 1]}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({**rows, "day": ["1", "1"]}).write_parquet(tmp_path / "e.parquet")
    done = irm_in_process(
        "evaluate", "a.parquet", "-m", "neighbor_recall@2", "--neighbors", "e.parquet",
        "--by", "day", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "e.g. pl.col('day').cast(pl.String)" in done.stderr
    assert "--ids str" not in done.stderr
    assert done.stderr.count("\n") == 1
