"""A null ``systems=`` or ``by=`` key is refused on every route in the ranking metrics'
words (which checks run never depends on which metrics were asked for): the
recommendation-table metrics and the rank similarities gave a row for a null system
instead."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

RUN = pl.DataFrame(
    {
        "system": ["a", None],
        "day": ["mon", None],
        "query_id": ["q1", "q1"],
        "doc_id": ["d1", "d2"],
        "rank": [1, 1],
    }
)
QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
HISTORY = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": ["d1", "d2"]})
GROUPS = pl.DataFrame({"doc_id": ["d1", "d2"], "group": ["g", "h"]})

ROUTES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "ranking": (["ndcg@10"], {"qrels": QRELS}),
    "recommendation table": (["catalog_coverage@10"], {"interactions": HISTORY}),
    "rank similarity": (["rbo"], {"reference": RUN.drop("system", "day").head(1)}),
    "exposure": (["ee_loss"], {"qrels": QRELS, "groups": GROUPS}),
}


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("key", ["systems", "by"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_null_key_is_refused_alike(route: str, key: str, lazy: bool) -> None:
    metrics, tables = ROUTES[route]
    column = "system" if key == "systems" else "day"
    message = (
        f"column {column!r} of the run has null values; every row needs a {column}: drop "
        f"them, e.g. .drop_nulls({column!r})"
    )
    run = RUN.drop("day" if key == "systems" else "system")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            _collected(
                irm.evaluate(run.lazy() if lazy else run, metrics, **{key: column}, **tables)
            )


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out
