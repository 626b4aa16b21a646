"""irm.report: the publication table (HTML, LaTeX, Markdown), the self-contained page
(rendered in headless Chromium too), plots on given axes with readable colours (the
progress bar: test_progress.py)."""

from __future__ import annotations

import html
import json
import re
import shutil
import stat
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.io.files import sample_paths

METRICS = ["ndcg@5", "ndcg@10", "map"]


@pytest.fixture(scope="module")
def sample() -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    paths, qrels = sample_paths()
    return {p.stem.removeprefix("run_"): pl.read_parquet(p) for p in paths}, pl.read_parquet(qrels)


@pytest.fixture(scope="module")
def result(sample: tuple[dict[str, pl.DataFrame], pl.DataFrame]) -> pl.DataFrame:
    runs, qrels = sample
    return irm.compare(
        runs, METRICS, qrels=qrels, baseline="bm25", test="randomization", seed=7,
        n_resamples=2000, correction="fdr_bh", alpha=0.1,
    )  # fmt: skip


@pytest.fixture(scope="module")
def page(result: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("page") / "report.html"
    irm.report(result, title="Sample").save(path)
    return path, path.read_text(encoding="utf-8")


class _Cells(HTMLParser):
    """The text of each body cell of the table, row by row (<th> stub, then <td>s)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.bold: list[tuple[int, int]] = []
        self._body = self._cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody":
            self._body = True
        elif self._body and tag == "tr":
            self.rows.append([])
        elif self._body and tag in ("td", "th"):
            self._cell = True
            self.rows[-1].append("")
            if "font-weight: bold" in (dict(attrs).get("style") or ""):
                self.bold.append((len(self.rows) - 1, len(self.rows[-1]) - 1))

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._body = False
        elif tag in ("td", "th"):
            self._cell = False

    def handle_data(self, data: str) -> None:
        if self._body and self._cell:
            self.rows[-1][-1] += data.strip()


def _expected(result: pl.DataFrame) -> dict[tuple[str, str], float]:
    means = {(s, m): v for m, s, v in result.select("metric", "system", "mean").iter_rows()}
    for m, b, v in result.select("metric", "baseline", "baseline_mean").iter_rows():
        means[b, m] = v
    return means


def test_report_numbers_equal_the_tidy_result(result: pl.DataFrame) -> None:
    report = irm.report(result)
    frame = report.frame()
    assert frame.columns == ["system", *METRICS]
    assert frame["system"].to_list() == ["bm25", "dense", "hybrid"]
    expected = _expected(result)
    got = {
        (s, m): v for s, *values in frame.iter_rows() for m, v in zip(METRICS, values, strict=True)
    }
    assert got == expected  # the same floats, not re-computed
    # every rendering shows them rounded to 4 decimals
    cells = _Cells()
    cells.feed(report._repr_html_())
    shown = {(row[0], m): row[1 + j] for row in cells.rows for j, m in enumerate(METRICS)}
    significant = {
        (s, m) for m, s, sig in result.select("metric", "system", "significant").iter_rows()
        if sig
    }  # fmt: skip
    for key, value in expected.items():
        marks = "a" if key in significant else ""
        assert shown[key] == f"{value:.4f}{marks}", key
    best = {m: max(v for (_, mm), v in expected.items() if mm == m) for m in METRICS}
    bold = {(cells.rows[i][0], METRICS[j - 1]) for i, j in cells.bold}
    assert bold == {(s, m) for (s, m), v in expected.items() if v == best[m]}
    markdown = report.to_markdown().splitlines()
    hybrid = markdown[4].split(" | ")
    assert hybrid[0] == "| hybrid"
    assert hybrid[1] == f"**{expected['hybrid', 'ndcg@5']:.4f}**ᵃ"


def test_table_css_restyles_no_other_table(result: pl.DataFrame) -> None:
    # a notebook or a docs page holds other tables: every rule is scoped to this one
    css = re.search(r"<style>(.*?)</style>", irm.report(result)._repr_html_(), re.S)
    assert css is not None
    selectors = [rule.split("{")[0] for rule in css.group(1).split("}") if "{" in rule]
    assert len(selectors) > 20
    for selector in selectors:
        for part in selector.split(","):
            assert part.strip().startswith("#irm-report"), selector


def test_footnote_names_test_correction_alpha_queries_and_baseline(result: pl.DataFrame) -> None:
    note = (
        "Two-sided randomization (sign-flip) test (2000 resamples, seed 7), "
        "Benjamini-Hochberg (FDR) correction over 6 comparisons (all metrics together), "
        "significant at adjusted p ≤ 0.1; 30 queries; baseline: bm25."
    )
    report = irm.report(result)
    assert report.note == note
    assert note in report._repr_html_()
    assert report.to_markdown().rstrip().endswith(note)
    # a derived frame has no record: the footnote says so, or names what it is given
    derived = result.filter(pl.col("metric") != "map")
    assert irm.report(derived).note.startswith(
        "Test, correction and alpha not recorded (pass options=CompareOptions(...))"
    )
    options = CompareOptions(baseline="bm25", test="wilcoxon", correction=None, alpha=0.01)
    assert irm.report(derived, options=options).note == (
        "Two-sided Wilcoxon signed-rank test, no correction for multiple testing, "
        "significant at p ≤ 0.01; 30 queries; baseline: bm25."
    )


def test_latex_is_booktabs_aligned_on_the_decimal_point(result: pl.DataFrame) -> None:
    text = irm.report(result, markers="daggers").to_latex()
    lines = text.splitlines()
    start = lines.index("\\begin{tabular}{lr@{.}lr@{.}lr@{.}l}")
    assert lines[start + 1] == "\\toprule"
    assert lines[start + 2] == (
        "System & \\multicolumn{2}{c}{ndcg@5} & \\multicolumn{2}{c}{ndcg@10} & "
        "\\multicolumn{2}{c}{map} \\\\"
    )
    assert lines[start + 3] == "\\midrule"
    rows = lines[start + 4 : start + 7]
    assert lines[start + 7 : start + 9] == ["\\bottomrule", "\\end{tabular}"]
    expected = _expected(result)
    for row, system in zip(rows, ["bm25", "dense", "hybrid"], strict=True):
        assert row.endswith(" \\\\")
        cells = row.removesuffix(" \\\\").split(" & ")
        assert cells[0] == system
        for cell, metric in zip(cells[1:], METRICS, strict=True):
            whole, fraction = cell.split("&")  # the r@{.}l pair: no '.' is written
            number = f"{expected[system, metric]:.4f}".split(".")
            bold = system == "hybrid"
            assert whole == (f"\\textbf{{{number[0]}}}" if bold else number[0])
            assert fraction.startswith(f"\\textbf{{{number[1]}}}" if bold else number[1])
            assert fraction.endswith("$^{\\dagger}$") == (system != "bm25")
    assert text.count("{") == text.count("}")
    footnote = lines[-1]
    assert footnote.startswith("\\par\\smallskip{\\footnotesize $\\dagger$/$\\ddagger$:")
    assert "Benjamini-Hochberg (FDR) correction" in footnote
    assert "adjusted p $\\leq$ 0.1; 30 queries; baseline: bm25.}" in footnote
    assert not re.search(r"[^\x00-\x7f]", text)  # pdflatex-safe: ASCII only


#: System names holding every character LaTeX (and Markdown) treat specially.
SPECIAL_NAMES = ("a\\b{c}$d", "e&f#g^h_i", "j~k%l<m>n|o")


def _pdflatex(tmp_path: Path, body: str) -> str:
    """Compile ``body`` in an article with booktabs; the log (asserting success)."""
    engine = shutil.which("pdflatex")
    if engine is None:
        pytest.fail(
            "no pdflatex on PATH: LaTeX outputs are compiled in a test. Install it: "
            "apt-get install -y texlive-latex-base texlive-latex-recommended",
            pytrace=False,
        )
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        f"{body}\n\\end{{document}}\n",
        encoding="ascii",
    )
    command = [engine, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    log = (tmp_path / "doc.log").read_text(encoding="latin-1")
    assert done.returncode == 0, log[-3000:]
    for trouble in ("Missing character", "LaTeX Warning", "Undefined control sequence"):
        assert trouble not in log, trouble
    return log


@pytest.mark.latex
def test_latex_compiles_with_pdflatex(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame], result: pl.DataFrame, tmp_path: Path
) -> None:
    """The tables compile in a document with nothing but booktabs: letters, daggers,
    every pair with 3 digits, and system names that LaTeX must escape (``run_bm25``).
    pdflatex is a system package (Debian: texlive-latex-base, with booktabs in
    texlive-latex-recommended; .ci/run installs them); never skipped."""
    runs, qrels = sample
    named = {f"run_{name}": run for name, run in runs.items()}
    pairs = irm.compare(named, "ndcg@10", qrels=qrels, correction="holm-sidak")
    tables = {
        "letters": irm.report(result).to_latex(),
        "daggers": irm.report(result, markers="daggers").to_latex(),
        "pairs": irm.report(pairs, digits=3).to_latex(),
    }
    floats = "".join(
        f"\\begin{{table}}\\centering\n{text}\n\\caption{{{name}}}\n\\end{{table}}\n"
        for name, text in tables.items()
    )
    log = _pdflatex(tmp_path, floats)
    assert (tmp_path / "doc.pdf").stat().st_size > 0
    # nothing dropped or overflowing: every glyph exists, every table fits the page
    for trouble in ("Overfull \\hbox", "Underfull"):
        assert trouble not in log, trouble
    assert "run\\_bm25" in tables["pairs"]


def _evaluate_to(named: dict[str, pl.DataFrame], qrels: pl.DataFrame, out: Path) -> Path:
    """``irm evaluate runs.parquet --systems sys -m map -o out``, the runs' names in ``sys``."""
    long = pl.concat([run.with_columns(sys=pl.lit(name)) for name, run in named.items()])
    long.write_parquet(out.parent / "runs.parquet")
    qrels.write_parquet(out.parent / "qrels.parquet")
    args = [
        "evaluate",
        str(out.parent / "runs.parquet"),
        "--qrels",
        str(out.parent / "qrels.parquet"),
    ]
    assert main([*args, "--systems", "sys", "-m", "map", "-o", str(out)]) == 0
    return out


@pytest.mark.latex
def test_every_latex_output_escapes_every_special_character(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame], tmp_path: Path
) -> None:
    """One escaper for the report and ``irm evaluate -o x.tex``: names holding
    ``\\ { } $ & # ^ _ ~ % < > |`` compile, and the PDF's text shows them as written."""
    runs, qrels = sample
    named = dict(zip(SPECIAL_NAMES, runs.values(), strict=True))
    result = irm.compare(named, ["ndcg_cut_10", "map"], qrels=qrels, baseline=SPECIAL_NAMES[0])
    table = irm.report(result, markers="daggers").to_latex()
    assert "a\\textbackslash{}b\\{c\\}\\$d" in table  # not \\textbackslash\\{\\}
    assert "j\\textasciitilde{}k\\%l\\textless{}m\\textgreater{}n\\textbar{}o" in table
    assert "ndcg\\_cut\\_10" in table
    means = _evaluate_to(named, qrels, tmp_path / "means.tex").read_text()
    assert "e\\&f\\#g\\textasciicircum{}h\\_i" in means
    _pdflatex(tmp_path, f"{table}\n\\bigskip\n\n{means}")


def test_markdown_escapes_a_pipe_in_a_name(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame], tmp_path: Path
) -> None:
    """A ``|`` in a system name is escaped: a Markdown renderer (markdown-it-py's GFM
    tables) puts every number under its own metric, in the report and in ``irm
    evaluate -o x.md``."""
    markdown_it = pytest.importorskip("markdown_it")
    runs, qrels = sample
    names = ["bm25|rm3", "dense\\|x", "hy|b|rid"]
    named = dict(zip(names, runs.values(), strict=True))
    result = irm.compare(named, ["map", "ndcg@10"], qrels=qrels, baseline=names[0])

    def cells(text: str) -> list[list[str]]:
        parser = markdown_it.MarkdownIt("commonmark").enable("table")
        page = parser.render(text)
        found = _Cells()
        found.feed(page)
        return found.rows

    expected = _expected(result)
    rows = cells(irm.report(result).to_markdown())
    assert [row[0] for row in rows] == names
    for row in rows:  # the mean, then its markers (bold is a tag: not in the text)
        assert len(row) == 3
        assert row[1].startswith(f"{expected[row[0], 'map']:.4f}")
        assert row[2].startswith(f"{expected[row[0], 'ndcg@10']:.4f}")
    rows = cells(_evaluate_to(named, qrels, tmp_path / "means.md").read_text())
    long = pl.concat([run.with_columns(sys=pl.lit(name)) for name, run in named.items()])
    means = irm.evaluate(long, ["map"], qrels=qrels, systems="sys")
    assert sorted(rows) == sorted(
        [name, str(n), f"{v:.4f}"] for name, n, v in means.select("sys", "num_q", "map").rows()
    )


@pytest.mark.xdist_group("report-page")  # one worker builds the page for both tests
def test_html_page_is_self_contained(page: tuple[Path, str], result: pl.DataFrame) -> None:
    path, text = page
    assert "http" not in text.lower()
    assert not re.search(r"<(script|link|iframe|img)\b", text)
    assert "@import" not in text
    assert "url(" not in text.replace("url(#irm-fig", "")
    assert text.startswith("<!DOCTYPE html>")
    # the table, then the plots: 3 delta figures, 1 metric@k, 3 matrices, 3 intervals
    assert text.count("<svg") == 10
    sections = re.findall(r"<h2>([^<]+)</h2>", text)
    assert sections == [
        "Per-query deltas", "Metric@k", "Significance", "Deltas and confidence intervals"
    ]  # fmt: skip
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))  # the figures' ids do not collide
    for ref in set(re.findall(r'href="#([^"]+)"', text)):
        assert ref in ids
    assert "break-inside: avoid" in text  # a figure is not split across printed pages
    assert stat.S_IMODE(path.stat().st_mode) & 0o044  # readable as a plain file, not 0600
    assert [p.name for p in path.parent.iterdir()] == ["report.html"]  # no temporary left
    cells = _Cells()
    cells.feed(text)
    assert [row[0] for row in cells.rows] == ["bm25", "dense", "hybrid"]


def test_save_by_suffix_and_errors(result: pl.DataFrame, tmp_path: Path) -> None:
    report = irm.report(result)
    assert report.save(tmp_path / "t.tex").read_text() == report.to_latex()
    assert report.save(tmp_path / "t.md").read_text() == report.to_markdown()
    assert report.save(tmp_path / "t.txt").read_text() == str(report)
    with pytest.raises(irm.InvalidValueError) as info:
        report.save(tmp_path / "t.pdf")
    assert str(info.value) == (
        f"report file {str(tmp_path / 't.pdf')!r} must end in .html, .tex, .md or .txt "
        "(the tidy result: result.write_parquet / write_csv / write_json)"
    )
    missing = tmp_path / "nope" / "t.md"
    with pytest.raises(irm.MissingFileError) as found:
        report.save(missing)
    assert str(found.value) == (
        f"{missing}: cannot write, the folder {str(missing.parent)!r} does not exist; "
        "create it first"
    )
    folder = tmp_path / "tables.md"  # a folder, whatever its suffix: named, with the fix
    folder.mkdir()
    for target in (folder, tmp_path):
        with pytest.raises(irm.InvalidValueError) as info:
            report.save(target)
        example = target / ("results" + (target.suffix or ".csv"))
        assert str(info.value) == (
            f"{target}: is a folder, not a file; name a file in it (e.g. {example})"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.md", "t.tex", "t.txt", "tables.md"]
    with pytest.raises(irm.InvalidValueError) as info:
        irm.report(result, digits=-1)
    assert str(info.value) == "digits=-1 must be an integer in 0..12 (e.g. 4)"
    with pytest.raises(irm.InvalidValueError) as info:
        irm.report(result.lazy())  # type: ignore[arg-type]
    assert str(info.value) == (
        "result is a polars LazyFrame; pass the polars DataFrame irm.compare returned (collect a "
        "LazyFrame first)"
    )
    with pytest.raises(irm.ColumnNotFoundError) as info:
        irm.report(result.drop("significant"))
    assert str(info.value) == (
        "column 'significant' is not in the frame; pass the result of irm.compare"
    )


def test_html_needs_great_tables(result: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    report = irm.report(result)
    monkeypatch.setitem(sys.modules, "great_tables", None)  # as if not installed
    assert report.to_latex()  # LaTeX and Markdown need nothing more
    with pytest.raises(irm.MissingDependencyError) as info:
        report._repr_html_()
    assert str(info.value) == (
        "HTML reports need great_tables, which is not installed: "
        "pip install 'polars_irmetrics[report]'"
    )


def test_cli_writes_the_html_page(tmp_path: Path) -> None:
    paths, qrels = sample_paths()
    out = tmp_path / "report.html"
    args = ["compare", "--qrels", str(qrels), *map(str, paths), "--baseline", "run_bm25"]
    assert main([*args, "-m", "P@3", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "http" not in text.lower()
    # deltas, P@1..3 curves, matrix, interval
    assert text.count("<svg") == 4
    assert "Metric@k" in text
    assert "Two-sided paired t-test, Holm correction over 2 comparisons" in text
    assert main([*args, "-m", "P@3", "-o", str(tmp_path / "t.md")]) == 0
    assert (tmp_path / "t.md").read_text().startswith("| system | P@3 |")


def test_plots_draw_on_given_axes_and_return_their_figure(result: pl.DataFrame) -> None:
    per_query = irm.report(result).per_query
    assert per_query is not None
    figure = Figure()
    left, right = figure.subplots(1, 2)
    assert plot.plot_ci(result, metric="map", ax=left) is figure
    assert plot.plot_significance_matrix(result, metric="map", ax=right) is figure
    assert left.get_title() == "map: delta and confidence interval"
    two = Figure()
    axes = list(two.subplots(2, 1))
    assert plot.plot_deltas(per_query, metric="map", ax=axes) is two
    assert [a.get_title().split(" (")[0] for a in axes] == ["dense vs bm25", "hybrid vs bm25"]
    with pytest.raises(irm.InvalidValueError) as info:
        plot.plot_deltas(per_query, metric="map", ax=axes[0])
    assert str(info.value) == (
        "ax= has 1 axes but this plot draws 2 panels (one per comparison); pass 2 axes, or ax=None"
    )
    sub = Figure().subfigures(1, 2)[0]
    assert plot.plot_ci(result, ax=sub.subplots()) is sub.figure


def _luminance(rgb: tuple[float, ...]) -> float:
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_matrix_labels_contrast_with_their_cells() -> None:
    p = [0.001, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0]
    systems = [f"s{i}" for i in range(len(p) + 1)]
    frame = pl.DataFrame({
        "metric": "map", "system": systems[1:], "baseline": "s0", "p_adjusted": p,
        "significant": [x <= 0.05 for x in p], "delta": 0.1,
    })  # fmt: skip
    figure = plot.plot_significance_matrix(frame)
    ax = figure.axes[0]
    image = ax.images[0]
    for text in ax.texts:
        x, y = text.get_position()
        cell = image.cmap(image.norm(image.get_array()[int(y), int(x)]))
        light, dark = sorted([_luminance(cell), _luminance(to_rgb(text.get_color()))])[::-1]
        # WCAG AA contrast for normal text is 4.5
        assert (light + 0.05) / (dark + 0.05) >= 4.5, (text.get_text(), text.get_color())
    assert image.cmap.name == "cividis_r"  # colour-blind safe


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: CSS pixels: A4 portrait at 96 dpi is 794 wide, so a page laid out in 800 prints
WIDTH = 800

#: Added to a copy of the page (the saved file holds no script). After the load event
#: it writes what the browser laid out into an attribute that --dump-dom prints.
PROBE = """<script>
window.addEventListener("load", function () {
  var cells = function (tr) {
    return Array.from(tr.children).map(function (c) {
      return [c.innerText.trim(), Number(getComputedStyle(c).fontWeight)];
    });
  };
  var outer = Array.from(document.querySelectorAll("svg")).filter(function (s) {
    return !s.parentElement.closest("svg");
  });
  var out = {
    rows: Array.from(document.querySelectorAll("tbody tr")).map(cells),
    svgs: outer.map(function (s) {
      var box = s.getBoundingClientRect(), drawn = s.getBBox();
      return [box.width, box.height, drawn.width, drawn.height];
    }),
    images: Array.from(document.images).map(function (i) { return i.naturalWidth; }),
    figures: Array.from(document.querySelectorAll("figure")).map(function (f) {
      return getComputedStyle(f).breakInside;
    }),
    resources: performance.getEntriesByType("resource").map(function (e) { return e.name; }),
    scrollWidth: document.documentElement.scrollWidth,
    text: document.body.innerText
  };
  document.body.setAttribute("data-probe", JSON.stringify(out));
});
</script>"""


def _browser() -> str:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found is None:
        pytest.fail(
            "no Chromium on PATH: the HTML report is tested in a real browser. Install "
            "it: apt-get install -y chromium (Debian; Ubuntu: chromium-browser), or put "
            "any Chromium or Chrome on PATH",
            pytrace=False,
        )
    return found


def _render(page: Path, folder: Path) -> dict[str, Any]:
    """What Chromium laid out for ``page``: the probe's findings."""
    probed = folder / "probed.html"
    text = page.read_text(encoding="utf-8")
    end = text.rindex("</body>")
    probed.write_text(text[:end] + PROBE + text[end:], encoding="utf-8")
    command = [
        _browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-extensions", f"--user-data-dir={folder / 'profile'}",
        # no name resolves: a reference to the network fails here instead of reaching it
        "--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={WIDTH},1000",
        "--dump-dom", probed.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<body[^>]*\bdata-probe="([^"]*)"', done.stdout)
    assert found is not None, "the probe did not run: " + done.stdout[:500]
    probe: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return probe


@pytest.mark.browser
@pytest.mark.xdist_group("report-page")
def test_chromium_renders_the_report_page(
    page: tuple[Path, str], result: pl.DataFrame, tmp_path: Path
) -> None:
    """The page in a real browser: Chromium (a system package, ``apt-get install -y
    chromium``; .ci/run installs it) lays out the saved file headless, and a probe
    reads back what it drew (``--dump-dom`` of a copy carrying the probe script: the
    file itself holds none). Without Chromium the test fails, saying so; never skipped.
    """
    report = irm.report(result, title="Sample")
    probe = _render(page[0], tmp_path)

    # the table's numbers are the tidy result's, marked where significant, the best bold
    means = _expected(result)
    marked = set(result.filter("significant").select("system", "metric").iter_rows())
    best = {m: max(v for (_, mm), v in means.items() if mm == m) for m in METRICS}
    rows = probe["rows"]
    assert [row[0][0] for row in rows] == ["bm25", "dense", "hybrid"]
    for (system, _), *cells in rows:
        for metric, (shown, weight) in zip(METRICS, cells, strict=True):
            value = means[system, metric]
            assert shown == f"{value:.4f}" + ("a" if (system, metric) in marked else "")
            assert (weight >= 700) == (value == best[metric]), (system, metric, weight)
    assert report.note in probe["text"]  # the footnote is shown, not only in the source

    # deltas (one per metric), the metric@k curves, the matrices, the intervals: each
    # laid out at a readable size and drawn (its content has an extent), none cut off
    assert len(probe["svgs"]) == 3 + 1 + 3 + 3
    for width, height, drawn_width, drawn_height in probe["svgs"]:
        assert 300 <= width <= WIDTH, width
        assert height >= 150, height
        assert drawn_width > 0.5 * width
        assert drawn_height > 0.5 * height
    assert all(width > 0 for width in probe["images"])  # any <img> decoded
    assert probe["scrollWidth"] <= WIDTH  # no horizontal scrolling: it prints on A4
    assert len(probe["figures"]) == len(probe["svgs"])
    assert set(probe["figures"]) == {"avoid"}  # each figure on one printed page
    # and the browser fetched nothing: no stylesheet, font, image or script
    assert probe["resources"] == []


# --- irm.reproducibility's frame: measures as rows, metrics as columns ----------------

_REPRO_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
_REPRO_RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "a", "b"],
        "score": [2.0, 1.0, 2.0, 1.0],
    }
)


@pytest.fixture
def repro(frame_kind: str) -> pl.DataFrame:
    """The baseline reproduced in reverse order (P_1: 0.5 -> 0.5, swapped per topic)."""
    again = _REPRO_RUN.with_columns(pl.col("score").reverse().over("query_id"))
    runs = [_REPRO_RUN, again]
    if frame_kind == "LazyFrame":
        runs = [r.lazy() for r in runs]  # type: ignore[misc]
    return irm.reproducibility(
        {"baseline": runs[0]}, {"baseline": runs[1]}, ["P_1"], qrels=_REPRO_QRELS
    )


def test_reproducibility_report_text(repro: pl.DataFrame) -> None:
    # ktu -1 (the two documents swapped), rmse sqrt((1^2 + 1^2) / 2) = 1, p = 1 (equal
    # means; repro_eval's convention); no letters column, nothing bold, no markers
    text = str(irm.report(repro))
    head = text.split("\n\n")[0].splitlines()
    assert head[0].split() == ["measure", "document", "order", "P_1"]
    assert head[2].split() == ["ktu", "(baseline)", "-1.0000"]
    assert head[4].split() == ["rmse", "(baseline)", "1.0000"]
    assert [line.split()[0] for line in head[2:]] == [
        "ktu", "rbo", "rmse", "nrmse", "p_paired", "p_unpaired"
    ]  # fmt: skip
    assert "No value is marked best." in text
    assert "superscript" not in text


def test_reproducibility_report_markdown(repro: pl.DataFrame) -> None:
    lines = irm.report(repro).to_markdown().splitlines()
    assert lines[0] == "| measure | document order | P_1 |"
    assert lines[1] == "|---|---:|---:|"
    assert lines[2] == "| ktu (baseline) | -1.0000 |  |"  # no metric: an empty cell
    assert lines[4] == "| rmse (baseline) |  | 1.0000 |"
    assert "**" not in "\n".join(lines)


def test_reproducibility_report_latex(repro: pl.DataFrame) -> None:
    text = irm.report(repro, digits=2).to_latex()
    assert (
        "Measure & \\multicolumn{2}{c}{document order} & \\multicolumn{2}{c}{P\\_1} \\\\" in text
    )
    assert "ktu (baseline) & -1&00 & \\multicolumn{2}{c}{--} \\\\" in text
    assert "rmse (baseline) & \\multicolumn{2}{c}{--} & 1&00 \\\\" in text
    assert "\\textbf" not in text
    assert "dagger" not in text


def test_reproducibility_report_html(repro: pl.DataFrame) -> None:
    pytest.importorskip("great_tables")
    report = irm.report(repro)
    page = report.to_html()
    assert report.figures() == []  # no per-query deltas or curves of measures
    assert "rmse (baseline)" in page
    assert "document order" in page
    assert "<sup>" not in page
    assert "font-weight: bold" not in page.split("<tbody")[1]
    assert report.frame().columns == ["measure", "document order", "P_1"]
    assert report.frame().row(0) == ("ktu (baseline)", -1.0, None)


def test_reproducibility_report_refuses_a_measure_twice(repro: pl.DataFrame) -> None:
    with pytest.raises(
        irm.errors.InvalidValueError,
        match=re.escape(
            "measure 'ktu' of metric None and run 'baseline' has two rows; pass the frame "
            "irm.reproducibility returned"
        ),
    ):
        irm.report(pl.concat([repro, repro.head(1)]))


@pytest.fixture(scope="module")
def per_query(sample: tuple[dict[str, pl.DataFrame], pl.DataFrame]) -> pl.DataFrame:
    runs, qrels = sample
    return irm.compare(runs, METRICS, qrels=qrels, baseline="bm25", per_query=True)


BAD_REPORTS: list[tuple[str, str, dict[str, Any], type[Exception], str]] = [
    ("no metric column", "per_query", {"drop": ["metric"]}, irm.ColumnNotFoundError,
     "column 'metric' is not in per_query; pass the per_query=True result of the same"),
    ("lazy per_query", "per_query", {"lazy": True}, irm.InvalidValueError,
     "per_query is a polars LazyFrame; pass the polars DataFrame irm.compare(..., "),
    ("text deltas", "per_query", {"text": "delta"}, irm.ColumnTypeError,
     "column 'delta' of per_query has dtype String; pass the per_query=True result"),
    ("another metric", "per_query", {"metric": "P@3"}, irm.InvalidValueError,
     "per_query holds metric 'P@3', which result does not: its plots would stand beside"),
    ("text means", "result", {"text": "mean"}, irm.ColumnTypeError,
     "column 'mean' of result has dtype String; the report reads numbers there"),
    ("no row", "result", {"head": 0}, irm.InvalidValueError,
     "result holds no row: nothing to report; pass the frame irm.compare returned"),
    ("pandas", "result", {"pandas": True}, irm.InvalidValueError,
     "result is a pandas DataFrame; pass the polars DataFrame irm.compare returned"),
    ("options dict", "options", {"value": {"test": "t"}}, irm.InvalidValueError,
     "options= takes the irm.compare options recorded with a result (a CompareOptions)"),
    ("system not text", "system", {"value": 3}, irm.InvalidValueError,
     "system= names the first column's header, text; got 3"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "argument", "change", "error", "message"),
    BAD_REPORTS,
    ids=[b[0] for b in BAD_REPORTS],
)
def test_bad_report_arguments_are_refused_by_name(
    result: pl.DataFrame,
    per_query: pl.DataFrame,
    case: str,
    argument: str,
    change: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    # each once a raw polars/Python error (ColumnNotFoundError, AttributeError,
    # TypeError), or (another metric) a report drawn beside another comparison's plots
    kwargs: dict[str, Any] = {}
    table: Any = result
    if argument == "per_query":
        frame: Any = per_query
        if "drop" in change:
            frame = frame.drop(change["drop"])
        if "text" in change:
            frame = frame.with_columns(pl.col(change["text"]).cast(pl.String))
        if "metric" in change:
            frame = frame.with_columns(metric=pl.lit(change["metric"]))
        kwargs["per_query"] = frame.lazy() if change.get("lazy") else frame
    elif argument == "result":
        if "text" in change:
            table = result.with_columns(pl.col(change["text"]).cast(pl.String))
        if "head" in change:
            table = result.head(change["head"])
        if change.get("pandas"):
            table = result.to_pandas()
    else:
        kwargs[argument] = change["value"]
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        irm.report(table, **kwargs)
    with pytest.raises(irm.InvalidValueError, match=r"^path must be a file name"):
        irm.report(result).save(3)  # type: ignore[arg-type]
