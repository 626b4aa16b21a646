"""The expected-exposure measures beside the accuracy metrics in one call give the
values they give alone.

With ``qrels=`` only (no ``groups=``), ``irm.evaluate(run, ["ndcg@10", "ee_loss"])``
returned ``ee_loss`` null and ``num_q_exposure`` 0: the accuracy metrics beside made
every check of the run, so the exposure plan's checks frame had no column, hence no
row, and the values' cross join with it kept none.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

RUN = pl.DataFrame(
    {"query_id": [1, 1, 2, 2, 3], "doc_id": [10, 11, 10, 12, 13], "rank": [1, 2, 1, 2, 1]}
)
QRELS = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": [10, 12, 14], "relevance": [1, 2, 1]})
GROUPS = pl.DataFrame({"doc_id": [10, 11, 12, 13, 14], "group": ["a", "b", "a", "b", "a"]})


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("groups", [None, GROUPS], ids=["documents", "groups"])
@pytest.mark.parametrize("measure", ["ee_loss", "ee_disparity", "ee_relevance"])
def test_beside_an_accuracy_metric_as_alone(
    measure: str, groups: pl.DataFrame | None, per_query: bool, lazy: bool
) -> None:
    run: Any = RUN.lazy() if lazy else RUN
    tables: dict[str, Any] = {"qrels": QRELS}
    if groups is not None:
        tables["groups"] = groups
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = _collected(irm.evaluate(run, [measure], per_query=per_query, **tables))
        both = _collected(irm.evaluate(run, ["ndcg@10", measure], per_query=per_query, **tables))
    assert both[measure].to_list() == alone[measure].to_list()
    assert both[measure].null_count() == 0
    if not per_query:
        assert both["num_q_exposure"].item() == alone["num_q"].item() == 3
