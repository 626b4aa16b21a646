"""Reports, round 11: render_report and write_report, beside irm.report.

- Beyond 26 systems the markers were the numbers 27, 28, .. written after the mean
  (``0.28002728ᵃᵇ``: the mean 0.2800 read as 0.28002728); they are now letters (``aa``,
  ``ab``, ..), separated by commas in every format and named so in the legend.
"""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.report import render_report

SUP = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖᑫʳˢᵗᵘᵛʷˣʸᶻ"


def _ladder(n: int) -> pl.DataFrame:
    """``n`` systems, each significantly better than every one before it."""
    names = [f"s{i}" for i in range(n)]
    rows = [
        {
            "metric": "map",
            "system": names[i],
            "baseline": names[j],
            "n": 10,
            "mean": i / 100,
            "baseline_mean": j / 100,
            "delta": (i - j) / 100,
            "significant": True,
            "higher_is_better": True,
        }
        for i in range(n)
        for j in range(i)
    ]
    return pl.DataFrame(rows)


LADDER = _ladder(30)
#: s28 beats s0 .. s27: a .. z, aa, ab
S28 = ",".join([*SUP, "ᵃᵃ", "ᵃᵇ"])
LEGEND = [
    "superscript x: significantly better than system x (adjusted p <= alpha); the "
    "markers of a cell are separated by commas",
    ", ".join(
        [f"{chr(97 + i)} = s{i}" for i in range(26)]
        + ["aa = s26", "ab = s27", "ac = s28", "ad = s29"]
    ),
]


@pytest.mark.parametrize(
    ("fmt", "start", "row"),
    [
        ("markdown", "| s28 |", f"| s28 | 0.2800{S28} |"),
        ("terminal", "ac  s28", f"ac  s28     0.2800{S28}"),
        (
            "latex",
            "s28 &",
            "s28 & 0&2800$^{" + ",".join([*"abcdefghijklmnopqrstuvwxyz", "aa", "ab"]) + "}$ \\\\",
        ),
    ],
)
def test_markers_beyond_z_are_letters_separated_by_commas(fmt: str, start: str, row: str) -> None:
    text = render_report(LADDER, fmt)  # type: ignore[arg-type]
    assert [line for line in text.splitlines() if line.startswith(start)] == [row]
    if fmt != "latex":
        assert [line for line in text.splitlines() if line in LEGEND] == LEGEND


def test_markers_beyond_z_in_the_html_table() -> None:
    page = irm.report(LADDER)._repr_html_()
    letters = ",".join([*"abcdefghijklmnopqrstuvwxyz", "aa", "ab"])
    assert f"<sup>{letters}</sup>" in page
    assert f"<sup>{letters},ac</sup>" in page  # s29
    assert LEGEND[1] in page


def test_markers_of_26_systems_stay_side_by_side() -> None:
    text = render_report(_ladder(26), "markdown")
    assert f"| s25 | **0.2500**{SUP[:25]} |" in text.splitlines()
    assert "superscript x: significantly better than system x (adjusted p <= alpha)" in text
