"""Round 20 (compare, exposure, recsys warnings): the expected-exposure names declared
once, and interactions= coverage warnings that name the metrics in the order asked."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning
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


# four users' lists of 3 items; interactions= holds 9 items, 'a' the only one of the 4
# recommended (a, b, c, d): 1 of 4 items, which the coverage warning names
_RUN = pl.DataFrame(
    {
        "query_id": ["u1"] * 3 + ["u2"] * 3,
        "doc_id": ["a", "b", "c", "a", "b", "d"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)
_QRELS = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
_INTERACTIONS = pl.DataFrame({"query_id": ["x1"] * 8 + ["u1"], "doc_id": [*"zyxwvuts", "a"]})


@pytest.mark.parametrize(
    ("metrics", "named"),
    [
        # accuracy (mcc, reco_accuracy), beyond accuracy (novelty, pop_rsp) interleaved:
        # the beyond-accuracy ones were named first before, then the accuracy ones
        (
            ["mcc@3", "novelty(kind='replay')@3", "reco_accuracy@3", "pop_rsp@3"],
            "mcc@3, novelty(kind='replay')@3, reco_accuracy@3 and pop_rsp@3",
        ),
        (["reco_accuracy@3", "pop_rsp@3"], "reco_accuracy@3 and pop_rsp@3"),
        (["mcc@3", "novelty(kind='replay')@3"], "mcc@3 and novelty(kind='replay')@3"),
    ],
)
def test_history_warning_names_the_metrics_in_the_order_asked(
    metrics: list[str], named: str
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(_RUN, metrics, qrels=_QRELS, interactions=_INTERACTIONS)
    texts = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    items = [t for t in texts if t.startswith("interactions= holds only 1 of the 4 items")]
    assert len(items) == 1, texts
    assert f"so {named} read it as never seen" in items[0]
    # the same names once each, none left out
    said = re.search(r"so (.*) read it as never seen", items[0])
    assert said is not None
    assert said.group(1) == named
