"""Exposure measures, round 15: a ``target=`` row with a null group (one ``group``
column, an intersectional dimension, or a per-query target's query id) gave its share
to no group: a single target warned that ids do not line up (``first: None``) and
scored against a target no ranking can meet; a per-query target's null query id was
dropped in silence. Each is refused, naming the columns."""

from __future__ import annotations

import io
import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

from .helpers import irm_in_process

QRELS = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": 1})
RUN = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "rank": [1, 2, 3]})
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c"], "group": ["big", "big", "small"]})
PEOPLE = pl.DataFrame(
    {"doc_id": ["a", "b", "c"], "team": ["big", "big", "small"], "site": ["x", "y", "x"]}
)


def _message(columns: list[str], rows: int = 1) -> str:
    named = [repr(c) for c in columns]
    return (
        f"the target (target=) has {rows} row(s) with a null {' or '.join(named)}: each row "
        "is one group's share of a target distribution, and a null names none; fill or "
        f"drop them, e.g. target.drop_nulls([{', '.join(named)}])"
    )


@pytest.mark.parametrize(
    ("groups", "target", "message"),
    [
        (  # was a CoverageWarning (first: None) and awrf 0.9631
            GROUPS,
            pl.DataFrame({"group": ["big", "small", None], "target": [0.5, 0.5, 0.0]}),
            _message(["group"]),
        ),
        (
            GROUPS,
            pl.DataFrame({"group": ["big", None], "target": [0.5, 0.5]}),
            _message(["group"]),
        ),
        (  # the null query's rows were dropped in silence
            GROUPS,
            pl.DataFrame(
                {
                    "query_id": ["q", "q", None],
                    "group": ["big", "small", "big"],
                    "target": [0.5, 0.5, 1.0],
                }
            ),
            _message(["query_id", "group"]),
        ),
        (
            GROUPS,
            pl.DataFrame({"query_id": ["q", "q"], "group": ["big", None], "target": [0.5, 0.5]}),
            _message(["query_id", "group"]),
        ),
        (  # an intersectional cell with a null dimension
            PEOPLE,
            pl.DataFrame(
                {
                    "team": ["big", "big", "small", None, None],
                    "site": ["x", "y", "x", "y", None],
                    "target": [0.25] * 4 + [0.0],
                }
            ),
            _message(["team", "site"], rows=2),
        ),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_a_null_group_in_the_target_is_refused(
    groups: pl.DataFrame, target: pl.DataFrame, message: str, lazy: bool
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(
            RUN.lazy() if lazy else RUN,
            ["awrf"],
            qrels=QRELS.lazy() if lazy else QRELS,
            groups=groups.lazy() if lazy else groups,
            target=target.lazy() if lazy else target,
        ).lazy().collect()


def test_a_target_without_nulls_still_scores() -> None:
    even = pl.DataFrame({"group": ["big", "small"], "target": [0.5, 0.5]})
    out = irm.evaluate(RUN, ["awrf"], qrels=QRELS, groups=GROUPS, target=even)
    assert out["awrf"][0] == pytest.approx(0.9630996655395252, abs=1e-12)


@pytest.fixture
def numbered(tmp_path: Path) -> Path:
    """Group names that read as text in one file and as integers in another."""
    RUN.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    numbers = GROUPS.with_columns(group=pl.Series(["1", "1", "2"]))
    numbers.write_parquet(tmp_path / "groups.parquet")
    pl.DataFrame({"group": [1, 2], "target": [0.5, 0.5]}).write_csv(tmp_path / "target.csv")
    return tmp_path


def test_ids_str_matches_the_group_names_its_error_names_it_for(numbered: Path) -> None:
    # the kind check's fix on the command line is --ids str, which read only the query
    # and document ids as text: the same error came back with the flag given
    args = ["evaluate", "run.parquet", "--qrels", "qrels.parquet", "--groups"]
    args += ["groups.parquet", "--target", "target.csv", "-m", "awrf"]
    refused = irm_in_process(*args, cwd=numbered)
    assert refused.returncode == 2
    assert refused.stderr == (
        "irm: error: column 'group' holds strings in --groups (String) but integers in "
        "--target (Int64); cast one side, e.g. --ids str (every id of every file read as "
        "text)\n"
    )
    done = irm_in_process(*args, "--ids", "str", "--format", "csv", cwd=numbered)
    assert (done.returncode, done.stderr) == (0, "")
    even = pl.DataFrame({"group": ["1", "2"], "target": [0.5, 0.5]})
    groups = pl.read_parquet(numbered / "groups.parquet")
    expected = irm.evaluate(RUN, ["awrf"], qrels=QRELS, groups=groups, target=even)
    got = pl.read_csv(io.StringIO(done.stdout))
    assert got["awrf"][0] == pytest.approx(expected["awrf"][0], abs=1e-9)
