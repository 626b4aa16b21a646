"""Round 10 of the rank similarities' plots, ``reproducibility`` and ``system_agreement``.

1. ``reproducibility`` reads numpy's numbers as ``cutoff=`` and ``p=`` (they were
   refused as no depth and no persistence), as ``irm.evaluate`` reads ``depth=``.
2. A system named like the query-id column is refused by name before the pivot (polars'
   ``DuplicateError`` reached the caller), by ``system_agreement`` and ``plot_swaps``.
3. ``plot_swaps`` reads the directions as ``system_agreement`` does (one function): ``b``'s
   column of ``a``'s name takes ``higher_is_better``.
4. ``plot_similarity_distribution`` takes the LazyFrame ``irm.evaluate`` gives for a
   LazyFrame (as every plot now does: collected), draws one panel per system of a
   ``systems=`` result (it pooled them into one histogram in silence), and refuses a key
   or non-numeric ``metric=`` and ``bins=`` that is no whole number >= 1 by name (they
   raised Python's and numpy's errors).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError


def _titles(figure: Any) -> list[str]:
    return [panel.get_title() for panel in figure.axes]


# 1. numpy numbers as reproducibility's cutoff= and p=

QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "a", "b"],
        "score": [2.0, 1.0, 2.0, 1.0],
    }
)
AGAIN = RUN.with_columns(pl.col("score").reverse().over("query_id"))


@pytest.mark.parametrize(
    ("given", "plain"),
    [
        ({"cutoff": np.int64(10)}, {"cutoff": 10}),
        ({"cutoff": np.int32(10)}, {"cutoff": 10}),
        ({"p": np.float64(0.9)}, {"p": 0.9}),
        ({"p": np.float32(0.5)}, {"p": 0.5}),
    ],
)
def test_reproducibility_numpy_depth_options(given: dict[str, Any], plain: dict[str, Any]) -> None:
    def run(options: dict[str, Any]) -> pl.DataFrame:
        return irm.reproducibility(
            {"baseline": RUN}, {"baseline": AGAIN}, ["P_1"], qrels=QRELS, **options
        )

    assert run(given).equals(run(plain))


def test_reproducibility_numpy_cutoff_zero_refused() -> None:
    message = (
        "cutoff=0 is not a depth: it must be a whole number >= 1 (of the KTU and RBO of "
        "the document orders, repro_eval's RBO_DEPTH), e.g. cutoff=1000"
    )
    with pytest.raises(irm.errors.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.reproducibility(
            {"baseline": RUN}, {"baseline": AGAIN}, ["P_1"], qrels=QRELS, cutoff=np.int64(0)
        )


# 2. a system named like the query-id column

_RNG = np.random.default_rng(1)
CLASH = pl.DataFrame(
    {
        "system": np.repeat(["query_id", "b", "c"], 4),
        "query_id": np.tile(np.arange(4), 3),
        "map": _RNG.random(12),
    }
)
CLASH_MESSAGE = (
    "system 'query_id' of a is named like its query-id column; rename that system, e.g. "
    "pl.col('system').replace('query_id', 'query_id_system')"
)
TOPIC = CLASH.rename({"query_id": "topic"}).with_columns(
    pl.col("system").replace("query_id", "topic")
)
CLASHES: list[tuple[str, Callable[[], Any], str]] = [
    ("system_agreement", lambda: irm.system_agreement(CLASH, CLASH), CLASH_MESSAGE),
    ("plot_swaps", lambda: plot.plot_swaps(CLASH, CLASH), CLASH_MESSAGE),
    (
        "clash in b alone",
        lambda: irm.system_agreement(
            CLASH.with_columns(pl.col("system").replace("query_id", "a")), CLASH
        ),
        CLASH_MESSAGE.replace("of a", "of b"),
    ),
    (
        "query_id= named",
        lambda: irm.system_agreement(TOPIC, TOPIC, query_id="topic"),
        "system 'topic' of a is named like its query-id column; rename that system, e.g. "
        "pl.col('system').replace('topic', 'topic_system')",
    ),
]


@pytest.mark.parametrize(
    ("call", "message"), [case[1:] for case in CLASHES], ids=[case[0] for case in CLASHES]
)
def test_system_named_like_the_query_id_column(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call()


# 3. plot_swaps reads the directions as system_agreement does

VALUE_A = pl.DataFrame(
    {
        "system": ["x", "y", "z"] * 2,
        "query_id": ["q1"] * 3 + ["q2"] * 3,
        "value": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3],
    }
)
VALUE_B = VALUE_A.with_columns(pl.Series("value", [0.2, 0.1, 0.3, 0.2, 0.1, 0.3]))


def test_plot_swaps_b_inherits_higher_is_better() -> None:
    agreement = irm.system_agreement(VALUE_A, VALUE_B, higher_is_better=False)
    figure = plot.plot_swaps(VALUE_A, VALUE_B, higher_is_better=False)
    swaps = int(agreement["swaps"][0])
    assert swaps == 1
    assert _titles(figure) == [f"system orderings: {swaps} of 3 pairs swapped"]
    # lower is better: the lowest mean on top (height 0), x in a and y in b
    texts = [(text.get_text(), text.get_position()) for text in figure.axes[0].texts]
    left = {name: y for name, (x, y) in texts if x < 0}
    right = {name: y for name, (x, y) in texts if x > 0}
    assert (left, right) == ({"x": 0, "y": 1, "z": 2}, {"y": 0, "x": 1, "z": 2})


def test_plot_swaps_value_without_direction_still_refused() -> None:
    # the best system is drawn on top: a column of no known direction needs one
    message = (
        "column 'value' of a names no metric (unknown metric 'value'. Did you mean: mae, auc? See "
        "irm.list_metrics() for every metric and its aliases.), so which way is better "
        "is unknown: say it with higher_is_better=True (higher values are better) or "
        "higher_is_better=False"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_swaps(VALUE_A, VALUE_B)


REFERENCE = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 3,
        "doc_id": list("abc") + list("xyz"),
        "score": [3.0, 2.0, 1.0] * 2,
    }
)
RUNS = pl.DataFrame(
    {
        "system": ["A"] * 6 + ["B"] * 6,
        "query_id": (["q1"] * 3 + ["q2"] * 3) * 2,
        "doc_id": list("cba") + list("xyw") + list("abc") + list("xyz"),
        "score": [3.0, 2.0, 1.0] * 4,
    }
)
PER_QUERY = irm.evaluate(RUNS, ["rbo"], reference=REFERENCE, systems="system", per_query=True)
ONE = PER_QUERY.filter(pl.col("system") == "A").drop("system")


# 4. the similarity distribution


def test_similarity_distribution_one_panel_per_system() -> None:
    # A: 0.855 and 0.73; B: 1 and 1 (no longer 'rbo over 4 queries', the two pooled)
    means = PER_QUERY.group_by("system").agg(pl.col("rbo").mean()).sort("system")
    a, b = means["rbo"].to_list()
    assert b == 1.0
    assert _titles(plot.plot_similarity_distribution(PER_QUERY)) == [
        f"A: rbo over 2 queries: mean {a:.3f}, median {a:.3f}",
        "B: rbo over 2 queries: mean 1.000, median 1.000",
    ]


def test_similarity_distribution_of_a_lazy_result() -> None:
    lazy = irm.evaluate(
        RUNS.lazy(), ["rbo"], reference=REFERENCE.lazy(), systems="system", per_query=True
    )
    assert isinstance(lazy, pl.LazyFrame)
    expected = _titles(plot.plot_similarity_distribution(PER_QUERY))
    assert _titles(plot.plot_similarity_distribution(lazy)) == expected
    lazy_one = irm.evaluate(
        RUNS.filter(pl.col("system") == "A").drop("system").lazy(),
        ["rbo"],
        reference=REFERENCE.lazy(),
        per_query=True,
    )
    assert _titles(plot.plot_similarity_distribution(lazy_one)) == _titles(
        plot.plot_similarity_distribution(ONE)
    )


def test_similarity_distribution_numpy_bins() -> None:
    figure = plot.plot_similarity_distribution(ONE, bins=np.int64(4))
    assert len(figure.axes[0].patches) == 4


def test_similarity_distribution_values_above_one_are_drawn() -> None:
    # a numeric column over 1 (a count) is no longer cut at 1 by the histogram's range
    counts = ONE.with_columns(rbo=pl.Series([3.0, 5.0]))
    figure = plot.plot_similarity_distribution(counts, bins=2)
    assert sum(patch.get_height() for patch in figure.axes[0].patches) == 2


SIMILARITY_REFUSALS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    (
        "metric the system column",
        lambda: plot.plot_similarity_distribution(PER_QUERY, metric="system"),
        InvalidValueError,
        "metric='system' is the system column, not a similarity; choose one of 'rbo'",
    ),
    (
        "metric the query-id column",
        lambda: plot.plot_similarity_distribution(PER_QUERY, metric="query_id"),
        InvalidValueError,
        "metric='query_id' is the query-id column, not a similarity; choose one of 'rbo'",
    ),
    (
        "metric of text",
        lambda: plot.plot_similarity_distribution(
            ONE.with_columns(note=pl.lit("x")), metric="note"
        ),
        InvalidValueError,
        "column 'note' has dtype String, not a similarity's numbers; choose one of 'rbo'",
    ),
    (
        "bins=0",
        lambda: plot.plot_similarity_distribution(ONE, bins=0),
        InvalidValueError,
        "bins=0 is not a number of bins: it must be a whole number >= 1, e.g. bins=20",
    ),
    (
        "bins=2.5",
        lambda: plot.plot_similarity_distribution(ONE, bins=2.5),  # type: ignore[arg-type]
        InvalidValueError,
        "bins=2.5 is not a number of bins: it must be a whole number >= 1, e.g. bins=20",
    ),
    (
        "bins=True",
        lambda: plot.plot_similarity_distribution(ONE, bins=True),
        InvalidValueError,
        "bins=True is not a number of bins: it must be a whole number >= 1, e.g. bins=20",
    ),
    (
        "systems in a column system= does not name",
        lambda: plot.plot_similarity_distribution(PER_QUERY.rename({"system": "run"})),
        InvalidValueError,
        "query 'q1' has more than one row; one per query: a frame of several systems "
        "needs their column named with system= (one panel each), or filter it to one "
        "system",
    ),
    (
        "no query-id column",
        lambda: plot.plot_similarity_distribution(ONE.rename({"query_id": "topic"})),
        ColumnNotFoundError,
        "column 'query_id' is not in the frame; name the query-id column with query_id=, "
        "or pass irm.evaluate(run, metrics, reference=..., per_query=True)",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [case[1:] for case in SIMILARITY_REFUSALS],
    ids=[case[0] for case in SIMILARITY_REFUSALS],
)
def test_similarity_distribution_refusals(
    call: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_similarity_distribution_system_named_otherwise() -> None:
    renamed = PER_QUERY.rename({"system": "run"})
    titles = _titles(plot.plot_similarity_distribution(renamed, system="run"))
    assert titles == _titles(plot.plot_similarity_distribution(PER_QUERY))


# every plot takes the LazyFrame irm.evaluate gives for a LazyFrame


def test_every_plot_takes_a_lazy_frame() -> None:
    means = pl.DataFrame(
        {"system": ["a", "b"], "num_q": [2, 2], "P@1": [0.5, 1.0], "P@2": [0.5, 0.75]}
    )
    deltas = pl.DataFrame(
        {
            "metric": ["rmse"] * 3,
            "system": ["b"] * 3,
            "baseline": ["a"] * 3,
            "delta": [0.2, -0.1, -0.3],
            "higher_is_better": False,
        }
    )
    result = pl.DataFrame(
        {
            "metric": ["map"],
            "system": ["b"],
            "baseline": ["a"],
            "delta": [0.1],
            "ci_low": [0.02],
            "ci_high": [0.2],
            "p_adjusted": [0.01],
            "significant": [True],
        }
    )
    for draw, frame in (
        (plot.plot_metric_curves, means),
        (plot.plot_deltas, deltas),
        (plot.plot_significance_matrix, result),
        (plot.plot_ci, result),
    ):
        assert _titles(draw(frame.lazy())) == _titles(draw(frame))
