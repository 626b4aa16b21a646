"""A file's name given where a table is wanted (``irm.evaluate("run.csv", ...)``, a
``pathlib.Path``; ``qrels=`` likewise) is told that it is a path and how to read it,
where the message before listed the table types and said "got str"."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError

RUN = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})


def _said(path: str, name: str) -> str:
    reader = "read_trec_run" if name == "run" else "read_trec_qrels"
    return (
        f"{name} is a path ({path!r}), not a table: read it first, e.g. "
        f"irm.{reader}({path!r}) for a TREC {name}, pl.scan_parquet({path!r}) or "
        f"pl.scan_csv({path!r}) for a table (the command line reads files: irm "
        "evaluate PATH ...)"
    )


@pytest.mark.parametrize("given", ["run.csv", Path("runs") / "a.parquet"], ids=["str", "Path"])
def test_a_path_as_the_run(given: object) -> None:
    with pytest.raises(ColumnTypeError) as caught:
        irm.evaluate(given, ["map"], qrels=RUN)  # type: ignore[arg-type]
    assert str(caught.value) == _said(str(given), "run")


def test_a_path_as_the_judgments() -> None:
    with pytest.raises(ColumnTypeError) as caught:
        irm.evaluate(RUN, ["map"], qrels="qrels.txt")  # type: ignore[arg-type]
    assert str(caught.value) == _said("qrels.txt", "qrels")
