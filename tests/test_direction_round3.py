"""Whatever reads "better" reads the request's declared direction, parameters included;
an option an entry point does not use is refused, never ignored.

* ``rbo(kind='res')`` is RBO's residual (``max - min``, the uncertainty the unseen
  depths leave, as ``rbp_residual`` is RBP's): lower is better, declared once beside
  the parameter's choices (``Param.directions``) and read through
  ``MetricRequest.higher_is_better`` by ``system_agreement`` and ``plot_swaps``.
* ``compare``, ``tukey_hsd`` and ``optimize_fusion`` (and ``irm compare``, ``irm fuse
  --optimize``) read per-query values, which ``agg=`` does not change: refused.
* ``plot_swaps`` counts a swap as ``system_agreement`` does: a tie is none.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.metrics import metrics_table
from polars_irmetrics.comparison.agreement import swapped_pairs
from polars_irmetrics.comparison.plot import GREY, VERMILLION, plot_swaps
from polars_irmetrics.metrics.registry import list_metrics

from .helpers import irm_in_process

SRC = Path(__file__).resolve().parents[1] / "src" / "polars_irmetrics"


# --------------------------------------------------- D2: a direction turned by a parameter
@pytest.mark.parametrize(
    ("name", "direction"),
    [
        ("rbo@4", True),
        ("rbo(kind='ext')@4", True),
        ("rbo(kind='min')@4", True),
        ("rbo(kind='max')@4", None),  # grows with the unseen depths (round 31)
        ("rbo(kind='res')@4", None),  # the uncertainty, no overlap (round 31)
        ("rbo(kind='res', ties='w', p=0.8)", None),
    ],
)
def test_each_kind_of_rbo_has_its_direction(name: str, direction: bool | None) -> None:
    assert irm.parse_metric(name).higher_is_better is direction
    assert irm.get_metric("rbo").higher_is_better is True  # the metric's own, unchanged


def test_the_directions_parameters_declare_are_pinned() -> None:
    """Every value that turns a direction is one of its parameter's choices, and the
    audits found two: RBO's residual and upper bound (round 31). (MAD's kind, novelty's
    and serendipity's choose between peers' formulas of one meaning, and keep the
    metric's direction.)"""
    declared = {
        (metric.name, param.name, value): direction
        for metric in list_metrics()
        for param in metric.params
        for value, direction in param.directions.items()
    }
    assert declared == {("rbo", "kind", "max"): None, ("rbo", "kind", "res"): None}
    for metric in list_metrics():
        for param in metric.params:
            assert set(param.directions) <= set(param.choices or ()), (metric.name, param)


def test_no_reader_of_better_asks_the_metric_alone() -> None:
    """The one reading of a direction is the request's: no module outside the
    declarations reads ``<request>.metric.higher_is_better``, which ignores parameters."""
    readers = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if ".metric.higher_is_better" in path.read_text().replace("self.metric.", "")
    ]
    assert readers == []


def test_the_catalogue_listing_names_the_directions_parameters_turn() -> None:
    # `irm metrics` read the metric's direction alone: rbo listed as "higher" with no
    # word of kind='res', which system_agreement reads as of no direction
    listed = dict(metrics_table().select("name", "better").iter_rows())
    assert listed["rbo"] == "higher (kind='max': -; kind='res': -)"
    for metric in list_metrics():  # every other listing: its direction alone
        turned = any(
            d != metric.higher_is_better for p in metric.params for d in p.directions.values()
        )
        if not turned:
            plain = metric.higher_is_better
            assert listed[metric.name] == (
                "-" if plain is None else "higher" if plain else "lower"
            )


def _rbo_per_query() -> pl.DataFrame:
    """Three systems on two queries against one reference ranking: ``x`` is the
    reference itself, ``y`` shares its first document, ``z`` none; at one depth the
    residual is smaller where the overlap is higher (not at another depth: round 31)."""
    reference = pl.DataFrame(
        {"query_id": ["q1"] * 4 + ["q2"] * 4, "doc_id": list("abcd") + list("efgh")}
    ).with_columns(rank=pl.int_range(1, 5).over("query_id"))
    docs = {
        "x": list("abcd") + list("efgh"),
        "y": list("awvu") + list("efyt"),
        "z": list("stuv") + list("wxyz"),
    }
    runs = pl.concat(
        reference.with_columns(doc_id=pl.Series(d), system=pl.lit(s)) for s, d in docs.items()
    )
    metrics = ["rbo@4", "rbo(kind='res')@4"]
    return irm.evaluate(runs, metrics, reference=reference, systems="system", per_query=True)


def test_system_agreement_orders_the_residual_smallest_first_as_told() -> None:
    per_query = _rbo_per_query()
    means = per_query.drop("query_id").group_by("system").mean().sort("system")
    # x, y, z: the overlap falls and the residual rises
    assert means["rbo@4"].to_list() == sorted(means["rbo@4"].to_list(), reverse=True)
    assert means["rbo(kind='res')@4"].to_list() == sorted(means["rbo(kind='res')@4"])
    a = per_query.select("system", "query_id", "rbo@4")
    b = per_query.select("system", "query_id", "rbo(kind='res')@4")
    out = irm.system_agreement(a, b, "kendall", higher_is_better_b=False)
    assert out.select("pairs", "swaps", "correlation").row(0) == (3, 0, 1.0)
    # the residual read as higher-is-better would swap every pair
    flipped = irm.system_agreement(a, b, "kendall", higher_is_better_b=True)
    assert flipped.select("swaps", "correlation").row(0) == (3, -1.0)
    swaps = plot_swaps(a, b, higher_is_better_b=False)
    assert swaps.axes[0].get_title() == "system orderings: 0 of 3 pairs swapped"


# ----------------------------------------------- D3: agg= where per-query values are read
def _agg_message(given: str, agg: str, plain: str, calls: str) -> str:
    return (
        f"metric {given!r} summarizes its per-query values with agg={agg!r}, but {calls} "
        "compares the per-query values themselves, which agg= does not change, so agg= "
        f"would be ignored: drop agg= (e.g. {plain!r}), or take the summary from irm.evaluate"
    )


SUMMARIES = [
    ("P(agg='std')@1", "std", "precision@1"),
    ("P(agg='ci_halfwidth')@1", "ci_halfwidth", "precision@1"),
    ("P(agg='ci_halfwidth', ci_level=0.9)@1", "ci_halfwidth", "precision@1"),
    ("P(agg='min')@1", "min", "precision@1"),
    ("P(agg='max')@1", "max", "precision@1"),
    ("ndcg(agg='median', gain='exponential')@2", "median", "ndcg(gain='exponential')@2"),
    ("NumRet", "sum", "num_ret"),  # ir_measures' spelling sums its counts
]


def _ranking() -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    queries = ["q1", "q2", "q3"]
    qrels = pl.DataFrame({"query_id": queries, "doc_id": "r", "relevance": 1})
    a = pl.DataFrame({"query_id": queries, "doc_id": ["r", "n", "r"], "rank": 1})
    b = pl.DataFrame({"query_id": queries, "doc_id": ["n", "r", "r"], "rank": 1})
    c = pl.DataFrame({"query_id": queries, "doc_id": ["r", "r", "n"], "rank": 1})
    return {"a": a, "b": b, "c": c}, qrels


@pytest.mark.parametrize(("given", "agg", "plain"), SUMMARIES)
def test_compare_refuses_agg(given: str, agg: str, plain: str) -> None:
    runs, qrels = _ranking()
    message = _agg_message(given, agg, plain, "irm.compare")
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.compare(runs, ["P@1", given], qrels=qrels, baseline="a")
    assert str(raised.value) == message
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.compare(runs, [given], qrels=qrels, per_query=True)
    assert str(raised.value) == message
    with pytest.raises(irm.MetricParameterError) as raised:
        pl.concat(f.with_columns(system=pl.lit(s)) for s, f in runs.items()).irm.compare(
            [given], qrels=qrels
        )
    assert str(raised.value) == message


@pytest.mark.parametrize(("given", "agg", "plain"), SUMMARIES[:2])
def test_tukey_hsd_refuses_agg(given: str, agg: str, plain: str) -> None:
    runs, qrels = _ranking()
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.tukey_hsd(runs, ["P@1", given], qrels=qrels)
    assert str(raised.value) == _agg_message(given, agg, plain, "irm.tukey_hsd")


def test_a_summary_is_still_evaluate_s() -> None:
    """What compare refuses, evaluate computes: the spread over queries of each system."""
    runs, qrels = _ranking()
    out = irm.evaluate(runs["a"], ["P@1", "P(agg='std')@1", "NumRet"], qrels=qrels)
    assert out.select("P@1", "P(agg='std')@1", "NumRet").row(0) == pytest.approx(
        (2 / 3, (2 / 9) ** 0.5, 3)
    )


def _fusion_runs() -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    docs = {"query_id": "q1", "doc_id": ["a", "b", "c"]}
    bm25 = pl.DataFrame({**docs, "score": [3.0, 2.0, 1.0]})
    dense = pl.DataFrame({**docs, "score": [0.1, 0.9, 0.5]})
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
    return {"bm25": bm25, "dense": dense}, qrels


@pytest.mark.parametrize(("given", "agg", "plain"), SUMMARIES)
def test_optimize_fusion_refuses_agg(given: str, agg: str, plain: str) -> None:
    runs, qrels = _fusion_runs()
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.optimize_fusion(runs, given, qrels=qrels, step=0.5)
    assert str(raised.value) == _agg_message(given, agg, plain, "irm.optimize_fusion")


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "qrels.txt").write_text("q1 0 r 1\nq2 0 r 1\nq3 0 r 1\n")
    (tmp_path / "a.txt").write_text("q1 Q0 r 1 1.0 a\nq2 Q0 n 1 1.0 a\nq3 Q0 r 1 1.0 a\n")
    (tmp_path / "b.txt").write_text("q1 Q0 n 1 1.0 b\nq2 Q0 r 1 1.0 b\nq3 Q0 r 1 1.0 b\n")
    return ["a.txt", "b.txt"]


def test_irm_compare_refuses_agg(tmp_path: Path) -> None:
    runs = _files(tmp_path)
    given = "P(agg='std')@1"
    done = irm_in_process("compare", "--qrels", "qrels.txt", *runs, "-m", given, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    message = _agg_message(given, "std", "precision@1", "irm.compare")
    assert done.stderr == f"irm: error: {message}\n"


def test_irm_fuse_optimize_refuses_agg(tmp_path: Path) -> None:
    runs = _files(tmp_path)
    given = "P(agg='max')@1"
    command = ["fuse", *runs, "--optimize", "--qrels", "qrels.txt", "--metric", given]
    done = irm_in_process(*command, "--step", "0.5", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    message = _agg_message(given, "max", "precision@1", "irm.optimize_fusion")
    assert done.stderr == f"irm: error: {message}\n"


# -------------------------------------------------- plot_swaps counts as system_agreement
def _long(means: dict[str, tuple[float, float]]) -> pl.DataFrame:
    """Two queries per system (a paired test needs two), ``means[s]`` its values."""
    return pl.DataFrame(
        {
            "system": [s for s in means for _ in range(2)],
            "query_id": ["q1", "q2"] * len(means),
            "value": [v for pair in means.values() for v in pair],
        }
    )


def test_a_tie_broken_by_name_is_no_swap() -> None:
    """a ties x and y at 0.5; b puts y first (0.6 against 0.4). system_agreement counts
    no swap; the plot neither: both systems at one height on the left, no crossing."""
    a = _long({"x": (0.4, 0.6), "y": (0.6, 0.4)})
    b = _long({"x": (0.3, 0.5), "y": (0.7, 0.5)})
    assert irm.system_agreement(a, b)["swaps"].item() == 0
    figure = plot_swaps(a, b, higher_is_better=True, higher_is_better_b=True)
    panel = figure.axes[0]
    assert panel.get_title() == "system orderings: 0 of 1 pairs swapped"
    assert [tuple(line.get_ydata()) for line in panel.get_lines()] == [(0.5, 1.0), (0.5, 0.0)]
    assert [line.get_color() for line in panel.get_lines()] == [GREY, GREY]
    assert sorted(t.get_text() for t in panel.texts) == ["x", "x, y", "y"]


@pytest.mark.parametrize("seed", range(6))
def test_the_plot_counts_the_swaps_system_agreement_counts(seed: int) -> None:
    """Six systems whose means tie often (values on a coarse grid), in both results:
    the plot's count and its vermillion lines are system_agreement's pairs."""
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(6)]
    a = _long({s: _pair(rng) for s in names})
    b = _long({s: _pair(rng) for s in names})
    per_pair = irm.system_agreement(a, b, per_pair=True, test="randomization")
    swaps = int(per_pair["swapped"].sum())
    panel = plot_swaps(a, b, higher_is_better=True, higher_is_better_b=True).axes[0]
    assert panel.get_title() == f"system orderings: {swaps} of 15 pairs swapped"
    swapped = per_pair.filter("swapped")
    involved = set(swapped["system"]) | set(swapped["other"])
    colors = [line.get_color() for line in panel.get_lines()]
    assert colors == [VERMILLION if s in involved else GREY for s in names]


def _pair(rng: np.random.Generator) -> tuple[float, float]:
    first, second = rng.integers(0, 3, 2).tolist()
    return first / 2, second / 2


def test_swapped_pairs_is_the_sign_of_both_differences() -> None:
    left, right, swapped = swapped_pairs(np.array([0.5, 0.5, 0.2]), np.array([0.4, 0.6, 0.7]))
    assert list(zip(left.tolist(), right.tolist(), swapped.tolist(), strict=True)) == [
        (0, 1, False),  # a tie in a: no swap, whichever way names break it
        (0, 2, True),
        (1, 2, True),
    ]
