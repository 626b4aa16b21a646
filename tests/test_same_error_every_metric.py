"""Which data checks run never depends on which metrics are asked for.

For each bad input, every registered metric alone (and a few spellings with a cutoff or
a parameter) raises the same error with the same message, on a DataFrame and on a
LazyFrame.
"""

from __future__ import annotations

import re

import pytest

from polars_irmetrics.errors import IrmError

from .bad_inputs import BAD_INPUTS, EVERY_METRIC, BadInput, qrels_frame, run_frame
from .conftest import Evaluate

METRICS = [*EVERY_METRIC, "P@10", "ndcg(gain='exponential')@10", "map@3", "recall@1..3"]


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=[b.name for b in BAD_INPUTS])
def test_every_metric_alone_raises_the_same_error(
    evaluate: Evaluate, frame_kind: str, bad: BadInput
) -> None:
    # every metric on each bad input: half of them on a DataFrame, half on a LazyFrame
    # (both with map, whose message the others are held to)
    half = METRICS[frame_kind == "LazyFrame" :: 2]
    raised: dict[str, tuple[type[BaseException], str]] = {}
    for metric in [*half, *(["map"] if "map" not in half else [])]:
        run, kwargs = bad.build()
        with pytest.raises(IrmError) as info:
            evaluate(run, [metric], **kwargs)
        raised[metric] = (type(info.value), str(info.value).splitlines()[0])
    assert set(raised.values()) == {(bad.error, raised["map"][1])}, raised
    assert re.match(re.escape(bad.message), raised["map"][1])


def test_the_clean_input_is_accepted_by_every_metric(evaluate: Evaluate) -> None:
    # the bad inputs above differ from this one by one value each
    out = evaluate(run_frame(), METRICS, qrels=qrels_frame(), per_query=True)
    assert out.height == 2
