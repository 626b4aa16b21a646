"""Values on a rounding boundary of trec_eval's four decimals: ``irm trec-eval`` prints
trec_eval's digit, because the measures trec_eval defines add their terms in rank order
in doubles, as trec_eval's loops add them (``Scope.sum_in_order``), and ``irm.evaluate``
returns that double, the same bits on every engine and row order.

Each case is one query: the run retrieves documents d1, d2, ... at ranks 1, 2, ... with
the labels listed (-1: not in the judgments), and the judgments add ``extra_relevant``
relevant and ``extra_nonrelevant`` non-relevant documents not retrieved. Found by
enumerating small rankings whose rank-order double sum and exact sum print different
fourth decimals. Every expected output below is what the trec_eval 10.0 and 9.0.8
binaries (built from usnistgov/trec_eval's v10.0 and v9.0.8 sources) printed on these
files, 2026-12-03; the tests never run a binary.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main

INFAP_EPSILON = 0.00001  # m_infap.c


class Case(NamedTuple):
    labels: tuple[int, ...]
    extra_relevant: int
    extra_nonrelevant: int
    measures: tuple[str, ...]
    printed: str  # trec_eval 10.0's and 9.0.8's output (their binaries)


CASES = {
    # R = 5 + 3 = 8; the precisions 1/2, 2/3, 3/4, 4/5, 5/6 added in rank order are
    # 3.5500000000000003, / 8 = 0.44375000000000003 -> 0.4438; exactly 3.55 / 8 =
    # 0.44375, whose nearest double (0.443749999999999978) prints 0.4437
    "map": Case(
        (0, 1, 1, 1, 1, 1),
        3,
        0,
        ("map", "map_cut.6"),
        "map                   \tall\t0.4438\nmap_cut_6             \tall\t0.4438\n",
    ),
    # R = 6 + 10 = 16, N = 4 + 2 = 6: the terms 1, 1 - 1/6, 1 - 1/6, 1 - 2/6, 1 - 2/6,
    # 1 - 3/6 added in rank order are 4.500000000000001, / 16 -> 0.2813; exactly 4.5 / 16
    # = 0.28125 prints 0.2812
    "bpref": Case(
        (1, 0, 1, 1, 0, 1, 1, -1, 0, 1, 0),
        10,
        2,
        ("bpref",),
        "bpref                 \tall\t0.2813\n",
    ),
    # R = 4: m_infap.c's four terms added in rank order, / 4 -> 0.4187; their correctly
    # rounded sum (math.fsum), / 4 -> 0.4188
    "infAP": Case(
        (-1, 1, -1, 0, 1, -1, 0, 1, 0, 1),
        0,
        0,
        ("infAP",),
        "infAP                 \tall\t0.4187\n",
    ),
}


def _files(tmp_path: Path, case: Case) -> list[str]:
    qrels = [f"q1 0 d{i} {label}" for i, label in enumerate(case.labels, 1) if label >= 0]
    qrels += [f"q1 0 r{i} 1" for i in range(case.extra_relevant)]
    qrels += [f"q1 0 n{i} 0" for i in range(case.extra_nonrelevant)]
    run = [f"q1 Q0 d{i} {i} {100 - i} x" for i in range(1, len(case.labels) + 1)]
    (tmp_path / "qrels").write_text("".join(line + "\n" for line in qrels))
    (tmp_path / "run").write_text("".join(line + "\n" for line in run))
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


@pytest.mark.parametrize("version", ["10", "9"])
@pytest.mark.parametrize("name", list(CASES))
def test_the_command_prints_trec_evals_digit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, version: str
) -> None:
    case = CASES[name]
    files = _files(tmp_path, case)
    measures = [arg for m in case.measures for arg in ("-m", m)]
    status = main(["trec-eval", "--trec-eval-version", version, *measures, *files])
    assert (status, capsys.readouterr().out) == (0, case.printed)


def _in_rank_order(name: str, case: Case) -> float:
    """trec_eval's loop (m_map.c, m_bpref.c, m_infap.c), transcribed: the double it
    holds for the query."""
    labels = case.labels
    r = labels.count(1) + case.extra_relevant
    n = labels.count(0) + case.extra_nonrelevant
    total, rel, nonrel = 0.0, 0, 0
    for j, label in enumerate(labels):
        if label < 0:
            continue
        if label == 0:
            nonrel += 1
            continue
        rel += 1
        if name == "map":
            total += rel / (j + 1)
        elif name == "bpref":
            total += 1.0 - min(nonrel, r) / min(n, r) if nonrel else 1.0
        elif j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel) / fj) * (
                (rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON)
            )
    return total / r


def _tables(case: Case) -> tuple[pl.DataFrame, pl.DataFrame]:
    judged = [(f"d{i}", label) for i, label in enumerate(case.labels, 1) if label >= 0]
    judged += [(f"r{i}", 1) for i in range(case.extra_relevant)]
    judged += [(f"n{i}", 0) for i in range(case.extra_nonrelevant)]
    qrels = pl.DataFrame(
        {"query_id": "q1", "doc_id": [d for d, _ in judged], "relevance": [x for _, x in judged]}
    )
    size = len(case.labels)
    run = pl.DataFrame(
        {
            "query_id": "q1",
            "doc_id": [f"d{i}" for i in range(1, size + 1)],
            "rank": range(1, size + 1),
        }
    )
    return run, qrels


@pytest.mark.parametrize("name", list(CASES))
def test_evaluate_returns_trec_evals_double_on_every_engine(name: str) -> None:
    case = CASES[name]
    metric = {"map": "map", "bpref": "bpref", "infAP": "infap"}[name]
    run, qrels = _tables(case)
    expected = _in_rank_order(name, case)
    shuffled = run.sample(fraction=1.0, shuffle=True, seed=7)
    for frame in (run, shuffled, run.reverse()):
        plan = irm.evaluate(frame.lazy(), [metric], qrels=qrels.lazy(), per_query=True)
        for engine in ("in-memory", "streaming"):
            value = plan.collect(engine=engine)[metric].item()
            assert value == expected, (engine, value, expected)
