"""mkdocs hook: MathJax is served from the site itself, so formulas render offline.

The files come from the ``django-static-mathjax`` package (MathJax 3's own ``es5``
build, installed by the ``docs`` extra): the ``tex-mml-chtml.js`` component and the
CHTML fonts it loads from beside itself are added to the site at build time, under
``javascripts/mathjax/``. No page loads anything from another host.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

TARGET = "javascripts/mathjax"
#: The component the pages load, and the folder of fonts it fetches relative to itself.
COMPONENT = "tex-mml-chtml.js"
FONTS = "output/chtml/fonts/woff-v2"


def _es5() -> Path:
    spec = importlib.util.find_spec("mathjax")
    folder = None
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "static/mathjax/es5"
    if folder is None or not (folder / COMPONENT).is_file():
        raise PluginError(
            "MathJax's files are missing: install the docs extra "
            "(pip install -e '.[docs]', which brings django-static-mathjax)"
        )
    return folder


def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    es5 = _es5()
    sources = [es5 / COMPONENT, *sorted((es5 / FONTS).glob("*.woff"))]
    for source in sources:
        uri = f"{TARGET}/{source.relative_to(es5).as_posix()}"
        files.append(File.generated(config, uri, abs_src_path=str(source)))
    return files
