"""Fusion, round 10 (a probe against ranx).

- ``optimize_fusion`` cut each grid point's ranking at k before ``judged_only=True``
  dropped the unjudged documents: ``P(judged_only=True)@2`` was 0.0 at every point for
  a ranking u1, u2, r1, n1 (r1 relevant, n1 judged not), where it is 0.5 (and
  ``ndcg(judged_only=True)@2`` 1.0), as fusing then evaluating gives.
- ``rbc``'s grid held ``phi=0`` (ranx's 0.01 rounded at step 0.1), where every document
  but each run's first weighs 0 and the order is the tie-break's: the search picked it
  and the pick followed the ids' spelling. Refused by fuse, left out of the grid.
- ``weights=`` given as a set was applied in its hash order (``{3, 1}`` is ``[1, 3]``).
- ``norm=['min-max']`` raised Python's ``TypeError: unhashable type``.
- ``irm fuse --score sc`` on a file without the column printed polars' text.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError, UnknownMetricError

from .helpers import irm_in_process

RUN = pl.DataFrame(
    {"query_id": "q", "doc_id": ["u1", "u2", "r1", "n1"], "score": [4.0, 3.0, 2.0, 1.0]}
)
QRELS = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["r1", "n1"], "relevance": [1, 0]})


@pytest.mark.parametrize(
    ("metric", "value"), [("P(judged_only=True)@2", 0.5), ("ndcg(judged_only=True)@2", 1.0)]
)
def test_the_grid_reads_judged_only_metrics_whole(metric: str, value: float) -> None:
    _, grid = irm.optimize_fusion(
        {"a": RUN, "b": RUN}, metric, qrels=QRELS, step=0.5, return_grid=True
    )
    assert grid.get_column(metric).to_list() == [value] * 3
    fused = irm.fuse({"a": RUN, "b": RUN}, "wsum", weights=[0.5, 0.5])
    assert irm.evaluate(fused, [metric], qrels=QRELS)[metric].item() == value


def test_rbc_leaves_phi_0_out() -> None:
    message = (
        "rbc: phi=0 is not valid; it must be a number in (0, 1) (phi=0 weights every "
        "document but each run's first 0 ** (rank - 1) = 0, their order the tie-break's; "
        "phi=1 weights every document (1 - 1) * 1 = 0, a fused run of ties ordered by the "
        "tie-break alone)"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.fuse({"a": RUN, "b": RUN}, "rbc", phi=0)
    _, grid = irm.optimize_fusion(
        {"a": RUN, "b": RUN}, "map", qrels=QRELS, method="rbc", step=0.1, return_grid=True
    )
    assert grid.get_column("phi").to_list() == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


@pytest.mark.parametrize("weights", [{3, 1}, frozenset({3, 1})], ids=["set", "frozenset"])
def test_weights_in_a_set_are_refused(weights: object) -> None:
    other = RUN.with_columns(score=pl.Series([1.0, 2.0, 3.0, 4.0]))
    message = (
        f"weights={weights!r} is a set, whose order is no run's; weights must be a list of "
        "numbers, one per run in the runs' order ('a', 'b'), e.g. weights=[0.5, 0.5], or a "
        "dict of run name to number, e.g. weights={'a': 0.5, 'b': 0.5}"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse({"a": RUN, "b": other}, "wsum", norm="min-max", weights=weights)  # type: ignore[arg-type]


@pytest.mark.parametrize("norm", [["min-max"], {"min-max"}], ids=["list", "set"])
def test_a_norm_that_is_no_name_is_refused(norm: object) -> None:
    message = (
        f"norm={norm!r} is not a normalisation's name; choose one of min-max, "
        "min-max-inverted, max, sum, zmuv, rank, borda, or None"
    )
    with pytest.raises(UnknownMetricError, match=f"^{re.escape(message)}$"):
        irm.fuse({"a": RUN, "b": RUN}, "sum", norm=norm)  # type: ignore[arg-type]


def test_the_command_line_names_a_missing_score_column(tmp_path: Path) -> None:
    (tmp_path / "a.run").write_text("q1 Q0 a 1 3.0 x\nq1 Q0 b 2 2.0 x\n")
    (tmp_path / "b.run").write_text("q1 Q0 b 1 3.0 y\nq1 Q0 a 2 2.0 y\n")
    done = irm_in_process("fuse", "a.run", "b.run", "--score", "sc", "-o", "o.run", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: a.run: no column 'sc' nor 'rank' (its columns: 'query_id', 'doc_id', "
        "'score', 'run_id'); name the scores with --score COL, or the ranks with --rank COL\n"
    )
