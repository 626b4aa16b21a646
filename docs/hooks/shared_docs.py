"""Griffe extension: the API reference shows docstrings as Python does, with their shared
parameter paragraphs filled in.

The metric functions (``polars_irmetrics.expressions.SHARED_PARAMS``) and the Spark and
Dask engines (``polars_irmetrics.engines.params.ENGINE_PARAMS``) write a shared
parameter's description once and their docstrings hold the line ``%(name)s`` where it
goes; ``polars_irmetrics.ground.docstrings.fill_shared`` fills it at import, and its
``PLACEHOLDER`` pattern finds such lines here too. Griffe reads the source,
so for a function whose docstring holds such a line this extension takes the filled-in
text from the imported function instead (mkdocs.yml lists it under mkdocstrings'
``extensions``).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe

from polars_irmetrics.ground.docstrings import PLACEHOLDER


class SharedDocs(griffe.Extension):
    """Replace a docstring with ``%(name)s`` lines by the imported function's own."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        if func.docstring is None or not PLACEHOLDER.search(func.docstring.value):
            return
        module = importlib.import_module(func.module.path)
        runtime = getattr(module, func.name)
        func.docstring.value = inspect.cleandoc(runtime.__doc__)
