"""Reports, round 11: render_report and write_report, beside irm.report.

- Beyond 26 systems the markers were the numbers 27, 28, .. written after the mean
  (``0.28002728ᵃᵇ``: the mean 0.2800 read as 0.28002728); they are now letters (``aa``,
  ``ab``, ..), separated by commas in every format and named so in the legend.
- ``write_report(result, "y.html")`` wrote the raw frame as an HTML table (no markers,
  no bold, no legend); its docstring says another suffix is refused. Refused now, naming
  ``irm.report(result).save(path)``.
- ``render_report(result, "html")`` was refused while its docstring listed ``"html"``:
  the refusal is documented now, with a message naming ``irm.report(result).to_html()``.
- ``digits=-1``, ``2.5``, ``"3"`` and a null mean gave Python's errors (or were taken)
  in render_report and write_report: irm.report's one check now, the same words.
- The bold reads the unrounded means (documented; shown here).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.report import render_report, write_report
from polars_irmetrics.errors import InvalidValueError

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


RMSE = pl.DataFrame(
    {
        "metric": ["rmse", "rmse"],
        "system": ["b", "c"],
        "baseline": ["a", "a"],
        "n": [10, 10],
        "mean": [0.30004, 0.30001],
        "baseline_mean": [0.5, 0.5],
        "delta": [-0.19996, -0.19999],
        "significant": [False, False],
        "higher_is_better": [False, False],
    }
)


@pytest.mark.parametrize(
    ("name", "fmt", "message"),
    [
        (
            "y.html",
            None,
            "report file '{dir}/y.html' names the HTML page, which write_report does not "
            "write (it holds the plots too); write it with "
            "irm.report(result).save('{dir}/y.html')",
        ),
        (
            "y.HTM",
            None,
            "report file '{dir}/y.HTM' names the HTML page, which write_report does not "
            "write (it holds the plots too); write it with "
            "irm.report(result).save('{dir}/y.HTM')",
        ),
        (
            "y.html",
            "html",
            "fmt='html' names the HTML page, which write_report does not write (it holds "
            "the plots too); write it with irm.report(result).save('{dir}/y.html')",
        ),
        (
            "y.md",
            "html",
            "fmt='html' names the HTML page, which write_report does not write (it holds "
            "the plots too); write it with irm.report(result).save('report.html')",
        ),
        (
            None,
            "html",
            "fmt='html' names the HTML page, which write_report does not write (it holds "
            "the plots too); write it with irm.report(result).save('report.html')",
        ),
    ],
)
def test_write_report_refuses_the_html_page(
    tmp_path: Path, name: str | None, fmt: Any, message: str
) -> None:
    path = None if name is None else tmp_path / name
    expected = message.format(dir=tmp_path)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(expected)}$"):
        write_report(RMSE, path, fmt)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_render_report_refuses_html_as_documented() -> None:
    message = (
        "report format 'html' is the page of irm.report (the table and the plots), which "
        "render_report does not render; use irm.report(result).to_html()"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        render_report(RMSE, "html")  # type: ignore[arg-type]
    doc = render_report.__doc__ or ""
    assert '``"html"`` is refused' in doc


NULL_MEAN = RMSE.with_columns(mean=pl.Series([0.3, None], dtype=pl.Float64))


@pytest.mark.parametrize(
    ("frame", "digits", "message"),
    [
        (RMSE, -1, "digits=-1 must be an integer in 0..12 (e.g. 4)"),
        (RMSE, 13, "digits=13 must be an integer in 0..12 (e.g. 4)"),
        (RMSE, 2.5, "digits=2.5 must be an integer in 0..12 (e.g. 4)"),
        (RMSE, "3", "digits='3' must be an integer in 0..12 (e.g. 4)"),
        (RMSE, True, "digits=True must be an integer in 0..12 (e.g. 4)"),
        (
            NULL_MEAN,
            4,
            "column 'mean' of result is null in row 1; the report reads a number there: "
            "pass the frame irm.compare returned, or drop that row",
        ),
    ],
)
@pytest.mark.parametrize("call", ["terminal", "markdown", "latex", "write .md", "irm.report"])
def test_the_reports_share_irm_reports_checks(
    tmp_path: Path, frame: pl.DataFrame, digits: Any, message: str, call: str
) -> None:
    calls = {
        "irm.report": lambda: irm.report(frame, digits=digits),
        "write .md": lambda: write_report(frame, tmp_path / "z.md", digits=digits),
    }
    render = lambda: render_report(frame, call, digits=digits)  # type: ignore[arg-type]  # noqa: E731
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        calls.get(call, render)()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_digits_are_checked_for_the_tidy_formats_too(tmp_path: Path, fmt: str) -> None:
    message = "digits=-1 must be an integer in 0..12 (e.g. 4)"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        write_report(RMSE, tmp_path / f"z.{fmt}", digits=-1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("means", "bold"),
    [
        ([0.30004, 0.30001], ["c"]),  # print alike at 4 digits: the unrounded lower
        ([0.3, 0.3], ["b", "c"]),  # an exact tie: both
    ],
)
def test_bold_reads_the_unrounded_means(means: list[float], bold: list[str]) -> None:
    frame = RMSE.with_columns(mean=pl.Series(means))
    text = render_report(frame, "markdown")
    rows = [line for line in text.splitlines() if line.startswith(("| b ", "| c "))]
    assert [r.split(" ")[1] for r in rows if "**0.3000**" in r] == bold
    assert all("0.3000" in r for r in rows)
    latex = render_report(frame, "latex")
    assert [r.split(" ")[0] for r in latex.splitlines() if "\\textbf" in r] == bold
    page = irm.report(frame)._repr_html_()
    assert len(re.findall(r"font-weight: bold[^>]*>0\.3000", page)) == len(bold)
