"""The documentation site: its metric catalogue, API reference and docstrings cannot drift.

The site itself is built by ``.ci/run`` (``mkdocs build --strict``, which also executes
every example on its pages); these tests check what a build cannot: that every
registered metric and every public name is on it, and that the public docstrings
follow numpydoc.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
from numpydoc.validate import validate

import polars_irmetrics as irm

from .helpers import docs_hook

ROOT = Path(__file__).resolve().parents[1]


CATALOGUE = docs_hook("catalogue")
catalogue_markdown = CATALOGUE.catalogue_markdown
#: numpydoc checks every public docstring must pass: a docstring, every parameter
#: documented and no unknown one, a Returns and an Examples section, clean sections.
NUMPYDOC_CHECKS = {"GL08", "PR01", "PR02", "RT01", "EX01", "GL02", "GL03", "SS03", "PR10"}


@pytest.fixture(scope="module")
def catalogue() -> str:
    return catalogue_markdown()


def test_catalogue_has_every_registered_metric(catalogue: str) -> None:
    for metric in irm.list_metrics():
        assert f"### `{metric.name}` {{#{metric.name}}}" in catalogue, metric.name


def test_every_name_in_the_catalogue_parses_back(catalogue: str) -> None:
    rows = re.findall(r"^\| Spellings \| (.*) \|$", catalogue, re.M)
    assert len(rows) == len(irm.list_metrics())
    for row, metric in zip(rows, irm.list_metrics(), strict=True):
        names = re.findall(r"`([^`]+)`", row)
        assert names, metric.name
        for name in names:
            assert irm.parse_metric(name).metric is metric, name
        # the first spelling is canonical: it parses back to itself
        assert irm.parse_metric(names[0]).name == names[0]


def test_catalogue_examples_run() -> None:
    """The generator's doctests (it lives in docs/hooks/, outside --doctest-modules)."""
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    failed, tried = doctest.testmod(CATALOGUE, optionflags=flags)
    assert tried > 0
    assert failed == 0


def test_catalogue_page_is_generated_by_the_hook() -> None:
    page = (ROOT / "docs" / "metrics.md").read_text()
    assert "<!-- catalogue -->" in page
    assert "docs/hooks/catalogue.py" in (ROOT / "mkdocs.yml").read_text()
    rendered = CATALOGUE.on_page_markdown(page, page=None)
    assert "<!-- catalogue -->" not in rendered
    assert catalogue_markdown() in rendered


def test_api_reference_lists_exactly_the_public_names() -> None:
    page = (ROOT / "docs" / "reference" / "api.md").read_text()
    listed = re.findall(r"^::: polars_irmetrics\.(\w+)$", page, re.M)
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(irm.__all__)


def _documented() -> list[str]:
    names = []
    for name in irm.__all__:
        obj = getattr(irm, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            continue  # an exception's docstring is its one-line meaning
        if callable(obj):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _documented())
def test_public_docstrings_follow_numpydoc(name: str) -> None:
    errors = [
        f"{code}: {message}"
        for code, message in validate(f"polars_irmetrics.{name}")["errors"]
        if code in NUMPYDOC_CHECKS
    ]
    assert not errors, errors


@pytest.mark.parametrize("metric", irm.list_metrics(), ids=lambda m: m.name)
def test_every_metric_declares_its_formula(metric: irm.metrics.spec.Metric) -> None:
    # the catalogue renders both: the LaTeX formula and the plain-text one with its source
    assert metric.latex.strip(), metric.name
    assert metric.formula.strip(), metric.name
    assert metric.latex.count("{") == metric.latex.count("}"), metric.latex
