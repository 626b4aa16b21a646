"""``irm.reproducibility``'s refusal of ``per_query=`` says what the option would ask for
and where it is found: the message before spoke of groups ("evaluate each group's runs
in a call of its own"), which per_query= has none of."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            {"per_query": True},
            "per_query= is not an option of reproducibility: its measures read every "
            "topic's values already and give one value per measure, metric and run (the "
            "per-topic values of a run: irm.evaluate(run, metrics, qrels=qrels), which "
            "gives them by default)",
        ),
        (
            {"by": "segment"},
            "by= is not an option of reproducibility: it compares one baseline and one "
            "advanced run per side; evaluate each group's runs in a call of its own",
        ),
    ],
    ids=["per_query", "by"],
)
def test_the_refusal_names_what_the_option_asks(option: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        irm.reproducibility({"baseline": RUN}, {"baseline": RUN}, ["map"], qrels=QRELS, **option)
    assert str(caught.value) == message
