"""The architecture page (docs/architecture.md) is held against the code: its floors
are the import-linter layers of pyproject.toml, in order, and every subpackage and
top-level module of the package is on exactly one floor."""

from __future__ import annotations

import re
from pathlib import Path

import polars_irmetrics

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(polars_irmetrics.__file__).resolve().parent


def _contract_layers() -> list[set[str]]:
    """The layers of the "layers" contract, top first (read as text: tomllib is 3.11+)."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r'type = "layers"\s*layers = \[(.*?)\]', text, re.S)
    assert block is not None
    layers = re.findall(r'"([^"]+)"', block.group(1))
    return [
        {name.strip().removeprefix("polars_irmetrics.") for name in layer.split("|")}
        for layer in layers
    ]


def _page_floors() -> list[tuple[int, set[str]]]:
    page = (ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| (\d+) \| (.*?) \| .* \|$", page, re.M)
    return [(int(floor), set(re.findall(r"`([^`]+)`", packages))) for floor, packages in rows]


def test_the_page_lists_the_contract_layers_in_order() -> None:
    floors = _page_floors()
    assert [packages for _, packages in floors] == _contract_layers()
    assert [floor for floor, _ in floors] == list(range(len(floors), 0, -1))


def test_every_part_of_the_package_is_on_one_floor() -> None:
    placed = [name for _, packages in _page_floors() for name in packages]
    assert len(placed) == len(set(placed))
    parts = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.stem != "__init__")
    }
    assert parts == set(placed)


def test_the_page_is_in_the_site_nav() -> None:
    assert "architecture.md" in (ROOT / "mkdocs.yml").read_text()
