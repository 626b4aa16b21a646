"""Griffe extension: the API reference shows the metric functions' docstrings as Python
does, with their shared parameter paragraphs filled in.

The expression functions write a shared parameter's description once
(``polars_irmetrics.expressions.SHARED_PARAMS``) and their docstrings hold the line
``%(name)s`` where it goes; ``_shared_doc`` fills it at import. Griffe reads the source,
so for a function whose docstring holds such a line this extension takes the filled-in
text from the imported function instead (mkdocs.yml lists it under mkdocstrings'
``extensions``).
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

_PLACEHOLDER = re.compile(r"^\s*%\(\w+\)s$", re.MULTILINE)


class SharedDocs(griffe.Extension):
    """Replace a docstring with ``%(name)s`` lines by the imported function's own."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        if func.docstring is None or not _PLACEHOLDER.search(func.docstring.value):
            return
        module = importlib.import_module(func.module.path)
        runtime = getattr(module, func.name)
        func.docstring.value = inspect.cleandoc(runtime.__doc__)
