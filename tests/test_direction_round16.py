"""Round 16: whatever reads "better" reads the metric's own summary too.

* ``gm_map`` and ``gm_bpref`` are summarized over queries by the geometric mean of their
  per-query values (AP, bpref), ``num_q`` by their sum (``Metric.aggregate``). An entry
  point that reads the per-query values by their arithmetic mean (``compare``,
  ``tukey_hsd``, ``optimize_fusion``, ``reproducibility``; ``irm compare``, ``irm fuse
  --optimize``) showed MAP under the name ``gm_map``, bolded and optimised it: refused
  (``refuse_summaries``), as ``agg=`` is; ``gm_map(agg='mean')``, the mean they read,
  is compared. ``system_agreement`` and ``plot_swaps`` ordered a per-query ``gm_map``
  column's systems by MAP: refused (``refuse_own_summaries``).
* ``system_agreement(per_pair=True)``: two systems tied on a lower-is-better metric
  differ by 0.0, not -0.0.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import irm_in_process

QUERIES = [f"q{i}" for i in range(6)]
QRELS = pl.DataFrame({"query_id": QUERIES, "doc_id": ["r"] * 6, "relevance": [1] * 6})


def _run(positions: list[int | None]) -> pl.DataFrame:
    """Ten documents per query, the relevant one ``r`` at the given rank (None: absent)."""
    rows = []
    for query, position in zip(QUERIES, positions, strict=True):
        docs = [f"n{i}" for i in range(10)]
        if position is not None:
            docs[position - 1] = "r"
        rows += [(query, doc, float(10 - i)) for i, doc in enumerate(docs)]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")


# A: AP 1, 1, 1, 0, 0, 1 (MAP 4/6 = 0.667; GMAP exp((4 log 1 + 2 log 1e-5) / 6) =
# 1e-5 ** (1/3) = 0.0215); B: AP 1/2 on every query (MAP = GMAP = 0.5). B is better
# on gm_map, A on map: compare's arithmetic mean bolded A under "gm_map".
A = _run([1, 1, 1, None, None, 1])
B = _run([2, 2, 2, 2, 2, 2])


def _own(label: str, name: str, word: str, calls: str) -> str:
    return (
        f"metric {label!r} is summarized over queries by the {word} of its per-query values "
        f"({name}'s own summary), but {calls} reads the per-query values by their "
        f"arithmetic mean, which is not {name}: its means, wins and best system would be "
        f"another metric's under the name {label!r}; take {label!r} from irm.evaluate, or "
        "pass a metric summarized by the mean of its per-query values"
    )


OWN = [
    ("gm_map", "gm_map", "geometric mean"),
    ("gm_ap", "gm_map", "geometric mean"),  # the alias, named as given
    ("gm_bpref", "gm_bpref", "geometric mean"),
    ("num_q", "num_q", "sum"),
]


def test_the_summaries_differ() -> None:
    """The premise: evaluate's gm_map is not the mean of its per-query values."""
    out = pl.concat([irm.evaluate(run, ["map", "gm_map"], qrels=QRELS) for run in (A, B)]).drop(
        "num_q"
    )
    assert out["map"].to_list() == pytest.approx([4 / 6, 0.5])
    assert out["gm_map"].to_list() == pytest.approx([1e-5 ** (1 / 3), 0.5])


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(("label", "name", "word"), OWN)
def test_compare_refuses_a_metric_summarized_its_own_way(
    label: str, name: str, word: str, lazy: bool
) -> None:
    runs = {"A": A.lazy() if lazy else A, "B": B.lazy() if lazy else B}
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.compare(runs, ["map", label], qrels=QRELS, baseline="A")
    assert str(raised.value) == _own(label, name, word, "irm.compare")


@pytest.mark.parametrize(("label", "name", "word"), OWN)
def test_tukey_hsd_refuses_it(label: str, name: str, word: str) -> None:
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.tukey_hsd({"A": A, "B": B.lazy()}, [label], qrels=QRELS)
    assert str(raised.value) == _own(label, name, word, "irm.tukey_hsd")


@pytest.mark.parametrize(("label", "name", "word"), OWN[:3])  # num_q: no direction first
def test_optimize_fusion_refuses_it(label: str, name: str, word: str) -> None:
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.optimize_fusion({"a": A, "b": B}, label, qrels=QRELS, step=0.5)
    assert str(raised.value) == _own(label, name, word, "irm.optimize_fusion")


@pytest.mark.parametrize(("label", "name", "word"), OWN)
def test_reproducibility_refuses_it(label: str, name: str, word: str) -> None:
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.reproducibility(
            {"baseline": B, "advanced": A}, {"baseline": B, "advanced": A}, label, qrels=QRELS
        )
    assert str(raised.value) == _own(label, name, word, "irm.reproducibility")


def test_a_mean_summary_is_still_compared() -> None:
    out = irm.compare({"A": A, "B": B}, ["map", "num_rel"], qrels=QRELS, baseline="A")
    # map: B - A per query -1/2, -1/2, -1/2, +1/2, +1/2, -1/2; mean 0.5 against 4/6
    assert out["metric"].to_list() == ["map", "num_rel"]
    assert out["mean"].to_list() == pytest.approx([0.5, 1.0])
    assert out["baseline_mean"].to_list() == pytest.approx([4 / 6, 1.0])


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "qrels.txt").write_text("q1 0 r 1\nq2 0 r 1\nq3 0 r 1\n")
    (tmp_path / "a.txt").write_text("q1 Q0 r 1 1.0 a\nq2 Q0 n 1 1.0 a\nq3 Q0 r 1 1.0 a\n")
    (tmp_path / "b.txt").write_text("q1 Q0 n 1 1.0 b\nq2 Q0 r 1 1.0 b\nq3 Q0 r 1 1.0 b\n")
    return ["a.txt", "b.txt"]


def test_irm_compare_refuses_it(tmp_path: Path) -> None:
    runs = _files(tmp_path)
    done = irm_in_process("compare", "--qrels", "qrels.txt", *runs, "-m", "gm_map", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    message = _own("gm_map", "gm_map", "geometric mean", "irm.compare")
    assert done.stderr == f"irm: error: {message}\n"


def test_irm_fuse_optimize_refuses_it(tmp_path: Path) -> None:
    runs = _files(tmp_path)
    command = ["fuse", *runs, "--optimize", "--qrels", "qrels.txt", "--metric", "gm_bpref"]
    done = irm_in_process(*command, "--step", "0.5", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    message = _own("gm_bpref", "gm_bpref", "geometric mean", "irm.optimize_fusion")
    assert done.stderr == f"irm: error: {message}\n"


# ------------------------------------------- the systems ordered by the column's summary
def _per_query(metric: str) -> pl.DataFrame:
    """A, B and C (AP 1/3 everywhere: map = gm_map = 1/3) per query. Ordered by
    evaluate's gm_map B (0.5) > C (1/3) > A (0.0215); by map A (2/3) > B > C."""
    runs = {"A": A, "B": B, "C": _run([3] * 6)}
    long = pl.concat([run.with_columns(system=pl.lit(name)) for name, run in runs.items()])
    return irm.evaluate(long, [metric], qrels=QRELS, systems="system", per_query=True)


def test_the_orderings_differ() -> None:
    means = pl.concat(
        [irm.evaluate(run, ["map", "gm_map"], qrels=QRELS) for run in (A, B, _run([3] * 6))]
    )
    assert means["map"].to_list() == pytest.approx([2 / 3, 1 / 2, 1 / 3])
    assert means["gm_map"].to_list() == pytest.approx([1e-5 ** (1 / 3), 1 / 2, 1 / 3])


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("method", ["kendall", "tau_ap"])
@pytest.mark.parametrize("side", ["a", "b"])
def test_system_agreement_refuses_a_column_summarized_its_own_way(
    method: str, side: str, lazy: bool
) -> None:
    own, plain = _per_query("gm_map"), _per_query("map")
    a, b = (own, plain) if side == "a" else (plain, own)
    # before: tau_ap 1.0 and 0 swaps, the systems of gm_map ordered by their map
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.system_agreement(a.lazy() if lazy else a, b.lazy() if lazy else b, method)
    assert str(raised.value) == _own("gm_map", "gm_map", "geometric mean", "irm.system_agreement")


def test_plot_swaps_refuses_it() -> None:
    from polars_irmetrics.comparison.plot import plot_swaps

    with pytest.raises(irm.MetricParameterError) as raised:
        plot_swaps(_per_query("map"), _per_query("gm_map").lazy())
    assert str(raised.value) == _own("gm_map", "gm_map", "geometric mean", "plot_swaps")


def test_a_column_of_no_metric_is_still_read() -> None:
    a = _per_query("map")
    b = a.rename({"map": "value"})
    out = irm.system_agreement(a, b, metric_b="value", higher_is_better_b=True)
    assert out.select("correlation", "swaps").row(0) == (1.0, 0)


# -------------------------------------------- a tie of a lower-is-better metric is 0.0
def test_per_pair_deltas_of_a_tie_are_positive_zero() -> None:
    """unjudged@2 per query: x 1/2, 1/2; y 1/2, 1/2 (x ties y); z 0, 0. Lower is better,
    so the means were negated to order them, and the tie's delta came back as -0.0."""
    a = pl.DataFrame(
        {
            "system": ["x", "x", "y", "y", "z", "z"],
            "query_id": ["q1", "q2"] * 3,
            "unjudged@2": [0.5, 0.5, 0.5, 0.5, 0.0, 0.0],
        }
    )
    out = irm.system_agreement(a, a.lazy(), per_pair=True)
    # pairs (x, y), (x, z), (y, z): means 0.5 - 0.5 = 0, 0.5 - 0 = 0.5, 0.5 - 0 = 0.5
    assert out["delta_a"].to_list() == [0.0, 0.5, 0.5]
    assert str(out["delta_b"].to_list()) == "[0.0, 0.5, 0.5]"  # not -0.0
    assert str(out["delta_a"].to_list()) == "[0.0, 0.5, 0.5]"


def test_the_mean_asked_for_is_compared() -> None:
    """gm_map(agg='mean') is the arithmetic mean of the per-query AP, what compare reads
    (it was refused as an agg= compare would ignore, naming 'gm_map' as the fix)."""
    out = irm.compare({"A": A, "B": B}, ["gm_map(agg='mean')"], qrels=QRELS, baseline="A")
    assert out["mean"].to_list() == pytest.approx([0.5])
    assert out["baseline_mean"].to_list() == pytest.approx([4 / 6])
    assert (out["wins"].item(), out["losses"].item()) == (2, 4)
    expected = irm.evaluate(A, ["gm_map(agg='mean')"], qrels=QRELS)
    assert expected["gm_map(agg='mean')"].item() == pytest.approx(4 / 6)


# -------------------------- optimize_fusion: a metric of a table it does not take, by name
def _other_table(label: str, what: str, flag: bool = False) -> str:
    metric, qrels = (f"--metric {label}", "--qrels") if flag else (f"metric={label!r}", "qrels=")
    example = "--metric ndcg@10" if flag else "metric='ndcg@10'"
    return (
        f"{metric} reads {what}, which optimize_fusion does not take: it scores each fused "
        f"ranking against {qrels} alone, with a ranking metric of a run and judgments "
        f"(e.g. {example})"
    )


GROUPS = "document groups (one row per document and group: doc_id, group)"
HISTORY = (
    "the interaction history (where item popularity, the catalogue and each user's "
    "history come from)"
)
OTHER_TABLES = [
    ("item_mad@2", GROUPS),  # lower is better, one value of the whole table
    ("user_mad@2", "user clusters (one row per user: the query id column and group)"),
    ("pop_rsp@2", HISTORY),
    ("pop_reo@2", HISTORY),
    ("aclt@2", HISTORY),
]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(("label", "what"), OTHER_TABLES)
def test_optimize_fusion_names_the_table_it_does_not_take(
    label: str, what: str, lazy: bool
) -> None:
    # it was the door's refusal: "pass groups=... to irm.evaluate", a keyword
    # optimize_fusion has not
    runs = {"a": A.lazy() if lazy else A, "b": B}
    with pytest.raises(irm.MetricParameterError) as raised:
        irm.optimize_fusion(runs, label, qrels=QRELS, step=0.5)
    assert str(raised.value) == _other_table(label, what)


def test_irm_fuse_optimize_names_the_table(tmp_path: Path) -> None:
    runs = _files(tmp_path)
    command = ["fuse", *runs, "--optimize", "--qrels", "qrels.txt", "--metric", "item_mad@2"]
    done = irm_in_process(*command, "--step", "0.5", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"irm: error: {_other_table('item_mad@2', GROUPS, flag=True)}\n"


# --------------------------------------- tukey_hsd names itself, not irm.compare
def _unpaired(label: str, tables: str, evaluate: str, calls: str) -> str:
    return (
        f"metric {label!r} is computed from {tables}, which {calls} does not take (it pairs "
        "the per-query values of runs and judgments, or of predictions): evaluate it with "
        f"irm.evaluate({evaluate}) for each system"
    )


@pytest.mark.parametrize("calls", ["irm.compare", "irm.tukey_hsd"])
@pytest.mark.parametrize(
    ("label", "tables", "evaluate"),
    [
        ("pop_rsp@2", "a run, judgments and the interaction history", "table, qrels=..., "
         "interactions=..."),
        ("rbo@2", "a run and a reference run", "table"),
    ],
)  # fmt: skip
def test_a_metric_of_another_table_is_refused_by_the_entry_point_called(
    label: str, tables: str, evaluate: str, calls: str
) -> None:
    call = irm.compare if calls == "irm.compare" else irm.tukey_hsd
    with pytest.raises(irm.MetricParameterError) as raised:
        call({"A": A, "B": B.lazy()}, [label], qrels=QRELS)
    assert str(raised.value) == _unpaired(label, tables, evaluate, calls)
