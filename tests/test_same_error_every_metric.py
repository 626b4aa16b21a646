"""Which data checks run never depends on which metrics are asked for.

For each bad input, every registered metric alone (and a few spellings with a cutoff or
a parameter) raises the same error with the same message, on a DataFrame and on a
LazyFrame.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
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


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


#: The bad inputs whose message names no query: the judgment-group measures, which key
#: each query's rows by (query, group), give them word for word.
NO_QUERY = [bad for bad in BAD_INPUTS if "null query id" in bad.name]


@pytest.mark.parametrize("bad", NO_QUERY, ids=[b.name for b in NO_QUERY])
def test_the_judgment_group_measures_raise_the_same_error(
    evaluate: Evaluate, frame_kind: str, bad: BadInput
) -> None:
    # before, a run row of no query id was dropped in silence beside qrels_jg=
    run, kwargs = bad.build()
    with pytest.raises(IrmError) as info:
        evaluate(run, ["map"], **kwargs)
    expected = (type(info.value), str(info.value).splitlines()[0])
    grouped = kwargs["qrels"].with_columns(jg=pl.lit("u"))
    lazy = frame_kind == "LazyFrame"
    given = (run.lazy(), grouped.lazy()) if lazy else (run, grouped)
    for call in (
        lambda: _collected(irm.evaluate(given[0], ["map_avgjg", "P_avgjg_5"], qrels_jg=given[1])),
        lambda: _collected(irm.evaluate_jg(given[0], ["map"], qrels_jg=given[1])),
    ):
        with pytest.raises(IrmError) as info:
            call()
        assert (type(info.value), str(info.value).splitlines()[0]) == expected


#: The bad inputs of the run whose message names no query: the rank-similarity metrics
#: (against a clean reference) give them word for word.
RUN_NO_QUERY = [bad for bad in NO_QUERY if "judgments" not in bad.name]


@pytest.mark.parametrize("bad", RUN_NO_QUERY, ids=[b.name for b in RUN_NO_QUERY])
def test_the_rank_similarity_metrics_raise_the_same_error(
    evaluate: Evaluate, frame_kind: str, bad: BadInput
) -> None:
    # before: "every row needs a query id: fill or drop those rows"
    run, kwargs = bad.build()
    with pytest.raises(IrmError) as info:
        evaluate(run, ["map"], **kwargs)
    expected = (type(info.value), str(info.value).splitlines()[0])
    lazy = frame_kind == "LazyFrame"
    given = run.lazy() if lazy else run
    for metric in ("rbo", "intersection@10", "jaccard@5"):
        with pytest.raises(IrmError) as info:
            _collected(irm.evaluate(given, [metric], reference=run_frame()))
        assert (type(info.value), str(info.value).splitlines()[0]) == expected, metric
