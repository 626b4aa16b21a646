"""A value on a rounding boundary of the four decimals (the trec_eval guide, "A value on
a rounding boundary"): ``irm trec-eval`` prints trec_eval's digit, because AP adds the
precisions in rank order in doubles, as trec_eval does (``Scope.sum_in_order``).

20 judged relevant documents; the run retrieves relevant ones at ranks 2, 5, 8 and 10
of 10. AP = (1/2 + 2/5 + 3/8 + 4/10) / 20 = 67/800 = 0.08375 exactly. trec_eval adds
the precisions in rank order in doubles: 0.5 + 0.4 + 0.375 + 0.4 = 1.6749999999999998,
over 20: 0.08374999999999999, printed ``0.0837`` by 10.0 and 9.0.8 alike (both binaries
built from their sources, 2026-12-03); an exact sum would give 0.08375, printed
``0.0838``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main

RELEVANT_AT = (2, 5, 8, 10)


def _tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels = pl.DataFrame(
        {"query_id": "q1", "doc_id": [f"r{i}" for i in range(1, 21)], "relevance": 1}
    )
    found = iter(range(1, 5))
    docs = [f"r{next(found)}" if rank in RELEVANT_AT else f"n{rank}" for rank in range(1, 11)]
    run = pl.DataFrame({"query_id": "q1", "doc_id": docs, "rank": range(1, 11)})
    return run, qrels


def test_the_value_is_trec_evals_double() -> None:
    run, qrels = _tables()
    in_rank_order = (1 / 2 + 2 / 5 + 3 / 8 + 4 / 10) / 20  # trec_eval's sum
    assert in_rank_order == 0.08374999999999999 != 67 / 800
    assert irm.evaluate(run, ["map"], qrels=qrels)["map"].item() == in_rank_order


@pytest.mark.parametrize("version", ["10", "9"])
def test_the_command_prints_trec_evals_digit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    run, qrels = _tables()
    (tmp_path / "qrels").write_text("".join(f"q1 0 {d} 1\n" for d in qrels["doc_id"]))
    (tmp_path / "run").write_text(
        "".join(f"q1 Q0 {d} {r} {100 - r} x\n" for d, r in run.select("doc_id", "rank").rows())
    )
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status = main(["trec-eval", "--trec-eval-version", version, "-m", "map", *files])
    # trec_eval 10.0 and 9.0.8 print this line (their binaries, run on these files)
    assert (status, capsys.readouterr().out) == (0, "map                   \tall\t0.0837\n")
