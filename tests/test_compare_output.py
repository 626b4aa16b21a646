"""Reports, plots and the ``irm compare`` command of a comparison."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.main import main
from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.report import render_report, write_report
from polars_irmetrics.io.files import sample_paths


@pytest.fixture(scope="module")
def sample() -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    paths, qrels = sample_paths()
    return {p.stem: pl.read_parquet(p) for p in paths}, pl.read_parquet(qrels)


@pytest.fixture(scope="module")
def pairs(sample: tuple[dict[str, pl.DataFrame], pl.DataFrame]) -> pl.DataFrame:
    runs, qrels = sample
    return irm.compare(runs, ["ndcg@10", "map"], qrels=qrels)


def test_terminal_letters_follow_significance(pairs: pl.DataFrame) -> None:
    text = render_report(pairs)
    lines = text.splitlines()
    assert lines[0].split() == ["#", "system", "ndcg@10", "map"]
    # hybrid beats both others on both metrics (every p_adjusted is tiny on this sample)
    assert pairs["significant"].all()
    assert lines[4].split() == ["c", "run_hybrid", "0.7702ᵃᵇ", "0.6027ᵃᵇ"]
    assert lines[2].split() == ["a", "run_bm25", "0.2643", "0.1685"]
    assert lines[-2] == "a = run_bm25, b = run_dense, c = run_hybrid"
    assert lines[-1] == (
        "Two-sided paired t-test, Holm correction over 6 comparisons (all metrics "
        "together), significant at adjusted p ≤ 0.05; 30 queries; every pair of systems "
        "compared."
    )


def test_markers_only_where_significant() -> None:
    result = pl.DataFrame({
        "metric": ["map", "map", "map"], "system": ["b", "c", "c"],
        "baseline": ["a", "a", "b"], "mean": [0.2, 0.4, 0.4],
        "baseline_mean": [0.3, 0.3, 0.2], "delta": [-0.1, 0.1, 0.2],
        "significant": [True, False, True], "higher_is_better": True,
    })  # fmt: skip
    # a beats b (delta < 0 is the baseline's win); c beats b; c vs a not significant
    rows = [line.split() for line in render_report(result).splitlines()[2:5]]
    assert rows == [["a", "a", "0.3000ᵇ"], ["b", "b", "0.2000"], ["c", "c", "0.4000ᵇ"]]
    markdown = render_report(result, "markdown").splitlines()
    assert markdown[:2] == ["| system | map |", "|---|---:|"]
    assert markdown[4] == "| c | **0.4000**ᵇ |"
    latex = render_report(result, "latex").splitlines()
    assert latex[1:5] == [
        "\\begin{tabular}{lr@{.}l}",
        "\\toprule",
        "System & \\multicolumn{2}{c}{map} \\\\",
        "\\midrule",
    ]
    assert latex[5] == "a & 0&3000$^{b}$ \\\\"
    assert latex[7] == "c & \\textbf{0}&\\textbf{4000}$^{b}$ \\\\"
    assert latex[8:10] == ["\\bottomrule", "\\end{tabular}"]
    with pytest.raises(irm.InvalidValueError, match="which render_report does not render"):
        render_report(result, "html")
    with pytest.raises(irm.InvalidValueError) as info:
        render_report(result, markers="daggers")
    assert str(info.value) == (
        "markers='daggers' needs one baseline (mode='baseline'); use markers='letters'"
    )


def test_lower_is_better_metric_bolds_the_lowest() -> None:
    result = pl.DataFrame({
        "metric": ["rbp_residual"], "system": ["b"], "baseline": ["a"], "mean": [0.2],
        "baseline_mean": [0.3], "delta": [-0.1], "significant": [False],
        "higher_is_better": [False],
    })  # fmt: skip
    assert "| b | **0.2000** |" in render_report(result, "markdown")


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_tidy_formats_round_trip(pairs: pl.DataFrame, tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"out.{fmt}"
    write_report(pairs, path, fmt)  # type: ignore[arg-type]
    back = {"csv": pl.read_csv, "json": pl.read_json, "parquet": pl.read_parquet}[fmt](path)
    assert back.columns == pairs.columns
    assert back["p_value"].to_list() == pytest.approx(pairs["p_value"].to_list(), rel=1e-15)


def test_report_errors() -> None:
    with pytest.raises(irm.ColumnNotFoundError) as info:
        render_report(pl.DataFrame({"metric": ["map"]}))
    assert str(info.value) == (
        "column 'system' is not in the frame; pass the result of irm.compare"
    )
    with pytest.raises(irm.InvalidValueError) as info:
        write_report(pl.DataFrame(), None, "parquet")
    assert str(info.value) == "format 'parquet' writes a binary file: name the file"


def _check_image(path: Path) -> None:
    if path.suffix == ".svg":
        text = path.read_text()
        assert text.lstrip().startswith("<?xml")
        assert "<svg" in text
        assert len(text) > 5_000
        return
    import matplotlib.image

    pixels = matplotlib.image.imread(path)
    height, width = pixels.shape[:2]
    assert (height > 150, width > 200) == (True, True)
    assert float(np.std(pixels[..., :3])) > 0.02  # not blank


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_every_plot_renders(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame],
    pairs: pl.DataFrame,
    tmp_path: Path,
    suffix: str,
) -> None:
    runs, qrels = sample
    long = pl.concat([r.with_columns(system=pl.lit(n)) for n, r in runs.items()])
    means = irm.evaluate(long, "ndcg@1..10", qrels=qrels, systems="system")
    per_query = irm.compare(runs, "ndcg@10", qrels=qrels, baseline="run_bm25", per_query=True)
    figures = {
        "curves": lambda p: plot.plot_metric_curves(means, path=p),
        "deltas": lambda p: plot.plot_deltas(per_query, path=p),
        "matrix": lambda p: plot.plot_significance_matrix(pairs, metric="map", path=p),
        "ci": lambda p: plot.plot_ci(pairs, path=p),
    }
    for name, draw in figures.items():
        path = tmp_path / f"{name}{suffix}"
        draw(path)
        _check_image(path)


def test_plot_errors(pairs: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(irm.InvalidValueError) as info:
        plot.plot_ci(pairs, path="ci.pdf")
    assert str(info.value) == "plot file 'ci.pdf' must end in .png or .svg (e.g. deltas.png)"
    with pytest.raises(irm.InvalidValueError) as info:
        plot.plot_ci(pairs, metric="P@5")
    assert str(info.value) == "metric 'P@5' is not in the frame; choose one of 'ndcg@10', 'map'"
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(irm.MissingDependencyError) as info:
        plot.plot_ci(pairs)
    assert str(info.value) == (
        "plots need matplotlib, which is not installed: pip install 'polars_irmetrics[plot]'"
    )


def _sample_args() -> list[str]:
    paths, qrels = sample_paths()
    return ["compare", "--qrels", str(qrels), *map(str, paths)]


def test_cli_equals_the_library(
    sample: tuple[dict[str, pl.DataFrame], pl.DataFrame],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs, qrels = sample
    args = [*_sample_args(), "--baseline", "run_bm25", "-m", "ndcg@10", "-m", "map"]
    args += ["--test", "randomization", "--seed", "3", "--correction", "holm"]
    out = tmp_path / "table.tex"
    plot_file = tmp_path / "d.png"
    assert main([*args, "--format", "latex", "-o", str(out), "--plot", str(plot_file)]) == 0
    expected = irm.compare(
        runs, ["ndcg@10", "map"], qrels=qrels, baseline="run_bm25", test="randomization", seed=3
    )
    assert out.read_text() == render_report(expected, "latex")
    assert "randomization (sign-flip) test (10000 resamples, seed 3), Holm" in out.read_text()
    _check_image(tmp_path / "d.png")
    assert main([*args, "--format", "json"]) == 0
    assert pl.DataFrame(json.loads(capsys.readouterr().out)).equals(expected)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "nope"], "irm: error: --baseline nope is not among the systems "
         "('run_bm25', 'run_dense', 'run_hybrid'); pass one of them"),
        (["--alpha", "2"], "irm: error: --alpha 2.0 must be strictly between 0 and 1 "
         "(e.g. --alpha 0.05)"),
        (["missing.txt"], "irm: error: missing.txt: no such file"),
    ],
)  # fmt: skip
def test_cli_bad_input_one_line_exit_2(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*_sample_args(), *extra]) == 2
    assert capsys.readouterr().err.splitlines() == [message]


def test_benchmark_script_runs_at_a_tiny_size(tmp_path: Path) -> None:
    # No time is asserted: the script must keep working as the library changes.
    import subprocess

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "r.md"
    proc = subprocess.run(
        [sys.executable, "benchmarks/compare.py", "--systems", "3", "--queries", "50",
         "--resamples", "200", "--ranx-tests", "1", "--out", str(out)],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| irm statistics" in out.read_text()
