"""Render the sample comparison's HTML report in headless Chromium: docs/assets/compare_report.png.

The screenshot on the docs site (docs/guides/compare.md) is this script's output,
committed (the docs build needs no browser). The tests render the page in the same
headless Chromium and check what it laid out (tests/test_report.py,
test_chromium_renders_the_report_page). Run it after changing the report's look:

    apt-get install -y chromium   # or any Chromium / Chrome on PATH
    python scripts/make_report_screenshot.py [--pdf report.pdf]

``--pdf`` also prints the page to PDF (A4), to check that it prints.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl

import polars_irmetrics as irm
from polars_irmetrics.io.files import sample_paths

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "assets" / "compare_report.png"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def _run(command: list[str]) -> None:
    subprocess.run(command, check=True, capture_output=True, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--pdf", type=Path, help="also print the page to this PDF")
    parser.add_argument("--height", type=int, default=1900, help="screenshot height (px)")
    args = parser.parse_args()
    browser = next((b for b in map(shutil.which, BROWSERS) if b), None)
    if browser is None:
        sys.exit("no Chromium or Chrome on PATH (apt-get install -y chromium)")
    paths, qrels_path = sample_paths()
    runs = {p.stem.removeprefix("run_"): pl.read_parquet(p) for p in paths}
    qrels = pl.read_parquet(qrels_path)
    result = irm.compare(
        runs, ["ndcg@5", "ndcg@10", "map"], qrels=qrels, baseline="bm25",
        test="randomization", seed=42,
    )  # fmt: skip
    folder = Path(tempfile.mkdtemp())
    page = irm.report(result, title="Sample: BM25, dense and hybrid").save(folder / "report.html")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    flags += ["--force-device-scale-factor=1", "--no-first-run", "--disable-extensions"]
    shot = [*flags, f"--window-size=1000,{args.height}", f"--screenshot={args.out}"]
    _run([browser, *shot, page.as_uri()])
    print(f"wrote {args.out}")
    if args.pdf is not None:
        pdf = [*flags, f"--print-to-pdf={args.pdf.resolve()}", "--no-pdf-header-footer"]
        _run([browser, *pdf, page.as_uri()])
        print(f"wrote {args.pdf}")
    shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
