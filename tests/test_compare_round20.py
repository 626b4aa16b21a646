"""Round 20 (compare, exposure, recsys warnings): the expected-exposure names declared
once, and interactions= coverage warnings that name the metrics in the order asked."""

from __future__ import annotations

import ast
from pathlib import Path

import polars_irmetrics as irm
from polars_irmetrics.metrics.fairness import EXPECTED_EXPOSURE, FAIRNESS_METRICS

SRC = Path(irm.__file__).parent


def test_expected_exposure_names_are_read_from_their_declarations() -> None:
    # the metrics of fairness.py that read the run, the judgments and groups= (no target)
    declared = {m.name for m in FAIRNESS_METRICS if m.reads == ("run", "judgments", "groups")}
    assert EXPECTED_EXPOSURE == declared == {"ee_loss", "ee_disparity", "ee_relevance"}


def _spelled_sets() -> list[str]:
    """The modules that spell a set literal of the three expected-exposure names."""
    names = {"ee_loss", "ee_disparity", "ee_relevance"}
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Set | ast.List | ast.Tuple):
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if names <= values:
                    found.append(str(path.relative_to(SRC)))
    return found


def test_expected_exposure_names_are_declared_once() -> None:
    # exposure/rnd.py (EXPECTED), exposure/coverage.py (_JUDGED_GROUPS) and
    # engines/_partition.py (_EXPECTED_EXPOSURE) each spelled the set before
    assert _spelled_sets() == []
