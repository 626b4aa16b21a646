"""Many runs in one call (``systems="system"``): each system's values are its own, to the last bit.

With a ``by`` key the judgments lack, the plan joins every system's rows with one
hash table of the judgments (not the judgments crossed with the systems); these tests
compare that path with each system evaluated alone.
"""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm

from .conftest import Evaluate

NAMES = [*irm.DEFAULT_METRICS, "gm_map", "err@10", "rbp_residual"]


def _systems() -> tuple[pl.DataFrame, pl.DataFrame]:
    from polars_irmetrics.io.files import sample_paths

    runs, qrels_path = sample_paths()
    # the sample's runs: one misses a judged query, one has a query no judgment names,
    # and the systems retrieve the same documents for many queries
    run = pl.concat([pl.read_parquet(p).with_columns(system=pl.lit(p.stem)) for p in runs])
    return run, pl.read_parquet(qrels_path)


@pytest.mark.parametrize("order", ["score", "rank"])
@pytest.mark.parametrize("policies", [{}, {"unjudged": "zero", "unretrieved": "drop"}])
def test_each_system_as_if_alone(evaluate: Evaluate, order: str, policies: dict[str, str]) -> None:
    run, qrels = _systems()
    if order == "rank":
        rank = pl.col("score").rank("ordinal", descending=True).over("system", "query_id")
        run = run.with_columns(rank.cast(pl.Int64).alias("rank")).drop("score")
    together = evaluate(run, NAMES, qrels=qrels, systems="system", per_query=True, **policies)
    alone = pl.concat(
        [
            evaluate(part.drop("system"), NAMES, qrels=qrels, per_query=True, **policies).select(
                pl.lit(system).alias("system"), pl.all()
            )
            for (system,), part in run.sort("system").group_by("system", maintain_order=True)
        ]
    )
    assert together.height > 0
    assert together.equals(alone)


def test_a_document_of_two_systems_is_no_duplicate(evaluate: Evaluate) -> None:
    # The same document in one query of two systems; one system lists "b" twice.
    run = pl.DataFrame(
        {
            "system": ["x", "x", "y", "y", "y"],
            "query_id": ["q1"] * 5,
            "doc_id": ["a", "b", "a", "b", "b"],
            "rank": [1, 2, 1, 2, 3],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    clean = evaluate(
        run.filter(pl.col("system") == "x"), ["P@1", "recall@2"], qrels=qrels, systems="system"
    )
    assert clean.to_dicts() == [{"system": "x", "num_q": 1, "P@1": 1.0, "recall@2": 0.5}]
    with pytest.raises(
        irm.DuplicateError, match="query 'q1' \\(system='y'\\) has 1 repeated listing"
    ):
        evaluate(run, ["P@1"], qrels=qrels, systems="system")
